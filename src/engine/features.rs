//! What a run asks of the engine, found in one place: every part of the model a spec or the
//! API can turn on, classified as a [`Feature`], and the features each engine implements.
//! A run goes on the express engine only if every feature it uses is one the express engine
//! has ([`EXPRESS`]); otherwise on the general engine, which has them all.
//!
//! The parameter types are destructured whole here (no `..`): a field added to `Spec`,
//! `SimParams`, `Fabric`, `SwitchParams`, `LinkParams` or `HostParams` does not compile
//! until it is either classified as a feature or said to be one that every engine
//! implements alike. So a new part of the model cannot run unnoticed on an engine that does
//! not model it; an engine has what it lists, not what it forgot to refuse.

use super::Sim;
use crate::fabric::{
    Arbitration, Fabric, FlowControl, LinkParams, Selection, Shape, SwAllocator, SwitchMode, SwitchParams,
    VcAllocator, VcChoice, VcRelease,
};
use crate::routing::Routing;

/// One part of the model a run may use that not every engine implements. The order is the
/// order in which a refusal names them (the first one missing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Feature {
    /// `sim.express = false`: the general engine asked for by name.
    GeneralAsked,
    /// The invariant checks (`sim.check`).
    Checks,
    /// The flit-by-flit path (`sim.trains = false`) or a reversed event order (tests).
    Reference,
    /// A routing other than dimension order, a fat tree's computed routes or tables free of
    /// deadlock by construction (`Table::deadlock_free_by_construction`), deterministic or
    /// adaptive: header symbols, source routes, routings that choose by credits or by a
    /// packet's draw, escape channels, or tables that may deadlock (the general engine's
    /// watchdog then names the cycle).
    OtherRouting,
    /// Adaptive tables whose switches select by the credits used on outputs that may be
    /// busy (`switch.selection = "two-random-least-used"`, BookSim2's `anca`): a train
    /// takes its credits ahead of the flit-by-flit path, so even the general engine's
    /// trains give other draws than its reference there (docs/booksim.md).
    SelectionByUsedCredits,
    /// A torus without datelines.
    TorusWithoutDatelines,
    /// Output-buffered switches (extra stages of buffer nodes).
    OutputBuffers,
    /// Channel or node failures, DS tokens, host memory, agents.
    TokensFailuresAgents,
    /// More than 255 distinct channel timings.
    ManyTimings,
    /// Output VCs given in turn (`switch.vc_choice = "round-robin"`).
    VcInTurn,
    /// A VC-reuse delay.
    VcReuseDelay,
    /// A least time in the input buffer.
    FlitDelay,
    /// Two crossbar allocations a cycle into an output queue.
    InternalSpeedup,
    /// Outputs that take more than one flit a cycle into an output queue.
    OutputSpeedup,
    /// A separable switch allocator.
    SeparableAllocator,
    /// A separable VC allocator.
    SeparableVcAllocator,
    /// Separable allocators off BookSim2's cycle grid ([`separable_on_grid`]).
    SeparableOffGrid,
    /// A channel of more than 32 VCs.
    WideChannel,
    /// A channel clocked at a period that is not whole picoseconds.
    ClockedChannel,
    /// A channel without credits, with header deletion, of buffers over 32,768 flits or of
    /// zero flit time.
    OtherChannel,
    /// A switch other than a wormhole one with round-robin arbitration, a router delay and
    /// VCs released with the tail.
    OtherSwitch,
    /// A switch of more than 64 ports or input VCs.
    WideSwitch,
}

impl Feature {
    /// Every feature, in order.
    pub const ALL: [Feature; 22] = [
        Feature::GeneralAsked,
        Feature::Checks,
        Feature::Reference,
        Feature::OtherRouting,
        Feature::SelectionByUsedCredits,
        Feature::TorusWithoutDatelines,
        Feature::OutputBuffers,
        Feature::TokensFailuresAgents,
        Feature::ManyTimings,
        Feature::VcInTurn,
        Feature::VcReuseDelay,
        Feature::FlitDelay,
        Feature::InternalSpeedup,
        Feature::OutputSpeedup,
        Feature::SeparableAllocator,
        Feature::SeparableVcAllocator,
        Feature::SeparableOffGrid,
        Feature::WideChannel,
        Feature::ClockedChannel,
        Feature::OtherChannel,
        Feature::OtherSwitch,
        Feature::WideSwitch,
    ];

    /// What a refusal says of it.
    pub fn why(self) -> &'static str {
        match self {
            Feature::GeneralAsked => "sim.express = false",
            Feature::Checks => "invariant checks",
            Feature::Reference => "the flit-by-flit path or a reversed event order",
            Feature::OtherRouting => {
                "routing other than dimension order, a fat tree's computed routes or tables free of deadlock by construction"
            }
            Feature::SelectionByUsedCredits => {
                "a selection by the credits used on busy outputs (switch.selection = \"two-random-least-used\")"
            }
            Feature::TorusWithoutDatelines => "a torus without datelines (it may deadlock)",
            Feature::OutputBuffers => "output buffers",
            Feature::TokensFailuresAgents => "failures, tokens, host memory or agents",
            Feature::ManyTimings => "too many channel timings",
            Feature::VcInTurn => "VCs chosen round robin (switch.vc_choice = \"round-robin\")",
            Feature::VcReuseDelay => "a VC-reuse delay (switch.vc_reuse_delay)",
            Feature::FlitDelay => "a least time in the input buffer (switch.flit_delay)",
            Feature::InternalSpeedup => "an internal speed-up (switch.internal_speedup)",
            Feature::OutputSpeedup => "an output speed-up (switch.output_speedup)",
            Feature::SeparableAllocator => "a separable switch allocator (switch.allocator)",
            Feature::SeparableVcAllocator => "a separable VC allocator (switch.vc_allocator)",
            Feature::SeparableOffGrid => {
                "separable allocators off BookSim2's cycle grid (every channel of one flit time, every delay a whole number of them, a separable switch allocator on every switch, its inputs sharing the crossbar, VCs given in turn, deterministic routing)"
            }
            Feature::WideChannel => "channels of more than 32 VCs",
            Feature::ClockedChannel => "channels clocked at a period that is not whole picoseconds",
            Feature::OtherChannel => {
                "channels without credits, with header deletion or of buffers over 32,768 flits"
            }
            Feature::OtherSwitch => {
                "switches other than wormhole ones with round-robin arbitration, a router delay and VCs released with the tail"
            }
            Feature::WideSwitch => "switches of more than 64 ports or input VCs",
        }
    }
}

/// Whether every channel has one VC. BookSim2's switch is then reef's: a channel's one VC
/// is every choice's; no input's VCs share the crossbar, so no switch allocator runs
/// (`Sw::xbar`); and an output of one VC is granted by the round-robin scan of `allocate`,
/// whatever the VC allocator (escape routings aside: `OtherRouting`).
fn one_vc(sim: &Sim) -> bool {
    sim.chans.iter().all(|c| c.nvc == 1)
}

/// VCs chosen in turn (`switch.vc_choice`).
fn vc_in_turn(c: VcChoice) -> bool {
    match c {
        VcChoice::Lowest => false,
        VcChoice::RoundRobin => true,
    }
}

/// A separable VC allocator (`switch.vc_allocator`).
fn separable_vc(a: VcAllocator) -> bool {
    match a {
        VcAllocator::Greedy => false,
        VcAllocator::SeparableInputFirst | VcAllocator::SeparableOutputFirst | VcAllocator::Islip => true,
    }
}

/// A switch allocator other than the greedy one (`switch.allocator`).
fn separable_sw(a: SwAllocator) -> bool {
    match a {
        SwAllocator::Greedy => false,
        SwAllocator::SeparableOutputFirst
        | SwAllocator::SeparableInputFirst
        | SwAllocator::Wavefront
        | SwAllocator::RrWavefront
        | SwAllocator::MaxSize
        | SwAllocator::Loa => true,
    }
}

/// Whether the switches' VC choice or allocators are set away from reef's own on a network
/// of one VC a channel, where they change nothing ([`one_vc`]): what `reef check` says.
pub(crate) fn moot_switch_settings(sim: &Sim) -> bool {
    let f = sim.fab;
    one_vc(sim) && (vc_in_turn(f.vc_choice) || separable_vc(f.vc_allocator) || separable_sw(f.sw_allocator))
}

/// Whether `sim`'s separable allocators run on BookSim2's cycle grid, where the express
/// engine takes them (`express::separable`): one time unit `T`, every channel's flit and
/// tail time, every latency, credit delay and router delay a whole number of `T` (the router
/// delay and, with a separable VC allocator, the VC-reuse delay one at least, as BookSim2's
/// pipeline has them), packets made on its edges, no host costs; every switch's inputs share
/// the crossbar (more VCs than its speed-up of one) and allocate it with a separable
/// allocator; VCs given in turn; a deterministic routing (`adaptive`: not). There every
/// instant anything happens at is an edge of the grid, every switch allocates at every edge
/// at which it has something to match, and the results no longer depend on which events
/// woke a switch (the general engine's separable allocators look only at the outputs woken:
/// off the grid an output that lost an allocation and tries again a cycle later may be
/// woken in between, docs/config.md).
fn separable_on_grid(sim: &Sim, adaptive: bool) -> bool {
    use crate::workload::source::Process;
    let f = sim.fab;
    let Some(t) = sim.timing.first().map(|t| t.flit_time) else {
        return false;
    };
    let whole = |x: crate::time::Time| x.is_multiple_of(t);
    let on_edges = |r: crate::time::Ratio| r.num().is_multiple_of(r.den() * t as u128);
    let process = match &sim.spec.workload.process {
        Process::Bernoulli { cycle, .. } | Process::OnOff { cycle, .. } | Process::Batch { cycle, .. } => {
            cycle.period() == crate::time::Ratio::int(t as u128)
        }
        Process::Periodic { period } => on_edges(*period),
        Process::Backlogged => true,
        Process::Poisson { .. } => false,
    };
    t > 0
        && process
        && !adaptive
        && vc_in_turn(f.vc_choice)
        && separable_sw(f.sw_allocator)
        && f.internal_speedup == 1
        && f.output_speedup == 1
        && whole(f.vc_reuse)
        && whole(f.flit_delay)
        && (f.vc_reuse > 0 || !separable_vc(f.vc_allocator))
        && sim.timing.iter().all(|m| {
            m.flit_time == t
                && m.tail_time == t
                && m.clock.is_none()
                && whole(m.latency)
                && whole(m.credit_delay)
                && whole(m.router_delay)
        })
        && sim.sws.0[..f.switches as usize]
            .iter()
            .all(|s| s.xbar && s.speedup == 1 && s.sa_period == t)
        && sim.host_params.iter().all(|h| {
            h.send_overhead == 0 && h.send_per_byte == 0 && h.recv_overhead == 0 && h.recv_per_byte == 0
        })
}

/// A set of [`Feature`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features(u32);

const _: () = assert!(Feature::ALL.len() <= 32);

impl Features {
    pub const NONE: Features = Features(0);

    pub const fn with(self, f: Feature) -> Features {
        Features(self.0 | 1 << f as u8)
    }

    pub fn has(self, f: Feature) -> bool {
        self.0 & 1 << f as u8 != 0
    }

    fn set(&mut self, f: Feature, on: bool) {
        if on {
            *self = self.with(f);
        }
    }

    /// The first feature of `self` that `engine` lacks.
    pub fn beyond(self, engine: Features) -> Option<Feature> {
        self.all_beyond(engine).next()
    }

    /// Every feature of `self` that `engine` lacks, in order.
    pub fn all_beyond(self, engine: Features) -> impl Iterator<Item = Feature> {
        Feature::ALL
            .into_iter()
            .filter(move |&f| self.has(f) && !engine.has(f))
    }

    /// The features `sim` uses.
    pub fn of(sim: &Sim) -> Features {
        let mut u = Features::NONE;
        let super::Spec {
            // Names and results only.
            name: _,
            fabric: _,
            routing: _,
            // Traffic: both engines draw it from the same sources.
            workload: _,
            params,
            // Host costs, copied per host into `Sim::host_params`: every engine pays them.
            host: _,
            // Message benchmarks run on neither (`workload::message`).
            messages: _,
        } = sim.spec;
        let super::SimParams {
            // The window, the drain, the batches, the watchdog, byte rates, headers and
            // BookSim2's sampling: both engines run the same loop's ends.
            seed: _,
            warmup: _,
            measure: _,
            drain_limit: _,
            drain_all: _,
            batches: _,
            cycle: _,
            watchdog: _,
            flit_bytes: _,
            max_header: _,
            sampling: _,
            // Repetitions with other seeds: the command line's, one engine run each.
            runs: _,
            // How a packet is dated, in the code both engines call (`Sim::next_synthetic`).
            source_queueing: _,
            check,
            trains,
            express,
        } = params;
        u.set(Feature::GeneralAsked, !express);
        u.set(Feature::Checks, *check);
        u.set(Feature::Reference, !trains || sim.reverse_order);
        let Fabric {
            // The layout: both engines number it from these.
            nodes: _,
            hosts: _,
            out_chan: _,
            in_chan: _,
            channels,
            switches,
            stage_base,
            switch_params,
            vc_choice,
            vc_reuse,
            flit_delay,
            internal_speedup,
            output_speedup,
            sw_allocator,
            vc_allocator,
            shape,
        } = sim.fab;
        // Any fabric: the engine numbers what the fabric has; only the routing knows its
        // shape.
        let mut adaptive = false;
        match sim.routing {
            Routing::Dor(d) => {
                if let Shape::Cube { wrap, .. } = shape {
                    u.set(Feature::TorusWithoutDatelines, *wrap && !d.dateline());
                }
            }
            // Deterministic, or adaptive: the switches select among the admissible outputs.
            Routing::Table(t) => {
                u.set(Feature::OtherRouting, !t.deadlock_free_by_construction());
                adaptive = !t.deterministic();
            }
            // Up, then down: one path a pair, free of deadlock.
            Routing::FatTree(_) => {}
            _ => u.set(Feature::OtherRouting, true),
        }
        u.set(Feature::OutputBuffers, stage_base != switches);
        u.set(
            Feature::TokensFailuresAgents,
            !sim.fail_at.is_empty()
                || sim.tok.iter().any(|t| t.on)
                || sim
                    .hosts
                    .iter()
                    .any(|h| h.mem_cap != u64::MAX || !h.outbox.is_empty()),
        );
        u.set(Feature::ManyTimings, sim.timing.len() > 255);
        let one_vc = one_vc(sim);
        u.set(Feature::VcInTurn, !one_vc && vc_in_turn(*vc_choice));
        u.set(Feature::VcReuseDelay, *vc_reuse != 0);
        u.set(Feature::FlitDelay, *flit_delay != 0);
        u.set(Feature::InternalSpeedup, *internal_speedup > 1);
        u.set(Feature::OutputSpeedup, *output_speedup > 1);
        u.set(
            Feature::SeparableVcAllocator,
            !one_vc && separable_vc(*vc_allocator),
        );
        u.set(
            Feature::SeparableAllocator,
            !one_vc && separable_sw(*sw_allocator),
        );
        if !one_vc && (separable_sw(*sw_allocator) || separable_vc(*vc_allocator)) {
            u.set(Feature::SeparableOffGrid, !separable_on_grid(sim, adaptive));
        }
        for (ci, ch) in channels.iter().enumerate() {
            let LinkParams {
                // Any timing: both engines pace flits by the channel's `Timing`.
                tail_time: _,
                latency: _,
                vcs: _,
                flit_time,
                buffer,
                flow,
                delete_header,
                clock,
            } = &ch.params;
            u.set(Feature::WideChannel, sim.chans[ci].nvc > 32);
            u.set(Feature::ClockedChannel, clock.is_some());
            // (Tokens are named with the hosts above, from `Sim::tok`.)
            let credit = match flow {
                FlowControl::Credit { .. } | FlowControl::Tokens { .. } => sim.chans[ci].credit,
                FlowControl::None => false,
            };
            u.set(
                Feature::OtherChannel,
                !credit || *delete_header || *buffer > 1 << 15 || *flit_time == 0,
            );
        }
        for (s, sp) in switch_params[..*switches as usize].iter().enumerate() {
            let SwitchParams {
                router_delay,
                mode,
                arbitration,
                release,
                // Among several outputs (adaptive tables), the policies that read which VCs
                // are free and the credits of free ones, or nothing.
                selection,
                // Both engines pace the crossbar by it.
                speedup: _,
            } = sp;
            u.set(
                Feature::OtherSwitch,
                !matches!(mode, SwitchMode::Wormhole)
                    || !matches!(release, VcRelease::Tail)
                    || !matches!(arbitration, Arbitration::RoundRobin)
                    || *router_delay == 0,
            );
            u.set(
                Feature::WideSwitch,
                sim.sws[s].n_in > 64 || sim.sws[s].n_ports > 64,
            );
            u.set(
                Feature::SelectionByUsedCredits,
                adaptive
                    && match selection {
                        Selection::FirstFree
                        | Selection::RoundRobin
                        | Selection::Random
                        | Selection::RandomAny
                        | Selection::LeastOccupied => false,
                        Selection::TwoRandomLeastUsed => true,
                    },
            );
        }
        u
    }
}

/// What the express engine implements, in one instantiation or another
/// (`express::feat`): the invariant checks, a VC-reuse delay, a least time in the input
/// buffer, VCs given in turn, BookSim2's separable allocators on its cycle grid (off it,
/// [`Feature::SeparableOffGrid`]), and otherwise none of the
/// features above (it runs wormhole switches with credits and round-robin arbitration,
/// with any host costs, on any fabric, routed by dimension order, a fat tree's computed
/// routes or tables free of deadlock, deterministic or adaptive with a selection by free
/// VCs and their credits; the rest is the general engine's).
pub const EXPRESS: Features = super::express::feat::ALL;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_missing_feature_is_named() {
        let used = Features::NONE
            .with(Feature::OtherSwitch)
            .with(Feature::OtherRouting);
        assert_eq!(used.beyond(EXPRESS), Some(Feature::OtherRouting));
        assert_eq!(
            used.all_beyond(EXPRESS).collect::<Vec<_>>(),
            [Feature::OtherRouting, Feature::OtherSwitch]
        );
        assert_eq!(used.beyond(used), None);
        assert_eq!(Features::NONE.beyond(EXPRESS), None);
        assert_eq!(Features::NONE.with(Feature::Checks).beyond(EXPRESS), None);
        for f in Feature::ALL {
            assert!(!f.why().is_empty());
            assert!(Features::NONE.with(f).has(f));
        }
    }
}

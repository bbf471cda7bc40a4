//! The Macramé networks as reef specs: STC104 switches (32 ports, 1 µs header latency,
//! 32-character input and output FIFOs, wormhole, round-robin arbitration), DS links with
//! token flow control, traffic nodes 16 to a traffic module, and the three topologies at the
//! spec's sizes, routed by generated STC104 interval tables.

use super::params::*;
use crate::engine::{HostParams, SimParams, Spec};
use crate::fabric::{Arbitration, Selection, SwitchMode, SwitchParams, VcRelease};
use crate::fabric::{Fabric, clos::folded_clos, grid::switch_grid};
use crate::fabric::{FlowControl, LinkParams};
use crate::routing::{Routing, interval};
use crate::time::Ratio;
use crate::workload::{Pattern, Process, Sizes, Workload};

/// A Macramé topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Topo {
    Clos,
    Grid,
    Torus,
}

impl Topo {
    pub fn name(self) -> &'static str {
        match self {
            Topo::Clos => "clos",
            Topo::Grid => "grid",
            Topo::Torus => "torus",
        }
    }

    pub fn parse(s: &str) -> Option<Topo> {
        match s {
            "clos" => Some(Topo::Clos),
            "grid" => Some(Topo::Grid),
            "torus" => Some(Topo::Torus),
            _ => None,
        }
    }
}

/// How the STC104 tables route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteMode {
    Deterministic,
    /// Grouped adaptive: any free link of a group.
    Adaptive,
    /// Two-phase universal routing through a random centre switch (Clos), adaptive groups.
    Universal,
}

impl RouteMode {
    pub fn name(self) -> &'static str {
        match self {
            RouteMode::Deterministic => "deterministic",
            RouteMode::Adaptive => "adaptive",
            RouteMode::Universal => "universal",
        }
    }
}

/// STC104 buffering per link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffering {
    /// A 32-character FIFO in the input and one in the output of every link (Macramé).
    Fifos,
    /// The data sheet's 70 tokens per link, as one input FIFO (the sensitivity check).
    Tokens70,
}

/// What the testbed had that the default model leaves out, added to bound its effect
/// (`reef reproduce ieee1355`, experiment `model-sensitivity`). The default, [`Timing::Model`],
/// is the one the sources describe: fixed link, switch and dispatch timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    Model,
    /// NULL characters on idle links, at their worst: a character that finds the link idle
    /// waits for the NULL being sent (ESC + FCT, 8 bits, 0-80 ns); here every DS link adds
    /// the whole 80 ns to every character and token it carries.
    NullWorst,
    /// The links' independent clocks: each DS link gets its own extra delay, drawn once
    /// uniformly among the whole bit times 0..=[`JITTER_MAX`] (a receiver resynchronising
    /// characters into its switch's clock, at most a character late; the drift between
    /// 100 MBaud oscillators, some 10⁻⁴, is below a nanosecond a packet and is left out).
    ClockSkew,
    /// The traffic node's 650 ns dispatch not overlapping the previous send: the node starts
    /// preparing a packet only once the previous one is out.
    SerialDispatch,
}

/// The largest extra delay [`Timing::ClockSkew`] gives a link: one data character, 10 bit
/// times [ps].
pub const JITTER_MAX: u64 = DATA_CHAR;

/// The worst wait for a NULL in progress [`Timing::NullWorst`] [ps].
pub const NULL_CHAR: u64 = 8 * BIT;

impl Timing {
    pub fn name(self) -> &'static str {
        match self {
            Timing::Model => "model",
            Timing::NullWorst => "null-worst",
            Timing::ClockSkew => "clock-skew",
            Timing::SerialDispatch => "serial-dispatch",
        }
    }
}

/// One Macramé network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Net {
    pub topo: Topo,
    pub nodes: u32,
    pub route: RouteMode,
    pub buffering: Buffering,
    pub timing: Timing,
}

impl Net {
    pub fn new(topo: Topo, nodes: u32, route: RouteMode) -> Net {
        Net {
            topo,
            nodes,
            route,
            buffering: Buffering::Fifos,
            timing: Timing::Model,
        }
    }
}

/// Terminal and centre switches of the 3-stage folded Clos of `nodes` nodes (the spec's
/// sizes: centre switches keep 32 ports; 16 up-links per terminal switch in groups of
/// 16 / C).
pub fn clos_shape(nodes: u32) -> Option<(u32, u32)> {
    match nodes {
        64 => Some((4, 2)),
        128 => Some((8, 4)),
        256 => Some((16, 8)),
        512 => Some((32, 16)),
        _ => None,
    }
}

/// Switches per side of the grid or torus of `nodes` nodes (16 per switch).
pub fn grid_side(nodes: u32) -> Option<u32> {
    let s = nodes / NODES_PER_SWITCH;
    let k = (s as f64).sqrt().round() as u32;
    (k * k * NODES_PER_SWITCH == nodes && k >= 2).then_some(k)
}

/// A DS link with `buffer` characters at its receiver and `latency` of propagation.
pub fn ds_link(buffer: u32, latency: u64) -> LinkParams {
    LinkParams {
        flit_time: DATA_CHAR,
        tail_time: CONTROL_CHAR,
        latency,
        vcs: 1,
        buffer,
        flow: FlowControl::Tokens {
            grant: FCT_GRANT,
            max_outstanding: FCT_MAX_OUTSTANDING,
            token_time: CONTROL_CHAR,
        },
        delete_header: false,
        clock: None,
    }
}

/// The STC104 as a switch: wormhole, the header latency as the routing decision,
/// round-robin arbitration of an output freed by an EOP. A packet routed to a group takes a
/// free link of it: one whose crossbar connection is released and whose output FIFO has
/// emptied (the link is not sending), or if none has, the one whose FIFO is emptiest (the
/// first to be free) — the engine's least-occupied selection, since the output FIFO's free
/// room is the credit the crossbar holds for it.
pub fn stc104() -> SwitchParams {
    SwitchParams {
        router_delay: HEADER_LATENCY,
        mode: SwitchMode::Wormhole,
        selection: Selection::LeastOccupied,
        arbitration: Arbitration::RoundRobin,
        speedup: 1,
        release: VcRelease::Tail,
    }
}

/// The fabric (without output FIFOs) and its interval routing.
pub fn fabric_and_routing(net: &Net) -> Result<(Fabric, Routing), String> {
    let input = match net.buffering {
        Buffering::Fifos => INPUT_FIFO,
        Buffering::Tokens70 => DATASHEET_TOKENS,
    };
    let null = if net.timing == Timing::NullWorst {
        NULL_CHAR
    } else {
        0
    };
    let cable = ds_link(input, CABLE + null);
    let board = ds_link(input, ON_BOARD + null);
    let adaptive = net.route != RouteMode::Deterministic;
    let (fab, table) = match net.topo {
        Topo::Clos => {
            let (t, c) = clos_shape(net.nodes)
                .ok_or_else(|| format!("no {}-node Clos (64, 128, 256 or 512)", net.nodes))?;
            let f = folded_clos(
                t,
                NODES_PER_SWITCH,
                c,
                NODES_PER_SWITCH / c,
                cable,
                board,
                stc104(),
            )
            .map_err(|e| e.to_string())?;
            let r = interval::clos(&f, adaptive, net.route == RouteMode::Universal);
            (f, r)
        }
        Topo::Grid | Topo::Torus => {
            if net.route == RouteMode::Universal {
                return Err("universal routing is built for the Clos only".into());
            }
            let k = grid_side(net.nodes).ok_or_else(|| format!("no {}-node grid", net.nodes))?;
            let f = switch_grid(
                k,
                net.topo == Topo::Torus,
                NODES_PER_SWITCH,
                GRID_GROUP,
                cable,
                board,
                stc104(),
            )
            .map_err(|e| e.to_string())?;
            let r = interval::grid(&f, adaptive);
            (f, r)
        }
    };
    let table = table.ok_or("no interval tables for this shape")?;
    let mut fab = fab;
    if net.timing == Timing::ClockSkew {
        // One draw per link, the same for every run of this network.
        let mut r = crate::rng::Stream::new(0x1355, crate::rng::Purpose::Setup, 0);
        for ch in &mut fab.channels {
            ch.params.latency += r.below(JITTER_MAX / BIT + 1) * BIT;
        }
    }
    Ok((fab, Routing::Header(table)))
}

/// The fabric with the STC104's output FIFOs after every switch output.
pub fn with_output_fifos(fab: Fabric, buffering: Buffering) -> Fabric {
    match buffering {
        Buffering::Fifos => {
            let internal = LinkParams {
                flit_time: CROSSBAR_CHAR,
                tail_time: (CROSSBAR_CHAR * CONTROL_CHAR / DATA_CHAR).max(1),
                latency: 0,
                vcs: 1,
                buffer: OUTPUT_FIFO,
                flow: FlowControl::Credit { delay: 1 },
                delete_header: false,
                clock: None,
            };
            fab.with_output_buffers(OUTPUT_FIFO, internal)
        }
        Buffering::Tokens70 => fab,
    }
}

/// A runnable spec for `net`: hosts are driven by an agent (no synthetic traffic); the run
/// lasts at most `limit` [ps] (agents stop it earlier).
pub fn spec(net: &Net, seed: u64, limit: u64, max_header: usize) -> Result<Spec, String> {
    let (fab, routing) = fabric_and_routing(net)?;
    let fab = with_output_fifos(fab, net.buffering);
    let n = fab.num_hosts();
    Ok(Spec {
        name: format!("macrame-{}-{}-{}", net.topo.name(), net.nodes, net.route.name()),
        fabric: fab,
        routing,
        workload: Workload {
            pattern: Pattern::Map(vec![crate::workload::pattern::SILENT; n]),
            process: Process::Backlogged,
            sizes: Sizes::Fixed(1),
            load: 1.0,
        },
        params: SimParams {
            seed,
            warmup: 0,
            measure: limit,
            drain_limit: 0,
            drain_all: false,
            batches: 1,
            cycle: Ratio::int(DATA_CHAR as u128),
            check: false,
            watchdog: 200_000_000,
            flit_bytes: 1,
            trains: true,
            express: true,
            max_header,
            sampling: None,
            runs: 1,
            source_queueing: true,
        },
        host: HostParams {
            send_overhead: DISPATCH,
            ..HostParams::default()
        },
        // (Serial dispatch depends on the packet's length: the traffic run sets it.)
        messages: None,
    })
}

//! The discrete-event core: time in picoseconds, components as plain data in flat arrays
//! indexed by small ids, and a calendar of due events (DESIGN.md, "Engine").
//!
//! Model of time. A flit sent on a channel at `t` occupies the channel for its unit time
//! (flit or tail time) and is in the receiver's buffer at `t + unit + latency`. The receiver
//! frees its slot when the flit leaves, and the credit is back at the sender one credit delay
//! later. A head that reaches the front of an input buffer at `t` may leave at
//! `t + router_delay` at the earliest; the flits behind it leave as soon as they are in the
//! buffer, the output is free and there is credit. Every step at one instant is taken in two
//! phases: first every event due then is applied (flits and credits land, timers expire),
//! then every component that something happened to decides what to do; components decide
//! independently of each other, and every random choice comes from the component's own
//! stream, so results are the same bit for bit whatever order the components are visited in.
//!
//! The parts: the records ([`state`]), laying a spec out as them (`build`), a channel's
//! transfers and credits (`channel`), the run loop (`run`) and the invariant checks
//! (`check`); a switch's behaviour is in `crate::switch`, a host's in `crate::nic`, and the
//! express engine (`express`) runs the common fabrics on records of its own.

pub mod agent;
pub(crate) mod arr;
pub(crate) mod express;
pub mod features;
pub mod queue;
pub mod result;
pub mod watchdog;

mod build;
mod channel;
mod check;
mod recs;
mod run;
mod state;
mod window;

pub(crate) use check::landing_fault;
pub(crate) use state::*;

use crate::fabric::Fabric;
use crate::fabric::{Arbitration, Selection, SwAllocator, SwitchMode, VcChoice, VcRelease};
use crate::rng::{Purpose, Stream};
use crate::routing::{Routing, Want};
use crate::stats::{Batch, LatencyAcc};
use crate::switch::separable::Separable;
use crate::time::{Clock, Ratio, Time};
use crate::workload::{Arrivals, Process, Workload};
use arr::Arr;
use queue::{Class, EventQueue};

/// "No such id".
pub const NONE: u32 = u32::MAX;

// Events: kind (3 bits) | train flits still to come (4 bits) | train ends with the tail (1
// bit) | the train's flits are two flit times apart (1 bit) | id (23 bits) | payload (32
// bits).
pub(crate) const K_FLIT: u64 = 0;
pub(crate) const K_CREDIT: u64 = 1;
pub(crate) const K_TXFREE: u64 = 2;
pub(crate) const K_ROUTE: u64 = 3;
pub(crate) const K_GEN: u64 = 4;
pub(crate) const K_TAILGONE: u64 = 5;
pub(crate) const K_DELIVER: u64 = 6;
pub(crate) const K_TIMER: u64 = 7;

/// Largest id an event can carry (channel VCs, channels, hosts).
pub const MAX_ID: u32 = (1 << 23) - 1;

/// Flit event bit: the train's flits land two flit times apart (an interleaved train).
pub(crate) const EV_STRIDE2: u64 = 1 << 55;

/// In a `K_DELIVER` event: the receiving host's costs for the packet are paid (see
/// `deliver`).
pub(crate) const EV_PAID: u64 = 1 << 60;

/// Most flits sent as one train.
pub const MAX_TRAIN: u32 = 16;

#[inline(always)]
pub(crate) fn ev(kind: u64, id: u32, payload: u32) -> u64 {
    (kind << 61) | ((id as u64) << 32) | payload as u64
}

/// A flit event that announces `rem` more flits of a train behind it.
#[inline(always)]
pub(crate) fn ev_train(id: u32, flit: u32, rem: u32, ends_tail: bool) -> u64 {
    ((rem as u64) << 57) | ((ends_tail as u64) << 56) | ((id as u64) << 32) | flit as u64
}

// Flits: packet slot (30 bits) | head | tail.
pub(crate) const HEAD: u32 = 1 << 31;
pub(crate) const TAIL: u32 = 1 << 30;
pub(crate) const PID: u32 = TAIL - 1;

// Input-VC states.
pub(crate) const IDLE: u8 = 0;
pub(crate) const ROUTING: u8 = 1;
pub(crate) const READY: u8 = 2;
pub(crate) const WAITING: u8 = 3;
pub(crate) const ACTIVE: u8 = 4;
pub(crate) const AWAIT_TAIL: u8 = 5;
/// Empty: the last packet left in a train whose tail passes at `t_aux` (flit-by-flit
/// time); a head landing before then reaches the front only then.
pub(crate) const DRAIN: u8 = 6;

/// Output-VC owners besides an input VC: held by a train whose tail passes at
/// `Sim::held` (released lazily, when next looked at)...
pub(crate) const HELD: u32 = u32::MAX - 1;
/// ... or with a `TAILGONE` event due then, because a head waits for it.
pub(crate) const HELD_EV: u32 = u32::MAX - 2;

/// A `K_ROUTE` event names the switch, and carries the bit (of `Sim::bits`) that files the
/// head for routing: the event touches neither the VC's record nor the switch's, which
/// the switch's evaluation fetches ahead (see `Sim::eval_dirty`).
#[inline(always)]
pub(crate) fn route_event(node: u32, base: u32, local: u32) -> u64 {
    ev(K_ROUTE, node, (base << 6) + local)
}

/// VC flags: the sender waits for a credit (wake it when one returns).
pub(crate) const F_CWAIT: u8 = 1;
/// VC flags: the channel comes from a host (its flits count as injected).
pub(crate) const F_FROM_HOST: u8 = 2;
/// VC flags: the header flit was stripped before the next one arrived; that one is the head.
pub(crate) const F_HEAD_NEXT: u8 = 4;
/// VC flags: in `AWAIT_TAIL`, the head reaches the front at `t_aux` because a tail leaves
/// then (see `Sw::late_base`).
pub(crate) const F_FRONT_LATE: u8 = 8;
/// The VC's channel has token flow control (a copy of `Chan::tokens`).
pub(crate) const F_TOKENS: u8 = 16;
/// A credit need meaning "all of the VC's buffer" ([`Sim::has_credits`]).
pub(crate) const NEED_ALL: u32 = u32::MAX;
/// A host's credit need meaning "its packet's length" ([`HostState::need`]).
pub(crate) const NEED_LEN: u32 = u32::MAX - 1;

/// The last VC of its channel (the VCs of a channel have consecutive ids).
pub(crate) const F_LAST_VC: u8 = 32;
/// VC flags: the head at the front was routed as it came to the front (`want_*` hold the
/// result; see `route_ahead`).
pub(crate) const F_ROUTED: u8 = 64;
/// VC flags: the VC is an input of a switch that never asks which heads are being routed
/// (one VC per output channel, inputs not sharing the crossbar: its trains always run to
/// the tail), so `Sim::pending` is not kept for it.
pub(crate) const F_UNWATCHED: u8 = 128;
/// A slot's `dst` holds the destination host in its low bits and, in the head's slot, hops
/// not yet added to the packet record in its high bits.
pub(crate) const DST_BITS: u32 = 24;
pub(crate) const DST_MASK: u32 = (1 << DST_BITS) - 1;
const _: () = assert!(MAX_ID <= DST_MASK);

/// Channel time inside the measurement window `[ms, me)` of `k` flits sent back to back from
/// `now`, each `ft` long but the last, which is `last` long: the overlap of their time on the
/// channel with the window. (The flits are contiguous, so a train's overlap is the sum of
/// its flits': trains and flit by flit count the same. Counting a flit in full when it
/// started inside the window put channels above 100 % use where flits are long.)
#[inline(always)]
pub(crate) fn window_busy((ms, me): (Time, Time), now: Time, k: u32, ft: Time, last: Time) -> Time {
    let end = now + (k - 1) as Time * ft + last;
    end.min(me).saturating_sub(now.max(ms))
}

/// Errors on the hot path are boxed to keep results one word wide.
pub(crate) type Res<T> = Result<T, Box<SimError>>;

/// Host costs: a sending host spends `send_overhead + bytes · send_per_byte` on each packet
/// before it can inject it (packets one after another, overlapping the injection of the
/// previous one); a receiving host spends `recv_overhead + bytes · recv_per_byte` after the
/// tail arrives before the packet counts as delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostParams {
    /// [ps]
    pub send_overhead: Time,
    /// [ps/byte]
    pub send_per_byte: Time,
    /// [ps]
    pub recv_overhead: Time,
    /// [ps/byte]
    pub recv_per_byte: Time,
}

/// How long to run and what to measure.
#[derive(Clone, Debug)]
pub struct SimParams {
    pub seed: u64,
    /// Warm-up [ps]: packets created before it are not measured.
    pub warmup: Time,
    /// Measurement window [ps]: packets created in `[warmup, warmup + measure)` are measured.
    pub measure: Time,
    /// How long after the window to wait for the measured packets [ps]; a run that needs
    /// longer is reported as saturated.
    pub drain_limit: Time,
    /// Sources stop creating packets at the end of the window and the run continues until the
    /// network is empty (for conservation checks). Otherwise sources keep injecting while the
    /// measured packets drain, as BookSim2 does.
    pub drain_all: bool,
    /// Batches for batch-means confidence intervals.
    pub batches: u32,
    /// One cycle [ps], for loads and reports.
    pub cycle: Ratio,
    /// Check invariants as the run goes (slower).
    pub check: bool,
    /// A VC whose front has not moved for this long is examined for deadlock [ps].
    pub watchdog: Time,
    /// Bytes per flit, for byte rates and per-byte host costs.
    pub flit_bytes: u32,
    /// Send runs of flits as trains where nothing can come between them (identical results,
    /// fewer events); `false` runs the flit-by-flit reference path.
    pub trains: bool,
    /// Run on the express engine when the fabric allows it ([`express`]: the same results,
    /// faster); `false` runs every fabric on the general engine.
    pub express: bool,
    /// Room for header symbols per packet, beyond what the routing itself needs (for agents
    /// that give packets their own headers) [symbols].
    pub max_header: usize,
    /// Warm-up and window decided by BookSim2's convergence test instead of `warmup` and
    /// `measure` ([`crate::stats::sampling`]; `None`: the fixed window).
    pub sampling: Option<crate::stats::sampling::Sampling>,
    /// Independent runs of the whole simulation (`sim.runs`, BookSim2's `sim_count`), run
    /// `k` with seed `seed + k`: `reef run` runs them one after another and reports each and
    /// their mean; one engine run is one of them.
    pub runs: u32,
    /// Packet latency counts from creation, the time in the source queue included (the
    /// default; BookSim2's `include_queuing = 1`); `false`: from where the packet reaches
    /// the front of its source queue, once created and once the packet before it is out
    /// (`include_queuing = 0`). Synthetic traffic only.
    pub source_queueing: bool,
}

/// A complete, validated simulation input.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub fabric: Fabric,
    pub routing: Routing,
    pub workload: Workload,
    pub params: SimParams,
    pub host: HostParams,
    /// A message benchmark (ping-pong, streaming) in place of synthetic traffic: run by
    /// [`crate::workload::message`], not [`Sim::run`].
    pub messages: Option<crate::workload::message::MessageSpec>,
}

/// A run that had to stop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// Routing found no output for a packet.
    #[error("at {time} ps, a packet from host {src} to host {dst}: {err}")]
    Route {
        time: Time,
        src: u32,
        dst: u32,
        err: crate::routing::RouteError,
    },
    /// An engine invariant does not hold (a bug, reported instead of hidden).
    #[error("invariant violated at {time} ps: {what}")]
    Invariant { time: Time, what: String },
    /// The model is too large for the engine's id widths.
    #[error("{0}")]
    TooLarge(String),
    /// The model cannot run as given (e.g. token flow control on a channel with no reverse).
    #[error("{0}")]
    Invalid(String),
}

/// Progress of a run, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: Time,
    /// End of the measurement window [ps].
    pub window_end: Time,
    pub events: u64,
    /// Packets delivered so far (a batch's progress).
    pub delivered: u64,
}

/// One simulation of one [`Spec`].
pub struct Sim<'a> {
    pub(crate) spec: &'a Spec,
    pub(crate) fab: &'a Fabric,
    pub(crate) routing: &'a Routing,
    pub(crate) now: Time,
    pub(crate) q: EventQueue,
    pub(crate) chans: Arr<Chan>,
    pub(crate) timing: Arr<Timing>,
    /// Per channel, when it is cut ([`Sim::fail_channel_at`]) [ps], `Time::MAX` for never;
    /// empty until a failure is scheduled.
    pub(crate) fail_at: Vec<Time>,
    pub(crate) vcs: Arr<Vc>,
    /// The VC rings: a buffered slot holds a flit and its arrival time (a train's flits are
    /// in the buffer from the train's first arrival, each usable only from its own); a slot
    /// whose flit has left holds the time its credit reaches the sender.
    pub(crate) ring: recs::Store<Slot>,
    /// Buffer size of each VC [flits].
    pub(crate) caps: Vec<u32>,
    /// Flits in flight toward each VC (only under `check`).
    pub(crate) inflight: Vec<u32>,
    /// Round-robin selection state per input VC.
    pub(crate) sel_rr: Vec<u16>,
    /// Per switch input VC: the output VC it was last given (`NONE`: none yet), where VCs are
    /// chosen round robin ([`crate::fabric::VcChoice::RoundRobin`]; empty otherwise).
    pub(crate) va_last: Vec<u32>,
    /// Per input VC: in `DRAIN`, when the tail of its train passes (in flit-by-flit time);
    /// in `ROUTING`, when the head's router delay ends; in `AWAIT_TAIL`, when the head is at
    /// the front [ps].
    pub(crate) t_aux: Arr<Time>,
    /// When each VC's front flit last moved [ps] (the watchdog's; out of [`Vc`], which has
    /// no room for it).
    pub(crate) last_move: Arr<Time>,
    /// Per output VC held by a train (`HELD`, `HELD_EV`): when its tail passes [ps].
    pub(crate) held: Arr<Time>,
    /// Per channel, a bit for each of its VCs with an owner (`Vc::owner` not `NONE`: a
    /// packet, or a train's tail passing): what a switch's output looks at, without
    /// reading its idle VCs' records.
    pub(crate) owned: Arr<u64>,
    /// After a tail starts on a switch's output VC, how long before another packet's head
    /// may start on it [ps] (0: once the tail has passed). BookSim2 gives a freed output VC
    /// to a waiting head in the VC-allocation stage of the next cycle, and the head goes to
    /// switch allocation after it (`iq_router.cpp`: the VC is freed in `_SWAllocUpdate`,
    /// after that cycle's `_VCAllocEvaluate`).
    pub(crate) vc_reuse: Time,
    /// The least time a flit spends in a switch's input buffer, from landing to leaving
    /// [ps] (`switch.flit_delay`). BookSim2's body flit goes to switch allocation the cycle
    /// it lands and crosses the cycle after; a head's router delay includes this. The ring
    /// of a switch's input VC holds each flit's landing plus this: when it may leave.
    pub(crate) flit_delay: Time,
    /// How many times a cycle switches allocate their crossbar (`switch.internal_speedup`,
    /// 1 or 2: [`crate::switch::speedup`]).
    pub(crate) internal_speedup: u32,
    /// Whether switch outputs queue flits after the crossbar (an internal or an output
    /// speed-up, [`crate::switch::speedup`]).
    pub(crate) queued: bool,
    /// With output queues, per channel out of a switch: the first instant its output queue
    /// takes more flits from the crossbar [ps] (empty otherwise).
    pub(crate) accept: Arr<Time>,
    /// Switches whose inputs share the crossbar allocate it with this each cycle.
    pub(crate) sw_allocator: SwAllocator,
    /// The separable allocators' state ([`crate::fabric::SwAllocator`]; empty for the
    /// greedy one).
    pub(crate) sep: Separable,
    /// How switches give free output VCs to waiting heads.
    pub(crate) vc_alloc: crate::fabric::VcAllocator,
    /// The separable VC allocators' state (empty for the greedy one).
    pub(crate) vsep: crate::switch::vc_alloc::VcSep,
    /// Time of the pending credit wake-up of each VC's sender.
    pub(crate) cwake: Vec<Time>,
    /// Admissible output sets of routed heads that may take more than one port.
    pub(crate) wants: Vec<Want>,
    /// Delay classes of `j · flit_time` (see `Chan::train_class`).
    pub(crate) train_class_ids: Vec<Class>,
    pub(crate) sws: Arr<Sw>,
    /// Per switch, its inputs whose head is being routed (state `ROUTING` or `READY`), one
    /// bit per local input in `pend_words` words from `s · pend_words`: apart from the
    /// switch's record, which a sender handing a head over need not touch.
    pub(crate) pending: Arr<u64>,
    pub(crate) pend_words: u32,
    pub(crate) sw_in: Arr<u32>,
    /// Per port of every node (index `port_base + port`).
    pub(crate) ports: Arr<Port>,
    pub(crate) bits: Arr<u64>,
    pub(crate) hosts: Vec<HostState>,
    pub(crate) node_host: Vec<u32>,
    pub(crate) pkts: Arr<Pkt>,
    pub(crate) free_pkts: Vec<u32>,
    pub(crate) route_store: Vec<u16>,
    pub(crate) route_stride: usize,
    /// Some channel has a routing label (up*/down*): routing steps need the input's.
    pub(crate) uses_class: bool,
    /// Values of a packet's draw for randomized routing (`Routing::draws`; 0: none).
    pub(crate) route_draws: u32,
    /// The injection VCs a packet may start on depend on its destination
    /// (`Routing::splits_injection`).
    pub(crate) inj_by_dst: bool,
    /// The routing reads or rewrites header symbols (`Routing::uses_header`), kept here for
    /// the grant, which asks on every hop.
    pub(crate) header_ops: bool,
    pub(crate) scratch_route: Vec<u16>,
    pub(crate) dirty: Vec<u32>,
    pub(crate) dirty_stamp: Vec<u64>,
    pub(crate) step: u64,
    /// The measurement window [ps]: its start and end (under BookSim2's sampling, while
    /// `window_open`, the end is provisional: see [`window`]).
    pub(crate) ms: Time,
    pub(crate) me: Time,
    /// Counts at or past this instant are kept aside ([`window::Deferred`]): the
    /// window's provisional end while it is open, `Time::MAX` otherwise.
    pub(crate) defer_at: Time,
    /// BookSim2's sampling has not yet decided the window's end.
    pub(crate) window_open: bool,
    /// Under BookSim2's sampling, the sample period, whose `1/n_batches` parts are the
    /// sub-batches `c.batches` holds during the run; 0: the batches split the window.
    pub(crate) sub_period: Time,
    pub(crate) n_batches: usize,
    pub(crate) deferred: Vec<window::Deferred>,
    pub(crate) c: Counters,
    pub(crate) check: bool,
    /// A batch (`Process::Batch`): the run ends when its packets are through.
    pub(crate) batch: bool,
    /// A batch's window (`Process::Batch::window`; 0: none), and the hosts a delivery just
    /// let go on, for the engine to wake, with when.
    pub(crate) window: u32,
    pub(crate) released: Vec<(u32, Time)>,
    /// Apply equal-time events and visit components in reverse order (a test of the claim
    /// that results do not depend on that order).
    pub reverse_order: bool,
    /// Stop at the next progress report once Ctrl-C was pressed ([`crate::interrupt`]),
    /// with the window cut there (`RunOutcome::interrupted`). Off unless asked for, so that
    /// a reproduction's runs never end early.
    pub interruptible: bool,
    /// Stop, as Ctrl-C does, once this is set (a sweep's point past a saturated one).
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// Tests only: off, a lone head's output is allocated in the allocation phase like any
    /// other (see `route_head`); the results are the same.
    #[cfg(feature = "checked")]
    pub(crate) lone_grant: bool,
    scratch_events: Vec<u64>,
    /// Where the run's counts end [ps]: flits a train has announced or committed beyond
    /// this instant are not counted, exactly as the flit-by-flit path would not have got
    /// to them.
    pub(crate) end: Time,
    /// The instant `end` itself was not processed (the watchdog stops before it): what a
    /// train placed at it is not counted either.
    pub(crate) end_open: bool,
    /// An error found where it could not be returned at once (reported at the instant's end).
    pub(crate) failed: Option<Box<SimError>>,
    /// What to tell the agent at the end of this instant.
    pub(crate) notes: Vec<(agent::Note, Option<agent::Delivery>)>,
    /// Timer tokens by slot, and free slots.
    pub(crate) tokens: Vec<u64>,
    pub(crate) free_tokens: Vec<u32>,
    /// The agent asked to end the run.
    pub(crate) stop: bool,
    /// The switch being evaluated has been through its first send phase of this instant:
    /// a train's tail due now has passed, as it would have flit by flit.
    pub(crate) sent_phase: bool,
    /// The switch being evaluated allocates separably: an output VC whose hold ends at this
    /// instant is free before its allocation, not after a first send phase.
    pub(crate) release_due: bool,
    /// The last switch-allocation rotation worked out: at this instant, for this period and
    /// this many ports, the output to start at, `now / period` modulo the ports (switches
    /// alike share it within an instant).
    pub(crate) sa_memo: (Time, Time, u32, u32),
    /// Per-host costs (the spec's `host` unless set per host).
    pub(crate) host_params: Vec<HostParams>,
    /// Token state per channel ([`crate::link::ds`]).
    pub(crate) tok: Vec<crate::link::ds::TokChan>,
    /// Token channels with a token due at this instant.
    pub(crate) fct_due: Vec<u32>,
    /// BookSim2's sampling, in the run that decides the window ([`Sim::run`]).
    pub(crate) sampler: Option<Box<crate::stats::sampling::Sampler>>,
    /// When `sampler` next looks [ps] (`Time::MAX`: never).
    pub(crate) next_sample: Time,
    /// How BookSim2's sampling decided this run's window.
    pub(crate) sampling: Option<crate::stats::sampling::SamplingOutcome>,
}

impl<'a> Sim<'a> {
    /// Gives host `h` its own send and receive costs (before the run).
    pub fn set_host_params(&mut self, h: u32, hp: HostParams) {
        self.host_params[h as usize] = hp;
    }

    /// Gives host `h` a memory of `bytes` for received packets: a packet is admitted when
    /// its head arrives only if the memory can hold it whole, else it waits in the ejection
    /// buffer and the worm behind it blocks (nothing is dropped). A packet's bytes are
    /// reserved at admission; the bytes of each packet the host sends are freed when that
    /// packet's tail has left. Models a store-and-forward processor (ATOMIC's Mosaic nodes).
    pub fn set_host_memory(&mut self, h: u32, bytes: u64) {
        self.hosts[h as usize].mem_cap = bytes;
        let ej = self.fab.ejection_channel(h).0;
        // Arrivals must be seen one event at a time: admission depends on the memory then.
        self.chans[ej as usize].shortcut = false;
    }

    /// Cuts channel `c` from time `at` on [ps]: flits that would start on it then or later
    /// are lost. A packet caught part way across is cut in two: the first flit sent after
    /// the failure reaches the receiver as a forced tail (the receiving chip ends the
    /// packet), so the part already across finishes its way and is discarded at its
    /// destination as truncated; the rest of the packet drains into the cut and is lost
    /// there, freeing every channel it held. Both parts count as one lost packet.
    pub fn fail_channel_at(&mut self, c: u32, at: Time) {
        if self.fail_at.is_empty() {
            self.fail_at = vec![Time::MAX; self.chans.len()];
        }
        let f = &mut self.fail_at[c as usize];
        *f = (*f).min(at);
    }

    /// Fails node `n` at `at`: every channel into or out of it (a node's processor, if it
    /// is a host attached to the node, must be stopped by its agent).
    pub fn fail_node_at(&mut self, n: u32, at: Time) {
        let chans: Vec<u32> = (0..self.chans.len() as u32)
            .filter(|&c| {
                let ch = &self.fab.channels[c as usize];
                ch.src.0 == n || ch.dst.0 == n
            })
            .collect();
        for c in chans {
            self.fail_channel_at(c, at);
        }
    }

    /// Packets cut or swallowed by failed channels so far.
    pub fn packets_lost(&self) -> u64 {
        self.c.packets_lost
    }

    /// Packets hosts have started to inject so far.
    pub fn packets_injected(&self) -> u64 {
        self.c.packets_injected
    }

    /// Flits moved over channels so far (a train's flits counted as it is sent).
    pub fn flit_hops(&self) -> u64 {
        self.c.flit_hops
    }

    /// How many flits starting now on channel `c` may go as one train before its failure
    /// (which the flit-by-flit path would meet between them).
    #[inline]
    pub(crate) fn fail_limit(&self, c: u32) -> u32 {
        let Some(&fail_at) = self.fail_at.get(c as usize) else {
            return MAX_TRAIN;
        };
        if fail_at == Time::MAX || fail_at <= self.now {
            return MAX_TRAIN;
        }
        self.tm(c).send_pace().count_before(self.now, fail_at, MAX_TRAIN)
    }

    /// The end of one part of packet `pid`: frees its slot when no part is left.
    #[inline]
    pub(crate) fn part_done(&mut self, pid: u32) {
        let p = &mut self.pkts[pid as usize];
        if p.parts > 0 {
            p.parts -= 1;
        } else {
            self.free_pkts.push(pid);
        }
    }

    /// Allocates a packet slot.
    #[inline]
    pub(crate) fn alloc_pkt(&mut self) -> Res<u32> {
        if let Some(p) = self.free_pkts.pop() {
            return Ok(p);
        }
        let p = self.pkts.len() as u32;
        if p > PID {
            return Err(Box::new(SimError::TooLarge(
                "more than 2^30 packets in flight".into(),
            )));
        }
        self.pkts.push(Pkt::default());
        if self.route_stride > 0 {
            self.route_store.resize(self.pkts.len() * self.route_stride, 0);
        }
        Ok(p)
    }
}

/// How a run ended.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The measured packets did not all arrive within the drain limit.
    pub drain_failed: bool,
    /// The network stopped moving: the waiting cycle of channels.
    pub deadlock: Option<watchdog::Deadlock>,
    /// Wall-clock time of the run [s].
    pub wall_s: f64,
    /// Ctrl-C stopped the run ([`Sim::interruptible`]) at the instant it had reached.
    pub interrupted: bool,
    /// It ran on the express engine (else the general engine: the run needed a feature the
    /// express engine lacks, `Sim::express_refused`, or the system would not give the
    /// address space of its records, `recs`).
    pub express: bool,
}

/// The buffers' `n` flit slots, zeroed, and the number of slots before the first (0–3: so
/// that it starts a cache line, as `Slot`'s own alignment does not ensure), or an error
/// (not an abort) if the machine cannot allocate them. The memory comes zeroed from the
/// system (fresh pages), so a large buffer costs memory only as far as flits ever fill it;
/// where the system gives the address space, it is laid out for the express engine's
/// unchecked access (`recs`).
fn ring_of(n: usize) -> Result<(recs::Store<Slot>, u32), SimError> {
    let too_large = || {
        SimError::TooLarge(format!(
            "the buffers need {:.1} GB ({n} flit slots of {} bytes), more than this machine can allocate",
            (n as f64 * std::mem::size_of::<Slot>() as f64) / 1e9,
            std::mem::size_of::<Slot>()
        ))
    };
    const SLOTS_PER_LINE: usize = 64 / std::mem::size_of::<Slot>();
    let n = n.checked_add(SLOTS_PER_LINE - 1).ok_or_else(too_large)?;
    let ring = recs::Store::<Slot>::zeroed(n).ok_or_else(too_large)?;
    let pad = ring.as_ptr().align_offset(64).min(SLOTS_PER_LINE - 1) as u32;
    Ok((ring, pad))
}

#[inline]
pub(crate) fn set_bit(bits: &mut Arr<u64>, base: usize, i: usize) {
    bits[base + (i >> 6)] |= 1 << (i & 63);
}

#[inline]
pub(crate) fn clear_bit(bits: &mut Arr<u64>, base: usize, i: usize) {
    bits[base + (i >> 6)] &= !(1 << (i & 63));
}

#[inline]
pub(crate) fn any_bit(bits: &Arr<u64>, base: usize, words: usize) -> bool {
    if bits[base] != 0 {
        return true;
    }
    let mut w = 1;
    while w < words {
        if bits[base + w] != 0 {
            return true;
        }
        w += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The in-window channel time of a train is the sum of its flits' own overlaps with
        /// the window.
        #[test]
        fn window_busy_is_the_flits_overlap_with_the_window(
            ms in 0u64..200,
            len in 1u64..200,
            now in 0u64..400,
            k in 1u32..=MAX_TRAIN,
            ft in 1u64..20,
            last in 1u64..20,
        ) {
            let me = ms + len;
            let by_flit: Time = (0..k as Time)
                .map(|j| (now + j * ft, if j + 1 == k as Time { last } else { ft }))
                .map(|(t, d)| (t + d).min(me).saturating_sub(t.max(ms)))
                .sum();
            proptest::prop_assert_eq!(window_busy((ms, me), now, k, ft, last), by_flit);
        }
    }
}

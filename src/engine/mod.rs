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

pub mod agent;
pub(crate) mod arr;
pub(crate) mod express;
pub mod queue;
pub mod result;
pub mod watchdog;

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

/// One channel's hot state: its transmitter and timing.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Chan {
    /// End of the transmission in progress [ps].
    pub tx_busy: Time,
    /// Time of the pending wake-up of the sender for this channel [ps].
    pub txfree_at: Time,
    /// Time-in-use during the measurement window [ps].
    pub busy: Time,
    /// Start of the last train sent [ps] and its length (to count, at the end of a run,
    /// flits whose start lies beyond it).
    pub tr_start: Time,
    /// When the first flit of the last train sent with an arrival event lands [ps]: until
    /// then flits are on the wire, and a later train must not overtake them.
    pub landing: Time,
    pub vc_base: u32,
    /// The channel's timing profile: index into `Sim::timing`.
    pub prof: u32,
    /// The sending node and its port.
    pub src: u32,
    pub src_port: u16,
    pub tr_k: u8,
    pub nvc: u8,
    pub rr: u8,
    pub class: u8,
    /// A packet is part way across: its head has been sent, its tail not yet.
    pub mid: bool,
    pub credit: bool,
    /// Token flow control ([`crate::link::ds`]): grants return by tokens on the reverse
    /// channel.
    pub tokens: bool,
    /// A head train to an idle, empty VC may skip its arrival event (see `send_train`):
    /// trains are on, the channel has credit flow control and no tokens, and its receiver
    /// is no store-and-forward switch.
    pub shortcut: bool,
}

const _: () = assert!(
    std::mem::size_of::<Chan>() == 64,
    "a channel's state is one cache line"
);

/// What channels with the same unit times, propagation delay, credit delay and receiver
/// share: durations and the event classes for them. A channel's dynamic state fits one
/// cache line ([`Chan`]); this table is small and stays in cache.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    pub flit_time: Time,
    pub tail_time: Time,
    /// Credit return delay [ps] (0 without credit flow control).
    pub credit_delay: Time,
    pub latency: Time,
    pub arr_data: Class,
    pub arr_tail: Class,
    pub tx_data: Class,
    pub tx_tail: Class,
    pub credit_class: Class,
    /// Classes for "the head lands and its router delay passes": flit (tail) time +
    /// propagation + the receiving switch's router delay.
    pub head_route: Class,
    pub head_route_tail: Class,
    /// The receiving switch's router delay (0 into a host).
    pub router_delay: Time,
    /// First of `MAX_TRAIN - 1` classes for `j · flit_time`, j = 1, 2, …
    pub train_class: u32,
    /// The link deletes the first header symbol of each packet.
    pub delete_header: bool,
    /// Flits go one at a time: tokens may come between them on this channel.
    pub no_trains: bool,
    /// The clock a clocked channel sends on ([`crate::fabric::LinkParams::clock`]).
    pub clock: Option<Clock>,
}

impl Timing {
    /// The pace of flits sent back to back on this channel from an instant its sender may
    /// send at (on a clocked channel, an edge of its clock).
    #[inline(always)]
    pub(crate) fn send_pace(&self) -> Pace {
        Pace {
            unit: self.flit_time,
            clock: self.clock,
            offset: 0,
        }
    }

    /// The pace at which flits sent back to back on this channel land.
    #[inline(always)]
    pub(crate) fn land_pace(&self) -> Pace {
        Pace {
            unit: self.flit_time,
            clock: self.clock,
            offset: self.latency,
        }
    }

    /// The first instant at or after `t` a flit may start on this channel: `t`, or on a
    /// clocked channel the next edge of its clock.
    #[inline(always)]
    pub(crate) fn next_start(&self, t: Time) -> Time {
        match &self.clock {
            None => t,
            Some(c) => c.edge(c.edge_at_or_after(t)),
        }
    }
}

/// When the flits of a train start or land: flit j `j · unit` after flit 0, or on a clocked
/// channel `j` edges of its clock after it (flit 0 at an edge, plus `offset` for landings:
/// the channel's propagation delay). Flit by flit and as trains, every time of a clocked
/// channel's flits comes from here, so that both paths place them on the same edges.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pace {
    pub unit: Time,
    pub clock: Option<Clock>,
    pub offset: Time,
}

impl Pace {
    /// One flit every `unit`, from any instant.
    #[inline(always)]
    pub(crate) fn every(unit: Time) -> Pace {
        Pace {
            unit,
            clock: None,
            offset: 0,
        }
    }

    /// The time of flit `j` of a train whose flit 0 is at `t0`.
    #[inline(always)]
    pub(crate) fn at(&self, t0: Time, j: u32) -> Time {
        match &self.clock {
            None => t0 + j as Time * self.unit,
            Some(c) => clocked_at(c, t0, j, self.offset),
        }
    }

    /// How many flits of a train whose flit 0 is at `t0` come before `h` (at least one,
    /// at most `max`).
    #[inline(always)]
    pub(crate) fn count_before(&self, t0: Time, h: Time, max: u32) -> u32 {
        let span = h.saturating_sub(t0);
        match &self.clock {
            None if span >= max as Time * self.unit => max,
            None => span.div_ceil(self.unit).max(1) as u32,
            Some(c) => {
                let n = c
                    .edge_at_or_after(h.saturating_sub(self.offset))
                    .saturating_sub(c.edge_at_or_after(t0 - self.offset));
                n.clamp(1, max as u64) as u32
            }
        }
    }
}

/// [`Pace::at`] on a clock: `j` edges after `t0 - offset` (an edge), plus `offset`.
#[inline(never)]
fn clocked_at(c: &Clock, t0: Time, j: u32, offset: Time) -> Time {
    c.edge(c.edge_at_or_after(t0 - offset) + j as u64) + offset
}

/// One virtual channel of one channel: the receiver's input buffer and routing state, and
/// the sender's credits and owner, in one cache line (a flit's sender and receiver touch it
/// moments apart).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Vc {
    // As the receiver's input VC: a ring of flits in `flits[buf..buf + mask + 1]`.
    pub buf: u32,
    pub mask: u32,
    pub head: u32,
    pub len: u32,
    /// The output VC the front packet holds.
    pub fwd: u32,
    /// Index among the receiving switch's input VCs.
    pub local: u32,
    /// Receiving node.
    pub node: u32,
    pub chan: u32,
    // As the sender's output VC.
    /// Credits the sender holds, not counting returned credits not yet collected.
    pub credits: u32,
    /// The input VC (at the sender) whose packet holds this VC, `NONE`, or `HELD`/`HELD_EV`
    /// while the tail of a train passes.
    pub owner: u32,
    /// Slots `cr_head..head` hold flits that have left, each with the time its credit
    /// reaches the sender; the sender collects them from `cr_head` as they land.
    pub cr_head: u32,
    /// The routed head's admissible outputs: one port (`want_port`, or `u16::MAX` when the
    /// set is in `Sim::wants`) and VCs `want_lo..=want_hi`.
    pub want_port: u16,
    pub want_lo: u8,
    pub want_hi: u8,
    /// No credit of slots `cr_head..head` lands later than this [ps] (`Time::MAX` for token
    /// flow control, whose slots wait for a token): once it has passed, the sender collects
    /// them all without reading the slots, which are often a cache line it would not
    /// otherwise touch.
    pub cr_last: Time,
    pub state: u8,
    pub vc: u8,
    /// `F_CWAIT`, `F_FROM_HOST`, `F_HEAD_NEXT`.
    pub flags: u8,
    /// Header flits stripped at the grant before they reached this buffer: the next this
    /// many arriving (never a tail) are removed as they land.
    pub strip_pending: u8,
    /// Output port the front packet holds.
    pub fwd_port: u16,
    /// Receiving port.
    pub in_port: u16,
}

/// One slot of a VC ring.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Slot {
    /// Arrival time of the buffered flit, or when the credit of the flit that left lands.
    pub time: Time,
    pub flit: u32,
    /// The packet's destination host (routing reads it from the head's slot, so the packet
    /// record is not touched on most hops).
    pub dst: u32,
}

// Four slots to a cache line (`ring_of` aligns the rings to lines).
const _: () = assert!(std::mem::size_of::<Slot>() == 16);

/// One port of a node: its output channel and allocation state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Port {
    /// The channel leaving this port, or `NONE`.
    pub out: u32,
    /// Local input VC last granted this output (round robin).
    pub va_rr: u32,
    /// When the crossbar input of this port is free again [ps].
    pub xbar_free: Time,
    /// The output channel's first VC, its VCs, whether it has credit flow control and
    /// deletes headers (copied from the channel: allocation reads them from here, next to
    /// the port's other state, without touching the channel).
    pub vc_base: u32,
    pub nvc: u8,
    pub credit: bool,
    pub delete_header: bool,
}

/// One switch's allocation state and parameters, in one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Sw {
    pub router_delay: Time,
    /// The switch-allocation starting output rotates once per this period [ps] (the
    /// shortest flit time of its outputs).
    pub sa_period: Time,
    pub in_base: u32,
    pub n_in: u32,
    pub words: u32,
    pub port_base: u32,
    pub n_ports: u32,
    pub pwords: u32,
    pub req_base: u32,
    pub bits_base: u32,
    pub speedup: u32,
    pub route_class: Class,
    pub mode: SwitchMode,
    pub selection: Selection,
    pub arbitration: Arbitration,
    /// Some input port has more VCs than the crossbar speed-up: inputs are a shared
    /// resource in switch allocation.
    pub xbar: bool,
    /// Output VCs are given only once the buffer downstream is empty
    /// ([`crate::fabric::VcRelease::TailCredit`]).
    pub tail_credit: bool,
    /// A head gets the free VC after the one its input VC was last given
    /// ([`crate::fabric::VcChoice::RoundRobin`]), not the lowest.
    pub vc_rr: bool,
}

const _: () = assert!(
    std::mem::size_of::<Sw>() == 64,
    "a switch's state is one cache line"
);

impl Sw {
    /// Heads to route after the first switch allocation of this instant (heads that came to
    /// the front as a tail left, with no router delay, as flit by flit): their bits follow
    /// the request words.
    #[inline(always)]
    pub fn late_base(&self) -> u32 {
        self.req_base + self.n_ports * self.words
    }

    /// How long a flit of unit time `u` holds its crossbar input (the crossbar runs
    /// `speedup` times the channel rate; no division for the usual speed-up 1).
    #[inline(always)]
    pub fn xbar_time(&self, u: Time) -> Time {
        if self.speedup == 1 {
            u
        } else {
            u / self.speedup as Time
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct HostState {
    pub node: u32,
    pub inj: u32,
    pub active: bool,
    pub arrivals: Arrivals,
    pub dst_rng: Stream,
    pub cpu_free: Time,
    pub recv_free: Time,
    pub cur: u32,
    pub cur_vc: u32,
    /// The injection VC (0-based) the last packet started on, `NONE` before the first; read
    /// only where VCs are chosen round robin ([`Self::vc_rr`]).
    pub last_vc: u32,
    /// Packets start on the VC after the last one's ([`crate::fabric::VcChoice::RoundRobin`]).
    pub vc_rr: bool,
    pub cur_sent: u32,
    /// Flits of the current packet this host sends (header stripping downstream shortens
    /// the packet, not what the host puts on its channel).
    pub cur_len: u32,
    pub gen_at: Time,
    /// Credits a packet needs on a VC of the injection channel before it starts: 1, the
    /// packet's length where the first switch needs room for all of it (cut-through,
    /// store-and-forward, [`NEED_LEN`]), or the VC's whole buffer ([`NEED_ALL`]).
    pub need: u32,
    /// Messages an agent queued here: when each was handed over, and the message.
    pub outbox: std::collections::VecDeque<(Time, agent::Message, Option<agent::DataPace>)>,
    /// The packet being sent gets its data at this pace (an agent's [`agent::DataPace`],
    /// its `from` counted in the packet as sent: a route in front included).
    pub avail: Option<agent::DataPace>,
    /// Trains accepted whose flits may still be landing: first arrival, length, ends with a
    /// tail (for the end-of-run count; older ones are dropped as they complete).
    pub rx_trains: std::collections::VecDeque<(Time, u32, bool)>,
    /// Memory for received packets [bytes] (`u64::MAX`: unbounded); see
    /// [`Sim::set_host_memory`].
    pub mem_cap: u64,
    pub mem_used: u64,
    /// Bytes to free when the packet being sent has left, and when [ps].
    pub mem_release: Option<(Time, u64)>,
    /// The front packet of the ejection buffer waits for memory.
    pub gated: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pkt {
    pub src: u32,
    pub dst: u32,
    pub len: u32,
    pub created: Time,
    pub head_inj: Time,
    pub head_dlv: Time,
    /// Hops taken, but for those still counted in the head's slot ([`DST_BITS`]).
    pub hops: u16,
    pub route_pos: u16,
    pub route_len: u16,
    pub measured: bool,
    pub seen: u32,
    /// An agent's tag ([`agent::NO_TAG`] for synthetic traffic).
    pub tag: u64,
    /// A failed channel cut the packet: the part beyond the cut ends with a forced tail.
    pub truncated: bool,
    /// Parts of the packet still moving, less one (a cut makes two); the slot is freed
    /// when the last one ends.
    pub parts: u8,
}

/// What a run counts as it goes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub flit_hops: u64,
    /// Flits that reached the first switch.
    pub flits_injected: u64,
    /// Flits hosts have put on their channels (including those still on the wire).
    pub flits_sent: u64,
    /// Header flits removed on the way (header deletion, stripped routes).
    pub flits_stripped: u64,
    pub flits_delivered: u64,
    /// Flits sent into a failed channel and lost there.
    pub flits_dropped: u64,
    /// Packets cut or swallowed by a failed channel.
    pub packets_lost: u64,
    pub packets_injected: u64,
    pub packets_delivered: u64,
    pub events: u64,
    /// Interleaved trains sent (`send_pair`).
    pub pair_trains: u64,
    /// Trains of more than one flit sent while another VC of their input channel held or
    /// waited for an output (the crossbar input's turns were known ahead: `xbar_turn`).
    pub turn_trains: u64,
    /// Outputs allocated to a lone head as it was routed (`allocate_alone`; counted in the
    /// tests' builds only, those with every access checked).
    #[cfg(feature = "checked")]
    pub lone_grants: u64,
    pub injected_measured: u64,
    pub offered_flits: u64,
    pub delivered_measured: u64,
    pub total_measured: u64,
    pub hops_measured: u64,
    pub flits_window: Vec<u64>,
    pub batches: Vec<Batch>,
    pub packet_lat: LatencyAcc,
    pub network_lat: LatencyAcc,
}

/// Progress of a run, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: Time,
    /// End of the measurement window [ps].
    pub window_end: Time,
    pub events: u64,
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
    pub(crate) ring: Arr<Slot>,
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
    /// After a tail starts on a switch's output VC, how long before another packet's head
    /// may start on it [ps] (0: once the tail has passed). BookSim2 gives a freed output VC
    /// to a waiting head in the VC-allocation stage of the next cycle, and the head goes to
    /// switch allocation after it (`iq_router.cpp`: the VC is freed in `_SWAllocUpdate`,
    /// after that cycle's `_VCAllocEvaluate`).
    pub(crate) vc_reuse: Time,
    /// Switches whose inputs share the crossbar allocate it with this each cycle.
    pub(crate) sw_allocator: SwAllocator,
    /// The separable allocators' state ([`crate::fabric::SwAllocator`]; empty for the
    /// greedy one).
    pub(crate) sep: Separable,
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
    pub(crate) sw_rng: Vec<Stream>,
    pub(crate) hosts: Vec<HostState>,
    pub(crate) node_host: Vec<u32>,
    pub(crate) pkts: Arr<Pkt>,
    pub(crate) free_pkts: Vec<u32>,
    pub(crate) route_store: Vec<u16>,
    pub(crate) route_stride: usize,
    /// Some channel has a routing label (up*/down*): routing steps need the input's.
    pub(crate) uses_class: bool,
    /// The routing reads or rewrites header symbols (`Routing::uses_header`), kept here for
    /// the grant, which asks on every hop.
    pub(crate) header_ops: bool,
    pub(crate) scratch_route: Vec<u16>,
    pub(crate) dirty: Vec<u32>,
    pub(crate) dirty_stamp: Vec<u64>,
    pub(crate) step: u64,
    pub(crate) ms: Time,
    pub(crate) me: Time,
    pub(crate) c: Counters,
    pub(crate) check: bool,
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
    /// Lays the spec out in arrays. Fails only if the model exceeds the engine's id widths.
    pub fn new(spec: &'a Spec) -> Result<Sim<'a>, SimError> {
        let fab = &spec.fabric;
        let p = &spec.params;
        let mut q = EventQueue::new();
        let total_vcs: u64 = fab.channels.iter().map(|c| c.params.vcs as u64).sum();
        if total_vcs > MAX_ID as u64
            || fab.channels.len() > MAX_ID as usize
            || fab.nodes.len() > MAX_ID as usize
        {
            return Err(SimError::TooLarge(format!(
                "{} channels with {} virtual channels exceed the engine's limit of {} ids",
                fab.channels.len(),
                total_vcs,
                MAX_ID
            )));
        }
        let routing = &spec.routing;
        let tok = crate::link::ds::token_channels(fab)?;
        let mut chans = Vec::with_capacity(fab.channels.len());
        let mut vcs = Vec::with_capacity(total_vcs as usize);
        let mut caps = Vec::with_capacity(total_vcs as usize);
        let mut train_classes: Vec<(Time, u32)> = Vec::new();
        let mut train_class_ids: Vec<Class> = Vec::new();
        let mut timing: Vec<Timing> = Vec::new();
        let mut prof_of = std::collections::HashMap::new();
        let mut flit_store = 0u32;
        for (ci, ch) in fab.channels.iter().enumerate() {
            let lp = &ch.params;
            let credit_delay = lp.flow.credit_delay();
            let to_switch = fab.is_switch(ch.dst);
            let router_delay = to_switch.then(|| fab.switch_params[ch.dst.idx()].router_delay);
            let no_trains = tok[ci].on || ch.reverse.is_some_and(|r| tok[r.idx()].on);
            let key = (
                lp.flit_time,
                lp.tail_time,
                lp.latency,
                credit_delay,
                router_delay,
                lp.delete_header,
                no_trains,
                lp.clock,
            );
            let prof = *prof_of.entry(key).or_insert_with(|| {
                let arr_data = q.class(lp.flit_time + lp.latency);
                let arr_tail = q.class(lp.tail_time + lp.latency);
                let train_class = match train_classes.iter().position(|&(ft, _)| ft == lp.flit_time) {
                    Some(x) => train_classes[x].1,
                    None => {
                        let base = train_class_ids.len() as u32;
                        for j in 1..MAX_TRAIN as Time {
                            train_class_ids.push(q.class(j * lp.flit_time));
                        }
                        train_classes.push((lp.flit_time, base));
                        base
                    }
                };
                let (head_route, head_route_tail) = match router_delay {
                    Some(r) => (
                        q.class(lp.flit_time + lp.latency + r),
                        q.class(lp.tail_time + lp.latency + r),
                    ),
                    None => (arr_data, arr_tail),
                };
                timing.push(Timing {
                    flit_time: lp.flit_time,
                    tail_time: lp.tail_time,
                    credit_delay: credit_delay.unwrap_or(0),
                    latency: lp.latency,
                    arr_data,
                    arr_tail,
                    tx_data: q.class(lp.flit_time),
                    tx_tail: q.class(lp.tail_time),
                    credit_class: q.class(credit_delay.unwrap_or(1).max(1)),
                    head_route,
                    head_route_tail,
                    router_delay: router_delay.unwrap_or(0),
                    train_class,
                    delete_header: lp.delete_header,
                    no_trains,
                    clock: lp.clock,
                });
                timing.len() as u32 - 1
            });
            let shortcut = !to_switch || fab.switch_params[ch.dst.idx()].mode != SwitchMode::StoreAndForward;
            chans.push(Chan {
                tx_busy: 0,
                txfree_at: Time::MAX,
                busy: 0,
                tr_start: 0,
                landing: 0,
                vc_base: vcs.len() as u32,
                prof,
                src: ch.src.0,
                src_port: ch.src_port,
                tr_k: 0,
                nvc: lp.vcs,
                rr: lp.vcs - 1,
                class: routing.channel_class(ci),
                mid: false,
                credit: credit_delay.is_some(),
                tokens: tok[ci].on,
                shortcut: shortcut && !tok[ci].on && credit_delay.is_some() && p.trains,
            });
            let to_host = !fab.is_switch(ch.dst);
            for v in 0..lp.vcs {
                // Slots hold buffered flits and, beside them, credits on their way back.
                // Hosts consume flits as they arrive but still return credits.
                let storage = if to_host && credit_delay.is_none() {
                    0
                } else {
                    // (Config checks keep buffers far below 2^31; a fabric built in code
                    // might not.)
                    lp.buffer.checked_next_power_of_two().ok_or_else(|| {
                        SimError::TooLarge(format!(
                            "a buffer of {} flits is beyond the engine's limit of 2^31",
                            lp.buffer
                        ))
                    })?
                };
                // A ring of up to four slots never straddles two cache lines, nor does a
                // four-slot group of a longer one (once the store itself is aligned, see
                // `ring_of`): a train of four flits is one line, read and written.
                let align = storage.clamp(1, 4);
                flit_store = flit_store
                    .checked_next_multiple_of(align)
                    .ok_or_else(|| SimError::TooLarge("buffers exceed 2^32 flit slots in total".into()))?;
                vcs.push(Vc {
                    buf: flit_store,
                    mask: storage.saturating_sub(1),
                    head: 0,
                    len: 0,
                    fwd: NONE,
                    local: NONE,
                    node: ch.dst.0,
                    chan: ci as u32,
                    credits: if credit_delay.is_some() {
                        lp.buffer
                    } else {
                        u32::MAX
                    },
                    owner: NONE,
                    cr_head: 0,
                    want_port: 0,
                    want_lo: 0,
                    want_hi: 0,
                    cr_last: if tok[ci].on { Time::MAX } else { 0 },
                    state: IDLE,
                    vc: v,
                    flags: if fab.is_switch(ch.src) { 0 } else { F_FROM_HOST }
                        | if tok[ci].on { F_TOKENS } else { 0 }
                        | if v + 1 == lp.vcs { F_LAST_VC } else { 0 },
                    strip_pending: 0,
                    fwd_port: 0,
                    in_port: ch.dst_port,
                });
                caps.push(lp.buffer);
                flit_store = flit_store
                    .checked_add(storage)
                    .ok_or_else(|| SimError::TooLarge("buffers exceed 2^32 flit slots in total".into()))?;
            }
        }
        // Ports of every node, flattened.
        let mut port_base = Vec::with_capacity(fab.nodes.len());
        let mut port_out = Vec::new();
        for (n, node) in fab.nodes.iter().enumerate() {
            port_base.push(port_out.len() as u32);
            for pt in 0..node.ports as usize {
                port_out.push(fab.out_chan[n][pt].map_or(NONE, |c| c.0));
            }
        }
        let mut sws = Vec::with_capacity(fab.switches as usize);
        let mut sw_in = Vec::new();
        let mut bits_len = 0u32;
        let mut pend_words = 1u32;
        let mut sw_rng = Vec::new();
        #[allow(clippy::needless_range_loop)] // s indexes five parallel per-node tables
        for s in 0..fab.switches as usize {
            let node = &fab.nodes[s];
            if node.ports as usize > crate::fabric::MAX_PORTS {
                return Err(SimError::TooLarge(format!(
                    "switch {} has {} ports; reef routes switches of up to {} ports",
                    node.name,
                    node.ports,
                    crate::fabric::MAX_PORTS
                )));
            }
            let in_base = sw_in.len() as u32;
            for c in fab.in_chan[s].iter().flatten() {
                let base = chans[c.idx()].vc_base;
                for v in 0..chans[c.idx()].nvc as u32 {
                    vcs[(base + v) as usize].local = sw_in.len() as u32 - in_base;
                    sw_in.push(base + v);
                }
            }
            let n_in = sw_in.len() as u32 - in_base;
            let words = n_in.div_ceil(64).max(1);
            let n_ports = node.ports as u32;
            let pwords = n_ports.div_ceil(64).max(1);
            let sp = fab.switch_params[s];
            let route_class = q.class(sp.router_delay.max(1));
            let max_in_vcs = fab.in_chan[s]
                .iter()
                .flatten()
                .map(|c| fab.channels[c.idx()].params.vcs as u32)
                .max()
                .unwrap_or(1);
            let xbar = max_in_vcs > sp.speedup.max(1);
            sws.push(Sw {
                in_base,
                n_in,
                words,
                port_base: port_base[s],
                n_ports,
                pwords,
                // Request words follow the switch's bit sets in one block.
                req_base: bits_len + words + 2 * pwords,
                bits_base: bits_len,
                router_delay: sp.router_delay,
                route_class,
                mode: sp.mode,
                selection: sp.selection,
                arbitration: sp.arbitration,
                speedup: sp.speedup.max(1),
                sa_period: fab.out_chan[s]
                    .iter()
                    .flatten()
                    .map(|c| fab.channels[c.idx()].params.flit_time)
                    .min()
                    .unwrap_or(1)
                    .max(1),
                xbar,
                tail_credit: sp.release == VcRelease::TailCredit,
                vc_rr: fab.vc_choice == VcChoice::RoundRobin,
            });
            // Only trains that could meet competition look at the heads being routed.
            let one_vc_out = fab.out_chan[s]
                .iter()
                .flatten()
                .all(|c| fab.channels[c.idx()].params.vcs == 1);
            if one_vc_out && !xbar {
                for &x in &sw_in[in_base as usize..] {
                    vcs[x as usize].flags |= F_UNWATCHED;
                }
            }
            bits_len = (2 * words + 2 * pwords + n_ports * words)
                .checked_add(bits_len)
                .filter(|&b| b <= 1 << 26)
                .ok_or_else(|| {
                    SimError::TooLarge(format!(
                        "the switches' allocation state exceeds the engine's limit of 2^32 bits (at switch {})",
                        node.name
                    ))
                })?;
            pend_words = pend_words.max(words);
            sw_rng.push(Stream::new(p.seed, Purpose::Switch, s as u64));
        }
        // A clocked channel's flits are placed on its clock's edges by the paths that send a
        // packet's flits one after another; those that interleave flits of several packets
        // (VCs, a crossbar input shared by several VCs, tokens) count in flit times.
        for (ci, ch) in fab.channels.iter().enumerate() {
            let lp = &ch.params;
            if lp.clock.is_none() {
                continue;
            }
            let bad = if lp.vcs != 1 {
                Some("has more than one virtual channel")
            } else if lp.tail_time != lp.flit_time {
                Some("has a tail of its own length")
            } else if tok[ci].on {
                Some("has token flow control")
            } else if fab.is_switch(ch.src) && sws[ch.src.idx()].xbar {
                Some("leaves a switch whose inputs share the crossbar")
            } else {
                None
            };
            if let Some(why) = bad {
                return Err(SimError::Invalid(format!(
                    "{}: a channel whose flit time is not a whole number of picoseconds (it sends on a \
                     clock's edges) {why}; reef does not model that",
                    fab.channel_name(crate::fabric::ChannelId(ci as u32))
                )));
            }
        }
        // A head that lands behind a train still leaving starts routing when that train's
        // tail has passed, j flit times from now, plus the router delay: classes for those
        // delays let its event skip the heap (when there are few such combinations).
        let mut delays: Vec<Time> = sws.iter().map(|s| s.router_delay).filter(|&r| r > 0).collect();
        delays.sort_unstable();
        delays.dedup();
        if delays.len() * train_classes.len() <= 4 {
            for &r in &delays {
                for &(ft, _) in &train_classes {
                    for j in 1..=MAX_TRAIN as Time {
                        q.class(r + j * ft);
                    }
                }
            }
        }
        let wl: &Workload = &spec.workload;
        let n = fab.num_hosts() as u32;
        let mut hosts = Vec::with_capacity(n as usize);
        let mut node_host = vec![NONE; fab.nodes.len()];
        for h in 0..n {
            let node = fab.hosts[h as usize].0;
            node_host[node as usize] = h;
            let inj = fab.injection_channel(h).0;
            let first = fab.channels[inj as usize].dst;
            let need = match fab.is_switch(first).then(|| fab.switch_params[first.idx()]) {
                Some(sp) if sp.release == VcRelease::TailCredit => NEED_ALL,
                Some(sp) if sp.mode != SwitchMode::Wormhole => NEED_LEN,
                _ => 1,
            };
            hosts.push(HostState {
                node,
                inj,
                active: wl.pattern.sends(h),
                arrivals: Arrivals::new(
                    &wl.process,
                    &wl.sizes,
                    Stream::new(p.seed, Purpose::Arrivals, h as u64),
                ),
                dst_rng: Stream::new(p.seed, Purpose::Destinations, h as u64),
                cpu_free: 0,
                recv_free: 0,
                cur: NONE,
                cur_vc: NONE,
                last_vc: NONE,
                vc_rr: fab.vc_choice == VcChoice::RoundRobin,
                cur_sent: 0,
                cur_len: 0,
                gen_at: Time::MAX,
                need,
                rx_trains: std::collections::VecDeque::new(),
                outbox: std::collections::VecDeque::new(),
                avail: None,
                mem_cap: u64::MAX,
                mem_used: 0,
                mem_release: None,
                gated: false,
            });
        }
        let sep = if fab.sw_allocator == SwAllocator::Greedy {
            Separable::default()
        } else {
            let max_ports = sws.iter().map(|w: &Sw| w.n_ports).max().unwrap_or(0);
            let smax = sws.iter().map(|w: &Sw| w.speedup).max().unwrap_or(1);
            Separable::new(port_out.len(), max_ports as usize, smax as usize)
        };
        let route_stride = routing.max_header().max(p.max_header);
        let nodes = fab.nodes.len();
        let wants = vec![Want::port(0, 1); vcs.len()];
        let batches = p.batches.max(1) as usize;
        let ports: Vec<Port> = port_out
            .iter()
            .map(|&out| {
                let ch = (out != NONE).then(|| &chans[out as usize]);
                Port {
                    out,
                    va_rr: NONE,
                    xbar_free: 0,
                    vc_base: ch.map_or(0, |c| c.vc_base),
                    nvc: ch.map_or(0, |c| c.nvc),
                    credit: ch.is_some_and(|c| c.credit),
                    delete_header: ch.is_some_and(|c| timing[c.prof as usize].delete_header),
                }
            })
            .collect();
        let uses_class = (0..fab.channels.len()).any(|c| routing.channel_class(c) != 0);
        let (ring, pad) = ring_of(flit_store as usize)?;
        for v in vcs.iter_mut() {
            v.buf += pad;
        }
        let mut sim = Sim {
            spec,
            fab,
            routing,
            now: 0,
            q,
            chans: Arr(chans),
            timing: Arr(timing),
            fail_at: Vec::new(),
            vcs: Arr(vcs),
            ring: Arr(ring),
            inflight: vec![0; if p.check { caps.len() } else { 0 }],
            sel_rr: vec![0; caps.len()],
            va_last: if fab.vc_choice == VcChoice::RoundRobin {
                vec![NONE; caps.len()]
            } else {
                Vec::new()
            },
            t_aux: Arr(vec![0; caps.len()]),
            last_move: Arr(vec![0; caps.len()]),
            held: Arr(vec![0; caps.len()]),
            vc_reuse: fab.vc_reuse,
            sw_allocator: fab.sw_allocator,
            sep,
            cwake: vec![Time::MAX; caps.len()],
            caps,
            wants,
            train_class_ids,
            pending: Arr(vec![0; sws.len() * pend_words as usize]),
            pend_words,
            sws: Arr(sws),
            sw_in: Arr(sw_in),
            ports: Arr(ports),
            bits: Arr(vec![0; bits_len as usize]),
            sw_rng,
            hosts,
            node_host,
            pkts: Arr(Vec::new()),
            free_pkts: Vec::new(),
            route_store: Vec::new(),
            route_stride,
            uses_class,
            header_ops: routing.uses_header(),
            scratch_route: Vec::new(),
            dirty: Vec::with_capacity(nodes),
            dirty_stamp: vec![0; nodes],
            step: 0,
            ms: p.warmup,
            me: p.warmup + p.measure,
            c: Counters {
                flits_window: vec![0; n as usize],
                batches: vec![Batch::default(); batches],
                ..Counters::default()
            },
            check: p.check,
            reverse_order: false,
            interruptible: false,
            cancel: None,
            #[cfg(feature = "checked")]
            lone_grant: true,
            scratch_events: Vec::new(),
            end: Time::MAX,
            end_open: false,
            failed: None,
            notes: Vec::new(),
            tokens: Vec::new(),
            free_tokens: Vec::new(),
            stop: false,
            sent_phase: false,
            sa_memo: (Time::MAX, 0, 0, 0),
            host_params: vec![spec.host; n as usize],
            tok,
            fct_due: Vec::new(),
            sampler: None,
            next_sample: Time::MAX,
            sampling: None,
        };
        sim.tokens_start();
        Ok(sim)
    }

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

    /// `send_train` on a channel that has failed: the first flit of a packet caught part
    /// way across goes on as a forced tail; everything else is lost.
    #[cold]
    fn send_dead(&mut self, c: u32, o: u32, first: u32, k: u32, ends_tail: bool) -> Time {
        let now = self.now;
        let pid = first & PID;
        let mut sent = 0;
        if self.chans[c as usize].mid {
            self.fail_at[c as usize] = Time::MAX;
            let dst = self.pkts[pid as usize].dst;
            let last = self.send_train(c, o, first | TAIL, dst, 1, true);
            self.fail_at[c as usize] = now;
            let p = &mut self.pkts[pid as usize];
            if !p.truncated {
                self.c.packets_lost += 1;
            }
            p.truncated = true;
            p.parts += 1;
            sent = 1;
            if k == 1 {
                // The packet's own tail was the flit after the cut: its upstream part ends.
                if ends_tail {
                    self.part_done(pid);
                }
                self.chans[c as usize].mid = false;
                return last;
            }
        } else if first & HEAD != 0 {
            self.c.packets_lost += 1;
            self.pkts[pid as usize].truncated = true;
        }
        let tm = self.timing[self.chans[c as usize].prof as usize];
        let (ft, tt) = (tm.flit_time, tm.tail_time);
        let pace = tm.send_pace();
        let last_start = pace.at(now, k - 1);
        let ch = &mut self.chans[c as usize];
        ch.tx_busy = if tm.clock.is_some() {
            pace.at(now, k)
        } else {
            last_start + if ends_tail { tt } else { ft }
        };
        ch.tr_start = now;
        ch.tr_k = k as u8;
        ch.mid = false;
        self.c.flits_dropped += (k - sent) as u64;
        if self.vcs[o as usize].flags & F_FROM_HOST != 0 {
            self.c.flits_injected += (k - sent) as u64;
        }
        if ends_tail {
            self.part_done(pid);
        }
        last_start
    }

    /// The timing profile of channel `c`.
    #[inline(always)]
    pub(crate) fn tm(&self, c: u32) -> &Timing {
        &self.timing[self.chans[c as usize].prof as usize]
    }

    /// Current simulated time [ps].
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub(crate) fn mark_dirty(&mut self, node: u32) {
        let n = node as usize;
        if self.dirty_stamp[n] != self.step {
            self.dirty_stamp[n] = self.step;
            self.dirty.push(node);
        }
    }

    /// Makes sure channel `c`'s sender is woken at `t` (once per distinct time).
    #[inline]
    pub(crate) fn ensure_txfree(&mut self, c: u32, t: Time) {
        let ch = &mut self.chans[c as usize];
        if ch.txfree_at == t && t >= self.now {
            return;
        }
        ch.txfree_at = t;
        let tm = &self.timing[ch.prof as usize];
        let e = ev(K_TXFREE, c, 0);
        let now = self.now;
        if t == now + tm.flit_time {
            let k = tm.tx_data;
            self.q.push(k, now, e);
        } else if t == now + tm.tail_time {
            let k = tm.tx_tail;
            self.q.push(k, now, e);
        } else {
            self.q.push_at(self.now, t, e);
        }
    }

    /// Arrival time of flit `j` of a `k`-flit train on channel `c` whose first flit lands
    /// at `a0`: one flit time apart, the tail's own unit time for the tail.
    #[inline(always)]
    pub(crate) fn train_arrival(&self, c: u32, a0: Time, j: u32, k: u32, ends_tail: bool) -> Time {
        let ch = self.tm(c);
        if ch.clock.is_some() {
            // (A clocked channel's tail takes one period, as every flit.)
            ch.land_pace().at(a0, j)
        } else if ends_tail && j + 1 == k && k >= 2 {
            a0 + (k - 2) as Time * ch.flit_time + ch.tail_time
        } else {
            a0 + j as Time * ch.flit_time
        }
    }

    /// Sends `k` flits of one packet back to back on channel `c` toward VC `o`, starting
    /// now: `first` is the first flit's word (with its head flag), `ends_tail` says whether
    /// the last one is the packet's tail. Flit j starts at `now + j·flit_time` (on a clocked
    /// channel, `now` is an edge and flit j starts j edges later), occupies the channel for
    /// its unit time and lands one unit plus the propagation delay later; the receiver sees
    /// each landing as its own event. The caller has checked `k` credits. Returns the
    /// start time of the last flit.
    #[inline]
    pub(crate) fn send_train(
        &mut self,
        c: u32,
        o: u32,
        first: u32,
        dst: u32,
        k: u32,
        ends_tail: bool,
    ) -> Time {
        debug_assert!((1..=MAX_TRAIN).contains(&k));
        let now = self.now;
        if !self.fail_at.is_empty() && now >= self.fail_at[c as usize] {
            return self.send_dead(c, o, first, k, ends_tail);
        }
        let tm = *self.tm(c);
        let (ft, tt) = (tm.flit_time, tm.tail_time);
        let last_start = self.occupy(c, k, ft, if ends_tail { tt } else { ft }, !ends_tail);
        let credit = self.chans[c as usize].credit;
        let shortcut = self.may_skip_arrival(c, first);
        let single_tail = k == 1 && ends_tail;
        let (class, route_class) = if single_tail {
            (tm.arr_tail, tm.head_route_tail)
        } else {
            (tm.arr_data, tm.head_route)
        };
        let clocked = tm.clock.is_some();
        let a0 = if clocked {
            tm.send_pace().at(now, 1)
        } else {
            now + if single_tail { tt } else { ft }
        } + tm.latency;
        self.land_train::<false>(
            c,
            o,
            first,
            dst,
            k,
            ends_tail,
            (now, a0, ft),
            (class, route_class),
            (credit, shortcut, clocked),
        );
        last_start
    }

    /// Channel `c` carries `k` flits back to back from now, each `ft` long but the last,
    /// which is `last_unit` long (`mid`: that last one is not a tail): it is busy until they
    /// are out, and their time inside the measurement window counts. (A clocked channel's
    /// flits take one period each, edge to edge, from now, an edge.) Returns the start
    /// time of the last flit.
    #[inline(always)]
    pub(crate) fn occupy(&mut self, c: u32, k: u32, ft: Time, last_unit: Time, mid: bool) -> Time {
        let (now, window) = (self.now, (self.ms, self.me));
        let prof = self.chans[c as usize].prof;
        if self.timing[prof as usize].clock.is_some() {
            return self.occupy_clocked(c, k, mid);
        }
        let ch = &mut self.chans[c as usize];
        let last_start = now + (k - 1) as Time * ft;
        ch.tx_busy = last_start + last_unit;
        ch.busy += window_busy(window, now, k, ft, last_unit);
        ch.tr_start = now;
        ch.tr_k = k as u8;
        ch.mid = mid;
        last_start
    }

    /// [`Self::occupy`] on a clocked channel.
    #[inline(never)]
    fn occupy_clocked(&mut self, c: u32, k: u32, mid: bool) -> Time {
        let (now, (ms, me)) = (self.now, (self.ms, self.me));
        let pace = self.tm(c).send_pace();
        #[cfg(feature = "checked")]
        assert_eq!(
            self.tm(c).next_start(now),
            now,
            "a clocked channel sends off its clock's edges"
        );
        let (last_start, end) = (pace.at(now, k - 1), pace.at(now, k));
        let ch = &mut self.chans[c as usize];
        ch.tx_busy = end;
        ch.busy += end.min(me).saturating_sub(now.max(ms));
        ch.tr_start = now;
        ch.tr_k = k as u8;
        ch.mid = mid;
        last_start
    }

    /// Whether flits starting with `first` sent on channel `c` now may go straight into the
    /// receiver's buffer, skipping their arrival event (see [`Self::land_train`]): a head,
    /// on a channel that allows it (`Chan::shortcut`), exact only if no flits are still on
    /// the wire ahead.
    #[inline(always)]
    pub(crate) fn may_skip_arrival(&self, c: u32, first: u32) -> bool {
        let ch = &self.chans[c as usize];
        ch.shortcut && first & HEAD != 0 && ch.landing <= self.now
    }

    /// The receiving half of [`Self::send_train`]: `k` flits of one packet toward VC `o` of
    /// channel `c`, the first starting at `start` (now, or later for the second worm of an
    /// interleaved train) and landing at `a0`, the others `stride` apart; `class` and
    /// `route_class` are the delay classes of the landing and of the routed head, for a
    /// train that starts now; `credit`: the channel has credit flow control; `shortcut`: the
    /// flits may skip their arrival event (see `send_train`); `clocked`: the channel sends on
    /// a clock's edges, so the delay classes do not apply. `INTERLEAVED`: one worm's part
    /// of an interleaved train, `stride` two flit times, which may start later (without,
    /// the code is that of an ordinary train). The caller has checked `k` credits.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn land_train<const INTERLEAVED: bool>(
        &mut self,
        c: u32,
        o: u32,
        first: u32,
        dst: u32,
        k: u32,
        ends_tail: bool,
        (start, a0, stride): (Time, Time, Time),
        (class, route_class): (Class, Class),
        (credit, shortcut, clocked): (bool, bool, bool),
    ) {
        let now = self.now;
        let mut flit = first;
        if k == 1 && ends_tail {
            flit |= TAIL;
        }
        if credit {
            self.take_credits(o, k);
        }
        let node = self.vcs[o as usize].node;
        let to_host = shortcut && (node as usize) >= self.sws.len();
        let into_buffer = shortcut && !to_host && self.vcs[o as usize].strip_pending == 0;
        if dst > DST_MASK && !into_buffer {
            // The head's hop count leaves the slots here: into the packet record.
            self.pkts[(first & PID) as usize].hops += (dst >> DST_BITS) as u16;
        }
        if to_host {
            // A host takes flits as they arrive, each at a known time: record it all now.
            // The result is the same as arrival by arrival (a host keeps no state that
            // anything else reads before then); only the tail's delivery waits for its time.
            debug_assert_eq!(stride, self.tm(c).flit_time);
            if let Err(e) = self.host_accept(o, flit, k, ends_tail, a0) {
                self.failed.get_or_insert(e);
            }
        } else if into_buffer {
            // Only this sender feeds `o` and nothing it sent before is still on the wire:
            // the flits go into the buffer now, marked with their arrival times. The head
            // starts when it lands or, behind a packet still there, when that one has left.
            let v = &self.vcs[o as usize];
            let (was_empty, state) = (v.len == 0, v.state);
            self.ring_put::<INTERLEAVED>(o, flit, dst, k, ends_tail, a0, stride);
            if was_empty {
                self.last_move[o as usize] = a0;
                let freed = self.t_aux[o as usize];
                if state == DRAIN && freed >= a0 {
                    self.start_at(o, freed, true, false);
                } else {
                    debug_assert!(state == IDLE || state == DRAIN);
                    self.set_state(o, ROUTING);
                    let sw = &self.sws[node as usize];
                    let (r, base) = (sw.router_delay, sw.bits_base);
                    self.t_aux[o as usize] = a0 + r;
                    let e = route_event(node, base, self.vcs[o as usize].local);
                    if (!INTERLEAVED || start == now) && !clocked {
                        self.q.push(route_class, now, e);
                    } else {
                        self.q.push_at(now, a0 + r, e);
                    }
                }
                self.route_ahead(node as usize, o, dst & DST_MASK);
            }
        } else {
            let mut e = ev_train(o, flit, k - 1, ends_tail);
            if INTERLEAVED {
                let ch = &mut self.chans[c as usize];
                ch.landing = ch.landing.max(a0);
                e |= EV_STRIDE2;
            } else {
                self.chans[c as usize].landing = a0;
            }
            if (!INTERLEAVED || start == now) && !clocked {
                self.q.push(class, now, e);
            } else {
                self.q.push_at(now, a0, e);
            }
            if self.check {
                self.inflight[o as usize] += k;
            }
        }
        self.c.flit_hops += k as u64;
        if self.vcs[o as usize].flags & F_FROM_HOST != 0 {
            self.c.flits_injected += k as u64;
        }
    }

    /// The `k` flits just taken out of input VC `i` (its ring head has moved past them) left
    /// the j-th at `pace.at(t0, j)` (the last at `last` instead): their credits start back
    /// to the sender, which is woken when the first lands only if it is waiting for it.
    #[inline(always)]
    pub(crate) fn return_credits(&mut self, i: u32, k: u32, t0: Time, pace: Pace, last: Time) {
        let v = &mut self.vcs[i as usize];
        let ch = &self.chans[v.chan as usize];
        if !ch.credit {
            v.cr_head = v.head;
            return;
        }
        if ch.tokens {
            let c = v.chan;
            self.tokens_left(c, i, k);
            return;
        }
        let tm = &self.timing[ch.prof as usize];
        let cd = tm.credit_delay;
        let (first, mask) = (v.head.wrapping_sub(k), v.mask);
        let (ring, buf) = (&mut self.ring, v.buf);
        if pace.clock.is_none() {
            let mut t = t0 + cd;
            for j in 0..k - 1 {
                ring[(buf + (first.wrapping_add(j) & mask)) as usize].time = t;
                t += pace.unit;
            }
        } else {
            for j in 0..k - 1 {
                ring[(buf + (first.wrapping_add(j) & mask)) as usize].time = pace.at(t0, j) + cd;
            }
        }
        ring[(buf + (first.wrapping_add(k - 1) & mask)) as usize].time = last + cd;
        // The last flit leaves last; a stripped header's credit may land later than credits
        // written after it, so the bound only grows.
        #[cfg(feature = "checked")]
        assert!(
            k < 2 || last >= pace.at(t0, k - 2),
            "credits written out of order"
        );
        v.cr_last = v.cr_last.max(last + cd);
        if v.flags & F_CWAIT != 0 {
            v.flags &= !F_CWAIT;
            let cl = tm.credit_class;
            // The first credit lands `cd` after the first flit left, which is now or later.
            if t0 == self.now {
                self.q.push(cl, self.now, ev(K_CREDIT, i, 0));
            } else {
                self.q.push_at(self.now, t0 + cd, ev(K_CREDIT, i, 0));
            }
        }
    }

    /// Credits the sender of VC `o` holds now, collecting returned credits that have landed.
    #[inline]
    pub(crate) fn credits_now(&mut self, o: u32) -> u32 {
        let now = self.now;
        let v = &mut self.vcs[o as usize];
        if now >= v.cr_last {
            // All of them have landed.
            v.credits += v.head.wrapping_sub(v.cr_head);
            v.cr_head = v.head;
            return v.credits;
        }
        while v.cr_head != v.head && self.ring[(v.buf + (v.cr_head & v.mask)) as usize].time <= now {
            v.cr_head = v.cr_head.wrapping_add(1);
            v.credits += 1;
        }
        v.credits
    }

    /// How many of the next `max` flits on VC `o`, flit j starting at `pace.at(start, j)`
    /// (`start` now or later), have a credit by the time they start: the credits held now,
    /// then those on their way back, in the order they land. A train may run that far
    /// without waiting, exactly as the flit-by-flit sender would find each credit there
    /// when its flit is due.
    #[inline(always)]
    pub(crate) fn train_credits(&mut self, o: u32, max: u32, start: Time, pace: Pace) -> u32 {
        let held = self.credits_now(o);
        if held >= max {
            return max;
        }
        let now = start;
        let v = &self.vcs[o as usize];
        let pending = v.head.wrapping_sub(v.cr_head);
        let mut n = held;
        while n < max && n - held < pending {
            let slot = v.buf + (v.cr_head.wrapping_add(n - held) & v.mask);
            if self.ring[slot as usize].time > pace.at(now, n) {
                break;
            }
            n += 1;
        }
        n
    }

    /// Takes `k` credits of VC `o` for a train about to leave, collecting early those still
    /// on their way that [`Self::train_credits`] counted on.
    #[inline]
    pub(crate) fn take_credits(&mut self, o: u32, k: u32) {
        let v = &mut self.vcs[o as usize];
        if v.credits < k {
            let early = k - v.credits;
            v.cr_head = v.cr_head.wrapping_add(early);
            v.credits += early;
        }
        v.credits -= k;
    }

    /// The admissible outputs of the routed head at input VC `i`.
    #[inline]
    pub(crate) fn want_of(&self, i: u32) -> Want {
        let v = &self.vcs[i as usize];
        if v.want_port == u16::MAX {
            self.wants[i as usize]
        } else {
            Want {
                ports: crate::routing::PortSet::single(v.want_port),
                vc_lo: v.want_lo,
                vc_hi: v.want_hi,
            }
        }
    }

    /// Credits of VC `o` at the present instant, without collecting them.
    pub(crate) fn credits_at(&self, o: u32) -> u32 {
        let v = &self.vcs[o as usize];
        let landed = (0..v.head.wrapping_sub(v.cr_head))
            .filter(|&k| self.ring[(v.buf + (v.cr_head.wrapping_add(k) & v.mask)) as usize].time <= self.now)
            .count() as u32;
        v.credits.saturating_add(landed)
    }

    /// Whether VC `o` has at least `need` (≥ 1) credits now; if not, the sender is woken when
    /// they are there.
    #[inline(always)]
    pub(crate) fn has_credits(&mut self, o: u32, need: u32) -> bool {
        self.vcs[o as usize].credits >= need.max(1) || self.has_credits_slow(o, need.max(1))
    }

    /// The credits `need` stands for on VC `o`: itself, or the VC's whole buffer for
    /// [`NEED_ALL`].
    pub(crate) fn credits_needed(&self, o: u32, need: u32) -> u32 {
        if need == NEED_ALL {
            self.caps[o as usize]
        } else {
            need
        }
    }

    #[inline(never)]
    fn has_credits_slow(&mut self, o: u32, need: u32) -> bool {
        let need = self.credits_needed(o, need);
        if self.credits_now(o) >= need {
            return true;
        }
        // Credits already on their way wake the sender when the one that completes `need`
        // lands; otherwise the next flit to leave the receiver's buffer does. Both orders of
        // sender and receiver within an instant give the same wake-up.
        let v = &mut self.vcs[o as usize];
        let missing = need - v.credits;
        if v.head.wrapping_sub(v.cr_head) >= missing {
            let t = self.ring[(v.buf + (v.cr_head.wrapping_add(missing - 1) & v.mask)) as usize].time;
            if t == crate::link::ds::PENDING {
                // Its token is not sent yet: the token wakes the sender when it is.
                v.flags |= F_CWAIT;
            } else if self.cwake[o as usize] != t {
                self.cwake[o as usize] = t;
                self.q.push_at(self.now, t, ev(K_CREDIT, o, 0));
            }
        } else {
            v.flags |= F_CWAIT;
        }
        false
    }

    #[inline(always)]
    fn apply(&mut self, e: u64) -> Res<()> {
        let kind = e >> 61;
        let id = ((e >> 32) as u32) & MAX_ID;
        match kind {
            K_FLIT => {
                // The first flit of a train lands now; `rem` more follow it, each one unit
                // of its own later. All go into the buffer now, each marked with its arrival.
                let flit = e as u32;
                let k = ((e >> 57) & 15) as u32 + 1;
                let ends_tail = (e >> 56) & 1 != 0;
                let node = self.vcs[id as usize].node;
                if self.check {
                    self.inflight[id as usize] -= k;
                }
                if e & EV_STRIDE2 != 0 {
                    // Only switches receive interleaved trains (see `send_pair`).
                    let ft = self.tm(self.vcs[id as usize].chan).flit_time;
                    self.receive_at::<true>(id, flit, k, ends_tail, self.now, 2 * ft)
                } else if (node as usize) < self.sws.len() {
                    self.switch_receive(id, flit, k, ends_tail)
                } else {
                    self.host_receive(id, flit, k, ends_tail)
                }
            }
            K_CREDIT => {
                let v = &self.vcs[id as usize];
                let (owner, c) = (v.owner, v.chan);
                let ch = &self.chans[c as usize];
                let (src, port) = (ch.src, ch.src_port);
                if (src as usize) < self.sws.len() {
                    self.switch_credit(src, port, owner);
                } else {
                    self.mark_dirty(src);
                }
                Ok(())
            }
            K_TXFREE => {
                let ch = &self.chans[id as usize];
                let (src, port) = (ch.src, ch.src_port);
                if (src as usize) < self.sws.len() {
                    let sw = &self.sws[src as usize];
                    let base = (sw.bits_base + sw.words + sw.pwords) as usize;
                    set_bit(&mut self.bits, base, port as usize);
                }
                self.mark_dirty(src);
                Ok(())
            }
            K_ROUTE => {
                self.route_timer_done(id, e as u32);
                Ok(())
            }
            K_TAILGONE => {
                self.held_due(id);
                Ok(())
            }
            K_DELIVER => self.deliver(e as u32, e & EV_PAID != 0),
            K_TIMER => {
                let slot = e as u32;
                let token = self.tokens[slot as usize];
                self.free_tokens.push(slot);
                self.notes.push((agent::Note::Timer { host: id, token }, None));
                Ok(())
            }
            K_GEN => {
                let h = &mut self.hosts[id as usize];
                h.gen_at = Time::MAX;
                let node = h.node;
                self.mark_dirty(node);
                Ok(())
            }
            _ => Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!("unknown event kind {kind}"),
            })),
        }
    }

    #[inline(always)]
    fn eval(&mut self, node: u32) -> Res<()> {
        if (node as usize) < self.sws.len() {
            self.eval_switch(node as usize)
        } else {
            self.eval_host(self.node_host[node as usize] as usize)
        }
    }

    /// Prefetches the front flits of the input VCs switch `s` will route.
    #[inline]
    fn prefetch_fronts(&self, s: usize) {
        let sw = &self.sws[s];
        let mut word = self.bits[sw.bits_base as usize];
        while word != 0 {
            let l = word.trailing_zeros();
            word &= word - 1;
            let v = &self.vcs[self.sw_in[(sw.in_base + l) as usize] as usize];
            self.ring.prefetch((v.buf + (v.head & v.mask)) as usize);
            // Its own channel, for the credits its flits send back.
            self.chans.prefetch(v.chan as usize);
            if v.flags & F_ROUTED != 0 && v.want_port != u16::MAX {
                // Routed ahead: the output it will ask for.
                let port = &self.ports[(sw.port_base + v.want_port as u32) as usize];
                if port.out != NONE {
                    let o = (port.vc_base + v.want_lo as u32) as usize;
                    self.vcs.prefetch(o);
                    self.held.prefetch(o);
                    self.chans.prefetch(port.out as usize);
                }
            }
        }
    }

    /// Runs to the end of the measurement window and the drain, or until a deadlock stops
    /// the network. `progress` is called now and then.
    pub fn run(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<RunOutcome, SimError> {
        if let Some(p) = self.spec.params.sampling.clone()
            && self.sampler.is_none()
            && self.sampling.is_none()
        {
            // BookSim2's sampling decides the window as the network goes; a first run of
            // the same network (the same packets, whatever the window) finds it, and this
            // one measures it as a fixed window, so that everything counted against the
            // window (trains, batches, channel use) is counted as for any other.
            let mut probe = Sim::new(self.spec)?;
            probe.interruptible = self.interruptible;
            probe.cancel = self.cancel;
            probe.reverse_order = self.reverse_order;
            let last = p.period.saturating_mul(p.max_samples as Time);
            probe.ms = if p.warmup_periods > 0 {
                p.period.saturating_mul(p.warmup_periods as Time).min(last)
            } else {
                last
            };
            probe.me = last;
            probe.next_sample = p.period;
            let cycle = self.spec.params.cycle.floor().max(1);
            probe.sampler = Some(Box::new(crate::stats::sampling::Sampler::new(
                p,
                self.hosts.len(),
                cycle,
            )));
            let out = probe.run(progress)?;
            let s = probe.sampler.as_ref().expect("the probe samples");
            let o = s.outcome();
            if out.interrupted || out.deadlock.is_some() {
                // Nothing decided: measure what the probe measured.
                (self.ms, self.me) = (probe.ms, probe.ms.max(probe.me.min(probe.now)));
            } else {
                (self.ms, self.me) = (probe.ms, probe.me.max(probe.ms));
            }
            self.sampling = Some(o);
        }
        if let Some(r) = self.run_express(progress) {
            return r.map_err(|e| *e);
        }
        self.run_inner(&mut agent::NoAgent, progress).map_err(|e| *e)
    }

    /// Whether Ctrl-C ([`Sim::interruptible`]) or [`Sim::cancel`] asks the run to stop
    /// (read at its progress reports only).
    pub(crate) fn stop_asked(&self) -> bool {
        self.cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            || (self.interruptible && crate::interrupt::check())
    }

    /// As [`Sim::run`], with `agent` playing the hosts' part (see [`agent`]).
    pub fn run_with(
        &mut self,
        agent: &mut dyn agent::Agent,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunOutcome, SimError> {
        self.run_inner(agent, progress).map_err(|e| *e)
    }

    /// Lets every node something happened to at this instant decide what to do, in the
    /// order they were touched (which does not change any result).
    fn eval_dirty(&mut self) -> Res<()> {
        let mut k = 0;
        let nsw = self.sws.len();
        while k < self.dirty.len() {
            // Switches a little ahead are brought into the cache while this one is
            // evaluated, in two stages, the second needing the first: bits and ports two
            // ahead; the heads to route, their flits and, for heads routed ahead, their
            // outputs one ahead. (Two more stages, the switch records four ahead and the
            // heads and send channels two ahead, cost more instructions than they saved:
            // 8×8 mesh +4 %, torus +1 %, 32×32 mesh even without them.)
            if let Some(&m) = self.dirty.get(k + 2)
                && (m as usize) < nsw
            {
                let sw = &self.sws[m as usize];
                self.bits.prefetch(sw.bits_base as usize);
                self.ports.prefetch(sw.port_base as usize);
                self.ports
                    .prefetch((sw.port_base + sw.n_ports.saturating_sub(1)) as usize);
            }
            if let Some(&m) = self.dirty.get(k + 1)
                && (m as usize) < nsw
            {
                self.prefetch_fronts(m as usize);
            }
            let n = self.dirty[k];
            self.eval(n)?;
            k += 1;
        }
        self.dirty.clear();
        if !self.fct_due.is_empty() {
            self.flush_tokens();
        }
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Hands the agent what happened this instant, in a fixed order, and lets the hosts act
    /// on what it sent, until nothing more happens at this instant.
    fn consult(&mut self, agent: &mut dyn agent::Agent) -> Res<()> {
        while !self.notes.is_empty() {
            let mut notes = std::mem::take(&mut self.notes);
            notes.sort_by_key(|n| n.0);
            for (note, d) in notes.drain(..) {
                let mut ctl = agent::Ctl { sim: self };
                match (note, d) {
                    (agent::Note::Delivered { .. }, Some(d)) => agent.delivered(&mut ctl, &d),
                    (agent::Note::Timer { host, token }, _) => agent.timer(&mut ctl, host, token),
                    (agent::Note::Idle { host }, _) => agent.idle(&mut ctl, host),
                    _ => {}
                }
            }
            if self.notes.is_empty() {
                self.notes = notes;
            }
            self.eval_dirty()?;
        }
        Ok(())
    }

    fn run_inner(
        &mut self,
        agent: &mut dyn agent::Agent,
        progress: &mut dyn FnMut(Progress),
    ) -> Res<RunOutcome> {
        let wall = std::time::Instant::now();
        self.step += 1;
        agent.start(&mut agent::Ctl { sim: self });
        self.eval_dirty()?;
        for h in 0..self.hosts.len() {
            if self.hosts[h].active {
                let t = self.next_ready(h);
                self.hosts[h].gen_at = t;
                self.q.push_at(self.now, t, ev(K_GEN, h as u32, 0));
            }
        }
        let wd = self.spec.params.watchdog.max(1);
        // The watchdog looks on a fixed grid of half periods, each time as of the grid point
        // just passed (nothing happened between it and the event that brought the run past
        // it): trains, which skip events, then look at the same instants as flit by flit.
        let half = (wd / 2).max(1);
        let mut next_watch = half;
        let mut finalized = false;
        let mut drain_failed = false;
        let mut deadlock = None;
        let mut interrupted = false;
        let mut iter = 0u64;
        while let Some(t) = self.q.next_time() {
            if self.ends_before(t, &mut finalized, &mut drain_failed) {
                break;
            }
            if t >= next_watch {
                let g = t - t % half;
                next_watch = g + half;
                self.now = g;
                if self.check {
                    self.check_credits()?;
                }
                if let Some(d) = self.find_deadlock(wd) {
                    deadlock = Some(d);
                    // As of `g`, before anything at it: nothing placed there on is counted.
                    (self.end, self.end_open) = (g, true);
                    break;
                }
            }
            self.now = t;
            self.step += 1;
            if self.reverse_order {
                let mut evs = std::mem::take(&mut self.scratch_events);
                while let Some(e) = self.q.pop_at(t) {
                    evs.push(e);
                }
                for &e in evs.iter().rev() {
                    self.c.events += 1;
                    self.apply(e)?;
                }
                evs.clear();
                self.scratch_events = evs;
                self.dirty.reverse();
            } else {
                // Events pushed while applying are always later than `t`, so one pass over
                // the classes empties the instant.
                for k in 0..self.q.classes() {
                    while let Some(e) = self.q.pop_class(k, t) {
                        self.c.events += 1;
                        self.apply(e)?;
                    }
                }
                while let Some(e) = self.q.pop_heap(t) {
                    self.c.events += 1;
                    self.apply(e)?;
                }
            }
            self.eval_dirty()?;
            if !self.notes.is_empty() {
                self.consult(agent)?;
            }
            if self.stop {
                self.end = self.now;
                break;
            }
            iter += 1;
            if iter & 0x3FFF == 0 {
                progress(Progress {
                    now: self.now,
                    window_end: self.me,
                    events: self.c.events,
                });
                if self.stop_asked() {
                    interrupted = true;
                    self.end = self.now;
                    break;
                }
            }
        }
        if deadlock.is_none() && !interrupted && self.q.is_empty() && self.vcs.iter().any(|v| v.len > 0) {
            // Nothing can ever happen again, yet flits are inside: every one of them waits.
            // The network stopped when its last flit landed; the last event (a credit, a
            // wake-up that found nothing to do) may come later, and trains, which skip
            // events, reach it sooner: the deadlock and the run's end are dated by that flit.
            let last_landed = self
                .chans
                .iter()
                .filter(|ch| ch.tr_k > 0)
                .map(|ch| {
                    let tm = &self.timing[ch.prof as usize];
                    if tm.clock.is_some() {
                        return tm.send_pace().at(ch.tr_start, ch.tr_k as u32) + tm.latency;
                    }
                    let unit = if ch.mid { tm.flit_time } else { tm.tail_time };
                    ch.tr_start + (ch.tr_k as Time - 1) * tm.flit_time + unit + tm.latency
                })
                .max();
            if let Some(t) = last_landed {
                self.now = t;
            }
            deadlock = self.find_deadlock(0);
            if deadlock.is_none() {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: "the network stopped with flits inside but no waiting cycle was found".into(),
                }));
            }
        }
        if !finalized {
            // A deadlock ends the measurement window where it stopped the run: the sources
            // create nothing after it, and the rates are over the time that was simulated
            // (none, if it came before the window began).
            if let Some(d) = &deadlock {
                self.me = self.me.min(d.time.max(self.ms));
            }
            if interrupted {
                self.me = self.me.min(self.now.max(self.ms));
            }
            self.finalize_window();
        }
        if self.check && deadlock.is_none() && !interrupted {
            self.check_credits()?;
            self.check_conservation(!drain_failed)?;
        }
        Ok(RunOutcome {
            drain_failed,
            deadlock,
            wall_s: wall.elapsed().as_secs_f64(),
            interrupted,
        })
    }

    /// Whether the run ends before the instant `t`, the next with an event: drained, or
    /// past the drain limit (`drain_failed`). The measured packets still in the source
    /// queues are counted once, before the first instant at or after the window's end
    /// (`finalized`).
    fn ends_before(&mut self, t: Time, finalized: &mut bool, drain_failed: &mut bool) -> bool {
        if t >= self.next_sample && self.sample_until(t) {
            return true;
        }
        if !*finalized && t >= self.me {
            self.finalize_window();
            *finalized = true;
        }
        // Drained: the run ends at the last instant it processed, and never before the
        // window's end, whose instant is processed in full. (It ended at the last instant
        // before the window's end once, when nothing was left to drain there: an instant
        // that trains, which skip events, and flit by flit placed differently, so the
        // flits counted up to it differed.)
        if *finalized && t > self.me && self.drained() {
            self.end = self.now.max(self.me);
            return true;
        }
        if t > self.me.saturating_add(self.spec.params.drain_limit) {
            *drain_failed = true;
            self.end = self.me.saturating_add(self.spec.params.drain_limit);
            return true;
        }
        false
    }

    /// BookSim2's sampling at every period's end up to `t` (before anything at `t`):
    /// the window's start and end as it decides them. Returns whether the run is to stop
    /// (unstable).
    #[inline(never)]
    fn sample_until(&mut self, t: Time) -> bool {
        use crate::stats::sampling::Verdict;
        let Some(s) = self.sampler.as_mut() else {
            self.next_sample = Time::MAX;
            return false;
        };
        while t >= self.next_sample {
            let b = self.next_sample;
            match s.period_end(b) {
                Verdict::Continue => {}
                Verdict::WarmedUp => self.ms = b,
                Verdict::Measured => (self.ms, self.me) = (s.window_start(), b),
                Verdict::Unstable => {
                    // The window ends where the test stopped the run (empty if the warm-up
                    // had not ended).
                    if b <= self.ms {
                        (self.ms, self.me) = (b, b);
                    } else {
                        self.me = self.me.min(b);
                    }
                    self.end = b;
                    self.next_sample = Time::MAX;
                    return true;
                }
            }
            self.next_sample = s.next_period_end();
        }
        false
    }

    fn drained(&self) -> bool {
        if self.spec.params.drain_all {
            // A host in the middle of a packet has one injected and not delivered; one whose
            // packet created in the window still waits (for its send overhead, or credits)
            // will inject it.
            self.c.packets_delivered + self.c.packets_lost >= self.c.packets_injected
                && (0..self.hosts.len()).all(|h| !self.may_create(h))
        } else {
            self.c.delivered_measured >= self.c.total_measured
        }
    }

    /// Counts the measured packets still waiting in source queues, so the drain knows how
    /// many to wait for.
    fn finalize_window(&mut self) {
        let wl = &self.spec.workload;
        if matches!(wl.process, Process::Backlogged) {
            self.c.total_measured = self.c.injected_measured;
            return;
        }
        let mut pending = 0;
        let mut pending_flits = 0;
        for h in &self.hosts {
            if !h.active {
                continue;
            }
            let mut a = h.arrivals.clone();
            // The cursor is at the oldest packet not yet injected.
            while a.time < self.me {
                if a.time >= self.ms {
                    pending += 1;
                    pending_flits += a.size as u64;
                }
                a.advance(&wl.process, &wl.sizes);
            }
        }
        self.c.total_measured = self.c.injected_measured + pending;
        self.c.offered_flits += pending_flits;
    }

    /// Every credit accounted for: for each credit-controlled VC, credits held by the sender
    /// + flits in flight + flits buffered + credits on their way back = buffer size.
    fn check_credits(&self) -> Res<()> {
        for (o, v) in self.vcs.iter().enumerate() {
            let ch = &self.chans[v.chan as usize];
            if !ch.credit {
                continue;
            }
            let back = v.head.wrapping_sub(v.cr_head);
            let sum = v.credits as u64 + self.inflight[o] as u64 + v.len as u64 + back as u64;
            if sum != self.caps[o] as u64 {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "credits of {} vc {} do not add up: {} held + {} flits in flight + {} buffered + {} \
                         credits in flight ≠ {} (vc id {o})",
                        self.fab.channel_name(crate::fabric::ChannelId(v.chan)),
                        v.vc,
                        v.credits,
                        self.inflight[o],
                        v.len,
                        back,
                        self.caps[o]
                    ),
                }));
            }
            if v.len > self.caps[o] {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "buffer of {} vc {} holds {} flits, more than its {}",
                        self.fab.channel_name(crate::fabric::ChannelId(v.chan)),
                        v.vc,
                        v.len,
                        self.caps[o]
                    ),
                }));
            }
        }
        // Each switch's set of inputs being routed matches their states.
        for v in self.vcs.iter() {
            let s = v.node as usize;
            if s >= self.sws.len() {
                continue;
            }
            let l = v.local as usize;
            let word = self.pending[s * self.pend_words as usize + (l >> 6)];
            let marked = word >> (l & 63) & 1 != 0;
            let routed = matches!(v.state, ROUTING | READY) && v.flags & F_UNWATCHED == 0;
            if marked != routed {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "switch {}: input {} is {}marked as being routed, in state {}",
                        self.fab.nodes[s].name,
                        l,
                        if marked { "" } else { "not " },
                        v.state
                    ),
                }));
            }
        }
        Ok(())
    }

    /// No flit created or lost: injected = delivered + buffered + in flight; and after a
    /// completed full drain, every packet delivered.
    fn check_conservation(&self, drained: bool) -> Res<()> {
        let buffered: u64 = self.vcs.iter().map(|v| v.len as u64).sum();
        let in_flight: u64 = self.inflight.iter().map(|&f| f as u64).sum();
        // A header flit stripped before it reached the switch that strips it is counted as
        // stripped already, and still where it is (on the wire, upstream, or not yet injected
        // at all): once too often.
        let stripped_ahead: u64 = self.vcs.iter().map(|v| v.strip_pending as u64).sum();
        if self.c.flits_sent + stripped_ahead
            != self.c.flits_delivered + buffered + in_flight + self.c.flits_stripped + self.c.flits_dropped
        {
            return Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!(
                    "flits not conserved: {} injected ≠ {} delivered + {} buffered + {} in flight + {} \
                     stripped ({} of them before they arrived)",
                    self.c.flits_sent,
                    self.c.flits_delivered,
                    buffered,
                    in_flight,
                    self.c.flits_stripped,
                    stripped_ahead
                ),
            }));
        }
        if drained
            && self.spec.params.drain_all
            && self.c.packets_delivered + self.c.packets_lost != self.c.packets_injected
        {
            return Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!(
                    "{} packets injected but {} delivered after a full drain",
                    self.c.packets_injected, self.c.packets_delivered
                ),
            }));
        }
        Ok(())
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
}

/// The buffers' `n` flit slots, zeroed, and the number of slots before the first (0–3: so
/// that it starts a cache line, as `Slot`'s own alignment does not ensure), or an error
/// (not an abort) if the machine cannot allocate them. The memory comes zeroed from the
/// allocator (fresh pages from the system), so a large buffer costs memory only as far as
/// flits ever fill it.
fn ring_of(n: usize) -> Result<(Vec<Slot>, u32), SimError> {
    let too_large = || {
        SimError::TooLarge(format!(
            "the buffers need {:.1} GB ({n} flit slots of {} bytes), more than this machine can allocate",
            (n as f64 * std::mem::size_of::<Slot>() as f64) / 1e9,
            std::mem::size_of::<Slot>()
        ))
    };
    if n == 0 {
        return Ok((Vec::new(), 0));
    }
    const SLOTS_PER_LINE: usize = 64 / std::mem::size_of::<Slot>();
    let n = n.checked_add(SLOTS_PER_LINE - 1).ok_or_else(too_large)?;
    let layout = std::alloc::Layout::array::<Slot>(n).map_err(|_| too_large())?;
    // SAFETY: the layout is non-empty; a null pointer (allocation failure) is checked.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Slot>();
    if p.is_null() {
        return Err(too_large());
    }
    let pad = p.align_offset(64).min(SLOTS_PER_LINE - 1) as u32;
    // SAFETY: `p` was allocated by the global allocator with the layout of `n` slots, and
    // all-zero bytes are a valid `Slot` (integers only): length and capacity `n`.
    Ok((unsafe { Vec::from_raw_parts(p, n, n) }, pad))
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

//! The engine's records, as plain data in flat arrays indexed by small ids: a channel's
//! transmitter ([`Chan`]) and its shared timing ([`Timing`], [`Pace`]), a VC's input buffer
//! and output state ([`Vc`], its ring of [`Slot`]s), a switch's ports and layout ([`Port`],
//! [`Sw`]), a host's ([`HostState`]), a packet's ([`Pkt`]) and the run's counters. Their
//! sizes are fixed to cache lines where they are hot (the asserts beside them).

use super::*;

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
    /// Tokens may come between flits on this channel: trains go only as far as
    /// `Sim::token_train_limit` allows (and never interleaved, `send_pair`).
    pub tokens_between: bool,
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
pub(super) fn clocked_at(c: &Clock, t0: Time, j: u32, offset: Time) -> Time {
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

// SAFETY: integers only.
unsafe impl super::recs::Zeroed for Slot {}

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
    /// Draws for randomized routing ([`crate::routing::Routing::draws`]): one a packet,
    /// only where the routing draws.
    pub route_rng: Stream,
    /// Packets it has started (numbering them for the switches' random selections).
    pub started: u64,
    pub cpu_free: Time,
    pub recv_free: Time,
    /// When the last packet's tail finished leaving (the channel free for the next): where
    /// the next packet reaches the front of the source queue, as `sim.source_queueing =
    /// false` dates it.
    pub tail_out: Time,
    /// A batch with a window: packets taken and not yet delivered.
    pub outstanding: u32,
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
    /// What its source drew for a randomized routing ([`crate::routing::Header::draw`]).
    pub draw: u32,
    /// Its source and its number there (`src << 40 | n`), which key the draws of the
    /// switches' random selections for it (`Sim::select`).
    pub serial: u64,
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
    /// When the last measured packet was delivered [ps] (a batch ends there).
    pub last_delivery: Time,
    pub total_measured: u64,
    pub hops_measured: u64,
    pub flits_window: Vec<u64>,
    pub batches: Vec<Batch>,
    pub packet_lat: LatencyAcc,
    pub network_lat: LatencyAcc,
}

//! The parameters of a fabric's switches and channels, as built from a config: plain data
//! that the fabric carries and the engine's switch (`crate::switch`) and channel
//! (`crate::link`) models read. Defaults are the BookSim2-style reference router (a 4-cycle
//! head pipeline folded into one routing delay) and a 1-cycle credit channel of 8-flit
//! buffers (DESIGN.md, "Reference workloads"); the DS link's and the Mosaic's values come
//! from `../shared/systems/ieee1355.md` and `atomic.md`.

use crate::time::{Clock, Time};

/// How a switch forwards a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SwitchMode {
    /// The head is forwarded when an output VC is free; the rest follows as credits allow. A
    /// blocked worm holds every channel from its head back to its tail.
    #[default]
    Wormhole,
    /// The head is forwarded only when the next buffer can take the whole packet.
    CutThrough,
    /// The packet is routed only once it is entirely in the input buffer, and forwarded only
    /// when the next buffer can take all of it.
    StoreAndForward,
}

/// How a routed head picks among several admissible free outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Selection {
    /// The lowest-numbered free output.
    #[default]
    FirstFree,
    /// Rotate over the admissible outputs, per input.
    RoundRobin,
    /// The output with the most credits (the least occupied next buffer).
    LeastOccupied,
    /// Uniformly at random among the free ones (each draw from a stream of the run's seed
    /// keyed by the packet, the switch and the input).
    Random,
    /// Uniformly at random among all the admissible outputs, free or not, and then wait for
    /// that one (drawn as for `Random`): BookSim2's `nca` on a fat tree draws its up port so.
    RandomAny,
    /// Two of all the admissible outputs drawn at random (the same one perhaps twice), and
    /// of them the one with fewer credits used (flits sent on all its VCs whose credits
    /// have not come back; the first on a tie), free or not, then wait for that one (drawn
    /// as for `Random`): BookSim2's `anca` on a fat tree chooses its up port so.
    TwoRandomLeastUsed,
}

/// How an output chooses among waiting inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Arbitration {
    /// Round robin over input VCs, per output (the STC104's and BookSim2's fair default).
    #[default]
    RoundRobin,
    /// The packet created first wins (globally fair under load); ties by input order.
    OldestFirst,
}

/// Per-switch parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchParams {
    /// Head latency from arrival at the front of an input buffer to the earliest moment it may
    /// leave on an output [ps].
    pub router_delay: Time,
    pub mode: SwitchMode,
    pub selection: Selection,
    pub arbitration: Arbitration,
    /// Crossbar speed-up: an input port may start a new flit transfer every
    /// `flit_time / speedup` (≥ 1).
    pub speedup: u32,
    /// When an output VC may carry the next packet (wormhole only).
    pub release: VcRelease,
}

/// How a switch gives its free output VCs to the heads waiting for them, in every switch of
/// a fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VcAllocator {
    /// Every free VC a waiting head may take goes to one, in round-robin order over the
    /// waiting heads (a maximal match, as soon as a VC is free).
    #[default]
    Greedy,
    /// BookSim2's separable input-first VC allocator, one iteration a cycle: each waiting
    /// head asks for one free VC (its choice by [`VcChoice`]), each VC asked for grants the
    /// first asker from its own round-robin pointer over the switch's input VCs; a head
    /// that lost, and a VC that no head won, wait for the next cycle, though another VC or
    /// head was free (`src/allocators/separable_input_first.cpp`).
    SeparableInputFirst,
    /// BookSim2's separable output-first VC allocator, one iteration a cycle: each free VC
    /// grants the first head that may take it from its pointer, each head accepts the first
    /// granting VC from its own (as [`VcChoice`] moves it), and both pointers move only past
    /// an accepted grant (`separable_output_first.cpp`). A head prefers the VCs of the
    /// routing's higher priority ([`crate::routing::Escape`]).
    SeparableOutputFirst,
    /// BookSim2's iSLIP VC allocator (its default), one iteration a cycle: the separable
    /// output-first match, blind to the routing's priorities (`islip.cpp` never reads them:
    /// an escape VC weighs as the others).
    Islip,
}

/// When a wormhole switch (or a host) may give an output VC to the next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VcRelease {
    /// As soon as the previous packet's tail has left on it.
    #[default]
    Tail,
    /// Only once the next buffer has returned the credit of that tail: the VC's buffer
    /// downstream is empty (BookSim2's `wait_for_tail_credit = 1`). Packets never share a
    /// VC's buffer.
    TailCredit,
}

/// Which of an output's free VCs (those in the head's admissible range) a head is given, in
/// every switch of a fabric; hosts start packets on their injection channel's VCs alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VcChoice {
    /// The lowest-numbered free VC (a host: the lowest with a credit).
    #[default]
    Lowest,
    /// The first free VC after the one this input VC was last given on this output,
    /// wrapping within the range; from the bottom of the range if it was last given another
    /// output. This is how the input-side pointers of BookSim2's VC allocators move (iSLIP's
    /// accept pointer, the input arbiter of the separable ones: one per input VC over the
    /// output VCs, moved past the one granted; `src/allocators/islip.cpp`,
    /// `separable_input_first.cpp`). A host starts each packet on the VC after the one its
    /// last packet took, among those with a credit, as BookSim2's source does (`_last_vc`
    /// in `trafficmanager.cpp`; its first packet tries VC 0 only).
    RoundRobin,
}

/// How a switch whose inputs share the crossbar (more VCs at an input than its speed-up)
/// matches its inputs to its outputs for the next flits, in every switch of a fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SwAllocator {
    /// Event-driven: at each instant every free output, from a rotating first one, sends the
    /// next of its VCs in round-robin order whose crossbar input is free. A match that
    /// cannot be extended (maximal).
    #[default]
    Greedy,
    /// A separable allocator of one iteration, run every cycle on the cycle's requests
    /// (one a pair of crossbar input and output, from the input's VCs in round-robin order):
    /// each output grants an input, each input accepts one grant, round-robin pointers moved
    /// only past an accepted pair. BookSim2's `islip` and `separable_output_first` with
    /// `alloc_iters = 1` and round-robin arbiters (`src/allocators/islip.cpp`,
    /// `separable_output_first.cpp`). An input whose grant it did not accept leaves that
    /// output idle for the cycle: the match is not maximal.
    SeparableOutputFirst,
    /// As [`Self::SeparableOutputFirst`], the inputs choosing first: each input asks for one
    /// output, each output grants one of those that asked (BookSim2's
    /// `separable_input_first`).
    SeparableInputFirst,
    /// BookSim2's `wavefront` allocator (`src/allocators/wavefront.cpp`): the request
    /// matrix (crossbar inputs × outputs, squared to the larger) is swept diagonal by
    /// diagonal from a priority diagonal, each request granted whose input and output are
    /// still free; the priority diagonal moves one on after every allocation with requests.
    /// Its match is maximal.
    Wavefront,
    /// BookSim2's `rr_wavefront` (the same allocator with `skip_diags`): as
    /// [`Self::Wavefront`], but the priority diagonal moves to the one after the diagonal
    /// of the first request granted (the sum of its input and output, modulo the square's
    /// side).
    RrWavefront,
    /// BookSim2's `max_size` allocator (`src/allocators/maxsize.cpp`): a maximum matching,
    /// grown by shortest augmenting paths searched breadth first from the unmatched inputs
    /// in turn from a starting input that moves one on after every allocation.
    MaxSize,
    /// BookSim2's lonely output allocator (`src/allocators/loa.cpp`): each input asks for
    /// the output it has a request to that has the fewest requests in all (the first such
    /// from its pointer), each output grants the first input that asked from its pointer;
    /// a matched pair's two pointers each move one on (not past the partner), so every
    /// flit's match counts.
    Loa,
}

impl SwAllocator {
    /// Whether the allocator has switch-wide state that moves at every allocation with
    /// requests (the wavefront's priority diagonal, `max_size`'s starting input), so that
    /// each flit's match counts; a separable allocator's pointers move past a matched pair
    /// only, the same after one match of a pair as after several.
    pub fn moves_every_allocation(self) -> bool {
        matches!(
            self,
            SwAllocator::Wavefront | SwAllocator::RrWavefront | SwAllocator::MaxSize | SwAllocator::Loa
        )
    }
}

impl Default for SwitchParams {
    fn default() -> Self {
        SwitchParams {
            router_delay: 4_000,
            mode: SwitchMode::Wormhole,
            selection: Selection::FirstFree,
            arbitration: Arbitration::RoundRobin,
            speedup: 1,
            release: VcRelease::Tail,
        }
    }
}

/// How the receiver of a channel tells the sender it may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowControl {
    /// Credit based: the sender holds one credit per free flit slot of the receiver's buffer
    /// for each virtual channel; a credit returns `delay` after its flit leaves that buffer.
    Credit {
        /// Credit return delay [ps]; must be positive.
        delay: Time,
    },
    /// Flow-control tokens (IEEE 1355 DS links, `../shared/systems/ieee1355.md`): the
    /// receiver grants `grant` more flits with each token (an FCT), which it sends on the
    /// reverse channel with priority over that channel's next flit, occupying it for
    /// `token_time`; the grant lands at the sender when the token arrives. At most
    /// `max_outstanding` flits may be granted and not yet received. The channel needs one VC
    /// and a reverse channel; no trains run on it or on its reverse (tokens interleave).
    Tokens {
        /// Flits granted per token (8 on a DS link).
        grant: u32,
        /// Most flits granted but not yet received (56 on a DS link: 7 tokens).
        max_outstanding: u32,
        /// Time a token occupies the reverse channel [ps] (a 4-bit control character).
        token_time: Time,
    },
    /// No flow control: the receiver's buffer is unbounded (idealised studies).
    None,
}

impl FlowControl {
    /// The credit return delay, if credits flow back on this channel.
    pub fn credit_delay(&self) -> Option<Time> {
        match *self {
            FlowControl::Credit { delay } => Some(delay),
            // Grants return with the tokens; their time depends on the reverse channel.
            FlowControl::Tokens { token_time, .. } => Some(token_time),
            FlowControl::None => None,
        }
    }

    /// The IEEE 1355 DS link's tokens: 8 characters per FCT, at most 56 outstanding, an FCT
    /// taking `token_time` (4 bits) on the reverse channel.
    pub fn ds_link(token_time: Time) -> FlowControl {
        FlowControl::Tokens {
            grant: 8,
            max_outstanding: 56,
            token_time,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            FlowControl::Credit { .. } => "credit",
            FlowControl::Tokens { .. } => "tokens",
            FlowControl::None => "none",
        }
    }
}

/// Timing and buffering of one channel, as built from the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkParams {
    /// Time to send one flit [ps]; positive.
    pub flit_time: Time,
    /// Time to send the last flit of a packet [ps] (an end-of-packet character on a DS link);
    /// equals `flit_time` on most channels.
    pub tail_time: Time,
    /// Propagation delay after the last bit is sent [ps].
    pub latency: Time,
    /// Virtual channels (1..=64).
    pub vcs: u8,
    /// Receiver buffer per virtual channel [flits].
    pub buffer: u32,
    pub flow: FlowControl,
    /// The link removes the first header symbol (one flit) of every packet it carries: the
    /// STC104's per-link header deletion, so the next switch routes on the next byte.
    pub delete_header: bool,
    /// The clock the channel sends on, when its flit time is not a whole number of
    /// picoseconds (a byte-wide link clocked at 300 MHz moves a byte every 3333⅓ ps): each
    /// flit starts on an edge of this clock, the n-th at ⌊n·P⌋, and lasts until the next
    /// edge, so rounding never accumulates; `flit_time` (and `tail_time`, which must equal
    /// it) is then the period rounded, for what needs one number. `None`: a flit starts
    /// when its sender sends it and lasts `flit_time`.
    pub clock: Option<Clock>,
}

/// Per-flit request/acknowledge over a cable (a Mosaic channel without slack buffers): a byte
/// cannot follow until the acknowledgement of the previous one is back, so the time per
/// byte is `fixed + per_ft · cable` whenever that is longer than the channel's own byte time.
/// Applied when a channel is built ([`LinkParams::over_cable`]); the engine then sees an
/// ordinary credit channel with that flit time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    /// Per-byte time without a cable [ps].
    pub fixed: Time,
    /// Round trip of the cable per foot [ps/ft].
    pub per_ft: Time,
}

impl Handshake {
    /// Mosaic C channels: 13 ns plus 3 ns per foot (1.5 ns/ft each way)
    /// (`../shared/systems/atomic.md`, "handshake").
    pub const MOSAIC: Handshake = Handshake {
        fixed: 13_000,
        per_ft: 3_000,
    };

    /// Time per byte over `cable_mft` thousandths of a foot of cable [ps].
    /// (Saturates: a cable too long for the clock is then refused as too slow, not wrapped
    /// round to a short one.)
    pub fn cycle(&self, cable_mft: u64) -> Time {
        let t = self.fixed as u128 + self.per_ft as u128 * cable_mft as u128 / 1000;
        Time::try_from(t).unwrap_or(Time::MAX)
    }
}

impl LinkParams {
    /// This channel over a cable of `cable_mft` thousandths of a foot with handshake `h`:
    /// flit and tail times become the longer of their own and the handshake cycle.
    pub fn over_cable(self, h: Handshake, cable_mft: u64) -> LinkParams {
        let t = h.cycle(cable_mft);
        LinkParams {
            flit_time: self.flit_time.max(t),
            tail_time: self.tail_time.max(t),
            ..self
        }
    }

    /// Time to send a flit [ps], the tail flit of a packet taking the tail time.
    #[inline]
    pub fn unit_time(&self, tail: bool) -> Time {
        if tail { self.tail_time } else { self.flit_time }
    }
}

/// `"2ft"`, `"0.5 ft"` → thousandths of a foot.
pub fn parse_feet(s: &str) -> Option<u64> {
    let v = s.trim().strip_suffix("ft")?.trim();
    let x: f64 = v.parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| (x * 1000.0).round() as u64)
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            flit_time: 1_000,
            tail_time: 1_000,
            latency: 0,
            vcs: 1,
            buffer: 8,
            flow: FlowControl::Credit { delay: 1_000 },
            delete_header: false,
            clock: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_slows_long_cables_only() {
        let p = LinkParams {
            flit_time: 16_000,
            tail_time: 16_000,
            ..LinkParams::default()
        };
        let h = Handshake::MOSAIC;
        assert_eq!(p.over_cable(h, 1000).flit_time, 16_000);
        assert_eq!(p.over_cable(h, 15_000).flit_time, 58_000);
        assert_eq!(parse_feet("2.3ft"), Some(2300));
        assert_eq!(parse_feet("2 ft"), Some(2000));
        assert_eq!(parse_feet("2m"), None);
        // Past the clock's range the cycle saturates (it wrapped to a short one once).
        assert_eq!(Handshake::MOSAIC.cycle(parse_feet("1e18ft").unwrap()), Time::MAX);
    }
}

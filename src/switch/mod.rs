//! The crossbar switch: per-input-VC FIFOs, a routing stage with a delay for the head,
//! output-VC allocation with per-output round-robin arbitration (the lowest free VC, or the
//! VCs in turn per input VC as BookSim2's VC allocators give them: [`VcChoice`]), and switch
//! allocation per output channel, in wormhole, virtual cut-through or store-and-forward mode.
//!
//! The parameters are plain data here; the allocation logic that runs on the engine's arrays
//! is in [`alloc`]. Numbers (router delay, buffer depth) come from the config; the defaults
//! are the BookSim2-style reference router (a 4-cycle head pipeline folded into one routing
//! delay, DESIGN.md "Reference workloads").

pub mod alloc;
pub mod separable;

use crate::time::Time;

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
    /// Uniformly at random among the free ones (seeded per switch).
    Random,
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

//! ATOMIC's parameters and published figures, each with its source
//! (`../shared/systems/atomic.md`: Cohen, Finn, Felderman, DeSchon, "ATOMIC: A Low-Cost,
//! Very-High-Speed LAN", USC/ISI 1992).

use crate::engine::HostParams;
use crate::time::Time;

/// Per-packet processing of an HI (interrupt, pointers) [ps].
pub const HI_PER_PACKET: Time = 1_440_000;
/// Per byte at the HI's 25 MHz memory [ps].
pub const HI_PER_BYTE: Time = 20_000;
/// A forwarding node: the same per-packet processing, every byte written and read once (half
/// the memory rate) [ps/byte].
pub const NODE_PER_BYTE: Time = 40_000;
/// A node's memory for stored packets [bytes].
pub const NODE_MEMORY: u64 = 64 * 1024;
/// Nominal channel byte time: 500 Mb/s [ps].
pub const BYTE_TIME: Time = 16_000;
/// Assumed header routing per node [ps] and input buffering per channel [bytes].
pub const ROUTER_DELAY: Time = 25_000;
pub const BUFFER: u32 = 2;
/// The short ribbon cable between boards and to HIs (assumed, the spec's "2 ft").
pub const SHORT_CABLE_MFT: u64 = 2_000;

pub fn hi_costs() -> HostParams {
    HostParams {
        send_overhead: HI_PER_PACKET,
        send_per_byte: HI_PER_BYTE,
        recv_overhead: HI_PER_PACKET,
        recv_per_byte: HI_PER_BYTE,
    }
}

pub fn node_costs() -> HostParams {
    HostParams {
        send_overhead: HI_PER_PACKET,
        send_per_byte: NODE_PER_BYTE,
        recv_overhead: 0,
        recv_per_byte: 0,
    }
}

/// The measured model T(L, D) = max(1.440 + 0.020·L, (0.013 + 0.003·D)·L) µs.
pub fn t_model_us(l: f64, d_ft: f64) -> f64 {
    (1.440 + 0.020 * l).max((0.013 + 0.003 * d_ft) * l)
}

/// Table 1 (single flow): (bytes per packet, Kpkt/s, Mb/s).
pub const TABLE1: [(u32, f64, f64); 3] = [(4, 657.0, 21.0), (54, 396.0, 171.0), (1500, 31.0, 381.0)];
pub const TABLE1_SRC: &str = "ATOMIC (USC/ISI 1992) Table 1, single flow";
pub const TMODEL_SRC: &str =
    "ATOMIC T(L,D) = max(1.440+0.020L, (0.013+0.003D)L) µs, fits measurements within 1%";
/// Caltech simulations: about 50 % of the bisection capacity under random traffic.
pub const BISECTION_FRACTION: f64 = 0.5;
pub const BISECTION_SRC: &str =
    "ATOMIC §Switches: Caltech simulations, ~50% of bisection under random traffic";
/// The authors' estimate of mapping messages per Mosaic node.
pub const MSGS_PER_NODE: f64 = 20.0;
pub const MSGS_SRC: &str = "ATOMIC §AC: authors' estimate, about 20 messages per node";

//! The hardware parameters of the IEEE 1355 / Macramé model, each from
//! `../shared/systems/ieee1355.md`, and the one table of published figures reef compares
//! against. Nothing here is fitted to a published outcome.

use crate::time::Time;

/// One bit at 100 MBaud [ps].
pub const BIT: Time = 10_000;
/// A data character: parity, flag, 8 data bits (10 bits) [ps].
pub const DATA_CHAR: Time = 10 * BIT;
/// A control character (EOP, FCT): parity, flag, 2 bits (4 bits) [ps].
pub const CONTROL_CHAR: Time = 4 * BIT;
/// Propagation on the 2 m twisted-pair cables between modules [ps].
pub const CABLE: Time = 10_000;
/// Propagation on board, between a traffic node and its traffic module's STC104 [ps].
pub const ON_BOARD: Time = 1_000;
/// Characters granted per flow-control token.
pub const FCT_GRANT: u32 = 8;
/// Most characters granted and not yet received (7 FCTs).
pub const FCT_MAX_OUTSTANDING: u32 = 56;
/// STC104 ports.
pub const STC104_PORTS: u32 = 32;
/// STC104 input FIFO per link [characters] (as the Macramé group describes it).
pub const INPUT_FIFO: u32 = 32;
/// STC104 output FIFO per link [characters].
pub const OUTPUT_FIFO: u32 = 32;
/// The data sheet's alternative: buffering per link [tokens = characters].
pub const DATASHEET_TOKENS: u32 = 70;
/// Header latency of the STC104 (measured, about 1 µs), taken as the routing decision:
/// header arrival to output granted [ps].
pub const HEADER_LATENCY: Time = 1_000_000;
/// Time for the STC104 crossbar to move a data character into an output FIFO [ps]. The
/// spec says only that the characters following the header "pass at link rate"; a crossbar
/// one bit time per character never limits a link and adds 10 ns per switch.
pub const CROSSBAR_CHAR: Time = BIT;
/// A traffic node's dispatch overhead per packet, overlapping the previous send [ps].
pub const DISPATCH: Time = 650_000;
/// Traffic nodes (and link ports to the front panel) per traffic module.
pub const NODES_PER_SWITCH: u32 = 16;
/// Parallel links to each neighbour in the grid and torus.
pub const GRID_GROUP: u32 = 4;
/// Default payload [bytes].
pub const PACKET_BYTES: u32 = 64;
/// Traffic-node descriptor list length (the testbed's 8 K).
pub const DESCRIPTORS: usize = 8192;

/// Header bytes of a packet in a network of `nodes` (1 byte up to 256 nodes, 2 above).
pub fn header_bytes(nodes: u32) -> u32 {
    if nodes <= 256 { 1 } else { 2 }
}

/// The spec's link ceiling for payload `l` and header `h` bytes: one way, or with traffic
/// both ways (each direction then also carries the other's FCTs) [MB/s].
pub fn link_ceiling_mbps(l: u32, h: u32, both_ways: bool) -> f64 {
    let fct = if both_ways {
        4.0 * (l + h + 1) as f64 / 8.0
    } else {
        0.0
    };
    l as f64 / (10.0 * (l + h) as f64 + 4.0 + fct) * 100.0
}

/// The long-packet both-ways ceiling (10.5 bits per byte) [MB/s]: the rate used for the
/// theoretical cross-section.
pub fn long_packet_both_ways_mbps() -> f64 {
    100.0 / 10.5
}

/// A published figure: experiment, case (key, value as text), metric, value, source.
pub struct Published {
    pub experiment: &'static str,
    pub case: &'static [(&'static str, &'static str)],
    pub metric: &'static str,
    pub value: f64,
    pub source: &'static str,
}

/// Every published figure reef compares against (`../shared/systems/ieee1355.md`).
pub const PUBLISHED: &[Published] = &[
    Published {
        experiment: "saturation-vs-size",
        case: &[
            ("topology", "clos"),
            ("nodes", "256"),
            ("traffic", "random"),
            ("packet_bytes", "64"),
        ],
        metric: "saturation_total_MBps",
        value: 1350.0,
        source: "Zhu et al. 1998, Fig. 4 (1.35 GB/s, published as 57 %)",
    },
    Published {
        experiment: "latency-distribution",
        case: &[("topology", "clos"), ("nodes", "64"), ("load_percent", "50")],
        metric: "peak_latency_us",
        value: 12.0,
        source: "Macramé, HPCN '97 (the distribution peaks at about 12 µs)",
    },
    Published {
        experiment: "cross-section",
        case: &[("topology", "clos"), ("nodes", "256")],
        metric: "theoretical_cross_section_MBps",
        value: 2440.0,
        source: "Macramé papers (Zhu et al. 1998; HPCN '97, WoTUG-20): theoretical cross-section 2.44 GB/s",
    },
    Published {
        experiment: "cross-section",
        case: &[("topology", "grid"), ("nodes", "256")],
        metric: "theoretical_cross_section_MBps",
        value: 305.0,
        source: "Macramé papers (Zhu et al. 1998; HPCN '97, WoTUG-20): theoretical cross-section 305 MB/s",
    },
];

//! How reports present ATOMIC: its sources, what is modelled, its tolerance and its
//! parameters (the values are [`super::params`]'s).

use super::params as p;
use crate::systems::about::{DECLARED, DECLARED_SRC, Parameter, System, Tolerance};

/// The spec's own tolerance for Table 1 and T(L, D).
const FIT: &str = "the spec: T(L,D) \"fits the measurements within 1 %\"";

pub const SYSTEM: System = System {
    name: "atomic",
    title: "ATOMIC, a LAN of Mosaic chips",
    sources: "D. Cohen, G. Finn, R. Felderman, A. DeSchon, \"ATOMIC: A Low-Cost, Very-High-Speed \
              LAN\" (USC/ISI, 1992).",
    modelled: "Boards of Mosaic chips (meshes of 5-port nodes routing ΔX/ΔY offset bytes, wormhole, \
               with a per-byte request/acknowledge handshake over each cable), host interfaces on \
               their edges, boards joined by cables one or two way, ATOMIC routes that store and \
               forward a packet in a node's processor between Mosaic routes, and the Address \
               Consultant running inside the simulation: it maps a network it is not told (loop \
               probes or flooding) and hands out deadlock-free routes over it. The host-interface \
               and channel costs are T(L,D)'s, as the spec says.",
    tolerance: Tolerance {
        within: DECLARED,
        source: DECLARED_SRC,
        experiments: &[("single-flow", 0.01, FIT), ("time-per-packet", 0.01, FIT)],
    },
    parameters,
    reproduce: super::reproduce,
    cost: 60,
};

fn parameters() -> Vec<Parameter> {
    const T: &str = "ATOMIC 1992: T(L,D) (calibration, as the spec says)";
    let ns = |t: u64| format!("{} ns", t as f64 / 1e3);
    vec![
        Parameter::new(
            "host interface per packet",
            format!("{} us", p::HI_PER_PACKET as f64 / 1e6),
            T,
        ),
        Parameter::new("host interface per byte", ns(p::HI_PER_BYTE), T),
        Parameter::new(
            "channel byte time",
            format!("max({}, 13 ns + 3 ns/ft of cable)", ns(p::BYTE_TIME)),
            "ATOMIC 1992: 500 Mb/s nominal; the handshake's 13 ns + cable round trip",
        ),
        Parameter::new(
            "forwarding node",
            format!(
                "{} us + {} per byte, {} KB of memory (blocks when full)",
                p::HI_PER_PACKET as f64 / 1e6,
                ns(p::NODE_PER_BYTE),
                p::NODE_MEMORY / 1024
            ),
            "ASSUMED as the spec says: an HI's per-packet cost, half the memory rate",
        ),
        Parameter::new(
            "header routing",
            format!("{} per node", ns(p::ROUTER_DELAY)),
            "ASSUMED (not in the sources; varied in mesh-switch-sensitivity)",
        ),
        Parameter::new(
            "input buffer",
            format!("{} bytes per channel", p::BUFFER),
            "ASSUMED (not in the sources; varied in mesh-switch-sensitivity)",
        ),
        Parameter::new(
            "short cable",
            format!("{} ft", p::SHORT_CABLE_MFT as f64 / 1e3),
            "ASSUMED as the spec says (boards and HIs)",
        ),
        Parameter::new(
            "Address Consultant host",
            "20 us per packet sent or received; probes time out after 100 us",
            "ASSUMED (not in the sources)",
        ),
    ]
}

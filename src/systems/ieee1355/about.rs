//! How reports present IEEE 1355 / Macramé: its sources, what is modelled, its tolerance and
//! its parameters (the values are [`super::params`]'s).

use super::params as p;
use crate::systems::about::{DECLARED_TOLERANCE, Parameter, System};

pub const SYSTEM: System = System {
    name: "ieee1355",
    title: "IEEE 1355 DS links and CERN's Macramé testbed",
    sources: "M. Zhu, D.A. Thornley, J. Pech, B. Martin, N.H. Madsen, R. Heeley, S. Haas, R.W. \
              Dobinson, C.R. Anderson, \"Realisation and Performance of IEEE 1355 DS and HS Link \
              based, High Speed, Low Latency Packet Switching Networks\" (CERN, 1998); the Macramé \
              group's HPCN '97 and WoTUG-20 papers; the STC104 data sheet (SGS-Thomson, 1996).",
    modelled: "DS links character by character (10-bit data, 4-bit EOP and flow-control tokens \
               on the reverse channel, 8 characters a token), the STC104 32-port wormhole switch \
               (1 us header latency, 32-character FIFOs in and out, interval routing with header \
               deletion, grouped adaptive and universal routing), the testbed's traffic nodes, \
               and its networks of up to 1,024 nodes: 3-stage folded Clos, 2-D grid and torus. \
               Nothing is calibrated: every parameter comes from the hardware.",
    tolerance: DECLARED_TOLERANCE,
    parameters,
    reproduce: super::reproduce,
    cost: 200,
};

fn parameters() -> Vec<Parameter> {
    const SPEC: &str = "Zhu et al. 1998; IEEE 1355";
    let ns = |t: u64| format!("{} ns", t as f64 / 1e3);
    vec![
        Parameter::new(
            "DS link",
            format!(
                "100 MBaud: data character {}, control character {}",
                ns(p::DATA_CHAR),
                ns(p::CONTROL_CHAR)
            ),
            SPEC,
        ),
        Parameter::new(
            "flow control",
            format!(
                "a token grants {} characters, at most {} outstanding",
                p::FCT_GRANT,
                p::FCT_MAX_OUTSTANDING
            ),
            "IEEE 1355",
        ),
        Parameter::new(
            "cables",
            format!("{} between modules, {} on board", ns(p::CABLE), ns(p::ON_BOARD)),
            "ASSUMED as the spec says",
        ),
        Parameter::new(
            "STC104",
            format!(
                "{} ports, header latency {} us",
                p::STC104_PORTS,
                p::HEADER_LATENCY as f64 / 1e6
            ),
            "STC104 data sheet; latency measured by the Macramé group",
        ),
        Parameter::new(
            "STC104 FIFOs",
            format!(
                "{} characters in, {} out (data sheet: {} tokens, a sensitivity case)",
                p::INPUT_FIFO,
                p::OUTPUT_FIFO,
                p::DATASHEET_TOKENS
            ),
            "the Macramé group",
        ),
        Parameter::new(
            "crossbar",
            format!("{} a character", ns(p::CROSSBAR_CHAR)),
            "ASSUMED: never limits a link",
        ),
        Parameter::new(
            "traffic node dispatch",
            format!("{} a packet, overlapping the previous send", ns(p::DISPATCH)),
            "Zhu et al. 1998",
        ),
        Parameter::new(
            "traffic modules",
            format!(
                "{} nodes on each; grid groups of {} links",
                p::NODES_PER_SWITCH,
                p::GRID_GROUP
            ),
            SPEC,
        ),
        Parameter::new(
            "packets",
            format!(
                "{} bytes unless said; 1-byte header up to 256 nodes, 2 above",
                p::PACKET_BYTES
            ),
            SPEC,
        ),
        Parameter::new(
            "ATLAS events",
            "5 FEX an event, 16 buffers a region, fragments of 32-224 bytes",
            "ASSUMED (the event files are not published; varied in atlas-sensitivity)",
        ),
    ]
}

//! How reports present CLAN: its sources, what is modelled, its tolerance and its
//! parameters (the values are [`super::params`]'s).

use super::params as p;
use crate::systems::about::{DECLARED_TOLERANCE, Parameter, System};
use crate::time::{NS, US};

pub const SYSTEM: System = System {
    name: "clan",
    title: "CLAN, the Collapsed LAN",
    sources: "D. Riddoch, S. Pope, K. Mansley, D. Clarke, T. Mills, D. Roberts, the CLAN project \
              pages (AT&T Laboratories Cambridge, 2001), and the project's Tripwire page.",
    modelled: "The prototype (two five-port switches, 1 Gb/s links, 8 of the 12 NICs) on reef's \
               engine, with an agent for the NICs' PIO and DMA over a 33 MHz PCI bus, Tripwire (a \
               CAM that turns \"data arrived at this address\" into an event on a queue), the \
               Queue's ring with its lazy read pointer, and the hosts' select loops that poll, then \
               sleep. Gigabit Ethernet TCP and VIA are per-message and per-byte cost models. The \
               host costs are calibrated from the round-trip and transaction figures, as the spec \
               says; the copy rate is ASSUMED (no documented figure was found).",
    tolerance: DECLARED_TOLERANCE,
    parameters,
    reproduce: super::reproduce,
    cost: 5,
};

fn parameters() -> Vec<Parameter> {
    const SPEC: &str = "CLAN 2001 (the prototype)";
    const ASSUMED: &str = "ASSUMED (not published)";
    vec![
        Parameter::new(
            "fabric",
            format!(
                "{} switches of {} ports, {} NICs attached ({} built)",
                p::SWITCHES,
                p::SWITCH_PORTS,
                p::NICS_ATTACHED,
                p::NICS_BUILT
            ),
            SPEC,
        ),
        Parameter::new(
            "link",
            format!("1 Gb/s ({} ns a byte)", p::LINK_BYTE_TIME / NS),
            SPEC,
        ),
        Parameter::new(
            "application-to-application latency",
            format!("{} us", p::APP_TO_APP as f64 / US as f64),
            "CLAN 2001 (calibrates the NICs' pipeline latency)",
        ),
        Parameter::new(
            "packet overhead",
            format!("{} bytes", p::PACKET_OVERHEAD),
            ASSUMED,
        ),
        Parameter::new(
            "switch routing",
            format!("{} ns", p::SWITCH_ROUTING / NS),
            ASSUMED,
        ),
        Parameter::new(
            "PCI",
            format!(
                "33 MHz, {} bytes a data phase, {} clocks of overhead a transaction",
                p::PCI_WIDTH,
                p::PCI_OVERHEAD_CLOCKS
            ),
            ASSUMED,
        ),
        Parameter::new(
            "write combining",
            format!("{}-byte blocks, {} entries", p::WC_BLOCK, p::WRITE_BUFFER_ENTRIES),
            "Alpha 21164 Hardware Reference Manual",
        ),
        Parameter::new(
            "DMA",
            format!(
                "from {} bytes, packets of {} bytes",
                p::DMA_THRESHOLD,
                p::DMA_PACKET
            ),
            ASSUMED,
        ),
        Parameter::new(
            "Tripwire",
            format!(
                "{} ns match cycle, {} entries",
                p::TRIPWIRE_MATCH / NS,
                p::TRIPWIRE_ENTRIES
            ),
            "CLAN Tripwire page (match cycle); entries ASSUMED",
        ),
        Parameter::new(
            "Queue",
            format!("{} KB per endpoint", p::QUEUE_BYTES / 1024),
            SPEC,
        ),
        Parameter::new("poll before sleeping", format!("{} us", p::POLL_LIMIT / US), SPEC),
        Parameter::new(
            "copy rate",
            format!("{} MB/s", p::COPY_RATE / 1e6),
            p::COPY_RATE_SRC,
        ),
        Parameter::new(
            "Tripwire event, server work, interrupt + reschedule + select, NIC latency",
            "see the calibration table",
            "CALIBRATED from the round trips and transaction rates",
        ),
    ]
}

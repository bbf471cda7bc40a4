//! How reports present the Penn ATM host interface: its sources, what is modelled, its
//! tolerance and its parameters (the values are [`super::params`]'s).

use super::params as p;
use crate::systems::about::{DECLARED_TOLERANCE, Parameter, System};
use crate::time::{NS, US};

pub const SYSTEM: System = System {
    name: "atm",
    title: "The Penn ATM host interface",
    sources: "C.B.S. Traw and J.M. Smith, \"Implementation and Performance of an ATM Host Interface \
              for Workstations\" (University of Pennsylvania, 1992).",
    modelled: "An IBM RS/6000 on a SONET OC-3c ATM network through Traw and Smith's interface: the \
               write() driver copying into two pinned 64 KB kernel buffers (and two no-copy \
               what-ifs), Micro Channel streaming DMA, the segmenter, the OC-3c link with bit \
               errors injected, and the reassembler's four-stage pipeline with its two CAMs. \
               Cells are real: every AAL3/4 cell is built and checked bit for bit (HEC, CRC-10). \
               The two host costs (per-write() overhead, copy rate) are calibrated from Table I, \
               as the spec says; everything else comes from the hardware.",
    tolerance: DECLARED_TOLERANCE,
    parameters,
    reproduce: super::reproduce,
    cost: 30,
};

fn us(t: u64) -> String {
    format!("{} us", t as f64 / US as f64)
}

fn ns(t: u64) -> String {
    format!("{} ns", t / NS)
}

fn parameters() -> Vec<Parameter> {
    const PAPER: &str = "Traw & Smith 1992";
    vec![
        Parameter::new(
            "OC-3c line rate",
            format!("{} Mb/s", p::OC3C_LINE_RATE as f64 / 1e6),
            "SONET OC-3c",
        ),
        Parameter::new(
            "payload rate",
            format!(
                "{:.2} Mb/s ({} bytes per {} frame)",
                p::link_payload_mbit(),
                p::SONET_PAYLOAD_BYTES,
                us(p::SONET_FRAME)
            ),
            "SONET OC-3c",
        ),
        Parameter::new(
            "cell",
            format!(
                "{} bytes, {} of user data (AAL3/4)",
                p::CELL_BYTES,
                p::SAR_PAYLOAD_BYTES
            ),
            "ITU-T I.363 AAL3/4",
        ),
        Parameter::new("header generation", ns(p::HEADER_GENERATION), PAPER),
        Parameter::new(
            "segmenter FIFO",
            format!("{} bytes", p::SEGMENTER_FIFO_BYTES),
            "ASSUMED (not published)",
        ),
        Parameter::new(
            "cell managers",
            format!(
                "{} in parallel, {} per cell",
                p::CELL_MANAGERS,
                us(p::CELL_MANAGER_TIME)
            ),
            PAPER,
        ),
        Parameter::new("CAM look-up", ns(p::CAM_LOOKUP_TIME), PAPER),
        Parameter::new("linked-list manager", ns(p::LIST_MANAGER_TIME), PAPER),
        Parameter::new(
            "reassembly buffer write",
            ns(p::BUFFER_WRITE_TIME),
            "ASSUMED (not published)",
        ),
        Parameter::new(
            "CAM entries",
            format!("{} circuits, {} datagrams", p::CAM_CIRCUITS, p::CAM_MIDS),
            PAPER,
        ),
        Parameter::new(
            "FIFOs",
            format!(
                "{} cells before the cell managers, {} between stages",
                p::RX_FIFO_CELLS,
                p::STAGE_FIFO_CELLS
            ),
            "ASSUMED (not published)",
        ),
        Parameter::new(
            "reassembly buffer",
            format!("{} KiB", p::REASSEMBLY_BUFFER_BYTES / 1024),
            "ASSUMED (not published)",
        ),
        Parameter::new(
            "Micro Channel burst",
            format!(
                "{} bytes in {}, then {} to reload",
                p::BURST_BYTES,
                us(p::BURST_TIME),
                us(p::RELOAD_TIME)
            ),
            "Traw & Smith 1992 (logic analyser)",
        ),
        Parameter::new(
            "kernel buffers",
            format!("{} of {} KB", p::KERNEL_BUFFERS, p::KERNEL_BUFFER_BYTES / 1024),
            PAPER,
        ),
        Parameter::new(
            "per-write() overhead, copy rate",
            "see the write-size note",
            "CALIBRATED from Table I (least squares on the 7 points)",
        ),
    ]
}

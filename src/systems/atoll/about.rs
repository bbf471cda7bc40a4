//! How reports present ATOLL: its sources, what is modelled, its tolerance and its
//! parameters (the values are [`super::params`]'s).

use super::params as p;
use crate::systems::about::{DECLARED_TOLERANCE, Parameter, System};
use crate::time::{NS, US};

pub const SYSTEM: System = System {
    name: "atoll",
    title: "ATOLL, a network on a chip",
    sources: "H. Fröning, M. Nüssle, D. Slognat, P.R. Haspel, U. Brüning, \"Performance Evaluation \
              of the ATOLL Interconnect\" (University of Mannheim, 2005).",
    modelled: "The ATOLL chip on every node (four host ports, an 8×8 wormhole crossbar, four \
               byte-wide links clocked with the 300 MHz core, 27 cycles a hop), wired as a 2-D \
               torus without virtual channels and routed by routing strings placed to be free of \
               cyclic channel dependencies; the host side as PIO for small messages and DMA over \
               64-bit/100 MHz PCI-X for large ones, with a seeded model of the operating system's \
               timer noise. The software overhead per message and the DMA rate are calibrated from \
               the best start-up latency and the peak bandwidth, as the spec allows.",
    tolerance: DECLARED_TOLERANCE,
    parameters,
    reproduce: super::reproduce,
    cost: 50,
};

fn parameters() -> Vec<Parameter> {
    let noise = p::noise();
    vec![
        Parameter::new(
            "core clock",
            format!("{} MHz", p::CORE_HZ / 1_000_000),
            p::CORE_SRC,
        ),
        Parameter::new(
            "link",
            format!("one byte a core cycle ({:.3} ns) each way", p::byte_ns()),
            p::CORE_SRC,
        ),
        Parameter::new(
            "hop",
            format!(
                "{} cycles ({} ns), wormhole",
                p::HOP_CYCLES,
                p::cycles(p::HOP_CYCLES) / NS
            ),
            p::HOP_SRC,
        ),
        Parameter::new("input FIFO", format!("{} bytes", p::FIFO_BYTES), p::FIFO_SRC),
        Parameter::new(
            "credits back",
            format!("{} cycles after their byte leaves", p::CREDIT_CYCLES),
            "ASSUMED (atoll.md: reverse flow control not published)",
        ),
        Parameter::new(
            "packets",
            format!(
                "at most {} bytes of payload, {} bytes of framing",
                p::MTU,
                p::FRAMING
            ),
            p::FRAMING_SRC,
        ),
        Parameter::new(
            "PCI-X",
            format!(
                "{} bits at {} MHz, {}-byte bursts with {} extra phases",
                p::PCIX_BYTES * 8,
                p::PCIX_HZ / 1_000_000,
                p::BURST_BYTES,
                p::BURST_EXTRA_PHASES
            ),
            p::PCIX_SRC,
        ),
        Parameter::new(
            "PIO / DMA",
            format!(
                "PIO up to {} bytes; {} us to a DMA's first byte",
                p::PIO_MAX,
                p::DMA_LATENCY as f64 / US as f64
            ),
            p::HOST_SRC,
        ),
        Parameter::new(
            "noise",
            format!(
                "a timer tick every {} ms taking {}-{} us",
                noise.tick as f64 / 1e9,
                noise.tick_min as f64 / US as f64,
                noise.tick_max as f64 / US as f64
            ),
            p::NOISE_SRC,
        ),
        Parameter::new(
            "software overhead, DMA rate",
            "see the calibration table",
            "CALIBRATED from the best start-up latency and the peak bandwidth",
        ),
    ]
}

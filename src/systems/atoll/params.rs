//! ATOLL's parameters, each with its source: `../shared/systems/atoll.md`, which takes
//! them from H. Fröning, M. Nüssle, D. Slognat, P.R. Haspel, U. Brüning, "Performance
//! Evaluation of the ATOLL Interconnect" (University of Mannheim, 2005) and the project's
//! pages. What the paper does not publish is marked ASSUMED, and is varied in the
//! reproduction's sensitivity tables; what the spec lets be calibrated (the host's costs,
//! from the start-up latency and the peak bandwidth) is marked CALIBRATED and computed in
//! [`super::calibrate`], never written down here.

use crate::fabric::atoll::Chip;
use crate::fabric::{Arbitration, Selection, SwitchMode, SwitchParams, VcRelease};
use crate::fabric::{FlowControl, LinkParams};
use crate::nic::hostif::{HostIf, Noise};
use crate::time::{Clock, NS, Ratio, SEC, Time, US};

pub const SPEC: &str = "shared/systems/atoll.md";

/// The core clock of the measurements [Hz] ("all measurements below ran the core at 300
/// MHz"; designed for 250).
pub const CORE_HZ: u128 = 300_000_000;
pub const CORE_SRC: &str = "atoll.md, Chip: links clocked with the core, measured at 300 MHz";

/// The core clock: one byte per cycle per link direction, the n-th edge at ⌊n · 10⁴/3⌋ ps.
pub fn core() -> Clock {
    Clock::from_hz(Ratio::int(CORE_HZ))
}

/// `n` core cycles, to the picosecond below: ⌊n·P⌋, the n-th edge (with sends on the
/// edges, a delay of n cycles after an edge ends at the n-th edge after it).
pub fn cycles(n: u64) -> Time {
    core().edge(n)
}

/// Core cycles from a byte entering a chip's link input to leaving its link output: the
/// whole of a hop (90 ns at 300 MHz), most of it resynchronising the data to the core.
pub const HOP_CYCLES: u64 = 27;
pub const HOP_SRC: &str =
    "atoll.md, Chip: 27 core clock ticks from link input to link output, 90 ns at 300 MHz";

/// Bytes of the FIFO in front of the crossbar on each input (ASSUMED: not published). At
/// least a credit's round trip (28 cycles) of bytes, so one packet keeps a link busy.
pub const FIFO_BYTES: u32 = 64;
pub const FIFO_SRC: &str = "ASSUMED (atoll.md: input FIFO depth not published)";

/// A credit's way back (ASSUMED: the reverse flow control is not published): the
/// flow-control signal crosses the cable and the sender's synchroniser, as a byte crosses
/// a hop.
pub const CREDIT_CYCLES: u64 = HOP_CYCLES;
/// On the chip, between a host port and the crossbar (ASSUMED).
pub const HOST_CREDIT_CYCLES: u64 = 1;

/// Most payload bytes of one packet (ASSUMED: not published); a message is cut into
/// packets of at most this.
pub const MTU: u32 = 1024;
/// Bytes a packet carries besides its payload and routing string (ASSUMED: a 4-byte header
/// and a 4-byte CRC).
pub const FRAMING: u32 = 8;
pub const FRAMING_SRC: &str = "ASSUMED (atoll.md: packet framing and maximum size not published)";

/// The measured nodes' I/O bus: 64-bit PCI-X at 100 MHz, 800 MB/s peak.
pub const PCIX_HZ: u64 = 100_000_000;
pub const PCIX_BYTES: u64 = 8;
pub const PCIX_SRC: &str = "atoll.md, Chip: 64-bit PCI-X at 100 MHz, 800 MB/s peak";

/// One PCI-X burst of 64 bytes (a write-combined cache line): 8 data phases and, ASSUMED,
/// 4 more (address, attribute, turnaround, wait) — 120 ns, 533 MB/s. PIO writes from the
/// CPU and the NIC's posted writes into host memory both move at this rate.
pub const BURST_BYTES: u64 = 64;
pub const BURST_EXTRA_PHASES: u64 = 4;

/// Time per byte of burst-wise PCI-X writes [ps/byte], rounded to the picosecond.
pub fn pcix_write_per_byte() -> Time {
    let phases = BURST_BYTES / PCIX_BYTES + BURST_EXTRA_PHASES;
    let burst = phases * SEC / PCIX_HZ;
    (burst + BURST_BYTES / 2) / BURST_BYTES
}

/// Messages of up to this many bytes go by PIO, larger ones by DMA (ASSUMED: not
/// published).
pub const PIO_MAX: u32 = 256;
/// From the CPU posting a DMA message to its first byte at the NIC (ASSUMED: a PCI-X read
/// request, the host bridge's latency and the first split completion).
pub const DMA_LATENCY: Time = US;
pub const HOST_SRC: &str =
    "ASSUMED (atoll.md: PIO/DMA threshold and PCI-X latencies not published; burst overhead 4 phases)";

/// Operating-system noise on the measured hosts (ASSUMED: the paper plots the variation,
/// not its cause): Linux's timer tick at 1 kHz (HZ = 1000, the 2.6 kernels of 2004–05), each
/// tick's interrupt taking 1–3 µs.
pub fn noise() -> Noise {
    Noise {
        tick: SEC / 1000,
        tick_min: US,
        tick_max: 3 * US,
        rate_hz: 0.0,
        other_min: 0,
        other_max: 0,
    }
}
pub const NOISE_SRC: &str = "ASSUMED: a 1 kHz timer tick (HZ = 1000), each interrupt 1-3 us, uniform";

/// The chip with input FIFOs of `fifo` bytes.
pub fn chip(fifo: u32) -> Chip {
    chip_with(fifo, CREDIT_CYCLES)
}

/// The chip with input FIFOs of `fifo` bytes, a link's credits back after `credit` cycles.
pub fn chip_with(fifo: u32, credit: u64) -> Chip {
    let clock = core();
    let byte = clock.period().round();
    let link = LinkParams {
        flit_time: byte,
        tail_time: byte,
        latency: 0,
        vcs: 1,
        buffer: fifo,
        flow: FlowControl::Credit {
            delay: cycles(credit),
        },
        delete_header: false,
        clock: Some(clock),
    };
    Chip {
        link,
        host: LinkParams {
            flow: FlowControl::Credit {
                delay: cycles(HOST_CREDIT_CYCLES),
            },
            ..link
        },
        switch: SwitchParams {
            // The byte's own cycle on the link is the first of the hop's 27.
            router_delay: cycles(HOP_CYCLES - 1),
            mode: SwitchMode::Wormhole,
            selection: Selection::FirstFree,
            arbitration: Arbitration::RoundRobin,
            speedup: 1,
            release: VcRelease::Tail,
        },
    }
}

/// The host interface with the given calibrated costs: software overhead per message at
/// each end (`overhead`, split evenly between sender and receiver: ASSUMED) and the DMA
/// engine's time per byte.
pub fn host(overhead: Time, dma_per_byte: Time, noise: Option<Noise>) -> HostIf {
    HostIf {
        mtu: MTU,
        framing: FRAMING,
        send_overhead: overhead / 2,
        pio_max: PIO_MAX,
        pio_per_byte: pcix_write_per_byte(),
        dma_latency: DMA_LATENCY,
        dma_per_byte,
        rx_per_byte: pcix_write_per_byte(),
        recv_overhead: overhead - overhead / 2,
        noise,
    }
}

/// The published figures the reproduction compares against.
pub const STARTUP_AVG_US: f64 = 3.4;
pub const STARTUP_BEST_US: f64 = 3.34;
pub const STARTUP_SRC: &str = "atoll.md, published: start-up latency, 1 hop, 3.4 us on average, best 3.34 us";
pub const PEAK_MBPS: f64 = 269.0;
pub const PEAK_SIZE: u64 = 32 * 1024;
pub const PEAK_SRC: &str =
    "atoll.md, published: peak bandwidth 269 MB/s, reached at 32 KB messages, flat beyond";
pub const HOP_NS: f64 = 90.0;
pub const HOP_COST_SRC: &str = "atoll.md, published: per-hop cost 90 ns (6 intermediate NICs for 7 hops)";

/// One byte at the core clock [ps], for reports.
pub fn byte_ns() -> f64 {
    core().period().to_f64() / NS as f64
}

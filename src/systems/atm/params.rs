//! Every parameter of the Penn ATM host interface model, each with its source, and the one
//! table of published figures the reproduction compares against.
//!
//! Source of everything marked "spec": C.B.S. Traw and J.M. Smith, "Implementation and
//! Performance of an ATM Host Interface for Workstations" (University of Pennsylvania, 1992),
//! as summarised in `shared/systems/atm.md`. Parameters the paper does not publish are marked
//! ASSUMED with the reason for the value. The two host costs (per-`write()` overhead and copy
//! rate) are not here: the spec asks for them to be calibrated from Table I, which
//! [`super::calibrate`] does.

use crate::time::{Clock, NS, Ratio, SEC, Time, US};

// ---------------------------------------------------------------------------------------------
// Link: SONET OC-3c.

/// OC-3c line rate [b/s] (spec, "Link").
pub const OC3C_LINE_RATE: u64 = 155_520_000;
/// Payload bytes of one SONET STS-3c frame available to cells [bytes] (spec: 2,340 per frame).
pub const SONET_PAYLOAD_BYTES: u64 = 2_340;
/// One SONET frame [ps] (spec: 125 µs).
pub const SONET_FRAME: Time = 125 * US;
/// Bytes of a cell on the line [bytes].
pub const CELL_BYTES: u64 = 53;
/// Bytes of user data an AAL3/4 cell carries [bytes] (spec: 44 payload bytes per cell).
pub const SAR_PAYLOAD_BYTES: u64 = 44;

/// Cells per second on OC-3c, exact: 2,340 bytes per 125 µs over 53-byte cells
/// = 18,720,000/53 = 353,207.547… cells/s. The spec's 353,207.5 is this figure rounded; the
/// exact value is used so that the slot clock agrees with the 149.76 Mb/s payload rate.
pub fn cell_rate() -> Ratio {
    Ratio::new(
        u128::from(SONET_PAYLOAD_BYTES) * u128::from(SEC),
        u128::from(SONET_FRAME) * u128::from(CELL_BYTES),
    )
}

/// The OC-3c cell-slot clock: slot n starts at ⌊n·P⌋ ps with P = 2.8312 µs, so rounding never
/// accumulates over millions of cells.
pub fn cell_clock() -> Clock {
    Clock::from_hz(cell_rate())
}

/// Payload rate of the link [Mb/s]: 149.76.
pub fn link_payload_mbit() -> f64 {
    (SONET_PAYLOAD_BYTES * 8) as f64 / (SONET_FRAME as f64 / SEC as f64) / 1e6
}

/// ASSUMED: fibre propagation between the two interfaces [ps]. The testbed's cable length is
/// not published; a back-to-back lab link adds a fixed delay that changes no rate.
pub const PROPAGATION: Time = 0;

// ---------------------------------------------------------------------------------------------
// Segmenter (transmit).

/// Header generator: HEC and ATM/AAL headers of a cell [ps] (spec: 5 clock cycles, 250 ns).
pub const HEADER_GENERATION: Time = 250 * NS;
/// ASSUMED: the segmenter's input FIFO [bytes]. Not published; 512 words of 32 bits, the size
/// of a common FIFO part of the time. It must hold at least a bus burst and a cell (108 bytes);
/// above that it changes only how long the bus runs ahead of the link at the start of a frame.
pub const SEGMENTER_FIFO_BYTES: u64 = 2_048;

// ---------------------------------------------------------------------------------------------
// Reassembler (receive): the four-stage pipeline.

/// Cell manager: HEC and CRC-10 checks, VCI/MID/length extraction [ps] (spec: 2.6 µs per cell).
pub const CELL_MANAGER_TIME: Time = 2_600 * NS;
/// Cell managers working in parallel (spec: "assume enough (five) that they are not the
/// bottleneck, as the authors concluded").
pub const CELL_MANAGERS: usize = 5;
/// CAM look-up controller [ps] (spec: up to 11 clocks, 550 ns).
pub const CAM_LOOKUP_TIME: Time = 550 * NS;
/// Linked-list manager [ps] (spec: up to 12 clocks, 600 ns, from simulation).
pub const LIST_MANAGER_TIME: Time = 600 * NS;
/// ASSUMED: reassembly buffer controller, writing a cell body from the FIFO into the
/// dual-ported buffer [ps]. The spec gives no time ("—"). Assumed: the 44-byte body moves
/// 32 bits per clock of the 50 ns clock the other stages count in (11 clocks of 50 ns are the
/// CAM's 550 ns), 11 words = 550 ns. It is not the bottleneck either way; it adds to latency.
pub const BUFFER_WRITE_TIME: Time = 11 * 50 * NS;
/// Virtual circuits in reassembly at once (spec: CAM of 256).
pub const CAM_CIRCUITS: usize = 256;
/// Datagrams (MIDs) in reassembly at once (spec: CAM of 256).
pub const CAM_MIDS: usize = 256;
/// ASSUMED: cells the receive FIFO in front of the cell managers holds [cells]. Not published.
/// The link cannot be held back, so a cell finding it full is lost; at OC-3c it never fills
/// (every stage is faster than a cell slot).
pub const RX_FIFO_CELLS: usize = 16;
/// ASSUMED: cells each FIFO between two pipeline stages holds [cells]. Not published; a stage
/// whose output FIFO is full holds its cell (blocking after service).
pub const STAGE_FIFO_CELLS: usize = 4;
/// ASSUMED: the dual-ported reassembly buffer [bytes]. Not published; 256 KiB holds four
/// largest frames. A cell that finds it full is discarded (its frame then fails its CS check).
pub const REASSEMBLY_BUFFER_BYTES: u64 = 256 * 1024;

// ---------------------------------------------------------------------------------------------
// Host bus and driver.

/// Bytes one Micro Channel streaming burst moves (spec: sixteen 32-bit words).
pub const BURST_BYTES: u64 = 64;
/// Time of one 16-word burst [ps] (spec: 1.6 µs, measured with a logic analyser).
pub const BURST_TIME: Time = 1_600 * NS;
/// Time to reload the I/O channel controller's buffers after a burst [ps] (spec: 2.0 µs).
pub const RELOAD_TIME: Time = 2_000 * NS;
/// Pinned kernel buffers of the copy driver (spec: two).
pub const KERNEL_BUFFERS: usize = 2;
/// Size of each pinned kernel buffer [bytes] (spec: 64 KB).
pub const KERNEL_BUFFER_BYTES: u64 = 64 * 1024;
/// ASSUMED: transfers the no-copy fault-on-write driver keeps outstanding (one streaming, one
/// set up behind it), the same two slots as the copy driver's two buffers. Not published; with
/// the bus the bottleneck it changes when `write()` returns, not the rate.
pub const FAULT_ON_WRITE_SLOTS: usize = 2;

/// Bits written in each Table I run (spec: 67.1 Mbit = 2²⁶ bits).
pub const TABLE_I_BITS: u64 = 1 << 26;
/// Bytes written in each Table I run [bytes]: 8 MiB.
pub const TABLE_I_BYTES: u64 = TABLE_I_BITS / 8;

// ---------------------------------------------------------------------------------------------
// Published figures: the one table the reports compare against.

/// One row of Table I: 67.1 Mbit written with `write()` calls of `buffer_kb` KB on an RS/6000
/// model 320, host → interface (the link was not in the path).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableIRow {
    /// `write()` size [KB of 1,024 bytes].
    pub buffer_kb: u64,
    /// Elapsed time [s].
    pub elapsed_s: f64,
    /// Bandwidth as printed [Mb/s] (67.1 Mbit / elapsed).
    pub mbit_per_s: f64,
}

impl TableIRow {
    /// `write()` size [bytes].
    pub const fn bytes(&self) -> u64 {
        self.buffer_kb * 1024
    }
}

/// A published figure with its unit and where it comes from.
pub use crate::systems::Figure;

/// Every published figure of the Penn interface that the reproduction compares against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Published {
    /// Table I.
    pub table_i: [TableIRow; 7],
    /// Where Table I comes from.
    pub table_i_source: &'static str,
    /// Highest rate the Micro Channel's streaming duty cycle allows.
    pub duty_cycle_ceiling: Figure,
    /// Best sustained streaming rate, measured with a faster, unstable driver.
    pub sustained: Figure,
    /// Reassembler pipeline bandwidth on 53-byte cells.
    pub reassembler_rate: Figure,
    /// Per-cell latency through the reassembler.
    pub reassembler_latency: Figure,
    /// OC-3c payload rate.
    pub link_payload: Figure,
    /// OC-3c cell rate.
    pub link_cell_rate: Figure,
}

/// The published figures (spec: `shared/systems/atm.md`).
pub const PUBLISHED: Published = Published {
    table_i: [
        TableIRow {
            buffer_kb: 1,
            elapsed_s: 2.88,
            mbit_per_s: 23.3,
        },
        TableIRow {
            buffer_kb: 2,
            elapsed_s: 1.65,
            mbit_per_s: 40.7,
        },
        TableIRow {
            buffer_kb: 4,
            elapsed_s: 1.03,
            mbit_per_s: 65.1,
        },
        TableIRow {
            buffer_kb: 8,
            elapsed_s: 0.76,
            mbit_per_s: 88.3,
        },
        TableIRow {
            buffer_kb: 16,
            elapsed_s: 0.71,
            mbit_per_s: 94.5,
        },
        TableIRow {
            buffer_kb: 32,
            elapsed_s: 0.65,
            mbit_per_s: 103.2,
        },
        TableIRow {
            buffer_kb: 64,
            elapsed_s: 0.58,
            mbit_per_s: 115.7,
        },
    ],
    table_i_source: "Traw & Smith 1992, Table I (RS/6000 320, 67.1 Mbit via write())",
    duty_cycle_ceiling: Figure {
        value: 142.0,
        unit: "Mb/s",
        source: "Traw & Smith 1992: Micro Channel duty cycle, \"a little under 142 Mb/s\"",
    },
    sustained: Figure {
        value: 130.0,
        unit: "Mb/s",
        source: "Traw & Smith 1992: best sustained streaming, faster unstable driver",
    },
    reassembler_rate: Figure {
        value: 700.0,
        unit: "Mb/s",
        source: "Traw & Smith 1992: reassembler \"about 700 Mb/s\" (53-byte cells)",
    },
    reassembler_latency: Figure {
        value: 4.0,
        unit: "us",
        source: "Traw & Smith 1992: reassembler latency \"about 4 us\" per cell",
    },
    link_payload: Figure {
        value: 149.76,
        unit: "Mb/s",
        source: "SONET OC-3c: 2,340 payload bytes per 125 us frame",
    },
    link_cell_rate: Figure {
        value: 353_207.5,
        unit: "cells/s",
        source: "SONET OC-3c: 149.76 Mb/s over 53-byte cells (spec, rounded)",
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_rates_follow_from_the_sonet_frame() {
        assert!((link_payload_mbit() - 149.76).abs() < 1e-9);
        let cells = cell_rate().to_f64();
        assert!((cells - PUBLISHED.link_cell_rate.value).abs() < 0.05, "{cells}");
        // 2.8312 µs per slot, and the millionth slot lands where the exact rate puts it.
        let clock = cell_clock();
        assert_eq!(clock.edge(1), 2_831_196);
        let exact = 1_000_000.0 / cells * SEC as f64;
        assert!((clock.edge(1_000_000) as f64 - exact).abs() <= 1.0);
    }

    #[test]
    fn table_i_bandwidths_are_the_bits_over_the_time() {
        for row in PUBLISHED.table_i {
            let mbit = TABLE_I_BITS as f64 / row.elapsed_s / 1e6;
            assert!((mbit - row.mbit_per_s).abs() < 0.06, "{row:?}: {mbit}");
            assert_eq!(TABLE_I_BYTES % row.bytes(), 0);
        }
    }
}

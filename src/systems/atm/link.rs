//! The SONET OC-3c link between two Penn interfaces: one 53-byte cell per slot of 2.8312 µs
//! (353,207.5 cells/s, 149.76 Mb/s of payload: spec, "Link"), slot n starting at ⌊n·P⌋ ps on
//! an exact [`Clock`], and random bit errors on the cells' bits.
//!
//! Bit errors follow the binary symmetric channel the analytical rates in
//! `protocol::atm::bit_errors` assume: every bit of every cell is flipped independently with
//! probability p. Rather than drawing 424 times per cell, the gap to the next flipped bit is
//! drawn from the geometric distribution, which is the same process; every draw comes from one
//! seeded stream, so a run repeats bit for bit. SONET framing overhead and scrambling are not
//! modelled: the bit error rate is a rate on cell bits.

use thiserror::Error;

use crate::protocol::atm::CELL_BYTES;
use crate::rng::Stream;
use crate::time::{Clock, Time};

use super::params::{PROPAGATION, cell_clock};

/// Bits in a cell.
pub const CELL_BITS: u64 = CELL_BYTES as u64 * 8;

/// The cell slots of one direction of an OC-3c link.
#[derive(Debug, Clone)]
pub struct Link {
    clock: Clock,
    next_slot: u64,
    cells: u64,
}

impl Default for Link {
    fn default() -> Self {
        Link::new()
    }
}

impl Link {
    /// An idle link whose slot 0 starts at time 0.
    pub fn new() -> Link {
        Link {
            clock: cell_clock(),
            next_slot: 0,
            cells: 0,
        }
    }

    /// Sends a cell that is ready at `ready` in the first free slot that starts at or after
    /// it; returns the slot.
    pub fn send(&mut self, ready: Time) -> u64 {
        let slot = self.next_slot.max(self.clock.edge_at_or_after(ready));
        self.next_slot = slot + 1;
        self.cells += 1;
        slot
    }

    /// Start of slot `n`: the cell leaves the segmenter's FIFO [ps].
    pub fn slot_start(&self, n: u64) -> Time {
        self.clock.edge(n)
    }

    /// When the cell sent in slot `n` has wholly arrived at the far end [ps].
    pub fn arrival(&self, n: u64) -> Time {
        self.clock.edge(n + 1) + PROPAGATION
    }

    /// Cells sent.
    pub fn cells(&self) -> u64 {
        self.cells
    }

    /// Time `n` slots take [ps] (from slot 0).
    pub fn slots_time(&self, n: u64) -> Time {
        self.clock.edge(n)
    }
}

/// A bit error rate outside [0, 1).
#[derive(Debug, Clone, Copy, PartialEq, Error)]
#[error("bit error rate {0} is not in [0, 1)")]
pub struct BadRate(pub f64);

/// Flips bits of the cells that cross the link at a given bit error rate.
#[derive(Debug, Clone)]
pub struct BitErrors {
    p: f64,
    stream: Stream,
    /// Index of the next bit to flip, counted over every bit sent [bits].
    next_error: u64,
    /// Bits sent [bits].
    bits: u64,
    /// Bits flipped.
    flips: u64,
    /// Cells with at least one flipped bit.
    cells_hit: u64,
    /// Cells with four or more flipped bits (the checks' distance is 4).
    cells_four_plus: u64,
}

impl BitErrors {
    /// Errors at rate `p` [errors per bit], drawn from `stream`.
    pub fn new(p: f64, stream: Stream) -> Result<BitErrors, BadRate> {
        if !(0.0..1.0).contains(&p) {
            return Err(BadRate(p));
        }
        let mut e = BitErrors {
            p,
            stream,
            next_error: u64::MAX,
            bits: 0,
            flips: 0,
            cells_hit: 0,
            cells_four_plus: 0,
        };
        e.next_error = e.gap(0);
        Ok(e)
    }

    /// Index of the first error at or after bit `from`.
    fn gap(&mut self, from: u64) -> u64 {
        if self.p == 0.0 {
            return u64::MAX;
        }
        // geometric counts trials up to and including the first error (≥ 1).
        from.saturating_add(self.stream.geometric(self.p) - 1)
    }

    /// Passes one cell over the link, flipping its bits (most significant bit of byte 0 first,
    /// the order they leave on the line); returns how many were flipped.
    pub fn pass(&mut self, cell: &mut [u8; CELL_BYTES]) -> u32 {
        let end = self.bits + CELL_BITS;
        let mut flipped = 0;
        while self.next_error < end {
            let bit = self.next_error - self.bits;
            cell[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
            flipped += 1;
            self.next_error = self.gap(self.next_error + 1);
        }
        self.bits = end;
        self.flips += u64::from(flipped);
        self.cells_hit += u64::from(flipped > 0);
        self.cells_four_plus += u64::from(flipped >= 4);
        flipped
    }

    /// Bits sent [bits].
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Bits flipped.
    pub fn flips(&self) -> u64 {
        self.flips
    }

    /// Cells with at least one flipped bit.
    pub fn cells_hit(&self) -> u64 {
        self.cells_hit
    }

    /// Cells with four or more flipped bits.
    pub fn cells_four_plus(&self) -> u64 {
        self.cells_four_plus
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    #[test]
    fn cells_take_the_next_free_slot() {
        let mut link = Link::new();
        assert_eq!(link.send(0), 0);
        assert_eq!(link.send(0), 1);
        // Ready in the middle of slot 5: waits for slot 6.
        let mid5 = link.slot_start(5) + 1;
        assert_eq!(link.send(mid5), 6);
        assert_eq!(link.send(link.slot_start(6)), 7);
        assert_eq!(link.arrival(7), link.slot_start(8));
        assert_eq!(link.cells(), 4);
    }

    #[test]
    fn error_counts_follow_the_rate() {
        let p = 1e-3;
        let mut e = BitErrors::new(p, Stream::new(9, Purpose::Setup, 1)).unwrap();
        let mut cell = [0u8; CELL_BYTES];
        let mut ones = 0u64;
        for _ in 0..100_000 {
            cell.fill(0);
            let n = e.pass(&mut cell);
            let set: u32 = cell.iter().map(|b| b.count_ones()).sum();
            assert_eq!(set, n);
            ones += u64::from(set);
        }
        let expect = p * e.bits() as f64;
        assert_eq!(ones, e.flips());
        // Within five standard deviations of the binomial count.
        assert!(
            (ones as f64 - expect).abs() < 5.0 * expect.sqrt(),
            "{ones} vs {expect}"
        );
        // P(cell hit) = 1 − (1 − p)^424.
        let hit = 1.0 - (1.0 - p).powi(424);
        let h = e.cells_hit() as f64 / 100_000.0;
        assert!(
            (h - hit).abs() < 5.0 * (hit * (1.0 - hit) / 1e5).sqrt(),
            "{h} vs {hit}"
        );
    }

    #[test]
    fn zero_rate_flips_nothing_and_bad_rates_are_refused() {
        let mut e = BitErrors::new(0.0, Stream::new(1, Purpose::Setup, 0)).unwrap();
        let mut cell = [0xA5u8; CELL_BYTES];
        for _ in 0..1000 {
            assert_eq!(e.pass(&mut cell), 0);
        }
        assert_eq!(cell, [0xA5u8; CELL_BYTES]);
        assert!(BitErrors::new(1.0, Stream::new(1, Purpose::Setup, 0)).is_err());
        assert!(BitErrors::new(-1e-9, Stream::new(1, Purpose::Setup, 0)).is_err());
        assert!(BitErrors::new(f64::NAN, Stream::new(1, Purpose::Setup, 0)).is_err());
    }
}

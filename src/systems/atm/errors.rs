//! Bit errors on the link against the Penn interface's checks (spec, "Experiments": errors):
//! real AAL3/4 cells from `protocol::atm::aal34::Segmenter` cross a link that flips bits at a
//! given rate ([`super::link::BitErrors`]); the receiver is `protocol::atm::aal34::Reassembler`
//! as the Penn hardware runs it (HEC for detection only, CRC-10, sequence numbers ignored,
//! 256 + 256 CAM entries). Every delivered frame is compared with the frame sent.
//!
//! Workload: one circuit and MID, frames alternating between 36 bytes (one cell, SSM) and 124
//! bytes (three cells: BOM, COM, EOM), sent back to back. The single-cell frames make
//! undetected errors observable at high error rates (a longer frame almost never arrives with
//! every cell passing); the three-cell frames exercise lost BOM, COM and EOM. The receiving
//! host flushes any reassembly on a circuit or MID it did not open (a cell whose header or MID
//! was damaged into another valid one), as the Penn host can.
//!
//! Two comparisons with `protocol::atm::bit_errors`:
//! - per cell: cells that passed both HEC and CRC-10 with damage, against
//!   `cell_error_rates(p).cell_undetected` (the exact code-weight analysis);
//! - per frame: corrupt frames delivered on the frame's own circuit and MID, against
//!   `aal34_frame_undetected(p, len)` averaged over the frames sent. That formula counts a
//!   header damaged into another valid header as a lost cell, and every undetected SAR-PDU
//!   error as delivered, though one that changes ST, MID, LI or the CS-PDU's own fields is
//!   caught by the reassembler: it is an upper bound on what the simulation can show.
//!   Frames delivered on another circuit or MID are counted apart (misdelivered).

use thiserror::Error;

use crate::protocol::atm::aal34::{
    Reassembler, ReassemblerConfig, ReassemblyError, SarError, SegmentError, Segmenter, cell_count,
};
use crate::protocol::atm::bit_errors::{BitErrorError, aal34_frame_undetected, cell_error_rates};
use crate::protocol::atm::crc::crc10;
use crate::protocol::atm::{CELL_BYTES, CellError, HEADER_BYTES, hec};
use crate::rng::Stream;

use super::end_to_end::{CIRCUIT, MID, fill_random};
use super::link::{BadRate, BitErrors};

/// The frame sizes the error workload alternates between [bytes].
pub const FRAME_SIZES: [usize; 2] = [36, 124];

/// Why an error run could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
pub enum ErrorRunError {
    #[error(transparent)]
    Rate(#[from] BadRate),
    #[error(transparent)]
    Analytical(#[from] BitErrorError),
    #[error(transparent)]
    Segment(#[from] SegmentError),
}

/// What bit errors at one rate did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorRun {
    /// Bit error rate [errors/bit].
    pub bit_error_rate: f64,
    pub frames_sent: u64,
    pub cells_sent: u64,
    pub bits_sent: u64,
    /// Bits flipped on the link.
    pub bits_flipped: u64,
    /// Cells with at least one flipped bit.
    pub cells_hit: u64,
    /// Cells with four or more flipped bits.
    pub cells_four_plus: u64,
    /// Cells discarded by the HEC.
    pub dropped_hec: u64,
    /// Cells discarded by the SAR-PDU checks (CRC-10, or an illegal LI).
    pub dropped_sar: u64,
    /// Valid cells (HEC passed) that were not user data: a header damaged undetected.
    pub dropped_not_user: u64,
    /// Cells that passed HEC and CRC-10 although damaged (undetected at the cell level).
    pub cells_undetected: u64,
    /// Frames delivered equal to what was sent.
    pub frames_intact: u64,
    /// Frames delivered on their own circuit and MID with different data.
    pub frames_corrupt_own: u64,
    /// Frames delivered on another circuit or MID.
    pub frames_misdelivered: u64,
    /// Frames sent that were delivered neither intact nor corrupt.
    pub frames_dropped: u64,
    /// Reassemblies the host flushed (opened by a damaged cell on a circuit or MID not in use).
    pub flushes: u64,
    /// Analytical probability that a damaged cell passes both checks.
    pub cell_undetected_analytical: f64,
    /// Analytical rate of corrupt frames delivered, averaged over the frames sent.
    pub frame_undetected_analytical: f64,
}

impl ErrorRun {
    /// Cells dropped by the checks (HEC, CRC-10 and LI).
    pub fn cells_dropped(&self) -> u64 {
        self.dropped_hec + self.dropped_sar
    }

    /// Corrupt frames delivered, misdelivered ones included.
    pub fn frames_delivered_corrupt(&self) -> u64 {
        self.frames_corrupt_own + self.frames_misdelivered
    }

    /// Simulated rate of corrupt frames delivered on their own circuit and MID (what the
    /// analytical frame rate estimates).
    pub fn frame_undetected_simulated(&self) -> f64 {
        self.frames_corrupt_own as f64 / self.frames_sent.max(1) as f64
    }

    /// Simulated rate of damaged cells passing both checks.
    pub fn cell_undetected_simulated(&self) -> f64 {
        self.cells_undetected as f64 / self.cells_sent.max(1) as f64
    }
}

/// Sends at least `cells` cells at bit error rate `p`; frame data comes from `data`, the
/// errors from `errors`.
pub fn run(p: f64, cells: u64, mut data: Stream, errors: Stream) -> Result<ErrorRun, ErrorRunError> {
    let mut link = BitErrors::new(p, errors)?;
    let mut segmenter = Segmenter::new(CIRCUIT, MID)?;
    let mut reassembler = Reassembler::new(ReassemblerConfig::PENN);
    let mut r = ErrorRun {
        bit_error_rate: p,
        cell_undetected_analytical: cell_error_rates(p)?.cell_undetected,
        ..ErrorRun::default()
    };
    let per_cycle: u64 = FRAME_SIZES.iter().map(|&f| cell_count(f) as u64).sum();
    let cycles = cells.div_ceil(per_cycle);
    let mut frames: Vec<Vec<u8>> = FRAME_SIZES.iter().map(|&f| vec![0u8; f]).collect();
    let mut analytical = 0.0;
    for &f in &FRAME_SIZES {
        analytical += aal34_frame_undetected(p, f)?;
    }
    for _ in 0..cycles {
        for frame in frames.iter_mut() {
            fill_random(&mut data, frame);
            // 0: nothing delivered yet; 1: delivered intact; 2: delivered corrupt.
            let mut fate = 0u8;
            for sent in segmenter.segment(frame)? {
                let mut cell = sent;
                if link.pass(&mut cell) > 0 && passes_checks(&cell) {
                    r.cells_undetected += 1;
                }
                let delivery = reassembler.push_cell(&cell);
                match delivery.outcome {
                    Ok(None) => {}
                    Ok(Some(f)) => {
                        if f.circuit != CIRCUIT || f.mid != MID {
                            r.frames_misdelivered += 1;
                            fate = fate.max(2);
                        } else if f.data == *frame {
                            fate = 1;
                        } else {
                            r.frames_corrupt_own += 1;
                            fate = fate.max(2);
                        }
                    }
                    Err(ReassemblyError::Cell(CellError::HecMismatch { .. })) => r.dropped_hec += 1,
                    Err(ReassemblyError::Cell(CellError::NotUserData { .. })) => r.dropped_not_user += 1,
                    Err(ReassemblyError::Sar {
                        error: SarError::Crc { .. } | SarError::LengthIndicator { .. },
                        ..
                    }) => r.dropped_sar += 1,
                    // Losses seen at the reassembly level (COM or EOM without BOM, CS-PDU
                    // checks): their frame is dropped; counted through the frame's fate.
                    Err(_) => {}
                }
                // The host knows the one reassembly it expects; anything else was opened by
                // a damaged cell and would hold a CAM entry for ever.
                if reassembler.in_progress() > 1
                    || (reassembler.in_progress() == 1 && reassembler.active().any(|k| k != (CIRCUIT, MID)))
                {
                    let stale: Vec<_> = reassembler.active().filter(|&k| k != (CIRCUIT, MID)).collect();
                    for (c, m) in stale {
                        r.flushes += u64::from(reassembler.flush_mid(c, m));
                    }
                }
            }
            r.frames_sent += 1;
            r.frames_intact += u64::from(fate == 1);
            r.frames_dropped += u64::from(fate == 0);
        }
    }
    // Every size is sent equally often.
    r.frame_undetected_analytical = analytical / FRAME_SIZES.len() as f64;
    r.cells_sent = link.bits() / super::link::CELL_BITS;
    r.bits_sent = link.bits();
    r.bits_flipped = link.flips();
    r.cells_hit = link.cells_hit();
    r.cells_four_plus = link.cells_four_plus();
    Ok(r)
}

/// Whether a cell's header passes the HEC and its SAR-PDU the CRC-10.
fn passes_checks(cell: &[u8; CELL_BYTES]) -> bool {
    let header = [cell[0], cell[1], cell[2], cell[3]];
    hec(&header) == cell[4] && crc10(&cell[HEADER_BYTES..]) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    fn streams(i: u64) -> (Stream, Stream) {
        (
            Stream::new(5, Purpose::Setup, i),
            Stream::new(5, Purpose::Setup, 1000 + i),
        )
    }

    #[test]
    fn no_errors_no_losses() {
        let (d, e) = streams(0);
        let r = run(0.0, 4_000, d, e).unwrap();
        assert_eq!(r.frames_sent, 2_000);
        assert_eq!(r.frames_intact, 2_000);
        assert_eq!(r.cells_sent, 4_000);
        assert_eq!(
            (r.cells_dropped(), r.frames_dropped, r.frames_delivered_corrupt()),
            (0, 0, 0)
        );
    }

    /// At 10⁻⁴ about 4 % of cells are hit, nearly all by one bit: every one is caught, and
    /// frames are lost but never delivered wrong.
    #[test]
    fn moderate_errors_are_all_caught() {
        let (d, e) = streams(1);
        let r = run(1e-4, 200_000, d, e).unwrap();
        assert!(r.cells_hit > 7_000, "{r:?}");
        assert_eq!(r.frames_delivered_corrupt(), 0);
        assert_eq!(r.cells_undetected, 0);
        // Every hit cell is dropped by one check or the other (or hit only in ways that
        // become another valid header, which is far rarer).
        assert!(r.cells_dropped() + r.dropped_not_user <= r.cells_hit);
        assert!(r.cells_dropped() as f64 > 0.99 * r.cells_hit as f64, "{r:?}");
        assert_eq!(r.frames_intact + r.frames_dropped, r.frames_sent);
        assert!(r.frames_dropped > 0);
    }

    /// At 10⁻² damaged cells often pass the CRC-10 by chance; the rate matches the analysis.
    #[test]
    fn high_errors_show_undetected_cells_at_the_analytical_rate() {
        let (d, e) = streams(2);
        let r = run(1e-2, 400_000, d, e).unwrap();
        let expect = r.cell_undetected_analytical * r.cells_sent as f64;
        let got = r.cells_undetected as f64;
        assert!(expect > 50.0, "{expect}");
        assert!((got - expect).abs() < 5.0 * expect.sqrt(), "{got} vs {expect}");
        // Corrupt frames on the own circuit cannot exceed the analytical upper bound by more
        // than chance.
        let bound = r.frame_undetected_analytical * r.frames_sent as f64;
        assert!(
            (r.frames_corrupt_own as f64) < bound + 5.0 * bound.sqrt(),
            "{r:?}"
        );
    }
}

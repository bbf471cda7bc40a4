//! The AAL3/4 segmenter of the Penn interface's transmit side (`shared/systems/atm.md`): the
//! host names the circuit and the MID, and the hardware wraps each frame in a CS-PDU and cuts
//! it into SAR-PDUs of 44 bytes, one per cell, with BOM/COM/EOM (or SSM) and a CRC-10 each.
//!
//! Cells are produced one at a time into a fixed array: nothing is allocated per cell or per
//! frame.

use thiserror::Error;

use super::cs::{CS_MAX_PAYLOAD, CsRepr, cs_pdu_len, padding};
use super::sar::{MID_MAX, SAR_PAYLOAD_BYTES, SN_MODULUS, SarRepr, SegmentType};
use crate::protocol::atm::cell::{CELL_BYTES, CellError, CellRepr, HEADER_BYTES, VirtualCircuit};
use crate::protocol::atm::copy_from_parts;

/// Why a segmenter cannot be set up or a frame cannot be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SegmentError {
    /// The frame is longer than the 16-bit Length field can describe.
    #[error("frame of {len} bytes exceeds the AAL3/4 maximum of {CS_MAX_PAYLOAD}")]
    FrameTooLong {
        /// Frame length [bytes].
        len: usize,
    },
    /// The MID does not fit in 10 bits.
    #[error("MID {0} does not fit in 10 bits")]
    MidRange(u16),
    /// The cell header cannot be built.
    #[error("bad cell header: {0}")]
    Header(#[from] CellError),
}

/// Cells needed to carry a frame of `frame_len` bytes.
pub const fn cell_count(frame_len: usize) -> usize {
    cs_pdu_len(frame_len).div_ceil(SAR_PAYLOAD_BYTES)
}

/// Segments frames for one (circuit, MID). Keeps the sequence number running across frames
/// and changes the Btag/Etag from frame to frame, as I.363.3 asks of a sender.
#[derive(Debug, Clone)]
pub struct Segmenter {
    header: [u8; HEADER_BYTES],
    mid: u16,
    sn: u8,
    tag: u8,
}

impl Segmenter {
    /// A segmenter for user cells on `circuit` (GFC 0, CLP 0) with multiplexing id `mid`.
    pub fn new(circuit: VirtualCircuit, mid: u16) -> Result<Self, SegmentError> {
        Self::with_header(CellRepr::user(circuit), mid)
    }

    /// A segmenter that puts `header` (HEC computed here) on every cell.
    pub fn with_header(header: CellRepr, mid: u16) -> Result<Self, SegmentError> {
        if mid > MID_MAX {
            return Err(SegmentError::MidRange(mid));
        }
        Ok(Segmenter {
            header: header.header_bytes()?,
            mid,
            sn: 0,
            tag: 0,
        })
    }

    /// The cells carrying `frame`, in order. The sequence number and tag advance now, whether
    /// or not every cell is taken.
    pub fn segment<'f>(&mut self, frame: &'f [u8]) -> Result<Cells<'f>, SegmentError> {
        let length =
            u16::try_from(frame.len()).map_err(|_| SegmentError::FrameTooLong { len: frame.len() })?;
        let count = cell_count(frame.len());
        let cells = Cells {
            frame,
            header: self.header,
            cs: CsRepr::message(self.tag, length),
            mid: self.mid,
            first_sn: self.sn,
            index: 0,
            count,
        };
        // count ≤ 1,490, so the cast cannot lose the low 4 bits that matter.
        self.sn = ((usize::from(self.sn) + count) % usize::from(SN_MODULUS)) as u8;
        self.tag = self.tag.wrapping_add(1);
        Ok(cells)
    }
}

/// The cells of one frame, produced on demand.
#[derive(Debug, Clone)]
pub struct Cells<'f> {
    frame: &'f [u8],
    header: [u8; HEADER_BYTES],
    cs: CsRepr,
    mid: u16,
    first_sn: u8,
    index: usize,
    count: usize,
}

impl Iterator for Cells<'_> {
    type Item = [u8; CELL_BYTES];

    fn next(&mut self) -> Option<[u8; CELL_BYTES]> {
        if self.index >= self.count {
            return None;
        }
        let i = self.index;
        self.index += 1;

        let header = self.cs.header();
        let trailer = self.cs.trailer();
        let pad = &[0u8; 3][..padding(self.frame.len())];
        let cs_len = cs_pdu_len(self.frame.len());
        let start = i * SAR_PAYLOAD_BYTES;
        let used = (cs_len - start).min(SAR_PAYLOAD_BYTES);

        let mut cell = [0u8; CELL_BYTES];
        cell[..HEADER_BYTES].copy_from_slice(&self.header);
        let sar = &mut cell[HEADER_BYTES..];
        copy_from_parts(
            &mut sar[2..2 + used],
            start,
            &[&header, self.frame, pad, &trailer],
        );
        let segment_type = match (i, self.count) {
            (_, 1) => SegmentType::Ssm,
            (0, _) => SegmentType::Bom,
            (i, n) if i + 1 == n => SegmentType::Eom,
            _ => SegmentType::Com,
        };
        SarRepr {
            segment_type,
            sn: ((usize::from(self.first_sn) + i) % usize::from(SN_MODULUS)) as u8,
            mid: self.mid,
            // used ≤ 44.
            li: used as u8,
        }
        .write_into(sar);
        Some(cell)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.count - self.index;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Cells<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::atm::cell::hec;
    use crate::protocol::atm::crc::crc10;

    #[test]
    fn cell_counts() {
        assert_eq!(cell_count(0), 1);
        assert_eq!(cell_count(36), 1);
        assert_eq!(cell_count(37), 2);
        assert_eq!(cell_count(80), 2);
        assert_eq!(cell_count(81), 3);
        assert_eq!(cell_count(65_535), 1_490);
    }

    /// A 5-byte frame fits a single-segment message; every byte is pinned here.
    #[test]
    fn ssm_vector() {
        let mut seg = Segmenter::new(VirtualCircuit::new(0, 32), 5).unwrap();
        let cells: Vec<_> = seg.segment(b"ABCDE").unwrap().collect();
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        assert_eq!(c[..4], [0x00, 0x00, 0x02, 0x00]);
        assert_eq!(c[4], hec(&[0x00, 0x00, 0x02, 0x00]));
        // ST 11, SN 0, MID 5.
        assert_eq!(c[5..7], [0xC0, 0x05]);
        // CS-PDU: CPI 0, Btag 0, BASize 5, "ABCDE", pad 3, AL 0, Etag 0, Length 5.
        assert_eq!(
            c[7..23],
            [0, 0, 0, 5, b'A', b'B', b'C', b'D', b'E', 0, 0, 0, 0, 0, 0, 5]
        );
        assert!(c[23..51].iter().all(|&b| b == 0));
        assert_eq!(c[51] >> 2, 16);
        assert_eq!(crc10(&c[5..]), 0);
    }

    #[test]
    fn multi_cell_frame_has_bom_com_eom_and_running_sn() {
        let frame: Vec<u8> = (0..100u8).collect();
        let mut seg = Segmenter::new(VirtualCircuit::new(1, 2), 3).unwrap();
        let first: Vec<_> = seg.segment(&frame).unwrap().collect();
        assert_eq!(first.len(), 3);
        let st: Vec<u8> = first.iter().map(|c| c[5] >> 6).collect();
        assert_eq!(st, [0b10, 0b00, 0b01]);
        let sn: Vec<u8> = first.iter().map(|c| (c[5] >> 2) & 0xF).collect();
        assert_eq!(sn, [0, 1, 2]);
        // 4 + 100 + 0 + 4 = 108 bytes: 44 + 44 + 20.
        assert_eq!(first[2][51] >> 2, 20);
        let second: Vec<_> = seg.segment(&frame).unwrap().collect();
        assert_eq!((second[0][5] >> 2) & 0xF, 3);
        // Btag: after the cell header, the 2-byte SAR header and the CPI.
        assert_eq!(second[0][HEADER_BYTES + 2 + 1], 1);
    }

    #[test]
    fn refusals() {
        assert_eq!(
            Segmenter::new(VirtualCircuit::new(0, 1), 1024).unwrap_err(),
            SegmentError::MidRange(1024)
        );
        let mut seg = Segmenter::new(VirtualCircuit::new(0, 1), 0).unwrap();
        assert_eq!(
            seg.segment(&vec![0; 65_536]).unwrap_err(),
            SegmentError::FrameTooLong { len: 65_536 }
        );
    }
}

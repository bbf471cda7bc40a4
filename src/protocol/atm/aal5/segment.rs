//! The AAL5 segmenter: a frame, its pad and its trailer cut into 48-byte cell payloads, the
//! last one marked by the AUU bit of the payload type (ITU-T I.363.5, I.361).
//!
//! Cells are produced one at a time into a fixed array: nothing is allocated per cell or per
//! frame; the CRC-32 runs along as the cells go.

use thiserror::Error;

use super::cpcs::{CpcsRepr, MAX_PAYLOAD, TRAILER_BYTES, cell_count, padding};
use crate::protocol::atm::cell::{
    CELL_BYTES, CellError, CellRepr, HEADER_BYTES, PAYLOAD_BYTES, PayloadType, VirtualCircuit,
};
use crate::protocol::atm::copy_from_parts;
use crate::protocol::atm::crc::crc32_update;

/// Why a segmenter cannot be set up or a frame cannot be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SegmentError {
    /// An empty frame: Length 0 means abort in AAL5, so there is no way to send one.
    #[error("AAL5 cannot carry an empty frame (Length 0 means abort)")]
    EmptyFrame,
    /// The frame is longer than the 16-bit Length field can describe.
    #[error("frame of {len} bytes exceeds the AAL5 maximum of {MAX_PAYLOAD}")]
    FrameTooLong {
        /// Frame length [bytes].
        len: usize,
    },
    /// The cell header cannot be built.
    #[error("bad cell header: {0}")]
    Header(#[from] CellError),
}

/// Segments frames for one circuit.
#[derive(Debug, Clone)]
pub struct Segmenter {
    /// Header of every cell but the last, and of the last.
    headers: [[u8; HEADER_BYTES]; 2],
}

impl Segmenter {
    /// A segmenter for user cells on `circuit` (GFC 0, CLP 0).
    pub fn new(circuit: VirtualCircuit) -> Result<Self, SegmentError> {
        Self::with_header(CellRepr::user(circuit))
    }

    /// A segmenter that puts `header` on every cell, its payload type replaced by user data
    /// with AUU 0, or 1 in the last cell.
    pub fn with_header(header: CellRepr) -> Result<Self, SegmentError> {
        let with_last = |last| CellRepr {
            payload_type: PayloadType::UserData {
                congestion: false,
                last,
            },
            ..header
        };
        Ok(Segmenter {
            headers: [with_last(false).header_bytes()?, with_last(true).header_bytes()?],
        })
    }

    /// The cells carrying `frame` with user-to-user byte `uu`, in order.
    pub fn segment<'f>(&self, frame: &'f [u8], uu: u8) -> Result<Cells<'f>, SegmentError> {
        if frame.is_empty() {
            return Err(SegmentError::EmptyFrame);
        }
        let length =
            u16::try_from(frame.len()).map_err(|_| SegmentError::FrameTooLong { len: frame.len() })?;
        Ok(Cells {
            frame,
            headers: self.headers,
            trailer_head: CpcsRepr { uu, length }.trailer_head(),
            index: 0,
            count: cell_count(frame.len()),
            crc: !0,
        })
    }
}

/// The cells of one frame, produced on demand.
#[derive(Debug, Clone)]
pub struct Cells<'f> {
    frame: &'f [u8],
    headers: [[u8; HEADER_BYTES]; 2],
    trailer_head: [u8; 4],
    index: usize,
    count: usize,
    /// CRC-32 register over the payloads produced so far.
    crc: u32,
}

impl Iterator for Cells<'_> {
    type Item = [u8; CELL_BYTES];

    fn next(&mut self) -> Option<[u8; CELL_BYTES]> {
        if self.index >= self.count {
            return None;
        }
        let i = self.index;
        self.index += 1;
        let last = self.index == self.count;

        let mut cell = [0u8; CELL_BYTES];
        cell[..HEADER_BYTES].copy_from_slice(&self.headers[usize::from(last)]);
        let payload = &mut cell[HEADER_BYTES..];
        let pad = &[0u8; PAYLOAD_BYTES][..padding(self.frame.len())];
        copy_from_parts(payload, i * PAYLOAD_BYTES, &[self.frame, pad, &self.trailer_head]);
        if last {
            let crc_at = PAYLOAD_BYTES - (TRAILER_BYTES - 4);
            self.crc = crc32_update(self.crc, &payload[..crc_at]);
            payload[crc_at..].copy_from_slice(&(!self.crc).to_be_bytes());
        } else {
            self.crc = crc32_update(self.crc, payload);
        }
        Some(cell)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.count - self.index;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Cells<'_> {}

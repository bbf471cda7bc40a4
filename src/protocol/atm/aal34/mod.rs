//! AAL3/4 as the Penn ATM host interface runs it (Traw and Smith 1992, `shared/systems/atm.md`;
//! formats from ITU-T I.363.3): a frame becomes a CS-PDU (header, payload, pad, trailer), cut
//! into 44-byte pieces, each carried in a 48-byte SAR-PDU with segment type, sequence number,
//! MID, length indicator and CRC-10, one per cell.

pub mod cs;
pub mod reassemble;
pub mod sar;
pub mod segment;
#[cfg(test)]
mod tests;

pub use cs::{CsError, CsPdu, CsRepr};
pub use reassemble::{CutShort, Delivery, Frame, Reassembler, ReassemblerConfig, ReassemblyError};
pub use sar::{SarError, SarPdu, SarRepr, SegmentType};
pub use segment::{Cells, SegmentError, Segmenter, cell_count};

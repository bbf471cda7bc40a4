//! AAL5 (ITU-T I.363.5): a frame, pad, and an 8-byte trailer (UU, CPI, Length, CRC-32) fill a
//! whole number of 48-byte cell payloads; the last cell says so with the AUU bit of its
//! payload type. No per-cell header: loss and damage are found by the CRC-32 and the Length.
//! The Penn interface ran AAL3/4; AAL5 is here as the what-if its successors took.

pub mod cpcs;
pub mod reassemble;
pub mod segment;
#[cfg(test)]
mod tests;

pub use cpcs::{CpcsError, CpcsPdu, CpcsRepr, cell_count};
pub use reassemble::{Frame, Reassembler, ReassemblerConfig, ReassemblyError};
pub use segment::{Cells, SegmentError, Segmenter};

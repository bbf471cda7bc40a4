//! ATM as the Penn host interface carries it (Traw and Smith 1992, `shared/systems/atm.md`):
//! 53-byte cells with a UNI header and HEC, AAL3/4 segmentation and reassembly with CRC-10,
//! AAL5 with CRC-32, and the analytical rate of errors that the codes let through.
//!
//! Every codec here is total: malformed input is an `Err`, never a panic (the fuzz targets in
//! `fuzz/` check it).

pub mod aal34;
mod cam;
pub mod cell;
pub mod crc;

pub use cell::{
    CELL_BYTES, Cell, CellError, CellRepr, HEADER_BYTES, PAYLOAD_BYTES, PayloadType,
    VirtualCircuit, hec,
};

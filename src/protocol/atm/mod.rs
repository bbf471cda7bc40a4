//! ATM as the Penn host interface carries it (Traw and Smith 1992, `shared/systems/atm.md`):
//! 53-byte cells with a UNI header and HEC, AAL3/4 segmentation and reassembly with CRC-10,
//! AAL5 with CRC-32, and the analytical rate of errors that the codes let through.
//!
//! Every codec here is total: malformed input is an `Err`, never a panic (the fuzz targets in
//! `fuzz/` check it).

pub mod aal34;
pub mod aal5;
pub mod bit_errors;
mod cam;
pub mod cell;
pub mod crc;

pub use cell::{
    CELL_BYTES, Cell, CellError, CellRepr, HEADER_BYTES, PAYLOAD_BYTES, PayloadType, VirtualCircuit, hec,
};

/// Copies `dst.len()` bytes starting at `offset` of the concatenation of `parts`; bytes past
/// the end of the parts are left as they are. Segmenters build each cell straight from a
/// frame and its header, pad and trailer without assembling the whole PDU first.
pub(crate) fn copy_from_parts(dst: &mut [u8], mut offset: usize, parts: &[&[u8]]) {
    let mut written = 0;
    for part in parts {
        if written == dst.len() {
            break;
        }
        if offset >= part.len() {
            offset -= part.len();
            continue;
        }
        let n = (part.len() - offset).min(dst.len() - written);
        dst[written..written + n].copy_from_slice(&part[offset..offset + n]);
        written += n;
        offset = 0;
    }
}

/// Merges `queues` into one sequence that keeps each queue's order, taking next from the live
/// queue that `schedule` picks (modulo the number still live; the first once it runs out).
#[cfg(test)]
pub(crate) fn interleave<T>(mut queues: Vec<std::collections::VecDeque<T>>, schedule: Vec<usize>) -> Vec<T> {
    let mut order = Vec::new();
    let mut pick = schedule.into_iter();
    loop {
        let live: Vec<usize> = (0..queues.len()).filter(|&k| !queues[k].is_empty()).collect();
        if live.is_empty() {
            return order;
        }
        let k = live[pick.next().unwrap_or(0) % live.len()];
        order.extend(queues[k].pop_front());
    }
}

//! The Penn interface's transmit side in time (spec, "Segmenter"): streaming-mode DMA from a
//! pinned host buffer over the Micro Channel into the segmenter's FIFO; as soon as a cell's
//! worth of data (44 bytes, or the rest of the CS-PDU) is in the FIFO the segmentation
//! controller takes it, adds the ATM header (from the header generator, 250 ns per header,
//! working while the data streams in), the SAR header and trailer, computes the CRC-10 on the
//! way to the SONET framer, and the cell leaves in the next free OC-3c slot.
//!
//! The bytes themselves are built by `protocol::atm::aal34::Segmenter`; this model says when
//! each cell leaves. The host builds the CS-PDU header and trailer (per-frame work is the
//! host's: the hardware does the per-cell work), so the bus carries the whole CS-PDU. The bus
//! holds a burst back while the FIFO has no room for it (FIFO size ASSUMED,
//! [`super::params::SEGMENTER_FIFO_BYTES`]).

use std::collections::VecDeque;

use thiserror::Error;

use crate::time::Time;

use super::bus::{Bus, MicroChannel};
use super::link::Link;
use super::params::{HEADER_GENERATION, SAR_PAYLOAD_BYTES};

/// A transmit path that cannot be built or run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TransmitError {
    /// The FIFO must hold a whole bus burst besides a partial cell, or the bus and the
    /// segmenter would wait for each other for ever.
    #[error("segmenter FIFO of {fifo} bytes is smaller than a burst and a cell ({need} bytes)")]
    FifoTooSmall {
        /// FIFO size [bytes].
        fifo: u64,
        /// The least that works [bytes].
        need: u64,
    },
}

/// When a frame's data moved and where its cells went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    /// First burst start [ps].
    pub start: Time,
    /// Last burst end: the host's transfer is done [ps].
    pub end: Time,
}

/// Micro Channel → segmenter FIFO → OC-3c link.
#[derive(Debug, Clone)]
pub struct Transmitter {
    bus: Bus,
    link: Link,
    fifo: u64,
    /// Bytes that have entered the FIFO [bytes].
    bytes_in: u64,
    /// Cells taken from the FIFO: (time taken, bytes taken so far), in order; entries are
    /// dropped once no later burst can wait for them.
    taken: VecDeque<(Time, u64)>,
    /// Bytes taken by the entries already dropped from `taken` [bytes].
    taken_dropped: u64,
    /// Bytes taken so far [bytes].
    bytes_out: u64,
    /// When the header generator can start the next cell's header [ps].
    header_free: Time,
}

impl Transmitter {
    /// A transmitter over `channel` with a FIFO of `fifo` bytes.
    pub fn new(channel: MicroChannel, fifo: u64) -> Result<Transmitter, TransmitError> {
        let need = channel.burst_bytes + SAR_PAYLOAD_BYTES;
        if fifo < need {
            return Err(TransmitError::FifoTooSmall { fifo, need });
        }
        Ok(Transmitter {
            bus: Bus::new(channel),
            link: Link::new(),
            fifo,
            bytes_in: 0,
            taken: VecDeque::new(),
            taken_dropped: 0,
            bytes_out: 0,
            header_free: 0,
        })
    }

    /// The link, for slot times.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// The bus, for its busy time.
    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    /// The earliest time the FIFO has room for `need_out` bytes to have left it.
    fn room(&mut self, need_out: u64) -> Option<Time> {
        if need_out <= self.taken_dropped {
            return Some(0);
        }
        while let Some(&(t, out)) = self.taken.front() {
            if out >= need_out {
                return Some(t);
            }
            self.taken_dropped = out;
            self.taken.pop_front();
        }
        None
    }

    /// Streams one CS-PDU of `cs_len` bytes whose data is ready in host memory at `ready`;
    /// pushes the slot of each of its cells onto `slots`, in order.
    pub fn frame(
        &mut self,
        ready: Time,
        cs_len: u64,
        slots: &mut Vec<u64>,
    ) -> Result<Streamed, TransmitError> {
        let burst = self.bus.channel().burst_bytes;
        let cells = cs_len.div_ceil(SAR_PAYLOAD_BYTES).max(1);
        let mut next_cell = 0;
        let mut offset = 0;
        let mut start = None;
        let mut end = ready;
        while offset < cs_len {
            let b = burst.min(cs_len - offset);
            let need_out = (self.bytes_in + b).saturating_sub(self.fifo);
            let room = self.room(need_out).ok_or(TransmitError::FifoTooSmall {
                fifo: self.fifo,
                need: burst + SAR_PAYLOAD_BYTES,
            })?;
            let (s, e) = self.bus.burst(ready.max(room), b);
            let first = *start.get_or_insert(s);
            end = e;
            self.bytes_in += b;
            offset += b;
            while next_cell < cells && ((next_cell + 1) * SAR_PAYLOAD_BYTES).min(cs_len) <= offset {
                // The host loads VCI and MID when it starts the transfer; the header
                // generator then makes one header at a time while data streams in.
                let header = self.header_free.max(first) + HEADER_GENERATION;
                let slot = self.link.send(e.max(header));
                let taken = self.link.slot_start(slot);
                let used = ((next_cell + 1) * SAR_PAYLOAD_BYTES).min(cs_len) - next_cell * SAR_PAYLOAD_BYTES;
                self.bytes_out += used;
                self.taken.push_back((taken, self.bytes_out));
                self.header_free = taken;
                slots.push(slot);
                next_cell += 1;
            }
        }
        Ok(Streamed {
            start: start.unwrap_or(ready),
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::atm::params::{SEGMENTER_FIFO_BYTES, cell_clock};

    #[test]
    fn a_long_stream_is_held_to_the_link_rate() {
        let mut tx = Transmitter::new(MicroChannel::PENN, SEGMENTER_FIFO_BYTES).unwrap();
        let mut slots = Vec::new();
        let mut last = Streamed { start: 0, end: 0 };
        for _ in 0..20 {
            // 65,535-byte frames: CS-PDU of 65,544 bytes, 1,490 cells.
            last = tx.frame(0, 65_544, &mut slots).unwrap();
        }
        assert_eq!(slots.len(), 20 * 1490);
        // The bus (17.78 MB/s) outruns the link (44 bytes per 2.83 µs = 15.5 MB/s): once the
        // FIFO has filled (burst by burst the bus can fall a slot behind at first) the link
        // sends a cell in every slot.
        let gaps: Vec<usize> = (1..slots.len())
            .filter(|&i| slots[i] != slots[i - 1] + 1)
            .collect();
        assert!(gaps.iter().all(|&i| i < 100), "gaps at {gaps:?}");
        // The FIFO never held more than its size: the bus ends at most a FIFO's worth of
        // link time before the last cell leaves.
        let last_leave = tx.link().slot_start(*slots.last().unwrap());
        let fifo_time = tx.link().slots_time(SEGMENTER_FIFO_BYTES / 44 + 2);
        assert!(last.end + fifo_time >= last_leave, "{last:?} {last_leave}");
    }

    #[test]
    fn a_short_frame_waits_for_its_data_and_header() {
        let mut tx = Transmitter::new(MicroChannel::PENN, SEGMENTER_FIFO_BYTES).unwrap();
        let mut slots = Vec::new();
        // 72-byte CS-PDU (64-byte frame): two bursts (64 + 8 bytes), two cells.
        let s = tx.frame(1_000_000, 72, &mut slots).unwrap();
        assert_eq!(s.start, 1_000_000);
        // Second burst: 3.6 µs after the first starts, 2 words = 0.2 µs.
        assert_eq!(s.end, 1_000_000 + 3_600_000 + 200_000);
        // The first cell's 44 bytes are in after the first burst (its header was ready
        // 250 ns after the start); it leaves in the next slot.
        let first_ready = 1_000_000 + 1_600_000;
        assert_eq!(slots[0], cell_clock().edge_at_or_after(first_ready));
        assert!(tx.link().slot_start(slots[1]) >= s.end);
    }

    #[test]
    fn too_small_a_fifo_is_refused() {
        assert_eq!(
            Transmitter::new(MicroChannel::PENN, 100).unwrap_err(),
            TransmitError::FifoTooSmall { fifo: 100, need: 108 }
        );
    }
}

//! Host → segmenter → OC-3c → reassembler → host for AAL3/4 frames (spec, "Experiments":
//! end-to-end): every frame is real bytes, cut into real cells by
//! `protocol::atm::aal34::Segmenter`, carried in OC-3c slots, taken through the four-stage
//! receive pipeline and reassembled and checked by `protocol::atm::aal34::Reassembler`
//! (`ReassemblerConfig::PENN`), then compared with what was sent.
//!
//! Timing: the sending host calls `write()` once per frame through a driver model
//! ([`super::driver`], costs calibrated from Table I); the Micro Channel streams the CS-PDU
//! into the segmenter's FIFO ([`super::segmenter`]); the pipeline ([`super::reassembler`])
//! puts each body into the reassembly buffer; the receiving host then reads the frame over its
//! own Micro Channel. ASSUMED: the receiving host's software costs are not published and are
//! not charged (its bus is), and the reassembly buffer holds [`REASSEMBLY_BUFFER_BYTES`].
//! A point-to-point system needs no switched-fabric engine: the stages are in series, so each
//! is advanced in order with exact integer-picosecond times.

use std::collections::VecDeque;

use thiserror::Error;

use crate::protocol::atm::VirtualCircuit;
use crate::protocol::atm::aal34::cs::cs_pdu_len;
use crate::protocol::atm::aal34::{Reassembler, ReassemblerConfig, SegmentError, Segmenter};
use crate::rng::Stream;
use crate::time::{SEC, Time};

use super::bus::{Bus, MicroChannel};
use super::driver::{Driver, DriverError, Host, HostCosts, Writer};
use super::params::{
    CAM_CIRCUITS, CAM_MIDS, REASSEMBLY_BUFFER_BYTES, SAR_PAYLOAD_BYTES, SEGMENTER_FIFO_BYTES,
};
use super::reassembler::Pipeline;
use super::segmenter::{TransmitError, Transmitter};

/// The circuit and MID the end-to-end frames use.
pub const CIRCUIT: VirtualCircuit = VirtualCircuit::new(0, 32);
/// The MID the end-to-end frames use.
pub const MID: u16 = 1;

/// The sending application: it produces each frame into one of two user buffers in turn and
/// then writes it, so it touches its buffer; only the fault-on-write driver cares (it blocks
/// the writer on a buffer still streaming).
pub const PRODUCER: Writer = Writer {
    touches_buffer: true,
    user_buffers: 2,
};

/// Why an end-to-end run could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EndToEndError {
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error(transparent)]
    Transmit(#[from] TransmitError),
    #[error(transparent)]
    Segment(#[from] SegmentError),
    /// Goodput needs at least two delivered frames.
    #[error("{0} frames: an end-to-end run needs at least two")]
    TooFewFrames(usize),
}

/// What one frame size achieved.
#[derive(Debug, Clone, PartialEq)]
pub struct EndToEnd {
    /// Frame (CS-PDU payload) size [bytes].
    pub frame_bytes: usize,
    pub frames_sent: usize,
    pub cells_sent: u64,
    /// Frames delivered equal to what was sent.
    pub frames_intact: usize,
    /// Frames delivered that differ from what was sent (must be 0: no errors are injected).
    pub frames_corrupt: usize,
    /// Cells lost at a full receive FIFO or reassembly buffer.
    pub cells_lost: u64,
    /// User bytes delivered per second between the first and the last delivery [Mb/s].
    pub goodput_mbit: f64,
    /// What the link allows for this frame size: frame bits over its cells' slots [Mb/s].
    pub link_ceiling_mbit: f64,
    /// Busy shares over the run: sending host CPU, transmit bus (bursts), link, receive bus.
    pub shares: [(&'static str, f64); 4],
}

impl EndToEnd {
    /// The resource busiest over the run: what bounds the goodput.
    pub fn bottleneck(&self) -> (&'static str, f64) {
        self.shares
            .iter()
            .copied()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or(("none", 0.0))
    }
}

/// Fills `buf` with bytes from `stream`.
pub fn fill_random(stream: &mut Stream, buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        let x = stream.next_u64().to_le_bytes();
        chunk.copy_from_slice(&x[..chunk.len()]);
    }
}

/// Sends `frames` frames of `frame_bytes` random bytes (from `data`) through the whole path
/// with `driver` on the sending host.
pub fn run(
    frame_bytes: usize,
    frames: usize,
    driver: Driver,
    costs: HostCosts,
    mut data: Stream,
) -> Result<EndToEnd, EndToEndError> {
    if frames < 2 {
        return Err(EndToEndError::TooFewFrames(frames));
    }
    let channel = MicroChannel::PENN;
    let mut host = Host::new(driver, costs, PRODUCER)?;
    let mut tx = Transmitter::new(channel, SEGMENTER_FIFO_BYTES)?;
    let mut segmenter = Segmenter::new(CIRCUIT, MID)?;
    let mut pipeline = Pipeline::penn();
    let mut reassembler = Reassembler::new(ReassemblerConfig {
        max_circuits: CAM_CIRCUITS,
        max_mids: CAM_MIDS,
        ..ReassemblerConfig::PENN
    });
    let mut rx_bus = Bus::new(channel);
    let cs_len = cs_pdu_len(frame_bytes) as u64;

    let mut frame = vec![0u8; frame_bytes];
    let mut slots = Vec::new();
    // Reassembly buffer: bytes held, and frames being read out (read end, bytes).
    let mut held: u64 = 0;
    let mut reading: VecDeque<(Time, u64)> = VecDeque::new();
    let mut this_frame: u64 = 0;
    let (mut intact, mut corrupt, mut lost) = (0usize, 0usize, 0u64);
    let (mut first_delivery, mut last_delivery): (Option<Time>, Time) = (None, 0);

    for _ in 0..frames {
        fill_random(&mut data, &mut frame);
        let ready = host.write(frame_bytes as u64)?;
        slots.clear();
        let streamed = tx.frame(ready, cs_len, &mut slots)?;
        host.streamed(streamed.end)?;
        let cells = segmenter.segment(&frame)?;
        for (cell, &slot) in cells.zip(slots.iter()) {
            let Some(done) = pipeline.push(tx.link().arrival(slot)) else {
                lost += 1;
                continue;
            };
            while reading.front().is_some_and(|&(end, _)| end <= done) {
                held -= reading.pop_front().map_or(0, |r| r.1);
            }
            if held + SAR_PAYLOAD_BYTES > REASSEMBLY_BUFFER_BYTES {
                lost += 1;
                continue;
            }
            held += SAR_PAYLOAD_BYTES;
            this_frame += SAR_PAYLOAD_BYTES;
            let delivery = reassembler.push_cell(&cell);
            if delivery.cut_short.is_some() {
                // A BOM ended a reassembly whose EOM never came: its space goes back.
                held -= this_frame - SAR_PAYLOAD_BYTES;
                this_frame = SAR_PAYLOAD_BYTES;
            }
            match delivery.outcome {
                Ok(None) => {}
                Ok(Some(f)) => {
                    // The host is handed the list's head and reads the frame over its bus.
                    let (_, end) = rx_bus.transfer(done, cs_len);
                    reading.push_back((end, this_frame));
                    this_frame = 0;
                    if f.circuit == CIRCUIT && f.mid == MID && f.data == frame {
                        intact += 1;
                        first_delivery.get_or_insert(end);
                        last_delivery = end;
                    } else {
                        corrupt += 1;
                    }
                }
                Err(_) => {
                    // The frame is discarded and its buffer space given back.
                    held -= this_frame;
                    this_frame = 0;
                }
            }
        }
    }

    let first = first_delivery.unwrap_or(0);
    let span_deliveries = last_delivery.saturating_sub(first).max(1);
    let goodput_mbit =
        (intact.saturating_sub(1) * frame_bytes * 8) as f64 / (span_deliveries as f64 / SEC as f64) / 1e6;
    let cells_sent = tx.link().cells();
    let slot = tx.link().slots_time(1_000_000) as f64 / 1e6;
    let link_ceiling_mbit = (frames * frame_bytes * 8) as f64 / (cells_sent as f64 * slot / SEC as f64) / 1e6;
    let span = last_delivery.max(1) as f64;
    let shares = [
        ("sending host CPU", host.cpu_busy() as f64 / span),
        ("transmit Micro Channel", tx.bus().busy() as f64 / span),
        ("OC-3c link", cells_sent as f64 * slot / span),
        ("receive Micro Channel", rx_bus.busy() as f64 / span),
    ];
    Ok(EndToEnd {
        frame_bytes,
        frames_sent: frames,
        cells_sent,
        frames_intact: intact,
        frames_corrupt: corrupt,
        cells_lost: lost + pipeline.lost(),
        goodput_mbit,
        link_ceiling_mbit,
        shares,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    const COSTS: HostCosts = HostCosts {
        overhead: 266_000_000,
        copy_rate: 15.4e6,
    };

    #[test]
    fn every_frame_arrives_intact_and_the_link_bounds_large_frames() {
        let r = run(
            65_535,
            12,
            Driver::FaultOnWrite,
            COSTS,
            Stream::new(1, Purpose::Setup, 7),
        )
        .unwrap();
        assert_eq!((r.frames_intact, r.frames_corrupt, r.cells_lost), (12, 0, 0));
        assert_eq!(r.cells_sent, 12 * 1490);
        // 65,535 bytes in 1,490 cells of 2.8312 µs.
        assert!((r.link_ceiling_mbit - 65_535.0 * 8.0 / (1490.0 * 2.831_196_6)).abs() < 1e-3);
        // Fault-on-write keeps the bus busy ahead of the link: the link is the bottleneck.
        assert_eq!(r.bottleneck().0, "OC-3c link");
        assert!(
            r.goodput_mbit > 0.99 * r.link_ceiling_mbit && r.goodput_mbit <= r.link_ceiling_mbit * 1.0001,
            "{r:?}"
        );
    }

    #[test]
    fn small_frames_are_bound_by_the_host() {
        let r = run(64, 200, Driver::Copy, COSTS, Stream::new(1, Purpose::Setup, 8)).unwrap();
        assert_eq!((r.frames_intact, r.frames_corrupt), (200, 0));
        assert_eq!(r.bottleneck().0, "sending host CPU");
        // One frame per overhead + copy.
        let per_frame = (COSTS.overhead + COSTS.copy(64)) as f64 / SEC as f64;
        assert!(
            (r.goodput_mbit / (512.0 / per_frame / 1e6) - 1.0).abs() < 1e-3,
            "{r:?}"
        );
        assert!(run(64, 1, Driver::Copy, COSTS, Stream::new(1, Purpose::Setup, 8)).is_err());
    }
}

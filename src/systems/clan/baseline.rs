//! The systems CLAN was measured against, as per-message and per-byte cost models
//! (`shared/systems/clan.md`: "Model the Gigabit Ethernet and VIA baselines from their
//! published figures (calibrate their per-message costs, and say so)"):
//!
//! - Gigabit Ethernet TCP (3Com 3c985, jumbo frames, 512 KB socket buffers);
//! - hardware VIA (Giganet cLAN1000, 256 KB reserved buffers, software window updates).
//!
//! Each end of a message pays a per-message host cost `o` (system call or descriptor, the
//! protocol, the interrupt) and copies the payload at the host's copy rate; the wire takes
//! the frames at the link rate; the NIC and driver add a fixed one-way latency `L` (for
//! the 3c985 that includes its interrupt coalescing). `o` is calibrated from the published
//! transaction rate (the server receives and sends once per transaction) and `L` from the
//! published round trip; the copy rate is the CLAN host's ([`super::params::COPY_RATE`],
//! ASSUMED), since both baselines ran on the same Alphas.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::params as P;
use crate::time::{SEC, Time};

/// How the receiver lets the sender reuse buffer space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// TCP: the kernel acknowledges each segment as the application reads it; no
    /// application cost.
    Acks,
    /// VIA: the application sends a window-update message after consuming half the
    /// buffer, paying the per-message cost at both ends.
    Software,
}

/// A baseline as published: the figures its costs are calibrated from and its wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hardware {
    pub name: &'static str,
    /// Published 40-byte round trip [µs].
    pub rtt_us: f64,
    /// Published transaction rate [requests/s].
    pub rate_per_s: f64,
    pub byte_time: Time,
    /// Bytes each frame carries besides its payload.
    pub frame_overhead: u64,
    /// Largest payload of a frame [bytes].
    pub mtu_payload: u64,
    /// Buffer per endpoint [bytes].
    pub buffer: u64,
    pub window: Window,
}

/// Gigabit Ethernet TCP (3c985, jumbo frames, 512 KB socket buffers).
pub const GIGE: Hardware = Hardware {
    name: "gige",
    rtt_us: P::PUBLISHED.gige_rtt.value,
    rate_per_s: P::PUBLISHED.gige_transactions.value,
    byte_time: P::GIGE_BYTE_TIME,
    frame_overhead: P::GIGE_TCPIP_HEADERS + P::GIGE_FRAMING,
    mtu_payload: P::GIGE_MTU - P::GIGE_TCPIP_HEADERS,
    buffer: P::GIGE_BUFFER,
    window: Window::Acks,
};

/// Hardware VIA (Giganet cLAN1000, 256 KB buffers, software window updates).
pub const VIA: Hardware = Hardware {
    name: "via",
    rtt_us: P::PUBLISHED.via_rtt.value,
    rate_per_s: P::PUBLISHED.via_transactions.value,
    byte_time: P::VIA_BYTE_TIME,
    frame_overhead: P::VIA_OVERHEAD,
    mtu_payload: P::VIA_MTU,
    buffer: P::VIA_BUFFER,
    window: Window::Software,
};

/// A calibrated baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baseline {
    pub name: &'static str,
    /// Per-message host cost at each end [ps] (calibrated).
    pub per_message: Time,
    /// One-way NIC and driver latency [ps] (calibrated).
    pub latency: Time,
    pub copy_rate: f64,
    pub byte_time: Time,
    /// Bytes each frame carries besides its payload.
    pub frame_overhead: u64,
    /// Largest payload of a frame [bytes].
    pub mtu_payload: u64,
    /// Buffer per endpoint [bytes].
    pub buffer: u64,
    pub window: Window,
}

/// Why a baseline could not be calibrated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("{name}: the published figures leave a negative {what} ({value_us:.3} us)")]
    Negative {
        name: &'static str,
        what: &'static str,
        value_us: f64,
    },
}

impl Baseline {
    /// Time to copy `bytes` at one end [ps].
    pub fn copy(&self, bytes: u64) -> Time {
        (bytes as f64 / self.copy_rate * 1e12).round() as Time
    }

    /// Time on the wire of `bytes` of payload [ps].
    pub fn wire(&self, bytes: u64) -> Time {
        let frames = bytes.div_ceil(self.mtu_payload).max(1);
        (bytes + frames * self.frame_overhead) * self.byte_time
    }

    /// The server's time per transaction of `bytes` each way [ps].
    pub fn server_time(&self, bytes: u64) -> Time {
        2 * (self.per_message + self.copy(bytes))
    }

    /// The closed-form round trip of `bytes` each way [ps].
    pub fn round_trip(&self, bytes: u64) -> Time {
        2 * (self.per_message + self.copy(bytes))
            + self.server_time(bytes)
            + 2 * (self.latency + self.wire(bytes))
    }

    /// Calibrates `o` from the transaction rate and `L` from the round trip of `hw`'s
    /// published figures (both for `bytes`-byte messages), with the hosts copying at
    /// `copy_rate` [bytes/s].
    pub fn calibrate(hw: &Hardware, bytes: u64, copy_rate: f64) -> Result<Baseline, CalibrationError> {
        let name = hw.name;
        let mut b = Baseline {
            name,
            per_message: 0,
            latency: 0,
            copy_rate,
            byte_time: hw.byte_time,
            frame_overhead: hw.frame_overhead,
            mtu_payload: hw.mtu_payload,
            buffer: hw.buffer,
            window: hw.window,
        };
        let s = SEC as f64 / hw.rate_per_s;
        let o = s / 2.0 - b.copy(bytes) as f64;
        if o <= 0.0 {
            return Err(CalibrationError::Negative {
                name,
                what: "per-message cost",
                value_us: o / 1e6,
            });
        }
        b.per_message = o.round() as Time;
        let rest = hw.rtt_us * 1e6 - (2 * (b.per_message + b.copy(bytes)) + b.server_time(bytes)) as f64;
        let l = rest / 2.0 - b.wire(bytes) as f64;
        if l < 0.0 {
            return Err(CalibrationError::Negative {
                name,
                what: "one-way latency",
                value_us: l / 1e6,
            });
        }
        b.latency = l.round() as Time;
        Ok(b)
    }

    /// Gigabit Ethernet TCP, calibrated with the model's copy rate.
    pub fn gige() -> Result<Baseline, CalibrationError> {
        Baseline::calibrate(&GIGE, P::MESSAGE_BYTES, P::COPY_RATE)
    }

    /// Hardware VIA (cLAN1000), calibrated with the model's copy rate.
    pub fn via() -> Result<Baseline, CalibrationError> {
        Baseline::calibrate(&VIA, P::MESSAGE_BYTES, P::COPY_RATE)
    }

    /// Closed-loop transactions: `outstanding` connections spread over `clients` client
    /// hosts, each sending its next `bytes`-byte request when its reply is in; returns the
    /// completion times of `count` requests [ps].
    pub fn transactions(&self, outstanding: u32, clients: u32, count: u32, bytes: u64) -> Vec<Time> {
        // Events: (time, seq, kind, connection). Kinds in the order a request goes.
        const AT_SERVER: u8 = 0;
        const AT_CLIENT: u8 = 1;
        let mut q: BinaryHeap<Reverse<(Time, u64, u8, u32)>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut client_free = vec![0 as Time; clients.max(1) as usize];
        let mut server_free: Time = 0;
        let one = self.per_message + self.copy(bytes);
        let hop = self.latency + self.wire(bytes);
        let mut sent = 0u32;
        let mut done = Vec::with_capacity(count as usize);
        for c in 0..outstanding.min(count) {
            let h = (c % clients.max(1)) as usize;
            let t = client_free[h] + one;
            client_free[h] = t;
            sent += 1;
            seq += 1;
            q.push(Reverse((t + hop, seq, AT_SERVER, c)));
        }
        while let Some(Reverse((t, _, kind, c))) = q.pop() {
            match kind {
                AT_SERVER => {
                    let end = t.max(server_free) + 2 * one;
                    server_free = end;
                    seq += 1;
                    q.push(Reverse((end + hop, seq, AT_CLIENT, c)));
                }
                _ => {
                    let h = (c % clients.max(1)) as usize;
                    let end = t.max(client_free[h]) + one;
                    done.push(end);
                    client_free[h] = end;
                    if sent < count {
                        sent += 1;
                        let t2 = end + one;
                        client_free[h] = t2;
                        seq += 1;
                        q.push(Reverse((t2 + hop, seq, AT_SERVER, c)));
                    }
                }
            }
        }
        done
    }

    /// Streams `count` messages of `size` bytes with a buffer of `buffer` bytes; returns the
    /// steady bandwidth [Mb/s] (deliveries after the first fifth).
    pub fn stream(&self, size: u64, count: u32, buffer: u64) -> f64 {
        // The sender's write copies frame by frame and the receiver's read copies each frame
        // as it arrives: the window is kept per frame (at most half the buffer). Each message
        // pays the per-message cost once at each end, with its first frame.
        let piece = size.min(self.mtu_payload).min((buffer / 2).max(1));
        let mut pieces: Vec<(u64, bool)> = Vec::new();
        for _ in 0..count {
            let mut left = size;
            let mut first = true;
            while left > 0 {
                let b = left.min(piece);
                pieces.push((b, first));
                first = false;
                left -= b;
            }
        }
        let n = pieces.len();
        let (mut send_done, mut wire_done, mut recv_done): (Time, Time, Time) = (0, 0, 0);
        let mut cum: u64 = 0;
        // (bytes consumed, when the sender knows it), one per acknowledgement, in order.
        let mut acks: Vec<(u64, Time)> = Vec::new();
        let mut ack_i = 0usize;
        let mut consumed_at: Vec<(Time, u64)> = Vec::with_capacity(n);
        let mut consumed: u64 = 0;
        let mut since_update: u64 = 0;
        // Window updates on their way to the sender, each costing it a message (VIA).
        let mut updates: Vec<Time> = Vec::new();
        for &(b, first) in &pieces {
            let o = if first { self.per_message } else { 0 };
            cum += b;
            let mut start = send_done;
            // All but `buffer` bytes must be known consumed. Everything before this piece
            // is consumed in this model, and a piece is at most half the buffer, so an
            // acknowledgement covering `need` exists (TCP: every piece; VIA: an update is
            // due once half the buffer is consumed).
            let need = cum.saturating_sub(buffer);
            if need > 0 {
                while ack_i < acks.len() && acks[ack_i].0 < need {
                    ack_i += 1;
                }
                if let Some(&(_, at)) = acks.get(ack_i) {
                    start = start.max(at);
                }
            }
            updates.retain(|&at| {
                if at <= start {
                    start += self.per_message;
                    false
                } else {
                    true
                }
            });
            send_done = start + o + self.copy(b);
            wire_done = wire_done.max(send_done) + self.wire(b);
            let arrive = wire_done + self.latency;
            recv_done = recv_done.max(arrive) + o + self.copy(b);
            consumed += b;
            consumed_at.push((recv_done, b));
            match self.window {
                Window::Acks => acks.push((consumed, recv_done + self.latency + self.wire(0))),
                Window::Software => {
                    since_update += b;
                    if since_update >= buffer / 2 {
                        since_update = 0;
                        recv_done += self.per_message;
                        let at = recv_done + self.latency + self.wire(8);
                        acks.push((consumed, at + self.per_message));
                        updates.push(at);
                    }
                }
            }
        }
        super::bandwidth(&consumed_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrations_reproduce_their_inputs() {
        for (b, rtt, rate) in [
            (Baseline::gige().unwrap(), 304.0, 21_184.0),
            (Baseline::via().unwrap(), 19.0, 150_000.0),
        ] {
            let r = b.round_trip(40) as f64 / 1e6;
            assert!((r / rtt - 1.0).abs() < 1e-3, "{}: {r}", b.name);
            // Simulated: one outstanding request gives the round trip, many the rate.
            let one = b.transactions(1, 7, 50, 40);
            let sim_rtt = (one[49] - one[48]) as f64 / 1e6;
            assert!((sim_rtt / rtt - 1.0).abs() < 1e-3, "{}: {sim_rtt}", b.name);
            let many = b.transactions(64, 7, 3000, 40);
            let per = (many[2999] - many[1499]) as f64 / 1500.0;
            let sim_rate = SEC as f64 / per;
            assert!((sim_rate / rate - 1.0).abs() < 0.01, "{}: {sim_rate}", b.name);
        }
    }

    #[test]
    fn impossible_figures_are_refused() {
        let hw = |rtt_us, rate_per_s| Hardware {
            name: "x",
            rtt_us,
            rate_per_s,
            ..VIA
        };
        let e = Baseline::calibrate(&hw(1.0, 150_000.0), 40, P::COPY_RATE);
        assert!(matches!(
            e,
            Err(CalibrationError::Negative {
                what: "one-way latency",
                ..
            })
        ));
        let e = Baseline::calibrate(&hw(100.0, 1e8), 40, P::COPY_RATE);
        assert!(matches!(
            e,
            Err(CalibrationError::Negative {
                what: "per-message cost",
                ..
            })
        ));
    }

    #[test]
    fn a_small_window_limits_a_stream_and_a_large_one_does_not() {
        let b = Baseline::gige().unwrap();
        let big = b.stream(65536, 64, 4 << 20);
        let small = b.stream(65536, 64, 8 * 1024);
        assert!(small < big * 0.5, "{small} vs {big}");
        // Bounded by the link.
        assert!(big < 1000.0, "{big}");
    }
}

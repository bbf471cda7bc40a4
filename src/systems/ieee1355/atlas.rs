//! The ATLAS second-level trigger fan-in (SCT sub-detector) on the 512-node Clos
//! (`../shared/systems/ieee1355.md`, "Traffic"): 256 read-out buffers send event fragments to
//! 80 feature extractors (FEX). The event description files are not published; the
//! generator's parameters ([`EventShape::CHOSEN`]) are plain, documented assumptions (none is
//! taken from a measured outcome), and the reproduction varies each over a range:
//!
//! - events arrive as a Poisson process at the attempted event rate;
//! - each event has `roi_per_event` regions of interest (5), each served by its own FEX,
//!   drawn uniformly among the 80 without repetition;
//! - a region of interest covers `buffers_per_roi` consecutive buffers (16: a region of the
//!   detector is read out by neighbouring buffers), starting at a uniformly drawn buffer and
//!   wrapping round;
//! - every buffer of the region sends its FEX one fragment, one packet, with a payload drawn
//!   uniformly from `fragment_min..=fragment_max` bytes (32..=224, mean 128);
//! - buffers send their fragments in event order as traffic nodes do (650 ns dispatch,
//!   full link speed); a FEX receives at full link speed.
//!
//! Placement: buffers on the first 16 terminal switches (nodes 0..256). *Grouped*: the 80
//! FEX fill the last 5 terminal switches; *distributed*: 5 FEX on each of the last 16.
//!
//! Measured over the window, in batches of equal length: the payload offered (of the
//! fragments created in each batch) and accepted (delivered to the FEX in each batch), and
//! the payload outstanding (created, not yet delivered: queued at the buffers or in the
//! network), averaged over each batch. A rate is *sustainable* when accepted equals offered
//! within the batch-means 95 % confidence interval and the outstanding payload does not grow
//! over the window (its second half's batches exceed its first half's by no more than the
//! 95 % interval of the difference, widened for the batches' correlation): the queues stay
//! bounded, so latency does. Near the knee the queues take milliseconds to settle, so the
//! verdict belongs to the window: a longer one may find a rate just above it sustainable.

use super::params::*;
use super::traffic::Window;
use crate::engine::agent::{Agent, Ctl, Delivery, Message};
use crate::rng::{Purpose, Stream};
use crate::stats::{LatencyAcc, batch_ci, t95};
use crate::time::Time;

pub const BUFFERS: u32 = 256;
pub const FEX: u32 = 80;
/// Nodes of the ATLAS network (the 512-node Clos).
pub const NODES: u32 = 512;

/// The event generator's parameters (not published; see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventShape {
    /// Active FEX (regions of interest) per event.
    pub roi_per_event: u32,
    /// Consecutive buffers per region of interest.
    pub buffers_per_roi: u32,
    /// Fragment payload, uniform in `fragment_min..=fragment_max` [bytes].
    pub fragment_min: u32,
    pub fragment_max: u32,
}

impl EventShape {
    /// The reproduction's default.
    pub const CHOSEN: EventShape = EventShape {
        roi_per_event: 5,
        buffers_per_roi: 16,
        fragment_min: 32,
        fragment_max: 224,
    };

    /// Mean payload of one event [bytes].
    pub fn event_bytes(&self) -> f64 {
        (self.roi_per_event * self.buffers_per_roi) as f64 * (self.fragment_min + self.fragment_max) as f64
            / 2.0
    }

    /// Whether the generator can draw events of this shape on this network.
    pub fn valid(&self) -> bool {
        (1..=FEX).contains(&self.roi_per_event)
            && (1..=BUFFERS).contains(&self.buffers_per_roi)
            && 0 < self.fragment_min
            && self.fragment_min <= self.fragment_max
    }
}

/// Where the FEX sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Grouped,
    Distributed,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Grouped => "grouped",
            Placement::Distributed => "distributed",
        }
    }

    /// The node of FEX `f`.
    pub fn fex_node(self, f: u32) -> u32 {
        let per = NODES_PER_SWITCH;
        let switches = NODES / per;
        match self {
            Placement::Grouped => (switches - 5) * per + f,
            Placement::Distributed => (switches - 16 + f / 5) * per + f % 5,
        }
    }
}

/// One batch of the measuring window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtlasBatch {
    /// Payload of the fragments created in the batch [bytes].
    pub offered: u64,
    /// Payload delivered to FEX in the batch, whenever created [bytes].
    pub accepted: u64,
    /// Payload created and not yet delivered, integrated over the batch [bytes · ps].
    pub outstanding: u128,
}

/// What a run says about its rate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Verdict {
    /// Accepted throughput: mean and 95 % half-width over the batches [MB/s].
    pub accepted: (f64, f64),
    /// Offered throughput: mean and 95 % half-width [MB/s].
    pub offered: (f64, f64),
    /// Accepted less offered, batch by batch: mean and 95 % half-width [MB/s].
    pub surplus: (f64, f64),
    /// Outstanding payload, the window's second half less its first: difference and 95 %
    /// half-width [bytes].
    pub growth: (f64, f64),
    /// Mean outstanding payload over the window [bytes].
    pub outstanding: f64,
}

impl Verdict {
    /// Accepted equals offered within the interval, and the outstanding payload does not grow.
    pub fn sustainable(&self) -> bool {
        self.surplus.0.abs() <= self.surplus.1 && self.growth.0 <= self.growth.1
    }
}

const END_WINDOW: u64 = u64::MAX - 1;
const HARD_STOP: u64 = u64::MAX - 2;
const EVENT: u64 = u64::MAX - 3;

/// The event generator and the buffers and FEX it drives.
pub struct Atlas {
    placement: Placement,
    shape: EventShape,
    /// Mean gap between events [ps].
    mean_gap: f64,
    window: Window,
    events: Stream,
    next: Time,
    header: u32,
    created_measured: u64,
    delivered_measured: u64,
    /// Payload created and not yet delivered [bytes], and when it last changed [ps].
    outstanding: u64,
    since: Time,
    pub batches: Vec<AtlasBatch>,
    /// Network latency (header sent to EOP received) of the window's fragments [ps].
    pub latency: LatencyAcc,
    /// Event to fragment delivered (queueing at the buffer included) [ps].
    pub delay: LatencyAcc,
    /// The window's fragments still undelivered when the run stopped.
    pub undelivered: u64,
}

impl Atlas {
    /// Events of `shape` at `rate_hz`, measured over `window` in `batches` batches (at least
    /// 4: two to each half of the window, for the growth test).
    pub fn new(
        placement: Placement,
        shape: EventShape,
        rate_hz: f64,
        window: Window,
        batches: usize,
        seed: u64,
    ) -> Atlas {
        Atlas {
            placement,
            shape,
            mean_gap: 1e12 / rate_hz,
            window,
            events: Stream::new(seed, Purpose::Arrivals, 0),
            next: 0,
            header: header_bytes(NODES),
            created_measured: 0,
            delivered_measured: 0,
            outstanding: 0,
            since: 0,
            batches: vec![AtlasBatch::default(); batches.max(4)],
            latency: LatencyAcc::default(),
            delay: LatencyAcc::default(),
            undelivered: 0,
        }
    }

    fn batch_len(&self) -> Time {
        self.window.measure / self.batches.len() as Time
    }

    /// The batch holding time `t`, if `t` is in the window.
    fn batch(&self, t: Time) -> Option<usize> {
        (t >= self.window.warmup && t < self.window.end())
            .then(|| (((t - self.window.warmup) / self.batch_len()) as usize).min(self.batches.len() - 1))
    }

    /// Adds the outstanding payload since the last change to the batches, up to `now`.
    fn integrate(&mut self, now: Time) {
        let (w0, w1, len) = (self.window.warmup, self.window.end(), self.batch_len());
        let mut t = self.since.max(w0);
        while t < now.min(w1) {
            let b = (((t - w0) / len) as usize).min(self.batches.len() - 1);
            let edge = if b + 1 == self.batches.len() {
                w1
            } else {
                w0 + (b as Time + 1) * len
            };
            let to = edge.min(now);
            self.batches[b].outstanding += self.outstanding as u128 * (to - t) as u128;
            t = to;
        }
        self.since = self.since.max(now);
    }

    fn event(&mut self, ctl: &mut Ctl) {
        let now = ctl.now();
        self.integrate(now);
        let measured = self.batch(now);
        let s = self.shape;
        let mut active = Vec::with_capacity(s.roi_per_event as usize);
        while active.len() < s.roi_per_event as usize {
            let f = self.events.below(FEX as u64) as u32;
            if !active.contains(&f) {
                active.push(f);
            }
        }
        for &f in &active {
            let fex = self.placement.fex_node(f);
            let first = self.events.below(BUFFERS as u64) as u32;
            for j in 0..s.buffers_per_roi {
                let b = (first + j) % BUFFERS;
                let payload =
                    s.fragment_min + self.events.below((s.fragment_max - s.fragment_min + 1) as u64) as u32;
                if let Some(k) = measured {
                    self.created_measured += 1;
                    self.batches[k].offered += payload as u64;
                }
                self.outstanding += payload as u64;
                let _ = ctl.send(Message {
                    src: b,
                    dst: fex,
                    flits: self.header + payload + 1,
                    header: Vec::new(),
                    tag: payload as u64,
                });
            }
        }
        let gap = self.events.exponential(self.mean_gap).round() as Time;
        self.next += gap.max(1);
        ctl.timer(0, self.next, EVENT);
    }

    fn maybe_done(&mut self, ctl: &mut Ctl) {
        if ctl.now() >= self.window.end() && self.delivered_measured >= self.created_measured {
            ctl.stop();
        }
    }

    fn mbps(&self, bytes: u64) -> f64 {
        bytes as f64 / (self.batch_len() as f64 * 1e-12) / 1e6
    }

    /// Accepted payload throughput into the FEX over the window [MB/s].
    pub fn accepted_mbps(&self) -> f64 {
        self.batches.iter().map(|b| self.mbps(b.accepted)).sum::<f64>() / self.batches.len() as f64
    }

    /// Payload offered over the window (fragments created in it) [MB/s].
    pub fn offered_mbps(&self) -> f64 {
        self.batches.iter().map(|b| self.mbps(b.offered)).sum::<f64>() / self.batches.len() as f64
    }

    /// Throughput, its balance against the offered load, and the growth of the queues.
    pub fn verdict(&self) -> Verdict {
        let ci = |v: &[f64]| batch_ci(v).unwrap_or((f64::NAN, f64::NAN));
        let acc: Vec<f64> = self.batches.iter().map(|b| self.mbps(b.accepted)).collect();
        let off: Vec<f64> = self.batches.iter().map(|b| self.mbps(b.offered)).collect();
        let surplus: Vec<f64> = acc.iter().zip(&off).map(|(a, o)| a - o).collect();
        let len = self.batch_len() as f64;
        let out: Vec<f64> = self.batches.iter().map(|b| b.outstanding as f64 / len).collect();
        let (first, second) = out.split_at(out.len() / 2);
        let mv = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0).max(1.0);
            (m, var / v.len() as f64)
        };
        let ((m1, e1), (m2, e2)) = (mv(first), mv(second));
        // Neighbouring batches' outstanding payloads are correlated (a fragment stays
        // outstanding for a good part of a batch): the variance of a half's mean is inflated
        // by (1 + r) / (1 - r), r the lag-1 correlation of the batches about their half's mean.
        let dev: Vec<f64> = first
            .iter()
            .map(|x| x - m1)
            .chain(second.iter().map(|x| x - m2))
            .collect();
        let den: f64 = dev.iter().map(|d| d * d).sum();
        let r = if den > 0.0 {
            (dev.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / den).clamp(0.0, 0.9)
        } else {
            0.0
        };
        let inflate = (1.0 + r) / (1.0 - r);
        Verdict {
            accepted: ci(&acc),
            offered: ci(&off),
            surplus: ci(&surplus),
            growth: (m2 - m1, t95(out.len() - 2) * (inflate * (e1 + e2)).sqrt()),
            outstanding: out.iter().sum::<f64>() / out.len() as f64,
        }
    }
}

impl Agent for Atlas {
    fn start(&mut self, ctl: &mut Ctl) {
        let gap = self.events.exponential(self.mean_gap).round() as Time;
        self.next = gap.max(1);
        ctl.timer(0, self.next, EVENT);
        ctl.timer(0, self.window.end(), END_WINDOW);
        ctl.timer(0, self.window.end() + self.window.drain, HARD_STOP);
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        self.integrate(ctl.now());
        self.outstanding -= d.tag;
        if let Some(k) = self.batch(d.delivered) {
            self.batches[k].accepted += d.tag;
        }
        if self.batch(d.created).is_some() {
            self.latency.record(d.delivered - d.head_injected);
            self.delay.record(d.delivered - d.created);
            self.delivered_measured += 1;
            self.maybe_done(ctl);
        }
    }

    fn timer(&mut self, ctl: &mut Ctl, _host: u32, token: u64) {
        match token {
            // Events go on while the window's fragments drain, as traffic does.
            EVENT => self.event(ctl),
            END_WINDOW => {
                self.integrate(ctl.now());
                self.maybe_done(ctl);
            }
            HARD_STOP => {
                self.undelivered = self.created_measured - self.delivered_measured;
                ctl.stop();
            }
            _ => {}
        }
    }
}

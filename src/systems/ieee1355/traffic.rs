//! The Macramé traffic node as an agent: each node works through its descriptor list
//! (destination, length, delay before the next packet), sending and receiving at full link
//! speed at once; the engine's host model charges the 650 ns dispatch overhead per packet,
//! overlapping the previous send. Below saturation the delays are exponential (Poisson
//! arrivals, queued at the node while its link is busy); at 100 % the node is backlogged: it
//! always has its next descriptor ready.
//!
//! The testbed's lists hold up to 8 K descriptors; here each node draws its descriptors from
//! its own seeded streams as it goes (a list of 8 K would not wrap within our windows), so
//! the same seed gives the same run.
//!
//! Measured here, for the packets of the window: latency from the header sent to the EOP
//! received; the payload accepted by the destinations within the window.

use super::params::*;
use crate::engine::agent::{Agent, Ctl, Delivery, Message};
use crate::rng::{Purpose, Stream};
use crate::stats::{LatencyAcc, batch_ci};
use crate::time::Time;
use crate::workload::pattern::SILENT;

/// Who sends to whom.
#[derive(Clone, Debug)]
pub enum Dest {
    /// Each packet to a destination drawn uniformly among the other nodes.
    Random,
    /// A fixed destination per node ([`SILENT`]: the node does not send).
    Fixed(Vec<u32>),
}

/// When packets are created.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Offered {
    /// Every source always has a packet waiting (saturation throughput).
    Backlogged,
    /// Exponential gaps with this mean [ps].
    Poisson { mean_gap: f64 },
}

/// A run's measuring schedule [ps].
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub warmup: Time,
    pub measure: Time,
    /// Longest wait after the window for its packets (latency runs).
    pub drain: Time,
}

impl Window {
    pub fn end(&self) -> Time {
        self.warmup + self.measure
    }
}

const END_WINDOW: u64 = u64::MAX - 1;
const HARD_STOP: u64 = u64::MAX - 2;

/// What a traffic run found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Payload delivered within the window [bytes].
    pub bytes: u64,
    /// Payload offered within the window [bytes] (created).
    pub offered_bytes: u64,
    /// Latency of the window's packets [ps].
    pub latency: LatencyAcc,
    /// Packets created in the window and still undelivered at the hard stop.
    pub undelivered: u64,
    pub window_s: f64,
    /// The window in [`BATCHES`] equal batches, for batch-means confidence intervals.
    pub batches: Vec<Batch>,
}

/// The batches a window is cut into for its confidence intervals (Law & Kelton's 10 to 30;
/// a quick run's window holds a few hundred packets a batch at the least).
pub const BATCHES: usize = 10;

/// One batch of a window.
#[derive(Clone, Copy, Debug, Default)]
pub struct Batch {
    /// Payload delivered in the batch [bytes].
    pub bytes: u64,
    /// Sum and count of the latencies of packets created in the batch [ps].
    pub latency_sum: u128,
    pub packets: u64,
}

impl Outcome {
    /// Accepted payload throughput, all destinations [MB/s].
    pub fn accepted_mbps(&self) -> f64 {
        self.bytes as f64 / self.window_s / 1e6
    }

    /// 95 % half-width of [`Self::accepted_mbps`], by batch means [MB/s].
    pub fn accepted_ci95_mbps(&self) -> Option<f64> {
        let per = self.window_s / self.batches.len() as f64;
        let v: Vec<f64> = self.batches.iter().map(|b| b.bytes as f64 / per / 1e6).collect();
        batch_ci(&v).map(|x| x.1)
    }

    /// 95 % half-width of the mean latency, by batch means (the mean latency of the packets
    /// created in each batch) [ps]; `None` if a batch has no packet.
    pub fn latency_ci95(&self) -> Option<f64> {
        let v: Option<Vec<f64>> = self
            .batches
            .iter()
            .map(|b| (b.packets > 0).then(|| b.latency_sum as f64 / b.packets as f64))
            .collect();
        batch_ci(&v?).map(|x| x.1)
    }

    pub fn offered_mbps(&self) -> f64 {
        self.offered_bytes as f64 / self.window_s / 1e6
    }
}

/// The traffic nodes of one run.
pub struct TrafficNodes {
    n: u32,
    payload: u32,
    /// Header flits of a packet to a destination (the address, 1 or 2 bytes).
    header_flits: u32,
    dest: Dest,
    offered: Offered,
    window: Window,
    /// Universal routing: random first headers from `lo..=hi`, `width` flits each.
    universal: Option<(u16, u16, u32)>,
    gaps: Vec<Stream>,
    dsts: Vec<Stream>,
    /// Next arrival per node (Poisson) [ps].
    next: Vec<Time>,
    sending: Vec<bool>,
    created_measured: u64,
    delivered_measured: u64,
    pub out: Outcome,
}

impl TrafficNodes {
    pub fn new(
        n: u32,
        payload: u32,
        dest: Dest,
        offered: Offered,
        window: Window,
        seed: u64,
    ) -> TrafficNodes {
        let sending = (0..n)
            .map(|h| match &dest {
                Dest::Random => n > 1,
                Dest::Fixed(m) => m[h as usize] != SILENT,
            })
            .collect();
        TrafficNodes {
            n,
            payload,
            header_flits: header_bytes(n),
            dest,
            offered,
            window,
            universal: None,
            gaps: (0..n)
                .map(|h| Stream::new(seed, Purpose::Arrivals, h as u64))
                .collect(),
            dsts: (0..n)
                .map(|h| Stream::new(seed, Purpose::Destinations, h as u64))
                .collect(),
            next: vec![0; n as usize],
            sending,
            created_measured: 0,
            delivered_measured: 0,
            out: Outcome {
                window_s: window.measure as f64 * 1e-12,
                batches: vec![Batch::default(); BATCHES],
                ..Outcome::default()
            },
        }
    }

    /// Universal routing: every packet starts with a random header from `lo..=hi` (the
    /// centre switches' labels), and headers are `width` bytes.
    pub fn universal(mut self, lo: u16, hi: u16, width: u32) -> TrafficNodes {
        self.universal = Some((lo, hi, width));
        self.header_flits = width;
        self
    }

    /// The next descriptor of node `h`, handed to its host now.
    fn send(&mut self, ctl: &mut Ctl, h: u32) {
        let dst = match &self.dest {
            Dest::Random => {
                let d = self.dsts[h as usize].below(self.n as u64 - 1) as u32;
                if d >= h { d + 1 } else { d }
            }
            Dest::Fixed(m) => m[h as usize],
        };
        let (header, extra) = match self.universal {
            Some((lo, hi, w)) => {
                let r = lo + self.dsts[h as usize].below((hi - lo) as u64 + 1) as u16;
                (vec![r, dst as u16], w)
            }
            None => (Vec::new(), 0),
        };
        let now = ctl.now();
        if now >= self.window.warmup && now < self.window.end() {
            self.created_measured += 1;
            self.out.offered_bytes += self.payload as u64;
        }
        let m = Message {
            src: h,
            dst,
            flits: extra + self.header_flits + self.payload + 1,
            header,
            tag: self.payload as u64,
        };
        // The message is well formed by construction.
        let _ = ctl.send(m);
    }

    fn arrival(&mut self, ctl: &mut Ctl, h: u32, mean_gap: f64) {
        let gap = self.gaps[h as usize].exponential(mean_gap).round() as Time;
        self.next[h as usize] += gap.max(1);
        ctl.timer(h, self.next[h as usize], h as u64);
    }

    /// The batch of a time within the window.
    fn batch(&self, t: Time) -> usize {
        let k = (t - self.window.warmup) as u128 * BATCHES as u128 / self.window.measure.max(1) as u128;
        (k as usize).min(BATCHES - 1)
    }

    fn maybe_done(&mut self, ctl: &mut Ctl) {
        if ctl.now() >= self.window.end() && self.delivered_measured >= self.created_measured {
            ctl.stop();
        }
    }
}

impl Agent for TrafficNodes {
    fn start(&mut self, ctl: &mut Ctl) {
        for h in 0..self.n {
            if !self.sending[h as usize] {
                continue;
            }
            match self.offered {
                Offered::Backlogged => self.send(ctl, h),
                Offered::Poisson { mean_gap } => self.arrival(ctl, h, mean_gap),
            }
        }
        ctl.timer(0, self.window.end(), END_WINDOW);
        ctl.timer(0, self.window.end() + self.window.drain, HARD_STOP);
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        let (w0, w1) = (self.window.warmup, self.window.end());
        if d.delivered >= w0 && d.delivered < w1 {
            self.out.bytes += d.tag;
            let k = self.batch(d.delivered);
            self.out.batches[k].bytes += d.tag;
        }
        if d.created >= w0 && d.created < w1 {
            let l = d.delivered - d.head_injected;
            self.out.latency.record(l);
            let k = self.batch(d.created);
            let b = &mut self.out.batches[k];
            b.latency_sum += l as u128;
            b.packets += 1;
            self.delivered_measured += 1;
            self.maybe_done(ctl);
        }
    }

    fn timer(&mut self, ctl: &mut Ctl, host: u32, token: u64) {
        match token {
            END_WINDOW => {
                if self.offered == Offered::Backlogged {
                    // Saturation runs measure throughput only.
                    ctl.stop();
                } else {
                    self.maybe_done(ctl);
                }
            }
            HARD_STOP => {
                self.out.undelivered = self.created_measured - self.delivered_measured;
                ctl.stop();
            }
            _ => {
                if let Offered::Poisson { mean_gap } = self.offered {
                    self.send(ctl, host);
                    self.arrival(ctl, host, mean_gap);
                }
            }
        }
    }

    fn idle(&mut self, ctl: &mut Ctl, host: u32) {
        if self.offered == Offered::Backlogged {
            self.send(ctl, host);
        }
    }
}

/// Runs `agent` on `spec`; the agent decides when the run ends.
pub fn run<A: Agent>(spec: &crate::engine::Spec, agent: &mut A) -> Result<(), String> {
    run_ordered(spec, agent, false)
}

/// As [`run`], optionally applying equal-time events and visiting components in reverse
/// order (results must not change).
pub fn run_ordered<A: Agent>(spec: &crate::engine::Spec, agent: &mut A, reverse: bool) -> Result<(), String> {
    let mut sim = crate::engine::Sim::new(spec).map_err(|e| e.to_string())?;
    sim.reverse_order = reverse;
    let out = sim.run_with(agent, &mut |_| {}).map_err(|e| e.to_string())?;
    if let Some(d) = out.deadlock {
        return Err(format!("{}: deadlock: {}", spec.name, d.cycle.join(" → ")));
    }
    Ok(())
}

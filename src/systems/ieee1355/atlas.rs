//! The ATLAS second-level trigger fan-in (SCT sub-detector) on the 512-node Clos
//! (`../shared/systems/ieee1355.md`, "Traffic"): 256 read-out buffers send event fragments to
//! 80 feature extractors (FEX). The event description files are not published; the
//! generator's parameters are these, chosen as plain, documented assumptions (none is taken
//! from a measured outcome):
//!
//! - events arrive as a Poisson process at the attempted event rate;
//! - each event has [`ROI_PER_EVENT`] regions of interest, each served by its own FEX, drawn
//!   uniformly among the 80 without repetition;
//! - a region of interest covers [`BUFFERS_PER_ROI`] consecutive buffers (a region of the
//!   detector is read out by neighbouring buffers), starting at a uniformly drawn buffer
//!   and wrapping round;
//! - every buffer of the region sends its FEX one fragment, one packet, with a payload drawn
//!   uniformly from [`FRAGMENT_MIN`]`..=`[`FRAGMENT_MAX`] bytes (mean 128 bytes);
//! - buffers send their fragments in event order as traffic nodes do (650 ns dispatch,
//!   full link speed); a FEX receives at full link speed.
//!
//! Placement: buffers on the first 16 terminal switches (nodes 0..256). *Grouped*: the 80
//! FEX fill the last 5 terminal switches; *distributed*: 5 FEX on each of the last 16.

use super::params::*;
use super::traffic::Window;
use crate::engine::agent::{Agent, Ctl, Delivery, Message};
use crate::stats::LatencyAcc;
use crate::time::Time;
use crate::workload::rng::{Purpose, Stream};

pub const BUFFERS: u32 = 256;
pub const FEX: u32 = 80;
/// Active FEX (regions of interest) per event.
pub const ROI_PER_EVENT: u32 = 5;
/// Consecutive buffers per region of interest.
pub const BUFFERS_PER_ROI: u32 = 16;
/// Fragment payload, uniform [bytes].
pub const FRAGMENT_MIN: u32 = 32;
pub const FRAGMENT_MAX: u32 = 224;
/// Nodes of the ATLAS network (the 512-node Clos).
pub const NODES: u32 = 512;

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

/// Mean payload of one event [bytes].
pub fn event_bytes() -> f64 {
    (ROI_PER_EVENT * BUFFERS_PER_ROI) as f64 * (FRAGMENT_MIN + FRAGMENT_MAX) as f64 / 2.0
}

const END_WINDOW: u64 = u64::MAX - 1;
const HARD_STOP: u64 = u64::MAX - 2;
const EVENT: u64 = u64::MAX - 3;

/// The event generator and the buffers and FEX it drives.
pub struct Atlas {
    placement: Placement,
    /// Mean gap between events [ps].
    mean_gap: f64,
    window: Window,
    events: Stream,
    next: Time,
    header: u32,
    created_measured: u64,
    delivered_measured: u64,
    /// Payload delivered to FEX in the window [bytes].
    pub bytes: u64,
    pub offered_bytes: u64,
    pub latency: LatencyAcc,
    pub undelivered: u64,
}

impl Atlas {
    pub fn new(placement: Placement, rate_hz: f64, window: Window, seed: u64) -> Atlas {
        Atlas {
            placement,
            mean_gap: 1e12 / rate_hz,
            window,
            events: Stream::new(seed, Purpose::Arrivals, 0),
            next: 0,
            header: header_bytes(NODES),
            created_measured: 0,
            delivered_measured: 0,
            bytes: 0,
            offered_bytes: 0,
            latency: LatencyAcc::default(),
            undelivered: 0,
        }
    }

    fn event(&mut self, ctl: &mut Ctl) {
        let now = ctl.now();
        let measured = now >= self.window.warmup && now < self.window.end();
        let mut active = [u32::MAX; ROI_PER_EVENT as usize];
        for k in 0..ROI_PER_EVENT as usize {
            active[k] = loop {
                let f = self.events.below(FEX as u64) as u32;
                if !active[..k].contains(&f) {
                    break f;
                }
            };
        }
        for &f in &active {
            let fex = self.placement.fex_node(f);
            let first = self.events.below(BUFFERS as u64) as u32;
            for j in 0..BUFFERS_PER_ROI {
                let b = (first + j) % BUFFERS;
                let payload =
                    FRAGMENT_MIN + self.events.below((FRAGMENT_MAX - FRAGMENT_MIN + 1) as u64) as u32;
                if measured {
                    self.created_measured += 1;
                    self.offered_bytes += payload as u64;
                }
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

    /// Accepted payload throughput into the FEX [MB/s].
    pub fn accepted_mbps(&self) -> f64 {
        self.bytes as f64 / (self.window.measure as f64 * 1e-12) / 1e6
    }

    pub fn offered_mbps(&self) -> f64 {
        self.offered_bytes as f64 / (self.window.measure as f64 * 1e-12) / 1e6
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
        let (w0, w1) = (self.window.warmup, self.window.end());
        if d.delivered >= w0 && d.delivered < w1 {
            self.bytes += d.tag;
        }
        if d.created >= w0 && d.created < w1 {
            self.latency.record(d.delivered - d.head_injected);
            self.delivered_measured += 1;
            self.maybe_done(ctl);
        }
    }

    fn timer(&mut self, ctl: &mut Ctl, _host: u32, token: u64) {
        match token {
            // Events go on while the window's fragments drain, as traffic does.
            EVENT => self.event(ctl),
            END_WINDOW => self.maybe_done(ctl),
            HARD_STOP => {
                self.undelivered = self.created_measured - self.delivered_measured;
                ctl.stop();
            }
            _ => {}
        }
    }
}

//! Turning a finished run's counters into its reported result.

use super::{RunOutcome, Sim};
use crate::stats::{LatencyHistogram, LatencySummary, batch_ci, nice_width};
use crate::time::Time;
use crate::workload::Process;
use serde::Serialize;

/// Utilization of one channel during the measurement window.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ChannelUse {
    pub channel: String,
    /// Fraction of the window the channel was sending.
    pub utilization: f64,
}

/// A batch run's own figures.
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct BatchOutcome {
    /// Packets each host sent.
    pub packets_per_host: u64,
    /// At most this many of a host's packets in flight (`traffic.max_outstanding`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_outstanding: Option<u32>,
    /// From the start to the last packet delivered [cycles]; `None` if the batch was not
    /// through (a deadlock, Ctrl-C, or past reef's limit of 1000 s).
    pub duration_cycles: Option<f64>,
}

/// Everything a run reports. Wall-clock time is kept out of the serialized form so that
/// the same config and seed give the same JSON, bit for bit.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct RunResult {
    pub name: String,
    pub seed: u64,
    pub hosts: usize,
    pub switches: u32,
    /// Output buffers after switch outputs (`switch.output_buffer`; each a node of its own).
    #[serde(default)]
    pub output_buffers: u32,
    pub channels: usize,
    pub routing: String,
    /// One cycle [ps].
    pub cycle_ps: f64,
    pub injection: String,
    /// The measurement window the rates are over [cycles]: as configured, or up to the
    /// deadlock that stopped the run (0 if that came before the window began).
    #[serde(default)]
    pub window_cycles: f64,
    /// Configured offered load [flits/cycle/host] (`None` with backlogged sources).
    pub offered_load: Option<f64>,
    /// Flits created in the window per host per cycle (`None` with backlogged sources, or
    /// no window).
    pub offered_flits_per_node_cycle: Option<f64>,
    /// Flits delivered in the window per host per cycle (mean over hosts).
    pub accepted_flits_per_node_cycle: f64,
    pub accepted_min_flits_per_node_cycle: f64,
    pub accepted_max_flits_per_node_cycle: f64,
    /// 95 % confidence half-width of the accepted throughput, by batch means.
    pub accepted_ci95: Option<f64>,
    /// Total accepted throughput [bytes/s].
    pub accepted_total_bytes_per_s: f64,
    /// Latency from packet creation to tail delivered (source queueing included) [cycles].
    pub packet_latency_cycles: LatencySummary,
    /// Latency from head injected to tail delivered [cycles].
    pub network_latency_cycles: LatencySummary,
    pub packet_latency_ns: LatencySummary,
    pub network_latency_ns: LatencySummary,
    /// The two latencies' distributions, in the same bins (about 100 up to the largest
    /// packet latency).
    pub packet_latency_histogram: LatencyHistogram,
    pub network_latency_histogram: LatencyHistogram,
    /// Mean switches traversed by a measured packet.
    pub mean_hops: f64,
    pub measured_packets: u64,
    pub delivered_measured_packets: u64,
    pub saturated: bool,
    pub saturation_reason: Option<String>,
    /// Mean and highest utilization of switch-to-switch channels.
    pub network_utilization_mean: f64,
    pub network_utilization_max: f64,
    pub busiest_channel: Option<String>,
    pub channel_utilization: Vec<ChannelUse>,
    pub flits_injected: u64,
    pub flits_delivered: u64,
    pub packets_injected: u64,
    pub packets_delivered: u64,
    /// Flit transmissions over channels (injection and ejection channels included).
    pub flit_hops: u64,
    pub events: u64,
    /// Simulated time at the end [ns].
    pub sim_end_ns: f64,
    pub deadlock: Option<super::watchdog::Deadlock>,
    /// Ctrl-C stopped the run: the window ends where it stopped (`window_cycles`), and the
    /// packets still in flight are left out; the run is neither steady state nor saturated.
    #[serde(default)]
    pub interrupted: bool,
    /// How BookSim2's sampling (`sim.sampling = "booksim"`) decided the window: its sample
    /// periods of warm-up and of measurement, whether it converged (absent with a fixed
    /// window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::stats::sampling::SamplingOutcome>,
    /// A batch (`traffic.injection = "batch"`): the packets each host sent, and the time
    /// from the start to the last one delivered [cycles], the window every rate above is
    /// over (BookSim2's batch duration counts the cycle of that delivery too: one more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchOutcome>,
    /// Wall-clock time of the run [s] (not serialized).
    #[serde(skip)]
    pub wall_s: f64,
}

impl RunResult {
    /// Whether the run has latencies to show: some measured packet was delivered (else
    /// its latency figures are zeros that mean nothing).
    pub fn has_latency(&self) -> bool {
        self.delivered_measured_packets > 0
    }

    /// The 95 % half-width of the accepted throughput as a fraction of it: the half-width of
    /// any figure proportional to the throughput, that figure times this.
    pub fn accepted_relative_ci95(&self) -> Option<f64> {
        self.accepted_ci95
            .filter(|_| self.accepted_flits_per_node_cycle > 0.0)
            .map(|c| c / self.accepted_flits_per_node_cycle)
    }

    /// Flit transmissions per wall-clock second.
    pub fn flit_hops_per_s(&self) -> f64 {
        self.flit_hops as f64 / self.wall_s.max(1e-9)
    }
}

/// A time [ps] in cycles of `cycle` ps, the unit a config counts in, with the time itself in
/// brackets: `280 cycles (280.000 ns)`; a time that is not a whole number of cycles (a clock
/// whose period is not whole picoseconds) to three decimals.
pub fn cycles_text(t: Time, cycle: f64) -> String {
    let n = t as f64 / cycle.max(1e-9);
    let n = if (n - n.round()).abs() < 1e-6 {
        format!("{}", n.round())
    } else {
        format!("{n:.3}")
    };
    let unit = if n == "1" { "cycle" } else { "cycles" };
    format!("{n} {unit} ({})", crate::time::fmt_time(t))
}

/// Measured packets below which a run's accepted throughput is too noisy to call it
/// saturated by comparing it with the offered load.
const MIN_PACKETS_FOR_THROUGHPUT: u64 = 50;

impl Sim<'_> {
    /// The result of a finished run.
    pub fn result(&self, outcome: &RunOutcome) -> RunResult {
        let spec = self.spec;
        let p = &spec.params;
        let fab = self.fab;
        let cycle = p.cycle.to_f64();
        // (Shorter than configured if a deadlock stopped the run; empty if that came before
        // the window began, and then every rate is zero, none offered.)
        let window = (self.me - self.ms) as f64;
        let cycles = window / cycle;
        let rate = |x: f64, per: f64| if per > 0.0 { x / per } else { 0.0 };
        let n = self.hosts.len().max(1) as f64;
        let c = &self.c;
        let per_node: Vec<f64> = c.flits_window.iter().map(|&f| rate(f as f64, cycles)).collect();
        let accepted = per_node.iter().sum::<f64>() / n;
        let backlogged = matches!(spec.workload.process, Process::Backlogged);
        let batch = match spec.workload.process {
            Process::Batch { count, window, .. } => Some((count, window)),
            _ => None,
        };
        // (A batch offers a packet a cycle until it has sent them all: no rate.)
        let no_rate = backlogged || batch.is_some();
        let offered = (!no_rate && window > 0.0).then(|| c.offered_flits as f64 / n / cycles);
        // Batches split the configured window: a deadlock leaves them unequal, so no interval.
        let bcycles = cycles / c.batches.len() as f64;
        // (A batch's window is known only at its end, and its packets all fall in one.)
        let thr: Vec<f64> = if outcome.deadlock.is_some() || outcome.interrupted || batch.is_some() {
            Vec::new()
        } else {
            c.batches.iter().map(|b| b.flits as f64 / n / bcycles).collect()
        };
        let lat_ci = |f: fn(&crate::stats::Batch) -> u128| {
            let v: Vec<f64> = c
                .batches
                .iter()
                .filter(|b| b.packets > 0)
                .map(|b| f(b) as f64 / b.packets as f64)
                .collect();
            batch_ci(&v).map(|x| x.1)
        };
        // Each distribution in bins of its own (about 100 up to its largest): network latency
        // in the packet latency's bins was one dot where sources queue.
        let bin = |acc: &crate::stats::LatencyAcc| nice_width(acc.max() as f64 / cycle, 100);
        let pci = lat_ci(|b| b.packet_sum);
        let nci = lat_ci(|b| b.network_sum);
        let mut reason = None;
        if outcome.interrupted {
            // Neither steady state nor saturated: it was stopped.
        } else if batch.is_some() {
            if outcome.drain_failed {
                reason = Some("the batch was not through by reef's limit of 1000 s".to_string());
            }
        } else if backlogged {
            reason = Some("every source is backlogged: this is the saturation throughput".to_string());
        } else if outcome.drain_failed {
            reason = Some(format!(
                "{} of {} measured packets were still undelivered {} after the window",
                c.total_measured - c.delivered_measured,
                c.total_measured,
                cycles_text(p.drain_limit, cycle)
            ));
        } else if let Some(o) = offered
            // Below the offered load by more than noise: even the batch means' upper 95 %
            // bound, and over enough packets to tell (a run of a few packets, where one in
            // flight at the window's edge is a large share, was flagged at 1 % load; the
            // drain still catches a network that cannot carry them).
            && c.total_measured >= MIN_PACKETS_FOR_THROUGHPUT
            && accepted + batch_ci(&thr).map_or(0.0, |x| x.1) < 0.95 * o
        {
            reason = Some(format!(
                "accepted throughput {accepted:.4} is below the offered {o:.4} flits/cycle/host"
            ));
        }
        if let Some(u) = self.sampling.as_ref().and_then(|s| s.unstable.as_ref())
            && !outcome.interrupted
        {
            reason = Some(format!("unstable, as BookSim2 would say: {u}"));
        }
        if let Some(d) = &outcome.deadlock {
            reason = Some(format!("deadlock at {}", cycles_text(d.time, cycle)));
        }
        // Flits committed by trains beyond the end of the run are not counted (nor at it, if
        // the run stopped before processing that instant).
        let (end, open) = (self.end, self.end_open);
        let past = |t: Time| t > end || (open && t == end);
        let (mut hop_over, mut inj_over, mut dlv_over) = (0u64, 0u64, 0u64);
        for ch in &self.chans {
            let pace = self.timing[ch.prof as usize].send_pace();
            for j in 0..ch.tr_k {
                if past(pace.at(ch.tr_start, j as u32)) {
                    hop_over += 1;
                    if !fab.is_switch(crate::fabric::NodeId(ch.src)) {
                        inj_over += 1;
                    }
                }
            }
        }
        for h in &self.hosts {
            let ej = fab.ejection_channel(self.node_host[h.node as usize]).0;
            for &(a0, k, ends_tail) in &h.rx_trains {
                for j in 0..k {
                    if past(self.train_arrival(ej, a0, j, k, ends_tail)) {
                        dlv_over += 1;
                    }
                }
            }
        }
        let mut uses = Vec::with_capacity(self.chans.len());
        let (mut net_sum, mut net_n, mut net_max, mut busiest) = (0.0, 0usize, 0.0f64, None);
        for (ci, ch) in self.chans.iter().enumerate() {
            let u = rate(ch.busy as f64, window);
            let name = fab.channel_name(crate::fabric::ChannelId(ci as u32));
            if fab.is_switch(crate::fabric::NodeId(ch.src)) && fab.is_switch(fab.channels[ci].dst) {
                net_sum += u;
                net_n += 1;
                if u > net_max || busiest.is_none() {
                    net_max = u;
                    busiest = Some(name.clone());
                }
            }
            uses.push(ChannelUse {
                channel: name,
                utilization: u,
            });
        }
        RunResult {
            name: spec.name.clone(),
            seed: p.seed,
            hosts: self.hosts.len(),
            switches: fab.stage_base,
            output_buffers: fab.switches - fab.stage_base,
            channels: fab.channels.len(),
            routing: self.routing.name().to_string(),
            cycle_ps: cycle,
            window_cycles: cycles,
            injection: match spec.workload.process {
                Process::Bernoulli { .. } => "bernoulli",
                Process::Poisson { .. } => "poisson",
                Process::Periodic { .. } => "periodic",
                Process::OnOff { .. } => "on-off",
                Process::Backlogged => "backlogged",
                Process::Batch { .. } => "batch",
            }
            .to_string(),
            // (None without synthetic traffic: `pattern = "none"` configures no load.)
            offered_load: (!no_rate && (0..self.hosts.len() as u32).any(|h| spec.workload.pattern.sends(h)))
                .then_some(spec.workload.load),
            offered_flits_per_node_cycle: offered,
            accepted_flits_per_node_cycle: accepted,
            accepted_min_flits_per_node_cycle: per_node
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                .min(accepted),
            accepted_max_flits_per_node_cycle: per_node.iter().copied().fold(0.0, f64::max),
            accepted_ci95: batch_ci(&thr).map(|x| x.1),
            accepted_total_bytes_per_s: accepted * n * p.flit_bytes as f64 / (cycle * 1e-12),
            packet_latency_cycles: c.packet_lat.summary(cycle, pci),
            network_latency_cycles: c.network_lat.summary(cycle, nci),
            packet_latency_ns: c.packet_lat.summary(1000.0, pci),
            network_latency_ns: c.network_lat.summary(1000.0, nci),
            packet_latency_histogram: LatencyHistogram::of(&c.packet_lat, bin(&c.packet_lat), cycle),
            network_latency_histogram: LatencyHistogram::of(&c.network_lat, bin(&c.network_lat), cycle),
            mean_hops: if c.delivered_measured == 0 {
                0.0
            } else {
                c.hops_measured as f64 / c.delivered_measured as f64
            },
            measured_packets: c.total_measured,
            delivered_measured_packets: c.delivered_measured,
            saturated: reason.is_some(),
            saturation_reason: reason,
            network_utilization_mean: if net_n == 0 { 0.0 } else { net_sum / net_n as f64 },
            network_utilization_max: net_max,
            busiest_channel: busiest,
            channel_utilization: uses,
            flits_injected: c.flits_injected - inj_over,
            flits_delivered: c.flits_delivered - dlv_over,
            packets_injected: c.packets_injected,
            packets_delivered: c.packets_delivered,
            flit_hops: c.flit_hops - hop_over,
            events: c.events,
            // Where the run ended (the drain limit, the stop), not the last instant with
            // an event: trains leave out instants where nothing but a flit moved.
            sim_end_ns: if self.end == Time::MAX { self.now } else { self.end } as f64 / 1000.0,
            deadlock: outcome.deadlock.clone(),
            interrupted: outcome.interrupted,
            sampling: self.sampling.clone(),
            batch: batch.map(|(count, window)| BatchOutcome {
                packets_per_host: count,
                max_outstanding: (window > 0).then_some(window),
                duration_cycles: (outcome.deadlock.is_none()
                    && !outcome.interrupted
                    && !outcome.drain_failed)
                    .then_some(cycles),
            }),
            wall_s: outcome.wall_s,
        }
    }
}

//! Reports: the readable summary of a run, sweep tables, CSV and SVG plots, HTML pages.

pub mod html;
pub mod map;
pub mod messages;
pub mod plot;
pub mod reproduction;
pub mod runs;
pub mod study;

use crate::engine::result::{RunResult, cycles_text};
use serde::Serialize;
use std::fmt::Write;

fn lat_line(out: &mut String, name: &str, l: &crate::stats::LatencySummary, unit: &str) {
    let ci = l.ci95.map(|c| format!(" ±{c:.2}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "  {name:<17} mean {:>9.2}{ci}  p50 {:>8.1}  p99 {:>8.1}  p99.9 {:>8.1}  max {:>8.1} {unit}",
        l.mean, l.p50, l.p99, l.p999, l.max
    );
}

/// The readable summary of one run.
pub fn summary(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} hosts, {} switches{}, {} channels, {} routing, seed {}",
        r.name,
        r.hosts,
        r.switches,
        if r.output_buffers > 0 {
            format!(" (and {} output buffers)", r.output_buffers)
        } else {
            String::new()
        },
        r.channels,
        r.routing,
        r.seed
    );
    // (A cycle of a clock whose period is not whole picoseconds, 300 MHz, to the femtosecond.)
    let cycle = if r.cycle_ps.fract() == 0.0 {
        format!("{}", r.cycle_ps)
    } else {
        format!("{:.3}", r.cycle_ps)
    };
    let _ = writeln!(s, "  one cycle = {cycle} ps; injection {}", r.injection);
    if let Some(o) = &r.sampling {
        let how = if o.unstable.is_some() {
            "unstable"
        } else if o.converged {
            "converged"
        } else if r.interrupted {
            "interrupted before it converged"
        } else if r.deadlock.is_some() {
            "stopped by the deadlock before it converged"
        } else {
            "NOT converged: max_samples ended it (BookSim2 prints its averages all the same)"
        };
        let _ = writeln!(
            s,
            "  sampling  BookSim2's: {} warm-up and {} measured sample periods, {how}",
            o.warmup_periods, o.measured_periods
        );
    }
    let no_window = r.window_cycles <= 0.0 && r.deadlock.is_some();
    match r.offered_flits_per_node_cycle {
        _ if no_window => {
            let _ = writeln!(
                s,
                "  offered   none measured: the run deadlocked before the measurement window began"
            );
        }
        Some(o) => {
            let configured = r.offered_load.map_or(" (no synthetic traffic)".to_string(), |l| {
                format!(" (configured {l:.4})")
            });
            let _ = writeln!(s, "  offered   {o:.4} flits/cycle/host{configured}");
        }
        None => match &r.batch {
            Some(b) => {
                let through = match b.duration_cycles {
                    Some(d) => format!("delivered in {d:.0} cycles (the window of the rates below)"),
                    None => "not through (below)".to_string(),
                };
                let window = b
                    .max_outstanding
                    .map(|w| format!(", at most {w} in flight"))
                    .unwrap_or_default();
                let _ = writeln!(
                    s,
                    "  batch     {} packets a host, one created a cycle{window}: {through}",
                    b.packets_per_host
                );
            }
            None => {
                let _ = writeln!(s, "  offered   backlogged (every source always has a packet)");
            }
        },
    }
    let ci = r.accepted_ci95.map(|c| format!(" ±{c:.4}")).unwrap_or_default();
    let _ = writeln!(
        s,
        "  accepted  {:.4}{ci} flits/cycle/host (min {:.4}, max {:.4}); {:.4e} bytes/s in total",
        r.accepted_flits_per_node_cycle,
        r.accepted_min_flits_per_node_cycle,
        r.accepted_max_flits_per_node_cycle,
        r.accepted_total_bytes_per_s
    );
    if no_window {
        let _ = writeln!(s, "  latency   none: no packet was created in the window");
    } else if !r.has_latency() {
        // Zeros here would read as latencies.
        let _ = writeln!(
            s,
            "  latency   none: no measured packet was delivered ({} created in the window)",
            r.measured_packets
        );
    } else {
        let _ = writeln!(
            s,
            "  latency over {} measured packets (mean hops {:.2}):",
            r.delivered_measured_packets, r.mean_hops
        );
        lat_line(&mut s, "packet latency", &r.packet_latency_cycles, "cycles");
        lat_line(&mut s, "network latency", &r.network_latency_cycles, "cycles");
    }
    let _ = writeln!(
        s,
        "  channels  mean use {:.3}, busiest {:.3} ({})",
        r.network_utilization_mean,
        r.network_utilization_max,
        r.busiest_channel.as_deref().unwrap_or("-")
    );
    if r.interrupted {
        let _ = writeln!(
            s,
            "  INTERRUPTED at {}: the rates above are over the {:.0} cycles of the window simulated, \
             the latencies over the packets delivered by then",
            cycles_text((r.sim_end_ns * 1000.0).round() as u64, r.cycle_ps),
            r.window_cycles
        );
    }
    if let Some(d) = &r.deadlock {
        let _ = writeln!(
            s,
            "  DEADLOCK at {}: {} VCs can never move; waiting cycle:\n    {}",
            cycles_text(d.time, r.cycle_ps),
            d.blocked_vcs,
            d.cycle.join("\n    → ")
        );
        if !no_window {
            let _ = writeln!(
                s,
                "  (the rates above are over the {:.0} cycles of the window before the deadlock)",
                r.window_cycles
            );
        }
    } else if let Some(why) = &r.saturation_reason {
        let _ = writeln!(s, "  SATURATED: {why}");
    }
    let _ = writeln!(
        s,
        "  run: {} flit-hops, {} events, {:.3} s wall, {:.1} M flit-hops/s",
        r.flit_hops,
        r.events,
        r.wall_s,
        r.flit_hops_per_s() / 1e6
    );
    s
}

/// A run's packet and network latency distributions as a plot: the fraction of measured
/// packets in each bin per cycle of its width (each distribution has bins of its own), at
/// the bin's centre, on a logarithmic scale (empty bins left out).
pub fn latency_plot(r: &RunResult) -> plot::Plot<'_> {
    let series = |name: &str, h: &crate::stats::LatencyHistogram| {
        let n = h.counts.iter().sum::<u64>().max(1) as f64;
        plot::Series {
            name: format!("{name} (bins of {} cycles)", h.bin_cycles),
            points: h
                .counts
                .iter()
                .enumerate()
                .filter(|b| *b.1 > 0)
                .map(|(i, &k)| ((i as f64 + 0.5) * h.bin_cycles, k as f64 / n / h.bin_cycles))
                .collect(),
            markers_only: false,
            color: None,
        }
    };
    plot::Plot {
        title: &r.name,
        x_label: "latency [cycles]",
        y_label: "fraction of measured packets per cycle of latency",
        series: vec![
            series("packet latency", &r.packet_latency_histogram),
            series("network latency", &r.network_latency_histogram),
        ],
        log_y: true,
        log_x: false,
    }
}

/// `x` rounded to `digits` significant digits, written as the shortest decimal that reads
/// back as that rounded value (`0.04965999999999999` to 5 digits is `0.04966`); non-finite
/// values as empty fields.
pub fn round_sig(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let r: f64 = format!("{:.*e}", digits.max(1) - 1, x).parse().unwrap_or(x);
    // (Far from 1, in exponent form: 3.5e-30, not thirty zeros.)
    if r != 0.0 && !(1e-4..1e15).contains(&r.abs()) {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

/// One point of a load sweep.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct SweepPoint {
    pub load: f64,
    pub result: RunResult,
}

/// A load sweep: points in increasing load, and the saturation throughput.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Sweep {
    pub name: String,
    pub points: Vec<SweepPoint>,
    /// Accepted throughput with every source backlogged [flits/cycle/host].
    pub saturation_throughput: Option<f64>,
    /// Ctrl-C stopped the sweep: `points` are those that finished.
    #[serde(default)]
    pub interrupted: bool,
    /// Loads that did not finish (Ctrl-C).
    #[serde(default)]
    pub unfinished: Vec<f64>,
}

/// The sweep as a table.
pub fn sweep_table(sw: &Sweep) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: latency against offered load (flits/cycle/host; latency in cycles)",
        sw.name
    );
    let _ = writeln!(
        s,
        "{:>7} {:>9} {:>9} {:>10} {:>9} {:>10} {:>9}  state",
        "load", "offered", "accepted", "pkt mean", "pkt p99", "net mean", "net p99"
    );
    for p in &sw.points {
        let r = &p.result;
        let state = if r.deadlock.is_some() {
            "DEADLOCK"
        } else if r.saturated {
            "saturated"
        } else {
            ""
        };
        let (pl, nl) = (&r.packet_latency_cycles, &r.network_latency_cycles);
        // No measured packet delivered: no latency, not a latency of 0.
        let lat = if !r.has_latency() {
            format!("{:>10} {:>9} {:>10} {:>9}", "-", "-", "-", "-")
        } else {
            format!(
                "{:>10.2} {:>9.1} {:>10.2} {:>9.1}",
                pl.mean, pl.p99, nl.mean, nl.p99
            )
        };
        // No window before a deadlock: nothing was offered in it, not NaN.
        let offered = r
            .offered_flits_per_node_cycle
            .map_or("-".to_string(), |o| format!("{o:.4}"));
        let _ = writeln!(
            s,
            "{:>7.3} {offered:>9} {:>9.4} {lat}  {state}",
            p.load, r.accepted_flits_per_node_cycle,
        );
    }
    if sw.interrupted {
        let u = &sw.unfinished;
        let left = match u.len() {
            0 => "every point had".to_string(),
            1..=6 => format!(
                "not finished: load {}",
                u.iter().map(|l| format!("{l}")).collect::<Vec<_>>().join(", ")
            ),
            n => format!("not finished: {n} loads, {} to {}", u[0], u[n - 1]),
        };
        let _ = writeln!(s, "INTERRUPTED: the points above finished; {left}");
    }
    match sw.saturation_throughput {
        Some(t) => {
            let _ = writeln!(
                s,
                "saturation throughput (every source backlogged): {t:.4} flits/cycle/host"
            );
        }
        None if sw.interrupted => {
            let _ = writeln!(s, "saturation throughput: not run (interrupted)");
        }
        None => {
            let _ = writeln!(
                s,
                "saturation throughput: none (the run with every source backlogged deadlocked or failed)"
            );
        }
    }
    if let Some((load, d)) = sw
        .points
        .iter()
        .find_map(|p| p.result.deadlock.as_ref().map(|d| (p.load, d)))
    {
        let cycle = sw.points.first().map_or(1000.0, |p| p.result.cycle_ps);
        let _ = writeln!(
            s,
            "DEADLOCK at load {load}, {}: {} VCs can never move; waiting cycle:\n    {}",
            cycles_text(d.time, cycle),
            d.blocked_vcs,
            d.cycle.join("\n    → ")
        );
    }
    s
}

/// The sweep as CSV.
pub fn sweep_csv(sw: &Sweep) -> String {
    let mut s = String::from(
        "load,offered,accepted,packet_latency_mean,packet_latency_p50,packet_latency_p99,packet_latency_max,\
         network_latency_mean,network_latency_p99,mean_hops,saturated\n",
    );
    for p in &sw.points {
        let r = &p.result;
        let (pl, nl) = (&r.packet_latency_cycles, &r.network_latency_cycles);
        // No measured packet delivered: the latency fields are empty, not 0.
        // Rounded to what they can mean: rates and means to 5 significant digits (their
        // confidence intervals are wider), HDR percentiles to their 3 digits, not the float
        // noise of `0.04965999999999999`.
        let lat = if !r.has_latency() {
            ",,,,,,".to_string()
        } else {
            [
                round_sig(pl.mean, 5),
                round_sig(pl.p50, 3),
                round_sig(pl.p99, 3),
                round_sig(pl.max, 6),
                round_sig(nl.mean, 5),
                round_sig(nl.p99, 3),
                round_sig(r.mean_hops, 5),
            ]
            .join(",")
        };
        let _ = writeln!(
            s,
            "{},{},{},{lat},{}",
            round_sig(p.load, 9),
            r.offered_flits_per_node_cycle
                .map_or(String::new(), |o| round_sig(o, 5)),
            round_sig(r.accepted_flits_per_node_cycle, 5),
            r.saturated
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_drops_the_float_noise() {
        assert_eq!(round_sig(0.04965999999999999, 5), "0.04966");
        assert_eq!(round_sig(0.1 + 0.2, 9), "0.3");
        assert_eq!(round_sig(102.19999, 5), "102.2");
        assert_eq!(round_sig(1336.0, 6), "1336");
        assert_eq!(round_sig(1.23456789e-7, 3), "1.23e-7");
        assert_eq!(round_sig(3.5041e-30, 6), "3.5041e-30");
        assert_eq!(round_sig(f64::NAN, 3), "");
    }
}

//! Several independent runs of one config (`sim.runs`, BookSim2's `sim_count`): a line per
//! run, and their means as BookSim2's "Overall Traffic Statistics" average its runs'
//! averages (`TrafficManager::_UpdateOverallStats`), each with a 95 % confidence
//! half-width across the runs (Student's t: the runs are independent replications).

use crate::engine::result::RunResult;
use serde::Serialize;
use std::fmt::Write;

/// One figure over the runs: the mean of the runs' values, the 95 % confidence half-width
/// of that mean (`None` with one value), and the runs' lowest and highest.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Across {
    pub mean: f64,
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
}

impl Across {
    /// `None` without values.
    pub fn of(values: &[f64]) -> Option<Across> {
        let (mean, ci95) = match crate::stats::batch_ci(values) {
            Some((mean, h)) => (mean, Some(h)),
            None => (*values.first()?, None),
        };
        Some(Across {
            mean,
            ci95,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The runs of one config and their means (the JSON of `reef run` with `sim.runs` above 1).
#[derive(Clone, Debug, Serialize)]
pub struct Runs {
    pub name: String,
    /// Runs finished (fewer than asked if Ctrl-C stopped them).
    pub runs: usize,
    pub runs_asked: usize,
    pub seeds: Vec<u64>,
    /// Over the runs that had an offered load (not backlogged).
    pub offered_flits_per_node_cycle: Option<Across>,
    pub accepted_flits_per_node_cycle: Across,
    /// Latencies and hops over the runs that delivered a measured packet.
    pub packet_latency_cycles: Option<Across>,
    pub network_latency_cycles: Option<Across>,
    pub mean_hops: Option<Across>,
    /// Batches (`traffic.injection = "batch"`): from the start to the last delivery
    /// [cycles], over the runs that finished theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_duration_cycles: Option<Across>,
    pub runs_with_latency: usize,
    pub saturated_runs: usize,
    pub deadlocked_runs: usize,
    /// Each run's full result, in seed order.
    pub results: Vec<RunResult>,
}

impl Runs {
    /// The means of `results` (at least one), `asked` runs having been asked for.
    pub fn of(name: &str, results: Vec<RunResult>, asked: usize) -> Runs {
        assert!(!results.is_empty(), "at least one run");
        let with_lat: Vec<&RunResult> = results.iter().filter(|r| r.has_latency()).collect();
        let lat = |f: fn(&RunResult) -> f64| Across::of(&with_lat.iter().map(|r| f(r)).collect::<Vec<_>>());
        let offered: Vec<f64> = results
            .iter()
            .filter_map(|r| r.offered_flits_per_node_cycle)
            .collect();
        let accepted: Vec<f64> = results.iter().map(|r| r.accepted_flits_per_node_cycle).collect();
        Runs {
            name: name.to_string(),
            runs: results.len(),
            runs_asked: asked,
            seeds: results.iter().map(|r| r.seed).collect(),
            offered_flits_per_node_cycle: Across::of(&offered),
            accepted_flits_per_node_cycle: Across::of(&accepted).expect("at least one run"),
            packet_latency_cycles: lat(|r| r.packet_latency_cycles.mean),
            network_latency_cycles: lat(|r| r.network_latency_cycles.mean),
            mean_hops: lat(|r| r.mean_hops),
            batch_duration_cycles: Across::of(
                &results
                    .iter()
                    .filter_map(|r| r.batch.and_then(|b| b.duration_cycles))
                    .collect::<Vec<_>>(),
            ),
            runs_with_latency: with_lat.len(),
            saturated_runs: results.iter().filter(|r| r.saturated).count(),
            deadlocked_runs: results.iter().filter(|r| r.deadlock.is_some()).count(),
            results,
        }
    }
}

fn fig(a: &Across, digits: usize) -> String {
    let ci = a.ci95.map(|h| format!(" ±{h:.digits$}")).unwrap_or_default();
    format!(
        "{:.digits$}{ci} (runs from {:.digits$} to {:.digits$})",
        a.mean, a.min, a.max
    )
}

/// "1 run", "3 runs".
fn n_runs(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

/// The runs as a person reads them: the network once, a line per run, then the means.
pub fn table(rs: &Runs) -> String {
    let mut s = String::new();
    let r0 = &rs.results[0];
    let seeds = match rs.seeds.as_slice() {
        [one] => format!("seed {one}"),
        [first, .., last] => format!("seeds {first} to {last}"),
        [] => unreachable!("at least one run"),
    };
    let _ = writeln!(
        s,
        "{}: {} hosts, {} switches, {} channels, {} routing; {}, {seeds}",
        rs.name,
        r0.hosts,
        r0.switches,
        r0.channels,
        r0.routing,
        n_runs(rs.runs),
    );
    let _ = writeln!(
        s,
        "  {:>4} {:>6} {:>9} {:>9} {:>15} {:>16} {:>6}",
        "run", "seed", "offered", "accepted", "packet latency", "network latency", "hops"
    );
    for (k, r) in rs.results.iter().enumerate() {
        let offered = r
            .offered_flits_per_node_cycle
            .map_or(if r.batch.is_some() { "batch" } else { "backlog" }.into(), |o| {
                format!("{o:.4}")
            });
        let (pl, nl, hops) = if r.has_latency() {
            (
                format!("{:.2}", r.packet_latency_cycles.mean),
                format!("{:.2}", r.network_latency_cycles.mean),
                format!("{:.2}", r.mean_hops),
            )
        } else {
            ("-".into(), "-".into(), "-".into())
        };
        let mark = if r.deadlock.is_some() {
            "  DEADLOCK"
        } else if r.saturated {
            "  SATURATED"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  {:>4} {:>6} {offered:>9} {:>9.4} {pl:>15} {nl:>16} {hops:>6}{mark}",
            k + 1,
            r.seed,
            r.accepted_flits_per_node_cycle
        );
    }
    let _ = writeln!(
        s,
        "  mean over {}, ±95 % confidence across the runs (cycles; flits/cycle/host):",
        if rs.runs == 1 {
            "the 1 run".to_string()
        } else {
            format!("the {} runs", rs.runs)
        }
    );
    if let Some(o) = &rs.offered_flits_per_node_cycle {
        let _ = writeln!(s, "  offered          {}", fig(o, 4));
    }
    let _ = writeln!(
        s,
        "  accepted         {}",
        fig(&rs.accepted_flits_per_node_cycle, 4)
    );
    if let Some(b) = &rs.batch_duration_cycles {
        let _ = writeln!(s, "  batch duration   {}", fig(b, 1));
    }
    match (&rs.packet_latency_cycles, &rs.network_latency_cycles) {
        (Some(p), Some(n)) => {
            let _ = writeln!(s, "  packet latency   {}", fig(p, 2));
            let _ = writeln!(s, "  network latency  {}", fig(n, 2));
            if rs.runs_with_latency < rs.runs {
                let _ = writeln!(
                    s,
                    "  (latencies over the {} that delivered a measured packet)",
                    n_runs(rs.runs_with_latency)
                );
            }
        }
        _ => {
            let _ = writeln!(s, "  latency          no run delivered a measured packet");
        }
    }
    if rs.saturated_runs > 0 {
        let why = rs
            .results
            .iter()
            .find_map(|r| r.saturation_reason.as_deref())
            .unwrap_or("");
        let _ = writeln!(
            s,
            "  SATURATED: {} of {} runs (the first: {why}); their means are not steady-state figures",
            rs.saturated_runs, rs.runs
        );
    }
    if rs.deadlocked_runs > 0 {
        let _ = writeln!(s, "  DEADLOCK: {} of {} runs", rs.deadlocked_runs, rs.runs);
    }
    if rs.runs < rs.runs_asked {
        let _ = writeln!(
            s,
            "  interrupted: {} of {} finished",
            rs.runs,
            n_runs(rs.runs_asked)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_over_runs_has_a_students_t_interval() {
        let a = Across::of(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!((a.mean, a.min, a.max), (12.0, 10.0, 14.0));
        // s = 2, n = 3: t(2) · 2 / √3 = 4.303 · 1.1547.
        assert!((a.ci95.unwrap() - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-12);
        let one = Across::of(&[5.0]).unwrap();
        assert_eq!((one.mean, one.ci95), (5.0, None));
        assert!(Across::of(&[]).is_none());
    }
}

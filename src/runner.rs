//! Running specs: one run with an optional progress bar, load sweeps in parallel on the
//! machine's cores, and the static check.

use crate::config::{self, ConfigError};
use crate::engine::result::RunResult;
use crate::engine::{Progress, Sim, SimError, Spec};
use crate::report::{Sweep, SweepPoint};
use crate::routing::cdg::{self, CdgReport};
use crate::workload::Process;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

/// A progress reporter: a bar on a terminal for anything longer than a second, nothing
/// otherwise.
pub struct Bar {
    start: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
    label: String,
}

impl Bar {
    pub fn new(label: &str, enabled: bool) -> Bar {
        Bar {
            start: Instant::now(),
            bar: None,
            enabled: enabled && std::io::stderr().is_terminal(),
            label: label.to_string(),
        }
    }

    /// Updates the bar with a fraction done in `[0, 1]`.
    pub fn set(&mut self, frac: f64) {
        if !self.enabled || self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::new(1000);
            b.set_style(
                ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {percent}% (eta {eta})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_message(self.label.clone());
            b
        });
        bar.set_position((frac.clamp(0.0, 1.0) * 1000.0) as u64);
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// Runs one spec to its result, reporting progress to `on`.
pub fn run_spec(spec: &Spec, on: &mut dyn FnMut(Progress)) -> Result<RunResult, SimError> {
    let mut sim = Sim::new(spec)?;
    let out = sim.run(on)?;
    Ok(sim.result(&out))
}

/// Runs one spec with a progress bar on a terminal.
pub fn run_with_bar(spec: &Spec, show: bool) -> Result<RunResult, SimError> {
    let mut bar = Bar::new(&spec.name, show);
    let r = run_spec(spec, &mut |p: Progress| {
        bar.set(p.now as f64 / p.window_end.max(1) as f64)
    });
    bar.finish();
    r
}

/// Links a packet from host `a` to host `b` crosses between switches (0 where the routing
/// has no route for them).
pub fn hops(spec: &Spec, a: u32, b: u32) -> usize {
    spec.routing
        .path(&spec.fabric, a, b)
        .map_or(0, |(p, _)| p.len().saturating_sub(2))
}

/// Runs a spec's message benchmark (`traffic.kind = "ping-pong"` or `"streaming"`), a
/// simulation per message size, with a progress bar on a terminal.
pub fn run_messages(spec: &Spec, show: bool) -> Result<crate::report::messages::MessageRun, SimError> {
    let m = spec
        .messages
        .as_ref()
        .ok_or_else(|| SimError::Invalid(format!("{}: not a message benchmark", spec.name)))?;
    let mut bar = Bar::new(&format!("{} {}", spec.name, m.kind.name()), show);
    let n = m.sizes.len().max(1);
    let sizes = crate::workload::message::run(spec, m, &mut |i| bar.set(i as f64 / n as f64))?;
    bar.finish();
    let hops = (hops(spec, m.pair.0, m.pair.1), hops(spec, m.pair.1, m.pair.0));
    Ok(crate::report::messages::MessageRun::new(
        &spec.name, m, hops, sizes,
    ))
}

/// The static deadlock and reachability check of a spec.
pub fn check(spec: &Spec) -> CdgReport {
    cdg::check(&spec.fabric, &spec.routing)
}

/// [`check`] with a progress bar on a terminal (`show`; the check of a network of many
/// thousand hosts takes seconds).
pub fn check_with_bar(spec: &Spec, show: bool) -> CdgReport {
    let bar = std::sync::Mutex::new(Bar::new(&format!("{}: checking the routing", spec.name), show));
    let rep = cdg::check_with(&spec.fabric, &spec.routing, &|f| {
        if let Ok(mut b) = bar.lock() {
            b.set(f);
        }
    });
    if let Ok(mut b) = bar.lock() {
        b.finish();
    }
    rep
}

/// `FROM:TO:STEP` → the loads, inclusive of `TO` (to rounding).
pub fn parse_loads(s: &str) -> Result<Vec<f64>, String> {
    let parts: Vec<f64> = s
        .split(':')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .map_err(|_| format!("`{p}` in `{s}` is not a number"))
        })
        .collect::<Result<_, _>>()?;
    let [from, to, step] = parts[..] else {
        return Err(format!("expected FROM:TO:STEP, got `{s}`"));
    };
    if !(from > 0.0 && to >= from && step > 0.0 && to.is_finite() && step.is_finite()) {
        return Err(format!("need 0 < FROM ≤ TO and STEP > 0, all finite, got `{s}`"));
    }
    // Counted in floating point: a tiny STEP makes more points than any integer holds.
    let n = ((to - from) / step + 1e-9).floor() + 1.0;
    if n > 10_000.0 {
        return Err(format!(
            "`{s}` makes {n:.3e} points, more than 10000; use a larger STEP"
        ));
    }
    let n = n as usize;
    // Ten significant digits: 0.1 + 2 × 0.1 is 0.3, and a tiny load stays what it is.
    Ok((0..n)
        .map(|i| {
            let x = from + i as f64 * step;
            format!("{x:.9e}").parse().unwrap_or(x)
        })
        .collect())
}

/// An error of a sweep: a config error at some load, or a run error.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("at load {load}: {err}")]
    Sim { load: f64, err: SimError },
    /// The config has no offered load to sweep.
    #[error("{0}")]
    NoLoad(String),
}

/// Latency against offered load: runs the config at each load (in parallel, `jobs` at a
/// time, in increasing order) up to the first point that saturates.
/// Finishes with a backlogged run for the saturation throughput.
pub fn sweep(
    path: &Path,
    overrides: &[String],
    loads: &[f64],
    jobs: usize,
    show: bool,
) -> Result<Sweep, SweepError> {
    let jobs = jobs.max(1);
    let build = |load: Option<f64>| {
        let mut o = overrides.to_vec();
        match load {
            // (`{:?}`: an exponent where one is due, as TOML reads it; `{}` writes 1e308 out
            // in 309 digits.)
            Some(l) => o.push(format!("traffic.load={l:?}")),
            None => o.push("traffic.injection=\"backlogged\"".into()),
        }
        config::load(path, &o).map_err(|mut e| {
            // The swept load came from --load, not from a --set the user typed.
            if load.is_some() && e.key == "traffic.load" && e.origin.is_some() {
                e.origin = Some(config::Origin::Load);
            }
            e
        })
    };
    // Fail early, before any thread starts, on a bad config.
    let first = build(loads.first().copied())?;
    if matches!(first.workload.process, crate::workload::Process::Backlogged) {
        return Err(SweepError::NoLoad(format!(
            "{}: traffic.injection = \"backlogged\" offers no load to sweep (every source always \
             has a packet); choose bernoulli, poisson, periodic or on-off",
            path.display()
        )));
    }
    if !(0..first.fabric.num_hosts() as u32).any(|h| first.workload.pattern.sends(h)) {
        return Err(SweepError::NoLoad(format!(
            "{}: traffic.pattern = \"none\": no host sends, so there is no load to sweep",
            path.display()
        )));
    }
    let name = first.name.clone();
    let mut bar = Bar::new(&format!("sweep {name}"), show);
    let total = loads.len() + 1;
    let mut points = Vec::new();
    let mut done = 0;
    for chunk in loads.chunks(jobs) {
        let specs: Vec<(f64, Spec)> = chunk
            .iter()
            .map(|&l| build(Some(l)).map(|s| (l, s)))
            .collect::<Result<_, _>>()?;
        let results: Vec<(f64, Result<RunResult, SimError>)> = std::thread::scope(|sc| {
            let hs: Vec<_> = specs
                .iter()
                .map(|(l, s)| (*l, sc.spawn(move || run_spec(s, &mut |_| {}))))
                .collect();
            hs.into_iter()
                .map(|(l, h)| {
                    (
                        l,
                        h.join()
                            .unwrap_or_else(|_| Err(SimError::TooLarge("a sweep thread panicked".into()))),
                    )
                })
                .collect()
        });
        // The points up to the first saturated one, in load order: the loads run in
        // parallel beyond it are dropped, so the sweep is the same for any number of jobs.
        let mut stop = false;
        for (load, r) in results {
            let result = r.map_err(|err| SweepError::Sim { load, err })?;
            stop = result.saturated;
            points.push(SweepPoint { load, result });
            if stop {
                break;
            }
        }
        done += chunk.len();
        bar.set(done as f64 / total as f64);
        if stop {
            break;
        }
    }
    let sat = build(None)?;
    let saturation_throughput = if matches!(sat.workload.process, Process::Backlogged) {
        run_spec(&sat, &mut |_| {})
            .ok()
            .filter(|r| r.deadlock.is_none())
            .map(|r| r.accepted_flits_per_node_cycle)
    } else {
        None
    };
    bar.finish();
    Ok(Sweep {
        name,
        points,
        saturation_throughput,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads() {
        assert_eq!(parse_loads("0.1:0.3:0.1").unwrap(), vec![0.1, 0.2, 0.3]);
        assert_eq!(parse_loads("0.05:0.05:0.1").unwrap(), vec![0.05]);
        assert!(parse_loads("0.1:0.3").is_err());
        assert!(parse_loads("0.3:0.1:0.1").is_err());
        assert!(parse_loads("x:1:1").is_err());
        // An infinite end made no points at all (its count overflowed).
        assert!(parse_loads("0.1:inf:0.1").is_err());
        assert!(parse_loads("0.1:0.2:inf").is_err());
        // A tiny step's count saturated the integer and wrapped to no points at all.
        let e = parse_loads("0.1:0.2:1e-300").unwrap_err();
        assert!(e.contains("more than 10000"), "{e}");
        assert!(parse_loads("0.1:0.2:1e-19").is_err());
        // Tiny loads keep their value (rounding to nine decimals made them 0).
        assert_eq!(
            parse_loads("1e-12:3e-12:1e-12").unwrap(),
            vec![1e-12, 2e-12, 3e-12]
        );
        assert_eq!(parse_loads("0.1:0.7:0.3").unwrap(), vec![0.1, 0.4, 0.7]);
    }
}

//! Running specs: one run with an optional progress bar, load sweeps in parallel on the
//! machine's cores, and the static check.

use crate::config::{self, ConfigError};
use crate::engine::result::RunResult;
use crate::engine::{Progress, Sim, SimError, Spec};
use crate::report::{Sweep, SweepPoint};
use crate::routing::cdg::{self, CdgReport};
use crate::time::Time;
use crate::workload::Process;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

/// A progress reporter: on a terminal, for anything longer than a second, a line with the
/// phase, a rate and an estimate of the time left, from the first report on; nothing
/// otherwise.
pub struct Bar {
    start: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
    label: String,
    phase: String,
}

/// Positions of a bar: fine enough that the first report of a long run moves it.
const BAR_STEPS: u64 = 1_000_000;

/// Seconds as a person reads a wait: `7 s`, `2 min 05 s`, `1 h 04 min`.
pub fn duration_text(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, s % 3600 / 60)
    }
}

/// A rate with an SI prefix: `812`, `3.4 k`, `12.1 M`.
pub fn rate_text(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.1} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0} ")
    }
}

/// The time left, as the bar says it: the time so far scaled by what is left to do (any
/// progress at all gives one: fractions are kept to a millionth).
fn eta_text(elapsed: f64, frac: f64) -> String {
    if frac > 0.0 && frac < 1.0 {
        format!("eta {}", duration_text(elapsed * (1.0 - frac) / frac))
    } else if frac >= 1.0 {
        "finishing".to_string()
    } else {
        "eta …".to_string()
    }
}

impl Bar {
    pub fn new(label: &str, enabled: bool) -> Bar {
        Bar {
            start: Instant::now(),
            bar: None,
            enabled: enabled && std::io::stderr().is_terminal(),
            label: label.to_string(),
            phase: String::new(),
        }
    }

    /// What is being done now (`measuring`, `experiment 3 of 8: mapping`).
    pub fn phase(&mut self, phase: &str) {
        self.phase = phase.to_string();
    }

    /// Updates the bar with a fraction done in `[0, 1]`.
    pub fn set(&mut self, frac: f64) {
        self.update(frac, None);
    }

    /// Updates the bar with a fraction done in `[0, 1]` and a rate (`"1.2 M cycles/s"`).
    /// The time left is the time so far scaled by what is left to do.
    pub fn update(&mut self, frac: f64, rate: Option<&str>) {
        let elapsed = self.start.elapsed().as_secs_f64();
        if !self.enabled || elapsed < 1.0 {
            return;
        }
        let frac = if frac.is_finite() {
            frac.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let eta = eta_text(elapsed, frac);
        let mut msg = self.label.clone();
        for part in [Some(self.phase.as_str()), rate, Some(eta.as_str())]
            .into_iter()
            .flatten()
            .filter(|p| !p.is_empty())
        {
            msg.push_str(if msg == self.label { ": " } else { ", " });
            msg.push_str(part);
        }
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::new(BAR_STEPS);
            b.set_style(
                ProgressStyle::with_template("[{elapsed_precise}] {wide_bar} {percent:>3}% {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        bar.set_message(msg);
        bar.set_position((frac * BAR_STEPS as f64) as u64);
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// A run's phase at `now` and the fraction of it done, as a bar shows them: the warm-up and
/// the window make the whole; the drain, whose length is not known ahead, shows as full.
fn run_phase(spec: &Spec, p: &Progress) -> (String, f64) {
    let cycle = spec.params.cycle.to_f64();
    let c = |t: Time| (t as f64 / cycle).round();
    let end = p.window_end.max(1);
    if let crate::workload::Process::Batch { count, .. } = spec.workload.process {
        // A batch ends when its packets are through, at a time not known ahead.
        let hosts = spec.fabric.num_hosts() as u32;
        let total = (0..hosts).filter(|&h| spec.workload.pattern.sends(h)).count() as u64 * count;
        return (
            format!(
                "batch, cycle {}: {} of {total} packets delivered",
                c(p.now),
                p.delivered
            ),
            p.delivered as f64 / total.max(1) as f64,
        );
    }
    let phase = if p.now < spec.params.warmup {
        format!("warm-up, cycle {} of {}", c(p.now), c(end))
    } else if p.now < p.window_end {
        format!("measuring, cycle {} of {}", c(p.now), c(end))
    } else {
        format!(
            "draining the measured packets, {} of at most {} cycles",
            c(p.now - p.window_end),
            c(spec.params.drain_limit)
        )
    };
    (phase, p.now as f64 / end as f64)
}

/// Runs one spec to its result, reporting progress to `on`.
pub fn run_spec(spec: &Spec, on: &mut dyn FnMut(Progress)) -> Result<RunResult, SimError> {
    let mut sim = Sim::new(spec)?;
    let out = sim.run(on)?;
    Ok(sim.result(&out))
}

/// [`run_spec`] stopped by Ctrl-C ([`crate::interrupt`]) at its next progress report, with a
/// result marked `interrupted`.
pub fn run_interruptible(spec: &Spec, on: &mut dyn FnMut(Progress)) -> Result<RunResult, SimError> {
    let mut sim = Sim::new(spec)?;
    sim.interruptible = true;
    let out = sim.run(on)?;
    Ok(sim.result(&out))
}

/// Runs one spec with a progress bar on a terminal (phase, simulated cycles per second and
/// the time left); Ctrl-C stops it at the next safe point.
pub fn run_with_bar(spec: &Spec, show: bool) -> Result<RunResult, SimError> {
    let mut bar = Bar::new(&spec.name, show);
    let wall = Instant::now();
    let cycle = spec.params.cycle.to_f64();
    let r = run_interruptible(spec, &mut |p: Progress| {
        if !bar.enabled {
            return;
        }
        let (phase, frac) = run_phase(spec, &p);
        let rate = p.now as f64 / cycle / wall.elapsed().as_secs_f64().max(1e-9);
        bar.phase(&phase);
        bar.update(frac, Some(&format!("{}cycles/s", rate_text(rate))));
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
    let mut sizes = Vec::with_capacity(n);
    // A size at a time: Ctrl-C keeps the sizes that finished.
    for (i, &size) in m.sizes.iter().enumerate() {
        if crate::interrupt::check() {
            break;
        }
        bar.phase(&format!(
            "size {} of {n}: {}",
            i + 1,
            crate::report::messages::size_text(size)
        ));
        bar.set(i as f64 / n as f64);
        sizes.push(crate::workload::message::run_size(spec, m, size, m.count)?);
    }
    bar.finish();
    let hops = (hops(spec, m.pair.0, m.pair.1), hops(spec, m.pair.1, m.pair.0));
    let mut run = crate::report::messages::MessageRun::new(&spec.name, m, hops, sizes);
    run.unfinished = m.sizes[run.sizes.len()..].to_vec();
    Ok(run)
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

/// What `reef check` says of a network's memory: the estimate, its parts, and the limit.
pub fn memory_line(spec: &Spec) -> String {
    let c = crate::memory::Counts::of_spec(spec);
    let limit = crate::memory::limit().map_or(String::new(), |(b, from)| {
        format!("; limit {} ({from})", crate::memory::bytes_text(b))
    });
    format!("memory: {} to run{limit}", c.describe())
}

/// Reads `--jobs`: a whole number of simulations at once, at least 1.
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "`{s}`: give how many simulations to run at once, a whole number from 1 (default: the machine's cores)"
        )),
    }
}

/// Simulations run at once (`what`: "point" of a sweep, "run" of several): as asked, but
/// no more than the machine's cores (each keeps a core busy: more at once only slow each
/// other down), with a note saying so when it takes fewer than asked.
pub fn sweep_jobs(asked: Option<usize>, what: &str) -> (usize, Option<String>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match asked {
        Some(j) if j > cores => (
            cores,
            Some(format!(
                "--jobs {j}: this machine has {cores} cores; running {cores} {what}s at a time \
                 (a {what} keeps a core busy, more at once only slow each other down)"
            )),
        ),
        Some(j) => (j.max(1), None),
        None => (cores, None),
    }
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
    /// The config asks for several runs (`sim.runs`), which a sweep's points do not take.
    #[error("{0}")]
    ManyRuns(String),
}

/// The overrides of one point of a sweep: `overrides` and its load, or (`None`) every
/// source backlogged, the run that measures the saturation throughput.
pub fn point_overrides(overrides: &[String], load: Option<f64>) -> Vec<String> {
    let mut o = overrides.to_vec();
    match load {
        // (`{:?}`: an exponent where one is due, as TOML reads it; `{}` writes 1e308 out
        // in 309 digits.)
        Some(l) => o.push(format!("traffic.load={l:?}")),
        None => o.push("traffic.injection=\"backlogged\"".into()),
    }
    o
}

/// The spec of one point of a sweep of the config at `path` ([`point_overrides`]), named
/// for what it runs.
pub fn point_spec(path: &Path, overrides: &[String], load: Option<f64>) -> Result<Spec, ConfigError> {
    let o = point_overrides(overrides, load);
    config::load(path, &o)
        .map(|mut s| {
            s.name = config::run_name(&s.name, &o);
            s
        })
        .map_err(|mut e| {
            // The swept load came from --load, not from a --set the user typed.
            if load.is_some() && e.key == "traffic.load" && e.origin.is_some() {
                e.origin = Some(config::Origin::Load);
            }
            e
        })
}

/// Checks that the config at `path` has a load to sweep (its spec at the first of `loads`
/// builds, its traffic is not backlogged, some host sends); the sweep's name (the config's
/// and the overrides') and the first point's spec.
pub fn sweep_setup(path: &Path, overrides: &[String], loads: &[f64]) -> Result<(String, Spec), SweepError> {
    let first = point_spec(path, overrides, loads.first().copied())?;
    if first.params.runs > 1 {
        return Err(SweepError::ManyRuns(format!(
            "{}: sim.runs = {} (BookSim2's sim_count): a sweep runs each load once (its \
             confidence intervals come from batch means): add --set sim.runs=1",
            path.display(),
            first.params.runs
        )));
    }
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
    let base = config::load(path, overrides)
        .map(|s| s.name)
        .unwrap_or_else(|_| first.name.clone());
    Ok((config::run_name(&base, overrides), first))
}

/// The saturation throughput a sweep reports from its backlogged run: none if that
/// deadlocked or was interrupted.
pub fn saturation_of(r: &RunResult) -> Option<f64> {
    (r.deadlock.is_none() && !r.interrupted).then_some(r.accepted_flits_per_node_cycle)
}

/// What the threads of a sweep share.
struct SweepState {
    /// The next point to start.
    next: usize,
    /// The first point (in load order) that saturated or could not be built: no point
    /// beyond it is started, and those running are stopped.
    stop_at: usize,
    results: Vec<Option<Result<RunResult, SweepError>>>,
    /// Per point: the fraction of it done and the cycles simulated, for the bar.
    frac: Vec<f64>,
    cycles: Vec<f64>,
}

/// `jobs` simulations at once, each `per_run` bytes, but no more than fit in the memory
/// allowed (each builds its own network), with a note saying so (`what`: "a point").
fn jobs_that_fit(jobs: usize, per_run: u64, what: &str) -> usize {
    if let Some((lim, from)) = crate::memory::limit() {
        let fit = ((lim / per_run.max(1)) as usize).max(1);
        if fit < jobs {
            eprintln!(
                "note: {what} needs about {} and {from} is {}: running {fit} at a time",
                crate::memory::bytes_text(per_run),
                crate::memory::bytes_text(lim)
            );
            return fit;
        }
    }
    jobs
}

/// Independent runs of one config (`sim.runs`): run `k` is `build(k)`, `jobs` at a time,
/// started in order, each on its own thread, with one bar over them all; `like` is a spec
/// of the same network (its size and cycle: how many fit in memory, the bar's rate). The
/// results come in the runs' order whatever `jobs` is (each run is seeded on its own);
/// `None` for a run that never started because Ctrl-C came first (those under way stop,
/// their results marked `interrupted`).
pub fn runs(
    n: usize,
    like: &Spec,
    build: &(dyn Fn(usize) -> Result<Spec, ConfigError> + Sync),
    jobs: usize,
    label: &str,
    show: bool,
) -> Result<Vec<Option<Result<RunResult, SimError>>>, ConfigError> {
    let cycle = like.params.cycle.to_f64();
    let per_run = crate::memory::Counts::of_spec(like).bytes();
    let jobs = jobs_that_fit(jobs.clamp(1, n.max(1)), per_run, "a run");
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Per run: its result, and the fraction of it done and the cycles simulated (the bar).
    type Slot = (Option<Result<RunResult, SimError>>, f64, f64);
    let slots = std::sync::Mutex::new((0..n).map(|_| (None, 0.0, 0.0)).collect::<Vec<Slot>>());
    let bar = std::sync::Mutex::new(Bar::new(label, show));
    let failed = std::sync::Mutex::new(None);
    let wall = Instant::now();
    let report = |slots: &[Slot]| {
        let Ok(mut b) = bar.lock() else { return };
        if !b.enabled {
            return;
        }
        let done = slots.iter().filter(|s| s.0.is_some()).count();
        let frac = slots.iter().map(|s| s.1).sum::<f64>() / n as f64;
        let rate = slots.iter().map(|s| s.2).sum::<f64>() / wall.elapsed().as_secs_f64().max(1e-9);
        b.phase(&format!("{done} of {n} runs done"));
        b.update(frac, Some(&format!("{}cycles/s", rate_text(rate))));
    };
    std::thread::scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if k >= n || crate::interrupt::requested() {
                        return;
                    }
                    let spec = match build(k) {
                        Ok(s) => s,
                        Err(e) => {
                            if let Ok(mut f) = failed.lock() {
                                f.get_or_insert(e);
                            }
                            return;
                        }
                    };
                    let r = run_interruptible(&spec, &mut |p: Progress| {
                        let (_, frac) = run_phase(&spec, &p);
                        if let Ok(mut s) = slots.lock() {
                            (s[k].1, s[k].2) = (frac.min(1.0), p.now as f64 / cycle);
                            report(&s);
                        }
                    });
                    if let Ok(mut s) = slots.lock() {
                        s[k].0 = Some(r);
                        s[k].1 = 1.0;
                        report(&s);
                    }
                }
            });
        }
    });
    if let Ok(mut b) = bar.lock() {
        b.finish();
    }
    if let Some(e) = failed.into_inner().ok().flatten() {
        return Err(e);
    }
    let slots = slots.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(slots.into_iter().map(|s| s.0).collect())
}

/// Latency against offered load: runs the config at each load, `jobs` at a time, started in
/// increasing order, up to the first point that saturates: once one does, no later point is
/// started and those running are stopped (past saturation a run is at its slowest, and its
/// numbers are not steady state), so the points are the same for any number of jobs.
/// Finishes with a backlogged run for the saturation throughput. Ctrl-C stops the points
/// under way; the sweep keeps those that finished and lists the loads that did not.
pub fn sweep(
    path: &Path,
    overrides: &[String],
    loads: &[f64],
    jobs: usize,
    show: bool,
) -> Result<Sweep, SweepError> {
    let build = |load: Option<f64>| point_spec(path, overrides, load);
    let (name, first) = sweep_setup(path, overrides, loads)?;
    let cycle = first.params.cycle.to_f64();
    let per_point = crate::memory::Counts::of_spec(&first).bytes();
    drop(first);
    let n = loads.len();
    let jobs = jobs_that_fit(jobs.clamp(1, n.max(1)), per_point, "a point");
    let cancel: Vec<std::sync::atomic::AtomicBool> = (0..n)
        .map(|_| std::sync::atomic::AtomicBool::new(false))
        .collect();
    let state = std::sync::Mutex::new(SweepState {
        next: 0,
        stop_at: n,
        results: (0..n).map(|_| None).collect(),
        frac: vec![0.0; n],
        cycles: vec![0.0; n],
    });
    let bar = std::sync::Mutex::new(Bar::new(&format!("sweep {name}"), show));
    let wall = Instant::now();
    // The bar: points done and under way, the cycles simulated per second over all of them,
    // and the time left over the points that can still run (and the saturation run).
    let report = |st: &SweepState| {
        let Ok(mut b) = bar.lock() else { return };
        if !b.enabled {
            return;
        }
        let limit = st.stop_at.min(n.saturating_sub(1)) + 1;
        let done = st.results[..limit].iter().filter(|r| r.is_some()).count();
        let running: Vec<String> = (0..limit)
            .filter(|&i| st.results[i].is_none() && st.frac[i] > 0.0)
            .map(|i| format!("{}", loads[i]))
            .collect();
        let frac = st.frac[..limit].iter().sum::<f64>() / (limit + 1) as f64;
        let rate = st.cycles.iter().sum::<f64>() / wall.elapsed().as_secs_f64().max(1e-9);
        b.phase(&format!(
            "{done} of {limit} points done{}",
            if running.is_empty() {
                String::new()
            } else {
                format!(", running load {}", running.join(", "))
            }
        ));
        b.update(frac, Some(&format!("{}cycles/s", rate_text(rate))));
    };
    let worker = || {
        loop {
            let i = {
                let Ok(mut st) = state.lock() else { return };
                if st.next > st.stop_at || st.next >= n || crate::interrupt::check() {
                    return;
                }
                let i = st.next;
                st.next += 1;
                st.frac[i] = 1e-9;
                i
            };
            let load = loads[i];
            let outcome = match build(Some(load)) {
                Err(e) => Err(SweepError::from(e)),
                Ok(spec) => Sim::new(&spec)
                    .and_then(|mut sim| {
                        sim.interruptible = true;
                        sim.cancel = Some(&cancel[i]);
                        let out = sim.run(&mut |p: Progress| {
                            if let Ok(mut st) = state.lock() {
                                st.frac[i] = (p.now as f64 / p.window_end.max(1) as f64).min(1.0);
                                st.cycles[i] = p.now as f64 / cycle;
                                report(&st);
                            }
                        })?;
                        Ok(sim.result(&out))
                    })
                    .map_err(|err| SweepError::Sim { load, err }),
            };
            let Ok(mut st) = state.lock() else { return };
            // A point stopped early (Ctrl-C, or a lower load saturated) is not kept.
            if matches!(&outcome, Ok(r) if r.interrupted) {
                st.frac[i] = 0.0;
                continue;
            }
            let stops = match &outcome {
                Ok(r) => r.saturated,
                Err(_) => true,
            };
            if stops && i < st.stop_at {
                st.stop_at = i;
                for c in &cancel[i + 1..] {
                    c.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            st.frac[i] = 1.0;
            st.results[i] = Some(outcome);
            report(&st);
        }
    };
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..jobs).map(|_| sc.spawn(worker)).collect();
        for h in hs {
            let _ = h.join();
        }
    });
    let mut st = state.into_inner().unwrap_or_else(|e| e.into_inner());
    let interrupted = crate::interrupt::requested();
    let limit = st.stop_at.min(n.saturating_sub(1)) + 1;
    let mut points = Vec::new();
    let mut unfinished = Vec::new();
    for (i, r) in st.results.drain(..limit).enumerate() {
        match r {
            Some(Ok(result)) => points.push(SweepPoint {
                load: loads[i],
                result,
            }),
            Some(Err(e)) => return Err(e),
            None => unfinished.push(loads[i]),
        }
    }
    if interrupted && st.stop_at == n {
        // Points never started (no saturation was found to end the sweep before them).
        unfinished.extend(&loads[limit.min(n)..]);
    }
    let mut bar = bar.into_inner().unwrap_or_else(|e| e.into_inner());
    let saturation_throughput = if interrupted {
        None
    } else {
        let sat = build(None)?;
        bar.phase("every source backlogged, for the saturation throughput");
        if matches!(sat.workload.process, Process::Backlogged) {
            run_interruptible(&sat, &mut |p| bar.set(p.now as f64 / p.window_end.max(1) as f64))
                .ok()
                .and_then(|r| saturation_of(&r))
        } else {
            None
        }
    };
    bar.finish();
    Ok(Sweep {
        name,
        points,
        saturation_throughput,
        interrupted: crate::interrupt::requested(),
        unfinished,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: a bar said "0% (eta 0s)" until 1 % was done; now the phase, and an ETA
    /// from the first thousandth on.
    #[test]
    fn r31_progress_names_the_phase_and_a_believable_eta() {
        // 2 s for 0.1 %: 33 minutes left, not 0 s.
        assert_eq!(eta_text(2.0, 0.001), "eta 33 min 18 s");
        assert_eq!(eta_text(1.0, 0.0), "eta …");
        assert_eq!(eta_text(5.0, 1.0), "finishing");
        let spec = config::load(Path::new("examples/mesh8x8.toml"), &[]).unwrap();
        let at = |now: Time| {
            run_phase(
                &spec,
                &Progress {
                    now,
                    window_end: 60_000_000,
                    events: 0,
                    delivered: 0,
                },
            )
        };
        let (phase, frac) = at(5_000_000);
        assert_eq!(phase, "warm-up, cycle 5000 of 60000");
        assert!((frac - 5.0 / 60.0).abs() < 1e-9);
        assert!(at(30_000_000).0.starts_with("measuring, cycle 30000 of 60000"));
        assert!(
            at(61_000_000)
                .0
                .starts_with("draining the measured packets, 1000 of at most")
        );
        // A batch counts its packets: 64 hosts of 10 each.
        let batch = config::load_str(
            "b.toml",
            "[topology]\nkind = \"mesh\"\nk = [8, 8]\n[traffic]\ninjection = \"batch\"\nbatch = 10\n",
            Path::new("."),
            &[],
        )
        .unwrap();
        let (phase, frac) = run_phase(
            &batch,
            &Progress {
                now: 2_000_000,
                window_end: Time::MAX,
                events: 0,
                delivered: 160,
            },
        );
        assert_eq!(phase, "batch, cycle 2000: 160 of 640 packets delivered");
        assert!((frac - 0.25).abs() < 1e-12);
    }

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

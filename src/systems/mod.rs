//! The modelled systems (`../shared/systems/`): each module holds the system's parameters,
//! its table of published figures with their sources, and its experiments; `reef reproduce
//! <system>` runs them and reports every figure beside the published one.
//!
//! Every system reports the same way: a list of [`Record`]s, one per figure, printed as
//! a table per experiment and written as `{"system": …, "records": […]}`; `--out DIR` adds a
//! CSV per experiment and the system's plots as SVG.

pub mod about;
pub mod atm;
pub mod atoll;
pub mod atomic;
pub mod clan;
pub mod ieee1355;
pub mod pool;

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One figure: what was measured, in which case, simulated and (if there is one) published.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Record {
    pub experiment: String,
    /// The case, e.g. `{"topology": "clos", "nodes": 256}` (sorted keys).
    pub case: BTreeMap<String, serde_json::Value>,
    pub metric: String,
    pub unit: String,
    pub simulated: f64,
    /// Half-width of the simulated figure's 95 % confidence interval, where it is an
    /// estimate from random traffic (by batch means); `None` where the model computes it
    /// exactly (a deterministic run, arithmetic). Tables print the figure to the digits it
    /// makes meaningful ([`fmt_ci`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
    pub published: Option<f64>,
    /// Where the published figure comes from (or how the simulated one is defined).
    pub source: String,
}

impl Record {
    /// A record with no published figure.
    pub fn new(
        experiment: &str,
        case: &[(&str, serde_json::Value)],
        metric: &str,
        unit: &str,
        simulated: f64,
    ) -> Record {
        Record {
            experiment: experiment.to_string(),
            case: case.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            metric: metric.to_string(),
            unit: unit.to_string(),
            simulated,
            ci95: None,
            published: None,
            source: String::new(),
        }
    }

    /// With the half-width of the figure's 95 % confidence interval (ignored unless finite
    /// and positive: an interval of nothing is an exact figure).
    pub fn ci95(mut self, half_width: Option<f64>) -> Record {
        self.ci95 = half_width.filter(|c| c.is_finite() && *c > 0.0);
        self
    }

    /// The simulated figure as the tables print it, and its `±` half-width (empty if none).
    pub fn simulated_text(&self) -> (String, String) {
        match self.ci95 {
            Some(c) if self.unit != YES_NO && self.simulated.is_finite() => fmt_ci(self.simulated, c),
            _ => (fmt_value(self.simulated, &self.unit), String::new()),
        }
    }

    /// With a published figure and its source.
    pub fn published(mut self, value: f64, source: &str) -> Record {
        self.published = Some(value);
        self.source = source.to_string();
        self
    }

    /// With a source note but no published figure.
    pub fn source(mut self, source: &str) -> Record {
        self.source = source.to_string();
        self
    }

    /// Relative deviation of the simulated from the published figure, if there is one.
    pub fn deviation(&self) -> Option<f64> {
        self.published
            .filter(|p| *p != 0.0)
            .map(|p| (self.simulated - p) / p)
    }

    /// The case as `key=value …`, as the tables print it.
    pub fn case_text(&self) -> String {
        self.case
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A published figure with its unit and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub unit: &'static str,
    pub source: &'static str,
}

/// A named SVG plot or CSV file a reproduction writes into `--out`.
#[derive(Clone, Debug)]
pub struct Artifact {
    pub file: String,
    pub text: String,
}

/// What a report's figures are: simulated beside the published ones (`reef reproduce`), or
/// measured on this machine beside the 2001 figure of the same experiment (`reef live`),
/// where the `simulated` field of each [`Record`] holds the measured value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    Reproduction,
    Live,
}

impl Kind {
    /// Column names in tables: the value, the figure beside it, their comparison.
    fn columns(self) -> [&'static str; 3] {
        match self {
            Kind::Reproduction => ["simulated", "published", "dev"],
            Kind::Live => ["measured", "2001", "ratio"],
        }
    }

    /// Column names in CSVs: the value, the figure beside it.
    fn csv_columns(self) -> [&'static str; 2] {
        match self {
            Kind::Reproduction => ["simulated", "published"],
            Kind::Live => ["measured", "published_2001"],
        }
    }

    /// How a value compares with the figure beside it: a reproduction's deviation, a live
    /// run's ratio (for scale, not agreement).
    fn compare(self, r: &Record) -> String {
        if r.unit == YES_NO {
            return r.published.map_or(String::new(), |p| {
                if p == r.simulated { "same" } else { "differs" }.to_string()
            });
        }
        match self {
            Kind::Reproduction => r
                .deviation()
                .map_or(String::new(), |d| format!("{:+.1}%", 100.0 * d)),
            Kind::Live => r
                .published
                .filter(|p| *p != 0.0)
                .map_or(String::new(), |p| format!("{:.2}x", r.simulated / p)),
        }
    }
}

/// Everything a reproduction (or a live run) produced.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub system: String,
    pub records: Vec<Record>,
    /// Explanations printed under the tables (assumptions, misses and why).
    #[serde(skip)]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub plots: Vec<Artifact>,
    #[serde(skip)]
    pub kind: Kind,
    /// Ctrl-C stopped the reproduction: the records are the experiments that finished.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The experiments (or steps) not run because of it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
}

/// A live run's report as its JSON has it.
#[derive(Serialize)]
struct MeasuredReport<'a> {
    system: &'a str,
    records: Vec<MeasuredRecord<'a>>,
}

/// A live run's record as its JSON has it: the value in `measured`.
#[derive(Serialize)]
struct MeasuredRecord<'a> {
    experiment: &'a str,
    case: &'a BTreeMap<String, serde_json::Value>,
    metric: &'a str,
    unit: &'a str,
    measured: f64,
    published: Option<f64>,
    source: &'a str,
}

impl Report {
    pub fn new(system: &str) -> Report {
        Report {
            system: system.to_string(),
            records: Vec::new(),
            notes: Vec::new(),
            plots: Vec::new(),
            kind: Kind::Reproduction,
            interrupted: false,
            unfinished: Vec::new(),
        }
    }

    /// A live run's report: measured figures beside the 2001 ones.
    pub fn live(system: &str) -> Report {
        Report {
            kind: Kind::Live,
            ..Report::new(system)
        }
    }

    pub fn push(&mut self, r: Record) {
        self.records.push(r);
    }

    /// The records of `experiment`, in order.
    pub fn of(&self, experiment: &str) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|x| x.experiment == experiment)
            .collect()
    }

    /// The record of `experiment` with exactly `case` and `metric`, if there is one.
    pub fn find(
        &self,
        experiment: &str,
        case: &[(&str, serde_json::Value)],
        metric: &str,
    ) -> Option<&Record> {
        self.records.iter().find(|x| {
            x.experiment == experiment
                && x.metric == metric
                && x.case.len() == case.len()
                && case.iter().all(|(k, v)| x.case.get(*k) == Some(v))
        })
    }

    /// Experiments in the order they first appear.
    pub fn experiments(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for r in &self.records {
            if !seen.contains(&r.experiment) {
                seen.push(r.experiment.clone());
            }
        }
        seen
    }

    /// The readable report: a table per experiment, then the notes.
    pub fn table(&self) -> String {
        let mut s = String::new();
        match self.kind {
            Kind::Reproduction => writeln!(s, "reef reproduce {}", self.system),
            Kind::Live => writeln!(
                s,
                "reef live: {} on this machine, beside the 2001 figures",
                self.system
            ),
        }
        .ok();
        let [value, beside, compare] = self.kind.columns();
        for e in self.experiments() {
            let rows: Vec<&Record> = self.records.iter().filter(|r| r.experiment == e).collect();
            let cw = rows.iter().map(|r| r.case_text().len()).max().unwrap_or(4).max(4);
            let mw = rows
                .iter()
                .map(|r| r.metric.len() + r.unit.len() + 3)
                .max()
                .unwrap_or(6)
                .max(6);
            // A column for the 95 % half-widths where any figure of the experiment has one.
            let with_ci = rows.iter().any(|r| r.ci95.is_some());
            let ci_head = if with_ci {
                format!(" {:>9}", "±95%")
            } else {
                String::new()
            };
            let _ = writeln!(s, "\n== {e}");
            let _ = writeln!(
                s,
                "{:<cw$}  {:<mw$} {:>13}{ci_head} {:>13} {:>9}",
                "case", "metric", value, beside, compare
            );
            for r in rows {
                let metric = match r.unit.as_str() {
                    "" | YES_NO => r.metric.clone(),
                    u => format!("{} [{u}]", r.metric),
                };
                let publ = r.published.map_or("-".to_string(), |p| fmt_value(p, &r.unit));
                let dev = self.kind.compare(r);
                let (sim, ci) = r.simulated_text();
                let ci = if with_ci {
                    format!(" {ci:>9}")
                } else {
                    String::new()
                };
                let _ = writeln!(
                    s,
                    "{:<cw$}  {:<mw$} {:>13}{ci} {:>13} {:>9}",
                    r.case_text(),
                    metric,
                    sim,
                    publ,
                    dev
                );
            }
        }
        if self.interrupted {
            let _ = writeln!(
                s,
                "\nINTERRUPTED: the tables above are the experiments that finished; not run: {}",
                if self.unfinished.is_empty() {
                    "-".to_string()
                } else {
                    self.unfinished.join(", ")
                }
            );
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "\nnotes:");
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        s
    }

    /// `{"system": …, "records": […]}`, each record's value in `simulated` (a live run's in
    /// `measured`).
    pub fn json(&self) -> String {
        match self.kind {
            Kind::Reproduction => serde_json::to_string_pretty(self).unwrap_or_default(),
            Kind::Live => {
                let records: Vec<MeasuredRecord> = self
                    .records
                    .iter()
                    .map(|r| MeasuredRecord {
                        experiment: &r.experiment,
                        case: &r.case,
                        metric: &r.metric,
                        unit: &r.unit,
                        measured: r.simulated,
                        published: r.published,
                        source: &r.source,
                    })
                    .collect();
                let j = MeasuredReport {
                    system: &self.system,
                    records,
                };
                serde_json::to_string_pretty(&j).unwrap_or_default()
            }
        }
    }

    /// One CSV per experiment: case columns, metric, unit, simulated, published, source.
    pub fn csvs(&self) -> Vec<Artifact> {
        let mut out = Vec::new();
        for e in self.experiments() {
            let rows: Vec<&Record> = self.records.iter().filter(|r| r.experiment == e).collect();
            let mut keys: Vec<String> = Vec::new();
            for r in &rows {
                for k in r.case.keys() {
                    if !keys.contains(k) {
                        keys.push(k.clone());
                    }
                }
            }
            let mut s = String::new();
            for k in &keys {
                let _ = write!(s, "{k},");
            }
            let [value, beside] = self.kind.csv_columns();
            let with_ci = rows.iter().any(|r| r.ci95.is_some());
            let ci_head = if with_ci { "ci95," } else { "" };
            let _ = writeln!(s, "metric,unit,{value},{ci_head}{beside},source");
            for r in rows {
                for k in &keys {
                    let v = r.case.get(k).map_or(String::new(), |v| match v {
                        serde_json::Value::String(x) => x.clone(),
                        v => v.to_string(),
                    });
                    let _ = write!(s, "{},", csv_field(&v));
                }
                // A figure with an interval to the digits the interval makes meaningful
                // (one more than the tables print, so that a script loses nothing to
                // rounding), else to six significant digits.
                let (sim, ci) = match r.ci95 {
                    Some(c) if r.simulated.is_finite() => {
                        let d = ci_decimals(c) + 1;
                        (fixed(r.simulated, d), format!("{},", fixed(c, d)))
                    }
                    _ if with_ci => (csv_num(r.simulated), ",".to_string()),
                    _ => (csv_num(r.simulated), String::new()),
                };
                let _ = writeln!(
                    s,
                    "{},{},{sim},{ci}{},{}",
                    csv_field(&r.metric),
                    csv_field(&r.unit),
                    r.published.map_or(String::new(), csv_num),
                    csv_field(&r.source)
                );
            }
            out.push(Artifact {
                file: format!("{e}.csv"),
                text: s,
            });
        }
        out
    }

    /// Writes the CSVs and plots into `dir`, each file atomically ([`crate::output::write`]).
    pub fn write_out(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        for a in self.csvs().iter().chain(self.plots.iter()) {
            let p = dir.join(&a.file);
            crate::output::write(&p, a.text.as_bytes())?;
            written.push(p);
        }
        Ok(written)
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number with sensible precision for a table.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if x.fract() == 0.0 && a < 1e9 {
        // Counts, and figures that are whole: 8442, not 8442.0.
        format!("{x:.0}")
    } else if (1e-4..1e9).contains(&a) {
        // Four significant digits, whatever the magnitude: 21.05, 171.4, 0.0008811.
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.3e}")
    }
}

/// The unit of a figure that is a yes or a no (stored as 1 or 0).
pub const YES_NO: &str = "yes/no";

/// A figure in its unit, as the tables print it: `yes`/`no` for [`YES_NO`], else
/// [`fmt_num`].
pub fn fmt_value(x: f64, unit: &str) -> String {
    if unit == YES_NO && x == 1.0 {
        "yes".into()
    } else if unit == YES_NO && x == 0.0 {
        "no".into()
    } else {
        fmt_num(x)
    }
}

/// The decimal place a 95 % half-width `ci` makes meaningful: the half-width to two
/// significant digits if they begin with 1 or 2 (0.14, 23), else to one (0.6, 400) — the
/// Particle Data Group's rounding rule, simplified — as a count of decimals (negative: tens,
/// hundreds). `ci` must be finite and positive.
pub fn ci_decimals(ci: f64) -> i32 {
    let e = ci.log10().floor() as i32;
    let lead = (ci / 10f64.powi(e)).floor();
    let d = if lead < 3.0 { 1 - e } else { -e };
    d.clamp(-15, 15)
}

/// `x` rounded to `decimals` places (negative: to tens, hundreds, …).
fn fixed(x: f64, decimals: i32) -> String {
    if decimals >= 0 {
        let d = decimals as usize;
        format!("{x:.d$}")
    } else {
        let p = 10f64.powi(-decimals);
        // (+ 0.0: a value that rounds to nothing is 0, not -0.)
        format!("{:.0}", (x / p).round() * p + 0.0)
    }
}

/// A figure and the half-width of its 95 % confidence interval, both to the place the
/// interval makes meaningful ([`ci_decimals`]): `(102.2, 0.8)`, `(1230, 60)`, `(0.0142,
/// 0.0021)`. The digits past that place are noise of the run, not results.
pub fn fmt_ci(x: f64, ci: f64) -> (String, String) {
    let d = ci_decimals(ci);
    (fixed(x, d), fixed(ci, d))
}

/// A figure as a CSV carries it: six significant digits ([`crate::report::round_sig`]:
/// 0.04966, not 0.04965999999999999); an empty field if not finite.
pub fn csv_num(x: f64) -> String {
    crate::report::round_sig(x, 6)
}

/// How a reproduction is asked to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Reduced lengths for tests (well under a minute).
    pub quick: bool,
    pub seed: u64,
    /// Show progress on a terminal.
    pub progress: bool,
}

/// The steps of a reproduction, one after another: on a terminal, a line as each begins
/// (its number, the time so far and an estimate of the time left), and the place where
/// Ctrl-C ([`crate::interrupt`]) stops it, between two steps, so that every table printed
/// is whole.
pub struct Steps {
    system: &'static str,
    /// Each step's name and its share of the whole (rough: its relative running time).
    steps: &'static [(&'static str, f64)],
    k: usize,
    start: std::time::Instant,
    show: bool,
}

impl Steps {
    pub fn new(system: &'static str, steps: &'static [(&'static str, f64)], opts: &Options) -> Steps {
        Steps {
            system,
            steps,
            k: 0,
            start: std::time::Instant::now(),
            show: opts.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }

    /// Starts the next step, which must be `name`; `false` if Ctrl-C asked to stop: `rep`
    /// is then marked interrupted, with this step and those after it as not run.
    pub fn next(&mut self, rep: &mut Report, name: &str) -> bool {
        let i = self.steps[self.k..]
            .iter()
            .position(|s| s.0 == name)
            .map_or(self.k, |j| self.k + j);
        if crate::interrupt::check() {
            rep.interrupted = true;
            rep.unfinished.extend(
                self.steps[i.min(self.steps.len())..]
                    .iter()
                    .map(|s| s.0.to_string()),
            );
            return false;
        }
        if self.show {
            let total: f64 = self.steps.iter().map(|s| s.1).sum();
            let done: f64 = self.steps[..i].iter().map(|s| s.1).sum();
            let elapsed = self.start.elapsed().as_secs_f64();
            let eta = if done > 0.0 && total > done {
                format!(
                    ", about {} left",
                    crate::runner::duration_text(elapsed * (total - done) / done)
                )
            } else {
                String::new()
            };
            eprintln!(
                "reef reproduce {}: [{}/{}] {name} ({} so far{eta})",
                self.system,
                i + 1,
                self.steps.len(),
                crate::runner::duration_text(elapsed)
            );
        }
        self.k = i + 1;
        true
    }
}

/// `f` of every item, spread over the cores the [`pool`] allows (`--jobs`), in the items'
/// order (so a report does not depend on thread timing); `done` is told how many have
/// finished as each does. The calling thread works on the items too.
pub fn par_map<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    done: impl Fn(usize) + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let n = items.len();
    let helpers = pool::jobs().min(n).saturating_sub(1);
    let (next, finished) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let work = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            mine.push((i, f(item)));
            done(finished.fetch_add(1, Ordering::Relaxed) + 1);
        }
        mine
    };
    let mut out: Vec<(usize, R)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..helpers)
            .map(|_| {
                sc.spawn(
                    || match pool::acquire_while(|| next.load(Ordering::Relaxed) < n) {
                        Some(_slot) => work(),
                        None => Vec::new(),
                    },
                )
            })
            .collect();
        let mut all = {
            let _slot = pool::acquire();
            work()
        };
        // Helpers still waiting for a slot find nothing left.
        pool::wake();
        for h in hs {
            all.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        all
    });
    out.sort_by_key(|x| x.0);
    out.into_iter().map(|x| x.1).collect()
}

pub use about::{ALL, System};

/// The systems `reef reproduce` knows: the names of [`ALL`].
pub const SYSTEMS: &[&str] = &{
    let mut names = [""; ALL.len()];
    let mut i = 0;
    while i < ALL.len() {
        names[i] = ALL[i].name;
        i += 1;
    }
    names
};

/// Runs the reproduction of `system`.
pub fn reproduce(system: &str, opts: &Options) -> Result<Report, String> {
    match about::find(system) {
        Some(s) => (s.reproduce)(opts),
        None => Err(format!(
            "no reproduction for `{system}` (available: {}, or all)",
            SYSTEMS.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests;

//! Sweeps as cluster jobs: a load sweep planned into a directory of points (`reef sweep
//! --plan DIR`), each point run by a process of its own (`--run DIR --task K`, one task of
//! a Slurm job array), or every missing point by one process (`--run DIR`), and the finished
//! points collected into the table, CSV, JSON and plots that a single-process `reef sweep`
//! writes, identical to them (`--collect DIR`). `--slurm DIR` writes the job-array script.
//!
//! The directory holds:
//! - `plan.json`: the reef version that planned it, the sweep's name, the config (an
//!   absolute path), its overrides and the loads;
//! - `manifest.jsonl`: one point per line in task order — its task number, its load (`null`
//!   for the run with every source backlogged that gives the saturation throughput), the
//!   config's overrides for it, and its key: a 64-bit FNV-1a hash of reef's version and the
//!   point's resolved config ([`crate::config::resolved`]), so that a changed config or
//!   another reef is noticed instead of mixed in;
//! - `points/KEY.json`: a finished point's result, written whole or not at all
//!   ([`crate::output::write`]), so a killed task leaves nothing that looks finished and is
//!   simply run again; `points/KEY.saturated` beside it if the point saturated;
//!   `points/KEY.error`: why a point failed;
//! - `logs/`: the Slurm tasks' output.
//!
//! A finished point is never run again. A single-process sweep stops at the first load that
//! saturates; here the points run independently, so a task whose lower load is known to
//! have saturated (its `.saturated` mark) is skipped, and `--collect` keeps exactly the
//! points the single-process sweep keeps: every load up to the first that saturated.

use crate::config::{self, ConfigError};
use crate::engine::result::RunResult;
use crate::report::{Sweep, SweepPoint};
use crate::runner::{self, SweepError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A sweep plan's failure, said in words (the file and what to do).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

impl From<ConfigError> for PlanError {
    fn from(e: ConfigError) -> PlanError {
        PlanError(e.to_string())
    }
}

impl From<SweepError> for PlanError {
    fn from(e: SweepError) -> PlanError {
        PlanError(e.to_string())
    }
}

/// `plan.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PlanFile {
    /// The reef version that planned the sweep; another cannot run or collect it.
    pub reef: String,
    /// The sweep's name (the config's and its overrides').
    pub name: String,
    pub config: PathBuf,
    pub overrides: Vec<String>,
    pub loads: Vec<f64>,
}

/// One line of `manifest.jsonl`: one point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Task {
    pub task: usize,
    /// The offered load, or `None` for the backlogged run (the saturation throughput).
    pub load: Option<f64>,
    /// The config's overrides for this point.
    pub overrides: Vec<String>,
    pub key: String,
}

/// A plan read back from its directory.
#[derive(Clone, Debug)]
pub struct Plan {
    pub dir: PathBuf,
    pub file: PlanFile,
    pub tasks: Vec<Task>,
}

/// Where a point stands.
#[derive(Debug)]
pub enum State {
    Done(Box<RunResult>),
    Failed(String),
    Missing,
}

/// What `--run` did with one task.
#[derive(Clone, Debug, PartialEq)]
pub enum Ran {
    /// Run now; whether it saturated.
    Ran { saturated: bool },
    /// Finished by an earlier run: not run again.
    AlreadyDone,
    /// A lower load saturated: a single-process sweep would not run it either.
    PastSaturation { below: f64 },
    /// Failed (and said why in its `.error` file).
    Failed(String),
    /// Ctrl-C stopped it; nothing written.
    Interrupted,
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// 64-bit FNV-1a (Fowler, Noll, Vo): a stable hash, the same on every machine and build
/// (the standard library's hasher is not), for the points' keys.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A point's key: the hash of reef's version and its resolved config.
pub fn key_of(config: &Path, overrides: &[String]) -> Result<String, ConfigError> {
    let text = config::resolved(config, overrides)?;
    Ok(format!(
        "{:016x}",
        fnv1a(format!("reef {VERSION}\n{text}").as_bytes())
    ))
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> PlanError {
    PlanError(format!("{}: cannot {what}: {e}", path.display()))
}

fn write_file(path: &Path, text: &str) -> Result<(), PlanError> {
    crate::output::write(path, text.as_bytes()).map_err(|e| io_err("write", path, e))
}

impl Plan {
    /// Plans the sweep of the config at `config` with `overrides` over `loads` into `dir`
    /// (created if need be). Planning the same sweep again into its directory keeps the
    /// points already run; a directory holding another plan is refused.
    pub fn create(dir: &Path, config: &Path, overrides: &[String], loads: &[f64]) -> Result<Plan, PlanError> {
        let (name, _) = runner::sweep_setup(config, overrides, loads)?;
        let config = config
            .canonicalize()
            .map_err(|e| io_err("find the config", config, e))?;
        let file = PlanFile {
            reef: VERSION.to_string(),
            name,
            config: config.clone(),
            overrides: overrides.to_vec(),
            loads: loads.to_vec(),
        };
        let mut tasks = Vec::new();
        for (task, load) in loads.iter().map(|&l| Some(l)).chain([None]).enumerate() {
            let o = runner::point_overrides(overrides, load);
            tasks.push(Task {
                task,
                load,
                key: key_of(&config, &o)?,
                overrides: o,
            });
        }
        let plan = Plan {
            dir: dir.to_path_buf(),
            file,
            tasks,
        };
        if dir.join("plan.json").exists() {
            let old = Plan::open(dir)?;
            if old.file != plan.file || old.tasks != plan.tasks {
                return Err(PlanError(format!(
                    "{}: holds another sweep's plan ({}); plan into another directory, or remove it",
                    dir.display(),
                    old.file.name
                )));
            }
            return Ok(old);
        }
        for sub in ["points", "logs"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).map_err(|e| io_err("create the directory", &d, e))?;
        }
        let mut manifest = String::new();
        for t in &plan.tasks {
            manifest.push_str(&serde_json::to_string(t).map_err(|e| PlanError(e.to_string()))?);
            manifest.push('\n');
        }
        write_file(&dir.join("manifest.jsonl"), &manifest)?;
        // The plan last: a directory with a plan.json has its manifest.
        let text = serde_json::to_string_pretty(&plan.file).map_err(|e| PlanError(e.to_string()))?;
        write_file(&dir.join("plan.json"), &(text + "\n"))?;
        Ok(plan)
    }

    /// Reads the plan in `dir`; refuses one planned by another reef version.
    pub fn open(dir: &Path) -> Result<Plan, PlanError> {
        let read = |name: &str| {
            let p = dir.join(name);
            std::fs::read_to_string(&p).map_err(|e| {
                PlanError(format!(
                    "{}: cannot read: {e} (is {} a directory made by `reef sweep --plan`?)",
                    p.display(),
                    dir.display()
                ))
            })
        };
        let p = dir.join("plan.json");
        let file: PlanFile = serde_json::from_str(&read("plan.json")?)
            .map_err(|e| PlanError(format!("{}: not a sweep plan: {e}", p.display())))?;
        if file.reef != VERSION {
            return Err(PlanError(format!(
                "{}: planned with reef {}; this is reef {VERSION}, whose results may differ: plan \
                 the sweep again into a new directory",
                p.display(),
                file.reef
            )));
        }
        let m = dir.join("manifest.jsonl");
        let mut tasks = Vec::new();
        for (i, line) in read("manifest.jsonl")?.lines().enumerate() {
            let t: Task = serde_json::from_str(line)
                .map_err(|e| PlanError(format!("{}:{}: not a point of a plan: {e}", m.display(), i + 1)))?;
            if t.task != i {
                return Err(PlanError(format!(
                    "{}:{}: task {} out of order (expected {i})",
                    m.display(),
                    i + 1,
                    t.task
                )));
            }
            tasks.push(t);
        }
        if tasks.len() != file.loads.len() + 1 {
            return Err(PlanError(format!(
                "{}: {} points for {} loads and the saturation run",
                m.display(),
                tasks.len(),
                file.loads.len()
            )));
        }
        Ok(Plan {
            dir: dir.to_path_buf(),
            file,
            tasks,
        })
    }

    fn point(&self, t: &Task, ext: &str) -> PathBuf {
        self.dir.join("points").join(format!("{}.{ext}", t.key))
    }

    /// Where task `t` stands.
    pub fn state(&self, t: &Task) -> State {
        let json = self.point(t, "json");
        match std::fs::read_to_string(&json) {
            Ok(text) => match serde_json::from_str::<RunResult>(&text) {
                Ok(r) => State::Done(Box::new(r)),
                Err(e) => State::Failed(format!("{}: unreadable result: {e}", json.display())),
            },
            Err(_) => match std::fs::read_to_string(self.point(t, "error")) {
                Ok(why) => State::Failed(why.trim().to_string()),
                Err(_) => State::Missing,
            },
        }
    }

    /// The lowest load below task `k`'s that saturated or failed, if one did (a
    /// single-process sweep runs nothing past it).
    fn stopped_below(&self, k: usize) -> Option<f64> {
        let load = self.tasks[k].load?;
        self.tasks
            .iter()
            .filter(|t| t.load.is_some_and(|l| l < load))
            .find(|t| self.point(t, "saturated").exists() || self.point(t, "error").exists())
            .and_then(|t| t.load)
    }

    /// Runs task `k` unless it has finished or a lower load saturated; a progress bar on a
    /// terminal if `show`.
    pub fn run_task(&self, k: usize, show: bool) -> Result<Ran, PlanError> {
        let t = self.tasks.get(k).ok_or_else(|| {
            PlanError(format!(
                "--task {k}: the plan in {} has tasks 0 to {}",
                self.dir.display(),
                self.tasks.len() - 1
            ))
        })?;
        if let State::Done(_) = self.state(t) {
            return Ok(Ran::AlreadyDone);
        }
        if let Some(below) = self.stopped_below(k) {
            return Ok(Ran::PastSaturation { below });
        }
        let (cfg, o) = (&self.file.config, &self.file.overrides);
        if key_of(cfg, &t.overrides)? != t.key {
            return Err(PlanError(format!(
                "{}: the config has changed since the sweep in {} was planned; plan it again into \
                 a new directory",
                cfg.display(),
                self.dir.display()
            )));
        }
        let spec = runner::point_spec(cfg, o, t.load)?;
        match runner::run_with_bar(&spec, show) {
            Ok(r) if r.interrupted => Ok(Ran::Interrupted),
            Ok(r) => {
                let text = serde_json::to_string_pretty(&r).map_err(|e| PlanError(e.to_string()))?;
                if r.saturated {
                    write_file(&self.point(t, "saturated"), "")?;
                }
                write_file(&self.point(t, "json"), &text)?;
                let _ = std::fs::remove_file(self.point(t, "error"));
                Ok(Ran::Ran {
                    saturated: r.saturated,
                })
            }
            Err(e) => {
                let why = match t.load {
                    Some(l) => SweepError::Sim { load: l, err: e }.to_string(),
                    None => format!("every source backlogged: {e}"),
                };
                write_file(&self.point(t, "error"), &format!("{why}\n"))?;
                Ok(Ran::Failed(why))
            }
        }
    }

    /// Runs every task that has not finished, `jobs` at a time in task order, each point
    /// saying on standard error what became of it (if `show`); stops starting tasks on
    /// Ctrl-C. Returns what became of each task.
    pub fn run_missing(&self, jobs: usize, show: bool) -> Vec<(usize, Result<Ran, PlanError>)> {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let out = std::sync::Mutex::new(Vec::new());
        let bar = show && jobs == 1;
        let work = || {
            loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if k >= self.tasks.len() || crate::interrupt::check() {
                    return;
                }
                let r = self.run_task(k, bar);
                if show {
                    eprintln!("reef sweep --run: {}", self.said(k, &r));
                }
                if let Ok(mut o) = out.lock() {
                    o.push((k, r));
                }
            }
        };
        std::thread::scope(|sc| {
            for _ in 1..jobs.clamp(1, self.tasks.len().max(1)) {
                sc.spawn(work);
            }
            work();
        });
        let mut out = out.into_inner().unwrap_or_else(|e| e.into_inner());
        out.sort_by_key(|x| x.0);
        out
    }

    /// A task's outcome in words.
    pub fn said(&self, k: usize, r: &Result<Ran, PlanError>) -> String {
        let what = match self.tasks.get(k).map(|t| t.load) {
            Some(Some(l)) => format!("task {k} (load {l})"),
            Some(None) => format!("task {k} (saturation run)"),
            None => format!("task {k}"),
        };
        match r {
            Ok(Ran::Ran { saturated: true }) => format!("{what}: done, saturated"),
            Ok(Ran::Ran { saturated: false }) => format!("{what}: done"),
            Ok(Ran::AlreadyDone) => format!("{what}: finished before, not run again"),
            Ok(Ran::PastSaturation { below }) => {
                format!("{what}: not run: load {below} below it saturated (or failed)")
            }
            Ok(Ran::Failed(why)) => format!("{what}: FAILED: {why}"),
            Ok(Ran::Interrupted) => format!("{what}: interrupted, nothing written"),
            Err(e) => format!("{what}: {e}"),
        }
    }

    /// The sweep the finished points make: the loads up to the first that saturated, and
    /// the saturation throughput — what a single-process sweep reports. Refused, naming
    /// the tasks, while a point it needs has not run; a failed point is the sweep's error,
    /// as it is in a single process.
    pub fn collect(&self) -> Result<Sweep, PlanError> {
        let mut points = Vec::new();
        let mut missing = Vec::new();
        let loads = &self.tasks[..self.tasks.len() - 1];
        for t in loads {
            match self.state(t) {
                State::Done(r) => {
                    let stop = r.saturated;
                    points.push(SweepPoint {
                        load: t.load.unwrap_or_default(),
                        result: *r,
                    });
                    if stop {
                        break;
                    }
                }
                State::Failed(why) if missing.is_empty() => {
                    return Err(PlanError(format!("task {}: {why}", t.task)));
                }
                // (Past a point not run yet: what that point does decides.)
                State::Failed(_) => break,
                State::Missing => missing.push(t.task),
            }
        }
        let sat_task = &self.tasks[self.tasks.len() - 1];
        let saturation_throughput = match self.state(sat_task) {
            State::Done(r) => runner::saturation_of(&r),
            // (A single-process sweep reports no saturation throughput when that run fails.)
            State::Failed(_) => None,
            State::Missing => {
                missing.push(sat_task.task);
                None
            }
        };
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().take(20).map(|k| k.to_string()).collect();
            return Err(PlanError(format!(
                "{}: {} point{} not run yet: task{} {}{}; run them with `reef sweep --run {}` (or \
                 --task K each)",
                self.dir.display(),
                missing.len(),
                if missing.len() == 1 { " has" } else { "s have" },
                if missing.len() == 1 { "" } else { "s" },
                list.join(", "),
                if missing.len() > 20 { ", …" } else { "" },
                self.dir.display()
            )));
        }
        Ok(Sweep {
            name: self.file.name.clone(),
            points,
            saturation_throughput,
            interrupted: false,
            unfinished: Vec::new(),
        })
    }

    /// Writes `reef-sweep.sbatch` into the plan's directory: a Slurm job array of one task
    /// per point, each `reef sweep --run DIR --task K` with this reef executable, one CPU
    /// and the memory a point needs ([`crate::memory`]'s estimate, doubled for the process
    /// around it and rounded up to 64 MB). Returns its path.
    pub fn slurm(&self) -> Result<PathBuf, PlanError> {
        let exe = std::env::current_exe()
            .map_err(|e| PlanError(format!("cannot find reef's own executable: {e}")))?;
        let dir = self
            .dir
            .canonicalize()
            .map_err(|e| io_err("find the directory", &self.dir, e))?;
        let spec = runner::point_spec(
            &self.file.config,
            &self.file.overrides,
            self.file.loads.first().copied(),
        )?;
        let bytes = crate::memory::Counts::of_spec(&spec).bytes();
        let mb = (2 * bytes / (1 << 20) + 64).div_ceil(64) * 64;
        let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
        let job: String = self
            .file
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .take(48)
            .collect();
        let text = format!(
            "#!/bin/sh\n\
             # The reef sweep planned in {dir}: {name}, {n} points (one array task each).\n\
             # Written by `reef sweep --slurm`. Submit it with\n\
             #   sbatch {script}\n\
             # and when every task has finished, merge the points:\n\
             #   reef sweep --collect {dir} --json sweep.json --csv sweep.csv --svg sweep.svg\n\
             # Tasks that have finished are not run again; resubmit after a failure or a kill.\n\
             # Add `#SBATCH --time=...` (and a partition or account) if your cluster asks.\n\
             #SBATCH --job-name=reef-{job}\n\
             #SBATCH --array=0-{last}\n\
             #SBATCH --ntasks=1\n\
             #SBATCH --cpus-per-task=1\n\
             #SBATCH --mem={mb}M\n\
             #SBATCH --output={logs}/task-%a.out\n\
             exec {exe} sweep --run {qdir} --task \"$SLURM_ARRAY_TASK_ID\"\n",
            dir = dir.display(),
            name = self.file.name.replace('\n', " "),
            n = self.tasks.len(),
            script = q(&dir.join("reef-sweep.sbatch")),
            last = self.tasks.len() - 1,
            logs = dir.join("logs").display(),
            exe = q(&exe),
            qdir = q(&dir),
        );
        let path = dir.join("reef-sweep.sbatch");
        write_file(&path, &text)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_the_published_hash() {
        // The FNV-1a 64-bit test vectors (Fowler, Noll, Vo: "" and "a").
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn keys_follow_the_resolved_config_not_its_spelling() {
        let mesh = Path::new("examples/mesh8x8.toml");
        let a = key_of(mesh, &["traffic.load=0.1".into(), "sim.seed=3".into()]).unwrap();
        let b = key_of(mesh, &["sim.seed=3".into(), "traffic.load=0.1".into()]).unwrap();
        let c = key_of(mesh, &["traffic.load=0.2".into(), "sim.seed=3".into()]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 16);
    }
}

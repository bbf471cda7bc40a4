//! Sweeps as cluster jobs (`reef sweep --plan/--run/--collect/--slurm`, src/plan.rs): the
//! collected sweep is the single-process sweep, file for file, whatever order the points ran
//! in; a killed run resumes without running a finished point again; bad plans and changed
//! configs are refused; and a plan runs through a real single-node Slurm where one can be
//! started (scripts/slurm-local.sh; `.ci/run` installs it and sets REEF_REQUIRE_SLURM).

mod common;
use common::reef;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reef-plan-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    let _ = std::fs::remove_dir_all(&p);
    p
}

const MESH: &str = "examples/mesh8x8.toml";
const LOADS: &str = "0.05:0.4:0.05";
const SHORT: &str = "sim.measure=\"2000 cycles\"";
const BIG: &str = "topology.k=[16,16]";
const LONG: &str = "sim.measure=\"400000 cycles\"";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `reef` with `args` and `--json --csv --svg` into `dir` (named `prefix.*`): its table,
/// JSON, CSV and SVG, as text.
fn outputs(args: &[&str], dir: &Path, prefix: &str) -> [String; 4] {
    std::fs::create_dir_all(dir).unwrap();
    let f = |ext: &str| dir.join(format!("{prefix}.{ext}"));
    let (j, c, v) = (f("json"), f("csv"), f("svg"));
    let mut a = args.to_vec();
    a.extend(["--json", s(&j), "--csv", s(&c), "--svg", s(&v)]);
    let (code, out, err) = reef(&a);
    assert_eq!(code, 0, "{a:?}: {err}");
    [out, read(&j), read(&c), read(&v)]
}

/// The single-process sweep's table, JSON, CSV and SVG.
fn single(dir: &Path, jobs: &str) -> [String; 4] {
    outputs(
        &[
            "sweep", MESH, "--load", LOADS, "--set", SHORT, "-q", "--jobs", jobs,
        ],
        dir,
        "s",
    )
}

/// The collected sweep's table, JSON, CSV and SVG.
fn collected(plan: &Path) -> [String; 4] {
    outputs(&["sweep", "--collect", s(plan)], plan, "c")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn plan(dir: &Path, extra: &[&str]) {
    let mut args = vec!["sweep", MESH, "--load", LOADS, "--set", SHORT];
    args.extend(extra);
    args.extend(["--plan", s(dir)]);
    let (code, out, err) = reef(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("planned 9 points"), "{out}");
}

/// Points run one at a time in a scrambled order, then collected: the same table, JSON, CSV
/// and plot as the sweep in one process. The points past the first saturated load are not
/// run once it is known to have saturated.
#[test]
fn collected_points_in_any_order_are_the_single_process_sweep() {
    let dir = tmp("scrambled");
    plan(&dir, &[]);
    let manifest = read(&dir.join("manifest.jsonl"));
    assert_eq!(manifest.lines().count(), 9, "{manifest}");
    assert!(
        manifest.lines().last().unwrap().contains("\"load\":null"),
        "{manifest}"
    );
    // Before any point ran, collecting names what is missing.
    let (code, _, err) = reef(&["sweep", "--collect", s(&dir)]);
    assert_eq!(code, 1);
    assert!(
        err.contains("9 points have not run yet") && err.contains("--run"),
        "{err}"
    );
    let mut said = Vec::new();
    for k in [8, 5, 3, 0, 7, 1, 2, 4, 6] {
        let (code, out, err) = reef(&["sweep", "--run", s(&dir), "--task", &k.to_string(), "-q"]);
        assert_eq!(code, 0, "task {k}: {err}");
        said.push(out);
    }
    // Task 5 (0.3) ran before 4 (0.25) was known to saturate; 7 and 6 came after it and
    // were left alone.
    assert!(said[1].contains("saturated"), "{said:?}");
    assert!(said[4].contains("not run: load 0.3"), "{said:?}");
    assert!(said[8].contains("not run: load 0.25"), "{said:?}");
    let want = single(&dir.join("single"), "2");
    assert_eq!(collected(&dir), want);
    // Running a finished task again does nothing.
    let (code, out, _) = reef(&["sweep", "--run", s(&dir), "--task", "0", "-q"]);
    assert_eq!(code, 0);
    assert!(out.contains("not run again"), "{out}");
}

/// A `--run` of every point killed (SIGKILL) after some points finished: the finished ones
/// are whole and are not run again; the rest run on the next `--run`, and the collected
/// sweep is the single-process one.
#[test]
fn a_killed_run_resumes_where_it_stopped() {
    let dir = tmp("killed");
    // Longer points (about a second each), so the kill lands mid-sweep.
    let sweep = [
        "sweep",
        MESH,
        "--load",
        "0.01:0.08:0.01",
        "--set",
        BIG,
        "--set",
        LONG,
    ];
    let (code, _, err) = reef(&[&sweep[..], &["--plan", s(&dir)]].concat());
    assert_eq!(code, 0, "{err}");
    let points = dir.join("points");
    let finished = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&points)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        v.sort();
        v
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(["sweep", "--run", s(&dir), "--jobs", "1", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while finished().len() < 2 {
        assert!(t0.elapsed().as_secs() < 120, "no point finished in 2 minutes");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before: Vec<(PathBuf, std::time::SystemTime)> = finished()
        .into_iter()
        .map(|p| {
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p, t)
        })
        .collect();
    assert!(before.len() >= 2 && before.len() < 9, "{before:?}");
    for (p, _) in &before {
        serde_json::from_str::<serde_json::Value>(&read(p))
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    let (code, out, err) = reef(&["sweep", "--run", s(&dir), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("not run again").count(), before.len(), "{out}");
    for (p, t) in &before {
        assert_eq!(
            std::fs::metadata(p).unwrap().modified().unwrap(),
            *t,
            "{} ran again",
            p.display()
        );
    }
    let (code, c, err) = reef(&["sweep", "--collect", s(&dir)]);
    assert_eq!(code, 0, "{err}");
    let (code, one, err) = reef(&[&sweep[..], &["-q", "--jobs", "2"]].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(c, one);
}

/// What a plan refuses, each with what to do.
#[test]
fn plans_refuse_what_would_mix_results() {
    let dir = tmp("refusals");
    plan(&dir, &[]);
    // The same plan again keeps it; another sweep into it is refused.
    plan(&dir, &[]);
    let (code, _, err) = reef(&["sweep", MESH, "--load", "0.1:0.2:0.1", "--plan", s(&dir)]);
    assert_eq!(code, 1);
    assert!(err.contains("holds another sweep's plan"), "{err}");
    // Not a plan.
    let (code, _, err) = reef(&["sweep", "--run", "examples"]);
    assert_eq!(code, 1);
    assert!(err.contains("plan.json") && err.contains("--plan"), "{err}");
    // A task that is not in it.
    let (code, _, err) = reef(&["sweep", "--run", s(&dir), "--task", "9"]);
    assert_eq!(code, 1);
    assert!(err.contains("tasks 0 to 8"), "{err}");
    // --collect takes no config edits; --task needs --run; outputs go with --collect.
    let (code, _, err) = reef(&["sweep", "--collect", s(&dir), "--seed", "3"]);
    assert_eq!(code, 1);
    assert!(err.contains("give --set"), "{err}");
    let (code, _, err) = reef(&["sweep", "--run", s(&dir), "--set", "sim.seed=3"]);
    assert_eq!(code, 1);
    assert!(err.contains("--run: the plan fixes the config"), "{err}");
    assert_ne!(reef(&["sweep", MESH, "--load", LOADS, "--task", "1"]).0, 0);
    assert_ne!(reef(&["sweep", "--run", s(&dir), "--json", "x.json"]).0, 0);
    // A failed point is the sweep's error when collected, and is run again by --run.
    let m = read(&dir.join("manifest.jsonl"));
    let key = |k: usize| {
        let line = m.lines().nth(k).unwrap();
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["key"].as_str().unwrap().to_string()
    };
    for k in 0..9 {
        assert_eq!(reef(&["sweep", "--run", s(&dir), "--task", &k.to_string()]).0, 0);
    }
    let error = dir.join("points").join(format!("{}.error", key(1)));
    let json = dir.join("points").join(format!("{}.json", key(1)));
    std::fs::remove_file(&json).unwrap();
    std::fs::write(&error, "at load 0.1: out of memory\n").unwrap();
    let (code, _, err) = reef(&["sweep", "--collect", s(&dir)]);
    assert_eq!(code, 1);
    assert!(err.contains("task 1: at load 0.1: out of memory"), "{err}");
    let (code, out, _) = reef(&["sweep", "--run", s(&dir), "-q"]);
    assert_eq!(code, 0);
    assert!(out.contains("task 1 (load 0.1): done"), "{out}");
    assert!(!error.exists() && json.exists());
    assert_eq!(reef(&["sweep", "--collect", s(&dir)]).0, 0);
    // Another reef version's plan.
    let pj = dir.join("plan.json");
    let text = read(&pj);
    std::fs::write(&pj, text.replace(env!("CARGO_PKG_VERSION"), "0.0.1-other")).unwrap();
    let (code, _, err) = reef(&["sweep", "--collect", s(&dir)]);
    assert_eq!(code, 1);
    assert!(err.contains("planned with reef 0.0.1-other"), "{err}");
    std::fs::write(&pj, text).unwrap();
    // A config changed after the plan: its points' keys no longer match.
    let d2 = tmp("changed");
    std::fs::create_dir_all(&d2).unwrap();
    let cfg = d2.join("net.toml");
    std::fs::copy(MESH, &cfg).unwrap();
    let (code, _, err) = reef(&[
        "sweep",
        s(&cfg),
        "--load",
        "0.1:0.2:0.1",
        "--plan",
        s(&d2.join("p")),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = read(&cfg).replace("seed = 1\n", "seed = 99\n");
    assert!(text.contains("seed = 99"));
    std::fs::write(&cfg, text).unwrap();
    let (code, _, err) = reef(&["sweep", "--run", s(&d2.join("p")), "--task", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("the config has changed"), "{err}");
}

/// Runs a script of scripts/slurm-local.sh with `args`; its standard output.
fn slurm_local(args: &[&str]) -> Option<String> {
    let out = Command::new("bash")
        .arg("scripts/slurm-local.sh")
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "slurm-local.sh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Stops the test's Slurm whatever happens to the test.
struct Cluster(PathBuf);

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = slurm_local(&["stop", s(&self.0)]);
    }
}

/// A plan's job array through a real single-node Slurm: validated by `sbatch --test-only`,
/// run with `sbatch --wait`, collected into the single-process sweep.
#[test]
fn a_plan_runs_as_a_slurm_job_array() {
    let have = |c: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !["sbatch", "slurmctld", "slurmd", "munged"]
        .iter()
        .all(|c| have(c))
    {
        assert!(
            std::env::var("REEF_REQUIRE_SLURM").is_err(),
            "REEF_REQUIRE_SLURM is set but Slurm (slurm-wlm, munge) is not installed"
        );
        eprintln!("SKIPPED: no Slurm here (apt-get install slurm-wlm munge)");
        return;
    }
    let dir = tmp("slurm");
    plan(&dir, &[]);
    let (code, out, err) = reef(&["sweep", "--slurm", s(&dir)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("sbatch"), "{out}");
    let script = dir.join("reef-sweep.sbatch");
    let text = read(&script);
    assert!(
        text.contains("#SBATCH --array=0-8") && text.contains("--task \"$SLURM_ARRAY_TASK_ID\""),
        "{text}"
    );
    let cluster_dir = tmp("slurm-cluster");
    let started = std::time::Instant::now();
    let env = slurm_local(&["start", s(&cluster_dir)]).expect("a single-node Slurm starts here");
    let _cluster = Cluster(cluster_dir.clone());
    let conf = env
        .trim()
        .strip_prefix("export SLURM_CONF=")
        .unwrap_or_else(|| panic!("{env}"))
        .to_string();
    let sbatch = |args: &[&str]| {
        let o = Command::new("sbatch")
            .env("SLURM_CONF", &conf)
            .args(args)
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, err) = sbatch(&["--test-only", s(&script)]);
    assert!(ok, "sbatch --test-only: {err}");
    let (ok, err) = sbatch(&["--wait", s(&script)]);
    assert!(ok, "sbatch --wait: {err}");
    eprintln!(
        "Slurm: started, ran 9 array tasks, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(dir.join("logs").join("task-8.out").exists());
    assert_eq!(collected(&dir), single(&dir.join("single"), "1"));
}

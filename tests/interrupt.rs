//! Ctrl-C, sent as a real SIGINT to the command line: a run, a sweep and a reproduction
//! stop at their next safe point and print and write what finished, marked as interrupted,
//! and exit 130; a second Ctrl-C ends the process at once.
#![cfg(unix)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("reef-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run reef")
}

fn sigint(c: &Child) {
    // SAFETY: kill(2) on a child of this process, which has not been waited for yet.
    let r = unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(r, 0);
}

/// Sends SIGINT after `after`, then waits: (exit code, stdout, stderr, time from the signal).
fn interrupt(args: &[&str], after: Duration) -> (i32, String, String, Duration) {
    let c = spawn(args);
    std::thread::sleep(after);
    sigint(&c);
    let t = Instant::now();
    let out = c.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

#[test]
fn an_interrupted_run_writes_what_it_has_marked_as_interrupted() {
    let j = tmp("run.json");
    // About a minute of simulation: stopped after a second.
    let (code, out, err, took) = interrupt(
        &[
            "run",
            "examples/mesh32x32.toml",
            "--set",
            "sim.measure=\"5000000 cycles\"",
            "--json",
            j.to_str().unwrap(),
            "-q",
        ],
        Duration::from_millis(1500),
    );
    assert_eq!(code, 130, "{out}{err}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        err.contains("interrupted: stopping at the next safe point"),
        "{err}"
    );
    assert!(
        out.contains("INTERRUPTED at") && out.contains("accepted"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["saturated"], false);
    // The window ends where the run stopped, well before the configured one.
    let w = v["window_cycles"].as_f64().unwrap();
    assert!(w > 0.0 && w < 5_000_000.0, "{w}");
    assert!(v["delivered_measured_packets"].as_u64().unwrap() > 0);
}

#[test]
fn an_interrupted_booksim_run_says_its_sampling_was_cut_short() {
    // BookSim2's sampling in long periods that never converge (stopping_thres = 0): stopped
    // after the warm-up, the window so far is measured, and the sampling is said to be
    // interrupted, not ended by max_samples.
    let j = tmp("booksim.json");
    let (code, out, err, _) = interrupt(
        &[
            "run",
            "tests/data/booksim/workloads/mesh8x8-uniform",
            "num_vcs=8",
            "injection_rate=0.2",
            "sample_period=30000",
            "max_samples=40",
            "stopping_thres=0",
            "--json",
            j.to_str().unwrap(),
            "-q",
        ],
        Duration::from_millis(2500),
    );
    assert_eq!(code, 130, "{out}{err}");
    assert!(out.contains("interrupted before it converged"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["sampling"]["converged"], false);
    assert!(v["window_cycles"].as_f64().unwrap() >= 0.0);
}

#[test]
fn an_interrupted_sweep_keeps_the_points_that_finished() {
    let (c, j) = (tmp("sweep.csv"), tmp("sweep.json"));
    let (code, out, err, _) = interrupt(
        &[
            "sweep",
            "examples/mesh32x32.toml",
            "--load",
            "0.01:0.4:0.01",
            "--jobs",
            "1",
            "--csv",
            c.to_str().unwrap(),
            "--json",
            j.to_str().unwrap(),
            "-q",
        ],
        Duration::from_millis(2500),
    );
    assert_eq!(code, 130, "{out}{err}");
    assert!(out.contains("INTERRUPTED: the points above finished"), "{out}");
    assert!(
        out.contains("saturation throughput: not run (interrupted)"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    let points = v["points"].as_array().unwrap();
    let unfinished = v["unfinished"].as_array().unwrap();
    // Every load is either a finished point or listed as not finished, in order.
    assert_eq!(points.len() + unfinished.len(), 40, "{out}");
    assert!(!unfinished.is_empty());
    for p in points {
        assert_eq!(p["result"]["interrupted"], false);
    }
    let csv = std::fs::read_to_string(&c).unwrap();
    assert_eq!(csv.lines().count(), points.len() + 1, "{csv}");
}

#[test]
fn an_interrupted_reproduction_prints_and_writes_the_experiments_that_finished() {
    let (j, d) = (tmp("atomic.json"), tmp("atomic-out"));
    let (code, out, err, _) = interrupt(
        &[
            "reproduce",
            "atomic",
            "--json",
            j.to_str().unwrap(),
            "--out",
            d.to_str().unwrap(),
        ],
        Duration::from_millis(1500),
    );
    assert_eq!(code, 130, "{out}{err}");
    assert!(
        out.contains("INTERRUPTED: the tables above are the experiments that finished"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    let unfinished: Vec<&str> = v["unfinished"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(!unfinished.is_empty());
    // No record of an experiment that did not run; a CSV for each that did.
    for r in v["records"].as_array().unwrap() {
        let e = r["experiment"].as_str().unwrap();
        assert!(!unfinished.contains(&e), "{e}");
        assert!(d.join(format!("{e}.csv")).exists(), "{e}");
    }
}

#[test]
fn a_second_ctrl_c_ends_at_once() {
    let j = tmp("second.json");
    // The run's safe points come often; the second signal must not wait for one even so:
    // the reproduction's (between experiments) are seconds apart.
    let c = spawn(&["reproduce", "ieee1355", "--json", j.to_str().unwrap(), "-q"]);
    std::thread::sleep(Duration::from_millis(1000));
    sigint(&c);
    std::thread::sleep(Duration::from_millis(200));
    sigint(&c);
    let t = Instant::now();
    let out = c.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // Nothing was written: the process ended, it did not finish.
    assert!(!j.exists());
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

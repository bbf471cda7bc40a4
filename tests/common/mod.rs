//! Helpers shared by the integration tests.
#![allow(dead_code)]

use reef::config;
use reef::engine::result::RunResult;
use reef::engine::{Sim, Spec};
use reef::systems::{Options, Record, Report, reproduce};
use std::path::Path;
use std::process::{Command, Output};

/// BookSim2's switch allocators other than reef's greedy one (`switch.allocator`).
pub const SEPARABLE_SW_ALLOCATORS: [&str; 7] = [
    "islip",
    "separable-input-first",
    "separable-output-first",
    "wavefront",
    "rr-wavefront",
    "loa",
    "max-size",
];

/// BookSim2's separable VC allocators (`switch.vc_allocator`).
pub const SEPARABLE_VC_ALLOCATORS: [&str; 3] = ["islip", "separable-input-first", "separable-output-first"];

/// Builds a spec from config text (relative files resolve against `tests/data`).
pub fn spec(text: &str) -> Spec {
    spec_with(text, &[])
}

pub fn spec_with(text: &str, set: &[&str]) -> Spec {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    config::load_str("test.toml", text, Path::new("tests/data"), &set).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a spec to its result; panics on a simulation error.
pub fn run(spec: &Spec) -> RunResult {
    let mut sim = Sim::new(spec).unwrap();
    let out = sim.run(&mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    sim.result(&out)
}

/// Runs with events applied and components visited in reverse order.
pub fn run_reversed(spec: &Spec) -> RunResult {
    let mut sim = Sim::new(spec).unwrap();
    sim.reverse_order = true;
    let out = sim.run(&mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    sim.result(&out)
}

/// The result as JSON text (what `reef run --json` writes).
pub fn json(r: &RunResult) -> String {
    serde_json::to_string_pretty(r).unwrap()
}

/// The result as JSON without the count of events: how a run got there (trains or flit by
/// flit, the express or the general engine), not what it found.
pub fn without_events(mut r: RunResult) -> String {
    r.events = 0;
    json(&r)
}

/// Property-test cases: the number in environment variable `var` (a deeper check after a
/// change to the engine), else `default`.
pub fn cases(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// The quick reproduction of `system` with `seed`.
pub fn quick(system: &str, seed: u64) -> Report {
    reproduce(
        system,
        &Options {
            quick: true,
            seed,
            progress: false,
        },
    )
    .expect("quick reproduction")
}

/// The record of `experiment` with exactly `case` and `metric`; a panic naming it if none.
pub fn find<'a>(
    r: &'a Report,
    experiment: &str,
    case: &[(&str, serde_json::Value)],
    metric: &str,
) -> &'a Record {
    r.find(experiment, case, metric)
        .unwrap_or_else(|| panic!("no record {experiment} {case:?} {metric}"))
}

/// Runs `reef` with `args` and `--json JSON --out DIR`.
pub fn reef_writing(args: &[&str], json: &Path, dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(args)
        .arg("--json")
        .arg(json)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap()
}

/// Checks that every experiment of `spec` (name, case keys, metrics) is in `r` with exactly
/// those case keys and metrics, every case having every metric once and a finite value.
pub fn assert_record_names(r: &Report, spec: &[(&str, &[&str], &[&str])]) {
    use std::collections::BTreeSet;
    for &(experiment, keys, metrics) in spec {
        let recs = r.of(experiment);
        assert!(!recs.is_empty(), "{experiment}");
        let want_keys: BTreeSet<&str> = keys.iter().copied().collect();
        let want_metrics: BTreeSet<&str> = metrics.iter().copied().collect();
        let got_metrics: BTreeSet<&str> = recs.iter().map(|x| x.metric.as_str()).collect();
        assert_eq!(got_metrics, want_metrics, "{experiment}");
        let mut cases = BTreeSet::new();
        for x in &recs {
            let got_keys: BTreeSet<&str> = x.case.keys().map(String::as_str).collect();
            assert_eq!(got_keys, want_keys, "{experiment}: {x:?}");
            assert!(x.simulated.is_finite(), "{x:?}");
            cases.insert(serde_json::to_string(&x.case).unwrap());
        }
        // Every case has every metric, once.
        assert_eq!(recs.len(), cases.len() * metrics.len(), "{experiment}");
    }
}

/// Runs the `reef` binary: its exit code, standard output and standard error.
pub fn reef(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(args)
        .output()
        .expect("run reef");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

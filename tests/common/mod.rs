//! Helpers shared by the integration tests.
#![allow(dead_code)]

use reef::config;
use reef::engine::result::RunResult;
use reef::engine::{Sim, Spec};
use std::path::Path;

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

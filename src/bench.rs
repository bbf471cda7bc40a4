//! `reef bench`: the reference workloads (the configs in `benches/`, compiled in), each
//! timed on one thread, with flit-hops per second and, when run in a child process of its
//! own, its peak resident memory.

use crate::config;
use crate::runner;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The reference workloads: name and config text.
pub const WORKLOADS: [(&str, &str); 3] = [
    (
        "mesh8x8-uniform-0.2",
        include_str!("../benches/mesh8x8-uniform-0.2.toml"),
    ),
    (
        "mesh32x32-uniform-0.05",
        include_str!("../benches/mesh32x32-uniform-0.05.toml"),
    ),
    (
        "torus16x16-uniform-0.1",
        include_str!("../benches/torus16x16-uniform-0.1.toml"),
    ),
];

/// One workload's measurement.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchRecord {
    pub name: String,
    pub nodes: usize,
    pub flits_delivered: u64,
    /// Flit transmissions over channels, injection and ejection channels included.
    pub flit_hops: u64,
    pub events: u64,
    pub wall_s: f64,
    pub flit_hops_per_s: f64,
    pub mean_latency_cycles: f64,
    pub accepted_flits_per_node_cycle: f64,
    /// Peak resident memory of the process that ran it [MB = 10^6 bytes] (None if unknown).
    pub peak_rss_mb: Option<f64>,
    pub trains: bool,
}

/// Peak resident set size of this process [MB], from /proc (Linux).
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0 / 1e6)
}

/// Runs workload `name` in this process. `overrides` are `--set` style (e.g. `sim.trains=false`).
pub fn run_one(name: &str, overrides: &[String]) -> Result<BenchRecord, String> {
    let (_, text) = WORKLOADS.iter().find(|w| w.0 == name).ok_or_else(|| {
        format!(
            "no workload `{name}` (have: {})",
            WORKLOADS.map(|w| w.0).join(", ")
        )
    })?;
    let spec = config::load_str(&format!("benches/{name}.toml"), text, Path::new("."), overrides)
        .map_err(|e| e.to_string())?;
    let r = runner::run_spec(&spec, &mut |_| {}).map_err(|e| e.to_string())?;
    Ok(BenchRecord {
        name: name.to_string(),
        nodes: r.hosts,
        flits_delivered: r.flits_delivered,
        flit_hops: r.flit_hops,
        events: r.events,
        wall_s: r.wall_s,
        flit_hops_per_s: r.flit_hops_per_s(),
        mean_latency_cycles: r.packet_latency_cycles.mean,
        accepted_flits_per_node_cycle: r.accepted_flits_per_node_cycle,
        peak_rss_mb: peak_rss_mb(),
        trains: spec.params.trains,
    })
}

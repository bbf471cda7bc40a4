//! `reef bench`: the reference workloads (the configs in `benches/`, compiled in), each
//! timed on one thread, with flit-hops per second and, when run in a child process of its
//! own, its peak resident memory; `--scale` runs the scale workloads instead, networks far
//! larger than the caches.

use crate::config;
use crate::engine::Sim;
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

/// The scale workloads (`reef bench --scale`): networks far larger than the processor's
/// caches, to measure what a flit-hop costs as a network grows, with their peak memory.
pub const SCALE_WORKLOADS: [(&str, &str); 2] = [
    (
        "mesh256x256-uniform-0.01",
        include_str!("../benches/mesh256x256-uniform-0.01.toml"),
    ),
    (
        "fattree16x3-uniform-0.2",
        include_str!("../benches/fattree16x3-uniform-0.2.toml"),
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
    /// Runs measured (`reef bench --repeat`); `wall_s` and `flit_hops_per_s` are those of
    /// the fastest, `wall_s_median` the median wall time, `peak_rss_mb` the largest peak.
    #[serde(default = "one")]
    pub runs: u32,
    #[serde(default)]
    pub wall_s_median: Option<f64>,
    /// The processor's clock as [`clock_ghz`] read it before the runs [GHz] (None off
    /// x86-64): the speed to compare a record's Mhops/s against another day's.
    #[serde(default)]
    pub clock_ghz: Option<f64>,
    /// How the binary was built: `release`, or `profile-guided` (scripts/pgo-build.sh),
    /// which runs 0–2 % faster (docs/performance.md): compare like with like.
    #[serde(default = "release")]
    pub build: String,
    /// The instruction set the binary was compiled for ([`ISA`]; empty in records from
    /// before it was kept).
    #[serde(default)]
    pub isa: String,
    /// The engine that ran it: `express` or `general` (`RunOutcome::express`; records from
    /// before the express engine were all `general`).
    #[serde(default = "general")]
    pub engine: String,
}

fn general() -> String {
    "general".into()
}

fn release() -> String {
    "release".to_string()
}

/// How this binary was built (see [`BenchRecord::build`]): scripts/pgo-build.sh sets
/// `REEF_PGO` for its profile-guided build.
pub const BUILD: &str = match option_env!("REEF_PGO") {
    Some(_) => "profile-guided",
    None => "release",
};

/// The x86-64 level this binary was compiled for: `.cargo/config.toml` builds for the
/// processor it is built on (`target-cpu=native`), `RUSTFLAGS` may ask for another.
pub const ISA: &str = if cfg!(target_feature = "avx512f") {
    "x86-64-v4"
} else if cfg!(target_feature = "avx2") {
    "x86-64-v3"
} else if cfg!(target_feature = "sse4.2") {
    "x86-64-v2"
} else if cfg!(target_arch = "x86_64") {
    "x86-64"
} else {
    std::env::consts::ARCH
};

fn one() -> u32 {
    1
}

impl BenchRecord {
    /// Whether two runs of a workload simulated the same thing (everything but time and
    /// memory).
    pub fn same_results(&self, other: &BenchRecord) -> bool {
        (
            self.name.as_str(),
            self.nodes,
            self.flits_delivered,
            self.flit_hops,
            self.events,
        ) == (
            other.name.as_str(),
            other.nodes,
            other.flits_delivered,
            other.flit_hops,
            other.events,
        ) && self.mean_latency_cycles.to_bits() == other.mean_latency_cycles.to_bits()
            && self.accepted_flits_per_node_cycle.to_bits() == other.accepted_flits_per_node_cycle.to_bits()
    }
}

/// One record for several runs of a workload (same results, see
/// [`BenchRecord::same_results`]): the fastest run's, with the run count, the median wall
/// time (the mean of the middle two for an even count) and the largest peak memory.
pub fn summarize(mut runs: Vec<BenchRecord>) -> BenchRecord {
    assert!(!runs.is_empty(), "summarize needs at least one run");
    runs.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
    let n = runs.len();
    let median = if n % 2 == 1 {
        runs[n / 2].wall_s
    } else {
        (runs[n / 2 - 1].wall_s + runs[n / 2].wall_s) / 2.0
    };
    let peak = runs.iter().filter_map(|r| r.peak_rss_mb).reduce(f64::max);
    let mut best = runs.swap_remove(0);
    best.runs = n as u32;
    best.wall_s_median = Some(median);
    best.peak_rss_mb = peak;
    best
}

/// Peak resident set size of this process [MB], from /proc (Linux).
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0 / 1e6)
}

/// Dependent multiplies [`clock_ghz`] times in one reading.
const CLOCK_CHAIN: u64 = 100_000_000;

/// The clock the processor runs this thread at now [GHz], read from a chain of dependent
/// 64-bit multiplies (3 cycles each on every x86-64 core of the last decade, AMD and
/// Intel): the best of three readings of about 0.1 s. A virtual machine may report a
/// nominal clock (this one says 2.6 GHz) far from the one it runs at, and that one moves
/// from day to day; flit-hops per second are comparable only at like clocks. `None` off
/// x86-64.
pub fn clock_ghz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let mut x: u64 = std::hint::black_box(3);
            let t = std::time::Instant::now();
            for _ in 0..CLOCK_CHAIN / 8 {
                // SAFETY: multiplies of one register by itself: no memory or stack touched
                // (the flags they set are declared clobbered, the default).
                unsafe {
                    std::arch::asm!(
                        "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                        "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                        x = inout(reg) x,
                        options(nomem, nostack)
                    );
                }
            }
            std::hint::black_box(x);
            best = best.min(t.elapsed().as_secs_f64());
        }
        Some(3.0 * CLOCK_CHAIN as f64 / best / 1e9)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// The config text of workload `name` (a reference or a scale workload), or an error naming
/// the workloads there are.
pub fn workload(name: &str) -> Result<&'static str, String> {
    WORKLOADS
        .iter()
        .chain(&SCALE_WORKLOADS)
        .find(|w| w.0 == name)
        .map(|w| w.1)
        .ok_or_else(|| {
            format!(
                "no workload `{name}` (have: {}; with --scale: {})",
                WORKLOADS.map(|w| w.0).join(", "),
                SCALE_WORKLOADS.map(|w| w.0).join(", ")
            )
        })
}

/// Runs workload `name` in this process. `overrides` are `--set` style (e.g. `sim.trains=false`).
pub fn run_one(name: &str, overrides: &[String]) -> Result<BenchRecord, String> {
    let text = workload(name)?;
    let spec = config::load_str(&format!("benches/{name}.toml"), text, Path::new("."), overrides)
        .map_err(|e| e.to_string())?;
    let mut sim = Sim::new(&spec).map_err(|e| e.to_string())?;
    let out = sim.run(&mut |_| {}).map_err(|e| e.to_string())?;
    let engine = if out.express { "express" } else { "general" };
    let r = sim.result(&out);
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
        runs: 1,
        wall_s_median: Some(r.wall_s),
        clock_ghz: None,
        build: BUILD.to_string(),
        isa: ISA.to_string(),
        engine: engine.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(wall_s: f64, peak: Option<f64>) -> BenchRecord {
        BenchRecord {
            name: "w".into(),
            nodes: 4,
            flits_delivered: 100,
            flit_hops: 1000,
            events: 50,
            wall_s,
            flit_hops_per_s: 1000.0 / wall_s,
            mean_latency_cycles: 12.5,
            accepted_flits_per_node_cycle: 0.1,
            peak_rss_mb: peak,
            trains: true,
            runs: 1,
            wall_s_median: Some(wall_s),
            clock_ghz: None,
            build: BUILD.to_string(),
            isa: ISA.to_string(),
            engine: "express".to_string(),
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_clock_reading_is_a_processor_clock() {
        // Any x86-64 processor of the last two decades runs between 1 and 7 GHz (the
        // bounds leave room for a reading slowed by another thread); a chain the optimizer
        // had folded away would read far above that.
        let g = clock_ghz().expect("x86-64 reads its clock");
        assert!((0.5..8.0).contains(&g), "{g} GHz");
    }

    #[test]
    fn summarize_keeps_the_fastest_run_and_the_median() {
        let s = summarize(vec![rec(3.0, Some(5.0)), rec(1.0, Some(4.0)), rec(2.0, None)]);
        assert_eq!((s.runs, s.wall_s, s.wall_s_median), (3, 1.0, Some(2.0)));
        assert_eq!(s.flit_hops_per_s, 1000.0);
        assert_eq!(s.peak_rss_mb, Some(5.0));
        let s = summarize(vec![
            rec(4.0, None),
            rec(1.0, None),
            rec(2.0, None),
            rec(3.0, None),
        ]);
        assert_eq!((s.runs, s.wall_s, s.wall_s_median), (4, 1.0, Some(2.5)));
        assert_eq!(s.peak_rss_mb, None);
        let s = summarize(vec![rec(7.0, Some(1.0))]);
        assert_eq!((s.runs, s.wall_s, s.wall_s_median), (1, 7.0, Some(7.0)));
    }

    #[test]
    fn same_results_ignores_time_and_memory_only() {
        let a = rec(1.0, Some(3.0));
        assert!(a.same_results(&rec(2.0, None)));
        let mut b = rec(1.0, Some(3.0));
        b.events += 1;
        assert!(!a.same_results(&b));
        let mut b = rec(1.0, Some(3.0));
        b.mean_latency_cycles = 12.500001;
        assert!(!a.same_results(&b));
    }
}

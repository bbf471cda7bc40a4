//! What the config targets share: loading as `reef` loads, running what is small, and the
//! one failure that is a bug rather than an answer.

use reef::engine::{Sim, SimError, Spec};
use std::path::{Path, PathBuf};

/// The folder of the repository's test topologies, for `topology.file` in a config.
#[allow(dead_code)] // (topology_file writes its own folder.)
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

/// Holds every network to 64 MB: the fuzzer's own memory limit is 2 GB, and a config that
/// asks for a larger network must be refused (with the estimate), not built.
pub fn limit_memory() {
    reef::memory::set_limit(64_000_000);
}

/// Runs a loaded network, its invariants checked, if it is small and short: a run may end
/// in any answer (a deadlock, a route error) but not in a broken invariant.
pub fn run_if_small(spec: Spec) {
    let p = &spec.params;
    let slots = reef::memory::Counts::of(&spec.fabric, false).slots;
    if p.warmup.saturating_add(p.measure).saturating_add(p.drain_limit) > 2_000_000
        || spec.fabric.nodes.len() > 200
        || slots > 100_000
    {
        return;
    }
    let mut spec = spec;
    spec.params.check = true;
    if let Ok(mut sim) = Sim::new(&spec) {
        if let Err(e @ SimError::Invariant { .. }) = sim.run(&mut |_| {}) {
            panic!("{e}");
        }
    }
}

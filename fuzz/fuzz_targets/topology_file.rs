//! Arbitrary text as a topology file (docs/topology-files.md), read the way `reef run` reads
//! one: through a config naming it, so the parser, the builder, up*/down* routing and the
//! checks after them all see it. It loads or gives an error, and what loads and is small
//! runs without breaking an engine invariant.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

const CONFIG: &str = "[sim]\nwarmup = \"50 cycles\"\nmeasure = \"300 cycles\"\n\
[topology]\nkind = \"file\"\nfile = \"net.txt\"\n[traffic]\nload = 0.3\npacket_size = 4\n";

/// A folder of this process's own for the file (config files name topologies by path).
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("reef-fuzz-topology-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    common::limit_memory();
    std::fs::write(dir().join("net.txt"), data).unwrap();
    // Each routing the file can take: up*/down* (its default), minimal, adaptive minimal.
    let routing = match data.first().map_or(0, |b| b % 3) {
        0 => vec![],
        1 => vec!["routing.algorithm=\"minimal\"".to_string()],
        _ => vec![
            "routing.algorithm=\"minimal\"".to_string(),
            "routing.adaptive=true".to_string(),
        ],
    };
    if let Ok(spec) = reef::config::load_str("fuzz.toml", CONFIG, dir(), &routing) {
        common::run_if_small(spec);
    }
});

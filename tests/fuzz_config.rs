//! Bad input never panics: random overrides of a small network's config, from values at and
//! past every limit (zero, negative, huge, wrong type, wrong unit), either load or give an
//! error, and a network that loads runs, its invariants checked, to a result or an error
//! that is not a broken invariant. The table is the one a
//! fuzzing round drew from; it found spans that wrapped the clock, a source route walked
//! into an output buffer stage, a load too small for the clock and more, each now an error
//! or fixed (see `config_errors.rs` and `extensions.rs`).

use proptest::prelude::*;
use reef::config;
use reef::engine::{Sim, SimError};
use std::path::Path;

const BASE: &str = r#"
[sim]
warmup = "100 cycles"
measure = "400 cycles"
[topology]
kind = "mesh"
k = [3, 3]
[switch]
router_delay = "2 cycles"
[traffic]
load = 0.2
packet_size = 4
"#;

/// Keys and the values drawn for them.
const KEYS: &[(&str, &[&str])] = &[
    (
        "sim.clock",
        &[
            "\"1 GHz\"",
            "\"0 GHz\"",
            "\"0.3 ps\"",
            "\"1e-30 Hz\"",
            "\"abc\"",
            "5",
        ],
    ),
    (
        "sim.warmup",
        &[
            "\"0 cycles\"",
            "\"-5 cycles\"",
            "\"1e20 cycles\"",
            "\"0.5 cycles\"",
        ],
    ),
    (
        "sim.measure",
        &["\"0 cycles\"", "\"1 cycle\"", "\"1e20 cycles\"", "\"7 cycles\""],
    ),
    (
        "sim.drain_limit",
        &["\"0 cycles\"", "\"1e20 cycles\"", "\"10 cycles\""],
    ),
    ("sim.seed", &["0", "-1", "1.5", "\"a\"", "99999999999999999999"]),
    ("sim.batches", &["0", "1", "1000000"]),
    ("sim.runs", &["0", "1", "2", "1001", "-1"]),
    ("sim.watchdog", &["\"0 ns\"", "\"1 ps\"", "\"1e30 s\""]),
    ("sim.trains", &["false"]),
    ("sim.check", &["true"]),
    (
        "topology.kind",
        &[
            "\"torus\"",
            "\"ring\"",
            "\"clos\"",
            "\"fat-tree\"",
            "\"full\"",
            "\"x\"",
        ],
    ),
    (
        "topology.k",
        &[
            "[1,1]",
            "[0,4]",
            "[2]",
            "[3,3,3]",
            "4",
            "[100000,100000]",
            "[-1,2]",
        ],
    ),
    ("topology.hosts_per_switch", &["0", "3", "100000"]),
    (
        "channel.flit_time",
        &["\"0 cycles\"", "\"0.5 cycles\"", "\"1e20 cycles\"", "\"-1 ns\""],
    ),
    ("channel.rate", &["\"100 MBaud\"", "\"0 MBaud\"", "\"1 Baud\""]),
    ("channel.tail_time", &["\"0 cycles\"", "\"5 cycles\""]),
    ("channel.latency", &["\"3 cycles\"", "\"1e20 cycles\""]),
    ("channel.vcs", &["0", "2", "3", "64", "65"]),
    ("channel.buffer", &["0", "1", "100000", "1000000000", "-1"]),
    ("channel.flow_control", &["\"tokens\"", "\"none\"", "\"stop-go\""]),
    (
        "channel.credit_delay",
        &["\"0 cycles\"", "\"50 cycles\"", "\"1e20 cycles\""],
    ),
    ("channel.token_grant", &["0", "1", "1000"]),
    (
        "switch.mode",
        &["\"cut-through\"", "\"store-and-forward\"", "\"x\""],
    ),
    ("switch.router_delay", &["\"0 cycles\"", "\"1e20 cycles\""]),
    ("switch.selection", &["\"random\"", "\"least-occupied\""]),
    ("switch.speedup", &["0", "2"]),
    ("switch.output_buffer", &["1", "32", "0", "1048577", "3000000000"]),
    (
        "routing.algorithm",
        &[
            "\"clos\"",
            "\"updown\"",
            "\"minimal\"",
            "\"source\"",
            "\"mosaic\"",
            "\"interval\"",
        ],
    ),
    ("routing.dateline", &["true", "false"]),
    ("routing.root", &["5", "100000"]),
    (
        "routing.route",
        &[
            "[{src=0,dst=5,ports=[1,0,2]}]",
            "[{src=0,dst=1,ports=[]}]",
            "[{src=0,dst=100,ports=[1]}]",
        ],
    ),
    (
        "traffic.pattern",
        &[
            "\"transpose\"",
            "\"tornado\"",
            "\"hot-spot\"",
            "\"pairs\"",
            "\"none\"",
        ],
    ),
    ("traffic.hot_fraction", &["0", "1.5", "-0.1", "0.1"]),
    (
        "traffic.injection",
        &["\"poisson\"", "\"periodic\"", "\"on-off\"", "\"backlogged\""],
    ),
    (
        "traffic.load",
        &["0", "1", "5", "-0.1", "\"5 MB/s\"", "\"1e30 GB/s\"", "1e-300"],
    ),
    ("traffic.on", &["\"0 cycles\"", "\"1e20 cycles\""]),
    ("traffic.packet_size", &["0", "1", "65", "100000000"]),
    (
        "traffic.sizes",
        &["[[4,0.8],[32,0.2]]", "[[4,0]]", "[]", "[[0,1]]"],
    ),
    ("traffic.flit_bytes", &["0", "100000"]),
    ("host.send_per_byte", &["\"1 ns\"", "\"300 s\"", "\"1e20 s\""]),
    ("host.recv_overhead", &["\"5 ns\"", "\"1e20 s\""]),
    ("host.credit_return", &["\"2 cycles\"", "\"1e20 s\"", "\"-1 ns\""]),
    ("switch.flit_delay", &["\"1 cycles\"", "\"1e20 s\"", "3"]),
    ("switch.internal_speedup", &["2", "1", "0", "7"]),
    ("switch.output_speedup", &["2", "1", "0", "17", "3"]),
];

fn overrides() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec((0..KEYS.len(), any::<prop::sample::Index>()), 1..4).prop_map(|picks| {
        picks
            .into_iter()
            .map(|(k, v)| {
                let (key, values) = KEYS[k];
                format!("{key}={}", values[v.index(values.len())])
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn overrides_load_or_fail_cleanly_and_runs_end(set in overrides()) {
        let Ok(spec) = config::load_str("fuzz.toml", BASE, Path::new("tests/data"), &set) else {
            return Ok(());
        };
        // Run what loads, unless it is long or large (legal, but slow to run or to lay out).
        let p = &spec.params;
        let slots = reef::memory::Counts::of(&spec.fabric, false).slots;
        if p.warmup + p.measure + p.drain_limit > 20_000_000
            || spec.fabric.nodes.len() > 2_000
            || slots > 1_000_000
        {
            return Ok(());
        }
        // Every run checks the engine's invariants: a broken one is a bug, never an error
        // this test may pass over. Other errors (a route missing at run time) are answers.
        let mut spec = spec;
        spec.params.check = true;
        if let Ok(mut sim) = Sim::new(&spec) {
            let r = sim.run(&mut |_| {});
            prop_assert!(
                !matches!(r, Err(SimError::Invariant { .. })),
                "{set:?}: {}",
                r.err().unwrap()
            );
        }
    }
}

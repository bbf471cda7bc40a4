//! The command line as a user meets it: the README's commands, exit codes, JSON and CSV.

mod common;
use common::reef;

use std::path::PathBuf;
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reef-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn run_prints_a_summary_and_writes_json() {
    let j = tmp("run.json");
    let (code, out, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "sim.measure=\"5000 cycles\"",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("packet latency") && out.contains("network latency") && out.contains("accepted"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    for k in [
        "accepted_flits_per_node_cycle",
        "packet_latency_cycles",
        "network_latency_cycles",
        "channel_utilization",
        "saturated",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["hosts"], 64);
}

/// `sim.runs = 3` is the config run at seeds s, s + 1, s + 2, each as `--seed` runs it,
/// and the means over them.
#[test]
fn runs_are_the_config_at_successive_seeds_and_their_means() {
    let window = "sim.measure=\"3000 cycles\"";
    let three = |jobs: &str, j: &PathBuf| {
        reef(&[
            "run",
            "examples/mesh8x8.toml",
            "--set",
            window,
            "--runs",
            "3",
            "--seed",
            "7",
            "--jobs",
            jobs,
            "--json",
            j.to_str().unwrap(),
        ])
    };
    let j = tmp("runs.json");
    let (code, out, err) = three("2", &j);
    assert_eq!(code, 0, "{err}");
    // Run one at a time, the same, byte for byte.
    let j1 = tmp("runs-jobs1.json");
    let (code, _, err) = three("1", &j1);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&j).unwrap(), std::fs::read(&j1).unwrap());
    // Alone, --jobs is said to change nothing.
    let (code, _, err) = reef(&["run", "examples/mesh8x8.toml", "--set", window, "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("--jobs sets how many of several runs"), "{err}");
    assert!(
        out.contains("3 runs, seeds 7 to 9") && out.contains("mean over the 3 runs,"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!((v["runs"].as_u64(), v["runs_asked"].as_u64()), (Some(3), Some(3)));
    let mut lat = Vec::new();
    for (k, seed) in [7u64, 8, 9].into_iter().enumerate() {
        let one = tmp(&format!("run-seed{seed}.json"));
        let (code, _, err) = reef(&[
            "run",
            "examples/mesh8x8.toml",
            "--set",
            window,
            "--seed",
            &seed.to_string(),
            "--json",
            one.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let w: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
        let r = &v["results"][k];
        assert_eq!(r["seed"].as_u64(), Some(seed));
        for key in [
            "packet_latency_cycles",
            "network_latency_cycles",
            "accepted_flits_per_node_cycle",
            "flit_hops",
            "events",
        ] {
            assert_eq!(r[key], w[key], "seed {seed}: {key}");
        }
        lat.push(w["packet_latency_cycles"]["mean"].as_f64().unwrap());
    }
    let mean = lat.iter().sum::<f64>() / 3.0;
    let got = &v["packet_latency_cycles"];
    assert_eq!(got["mean"].as_f64(), Some(mean));
    let lo = lat.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(got["min"].as_f64(), Some(lo));
    assert!(got["ci95"].as_f64().unwrap() > 0.0);
    // One run draws; several do not, and a sweep runs each load once.
    let (code, _, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "sim.runs=2",
        "--svg",
        "x.svg",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--svg draws one run") && err.contains("sim.runs=1"),
        "{err}"
    );
    let (code, _, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.2:0.1",
        "--set",
        "sim.runs=2",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("a sweep runs each load once") && err.contains("--set sim.runs=1"),
        "{err}"
    );
}

#[test]
fn run_plots_the_latency_distributions_and_the_channel_map() {
    let (j, s, m) = (tmp("dist.json"), tmp("dist.svg"), tmp("map.svg"));
    let (code, _, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "sim.measure=\"5000 cycles\"",
        "--json",
        j.to_str().unwrap(),
        "--svg",
        s.to_str().unwrap(),
        "--map",
        m.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The map: the 8×8 mesh's 224 switch-to-switch channels.
    let map = std::fs::read_to_string(&m).unwrap();
    assert_eq!(map.matches("<polyline").count(), 224);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let delivered = v["delivered_measured_packets"].as_u64().unwrap();
    assert!(delivered > 1000);
    let (mut widths, mut last) = (Vec::new(), Vec::new());
    for (h, lat) in [
        ("packet_latency_histogram", "packet_latency_cycles"),
        ("network_latency_histogram", "network_latency_cycles"),
    ] {
        let counts: Vec<u64> = v[h]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        let w = v[h]["bin_cycles"].as_f64().unwrap();
        // Every delivered measured packet in a bin; the last bin holds the largest latency.
        assert_eq!(counts.iter().sum::<u64>(), delivered, "{h}");
        let max = v[lat]["max"].as_f64().unwrap();
        assert!(*counts.last().unwrap() > 0, "{h}");
        assert!(
            (counts.len() - 1) as f64 * w <= max && max <= counts.len() as f64 * w,
            "{h}: {max}"
        );
        widths.push(w);
        last.push(counts.len());
    }
    // Each in bins of its own, about 100 of them up to its largest latency (issue 31: the
    // network latency in the packet latency's bins collapsed to one dot at load 0.3).
    assert!(last.iter().all(|n| (40..=101).contains(n)), "{last:?} {widths:?}");
    let svg = std::fs::read_to_string(&s).unwrap();
    assert!(svg.contains("<svg") && svg.contains("network latency"), "{svg}");
    // Issue 31: ticks print as numbers (`1000`, not `1000.0`).
    let labels: Vec<&str> = svg
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(str::trim)
        .collect();
    assert!(labels.iter().any(|l| l.parse::<u64>().is_ok()), "{labels:?}");
    assert!(!labels.iter().any(|l| l.ends_with(".0")), "{labels:?}");

    // No measured packet delivered (a deadlock before the window): no empty plot.
    let e = tmp("empty.svg");
    let (code, _, err) = reef(&[
        "run",
        "examples/torus16x16.toml",
        "--set",
        "channel.vcs=1",
        "--set",
        "routing.dateline=false",
        "--set",
        "traffic.load=0.5",
        "--svg",
        e.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no latency plot") && !e.exists(), "{err}");

    // A folded Clos is drawn as matrices, terminal by centre switch.
    let (code, _, err) = reef(&[
        "run",
        "examples/macrame-clos256.toml",
        "--set",
        "sim.measure=\"20 us\"",
        "-q",
        "--map",
        m.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let map = std::fs::read_to_string(&m).unwrap();
    assert!(map.contains("the 16 terminal switches; columns: the 8 centre switches"));
    // A network without a plane layout (a 3-D mesh) is refused before it runs.
    let (code, out, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "topology.k=[4, 4, 4]",
        "--map",
        m.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("--map") && out.is_empty(), "{err}");
}

#[test]
fn no_packets_no_latency() {
    // A window too short for any packet: the summary says so instead of printing zeros that
    // read as latencies, and the CSV leaves the latency fields empty.
    let c = tmp("none.csv");
    let set = [
        "--set",
        "sim.measure=\"1 cycle\"",
        "--set",
        "traffic.load=0.001",
        "--set",
        "traffic.packet_size=1",
    ];
    let (code, out, err) = reef(&[&["run", "examples/mesh8x8.toml", "-q"][..], &set[..]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("latency   none: no measured packet was delivered"),
        "{out}"
    );
    assert!(!out.contains("packet latency"), "{out}");
    let args = [
        &[
            "sweep",
            "examples/mesh8x8.toml",
            "--load",
            "0.001:0.001:0.1",
            "-q",
            "--csv",
        ][..],
        &[c.to_str().unwrap()][..],
        &set[..2],
        &set[4..],
    ]
    .concat();
    let (code, out, err) = reef(&args);
    assert_eq!(code, 0, "{err}");
    let row = std::fs::read_to_string(&c)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    assert!(row.contains(",,,,,,,"), "{row}\n{out}");
}

#[test]
fn same_seed_same_json_from_the_cli() {
    let (a, b) = (tmp("a.json"), tmp("b.json"));
    for f in [&a, &b] {
        let (code, _, err) = reef(&[
            "run",
            "examples/mesh8x8.toml",
            "--set",
            "sim.measure=\"3000 cycles\"",
            "--seed",
            "5",
            "--json",
            f.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // Two seeds are an error, not a silent choice of one.
    let (code, _, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--seed",
        "1",
        "--set",
        "sim.seed=5",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("give the seed once"), "{err}");
}

/// `reproduce --seed` took up to 2^64 − 1 while `run` and `sweep` (whose seed can come from
/// TOML, an i64) stopped at 2^63 − 1: every command now takes 0 to 2^63 − 1 and names the
/// range when a seed is outside it.
#[test]
fn every_command_takes_seeds_up_to_the_largest_toml_integer() {
    let max = "9223372036854775807";
    let measure = ["--set", "sim.measure=\"500 cycles\"", "-q"];
    let commands: [&[&str]; 3] = [
        &["run", "examples/mesh8x8.toml"],
        &["sweep", "examples/mesh8x8.toml", "--load", "0.1:0.1:0.1"],
        &["reproduce", "ieee1355"],
    ];
    for cmd in commands {
        for bad in ["9223372036854775808", "18446744073709551615", "-1"] {
            let (code, out, err) = reef(&[cmd, &["--seed", bad]].concat());
            assert_eq!(code, 1, "{cmd:?} --seed {bad}: {out}{err}");
            assert!(
                err.contains("a seed is a whole number from 0 to 2^63 - 1 (9223372036854775807"),
                "{cmd:?} --seed {bad}: {err}"
            );
        }
    }
    // The largest is taken everywhere, and runs.
    let (code, out, err) = reef(&[commands[0], &["--seed", max], &measure[..]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("seed {max}")), "{out}");
    let (code, out, err) = reef(&[commands[1], &["--seed", max], &measure[..]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.trim_start().starts_with("0.100")), "{out}");
    // (A whole reproduction is too long here: an unknown system shows the seed was taken.)
    let (code, _, err) = reef(&["reproduce", "nosuch", "--seed", max]);
    assert_eq!(code, 1);
    assert!(err.contains("no reproduction for `nosuch`"), "{err}");
    // The same range in a config: the largest is the largest TOML integer.
    let (code, out, err) = reef(
        &[
            &["run", "examples/mesh8x8.toml", "--set"][..],
            &[&format!("sim.seed={max}")],
            &measure[..],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("seed {max}")), "{out}");
}

#[test]
fn check_exit_codes() {
    let (code, out, _) = reef(&["check", "examples/torus16x16.toml"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("deadlock-free") && out.contains("engine: express (dimension order)"),
        "{out}"
    );
    // With the invariant checks the express engine still runs it, in its checking build.
    let (code, out, _) = reef(&["check", "examples/torus16x16.toml", "--set", "sim.check=true"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("engine: express (dimension order), with its invariant checks compiled in"),
        "{out}"
    );
    let (code, out, _) = reef(&[
        "check",
        "examples/torus16x16.toml",
        "--set",
        "channel.vcs=1",
        "--set",
        "routing.dateline=false",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("DEADLOCK POSSIBLE")
            && out.contains("s15:0→s0:1")
            && out.contains("engine: general, because of a torus without datelines"),
        "{out}"
    );
}

/// The torus example without its dateline VCs: it deadlocks at load 0.5.
const DEADLOCKING_TORUS: [&str; 5] = [
    "examples/torus16x16.toml",
    "--set",
    "channel.vcs=1",
    "--set",
    "routing.dateline=false",
];

#[test]
fn a_deadlocked_run_exits_2_and_names_the_cycle() {
    let (code, out, err) = reef(
        &[
            &["run"],
            &DEADLOCKING_TORUS[..],
            &["--set", "traffic.load=0.5", "-q"],
        ]
        .concat(),
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("DEADLOCK") && out.contains("→"), "{out}");
    assert!(
        err.contains("warning: the routing has a cyclic channel dependency"),
        "{err}"
    );
    // A sweep that meets the deadlock says so, with the cycle, and exits 2 as a run does
    // (it exited 0 with a DEADLOCK row only).
    let (code, out, err) = reef(
        &[
            &["sweep"],
            &DEADLOCKING_TORUS[..],
            &[
                "--set",
                "sim.measure=\"5000 cycles\"",
                "--load",
                "0.5:0.5:0.1",
                "-q",
            ],
        ]
        .concat(),
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("DEADLOCK at load 0.5") && out.contains("→"), "{out}");
}

#[test]
fn bad_config_exits_1_with_file_and_line() {
    let p = tmp("bad.toml");
    std::fs::write(
        &p,
        "[topology]\nkind = \"mesh\"\nk = [4, 4]\n[traffic]\nlaod = 0.1\n",
    )
    .unwrap();
    let (code, _, err) = reef(&["run", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.toml:5: traffic.laod") && err.contains("did you mean `load`"),
        "{err}"
    );
    let (code, _, err) = reef(&["run", "no/such/file.toml"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read"), "{err}");
    // A usage error is bad input too: 1, not clap's 2 (reef's "deadlock detected").
    let (code, _, err) = reef(&["run", "examples/mesh8x8.toml", "--bogus"]);
    assert_eq!(code, 1, "{err}");
    // An output that could not be written is refused before the run, not after it.
    let file = p.to_str().unwrap();
    let under = format!("{file}/out.json");
    for args in [
        vec!["run", "examples/mesh8x8.toml", "--json", under.as_str()],
        vec![
            "sweep",
            "examples/mesh8x8.toml",
            "--load",
            "0.1:0.1:0.1",
            "--csv",
            "examples",
        ],
        vec!["reproduce", "atm", "--quick", "--out", file],
    ] {
        let t = std::time::Instant::now();
        let (code, out, err) = reef(&args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(
            err.contains("is not a directory") || err.contains("is a directory") || err.contains("is a file"),
            "{args:?}: {err}"
        );
        assert!(
            out.is_empty() && t.elapsed().as_secs() < 2,
            "{args:?} ran first: {out}"
        );
    }
}

#[test]
fn sweep_writes_csv_and_json() {
    let (c, j, s) = (tmp("sweep.csv"), tmp("sweep.json"), tmp("sweep.svg"));
    let (code, out, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.3:0.1",
        "--set",
        "sim.measure=\"3000 cycles\"",
        "--csv",
        c.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
        "--svg",
        s.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("saturation throughput"), "{out}");
    let csv = std::fs::read_to_string(&c).unwrap();
    assert!(csv.starts_with("load,offered,accepted"));
    assert!(csv.lines().count() >= 3, "{csv}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert!(v["saturation_throughput"].as_f64().unwrap() > 0.15);
    assert!(std::fs::read_to_string(&s).unwrap().contains("<svg"));
    // Backlogged sources offer no load: a sweep of them is refused (it ran every point the
    // same and reported NaN offered loads once). Nor does a network where no host sends.
    for (set, refusal) in [
        ("traffic.injection=\"backlogged\"", "offers no load to sweep"),
        ("traffic.pattern=\"none\"", "no load to sweep"),
    ] {
        let (code, _, err) = reef(&[
            "sweep",
            "examples/mesh8x8.toml",
            "--load",
            "0.1:0.3:0.1",
            "--set",
            set,
            "-q",
        ]);
        assert_eq!(code, 1, "{set}: {err}");
        assert!(err.contains(refusal), "{set}: {err}");
    }
    // Nor does a batch, whose sources make a packet a cycle.
    let (code, _, err) = reef(&[
        "sweep",
        "tests/data/booksim/examples/torus88",
        "sim_type=batch",
        "--load",
        "0.1:0.3:0.1",
        "-q",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("run a batch with `reef run`"), "{err}");
    // The points end at the first saturated one, however many run at a time (with more
    // jobs than points before it, the loads beyond it were reported too).
    let csv_with = |jobs: &str| {
        let c = tmp(&format!("sweep-jobs{jobs}.csv"));
        let (code, _, err) = reef(&[
            "sweep",
            "examples/mesh8x8.toml",
            "--load",
            "0.1:0.5:0.1",
            "--set",
            "sim.measure=\"3000 cycles\"",
            "--jobs",
            jobs,
            "--csv",
            c.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&c).unwrap()
    };
    let one = csv_with("1");
    assert_eq!(one, csv_with("4"));
    let rows: Vec<&str> = one.lines().skip(1).collect();
    let saturated: Vec<bool> = rows.iter().map(|r| r.ends_with("true")).collect();
    assert!(
        rows.len() < 5 && saturated.iter().rposition(|&s| !s) == Some(rows.len() - 2),
        "{one}"
    );
    // A swept load the config cannot take is blamed on --load, the option that gave it.
    let (code, _, err) = reef(&["sweep", "examples/mesh8x8.toml", "--load", "20:30:5", "-q"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("traffic.load") && err.contains("(from --load)") && !err.contains("--set"),
        "{err}"
    );
}

#[test]
fn bench_json_has_the_promised_fields() {
    let j = tmp("bench.json");
    let (code, out, err) = reef(&[
        "bench",
        "--only",
        "mesh8x8-uniform-0.2",
        "--repeat",
        "2",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("mesh8x8-uniform-0.2") && out.contains("median"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let r = &v[0];
    for k in [
        "name",
        "nodes",
        "flits_delivered",
        "flit_hops",
        "wall_s",
        "flit_hops_per_s",
        "mean_latency_cycles",
        "accepted_flits_per_node_cycle",
        "peak_rss_mb",
    ] {
        assert!(r.get(k).is_some(), "missing {k}");
    }
    assert_eq!(r["nodes"], 64);
    assert!((r["accepted_flits_per_node_cycle"].as_f64().unwrap() - 0.2).abs() < 0.01);
    // Two runs, the fastest reported, the median no faster.
    assert_eq!(r["runs"], 2);
    assert!(r["wall_s"].as_f64().unwrap() <= r["wall_s_median"].as_f64().unwrap());
    // The clock the runs met, to compare with other days' records.
    if cfg!(target_arch = "x86_64") {
        assert!(r["clock_ghz"].as_f64().is_some_and(|g| g > 0.5));
    }
    // How the binary was built: tests build a plain release binary, for some x86-64 level
    // on x86-64.
    assert_eq!(r["build"], "release");
    if cfg!(target_arch = "x86_64") {
        assert!(
            r["isa"].as_str().is_some_and(|s| s.starts_with("x86-64")),
            "{}",
            r["isa"]
        );
    }
    // The reference workloads run on the express engine; `--general` runs the general
    // one, with the same results.
    assert_eq!(r["engine"], "express");
    let (code, out, err) = reef(&[
        "bench",
        "--only",
        "mesh8x8-uniform-0.2",
        "--general",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("general"), "{out}");
    let g: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(g[0]["engine"], "general");
    for k in ["flit_hops", "flits_delivered", "mean_latency_cycles"] {
        assert_eq!(g[0][k], r[k], "{k}");
    }
}

/// Where the system will not give the express engine's records their address space (here
/// `ulimit -v`, as on a machine that does not overcommit), a run goes on the general
/// engine, to the same results.
#[cfg(target_os = "linux")]
#[test]
fn without_the_address_space_runs_go_on_the_general_engine() {
    let run = |limit: &str, name: &str| {
        let j = tmp(name);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{limit}exec \"$0\" bench --only mesh8x8-uniform-0.2 --in-process --json \"$1\""
            ))
            .arg(env!("CARGO_BIN_EXE_reef"))
            .arg(&j)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        v[0].clone()
    };
    let free = run("", "space-free.json");
    // 4 GB of address space: enough for the run, not for a record array of 2^32 ids.
    let tight = run("ulimit -v 4000000 && ", "space-tight.json");
    assert_eq!(free["engine"], "express");
    assert_eq!(tight["engine"], "general");
    for k in ["flit_hops", "flits_delivered", "mean_latency_cycles"] {
        assert_eq!(tight[k], free[k], "{k}");
    }
    // `reef check` says so beforehand.
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$0\" check examples/mesh8x8.toml")
        .arg(env!("CARGO_BIN_EXE_reef"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains("engine: general, because the system will not reserve"),
        "{out}"
    );
}

#[test]
fn help_explains() {
    let (code, out, _) = reef(&["--help"]);
    assert_eq!(code, 0);
    for w in ["run", "sweep", "check", "bench", "Exit status"] {
        assert!(out.contains(w), "{out}");
    }
    let (_, out, _) = reef(&["run", "--help"]);
    assert!(out.contains("--set") && out.contains("--json") && out.contains("--seed"));
    // Every system `reproduce` knows is named in its help.
    let (_, out, _) = reef(&["reproduce", "--help"]);
    for s in reef::systems::SYSTEMS {
        assert!(out.contains(s), "{s} missing from\n{out}");
    }
    // It points to what a user has (the README, the papers), not to the developers' tree.
    assert!(!out.contains("shared/") && out.contains("README.md"), "{out}");
    for paper in [
        "Traw & Smith, 1992",
        "USC/ISI, 1992",
        "Zhu et al., CERN, 1998",
        "Mannheim, 2005",
    ] {
        assert!(out.contains(paper), "{paper} missing from\n{out}");
    }
    let (_, out, _) = reef(&["--help"]);
    assert!(!out.contains("shared/"), "{out}");
}

#[test]
fn examples_are_the_bench_networks() {
    for (ex, b) in [
        ("mesh8x8", "mesh8x8-uniform-0.2"),
        ("mesh32x32", "mesh32x32-uniform-0.05"),
        ("torus16x16", "torus16x16-uniform-0.1"),
    ] {
        let e = reef::config::load(std::path::Path::new(&format!("examples/{ex}.toml")), &[]).unwrap();
        let w = reef::bench::WORKLOADS.iter().find(|w| w.0 == b).unwrap();
        let s = reef::config::load_str("bench.toml", w.1, std::path::Path::new("."), &[]).unwrap();
        assert_eq!(format!("{:?}", e.params), format!("{:?}", s.params), "{ex}");
        assert_eq!(format!("{:?}", e.workload), format!("{:?}", s.workload), "{ex}");
        assert_eq!(
            format!("{:?}", e.fabric.channels),
            format!("{:?}", s.fabric.channels),
            "{ex}"
        );
        assert_eq!(e.fabric.switch_params, s.fabric.switch_params, "{ex}");
        assert_eq!(e.routing.name(), s.routing.name());
    }
}

/// On a network of many thousand hosts `reef run` does not spend longer on the static check
/// (hosts × channels steps) than on the run: it says it leaves it to `reef check`.
#[test]
fn a_large_run_leaves_the_static_check_to_reef_check() {
    let short = [
        "--set",
        "sim.warmup=\"50 cycles\"",
        "--set",
        "sim.measure=\"100 cycles\"",
        "-q",
    ];
    let mut args = vec!["run", "examples/mesh8x8.toml", "--set", "topology.k=112"];
    args.extend(short);
    let (code, out, err) = reef(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("12544 hosts") && err.contains("left to `reef check`"),
        "{err}"
    );
    assert!(out.contains("accepted"), "{out}");
    let mut args = vec!["run", "examples/mesh32x32.toml"];
    args.extend(short);
    let (code, _, err) = reef(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("left to"), "{err}");
}

#[test]
#[cfg(unix)]
fn output_into_a_closed_pipe_ends_quietly() {
    // `reef routes … | head -1`: the reader goes away after one line. reef panicked
    // ("failed printing to stdout"); it now ends as other tools do, by SIGPIPE.
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(["routes", "examples/mesh32x32.toml", "--max-pairs", "100000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run reef");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("mesh32x32"), "{first}");
    // The read half is dropped here: the pipe is closed.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}

/// Issue 31: outputs are checked before the work: a place where no file can be created, and
/// two options naming one file, are refused at once; a file is written whole (atomically),
/// with no temporary file left beside it.
#[test]
fn r31_outputs_are_checked_first_and_written_whole() {
    let t = std::time::Instant::now();
    #[cfg(target_os = "linux")]
    {
        let (code, out, err) = reef(&["reproduce", "atm", "--json", "/proc/x.json"]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains("--json /proc/x.json: cannot be written"), "{err}");
        assert!(out.is_empty());
    }
    let f = tmp("same.out");
    let same = format!(
        "{}/../{}/same.out",
        f.parent().unwrap().display(),
        f.parent().unwrap().file_name().unwrap().to_str().unwrap()
    );
    for args in [
        vec![
            "run",
            "examples/mesh8x8.toml",
            "--json",
            f.to_str().unwrap(),
            "--svg",
            same.as_str(),
        ],
        vec![
            "sweep",
            "examples/mesh8x8.toml",
            "--load",
            "0.1:0.1:0.1",
            "--csv",
            f.to_str().unwrap(),
            "--json",
            f.to_str().unwrap(),
        ],
    ] {
        let (code, out, err) = reef(&args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains("name the same file"), "{args:?}: {err}");
        assert!(out.is_empty() && !f.exists(), "{args:?}");
    }
    assert!(t.elapsed().as_secs() < 3, "{:?}", t.elapsed());
    // Written whole, replacing the old file, and nothing else left in the directory.
    let d = tmp("whole");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let j = d.join("r.json");
    std::fs::write(&j, "old").unwrap();
    let (code, _, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "sim.measure=\"500 cycles\"",
        "-q",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

/// Issue 31: `--jobs 0` is refused; more jobs than cores run as many as the cores, and say so.
#[test]
fn r31_jobs() {
    let (code, _, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.1:0.1",
        "--jobs",
        "0",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("a whole number from 1"), "{err}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = (cores + 5).to_string();
    let (code, _, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.1:0.1",
        "--set",
        "sim.measure=\"500 cycles\"",
        "--jobs",
        &many,
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("running {cores} points at a time")),
        "{err}"
    );
}

/// Issue 31: names say what was run, control characters escaped; times in cycles.
#[test]
fn r31_names_and_units_tell_the_truth() {
    let (code, out, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "traffic.load=0.3",
        "--set",
        "sim.measure=\"500 cycles\"",
        "--set",
        // (A TOML escape: the name holds the terminal's "red" sequence.)
        "name=\"a\\u001b[31mred\"",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("a\\u{1b}[31mred (traffic.load=0.3, sim.measure=\"500 cycles\", name="),
        "{first}"
    );
    assert!(!out.contains('\u{1b}'), "{out}");
    // A deadlock is dated in cycles, as the config counts, the time beside it; a sweep whose
    // first point deadlocks before its window has offered nothing, not NaN.
    let (code, out, _) = reef(
        &[
            &["run"],
            &DEADLOCKING_TORUS[..],
            &["--set", "traffic.load=0.5", "-q"],
        ]
        .concat(),
    );
    assert_eq!(code, 2);
    let line = out.lines().find(|l| l.contains("DEADLOCK at")).unwrap();
    assert!(line.contains(" cycles (") && line.contains(" ns)"), "{line}");
    let (code, out, _) = reef(
        &[
            &["sweep"],
            &DEADLOCKING_TORUS[..],
            &[
                "--set",
                "sim.warmup=\"100000 cycles\"",
                "--load",
                "0.9:0.9:0.1",
                "-q",
            ],
        ]
        .concat(),
    );
    assert_eq!(code, 2, "{out}");
    assert!(!out.contains("NaN") && out.contains("DEADLOCK"), "{out}");
    // And the saturation reason of a run that does not drain counts cycles.
    let (_, out, _) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "traffic.load=0.9",
        "--set",
        "sim.measure=\"2000 cycles\"",
        "--set",
        "sim.drain_limit=\"100 cycles\"",
        "-q",
    ]);
    let sat = out
        .lines()
        .find(|l| l.contains("SATURATED"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(sat.contains("100 cycles (100.000 ns) after the window"), "{sat}");
}

/// Issue 31: `reef check` said 1024 switch-to-switch channels for the 16×16 torus where
/// `reef run` said 1536 channels; both now give every channel, check with its breakdown.
#[test]
fn r31_check_and_run_count_the_same_channels() {
    let (code, out, err) = reef(&["check", "examples/torus16x16.toml"]);
    assert_eq!(code, 0, "{err}");
    // 16×16 torus: 4 channels out of each switch, and one each way per host.
    let (links, host) = (256 * 4, 2 * 256);
    let want = format!(
        "{} channels ({links} switch-to-switch, {host} to or from hosts)",
        links + host
    );
    assert!(out.lines().next().unwrap().contains(&want), "{out}");
    let (code, out, err) = reef(&[
        "run",
        "examples/torus16x16.toml",
        "--set",
        "sim.measure=\"200 cycles\"",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .contains(&format!(", {} channels,", links + host)),
        "{out}"
    );
}

/// Issue 31: a reproduction's table prints counts as integers, yes/no as yes/no, no empty
/// unit brackets, figures from random traffic to their confidence interval's digits, and
/// its CSVs carry values to six significant digits at most.
#[test]
fn r31_reproduction_tables_print_what_the_figures_mean() {
    let d = tmp("atomic-out");
    let (code, out, err) = reef(&[
        "reproduce",
        "atomic",
        "--quick",
        "-q",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("[]"), "{out}");
    // The simulated figure of a metric's first row (after its unit, if it has one).
    let value = |metric: &str| {
        let w: Vec<&str> = out
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.contains(&metric))
            .unwrap_or_else(|| panic!("{metric}: {out}"));
        let i = w.iter().position(|x| *x == metric).unwrap() + 1;
        let i = if w[i].starts_with('[') { i + 1 } else { i };
        w[i].to_string()
    };
    assert_eq!(value("map_correct"), "yes");
    assert_eq!(value("deadlock_free"), "yes");
    // A count: whole, with no decimals.
    let lost = value("packets_lost");
    assert!(lost.parse::<u64>().is_ok(), "{lost}");
    // A figure from random traffic: its 95 % half-width beside it, in a column of its own,
    // both to the decimals the half-width allows.
    let row = out
        .lines()
        .find(|l| l.contains("random_bisection_fraction"))
        .unwrap_or_else(|| panic!("{out}"));
    let head = out[..out.find(row).unwrap()]
        .lines()
        .rev()
        .find(|l| l.starts_with("case"))
        .unwrap();
    assert!(head.contains("±95%"), "{head}");
    let w: Vec<&str> = row.split_whitespace().collect();
    let i = w.iter().position(|x| *x == "random_bisection_fraction").unwrap() + 1;
    let (v, ci) = (w[i], w[i + 1]);
    let ci_f: f64 = ci.parse().unwrap_or_else(|_| panic!("{row}"));
    let decimals = |t: &str| t.split_once('.').map_or(0, |x| x.1.len());
    assert!(ci_f > 0.0 && decimals(v) == decimals(ci), "{row}");
    // (The printed half-width is rounded: 0.0298 prints as 0.030, whose own place is 0.01.)
    let place = reef::systems::ci_decimals(ci_f).max(0);
    assert!([place, place + 1].contains(&(decimals(ci) as i32)), "{row}");
    for f in std::fs::read_dir(&d).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "csv") {
            for field in std::fs::read_to_string(&p).unwrap().split([',', '\n']) {
                if let Ok(x) = field.parse::<f64>() {
                    let digits = field
                        .split(['e', 'E'])
                        .next()
                        .unwrap()
                        .chars()
                        .filter(char::is_ascii_digit)
                        .collect::<String>();
                    let sig = digits.trim_start_matches('0').len();
                    assert!(sig <= 6 || x.fract() == 0.0, "{}: {field}", p.display());
                }
            }
        }
    }
}

#[test]
fn a_sweep_runs_no_load_past_the_first_that_saturates() {
    // Loads 0.1 to 0.9 on the 8×8 mesh, which saturates near 0.21: points are started in
    // load order and none after the first saturated one, so 0.3 is the last, on one job or
    // two (where 0.4 may start beside 0.3, but is dropped and not reported).
    for jobs in ["1", "2"] {
        let j = tmp(&format!("sweep-past-{jobs}.json"));
        let (code, _, err) = reef(&[
            "sweep",
            "examples/mesh8x8.toml",
            "--load",
            "0.1:0.9:0.1",
            "--set",
            "sim.measure=\"3000 cycles\"",
            "--jobs",
            jobs,
            "--json",
            j.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        let points = v["points"].as_array().unwrap();
        let loads: Vec<f64> = points.iter().map(|p| p["load"].as_f64().unwrap()).collect();
        assert_eq!(loads, [0.1, 0.2, 0.3], "jobs {jobs}: {loads:?}");
        assert!(
            points[2]["result"]["saturated"].as_bool().unwrap(),
            "{}",
            points[2]
        );
        assert!(
            !points[1]["result"]["saturated"].as_bool().unwrap(),
            "{}",
            points[1]
        );
    }
}

//! BookSim2 configs as a BookSim2 user brings them: BookSim2's own examples
//! (`tests/data/booksim/examples`, copied from booksim/booksim2 at 28f43299 with their
//! licence), command-line overrides, `reef convert`, the errors, and the zero-load latency
//! of BookSim2's router pipeline.

mod common;
use common::*;
use proptest::prelude::*;
use reef::config;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "tests/data/booksim/examples";

fn example(name: &str) -> PathBuf {
    Path::new(EXAMPLES).join(name)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reef-booksim-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn every_booksim_example_runs() {
    /// What a BookSim2 example does in reef.
    #[derive(Debug)]
    enum Want {
        /// Runs, stable.
        Runs,
        /// Runs, and is unstable, as BookSim2 calls it too (`reference.csv`).
        Unstable,
    }
    let cases = [
        ("torus88", Want::Runs),
        ("mesh88_lat", Want::Runs),
        ("anynet/anynet_config", Want::Runs),
        // A 10×10 router offered a flit a cycle a node, far past saturation: unstable after
        // its first 100,000-cycle sample period, as in BookSim2.
        ("singleconfig", Want::Unstable),
        ("cmeshconfig", Want::Runs),
        ("fattree_config", Want::Runs),
        ("flatflyconfig", Want::Runs),
        // 1,056 nodes offered 0.8 flits a cycle, its routers twice a cycle.
        ("dragonflyconfig", Want::Runs),
    ];
    for (name, want) in cases {
        // Shorter sample periods, but singleconfig's own (its run ends after the first).
        let shorter = strings(&["sample_period=200"]);
        let over: &[String] = if name == "singleconfig" { &[] } else { &shorter };
        let got = config::load(&example(name), over);
        match (&want, got) {
            (Want::Runs | Want::Unstable, Ok(spec)) => {
                let r = run(&spec);
                let unstable = r.sampling.as_ref().is_some_and(|s| s.unstable.is_some());
                match want {
                    Want::Runs => assert!(r.measured_packets > 0 && !r.saturated, "{name}"),
                    _ => assert!(r.saturated && unstable, "{name}: {:?}", r.sampling),
                }
            }
            (want, got) => panic!("{name}: wanted {want:?}, got {:?}", got.map(|_| "a spec")),
        }
    }
}

#[test]
fn booksims_fly_fattree_and_anynet_at_zero_load() {
    // A k-ary n-fly: every packet crosses n routers, 5 cycles each with the default
    // pipeline, plus 2 at the ends (4 and 5 routers' worth: 22 and 27 cycles).
    for (k, n) in [(4, 2), (3, 3)] {
        let p = tmp(&format!("fly{k}{n}"));
        std::fs::write(
            &p,
            format!(
                "topology = fly;\nk = {k};\nn = {n};\nrouting_function = dest_tag;\nnum_vcs = 2;\n\
                 injection_rate = 0.002;\nsample_period = 20000;\nseed = 3;\n"
            ),
        )
        .unwrap();
        let r = run(&config::load(&p, &[]).unwrap());
        assert_eq!(r.mean_hops, n as f64);
        let want = 5.0 * n as f64 + 2.0;
        let got = r.packet_latency_cycles.mean;
        assert!(
            (got - want).abs() < 0.01 * want,
            "{k}-ary {n}-fly: {got} against {want}"
        );
    }
    // An anynet line of three routers whose channel from router 0 to 1 takes 4 cycles (the
    // way back 1): a packet from node 0 to 1 or 2 takes 3 more. Over the 9 pairs (a node
    // may pick itself) 5 cycles a router (17 of them), 2 at the ends, and 6 more over two
    // pairs: 12.11 cycles (BookSim2: 12.16 at seed 3).
    let dir = tmp("anyline");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("net"),
        "router 0 node 0 router 1 4\nrouter 1 node 1 router 2\nrouter 2 node 2\n",
    )
    .unwrap();
    let cfg = dir.join("cfg");
    std::fs::write(
        &cfg,
        "topology = anynet;\nnetwork_file = net;\nrouting_function = min;\nnum_vcs = 2;\n\
         injection_rate = 0.002;\nsample_period = 20000;\nseed = 3;\n",
    )
    .unwrap();
    let r = run(&config::load(&cfg, &[]).unwrap());
    let want = (5.0 * 17.0 + 6.0) / 9.0 + 2.0;
    let got = r.packet_latency_cycles.mean;
    assert!((got - want).abs() < 0.01 * want, "anynet: {got} against {want}");
    // BookSim2's k-ary n-tree with nca: a packet climbs to the nearest common ancestor of
    // its two nodes and comes down, 2u + 1 routers for u levels up. Over the pairs (a node
    // may pick itself), 2.5 routers on a 4-ary 2-tree (a quarter on the sender's leaf) and
    // 3.5 on a 2-ary 3-tree: 14.5 and 19.5 cycles (BookSim2 at seed 3: 14.39 and 19.45
    // cycles, 2.48 and 3.49 routers, over its 2,000-odd packets; reef 14.47 and 19.82,
    // 2.49 and 3.56).
    for (k, n, routers) in [(4, 2, 2.5), (2, 3, 3.5)] {
        let p = tmp(&format!("fattree{k}{n}"));
        std::fs::write(
            &p,
            format!(
                "topology = fattree;\nk = {k};\nn = {n};\nrouting_function = nca;\nnum_vcs = 2;\n\
                 injection_rate = 0.002;\nsample_period = 20000;\nseed = 3;\n"
            ),
        )
        .unwrap();
        let r = run(&config::load(&p, &[]).unwrap());
        // The routers a packet crosses are drawn with its destination: 5 cycles each, and
        // 2, for the packets measured; their mean near the mean over the pairs.
        let got = r.packet_latency_cycles.mean;
        let want = 5.0 * r.mean_hops + 2.0;
        eprintln!("{k}-ary {n}-tree: {got:.2} cycles, {:.3} routers", r.mean_hops);
        assert!(
            (r.mean_hops - routers).abs() < 0.03 * routers,
            "{k}-ary {n}-tree: {} routers against {routers}",
            r.mean_hops
        );
        assert!(
            (got - want).abs() < 0.002 * want,
            "{k}-ary {n}-tree: {got} against {want}"
        );
    }
}

#[test]
fn booksims_cmesh_and_flatfly_at_zero_load() {
    // cmeshconfig's bit complement sends node i to node 63 − i, from router (x, y) to
    // (3 − x, 3 − y): 5 routers on average. 5 cycles a router with the default pipeline,
    // 2 at the ends, and 1 more on each channel between routers (2 cycles long with
    // use_noc_latency): 6 a router and 1, 31 cycles (BookSim2: 31.14 at 0.012 flits a cycle).
    let low = strings(&["injection_rate=0.002", "sample_period=20000", "seed=3"]);
    let r = run(&config::load(&example("cmeshconfig"), &low).unwrap());
    let (hops, got) = (r.mean_hops, r.packet_latency_cycles.mean);
    assert!((hops - 5.0).abs() < 0.05, "{hops}");
    let want = 6.0 * hops + 1.0;
    assert!((got - want).abs() < 0.01 * want, "cmesh: {got} against {want}");
    // flatflyconfig: 4 cycles a router (routing_delay = 0), 2 at the ends, and channels
    // 2, 4 or 6 cycles long for 1, 2 or 3 routers apart in a dimension. Over uniform pairs
    // (a node may pick itself) 2.5 routers and 2 · (2 · 1.25 − 0.75) = 3.5 cycles more:
    // 15.5 cycles (BookSim2: 15.60 at 0.072 flits a cycle).
    let r = run(&config::load(&example("flatflyconfig"), &low).unwrap());
    let got = r.packet_latency_cycles.mean;
    assert!((r.mean_hops - 2.5).abs() < 0.02, "{}", r.mean_hops);
    assert!((got - 15.5).abs() < 0.01 * 15.5, "flatfly: {got} against 15.5");
}

#[test]
fn anynet_network_files_as_booksim_reads_them() {
    let dir = tmp("anynet-files");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let cfg = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, format!("topology = anynet;\nrouting_function = min;\n{body}")).unwrap();
        p
    };
    // Relative to the config's directory, as reef reads every file a config names.
    std::fs::write(dir.join("sub/net"), "router 0 node 0 router 1\nrouter 1 node 1\n").unwrap();
    let ok = cfg("ok", "network_file = sub/net;\n");
    let (code, toml, err) = reef(&["convert", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        toml.contains("kind = \"anynet\"") && toml.contains("file = \"sub/net\""),
        "{toml}"
    );
    assert!(toml.contains("algorithm = \"anynet-min\""), "{toml}");
    config::load(&ok, &[]).unwrap();
    // An error in the network file names that file and its line, and the config's line.
    std::fs::write(
        dir.join("bad"),
        "router 0 node 0 router 1\nrouter 1 node 1 node 2 7\nrouter 2 node 3\n",
    )
    .unwrap();
    let bad = cfg("badcfg", "num_vcs = 2;\nnetwork_file = bad;\n");
    let e = config::load(&bad, &[]).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("network_file", Some(4)), "{e}");
    assert!(e.msg.contains("bad:2: link weight 7 after a node"), "{e}");
    let e = config::load(&cfg("missing", "network_file = nowhere;\n"), &[]).unwrap_err();
    assert!(e.msg.contains("cannot read `nowhere`"), "{e}");
    let e = config::load(&cfg("unset", ""), &[]).unwrap_err();
    assert!(e.msg.contains("needs network_file"), "{e}");
    // Only BookSim2's min routing on an anynet, only dest_tag on a fly; patterns by
    // coordinates only on a cube.
    let e = config::load(
        &cfg("rf", "network_file = sub/net;\nrouting_function = dor;\n"),
        &[],
    )
    .unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("routing_function", Some(4)), "{e}");
    assert!(e.msg.contains("`dor_anynet`"), "{e}");
    let e = config::load(&cfg("tor", "network_file = sub/net;\ntraffic = tornado;\n"), &[]).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("traffic", Some(4)), "{e}");
    let fly = dir.join("fly");
    std::fs::write(&fly, "topology = fly;\nk = 4;\nn = 2;\nrouting_function = min;\n").unwrap();
    let e = config::load(&fly, &[]).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("routing_function", Some(4)), "{e}");
    assert!(e.hint.unwrap().contains("dest_tag"));
}

#[test]
fn zero_load_latency_is_booksims_pipeline() {
    // BookSim2's iq router with its default pipeline (routing, VC and switch allocation a
    // cycle each, switch traversal one) and 1-cycle channels: 5 cycles a router, plus 2 at
    // the ends; a torus's channels take 2 (use_noc_latency), one more a hop between
    // routers. At a load of 0.002 packets a cycle hardly any packet waits.
    for (topology, extra) in [("mesh", 0.0), ("torus", 1.0)] {
        let text = format!(
            "topology = {topology};\nk = 8;\nn = 2;\nrouting_function = {};\nnum_vcs = 2;\n\
             injection_rate = 0.002;\nsample_period = 20000;\nseed = 3;\n",
            if topology == "mesh" { "dor" } else { "dim_order" }
        );
        let p = tmp(&format!("zero-{topology}"));
        std::fs::write(&p, text).unwrap();
        let r = run(&config::load(&p, &[]).unwrap());
        let hops = r.mean_hops;
        let want = 5.0 * hops + 2.0 + extra * (hops - 1.0);
        let got = r.packet_latency_cycles.mean;
        assert!(
            (got - want).abs() < 0.01 * want,
            "{topology}: {got} against {want} ({hops} hops)"
        );
    }
}

#[test]
fn overrides_as_booksim_takes_them() {
    let p = example("torus88");
    let base = config::load(&p, &[]).unwrap();
    let more = config::load(&p, &strings(&["injection_rate=0.05", "packet_size=4"])).unwrap();
    // 0.05 packets of 4 flits.
    assert_eq!(base.workload.load, 0.15);
    assert!((more.workload.load - 0.2).abs() < 1e-12, "{}", more.workload.load);
    // reef's own keys apply to the translation.
    let seeded = config::load(&p, &strings(&["sim.seed=9"])).unwrap();
    assert_eq!(seeded.params.seed, 9);
    // An override that is not a BookSim2 key names itself and where it came from.
    let e = config::load(&p, &strings(&["injection_rat=0.1"])).unwrap_err();
    assert_eq!(e.line, None);
    assert!(
        e.to_string().contains("injection_rat") && e.to_string().contains("(from --set)"),
        "{e}"
    );
}

#[test]
fn the_command_line_reads_booksim_configs() {
    let p = example("torus88");
    let path = p.to_str().unwrap();
    // Overrides after the file, as BookSim2 takes them; notes on standard error.
    let (code, out, err) = reef(&["run", path, "injection_rate=0.05", "sample_period=300", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("offered   0.0") && out.contains("packet latency"),
        "{out}"
    );
    assert!(err.contains("note: ") && err.contains("flips a coin"), "{err}");
    let (code, out, err) = reef(&["check", path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("deadlock-free"), "{out}");
    let (code, out, err) = reef(&["sweep", path, "--load", "0.1:0.2:0.1", "sample_period=300", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().count() >= 4, "{out}");
    // Errors: the file, the line, the key.
    let bad = tmp("bad.cfg");
    std::fs::write(&bad, "topology = mesh;\nk = 8;\nnum_vcs = 2\nn = 2;\n").unwrap();
    let (code, _, err) = reef(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.cfg:4") && err.contains("expected `;` after `num_vcs = 2`"),
        "{err}"
    );
    std::fs::write(
        &bad,
        "topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\nspeculative = 1;\n",
    )
    .unwrap();
    let (code, _, err) = reef(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.cfg:5: speculative: reef does not model `speculative = 1`"),
        "{err}"
    );
    std::fs::write(
        &bad,
        "topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\nnum_vcs = 0;\n",
    )
    .unwrap();
    let (code, _, err) = reef(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("bad.cfg:5: num_vcs: must be from 1 to 64, not 0"),
        "{err}"
    );
}

#[test]
fn convert_prints_a_config_that_runs_the_same() {
    let p = example("torus88");
    let (code, toml, err) = reef(&["convert", p.to_str().unwrap(), "injection_rate=0.05"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        toml.contains("vcs = 2") && toml.contains("num_vcs = 2 (line 37)"),
        "{toml}"
    );
    assert!(toml.contains("injection_rate = 0.05 (command line)"), "{toml}");
    let t = tmp("torus88.toml");
    std::fs::write(&t, &toml).unwrap();
    let mut from_toml = run(&config::load(&t, &[]).unwrap());
    let mut from_cfg = run(&config::load(&p, &strings(&["injection_rate=0.05"])).unwrap());
    from_toml.wall_s = 0.0;
    from_cfg.wall_s = 0.0;
    assert_eq!(json(&from_toml), json(&from_cfg));
    // A reef config is not converted, nor a reef override taken.
    let (code, _, err) = reef(&["convert", "examples/mesh8x8.toml"]);
    assert_eq!(code, 1);
    assert!(err.contains("a reef config already"), "{err}");
    let (code, _, err) = reef(&["convert", p.to_str().unwrap(), "traffic.load=0.1"]);
    assert_eq!(code, 1);
    assert!(err.contains("BookSim2 overrides"), "{err}");
}

fn statement() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "topology",
        "k",
        "n",
        "num_vcs",
        "vc_buf_size",
        "routing_function",
        "traffic",
        "injection_rate",
        "packet_size",
        "injection_process",
        "credit_delay",
        "input_speedup",
        "routing_delay",
        "warmup_periods",
        "sample_period",
        "watch_out",
        "no_such_key",
    ]);
    let value = prop_oneof![
        (-3i64..20).prop_map(|v| v.to_string()),
        (0.0f64..1.5).prop_map(|v| format!("{v:.3}")),
        prop::sample::select(vec![
            "mesh",
            "torus",
            "fly",
            "dragonflynew",
            "min",
            "ugal",
            "dor",
            "dim_order",
            "uniform",
            "transpose",
            "tornado",
            "hotspot({0,3})",
            "randperm",
            "on_off",
            "bernoulli",
            "{1,2}",
            "{0.1,0.2}",
            "-",
            "{",
        ])
        .prop_map(str::to_string),
    ];
    (key, value).prop_map(|(k, v)| format!("{k} = {v};"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases("REEF_PROPTEST_CASES", 300), ..ProptestConfig::default() })]

    /// Arbitrary text never panics the reader: it is read or it is an error with a line.
    #[test]
    fn any_text_is_read_or_refused_with_a_line(text in "[ -~\n]{0,200}") {
        match config::booksim::translate("f.cfg", &text, &[]) {
            Ok(t) => prop_assert!(t.toml.parse::<toml::Table>().is_ok()),
            Err(e) => prop_assert!(!e.msg.is_empty()),
        }
    }

    /// Plausible configs: each translates to TOML reef reads, or is refused naming a key or
    /// a line; a translated config builds or its error points back into the BookSim2 file.
    #[test]
    fn plausible_configs_translate_or_name_the_key(body in prop::collection::vec(statement(), 0..10)) {
        let text = format!("topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\n{}\n", body.join("\n"));
        match config::booksim::translate("f.cfg", &text, &[]) {
            Ok(t) => {
                prop_assert!(t.toml.parse::<toml::Table>().is_ok());
                if let Err(e) = config::load_str("f.cfg", &t.toml, Path::new("."), &[]) {
                    let e = config::booksim::locate_error(&t, "f.cfg", e);
                    prop_assert!(e.line.is_some() || !e.key.is_empty(), "{}", e);
                }
            }
            Err(e) => prop_assert!(e.line.is_some() || !e.key.is_empty(), "{}", e),
        }
    }
}

/// One row of `tests/data/booksim/reference.csv`: BookSim2's own numbers.
struct Reference {
    config: String,
    load: Option<f64>,
    seed: u64,
    stable: bool,
    latency: f64,
    command: Vec<String>,
}

/// Configs whose runs are long for this file (`fattree_config`: 10,000-cycle sample periods
/// on 64 nodes in the general engine, up to ~10 s a run near saturation; BookSim2's
/// dragonfly example with k = 2, 10,000-cycle periods on 72 nodes, with min and ugal
/// routing): reef runs their first seed only, against BookSim2's mean over its three, and
/// their saturation is checked at the two ends of its tolerance instead of found by
/// bisection.
/// `scripts/booksim-compare.py` runs them in full (docs/booksim.md, "How close").
const ONE_SEED: &[&str] = &[
    "fattree_config",
    "fattree_config-anca",
    "dragonfly-k2",
    "dragonfly-k2-speedup2",
    "dragonfly-k2-ugal",
];

/// Configs this file checks at a few points, to keep its time (the randomized routings and
/// `min_adapt` on the 8-VC mesh and torus, 5 loads × 3 seeds of up to ~3 s each; the k = 2
/// dragonflies, up to ~2 s a run; `valiant`, `ugal`, `xyyx`, `adaptive_xyyx`, `ugal_xyyx`
/// and `ugal_pni` on BookSim2's flatfly example; the 8-VC mesh with `output_speedup = 2`): reef's latency at 90 % of BookSim2's saturation only (below it they
/// agree within 2 %, docs/booksim.md), and its saturation at the two ends of the
/// tolerance, as for [`ONE_SEED`].
/// `scripts/booksim-compare.py` runs every point.
const FEW_POINTS: &[&str] = &[
    "dragonfly-k2",
    "dragonfly-k2-speedup2",
    "dragonfly-k2-ugal",
    "mesh8x8-uniform-8vc-valiant",
    "mesh8x8-uniform-8vc-xy_yx",
    "mesh8x8-uniform-8vc-adaptive_xy_yx",
    "mesh8x8-uniform-8vc-min_adapt",
    "mesh8x8-uniform-8vc-min_adapt-sif",
    "mesh8x8-uniform-8vc-output_speedup2",
    "torus88-valiant",
    "torus88-min_adapt",
    "torus88-min_adapt-sif",
    "flatflyconfig-valiant",
    "flatflyconfig-ugal",
    "flatflyconfig-xyyx",
    "flatflyconfig-adaptive_xyyx",
    "flatflyconfig-ugal_xyyx",
    "flatflyconfig-ugal_pni",
];

/// Configs whose BookSim2 rows only `scripts/booksim-compare.py` compares: BookSim2's
/// `dragonflyconfig` itself (1,056 nodes), as configured (0.8 flits a cycle a node, its
/// routers twice a cycle) and with `internal_speedup = 1.0`, 9 s a run in reef at 0.1
/// flits a cycle a node and more near saturation; `mesh88_lat` at 90 % of saturation over
/// 12 seeds (about 10 s a run in reef).
const SCRIPT_ONLY: &[&str] = &[
    "dragonflyconfig",
    "dragonflyconfig-speedup1",
    "mesh88_lat-90-12seeds",
];

/// Configs whose saturation moves with the seed by more than the tolerance's worth, on
/// both sides (`cmeshconfig`: BookSim2 0.1191–0.1211 flits a cycle a node over its seeds;
/// reef's first seed stays stable at 0.125, its mean over three is 0.1217): reef's
/// saturation is the mean over seeds 1–3, as BookSim2's is.
const THREE_SEEDS: &[&str] = &["cmeshconfig"];

fn csv_rows(name: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(Path::new("tests/data/booksim").join(name)).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            // No field of these files holds a comma (the commands are BookSim2 overrides).
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), head.len(), "{name}: {l}");
            head.iter()
                .map(|h| h.to_string())
                .zip(f.iter().map(|v| v.to_string()))
                .collect()
        })
        .collect()
}

fn references() -> Vec<Reference> {
    csv_rows("reference.csv")
        .into_iter()
        .map(|r| {
            let words: Vec<&str> = r["command"].split_whitespace().collect();
            Reference {
                config: r["config"].clone(),
                load: r["load"].parse().ok(),
                seed: r["seed"].parse().unwrap(),
                stable: r["stable"] == "1",
                latency: r["packet_latency"].parse().unwrap_or(f64::NAN),
                // `booksim FILE override...`: the file is relative to tests/data/booksim.
                command: words.iter().map(|w| w.to_string()).collect(),
            }
        })
        .collect()
}

/// reef's mean packet latency, over the same seeds, on the configs and loads BookSim2 ran.
/// The reef spec of a row of `reference.csv`: its BookSim2 command line, run with the
/// row's seed.
fn row_spec(r: &std::collections::BTreeMap<String, String>) -> reef::engine::Spec {
    let words: Vec<String> = r["command"].split_whitespace().map(str::to_string).collect();
    let path = Path::new("tests/data/booksim").join(&words[1]);
    let mut over: Vec<String> = words[2..]
        .iter()
        .filter(|w| !w.starts_with("seed="))
        .cloned()
        .collect();
    over.push(format!("seed={}", r["seed"]));
    config::load(&path, &over).unwrap_or_else(|e| panic!("{e}"))
}

fn reef_latency(refs: &[&Reference]) -> f64 {
    let mut sum = 0.0;
    for r in refs {
        let path = Path::new("tests/data/booksim").join(&r.command[1]);
        // The load is BookSim2's row's (a config run as configured keeps its command's).
        let mut over: Vec<String> = r.command[2..]
            .iter()
            .filter(|w| !(w.starts_with("seed=") || r.load.is_some() && w.starts_with("injection_rate=")))
            .cloned()
            .collect();
        if let Some(load) = r.load {
            over.push(format!("injection_rate={load}"));
        }
        over.push(format!("seed={}", r.seed));
        let res = run(&config::load(&path, &over).unwrap_or_else(|e| panic!("{e}")));
        assert!(!res.saturated, "{}: {over:?}", r.config);
        sum += res.packet_latency_cycles.mean;
    }
    sum / refs.len() as f64
}

/// The tolerance reef is held to on `config` at `fraction` of BookSim2's saturation
/// throughput, both measured as BookSim2 measures (its sample periods and convergence test,
/// `sim.sampling = "booksim"`): the 5 % the comparison asks for up to 70 % of saturation
/// (worst measured +2.9 %, `mesh88_lat`) and at 90 % where reef is within it
/// (docs/booksim.md "How close", with BookSim2's credit loops and a body flit's cycle in
/// switch allocation, and since 2026-11-29 lone VC grants that move the separable VC
/// allocator's pointers: `torus88` −4.3 %, the 8-VC mesh −1.9 %, the 1-VC mesh −3.0 %,
/// `anynet` −2.1 %, `singleconfig` +0.2 %, `flatflyconfig` −1.2 %, `cmeshconfig` −1.1 %;
/// the 8-VC mesh with `output_speedup = 2` −1.1 %).
/// The randomized and adaptive routings at 90 % were within 2.2 % before that change (`adaptive_xy_yx`
/// −2.2 %, `xy_yx` −2.0 %, `min_adapt` −0.9 % and −1.7 %, on the torus −1.3 % and +0.5 %,
/// `valiant` +0.1 % and −0.8 %), on the flatfly within 2.8 % (`valiant` −2.5 %, `ugal`
/// −2.8 %, `xyyx` −1.5 %, `adaptive_xyyx` −2.3 %, `ugal_xyyx` −1.9 %).
/// Elsewhere at 90 % the gap measured with a little room, a guard that lets it only
/// narrow: `mesh88_lat` (+34.3 % over seeds 1–3, +4.7 % over seeds 1–12 before that change: one seed's
/// average swings over 108–238 cycles in BookSim2, `mesh88_lat-90-12seeds`), which
/// BookSim2's sampling does not explain:
/// BookSim2 and reef measure the same periods (seed 1: both run all 10 without converging)
/// and reef's network is further from its steady state after them, a few sources starved
/// (docs/booksim.md; its 10,000-cycle twin agrees within 2 %).
/// `flatflyconfig-ugal_pni` at 90 % is 6.5 % low over seeds 1–3 (8.7 % over seeds 1–12,
/// 2026-11-29): its network latency agrees within 1.6 %, its time waiting at the source
/// (where ugal_pni lets a packet start on 2 of the 8 injection VCs) is short by ~2 cycles
/// of ~14, a miss not yet explained (docs/booksim.md, "Flatfly"); 8 % guards it.
fn tolerance(config: &str, fraction: f64) -> f64 {
    if fraction <= 0.75 {
        0.05
    } else if config == "mesh88_lat" {
        0.40
    } else if config == "flatflyconfig-ugal_pni" {
        0.08
    } else {
        0.05
    }
}

/// The tolerance on saturation throughput: 3 % (docs/booksim.md "How close": worst
/// measured +1.7 %, `cmeshconfig` +1.7 %, `flatflyconfig` −1.0 %; `singleconfig` −0.6 %,
/// now that its separable switch allocates once a cycle as BookSim2's does), and the
/// issue's 5 % for `fattree_config` with `anca` (+2.9 % over three seeds, seed 1 stable
/// past 3 %: likely because reef reads the credits that choose the up port later than
/// BookSim2's lookahead does, docs/booksim.md).
fn saturation_tolerance(config: &str) -> f64 {
    if config == "fattree_config-anca" {
        0.05
    } else {
        0.03
    }
}

/// `a` and `b` are the same text, else the first line that differs.
fn same(what: &str, a: &str, b: &str) {
    if let Some((x, y)) = a.lines().zip(b.lines()).find(|(x, y)| x != y) {
        panic!("{what}: {x} against {y}");
    }
    assert_eq!(a.lines().count(), b.lines().count(), "{what}");
}

#[test]
fn booksims_sampling_decides_the_window() {
    // mesh88_lat at a low load (0.03 flits/node/cycle, a fifth of saturation): BookSim2's 3 warm-up periods of 1,000 cycles, then periods
    // until three in a row pass its convergence test, at most 10 in all.
    let low = config::load(
        &example("mesh88_lat"),
        &strings(&["injection_rate_uses_flits=1", "injection_rate=0.03", "seed=1"]),
    )
    .unwrap();
    let r = run(&low);
    let s = r.sampling.clone().expect("BookSim2's sampling");
    assert_eq!(s.warmup_periods, 3, "{s:?}");
    assert!((3..=7).contains(&s.measured_periods), "{s:?}");
    assert!(s.converged && s.unstable.is_none() && !r.saturated, "{s:?}");
    assert_eq!(r.window_cycles, 1000.0 * s.measured_periods as f64);
    // The window it decided, run as a fixed one, gives the same numbers, bit for bit; and
    // so do the flit-by-flit path, the general engine and the reversed event order.
    let mut plain = low.clone();
    plain.params.sampling = None;
    plain.params.warmup = 3000 * 1000;
    plain.params.measure = s.measured_periods as u64 * 1000 * 1000;
    let mut want = run(&plain);
    want.sampling = r.sampling.clone();
    same("a fixed window", &json(&want), &json(&r));
    let mut slow = low.clone();
    (slow.params.trains, slow.params.express) = (false, false);
    same(
        "flit by flit",
        &without_events(run(&slow)),
        &without_events(r.clone()),
    );
    same(
        "reversed",
        &without_events(run_reversed(&low)),
        &without_events(r.clone()),
    );
    // warmup_periods = 0: the warm-up lasts until its own test passes.
    let by_test = config::load(
        &example("mesh88_lat"),
        &strings(&[
            "injection_rate_uses_flits=1",
            "injection_rate=0.03",
            "seed=1",
            "warmup_periods=0",
        ]),
    )
    .unwrap();
    let t = run(&by_test).sampling.unwrap();
    assert!(
        t.warmup_periods >= 1 && t.measured_periods >= 3 && t.unstable.is_none(),
        "{t:?}"
    );
    // In the text summary.
    let (code, out, err) = reef(&[
        "run",
        example("mesh88_lat").to_str().unwrap(),
        "injection_rate_uses_flits=1",
        "injection_rate=0.03",
        "seed=1",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "sampling  BookSim2's: 3 warm-up and {} measured sample periods, converged",
            s.measured_periods
        )),
        "{out}"
    );
}

#[test]
fn past_saturation_booksims_sampling_says_unstable() {
    // Far past saturation (0.158 flits/node/cycle) the average age of what is delivered and
    // what waits passes latency_thres (500 cycles): BookSim2 calls the run unstable and so
    // does reef, as saturated, never with quiet averages.
    let spec = config::load(
        &example("mesh88_lat"),
        &strings(&["injection_rate_uses_flits=1", "injection_rate=0.4", "seed=1"]),
    )
    .unwrap();
    let r = run(&spec);
    let s = r.sampling.clone().unwrap();
    assert!(!s.converged, "{s:?}");
    assert!(
        s.unstable
            .as_deref()
            .unwrap_or("")
            .contains("latency_thres of 500 cycles"),
        "{s:?}"
    );
    assert!(r.saturated);
    assert!(
        r.saturation_reason
            .unwrap()
            .starts_with("unstable, as BookSim2 would say")
    );
}

#[test]
fn booksims_sampling_in_a_reef_config() {
    let base = "[topology]\nkind = \"mesh\"\nk = [4, 4]\n[traffic]\nload = 0.1\n";
    // A fixed window, as before: no sampling in the result or its JSON.
    let r = run(&spec(base));
    assert!(r.sampling.is_none() && !json(&r).contains("\"sampling\""));
    // BookSim2's, with its keys.
    let text = format!(
        "[sim]\nsampling = \"booksim\"\nsample_period = \"500 cycles\"\nwarmup_periods = 2\n\
         max_samples = 12\nlatency_thres = \"off\"\nstopping_thres = 0.02\n{base}"
    );
    let r = run(&spec(&text));
    let s = r.sampling.clone().unwrap();
    assert_eq!(s.warmup_periods, 2);
    assert_eq!(r.window_cycles, 500.0 * s.measured_periods as f64);
    assert!(json(&r).contains("\"sampling\""));
    // Its keys without it, or the fixed window's with it: errors naming the key.
    for (text, key) in [
        (format!("[sim]\nmax_samples = 5\n{base}"), "sim.max_samples"),
        (
            format!("[sim]\nsampling = \"booksim\"\nmeasure = \"1000 cycles\"\n{base}"),
            "sim.measure",
        ),
        (
            format!("[sim]\nsampling = \"booksim\"\nwarmup_periods = 4\nmax_samples = 4\n{base}"),
            "sim.warmup_periods",
        ),
        // BookSim2's throughput simulation reads no latency threshold and stops its sources.
        (
            format!("[sim]\nsampling = \"booksim-throughput\"\nlatency_thres = \"off\"\n{base}"),
            "sim.latency_thres",
        ),
        (
            format!("[sim]\nsampling = \"booksim-throughput\"\ndrain = \"measured\"\n{base}"),
            "sim.drain",
        ),
    ] {
        let e = config::load_str("t.toml", &text, Path::new("."), &[]).unwrap_err();
        assert_eq!(e.key, key, "{e}");
    }
}

/// BookSim2's saturation throughput per config: the mean over its seeds.
fn booksim_saturation() -> Vec<(String, f64, Vec<String>)> {
    let rows = csv_rows("saturation.csv");
    let mut out: Vec<(String, f64, Vec<String>)> = Vec::new();
    for r in &rows {
        if out.iter().any(|(c, _, _)| *c == r["config"]) {
            continue;
        }
        let mine: Vec<f64> = rows
            .iter()
            .filter(|s| s["config"] == r["config"])
            .map(|s| s["saturation"].parse().unwrap())
            .collect();
        let command = r["command"].split_whitespace().map(str::to_string).collect();
        out.push((
            r["config"].clone(),
            mine.iter().sum::<f64>() / mine.len() as f64,
            command,
        ));
    }
    out
}

#[test]
fn reef_agrees_with_booksims_own_numbers_below_saturation() {
    // BookSim2's numbers (scripts/booksim-reference.py, committed with their command lines)
    // against reef's on the same configs, loads and seeds, means over the seeds on each
    // side. Loads are 10, 30, 50, 70 and 90 % of BookSim2's saturation (saturation.csv), and
    // the reference workloads' own loads, far below it.
    let refs = references();
    let sats = booksim_saturation();
    let mut configs: Vec<&str> = refs.iter().map(|r| r.config.as_str()).collect();
    configs.dedup();
    let mut checked = 0;
    for config in configs {
        if config.ends_with("-backlogged") || SCRIPT_ONLY.contains(&config) {
            // Past saturation (its accepted throughput is compared below), or too slow here.
            continue;
        }
        let mine: Vec<&Reference> = refs.iter().filter(|r| r.config == config).collect();
        let path = Path::new("tests/data/booksim").join(&mine[0].command[1]);
        if config::load(&path, &mine[0].command[2..]).is_err() {
            continue; // what reef lacks is tested above, with the key and line it names
        }
        let sat = sats.iter().find(|s| s.0 == config).map(|s| s.1);
        let mut loads: Vec<Option<f64>> = mine.iter().map(|r| r.load).collect();
        loads.dedup();
        for load in loads {
            let pts: Vec<&Reference> = mine.iter().copied().filter(|r| r.load == load).collect();
            assert!(
                pts.iter().all(|r| r.stable),
                "{config} at {load:?}: BookSim2 unstable"
            );
            let booksim = pts.iter().map(|r| r.latency).sum::<f64>() / pts.len() as f64;
            let fraction = match (load, sat) {
                (Some(l), Some(s)) => l / s,
                _ => 0.0,
            };
            if FEW_POINTS.contains(&config) && (fraction - 0.9).abs() > 0.02 {
                continue;
            }
            let reef = if ONE_SEED.contains(&config) {
                reef_latency(&pts[..1])
            } else {
                reef_latency(&pts)
            };
            let dev = (reef - booksim) / booksim;
            eprintln!(
                "{config} at {load:?}: reef {reef:.2}, BookSim2 {booksim:.2} ({:+.1} %)",
                100.0 * dev
            );
            assert!(
                dev.abs() <= tolerance(config, fraction),
                "{config} at {load:?} ({:.0} % of saturation): reef {reef:.2}, BookSim2 \
                 {booksim:.2} cycles ({:+.1} %, tolerance {:.0} %)",
                100.0 * fraction,
                100.0 * dev,
                100.0 * tolerance(config, fraction)
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} points compared");
}

/// A throughput simulation (`sim_type = throughput`) is judged by the flits it accepts:
/// reef's accepted throughput within 3 % of BookSim2's, means over the seeds, on the rows
/// BookSim2 ran as throughput simulations (the 8-VC mesh at 70 % of saturation, and
/// singleconfig backlogged with the max_size switch allocator, where BookSim2 accepts 0.92
/// flits a cycle a node against 0.67 with its separable ones). Below saturation the sources
/// stop when the sampling ends and the network empties, as BookSim2's do; past it reef's
/// latency counts every packet created in the window, BookSim2's only those that reached
/// the front of their source queue (docs/booksim.md), so only the throughput is compared.
#[test]
fn throughput_simulations_accept_what_booksim_accepts() {
    let rows = csv_rows("reference.csv");
    let mut configs: Vec<String> = rows
        .iter()
        .filter(|r| r["command"].contains("sim_type=throughput"))
        .map(|r| r["config"].clone())
        .collect();
    configs.dedup();
    assert!(configs.len() >= 2, "{configs:?}");
    for config in configs {
        let mine: Vec<_> = rows.iter().filter(|r| r["config"] == config).collect();
        let (mut booksim, mut reef) = (0.0, 0.0);
        for r in &mine {
            booksim += r["accepted_flits"].parse::<f64>().unwrap();
            let spec = row_spec(r);
            assert!(
                spec.params.drain_all,
                "{config}: a throughput simulation stops its sources"
            );
            let res = run(&spec);
            assert!(
                res.sampling.as_ref().is_some_and(|s| s.unstable.is_none()),
                "{config}"
            );
            reef += res.accepted_flits_per_node_cycle;
        }
        let n = mine.len() as f64;
        let (booksim, reef) = (booksim / n, reef / n);
        let dev = (reef - booksim) / booksim;
        eprintln!(
            "{config}: reef accepts {reef:.4}, BookSim2 {booksim:.4} ({:+.1} %)",
            100.0 * dev
        );
        assert!(
            dev.abs() <= 0.03,
            "{config}: reef {reef:.4}, BookSim2 {booksim:.4} flits/node/cycle"
        );
    }
}

#[test]
fn reef_saturates_near_booksim() {
    // The highest load each calls stable, found by bisection the same way on both sides:
    // for BookSim2 its own verdict (converged, latency under latency_thres = 500 cycles),
    // for reef not saturated and a mean packet latency under 500 cycles. reef is run with
    // the first seed, BookSim2's figure is the mean over three. reef saturates within
    // −0.6…+1.7 % of BookSim2 (docs/booksim.md): held within 3 % (saturation_tolerance).
    for (config, booksim, command) in booksim_saturation() {
        let path = Path::new("tests/data/booksim").join(&command[1]);
        let base: Vec<String> = command[2..]
            .iter()
            .filter(|w| !w.starts_with("seed="))
            .cloned()
            .collect();
        if config::load(&path, &base).is_err() {
            continue; // what reef lacks is tested above, with the key and line it names
        }
        let stable_with = |load: f64, seed: u32| {
            let mut over = base.clone();
            over.push(format!("injection_rate={load}"));
            over.push(format!("seed={seed}"));
            let r = run(&config::load(&path, &over).unwrap_or_else(|e| panic!("{e}")));
            !r.saturated && r.packet_latency_cycles.mean <= 500.0
        };
        let stable = |load: f64| stable_with(load, 1);
        if ONE_SEED.contains(&config.as_str()) || FEW_POINTS.contains(&config.as_str()) {
            let tol = saturation_tolerance(&config);
            let (below, above) = (booksim * (1.0 - tol), booksim * (1.0 + tol));
            assert!(
                stable(below),
                "{config}: reef saturated at {below:.4} (BookSim2 {booksim:.4})"
            );
            assert!(
                !stable(above),
                "{config}: reef stable at {above:.4} (BookSim2 {booksim:.4})"
            );
            eprintln!("{config}: reef stable at {below:.4}, saturated at {above:.4}, BookSim2 {booksim:.4}");
            continue;
        }
        // To BookSim2's 0.0025 (scripts/booksim-reference.py): coarser steps are several
        // per cent of a low saturation (0.005 of cmeshconfig's 0.12 is 4 %).
        let seeds = if THREE_SEEDS.contains(&config.as_str()) {
            3
        } else {
            1
        };
        let mut lo = 0.0;
        for seed in 1..=seeds {
            let (mut l, mut hi) = (0.0f64, 1.0f64);
            while hi - l > 0.0025 {
                let mid = (l + hi) / 2.0;
                if stable_with(mid, seed) {
                    l = mid;
                } else {
                    hi = mid;
                }
            }
            lo += l / seeds as f64;
        }
        let dev = (lo - booksim) / booksim;
        eprintln!(
            "{config}: reef saturates at {lo:.4}, BookSim2 at {booksim:.4} ({:+.1} %)",
            100.0 * dev
        );
        assert!(
            dev.abs() <= saturation_tolerance(&config),
            "{config}: reef saturates at {lo:.4}, BookSim2 at {booksim:.4} flits/node/cycle ({:+.1} %)",
            100.0 * dev
        );
    }
}

#[test]
fn waiting_for_the_tail_credit_costs_nothing_at_zero_load_and_spaces_packets() {
    // vc_release = "tail-credit" (BookSim2's wait_for_tail_credit = 1): an output VC takes
    // the next packet only once the buffer after it is empty. A lone packet never waits for
    // that; back-to-back packets on one VC each wait for the previous tail's credit.
    let net = |release: &str, load: &str| {
        format!(
            "[sim]\nwarmup = \"1000 cycles\"\nmeasure = \"20000 cycles\"\nseed = 5\n\
             [topology]\nkind = \"mesh\"\nk = [4, 4]\n\
             [channel]\nvcs = 1\nbuffer = 8\nlatency = \"1 cycles\"\ncredit_delay = \"2 cycles\"\n\
             [switch]\nrouter_delay = \"3 cycles\"\nvc_release = \"{release}\"\n\
             [traffic]\npattern = \"neighbour\"\n{load}packet_size = 4\n"
        )
    };
    let low = |r| run(&spec(&net(r, "injection = \"periodic\"\nload = 0.002\n")));
    let (tail, credit) = (low("tail"), low("tail-credit"));
    assert_eq!(tail.packet_latency_cycles.mean, credit.packet_latency_cycles.mean);
    // Each host sends to its neighbour and always has a packet. Waiting for the tail's
    // credit, a host starts a packet only when its last one has left the first switch's
    // buffer and that credit is back: its head lands a flit time and the 1-cycle latency
    // after it left, waits the 3-cycle router delay, the other 3 flits follow a cycle
    // apart, and the last credit takes 2 cycles back: 1 + 1 + 3 + 3 + 2 = 10 cycles for 4
    // flits, at every host.
    let full = |r| run(&spec(&net(r, "injection = \"backlogged\"\n")));
    let (tail, credit) = (full("tail"), full("tail-credit"));
    for got in [
        credit.accepted_min_flits_per_node_cycle,
        credit.accepted_max_flits_per_node_cycle,
    ] {
        assert!((got - 0.4).abs() < 1e-3, "{got}");
    }
    assert!(
        tail.accepted_flits_per_node_cycle > 0.6,
        "{}",
        tail.accepted_flits_per_node_cycle
    );
}

#[test]
fn a_freed_vc_goes_to_a_waiting_head_as_booksims_vc_allocation_gives_it() {
    // BookSim2 frees an output VC when the tail wins switch allocation; a head waiting for
    // it wins it in the next cycle's VC allocation and switch allocation the cycle after:
    // it starts vc_alloc_delay + sw_alloc_delay cycles after the tail (translated to
    // switch.vc_reuse_delay), one idle cycle on the channel with the default pipeline. On
    // a hot spot every host always has a packet for host 0, and its switch's ejection
    // output passes from one input to another at every packet: 4 flits every 5 cycles, not
    // every 4. (BookSim2 on the 8×8 mesh, `workloads/mesh8x8-uniform
    // traffic=hotspot({0})`, saturates with host 0 receiving 0.70 flits a cycle; reef 0.70
    // with the delay, 0.73 without.)
    let net = |delay: &str| {
        format!(
            "[sim]\nwarmup = \"1000 cycles\"\nmeasure = \"20000 cycles\"\nseed = 5\n\
             [topology]\nkind = \"mesh\"\nk = [2, 2]\n\
             [channel]\nvcs = 1\nbuffer = 8\nlatency = \"1 cycles\"\ncredit_delay = \"1 cycles\"\n\
             [switch]\nrouter_delay = \"3 cycles\"\nvc_reuse_delay = \"{delay}\"\n\
             [traffic]\npattern = \"hot-spot\"\nhot = [0]\nhot_fraction = 1.0\n\
             include_self = true\ninjection = \"backlogged\"\npacket_size = 4\n"
        )
    };
    let hot = |delay| run(&spec(&net(delay))).accepted_max_flits_per_node_cycle;
    assert!((hot("0 cycles") - 1.0).abs() < 1e-3, "{}", hot("0 cycles"));
    assert!((hot("2 cycles") - 0.8).abs() < 1e-3, "{}", hot("2 cycles"));
    // The translation: the VCs in turn, the delay from the pipeline's allocation stages.
    let p = example("torus88");
    for (over, delay) in [(vec![], "2 cycles"), (vec!["vc_alloc_delay=2"], "3 cycles")] {
        let mut args = vec!["convert", p.to_str().unwrap()];
        args.extend(over.iter().copied());
        let (code, toml, err) = reef(&args);
        assert_eq!(code, 0, "{err}");
        assert!(toml.contains("vc_choice = \"round-robin\""), "{toml}");
        assert!(
            toml.contains(&format!("vc_reuse_delay = \"{delay}\"")),
            "{over:?}: {toml}"
        );
    }
    // The express engine takes the VCs in turn and, on BookSim2's cycle grid with
    // deterministic routing, its separable allocators: `reef check` says so.
    let (code, out, err) = reef(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("engine: express (dimension order)")
            && out.contains("BookSim2's separable allocators on its cycle grid"),
        "{out}"
    );
    // Off the grid (a wire of half a cycle) they go on the general engine, which says why.
    let (code, out, err) = reef(&["check", p.to_str().unwrap(), "channel.latency=\"1.5 cycles\""]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("engine: general, because of separable allocators off BookSim2's cycle grid"),
        "{out}"
    );
}

#[test]
fn randomized_routings_take_booksims_paths_and_keep_the_invariants() {
    // valiant and xy_yx draw from reef's own streams, not BookSim2's: the draws differ, their
    // distribution does not. At the lowest load of each sweep reef's packets take as many
    // hops as BookSim2's, means over seeds 1–3 (valiant on the 8×8 mesh 11.46 in BookSim2:
    // twice dimension order's 5.25 between routers, plus the router out; xy_yx the same as
    // dimension order, 6.25). A run with every invariant checked gives the same result
    // flit by flit as with trains, and with its events and components in reverse order.
    let rows = csv_rows("reference.csv");
    for config in FEW_POINTS {
        let mine: Vec<_> = rows.iter().filter(|r| r["config"] == *config).collect();
        if mine.is_empty() {
            continue;
        }
        let low = mine[0]["load"].clone();
        let pts: Vec<_> = mine.iter().filter(|r| r["load"] == low).collect();
        let mut booksim = 0.0;
        let mut reef = 0.0;
        for r in &pts {
            booksim += r["hops"].parse::<f64>().unwrap() / pts.len() as f64;
            let spec = row_spec(r);
            reef += run(&spec).mean_hops / pts.len() as f64;
        }
        let dev = (reef - booksim) / booksim;
        eprintln!(
            "{config} at {low}: reef {reef:.3} hops, BookSim2 {booksim:.3} ({:+.2} %)",
            100.0 * dev
        );
        assert!(
            dev.abs() < 0.01,
            "{config}: reef {reef:.3} hops, BookSim2 {booksim:.3}"
        );
        // Flit by flit with every check, against trains: the same result.
        let words: Vec<String> = pts[0]["command"].split_whitespace().map(str::to_string).collect();
        let path = Path::new("tests/data/booksim").join(&words[1]);
        let with = |trains: &str| {
            let mut over: Vec<String> = words[2..].to_vec();
            over.push("sim.check=true".into());
            over.push(format!("sim.trains={trains}"));
            let mut r = run(&config::load(&path, &over).unwrap_or_else(|e| panic!("{e}")));
            (r.events, r.wall_s) = (0, 0.0);
            r
        };
        assert_eq!(json(&with("false")), json(&with("true")), "{config}");
        let spec = config::load(&path, &words[2..]).unwrap_or_else(|e| panic!("{e}"));
        let (mut a, mut b) = (run(&spec), run_reversed(&spec));
        (a.events, a.wall_s, b.events, b.wall_s) = (0, 0.0, 0, 0.0);
        assert_eq!(json(&a), json(&b), "{config}: reversed");
    }
}

/// reef on a row of `lines.csv` or `lines-speedup2.csv` (seed 0) beside BookSim2's numbers.
struct LineRun {
    acc: f64,
    lat: f64,
    b_acc: f64,
    b_lat: f64,
    /// The row's command and both results, for a failed assertion.
    what: String,
    /// BookSim2's latency is over the packets that arrive in its samples; reef's over those
    /// created in its window, which a saturated source may inject only after it: reef's
    /// latency counts only where its window saw packets delivered.
    timed: bool,
}

fn line_run(r: &std::collections::BTreeMap<String, String>) -> LineRun {
    let res = run(&row_spec(&{
        let mut r = r.clone();
        r.insert("seed".into(), "0".into());
        r
    }));
    let (acc, lat) = (res.accepted_flits_per_node_cycle, res.network_latency_cycles.mean);
    let num = |k: &str| r[k].parse::<f64>().unwrap();
    let (b_acc, b_lat) = (num("accepted_flits"), num("network_latency"));
    let what = format!(
        "{}: reef accepts {acc:.4} in {lat:.2} cycles, BookSim2 {b_acc:.4} in {b_lat:.2}",
        r["command"]
    );
    let timed = res.delivered_measured_packets > 0;
    LineRun {
        acc,
        lat,
        b_acc,
        b_lat,
        what,
        timed,
    }
}

#[test]
fn internal_speedup_is_booksims() {
    // The same saturated lines with BookSim2's internal_speedup = 2.0 (`lines-speedup2.csv`,
    // 128 cases): two allocations a cycle into output queues, the flit leaving at the next
    // edge of the cycle, credits back from the edge of the cycle they were allocated in
    // (src/switch/speedup.rs). With one VC reef gives BookSim2's throughput within 1.4 %
    // and its network latency within 1.3 % (sources offered exactly what their channel
    // carries: BookSim2's random packets leave it idle now and then, 0.987 against reef's
    // 1.000; four routers with 4-flit packets: reef 26.84 cycles, BookSim2 26.50). With two
    // VCs, one-flit packets routed at each router (routing_delay = 1) have BookSim2's
    // throughput to 0.1 % (latency within 1.3 %: 23.50 against 23.81 cycles); routed a
    // router ahead, or 4-flit packets, each simulator settles into a periodic pattern of
    // its own, reef's up to 12.5 % faster with one-flit packets (0.500 against 0.444 flits
    // a cycle on four routers) and 23 % with 4-flit ones (0.667 against 0.540): held to that
    // measured spread (docs/booksim.md, "internal_speedup"). BookSim2's dragonfly, which
    // sets the speed-up, agrees within 0.8 % (`dragonfly-k2-speedup2`).
    let rows = csv_rows("lines-speedup2.csv");
    assert_eq!(rows.len(), 128);
    let (mut timed_rows, mut exact_rows) = (0, 0);
    for r in &rows {
        let num = |k: &str| r[k].parse::<f64>().unwrap();
        let (size, vcs, rd) = (num("packet_size"), num("num_vcs"), num("routing_delay"));
        let LineRun {
            acc,
            lat,
            b_acc,
            b_lat,
            what,
            timed,
        } = line_run(r);
        timed_rows += timed as usize;
        let (acc_tol, lat_tol) = if vcs == 1.0 {
            (0.015, 0.015)
        } else if size == 1.0 && rd == 1.0 {
            exact_rows += 1;
            (0.001, 0.015)
        } else {
            (0.25, 0.12)
        };
        assert!((acc - b_acc).abs() <= acc_tol * b_acc + 3e-4, "{what}");
        assert!(!timed || (lat - b_lat).abs() <= lat_tol * b_lat, "{what}");
    }
    assert!(timed_rows >= 60 && exact_rows == 16, "{timed_rows} {exact_rows}");
}

#[test]
fn credit_loops_and_flit_stays_are_booksims() {
    // A line of routers, every node sending a flit a cycle to the far end (`line.cfg`,
    // `lines.csv`): what each flow accepts is set by the credit loops (a credit between
    // routers taken in switch allocation, a cycle before the flit leaves; a node's taken as
    // it injects; a node's own returned 2 cycles after its flit lands), by a head's
    // pipeline, by a body flit's cycle in switch allocation and, waiting for the tail's
    // credit, by the cycle of switch allocation after it, with the default pipeline and
    // routing a router ahead. With one-flit packets, or one VC, reef gives BookSim2's
    // numbers to the cycle. With two VCs and 4-flit packets
    // both settle into one of several periodic patterns, which one depending on the
    // seed (a line of 4 routers with 4-flit buffers: BookSim2 accepts 0.500, 0.500, 0.472,
    // 0.472, 0.500 flits a cycle with seeds 1 to 5, reef 0.500, 0.500, 0.500, 0.472,
    // 0.472; in the slower one the two VCs' heads are in routing and VC allocation in the
    // same cycle and their crossbar input idles), and a source offered exactly what its
    // channel carries accepts what its random packets leave: held to the measured spread.
    let rows = csv_rows("lines.csv");
    assert_eq!(rows.len(), 200);
    let mut timed_rows = 0;
    for r in &rows {
        let num = |k: &str| r[k].parse::<f64>().unwrap();
        let (k, size, vcs) = (num("k"), num("packet_size"), num("num_vcs"));
        let LineRun {
            acc,
            lat,
            b_acc,
            b_lat,
            what,
            timed,
        } = line_run(r);
        timed_rows += timed as usize;
        if size == 1.0 || vcs == 1.0 {
            assert!((acc - b_acc).abs() <= 0.001 * b_acc + 3e-4, "{what}");
            // 4-flit packets on a line of 4 routers, where two flows meet at a switch:
            // the same throughput, but a packet waits at a switch now and then where it did
            // not in BookSim2 (up to 1.2 cycles, 3.6 %, routing a router ahead).
            let lat_tol = if size == 4.0 && k == 4.0 {
                0.04 * b_lat
            } else {
                0.05
            };
            assert!(!timed || (lat - b_lat).abs() <= lat_tol, "{what}");
        } else {
            assert!((acc - b_acc).abs() <= 0.13 * b_acc, "{what}");
            assert!(!timed || (lat - b_lat).abs() <= 0.13 * b_lat, "{what}");
        }
    }
    assert!(timed_rows >= 40, "{timed_rows}");
}

/// BookSim2's batch simulations (`sim_type = batch`, with `max_outstanding_requests` too)
/// and latencies from the front of the source queue (`include_queuing = 0`), against BookSim2's own numbers
/// (`tests/data/booksim/batch.csv`, scripts/booksim-batch.py, seeds 1–4): the mean packet
/// latency and the mean batch duration within the 5 % on every config. BookSim2's
/// batch duration counts the cycle of the last delivery (its loop steps through it): reef's
/// plus one. Measured 2026-11-29 (reef against BookSim2): latency within 3 % everywhere
/// (`torus88` −1.8 %, −2.7 % with `include_queuing = 0`), batch durations within 3 % (a
/// batch ends with its slowest source: the 1-VC 8×8 mesh's was −4.9 % over 200-packet
/// batches, −2.4 % over the 500-packet ones here). docs/booksim.md, "Batch simulations".
#[test]
fn batch_simulations_and_latency_from_the_queues_front_are_booksims() {
    let rows = csv_rows("batch.csv");
    let mut configs: Vec<String> = rows.iter().map(|r| r["config"].clone()).collect();
    configs.dedup();
    assert!(configs.len() >= 10, "{configs:?}");
    for config in configs {
        let mine: Vec<_> = rows.iter().filter(|r| r["config"] == config).collect();
        let n = mine.len() as f64;
        let (mut bs_lat, mut lat, mut bs_dur, mut dur) = (0.0, 0.0, 0.0, 0.0);
        for r in &mine {
            let spec = row_spec(r);
            let batch = !r["batch_duration"].is_empty();
            assert_eq!(
                spec.params.source_queueing,
                !r["command"].contains("include_queuing=0"),
                "{config}"
            );
            let res = run(&spec);
            assert!(!res.saturated, "{config}: {:?}", res.saturation_reason);
            assert_eq!(res.batch.is_some(), batch, "{config}");
            bs_lat += r["packet_latency"].parse::<f64>().unwrap() / n;
            lat += res.packet_latency_cycles.mean / n;
            if let Some(b) = &res.batch {
                // Every packet of the batch is measured and delivered.
                assert_eq!(
                    res.delivered_measured_packets,
                    res.hosts as u64 * b.packets_per_host,
                    "{config}"
                );
                bs_dur += r["batch_duration"].parse::<f64>().unwrap() / n;
                dur += (b.duration_cycles.expect("the batch is through") + 1.0) / n;
            }
        }
        let dev = |a: f64, b: f64| (a - b) / b;
        eprintln!(
            "{config}: packet latency reef {lat:.2}, BookSim2 {bs_lat:.2} ({:+.1} %){}",
            100.0 * dev(lat, bs_lat),
            if bs_dur > 0.0 {
                format!(
                    "; batch {dur:.1} / {bs_dur:.1} ({:+.1} %)",
                    100.0 * dev(dur, bs_dur)
                )
            } else {
                String::new()
            }
        );
        assert!(
            dev(lat, bs_lat).abs() <= 0.05,
            "{config}: latency {lat:.2} against {bs_lat:.2}"
        );
        if bs_dur > 0.0 {
            assert!(
                dev(dur, bs_dur).abs() <= 0.05,
                "{config}: batch {dur:.1} against {bs_dur:.1}"
            );
        }
    }
}

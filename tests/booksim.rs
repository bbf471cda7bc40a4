//! BookSim2 configs as a BookSim2 user brings them: BookSim2's own examples
//! (`tests/data/booksim/examples`, copied from booksim/booksim2 at 28f43299 with their
//! licence), command-line overrides, `reef convert`, the errors, and the zero-load latency
//! of BookSim2's router pipeline.

mod common;
use common::*;
use proptest::prelude::*;
use reef::config;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLES: &str = "tests/data/booksim/examples";

fn reef(args: &[&str]) -> (i32, String, String) {
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
fn every_booksim_example_runs_or_names_what_reef_lacks() {
    // (example, None if it runs, else the key and line the error names)
    let cases: [(&str, Option<(&str, usize)>); 7] = [
        ("torus88", None),
        ("mesh88_lat", None),
        ("cmeshconfig", Some(("topology", 30))),
        ("singleconfig", Some(("topology", 29))),
        ("fattree_config", Some(("topology", 70))),
        ("flatflyconfig", Some(("topology", 75))),
        ("dragonflyconfig", Some(("topology", 73))),
    ];
    for (name, want) in cases {
        let got = config::load(&example(name), &strings(&["sample_period=200"]));
        match (want, got) {
            (None, Ok(spec)) => {
                let r = run(&spec);
                assert!(r.measured_packets > 0 && !r.saturated, "{name}");
            }
            (Some((key, line)), Err(e)) => {
                assert_eq!((e.key.as_str(), e.line), (key, Some(line)), "{name}: {e}");
                assert!(e.file.ends_with(name), "{name}: {e}");
            }
            (want, got) => panic!("{name}: wanted {want:?}, got {:?}", got.map(|_| "a spec")),
        }
    }
    // anynet's config names its network file; reef does not read that format yet.
    let e = config::load(&example("anynet/anynet_config"), &[]).unwrap_err();
    assert!(e.to_string().contains("anynet"), "{e}");
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
    assert!(err.contains("note: ") && err.contains("allocators"), "{err}");
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

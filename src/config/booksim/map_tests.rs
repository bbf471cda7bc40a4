//! Tests of the BookSim2 translation (`map`): each key mapped, refused or noted with its line.

use super::super::{Translation, read};
use super::*;

pub(crate) fn tr(text: &str) -> Result<Translation, MapError> {
    translate(&read("t.cfg", text, &[]).expect("reads"), "t.cfg")
}

pub(crate) fn toml(text: &str) -> toml::Table {
    tr(text).expect("translates").toml.parse().expect("valid TOML")
}

#[test]
fn booksims_torus88_example() {
    let t = toml(
        "topology = torus;\nk = 8;\nn = 2;\nrouting_function = dim_order;\nnum_vcs = 2;\ntraffic = uniform;\ninjection_rate = 0.15;\n",
    );
    assert_eq!(t["topology"]["kind"].as_str(), Some("torus"));
    assert_eq!(t["topology"]["k"].as_array().unwrap().len(), 2);
    // Default pipeline: 1 + 1 + 1 + 0 at the buffer; st_final 1 + torus channel 2 - 1.
    assert_eq!(t["switch"]["router_delay"].as_str(), Some("3 cycles"));
    assert_eq!(t["channel"]["latency"].as_str(), Some("2 cycles"));
    // A credit: the torus channel's 2 cycles, and a cycle more, as the router takes it in
    // switch allocation, a cycle before the flit leaves in reef's terms.
    assert_eq!(t["channel"]["credit_delay"].as_str(), Some("3 cycles"));
    assert_eq!(t["host_channel"]["latency"].as_str(), Some("1 cycle"));
    // A node takes its credit as it injects; it returns one 2 cycles after its flit lands.
    assert_eq!(t["host_channel"]["credit_delay"].as_str(), Some("1 cycle"));
    assert_eq!(t["host"]["credit_return"].as_str(), Some("2 cycles"));
    // A body flit crosses the cycle after its switch allocation.
    assert_eq!(t["switch"]["flit_delay"].as_str(), Some("1 cycle"));
    assert_eq!(t["routing"]["dateline"].as_bool(), Some(true));
    assert_eq!(t["traffic"]["include_self"].as_bool(), Some(true));
    // 0.15 packets of one flit.
    assert_eq!(t["traffic"]["load"].as_float(), Some(0.15));
    // BookSim2's sampling: 1000-cycle periods, 3 of warm-up, at most 10 in all.
    assert_eq!(t["sim"]["sampling"].as_str(), Some("booksim"));
    assert_eq!(t["sim"]["sample_period"].as_str(), Some("1000 cycles"));
    assert_eq!(t["sim"]["warmup_periods"].as_integer(), Some(3));
    assert_eq!(t["sim"]["max_samples"].as_integer(), Some(10));
    assert_eq!(t["sim"]["latency_thres"].as_str(), Some("500 cycles"));
    assert_eq!(t["sim"]["stopping_thres"].as_float(), Some(0.05));
    assert!(t["sim"].get("warmup").is_none() && t["sim"].get("measure").is_none());
}

#[test]
fn the_convergence_test_keys_carry_over() {
    let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\n";
    let t = toml(&format!(
        "{base}latency_thres = -1;\nwarmup_periods = 0;\nacc_stopping_thres = 0.1;\n"
    ));
    assert_eq!(t["sim"]["latency_thres"].as_str(), Some("off"));
    assert_eq!(t["sim"]["warmup_periods"].as_integer(), Some(0));
    assert_eq!(t["sim"]["acc_stopping_thres"].as_float(), Some(0.1));
    let e = tr(&format!("{base}stopping_thres = {{0.05,0.1}};\n")).unwrap_err();
    assert_eq!((e.key, e.from), ("stopping_thres", Some(From::Line(5))));
    let e = tr(&format!("{base}warmup_periods = 10;\n")).unwrap_err();
    assert!(e.msg.contains("leave none to measure"), "{}", e.msg);
}

#[test]
fn sim_count_is_the_number_of_runs() {
    let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\n";
    assert_eq!(toml(base)["sim"]["runs"].as_integer(), Some(1));
    let r = tr(&format!("{base}sim_count = 3;\n")).unwrap();
    let t: toml::Table = r.toml.parse().unwrap();
    assert_eq!(t["sim"]["runs"].as_integer(), Some(3));
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("sim_count") && n.contains("seed + 1")),
        "{:?}",
        r.notes
    );
    for bad in ["0", "1001"] {
        let e = tr(&format!("{base}sim_count = {bad};\n")).unwrap_err();
        assert_eq!((e.key, e.from), ("sim_count", Some(From::Line(5))));
    }
}

#[test]
fn a_throughput_simulation_tests_the_accepted_throughput_only() {
    let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\nsim_type = throughput;\n";
    let t = toml(base);
    assert_eq!(t["sim"]["sampling"].as_str(), Some("booksim-throughput"));
    assert_eq!(t["sim"]["acc_stopping_thres"].as_float(), Some(0.05));
    for key in ["latency_thres", "warmup_thres", "stopping_thres"] {
        assert!(t["sim"].get(key).is_none(), "{key}");
    }
    // Set, the latency's thresholds are noted as not read, as BookSim2 does not.
    let tr = tr(&format!("{base}latency_thres = 100.0;\n")).unwrap();
    assert!(
        tr.notes
            .iter()
            .any(|n| n.contains("latency_thres") && n.contains("throughput")),
        "{:?}",
        tr.notes
    );
}

#[test]
fn wavefront_and_max_size_switch_allocators_but_not_vc_allocators() {
    let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\n";
    for (a, reef) in [
        ("wavefront", "wavefront"),
        ("rr_wavefront", "rr-wavefront"),
        ("max_size", "max-size"),
        ("loa", "loa"),
    ] {
        let t = toml(&format!("{base}sw_allocator = {a};\n"));
        assert_eq!(t["switch"]["allocator"].as_str(), Some(reef));
        let e = tr(&format!("{base}vc_allocator = {a};\n")).unwrap_err();
        assert_eq!((e.key, e.from), ("vc_allocator", Some(From::Line(5))));
    }
}

#[test]
fn an_output_speedup_splits_each_output() {
    let base = "topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\n";
    // At BookSim2's default the switch has no output queue.
    let t = toml(&format!("{base}output_speedup = 1;\n"));
    assert!(t["switch"].get("output_speedup").is_none());
    let t = toml(&format!("{base}output_speedup = 2;\ninput_speedup = 2;\n"));
    assert_eq!(t["switch"]["output_speedup"].as_integer(), Some(2));
    assert_eq!(t["switch"]["speedup"].as_integer(), Some(2));
    for bad in ["0", "17"] {
        let e = tr(&format!("{base}output_speedup = {bad};\n")).unwrap_err();
        assert_eq!((e.key, e.from), ("output_speedup", Some(From::Line(5))), "{bad}");
    }
}

#[test]
fn unmodelled_keys_are_refused_unless_at_their_default() {
    let base = "topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\n";
    // At the default: accepted.
    tr(&format!("{base}internal_speedup = 1.0;\n")).unwrap();
    let e = tr(&format!("{base}vc_busy_when_full = 1;\n")).unwrap_err();
    assert_eq!((e.key, e.from), ("vc_busy_when_full", Some(From::Line(5))));
    assert!(e.msg.contains("only at BookSim2's default (0)"), "{}", e.msg);
    for (line, key) in [
        ("topology = qtree;", "topology"),
        ("routing_function = romm;", "routing_function"),
        ("sw_allocator = pim;", "sw_allocator"),
        ("sim_type = closed;", "sim_type"),
        ("seed = time;", "seed"),
        ("classes = 2;", "classes"),
    ] {
        let e = tr(&format!("{base}{line}\n")).unwrap_err();
        assert_eq!((e.key, e.from), (key, Some(From::Line(5))), "{line}");
    }
    let e = tr("topology = mesh;\nk = 8;\nn = 2;\n").unwrap_err();
    assert_eq!(e.key, "routing_function");
    assert!(e.msg.contains("not set"));
}

#[test]
fn valiant_and_xy_yx_on_meshes_and_tori() {
    let mesh = "topology = mesh;\nk = 8;\nn = 2;\nnum_vcs = 8;\nrouting_function = valiant;\n";
    let t = tr(mesh).unwrap();
    let toml: toml::Table = t.toml.parse().unwrap();
    assert_eq!(toml["routing"]["algorithm"].as_str(), Some("valiant"));
    assert!(
        t.notes.iter().any(|n| n.contains("own seeded stream")),
        "{:?}",
        t.notes
    );
    let xy = mesh.replace("valiant", "xy_yx");
    assert_eq!(self::toml(&xy)["routing"]["algorithm"].as_str(), Some("xy-yx"));
    let axy = mesh.replace("valiant", "adaptive_xy_yx");
    assert_eq!(
        self::toml(&axy)["routing"]["algorithm"].as_str(),
        Some("adaptive-xy-yx")
    );
    let torus = mesh.replace("mesh", "torus");
    let t = tr(&torus).unwrap();
    let toml: toml::Table = t.toml.parse().unwrap();
    assert_eq!(toml["routing"]["algorithm"].as_str(), Some("valiant"));
    assert!(t.notes.iter().any(|n| n.contains("cannot run")), "{:?}", t.notes);
    // Classes of whole VCs, or an error naming num_vcs and its line.
    let mesh = mesh.to_string();
    for (cfg, vcs) in [
        (&mesh, "3"),
        (&mesh, "1"),
        (&xy, "5"),
        (&axy, "3"),
        (&torus, "6"),
        (&torus, "2"),
    ] {
        let e = tr(&cfg.replace("num_vcs = 8", &format!("num_vcs = {vcs}"))).unwrap_err();
        assert_eq!(
            (e.key, e.from),
            ("num_vcs", Some(From::Line(4))),
            "{vcs}: {}",
            e.msg
        );
        assert!(e.msg.contains("needs a multiple of"), "{}", e.msg);
    }
    tr(&mesh.replace("num_vcs = 8", "num_vcs = 2")).unwrap();
    tr(&torus.replace("num_vcs = 8", "num_vcs = 4")).unwrap();
    // min_adapt on a mesh, as BookSim2 runs it: VC 0 the escape, so two VCs at least.
    let ma = mesh.replace("valiant", "min_adapt");
    assert_eq!(
        self::toml(&ma)["routing"]["algorithm"].as_str(),
        Some("booksim-min-adapt")
    );
    let e = tr(&ma.replace("num_vcs = 8", "num_vcs = 1")).unwrap_err();
    assert_eq!((e.key, e.from), ("num_vcs", Some(From::Line(4))));
    assert!(e.msg.contains("escape channel"), "{}", e.msg);
    // BookSim2 has no xy_yx on a torus; nor does reef model ugal on a mesh yet.
    for (cfg, rf) in [
        (&torus, "xy_yx"),
        (&torus, "adaptive_xy_yx"),
        (&mesh, "ugal"),
        (&torus, "romm"),
    ] {
        let e = tr(&cfg.replace("valiant", rf)).unwrap_err();
        assert_eq!((e.key, e.from), ("routing_function", Some(From::Line(5))), "{rf}");
    }
}

#[test]
fn booksims_fly_example() {
    // singleconfig: one 10×10 router (fly.cpp: 1-cycle channels whatever
    // use_noc_latency), dest_tag routing, lookahead routing (routing_delay = 0).
    let t = toml(
        "topology = fly;\nk = 10;\nn = 1;\nnum_vcs = 8;\nrouting_function = dest_tag;\n\
         routing_delay = 0;\nuse_noc_latency = 1;\n",
    );
    assert_eq!(t["topology"]["kind"].as_str(), Some("fly"));
    assert_eq!(t["topology"]["k"].as_integer(), Some(10));
    assert_eq!(t["topology"]["n"].as_integer(), Some(1));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("dest-tag"));
    assert_eq!(t["switch"]["router_delay"].as_str(), Some("2 cycles"));
    assert_eq!(t["channel"]["latency"].as_str(), Some("1 cycle"));
    // The node's channels as the routers', but for their credits (a node's loop).
    assert_eq!(t["host_channel"]["latency"].as_str(), Some("1 cycle"));
    assert_eq!(t["host_channel"]["credit_delay"].as_str(), Some("1 cycle"));
    // A fly does not read use_noc_latency: set away from its default it is a note.
    let n = tr("topology = fly;\nk = 4;\nn = 2;\nrouting_function = dest_tag;\nuse_noc_latency = 0;\n")
        .unwrap()
        .notes
        .join("\n");
    assert!(
        n.contains("t.cfg:5: use_noc_latency = 0: not read by BookSim2's fly"),
        "{n}"
    );
    // Its routing functions: dest_tag only.
    let e = tr("topology = fly;\nk = 4;\nn = 2;\nrouting_function = dor;\n").unwrap_err();
    assert_eq!((e.key, e.from), ("routing_function", Some(From::Line(4))));
    assert!(e.msg.contains("`dor_fly`"), "{}", e.msg);
    let e = tr("topology = fly;\nk = 4;\nn = 2;\n").unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("routing_function = dest_tag;"));
}

#[test]
fn booksims_cmesh_and_flatfly_examples() {
    // cmeshconfig: 4×4 routers of 2×2 nodes, dor_no_express; BookSim2's channel lengths.
    let cm = "topology = cmesh;\nk = 4;\nn = 2;\nc = 4;\nxr = 2;\nyr = 2;\nx = 4;\ny = 4;\n\
              routing_function = dor_no_express;\ntraffic = bitcomp;\n";
    let t = toml(cm);
    assert_eq!(t["topology"]["kind"].as_str(), Some("cmesh"));
    assert_eq!(t["topology"]["k"].as_integer(), Some(4));
    assert_eq!(t["topology"]["noc_latency"].as_bool(), Some(true));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("cmesh-dor"));
    assert_eq!(t["channel"]["latency"].as_str(), Some("1 cycle"));
    // The node's channels as the routers', but for their credits (a node's loop).
    assert_eq!(t["host_channel"]["latency"].as_str(), Some("1 cycle"));
    assert_eq!(t["host_channel"]["credit_delay"].as_str(), Some("1 cycle"));
    let t = toml(&cm.replace("dor_no_express", "dor"));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("cmesh-express"));
    // What BookSim2 asserts is refused with its line.
    for (from, to, key, line) in [
        ("c = 4;", "c = 8;", "c", 4),
        ("yr = 2;", "yr = 1;", "yr", 6),
        ("k = 4;", "k = 5;", "k", 2),
        ("n = 2;", "n = 3;", "n", 3),
        ("y = 4;", "y = 2;", "y", 8),
        ("dor_no_express;", "xy_yx;", "routing_function", 9),
    ] {
        let e = tr(&cm.replace(from, to)).unwrap_err();
        assert_eq!((e.key, e.from), (key, Some(From::Line(line))), "{to}: {}", e.msg);
    }
    // flatflyconfig's network: 4-ary 2-flatfly, 4 nodes a router, ran_min.
    let ff = "topology = flatfly;\nk = 4;\nn = 2;\nc = 4;\nxr = 2;\nyr = 2;\nx = 4;\ny = 4;\n\
              routing_function = ran_min;\nuse_noc_latency = 0;\n";
    let t = toml(ff);
    assert_eq!(t["topology"]["kind"].as_str(), Some("flatfly"));
    assert_eq!(t["topology"]["hosts_per_switch"].as_integer(), Some(4));
    assert_eq!(t["topology"]["routers_per_row"].as_integer(), Some(4));
    assert_eq!(t["topology"]["noc_latency"].as_bool(), Some(false));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("flatfly-min"));
    let e = tr(&ff.replace("x = 4;", "x = 3;").replace("y = 4;", "y = 3;")).unwrap_err();
    assert_eq!((e.key, e.from), ("x", Some(From::Line(7))), "{}", e.msg);
    // valiant, ugal, ugal_pni, xyyx, adaptive_xyyx and ugal_xyyx: the VCs in halves (in
    // quarters for ugal_xyyx), so a multiple of 2 (of 4), and for ugal_pni each half in k =
    // 4 parts of one VC or more, else an error with num_vcs's line.
    for (rf, algo, bad, good) in [
        ("valiant", "flatfly-valiant", ["1", "3", "7"], "2"),
        ("ugal", "flatfly-ugal", ["1", "3", "7"], "2"),
        ("ugal_pni", "flatfly-ugal-pni", ["2", "6", "9"], "10"),
        ("xyyx", "flatfly-xy-yx", ["1", "3", "5"], "2"),
        ("adaptive_xyyx", "flatfly-adaptive-xy-yx", ["1", "3", "5"], "2"),
        ("ugal_xyyx", "flatfly-ugal-xy-yx", ["2", "6", "7"], "4"),
    ] {
        let cfg = ff.replace("ran_min", rf);
        let t = tr(&cfg).unwrap();
        let toml: toml::Table = t.toml.parse().unwrap();
        assert_eq!(toml["routing"]["algorithm"].as_str(), Some(algo));
        assert!(
            t.notes.iter().any(|n| n.contains("own seeded stream")),
            "{:?}",
            t.notes
        );
        let credits = t.notes.iter().any(|n| n.contains("credits used"));
        assert_eq!(credits, rf.contains("ugal") || rf == "adaptive_xyyx", "{rf}");
        for vcs in bad {
            let e = tr(&format!("{cfg}num_vcs = {vcs};\n")).unwrap_err();
            assert_eq!((e.key, e.from), ("num_vcs", Some(From::Line(11))), "{}", e.msg);
            assert!(e.msg.contains("needs a multiple of"), "{}", e.msg);
        }
        tr(&format!("{cfg}num_vcs = {good};\n")).unwrap();
    }
    // ugal_pni asserts k = c: with k = 2 and c = 4 an error with c's line.
    let pni = ff.replace("ran_min", "ugal_pni").replace("k = 4;", "k = 2;");
    let e = tr(&format!("{pni}num_vcs = 8;\n")).unwrap_err();
    assert_eq!((e.key, e.from), ("c", Some(From::Line(4))), "{}", e.msg);
    assert!(e.msg.contains("c = k"), "{}", e.msg);
    let e = tr(&ff.replace("ran_min", "romm")).unwrap_err();
    assert!(e.msg.contains("`romm_flatfly`"), "{}", e.msg);
    assert_eq!(
        e.hint.as_deref(),
        Some("on a flatfly reef runs ran_min, valiant, ugal, ugal_pni, xyyx, adaptive_xyyx and ugal_xyyx")
    );
}

#[test]
fn booksims_fattree_example() {
    // fattree_config's network: a 4-ary 3-tree, nca routing, one-flit packets with
    // hold_switch_for_packet.
    let cfg = "topology = fattree;\nk = 4;\nn = 3;\nrouting_function = nca;\nnum_vcs = 4;\n\
               routing_delay = 0;\nhold_switch_for_packet = 1;\npacket_size = 1;\n";
    let t = toml(cfg);
    assert_eq!(t["topology"]["kind"].as_str(), Some("booksim-fattree"));
    assert_eq!(t["topology"]["k"].as_integer(), Some(4));
    assert_eq!(t["topology"]["n"].as_integer(), Some(3));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("nca"));
    assert_eq!(t["switch"]["selection"].as_str(), Some("random-any"));
    // Its default VC allocator is islip: one iteration is output-first, blind to the
    // routing's priorities.
    assert_eq!(t["switch"]["vc_allocator"].as_str(), Some("islip"));
    let t = toml(&format!("{cfg}vc_allocator = separable_output_first;\n"));
    assert_eq!(
        t["switch"]["vc_allocator"].as_str(),
        Some("separable-output-first")
    );
    let t = toml(&format!("{cfg}vc_allocator = separable_input_first;\n"));
    assert_eq!(
        t["switch"]["vc_allocator"].as_str(),
        Some("separable-input-first")
    );
    assert_eq!(t["switch"]["router_delay"].as_str(), Some("2 cycles"));
    assert_eq!(t["channel"]["latency"].as_str(), Some("1 cycle"));
    // The node's channels as the routers', but for their credits (a node's loop).
    assert_eq!(t["host_channel"]["latency"].as_str(), Some("1 cycle"));
    assert_eq!(t["host_channel"]["credit_delay"].as_str(), Some("1 cycle"));
    let n = tr(cfg).unwrap().notes.join("\n");
    assert!(
        n.contains("t.cfg:7: hold_switch_for_packet = 1: every packet is one flit"),
        "{n}"
    );
    // With packets of more than one flit it would hold the crossbar: refused.
    for sizes in ["packet_size = 2;", "packet_size = {1,4};"] {
        let e = tr(&format!("{cfg}{sizes}\n")).unwrap_err();
        assert_eq!(
            (e.key, e.from),
            ("hold_switch_for_packet", Some(From::Line(7))),
            "{sizes}"
        );
    }
    // A size list whose other sizes are never drawn is one flit a packet.
    tr(&format!(
        "{cfg}packet_size = {{1,4}};\npacket_size_rate = {{1,0}};\n"
    ))
    .unwrap();
    // anca: the nca routes, the up port the less used of two drawn at random.
    let t = tr("topology = fattree;\nk = 4;\nn = 3;\nrouting_function = anca;\n").unwrap();
    let toml: toml::Table = t.toml.parse().unwrap();
    assert_eq!(toml["routing"]["algorithm"].as_str(), Some("nca"));
    assert_eq!(
        toml["switch"]["selection"].as_str(),
        Some("two-random-least-used")
    );
    assert!(
        t.notes.iter().any(|n| n.contains("a router ahead")),
        "{:?}",
        t.notes
    );
    let e = tr("topology = fattree;\nk = 4;\nn = 3;\nrouting_function = dor;\n").unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("on a fattree reef runs nca and anca"));
    // fattree.cpp sets every channel to 1 cycle: use_noc_latency is not read.
    let n = tr("topology = fattree;\nk = 2;\nn = 2;\nrouting_function = nca;\nuse_noc_latency = 0;\n")
        .unwrap()
        .notes
        .join("\n");
    assert!(
        n.contains("t.cfg:5: use_noc_latency = 0: not read by BookSim2's fattree"),
        "{n}"
    );
}

#[test]
fn output_keys_are_noted_not_refused() {
    let t = tr("topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\nwatch_out = -;\nbatch_size = 2000;\nc = 4;\n")
        .unwrap();
    let all = t.notes.join("\n");
    assert!(
        all.contains("t.cfg:5: watch_out = -: BookSim2's own trace"),
        "{all}"
    );
    assert!(
        all.contains("t.cfg:6: batch_size = 2000: used only when sim_type = batch"),
        "{all}"
    );
    assert!(
        all.contains("t.cfg:7: c = 4: not read by BookSim2's mesh"),
        "{all}"
    );
    // The notes are in the TOML as comments.
    assert!(t.toml.contains("# note: t.cfg:5: watch_out"));
}

#[test]
fn origins_point_at_the_booksim_key() {
    let t = tr("topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\nnum_vcs = 4;\n").unwrap();
    let o = t.origins.iter().find(|o| o.0 == "channel.vcs").unwrap();
    assert_eq!((o.1, o.2), ("num_vcs", Some(From::Line(5))));
    let o = t.origins.iter().find(|o| o.0 == "channel.buffer").unwrap();
    assert_eq!((o.1, o.2), ("vc_buf_size", None));
}

#[test]
fn booksims_dragonfly_example() {
    // dragonflyconfig's network and router, but its internal_speedup = 2.0.
    let df = "topology = dragonflynew;\nk = 4;\nn = 1;\nrouting_function = min;\nnum_vcs = 2;\n\
              vc_buf_size = 256;\ncredit_delay = 2;\nrouting_delay = 0;\npacket_size = 10;\n";
    let t = toml(df);
    assert_eq!(t["topology"]["kind"].as_str(), Some("dragonfly"));
    assert_eq!(t["topology"]["hosts_per_switch"].as_integer(), Some(4));
    // DRAGON_LATENCY: 10 and 100 cycles, which the fabric adds to these.
    assert_eq!(t["topology"]["noc_latency"].as_bool(), Some(true));
    assert_eq!(t["channel"]["latency"].as_str(), Some("1 cycle"));
    assert_eq!(t["channel"]["credit_delay"].as_str(), Some("4 cycles"));
    assert_eq!(t["host"]["credit_return"].as_str(), Some("4 cycles"));
    assert_eq!(t["switch"]["router_delay"].as_str(), Some("2 cycles"));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("dragonfly-min"));
    // BookSim2 asserts n == 1; min needs VC 1; ugal is not modelled yet.
    let e = tr(&df.replace("n = 1", "n = 2")).unwrap_err();
    assert_eq!((e.key, e.from), ("n", Some(From::Line(3))));
    let e = tr(&df.replace("num_vcs = 2", "num_vcs = 1")).unwrap_err();
    assert_eq!((e.key, e.from), ("num_vcs", Some(From::Line(5))));
    // ugal: 3 VCs, as BookSim2 asserts.
    let ugal = df.replace("= min", "= ugal");
    let e = tr(&ugal).unwrap_err();
    assert_eq!((e.key, e.from), ("num_vcs", Some(From::Line(5))));
    let t = toml(&ugal.replace("num_vcs = 2", "num_vcs = 3"));
    assert_eq!(t["routing"]["algorithm"].as_str(), Some("dragonfly-ugal"));
    let e = tr(&df.replace("= min", "= valiant")).unwrap_err();
    assert_eq!((e.key, e.from), ("routing_function", Some(From::Line(4))));
    assert!(e.msg.contains("`valiant_dragonflynew`"), "{}", e.msg);
    // internal_speedup = 2.0, as the example sets it: two allocations a cycle, a step
    // (half a cycle) for VC allocation with routing_delay = 0, a body flit allocated as it
    // lands, credits from the edge of the allocating cycle.
    let fast = toml(&format!("{df}internal_speedup = 2.0;\n"));
    let sw = &fast["switch"];
    assert_eq!(sw["internal_speedup"].as_integer(), Some(2));
    assert_eq!(sw["router_delay"].as_str(), Some("0.5 cycles"));
    assert_eq!(sw["flit_delay"].as_str(), Some("0 cycles"));
    assert_eq!(sw["vc_reuse_delay"].as_str(), Some("1 cycle"));
    assert_eq!(fast["channel"]["credit_delay"].as_str(), Some("4 cycles"));
    assert_eq!(fast["host_channel"]["credit_delay"].as_str(), Some("2 cycles"));
    assert_eq!(fast["host"]["credit_return"].as_str(), Some("2 cycles"));
    // Other speed-ups, and pipelines whose stages span steps, are refused with the line.
    for (extra, key) in [
        ("internal_speedup = 1.5;", "internal_speedup"),
        ("internal_speedup = 3.0;", "internal_speedup"),
        ("internal_speedup = 2.0;\nvc_alloc_delay = 2;", "vc_alloc_delay"),
        (
            "internal_speedup = 2.0;\nst_prepare_delay = 1;",
            "st_prepare_delay",
        ),
        (
            "internal_speedup = 2.0;\nwait_for_tail_credit = 1;",
            "wait_for_tail_credit",
        ),
        ("internal_speedup = 2.0;\ninput_speedup = 2;", "input_speedup"),
        ("internal_speedup = 2.0;\noutput_speedup = 2;", "output_speedup"),
    ] {
        let e = tr(&format!("{df}{extra}\n")).unwrap_err();
        assert_eq!(e.key, key, "{extra}: {}", e.msg);
        assert!(
            matches!(e.from, Some(From::Line(10 | 11))),
            "{extra}: {:?}",
            e.from
        );
    }
    let e = tr(&df.replace("k = 4", "k = 9")).unwrap_err();
    assert_eq!((e.key, e.from), ("k", Some(From::Line(2))));
}

/// `min_adapt` on a torus, as BookSim2 runs it (`min_adapt_torus`): VCs 0 and 1 the escape,
/// VC 3 the adaptive one; 2 VCs run (every packet in the escape), 1 and 3 are refused with
/// the line, where BookSim2's VC allocator asserts.
#[test]
fn min_adapt_on_a_torus() {
    let torus = "topology = torus;\nk = 8;\nn = 2;\nrouting_function = min_adapt;\nnum_vcs = 4;\n";
    let t = tr(torus).unwrap();
    let toml: toml::Table = t.toml.parse().unwrap();
    assert_eq!(toml["routing"]["algorithm"].as_str(), Some("booksim-min-adapt"));
    assert_eq!(toml["channel"]["vcs"].as_integer(), Some(4));
    assert!(
        t.notes.iter().any(|n| n.contains("min_adapt_torus")),
        "{:?}",
        t.notes
    );
    assert!(
        t.notes.iter().any(|n| n.contains("flips a coin")),
        "{:?}",
        t.notes
    );
    for vcs in [2, 8] {
        let t = self::toml(&torus.replace("num_vcs = 4", &format!("num_vcs = {vcs}")));
        assert_eq!(
            t["routing"]["algorithm"].as_str(),
            Some("booksim-min-adapt"),
            "{vcs}"
        );
    }
    for vcs in [1, 3] {
        let e = tr(&torus.replace("num_vcs = 4", &format!("num_vcs = {vcs}"))).unwrap_err();
        assert_eq!(
            (e.key, e.from),
            ("num_vcs", Some(From::Line(5))),
            "{vcs}: {}",
            e.msg
        );
        assert!(e.msg.contains("vc_start < _vcs"), "{}", e.msg);
    }
    // The translation loads: reef's config takes it on a torus (not its own min-adapt).
    let spec = crate::config::load_str("t.toml", &tr(torus).unwrap().toml, std::path::Path::new("."), &[])
        .expect("loads");
    assert_eq!(spec.routing.name(), "booksim-min-adapt");
}

#[test]
fn a_batch_simulation_sends_batch_size_packets_a_node_batch_count_times() {
    let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\n";
    let t = tr(&format!(
        "{base}sim_type = batch;\nbatch_size = 300;\nbatch_count = 3;\nsim_count = 2;\ninjection_rate = 0.2;\nsample_period = 500;\n"
    ))
    .unwrap();
    let table: toml::Table = t.toml.parse().unwrap();
    assert_eq!(table["traffic"]["injection"].as_str(), Some("batch"));
    assert_eq!(table["traffic"]["batch"].as_integer(), Some(300));
    // No load, no sampling: a batch source makes a packet a cycle, and every packet counts.
    assert!(table["traffic"].get("load").is_none());
    assert!(table["sim"].get("sampling").is_none());
    // Each batch becomes a run of its own, for every one of BookSim2's runs.
    assert_eq!(table["sim"]["runs"].as_integer(), Some(6));
    let notes = t.notes.join("\n");
    for (line, what) in [
        (
            "t.cfg:7",
            "batch_count = 3: BookSim2 sends its batches one after another",
        ),
        ("t.cfg:9", "injection_rate = 0.2: not read by a batch simulation"),
        ("t.cfg:10", "sample_period = 500: not read by a batch simulation"),
    ] {
        assert!(notes.contains(&format!("{line}: {what}")), "{notes}");
    }
    // 1000 runs at most, in all.
    let e = tr(&format!(
        "{base}sim_type = batch;\nbatch_count = 100;\nsim_count = 11;\n"
    ))
    .unwrap_err();
    assert_eq!(e.key, "sim_count");
    assert!(e.msg.contains("1100 runs"), "{}", e.msg);
    // Outside a batch, batch_count neither counts nor is named as where the runs come from.
    let t = tr(&format!("{base}batch_count = 3;\n")).unwrap();
    assert!(
        t.notes
            .join("\n")
            .contains("t.cfg:5: batch_count = 3: used only when sim_type = batch")
    );
    let runs = t.toml.lines().find(|l| l.starts_with("runs = ")).unwrap();
    assert!(
        runs.starts_with("runs = 1 ") && !runs.contains("batch_count"),
        "{runs}"
    );
    // A window of packets in flight.
    let t = toml(&format!(
        "{base}sim_type = batch;\nmax_outstanding_requests = 4;\n"
    ));
    assert_eq!(t["traffic"]["max_outstanding"].as_integer(), Some(4));
    let t = toml(&format!(
        "{base}sim_type = batch;\nmax_outstanding_requests = -1;\n"
    ));
    assert!(t["traffic"].get("max_outstanding").is_none());
    let e = tr(&format!("{base}sim_type = batch;\nbatch_size = 0;\n")).unwrap_err();
    assert_eq!((e.key, e.from), ("batch_size", Some(From::Line(6))));
}

#[test]
fn include_queuing_0_dates_a_packet_at_the_front_of_its_queue() {
    let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\ninjection_rate = 0.1;\n";
    let t = toml(&format!("{base}include_queuing = 0;\n"));
    assert_eq!(t["sim"]["source_queueing"].as_bool(), Some(false));
    // At BookSim2's default the key is not written: reef's default is the same.
    let t = toml(base);
    assert!(t["sim"].get("source_queueing").is_none());
}

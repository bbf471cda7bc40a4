//! `reef reproduce atm`: the Penn ATM host interface reproduction as its users see it — the
//! records the issue requires, the published points it must meet, its safety property under
//! bit errors, determinism, and the command line.

mod common;

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::OnceLock;

use common::{find, quick};

use reef::systems::Report;
use reef::systems::atm::bus::{Bus, MicroChannel};
use reef::systems::atm::calibrate::calibrate;
use reef::systems::atm::params::{PUBLISHED, TABLE_I_BYTES};
use reef::systems::atm::reassembler::{PENN_STAGES, Pipeline};

/// The quick run with seed 1, made once for the tests that only read it.
fn quick_report() -> &'static Report {
    static REPORT: OnceLock<Report> = OnceLock::new();
    REPORT.get_or_init(|| quick("atm", 1))
}

/// Every (experiment, case keys, metric) the table names is there, and nothing else.
#[test]
fn quick_reproduction_has_exactly_the_required_records() {
    let r = quick_report();
    assert_eq!(r.system, "atm");
    assert_eq!(
        r.experiments(),
        ["write-size", "bus-ceiling", "reassembler", "end-to-end", "errors"]
    );
    let spec: [(&str, &[&str], &[&str]); 5] = [
        ("write-size", &["buffer_kb", "driver"], &["mbit_per_s"]),
        ("bus-ceiling", &["mode"], &["mbit_per_s"]),
        (
            "reassembler",
            &[],
            &[
                "cell_rate_per_s",
                "mbit_per_s",
                "latency_us",
                "bottleneck_stage_ns",
            ],
        ),
        (
            "end-to-end",
            &["frame_bytes"],
            &["goodput_mbit_per_s", "link_ceiling_mbit_per_s"],
        ),
        (
            "errors",
            &["bit_error_rate"],
            &[
                "cells_dropped",
                "frames_dropped",
                "frames_delivered_corrupt",
                "undetected_rate_analytical",
            ],
        ),
    ];
    common::assert_record_names(r, &spec);
    // The cases themselves.
    let drivers: BTreeSet<String> = r
        .of("write-size")
        .iter()
        .map(|x| x.case["driver"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        drivers,
        ["copy", "fault-on-write", "nocopy"].map(String::from).into()
    );
    let kb: BTreeSet<u64> = r
        .of("write-size")
        .iter()
        .map(|x| x.case["buffer_kb"].as_u64().unwrap())
        .collect();
    assert_eq!(kb, [1, 2, 4, 8, 16, 32, 64].into());
    let modes: BTreeSet<&str> = r
        .of("bus-ceiling")
        .iter()
        .map(|x| x.case["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["duty-cycle", "sustained"].into());
    let frames: Vec<u64> = r
        .of("end-to-end")
        .iter()
        .map(|x| x.case["frame_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(frames.iter().min(), Some(&64));
    assert_eq!(frames.iter().max(), Some(&65_535));
    let bers: BTreeSet<String> = r
        .of("errors")
        .iter()
        .map(|x| format!("{:e}", x.case["bit_error_rate"].as_f64().unwrap()))
        .collect();
    for p in ["1e-9", "1e-8", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3"] {
        assert!(bers.contains(p), "{p} missing from {bers:?}");
    }
    // The JSON is {"system": "atm", "records": [...]}.
    let j: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(j["system"], "atm");
    assert_eq!(j["records"].as_array().unwrap().len(), r.records.len());
}

/// Table I: the calibrated copy driver within 10 % of every published point, in the report
/// and straight from the calibration.
#[test]
fn copy_driver_reproduces_table_i_within_ten_percent() {
    let r = quick_report();
    for row in PUBLISHED.table_i {
        let rec = find(
            r,
            "write-size",
            &[("buffer_kb", row.buffer_kb.into()), ("driver", "copy".into())],
            "mbit_per_s",
        );
        assert_eq!(rec.published, Some(row.mbit_per_s));
        let dev = rec.deviation().unwrap();
        assert!(dev.abs() < 0.10, "{} KB: {:+.1}%", row.buffer_kb, 100.0 * dev);
    }
    let c = calibrate(MicroChannel::PENN).unwrap();
    assert!(c.worst_deviation() < 0.10);
    assert!(
        r.notes.iter().any(|n| n.contains("calibrated from Table I")
            && n.contains(&format!("{:.1} us", c.overhead_us))
            && n.contains(&format!("{:.2} MB/s", c.copy_mb_per_s))),
        "the report names the calibrated values"
    );
}

/// The no-copy drivers never do worse than copying, and fault-on-write does at least as well
/// as blocking: their gain is reported.
#[test]
fn no_copy_drivers_gain() {
    let r = quick_report();
    for row in PUBLISHED.table_i {
        let at = |d: &str| {
            find(
                r,
                "write-size",
                &[("buffer_kb", row.buffer_kb.into()), ("driver", d.into())],
                "mbit_per_s",
            )
        };
        let (copy, nocopy, fow) = (at("copy"), at("nocopy"), at("fault-on-write"));
        assert!(nocopy.simulated > copy.simulated, "{}", row.buffer_kb);
        assert!(fow.simulated >= nocopy.simulated, "{}", row.buffer_kb);
        assert!(nocopy.source.contains("over the copy driver"), "{nocopy:?}");
        // Nothing beats the bus.
        assert!(fow.simulated <= MicroChannel::PENN.ceiling_mbit() * 1.0001);
    }
}

/// 64 B per 1.6 + 2.0 µs = 142.2 Mb/s, and the model streams at exactly that.
#[test]
fn bus_ceiling_arithmetic() {
    let mc = MicroChannel::PENN;
    assert!((mc.ceiling_mbit() - 64.0 * 8.0 / 3.6).abs() < 1e-9);
    let r = quick_report();
    let duty = find(r, "bus-ceiling", &[("mode", "duty-cycle".into())], "mbit_per_s");
    assert!((duty.simulated - mc.ceiling_mbit()).abs() < 0.01, "{duty:?}");
    assert!(duty.deviation().unwrap().abs() < 0.01);
    let rate = Bus::streaming_rate_mbit(mc, TABLE_I_BYTES, 64 * 1024);
    assert!((rate - duty.simulated).abs() < 1e-9);
    let sustained = find(r, "bus-ceiling", &[("mode", "sustained".into())], "mbit_per_s");
    assert_eq!(sustained.published, Some(130.0));
    assert!(sustained.simulated <= duty.simulated);
}

/// Five cell managers at 2.6 µs give 520 ns per cell, the CAM 550 ns, the list manager
/// 600 ns: the list manager bounds the pipeline at 1.667 M cells/s = 706.7 Mb/s on 53-byte
/// cells; a cell's latency is the sum of the stages.
#[test]
fn reassembler_pipeline_arithmetic() {
    let r = quick_report();
    let empty: [(&str, serde_json::Value); 0] = [];
    let bottleneck = find(r, "reassembler", &empty, "bottleneck_stage_ns");
    assert!((bottleneck.simulated - 600.0).abs() < 1e-9);
    assert!(
        bottleneck.source.contains("linked-list manager"),
        "{bottleneck:?}"
    );
    let cells = find(r, "reassembler", &empty, "cell_rate_per_s");
    assert!((cells.simulated - 1e9 / 600.0).abs() < 1.0, "{cells:?}");
    let mbit = find(r, "reassembler", &empty, "mbit_per_s");
    assert!(
        (mbit.simulated - 1e9 / 600.0 * 424.0 / 1e6).abs() < 0.01,
        "{mbit:?}"
    );
    assert!(mbit.deviation().unwrap().abs() < 0.02, "about 700 Mb/s");
    let latency = find(r, "reassembler", &empty, "latency_us");
    let sum: u64 = PENN_STAGES.iter().map(|s| s.time).sum();
    assert!((latency.simulated - sum as f64 / 1e6).abs() < 1e-9, "{latency:?}");
    assert!(latency.deviation().unwrap().abs() < 0.10, "about 4 us");
    // The same from the pipeline directly: a lone cell takes the sum.
    let mut p = Pipeline::penn();
    assert_eq!(p.push(0), Some(sum));
}

/// At 10⁻⁹ … 10⁻⁵ no corrupt frame is delivered, and errors were really injected; above,
/// the analytical rate stands beside the simulated count.
#[test]
fn no_corrupt_frame_at_low_bit_error_rates() {
    let r = quick_report();
    let mut dropped_somewhere = false;
    for x in r.of("errors") {
        let p = x.case["bit_error_rate"].as_f64().unwrap();
        if x.metric == "frames_delivered_corrupt" && p <= 1e-5 {
            assert_eq!(x.simulated, 0.0, "{x:?}");
        }
        if x.metric == "cells_dropped" && p <= 1e-5 && x.simulated > 0.0 {
            dropped_somewhere = true;
        }
        if x.metric == "undetected_rate_analytical" {
            assert!(x.simulated >= 0.0 && x.simulated < 1e-3, "{x:?}");
        }
    }
    assert!(dropped_somewhere, "no error was injected at the low rates");
    let high = find(
        r,
        "errors",
        &[("bit_error_rate", 1e-2.into())],
        "frames_delivered_corrupt",
    );
    assert!(
        high.simulated > 0.0,
        "at 1e-2 undetected errors are expected: {high:?}"
    );
}

/// End-to-end goodput never exceeds the link's ceiling, and every ceiling is under 44/53 of
/// 149.76 Mb/s.
#[test]
fn end_to_end_respects_the_link() {
    let r = quick_report();
    let limit = 149.76 * 44.0 / 53.0;
    for x in r.of("end-to-end") {
        let case: Vec<(&str, serde_json::Value)> = vec![("frame_bytes", x.case["frame_bytes"].clone())];
        let ceiling = find(r, "end-to-end", &case, "link_ceiling_mbit_per_s");
        assert!(ceiling.simulated <= limit * 1.0001, "{ceiling:?}");
        assert!((ceiling.published.unwrap() - limit).abs() < 0.01);
        if x.metric == "goodput_mbit_per_s" {
            assert!(
                x.simulated > 0.0 && x.simulated <= ceiling.simulated * 1.0001,
                "{x:?}"
            );
        }
    }
}

/// The same seed gives the same JSON, bit for bit; another seed changes the random parts.
#[test]
fn determinism() {
    let a = quick_report().json();
    assert_eq!(a, quick("atm", 1).json());
    assert_ne!(a, quick("atm", 2).json());
}

#[test]
fn command_line_writes_json_csv_and_the_plot() {
    let dir = std::env::temp_dir().join(format!("reef-atm-{}", std::process::id()));
    let json = dir.join("atm.json");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(["reproduce", "atm", "--quick", "--quiet", "--json"])
        .arg(&json)
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("run reef");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for e in [
        "== write-size",
        "== bus-ceiling",
        "== reassembler",
        "== end-to-end",
        "== errors",
    ] {
        assert!(stdout.contains(e), "{e} missing");
    }
    assert!(stdout.contains("linked-list manager"));
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["system"], "atm");
    let svg = std::fs::read_to_string(dir.join("write-size.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Table I") && svg.contains("fault-on-write"));
    // Issue 31: sizes on a log axis, labelled in KB (1, 2, 4 … 64), not "log2 KB 0.0–6.0".
    let ticks: Vec<&str> = svg
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(str::trim)
        .collect();
    assert!(!svg.contains("log2"), "write-size.svg");
    for kb in ["1", "2", "4", "8", "16", "32", "64"] {
        assert!(ticks.contains(&kb), "tick {kb}: {ticks:?}");
    }
    let e2e = std::fs::read_to_string(dir.join("end-to-end.svg")).unwrap();
    assert!(
        !e2e.contains("log2") && e2e.contains("frame size [bytes]"),
        "end-to-end.svg"
    );
    for csv in [
        "write-size.csv",
        "bus-ceiling.csv",
        "reassembler.csv",
        "end-to-end.csv",
        "errors.csv",
    ] {
        assert!(dir.join(csv).exists(), "{csv}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

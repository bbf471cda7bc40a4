//! `reef reproduce clan`: the CLAN reproduction as its users see it — the records the issue
//! requires, the calibration figures within 5 %, the shape of the curves, determinism and
//! the command line.

mod common;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use common::{find, quick, reef_writing};
use reef::systems::Report;
use reef::systems::clan::stream_sizes;
use serde_json::json;

fn quick_report() -> &'static Report {
    static REPORT: OnceLock<Report> = OnceLock::new();
    REPORT.get_or_init(|| quick("clan", 1))
}

/// Every (experiment, case keys, metric) of the table is there, with the systems
/// and sizes it names.
#[test]
fn quick_reproduction_has_the_required_records() {
    let r = quick_report();
    assert_eq!(r.system, "clan");
    let spec: [(&str, &[&str], &[&str]); 6] = [
        ("round-trip", &["system", "size_bytes"], &["rtt_us"]),
        ("streaming", &["system", "size_bytes"], &["bandwidth_Mbps"]),
        (
            "streaming-summary",
            &["system"],
            &[
                "max_Mbps",
                "max_size_bytes",
                "half_max_size_bytes",
                "buffer_bytes_per_endpoint",
            ],
        ),
        ("transactions", &["system", "outstanding"], &["requests_per_s"]),
        (
            "transactions-summary",
            &["system"],
            &["max_requests_per_s", "server_us_per_message"],
        ),
        (
            "buffer-scaling",
            &["system"],
            &["bytes_per_endpoint_90pct", "MB_for_1000_endpoints"],
        ),
    ];
    common::assert_record_names(r, &spec);
    for x in &r.records {
        assert!(x.simulated > 0.0, "{x:?}");
    }
    let systems = |e: &str| -> BTreeSet<String> {
        r.of(e)
            .iter()
            .map(|x| x.case["system"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        systems("round-trip"),
        ["clan-poll", "clan-sleep", "gige", "via"]
            .map(String::from)
            .into()
    );
    for e in ["streaming", "transactions", "buffer-scaling"] {
        assert_eq!(
            systems(e),
            ["clan", "gige", "via"].map(String::from).into(),
            "{e}"
        );
    }
    let sizes: BTreeSet<u64> = r
        .of("streaming")
        .iter()
        .map(|x| x.case["size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, stream_sizes().into_iter().collect());
    assert_eq!(sizes.first(), Some(&16));
    assert_eq!(sizes.last(), Some(&65_536));
    let outstanding: BTreeSet<u64> = r
        .of("transactions")
        .iter()
        .map(|x| x.case["outstanding"].as_u64().unwrap())
        .collect();
    assert_eq!(outstanding.first(), Some(&1));
    assert_eq!(outstanding.last(), Some(&64));
    let j: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(j["system"], "clan");
    assert_eq!(j["records"].as_array().unwrap().len(), r.records.len());
}

/// The figures the spec gives as calibration inputs come out within 5 %.
#[test]
fn calibration_figures_within_five_percent() {
    let r = quick_report();
    let check = |e: &str, case: &[(&str, serde_json::Value)], m: &str| {
        let x = find(r, e, case, m);
        let d = x.deviation().expect("a published figure");
        assert!(d.abs() < 0.05, "{x:?}");
    };
    for sys in ["clan-poll", "clan-sleep", "gige", "via"] {
        check(
            "round-trip",
            &[("system", json!(sys)), ("size_bytes", json!(40))],
            "rtt_us",
        );
    }
    for sys in ["clan", "gige", "via"] {
        check(
            "transactions-summary",
            &[("system", json!(sys))],
            "max_requests_per_s",
        );
    }
    check("calibration", &[], "app_to_app_us");
}

/// The curves have the shape the model implies: CLAN's bandwidth grows with the transfer
/// size towards the link, its transaction rate grows with the requests outstanding until
/// the server saturates, and it needs far less buffer than the baselines.
#[test]
fn curves_have_their_shape() {
    let r = quick_report();
    let bw = |sys: &str, s: u64| {
        find(
            r,
            "streaming",
            &[("system", json!(sys)), ("size_bytes", json!(s))],
            "bandwidth_Mbps",
        )
        .simulated
    };
    assert!(bw("clan", 16) < bw("clan", 256) && bw("clan", 256) < bw("clan", 65536));
    for sys in ["clan", "gige", "via"] {
        assert!(bw(sys, 65536) <= 1000.0, "{sys}: above the link");
    }
    let rate = |sys: &str, o: u32| {
        find(
            r,
            "transactions",
            &[("system", json!(sys)), ("outstanding", json!(o))],
            "requests_per_s",
        )
        .simulated
    };
    for sys in ["clan", "gige", "via"] {
        assert!(
            rate(sys, 1) < rate(sys, 2) && rate(sys, 2) <= rate(sys, 64) * 1.0001,
            "{sys}"
        );
    }
    // One outstanding request: one per round trip.
    let rtt = find(
        r,
        "round-trip",
        &[("system", json!("clan-poll")), ("size_bytes", json!(40))],
        "rtt_us",
    )
    .simulated;
    assert!((rate("clan", 1) * rtt * 1e-6 - 1.0).abs() < 0.02);
    let need = |sys: &str| {
        find(
            r,
            "buffer-scaling",
            &[("system", json!(sys))],
            "bytes_per_endpoint_90pct",
        )
        .simulated
    };
    assert!(need("clan") <= 10.0 * 1024.0, "CLAN within its 10 KB");
    assert!(need("clan") < need("gige") && need("clan") < need("via"));
}

/// The spec's buffers per endpoint are the 2001 configurations, not measured 90 % points:
/// buffer-scaling shows them as context, with no deviation that would pass for a miss or
/// a match.
#[test]
fn buffer_scaling_shows_the_configured_buffers_as_context() {
    let r = quick_report();
    for (sys, used) in [("clan", "10240"), ("gige", "524288"), ("via", "262144")] {
        let x = find(
            r,
            "buffer-scaling",
            &[("system", json!(sys))],
            "bytes_per_endpoint_90pct",
        );
        assert_eq!(x.published, None, "{x:?}");
        assert!(x.source.contains("context") && x.source.contains(used), "{x:?}");
    }
}

/// Same seed, same output, bit for bit.
#[test]
fn reproduction_is_deterministic() {
    assert_eq!(quick("clan", 1).json(), quick_report().json());
}

#[test]
fn cli_reproduce_clan_writes_json_csv_and_plots() {
    let dir = std::env::temp_dir().join(format!("reef-clan-{}", std::process::id()));
    let json = dir.join("clan.json");
    let out = reef_writing(&["reproduce", "clan", "--quick", "--quiet"], &json, &dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("== round-trip") && text.contains("== buffer-scaling"),
        "{text}"
    );
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["system"], "clan");
    for f in [
        "streaming.svg",
        "transactions.svg",
        "streaming.csv",
        "round-trip.csv",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

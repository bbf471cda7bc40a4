//! The micro-benchmarks on the 8×8 torus: streaming bandwidth and ping-pong latency against
//! message size at 1 and 7 hops, the cost of a hop, and the latency variation, each beside
//! the paper's figures in `params`.

use super::super::calibrate::Calibration;
use super::super::params as P;
use super::{Bench, Job, VARIATION_SAMPLES, case, count, mbps, plot_artifact, run_job, sizes, us};
use crate::report::plot::{Plot, Series};
use crate::systems::{Options, Record, Report, par_map};
use crate::time::US;
use crate::workload::message::{Kind, SizeResult};
use serde_json::json;

/// The streaming and ping-pong runs, at 1 and 7 hops, and the latency variation's run.
pub(super) fn message_runs(
    rep: &mut Report,
    b: &Bench,
    cal: &Calibration,
    opts: &Options,
) -> Result<(), String> {
    let sz = sizes(opts.quick);
    let mut jobs = Vec::new();
    for kind in [Kind::Streaming, Kind::PingPong] {
        for hops in [1, 7] {
            for &size in &sz {
                jobs.push(Job {
                    kind,
                    hops,
                    size,
                    count: count(kind, size, opts.quick),
                    host: cal.host(kind == Kind::PingPong),
                });
            }
        }
    }
    let samples = VARIATION_SAMPLES[usize::from(opts.quick)];
    jobs.push(Job {
        kind: Kind::PingPong,
        hops: 7,
        size: 8,
        count: samples,
        host: cal.host(true),
    });
    let mut results: Vec<SizeResult> = par_map(&jobs, |j| run_job(b, j, opts.seed), |_| {})
        .into_iter()
        .collect::<Result<_, _>>()?;
    // The last run is the latency variation's; the others are the sweeps'.
    let variation = results.pop().expect("the variation run");
    let get = |kind: Kind, hops: u32| -> Vec<&SizeResult> {
        jobs.iter()
            .zip(&results)
            .filter(|(j, _)| j.kind == kind && j.hops == hops)
            .map(|(_, r)| r)
            .collect()
    };
    streaming(rep, &[(1, get(Kind::Streaming, 1)), (7, get(Kind::Streaming, 7))]);
    let pp = [(1, get(Kind::PingPong, 1)), (7, get(Kind::PingPong, 7))];
    ping_pong(rep, &pp);
    hop_cost(rep, &pp);
    latency_variation(rep, &variation);
    Ok(())
}

fn streaming(rep: &mut Report, runs: &[(u32, Vec<&SizeResult>)]) {
    for (hops, rs) in runs {
        for r in rs {
            rep.push(Record::new(
                "streaming",
                &case(*hops, r.size_bytes),
                "bandwidth_MBps",
                "MB/s",
                mbps(r),
            ));
        }
    }
    for (hops, rs) in runs {
        let peak = rs.iter().map(|r| mbps(r)).fold(0.0, f64::max);
        let first = |frac: f64| {
            rs.iter()
                .find(|r| mbps(r) >= frac * peak)
                .map_or(0, |r| r.size_bytes)
        };
        let at4k = rs
            .iter()
            .find(|r| r.size_bytes == 4096)
            .map_or(f64::NAN, |r| mbps(r) / peak);
        let c = [("hops", json!(hops))];
        let pk = Record::new("streaming-summary", &c, "peak_MBps", "MB/s", peak);
        let ps = Record::new(
            "streaming-summary",
            &c,
            "peak_size_bytes",
            "bytes",
            first(0.99) as f64,
        )
        .source("smallest size of the sweep within 1 % of the peak");
        if *hops == 1 {
            rep.push(pk.published(P::PEAK_MBPS, P::PEAK_SRC));
            rep.push(ps.published(P::PEAK_SIZE as f64, P::PEAK_SRC));
        } else {
            rep.push(pk);
            rep.push(ps);
        }
        rep.push(
            Record::new(
                "streaming-summary",
                &c,
                "half_peak_size_bytes",
                "bytes",
                first(0.5) as f64,
            )
            .source("smallest size of the sweep reaching half the peak"),
        );
        rep.push(Record::new(
            "streaming-summary",
            &c,
            "frac_of_peak_at_4KB",
            "",
            at4k,
        ));
    }
    rep.plots.push(plot_artifact(
        "streaming.svg",
        &Plot {
            title: "ATOLL streaming bandwidth",
            x_label: "message size [bytes]",
            y_label: "bandwidth [MB/s]",
            series: runs
                .iter()
                .map(|(h, rs)| Series {
                    name: format!("{h} hop{}", if *h == 1 { "" } else { "s" }),
                    points: rs.iter().map(|r| (r.size_bytes as f64, mbps(r))).collect(),
                    markers_only: false,
                    color: None,
                })
                .chain(std::iter::once(Series {
                    name: "published peak, 269 MB/s".into(),
                    points: vec![(P::PEAK_SIZE as f64, P::PEAK_MBPS)],
                    markers_only: true,
                    color: Some(10),
                }))
                .collect(),
            log_y: true,
            log_x: true,
        },
    ));
}

fn ping_pong(rep: &mut Report, runs: &[(u32, Vec<&SizeResult>)]) {
    for (hops, rs) in runs {
        for r in rs {
            let c = case(*hops, r.size_bytes);
            let mut lo = Record::new(
                "ping-pong",
                &c,
                "latency_min_us",
                "us",
                us(r.latency_min_ps as f64),
            );
            let mut avg = Record::new("ping-pong", &c, "latency_avg_us", "us", us(r.latency_avg_ps));
            if *hops == 1 && r.size_bytes == 1 {
                lo = lo.published(P::STARTUP_BEST_US, P::STARTUP_SRC);
                avg = avg.published(P::STARTUP_AVG_US, P::STARTUP_SRC);
            }
            rep.push(lo);
            rep.push(avg);
            rep.push(Record::new(
                "ping-pong",
                &c,
                "latency_max_us",
                "us",
                us(r.latency_max_ps as f64),
            ));
        }
    }
    let mut series = Vec::new();
    for (i, (hops, rs)) in runs.iter().enumerate() {
        for (what, f) in [
            (
                "avg",
                &(|r: &SizeResult| r.latency_avg_ps) as &dyn Fn(&SizeResult) -> f64,
            ),
            ("min", &|r: &SizeResult| r.latency_min_ps as f64),
            ("max", &|r: &SizeResult| r.latency_max_ps as f64),
        ] {
            series.push(Series {
                name: format!("{hops} hop{} {what}", if *hops == 1 { "" } else { "s" }),
                points: rs.iter().map(|r| (r.size_bytes as f64, us(f(r)))).collect(),
                markers_only: what != "avg",
                color: Some(i),
            });
        }
    }
    rep.plots.push(plot_artifact(
        "ping-pong.svg",
        &Plot {
            title: "ATOLL ping-pong latency (half round trip)",
            x_label: "message size [bytes]",
            y_label: "latency [us]",
            series,
            log_y: true,
            log_x: true,
        },
    ));
}

fn hop_cost(rep: &mut Report, runs: &[(u32, Vec<&SizeResult>)]) {
    let at = |hops: u32, size: u64| {
        runs.iter()
            .find(|r| r.0 == hops)
            .and_then(|r| r.1.iter().find(|x| x.size_bytes == size))
            .map(|x| x.latency_min_ps as f64)
    };
    for size in [1, 8, 64, 1024] {
        if let (Some(a), Some(b)) = (at(1, size), at(7, size)) {
            rep.push(
                Record::new(
                    "hop-cost",
                    &[("size_bytes", json!(size))],
                    "extra_7hop_over_1hop_ns",
                    "ns",
                    (b - a) / 1e3,
                )
                .published(6.0 * P::HOP_NS, P::HOP_COST_SRC),
            );
        }
    }
}

fn latency_variation(rep: &mut Report, r: &SizeResult) {
    let best = r.latency_min_ps as f64;
    let over = |t: f64| r.samples.iter().filter(|&&s| s as f64 > t).count() as f64;
    let c = case(7, 8);
    let src = "10,000 consecutive 8-byte ping-pongs over 7 hops, with the noise model";
    for (m, u, v) in [
        ("avg_us", "us", us(r.latency_avg_ps)),
        ("min_us", "us", us(best)),
        ("max_us", "us", us(r.latency_max_ps as f64)),
        ("count_over_best_plus_10pct", "samples", over(1.1 * best)),
        ("count_over_5us", "samples", over(5.0 * US as f64)),
        ("count_over_10us", "samples", over(10.0 * US as f64)),
    ] {
        rep.push(Record::new("latency-variation", &c, m, u, v).source(src));
    }
    rep.plots.push(plot_artifact(
        "latency-variation.svg",
        &Plot {
            title: "ATOLL latency variation: 8-byte ping-pong over 7 hops",
            x_label: "sample",
            y_label: "latency, half round trip [us]",
            series: vec![Series {
                name: format!("{} samples", r.samples.len()),
                points: r
                    .samples
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| (i as f64, us(s as f64)))
                    .collect(),
                markers_only: true,
                color: None,
            }],
            log_y: false,
            log_x: false,
        },
    ));
}

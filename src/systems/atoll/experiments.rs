//! The experiments of `reef reproduce atoll` (`../shared/systems/atoll.md`, "Experiments
//! to reproduce"), as runs of the ATOLL model, and their records and plots.
//!
//! The micro-benchmarks run on an 8×8 torus between host 0 and a neighbour (1 hop) or a
//! host whose routing strings both ways are 7 hops long (6 intermediate chips that switch
//! in hardware, their hosts idle): at zero load only the hop count matters. Each message
//! size is a simulation of its own; the paper ran 1,000 messages a size, which the
//! reproduction does up to a budget of bytes (the model's streaming rate settles within a
//! few messages of any size; the ping-pong's spread comes only from the noise model).

use super::calibrate::{Calibration, calibrate};
use super::net::{Net, torus};
use super::params as P;
use crate::fabric::atoll::Wiring;
use crate::nic::hostif::HostIf;
use crate::report::messages::size_text;
use crate::report::plot::{Plot, Series, svg};
use crate::systems::{Artifact, Options, Record, Report, par_map};
use crate::time::{SEC, Time, US};
use crate::workload::message::{Kind, MessageSpec, SizeResult, run_size};
use serde_json::json;

/// Bytes a streaming run moves per size at most (full, quick), and a ping-pong's bytes
/// each way; the fewest messages and round trips a size.
const STREAM_BUDGET: [u64; 2] = [2 << 20, 256 << 10];
const PING_BUDGET: [u64; 2] = [1 << 20, 128 << 10];
const MIN_MESSAGES: u32 = 4;
const MIN_ROUND_TRIPS: u32 = 3;
/// Messages a size at most (the paper's 1,000; fewer with --quick).
const MAX_MESSAGES: [u32; 2] = [1000, 50];
/// Samples of the latency-variation run (the paper's 10,000).
const VARIATION_SAMPLES: [u32; 2] = [10_000, 1_000];

/// The benchmark pairs: (host 0, a neighbour), (host 0, a host 7 hops away both ways).
pub struct Bench {
    pub net: Net,
    pub one: (u32, u32),
    pub seven: (u32, u32),
}

impl Bench {
    /// The 8×8 torus and its benchmark pairs.
    pub fn new() -> Result<Bench, String> {
        let net = Net::new("atoll-torus-8x8", &Wiring::Torus { k: [8, 8] }, P::FIFO_BYTES)?;
        let one = (0, 1);
        let seven = pair_at(&net, 7).ok_or("no host of the 8x8 torus has 7-hop routes to and from host 0")?;
        if (net.hops(one.0, one.1), net.hops(one.1, one.0)) != (1, 1) {
            return Err("hosts 0 and 1 of the 8x8 torus are not one hop apart both ways".into());
        }
        Ok(Bench { net, one, seven })
    }

    fn pair(&self, hops: u32) -> (u32, u32) {
        if hops == 1 { self.one } else { self.seven }
    }
}

/// Host 0 and the first host whose routes to and from it are both `hops` links long.
pub fn pair_at(net: &Net, hops: usize) -> Option<(u32, u32)> {
    (1..net.fabric.num_hosts() as u32)
        .find(|&b| net.hops(0, b) == hops && net.hops(b, 0) == hops)
        .map(|b| (0, b))
}

/// The sizes of the sweeps: every power of two from 1 B to 512 KB (with --quick, a few).
pub fn sizes(quick: bool) -> Vec<u64> {
    if quick {
        vec![1, 8, 64, 512, 4096, 32768, 524_288]
    } else {
        (0..=19).map(|i| 1u64 << i).collect()
    }
}

/// Messages of `size` bytes a run sends.
fn count(kind: Kind, size: u64, quick: bool) -> u32 {
    let q = usize::from(quick);
    let (budget, min) = match kind {
        Kind::Streaming => (STREAM_BUDGET[q], MIN_MESSAGES),
        Kind::PingPong => (PING_BUDGET[q], MIN_ROUND_TRIPS),
    };
    (budget / size).clamp(min as u64, MAX_MESSAGES[q] as u64) as u32
}

/// One message benchmark run.
#[derive(Clone, Debug)]
struct Job {
    kind: Kind,
    hops: u32,
    size: u64,
    count: u32,
    host: HostIf,
}

fn run_job(b: &Bench, j: &Job, seed: u64) -> Result<SizeResult, String> {
    let m = MessageSpec {
        kind: j.kind,
        pair: b.pair(j.hops),
        sizes: vec![j.size],
        count: j.count,
        host: j.host,
    };
    run_size(&b.net.message_spec(seed), &m, j.size, j.count)
        .map_err(|e| format!("{} {} B: {e}", j.kind.name(), j.size))
}

/// The steps of the reproduction and their rough shares of its running time.
const STEPS: &[(&str, f64)] = &[
    ("building the 8x8 torus and its routing strings", 1.0),
    ("calibration", 1.0),
    ("streaming, ping-pong, hop-cost, latency-variation", 1.0),
    ("torus-scaling", 1.0),
    ("sensitivity", 1.0),
];

/// Runs every experiment.
pub fn reproduce(opts: &Options) -> Result<Report, String> {
    let mut rep = Report::new("atoll");
    let mut steps = crate::systems::Steps::new("atoll", STEPS, opts);
    if !steps.next(&mut rep, "building the 8x8 torus and its routing strings") {
        return Ok(rep);
    }
    let b = Bench::new()?;
    if !steps.next(&mut rep, "calibration") {
        return Ok(rep);
    }
    let cal = calibrate(&b.net, b.one)?;
    rep.push(
        Record::new(
            "calibration",
            &[],
            "software_overhead_us",
            "us",
            us(cal.overhead as f64),
        )
        .source("calibrated: sender and receiver together, from the best 1-hop start-up latency"),
    );
    rep.push(
        Record::new("calibration", &[], "dma_rate_MBps", "MB/s", cal.dma_mbps())
            .source("calibrated: the DMA engine's rate, from the peak bandwidth"),
    );
    if steps.next(&mut rep, "streaming, ping-pong, hop-cost, latency-variation") {
        message_runs(&mut rep, &b, &cal, opts)?;
    }
    if !rep.interrupted && steps.next(&mut rep, "torus-scaling") {
        torus_scaling(&mut rep, &cal, opts)?;
    }
    if !rep.interrupted && steps.next(&mut rep, "sensitivity") {
        sensitivity(&mut rep, &b, &cal, opts)?;
    }
    notes(&mut rep, &b, &cal);
    Ok(rep)
}

/// The streaming and ping-pong runs, at 1 and 7 hops, and the latency variation's run.
fn message_runs(rep: &mut Report, b: &Bench, cal: &Calibration, opts: &Options) -> Result<(), String> {
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

fn case(hops: u32, size: u64) -> [(&'static str, serde_json::Value); 2] {
    [("hops", json!(hops)), ("size_bytes", json!(size))]
}

fn mbps(r: &SizeResult) -> f64 {
    r.bandwidth_bytes_per_s / 1e6
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

fn us(ps: f64) -> f64 {
    ps / US as f64
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

/// Saturation window [ps]: warm-up and measurement, by torus size (fuller networks take
/// longer to settle; quick runs are shorter).
fn window(nodes: u32, quick: bool) -> (Time, Time) {
    let w = if nodes >= 1024 {
        (40 * US, 100 * US)
    } else {
        (50 * US, 200 * US)
    };
    if quick { (w.0 / 2, w.1 / 4) } else { w }
}

/// A torus's figure [MB/s or µs], its 95 % half-width if it comes from random traffic, and
/// a drawing of the torus's channels.
type Measured = (f64, Option<f64>, Option<String>);

/// The saturation throughput per node [MB/s] with its 95 % half-width, and the drawing of
/// the torus's channels at saturation for a torus of `drawn` nodes.
fn saturation_mbps(
    net: &Net,
    cal: &Calibration,
    seed: u64,
    quick: bool,
    drawn: u32,
) -> Result<Measured, String> {
    let n = net.fabric.num_hosts() as u32;
    let (warm, measure) = window(n, quick);
    let mut spec = net.saturation_spec(seed, cal.dma_per_byte, warm, measure);
    spec.name = format!("ATOLL {n}-node torus, uniform random, saturated");
    let r = crate::runner::run_spec(&spec, &mut |_| {}).map_err(|e| format!("{}: {e}", net.name))?;
    if let Some(d) = &r.deadlock {
        return Err(format!("{}: deadlock at saturation: {d:?}", net.name));
    }
    let map = (n == drawn)
        .then(|| crate::report::map::channel_map(&spec.fabric, &r))
        .transpose()?;
    // Flits are bytes; a delivered packet is its payload and framing.
    let bytes_per_s = r.accepted_flits_per_node_cycle * SEC as f64 / P::core().period().to_f64();
    let mbps = bytes_per_s * P::MTU as f64 / (P::MTU + P::FRAMING) as f64 / 1e6;
    Ok((mbps, r.accepted_relative_ci95().map(|c| c * mbps), map))
}

/// The torus whose channels the report draws at saturation [nodes].
const DRAWN_TORUS: u32 = 256;

fn torus_scaling(rep: &mut Report, cal: &Calibration, opts: &Options) -> Result<(), String> {
    let nodes: &[u32] = if opts.quick {
        &[16, 64, 256]
    } else {
        &[16, 64, 256, 1024]
    };
    let nets: Vec<Result<Net, String>> = par_map(
        nodes,
        |&n| Net::new(&format!("atoll-torus-{n}"), &torus(n), P::FIFO_BYTES),
        |_| {},
    );
    let nets: Vec<Net> = nets.into_iter().collect::<Result<_, _>>()?;
    // Per torus: the worst start-up latency and the saturation throughput.
    let jobs: Vec<(usize, bool)> = (0..nets.len()).flat_map(|i| [(i, false), (i, true)]).collect();
    let out: Vec<Result<Measured, String>> = par_map(
        &jobs,
        |&(i, sat)| {
            let net = &nets[i];
            if sat {
                return saturation_mbps(net, cal, opts.seed, opts.quick, DRAWN_TORUS);
            }
            let pair = longest_pair(net);
            let m = MessageSpec {
                kind: Kind::PingPong,
                pair,
                sizes: vec![1],
                count: 3,
                host: cal.host(false),
            };
            run_size(&net.message_spec(opts.seed), &m, 1, 3)
                .map(|r| (us(r.latency_min_ps as f64), None, None))
                .map_err(|e| format!("{}: {e}", net.name))
        },
        |_| {},
    );
    let out: Vec<Measured> = out.into_iter().collect::<Result<_, _>>()?;
    let cis: Vec<Option<f64>> = out.iter().map(|o| o.1).collect();
    let (out, maps): (Vec<f64>, Vec<Option<String>>) = out.into_iter().map(|o| (o.0, o.2)).unzip();
    for text in maps.into_iter().flatten() {
        rep.plots.push(Artifact {
            file: format!("network-torus-{DRAWN_TORUS}.svg"),
            text,
        });
    }
    let mut lat = Vec::new();
    let mut sat = Vec::new();
    for (i, net) in nets.iter().enumerate() {
        let n = net.fabric.num_hosts() as u32;
        let c = [("nodes", json!(n))];
        let s = net.stats;
        rep.push(
            Record::new("torus-scaling", &c, "diameter_hops", "hops", s.diameter as f64)
                .source("longest shortest path; the longest placed routing string may be longer"),
        );
        rep.push(
            Record::new("torus-scaling", &c, "worst_startup_latency_us", "us", out[2 * i])
                .source("1-byte ping-pong, half round trip, between the hosts of the longest placed route"),
        );
        rep.push(
            Record::new(
                "torus-scaling",
                &c,
                "mean_extra_hops_deadlock_free",
                "hops",
                s.mean_extra_hops(),
            )
            .source("mean over every pair of the placed set's hops less the shortest path's"),
        );
        rep.push(
            Record::new(
                "torus-scaling",
                &c,
                "saturation_per_node_MBps",
                "MB/s",
                out[2 * i + 1],
            )
            .ci95(cis[2 * i + 1])
            .source("payload accepted per node, uniform random, every host backlogged with 1 KB packets"),
        );
        rep.push(
            Record::new(
                "torus-scaling",
                &c,
                "flow_bound_per_node_MBps",
                "MB/s",
                net.flow_bound_mbps(),
            )
            .source("the placed routes' bound: uniform load at which the busiest channel is always busy"),
        );
        lat.push((n as f64, out[2 * i]));
        sat.push((n as f64, out[2 * i + 1]));
    }
    for (file, title, y, pts) in [
        (
            "torus-latency.svg",
            "ATOLL torus: worst start-up latency",
            "latency [us]",
            lat,
        ),
        (
            "torus-throughput.svg",
            "ATOLL torus: saturation throughput",
            "payload per node [MB/s]",
            sat,
        ),
    ] {
        rep.plots.push(plot_artifact(
            file,
            &Plot {
                title,
                x_label: "nodes",
                y_label: y,
                series: vec![Series {
                    name: "2-D torus, deadlock-free routing strings".into(),
                    points: pts,
                    markers_only: false,
                    color: None,
                }],
                log_y: false,
                log_x: true,
            },
        ));
    }
    Ok(())
}

/// A pair of hosts whose placed route is the longest.
fn longest_pair(net: &Net) -> (u32, u32) {
    let n = net.fabric.num_hosts() as u32;
    let want = net.stats.longest as usize;
    (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .find(|&(a, b)| a != b && net.hops(a, b) == want)
        .unwrap_or((0, n - 1))
}

/// How the figures move with the parameters the paper does not publish, each varied alone
/// (the calibrated host costs kept).
fn sensitivity(rep: &mut Report, b: &Bench, cal: &Calibration, opts: &Options) -> Result<(), String> {
    #[derive(Clone)]
    enum Var {
        Fifo(u32),
        Credit(u64),
        Mtu(u32),
        Framing(u32),
        DmaLatency(Time),
        PioMax(u32),
    }
    let mut vars = Vec::new();
    for f in [16, 32, 64, 128, 256] {
        vars.push(Var::Fifo(f));
    }
    for c in [1, 27, 54] {
        vars.push(Var::Credit(c));
    }
    for m in [256, 1024, 4096] {
        vars.push(Var::Mtu(m));
    }
    for f in [4, 8, 16, 32] {
        vars.push(Var::Framing(f));
    }
    for l in [US / 2, US, 2 * US] {
        vars.push(Var::DmaLatency(l));
    }
    for p in [64, 256, 1024] {
        vars.push(Var::PioMax(p));
    }
    let out: Vec<Result<Vec<Record>, String>> = par_map(
        &vars,
        |v| {
            let (fifo, credit) = match v {
                Var::Fifo(f) => (*f, P::CREDIT_CYCLES),
                Var::Credit(c) => (P::FIFO_BYTES, *c),
                _ => (P::FIFO_BYTES, P::CREDIT_CYCLES),
            };
            let mut host = cal.host(false);
            match v {
                Var::Mtu(m) => host.mtu = *m,
                Var::Framing(f) => host.framing = *f,
                Var::DmaLatency(l) => host.dma_latency = *l,
                Var::PioMax(p) => host.pio_max = *p,
                _ => {}
            }
            let (param, value) = match v {
                Var::Fifo(f) => ("fifo_bytes", json!(f)),
                Var::Credit(c) => ("credit_cycles", json!(c)),
                Var::Mtu(m) => ("mtu_bytes", json!(m)),
                Var::Framing(f) => ("framing_bytes", json!(f)),
                Var::DmaLatency(l) => ("dma_latency_us", json!(us(*l as f64))),
                Var::PioMax(p) => ("pio_max_bytes", json!(p)),
            };
            let net = if fifo == P::FIFO_BYTES && credit == P::CREDIT_CYCLES {
                b.net.clone()
            } else {
                let fab = crate::fabric::atoll::build(
                    &Wiring::Torus { k: [8, 8] },
                    1,
                    &[],
                    &P::chip_with(fifo, credit),
                )
                .map_err(|e| e.to_string())?;
                Net::routed("atoll-torus-8x8", fab)?
            };
            let bench = Bench {
                net,
                one: b.one,
                seven: b.seven,
            };
            let c = [("parameter", json!(param)), ("value", json!(value))];
            let job = |kind, hops, size| Job {
                kind,
                hops,
                size,
                count: count(kind, size, true),
                host,
            };
            let stream =
                |hops, size| run_job(&bench, &job(Kind::Streaming, hops, size), opts.seed).map(|r| mbps(&r));
            let latency = |size| {
                run_job(&bench, &job(Kind::PingPong, 1, size), opts.seed).map(|r| us(r.latency_min_ps as f64))
            };
            let mut recs = vec![
                Record::new(
                    "sensitivity",
                    &c,
                    "streaming_7hop_64KB_MBps",
                    "MB/s",
                    stream(7, 65536)?,
                ),
                Record::new(
                    "sensitivity",
                    &c,
                    "streaming_1hop_1KB_MBps",
                    "MB/s",
                    stream(1, 1024)?,
                ),
                Record::new("sensitivity", &c, "latency_1hop_1KB_us", "us", latency(1024)?),
            ];
            if matches!(v, Var::Fifo(_) | Var::Credit(_) | Var::Mtu(_) | Var::Framing(_)) {
                let (x, ci) = sensitivity_saturation(&bench.net, cal, &host, opts.seed)?;
                recs.push(Record::new("sensitivity", &c, "saturation_64_nodes_MBps", "MB/s", x).ci95(ci));
            }
            Ok(recs)
        },
        |_| {},
    );
    for r in out {
        for rec in r? {
            rep.push(rec);
        }
    }
    Ok(())
}

/// The saturation throughput of an 8×8 torus with packets of `host`'s MTU and framing
/// (over a quick run's window) [MB/s], with its 95 % half-width.
fn sensitivity_saturation(
    net: &Net,
    cal: &Calibration,
    host: &HostIf,
    seed: u64,
) -> Result<(f64, Option<f64>), String> {
    let (warm, measure) = window(64, true);
    let mut spec = net.saturation_spec(seed, cal.dma_per_byte, warm, measure);
    let packet = host.mtu + host.framing;
    spec.workload.sizes = crate::workload::Sizes::Fixed(packet);
    spec.host.send_per_byte = (cal.dma_per_byte as u128 * host.mtu as u128).div_ceil(packet as u128) as Time;
    let r = crate::runner::run_spec(&spec, &mut |_| {}).map_err(|e| format!("{}: {e}", net.name))?;
    let bytes_per_s = r.accepted_flits_per_node_cycle * SEC as f64 / P::core().period().to_f64();
    let mbps = bytes_per_s * host.mtu as f64 / packet as f64 / 1e6;
    Ok((mbps, r.accepted_relative_ci95().map(|c| c * mbps)))
}

fn plot_artifact(file: &str, p: &Plot) -> Artifact {
    Artifact {
        file: file.to_string(),
        text: svg(p).unwrap_or_else(|e| format!("<!-- plot failed: {e} -->")),
    }
}

/// The notes under the tables: how each figure was got, the calibration, the assumptions
/// and what bounds each curve where.
fn notes(rep: &mut Report, b: &Bench, cal: &Calibration) {
    let h = cal.host(true);
    let n = &mut rep.notes;
    n.push(format!(
        "calibrated (as the spec allows): software overhead per message {:.3} us (sender {:.3}, receiver \
         {:.3}; the split is ASSUMED even), from the best 1-hop start-up latency {} us (the same ping-pong \
         without it: {:.3} us); DMA engine {:.3} ns/byte ({:.1} MB/s) from the peak {} MB/s, streamed at {}.",
        us(cal.overhead as f64),
        us(h.send_overhead as f64),
        us(h.recv_overhead as f64),
        P::STARTUP_BEST_US,
        us(cal.bare_latency as f64),
        cal.dma_per_byte as f64 / 1e3,
        cal.dma_mbps(),
        P::PEAK_MBPS,
        size_text(cal.peak_size)
    ));
    n.push(format!(
        "from the hardware: links a byte per core cycle at 300 MHz ({:.4} ns, edges at floor(n*10000/3) ps), \
         27 cycles a hop link input to link output ({:.1} ns: the byte's cycle on the link and 26 in the \
         chip), wormhole switching, routing strings in the packet, a byte used up per chip.",
        P::byte_ns(),
        P::cycles(P::HOP_CYCLES) as f64 / 1e3
    ));
    n.push(format!(
        "ASSUMED (not published; see the sensitivity table): input FIFOs of {} bytes, credits back {} cycles \
         after their byte leaves (a flow-control signal crossing a hop); packets of at most {} bytes of payload \
         and {} of framing; PIO up to {} bytes at {:.3} ns/byte (64-byte PCI-X bursts with 4 extra phases), \
         DMA above, {:.1} us to its first byte; receive writes at {:.3} ns/byte; each host port as fast as a \
         link port into the crossbar.",
        P::FIFO_BYTES,
        P::CREDIT_CYCLES,
        P::MTU,
        P::FRAMING,
        P::PIO_MAX,
        h.pio_per_byte as f64 / 1e3,
        us(P::DMA_LATENCY as f64),
        h.rx_per_byte as f64 / 1e3
    ));
    n.push(format!(
        "noise (ping-pong, latency-variation; explicit and seeded, {}): min is a round trip no interrupt \
         touched, avg and max carry the interrupts that fell in the samples. Streaming, calibration and \
         torus scaling run without noise.",
        P::NOISE_SRC
    ));
    n.push(format!(
        "pairs: an 8x8 torus, host 0 to host {} (1 hop) and to host {} (7 hops both ways, 6 chips between \
         switching in hardware); the paper's 1,000 messages a size, up to {} a streaming size and {} of \
         ping-pong each way (at least {} messages, {} round trips).",
        b.one.1,
        b.seven.1,
        size_text(STREAM_BUDGET[0]),
        size_text(PING_BUDGET[0]),
        MIN_MESSAGES,
        MIN_ROUND_TRIPS
    ));
    n.push(bounds(&h));
    n.push(
        "torus-scaling: saturation falls far faster than the torus's bisection and than its routes' \
         flow bound (flow_bound_per_node_MBps: the load at which the busiest channel would be always \
         busy): at saturation the network is mostly idle (32x32: mean channel use about 2 %, the \
         busiest about 30 %). Without virtual channels a blocked 1 KB worm holds every channel from its \
         head back to its tail (16 or more, with 64-byte FIFOs), and flows that merge at many chips get \
         ever smaller shares of each chip's round-robin arbitration, so most worms wait on others; \
         every packet also pays 26 cycles of routing at each chip. The sensitivity table shows deeper \
         FIFOs and longer packets help, shorter ones do not. Nothing published to compare."
            .to_string(),
    );
    n.push(
        "hop-cost at 1 KB: a message larger than a PIO is fetched by the DMA engine more slowly than \
         the link sends (3.71 against 3.33 ns a byte), so the worm runs at the DMA's pace and its tail, \
         which pays no routing delay, catches up on the head's 26 cycles a chip: 7 hops cost less \
         over 1 than the head's 6 x 90 ns."
            .to_string(),
    );
}

/// Which resource bounds the streaming rate at each size, from the model's stage times
/// per message (the slowest stage sets the pace of back-to-back messages).
pub fn bounds(h: &HostIf) -> String {
    let link = P::core().period().to_f64();
    let stage = |s: u64| -> (&'static str, f64) {
        let packets = s.div_ceil(h.mtu as u64).max(1);
        let pio = s <= h.pio_max as u64;
        let cpu = h.send_overhead as f64 + if pio { (s * h.pio_per_byte) as f64 } else { 0.0 };
        let dma = if pio {
            0.0
        } else {
            (h.dma_latency + s * h.dma_per_byte) as f64
        };
        let wire = (s + packets * (h.framing as u64 + 2)) as f64 * link;
        let rx = (s * h.rx_per_byte) as f64;
        let recv = h.recv_overhead as f64;
        [
            ("the sender's CPU (overhead and PIO)", cpu),
            ("the DMA engine", dma),
            ("the link", wire),
            ("the receive writes", rx),
            ("the receiver's CPU", recv),
        ]
        .into_iter()
        .fold(("", 0.0), |a, x| if x.1 > a.1 { x } else { a })
    };
    let mut parts: Vec<(u64, u64, &str)> = Vec::new();
    for s in (0..=19).map(|i| 1u64 << i) {
        let (name, _) = stage(s);
        match parts.last_mut() {
            Some(p) if p.2 == name => p.1 = s,
            _ => parts.push((s, s, name)),
        }
    }
    let text: Vec<String> = parts
        .iter()
        .map(|(a, b, name)| format!("{}–{}: {name}", size_text(*a), size_text(*b)))
        .collect();
    format!(
        "what bounds the streaming rate (the slowest stage of the model per message): {}. The ping-pong \
         latency is the stages' sum: the software overheads below about 1 KB, the slowest per-byte stage \
         (the DMA engine) above.",
        text.join("; ")
    )
}

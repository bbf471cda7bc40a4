//! Torus scaling: for tori of 16 to 1,024 nodes, the worst start-up latency, the saturation
//! throughput under uniform random traffic and the placed routes' flow bound (nothing
//! published to compare).

use super::super::calibrate::Calibration;
use super::super::net::{Net, torus};
use super::super::params as P;
use super::{plot_artifact, us};
use crate::report::plot::{Plot, Series};
use crate::systems::{Artifact, Options, Record, Report, par_map};
use crate::time::{SEC, Time, US};
use crate::workload::message::{Kind, MessageSpec, run_size};
use serde_json::json;

/// Saturation window [ps]: warm-up and measurement, by torus size (fuller networks take
/// longer to settle; quick runs are shorter).
pub(super) fn window(nodes: u32, quick: bool) -> (Time, Time) {
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

pub(super) fn torus_scaling(rep: &mut Report, cal: &Calibration, opts: &Options) -> Result<(), String> {
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

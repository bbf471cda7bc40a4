//! How the figures move with the parameters the paper does not publish (FIFO depth, credit
//! delay, MTU, framing, DMA latency, PIO limit), each varied alone with the calibrated host
//! costs kept.

use super::super::calibrate::Calibration;
use super::super::net::Net;
use super::super::params as P;
use super::torus::window;
use super::{Bench, Job, count, mbps, run_job, us};
use crate::fabric::atoll::Wiring;
use crate::nic::hostif::HostIf;
use crate::systems::{Options, Record, Report, par_map};
use crate::time::{SEC, Time, US};
use crate::workload::message::Kind;
use serde_json::json;

/// How the figures move with the parameters the paper does not publish, each varied alone
/// (the calibrated host costs kept).
pub(super) fn sensitivity(
    rep: &mut Report,
    b: &Bench,
    cal: &Calibration,
    opts: &Options,
) -> Result<(), String> {
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

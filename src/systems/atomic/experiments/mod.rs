//! The experiments of `reef reproduce atomic`: each builds its networks, runs them and
//! reports every figure beside the published one where the spec gives one.
//!
//! The parts: `flows` the HIs' streams (Table 1, T(L,D), competing flows), `mesh` the Mosaic
//! mesh as a switch and its arbitration, `ac` the Address Consultant's mapping, route
//! service and fault recovery; this file holds the stream runner they share and the order
//! of the reproduction.

mod ac;
mod flows;
mod mesh;

use ac::{fault_recovery, mapping, route_service};
use flows::{competing, single_flow, time_per_packet};
use mesh::{arbitration, mesh_switch};

pub use ac::{
    FaultOutcome, MapOutcome, SetCheck, SetOutcome, fault_run, map_once, mapping_networks, route_service_run,
    route_sets,
};
pub use flows::competing_lan;
pub use mesh::{CHAIN, bisection_fraction, bisection_run, chain_shares, chain_shares_with, mesh_switch_lan};

use super::net;
use crate::control::graph::MGraph;
use crate::control::routes::{Route, RouteSet};
use crate::engine::HostParams;
use crate::engine::agent::{Agent, Ctl, Delivery, Message};
use crate::fabric::mosaic::LanFabric;
use crate::routing::mosaic::enc;
use crate::systems::{Options, Report};
use crate::time::Time;

/// Streams of back-to-back packets from HIs along fixed routes.
struct Stream {
    flows: Vec<(u32, u32, Vec<u16>, u32, u32)>,
    times: Vec<Vec<Time>>,
}

impl Agent for Stream {
    fn start(&mut self, ctl: &mut Ctl) {
        for (i, (src, dst, hdr, flits, count)) in self.flows.iter().enumerate() {
            for _ in 0..*count {
                let _ = ctl.send(Message {
                    src: *src,
                    dst: *dst,
                    flits: *flits,
                    header: hdr.clone(),
                    tag: i as u64,
                });
            }
        }
    }
    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        self.times[d.tag as usize].push(d.delivered);
        if self
            .times
            .iter()
            .zip(&self.flows)
            .all(|(t, f)| t.len() as u32 >= f.4)
        {
            ctl.stop();
        }
    }
}

/// Steady packet rate of each flow [packets/s], from deliveries after the first fifth.
fn stream(
    lf: &LanFabric,
    flows: &[(u32, u32, Route)],
    l: u32,
    count: u32,
    costs: Option<HostParams>,
) -> Vec<f64> {
    let spec = net::spec(lf, "stream");
    let mut sim = net::sim(&spec, lf, &[]);
    if let Some(c) = costs {
        for h in 0..lf.fab.num_hosts() as u32 {
            sim.set_host_params(h, c);
        }
    }
    let mut ag = Stream {
        flows: flows
            .iter()
            .map(|(s, d, r)| {
                let hdr: Vec<u16> = r.bytes().into_iter().map(enc).collect();
                let flits = l.max(hdr.len() as u32);
                (*s, *d, hdr, flits, count)
            })
            .collect(),
        times: vec![vec![]; flows.len()],
    };
    sim.run_with(&mut ag, &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    ag.times
        .iter()
        .map(|t| {
            let a = t.len() / 5;
            let b = t.len() - 1;
            if b <= a {
                return 0.0;
            }
            (b - a) as f64 / ((t[b] - t[a]) as f64 * 1e-12)
        })
        .collect()
}

/// The routes the route service hands out for these pairs of HIs (indices into `lf.his`):
/// a deadlock-free set ([`RouteSet`]).
fn routes(g: &MGraph, lf: &LanFabric, pairs: &[(usize, usize)]) -> Vec<(u32, u32, Route)> {
    let p: Vec<(u32, u32)> = pairs.iter().map(|&(a, b)| (a as u32, b as u32)).collect();
    let set = RouteSet::for_pairs(g, &p);
    pairs
        .iter()
        .map(|&(a, b)| {
            let r = set
                .get(a as u32, b as u32)
                .expect("a deadlock-free route")
                .clone();
            (lf.his[a], lf.his[b], r)
        })
        .collect()
}

fn route(g: &MGraph, lf: &LanFabric, a: usize, b: usize) -> (u32, u32, Route) {
    routes(g, lf, &[(a, b)]).remove(0)
}

pub fn reproduce(opts: &Options) -> Result<Report, String> {
    let quick = opts.quick;
    let mut rep = Report::new("atomic");
    let mut steps = crate::systems::Steps::new("atomic", STEPS, opts);
    type Experiment<'a> = (&'a str, &'a dyn Fn(&mut Report));
    let experiments: [Experiment; 8] = [
        ("single-flow", &|r| single_flow(r, quick)),
        ("time-per-packet", &|r| time_per_packet(r, quick)),
        ("competing-flows", &|r| competing(r, quick)),
        ("mesh-switch", &|r| mesh_switch(r, quick)),
        ("arbitration", &|r| arbitration(r, quick)),
        ("mapping", &|r| mapping(r, quick)),
        ("route-service", &|r| route_service(r, quick)),
        ("fault-recovery", &|r| fault_recovery(r)),
    ];
    for (name, run) in experiments {
        if !steps.next(&mut rep, name) {
            break;
        }
        run(&mut rep);
    }
    rep.notes.extend(notes());
    Ok(rep)
}

/// The experiments and their rough shares of the reproduction's running time.
const STEPS: &[(&str, f64)] = &[
    ("single-flow", 1.0),
    ("time-per-packet", 1.0),
    ("competing-flows", 1.0),
    ("mesh-switch", 1.0),
    ("arbitration", 1.0),
    ("mapping", 1.0),
    ("route-service", 1.0),
    ("fault-recovery", 1.0),
];

fn notes() -> Vec<String> {
    vec![
        "Calibration (the spec says so): HIs pay 1.440 µs + 20 ns/byte to send and to receive; channels move a byte in \
         max(16 ns, 13 ns + 3 ns/ft × cable). T(L,D) and Table 1 follow from these (Table 1 prints rounded values)."
            .into(),
        "Assumed (not in the sources): header routing 25 ns per node, 2-byte input buffers; forwarding nodes pay 1.440 µs \
         + 40 ns/byte per packet and hold 64 KB (a packet is admitted only whole; else the worm blocks); the AC host \
         spends 20 µs per packet it sends or receives; loop probes time out after 100 µs; flooding ends after 100 µs \
         without news; a node program can read the input port a packet came in on; an AC may write a mark into a node's \
         memory to recognise it later."
            .into(),
        "Messages per node: loop probes send one probe per node output not yet known (a link found from one side is \
         known from the other: symmetric, consistent), each probe a single packet that returns by the reversed path, \
         and one route per HI; flooding costs one exploration packet per node output, plus reports batched per node \
         and one route install per node. Both stay well below the authors' ~20."
            .into(),
        "A cut channel loses what is sent into it; a worm cut by the failure is split: the part already across is \
         ended by a forced tail and discarded at its destination, the rest drains into the cut, freeing its channels."
            .into(),
    ]
}

//! ATOMIC networks and simulations of them: the named topologies of the experiments, the
//! engine spec of a LAN, and a simulation with the HI and node-processor costs of the spec.

use super::params as P;
use crate::control::ac::{Atomic, Config, Fault};
use crate::engine::{HostParams, Sim, SimParams, Spec};
use crate::fabric::mosaic::{Cable, HostLink, Lan, LanFabric, LanParams, Place, random_lan};
use crate::routing::Routing;
use crate::routing::mosaic::{EAST, Mosaic, NORTH, SOUTH, WEST};
use crate::time::{Ratio, Time};
use crate::workload::Workload;

/// The 3×3 prototype: four HIs on the West and East edges, 2 ft cables.
pub fn prototype() -> Lan {
    Lan::board(
        "proto-3x3",
        3,
        &[(0, 0, WEST), (0, 2, WEST), (2, 0, EAST), (2, 2, EAST)],
        P::SHORT_CABLE_MFT,
    )
}

/// An 8×8 board with 16 HIs: West and East edges, every other row.
pub fn board8() -> Lan {
    let mut hosts = Vec::new();
    for y in 0..8 {
        hosts.push((0, y, WEST));
        hosts.push((7, y, EAST));
    }
    hosts.truncate(16);
    Lan::board("board-8x8", 8, &hosts, P::SHORT_CABLE_MFT)
}

fn pl(board: u32, x: u32, y: u32, port: u16) -> Place {
    Place { board, x, y, port }
}

/// Four 3×3 boards joined irregularly (symmetric and consistent: East to West, North to
/// South), eight HIs.
pub fn lan4() -> Lan {
    let c = |a, b| Cable {
        a,
        b,
        both: true,
        mft: P::SHORT_CABLE_MFT,
    };
    Lan {
        name: "lan-4x3x3".into(),
        boards: vec![3, 3, 3, 3],
        hosts: [
            pl(0, 0, 0, WEST),
            pl(0, 0, 2, WEST),
            pl(1, 2, 1, EAST),
            pl(1, 1, 0, SOUTH),
            pl(2, 0, 1, WEST),
            pl(2, 2, 2, NORTH),
            pl(3, 2, 0, EAST),
            pl(3, 1, 2, NORTH),
        ]
        .into_iter()
        .map(|at| HostLink {
            at,
            mft: P::SHORT_CABLE_MFT,
        })
        .collect(),
        cables: vec![
            c(pl(0, 2, 1, EAST), pl(1, 0, 1, WEST)),
            c(pl(0, 1, 2, NORTH), pl(2, 1, 0, SOUTH)),
            c(pl(1, 1, 2, NORTH), pl(3, 1, 0, SOUTH)),
            c(pl(2, 2, 0, EAST), pl(3, 0, 0, WEST)),
            c(pl(2, 2, 1, EAST), pl(3, 0, 2, WEST)),
        ],
    }
}

/// Three 3×3 boards with one-way and non-consistent cables (a North output into a West
/// input: the Y-to-X turn), six HIs.
pub fn nonsym() -> Lan {
    let one = |a, b| Cable {
        a,
        b,
        both: false,
        mft: P::SHORT_CABLE_MFT,
    };
    Lan {
        name: "nonsym-3x3x3".into(),
        boards: vec![3, 3, 3],
        hosts: [
            pl(0, 0, 0, WEST),
            pl(0, 0, 2, WEST),
            pl(1, 2, 2, EAST),
            pl(1, 1, 0, SOUTH),
            pl(2, 2, 1, EAST),
            pl(2, 0, 2, NORTH),
        ]
        .into_iter()
        .map(|at| HostLink {
            at,
            mft: P::SHORT_CABLE_MFT,
        })
        .collect(),
        cables: vec![
            one(pl(0, 2, 1, EAST), pl(1, 0, 1, WEST)),
            one(pl(1, 2, 0, EAST), pl(2, 0, 0, WEST)),
            one(pl(2, 1, 0, SOUTH), pl(0, 1, 2, NORTH)),
            one(pl(1, 1, 2, NORTH), pl(2, 0, 1, WEST)),
            Cable {
                a: pl(0, 2, 2, NORTH),
                b: pl(1, 0, 2, WEST),
                both: true,
                mft: P::SHORT_CABLE_MFT,
            },
        ],
    }
}

/// A seeded random LAN (see [`random_lan`]).
pub fn random(seed: u64, boards: u32, consistent: bool) -> Lan {
    random_lan(seed, boards, 3, boards + 2, consistent, P::SHORT_CABLE_MFT)
}

/// The engine spec of a built LAN: routing by the bytes each packet carries, no synthetic
/// traffic, a run that ends when the agent stops it.
pub fn spec(lf: &LanFabric, name: &str) -> Spec {
    let n = lf.fab.num_hosts();
    Spec {
        name: name.into(),
        fabric: lf.fab.clone(),
        routing: Routing::Mosaic(Mosaic::with_headers(vec![])),
        workload: Workload::silent(n),
        params: SimParams {
            seed: 1,
            warmup: 0,
            measure: 10_000_000_000_000,
            drain_limit: 0,
            drain_all: false,
            batches: 1,
            cycle: Ratio::int(1000),
            check: false,
            watchdog: 10_000_000_000_000,
            flit_bytes: 1,
            trains: true,
            express: true,
            max_header: 512,
            sampling: None,
            runs: 1,
            source_queueing: true,
        },
        host: HostParams::default(),
        messages: None,
    }
}

/// Builds a LAN with the spec's chip timing.
pub fn build(lan: &Lan) -> LanFabric {
    build_with(lan, &LanParams::default())
}

pub fn build_with(lan: &Lan, p: &LanParams) -> LanFabric {
    lan.build(p).unwrap_or_else(|e| panic!("{}: {e}", lan.name))
}

/// A simulation of `spec` with ATOMIC's costs: HIs pay 1.440 µs + 20 ns/byte to send and to
/// receive; node processors 1.440 µs + 40 ns/byte to forward and hold 64 KB; channels into
/// the void are cut from the start; `faults` cut channels or nodes at their times.
pub fn sim<'a>(spec: &'a Spec, lf: &LanFabric, faults: &[(Time, Fault)]) -> Sim<'a> {
    let mut s = Sim::new(spec).expect("fits the engine");
    for h in 0..lf.fab.num_hosts() as u32 {
        if lf.is_processor(h) {
            s.set_host_params(h, P::node_costs());
            s.set_host_memory(h, P::NODE_MEMORY);
        } else {
            s.set_host_params(h, P::hi_costs());
        }
    }
    for &c in &lf.dead {
        s.fail_channel_at(c, 0);
    }
    for &(t, f) in faults {
        match f {
            Fault::Channel(c) => s.fail_channel_at(c, t),
            Fault::Node(n) => s.fail_node_at(n, t),
        }
    }
    s
}

/// Runs the agent on a LAN; returns it for inspection with the simulated end time.
pub fn run_agent<'a>(lf: &'a LanFabric, cfg: Config) -> (Atomic<'a>, Time, u64) {
    let spec = spec(lf, "atomic");
    let faults = cfg.faults.clone();
    let mut sim = sim(&spec, lf, &faults);
    let mut ag = Atomic::new(lf, cfg);
    sim.run_with(&mut ag, &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let lost = sim.packets_lost();
    (ag, sim.now(), lost)
}

/// A built-in LAN by name.
pub fn named(name: &str) -> Option<Lan> {
    match name {
        "proto-3x3" => Some(prototype()),
        "board-8x8" => Some(board8()),
        "lan-4x3x3" => Some(lan4()),
        "nonsym-3x3x3" => Some(nonsym()),
        _ => None,
    }
}

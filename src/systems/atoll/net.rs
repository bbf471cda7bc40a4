//! ATOLL networks as the reproduction runs them: a wiring of chips ([`crate::fabric::atoll`])
//! with the chip of [`super::params`], routing strings from a deadlock-free placed set
//! ([`crate::routing::placed`]) carried in the packet, and the engine spec of a run: a
//! message benchmark between two hosts, or every host backlogged with uniform random
//! traffic for the saturation throughput.

use super::params as P;
use crate::engine::{HostParams, SimParams, Spec};
use crate::fabric::atoll::{Wiring, build};
use crate::fabric::{Fabric, Shape};
use crate::rng::{Purpose, Stream};
use crate::routing::Routing;
use crate::routing::placed::{Placed, PlacedStats};
use crate::routing::source::SourceRoutes;
use crate::time::{SEC, Time};
use crate::workload::pattern::{Pattern, PatternSpec};
use crate::workload::{Process, Sizes, Workload};

/// A built ATOLL network with its routing strings.
#[derive(Clone, Debug)]
pub struct Net {
    pub name: String,
    pub fabric: Fabric,
    pub routing: Routing,
    pub stats: PlacedStats,
}

impl Net {
    /// `wiring` with one host per chip, input FIFOs of `fifo` bytes.
    pub fn new(name: &str, wiring: &Wiring, fifo: u32) -> Result<Net, String> {
        let fabric = build(wiring, 1, &[], &P::chip(fifo)).map_err(|e| e.to_string())?;
        Self::routed(name, fabric)
    }

    /// The deadlock-free routing strings of a built fabric.
    pub fn routed(name: &str, fabric: Fabric) -> Result<Net, String> {
        let placed = Placed::new(&fabric).map_err(|e| e.to_string())?;
        let stats = placed.stats;
        let mut routes = SourceRoutes::placed(&fabric, placed, Vec::new()).map_err(|e| e.to_string())?;
        routes.in_packet = true;
        Ok(Net {
            name: name.to_string(),
            fabric,
            routing: Routing::Source(routes),
            stats,
        })
    }

    /// Link hops of the route from host `a` to host `b`.
    pub fn hops(&self, a: u32, b: u32) -> usize {
        self.routing
            .path(&self.fabric, a, b)
            .map_or(0, |(p, _)| p.len().saturating_sub(2))
    }

    /// The topology's diameter [link hops].
    pub fn diameter(&self) -> u32 {
        self.stats.diameter
    }

    /// The engine spec of a message benchmark: no synthetic traffic, a run the agent ends.
    pub fn message_spec(&self, seed: u64) -> Spec {
        let n = self.fabric.num_hosts();
        self.spec(
            Workload::silent(n),
            SimParams {
                warmup: 0,
                measure: crate::time::MAX_SPAN,
                drain_limit: 0,
                batches: 1,
                ..params(seed)
            },
            HostParams::default(),
        )
    }

    /// The engine spec of a saturation run: every host backlogged with packets of a full
    /// MTU to uniformly random others, each host fetching them no faster than its DMA
    /// engine (`dma_per_byte` [ps/byte] of payload), over a window of `warmup` and
    /// `measure` [ps].
    pub fn saturation_spec(&self, seed: u64, dma_per_byte: Time, warmup: Time, measure: Time) -> Spec {
        let n = self.fabric.num_hosts() as u32;
        let mut setup = Stream::new(seed, Purpose::Setup, 0);
        let pattern = Pattern::build(&PatternSpec::Uniform, &self.fabric.shape, n, false, &mut setup)
            .expect("uniform traffic on two or more hosts");
        let packet = P::MTU + P::FRAMING;
        // The per-byte cost is charged on the packet as configured (payload and framing):
        // scaled so that a packet costs its payload's DMA time.
        let per_byte = (dma_per_byte as u128 * P::MTU as u128).div_ceil(packet as u128) as Time;
        self.spec(
            Workload {
                pattern,
                process: Process::Backlogged,
                sizes: Sizes::Fixed(packet),
                load: 1.0,
            },
            SimParams {
                warmup,
                measure,
                drain_limit: measure,
                ..params(seed)
            },
            HostParams {
                send_per_byte: per_byte,
                ..HostParams::default()
            },
        )
    }

    fn spec(&self, workload: Workload, params: SimParams, host: HostParams) -> Spec {
        Spec {
            name: self.name.clone(),
            fabric: self.fabric.clone(),
            routing: self.routing.clone(),
            workload,
            params,
            host,
            messages: None,
        }
    }

    /// The uniform-traffic flow bound of the routes [payload MB/s per node]: the load at
    /// which the busiest channel would be busy all the time, every host sending full
    /// packets to every other alike (each a byte of routing string a chip on top).
    pub fn flow_bound_mbps(&self) -> f64 {
        let fab = &self.fabric;
        let n = fab.num_hosts() as u32;
        let mut load = vec![0u64; fab.channels.len()];
        let mut route_bytes = 0u64;
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                if let Ok((path, _)) = self.routing.path(fab, a, b) {
                    route_bytes += path.len() as u64 - 1;
                    for (c, _) in &path[1..path.len() - 1] {
                        load[c.idx()] += 1;
                    }
                }
            }
        }
        let pairs = (n as u64 * (n as u64 - 1)).max(1);
        let busiest = load.iter().copied().max().unwrap_or(0).max(1) as f64 / (n as f64 - 1.0);
        let packet = (P::MTU + P::FRAMING) as f64 + route_bytes as f64 / pairs as f64;
        let link = SEC as f64 / P::core().period().to_f64();
        link / busiest * P::MTU as f64 / packet / 1e6
    }

    /// Whether the fabric is a torus or grid (a drawable 2-D network).
    pub fn is_cube(&self) -> bool {
        matches!(self.fabric.shape, Shape::Cube { .. })
    }
}

/// Run parameters shared by every ATOLL run: cycles of the core clock, a byte a flit.
fn params(seed: u64) -> SimParams {
    SimParams {
        seed,
        warmup: 0,
        measure: 0,
        drain_limit: 0,
        drain_all: false,
        batches: 10,
        cycle: P::core().period(),
        check: false,
        // Far longer than any packet takes over a hop, far shorter than a run.
        watchdog: 200 * crate::time::US,
        flit_bytes: 1,
        trains: true,
        express: true,
        max_header: 0,
        sampling: None,
        runs: 1,
        source_queueing: true,
    }
}

/// A square torus of `nodes` chips (16, 64, 256, 1024, …).
pub fn torus(nodes: u32) -> Wiring {
    let k = (nodes as f64).sqrt().round() as u32;
    Wiring::Torus { k: [k, k] }
}

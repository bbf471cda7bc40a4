//! The runs behind `reef reproduce ieee1355`: one simulation per job (saturation, load, one
//! DS link, ATLAS fan-in) on the Macramé model, the run lengths, and the pool that runs them
//! on the machine's cores and gathers the results in job order.

use super::super::atlas::{self, Atlas, EventShape, Placement, Verdict};
use super::super::net::{Net, RouteMode, Timing, Topo, ds_link, fabric_and_routing, spec, stc104};
use super::super::pairs;
use super::super::params::*;
use super::super::traffic::{self, Dest, Offered, TrafficNodes, Window};
use crate::stats::LatencyAcc;
use crate::systems::Options;

/// Traffic of a saturation or load run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    Random,
    SystematicBest,
    SystematicWorst,
}

impl Traffic {
    pub fn name(self) -> &'static str {
        match self {
            Traffic::Random => "random",
            Traffic::SystematicBest => "systematic-best",
            Traffic::SystematicWorst => "systematic-worst",
        }
    }
}

/// One simulation.
#[derive(Clone, Debug)]
pub enum Job {
    /// Backlogged sources.
    Saturation {
        net: Net,
        traffic: Traffic,
        payload: u32,
    },
    /// Poisson sources, random traffic, `load` % of the both-ways ceiling.
    Load { net: Net, load: f64, payload: u32 },
    /// Two traffic nodes on one DS link, one way, backlogged.
    Link { payload: u32 },
    /// `job` with the seed of another run (the same traffic on a changed model).
    Seeded { job: Box<Job>, seed: u64 },
    /// The ATLAS fan-in at `rate` [kHz] with its own `seed`, measured over `window` in
    /// `batches` batches.
    Atlas {
        placement: Placement,
        shape: EventShape,
        rate: f64,
        seed: u64,
        window: AtlasWindow,
    },
}

/// How an ATLAS run is measured: the window [ps] and its batches.
#[derive(Clone, Copy, Debug)]
pub struct AtlasWindow {
    pub window: Window,
    pub batches: usize,
}

/// What one job measured.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Accepted payload [MB/s], all destinations together.
    pub accepted: f64,
    pub offered: f64,
    pub latency: LatencyAcc,
    /// 95 % half-widths by batch means: of `accepted` [MB/s] and of the mean latency [ps].
    pub accepted_ci95: Option<f64>,
    pub latency_ci95: Option<f64>,
    pub undelivered: u64,
    pub wall_s: f64,
    /// ATLAS runs: throughput against offered load, and whether the queues grew.
    pub verdict: Option<Verdict>,
    /// ATLAS runs: mean time from an event to a fragment's delivery, queueing at the buffer
    /// included [ps].
    pub event_delay: f64,
}

impl Outcome {
    /// An ATLAS run whose rate is sustainable ([`Verdict::sustainable`]).
    pub fn sustainable(&self) -> bool {
        self.verdict.is_some_and(|v| v.sustainable())
    }
}

/// Run lengths [ps].
#[derive(Clone, Copy, Debug)]
pub struct Lengths {
    pub saturation: Window,
    pub load: Window,
    /// The ATLAS sweep and the search for its knee.
    pub atlas: AtlasWindow,
    /// The ATLAS sensitivity table's searches (shorter).
    pub atlas_short: AtlasWindow,
}

impl Lengths {
    /// The saturation window for packets of `payload` bytes: at least 40 packet times of
    /// measurement after at least 8 of warm-up, so long packets are counted fairly.
    pub fn saturation_for(&self, payload: u32) -> Window {
        let packet = (payload as u64 + 3) * DATA_CHAR;
        Window {
            warmup: self.saturation.warmup.max(8 * packet),
            measure: self.saturation.measure.max(40 * packet),
            drain: 0,
        }
    }

    pub fn new(quick: bool) -> Lengths {
        let us = 1_000_000;
        // ATLAS: the queues at the buffers take some milliseconds to settle near the knee
        // (the event delay there is 0.3-0.8 ms); batches of a quarter of a millisecond or
        // more hold several events each.
        let quick_atlas = AtlasWindow {
            window: Window {
                warmup: 1_000 * us,
                measure: 2_000 * us,
                drain: 300 * us,
            },
            batches: 8,
        };
        if quick {
            Lengths {
                saturation: Window {
                    warmup: 60 * us,
                    measure: 150 * us,
                    drain: 0,
                },
                load: Window {
                    warmup: 60 * us,
                    measure: 250 * us,
                    drain: 200 * us,
                },
                atlas: quick_atlas,
                atlas_short: AtlasWindow {
                    window: Window {
                        warmup: 500 * us,
                        measure: 1_000 * us,
                        drain: 200 * us,
                    },
                    batches: 4,
                },
            }
        } else {
            Lengths {
                saturation: Window {
                    warmup: 100 * us,
                    measure: 500 * us,
                    drain: 0,
                },
                load: Window {
                    warmup: 100 * us,
                    measure: 1_000 * us,
                    drain: 400 * us,
                },
                atlas: AtlasWindow {
                    window: Window {
                        warmup: 2_000 * us,
                        measure: 4_800 * us,
                        drain: 400 * us,
                    },
                    batches: 8,
                },
                atlas_short: AtlasWindow {
                    window: Window {
                        warmup: 1_200 * us,
                        measure: 2_400 * us,
                        drain: 300 * us,
                    },
                    batches: 6,
                },
            }
        }
    }
}

fn header_flits(net: &Net) -> u32 {
    match net.route {
        RouteMode::Universal => {
            let w = fabric_and_routing(net).map_or(1, |(_, r)| r.header_width() as u32);
            2 * w
        }
        _ => header_bytes(net.nodes),
    }
}

/// Offered load per node for `load` % of the both-ways ceiling [ps between packets].
pub fn mean_gap(net: &Net, load: f64, payload: u32) -> f64 {
    let ceil = link_ceiling_mbps(payload, header_bytes(net.nodes), true);
    let per_node = ceil * load / 100.0; // MB/s
    payload as f64 / (per_node * 1e6) * 1e12
}

/// Runs one job.
pub fn run_job(job: &Job, lengths: &Lengths, seed: u64) -> Result<Outcome, String> {
    let t0 = std::time::Instant::now();
    let mut out = match job {
        Job::Seeded { job, seed } => run_job(job, lengths, *seed)?,
        Job::Saturation {
            net,
            traffic,
            payload,
        } => {
            let dest = match (traffic, net.topo) {
                (Traffic::Random, _) => Dest::Random,
                (Traffic::SystematicBest, Topo::Clos) => Dest::Fixed(pairs::clos_halves(net.nodes)),
                (Traffic::SystematicBest, _) => {
                    Dest::Fixed(pairs::grid_nearest(net.nodes).ok_or("no nearest-neighbour pairing")?)
                }
                (Traffic::SystematicWorst, Topo::Clos) => Dest::Fixed(pairs::clos_halves(net.nodes)),
                (Traffic::SystematicWorst, _) => {
                    Dest::Fixed(pairs::grid_mirror(net.nodes).ok_or("no mirror pairing")?)
                }
            };
            nodes_run(
                net,
                *payload,
                dest,
                Offered::Backlogged,
                lengths.saturation_for(*payload),
                seed,
            )?
        }
        Job::Load { net, load, payload } => nodes_run(
            net,
            *payload,
            Dest::Random,
            Offered::Poisson {
                mean_gap: mean_gap(net, *load, *payload),
            },
            lengths.load,
            seed,
        )?,
        Job::Link { payload } => {
            // Two nodes are cheap: a long window, so whole packets count fairly.
            let w = lengths.saturation_for(*payload);
            let w = Window {
                measure: 10 * w.measure,
                ..w
            };
            link_run(*payload, w, seed)?
        }
        Job::Atlas {
            placement,
            shape,
            rate,
            seed,
            window,
        } => {
            let net = Net::new(Topo::Clos, atlas::NODES, RouteMode::Adaptive);
            let w = window.window;
            let s = spec(&net, *seed, w.end() + w.drain + 1_000_000, 2)?;
            let mut a = Atlas::new(*placement, *shape, rate * 1e3, w, window.batches, *seed);
            traffic::run(&s, &mut a)?;
            let verdict = a.verdict();
            Outcome {
                accepted: a.accepted_mbps(),
                accepted_ci95: Some(verdict.accepted.1),
                offered: a.offered_mbps(),
                undelivered: a.undelivered,
                verdict: Some(verdict),
                event_delay: a.delay.mean(),
                latency: a.latency,
                ..Outcome::default()
            }
        }
    };
    out.wall_s = t0.elapsed().as_secs_f64();
    Ok(out)
}

fn nodes_run(
    net: &Net,
    payload: u32,
    dest: Dest,
    offered: Offered,
    w: Window,
    seed: u64,
) -> Result<Outcome, String> {
    let mut s = spec(net, seed, w.end() + w.drain + 1_000_000, 4)?;
    if net.timing == Timing::SerialDispatch {
        // The dispatch of a packet starts when the previous is out: the host's next packet
        // is ready 650 ns plus one packet time after the previous one was (a packet that
        // finds its node idle waits one packet time more than it should before its header
        // is sent; latency is counted from then, so only busy nodes feel it).
        let flits = header_flits(net) + payload + 1;
        s.host.send_overhead = DISPATCH + (flits as u64 - 1) * DATA_CHAR + CONTROL_CHAR;
    }
    let mut a = TrafficNodes::new(net.nodes, payload, dest, offered, w, seed);
    if net.route == RouteMode::Universal {
        let (lo, hi) =
            crate::routing::interval::universal_labels(&s.fabric).ok_or("universal needs a Clos")?;
        let hf = header_flits(net) / 2;
        a = a.universal(lo, hi, hf);
    }
    traffic::run(&s, &mut a)?;
    Ok(Outcome {
        accepted: a.out.accepted_mbps(),
        accepted_ci95: a.out.accepted_ci95_mbps(),
        latency_ci95: a.out.latency_ci95(),
        offered: a.out.offered_mbps(),
        undelivered: a.out.undelivered,
        latency: a.out.latency,
        ..Outcome::default()
    })
}

/// Two traffic nodes joined by one DS link, node 0 sending to node 1.
fn link_run(payload: u32, w: Window, seed: u64) -> Result<Outcome, String> {
    use crate::fabric::{FabricBuilder, Shape};
    use crate::routing::{Routing, table::HeaderTable, table::TableBuilder};
    let mut b = FabricBuilder::new(&[], 2);
    b.link(b.host(0), 0, b.host(1), 0, ds_link(INPUT_FIFO, CABLE))
        .map_err(|e| e.to_string())?;
    let fab = b.build(stc104(), Shape::Irregular).map_err(|e| e.to_string())?;
    let mut s = spec(
        &Net::new(Topo::Clos, 64, RouteMode::Adaptive),
        seed,
        w.end() + 1_000_000,
        1,
    )?;
    s.name = "ds-link".into();
    s.routing = Routing::Header(HeaderTable::new(
        "none",
        TableBuilder::new(0, 2, 1).build("none"),
        vec![vec![0], vec![1]],
    ));
    s.workload.pattern = crate::workload::Pattern::Map(vec![crate::workload::pattern::SILENT; 2]);
    s.fabric = fab;
    let mut a = TrafficNodes::new(
        2,
        payload,
        Dest::Fixed(vec![1, crate::workload::pattern::SILENT]),
        Offered::Backlogged,
        w,
        seed,
    );
    traffic::run(&s, &mut a)?;
    // (One backlogged sender on one link is deterministic: no interval.)
    Ok(Outcome {
        accepted: a.out.accepted_mbps(),
        offered: a.out.offered_mbps(),
        ..Outcome::default()
    })
}

/// A rough cost of a job, to start the longest first: the payload it moves [MB] (the
/// simulator's time per byte is about the same for these runs, within a factor of two).
fn cost(job: &Job, lengths: &Lengths) -> f64 {
    let s = |t: u64| t as f64 * 1e-12;
    match job {
        Job::Seeded { job, .. } => cost(job, lengths),
        Job::Saturation { net, payload, .. } => {
            let w = lengths.saturation_for(*payload);
            net.nodes as f64 * 5.0 * s(w.end())
        }
        Job::Load { net, load, payload } => {
            let ceil = link_ceiling_mbps(*payload, header_bytes(net.nodes), true);
            net.nodes as f64 * ceil * load / 100.0 * s(lengths.load.end() + lengths.load.drain)
        }
        Job::Link { .. } => 0.0,
        Job::Atlas {
            shape, rate, window, ..
        } => {
            let mbps = (rate * shape.event_bytes() / 1e3).min(500.0);
            mbps * s(window.window.end() + window.window.drain)
        }
    }
}

/// Runs `jobs` on the cores the pool allows (`--jobs`), the costliest first; results in job
/// order. On a terminal a line shows `phase`, the runs done, the rate of work and the time
/// left (the work counted by each job's estimated cost). Ctrl-C stops it before the next
/// job: the jobs not run are then `None`.
pub fn run_all(
    jobs: &[Job],
    lengths: &Lengths,
    opts: &Options,
    phase: &str,
) -> Result<Vec<Option<Outcome>>, String> {
    // Longest first, so no core waits alone on a long job at the end (the order of running
    // does not change a result: each job's seed comes from its index).
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    let costs: Vec<f64> = jobs.iter().map(|j| cost(j, lengths)).collect();
    order.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    let total: f64 = costs.iter().sum::<f64>().max(1e-12);
    let work = std::sync::Mutex::new(0.0f64);
    let bar = std::sync::Mutex::new(crate::runner::Bar::new("reef reproduce ieee1355", opts.progress));
    let wall = std::time::Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let outs = crate::systems::par_map(
        &order,
        |&i| {
            if crate::interrupt::check() {
                return None;
            }
            // Every job has its own seed, derived from its index, so the result does not
            // depend on which thread ran it.
            let r = run_job(
                &jobs[i],
                lengths,
                opts.seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
            );
            let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if let (Ok(mut w), Ok(mut b)) = (work.lock(), bar.lock()) {
                *w += costs[i];
                let rate = *w / wall.elapsed().as_secs_f64().max(1e-9);
                b.phase(&format!("{phase}, {d} of {} runs", jobs.len()));
                b.update(*w / total, Some(&format!("{rate:.1} MB of traffic/s")));
            }
            Some(r)
        },
        |_| {},
    );
    if let Ok(mut b) = bar.lock() {
        b.finish();
    }
    let mut slots: Vec<Option<Result<Outcome, String>>> = vec![None; jobs.len()];
    for (&i, r) in order.iter().zip(outs) {
        slots[i] = r;
    }
    let stopped = crate::interrupt::requested();
    slots
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(r) => r.map(Some),
            None if stopped => Ok(None),
            None => Err(format!("job {i} did not run")),
        })
        .collect()
}

/// Every outcome, or `None` if Ctrl-C left some not run.
pub(super) fn all_or_none(v: Vec<Option<Outcome>>) -> Option<Vec<Outcome>> {
    v.into_iter().collect()
}

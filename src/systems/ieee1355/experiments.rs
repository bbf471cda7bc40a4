//! The experiments of `reef reproduce ieee1355` (`../shared/systems/ieee1355.md`,
//! "Experiments to reproduce"), as runs of the Macramé model, and their records.
//!
//! Definitions (the spec's): latency from the header sent to the EOP received; load per node
//! as a percentage of the both-ways link ceiling for the packet length and header; saturation
//! throughput with every source backlogged, over a fixed window after warm-up.
//!
//! Runs are independent jobs spread over the machine's cores; results are gathered in job
//! order, so the report does not depend on thread timing.

use super::atlas::{self, Atlas, EventShape, Placement, Verdict};
use super::knee::{Knee, run_seed};
use super::net::{Buffering, Net, RouteMode, Timing, Topo, fabric_and_routing, spec};
use super::pairs;
use super::params::*;
use super::traffic::{self, Dest, Offered, TrafficNodes, Window};
use crate::stats::LatencyAcc;
use crate::systems::{Options, Record, Report};
use serde_json::{Value, json};

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
    b.link(b.host(0), 0, b.host(1), 0, super::net::ds_link(INPUT_FIFO, CABLE))
        .map_err(|e| e.to_string())?;
    let fab = b
        .build(super::net::stc104(), Shape::Irregular)
        .map_err(|e| e.to_string())?;
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
fn all_or_none(v: Vec<Option<Outcome>>) -> Option<Vec<Outcome>> {
    v.into_iter().collect()
}

/// The report of a reproduction Ctrl-C stopped: every experiment is made from the two
/// shared pools of runs (a run feeds several experiments), so none is whole before both
/// pools are done, and none is printed.
fn interrupted(mut rep: Report) -> Report {
    rep.interrupted = true;
    rep.unfinished = [
        "saturation-vs-size",
        "latency-vs-load",
        "latency-distribution",
        "routing",
        "atlas",
        "atlas-vs-rate",
        "atlas-sensitivity",
        "packet-length",
        "cross-section",
        "model-sensitivity (every experiment: each is made from two shared pools of runs)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    rep
}

/// Sets the source note of a record that has no published figure.
fn explain(mut r: Record, how: &str) -> Record {
    if r.published.is_none() {
        r.source = how.to_string();
    }
    r
}

/// A record, with the published figure attached if the table has one for it.
pub fn record(experiment: &str, c: &[(&str, Value)], metric: &str, unit: &str, value: f64) -> Record {
    let r = Record::new(experiment, c, metric, unit, value);
    let same = |x: &Value, v: &str| match x {
        Value::String(s) => s == v,
        x => x.as_f64().is_some_and(|a| v.parse::<f64>().is_ok_and(|b| a == b)),
    };
    for p in PUBLISHED {
        if p.experiment == experiment
            && p.metric == metric
            && p.case.len() == r.case.len()
            && p.case
                .iter()
                .all(|(k, v)| r.case.get(*k).is_some_and(|x| same(x, v)))
        {
            return r.published(p.value, p.source);
        }
    }
    r
}

/// Rounds to 0.1.
fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The whole reproduction.
pub fn reproduce(opts: &Options) -> Result<Report, String> {
    let quick = opts.quick;
    let len = Lengths::new(quick);
    let mut rep = Report::new("ieee1355");
    let wall = std::time::Instant::now();
    let l = PACKET_BYTES;
    let ad = |topo, nodes| Net::new(topo, nodes, RouteMode::Adaptive);

    // Phase 1: saturation, link and fixed-load runs, the ATLAS sweep.
    let mut sat: Vec<(Net, Traffic, u32)> = Vec::new();
    for n in [64, 128, 256, 512] {
        for t in [Traffic::Random, Traffic::SystematicBest] {
            sat.push((ad(Topo::Clos, n), t, l));
        }
    }
    for n in [64, 256, 1024] {
        for t in [Traffic::Random, Traffic::SystematicBest] {
            sat.push((ad(Topo::Grid, n), t, l));
        }
    }
    sat.push((ad(Topo::Grid, 256), Traffic::SystematicWorst, l));
    for n in [256, 1024] {
        sat.push((ad(Topo::Torus, n), Traffic::Random, l));
    }
    let det256 = Net::new(Topo::Clos, 256, RouteMode::Deterministic);
    sat.push((det256, Traffic::Random, l));
    let lengths_pl: &[u32] = if quick {
        &[8, 64, 256, 1024]
    } else {
        &[8, 16, 32, 64, 128, 256, 512, 1024]
    };
    for &p in lengths_pl {
        if p != l {
            sat.push((ad(Topo::Clos, 256), Traffic::Random, p));
        }
    }
    // Sensitivity and routing variants (reported in the notes).
    let tok70 = Net {
        buffering: Buffering::Tokens70,
        ..ad(Topo::Clos, 256)
    };
    let univ = Net::new(Topo::Clos, 256, RouteMode::Universal);
    sat.push((tok70, Traffic::Random, l));
    sat.push((univ, Traffic::Random, l));

    let dist_cases: Vec<(u32, f64)> = vec![(256, 10.0), (256, 30.0), (256, 50.0), (64, 50.0)];
    // The ATLAS sweep, on until throughput falls away from the offered load on both
    // placements.
    let rates: Vec<f64> = if quick {
        vec![10.0, 25.0, 40.0]
    } else {
        vec![10.0, 20.0, 30.0, 35.0, 40.0, 50.0]
    };
    let placements = [Placement::Grouped, Placement::Distributed];
    let variants = atlas_variants();
    let atlas_seed = |pi: usize, vi: usize| {
        opts.seed
            .wrapping_mul(1_000_003)
            .wrapping_add(ATLAS_SEEDS + (pi * 100 + vi) as u64)
    };

    let mut jobs: Vec<Job> = sat
        .iter()
        .map(|&(net, traffic, payload)| Job::Saturation {
            net,
            traffic,
            payload,
        })
        .collect();
    let link0 = jobs.len();
    for &p in lengths_pl {
        jobs.push(Job::Link { payload: p });
    }
    let dist0 = jobs.len();
    for &(n, load) in &dist_cases {
        jobs.push(Job::Load {
            net: ad(Topo::Clos, n),
            load,
            payload: l,
        });
    }
    let atlas0 = jobs.len();
    for (pi, &pl) in placements.iter().enumerate() {
        for (ri, &r) in rates.iter().enumerate() {
            jobs.push(Job::Atlas {
                placement: pl,
                shape: EventShape::CHOSEN,
                rate: r,
                seed: run_seed(atlas_seed(pi, 0), ri),
                window: len.atlas,
            });
        }
    }
    // What the model leaves out (NULLs, the links' clocks, serial dispatch), each on the same
    // traffic as a run of the default model: the 256-node Clos's saturation and the latency
    // distributions.
    let timings = [Timing::NullWorst, Timing::ClockSkew, Timing::SerialDispatch];
    let seed_of = |i: usize| opts.seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
    let mut sens: Vec<(Timing, Figure, usize)> = Vec::new();
    let mut figures: Vec<(Figure, usize)> = Vec::new();
    for t in [Traffic::Random, Traffic::SystematicBest] {
        if !quick || t == Traffic::Random {
            let net = ad(Topo::Clos, 256);
            let i = sat
                .iter()
                .position(|&x| x == (net, t, l))
                .ok_or("no 256-node Clos run")?;
            figures.push((Figure::Saturation(t), i));
        }
    }
    for (k, _) in dist_cases.iter().enumerate() {
        if !quick || dist_cases[k].0 == 64 {
            figures.push((Figure::Distribution(k), dist0 + k));
        }
    }
    for &timing in &timings {
        for &(fig, base) in &figures {
            let job = match (&jobs[base], fig) {
                (
                    Job::Saturation {
                        net,
                        traffic,
                        payload,
                    },
                    _,
                ) => Job::Saturation {
                    net: Net { timing, ..*net },
                    traffic: *traffic,
                    payload: *payload,
                },
                (Job::Load { net, load, payload }, _) => Job::Load {
                    net: Net { timing, ..*net },
                    load: *load,
                    payload: *payload,
                },
                _ => return Err("a model-sensitivity run of an unexpected job".into()),
            };
            sens.push((timing, fig, jobs.len()));
            jobs.push(Job::Seeded {
                job: Box::new(job),
                seed: seed_of(base),
            });
        }
    }
    let Some(res1) = all_or_none(run_all(
        &jobs,
        &len,
        opts,
        "phase 1 of 2: saturation, link, load and ATLAS runs",
    )?) else {
        return Ok(interrupted(rep));
    };
    let sat_run = |net: &Net, t: Traffic, p: u32| -> Option<&Outcome> {
        sat.iter()
            .position(|&(n, tt, pp)| n == *net && tt == t && pp == p)
            .map(|i| &res1[i])
    };
    let sat_of = |net: &Net, t: Traffic, p: u32| sat_run(net, t, p).map_or(f64::NAN, |o| o.accepted);
    let sat_ci = |net: &Net, t: Traffic, p: u32| sat_run(net, t, p).and_then(|o| o.accepted_ci95);

    // Phase 2: latency against load, at fractions of each network's measured saturation load,
    // and a finer look at the highest sustainable ATLAS event rate.
    let fractions: &[f64] = if quick {
        &[0.2, 0.5, 0.8]
    } else {
        &[0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 0.95]
    };
    let mut curves: Vec<Net> = [64, 128, 256, 512].iter().map(|&n| ad(Topo::Clos, n)).collect();
    curves.push(det256);
    let mut jobs2: Vec<Job> = Vec::new();
    let mut curve_points: Vec<(usize, f64)> = Vec::new();
    for (ci, net) in curves.iter().enumerate() {
        let s = sat_of(net, Traffic::Random, l) / net.nodes as f64;
        let ceil = link_ceiling_mbps(l, header_bytes(net.nodes), true);
        for &f in fractions {
            let load = r1(100.0 * f * s / ceil).max(0.1);
            curve_points.push((ci, load));
            jobs2.push(Job::Load {
                net: *net,
                load,
                payload: l,
            });
        }
    }
    // The knee of each placement, from the sweep's bracket, and of each variant of the
    // event shape, stepping out from the chosen shape's knee scaled by the event size; the
    // searches go in rounds, the first beside the latency-against-load runs.
    let mut knees: Vec<Knee> = Vec::new();
    for (pi, &pl) in placements.iter().enumerate() {
        let sweep = &res1[atlas0 + pi * rates.len()..atlas0 + (pi + 1) * rates.len()];
        let k = Knee::new(pl, EventShape::CHOSEN, atlas_seed(pi, 0), len.atlas, rates[0], 1);
        knees.push(k.with_runs(&rates, sweep));
    }
    for (vi, v) in variants.iter().enumerate() {
        for (pi, &pl) in placements.iter().enumerate() {
            let base = knees[pi].lo().map_or(rates[0], |(r, _)| r);
            let start = r1(base * EventShape::CHOSEN.event_bytes() / v.shape.event_bytes());
            let runs = if quick { 1 } else { 2 };
            let seed = atlas_seed(pi, vi + 1);
            knees.push(Knee::new(pl, v.shape, seed, len.atlas_short, start, runs));
        }
    }
    let mut res2 = Vec::new();
    let mut round = 0;
    loop {
        let mut js = if round == 0 { jobs2.clone() } else { Vec::new() };
        let mut which = Vec::new();
        for (k, kn) in knees.iter().enumerate() {
            if let Some(r) = kn.next() {
                js.push(Job::Atlas {
                    placement: kn.placement,
                    shape: kn.shape,
                    rate: r,
                    seed: kn.next_seed(),
                    window: kn.window,
                });
                which.push((k, r));
            }
        }
        if js.is_empty() {
            break;
        }
        let phase = if round == 0 {
            "phase 2 of 2: latency against load, ATLAS knees".to_string()
        } else {
            format!("phase 2 of 2: ATLAS knees, round {}", round + 1)
        };
        let Some(mut rr) = all_or_none(run_all(&js, &len, opts, &phase)?) else {
            return Ok(interrupted(rep));
        };
        let searched = rr.split_off(if round == 0 { jobs2.len() } else { 0 });
        if round == 0 {
            res2 = rr;
        }
        for ((k, r), o) in which.into_iter().zip(searched) {
            knees[k].record(r, o);
        }
        round += 1;
    }

    // Records.
    let n_of = |n: u32| json!(n);
    for (i, &(net, t, p)) in sat.iter().enumerate() {
        if net.buffering != Buffering::Fifos || net.route != RouteMode::Adaptive || p != l {
            continue;
        }
        let c = [
            ("topology", json!(net.topo.name())),
            ("nodes", n_of(net.nodes)),
            ("traffic", json!(t.name())),
            ("packet_bytes", json!(p)),
        ];
        let (a, ci) = (res1[i].accepted, res1[i].accepted_ci95);
        rep.push(record("saturation-vs-size", &c, "saturation_total_MBps", "MB/s", a).ci95(ci));
        rep.push(
            record(
                "saturation-vs-size",
                &c,
                "saturation_per_node_MBps",
                "MB/s",
                a / net.nodes as f64,
            )
            .ci95(ci.map(|x| x / net.nodes as f64)),
        );
    }
    for (k, &(ci, load)) in curve_points.iter().enumerate() {
        let net = curves[ci];
        let o = &res2[k];
        let c = [
            ("topology", json!("clos")),
            ("nodes", n_of(net.nodes)),
            ("traffic", json!("random")),
            ("routing", json!(net.route.name())),
            ("load_percent", json!(load)),
        ];
        rep.push(
            record(
                "latency-vs-load",
                &c,
                "mean_latency_us",
                "µs",
                o.latency.mean() / 1e6,
            )
            .ci95(o.latency_ci95.map(|x| x / 1e6)),
        );
        rep.push(
            record("latency-vs-load", &c, "accepted_total_MBps", "MB/s", o.accepted).ci95(o.accepted_ci95),
        );
    }
    for (k, &(n, load)) in dist_cases.iter().enumerate() {
        let c = [
            ("topology", json!("clos")),
            ("nodes", n_of(n)),
            ("load_percent", json!(load)),
        ];
        rep.records
            .extend(distribution_records("latency-distribution", &c, &res1[dist0 + k]));
    }
    let adaptive256 = sat_of(&ad(Topo::Clos, 256), Traffic::Random, l);
    for (name, net) in [("deterministic", det256), ("adaptive", ad(Topo::Clos, 256))] {
        rep.push(
            record(
                "routing",
                &[
                    ("topology", json!("clos")),
                    ("nodes", json!(256)),
                    ("routing", json!(name)),
                ],
                "saturation_total_MBps",
                "MB/s",
                sat_of(&net, Traffic::Random, l),
            )
            .ci95(sat_ci(&net, Traffic::Random, l)),
        );
    }
    // How evenly the deterministic tables spread the routes over the centre stage.
    let (fab, routing) = fabric_and_routing(&det256)?;
    let (up, down) = crate::routing::interval::centre_link_routes(&fab, &routing)
        .ok_or("the deterministic Clos tables do not route every pair")?;
    for (links, v) in [("up", &up), ("down", &down)] {
        let c = [
            ("topology", json!("clos")),
            ("nodes", json!(256)),
            ("routing", json!("deterministic")),
            ("links", json!(links)),
        ];
        let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
        let min = v.iter().copied().min().unwrap_or(0) as f64;
        let max = v.iter().copied().max().unwrap_or(0) as f64;
        for (m, x) in [
            ("routes_per_centre_link_mean", mean),
            ("routes_per_centre_link_min", min),
            ("routes_per_centre_link_max", max),
        ] {
            rep.push(explain(
                record("routing", &c, m, "routes", x),
                "(source, destination) pairs whose fixed route crosses each terminal-to-centre \
                 (up) or centre-to-terminal (down) link, counted on the tables",
            ));
        }
    }
    for (pi, &pl) in placements.iter().enumerate() {
        let c = [("placement", json!(pl.name()))];
        for r in knee_records("atlas", &c, &knees[pi]) {
            rep.push(r);
        }
        // The curve: the sweep and the search's runs, by attempted rate.
        let mut runs: Vec<&(f64, Outcome)> = knees[pi].runs.iter().collect();
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (r, o) in runs {
            let c = [
                ("placement", json!(pl.name())),
                ("event_rate_kHz", json!((*r * 100.0).round() / 100.0)),
            ];
            let v = o.verdict.unwrap_or_default();
            // (Each with its 95 % half-width by batch means where the run gives one.)
            for (m, unit, x, ci) in [
                ("offered_total_MBps", "MB/s", o.offered, Some(v.offered.1)),
                (
                    "event_rate_realised_kHz",
                    "kHz",
                    o.offered * 1e3 / EventShape::CHOSEN.event_bytes(),
                    Some(v.offered.1 * 1e3 / EventShape::CHOSEN.event_bytes()),
                ),
                ("accepted_total_MBps", "MB/s", o.accepted, Some(v.accepted.1)),
                ("mean_latency_us", "µs", o.latency.mean() / 1e6, None),
                ("mean_event_delay_us", "µs", o.event_delay / 1e6, None),
                (
                    "outstanding_growth_KB",
                    "KB",
                    v.growth.0 / 1024.0,
                    Some(v.growth.1 / 1024.0),
                ),
                (
                    "sustainable",
                    crate::systems::YES_NO,
                    if o.sustainable() { 1.0 } else { 0.0 },
                    None,
                ),
            ] {
                rep.push(record("atlas-vs-rate", &c, m, unit, x).ci95(ci));
            }
        }
    }
    for (vi, v) in variants.iter().enumerate() {
        for (pi, &pl) in placements.iter().enumerate() {
            let c = [
                ("placement", json!(pl.name())),
                ("parameter", json!(v.parameter)),
                ("value", json!(v.value)),
            ];
            for r in knee_records("atlas-sensitivity", &c, &knees[placements.len() * (vi + 1) + pi]) {
                rep.push(r);
            }
        }
    }
    for (k, &p) in lengths_pl.iter().enumerate() {
        rep.push(record(
            "packet-length",
            &[("where", json!("link")), ("packet_bytes", json!(p))],
            "throughput_MBps",
            "MB/s",
            res1[link0 + k].accepted,
        ));
        rep.push(
            record(
                "packet-length",
                &[("where", json!("clos256")), ("packet_bytes", json!(p))],
                "throughput_MBps",
                "MB/s",
                sat_of(&ad(Topo::Clos, 256), Traffic::Random, p),
            )
            .ci95(sat_ci(&ad(Topo::Clos, 256), Traffic::Random, p)),
        );
    }
    for (topo, n) in [
        (Topo::Clos, 64),
        (Topo::Clos, 128),
        (Topo::Clos, 256),
        (Topo::Clos, 512),
        (Topo::Grid, 64),
        (Topo::Grid, 256),
        (Topo::Grid, 1024),
        (Topo::Torus, 256),
        (Topo::Torus, 1024),
    ] {
        let links = super::cross::bisection_links(&ad(topo, n))?;
        rep.push(explain(
            record(
                "cross-section",
                &[("topology", json!(topo.name())), ("nodes", json!(n))],
                "theoretical_cross_section_MBps",
                "MB/s",
                links as f64 * 2.0 * long_packet_both_ways_mbps(),
            ),
            &format!("{links} links cross the bisection, × 2 directions × 9.52 MB/s"),
        ));
    }

    for &timing in std::iter::once(&Timing::Model).chain(&timings) {
        for &(fig, base) in &figures {
            let o = if timing == Timing::Model {
                &res1[base]
            } else {
                let i = sens
                    .iter()
                    .find(|x| x.0 == timing && x.1 == fig)
                    .map(|x| x.2)
                    .ok_or("a model-sensitivity run is missing")?;
                &res1[i]
            };
            match fig {
                Figure::Saturation(t) => rep.push(
                    record(
                        "model-sensitivity",
                        &[
                            ("timing", json!(timing.name())),
                            ("topology", json!("clos")),
                            ("nodes", json!(256)),
                            ("traffic", json!(t.name())),
                        ],
                        "saturation_total_MBps",
                        "MB/s",
                        o.accepted,
                    )
                    .ci95(o.accepted_ci95),
                ),
                Figure::Distribution(k) => {
                    let (n, load) = dist_cases[k];
                    let c = [
                        ("timing", json!(timing.name())),
                        ("topology", json!("clos")),
                        ("nodes", n_of(n)),
                        ("load_percent", json!(load)),
                    ];
                    rep.records
                        .extend(distribution_records("model-sensitivity", &c, o));
                }
            }
        }
    }
    // Notes: assumptions, the variants, and how close the figures the spec shows came.
    super::report::notes(
        &mut rep,
        &super::report::Extra {
            tokens70: sat_of(&tok70, Traffic::Random, l),
            universal: sat_of(&univ, Traffic::Random, l),
            adaptive256,
            atlas_refine: knees
                .iter()
                .take(placements.len())
                .map(|k| {
                    k.runs[rates.len()..]
                        .iter()
                        .map(|(r, o)| (*r, k.realised(o), o.sustainable()))
                        .collect()
                })
                .collect(),
            atlas_window: len.atlas,
            atlas_short: len.atlas_short,
            quick,
            sweep_peak_256: curve_points
                .iter()
                .zip(&res2)
                .filter(|((ci, _), _)| curves[*ci] == ad(Topo::Clos, 256))
                .map(|(_, o)| o.accepted)
                .fold(0.0, f64::max),
        },
    );
    super::report::plots(&mut rep, &res1[dist0..dist0 + dist_cases.len()], &dist_cases)?;
    super::report::drawings(&mut rep, quick, opts.seed)?;
    if opts.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("reef reproduce ieee1355: {:.1} s", wall.elapsed().as_secs_f64());
    }
    Ok(rep)
}

/// A figure the model-sensitivity runs repeat: a 256-node Clos saturation, or a
/// latency-distribution case (its index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Figure {
    Saturation(Traffic),
    Distribution(usize),
}

/// The latency distribution of a run: mean, P(> 3× mean), P(> 5× mean), peak.
fn distribution_records(experiment: &str, c: &[(&str, Value)], o: &Outcome) -> Vec<Record> {
    let m = o.latency.mean();
    vec![
        record(experiment, c, "mean_latency_us", "µs", m / 1e6).ci95(o.latency_ci95.map(|x| x / 1e6)),
        record(
            experiment,
            c,
            "p_exceed_3x_mean",
            "fraction",
            o.latency.fraction_above((3.0 * m) as u64),
        ),
        record(
            experiment,
            c,
            "p_exceed_5x_mean",
            "fraction",
            o.latency.fraction_above((5.0 * m) as u64),
        ),
        explain(
            record(
                experiment,
                c,
                "peak_latency_us",
                "µs",
                o.latency.mode(PEAK_BIN).unwrap_or(0) as f64 / 1e6,
            ),
            "the centre of the most populated 0.5 µs bin",
        ),
    ]
}

/// Seeds of the ATLAS runs start here (past any job index).
const ATLAS_SEEDS: u64 = 1 << 20;

/// One variant of the ATLAS event shape for the sensitivity table: the parameter varied,
/// its value as text, the shape.
pub struct Variant {
    pub parameter: &'static str,
    pub value: &'static str,
    pub shape: EventShape,
}

/// The event shapes of the sensitivity table: the chosen one ([`EventShape::CHOSEN`]: 5 FEX
/// per event, 16 buffers per region, fragments of 32..=224 bytes), measured as the others
/// are, then each of its three parameters, none of them published, varied alone over about
/// half to double its chosen value.
pub fn atlas_variants() -> Vec<Variant> {
    let c = EventShape::CHOSEN;
    vec![
        Variant {
            parameter: "chosen",
            value: "5 FEX, 16 buffers, 32..=224 B",
            shape: c,
        },
        Variant {
            parameter: "fex_per_event",
            value: "3",
            shape: EventShape {
                roi_per_event: 3,
                ..c
            },
        },
        Variant {
            parameter: "fex_per_event",
            value: "10",
            shape: EventShape {
                roi_per_event: 10,
                ..c
            },
        },
        Variant {
            parameter: "buffers_per_roi",
            value: "8",
            shape: EventShape {
                buffers_per_roi: 8,
                ..c
            },
        },
        Variant {
            parameter: "buffers_per_roi",
            value: "32",
            shape: EventShape {
                buffers_per_roi: 32,
                ..c
            },
        },
        Variant {
            parameter: "fragment_bytes",
            value: "16..=112",
            shape: EventShape {
                fragment_min: 16,
                fragment_max: 112,
                ..c
            },
        },
        Variant {
            parameter: "fragment_bytes",
            value: "64..=448",
            shape: EventShape {
                fragment_min: 64,
                fragment_max: 448,
                ..c
            },
        },
    ]
}

/// The records of one knee search: the event size; the highest sustainable rate and the mean
/// receive rate per FEX there (its accepted payload over the 80 FEX) with its 95 %
/// half-width, if a rate was found sustainable; the lowest rate above it judged not
/// sustainable, if one was.
fn knee_records(experiment: &str, c: &[(&str, Value)], k: &Knee) -> Vec<Record> {
    let how = "the highest event rate (realised: offered payload over the mean event size) whose \
               run kept accepted equal to offered within the 95 % batch-means interval with its \
               outstanding payload not growing";
    let mut out = vec![record(
        experiment,
        c,
        "event_KB",
        "KB",
        k.shape.event_bytes() / 1024.0,
    )];
    if let Some((lo, o)) = k.lo() {
        let v = o.verdict.unwrap_or_default();
        out.push(explain(
            record(experiment, c, "max_event_rate_kHz", "kHz", lo),
            how,
        ));
        out.push(
            record(
                experiment,
                c,
                "fex_receive_MBps",
                "MB/s",
                o.accepted / atlas::FEX as f64,
            )
            .ci95(Some(v.accepted.1 / atlas::FEX as f64)),
        );
    }
    if let Some(hi) = k.hi() {
        out.push(explain(
            record(experiment, c, "first_unsustainable_kHz", "kHz", hi),
            "the lowest event rate above the highest sustainable one judged not sustainable: \
             the knee lies between",
        ));
    }
    out
}

/// Bin width for the latency distribution's peak [ps].
pub const PEAK_BIN: u64 = 500_000;

//! The experiments of `reef reproduce ieee1355` (`../shared/systems/ieee1355.md`,
//! "Experiments to reproduce"), as runs of the Macramé model, and their records.
//!
//! Definitions (the spec's): latency from the header sent to the EOP received; load per node
//! as a percentage of the both-ways link ceiling for the packet length and header; saturation
//! throughput with every source backlogged, over a fixed window after warm-up.
//!
//! Runs are independent jobs spread over the machine's cores; results are gathered in job
//! order, so the report does not depend on thread timing.
//!
//! The parts: `runs` the jobs and the pool that runs them, `records` the records made of
//! their outcomes; this file plans the runs and puts the report together.

mod records;
mod runs;

use records::{distribution_records, explain, knee_records};
use runs::all_or_none;

pub use records::{PEAK_BIN, record};
pub use runs::{AtlasWindow, Job, Lengths, Outcome, Traffic, mean_gap, run_all, run_job};

use super::atlas::{EventShape, Placement};
use super::knee::{Knee, run_seed};
use super::net::{Buffering, Net, RouteMode, Timing, Topo, fabric_and_routing};
use super::params::*;
use crate::systems::{Options, Report};
use serde_json::json;

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

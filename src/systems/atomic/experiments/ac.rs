//! The Address Consultant's experiments: mapping networks by loop probes and by flooding
//! (messages per node against the authors' estimate in `params`), the route service's
//! deadlock-free sets, and recovery from a link or node fault.

use super::super::{net, params as P};
use super::{competing_lan, mesh_switch_lan};
use crate::control::ac::{Config, Fault, Flow, Mode};
use crate::control::graph::MGraph;
use crate::control::routes::{Late, Route, RouteSet, dependency_cycle};
use crate::fabric::mosaic::Lan;
use crate::report::plot::{Plot, Series, svg};
use crate::systems::{Artifact, Record, Report};
use crate::time::Time;
use serde_json::json;

/// Maps `lan` with one AC on its first HI.
pub fn map_once(lan: &Lan, mode: Mode) -> MapOutcome {
    let lf = net::build(lan);
    let ac = lf.his[0];
    let (ag, _, _) = net::run_agent(&lf, Config::mapping(mode, vec![ac]));
    let maps = ag.maps();
    let n = lf.nodes as f64;
    // The AC's route set on its own map, checked for dependency cycles.
    let set = ag.route_set(ac).map(|(g, s)| {
        let routes: Vec<Route> = s.routes().cloned().collect();
        SetOutcome {
            cycle: dependency_cycle(g, &routes),
            missing: s.missing.len(),
            outside_set: ag.outside_set,
            routes: routes.len(),
        }
    });
    match maps.first() {
        None => MapOutcome {
            nodes: lf.nodes,
            per_node: 0.0,
            ac_per_node: 0.0,
            time_us: 0.0,
            error: Some("no map".into()),
            set: None,
        },
        Some(m) => MapOutcome {
            nodes: lf.nodes,
            per_node: (m.ac_msgs + m.node_msgs) as f64 / n,
            ac_per_node: m.ac_msgs as f64 / n,
            time_us: (m.done - m.started) as f64 / 1e6,
            error: ag.compare(m),
            set,
        },
    }
}

/// What one mapping run found.
#[derive(Clone, Debug)]
pub struct MapOutcome {
    pub nodes: u32,
    /// Mapping packets per node, every sender (AC, nodes, HIs).
    pub per_node: f64,
    /// Packets the AC itself sent, per node.
    pub ac_per_node: f64,
    pub time_us: f64,
    /// The first difference from the real topology, if any.
    pub error: Option<String>,
    /// The AC's route set on its map.
    pub set: Option<SetOutcome>,
}

/// The AC's route set on its map, checked.
#[derive(Clone, Debug)]
pub struct SetOutcome {
    /// A dependency cycle, if any.
    pub cycle: Option<Vec<(u32, u16)>>,
    /// Pairs of HIs without a route in the set.
    pub missing: usize,
    /// Routes the AC handed out from outside the set (for pairs it has none for).
    pub outside_set: u64,
    pub routes: usize,
}

/// The mapping networks: name, LAN, mode.
pub fn mapping_networks(quick: bool) -> Vec<(String, Lan, Mode)> {
    let mut v = vec![
        ("proto-3x3".to_string(), net::prototype(), Mode::Loops),
        ("proto-3x3-flood".to_string(), net::prototype(), Mode::Flood),
        ("board-8x8".to_string(), net::board8(), Mode::Loops),
        ("lan-4x3x3".to_string(), net::lan4(), Mode::Loops),
        ("lan-4x3x3-flood".to_string(), net::lan4(), Mode::Flood),
        ("nonsym-3x3x3".to_string(), net::nonsym(), Mode::Flood),
    ];
    let seeds: &[u64] = if quick { &[1, 2] } else { &[1, 2, 3, 4, 5, 6] };
    for &s in seeds {
        let b = 2 + (s as u32 % 4);
        v.push((
            format!("random-consistent-{b}-seed{s}"),
            net::random(s, b, true),
            Mode::Loops,
        ));
        v.push((
            format!("random-irregular-{b}-seed{s}"),
            net::random(s, b, false),
            Mode::Flood,
        ));
    }
    v
}

pub(super) fn mapping(rep: &mut Report, quick: bool) {
    let mut loops = Vec::new();
    let mut flood = Vec::new();
    for (name, lan, mode) in mapping_networks(quick) {
        let o = map_once(&lan, mode);
        let case = [("network", json!(name))];
        rep.push(
            Record::new("mapping", &case, "messages_per_node", "msgs", o.per_node)
                .published(P::MSGS_PER_NODE, P::MSGS_SRC),
        );
        rep.push(Record::new("mapping", &case, "map_time_us", "µs", o.time_us));
        rep.push(Record::new(
            "mapping",
            &case,
            "map_correct",
            crate::systems::YES_NO,
            if o.error.is_none() { 1.0 } else { 0.0 },
        ));
        let free = o.set.as_ref().is_some_and(|s| s.cycle.is_none());
        rep.push(
            Record::new(
                "mapping",
                &case,
                "route_set_deadlock_free",
                crate::systems::YES_NO,
                if free { 1.0 } else { 0.0 },
            )
            .source("dependency check over the AC's routes between every pair of HIs of its map"),
        );
        if let Some(c) = o.set.as_ref().and_then(|s| s.cycle.as_ref()) {
            rep.notes.push(format!(
                "mapping {name}: the AC's route set has a dependency cycle {c:?}"
            ));
        }
        if let Some(e) = &o.error {
            rep.notes.push(format!(
                "mapping {name}: the map differs from the real topology: {e}"
            ));
        }
        rep.notes.push(format!(
            "mapping {name} ({mode:?}, {} nodes): {:.2} messages per node in all, {:.2} sent by the AC",
            o.nodes, o.per_node, o.ac_per_node
        ));
        match mode {
            Mode::Loops => loops.push((o.nodes as f64, o.per_node)),
            Mode::Flood => flood.push((o.nodes as f64, o.per_node)),
        }
    }
    loops.sort_by(|a, b| a.0.total_cmp(&b.0));
    flood.sort_by(|a, b| a.0.total_cmp(&b.0));
    let est: Vec<(f64, f64)> = [0.0, 100.0].iter().map(|&x| (x, P::MSGS_PER_NODE)).collect();
    if let Ok(s) = svg(&Plot {
        title: "ATOMIC: mapping messages per node",
        x_label: "Mosaic nodes",
        y_label: "messages per node",
        series: vec![
            Series {
                name: "loop probes".into(),
                points: loops,
                markers_only: true,
                color: None,
            },
            Series {
                name: "modified flooding".into(),
                points: flood,
                markers_only: true,
                color: None,
            },
            Series {
                name: "authors' estimate (~20)".into(),
                points: est,
                markers_only: false,
                color: None,
            },
        ],
        log_y: false,
        log_x: false,
    }) {
        rep.plots.push(Artifact {
            file: "mapping-messages.svg".into(),
            text: s,
        });
    }
}

/// Route service on the four-board LAN: hosts ask the AC over the network.
pub fn route_service_run() -> (Vec<(String, Route)>, bool, usize) {
    let lf = net::build(&net::lan4());
    let his = lf.his.clone();
    let mut cfg = Config::mapping(Mode::Loops, vec![his[0]]);
    cfg.stop_when_mapped = false;
    cfg.stop_at = 20_000_000_000;
    // A packet a millisecond, each acknowledged: a complaint means a lost route, not a slow flow.
    cfg.ack_every = 1;
    cfg.complain_after = 3_000_000_000;
    let pairs = [
        (1, 6, false),
        (2, 5, false),
        (3, 7, false),
        (7, 1, false),
        (1, 5, true),
        (2, 6, true),
    ];
    cfg.flows = pairs
        .iter()
        .map(|&(a, b, hb)| Flow {
            src: his[a],
            dst: his[b],
            payload: 64,
            period: 1_000_000_000,
            start: 8_000_000_000,
            hb,
        })
        .collect();
    let (ag, _, _) = net::run_agent(&lf, cfg);
    let mut out = Vec::new();
    for (i, &(a, b, hb)) in pairs.iter().enumerate() {
        if let Some(r) = &ag.flows[i].route {
            let name = format!("{}h{}→h{}", if hb { "video " } else { "" }, his[a], his[b]);
            out.push((name, r.clone()));
        }
    }
    // Everything the AC handed out, with the rest of its set: deadlock-free together?
    let (g, set) = ag.route_set(his[0]).expect("a map");
    let mut routes: Vec<Route> = ag.given.iter().map(|g| g.2.clone()).collect();
    routes.extend(set.routes().cloned());
    let free = dependency_cycle(g, &routes).is_none() && ag.outside_set == 0;
    let shared = match (&ag.flows[4].route, &ag.flows[5].route) {
        (Some(x), Some(y)) => x.outs().filter(|o| y.outs().any(|p| p == *o)).count(),
        _ => usize::MAX,
    };
    (out, free, shared)
}

/// What the route service's set is on one network.
#[derive(Clone, Debug)]
pub struct SetCheck {
    pub network: String,
    /// Which pairs: "all" HIs, or the switch's "inputs→outputs".
    pub pairs: String,
    pub routes: usize,
    /// Pairs with a route in the network but none in the set.
    pub missing: usize,
    /// Routes that had to give way to stay deadlock-free (more store-and-forward points or
    /// more nodes than the best route).
    pub detours: usize,
    /// Over all routes, store-and-forward points and nodes more than each pair's best.
    pub extra: (usize, u32),
    /// Pairs the first placement (simplest first) left out, placed once they went first.
    pub late: Vec<Late>,
    /// The dependency check's verdict on the set.
    pub cycle: Option<Vec<(u32, u16)>>,
}

/// The route set on every network the reproduction hands out routes on (with the random
/// ones of the mapping experiment), each checked for dependency cycles.
pub fn route_sets(quick: bool) -> Vec<SetCheck> {
    let mut nets: Vec<(String, Lan)> = vec![
        ("proto-3x3".into(), net::prototype()),
        ("board-8x8".into(), net::board8()),
        ("lan-4x3x3".into(), net::lan4()),
        ("nonsym-3x3x3".into(), net::nonsym()),
        ("competing".into(), competing_lan(P::SHORT_CABLE_MFT)),
    ];
    for (name, lan, _) in mapping_networks(quick) {
        if name.starts_with("random") {
            nets.push((name, lan));
        }
    }
    let mut out = Vec::new();
    let mut check = |network: String, pairs: &str, g: &MGraph, set: &RouteSet| {
        let routes: Vec<Route> = set.routes().cloned().collect();
        out.push(SetCheck {
            network,
            pairs: pairs.into(),
            routes: routes.len(),
            missing: set.missing.len(),
            detours: set.detours,
            extra: set.extra,
            late: set.placed_late.clone(),
            cycle: dependency_cycle(g, &routes),
        });
    };
    for (name, lan) in nets {
        let lf = net::build(&lan);
        let g = MGraph::from_lan(&lf, &|_| false);
        check(name, "all", &g, &RouteSet::all_pairs(&g));
    }
    let lf = net::build(&mesh_switch_lan());
    let g = MGraph::from_lan(&lf, &|_| false);
    let io: Vec<(u32, u32)> = (0..16).flat_map(|a| (16..32).map(move |b| (a, b))).collect();
    check(
        "mesh-8x8".into(),
        "inputs→outputs",
        &g,
        &RouteSet::for_pairs(&g, &io),
    );
    out
}

pub(super) fn route_service(rep: &mut Report, quick: bool) {
    for c in route_sets(quick) {
        let case = [("network", json!(c.network)), ("pair", json!(c.pairs))];
        rep.push(
            Record::new(
                "route-service",
                &case,
                "deadlock_free",
                crate::systems::YES_NO,
                if c.cycle.is_none() { 1.0 } else { 0.0 },
            )
            .source(&format!(
                "dependency check over the {} routes of the set (node memories block when full)",
                c.routes
            )),
        );
        rep.push(
            Record::new(
                "route-service",
                &case,
                "pairs_without_route",
                "pairs",
                c.missing as f64,
            )
            .source("pairs the network connects but no deadlock-free route in the set does"),
        );
        rep.push(
            Record::new("route-service", &case, "detours", "routes", c.detours as f64)
                .source("routes longer than the best (S&F points, nodes) to keep the set deadlock-free"),
        );
        rep.push(
            Record::new(
                "route-service",
                &case,
                "detour_extra_nodes",
                "nodes",
                c.extra.1 as f64,
            )
            .source(&format!(
                "nodes passed beyond each pair's best route, summed over the set ({} more S&F points)",
                c.extra.0
            )),
        );
        let late_nodes: u32 = c.late.iter().map(|l| l.placed.1.saturating_sub(l.best.1)).sum();
        let late_sf: usize = c.late.iter().map(|l| l.placed.0.saturating_sub(l.best.0)).sum();
        rep.push(
            Record::new(
                "route-service",
                &case,
                "pairs_placed_late",
                "pairs",
                c.late.len() as f64,
            )
            .source("pairs left out by the simplest-first placement, placed when put first"),
        );
        rep.push(
            Record::new(
                "route-service",
                &case,
                "late_extra_nodes",
                "nodes",
                late_nodes as f64,
            )
            .source(&format!(
                "nodes their routes pass beyond their best routes, summed ({late_sf} more S&F points)"
            )),
        );
        if let Some(cyc) = &c.cycle {
            rep.notes
                .push(format!("route-service {}: dependency cycle {cyc:?}", c.network));
        }
    }
    let (routes, free, shared) = route_service_run();
    for (name, r) in &routes {
        let case = [("network", json!("lan-4x3x3")), ("pair", json!(name))];
        rep.push(Record::new("route-service", &case, "hops", "nodes", r.hops() as f64).source(&r.text()));
        rep.push(Record::new(
            "route-service",
            &case,
            "store_and_forward_points",
            "",
            r.sf_points() as f64,
        ));
    }
    rep.push(
        Record::new(
            "route-service",
            &[("network", json!("lan-4x3x3")), ("pair", json!("handed out"))],
            "deadlock_free",
            crate::systems::YES_NO,
            if free { 1.0 } else { 0.0 },
        )
        .source(
            "dependency check over every route the AC handed out over the network, with the rest of its set",
        ),
    );
    rep.notes.push(format!(
        "route-service: routes asked over the network after the AC mapped the LAN; the routes handed out, with the \
         rest of the AC's set, are deadlock-free by the dependency check: {free}; the two video flows share {shared} \
         links. The AC places a route for every pair of HIs when a map is complete: best unconstrained route first \
         (fewest store-and-forward points, then nodes), each the best that closes no cycle in the dependency graph of \
         those placed before it, where a node memory is one resource between every leg that ends there and every leg \
         that leaves (it blocks when full, its processor sends in order); a pair left over is placed by taking out the \
         routes on the cycle it would close and placing them again after it."
    ));
}

/// What a fault on a flow's route cost.
#[derive(Clone, Debug)]
pub struct FaultOutcome {
    /// From the fault to the first packet on a new route delivered [µs].
    pub recovery_us: f64,
    /// Packets sent and never delivered.
    pub lost: u64,
    pub remaps: u64,
    /// The last map the AC made (the remap's): when, and the messages it took.
    pub remap: Option<crate::control::ac::MapResult>,
    /// The AC's CPU per packet it sends or receives [ps].
    pub ac_cost: Time,
    /// When the fault struck [ps].
    pub t_fault: Time,
}

/// A flow across the four-board LAN, a fault on its route, and what it costs.
pub fn fault_run(node: bool) -> FaultOutcome {
    let lf = net::build(&net::lan4());
    let his = lf.his.clone();
    let flow = Flow {
        src: his[1],
        dst: his[6],
        payload: 54,
        period: 10_000_000,
        start: 6_000_000_000,
        hb: false,
    };
    let mk = || {
        let mut cfg = Config::mapping(Mode::Loops, vec![his[0]]);
        cfg.stop_when_mapped = false;
        cfg.flows = vec![flow];
        cfg.stop_at = 10_000_000_000;
        cfg
    };
    let (ag, _, _) = net::run_agent(&lf, mk());
    let r = ag.flows[0].route.clone().expect("a route");
    let outs: Vec<(u32, u16)> = r.outs().collect();
    let (n, p) = outs[outs.len() / 2];
    // The route names the AC's map nodes: which real node is that?
    let m = ag.maps().remove(0);
    let n = ag.resolve(&m)[n as usize].expect("a mapped node");
    let t_fault: Time = 8_000_000_000;
    let mut cfg = mk();
    cfg.stop_at = 30_000_000_000;
    if node {
        cfg.faults = vec![(t_fault, Fault::Node(n))];
    } else {
        let c = lf.fab.out_chan[n as usize][p as usize].expect("a channel").0;
        cfg.faults = vec![(t_fault, Fault::Channel(c))];
        if let Some(rc) = lf.fab.channels[c as usize].reverse {
            cfg.faults.push((t_fault, Fault::Channel(rc.0)));
        }
    }
    let ac_cost = cfg.ac_cost;
    let (ag, _, _) = net::run_agent(&lf, cfg);
    let fs = &ag.flows[0];
    FaultOutcome {
        recovery_us: fs.recovered_at.map_or(f64::NAN, |t| (t - t_fault) as f64 / 1e6),
        lost: fs.sent.saturating_sub(fs.delivered),
        remaps: ag.remaps,
        remap: ag.maps().pop(),
        ac_cost,
        t_fault,
    }
}

pub(super) fn fault_recovery(rep: &mut Report) {
    for (name, node) in [("link", false), ("node", true)] {
        let FaultOutcome {
            recovery_us: rec,
            lost,
            remaps,
            ..
        } = fault_run(node);
        let case = [("network", json!("lan-4x3x3")), ("fault", json!(name))];
        rep.push(
            Record::new("fault-recovery", &case, "recovery_time_us", "µs", rec)
                .source("fault at 8 ms on the flow's route; until the first packet on a new route arrives"),
        );
        rep.push(
            Record::new("fault-recovery", &case, "packets_lost", "packets", lost as f64).source(&format!(
                "54-byte packets every 10 µs; sent − delivered; {remaps} remap(s)"
            )),
        );
    }
}

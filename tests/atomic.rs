//! ATOMIC: T(L,D) and Table 1 (calibration), maps equal to the real topology on every
//! network (seeded random ones too), deadlock-free route sets, fault recovery, the quick
//! reproduction's records, and determinism of the control plane (trains, event order).

use reef::control::ac::{Atomic, Config, Mode};
use reef::control::graph::MGraph;
use reef::control::routes::{RouteSet, Router, Stop, dependency_cycle};
use reef::fabric::mosaic::Lan;
use reef::routing::mosaic::{EAST, Mosaic, NORTH, SOUTH, WEST};
use reef::routing::{Routing, cdg};
use reef::systems::atomic::{experiments as ex, net, params as P};
use reef::systems::{Options, reproduce};

#[test]
fn quick_reproduction_has_every_record_and_meets_calibration() {
    let rep = reproduce(
        "atomic",
        &Options {
            quick: true,
            seed: 1,
            progress: false,
        },
    )
    .unwrap();
    let has = |e: &str, m: &str, key: &str, val: serde_json::Value| {
        rep.records
            .iter()
            .any(|r| r.experiment == e && r.metric == m && r.case.get(key) == Some(&val))
    };
    for l in [4, 54, 1500] {
        assert!(has("single-flow", "kpkt_per_s", "packet_bytes", l.into()));
        assert!(has("single-flow", "mbit_per_s", "packet_bytes", l.into()));
    }
    for f in [2, 4, 6, 8] {
        assert!(has("competing-flows", "kpkt_per_s", "flows", f.into()));
    }
    assert!(has("competing-flows", "mbit_per_s", "cable_ft", 15.into()));
    for m in [
        "max_mpkt_per_s",
        "latency_ns",
        "aggregate_gbit_per_s",
        "random_bisection_fraction",
    ] {
        assert!(has("mesh-switch", m, "mesh", "8x8".into()), "{m}");
    }
    for m in ["messages_per_node", "map_time_us", "map_correct"] {
        assert!(
            rep.records
                .iter()
                .any(|r| r.experiment == "mapping" && r.metric == m)
        );
    }
    for m in ["hops", "store_and_forward_points"] {
        assert!(
            rep.records
                .iter()
                .any(|r| r.experiment == "route-service" && r.metric == m)
        );
    }
    for m in ["recovery_time_us", "packets_lost"] {
        assert!(
            rep.records
                .iter()
                .any(|r| r.experiment == "fault-recovery" && r.metric == m)
        );
    }
    for r in &rep.records {
        match (r.experiment.as_str(), r.metric.as_str()) {
            ("time-per-packet", _) => assert!(r.deviation().unwrap().abs() < 0.02, "{r:?}"),
            ("single-flow", _) => {
                // Within 2 %, or the table's printed rounding (31.8 printed as 31).
                let p = r.published.unwrap();
                assert!(
                    r.deviation().unwrap().abs() < 0.02 || r.simulated.floor() == p,
                    "{r:?}"
                );
            }
            ("competing-flows", "mbit_per_s") if r.case["packet_bytes"] == 1500 => {
                // Two HIs offer 2 × 381 Mb/s; the shared channel carries a byte per
                // max(16 ns, 13 ns + 3 ns/ft × D): 421 Mb/s over 2 ft, 500 Mb/s over 1 ft.
                let d = r.case["cable_ft"].as_f64().unwrap();
                let wire = 8e3 / (16.0f64).max(13.0 + 3.0 * d);
                assert!((r.simulated / wire - 1.0).abs() < 0.02, "{r:?} vs {wire}");
            }
            ("mapping", "map_correct") => assert_eq!(r.simulated, 1.0, "{r:?}"),
            ("mapping", "route_set_deadlock_free") => assert_eq!(r.simulated, 1.0, "{r:?}"),
            ("mapping", "messages_per_node") => assert!(r.simulated < 10.0, "{r:?}"),
            // (Bounded against the remap in high_bandwidth_routes_share_no_link_and_faults_are_recovered.)
            ("fault-recovery", "recovery_time_us") => {
                assert!(r.simulated > 0.0 && r.simulated.is_finite(), "{r:?}")
            }
            // The 8×8 mesh as a 16×16 switch: each edge channel moves a byte per BYTE_TIME.
            ("mesh-switch", m) => {
                let byte_ns = P::BYTE_TIME as f64 / 1e3;
                let (lo, hi) = match m {
                    // Corner to corner through 16 nodes: each adds its router delay, at
                    // most that and two byte times; then the 4 bytes follow the head.
                    "latency_ns" => {
                        let rd = P::ROUTER_DELAY as f64 / 1e3;
                        (
                            16.0 * rd + 4.0 * byte_ns,
                            16.0 * (rd + 2.0 * byte_ns) + 4.0 * byte_ns,
                        )
                    }
                    // 16 inputs, a 4-byte packet each at most every 4 byte times: 250
                    // Mpkt/s is the ceiling; route bytes and turnarounds take some of it.
                    "max_mpkt_per_s" => {
                        let ceiling = 16.0 * 1e3 / (4.0 * byte_ns);
                        (0.6 * ceiling, ceiling)
                    }
                    // 16 channels × 8 bits / 16 ns = 8 Gb/s; 1,500-byte packets fill it.
                    "aggregate_gbit_per_s" => {
                        let wire = 16.0 * 8.0 / byte_ns;
                        (0.75 * wire, wire)
                    }
                    _ => (0.0, 1.0),
                };
                assert!(
                    (lo..=hi).contains(&r.simulated),
                    "{m}: {} not in {lo}..={hi}",
                    r.simulated
                );
            }
            _ => {}
        }
    }
    let j: serde_json::Value = serde_json::from_str(&rep.json()).unwrap();
    assert_eq!(j["system"], "atomic");
}

#[test]
fn maps_equal_the_real_topology_on_every_network() {
    for (name, lan, mode) in ex::mapping_networks(false) {
        let o = ex::map_once(&lan, mode);
        assert!(o.error.is_none(), "{name}: {:?}", o.error);
        assert!(o.per_node < P::MSGS_PER_NODE / 2.0, "{name}: {}", o.per_node);
    }
    // Flooding maps consistent networks too, and more random irregular ones.
    for seed in 10..16 {
        for consistent in [false, true] {
            let lan = net::random(seed, 2 + seed as u32 % 3, consistent);
            let o = ex::map_once(&lan, Mode::Flood);
            assert!(o.error.is_none(), "{}: {:?}", lan.name, o.error);
        }
    }
}

#[test]
fn several_acs_and_a_host_that_becomes_one() {
    let lf = net::build(&net::lan4());
    let cfg = Config::mapping(Mode::Loops, vec![lf.his[0], lf.his[5]]);
    let (ag, _, _) = net::run_agent(&lf, cfg);
    let maps = ag.maps();
    assert_eq!(maps.len(), 2);
    for m in &maps {
        assert_eq!(ag.compare(m), None);
    }
    // Nobody is an AC: the first candidate finds none and becomes one.
    let mut cfg = Config::mapping(Mode::Flood, vec![]);
    cfg.candidates = lf.his.clone();
    let (ag, _, _) = net::run_agent(&lf, cfg);
    let maps = ag.maps();
    assert!(!maps.is_empty());
    assert_eq!(maps[0].ac, lf.his[0]);
    assert_eq!(ag.compare(&maps[0]), None);
}

#[test]
fn single_leg_routes_are_deadlock_free_by_the_dependency_check() {
    let mut hosts = Vec::new();
    for i in 0..8 {
        hosts.extend([(0, i, WEST), (7, i, EAST), (i, 7, NORTH), (i, 0, SOUTH)]);
    }
    let lf = net::build(&Lan::board("b8", 8, &hosts, 2000));
    let g = MGraph::from_lan(&lf, &|_| false);
    let set = RouteSet::all_pairs(&g);
    let headers: Vec<((u32, u32), Vec<i8>)> = (0..lf.his.len() as u32)
        .flat_map(|a| (0..lf.his.len() as u32).map(move |b| (a, b)))
        .filter_map(|(a, b)| set.get(a, b).map(|r| ((a, b), r)))
        .filter(|(_, r)| r.legs.len() == 1)
        .map(|((a, b), r)| ((lf.his[a as usize], lf.his[b as usize]), r.bytes()))
        .collect();
    // Enough plain worms for the engine's check to mean something (~200 of the 992: the
    // complete set gives more pairs a store-and-forward point than the best routes have).
    assert!(headers.len() > 150, "{}", headers.len());
    // The engine's own check on the plain Mosaic worms: X before Y.
    let routing = Routing::Mosaic(Mosaic::with_headers(headers));
    let rep = cdg::check(&lf.fab, &routing);
    assert!(rep.deadlock_free(), "{:?}", rep.describe_cycle(&lf.fab));
    assert_eq!(rep.failure_count, 0, "{:?}", rep.failures);
    // The composite routes, node memories blocking: no cycle, and every pair has its route
    // (the corner nodes' North and South HIs only once their pairs are placed first).
    let routes: Vec<_> = set.routes().cloned().collect();
    assert_eq!(dependency_cycle(&g, &routes), None);
    assert_eq!(set.missing, vec![]);
    assert_eq!(routes.len(), 32 * 31);
}

#[test]
fn the_dependency_check_finds_the_cycles_of_the_best_routes_and_none_in_the_set() {
    // Each pair's best route alone, on the four-board LAN: their memories close a cycle.
    let lf = net::build(&net::lan4());
    let g = MGraph::from_lan(&lf, &|_| false);
    let mut r = Router::new(&g);
    let n = g.hi.len() as u32;
    let best: Vec<_> = (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .filter(|(a, b)| a != b)
        .filter_map(|(a, b)| r.route(Stop::Hi(a), Stop::Hi(b)))
        .collect();
    let cyc = dependency_cycle(&g, &best).expect("a cycle");
    assert!(
        cyc.iter().any(|&(_, p)| p == reef::routing::mosaic::PROC),
        "{cyc:?}"
    );
    let set = RouteSet::all_pairs(&g);
    assert_eq!(set.missing, vec![]);
    assert_eq!(set.routes().count(), best.len());
    assert_eq!(
        dependency_cycle(&g, &set.routes().cloned().collect::<Vec<_>>()),
        None
    );
}

#[test]
fn the_acs_route_sets_on_its_maps_are_deadlock_free() {
    for (name, lan, mode) in ex::mapping_networks(true) {
        let o = ex::map_once(&lan, mode);
        let set = o.set.expect("a map and its routes");
        assert_eq!(set.cycle, None, "{name}");
        assert!(set.routes > 0, "{name}");
        // Complete, flooded maps of one-way cables too: every route the AC handed out (each
        // HI's route to it and back) came from the set.
        assert_eq!(set.missing, 0, "{name}");
        assert_eq!(set.outside_set, 0, "{name}");
    }
}

#[test]
fn route_sets_are_deadlock_free_on_every_network_the_reproduction_uses() {
    let sets = ex::route_sets(false);
    assert!(sets.iter().any(|c| c.network == "random-irregular-4-seed2"));
    for c in &sets {
        assert_eq!(c.cycle, None, "{}", c.network);
        // Every pair has its route in the set, one-way cables too.
        assert_eq!(c.missing, 0, "{}", c.network);
        assert!(c.routes > 0, "{}", c.network);
    }
    // random-irregular-4-seed2: simplest first leaves pairs into board 2 out; put first, they
    // are placed, on routes no better than their best.
    let c = sets
        .iter()
        .find(|c| c.network == "random-irregular-4-seed2")
        .unwrap();
    assert!(!c.late.is_empty());
    for l in &c.late {
        assert!(l.placed >= l.best, "{l:?}");
    }
}

#[test]
fn high_bandwidth_routes_share_no_link_and_faults_are_recovered() {
    let (routes, free, shared) = ex::route_service_run();
    assert!(routes.len() >= 6);
    assert!(free, "the routes handed out close a dependency cycle");
    assert_eq!(shared, 0);
    for node in [false, true] {
        let o = ex::fault_run(node);
        let m = o.remap.as_ref().expect("a remap");
        let cost_us = o.ac_cost as f64 / 1e6;
        let (start_us, done_us) = (
            (m.started as f64 - o.t_fault as f64) / 1e6,
            (m.done as f64 - o.t_fault as f64) / 1e6,
        );
        let what = format!(
            "node={node}: recovery {:.1} us, lost {}, remaps {}, remap {start_us:.1}..{done_us:.1} us \
             after the fault, {} AC + {} node messages",
            o.recovery_us, o.lost, o.remaps, m.ac_msgs, m.node_msgs
        );
        eprintln!("{what}");
        assert!(o.lost > 0 && o.remaps >= 1, "{what}");
        // The remap began after the fault, and the AC's CPU spent its per-message time on
        // every message it sent: the remap lasts at least that.
        assert!(start_us >= 0.0, "{what}");
        assert!(done_us - start_us >= m.ac_msgs as f64 * cost_us, "{what}");
        // The AC receives at most one answer per message (a probe that does not come back
        // costs it a probe timeout instead), so CPU bounds the remap from above too.
        let probe_us = Config::mapping(Mode::Loops, vec![]).probe_timeout as f64 / 1e6;
        assert!(
            done_us - start_us <= 2.0 * m.ac_msgs as f64 * cost_us + probe_us,
            "{what}"
        );
        // It began once the source complained: within its complaint time and one
        // acknowledgement interval (8 packets, 10 µs apart) of the fault.
        let cfg = Config::mapping(Mode::Loops, vec![]);
        let complain_us = (cfg.complain_after + cfg.ack_every as u64 * 10_000_000) as f64 / 1e6;
        assert!(start_us <= complain_us, "{what}");
        // The flow recovers once the remap is done: not before, and not later than the AC's
        // CPU takes to send each of the map's HIs its route and read a reply from each, to
        // read the source's request and answer it, and a packet period to send on it.
        let after_us = (2.0 * m.map.hi.len() as f64 + 2.0) * cost_us + 10.0;
        assert!(o.recovery_us >= done_us, "{what}");
        assert!(o.recovery_us <= done_us + after_us, "{what}; after {after_us} us");
    }
}

#[test]
fn the_control_plane_is_deterministic_with_and_without_trains() {
    let lf = net::build(&net::lan4());
    let run = |trains: bool, reverse: bool| {
        let mut spec = net::spec(&lf, "d");
        spec.params.trains = trains;
        let mut sim = net::sim(&spec, &lf, &[]);
        sim.reverse_order = reverse;
        let mut ag = Atomic::new(&lf, Config::mapping(Mode::Flood, vec![lf.his[0]]));
        sim.run_with(&mut ag, &mut |_| {}).unwrap();
        let m = ag.maps().remove(0);
        (m.done, m.ac_msgs, m.node_msgs, sim.now())
    };
    let a = run(true, false);
    assert_eq!(a, run(false, false));
    assert_eq!(a, run(true, true));
}

#[test]
fn round_robin_along_a_chain_is_geometric_and_oldest_first_can_be_fair() {
    use reef::fabric::Arbitration;
    use reef::fabric::mosaic::LanParams;
    let rr = ex::chain_shares(Arbitration::RoundRobin, true);
    assert_eq!(rr.len(), ex::CHAIN as usize);
    assert!((rr.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // Each source up the chain gets half of what the one below it gets.
    assert!((rr[0] - 0.5).abs() < 0.02, "{rr:?}");
    for k in 0..4 {
        assert!((rr[k + 1] / rr[k] - 0.5).abs() < 0.05, "{rr:?}");
    }
    // Oldest first, with the upstream head there in time (0 ns header routing): ~1/8 each.
    let p = LanParams {
        arbitration: Arbitration::OldestFirst,
        router_delay: 0,
        ..LanParams::default()
    };
    let of = ex::chain_shares_with(&p, true);
    for s in &of {
        assert!((s - 1.0 / ex::CHAIN as f64).abs() < 0.02, "{of:?}");
    }
}

#[test]
fn the_bisection_fraction_moves_with_header_routing_and_buffers() {
    let f = |rd, buf, len| ex::bisection_fraction(rd, buf, len, true);
    let base = f(P::ROUTER_DELAY, P::BUFFER, 8);
    assert!(base > 0.2 && base < 0.5, "{base}");
    // Routing time is paid by every channel a worm is strung over: less of it, more through.
    assert!(f(0, P::BUFFER, 8) > base * 1.1);
    assert!(f(2 * P::ROUTER_DELAY, P::BUFFER, 8) < base * 0.9);
    // A worm held in fewer channels.
    assert!(f(P::ROUTER_DELAY, 8, 8) > base * 1.1);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 32, ..Default::default() })]

    /// Random LANs of 3×3 boards: the set never closes a dependency cycle, and on symmetric,
    /// consistent LANs every pair has its route in it. (Irregular LANs with one-way cables
    /// are not asserted complete: some have no complete deadlock-free set, see
    /// `RouteSet`.)
    #[test]
    fn random_lans_route_sets_are_cycle_free_and_consistent_ones_complete(
        seed in 0u64..100_000,
        boards in 2u32..6,
        hosts in 2u32..9,
        consistent in proptest::bool::ANY,
    ) {
        let lan = reef::fabric::mosaic::random_lan(seed, boards, 3, hosts, consistent, 2000);
        let lf = net::build(&lan);
        let g = MGraph::from_lan(&lf, &|_| false);
        let set = RouteSet::all_pairs(&g);
        let routes: Vec<_> = set.routes().cloned().collect();
        proptest::prop_assert_eq!(dependency_cycle(&g, &routes), None);
        let mut r = Router::new(&g);
        let n = g.hi.len() as u32;
        let connected = (0..n)
            .flat_map(|a| (0..n).map(move |b| (a, b)))
            .filter(|(a, b)| a != b && r.route(Stop::Hi(*a), Stop::Hi(*b)).is_some())
            .count();
        proptest::prop_assert_eq!(routes.len() + set.missing.len(), connected);
        if consistent {
            proptest::prop_assert_eq!(set.missing.len(), 0, "{}", lan.name);
        }
    }
}

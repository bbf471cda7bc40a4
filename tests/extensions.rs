//! Engine mechanisms the modelled systems build on: agents that drive hosts (messages with
//! their own headers, deliveries, timers), routing on header bytes with links that delete
//! the first byte (IEEE 1355 hierarchical routing), and FIFO stages after switch outputs.

mod common;
use common::*;
use reef::engine::agent::{Agent, Ctl, Delivery, Message};
use reef::engine::{HostParams, Sim, SimParams, Spec};
use reef::fabric::SwitchParams;
use reef::fabric::{FabricBuilder, NodeId, Shape};
use reef::fabric::{FlowControl, LinkParams};
use reef::routing::table::{HeaderTable, TableBuilder};
use reef::routing::{Routing, Want, cdg};
use reef::time::{Ratio, Time};
use reef::workload::Workload;

/// Bounces one packet between two hosts `rounds` times, recording each delivery.
struct PingPong {
    a: u32,
    b: u32,
    flits: u32,
    rounds: u64,
    seen: Vec<Delivery>,
    timer_at: Option<Time>,
}

impl Agent for PingPong {
    fn start(&mut self, ctl: &mut Ctl) {
        ctl.send(Message {
            src: self.a,
            dst: self.b,
            flits: self.flits,
            header: vec![],
            tag: 0,
        })
        .unwrap();
        ctl.timer(self.a, 5_000_000, 42);
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        self.seen.push(*d);
        if d.tag + 1 >= self.rounds {
            ctl.stop();
            return;
        }
        ctl.send(Message {
            src: d.host,
            dst: d.src,
            flits: self.flits,
            header: vec![],
            tag: d.tag + 1,
        })
        .unwrap();
    }

    fn timer(&mut self, ctl: &mut Ctl, host: u32, token: u64) {
        assert_eq!((host, token), (self.a, 42));
        self.timer_at = Some(ctl.now());
    }
}

fn mesh_spec(extra: &str) -> Spec {
    spec(&format!(
        r#"
[sim]
clock = "1 GHz"
warmup = "0 cycles"
measure = "1000000 cycles"
[topology]
kind = "mesh"
k = [4, 4]
[channel]
latency = "2 cycles"
[switch]
router_delay = "3 cycles"
{extra}
[traffic]
pattern = "none"
"#
    ))
}

fn ping_pong(s: &Spec, rounds: u64) -> PingPong {
    let mut pp = PingPong {
        a: 0,
        b: 15,
        flits: 5,
        rounds,
        seen: vec![],
        timer_at: None,
    };
    let mut sim = Sim::new(s).unwrap();
    sim.run_with(&mut pp, &mut |_| {}).unwrap();
    pp
}

#[test]
fn ping_pong_round_trips_are_twice_the_zero_load_latency() {
    let s = mesh_spec("");
    let pp = ping_pong(&s, 10);
    assert_eq!(pp.seen.len(), 10);
    // 8 channels of (1 + 2) cycles, 7 switches of 3, 4 more flits: 49 ns each way.
    let one_way = 49_000;
    for (k, d) in pp.seen.iter().enumerate() {
        assert_eq!(d.delivered, (k as u64 + 1) * one_way, "delivery {k}");
        assert_eq!(d.delivered - d.head_injected, one_way);
        assert_eq!(d.hops, 7);
        assert_eq!(d.flits, 5);
        assert_eq!(d.host, if k % 2 == 0 { 15 } else { 0 });
    }
    assert_eq!(pp.timer_at, None, "the run stopped before the timer");
    let pp = ping_pong(&s, 200);
    assert_eq!(pp.timer_at, Some(5_000_000));
    assert_eq!(pp.seen.len(), 200);
    // Same seed, same story.
    assert_eq!(ping_pong(&s, 200).seen, pp.seen);
}

#[test]
fn output_buffers_add_a_crossbar_hop_per_switch() {
    let s = mesh_spec("output_buffer = 4\ncrossbar_time = \"1 cycle\"");
    assert_eq!(
        s.fabric.switches,
        16 + 48 + 16,
        "a stage per switch output (48 links + 16 hosts)"
    );
    let rep = cdg::check(&s.fabric, &s.routing);
    assert!(
        rep.deadlock_free() && rep.failure_count == 0,
        "{:?}",
        rep.failures
    );
    for trains in [true, false] {
        let mut s = s.clone();
        s.params.trains = trains;
        let pp = ping_pong(&s, 4);
        // As without buffers, plus one 1-cycle crossbar transfer at each of 7 switches.
        assert_eq!(pp.seen[0].delivered, 56_000, "trains = {trains}");
    }
}

#[test]
fn source_routes_pass_through_output_buffers() {
    // Routes carried in the packet name switch ports only; the stages pass packets on
    // without consuming a port. (Walking a route into a stage used to index past the
    // routing table.)
    let s = mesh_spec(
        "output_buffer = 4\ncrossbar_time = \"1 cycle\"\n[routing]\nalgorithm = \"source\"\npaths = \"minimal\"",
    );
    let rep = cdg::check(&s.fabric, &s.routing);
    assert!(
        rep.deadlock_free() && rep.failure_count == 0,
        "{:?}",
        rep.failures
    );
    let pp = ping_pong(&s, 4);
    // A minimal route is as long as dimension order's: the same 56 ns as above.
    assert_eq!(pp.seen[0].delivered, 56_000);
    assert_eq!(pp.seen[0].hops, 14, "7 switches and their 7 output stages");
}

/// Two switches in a chain; hosts 0 on s0, 1 and 2 on s1. Switches route on the first
/// header byte; the links between them delete it.
fn chain_with_header_deletion() -> Spec {
    let p = LinkParams {
        flit_time: 1_000,
        tail_time: 1_000,
        latency: 0,
        vcs: 1,
        buffer: 8,
        flow: FlowControl::Credit { delay: 1_000 },
        delete_header: false,
        clock: None,
    };
    let del = LinkParams {
        delete_header: true,
        ..p
    };
    let sw = SwitchParams {
        router_delay: 2_000,
        ..SwitchParams::default()
    };
    let mut b = FabricBuilder::new(&[2, 3], 3);
    b.channel(NodeId(0), 0, NodeId(1), 0, del).unwrap();
    b.channel(NodeId(1), 0, NodeId(0), 0, del).unwrap();
    b.link(b.host(0), 0, NodeId(0), 1, p).unwrap();
    b.link(b.host(1), 0, NodeId(1), 1, p).unwrap();
    b.link(b.host(2), 0, NodeId(1), 2, p).unwrap();
    let fab = b.build(sw, Shape::Irregular).unwrap();
    let mut t = TableBuilder::new(2, 256, 1);
    let port = |q: u16| Want::port(q, 1);
    t.set(0, 0, 7, port(0));
    t.set(0, 0, 0, port(1));
    t.set(1, 0, 9, port(0));
    t.set(1, 0, 1, port(1));
    t.set(1, 0, 2, port(2));
    // Remote hosts get an extra first byte for s0 / s1, deleted by the link between them.
    let headers = vec![
        vec![0],
        vec![7, 1],
        vec![7, 2],
        vec![9, 0],
        vec![1],
        vec![2],
        vec![9, 0],
        vec![1],
        vec![2],
    ];
    let routing = Routing::Header(HeaderTable::with_pairs(
        "interval",
        t.build("interval"),
        3,
        headers,
    ));
    Spec {
        name: "chain".into(),
        fabric: fab,
        routing,
        workload: Workload::silent(3),
        params: SimParams {
            seed: 1,
            warmup: 0,
            measure: 1_000_000,
            drain_limit: 1_000_000,
            drain_all: false,
            batches: 1,
            cycle: Ratio::int(1000),
            check: true,
            watchdog: 1_000_000,
            flit_bytes: 1,
            trains: true,
            express: true,
            max_header: 2,
            sampling: None,
            runs: 1,
            source_queueing: true,
        },
        host: HostParams::default(),
        messages: None,
    }
}

struct Sends(Vec<Message>, Vec<Delivery>);

impl Agent for Sends {
    fn start(&mut self, ctl: &mut Ctl) {
        for m in self.0.drain(..) {
            ctl.send(m).unwrap();
        }
    }
    fn delivered(&mut self, _: &mut Ctl, d: &Delivery) {
        self.1.push(*d);
    }
}

#[test]
fn links_delete_the_header_byte_the_next_switch_routes_on() {
    let s = chain_with_header_deletion();
    let rep = cdg::check(&s.fabric, &s.routing);
    assert!(
        rep.deadlock_free() && rep.failure_count == 0,
        "{:?}",
        rep.failures
    );
    for trains in [true, false] {
        let mut s = s.clone();
        s.params.trains = trains;
        let msg = |src, dst, tag| Message {
            src,
            dst,
            flits: 6,
            header: vec![],
            tag,
        };
        let mut a = Sends(vec![msg(0, 2, 1), msg(2, 0, 2)], vec![]);
        let mut sim = Sim::new(&s).unwrap();
        sim.run_with(&mut a, &mut |_| {}).unwrap();
        a.1.sort_by_key(|d| d.tag);
        assert_eq!(a.1.len(), 2);
        for d in &a.1 {
            // One header byte was deleted on the way: 5 of 6 flits arrive.
            assert_eq!(d.flits, 5, "trains = {trains}");
            assert_eq!(d.hops, 2);
            // Head: host link (1) + s0 routing (2) + link (1) + s1 routing (2) + host link
            // (1); the 4 flits behind it one cycle each.
            assert_eq!(d.delivered - d.head_injected, 11_000, "trains = {trains}");
        }
        assert_eq!((a.1[0].host, a.1[1].host), (2, 0));
    }
}

#[test]
fn a_header_for_nowhere_is_reported_by_the_check() {
    let mut s = chain_with_header_deletion();
    if let Routing::Header(h) = &s.routing {
        let mut t = TableBuilder::new(2, 256, 1);
        t.set(0, 0, 7, Want::port(0, 1));
        let _ = h;
        s.routing = Routing::Header(HeaderTable::new(
            "partial",
            t.build("partial"),
            vec![vec![9, 0], vec![7, 1], vec![7, 2]],
        ));
        assert!(s.routing.max_header() == 2);
    }
    let rep = cdg::check(&s.fabric, &s.routing);
    assert!(rep.failure_count > 0);
    assert!(
        rep.failures.iter().any(|f| f.2.contains("header value")),
        "{:?}",
        rep.failures
    );
}

#[test]
fn source_routes_from_a_host_to_itself_are_carried() {
    // The route storage was sized by routes between distinct hosts only: with one host
    // (traffic to itself) packets carried no route and stopped at the first switch.
    let s = spec(
        "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"1000 cycles\"\n[topology]\nkind = \"file\"\nfile = \"one-host.txt\"\n[routing]\nalgorithm = \"source\"\n[traffic]\ninclude_self = true\nload = 0.1\n",
    );
    let r = run(&s);
    assert!(r.flits_delivered > 0);
    assert_eq!(r.flits_delivered, r.flits_injected, "{}", json(&r));
}

#[test]
fn channel_use_never_exceeds_the_window() {
    // Flits and flow-control tokens count their time inside the measurement window; counted
    // in full when they started inside it, long flits and tokens put channels above 100 %
    // (found by fuzzing).
    for (extra, load) in [
        (
            "flow_control = \"tokens\"\nrate = \"1 GBaud\"\ntoken_grant = 4\nbuffer = 64",
            0.3,
        ),
        ("flit_time = \"10 cycles\"", 0.09),
    ] {
        let s = spec(&format!(
            "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"300 cycles\"\n[topology]\nkind = \"mesh\"\nk = [4]\n[channel]\n{extra}\n[traffic]\npattern = \"neighbour\"\nload = {load}\npacket_size = 1\n"
        ));
        let r = run(&s);
        let max = r
            .channel_utilization
            .iter()
            .map(|c| c.utilization)
            .fold(0.0, f64::max);
        assert!(max > 0.5 && max <= 1.0, "{extra}: busiest {max}");
    }
}

//! Zero-load latency against arithmetic: a lone packet's network latency is the sum over its
//! channels of (unit time of the head plus propagation), plus switches times router delay,
//! plus (L − 1) flit times with the tail's own unit time in place of one of them;
//! store-and-forward adds (L − 1) flit times per switch. Packets are sent far apart, so every
//! one of them must see exactly this latency, with no source queueing. A property test does
//! the same on random meshes and tori (any pair of hosts, flit, tail, wire, router and credit
//! times, packet lengths, switching modes, VCs) against the packet's flits followed hop by hop
//! in arithmetic, which also covers tails slower than a flit, where the formula does not hold;
//! and on channels clocked at 300 MHz, whose flits start on the clock's edges, edge by edge.

mod common;
use common::*;
use proptest::prelude::*;
use reef::engine::result::RunResult;

/// Network latency of a lone packet [ps]: `channels` = propagation delay of each channel on
/// the path, `switches` on the path, flit and tail unit times, router delay, `len` flits.
fn formula(channels: &[u64], switches: u64, flit: u64, tail: u64, router: u64, len: u64) -> u64 {
    let head_unit = if len == 1 { tail } else { flit };
    let per_channel: u64 = channels.iter().map(|d| head_unit + d).sum();
    let body = if len == 1 { 0 } else { (len - 2) * flit + tail };
    per_channel + switches * router + body
}

/// Runs `text` with trains and flit by flit, checks every packet's latency, and gives back
/// both results.
fn check_lone_packets(text: &str, expected_ps: u64) -> Vec<RunResult> {
    let mut results = Vec::new();
    for trains in ["true", "false"] {
        // (With the engines' invariant checks on.)
        let s = spec_with(text, &[&format!("sim.trains={trains}"), "sim.check=true"]);
        let r = run(&s);
        let n = &r.network_latency_ns;
        assert!(n.count >= 3, "expected several packets, got {}", n.count);
        let want = expected_ps as f64 / 1000.0;
        assert_eq!(n.min, want, "min network latency (trains={trains})");
        assert_eq!(n.max, want, "max network latency (trains={trains})");
        assert_eq!(n.mean, want, "mean network latency (trains={trains})");
        assert_eq!(r.packet_latency_ns.mean, want, "no source queueing at zero load");
        assert!(r.deadlock.is_none() && !r.saturated);
        results.push(r);
    }
    results
}

const SIM: &str = r#"
[sim]
clock = "1 GHz"
warmup = "0 cycles"
measure = "5000 cycles"
"#;

#[test]
fn mesh_4x4_corner_to_corner() {
    let text = format!(
        r#"{SIM}
[topology]
kind = "mesh"
k = [4, 4]
[channel]
flit_time = "1 cycle"
latency = "2 cycles"
[switch]
router_delay = "3 cycles"
[traffic]
pattern = "pairs"
pairs = [[0, 15]]
injection = "periodic"
load = 0.005
packet_size = 5
"#
    );
    // 3 hops in x, 3 in y: 7 switches, 8 channels.
    check_lone_packets(&text, formula(&[2000; 8], 7, 1000, 1000, 3000, 5));
}

#[test]
fn torus_with_datelines_takes_the_wrap_link() {
    let text = format!(
        r#"{SIM}
[topology]
kind = "torus"
k = [4, 4]
[channel]
flit_time = "1 cycle"
latency = "1 cycle"
vcs = 2
[switch]
router_delay = "2 cycles"
[routing]
dateline = true
[traffic]
pattern = "pairs"
pairs = [[0, 3]]
injection = "periodic"
load = 0.004
packet_size = 4
"#
    );
    // Host 0 → host 3 goes one hop the negative way round: 2 switches, 3 channels.
    check_lone_packets(&text, formula(&[1000; 3], 2, 1000, 1000, 2000, 4));
    // Half way round (a tie) goes the positive way: (2, 2) is 4 hops, 5 switches.
    let text = text.replace("pairs = [[0, 3]]", "pairs = [[0, 10]]");
    check_lone_packets(&text, formula(&[1000; 6], 5, 1000, 1000, 2000, 4));
}

#[test]
fn clos_with_ds_link_timing() {
    // DS-link-like channels: 100 ns data characters, a 40 ns end-of-packet character, 10 ns
    // cables, a 1 µs header latency per switch, 66-character packets (64 B + header + EOP).
    let text = format!(
        r#"{SIM}
[topology]
kind = "clos"
leaves = 4
hosts_per_leaf = 2
spines = 2
[channel]
rate = "100 MBaud"
flit_bits = 10
tail_bits = 4
latency = "10 ns"
buffer = 64
credit_delay = "40 ns"
[switch]
router_delay = "1 us"
[traffic]
pattern = "pairs"
pairs = [[0, 7]]
injection = "periodic"
load = 0.0002
packet_size = 66
"#
    )
    .replace("measure = \"5000 cycles\"", "measure = \"2000000 cycles\"");
    // Leaf → spine → leaf: 3 switches, 4 channels.
    check_lone_packets(&text, formula(&[10_000; 4], 3, 100_000, 40_000, 1_000_000, 66));
}

#[test]
fn source_routed_irregular_path() {
    let text = format!(
        r#"{SIM}
[topology]
kind = "file"
file = "chain3.txt"
[channel]
flit_time = "2 ns"
latency = "1 ns"
[switch]
router_delay = "7 ns"
[routing]
algorithm = "source"
[[routing.route]]
src = 0
dst = 2
ports = [0, 1, 1]
[traffic]
pattern = "pairs"
pairs = [[0, 2]]
injection = "periodic"
load = 0.004
packet_size = 3
"#
    );
    // h0→s0 (1 ns), s0→s1 (5 ns), s1→s2 (12 ns), s2→h2 (1 ns); 3 switches.
    check_lone_packets(&text, formula(&[1000, 5000, 12000, 1000], 3, 2000, 2000, 7000, 3));
}

#[test]
fn store_and_forward_waits_for_the_whole_packet_at_each_switch() {
    let base = format!(
        r#"{SIM}
[topology]
kind = "mesh"
k = [3, 3]
[channel]
buffer = 8
[switch]
router_delay = "2 cycles"
[traffic]
pattern = "pairs"
pairs = [[0, 8]]
injection = "periodic"
load = 0.01
packet_size = 6
"#
    );
    let wh = formula(&[0; 6], 5, 1000, 1000, 2000, 6);
    check_lone_packets(&base, wh);
    // Cut-through at zero load is wormhole.
    check_lone_packets(&base.replace("[switch]", "[switch]\nmode = \"cut-through\""), wh);
    check_lone_packets(
        &base.replace("[switch]", "[switch]\nmode = \"store-and-forward\""),
        wh + 5 * 5 * 1000,
    );
}

#[test]
fn single_flit_packets_use_the_tail_time() {
    let text = format!(
        r#"{SIM}
[topology]
kind = "ring"
k = 5
[channel]
flit_time = "3 ns"
tail_time = "1 ns"
[switch]
router_delay = "0 ns"
[traffic]
pattern = "pairs"
pairs = [[1, 3]]
injection = "periodic"
load = 0.002
packet_size = 1
"#
    );
    // Two hops round the ring: 3 switches, 4 channels, every flit a tail.
    check_lone_packets(&text, formula(&[0; 4], 3, 3000, 1000, 0, 1));
}

#[test]
fn a_path_of_more_than_256_switches_counts_every_hop() {
    // A 700-switch ring with dimension-order routing; host 0 → host 300 goes 300 links the
    // positive way: 301 switches, 302 channels. Hop counts pass 256 (they are kept in the
    // head's buffer slot and carried over into the packet record).
    let text = r#"
[sim]
clock = "1 GHz"
warmup = "0 cycles"
measure = "20000 cycles"
[topology]
kind = "ring"
k = 700
[channel]
flit_time = "1 cycle"
latency = "0 cycles"
[switch]
router_delay = "1 cycle"
[traffic]
pattern = "pairs"
pairs = [[0, 300]]
injection = "periodic"
load = 0.0005
packet_size = 3
"#;
    let results = check_lone_packets(text, formula(&[0; 302], 301, 1000, 1000, 1000, 3));
    for (r, trains) in results.iter().zip(["true", "false"]) {
        assert_eq!(r.mean_hops, 301.0, "trains = {trains}");
    }
}

/// A lone packet on a random mesh or torus with dimension-order routing: random flit,
/// tail, wire and router times, packet length, switching mode and VCs.
#[derive(Debug, Clone)]
struct Lone {
    torus: bool,
    k: (u32, u32),
    src: u32,
    dst: u32,
    /// Flit time, tail time, wire latency, router delay, credit delay [cycles of 1 ns].
    flit: u64,
    tail: u64,
    latency: u64,
    router: u64,
    credit_delay: u64,
    len: u64,
    mode: &'static str,
    vcs: u32,
}

impl Lone {
    /// Switches on the path: one more than the dimension-order distance (on a torus each
    /// dimension goes the shorter way round).
    fn switches(&self) -> u64 {
        let (k0, k1) = self.k;
        let (a, b) = ((self.src % k0, self.src / k0), (self.dst % k0, self.dst / k0));
        let dist = |x: u32, y: u32, k: u32| {
            let d = x.abs_diff(y);
            if self.torus { d.min(k - d) } else { d }
        };
        (dist(a.0, b.0, k0) + dist(a.1, b.1, k1)) as u64 + 1
    }

    fn toml(&self) -> String {
        let (k0, k1) = self.k;
        let (kind, vcs, routing) = if self.torus {
            ("torus", 2, "dateline = true")
        } else {
            ("mesh", self.vcs, "")
        };
        // Room for the whole packet: a lone packet never waits for a credit.
        let buffer = self.len + 1;
        // Fifty packets a thousand cycles apart: one still out when the window closes costs
        // under 5 % of the accepted throughput, so the run is not called saturated.
        format!(
            r#"
[sim]
clock = "1 GHz"
warmup = "0 cycles"
measure = "50000 cycles"
[topology]
kind = "{kind}"
k = [{k0}, {k1}]
[channel]
flit_time = "{} ns"
tail_time = "{} ns"
latency = "{} ns"
credit_delay = "{} ns"
vcs = {vcs}
buffer = {buffer}
[switch]
mode = "{}"
router_delay = "{} ns"
[routing]
{routing}
[traffic]
pattern = "pairs"
pairs = [[{}, {}]]
injection = "periodic"
load = {}
packet_size = {}
"#,
            self.flit,
            self.tail,
            self.latency,
            self.credit_delay,
            self.mode,
            self.router,
            self.src,
            self.dst,
            self.len as f64 / 1000.0,
            self.len,
        )
    }

    /// The expected network latency [ps], flit by flit along the path: a flit starts on a
    /// channel when it is wholly in and the flit before it has gone; the head first waits
    /// the router delay at each switch (with store-and-forward, from when the tail is in).
    /// Where the tail is no slower than a flit this is the formula above, which it checks.
    fn expected(&self) -> u64 {
        let ps = 1000;
        let len = self.len as usize;
        let unit = |j: usize| if j + 1 == len { self.tail } else { self.flit } * ps;
        // When each flit is wholly in at the node before the channel (all at the host at 0).
        let mut ready = vec![0u64; len];
        let switches = self.switches();
        for c in 0..=switches {
            if c > 0 {
                let head_from = if self.mode == "store-and-forward" {
                    ready[len - 1]
                } else {
                    ready[0]
                };
                ready[0] = head_from + self.router * ps;
            }
            let mut free = 0;
            for (j, r) in ready.iter_mut().enumerate() {
                let start = (*r).max(free);
                free = start + unit(j);
                *r = free + self.latency * ps;
            }
        }
        let t = ready[len - 1];
        if self.tail <= self.flit && self.mode != "store-and-forward" {
            let channels = vec![self.latency * ps; switches as usize + 1];
            let f = formula(
                &channels,
                switches,
                self.flit * ps,
                self.tail * ps,
                self.router * ps,
                self.len,
            );
            assert_eq!(t, f, "the recurrence and the formula disagree for {self:?}");
        }
        t
    }
}

fn lone() -> impl Strategy<Value = Lone> {
    (
        any::<bool>(),
        (2u32..7, 2u32..7),
        (1u64..4, 1u64..5, 0u64..6, 0u64..5, 1u64..4, 1u64..9),
        prop::sample::select(vec!["wormhole", "cut-through", "store-and-forward"]),
        1u32..4,
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
    )
        .prop_map(
            |(torus, (k0, k1), (flit, tail, latency, router, credit_delay, len), mode, vcs, a, b)| {
                // Source and destination are distinct hosts.
                let k = (k0, k1);
                let n = k.0 * k.1;
                let src = a.index(n as usize) as u32;
                let dst = (src + 1 + b.index(n as usize - 1) as u32) % n;
                Lone {
                    torus,
                    k,
                    src,
                    dst,
                    flit,
                    tail,
                    latency,
                    router,
                    credit_delay,
                    len,
                    mode,
                    vcs,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every lone packet, with trains and flit by flit, takes exactly the time its flits
    /// take followed hop by hop in arithmetic.
    #[test]
    fn a_lone_packet_takes_exactly_its_arithmetic_time(l in lone()) {
        check_lone_packets(&l.toml(), l.expected());
    }
}

/// Channels clocked at 300 MHz (a byte every 3333⅓ ps): a flit starts on an edge of the
/// clock, the n-th at ⌊n · 10000 / 3⌋ ps, and lasts until the next; delays written in
/// cycles are ⌊n·P⌋ ps. A lone packet, handed to its host at any instant, takes exactly the
/// time its flits take followed edge by edge in arithmetic, with trains and flit by flit.
#[derive(Debug, Clone)]
struct Clocked {
    /// Switches in a row (a one-dimensional mesh), the packet crossing all of them.
    switches: u32,
    len: u32,
    /// Router delay and wire latency [cycles].
    router: u64,
    latency: u64,
    /// When the agent hands the packet over [ps].
    at: u64,
}

/// Time of the n-th edge of the 300 MHz clock [ps].
fn edge(n: u64) -> u64 {
    n * 10_000 / 3
}

/// The first edge at or after `t` [ps].
fn next_edge(t: u64) -> u64 {
    edge((3 * t).div_ceil(10_000))
}

impl Clocked {
    fn toml(&self) -> String {
        format!(
            r#"
[sim]
clock = "300 MHz"
warmup = "0 cycles"
measure = "100000 cycles"
[topology]
kind = "mesh"
k = [{}]
[channel]
flit_time = "1 cycle"
latency = "{} cycles"
buffer = {}
[switch]
router_delay = "{} cycles"
[traffic]
pattern = "none"
"#,
            self.switches,
            self.latency,
            self.len + 1,
            self.router
        )
    }

    /// When the tail is delivered [ps], flit by flit and edge by edge.
    fn expected(&self) -> u64 {
        let (router, latency) = (edge(self.router), edge(self.latency));
        let len = self.len as usize;
        let mut ready = vec![self.at; len];
        for c in 0..=self.switches {
            if c > 0 {
                ready[0] += router;
            }
            let mut free = 0;
            for r in ready.iter_mut() {
                let start = next_edge((*r).max(free));
                free = next_edge(start + 1);
                *r = free + latency;
            }
        }
        ready[len - 1]
    }
}

/// Hands one packet from host 0 to the last host at a given time; notes its delivery.
struct OnePacket {
    at: u64,
    to: u32,
    flits: u32,
    delivered: Option<u64>,
}

impl reef::engine::agent::Agent for OnePacket {
    fn start(&mut self, ctl: &mut reef::engine::agent::Ctl) {
        ctl.timer(0, self.at, 0);
    }
    fn timer(&mut self, ctl: &mut reef::engine::agent::Ctl, _: u32, _: u64) {
        ctl.send(reef::engine::agent::Message {
            src: 0,
            dst: self.to,
            flits: self.flits,
            header: vec![],
            tag: 1,
        })
        .unwrap();
    }
    fn delivered(&mut self, ctl: &mut reef::engine::agent::Ctl, d: &reef::engine::agent::Delivery) {
        self.delivered = Some(d.delivered);
        ctl.stop();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn a_lone_packet_on_clocked_channels_lands_on_the_clock_edges(
        switches in 2u32..6,
        len in 1u32..40,
        router in 0u64..30,
        latency in 0u64..4,
        at in 0u64..40_000,
    ) {
        let c = Clocked { switches, len, router, latency, at };
        for trains in ["true", "false"] {
            let s = spec_with(&c.toml(), &[&format!("sim.trains={trains}"), "sim.check=true"]);
            let mut sim = reef::engine::Sim::new(&s).unwrap();
            let mut ag = OnePacket { at, to: switches - 1, flits: len, delivered: None };
            sim.run_with(&mut ag, &mut |_| {}).unwrap();
            prop_assert_eq!(ag.delivered, Some(c.expected()), "{:?} trains={}", c, trains);
        }
    }
}

/// A 300 MHz byte link moves three bytes every 10 ns exactly: 3,000 bytes end 10 µs after
/// the first starts, not 9.999 µs (3333 ps a byte) or 10.002 µs (3334).
#[test]
fn a_clocked_link_keeps_its_rate_exactly() {
    let c = Clocked {
        switches: 2,
        len: 3000,
        router: 0,
        latency: 0,
        at: 0,
    };
    // Host → switch → switch → host: the tail is in 3,000 edges after the head starts on
    // the last channel, which starts two edges after the head started on the first.
    assert_eq!(c.expected(), 10_000_000 + edge(2));
    let s = spec(&c.toml());
    let mut sim = reef::engine::Sim::new(&s).unwrap();
    let mut ag = OnePacket {
        at: 0,
        to: 1,
        flits: 3000,
        delivered: None,
    };
    sim.run_with(&mut ag, &mut |_| {}).unwrap();
    assert_eq!(ag.delivered, Some(10_006_666));
}

/// A batch against arithmetic: one host sends to the far corner of a 4×4 mesh over host
/// channels four times slower than the mesh's, so that nothing but its own channel paces its
/// packets (each finds the path empty). Packet j (from 0) of s flits of F cycles is created at
/// cycle j, its head leaves at j·s·F and its tail is in L0 later, L0 a lone packet's latency:
/// the batch of n lasts (n − 1)·s·F + L0, and the mean packet latency is
/// L0 + (n − 1)(s·F − 1)/2; dated at the front of the source queue
/// (`sim.source_queueing = false`), every packet's is L0; and with one packet in flight
/// at a time (`traffic.max_outstanding = 1`), every packet's is L0 and the batch lasts
/// (n − 1)(L0 + 1) + L0.
#[test]
fn a_batch_is_paced_by_its_source_as_arithmetic_says() {
    let config = |n: u32, sim: &str| {
        format!(
            r#"
[sim]
{sim}
[topology]
kind = "mesh"
k = [4, 4]
[channel]
flit_time = "1 cycle"
latency = "2 cycles"
buffer = 8
[host_channel]
flit_time = "4 cycles"
latency = "1 cycle"
buffer = 16
[switch]
router_delay = "3 cycles"
[traffic]
pattern = "pairs"
pairs = [[0, 15]]
injection = "batch"
batch = {n}
packet_size = 5
"#
        )
    };
    let lone = run(&spec(&config(1, "")));
    let l0 = lone.batch.unwrap().duration_cycles.unwrap();
    assert_eq!(lone.packet_latency_cycles.mean, l0);
    assert!(l0 > 20.0, "{l0}");
    let (n, s, f) = (12.0, 5.0, 4.0);
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    for sim in ["", "express = false", "trains = false", "check = true"] {
        let r = run(&spec(&config(12, sim)));
        let b = r.batch.unwrap();
        assert_eq!(b.duration_cycles, Some((n - 1.0) * s * f + l0), "{sim}");
        assert_eq!(
            (r.network_latency_cycles.min, r.network_latency_cycles.max),
            (l0, l0),
            "{sim}"
        );
        let mean = l0 + (n - 1.0) * (s * f - 1.0) / 2.0;
        assert!(
            near(r.packet_latency_cycles.mean, mean),
            "{sim}: {} against {mean}",
            r.packet_latency_cycles.mean
        );
        assert_eq!(r.delivered_measured_packets, 12);
        // The rates are over the batch: 60 flits from one host of 16.
        assert!(near(
            r.accepted_flits_per_node_cycle,
            n * s / 16.0 / ((n - 1.0) * s * f + l0)
        ));
        let r = run(&spec(&config(12, &format!("{sim}\nsource_queueing = false"))));
        assert!(
            near(r.packet_latency_cycles.mean, l0),
            "{sim}: {}",
            r.packet_latency_cycles.mean
        );
        assert_eq!(r.packet_latency_cycles.max, l0, "{sim}");
        // With one packet in flight at a time, packet j + 1 is created the cycle after
        // packet j is delivered: each takes L0, the batch (n − 1)(L0 + 1) + L0.
        let r = run(&spec(
            &config(12, sim).replace("packet_size = 5", "packet_size = 5\nmax_outstanding = 1"),
        ));
        assert_eq!(
            r.batch.unwrap().duration_cycles,
            Some((n - 1.0) * (l0 + 1.0) + l0),
            "{sim}"
        );
        assert_eq!(
            (r.packet_latency_cycles.min, r.packet_latency_cycles.max),
            (l0, l0),
            "{sim}"
        );
    }
}

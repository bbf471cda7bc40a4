//! A switch's internal speed-up (`switch.internal_speedup = 2`, `src/switch/speedup.rs`):
//! two crossbar allocations a cycle into an output queue per output; and its output
//! speed-up (`switch.output_speedup`): several flits a cycle into that queue. Checked
//! against arithmetic at zero load (BookSim2's pipeline through such a router: a cycle a
//! router and two on each channel, as BookSim2 gives), and property-tested over random
//! small networks (with these speed-ups, and with BookSim2's separable allocators alone)
//! with every invariant checked (flits and credits conserved, buffers within bounds,
//! in-order delivery, every packet delivered after a full drain), the same under the
//! reversed order of equal-time events and flit by flit (`sim.trains = false`), and no
//! channel carrying more than a flit a cycle.
//! BookSim2's own numbers on saturated lines are in `tests/booksim.rs`
//! (`internal_speedup_is_booksims`).
//! `REEF_SPEEDUP_CASES=N` runs N cases.

mod common;
use common::*;
use proptest::prelude::*;
use std::path::Path;

/// A BookSim2 config: a fly of k = 4, n = 2 (every packet crosses two routers) at a low
/// load, one-flit packets.
fn fly(extra: &str) -> String {
    format!(
        "topology = fly;\nk = 4;\nn = 2;\nrouting_function = dest_tag;\nnum_vcs = 2;\n\
         injection_rate = 0.002;\nsample_period = 20000;\nseed = 3;\n{extra}"
    )
}

fn booksim(name: &str, text: &str) -> reef::engine::result::RunResult {
    let dir = std::env::temp_dir().join(format!("reef-speedup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    run(&reef::config::load(&p, &[]).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn at_zero_load_a_router_takes_a_cycle_with_a_speedup_of_two() {
    // With BookSim2's default pipeline a router takes 3 cycles (routing, VC and switch
    // allocation) and a channel 2 (the crossbar's cycle and the wire's): 5 a router, 2 more
    // at the ends, 12 cycles over 2 routers. Twice a cycle, routing and VC allocation take
    // the first two steps of the cycle the head lands in, switch allocation the first step
    // of the next, and the crossbar the second: it leaves a cycle after it landed, whether
    // it was routed there or a router ahead (routing_delay = 0): 3 a router, 8 in all
    // (BookSim2 at commit 28f43299 on this config: 8.003).
    let r = booksim("once", &fly(""));
    assert_eq!(r.mean_hops, 2.0);
    assert!(
        (r.packet_latency_cycles.mean - 12.0).abs() < 0.02,
        "{:?}",
        r.packet_latency_cycles
    );
    for rd in [0, 1] {
        let r = booksim(
            "twice",
            &fly(&format!("internal_speedup = 2.0;\nrouting_delay = {rd};\n")),
        );
        let l = r.packet_latency_cycles.mean;
        assert!((l - 8.0).abs() < 0.02, "routing_delay = {rd}: {l}");
    }
    // An output speed-up changes nothing at zero load: one flit a cycle still leaves each
    // output, a flit that crosses at once leaves at once.
    for os in [2, 3] {
        let r = booksim("out", &fly(&format!("output_speedup = {os};\n")));
        let l = r.packet_latency_cycles.mean;
        assert!((l - 12.0).abs() < 0.02, "output_speedup = {os}: {l}");
    }
    // A 4-flit packet's body follows its head a cycle apart, each body flit allocated as
    // it lands and out at that edge: 3 more cycles.
    let r = booksim("body", &fly("internal_speedup = 2.0;\npacket_size = 4;\n"));
    let l = r.network_latency_cycles.mean;
    assert!((l - 11.0).abs() < 0.05, "{l}");
}

#[derive(Debug, Clone)]
struct Net {
    topo: &'static str,
    vcs: u32,
    buffer: u32,
    latency: u32,
    credit_delay: u32,
    /// In half cycles (steps); at least one, as `switch.internal_speedup` asks.
    router_delay: u32,
    /// In half cycles; at least two (a flit time), as `switch.internal_speedup` asks.
    vc_reuse: u32,
    allocator: &'static str,
    vc_allocator: &'static str,
    load: f64,
    size: u32,
    seed: u64,
    /// The internal, output and input speed-ups (all 1: BookSim2's separable switch and VC
    /// allocators without a speed-up, on their cycle grid).
    speedups: (u32, u32, u32),
}

impl Net {
    fn toml(&self) -> String {
        let half = |n: u32| format!("{}.{} cycles", n / 2, if n % 2 == 1 { 5 } else { 0 });
        format!(
            r#"
[sim]
warmup = "200 cycles"
measure = "1000 cycles"
check = true
seed = {seed}
drain = "all"
[topology]
{topo}
[channel]
vcs = {vcs}
buffer = {buffer}
latency = "{lat} cycles"
credit_delay = "{cd} cycles"
[switch]
internal_speedup = {internal}
output_speedup = {output}
speedup = {input}
router_delay = "{rd}"
vc_reuse_delay = "{reuse}"
vc_choice = "round-robin"
allocator = "{alloc}"
vc_allocator = "{va}"
[traffic]
load = {load}
packet_size = {size}
"#,
            seed = self.seed,
            topo = self.topo,
            vcs = self.vcs,
            buffer = self.buffer,
            lat = self.latency,
            cd = self.credit_delay,
            rd = half(self.router_delay),
            reuse = half(self.vc_reuse),
            alloc = self.allocator,
            va = self.vc_allocator,
            load = self.load,
            size = self.size,
            internal = self.speedups.0,
            output = self.speedups.1,
            input = self.speedups.2,
        )
    }
}

fn net() -> impl Strategy<Value = Net> {
    (
        prop::sample::select(vec![
            "kind = \"mesh\"\nk = [4]",
            "kind = \"mesh\"\nk = [3, 3]",
            "kind = \"torus\"\nk = [4, 3]",
            "kind = \"clos\"\nleaves = 3\nhosts_per_leaf = 2\nspines = 2",
        ]),
        1u32..4,
        1u32..7,
        0u32..3,
        1u32..4,
        1u32..5,
        2u32..5,
        prop::sample::select(SEPARABLE_SW_ALLOCATORS.to_vec()),
        prop::sample::select(vec!["greedy", "islip", "separable-input-first"]),
        0.05f64..1.0,
        1u32..6,
        (
            0u64..1000,
            prop::sample::select(vec![(2, 1, 1), (1, 2, 1), (1, 3, 1), (1, 2, 2), (1, 1, 1)]),
        ),
    )
        .prop_map(
            |(
                topo,
                vcs,
                buffer,
                latency,
                credit_delay,
                router_delay,
                vc_reuse,
                allocator,
                vc_allocator,
                load,
                size,
                (seed, speedups),
            )| Net {
                topo,
                // A torus's datelines need two VCs.
                vcs: if topo.contains("torus") { vcs.max(2) } else { vcs },
                buffer,
                latency,
                credit_delay,
                // Without an internal speed-up, whole cycles, as BookSim2's pipeline has
                // them. Off that grid the separable allocators depend on the order of an
                // instant's events, with or without an output speed-up: an output that lost
                // an allocation tries again a flit time later, but a flit landing in between
                // (on its own, or within a train) may wake it sooner (docs/config.md).
                router_delay: if speedups.0 == 1 {
                    router_delay.div_ceil(2) * 2
                } else {
                    router_delay
                },
                vc_reuse: if speedups.0 == 1 {
                    vc_reuse.div_ceil(2) * 2
                } else {
                    vc_reuse
                },
                allocator,
                vc_allocator,
                load,
                size,
                seed,
                speedups,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("REEF_SPEEDUP_CASES", 48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_speedup_keeps_the_invariants(n in net()) {
        let c = n.toml();
        let s = spec(&c);
        let r = run(&s);
        prop_assert!(r.packets_delivered > 0, "no traffic in\n{}", c);
        // Drained in full, unless saturated (the drain then has a time limit): every packet
        // injected is delivered (the checks compiled in have held every flit and credit on
        // the way).
        if !r.saturated {
            prop_assert_eq!(r.packets_delivered, r.packets_injected, "{}", c);
            prop_assert_eq!(r.flits_delivered, r.flits_injected, "{}", c);
        }
        // The output queue sends one flit a cycle: no channel is busier than its time.
        prop_assert!(r.network_utilization_max <= 1.0 + 1e-9, "{}: {}", c, r.network_utilization_max);
        let reversed = run_reversed(&s);
        // Trains (through separable switches too, where nothing can come between) are
        // the flit-by-flit path's results.
        let flat = run(&spec_with(&c, &["sim.trains=false"]));
        prop_assert!(
            without_events(flat) == without_events(r.clone()),
            "trains and flit by flit differ for\n{}", c
        );
        prop_assert!(
            without_events(r) == without_events(reversed),
            "forward and reversed event orders differ for\n{}", c
        );
    }
}

#[test]
fn a_speedup_of_two_lifts_a_separable_mesh_s_throughput() {
    // The separable allocator loses matches under load; two allocations a cycle recover
    // most of them (BookSim2's k = 2 dragonfly saturates at 0.570 flits a cycle a node once
    // a cycle and 0.950 twice, tests/data/booksim/saturation.csv). On an 8×8 mesh with 2
    // VCs, offered 0.5 flits a cycle a node, reef's speed-up 2 accepts more than once a cycle.
    let text = std::fs::read_to_string(Path::new("tests/data/booksim/workloads/mesh8x8-uniform")).unwrap();
    let dir = std::env::temp_dir().join(format!("reef-speedup-mesh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("mesh");
    std::fs::write(&p, text).unwrap();
    let acc = |extra: &[&str]| {
        let mut over: Vec<String> = [
            "num_vcs=2",
            "injection_rate_uses_flits=1",
            "injection_rate=0.5",
            "seed=1",
            "sample_period=1000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        over.extend(extra.iter().map(|s| s.to_string()));
        run(&reef::config::load(&p, &over).unwrap()).accepted_flits_per_node_cycle
    };
    let (once, twice) = (acc(&[]), acc(&["internal_speedup=2.0"]));
    assert!(twice > once * 1.05, "once {once:.4}, twice {twice:.4}");
}

/// The 8×8 mesh of the reference workload under BookSim2's overrides `extra`.
fn mesh(extra: &[&str]) -> reef::engine::result::RunResult {
    let p = Path::new("tests/data/booksim/workloads/mesh8x8-uniform");
    let over: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    run(&reef::config::load(p, &over).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn an_output_speedup_matters_only_where_inputs_share_an_output() {
    // With one VC a channel, an output's one VC is held by one packet at a time, so only
    // one input at a time asks for it: taking two flits a cycle changes nothing, the same
    // run to the last draw (BookSim2 too gives the same 54.45 cycles at 0.2 flits a cycle
    // a node, seed 1, with output_speedup 1 and 2).
    let base = ["injection_rate=0.2", "seed=1", "sample_period=2000"];
    let one = mesh(&base);
    let two = mesh(&[&base[..], &["output_speedup=2"]].concat());
    assert_eq!(without_events(one), without_events(two));
    // With 8 VCs, several inputs feed one output at once: near saturation two flits a
    // cycle into each output's queue shorten the wait (BookSim2 at 0.4 flits a cycle a
    // node: 83.4 cycles once, 62.9 twice, seeds 1-3).
    let base = ["num_vcs=8", "injection_rate=0.4", "seed=1", "sample_period=2000"];
    let one = mesh(&base).packet_latency_cycles.mean;
    let two = mesh(&[&base[..], &["output_speedup=2"]].concat())
        .packet_latency_cycles
        .mean;
    assert!(two < one * 0.9, "once {one:.2}, twice {two:.2}");
}

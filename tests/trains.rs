//! Trains are an optimisation, not a model: on any network, sending runs of flits in one
//! step must give exactly what sending them flit by flit gives, and neither may depend on
//! the order equal-time events are applied in. Property-tested over random small networks
//! that mix every timing the engine has (wire latency, credit delay, router delay 0..4,
//! tail times, several VCs, crossbar contention, output buffers, adaptive selection, the
//! three switching modes, credit and IEEE 1355 token flow control, routes carried in the
//! packet and Mosaic header bytes stripped hop by hop).

mod common;
use common::*;
use proptest::prelude::*;

const TOPOS: [&str; 8] = [
    "kind = \"mesh\"\nk = [4, 3]",
    "kind = \"torus\"\nk = [4, 4]",
    "kind = \"ring\"\nk = 6",
    "kind = \"clos\"\nleaves = 4\nhosts_per_leaf = 3\nspines = 2",
    "kind = \"fat-tree\"\nk = 2\nn = 3",
    "kind = \"full\"\nswitches = 4\nhosts_per_switch = 2",
    "kind = \"mesh\"\nk = [4, 3]",
    "kind = \"mesh\"\nk = [3, 3]",
];

/// The routing of each topology above: its default, with adaptive selection where it has
/// any; source routes on the first mesh; Mosaic offset bytes on the second.
fn routing(topo: usize) -> &'static str {
    match topo {
        3 | 4 => "adaptive = true",
        6 => "algorithm = \"source\"\npaths = \"minimal\"",
        7 => "algorithm = \"mosaic\"",
        _ => "adaptive = false",
    }
}

#[derive(Debug, Clone)]
struct Net {
    topo: usize,
    vcs: u32,
    buffer: u32,
    latency: u32,
    credit_delay: u32,
    router_delay: u32,
    tail_half: bool,
    mode: &'static str,
    selection: &'static str,
    arbitration: &'static str,
    speedup: u32,
    output_buffer: u32,
    /// IEEE 1355 token flow control instead of credits (one VC networks only).
    tokens: bool,
    load: f64,
    size: u32,
    seed: u64,
}

impl Net {
    fn toml(&self) -> String {
        // Cut-through and store-and-forward need room for a whole packet.
        let buffer = if self.mode == "wormhole" {
            self.buffer
        } else {
            self.buffer.max(self.size)
        };
        let output_buffer = if self.mode == "wormhole" || self.output_buffer == 0 {
            self.output_buffer
        } else {
            self.output_buffer.max(self.size)
        };
        // Tori and rings need two VC classes for their datelines.
        let vcs = if matches!(self.topo, 1 | 2) {
            self.vcs.max(2) & !1
        } else {
            self.vcs
        };
        let fc = if self.tokens && vcs == 1 {
            // Cut-through needs grants for a whole packet at once.
            let grant = if self.mode == "wormhole" {
                (buffer / 2).max(1)
            } else {
                buffer + 1 - self.size
            };
            format!("flow_control = \"tokens\"\ntoken_grant = {grant}\n")
        } else {
            format!("credit_delay = \"{} cycles\"\n", self.credit_delay)
        };
        let tail = if self.tail_half {
            "tail_time = \"0.5 cycles\"\n"
        } else {
            ""
        };
        format!(
            r#"
[sim]
warmup = "300 cycles"
measure = "1500 cycles"
check = true
seed = {seed}
[topology]
{topo}
[channel]
vcs = {vcs}
buffer = {buffer}
latency = "{lat} cycles"
{fc}{tail}[switch]
mode = "{mode}"
router_delay = "{rd} cycles"
selection = "{sel}"
arbitration = "{arb}"
speedup = {speedup}
output_buffer = {ob}
[routing]
{routing}
[traffic]
load = {load}
packet_size = {size}
"#,
            seed = self.seed,
            topo = TOPOS[self.topo],
            routing = routing(self.topo),
            lat = self.latency,
            mode = self.mode,
            rd = self.router_delay,
            sel = self.selection,
            arb = self.arbitration,
            speedup = self.speedup,
            ob = output_buffer,
            load = self.load,
            size = self.size,
        )
    }
}

fn net() -> impl Strategy<Value = Net> {
    (
        (
            0usize..8,
            1u32..5,
            2u32..12,
            0u32..10,
            1u32..4,
            0u32..5,
            any::<bool>(),
        ),
        (
            prop::sample::select(vec!["wormhole", "wormhole", "cut-through", "store-and-forward"]),
            prop::sample::select(vec!["first-free", "round-robin", "least-occupied", "random"]),
            prop::sample::select(vec!["round-robin", "oldest-first"]),
            1u32..3,
            prop::sample::select(vec![0u32, 0, 3]),
            any::<bool>(),
            0.05f64..0.7,
            1u32..7,
            0u64..1000,
        ),
    )
        .prop_map(
            |(
                (topo, vcs, buffer, latency, credit_delay, router_delay, tail_half),
                (mode, selection, arbitration, speedup, output_buffer, tokens, load, size, seed),
            )| Net {
                topo,
                vcs,
                buffer,
                latency,
                credit_delay,
                router_delay,
                tail_half,
                mode,
                selection,
                arbitration,
                speedup,
                output_buffer,
                tokens,
                load,
                size,
                seed,
            },
        )
}

fn without_events(mut r: reef::engine::result::RunResult) -> String {
    // The events count is how the run got there, not what it found.
    r.events = 0;
    json(&r)
}

proptest! {
    // REEF_TRAIN_CASES=N runs N cases (a deeper check after a change to the engine).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("REEF_TRAIN_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn trains_and_event_order_change_nothing(n in net()) {
        let c = n.toml();
        let s = spec(&c);
        let trains = run(&s);
        prop_assert!(trains.packets_delivered > 0, "no traffic in\n{}", c);
        let flits = run(&spec_with(&c, &["sim.trains=false"]));
        prop_assert!(
            without_events(trains.clone()) == without_events(flits),
            "trains and flit-by-flit differ for\n{}", c
        );
        let reversed = run_reversed(&s);
        prop_assert!(
            without_events(trains) == without_events(reversed),
            "forward and reversed event orders differ for\n{}", c
        );
    }
}

/// Found by a deep run of the property above (20,000 cases): on a Mosaic mesh with
/// half-cycle tails, a train whose header flits were stripped as they landed left its tail
/// alone, and the tail went into the buffer one flit time after the last stripped flit
/// instead of at its own landing time (half a cycle earlier).
#[test]
fn lone_tail_after_stripped_header_flits_lands_at_its_own_time() {
    let n = Net {
        topo: 7,
        vcs: 1,
        buffer: 2,
        latency: 0,
        credit_delay: 1,
        router_delay: 0,
        tail_half: true,
        mode: "wormhole",
        selection: "first-free",
        arbitration: "round-robin",
        speedup: 1,
        output_buffer: 0,
        tokens: false,
        load: 0.5368778180048074,
        size: 3,
        seed: 0,
    };
    let c = n.toml();
    let trains = run(&spec(&c));
    assert!(trains.packets_delivered > 0);
    let flits = run(&spec_with(&c, &["sim.trains=false"]));
    assert_eq!(without_events(trains), without_events(flits), "for\n{c}");
}

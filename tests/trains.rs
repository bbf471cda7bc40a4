//! Trains are an optimisation, not a model: on any network, sending runs of flits in one
//! step must give exactly what sending them flit by flit gives, and neither may depend on
//! the order equal-time events are applied in. Property-tested over random small networks
//! that mix every timing the engine has (wire latency, credit delay, router delay 0..4,
//! tail times, several VCs, crossbar contention, output buffers, adaptive selection (the
//! random ones too: their draws are keyed by packet, switch and input), the
//! three switching modes, credit and IEEE 1355 token flow control, routes carried in the
//! packet and Mosaic header bytes stripped hop by hop, channels clocked at a period that is
//! not whole picoseconds), fed by every injection process, with host channels of their
//! own, host costs, both drain modes, batches (with and without a window), and latencies
//! from creation and from the front of the source queue.
//! `REEF_TRAIN_CASES=20000 cargo test --release --test trains` is the deep check to run
//! after a change to the engine (about six minutes on the 2-core machine).

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
        _ => "",
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
    /// `switch.flit_delay` and, on credit channels, `host.credit_return` [cycles].
    flit_delay: u32,
    /// The tail's time on every channel, in cycles ("1": the flit time).
    tail: &'static str,
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
    injection: &'static str,
    /// Host channels of their own: flit time and latency [cycles], VCs.
    host_channel: Option<(u32, u32, u32)>,
    /// Sources stop at the end of the window and the run goes on until the network is empty.
    drain_all: bool,
    /// Per-packet host costs at both ends.
    host_costs: bool,
    /// A 300 MHz clock: every channel sends on its edges, ⌊n · 3333⅓⌋ ps (one VC, no
    /// tokens, tails of one flit time; not on tori and rings, whose datelines need VCs).
    clocked: bool,
    /// Output VCs wait for the last tail's credit (BookSim2's wait_for_tail_credit).
    tail_credit: bool,
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
        let clocked = self.clocked && !matches!(self.topo, 1 | 2);
        // Tori and rings need two VC classes for their datelines.
        let vcs = if matches!(self.topo, 1 | 2) {
            self.vcs.max(2) & !1
        } else if clocked {
            1
        } else {
            self.vcs
        };
        let fc = if self.tokens && vcs == 1 && !clocked {
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
        let tail = if self.tail == "1" || clocked {
            String::new()
        } else {
            format!("tail_time = \"{} cycles\"\n", self.tail)
        };
        // On-off sources send at most one packet a cycle while on (a third of the time).
        let load = if self.injection == "on-off" {
            self.load.min(self.size as f64 / 3.5)
        } else {
            self.load
        };
        let mut traffic = format!("injection = \"{}\"\n", self.injection);
        match self.injection {
            "backlogged" => {}
            // (A batch of 1 to 50 packets a host, from the load drawn.)
            "batch" => {
                traffic += &format!("batch = {}\n", 1 + (self.load * 70.0) as u32);
                // (In one case in two, a window of 1 to 3 packets in flight.)
                if self.seed % 6 < 3 {
                    traffic += &format!("max_outstanding = {}\n", 1 + self.seed % 6);
                }
            }
            "on-off" => traffic += &format!("load = {load}\non = \"20 cycles\"\noff = \"40 cycles\"\n"),
            _ => traffic += &format!("load = {load}\n"),
        }
        let mut extra = String::new();
        if let Some((flit_time, latency, host_vcs)) = self.host_channel {
            let host_vcs = if (self.tokens && vcs == 1) || clocked {
                1
            } else {
                host_vcs
            };
            extra += &format!(
                "[host_channel]\nflit_time = \"{flit_time} cycles\"\nlatency = \"{latency} cycles\"\n\
                 vcs = {host_vcs}\nbuffer = {}\n{fc}",
                buffer.max(8)
            );
        }
        if self.host_costs || (self.flit_delay > 0 && !self.tokens) {
            extra += "[host]\n";
        }
        if self.host_costs {
            extra += "send_overhead = \"3 ns\"\nrecv_overhead = \"2 ns\"\nrecv_per_byte = \"1 ns\"\n";
        }
        if self.flit_delay > 0 && !self.tokens {
            extra += &format!("credit_return = \"{} cycles\"\n", self.flit_delay);
        }
        let drain = if self.drain_all { "all" } else { "measured" };
        let clock = if clocked { "clock = \"300 MHz\"\n" } else { "" };
        // A batch has no window; one case in three dates its packets at the front of the
        // source queue (from the seed drawn).
        let mut sim = if self.injection == "batch" {
            String::new()
        } else {
            format!("warmup = \"300 cycles\"\nmeasure = \"1500 cycles\"\ndrain = \"{drain}\"\n")
        };
        if self.seed.is_multiple_of(3) {
            sim += "source_queueing = false\n";
        }
        format!(
            r#"
[sim]
{clock}{sim}check = true
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
flit_delay = "{fd} cycles"
selection = "{sel}"
arbitration = "{arb}"
speedup = {speedup}
output_buffer = {ob}
vc_release = "{release}"
[routing]
{routing}
[traffic]
{traffic}packet_size = {size}
{extra}"#,
            seed = self.seed,
            topo = TOPOS[self.topo],
            routing = routing(self.topo),
            lat = self.latency,
            mode = self.mode,
            rd = self.router_delay,
            fd = self.flit_delay,
            sel = self.selection,
            arb = self.arbitration,
            speedup = self.speedup,
            ob = output_buffer,
            size = self.size,
            // (Tokens are granted a few at a time: waiting for all is refused.)
            release = if self.tail_credit && !fc.contains("tokens") {
                "tail-credit"
            } else {
                "tail"
            },
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
            prop::sample::select(vec![0u32, 0, 0, 1, 2]),
        ),
        (
            prop::sample::select(vec!["wormhole", "wormhole", "cut-through", "store-and-forward"]),
            prop::sample::select(vec![
                "first-free",
                "round-robin",
                "least-occupied",
                "random",
                "random-any",
            ]),
            prop::sample::select(vec!["round-robin", "oldest-first"]),
            1u32..3,
            prop::sample::select(vec![0u32, 0, 3]),
            any::<bool>(),
            0.05f64..0.7,
            1u32..7,
            0u64..1000,
        ),
        (
            prop::sample::select(vec!["1", "1", "0.5", "0.25", "1.5"]),
            prop::sample::select(vec![
                "bernoulli",
                "bernoulli",
                "poisson",
                "periodic",
                "on-off",
                "backlogged",
                "batch",
            ]),
            prop::option::weighted(0.3, (1u32..4, 0u32..8, 1u32..3)),
            prop::bool::weighted(0.25),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.25),
            prop::bool::weighted(0.3),
        ),
    )
        .prop_map(
            |(
                (topo, vcs, buffer, latency, credit_delay, router_delay, tail, flit_delay),
                (mode, selection, arbitration, speedup, output_buffer, tokens, load, size, seed),
                (tail_time, injection, host_channel, drain_all, host_costs, clocked, tail_credit),
            )| Net {
                topo,
                vcs,
                buffer,
                latency,
                credit_delay,
                router_delay,
                flit_delay,
                tail: if tail { tail_time } else { "1" },
                mode,
                selection,
                arbitration,
                speedup,
                output_buffer,
                tokens,
                load,
                size,
                seed,
                injection,
                host_channel,
                drain_all,
                host_costs,
                clocked,
                tail_credit,
            },
        )
}

proptest! {
    // REEF_TRAIN_CASES=N runs N cases (a deeper check after a change to the engine).
    #![proptest_config(ProptestConfig {
        cases: cases("REEF_TRAIN_CASES", 64),
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
        flit_delay: 0,
        tail: "0.5",
        mode: "wormhole",
        selection: "first-free",
        arbitration: "round-robin",
        speedup: 1,
        output_buffer: 0,
        tokens: false,
        load: 0.5368778180048074,
        size: 3,
        seed: 0,
        injection: "bernoulli",
        host_channel: None,
        drain_all: false,
        host_costs: false,
        clocked: false,
        tail_credit: false,
    };
    let c = n.toml();
    let trains = run(&spec(&c));
    assert!(trains.packets_delivered > 0);
    let flits = run(&spec_with(&c, &["sim.trains=false"]));
    assert_eq!(without_events(trains), without_events(flits), "for\n{c}");
}

/// Found by fuzzing: with nothing to drain at the window's end (no packet created in a short
/// window), the run ended at the last instant before it, which trains (fewer events) and
/// flit by flit placed differently, so they counted different flits injected and hops.
#[test]
fn a_run_with_nothing_to_drain_ends_at_the_window_end() {
    let c = "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"300 cycles\"\n[topology]\nkind = \"file\"\nfile = \"slow-link.txt\"\n[traffic]\ninjection = \"periodic\"\npacket_size = 4\nload = 0.01\n";
    let trains = run(&spec(c));
    let flits = run(&spec_with(c, &["sim.trains=false"]));
    assert_eq!(trains.sim_end_ns, 400.0);
    assert!(trains.flit_hops > 0 && trains.packets_delivered == 0);
    assert_eq!(without_events(trains), without_events(flits));
}

/// IEEE 1355 links carry the reverse link's tokens between their characters, yet trains go
/// on them, into and out of token buffers, with the results of flit by flit and fewer
/// events (`link::ds`): a Macramé Clos with its output buffers and header deletion.
#[test]
fn trains_run_on_token_links_with_fewer_events() {
    let c = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/macrame-clos256.toml"
    ))
    .unwrap();
    let set = ["topology.nodes=64", "sim.measure=\"100 us\"", "sim.check=true"];
    let trains = run(&spec_with(&c, &set));
    let flits = run(&spec_with(&c, &[&set[..], &["sim.trains=false"]].concat()));
    assert!(trains.packets_delivered > 500, "{}", trains.packets_delivered);
    assert!(
        trains.events * 10 < flits.events * 9,
        "{} events with trains, {} flit by flit",
        trains.events,
        flits.events
    );
    assert_eq!(without_events(trains), without_events(flits));
}

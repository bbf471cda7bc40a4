//! The express engine is an optimisation, not a model: on every fabric it takes, it must give
//! exactly what the general engine gives, and what the flit-by-flit reference gives (everything
//! in the result but the count of events). Property-tested over random meshes and tori of one
//! to three dimensions with one to three hosts a switch, and small fabrics routed by
//! deterministic tables (fat trees, Clos, fully connected, flies, cmesh, flatfly) or adaptive
//! ones (fat trees, Clos, up*/down* on a ring), with every selection policy the express engine
//! takes, BookSim2's switch (VCs in turn, its switch and VC allocators) where every channel has
//! one VC and, on BookSim2's cycle grid (whole-cycle timings, deterministic routing), on
//! several, VCs given in turn on any number, every timing the express engine handles (flit and tail times, wire latency, credit
//! delay, router delay, a VC-reuse delay, a least time in the input buffer, buffers down to one
//! flit, host channels of their own), host send and receive costs, every injection process
//! (batches too, with and without a window), several traffic patterns, packet sizes and
//! size mixes, both drain modes, and latencies from creation and from the front of the
//! source queue; both engines with their invariant checks on (`sim.check`, compiled into
//! the express engine's checking instantiations), but for one case in four, which runs the
//! express engine's instantiation without them, as a run gets by default.
//! `REEF_EXPRESS_CASES=5000 cargo test --release --test express` is the deep check to run
//! after a change to either engine.

mod common;
use common::*;
use proptest::prelude::*;
use reef::engine::Sim;

#[derive(Debug, Clone)]
struct Net {
    /// A fabric routed by tables, deterministic or adaptive, in place of the mesh or torus:
    /// its [topology] lines (and [routing], for adaptive ones).
    tables: Option<String>,
    /// The switches' selection among several admissible outputs.
    selection: &'static str,
    /// BookSim2's switch (`vc_choice`, `allocator`, `vc_allocator`), drawn where every
    /// channel has one VC: the same switch as reef's there.
    booksim: Option<(&'static str, &'static str, &'static str)>,
    /// A torus (with datelines) rather than a mesh.
    torus: bool,
    /// Dimension-order options of a torus: [routing] lines.
    dor: &'static str,
    k: Vec<u32>,
    conc: u32,
    /// VCs per channel (a torus takes an even number, two at least).
    vcs: u32,
    speedup: u32,
    buffer: u32,
    flit_time: u32,
    /// The tail's time ("" for the flit time).
    tail: &'static str,
    latency: u32,
    credit_delay: u32,
    router_delay: u32,
    /// The VC-reuse delay and the least time in an input buffer [cycles].
    vc_reuse: u32,
    flit_delay: u32,
    /// Output VCs given in turn (`switch.vc_choice = "round-robin"`) on any number of VCs,
    /// where `booksim` is not drawn.
    in_turn: bool,
    /// BookSim2's switch on its cycle grid with several VCs: its switch and VC allocators
    /// (VCs in turn), every channel of one flit time, every delay whole cycles,
    /// deterministic routing, no host costs, packets made on the cycles' edges.
    grid: Option<(&'static str, &'static str)>,
    /// Host channels of their own: flit time, latency [cycles], buffer and VCs.
    host_channel: Option<(u32, u32, u32, u32)>,
    /// Host costs: send and receive overheads [cycles], per-byte costs [ps] and bytes per
    /// flit.
    host_costs: Option<(u32, u32, u32, u32, u32)>,
    pattern: &'static str,
    injection: &'static str,
    load: f64,
    sizes: &'static str,
    drain_all: bool,
    seed: u64,
}

impl Net {
    fn toml(&self) -> String {
        let k: Vec<String> = self.k.iter().map(|x| x.to_string()).collect();
        let tail = if self.tail.is_empty() {
            String::new()
        } else {
            format!("tail_time = \"{}\"\n", self.tail)
        };
        let mut traffic = format!(
            "pattern = \"{}\"\ninjection = \"{}\"\n",
            self.pattern, self.injection
        );
        // (A Bernoulli source sends at most one packet a cycle; on-off ones, while on.)
        let load = self.load.min(if self.injection == "on-off" { 0.25 } else { 1.0 });
        match self.injection {
            "backlogged" => {}
            // (A batch of 1 to 60 packets a host, from the load drawn.)
            "batch" => {
                traffic += &format!("batch = {}\n", 1 + (self.load * 66.0) as u32);
                // (In one case in two, a window of 1 to 3 packets in flight.)
                if self.seed % 6 < 3 {
                    traffic += &format!("max_outstanding = {}\n", 1 + self.seed % 6);
                }
            }
            "on-off" => traffic += &format!("load = {load}\non = \"20 cycles\"\noff = \"40 cycles\"\n"),
            _ => traffic += &format!("load = {load}\n"),
        }
        let pattern = match self.pattern {
            // (Coordinates: a mesh's or torus's only.)
            "tornado" | "neighbour" if self.tables.is_some() => "uniform",
            p => p,
        };
        traffic = traffic.replace(&format!("\"{}\"", self.pattern), &format!("\"{pattern}\""));
        if self.pattern == "hot-spot" {
            traffic += "hot = [0]\nhot_fraction = 0.3\n";
        }
        traffic += self.sizes;
        traffic += "\n";
        let mut extra = String::new();
        if let Some((ft, lat, buf, vcs)) = self.host_channel {
            extra += &format!(
                "[host_channel]\nflit_time = \"{ft} cycles\"\nlatency = \"{lat} cycles\"\nbuffer = {buf}\n\
                 vcs = {vcs}\ncredit_delay = \"{} cycles\"\n",
                self.credit_delay
            );
        }
        if let Some((so, ro, sb, rb, fb)) = self.host_costs {
            extra += &format!(
                "[host]\nsend_overhead = \"{so} cycles\"\nrecv_overhead = \"{ro} cycles\"\n\
                 send_per_byte = \"{sb} ps\"\nrecv_per_byte = \"{rb} ps\"\n"
            );
            traffic += &format!("flit_bytes = {fb}\n");
        }
        let vcs = if self.torus && self.tables.is_none() {
            (self.vcs.max(2) + 1) & !1
        } else {
            self.vcs
        };
        let mut booksim = String::new();
        if let Some((alloc, va)) = self.grid {
            booksim =
                format!("vc_choice = \"round-robin\"\nallocator = \"{alloc}\"\nvc_allocator = \"{va}\"\n");
        } else if let Some((choice, alloc, va)) = self.booksim
            && vcs == 1
            && self.host_channel.is_none_or(|h| h.3 == 1)
        {
            booksim = format!("vc_choice = \"{choice}\"\nallocator = \"{alloc}\"\nvc_allocator = \"{va}\"\n");
        } else if self.in_turn {
            booksim = "vc_choice = \"round-robin\"\n".into();
        }
        if self.torus && self.tables.is_none() && !self.dor.is_empty() {
            extra += &format!("[routing]\n{}\n", self.dor);
        }
        // A batch has no window; one case in three dates its packets at the front of the
        // source queue (from the seed drawn).
        let mut sim = if self.injection == "batch" {
            String::new()
        } else {
            format!(
                "warmup = \"200 cycles\"\nmeasure = \"1000 cycles\"\ndrain = \"{}\"\n",
                if self.drain_all { "all" } else { "measured" }
            )
        };
        if self.seed.is_multiple_of(3) {
            sim += "source_queueing = false\n";
        }
        format!(
            r#"
[sim]
{sim}seed = {seed}
check = true
[topology]
{topology}
[channel]
vcs = {vcs}
flit_time = "{ft} cycles"
{tail}buffer = {buffer}
latency = "{lat} cycles"
credit_delay = "{cd} cycles"
[switch]
router_delay = "{rd} cycles"
vc_reuse_delay = "{reuse} cycles"
flit_delay = "{fd} cycles"
speedup = {speedup}
selection = "{selection}"
{booksim}[traffic]
{traffic}{extra}"#,
            seed = self.seed,
            topology = match &self.tables {
                Some(t) => t.clone(),
                None => format!(
                    "kind = \"{}\"\nk = [{}]\nhosts_per_switch = {}",
                    if self.torus { "torus" } else { "mesh" },
                    k.join(", "),
                    self.conc
                ),
            },
            speedup = self.speedup,
            ft = self.flit_time,
            buffer = self.buffer,
            lat = self.latency,
            cd = self.credit_delay,
            rd = self.router_delay,
            reuse = self.vc_reuse,
            fd = self.flit_delay,
            selection = self.selection,
        )
    }
}

/// The fabrics routed by tables that the express engine takes, small: their [topology]
/// lines (and [routing], for adaptive tables).
fn tables() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (2u32..5, 2u32..4).prop_map(|(k, n)| format!(
            "kind = \"fat-tree\"\nk = {k}\nn = {n}\n[routing]\nadaptive = true"
        )),
        2 => (2u32..5, 1u32..4, 2u32..4, 1u32..3).prop_map(|(l, h, s, p)| format!(
            "kind = \"clos\"\nleaves = {l}\nhosts_per_leaf = {h}\nspines = {s}\nlinks_per_pair = {p}\n\
             [routing]\nadaptive = true"
        )),
        1 => Just("kind = \"file\"\nfile = \"ring4.txt\"\n[routing]\nalgorithm = \"updown\"\nadaptive = true".to_string()),
        1 => (2u32..5, 1u32..4).prop_map(|(k, n)| format!("kind = \"fat-tree\"\nk = {k}\nn = {n}")),
        1 => (2u32..5, 1u32..4, 1u32..4, 1u32..3).prop_map(|(l, h, s, p)| format!(
            "kind = \"clos\"\nleaves = {l}\nhosts_per_leaf = {h}\nspines = {s}\nlinks_per_pair = {p}"
        )),
        1 => (2u32..6, 1u32..3)
            .prop_map(|(s, h)| format!("kind = \"full\"\nswitches = {s}\nhosts_per_switch = {h}")),
        1 => (2u32..4, 1u32..4).prop_map(|(k, n)| format!("kind = \"fly\"\nk = {k}\nn = {n}")),
        1 => prop::sample::select(vec![2u32, 4]).prop_map(|k| format!("kind = \"cmesh\"\nk = {k}")),
        1 => (2u32..4).prop_map(|k| format!("kind = \"flatfly\"\nk = {k}\nn = 2")),
    ]
}

/// Reef's greedy allocator and `allocators`.
fn with_greedy(allocators: &[&'static str]) -> Vec<&'static str> {
    std::iter::once("greedy")
        .chain(allocators.iter().copied())
        .collect()
}

fn net() -> impl Strategy<Value = Net> {
    (
        (
            prop::option::weighted(0.5, tables()),
            prop::option::weighted(
                0.3,
                (
                    prop::sample::select(vec!["lowest", "round-robin"]),
                    prop::sample::select(with_greedy(&SEPARABLE_SW_ALLOCATORS)),
                    prop::sample::select(with_greedy(&SEPARABLE_VC_ALLOCATORS)),
                ),
            ),
            prop::sample::select(vec![
                "first-free",
                "first-free",
                "round-robin",
                "random",
                "random-any",
                "least-occupied",
            ]),
            prop::option::weighted(
                0.3,
                (
                    prop::sample::select(SEPARABLE_SW_ALLOCATORS.to_vec()),
                    prop::sample::select(with_greedy(&SEPARABLE_VC_ALLOCATORS)),
                ),
            ),
        ),
        (
            prop::bool::weighted(0.4),
            prop::sample::select(vec![1u32, 1, 1, 2, 2, 3, 4]),
            prop::sample::select(vec![1u32, 1, 1, 2]),
            prop::sample::select(vec![
                "",
                "",
                "ties = \"alternate\"",
                "dateline_class = \"at-entry\"",
                "dateline_class = \"at-entry\"\nties = \"alternate\"",
            ]),
        ),
        (
            prop::collection::vec(2u32..6, 1..4),
            prop::sample::select(vec![1u32, 1, 1, 2, 3]),
            1u32..12,
            prop::sample::select(vec![1u32, 1, 1, 2]),
            prop::sample::select(vec!["", "", "", "0.5 cycles", "2 cycles", "3 cycles"]),
            0u32..5,
            1u32..4,
            1u32..6,
        ),
        (
            (
                prop::option::weighted(0.3, (1u32..4, 0u32..4, 1u32..10, 1u32..3)),
                prop::sample::select(vec![0u32, 0, 0, 1, 2, 5]),
                prop::sample::select(vec![0u32, 0, 0, 1, 2, 4]),
                prop::bool::weighted(0.3),
            ),
            prop::option::weighted(
                0.25,
                (
                    0u32..8,
                    0u32..12,
                    prop::sample::select(vec![0u32, 0, 50, 400]),
                    prop::sample::select(vec![0u32, 0, 100, 700]),
                    1u32..9,
                ),
            ),
            prop::sample::select(vec![
                "uniform",
                "uniform",
                "tornado",
                "permutation",
                "hot-spot",
                "neighbour",
            ]),
            prop::sample::select(vec![
                "bernoulli",
                "bernoulli",
                "poisson",
                "periodic",
                "on-off",
                "backlogged",
                "batch",
            ]),
            0.02f64..0.9,
            prop::sample::select(vec![
                "packet_size = 4",
                "packet_size = 1",
                "packet_size = 2",
                "packet_size = 9",
                "packet_size = 20",
                "sizes = [[2, 0.7], [12, 0.3]]",
            ]),
            prop::bool::weighted(0.3),
            0u64..1000,
        ),
    )
        .prop_map(
            |(
                (tables, booksim, selection, grid),
                (torus, vcs, speedup, dor),
                (k, conc, buffer, flit_time, tail, latency, credit_delay, router_delay),
                (
                    (host_channel, vc_reuse, flit_delay, in_turn),
                    host_costs,
                    pattern,
                    injection,
                    load,
                    sizes,
                    drain_all,
                    seed,
                ),
            )| {
                let mut n = Net {
                    tables,
                    booksim,
                    selection,
                    torus,
                    dor,
                    k,
                    conc,
                    vcs,
                    speedup,
                    buffer,
                    flit_time,
                    tail,
                    latency,
                    credit_delay,
                    router_delay,
                    vc_reuse,
                    flit_delay,
                    in_turn,
                    host_channel,
                    host_costs,
                    pattern,
                    injection,
                    load,
                    sizes,
                    drain_all,
                    seed,
                    grid,
                };
                if grid.is_some() {
                    // On BookSim2's grid: several VCs at every switch input (so that they
                    // share the crossbar), one flit time, whole-cycle delays (a VC-reuse
                    // delay with a separable VC allocator, as BookSim2's pipeline has),
                    // deterministic routing, no host costs, packets made on the cycles' edges.
                    n.booksim = None;
                    n.tables = n.tables.filter(|t| !t.contains("adaptive"));
                    n.vcs = n.vcs.max(2);
                    n.speedup = 1;
                    n.flit_time = 1;
                    n.tail = "";
                    n.host_costs = None;
                    n.host_channel = n.host_channel.map(|(_, lat, buf, vcs)| (1, lat, buf, vcs.max(2)));
                    // (A periodic source's period is whole cycles only at some loads.)
                    if n.injection == "poisson" || n.injection == "periodic" {
                        n.injection = "bernoulli";
                    }
                    if grid.is_some_and(|g| g.1 != "greedy") {
                        n.vc_reuse = n.vc_reuse.max(1);
                    }
                }
                n
            },
        )
}

proptest! {
    // REEF_EXPRESS_CASES=N runs N cases (a deeper check after a change to an engine).
    #![proptest_config(ProptestConfig {
        cases: cases("REEF_EXPRESS_CASES", 96),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_express_engine_gives_what_the_general_engine_gives(n in net()) {
        let c = n.toml();
        // One case in four runs the express engine's instantiation without the checks (the
        // one a run gets by default) against the others with theirs.
        let s = if n.seed % 4 == 0 {
            spec_with(&c, &["sim.check=false"])
        } else {
            spec(&c)
        };
        let sim = Sim::new(&s).unwrap();
        prop_assert_eq!(sim.express_refused(), None, "the express engine refused\n{}", c);
        prop_assert_eq!(sim.engine_choice().contains("checks"), n.seed % 4 != 0);
        let express = run(&s);
        // A case that delivers nothing compares nothing: drawn again. (About one in a
        // hundred at the lowest loads on two hosts: a 20,000-case run meets some.)
        prop_assume!(express.packets_delivered > 0, "no traffic in\n{}", c);
        let general = run(&spec_with(&c, &["sim.express=false"]));
        prop_assert!(
            without_events(express.clone()) == without_events(general.clone()),
            "the engines differ for\n{}\nexpress: {}\ngeneral: {}",
            c,
            without_events(express),
            without_events(general)
        );
        // And the reference: the general engine flit by flit, no trains.
        let reference = run(&spec_with(&c, &["sim.trains=false"]));
        prop_assert!(
            without_events(express.clone()) == without_events(reference.clone()),
            "the express engine and the flit-by-flit reference differ for\n{}\nexpress: {}\nreference: {}",
            c,
            without_events(express),
            without_events(reference)
        );
    }
}

/// What the express engine refuses goes on the general engine, and the refusal says why.
#[test]
fn the_express_engine_refuses_what_it_does_not_model() {
    let base = "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"300 cycles\"\n[topology]\nkind = \"mesh\"\nk = [3, 3]\n\
                [channel]\nbuffer = 4\ncredit_delay = \"1 cycle\"\n[traffic]\nload = 0.1\npacket_size = 4\n";
    assert_eq!(Sim::new(&spec(base)).unwrap().express_refused(), None);
    for (set, why) in [
        (
            &[
                "topology.kind=\"torus\"",
                "routing.dateline=false",
                "channel.vcs=1",
            ][..],
            "datelines",
        ),
        (
            &["routing.algorithm=\"source\"", "routing.paths=\"minimal\""],
            "dimension order",
        ),
        (&["switch.mode=\"cut-through\""], "wormhole"),
        (&["switch.arbitration=\"oldest-first\""], "round-robin"),
        (&["switch.router_delay=\"0 cycles\""], "router delay"),
        (&["sim.trains=false"], "flit-by-flit"),
        (&["sim.express=false"], "sim.express = false"),
        // BookSim2's separable allocators off its cycle grid: without VCs in turn, with
        // a greedy switch allocator, with a wire of half a cycle.
        (&["switch.allocator=\"islip\"", "channel.vcs=2"], "cycle grid"),
        (&["switch.vc_allocator=\"islip\"", "channel.vcs=2"], "cycle grid"),
        (
            &[
                "switch.vc_choice=\"round-robin\"",
                "switch.allocator=\"islip\"",
                "switch.vc_allocator=\"islip\"",
                "switch.vc_reuse_delay=\"1 cycle\"",
                "channel.latency=\"0.5 cycles\"",
                "channel.vcs=2",
            ],
            "cycle grid",
        ),
    ] {
        let s = spec_with(base, set);
        let refused = Sim::new(&s).unwrap().express_refused();
        assert!(refused.is_some_and(|r| r.contains(why)), "{set:?}: {refused:?}");
        // And the run still goes (on the general engine).
        assert!(run(&s).packets_delivered > 0, "{set:?}");
    }
    // On the grid they run on the express engine, as the property test draws them.
    let s = spec_with(
        base,
        &[
            "switch.vc_choice=\"round-robin\"",
            "switch.allocator=\"islip\"",
            "switch.vc_allocator=\"islip\"",
            "switch.vc_reuse_delay=\"1 cycle\"",
            "channel.vcs=2",
        ],
    );
    let sim = Sim::new(&s).unwrap();
    assert_eq!(sim.express_refused(), None);
    assert!(
        sim.engine_choice().contains("separable"),
        "{}",
        sim.engine_choice()
    );
    // VCs given in turn run on an instantiation of their own, routed one way or adaptively.
    let s = spec_with(base, &["switch.vc_choice=\"round-robin\"", "channel.vcs=2"]);
    let sim = Sim::new(&s).unwrap();
    assert_eq!(sim.express_refused(), None);
    assert!(
        sim.engine_choice().contains("VCs given in turn"),
        "{}",
        sim.engine_choice()
    );
    let adaptive = "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"300 cycles\"\n[topology]\nkind = \"fat-tree\"\n\
                    k = 2\nn = 2\n[routing]\nadaptive = true\n[channel]\nvcs = 2\n[switch]\n\
                    vc_choice = \"round-robin\"\n[traffic]\nload = 0.1\n";
    let a = spec(adaptive);
    let sim = Sim::new(&a).unwrap();
    assert_eq!(sim.express_refused(), None);
    assert!(run(&a).packets_delivered > 0);
    assert_eq!(
        sim.engine_choice(),
        "express (adaptive routing tables), with VCs given in turn compiled in"
    );
    // With one VC on every channel, BookSim2's switch is reef's: the express engine takes it.
    let booksim = [
        "switch.vc_choice=\"round-robin\"",
        "switch.allocator=\"separable-input-first\"",
        "switch.vc_allocator=\"islip\"",
    ];
    let s = spec_with(base, &booksim);
    let sim = Sim::new(&s).unwrap();
    assert_eq!(sim.express_refused(), None);
    // And `reef check` says why they could be left out.
    assert!(
        sim.engine_choice()
            .ends_with("change nothing with one VC a channel")
    );
}

/// The express engine runs with its invariant checks on (the instantiation that has them)
/// and gives what it gives without them, and what the general engine gives with its own.
#[test]
fn the_express_engine_checks_itself_and_changes_nothing() {
    let base = "[sim]\nwarmup = \"200 cycles\"\nmeasure = \"2000 cycles\"\ndrain = \"all\"\n[topology]\nkind = \"torus\"\n\
                k = [4, 3]\n[channel]\nvcs = 2\nbuffer = 3\ncredit_delay = \"2 cycles\"\n[traffic]\nload = 0.4\n\
                sizes = [[2, 0.5], [9, 0.5]]\n";
    // Each instantiation with the checks against the one without: plain, and with VCs given
    // in turn.
    for turn in [&[][..], &["switch.vc_choice=\"round-robin\""][..]] {
        let checked = spec_with(base, &[turn, &["sim.check=true"]].concat());
        assert_eq!(Sim::new(&checked).unwrap().express_refused(), None);
        let with = run(&checked);
        assert!(with.packets_delivered > 1000, "{}", with.packets_delivered);
        assert_eq!(
            without_events(with.clone()),
            without_events(run(&spec_with(base, turn)))
        );
        let general = run(&spec_with(
            base,
            &[turn, &["sim.check=true", "sim.express=false"]].concat(),
        ));
        assert_eq!(without_events(with), without_events(general));
    }
}

/// A mesh more than 255 hops wide runs on the express engine too: a head's hop count rides
/// in eight bits of its slot, and at 256 the packet record takes it (as in the general
/// engine), so the two give the same result, mean hops included.
#[test]
fn meshes_wider_than_255_hops_run_express_and_agree() {
    // (At low load a head crosses most of a line without waiting, so its count passes 255 in
    // its slot; busier, it waits, and the general path takes the count at each wait.)
    for (k, load) in [("[300]", 0.002), ("[300]", 0.05), ("[3, 290]", 0.001)] {
        let c = format!(
            "[sim]\nwarmup = \"2000 cycles\"\nmeasure = \"6000 cycles\"\n[topology]\nkind = \"mesh\"\nk = {k}\n\
             [channel]\nbuffer = 4\ncredit_delay = \"1 cycle\"\n[switch]\nrouter_delay = \"2 cycles\"\n\
             [traffic]\nload = {load}\npacket_size = 4\n"
        );
        let s = spec(&c);
        assert_eq!(Sim::new(&s).unwrap().express_refused(), None, "{k}");
        let express = run(&s);
        let general = run(&spec_with(&c, &["sim.express=false"]));
        assert!(
            express.mean_hops > 60.0 && express.packets_delivered > 500,
            "{k}: {}",
            express.mean_hops
        );
        assert_eq!(without_events(express), without_events(general), "{k}");
    }
}

/// The tables the express engine takes are those whose generator cannot build a cycle of
/// channel dependencies (`Table::deadlock_free_by_construction`: this engine has no
/// deadlock watchdog), deterministic or adaptive, and a fat tree's computed routes. The dependency check agrees on every generator named there, at
/// several sizes; shortest paths on a ring, which can deadlock, stay on the general engine.
#[test]
fn the_tables_the_express_engine_takes_are_free_of_deadlock() {
    let sim = "[sim]\nclock = \"1 GHz\"\n[traffic]\nload = 0.1\n";
    let mut taken = 0;
    for topo in [
        "kind = \"fat-tree\"\nk = 2\nn = 4",
        "kind = \"fat-tree\"\nk = 4\nn = 3",
        "kind = \"fat-tree\"\nk = 3\nn = 3\n[routing]\nadaptive = true",
        "kind = \"clos\"\nleaves = 5\nhosts_per_leaf = 3\nspines = 3\nlinks_per_pair = 2",
        "kind = \"clos\"\nleaves = 4\nhosts_per_leaf = 4\nspines = 2\n[routing]\nadaptive = true",
        "kind = \"full\"\nswitches = 7\nhosts_per_switch = 2",
        "kind = \"fly\"\nk = 2\nn = 4",
        "kind = \"fly\"\nk = 4\nn = 3",
        "kind = \"booksim-fattree\"\nk = 4\nn = 3",
        "kind = \"cmesh\"\nk = 4",
        "kind = \"cmesh\"\nk = 6\n[routing]\nalgorithm = \"cmesh-express\"",
        "kind = \"flatfly\"\nk = 4\nn = 2",
        "kind = \"flatfly\"\nk = 3\nn = 3\nrouters_per_row = 9",
        "kind = \"dragonfly\"\nhosts_per_switch = 2\n[channel]\nvcs = 2",
        "kind = \"dragonfly\"\nhosts_per_switch = 3\nnoc_latency = true\n[channel]\nvcs = 3",
        "kind = \"file\"\nfile = \"ring4.txt\"\n[routing]\nalgorithm = \"updown\"",
        "kind = \"file\"\nfile = \"ring4.txt\"\n[routing]\nalgorithm = \"updown\"\nadaptive = true",
    ] {
        let s = spec(&format!("{sim}[topology]\n{topo}\n"));
        let deterministic = match &s.routing {
            reef::routing::Routing::Table(t) => {
                assert!(t.deadlock_free_by_construction(), "{topo}: {}", t.name());
                t.deterministic()
            }
            // (A fat tree's deterministic routes are computed, not tabled.)
            reef::routing::Routing::FatTree(_) => true,
            _ => panic!("{topo}: neither tables nor a fat tree's routes"),
        };
        let rep = reef::runner::check(&s);
        assert!(rep.deadlock_free(), "{topo}: {:?}", rep.cycle);
        // They go express, the adaptive ones too (selecting by free VCs, the default).
        let refused = Sim::new(&s).unwrap().express_refused();
        assert_eq!(refused, None, "{topo}");
        taken += !deterministic as u32;
    }
    assert_eq!(taken, 4);
    // Save with a selection by the credits used on busy outputs (BookSim2's anca), whose
    // trains the general engine does not yet keep to its reference's draws.
    let anca = spec(&format!(
        "{sim}[topology]\nkind = \"fat-tree\"\nk = 3\nn = 3\n[routing]\nadaptive = true\n\
         [switch]\nselection = \"two-random-least-used\"\n"
    ));
    let refused = Sim::new(&anca).unwrap().express_refused();
    assert!(
        refused.is_some_and(|r| r.contains("two-random-least-used")),
        "{refused:?}"
    );
    let ring = spec(&format!(
        "{sim}[topology]\nkind = \"file\"\nfile = \"ring4.txt\"\n[routing]\nalgorithm = \"minimal\"\n"
    ));
    assert!(reef::runner::check(&ring).cycle.is_some());
    let refused = Sim::new(&ring).unwrap().express_refused();
    assert!(
        refused.is_some_and(|r| r.contains("free of deadlock")),
        "{refused:?}"
    );
}

/// Up*/down* tables on a topology file, with their routing labels (a packet that has come
/// down may not go up again): the express engine gives what the general engine gives.
#[test]
fn updown_tables_run_express_and_agree() {
    let c = "[sim]\nwarmup = \"200 cycles\"\nmeasure = \"3000 cycles\"\ncheck = true\n[topology]\nkind = \"file\"\n\
             file = \"ring4.txt\"\n[routing]\nalgorithm = \"updown\"\n[channel]\nvcs = 2\nbuffer = 3\n\
             credit_delay = \"1 cycle\"\n[traffic]\nload = 0.3\nsizes = [[2, 0.5], [7, 0.5]]\n";
    let s = spec(c);
    assert!((0..s.fabric.channels.len()).any(|c| s.routing.channel_class(c) != 0));
    assert_eq!(Sim::new(&s).unwrap().express_refused(), None);
    let express = run(&s);
    assert!(express.packets_delivered > 500, "{}", express.packets_delivered);
    let general = run(&spec_with(c, &["sim.express=false"]));
    assert_eq!(without_events(express), without_events(general));
}

/// BookSim2's dragonfly with its minimal routing: tables by input class whose VC after a
/// local hop is the one the packet came in on (`Want::KEEP_VC`), channels of 10 and 100
/// cycles. The express engine gives what the general engine gives.
#[test]
fn dragonfly_tables_run_express_and_agree() {
    let c = "[sim]\nwarmup = \"500 cycles\"\nmeasure = \"3000 cycles\"\ncheck = true\n[topology]\n\
             kind = \"dragonfly\"\nhosts_per_switch = 2\nnoc_latency = true\n[channel]\nvcs = 2\n\
             buffer = 16\n[traffic]\nload = 0.4\npacket_size = 5\n";
    let s = spec(c);
    assert_eq!(Sim::new(&s).unwrap().express_refused(), None);
    let express = run(&s);
    assert!(express.packets_delivered > 1000, "{}", express.packets_delivered);
    let general = run(&spec_with(c, &["sim.express=false"]));
    assert_eq!(without_events(express), without_events(general));
}

//! BookSim2's keys mapped onto reef's config. A BookSim2 cycle is a reef cycle and a flit
//! takes one. BookSim2's input-queued router spends `routing_delay + vc_alloc_delay +
//! sw_alloc_delay + st_prepare_delay` cycles on a head at the front of its input buffer and
//! `st_final_delay` crossing the switch, then the channel's latency (1, or 2 on a torus with
//! `use_noc_latency`; 1 on a fly or fat tree; an anynet link's weight, which reef's anynet
//! fabric adds; 1 into and out of a node): reef's `router_delay` is the first sum, and
//! the rest goes on the channel (`latency` = st_final + channel − 1, the flit time being the
//! one cycle left). At zero load this gives BookSim2's latency exactly (5 cycles a router
//! and 2 more, with the default pipeline). A router takes a flit's credit in switch
//! allocation, a cycle (and `st_prepare_delay`) before the flit leaves in reef's terms, so a
//! credit between routers takes `credit_delay` plus the channel's latency plus 1; a node
//! takes it as it injects and reads it a cycle after the router sent it (1 cycle), and
//! returns a credit of its own 2 cycles after the flit landed (`host.credit_return`, plus
//! `credit_delay`, which the router applies). A body flit goes to switch allocation the
//! cycle it lands and leaves after it (`switch.flit_delay`). BookSim2's uniform traffic may
//! pick the sender itself, and its injection rate counts packets unless
//! `injection_rate_uses_flits`.
//!
//! This module reads the timing, the router and the measurement keys; the network's keys
//! are mapped in `topology`, its routing in `routing` (the dragonfly's both in `dragonfly`)
//! and the traffic in `traffic`.

use super::Translation;
use super::keys::{From, Store, lookup};
use super::topology::Topo;
use super::traffic::{injection, load, pattern, sizes};
use std::cell::RefCell;
use std::collections::BTreeSet;

use super::leftover::*;
use super::toml_out::*;

/// A key reef cannot run as it is set.
#[derive(Debug)]
pub struct MapError {
    pub key: &'static str,
    pub from: Option<From>,
    pub msg: String,
    pub hint: Option<String>,
}

pub(super) type R<T> = Result<T, MapError>;

/// The store, with the keys the translation has read.
pub(super) struct Cfg<'a> {
    pub(super) s: &'a Store,
    pub(super) file: &'a str,
    pub(super) used: RefCell<BTreeSet<&'static str>>,
    pub(super) notes: RefCell<Vec<String>>,
}

impl<'a> Cfg<'a> {
    pub(super) fn key(name: &str) -> &'static super::keys::Key {
        lookup(name).expect("the translation reads only BookSim2's keys")
    }

    pub(super) fn mark(&self, name: &str) {
        self.used.borrow_mut().insert(Self::key(name).name);
    }

    pub(super) fn int(&self, name: &str) -> i64 {
        self.mark(name);
        self.s
            .int
            .get(name)
            .map_or_else(|| Self::key(name).int.expect("an integer key"), |v| v.value)
    }

    pub(super) fn float(&self, name: &str) -> f64 {
        self.mark(name);
        self.s
            .float
            .get(name)
            .map_or_else(|| Self::key(name).float.expect("a real key"), |v| v.value)
    }

    pub(super) fn str(&self, name: &str) -> String {
        self.mark(name);
        self.s.str.get(name).map_or_else(
            || Self::key(name).str.expect("a string key").to_string(),
            |v| v.value.clone(),
        )
    }

    /// Where `name` was set, if it was (its string slot first, as BookSim2 reads it first).
    pub(super) fn from(&self, name: &str) -> Option<From> {
        self.s
            .str
            .get(name)
            .map(|v| v.from)
            .or_else(|| self.s.int.get(name).map(|v| v.from))
            .or_else(|| self.s.float.get(name).map(|v| v.from))
    }

    /// The value of `name` as set (or its default), for messages.
    pub(super) fn shown(&self, name: &str) -> String {
        let k = Self::key(name);
        if let Some(v) = self.s.str.get(name) {
            return v.value.clone();
        }
        if let Some(v) = self.s.int.get(name) {
            return v.value.to_string();
        }
        if let Some(v) = self.s.float.get(name) {
            return v.value.to_string();
        }
        match (k.int, k.float, k.str) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(f), _) => f.to_string(),
            (_, _, Some(s)) => s.to_string(),
            _ => String::new(),
        }
    }

    /// Was `name` given a value other than its default?
    pub(super) fn changed(&self, name: &str) -> bool {
        let k = Self::key(name);
        self.s.int.get(name).is_some_and(|v| Some(v.value) != k.int)
            || self.s.float.get(name).is_some_and(|v| Some(v.value) != k.float)
            || self
                .s
                .str
                .get(name)
                .is_some_and(|v| Some(v.value.as_str()) != k.str)
    }

    pub(super) fn err(&self, name: &str, msg: impl Into<String>, hint: Option<&str>) -> MapError {
        MapError {
            key: Self::key(name).name,
            from: self.from(name),
            msg: msg.into(),
            hint: hint.map(str::to_string),
        }
    }

    pub(super) fn note(&self, name: &str, msg: &str) {
        let at = match self.from(name) {
            Some(From::Line(l)) => format!("{}:{l}", self.file),
            Some(From::CommandLine) => "command line".to_string(),
            None => self.file.to_string(),
        };
        self.notes
            .borrow_mut()
            .push(format!("{at}: {name} = {}: {msg}", self.shown(name)));
    }

    /// An integer key that must lie in `lo..=hi`.
    pub(super) fn int_in(&self, name: &str, lo: i64, hi: i64) -> R<i64> {
        let v = self.int(name);
        if v < lo || v > hi {
            return Err(self.err(name, format!("must be from {lo} to {hi}, not {v}"), None));
        }
        Ok(v)
    }
}

/// `hold_switch_for_packet`: BookSim2's iq router keeps a packet's crossbar connection from
/// its head to its tail (`_SWHoldEvaluate`), set up only after a flit that is not a tail
/// leaves with more of its packet behind it (`_SWAllocUpdate`). A packet of one flit never
/// sets it up, so where every packet is one flit (`mean` size 1: every size drawn is 1) it
/// cannot change the run; reef's switch does not hold connections, so otherwise it is refused.
fn hold_switch(c: &Cfg, mean: f64) -> R<()> {
    if c.int("hold_switch_for_packet") == 0 {
        return Ok(());
    }
    if mean == 1.0 {
        c.note(
            "hold_switch_for_packet",
            "every packet is one flit, so BookSim2 never holds the switch after a head (it holds \
             it for a packet's later flits): no effect on this run",
        );
        return Ok(());
    }
    Err(c.err(
        "hold_switch_for_packet",
        "reef's switch allocates every flit, and does not hold the crossbar for the rest of a \
         packet; it runs this key only with packets of one flit (packet_size = 1)",
        Some("hold_switch_for_packet = 0;"),
    ))
}

/// Translates a BookSim2 config into reef's TOML.
pub fn translate(s: &Store, file: &str) -> R<Translation> {
    let c = Cfg {
        s,
        file,
        used: RefCell::default(),
        notes: RefCell::default(),
    };
    let mut t = Toml::default();

    let sim_type = c.str("sim_type");
    if !matches!(sim_type.as_str(), "latency" | "throughput" | "batch") {
        return Err(c.err(
            "sim_type",
            format!("reef runs BookSim2's latency, throughput and batch simulations, not `{sim_type}`"),
            Some("sim_type = latency; (`reef sweep` finds the saturation throughput)"),
        ));
    }
    let throughput = sim_type == "throughput";
    let batch = sim_type == "batch";

    // The network.
    let topology = c.str("topology");
    let (net, k, n, nodes) = super::topology::topology(&c, &mut t, &topology)?;
    let torus = net == Topo::Cube { torus: true };

    // Time: the router pipeline and the channels.
    t.put(&c, "sim", "clock", quote("1 GHz"), &[]);
    // A torus's channels take 2 cycles with use_noc_latency (kncube.cpp); a fly's and a fat
    // tree's take 1 (fly.cpp, fattree.cpp), an anynet's their link weight, 1 unless given
    // (anynet.cpp: reef's fabric adds weight − 1 cycles to the channel below); a cmesh's and
    // a flatfly's their wire lengths with use_noc_latency (cmesh.cpp, flatfly_onchip.cpp:
    // reef's fabric adds length − 1 cycles, topology.noc_latency); a dragonfly's 10 cycles in
    // a group and 100 between (dragonfly.cpp's DRAGON_LATENCY, topology.noc_latency too).
    let noc = matches!(net, Topo::Cube { .. }) && c.int("use_noc_latency") == 1;
    let chan = if noc && torus { 2 } else { 1 };
    let routing = c.int_in("routing_delay", 0, 1000)?;
    let va = c.int_in("vc_alloc_delay", 1, 1000)?;
    let sa = c.int_in("sw_alloc_delay", 1, 1000)?;
    let st_prepare = c.int_in("st_prepare_delay", 0, 1000)?;
    let st_final = c.int_in("st_final_delay", 0, 1000)?;
    let credit = c.int_in("credit_delay", 0, 1000)?;
    let vcs = c.int_in("num_vcs", 1, 64)?;
    let buffer = c.int_in("vc_buf_size", 1, 65_535)?;
    let fast = twice_a_cycle(&c, [routing, va, sa, st_prepare, st_final])?;
    let pipe = [
        "routing_delay",
        "vc_alloc_delay",
        "sw_alloc_delay",
        "st_prepare_delay",
    ];
    let cube = matches!(net, Topo::Cube { .. });
    let wire: &[&'static str] = if cube {
        &["st_final_delay", "use_noc_latency"]
    } else {
        &["st_final_delay"]
    };
    let credit_keys: &[&'static str] = if cube {
        &["credit_delay", "use_noc_latency"]
    } else {
        &["credit_delay"]
    };
    t.put(&c, "channel", "flit_time", quote("1 cycle"), &[]);
    t.put(&c, "channel", "latency", cycles(st_final + chan - 1), wire);
    t.put(&c, "channel", "vcs", vcs.to_string(), &["num_vcs"]);
    t.put(&c, "channel", "buffer", buffer.to_string(), &["vc_buf_size"]);
    t.put(&c, "channel", "flow_control", quote("credit"), &[]);
    // The upstream router takes the credit in switch allocation, a cycle before the flit
    // leaves in reef's terms; the downstream one sends it back in the cycle of its own
    // switch allocation, a cycle before its flit leaves: the credit's `chan` cycles on the
    // wire, one more before the router reads it, and `credit_delay` (`_proc_credits`).
    t.put(
        &c,
        "channel",
        "credit_delay",
        cycles(credit + chan + 1),
        credit_keys,
    );
    // A node's channels have latency 1 whatever the network's.
    t.put(&c, "host_channel", "flit_time", quote("1 cycle"), &[]);
    t.put(&c, "host_channel", "latency", cycles(st_final), &wire[..1]);
    t.put(&c, "host_channel", "vcs", vcs.to_string(), &["num_vcs"]);
    t.put(&c, "host_channel", "buffer", buffer.to_string(), &["vc_buf_size"]);
    t.put(&c, "host_channel", "flow_control", quote("credit"), &[]);
    // A node reads a router's credit two cycles after the router's switch allocation
    // (`credit_delay` is the routers' own, `_proc_credits`), and injects against it
    // then: a cycle after the flit left in reef's terms (with `st_prepare_delay > 0`
    // the node is that much early, which reef's positive credit delay cannot say). With
    // an internal speed-up reef's switch allocates when BookSim2's does, and its credits
    // start back from the edge of that cycle (`switch::speedup`): 2 cycles.
    t.put(
        &c,
        "host_channel",
        "credit_delay",
        cycles(if fast { 2 } else { 1 }),
        &[],
    );
    // A node writes the credit of a flit the cycle it lands, after the network has read
    // its inputs: the router reads it two cycles later, uses it `credit_delay` after
    // that in switch allocation, and its flit leaves `st_prepare_delay` + 1 after (with
    // an internal speed-up: allocated at once, the host channel's 2 cycles making the
    // two).
    t.put(
        &c,
        "host",
        "credit_return",
        cycles(if fast { credit } else { credit + 2 + st_prepare }),
        &["credit_delay", "st_prepare_delay"],
    );

    // The router.
    let router = c.str("router");
    if router != "iq" {
        return Err(c.err(
            "router",
            format!("reef models BookSim2's input-queued router (iq), not `{router}`"),
            None,
        ));
    }
    let vct = c.int("vct") != 0;
    t.put(
        &c,
        "switch",
        "mode",
        quote(if vct { "cut-through" } else { "wormhole" }),
        &["vct"],
    );
    let tail_credit = c.int("wait_for_tail_credit") != 0;
    t.put(
        &c,
        "switch",
        "vc_release",
        quote(if tail_credit { "tail-credit" } else { "tail" }),
        &["wait_for_tail_credit"],
    );
    if fast {
        // Two steps a cycle, one a stage: routing (if any) and VC allocation take a step
        // each, and the head is allocated the switch in the step after; reef's switch
        // allocates when BookSim2's does (`switch::speedup`). A body flit is allocated in
        // the step it lands, VC allocation a step after a tail freed the VC.
        t.put(
            &c,
            "switch",
            "internal_speedup",
            "2".into(),
            &["internal_speedup"],
        );
        t.put(&c, "switch", "router_delay", half_cycles(routing + va), &pipe);
        t.put(&c, "switch", "flit_delay", cycles(0), &["sw_alloc_delay"]);
    } else {
        t.put(
            &c,
            "switch",
            "router_delay",
            cycles(routing + va + sa + st_prepare),
            &pipe,
        );
        // A body flit goes to switch allocation the cycle it lands (`_InputQueuing` before
        // `_SWAllocEvaluate`) and crosses after it: it stays sw_alloc_delay +
        // st_prepare_delay.
        t.put(
            &c,
            "switch",
            "flit_delay",
            cycles(sa + st_prepare),
            &["sw_alloc_delay", "st_prepare_delay"],
        );
    }
    let speedup = c.int_in("input_speedup", 1, 16)?;
    t.put(&c, "switch", "speedup", speedup.to_string(), &["input_speedup"]);
    // Each output takes up to output_speedup flits a cycle from the crossbar, one from the
    // inputs numbered r mod output_speedup for each r, into a queue that sends one a cycle
    // (`switch::speedup`).
    let out_speedup = c.int_in("output_speedup", 1, 16)?;
    if out_speedup > 1 {
        t.put(
            &c,
            "switch",
            "output_speedup",
            out_speedup.to_string(),
            &["output_speedup"],
        );
    }
    for (key, also) in [
        ("vc_allocator", ""),
        ("sw_allocator", ", wavefront, rr_wavefront, max_size, loa"),
    ] {
        let a = c.str(key);
        let separable = matches!(
            a.as_str(),
            "islip" | "separable_input_first" | "separable_output_first"
        );
        let dense =
            key == "sw_allocator" && matches!(a.as_str(), "wavefront" | "rr_wavefront" | "max_size" | "loa");
        if !(separable || dense) {
            return Err(c.err(
                key,
                format!("reef does not model BookSim2's `{a}` allocator as its {key}"),
                Some(&format!(
                    "reef models, as the {key}: islip, separable_input_first, \
                     separable_output_first{also}"
                )),
            ));
        }
    }
    // All three give each input VC the output VCs in turn (a pointer per input VC, moved
    // past the VC granted), and BookSim2's source takes its injection VCs in turn.
    t.put(&c, "switch", "vc_choice", quote("round-robin"), &["vc_allocator"]);
    // Once a cycle, one iteration: input-first, output-first, or iSLIP's one iteration
    // (output-first blind to the routing's priorities).
    let vc_alloc = match c.str("vc_allocator").as_str() {
        "separable_input_first" => "separable-input-first",
        "separable_output_first" => "separable-output-first",
        _ => "islip",
    };
    t.put(&c, "switch", "vc_allocator", quote(vc_alloc), &["vc_allocator"]);
    // An output VC freed by a tail in one cycle's switch allocation goes to a waiting head
    // in the next cycle's VC allocation, which then goes to switch allocation: the head
    // starts vc_alloc_delay + sw_alloc_delay cycles after the tail.
    t.put(
        &c,
        "switch",
        "vc_reuse_delay",
        if fast {
            half_cycles(va + sa)
        } else {
            cycles(va + sa)
        },
        &["vc_alloc_delay", "sw_alloc_delay"],
    );
    // The switch allocator, cycle by cycle, where VCs share a crossbar input.
    let sw_alloc = c.str("sw_allocator").replace('_', "-");
    t.put(&c, "switch", "allocator", quote(&sw_alloc), &["sw_allocator"]);
    // An input speed-up splits an input's VCs over that many crossbar inputs (VC v on
    // v mod speed-up), as reef's separable allocators do.

    // Routing.
    super::routing::routing(&c, &mut t, net, &topology, torus, vcs)?;

    // Traffic.
    pattern(&c, &mut t, cube.then_some((k, n)), nodes)?;
    let mean = sizes(&c, &mut t)?;
    hold_switch(&c, mean)?;
    let runs = if batch {
        super::traffic::batch(&c, &mut t)?
    } else {
        let rate = load(&c, &mut t, mean)?;
        injection(&c, &mut t, rate)?;
        sampling(&c, &mut t, throughput)?;
        1
    };
    // BookSim2 runs the whole simulation `sim_count` times and prints the mean of the
    // runs' averages; reef's runs are independent, each with its own seed.
    let count = c.int_in("sim_count", 1, 1000)?;
    let runs = runs * count;
    if runs > 1000 {
        return Err(c.err(
            "sim_count",
            format!("{runs} runs in all (batch_count × sim_count): reef runs at most 1000"),
            None,
        ));
    }
    let from: &[&str] = if batch {
        &["sim_count", "batch_count"]
    } else {
        &["sim_count"]
    };
    t.put(&c, "sim", "runs", runs.to_string(), from);
    if count > 1 {
        c.note(
            "sim_count",
            "reef's runs take seeds seed, seed + 1, … on a fresh network each; BookSim2's go on \
             with its generator, on the network the run before left (drained); the overall \
             averages are the mean of the runs' in both",
        );
    }
    let seed = c.str("seed");
    if !seed.is_empty() {
        return Err(c.err(
            "seed",
            format!("`{seed}`: reef runs are reproducible, so the seed is a number"),
            Some("seed = 1;"),
        ));
    }
    let seed = c.int("seed");
    if seed < 0 {
        return Err(c.err("seed", "a seed is a whole number from 0", None));
    }
    t.put(&c, "sim", "seed", seed.to_string(), &["seed"]);
    if c.int("include_queuing") != 1 {
        t.put(
            &c,
            "sim",
            "source_queueing",
            "false".to_string(),
            &["include_queuing"],
        );
    }

    leftovers(&c, batch)?;
    let notes = c.notes.into_inner();
    Ok(Translation {
        toml: t.render(file, &notes),
        notes,
        origins: t.origins,
    })
}

/// Measurement: BookSim2's sample periods and convergence test, as reef's
/// `sim.sampling = "booksim"` runs them (docs/booksim.md, "Sampling").
fn sampling(c: &Cfg, t: &mut Toml, throughput: bool) -> R<()> {
    let period = c.int_in("sample_period", 1, 100_000_000)?;
    let warm = c.int_in("warmup_periods", 0, 1_000_000)?;
    let max = c.int_in("max_samples", 1, 1_000_000)?;
    if warm >= max {
        return Err(c.err(
            "warmup_periods",
            format!("{warm} warm-up periods leave none to measure in max_samples = {max}"),
            Some("max_samples counts the warm-up periods too"),
        ));
    }
    let sampling = if throughput {
        "booksim-throughput"
    } else {
        "booksim"
    };
    t.put(c, "sim", "sampling", quote(sampling), &["sim_type"]);
    t.put(c, "sim", "sample_period", cycles(period), &["sample_period"]);
    t.put(c, "sim", "warmup_periods", warm.to_string(), &["warmup_periods"]);
    t.put(c, "sim", "max_samples", max.to_string(), &["max_samples"]);
    for key in THRESHOLD_KEYS {
        if c.s.str.get(*key).is_some_and(|v| !v.value.is_empty()) {
            return Err(c.err(
                key,
                "a list of thresholds is one per traffic class; reef runs one class",
                Some(&format!("{key} = 0.05;")),
            ));
        }
    }
    // A throughput simulation reads only the accepted throughput's thresholds (the others
    // are left to the leftover notes).
    if !throughput {
        let lt = c.float("latency_thres");
        let lt = if lt < 0.0 {
            quote("off")
        } else if lt.fract() == 0.0 && lt < 1e15 {
            cycles(lt as i64)
        } else {
            quote(&format!("{lt} cycles"))
        };
        t.put(c, "sim", "latency_thres", lt, &["latency_thres"]);
    }
    for key in &THRESHOLD_KEYS[1..] {
        if !throughput || key.starts_with("acc_") {
            t.put(c, "sim", key, real(c.float(key)), &[key]);
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "map_tests.rs"]
pub(super) mod tests;

/// `internal_speedup`: whether BookSim2's router runs its pipeline twice a cycle (2.0), as
/// reef's `switch.internal_speedup = 2` models it for a pipeline whose stages each take one
/// step (`routing_delay` 0 or 1, one cycle of VC and switch allocation, no
/// `st_prepare_delay`, a crossbar cycle or more), or once (1.0). Other speed-ups, and
/// pipelines whose stages would span steps, are refused with the line.
fn twice_a_cycle(c: &Cfg, [routing, va, sa, st_prepare, st_final]: [i64; 5]) -> R<bool> {
    let key = "internal_speedup";
    let s = c.float(key);
    if s == 1.0 {
        return Ok(false);
    }
    if s != 2.0 {
        return Err(c.err(
            key,
            format!("reef models an internal speed-up of 1.0 or 2.0, not {s}"),
            Some("BookSim2 runs a fractional speed-up's extra steps in some cycles only"),
        ));
    }
    let one_step = [
        ("routing_delay", routing <= 1),
        ("vc_alloc_delay", va == 1),
        ("sw_alloc_delay", sa == 1),
        ("st_prepare_delay", st_prepare == 0),
        ("st_final_delay", st_final >= 1),
    ];
    if let Some((name, _)) = one_step.iter().find(|(_, ok)| !ok) {
        return Err(c.err(
            name,
            format!(
                "with internal_speedup = 2.0 reef models the pipeline stages of one step \
                 each, not `{name} = {}`",
                c.shown(name)
            ),
            Some(
                "routing_delay 0 or 1, vc_alloc_delay = sw_alloc_delay = 1, \
                 st_prepare_delay = 0, st_final_delay >= 1",
            ),
        ));
    }
    for (name, default) in [
        ("input_speedup", 1),
        ("output_speedup", 1),
        ("wait_for_tail_credit", 0),
    ] {
        if c.int(name) != default {
            return Err(c.err(
                name,
                format!("reef does not model `{name}` with internal_speedup = 2.0"),
                Some("internal_speedup = 1.0, or this key at its default"),
            ));
        }
    }
    Ok(true)
}

/// `n` half cycles, as reef's time.
fn half_cycles(n: i64) -> String {
    if n % 2 == 0 {
        cycles(n / 2)
    } else {
        quote(&format!("{}.5 cycles", n / 2))
    }
}

//! Same config and seed, same JSON, bit for bit; the same whatever order equal-time events
//! are applied and components visited in; and the same with trains as flit by flit.

mod common;
use common::*;
use reef::engine::result::RunResult;

/// Networks that exercise every mechanism: VCs and datelines, adaptive selection, tables,
/// up*/down*, source routes, cut-through, store-and-forward, hot spots, weighted sizes.
fn configs() -> Vec<String> {
    let sim = "[sim]\nclock = \"1 GHz\"\nwarmup = \"2000 cycles\"\nmeasure = \"8000 cycles\"\nseed = 7\n";
    vec![
        format!(
            "{sim}[topology]\nkind = \"mesh\"\nk = [6, 6]\n[channel]\nvcs = 1\n[switch]\nrouter_delay = \"4 cycles\"\n[traffic]\nload = 0.3\npacket_size = 4\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"torus\"\nk = [6, 6]\n[channel]\nvcs = 4\nbuffer = 4\n[switch]\nrouter_delay = \"2 cycles\"\n[traffic]\npattern = \"tornado\"\ninjection = \"poisson\"\nload = 0.3\nsizes = [[2, 0.5], [9, 0.5]]\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"clos\"\nleaves = 6\nhosts_per_leaf = 4\nspines = 3\nlinks_per_pair = 2\n[channel]\nlatency = \"2 cycles\"\n[switch]\nselection = \"random\"\n[routing]\nadaptive = true\n[traffic]\npattern = \"hot-spot\"\nhot = [3]\nhot_fraction = 0.1\nload = 0.35\npacket_size = 8\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"fat-tree\"\nk = 3\nn = 3\n[switch]\nmode = \"cut-through\"\nselection = \"least-occupied\"\narbitration = \"oldest-first\"\n[routing]\nadaptive = true\n[traffic]\npattern = \"permutation\"\ninjection = \"on-off\"\non = \"50 cycles\"\noff = \"100 cycles\"\nload = 0.2\npacket_size = 5\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"file\"\nfile = \"ring4.txt\"\n[switch]\nmode = \"store-and-forward\"\n[routing]\nalgorithm = \"source\"\n[traffic]\nload = 0.15\npacket_size = 6\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"full\"\nswitches = 5\nhosts_per_switch = 3\n[channel]\nvcs = 2\nflit_time = \"2 cycles\"\ntail_time = \"1 cycle\"\n[switch]\nselection = \"round-robin\"\nspeedup = 1\n[traffic]\ninjection = \"periodic\"\nload = 0.25\npacket_size = 3\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"mesh\"\nk = [4, 4]\nhosts_per_switch = 2\n[channel]\nvcs = 3\n[host]\nsend_overhead = \"5 ns\"\nrecv_per_byte = \"1 ns\"\n[traffic]\npattern = \"bit-complement\"\nload = 0.2\npacket_size = 4\nflit_bytes = 2\n"
        ),
        // No router delay, adaptive: a head routed after a tail passed this instant sees the
        // output that tail freed.
        format!(
            "{sim}[topology]\nkind = \"clos\"\nleaves = 6\nhosts_per_leaf = 4\nspines = 3\n[switch]\nrouter_delay = \"0 cycles\"\n[routing]\nadaptive = true\n[traffic]\nload = 0.4\npacket_size = 4\n"
        ),
        // Long wires: trains overtaking flits still on the wire would reorder a buffer.
        format!(
            "{sim}[topology]\nkind = \"mesh\"\nk = [6, 6]\n[channel]\nlatency = \"6 cycles\"\n[switch]\nrouter_delay = \"1 cycle\"\n[traffic]\nload = 0.35\npacket_size = 4\n"
        ),
        format!(
            "{sim}[topology]\nkind = \"torus\"\nk = [5, 5]\n[channel]\nvcs = 2\nlatency = \"12 cycles\"\nbuffer = 16\n[switch]\nrouter_delay = \"0 cycles\"\n[traffic]\nload = 0.3\nsizes = [[3, 0.5], [7, 0.5]]\n"
        ),
        // IEEE 1355 DS links: token flow control (FCTs on the reverse channel), 10-bit
        // characters and a 4-bit EOP, STC104-like input and output FIFOs, grouped adaptive
        // routing. The clock is the character time.
        format!(
            "[sim]\nclock = \"10 MHz\"\nwarmup = \"200 cycles\"\nmeasure = \"1500 cycles\"\nseed = 7\n[topology]\nkind = \"clos\"\nleaves = 4\nhosts_per_leaf = 4\nspines = 2\nlinks_per_pair = 2\n[channel]\nrate = \"100 MBaud\"\nflit_bits = 10\ntail_bits = 4\nlatency = \"10 ns\"\nbuffer = 16\nflow_control = \"tokens\"\n[switch]\nrouter_delay = \"300 ns\"\noutput_buffer = 8\ncrossbar_time = \"20 ns\"\nselection = \"random\"\n[routing]\nadaptive = true\n[traffic]\ninjection = \"poisson\"\nload = 0.5\nsizes = [[6, 0.5], [40, 0.5]]\n"
        ),
    ]
}

fn same(a: &RunResult, b: &RunResult, what: &str, cfg: &str) {
    // The events count is how the run got there, not what it found.
    let (mut a, mut b) = (a.clone(), b.clone());
    a.events = 0;
    b.events = 0;
    assert!(json(&a) == json(&b), "{what} differ for\n{cfg}");
}

#[test]
fn same_seed_same_json() {
    for c in configs() {
        let s = spec(&c);
        let r = run(&s);
        assert!(
            r.deadlock.is_none() && r.delivered_measured_packets > 100,
            "no traffic in:\n{c}"
        );
        assert_eq!(json(&r), json(&run(&s)), "not reproducible:\n{c}");
    }
}

#[test]
fn another_seed_another_run() {
    let c = &configs()[0];
    let a = run(&spec(c));
    let b = run(&spec_with(c, &["sim.seed=8"]));
    assert_ne!(a.packet_latency_cycles.mean, b.packet_latency_cycles.mean);
}

#[test]
fn results_do_not_depend_on_event_order() {
    for c in configs() {
        let s = spec_with(&c, &["sim.check=true"]);
        same(&run(&s), &run_reversed(&s), "forward and reversed orders", &c);
    }
}

#[test]
fn trains_are_identical_to_flit_by_flit() {
    for c in configs() {
        let a = run(&spec_with(&c, &["sim.check=true"]));
        let b = run(&spec_with(&c, &["sim.check=true", "sim.trains=false"]));
        same(&a, &b, "trains and flit-by-flit", &c);
        assert!(a.events <= b.events);
    }
}

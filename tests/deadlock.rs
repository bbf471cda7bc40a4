//! Deadlock: the static channel-dependency check finds the cycle of a torus ring under
//! dimension-order routing with one VC and passes it with datelines; the run-time watchdog
//! stops a network that really deadlocks and names a cycle of channels that wait on each
//! other; it never fires on a network that is merely saturated.

mod common;
use common::*;
use reef::engine::Spec;
use reef::engine::result::RunResult;
use reef::engine::watchdog::Deadlock;
use reef::runner;

fn torus(vcs: u32, dateline: bool, load: f64) -> String {
    format!(
        r#"
[sim]
clock = "1 GHz"
warmup = "1000 cycles"
measure = "20000 cycles"
[topology]
kind = "torus"
k = [8, 8]
[channel]
vcs = {vcs}
buffer = 4
[switch]
router_delay = "1 cycle"
[routing]
dateline = {dateline}
[traffic]
load = {load}
packet_size = 8
"#
    )
}

#[test]
fn check_finds_the_ring_cycle_without_datelines() {
    let s = spec(&torus(1, false, 0.1));
    let rep = runner::check(&s);
    let cyc = rep
        .cycle
        .as_ref()
        .expect("a torus ring under DOR with one VC has a cycle");
    // The cycle is one ring of one dimension: 8 channels, each leading to the next.
    assert_eq!(cyc.len(), 8, "{}", rep.describe_cycle(&s.fabric).unwrap());
    for w in 0..cyc.len() {
        let a = &s.fabric.channels[cyc[w].channel.idx()];
        let b = &s.fabric.channels[cyc[(w + 1) % cyc.len()].channel.idx()];
        assert_eq!(a.dst, b.src, "the cycle must chain channel to channel");
    }
    assert_eq!(rep.failure_count, 0);
}

#[test]
fn check_passes_the_torus_with_datelines() {
    let rep = runner::check(&spec(&torus(2, true, 0.1)));
    assert!(rep.deadlock_free(), "{:?}", rep.cycle);
    assert_eq!(rep.failure_count, 0);
}

#[test]
fn check_passes_deadlock_free_routings() {
    let sim = "[sim]\nclock = \"1 GHz\"\n[traffic]\nload = 0.1\n";
    for topo in [
        "[topology]\nkind = \"mesh\"\nk = [5, 4]",
        "[topology]\nkind = \"clos\"\nleaves = 5\nhosts_per_leaf = 4\nspines = 3\n[routing]\nadaptive = true",
        "[topology]\nkind = \"fat-tree\"\nk = 4\nn = 3\n[routing]\nadaptive = true",
        "[topology]\nkind = \"full\"\nswitches = 6",
        "[topology]\nkind = \"file\"\nfile = \"ring4.txt\"\n[routing]\nalgorithm = \"updown\"\nadaptive = true",
        "[topology]\nkind = \"file\"\nfile = \"ring4.txt\"\n[routing]\nalgorithm = \"source\"",
    ] {
        let rep = runner::check(&spec(&format!("{sim}{topo}")));
        assert!(
            rep.deadlock_free() && rep.failure_count == 0,
            "{topo}: {:?} {:?}",
            rep.cycle,
            rep.failures
        );
    }
}

#[test]
fn minimal_routing_on_a_ring_has_a_cycle_and_updown_breaks_it() {
    let base = "[sim]\nclock = \"1 GHz\"\n[topology]\nkind = \"file\"\nfile = \"ring4.txt\"\n[traffic]\nload = 0.1\n";
    let min = runner::check(&spec(&format!(
        "{base}[routing]\nalgorithm = \"minimal\"\nadaptive = true\n"
    )));
    assert!(min.cycle.is_some());
    let ud = runner::check(&spec(&format!("{base}[routing]\nalgorithm = \"updown\"\n")));
    assert!(ud.deadlock_free());
}

#[test]
fn unreachable_destinations_are_reported() {
    let s = spec(
        "[sim]\nclock = \"1 GHz\"\n[topology]\nkind = \"file\"\nfile = \"oneway.txt\"\n[traffic]\nload = 0.1\n",
    );
    let rep = runner::check(&s);
    assert!(rep.failure_count > 0);
    assert!(
        rep.failures.iter().any(|f| f.0 == 0 && f.1 == 1),
        "{:?}",
        rep.failures
    );
}

/// The run's deadlock, checked to name a cycle of at least two channels, each waiting on the
/// next.
fn deadlock_cycle<'r>(s: &Spec, r: &'r RunResult) -> &'r Deadlock {
    let d = r.deadlock.as_ref().expect("this network deadlocks");
    assert!(d.cycle_ids.len() >= 2, "{:?}", d.cycle);
    for w in 0..d.cycle_ids.len() {
        let a = &s.fabric.channels[d.cycle_ids[w].channel.idx()];
        let b = &s.fabric.channels[d.cycle_ids[(w + 1) % d.cycle_ids.len()].channel.idx()];
        assert_eq!(a.dst, b.src, "each channel waits on the next: {:?}", d.cycle);
    }
    d
}

#[test]
fn watchdog_stops_a_real_deadlock_and_names_the_cycle() {
    let s = spec(&torus(1, false, 0.5));
    let r = run(&s);
    let d = deadlock_cycle(&s, &r);
    assert!(r.saturated);
    // And it stops well before the end of the window, without hanging.
    assert!(d.time < 21_000_000);
}

#[test]
fn watchdog_never_fires_on_a_saturated_deadlock_free_network() {
    // A short watchdog makes it look often, at a load far past saturation.
    let s = spec_with(&torus(2, true, 0.9), &["sim.watchdog=\"200 cycles\""]);
    let r = run(&s);
    assert!(r.deadlock.is_none());
    assert!(r.saturated);
}

#[test]
fn a_head_waits_only_for_the_output_it_selected() {
    // Adaptive routing with first-free selection: a head that found an output free asks for
    // it alone, and waits for it even when another output it could have taken frees up. The
    // watchdog once counted those other outputs as a way out, found no waiting cycle in a
    // network that could never move again, and stopped with an engine invariant (found by
    // fuzzing).
    let s = spec(
        "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"2000 cycles\"\n[topology]\nkind = \"mesh\"\nk = [2, 2, 2, 2]\nhosts_per_switch = 3\n[channel]\nbuffer = 64\n[switch]\nmode = \"cut-through\"\n[routing]\nalgorithm = \"minimal\"\nadaptive = true\n[traffic]\npacket_size = 1\nload = 0.8\n",
    );
    let r = run(&s);
    deadlock_cycle(&s, &r);
}

#[test]
fn a_deadlocked_run_reports_the_same_with_and_without_trains() {
    // Trains skip events, so the instant of the last event and of the watchdog's look differ
    // from flit by flit. A network that stops for good is dated by its last flit's landing
    // (it was dated by the last event: 242 ns with trains, 248 without), and a watchdog stop
    // counts nothing placed at the instant it did not process (a train's flits landing then
    // were counted: 4 flits more delivered). Found by fuzzing.
    let settle = ["sim.measure=\"2000 cycles\"", "sim.warmup=\"500 cycles\""];
    let cases = [
        // Stops for good: every flit waits and no event is left.
        "[topology]\nkind = \"ring\"\nk = 5\n[channel]\nlatency = \"100 ns\"\n[switch]\n\
         mode = \"cut-through\"\n[traffic]\npattern = \"tornado\"\ninjection = \"periodic\"\n\
         packet_size = 8\nload = 0.15\n",
        // Deadlocked while hosts that send to themselves keep going: the watchdog stops it.
        "[topology]\nkind = \"ring\"\nk = 4\nhosts_per_switch = 2\n[channel]\nvcs = 1\nbuffer = 2\n\
         [traffic]\npattern = \"bit-reverse\"\npacket_size = 1\nload = 1.0\n",
    ];
    for text in cases {
        let run_with = |trains: &str| {
            let mut r = run(&spec_with(text, &[settle[0], settle[1], trains]));
            assert!(r.deadlock.is_some(), "no deadlock in\n{text}");
            r.events = 0;
            json(&r)
        };
        assert_eq!(
            run_with("sim.trains=true"),
            run_with("sim.trains=false"),
            "{text}"
        );
    }
}

#[test]
fn a_deadlock_ends_the_measurement_window() {
    // The rates are over the window up to the deadlock: sources create nothing after the
    // run stops. (They were counted to the configured window's end, 1.6 million packets
    // "created" in a run that stopped at 280 ns.)
    let cycle = 1000.0;
    let s = spec_with(&torus(1, false, 0.5), &["sim.warmup=\"0 cycles\""]);
    let r = run(&s);
    let d = deadlock_cycle(&s, &r);
    assert!((d.time as f64) < 20_000.0 * cycle, "{}", d.time);
    assert_eq!(r.window_cycles, d.time as f64 / cycle);
    let offered = r
        .offered_flits_per_node_cycle
        .expect("a window, so an offered load");
    assert!(
        (offered - 0.5).abs() < 0.1,
        "offered {offered} over {} cycles",
        r.window_cycles
    );
    // Packets created in the window: what the sources offered in it, 8 flits each.
    let created = offered * r.hosts as f64 * r.window_cycles / 8.0;
    assert!(
        (created - r.measured_packets as f64).abs() < 1e-6 * created,
        "{created}"
    );
    assert!(r.accepted_ci95.is_none());

    // Before the window began: nothing measured, nothing offered, no rate divided by zero.
    let s = spec_with(&torus(1, false, 0.5), &["sim.warmup=\"5000 cycles\""]);
    let r = run(&s);
    let d = deadlock_cycle(&s, &r);
    assert!((d.time as f64) < 5_000.0 * cycle, "{}", d.time);
    assert_eq!(r.window_cycles, 0.0);
    assert_eq!(r.offered_flits_per_node_cycle, None);
    assert_eq!(r.measured_packets, 0);
    assert_eq!(r.accepted_flits_per_node_cycle, 0.0);
    assert!(r.channel_utilization.iter().all(|u| u.utilization == 0.0));
    let text = reef::report::summary(&r);
    assert!(
        text.contains("deadlocked before the measurement window"),
        "{text}"
    );
}

//! Throughput against arithmetic: channel load under uniform traffic, the saturation of an
//! 8×8 mesh (bounded by the bisection: 0.5 flits/cycle/host), and accepted = offered below
//! saturation.

mod common;
use common::*;

fn mesh8(vcs: u32, extra: &str) -> String {
    format!(
        r#"
[sim]
clock = "1 GHz"
warmup = "5000 cycles"
measure = "20000 cycles"
[topology]
kind = "mesh"
k = [8, 8]
[channel]
vcs = {vcs}
buffer = 8
[switch]
router_delay = "4 cycles"
[traffic]
packet_size = 4
{extra}
"#
    )
}

/// Mean Manhattan distance between distinct switches of a k×k mesh.
fn mean_distance(k: i64) -> f64 {
    let n = k * k;
    let mut sum = 0;
    for a in 0..n {
        for b in 0..n {
            sum += (a % k - b % k).abs() + (a / k - b / k).abs();
        }
    }
    sum as f64 / (n * (n - 1)) as f64
}

#[test]
fn channel_load_matches_the_average_distance() {
    // Each flit crosses mean_distance switch-to-switch channels; 224 such channels.
    let load = 0.1;
    let r = run(&spec(&mesh8(1, &format!("load = {load}"))));
    let expected = load * 64.0 * mean_distance(8) / 224.0;
    let rel = (r.network_utilization_mean - expected).abs() / expected;
    assert!(
        rel < 0.02,
        "mean channel use {} vs {expected}",
        r.network_utilization_mean
    );
    assert!(
        (r.mean_hops - (mean_distance(8) + 1.0)).abs() < 0.05,
        "hops {}",
        r.mean_hops
    );
    let off = r.offered_flits_per_node_cycle.unwrap();
    assert!(
        (r.accepted_flits_per_node_cycle - off).abs() < 0.01 * off,
        "accepted {} offered {off}",
        r.accepted_flits_per_node_cycle
    );
    assert!(!r.saturated);
}

#[test]
fn eight_vcs_saturate_between_035_and_05() {
    let r = run(&spec(&mesh8(8, "injection = \"backlogged\"")));
    let t = r.accepted_flits_per_node_cycle;
    eprintln!("8x8 mesh, DOR, 8 VCs × 8 flits: saturation throughput {t:.4} flits/cycle/host");
    assert!((0.35..=0.5).contains(&t), "saturation {t}");
    assert!(r.network_utilization_max <= 1.0 + 1e-9);
}

#[test]
fn one_vc_wormhole_saturates_well_below() {
    let one = run(&spec(&mesh8(1, "injection = \"backlogged\""))).accepted_flits_per_node_cycle;
    let eight = run(&spec(&mesh8(8, "injection = \"backlogged\""))).accepted_flits_per_node_cycle;
    eprintln!("8x8 mesh, DOR: saturation with 1 VC {one:.4}, with 8 VCs {eight:.4} flits/cycle/host");
    assert!(one < 0.8 * eight, "1 VC {one} vs 8 VCs {eight}");
    assert!(one > 0.1, "1 VC {one}");
}

#[test]
fn a_run_past_saturation_still_reports_and_is_marked() {
    let r = run(&spec(&mesh8(1, "load = 0.45")));
    assert!(r.saturated, "{:?}", r.saturation_reason);
    // What was offered is what the sources created, however long it queued.
    let off = r.offered_flits_per_node_cycle.unwrap();
    assert!((off - 0.45).abs() < 0.01, "offered {off}");
    assert_eq!(r.measured_packets as f64, (off * 64.0 * 20000.0 / 4.0).round());
    assert!(r.accepted_flits_per_node_cycle > 0.1);
    assert!(r.packet_latency_cycles.count > 0);
}

#[test]
fn a_few_packets_at_low_load_are_not_called_saturated() {
    // A 2,000-cycle window at 1 % load carries a handful of 16-flit packets; one still in
    // flight at the window's edge is a large share of them, so accepted fell below 95 % of
    // offered and the run was flagged saturated (and a sweep stopped there).
    let mut flagged = 0;
    for seed in 1..=8 {
        let text = format!(
            "[sim]\nwarmup = \"500 cycles\"\nmeasure = \"2000 cycles\"\nseed = {seed}\n\
             [topology]\nkind = \"ring\"\nk = 4\n[channel]\nlatency = \"100 ns\"\n\
             [traffic]\ninjection = \"poisson\"\npacket_size = 16\nload = 0.01\n"
        );
        let r = run(&spec(&text));
        assert!(r.delivered_measured_packets == r.measured_packets, "seed {seed}");
        flagged += r.saturated as u32;
    }
    assert_eq!(flagged, 0);
}

/// A k-ary n-tree under destination-mod-k routing spreads uniform traffic over every
/// channel: a host's traffic comes down one path, so no switch-to-switch channel carries more
/// than one host's share of the load — at most (N − k)/(N − 1) × load, the traffic to one
/// host from outside its leaf (and up-links likewise). Up-links chosen by the destination's
/// leaf instead sent a whole leaf's traffic down one link: k times that.
#[test]
fn a_fat_tree_spreads_uniform_traffic_over_its_links() {
    let load = 0.1;
    let spec = spec(&format!(
        r#"
[sim]
clock = "1 GHz"
warmup = "5000 cycles"
measure = "40000 cycles"
[topology]
kind = "fat-tree"
k = 4
n = 3
[channel]
buffer = 8
[switch]
router_delay = "4 cycles"
[traffic]
packet_size = 4
load = {load}
"#
    ));
    let r = run(&spec);
    assert!(!r.saturated, "{:?}", r.saturation_reason);
    let (n, k) = (64.0, 4.0);
    let bound = (n - k) / (n - 1.0) * load;
    // (Bernoulli sources over 40,000 cycles: a channel's use is its mean within a few %.)
    assert!(
        r.network_utilization_max < 1.1 * bound,
        "busiest channel {} at {}, bound {bound}",
        r.busiest_channel.as_deref().unwrap_or("?"),
        r.network_utilization_max
    );
    assert!(
        r.network_utilization_mean > 0.5 * bound,
        "{}",
        r.network_utilization_mean
    );
}

//! ATOLL against arithmetic and its own spec: the chip's fall-through (27 core cycles a
//! hop) and the link rate (a byte a cycle at 300 MHz, edges at ⌊n·10⁴/3⌋ ps) on lone
//! messages; ping-pong and streaming on two chips against hand-computed zero-load figures;
//! routing strings consumed hop by hop on random tori with failed links and random
//! irregular wirings (every pair delivered, the set free of cyclic dependencies); bad
//! configs; and the quick reproduction.

mod common;
use common::*;
use proptest::prelude::*;
use reef::routing::cdg;
use reef::systems::{Options, reproduce};
use reef::workload::message::{Kind, MessageSpec, run_size};

/// The n-th edge of the 300 MHz core clock [ps].
fn edge(n: u64) -> u64 {
    n * 10_000 / 3
}

/// A config of an ATOLL network; `extra` adds sections.
fn atoll(network: &str, extra: &str) -> String {
    format!("[topology]\nkind = \"atoll\"\n{network}\n{extra}")
}

/// A message benchmark on `text`'s network with an ideal host (no costs, no framing, a
/// message in one packet): the run of one size.
fn bench(
    text: &str,
    kind: Kind,
    pair: (u32, u32),
    size: u64,
    count: u32,
) -> reef::workload::message::SizeResult {
    let spec = spec(text);
    let m = MessageSpec {
        kind,
        pair,
        sizes: vec![size],
        count,
        host: reef::nic::hostif::HostIf::default(),
    };
    let mut s = spec.clone();
    s.params.measure = reef::time::MAX_SPAN;
    s.params.warmup = 0;
    s.params.drain_limit = 0;
    run_size(&s, &m, size, count).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_hop_is_27_core_cycles_and_a_byte_one() {
    // A 2 × 8 grid: host k of the first row is k hops from host 0, by minimal routes.
    let text = atoll(
        "network = \"grid\"\nk = [8, 2]",
        "[traffic]\npattern = \"none\"\n",
    );
    for k in 1..=7u64 {
        for size in [1u64, 3000] {
            let r = bench(&text, Kind::PingPong, (0, k as u32), size, 2);
            // One way: the host port's byte into the chip and 26 cycles there, 27 cycles for
            // each of the k hops, the byte out to the host port: the head in 27(k+1) + 1
            // cycles, the routing string used up on the way, the rest of the message
            // behind it a byte a cycle. The reply leaves as the message is in.
            let one_way = 27 * (k + 1) + 1 + (size - 1);
            assert_eq!(r.latency_min_ps, edge(2 * one_way) / 2, "{k} hops, {size} bytes");
            assert_eq!(r.latency_max_ps, r.latency_min_ps);
        }
    }
}

#[test]
fn streaming_at_the_link_rate_on_two_chips() {
    // Two chips, ideal hosts: messages of 30,000 bytes back to back, each a packet behind
    // a two-byte routing string. The first is in 30,054 cycles, as one way above. Each next
    // one is 30,026 cycles later: the first chip sends on the 30,001 bytes a packet has
    // left once it has used up its routing byte, and the next head, at the front of the
    // FIFO as that packet's tail starts out, leaves 26 cycles after (25 idle ones).
    let text = atoll("network = \"full\"\nnodes = 2", "[traffic]\npattern = \"none\"\n");
    for n in [1u64, 5] {
        let r = bench(&text, Kind::Streaming, (0, 1), 30_000, n as u32);
        let cycles = 30_054 + 30_026 * (n - 1);
        let want = 30_000.0 * n as f64 / (edge(cycles) as f64 * 1e-12);
        assert!(
            (r.bandwidth_bytes_per_s - want).abs() < 1e-6 * want,
            "{n} messages: {} against {want}",
            r.bandwidth_bytes_per_s
        );
    }
}

#[test]
fn host_costs_against_arithmetic_on_two_chips() {
    // A [nic] with a PIO below 64 bytes and DMA above, framing and overheads; 1 byte and 4
    // KB ping-pongs, computed stage by stage.
    let nic = "[nic]\nmtu = 1024\nframing = 8\nsend_overhead = \"1 us\"\npio_max = 64\n\
               pio_rate = \"500 MB/s\"\ndma_latency = \"1 us\"\ndma_rate = \"250 MB/s\"\n\
               rx_rate = \"500 MB/s\"\nrecv_overhead = \"2 us\"\n";
    let text = atoll(
        "network = \"full\"\nnodes = 2",
        &format!(
            "[traffic]\nkind = \"ping-pong\"\npair = [0, 1]\nmessage_sizes = [1, 4096]\nmessages = 3\n{nic}"
        ),
    );
    let spec = spec(&text);
    let m = spec.messages.clone().unwrap();
    let r = reef::workload::message::run(&spec, &m, &mut |_| {}).unwrap();
    // 1 byte by PIO, one way from the send call at `t`: 1 us of overhead, then the packet
    // (2 routing bytes, 8 of framing, the payload byte, written 2 ns after the overhead,
    // long before its turn) leaves at the next edge; its head is at the far host port 55
    // cycles later (27 + 27 + 1, its two routing bytes used up) and its last byte 8 after
    // that; written into memory 2 ns later; taken 2 us after that.
    let leg = |t: u64| {
        let ready = t + 1_000_000;
        let start = (3 * ready).div_ceil(10_000);
        edge(start + 55 + 8) + 2_000 + 2_000_000
    };
    assert_eq!(r[0].latency_min_ps, leg(leg(0)) / 2, "1 byte: {r:?}");
    // 4 KB by DMA: four packets of 1 KB, fetched at 4 ns a byte from 1 us after the
    // overhead and sent as fetched (slower than the link), so the last byte is fetched
    // 1 + 1 + 16.384 us after the send call and goes straight through: 3 cycles to the
    // far host port (host port, link, host port), 2 ns into memory, 2 us to be taken.
    let one_way = 1_000_000 + 1_000_000 + 4096 * 4_000 + 2_000 + 2_000_000;
    let got = r[1].latency_min_ps;
    assert!(
        got >= one_way + edge(3) - 4_000 && got <= one_way + edge(5),
        "4 KB: {got} against {} (+ 3 to 5 cycles)",
        one_way
    );
}

/// A random ATOLL wiring: a torus or grid with failed links that leave it connected, or
/// a random irregular one from a file.
#[derive(Debug, Clone)]
struct Wiring {
    text: String,
}

/// Whether chips `0..n` are all connected by `links` (pairs) without those in `gone`.
fn connected(n: u32, links: &[(u32, u32)], gone: &[(u32, u32)]) -> bool {
    let mut seen = vec![false; n as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    while let Some(a) = stack.pop() {
        for &(x, y) in links {
            if gone.contains(&(x, y)) || gone.contains(&(y, x)) {
                continue;
            }
            let b = if x == a {
                y
            } else if y == a {
                x
            } else {
                continue;
            };
            if !seen[b as usize] {
                seen[b as usize] = true;
                stack.push(b);
            }
        }
    }
    seen.iter().all(|&s| s)
}

fn wiring() -> impl Strategy<Value = Wiring> {
    prop_oneof![
        (
            3u32..8,
            2u32..7,
            any::<bool>(),
            prop::collection::vec((0u32..64, 0u32..2), 0..6)
        )
            .prop_map(|(kx, ky, torus, fails)| {
                let n = kx * ky;
                let mut links = Vec::new();
                for y in 0..ky {
                    for x in 0..kx {
                        if x + 1 < kx || torus {
                            links.push((x + y * kx, (x + 1) % kx + y * kx));
                        }
                        if y + 1 < ky || torus {
                            links.push((x + y * kx, x + ((y + 1) % ky) * kx));
                        }
                    }
                }
                // Failures that keep every chip reachable (a failed link takes out every
                // cable between its two chips).
                let mut failed: Vec<(u32, u32)> = Vec::new();
                for (a, d) in fails {
                    let (x, y) = (a % n % kx, a % n / kx);
                    let Some(&l) = links.iter().find(|l| {
                        let (fx, fy) = (l.0 % kx, l.0 / kx);
                        (fx, fy) == (x, y) && (l.1 == (x + 1) % kx + y * kx) == (d == 0)
                    }) else {
                        continue;
                    };
                    if l.0 == l.1 || failed.iter().any(|&(p, q)| (p, q) == l || (q, p) == l) {
                        continue;
                    }
                    let mut with = failed.clone();
                    with.push(l);
                    if connected(n, &links, &with) {
                        failed = with;
                    }
                }
                let list: Vec<String> = failed.iter().map(|(a, b)| format!("[{a}, {b}]")).collect();
                Wiring {
                    text: format!(
                        "network = \"{}\"\nk = [{kx}, {ky}]\nfailed = [{}]",
                        if torus { "torus" } else { "grid" },
                        list.join(", ")
                    ),
                }
            }),
        (4u32..14, prop::collection::vec((0u32..100, 0u32..100), 0..20)).prop_map(|(n, extra)| {
            // A random tree (each chip to an earlier one) and random extra cables, at most four
            // a chip, link ports 0–3, one host each on port 4.
            let mut deg = vec![0u16; n as usize];
            let mut lines = Vec::new();
            let mut linked = std::collections::BTreeSet::new();
            let mut link = |a: u32, b: u32, deg: &mut Vec<u16>, lines: &mut Vec<String>| {
                if a != b && deg[a as usize] < 4 && deg[b as usize] < 4 && linked.insert((a.min(b), a.max(b)))
                {
                    lines.push(format!("s{a}:{} s{b}:{}", deg[a as usize], deg[b as usize]));
                    deg[a as usize] += 1;
                    deg[b as usize] += 1;
                }
            };
            for c in 1..n {
                // The earliest chip with a free port keeps the tree connected.
                let p = (0..c).rev().find(|&p| deg[p as usize] < 3).unwrap_or(0);
                link(c, p, &mut deg, &mut lines);
            }
            for (a, b) in extra {
                link(a % n, b % n, &mut deg, &mut lines);
            }
            for c in 0..n {
                lines.push(format!("h{c} s{c}:4"));
            }
            Wiring {
                text: format!("network = \"file\"\nfile = \"{}\"", write_file(&lines.join("\n"))),
            }
        }),
    ]
}

/// Writes a topology file into the system's temporary folder (named by its contents, so
/// parallel cases do not clash) and gives its path.
fn write_file(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    let dir = std::env::temp_dir().join("reef-atoll-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("random-{:016x}.txt", h.finish()));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases("REEF_ATOLL_CASES", 48), ..ProptestConfig::default() })]

    /// On any wiring the placed routing strings reach every host, their channel
    /// dependencies have no cycle, and a run delivers every packet, each chip using up its
    /// byte of the string.
    #[test]
    fn routing_strings_reach_every_pair_without_deadlock(w in wiring(), seed in 0u64..1000) {
        let text = atoll(
            &w.text,
            &format!(
                "[sim]\nwarmup = \"2 us\"\nmeasure = \"20 us\"\ndrain = \"all\"\ncheck = true\nseed = {seed}\n\
                 [traffic]\nload = 0.02\npacket_size = 40\n"
            ),
        );
        let s = spec(&text);
        let rep = cdg::check(&s.fabric, &s.routing);
        prop_assert_eq!(rep.failure_count, 0, "unroutable pairs in\n{}", text);
        prop_assert!(rep.describe_cycle(&s.fabric).is_none(), "a cycle in\n{}", text);
        let r = run(&s);
        prop_assert!(r.deadlock.is_none(), "deadlock in\n{}", text);
        prop_assert_eq!(r.packets_delivered, r.packets_injected, "undelivered packets in\n{}", text);
        // Each packet arrives with its 40 flits: its routing string is gone.
        prop_assert_eq!(r.flits_delivered, 40 * r.packets_delivered);
    }
}

#[test]
fn bad_atoll_configs_say_what_is_wrong() {
    let err = |net: &str, extra: &str| {
        reef::config::load_str(
            "bad.toml",
            &atoll(net, &format!("[traffic]\nload = 0.1\n{extra}")),
            std::path::Path::new("tests/data"),
            &[],
        )
        .unwrap_err()
        .to_string()
    };
    let e = err("network = \"torus\"\nk = [1, 8]", "");
    assert!(e.contains("at least 2 chips") && e.contains("bad.toml:4"), "{e}");
    let route = |ports: &str| format!("[routing]\n[[routing.route]]\nsrc = 0\ndst = 1\nports = {ports}\n");
    let e = err("network = \"torus\"\nk = [4, 4]", &route("[9, 4]"));
    assert!(e.contains("port 9 of s0 leads nowhere"), "{e}");
    let e = err("network = \"torus\"\nk = [4, 4]", &route("[0]"));
    assert!(e.contains("ends at s1, not h1"), "{e}");
    let e = err("network = \"torus\"\nk = [4, 4]", &route("[0, 4, 4]"));
    assert!(e.contains("reaches host 1 after 2 ports"), "{e}");
    let e = err("network = \"torus\"\nk = [4, 4]\nfailed = [[0, 5]]", "");
    assert!(e.contains("not linked"), "{e}");
    let e = err("network = \"full\"\nnodes = 6", "");
    assert!(e.contains("2 to 5"), "{e}");
    let e = err(
        "network = \"torus\"\nk = [4, 4]",
        "[switch]\nrouter_delay = \"2 cycles\"\n",
    );
    assert!(e.contains("switches in its chips"), "{e}");
    let e = err(
        "network = \"torus\"\nk = [4, 4]",
        "[routing]\nin_packet = false\n",
    );
    assert!(e.contains("reads the routing string"), "{e}");
    let e = err("network = \"ring\"", "");
    assert!(e.contains("unknown ATOLL network"), "{e}");
}

#[test]
fn quick_reproduction_meets_its_calibration_and_the_hardware() {
    let rep = reproduce(
        "atoll",
        &Options {
            quick: true,
            seed: 1,
            progress: false,
        },
    )
    .unwrap();
    let find = |exp: &str, case: &[(&str, u64)], metric: &str| {
        rep.records
            .iter()
            .find(|r| {
                r.experiment == exp
                    && r.metric == metric
                    && case
                        .iter()
                        .all(|(k, v)| r.case.get(*k) == Some(&serde_json::json!(v)))
            })
            .unwrap_or_else(|| panic!("no {exp} {case:?} {metric}"))
    };
    // The calibrated figures come out within 5 %.
    for (exp, case, metric) in [
        (
            "ping-pong",
            &[("hops", 1), ("size_bytes", 1)][..],
            "latency_min_us",
        ),
        ("streaming-summary", &[("hops", 1)][..], "peak_MBps"),
    ] {
        let r = find(exp, case, metric);
        assert!(r.deviation().unwrap().abs() < 0.05, "{r:?}");
    }
    // The average start-up latency comes from the noise model, not the calibration.
    let avg = find("ping-pong", &[("hops", 1), ("size_bytes", 1)], "latency_avg_us");
    assert!(
        avg.simulated >= find("ping-pong", &[("hops", 1), ("size_bytes", 1)], "latency_min_us").simulated
    );
    // A hop is 90 ns of hardware for small messages.
    for size in [1, 8, 64] {
        let r = find("hop-cost", &[("size_bytes", size)], "extra_7hop_over_1hop_ns");
        assert!((r.simulated - 540.0).abs() < 1.0, "{r:?}");
    }
    // Every experiment of the spec's table is there, with the names.
    for (exp, metrics) in [
        ("streaming", &["bandwidth_MBps"][..]),
        (
            "streaming-summary",
            &[
                "peak_MBps",
                "peak_size_bytes",
                "half_peak_size_bytes",
                "frac_of_peak_at_4KB",
            ][..],
        ),
        (
            "ping-pong",
            &["latency_min_us", "latency_avg_us", "latency_max_us"][..],
        ),
        ("hop-cost", &["extra_7hop_over_1hop_ns"][..]),
        (
            "latency-variation",
            &[
                "avg_us",
                "min_us",
                "max_us",
                "count_over_best_plus_10pct",
                "count_over_5us",
                "count_over_10us",
            ][..],
        ),
        (
            "torus-scaling",
            &[
                "diameter_hops",
                "worst_startup_latency_us",
                "mean_extra_hops_deadlock_free",
                "saturation_per_node_MBps",
            ][..],
        ),
    ] {
        for m in metrics {
            assert!(
                rep.records.iter().any(|r| r.experiment == exp && r.metric == *m),
                "{exp} {m}"
            );
        }
    }
    // The torus's diameter is k, and the deadlock-free set costs extra hops from 5×5 on.
    assert_eq!(
        find("torus-scaling", &[("nodes", 256)], "diameter_hops").simulated,
        16.0
    );
    assert_eq!(
        find("torus-scaling", &[("nodes", 16)], "mean_extra_hops_deadlock_free").simulated,
        0.0
    );
    assert!(
        find(
            "torus-scaling",
            &[("nodes", 256)],
            "mean_extra_hops_deadlock_free"
        )
        .simulated
            > 0.0
    );
    // Bandwidth grows with size to the peak.
    let bw: Vec<f64> = rep
        .records
        .iter()
        .filter(|r| r.experiment == "streaming" && r.case["hops"] == 1)
        .map(|r| r.simulated)
        .collect();
    assert!(bw.windows(2).all(|w| w[1] >= w[0]), "{bw:?}");
    assert!(
        rep.plots
            .iter()
            .any(|p| p.file == "streaming.svg" && p.text.contains("<svg"))
    );
}

/// The example's host interface is the one the reproduction calibrates.
#[test]
fn the_example_nic_is_the_calibrated_one() {
    let s = reef::config::load(std::path::Path::new("examples/atoll-pingpong.toml"), &[]).unwrap();
    let b = reef::systems::atoll::experiments::Bench::new().unwrap();
    let cal = reef::systems::atoll::calibrate::calibrate(&b.net, b.one).unwrap();
    assert_eq!(s.messages.unwrap().host, cal.host(true));
    // And its pair is the reproduction's 7-hop pair.
    assert_eq!(b.seven, (0, 28));
}

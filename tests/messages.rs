//! Message benchmarks (ping-pong, streaming) on fabrics other than ATOLL's: a mesh and a
//! Macramé Clos, from their configs, against what their links allow.

mod common;
use common::*;

fn run_messages(text: &str) -> reef::report::messages::MessageRun {
    reef::runner::run_messages(&spec(text), false).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn streaming_on_a_mesh_approaches_its_link_rate() {
    // 4-byte flits at 1 GHz: 4 GB/s a link. Messages of 4 KB in 64-byte packets, back to
    // back from an ideal host: each packet's head waits the router delay at each of the 15
    // switches, but behind the first the packets pipeline.
    let r = run_messages(
        "[topology]\nkind = \"mesh\"\nk = [8, 8]\n[traffic]\nkind = \"streaming\"\npair = [0, 63]\n\
         message_sizes = [64, 4096]\nmessages = 20\nflit_bytes = 4\n[nic]\nmtu = 64\n",
    );
    assert_eq!(r.hops, (14, 14));
    let bw = |i: usize| r.sizes[i].bandwidth_bytes_per_s / 1e6;
    assert!(bw(1) <= 4000.0 && bw(1) > 0.95 * 4000.0, "{}", bw(1));
    // A lone 64-byte packet a message pays its way through the mesh for each: slower.
    assert!(bw(0) < bw(1));
}

#[test]
fn ping_pong_on_a_macrame_clos() {
    // DS links move a data character in 10 ns and the STC104 routes a header in 1 µs: a
    // 1 KB message (64-byte packets with a header byte and an end-of-packet) takes at least
    // 1024 × 10 ns on the wire, and the ping-pong rate stays below the link's 10 MB/s.
    let r = run_messages(
        "[topology]\nkind = \"macrame\"\nnetwork = \"clos\"\nnodes = 64\n[traffic]\n\
         kind = \"ping-pong\"\npair = [0, 63]\nmessage_sizes = [1, 64, 1024]\nmessages = 5\n\
         [nic]\nmtu = 64\nframing = 2\n",
    );
    assert_eq!(r.hops.0, r.hops.1);
    for x in &r.sizes {
        assert!(x.latency_min_ps as f64 <= x.latency_avg_ps && x.latency_avg_ps <= x.latency_max_ps as f64);
        assert!(x.bandwidth_bytes_per_s < 10e6, "{x:?}");
    }
    assert!(r.sizes[2].latency_min_ps > 1024 * 10_000);
    assert!(
        r.sizes
            .windows(2)
            .all(|w| w[0].latency_min_ps < w[1].latency_min_ps)
    );
}

#[test]
fn bad_message_configs_say_what_is_wrong() {
    let err = |traffic: &str| {
        reef::config::load_str(
            "m.toml",
            &format!("[topology]\nkind = \"mesh\"\nk = [4, 4]\n[traffic]\n{traffic}"),
            std::path::Path::new("tests/data"),
            &[],
        )
        .unwrap_err()
        .to_string()
    };
    let e = err("kind = \"ping-pong\"\nmessage_sizes = [1]\n");
    assert!(e.contains("needs pair"), "{e}");
    let e = err("kind = \"ping-pong\"\npair = [3, 3]\n");
    assert!(e.contains("two different hosts"), "{e}");
    let e = err("kind = \"streaming\"\npair = [0, 1]\nload = 0.1\n");
    assert!(
        e.contains("traffic.load") && e.contains("synthetic traffic's key"),
        "{e}"
    );
    let e = err("kind = \"streaming\"\npair = [0, 1]\nmessage_sizes = [0]\n");
    assert!(e.contains("1 to"), "{e}");
    let e = err("load = 0.1\npair = [0, 1]\n");
    assert!(e.contains("applies to kind"), "{e}");
    let e = err("kind = \"streaming\"\npair = [0, 1]\n[nic]\ndma_rate = \"1 us\"\n");
    assert!(e.contains("expected a data rate"), "{e}");
    let e = err("kind = \"streaming\"\npair = [0, 1]\n[sim]\nmeasure = \"1 us\"\n");
    assert!(e.contains("no window"), "{e}");
}

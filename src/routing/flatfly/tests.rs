//! Tests of BookSim2's flatfly routings: hand-worked routes, VC classes and refusals.

use super::*;
use crate::config::load_str;
use crate::fabric::cmesh::node_at;
use crate::routing::testing::{at, walk};
use crate::routing::{Routing, cdg};

/// A k-ary n-flatfly of 2×2 nodes a router, `k` routers to a row.
fn spec(algo: &str, k: u32, n: u32, vcs: u8) -> crate::engine::Spec {
    let text = format!(
        "[topology]\nkind = \"flatfly\"\nk = {k}\nn = {n}\nhosts_per_switch = 4\nrouters_per_row = {k}\n\
         [channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"{algo}\"\n"
    );
    load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap()
}

fn flatfly(spec: &crate::engine::Spec) -> &Flatfly {
    let Routing::Flatfly(f) = &spec.routing else {
        panic!("flatfly")
    };
    f
}

/// Node `p` of router `r` on the 4-ary 2-flatfly.
fn host(r: u32, p: u32) -> u32 {
    node_at(r, p, 4, 2)
}

/// Router `a` with its first dimension (lowest, or highest with `y_first`) where it
/// differs from `b` set to `b`'s: the next router on `flatfly_outport`'s (or
/// `flatfly_outport_yx`'s) way, `k` routers a dimension, `n` dimensions.
fn next(k: u32, n: u32, a: u32, b: u32, y_first: bool) -> u32 {
    let dims: Vec<u32> = if y_first {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    let p = dims
        .into_iter()
        .map(|d| k.pow(d))
        .find(|p| (a / p) % k != (b / p) % k)
        .unwrap();
    a - (a / p) % k * p + (b / p) % k * p
}

/// The routers from `a` to `b`, both included, in the order.
fn leg(a: u32, b: u32, y_first: bool) -> Vec<u32> {
    let mut out = vec![a];
    while *out.last().unwrap() != b {
        out.push(next(4, 2, *out.last().unwrap(), b, y_first));
    }
    out
}

#[test]
fn valiant_goes_through_the_intermediate_router_or_out_on_the_way() {
    let s = spec("flatfly-valiant", 4, 2, 8);
    assert_eq!(flatfly(&s).draws(), 16);
    // Router 0 to router 1 through router 5 = (1, 1): the way to 5 corrects dimension
    // 0 first, to router 1, the destination's, where the packet leaves (valiant_flatfly
    // turns to phase 1 there, and its destination is on this router).
    let p = walk(&s, host(0, 0), host(1, 3), 5);
    assert_eq!(p, vec![(0, 0, 3), (1, 0, 7)]);
    for src in 0..16 {
        for dst in 0..16 {
            for via in 0..16 {
                // Phase 0 towards `via` in VCs 0-3, phase 1 from it in 4-7, out at
                // the destination's router whenever it is reached.
                let mut want: Vec<(u32, u8, u8)> = Vec::new();
                let mut second = false;
                for r in leg(src, via, false)
                    .into_iter()
                    .chain(leg(via, dst, false).into_iter().skip(1))
                {
                    second |= r == via;
                    if r == dst {
                        want.push((r, 0, 7));
                        break;
                    }
                    want.push(if second { (r, 4, 7) } else { (r, 0, 3) });
                }
                assert_eq!(
                    walk(&s, host(src, 1), host(dst, 2), via),
                    want,
                    "{src} {dst} {via}"
                );
            }
        }
    }
}

/// UGAL (`orders` 1) or UGAL XY/YX (2) on the 4-ary 2-flatfly with 8 VCs: every source,
/// destination and draw walks through the intermediate router of the draw's quadrant or
/// minimally, in the draw's order, each hop in the VCs of its order and phase (UGAL
/// PNI: and of its destination's digit, one VC).
fn ugal_walks(algo: &str, orders: u32) {
    let s = spec(algo, 4, 2, 8);
    let f = flatfly(&s);
    let pni = f.kind == Kind::UgalPni;
    assert_eq!(f.draws(), 32 * orders);
    let width = 4 / orders as u8;
    for src in 0..16 {
        for dst in 0..16 {
            for raw in 0..16 {
                let intm = f.quadrant(src, dst, raw);
                for order in 0..orders {
                    let y = order == 1;
                    for bit in 0..2 {
                        let route: Vec<(u32, bool)> = if bit == 0 || intm == src {
                            leg(src, dst, y).into_iter().map(|r| (r, true)).collect()
                        } else {
                            let to = leg(src, intm, y);
                            let n = to.len();
                            to.into_iter()
                                .enumerate()
                                .map(|(i, r)| (r, i + 1 == n))
                                .chain(leg(intm, dst, y).into_iter().skip(1).map(|r| (r, true)))
                                .collect()
                        };
                        // The destination's port: ugal_pni's digit out of dimension 1.
                        let q = (src + dst + raw) % 4;
                        let want: Vec<(u32, u8, u8)> = route
                            .iter()
                            .enumerate()
                            .map(|(i, &(r, second))| {
                                let lo = 8 / orders as u8 * order as u8 + if second { width } else { 0 };
                                if r == dst {
                                    (r, 0, 7)
                                } else if pni {
                                    // Out in dimension 0 (the next router's row is
                                    // r's): the destination's digit 1; in dimension
                                    // 1: its port.
                                    let x = route[i + 1].0 / 4 == r / 4;
                                    let digit = if x { dst / 4 } else { q } as u8;
                                    (r, lo + digit, lo + digit)
                                } else {
                                    (r, lo, lo + width - 1)
                                }
                            })
                            .collect();
                        let draw = (2 * raw + order) * 2 + bit;
                        let draw = if orders == 1 { 2 * raw + bit } else { draw };
                        assert_eq!(
                            walk(&s, host(src, 3), host(dst, q), draw),
                            want,
                            "{src} {dst} {raw} {order} {bit}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn ugal_draws_its_intermediate_router_in_the_minimal_quadrant() {
    let s = spec("flatfly-ugal", 4, 2, 8);
    let f = flatfly(&s);
    // Router 0 = (0, 0) to 5 = (1, 1): both digits drawn, 14 = (2, 3) taken whole.
    assert_eq!(f.quadrant(0, 5, 14), 14);
    // To 1 = (1, 0): dimension 1 is the source's, (2, 0).
    assert_eq!(f.quadrant(0, 1, 14), 2);
    // From node 0 (router 0, port 0) to router 5 through 14: the minimal output is
    // dimension 0 to digit 1 (port 4), the other dimension 0 to digit 2 (port 5); 2
    // hops against 2 + 2.
    let c = f.choice(at(0, 0, 0), host(5, 0), 28).unwrap();
    let want = Choice {
        a_port: 4,
        b_port: 5,
        a_hops: 2,
        b_hops: 4,
    };
    assert_eq!(c, want);
    // No choice from a router, nor with the intermediate router the source's.
    assert_eq!(f.choice(at(0, 4, 0), host(5, 0), 28), None);
    assert_eq!(f.choice(at(0, 0, 0), host(5, 0), 0), None);
    // The choice sets the draw's bit: through 14 unless 2·q_min ≤ 4·q_other + 2.
    assert_eq!(f.decide(28, c, 3, 1), 28);
    assert_eq!(f.decide(28, c, 4, 1), 29);
    assert_eq!(f.decide(29, c, 0, 0), 28);
    ugal_walks("flatfly-ugal", 1);
}

#[test]
fn ugal_pni_splits_each_phase_by_the_destinations_next_digit() {
    let s = spec("flatfly-ugal-pni", 4, 2, 8);
    let f = flatfly(&s);
    // UGAL's choice and rule, unchanged.
    let c = f.choice(at(0, 0, 0), host(5, 0), 28).unwrap();
    assert_eq!((c.a_port, c.b_port, c.a_hops, c.b_hops), (4, 5, 2, 4));
    assert_eq!(f.decide(28, c, 4, 1), 29);
    // From router 0 minimally to node 2 of router 9 = (1, 2): out in dimension 0, in
    // the upper half (ph = 2), the VC of the destination's digit 1 (2): VC 6; then at
    // router 1 out in dimension 1, the VC of its port (2): VC 6 again.
    assert_eq!(
        walk(&s, host(0, 1), host(9, 2), 28),
        vec![(0, 6, 6), (1, 6, 6), (9, 0, 7)]
    );
    // To node 3 of router 13 = (1, 3) through router 6 = (2, 1): to 2 in dimension 0
    // (digit 1 of 13: 3, VC 3), to 6 in dimension 1 (port 3: VC 3), from it to 5 in
    // dimension 0 (VC 4 + 3), to 13 in dimension 1 (VC 4 + 3).
    assert_eq!(
        walk(&s, host(0, 1), host(13, 3), 2 * 6 + 1),
        vec![(0, 3, 3), (2, 3, 3), (6, 7, 7), (5, 7, 7), (13, 0, 7)]
    );
    // The injection VCs: 8 / 4 = 2 of the destination router's digit 0.
    assert_eq!(f.injection_vcs(host(9, 2)), Some((2, 3)));
    assert_eq!(f.injection_vcs(host(7, 0)), Some((6, 7)));
    assert_eq!(f.injection_vcs(64), None);
    assert_eq!(
        flatfly(&spec("flatfly-ugal", 4, 2, 8)).injection_vcs(host(9, 2)),
        None
    );
    ugal_walks("flatfly-ugal-pni", 1);
    // With 12 VCs each half is 6, of which k = 4 take one each (BookSim2's
    // vcs_per_dest = 6 / 4): VCs 4, 5, 10 and 11 unused.
    let s = spec("flatfly-ugal-pni", 4, 2, 12);
    assert_eq!(
        walk(&s, host(0, 1), host(13, 3), 2 * 6 + 1),
        vec![(0, 3, 3), (2, 3, 3), (6, 9, 9), (5, 9, 9), (13, 0, 11)]
    );
    assert_eq!(flatfly(&s).injection_vcs(host(13, 3)), Some((3, 5)));
}

#[test]
fn ugal_pni_needs_k_nodes_a_router_and_k_vcs_a_half() {
    let load = |k: u32, hosts: u32, vcs: u8| {
        let text = format!(
            "[topology]\nkind = \"flatfly\"\nk = {k}\nn = 2\nhosts_per_switch = {hosts}\nrouters_per_row = {k}\n\
             [channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"flatfly-ugal-pni\"\n"
        );
        load_str("t.toml", &text, std::path::Path::new("."), &[]).map(|_| ())
    };
    let e = load(2, 4, 8).unwrap_err().to_string();
    assert!(
        e.contains("t.toml:5: topology.hosts_per_switch") && e.contains("k = 2"),
        "{e}"
    );
    for vcs in [4, 6, 9] {
        let e = load(4, 4, vcs).unwrap_err().to_string();
        assert!(
            e.contains("t.toml:8: channel.vcs") && e.contains("8 or more"),
            "{e}"
        );
    }
    load(4, 4, 10).unwrap();
}

#[test]
fn ugal_xy_yx_takes_both_legs_in_the_coins_order() {
    let s = spec("flatfly-ugal-xy-yx", 4, 2, 8);
    let f = flatfly(&s);
    // y first from router 0 to 5 through 14 = (2, 3): dimension 1 to digit 1 (port 4 +
    // 3 + 0) minimally, to digit 3 (port 9) the other way.
    let c = f.choice(at(0, 0, 0), host(5, 0), (2 * 14 + 1) * 2).unwrap();
    assert_eq!((c.a_port, c.b_port, c.a_hops, c.b_hops), (7, 9, 2, 4));
    ugal_walks("flatfly-ugal-xy-yx", 2);
}

#[test]
fn xy_yx_by_a_coin_or_by_the_credits() {
    for algo in ["flatfly-xy-yx", "flatfly-adaptive-xy-yx"] {
        let s = spec(algo, 4, 2, 8);
        assert_eq!(flatfly(&s).draws(), 2);
        for src in 0..16 {
            for dst in 0..16 {
                for order in 0..2 {
                    let want: Vec<(u32, u8, u8)> = leg(src, dst, order == 1)
                        .into_iter()
                        .map(|r| match (r == dst, order) {
                            (true, _) => (r, 0, 7),
                            (false, 0) => (r, 0, 3),
                            _ => (r, 4, 7),
                        })
                        .collect();
                    assert_eq!(walk(&s, host(src, 2), host(dst, 1), order), want, "{src} {dst}");
                }
            }
        }
    }
    let s = spec("flatfly-adaptive-xy-yx", 4, 2, 8);
    let f = flatfly(&s);
    // From router 0 to 5: x first to router 1 (port 4), y first to router 4 (port 7);
    // the less used, the coin on a tie.
    let c = f.choice(at(0, 1, 0), host(5, 0), 0).unwrap();
    assert_eq!((c.a_port, c.b_port), (4, 7));
    assert_eq!(f.decide(0, c, 3, 2), 1);
    assert_eq!(f.decide(1, c, 2, 3), 0);
    assert_eq!(f.decide(1, c, 2, 2), 1);
    // One dimension to go: the same port both ways, the coin decides the VCs.
    assert_eq!(
        f.choice(at(0, 1, 0), host(1, 0), 0).map(|c| c.a_port == c.b_port),
        Some(true)
    );
    assert_eq!(
        flatfly(&spec("flatfly-xy-yx", 4, 2, 8)).choice(at(0, 1, 0), host(5, 0), 0),
        None
    );
}

#[test]
fn ugal_rule_weighs_the_credits_by_the_hops() {
    let c = Choice {
        a_port: 4,
        b_port: 5,
        a_hops: 2,
        b_hops: 3,
    };
    // 2·q_min ≤ 3·q_other + 2.
    assert!(Flatfly::prefers_min(c, 1, 0) && !Flatfly::prefers_min(c, 2, 0));
    assert!(Flatfly::prefers_min(c, 7, 4) && !Flatfly::prefers_min(c, 8, 4));
    // The same output (an intermediate router on the minimal way): always minimal.
    let same = Choice {
        b_port: 4,
        b_hops: 2,
        ..c
    };
    assert!(Flatfly::prefers_min(same, 32, 32));
}

#[test]
fn all_are_free_of_deadlock() {
    let kinds = [
        "flatfly-valiant",
        "flatfly-ugal",
        "flatfly-ugal-pni",
        "flatfly-xy-yx",
        "flatfly-adaptive-xy-yx",
        "flatfly-ugal-xy-yx",
    ];
    for (k, n, vcs) in [(4, 2, 8), (3, 3, 4), (2, 4, 4), (4, 3, 8), (4, 2, 12)] {
        for algo in kinds {
            // (ugal_pni: k = 4 nodes a router, 2k VCs or more.)
            if algo == "flatfly-ugal-pni" && (k != 4 || vcs < 8) {
                continue;
            }
            let s = spec(algo, k, n, vcs);
            let rep = cdg::check(&s.fabric, &s.routing);
            assert_eq!(rep.failure_count, 0, "{algo} {k} {n}: {:?}", rep.failures);
            assert!(
                rep.deadlock_free(),
                "{algo} {k} {n}: {:?}",
                rep.describe_cycle(&s.fabric)
            );
        }
    }
}

#[test]
fn vcs_that_do_not_split_into_the_classes_are_refused() {
    for (algo, vcs) in [
        ("flatfly-valiant", 3),
        ("flatfly-ugal", 5),
        ("flatfly-xy-yx", 3),
        ("flatfly-adaptive-xy-yx", 1),
        ("flatfly-ugal-xy-yx", 6),
    ] {
        let text = format!(
            "[topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nhosts_per_switch = 4\nrouters_per_row = 4\n\
             [channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"{algo}\"\n"
        );
        let e = load_str("t.toml", &text, std::path::Path::new("."), &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.toml:8: channel.vcs") && e.contains("multiple of"),
            "{e}"
        );
    }
}

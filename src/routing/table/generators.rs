//! Per-topology routing tables built with [`TableBuilder`]: the folded Clos and the k-ary
//! n-tree (up to a common ancestor, then down; adaptive over the up-links or
//! deterministic), BookSim2's nearest common ancestor on its own k-ary n-tree
//! (`fattree_nca`), the fully connected network (direct), BookSim2's fly and anynet routing
//! (`dest_tag_fly`, `min_anynet`), and its dimension order on the cmesh and minimal routing
//! on the flattened butterfly.

use super::{Table, TableBuilder};
use crate::fabric::clos::digit;
use crate::fabric::full::port_to;
use crate::fabric::{Fabric, Shape};
use crate::routing::{Escape, PortSet, Want};

fn vcs_of(fab: &Fabric, s: u32, port: u16) -> u8 {
    fab.out_chan[s as usize][port as usize]
        .map(|c| fab.channels[c.idx()].params.vcs)
        .unwrap_or(1)
}

fn want_ports(fab: &Fabric, s: u32, ports: PortSet) -> Want {
    let vcs = ports.iter().map(|p| vcs_of(fab, s, p)).min().unwrap_or(1);
    Want {
        ports,
        vc_lo: 0,
        vc_hi: vcs - 1,
        escape: Escape::NONE,
    }
}

/// Tables for a folded Clos. `adaptive`: the up-links of a leaf form one group and the
/// parallel down-links of a spine to a leaf form a group. Deterministic: traffic to leaf `j`
/// leaves on up-link `j mod up-links` (a fixed spine), and the hosts of leaf `j` are split
/// into contiguous ranges over the parallel down-links.
pub fn clos(fab: &Fabric, adaptive: bool) -> Option<Table> {
    let (leaves, h, spines, g) = fab.shape.clos_dims()?;
    let up = spines * g;
    let mut b = TableBuilder::new(fab.switches, fab.num_hosts() as u32, 1);
    for leaf in 0..leaves {
        for dst in 0..leaves * h {
            let dleaf = dst / h;
            let want = if dleaf == leaf {
                want_ports(fab, leaf, PortSet::single((dst % h) as u16))
            } else if adaptive {
                want_ports(fab, leaf, PortSet::range(h as u16, (h + up - 1) as u16))
            } else {
                want_ports(fab, leaf, PortSet::single((h + dleaf % up) as u16))
            };
            b.set(leaf, 0, dst, want);
        }
    }
    for c in 0..spines {
        let s = leaves + c;
        for dst in 0..leaves * h {
            let dleaf = dst / h;
            let first = (dleaf * g) as u16;
            let want = if adaptive {
                want_ports(fab, s, PortSet::range(first, first + g as u16 - 1))
            } else {
                // Contiguous share of the leaf's hosts per parallel link.
                let i = ((dst % h) as u64 * g as u64 / h as u64) as u16;
                want_ports(fab, s, PortSet::single(first + i))
            };
            b.set(s, 0, dst, want);
        }
    }
    Some(b.build(if adaptive {
        "clos-adaptive"
    } else {
        "clos-deterministic"
    }))
}

/// Tables for a k-ary n-tree: up to the nearest common ancestor (any up-link when
/// `adaptive`), then down. Deterministic routing is destination-mod-k (Zahavi et al.,
/// "Optimized InfiniBand fat-tree routing for shift all-to-all communication patterns",
/// 2010): from level `l` up-link `digit l` of the destination *host* (digit 0 its place on
/// its leaf), so the k hosts of a leaf are reached through k different parents, and every
/// down-link carries the traffic of one host; any up-link reaches the ancestor (going up
/// changes only the switch's digit `l`), so the choice only spreads the load.
pub fn fat_tree(fab: &Fabric, adaptive: bool) -> Option<Table> {
    let Shape::FatTree { k, n } = fab.shape else {
        return None;
    };
    let per_level = k.pow(n - 1);
    let hosts = k * per_level;
    let mut b = TableBuilder::new(fab.switches, hosts, 1);
    for l in 0..n {
        for w in 0..per_level {
            let s = l * per_level + w;
            for dst in 0..hosts {
                let leaf = dst / k;
                let covered = (l..n - 1).all(|i| digit(w, k, i) == digit(leaf, k, i));
                let ports = if covered {
                    PortSet::single(if l == 0 {
                        (dst % k) as u16
                    } else {
                        digit(leaf, k, l - 1) as u16
                    })
                } else if adaptive {
                    PortSet::range(k as u16, 2 * k as u16 - 1)
                } else {
                    PortSet::single((k + digit(dst, k, l)) as u16)
                };
                b.set(s, 0, dst, want_ports(fab, s, ports));
            }
        }
    }
    Some(b.build(if adaptive {
        "fat-tree-adaptive"
    } else {
        "fat-tree-deterministic"
    }))
}

/// BookSim2's nearest-common-ancestor routing on its k-ary n-tree (`fattree_nca`,
/// `routefunc.cpp`; [`crate::fabric::fattree`]): a router whose subtree holds the
/// destination sends it down, on the port of the branch that holds it (a leaf on the
/// destination's port, `dst mod k`); any other sends it up, on any of its `k` up ports, all
/// VCs. BookSim2 draws that up port uniformly at random, whatever the ports' state
/// (`RandomInt(k − 1)`): the switch's selection `random-any` ([`crate::fabric::Selection`]).
pub fn nca(fab: &Fabric) -> Option<Table> {
    let Shape::BookSimFatTree { k, n } = fab.shape else {
        return None;
    };
    let per_level = k.pow(n - 1);
    let hosts = k * per_level;
    let mut b = TableBuilder::new(fab.switches, hosts, 1);
    for s in 0..fab.switches {
        let (depth, pos) = (s / per_level, s % per_level);
        // The nodes under router (depth, pos): `coverage` of them from `neighbourhood ·
        // coverage` on.
        let neighbourhood = pos / k.pow(n - depth - 1);
        let coverage = k.pow(n - depth);
        for dst in 0..hosts {
            let ports = if dst / coverage == neighbourhood {
                PortSet::single(if depth == n - 1 {
                    (dst % k) as u16
                } else {
                    ((dst - neighbourhood * coverage) / k.pow(n - depth - 1)) as u16
                })
            } else {
                PortSet::range(k as u16, 2 * k as u16 - 1)
            };
            b.set(s, 0, dst, want_ports(fab, s, ports));
        }
    }
    Some(b.build("nca"))
}

/// Tables for a fully connected network: straight to the destination's switch.
pub fn full(fab: &Fabric) -> Option<Table> {
    let Shape::Full { switches, conc } = fab.shape else {
        return None;
    };
    let mut b = TableBuilder::new(switches, switches * conc, 1);
    for s in 0..switches {
        for dst in 0..switches * conc {
            let t = dst / conc;
            let port = if t == s {
                (switches - 1 + dst % conc) as u16
            } else {
                port_to(s, t)
            };
            b.set(s, 0, dst, want_ports(fab, s, PortSet::single(port)));
        }
    }
    Some(b.build("direct"))
}

/// Destination-tag routing on a k-ary n-fly (BookSim2's `dest_tag_fly`, `routefunc.cpp`):
/// a switch of stage `s` sends a packet out on digit `n − 1 − s` of its destination.
pub fn dest_tag(fab: &Fabric) -> Option<Table> {
    let Shape::Fly { k, n } = fab.shape else {
        return None;
    };
    let hosts = k.pow(n);
    let per_stage = hosts / k;
    let mut b = TableBuilder::new(fab.switches, hosts, 1);
    for s in 0..fab.switches {
        let stage = s / per_stage;
        for dst in 0..hosts {
            let port = digit(dst, k, n - 1 - stage) as u16;
            b.set(s, 0, dst, want_ports(fab, s, PortSet::single(port)));
        }
    }
    Some(b.build("dest-tag"))
}

/// BookSim2's `min` routing on an anynet (`min_anynet` and `AnyNet::route`,
/// `src/networks/anynet.cpp`): each switch's table from its own Dijkstra over the link
/// weights ([`Shape::AnyNet`]), which takes the lowest-numbered switch among those equally
/// near and keeps the first path found to each; a packet leaves on the first hop of that
/// switch's path to its destination's switch. One path per pair, no adaptivity.
pub fn anynet_min(fab: &Fabric) -> Option<Table> {
    let Shape::AnyNet { weight } = &fab.shape else {
        return None;
    };
    let ns = fab.switches as usize;
    let nh = fab.num_hosts() as u32;
    // Per switch: (port, neighbour, weight) in port order, which is neighbour order.
    let adj: Vec<Vec<(u16, usize, u64)>> = (0..ns)
        .map(|s| {
            fab.out_chan[s]
                .iter()
                .enumerate()
                .filter_map(|(p, c)| {
                    let c = (*c)?;
                    let ch = &fab.channels[c.idx()];
                    fab.is_switch(ch.dst)
                        .then(|| (p as u16, ch.dst.idx(), u64::from(weight[c.idx()])))
                })
                .collect()
        })
        .collect();
    let mut b = TableBuilder::new(fab.switches, nh, 1);
    let mut dist = vec![u64::MAX; ns];
    let mut prev = vec![usize::MAX; ns];
    let mut done = vec![false; ns];
    for start in 0..ns {
        dist.fill(u64::MAX);
        prev.fill(usize::MAX);
        done.fill(false);
        dist[start] = 0;
        for _ in 0..ns {
            // The nearest switch not yet taken, the lowest-numbered of equals; none left
            // that can be reached: the rest are unreachable (anynet::read refuses that).
            let Some(u) = (0..ns)
                .filter(|&i| !done[i] && dist[i] != u64::MAX)
                .min_by_key(|&i| (dist[i], i))
            else {
                break;
            };
            done[u] = true;
            for &(_, v, w) in &adj[u] {
                if dist[u] + w < dist[v] {
                    dist[v] = dist[u] + w;
                    prev[v] = u;
                }
            }
        }
        // The port of `start` on the path to each switch.
        let first_port = |to: usize| -> Option<u16> {
            let mut v = to;
            while prev[v] != start {
                v = *prev.get(v).filter(|&&p| p != usize::MAX)?;
            }
            adj[start].iter().find(|a| a.1 == v).map(|a| a.0)
        };
        for dst in 0..nh {
            let (t, port) = fab.host_switch(dst);
            let port = if t.idx() == start {
                port
            } else {
                match first_port(t.idx()) {
                    Some(p) => p,
                    None => continue,
                }
            };
            b.set(
                start as u32,
                0,
                dst,
                want_ports(fab, start as u32, PortSet::single(port)),
            );
        }
    }
    Some(b.build("anynet-min"))
}

/// BookSim2's dimension-order routing on its cmesh (`cmesh.cpp`): at the destination's
/// router out to its node (`NodeToPort`), else x first, then y, towards it. Without
/// `express` (`dor_no_express`, `cmesh_next_no_express`) over the mesh's own channels; with
/// it (`dor`, `cmesh_next`) a router on the bottom or top row whose packet has at least
/// `k/2` columns to go takes the express channel along that row (its −y or +y port), and
/// one on the left or right column with at least `k/2` rows to go (its x done) the express
/// channel along that column (its −x or +x port). All VCs, one port.
pub fn cmesh_dor(fab: &Fabric, express: bool) -> Option<Table> {
    use crate::fabric::cmesh::{CONC, router_of};
    let Shape::CMesh { k } = fab.shape else {
        return None;
    };
    let hosts = CONC * k * k;
    let c = CONC as u16;
    let (px, nx, py, ny) = (c, c + 1, c + 2, c + 3);
    let far = |d: u32| express && d > k / 2 - 1;
    let mut b = TableBuilder::new(fab.switches, hosts, 1);
    for r in 0..k * k {
        let (cx, cy) = (r % k, r / k);
        for dst in 0..hosts {
            let (t, p) = router_of(dst, k, 2);
            let (dx, dy) = (t % k, t / k);
            let port = if t == r {
                p
            } else if cx != dx {
                match (far(cx.abs_diff(dx)), cy) {
                    (true, 0) => ny,
                    (true, y) if y == k - 1 => py,
                    _ if cx < dx => px,
                    _ => nx,
                }
            } else {
                match (far(cy.abs_diff(dy)), cx) {
                    (true, 0) => nx,
                    (true, x) if x == k - 1 => px,
                    _ if cy < dy => py,
                    _ => ny,
                }
            };
            b.set(r, 0, dst, want_ports(fab, r, PortSet::single(port)));
        }
    }
    Some(b.build(if express { "cmesh-express" } else { "cmesh-dor" }))
}

/// BookSim2's `ran_min` routing on its flattened butterfly (`min_flatfly` and
/// `flatfly_outport`, `flatfly_onchip.cpp`): at the destination's router out to its node,
/// else straight to the router that corrects the lowest dimension in which the two differ.
/// Despite its name nothing is drawn at random: one path per pair, all VCs.
pub fn flatfly_min(fab: &Fabric) -> Option<Table> {
    use crate::fabric::cmesh::router_of;
    let Shape::FlatFly { k, n, xr, x } = fab.shape else {
        return None;
    };
    let c = xr * xr;
    let hosts = fab.num_hosts() as u32;
    let mut b = TableBuilder::new(fab.switches, hosts, 1);
    for r in 0..fab.switches {
        for dst in 0..hosts {
            let (t, p) = router_of(dst, x, xr);
            let port = match (0..n).find(|&d| digit(t, k, d) != digit(r, k, d)) {
                None => p,
                Some(d) => {
                    let (to, own) = (digit(t, k, d), digit(r, k, d));
                    (c + (k - 1) * d + to - u32::from(to > own)) as u16
                }
            };
            b.set(r, 0, dst, want_ports(fab, r, PortSet::single(port)));
        }
    }
    Some(b.build("flatfly-min"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::LinkParams;
    use crate::fabric::SwitchParams;
    use crate::fabric::clos::folded_clos;
    use crate::routing::{At, Header};

    fn at(s: u32) -> At {
        At {
            switch: s,
            in_port: 0,
            in_vc: 0,
            in_class: 0,
        }
    }

    fn hdr(dst: u32) -> Header<'static> {
        Header::dst(dst)
    }

    #[test]
    fn clos_tables_compress_to_ranges() {
        let p = LinkParams::default();
        let f = folded_clos(16, 16, 8, 2, p, p, SwitchParams::default()).unwrap();
        let t = clos(&f, false).unwrap();
        // Leaf 3 → host 200 (leaf 12) leaves on up-link 12, port 16 + 12.
        assert_eq!(t.route(at(3), hdr(200)).unwrap().ports, PortSet::single(28));
        // Spine 0 sends hosts 192..199 of leaf 12 on its first link, 200..207 on the second.
        assert_eq!(t.route(at(16), hdr(195)).unwrap().ports, PortSet::single(24));
        assert_eq!(t.route(at(16), hdr(200)).unwrap().ports, PortSet::single(25));
        // Adaptive: one range per leaf on a leaf switch (own hosts one by one).
        let a = clos(&f, true).unwrap();
        assert_eq!(a.route(at(3), hdr(200)).unwrap().ports, PortSet::range(16, 31));
        assert_eq!(a.ranges(3, 0).count(), 16 + 2);
    }

    /// Follows `t` from host `src` to the host it delivers to; the switches on the way.
    fn walk(f: &Fabric, t: &Table, src: u32, dst: u32) -> (u32, Vec<u32>) {
        let (mut s, _) = f.host_switch(src);
        let mut path = vec![s.0];
        loop {
            let w = t.route(at(s.0), Header::dst(dst)).unwrap();
            let c = &f.channels[f.out_chan[s.idx()][w.ports.first().unwrap() as usize]
                .unwrap()
                .idx()];
            match f.host_of(c.dst) {
                Some(h) => return (h, path),
                None => {
                    s = c.dst;
                    path.push(s.0);
                }
            }
        }
    }

    #[test]
    fn dest_tag_reaches_every_host_through_every_stage() {
        let p = LinkParams::default();
        let f = crate::fabric::fly::fly(3, 3, p, p, SwitchParams::default()).unwrap();
        let t = dest_tag(&f).unwrap();
        for src in 0..27 {
            for dst in 0..27 {
                let (got, path) = walk(&f, &t, src, dst);
                assert_eq!(got, dst);
                // One switch per stage.
                assert_eq!(path.iter().map(|s| s / 9).collect::<Vec<_>>(), vec![0, 1, 2]);
            }
        }
    }

    #[test]
    fn cmesh_dor_reaches_every_node_as_booksim_routes() {
        let p = LinkParams::default();
        let f = crate::fabric::cmesh::cmesh(
            4,
            true,
            p,
            p,
            SwitchParams::default(),
            crate::time::Ratio::int(1000),
        )
        .unwrap();
        let plain = cmesh_dor(&f, false).unwrap();
        let express = cmesh_dor(&f, true).unwrap();
        for src in 0..64 {
            for dst in 0..64 {
                let (got, path) = walk(&f, &plain, src, dst);
                assert_eq!(got, dst);
                // x then y over neighbours: |dx| + |dy| + 1 routers.
                let (a, b) = (f.host_switch(src).0.0, f.host_switch(dst).0.0);
                let hops = (a % 4).abs_diff(b % 4) + (a / 4).abs_diff(b / 4);
                assert_eq!(path.len() as u32, hops + 1);
                assert_eq!(walk(&f, &express, src, dst).0, dst);
            }
        }
        // Node 0 (router 0) to node 7 (router 3): along the bottom row by the express
        // channel to router 2, then to 3 (cmesh_next: 3 columns > k/2 - 1).
        assert_eq!(walk(&f, &express, 0, 7).1, vec![0, 2, 3]);
        assert_eq!(walk(&f, &plain, 0, 7).1, vec![0, 1, 2, 3]);
        // Router 4 (left column) to router 12 (two rows up): the express channel up the
        // column, router 4's −x port.
        assert_eq!(walk(&f, &express, 16, 48).1, vec![4, 12]);
    }

    #[test]
    fn flatfly_min_corrects_the_lowest_dimension_first() {
        let p = LinkParams::default();
        let f = crate::fabric::flatfly::flatfly(
            4,
            2,
            2,
            4,
            true,
            p,
            p,
            SwitchParams::default(),
            crate::time::Ratio::int(1000),
        )
        .unwrap();
        let t = flatfly_min(&f).unwrap();
        for src in 0..64 {
            for dst in 0..64 {
                assert_eq!(walk(&f, &t, src, dst).0, dst);
            }
        }
        // Node 0 (router 0) to node 63 (router 15): x first to router 3, then to 15.
        assert_eq!(walk(&f, &t, 0, 63).1, vec![0, 3, 15]);
        // A 3-ary 3-flatfly, 3×3 nodes a router, 9 routers to a row.
        let f = crate::fabric::flatfly::flatfly(
            3,
            3,
            3,
            9,
            false,
            p,
            p,
            SwitchParams::default(),
            crate::time::Ratio::int(1000),
        )
        .unwrap();
        let t = flatfly_min(&f).unwrap();
        for src in (0..243).step_by(7) {
            for dst in 0..243 {
                let (got, path) = walk(&f, &t, src, dst);
                assert_eq!(got, dst);
                assert!(path.len() <= 4);
            }
        }
    }

    #[test]
    fn nca_goes_up_any_way_to_the_nearest_common_ancestor_then_down() {
        let p = LinkParams::default();
        for (k, n) in [(2, 1), (2, 3), (3, 3), (4, 2)] {
            let f = crate::fabric::fattree::fat_tree(k, n, p, p, SwitchParams::default()).unwrap();
            let t = nca(&f).unwrap();
            let per_level = k.pow(n - 1);
            let hosts = k * per_level;
            for src in 0..hosts {
                for dst in 0..hosts {
                    // Levels to climb: the nodes' numbers agree above digit `up`.
                    let up = (0..n)
                        .find(|&u| src / k.pow(u + 1) == dst / k.pow(u + 1))
                        .unwrap();
                    // Every way up (every up port at every level), depth first.
                    let mut stack = vec![(f.host_switch(src).0, 1u32)];
                    while let Some((s, seen)) = stack.pop() {
                        let w = t.route(at(s.0), hdr(dst)).unwrap();
                        assert_eq!((w.vc_lo, w.vc_hi), (0, 0));
                        if w.ports.len() > 1 {
                            assert_eq!(w.ports, PortSet::range(k as u16, 2 * k as u16 - 1));
                        }
                        for port in w.ports.iter() {
                            let c = &f.channels[f.out_chan[s.idx()][port as usize].unwrap().idx()];
                            match f.host_of(c.dst) {
                                Some(h) => {
                                    assert_eq!(h, dst, "{k} {n}: {src} → {dst}");
                                    assert_eq!(seen, 2 * up + 1, "{k} {n}: {src} → {dst}");
                                }
                                None => stack.push((c.dst, seen + 1)),
                            }
                        }
                    }
                }
            }
            // Top routers have k ports: nothing goes up from them.
            assert!((0..per_level).all(|s| t.ranges(s, 0).all(|r| r.2.ports.iter().all(|p| p < k as u16))));
        }
    }

    #[test]
    fn anynet_min_breaks_ties_as_booksims_dijkstra() {
        // A ring of four routers, a node each: two equal ways between opposite corners.
        let p = LinkParams::default();
        let ring = "router 0 node 0 router 1 router 3\nrouter 1 node 1 router 2\nrouter 2 node 2 router 3\nrouter 3 node 3\n";
        let f = crate::fabric::anynet::parse(
            "r",
            ring,
            p,
            p,
            SwitchParams::default(),
            crate::time::Ratio::int(1000),
        )
        .unwrap();
        let t = anynet_min(&f).unwrap();
        // Dijkstra takes the lowest-numbered of equally near routers first, and the first
        // path found to each router stays: 0 → 2 through 1, 2 → 0 through 1, 1 → 3 and
        // 3 → 1 through 0.
        assert_eq!(walk(&f, &t, 0, 2).1, vec![0, 1, 2]);
        assert_eq!(walk(&f, &t, 2, 0).1, vec![2, 1, 0]);
        assert_eq!(walk(&f, &t, 1, 3).1, vec![1, 0, 3]);
        assert_eq!(walk(&f, &t, 3, 1).1, vec![3, 0, 1]);
        // A heavier channel from 0 to 1 turns 0 → 2 the other way (2 → 0 stays).
        let heavy = ring.replacen("router 1 router 3", "router 1 3 router 3", 1);
        let f = crate::fabric::anynet::parse(
            "r",
            &heavy,
            p,
            p,
            SwitchParams::default(),
            crate::time::Ratio::int(1000),
        )
        .unwrap();
        let t = anynet_min(&f).unwrap();
        assert_eq!(walk(&f, &t, 0, 2).1, vec![0, 3, 2]);
        assert_eq!(walk(&f, &t, 2, 0).1, vec![2, 1, 0]);
        assert_eq!(walk(&f, &t, 0, 0).1, vec![0]);
    }
}

//! Systematic traffic (`../shared/systems/ieee1355.md`, "Traffic"): fixed pairs of nodes
//! that send to each other.
//!
//! - Clos: node i with node i + N/2.
//! - Grid, worst case: each node with its mirror image through the centre of the grid (the
//!   same port of switch (K−1−x, K−1−y)).
//! - Grid, best case: every node with a node on a nearest-neighbour switch, each switch
//!   spreading its 16 pairs over its neighbour directions as evenly as it can. The pairs per
//!   neighbouring switch pair are a b-matching of the grid (every switch in 16 pairs), found
//!   by maximum flow on the bipartite (checkerboard) grid with at most ⌈16/deg⌉ pairs per
//!   neighbour (deg of the busier end), raised one at a time only around switches that
//!   cannot otherwise fill their 16.

use super::net::grid_side;
use super::params::NODES_PER_SWITCH;
use std::collections::VecDeque;

/// Clos: i ↔ i + N/2.
pub fn clos_halves(n: u32) -> Vec<u32> {
    (0..n).map(|i| (i + n / 2) % n).collect()
}

/// Grid worst case: each node's mirror image through the centre.
pub fn grid_mirror(n: u32) -> Option<Vec<u32>> {
    let k = grid_side(n)?;
    let c = NODES_PER_SWITCH;
    Some(
        (0..n)
            .map(|h| {
                let (s, p) = (h / c, h % c);
                let (x, y) = (s / k, s % k);
                ((k - 1 - x) * k + (k - 1 - y)) * c + p
            })
            .collect(),
    )
}

/// Grid best case: nearest-neighbour pairs, spread evenly (see the module documentation).
pub fn grid_nearest(n: u32) -> Option<Vec<u32>> {
    let k = grid_side(n)?;
    let c = NODES_PER_SWITCH;
    let sw = k * k;
    let idx = |x: u32, y: u32| x * k + y;
    let deg = |x: u32, y: u32| {
        [x > 0, x + 1 < k, y > 0, y + 1 < k]
            .iter()
            .filter(|&&b| b)
            .count() as u32
    };
    // Edges from even (x + y) switches to their neighbours.
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    for x in 0..k {
        for y in 0..k {
            if (x + y) % 2 != 0 {
                continue;
            }
            let mut nb = Vec::new();
            if x > 0 {
                nb.push((x - 1, y));
            }
            if x + 1 < k {
                nb.push((x + 1, y));
            }
            if y > 0 {
                nb.push((x, y - 1));
            }
            if y + 1 < k {
                nb.push((x, y + 1));
            }
            for (a, b) in nb {
                let cap = c.div_ceil(deg(x, y).max(deg(a, b)));
                edges.push((idx(x, y), idx(a, b), cap));
            }
        }
    }
    let evens = (0..sw).filter(|s| (s / k + s % k) % 2 == 0).count() as u32;
    let flow = loop {
        let f = max_flow(sw, &edges, c);
        if f.iter().sum::<u32>() == evens * c {
            break f;
        }
        // Raise the limits around the switches left short.
        let mut got = vec![0u32; sw as usize];
        for (&(u, v, _), &x) in edges.iter().zip(&f) {
            got[u as usize] += x;
            got[v as usize] += x;
        }
        let mut raised = false;
        for e in &mut edges {
            if (got[e.0 as usize] < c || got[e.1 as usize] < c) && e.2 < c {
                e.2 += 1;
                raised = true;
            }
        }
        if !raised {
            return None;
        }
    };
    let mut next = vec![0u32; sw as usize];
    let mut to = vec![u32::MAX; n as usize];
    for (&(u, v, _), &f) in edges.iter().zip(&flow) {
        for _ in 0..f {
            let a = u * c + next[u as usize];
            let b = v * c + next[v as usize];
            next[u as usize] += 1;
            next[v as usize] += 1;
            to[a as usize] = b;
            to[b as usize] = a;
        }
    }
    to.iter().all(|&d| d != u32::MAX).then_some(to)
}

/// Maximum flow source → even switches (capacity `b`) → edges → odd switches (capacity
/// `b`) → sink, by shortest augmenting paths. Returns the flow on each edge.
fn max_flow(switches: u32, edges: &[(u32, u32, u32)], b: u32) -> Vec<u32> {
    // Nodes: switches, then source and sink. Arcs in pairs (forward, backward).
    let (src, snk) = (switches, switches + 1);
    let nn = (switches + 2) as usize;
    let mut head: Vec<Vec<usize>> = vec![Vec::new(); nn];
    let mut arcs: Vec<(u32, u32)> = Vec::new(); // (to, residual capacity)
    let mut add = |head: &mut Vec<Vec<usize>>, a: u32, z: u32, cap: u32| {
        head[a as usize].push(arcs.len());
        arcs.push((z, cap));
        head[z as usize].push(arcs.len());
        arcs.push((a, 0));
        arcs.len() - 2
    };
    let mut is_even = vec![false; switches as usize];
    for &(u, _, _) in edges {
        is_even[u as usize] = true;
    }
    let edge_arcs: Vec<usize> = edges
        .iter()
        .map(|&(u, v, cap)| add(&mut head, u, v, cap))
        .collect();
    let mut seen_odd = vec![false; switches as usize];
    for &(u, v, _) in edges {
        let _ = u;
        seen_odd[v as usize] = true;
    }
    for s in 0..switches {
        if is_even[s as usize] {
            add(&mut head, src, s, b);
        } else if seen_odd[s as usize] {
            add(&mut head, s, snk, b);
        }
    }
    loop {
        let mut prev = vec![usize::MAX; nn];
        let mut q = VecDeque::from([src]);
        let mut found = false;
        while let Some(x) = q.pop_front() {
            for &a in &head[x as usize] {
                let (z, cap) = arcs[a];
                if cap > 0 && z != src && prev[z as usize] == usize::MAX {
                    prev[z as usize] = a;
                    if z == snk {
                        found = true;
                        break;
                    }
                    q.push_back(z);
                }
            }
            if found {
                break;
            }
        }
        if !found {
            break;
        }
        let mut bottleneck = u32::MAX;
        let mut z = snk;
        while z != src {
            let a = prev[z as usize];
            bottleneck = bottleneck.min(arcs[a].1);
            z = arcs[a ^ 1].0;
        }
        let mut z = snk;
        while z != src {
            let a = prev[z as usize];
            arcs[a].1 -= bottleneck;
            arcs[a ^ 1].1 += bottleneck;
            z = arcs[a ^ 1].0;
        }
    }
    edge_arcs.iter().map(|&a| arcs[a ^ 1].1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_pairs(to: &[u32]) {
        for (a, &b) in to.iter().enumerate() {
            assert_ne!(a as u32, b);
            assert_eq!(to[b as usize], a as u32, "pairs are mutual");
        }
    }

    #[test]
    fn nearest_neighbour_pairs_are_even_and_adjacent() {
        for n in [64, 256, 1024] {
            let to = grid_nearest(n).unwrap();
            check_pairs(&to);
            let k = grid_side(n).unwrap();
            for (a, &b) in to.iter().enumerate() {
                let (s, t) = (a as u32 / 16, b / 16);
                let d = (s / k).abs_diff(t / k) + (s % k).abs_diff(t % k);
                assert_eq!(d, 1, "{n}: {a} ↔ {b} are not on neighbouring switches");
            }
        }
        // 4×4: interior switches pair 4 nodes with each neighbour.
        let to = grid_nearest(256).unwrap();
        let s = 5u32; // (1, 1)
        let mut per = std::collections::BTreeMap::new();
        for p in 0..16 {
            *per.entry(to[(s * 16 + p) as usize] / 16).or_insert(0) += 1;
        }
        assert!(per.values().all(|&c| c == 4), "{per:?}");
    }

    #[test]
    fn mirror_and_halves() {
        check_pairs(&grid_mirror(256).unwrap());
        check_pairs(&clos_halves(512));
        // Port 0 of switch (0, 0) ↔ port 0 of switch (3, 3).
        assert_eq!(grid_mirror(256).unwrap()[0], 240);
    }
}

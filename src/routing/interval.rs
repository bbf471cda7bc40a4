//! STC104 interval tables (`../shared/systems/ieee1355.md`, "STC104" and "Topologies"):
//! every switch maps contiguous ranges of header values to an output link or a group of
//! links (grouped adaptive routing); the decision depends on the header only. Generated here
//! for the folded Clos, the Macramé grid and the torus, with universal (two-phase) routing
//! and a header-deletion hierarchy for the Clos.
//!
//! Labels: host `h` has header value `h` (1-byte headers up to 256 labels, 2-byte above).
//! Adaptive routing gives a destination the whole group. Deterministic routing gives it one
//! link: on the grid and torus, the group's labels in contiguous shares; on the Clos, the
//! routes spread evenly over the centre stage's up- and down-links ([`clos`]), as the
//! Macramé testbed had them ("routing channels evenly spread across the centre stage
//! links", Zhu et al. 1998).
//!
//! Torus: without virtual channels the routes themselves must be free of cyclic channel
//! dependencies. In each ring (a row or a column) a packet takes the shorter direction that
//! does not pass *through* the ring's position-0 switch; packets may start or end there, so
//! the wrap links carry the traffic from and to position 0. Each ring's chain of channels in
//! each direction is cut at position 0, and x-then-y order adds no cycle across rings, so
//! the dependency graph is acyclic ([`super::cdg::check`] proves it for every size built).
//! The price is that some routes are longer than the shortest.

use super::table::{HeaderTable, TableBuilder};
use super::{Escape, PortSet, Want};
use crate::fabric::grid::{MINUS_X, MINUS_Y, PLUS_X, PLUS_Y, dir_port};
use crate::fabric::{Fabric, Shape};

/// The STC104's interval table holds at most this many ranges (35 limits).
pub const STC104_INTERVALS: usize = 36;

/// Header width for `labels` distinct header values: 1 byte up to 256, else 2.
pub fn header_width(labels: u32) -> u8 {
    if labels <= 256 { 1 } else { 2 }
}

/// A destination's route at one switch: a group of consecutive ports, before it is split
/// for deterministic routing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Group {
    first: u16,
    len: u16,
}

/// Collects per switch the group of every label and writes the table: adaptive keeps the
/// groups, deterministic gives each label one link of its group, splitting the labels the
/// group serves (in order) into contiguous shares.
struct Builder {
    keys: u32,
    groups: Vec<Vec<Option<Group>>>,
}

impl Builder {
    fn new(switches: u32, keys: u32) -> Builder {
        Builder {
            keys,
            groups: vec![vec![None; keys as usize]; switches as usize],
        }
    }

    fn set(&mut self, s: u32, key: u32, first: u16, len: u16) {
        self.groups[s as usize][key as usize] = Some(Group { first, len });
    }

    fn build(self, adaptive: bool) -> super::table::Table {
        let mut b = TableBuilder::new(self.groups.len() as u32, self.keys, 1);
        for (s, row) in self.groups.iter().enumerate() {
            let mut done = vec![false; row.len()];
            for k in 0..row.len() {
                let Some(g) = row[k] else { continue };
                if done[k] {
                    continue;
                }
                let members: Vec<usize> = (k..row.len()).filter(|&j| row[j] == Some(g)).collect();
                let n = members.len() as u32;
                for (rank, &j) in members.iter().enumerate() {
                    done[j] = true;
                    let ports = if adaptive || g.len == 1 {
                        PortSet::range(g.first, g.first + g.len - 1)
                    } else {
                        let i = (rank as u64 * g.len as u64 / n as u64) as u16;
                        PortSet::single(g.first + i)
                    };
                    b.set(
                        s as u32,
                        0,
                        j as u32,
                        Want {
                            ports,
                            vc_lo: 0,
                            vc_hi: 0,
                            escape: Escape::NONE,
                        },
                    );
                }
            }
        }
        b.build("interval")
    }
}

/// Interval tables for the folded Clos (`Shape::Clos`). Adaptive: the up-links of a leaf are
/// one group, the parallel down-links from a centre switch to a leaf are a group.
/// `universal`: centre switch `c` also has label `hosts + c`, which leaf switches route to
/// it and which it owns (deletes); a packet whose first header is a random centre label
/// takes that centre switch.
///
/// Deterministic (fixed tables, the routes spread evenly over the centre stage's links, as
/// the Macramé testbed had them):
/// - the header values are cut into as many *units* of consecutive labels as a leaf has
///   up-links (`hosts / up-links` labels each: a whole leaf on the 256-node Clos, half a
///   leaf on the 128-node one, two leaves on the 512-node one); leaf `s` sends unit `m` up
///   its up-link `(m + ⌊s · up-links / leaves⌋) mod up-links`. Each leaf thus uses each
///   up-link for one unit (less its own hosts), and the leaves' rotations send each unit
///   through every centre switch from about as many leaves;
/// - a centre switch splits each leaf's labels into contiguous ranges, one per parallel
///   down-link, so that the routes that reach it are shared out as evenly as contiguous
///   ranges allow (weights: the leaves that send each label through it).
///
/// Tables stay within the STC104's limit: a leaf holds its own hosts one by one and one
/// interval per remote unit (31 on the 256-node Clos), a centre one interval per down-link
/// (32). [`centre_link_routes`] counts the balance achieved.
pub fn clos(fab: &Fabric, adaptive: bool, universal: bool) -> Option<HeaderTable> {
    let (leaves, h, spines, g) = fab.shape.clos_dims()?;
    let n = leaves * h;
    let up = spines * g;
    let keys = n + if universal { spines } else { 0 };
    let mut b = Builder::new(leaves + spines, keys);
    let uplink = |leaf: u32, d: u32| -> u32 {
        let unit = (d as u64 * up as u64 / n as u64) as u32;
        let shift = (leaf as u64 * up as u64 / leaves as u64) as u32;
        (unit + shift) % up
    };
    for leaf in 0..leaves {
        for d in 0..n {
            if d / h == leaf {
                b.set(leaf, d, (d % h) as u16, 1);
            } else if adaptive {
                b.set(leaf, d, h as u16, up as u16);
            } else {
                b.set(leaf, d, (h + uplink(leaf, d)) as u16, 1);
            }
        }
        if universal {
            for c in 0..spines {
                b.set(leaf, n + c, (h + c * g) as u16, g as u16);
            }
        }
    }
    for c in 0..spines {
        for j in 0..leaves {
            let labels = j * h..(j + 1) * h;
            if adaptive {
                for d in labels {
                    b.set(leaves + c, d, (j * g) as u16, g as u16);
                }
                continue;
            }
            // Routes that reach centre `c` for each label of leaf `j`.
            let weight: Vec<u64> = labels
                .clone()
                .map(|d| (0..leaves).filter(|&s| s != j && uplink(s, d) / g == c).count() as u64)
                .collect();
            for (d, part) in labels.zip(even_split(&weight, g as usize)) {
                b.set(leaves + c, d, (j * g + part as u32) as u16, 1);
            }
        }
    }
    let table = b.build(adaptive);
    let width = header_width(keys);
    let mut own = vec![(1, 0); (leaves + spines) as usize];
    if universal {
        for c in 0..spines {
            own[(leaves + c) as usize] = ((n + c) as u16, (n + c) as u16);
        }
    }
    let name = match (universal, adaptive) {
        (true, _) => "interval-universal",
        (false, true) => "interval-adaptive",
        (false, false) => "interval-deterministic",
    };
    Some(
        HeaderTable::new(name, table, (0..n).map(|d| vec![d as u16]).collect())
            .with_own(own)
            .with_width(width),
    )
}

/// Splits a sequence of weights into `parts` contiguous parts (some may be empty) so that
/// the heaviest part is as light as possible, and among those splits the parts are as even
/// as possible (least sum of squares; ties: the earliest cuts). Returns each position's part.
fn even_split(w: &[u64], parts: usize) -> Vec<usize> {
    let n = w.len();
    let parts = parts.max(1);
    let prefix: Vec<u64> = std::iter::once(0)
        .chain(w.iter().scan(0, |a, &x| {
            *a += x;
            Some(*a)
        }))
        .collect();
    // best[k][i]: the best split of the first i weights into k parts: (max, sum of squares,
    // where part k starts).
    let mut best = vec![vec![(u64::MAX, u64::MAX, 0usize); n + 1]; parts + 1];
    best[0][0] = (0, 0, 0);
    for k in 1..=parts {
        for i in 0..=n {
            for start in 0..=i {
                let (m, q, _) = best[k - 1][start];
                if m == u64::MAX {
                    continue;
                }
                let part = prefix[i] - prefix[start];
                let cand = (m.max(part), q + part * part, start);
                if (cand.0, cand.1) < (best[k][i].0, best[k][i].1) {
                    best[k][i] = cand;
                }
            }
        }
    }
    let mut out = vec![0; n];
    let mut end = n;
    for k in (1..=parts).rev() {
        let start = best[k][end].2;
        for o in &mut out[start..end] {
            *o = k - 1;
        }
        end = start;
    }
    out
}

/// Routes (source, destination host pairs) over each centre-stage link of a folded Clos
/// whose routing gives every pair one path: `(up, down)`, the counts on every leaf → centre
/// link and every centre → leaf link, in channel order. Pairs on the same leaf cross no
/// centre-stage link. `None` if the fabric is not a folded Clos or a pair has no route.
pub fn centre_link_routes(fab: &Fabric, routing: &super::Routing) -> Option<(Vec<u64>, Vec<u64>)> {
    let (leaves, _, _, _) = fab.shape.clos_dims()?;
    let is_leaf = |n: crate::fabric::NodeId| fab.is_switch(n) && n.0 < leaves;
    let is_centre = |n: crate::fabric::NodeId| fab.is_switch(n) && n.0 >= leaves;
    let mut count = vec![0u64; fab.channels.len()];
    let hosts = fab.num_hosts() as u32;
    for src in 0..hosts {
        for dst in (0..hosts).filter(|&d| d != src) {
            let (path, _) = routing.path(fab, src, dst).ok()?;
            for (c, _) in path {
                count[c.idx()] += 1;
            }
        }
    }
    let pick = |f: &dyn Fn(&crate::fabric::Channel) -> bool| -> Vec<u64> {
        fab.channels
            .iter()
            .zip(&count)
            .filter(|(ch, _)| f(ch))
            .map(|(_, &k)| k)
            .collect()
    };
    Some((
        pick(&|ch| is_leaf(ch.src) && is_centre(ch.dst)),
        pick(&|ch| is_centre(ch.src) && is_leaf(ch.dst)),
    ))
}

/// The labels of universal routing's intermediate (centre) switches, `lo..=hi`.
pub fn universal_labels(fab: &Fabric) -> Option<(u16, u16)> {
    let (leaves, h, spines, _) = fab.shape.clos_dims()?;
    let n = leaves * h;
    Some((n as u16, (n + spines - 1) as u16))
}

/// A header-deletion hierarchy on the folded Clos with 1-byte headers: a packet carries
/// `[h + leaf, host within the leaf]` (`h` hosts per leaf; leaf labels sit above the host
/// numbers so one table holds both). A leaf switch owns its own label (a packet for a local
/// host loses it there and is routed on the second byte) and sends other leaf labels up;
/// centre switches route leaf labels down over links that delete the first header byte, so
/// the destination leaf routes on the second. Marks those links as deleting.
pub fn clos_hierarchy(fab: &mut Fabric, adaptive: bool) -> Option<HeaderTable> {
    let (leaves, h, spines, g) = fab.shape.clos_dims()?;
    let up = spines * g;
    let keys = h + leaves;
    let mut b = Builder::new(leaves + spines, keys);
    for leaf in 0..leaves {
        for p in 0..h {
            b.set(leaf, p, p as u16, 1);
        }
        for l in (0..leaves).filter(|&l| l != leaf) {
            if adaptive {
                b.set(leaf, h + l, h as u16, up as u16);
            } else {
                b.set(leaf, h + l, (h + l % up) as u16, 1);
            }
        }
    }
    for c in 0..spines {
        for l in 0..leaves {
            b.set(leaves + c, h + l, (l * g) as u16, g as u16);
        }
    }
    for ch in &mut fab.channels {
        if ch.src.0 >= leaves && ch.src.0 < leaves + spines && ch.dst.0 < leaves {
            ch.params.delete_header = true;
        }
    }
    let mut own = vec![(1, 0); (leaves + spines) as usize];
    for (leaf, o) in own.iter_mut().enumerate().take(leaves as usize) {
        *o = ((h + leaf as u32) as u16, (h + leaf as u32) as u16);
    }
    let headers = (0..leaves * h)
        .map(|d| vec![(h + d / h) as u16, (d % h) as u16])
        .collect();
    let name = if adaptive {
        "interval-hierarchy-adaptive"
    } else {
        "interval-hierarchy-deterministic"
    };
    Some(
        HeaderTable::new(name, b.build(adaptive), headers)
            .with_own(own)
            .with_width(1),
    )
}

/// Interval tables for the Macramé grid or torus (`Shape::Grid`): x first, then y, each step
/// on the group of links to the neighbour (see the module documentation for the torus).
pub fn grid(fab: &Fabric, adaptive: bool) -> Option<HeaderTable> {
    let Shape::Grid { k, wrap, conc, group } = fab.shape else {
        return None;
    };
    let n = k * k * conc;
    let mut b = Builder::new(k * k, n);
    for x in 0..k {
        for y in 0..k {
            let s = x * k + y;
            for d in 0..n {
                let t = d / conc;
                let (dx, dy) = (t / k, t % k);
                let dir = if dx != x {
                    Some(ring_step(k, wrap, x, dx, PLUS_X, MINUS_X))
                } else if dy != y {
                    Some(ring_step(k, wrap, y, dy, PLUS_Y, MINUS_Y))
                } else {
                    None
                };
                match dir {
                    Some(dir) => b.set(s, d, dir_port(conc, group, dir), group as u16),
                    None => b.set(s, d, (d % conc) as u16, 1),
                }
            }
        }
    }
    let table = b.build(adaptive);
    let name = match (wrap, adaptive) {
        (true, true) => "interval-torus-adaptive",
        (true, false) => "interval-torus-deterministic",
        (false, true) => "interval-grid-adaptive",
        (false, false) => "interval-grid-deterministic",
    };
    Some(HeaderTable::new(name, table, (0..n).map(|d| vec![d as u16]).collect()).with_width(header_width(n)))
}

/// The direction from position `a` to `b` in a line (`!wrap`) or a ring of `k`: in a ring,
/// the shorter one that does not pass through position 0 (ties: the + direction).
fn ring_step(k: u32, wrap: bool, a: u32, b: u32, plus: u32, minus: u32) -> u32 {
    if !wrap {
        return if b > a { plus } else { minus };
    }
    let plus_ok = a < b || b == 0;
    let minus_ok = a > b || a == 0;
    let dp = (b + k - a) % k;
    let dm = (a + k - b) % k;
    match (plus_ok, minus_ok) {
        (true, true) => {
            if dp <= dm {
                plus
            } else {
                minus
            }
        }
        (true, false) => plus,
        _ => minus,
    }
}

/// The tables of `routing` on `fab`, printed: interval tables on header values, or tables
/// of destination ranges. `None` for routing without tables (dimension order, source routes).
pub fn print_routing(fab: &Fabric, routing: &super::Routing) -> Option<String> {
    use std::fmt::Write;
    match routing {
        super::Routing::Header(t) => Some(print(fab, t)),
        super::Routing::Table(t) => {
            let mut s = String::new();
            let _ = writeln!(
                s,
                "destination tables ({}), {} switches",
                t.name(),
                fab.stage_base
            );
            for sw in 0..fab.stage_base {
                for class in 0..t.classes() {
                    let ranges: Vec<_> = t.ranges(sw, class).collect();
                    let _ = writeln!(
                        s,
                        "{}{}: {} ranges",
                        fab.nodes[sw as usize].name,
                        if t.classes() > 1 {
                            format!(" (input class {class})")
                        } else {
                            String::new()
                        },
                        ranges.len()
                    );
                    for (lo, hi, w) in ranges {
                        let _ = writeln!(s, "  hosts {lo:>5}..={hi:<5} → {}", ports_text(&w));
                    }
                }
            }
            Some(s)
        }
        _ => None,
    }
}

fn ports_text(w: &Want) -> String {
    let ports: Vec<u16> = w.ports.iter().collect();
    let vcs = if w.vc_lo == Want::KEEP_VC {
        ", on the VC it came in on".to_string()
    } else if w.vc_hi > 0 {
        format!(" vcs {}..={}", w.vc_lo, w.vc_hi)
    } else {
        String::new()
    };
    match ports.as_slice() {
        [p] => format!("port {p}{vcs}"),
        [a, .., b] if ports.len() == (*b - *a + 1) as usize => format!("ports {a}..={b} (group){vcs}"),
        _ => format!("ports {ports:?} (group){vcs}"),
    }
}

/// The interval table of every switch, as the STC104 would be programmed: one line per
/// range, `lo..=hi → port` or `→ ports a..=b (group)`, the labels a switch owns, and the
/// number of ranges against the STC104's limit.
pub fn print(fab: &Fabric, t: &HeaderTable) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "interval tables ({}), {}-byte headers, {} switches",
        t.name(),
        t.width(),
        fab.stage_base
    );
    for sw in 0..fab.stage_base {
        let ranges: Vec<_> = t.table().ranges(sw, 0).collect();
        let own = t.own(sw);
        let count = ranges.len() + own.is_some() as usize;
        let _ = writeln!(
            s,
            "{}: {count} intervals{}",
            fab.nodes[sw as usize].name,
            if count > STC104_INTERVALS {
                format!(" (more than the STC104's {STC104_INTERVALS})")
            } else {
                String::new()
            }
        );
        if let Some((lo, hi)) = own {
            let _ = writeln!(s, "  {lo:>5}..={hi:<5} → this switch (header deleted)");
        }
        for (lo, hi, w) in ranges {
            let _ = writeln!(s, "  {lo:>5}..={hi:<5} → {}", ports_text(&w));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_split_keeps_the_heaviest_part_light_and_contiguous() {
        // Uniform weights: equal halves.
        assert_eq!(even_split(&[2; 16], 2), [vec![0; 8], vec![1; 8]].concat());
        // A heavy first half (18 in all): the cut moves left of the middle, to 8 | 10 (and
        // 10 | 8 ties with it: the earlier cut is taken).
        let w = [2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1];
        let p = even_split(&w, 2);
        let sum = |k| {
            w.iter()
                .zip(&p)
                .filter(|(_, q)| **q == k)
                .map(|(x, _)| x)
                .sum::<u64>()
        };
        assert_eq!((sum(0), sum(1)), (8, 10), "{p:?}");
        // Parts are in order and every part index is below `parts`.
        assert!(p.windows(2).all(|x| x[0] <= x[1]) && p.iter().all(|&q| q < 2));
        // More parts than weights: some parts stay empty.
        assert_eq!(even_split(&[5, 5], 4).len(), 2);
        assert_eq!(even_split(&[], 3), Vec::<usize>::new());
    }

    #[test]
    fn ring_steps_avoid_passing_position_zero() {
        let k = 8;
        for a in 0..k {
            for b in 0..k {
                if a == b {
                    continue;
                }
                let d = ring_step(k, true, a, b, 0, 1);
                // Walk and check no intermediate position is 0.
                let mut p = a;
                loop {
                    p = if d == 0 { (p + 1) % k } else { (p + k - 1) % k };
                    if p == b {
                        break;
                    }
                    assert_ne!(p, 0, "{a} → {b} passes position 0");
                }
            }
        }
        assert_eq!(ring_step(8, true, 7, 0, 0, 1), 0, "wrap into position 0");
        assert_eq!(ring_step(8, true, 0, 6, 0, 1), 1, "wrap out of position 0");
        assert_eq!(ring_step(8, true, 2, 7, 0, 1), 0, "the long way round position 0");
    }
}

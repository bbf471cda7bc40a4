//! What a run leaves to read: the maps the ACs made, checked against the real topology, and
//! the route sets they serve.

use super::{Atomic, MapResult, Mode};
use crate::control::graph::{End, MGraph};
use crate::control::routes::RouteSet;
use std::collections::BTreeSet;

impl Atomic<'_> {
    /// The first map each AC made.
    pub fn maps(&self) -> Vec<MapResult> {
        self.acs.values().filter_map(|a| a.first.clone()).collect()
    }

    /// Which real node a map node is: by the mark the AC wrote into it (loop probes) or by
    /// following its path from the AC (flooding).
    pub fn resolve(&self, m: &MapResult) -> Vec<Option<u32>> {
        m.labels
            .iter()
            .map(|lab| match self.cfg.mode {
                Mode::Loops => {
                    let want = lab[0] as u32 | (lab[1] as u32) << 16;
                    (0..self.lan.nodes)
                        .find(|&x| self.progs.get(&(x, m.ac, m.epoch)).and_then(|p| p.mark) == Some(want))
                }
                Mode::Flood => {
                    let hi = self.truth.hi_of(m.ac)?;
                    let (mut node, port, _) = self.truth.hi[hi as usize];
                    if lab.len() < 2 || lab[1] != port {
                        return None;
                    }
                    for i in (2..lab.len()).step_by(2) {
                        match self.truth.out[node as usize][lab[i] as usize] {
                            Some(End::Node(n, r)) if r == lab[i + 1] => node = n,
                            _ => return None,
                        }
                    }
                    Some(node)
                }
            })
            .collect()
    }

    /// Whether a map equals the real topology: the same nodes, every output leading to the
    /// same place, the same HIs on the same ports.
    pub fn map_correct(&self, m: &MapResult) -> bool {
        self.compare(m).is_none()
    }

    /// The first difference between a map and the real topology, if any.
    pub fn compare(&self, m: &MapResult) -> Option<String> {
        let real = self.resolve(m);
        let t = &self.truth;
        if m.map.nodes() != t.nodes() {
            return Some(format!("{} nodes mapped, {} real", m.map.nodes(), t.nodes()));
        }
        let mut seen = BTreeSet::new();
        for (i, r) in real.iter().enumerate() {
            let Some(r) = r else {
                return Some(format!("map node {i} is no real node"));
            };
            if !seen.insert(*r) {
                return Some(format!("real node {r} mapped twice"));
            }
        }
        let addr = |g: &MGraph, e: Option<End>| {
            e.map(|x| match x {
                End::Hi(i) => End::Hi(g.hi[i as usize].2),
                other => other,
            })
        };
        for (i, r) in real.iter().enumerate() {
            let r = r.expect("checked");
            for p in 0..4 {
                let mine = addr(&m.map, m.map.out[i][p]).map(|e| match e {
                    End::Node(n, q) => End::Node(real[n as usize].unwrap_or(u32::MAX), q),
                    other => other,
                });
                let truth = addr(t, t.out[r as usize][p]);
                if mine != truth {
                    return Some(format!("node {r} port {p}: mapped {mine:?}, real {truth:?}"));
                }
            }
        }
        let mut a: Vec<(u32, u16, u32)> = m
            .map
            .hi
            .iter()
            .map(|&(n, p, x)| (real.get(n as usize).copied().flatten().unwrap_or(u32::MAX), p, x))
            .collect();
        let mut b = t.hi.clone();
        a.sort_by_key(|h| h.2);
        b.sort_by_key(|h| h.2);
        if a != b {
            return Some(format!("HIs differ: mapped {a:?}, real {b:?}"));
        }
        None
    }

    /// The route set of AC `h`'s last complete map, with that map.
    pub fn route_set(&self, h: u32) -> Option<(&MGraph, &RouteSet)> {
        let (g, s) = self.acs.get(&h)?.routes.as_ref()?;
        Some((g, s))
    }

    /// The real topology (as the agent's physics sees it).
    pub fn truth(&self) -> &MGraph {
        &self.truth
    }
}

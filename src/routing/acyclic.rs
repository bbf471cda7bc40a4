//! A dependency graph kept acyclic as it grows: the channel-dependency graph of a set of
//! routes placed one at a time (Dally & Seitz 1987: a routing whose channel-dependency
//! graph has no cycle cannot deadlock). Each vertex keeps the set of vertices it reaches
//! (its transitive closure, a bit set), so "would this edge close a cycle?" is one bit
//! test, and a whole route's new edges are checked together without copying the closure.
//! Both route placements use it: the ATOMIC route service's (`control::routes`, whose
//! resources are node outputs and memories) and the deadlock-free source routes of a
//! network without virtual channels ([`super::placed`], whose resources are channels).

use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Acyclic {
    words: usize,
    /// Per vertex, the vertices it reaches by one edge or more (a bit set of `words` words).
    reach: Vec<u64>,
    /// Edges with the number of routes that make them.
    edges: BTreeMap<(u32, u32), u32>,
}

impl Acyclic {
    /// An empty graph on vertices `0..vertices`.
    pub fn new(vertices: usize) -> Acyclic {
        let words = vertices.div_ceil(64).max(1);
        Acyclic {
            words,
            reach: vec![0; vertices * words],
            edges: BTreeMap::new(),
        }
    }

    /// Whether `a` reaches `b` by one edge or more.
    #[inline]
    pub fn reaches(&self, a: u32, b: u32) -> bool {
        self.reach[a as usize * self.words + b as usize / 64] >> (b % 64) & 1 == 1
    }

    /// Whether edge `a → b` keeps the graph acyclic (`None`: nothing before `b`).
    #[inline]
    pub fn allows(&self, a: Option<u32>, b: u32) -> bool {
        a.is_none_or(|a| a != b && !self.reaches(b, a))
    }

    /// Whether the graph has edge `a → b`.
    pub fn has_edge(&self, a: u32, b: u32) -> bool {
        self.edges.contains_key(&(a, b))
    }

    /// Edges in the graph.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    fn link(&mut self, a: u32, b: u32) {
        let w = self.words;
        let mut add = self.reach[b as usize * w..(b as usize + 1) * w].to_vec();
        add[b as usize / 64] |= 1 << (b % 64);
        for x in 0..self.reach.len() / w {
            if x == a as usize || self.reaches(x as u32, a) {
                for (r, m) in self.reach[x * w..(x + 1) * w].iter_mut().zip(&add) {
                    *r |= m;
                }
            }
        }
    }

    /// Whether the edges of `path` (each vertex to the next) can all be added, and if not,
    /// the first that would close a cycle with the graph and the path's edges before it.
    /// The path's edges not yet in the graph are few: whether `b` reaches `a` through
    /// them is a search over those edges, each step a look-up in the closure.
    pub fn fits(&self, path: &[u32]) -> Result<(), (u32, u32)> {
        let mut new: Vec<(u32, u32)> = Vec::new();
        for w in path.windows(2) {
            let (a, b) = (w[0], w[1]);
            if self.has_edge(a, b) {
                continue;
            }
            if a == b || self.reaches_with(b, a, &new) {
                return Err((a, b));
            }
            new.push((a, b));
        }
        Ok(())
    }

    /// Whether `from` reaches `to` in the graph with the edges `extra` added.
    fn reaches_with(&self, from: u32, to: u32, extra: &[(u32, u32)]) -> bool {
        let mut used = vec![false; extra.len()];
        let mut stack = vec![from];
        while let Some(x) = stack.pop() {
            if x == to || self.reaches(x, to) {
                return true;
            }
            for (i, &(u, v)) in extra.iter().enumerate() {
                if !used[i] && (x == u || self.reaches(x, u)) {
                    used[i] = true;
                    stack.push(v);
                }
            }
        }
        false
    }

    /// Adds the edges of `path`. If one would close a cycle, it is refused and returned,
    /// and nothing is added.
    pub fn add(&mut self, path: &[u32]) -> Result<(), (u32, u32)> {
        self.fits(path)?;
        for w in path.windows(2) {
            if !self.edges.contains_key(&(w[0], w[1])) {
                self.link(w[0], w[1]);
            }
            *self.edges.entry((w[0], w[1])).or_insert(0) += 1;
        }
        Ok(())
    }

    /// Takes the edges of `path` out again (an edge goes when no route makes it any more).
    pub fn remove(&mut self, path: &[u32]) {
        if self.release(path) {
            self.rebuild();
        }
    }

    /// As [`Self::remove`], but the closure is left as it was until [`Self::rebuild`]:
    /// it may then still say that a vertex reaches one it no longer does, which only
    /// refuses edges that would have been allowed (safe, and cheap when many routes are
    /// taken out one after another). Returns whether an edge went.
    pub fn release(&mut self, path: &[u32]) -> bool {
        let mut gone = false;
        for w in path.windows(2) {
            if let Some(c) = self.edges.get_mut(&(w[0], w[1])) {
                *c -= 1;
                if *c == 0 {
                    self.edges.remove(&(w[0], w[1]));
                    gone = true;
                }
            }
        }
        gone
    }

    /// Recomputes the closure from the edges: each vertex reaches its successors and what
    /// they reach, taken in reverse topological order (one pass over the edges).
    pub fn rebuild(&mut self) {
        let v = self.reach.len() / self.words;
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); v];
        let mut indeg = vec![0u32; v];
        for &(a, b) in self.edges.keys() {
            succ[a as usize].push(b);
            indeg[b as usize] += 1;
        }
        let mut order: Vec<u32> = (0..v as u32).filter(|&x| indeg[x as usize] == 0).collect();
        let mut i = 0;
        while i < order.len() {
            let a = order[i] as usize;
            for &b in &succ[a] {
                indeg[b as usize] -= 1;
                if indeg[b as usize] == 0 {
                    order.push(b);
                }
            }
            i += 1;
        }
        debug_assert_eq!(order.len(), v, "the graph is acyclic");
        let w = self.words;
        self.reach.fill(0);
        for &a in order.iter().rev() {
            let a = a as usize;
            for &b in &succ[a] {
                let b = b as usize;
                let (lo, hi) = self.reach.split_at_mut(a.max(b) * w);
                let (ra, rb) = if a < b {
                    (&mut lo[a * w..(a + 1) * w], &hi[..w])
                } else {
                    (&mut hi[..w], &lo[b * w..(b + 1) * w])
                };
                for (x, y) in ra.iter_mut().zip(rb) {
                    *x |= y;
                }
                ra[b / 64] |= 1 << (b % 64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_ring_of_routes_is_refused_at_the_edge_that_closes_it() {
        let mut g = Acyclic::new(4);
        g.add(&[0, 1, 2]).unwrap();
        g.add(&[2, 3]).unwrap();
        assert_eq!(g.fits(&[3, 0]), Err((3, 0)));
        // The path's own edges count: 3 → 0 → 1 closes nothing alone, 1 → 3 then does.
        let mut h = Acyclic::new(4);
        assert_eq!(h.fits(&[0, 1, 3, 0]), Err((3, 0)));
        h.add(&[1, 3]).unwrap();
        assert_eq!(h.fits(&[3, 0, 1]), Err((0, 1)));
        // Taking a route out frees its edges.
        g.remove(&[2, 3]);
        g.add(&[3, 0]).unwrap();
        assert!(g.reaches(3, 2) && !g.reaches(2, 3));
    }

    proptest! {
        /// The closure rebuilt from the edges is the one kept edge by edge.
        #[test]
        fn rebuilt_closure_is_the_incremental_one(
            routes in prop::collection::vec(prop::collection::vec(0u32..70, 2..6), 0..20),
        ) {
            let mut g = Acyclic::new(70);
            for r in &routes {
                let _ = g.add(r);
            }
            let mut h = g.clone();
            h.rebuild();
            prop_assert_eq!(&g.reach, &h.reach);
        }

        /// `fits` says exactly whether the graph with the path's edges is acyclic, and
        /// names the first edge (in path order) that closes a cycle with those before it.
        #[test]
        fn fits_agrees_with_adding_edge_by_edge(
            routes in prop::collection::vec(prop::collection::vec(0u32..8, 2..6), 0..12),
            path in prop::collection::vec(0u32..8, 2..7),
        ) {
            let mut g = Acyclic::new(8);
            for r in &routes {
                let _ = g.add(r);
            }
            // Edge by edge, each checked against the closure with those before it added.
            let mut t = g.clone();
            let mut want = Ok(());
            for w in path.windows(2) {
                if !t.allows(Some(w[0]), w[1]) && !t.has_edge(w[0], w[1]) {
                    want = Err((w[0], w[1]));
                    break;
                }
                if !t.has_edge(w[0], w[1]) {
                    t.link(w[0], w[1]);
                    t.edges.insert((w[0], w[1]), 1);
                }
            }
            prop_assert_eq!(g.fits(&path), want);
        }
    }
}

//! Static deadlock check: the channel dependency graph of a routing on a fabric (Dally &
//! Seitz 1987; Duato 1993 for adaptive routing, conservatively: every admissible choice is a
//! dependency, except where the routing names an escape output, the one dependency of a head
//! that may take it: see [`super::Escape`]). A node is a (channel, virtual channel); an edge c1 → c2 means a packet
//! holding c1 may wait for c2. The graph is built by following, for every destination, every
//! state the routing can actually reach from the sources, so unreachable table entries do not
//! make false cycles. Wormhole routing with an acyclic graph cannot deadlock; a cycle is
//! named, channel by channel. The same walk finds destinations the routing cannot reach.

use super::{At, Header, Routing};
use crate::fabric::{ChannelId, Fabric};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::VecDeque;

/// A channel and one of its virtual channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChanVc {
    pub channel: ChannelId,
    pub vc: u8,
}

/// What the check found.
#[derive(Clone, Debug, Default)]
pub struct CdgReport {
    /// (channel, VC) pairs some packet can use.
    pub used: usize,
    /// Distinct dependencies.
    pub edges: usize,
    /// A cycle of dependencies, if the graph has one (first element repeated implicitly).
    pub cycle: Option<Vec<ChanVc>>,
    /// Routing failures: (source host, destination host, what went wrong); at most 20 kept.
    pub failures: Vec<(u32, u32, String)>,
    /// Number of routing failures in all.
    pub failure_count: usize,
}

impl CdgReport {
    pub fn deadlock_free(&self) -> bool {
        self.cycle.is_none()
    }

    /// The cycle as `s0:1→s1:0 (vc 0) → …`.
    pub fn describe_cycle(&self, fab: &Fabric) -> Option<String> {
        self.cycle.as_ref().map(|c| describe(fab, c))
    }
}

/// Formats a list of channel VCs as a chain.
pub fn describe(fab: &Fabric, chain: &[ChanVc]) -> String {
    let mut s: Vec<String> = chain
        .iter()
        .map(|cv| format!("{} (vc {})", fab.channel_name(cv.channel), cv.vc))
        .collect();
    if let Some(first) = s.first().cloned() {
        s.push(first);
    }
    s.join(" → ")
}

struct Graph {
    base: Vec<u32>,
    adj: Vec<Vec<u32>>,
    reached: Vec<bool>,
}

impl Graph {
    fn new(fab: &Fabric) -> Graph {
        let mut base = Vec::with_capacity(fab.channels.len() + 1);
        let mut n = 0u32;
        for c in &fab.channels {
            base.push(n);
            n += c.params.vcs as u32;
        }
        base.push(n);
        Graph {
            base,
            adj: vec![Vec::new(); n as usize],
            reached: vec![false; n as usize],
        }
    }

    fn edge(&mut self, a: u32, b: u32) {
        let v = &mut self.adj[a as usize];
        if !v.contains(&b) {
            v.push(b);
        }
    }

    fn chan_vc(&self, id: u32) -> ChanVc {
        let c = self.base.partition_point(|&b| b <= id) - 1;
        ChanVc {
            channel: ChannelId(c as u32),
            vc: (id - self.base[c]) as u8,
        }
    }
}

/// Builds the dependency graph of `routing` on `fab` and looks for a cycle.
pub fn check(fab: &Fabric, routing: &Routing) -> CdgReport {
    check_with(fab, routing, &|_| {})
}

/// The size of the check's walk in steps of about 7 ns on one core of this machine: for
/// routing by destination, destinations × (channel, VC) states; for routing on header
/// symbols, host pairs × 512 (a 32×32 mesh's source routes take 3.3 µs a pair: each path
/// built, then walked).
pub fn walk_steps(fab: &Fabric, routing: &Routing) -> u64 {
    let hosts = fab.num_hosts() as u64;
    if routing.uses_header() {
        return hosts * hosts * 512;
    }
    let states: u64 = fab.channels.iter().map(|c| c.params.vcs as u64).sum();
    hosts * states * routing.draws().max(1) as u64
}

/// About how long [`check`] takes on this machine [s]: 7 ns a step on one core, the
/// destination walk shared out among the cores.
pub fn estimate_seconds(fab: &Fabric, routing: &Routing) -> f64 {
    let cores = if routing.uses_header() { 1 } else { cores() };
    walk_steps(fab, routing) as f64 * 7e-9 / cores as f64
}

/// The cores the destination walk uses (at most 8).
fn cores() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .clamp(1, 8)
}

/// [`check`], telling `progress` the fraction of the walk done now and then.
pub fn check_with(fab: &Fabric, routing: &Routing, progress: &(dyn Fn(f64) + Sync)) -> CdgReport {
    // Threads pay from a few million steps on.
    let threads = if walk_steps(fab, routing) < 1 << 22 {
        1
    } else {
        cores()
    };
    check_threads(fab, routing, (threads, false), progress)
}

/// [`check`] with every admissible output a dependency, an escape output's too (see
/// [`super::Escape`]): the graph a routing without escape channels would need acyclic.
pub fn check_all_choices(fab: &Fabric, routing: &Routing) -> CdgReport {
    check_threads(fab, routing, (1, true), &|_| {})
}

/// [`check_with`] on `threads` threads at most (one for a small walk); `all_choices`: see
/// [`check_all_choices`].
fn check_threads(
    fab: &Fabric,
    routing: &Routing,
    (threads, all_choices): (usize, bool),
    progress: &(dyn Fn(f64) + Sync),
) -> CdgReport {
    let mut g = Graph::new(fab);
    let mut rep = CdgReport::default();
    let nh = fab.num_hosts() as u32;
    if routing.uses_header() {
        walk_headers(fab, routing, &mut g, &mut rep, nh, progress);
    } else {
        walk_destinations(
            fab,
            routing,
            &mut g,
            &mut rep,
            (nh, threads, all_choices),
            progress,
        );
    }
    rep.used = g.reached.iter().filter(|&&r| r).count();
    rep.edges = g.adj.iter().map(|v| v.len()).sum();
    rep.cycle = find_cycle(&g.adj).map(|c| c.into_iter().map(|id| g.chan_vc(id)).collect());
    rep
}

fn fail(rep: &mut CdgReport, s: u32, d: u32, m: String) {
    rep.failure_count += 1;
    if rep.failures.len() < 20 {
        rep.failures.push((s, d, m));
    }
}

/// Routing by destination: one breadth-first walk per destination (and per value of a
/// randomized routing's draw, [`Routing::draws`]) over every (channel, VC) a packet to it
/// can hold, from all sources at once. That is O(hosts × channels) steps
/// (about 1.6 G for 16,384 hosts), so the walk allocates nothing per step and the
/// destinations are shared out among the machine's cores, each with its own graph: the
/// edge lists are merged and sorted, and the failures kept in destination order, so the
/// report does not depend on the number of cores. `progress` hears the fraction done.
fn walk_destinations(
    fab: &Fabric,
    routing: &Routing,
    g: &mut Graph,
    rep: &mut CdgReport,
    (nh, threads, all_choices): (u32, usize, bool),
    progress: &(dyn Fn(f64) + Sync),
) {
    let n = g.adj.len();
    // Per (channel, VC) state: its channel.
    let mut chan_of = vec![0u32; n];
    for (c, w) in g.base.windows(2).enumerate() {
        chan_of[w[0] as usize..w[1] as usize].fill(c as u32);
    }
    let done = std::sync::atomic::AtomicU32::new(0);
    // A randomized routing walks each destination once per value of the packet's draw.
    let draws = routing.draws().max(1);
    let walks = nh * draws;
    // Per channel, what a step needs of it, in one small record: where it leads (a switch
    // and port, or a host), its class and its first state.
    #[derive(Clone, Copy)]
    struct Hop {
        node: u32,
        port: u16,
        class: u8,
        to_host: bool,
    }
    let hops: Vec<Hop> = fab
        .channels
        .iter()
        .enumerate()
        .map(|(c, ch)| match fab.host_of(ch.dst) {
            Some(h) => Hop {
                node: h,
                port: 0,
                class: 0,
                to_host: true,
            },
            None => Hop {
                node: ch.dst.0,
                port: ch.dst_port,
                class: routing.channel_class(c),
                to_host: false,
            },
        })
        .collect();
    // The first state of the channel out of each node's port (`NONE`: no channel there).
    const NONE: u32 = u32::MAX;
    let mut port_base = Vec::with_capacity(fab.out_chan.len() + 1);
    let mut out_state = Vec::new();
    for outs in &fab.out_chan {
        port_base.push(out_state.len() as u32);
        out_state.extend(outs.iter().map(|o| o.map_or(NONE, |c| c.0)));
    }
    port_base.push(out_state.len() as u32);
    let part = |lo: u32, hi: u32| {
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut reached = vec![false; n];
        let mut part_rep = CdgReport::default();
        let mut seen = vec![u32::MAX; n];
        let mut origin = vec![0u32; n];
        let mut q: Vec<u32> = Vec::with_capacity(n);
        for w in lo..hi {
            let (d, draw) = (w / draws, w % draws);
            q.clear();
            for s in (0..nh).filter(|&s| s != d) {
                let c = fab.injection_channel(s);
                for id in g.base[c.idx()]..g.base[c.idx() + 1] {
                    if seen[id as usize] != w {
                        seen[id as usize] = w;
                        origin[id as usize] = s;
                        q.push(id);
                    }
                }
            }
            let mut next = 0;
            while next < q.len() {
                let a = q[next];
                next += 1;
                reached[a as usize] = true;
                let src = origin[a as usize];
                let c = chan_of[a as usize] as usize;
                let v = (a - g.base[c]) as u8;
                let hop = hops[c];
                if hop.to_host {
                    if hop.node != d {
                        let m = format!("delivered to host {} instead", hop.node);
                        fail(&mut part_rep, src, d, m);
                    }
                    continue;
                }
                let at = At {
                    switch: hop.node,
                    in_port: hop.port,
                    in_vc: v,
                    in_class: hop.class,
                };
                let h = Header {
                    dst: d,
                    sym: &[],
                    draw,
                };
                let want = match routing.route(fab, at, h) {
                    Ok(w) if !w.ports.is_empty() => w,
                    Ok(_) => {
                        let m = format!("switch s{} returned no output", hop.node);
                        fail(&mut part_rep, src, d, m);
                        continue;
                    }
                    Err(e) => {
                        fail(&mut part_rep, src, d, e.to_string());
                        continue;
                    }
                };
                let (p0, p1) = (port_base[hop.node as usize], port_base[hop.node as usize + 1]);
                // With an escape output, a head waits for its other outputs and that one
                // together, and is sure to move once that one is free: its dependency is
                // the escape alone (Duato). It may still hold any of them next.
                let escape = want.escape.is_some();
                for p in want.all_ports().iter() {
                    let oc = if p0 + (p as u32) < p1 {
                        out_state[(p0 + p as u32) as usize]
                    } else {
                        NONE
                    };
                    if oc == NONE {
                        let m = format!("switch s{} routes to port {p}, which leads nowhere", hop.node);
                        fail(&mut part_rep, src, d, m);
                        continue;
                    }
                    let (b0, b1) = (g.base[oc as usize], g.base[oc as usize + 1]);
                    let [main, esc] = want.ranges_at(p);
                    let tiers = [(main, all_choices || !escape), (esc, true)];
                    for ((vc_lo, vc_hi, _), depends) in tiers.into_iter().filter_map(|(r, d)| Some((r?, d))) {
                        let hi = (b0 + vc_hi as u32).min(b1 - 1);
                        for b in b0 + vc_lo as u32..=hi {
                            let out = &mut adj[a as usize];
                            if depends && !out.contains(&b) {
                                out.push(b);
                            }
                            if seen[b as usize] != w {
                                seen[b as usize] = w;
                                origin[b as usize] = src;
                                q.push(b);
                            }
                        }
                    }
                }
            }
            let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if k.is_multiple_of(64) {
                progress(k as f64 / walks as f64);
            }
        }
        (adj, reached, part_rep)
    };
    let per = walks.div_ceil(threads as u32).max(1);
    let parts: Vec<_> = std::thread::scope(|sc| {
        let part = &part;
        let handles: Vec<_> = (0..threads as u32)
            .map(|t| (t * per, ((t + 1) * per).min(walks)))
            .filter(|(lo, hi)| lo < hi)
            .map(|(lo, hi)| sc.spawn(move || part(lo, hi)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a check thread panicked"))
            .collect()
    });
    for (adj, reached, part_rep) in parts {
        for (mine, theirs) in g.adj.iter_mut().zip(adj) {
            for b in theirs {
                if !mine.contains(&b) {
                    mine.push(b);
                }
            }
        }
        for (r, x) in g.reached.iter_mut().zip(reached) {
            *r |= x;
        }
        rep.failure_count += part_rep.failure_count;
        for f in part_rep.failures {
            if rep.failures.len() < 20 {
                rep.failures.push(f);
            }
        }
    }
    for out in &mut g.adj {
        out.sort_unstable();
    }
}

/// Routing on header symbols: packets that start with the same header (and destination)
/// share one breadth-first walk, whose states are (channel, VC, header left). The header
/// left is the starting one less some symbols, the first perhaps rewritten (header
/// operations advance and set): a state is kept as (channel VC, symbols consumed, the
/// rewritten first symbol), in one 64-bit key, and nothing is allocated per step.
fn walk_headers(
    fab: &Fabric,
    routing: &Routing,
    g: &mut Graph,
    rep: &mut CdgReport,
    nh: u32,
    progress: &(dyn Fn(f64) + Sync),
) {
    // Every pair's header in one arena; pairs sorted by (destination, header, source).
    let mut arena: Vec<u16> = Vec::new();
    let mut pairs: Vec<(u32, usize, usize, u32)> = Vec::new();
    let mut hdr = Vec::new();
    for s in 0..nh {
        for d in (0..nh).filter(|&d| d != s && routing.has_route(s, d)) {
            match routing.header_for(fab, s, d, &mut hdr) {
                Ok(()) if hdr.len() >= 1 << 15 => fail(
                    rep,
                    s,
                    d,
                    format!("a header of {} symbols is too long", hdr.len()),
                ),
                Ok(()) => {
                    pairs.push((d, arena.len(), hdr.len(), s));
                    arena.extend_from_slice(&hdr);
                }
                Err(e) => fail(rep, s, d, e.to_string()),
            }
        }
    }
    let key = |p: &(u32, usize, usize, u32)| (p.0, &arena[p.1..p.1 + p.2], p.3);
    pairs.sort_unstable_by(|x, y| key(x).cmp(&key(y)));
    /// No rewritten first symbol.
    const KEEP: u32 = 1 << 16;
    let pack = |a: u32, off: usize, first: u32| (a as u64) << 32 | (off as u64) << 17 | first as u64;
    let mut seen: std::collections::HashSet<u64, std::hash::BuildHasherDefault<Mix>> = Default::default();
    let mut q: VecDeque<(u32, usize, u32, u32)> = VecDeque::new();
    let mut sym: Vec<u16> = Vec::new();
    let mut i = 0;
    while i < pairs.len() {
        let (d, h_at, h_len, _) = pairs[i];
        let h0 = &arena[h_at..h_at + h_len];
        let mut j = i;
        while j < pairs.len() && pairs[j].0 == d && &arena[pairs[j].1..pairs[j].1 + pairs[j].2] == h0 {
            j += 1;
        }
        if seen.capacity() > 4096 && seen.len() < seen.capacity() / 8 {
            seen.shrink_to(1024);
        }
        seen.clear();
        q.clear();
        for &(_, _, _, s) in &pairs[i..j] {
            let c = fab.injection_channel(s);
            for a in g.base[c.idx()]..g.base[c.idx() + 1] {
                if seen.insert(pack(a, 0, KEEP)) {
                    q.push_back((a, 0, KEEP, s));
                }
            }
        }
        while let Some((a, off, first, src)) = q.pop_front() {
            g.reached[a as usize] = true;
            let c = g.chan_vc(a);
            let ch = &fab.channels[c.channel.idx()];
            if let Some(h) = fab.host_of(ch.dst) {
                if h != d {
                    fail(rep, src, d, format!("delivered to host {h} instead"));
                }
                continue;
            }
            // The header left.
            sym.clear();
            sym.extend_from_slice(&h0[off..]);
            if first != KEEP {
                sym[0] = first as u16;
            }
            let at = At {
                switch: ch.dst.0,
                in_port: ch.dst_port,
                in_vc: c.vc,
                in_class: routing.channel_class(c.channel.idx()),
            };
            let hdr = Header {
                dst: d,
                sym: &sym,
                draw: 0,
            };
            let want = match routing.route(fab, at, hdr) {
                Ok(w) if !w.ports.is_empty() => w,
                Ok(_) => {
                    fail(rep, src, d, format!("switch s{} returned no output", ch.dst.0));
                    continue;
                }
                Err(e) => {
                    fail(rep, src, d, e.to_string());
                    continue;
                }
            };
            for p in want.ports.iter() {
                let Some(oc) = fab.out_chan[ch.dst.idx()].get(p as usize).copied().flatten() else {
                    let m = format!("switch s{} routes to port {p}, which leads nowhere", ch.dst.0);
                    fail(rep, src, d, m);
                    continue;
                };
                let mut op = routing.header_op(fab, at, hdr, p);
                if fab.channels[oc.idx()].params.delete_header {
                    op.advance += 1;
                }
                // The header it leaves with: symbols consumed, then its first rewritten.
                let (off2, mut first2) = if op.advance == 0 {
                    (off, first)
                } else {
                    ((off + op.advance as usize).min(h0.len()), KEEP)
                };
                if let Some(x) = op.set
                    && off2 < h0.len()
                {
                    first2 = x as u32;
                }
                if first2 != KEEP && h0[off2] as u32 == first2 {
                    first2 = KEEP;
                }
                let (b0, b1) = (g.base[oc.idx()], g.base[oc.idx() + 1]);
                for b in b0 + want.vc_lo as u32..=(b0 + want.vc_hi as u32).min(b1 - 1) {
                    g.edge(a, b);
                    if seen.insert(pack(b, off2, first2)) {
                        q.push_back((b, off2, first2, src));
                    }
                }
            }
        }
        if i / 256 != j / 256 {
            progress(j as f64 / pairs.len() as f64);
        }
        i = j;
    }
}

/// A hasher for the walk's 64-bit state keys: a multiply and a fold (the keys are not
/// chosen by an adversary).
#[derive(Default)]
struct Mix(u64);

impl std::hash::Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// A cycle of a directed graph given as adjacency lists, if there is one.
pub fn find_cycle(adj: &[Vec<u32>]) -> Option<Vec<u32>> {
    let mut pg: DiGraph<(), ()> = DiGraph::with_capacity(adj.len(), 0);
    for _ in 0..adj.len() {
        pg.add_node(());
    }
    for (a, outs) in adj.iter().enumerate() {
        for &b in outs {
            if a as u32 == b {
                return Some(vec![b]);
            }
            pg.add_edge(NodeIndex::new(a), NodeIndex::new(b as usize), ());
        }
    }
    // Smallest strongly connected component with more than one node, for a short report.
    let scc = petgraph::algo::tarjan_scc(&pg)
        .into_iter()
        .filter(|c| c.len() > 1)
        .min_by_key(|c| (c.len(), c.iter().map(|n| n.index()).min()))?;
    let mut in_scc = vec![false; adj.len()];
    for n in &scc {
        in_scc[n.index()] = true;
    }
    // Shortest cycle through the SCC's lowest node: breadth-first back to it.
    let start = scc.iter().map(|n| n.index()).min()? as u32;
    let mut prev = vec![u32::MAX; adj.len()];
    let mut q = VecDeque::from([start]);
    while let Some(u) = q.pop_front() {
        for &v in &adj[u as usize] {
            if !in_scc[v as usize] {
                continue;
            }
            if v == start {
                let mut cyc = vec![u];
                let mut x = u;
                while x != start {
                    x = prev[x as usize];
                    cyc.push(x);
                }
                cyc.reverse();
                return Some(cyc);
            }
            if prev[v as usize] == u32::MAX {
                prev[v as usize] = u;
                q.push_back(v);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk shared out among threads reports what one thread does: the same
    /// dependencies, cycle and failures.
    #[test]
    fn threads_change_nothing() {
        let nets = [
            // Dimension order on a torus without datelines: a cycle.
            "[topology]\nkind = \"torus\"\nk = [6, 5]\n[channel]\nvcs = 1\n[routing]\ndateline = false\n",
            // Up*/down* on a fat tree with two VCs, adaptive.
            "[topology]\nkind = \"fat-tree\"\nk = 4\nn = 3\n[channel]\nvcs = 2\n[routing]\nadaptive = true\n",
        ];
        for net in nets {
            let text = format!("{net}[traffic]\nload = 0.1\n");
            let spec = crate::config::load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap();
            let run = |t| check_threads(&spec.fabric, &spec.routing, (t, false), &|_| {});
            let one = run(1);
            for t in [2, 3, 7] {
                let many = run(t);
                assert_eq!((one.used, one.edges), (many.used, many.edges), "{net}");
                assert_eq!(one.cycle, many.cycle, "{net}");
                assert_eq!(one.failures, many.failures, "{net}");
            }
            assert!(one.used > 0 && one.edges > 0);
            assert_eq!(one.cycle.is_some(), net.contains("torus"), "{net}");
        }
    }

    #[test]
    fn finds_a_cycle_and_none_in_a_dag() {
        let adj = vec![vec![1], vec![2], vec![0, 3], vec![]];
        let c = find_cycle(&adj).unwrap();
        assert_eq!(c, vec![0, 1, 2]);
        let dag = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert!(find_cycle(&dag).is_none());
        assert_eq!(find_cycle(&[vec![0]]), Some(vec![0]));
    }
}

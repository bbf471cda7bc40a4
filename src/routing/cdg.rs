//! Static deadlock check: the channel dependency graph of a routing on a fabric (Dally &
//! Seitz 1987; Duato 1993 for adaptive routing, conservatively: every admissible choice is a
//! dependency). A node is a (channel, virtual channel); an edge c1 → c2 means a packet
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

    fn id(&self, c: ChannelId, vc: u8) -> u32 {
        self.base[c.idx()] + vc as u32
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

/// The size of the check's walk: destinations × (channel, VC) states. It takes about 7 ns
/// a step on one core of this machine.
pub fn walk_steps(fab: &Fabric) -> u64 {
    let states: u64 = fab.channels.iter().map(|c| c.params.vcs as u64).sum();
    fab.num_hosts() as u64 * states
}

/// [`check`], telling `progress` the fraction of the walk done now and then.
pub fn check_with(fab: &Fabric, routing: &Routing, progress: &(dyn Fn(f64) + Sync)) -> CdgReport {
    // Threads pay from a few million steps on.
    let threads = if walk_steps(fab) < 1 << 22 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .clamp(1, 8)
    };
    check_threads(fab, routing, threads, progress)
}

/// [`check_with`] on `threads` threads at most (one for a small walk).
fn check_threads(
    fab: &Fabric,
    routing: &Routing,
    threads: usize,
    progress: &(dyn Fn(f64) + Sync),
) -> CdgReport {
    let mut g = Graph::new(fab);
    let mut rep = CdgReport::default();
    let nh = fab.num_hosts() as u32;
    if routing.uses_header() {
        walk_headers(fab, routing, &mut g, &mut rep, nh);
    } else {
        walk_destinations(fab, routing, &mut g, &mut rep, (nh, threads), progress);
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

/// Routing by destination: one breadth-first walk per destination over every (channel,
/// VC) a packet to it can hold, from all sources at once. That is O(hosts × channels) steps
/// (about 1.6 G for 16,384 hosts), so the walk allocates nothing per step and the
/// destinations are shared out among the machine's cores, each with its own graph: the
/// edge lists are merged and sorted, and the failures kept in destination order, so the
/// report does not depend on the number of cores. `progress` hears the fraction done.
fn walk_destinations(
    fab: &Fabric,
    routing: &Routing,
    g: &mut Graph,
    rep: &mut CdgReport,
    (nh, threads): (u32, usize),
    progress: &(dyn Fn(f64) + Sync),
) {
    let n = g.adj.len();
    // Per (channel, VC) state: its channel.
    let mut chan_of = vec![0u32; n];
    for (c, w) in g.base.windows(2).enumerate() {
        chan_of[w[0] as usize..w[1] as usize].fill(c as u32);
    }
    let done = std::sync::atomic::AtomicU32::new(0);
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
        for d in lo..hi {
            q.clear();
            for s in (0..nh).filter(|&s| s != d) {
                let c = fab.injection_channel(s);
                for id in g.base[c.idx()]..g.base[c.idx() + 1] {
                    if seen[id as usize] != d {
                        seen[id as usize] = d;
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
                let want = match routing.route(fab, at, Header { dst: d, sym: &[] }) {
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
                for p in want.ports.iter() {
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
                    let hi = (b0 + want.vc_hi as u32).min(b1 - 1);
                    for b in b0 + want.vc_lo as u32..=hi {
                        let out = &mut adj[a as usize];
                        if !out.contains(&b) {
                            out.push(b);
                        }
                        if seen[b as usize] != d {
                            seen[b as usize] = d;
                            origin[b as usize] = src;
                            q.push(b);
                        }
                    }
                }
            }
            let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if k.is_multiple_of(64) {
                progress(k as f64 / nh as f64);
            }
        }
        (adj, reached, part_rep)
    };
    let per = nh.div_ceil(threads as u32).max(1);
    let parts: Vec<_> = std::thread::scope(|sc| {
        let part = &part;
        let handles: Vec<_> = (0..threads as u32)
            .map(|t| (t * per, ((t + 1) * per).min(nh)))
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

/// The outputs a packet to `d` holding (`c`, `v`) with header `sym` may take next, with the
/// header it leaves with; `None` when it has arrived (or cannot go on: recorded in `rep`).
#[allow(clippy::too_many_arguments)]
fn step(
    fab: &Fabric,
    routing: &Routing,
    rep: &mut CdgReport,
    src: u32,
    d: u32,
    c: ChannelId,
    v: u8,
    sym: &[u16],
) -> Option<Vec<(ChannelId, u8, Vec<u16>)>> {
    let ch = &fab.channels[c.idx()];
    if let Some(h) = fab.host_of(ch.dst) {
        if h != d {
            fail(rep, src, d, format!("delivered to host {h} instead"));
        }
        return None;
    }
    let at = At {
        switch: ch.dst.0,
        in_port: ch.dst_port,
        in_vc: v,
        in_class: routing.channel_class(c.idx()),
    };
    let hdr = Header { dst: d, sym };
    let want = match routing.route(fab, at, hdr) {
        Ok(w) if !w.ports.is_empty() => w,
        Ok(_) => {
            fail(rep, src, d, format!("switch s{} returned no output", ch.dst.0));
            return None;
        }
        Err(e) => {
            fail(rep, src, d, e.to_string());
            return None;
        }
    };
    let mut outs = Vec::new();
    for p in want.ports.iter() {
        let Some(oc) = fab.out_chan[ch.dst.idx()].get(p as usize).copied().flatten() else {
            fail(
                rep,
                src,
                d,
                format!("switch s{} routes to port {p}, which leads nowhere", ch.dst.0),
            );
            continue;
        };
        let next = if routing.uses_header() {
            let mut op = routing.header_op(fab, at, hdr, p);
            if fab.channels[oc.idx()].params.delete_header {
                op.advance += 1;
            }
            let mut rest: Vec<u16> = sym.get(op.advance as usize..).unwrap_or(&[]).to_vec();
            if let (Some(x), Some(first)) = (op.set, rest.first_mut()) {
                *first = x;
            }
            rest
        } else {
            Vec::new()
        };
        let vcs = fab.channels[oc.idx()].params.vcs;
        for w in want.vc_lo..=want.vc_hi.min(vcs - 1) {
            outs.push((oc, w, next.clone()));
        }
    }
    Some(outs)
}

/// Routing on header symbols: packets that start with the same header (and destination)
/// share one breadth-first walk, whose states are (channel, VC, header left).
fn walk_headers(fab: &Fabric, routing: &Routing, g: &mut Graph, rep: &mut CdgReport, nh: u32) {
    let mut groups: std::collections::BTreeMap<(u32, Vec<u16>), Vec<u32>> = Default::default();
    let mut hdr = Vec::new();
    for s in 0..nh {
        for d in (0..nh).filter(|&d| d != s && routing.has_route(s, d)) {
            match routing.header_for(fab, s, d, &mut hdr) {
                Ok(()) => groups.entry((d, hdr.clone())).or_default().push(s),
                Err(e) => fail(rep, s, d, e.to_string()),
            }
        }
    }
    let mut seen: std::collections::HashSet<(ChannelId, u8, Vec<u16>)> = Default::default();
    let mut q = VecDeque::new();
    for ((d, h0), sources) in groups {
        seen.clear();
        q.clear();
        for s in sources {
            let c = fab.injection_channel(s);
            for v in 0..fab.channels[c.idx()].params.vcs {
                if seen.insert((c, v, h0.clone())) {
                    q.push_back((c, v, h0.clone(), s));
                }
            }
        }
        while let Some((c, v, sym, src)) = q.pop_front() {
            let a = g.id(c, v);
            g.reached[a as usize] = true;
            let Some(outs) = step(fab, routing, rep, src, d, c, v, &sym) else {
                continue;
            };
            for (oc, w, next) in outs {
                g.edge(a, g.id(oc, w));
                if seen.insert((oc, w, next.clone())) {
                    q.push_back((oc, w, next, src));
                }
            }
        }
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
            let run = |t| check_threads(&spec.fabric, &spec.routing, t, &|_| {});
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

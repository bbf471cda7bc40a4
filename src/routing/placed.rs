//! Deadlock-free source routes for a network without virtual channels (ATOLL's torus and
//! grid, a torus with failed links, any irregular wiring: `../shared/systems/atoll.md`).
//! Without VCs nothing can break a cycle of channel dependencies once the routes make one,
//! so the *set* of routes must itself be free of them (Dally & Seitz 1987). The set is
//! built in two steps:
//!
//! 1. **A complete base**: every pair of switches routed by the shortest path that keeps to
//!    an acyclic set of turns. On a mesh or torus ([`Shape::Cube`]) that is dimension order
//!    with each ring of a torus cut at one switch, which a packet never passes straight
//!    through (on a mesh, plain dimension order); the cuts lie on a diagonal (the ring of
//!    dimension d through a switch is cut where coordinate d equals the sum of the other
//!    coordinates, mod k), not all in one plane, so that a route can go round one ring's
//!    cut by another ring (step 2 finds those: 0.69 extra hops a pair on a 16×16 torus
//!    against 1.03 with every cut at 0). On anything else, up*/down* (Autonet, Schroeder
//!    et al. 1991) from switch 0. Neither turn set has a cycle, so the base is
//!    deadlock-free and reaches every pair of a connected network.
//! 2. **Shorter routes where they fit**: source by source, each pair whose route is longer
//!    than its shortest path takes the shortest route (any turns) that keeps the
//!    channel-dependency graph of the whole set acyclic ([`Acyclic`], the graph the ATOMIC
//!    route service keeps too), among routes of one length the one adding the fewest
//!    dependencies, then the least used channels (so that routes spread: a 16×16 torus's
//!    busiest channel carries 4.3 times a node's uniform load, against 5.4 choosing by
//!    dependencies alone); the old route's dependencies go when no route makes them.
//!    Passes repeat while they shorten something.
//!
//! Placing shortest-first from nothing, the ATOMIC service's way, leaves pairs without a
//! route on tori of five or more per ring: the minimal routes of the first pairs close
//! every way round for later ones. Starting from a complete set and only ever keeping
//! acyclic changes, a pair always has at least its base route.

use super::acyclic::Acyclic;
use super::updown::levels;
use crate::fabric::{ChannelId, Fabric, Shape};

/// Routes between every pair of switches with hosts, as the output ports each takes.
#[derive(Clone, Debug)]
pub struct Placed {
    /// Switches (`0..n`).
    n: usize,
    /// Route of the pair (s, t): `ports[offsets[s·n + t]..offsets[s·n + t + 1]]`.
    offsets: Vec<u32>,
    ports: Vec<u8>,
    pub stats: PlacedStats,
}

/// What the placement cost against minimal routes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlacedStats {
    /// Ordered pairs of distinct switches with hosts.
    pub pairs: u64,
    /// Pairs routed longer than their shortest path, in the base and as placed.
    pub base_detours: u64,
    pub detours: u64,
    /// Switch-to-switch hops over all pairs: minimal, in the base, and as placed.
    pub minimal_hops: u64,
    pub base_hops: u64,
    pub placed_hops: u64,
    /// The longest shortest path, and the longest route placed [hops].
    pub diameter: u32,
    pub longest: u32,
    /// Dependencies (turns from one channel to the next) the whole set makes.
    pub dependencies: usize,
    /// Improvement passes run.
    pub passes: u32,
}

impl PlacedStats {
    /// Extra hops per pair against minimal routing, on average, as placed.
    pub fn mean_extra_hops(&self) -> f64 {
        Self::per_pair(self.placed_hops - self.minimal_hops, self.pairs)
    }

    /// The same for the base alone.
    pub fn base_mean_extra_hops(&self) -> f64 {
        Self::per_pair(self.base_hops - self.minimal_hops, self.pairs)
    }

    fn per_pair(x: u64, pairs: u64) -> f64 {
        if pairs == 0 { 0.0 } else { x as f64 / pairs as f64 }
    }
}

/// Why no set could be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("switch s{src} cannot reach switch s{dst} over switch-to-switch channels")]
    Unreachable { src: u32, dst: u32 },
    #[error("{0}")]
    Unsupported(String),
}

const NONE: u32 = u32::MAX;

/// The channels between switches, as dependency-graph vertices, and the switch graph.
struct Net<'f> {
    fab: &'f Fabric,
    /// Vertex of each channel (`NONE` for host channels).
    vertex: Vec<u32>,
    /// Channel of each vertex.
    chan: Vec<u32>,
    /// Per switch, the vertices leaving it, by port.
    out: Vec<Vec<u32>>,
    /// Per vertex, the switch it leads to.
    to: Vec<u32>,
}

impl<'f> Net<'f> {
    fn new(fab: &'f Fabric) -> Net<'f> {
        let mut vertex = vec![NONE; fab.channels.len()];
        let mut chan = Vec::new();
        let mut to = Vec::new();
        for (ci, c) in fab.channels.iter().enumerate() {
            if fab.is_switch(c.src) && fab.is_switch(c.dst) {
                vertex[ci] = chan.len() as u32;
                chan.push(ci as u32);
                to.push(c.dst.0);
            }
        }
        let out = (0..fab.switches as usize)
            .map(|s| {
                fab.out_chan[s]
                    .iter()
                    .flatten()
                    .map(|c| vertex[c.idx()])
                    .filter(|&v| v != NONE)
                    .collect()
            })
            .collect();
        Net {
            fab,
            vertex,
            chan,
            out,
            to,
        }
    }

    fn channel(&self, v: u32) -> &crate::fabric::Channel {
        &self.fab.channels[self.chan[v as usize] as usize]
    }

    /// Hops from switch `s` to every switch.
    fn distances(&self, s: u32) -> Vec<u32> {
        let mut d = vec![u32::MAX; self.out.len()];
        d[s as usize] = 0;
        let mut q = std::collections::VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            for &v in &self.out[u as usize] {
                let w = self.to[v as usize];
                if d[w as usize] == u32::MAX {
                    d[w as usize] = d[u as usize] + 1;
                    q.push_back(w);
                }
            }
        }
        d
    }
}

/// The turns the base may take: an acyclic set.
enum Turns {
    /// Dimension order on a mesh or torus (ports `2d` toward +d, `2d + 1` toward −d), a
    /// torus's ring of dimension d cut where coordinate d is the sum of the others mod k.
    Dor { k: Vec<u32>, wrap: bool },
    /// Up*/down*: never from a down channel onto an up one (`up` per vertex).
    UpDown { up: Vec<bool> },
}

impl Turns {
    fn of(net: &Net) -> Turns {
        let fab = net.fab;
        match &fab.shape {
            Shape::Cube { k, wrap, .. } => Turns::Dor {
                k: k.clone(),
                wrap: *wrap,
            },
            _ => {
                let level = levels(fab, 0);
                let up = (0..net.chan.len() as u32)
                    .map(|v| {
                        let ch = net.channel(v);
                        let (u, w) = (ch.src.0, ch.dst.0);
                        (level[w as usize], w) < (level[u as usize], u)
                    })
                    .collect();
                Turns::UpDown { up }
            }
        }
    }

    /// Whether a packet may go on from channel `a` onto channel `b`.
    fn allow(&self, net: &Net, a: u32, b: u32) -> bool {
        match self {
            Turns::Dor { k, wrap } => {
                let (pa, pb) = (net.channel(a).src_port, net.channel(b).src_port);
                let (da, db) = ((pa / 2) as usize, (pb / 2) as usize);
                if db != da {
                    return db > da;
                }
                // The same dimension: straight on, not back, and not through the cut.
                let at = crate::fabric::mesh::coords(k, net.to[a as usize]);
                let others: u32 = at.iter().sum::<u32>() - at[da];
                pa == pb && !(*wrap && at[da] == others % k[da])
            }
            Turns::UpDown { up } => up[a as usize] || !up[b as usize],
        }
    }
}

/// A breadth-first search over channels from one switch, by hops and, within a hop, by the
/// fewest dependencies new to the graph, then the fewest routes already on the channels of
/// the way, then the lowest vertex.
struct Search {
    /// Per vertex: the search that reached it, its hops, new dependencies, the routes on
    /// the channels of its path, parent.
    stamp: Vec<u32>,
    hops: Vec<u32>,
    new: Vec<u32>,
    load: Vec<u64>,
    parent: Vec<u32>,
    id: u32,
    layer: Vec<u32>,
    next: Vec<u32>,
}

impl Search {
    fn new(vertices: usize) -> Search {
        Search {
            stamp: vec![0; vertices],
            hops: vec![0; vertices],
            new: vec![0; vertices],
            load: vec![0; vertices],
            parent: vec![NONE; vertices],
            id: 0,
            layer: Vec::new(),
            next: Vec::new(),
        }
    }

    fn seen(&self, v: u32) -> bool {
        self.stamp[v as usize] == self.id
    }

    /// Explores everything reachable from switch `s`; `cost(a, b)` says whether a packet
    /// may go from channel `a` onto `b` and how many new dependencies that makes.
    fn run(&mut self, net: &Net, s: u32, cost: &dyn Fn(u32, u32) -> Option<u32>, used: &[u64]) {
        self.id += 1;
        self.layer.clear();
        for &v in &net.out[s as usize] {
            if !self.seen(v) {
                self.visit(v, 1, (0, used[v as usize]), NONE);
                self.layer.push(v);
            }
        }
        let mut h = 1;
        while !self.layer.is_empty() {
            self.next.clear();
            for i in 0..self.layer.len() {
                let a = self.layer[i];
                let base = (self.new[a as usize], self.load[a as usize]);
                for &b in &net.out[net.to[a as usize] as usize] {
                    let Some(add) = cost(a, b) else { continue };
                    let c = (base.0 + add, base.1 + used[b as usize]);
                    if !self.seen(b) {
                        self.visit(b, h + 1, c, a);
                        self.next.push(b);
                    } else if self.hops[b as usize] == h + 1
                        && c < (self.new[b as usize], self.load[b as usize])
                    {
                        (self.new[b as usize], self.load[b as usize]) = c;
                        self.parent[b as usize] = a;
                    }
                }
            }
            std::mem::swap(&mut self.layer, &mut self.next);
            h += 1;
        }
    }

    fn visit(&mut self, v: u32, hops: u32, (new, load): (u32, u64), parent: u32) {
        self.stamp[v as usize] = self.id;
        self.hops[v as usize] = hops;
        self.new[v as usize] = new;
        self.load[v as usize] = load;
        self.parent[v as usize] = parent;
    }

    /// The best route found to switch `t` (as vertices), if any.
    fn route_to(&self, net: &Net, t: u32) -> Option<Vec<u32>> {
        let last = net.fab.in_chan[t as usize]
            .iter()
            .flatten()
            .map(|c| net.vertex[c.idx()])
            .filter(|&v| v != NONE && self.seen(v))
            .min_by_key(|&v| {
                (
                    self.hops[v as usize],
                    self.new[v as usize],
                    self.load[v as usize],
                    v,
                )
            })?;
        let mut path = vec![last];
        let mut v = last;
        while self.parent[v as usize] != NONE {
            v = self.parent[v as usize];
            path.push(v);
        }
        path.reverse();
        Some(path)
    }
}

/// Most improvement passes.
const PASSES: u32 = 4;

impl Placed {
    /// Places a deadlock-free route between every ordered pair of distinct switches that
    /// have hosts.
    pub fn new(fab: &Fabric) -> Result<Placed, PlaceError> {
        Self::with_progress(fab, &|_| {})
    }

    /// [`Self::new`], reporting how far it has got (a fraction).
    pub fn with_progress(fab: &Fabric, progress: &dyn Fn(f64)) -> Result<Placed, PlaceError> {
        if fab.stage_base != fab.switches {
            return Err(PlaceError::Unsupported(
                "deadlock-free source routes are placed on fabrics without output buffers".into(),
            ));
        }
        if fab.nodes[..fab.switches as usize].iter().any(|n| n.ports > 256) {
            return Err(PlaceError::Unsupported(
                "source routes name ports in one byte: switches of at most 256 ports".into(),
            ));
        }
        let n = fab.switches as usize;
        let net = Net::new(fab);
        let mut has_hosts = vec![false; n];
        for h in 0..fab.num_hosts() as u32 {
            has_hosts[fab.host_switch(h).0.idx()] = true;
        }
        let ends: Vec<u32> = (0..n as u32).filter(|&s| has_hosts[s as usize]).collect();
        let mut stats = PlacedStats::default();
        // The targets of each source, nearest first.
        let mut targets: Vec<Vec<(u32, u32)>> = Vec::with_capacity(ends.len());
        for &s in &ends {
            let d = net.distances(s);
            let mut ts = Vec::with_capacity(ends.len());
            for &t in &ends {
                if t == s {
                    continue;
                }
                if d[t as usize] == u32::MAX {
                    return Err(PlaceError::Unreachable { src: s, dst: t });
                }
                ts.push((d[t as usize], t));
                stats.pairs += 1;
                stats.minimal_hops += d[t as usize] as u64;
                stats.diameter = stats.diameter.max(d[t as usize]);
            }
            ts.sort_unstable();
            targets.push(ts);
        }
        // 1. The base.
        let turns = Turns::of(&net);
        let mut search = Search::new(net.chan.len());
        let mut g = Acyclic::new(net.chan.len());
        let mut routes: Vec<Vec<u32>> = vec![Vec::new(); ends.len() * n];
        // Routes on each channel.
        let mut used = vec![0u64; net.chan.len()];
        let work = (1 + PASSES) as f64 * ends.len().max(1) as f64;
        for (i, &s) in ends.iter().enumerate() {
            search.run(&net, s, &|a, b| turns.allow(&net, a, b).then_some(0), &used);
            for &(d, t) in &targets[i] {
                let r = search.route_to(&net, t).ok_or(PlaceError::Unsupported(format!(
                    "the base routing ({}) cannot reach s{t} from s{s}",
                    match turns {
                        Turns::Dor { .. } => "dimension order",
                        Turns::UpDown { .. } => "up*/down*",
                    }
                )))?;
                g.add(&r).map_err(|_| {
                    PlaceError::Unsupported("the base routing's turns close a cycle (a bug)".into())
                })?;
                stats.base_hops += r.len() as u64;
                for &v in &r {
                    used[v as usize] += 1;
                }
                stats.base_detours += u64::from(r.len() as u32 > d);
                routes[i * n + t as usize] = r;
            }
            progress((i + 1) as f64 / work);
        }
        // 2. Shorter routes where they fit.
        for pass in 0..PASSES {
            let mut shortened = 0u64;
            for (i, &s) in ends.iter().enumerate() {
                if targets[i]
                    .iter()
                    .all(|&(d, t)| routes[i * n + t as usize].len() as u32 == d)
                {
                    continue;
                }
                search.run(
                    &net,
                    s,
                    &|a, b| {
                        if g.has_edge(a, b) {
                            Some(0)
                        } else {
                            g.allows(Some(a), b).then_some(1)
                        }
                    },
                    &used,
                );
                let mut released = false;
                for &(d, t) in &targets[i] {
                    let old = &routes[i * n + t as usize];
                    if old.len() as u32 == d {
                        continue;
                    }
                    let Some(r) = search.route_to(&net, t) else {
                        continue;
                    };
                    if r.len() >= old.len() || g.fits(&r).is_err() {
                        continue;
                    }
                    g.add(&r).expect("checked to fit");
                    released |= g.release(old);
                    for &v in old {
                        used[v as usize] -= 1;
                    }
                    for &v in &r {
                        used[v as usize] += 1;
                    }
                    routes[i * n + t as usize] = r;
                    shortened += 1;
                }
                if released {
                    g.rebuild();
                }
                progress((1 + pass) as f64 / (1 + PASSES) as f64 + (i + 1) as f64 / work);
            }
            stats.passes = pass + 1;
            if shortened == 0 {
                break;
            }
        }
        progress(1.0);
        stats.dependencies = g.edge_count();
        for (i, _) in ends.iter().enumerate() {
            for &(d, t) in &targets[i] {
                let hops = routes[i * n + t as usize].len() as u32;
                stats.placed_hops += hops as u64;
                stats.detours += u64::from(hops > d);
                stats.longest = stats.longest.max(hops);
            }
        }
        // Flattened, as ports, for every pair of switches (empty where there is none).
        let mut row = vec![NONE; n];
        for (i, &s) in ends.iter().enumerate() {
            row[s as usize] = i as u32;
        }
        let mut offsets = Vec::with_capacity(n * n + 1);
        let mut ports = Vec::with_capacity(stats.placed_hops as usize);
        offsets.push(0);
        for (s, &r) in row.iter().enumerate() {
            for t in 0..n {
                if r != NONE && t != s {
                    let route = &routes[r as usize * n + t];
                    ports.extend(route.iter().map(|&v| net.channel(v).src_port as u8));
                }
                offsets.push(ports.len() as u32);
            }
        }
        Ok(Placed {
            n,
            offsets,
            ports,
            stats,
        })
    }

    /// The ports from switch `s` to switch `t` (empty if `s == t` or no route was placed).
    pub fn route(&self, s: u32, t: u32) -> &[u8] {
        let k = s as usize * self.n + t as usize;
        &self.ports[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// The channels of the route from `s` to `t`.
    pub fn channels(&self, fab: &Fabric, s: u32, t: u32) -> Vec<ChannelId> {
        let mut at = s as usize;
        self.route(s, t)
            .iter()
            .map(|&p| {
                let c = fab.out_chan[at][p as usize].expect("placed on existing channels");
                at = fab.channels[c.idx()].dst.idx();
                c
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::LinkParams;
    use crate::fabric::SwitchParams;
    use crate::fabric::mesh::cube;
    use crate::routing::cdg::find_cycle;

    /// The channel-dependency graph of every placed route has no cycle, and every route
    /// leads where it says.
    fn check(fab: &Fabric, p: &Placed) {
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); fab.channels.len()];
        let sw = |h: u32| fab.host_switch(h).0.0;
        for a in 0..fab.num_hosts() as u32 {
            for b in 0..fab.num_hosts() as u32 {
                let (s, t) = (sw(a), sw(b));
                if s == t {
                    continue;
                }
                let cs = p.channels(fab, s, t);
                assert_eq!(fab.channels[cs.last().unwrap().idx()].dst.0, t);
                for w in cs.windows(2) {
                    if !adj[w[0].idx()].contains(&w[1].0) {
                        adj[w[0].idx()].push(w[1].0);
                    }
                }
            }
        }
        assert_eq!(find_cycle(&adj), None);
    }

    #[test]
    fn tori_get_complete_deadlock_free_sets() {
        let lp = LinkParams::default();
        for k in [3u32, 4, 5, 6, 8] {
            let fab = cube(&[k, k], true, 1, lp, lp, SwitchParams::default()).unwrap();
            let p = Placed::new(&fab).unwrap();
            check(&fab, &p);
            let st = p.stats;
            assert_eq!(st.pairs, (k * k * (k * k - 1)) as u64);
            assert_eq!(st.diameter, 2 * (k / 2));
            assert!(st.minimal_hops <= st.placed_hops && st.placed_hops <= st.base_hops);
            // Without VCs a ring of five or more cannot route every pair minimally.
            if k >= 5 {
                assert!(st.detours > 0, "{k}: {st:?}");
            } else {
                assert_eq!(st.detours, 0, "{k}: {st:?}");
            }
        }
    }

    #[test]
    fn meshes_route_minimally() {
        let lp = LinkParams::default();
        let fab = cube(&[5, 4], false, 2, lp, lp, SwitchParams::default()).unwrap();
        let p = Placed::new(&fab).unwrap();
        check(&fab, &p);
        assert_eq!(p.stats.detours, 0);
    }
}

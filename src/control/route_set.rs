//! Deadlock-free route sets on a Mosaic network: every pair's route (from [`Router`]) placed
//! so that the routes' channel and memory dependencies stay acyclic ([`Deps`], over the
//! resources [`res`] and [`hub`] name), ripping up and retrying where a pair does not fit
//! ([`RouteSet::for_pairs`]), and the cycle that remains where none is found
//! ([`dependency_cycle`]). `../shared/systems/atomic.md`: the Address Consultant hands out
//! routes that cannot deadlock.

use super::graph::{End, MGraph};
use super::routes::{Route, Router, Stop};
use crate::routing::acyclic::Acyclic;
use crate::routing::mosaic::PROC;
use std::collections::{BTreeMap, BTreeSet};

/// A pair to place, keyed by the cost of its best route: ((S&F points, nodes), (from, to)).
type Want = ((usize, u32), (u32, u32));

/// How many routes [`RouteSet::for_pairs`] may take out to place one that is missing.
const RIP_UP: usize = 8;

/// How many more placements [`RouteSet::for_pairs`] tries with the pairs left out in front.
const RETRIES: usize = 12;

/// Resources per node in a dependency graph: its four outputs, then its memory.
pub(super) const RES: usize = 5;

/// The dependency-graph vertex of node output `port`.
pub fn res(node: u32, port: u16) -> u32 {
    node * RES as u32 + port as u32
}

/// The dependency-graph vertex of a node's memory (with the channels into and out of its
/// processor: one of each per node, so they wait with it).
pub fn hub(node: u32) -> u32 {
    node * RES as u32 + PROC as u32
}

/// A vertex as (node, port), the memory as port [`PROC`].
pub fn vertex(v: u32) -> (u32, u16) {
    (v / RES as u32, (v % RES as u32) as u16)
}

/// The resources a packet on `route` takes, in order, each held until the next is granted:
/// within a leg every node output it passes (wormhole), at a store-and-forward point the
/// node's memory (a packet is admitted whole and waits there until the processor's one
/// output channel sends it, in order, on its next leg; a full memory stalls the worm that
/// arrives). An HI's channels are left out: nothing waits on a source, and a sink HI always
/// drains.
pub fn resources(route: &Route) -> Vec<u32> {
    let mut v = Vec::new();
    if let Some(p) = route.from_proc {
        v.push(hub(p));
    }
    for leg in &route.legs {
        v.extend(leg.outs.iter().map(|&(n, p)| res(n, p)));
        if let Stop::Proc(p) = leg.to {
            v.push(hub(p));
        }
    }
    v
}

/// The channel-dependency graph of a set of routes on network `g` (see [`resources`]): an
/// edge from each resource a route holds to the next it asks for. A cycle means the set can
/// deadlock once the memories on it are full. Returns a cycle, as (node, port) with the
/// memory as port [`PROC`], if any.
pub fn dependency_cycle(g: &MGraph, routes: &[Route]) -> Option<Vec<(u32, u16)>> {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); g.nodes() * RES];
    for r in routes {
        for w in resources(r).windows(2) {
            if !adj[w[0] as usize].contains(&w[1]) {
                adj[w[0] as usize].push(w[1]);
            }
        }
    }
    crate::routing::cdg::find_cycle(&adj).map(|c| c.into_iter().map(vertex).collect())
}

/// The dependency graph of the routes placed so far, kept acyclic ([`Acyclic`]), over the
/// resources of a Mosaic network ([`resources`]).
#[derive(Clone, Debug)]
pub struct Deps {
    graph: Acyclic,
    /// The output that feeds (node, input port), per `node * RES + port`.
    pub(super) into: Vec<Option<u32>>,
}

impl Deps {
    pub fn new(g: &MGraph) -> Deps {
        let v = g.nodes() * RES;
        let mut into = vec![None; v];
        for (u, outs) in g.out.iter().enumerate() {
            for (p, e) in outs.iter().enumerate() {
                if let Some(End::Node(w, q)) = e {
                    into[*w as usize * RES + *q as usize] = Some(res(u as u32, p as u16));
                }
            }
        }
        Deps {
            graph: Acyclic::new(v),
            into,
        }
    }

    /// Whether `a` reaches `b` by one edge or more.
    pub fn reaches(&self, a: u32, b: u32) -> bool {
        self.graph.reaches(a, b)
    }

    /// Whether edge `a → b` keeps the graph acyclic.
    pub fn allows(&self, a: Option<u32>, b: u32) -> bool {
        self.graph.allows(a, b)
    }

    /// Adds a route's dependencies. The first one that would close a cycle is refused and
    /// returned, with nothing added.
    pub fn add(&mut self, route: &Route) -> Result<(), (u32, u32)> {
        self.graph.add(&resources(route))
    }

    /// Whether [`Self::add`] would take the route.
    pub fn fits(&self, route: &Route) -> Result<(), (u32, u32)> {
        self.graph.fits(&resources(route))
    }

    /// Takes a route's dependencies out again.
    pub fn remove(&mut self, route: &Route) {
        self.graph.remove(&resources(route))
    }
}

/// What a guarded search may not do: close a cycle in `deps`, or add a refused edge.
pub struct Guard<'a> {
    pub deps: &'a Deps,
    pub refused: BTreeSet<(u32, u32)>,
}

impl Guard<'_> {
    pub(super) fn allows(&self, a: Option<u32>, b: u32) -> bool {
        self.deps.allows(a, b) && a.is_none_or(|a| !self.refused.contains(&(a, b)))
    }
}

/// The route service's routes between every pair of HIs, deadlock-free as a set: each is the
/// best route (fewest store-and-forward points, then fewest nodes) among those that close no
/// cycle in the dependency graph of the routes chosen before it. Pairs are taken in the order
/// of their best unconstrained route, simplest first, so plain Mosaic worms (X before Y, never
/// a cycle among themselves) are placed before the composite routes that must fit around them.
/// Pairs still left out are placed again first, ahead of the routes that had a choice (up to
/// [`RETRIES`] times); the most complete set is kept. Nothing guarantees completeness: with
/// one-way cables some networks have no complete deadlock-free set at all (a ring of boards
/// joined only one way closes a cycle whatever the routes).
#[derive(Clone, Debug)]
pub struct RouteSet {
    pub deps: Deps,
    routes: BTreeMap<(u32, u32), Route>,
    /// Pairs with a route in the network but none that keeps the set deadlock-free.
    pub missing: Vec<(u32, u32)>,
    /// Pairs whose best route had to give way (more store-and-forward points or nodes).
    pub detours: usize,
    /// Over every route of the set, the store-and-forward points and nodes more than its
    /// pair's best route has.
    pub extra: (usize, u32),
    /// Pairs the first placement (simplest first) left out and a later one, with them in
    /// front, placed.
    pub placed_late: Vec<Late>,
}

/// A pair placed only once it went first, with the cost of its best route and of the one
/// it got: (store-and-forward points, nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Late {
    pub pair: (u32, u32),
    pub best: (usize, u32),
    pub placed: (usize, u32),
}

impl RouteSet {
    /// Routes between every pair of HIs of `g`.
    pub fn all_pairs(g: &MGraph) -> RouteSet {
        let nh = g.hi.len() as u32;
        let pairs: Vec<(u32, u32)> = (0..nh)
            .flat_map(|a| (0..nh).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        Self::for_pairs(g, &pairs)
    }

    /// Routes between the given pairs of HIs of `g` (the set the service hands out).
    pub fn for_pairs(g: &MGraph, pairs: &[(u32, u32)]) -> RouteSet {
        let mut free = Router::new(g);
        let mut want: Vec<Want> = Vec::new();
        for &(a, b) in pairs {
            if let Some(r) = free.route(Stop::Hi(a), Stop::Hi(b)) {
                want.push(((r.sf_points(), r.hops()), (a, b)));
            }
        }
        want.sort();
        want.dedup();
        let mut s = Self::place(g, &want);
        s.rip_up(g, &mut free);
        // Simplest first can leave pairs out whose every route closes a cycle with routes
        // that had a choice. Place the pairs left out first, before those routes (every pair
        // ever left out stays in front), and keep the most complete set.
        // The pairs left out last go first, then those left out before, then the rest.
        let mut front: Vec<(u32, u32)> = Vec::new();
        let first_missing = s.missing.clone();
        let mut last = s.missing.clone();
        for _ in 0..RETRIES {
            if s.missing.is_empty() || last.is_empty() {
                break;
            }
            front.retain(|p| !last.contains(p));
            front.splice(0..0, last.iter().copied());
            let rank: BTreeMap<(u32, u32), usize> = front.iter().enumerate().map(|(i, p)| (*p, i)).collect();
            let mut order: Vec<Want> = want.clone();
            order.sort_by_key(|w| (rank.get(&w.1).copied().unwrap_or(usize::MAX), *w));
            let mut t = Self::place(g, &order);
            t.rip_up(g, &mut free);
            last = t.missing.clone();
            if t.missing.len() < s.missing.len() {
                s = t;
            }
        }
        let cost: BTreeMap<(u32, u32), (usize, u32)> = want.iter().map(|w| (w.1, w.0)).collect();
        s.detours = s
            .routes
            .iter()
            .filter(|(k, r)| cost.get(k) != Some(&(r.sf_points(), r.hops())))
            .count();
        s.extra =
            s.routes
                .iter()
                .filter_map(|(k, r)| Some((cost.get(k)?, r)))
                .fold((0, 0), |(f, n), (c, r)| {
                    (
                        f + r.sf_points().saturating_sub(c.0),
                        n + r.hops().saturating_sub(c.1),
                    )
                });
        s.placed_late = first_missing
            .iter()
            .filter_map(|k| Some((*k, *cost.get(k)?, s.routes.get(k)?)))
            .map(|(k, c, r)| Late {
                pair: k,
                best: c,
                placed: (r.sf_points(), r.hops()),
            })
            .collect();
        s
    }

    /// Places each missing pair, if it can, by taking out the routes on the cycles its best
    /// route would close and placing them again after it; a change stays only if every route
    /// taken out finds a place again.
    fn rip_up(&mut self, g: &MGraph, free: &mut Router) {
        let missing = std::mem::take(&mut self.missing);
        for p in missing {
            let Some(r) = free.route(Stop::Hi(p.0), Stop::Hi(p.1)) else {
                self.missing.push(p);
                continue;
            };
            let keep = (self.deps.clone(), self.routes.clone());
            let mut out: Vec<(u32, u32)> = Vec::new();
            while self.deps.fits(&r).is_err() && out.len() < RIP_UP {
                let mut all: Vec<Route> = self.routes.values().cloned().collect();
                all.push(r.clone());
                let Some(cyc) = dependency_cycle(g, &all) else {
                    break;
                };
                let ids: Vec<u32> = cyc.iter().map(|&(n, q)| n * RES as u32 + q as u32).collect();
                let on: BTreeSet<(u32, u32)> = (0..ids.len())
                    .map(|i| (ids[i], ids[(i + 1) % ids.len()]))
                    .collect();
                let victim = self
                    .routes
                    .iter()
                    .map(|(k, rt)| {
                        let hits = resources(rt)
                            .windows(2)
                            .filter(|w| on.contains(&(w[0], w[1])))
                            .count();
                        (hits, *k)
                    })
                    .filter(|x| x.0 > 0)
                    .max();
                let Some((_, k)) = victim else { break };
                let gone = self.routes.remove(&k).expect("placed");
                self.deps.remove(&gone);
                out.push(k);
            }
            let placed = self.deps.add(&r).is_ok() && {
                self.routes.insert(p, r);
                out.iter().all(|&q| {
                    match Self::find(g, &self.deps, Stop::Hi(q.0), Stop::Hi(q.1), &BTreeSet::new()) {
                        Some(rt) => {
                            self.deps.add(&rt).expect("checked while found");
                            self.routes.insert(q, rt);
                            true
                        }
                        None => false,
                    }
                })
            };
            if !placed {
                (self.deps, self.routes) = keep;
                self.missing.push(p);
            }
        }
    }

    /// Places routes for `want` in its order.
    fn place(g: &MGraph, want: &[Want]) -> RouteSet {
        let mut s = RouteSet {
            deps: Deps::new(g),
            routes: BTreeMap::new(),
            missing: vec![],
            detours: 0,
            extra: (0, 0),
            placed_late: vec![],
        };
        // Leg tables stay cached while they still hold every leg that fits: a route found
        // with them that fits whole is the best that fits.
        let mut r = Router::new(g);
        for &(cost, (a, b)) in want {
            let (from, to) = (Stop::Hi(a), Stop::Hi(b));
            let guard = Guard {
                deps: &s.deps,
                refused: BTreeSet::new(),
            };
            let found = match r.route_with(from, to, Some(&guard)) {
                Some(rt) if s.deps.fits(&rt).is_ok() => Some(rt),
                _ => {
                    r.clear();
                    Self::find(g, &s.deps, from, to, &BTreeSet::new())
                }
            };
            match found {
                Some(rt) => {
                    if (rt.sf_points(), rt.hops()) != cost {
                        s.detours += 1;
                    }
                    s.deps.add(&rt).expect("checked while found");
                    s.routes.insert((a, b), rt);
                }
                None => s.missing.push((a, b)),
            }
        }
        s
    }

    /// The best route from `from` to `to` that keeps `deps` acyclic, not using `avoid`.
    pub fn find(
        g: &MGraph,
        deps: &Deps,
        from: Stop,
        to: Stop,
        avoid: &BTreeSet<(u32, u16)>,
    ) -> Option<Route> {
        let mut guard = Guard {
            deps,
            refused: BTreeSet::new(),
        };
        // Each leg alone closes no cycle; legs together may: refuse the edge that does and
        // search again.
        for _ in 0..64 {
            let rt = Router::avoiding(g, avoid.clone()).route_with(from, to, Some(&guard))?;
            match deps.fits(&rt) {
                Ok(()) => return Some(rt),
                Err(e) => {
                    guard.refused.insert(e);
                }
            }
        }
        None
    }

    /// The route from HI `a` to HI `b`.
    pub fn get(&self, a: u32, b: u32) -> Option<&Route> {
        self.routes.get(&(a, b))
    }

    /// Routes `a → b` anew avoiding the outputs in `avoid` (a high-bandwidth flow), keeping
    /// the set deadlock-free; keeps the old route if there is no such route.
    pub fn reroute(&mut self, g: &MGraph, a: u32, b: u32, avoid: &BTreeSet<(u32, u16)>) -> Option<Route> {
        let old = self.routes.get(&(a, b)).cloned();
        if let Some(o) = &old {
            self.deps.remove(o);
        }
        match Self::find(g, &self.deps, Stop::Hi(a), Stop::Hi(b), avoid) {
            Some(r) => {
                self.deps.add(&r).expect("checked while found");
                self.routes.insert((a, b), r.clone());
                Some(r)
            }
            None => {
                if let Some(o) = &old {
                    self.deps.add(o).expect("it was there");
                }
                old
            }
        }
    }

    /// Every route of the set.
    pub fn routes(&self) -> impl Iterator<Item = &Route> {
        self.routes.values()
    }
}

//! ATOMIC routes on a Mosaic network: a route is a list of legs; each leg is one native
//! Mosaic worm (offset bytes consumed by the routers, X moves before Y moves as the channels'
//! roles dictate) ending in a node's processor, which stores the packet and sends it on the
//! next leg, or at the destination HI. Routes prefer the fewest store-and-forward points,
//! then the fewest nodes passed. A leg is found by a breadth-first search over router
//! states (node, input port, what the leading byte is doing), so non-consistent cables (a Y
//! output into an X input) are used as the turns they give.

use super::graph::{End, MGraph};
use crate::routing::mosaic::{EAST, NORTH, PROC, SOUTH, WEST, x_input};
use std::collections::{BTreeSet, VecDeque};

use super::route_set::RES;
use super::route_set::{Guard, hub, res};
pub use super::route_set::{Late, RouteSet, dependency_cycle};

/// Where a leg ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stop {
    /// In this node's processor (a store-and-forward point, or the last stop of a probe).
    Proc(u32),
    /// At this HI.
    Hi(u32),
}

/// One native Mosaic worm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leg {
    pub bytes: Vec<i8>,
    pub to: Stop,
    /// Nodes whose router the leg passes.
    pub nodes: u32,
    /// Node outputs it uses, in order.
    pub outs: Vec<(u32, u16)>,
}

/// A composite route.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// The node whose processor sends the packet, if not an HI.
    pub from_proc: Option<u32>,
    pub legs: Vec<Leg>,
}

impl Route {
    /// Nodes whose processor stores and forwards the packet on the way.
    pub fn sf_points(&self) -> usize {
        self.legs.len().saturating_sub(1)
    }

    /// Nodes passed, over all legs.
    pub fn hops(&self) -> u32 {
        self.legs.iter().map(|l| l.nodes).sum()
    }

    /// The header bytes of the whole route, ending with the (0,0) that means "deliver".
    pub fn bytes(&self) -> Vec<i8> {
        let mut v: Vec<i8> = self.legs.iter().flat_map(|l| l.bytes.iter().copied()).collect();
        v.extend([0, 0]);
        v
    }

    /// `(+2,0)(0,-1)|(0,0)`: the legs' bytes, `|` before the final deliver mark.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.legs {
            s.push('(');
            s.push_str(
                &l.bytes
                    .iter()
                    .map(|b| format!("{b:+}"))
                    .collect::<Vec<_>>()
                    .join(","),
            );
            s.push(')');
        }
        s.push_str("(0,0)");
        s
    }

    /// Every node output the route uses.
    pub fn outs(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        self.legs.iter().flat_map(|l| l.outs.iter().copied())
    }
}

/// Where a search starts: a node entered on `in_port` (its processor: [`PROC`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Start {
    pub node: u32,
    pub in_port: u16,
}

// Byte phases of a router state.
const FRESH: u8 = 0; // a new leading byte, read in the role of the input port
const FRESH_Y: u8 = 1; // a ΔX byte was zero here: the next byte is read as ΔY, at this node
const RUN_P: u8 = 2; // a positive byte is running
const RUN_N: u8 = 3; // a negative byte is running

#[derive(Clone, Copy, Debug)]
enum Act {
    /// Move out of a port, starting a byte (with its sign) or continuing the running one.
    Move { port: u16, start: Option<bool> },
    /// A zero byte (FRESH → FRESH_Y, or FRESH/FRESH_Y → the processor).
    Zero,
    /// The running byte ends here (reads zero).
    Stop,
}

/// All the shortest legs from one start (by nodes passed), to every processor and HI.
pub struct LegTable {
    pub to_proc: Vec<Option<Leg>>,
    pub to_hi: Vec<Option<Leg>>,
}

fn sidx(node: u32, in_port: u16, phase: u8) -> usize {
    (node as usize * 5 + in_port.min(4) as usize) * 4 + phase as usize
}

/// The legs from `start`, not using the outputs in `banned`, and, with a `guard`, adding no
/// dependency that would close a cycle in its graph.
pub fn legs_from(g: &MGraph, start: Start, banned: &BTreeSet<(u32, u16)>, guard: Option<&Guard>) -> LegTable {
    let n = g.nodes();
    // The resource a packet in a state last took: the channel into (node, in_port), or the
    // start node's memory for a packet its processor sends (None: an HI's channel, which
    // nothing waits on).
    let held = |node: u32, inp: u16| -> Option<u32> {
        let gd = guard?;
        if inp == PROC {
            Some(hub(node))
        } else {
            gd.deps.into[node as usize * RES + inp as usize]
        }
    };
    let allow = |a: Option<u32>, b: u32| guard.is_none_or(|gd| gd.allows(a, b));
    let mut dist = vec![u32::MAX; n * 20];
    let mut par: Vec<(usize, Act)> = vec![(usize::MAX, Act::Zero); n * 20];
    let mut q = VecDeque::new();
    let s0 = sidx(start.node, start.in_port, FRESH);
    dist[s0] = 0;
    q.push_back((start.node, start.in_port.min(4), FRESH));
    // Leg ends: (state, final act) for each target, first found is shortest.
    let mut end_proc: Vec<Option<(usize, u32)>> = vec![None; n];
    let mut end_hi: Vec<Option<(usize, u16, bool, u32)>> = vec![None; g.hi.len()];
    while let Some((node, inp, ph)) = q.pop_front() {
        let si = sidx(node, inp, ph);
        let d = dist[si];
        let xin = x_input(inp);
        let mut relax = |q: &mut VecDeque<(u32, u16, u8)>, nn: u32, np: u16, nph: u8, cost: u32, act: Act| {
            let t = sidx(nn, np, nph);
            if d + cost < dist[t] {
                dist[t] = d + cost;
                par[t] = (si, act);
                if cost == 0 {
                    q.push_front((nn, np, nph));
                } else {
                    q.push_back((nn, np, nph));
                }
            }
        };
        // The processor: a zero byte read as ΔY (FRESH on a Y input, FRESH_Y) or a running
        // byte that stops on a Y input.
        let to_proc = match ph {
            FRESH => !xin,
            FRESH_Y => true,
            _ => !xin,
        };
        if to_proc
            && end_proc[node as usize].is_none()
            && !(node == start.node && ph == FRESH && inp == PROC)
            && allow(held(node, inp), hub(node))
        {
            end_proc[node as usize] = Some((si, d + 1));
        }
        // Moves.
        let moves: &[(u16, Option<bool>)] = match (ph, xin) {
            (FRESH, true) => &[(EAST, Some(true)), (WEST, Some(false))],
            (FRESH, false) | (FRESH_Y, _) => &[(NORTH, Some(true)), (SOUTH, Some(false))],
            (RUN_P, true) => &[(EAST, None)],
            (RUN_N, true) => &[(WEST, None)],
            (RUN_P, false) => &[(NORTH, None)],
            _ => &[(SOUTH, None)],
        };
        for &(port, start_sign) in moves {
            if banned.contains(&(node, port)) || !allow(held(node, inp), res(node, port)) {
                continue;
            }
            let sign = match (start_sign, ph) {
                (Some(s), _) => s,
                (None, p) => p == RUN_P,
            };
            let nph = if sign { RUN_P } else { RUN_N };
            match g.out[node as usize][port as usize] {
                Some(End::Node(nn, np)) => relax(
                    &mut q,
                    nn,
                    np,
                    nph,
                    1,
                    Act::Move {
                        port,
                        start: start_sign,
                    },
                ),
                Some(End::Hi(h)) if end_hi[h as usize].is_none() => {
                    end_hi[h as usize] = Some((si, port, start_sign.is_some(), d + 1));
                }
                Some(End::Hi(_)) => {}
                None => {}
            }
        }
        // Zero bytes and stops within the node.
        match (ph, xin) {
            (FRESH, true) => relax(&mut q, node, inp, FRESH_Y, 0, Act::Zero),
            (RUN_P | RUN_N, true) => relax(&mut q, node, inp, FRESH_Y, 0, Act::Stop),
            _ => {}
        }
    }
    // Rebuild the bytes of a leg from its actions.
    let rebuild = |mut si: usize, last: Vec<Act>| -> (Vec<i8>, Vec<(u32, u16)>) {
        let mut acts = last;
        while si != s0 {
            let (p, a) = par[si];
            acts.push(a);
            let node = (si / 20) as u32;
            let _ = node;
            si = p;
        }
        acts.reverse();
        let mut bytes: Vec<i8> = Vec::new();
        let mut run: Option<i32> = None;
        for a in &acts {
            match *a {
                Act::Move { start: Some(s), .. } => {
                    if let Some(r) = run.take() {
                        bytes.push(r as i8);
                    }
                    run = Some(if s { 1 } else { -1 });
                }
                Act::Move { start: None, .. } => {
                    if let Some(r) = run.as_mut() {
                        *r += r.signum();
                    }
                }
                Act::Zero => bytes.push(0),
                Act::Stop => {
                    if let Some(r) = run.take() {
                        bytes.push(r as i8);
                    }
                }
            }
        }
        if let Some(r) = run {
            bytes.push(r as i8);
        }
        (bytes, Vec::new())
    };
    let outs_of = |mut si: usize, extra: Option<(u32, u16)>| -> Vec<(u32, u16)> {
        let mut v: Vec<(u32, u16)> = extra.into_iter().collect();
        while si != s0 {
            let (p, a) = par[si];
            if let Act::Move { port, .. } = a {
                v.push(((p / 20) as u32, port));
            }
            si = p;
        }
        v.reverse();
        v
    };
    let too_long = |b: &[i8], outs: usize| b.len() > 2 * outs + 4 || outs > 127;
    let mut to_proc = vec![None; n];
    for (node, e) in end_proc.iter().enumerate() {
        if let Some((si, nodes)) = *e {
            let ph = (si % 4) as u8;
            // The final zero read as ΔY: a running byte stops, or a fresh zero byte.
            let last = if ph == RUN_P || ph == RUN_N {
                Act::Stop
            } else {
                Act::Zero
            };
            let (bytes, _) = rebuild(si, vec![last]);
            let outs = outs_of(si, None);
            if !too_long(&bytes, outs.len()) {
                to_proc[node] = Some(Leg {
                    bytes,
                    to: Stop::Proc(node as u32),
                    nodes,
                    outs,
                });
            }
        }
    }
    let mut to_hi = vec![None; g.hi.len()];
    for (h, e) in end_hi.iter().enumerate() {
        if let Some((si, port, starts, nodes)) = *e {
            let sign_pos = g.hi[h].1 == EAST || g.hi[h].1 == NORTH;
            let mv = Act::Move {
                port,
                start: if starts { Some(sign_pos) } else { None },
            };
            let (bytes, _) = rebuild(si, vec![mv]);
            let node = (si / 20) as u32;
            // The exit into the HI, pushed first by `outs_of`, comes out last.
            let outs = outs_of(si, Some((node, port)));
            to_hi[h] = Some(Leg {
                bytes,
                to: Stop::Hi(h as u32),
                nodes,
                outs,
            });
        }
    }
    LegTable { to_proc, to_hi }
}

/// Routes between HIs on one network, with the leg tables cached per start.
pub struct Router<'g> {
    pub g: &'g MGraph,
    cache: Vec<Option<LegTable>>,
    hi_cache: Vec<Option<LegTable>>,
    banned: BTreeSet<(u32, u16)>,
}

impl<'g> Router<'g> {
    pub fn new(g: &'g MGraph) -> Router<'g> {
        Router {
            g,
            cache: (0..g.nodes()).map(|_| None).collect(),
            hi_cache: (0..g.hi.len()).map(|_| None).collect(),
            banned: BTreeSet::new(),
        }
    }

    /// A router that avoids the given node outputs (links of other high-bandwidth flows).
    pub fn avoiding(g: &'g MGraph, banned: BTreeSet<(u32, u16)>) -> Router<'g> {
        let mut r = Router::new(g);
        r.banned = banned;
        r
    }

    /// Forgets the leg tables (a guard's graph has grown: some legs may no longer fit).
    pub fn clear(&mut self) {
        self.cache.iter_mut().for_each(|c| *c = None);
        self.hi_cache.iter_mut().for_each(|c| *c = None);
    }

    fn table(&mut self, s: Start, hi: Option<u32>, guard: Option<&Guard>) -> &LegTable {
        let (g, banned) = (self.g, &self.banned);
        match hi {
            Some(h) => self.hi_cache[h as usize].get_or_insert_with(|| legs_from(g, s, banned, guard)),
            None => self.cache[s.node as usize].get_or_insert_with(|| legs_from(g, s, banned, guard)),
        }
    }

    /// The best route from `from` to `to`: from an HI or a node's processor, to an HI or a
    /// node's processor. Fewest store-and-forward points, then fewest nodes passed.
    pub fn route(&mut self, from: Stop, to: Stop) -> Option<Route> {
        self.route_with(from, to, None)
    }

    /// The table of legs from processor `p`, or from the route's start `first`.
    fn table_of(&mut self, first: (Start, Option<u32>), p: Option<u32>, guard: Option<&Guard>) -> &LegTable {
        match p {
            None => self.table(first.0, first.1, guard),
            Some(q) => self.table(
                Start {
                    node: q,
                    in_port: PROC,
                },
                None,
                guard,
            ),
        }
    }

    /// [`Self::route`] with legs that each fit `guard` (legs cached from a smaller guard
    /// graph are kept until [`Self::clear`]: a superset of what fits now).
    pub fn route_with(&mut self, from: Stop, to: Stop, guard: Option<&Guard>) -> Option<Route> {
        let n = self.g.nodes();
        // Dijkstra over processors; cost (legs, nodes). A leg is named by the processor
        // whose table holds it (None: the start's table) and its end.
        let mut best: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX); n];
        let mut prev: Vec<Option<Option<u32>>> = vec![None; n];
        let mut done = vec![false; n];
        let mut final_best: Option<((u32, u32), Option<u32>)> = None;
        let first = match from {
            Stop::Hi(h) => {
                let (node, port, _) = self.g.hi[h as usize];
                (Start { node, in_port: port }, Some(h))
            }
            Stop::Proc(p) => (
                Start {
                    node: p,
                    in_port: PROC,
                },
                None,
            ),
        };
        let end = |t: &LegTable| -> Option<u32> {
            match to {
                Stop::Hi(h) => t.to_hi[h as usize].as_ref().map(|l| l.nodes),
                Stop::Proc(p) => t.to_proc[p as usize].as_ref().map(|l| l.nodes),
            }
        };
        let mut open: Option<Open> = Some((first.0, first.1, None, (0, 0)));
        while let Some((s, hi, from_proc, c)) = open.take() {
            let t = self.table(s, hi, guard);
            if let Some(k) = end(t) {
                let cc = (c.0 + 1, c.1 + k);
                if final_best.is_none_or(|f| cc < f.0) {
                    final_best = Some((cc, from_proc));
                }
            }
            for (v, leg) in t.to_proc.iter().enumerate() {
                if let Some(leg) = leg {
                    let cc = (c.0 + 1, c.1 + leg.nodes);
                    if !done[v] && cc < best[v] {
                        best[v] = cc;
                        prev[v] = Some(from_proc);
                    }
                }
            }
            // Next processor to expand.
            let next = (0..n)
                .filter(|&v| !done[v] && best[v].0 != u32::MAX)
                .min_by_key(|&v| best[v]);
            let Some(v) = next else { break };
            if final_best.is_some_and(|f| f.0 <= best[v]) {
                break;
            }
            done[v] = true;
            open = Some((
                Start {
                    node: v as u32,
                    in_port: PROC,
                },
                None,
                Some(v as u32),
                best[v],
            ));
        }
        let (_, mut at) = final_best?;
        let last = match to {
            Stop::Hi(h) => self.table_of(first, at, guard).to_hi[h as usize].clone(),
            Stop::Proc(p) => self.table_of(first, at, guard).to_proc[p as usize].clone(),
        }?;
        let mut legs = vec![last];
        while let Some(p) = at {
            let pp = prev[p as usize]?;
            legs.push(self.table_of(first, pp, guard).to_proc[p as usize].clone()?);
            at = pp;
        }
        legs.reverse();
        let from_proc = match from {
            Stop::Proc(p) => Some(p),
            Stop::Hi(_) => None,
        };
        Some(Route { from_proc, legs })
    }
}

/// A processor open in the route search: where its legs start, from which HI, the
/// processor whose table holds the leg there, and the cost so far.
type Open = (Start, Option<u32>, Option<u32>, (u32, u32));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::mosaic::{Lan, LanParams};

    #[test]
    fn mesh_routes_are_one_pair() {
        let lan = Lan::board(
            "b",
            4,
            &[(0, 0, WEST), (3, 3, EAST), (2, 3, NORTH), (0, 2, WEST)],
            1000,
        );
        let lf = lan.build(&LanParams::default()).unwrap();
        let g = MGraph::from_lan(&lf, &|_| false);
        let mut r = Router::new(&g);
        // West of (0,0) to East of (3,3): East 4 (the last hop into the HI), North 3 — but X
        // comes before Y, so it cannot leave East at row 3 in one leg.
        let a = r.route(Stop::Hi(0), Stop::Hi(1)).unwrap();
        assert_eq!(a.sf_points(), 1, "{a:?}");
        // To the North HI above (2,3): East 2 then North 4, one leg.
        let b = r.route(Stop::Hi(0), Stop::Hi(2)).unwrap();
        assert_eq!(b.legs.len(), 1);
        assert_eq!(b.legs[0].bytes, vec![2, 4]);
        let (arr, _, _) = g.walk(0, WEST, &b.bytes());
        assert_eq!(arr, crate::control::graph::Arrival::Hi(2));
        for (x, y) in [(0, 1), (1, 0), (1, 2), (3, 3)] {
            let h = (x, y);
            let _ = h;
        }
        // Every route walks to where it says.
        for s in 0..4 {
            for d in 0..4 {
                if s == d {
                    continue;
                }
                let rt = r.route(Stop::Hi(s), Stop::Hi(d)).unwrap();
                let (node, port, _) = g.hi[s as usize];
                let mut at = (node, port);
                for (i, leg) in rt.legs.iter().enumerate() {
                    let (arr, _, _) = g.walk(at.0, at.1, &leg.bytes);
                    match (arr, leg.to) {
                        (crate::control::graph::Arrival::Proc { node, .. }, Stop::Proc(p)) => {
                            assert_eq!(node, p);
                            at = (p, PROC);
                        }
                        (crate::control::graph::Arrival::Hi(h), Stop::Hi(hh)) => {
                            assert_eq!(h, hh);
                            assert_eq!(i + 1, rt.legs.len());
                        }
                        other => panic!("{s}→{d} leg {i}: {other:?} {rt:?}"),
                    }
                }
            }
        }
    }
}

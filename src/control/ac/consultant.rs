//! The Address Consultant: maps the network by loop probes or by modified flooding, hands
//! every HI its route to the AC, answers route requests from its deadlock-free route set
//! (high-bandwidth flows placed apart) and maps again when a complaint shows the map stale.

use super::{
    Ac, Atomic, Body, EdgeRep, Found, MapB, MapResult, Mode, Piece, T_PROBE, T_QUIET, hi_entry,
    one_hop_exact, opposite, tok,
};
use crate::control::graph::{End, MGraph};
use crate::control::routes::{Route, RouteSet, Router, Stop};
use crate::engine::agent::Ctl;
use std::collections::{BTreeMap, BTreeSet};

impl Atomic<'_> {
    pub(super) fn start_ac(&mut self, ctl: &mut Ctl, h: u32) {
        let epoch = self.acs.get(&h).map_or(0, |a| a.epoch + 1);
        let prev = self.acs.remove(&h);
        let mut ac = Ac {
            host: h,
            epoch,
            map: MapB::default(),
            busy: prev.as_ref().map_or(0, |a| a.busy),
            pending: BTreeMap::new(),
            mapping: true,
            started: ctl.now(),
            done_at: None,
            ac_msgs: 0,
            node_msgs: 0,
            last_news: ctl.now(),
            installed: BTreeSet::new(),
            next_label: 1,
            requests: prev.as_ref().map_or(vec![], |a| a.requests.clone()),
            hb_routes: BTreeMap::new(),
            routes: prev.as_ref().and_then(|a| a.routes.clone()),
            answered_by: 0,
            first: None,
            remap_wanted: false,
        };
        // The AC knows its own position: the port its HI is on. It is HI 0 of its map.
        let (_, port) = self.entry(h);
        ac.map.g.hi.push((u32::MAX, port, h));
        self.acs.insert(h, ac);
        self.kern[h as usize].ac = Some((h, Route::default()));
        match self.cfg.mode {
            Mode::Loops => {
                let label = self.fresh_label(h);
                let pieces = vec![Piece::Bytes(hi_entry(port)), Piece::Return];
                let body = Body::Probe {
                    ac: h,
                    epoch,
                    label,
                    found: None,
                };
                let tag = self.launch(ctl, h, pieces, 8, body, Some(h));
                self.probe_sent(ctl, h, tag, u32::MAX, port);
            }
            Mode::Flood => {
                let pieces = vec![Piece::Bytes([hi_entry(port), vec![0, 0]].concat())];
                let body = Body::Explore {
                    ac: h,
                    epoch,
                    label: vec![],
                    port: 0,
                    from_hi: Some(h),
                };
                self.launch(ctl, h, pieces, 8, body, Some(h));
                let t = ctl.now() + self.cfg.quiet;
                ctl.timer(h, t, tok(T_QUIET, epoch as u64));
            }
        }
    }

    fn fresh_label(&mut self, h: u32) -> u32 {
        let a = self.acs.get_mut(&h).expect("an AC");
        a.next_label += 1;
        a.next_label
    }

    fn probe_sent(&mut self, ctl: &mut Ctl, h: u32, tag: u64, node: u32, port: u16) {
        let a = self.acs.get_mut(&h).expect("an AC");
        a.pending.insert(tag, (node, port));
        let t = a.busy.max(ctl.now()) + self.cfg.probe_timeout;
        ctl.timer(h, t, tok(T_PROBE, tag));
    }

    /// Loop probe of output `port` of map node `k`.
    fn probe(&mut self, ctl: &mut Ctl, h: u32, k: u32, port: u16) {
        let a = &self.acs[&h];
        let mut r = Router::new(&a.map.g);
        let (Some(there), Some(back)) = (
            r.route(Stop::Hi(0), Stop::Proc(k)),
            r.route(Stop::Proc(k), Stop::Hi(0)),
        ) else {
            return;
        };
        let epoch = a.epoch;
        let label = self.fresh_label(h);
        let mut pieces = Self::pieces(&there);
        pieces.push(Piece::Bytes(one_hop_exact(port)));
        pieces.push(Piece::Return);
        pieces.extend(Self::pieces(&back));
        let body = Body::Probe {
            ac: h,
            epoch,
            label,
            found: None,
        };
        let tag = self.launch(ctl, h, pieces, 8, body, Some(h));
        self.probe_sent(ctl, h, tag, k, port);
    }

    pub(super) fn probe_back(&mut self, ctl: &mut Ctl, h: u32, tag: u64, found: Found) {
        let Some(a) = self.acs.get_mut(&h) else { return };
        let Some((k, port)) = a.pending.remove(&tag) else {
            return;
        };
        a.last_news = ctl.now();
        let mut new_node = None;
        match found {
            Found::Hi(addr) => {
                let i = a.map.g.hi.len() as u32;
                if k != u32::MAX {
                    a.map.g.hi.push((k, port, addr));
                    a.map.g.out[k as usize][port as usize] = Some(End::Hi(i));
                    a.map.known[k as usize][port as usize] = true;
                }
            }
            Found::Node { label, new } => {
                let m = a.map.node(&[label as u16, (label >> 16) as u16]);
                if new {
                    new_node = Some(m);
                }
                if k == u32::MAX {
                    // The AC's own node: its HI is on `port`.
                    a.map.g.hi[0].0 = m;
                    a.map.g.out[m as usize][port as usize] = Some(End::Hi(0));
                    a.map.known[m as usize][port as usize] = true;
                } else {
                    let back = opposite(port);
                    a.map.g.out[k as usize][port as usize] = Some(End::Node(m, back));
                    a.map.g.out[m as usize][back as usize] = Some(End::Node(k, port));
                    a.map.known[k as usize][port as usize] = true;
                    a.map.known[m as usize][back as usize] = true;
                }
            }
        }
        if let Some(m) = new_node {
            for p in 0..4u16 {
                if !self.acs[&h].map.known[m as usize][p as usize] {
                    self.probe(ctl, h, m, p);
                }
            }
        }
        self.loops_maybe_done(ctl, h);
    }

    pub(super) fn probe_timeout(&mut self, ctl: &mut Ctl, h: u32, tag: u64) {
        let Some(a) = self.acs.get_mut(&h) else { return };
        let Some((k, port)) = a.pending.remove(&tag) else {
            return;
        };
        if k != u32::MAX {
            a.map.known[k as usize][port as usize] = true;
        }
        self.loops_maybe_done(ctl, h);
    }

    fn loops_maybe_done(&mut self, ctl: &mut Ctl, h: u32) {
        let a = &self.acs[&h];
        if !a.mapping || !a.pending.is_empty() {
            return;
        }
        self.map_done(ctl, h);
    }

    /// The map is complete: hand every HI its route to the AC, then answer what waits.
    pub(super) fn map_done(&mut self, ctl: &mut Ctl, h: u32) {
        let a = self.acs.get_mut(&h).expect("an AC");
        a.mapping = false;
        a.done_at = Some(ctl.now());
        let g = a.map.g.clone();
        let epoch = a.epoch;
        if a.first.is_none() {
            a.first = Some(MapResult {
                ac: h,
                started: a.started,
                done: ctl.now(),
                ac_msgs: a.ac_msgs,
                node_msgs: a.node_msgs,
                map: g.clone(),
                labels: a.map.node_label.clone(),
                epoch,
            });
        }
        let set = RouteSet::all_pairs(&g);
        self.acs.get_mut(&h).expect("an AC").routes = Some((g.clone(), set));
        // Routes for those who asked (again, after a remap) first: their flows wait.
        let reqs = self.acs[&h].requests.clone();
        let reqs: Vec<(u32, u32, bool)> = reqs.into_iter().collect::<BTreeSet<_>>().into_iter().collect();
        self.acs.get_mut(&h).expect("an AC").hb_routes.clear();
        for (from, addr, hb) in reqs {
            if from == h {
                self.answer_local(ctl, h, addr, hb);
            } else {
                self.answer(ctl, h, from, addr, hb);
            }
        }
        // Then every HI not yet told its route to the AC.
        for i in 1..g.hi.len() as u32 {
            if self.acs[&h].installed.contains(&End::Hi(i)) {
                continue;
            }
            let (Some(there), Some(back)) = (self.served(h, &g, 0, i), self.served(h, &g, i, 0)) else {
                continue;
            };
            self.acs.get_mut(&h).expect("an AC").installed.insert(End::Hi(i));
            let body = Body::Install {
                ac: h,
                epoch,
                to_ac: back,
            };
            self.launch(ctl, h, Self::pieces(&there), 16, body, Some(h));
        }
        let a = self.acs.get_mut(&h).expect("an AC");
        a.answered_by = a.busy.max(ctl.now());
        if self.cfg.stop_when_mapped
            && self.acs.values().all(|a| a.first.is_some())
            && self.cfg.flows.is_empty()
        {
            ctl.stop();
        }
        if self.acs[&h].remap_wanted {
            self.acs.get_mut(&h).expect("an AC").remap_wanted = false;
            self.remap(ctl, h);
        }
    }

    /// Whether a complaint to AC `h` calls for a new map: it is about a route of the AC's
    /// current map, or about no answer although the map has been done for a while (not about
    /// a route the new map has already replaced, nor a reply still on its way).
    pub(super) fn stale(&self, ctl: &Ctl, h: u32, epoch: Option<u32>) -> bool {
        let Some(a) = self.acs.get(&h) else { return false };
        !a.mapping
            && match epoch {
                Some(e) => e >= a.epoch,
                None => a.done_at.is_some() && ctl.now() >= a.answered_by + self.cfg.complain_after,
            }
    }

    pub(super) fn remap(&mut self, ctl: &mut Ctl, h: u32) {
        if self.acs[&h].mapping {
            self.acs.get_mut(&h).expect("an AC").remap_wanted = true;
            return;
        }
        self.remaps += 1;
        self.start_ac(ctl, h);
    }

    /// The route the service hands out from HI `a` to HI `b` of the AC's map `g`: the one in
    /// its deadlock-free set, or, for a pair the set has none for, the best route at all
    /// (counted in [`Atomic::outside_set`]).
    fn served(&mut self, h: u32, g: &MGraph, a: u32, b: u32) -> Option<Route> {
        if let Some(r) = self.acs[&h].routes.as_ref().and_then(|s| s.1.get(a, b)) {
            return Some(r.clone());
        }
        let r = Router::new(g).route(Stop::Hi(a), Stop::Hi(b))?;
        self.outside_set += 1;
        Some(r)
    }

    /// A high-bandwidth route from HI `a` to HI `b` of map `g`: placed anew in the set,
    /// avoiding the links of the other high-bandwidth flows if it can.
    fn served_hb(&mut self, h: u32, g: &MGraph, a: u32, b: u32, key: (u32, u32)) -> Option<Route> {
        let ac = self.acs.get_mut(&h).expect("an AC");
        let banned: BTreeSet<(u32, u16)> = ac
            .hb_routes
            .iter()
            .filter(|(k, _)| **k != key)
            .flat_map(|(_, r)| r.outs().collect::<Vec<_>>())
            .collect();
        let r = ac.routes.as_mut().and_then(|s| s.1.reroute(g, a, b, &banned));
        match r {
            Some(r) => {
                ac.hb_routes.insert(key, r.clone());
                Some(r)
            }
            None => self.served(h, g, a, b),
        }
    }

    /// Files the request of HI `from` for a route to address `addr` at AC `h` (once) and
    /// returns the AC's map to answer it from, or `None` while the AC maps (the request
    /// waits for the new map).
    pub(super) fn file_request(&mut self, h: u32, from: u32, addr: u32, hb: bool) -> Option<MGraph> {
        let a = self.acs.get_mut(&h).expect("an AC");
        if !a.requests.contains(&(from, addr, hb)) {
            a.requests.push((from, addr, hb));
        }
        (!a.mapping).then(|| a.map.g.clone())
    }

    /// The route handed out from HI `a` to HI `b` of map `g`: high-bandwidth or not.
    pub(super) fn route_for(
        &mut self,
        h: u32,
        g: &MGraph,
        a: u32,
        b: u32,
        key: (u32, u32),
        hb: bool,
    ) -> Option<Route> {
        if hb {
            self.served_hb(h, g, a, b, key)
        } else {
            self.served(h, g, a, b)
        }
    }

    /// Route from HI `from` to the HI with address `addr`, sent to `from`. While the AC maps,
    /// the request waits for the new map.
    pub(super) fn answer(&mut self, ctl: &mut Ctl, h: u32, from: u32, addr: u32, hb: bool) {
        let Some(g) = self.file_request(h, from, addr, hb) else {
            return;
        };
        let epoch = self.acs[&h].epoch;
        let (Some(fi), Some(ti)) = (g.hi_of(from), g.hi_of(addr)) else {
            return;
        };
        let Some(route) = self.route_for(h, &g, fi, ti, (from, addr), hb) else {
            return;
        };
        let Some(there) = self.served(h, &g, 0, fi) else {
            return;
        };
        self.given.push((from, addr, route.clone()));
        let body = Body::RouteReply { epoch, addr, route };
        self.launch(ctl, h, Self::pieces(&there), 32, body, None);
    }

    /// Flooding: the AC learns edges; nodes that can now reach it get their route.
    pub(super) fn learn(&mut self, ctl: &mut Ctl, h: u32, edges: &[EdgeRep]) {
        let Some(a) = self.acs.get_mut(&h) else { return };
        if !a.mapping {
            return;
        }
        a.last_news = ctl.now();
        for e in edges {
            // The labels are paths from the AC: every step is an edge.
            for (lab, is_hi) in [(&e.from, e.from_hi.is_some()), (&e.to, e.hi.is_some())] {
                let mut at: Option<u32> = None;
                let steps = if is_hi {
                    lab.len().saturating_sub(2)
                } else {
                    lab.len()
                };
                for i in (0..steps).step_by(2) {
                    let (q, r) = (lab[i], lab[i + 1]);
                    let next = a.map.node(&lab[..i + 2]);
                    match at {
                        None => {
                            a.map.g.hi[0].0 = next;
                            a.map.g.out[next as usize][r as usize] = Some(End::Hi(0));
                            a.map.g.hi[0].1 = r;
                        }
                        Some(p) => a.map.g.out[p as usize][q as usize] = Some(End::Node(next, r)),
                    }
                    at = Some(next);
                }
            }
            if let (Some(addr), None) = (e.from_hi, e.hi) {
                // An HI's own copy: it sits on this node's input port, both ways.
                let t = a.map.node(&e.to);
                let i = match a.map.g.hi_of(addr) {
                    Some(i) => i,
                    None => {
                        a.map.g.hi.push((t, e.in_port, addr));
                        a.map.g.hi.len() as u32 - 1
                    }
                };
                a.map.g.out[t as usize][e.in_port as usize] = Some(End::Hi(i));
            }
            let from = if e.from_hi.is_some() {
                None
            } else {
                Some(a.map.node(&e.from))
            };
            match (from, e.hi) {
                (Some(f), Some(addr)) => {
                    let i = match a.map.g.hi_of(addr) {
                        Some(i) => i,
                        None => {
                            a.map.g.hi.push((f, e.port, addr));
                            a.map.g.hi.len() as u32 - 1
                        }
                    };
                    a.map.g.out[f as usize][e.port as usize] = Some(End::Hi(i));
                }
                (Some(f), None) => {
                    let t = a.map.node(&e.to);
                    a.map.g.out[f as usize][e.port as usize] = Some(End::Node(t, e.in_port));
                }
                (None, _) => {}
            }
        }
        // Installs for every node or HI that can now reach the AC.
        let g = a.map.g.clone();
        if g.hi[0].0 == u32::MAX {
            return;
        }
        let epoch = a.epoch;
        let mut todo: Vec<(End, Stop)> = Vec::new();
        for n in 0..g.nodes() as u32 {
            if !a.installed.contains(&End::Node(n, 0)) {
                todo.push((End::Node(n, 0), Stop::Proc(n)));
            }
        }
        for i in 1..g.hi.len() as u32 {
            if !a.installed.contains(&End::Hi(i)) {
                todo.push((End::Hi(i), Stop::Hi(i)));
            }
        }
        let mut r = Router::new(&g);
        for (key, stop) in todo {
            let (Some(there), Some(back)) = (r.route(Stop::Hi(0), stop), r.route(stop, Stop::Hi(0))) else {
                continue;
            };
            self.acs.get_mut(&h).expect("an AC").installed.insert(key);
            let body = Body::Install {
                ac: h,
                epoch,
                to_ac: back,
            };
            self.launch(ctl, h, Self::pieces(&there), 16, body, Some(h));
        }
        let t = ctl.now() + self.cfg.quiet;
        ctl.timer(h, t, tok(T_QUIET, epoch as u64));
    }
}

//! Everything that runs on an ATOMIC LAN, as one agent: the node processors' forwarding and
//! mapping programs, the hosts' kernels (address table, route requests, flows and their
//! acknowledgements, complaints) and the Address Consultant(s).
//!
//! What each program may know is kept apart: the AC learns the network only from the packets
//! that come back to it. The agent itself also knows the real topology, but uses it only as
//! physics — to tell the engine which host a packet it routes by its bytes will reach (the
//! engine's bookkeeping) and on which input port it comes into a node (which a node's
//! program is assumed to be able to read from its router).
//!
//! Assumptions (not in the sources; documented in the report): a node or HI program can read
//! the input port a packet came in on; an AC may write a mark into a node's memory (loop
//! probes) — its way to recognise a node it meets again; a message is one packet; the AC
//! host spends [`Config::ac_cost`] of CPU on every packet it sends or receives (a Sun-3 user
//! process); a loop probe that has not returned after [`Config::probe_timeout`] proves the
//! absence of what it probed; flooding ends after [`Config::quiet`] without news.

use super::graph::{Arrival, End, MGraph};
use super::routes::{Route, RouteSet, Router, Stop};
use crate::engine::agent::{Agent, Ctl, Delivery, Message};
use crate::fabric::mosaic::LanFabric;
use crate::routing::mosaic::{EAST, NORTH, PROC, SOUTH, WEST, x_input};
use crate::time::Time;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How an AC maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Loop probes, breadth first; symmetric, consistent networks only.
    Loops,
    /// Modified flooding: the nodes forward exploration packets; any network.
    Flood,
}

/// A data flow between two HIs.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    /// Bytes per packet after the route [bytes].
    pub payload: u32,
    /// Time between packets [ps].
    pub period: Time,
    pub start: Time,
    /// High bandwidth: its route avoids the links of other such flows.
    pub hb: bool,
}

/// What fails.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// A channel (by fabric channel id).
    Channel(u32),
    /// A Mosaic node (its channels and its processor).
    Node(u32),
}

/// The run's setup.
#[derive(Clone, Debug)]
pub struct Config {
    pub mode: Mode,
    /// HIs (host numbers) that are ACs from the start.
    pub acs: Vec<u32>,
    /// HIs that become an AC if none has reached them by `find_timeout` (staggered by
    /// `stagger` in the order listed).
    pub candidates: Vec<u32>,
    pub find_timeout: Time,
    pub stagger: Time,
    pub probe_timeout: Time,
    pub quiet: Time,
    /// AC host CPU per packet sent or received [ps].
    pub ac_cost: Time,
    pub flows: Vec<Flow>,
    pub faults: Vec<(Time, Fault)>,
    /// The sink acknowledges every this many packets.
    pub ack_every: u32,
    /// A source complains to its AC after this long without an acknowledgement [ps].
    pub complain_after: Time,
    /// Stop the run then [ps].
    pub stop_at: Time,
    /// Stop as soon as every AC has finished its first map (mapping runs).
    pub stop_when_mapped: bool,
}

impl Config {
    pub fn mapping(mode: Mode, acs: Vec<u32>) -> Config {
        Config {
            mode,
            acs,
            candidates: vec![],
            find_timeout: 200_000_000,
            stagger: 50_000_000,
            probe_timeout: 100_000_000,
            quiet: 100_000_000,
            ac_cost: 20_000_000,
            flows: vec![],
            faults: vec![],
            ack_every: 8,
            complain_after: 200_000_000,
            stop_at: 1_000_000_000_000,
            stop_when_mapped: true,
        }
    }
}

/// One piece of a packet's route still to go.
#[derive(Clone, Debug)]
enum Piece {
    Bytes(Vec<i8>),
    /// The probed node or HI puts in the hop back the way the probe came.
    Return,
}

/// What a packet carries.
#[derive(Clone, Debug)]
enum Body {
    Probe {
        ac: u32,
        epoch: u32,
        label: u32,
        found: Option<Found>,
    },
    Explore {
        ac: u32,
        epoch: u32,
        label: Vec<u16>,
        port: u16,
        from_hi: Option<u32>,
    },
    Report {
        ac: u32,
        epoch: u32,
        edges: Vec<EdgeRep>,
    },
    Install {
        ac: u32,
        epoch: u32,
        to_ac: Route,
    },
    RouteReq {
        ac: u32,
        from: u32,
        addr: u32,
        hb: bool,
    },
    RouteReply {
        epoch: u32,
        addr: u32,
        route: Route,
    },
    /// A flow's packets are not acknowledged: about the route of this epoch, or (None) no
    /// answer to a route request.
    Complaint {
        epoch: Option<u32>,
    },
    Data {
        flow: usize,
        epoch: u32,
    },
    Ack {
        flow: usize,
    },
}

/// What a loop probe met.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Found {
    Node { label: u32, new: bool },
    Hi(u32),
}

/// An edge a node or HI saw an exploration packet come in over.
#[derive(Clone, Debug)]
struct EdgeRep {
    from: Vec<u16>,
    port: u16,
    to: Vec<u16>,
    in_port: u16,
    /// The receiver is an HI with this address.
    hi: Option<u32>,
    /// The sender is an HI with this address.
    from_hi: Option<u32>,
}

#[derive(Clone, Debug)]
struct Pkt {
    pieces: VecDeque<Piece>,
    payload: u32,
    body: Body,
    /// Where the leg in flight should end (for a probe's hop: anywhere).
    expect: Option<u32>,
    in_port: u16,
}

/// A node's or HI's state for one AC's mapping (one epoch).
#[derive(Clone, Debug, Default)]
struct Prog {
    mark: Option<u32>,
    label: Option<Vec<u16>>,
    stored: Vec<EdgeRep>,
    to_ac: Option<Route>,
}

/// One AC's map as it is being built.
#[derive(Clone, Debug, Default)]
struct MapB {
    g: MGraph,
    known: Vec<[bool; 4]>,
    labels: BTreeMap<Vec<u16>, End>,
    node_label: Vec<Vec<u16>>,
}

impl MapB {
    fn node(&mut self, label: &[u16]) -> u32 {
        if let Some(End::Node(n, _)) = self.labels.get(label) {
            return *n;
        }
        let n = self.g.out.len() as u32;
        self.g.out.push([None; 4]);
        self.known.push([false; 4]);
        self.labels.insert(label.to_vec(), End::Node(n, 0));
        self.node_label.push(label.to_vec());
        n
    }
}

/// One Address Consultant.
#[derive(Clone, Debug)]
struct Ac {
    host: u32,
    epoch: u32,
    map: MapB,
    busy: Time,
    pending: BTreeMap<u64, (u32, u16)>,
    mapping: bool,
    started: Time,
    done_at: Option<Time>,
    /// Mapping packets this AC sent, and those nodes and HIs sent for it.
    ac_msgs: u64,
    node_msgs: u64,
    last_news: Time,
    installed: BTreeSet<End>,
    next_label: u32,
    requests: Vec<(u32, u32, bool)>,
    hb_routes: BTreeMap<(u32, u32), Route>,
    /// The routes between every pair of HIs of the last complete map, deadlock-free as a set.
    routes: Option<(MGraph, RouteSet)>,
    /// When the AC's CPU had sent what its last complete map called for (answers, routes
    /// to the AC): a host with no answer after that, and a while more, has lost its request.
    answered_by: Time,
    /// First map: (time, messages, map, labels of its nodes).
    first: Option<MapResult>,
    remap_wanted: bool,
}

/// What an AC found.
#[derive(Clone, Debug)]
pub struct MapResult {
    pub ac: u32,
    pub started: Time,
    pub done: Time,
    pub ac_msgs: u64,
    pub node_msgs: u64,
    pub map: MGraph,
    /// The label the AC knows each map node by (a mark it wrote, or its path from the AC).
    pub labels: Vec<Vec<u16>>,
    pub epoch: u32,
}

/// Per-flow outcome.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    pub sent: u64,
    pub delivered: u64,
    /// First delivery of a packet sent on a route given after the last fault [ps].
    pub recovered_at: Option<Time>,
    pub route: Option<Route>,
    pub last_ack: Time,
    pub epoch_at_fault: Option<u32>,
    pub complaints: u64,
}

#[derive(Clone, Debug, Default)]
struct HostK {
    ac: Option<(u32, Route)>,
    table: BTreeMap<u32, (u32, Route)>,
    waiting: BTreeSet<u32>,
    asked: BTreeMap<u32, Time>,
}

/// The agent.
pub struct Atomic<'a> {
    pub lan: &'a LanFabric,
    pub cfg: Config,
    truth: MGraph,
    pkts: BTreeMap<u64, Pkt>,
    next_tag: u64,
    progs: BTreeMap<(u32, u32, u32), Prog>,
    acs: BTreeMap<u32, Ac>,
    kern: Vec<HostK>,
    dead: BTreeSet<u32>,
    pub flows: Vec<FlowStats>,
    pub results: Vec<MapResult>,
    /// Every route handed out (for the deadlock check).
    pub given: Vec<(u32, u32, Route)>,
    /// Routes handed out from outside the deadlock-free set (pairs it has no route for).
    pub outside_set: u64,
    pub remaps: u64,
}

const T_SEND: u64 = 1;
const T_PROBE: u64 = 2;
const T_QUIET: u64 = 3;
const T_FLOW: u64 = 4;
const T_WATCH: u64 = 5;
const T_ELECT: u64 = 6;
const T_FAULT: u64 = 7;
const T_END: u64 = 8;

fn tok(kind: u64, x: u64) -> u64 {
    (kind << 56) | x
}

/// One hop from a processor out of `port`, padded so that it ends in the next node's
/// processor whichever role its input gives the bytes.
fn one_hop(port: u16) -> Vec<i8> {
    match port {
        EAST => vec![1, 0, 0, 0],
        WEST => vec![-1, 0, 0, 0],
        NORTH => vec![0, 1, 0, 0],
        _ => vec![0, -1, 0, 0],
    }
}

/// One hop from a processor out of `port` on a consistent link (a loop probe's hop).
fn one_hop_exact(port: u16) -> Vec<i8> {
    match port {
        EAST => vec![1, 0],
        WEST => vec![-1, 0],
        NORTH => vec![0, 1],
        _ => vec![0, -1],
    }
}

/// From an HI on a port into that node's processor.
fn hi_entry(port: u16) -> Vec<i8> {
    if x_input(port) { vec![0, 0] } else { vec![0] }
}

fn opposite(p: u16) -> u16 {
    p ^ 1
}

impl<'a> Atomic<'a> {
    pub fn new(lan: &'a LanFabric, cfg: Config) -> Atomic<'a> {
        let truth = MGraph::from_lan(lan, &|_| false);
        let n = lan.fab.num_hosts();
        let flows = vec![FlowStats::default(); cfg.flows.len()];
        Atomic {
            lan,
            cfg,
            truth,
            pkts: BTreeMap::new(),
            next_tag: 1,
            progs: BTreeMap::new(),
            acs: BTreeMap::new(),
            kern: vec![HostK::default(); n],
            dead: BTreeSet::new(),
            flows,
            results: vec![],
            given: vec![],
            outside_set: 0,
            remaps: 0,
        }
    }

    fn is_proc(&self, h: u32) -> bool {
        self.lan.is_processor(h)
    }

    fn hi_index(&self, h: u32) -> u32 {
        h - self.lan.nodes
    }

    /// Where a packet sent by host `h` enters the routers.
    fn entry(&self, h: u32) -> (u32, u16) {
        if self.is_proc(h) {
            (h, PROC)
        } else {
            let (n, p, _) = self.truth.hi[self.hi_index(h) as usize];
            (n, p)
        }
    }

    /// Sends the next leg of packet `tag` from host `h` now.
    fn send_leg(&mut self, ctl: &mut Ctl, h: u32, tag: u64) {
        if self.dead.contains(&h) {
            self.pkts.remove(&tag);
            return;
        }
        let (n0, p0) = self.entry(h);
        let Some(pk) = self.pkts.get_mut(&tag) else { return };
        let mut bytes: Vec<i8> = Vec::new();
        for pc in &pk.pieces {
            match pc {
                Piece::Bytes(b) => bytes.extend_from_slice(b),
                Piece::Return => bytes.extend([0, 0, 0, 0]),
            }
        }
        bytes.extend([0, 0]);
        let first = match pk.pieces.front() {
            Some(Piece::Bytes(b)) => b.clone(),
            _ => vec![],
        };
        let (arr, _, _) = self.truth.walk(n0, p0, &first);
        let (dst, in_port) = match arr {
            Arrival::Proc { node, in_port } => (node, in_port),
            Arrival::Hi(i) => (self.lan.his[i as usize], 0),
            Arrival::Lost => (h, 0),
        };
        pk.in_port = in_port;
        pk.expect = Some(dst);
        let flits = bytes.len() as u32 + pk.payload;
        let m = Message {
            src: h,
            dst,
            flits,
            header: bytes.iter().map(|&b| crate::routing::mosaic::enc(b)).collect(),
            tag,
        };
        let _ = ctl.send(m);
    }

    /// A new packet from host `h` (now, or after the AC's CPU if `h` is an AC).
    fn launch(
        &mut self,
        ctl: &mut Ctl,
        h: u32,
        pieces: Vec<Piece>,
        payload: u32,
        body: Body,
        map_of: Option<u32>,
    ) -> u64 {
        let tag = self.next_tag;
        self.next_tag += 1;
        // A message is a packet a program originates (forwarding it on is not another).
        if let Some(ac) = map_of
            && let Some(a) = self.acs.get_mut(&ac)
        {
            if a.host == h {
                a.ac_msgs += 1;
            } else {
                a.node_msgs += 1;
            }
        }
        let expect = None;
        self.pkts.insert(
            tag,
            Pkt {
                pieces: pieces.into(),
                payload,
                body,
                expect,
                in_port: 0,
            },
        );
        let cost = self.cfg.ac_cost;
        if let Some(a) = self.acs.get_mut(&h) {
            let t = a.busy.max(ctl.now()) + cost;
            a.busy = t;
            ctl.timer(h, t, tok(T_SEND, tag));
        } else {
            self.send_leg(ctl, h, tag);
        }
        tag
    }

    fn ac_cpu(&mut self, ctl: &Ctl, h: u32) {
        let cost = self.cfg.ac_cost;
        if let Some(a) = self.acs.get_mut(&h) {
            a.busy = a.busy.max(ctl.now()) + cost;
        }
    }

    fn pieces(route: &Route) -> Vec<Piece> {
        route.legs.iter().map(|l| Piece::Bytes(l.bytes.clone())).collect()
    }

    // ---------------------------------------------------------------- the AC

    fn start_ac(&mut self, ctl: &mut Ctl, h: u32) {
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

    fn probe_back(&mut self, ctl: &mut Ctl, h: u32, tag: u64, found: Found) {
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

    fn probe_timeout(&mut self, ctl: &mut Ctl, h: u32, tag: u64) {
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
    fn map_done(&mut self, ctl: &mut Ctl, h: u32) {
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
    fn stale(&self, ctl: &Ctl, h: u32, epoch: Option<u32>) -> bool {
        let Some(a) = self.acs.get(&h) else { return false };
        !a.mapping
            && match epoch {
                Some(e) => e >= a.epoch,
                None => a.done_at.is_some() && ctl.now() >= a.answered_by + self.cfg.complain_after,
            }
    }

    fn remap(&mut self, ctl: &mut Ctl, h: u32) {
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
    fn file_request(&mut self, h: u32, from: u32, addr: u32, hb: bool) -> Option<MGraph> {
        let a = self.acs.get_mut(&h).expect("an AC");
        if !a.requests.contains(&(from, addr, hb)) {
            a.requests.push((from, addr, hb));
        }
        (!a.mapping).then(|| a.map.g.clone())
    }

    /// The route handed out from HI `a` to HI `b` of map `g`: high-bandwidth or not.
    fn route_for(&mut self, h: u32, g: &MGraph, a: u32, b: u32, key: (u32, u32), hb: bool) -> Option<Route> {
        if hb {
            self.served_hb(h, g, a, b, key)
        } else {
            self.served(h, g, a, b)
        }
    }

    /// Route from HI `from` to the HI with address `addr`, sent to `from`. While the AC maps,
    /// the request waits for the new map.
    fn answer(&mut self, ctl: &mut Ctl, h: u32, from: u32, addr: u32, hb: bool) {
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
    fn learn(&mut self, ctl: &mut Ctl, h: u32, edges: &[EdgeRep]) {
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

    // ---------------------------------------------------------------- node and HI programs

    fn prog(&mut self, host: u32, ac: u32, epoch: u32) -> &mut Prog {
        self.progs.entry((host, ac, epoch)).or_default()
    }

    #[allow(clippy::too_many_arguments)]
    fn explore(
        &mut self,
        ctl: &mut Ctl,
        x: u32,
        in_port: u16,
        (ac, epoch): (u32, u32),
        from: Vec<u16>,
        port: u16,
        from_hi: Option<u32>,
    ) {
        let hi = (!self.is_proc(x)).then_some(x);
        if self.acs.get(&ac).is_some_and(|a| a.host == x && a.epoch == epoch) {
            // The AC's own HI.
            let e = EdgeRep {
                from,
                port,
                to: vec![],
                in_port: 0,
                hi: Some(x),
                from_hi,
            };
            self.ac_cpu(ctl, x);
            self.learn(ctl, x, &[e]);
            return;
        }
        let p = self.prog(x, ac, epoch);
        let first = p.label.is_none();
        if first {
            let mut l = from.clone();
            l.extend([port, in_port]);
            p.label = Some(l);
        }
        let me = p.label.clone().expect("set");
        let e = EdgeRep {
            from,
            port,
            to: me.clone(),
            in_port,
            hi,
            from_hi,
        };
        if let Some(r) = p.to_ac.clone() {
            let body = Body::Report {
                ac,
                epoch,
                edges: vec![e],
            };
            self.launch(ctl, x, Self::pieces(&r), 24, body, Some(ac));
        } else {
            p.stored.push(e);
        }
        if first {
            let ports: Vec<u16> = if hi.is_some() {
                vec![u16::MAX]
            } else {
                vec![EAST, WEST, NORTH, SOUTH]
            };
            for q in ports {
                let (bytes, qq) = if q == u16::MAX {
                    let (_, hp) = self.entry(x);
                    ([hi_entry(hp), vec![0, 0]].concat(), 0)
                } else {
                    (one_hop(q), q)
                };
                let body = Body::Explore {
                    ac,
                    epoch,
                    label: me.clone(),
                    port: qq,
                    from_hi: hi,
                };
                self.launch(ctl, x, vec![Piece::Bytes(bytes)], 8, body, Some(ac));
            }
        }
    }

    fn install(&mut self, ctl: &mut Ctl, x: u32, ac: u32, epoch: u32, to_ac: Route) {
        if !self.is_proc(x) {
            let k = &mut self.kern[x as usize];
            let newer = k.ac.as_ref().is_none_or(|(a, _)| *a == ac);
            if newer {
                k.ac = Some((ac, to_ac.clone()));
            }
            let waiting: Vec<u32> = std::mem::take(&mut self.kern[x as usize].waiting)
                .into_iter()
                .collect();
            for addr in waiting {
                self.request(ctl, x, addr);
            }
        }
        let p = self.prog(x, ac, epoch);
        p.to_ac = Some(to_ac.clone());
        let stored = std::mem::take(&mut p.stored);
        if !stored.is_empty() {
            let n = stored.len() as u32;
            let body = Body::Report {
                ac,
                epoch,
                edges: stored,
            };
            self.launch(ctl, x, Self::pieces(&to_ac), 16 + 8 * n, body, Some(ac));
        }
    }

    // ---------------------------------------------------------------- host kernels

    fn hb_of(&self, src: u32, addr: u32) -> bool {
        self.cfg
            .flows
            .iter()
            .any(|f| f.src == src && f.dst == addr && f.hb)
    }

    fn request(&mut self, ctl: &mut Ctl, x: u32, addr: u32) {
        let Some((ac, r)) = self.kern[x as usize].ac.clone() else {
            self.kern[x as usize].waiting.insert(addr);
            return;
        };
        let hb = self.hb_of(x, addr);
        if self.acs.contains_key(&x) && ac == x {
            self.ac_cpu(ctl, x);
            self.answer_local(ctl, x, addr, hb);
            return;
        }
        let body = Body::RouteReq {
            ac,
            from: x,
            addr,
            hb,
        };
        self.launch(ctl, x, Self::pieces(&r), 16, body, None);
    }

    /// An AC host asking itself: the route goes straight into its table.
    fn answer_local(&mut self, ctl: &mut Ctl, h: u32, addr: u32, hb: bool) {
        let Some(g) = self.file_request(h, h, addr, hb) else {
            return;
        };
        let (Some(fi), Some(ti)) = (g.hi_of(h), g.hi_of(addr)) else {
            self.kern[h as usize].waiting.insert(addr);
            return;
        };
        let Some(route) = self.route_for(h, &g, fi, ti, (h, addr), hb) else {
            return;
        };
        let epoch = self.acs[&h].epoch;
        self.given.push((h, addr, route.clone()));
        self.kern[h as usize].table.insert(addr, (epoch, route));
        let _ = ctl;
    }

    fn send_data(&mut self, ctl: &mut Ctl, f: usize) {
        let fl = self.cfg.flows[f];
        if self.dead.contains(&fl.src) {
            return;
        }
        match self.kern[fl.src as usize].table.get(&fl.dst).cloned() {
            Some((epoch, route)) => {
                self.flows[f].sent += 1;
                self.flows[f].route = Some(route.clone());
                let body = Body::Data { flow: f, epoch };
                self.launch(ctl, fl.src, Self::pieces(&route), fl.payload, body, None);
            }
            None => {
                // Ask the AC, again only if no answer came for a while.
                let now = ctl.now();
                let k = &mut self.kern[fl.src as usize];
                if k.asked
                    .get(&fl.dst)
                    .is_none_or(|&t| now >= t + self.cfg.complain_after)
                {
                    k.asked.insert(fl.dst, now);
                    self.request(ctl, fl.src, fl.dst);
                }
            }
        }
    }

    // ---------------------------------------------------------------- deliveries

    fn arrive(&mut self, ctl: &mut Ctl, x: u32, tag: u64) {
        let Some(mut pk) = self.pkts.remove(&tag) else {
            return;
        };
        if self.dead.contains(&x) {
            return;
        }
        let in_port = pk.in_port;
        if matches!(pk.pieces.front(), Some(Piece::Bytes(_))) {
            pk.pieces.pop_front();
        }
        // A loop probe's far end: mark, and put in the hop back.
        if matches!(pk.pieces.front(), Some(Piece::Return)) {
            if let Body::Probe {
                ac,
                epoch,
                label,
                ref mut found,
                ..
            } = pk.body
            {
                let f = if self.is_proc(x) {
                    let p = self.progs.entry((x, ac, epoch)).or_default();
                    match p.mark {
                        Some(l) => Found::Node { label: l, new: false },
                        None => {
                            p.mark = Some(label);
                            Found::Node { label, new: true }
                        }
                    }
                } else {
                    Found::Hi(x)
                };
                *found = Some(f);
            }
            let back = if self.is_proc(x) {
                one_hop_exact(in_port)
            } else {
                let (_, p) = self.entry(x);
                hi_entry(p)
            };
            pk.pieces[0] = Piece::Bytes(back);
        }
        if !pk.pieces.is_empty() {
            // Store and forward (the node processor, or an HI's kernel: never the AC's
            // user process).
            pk.expect = None;
            self.pkts.insert(tag, pk);
            self.send_leg(ctl, x, tag);
            return;
        }
        if self.acs.contains_key(&x) {
            self.ac_cpu(ctl, x);
        }
        match pk.body {
            Body::Probe {
                ac,
                epoch,
                found: Some(f),
                ..
            } => {
                if ac == x && self.acs.get(&x).is_some_and(|a| a.epoch == epoch) {
                    self.probe_back(ctl, x, tag, f);
                }
            }
            Body::Probe { .. } => {}
            Body::Explore {
                ac,
                epoch,
                label,
                port,
                from_hi,
            } => self.explore(ctl, x, in_port, (ac, epoch), label, port, from_hi),
            Body::Report { ac, epoch, edges } => {
                if ac == x && self.acs.get(&x).is_some_and(|a| a.epoch == epoch) {
                    self.learn(ctl, x, &edges);
                }
            }
            Body::Install { ac, epoch, to_ac } => self.install(ctl, x, ac, epoch, to_ac),
            Body::RouteReq { ac, from, addr, hb } => {
                if self.acs.contains_key(&ac) && ac == x {
                    self.answer(ctl, x, from, addr, hb);
                }
            }
            Body::RouteReply { epoch, addr, route } => {
                self.kern[x as usize].table.insert(addr, (epoch, route));
                // A fresh route gets a fresh chance before any complaint.
                let now = ctl.now();
                for (i, f) in self.cfg.flows.iter().enumerate() {
                    if f.src == x && f.dst == addr {
                        self.flows[i].last_ack = now;
                    }
                }
            }
            Body::Complaint { epoch, .. } => {
                if self.stale(ctl, x, epoch) {
                    self.remap(ctl, x);
                }
            }
            Body::Data { flow, epoch } => {
                let now = ctl.now();
                let fs = &mut self.flows[flow];
                fs.delivered += 1;
                if let Some(e0) = fs.epoch_at_fault
                    && epoch > e0
                    && fs.recovered_at.is_none()
                {
                    fs.recovered_at = Some(now);
                }
                if fs.delivered.is_multiple_of(self.cfg.ack_every as u64) {
                    let src = self.cfg.flows[flow].src;
                    match self.kern[x as usize].table.get(&src).cloned() {
                        Some((_, r)) => {
                            self.launch(ctl, x, Self::pieces(&r), 8, Body::Ack { flow }, None);
                        }
                        None => {
                            let now = ctl.now();
                            let k = &mut self.kern[x as usize];
                            if k.asked
                                .get(&src)
                                .is_none_or(|&t| now >= t + self.cfg.complain_after)
                            {
                                k.asked.insert(src, now);
                                self.request(ctl, x, src);
                            }
                        }
                    }
                }
            }
            Body::Ack { flow } => {
                self.flows[flow].last_ack = ctl.now();
            }
        }
    }
}

impl Agent for Atomic<'_> {
    fn start(&mut self, ctl: &mut Ctl) {
        for h in self.cfg.acs.clone() {
            self.start_ac(ctl, h);
        }
        for (i, &h) in self.cfg.candidates.clone().iter().enumerate() {
            let t = self.cfg.find_timeout + i as Time * self.cfg.stagger;
            ctl.timer(h, t, tok(T_ELECT, h as u64));
        }
        for (i, f) in self.cfg.flows.clone().iter().enumerate() {
            ctl.timer(f.src, f.start, tok(T_FLOW, i as u64));
            ctl.timer(f.src, f.start + self.cfg.complain_after, tok(T_WATCH, i as u64));
        }
        for (i, &(t, _)) in self.cfg.faults.clone().iter().enumerate() {
            ctl.timer(0, t, tok(T_FAULT, i as u64));
        }
        ctl.timer(0, self.cfg.stop_at, tok(T_END, 0));
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        self.arrive(ctl, d.host, d.tag);
    }

    fn timer(&mut self, ctl: &mut Ctl, host: u32, token: u64) {
        let (kind, x) = (token >> 56, token & ((1 << 56) - 1));
        match kind {
            T_SEND => self.send_leg(ctl, host, x),
            T_PROBE => self.probe_timeout(ctl, host, x),
            T_QUIET => {
                if let Some(a) = self.acs.get(&host)
                    && a.mapping
                    && a.epoch as u64 == x
                {
                    // Quiet counts from the last news or the end of the AC's own work.
                    let due = a.last_news.max(a.busy) + self.cfg.quiet;
                    if ctl.now() >= due {
                        self.map_done(ctl, host);
                    } else {
                        ctl.timer(host, due, tok(T_QUIET, x));
                    }
                }
            }
            T_FLOW => {
                let f = x as usize;
                self.send_data(ctl, f);
                let t = ctl.now() + self.cfg.flows[f].period;
                ctl.timer(host, t, tok(T_FLOW, x));
            }
            T_WATCH => {
                let f = x as usize;
                let fl = self.cfg.flows[f];
                let now = ctl.now();
                if self.flows[f].sent > 0 && now >= self.flows[f].last_ack + self.cfg.complain_after {
                    // Delete the route from the address table and tell the AC.
                    let epoch = self.kern[fl.src as usize].table.remove(&fl.dst).map(|r| r.0);
                    self.flows[f].complaints += 1;
                    self.flows[f].last_ack = now;
                    if let Some((ac, r)) = self.kern[fl.src as usize].ac.clone() {
                        if ac == fl.src {
                            if self.stale(ctl, ac, epoch) {
                                self.remap(ctl, ac);
                            }
                        } else {
                            let body = Body::Complaint { epoch };
                            self.launch(ctl, fl.src, Self::pieces(&r), 16, body, None);
                        }
                    }
                }
                ctl.timer(host, now + self.cfg.complain_after / 4, tok(T_WATCH, x));
            }
            T_ELECT => {
                let h = x as u32;
                if self.kern[h as usize].ac.is_none() && !self.acs.contains_key(&h) {
                    self.start_ac(ctl, h);
                }
            }
            T_FAULT => {
                let (_, f) = self.cfg.faults[x as usize];
                if let Fault::Node(n) = f {
                    self.dead.insert(n);
                }
                for (i, fl) in self.cfg.flows.iter().enumerate() {
                    let e = self.kern[fl.src as usize].table.get(&fl.dst).map_or(0, |r| r.0);
                    self.flows[i].epoch_at_fault = Some(e);
                    self.flows[i].recovered_at = None;
                }
            }
            T_END => ctl.stop(),
            _ => {}
        }
    }
}

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

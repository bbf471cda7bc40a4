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
//!
//! The parts: `consultant` is the AC, `programs` the nodes' and hosts' programs, `events` the
//! agent's answers to the engine, `results` what a run leaves to read.

mod consultant;
mod events;
mod programs;
mod results;

use super::graph::{Arrival, End, MGraph};
use super::routes::{Route, RouteSet};
use crate::engine::agent::{Ctl, Message};
use crate::fabric::mosaic::LanFabric;
use crate::routing::mosaic::{EAST, NORTH, PROC, WEST, x_input};
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
}

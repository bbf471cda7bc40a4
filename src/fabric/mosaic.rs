//! Mosaic mesh boards and ATOMIC LANs built from them (`../shared/systems/atomic.md`).
//!
//! A board is an n×n mesh of Mosaic nodes; each node is a switch with ports 0 East, 1 West,
//! 2 North, 3 South and 4 its own processor (a host). The 4n edge ports of a board take host
//! interfaces (HIs, hosts on one edge port each way) or cables to other boards; a cable may
//! run one way only (non-symmetric) and join any two edge ports (a Y output into an X input
//! is non-consistent). Every channel carries bytes with the Mosaic handshake over its cable
//! ([`Handshake::MOSAIC`]). An output with nothing attached leads into a "void" node and is
//! cut from time 0 ([`LanFabric::dead`]): what is sent there is lost, as a probe into a
//! missing node must be.
//!
//! Numbering: the boards' nodes first (board by board, `x + n·y`), then the void nodes; hosts:
//! node `s`'s processor is host `s`, then the HIs in the order given.

use super::{Fabric, FabricBuilder, FabricError, NodeId, Shape};
use crate::fabric::{Arbitration, SwitchParams};
use crate::fabric::{FlowControl, Handshake, LinkParams};
use crate::rng::{Purpose, Stream};
use crate::routing::mosaic::{EAST, NORTH, PROC, SOUTH, WEST};
use crate::time::Time;

/// An edge port of a board node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub board: u32,
    pub x: u32,
    pub y: u32,
    /// 0 East, 1 West, 2 North, 3 South.
    pub port: u16,
}

impl std::fmt::Display for Place {
    /// `board 0 (2,1) East`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = ["East", "West", "North", "South"]
            .get(self.port as usize)
            .copied()
            .unwrap_or("port ?");
        write!(f, "board {} ({},{}) {side}", self.board, self.x, self.y)
    }
}

/// A cable between two boards' edge ports: `a`'s output into `b`'s input, and back if `both`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cable {
    pub a: Place,
    pub b: Place,
    pub both: bool,
    /// Length [thousandths of a foot].
    pub mft: u64,
}

/// A host interface on an edge port, both ways, over a cable of `mft` thousandths of a foot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostLink {
    pub at: Place,
    pub mft: u64,
}

/// An ATOMIC LAN: boards (each n×n), HIs and cables.
#[derive(Clone, Debug, PartialEq)]
pub struct Lan {
    pub name: String,
    pub boards: Vec<u32>,
    pub hosts: Vec<HostLink>,
    pub cables: Vec<Cable>,
}

/// Timing of the chips and channels.
#[derive(Clone, Copy, Debug)]
pub struct LanParams {
    /// Channel byte time without cable [ps] (500 Mb/s: 16 ns).
    pub byte_time: Time,
    /// Header routing per node [ps].
    pub router_delay: Time,
    /// Input buffer per channel [bytes].
    pub buffer: u32,
    pub arbitration: Arbitration,
}

impl Default for LanParams {
    fn default() -> Self {
        LanParams {
            byte_time: 16_000,
            router_delay: 25_000,
            buffer: 2,
            arbitration: Arbitration::RoundRobin,
        }
    }
}

/// A built LAN.
#[derive(Clone, Debug)]
pub struct LanFabric {
    pub fab: Fabric,
    /// Mosaic nodes (switches `0..nodes`; the rest are void nodes).
    pub nodes: u32,
    /// Host number of each HI, in the order of [`Lan::hosts`].
    pub his: Vec<u32>,
    /// Channels into void nodes: cut from time 0.
    pub dead: Vec<u32>,
    /// (board, x, y) of each node.
    pub place: Vec<(u32, u32, u32)>,
}

impl Lan {
    /// One n×n board with HIs at the given edge places.
    pub fn board(name: &str, n: u32, hosts: &[(u32, u32, u16)], mft: u64) -> Lan {
        Lan {
            name: name.into(),
            boards: vec![n],
            hosts: hosts
                .iter()
                .map(|&(x, y, port)| HostLink {
                    at: Place { board: 0, x, y, port },
                    mft,
                })
                .collect(),
            cables: vec![],
        }
    }

    fn base(&self, b: u32) -> u32 {
        self.boards[..b as usize].iter().map(|n| n * n).sum()
    }

    /// Node number of a place.
    pub fn node(&self, p: Place) -> u32 {
        self.base(p.board) + p.x + self.boards[p.board as usize] * p.y
    }

    pub fn nodes(&self) -> u32 {
        self.boards.iter().map(|n| n * n).sum()
    }

    /// Whether `port` of (x, y) on an n×n board is on the board's edge.
    pub fn is_edge(n: u32, x: u32, y: u32, port: u16) -> bool {
        match port {
            EAST => x + 1 == n,
            WEST => x == 0,
            NORTH => y + 1 == n,
            SOUTH => y == 0,
            _ => false,
        }
    }

    /// Every edge place of every board.
    pub fn edge_places(&self) -> Vec<Place> {
        let mut v = Vec::new();
        for (b, &n) in self.boards.iter().enumerate() {
            for y in 0..n {
                for x in 0..n {
                    for port in 0..4 {
                        if Self::is_edge(n, x, y, port) {
                            v.push(Place {
                                board: b as u32,
                                x,
                                y,
                                port,
                            });
                        }
                    }
                }
            }
        }
        v
    }

    /// Whether every cable is two-way and joins opposite directions (East to West, North
    /// to South): the networks loop probes can map.
    pub fn symmetric_consistent(&self) -> bool {
        self.cables.iter().all(|c| c.both && c.a.port ^ 1 == c.b.port)
    }

    /// Builds the fabric.
    pub fn build(&self, p: &LanParams) -> Result<LanFabric, FabricError> {
        let nodes = self.nodes();
        let bad = |m: String| FabricError::Impossible(format!("{}: {m}", self.name));
        let mut place = Vec::with_capacity(nodes as usize);
        for (b, &n) in self.boards.iter().enumerate() {
            if n == 0 || n > 64 {
                return Err(bad(format!("board {b} must be 1…64 nodes a side, got {n}")));
            }
            for y in 0..n {
                for x in 0..n {
                    place.push((b as u32, x, y));
                }
            }
        }
        let check = |q: Place| -> Result<u32, FabricError> {
            let n = *self
                .boards
                .get(q.board as usize)
                .ok_or_else(|| bad(format!("no board {}", q.board)))?;
            if q.x >= n || q.y >= n || !Self::is_edge(n, q.x, q.y, q.port) {
                return Err(bad(format!("{q:?} is not an edge port of its board")));
            }
            Ok(self.node(q))
        };
        // Which node outputs are used, to count the void ports needed.
        let mut out_used = vec![[false; 4]; nodes as usize];
        for (s, used) in out_used.iter_mut().enumerate() {
            let (b, x, y) = place[s];
            let n = self.boards[b as usize];
            for port in 0..4u16 {
                used[port as usize] = !Self::is_edge(n, x, y, port);
            }
        }
        for h in &self.hosts {
            let s = check(h.at)?;
            out_used[s as usize][h.at.port as usize] = true;
        }
        for c in &self.cables {
            let a = check(c.a)?;
            let b = check(c.b)?;
            out_used[a as usize][c.a.port as usize] = true;
            if c.both {
                out_used[b as usize][c.b.port as usize] = true;
            }
        }
        let dangling: u32 = out_used
            .iter()
            .map(|u| u.iter().filter(|&&x| !x).count() as u32)
            .sum();
        const VOID_PORTS: u32 = 64;
        let voids = dangling.div_ceil(VOID_PORTS);
        let mut ports = vec![5u16; nodes as usize];
        ports.extend((0..voids).map(|v| (dangling - v * VOID_PORTS).min(VOID_PORTS) as u16));
        let nhi = self.hosts.len() as u32;
        let mut fb = FabricBuilder::new(&ports, nodes + nhi);
        let link = LinkParams {
            flit_time: p.byte_time,
            tail_time: p.byte_time,
            latency: 0,
            vcs: 1,
            buffer: p.buffer,
            // The acknowledgement's return is inside the byte time.
            flow: FlowControl::Credit { delay: 1 },
            delete_header: false,
            clock: None,
        };
        let board_link = link.over_cable(Handshake::MOSAIC, 0);
        for s in 0..nodes {
            let (b, x, y) = place[s as usize];
            let n = self.boards[b as usize];
            if x + 1 < n {
                fb.link(NodeId(s), EAST, NodeId(s + 1), WEST, board_link)?;
            }
            if y + 1 < n {
                fb.link(NodeId(s), NORTH, NodeId(s + n), SOUTH, board_link)?;
            }
            fb.link(fb.host(s), 0, NodeId(s), PROC, board_link)?;
        }
        let mut his = Vec::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let hl = link.over_cable(Handshake::MOSAIC, h.mft);
            let host = nodes + i as u32;
            fb.link(fb.host(host), 0, NodeId(self.node(h.at)), h.at.port, hl)?;
            his.push(host);
        }
        for c in &self.cables {
            let cl = link.over_cable(Handshake::MOSAIC, c.mft);
            let (a, b) = (NodeId(self.node(c.a)), NodeId(self.node(c.b)));
            fb.channel(a, c.a.port, b, c.b.port, cl)?;
            if c.both {
                fb.channel(b, c.b.port, a, c.a.port, cl)?;
            }
        }
        let mut dead = Vec::new();
        let mut k = 0u32;
        for (s, used) in out_used.iter().enumerate() {
            for port in 0..4u16 {
                if !used[port as usize] {
                    let v = NodeId(nodes + k / VOID_PORTS);
                    let id = fb.channel(NodeId(s as u32), port, v, (k % VOID_PORTS) as u16, board_link)?;
                    dead.push(id.0);
                    k += 1;
                }
            }
        }
        let sw = SwitchParams {
            router_delay: p.router_delay,
            arbitration: p.arbitration,
            ..SwitchParams::default()
        };
        let fab = fb.build(sw, Shape::Irregular)?;
        Ok(LanFabric {
            fab,
            nodes,
            his,
            dead,
            place,
        })
    }
}

impl LanFabric {
    /// Whether host `h` is a node's processor (not an HI).
    pub fn is_processor(&self, h: u32) -> bool {
        h < self.nodes
    }
}

/// A seeded random LAN of `boards` n×n boards with `hosts` HIs on free edge ports. With
/// `consistent`, every cable is two-way and joins an East port to a West port or a North port
/// to a South port (a network loop probes can map); otherwise cables join any two edge ports,
/// some one way only, around a one-way ring of boards that keeps the network strongly
/// connected. Cables are `mft` thousandths of a foot long.
pub fn random_lan(seed: u64, boards: u32, n: u32, hosts: u32, consistent: bool, mft: u64) -> Lan {
    let mut rng = Stream::new(seed, Purpose::Setup, 0xA70);
    let mut lan = Lan {
        name: format!(
            "random-{}-{boards}x{n}x{n}-seed{seed}",
            if consistent { "consistent" } else { "irregular" }
        ),
        boards: vec![n; boards as usize],
        hosts: vec![],
        cables: vec![],
    };
    let mut free: Vec<Place> = lan.edge_places();
    let mut in_free = free.clone();
    let take = |v: &mut Vec<Place>, f: &dyn Fn(&Place) -> bool, rng: &mut Stream| -> Option<Place> {
        let c: Vec<usize> = (0..v.len()).filter(|&i| f(&v[i])).collect();
        if c.is_empty() {
            return None;
        }
        let i = c[rng.below(c.len() as u64) as usize];
        Some(v.swap_remove(i))
    };
    let cable = |lan: &mut Lan,
                 a: u32,
                 b: u32,
                 both: bool,
                 rng: &mut Stream,
                 free: &mut Vec<Place>,
                 in_free: &mut Vec<Place>| {
        if consistent {
            let port = rng.below(4) as u16;
            let Some(pa) = take(free, &|q| q.board == a && q.port == port, rng) else {
                return;
            };
            let Some(pb) = take(free, &|q| q.board == b && q.port == port ^ 1, rng) else {
                free.push(pa);
                return;
            };
            in_free.retain(|q| *q != pa && *q != pb);
            lan.cables.push(Cable {
                a: pa,
                b: pb,
                both: true,
                mft,
            });
        } else {
            let Some(pa) = take(free, &|q| q.board == a && (!both || in_free.contains(q)), rng) else {
                return;
            };
            let Some(pb) = take(in_free, &|q| q.board == b && (!both || free.contains(q)), rng) else {
                free.push(pa);
                return;
            };
            if both {
                in_free.retain(|q| *q != pa);
                free.retain(|q| *q != pb);
            }
            lan.cables.push(Cable {
                a: pa,
                b: pb,
                both,
                mft,
            });
        }
    };
    if consistent {
        // A random spanning tree of boards, then a few more cables.
        for b in 1..boards {
            let a = rng.below(b as u64) as u32;
            let mut tries = 0;
            let before = lan.cables.len();
            while lan.cables.len() == before && tries < 32 {
                cable(&mut lan, a, b, true, &mut rng, &mut free, &mut in_free);
                tries += 1;
            }
        }
        for _ in 0..boards {
            let (a, b) = (rng.below(boards as u64) as u32, rng.below(boards as u64) as u32);
            if a != b {
                cable(&mut lan, a, b, true, &mut rng, &mut free, &mut in_free);
            }
        }
    } else {
        for b in 0..boards {
            cable(
                &mut lan,
                b,
                (b + 1) % boards,
                false,
                &mut rng,
                &mut free,
                &mut in_free,
            );
        }
        for _ in 0..boards {
            let (a, b) = (rng.below(boards as u64) as u32, rng.below(boards as u64) as u32);
            if a != b {
                let both = rng.below(2) == 0;
                cable(&mut lan, a, b, both, &mut rng, &mut free, &mut in_free);
            }
        }
    }
    for _ in 0..hosts {
        // An HI needs the port both ways.
        let Some(p) = take(&mut free, &|q| in_free.contains(q), &mut rng) else {
            break;
        };
        in_free.retain(|q| *q != p);
        lan.hosts.push(HostLink { at: p, mft });
    }
    lan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prototype_board_with_four_hosts() {
        let lan = Lan::board(
            "proto",
            3,
            &[(0, 0, WEST), (0, 2, WEST), (2, 0, EAST), (2, 2, EAST)],
            2000,
        );
        let lf = lan.build(&LanParams::default()).unwrap();
        assert_eq!(lf.nodes, 9);
        assert_eq!(lf.fab.num_hosts(), 13);
        // 12 edge outputs, 4 taken by HIs: 8 into the void.
        assert_eq!(lf.dead.len(), 8);
        assert!(lan.symmetric_consistent());
    }

    #[test]
    fn random_lans_build() {
        for seed in 1..20 {
            for consistent in [true, false] {
                let lan = random_lan(seed, 4, 3, 5, consistent, 2000);
                lan.build(&LanParams::default()).unwrap();
                assert!(!consistent || lan.symmetric_consistent());
                assert!(lan.cables.len() as u32 >= 3, "{lan:?}");
            }
        }
    }
}

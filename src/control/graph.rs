//! The Mosaic network as the Address Consultant sees it: nodes with four outputs (East,
//! West, North, South), each leading to another node's input port, to a host interface, or
//! nowhere; and host interfaces (HIs) on node ports, both ways. The same type holds the
//! real topology (built from a fabric) and the AC's map, so the two compare directly.

use crate::fabric::mosaic::LanFabric;
use crate::routing::mosaic::{PROC, step};

/// Where an output leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum End {
    /// Node and its input port.
    Node(u32, u16),
    /// An HI (index into [`MGraph::hi`]).
    Hi(u32),
}

/// A Mosaic network.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MGraph {
    /// Per node, its four outputs.
    pub out: Vec<[Option<End>; 4]>,
    /// Per HI: the node and port it is on (both ways) and its address.
    pub hi: Vec<(u32, u16, u32)>,
}

/// Where a packet ends up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// In a node's processor, having come into the node on `in_port`.
    Proc { node: u32, in_port: u16 },
    /// At an HI.
    Hi(u32),
    /// Into nothing (a missing node, a cut channel) or a header that ran out.
    Lost,
}

impl MGraph {
    /// The real topology of a LAN, leaving out the channels `cut` says are cut (and those
    /// into the void).
    pub fn from_lan(lf: &LanFabric, cut: &dyn Fn(u32) -> bool) -> MGraph {
        let fab = &lf.fab;
        let hi_index = |host: u32| lf.his.iter().position(|&h| h == host).map(|i| i as u32);
        let mut g = MGraph {
            out: vec![[None; 4]; lf.nodes as usize],
            hi: Vec::new(),
        };
        for s in 0..lf.nodes as usize {
            for p in 0..4 {
                let Some(c) = fab.out_chan[s][p] else { continue };
                if cut(c.0) || lf.dead.contains(&c.0) {
                    continue;
                }
                let ch = &fab.channels[c.idx()];
                g.out[s][p] = if ch.dst.0 < lf.nodes {
                    Some(End::Node(ch.dst.0, ch.dst_port))
                } else {
                    fab.host_of(ch.dst).and_then(hi_index).map(End::Hi)
                };
            }
        }
        for &h in &lf.his {
            let (n, p) = fab.host_switch(h);
            g.hi.push((n.0, p, h));
        }
        g
    }

    pub fn nodes(&self) -> usize {
        self.out.len()
    }

    /// The HI with address `addr`.
    pub fn hi_of(&self, addr: u32) -> Option<u32> {
        self.hi.iter().position(|h| h.2 == addr).map(|i| i as u32)
    }

    /// Follows header bytes from `node`, entered on `in_port` ([`PROC`] for its processor),
    /// through the routers. Also returns the number of nodes passed and of bytes left.
    pub fn walk(&self, mut node: u32, mut in_port: u16, bytes: &[i8]) -> (Arrival, u32, usize) {
        let mut sym: Vec<u16> = bytes.iter().map(|&b| crate::routing::mosaic::enc(b)).collect();
        let mut hops = 0;
        for _ in 0..10_000 {
            hops += 1;
            let Some((port, op)) = step(in_port, &sym) else {
                return (Arrival::Lost, hops, sym.len());
            };
            sym.drain(..(op.advance as usize).min(sym.len()));
            if let (Some(x), Some(f)) = (op.set, sym.first_mut()) {
                *f = x;
            }
            if port == PROC {
                return (Arrival::Proc { node, in_port }, hops, sym.len());
            }
            match self
                .out
                .get(node as usize)
                .and_then(|o| o.get(port as usize))
                .copied()
                .flatten()
            {
                None => return (Arrival::Lost, hops, sym.len()),
                Some(End::Hi(i)) => return (Arrival::Hi(i), hops, sym.len()),
                Some(End::Node(n, r)) => {
                    node = n;
                    in_port = r;
                }
            }
        }
        (Arrival::Lost, hops, sym.len())
    }

    /// Undirected channel count (each direction counted once) and HIs: a size measure.
    pub fn channels(&self) -> usize {
        self.out.iter().flatten().filter(|e| e.is_some()).count()
    }
}

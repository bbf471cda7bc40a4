//! BookSim2's dragonfly, `dragonflynew` (`src/networks/dragonfly.cpp` of booksim/booksim2,
//! commit 28f43299; Kim, Dally, Scott and Abts, ISCA 2008): `p` nodes a router, groups of
//! `a = 2p` routers linked all to all, `h = p` global channels a router, and `g = a·h + 1`
//! groups, each linked to every other by one global channel: `a·p·g` nodes.
//!
//! Numbered as BookSim2 numbers them: router `r` is router `r mod a` of group `r / a`, and
//! holds nodes `r·p .. r·p + p` on ports `0..p`. Then its `2p − 1` local ports, port
//! `p + j` to router `j` of its group if `j` is below its own index, else to router `j + 1`;
//! then its `p` global ports, port `3p − 1 + j` of router `d` to group number `d·p + j`
//! counting the groups but its own (`gg` if `gg` is below its own group, else `gg + 1`).
//! Inputs are numbered as the outputs: each port is one end of a channel pair, which is
//! how `_BuildNet` wires its input channels (its formulas give, for each input, the output
//! of the same link at the other end).
//!
//! With `noc_latency` the channels take the lengths BookSim2 compiles in (`DRAGON_LATENCY`):
//! 10 cycles within a group and 100 between groups, both ways, credits too; each adds
//! `length − 1` cycles to the `[channel]` latency and credit delay. Nodes' channels take 1.

use super::cmesh::longer;
use super::{Fabric, FabricBuilder, FabricError, LinkParams, Shape, SwitchParams, check_radix};
use crate::time::Ratio;

/// BookSim2's channel lengths (`DRAGON_LATENCY`): within a group, between groups [cycles].
pub const LOCAL_LENGTH: u32 = 10;
pub const GLOBAL_LENGTH: u32 = 100;

/// The most nodes a router reef builds (16,512 nodes at `p = 8`; the routing tables grow as
/// the routers times the nodes).
pub const MAX_P: u32 = 8;

/// The sizes of a dragonfly of `p` nodes a router: routers a group `a`, groups `g`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub p: u32,
    pub a: u32,
    pub g: u32,
}

impl Dims {
    pub fn new(p: u32) -> Dims {
        let a = 2 * p;
        Dims { p, a, g: a * p + 1 }
    }

    pub fn routers(&self) -> u32 {
        self.a * self.g
    }

    pub fn nodes(&self) -> u32 {
        self.routers() * self.p
    }

    /// A router's ports: its nodes, `2p − 1` local, `p` global.
    pub fn ports(&self) -> u32 {
        4 * self.p - 1
    }

    /// The first global port.
    pub fn global_base(&self) -> u32 {
        self.p + self.a - 1
    }

    /// The router at the other end of local port `p + j` of router `r`.
    pub fn local_peer(&self, r: u32, j: u32) -> u32 {
        let (grp, d) = (r / self.a, r % self.a);
        grp * self.a + if j < d { j } else { j + 1 }
    }

    /// The group at the other end of global port `j` of router `r`.
    pub fn global_peer(&self, r: u32, j: u32) -> u32 {
        let (grp, d) = (r / self.a, r % self.a);
        let gg = d * self.p + j;
        if gg < grp { gg } else { gg + 1 }
    }

    /// BookSim2's `dragonfly_port(rID, source, dest)`: the output of router `r` towards node
    /// `dst` by the minimal route (out to the node, to the router of the group that holds
    /// the global channel to `dst`'s group, over it, to `dst`'s router).
    pub fn min_port(&self, r: u32, dst: u32) -> u32 {
        let (p, a) = (self.p, self.a);
        let grp = r / a;
        let dst_grp = dst / (a * p);
        let (grp_rid, grp_output) = if dst_grp == grp {
            (dst / p, 0)
        } else {
            let go = if grp > dst_grp { dst_grp } else { dst_grp - 1 };
            (go / p + grp * a, go)
        };
        if dst / p == r {
            dst % p
        } else if grp_rid == r {
            self.global_base() + grp_output % p
        } else if r < grp_rid {
            grp_rid % a - 1 + p
        } else {
            grp_rid % a + p
        }
    }
}

/// Builds BookSim2's dragonfly of `p` nodes a router.
pub fn dragonfly(
    p: u32,
    noc_latency: bool,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
    cycle: Ratio,
) -> Result<Fabric, FabricError> {
    if !(1..=MAX_P).contains(&p) {
        return Err(FabricError::Impossible(format!(
            "a dragonfly of {p} nodes a router: reef builds 1 to {MAX_P} (16,512 nodes)"
        )));
    }
    let dims = Dims::new(p);
    check_radix(u64::from(dims.ports()))?;
    let (local, global) = if noc_latency {
        (
            longer(net, LOCAL_LENGTH - 1, cycle),
            longer(net, GLOBAL_LENGTH - 1, cycle),
        )
    } else {
        (net, net)
    };
    let mut b = FabricBuilder::new(&vec![dims.ports() as u16; dims.routers() as usize], dims.nodes());
    for r in 0..dims.routers() {
        for i in 0..p {
            b.link(b.host(r * p + i), 0, b.switch(r), i as u16, host)?;
        }
        for j in 0..dims.a - 1 {
            let peer = dims.local_peer(r, j);
            // The peer's port back to r.
            let back = (0..dims.a - 1)
                .find(|&i| dims.local_peer(peer, i) == r)
                .expect("all to all within a group");
            b.channel(
                b.switch(r),
                (p + j) as u16,
                b.switch(peer),
                (p + back) as u16,
                local,
            )?;
        }
        for j in 0..p {
            let to = dims.global_peer(r, j);
            let grp = r / dims.a;
            // The router of group `to` whose global channel leads to `grp`, and its port.
            let gg = if grp < to { grp } else { grp - 1 };
            let peer = to * dims.a + gg / p;
            b.channel(
                b.switch(r),
                (dims.global_base() + j) as u16,
                b.switch(peer),
                (dims.global_base() + gg % p) as u16,
                global,
            )?;
        }
    }
    b.build(sw, Shape::Dragonfly { p })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    fn f(p: u32) -> Fabric {
        let l = LinkParams::default();
        dragonfly(p, false, l, l, SwitchParams::default(), Ratio::int(1000)).unwrap()
    }

    #[test]
    fn sizes_are_booksims() {
        // dragonflyconfig (k = 4): 1,056 nodes, 264 routers of 15 ports in 33 groups.
        let d = Dims::new(4);
        assert_eq!(
            (d.a, d.g, d.routers(), d.nodes(), d.ports()),
            (8, 33, 264, 1056, 15)
        );
        let fab = f(4);
        assert_eq!((fab.switches, fab.num_hosts()), (264, 1056));
        // Every port of every router is linked both ways.
        for s in 0..fab.switches as usize {
            assert!(fab.out_chan[s].iter().all(Option::is_some));
            assert!(fab.in_chan[s].iter().all(Option::is_some));
        }
    }

    /// The input channels of router `node`, in BookSim2's formulas of `_BuildNet`, as the
    /// (router, output port) they come from.
    fn booksim_inputs(d: Dims, node: u32) -> Vec<(u32, u32)> {
        let (p, a) = (d.p as i64, d.a as i64);
        let np = 3 * p - 1;
        let node = node as i64;
        let (grp, dim) = (node / a, node % a);
        let mut chans = Vec::new();
        for cnt in 0..2 * p - 1 {
            chans.push(if cnt < dim {
                grp * np * a - (dim - cnt) * np + dim * np + (dim - 1)
            } else {
                grp * np * a + dim * np + (cnt - dim + 1) * np + dim
            });
        }
        for cnt in 0..p {
            let go = dim * p + cnt;
            chans.push(if grp > go {
                go * np * a + (np - p) * ((grp - 1) / p) + (np - p) + grp - 1
            } else {
                (go + 1) * np * a + (np - p) * (grp / p) + (np - p) + grp
            });
        }
        // Channel c is output c mod np (after the p node ports) of router c / np.
        chans
            .into_iter()
            .map(|c| ((c / np) as u32, (p + c % np) as u32))
            .collect()
    }

    #[test]
    fn channels_are_wired_as_booksims() {
        for p in 1..=3 {
            let d = Dims::new(p);
            let fab = f(p);
            for r in 0..d.routers() {
                for (i, (from, out)) in booksim_inputs(d, r).into_iter().enumerate() {
                    let c = fab.in_chan[r as usize][p as usize + i].unwrap();
                    let ch = &fab.channels[c.idx()];
                    assert_eq!(
                        (ch.src, ch.src_port as u32),
                        (NodeId(from), out),
                        "router {r} input {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn min_ports_reach_every_node_in_three_hops() {
        let d = Dims::new(2);
        let fab = f(2);
        for src in 0..d.routers() {
            for dst in 0..d.nodes() {
                let mut r = src;
                let mut hops = 0;
                loop {
                    let port = d.min_port(r, dst);
                    let c = fab.out_chan[r as usize][port as usize].unwrap();
                    let to = fab.channels[c.idx()].dst;
                    if port < d.p {
                        assert_eq!(fab.host_of(to), Some(dst));
                        break;
                    }
                    r = to.0;
                    hops += 1;
                    assert!(hops <= 3, "{src} → {dst}");
                }
            }
        }
    }

    #[test]
    fn booksims_channel_lengths() {
        let l = LinkParams::default();
        let fab = dragonfly(1, true, l, l, SwitchParams::default(), Ratio::int(1000)).unwrap();
        // p = 1: routers 0 and 1 of group 0; port 1 local, port 2 global.
        let lat = |s: usize, port: usize| fab.channels[fab.out_chan[s][port].unwrap().idx()].params.latency;
        assert_eq!(lat(0, 1), l.latency + 9_000);
        assert_eq!(lat(0, 2), l.latency + 99_000);
        assert_eq!(lat(0, 0), l.latency);
    }
}

//! Minimal routing on BookSim2's dragonfly ([`crate::fabric::dragonfly`]), as its
//! `min_dragonflynew` (`src/networks/dragonfly.cpp`, commit 28f43299): out to the node at
//! its router; else, outside the destination's group, to the router of this group that holds
//! the global channel to it (one local hop), over that channel, then to the destination's
//! router (one local hop): at most three hops between routers, one path a pair
//! ([`Dims::min_port`], BookSim2's `dragonfly_port`).
//!
//! VCs as BookSim2 gives them: a packet is in phase 0 from its source (`f->ph = 0` at an
//! injection port) and phase 1 from its global hop on (`f->ph = 1` on a global output), and
//! each hop takes the one VC of its phase; VCs above 1 are never used between routers.
//! Phase 0 is a local hop at most (then out to the node, or the global hop), phase 1 a
//! global hop and then a local one at most: no cycle of channel dependencies, whatever the
//! load. A table gives it: per router and destination, from a node (class 0) the VC of the
//! output (1 on a global port, else 0); from a router (class 1) VC 1 on a global port, else
//! the VC the packet came in on ([`Want::KEEP_VC`]), since a packet ejected after a local
//! hop may be in either phase (from its own group or from another).

use super::table::{Table, TableBuilder};
use super::{PortSet, Want};
use crate::fabric::dragonfly::Dims;
use crate::fabric::{Fabric, Shape};

/// The dragonfly's dimensions, if `fab` is one.
pub fn dims(fab: &Fabric) -> Option<Dims> {
    match fab.shape {
        Shape::Dragonfly { p } => Some(Dims::new(p)),
        _ => None,
    }
}

/// The VCs every channel needs for [`min`]: phase 0 and phase 1.
pub const MIN_VCS: u8 = 2;

/// BookSim2's `min_dragonflynew` as a table (`None` if `fab` is not a dragonfly).
pub fn min(fab: &Fabric) -> Option<Table> {
    let d = dims(fab)?;
    let mut b = TableBuilder::new(fab.switches, d.nodes(), 2);
    for r in 0..d.routers() {
        for dst in 0..d.nodes() {
            let port = d.min_port(r, dst);
            let ports = PortSet::single(port as u16);
            let global = port >= d.global_base();
            let one = |vc| Want {
                ports,
                vc_lo: vc,
                vc_hi: vc,
            };
            b.set(r, 0, dst, one(u8::from(global)));
            b.set(r, 1, dst, if global { one(1) } else { one(Want::KEEP_VC) });
        }
    }
    let classes = fab
        .channels
        .iter()
        .map(|c| u8::from(fab.is_switch(c.src)))
        .collect();
    b.set_channel_classes(classes);
    Some(b.build("dragonfly-min"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{LinkParams, SwitchParams};
    use crate::routing::{At, Header, Routing};
    use crate::time::Ratio;

    fn fab(p: u32) -> Fabric {
        let mut l = LinkParams::default();
        l.vcs = 2;
        crate::fabric::dragonfly::dragonfly(p, true, l, l, SwitchParams::default(), Ratio::int(1000)).unwrap()
    }

    /// The (router, VC) of each hop of the packet from `src` to `dst`, ejection included.
    fn hops(f: &Fabric, r: &Routing, src: u32, dst: u32) -> Vec<(u32, u8)> {
        let (path, choice) = r.path(f, src, dst).unwrap();
        assert!(!choice);
        path[1..]
            .iter()
            .map(|&(c, vc)| (f.channels[c.idx()].src.0, vc))
            .collect()
    }

    #[test]
    fn vcs_change_after_the_global_hop() {
        let f = fab(2);
        let r = Routing::Table(min(&f).unwrap());
        // p = 2: 4 routers a group, 8 nodes a group. Node 0 (router 0, group 0) to node 1:
        // out at once, on VC 0.
        assert_eq!(hops(&f, &r, 0, 1), vec![(0, 0)]);
        // To node 6 (router 3, group 0): a local hop, out, both on VC 0.
        assert_eq!(hops(&f, &r, 0, 6), vec![(0, 0), (3, 0)]);
        // To node 8 (router 4, group 1): group 1 is group 0's first global channel, held by
        // router 0 (port 3p − 1 = 5): global on VC 1, then a local hop to router 4 from the
        // router of group 1 holding the channel back (router 4 itself: group 0 is its first).
        assert_eq!(hops(&f, &r, 0, 8), vec![(0, 1), (4, 1)]);
        // Node 7 (router 3) to node 71 (router 35, group 8): group 0's global channel
        // number 3·2 + 1 = 7, counting the groups but its own, is router 3's port 1 to
        // group 8: out on VC 1 at once, then from group 8's router 32 (group 0 is its
        // first) a local hop to router 35 on VC 1.
        assert_eq!(hops(&f, &r, 7, 71), vec![(3, 1), (32, 1), (35, 1)]);
        // Node 0 to node 71: a local hop to router 3 on VC 0 first.
        assert_eq!(hops(&f, &r, 0, 71), vec![(0, 0), (3, 1), (32, 1), (35, 1)]);
    }

    #[test]
    fn a_packet_ejected_after_a_local_hop_keeps_its_vc() {
        let f = fab(1);
        let t = min(&f).unwrap();
        // p = 1: router 1's node 1, from router 0 over the local port 1, on either VC.
        for vc in 0..2 {
            let at = At {
                switch: 1,
                in_port: 1,
                in_vc: vc,
                in_class: 1,
            };
            let w = t.route(at, Header::dst(1)).unwrap();
            assert_eq!((w.ports, w.vc_lo, w.vc_hi), (PortSet::single(0), vc, vc));
        }
        assert!(t.deterministic() && t.deadlock_free_by_construction());
    }

    #[test]
    fn every_pair_takes_booksims_hop_count() {
        // dragonflynew_hopcnt: 0 in a router, 1 in a group, else the global hop and one
        // local hop at either end unless the source or destination holds the channel.
        let f = fab(2);
        let d = dims(&f).unwrap();
        let r = Routing::Table(min(&f).unwrap());
        for src in 0..d.nodes() {
            for dst in 0..d.nodes() {
                let between = hops(&f, &r, src, dst).len() - 1;
                assert!(between <= 3);
                let same_group = src / (d.a * d.p) == dst / (d.a * d.p);
                if same_group {
                    assert_eq!(between, usize::from(src / d.p != dst / d.p));
                } else {
                    assert!(between >= 1);
                }
            }
        }
    }
}

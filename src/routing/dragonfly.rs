//! Minimal routing on BookSim2's dragonfly ([`crate::fabric::dragonfly`]), as its
//! `min_dragonflynew` (`src/networks/dragonfly.cpp`, commit 28f43299): out to the node at
//! its router; else, outside the destination's group, to the router of this group that holds
//! the global channel to it (one local hop), over that channel, then to the destination's
//! router (one local hop): at most three hops between routers, one path a pair
//! ([`Dims::min_port`], BookSim2's `dragonfly_port`).
//!
//! VCs as BookSim2 gives them: a packet is in phase 0 from its source (`f->ph = 0` at an
//! injection port) and phase 1 from its global hop on (`f->ph = 1` on a global output), and
//! each hop takes the one VC of its phase; VCs above 1 are never used between routers. A
//! packet within its group stays in phase 0: `min_dragonflynew` means to put it in phase 1
//! at its source, but compares the router's group with a destination group it never sets
//! (`dest_grp_ID = -1`), and reef does as it does.
//! Phase 0 is a local hop at most (then out to the node, or the global hop), phase 1 a
//! global hop and then a local one at most: no cycle of channel dependencies, whatever the
//! load. A table gives it: per router and destination, from a node (class 0) the VC of the
//! output (1 on a global port, else 0); from a router (class 1) VC 1 on a global port, else
//! the VC the packet came in on ([`Want::KEEP_VC`]), since a packet ejected after a local
//! hop may be in either phase (from its own group or from another).

use super::table::{Table, TableBuilder};
use super::{At, Escape, Header, PortSet, Want};
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
                escape: Escape::NONE,
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

/// BookSim2's `ugal_dragonflynew`: at its source router a packet to another group goes
/// minimally, or through the router of an intermediate node drawn at random (over all
/// nodes, as `RandomInt(gNodes - 1)`), whichever the credits used on the two outputs
/// favour: minimally if `q_min ≤ 2·q_nonmin + 30` ([`Ugal::prefers_min`], which the switch
/// applies, `GetUsedCredit`). A packet within its group, or whose intermediate node is in
/// its group, goes minimally. Its phase is its VC: 0 towards the intermediate router
/// (`f->ph = 0`, its global hop included), 1 minimal before the global hop, 2 from it on
/// and within a group.
///
/// The packet's draw ([`super::Header::draw`]) is `2·node + bit`: the intermediate node,
/// and a choice a routing step without the switch's credits takes (0 minimal), so that the
/// dependency check walks both routes of every pair exactly; the switch ignores the bit.
/// The routes can form a cycle of dependencies in VC 0 (a local hop in a group is the
/// first hop of some packets, towards their global channel, and the last of others, from
/// theirs), which `reef check` names: it runs on the general engine, with its watchdog.
#[derive(Clone, Debug)]
pub struct Ugal {
    d: Dims,
}

/// An output of [`Ugal`] and the VC (phase) it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UgalStep {
    pub port: u16,
    pub vc: u8,
}

impl Ugal {
    /// The VCs `ugal_dragonflynew` uses (it asserts exactly 3).
    pub const VCS: u8 = 3;
    /// `adaptive_threshold`, biasing the choice towards the minimal route [flits].
    pub const THRESHOLD: u32 = 30;

    pub fn new(fab: &Fabric) -> Option<Ugal> {
        dims(fab).map(|d| Ugal { d })
    }

    /// The intermediate node and the walk's choice, [`Ugal`].
    pub fn draws(&self) -> u32 {
        2 * self.d.nodes()
    }

    /// The intermediate node of a packet's draw.
    pub fn intermediate(draw: u32) -> u32 {
        draw / 2
    }

    /// BookSim2's rule: the minimal output, with `q_min` credits used, against the other
    /// with `q_nonmin`.
    pub fn prefers_min(q_min: u32, q_nonmin: u32) -> bool {
        u64::from(q_min) <= 2 * u64::from(q_nonmin) + u64::from(Self::THRESHOLD)
    }

    /// At a source router with a choice, the minimal and the non-minimal output towards
    /// `dst` through node `intm` (`None` elsewhere: the route is fixed).
    pub fn choice(&self, at: At, dst: u32, intm: u32) -> Option<(u16, u16)> {
        let (d, r) = (&self.d, at.switch);
        let group = |node: u32| node / (d.a * d.p);
        let from_node = u32::from(at.in_port) < d.p;
        (from_node && group(dst) != r / d.a && group(intm) != r / d.a)
            .then(|| (d.min_port(r, dst) as u16, d.min_port(r, intm) as u16))
    }

    /// The step at `at` towards `dst` through `intm`, with the source router's choice
    /// (`minimal`; ignored where there is none, [`Self::choice`]).
    pub fn step(&self, at: At, dst: u32, intm: u32, minimal: bool) -> UgalStep {
        let (d, r) = (&self.d, at.switch);
        let group = |node: u32| node / (d.a * d.p);
        let mut ph = if u32::from(at.in_port) < d.p {
            if group(dst) == r / d.a {
                2
            } else if group(intm) == r / d.a || minimal {
                1
            } else {
                0
            }
        } else {
            at.in_vc.min(2)
        };
        if ph == 0 && r == intm / d.p {
            ph = 1;
        }
        let port = d.min_port(r, if ph == 0 { intm } else { dst });
        if ph == 1 && port >= d.global_base() {
            ph = 2;
        }
        UgalStep {
            port: port as u16,
            vc: ph,
        }
    }

    /// The routing step for `h`, the choice at a source router taken from its draw.
    pub fn route(&self, at: At, h: Header) -> Want {
        let s = self.step(at, h.dst, Self::intermediate(h.draw), h.draw.is_multiple_of(2));
        Want {
            ports: PortSet::single(s.port),
            vc_lo: s.vc,
            vc_hi: s.vc,
            escape: Escape::NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{LinkParams, SwitchParams};
    use crate::routing::Routing;
    use crate::time::Ratio;

    fn fab(p: u32) -> Fabric {
        let l = LinkParams {
            vcs: 2,
            ..LinkParams::default()
        };
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

#[cfg(test)]
mod ugal_tests {
    use super::*;
    use crate::routing::testing::at;

    fn ugal() -> Ugal {
        Ugal { d: Dims::new(2) }
    }

    #[test]
    fn phases_are_booksims() {
        let u = ugal();
        // p = 2, a = 4: 8 nodes a group. Within the group: phase 2, minimal, no choice.
        assert_eq!(u.choice(at(0, 0, 0), 6, 40), None);
        assert_eq!(u.step(at(0, 0, 0), 6, 40, false), UgalStep { port: 4, vc: 2 });
        // Node 0 to node 71 (group 8) through node 40 (router 20, group 5): the minimal
        // output is router 0's local port to router 3 (port 4), the other its local port
        // to router 2, which holds the global channel to group 5 (port 3).
        assert_eq!(u.choice(at(0, 0, 1), 71, 40), Some((4, 3)));
        assert_eq!(u.step(at(0, 0, 1), 71, 40, true), UgalStep { port: 4, vc: 1 });
        assert_eq!(u.step(at(0, 0, 1), 71, 40, false), UgalStep { port: 3, vc: 0 });
        // The walk's choice is the draw's low bit.
        let h = |draw| Header {
            dst: 71,
            sym: &[],
            draw,
        };
        assert_eq!(u.route(at(0, 0, 1), h(80)).ports, PortSet::single(4));
        assert_eq!(u.route(at(0, 0, 1), h(81)).ports, PortSet::single(3));
        // An intermediate node in the source's group: minimal, no choice.
        assert_eq!(u.choice(at(0, 0, 0), 71, 5), None);
        // Phase 0 keeps VC 0 over the global hop; at the intermediate router phase 1.
        assert_eq!(u.step(at(2, 3, 0), 71, 40, false), UgalStep { port: 5, vc: 0 });
        assert_eq!(u.step(at(20, 5, 0), 71, 40, false).vc, 1);
        // Phase 1 on a global output turns phase 2.
        assert_eq!(u.step(at(3, 3, 1), 71, 40, false), UgalStep { port: 6, vc: 2 });
        // The rule: minimal unless its queue is more than twice the other's and 30.
        assert!(Ugal::prefers_min(30, 0) && !Ugal::prefers_min(31, 0));
        assert!(Ugal::prefers_min(230, 100) && !Ugal::prefers_min(231, 100));
    }
}

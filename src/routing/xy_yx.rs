//! XY/YX routing on k-ary n-meshes, as BookSim2's `xy_yx_mesh` (`routefunc.cpp`, commit
//! `28f43299`, after Balfour & Dally): each packet goes by dimension order, either lowest
//! dimension first (x then y) in the lower half of every network channel's VCs, or highest
//! first (y then x) in the upper half. Each order alone is deadlock-free and the two never
//! share a VC, so together they are too ([`super::cdg`] checks it).
//!
//! The order is the packet's draw ([`super::Header::draw`]: 0 x first, 1 y first), made by
//! its source from its own seeded stream as it starts the packet; BookSim2 flips its coin
//! (`RandomInt(1)`, its global generator) at the first router. After the first switch the
//! order is read from the VC class the packet came in on, as BookSim2 reads it. Port
//! numbering is that of [`crate::fabric::mesh`].
//!
//! Adaptive, as BookSim2's `adaptive_xy_yx_mesh`: the order is chosen at the packet's
//! first switch by the credits used on its two next outputs (`GetUsedCredit`: flits sent
//! on all the output's VCs whose credits have not come back), the less used one, and on a
//! tie by the packet's draw (BookSim2 flips its coin there). The engine makes that choice
//! as the head is routed ([`XyYx::first_ports`]); the routing step itself reads the order
//! from the draw, so that the channel dependency check and route listings see both.

use super::grid::MeshGrid;
use super::{At, Escape, Header, PortSet, RouteError, Want};
use crate::fabric::Fabric;

#[derive(Clone, Debug)]
pub struct XyYx {
    grid: MeshGrid,
    /// The order chosen by the credits at the first switch (`adaptive_xy_yx`).
    pub adaptive: bool,
}

impl XyYx {
    /// XY/YX routing on a mesh fabric (`None` for other shapes, tori included). The two
    /// classes need an even number of VCs per network channel: the config checks it.
    pub fn new(fab: &Fabric, adaptive: bool) -> Option<XyYx> {
        Some(XyYx {
            grid: MeshGrid::new(fab)?,
            adaptive,
        })
    }

    /// At a packet's first switch (come in from a host) and not yet at its destination's:
    /// its next output by x first and by y first (the same port where only one dimension
    /// differs), between which the adaptive routing chooses. `None` elsewhere.
    pub fn first_ports(&self, at: At, dst: u32) -> Option<(u16, u16)> {
        if at.in_port < self.grid.net_ports() {
            return None;
        }
        let dst_sw = self.grid.dst_switch(at, dst).ok()?;
        Some((
            self.next_port(at.switch, dst_sw, false)?,
            self.next_port(at.switch, dst_sw, true)?,
        ))
    }

    /// The output of switch `sw` towards switch `dst_sw` in the lowest (`y_first`: the
    /// highest) dimension where they differ; `None` where they are the same switch. Both
    /// must be switches of the mesh.
    fn next_port(&self, sw: u32, dst_sw: u32, y_first: bool) -> Option<u16> {
        let (here, there) = (self.grid.at(sw), self.grid.at(dst_sw));
        let differ = |&d: &usize| here[d] != there[d];
        let d = if y_first {
            (0..self.grid.n).rev().find(differ)
        } else {
            (0..self.grid.n).find(differ)
        }?;
        Some(MeshGrid::port(here, there, d))
    }

    /// The order chosen from the credits used on the x-first and y-first outputs, and the
    /// packet's draw on a tie: the draw to route with (1: y first), as BookSim2's
    /// `adaptive_xy_yx_mesh` chooses.
    pub fn choose(used_xy: u32, used_yx: u32, draw: u32) -> u32 {
        match used_xy.cmp(&used_yx) {
            std::cmp::Ordering::Greater => 1,
            std::cmp::Ordering::Less => 0,
            std::cmp::Ordering::Equal => draw,
        }
    }

    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let dst_sw = self.grid.dst_switch(at, h.dst)?;
        let net_vcs = self.grid.net_vcs;
        let half = net_vcs / 2;
        let y_first = if at.in_port >= self.grid.net_ports() {
            h.draw == 1
        } else {
            at.in_vc >= half
        };
        let Some(port) = self.next_port(at.switch, dst_sw, y_first) else {
            return Ok(self.grid.eject(h.dst, dst_sw));
        };
        let (lo, hi) = if y_first {
            (half, net_vcs - 1)
        } else {
            (0, half - 1)
        };
        Ok(Want {
            ports: PortSet::single(port),
            vc_lo: lo,
            vc_hi: hi,
            escape: Escape::NONE,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_str;
    use crate::routing::testing::walk;
    use crate::routing::{Routing, cdg};

    fn spec(k: u32, vcs: u8) -> crate::engine::Spec {
        spec_of(k, vcs, "xy-yx")
    }

    fn spec_of(k: u32, vcs: u8, algo: &str) -> crate::engine::Spec {
        let text = format!(
            "[topology]\nkind = \"mesh\"\nk = [{k}, {k}]\n[channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n\
             [routing]\nalgorithm = \"{algo}\"\n"
        );
        load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap()
    }

    #[test]
    fn adaptive_chooses_at_the_first_switch_by_the_credits_used() {
        use crate::routing::At;
        use crate::routing::xy_yx::XyYx;
        let s = spec_of(4, 4, "adaptive-xy-yx");
        let Routing::XyYx(x) = &s.routing else {
            panic!("{:?}", s.routing);
        };
        assert!(x.adaptive);
        assert_eq!(s.routing.name(), "adaptive-xy-yx");
        let at = |switch, in_port| At {
            switch,
            in_port,
            in_vc: 0,
            in_class: 0,
        };
        // s1 (1, 0) → host 14 at (2, 3), come in from its host (port 4): +x or +y.
        assert_eq!(x.first_ports(at(1, 4), 14), Some((0, 2)));
        // s13 (1, 3) → host 14: one dimension left, one port either way.
        assert_eq!(x.first_ports(at(13, 4), 14), Some((0, 0)));
        // Past the first switch the order is the VC class; at the destination's switch,
        // nothing to choose.
        assert_eq!(x.first_ports(at(2, 1), 14), None);
        assert_eq!(x.first_ports(at(14, 4), 14), None);
        // The less used output; a tie goes by the draw.
        assert_eq!(XyYx::choose(3, 1, 0), 1);
        assert_eq!(XyYx::choose(1, 3, 1), 0);
        assert_eq!((XyYx::choose(2, 2, 0), XyYx::choose(2, 2, 1)), (0, 1));
        // The routing step reads the draw as xy-yx does: the same paths.
        let plain = spec(4, 4);
        for src in 0..16u32 {
            for dst in 0..16u32 {
                for draw in 0..2 {
                    assert_eq!(walk(&s, src, dst, draw), walk(&plain, src, dst, draw));
                }
            }
        }
        let rep = cdg::check(&s.fabric, &s.routing);
        assert!(rep.deadlock_free(), "{:?}", rep.describe_cycle(&s.fabric));
    }

    #[test]
    fn x_first_in_the_lower_half_y_first_in_the_upper() {
        let s = spec(4, 4);
        assert!(matches!(s.routing, Routing::XyYx(_)));
        assert_eq!(s.routing.draws(), 2);
        // s1 (1, 0) → s14 (2, 3).
        let xy = walk(&s, 1, 14, 0);
        assert_eq!(xy, vec![(1, 0, 1), (2, 0, 1), (6, 0, 1), (10, 0, 1), (14, 0, 3)]);
        let yx = walk(&s, 1, 14, 1);
        assert_eq!(yx, vec![(1, 2, 3), (5, 2, 3), (9, 2, 3), (13, 2, 3), (14, 0, 3)]);
        // Every pair minimal, either way.
        for src in 0..16u32 {
            for dst in 0..16u32 {
                for draw in 0..2 {
                    let d = (src % 4).abs_diff(dst % 4) + (src / 4).abs_diff(dst / 4);
                    assert_eq!(walk(&s, src, dst, draw).len() - 1, d as usize);
                }
            }
        }
    }

    #[test]
    fn both_orders_together_are_free_of_deadlock() {
        for (k, vcs) in [(3, 2), (4, 2), (5, 4)] {
            let s = spec(k, vcs);
            let rep = cdg::check(&s.fabric, &s.routing);
            assert_eq!(rep.failure_count, 0, "{k} {:?}", rep.failures);
            assert!(rep.deadlock_free(), "{k}: {:?}", rep.describe_cycle(&s.fabric));
        }
    }
}

//! Minimal adaptive routing on k-ary n-meshes with an escape channel (Duato 1993), as
//! BookSim2's `min_adapt_mesh` means it (`routefunc.cpp`, commit `28f43299`): VC 0 of every
//! network channel is an escape channel routed by dimension order, the other VCs may go in
//! every productive direction. A head in VCs 1.. (or come from its host) may take VCs 1..
//! of any output that brings it nearer, at the higher priority, or VC 0 of its
//! dimension-order output, at the lower ([`Escape`]); a head in VC 0 stays there, by
//! dimension order. The switch's VC allocator weighs the two (BookSim2's `OutputSet`
//! priorities 1 and 0), over all the switch's outputs at once. At the destination's switch
//! it takes any VC of its host's port.
//!
//! Deadlock freedom rests on the escape channels alone: their dependencies are dimension
//! order's, acyclic, and a packet in an escape VC never leaves them, so no dependency runs
//! from one escape channel to another through an adaptive one ([`super::cdg`] checks the
//! escape channels' graph). That needs a waiting head at the front of its buffer, so an
//! adaptive VC is taken only when its buffer downstream is empty (`others_empty`): with a
//! packet allowed to queue behind another in an adaptive VC, an 8×8 mesh of 8 VCs
//! deadlocked at 90 % of saturation (a ring of six worms, each behind the next one's).
//!
//! BookSim2's function as it runs (`booksim`, `routing.algorithm = "booksim-min-adapt"`)
//! offers less: its `OutputSet` is a `std::set` ordered by priority alone, so of the
//! productive directions, all at priority 1, only the first inserted is kept, the lowest
//! dimension's, which is the dimension-order output. Its packets take dimension order's
//! path, on any VC (VC 0 last where the VC allocator weighs priorities: the separable ones,
//! not iSLIP), and stay on VC 0 once there; one path a pair, free of deadlock without the
//! empty-buffer rule, which BookSim2 does not have. Ports are numbered as [`MeshGrid`] says, BookSim2's way.

use super::grid::MeshGrid;
use super::{At, Escape, Header, PortSet, RouteError, Want};
use crate::fabric::Fabric;

#[derive(Clone, Debug)]
pub struct MinAdapt {
    grid: MeshGrid,
    /// BookSim2's function as it runs: the dimension-order output alone on VCs 1.. (see
    /// the module doc).
    pub booksim: bool,
}

impl MinAdapt {
    /// Minimal adaptive routing on a mesh fabric (`None` for other shapes, tori included),
    /// or (`booksim`) BookSim2's as it runs. The escape channel and the adaptive ones need
    /// two VCs or more per network channel: the config checks it.
    pub fn new(fab: &Fabric, booksim: bool) -> Option<MinAdapt> {
        Some(MinAdapt {
            grid: MeshGrid::new(fab)?,
            booksim,
        })
    }

    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let dst_sw = self.grid.dst_switch(at, h.dst)?;
        let (here, there) = (self.grid.at(at.switch), self.grid.at(dst_sw));
        let n = self.grid.n;
        let Some(dor) = (0..n).find(|&d| here[d] != there[d]) else {
            return Ok(self.grid.eject(h.dst, dst_sw));
        };
        let escape = MeshGrid::port(here, there, dor);
        if at.in_port < self.grid.net_ports() && at.in_vc == 0 {
            // In the escape channel: dimension order, on it.
            return Ok(Want {
                ports: PortSet::single(escape),
                vc_lo: 0,
                vc_hi: 0,
                escape: Escape::NONE,
            });
        }
        let mut ports = PortSet::single(escape);
        if !self.booksim {
            for d in dor + 1..n {
                if here[d] != there[d] {
                    ports.insert(MeshGrid::port(here, there, d));
                }
            }
        }
        Ok(Want {
            ports,
            vc_lo: 1,
            vc_hi: self.grid.net_vcs - 1,
            escape: Escape {
                port: escape,
                lo: 0,
                hi: 0,
                others_empty: !self.booksim,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_str;
    use crate::routing::testing::at;
    use crate::routing::{At, Escape, Header, PortSet, Routing, cdg};

    fn spec(k: u32, vcs: u8) -> crate::engine::Spec {
        spec_of(k, vcs, "min-adapt")
    }

    fn spec_of(k: u32, vcs: u8, algo: &str) -> crate::engine::Spec {
        let text = format!(
            "[topology]\nkind = \"mesh\"\nk = [{k}, {k}]\n[channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n\
             [switch]\nvc_allocator = \"islip\"\n[routing]\nalgorithm = \"{algo}\"\n"
        );
        load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap()
    }

    /// Every productive direction on VCs 1.., the dimension-order output's VC 0 as the
    /// escape; in the escape VC, dimension order only; at the destination, its host.
    #[test]
    fn productive_directions_with_a_dimension_order_escape() {
        let s = spec(4, 4);
        let Routing::MinAdapt(m) = &s.routing else {
            panic!("{:?}", s.routing);
        };
        assert_eq!(s.routing.name(), "min-adapt");
        let route = |a: At, dst: u32| m.route(a, Header::dst(dst)).unwrap();
        // s5 (1, 1) → host 14 at (2, 3): +x (port 0) or +y (port 2); the escape +x, VC 0.
        let w = route(at(5, 4, 0), 14);
        assert_eq!(w.ports, {
            let mut p = PortSet::single(0);
            p.insert(2);
            p
        });
        assert_eq!((w.vc_lo, w.vc_hi), (1, 3));
        assert_eq!(
            w.escape,
            Escape {
                port: 0,
                lo: 0,
                hi: 0,
                others_empty: true
            }
        );
        assert_eq!(w.ranges_at(0), [Some((1, 3, true)), Some((0, 0, false))]);
        assert_eq!(w.ranges_at(2), [Some((1, 3, true)), None]);
        assert_eq!(w.ranges_at(1), [None, None]);
        // Come in on an adaptive VC of a network channel: the same choice.
        assert_eq!(route(at(5, 1, 2), 14), w);
        // Come in on the escape VC: dimension order on it, whatever else is productive.
        let e = route(at(5, 1, 0), 14);
        assert_eq!((e.ports, e.vc_lo, e.vc_hi), (PortSet::single(0), 0, 0));
        assert!(!e.escape.is_some());
        // -x and -y from s10 (2, 2) to host 5 at (1, 1).
        let w = route(at(10, 4, 0), 5);
        assert_eq!(w.all_ports().iter().collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(w.escape.port, 1);
        // One dimension left: one port, on both priorities.
        let w = route(at(13, 4, 0), 14);
        assert_eq!((w.ports, w.escape.port), (PortSet::single(0), 0));
        // At the destination's switch: its host's port, any VC, from either VC.
        for vc in [0, 2] {
            let h = route(at(14, 1, vc), 14);
            assert_eq!((h.ports, h.vc_lo, h.vc_hi), (PortSet::single(4), 0, 3));
            assert!(!h.escape.is_some());
        }
    }

    /// The escape channels' dependencies are acyclic (the check reads only them), though
    /// the adaptive VCs' alone have cycles (a 2×2 turn is allowed both ways round).
    #[test]
    fn the_escape_channels_keep_it_free_of_deadlock() {
        for (k, vcs) in [(3, 2), (4, 4)] {
            let s = spec(k, vcs);
            let rep = cdg::check(&s.fabric, &s.routing);
            assert!(rep.deadlock_free(), "{:?}", rep.describe_cycle(&s.fabric));
            assert_eq!(rep.failure_count, 0);
            assert!(rep.used > 0 && rep.edges > 0);
        }
        // Without the escape's rule (every admissible output a dependency), cycles.
        let s = spec(4, 2);
        let rep = cdg::check_all_choices(&s.fabric, &s.routing);
        assert!(!rep.deadlock_free());
    }

    /// BookSim2's function as it runs: the dimension-order output alone, on VCs 1.. or its
    /// VC 0, without the empty-buffer rule.
    #[test]
    fn booksims_keeps_the_dimension_order_output_alone() {
        let s = spec_of(4, 4, "booksim-min-adapt");
        let Routing::MinAdapt(m) = &s.routing else {
            panic!("{:?}", s.routing);
        };
        assert_eq!(s.routing.name(), "booksim-min-adapt");
        let w = m.route(at(5, 4, 0), Header::dst(14)).unwrap();
        assert_eq!((w.ports, w.vc_lo, w.vc_hi), (PortSet::single(0), 1, 3));
        assert_eq!((w.escape.port, w.escape.lo, w.escape.hi), (0, 0, 0));
        assert!(!w.escape.others_empty);
        // Dimension order's paths: free of deadlock with every choice a dependency.
        let rep = cdg::check_all_choices(&s.fabric, &s.routing);
        assert!(rep.deadlock_free(), "{:?}", rep.describe_cycle(&s.fabric));
    }

    #[test]
    fn needs_a_mesh_two_vcs_and_a_separable_vc_allocator() {
        let load = |text: &str| load_str("t.toml", text, std::path::Path::new("."), &[]).unwrap_err();
        let sep = "[switch]\nvc_allocator = \"separable-input-first\"\n";
        let e = load(&format!(
            "[topology]\nkind = \"torus\"\nk = [4, 4]\n[channel]\nvcs = 2\n{sep}[routing]\nalgorithm = \"min-adapt\"\n"
        ));
        assert!(format!("{e:#}").contains("runs on a mesh"), "{e:#}");
        let e = load(&format!(
            "[topology]\nkind = \"mesh\"\nk = [4, 4]\n{sep}[routing]\nalgorithm = \"min-adapt\"\n"
        ));
        assert!(format!("{e:#}").contains("channel.vcs"), "{e:#}");
        let e = load(
            "[topology]\nkind = \"mesh\"\nk = [4, 4]\n[channel]\nvcs = 2\n[routing]\nalgorithm = \"min-adapt\"\n",
        );
        assert!(format!("{e:#}").contains("switch.vc_allocator"), "{e:#}");
    }
}

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
//!
//! On a torus reef runs only BookSim2's `min_adapt_torus` as it runs (`booksim`): two escape
//! VCs, 0 and 1, by dimension order with a dateline class from the dimension's entry, and one
//! adaptive VC, 3 (`vcBegin + 3`; VC 2 and VCs from 4 carry packets only from their nodes).
//! A head come in on VC 0 or 1 of a network channel stays in the escape: dimension order,
//! on the VC it came in on if it goes on in the same dimension, else on the class of its
//! path in the next one. Any other head (from its node, or on VC 3) may take VC 3 of the
//! minimal direction in the lowest dimension left, half way round the negative one
//! (priority 1; BookSim2 adds every dimension's, its `OutputSet` keeps that one), or the
//! escape VC of dimension order from here (priority 0): VC 1 if `x > y` in the dimension,
//! else VC 0 — BookSim2's `dor_next_torus` class, which in the negative direction is the
//! class of the paths that do *not* cross the wrap-around link. Half way round the escape
//! goes as [`super::dor::Ties::Alternate`] (BookSim2 flips a coin). With two VCs every head is
//! in the escape (BookSim2 takes a node's packet to be on its last VC, 1): dimension order.

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
    /// or (`booksim`) BookSim2's as it runs, on a mesh or a torus. The escape channel and
    /// the adaptive ones need two VCs or more per network channel (on a torus 2, or 4 or
    /// more): the config checks it.
    pub fn new(fab: &Fabric, booksim: bool) -> Option<MinAdapt> {
        let grid = if booksim {
            MeshGrid::cube(fab)?
        } else {
            MeshGrid::new(fab)?
        };
        Some(MinAdapt { grid, booksim })
    }

    /// BookSim2's adaptive VC on a torus (`vcBegin + 3`).
    pub const TORUS_ADAPTIVE_VC: u8 = 3;

    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let dst_sw = self.grid.dst_switch(at, h.dst)?;
        let (here, there) = (self.grid.at(at.switch), self.grid.at(dst_sw));
        let n = self.grid.n;
        let Some(dor) = (0..n).find(|&d| here[d] != there[d]) else {
            return Ok(self.grid.eject(h.dst, dst_sw));
        };
        if self.grid.wrap {
            return Ok(self.torus(at, here, there, dor));
        }
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

    /// BookSim2's `min_adapt_torus` as it runs (the module doc), at coordinates `here`
    /// towards `there`, which differ first in dimension `d`.
    #[inline]
    fn torus(&self, at: At, here: &[u16], there: &[u16], d: usize) -> Want {
        let (x, y, k) = (u32::from(here[d]), u32::from(there[d]), self.grid.k[d]);
        let escaped = at.in_port < self.grid.net_ports() && at.in_vc <= 1;
        let esc_port = 2 * d as u16 + u16::from(!MeshGrid::ring_plus(x, y, k, true));
        // BookSim2's `f->ph`: kept along a dimension, set anew on entering one.
        let class = if escaped && at.in_port / 2 == d as u16 {
            at.in_vc
        } else {
            u8::from(x > y)
        };
        if escaped || self.grid.net_vcs <= Self::TORUS_ADAPTIVE_VC {
            return Want {
                ports: PortSet::single(esc_port),
                vc_lo: class,
                vc_hi: class,
                escape: Escape::NONE,
            };
        }
        // `dist2 > 0`: strictly nearer the positive way; a tie goes the negative way.
        let plus = 2 * ((y + k - x) % k) < k;
        Want {
            ports: PortSet::single(2 * d as u16 + u16::from(!plus)),
            vc_lo: Self::TORUS_ADAPTIVE_VC,
            vc_hi: Self::TORUS_ADAPTIVE_VC,
            escape: Escape {
                port: esc_port,
                lo: class,
                hi: class,
                others_empty: false,
            },
        }
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

    fn torus(vcs: u8) -> (crate::engine::Spec, super::MinAdapt) {
        let text = format!(
            "[topology]\nkind = \"torus\"\nk = [8, 8]\n[channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n\
             [switch]\nvc_allocator = \"islip\"\n[routing]\nalgorithm = \"booksim-min-adapt\"\n"
        );
        let s = load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap();
        let Routing::MinAdapt(m) = s.routing.clone() else {
            panic!("{:?}", s.routing);
        };
        (s, m)
    }

    /// One port and one VC, with an escape port and VC or none.
    fn want(port: u16, vc: u8, escape: Option<(u16, u8)>) -> crate::routing::Want {
        crate::routing::Want {
            ports: PortSet::single(port),
            vc_lo: vc,
            vc_hi: vc,
            escape: escape.map_or(Escape::NONE, |(port, vc)| Escape {
                port,
                lo: vc,
                hi: vc,
                others_empty: false,
            }),
        }
    }

    /// BookSim2's `min_adapt_torus` as it runs, on an 8×8 torus (switch `x + 8y`, host port
    /// 4): VC 3 of the lowest dimension's minimal direction, or the escape VC of dimension
    /// order, its class `x > y` as `dor_next_torus` sets `f->ph`.
    #[test]
    fn booksims_torus_function_vc_3_or_the_dateline_escape() {
        let (_, m) = torus(4);
        let route = |a: At, dst: u32| m.route(a, Header::dst(dst)).unwrap();
        let host = 4;
        // x 6 → 1 the positive way through the wrap-around link: class 1.
        assert_eq!(route(at(6, host, 0), 1), want(0, 3, Some((0, 1))));
        // On VC 3 from a network channel as from the node: chosen anew.
        assert_eq!(route(at(6, 1, 3), 1), want(0, 3, Some((0, 1))));
        // x 1 → 6 the negative way through the link: class 0 (BookSim2's `dest < cur`);
        // x 6 → 3 the negative way, not through it: class 1.
        assert_eq!(route(at(1, host, 2), 6), want(1, 3, Some((1, 0))));
        assert_eq!(route(at(6, host, 1), 3), want(1, 3, Some((1, 1))));
        // Half way round: VC 3 the negative way; the escape the positive way from an even x.
        assert_eq!(route(at(0, host, 0), 4), want(1, 3, Some((0, 0))));
        assert_eq!(route(at(1, host, 0), 5), want(1, 3, Some((1, 0))));
        // The lowest dimension left only: (1, 1) → (3, 3) on +x, not +y.
        assert_eq!(route(at(9, host, 0), 27), want(0, 3, Some((0, 0))));
        // In the escape, going on in the dimension: the VC it came in on, no other output.
        assert_eq!(route(at(7, 1, 1), 1), want(0, 1, None));
        assert_eq!(route(at(0, 1, 1), 1), want(0, 1, None));
        // In the escape, entering dimension 1: (0, 1) → (0, 6) the negative way, class 0.
        assert_eq!(route(at(8, 1, 1), 48), want(3, 0, None));
        // At the destination's switch: the host's port, any VC.
        let h = route(at(1, 0, 0), 1);
        assert_eq!(
            (h.ports, h.vc_lo, h.vc_hi, h.escape),
            (PortSet::single(host), 0, 3, Escape::NONE)
        );
        // With two VCs every packet is in the escape, from its node too: dimension order.
        let (_, m2) = torus(2);
        assert_eq!(
            m2.route(at(6, host, 1), Header::dst(1)).unwrap(),
            want(0, 1, None)
        );
        assert_eq!(m2.route(at(7, 1, 1), Header::dst(1)).unwrap(), want(0, 1, None));
    }

    /// Its escape channels (dimension order with BookSim2's classes) are free of cycles;
    /// VC 3 alone is not (each ring's).
    #[test]
    fn booksims_torus_function_escapes_deadlock_by_its_dateline() {
        for vcs in [2, 4, 8] {
            let (s, _) = torus(vcs);
            let rep = cdg::check(&s.fabric, &s.routing);
            assert!(rep.deadlock_free(), "{vcs}: {:?}", rep.describe_cycle(&s.fabric));
            assert_eq!(rep.failure_count, 0);
        }
        let (s, _) = torus(4);
        assert!(!cdg::check_all_choices(&s.fabric, &s.routing).deadlock_free());
    }

    #[test]
    fn needs_a_mesh_two_vcs_and_a_separable_vc_allocator() {
        let load = |text: &str| load_str("t.toml", text, std::path::Path::new("."), &[]).unwrap_err();
        let sep = "[switch]\nvc_allocator = \"separable-input-first\"\n";
        let e = load(&format!(
            "[topology]\nkind = \"torus\"\nk = [4, 4]\n[channel]\nvcs = 2\n{sep}[routing]\nalgorithm = \"min-adapt\"\n"
        ));
        assert!(format!("{e:#}").contains("runs on a mesh"), "{e:#}");
        // BookSim2's function on a torus: 2 VCs, or 4 and more.
        for vcs in [1, 3] {
            let e = load(&format!(
                "[topology]\nkind = \"torus\"\nk = [4, 4]\n[channel]\nvcs = {vcs}\n{sep}[routing]\nalgorithm = \"booksim-min-adapt\"\n"
            ));
            assert!(format!("{e:#}").contains("2 VCs (no adaptive one) or"), "{e:#}");
        }
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

//! Valiant's randomized routing on k-ary n-meshes and n-tori (Valiant & Brebner 1981), as
//! BookSim2's `valiant_mesh` and `valiant_torus` (`routefunc.cpp`, commit `28f43299`): a
//! packet goes by dimension order to an intermediate switch drawn uniformly at random, all
//! switches alike (its own and its destination's included), then by dimension order to its
//! destination. The two phases travel in separate VC classes, which keeps the channel
//! dependencies of each phase apart (each is dimension order) and only ever lets phase 0
//! wait on phase 1:
//!
//! - on a mesh, phase 0 in the lower half of a channel's VCs and phase 1 in the upper half;
//! - on a torus, the VCs are split into two dateline classes first (the lower and upper
//!   half, the upper for a dimension whose path crosses the wrap-around link, taken at
//!   entry to the dimension as [`super::dor::DatelineClass::AtEntry`]), and each class into
//!   its phases (its lower half phase 0, its upper half phase 1): 8 VCs are 0–1, 2–3 (no
//!   crossing, phases 0 and 1) and 4–5, 6–7 (crossing). Reaching the intermediate switch,
//!   a packet enters its next dimension anew, as BookSim2 does by routing as from the
//!   injection port. Half way round a ring it goes the positive way from an even
//!   coordinate and the negative way from an odd one ([`super::dor::Ties::Alternate`]),
//!   where BookSim2 flips a coin.
//!
//! The phase is read from the VC a packet comes in on, the intermediate switch from the
//! packet's draw ([`super::Header::draw`]), which its source makes from its own seeded
//! stream as it starts the packet (BookSim2 draws at the first router, `RandomInt(gNodes -
//! 1)`, from its global generator). A packet in phase 0 passing through its destination's
//! switch stays in the phase-0 class; BookSim2 gives it any VC on that one hop (its
//! `r->GetID() != f->dest` test), so that a phase-0 packet may hold a phase-1 VC while it
//! waits for a phase-0 channel: a dependency from phase 1 back to phase 0, which the
//! classes are there to exclude. reef keeps the classes strict ([`super::cdg`] checks
//! both meshes and tori free of cycles). BookSim2's `valiant_torus`
//! itself cannot run: on a hop that goes on in the same dimension `dor_next_torus` leaves
//! the ring class unset, and `valiant_torus` reads it uninitialized (its assertion fails on
//! the first such hop); reef runs what it evidently means, the class kept along the
//! dimension as `dim_order_torus` keeps it.

use super::dor::{DatelineClass, Dor, DorOptions, Ties};
use super::{At, Escape, Header, PortSet, RouteError, Want};
use crate::fabric::{Fabric, Shape};

#[derive(Clone, Debug)]
pub struct Valiant {
    /// Dimension order towards a switch: the legs (with the at-entry dateline on a torus).
    dor: Dor,
    wrap: bool,
    /// Network ports (`2n`): host ports follow.
    net_ports: u16,
    conc: u32,
    switches: u32,
    net_vcs: u8,
    host_vcs: u8,
}

impl Valiant {
    /// Valiant routing on a mesh or torus fabric (`None` for other shapes). The VC classes
    /// need a number of VCs per network channel that is even (a mesh) or a multiple of 4 (a
    /// torus): the config checks it ([`Self::vcs_needed`]).
    pub fn new(fab: &Fabric) -> Option<Valiant> {
        let Shape::Cube { k, wrap, conc } = &fab.shape else {
            return None;
        };
        let opts = DorOptions {
            dateline: *wrap,
            class: DatelineClass::AtEntry,
            ties: Ties::Alternate,
        };
        let dor = Dor::new(fab, opts)?;
        let n = k.len();
        let (net_vcs, host_vcs) = super::dor::cube_vcs(fab, n);
        Some(Valiant {
            dor,
            wrap: *wrap,
            net_ports: 2 * n as u16,
            conc: *conc,
            switches: fab.switches,
            net_vcs,
            host_vcs,
        })
    }

    /// What the VCs of a network channel must divide into: 2 classes on a mesh (the
    /// phases), 4 on a torus (dateline classes × phases).
    pub fn vcs_needed(torus: bool) -> u8 {
        if torus { 4 } else { 2 }
    }

    /// The values of a packet's draw: the intermediate switch.
    pub fn draws(&self) -> u32 {
        self.switches
    }

    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let no_route = RouteError::NoRoute {
            switch: at.switch,
            dst: h.dst,
        };
        let dst_sw = h.dst / self.conc;
        if dst_sw >= self.switches || h.draw >= self.switches {
            return Err(no_route);
        }
        let half = self.net_vcs / 2;
        let from_host = at.in_port >= self.net_ports;
        // The phase the packet came in with: its VC's class.
        let mut phase1 = !from_host
            && if self.wrap {
                at.in_vc % half >= half / 2
            } else {
                at.in_vc >= half
            };
        let mut in_port = at.in_port;
        if !phase1 && at.switch == h.draw {
            // At the intermediate switch: phase 1 starts, entering its first dimension anew.
            phase1 = true;
            in_port = self.net_ports;
        }
        let target = if phase1 { dst_sw } else { h.draw };
        let Some((port, upper)) = self.dor.toward(at.switch, in_port, at.in_vc, target) else {
            // Only the destination's switch in phase 1 is its own target.
            return Ok(Want {
                ports: PortSet::single(self.net_ports + (h.dst - dst_sw * self.conc) as u16),
                vc_lo: 0,
                vc_hi: self.host_vcs.saturating_sub(1),
                escape: Escape::NONE,
            });
        };
        let (lo, width) = if self.wrap {
            let q = half / 2;
            (if upper { half } else { 0 } + if phase1 { q } else { 0 }, q)
        } else {
            (if phase1 { half } else { 0 }, half)
        };
        Ok(Want {
            ports: PortSet::single(port),
            vc_lo: lo,
            vc_hi: lo + width - 1,
            escape: Escape::NONE,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;
    use crate::routing::testing::walk;
    use crate::routing::{Routing, cdg};

    fn spec(kind: &str, k: u32, vcs: u8) -> crate::engine::Spec {
        let text = format!(
            "[topology]\nkind = \"{kind}\"\nk = [{k}, {k}]\n[channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n\
             [routing]\nalgorithm = \"valiant\"\n"
        );
        load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap()
    }

    fn valiant(spec: &crate::engine::Spec) -> &Valiant {
        let Routing::Valiant(v) = &spec.routing else {
            panic!("valiant")
        };
        v
    }

    /// Hops between two switches of a k×k mesh or torus.
    fn dist(k: u32, wrap: bool, a: u32, b: u32) -> usize {
        let d = |x: u32, y: u32| {
            let m = x.abs_diff(y);
            if wrap { m.min(k - m) } else { m }
        };
        (d(a % k, b % k) + d(a / k, b / k)) as usize
    }

    #[test]
    fn mesh_goes_through_the_intermediate_switch_in_two_phases() {
        let s = spec("mesh", 4, 4);
        assert_eq!(valiant(&s).draws(), 16);
        // s0 → s15 via s3: x to 3 in VCs 0–1, then y to 15 in VCs 2–3.
        let path = walk(&s, 0, 15, 3);
        let sw: Vec<u32> = path.iter().map(|p| p.0).collect();
        assert_eq!(sw, vec![0, 1, 2, 3, 7, 11, 15]);
        let vcs: Vec<(u8, u8)> = path.iter().map(|p| (p.1, p.2)).collect();
        assert_eq!(vcs, vec![(0, 1), (0, 1), (0, 1), (2, 3), (2, 3), (2, 3), (0, 3)]);
        // Every pair and intermediate: minimal to the intermediate and from it.
        for src in 0..16 {
            for dst in 0..16 {
                for via in 0..16 {
                    let p = walk(&s, src, dst, via);
                    assert_eq!(p.len() - 1, dist(4, false, src, via) + dist(4, false, via, dst));
                    // Phase 0 (VCs 0–1) until the intermediate, phase 1 (2–3) after it.
                    let at = p.iter().position(|x| x.0 == via).unwrap();
                    for (j, &(_, lo, hi)) in p[..p.len() - 1].iter().enumerate() {
                        assert_eq!(
                            (lo, hi),
                            if j < at { (0, 1) } else { (2, 3) },
                            "{src} {dst} {via}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn torus_classes_split_by_dateline_then_phase() {
        let s = spec("torus", 4, 8);
        for src in 0..16 {
            for dst in 0..16 {
                for via in 0..16 {
                    let p = walk(&s, src, dst, via);
                    assert_eq!(p.len() - 1, dist(4, true, src, via) + dist(4, true, via, dst));
                    let at = p.iter().position(|x| x.0 == via).unwrap();
                    for (j, &(_, lo, hi)) in p[..p.len() - 1].iter().enumerate() {
                        assert_eq!(hi - lo, 1);
                        // Phase 1 in 2–3 or 6–7, phase 0 in 0–1 or 4–5.
                        assert_eq!(lo % 4 == 2, j >= at, "{src} {dst} {via}");
                    }
                }
            }
        }
        // s3 → s1 via s0 on a ring of 4 (row 0): 3 → 0 crosses the wrap-around link (the
        // upper dateline class, phase 0: VCs 4–5); 0 → 1 is phase 1 without crossing (2–3).
        let p = walk(&s, 3, 1, 0);
        assert_eq!(p, vec![(3, 4, 5), (0, 2, 3), (1, 0, 7)]);
    }

    #[test]
    fn meshes_and_tori_are_free_of_deadlock() {
        for (kind, k, vcs) in [("mesh", 4, 2), ("mesh", 5, 4), ("torus", 4, 4), ("torus", 5, 8)] {
            let s = spec(kind, k, vcs);
            let rep = cdg::check(&s.fabric, &s.routing);
            assert_eq!(rep.failure_count, 0, "{kind} {k} {:?}", rep.failures);
            assert!(
                rep.deadlock_free(),
                "{kind} {k}: {:?}",
                rep.describe_cycle(&s.fabric)
            );
        }
    }
}

//! Valiant's routing and UGAL on BookSim2's flattened butterfly ([`crate::fabric::flatfly`]),
//! as its `valiant_flatfly` and `ugal_flatfly_onchip` (`src/networks/flatfly_onchip.cpp`,
//! commit 28f43299). Both go by `flatfly_outport` on each leg: straight to the router that
//! corrects the lowest dimension in which the two differ. Each packet is in one of two
//! phases, and a phase is a half of every channel's VCs: the lower half towards an
//! intermediate router, the upper half towards the destination (BookSim2's `vcEnd -=
//! available_vcs` and `vcBegin += available_vcs`); out to a node on any VC. Each leg is
//! dimension order and a packet only goes from the lower half to the upper one, so neither
//! has a cycle of channel dependencies ([`super::cdg`] checks it). The phase is read from
//! the VC a packet comes in on, as BookSim2's `f->ph` is carried with it.
//!
//! - **Valiant** (`valiant_flatfly`): the intermediate router is that of a node drawn from
//!   all of them (`RandomInt(k^n·c − 1)`), uniform over the routers, the source's and the
//!   destination's included. A packet turns to its destination at the intermediate router
//!   and, in BookSim2, at its destination's router too, where it leaves: `f->ph = 1` once
//!   either is reached (a leg to the intermediate router may pass the destination's).
//! - **UGAL** (`ugal_flatfly_onchip`): at its source router a packet goes minimally, or
//!   through an intermediate router drawn in its minimal quadrant (`find_ran_intm`: each
//!   dimension where source and destination differ drawn from `0..k`, the others the
//!   source's), minimally if `h_min·q_min ≤ h_nonmin·q_nonmin + 2` ([`Flatfly::prefers_min`]):
//!   `q` the credits used on the minimal output and on the one towards the intermediate
//!   router (`GetUsedCredit`: flits sent on all the output's VCs whose credits have not come
//!   back), `h` the hops of each route (`find_distance`). An intermediate router that is the
//!   source's goes minimally (BookSim2 gives it `numeric_limits<int>::max()` credits, which
//!   its sum overflows, but either branch then routes minimally); one that is the
//!   destination's too (the same output and hops). The engine applies the rule as the
//!   head is routed at its source router; the routing step itself takes the choice from
//!   the packet's draw, so that the dependency check and route listings walk both routes.
//!
//! A packet's draw ([`super::Header::draw`]) is made by its source from its own seeded
//! stream as it starts the packet, where BookSim2 draws at the first router from its one
//! generator: the same distribution, not the same draws. Valiant's draw is the intermediate
//! router; UGAL's `2·r + bit`, `r` a router whose digits are taken in the dimensions where
//! source and destination differ and the bit the walk's choice (0 minimal). A packet on its
//! way to UGAL's intermediate router needs no source: in a dimension where source and
//! destination agree every router on its way has the destination's digit, so the next hop
//! is in the lowest dimension whose digit is neither the destination's nor the draw's.

use super::{At, Escape, Header, PortSet, RouteError, Want};
use crate::fabric::clos::digit;
use crate::fabric::cmesh::router_of;
use crate::fabric::{Fabric, Shape};

/// Valiant's routing or UGAL on a flatfly ([`self`]).
#[derive(Clone, Debug)]
pub struct Flatfly {
    k: u32,
    n: u32,
    /// Nodes a router, `xr²`: ports `0..c`.
    c: u32,
    xr: u32,
    /// Routers to a row of the layout.
    x: u32,
    routers: u32,
    net_vcs: u8,
    host_vcs: u8,
    /// UGAL, else Valiant.
    pub ugal: bool,
}

/// The two routes UGAL chooses between at a source router: each one's output and hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub min_port: u16,
    pub other_port: u16,
    pub min_hops: u32,
    pub other_hops: u32,
}

impl Flatfly {
    /// `ugal_flatfly_onchip`'s `threshold`, biasing the choice towards the minimal route
    /// [flits].
    pub const THRESHOLD: u64 = 2;

    /// Valiant (`ugal` false) or UGAL on a flatfly fabric (`None` for other shapes). The two
    /// phases need an even number of VCs a channel between routers: the config checks it.
    pub fn new(fab: &Fabric, ugal: bool) -> Option<Flatfly> {
        let Shape::FlatFly { k, n, xr, x } = fab.shape else {
            return None;
        };
        let vcs = |c: Option<crate::fabric::ChannelId>| c.map_or(1, |c| fab.channels[c.idx()].params.vcs);
        let c = xr * xr;
        Some(Flatfly {
            k,
            n,
            c,
            xr,
            x,
            routers: fab.switches,
            net_vcs: vcs(fab.out_chan[0].get(c as usize).copied().flatten()),
            host_vcs: vcs(Some(fab.ejection_channel(0))),
            ugal,
        })
    }

    /// The values of a packet's draw: the intermediate router (and UGAL's walk's choice).
    pub fn draws(&self) -> u32 {
        if self.ugal { 2 * self.routers } else { self.routers }
    }

    /// BookSim2's rule ([`self`]): the minimal route, with `q_min` credits used on its
    /// output, against the other with `q_other`.
    pub fn prefers_min(c: Choice, q_min: u32, q_other: u32) -> bool {
        u64::from(c.min_hops) * u64::from(q_min)
            <= u64::from(c.other_hops) * u64::from(q_other) + Self::THRESHOLD
    }

    /// The output of router `r` to the router whose digit `d` is `to` (`flatfly_outport`'s
    /// numbering: by dimension, the router's own digit skipped).
    fn port(&self, r: u32, d: u32, to: u32) -> u16 {
        let own = digit(r, self.k, d);
        (self.c + (self.k - 1) * d + to - u32::from(to > own)) as u16
    }

    /// The output of router `r` towards router `t`, in the lowest dimension where they
    /// differ; `None` where they are the same.
    fn toward(&self, r: u32, t: u32) -> Option<u16> {
        let d = (0..self.n).find(|&d| digit(r, self.k, d) != digit(t, self.k, d))?;
        Some(self.port(r, d, digit(t, self.k, d)))
    }

    /// Hops between routers `a` and `b`: the dimensions where they differ (`find_distance`).
    fn hops(&self, a: u32, b: u32) -> u32 {
        (0..self.n)
            .filter(|&d| digit(a, self.k, d) != digit(b, self.k, d))
            .count() as u32
    }

    /// UGAL's intermediate router for a packet from router `src` to router `t` with raw
    /// draw `raw`: the draw's digits where the two differ, the source's elsewhere.
    fn quadrant(&self, src: u32, t: u32, raw: u32) -> u32 {
        (0..self.n).fold(0, |acc, d| {
            let (s, dd) = (digit(src, self.k, d), digit(t, self.k, d));
            acc + if s == dd { s } else { digit(raw, self.k, d) } * self.k.pow(d)
        })
    }

    /// UGAL's next output at router `r` towards its intermediate router (of raw draw
    /// `raw`, destination router `t`): the lowest dimension whose digit is neither the
    /// destination's nor the draw's ([`self`]); `None` at the intermediate router.
    fn toward_quadrant(&self, r: u32, t: u32, raw: u32) -> Option<u16> {
        let k = self.k;
        let d = (0..self.n).find(|&d| {
            let own = digit(r, k, d);
            own != digit(t, k, d) && own != digit(raw, k, d)
        })?;
        Some(self.port(r, d, digit(raw, k, d)))
    }

    /// Port `port` in the lower (`second` false) or upper half of the VCs.
    fn phase(&self, port: u16, second: bool) -> Want {
        let half = self.net_vcs / 2;
        let lo = if second { half } else { 0 };
        Want {
            ports: PortSet::single(port),
            vc_lo: lo,
            vc_hi: lo + half - 1,
            escape: Escape::NONE,
        }
    }

    /// The destination's router and port, or no route for a host the flatfly lacks.
    fn dst(&self, at: At, dst: u32) -> Result<(u32, u16), RouteError> {
        if dst >= self.routers * self.c {
            return Err(RouteError::NoRoute {
                switch: at.switch,
                dst,
            });
        }
        Ok(router_of(dst, self.x, self.xr))
    }

    /// Out to the node on port `p`, any VC.
    fn eject(&self, p: u16) -> Want {
        Want {
            ports: PortSet::single(p),
            vc_lo: 0,
            vc_hi: self.host_vcs.saturating_sub(1),
            escape: Escape::NONE,
        }
    }

    /// Whether the head at `at` came in on the upper half of the VCs (from a router).
    fn second_half(&self, at: At) -> bool {
        u32::from(at.in_port) >= self.c && at.in_vc >= self.net_vcs / 2
    }

    /// At a UGAL packet's source router with a choice, its two routes towards `dst` with
    /// draw `draw` (`None` elsewhere: the route is fixed).
    pub fn choice(&self, at: At, dst: u32, draw: u32) -> Option<Choice> {
        let r = at.switch;
        let (t, _) = self.dst(at, dst).ok()?;
        if !self.ugal || u32::from(at.in_port) >= self.c || t == r {
            return None;
        }
        let intm = self.quadrant(r, t, draw / 2);
        (intm != r).then(|| Choice {
            min_port: self.toward(r, t).expect("t is not r"),
            other_port: self.toward(r, intm).expect("intm is not r"),
            min_hops: self.hops(r, t),
            other_hops: self.hops(r, intm) + self.hops(intm, t),
        })
    }

    /// The step at `at` towards `dst` with draw `draw`; for UGAL with the source router's
    /// choice (`minimal`; ignored where there is none, [`Self::choice`]).
    pub fn step(&self, at: At, dst: u32, draw: u32, minimal: bool) -> Result<Want, RouteError> {
        let r = at.switch;
        let (t, p) = self.dst(at, dst)?;
        if t == r {
            return Ok(self.eject(p));
        }
        // The output towards the intermediate router, in phase 0 (the lower half).
        let first_leg = if self.second_half(at) {
            None
        } else if self.ugal {
            let at_source = u32::from(at.in_port) < self.c;
            if at_source && minimal {
                None
            } else {
                self.toward_quadrant(r, t, draw / 2)
            }
        } else {
            // (None at the intermediate router.)
            self.toward(r, draw)
        };
        Ok(match first_leg {
            Some(port) => self.phase(port, false),
            None => self.phase(self.toward(r, t).expect("t is not r"), true),
        })
    }

    /// The routing step for `h`; UGAL's choice at a source router from the draw's bit.
    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        if h.draw >= self.draws() {
            return Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            });
        }
        self.step(at, h.dst, h.draw, h.draw.is_multiple_of(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;
    use crate::fabric::cmesh::node_at;
    use crate::routing::testing::{at, walk};
    use crate::routing::{Routing, cdg};

    /// A k-ary n-flatfly of 2×2 nodes a router, `k` routers to a row.
    fn spec(algo: &str, k: u32, n: u32, vcs: u8) -> crate::engine::Spec {
        let text = format!(
            "[topology]\nkind = \"flatfly\"\nk = {k}\nn = {n}\nhosts_per_switch = 4\nrouters_per_row = {k}\n\
             [channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"{algo}\"\n"
        );
        load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap()
    }

    fn flatfly(spec: &crate::engine::Spec) -> &Flatfly {
        let Routing::Flatfly(f) = &spec.routing else {
            panic!("flatfly")
        };
        f
    }

    /// Router `a` with its lowest dimension where it differs from `b` set to `b`'s: the
    /// next router on `flatfly_outport`'s way (`k` routers a dimension).
    fn next(k: u32, a: u32, b: u32) -> u32 {
        let mut p = 1;
        while (a / p) % k == (b / p) % k {
            p *= k;
        }
        a - (a / p) % k * p + (b / p) % k * p
    }

    /// The routers from `a` to `b`, both included, lowest dimension first.
    fn leg(k: u32, a: u32, b: u32) -> Vec<u32> {
        let mut out = vec![a];
        while *out.last().unwrap() != b {
            out.push(next(k, *out.last().unwrap(), b));
        }
        out
    }

    #[test]
    fn valiant_goes_through_the_intermediate_router_or_out_on_the_way() {
        let s = spec("flatfly-valiant", 4, 2, 8);
        assert_eq!(flatfly(&s).draws(), 16);
        // Router 0 to router 1 through router 5 = (1, 1): the way to 5 corrects dimension
        // 0 first, to router 1, the destination's, where the packet leaves (valiant_flatfly
        // turns to phase 1 there, and its destination is on this router).
        let host = |r: u32, p: u32| node_at(r, p, 4, 2);
        let p = walk(&s, host(0, 0), host(1, 3), 5);
        assert_eq!(p, vec![(0, 0, 3), (1, 0, 7)]);
        for src in 0..16 {
            for dst in 0..16 {
                for via in 0..16 {
                    // Phase 0 towards `via` in VCs 0-3, phase 1 from it in 4-7, out at
                    // the destination's router whenever it is reached.
                    let mut want: Vec<(u32, u8, u8)> = Vec::new();
                    let mut second = false;
                    for r in leg(4, src, via)
                        .into_iter()
                        .chain(leg(4, via, dst).into_iter().skip(1))
                    {
                        second |= r == via;
                        if r == dst {
                            want.push((r, 0, 7));
                            break;
                        }
                        want.push(if second { (r, 4, 7) } else { (r, 0, 3) });
                    }
                    assert_eq!(
                        walk(&s, host(src, 1), host(dst, 2), via),
                        want,
                        "{src} {dst} {via}"
                    );
                }
            }
        }
    }

    #[test]
    fn ugal_draws_its_intermediate_router_in_the_minimal_quadrant() {
        let s = spec("flatfly-ugal", 4, 2, 8);
        let f = flatfly(&s);
        assert_eq!(f.draws(), 32);
        // Router 0 = (0, 0) to 5 = (1, 1): both digits drawn, 14 = (2, 3) taken whole.
        assert_eq!(f.quadrant(0, 5, 14), 14);
        // To 1 = (1, 0): dimension 1 is the source's, (2, 0).
        assert_eq!(f.quadrant(0, 1, 14), 2);
        let host = |r: u32, p: u32| node_at(r, p, 4, 2);
        // From node 0 (router 0, port 0) to router 5 through 14: the minimal output is
        // dimension 0 to digit 1 (port 4), the other dimension 0 to digit 2 (port 5); 2
        // hops against 2 + 2.
        let c = f.choice(at(0, 0, 0), host(5, 0), 28).unwrap();
        assert_eq!(
            c,
            Choice {
                min_port: 4,
                other_port: 5,
                min_hops: 2,
                other_hops: 4
            }
        );
        // No choice from a router, nor with the intermediate router the source's.
        assert_eq!(f.choice(at(0, 4, 0), host(5, 0), 28), None);
        assert_eq!(f.choice(at(0, 0, 0), host(5, 0), 0), None);
        for src in 0..16 {
            for dst in 0..16 {
                for raw in 0..16 {
                    let intm = f.quadrant(src, dst, raw);
                    for bit in 0..2 {
                        let route = if bit == 0 || intm == src {
                            leg(4, src, dst)
                                .into_iter()
                                .map(|r| (r, true))
                                .collect::<Vec<_>>()
                        } else {
                            let to = leg(4, src, intm);
                            let from = leg(4, intm, dst);
                            let n = to.len();
                            to.into_iter()
                                .enumerate()
                                .map(|(i, r)| (r, i + 1 == n))
                                .chain(from.into_iter().skip(1).map(|r| (r, true)))
                                .collect()
                        };
                        let want: Vec<(u32, u8, u8)> = route
                            .iter()
                            .map(|&(r, second)| match (r == dst, second) {
                                (true, _) => (r, 0, 7),
                                (false, true) => (r, 4, 7),
                                (false, false) => (r, 0, 3),
                            })
                            .collect();
                        let draw = 2 * raw + bit;
                        assert_eq!(
                            walk(&s, host(src, 3), host(dst, 0), draw),
                            want,
                            "{src} {dst} {raw} {bit}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ugal_rule_weighs_the_credits_by_the_hops() {
        let c = Choice {
            min_port: 4,
            other_port: 5,
            min_hops: 2,
            other_hops: 3,
        };
        // 2·q_min ≤ 3·q_other + 2.
        assert!(Flatfly::prefers_min(c, 1, 0) && !Flatfly::prefers_min(c, 2, 0));
        assert!(Flatfly::prefers_min(c, 7, 4) && !Flatfly::prefers_min(c, 8, 4));
        // The same output (an intermediate router on the minimal way): always minimal.
        let same = Choice {
            other_port: 4,
            other_hops: 2,
            ..c
        };
        assert!(Flatfly::prefers_min(same, 32, 32));
    }

    #[test]
    fn both_are_free_of_deadlock() {
        for (k, n, vcs) in [(4, 2, 8), (3, 3, 2), (2, 4, 4)] {
            for algo in ["flatfly-valiant", "flatfly-ugal"] {
                let s = spec(algo, k, n, vcs);
                let rep = cdg::check(&s.fabric, &s.routing);
                assert_eq!(rep.failure_count, 0, "{algo} {k} {n}: {:?}", rep.failures);
                assert!(
                    rep.deadlock_free(),
                    "{algo} {k} {n}: {:?}",
                    rep.describe_cycle(&s.fabric)
                );
            }
        }
    }

    #[test]
    fn an_odd_number_of_vcs_is_refused() {
        for algo in ["flatfly-valiant", "flatfly-ugal"] {
            let text = format!(
                "[topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nhosts_per_switch = 4\nrouters_per_row = 4\n\
                 [channel]\nvcs = 3\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"{algo}\"\n"
            );
            let e = load_str("t.toml", &text, std::path::Path::new("."), &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains("channel.vcs") && e.contains("multiple of 2"), "{e}");
        }
    }
}

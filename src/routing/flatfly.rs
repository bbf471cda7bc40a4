//! BookSim2's routing functions on its flattened butterfly ([`crate::fabric::flatfly`]) that
//! draw or choose: `valiant_flatfly`, `ugal_flatfly_onchip`, `xyyx_flatfly`,
//! `adaptive_xyyx_flatfly` and `ugal_xyyx_flatfly_onchip` (`src/networks/flatfly_onchip.cpp`,
//! commit 28f43299). Each leg of a route goes straight to the router that corrects one
//! dimension in which the two differ: the lowest first (`flatfly_outport`, "x first") or
//! the highest first (`flatfly_outport_yx`, "y first"). A channel's VCs are split into
//! classes, and each class is a contiguous range: by order (x first in the lower half, y
//! first in the upper, BookSim2's `vcEnd -= available_vcs` and `vcBegin +=
//! available_vcs`), then within it by phase (towards an intermediate router in the lower
//! half, towards the destination in the upper); out to a node on any VC. Each class is
//! dimension order and a packet only moves up from phase to phase, so no cycle of channel
//! dependencies forms ([`super::cdg`] checks it). The order and the phase are read from the
//! VC a packet comes in on, as BookSim2 carries them in `f->vc` and `f->ph`.
//!
//! - **Valiant** (`valiant_flatfly`): x first to an intermediate router, that of a node
//!   drawn from all of them (`RandomInt(k^n·c − 1)`), uniform over the routers, the
//!   source's and the destination's included; then x first to the destination. A packet
//!   turns to its destination at the intermediate router and, in BookSim2, at its
//!   destination's router too, where it leaves: `f->ph = 1` once either is reached (a leg
//!   to the intermediate router may pass the destination's).
//! - **UGAL** (`ugal_flatfly_onchip`): at its source router a packet goes minimally, or
//!   through an intermediate router drawn in its minimal quadrant (`find_ran_intm`: each
//!   dimension where source and destination differ drawn from `0..k`, the others the
//!   source's), minimally if `h_min·q_min ≤ h_nonmin·q_nonmin + 2` ([`Flatfly::prefers_min`]):
//!   `q` the credits used on the minimal output and on the one towards the intermediate
//!   router (`GetUsedCredit`: flits sent on all the output's VCs whose credits have not come
//!   back), `h` the hops of each route (`find_distance`). An intermediate router that is the
//!   source's goes minimally (BookSim2 gives it `numeric_limits<int>::max()` credits, which
//!   its sum overflows, but either branch then routes minimally); one that is the
//!   destination's too (the same output and hops).
//! - **XY/YX** (`xyyx_flatfly`): x first or y first, a coin per packet at its first router.
//! - **Adaptive XY/YX** (`adaptive_xyyx_flatfly`): at the first router the order whose
//!   next output has fewer credits used, the coin on a tie.
//! - **UGAL XY/YX** (`ugal_xyyx_flatfly_onchip`): UGAL with both legs in the order of a
//!   coin drawn at the first router, the VCs in quarters (order, then phase).
//!
//! The engine makes the choices that read credits as the head is routed at its source
//! router ([`Flatfly::choice`], [`Flatfly::decide`]); the routing step itself takes them
//! from the packet's draw, so that the dependency check and route listings walk every
//! route. A packet's draw ([`super::Header::draw`]) is made by its source from its own
//! seeded stream as it starts the packet, where BookSim2 draws at the first router from its
//! one generator: the same distribution, not the same draws. It holds, as
//! `(raw·orders + order)·choices + bit`, the intermediate router `raw` (UGAL: its digits
//! taken in the dimensions where source and destination differ), the order (1: y first)
//! and UGAL's walk's choice (1: through the intermediate router). A UGAL packet on its way
//! to its intermediate router needs no source: in a dimension where source and
//! destination agree every router on its way has the destination's digit, so its next hop
//! is in the first dimension (in its order) whose digit is neither the destination's nor
//! the draw's.

use super::xy_yx::XyYx;
use super::{At, Escape, Header, PortSet, RouteError, Want};
use crate::fabric::clos::digit;
use crate::fabric::cmesh::router_of;
use crate::fabric::{Fabric, Shape};

/// Which of BookSim2's flatfly routing functions ([`self`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `valiant_flatfly`.
    Valiant,
    /// `ugal_flatfly_onchip` (`ugal`).
    Ugal,
    /// `xyyx_flatfly`.
    XyYx,
    /// `adaptive_xyyx_flatfly`.
    AdaptiveXyYx,
    /// `ugal_xyyx_flatfly_onchip`.
    UgalXyYx,
}

impl Kind {
    /// Through an intermediate router (drawn by the source).
    pub fn via(self) -> bool {
        matches!(self, Kind::Valiant | Kind::Ugal | Kind::UgalXyYx)
    }

    /// Minimal or through the intermediate router, by the credits at the source router.
    fn ugal(self) -> bool {
        matches!(self, Kind::Ugal | Kind::UgalXyYx)
    }

    /// Orders: 2 where x first and y first split the VCs, else 1 (x first).
    fn orders(self) -> u32 {
        if matches!(self, Kind::XyYx | Kind::AdaptiveXyYx | Kind::UgalXyYx) {
            2
        } else {
            1
        }
    }

    /// Phases: 2 where an intermediate router splits the VCs, else 1.
    fn phases(self) -> u32 {
        if self.via() { 2 } else { 1 }
    }

    /// The VC classes a channel's VCs are split into (its VCs must be a multiple).
    pub fn classes(self) -> u8 {
        (self.orders() * self.phases()) as u8
    }

    /// Chooses at the source router by the credits used on two outputs ([`Flatfly::choice`]).
    pub fn chooses(self) -> bool {
        matches!(self, Kind::Ugal | Kind::UgalXyYx | Kind::AdaptiveXyYx)
    }

    /// What its classes are, for messages.
    pub fn classes_named(self) -> &'static str {
        match (self.orders(), self.phases()) {
            (2, 2) => {
                "x first and y first (the VCs in halves), each in two phases, towards the intermediate router and from it (the halves in halves)"
            }
            (1, _) => "two phases, towards the intermediate router and from it (the VCs in halves)",
            _ => "x first and y first (the VCs in halves)",
        }
    }

    /// reef's name for it (`routing.algorithm`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Valiant => "flatfly-valiant",
            Kind::Ugal => "flatfly-ugal",
            Kind::XyYx => "flatfly-xy-yx",
            Kind::AdaptiveXyYx => "flatfly-adaptive-xy-yx",
            Kind::UgalXyYx => "flatfly-ugal-xy-yx",
        }
    }
}

/// One of BookSim2's flatfly routings that draw or choose ([`self`]).
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
    pub kind: Kind,
}

/// The two outputs a source router chooses between, and (UGAL) the hops of each route:
/// `a` minimal (or x first), `b` through the intermediate router (or y first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub a_port: u16,
    pub b_port: u16,
    pub a_hops: u32,
    pub b_hops: u32,
}

/// A packet's draw, taken apart ([`self`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Draw {
    raw: u32,
    y_first: bool,
    via: bool,
}

impl Flatfly {
    /// UGAL's `threshold`, biasing the choice towards the minimal route [flits].
    pub const THRESHOLD: u64 = 2;

    /// The routing `kind` on a flatfly fabric (`None` for other shapes). Its VC classes
    /// need a multiple of [`Kind::classes`] VCs a channel between routers: the config
    /// checks it.
    pub fn new(fab: &Fabric, kind: Kind) -> Option<Flatfly> {
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
            kind,
        })
    }

    /// Intermediate routers a draw holds (1 where there is none).
    fn raws(&self) -> u32 {
        if self.kind.via() { self.routers } else { 1 }
    }

    /// Values of UGAL's walk's choice in a draw (1 where there is none).
    fn bits(&self) -> u32 {
        if self.kind.ugal() { 2 } else { 1 }
    }

    /// The values of a packet's draw ([`self`]).
    pub fn draws(&self) -> u32 {
        self.raws() * self.kind.orders() * self.bits()
    }

    fn decode(&self, draw: u32) -> Draw {
        let rest = draw / self.bits();
        Draw {
            raw: rest / self.kind.orders(),
            y_first: rest % self.kind.orders() == 1,
            via: draw % self.bits() == 1,
        }
    }

    fn encode(&self, d: Draw) -> u32 {
        (d.raw * self.kind.orders() + u32::from(d.y_first)) * self.bits() + u32::from(d.via)
    }

    /// UGAL's rule ([`self`]): the minimal route, with `q_min` credits used on its output,
    /// against the other with `q_other`.
    pub fn prefers_min(c: Choice, q_min: u32, q_other: u32) -> bool {
        u64::from(c.a_hops) * u64::from(q_min) <= u64::from(c.b_hops) * u64::from(q_other) + Self::THRESHOLD
    }

    /// The output of router `r` to the router whose digit `d` is `to` (`flatfly_outport`'s
    /// numbering: by dimension, the router's own digit skipped).
    fn port(&self, r: u32, d: u32, to: u32) -> u16 {
        let own = digit(r, self.k, d);
        (self.c + (self.k - 1) * d + to - u32::from(to > own)) as u16
    }

    /// The first dimension, lowest first or (`y_first`) highest first, for which `differs`
    /// holds.
    fn first_dim(&self, y_first: bool, differs: impl Fn(u32) -> bool) -> Option<u32> {
        if y_first {
            (0..self.n).rev().find(|&d| differs(d))
        } else {
            (0..self.n).find(|&d| differs(d))
        }
    }

    /// The output of router `r` towards router `t` in the first dimension (in the order)
    /// where they differ; `None` where they are the same.
    fn toward(&self, r: u32, t: u32, y_first: bool) -> Option<u16> {
        let k = self.k;
        let d = self.first_dim(y_first, |d| digit(r, k, d) != digit(t, k, d))?;
        Some(self.port(r, d, digit(t, k, d)))
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
    /// `raw`, destination router `t`): the first dimension whose digit is neither the
    /// destination's nor the draw's ([`self`]); `None` at the intermediate router.
    fn toward_quadrant(&self, r: u32, t: u32, raw: u32, y_first: bool) -> Option<u16> {
        let k = self.k;
        let d = self.first_dim(y_first, |d| {
            let own = digit(r, k, d);
            own != digit(t, k, d) && own != digit(raw, k, d)
        })?;
        Some(self.port(r, d, digit(raw, k, d)))
    }

    /// Port `port` in the VCs of the order (`y_first`) and phase (`second`).
    fn class(&self, port: u16, y_first: bool, second: bool) -> Want {
        let phases = self.kind.phases();
        let idx = u32::from(y_first) * phases + u32::from(second && phases == 2);
        let width = self.net_vcs / self.kind.classes();
        let lo = idx as u8 * width;
        Want {
            ports: PortSet::single(port),
            vc_lo: lo,
            vc_hi: lo + width - 1,
            escape: Escape::NONE,
        }
    }

    /// The order and phase of the VC a head came in on from a router (`None`: from a node).
    fn in_class(&self, at: At) -> Option<(bool, bool)> {
        (u32::from(at.in_port) >= self.c).then(|| {
            let idx = u32::from(at.in_vc / (self.net_vcs / self.kind.classes()));
            let phases = self.kind.phases();
            (idx / phases == 1, idx % phases == 1)
        })
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

    /// At a packet's source router, where its kind chooses by the credits (UGAL, adaptive
    /// XY/YX), the two outputs it chooses between towards `dst` with draw `draw`; `None`
    /// elsewhere (the route is the draw's).
    pub fn choice(&self, at: At, dst: u32, draw: u32) -> Option<Choice> {
        let r = at.switch;
        let (t, _) = self.dst(at, dst).ok()?;
        if u32::from(at.in_port) >= self.c || t == r {
            return None;
        }
        let d = self.decode(draw);
        match self.kind {
            Kind::Ugal | Kind::UgalXyYx => {
                let intm = self.quadrant(r, t, d.raw);
                (intm != r).then(|| Choice {
                    a_port: self.toward(r, t, d.y_first).expect("t is not r"),
                    b_port: self.toward(r, intm, d.y_first).expect("intm is not r"),
                    a_hops: self.hops(r, t),
                    b_hops: self.hops(r, intm) + self.hops(intm, t),
                })
            }
            Kind::AdaptiveXyYx => Some(Choice {
                a_port: self.toward(r, t, false).expect("t is not r"),
                b_port: self.toward(r, t, true).expect("t is not r"),
                a_hops: 0,
                b_hops: 0,
            }),
            Kind::Valiant | Kind::XyYx => None,
        }
    }

    /// The draw a packet routes on after its source router's choice `c`, with `q_a` and
    /// `q_b` credits used on its two outputs: UGAL through the intermediate router unless
    /// [`Self::prefers_min`]; adaptive XY/YX the less used order, the coin on a tie
    /// (`adaptive_xyyx_flatfly`, as [`XyYx::choose`]).
    pub fn decide(&self, draw: u32, c: Choice, q_a: u32, q_b: u32) -> u32 {
        let mut d = self.decode(draw);
        if self.kind.ugal() {
            d.via = !Self::prefers_min(c, q_a, q_b);
        } else {
            d.y_first = XyYx::choose(q_a, q_b, u32::from(d.y_first)) == 1;
        }
        self.encode(d)
    }

    /// The routing step for `h`, the source router's choices taken from its draw.
    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        if h.draw >= self.draws() {
            return Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            });
        }
        let r = at.switch;
        let (t, p) = self.dst(at, h.dst)?;
        if t == r {
            return Ok(self.eject(p));
        }
        let d = self.decode(h.draw);
        let (y_first, second) = self.in_class(at).unwrap_or((d.y_first, false));
        // The output towards the intermediate router, in the first phase.
        let first_leg = match self.kind {
            _ if second => None,
            // (None at the intermediate router.)
            Kind::Valiant => self.toward(r, d.raw, false),
            Kind::Ugal | Kind::UgalXyYx if self.in_class(at).is_some() || d.via => {
                self.toward_quadrant(r, t, d.raw, y_first)
            }
            _ => None,
        };
        Ok(match first_leg {
            Some(port) => self.class(port, y_first, false),
            None => self.class(self.toward(r, t, y_first).expect("t is not r"), y_first, true),
        })
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

    /// Node `p` of router `r` on the 4-ary 2-flatfly.
    fn host(r: u32, p: u32) -> u32 {
        node_at(r, p, 4, 2)
    }

    /// Router `a` with its first dimension (lowest, or highest with `y_first`) where it
    /// differs from `b` set to `b`'s: the next router on `flatfly_outport`'s (or
    /// `flatfly_outport_yx`'s) way, `k` routers a dimension, `n` dimensions.
    fn next(k: u32, n: u32, a: u32, b: u32, y_first: bool) -> u32 {
        let dims: Vec<u32> = if y_first {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        };
        let p = dims
            .into_iter()
            .map(|d| k.pow(d))
            .find(|p| (a / p) % k != (b / p) % k)
            .unwrap();
        a - (a / p) % k * p + (b / p) % k * p
    }

    /// The routers from `a` to `b`, both included, in the order.
    fn leg(a: u32, b: u32, y_first: bool) -> Vec<u32> {
        let mut out = vec![a];
        while *out.last().unwrap() != b {
            out.push(next(4, 2, *out.last().unwrap(), b, y_first));
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
        let p = walk(&s, host(0, 0), host(1, 3), 5);
        assert_eq!(p, vec![(0, 0, 3), (1, 0, 7)]);
        for src in 0..16 {
            for dst in 0..16 {
                for via in 0..16 {
                    // Phase 0 towards `via` in VCs 0-3, phase 1 from it in 4-7, out at
                    // the destination's router whenever it is reached.
                    let mut want: Vec<(u32, u8, u8)> = Vec::new();
                    let mut second = false;
                    for r in leg(src, via, false)
                        .into_iter()
                        .chain(leg(via, dst, false).into_iter().skip(1))
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

    /// UGAL (`orders` 1) or UGAL XY/YX (2) on the 4-ary 2-flatfly with 8 VCs: every source,
    /// destination and draw walks through the intermediate router of the draw's quadrant or
    /// minimally, in the draw's order, each hop in the VCs of its order and phase.
    fn ugal_walks(algo: &str, orders: u32) {
        let s = spec(algo, 4, 2, 8);
        let f = flatfly(&s);
        assert_eq!(f.draws(), 32 * orders);
        let width = 4 / orders as u8;
        for src in 0..16 {
            for dst in 0..16 {
                for raw in 0..16 {
                    let intm = f.quadrant(src, dst, raw);
                    for order in 0..orders {
                        let y = order == 1;
                        for bit in 0..2 {
                            let route: Vec<(u32, bool)> = if bit == 0 || intm == src {
                                leg(src, dst, y).into_iter().map(|r| (r, true)).collect()
                            } else {
                                let to = leg(src, intm, y);
                                let n = to.len();
                                to.into_iter()
                                    .enumerate()
                                    .map(|(i, r)| (r, i + 1 == n))
                                    .chain(leg(intm, dst, y).into_iter().skip(1).map(|r| (r, true)))
                                    .collect()
                            };
                            let want: Vec<(u32, u8, u8)> = route
                                .iter()
                                .map(|&(r, second)| {
                                    let lo = 8 / orders as u8 * order as u8 + if second { width } else { 0 };
                                    if r == dst {
                                        (r, 0, 7)
                                    } else {
                                        (r, lo, lo + width - 1)
                                    }
                                })
                                .collect();
                            let draw = (2 * raw + order) * 2 + bit;
                            let draw = if orders == 1 { 2 * raw + bit } else { draw };
                            assert_eq!(
                                walk(&s, host(src, 3), host(dst, 0), draw),
                                want,
                                "{src} {dst} {raw} {order} {bit}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ugal_draws_its_intermediate_router_in_the_minimal_quadrant() {
        let s = spec("flatfly-ugal", 4, 2, 8);
        let f = flatfly(&s);
        // Router 0 = (0, 0) to 5 = (1, 1): both digits drawn, 14 = (2, 3) taken whole.
        assert_eq!(f.quadrant(0, 5, 14), 14);
        // To 1 = (1, 0): dimension 1 is the source's, (2, 0).
        assert_eq!(f.quadrant(0, 1, 14), 2);
        // From node 0 (router 0, port 0) to router 5 through 14: the minimal output is
        // dimension 0 to digit 1 (port 4), the other dimension 0 to digit 2 (port 5); 2
        // hops against 2 + 2.
        let c = f.choice(at(0, 0, 0), host(5, 0), 28).unwrap();
        let want = Choice {
            a_port: 4,
            b_port: 5,
            a_hops: 2,
            b_hops: 4,
        };
        assert_eq!(c, want);
        // No choice from a router, nor with the intermediate router the source's.
        assert_eq!(f.choice(at(0, 4, 0), host(5, 0), 28), None);
        assert_eq!(f.choice(at(0, 0, 0), host(5, 0), 0), None);
        // The choice sets the draw's bit: through 14 unless 2·q_min ≤ 4·q_other + 2.
        assert_eq!(f.decide(28, c, 3, 1), 28);
        assert_eq!(f.decide(28, c, 4, 1), 29);
        assert_eq!(f.decide(29, c, 0, 0), 28);
        ugal_walks("flatfly-ugal", 1);
    }

    #[test]
    fn ugal_xy_yx_takes_both_legs_in_the_coins_order() {
        let s = spec("flatfly-ugal-xy-yx", 4, 2, 8);
        let f = flatfly(&s);
        // y first from router 0 to 5 through 14 = (2, 3): dimension 1 to digit 1 (port 4 +
        // 3 + 0) minimally, to digit 3 (port 9) the other way.
        let c = f.choice(at(0, 0, 0), host(5, 0), (2 * 14 + 1) * 2).unwrap();
        assert_eq!((c.a_port, c.b_port, c.a_hops, c.b_hops), (7, 9, 2, 4));
        ugal_walks("flatfly-ugal-xy-yx", 2);
    }

    #[test]
    fn xy_yx_by_a_coin_or_by_the_credits() {
        for algo in ["flatfly-xy-yx", "flatfly-adaptive-xy-yx"] {
            let s = spec(algo, 4, 2, 8);
            assert_eq!(flatfly(&s).draws(), 2);
            for src in 0..16 {
                for dst in 0..16 {
                    for order in 0..2 {
                        let want: Vec<(u32, u8, u8)> = leg(src, dst, order == 1)
                            .into_iter()
                            .map(|r| match (r == dst, order) {
                                (true, _) => (r, 0, 7),
                                (false, 0) => (r, 0, 3),
                                _ => (r, 4, 7),
                            })
                            .collect();
                        assert_eq!(walk(&s, host(src, 2), host(dst, 1), order), want, "{src} {dst}");
                    }
                }
            }
        }
        let s = spec("flatfly-adaptive-xy-yx", 4, 2, 8);
        let f = flatfly(&s);
        // From router 0 to 5: x first to router 1 (port 4), y first to router 4 (port 7);
        // the less used, the coin on a tie.
        let c = f.choice(at(0, 1, 0), host(5, 0), 0).unwrap();
        assert_eq!((c.a_port, c.b_port), (4, 7));
        assert_eq!(f.decide(0, c, 3, 2), 1);
        assert_eq!(f.decide(1, c, 2, 3), 0);
        assert_eq!(f.decide(1, c, 2, 2), 1);
        // One dimension to go: the same port both ways, the coin decides the VCs.
        assert_eq!(
            f.choice(at(0, 1, 0), host(1, 0), 0).map(|c| c.a_port == c.b_port),
            Some(true)
        );
        assert_eq!(
            flatfly(&spec("flatfly-xy-yx", 4, 2, 8)).choice(at(0, 1, 0), host(5, 0), 0),
            None
        );
    }

    #[test]
    fn ugal_rule_weighs_the_credits_by_the_hops() {
        let c = Choice {
            a_port: 4,
            b_port: 5,
            a_hops: 2,
            b_hops: 3,
        };
        // 2·q_min ≤ 3·q_other + 2.
        assert!(Flatfly::prefers_min(c, 1, 0) && !Flatfly::prefers_min(c, 2, 0));
        assert!(Flatfly::prefers_min(c, 7, 4) && !Flatfly::prefers_min(c, 8, 4));
        // The same output (an intermediate router on the minimal way): always minimal.
        let same = Choice {
            b_port: 4,
            b_hops: 2,
            ..c
        };
        assert!(Flatfly::prefers_min(same, 32, 32));
    }

    #[test]
    fn all_are_free_of_deadlock() {
        let kinds = [
            "flatfly-valiant",
            "flatfly-ugal",
            "flatfly-xy-yx",
            "flatfly-adaptive-xy-yx",
            "flatfly-ugal-xy-yx",
        ];
        for (k, n, vcs) in [(4, 2, 8), (3, 3, 4), (2, 4, 4)] {
            for algo in kinds {
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
    fn vcs_that_do_not_split_into_the_classes_are_refused() {
        for (algo, vcs) in [
            ("flatfly-valiant", 3),
            ("flatfly-ugal", 5),
            ("flatfly-xy-yx", 3),
            ("flatfly-adaptive-xy-yx", 1),
            ("flatfly-ugal-xy-yx", 6),
        ] {
            let text = format!(
                "[topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nhosts_per_switch = 4\nrouters_per_row = 4\n\
                 [channel]\nvcs = {vcs}\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"{algo}\"\n"
            );
            let e = load_str("t.toml", &text, std::path::Path::new("."), &[])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("t.toml:8: channel.vcs") && e.contains("multiple of"),
                "{e}"
            );
        }
    }
}

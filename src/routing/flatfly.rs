//! BookSim2's routing functions on its flattened butterfly ([`crate::fabric::flatfly`]) that draw
//! or choose: `valiant_flatfly`, `ugal_flatfly_onchip`, `ugal_pni_flatfly_onchip`, `xyyx_flatfly`,
//! `adaptive_xyyx_flatfly` and `ugal_xyyx_flatfly_onchip` (`src/networks/flatfly_onchip.cpp`,
//! commit 28f43299). Each leg of a route goes straight to the router that corrects one dimension in
//! which the two differ: the lowest first (`flatfly_outport`, "x first") or the highest first
//! (`flatfly_outport_yx`, "y first"). A channel's VCs are split into classes, and each class is a
//! contiguous range: by order (x first in the lower half, y first in the upper, BookSim2's `vcEnd
//! -= available_vcs` and `vcBegin += available_vcs`), then within it by phase (towards an
//! intermediate router in the lower half, towards the destination in the upper); out to a node on
//! any VC. Each class is dimension order and a packet only moves up from phase to phase, so no
//! cycle of channel dependencies forms ([`super::cdg`] checks it). The order and the phase are read
//! from the VC a packet comes in on, as BookSim2 carries them in `f->vc` and `f->ph`.
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
//! - **UGAL PNI** (`ugal_pni_flatfly_onchip`, "partially non-interfering"): UGAL's routes and
//!   phases, each phase's VCs split `k` ways by a digit of the destination, so that packets
//!   bound for different places further on do not queue in one VC. On an output in
//!   dimension `d` the digit is the destination router's in dimension `d + 1`, or, out of
//!   the last dimension, the destination's port at its router (`dest % c`); so each of the
//!   `k` parts is `num_vcs / 2 / k` VCs wide (one with the example's 8 VCs and `k = 4`).
//!   The digit is taken from the output's dimension whatever the next hop's is, and from
//!   the final destination on the way to the intermediate router too. The injection VCs
//!   are split alike, `num_vcs / k` VCs by the destination router's digit 0
//!   ([`Flatfly::injection_vcs`]); out to a node on any VC. BookSim2 asserts `k = c`
//!   (nodes a router), which a digit that also counts ports needs: the config checks it.
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
    /// `ugal_pni_flatfly_onchip` (`ugal_pni`).
    UgalPni,
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
        matches!(self, Kind::Valiant | Kind::Ugal | Kind::UgalPni | Kind::UgalXyYx)
    }

    /// Minimal or through the intermediate router, by the credits at the source router.
    fn ugal(self) -> bool {
        matches!(self, Kind::Ugal | Kind::UgalPni | Kind::UgalXyYx)
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

    /// The parts each class's VCs are split into by the destination's digit: `k` for
    /// `ugal_pni` on a `k`-ary flatfly, else 1.
    pub fn split(self, k: u32) -> u32 {
        if self == Kind::UgalPni { k } else { 1 }
    }

    /// The VC classes a channel's VCs are split into on a `k`-ary flatfly.
    pub fn classes(self, k: u32) -> u32 {
        self.orders() * self.phases() * self.split(k)
    }

    /// Whether `vcs` VCs a channel between routers split into the classes as BookSim2
    /// splits them, each class its own VCs: a multiple of the orders and phases (BookSim2
    /// halves, and `ugal_xyyx` halves again; else its classes share a VC); for `ugal_pni`
    /// each half `k` parts of `⌊num_vcs / 2 / k⌋` VCs, one or more (BookSim2 asserts it),
    /// the VCs past the last part unused.
    pub fn vcs_fit(self, k: u32, vcs: u32) -> bool {
        let halves = self.orders() * self.phases();
        vcs.is_multiple_of(halves) && vcs / halves >= self.split(k)
    }

    /// What [`Self::vcs_fit`] asks, for messages.
    pub fn vcs_needed(self, k: u32) -> String {
        let halves = self.orders() * self.phases();
        match self.split(k) {
            1 => format!("a multiple of {halves}"),
            s => format!("a multiple of {halves}, {} or more", halves * s),
        }
    }

    /// Chooses at the source router by the credits used on two outputs ([`Flatfly::choice`]).
    pub fn chooses(self) -> bool {
        matches!(
            self,
            Kind::Ugal | Kind::UgalPni | Kind::UgalXyYx | Kind::AdaptiveXyYx
        )
    }

    /// What its classes are, for messages.
    pub fn classes_named(self) -> &'static str {
        if self == Kind::UgalPni {
            return "two phases, towards the intermediate router and from it (the VCs in halves), each split k ways by a digit of the destination";
        }
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
            Kind::UgalPni => "flatfly-ugal-pni",
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

    /// Routers in a dimension.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Nodes a router (`c`).
    pub fn hosts_per_router(&self) -> u32 {
        self.c
    }

    /// VCs of a node's channels.
    pub fn host_vcs(&self) -> u8 {
        self.host_vcs
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

    /// Port `port` in the VCs of the order (`y_first`) and phase (`second`), and for
    /// `ugal_pni` of the digit of the destination (router `t`, port `p` at it) the port
    /// leads to ([`Self::pni_digit`]).
    fn class(&self, port: u16, y_first: bool, second: bool, (t, p): (u32, u16)) -> Want {
        let (ow, pw, dw) = self.widths();
        let digit = if dw < pw { self.pni_digit(port, t, p) } else { 0 };
        let phase = u32::from(second && self.kind.phases() == 2);
        let lo = (u32::from(y_first) * ow + phase * pw + digit * dw) as u8;
        let width = dw as u8;
        Want {
            ports: PortSet::single(port),
            vc_lo: lo,
            vc_hi: lo + width - 1,
            escape: Escape::NONE,
        }
    }

    /// The VCs of an order, of a phase in it and (`ugal_pni`) of a digit in that, on a
    /// channel between routers: BookSim2's halves (`available_vcs`), then
    /// `vcs_per_dest = ⌊phase / k⌋`. A kind with one order has one width for the order
    /// and the phase's second half starts at half of it; with one phase, too.
    fn widths(&self) -> (u32, u32, u32) {
        let ow = u32::from(self.net_vcs) / self.kind.orders();
        let pw = ow / self.kind.phases();
        (ow, pw, pw / self.kind.split(self.k))
    }

    /// `ugal_pni`'s digit of the destination (router `t`, port `p` at it) for an output
    /// `port` to a router: in dimension `d`, `t`'s digit in dimension `d + 1`, or `p` out
    /// of the last dimension (`ugal_pni_flatfly_onchip`'s `next_coord`).
    fn pni_digit(&self, port: u16, t: u32, p: u16) -> u32 {
        let d = (u32::from(port) - self.c) / (self.k - 1);
        if d + 1 == self.n {
            u32::from(p)
        } else {
            digit(t, self.k, d + 1)
        }
    }

    /// The injection VCs (first, last) a packet to node `dst` may start on, where the
    /// routing splits them: `ugal_pni`'s `num_vcs / k` VCs of the destination router's
    /// digit 0 (BookSim2's routing function asked with `inject`). `None`: any.
    pub fn injection_vcs(&self, dst: u32) -> Option<(u8, u8)> {
        if self.kind != Kind::UgalPni || dst >= self.routers * self.c {
            return None;
        }
        let (t, _) = router_of(dst, self.x, self.xr);
        let width = (u32::from(self.host_vcs) / self.k) as u8;
        let lo = digit(t, self.k, 0) as u8 * width;
        // (The config asks for k injection VCs or more: `width` is 1 or more.)
        Some((lo, (lo + width).saturating_sub(1)))
    }

    /// The order and phase of the VC a head came in on from a router (`None`: from a node).
    fn in_class(&self, at: At) -> Option<(bool, bool)> {
        (u32::from(at.in_port) >= self.c).then(|| {
            let (ow, pw, _) = self.widths();
            let v = u32::from(at.in_vc);
            (v / ow == 1, self.kind.phases() == 2 && (v % ow) / pw == 1)
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
            Kind::Ugal | Kind::UgalPni | Kind::UgalXyYx => {
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
        let to = (t, p);
        let d = self.decode(h.draw);
        let (y_first, second) = self.in_class(at).unwrap_or((d.y_first, false));
        // The output towards the intermediate router, in the first phase.
        let first_leg = match self.kind {
            _ if second => None,
            // (None at the intermediate router.)
            Kind::Valiant => self.toward(r, d.raw, false),
            Kind::Ugal | Kind::UgalPni | Kind::UgalXyYx if self.in_class(at).is_some() || d.via => {
                self.toward_quadrant(r, t, d.raw, y_first)
            }
            _ => None,
        };
        Ok(match first_leg {
            Some(port) => self.class(port, y_first, false, to),
            None => self.class(self.toward(r, t, y_first).expect("t is not r"), y_first, true, to),
        })
    }
}

#[cfg(test)]
mod tests;

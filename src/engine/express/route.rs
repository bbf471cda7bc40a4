//! The express engine's routing step, compiled for the routing a run uses: dimension order
//! computed from the coordinates (no table read on a hop), or any other deterministic
//! routing of the network's own, called through `Routing::route` (its tables, one output
//! per destination range, or a fat tree's computed routes). Which runs may route here is
//! decided with the other features (`engine::features`): a routing free of deadlock by
//! its construction, since this engine has no deadlock watchdog; one port for every
//! destination, or (`Adaptive`: adaptive tables) a set of them that the switch selects
//! among (`switch::select`).

use super::*;
use crate::routing::{At, Header};

/// A routing step the express engine is compiled for: the one output of a head.
pub(crate) trait XRoute: Sized {
    /// A head may have several admissible ports ([`XRoute::ports`]); the switches then
    /// select among them, and act switch by switch (`Express::eval_switch`).
    const MULTI: bool = false;

    /// The routing of `sim`, as this step reads it (`None`: not this kind).
    fn of(sim: &Sim) -> Option<Self>;

    /// The output of the head at switch `s`, come in on port `in_port`, VC `vc` of a
    /// channel of routing label `class`, to host `dst`: its port and admissible VCs
    /// `lo..=hi` (`None`: the switch has no route to `dst`, the only error of these
    /// routings).
    fn port(&self, sim: &Sim, s: u32, in_port: u8, vc: u8, class: u8, dst: u32) -> Option<(u8, u8, u8)>;

    /// Asks for what [`XRoute::port`] at switch `s` to host `dst` will read to be brought
    /// into the cache (a hint; `prefetch`).
    #[inline(always)]
    fn prefetch(&self, _s: u32, _dst: u32) {}

    /// With [`XRoute::MULTI`], in place of [`XRoute::port`]: the admissible ports (bits)
    /// and VCs `lo..=hi` on each.
    #[inline(always)]
    fn ports(&self, sim: &Sim, s: u32, in_port: u8, vc: u8, class: u8, dst: u32) -> Option<(u64, u8, u8)> {
        self.port(sim, s, in_port, vc, class, dst)
            .map(|(p, lo, hi)| (1 << p, lo, hi))
    }
}

impl XRoute for Dor {
    fn of(sim: &Sim) -> Option<Dor> {
        match sim.routing {
            Routing::Dor(d) => Some(d.clone()),
            _ => None,
        }
    }

    /// (Never `None`: a cube routes every host, and hosts are all a packet is sent to.)
    #[inline(always)]
    fn port(&self, _: &Sim, s: u32, in_port: u8, vc: u8, _: u8, dst: u32) -> Option<(u8, u8, u8)> {
        let (port, lo, hi) = self
            .route_port(s, in_port as u16, vc, dst)
            .expect("a cube routes every host");
        Some((port as u8, lo, hi))
    }

    #[inline(always)]
    fn prefetch(&self, s: u32, dst: u32) {
        Dor::prefetch(self, s, dst);
    }
}

/// The network's own deterministic routing other than dimension order: its tables
/// (`Routing::Table`, each entry one port) or a fat tree's routes (`Routing::FatTree`).
pub(crate) struct Routed;

impl XRoute for Routed {
    fn of(sim: &Sim) -> Option<Routed> {
        matches!(sim.routing, Routing::Table(_) | Routing::FatTree(_)).then_some(Routed)
    }

    #[inline(always)]
    fn port(&self, sim: &Sim, s: u32, in_port: u8, vc: u8, class: u8, dst: u32) -> Option<(u8, u8, u8)> {
        // (One port: a set of more goes to `Adaptive`.)
        let want = own_route(sim, s, in_port, vc, class, dst)?;
        let port = want.ports.first()?;
        // A range past the channel's VCs stops at its last (as the general engine reads it;
        // channels here have at most 32).
        Some((port as u8, want.vc_lo, want.vc_hi.min(63)))
    }
}

/// Tables of several ports a destination (a fat tree's, a Clos's or up*/down*'s with
/// `routing.adaptive`), free of deadlock by construction: the head's switch selects among
/// them (`Express::select`).
pub(crate) struct Adaptive;

impl XRoute for Adaptive {
    const MULTI: bool = true;

    fn of(sim: &Sim) -> Option<Adaptive> {
        matches!(sim.routing, Routing::Table(_)).then_some(Adaptive)
    }

    /// (Not called: [`XRoute::ports`] routes for it.)
    fn port(&self, sim: &Sim, s: u32, in_port: u8, vc: u8, class: u8, dst: u32) -> Option<(u8, u8, u8)> {
        let (set, lo, hi) = self.ports(sim, s, in_port, vc, class, dst)?;
        Some((set.trailing_zeros() as u8, lo, hi))
    }

    #[inline(always)]
    fn ports(&self, sim: &Sim, s: u32, in_port: u8, vc: u8, class: u8, dst: u32) -> Option<(u64, u8, u8)> {
        let want = own_route(sim, s, in_port, vc, class, dst)?;
        // (Switches here have at most 64 ports: `Feature::WideSwitch`.)
        let set = want.ports.0 as u64;
        (set != 0).then_some((set, want.vc_lo, want.vc_hi.min(63)))
    }
}

/// The network's own routing step (`Routing::route`) for a head at switch `s`, come in on
/// port `in_port`, VC `vc` of a channel of label `class`, to host `dst` (`None`: no route,
/// the only error of the routings that come here).
#[inline(always)]
fn own_route(sim: &Sim, s: u32, in_port: u8, vc: u8, class: u8, dst: u32) -> Option<crate::routing::Want> {
    let at = At {
        switch: s,
        in_port: in_port as u16,
        in_vc: vc,
        in_class: class,
    };
    sim.routing.route(sim.fab, at, Header::dst(dst)).ok()
}

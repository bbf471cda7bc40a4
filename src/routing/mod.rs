//! How a packet finds its way: a routing step returns the admissible outputs of a switch
//! (a set of ports and a range of virtual channels, [`Want`]); the switch chooses among them.
//!
//! Route computation is separate from forwarding: tables and source routes are computed
//! here when the network is built; the engine only executes them. Implemented: dimension
//! order on meshes and tori (tori deadlock-free with dateline VCs, Dally & Seitz 1987),
//! per-switch tables of destination ranges (the base of interval labelling), source routes
//! carried in the packet, up*/down* for irregular topologies (Autonet, Schroeder et al.
//! 1991), and two randomized routings on meshes and tori, each packet carrying what its
//! source drew ([`Header::draw`]): Valiant's through a random intermediate switch
//! (Valiant & Brebner 1981) and XY/YX; on BookSim2's dragonfly its minimal routing and
//! UGAL ([`dragonfly`], Kim et al. 2008), which chooses at the source router by the
//! credits used on two outputs, and on its flattened butterfly Valiant's routing, UGAL and
//! XY/YX ([`flatfly`]); and minimal adaptive routing with an escape channel on meshes
//! ([`min_adapt`], Duato 1993). [`cdg`] checks any of them for cyclic channel
//! dependencies.

pub mod acyclic;
pub mod cdg;
pub mod dor;
pub mod dragonfly;
pub mod flatfly;
pub mod grid;
pub mod interval;
pub mod min_adapt;
pub mod mosaic;
pub mod placed;
pub mod source;
pub mod table;
pub mod tree;
pub mod updown;
pub mod valiant;
pub mod xy_yx;

use crate::fabric::{ChannelId, Fabric, MAX_PORTS};

/// A set of ports of one switch, as a bit mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PortSet(pub u128);

impl PortSet {
    pub const EMPTY: PortSet = PortSet(0);

    #[inline]
    pub fn single(p: u16) -> PortSet {
        PortSet(1 << p)
    }

    /// Ports `lo..=hi`.
    pub fn range(lo: u16, hi: u16) -> PortSet {
        let mut s = PortSet::EMPTY;
        for p in lo..=hi {
            s.insert(p);
        }
        s
    }

    #[inline]
    pub fn insert(&mut self, p: u16) {
        self.0 |= 1 << p;
    }

    #[inline]
    pub fn contains(&self, p: u16) -> bool {
        (p as usize) < MAX_PORTS && self.0 & (1 << p) != 0
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// The ports in increasing order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        let mut w = self.0;
        std::iter::from_fn(move || {
            (w != 0).then(|| {
                let b = w.trailing_zeros();
                w &= w - 1;
                b as u16
            })
        })
    }

    /// The lowest port, if any.
    #[inline]
    pub fn first(&self) -> Option<u16> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as u16)
    }
}

/// The admissible outputs of one routing step: any port of `ports`, on any virtual channel
/// `vc_lo..=vc_hi` of that port's channel; and, for routings with an escape channel
/// (Duato 1993: [`min_adapt`]), one more output at a lower priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Want {
    pub ports: PortSet,
    pub vc_lo: u8,
    pub vc_hi: u8,
    pub escape: Escape,
}

/// An escape output: a port and VCs `lo..=hi` there that a head may take when none of its
/// other outputs is free, at a lower priority than they (BookSim2's `OutputSet` priority 0
/// against 1). A packet waiting for several outputs depends for deadlock freedom on this
/// one alone ([`cdg`]), as long as it is at the front of its buffer whenever it waits:
/// `others_empty`, a VC of the other outputs is taken only when its buffer downstream is
/// empty (Duato's condition for wormhole switching, that a buffer never hold flits of two
/// packets where one may wait behind the other).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Escape {
    /// The port (`u16::MAX`: none).
    pub port: u16,
    pub lo: u8,
    pub hi: u8,
    pub others_empty: bool,
}

impl Escape {
    pub const NONE: Escape = Escape {
        port: u16::MAX,
        lo: 0,
        hi: 0,
        others_empty: false,
    };

    /// Whether there is one.
    #[inline(always)]
    pub fn is_some(&self) -> bool {
        self.port != u16::MAX
    }
}

impl Want {
    /// Every port it may ask for: `ports` and the escape's.
    #[inline]
    pub fn all_ports(&self) -> PortSet {
        let mut s = self.ports;
        if self.escape.is_some() {
            s.insert(self.escape.port);
        }
        s
    }

    /// The VC ranges it may take at port `p`, at the higher priority and at the escape's
    /// (`None` where it may take none there), each with whether it may take one only while
    /// the VC's buffer downstream is empty ([`Escape::others_empty`]).
    #[inline]
    pub fn ranges_at(&self, p: u16) -> [Option<(u8, u8, bool)>; 2] {
        [
            self.ports
                .contains(p)
                .then_some((self.vc_lo, self.vc_hi, self.escape.others_empty)),
            (self.escape.port == p).then_some((self.escape.lo, self.escape.hi, false)),
        ]
    }
}

impl Want {
    /// A table's VC range `KEEP_VC..=KEEP_VC`: the VC the packet came in on
    /// ([`table::Table::route`] puts it in), where the VC carries what the destination
    /// does not (BookSim2's dragonfly: whether the packet has crossed a global channel).
    pub const KEEP_VC: u8 = u8::MAX;

    /// One port, all VCs `0..vcs`.
    pub fn port(p: u16, vcs: u8) -> Want {
        Want {
            ports: PortSet::single(p),
            vc_lo: 0,
            vc_hi: vcs.saturating_sub(1),
            escape: Escape::NONE,
        }
    }

    /// The one output `out` (a port and VCs `lo..=hi`) a routing step found at `at` for
    /// `h`, or no route (`None`).
    #[inline(always)]
    pub fn one(at: At, h: Header, out: Option<(u16, u8, u8)>) -> Result<Want, RouteError> {
        match out {
            Some((port, vc_lo, vc_hi)) => Ok(Want {
                ports: PortSet::single(port),
                vc_lo,
                vc_hi,
                escape: Escape::NONE,
            }),
            None => Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            }),
        }
    }

    /// Port `port` of switch `switch`, all the VCs of its channel; an error if the switch has
    /// no channel there (routes carried in the packet name their ports).
    pub fn out_port(fab: &Fabric, switch: u32, port: u16) -> Result<Want, RouteError> {
        let c = fab.out_chan[switch as usize]
            .get(port as usize)
            .copied()
            .flatten()
            .ok_or(RouteError::BadPort { switch, port })?;
        Ok(Want::port(port, fab.channels[c.idx()].params.vcs))
    }
}

/// What a routing step knows about the packet: its destination host, the header symbols
/// it still carries (the rest of a source route, IEEE 1355 header bytes, Mosaic offsets)
/// and the number its source drew for a randomized routing ([`Routing::draws`]: Valiant's
/// intermediate switch, XY or YX). Routing by destination ignores the symbols.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    /// Destination host.
    pub dst: u32,
    /// Header symbols from the current one on.
    pub sym: &'a [u16],
    /// The packet's draw, in `0..draws` (0 where the routing draws nothing).
    pub draw: u32,
}

impl Header<'_> {
    /// A header with no symbols and no draw.
    pub fn dst(dst: u32) -> Header<'static> {
        Header {
            dst,
            sym: &[],
            draw: 0,
        }
    }
}

/// What happens to the packet's header as it leaves a switch on the output it was granted:
/// `advance` symbols are used up, `strip` header flits are removed from the packet (they
/// are not sent on), and `set` replaces the current symbol (after `advance`), as a Mosaic
/// router decrements an offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderOp {
    pub advance: u8,
    pub strip: u8,
    pub set: Option<u16>,
}

/// Where a routing step is taken: at which switch, from which input port and VC.
#[derive(Clone, Copy, Debug)]
pub struct At {
    pub switch: u32,
    pub in_port: u16,
    pub in_vc: u8,
    /// The routing label of the input channel ([`Routing::channel_class`]).
    pub in_class: u8,
}

/// Why a routing step found no output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("switch s{switch} has no route to host {dst}")]
    NoRoute { switch: u32, dst: u32 },
    #[error("the source route of a packet to host {dst} ended at switch s{switch}")]
    RouteEnded { switch: u32, dst: u32 },
    #[error("the source route names port {port} of switch s{switch}, which leads nowhere")]
    BadPort { switch: u32, port: u16 },
    #[error("switch s{switch} has no route for header value {key}")]
    NoHeaderRoute { switch: u32, key: u16 },
}

/// A routing algorithm, ready to run on one fabric.
#[derive(Clone, Debug)]
pub enum Routing {
    Dor(dor::Dor),
    Table(table::Table),
    /// A k-ary n-tree's deterministic routes, computed (the tables' routes without the
    /// tables).
    FatTree(tree::FatTreeRoute),
    Source(source::SourceRoutes),
    /// Interval labelling on header values (IEEE 1355 / STC104).
    Header(table::HeaderTable),
    /// Mosaic ΔX/ΔY offset bytes (ATOMIC).
    Mosaic(mosaic::Mosaic),
    /// Valiant's routing through a random intermediate switch (meshes and tori).
    Valiant(valiant::Valiant),
    /// x then y or y then x, drawn per packet, or chosen at the first switch by the
    /// credits used on the two outputs (meshes).
    XyYx(xy_yx::XyYx),
    /// BookSim2's UGAL on its dragonfly: minimal or through a random intermediate router,
    /// chosen at the source router by the credits used on the two outputs.
    Ugal(dragonfly::Ugal),
    /// BookSim2's Valiant routing, UGAL and XY/YX on its flattened butterfly.
    Flatfly(flatfly::Flatfly),
    /// Minimal adaptive with a dimension-order escape channel (meshes).
    MinAdapt(min_adapt::MinAdapt),
}

impl Routing {
    /// The admissible outputs for a head at `at` with header `h`. A buffer stage (an output
    /// FIFO, [`crate::fabric::NodeKind::Stage`]) passes every packet on on the same VC.
    #[inline(always)]
    pub fn route(&self, fab: &Fabric, at: At, h: Header) -> Result<Want, RouteError> {
        if at.switch >= fab.stage_base {
            return Ok(Want {
                ports: PortSet::single(0),
                vc_lo: at.in_vc,
                vc_hi: at.in_vc,
                escape: Escape::NONE,
            });
        }
        match self {
            Routing::Dor(d) => d.route(at, h),
            Routing::Table(t) => t.route(at, h),
            Routing::FatTree(t) => t.route(at, h),
            Routing::Source(s) => s.route(fab, at, h),
            Routing::Header(t) => t.route(at, h),
            Routing::Mosaic(m) => m.route(fab, at, h),
            Routing::Valiant(v) => v.route(at, h),
            Routing::XyYx(x) => x.route(at, h),
            Routing::Ugal(u) => Ok(u.route(at, h)),
            Routing::Flatfly(f) => f.route(at, h),
            Routing::MinAdapt(m) => m.route(at, h),
        }
    }

    /// How many values a packet's draw takes ([`Header::draw`], drawn uniformly by its
    /// source as it starts the packet); 0 where routing draws nothing.
    pub fn draws(&self) -> u32 {
        match self {
            Routing::Valiant(v) => v.draws(),
            Routing::XyYx(_) => 2,
            Routing::Ugal(u) => u.draws(),
            Routing::Flatfly(f) => f.draws(),
            _ => 0,
        }
    }

    /// What the header undergoes when the packet leaves `at` on `port`, apart from the
    /// header deletion a link itself may do ([`crate::fabric::LinkParams::delete_header`]).
    #[inline]
    pub fn header_op(&self, fab: &Fabric, at: At, h: Header, port: u16) -> HeaderOp {
        let _ = port;
        if at.switch >= fab.stage_base {
            return HeaderOp::default();
        }
        match self {
            Routing::Source(s) => s.header_op(),
            Routing::Mosaic(m) => m.header_op(at, h),
            Routing::Header(t) => t.header_op(at, h),
            _ => HeaderOp::default(),
        }
    }

    /// Flits per header symbol (what a link's header deletion removes).
    pub fn header_width(&self) -> u8 {
        match self {
            Routing::Header(t) => t.width(),
            _ => 1,
        }
    }

    /// Whether its steps may name an escape output ([`Escape`]).
    pub fn has_escape(&self) -> bool {
        matches!(self, Routing::MinAdapt(_))
    }

    /// Whether the injection VCs a packet may start on depend on its destination
    /// ([`Self::injection_vcs`]).
    pub fn splits_injection(&self) -> bool {
        matches!(self, Routing::Flatfly(f) if f.kind == flatfly::Kind::UgalPni)
    }

    /// The injection VCs (first, last) a packet to node `dst` may start on; `None`: any.
    pub fn injection_vcs(&self, dst: u32) -> Option<(u8, u8)> {
        match self {
            Routing::Flatfly(f) => f.injection_vcs(dst),
            _ => None,
        }
    }

    /// Whether packets carry header symbols that routing reads.
    pub fn uses_header(&self) -> bool {
        matches!(self, Routing::Source(_) | Routing::Header(_) | Routing::Mosaic(_))
    }

    /// Whether packets from host `src` to host `dst` are routed at all (a routing built from
    /// a list of routes may leave pairs out; the dependency check skips them).
    pub fn has_route(&self, src: u32, dst: u32) -> bool {
        match self {
            Routing::Mosaic(m) => m.has(src, dst),
            _ => true,
        }
    }

    /// The header symbols a packet from `src` to `dst` starts with (the source route, or the
    /// destination's header bytes), written into `out` (cleared first).
    pub fn header_for(&self, fab: &Fabric, src: u32, dst: u32, out: &mut Vec<u16>) -> Result<(), RouteError> {
        out.clear();
        match self {
            Routing::Source(s) => s.fill(fab, src, dst, out),
            Routing::Header(t) => t.fill(src, dst, out),
            Routing::Mosaic(m) => m.fill(src, dst, out),
            _ => Ok(()),
        }
    }

    /// The longest header any packet starts with [symbols].
    pub fn max_header(&self) -> usize {
        match self {
            Routing::Source(s) => s.max_len(),
            Routing::Header(t) => t.max_header(),
            Routing::Mosaic(m) => m.max_len(),
            _ => 0,
        }
    }

    /// The routing label of each channel (up*/down*: 1 for a "down" channel), default 0.
    pub fn channel_class(&self, c: usize) -> u8 {
        match self {
            Routing::Table(t) => t.channel_class(c),
            _ => 0,
        }
    }

    /// The path a packet from host `src` to host `dst` takes when every switch gives it the
    /// first admissible output and VC (the only one, for deterministic routings): the
    /// channels and VCs it crosses, injection and ejection included, and whether some
    /// switch on the way had a choice of outputs. A randomized routing takes draw 0 (Valiant:
    /// through switch 0; XY first).
    pub fn path(&self, fab: &Fabric, src: u32, dst: u32) -> Result<(Vec<(ChannelId, u8)>, bool), RouteError> {
        let mut hdr = Vec::new();
        self.header_for(fab, src, dst, &mut hdr)?;
        let mut pos = 0usize;
        let mut c = fab.injection_channel(src);
        let mut vc = 0u8;
        let mut out = vec![(c, vc)];
        let mut choice = false;
        // A route longer than every channel-VC pair has looped.
        let limit = fab.channels.len() * 64 + 2;
        while fab.is_switch(fab.channels[c.idx()].dst) {
            let ch = &fab.channels[c.idx()];
            let at = At {
                switch: ch.dst.0,
                in_port: ch.dst_port,
                in_vc: vc,
                in_class: self.channel_class(c.idx()),
            };
            let h = Header {
                dst,
                sym: &hdr[pos.min(hdr.len())..],
                draw: 0,
            };
            let want = self.route(fab, at, h)?;
            let port = want.ports.first().ok_or(RouteError::NoRoute {
                switch: at.switch,
                dst,
            })?;
            choice |= want.ports.len() > 1;
            let op = self.header_op(fab, at, h, port);
            pos += op.advance as usize;
            if let (Some(x), true) = (op.set, pos < hdr.len()) {
                hdr[pos] = x;
            }
            c = fab.out_chan[at.switch as usize][port as usize].ok_or(RouteError::BadPort {
                switch: at.switch,
                port,
            })?;
            vc = want.vc_lo;
            out.push((c, vc));
            if out.len() > limit {
                return Err(RouteError::NoRoute {
                    switch: at.switch,
                    dst,
                });
            }
        }
        Ok((out, choice))
    }

    /// Whether packets carry a source route.
    pub fn is_source(&self) -> bool {
        matches!(self, Routing::Source(_))
    }

    /// Whether the source route travels in the packet, a flit per hop, each used up by the
    /// switch that reads it (ATOLL's routing string): the packet is that much longer.
    pub fn route_in_packet(&self) -> bool {
        matches!(self, Routing::Source(s) if s.in_packet)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Routing::Dor(_) => "dimension-order",
            Routing::Table(t) => t.name(),
            Routing::FatTree(_) => "fat-tree-deterministic",
            Routing::Source(_) => "source",
            Routing::Header(t) => t.name(),
            Routing::Mosaic(_) => "mosaic",
            Routing::Valiant(_) => "valiant",
            Routing::XyYx(x) if x.adaptive => "adaptive-xy-yx",
            Routing::XyYx(_) => "xy-yx",
            Routing::Ugal(_) => "dragonfly-ugal",
            Routing::Flatfly(f) => f.kind.name(),
            Routing::MinAdapt(m) if m.booksim => "booksim-min-adapt",
            Routing::MinAdapt(_) => "min-adapt",
        }
    }
}

/// Helpers for the routing modules' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A head at port `in_port`, VC `in_vc` of switch `switch`, on an unlabelled channel.
    pub(crate) fn at(switch: u32, in_port: u16, in_vc: u8) -> At {
        At {
            switch,
            in_port,
            in_vc,
            in_class: 0,
        }
    }

    /// Follows a packet from host `src` to host `dst` whose source drew `draw` (a
    /// randomized routing's choice, [`Header::draw`]), taking the lowest admissible VC at
    /// every switch: the switches it passes and the VC ranges it is given. Panics where a
    /// step offers more than one port, the walk loops or it ends at another host.
    pub(crate) fn walk(spec: &crate::engine::Spec, src: u32, dst: u32, draw: u32) -> Vec<(u32, u8, u8)> {
        let fab = &spec.fabric;
        let mut c = fab.injection_channel(src);
        let mut vc = 0;
        let mut out = Vec::new();
        while fab.is_switch(fab.channels[c.idx()].dst) {
            let ch = &fab.channels[c.idx()];
            let at = At {
                switch: ch.dst.0,
                in_port: ch.dst_port,
                in_vc: vc,
                in_class: 0,
            };
            let w = spec
                .routing
                .route(fab, at, Header { dst, sym: &[], draw })
                .unwrap();
            assert_eq!(w.ports.len(), 1);
            let p = w.ports.first().unwrap();
            out.push((at.switch, w.vc_lo, w.vc_hi));
            c = fab.out_chan[at.switch as usize][p as usize].unwrap();
            vc = w.vc_lo;
            assert!(out.len() < 100, "looped");
        }
        assert_eq!(fab.host_of(fab.channels[c.idx()].dst), Some(dst));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_sets() {
        let mut s = PortSet::range(3, 5);
        s.insert(100);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 4, 5, 100]);
        assert_eq!(s.len(), 4);
        assert_eq!(s.first(), Some(3));
        assert!(s.contains(100) && !s.contains(6) && !s.contains(300));
        assert!(PortSet::EMPTY.is_empty());
    }
}

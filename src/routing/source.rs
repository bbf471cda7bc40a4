//! Source routing: the packet carries its route, a list of output ports consumed one per
//! switch (ATOMIC/Myrinet style, ATOLL routing strings). Routes are either given explicitly
//! per (source, destination), or derived from a deterministic table (shortest up*/down* or
//! minimal paths) by walking it once when the packet is created, or taken from a placed
//! deadlock-free set ([`super::placed`], for networks without virtual channels).

use super::placed::Placed;
use super::table::Table;
use super::{At, Header, HeaderOp, RouteError, Want};
use crate::fabric::Fabric;

#[derive(Clone, Debug)]
pub struct SourceRoutes {
    /// Where the routes not given explicitly come from.
    base: Base,
    /// Explicit routes, sorted by (source, destination).
    explicit: Vec<((u32, u32), Vec<u16>)>,
    /// Longest route [ports].
    max_len: usize,
    /// The route travels as flits at the head of the packet, one per switch, each removed
    /// by the switch that reads it (an ATOLL routing string): a packet is as many flits
    /// longer as its route has ports.
    pub in_packet: bool,
}

/// The routes between hosts that no explicit route covers.
#[derive(Clone, Debug)]
enum Base {
    /// The first choice of a deterministic table at every switch.
    Table(Table),
    /// A placed set between every pair of switches, then the destination host's port.
    Placed(Box<Placed>),
}

/// Why an explicit route is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceRouteError {
    #[error("route {src}→{dst}: {msg}")]
    Bad { src: u32, dst: u32, msg: String },
}

impl SourceRoutes {
    /// Routes read from `table` (its first choice at every switch), overridden by `explicit`
    /// routes, each checked to lead from its source to its destination.
    pub fn new(
        fab: &Fabric,
        table: Table,
        explicit: Vec<((u32, u32), Vec<u16>)>,
    ) -> Result<SourceRoutes, SourceRouteError> {
        Self::build(fab, Base::Table(table), explicit)
    }

    /// Routes from a placed set ([`Placed`]), overridden by `explicit` routes.
    pub fn placed(
        fab: &Fabric,
        placed: Placed,
        explicit: Vec<((u32, u32), Vec<u16>)>,
    ) -> Result<SourceRoutes, SourceRouteError> {
        Self::build(fab, Base::Placed(Box::new(placed)), explicit)
    }

    /// The placed set the routes come from, if they do.
    pub fn placed_set(&self) -> Option<&Placed> {
        match &self.base {
            Base::Placed(p) => Some(p),
            Base::Table(_) => None,
        }
    }

    fn build(
        fab: &Fabric,
        base: Base,
        mut explicit: Vec<((u32, u32), Vec<u16>)>,
    ) -> Result<SourceRoutes, SourceRouteError> {
        // (Stable: of two routes for one pair, the first given is named first.)
        explicit.sort_by_key(|e| e.0);
        if let Some(w) = explicit.windows(2).find(|w| w[0].0 == w[1].0) {
            let (src, dst) = w[0].0;
            return Err(SourceRouteError::Bad {
                src,
                dst,
                msg: format!(
                    "is given twice ({:?} and {:?}): one route per pair, or reef would choose",
                    w[0].1, w[1].1
                ),
            });
        }
        let mut max_len = 0;
        for ((src, dst), ports) in &explicit {
            let bad = |msg: String| SourceRouteError::Bad {
                src: *src,
                dst: *dst,
                msg,
            };
            let n = fab.num_hosts() as u32;
            if *src >= n || *dst >= n {
                return Err(bad(format!("hosts are 0..{n}")));
            }
            if src == dst {
                return Err(bad(
                    "a host does not send to itself through the network: no route to give".into(),
                ));
            }
            let mut node = fab.host_switch(*src).0;
            for (i, &p) in ports.iter().enumerate() {
                if !fab.is_switch(node) {
                    return Err(bad(format!(
                        "reaches host {} after {i} ports",
                        fab.host_of(node).unwrap_or(0)
                    )));
                }
                let c = fab.out_chan[node.idx()]
                    .get(p as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| {
                        bad(format!(
                            "port {p} of {} leads nowhere",
                            fab.nodes[node.idx()].name
                        ))
                    })?;
                node = fab.channels[c.idx()].dst;
            }
            if fab.host_of(node) != Some(*dst) {
                return Err(bad(format!("ends at {}, not h{dst}", fab.nodes[node.idx()].name)));
            }
            max_len = max_len.max(ports.len());
        }
        let mut sr = SourceRoutes {
            base,
            explicit,
            max_len,
            in_packet: false,
        };
        // The longest base route bounds the per-packet route storage. (Routes from a host
        // to itself count too: traffic may include them, and with one host they are all.)
        match &sr.base {
            Base::Placed(p) => sr.max_len = sr.max_len.max(p.stats.longest as usize + 1),
            Base::Table(_) => {
                let mut buf = Vec::new();
                for s in 0..fab.num_hosts() as u32 {
                    for d in 0..fab.num_hosts() as u32 {
                        buf.clear();
                        if sr.walk_base(fab, s, d, &mut buf).is_ok() {
                            sr.max_len = sr.max_len.max(buf.len());
                        }
                    }
                }
            }
        }
        Ok(sr)
    }

    /// Longest route any packet carries [ports].
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    fn walk_base(&self, fab: &Fabric, src: u32, dst: u32, out: &mut Vec<u16>) -> Result<(), RouteError> {
        let table = match &self.base {
            Base::Table(t) => t,
            Base::Placed(p) => {
                let (s, t) = (fab.host_switch(src).0.0, fab.host_switch(dst));
                out.extend(p.route(s, t.0.0).iter().map(|&x| x as u16));
                out.push(t.1);
                return Ok(());
            }
        };
        let (mut s, mut in_port) = fab.host_switch(src);
        let mut in_class = 0;
        loop {
            let at = At {
                switch: s.0,
                in_port,
                in_vc: 0,
                in_class,
            };
            let w = table.route(at, Header::dst(dst))?;
            let p = w.ports.first().ok_or(RouteError::NoRoute { switch: s.0, dst })?;
            out.push(p);
            let mut c =
                fab.out_chan[s.idx()][p as usize].ok_or(RouteError::BadPort { switch: s.0, port: p })?;
            let mut ch = &fab.channels[c.idx()];
            // An output buffer stage passes the packet on without reading the route.
            while fab.is_switch(ch.dst) && ch.dst.0 >= fab.stage_base {
                c = fab.out_chan[ch.dst.idx()][0].ok_or(RouteError::BadPort {
                    switch: ch.dst.0,
                    port: 0,
                })?;
                ch = &fab.channels[c.idx()];
            }
            if !fab.is_switch(ch.dst) {
                return Ok(());
            }
            if out.len() > fab.switches as usize + 1 {
                return Err(RouteError::NoRoute { switch: s.0, dst });
            }
            in_class = table.channel_class(c.idx());
            s = ch.dst;
            in_port = ch.dst_port;
        }
    }

    /// Writes the route from host `src` to host `dst` into `out` (cleared first).
    pub fn fill(&self, fab: &Fabric, src: u32, dst: u32, out: &mut Vec<u16>) -> Result<(), RouteError> {
        out.clear();
        if let Ok(i) = self.explicit.binary_search_by_key(&(src, dst), |e| e.0) {
            out.extend_from_slice(&self.explicit[i].1);
            return Ok(());
        }
        self.walk_base(fab, src, dst, out)
    }

    #[inline]
    pub fn route(&self, fab: &Fabric, at: At, h: Header) -> Result<Want, RouteError> {
        let Some(&port) = h.sym.first() else {
            return Err(RouteError::RouteEnded {
                switch: at.switch,
                dst: h.dst,
            });
        };
        Want::out_port(fab, at.switch, port)
    }

    /// Each switch uses up one port of the route; with `in_packet`, the route is in the
    /// packet (one flit per port, as ATOLL routing strings) and the used flit is removed.
    pub fn header_op(&self) -> HeaderOp {
        HeaderOp {
            advance: 1,
            strip: u8::from(self.in_packet),
            set: None,
        }
    }
}

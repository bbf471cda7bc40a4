//! Source routing: the packet carries its route, a list of output ports consumed one per
//! switch (ATOMIC/Myrinet style, ATOLL routing strings). Routes are either given explicitly
//! per (source, destination) or derived from a deterministic table (shortest up*/down* or
//! minimal paths) by walking it once when the packet is created.

use super::table::Table;
use super::{At, Header, HeaderOp, RouteError, Want};
use crate::fabric::Fabric;

#[derive(Clone, Debug)]
pub struct SourceRoutes {
    /// Deterministic table the default routes are read from.
    table: Table,
    /// Explicit routes, sorted by (source, destination).
    explicit: Vec<((u32, u32), Vec<u16>)>,
    /// Longest route [ports].
    max_len: usize,
    /// The route travels as flits at the head of the packet, one removed per switch.
    pub strip: bool,
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
        mut explicit: Vec<((u32, u32), Vec<u16>)>,
    ) -> Result<SourceRoutes, SourceRouteError> {
        explicit.sort_by_key(|e| e.0);
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
            table,
            explicit,
            max_len,
            strip: false,
        };
        // The longest table route bounds the per-packet route storage. (Routes from a host
        // to itself count too: traffic may include them, and with one host they are all.)
        let mut buf = Vec::new();
        for s in 0..fab.num_hosts() as u32 {
            for d in 0..fab.num_hosts() as u32 {
                buf.clear();
                if sr.walk_table(fab, s, d, &mut buf).is_ok() {
                    sr.max_len = sr.max_len.max(buf.len());
                }
            }
        }
        Ok(sr)
    }

    /// Longest route any packet carries [ports].
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    fn walk_table(&self, fab: &Fabric, src: u32, dst: u32, out: &mut Vec<u16>) -> Result<(), RouteError> {
        let (mut s, mut in_port) = fab.host_switch(src);
        let mut in_class = 0;
        loop {
            let at = At {
                switch: s.0,
                in_port,
                in_vc: 0,
                in_class,
            };
            let w = self.table.route(at, Header::dst(dst))?;
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
            in_class = self.table.channel_class(c.idx());
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
        self.walk_table(fab, src, dst, out)
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

    /// Each switch uses up one port of the route; with `strip`, the route is in the packet
    /// (one flit per port, as ATOLL routing strings) and the used flit is removed.
    pub fn header_op(&self) -> HeaderOp {
        HeaderOp {
            advance: 1,
            strip: u8::from(self.strip),
            set: None,
        }
    }
}

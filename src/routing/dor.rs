//! Dimension-order routing on k-ary n-meshes and n-tori: correct dimension 0 first, then 1,
//! and so on (Dally & Seitz 1987). On a torus each dimension goes the shorter way round
//! (ties go the positive way); with `dateline` the VCs of each channel are split into two
//! classes, a packet starts each dimension in class 0 and moves to class 1 on the hop that
//! crosses the wrap-around link, which breaks the cyclic channel dependency of each ring.
//! Port numbering is that of [`crate::fabric::mesh`].

use super::{At, Header, PortSet, RouteError, Want};
use crate::fabric::mesh::coords;
use crate::fabric::{Fabric, Shape};

#[derive(Clone, Debug)]
pub struct Dor {
    k: Vec<u32>,
    wrap: bool,
    conc: u32,
    dateline: bool,
    /// Coordinates of every switch, `n` per switch.
    coords: Vec<u16>,
    net_vcs: u8,
    host_vcs: u8,
    /// For fabrics of up to [`TABLE_SWITCHES`] switches, the first hop from every switch
    /// to every switch (`switches · s + t`): the port (`EJECT`: none, `t` is `s`), and
    /// whether the hop crosses the wrap-around link ([`CROSSES`]). Looking it up is some 60
    /// instructions cheaper a routing step than working it out (the torus workload of
    /// `reef bench`); larger fabrics work it out, their table would not stay in cache.
    first: Vec<u8>,
    switches: u32,
}

/// Fabrics up to this many switches keep a table of first hops (256 KB at most).
const TABLE_SWITCHES: u32 = 512;
const EJECT: u8 = 0x7F;
const CROSSES: u8 = 0x80;

impl Dor {
    /// Dimension-order routing for a mesh or torus fabric (`None` for other shapes).
    /// `dateline` splits each network channel's VCs into two classes (tori only).
    pub fn new(fab: &Fabric, dateline: bool) -> Option<Dor> {
        let Shape::Cube { k, wrap, conc } = &fab.shape else {
            return None;
        };
        let n = k.len();
        let mut cs = Vec::with_capacity(fab.switches as usize * n);
        for s in 0..fab.switches {
            cs.extend(coords(k, s).into_iter().map(|x| x as u16));
        }
        let vcs_of = |c: Option<crate::fabric::ChannelId>| c.map(|c| fab.channels[c.idx()].params.vcs);
        let net_vcs = fab.out_chan[0]
            .iter()
            .take(2 * n)
            .find_map(|&c| vcs_of(c))
            .unwrap_or(1);
        let host_vcs = vcs_of(Some(fab.ejection_channel(0))).unwrap_or(1);
        let mut d = Dor {
            k: k.clone(),
            wrap: *wrap,
            conc: *conc,
            dateline: dateline && *wrap,
            coords: cs,
            net_vcs,
            host_vcs,
            first: Vec::new(),
            switches: fab.switches,
        };
        if fab.switches <= TABLE_SWITCHES && 2 * n < EJECT as usize {
            let first = (0..fab.switches)
                .flat_map(|s| (0..fab.switches).map(move |t| (s, t)))
                .map(|(s, t)| match d.first_hop(s, t) {
                    Some((port, crosses)) => port as u8 | if crosses { CROSSES } else { 0 },
                    None => EJECT,
                })
                .collect();
            d.first = first;
        }
        Some(d)
    }

    pub fn dateline(&self) -> bool {
        self.dateline
    }

    #[inline(always)]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        match self.route_port(at.switch, at.in_port, at.in_vc, h.dst) {
            Some((port, vc_lo, vc_hi)) => Ok(Want {
                ports: PortSet::single(port),
                vc_lo,
                vc_hi,
            }),
            None => Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            }),
        }
    }

    /// The one output of a head at switch `switch`, come in on port `in_port` and VC
    /// `in_vc`, to host `dst`: the port and its admissible VCs `lo..=hi` (`None`: `dst` is
    /// no host of the fabric). What [`Self::route`] returns, without the port set.
    #[inline(always)]
    pub fn route_port(&self, switch: u32, in_port: u16, in_vc: u8, dst: u32) -> Option<(u16, u8, u8)> {
        let n = self.k.len();
        let switches = self.switches;
        // (A division by a run-time value is slow: skip it for one host per switch.)
        let dst_sw = if self.conc == 1 { dst } else { dst / self.conc };
        if dst_sw >= switches || switch >= switches {
            return None;
        }
        let hop = if self.first.is_empty() {
            self.first_hop(switch, dst_sw)
        } else {
            match self.first[(switch * switches + dst_sw) as usize] {
                EJECT => None,
                e => Some(((e & !CROSSES) as u16, e & CROSSES != 0)),
            }
        };
        let Some((port, crosses)) = hop else {
            return Some((
                2 * n as u16 + (dst - dst_sw * self.conc) as u16,
                0,
                self.host_vcs.saturating_sub(1),
            ));
        };
        let vcs = self.net_vcs;
        if !self.dateline {
            return Some((port, 0, vcs.saturating_sub(1)));
        }
        let half = vcs / 2;
        let same_dim = in_port < 2 * n as u16 && in_port / 2 == port / 2;
        let class1 = crosses || (same_dim && in_vc >= half);
        Some(if class1 {
            (port, half, vcs - 1)
        } else {
            (port, 0, half - 1)
        })
    }

    /// The first hop from switch `s` to switch `t` (both of the fabric): the port, and
    /// whether it crosses the wrap-around link; `None` if `t` is `s`.
    #[inline(always)]
    fn first_hop(&self, s: u32, t: u32) -> Option<(u16, bool)> {
        let n = self.k.len();
        let (s, t) = (s as usize * n, t as usize * n);
        let (here, there) = (&self.coords[s..s + n], &self.coords[t..t + n]);
        for (d, ((&x, &y), &k)) in here.iter().zip(there).zip(&self.k).enumerate() {
            let (x, y) = (x as u32, y as u32);
            if x == y {
                continue;
            }
            let plus = if self.wrap {
                let delta = if y >= x { y - x } else { y + k - x };
                delta <= k - delta
            } else {
                y > x
            };
            let port = 2 * d as u16 + u16::from(!plus);
            let crosses = if plus { x == k - 1 } else { x == 0 };
            return Some((port, crosses));
        }
        None
    }
}

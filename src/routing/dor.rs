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
}

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
        Some(Dor {
            k: k.clone(),
            wrap: *wrap,
            conc: *conc,
            dateline: dateline && *wrap,
            coords: cs,
            net_vcs,
            host_vcs,
        })
    }

    pub fn dateline(&self) -> bool {
        self.dateline
    }

    #[inline(always)]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let n = self.k.len();
        // (A division by a run-time value is slow: skip it for one host per switch.)
        let dst_sw = if self.conc == 1 { h.dst } else { h.dst / self.conc };
        let (s, t) = (at.switch as usize * n, dst_sw as usize * n);
        if t + n > self.coords.len() {
            return Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            });
        }
        for d in 0..n {
            let (x, y) = (self.coords[s + d] as u32, self.coords[t + d] as u32);
            if x == y {
                continue;
            }
            let k = self.k[d];
            let plus = if self.wrap {
                let delta = if y >= x { y - x } else { y + k - x };
                delta <= k - delta
            } else {
                y > x
            };
            let port = 2 * d as u16 + u16::from(!plus);
            let vcs = self.net_vcs;
            if !self.dateline {
                return Ok(Want::port(port, vcs));
            }
            let half = vcs / 2;
            let same_dim = at.in_port < 2 * n as u16 && at.in_port / 2 == d as u16;
            let crosses = if plus { x == k - 1 } else { x == 0 };
            let class1 = crosses || (same_dim && at.in_vc >= half);
            return Ok(Want {
                ports: PortSet::single(port),
                vc_lo: if class1 { half } else { 0 },
                vc_hi: if class1 { vcs - 1 } else { half - 1 },
            });
        }
        Ok(Want::port(
            2 * n as u16 + (h.dst - dst_sw * self.conc) as u16,
            self.host_vcs,
        ))
    }
}

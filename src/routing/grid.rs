//! A k-ary n-mesh (or n-torus) as the routings on it read it (XY/YX, minimal adaptive):
//! each switch's coordinates, the VCs of its network and host channels, and its ports,
//! numbered as [`crate::fabric::mesh`] numbers them (BookSim2's): `2d` up and `2d + 1` down
//! in dimension `d`, the hosts after.

use super::{At, Escape, PortSet, RouteError, Want};
use crate::fabric::mesh::coords;
use crate::fabric::{Fabric, Shape};

#[derive(Clone, Debug)]
pub struct MeshGrid {
    /// Dimensions.
    pub n: usize,
    /// Switches along each dimension.
    pub k: Vec<u32>,
    /// Whether each dimension is a ring (a torus).
    pub wrap: bool,
    conc: u32,
    switches: u32,
    /// Coordinates of every switch, `n` per switch.
    coords: Vec<u16>,
    pub net_vcs: u8,
    pub host_vcs: u8,
}

impl MeshGrid {
    /// The grid of a mesh fabric (`None` for other shapes, tori included).
    pub fn new(fab: &Fabric) -> Option<MeshGrid> {
        Self::cube(fab).filter(|g| !g.wrap)
    }

    /// The grid of a mesh or torus fabric (`None` for other shapes).
    pub fn cube(fab: &Fabric) -> Option<MeshGrid> {
        let Shape::Cube { k, wrap, conc } = &fab.shape else {
            return None;
        };
        let n = k.len();
        let mut cs = Vec::with_capacity(fab.switches as usize * n);
        for s in 0..fab.switches {
            cs.extend(coords(k, s).into_iter().map(|x| x as u16));
        }
        let (net_vcs, host_vcs) = super::dor::cube_vcs(fab, n);
        Some(MeshGrid {
            n,
            k: k.clone(),
            wrap: *wrap,
            conc: *conc,
            switches: fab.switches,
            coords: cs,
            net_vcs,
            host_vcs,
        })
    }

    /// The ports between switches: `0..net_ports()`.
    #[inline]
    pub fn net_ports(&self) -> u16 {
        2 * self.n as u16
    }

    /// The switch of host `dst`, where a head at `at` goes (an error for a host or a
    /// switch the mesh does not have).
    #[inline]
    pub fn dst_switch(&self, at: At, dst: u32) -> Result<u32, RouteError> {
        let dst_sw = dst / self.conc;
        if dst_sw >= self.switches || at.switch >= self.switches {
            return Err(RouteError::NoRoute {
                switch: at.switch,
                dst,
            });
        }
        Ok(dst_sw)
    }

    /// The coordinates of switch `s` (of the mesh).
    #[inline]
    pub fn at(&self, s: u32) -> &[u16] {
        let i = s as usize * self.n;
        &self.coords[i..i + self.n]
    }

    /// The output of switch `here` in dimension `d` towards coordinates `there` (which
    /// differ in `d`).
    #[inline]
    pub fn port(here: &[u16], there: &[u16], d: usize) -> u16 {
        2 * d as u16 + u16::from(there[d] < here[d])
    }

    /// Whether the shorter way round a ring of `k` from coordinate `x` to `y` (`x ≠ y`) is
    /// the positive one; half way round, with `alternate`, from an even `x` only (else
    /// always).
    #[inline(always)]
    pub fn ring_plus(x: u32, y: u32, k: u32, alternate: bool) -> bool {
        let delta = if y >= x { y - x } else { y + k - x };
        delta < k - delta || (delta == k - delta && (!alternate || x.is_multiple_of(2)))
    }

    /// At host `dst`'s own switch `dst_sw`: its port, any VC of its channel.
    #[inline]
    pub fn eject(&self, dst: u32, dst_sw: u32) -> Want {
        Want {
            ports: PortSet::single(self.net_ports() + (dst - dst_sw * self.conc) as u16),
            vc_lo: 0,
            vc_hi: self.host_vcs.saturating_sub(1),
            escape: Escape::NONE,
        }
    }
}

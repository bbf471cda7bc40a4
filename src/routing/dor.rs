//! Dimension-order routing on k-ary n-meshes and n-tori: correct dimension 0 first, then 1,
//! and so on (Dally & Seitz 1987). On a torus each dimension goes the shorter way round;
//! a tie (half way round) goes the positive way, or with [`Ties::Alternate`] the positive
//! way from even coordinates and the negative way from odd ones, which loads both
//! directions as evenly as BookSim2's coin flip does on average. With `dateline` the VCs of
//! each channel are split into two classes, which breaks the cyclic channel dependency of
//! each ring: a packet starts each dimension in class 0 and moves to class 1 on the hop
//! that crosses the wrap-around link ([`DatelineClass::OnCrossing`]), or travels the whole
//! dimension in class 1 if its path there crosses the link ([`DatelineClass::AtEntry`],
//! BookSim2's `dim_order_torus`). Port numbering is that of [`crate::fabric::mesh`].

use super::{At, Header, RouteError, Want};
use crate::fabric::mesh::coords;
use crate::fabric::{Fabric, Shape};

/// Which way a torus dimension goes when both ways are equally short.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ties {
    /// Always the positive way.
    #[default]
    Positive,
    /// The positive way from an even coordinate, the negative way from an odd one.
    Alternate,
}

/// When a packet whose path crosses a dimension's wrap-around link takes the upper VC class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DatelineClass {
    /// On the hop that crosses the link, and for the rest of the dimension.
    #[default]
    OnCrossing,
    /// From its first hop in the dimension (BookSim2's `dim_order_torus`).
    AtEntry,
}

/// Dimension-order routing's options on a torus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DorOptions {
    /// Two VC classes and a dateline in each ring.
    pub dateline: bool,
    pub class: DatelineClass,
    pub ties: Ties,
}

#[derive(Clone, Debug)]
pub struct Dor {
    k: Vec<u32>,
    wrap: bool,
    conc: u32,
    dateline: bool,
    at_entry: bool,
    ties: Ties,
    /// Coordinates of every switch, `n` per switch.
    coords: Vec<u16>,
    net_vcs: u8,
    host_vcs: u8,
    /// For fabrics of up to [`TABLE_SWITCHES`] switches, the first hop from every switch
    /// to every switch (`switches · s + t`): the port (`EJECT`: none, `t` is `s`), and
    /// whether the hop takes the upper VC class ([`CROSSES`]: it crosses the wrap-around
    /// link, or with [`DatelineClass::AtEntry`] the dimension's path does). Looking it up is some 60
    /// instructions cheaper a routing step than working it out (the torus workload of
    /// `reef bench`); larger fabrics work it out, their table would not stay in cache.
    first: Vec<u8>,
    switches: u32,
}

/// Fabrics up to this many switches keep a table of first hops (256 KB at most).
const TABLE_SWITCHES: u32 = 512;
const EJECT: u8 = 0x7F;
const CROSSES: u8 = 0x80;

/// The VCs of a cube's switch-to-switch channels and of its channels to hosts (every
/// channel of a kind is built alike): switch 0's first network port, and host 0's
/// ejection channel. `n`: the cube's dimensions.
pub fn cube_vcs(fab: &Fabric, n: usize) -> (u8, u8) {
    let vcs_of = |c: Option<crate::fabric::ChannelId>| c.map(|c| fab.channels[c.idx()].params.vcs);
    let net_vcs = fab.out_chan[0]
        .iter()
        .take(2 * n)
        .find_map(|&c| vcs_of(c))
        .unwrap_or(1);
    let host_vcs = vcs_of(Some(fab.ejection_channel(0))).unwrap_or(1);
    (net_vcs, host_vcs)
}

impl Dor {
    /// Dimension-order routing for a mesh or torus fabric (`None` for other shapes).
    /// `opts.dateline` splits each network channel's VCs into two classes (tori only).
    pub fn new(fab: &Fabric, opts: DorOptions) -> Option<Dor> {
        let Shape::Cube { k, wrap, conc } = &fab.shape else {
            return None;
        };
        let n = k.len();
        let mut cs = Vec::with_capacity(fab.switches as usize * n);
        for s in 0..fab.switches {
            cs.extend(coords(k, s).into_iter().map(|x| x as u16));
        }
        let (net_vcs, host_vcs) = cube_vcs(fab, n);
        let mut d = Dor {
            k: k.clone(),
            wrap: *wrap,
            conc: *conc,
            dateline: opts.dateline && *wrap,
            at_entry: opts.class == DatelineClass::AtEntry,
            ties: opts.ties,
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
        Want::one(at, h, self.route_port(at.switch, at.in_port, at.in_vc, h.dst))
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
        let Some((port, crosses)) = self.hop(switch, dst_sw) else {
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
        Some(if self.class1(in_port, in_vc, port, crosses) {
            (port, half, vcs - 1)
        } else {
            (port, 0, half - 1)
        })
    }

    /// Asks for what [`Self::route_port`] at `switch` to host `dst` will read (the first-hop
    /// entry, or the two switches' coordinates) to be brought into the cache (a hint).
    #[inline(always)]
    pub fn prefetch(&self, switch: u32, dst: u32) {
        let t = if self.conc == 1 { dst } else { dst / self.conc };
        if self.first.is_empty() {
            let n = self.k.len();
            crate::memory::prefetch(self.coords.as_ptr().wrapping_add(switch as usize * n));
            crate::memory::prefetch(self.coords.as_ptr().wrapping_add(t as usize * n));
        } else {
            let e = (switch as usize)
                .wrapping_mul(self.switches as usize)
                .wrapping_add(t as usize);
            crate::memory::prefetch(self.first.as_ptr().wrapping_add(e));
        }
    }

    /// The first hop from switch `switch`, come in on port `in_port` and VC `in_vc`,
    /// towards switch `t`: the port, and whether it takes the upper VC class (never
    /// without a dateline); `None` if `t` is `switch` or no switch of the fabric. For
    /// routings made of dimension-order legs ([`super::valiant`]).
    #[inline(always)]
    pub fn toward(&self, switch: u32, in_port: u16, in_vc: u8, t: u32) -> Option<(u16, bool)> {
        if t >= self.switches || switch >= self.switches {
            return None;
        }
        let (port, crosses) = self.hop(switch, t)?;
        Some((port, self.dateline && self.class1(in_port, in_vc, port, crosses)))
    }

    /// The first hop from switch `s` to switch `t` (both of the fabric), from the table
    /// where there is one.
    #[inline(always)]
    fn hop(&self, s: u32, t: u32) -> Option<(u16, bool)> {
        if self.first.is_empty() {
            self.first_hop(s, t)
        } else {
            match self.first[(s * self.switches + t) as usize] {
                EJECT => None,
                e => Some(((e & !CROSSES) as u16, e & CROSSES != 0)),
            }
        }
    }

    /// Whether a hop out of `port` (crossing the wrap-around link as `crosses` says) from
    /// input port `in_port`, VC `in_vc`, takes the upper VC class of a dateline.
    #[inline(always)]
    fn class1(&self, in_port: u16, in_vc: u8, port: u16, crosses: bool) -> bool {
        let n = self.k.len() as u16;
        let half = self.net_vcs / 2;
        let same_dim = in_port < 2 * n && in_port / 2 == port / 2;
        if self.at_entry {
            if same_dim { in_vc >= half } else { crosses }
        } else {
            crosses || (same_dim && in_vc >= half)
        }
    }

    /// The first hop from switch `s` to switch `t` (both of the fabric): the port, and
    /// whether it crosses the wrap-around link (with [`DatelineClass::AtEntry`]: whether the
    /// path in this dimension does); `None` if `t` is `s`.
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
                super::grid::MeshGrid::ring_plus(x, y, k, self.ties == Ties::Alternate)
            } else {
                y > x
            };
            let port = 2 * d as u16 + u16::from(!plus);
            let crosses = match (self.at_entry, plus) {
                (false, true) => x == k - 1,
                (false, false) => x == 0,
                (true, true) => x > y,
                (true, false) => x < y,
            };
            return Some((port, crosses));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;
    use crate::routing::cdg;

    fn dor(k: u32, extra: &str) -> (crate::engine::Spec, Dor) {
        let text = format!(
            "[topology]\nkind = \"torus\"\nk = [{k}, {k}]\n[channel]\nvcs = 2\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"dor\"\n{extra}"
        );
        let spec = load_str("t.toml", &text, std::path::Path::new("."), &[]).unwrap();
        let Routing::Dor(d) = spec.routing.clone() else {
            panic!("dor")
        };
        (spec, d)
    }

    use crate::routing::Routing;

    #[test]
    fn ties_go_positive_or_alternate_by_coordinate() {
        let (_, pos) = dor(8, "");
        let (_, alt) = dor(8, "ties = \"alternate\"\n");
        // From x = 0 and x = 1 (row 0) half way round: 4 hops either way.
        for (from, to) in [(0, 4), (1, 5), (2, 6), (3, 7)] {
            assert_eq!(pos.first_hop(from, to).unwrap().0, 0, "{from}");
            let want = if from % 2 == 0 { 0 } else { 1 };
            assert_eq!(alt.first_hop(from, to).unwrap().0, want, "{from}");
        }
        // Not a tie: the shorter way, either option.
        assert_eq!(alt.first_hop(1, 3).unwrap().0, 0);
        assert_eq!(alt.first_hop(1, 7).unwrap().0, 1);
    }

    #[test]
    fn the_upper_class_from_the_crossing_or_from_entry() {
        let (_, cross) = dor(8, "");
        let (_, entry) = dor(8, "dateline_class = \"at-entry\"\n");
        // s6 → s1 goes the positive way through the wrap-around link (7 → 0). A packet
        // injected at s6 (host port 4): on crossing it takes class 0 first, at entry class 1.
        let host_port = 4;
        assert_eq!(cross.route_port(6, host_port, 0, 1), Some((0, 0, 0)));
        assert_eq!(entry.route_port(6, host_port, 0, 1), Some((0, 1, 1)));
        // At s7 it crosses: class 1 either way; at s0, in class 1, it stays there.
        assert_eq!(cross.route_port(7, 1, 0, 1), Some((0, 1, 1)));
        assert_eq!(entry.route_port(0, 1, 1, 1), Some((0, 1, 1)));
        // s1 → s3 does not cross: class 0 throughout.
        assert_eq!(entry.route_port(1, host_port, 0, 3), Some((0, 0, 0)));
        assert_eq!(entry.route_port(2, 1, 0, 3), Some((0, 0, 0)));
    }

    #[test]
    fn every_option_is_free_of_deadlock() {
        for k in [3, 4, 5, 8] {
            for extra in [
                "",
                "ties = \"alternate\"\n",
                "dateline_class = \"at-entry\"\n",
                "dateline_class = \"at-entry\"\nties = \"alternate\"\n",
            ] {
                let (spec, _) = dor(k, extra);
                let rep = cdg::check(&spec.fabric, &spec.routing);
                assert_eq!(rep.failure_count, 0, "k = {k} {extra}");
                assert!(rep.describe_cycle(&spec.fabric).is_none(), "k = {k} {extra}");
            }
        }
    }
}

//! Deterministic routing on a k-ary n-tree computed from the switch's and the destination's
//! digits, without tables: the routes of [`super::table::fat_tree`] with `adaptive =
//! false` (destination-mod-k up to the nearest common ancestor, then down; Zahavi et al.,
//! 2010), which take switches × hosts entries (1.4 TB for 2^20 hosts) where this takes a
//! few words. The numbering is [`crate::fabric::clos::fat_tree`]'s: level `l` holds
//! switches `l · k^(n-1) ..`, a switch's ports `0..k` go down and `k..2k` up, and host `h`
//! is on port `h mod k` of leaf `h / k`.

use super::{At, Header, RouteError, Want};
use crate::fabric::{Fabric, Shape};

#[derive(Clone, Debug)]
pub struct FatTreeRoute {
    k: u32,
    n: u32,
    /// `k^(n-1)`: switches a level.
    per_level: u32,
    /// `k^i`, i = 0..=n.
    pow: Vec<u32>,
    /// The VCs of a switch-to-switch channel and of a switch-to-host one.
    net_vcs: u8,
    host_vcs: u8,
}

impl FatTreeRoute {
    /// The routing of `fab`, if it is a k-ary n-tree.
    pub fn new(fab: &Fabric) -> Option<FatTreeRoute> {
        let Shape::FatTree { k, n } = fab.shape else {
            return None;
        };
        let vcs = |s: u32, p: u32| {
            fab.out_chan[s as usize]
                .get(p as usize)
                .copied()
                .flatten()
                .map(|c| fab.channels[c.idx()].params.vcs)
        };
        let per_level = k.pow(n - 1);
        Some(FatTreeRoute {
            k,
            n,
            per_level,
            pow: (0..=n).map(|i| k.pow(i)).collect(),
            // (Every channel of a kind is built alike: a leaf's port 0 reaches a host, and
            // its port k a switch where there is a level above.)
            host_vcs: vcs(0, 0).unwrap_or(1),
            net_vcs: if n > 1 { vcs(0, k).unwrap_or(1) } else { 1 },
        })
    }

    /// Base-k digit `i` of `w`.
    #[inline(always)]
    fn digit(&self, w: u32, i: u32) -> u32 {
        (w / self.pow[i as usize]) % self.k
    }

    /// The one output of a packet to host `dst` at switch `s`: its port and VCs `lo..=hi`
    /// (`None`: no such switch or host).
    #[inline(always)]
    pub fn route_port(&self, s: u32, dst: u32) -> Option<(u16, u8, u8)> {
        let (k, l) = (self.k, s / self.per_level);
        if l >= self.n || dst >= k * self.per_level {
            return None;
        }
        let (w, leaf) = (s % self.per_level, dst / k);
        // The switch's subtree holds the destination: its digits l.. are the leaf's.
        if w / self.pow[l as usize] == leaf / self.pow[l as usize] {
            if l == 0 {
                Some(((dst % k) as u16, 0, self.host_vcs - 1))
            } else {
                Some((self.digit(leaf, l - 1) as u16, 0, self.net_vcs - 1))
            }
        } else {
            Some(((k + self.digit(dst, l)) as u16, 0, self.net_vcs - 1))
        }
    }

    #[inline(always)]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        Want::one(at, h, self.route_port(at.switch, h.dst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::clos::fat_tree;
    use crate::fabric::{LinkParams, SwitchParams};

    /// The same output as the deterministic tables, for every switch and destination.
    #[test]
    fn the_routes_are_the_deterministic_tables() {
        for (k, n, vcs) in [(2, 1, 1), (2, 4, 2), (3, 3, 1), (4, 3, 3), (5, 2, 1), (8, 2, 2)] {
            let net = LinkParams {
                vcs,
                ..LinkParams::default()
            };
            let fab = fat_tree(k, n, net, LinkParams::default(), SwitchParams::default()).unwrap();
            let r = FatTreeRoute::new(&fab).unwrap();
            let t = super::super::table::fat_tree(&fab, false).unwrap();
            let hosts = fab.num_hosts() as u32;
            for s in 0..fab.switches {
                for dst in 0..hosts {
                    let at = At {
                        switch: s,
                        in_port: 0,
                        in_vc: 0,
                        in_class: 0,
                    };
                    assert_eq!(
                        r.route(at, Header::dst(dst)).unwrap(),
                        t.route(at, Header::dst(dst)).unwrap(),
                        "k {k} n {n}: switch {s} to host {dst}"
                    );
                }
                assert!(r.route_port(s, hosts).is_none());
            }
            assert!(r.route_port(fab.switches, 0).is_none());
        }
    }
}

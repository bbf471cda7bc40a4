//! The k-ary n-tree as BookSim2 builds it (`src/networks/fattree.cpp` of booksim/booksim2,
//! commit 28f43299): `k^n` hosts, `n` levels of `k^(n-1)` routers, level 0 at the top.
//!
//! Router `(level, pos)` is number `level · k^(n-1) + pos`, the top routers first; a top
//! router has `k` ports, every other `2k`. Ports `0..k` lead down, `k..2k` up, both ways.
//! Node `pos · k + i` is on port `i` of leaf `(n − 1, pos)`. The channels between levels
//! are wired by fattree.cpp's own channel numbers: a router's output channels are numbered
//! in order (down ones of level `l` from `l · 2k^n`, up ones `k^n` before that), and its
//! input channels picked out of them by the interleaving fattree.cpp computes. It is reef's
//! k-ary n-tree ([`super::clos::fat_tree`]) with the levels numbered the other way (up port
//! `k + j` of `(l, p)` leads to `(l − 1, p with base-k digit n − 1 − l set to j)`), which
//! the tests check; the numbers are built here as BookSim2 computes them. Routing is
//! [`crate::routing::table::nca`].

use super::clos::k_ary_hosts;
use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// Builds BookSim2's k-ary n-tree: `net` between routers, `host` to and from the leaves.
pub fn fat_tree(
    k: u32,
    n: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    let hosts = k_ary_hosts("k-ary n-tree", k, n)?;
    check_radix(2 * k as u64)?;
    let npos = hosts / k;
    let ports: Vec<u16> = (0..n * npos)
        .map(|id| if id < npos { k as u16 } else { 2 * k as u16 })
        .collect();
    let mut b = FabricBuilder::new(&ports, hosts);
    let leaf = (n - 1) * npos;
    for pos in 0..npos {
        for i in 0..k {
            b.link(b.host(pos * k + i), 0, b.switch(leaf + pos), i as u16, host)?;
        }
    }
    for (link, (from, to)) in channel_ends(k, n).into_iter().enumerate() {
        let (Some((s, sp)), Some((d, dp))) = (from, to) else {
            return Err(FabricError::Impossible(format!(
                "BookSim2's fat tree leaves channel {link} without two ends (k = {k}, n = {n})"
            )));
        };
        b.channel(b.switch(s), sp, b.switch(d), dp, net)?;
    }
    b.build(sw, Shape::BookSimFatTree { k, n })
}

/// A channel's end: (router, port).
type End = Option<(u32, u16)>;

/// For each of fattree.cpp's channel numbers, the router and port it leaves and the router
/// and port it enters, as `_BuildNet` computes them.
fn channel_ends(k: u32, n: u32) -> Vec<(End, End)> {
    let npos = k.pow(n - 1);
    let per_dir = k * npos;
    let per_level = 2 * per_dir;
    let mut ends: Vec<(End, End)> = vec![(None, None); ((n - 1) * per_level) as usize];
    let id = |level: u32, pos: u32| level * npos + pos;
    for level in 0..n {
        for pos in 0..npos {
            for port in 0..k {
                // Down outputs (levels 0..n-1; the leaves' are the nodes' channels).
                if level + 1 < n {
                    let link = level * per_level + pos * k + port;
                    ends[link as usize].0 = Some((id(level, pos), port as u16));
                }
                // Up outputs (level 0 has none).
                if level > 0 {
                    let link = level * per_level - per_dir + pos * k + port;
                    ends[link as usize].0 = Some((id(level, pos), (k + port) as u16));
                }
            }
        }
    }
    // Inputs: from below (down inputs, from level + 1's up outputs) and from above (up
    // inputs, from level − 1's down outputs), interleaved as fattree.cpp interleaves them.
    let interleave = |pos: u32, port: u32, per_neighbourhood: u32, per_branch: u32| {
        let (nb, at) = (pos / per_neighbourhood, pos % per_neighbourhood);
        nb * per_neighbourhood * k + port * per_branch * k + (at % per_branch) * k + at / per_branch
    };
    for level in 0..n {
        for pos in 0..npos {
            for port in 0..k {
                if level + 1 < n {
                    let link = (level + 1) * per_level - per_dir
                        + interleave(pos, port, k.pow(n - 1 - level), k.pow(n - 2 - level));
                    ends[link as usize].1 = Some((id(level, pos), port as u16));
                }
                if level > 0 {
                    let link = (level - 1) * per_level
                        + interleave(pos, port, k.pow(n - level), k.pow(n - 1 - level));
                    ends[link as usize].1 = Some((id(level, pos), (k + port) as u16));
                }
            }
        }
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;
    use crate::fabric::clos::{digit, set_digit};

    fn t(k: u32, n: u32) -> Fabric {
        let p = LinkParams::default();
        fat_tree(k, n, p, p, SwitchParams::default()).unwrap()
    }

    /// Where output port `p` of switch `s` leads.
    fn to(f: &Fabric, s: u32, p: usize) -> (u32, u16) {
        let c = &f.channels[f.out_chan[s as usize][p].unwrap().idx()];
        (c.dst.0, c.dst_port)
    }

    #[test]
    fn booksims_4_ary_3_tree() {
        // fattree_config: 64 nodes, 16 routers a level, the 16 top ones of 4 ports.
        let f = t(4, 3);
        assert_eq!((f.switches, f.num_hosts()), (48, 64));
        assert!((0..16).all(|s| f.nodes[s].ports == 4));
        assert!((16..48).all(|s| f.nodes[s].ports == 8));
        // Node 37 on leaf (2, 9), router 41, port 1.
        assert_eq!(f.host_switch(37), (NodeId(41), 1));
        // Router 41's up output 2 is fattree.cpp's channel 2·128 − 64 + 9·4 + 2 = 230, which
        // its interleaving makes input 1 of router (1, 10) = 26: level 1's down inputs are
        // channels 192 + 16·neighbourhood + 4·port + position, and 38 = 16·2 + 4·1 + 2.
        assert_eq!(to(&f, 41, 4 + 2), (26, 1));
        // Router 26's down output 1 goes back to router 41's up input 2.
        assert_eq!(to(&f, 26, 1), (41, 4 + 2));
        // Every port of every router is used both ways.
        for s in 0..f.switches as usize {
            assert!(f.out_chan[s].iter().chain(&f.in_chan[s]).all(Option::is_some));
        }
    }

    #[test]
    fn reefs_tree_with_the_levels_numbered_from_the_top() {
        for (k, n) in [(2, 1), (2, 2), (2, 4), (3, 3), (4, 3), (5, 2)] {
            let f = t(k, n);
            let npos = k.pow(n - 1);
            for l in 1..n {
                for p in 0..npos {
                    for j in 0..k {
                        let d = n - 1 - l;
                        let up = ((l - 1) * npos + set_digit(p, k, d, j), digit(p, k, d) as u16);
                        assert_eq!(to(&f, l * npos + p, (k + j) as usize), up, "{k} {n} {l} {p} {j}");
                    }
                }
            }
            // The same network as reef's own k-ary n-tree, level l there being n − 1 − l here.
            let p = LinkParams::default();
            let r = crate::fabric::clos::fat_tree(k, n, p, p, SwitchParams::default()).unwrap();
            let map = |s: u32| (n - 1 - s / npos) * npos + s % npos;
            for c in &r.channels {
                let (s, d) = (c.src.0, c.dst.0);
                if r.is_switch(c.src) && r.is_switch(c.dst) {
                    assert_eq!(to(&f, map(s), c.src_port as usize), (map(d), c.dst_port));
                }
            }
        }
    }

    #[test]
    fn impossible_trees_are_refused() {
        let p = LinkParams::default();
        for (k, n) in [(1, 2), (2, 0), (2, 30), (100, 1)] {
            assert!(fat_tree(k, n, p, p, SwitchParams::default()).is_err(), "{k} {n}");
        }
    }
}

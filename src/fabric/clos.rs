//! Folded Clos (leaf/spine) and k-ary n-tree (fat tree) builders.
//!
//! Folded Clos: `leaves` terminal switches with `hosts_per_leaf` hosts and
//! `spines · links_per_pair` up-links each; every leaf reaches every spine over a group of
//! `links_per_pair` parallel links (the Macramé Clos of `../shared/systems/ieee1355.md`: 256
//! nodes = 16 leaves, 8 spines, groups of 2). Leaf ports: `0..h` hosts, then up-link `l` at
//! port `h + l`, going to spine `l / links_per_pair`. Spine `c` (switch `leaves + c`): port
//! `leaf · links_per_pair + i`. Host `leaf · h + j`.
//!
//! k-ary n-tree (Petrini & Vanneschi, 1997): `n` levels of `k^(n-1)` switches; switch
//! `(l, w)` is number `l · k^(n-1) + w`, with `w` read as `n-1` base-k digits. Up port `k + j`
//! of `(l, w)` goes to `(l+1, w with digit l set to j)`, arriving on that switch's down port
//! `digit l of w`. Leaf `(0, w)` has host `w·k + p` on down port `p`.

use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// Builds a two-level folded Clos.
pub fn folded_clos(
    leaves: u32,
    hosts_per_leaf: u32,
    spines: u32,
    links_per_pair: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    if leaves < 2 || spines < 1 || hosts_per_leaf < 1 || links_per_pair < 1 {
        return Err(FabricError::Impossible(format!(
            "a folded Clos needs ≥ 2 leaves, ≥ 1 spine, ≥ 1 host per leaf and ≥ 1 link per \
             leaf-spine pair (got leaves = {leaves}, spines = {spines}, hosts_per_leaf = \
             {hosts_per_leaf}, links_per_pair = {links_per_pair})"
        )));
    }
    let up = spines as u64 * links_per_pair as u64;
    let leaf_ports = hosts_per_leaf as u64 + up;
    let spine_ports = leaves as u64 * links_per_pair as u64;
    check_radix(leaf_ports.max(spine_ports))?;
    let mut ports = vec![leaf_ports as u16; leaves as usize];
    ports.extend(std::iter::repeat_n(spine_ports as u16, spines as usize));
    let mut b = FabricBuilder::new(&ports, leaves * hosts_per_leaf);
    for leaf in 0..leaves {
        for j in 0..hosts_per_leaf {
            b.link(
                b.host(leaf * hosts_per_leaf + j),
                0,
                b.switch(leaf),
                j as u16,
                host,
            )?;
        }
        for l in 0..up as u32 {
            let spine = l / links_per_pair;
            let i = l % links_per_pair;
            b.link(
                b.switch(leaf),
                (hosts_per_leaf + l) as u16,
                b.switch(leaves + spine),
                (leaf * links_per_pair + i) as u16,
                net,
            )?;
        }
    }
    b.build(
        sw,
        Shape::Clos {
            leaves,
            hosts_per_leaf,
            spines,
            links_per_pair,
        },
    )
}

/// Base-k digit `i` of `w`.
pub fn digit(w: u32, k: u32, i: u32) -> u32 {
    (w / k.pow(i)) % k
}

/// `w` with base-k digit `i` set to `v`.
pub fn set_digit(w: u32, k: u32, i: u32, v: u32) -> u32 {
    let p = k.pow(i);
    w - digit(w, k, i) * p + v * p
}

/// The `k^n` hosts of a k-ary n-stage network (`name`, for the error): k ≥ 2, n ≥ 1, and at
/// most 2^24 hosts.
pub(super) fn k_ary_hosts(name: &str, k: u32, n: u32) -> Result<u32, FabricError> {
    if k < 2 || n < 1 {
        return Err(FabricError::Impossible(format!(
            "a {name} needs k ≥ 2 and n ≥ 1 (got k = {k}, n = {n})"
        )));
    }
    Ok((k as u64)
        .checked_pow(n)
        .filter(|&h| h <= 1 << 24)
        .ok_or_else(|| {
            FabricError::Impossible(format!("{k}^{n} hosts is larger than reef supports (2^24)"))
        })? as u32)
}

/// Builds a k-ary n-tree with `k^n` hosts.
pub fn fat_tree(
    k: u32,
    n: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    let hosts = k_ary_hosts("k-ary n-tree", k, n)?;
    check_radix(2 * k as u64)?;
    let per_level = hosts / k;
    let mut b = FabricBuilder::new(&vec![2 * k as u16; (per_level * n) as usize], hosts);
    for l in 0..n {
        for w in 0..per_level {
            let s = l * per_level + w;
            if l == 0 {
                for p in 0..k {
                    b.link(b.host(w * k + p), 0, b.switch(s), p as u16, host)?;
                }
            }
            if l + 1 < n {
                for j in 0..k {
                    let up = (l + 1) * per_level + set_digit(w, k, l, j);
                    b.link(
                        b.switch(s),
                        (k + j) as u16,
                        b.switch(up),
                        digit(w, k, l) as u16,
                        net,
                    )?;
                }
            }
        }
    }
    b.build(sw, Shape::FatTree { k, n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macrame_clos_256() {
        let p = LinkParams::default();
        let f = folded_clos(16, 16, 8, 2, p, p, SwitchParams::default()).unwrap();
        assert_eq!(f.num_hosts(), 256);
        assert_eq!(f.switches, 24);
        // Every leaf port and every spine port is used: 32-port switches.
        for s in 0..24 {
            assert_eq!(f.nodes[s].ports, 32);
            assert!(f.out_chan[s].iter().all(|c| c.is_some()));
        }
        // Hosts on different leaves are 3 switches apart (4 channels).
        let d = f.distances_from(f.hosts[0]);
        assert_eq!(d[f.hosts[255].idx()], 4);
        assert_eq!(d[f.hosts[1].idx()], 2);
    }

    #[test]
    fn fat_tree_is_connected_with_expected_diameter() {
        let p = LinkParams::default();
        let f = fat_tree(4, 3, p, p, SwitchParams::default()).unwrap();
        assert_eq!(f.num_hosts(), 64);
        assert_eq!(f.switches, 48);
        let d = f.distances_from(f.hosts[0]);
        // Up 3 levels and down again: 2n channels.
        assert_eq!(d[f.hosts[63].idx()], 6);
        assert_eq!(d[f.hosts[3].idx()], 2);
        assert_eq!(d[f.hosts[4].idx()], 4);
    }

    #[test]
    fn digits() {
        assert_eq!(digit(0b1011, 2, 2), 0);
        assert_eq!(set_digit(27, 4, 1, 0), 27 - 2 * 4);
    }
}

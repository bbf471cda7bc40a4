//! The Macramé switch grid and torus (`../shared/systems/ieee1355.md`, "Topologies"): K×K
//! switches, `conc` hosts on each, and a group of `group` parallel links to each of the up
//! to four nearest neighbours (the torus also wraps its edges round).
//!
//! Numbering: switch (x, y) is number `x·K + y` (x varies slowest, so that the hosts of one
//! column have contiguous addresses and x-first routing is a set of intervals); host `p` of
//! switch `s` is host `s·conc + p`. Ports: hosts on `0..conc`, then a group per direction,
//! +x, −x, +y, −y, link `i` of direction `d` on port `conc + d·group + i`. Edge switches of a
//! grid leave their outward ports unconnected.

use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// Directions in port order.
pub const PLUS_X: u32 = 0;
pub const MINUS_X: u32 = 1;
pub const PLUS_Y: u32 = 2;
pub const MINUS_Y: u32 = 3;

/// The first port of direction `d`'s group on a switch with `conc` hosts.
pub fn dir_port(conc: u32, group: u32, d: u32) -> u16 {
    (conc + d * group) as u16
}

/// Switch number of (x, y) in a K×K grid.
pub fn switch_at(k: u32, x: u32, y: u32) -> u32 {
    x * k + y
}

/// Where host `h` sits in a K×K grid with `conc` hosts per switch: its switch's (x, y) and
/// its place (port) on that switch.
pub fn host_place(k: u32, conc: u32, h: u32) -> (u32, u32, u32) {
    let s = h / conc;
    (s / k, s % k, h % conc)
}

/// The host at place `p` of switch (x, y); the inverse of [`host_place`].
pub fn host_at(k: u32, conc: u32, x: u32, y: u32, p: u32) -> u32 {
    switch_at(k, x, y) * conc + p
}

/// Builds a K×K grid (or torus) of switches with `conc` hosts and groups of `group` links.
pub fn switch_grid(
    k: u32,
    wrap: bool,
    conc: u32,
    group: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    if k < 2 || conc < 1 || group < 1 {
        return Err(FabricError::Impossible(format!(
            "a switch grid needs k ≥ 2, ≥ 1 host and ≥ 1 link per neighbour (got k = {k}, \
             hosts {conc}, group {group})"
        )));
    }
    if wrap && k < 3 {
        return Err(FabricError::Impossible(format!(
            "a {k}×{k} torus would link neighbours twice; tori start at 3×3"
        )));
    }
    let ports = conc as u64 + 4 * group as u64;
    check_radix(ports)?;
    let n = k * k;
    let mut b = FabricBuilder::new(&vec![ports as u16; n as usize], n * conc);
    for s in 0..n {
        for p in 0..conc {
            b.link(b.host(s * conc + p), 0, b.switch(s), p as u16, host)?;
        }
    }
    for x in 0..k {
        for y in 0..k {
            let s = switch_at(k, x, y);
            // The +x and +y neighbours; each link joins a + port to the neighbour's − port.
            let nbrs = [
                (x + 1 < k || wrap).then(|| (switch_at(k, (x + 1) % k, y), PLUS_X, MINUS_X)),
                (y + 1 < k || wrap).then(|| (switch_at(k, x, (y + 1) % k), PLUS_Y, MINUS_Y)),
            ];
            for (t, d, e) in nbrs.into_iter().flatten() {
                for i in 0..group as u16 {
                    b.link(
                        b.switch(s),
                        dir_port(conc, group, d) + i,
                        b.switch(t),
                        dir_port(conc, group, e) + i,
                        net,
                    )?;
                }
            }
        }
    }
    b.build(sw, Shape::Grid { k, wrap, conc, group })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macrame_grid_and_torus() {
        let p = LinkParams::default();
        let g = switch_grid(4, false, 16, 4, p, p, SwitchParams::default()).unwrap();
        assert_eq!((g.num_hosts(), g.switches), (256, 16));
        // 2·4·3 neighbour pairs × 4 links × 2 directions, plus 2 per host.
        let links = g
            .channels
            .iter()
            .filter(|c| g.is_switch(c.src) && g.is_switch(c.dst))
            .count();
        assert_eq!(links, 24 * 4 * 2);
        // Corner to corner: 6 switch hops.
        let d = g.distances_from(g.hosts[0]);
        assert_eq!(d[g.hosts[255].idx()], 8);
        let t = switch_grid(4, true, 16, 4, p, p, SwitchParams::default()).unwrap();
        let d = t.distances_from(t.hosts[0]);
        assert_eq!(d[t.hosts[255].idx()], 4, "one wrap hop in x and in y");
        assert!(
            t.out_chan
                .iter()
                .take(16)
                .all(|ports| ports.iter().all(|c| c.is_some()))
        );
        assert!(switch_grid(2, true, 16, 4, p, p, SwitchParams::default()).is_err());
    }

    #[test]
    fn host_places_follow_the_built_links() {
        let p = LinkParams::default();
        let (k, conc) = (3, 2);
        let g = switch_grid(k, false, conc, 1, p, p, SwitchParams::default()).unwrap();
        for h in 0..k * k * conc {
            let (x, y, port) = host_place(k, conc, h);
            let (sw, sw_port) = g.host_switch(h);
            assert_eq!((sw.0, sw_port as u32), (switch_at(k, x, y), port), "host {h}");
            assert_eq!(host_at(k, conc, x, y, port), h);
        }
        // Host 7 is the second host of switch 3 = (1, 0).
        assert_eq!(host_place(k, conc, 7), (1, 0, 1));
    }
}

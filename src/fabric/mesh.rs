//! k-ary n-mesh, k-ary n-torus and ring builders (Dally & Towles, *Principles and Practices
//! of Interconnection Networks*, ch. 5).
//!
//! Switch `s` has coordinates `x_d = (s / Π_{e<d} k_e) mod k_d` (dimension 0 varies fastest).
//! Ports: `2d` goes towards `+d`, `2d+1` towards `−d`, and `2n + j` is host `j` of the
//! switch's `conc` hosts; host `s·conc + j`. A torus wraps every dimension (a ring is a 1-D
//! torus); with k = 2 the two directions are two separate links to the same neighbour.

use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// Coordinates of switch `s` in a cube of radices `k`.
pub fn coords(k: &[u32], mut s: u32) -> Vec<u32> {
    k.iter()
        .map(|&kd| {
            let x = s % kd;
            s /= kd;
            x
        })
        .collect()
}

/// Switch number of coordinates `x` in a cube of radices `k`.
pub fn index(k: &[u32], x: &[u32]) -> u32 {
    let mut s = 0;
    for d in (0..k.len()).rev() {
        s = s * k[d] + x[d];
    }
    s
}

/// Builds a k-ary n-mesh (`wrap = false`) or n-torus (`wrap = true`).
pub fn cube(
    k: &[u32],
    wrap: bool,
    conc: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    if k.is_empty() {
        return Err(FabricError::Impossible(
            "a cube needs at least one dimension".into(),
        ));
    }
    if let Some(&bad) = k.iter().find(|&&kd| kd < 2) {
        return Err(FabricError::Impossible(format!(
            "every dimension needs at least 2 switches (got k = {bad})"
        )));
    }
    if conc == 0 {
        return Err(FabricError::Impossible(
            "hosts_per_switch must be at least 1".into(),
        ));
    }
    let switches: u64 = k.iter().map(|&x| x as u64).product();
    let ports = 2 * k.len() as u64 + conc as u64;
    check_radix(ports)?;
    if switches * conc as u64 > 1 << 24 {
        return Err(FabricError::Impossible(format!(
            "{switches} switches × {conc} hosts is larger than reef supports (2^24 hosts)"
        )));
    }
    let n = k.len() as u16;
    let mut b = FabricBuilder::new(&vec![ports as u16; switches as usize], switches as u32 * conc);
    for s in 0..switches as u32 {
        let x = coords(k, s);
        for d in 0..k.len() {
            let last = x[d] + 1 == k[d];
            if last && !wrap {
                continue;
            }
            let mut y = x.clone();
            y[d] = if last { 0 } else { x[d] + 1 };
            let t = index(k, &y);
            b.link(b.switch(s), 2 * d as u16, b.switch(t), 2 * d as u16 + 1, net)?;
        }
        for j in 0..conc {
            b.link(b.host(s * conc + j), 0, b.switch(s), 2 * n + j as u16, host)?;
        }
    }
    b.build(
        sw,
        Shape::Cube {
            k: k.to_vec(),
            wrap,
            conc,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip() {
        let k = [4, 3, 2];
        for s in 0..24 {
            assert_eq!(index(&k, &coords(&k, s)), s);
        }
        assert_eq!(coords(&k, 5), vec![1, 1, 0]);
    }

    #[test]
    fn mesh_and_torus_channel_counts() {
        let p = LinkParams::default();
        let m = cube(&[8, 8], false, 1, p, p, SwitchParams::default()).unwrap();
        // 2 · (2 · 8 · 7) network channels + 2 · 64 host channels.
        assert_eq!(m.channels.len(), 2 * 2 * 8 * 7 + 2 * 64);
        let t = cube(&[4, 4], true, 2, p, p, SwitchParams::default()).unwrap();
        assert_eq!(t.channels.len(), 2 * 2 * 16 + 2 * 32);
        assert_eq!(t.num_hosts(), 32);
        // Host 5 sits on switch 2, port 2n + 1.
        assert_eq!(t.host_switch(5), (super::super::NodeId(2), 5));
    }

    #[test]
    fn two_ary_torus_has_double_links() {
        let p = LinkParams::default();
        let t = cube(&[2], true, 1, p, p, SwitchParams::default()).unwrap();
        assert_eq!(t.channels.len(), 4 + 4);
    }

    #[test]
    fn bad_radix_is_impossible() {
        let p = LinkParams::default();
        assert!(matches!(
            cube(&[8, 1], false, 1, p, p, SwitchParams::default()),
            Err(FabricError::Impossible(_))
        ));
    }
}

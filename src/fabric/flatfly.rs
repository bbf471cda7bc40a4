//! BookSim2's on-chip flattened butterfly, `flatfly` (`src/networks/flatfly_onchip.cpp` of
//! booksim/booksim2, commit 28f43299): `k^n` routers, each linked directly to every router
//! that differs from it in one base-k digit of its number, with `c = xr²` nodes each.
//!
//! Router `r`'s digit `d` is its coordinate in dimension `d` (dimension 0 varies fastest).
//! Its ports: `0..c` its nodes, placed as in the cmesh (routers `x` to a row of a grid of
//! nodes, each holding an `xr × xr` block, [`super::cmesh::node_at`]); then the outputs
//! dimension by dimension, in dimension `d` to the routers whose digit `d` is `0..k` but its
//! own, in that order (`c + (k − 1)·d + j`). Inputs are numbered in the order BookSim2
//! adds them, by the sending router's number: input `c + i` comes from the `i`-th lowest
//! numbered router linked to it — not the output's number in general.
//!
//! With `noc_latency` (BookSim2's `use_noc_latency`, its default) the channels take
//! BookSim2's wire lengths over the layout of routers `x` to a row: `xr` cycles per column
//! and `xr` per row between two routers, and a node's channels (both ways) its estimate of
//! the distance from the node to the router (1 for `xr ≤ 2`); each adds `length − 1`
//! cycles to the `[channel]` (or `[host_channel]`) latency and credit delay.

use super::cmesh::{longer, node_at};
use super::{Fabric, FabricBuilder, FabricError, LinkParams, Shape, SwitchParams, check_radix};
use crate::fabric::clos::{digit, set_digit};
use crate::time::Ratio;

/// The length BookSim2 gives the channels of the node on port `i` of a router with
/// `xr × xr` nodes (`_BuildNet`'s `ileng`, computed in its own order of ports).
pub fn node_lengths(xr: u32) -> Vec<u32> {
    let xr = xr as i64;
    let (mut yleng, mut xleng) = (-xr / 2, -xr / 2);
    let odd = xr % 2 == 1;
    let mut out = Vec::new();
    for _ in 0..xr * xr {
        if yleng == 0 && !odd {
            yleng += 1;
        }
        if xleng == 0 && !odd {
            xleng += 1;
        }
        let mut l = 1;
        if yleng.abs() > 1 {
            l += yleng.abs() - 1;
        }
        if xleng.abs() > 1 {
            l += xleng.abs() - 1;
        }
        out.push(l as u32);
        yleng += 1;
        if yleng > xr / 2 {
            yleng = -xr / 2;
            xleng += 1;
        }
    }
    out
}

/// Builds BookSim2's flattened butterfly: `k^n` routers of `c = xr²` nodes, laid out
/// `x` to a row.
#[allow(clippy::too_many_arguments)]
pub fn flatfly(
    k: u32,
    n: u32,
    xr: u32,
    x: u32,
    noc_latency: bool,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
    cycle: Ratio,
) -> Result<Fabric, FabricError> {
    if k < 2 || !(1..=4).contains(&n) {
        return Err(FabricError::Impossible(format!(
            "a flatfly needs k ≥ 2 and n from 1 to 4 (BookSim2 builds up to 4 dimensions), not k = {k}, n = {n}"
        )));
    }
    let size = u64::from(k)
        .checked_pow(n)
        .filter(|&s| s <= 1 << 16)
        .ok_or_else(|| {
            FabricError::Impossible(format!(
                "a flatfly of {k}^{n} routers is larger than reef supports (2^16)"
            ))
        })? as u32;
    if xr == 0 || u64::from(xr) * u64::from(xr) * u64::from(size) > 1 << 24 {
        return Err(FabricError::Impossible(format!(
            "{xr}×{xr} nodes on each of {size} routers: need 1 to 2^24 nodes in all"
        )));
    }
    if x == 0 || !size.is_multiple_of(x) {
        return Err(FabricError::Impossible(format!(
            "{size} routers do not fill rows of x = {x}: BookSim2 would connect nodes that do not exist"
        )));
    }
    let c = xr * xr;
    let ports = u64::from(c) + u64::from(k - 1) * u64::from(n);
    check_radix(ports)?;
    let mut b = FabricBuilder::new(&vec![ports as u16; size as usize], c * size);
    let lengths = node_lengths(xr);
    for r in 0..size {
        for p in 0..c {
            let h = node_at(r, p, x, xr);
            let l = if noc_latency { lengths[p as usize] } else { 1 };
            b.link(b.host(h), 0, b.switch(r), p as u16, longer(host, l - 1, cycle))?;
        }
    }
    // Inputs are added in the order of the loop below, by sending router.
    let mut next_in = vec![c as u16; size as usize];
    for r in 0..size {
        for dim in 0..n {
            let own = digit(r, k, dim);
            for j in 0..k {
                if j == own {
                    continue;
                }
                let other = set_digit(r, k, dim, j);
                let (dx, dy) = ((r % x).abs_diff(other % x), (r / x).abs_diff(other / x));
                let length = if noc_latency { xr * dx + xr * dy } else { 1 };
                let out = c + (k - 1) * dim + j - u32::from(j > own);
                let port = next_in[other as usize];
                next_in[other as usize] += 1;
                b.channel(
                    b.switch(r),
                    out as u16,
                    b.switch(other),
                    port,
                    longer(net, length - 1, cycle),
                )?;
            }
        }
    }
    b.build(sw, Shape::FlatFly { k, n, xr, x })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(noc: bool) -> Fabric {
        let p = LinkParams::default();
        flatfly(4, 2, 2, 4, noc, p, p, SwitchParams::default(), Ratio::int(1000)).unwrap()
    }

    #[test]
    fn booksims_numbering() {
        let t = f(false);
        assert_eq!((t.switches, t.num_hosts()), (16, 64));
        let to = |r: usize, p: usize| {
            let ch = &t.channels[t.out_chan[r][p].unwrap().idx()];
            (ch.dst.0, ch.dst_port)
        };
        // Router 5 = (1, 1): outputs to 4, 6, 7 (dimension 0), then 1, 9, 13; its inputs
        // from 1, 4, 6, 7, 9, 13 in that order (ports 4..9).
        let outs: Vec<u32> = (4..10).map(|p| to(5, p).0).collect();
        assert_eq!(outs, vec![4, 6, 7, 1, 9, 13]);
        let ins: Vec<u32> = (4..10)
            .map(|p| t.channels[t.in_chan[5][p].unwrap().idx()].src.0)
            .collect();
        assert_eq!(ins, vec![1, 4, 6, 7, 9, 13]);
        // Router 1's output to 5 (dimension 1, j = 1 past its own 0: port 4 + 3 + 0) is
        // router 5's input 4.
        assert_eq!(to(1, 7), (5, 4));
        assert_eq!(t.host_switch(9), (crate::fabric::NodeId(0), 3));
        for s in 0..16 {
            assert!(t.out_chan[s].iter().chain(&t.in_chan[s]).all(Option::is_some));
        }
    }

    #[test]
    fn noc_lengths() {
        let (p, t) = (LinkParams::default(), f(true));
        let lat = |r: usize, port: usize| t.channels[t.out_chan[r][port].unwrap().idx()].params.latency;
        // Router 0 to 3: three columns of 2; to 12: three rows of 2.
        assert_eq!(lat(0, 6), p.latency + 5000);
        assert_eq!(lat(0, 9), p.latency + 5000);
        assert_eq!(lat(0, 4), p.latency + 1000);
        assert_eq!(node_lengths(2), vec![1; 4]);
        assert_eq!(node_lengths(4).len(), 16);
        assert!(node_lengths(4).iter().any(|&l| l > 1));
    }

    #[test]
    fn impossible_flatflies_are_refused() {
        let p = LinkParams::default();
        let sw = SwitchParams::default();
        for (k, n, xr, x) in [
            (1, 2, 2, 1),
            (4, 5, 2, 4),
            (4, 2, 0, 4),
            (4, 2, 2, 3),
            (4, 2, 2, 0),
        ] {
            assert!(
                flatfly(k, n, xr, x, true, p, p, sw, Ratio::int(1000)).is_err(),
                "{k} {n} {xr} {x}"
            );
        }
    }
}

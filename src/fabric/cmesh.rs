//! BookSim2's concentrated mesh, `cmesh` (`src/networks/cmesh.cpp` of booksim/booksim2,
//! commit 28f43299): a k×k mesh of routers with four nodes each, whose edge ports are
//! express channels to the router half way along the same edge.
//!
//! BookSim2 builds it for `n = 2`, `c = 4` (`xr = yr = 2`) only (it asserts both). Router
//! `r` sits at column `r % k`, row `r / k`; the nodes lie on a grid `2k` wide, router `r`
//! holding the 2×2 block at columns `2(r % k)…`, rows `2(r / k)…`; its port `2y + x` is the
//! node at row `y`, column `x` of that block ([`node_at`], `cmesh.cpp`'s `link`; the same
//! placement as `flatfly_onchip.cpp`'s, [`router_of`] its `NodeToRouter`/`NodeToPort`).
//! Ports 0–3 are the nodes, 4 +x, 5 −x, 6 +y, 7 −y, the same number in and out. A router
//! on an edge has its port across that edge linked to the router `k/2` away along the edge
//! (the right column's +x to the router `k/2` rows away, arriving on its +x port; the left
//! column's −x, the top row's +y and the bottom row's −y likewise), BookSim2's express
//! channels; `k` must be even (with an odd `k` BookSim2 gives one channel two readers).
//!
//! With `noc_latency` (BookSim2's `use_noc_latency`, its default) the channels take
//! BookSim2's lengths: 2 cycles between neighbours (`_cX`, `_cY`) and `k` along an express
//! channel (`_cY · k / 2`); each adds `length − 1` cycles to the `[channel]` latency and
//! credit delay. A node's channels take 1 cycle.

use super::{Fabric, FabricBuilder, FabricError, LinkParams, Shape, SwitchParams, check_radix};
use crate::fabric::FlowControl;
use crate::time::Ratio;

/// Nodes a router: BookSim2's cmesh is built for `c = 4` only.
pub const CONC: u32 = 4;
/// Ports of a router: its four nodes, then +x, −x, +y, −y.
pub const PORTS: u16 = 8;

/// The node on port `port` of router `r` when routers lie `x` to a row and each holds an
/// `xr × xr` block of nodes (`cmesh.cpp`, `flatfly_onchip.cpp`): port `py · xr + px` is the
/// node at row `py`, column `px` of the router's block.
pub fn node_at(r: u32, port: u32, x: u32, xr: u32) -> u32 {
    let (ry, rx) = (r / x, r % x);
    let (py, px) = (port / xr, port % xr);
    (x * xr) * (xr * ry + py) + (xr * rx + px)
}

/// The router and port of `node` in [`node_at`]'s placement (BookSim2's `NodeToRouter`
/// and `NodeToPort`, `flatfly_transformation`).
pub fn router_of(node: u32, x: u32, xr: u32) -> (u32, u16) {
    let (row, col) = (node / (x * xr), node % (x * xr));
    ((row / xr) * x + col / xr, ((row % xr) * xr + col % xr) as u16)
}

/// `params` with `extra` cycles (of `cycle` ps) more latency and credit delay.
pub(super) fn longer(mut params: LinkParams, extra: u32, cycle: Ratio) -> LinkParams {
    let ps = Ratio::int(u128::from(extra)).times(cycle).round();
    params.latency += ps;
    if let FlowControl::Credit { delay } = &mut params.flow {
        *delay += ps;
    }
    params
}

/// Builds BookSim2's cmesh of `k × k` routers and `4k²` nodes.
pub fn cmesh(
    k: u32,
    noc_latency: bool,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
    cycle: Ratio,
) -> Result<Fabric, FabricError> {
    if !(2..=1024).contains(&k) || !k.is_multiple_of(2) {
        return Err(FabricError::Impossible(format!(
            "a cmesh needs an even k from 2 to 1024 (its express channels join edge routers k/2 apart), not {k}"
        )));
    }
    check_radix(u64::from(PORTS))?;
    let size = k * k;
    let mut b = FabricBuilder::new(&vec![PORTS; size as usize], CONC * size);
    for r in 0..size {
        for p in 0..CONC {
            b.link(b.host(node_at(r, p, k, 2)), 0, b.switch(r), p as u16, host)?;
        }
    }
    // BookSim2's channel numbers: router r's output in direction d (+x, −x, +y, −y) is
    // channel r + d·k²; `reader[ch]` is the router (and port) whose input it is.
    let off = size;
    let mut reader = vec![None; 4 * size as usize];
    for r in 0..size {
        let (x, y) = (r % k, r / k);
        let h = k / 2;
        let edge = |c: u32| if c < h { c + h } else { c - h };
        let ins = [
            // +x in: the −x output of the router to the right; on the right edge the +x
            // output of the right-edge router k/2 rows away.
            if x == k - 1 {
                k * edge(y) + x
            } else {
                k * y + x + 1 + off
            },
            if x == 0 {
                k * edge(y) + x + off
            } else {
                k * y + x - 1
            },
            if y == k - 1 {
                k * y + edge(x) + 2 * off
            } else {
                k * (y + 1) + x + 3 * off
            },
            if y == 0 {
                k * y + edge(x) + 3 * off
            } else {
                k * (y - 1) + x + 2 * off
            },
        ];
        for (d, ch) in ins.into_iter().enumerate() {
            let slot = &mut reader[ch as usize];
            if slot.is_some() {
                return Err(FabricError::Impossible(format!(
                    "cmesh channel {ch} would have two readers"
                )));
            }
            *slot = Some((r, CONC as u16 + d as u16));
        }
    }
    for r in 0..size {
        let (x, y) = (r % k, r / k);
        for d in 0..4u32 {
            let (to, port) = reader[(r + d * off) as usize].ok_or_else(|| {
                FabricError::Impossible(format!("cmesh channel {} has no reader", r + d * off))
            })?;
            let express = match d {
                0 => x == k - 1,
                1 => x == 0,
                2 => y == k - 1,
                _ => y == 0,
            };
            let length = match (noc_latency, express) {
                (false, _) => 1,
                (true, false) => 2,
                (true, true) => k,
            };
            b.channel(
                b.switch(r),
                CONC as u16 + d as u16,
                b.switch(to),
                port,
                longer(net, length - 1, cycle),
            )?;
        }
    }
    b.build(sw, Shape::CMesh { k })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    fn f(k: u32, noc: bool) -> Fabric {
        let p = LinkParams::default();
        cmesh(k, noc, p, p, SwitchParams::default(), Ratio::int(1000)).unwrap()
    }

    /// Where router `r`'s port `p` leads: (router, port).
    fn to(t: &Fabric, r: u32, p: usize) -> (u32, u16) {
        let c = &t.channels[t.out_chan[r as usize][p].unwrap().idx()];
        (c.dst.0, c.dst_port)
    }

    #[test]
    fn booksims_numbering() {
        let t = f(4, false);
        assert_eq!((t.switches, t.num_hosts()), (16, 64));
        // "the first node has 0,1,8,9" (flatfly_onchip.cpp): router 0's ports 0..3.
        assert_eq!(
            (0..4).map(|p| node_at(0, p, 4, 2)).collect::<Vec<_>>(),
            vec![0, 1, 8, 9]
        );
        // Node 27 = row 3, column 3: router (1, 1) = 5, port 2·1 + 1.
        assert_eq!(router_of(27, 4, 2), (5, 3));
        assert_eq!(t.host_switch(27), (NodeId(5), 3));
        for h in 0..64 {
            let (r, p) = router_of(h, 4, 2);
            assert_eq!(node_at(r, p as u32, 4, 2), h);
        }
        // Inside: +x to the right neighbour's −x port, +y to the one above's −y.
        assert_eq!(to(&t, 5, 4), (6, 5));
        assert_eq!(to(&t, 5, 5), (4, 4));
        assert_eq!(to(&t, 5, 6), (9, 7));
        assert_eq!(to(&t, 5, 7), (1, 6));
        // Express: router 3 (right edge, row 0) +x → router 11 (row 2) on its +x port;
        // router 0's −y → router 2's −y; router 12's −x → router 4's −x.
        assert_eq!(to(&t, 3, 4), (11, 4));
        assert_eq!(to(&t, 11, 4), (3, 4));
        assert_eq!(to(&t, 0, 7), (2, 7));
        assert_eq!(to(&t, 12, 5), (4, 5));
        assert_eq!(to(&t, 13, 6), (15, 6));
        for s in 0..16 {
            assert!(t.out_chan[s].iter().chain(&t.in_chan[s]).all(Option::is_some));
        }
    }

    #[test]
    fn noc_lengths() {
        let (p, t) = (LinkParams::default(), f(4, true));
        let lat = |r: u32, port: usize| {
            t.channels[t.out_chan[r as usize][port].unwrap().idx()]
                .params
                .latency
        };
        assert_eq!(lat(5, 4), p.latency + 1000);
        assert_eq!(lat(3, 4), p.latency + 3000);
        assert_eq!(lat(5, 0), p.latency);
    }

    #[test]
    fn odd_or_tiny_k_is_refused() {
        let p = LinkParams::default();
        for k in [0, 1, 3, 5] {
            assert!(cmesh(k, true, p, p, SwitchParams::default(), Ratio::int(1000)).is_err());
        }
    }
}

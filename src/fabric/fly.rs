//! The k-ary n-fly (butterfly) as BookSim2 builds it (`src/networks/fly.cpp` of
//! booksim/booksim2, commit 28f43299): `k^n` hosts, `n` stages of `k^(n-1)` switches of
//! `k` ports each way, and no path diversity.
//!
//! Switch `(s, a)` (stage `s`, address `a` read as `n - 1` base-k digits) is number
//! `s · k^(n-1) + a`, as BookSim2 numbers its routers. Host `h` sends into stage 0, switch
//! `h / k`, port `h % k`, and receives from stage `n - 1`, switch `h / k`, port `h % k`: a
//! host's two channels go to different switches unless `n = 1`. Output port `p` of `(s, a)`
//! (`s < n - 1`) leads to `(s + 1, a with digit n − s − 2 set to p)`, arriving on input
//! port `digit n − s − 2 of a` (BookSim2's `_OutChannel`/`_InChannel`). Routing is by
//! destination tag ([`crate::routing::table::dest_tag`]): stage `s` sends a packet out on
//! digit `n − 1 − s` of its destination.

use super::clos::{digit, k_ary_hosts, set_digit};
use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// Builds a k-ary n-fly: `net` between stages, `host` into stage 0 and out of stage n − 1.
pub fn fly(
    k: u32,
    n: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    let hosts = k_ary_hosts("k-ary n-fly", k, n)?;
    check_radix(k as u64)?;
    let per_stage = hosts / k;
    let mut b = FabricBuilder::new(&vec![k as u16; (per_stage * n) as usize], hosts);
    for h in 0..hosts {
        let (a, p) = (h / k, (h % k) as u16);
        b.channel(b.host(h), 0, b.switch(a), p, host)?;
        b.channel(b.switch((n - 1) * per_stage + a), p, b.host(h), 0, host)?;
    }
    for s in 0..n - 1 {
        let pos = n - s - 2;
        for a in 0..per_stage {
            for p in 0..k {
                let next = (s + 1) * per_stage + set_digit(a, k, pos, p);
                b.channel(
                    b.switch(s * per_stage + a),
                    p as u16,
                    b.switch(next),
                    digit(a, k, pos) as u16,
                    net,
                )?;
            }
        }
    }
    b.build(sw, Shape::Fly { k, n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    fn f(k: u32, n: u32) -> Fabric {
        let p = LinkParams::default();
        fly(k, n, p, p, SwitchParams::default()).unwrap()
    }

    #[test]
    fn booksims_numbering() {
        // 2-ary 2-fly: routers 0, 1 in stage 0, 2, 3 in stage 1.
        let t = f(2, 2);
        assert_eq!((t.switches, t.num_hosts()), (4, 4));
        // Host 2 sends into router 1 port 0 and receives from router 3 port 0.
        assert_eq!(t.host_switch(2), (NodeId(1), 0));
        let ej = &t.channels[t.ejection_channel(2).idx()];
        assert_eq!((ej.src, ej.src_port), (NodeId(3), 0));
        // Router 0 port 1 → router 3 port 0; router 1 port 0 → router 2 port 1.
        let to = |s: u32, p: usize| {
            let c = &t.channels[t.out_chan[s as usize][p].unwrap().idx()];
            (c.dst.0, c.dst_port)
        };
        assert_eq!(to(0, 1), (3, 0));
        assert_eq!(to(1, 0), (2, 1));
        // 3-ary 3-fly: router (0, a = 5 = 12₃) port 2 → (1, 5 with digit 1 set to 2 = 22₃ =
        // 8), arriving on port 1, as BookSim2's _InChannel numbers it.
        let t = f(3, 3);
        let c = &t.channels[t.out_chan[5][2].unwrap().idx()];
        assert_eq!((c.dst.0, c.dst_port), (9 + 8, 1));
        // Every port is used both ways.
        for s in 0..t.switches as usize {
            assert!(t.out_chan[s].iter().chain(&t.in_chan[s]).all(Option::is_some));
        }
    }

    #[test]
    fn one_stage_is_one_switch() {
        let t = f(10, 1);
        assert_eq!((t.switches, t.num_hosts()), (1, 10));
        assert_eq!(t.host_switch(7), (NodeId(0), 7));
    }

    #[test]
    fn impossible_flies_are_refused() {
        let p = LinkParams::default();
        for (k, n) in [(1, 2), (2, 0), (2, 30), (300, 1)] {
            assert!(fly(k, n, p, p, SwitchParams::default()).is_err(), "{k} {n}");
        }
    }
}

//! Fully connected network: every switch has a link to every other switch, and `conc` hosts.
//!
//! Switch `i` reaches switch `j` on port `j` if `j < i`, else `j − 1`; its hosts are on ports
//! `switches − 1 + h` and host `i · conc + h`.

use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// The port of switch `i` that leads to switch `j` (`i ≠ j`).
pub fn port_to(i: u32, j: u32) -> u16 {
    (if j < i { j } else { j - 1 }) as u16
}

pub fn fully_connected(
    switches: u32,
    conc: u32,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> Result<Fabric, FabricError> {
    if switches < 2 || conc < 1 {
        return Err(FabricError::Impossible(format!(
            "a fully connected network needs ≥ 2 switches and ≥ 1 host each (got {switches} \
             switches, {conc} hosts per switch)"
        )));
    }
    check_radix(switches as u64 - 1 + conc as u64)?;
    let ports = (switches - 1 + conc) as u16;
    let mut b = FabricBuilder::new(&vec![ports; switches as usize], switches * conc);
    for i in 0..switches {
        for j in i + 1..switches {
            b.link(b.switch(i), port_to(i, j), b.switch(j), port_to(j, i), net)?;
        }
        for h in 0..conc {
            b.link(
                b.host(i * conc + h),
                0,
                b.switch(i),
                (switches - 1 + h) as u16,
                host,
            )?;
        }
    }
    b.build(sw, Shape::Full { switches, conc })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_one_hop() {
        let p = LinkParams::default();
        let f = fully_connected(5, 2, p, p, SwitchParams::default()).unwrap();
        assert_eq!(f.num_hosts(), 10);
        for s in 0..5u32 {
            let d = f.distances_from(super::super::NodeId(s));
            assert!((0..5).all(|t| t == s as usize || d[t] == 1));
        }
    }
}

//! ATOLL networks (`../shared/systems/atoll.md`): the network is on the NIC. Every node's
//! ATOLL chip is four host ports and four link ports around an 8×8 crossbar, so a cluster is
//! only chips and cables; reef builds each chip as a switch of eight ports, link ports 0–3
//! and host ports 4–7 (host j of chip s is host `s · hosts_per_nic + j`, on port 4 + j).
//! Wirings: the 2-D torus (link ports 0/1 toward +x/−x, 2/3 toward +y/−y, as
//! [`super::mesh`] numbers them), the 2-D grid, every chip linked to every other (up to
//! five: four link ports), and any of these with failed links (cables taken out), or an
//! edge list from a file ([`from_file`]). The chip's timing (byte-wide links clocked with
//! the core, the hop latency, its input FIFOs) comes in a [`Chip`], from
//! `systems::atoll::params`.

use super::{Fabric, FabricBuilder, FabricError, Shape, full::port_to};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;

/// Link ports, host ports and all ports of a chip.
pub const LINK_PORTS: u16 = 4;
pub const HOST_PORTS: u16 = 4;
pub const PORTS: u16 = LINK_PORTS + HOST_PORTS;

/// The port of host `j` (0..4) of a chip.
pub fn host_port(j: u32) -> u16 {
    LINK_PORTS + j as u16
}

/// What every chip of a network is: its links (chip to chip), its host ports (host ↔
/// crossbar) and its switching.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chip {
    pub link: LinkParams,
    pub host: LinkParams,
    pub switch: SwitchParams,
}

/// How the chips are cabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wiring {
    /// `k[0] × k[1]` chips, each dimension a ring.
    Torus { k: [u32; 2] },
    /// `k[0] × k[1]` chips, no wrap-around.
    Grid { k: [u32; 2] },
    /// `nodes` chips (2..=5), each linked to every other.
    Full { nodes: u32 },
}

impl Wiring {
    pub fn nodes(&self) -> u32 {
        match self {
            Wiring::Torus { k } | Wiring::Grid { k } => k[0] * k[1],
            Wiring::Full { nodes } => *nodes,
        }
    }

    /// The cables: (chip, port, chip, port), each once.
    fn cables(&self) -> Result<Vec<(u32, u16, u32, u16)>, FabricError> {
        let mut out = Vec::new();
        match self {
            Wiring::Torus { k } | Wiring::Grid { k } => {
                let wrap = matches!(self, Wiring::Torus { .. });
                if k[0] < 2 || k[1] < 2 {
                    return Err(FabricError::Impossible(format!(
                        "an ATOLL {} needs at least 2 chips in each of its two dimensions (got {}×{}); \
                         for a ring of n chips write k = [n, 2]… or a file",
                        if wrap { "torus" } else { "grid" },
                        k[0],
                        k[1]
                    )));
                }
                let idx = |x: u32, y: u32| y * k[0] + x;
                for y in 0..k[1] {
                    for x in 0..k[0] {
                        if x + 1 < k[0] || wrap {
                            out.push((idx(x, y), 0, idx((x + 1) % k[0], y), 1));
                        }
                        if y + 1 < k[1] || wrap {
                            out.push((idx(x, y), 2, idx(x, (y + 1) % k[1]), 3));
                        }
                    }
                }
            }
            Wiring::Full { nodes } => {
                if !(2..=LINK_PORTS as u32 + 1).contains(nodes) {
                    return Err(FabricError::Impossible(format!(
                        "a fully connected ATOLL network has 2 to {} chips (four link ports each); got {nodes}",
                        LINK_PORTS + 1
                    )));
                }
                for i in 0..*nodes {
                    for j in i + 1..*nodes {
                        out.push((i, port_to(i, j), j, port_to(j, i)));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Checks a number of hosts per chip.
fn check_hosts(hosts_per_nic: u32) -> Result<(), FabricError> {
    if !(1..=HOST_PORTS as u32).contains(&hosts_per_nic) {
        return Err(FabricError::Impossible(format!(
            "an ATOLL chip has {HOST_PORTS} host ports: hosts_per_nic must be 1 to {HOST_PORTS}, got {hosts_per_nic}"
        )));
    }
    Ok(())
}

/// Builds an ATOLL network: `wiring`, with the cables between the pairs of chips in
/// `failed` taken out (every cable between them), `hosts_per_nic` host ports in use.
pub fn build(
    wiring: &Wiring,
    hosts_per_nic: u32,
    failed: &[(u32, u32)],
    chip: &Chip,
) -> Result<Fabric, FabricError> {
    check_hosts(hosts_per_nic)?;
    let cables = wiring.cables()?;
    let n = wiring.nodes();
    if n as u64 * hosts_per_nic as u64 > 1 << 24 {
        return Err(FabricError::Impossible(format!(
            "{n} chips × {hosts_per_nic} hosts is larger than reef supports (2^24 hosts)"
        )));
    }
    let mut gone = vec![false; cables.len()];
    for &(a, b) in failed {
        let mut found = false;
        for (i, c) in cables.iter().enumerate() {
            if (c.0, c.2) == (a, b) || (c.0, c.2) == (b, a) {
                gone[i] = true;
                found = true;
            }
        }
        if !found {
            return Err(FabricError::Impossible(format!(
                "failed link {a}–{b}: chips {a} and {b} are not linked (chips are 0..{n})"
            )));
        }
    }
    let mut b = FabricBuilder::new(&vec![PORTS; n as usize], n * hosts_per_nic);
    for (i, &(s, ps, t, pt)) in cables.iter().enumerate() {
        if !gone[i] {
            b.link(b.switch(s), ps, b.switch(t), pt, chip.link)?;
        }
    }
    for s in 0..n {
        for j in 0..hosts_per_nic {
            b.link(
                b.host(s * hosts_per_nic + j),
                0,
                b.switch(s),
                host_port(j),
                chip.host,
            )?;
        }
    }
    let shape = match wiring {
        Wiring::Torus { k } | Wiring::Grid { k } if failed.is_empty() => Shape::Cube {
            k: k.to_vec(),
            wrap: matches!(wiring, Wiring::Torus { .. }),
            conc: hosts_per_nic,
        },
        _ => Shape::Irregular,
    };
    b.build(chip.switch, shape)
}

/// Makes a fabric read from a topology file into an ATOLL network: every switch a chip
/// (eight ports: links on 0–3, hosts on 4–7), every channel and switch timed as `chip`
/// says.
pub fn from_file(mut fab: Fabric, chip: &Chip) -> Result<Fabric, FabricError> {
    let bad = |m: String| FabricError::Impossible(m);
    for s in 0..fab.switches as usize {
        let name = fab.nodes[s].name.clone();
        for (p, c) in fab.out_chan[s].iter().enumerate() {
            let Some(c) = c else { continue };
            let to_host = !fab.is_switch(fab.channels[c.idx()].dst);
            let p = p as u16;
            if to_host && !(LINK_PORTS..PORTS).contains(&p) {
                return Err(bad(format!(
                    "{name}:{p} has a host: an ATOLL chip's host ports are {LINK_PORTS}–{}",
                    PORTS - 1
                )));
            }
            if !to_host && p >= LINK_PORTS {
                return Err(bad(format!(
                    "{name}:{p} links to another chip: an ATOLL chip's link ports are 0–{}",
                    LINK_PORTS - 1
                )));
            }
        }
        for c in fab.in_chan[s].iter().flatten() {
            let ch = &fab.channels[c.idx()];
            if ch.dst_port >= PORTS {
                return Err(bad(format!(
                    "{name}:{} does not exist: an ATOLL chip has ports 0–{}",
                    ch.dst_port,
                    PORTS - 1
                )));
            }
        }
        fab.nodes[s].ports = PORTS;
        fab.out_chan[s].resize(PORTS as usize, None);
        fab.in_chan[s].resize(PORTS as usize, None);
        fab.switch_params[s] = chip.switch;
    }
    for c in &mut fab.channels {
        let host = !(c.src.0 < fab.switches && c.dst.0 < fab.switches);
        c.params = if host { chip.host } else { chip.link };
    }
    Ok(fab)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    fn chip() -> Chip {
        Chip {
            link: LinkParams::default(),
            host: LinkParams::default(),
            switch: SwitchParams::default(),
        }
    }

    #[test]
    fn a_torus_has_two_cables_a_chip() {
        let f = build(&Wiring::Torus { k: [4, 3] }, 2, &[], &chip()).unwrap();
        assert_eq!(f.switches, 12);
        assert_eq!(f.num_hosts(), 24);
        let links = f
            .channels
            .iter()
            .filter(|c| f.is_switch(c.src) && f.is_switch(c.dst))
            .count();
        assert_eq!(links, 2 * 2 * 12);
        assert_eq!(f.host_switch(5), (NodeId(2), host_port(1)));
        assert!(f.nodes[..12].iter().all(|n| n.ports == PORTS));
    }

    #[test]
    fn failed_links_are_taken_out_and_bad_ones_refused() {
        let f = build(&Wiring::Torus { k: [4, 4] }, 1, &[(0, 1), (0, 4)], &chip()).unwrap();
        assert_eq!(f.shape, Shape::Irregular);
        assert!(f.out_chan[0][0].is_none() && f.out_chan[0][2].is_none());
        let e = build(&Wiring::Torus { k: [4, 4] }, 1, &[(0, 5)], &chip()).unwrap_err();
        assert!(e.to_string().contains("not linked"), "{e}");
        let e = build(&Wiring::Torus { k: [1, 8] }, 1, &[], &chip()).unwrap_err();
        assert!(e.to_string().contains("at least 2 chips"), "{e}");
        let e = build(&Wiring::Full { nodes: 6 }, 1, &[], &chip()).unwrap_err();
        assert!(e.to_string().contains("2 to 5"), "{e}");
        let e = build(&Wiring::Grid { k: [2, 2] }, 5, &[], &chip()).unwrap_err();
        assert!(e.to_string().contains("1 to 4"), "{e}");
    }

    #[test]
    fn five_chips_fully_connected() {
        let f = build(&Wiring::Full { nodes: 5 }, 4, &[], &chip()).unwrap();
        for s in 0..5u32 {
            let d = f.distances_from(NodeId(s));
            assert!((0..5).all(|t| t == s as usize || d[t] == 1));
        }
    }
}

//! Up*/down* routing for irregular topologies (Autonet: Schroeder et al., 1991), and plain
//! minimal routing for comparison.
//!
//! A breadth-first spanning tree from a root switch gives every switch a level; a channel
//! goes *up* if it leads to a lower level (or the same level and a lower switch number),
//! otherwise *down*. A legal route takes any number of up channels and then only down
//! channels, which makes the channel dependency graph acyclic. The tables hold, for each
//! switch, destination and phase (may still go up / down only), the output ports that lie on
//! a shortest legal route; the phase is the input channel's class (1 = arrived on a down
//! channel). `minimal` uses every channel in any order: shortest paths, not deadlock-free in
//! general — `reef check` shows the cycle.

use super::table::{Table, TableBuilder};
use super::{Escape, PortSet, Want};
use crate::fabric::Fabric;
use std::collections::VecDeque;

/// Levels of the breadth-first spanning tree from `root` over switch-to-switch channels
/// (either direction); unreachable switches get `u32::MAX`.
pub fn levels(fab: &Fabric, root: u32) -> Vec<u32> {
    let mut level = vec![u32::MAX; fab.switches as usize];
    let mut q = VecDeque::new();
    level[root as usize] = 0;
    q.push_back(root);
    while let Some(u) = q.pop_front() {
        let ports = fab.out_chan[u as usize]
            .iter()
            .chain(fab.in_chan[u as usize].iter());
        for c in ports.flatten() {
            let ch = &fab.channels[c.idx()];
            let v = if ch.src.0 == u { ch.dst } else { ch.src };
            if fab.is_switch(v) && level[v.idx()] == u32::MAX {
                level[v.idx()] = level[u as usize] + 1;
                q.push_back(v.0);
            }
        }
    }
    level
}

/// Up*/down* tables rooted at `root`; `adaptive` keeps every shortest legal output.
pub fn updown(fab: &Fabric, root: u32, adaptive: bool) -> Table {
    let level = levels(fab, root);
    let up = |c: usize| {
        let ch = &fab.channels[c];
        let (u, v) = (ch.src.0, ch.dst.0);
        (level[v as usize], v) < (level[u as usize], u)
    };
    build(
        fab,
        &up,
        true,
        adaptive,
        if adaptive { "updown-adaptive" } else { "updown" },
    )
}

/// Shortest-path tables over all channels, with no turn restriction.
pub fn minimal(fab: &Fabric, adaptive: bool) -> Table {
    build(
        fab,
        &|_| true,
        false,
        adaptive,
        if adaptive { "minimal-adaptive" } else { "minimal" },
    )
}

fn build(
    fab: &Fabric,
    up: &dyn Fn(usize) -> bool,
    phased: bool,
    adaptive: bool,
    name: &'static str,
) -> Table {
    let ns = fab.switches as usize;
    let nh = fab.num_hosts();
    let classes = if phased { 2 } else { 1 };
    let mut b = TableBuilder::new(fab.switches, nh as u32, classes);
    let is_sw = |c: usize| {
        let ch = &fab.channels[c];
        fab.is_switch(ch.src) && fab.is_switch(ch.dst)
    };
    // Phase after taking channel c from phase ph, if legal.
    let step = |c: usize, ph: u8| -> Option<u8> {
        if !phased {
            Some(0)
        } else if up(c) {
            (ph == 0).then_some(0)
        } else {
            Some(1)
        }
    };
    let mut dist = vec![u32::MAX; ns * 2];
    let mut q = VecDeque::new();
    for d in 0..nh as u32 {
        let (sd, pd) = fab.host_switch(d);
        let (sd, pd) = (sd.0, pd);
        // The host's switch ejects on the host's port.
        let ej = fab.out_chan[sd as usize]
            .iter()
            .position(|c| c.map(|c| fab.channels[c.idx()].dst) == Some(fab.hosts[d as usize]))
            .map(|p| p as u16)
            .unwrap_or(pd);
        dist.fill(u32::MAX);
        q.clear();
        for ph in 0..classes {
            dist[sd as usize * 2 + ph as usize] = 0;
            q.push_back((sd, ph));
        }
        while let Some((t, ph2)) = q.pop_front() {
            let dt = dist[t as usize * 2 + ph2 as usize];
            for c in fab.in_chan[t as usize].iter().flatten() {
                if !is_sw(c.idx()) {
                    continue;
                }
                let s = fab.channels[c.idx()].src.0;
                for ph in 0..classes {
                    if step(c.idx(), ph) == Some(ph2) && dist[s as usize * 2 + ph as usize] == u32::MAX {
                        dist[s as usize * 2 + ph as usize] = dt + 1;
                        q.push_back((s, ph));
                    }
                }
            }
        }
        for s in 0..ns as u32 {
            for ph in 0..classes {
                let ds = dist[s as usize * 2 + ph as usize];
                if ds == u32::MAX {
                    continue;
                }
                let mut ports = PortSet::EMPTY;
                if s == sd {
                    ports.insert(ej);
                } else {
                    for (p, c) in fab.out_chan[s as usize].iter().enumerate() {
                        let Some(c) = c else { continue };
                        if !is_sw(c.idx()) {
                            continue;
                        }
                        let t = fab.channels[c.idx()].dst.0;
                        if let Some(ph2) = step(c.idx(), ph)
                            && dist[t as usize * 2 + ph2 as usize] == ds - 1
                        {
                            ports.insert(p as u16);
                            if !adaptive {
                                break;
                            }
                        }
                    }
                }
                let vcs = ports
                    .iter()
                    .filter_map(|p| fab.out_chan[s as usize][p as usize])
                    .map(|c| fab.channels[c.idx()].params.vcs)
                    .min()
                    .unwrap_or(1);
                b.set(
                    s,
                    ph,
                    d,
                    Want {
                        ports,
                        vc_lo: 0,
                        vc_hi: vcs - 1,
                        escape: Escape::NONE,
                    },
                );
            }
        }
    }
    if phased {
        b.set_channel_classes(
            (0..fab.channels.len())
                .map(|c| u8::from(is_sw(c) && !up(c)))
                .collect(),
        );
    }
    b.build(name)
}

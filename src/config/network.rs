//! A config's network: `[topology]` becomes a [`Fabric`] (the Macramé testbed's, with its
//! [`Routing`], from its own description), with the counts a network will need planned
//! before it is built, for the memory estimate. `[routing]` is read in `routing`.

use super::build::*;
use super::hardware::{channel_key, switch_key};
use super::raw::*;
use super::{ConfigError, locate, parse_path};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;
use crate::fabric::{self, Fabric};
use crate::memory::Counts;
use crate::routing::Routing;
use crate::time::Ratio;

/// The topology keys `t` may have for its kind, and a message when one is missing.
pub(super) fn topology_keys<'a>(src: &Source, t: &RawTopology) -> R<(&'static str, &'a [&'a str])> {
    let kind = t.kind;
    let kname = match kind {
        TopoKind::Mesh => "mesh",
        TopoKind::Torus => "torus",
        TopoKind::Ring => "ring",
        TopoKind::Clos => "clos",
        TopoKind::FatTree => "fat-tree",
        TopoKind::Full => "full",
        TopoKind::File => "file",
        TopoKind::Fly => "fly",
        TopoKind::BooksimFattree => "booksim-fattree",
        TopoKind::Anynet => "anynet",
        TopoKind::Cmesh => "cmesh",
        TopoKind::Flatfly => "flatfly",
        TopoKind::Dragonfly => "dragonfly",
        TopoKind::Macrame => "macrame",
        TopoKind::Atoll => "atoll",
    };
    // Keys that do not belong to this kind are mistakes, not silent no-ops.
    let allowed: &[&str] = match kind {
        TopoKind::Mesh | TopoKind::Torus => &["k", "n", "hosts_per_switch"],
        TopoKind::Ring => &["k", "hosts_per_switch"],
        TopoKind::Clos => &["leaves", "hosts_per_leaf", "spines", "links_per_pair"],
        TopoKind::FatTree => &["k", "n"],
        TopoKind::Full => &["switches", "hosts_per_switch"],
        TopoKind::File | TopoKind::Anynet => &["file"],
        TopoKind::Fly | TopoKind::BooksimFattree => &["k", "n"],
        TopoKind::Cmesh => &["k", "noc_latency"],
        TopoKind::Flatfly => &["k", "n", "hosts_per_switch", "routers_per_row", "noc_latency"],
        TopoKind::Dragonfly => &["hosts_per_switch", "noc_latency"],
        TopoKind::Macrame => &["network", "nodes"],
        TopoKind::Atoll => &["network", "k", "nodes", "file", "hosts_per_switch", "failed"],
    };
    let present = [
        ("k", t.k.is_some()),
        ("n", t.n.is_some()),
        ("hosts_per_switch", t.hosts_per_switch.is_some()),
        ("leaves", t.leaves.is_some()),
        ("hosts_per_leaf", t.hosts_per_leaf.is_some()),
        ("spines", t.spines.is_some()),
        ("links_per_pair", t.links_per_pair.is_some()),
        ("switches", t.switches.is_some()),
        ("file", t.file.is_some()),
        ("network", t.network.is_some()),
        ("nodes", t.nodes.is_some()),
        ("failed", t.failed.is_some()),
        ("noc_latency", t.noc_latency.is_some()),
        ("routers_per_row", t.routers_per_row.is_some()),
    ];
    for (name, is) in present {
        if is && !allowed.contains(&name) {
            return Err(src.err(
                &format!("topology.{name}"),
                format!("does not apply to a {kname} topology"),
                Some(&format!("a {kname} takes: {}", allowed.join(", "))),
            ));
        }
    }
    Ok((kname, allowed))
}

pub(super) fn topology(
    src: &Source,
    cycle: Ratio,
    t: &RawTopology,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> R<Fabric> {
    let kind = t.kind;
    let (kname, allowed) = topology_keys(src, t)?;
    let need = |name: &str, v: Option<u32>| {
        v.ok_or_else(|| {
            src.err(
                "topology",
                format!("a {kname} topology needs `{name}`"),
                Some(&format!("a {kname} takes: {}", allowed.join(", "))),
            )
        })
    };
    let imp = |e: fabric::FabricError| src.err("topology.kind", e.to_string(), None);
    match kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => {
            let conc = t.hosts_per_switch.unwrap_or(1);
            let k: Vec<u32> = match (&t.k, kind) {
                (None, _) => {
                    return Err(src.err(
                        "topology",
                        format!("a {kname} topology needs `k`"),
                        Some("e.g. k = [8, 8] or k = 8 with n = 2"),
                    ));
                }
                (Some(Radix::One(k)), TopoKind::Ring) => vec![*k],
                (Some(Radix::Many(_)), TopoKind::Ring) => {
                    return Err(src.err(
                        "topology.k",
                        "a ring takes one number of switches",
                        Some("e.g. k = 16"),
                    ));
                }
                (Some(Radix::One(k)), _) => vec![*k; t.n.unwrap_or(2) as usize],
                (Some(Radix::Many(v)), _) => {
                    if t.n.is_some_and(|n| n as usize != v.len()) {
                        return Err(src.err(
                            "topology.n",
                            format!("n = {} but k lists {} dimensions", t.n.unwrap_or(0), v.len()),
                            None,
                        ));
                    }
                    v.clone()
                }
            };
            // (Its size is what a cube builder can refuse: the line of `k` is the one to show.)
            fabric::mesh::cube(&k, kind != TopoKind::Mesh, conc, net, host, sw)
                .map_err(|e| src.err("topology.k", e.to_string(), None))
        }
        TopoKind::Clos => fabric::clos::folded_clos(
            need("leaves", t.leaves)?,
            need("hosts_per_leaf", t.hosts_per_leaf)?,
            need("spines", t.spines)?,
            t.links_per_pair.unwrap_or(1),
            net,
            host,
            sw,
        )
        .map_err(imp),
        TopoKind::FatTree => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k,
                _ => {
                    return Err(src.err(
                        "topology.k",
                        "a fat tree needs k (switch arity) as one number",
                        Some("e.g. k = 4, n = 3"),
                    ));
                }
            };
            fabric::clos::fat_tree(k, need("n", t.n)?, net, host, sw).map_err(imp)
        }
        TopoKind::Fly | TopoKind::BooksimFattree => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k,
                _ => {
                    return Err(src.err(
                        "topology.k",
                        format!("a {kname} needs k (switch arity) as one number"),
                        Some("e.g. k = 4, n = 3"),
                    ));
                }
            };
            let n = need("n", t.n)?;
            if kind == TopoKind::Fly {
                fabric::fly::fly(k, n, net, host, sw).map_err(imp)
            } else {
                fabric::fattree::fat_tree(k, n, net, host, sw).map_err(imp)
            }
        }
        TopoKind::Anynet => {
            let (path, text) = topology_file(
                src,
                t,
                "an anynet topology needs `file`",
                "file = \"anynet_file\" (BookSim2's format, docs/booksim.md)",
            )?;
            fabric::anynet::parse(&path, &text, net, host, sw, cycle).map_err(|e| file_error(src, e))
        }
        TopoKind::Cmesh => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k,
                _ => {
                    return Err(src.err(
                        "topology.k",
                        "a cmesh needs k (routers along a side) as one number",
                        Some("e.g. k = 4: 4×4 routers, 64 hosts"),
                    ));
                }
            };
            fabric::cmesh::cmesh(k, t.noc_latency.unwrap_or(false), net, host, sw, cycle)
                .map_err(|e| src.err("topology.k", e.to_string(), None))
        }
        TopoKind::Flatfly => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k,
                _ => {
                    return Err(src.err(
                        "topology.k",
                        "a flatfly needs k (routers along a dimension) as one number",
                        Some("e.g. k = 4, n = 2, hosts_per_switch = 4"),
                    ));
                }
            };
            let n = t.n.unwrap_or(2);
            let c = t.hosts_per_switch.unwrap_or(1);
            let xr = c.isqrt();
            if xr * xr != c {
                return Err(src.err(
                    "topology.hosts_per_switch",
                    format!("a flatfly's routers hold a square block of hosts (BookSim2's c = xr·yr, xr = yr), not {c}"),
                    Some("1, 4, 9, 16, …"),
                ));
            }
            let routers = u64::from(k).checked_pow(n).unwrap_or(u64::MAX);
            let x = match t.routers_per_row {
                Some(x) => x,
                None => u32::try_from(routers.isqrt())
                    .ok()
                    .filter(|&x| u64::from(x) * u64::from(x) == routers)
                    .ok_or_else(|| {
                        src.err(
                            "topology",
                            format!("{k}^{n} routers are not a square: give routers_per_row"),
                            None,
                        )
                    })?,
            };
            fabric::flatfly::flatfly(k, n, xr, x, t.noc_latency.unwrap_or(false), net, host, sw, cycle)
                .map_err(imp)
        }
        TopoKind::Dragonfly => fabric::dragonfly::dragonfly(
            need("hosts_per_switch", t.hosts_per_switch)?,
            t.noc_latency.unwrap_or(false),
            net,
            host,
            sw,
            cycle,
        )
        .map_err(imp),
        TopoKind::Full => fabric::full::fully_connected(
            need("switches", t.switches)?,
            t.hosts_per_switch.unwrap_or(1),
            net,
            host,
            sw,
        )
        .map_err(imp),
        TopoKind::Macrame | TopoKind::Atoll => Err(src.err(
            "topology.kind",
            "a Macramé or ATOLL network is built with its own routing",
            None,
        )),
        TopoKind::File => {
            let (path, text) = topology_file(
                src,
                t,
                "a file topology needs `file`",
                "file = \"net.txt\" (see docs/topology-files.md)",
            )?;
            fabric::irregular::parse(&path, &text, net, host, sw, Some(cycle)).map_err(|e| file_error(src, e))
        }
    }
}

/// The path (as written in messages) and text of the file `topology.file` names, for a
/// topology that needs one (`missing` and `hint` when it names none).
fn topology_file(src: &Source, t: &RawTopology, missing: &str, hint: &str) -> R<(String, String)> {
    let f = t
        .file
        .as_ref()
        .ok_or_else(|| src.err("topology", missing, Some(hint)))?;
    let path = src.dir.join(f);
    let text = super::read_text(&path, 256).map_err(|e| {
        src.err(
            "topology.file",
            format!("cannot read {}: {e}", path.display()),
            None,
        )
    })?;
    Ok((path.display().to_string(), text))
}

/// An error in the file `topology.file` names (its own file and line in the message), at
/// that key's line of the config.
fn file_error(src: &Source, e: impl std::fmt::Display) -> ConfigError {
    ConfigError {
        file: src.file.to_string(),
        line: locate(src.text, &parse_path("topology.file")),
        key: "topology.file".into(),
        msg: e.to_string(),
        hint: None,
        origin: None,
    }
}

/// A Macramé network (`../shared/systems/ieee1355.md`): its STC104s, DS links and interval
/// tables are the hardware's, so channel and switch keys do not apply.
pub(super) fn macrame(src: &Source, raw: &RawConfig) -> R<(Fabric, Routing)> {
    use crate::systems::ieee1355::net::{Net, RouteMode, Topo, fabric_and_routing, with_output_fifos};
    let t = &raw.topology;
    let hint = "a macrame topology takes: network (clos, grid, torus), nodes";
    topology_keys(src, t)?;
    let topo = match t.network.as_deref() {
        Some(n) => Topo::parse(n).ok_or_else(|| {
            src.err(
                "topology.network",
                format!("unknown Macramé network `{n}`"),
                Some("clos, grid or torus"),
            )
        })?,
        None => return Err(src.err("topology", "a macrame topology needs `network`", Some(hint))),
    };
    let nodes = t
        .nodes
        .ok_or_else(|| src.err("topology", "a macrame topology needs `nodes`", Some(hint)))?;
    if let Some(k) = channel_key(&raw.channel) {
        return Err(src.err(
            &format!("channel.{k}"),
            "a Macramé network has DS links (100 MBaud, tokens, 32-character FIFOs)",
            Some("remove the [channel] section"),
        ));
    }
    if let Some(k) = raw.host_channel.as_ref().and_then(channel_key) {
        return Err(src.err(
            &format!("host_channel.{k}"),
            "a Macramé network has DS links",
            Some("remove the [host_channel] section"),
        ));
    }
    if let Some(k) = switch_key(&raw.switch) {
        return Err(src.err(
            &format!("switch.{k}"),
            "a Macramé network has STC104 switches",
            Some("remove the [switch] section"),
        ));
    }
    let r = &raw.routing;
    if r.algorithm.is_some_and(|a| a != AlgoKind::Interval) {
        return Err(src.err(
            "routing.algorithm",
            "a Macramé network routes by STC104 interval tables",
            Some("algorithm = \"interval\", or leave it out"),
        ));
    }
    for (k, given) in [
        ("dateline", r.dateline.is_some()),
        ("dateline_class", r.dateline_class.is_some()),
        ("ties", r.ties.is_some()),
        ("root", r.root.is_some()),
        ("paths", r.paths.is_some()),
        ("route", !r.route.is_empty()),
    ] {
        if given {
            return Err(src.err(
                &format!("routing.{k}"),
                "does not apply to interval routing",
                Some("interval routing takes: adaptive"),
            ));
        }
    }
    let route = if r.adaptive.unwrap_or(true) {
        RouteMode::Adaptive
    } else {
        RouteMode::Deterministic
    };
    let net = Net::new(topo, nodes, route);
    let (fab, routing) = fabric_and_routing(&net).map_err(|m| src.err("topology.nodes", m, None))?;
    Ok((with_output_fifos(fab, net.buffering), routing))
}

/// The counts of a generated topology, from its keys, before it is built (`None` for
/// kinds whose size is fixed or bounded by a file); with `tables` where its routing builds
/// per-switch tables. Invalid sizes are left to the builders to refuse.
pub(super) fn planned_counts(
    t: &RawTopology,
    r: &RawRouting,
    net: &LinkParams,
    host: &LinkParams,
) -> Option<Counts> {
    let conc = t.hosts_per_switch.unwrap_or(1) as u128;
    // (switches, hosts, switch-to-switch channels), in u128: sizes far past any machine.
    let (s, h, cn): (u128, u128, u128) = match t.kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => {
            let k: Vec<u128> = match (&t.k, t.kind) {
                (Some(Radix::One(k)), TopoKind::Ring) => vec![*k as u128],
                (Some(Radix::One(k)), _) => vec![*k as u128; t.n.unwrap_or(2).min(64) as usize],
                (Some(Radix::Many(v)), _) => v.iter().map(|&x| x as u128).collect(),
                _ => return None,
            };
            if k.iter().any(|&x| x < 2) {
                return None;
            }
            let s: u128 = k.iter().try_fold(1u128, |a, &x| a.checked_mul(x))?;
            let wrap = t.kind != TopoKind::Mesh;
            let cn = k
                .iter()
                .map(|&x| 2 * (if wrap { x } else { x - 1 }) * (s / x))
                .sum();
            (s, s * conc, cn)
        }
        TopoKind::Clos => {
            let (l, hl, sp) = (t.leaves? as u128, t.hosts_per_leaf? as u128, t.spines? as u128);
            let m = t.links_per_pair.unwrap_or(1) as u128;
            (l + sp, l * hl, 2 * l * sp * m)
        }
        TopoKind::FatTree | TopoKind::BooksimFattree => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k as u128,
                _ => return None,
            };
            let n = t.n?.min(64);
            let h = k.checked_pow(n)?;
            (n as u128 * h / k.max(1), h, 2 * (n.saturating_sub(1)) as u128 * h)
        }
        TopoKind::Full => {
            let s = t.switches? as u128;
            (s, s * conc, s * s.saturating_sub(1))
        }
        TopoKind::Fly => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k as u128,
                _ => return None,
            };
            let n = t.n?.min(64);
            let h = k.checked_pow(n)?;
            (n as u128 * h / k.max(1), h, n.saturating_sub(1) as u128 * h)
        }
        TopoKind::Cmesh => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k as u128,
                _ => return None,
            };
            (k * k, 4 * k * k, 4 * k * k)
        }
        TopoKind::Dragonfly => {
            let d = fabric::dragonfly::Dims::new(t.hosts_per_switch?.min(64));
            let (s, cn) = (d.routers() as u128, d.routers() as u128 * (3 * d.p as u128 - 1));
            (s, s * d.p as u128, cn)
        }
        TopoKind::Flatfly => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k as u128,
                _ => return None,
            };
            let n = t.n.unwrap_or(2).min(64);
            let s = k.checked_pow(n)?;
            (s, s * conc, s * k.saturating_sub(1) * n as u128)
        }
        _ => return None,
    };
    let algo = r.algorithm;
    let tables = match t.kind {
        // Deterministic routes on a k-ary n-tree are computed (`routing::tree`).
        TopoKind::FatTree if algo.is_none_or(|a| a == AlgoKind::FatTree) && !r.adaptive.unwrap_or(false) => {
            false
        }
        TopoKind::Clos
        | TopoKind::FatTree
        | TopoKind::BooksimFattree
        | TopoKind::Full
        | TopoKind::Fly
        | TopoKind::Cmesh
        | TopoKind::Flatfly
        | TopoKind::Dragonfly => algo.is_none_or(|a| a != AlgoKind::Source),
        _ => matches!(
            algo,
            Some(AlgoKind::Updown | AlgoKind::Minimal | AlgoKind::Source)
        ),
    };
    let ch = 2 * h;
    let c = |x: u128| x.min(u64::MAX as u128) as u64;
    Some(Counts {
        switches: c(s),
        hosts: c(h),
        channels: c(cn + ch),
        vcs: c(cn * net.vcs as u128 + ch * host.vcs as u128),
        slots: c(cn * net.vcs as u128 * net.buffer as u128 + ch * host.vcs as u128 * host.buffer as u128),
        // (A dragonfly's tables have two classes: from a node and from a router.)
        table_entries: match (tables, t.kind) {
            (false, _) => 0,
            (true, TopoKind::Dragonfly) => c(2 * s * h),
            (true, _) => c(s * h),
        },
    })
}

/// What to change when a network does not fit in memory.
pub(super) fn smaller(kind: TopoKind) -> &'static str {
    match kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => {
            "a smaller topology.k or hosts_per_switch, fewer channel.vcs or a smaller channel.buffer"
        }
        TopoKind::Clos => {
            "fewer topology.leaves, hosts_per_leaf or spines, fewer channel.vcs or a smaller channel.buffer"
        }
        TopoKind::FatTree
        | TopoKind::BooksimFattree
        | TopoKind::Fly
        | TopoKind::Cmesh
        | TopoKind::Flatfly => "a smaller topology.k or n, fewer channel.vcs or a smaller channel.buffer",
        TopoKind::Dragonfly => {
            "a smaller topology.hosts_per_switch, fewer channel.vcs or a smaller channel.buffer"
        }
        TopoKind::Full => {
            "fewer topology.switches or hosts_per_switch, fewer channel.vcs or a smaller channel.buffer"
        }
        _ => "a smaller network, fewer VCs or smaller buffers",
    }
}

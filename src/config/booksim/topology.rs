//! BookSim2's networks onto reef's `[topology]`: `topology` and the keys that size it (`k`
//! and `n`, a cmesh's or flatfly's concentration, an anynet's `network_file`), checked as
//! BookSim2 asserts them. The dragonfly's keys are in `dragonfly`.

use super::map::{Cfg, R};
use super::toml_out::{Toml, quote};
use crate::fabric::anynet::{self, AnyNet};
use std::path::Path;

/// BookSim2's networks that reef runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Topo {
    /// `mesh` or `torus`: a k-ary n-cube, one node a router (kncube.cpp).
    Cube { torus: bool },
    /// `fly`: a k-ary n-fly (fly.cpp).
    Fly,
    /// `fattree`: a k-ary n-tree (fattree.cpp).
    FatTree,
    /// `anynet`: routers, nodes and links from `network_file` (anynet.cpp).
    AnyNet,
    /// `cmesh`: a k×k mesh of routers of four nodes, with express channels (cmesh.cpp).
    CMesh,
    /// `flatfly`: the on-chip flattened butterfly (flatfly_onchip.cpp).
    FlatFly,
    /// `dragonflynew`: the dragonfly (dragonfly.cpp).
    Dragonfly,
}

/// The concentration keys of a cmesh or flatfly, checked as BookSim2 asserts them
/// (`x == y`, `xr == yr`, `c == xr · yr`): returns (`c`, `x`, `xr`).
fn concentration(c: &Cfg, topology: &str) -> R<(i64, i64, i64)> {
    let conc = c.int_in("c", 1, 1 << 16)?;
    let (x, y) = (c.int_in("x", 1, 1 << 16)?, c.int("y"));
    let (xr, yr) = (c.int_in("xr", 1, 1 << 8)?, c.int("yr"));
    if x != y {
        return Err(c.err(
            "y",
            format!("BookSim2's {topology} is built for as many routers in y as in x (x = {x}, y = {y}: it asserts x == y)"),
            None,
        ));
    }
    if xr != yr {
        return Err(c.err(
            "yr",
            format!("BookSim2's {topology} is built for square blocks of nodes (xr = {xr}, yr = {yr}: it asserts xr == yr)"),
            None,
        ));
    }
    if conc != xr * yr {
        return Err(c.err(
            "c",
            format!(
                "c = {conc} nodes a router, but xr × yr = {}: BookSim2 asserts c == xr · yr",
                xr * yr
            ),
            None,
        ));
    }
    Ok((conc, x, xr))
}

/// `network_file`, read and checked as BookSim2's anynet reads it (errors name that file
/// and line), and the path to write in the translation. BookSim2 opens it relative to its
/// working directory; reef looks next to the config first (as for every file a reef config
/// names), then in the working directory.
fn network_file(c: &Cfg) -> R<(AnyNet, String)> {
    let name = c.str("network_file");
    if name.is_empty() {
        return Err(c.err(
            "topology",
            "anynet needs network_file (BookSim2: \"No network file name provided\")",
            Some("network_file = anynet_file; (relative to the config's directory)"),
        ));
    }
    let dir = Path::new(c.file).parent().unwrap_or(Path::new(""));
    let beside = dir.join(&name);
    let (path, shown) = if beside.is_file() {
        (beside, name.clone())
    } else if Path::new(&name).is_file() {
        let abs = std::env::current_dir()
            .map(|d| d.join(&name))
            .unwrap_or_else(|_| Path::new(&name).to_path_buf());
        c.note(
            "network_file",
            &format!(
                "not next to the config ({}): read from the working directory, as BookSim2 does ({})",
                beside.display(),
                abs.display()
            ),
        );
        let shown = abs.display().to_string();
        (abs, shown)
    } else {
        return Err(c.err(
            "network_file",
            format!(
                "cannot read `{name}`: no such file next to the config ({}) or in the working directory",
                beside.display()
            ),
            Some("reef reads network_file relative to the config's directory, then the working directory"),
        ));
    };
    let text = crate::config::read_text(&path, 256).map_err(|e| {
        c.err(
            "network_file",
            format!("cannot read {}: {e}", path.display()),
            None,
        )
    })?;
    let net = anynet::read(&path.display().to_string(), &text).map_err(|e| {
        c.err(
            "network_file",
            e.to_string(),
            Some("BookSim2's anynet format: `router 0 node 0 node 1 router 1 5` (docs/booksim.md)"),
        )
    })?;
    Ok((net, shown))
}

/// BookSim2's `use_noc_latency` on a cmesh or flatfly: channels as long as their wires
/// (`topology.noc_latency`).
fn noc_latency(c: &Cfg, t: &mut Toml) {
    let noc = c.int("use_noc_latency") == 1;
    t.put(
        c,
        "topology",
        "noc_latency",
        noc.to_string(),
        &["use_noc_latency"],
    );
}

/// The network, `topology` as named, and the keys that size it. Returns the network,
/// `(k, n)` of a cube, fly or fat tree, and the number of nodes.
pub(super) fn topology(c: &Cfg, t: &mut Toml, topology: &str) -> R<(Topo, i64, i64, i64)> {
    let net = match topology {
        "mesh" => Topo::Cube { torus: false },
        "torus" => Topo::Cube { torus: true },
        "fly" => Topo::Fly,
        "fattree" => Topo::FatTree,
        "anynet" => Topo::AnyNet,
        "cmesh" => Topo::CMesh,
        "flatfly" => Topo::FlatFly,
        "dragonflynew" => Topo::Dragonfly,
        other => {
            return Err(c.err(
                "topology",
                format!("reef does not model BookSim2's `{other}` topology yet"),
                Some(
                    "reef runs BookSim2's mesh, torus, fly, fattree, anynet, cmesh, flatfly and dragonflynew; docs/booksim.md lists what is planned",
                ),
            ));
        }
    };
    // (k, n) of a cube, fly or fat tree (k^n nodes), and the node count.
    let (k, n, nodes) = match net {
        Topo::Cube { .. } | Topo::Fly | Topo::FatTree => {
            let n = c.int_in("n", 1, 8)?;
            let k = c.int_in("k", 2, 65_535)?;
            let nodes = (0..n)
                .try_fold(1i64, |a, _| a.checked_mul(k))
                .filter(|&v| v <= 1 << 24);
            let Some(nodes) = nodes else {
                let what = match net {
                    Topo::Fly => "fly",
                    Topo::FatTree => "tree",
                    _ => "cube",
                };
                return Err(c.err(
                    "k",
                    format!("a {k}-ary {n}-{what} has more than 2^24 nodes"),
                    None,
                ));
            };
            let kind = if net == Topo::FatTree {
                "booksim-fattree"
            } else {
                topology
            };
            t.put(c, "topology", "kind", quote(kind), &["topology"]);
            if matches!(net, Topo::Fly | Topo::FatTree) {
                t.put(c, "topology", "k", k.to_string(), &["k"]);
                t.put(c, "topology", "n", n.to_string(), &["n"]);
            } else {
                let ks = vec![k.to_string(); n as usize].join(", ");
                t.put(c, "topology", "k", format!("[{ks}]"), &["k", "n"]);
            }
            (k, n, nodes)
        }
        Topo::AnyNet => {
            let (path, shown) = network_file(c)?;
            t.put(c, "topology", "kind", quote("anynet"), &["topology"]);
            t.put(c, "topology", "file", quote(&shown), &["network_file"]);
            let hosts = i64::from(path.hosts);
            (hosts, 1, hosts)
        }
        Topo::CMesh => {
            let n = c.int("n");
            if n != 2 {
                return Err(c.err(
                    "n",
                    format!("BookSim2's cmesh is built for n = 2 only (it asserts n <= 2, and n = 1 overruns its channels), not {n}"),
                    None,
                ));
            }
            let k = c.int_in("k", 2, 1024)?;
            if k % 2 != 0 {
                return Err(c.err(
                    "k",
                    format!("BookSim2's cmesh joins edge routers k/2 apart by express channels: k must be even, not {k}"),
                    None,
                ));
            }
            let (conc, _, _) = concentration(c, "cmesh")?;
            if conc != 4 {
                return Err(c.err(
                    "c",
                    format!("BookSim2's cmesh is built for c = 4 (xr = yr = 2) only: it asserts c == 4, not {conc}"),
                    None,
                ));
            }
            t.put(
                c,
                "topology",
                "kind",
                quote("cmesh"),
                &["topology", "n", "c", "xr", "yr", "x", "y"],
            );
            t.put(c, "topology", "k", k.to_string(), &["k"]);
            noc_latency(c, t);
            (k, n, 4 * k * k)
        }
        Topo::FlatFly => {
            let n = c.int_in("n", 1, 4)?;
            let k = c.int_in("k", 2, 65_535)?;
            let routers = (0..n)
                .try_fold(1i64, |a, _| a.checked_mul(k))
                .filter(|&v| v <= 1 << 16)
                .ok_or_else(|| {
                    c.err(
                        "k",
                        format!("a flatfly of {k}^{n} routers is more than reef builds (2^16)"),
                        None,
                    )
                })?;
            let (conc, x, _) = concentration(c, "flatfly")?;
            if routers % x != 0 {
                return Err(c.err(
                    "x",
                    format!("{routers} routers do not fill rows of x = {x}: BookSim2 would connect nodes that do not exist"),
                    Some("x divides k^n (x = k for n = 2)"),
                ));
            }
            if routers * conc > 1 << 24 {
                return Err(c.err(
                    "c",
                    format!("{routers} routers of {conc} nodes are more than 2^24 nodes"),
                    None,
                ));
            }
            t.put(c, "topology", "kind", quote("flatfly"), &["topology"]);
            t.put(c, "topology", "k", k.to_string(), &["k"]);
            t.put(c, "topology", "n", n.to_string(), &["n"]);
            t.put(
                c,
                "topology",
                "hosts_per_switch",
                conc.to_string(),
                &["c", "xr", "yr"],
            );
            t.put(c, "topology", "routers_per_row", x.to_string(), &["x", "y"]);
            noc_latency(c, t);
            (k, n, routers * conc)
        }
        Topo::Dragonfly => (0, 1, super::dragonfly::topology(c, t)?),
    };
    Ok((net, k, n, nodes))
}

//! A config's `[routing]`: its algorithm (or the topology's default) and the keys that
//! apply to it, checked against the network and built into its [`Routing`].

use super::build::*;
use super::raw::*;
use crate::fabric::{self, Fabric};
use crate::routing::{
    Routing,
    dor::{DatelineClass, Dor, DorOptions, Ties},
    source::SourceRoutes,
    table, tree, updown,
};

/// Valiant or XY/YX routing on a mesh (or, Valiant, a torus or ring), its VCs split into
/// classes: 2 (the phases, the orders) or on a torus 4 (dateline classes × phases).
fn randomized(src: &Source, algo: AlgoKind, fab: &Fabric, kind: TopoKind) -> R<Routing> {
    let valiant = algo == AlgoKind::Valiant;
    let (name, fits) = if valiant {
        (
            "valiant",
            matches!(kind, TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring),
        )
    } else if algo == AlgoKind::AdaptiveXyYx {
        ("adaptive-xy-yx", kind == TopoKind::Mesh)
    } else {
        ("xy-yx", kind == TopoKind::Mesh)
    };
    let adaptive = algo == AlgoKind::AdaptiveXyYx;
    let built = match fits {
        false => None,
        true if valiant => crate::routing::valiant::Valiant::new(fab).map(Routing::Valiant),
        true => crate::routing::xy_yx::XyYx::new(fab, adaptive).map(Routing::XyYx),
    };
    let Some(routing) = built else {
        return Err(src.err(
            "routing.algorithm",
            format!(
                "{name} routing runs on a {}",
                if valiant { "mesh, torus or ring" } else { "mesh" }
            ),
            Some("leave routing.algorithm out to get the topology's default"),
        ));
    };
    let net_vcs = net_vcs(fab);
    let wrap = matches!(kind, TopoKind::Torus | TopoKind::Ring);
    let classes = if valiant {
        crate::routing::valiant::Valiant::vcs_needed(wrap)
    } else {
        2
    };
    if !net_vcs.is_multiple_of(classes) {
        let what = match (valiant, wrap) {
            (true, true) => "two dateline classes of two phases each",
            (true, false) => "two classes, one a phase",
            (false, _) => "two classes, x first and y first",
        };
        return Err(src.err(
            "channel.vcs",
            format!(
                "{name} routing splits the VCs into {what}: it needs a multiple of {classes}, not {net_vcs}"
            ),
            Some(&format!(
                "set channel.vcs = {}",
                classes.max(net_vcs.next_multiple_of(classes))
            )),
        ));
    }
    Ok(routing)
}

/// Minimal adaptive routing with an escape channel on a mesh (`booksim`: BookSim2's as it
/// runs, on a torus too): VC 0 of every channel between switches is the escape, so each
/// needs another VC or more (and a separable VC allocator: `build` checks it); on a torus
/// VCs 0 and 1 are and VC 3 the adaptive one, so 2 VCs (no adaptive one) or 4 and more.
fn min_adapt(src: &Source, fab: &Fabric, kind: TopoKind, booksim: bool) -> R<Routing> {
    let name = if booksim { "booksim-min-adapt" } else { "min-adapt" };
    let built = match kind {
        TopoKind::Mesh => crate::routing::min_adapt::MinAdapt::new(fab, booksim),
        TopoKind::Torus if booksim => crate::routing::min_adapt::MinAdapt::new(fab, booksim),
        _ => None,
    };
    let Some(m) = built else {
        return Err(src.err(
            "routing.algorithm",
            if booksim {
                format!("{name} routing runs on a mesh or a torus")
            } else {
                format!("{name} routing runs on a mesh")
            },
            Some("leave routing.algorithm out to get the topology's default"),
        ));
    };
    if kind == TopoKind::Torus {
        let vcs = net_vcs(fab);
        if vcs == 1 || vcs == 3 {
            return Err(src.err(
                "channel.vcs",
                format!(
                    "{name} routing on a torus keeps VCs 0 and 1 as its escape channels (a dateline \
                     class each) and routes adaptively on VC 3: it needs 2 VCs (no adaptive one) or \
                     4 or more, not {vcs}"
                ),
                Some("set channel.vcs = 4"),
            ));
        }
    }
    if let Some(c) = fab
        .channels
        .iter()
        .find(|c| fab.is_switch(c.src) && fab.is_switch(c.dst) && c.params.vcs < 2)
    {
        return Err(src.err(
            "channel.vcs",
            format!(
                "{name} routing keeps VC 0 of each channel between switches as its escape channel \
                 and routes adaptively on the others: it needs 2 VCs or more, not {}",
                c.params.vcs
            ),
            Some("set channel.vcs = 2"),
        ));
    }
    Ok(Routing::MinAdapt(m))
}

/// BookSim2's flatfly routings that draw or choose: the VCs split into classes by order (x
/// or y first) and by phase (towards the intermediate router and from it), and for
/// `flatfly-ugal-pni` by a digit of the destination, so a multiple of their number.
/// `flatfly-ugal-pni` also needs `k` nodes a router (BookSim2 asserts `k = c`: its digit
/// counts ports out of the last dimension) and `k` injection VCs or more.
fn flatfly(src: &Source, algo: AlgoKind, fab: &Fabric) -> R<Routing> {
    use crate::routing::flatfly::{Flatfly, Kind};
    let kind = match algo {
        AlgoKind::FlatflyValiant => Kind::Valiant,
        AlgoKind::FlatflyUgal => Kind::Ugal,
        AlgoKind::FlatflyUgalPni => Kind::UgalPni,
        AlgoKind::FlatflyXyYx => Kind::XyYx,
        AlgoKind::FlatflyAdaptiveXyYx => Kind::AdaptiveXyYx,
        _ => Kind::UgalXyYx,
    };
    let name = kind.name();
    let Some(f) = Flatfly::new(fab, kind) else {
        return Err(src.err(
            "routing.algorithm",
            format!("{name} routing runs on a flatfly"),
            Some("leave routing.algorithm out to get the topology's default"),
        ));
    };
    let (k, c) = (f.k(), f.hosts_per_router());
    if kind == Kind::UgalPni && c != k {
        return Err(src.err(
            "topology.hosts_per_switch",
            format!(
                "{name} routing splits the VCs by a digit of the destination that counts routers in a dimension or nodes at a router, so it needs k = {k} nodes a router (BookSim2 asserts k = c), not {c}"
            ),
            Some(&format!("set topology.hosts_per_switch = {k} (a square: xr × xr nodes)")),
        ));
    }
    let (vcs, classes) = (u32::from(net_vcs(fab)), kind.classes(k));
    if !kind.vcs_fit(k, vcs) {
        return Err(src.err(
            "channel.vcs",
            format!(
                "{name} routing splits the VCs into {}: it needs {}, not {vcs}",
                kind.classes_named(),
                kind.vcs_needed(k)
            ),
            Some(&format!(
                "set channel.vcs = {}",
                vcs.max(classes).next_multiple_of(classes)
            )),
        ));
    }
    let host_vcs = u32::from(f.host_vcs());
    if host_vcs < kind.split(k) {
        return Err(src.err(
            "host_channel.vcs",
            format!(
                "{name} routing splits the injection VCs {k} ways by the destination router's digit 0: it needs {k} or more, not {host_vcs}"
            ),
            Some(&format!("set host_channel.vcs = {}", vcs)),
        ));
    }
    Ok(Routing::Flatfly(f))
}

/// The VCs of the fabric's switch-to-switch channels (the first such channel's; 1 if none).
fn net_vcs(fab: &Fabric) -> u8 {
    fab.channels
        .iter()
        .find(|c| fab.is_switch(c.src) && fab.is_switch(c.dst))
        .map_or(1, |c| c.params.vcs)
}

pub(super) fn routing(src: &Source, r: &RawRouting, fab: &Fabric, kind: TopoKind) -> R<Routing> {
    let algo = r.algorithm.unwrap_or(match kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => AlgoKind::Dor,
        TopoKind::Clos => AlgoKind::Clos,
        TopoKind::FatTree => AlgoKind::FatTree,
        TopoKind::Full => AlgoKind::Direct,
        TopoKind::File => AlgoKind::Updown,
        TopoKind::Fly => AlgoKind::DestTag,
        TopoKind::BooksimFattree => AlgoKind::Nca,
        TopoKind::Anynet => AlgoKind::AnynetMin,
        TopoKind::Cmesh => AlgoKind::CmeshDor,
        TopoKind::Flatfly => AlgoKind::FlatflyMin,
        TopoKind::Dragonfly => AlgoKind::DragonflyMin,
        TopoKind::Macrame => AlgoKind::Interval,
        TopoKind::Atoll => AlgoKind::Source,
    });
    let adaptive = r.adaptive.unwrap_or(false);
    let mismatch = |what: &str| {
        src.err(
            "routing.algorithm",
            format!("{what} routing needs a matching topology"),
            Some("leave routing.algorithm out to get the topology's default"),
        )
    };
    for (k, given) in [
        ("dateline", r.dateline.is_some()),
        ("dateline_class", r.dateline_class.is_some()),
        ("ties", r.ties.is_some()),
    ] {
        if given && algo != AlgoKind::Dor {
            return Err(src.err(
                &format!("routing.{k}"),
                "applies to dimension-order routing on a torus",
                None,
            ));
        }
    }
    if r.adaptive.is_some()
        && !matches!(
            algo,
            AlgoKind::Clos | AlgoKind::FatTree | AlgoKind::Updown | AlgoKind::Minimal | AlgoKind::Source
        )
    {
        // (Source routes refuse it below with their own reason; interval routing takes it
        // in the Macramé builder.)
        return Err(src.err(
            "routing.adaptive",
            "adaptive applies to clos, fat-tree, updown and minimal routing (one path each otherwise)",
            None,
        ));
    }
    if r.root.is_some() && !matches!(algo, AlgoKind::Updown | AlgoKind::Source) {
        return Err(src.err("routing.root", "root applies to up*/down* routing", None));
    }
    if !r.route.is_empty() && algo != AlgoKind::Source {
        return Err(src.err(
            "routing.route",
            "explicit routes need algorithm = \"source\"",
            None,
        ));
    }
    if r.paths.is_some() && algo != AlgoKind::Source {
        return Err(src.err(
            "routing.paths",
            "paths choose the routes of algorithm = \"source\"",
            None,
        ));
    }
    if r.in_packet.is_some() && algo != AlgoKind::Source {
        return Err(src.err(
            "routing.in_packet",
            "in_packet applies to the routes of algorithm = \"source\"",
            None,
        ));
    }
    let root = r.root.unwrap_or(0);
    if root >= fab.switches {
        return Err(src.err(
            "routing.root",
            format!("switch {root} does not exist (0..{})", fab.switches),
            None,
        ));
    }
    Ok(match algo {
        AlgoKind::Dor => {
            let net_vcs = net_vcs(fab);
            let wrap = matches!(kind, TopoKind::Torus | TopoKind::Ring);
            let dateline = match r.dateline {
                Some(true) if !wrap => {
                    return Err(src.err("routing.dateline", "datelines are for tori and rings", None));
                }
                Some(true) if net_vcs < 2 || !net_vcs.is_multiple_of(2) => {
                    return Err(src.err(
                        "routing.dateline",
                        format!("a dateline needs an even number of VCs ≥ 2 (channel.vcs = {net_vcs})"),
                        Some("set channel.vcs = 2, or dateline = false to run without (deadlock-prone)"),
                    ));
                }
                Some(d) => d,
                None => wrap && net_vcs >= 2 && net_vcs.is_multiple_of(2),
            };
            if !wrap && (r.ties.is_some() || r.dateline_class.is_some()) {
                let k = if r.ties.is_some() {
                    "ties"
                } else {
                    "dateline_class"
                };
                return Err(src.err(&format!("routing.{k}"), "applies to tori and rings", None));
            }
            if r.dateline_class.is_some() && !dateline {
                return Err(src.err(
                    "routing.dateline_class",
                    "applies with a dateline (routing.dateline = true)",
                    None,
                ));
            }
            let opts = DorOptions {
                dateline,
                class: match r.dateline_class {
                    Some(DatelineClassKind::AtEntry) => DatelineClass::AtEntry,
                    _ => DatelineClass::OnCrossing,
                },
                ties: match r.ties {
                    Some(TiesKind::Alternate) => Ties::Alternate,
                    _ => Ties::Positive,
                },
            };
            Routing::Dor(Dor::new(fab, opts).ok_or_else(|| mismatch("dimension-order"))?)
        }
        AlgoKind::Clos => Routing::Table(table::clos(fab, adaptive).ok_or_else(|| mismatch("Clos"))?),
        // Deterministic routes on a k-ary n-tree are computed, not tabled (`routing::tree`).
        AlgoKind::FatTree if !adaptive => {
            Routing::FatTree(tree::FatTreeRoute::new(fab).ok_or_else(|| mismatch("fat-tree"))?)
        }
        AlgoKind::FatTree => {
            Routing::Table(table::fat_tree(fab, adaptive).ok_or_else(|| mismatch("fat-tree"))?)
        }
        AlgoKind::Direct => Routing::Table(table::full(fab).ok_or_else(|| mismatch("direct"))?),
        AlgoKind::DestTag => Routing::Table(table::dest_tag(fab).ok_or_else(|| mismatch("dest-tag"))?),
        AlgoKind::AnynetMin => Routing::Table(table::anynet_min(fab).ok_or_else(|| mismatch("anynet-min"))?),
        AlgoKind::CmeshDor => {
            Routing::Table(table::cmesh_dor(fab, false).ok_or_else(|| mismatch("cmesh-dor"))?)
        }
        AlgoKind::CmeshExpress => {
            Routing::Table(table::cmesh_dor(fab, true).ok_or_else(|| mismatch("cmesh-express"))?)
        }
        AlgoKind::FlatflyMin => {
            Routing::Table(table::flatfly_min(fab).ok_or_else(|| mismatch("flatfly-min"))?)
        }
        AlgoKind::FlatflyValiant
        | AlgoKind::FlatflyUgal
        | AlgoKind::FlatflyUgalPni
        | AlgoKind::FlatflyXyYx
        | AlgoKind::FlatflyAdaptiveXyYx
        | AlgoKind::FlatflyUgalXyYx => flatfly(src, algo, fab)?,
        AlgoKind::DragonflyMin | AlgoKind::DragonflyUgal => {
            use crate::routing::dragonfly::{MIN_VCS, Ugal, min};
            let ugal = algo == AlgoKind::DragonflyUgal;
            let (name, need, what) = if ugal {
                (
                    "dragonfly-ugal",
                    Ugal::VCS,
                    "VC 0 towards the intermediate router, 1 and 2 before and after the global hop (BookSim2's ugal)",
                )
            } else {
                (
                    "dragonfly-min",
                    MIN_VCS,
                    "VC 0 before the global hop and VC 1 from it on (BookSim2's min)",
                )
            };
            let routing = if ugal {
                Ugal::new(fab).map(Routing::Ugal)
            } else {
                min(fab).map(Routing::Table)
            }
            .ok_or_else(|| mismatch(name))?;
            // (The network's channels first: [channel] sets the hosts' too unless
            // [host_channel] does.)
            let net = |c: &&fabric::Channel| fab.is_switch(c.src) && fab.is_switch(c.dst);
            let short = |c: &&fabric::Channel| c.params.vcs < need;
            let found =
                (fab.channels.iter().filter(net).find(short)).or_else(|| fab.channels.iter().find(short));
            if let Some(c) = found {
                let which = if net(&c) {
                    "channel.vcs"
                } else {
                    "host_channel.vcs"
                };
                return Err(src.err(
                    which,
                    format!(
                        "{name} routing takes {what}: it needs {need} VCs, not {}",
                        c.params.vcs
                    ),
                    Some(&format!("set {which} = {need}")),
                ));
            }
            routing
        }
        AlgoKind::Nca => Routing::Table(table::nca(fab).ok_or_else(|| mismatch("nca"))?),
        AlgoKind::Valiant | AlgoKind::XyYx | AlgoKind::AdaptiveXyYx => randomized(src, algo, fab, kind)?,
        AlgoKind::MinAdapt => min_adapt(src, fab, kind, false)?,
        AlgoKind::BooksimMinAdapt => min_adapt(src, fab, kind, true)?,
        AlgoKind::Updown => Routing::Table(updown::updown(fab, root, adaptive)),
        AlgoKind::Minimal => Routing::Table(updown::minimal(fab, adaptive)),
        AlgoKind::Mosaic => Routing::Mosaic(crate::routing::mosaic::Mosaic::mesh(fab).ok_or_else(|| {
            src.err(
                "routing.algorithm",
                "mosaic routing in a config needs a 2-D mesh with one host (the node's processor) per switch",
                Some("for ATOMIC LANs of several boards see `reef reproduce atomic` and `reef routes`"),
            )
        })?),
        AlgoKind::Interval => return Err(mismatch("interval (STC104)")),
        AlgoKind::Source => {
            if adaptive {
                return Err(src.err("routing.adaptive", "source routes are fixed per packet", None));
            }
            let explicit = r
                .route
                .iter()
                .map(|x| ((x.src, x.dst), x.ports.clone()))
                .collect();
            let routes = match r.paths.unwrap_or(PathsKind::Updown) {
                PathsKind::Updown => SourceRoutes::new(fab, updown::updown(fab, root, false), explicit),
                PathsKind::Minimal => SourceRoutes::new(fab, updown::minimal(fab, false), explicit),
                PathsKind::DeadlockFree => {
                    if r.root.is_some() {
                        return Err(src.err(
                            "routing.root",
                            "root applies to up*/down* routes (paths = \"updown\")",
                            None,
                        ));
                    }
                    let placed = crate::routing::placed::Placed::new(fab)
                        .map_err(|e| src.err("routing.paths", e.to_string(), None))?;
                    SourceRoutes::placed(fab, placed, explicit)
                }
            };
            let mut routes = routes.map_err(|e| src.err("routing.route", e.to_string(), None))?;
            routes.in_packet = r.in_packet.unwrap_or(false);
            Routing::Source(routes)
        }
    })
}

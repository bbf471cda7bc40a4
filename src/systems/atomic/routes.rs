//! `reef routes`: the routes of a network, printed. For a Mosaic network (a 2-D mesh config
//! with `routing.algorithm = "mosaic"`) the ATOMIC route between every pair of processors;
//! for other routings the header symbols a packet starts with.

use crate::engine::Spec;
use crate::routing::Routing;
use crate::routing::mosaic::dec;
use std::fmt::Write;

/// The topology and every source/destination pair's route, as text.
pub fn print_routes(spec: &Spec, max_pairs: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}: {}", spec.name, spec.fabric);
    let _ = writeln!(s, "routing {}", spec.routing.name());
    match &spec.routing {
        Routing::Valiant(_) => {
            let _ = writeln!(
                s,
                "each packet goes through an intermediate switch its source draws at random: shown, \
                 the paths through switch s0"
            );
        }
        Routing::XyYx(x) if x.adaptive => {
            let _ = writeln!(
                s,
                "each packet goes x first or y first, by the credits used on the two outputs at its \
                 first switch: shown, x first"
            );
        }
        Routing::XyYx(_) => {
            let _ = writeln!(
                s,
                "each packet goes x first or y first as its source draws: shown, x first"
            );
        }
        _ => {}
    }
    if let Routing::Source(r) = &spec.routing {
        if r.in_packet {
            let _ = writeln!(
                s,
                "routes travel in the packet as routing strings: a byte a hop naming the output port, \
                 used up by the switch that reads it (the last one names the host's port)"
            );
        }
        if let Some(p) = r.placed_set() {
            let st = p.stats;
            let _ = writeln!(
                s,
                "a deadlock-free set: {} pairs of switches, {:.3} hops a pair more than shortest paths \
                 ({:.3} in its base), {} routes longer than their shortest path, the longest {} hops \
                 (diameter {}), {} channel dependencies",
                st.pairs,
                st.mean_extra_hops(),
                st.base_mean_extra_hops(),
                st.detours,
                st.longest,
                st.diameter,
                st.dependencies
            );
        }
    }
    let n = spec.fabric.num_hosts() as u32;
    let mut hdr = Vec::new();
    let mut shown = 0;
    'outer: for a in 0..n {
        for b in 0..n {
            if a == b || !spec.routing.has_route(a, b) {
                continue;
            }
            if shown >= max_pairs {
                let _ = writeln!(s, "… (more pairs not shown)");
                break 'outer;
            }
            shown += 1;
            match spec.routing.header_for(&spec.fabric, a, b, &mut hdr) {
                Ok(()) => {
                    let text = match &spec.routing {
                        Routing::Mosaic(_) => hdr
                            .chunks(2)
                            .map(|c| {
                                format!(
                                    "({})",
                                    c.iter()
                                        .map(|&x| format!("{:+}", dec(x)))
                                        .collect::<Vec<_>>()
                                        .join(",")
                                )
                            })
                            .collect::<String>(),
                        Routing::Source(r) if r.in_packet => format!(
                            "{}  ({} hop{})",
                            hdr.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" "),
                            hdr.len() - 1,
                            if hdr.len() == 2 { "" } else { "s" }
                        ),
                        _ if !hdr.is_empty() => format!("{hdr:?}"),
                        // Routed hop by hop: show the path.
                        _ => match spec.routing.path(&spec.fabric, a, b) {
                            Ok((path, choice)) => {
                                let hops: Vec<String> = path
                                    .iter()
                                    .map(|&(c, vc)| {
                                        let name = spec.fabric.channel_name(c);
                                        if vc > 0 { format!("{name} (vc {vc})") } else { name }
                                    })
                                    .collect();
                                let note = if choice { "  (adaptive: first choices)" } else { "" };
                                format!("{}{note}", hops.join(", "))
                            }
                            Err(e) => e.to_string(),
                        },
                    };
                    let _ = writeln!(s, "h{a} → h{b}: {text}");
                }
                Err(e) => {
                    let _ = writeln!(s, "h{a} → h{b}: {e}");
                }
            }
        }
    }
    s
}

/// The routes an AC computes on an ATOMIC LAN between every pair of HIs.
pub fn lan_routes(lan: &crate::fabric::mosaic::Lan) -> String {
    use crate::control::graph::MGraph;
    use crate::control::routes::{Router, Stop};
    let lf = super::net::build(lan);
    let g = MGraph::from_lan(&lf, &|_| false);
    let mut r = Router::new(&g);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} board{}, {} Mosaic nodes, {} HIs, {} cable{}",
        lan.name,
        lan.boards.len(),
        if lan.boards.len() == 1 { "" } else { "s" },
        lf.nodes,
        lf.his.len(),
        lan.cables.len(),
        if lan.cables.len() == 1 { "" } else { "s" },
    );
    for c in &lan.cables {
        let _ = writeln!(
            s,
            "  cable {} {} {} ({} ft)",
            c.a,
            if c.both { "<->" } else { "->" },
            c.b,
            c.mft as f64 / 1000.0
        );
    }
    for a in 0..lf.his.len() as u32 {
        for b in 0..lf.his.len() as u32 {
            if a == b {
                continue;
            }
            let line = match r.route(Stop::Hi(a), Stop::Hi(b)) {
                Some(rt) => format!(
                    "{} ({} nodes, {} store-and-forward)",
                    rt.text(),
                    rt.hops(),
                    rt.sf_points()
                ),
                None => "no route".into(),
            };
            let _ = writeln!(s, "h{} → h{}: {line}", lf.his[a as usize], lf.his[b as usize]);
        }
    }
    s
}

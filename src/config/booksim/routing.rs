//! BookSim2's `routing_function` onto reef's `[routing]` (and the switch's selection, where
//! BookSim2's function draws the port): the functions reef runs on each network, and why it
//! refuses the others. The dragonfly's functions are in `dragonfly`.

use super::map::{Cfg, R};
use super::toml_out::{Toml, quote};
use super::topology::Topo;

/// `routing_function` on the network `net` (`topology` as named, `torus` where it is one,
/// `vcs` its VCs a channel): BookSim2 looks up `routing_function` + "_" + `topology`.
pub(super) fn routing(c: &Cfg, t: &mut Toml, net: Topo, topology: &str, torus: bool, vcs: i64) -> R<()> {
    let rf = c.str("routing_function");
    let full = format!("{rf}_{topology}");
    let right = match net {
        Topo::Cube { torus: false } => {
            "on a mesh reef runs dor (dim_order), valiant, xy_yx, adaptive_xy_yx and min_adapt"
        }
        Topo::Cube { torus: true } => {
            "on a torus reef runs dim_order (with BookSim2's dateline), valiant and min_adapt"
        }
        Topo::Fly => "on a fly BookSim2 and reef run dest_tag",
        Topo::FatTree => "on a fattree reef runs nca and anca",
        Topo::AnyNet => "on an anynet BookSim2 and reef run min",
        Topo::CMesh => "on a cmesh reef runs dor_no_express and dor (with express channels)",
        Topo::FlatFly => {
            "on a flatfly reef runs ran_min, valiant, ugal, ugal_pni, xyyx, adaptive_xyyx and ugal_xyyx"
        }
        Topo::Dragonfly => "on a dragonflynew reef runs min and ugal",
    };
    match (full.as_str(), net) {
        ("dor_mesh" | "dim_order_mesh", Topo::Cube { torus: false }) => {
            t.put(c, "routing", "algorithm", quote("dor"), &["routing_function"]);
        }
        ("dim_order_torus", Topo::Cube { torus: true }) => {
            if vcs < 2 || vcs % 2 != 0 {
                return Err(c.err(
                    "num_vcs",
                    format!("dim_order on a torus splits the VCs into two classes at a dateline: it needs an even number, not {vcs}"),
                    None,
                ));
            }
            t.put(c, "routing", "algorithm", quote("dor"), &["routing_function"]);
            t.put(c, "routing", "dateline", "true".into(), &["routing_function"]);
            t.put(
                c,
                "routing",
                "dateline_class",
                quote("at-entry"),
                &["routing_function"],
            );
            t.put(c, "routing", "ties", quote("alternate"), &["routing_function"]);
        }
        ("valiant_mesh" | "xy_yx_mesh" | "adaptive_xy_yx_mesh", Topo::Cube { torus: false })
        | ("valiant_torus", Topo::Cube { torus: true }) => {
            let valiant = rf == "valiant";
            // BookSim2 asserts a class of at least one VC (`available_vcs > 0`); an odd count
            // makes its classes share a VC, which breaks the deadlock freedom they are for.
            let classes = if valiant {
                crate::routing::valiant::Valiant::vcs_needed(torus)
            } else {
                2
            };
            if vcs % classes as i64 != 0 {
                let what = match (valiant, torus) {
                    (true, true) => "two dateline classes of two phases each (the VCs by four)",
                    (true, false) => "two classes, one a phase (the VCs in halves)",
                    (false, _) => "two classes, x first and y first (the VCs in halves)",
                };
                return Err(c.err(
                    "num_vcs",
                    format!("{rf} on a {topology} splits the VCs into {what}: it needs a multiple of {classes}, not {vcs}"),
                    None,
                ));
            }
            let adaptive = rf == "adaptive_xy_yx";
            let algo = match (valiant, adaptive) {
                (true, _) => "valiant",
                (false, true) => "adaptive-xy-yx",
                (false, false) => "xy-yx",
            };
            t.put(c, "routing", "algorithm", quote(algo), &["routing_function"]);
            c.note(
                "routing_function",
                match (valiant, adaptive) {
                    (true, _) => {
                        "reef draws each packet's intermediate router from its source's own seeded stream, \
                         not BookSim2's generator at the first router (the same distribution)"
                    }
                    (false, true) => {
                        "reef breaks a tie of the credits used on the two outputs by a coin from the \
                         packet's source's own seeded stream, not BookSim2's generator at the first \
                         router (the same distribution)"
                    }
                    (false, false) => {
                        "reef draws each packet's order (x or y first) from its source's own seeded \
                         stream, not BookSim2's generator at the first router (the same distribution)"
                    }
                },
            );
            if valiant && torus {
                c.note(
                    "routing_function",
                    "BookSim2's valiant_torus cannot run (it reads an unset ring class on a hop that \
                     goes on in the same dimension, and its assertion fails); reef keeps the class \
                     along the dimension, as dim_order_torus does",
                );
            }
        }
        ("min_adapt_torus", Topo::Cube { torus: true }) | ("min_adapt_mesh", Topo::Cube { torus: false }) => {
            let torus = matches!(net, Topo::Cube { torus: true });
            // On a mesh VC 0 is the escape channel: BookSim2 needs another (its adaptive
            // range 1..=0 is empty, and a packet off the escape channel could never get
            // back on). On a torus VCs 0 and 1 are the escape channels, VC 3 the adaptive
            // one; BookSim2 takes a node's packet to be on its last VC: with 2 that is an
            // escape VC and the adaptive one is never asked for; with 1 or 3 it asks for a
            // VC the channel does not have (iq_router.cpp:624: `vc_start >= 0 && vc_start
            // < _vcs` fails).
            if torus && (vcs == 1 || vcs == 3) {
                return Err(c.err(
                    "num_vcs",
                    format!("min_adapt on a torus keeps VCs 0 and 1 as its escape channels and routes adaptively on VC 3: it needs 2 VCs (then it is dim_order) or 4 or more, not {vcs} (BookSim2's VC allocator asserts `vc_start < _vcs`)"),
                    None,
                ));
            }
            if !torus && vcs < 2 {
                return Err(c.err(
                    "num_vcs",
                    format!("min_adapt keeps VC 0 as its escape channel and routes adaptively on the others: it needs 2 VCs or more, not {vcs}"),
                    None,
                ));
            }
            t.put(
                c,
                "routing",
                "algorithm",
                quote("booksim-min-adapt"),
                &["routing_function"],
            );
            c.note(
                "routing_function",
                if torus {
                    "BookSim2's min_adapt_torus keeps one output of each priority (its OutputSet is a \
                     set ordered by priority alone): a packet may take VC 3 of the minimal direction in \
                     the lowest dimension left (half way round, the negative one) or the escape VC (0 or \
                     1, by its dateline class) of dimension order, and stays on the escape once there; \
                     VC 2 and VCs from 4 carry packets only from their nodes. The separable VC allocators \
                     take the escape last, iSLIP (the default) reads no priority. reef runs it so \
                     (booksim-min-adapt)"
                } else {
                    "BookSim2's min_adapt keeps one output of each priority (its OutputSet is a set \
                     ordered by priority alone): every packet takes dimension order's path, on any \
                     VC, and stays on VC 0 (the escape) once there; the separable VC allocators \
                     take VC 0 last, iSLIP (the default) reads no priority. reef runs it so \
                     (booksim-min-adapt); min-adapt is the adaptive routing it was meant to be"
                },
            );
        }
        ("dest_tag_fly", Topo::Fly) => {
            t.put(
                c,
                "routing",
                "algorithm",
                quote("dest-tag"),
                &["routing_function"],
            );
        }
        ("nca_fattree" | "anca_fattree", Topo::FatTree) => {
            t.put(c, "routing", "algorithm", quote("nca"), &["routing_function"]);
            // fattree_nca draws the up port at random whatever its state (RandomInt);
            // fattree_anca draws two and takes the one with fewer credits used.
            let anca = rf == "anca";
            let selection = if anca {
                "two-random-least-used"
            } else {
                "random-any"
            };
            t.put(c, "switch", "selection", quote(selection), &["routing_function"]);
            if anca {
                c.note(
                    "routing_function",
                    "reef reads the credits used on the two up ports as the head asks for its output \
                     at the router; BookSim2 with routing_delay = 0 routes a router ahead, as the head \
                     leaves the router before, and reads them then",
                );
            }
        }
        ("min_anynet", Topo::AnyNet) => {
            t.put(
                c,
                "routing",
                "algorithm",
                quote("anynet-min"),
                &["routing_function"],
            );
        }
        ("dor_no_express_cmesh", Topo::CMesh) => {
            t.put(
                c,
                "routing",
                "algorithm",
                quote("cmesh-dor"),
                &["routing_function"],
            );
        }
        ("dor_cmesh", Topo::CMesh) => {
            t.put(
                c,
                "routing",
                "algorithm",
                quote("cmesh-express"),
                &["routing_function"],
            );
        }
        ("ran_min_flatfly", Topo::FlatFly) => {
            t.put(
                c,
                "routing",
                "algorithm",
                quote("flatfly-min"),
                &["routing_function"],
            );
        }
        (
            "valiant_flatfly"
            | "ugal_flatfly"
            | "ugal_pni_flatfly"
            | "xyyx_flatfly"
            | "adaptive_xyyx_flatfly"
            | "ugal_xyyx_flatfly",
            Topo::FlatFly,
        ) => {
            use crate::routing::flatfly::Kind;
            let kind = match rf.as_str() {
                "valiant" => Kind::Valiant,
                "ugal" => Kind::Ugal,
                "ugal_pni" => Kind::UgalPni,
                "xyyx" => Kind::XyYx,
                "adaptive_xyyx" => Kind::AdaptiveXyYx,
                _ => Kind::UgalXyYx,
            };
            // ugal_pni_flatfly_onchip asserts `gK == gC` as it routes the first flit: its
            // digit of the destination counts routers in a dimension or nodes at a router.
            let k = c.int("k");
            if kind == Kind::UgalPni && c.int("c") != k {
                return Err(c.err(
                    "c",
                    format!(
                        "ugal_pni on a flatfly needs c = k (BookSim2 asserts it: the digit it splits \
                         the VCs by counts nodes at a router out of the last dimension), not c = {} \
                         with k = {k}",
                        c.int("c")
                    ),
                    Some("c = k, with xr = yr its square root"),
                ));
            }
            // Each class takes its part of the VCs (`available_vcs = num_vcs / 2`, ugal_xyyx
            // halves it again, ugal_pni splits each half k ways): BookSim2 asserts a class of
            // one VC or more, and with a count that does not divide its halves share a VC,
            // which breaks the deadlock freedom they are for.
            let fits = u32::try_from(k)
                .ok()
                .zip(u32::try_from(vcs).ok())
                .is_some_and(|(k, v)| kind.vcs_fit(k, v));
            if !fits {
                return Err(c.err(
                    "num_vcs",
                    format!(
                        "{rf} on a flatfly splits the VCs into {}: it needs {}, not {vcs}",
                        kind.classes_named(),
                        kind.vcs_needed(u32::try_from(k).unwrap_or(u32::MAX))
                    ),
                    Some("num_vcs = 8;"),
                ));
            }
            t.put(
                c,
                "routing",
                "algorithm",
                quote(kind.name()),
                &["routing_function"],
            );
            let drawn = if kind.via() {
                "intermediate router"
            } else {
                "order (x or y first)"
            };
            c.note(
                "routing_function",
                &format!(
                    "reef draws each packet's {drawn} from its source's own seeded stream, not \
                     BookSim2's generator at the first router (the same distribution)"
                ),
            );
            if kind.chooses() {
                c.note(
                    "routing_function",
                    "reef compares the credits used on the two outputs as the head asks for one at \
                     its source router, after its router delay; BookSim2 with routing_delay = 0 \
                     routes a router ahead and reads them as the head leaves its node (with \
                     routing_delay = 1, in its routing stage at the router)",
                );
            }
        }
        (_, Topo::Dragonfly) if rf != "none" => super::dragonfly::routing(c, t, &full, vcs)?,
        _ if rf == "none" => {
            return Err(c.err(
                "routing_function",
                "not set (BookSim2 needs one too)",
                Some(match net {
                    Topo::Cube { torus: false } => "routing_function = dor;",
                    Topo::Cube { torus: true } => "routing_function = dim_order;",
                    Topo::Fly => "routing_function = dest_tag;",
                    Topo::FatTree => "routing_function = nca;",
                    Topo::AnyNet => "routing_function = min;",
                    Topo::CMesh => "routing_function = dor_no_express;",
                    Topo::FlatFly => "routing_function = ran_min;",
                    Topo::Dragonfly => "routing_function = min;",
                }),
            ));
        }
        _ => {
            return Err(c.err(
                "routing_function",
                format!("reef does not model BookSim2's routing function `{full}` yet"),
                Some(right),
            ));
        }
    }
    if torus {
        c.note(
            "routing_function",
            "half way round a ring BookSim2 flips a coin per packet; reef goes the positive way from \
             even coordinates and the negative way from odd ones (the same load each way on average)",
        );
    }
    Ok(())
}

//! BookSim2's dragonfly (`topology = dragonflynew`, `src/networks/dragonfly.cpp`, commit
//! 28f43299) onto reef's `dragonfly` topology: `k` nodes a router (BookSim2's `p`), `n = 1`
//! (BookSim2 asserts it), the channels as long as BookSim2 compiles them (`DRAGON_LATENCY`:
//! 10 cycles in a group, 100 between groups, `topology.noc_latency`), and its routing
//! functions `min` (`min_dragonflynew`) as `dragonfly-min` and `ugal` (`ugal_dragonflynew`)
//! as `dragonfly-ugal`.

use super::map::{Cfg, R};
use super::toml_out::{Toml, quote};
use crate::fabric::dragonfly::{Dims, MAX_P};

/// The topology keys; returns the number of nodes.
pub(super) fn topology(c: &Cfg, t: &mut Toml) -> R<i64> {
    let n = c.int("n");
    if n != 1 {
        return Err(c.err(
            "n",
            format!("BookSim2's dragonflynew is built for n = 1 only (it asserts n == 1), not {n}"),
            Some("n = 1;"),
        ));
    }
    let p = c.int_in("k", 1, i64::from(MAX_P))?;
    t.put(c, "topology", "kind", quote("dragonfly"), &["topology", "n"]);
    t.put(c, "topology", "hosts_per_switch", p.to_string(), &["k"]);
    // DRAGON_LATENCY is defined in dragonfly.cpp: no key turns it off.
    t.put(c, "topology", "noc_latency", "true".into(), &["topology"]);
    Ok(i64::from(Dims::new(p as u32).nodes()))
}

/// `routing_function` (`full` is it with `_dragonflynew`) on the dragonfly.
pub(super) fn routing(c: &Cfg, t: &mut Toml, full: &str, vcs: i64) -> R<()> {
    match full {
        "min_dragonflynew" => {
            if vcs < 2 {
                return Err(c.err(
                    "num_vcs",
                    format!(
                        "min on a dragonfly sends on VC 1 from the global hop on (min_dragonflynew): \
                         it needs 2 VCs or more, not {vcs}"
                    ),
                    Some("num_vcs = 2;"),
                ));
            }
            t.put(
                c,
                "routing",
                "algorithm",
                quote("dragonfly-min"),
                &["routing_function"],
            );
            c.note(
                "routing_function",
                "BookSim2's min_dragonflynew draws each packet's injection VC at random \
                 (RandomInt); reef's nodes take their injection VCs in turn",
            );
            Ok(())
        }
        "ugal_dragonflynew" => {
            if vcs != 3 {
                return Err(c.err(
                    "num_vcs",
                    format!(
                        "ugal on a dragonfly takes VC 0 towards its intermediate router and VCs 1 \
                         and 2 before and after the global hop: BookSim2 asserts num_vcs == 3, not {vcs}"
                    ),
                    Some("num_vcs = 3;"),
                ));
            }
            t.put(
                c,
                "routing",
                "algorithm",
                quote("dragonfly-ugal"),
                &["routing_function"],
            );
            c.note(
                "routing_function",
                "reef draws each packet's intermediate node from its source's own seeded stream \
                 (BookSim2: RandomInt at the source router, the same distribution), and compares the \
                 credits used on the two outputs as the head asks for one (BookSim2: a step ahead, \
                 as the head leaves its node); injection VCs in turn, not at random",
            );
            Ok(())
        }
        _ => Err(c.err(
            "routing_function",
            format!("reef does not model BookSim2's routing function `{full}` yet"),
            Some("on a dragonflynew reef runs min and ugal"),
        )),
    }
}

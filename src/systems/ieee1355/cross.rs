//! The theoretical cross-sectional bandwidth (`../shared/systems/ieee1355.md`,
//! "Topologies"): the links that cross the cut between two equal halves of the network, both
//! directions, each at the long-packet both-ways ceiling (9.52 MB/s). Counted on the built
//! fabric: the Clos is cut through its terminal and its centre switches (half of each on
//! either side); the grid and torus between the two halves of the x dimension.

use super::net::{Net, Topo, fabric_and_routing};
use crate::fabric::Shape;

/// Links (one direction) between the two halves of `net`.
pub fn bisection_links(net: &Net) -> Result<usize, String> {
    let (fab, _) = fabric_and_routing(net)?;
    let side: Box<dyn Fn(u32) -> bool> = match (net.topo, &fab.shape) {
        (Topo::Clos, &Shape::Clos { leaves, spines, .. }) => Box::new(move |s| {
            if s < leaves {
                s < leaves / 2
            } else {
                s - leaves < spines / 2
            }
        }),
        (_, &Shape::Grid { k, .. }) => Box::new(move |s| s / k < k / 2),
        _ => return Err("no bisection for this shape".into()),
    };
    Ok(fab
        .channels
        .iter()
        .filter(|c| fab.is_switch(c.src) && fab.is_switch(c.dst) && side(c.src.0) && !side(c.dst.0))
        .count())
}

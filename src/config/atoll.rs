//! `[topology] kind = "atoll"`: an ATOLL network ([`crate::fabric::atoll`]) with the chip
//! of `systems::atoll::params` built in. Its links and host ports are the chip's, so
//! `[channel]` takes only `buffer` (the input FIFOs, whose depth is not published) and
//! `[host_channel]` and `[switch]` take nothing; routing is by routing strings carried in
//! the packet, a deadlock-free placed set unless the config asks for up*/down* or minimal
//! routes or gives its own.

use super::build::{R, Units};
use super::hardware::{channel_key, switch_key};
use super::network::topology_keys;
use super::raw::*;
use super::routing::routing;
use crate::fabric::atoll::{Wiring, build, from_file};
use crate::fabric::{Fabric, FabricError};
use crate::routing::Routing;
use crate::systems::atoll::params;

const HINT: &str = "an atoll topology takes: network (torus, grid, full or file), k (torus, grid), \
                    nodes (full), file (file), hosts_per_switch (1-4), failed";

/// The ATOLL network a config describes, and its routing.
pub(super) fn atoll(u: &Units, raw: &RawConfig) -> R<(Fabric, Routing)> {
    let src = u.src;
    let t = &raw.topology;
    topology_keys(src, t)?;
    if let Some(k) = channel_key(&raw.channel).filter(|&k| k != "buffer") {
        return Err(src.err(
            &format!("channel.{k}"),
            "an ATOLL network's links are its chips' (byte wide, 300 MHz, 27 cycles a hop); \
             only their input FIFO depth, `buffer`, may be set",
            Some("keep only channel.buffer"),
        ));
    }
    if let Some(k) = raw.host_channel.as_ref().and_then(channel_key) {
        return Err(src.err(
            &format!("host_channel.{k}"),
            "an ATOLL network's host ports are its chips'",
            Some("remove the [host_channel] section"),
        ));
    }
    if let Some(k) = switch_key(&raw.switch) {
        return Err(src.err(
            &format!("switch.{k}"),
            "an ATOLL network switches in its chips (wormhole, 27 cycles a hop)",
            Some("remove the [switch] section"),
        ));
    }
    let fifo = match raw.channel.buffer {
        Some(b) => crate::fabric::check_buffer(b as u64).map_err(|m| src.err("channel.buffer", m, None))?,
        None => params::FIFO_BYTES,
    };
    let chip = params::chip(fifo);
    let network = t
        .network
        .as_deref()
        .ok_or_else(|| src.err("topology", "an atoll topology needs `network`", Some(HINT)))?;
    let hosts = t.hosts_per_switch.unwrap_or(1);
    let failed: Vec<(u32, u32)> = t.failed.iter().flatten().map(|p| (p[0], p[1])).collect();
    let only = |key: &str, given: bool, nets: &str| {
        if given {
            Err(src.err(
                &format!("topology.{key}"),
                format!("applies to network = {nets}, not \"{network}\""),
                Some(HINT),
            ))
        } else {
            Ok(())
        }
    };
    let imp = |key: &str, e: FabricError| src.err(key, e.to_string(), None);
    let fab = match network {
        "torus" | "grid" => {
            only("nodes", t.nodes.is_some(), "\"full\"")?;
            only("file", t.file.is_some(), "\"file\"")?;
            let k = match &t.k {
                Some(Radix::Many(v)) if v.len() == 2 => [v[0], v[1]],
                Some(Radix::One(k)) => [*k, *k],
                Some(Radix::Many(_)) => {
                    return Err(src.err(
                        "topology.k",
                        "an ATOLL torus or grid has two dimensions",
                        Some("e.g. k = [16, 16] or k = 16"),
                    ));
                }
                None => {
                    return Err(src.err(
                        "topology",
                        format!("an ATOLL {network} needs `k`"),
                        Some("e.g. k = [16, 16]"),
                    ));
                }
            };
            let w = if network == "torus" {
                Wiring::Torus { k }
            } else {
                Wiring::Grid { k }
            };
            build(&w, hosts, &failed, &chip).map_err(|e| imp("topology.k", e))?
        }
        "full" => {
            only("k", t.k.is_some(), "\"torus\" or \"grid\"")?;
            only("file", t.file.is_some(), "\"file\"")?;
            let nodes = t.nodes.ok_or_else(|| {
                src.err(
                    "topology",
                    "a fully connected ATOLL network needs `nodes`",
                    Some(HINT),
                )
            })?;
            build(&Wiring::Full { nodes }, hosts, &failed, &chip).map_err(|e| imp("topology.nodes", e))?
        }
        "file" => {
            only("k", t.k.is_some(), "\"torus\" or \"grid\"")?;
            only("nodes", t.nodes.is_some(), "\"full\"")?;
            only(
                "failed",
                t.failed.is_some(),
                "torus, grid or full (leave the link out of the file)",
            )?;
            only(
                "hosts_per_switch",
                t.hosts_per_switch.is_some(),
                "torus, grid or full (the file places the hosts)",
            )?;
            let f = t
                .file
                .as_ref()
                .ok_or_else(|| src.err("topology", "network = \"file\" needs `file`", Some(HINT)))?;
            let path = src.dir.join(f);
            let text = super::read_text(&path, 256).map_err(|e| {
                src.err(
                    "topology.file",
                    format!("cannot read {}: {e}", path.display()),
                    None,
                )
            })?;
            let name = path.display().to_string();
            let fab = crate::fabric::irregular::parse(
                &name,
                &text,
                chip.link,
                chip.host,
                chip.switch,
                Some(u.cycle),
            )
            .map_err(|e| imp("topology.file", e))?;
            from_file(fab, &chip)
                .map_err(|e| imp("topology.file", FabricError::Impossible(format!("{name}: {e}"))))?
        }
        other => {
            return Err(src.err(
                "topology.network",
                format!("unknown ATOLL network `{other}`"),
                Some("torus, grid, full or file"),
            ));
        }
    };
    let r = &raw.routing;
    if r.algorithm.is_some_and(|a| a != AlgoKind::Source) {
        return Err(src.err(
            "routing.algorithm",
            "an ATOLL network routes by routing strings (source routes)",
            Some("algorithm = \"source\", or leave it out"),
        ));
    }
    if r.in_packet == Some(false) {
        return Err(src.err(
            "routing.in_packet",
            "an ATOLL chip reads the routing string from the packet, a byte a hop",
            Some("leave in_packet out"),
        ));
    }
    let mut rr = r.clone();
    rr.algorithm = Some(AlgoKind::Source);
    rr.paths = Some(r.paths.unwrap_or(PathsKind::DeadlockFree));
    rr.in_packet = Some(true);
    let routing = routing(src, &rr, &fab, TopoKind::File)?;
    Ok((fab, routing))
}

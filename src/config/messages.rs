//! `[traffic] kind = "ping-pong"` or `"streaming"`: a message benchmark between two hosts
//! ([`crate::workload::message`]) in place of synthetic traffic, and the `[nic]` section of
//! its host interface ([`crate::nic::hostif`]). docs/config.md lists the keys.

use super::build::{R, Units};
use super::raw::*;
use crate::fabric::Fabric;
use crate::nic::hostif::{HostIf, Noise};
use crate::time::{Quantity, Ratio, SEC, Time, UNIT_HINT, parse_quantity};
use crate::workload::message::{Kind, MessageSpec};

/// Largest message [bytes]: 1 GiB.
pub const MAX_MESSAGE: u64 = 1 << 30;

/// The default sizes: every power of two from 1 B to 512 KB (as the ATOLL benchmarks run).
pub fn default_sizes() -> Vec<u64> {
    (0..=19).map(|i| 1u64 << i).collect()
}

/// The message benchmark a config asks for, if any.
pub(super) fn messages(u: &Units, raw: &RawConfig, fab: &Fabric) -> R<Option<MessageSpec>> {
    let src = u.src;
    let t = &raw.traffic;
    let kind = match t.kind.unwrap_or(TrafficKind::Synthetic) {
        TrafficKind::Synthetic => {
            for (key, given) in [
                ("pair", t.pair.is_some()),
                ("message_sizes", t.message_sizes.is_some()),
                ("messages", t.messages.is_some()),
            ] {
                if given {
                    return Err(src.err(
                        &format!("traffic.{key}"),
                        "applies to kind = \"ping-pong\" or \"streaming\"",
                        None,
                    ));
                }
            }
            if raw.nic.is_some() {
                return Err(src.err(
                    "nic",
                    "the host interface of messages applies to traffic.kind = \"ping-pong\" or \"streaming\"",
                    Some("synthetic traffic takes its host costs from [host]"),
                ));
            }
            return Ok(None);
        }
        TrafficKind::PingPong => Kind::PingPong,
        TrafficKind::Streaming => Kind::Streaming,
    };
    for (key, given) in [
        ("pattern", t.pattern.is_some()),
        ("include_self", t.include_self.is_some()),
        ("pairs", t.pairs.is_some()),
        ("hot", t.hot.is_some()),
        ("hot_fraction", t.hot_fraction.is_some()),
        ("injection", t.injection.is_some()),
        ("load", t.load.is_some()),
        ("on", t.on.is_some()),
        ("off", t.off.is_some()),
        ("packet_size", t.packet_size.is_some()),
        ("sizes", t.sizes.is_some()),
    ] {
        if given {
            return Err(src.err(
                &format!("traffic.{key}"),
                format!(
                    "synthetic traffic's key; a {} sends messages of message_sizes",
                    kind.name()
                ),
                Some(&format!(
                    "remove it (on the command line: --unset traffic.{key}), or kind = \"synthetic\""
                )),
            ));
        }
    }
    let n = fab.num_hosts() as u32;
    let pair = t.pair.ok_or_else(|| {
        src.err(
            "traffic",
            format!("a {} needs pair = [master, slave]", kind.name()),
            Some("e.g. pair = [0, 1]"),
        )
    })?;
    if pair[0] >= n || pair[1] >= n || pair[0] == pair[1] {
        return Err(src.err(
            "traffic.pair",
            format!(
                "needs two different hosts of the {n} (0..{n}), got [{}, {}]",
                pair[0], pair[1]
            ),
            None,
        ));
    }
    let sizes = t.message_sizes.clone().unwrap_or_else(default_sizes);
    if sizes.is_empty() || sizes.iter().any(|&s| !(1..=MAX_MESSAGE).contains(&s)) {
        return Err(src.err(
            "traffic.message_sizes",
            format!("each size must be 1 to {MAX_MESSAGE} bytes, and there must be one"),
            Some("e.g. message_sizes = [1, 8, 64, 1024]"),
        ));
    }
    let count = t.messages.unwrap_or(100);
    if !(1..=1_000_000).contains(&count) {
        return Err(src.err("traffic.messages", "must be 1 to 1000000 per size", None));
    }
    Ok(Some(MessageSpec {
        kind,
        pair: (pair[0], pair[1]),
        sizes,
        count,
        host: host_if(u, raw.nic.as_ref())?,
    }))
}

/// Time per byte [ps/byte] at a data rate `"533 MB/s"`.
fn per_byte(u: &Units, key: &str, s: &str) -> R<Time> {
    match parse_quantity(s).map_err(|m| u.src.err(key, m, Some(UNIT_HINT)))? {
        Quantity::BitRate(r) if !r.is_zero() => {
            let t = Ratio::int(8 * SEC as u128).over(r).round();
            super::build::within_span(u.src, key, t as u128, || format!("a byte at `{s}`"))
        }
        q => Err(u.src.err(
            key,
            format!("expected a data rate, got {} (`{s}`)", q.kind()),
            Some("e.g. \"533 MB/s\""),
        )),
    }
}

fn host_if(u: &Units, nic: Option<&RawNic>) -> R<HostIf> {
    let Some(c) = nic else {
        return Ok(HostIf::default());
    };
    let d = HostIf::default();
    let zero = Ratio::int(0);
    let rate = |key: &str, s: &Option<String>| -> R<Time> {
        s.as_ref()
            .map_or(Ok(0), |s| per_byte(u, &format!("nic.{key}"), s))
    };
    let mtu = c.mtu.unwrap_or(d.mtu);
    if mtu == 0 {
        return Err(u.src.err("nic.mtu", "must be at least 1 byte", None));
    }
    let noise = match &c.noise {
        None => None,
        Some(n) => {
            let tick = u.ps_or("nic.noise.tick", &n.tick, zero)?;
            let range = |key: &str, r: &Option<[String; 2]>| -> R<(Time, Time)> {
                let Some([a, b]) = r else { return Ok((0, 0)) };
                let k = format!("nic.noise.{key}");
                let (a, b) = (u.ps(&k, a)?, u.ps(&k, b)?);
                if a > b {
                    return Err(u.src.err(
                        &k,
                        "give the shortest time first",
                        Some("e.g. [\"1 us\", \"3 us\"]"),
                    ));
                }
                Ok((a, b))
            };
            let (tick_min, tick_max) = range("tick_time", &n.tick_time)?;
            let (other_min, other_max) = range("other_time", &n.other_time)?;
            let rate_hz = n.other_rate.unwrap_or(0.0);
            if !(rate_hz.is_finite() && (0.0..=1e7).contains(&rate_hz)) {
                return Err(u
                    .src
                    .err("nic.noise.other_rate", "interrupts per second, 0 to 1e7", None));
            }
            if tick > 0 && tick_max >= tick {
                return Err(u.src.err(
                    "nic.noise.tick_time",
                    "a tick's interrupt must be shorter than the tick period",
                    None,
                ));
            }
            Some(Noise {
                tick,
                tick_min,
                tick_max,
                rate_hz,
                other_min,
                other_max,
            })
        }
    };
    Ok(HostIf {
        mtu,
        framing: c.framing.unwrap_or(d.framing),
        send_overhead: u.ps_or("nic.send_overhead", &c.send_overhead, zero)?,
        pio_max: c.pio_max.unwrap_or(d.pio_max),
        pio_per_byte: rate("pio_rate", &c.pio_rate)?,
        dma_latency: u.ps_or("nic.dma_latency", &c.dma_latency, zero)?,
        dma_per_byte: rate("dma_rate", &c.dma_rate)?,
        rx_per_byte: rate("rx_rate", &c.rx_rate)?,
        recv_overhead: u.ps_or("nic.recv_overhead", &c.recv_overhead, zero)?,
        noise,
    })
}

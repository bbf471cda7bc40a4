//! `--set` and `--unset` as a user types them, structure-aware: each line of the input is one
//! override of `examples/mesh8x8.toml`; its first byte picks a key from every key the config
//! reference documents (or an unset of it, or the line taken whole as `key=value`), and the
//! rest is the value. The config loads or gives an error, never a panic; what loads and is
//! small runs without breaking an engine invariant.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

const BASE: &str = include_str!("../../examples/mesh8x8.toml");

/// Every key of docs/config.md, and a few that do not exist.
const KEYS: &[&str] = &[
    "name",
    "sim",
    "sim.clock",
    "sim.warmup",
    "sim.measure",
    "sim.drain_limit",
    "sim.drain",
    "sim.seed",
    "sim.batches",
    "sim.check",
    "sim.watchdog",
    "sim.trains",
    "sim.express",
    "sim.runs",
    "sim.source_queueing",
    "topology",
    "topology.kind",
    "topology.k",
    "topology.n",
    "topology.hosts_per_switch",
    "topology.leaves",
    "topology.hosts_per_leaf",
    "topology.spines",
    "topology.links_per_pair",
    "topology.switches",
    "topology.file",
    "topology.network",
    "topology.nodes",
    "topology.failed",
    "channel",
    "channel.flit_time",
    "channel.tail_time",
    "channel.latency",
    "channel.vcs",
    "channel.buffer",
    "channel.flow_control",
    "channel.credit_delay",
    "channel.token_grant",
    "channel.token_max",
    "channel.token_time",
    "host_channel",
    "host_channel.vcs",
    "host_channel.buffer",
    "host_channel.latency",
    "switch",
    "switch.mode",
    "switch.router_delay",
    "switch.selection",
    "switch.arbitration",
    "switch.speedup",
    "switch.output_buffer",
    "switch.crossbar_time",
    "routing",
    "routing.algorithm",
    "routing.adaptive",
    "routing.dateline",
    "routing.root",
    "routing.paths",
    "routing.in_packet",
    "routing.route",
    "traffic",
    "traffic.kind",
    "traffic.pair",
    "traffic.message_sizes",
    "traffic.messages",
    "traffic.pattern",
    "traffic.include_self",
    "traffic.pairs",
    "traffic.hot",
    "traffic.hot_fraction",
    "traffic.injection",
    "traffic.batch",
    "traffic.max_outstanding",
    "traffic.load",
    "traffic.on",
    "traffic.off",
    "traffic.packet_size",
    "traffic.sizes",
    "traffic.flit_bytes",
    "nic",
    "nic.mtu",
    "nic.framing",
    "nic.send_overhead",
    "nic.pio_max",
    "nic.pio_rate",
    "nic.dma_latency",
    "nic.dma_rate",
    "nic.rx_rate",
    "nic.recv_overhead",
    "nic.noise.tick",
    "nic.noise.tick_time",
    "nic.noise.other_rate",
    "nic.noise.other_time",
    "host",
    "host.send_overhead",
    "host.send_per_byte",
    "host.recv_overhead",
    "host.recv_per_byte",
    "host.credit_return",
    "switch.flit_delay",
    "switch.internal_speedup",
    "nosuch",
    "sim.nosuch",
    "topology.k.0",
    "a..b",
    "",
];

fuzz_target!(|data: &[u8]| {
    common::limit_memory();
    let mut overrides = Vec::new();
    for line in data.split(|&b| b == b'\n').take(8) {
        let Some((&pick, rest)) = line.split_first() else {
            continue;
        };
        let value = String::from_utf8_lossy(rest);
        let key = KEYS[pick as usize % KEYS.len()];
        overrides.push(match pick / 128 {
            // Half of the picks set the key; of the rest, most unset it and a few take the
            // line whole, `=` or not, as `--set` would.
            0 => format!("{key}={value}"),
            _ if pick % 8 != 0 => format!("{}{key}", reef::config::UNSET),
            _ => value.into_owned(),
        });
    }
    if let Ok(spec) = reef::config::load_str("mesh8x8.toml", BASE, &common::data_dir(), &overrides) {
        common::run_if_small(spec);
    }
});

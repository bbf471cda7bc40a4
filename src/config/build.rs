//! Validation: the raw schema becomes a [`Spec`] that cannot hold an illegal state. Units are
//! converted here, once: durations to picoseconds (exact when the value is a whole number of
//! picoseconds, else rounded to the nearest), cycles through the declared clock, rates to
//! flit times. Defaults for omitted keys are listed in `docs/config.md`.

use super::raw::*;
use super::{ConfigError, locate, parse_path};
use crate::engine::{HostParams, SimParams, Spec};
use crate::fabric::{FlowControl, LinkParams};
use crate::fabric::{SwAllocator, SwitchMode, VcAllocator, VcChoice, VcRelease};
use crate::memory::Counts;
use crate::routing::Routing;
use crate::time::{MAX_SPAN, Quantity, Ratio, SEC, Time, UNIT_HINT, parse_quantity};
use crate::workload::Workload;
use std::path::Path;

use super::hardware::*;
use super::network::*;
use super::routing::routing;
use super::traffic::*;

/// Where a config came from, for error messages.
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub dir: &'a Path,
    pub overridden: &'a [String],
}

impl Source<'_> {
    pub(super) fn err(&self, key: &str, msg: impl Into<String>, hint: Option<&str>) -> ConfigError {
        let from_set = self.overridden.iter().any(|k| key.starts_with(k.as_str()));
        ConfigError {
            file: self.file.to_string(),
            line: if from_set {
                None
            } else {
                locate(self.text, &parse_path(key))
            },
            key: key.to_string(),
            msg: msg.into(),
            hint: hint.map(str::to_string),
            origin: from_set.then_some(super::Origin::Set),
        }
    }
}

pub(super) type R<T> = Result<T, ConfigError>;

/// `what` spans `t` ps: an error past [`MAX_SPAN`].
pub(super) fn within_span(src: &Source, key: &str, t: u128, what: impl FnOnce() -> String) -> R<Time> {
    if t > MAX_SPAN as u128 {
        return Err(src.err(
            key,
            format!("{} is longer than reef's limit of 1000 s", what()),
            Some("times inside reef are picoseconds in 64 bits; write a shorter duration"),
        ));
    }
    Ok(t as Time)
}

/// Unit conversions that need the declared clock.
pub(super) struct Units<'a> {
    pub src: &'a Source<'a>,
    /// One cycle [ps].
    pub cycle: Ratio,
}

impl Units<'_> {
    /// A duration [ps] (exact rational) from `"10 ns"` or `"4 cycles"`.
    pub fn duration(&self, key: &str, s: &str) -> R<Ratio> {
        match parse_quantity(s).map_err(|m| self.src.err(key, m, Some(UNIT_HINT)))? {
            Quantity::Duration(d) => Ok(d),
            Quantity::Cycles(n) => Ok(n.times(self.cycle)),
            q => Err(self.src.err(
                key,
                format!("expected a duration, got {} (`{s}`)", q.kind()),
                Some("write e.g. \"10 ns\" or \"4 cycles\""),
            )),
        }
    }

    /// A duration in whole picoseconds (at most [`MAX_SPAN`]): a time rounded to the
    /// nearest, a number of cycles n to ⌊n·P⌋, the n-th edge of the clock, so that a delay
    /// of n cycles after an edge of a clock whose period P is not whole picoseconds ends
    /// where its n-th edge after that one is, or just before it (a clocked channel then
    /// sends on that edge).
    pub fn ps(&self, key: &str, s: &str) -> R<Time> {
        let t = match parse_quantity(s).map_err(|m| self.src.err(key, m, Some(UNIT_HINT)))? {
            Quantity::Cycles(n) => n.times(self.cycle).floor(),
            _ => self.duration(key, s)?.round(),
        };
        within_span(self.src, key, t as u128, || format!("`{s}`"))
    }

    /// [`Self::ps`], or `default` cycles of the clock when `s` is not given.
    pub fn ps_or(&self, key: &str, s: &Option<String>, default: Ratio) -> R<Time> {
        match s {
            Some(s) => self.ps(key, s),
            None => Ok(default.times(self.cycle).floor()),
        }
    }

    pub fn positive(&self, key: &str, t: Time) -> R<Time> {
        if t == 0 {
            return Err(self.src.err(key, "must be positive", None));
        }
        Ok(t)
    }
}

fn clock_period(src: &Source, s: &Option<String>) -> R<Ratio> {
    let Some(s) = s else {
        return Ok(Ratio::int(1_000));
    };
    let period = match parse_quantity(s).map_err(|m| src.err("sim.clock", m, Some(UNIT_HINT)))? {
        Quantity::Frequency(f) if !f.is_zero() => Ratio::int(SEC as u128).over(f),
        Quantity::Duration(d) if !d.is_zero() => d,
        _ => {
            return Err(src.err(
                "sim.clock",
                format!("expected a frequency or a period, got `{s}`"),
                Some("e.g. clock = \"1 GHz\" or clock = \"1 ns\""),
            ));
        }
    };
    within_span(src, "sim.clock", period.round() as u128, || {
        format!("a cycle of `{s}`")
    })?;
    if period.num() < period.den() {
        // (Durations of a few cycles would round to nothing and be blamed on their own keys.)
        return Err(src.err(
            "sim.clock",
            format!("a cycle of `{s}` is shorter than reef's resolution of 1 ps"),
            Some("e.g. clock = \"1 GHz\""),
        ));
    }
    Ok(period)
}

/// Builds the spec.
pub fn build(raw: &RawConfig, src: &Source) -> R<Spec> {
    // An ATOLL network counts cycles of its core clock unless told otherwise.
    let cycle = match (&raw.sim.clock, raw.topology.kind) {
        (None, TopoKind::Atoll) => crate::systems::atoll::params::core().period(),
        (c, _) => clock_period(src, c)?,
    };
    let u = Units { src, cycle };
    let net = link_params(&u, "channel", &raw.channel, None)?;
    let host_link = match &raw.host_channel {
        Some(h) => link_params(&u, "host_channel", h, Some(&net))?,
        None => net,
    };
    let sw = switch_params(&u, &raw.switch)?;
    // Before anything is built: a network too large for this machine is refused with the
    // estimate, not left to abort when an allocation fails.
    let size_key = match raw.topology.kind {
        TopoKind::Clos => "topology.leaves",
        TopoKind::Full => "topology.switches",
        _ => "topology.k",
    };
    if let Some(c) = planned_counts(&raw.topology, &raw.routing, &net, &host_link) {
        crate::memory::check(&c, smaller(raw.topology.kind)).map_err(|m| src.err(size_key, m, None))?;
    }
    let (fab, routing) = match raw.topology.kind {
        TopoKind::Macrame => macrame(src, raw)?,
        TopoKind::Atoll => super::atoll::atoll(&u, raw)?,
        kind => {
            let fab = topology(src, cycle, &raw.topology, net, host_link, sw)?;
            let routing = routing(src, &raw.routing, &fab, kind)?;
            (fab, routing)
        }
    };
    if routing.route_in_packet() && sw.mode != SwitchMode::Wormhole {
        return Err(src.err(
            "routing.in_packet",
            "a route in the packet is read by wormhole switches (a cut-through switch would need \
             room for the packet before it knows the length of its route)",
            Some("switch.mode = \"wormhole\""),
        ));
    }
    let mut fab = fab;
    host_credit_return(&u, src, raw, &mut fab)?;
    fab.vc_choice = match raw.switch.vc_choice.unwrap_or(VcChoiceKind::Lowest) {
        VcChoiceKind::Lowest => VcChoice::Lowest,
        VcChoiceKind::RoundRobin => VcChoice::RoundRobin,
    };
    fab.vc_reuse = u.ps_or("switch.vc_reuse_delay", &raw.switch.vc_reuse_delay, Ratio::int(0))?;
    fab.flit_delay = u.ps_or("switch.flit_delay", &raw.switch.flit_delay, Ratio::int(0))?;
    fab.sw_allocator = match raw.switch.allocator.unwrap_or(SwAllocatorKind::Greedy) {
        SwAllocatorKind::Greedy => SwAllocator::Greedy,
        // One iteration of iSLIP is the separable output-first allocator (pointers moved
        // only past accepted grants in both).
        SwAllocatorKind::Islip | SwAllocatorKind::SeparableOutputFirst => SwAllocator::SeparableOutputFirst,
        SwAllocatorKind::SeparableInputFirst => SwAllocator::SeparableInputFirst,
        SwAllocatorKind::Wavefront => SwAllocator::Wavefront,
        SwAllocatorKind::RrWavefront => SwAllocator::RrWavefront,
        SwAllocatorKind::MaxSize => SwAllocator::MaxSize,
        SwAllocatorKind::Loa => SwAllocator::Loa,
    };
    fab.vc_allocator = match raw.switch.vc_allocator.unwrap_or(VcAllocatorKind::Greedy) {
        VcAllocatorKind::Greedy => VcAllocator::Greedy,
        VcAllocatorKind::SeparableOutputFirst => VcAllocator::SeparableOutputFirst,
        VcAllocatorKind::Islip => VcAllocator::Islip,
        VcAllocatorKind::SeparableInputFirst => VcAllocator::SeparableInputFirst,
    };
    fab.internal_speedup = internal_speedup(src, raw, &fab)?;
    fab.output_speedup = output_speedup(src, raw, &fab)?;
    if routing.has_escape() && fab.vc_allocator == VcAllocator::Greedy {
        return Err(src.err(
            "switch.vc_allocator",
            format!(
                "{} routing has each head ask for VCs of several outputs at two priorities, \
                 which a separable VC allocator weighs over the whole switch; the greedy one \
                 (the default) allocates each output on its own",
                routing.name()
            ),
            Some("set switch.vc_allocator = \"separable-input-first\" (or \"separable-output-first\")"),
        ));
    }
    // Output buffers go in after routing is built: stages pass packets through.
    let fab = match raw.switch.output_buffer.unwrap_or(0) {
        0 => {
            if raw.switch.crossbar_time.is_some() {
                return Err(src.err("switch.crossbar_time", "applies with an output_buffer", None));
            }
            fab
        }
        depth => {
            let depth = crate::fabric::check_buffer(depth as u64)
                .map_err(|m| src.err("switch.output_buffer", format!("{m} (0: none)"), None))?;
            let xt = match &raw.switch.crossbar_time {
                Some(x) => u.positive("switch.crossbar_time", u.ps("switch.crossbar_time", x)?)?,
                None => net.flit_time,
            };
            let internal = LinkParams {
                flit_time: xt,
                tail_time: (xt as u128 * net.tail_time as u128 / net.flit_time as u128).max(1) as Time,
                latency: 0,
                vcs: net.vcs,
                buffer: depth,
                flow: FlowControl::Credit { delay: 1 },
                delete_header: false,
                clock: None,
            };
            fab.with_output_buffers(depth, internal)
        }
    };
    // Built: the engine's part, counted exactly (a topology file, output buffers).
    {
        let tables = match &routing {
            Routing::Table(_) => true,
            Routing::Source(s) => s.placed_set().is_none(),
            _ => false,
        };
        let key = match raw.topology.kind {
            TopoKind::File | TopoKind::Anynet => "topology.file",
            TopoKind::Macrame | TopoKind::Atoll => "topology.nodes",
            _ => size_key,
        };
        crate::memory::check(&Counts::of(&fab, tables), smaller(raw.topology.kind))
            .map_err(|m| src.err(key, m, None))?;
    }
    // Token flow control's needs, channel by channel (a topology file may set a link's VCs,
    // buffer or direction): checked here, so that `reef check` finds what a run would refuse.
    if let Err(e) = crate::link::ds::token_channels(&fab) {
        let key = if raw.topology.kind == TopoKind::File {
            "topology.file"
        } else {
            "channel.flow_control"
        };
        return Err(src.err(key, e.to_string(), None));
    }
    // Waiting for a tail's credit means waiting for every credit of the VC: tokens are
    // granted a few at a time and never all at once.
    if sw.release == VcRelease::TailCredit
        && let Some(ci) = fab
            .channels
            .iter()
            .position(|c| matches!(c.params.flow, FlowControl::Tokens { .. }))
    {
        return Err(src.err(
            "switch.vc_release",
            format!(
                "\"tail-credit\" waits for all of a VC's credits, and {} has token flow control",
                fab.channel_name(crate::fabric::ChannelId(ci as u32))
            ),
            Some("use credits (channel.credit_delay) or vc_release = \"tail\""),
        ));
    }
    let s = &raw.sim;
    let seed = s.seed.unwrap_or(1);
    let flit_bytes = raw.traffic.flit_bytes.unwrap_or(1);
    if flit_bytes == 0 {
        return Err(src.err("traffic.flit_bytes", "must be at least 1", None));
    }
    let messages = super::messages::messages(&u, raw, &fab)?;
    let (wl, max_pkt) = match &messages {
        None => {
            let wl = workload(&u, &raw.traffic, &fab, seed, flit_bytes)?;
            let max = wl.sizes.max();
            (wl, max)
        }
        Some(m) => {
            // A message's largest packet: its payload, framing and route.
            let payload = m.sizes.iter().max().copied().unwrap_or(1).min(m.host.mtu as u64);
            let bytes = payload + m.host.framing as u64 + routing.max_header() as u64;
            let flits = bytes.div_ceil(flit_bytes as u64);
            (
                Workload::silent(fab.num_hosts()),
                u32::try_from(flits).unwrap_or(u32::MAX),
            )
        }
    };
    if sw.mode != SwitchMode::Wormhole
        && let Some((ci, c)) = fab
            .channels
            .iter()
            .enumerate()
            // (Every channel a switch grants, the ones into hosts too: a host's buffer smaller
            // than a packet left the head waiting for ever.)
            .find(|(_, c)| fab.is_switch(c.src) && grantable(&c.params) < max_pkt)
    {
        return Err(src.err(
            "switch.mode",
            format!(
                "cut-through and store-and-forward need credit for a whole packet ({max_pkt} flits); {} is sure of {}",
                fab.channel_name(crate::fabric::ChannelId(ci as u32)),
                grantable(&c.params)
            ),
            Some("raise the buffer (channel.buffer, host_channel.buffer or a link's buffer=) or use smaller packets"),
        ));
    }
    // A message benchmark and a batch run until their packets are through, and measure
    // them all: no window.
    let batch = matches!(wl.process, crate::workload::Process::Batch { .. });
    let no_window = match &messages {
        Some(m) => Some((
            format!("a {} runs until its messages are through", m.kind.name()),
            "traffic.messages",
        )),
        None if batch => Some((
            "a batch (traffic.injection = \"batch\") runs until its packets are delivered, and \
             measures them all"
                .to_string(),
            "traffic.batch",
        )),
        None => None,
    };
    if let Some((what, sets)) = &no_window
        && let Some(key) = [
            ("warmup", s.warmup.is_some()),
            ("measure", s.measure.is_some()),
            ("drain_limit", s.drain_limit.is_some()),
            ("drain", s.drain.is_some()),
            ("batches", s.batches.is_some()),
            // (A message benchmark's is refused with the sampling's keys.)
            ("sampling", batch && s.sampling.is_some()),
        ]
        .iter()
        .find(|k| k.1)
    {
        return Err(src.err(
            &format!("sim.{}", key.0),
            format!("{what}: it has no window"),
            Some(&format!(
                "remove it (on the command line: --unset sim.{}); {sets} sets how many",
                key.0
            )),
        ));
    }
    if let Some(m) = &messages
        && s.source_queueing.is_some()
    {
        return Err(src.err(
            "sim.source_queueing",
            format!(
                "dates synthetic traffic's packets; a {} times its messages itself",
                m.kind.name()
            ),
            Some("remove it"),
        ));
    }
    let sampling = sampling(&u, s, messages.is_some())?;
    let (warmup, measure) = if messages.is_some() || batch {
        (0, MAX_SPAN)
    } else if let Some(p) = &sampling {
        // The longest the test may take: the default drain limit and the span checks.
        let warm = p.warmup_periods.max(1).min(p.max_samples - 1) as Time;
        (p.period * warm, p.period * (p.max_samples as Time - warm))
    } else {
        let warmup = u.ps_or("sim.warmup", &s.warmup, Ratio::int(10_000))?;
        let measure = u.positive(
            "sim.measure",
            u.ps_or("sim.measure", &s.measure, Ratio::int(50_000))?,
        )?;
        (warmup, measure)
    };
    let drain_limit = match &s.drain_limit {
        Some(x) => u.ps("sim.drain_limit", x)?,
        None if messages.is_some() || batch => 0,
        None => measure,
    };
    // A packet that takes longer to send than the window and its drain can never be a
    // measured packet delivered: the run would end with nothing to show.
    let synthetic = messages.is_none()
        && raw.traffic.pattern != Some(PatternKind::None)
        && (0..fab.num_hosts() as u32).any(|h| wl.pattern.sends(h));
    let fastest = (0..fab.num_hosts() as u32)
        .map(|h| fab.channels[fab.injection_channel(h).idx()].params.flit_time)
        .min();
    if let Some(ft) = fastest.filter(|_| synthetic) {
        let send = ft as u128 * max_pkt as u128;
        let span = measure as u128 + drain_limit as u128;
        if send > span {
            let cyc =
                |t: u128| crate::engine::result::cycles_text(t.min(u64::MAX as u128) as Time, cycle.to_f64());
            // Blamed on the packet, unless it would fit the default window: then on the
            // window.
            let default_span = 2 * Ratio::int(50_000).times(cycle).floor() as u128;
            let key = if send <= default_span {
                "sim.measure"
            } else if raw.traffic.sizes.is_some() {
                "traffic.sizes"
            } else {
                "traffic.packet_size"
            };
            return Err(src.err(
                key,
                format!(
                    "a {max_pkt}-flit packet takes {} to send on a host's channel, longer than the \
                     measurement window and its drain ({}): no measured packet could be delivered",
                    cyc(send),
                    cyc(span)
                ),
                Some("send smaller packets, or lengthen sim.measure or sim.drain_limit"),
            ));
        }
    }
    let batches = s.batches.unwrap_or(10);
    if !(1..=1000).contains(&batches) {
        return Err(src.err("sim.batches", "must be 1..=1000", None));
    }
    let runs = s.runs.unwrap_or(1);
    if !(1..=1000).contains(&runs) {
        return Err(src.err("sim.runs", "must be 1..=1000", None));
    }
    if seed + u64::from(runs) - 1 > i64::MAX as u64 {
        return Err(src.err(
            "sim.runs",
            format!("run {runs} would take seed {seed} + {}, past 2^63 - 1", runs - 1),
            Some("lower sim.seed"),
        ));
    }
    if messages.is_some() && runs > 1 {
        return Err(src.err(
            "sim.runs",
            "a message benchmark runs once; traffic.messages sets how many messages it sends",
            Some("remove it (on the command line: --unset sim.runs)"),
        ));
    }
    let host = &raw.host;
    let hp = HostParams {
        send_overhead: u.ps_or("host.send_overhead", &host.send_overhead, Ratio::int(0))?,
        send_per_byte: u.ps_or("host.send_per_byte", &host.send_per_byte, Ratio::int(0))?,
        recv_overhead: u.ps_or("host.recv_overhead", &host.recv_overhead, Ratio::int(0))?,
        recv_per_byte: u.ps_or("host.recv_per_byte", &host.recv_per_byte, Ratio::int(0))?,
    };
    // Watchdog: long against anything a live network does in one hop. (Counted wide: one
    // hop of the longest packet must stay within reef's span.)
    let (slowest, on_channel) = fab
        .channels
        .iter()
        .enumerate()
        .map(|(c, ch)| {
            let t = ch.params.flit_time as u128 * max_pkt as u128
                + ch.params.latency as u128
                + ch.params.flow.credit_delay().unwrap_or(0) as u128;
            (c, t)
        })
        .max_by_key(|x| x.1)
        .unwrap_or((0, 0));
    if raw.topology.kind == TopoKind::File {
        // A link of the file alone too slow: the file is to blame, not the packet size.
        within_span(src, "topology.file", on_channel, || {
            format!(
                "{}: one hop of a {max_pkt}-flit packet on this link (its flits and delays)",
                fab.channel_name(crate::fabric::ChannelId(slowest as u32))
            )
        })?;
    }
    let bytes = max_pkt as u128 * flit_bytes as u128;
    // Its parts, each with the key that sets it: a hop too long is blamed on the largest.
    let parts = [
        (
            on_channel,
            if raw.traffic.sizes.is_some() {
                "traffic.sizes"
            } else {
                "traffic.packet_size"
            },
        ),
        (sw.router_delay as u128, "switch.router_delay"),
        (hp.send_overhead as u128, "host.send_overhead"),
        (hp.recv_overhead as u128, "host.recv_overhead"),
        (hp.send_per_byte as u128 * bytes, "host.send_per_byte"),
        (hp.recv_per_byte as u128 * bytes, "host.recv_per_byte"),
    ];
    let per_hop: u128 = parts.iter().map(|p| p.0).sum();
    let key = parts.iter().max_by_key(|p| p.0).expect("six parts").1;
    let per_hop = within_span(src, key, per_hop, || {
        format!("one hop of a {max_pkt}-flit packet (its flits on a channel, the delays and host costs)")
    })?;
    let watchdog = match &s.watchdog {
        Some(x) => {
            let w = u.positive("sim.watchdog", u.ps("sim.watchdog", x)?)?;
            // Shorter than a hop, a live network can sit still that long (and the watchdog
            // then looks at every instant).
            if w < per_hop {
                return Err(src.err(
                    "sim.watchdog",
                    format!(
                        "must be at least one hop of the longest packet, {} here, got {}",
                        crate::time::fmt_time(per_hop),
                        crate::time::fmt_time(w)
                    ),
                    Some("the default is 1000 hops, at least 1 µs"),
                ));
            }
            w
        }
        None => (1000 * per_hop).max(crate::time::US),
    };
    let name = super::escape_controls(&raw.name.clone().unwrap_or_else(|| {
        Path::new(src.file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }));
    Ok(Spec {
        name,
        fabric: fab,
        routing,
        workload: wl,
        params: SimParams {
            seed,
            warmup,
            measure,
            drain_limit,
            // BookSim2's throughput simulation stops its sources when the sampling ends.
            drain_all: s.drain == Some(DrainKind::All) || sampling.as_ref().is_some_and(|p| !p.latency),
            batches,
            cycle,
            check: s.check.unwrap_or(false),
            watchdog,
            flit_bytes,
            trains: s.trains.unwrap_or(true),
            express: s.express.unwrap_or(true),
            max_header: 0,
            sampling,
            runs,
            source_queueing: s.source_queueing.unwrap_or(true),
        },
        host: hp,
        messages,
    })
}

/// `host.credit_return`: the credits of the channels into hosts start back that much after
/// their flits land, added to those channels' credit delay.
fn host_credit_return(u: &Units, src: &Source, raw: &RawConfig, fab: &mut crate::fabric::Fabric) -> R<()> {
    let key = "host.credit_return";
    let Some(x) = &raw.host.credit_return else {
        return Ok(());
    };
    let extra = u.ps(key, x)?;
    if extra == 0 {
        return Ok(());
    }
    let into_host: Vec<usize> = (0..fab.channels.len())
        .filter(|&c| !fab.is_switch(fab.channels[c].dst))
        .collect();
    for c in into_host {
        let ch = &mut fab.channels[c];
        match &mut ch.params.flow {
            FlowControl::Credit { delay } => {
                *delay += extra;
                if *delay > MAX_SPAN {
                    return Err(src.err(
                        key,
                        "with the host channel's credit_delay, beyond reef's time span",
                        None,
                    ));
                }
            }
            _ => {
                return Err(src.err(
                    key,
                    "a host returns credits only on channels with credit flow control",
                    Some("host_channel.flow_control = \"credit\", or remove host.credit_return"),
                ));
            }
        }
    }
    Ok(())
}

/// `switch.output_speedup`: 1, or up to 16 with a separable switch allocator, no internal
/// speed-up, no output buffer stage (the switch's own output queue stands in for one) and no
/// channel clocked at a fractional period.
fn output_speedup(src: &Source, raw: &RawConfig, fab: &crate::fabric::Fabric) -> R<u32> {
    let key = "switch.output_speedup";
    let Some(s) = raw.switch.output_speedup else {
        return Ok(1);
    };
    let err = |what: &str, hint: &str| Err(src.err(key, what, Some(hint)));
    match s {
        1 => Ok(1),
        0 | 17.. => err(
            &format!("{s}: an output takes from 1 to 16 flits a cycle from the crossbar"),
            "output_speedup = 2 (two flits a cycle into each output's queue) or 1",
        ),
        _ if fab.sw_allocator == SwAllocator::Greedy => err(
            "an output speed-up splits each output over separable allocations, once a cycle; \
             the greedy allocator (the default) has no cycles",
            "set switch.allocator (e.g. \"islip\"), or output_speedup = 1",
        ),
        _ if fab.internal_speedup > 1 => err(
            "an output speed-up with an internal speed-up is not modelled",
            "internal_speedup = 1, or output_speedup = 1",
        ),
        _ if raw.switch.output_buffer.is_some_and(|b| b > 0) => err(
            "an output speed-up queues flits after the crossbar in the switch's own output \
             queue; switch.output_buffer adds a buffer stage of its own",
            "remove switch.output_buffer, or output_speedup = 1",
        ),
        _ if fab.channels.iter().any(|c| c.params.clock.is_some()) => err(
            "an output speed-up queues flits after the crossbar, which leave one a flit time \
             in whole picoseconds; a channel here is clocked at a fractional period (its \
             flits start on a clock's edges), which the output queue does not follow",
            "give the channels a flit time of whole picoseconds, or output_speedup = 1",
        ),
        _ => Ok(s),
    }
}

/// `switch.internal_speedup`: 1, or 2 with a separable switch allocator, no input speed-up,
/// no output buffer stage (the switch's own output queue stands in for one) and no channel
/// clocked at a fractional period.
fn internal_speedup(src: &Source, raw: &RawConfig, fab: &crate::fabric::Fabric) -> R<u32> {
    let key = "switch.internal_speedup";
    let Some(s) = raw.switch.internal_speedup else {
        return Ok(1);
    };
    let err = |what: &str, hint: &str| Err(src.err(key, what, Some(hint)));
    match s {
        1 => Ok(1),
        2 if fab.sw_allocator == SwAllocator::Greedy => err(
            "an internal speed-up allocates the crossbar twice a cycle with a separable \
             allocator; the greedy one (the default) has no cycles",
            "set switch.allocator (e.g. \"separable-input-first\"), or internal_speedup = 1",
        ),
        2 if fab.switch_params.iter().any(|p| p.speedup > 1) => err(
            "an internal speed-up with an input speed-up (switch.speedup) is not modelled",
            "switch.speedup = 1, or internal_speedup = 1",
        ),
        2 if raw.switch.output_buffer.is_some_and(|b| b > 0) => err(
            "an internal speed-up queues flits after the crossbar in the switch's own output \
             queue; switch.output_buffer adds a buffer stage of its own",
            "remove switch.output_buffer, or internal_speedup = 1",
        ),
        2 if fab.channels.iter().any(|c| c.params.clock.is_some()) => err(
            "an internal speed-up sends each output's queue on the edges of its flit time in \
             whole picoseconds; a channel here is clocked at a fractional period (its flits \
             start on a clock's edges), which the output queue does not follow",
            "give the channels a flit time of whole picoseconds, or internal_speedup = 1",
        ),
        2 => {
            // A head spends at least a step in the pipeline (BookSim2's VC allocation)
            // before the switch allocates it: its router delay is at least half the flit
            // time of every output.
            let short = (0..fab.switch_params.len()).find(|&s| {
                fab.out_chan[s]
                    .iter()
                    .flatten()
                    .any(|c| 2 * fab.switch_params[s].router_delay < fab.channels[c.idx()].params.flit_time)
            });
            // A freed output VC goes to a head in the next step's VC allocation, and that
            // head to the switch in the step after: the VC-reuse delay is two steps or more.
            let max_flit = fab.channels.iter().map(|c| c.params.flit_time).max().unwrap_or(0);
            if short.is_some() {
                err(
                    "with an internal speed-up a head spends at least a step (half a flit time) \
                     in the switch before it is allocated; switch.router_delay is shorter",
                    "switch.router_delay of half a flit time or more (BookSim2's VC allocation \
                     step)",
                )
            } else if fab.vc_reuse < max_flit {
                err(
                    "with an internal speed-up a freed output VC is given in the next step and \
                     used in the step after: switch.vc_reuse_delay must be a flit time or more",
                    "switch.vc_reuse_delay = \"1 cycle\" (BookSim2: vc_alloc + sw_alloc steps)",
                )
            } else {
                Ok(2)
            }
        }
        _ => err(
            &format!("{s}: reef models an internal speed-up of 1 or 2"),
            "internal_speedup = 2 (two crossbar allocations a cycle) or 1",
        ),
    }
}

//! Validation: the raw schema becomes a [`Spec`] that cannot hold an illegal state. Units are
//! converted here, once: durations to picoseconds (exact when the value is a whole number of
//! picoseconds, else rounded to the nearest), cycles through the declared clock, rates to
//! flit times. Defaults for omitted keys are listed in `docs/config.md`.

use super::raw::*;
use super::{ConfigError, locate, parse_path};
use crate::engine::{HostParams, SimParams, Spec};
use crate::fabric::{self, Fabric};
use crate::fabric::{Arbitration, Selection, SwAllocator, SwitchMode, SwitchParams, VcChoice, VcRelease};
use crate::fabric::{FlowControl, LinkParams};
use crate::memory::Counts;
use crate::rng;
use crate::routing::{
    Routing,
    dor::{DatelineClass, Dor, DorOptions, Ties},
    source::SourceRoutes,
    table, updown,
};
use crate::time::{Clock, MAX_SPAN, Quantity, Ratio, SEC, Time, UNIT_HINT, parse_decimal, parse_quantity};
use crate::workload::{Pattern, PatternSpec, Process, Sizes, Workload};
use std::path::Path;

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

/// The most on-periods an on-off source may span per packet on average (see `workload`).
const MAX_ONOFF_PERIODS: f64 = 1e4;

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

fn link_params(u: &Units, sect: &str, c: &RawChannel, base: Option<&LinkParams>) -> R<LinkParams> {
    let src = u.src;
    let k = |name: &str| format!("{sect}.{name}");
    let rate = match &c.rate {
        Some(s) => match parse_quantity(s).map_err(|m| src.err(&k("rate"), m, Some(UNIT_HINT)))? {
            Quantity::BitRate(r) if !r.is_zero() => Some(r),
            _ => {
                return Err(src.err(
                    &k("rate"),
                    format!("expected a data rate, got `{s}`"),
                    Some("e.g. \"100 MBaud\" or \"300 MB/s\""),
                ));
            }
        },
        None => None,
    };
    let bits_time = |bits: u32| Ratio::int(bits as u128 * SEC as u128).over(rate.expect("checked"));
    if c.flit_time.is_some() && rate.is_some() {
        return Err(src.err(&k("rate"), "give either flit_time or rate, not both", None));
    }
    if (c.flit_bits.is_some() || c.tail_bits.is_some()) && rate.is_none() {
        return Err(src.err(
            &k("flit_bits"),
            "flit_bits and tail_bits need a rate",
            Some("add rate = \"100 MBaud\""),
        ));
    }
    for (key, bits) in [("flit_bits", c.flit_bits), ("tail_bits", c.tail_bits)] {
        if bits == Some(0) {
            return Err(src.err(&k(key), "must be at least 1 bit", None));
        }
    }
    // The flit time, exact: a period that is not whole picoseconds makes a clocked channel,
    // whose flits start on its clock's edges (`LinkParams::clock`).
    let flit_key = if rate.is_some() { k("rate") } else { k("flit_time") };
    let flit_exact = match (&c.flit_time, rate) {
        (Some(s), _) => Some(u.duration(&k("flit_time"), s)?),
        (None, Some(_)) => Some(bits_time(c.flit_bits.unwrap_or(8))),
        (None, None) => base.is_none().then_some(u.cycle),
    };
    let (flit_time, clock) = match flit_exact {
        Some(f) => {
            let t = within_span(src, &flit_key, f.round() as u128, || "a flit".to_string())?;
            let clock = (f.den() != 1).then(|| Clock::from_period(f));
            if clock.is_some() && f.num() < f.den() {
                return Err(src.err(
                    &flit_key,
                    "a flit time under 1 ps is shorter than reef's resolution",
                    None,
                ));
            }
            (t, clock)
        }
        None => base.map_or((0, None), |b| (b.flit_time, b.clock)),
    };
    let flit_time = u.positive(&k("flit_time"), flit_time)?;
    let tail_exact = match (&c.tail_time, c.tail_bits, rate) {
        (Some(s), _, _) => Some(u.duration(&k("tail_time"), s)?),
        (None, Some(b), Some(_)) => Some(bits_time(b)),
        _ => None,
    };
    let tail_time = match tail_exact {
        Some(t) => {
            if clock.is_some() && Some(t) != flit_exact {
                return Err(src.err(
                    &k(if c.tail_time.is_some() {
                        "tail_time"
                    } else {
                        "tail_bits"
                    }),
                    "a channel whose flit time is not whole picoseconds sends on a clock's edges, \
                     one flit a period: its tail cannot have a time of its own",
                    Some("leave the tail out, or give a flit time of whole picoseconds"),
                ));
            }
            within_span(src, &k("tail_time"), t.round() as u128, || "a tail".to_string())?
        }
        None if c.flit_time.is_some() || rate.is_some() => flit_time,
        None => base.map_or(flit_time, |b| b.tail_time),
    };
    let tail_time = u.positive(&k("tail_time"), tail_time)?;
    let latency = match &c.latency {
        Some(s) => u.ps(&k("latency"), s)?,
        None => base.map_or(0, |b| b.latency),
    };
    let vcs = c.vcs.unwrap_or(base.map_or(1, |b| b.vcs as u32));
    if !(1..=64).contains(&vcs) {
        return Err(src.err(&k("vcs"), format!("must be 1..=64, got {vcs}"), None));
    }
    if clock.is_some() && vcs != 1 {
        return Err(src.err(
            &k("vcs"),
            "a channel whose flit time is not whole picoseconds sends on a clock's edges and \
             takes one VC",
            Some("vcs = 1, or a flit time of whole picoseconds"),
        ));
    }
    let buffer = c.buffer.unwrap_or(base.map_or(8, |b| b.buffer));
    let buffer = crate::fabric::check_buffer(buffer as u64).map_err(|m| src.err(&k("buffer"), m, None))?;
    let fc = c.flow_control.unwrap_or(match base.map(|b| b.flow) {
        Some(FlowControl::None) => FcKind::None,
        Some(FlowControl::Tokens { .. }) => FcKind::Tokens,
        _ => FcKind::Credit,
    });
    if fc != FcKind::Tokens
        && let Some(key) = [
            ("token_grant", c.token_grant.is_some()),
            ("token_max", c.token_max.is_some()),
            ("token_time", c.token_time.is_some()),
        ]
        .iter()
        .find(|x| x.1)
    {
        return Err(src.err(&k(key.0), "applies to flow_control = \"tokens\"", None));
    }
    if fc == FcKind::Tokens && c.credit_delay.is_some() {
        return Err(src.err(
            &k("credit_delay"),
            "tokens return on the reverse channel; there is no credit delay",
            Some(&format!(
                "remove credit_delay (on the command line: --unset {})",
                k("credit_delay")
            )),
        ));
    }
    let flow = match fc {
        FcKind::None => FlowControl::None,
        FcKind::Tokens => {
            let (g0, m0, t0) = match base.map(|b| b.flow) {
                Some(FlowControl::Tokens {
                    grant,
                    max_outstanding,
                    token_time,
                }) => (grant, max_outstanding, Some(token_time)),
                _ => (8, 56, None),
            };
            let grant = c.token_grant.unwrap_or(g0);
            let max_outstanding = c.token_max.unwrap_or(m0);
            if grant == 0 || max_outstanding < grant || buffer < grant {
                return Err(src.err(
                    &k("token_grant"),
                    format!(
                        "need 1 ≤ token_grant ≤ token_max and token_grant ≤ buffer (grant {grant}, \
                         max {max_outstanding}, buffer {buffer})"
                    ),
                    None,
                ));
            }
            let token_time = match &c.token_time {
                Some(s) => u.positive(&k("token_time"), u.ps(&k("token_time"), s)?)?,
                None => t0.unwrap_or(tail_time),
            };
            if vcs != 1 {
                return Err(src.err(&k("flow_control"), "tokens run on one VC (vcs = 1)", None));
            }
            if clock.is_some() {
                return Err(src.err(
                    &k("flow_control"),
                    "tokens need a flit time of whole picoseconds",
                    None,
                ));
            }
            FlowControl::Tokens {
                grant,
                max_outstanding,
                token_time,
            }
        }
        FcKind::Credit => {
            let delay = match &c.credit_delay {
                Some(s) => u.ps(&k("credit_delay"), s)?,
                None => match base.map(|b| b.flow) {
                    Some(FlowControl::Credit { delay }) => delay,
                    _ => u.cycle.floor(),
                },
            };
            FlowControl::Credit {
                delay: u.positive(&k("credit_delay"), delay)?,
            }
        }
    };
    Ok(LinkParams {
        flit_time,
        tail_time,
        latency,
        vcs: vcs as u8,
        buffer,
        flow,
        delete_header: false,
        clock,
    })
}

fn switch_params(u: &Units, s: &RawSwitch) -> R<SwitchParams> {
    let speedup = s.speedup.unwrap_or(1);
    if speedup == 0 {
        return Err(u.src.err("switch.speedup", "must be at least 1", None));
    }
    Ok(SwitchParams {
        router_delay: u.ps_or("switch.router_delay", &s.router_delay, Ratio::int(1))?,
        mode: match s.mode.unwrap_or(ModeKind::Wormhole) {
            ModeKind::Wormhole => SwitchMode::Wormhole,
            ModeKind::CutThrough => SwitchMode::CutThrough,
            ModeKind::StoreAndForward => SwitchMode::StoreAndForward,
        },
        selection: match s.selection.unwrap_or(SelectionKind::FirstFree) {
            SelectionKind::FirstFree => Selection::FirstFree,
            SelectionKind::RoundRobin => Selection::RoundRobin,
            SelectionKind::LeastOccupied => Selection::LeastOccupied,
            SelectionKind::Random => Selection::Random,
        },
        arbitration: match s.arbitration.unwrap_or(ArbitrationKind::RoundRobin) {
            ArbitrationKind::RoundRobin => Arbitration::RoundRobin,
            ArbitrationKind::OldestFirst => Arbitration::OldestFirst,
        },
        speedup,
        release: match s.vc_release.unwrap_or(VcReleaseKind::Tail) {
            VcReleaseKind::Tail => VcRelease::Tail,
            VcReleaseKind::TailCredit => VcRelease::TailCredit,
        },
    })
}

/// The topology keys `t` may have for its kind, and a message when one is missing.
pub(super) fn topology_keys<'a>(src: &Source, t: &RawTopology) -> R<(&'static str, &'a [&'a str])> {
    let kind = t.kind;
    let kname = match kind {
        TopoKind::Mesh => "mesh",
        TopoKind::Torus => "torus",
        TopoKind::Ring => "ring",
        TopoKind::Clos => "clos",
        TopoKind::FatTree => "fat-tree",
        TopoKind::Full => "full",
        TopoKind::File => "file",
        TopoKind::Fly => "fly",
        TopoKind::Anynet => "anynet",
        TopoKind::Macrame => "macrame",
        TopoKind::Atoll => "atoll",
    };
    // Keys that do not belong to this kind are mistakes, not silent no-ops.
    let allowed: &[&str] = match kind {
        TopoKind::Mesh | TopoKind::Torus => &["k", "n", "hosts_per_switch"],
        TopoKind::Ring => &["k", "hosts_per_switch"],
        TopoKind::Clos => &["leaves", "hosts_per_leaf", "spines", "links_per_pair"],
        TopoKind::FatTree => &["k", "n"],
        TopoKind::Full => &["switches", "hosts_per_switch"],
        TopoKind::File | TopoKind::Anynet => &["file"],
        TopoKind::Fly => &["k", "n"],
        TopoKind::Macrame => &["network", "nodes"],
        TopoKind::Atoll => &["network", "k", "nodes", "file", "hosts_per_switch", "failed"],
    };
    let present = [
        ("k", t.k.is_some()),
        ("n", t.n.is_some()),
        ("hosts_per_switch", t.hosts_per_switch.is_some()),
        ("leaves", t.leaves.is_some()),
        ("hosts_per_leaf", t.hosts_per_leaf.is_some()),
        ("spines", t.spines.is_some()),
        ("links_per_pair", t.links_per_pair.is_some()),
        ("switches", t.switches.is_some()),
        ("file", t.file.is_some()),
        ("network", t.network.is_some()),
        ("nodes", t.nodes.is_some()),
        ("failed", t.failed.is_some()),
    ];
    for (name, is) in present {
        if is && !allowed.contains(&name) {
            return Err(src.err(
                &format!("topology.{name}"),
                format!("does not apply to a {kname} topology"),
                Some(&format!("a {kname} takes: {}", allowed.join(", "))),
            ));
        }
    }
    Ok((kname, allowed))
}

fn topology(
    src: &Source,
    cycle: Ratio,
    t: &RawTopology,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
) -> R<Fabric> {
    let kind = t.kind;
    let (kname, allowed) = topology_keys(src, t)?;
    let need = |name: &str, v: Option<u32>| {
        v.ok_or_else(|| {
            src.err(
                "topology",
                format!("a {kname} topology needs `{name}`"),
                Some(&format!("a {kname} takes: {}", allowed.join(", "))),
            )
        })
    };
    let imp = |e: fabric::FabricError| src.err("topology.kind", e.to_string(), None);
    match kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => {
            let conc = t.hosts_per_switch.unwrap_or(1);
            let k: Vec<u32> = match (&t.k, kind) {
                (None, _) => {
                    return Err(src.err(
                        "topology",
                        format!("a {kname} topology needs `k`"),
                        Some("e.g. k = [8, 8] or k = 8 with n = 2"),
                    ));
                }
                (Some(Radix::One(k)), TopoKind::Ring) => vec![*k],
                (Some(Radix::Many(_)), TopoKind::Ring) => {
                    return Err(src.err(
                        "topology.k",
                        "a ring takes one number of switches",
                        Some("e.g. k = 16"),
                    ));
                }
                (Some(Radix::One(k)), _) => vec![*k; t.n.unwrap_or(2) as usize],
                (Some(Radix::Many(v)), _) => {
                    if t.n.is_some_and(|n| n as usize != v.len()) {
                        return Err(src.err(
                            "topology.n",
                            format!("n = {} but k lists {} dimensions", t.n.unwrap_or(0), v.len()),
                            None,
                        ));
                    }
                    v.clone()
                }
            };
            // (Its size is what a cube builder can refuse: the line of `k` is the one to show.)
            fabric::mesh::cube(&k, kind != TopoKind::Mesh, conc, net, host, sw)
                .map_err(|e| src.err("topology.k", e.to_string(), None))
        }
        TopoKind::Clos => fabric::clos::folded_clos(
            need("leaves", t.leaves)?,
            need("hosts_per_leaf", t.hosts_per_leaf)?,
            need("spines", t.spines)?,
            t.links_per_pair.unwrap_or(1),
            net,
            host,
            sw,
        )
        .map_err(imp),
        TopoKind::FatTree => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k,
                _ => {
                    return Err(src.err(
                        "topology.k",
                        "a fat tree needs k (switch arity) as one number",
                        Some("e.g. k = 4, n = 3"),
                    ));
                }
            };
            fabric::clos::fat_tree(k, need("n", t.n)?, net, host, sw).map_err(imp)
        }
        TopoKind::Fly => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k,
                _ => {
                    return Err(src.err(
                        "topology.k",
                        "a fly needs k (switch arity) as one number",
                        Some("e.g. k = 4, n = 3"),
                    ));
                }
            };
            fabric::fly::fly(k, need("n", t.n)?, net, host, sw).map_err(imp)
        }
        TopoKind::Anynet => {
            let f = t.file.as_ref().ok_or_else(|| {
                src.err(
                    "topology",
                    "an anynet topology needs `file`",
                    Some("file = \"anynet_file\" (BookSim2's format, docs/booksim.md)"),
                )
            })?;
            let path = src.dir.join(f);
            let text = super::read_text(&path, 256).map_err(|e| {
                src.err(
                    "topology.file",
                    format!("cannot read {}: {e}", path.display()),
                    None,
                )
            })?;
            fabric::anynet::parse(&path.display().to_string(), &text, net, host, sw, cycle).map_err(|e| {
                ConfigError {
                    file: src.file.to_string(),
                    line: locate(src.text, &parse_path("topology.file")),
                    key: "topology.file".into(),
                    msg: e.to_string(),
                    hint: None,
                    origin: None,
                }
            })
        }
        TopoKind::Full => fabric::full::fully_connected(
            need("switches", t.switches)?,
            t.hosts_per_switch.unwrap_or(1),
            net,
            host,
            sw,
        )
        .map_err(imp),
        TopoKind::Macrame | TopoKind::Atoll => Err(src.err(
            "topology.kind",
            "a Macramé or ATOLL network is built with its own routing",
            None,
        )),
        TopoKind::File => {
            let f = t.file.as_ref().ok_or_else(|| {
                src.err(
                    "topology",
                    "a file topology needs `file`",
                    Some("file = \"net.txt\" (see docs/topology-files.md)"),
                )
            })?;
            let path = src.dir.join(f);
            let text = super::read_text(&path, 256).map_err(|e| {
                src.err(
                    "topology.file",
                    format!("cannot read {}: {e}", path.display()),
                    None,
                )
            })?;
            fabric::irregular::parse(&path.display().to_string(), &text, net, host, sw, Some(cycle)).map_err(
                |e| ConfigError {
                    file: src.file.to_string(),
                    line: locate(src.text, &parse_path("topology.file")),
                    key: "topology.file".into(),
                    msg: e.to_string(),
                    hint: None,
                    origin: None,
                },
            )
        }
    }
}

pub(super) fn routing(src: &Source, r: &RawRouting, fab: &Fabric, kind: TopoKind) -> R<Routing> {
    let algo = r.algorithm.unwrap_or(match kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => AlgoKind::Dor,
        TopoKind::Clos => AlgoKind::Clos,
        TopoKind::FatTree => AlgoKind::FatTree,
        TopoKind::Full => AlgoKind::Direct,
        TopoKind::File => AlgoKind::Updown,
        TopoKind::Fly => AlgoKind::DestTag,
        TopoKind::Anynet => AlgoKind::AnynetMin,
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
            let net_vcs = fab
                .channels
                .iter()
                .find(|c| fab.is_switch(c.src) && fab.is_switch(c.dst))
                .map_or(1, |c| c.params.vcs);
            let wrap = matches!(kind, TopoKind::Torus | TopoKind::Ring);
            let dateline = match r.dateline {
                Some(true) if !wrap => {
                    return Err(src.err("routing.dateline", "datelines are for tori and rings", None));
                }
                Some(true) if net_vcs < 2 || net_vcs % 2 != 0 => {
                    return Err(src.err(
                        "routing.dateline",
                        format!("a dateline needs an even number of VCs ≥ 2 (channel.vcs = {net_vcs})"),
                        Some("set channel.vcs = 2, or dateline = false to run without (deadlock-prone)"),
                    ));
                }
                Some(d) => d,
                None => wrap && net_vcs >= 2 && net_vcs % 2 == 0,
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
        AlgoKind::FatTree => {
            Routing::Table(table::fat_tree(fab, adaptive).ok_or_else(|| mismatch("fat-tree"))?)
        }
        AlgoKind::Direct => Routing::Table(table::full(fab).ok_or_else(|| mismatch("direct"))?),
        AlgoKind::DestTag => Routing::Table(table::dest_tag(fab).ok_or_else(|| mismatch("dest-tag"))?),
        AlgoKind::AnynetMin => Routing::Table(table::anynet_min(fab).ok_or_else(|| mismatch("anynet-min"))?),
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

/// An f64 as the exact decimal it prints as.
fn exact(x: f64) -> Ratio {
    parse_decimal(&format!("{x}")).unwrap_or_else(|| Ratio::new((x * 1e9).round() as u128, 1_000_000_000))
}

fn workload(u: &Units, t: &RawTraffic, fab: &Fabric, seed: u64, flit_bytes: u32) -> R<Workload> {
    let src = u.src;
    let n = fab.num_hosts() as u32;
    let include_self = t.include_self.unwrap_or(false);
    let kind = t.pattern.unwrap_or(PatternKind::Uniform);
    if t.pairs.is_some() && kind != PatternKind::Pairs {
        return Err(src.err("traffic.pairs", "pairs apply to pattern = \"pairs\"", None));
    }
    if t.pairs.as_ref().is_some_and(|p| p.is_empty()) {
        return Err(src.err(
            "traffic.pairs",
            "lists no pair: no host would send",
            Some("pairs = [[0, 5], [5, 0]]; pattern = \"none\" for no traffic"),
        ));
    }
    // (On one host, any pattern sends to itself only with include_self.)
    if t.include_self.is_some() && n >= 2 && !matches!(kind, PatternKind::Uniform | PatternKind::HotSpot) {
        return Err(src.err(
            "traffic.include_self",
            "applies to pattern = \"uniform\" and \"hot-spot\" (the others fix each destination)",
            None,
        ));
    }
    if (t.hot.is_some() || t.hot_fraction.is_some()) && kind != PatternKind::HotSpot {
        return Err(src.err(
            if t.hot.is_some() {
                "traffic.hot"
            } else {
                "traffic.hot_fraction"
            },
            "hot and hot_fraction apply to pattern = \"hot-spot\"",
            None,
        ));
    }
    let spec = match kind {
        PatternKind::None => PatternSpec::None,
        PatternKind::Uniform => PatternSpec::Uniform,
        PatternKind::Pairs => PatternSpec::Pairs(
            t.pairs
                .as_ref()
                .ok_or_else(|| src.err("traffic", "pattern \"pairs\" needs pairs = [[src, dst], …]", None))?
                .iter()
                .map(|p| (p[0], p[1]))
                .collect(),
        ),
        PatternKind::Permutation => PatternSpec::Permutation,
        PatternKind::Transpose => PatternSpec::Transpose,
        PatternKind::BitComplement => PatternSpec::BitComplement,
        PatternKind::BitReverse => PatternSpec::BitReverse,
        PatternKind::Shuffle => PatternSpec::Shuffle,
        PatternKind::Tornado => PatternSpec::Tornado,
        PatternKind::Neighbour | PatternKind::Neighbor => PatternSpec::Neighbour,
        PatternKind::HotSpot => PatternSpec::HotSpot {
            hot: t
                .hot
                .clone()
                .ok_or_else(|| src.err("traffic", "pattern \"hot-spot\" needs hot = [hosts]", None))?,
            fraction: t
                .hot_fraction
                .ok_or_else(|| src.err("traffic", "pattern \"hot-spot\" needs hot_fraction", None))?,
        },
    };
    let mut setup = rng::Stream::new(seed, rng::Purpose::Setup, 0);
    let pattern = Pattern::build(&spec, &fab.shape, n, include_self, &mut setup)
        .map_err(|m| src.err("traffic.pattern", m, None))?;
    let sizes = match (&t.sizes, t.packet_size) {
        (Some(_), Some(_)) => {
            return Err(src.err("traffic.sizes", "give packet_size or sizes, not both", None));
        }
        (Some(v), None) => Sizes::weighted(v)
            .map_err(|m| src.err("traffic.sizes", m, Some("sizes = [[4, 0.8], [32, 0.2]]")))?,
        (None, p) => {
            let p = p.unwrap_or(1);
            if p == 0 {
                return Err(src.err("traffic.packet_size", "must be at least 1 flit", None));
            }
            Sizes::Fixed(p)
        }
    };
    let injection = t.injection.unwrap_or(InjectionKind::Bernoulli);
    let cycle = u.cycle;
    let load = match (&t.load, injection) {
        (_, InjectionKind::Backlogged) => 1.0,
        (None, _) if kind == PatternKind::None => 1.0,
        (None, _) => {
            return Err(src.err(
                "traffic",
                "needs a load (flits/cycle/host, or a rate such as \"5 MB/s\")",
                Some("e.g. load = 0.2"),
            ));
        }
        (Some(LoadValue::Flits(x)), _) => *x,
        (Some(LoadValue::Rate(s)), _) => {
            match parse_quantity(s).map_err(|m| src.err("traffic.load", m, Some(UNIT_HINT)))? {
                // bits/s → flits per cycle.
                Quantity::BitRate(r) => r
                    .times(cycle)
                    .over(Ratio::int(SEC as u128 * 8 * flit_bytes as u128))
                    .to_f64(),
                q => {
                    return Err(src.err(
                        "traffic.load",
                        format!(
                            "expected a number of flits/cycle or a data rate, got {}",
                            q.kind()
                        ),
                        None,
                    ));
                }
            }
        }
    };
    if !(load.is_finite() && load > 0.0) {
        return Err(src.err("traffic.load", format!("must be positive, got {load}"), None));
    }
    if (t.on.is_some() || t.off.is_some()) && injection != InjectionKind::OnOff {
        return Err(src.err("traffic.on", "on and off apply to injection = \"on-off\"", None));
    }
    let mean = sizes.mean();
    let pkt_rate = load / mean; // packets per cycle
    // (Without synthetic traffic the load is not used.)
    let synthetic = kind != PatternKind::None && injection != InjectionKind::Backlogged;
    let gap = cycle.to_f64() / pkt_rate; // mean time between a host's packets [ps]
    if synthetic && (!gap.is_finite() || gap > MAX_SPAN as f64) {
        return Err(src.err(
            "traffic.load",
            format!(
                "{load:?} flits/cycle/host is one packet every {:.3e} s per host; reef's limit is 1000 s",
                gap / SEC as f64
            ),
            Some("raise the load"),
        ));
    }
    // Far more than a host's channel can send is a backlogged source: the packets created
    // and never sent in the window are counted one by one at its end, so an absurd load
    // would take forever to count. Ten times the channel covers any sweep past saturation.
    let fastest = (0..fab.num_hosts() as u32)
        .map(|h| fab.channels[fab.injection_channel(h).idx()].params.flit_time)
        .min();
    if let Some(ft) = fastest
        && synthetic
        && load > 10.0 * cycle.to_f64() / ft as f64
    {
        return Err(src.err(
            "traffic.load",
            format!(
                "{load:?} flits/cycle/host is more than ten times what a host's channel can send ({:?} flits/cycle)",
                cycle.to_f64() / ft as f64
            ),
            Some("use injection = \"backlogged\" for sources that always have a packet"),
        ));
    }
    let clock = Clock::from_period(cycle);
    let process = match injection {
        InjectionKind::Backlogged => Process::Backlogged,
        InjectionKind::Bernoulli => {
            if pkt_rate > 1.0 {
                return Err(src.err("traffic.load", format!("{load} flits/cycle with {mean}-flit packets needs {pkt_rate:.3} packets per cycle; Bernoulli injection makes at most one"), Some("use injection = \"poisson\", or larger packets")));
            }
            Process::Bernoulli {
                p: pkt_rate,
                cycle: clock,
            }
        }
        InjectionKind::Poisson => Process::Poisson {
            mean_gap: cycle.to_f64() / pkt_rate,
        },
        InjectionKind::Periodic => Process::Periodic {
            period: cycle.times(exact(mean)).over(exact(load)),
        },
        InjectionKind::OnOff => {
            let on = u.duration(
                "traffic.on",
                t.on.as_deref().ok_or_else(|| {
                    src.err(
                        "traffic",
                        "on-off injection needs on = \"<mean on period>\"",
                        None,
                    )
                })?,
            )?;
            let off = u.duration(
                "traffic.off",
                t.off.as_deref().ok_or_else(|| {
                    src.err(
                        "traffic",
                        "on-off injection needs off = \"<mean off period>\"",
                        None,
                    )
                })?,
            )?;
            within_span(src, "traffic.on", on.round() as u128, || {
                "the on period".to_string()
            })?;
            within_span(src, "traffic.off", off.round() as u128, || {
                "the off period".to_string()
            })?;
            let (on, off) = (on.over(cycle).to_f64(), off.over(cycle).to_f64());
            if on < 1.0 || off < 1.0 {
                return Err(src.err(
                    "traffic.on",
                    "on and off periods must be at least one cycle",
                    None,
                ));
            }
            let p_on = pkt_rate * (on + off) / on;
            if p_on > 1.0 {
                return Err(src.err(
                    "traffic.load",
                    format!("the on-periods would need {p_on:.3} packets per cycle"),
                    Some("lengthen `on` or lower the load"),
                ));
            }
            // A source draws its on and off periods one by one, so a packet costs a draw per
            // period it spans: refuse loads that would take tens of thousands per packet (a
            // run would seem to hang) rather than approximate them.
            let periods = 1.0 / (p_on * on);
            if periods > MAX_ONOFF_PERIODS {
                return Err(src.err(
                    "traffic.load",
                    format!(
                        "at this load a packet comes once in {periods:.3e} on-periods on average; reef \
                         draws the periods one by one and takes at most {MAX_ONOFF_PERIODS:.0e}"
                    ),
                    Some("lengthen `on` and `off` in proportion, or raise the load"),
                ));
            }
            Process::OnOff {
                p_on,
                mean_on: on,
                mean_off: off,
                cycle: clock,
            }
        }
    };
    Ok(Workload {
        pattern,
        process,
        sizes,
        load,
    })
}

/// The first key given in a channel section, if any.
pub(super) fn channel_key(c: &RawChannel) -> Option<&'static str> {
    [
        ("flit_time", c.flit_time.is_some()),
        ("rate", c.rate.is_some()),
        ("flit_bits", c.flit_bits.is_some()),
        ("tail_time", c.tail_time.is_some()),
        ("tail_bits", c.tail_bits.is_some()),
        ("latency", c.latency.is_some()),
        ("vcs", c.vcs.is_some()),
        ("buffer", c.buffer.is_some()),
        ("flow_control", c.flow_control.is_some()),
        ("credit_delay", c.credit_delay.is_some()),
        ("token_grant", c.token_grant.is_some()),
        ("token_max", c.token_max.is_some()),
        ("token_time", c.token_time.is_some()),
    ]
    .iter()
    .find(|x| x.1)
    .map(|x| x.0)
}

/// The first key given in the switch section, if any.
pub(super) fn switch_key(s: &RawSwitch) -> Option<&'static str> {
    [
        ("mode", s.mode.is_some()),
        ("router_delay", s.router_delay.is_some()),
        ("selection", s.selection.is_some()),
        ("arbitration", s.arbitration.is_some()),
        ("speedup", s.speedup.is_some()),
        ("vc_release", s.vc_release.is_some()),
        ("vc_choice", s.vc_choice.is_some()),
        ("vc_reuse_delay", s.vc_reuse_delay.is_some()),
        ("allocator", s.allocator.is_some()),
        ("output_buffer", s.output_buffer.is_some()),
        ("crossbar_time", s.crossbar_time.is_some()),
    ]
    .iter()
    .find(|x| x.1)
    .map(|x| x.0)
}

/// A Macramé network (`../shared/systems/ieee1355.md`): its STC104s, DS links and interval
/// tables are the hardware's, so channel and switch keys do not apply.
fn macrame(src: &Source, raw: &RawConfig) -> R<(Fabric, Routing)> {
    use crate::systems::ieee1355::net::{Net, RouteMode, Topo, fabric_and_routing, with_output_fifos};
    let t = &raw.topology;
    let hint = "a macrame topology takes: network (clos, grid, torus), nodes";
    topology_keys(src, t)?;
    let topo = match t.network.as_deref() {
        Some(n) => Topo::parse(n).ok_or_else(|| {
            src.err(
                "topology.network",
                format!("unknown Macramé network `{n}`"),
                Some("clos, grid or torus"),
            )
        })?,
        None => return Err(src.err("topology", "a macrame topology needs `network`", Some(hint))),
    };
    let nodes = t
        .nodes
        .ok_or_else(|| src.err("topology", "a macrame topology needs `nodes`", Some(hint)))?;
    if let Some(k) = channel_key(&raw.channel) {
        return Err(src.err(
            &format!("channel.{k}"),
            "a Macramé network has DS links (100 MBaud, tokens, 32-character FIFOs)",
            Some("remove the [channel] section"),
        ));
    }
    if let Some(k) = raw.host_channel.as_ref().and_then(channel_key) {
        return Err(src.err(
            &format!("host_channel.{k}"),
            "a Macramé network has DS links",
            Some("remove the [host_channel] section"),
        ));
    }
    if let Some(k) = switch_key(&raw.switch) {
        return Err(src.err(
            &format!("switch.{k}"),
            "a Macramé network has STC104 switches",
            Some("remove the [switch] section"),
        ));
    }
    let r = &raw.routing;
    if r.algorithm.is_some_and(|a| a != AlgoKind::Interval) {
        return Err(src.err(
            "routing.algorithm",
            "a Macramé network routes by STC104 interval tables",
            Some("algorithm = \"interval\", or leave it out"),
        ));
    }
    for (k, given) in [
        ("dateline", r.dateline.is_some()),
        ("dateline_class", r.dateline_class.is_some()),
        ("ties", r.ties.is_some()),
        ("root", r.root.is_some()),
        ("paths", r.paths.is_some()),
        ("route", !r.route.is_empty()),
    ] {
        if given {
            return Err(src.err(
                &format!("routing.{k}"),
                "does not apply to interval routing",
                Some("interval routing takes: adaptive"),
            ));
        }
    }
    let route = if r.adaptive.unwrap_or(true) {
        RouteMode::Adaptive
    } else {
        RouteMode::Deterministic
    };
    let net = Net::new(topo, nodes, route);
    let (fab, routing) = fabric_and_routing(&net).map_err(|m| src.err("topology.nodes", m, None))?;
    Ok((with_output_fifos(fab, net.buffering), routing))
}

/// The counts of a generated topology, from its keys, before it is built (`None` for
/// kinds whose size is fixed or bounded by a file); with `tables` where its routing builds
/// per-switch tables. Invalid sizes are left to the builders to refuse.
fn planned_counts(t: &RawTopology, r: &RawRouting, net: &LinkParams, host: &LinkParams) -> Option<Counts> {
    let conc = t.hosts_per_switch.unwrap_or(1) as u128;
    // (switches, hosts, switch-to-switch channels), in u128: sizes far past any machine.
    let (s, h, cn): (u128, u128, u128) = match t.kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => {
            let k: Vec<u128> = match (&t.k, t.kind) {
                (Some(Radix::One(k)), TopoKind::Ring) => vec![*k as u128],
                (Some(Radix::One(k)), _) => vec![*k as u128; t.n.unwrap_or(2).min(64) as usize],
                (Some(Radix::Many(v)), _) => v.iter().map(|&x| x as u128).collect(),
                _ => return None,
            };
            if k.iter().any(|&x| x < 2) {
                return None;
            }
            let s: u128 = k.iter().try_fold(1u128, |a, &x| a.checked_mul(x))?;
            let wrap = t.kind != TopoKind::Mesh;
            let cn = k
                .iter()
                .map(|&x| 2 * (if wrap { x } else { x - 1 }) * (s / x))
                .sum();
            (s, s * conc, cn)
        }
        TopoKind::Clos => {
            let (l, hl, sp) = (t.leaves? as u128, t.hosts_per_leaf? as u128, t.spines? as u128);
            let m = t.links_per_pair.unwrap_or(1) as u128;
            (l + sp, l * hl, 2 * l * sp * m)
        }
        TopoKind::FatTree => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k as u128,
                _ => return None,
            };
            let n = t.n?.min(64);
            let h = k.checked_pow(n)?;
            (n as u128 * h / k.max(1), h, 2 * (n.saturating_sub(1)) as u128 * h)
        }
        TopoKind::Full => {
            let s = t.switches? as u128;
            (s, s * conc, s * s.saturating_sub(1))
        }
        TopoKind::Fly => {
            let k = match &t.k {
                Some(Radix::One(k)) => *k as u128,
                _ => return None,
            };
            let n = t.n?.min(64);
            let h = k.checked_pow(n)?;
            (n as u128 * h / k.max(1), h, n.saturating_sub(1) as u128 * h)
        }
        _ => return None,
    };
    let algo = r.algorithm;
    let tables = match t.kind {
        TopoKind::Clos | TopoKind::FatTree | TopoKind::Full | TopoKind::Fly => {
            algo.is_none_or(|a| a != AlgoKind::Source)
        }
        _ => matches!(
            algo,
            Some(AlgoKind::Updown | AlgoKind::Minimal | AlgoKind::Source)
        ),
    };
    let ch = 2 * h;
    let c = |x: u128| x.min(u64::MAX as u128) as u64;
    Some(Counts {
        switches: c(s),
        hosts: c(h),
        channels: c(cn + ch),
        vcs: c(cn * net.vcs as u128 + ch * host.vcs as u128),
        slots: c(cn * net.vcs as u128 * net.buffer as u128 + ch * host.vcs as u128 * host.buffer as u128),
        table_entries: if tables { c(s * h) } else { 0 },
    })
}

/// What to change when a network does not fit in memory.
fn smaller(kind: TopoKind) -> &'static str {
    match kind {
        TopoKind::Mesh | TopoKind::Torus | TopoKind::Ring => {
            "a smaller topology.k or hosts_per_switch, fewer channel.vcs or a smaller channel.buffer"
        }
        TopoKind::Clos => {
            "fewer topology.leaves, hosts_per_leaf or spines, fewer channel.vcs or a smaller channel.buffer"
        }
        TopoKind::FatTree | TopoKind::Fly => {
            "a smaller topology.k or n, fewer channel.vcs or a smaller channel.buffer"
        }
        TopoKind::Full => {
            "fewer topology.switches or hosts_per_switch, fewer channel.vcs or a smaller channel.buffer"
        }
        _ => "a smaller network, fewer VCs or smaller buffers",
    }
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
    fab.vc_choice = match raw.switch.vc_choice.unwrap_or(VcChoiceKind::Lowest) {
        VcChoiceKind::Lowest => VcChoice::Lowest,
        VcChoiceKind::RoundRobin => VcChoice::RoundRobin,
    };
    fab.vc_reuse = u.ps_or("switch.vc_reuse_delay", &raw.switch.vc_reuse_delay, Ratio::int(0))?;
    fab.sw_allocator = match raw.switch.allocator.unwrap_or(SwAllocatorKind::Greedy) {
        SwAllocatorKind::Greedy => SwAllocator::Greedy,
        // One iteration of iSLIP is the separable output-first allocator (pointers moved
        // only past accepted grants in both).
        SwAllocatorKind::Islip | SwAllocatorKind::SeparableOutputFirst => SwAllocator::SeparableOutputFirst,
        SwAllocatorKind::SeparableInputFirst => SwAllocator::SeparableInputFirst,
    };
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
    if let Some(m) = &messages
        && let Some(key) = [
            ("warmup", s.warmup.is_some()),
            ("measure", s.measure.is_some()),
            ("drain_limit", s.drain_limit.is_some()),
            ("drain", s.drain.is_some()),
            ("batches", s.batches.is_some()),
        ]
        .iter()
        .find(|k| k.1)
    {
        return Err(src.err(
            &format!("sim.{}", key.0),
            format!(
                "a {} runs until its messages are through: it has no window",
                m.kind.name()
            ),
            Some(&format!(
                "remove it (on the command line: --unset sim.{}); traffic.messages sets how many",
                key.0
            )),
        ));
    }
    let sampling = sampling(&u, s, messages.is_some())?;
    let (warmup, measure) = if messages.is_some() {
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
        None if messages.is_some() => 0,
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
            drain_all: s.drain == Some(DrainKind::All),
            batches,
            cycle,
            check: s.check.unwrap_or(false),
            watchdog,
            flit_bytes,
            trains: s.trains.unwrap_or(true),
            express: s.express.unwrap_or(true),
            max_header: 0,
            sampling,
        },
        host: hp,
        messages,
    })
}

/// BookSim2's sampling (`sim.sampling = "booksim"` and its keys), or `None` for the fixed
/// window, refusing the keys of the one not chosen.
fn sampling(u: &Units, s: &RawSim, messages: bool) -> R<Option<crate::stats::sampling::Sampling>> {
    let src = u.src;
    let booksim = s.sampling == Some(SamplingKind::Booksim);
    let own = [
        ("sample_period", s.sample_period.is_some()),
        ("warmup_periods", s.warmup_periods.is_some()),
        ("max_samples", s.max_samples.is_some()),
        ("latency_thres", s.latency_thres.is_some()),
        ("warmup_thres", s.warmup_thres.is_some()),
        ("acc_warmup_thres", s.acc_warmup_thres.is_some()),
        ("stopping_thres", s.stopping_thres.is_some()),
        ("acc_stopping_thres", s.acc_stopping_thres.is_some()),
    ];
    if !booksim {
        if let Some(k) = own.iter().find(|k| k.1) {
            return Err(src.err(
                &format!("sim.{}", k.0),
                "is read only with BookSim2's sampling",
                Some("set sim.sampling = \"booksim\", or remove it"),
            ));
        }
        return Ok(None);
    }
    if messages {
        return Err(src.err(
            "sim.sampling",
            "a message workload runs until its messages are through: it has no sample periods",
            Some("remove it (on the command line: --unset sim.sampling)"),
        ));
    }
    if let Some(k) = [("warmup", s.warmup.is_some()), ("measure", s.measure.is_some())]
        .iter()
        .find(|k| k.1)
    {
        return Err(src.err(
            &format!("sim.{}", k.0),
            "BookSim2's sampling decides the warm-up and the window",
            Some("remove it, or set sim.warmup_periods, sim.sample_period and sim.max_samples"),
        ));
    }
    let cycle = u.cycle.floor().max(1);
    let mut p = crate::stats::sampling::Sampling::booksim_defaults(cycle);
    if let Some(x) = &s.sample_period {
        p.period = u.positive("sim.sample_period", u.ps("sim.sample_period", x)?)?;
    }
    if let Some(n) = s.max_samples {
        if n == 0 {
            return Err(src.err("sim.max_samples", "must be at least 1", None));
        }
        p.max_samples = n;
    }
    if let Some(n) = s.warmup_periods {
        p.warmup_periods = n;
    }
    if p.warmup_periods >= p.max_samples {
        return Err(src.err(
            if s.warmup_periods.is_some() {
                "sim.warmup_periods"
            } else {
                "sim.max_samples"
            },
            format!(
                "{} warm-up periods leave none to measure in max_samples = {}",
                p.warmup_periods, p.max_samples
            ),
            Some("max_samples counts the warm-up periods too"),
        ));
    }
    within_span(
        src,
        "sim.max_samples",
        p.period as u128 * p.max_samples as u128 * 2,
        || "max_samples sample periods and their drain".to_string(),
    )?;
    if let Some(x) = &s.latency_thres {
        p.latency_thres = if x.trim() == "off" {
            None
        } else {
            Some(u.ps("sim.latency_thres", x)?)
        };
    }
    for (key, v, slot) in [
        ("sim.warmup_thres", s.warmup_thres, &mut p.warmup_thres),
        (
            "sim.acc_warmup_thres",
            s.acc_warmup_thres,
            &mut p.acc_warmup_thres,
        ),
        ("sim.stopping_thres", s.stopping_thres, &mut p.stopping_thres),
        (
            "sim.acc_stopping_thres",
            s.acc_stopping_thres,
            &mut p.acc_stopping_thres,
        ),
    ] {
        if let Some(v) = v {
            if !v.is_finite() {
                return Err(src.err(key, "must be a number (negative: no test)", None));
            }
            *slot = v;
        }
    }
    Ok(Some(p))
}

/// Credits a sender is sure to be able to hold at once, which a cut-through head needs for
/// its whole packet: the buffer; with tokens, grants come in whole tokens only when that
/// many slots are free and not yet granted, so a sender left with r < grant credits may get
/// no more than the grants that fit in the rest: sure is min(buffer, outstanding limit) −
/// grant + 1.
fn grantable(p: &crate::fabric::LinkParams) -> u32 {
    match p.flow {
        FlowControl::Tokens {
            grant,
            max_outstanding,
            ..
        } => (p.buffer.min(max_outstanding) + 1).saturating_sub(grant.max(1)),
        // No flow control: the receiver's buffer grows as it must.
        FlowControl::None => u32::MAX,
        _ => p.buffer,
    }
}

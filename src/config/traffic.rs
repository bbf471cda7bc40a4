//! A config's traffic and measurement: `[traffic]` becomes a [`Workload`] (pattern,
//! injection process, sizes, in flits per cycle per host), and `[sim]`'s sampling keys
//! BookSim2's convergence test ([`crate::stats::sampling`]).

use super::build::*;
use super::raw::*;
use crate::fabric::Fabric;
use crate::rng;
use crate::time::{Clock, MAX_SPAN, Quantity, Ratio, SEC, UNIT_HINT, parse_decimal, parse_quantity};
use crate::workload::{Pattern, PatternSpec, Process, Sizes, Workload};

/// The most on-periods an on-off source may span per packet on average (see `workload`).
const MAX_ONOFF_PERIODS: f64 = 1e4;

/// An f64 as the exact decimal it prints as.
pub(super) fn exact(x: f64) -> Ratio {
    parse_decimal(&format!("{x}")).unwrap_or_else(|| Ratio::new((x * 1e9).round() as u128, 1_000_000_000))
}

pub(super) fn workload(u: &Units, t: &RawTraffic, fab: &Fabric, seed: u64, flit_bytes: u32) -> R<Workload> {
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
    for (key, given) in [
        ("traffic.batch", t.batch.is_some()),
        ("traffic.max_outstanding", t.max_outstanding.is_some()),
    ] {
        if given && injection != InjectionKind::Batch {
            return Err(src.err(key, "applies to injection = \"batch\"", None));
        }
    }
    if injection == InjectionKind::Batch {
        return batch(u, t, pattern, sizes);
    }
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
        InjectionKind::Batch => unreachable!("a batch's workload is made above"),
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

/// The most packets a batch source may send.
const MAX_BATCH: u64 = 1_000_000_000;

/// `injection = "batch"`: each host creates `batch` packets, one a cycle from the start
/// (BookSim2's `sim_type = batch`, whose sources ignore the injection rate).
fn batch(u: &Units, t: &RawTraffic, pattern: Pattern, sizes: Sizes) -> R<Workload> {
    let src = u.src;
    for (key, given) in [
        ("traffic.load", t.load.is_some()),
        ("traffic.on", t.on.is_some()),
        ("traffic.off", t.off.is_some()),
    ] {
        if given {
            return Err(src.err(
                key,
                "a batch has no load: each host creates a packet a cycle until it has made `batch` of them",
                // (`reef sweep` sets the load: a batch is not for sweeping.)
                Some(&format!(
                    "remove {key}{}",
                    if key == "traffic.load" {
                        " (a sweep varies the load: run a batch with `reef run`)"
                    } else {
                        ""
                    }
                )),
            ));
        }
    }
    let count = t.batch.ok_or_else(|| {
        src.err(
            "traffic",
            "injection = \"batch\" needs batch = <packets each host sends>",
            Some("batch = 1000"),
        )
    })?;
    if !(1..=MAX_BATCH).contains(&count) {
        return Err(src.err(
            "traffic.batch",
            format!("must be 1..={MAX_BATCH} packets, got {count}"),
            None,
        ));
    }
    // A batch is created in its first `count` cycles; twice that must fit reef's clock (a
    // batch not through by its limit of 1000 s is reported so).
    within_span(
        src,
        "traffic.batch",
        Ratio::int(2 * count as u128).times(u.cycle).ceil() as u128,
        || format!("twice a batch of {count} packets, one a cycle,"),
    )?;
    Ok(Workload {
        pattern,
        process: Process::Batch {
            count,
            cycle: Clock::from_period(u.cycle),
            window: t.max_outstanding.unwrap_or(0),
        },
        sizes,
        load: 1.0,
    })
}

/// BookSim2's sampling (`sim.sampling = "booksim"` or `"booksim-throughput"` and their
/// keys), or `None` for the fixed window, refusing the keys of the one not chosen.
pub(super) fn sampling(u: &Units, s: &RawSim, messages: bool) -> R<Option<crate::stats::sampling::Sampling>> {
    let src = u.src;
    let throughput = s.sampling == Some(SamplingKind::BooksimThroughput);
    let booksim = throughput || s.sampling == Some(SamplingKind::Booksim);
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
    if throughput {
        // BookSim2's throughput simulation reads none of these (`_measure_latency` false),
        // and stops its sources when the sampling ends.
        let unread = [
            ("latency_thres", s.latency_thres.is_some()),
            ("warmup_thres", s.warmup_thres.is_some()),
            ("stopping_thres", s.stopping_thres.is_some()),
        ];
        if let Some(k) = unread.iter().find(|k| k.1) {
            return Err(src.err(
                &format!("sim.{}", k.0),
                "BookSim2's throughput sampling tests only the accepted throughput: it does \
                 not read this key",
                Some("remove it, or set sim.sampling = \"booksim\""),
            ));
        }
        if s.drain == Some(DrainKind::Measured) {
            return Err(src.err(
                "sim.drain",
                "BookSim2's throughput sampling stops the sources when the sampling ends \
                 (drain = \"all\")",
                Some("remove it"),
            ));
        }
    }
    let cycle = u.cycle.floor().max(1);
    let mut p = crate::stats::sampling::Sampling::booksim_defaults(cycle);
    p.latency = !throughput;
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

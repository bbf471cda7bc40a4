//! A config's channels and switches: `[channel]`, `[host_channel]` and `[switch]` become
//! [`LinkParams`] and [`SwitchParams`], units converted through the declared clock
//! (defaults in `docs/config.md`), and the keys a section sets named for messages.

use super::build::*;
use super::raw::*;
use crate::fabric::{Arbitration, Selection, SwitchMode, SwitchParams, VcRelease};
use crate::fabric::{FlowControl, LinkParams};
use crate::time::{Clock, Quantity, Ratio, SEC, UNIT_HINT, parse_quantity};

pub(super) fn link_params(u: &Units, sect: &str, c: &RawChannel, base: Option<&LinkParams>) -> R<LinkParams> {
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

pub(super) fn switch_params(u: &Units, s: &RawSwitch) -> R<SwitchParams> {
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
            SelectionKind::RandomAny => Selection::RandomAny,
            SelectionKind::TwoRandomLeastUsed => Selection::TwoRandomLeastUsed,
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
        ("flit_delay", s.flit_delay.is_some()),
        ("internal_speedup", s.internal_speedup.is_some()),
        ("output_speedup", s.output_speedup.is_some()),
        ("allocator", s.allocator.is_some()),
        ("output_buffer", s.output_buffer.is_some()),
        ("crossbar_time", s.crossbar_time.is_some()),
    ]
    .iter()
    .find(|x| x.1)
    .map(|x| x.0)
}

/// Credits a sender is sure to be able to hold at once, which a cut-through head needs for
/// its whole packet: the buffer; with tokens, grants come in whole tokens only when that
/// many slots are free and not yet granted, so a sender left with r < grant credits may get
/// no more than the grants that fit in the rest: sure is min(buffer, outstanding limit) −
/// grant + 1.
pub(super) fn grantable(p: &crate::fabric::LinkParams) -> u32 {
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

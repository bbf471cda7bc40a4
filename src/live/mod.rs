//! `reef live clan`: CLAN's Queue and Tripwire run for real between two processes on this
//! machine ([`queue`]: a shared mapping as the aperture, the 10 KB ring with its lazy
//! read pointer, a watched location plus an eventfd wake-up as Tripwire), measured beside
//! the sockets a server would otherwise use (TCP over loopback, Unix domain sockets) with
//! the experiments of `reef reproduce clan` ([`bench`]), and printed beside the 2001 figures
//! of `shared/systems/clan.md`.
//!
//! Measurements are wall-clock times on a shared machine: they vary from run to run (only
//! the simulation is deterministic). Round trips are reported as medians.

pub mod bench;
pub mod queue;

use std::io::IsTerminal;
use std::time::Duration;

use serde_json::json;

use crate::systems::Record;
use crate::systems::Report;
use crate::systems::clan::curves::{self, Streaming};
use crate::systems::clan::params::PUBLISHED;
use crate::systems::clan::stream_sizes;
use bench::Transport;
use queue::LiveError;

/// How `reef live clan` runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long a Queue waiter polls before it sleeps (spec: 15 µs).
    pub poll: Duration,
    /// Shorter measurements (for tests).
    pub quick: bool,
    /// Show progress on a terminal.
    pub progress: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            poll: Duration::from_micros(15),
            quick: false,
            progress: false,
        }
    }
}

/// Longest poll time accepted [µs].
pub const MAX_POLL_US: u64 = 1_000_000;

/// Parses `--poll-us`: a whole number of microseconds, 0 to [`MAX_POLL_US`].
pub fn parse_poll_us(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if v <= MAX_POLL_US => Ok(Duration::from_micros(v)),
        _ => Err(format!(
            "expected a whole number of microseconds from 0 to {MAX_POLL_US} (the time a waiter polls before it sleeps), got `{s}`"
        )),
    }
}

/// The systems measured, by their names in the records.
fn systems(poll: Duration) -> [(&'static str, Transport); 4] {
    [
        ("clan-poll", Transport::Clan { poll }),
        ("clan-sleep", Transport::Clan { poll: Duration::ZERO }),
        ("tcp-loopback", Transport::Tcp),
        ("unix-socket", Transport::Unix),
    ]
}

/// Requests outstanding in the transaction measurements.
pub const OUTSTANDING: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs every measurement.
pub fn run_clan(opts: &Options) -> Result<Report, LiveError> {
    let say = |what: &str| {
        if opts.progress && std::io::stderr().is_terminal() {
            eprintln!("reef live clan: {what}");
        }
    };
    let (rt_dur, st_dur, tx_dur) = if opts.quick {
        (
            Duration::from_millis(30),
            Duration::from_millis(15),
            Duration::from_millis(15),
        )
    } else {
        (
            Duration::from_millis(400),
            Duration::from_millis(200),
            Duration::from_millis(200),
        )
    };
    let p = PUBLISHED;
    let mut rep = Report::live("clan-live");
    let sys = systems(opts.poll);

    say("round trips");
    // The sleeping round trip: requests far enough apart that the server has gone to sleep
    // (the gap is slept by the client, so it is at least this).
    let gap = opts.poll.max(Duration::from_micros(15)) * 4;
    /// A round trip: its system, transport, gap between requests and the 2001 figure.
    type RtCase<'a> = (&'a str, Transport, Duration, Option<(f64, &'a str)>);
    let rt_cases: [RtCase; 4] = [
        (
            "clan-poll",
            sys[0].1,
            Duration::ZERO,
            Some((p.clan_rtt_poll.value, p.clan_rtt_poll.source)),
        ),
        (
            "clan-sleep",
            Transport::Clan { poll: opts.poll },
            gap,
            Some((p.clan_rtt_sleep.value, p.clan_rtt_sleep.source)),
        ),
        (
            "tcp-loopback",
            Transport::Tcp,
            Duration::ZERO,
            Some((p.gige_rtt.value, p.gige_rtt.source)),
        ),
        ("unix-socket", Transport::Unix, Duration::ZERO, None),
    ];
    for (name, t, g, fig) in rt_cases {
        let max = if g.is_zero() { 200_000 } else { 4000 };
        let mut v = bench::round_trips(t, rt_dur, max, g)?;
        let mut r = Record::new(
            "round-trip",
            &[("system", json!(name)), ("size_bytes", json!(bench::MESSAGE))],
            "rtt_us",
            "us",
            median(&mut v),
        );
        if let Some((f, src)) = fig {
            r = r.published(f, src);
        }
        rep.push(r);
    }

    say("streaming");
    let mut series = Vec::new();
    for (k, (name, t)) in sys.iter().enumerate() {
        let mut pts = Vec::new();
        for s in stream_sizes() {
            pts.push((s, bench::stream(*t, s as usize, st_dur)?));
        }
        let clan = matches!(t, Transport::Clan { .. });
        let buffer = if clan {
            Some((queue::QUEUE_BYTES, "the Queue's ring"))
        } else {
            bench::socket_buffer(*t).map(|b| {
                (
                    b,
                    "the kernel's send + receive buffer of a fresh socket (getsockopt)",
                )
            })
        };
        curves::push_streaming(
            &mut rep,
            &Streaming {
                system: name,
                points: &pts,
                peak: if clan {
                    Ok(p.clan_bandwidth)
                } else {
                    Err("no 2001 figure of the same system")
                },
                buffer,
            },
        );
        series.push(curves::streaming_series(name, k, &pts));
    }
    rep.plots.push(
        curves::streaming_plot(
            "reef live clan: bandwidth against transfer size on this machine",
            series,
            true,
        )
        .map_err(LiveError::Failed)?,
    );

    say("transactions");
    let mut series = Vec::new();
    for (k, (name, t)) in sys.iter().enumerate() {
        let mut pts = Vec::new();
        for o in OUTSTANDING {
            pts.push((o, bench::transactions(*t, o as usize, tx_dur)?));
        }
        let (rate, per_message) = match t {
            Transport::Clan { .. } => (Some(p.clan_transactions), Some(p.clan_server_us)),
            Transport::Tcp => (Some(p.gige_transactions), None),
            Transport::Unix => (None, None),
        };
        curves::push_transactions(&mut rep, name, &pts, rate, per_message);
        series.push(curves::transactions_series(name, k, &pts));
    }
    rep.plots.push(
        curves::transactions_plot(
            "reef live clan: requests/s against requests outstanding on this machine",
            series,
        )
        .map_err(LiveError::Failed)?,
    );
    rep.notes.push(format!(
        "clan-poll: the Queue with waiters that poll for {} us before they sleep on their eventfd; \
         clan-sleep: the same Queue with waiters that sleep at once (for round trips: requests {} us \
         apart, so that the polling server has gone to sleep, as in the 2001 figure). The Queue's \
         ring is 10 KB per direction, its read pointer written back after half of it is consumed.",
        opts.poll.as_micros(),
        gap.as_micros()
    ));
    rep.notes.push(
        "the 2001 column is the figure of the same experiment on the 2001 hardware (a 533 MHz Alpha, \
         the CLAN NIC; tcp-loopback beside Gigabit Ethernet TCP): for scale, not for agreement. Here \
         both ends share one machine's memory and cores, and the sockets cross no network."
            .into(),
    );
    rep.notes.push(format!(
        "wall-clock measurements on a shared machine ({} cores here): they vary from run to run; \
             round trips are medians, rates are over the whole measurement (transactions include the \
             last replies' drain), so a descheduled process weighs on a rate more than on a round \
             trip. A polling waiter holds its core for up to the poll time: where the machine has no \
             core to spare, its peer may wait for that core, and polling can stream slower than \
             sleeping at once.",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    ));
    Ok(rep)
}

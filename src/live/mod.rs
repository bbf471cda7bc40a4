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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::report::plot::{Plot, Series, svg};
use crate::systems::clan::params::PUBLISHED;
use crate::systems::{Artifact, fmt_num};
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

/// One measured figure, with the 2001 figure it stands beside (if any).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LiveRecord {
    pub experiment: String,
    pub case: BTreeMap<String, serde_json::Value>,
    pub metric: String,
    pub unit: String,
    pub measured: f64,
    /// The 2001 figure of the same experiment (CLAN's for the Queue, Gigabit Ethernet
    /// TCP's for TCP), for comparison, not agreement.
    pub published: Option<f64>,
    pub source: String,
}

/// Everything `reef live clan` measured.
#[derive(Clone, Debug, Serialize)]
pub struct LiveReport {
    pub system: String,
    pub records: Vec<LiveRecord>,
    #[serde(skip)]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub plots: Vec<Artifact>,
}

fn record(
    experiment: &str,
    case: &[(&str, serde_json::Value)],
    metric: &str,
    unit: &str,
    measured: f64,
) -> LiveRecord {
    LiveRecord {
        experiment: experiment.into(),
        case: case.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        metric: metric.into(),
        unit: unit.into(),
        measured,
        published: None,
        source: String::new(),
    }
}

impl LiveRecord {
    fn beside(mut self, value: f64, source: &str) -> LiveRecord {
        self.published = Some(value);
        self.source = source.into();
        self
    }

    fn case_text(&self) -> String {
        self.case
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl LiveReport {
    fn experiments(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for r in &self.records {
            if !seen.contains(&r.experiment) {
                seen.push(r.experiment.clone());
            }
        }
        seen
    }

    /// A table per experiment, measured beside the 2001 figure, then the notes.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "reef live clan (this machine, beside the 2001 figures)");
        for e in self.experiments() {
            let rows: Vec<&LiveRecord> = self.records.iter().filter(|r| r.experiment == e).collect();
            let cw = rows.iter().map(|r| r.case_text().len()).max().unwrap_or(4).max(4);
            let mw = rows
                .iter()
                .map(|r| r.metric.len() + r.unit.len() + 3)
                .max()
                .unwrap_or(6);
            let _ = writeln!(s, "\n== {e}");
            let _ = writeln!(
                s,
                "{:<cw$}  {:<mw$} {:>13} {:>13} {:>9}",
                "case", "metric", "measured", "2001", "ratio"
            );
            for r in rows {
                let _ = writeln!(
                    s,
                    "{:<cw$}  {:<mw$} {:>13} {:>13} {:>9}",
                    r.case_text(),
                    format!("{} [{}]", r.metric, r.unit),
                    fmt_num(r.measured),
                    r.published.map_or("-".into(), fmt_num),
                    r.published
                        .filter(|p| *p != 0.0)
                        .map_or(String::new(), |p| format!("{:.2}x", r.measured / p)),
                );
            }
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "\nnotes:");
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        s
    }

    /// `{"system": "clan-live", "records": […]}`.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// One CSV per experiment and the plots, into `dir`.
    pub fn write_out(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        for e in self.experiments() {
            let rows: Vec<&LiveRecord> = self.records.iter().filter(|r| r.experiment == e).collect();
            let mut keys: Vec<String> = Vec::new();
            for r in &rows {
                for k in r.case.keys() {
                    if !keys.contains(k) {
                        keys.push(k.clone());
                    }
                }
            }
            let mut s = String::new();
            for k in &keys {
                let _ = write!(s, "{k},");
            }
            let _ = writeln!(s, "metric,unit,measured,published_2001");
            for r in rows {
                for k in &keys {
                    let v = r.case.get(k).map_or(String::new(), |v| match v {
                        serde_json::Value::String(x) => x.clone(),
                        v => v.to_string(),
                    });
                    let _ = write!(s, "{v},");
                }
                let _ = writeln!(
                    s,
                    "{},{},{},{}",
                    r.metric,
                    r.unit,
                    r.measured,
                    r.published.map_or(String::new(), |p| p.to_string())
                );
            }
            let p = dir.join(format!("{e}.csv"));
            std::fs::write(&p, s)?;
            written.push(p);
        }
        for a in &self.plots {
            let p = dir.join(&a.file);
            std::fs::write(&p, &a.text)?;
            written.push(p);
        }
        Ok(written)
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

/// Transfer sizes of the streaming measurements [bytes]: 16 B to 64 KB.
pub fn stream_sizes() -> Vec<usize> {
    (4..=16).map(|k| 1usize << k).collect()
}

/// Requests outstanding in the transaction measurements.
pub const OUTSTANDING: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs every measurement.
pub fn run_clan(opts: &Options) -> Result<LiveReport, LiveError> {
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
    let mut rep = LiveReport {
        system: "clan-live".into(),
        records: Vec::new(),
        notes: Vec::new(),
        plots: Vec::new(),
    };
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
        let mut r = record(
            "round-trip",
            &[("system", json!(name)), ("size_bytes", json!(bench::MESSAGE))],
            "rtt_us",
            "us",
            median(&mut v),
        );
        if let Some((f, src)) = fig {
            r = r.beside(f, src);
        }
        rep.records.push(r);
    }

    say("streaming");
    let mut series = Vec::new();
    for (k, (name, t)) in sys.iter().enumerate() {
        let mut pts = Vec::new();
        for s in stream_sizes() {
            let bw = bench::stream(*t, s, st_dur)?;
            pts.push((s, bw));
            rep.records.push(record(
                "streaming",
                &[("system", json!(name)), ("size_bytes", json!(s))],
                "bandwidth_Mbps",
                "Mb/s",
                bw,
            ));
        }
        let (max_size, max) = pts
            .iter()
            .fold((0, 0.0), |a, &(s, b)| if b > a.1 { (s, b) } else { a });
        let half = pts.iter().find(|x| x.1 >= max / 2.0).map_or(0, |x| x.0);
        let case = [("system", json!(name))];
        let mut m = record("streaming-summary", &case, "max_Mbps", "Mb/s", max);
        if name.starts_with("clan") {
            m = m.beside(p.clan_bandwidth.value, p.clan_bandwidth.source);
        }
        rep.records.push(m);
        rep.records.push(record(
            "streaming-summary",
            &case,
            "max_size_bytes",
            "bytes",
            max_size as f64,
        ));
        rep.records.push(record(
            "streaming-summary",
            &case,
            "half_max_size_bytes",
            "bytes",
            half as f64,
        ));
        let buffer = match t {
            Transport::Clan { .. } => Some(queue::QUEUE_BYTES),
            _ => bench::socket_buffer(*t),
        };
        if let Some(b) = buffer {
            let mut r = record(
                "streaming-summary",
                &case,
                "buffer_bytes_per_endpoint",
                "bytes",
                b as f64,
            );
            r.source = match t {
                Transport::Clan { .. } => "the Queue's ring".into(),
                _ => "the kernel's send + receive buffer of a fresh socket (getsockopt)".into(),
            };
            rep.records.push(r);
        }
        series.push(Series {
            name: name.to_string(),
            points: pts.iter().map(|&(s, b)| ((s as f64).log2(), b)).collect(),
            markers_only: false,
            color: Some(k),
        });
    }
    rep.plots.push(Artifact {
        file: "streaming.svg".into(),
        text: svg(&Plot {
            title: "reef live clan: bandwidth against transfer size on this machine",
            x_label: "transfer size [log2 bytes: 4 = 16 B ... 16 = 64 KB]",
            y_label: "bandwidth [Mb/s]",
            series,
            log_y: true,
        })
        .map_err(LiveError::Failed)?,
    });

    say("transactions");
    let mut series = Vec::new();
    for (k, (name, t)) in sys.iter().enumerate() {
        let mut pts = Vec::new();
        for o in OUTSTANDING {
            let r = bench::transactions(*t, o, tx_dur)?;
            pts.push((o as f64, r));
            rep.records.push(record(
                "transactions",
                &[("system", json!(name)), ("outstanding", json!(o))],
                "requests_per_s",
                "req/s",
                r,
            ));
        }
        let max = pts.iter().map(|x| x.1).fold(0.0, f64::max);
        let case = [("system", json!(name))];
        let mut r = record("transactions-summary", &case, "max_requests_per_s", "req/s", max);
        let mut u = record(
            "transactions-summary",
            &case,
            "server_us_per_message",
            "us",
            1e6 / max,
        );
        if name.starts_with("clan") {
            r = r.beside(p.clan_transactions.value, p.clan_transactions.source);
            u = u.beside(p.clan_server_us.value, p.clan_server_us.source);
        } else if *name == "tcp-loopback" {
            r = r.beside(p.gige_transactions.value, p.gige_transactions.source);
        }
        rep.records.push(r);
        rep.records.push(u);
        series.push(Series {
            name: name.to_string(),
            points: pts,
            markers_only: false,
            color: Some(k),
        });
    }
    rep.plots.push(Artifact {
        file: "transactions.svg".into(),
        text: svg(&Plot {
            title: "reef live clan: requests/s against requests outstanding on this machine",
            x_label: "requests outstanding (one per connection)",
            y_label: "requests/s",
            series,
            log_y: true,
        })
        .map_err(LiveError::Failed)?,
    });
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
    rep.notes.push(
        "wall-clock measurements on a shared machine: they vary from run to run; round trips are \
         medians, rates are over the whole measurement (transactions include the last replies' \
         drain)."
            .into(),
    );
    Ok(rep)
}

//! The records and plots of CLAN's two curves, streaming bandwidth against transfer size and
//! requests/s against requests outstanding, with their summaries, in the names of the
//! issue's table. One writer for both uses: `reef reproduce clan` (simulated) and
//! `reef live clan` (measured on this machine); the figures come from the caller.

use serde_json::json;

use super::params::Figure;
use crate::report::plot::{Plot, Series, svg};
use crate::systems::{Artifact, Record, Report};

/// A system's streaming curve, summarised: the maximum [Mb/s], the size reaching it and the
/// smallest size of the sweep reaching half of it [bytes].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamSummary {
    pub max: f64,
    pub max_size: u64,
    pub half_size: u64,
}

impl StreamSummary {
    /// The summary of (size [bytes], bandwidth [Mb/s]) points in increasing size.
    pub fn of(pts: &[(u64, f64)]) -> StreamSummary {
        let (max_size, max) = pts
            .iter()
            .fold((0, 0.0), |a, &(s, b)| if b > a.1 { (s, b) } else { a });
        let half_size = pts.iter().find(|p| p.1 >= max / 2.0).map_or(0, |p| p.0);
        StreamSummary {
            max,
            max_size,
            half_size,
        }
    }
}

/// One system's streaming curve.
pub struct Streaming<'a> {
    pub system: &'a str,
    /// (size [bytes], bandwidth [Mb/s]), in increasing size.
    pub points: &'a [(u64, f64)],
    /// The published maximum beside this one, if any; else what to say of it.
    pub peak: Result<Figure, &'a str>,
    /// The buffer per endpoint [bytes] and where it comes from, if known.
    pub buffer: Option<(u64, &'a str)>,
}

/// Pushes a system's `streaming` and `streaming-summary` records; returns its summary.
pub fn push_streaming(report: &mut Report, s: &Streaming) -> StreamSummary {
    for &(size, bw) in s.points {
        report.push(Record::new(
            "streaming",
            &[("system", json!(s.system)), ("size_bytes", json!(size))],
            "bandwidth_Mbps",
            "Mb/s",
            bw,
        ));
    }
    let sum = StreamSummary::of(s.points);
    let case = [("system", json!(s.system))];
    let e = "streaming-summary";
    let m = Record::new(e, &case, "max_Mbps", "Mb/s", sum.max);
    report.push(match s.peak {
        Ok(f) => m.published(f.value, f.source),
        Err(why) => m.source(why),
    });
    report.push(Record::new(
        e,
        &case,
        "max_size_bytes",
        "bytes",
        sum.max_size as f64,
    ));
    report.push(
        Record::new(e, &case, "half_max_size_bytes", "bytes", sum.half_size as f64)
            .source("smallest size of the sweep reaching half the maximum"),
    );
    if let Some((bytes, src)) = s.buffer {
        report.push(Record::new(e, &case, "buffer_bytes_per_endpoint", "bytes", bytes as f64).source(src));
    }
    sum
}

/// Pushes a system's `transactions` and `transactions-summary` records from (requests
/// outstanding, requests/s) points, beside the published maximum rate and time per message
/// where there are; returns the maximum rate.
pub fn push_transactions(
    report: &mut Report,
    system: &str,
    points: &[(u32, f64)],
    rate: Option<Figure>,
    per_message: Option<Figure>,
) -> f64 {
    for &(o, r) in points {
        report.push(Record::new(
            "transactions",
            &[("system", json!(system)), ("outstanding", json!(o))],
            "requests_per_s",
            "req/s",
            r,
        ));
    }
    let max = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let case = [("system", json!(system))];
    let e = "transactions-summary";
    let mut r = Record::new(e, &case, "max_requests_per_s", "req/s", max);
    if let Some(f) = rate {
        r = r.published(f.value, f.source);
    }
    report.push(r);
    let mut r = Record::new(e, &case, "server_us_per_message", "us", 1e6 / max)
        .source("1 / max_requests_per_s: the saturated server's time per request");
    if let Some(f) = per_message {
        r = r.published(f.value, f.source);
    }
    report.push(r);
    max
}

/// A streaming curve as a plot series (drawn on a logarithmic size axis).
pub fn streaming_series(system: &str, colour: usize, points: &[(u64, f64)]) -> Series {
    Series {
        name: system.to_string(),
        points: points.iter().map(|&(s, b)| (s as f64, b)).collect(),
        markers_only: false,
        color: Some(colour),
    }
}

/// A transactions curve as a plot series.
pub fn transactions_series(system: &str, colour: usize, points: &[(u32, f64)]) -> Series {
    Series {
        name: system.to_string(),
        points: points.iter().map(|&(o, r)| (o as f64, r)).collect(),
        markers_only: false,
        color: Some(colour),
    }
}

/// `streaming.svg`: bandwidth against transfer size.
pub fn streaming_plot(title: &str, series: Vec<Series>, log_y: bool) -> Result<Artifact, String> {
    let text = svg(&Plot {
        title,
        x_label: "transfer size [bytes]",
        y_label: "bandwidth [Mb/s]",
        series,
        log_y,
        log_x: true,
    })
    .map_err(|e| format!("streaming plot: {e}"))?;
    Ok(Artifact {
        file: "streaming.svg".into(),
        text,
    })
}

/// `transactions.svg`: requests/s against requests outstanding.
pub fn transactions_plot(title: &str, series: Vec<Series>) -> Result<Artifact, String> {
    let text = svg(&Plot {
        title,
        x_label: "requests outstanding (one per connection)",
        y_label: "requests/s",
        series,
        log_y: true,
        log_x: false,
    })
    .map_err(|e| format!("transactions plot: {e}"))?;
    Ok(Artifact {
        file: "transactions.svg".into(),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_finds_the_maximum_and_the_half_way_size() {
        let pts = [(16, 10.0), (32, 40.0), (64, 55.0), (128, 100.0), (256, 90.0)];
        let s = StreamSummary::of(&pts);
        assert_eq!(
            s,
            StreamSummary {
                max: 100.0,
                max_size: 128,
                half_size: 64
            }
        );
        assert_eq!(StreamSummary::of(&[]).max_size, 0);
    }
}

//! Reports of a message benchmark (ping-pong, streaming): a table a line per message size,
//! CSV, JSON, and a NetPIPE-style plot (bandwidth and latency against message size, log
//! axes).

use super::plot::{Plot, Series};
use crate::workload::message::{Kind, MessageSpec, SizeResult};
use serde::Serialize;
use std::fmt::Write;

/// A message benchmark's results, as `reef run --json` writes them.
#[derive(Clone, Debug, Serialize)]
pub struct MessageRun {
    pub name: String,
    pub kind: String,
    pub master: u32,
    pub slave: u32,
    /// Switch-to-switch hops each way.
    pub hops: (usize, usize),
    pub sizes: Vec<SizeResult>,
    /// Sizes not run because Ctrl-C stopped the benchmark.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<u64>,
}

impl MessageRun {
    pub fn new(name: &str, m: &MessageSpec, hops: (usize, usize), sizes: Vec<SizeResult>) -> MessageRun {
        MessageRun {
            name: name.to_string(),
            kind: m.kind.name().to_string(),
            master: m.pair.0,
            slave: m.pair.1,
            hops,
            sizes,
            unfinished: Vec::new(),
        }
    }

    fn ping_pong(&self) -> bool {
        self.kind == Kind::PingPong.name()
    }
}

/// `1 B`, `4 KB`, `512 KB`, `2 MB` (powers of 1024, as message sizes are written).
pub fn size_text(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// The table: a line per size.
pub fn table(r: &MessageRun) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} from host {} to host {} ({} hops there, {} back)",
        r.name, r.kind, r.master, r.slave, r.hops.0, r.hops.1
    );
    if r.ping_pong() {
        let _ = writeln!(
            s,
            "{:>9} {:>9} {:>12} {:>12} {:>12} {:>12}",
            "size", "messages", "min [us]", "avg [us]", "max [us]", "MB/s"
        );
    } else {
        let _ = writeln!(s, "{:>9} {:>9} {:>12}", "size", "messages", "MB/s");
    }
    for x in &r.sizes {
        let mbps = x.bandwidth_bytes_per_s / 1e6;
        if r.ping_pong() {
            let _ = writeln!(
                s,
                "{:>9} {:>9} {:>12.3} {:>12.3} {:>12.3} {:>12.3}",
                size_text(x.size_bytes),
                x.messages,
                x.latency_min_ps as f64 / 1e6,
                x.latency_avg_ps / 1e6,
                x.latency_max_ps as f64 / 1e6,
                mbps
            );
        } else {
            let _ = writeln!(
                s,
                "{:>9} {:>9} {:>12.3}",
                size_text(x.size_bytes),
                x.messages,
                mbps
            );
        }
    }
    if !r.unfinished.is_empty() {
        let left: Vec<String> = r.unfinished.iter().map(|&b| size_text(b)).collect();
        let _ = writeln!(s, "INTERRUPTED: not run: {}", left.join(", "));
    }
    let _ = writeln!(
        s,
        "({})",
        if r.ping_pong() {
            "latency: half a round trip; MB/s: 10^6 bytes/s, the size over the mean latency"
        } else {
            "MB/s: 10^6 bytes/s, the bytes over the time from the first send to the last message in hand"
        }
    );
    s
}

/// One CSV row per size.
pub fn csv(r: &MessageRun) -> String {
    let mut s =
        String::from("size_bytes,messages,latency_min_us,latency_avg_us,latency_max_us,bandwidth_MBps\n");
    for x in &r.sizes {
        let (lo, avg, hi) = if r.ping_pong() {
            (
                format!("{}", x.latency_min_ps as f64 / 1e6),
                format!("{}", x.latency_avg_ps / 1e6),
                format!("{}", x.latency_max_ps as f64 / 1e6),
            )
        } else {
            Default::default()
        };
        let _ = writeln!(
            s,
            "{},{},{lo},{avg},{hi},{}",
            x.size_bytes,
            x.messages,
            x.bandwidth_bytes_per_s / 1e6
        );
    }
    s
}

/// The NetPIPE plot: bandwidth (streaming) or latency (ping-pong) against message size,
/// both axes logarithmic; `runs` are drawn together (several hop counts, say).
pub fn plot<'a>(title: &'a str, runs: &[(String, &MessageRun)], latency: bool) -> Plot<'a> {
    let mut series = Vec::new();
    for (i, (name, r)) in runs.iter().enumerate() {
        if latency {
            for (what, f) in [
                (
                    "min",
                    &(|x: &SizeResult| x.latency_min_ps as f64) as &dyn Fn(&SizeResult) -> f64,
                ),
                ("avg", &|x: &SizeResult| x.latency_avg_ps),
                ("max", &|x: &SizeResult| x.latency_max_ps as f64),
            ] {
                series.push(Series {
                    name: format!("{name} {what}"),
                    points: r
                        .sizes
                        .iter()
                        .map(|x| (x.size_bytes as f64, f(x) / 1e6))
                        .collect(),
                    markers_only: what != "avg",
                    color: Some(i),
                });
            }
        } else {
            series.push(Series {
                name: name.clone(),
                points: r
                    .sizes
                    .iter()
                    .map(|x| (x.size_bytes as f64, x.bandwidth_bytes_per_s / 1e6))
                    .collect(),
                markers_only: false,
                color: Some(i),
            });
        }
    }
    Plot {
        title,
        x_label: "message size [bytes]",
        y_label: if latency {
            "latency, half round trip [us]"
        } else {
            "bandwidth [MB/s]"
        },
        series,
        log_y: true,
        log_x: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_written() {
        assert_eq!(size_text(1), "1 B");
        assert_eq!(size_text(1000), "1000 B");
        assert_eq!(size_text(4096), "4 KB");
        assert_eq!(size_text(512 * 1024), "512 KB");
        assert_eq!(size_text(2 << 20), "2 MB");
    }
}

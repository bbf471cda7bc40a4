//! The reef TOML a BookSim2 config becomes (`reef convert`): each value in its section,
//! in reef's order, commented with the BookSim2 keys (and lines) it comes from.

use super::keys::From;
use super::map::*;
use std::fmt::Write as _;

/// Reef keys in the order their sections are written.
pub(super) const SECTIONS: [&str; 8] = [
    "sim",
    "topology",
    "channel",
    "host_channel",
    "host",
    "switch",
    "routing",
    "traffic",
];

#[derive(Default)]
pub(super) struct Toml {
    pub(super) rows: Vec<(&'static str, &'static str, String, String)>,
    pub(super) origins: Vec<(String, &'static str, Option<From>)>,
}

pub(super) fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn cycles(n: i64) -> String {
    quote(&format!("{n} {}", if n == 1 { "cycle" } else { "cycles" }))
}

pub(super) fn real(x: f64) -> String {
    format!("{x:?}")
}

/// `x` to nine decimals, without trailing zeros (a period from BookSim2's probabilities).
pub(super) fn decimal(x: f64) -> String {
    let s = format!("{x:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Toml {
    /// Sets reef's `section.key` to `value`, which comes from the BookSim2 keys `from`.
    pub(super) fn put(
        &mut self,
        c: &Cfg,
        section: &'static str,
        key: &'static str,
        value: String,
        from: &[&'static str],
    ) {
        let comment = from
            .iter()
            .map(|k| {
                let v = c.shown(k);
                match c.from(k) {
                    Some(From::Line(l)) => format!("{k} = {v} (line {l})"),
                    Some(From::CommandLine) => format!("{k} = {v} (command line)"),
                    None => format!("{k} = {v} (default)"),
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(first) = from.first() {
            let origin = from
                .iter()
                .find(|k| c.from(k).is_some())
                .copied()
                .unwrap_or(first);
            self.origins
                .push((format!("{section}.{key}"), origin, c.from(origin)));
        }
        self.rows.push((section, key, value, comment));
    }

    pub(super) fn render(&self, file: &str, notes: &[String]) -> String {
        let mut out = format!(
            "# reef's translation of the BookSim2 config {file} (reef convert; docs/booksim.md).\n\
             # A BookSim2 cycle is a reef cycle; each value names the BookSim2 keys it comes from.\n"
        );
        for n in notes {
            let _ = writeln!(out, "# note: {n}");
        }
        for sec in SECTIONS {
            let rows: Vec<_> = self.rows.iter().filter(|r| r.0 == sec).collect();
            if rows.is_empty() {
                continue;
            }
            let _ = write!(out, "\n[{sec}]\n");
            for (_, k, v, comment) in rows {
                let line = format!("{k} = {v}");
                if comment.is_empty() {
                    let _ = writeln!(out, "{line}");
                } else {
                    let _ = writeln!(out, "{line:<32} # {comment}");
                }
            }
        }
        out
    }
}

//! The records of `reef reproduce ieee1355`: a figure with its published value from the
//! table in `params` attached where there is one, a run's latency distribution, and the
//! outcome of an ATLAS knee search.

use super::super::atlas;
use super::super::knee::Knee;
use super::super::params::*;
use super::Outcome;
use crate::systems::Record;
use serde_json::Value;

/// Sets the source note of a record that has no published figure.
pub(super) fn explain(mut r: Record, how: &str) -> Record {
    if r.published.is_none() {
        r.source = how.to_string();
    }
    r
}

/// A record, with the published figure attached if the table has one for it.
pub fn record(experiment: &str, c: &[(&str, Value)], metric: &str, unit: &str, value: f64) -> Record {
    let r = Record::new(experiment, c, metric, unit, value);
    let same = |x: &Value, v: &str| match x {
        Value::String(s) => s == v,
        x => x.as_f64().is_some_and(|a| v.parse::<f64>().is_ok_and(|b| a == b)),
    };
    for p in PUBLISHED {
        if p.experiment == experiment
            && p.metric == metric
            && p.case.len() == r.case.len()
            && p.case
                .iter()
                .all(|(k, v)| r.case.get(*k).is_some_and(|x| same(x, v)))
        {
            return r.published(p.value, p.source);
        }
    }
    r
}

/// The latency distribution of a run: mean, P(> 3× mean), P(> 5× mean), peak.
pub(super) fn distribution_records(experiment: &str, c: &[(&str, Value)], o: &Outcome) -> Vec<Record> {
    let m = o.latency.mean();
    vec![
        record(experiment, c, "mean_latency_us", "µs", m / 1e6).ci95(o.latency_ci95.map(|x| x / 1e6)),
        record(
            experiment,
            c,
            "p_exceed_3x_mean",
            "fraction",
            o.latency.fraction_above((3.0 * m) as u64),
        ),
        record(
            experiment,
            c,
            "p_exceed_5x_mean",
            "fraction",
            o.latency.fraction_above((5.0 * m) as u64),
        ),
        explain(
            record(
                experiment,
                c,
                "peak_latency_us",
                "µs",
                o.latency.mode(PEAK_BIN).unwrap_or(0) as f64 / 1e6,
            ),
            "the centre of the most populated 0.5 µs bin",
        ),
    ]
}

/// The records of one knee search: the event size; the highest sustainable rate and the mean
/// receive rate per FEX there (its accepted payload over the 80 FEX) with its 95 %
/// half-width, if a rate was found sustainable; the lowest rate above it judged not
/// sustainable, if one was.
pub(super) fn knee_records(experiment: &str, c: &[(&str, Value)], k: &Knee) -> Vec<Record> {
    let how = "the highest event rate (realised: offered payload over the mean event size) whose \
               run kept accepted equal to offered within the 95 % batch-means interval with its \
               outstanding payload not growing";
    let mut out = vec![record(
        experiment,
        c,
        "event_KB",
        "KB",
        k.shape.event_bytes() / 1024.0,
    )];
    if let Some((lo, o)) = k.lo() {
        let v = o.verdict.unwrap_or_default();
        out.push(explain(
            record(experiment, c, "max_event_rate_kHz", "kHz", lo),
            how,
        ));
        out.push(
            record(
                experiment,
                c,
                "fex_receive_MBps",
                "MB/s",
                o.accepted / atlas::FEX as f64,
            )
            .ci95(Some(v.accepted.1 / atlas::FEX as f64)),
        );
    }
    if let Some(hi) = k.hi() {
        out.push(explain(
            record(experiment, c, "first_unsustainable_kHz", "kHz", hi),
            "the lowest event rate above the highest sustainable one judged not sustainable: \
             the knee lies between",
        ));
    }
    out
}

/// Bin width for the latency distribution's peak [ps].
pub const PEAK_BIN: u64 = 500_000;

//! The experiments of `reef reproduce atomic`.

use super::net;
use super::params as P;
use crate::control::ac::{Config, Mode};
use crate::systems::{Options, Report};

pub fn reproduce(opts: &Options) -> Result<Report, String> {
    let _ = opts;
    Ok(Report::new("atomic"))
}

/// Maps `lan` with one AC on its first HI; returns (messages per node, all-in; AC's only;
/// map time [µs]; correct).
pub fn map_once(lan: &crate::fabric::mosaic::Lan, mode: Mode) -> (f64, f64, f64, bool, String) {
    let lf = net::build(lan);
    let ac = lf.his[0];
    let (ag, _, _) = net::run_agent(&lf, Config::mapping(mode, vec![ac]));
    let maps = ag.maps();
    let Some(m) = maps.first() else {
        return (0.0, 0.0, 0.0, false, "no map".into());
    };
    let why = ag.compare(m).unwrap_or_default();
    let n = lf.nodes as f64;
    let _ = P::MSGS_PER_NODE;
    (
        (m.ac_msgs + m.node_msgs) as f64 / n,
        m.ac_msgs as f64 / n,
        (m.done - m.started) as f64 / 1e6,
        why.is_empty(),
        why,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke_maps() {
        for (lan, mode) in [
            (net::prototype(), Mode::Loops),
            (net::prototype(), Mode::Flood),
            (net::lan4(), Mode::Loops),
            (net::nonsym(), Mode::Flood),
        ] {
            let r = map_once(&lan, mode);
            eprintln!("{} {mode:?}: {r:?}", lan.name);
        }
    }
}

//! HIs streaming packets over Mosaic routes: one flow on the prototype (Table 1), the time
//! per packet against length and cable (T(L,D)), and flows competing for one channel; the
//! figures and their sources are in `params`.

use super::super::{net, params as P};
use super::{route, routes, stream};
use crate::control::graph::MGraph;
use crate::fabric::mosaic::{Cable, HostLink, Lan, Place};
use crate::report::plot::{Plot, Series, svg};
use crate::routing::mosaic::{EAST, NORTH, SOUTH, WEST};
use crate::systems::{Artifact, Record, Report};
use serde_json::json;

pub(super) fn single_flow(rep: &mut Report, quick: bool) {
    let lf = net::build(&net::prototype());
    let g = MGraph::from_lan(&lf, &|_| false);
    let f = route(&g, &lf, 0, 2);
    for (l, kpps, mbps) in P::TABLE1 {
        let count = if quick { 60 } else { 400 };
        let r = stream(&lf, std::slice::from_ref(&f), l, count, None)[0];
        let case = [("packet_bytes", json!(l))];
        rep.push(
            Record::new("single-flow", &case, "kpkt_per_s", "Kpkt/s", r / 1e3).published(kpps, P::TABLE1_SRC),
        );
        rep.push(
            Record::new(
                "single-flow",
                &case,
                "mbit_per_s",
                "Mb/s",
                r * l as f64 * 8.0 / 1e6,
            )
            .published(mbps, P::TABLE1_SRC),
        );
    }
}

pub(super) fn time_per_packet(rep: &mut Report, quick: bool) {
    let ls: &[u32] = if quick {
        &[4, 200, 2000]
    } else {
        &[4, 20, 50, 100, 150, 200, 500, 1000, 1500, 2000]
    };
    let ds: &[u64] = &[1, 5, 10, 15, 30];
    let mut series = Vec::new();
    for (k, &d) in ds.iter().enumerate() {
        let mut lan = net::prototype();
        lan.hosts[0].mft = d * 1000;
        let lf = net::build(&lan);
        let g = MGraph::from_lan(&lf, &|_| false);
        let f = route(&g, &lf, 0, 2);
        let mut pts = Vec::new();
        for &l in ls {
            let count = if quick { 40 } else { 150 };
            let r = stream(&lf, std::slice::from_ref(&f), l, count, None)[0];
            let t = 1e6 / r;
            pts.push((l as f64, t));
            let case = [("packet_bytes", json!(l)), ("cable_ft", json!(d))];
            rep.push(
                Record::new("time-per-packet", &case, "time_us", "µs", t)
                    .published(P::t_model_us(l as f64, d as f64), P::TMODEL_SRC),
            );
        }
        series.push(Series {
            name: format!("simulated, D = {d} ft"),
            points: pts,
            markers_only: true,
            color: Some(k),
        });
        series.push(Series {
            name: format!("T(L,{d})"),
            points: (0..=40)
                .map(|i| (i as f64 * 50.0, P::t_model_us(i as f64 * 50.0, d as f64)))
                .collect(),
            markers_only: false,
            color: Some(k),
        });
    }
    if let Ok(s) = svg(&Plot {
        title: "ATOMIC: time per packet against L",
        x_label: "L [bytes]",
        y_label: "time per packet [µs]",
        series,
        log_y: false,
        log_x: false,
    }) {
        rep.plots.push(Artifact {
            file: "time-per-packet.svg".into(),
            text: s,
        });
    }
}

/// Two 4×4 boards; the shared channel is one cable of `d_mft` from board 0's North output
/// into board 1's West input (its Y-to-X turn lets every source reach every sink in one
/// Mosaic route). HIs hang on 2 ft cables, or on cables as short as the shared one.
pub fn competing_lan(d_mft: u64) -> Lan {
    let pl = |board, x, y, port| Place { board, x, y, port };
    let mut hosts = Vec::new();
    for y in 0..4 {
        hosts.push(pl(0, 0, y, WEST));
        hosts.push(pl(0, 3, y, EAST));
    }
    for x in 0..4 {
        hosts.push(pl(1, x, 3, NORTH));
        hosts.push(pl(1, x, 0, SOUTH));
    }
    Lan {
        name: "competing".into(),
        boards: vec![4, 4],
        hosts: hosts
            .into_iter()
            .map(|at| HostLink {
                at,
                mft: P::SHORT_CABLE_MFT.min(d_mft),
            })
            .collect(),
        cables: vec![Cable {
            a: pl(0, 1, 3, NORTH),
            b: pl(1, 0, 1, WEST),
            both: false,
            mft: d_mft,
        }],
    }
}

pub(super) fn competing(rep: &mut Report, quick: bool) {
    let cases: &[(u32, u32, u64)] = &[
        (2, 2, 2),
        (2, 4, 2),
        (2, 6, 2),
        (2, 8, 2),
        (54, 2, 2),
        (1500, 2, 2),
        // Not in the spec's list: the same with every cable 1 ft (HIs' too), where the
        // handshake no longer slows any channel below its nominal 16 ns per byte (see the
        // note).
        (1500, 2, 1),
        (2, 6, 15),
    ];
    let mut one_leg = true;
    let mut mb_1ft = 0.0;
    for &(l, n, d) in cases {
        let lf = net::build(&competing_lan(d * 1000));
        let g = MGraph::from_lan(&lf, &|_| false);
        let pairs: Vec<(usize, usize)> = (0..n as usize).map(|i| (i, 8 + i)).collect();
        let flows = routes(&g, &lf, &pairs);
        one_leg &= flows.iter().all(|f| f.2.legs.len() == 1);
        let count = if quick { 40 } else { 200 };
        let r: f64 = stream(&lf, &flows, l, count, None).iter().sum();
        if d == 1 {
            mb_1ft = r * l as f64 * 8.0 / 1e6;
        }
        let case = [
            ("packet_bytes", json!(l)),
            ("flows", json!(n)),
            ("cable_ft", json!(d)),
        ];
        rep.push(
            Record::new("competing-flows", &case, "kpkt_per_s", "Kpkt/s", r / 1e3)
                .source("aggregate of all flows"),
        );
        rep.push(
            Record::new(
                "competing-flows",
                &case,
                "mbit_per_s",
                "Mb/s",
                r * l as f64 * 8.0 / 1e6,
            )
            .source("aggregate of all flows"),
        );
    }
    rep.notes.push(format!(
        "competing-flows: two 4×4 boards, sources on board 0's West/East edges, sinks on board 1's North/South edges, \
         the shared channel a one-way cable from a North output into a West input (the Y-to-X turn); every route is one \
         Mosaic worm: {one_leg}. The spec gives no published figures for this experiment. Each flow is limited by its \
         own HIs (T(L) per packet) unless the shared channel is slower: 2-byte packets hold it only ~2 byte times, so \
         the aggregate grows with the flows. 1,500-byte packets fill it: two HIs could send 2 × 381 Mb/s, but over \
         2 ft cables the per-byte handshake takes 13 ns + 3 ns/ft × 2 ft = 19 ns per byte, and a worm (2-byte \
         buffers) holds the shared channel at the pace of the slowest channel on its path (the HIs' 2 ft cables \
         even when the shared cable is shorter), so the shared channel carries 8 bits / 19 ns = 421 Mb/s, not the \
         nominal 500 Mb/s (16 ns per byte). It reaches 500 only when every cable on the path is 1 ft or less (the \
         1 ft case: {mb_1ft:.0} Mb/s). A figure of 500 Mb/s for 2 ft cables assumes the nominal channel rate; the \
         spec's own handshake rule gives 421."
    ));
}

//! The notes under the tables (assumptions, variants, how close the visible figures came)
//! and the plots `--out` writes.

use super::atlas;
use super::experiments::Outcome;
use super::params::*;
use crate::report::plot::{Plot, Series, svg};
use crate::systems::{Artifact, Record, Report};
use std::collections::BTreeMap;

/// Figures that go into the notes rather than records.
pub struct Extra {
    /// 256-node Clos, random, adaptive, with the data sheet's 70 tokens per link [MB/s].
    pub tokens70: f64,
    /// The same with two-phase universal routing [MB/s].
    pub universal: f64,
    pub adaptive256: f64,
    /// ATLAS knee search steps per placement after the sweep: (attempted and realised rate
    /// [kHz], sustainable).
    pub atlas_refine: Vec<Vec<(f64, f64, bool)>>,
    /// How the ATLAS sweep and the sensitivity table's runs are measured.
    pub atlas_window: super::experiments::AtlasWindow,
    pub atlas_short: super::experiments::AtlasWindow,
    pub quick: bool,
    /// Highest accepted throughput of the 256-node Clos load sweep [MB/s].
    pub sweep_peak_256: f64,
}

fn find<'a>(rep: &'a Report, exp: &str, pairs: &[(&str, &str)], metric: &str) -> Option<&'a Record> {
    rep.records.iter().find(|r| {
        r.experiment == exp
            && r.metric == metric
            && pairs.iter().all(|(k, v)| {
                r.case.get(*k).is_some_and(|x| match x {
                    serde_json::Value::String(s) => s == v,
                    x => x.to_string().as_str() == *v,
                })
            })
    })
}

fn pct(a: f64, b: f64) -> String {
    format!("{:+.1} %", 100.0 * (a - b) / b)
}

/// Writes the notes.
pub fn notes(rep: &mut Report, x: &Extra) {
    let mut n: Vec<String> = Vec::new();
    if x.quick {
        n.push("--quick: short windows and fewer points; figures are noisier than a full run.".into());
    }
    n.push(format!(
        "Model: DS links of 10-bit data characters and 4-bit EOP/FCT at 100 MBaud, FCTs granting \
         8 characters (at most 56 outstanding) on the reverse channel; STC104: 32 ports, wormhole, \
         {} µs header latency as the routing decision, 32-character input and output FIFOs, \
         crossbar {} ns per character (an assumption: fast enough never to limit a link), a \
         group's free link (output FIFO empty, else the emptiest), round-robin arbitration; traffic nodes with 650 ns dispatch \
         overlapping the previous send; cables 10 ns, on board 1 ns. Headers: 1 byte up to 256 \
         nodes, 2 above. Nothing is fitted to a published figure.",
        HEADER_LATENCY as f64 / 1e6,
        CROSSBAR_CHAR as f64 / 1e3
    ));
    if let Some(r) = find(
        rep,
        "saturation-vs-size",
        &[("topology", "clos"), ("nodes", "256"), ("traffic", "random")],
        "saturation_total_MBps",
    ) {
        n.push(format!(
            "256-node Clos saturation (visible figure): {:.0} MB/s against the published 1350 MB/s, {} \
             ({:.1} % of the 9.32 MB/s both-ways ceiling per node; published 57 %). The peak of its \
             load sweep is {:.0} MB/s.",
            r.simulated,
            pct(r.simulated, 1350.0),
            100.0 * r.simulated / 256.0 / link_ceiling_mbps(64, 1, true),
            x.sweep_peak_256
        ));
    }
    if let Some(r) = find(rep, "latency-distribution", &[("nodes", "64")], "peak_latency_us") {
        let mean = find(rep, "latency-distribution", &[("nodes", "64")], "mean_latency_us")
            .map_or(0.0, |m| m.simulated);
        n.push(format!(
            "64-node Clos at 50 % load (visible figure): the latency distribution peaks at {:.2} µs \
             (0.5 µs bins) against the published ≈ 12 µs, {}; its mean is {:.2} µs. The peak is \
             made by packets that cross three switches almost unhindered (9.9 µs at zero load); \
             packets to a node on their own terminal switch (15 of 63 destinations) make a second \
             spike near 7.7 µs, and contended packets a broad shoulder above 11 µs. The \
             testbed's jitter (NULL alignment, clock synchronisation, not modelled) would smear \
             the spikes.",
            r.simulated,
            pct(r.simulated, 12.0),
            mean
        ));
        n.push(
            "Group selection: an earlier run of this model took the lowest-numbered group link \
             whose crossbar connection was released (first free), even while that link's output \
             FIFO was still sending the previous packet; the STC104 takes a free link, so the \
             model now takes one whose output FIFO has emptied, else the emptiest. First free gave \
             about the same 256-node saturation (≈ 1348 MB/s) but a 64-node mean latency at 50 % \
             load near 18.7 µs (now ≈ 15 µs), with the highest bin on the 7.75 µs spike."
                .into(),
        );
    }
    if let Some(d) = find(
        rep,
        "routing",
        &[("routing", "deterministic")],
        "saturation_total_MBps",
    ) {
        let links =
            |l: &str, m: &str| find(rep, "routing", &[("links", l)], m).map_or(f64::NAN, |r| r.simulated);
        n.push(format!(
            "Deterministic routing on the 256-node Clos saturates at {:.0} MB/s against {:.0} MB/s \
             adaptive. Its fixed interval tables spread the routes over the centre stage, as the \
             paper says the testbed's did: the 256 header values are cut into 16 units of 16 (one \
             terminal switch each), and terminal switch s sends unit m up its up-link (m + s) mod \
             16, so the 15 other terminal switches reach each destination switch through all 8 \
             centre switches, 2 through each but one; each centre switch splits a destination \
             switch's 16 labels over its 2 down-links so that the routes reaching it are shared \
             as evenly as contiguous ranges allow. Routes per link, up: mean {:.0}, min {:.0} (the \
             up-link a switch's own unit would take stays idle), max {:.0}; down: mean {:.0}, min \
             {:.0}, max {:.0} (an even spread would be 240 on every link). Tables: 31 intervals \
             on a terminal switch, 32 on a centre switch (the STC104 holds 36); the dependency \
             check proves them deadlock-free. The earlier tables (all traffic to terminal switch \
             j up link j mod 16, through one centre switch) put 1,920 routes on each of the 2 \
             down-links into a switch and none on the other 14, and saturated at about 310 MB/s.",
            d.simulated,
            x.adaptive256,
            links("up", "routes_per_centre_link_mean"),
            links("up", "routes_per_centre_link_min"),
            links("up", "routes_per_centre_link_max"),
            links("down", "routes_per_centre_link_mean"),
            links("down", "routes_per_centre_link_min"),
            links("down", "routes_per_centre_link_max"),
        ));
    }
    n.push(format!(
        "Sensitivity (the data sheet's 70 tokens per link as one 70-character input FIFO and no \
         output FIFO, 56 outstanding at most): the 256-node Clos saturates at {:.0} MB/s against \
         {:.0} MB/s with 32 + 32 characters ({}).",
        x.tokens70,
        x.adaptive256,
        pct(x.tokens70, x.adaptive256)
    ));
    n.push(format!(
        "Universal routing (two-phase, random centre switch named by a first header that the \
         centre switch deletes; with 264 labels the headers are 2 bytes, 4 header characters a \
         packet) on the 256-node Clos saturates at {:.0} MB/s (adaptive: {:.0} MB/s).",
        x.universal, x.adaptive256
    ));
    n.push(
        "Torus routing: without virtual channels the interval tables take, in each ring, the \
         shorter direction that does not pass through the ring's position-0 switch (the wrap \
         links carry traffic from and to position 0 only); the dependency check proves it \
         deadlock-free. Many routes are therefore as long as in the grid: the torus gains little \
         from its wrap links."
            .into(),
    );
    let c = atlas::EventShape::CHOSEN;
    let mut at = format!(
        "ATLAS generator (assumed, the event files are not published): Poisson events; {} FEX \
         (regions of interest) per event, drawn among the 80; {} consecutive buffers per region; \
         fragments of {}..={} bytes payload, uniform ({:.0} KB per event). Offered: the \
         payload of the fragments created in the window ({:.1} ms after {:.1} ms of warm-up); \
         accepted: the payload delivered in it; both in {} batches. Sustainable: accepted \
         equals offered within the batch-means 95 % interval, and the payload outstanding \
         (created, not yet delivered) averaged over the window's second half exceeds its first \
         half by no more than the 95 % interval of the difference, widened for the batches' \
         correlation (the queues, and so the latency, stay bounded). A run's realised event rate \
         is its offered payload over the mean event size (a window holds a few hundred Poisson \
         events, so it differs from the attempted rate by 5-20 %); the knee lies between the \
         highest realised rate judged sustainable and the lowest above it judged not \
         (max_event_rate_kHz, first_unsustainable_kHz), from the step that agrees with most \
         verdicts. Near the knee the queues take milliseconds to settle: the verdict belongs to \
         the window, and a longer one may find a rate just above the bracket sustainable.",
        c.roi_per_event,
        c.buffers_per_roi,
        c.fragment_min,
        c.fragment_max,
        c.event_bytes() / 1024.0,
        x.atlas_window.window.measure as f64 / 1e9,
        x.atlas_window.window.warmup as f64 / 1e9,
        x.atlas_window.batches,
    );
    for (name, steps) in ["grouped", "distributed"].iter().zip(&x.atlas_refine) {
        if !steps.is_empty() {
            let s: Vec<String> = steps
                .iter()
                .map(|(r, q, ok)| {
                    format!(
                        "{r:.2} kHz attempted, {q:.2} realised, {}",
                        if *ok { "sustainable" } else { "not" }
                    )
                })
                .collect();
            at.push_str(&format!(" Refinement, {name}: {}.", s.join(", ")));
        }
    }
    n.push(at);
    n.push(format!(
        "atlas-sensitivity: the chosen event shape, then each unpublished parameter varied alone \
         over about half to double its chosen value (FEX per event 3 and 10, buffers per region 8 \
         and 32, fragments of 16..=112 and 64..=448 bytes), in shorter runs ({:.1} ms after {:.1} \
         ms, {} batches); each search starts at the chosen shape's knee from the sweep, scaled by \
         the event size, and steps by {} until bracketed, then halves the bracket.",
        x.atlas_short.window.measure as f64 / 1e9,
        x.atlas_short.window.warmup as f64 / 1e9,
        x.atlas_short.batches,
        super::knee::STEP,
    ));
    n.push(
        "packet-length: `link` is two traffic nodes on one DS link, one way, backlogged; `clos256` \
         the saturation of the 256-node Clos (random, adaptive) with packets of that payload."
            .into(),
    );
    n.push(sensitivity_note(rep));
    n.push(
        "Not modelled in the default: NULL characters delaying the start of a packet on an idle \
         link (0-80 ns a link), the links' independent clocks, and dispatch that does not overlap \
         the previous send (bounded in model-sensitivity); the second byte of a 2-byte header is \
         taken to arrive within the 1 µs header latency."
            .into(),
    );
    n.push(
        "Published figures other than the two above exist for every experiment but are not known \
         to reef; their column stays empty."
            .into(),
    );
    rep.notes.extend(n);
}

/// What the model-sensitivity runs found, against the default model on the same traffic.
fn sensitivity_note(rep: &Report) -> String {
    let get = |timing: &str, pairs: &[(&str, &str)], metric: &str| {
        let mut p = vec![("timing", timing)];
        p.extend_from_slice(pairs);
        find(rep, "model-sensitivity", &p, metric).map(|r| r.simulated)
    };
    let mut parts = Vec::new();
    for (timing, what) in [
        (
            "null-worst",
            "every DS link 80 ns slower (a whole NULL before every character)",
        ),
        ("clock-skew", "each link its own extra 0-100 ns"),
        ("serial-dispatch", "dispatch after the previous packet is out"),
    ] {
        let mut f = Vec::new();
        for traffic in ["random", "systematic-best"] {
            let c = [("nodes", "256"), ("traffic", traffic)];
            if let (Some(a), Some(b)) = (
                get("model", &c, "saturation_total_MBps"),
                get(timing, &c, "saturation_total_MBps"),
            ) {
                f.push(format!(
                    "256-node {traffic} saturation {b:.0} MB/s ({})",
                    pct(b, a)
                ));
            }
        }
        for (nodes, load) in [("256", "10.0"), ("256", "30.0"), ("256", "50.0"), ("64", "50.0")] {
            let c = [("nodes", nodes), ("load_percent", load)];
            if let (Some(a), Some(b), Some(pa), Some(pb)) = (
                get("model", &c, "mean_latency_us"),
                get(timing, &c, "mean_latency_us"),
                get("model", &c, "peak_latency_us"),
                get(timing, &c, "peak_latency_us"),
            ) {
                f.push(format!(
                    "{nodes} nodes at {load} %: mean {b:.2} µs ({:+.2}), peak {pb:.2} µs ({:+.2})",
                    b - a,
                    pb - pa
                ));
            }
        }
        parts.push(format!("{timing} ({what}): {}", f.join("; ")));
    }
    format!(
        "model-sensitivity, what the default model leaves out, each on the same traffic as the \
         default (timing=model): {}. The default keeps the sources' fixed timing: the spec gives \
         the NULL (8 bits, sent when a link has nothing else to send) but not the phase a \
         character finds it in, no clock tolerance, and the 650 ns dispatch as overlapping the \
         previous send; each variant is a bound, not a better model.",
        parts.join(". ")
    )
}

fn series(name: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        points,
        markers_only: false,
        color: None,
    }
}

fn num(r: &Record, k: &str) -> f64 {
    r.case.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

fn text(r: &Record, k: &str) -> String {
    r.case
        .get(k)
        .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
        .unwrap_or_default()
}

/// Drawings of the 256-node Clos and grid with each channel coloured by its use, under
/// uniform random traffic at half the both-ways link ceiling (reef's Poisson sources with
/// the traffic node's dispatch cost, as `examples/macrame-clos256.toml`; not the
/// experiments' traffic nodes): where the load goes, and where it piles up.
pub fn drawings(rep: &mut Report, quick: bool, seed: u64) -> Result<(), String> {
    let nets = ["clos", "grid"];
    let maps = crate::systems::par_map(
        &nets,
        |net| -> Result<String, String> {
            let (warm, measure) = if quick { (20, 60) } else { (100, 500) };
            let cfg = format!(
                "name = \"Macramé 256-node {}, uniform random at 50 % of the link ceiling\"\n\
                 [sim]\nclock = \"10 MHz\"\nwarmup = \"{warm} us\"\nmeasure = \"{measure} us\"\nseed = {seed}\n\
                 [topology]\nkind = \"macrame\"\nnetwork = \"{net}\"\nnodes = 256\n[routing]\nadaptive = true\n\
                 [traffic]\npattern = \"uniform\"\ninjection = \"poisson\"\nload = \"4.66 MB/s\"\npacket_size = 66\n\
                 [host]\nsend_overhead = \"650 ns\"\n",
                if *net == "clos" { "Clos" } else { "grid" }
            );
            let spec = crate::config::load_str("macrame.toml", &cfg, std::path::Path::new("."), &[])
                .map_err(|e| e.to_string())?;
            let r = crate::runner::run_spec(&spec, &mut |_| {}).map_err(|e| e.to_string())?;
            crate::report::map::channel_map(&spec.fabric, &r)
        },
        |_| {},
    );
    for (net, map) in nets.iter().zip(maps) {
        rep.plots.push(Artifact {
            file: format!("network-{net}-256.svg"),
            text: map.map_err(|e| format!("drawing the {net}: {e}"))?,
        });
    }
    Ok(())
}

/// Draws the plots.
pub fn plots(rep: &mut Report, dist: &[Outcome], dist_cases: &[(u32, f64)]) -> Result<(), String> {
    let recs = |exp: &str, metric: &str| -> Vec<Record> {
        rep.records
            .iter()
            .filter(|r| r.experiment == exp && r.metric == metric)
            .cloned()
            .collect()
    };
    let mut out = Vec::new();

    let mut by: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in recs("saturation-vs-size", "saturation_total_MBps") {
        by.entry(format!("{} {}", text(&r, "topology"), text(&r, "traffic")))
            .or_default()
            .push((num(&r, "nodes"), r.simulated));
    }
    out.push((
        "saturation-vs-size.svg",
        Plot {
            title: "Saturation throughput against network size",
            x_label: "nodes",
            y_label: "saturation throughput [MB/s, total]",
            series: by.into_iter().map(|(k, v)| series(&k, v)).collect(),
            log_y: false,
            log_x: false,
        },
    ));

    let lat = recs("latency-vs-load", "mean_latency_us");
    let acc = recs("latency-vs-load", "accepted_total_MBps");
    let mut curves: BTreeMap<(u32, String), Vec<(f64, f64)>> = BTreeMap::new();
    for (l, a) in lat.iter().zip(&acc) {
        curves
            .entry((num(l, "nodes") as u32, text(l, "routing")))
            .or_default()
            .push((a.simulated, l.simulated));
    }
    out.push((
        "latency-vs-load.svg",
        Plot {
            title: "Clos, random traffic: latency against throughput",
            x_label: "accepted throughput [MB/s, total]",
            y_label: "mean latency [µs]",
            series: curves
                .iter()
                .map(|((n, r), v)| series(&format!("{n} nodes, {r}"), v.clone()))
                .collect(),
            log_y: false,
            log_x: false,
        },
    ));
    out.push((
        "routing.svg",
        Plot {
            title: "256-node Clos: deterministic against adaptive routing",
            x_label: "accepted throughput [MB/s, total]",
            y_label: "mean latency [µs]",
            series: curves
                .iter()
                .filter(|((n, _), _)| *n == 256)
                .map(|((_, r), v)| series(r, v.clone()))
                .collect(),
            log_y: false,
            log_x: false,
        },
    ));

    let mut cdf = Vec::new();
    for (o, &(n, load)) in dist.iter().zip(dist_cases) {
        let pts = o
            .latency
            .cdf(400)
            .into_iter()
            .map(|(v, q)| (v as f64 / 1e6, 1.0 - q))
            .collect();
        cdf.push(series(&format!("{n} nodes, {load} % load"), pts));
    }
    out.push((
        "latency-distribution.svg",
        Plot {
            title: "Clos, random traffic: latency distribution",
            x_label: "latency [µs]",
            y_label: "P(latency > x)",
            series: cdf,
            log_y: true,
            log_x: false,
        },
    ));

    let mut at: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let offered = recs("atlas-vs-rate", "offered_total_MBps");
    for (o, a) in offered.iter().zip(recs("atlas-vs-rate", "accepted_total_MBps")) {
        at.entry(text(&a, "placement"))
            .or_default()
            .push((o.simulated, a.simulated));
    }
    let top = offered.iter().map(|r| r.simulated).fold(0.0, f64::max);
    let mut s: Vec<Series> = at
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            series(&k, v)
        })
        .collect();
    s.push(series("accepted = offered", vec![(0.0, 0.0), (top, top)]));
    out.push((
        "atlas-vs-rate.svg",
        Plot {
            title: "ATLAS SCT fan-in on the 512-node Clos",
            x_label: "offered throughput [MB/s, total]",
            y_label: "accepted throughput [MB/s, total]",
            series: s,
            log_y: false,
            log_x: false,
        },
    ));

    let mut pl: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in recs("packet-length", "throughput_MBps") {
        let w = text(&r, "where");
        let y = if w == "clos256" {
            r.simulated / 256.0
        } else {
            r.simulated
        };
        let name = if w == "clos256" {
            "256-node Clos, per node".to_string()
        } else {
            "one link".to_string()
        };
        pl.entry(name).or_default().push((num(&r, "packet_bytes"), y));
    }
    out.push((
        "packet-length.svg",
        Plot {
            title: "Throughput against packet length",
            x_label: "payload [bytes]",
            y_label: "throughput [MB/s]",
            series: pl.into_iter().map(|(k, v)| series(&k, v)).collect(),
            log_y: false,
            log_x: true,
        },
    ));

    for (file, p) in out {
        rep.plots.push(Artifact {
            file: file.into(),
            text: svg(&p)?,
        });
    }
    Ok(())
}

//! The page of a user's own study, built from the same pieces as the reproduction report
//! ([`super::html`]): `reef run CONFIG --html FILE` (the summary as the terminal prints it,
//! the packet and network latency distributions, the map of channel use) and
//! `reef sweep CONFIG --html FILE` (latency and throughput against load, the saturation
//! point, every point's figures, the map at the last load that ran in steady state).

use super::html::{self, escape, figure};
use super::plot::{Plot, Series, svg};
use super::{Sweep, SweepPoint, latency_plot, summary};
use crate::engine::result::RunResult;
use crate::fabric::Fabric;
use std::fmt::Write;

/// How a page was made: the lines of its last section. `timing` lines differ from run to
/// run; nothing else does for the same config and seed.
pub struct Made {
    /// (what, value), e.g. ("command", "reef run …").
    pub lines: Vec<(String, String)>,
    pub timing: Vec<(String, String)>,
}

impl Made {
    /// The command line, reef's version and commit, and the machine; the start and wall
    /// time as timing lines.
    pub fn now(started: String, wall_s: f64) -> Made {
        use super::reproduction::{commit, machine};
        Made {
            lines: vec![
                ("command".into(), command_line()),
                ("reef".into(), env!("CARGO_PKG_VERSION").into()),
                ("commit".into(), commit()),
                ("machine".into(), machine()),
            ],
            timing: vec![
                ("started".into(), started),
                ("wall time".into(), format!("{wall_s:.1} s")),
            ],
        }
    }
}

/// This process's command line, as typed (`reef` for the program).
pub fn command_line() -> String {
    std::iter::once("reef".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The network drawn with its channels coloured by use, or why it is not.
fn map_figure(fab: &Fabric, r: &RunResult, caption: &str) -> String {
    if !super::map::can_draw(fab) {
        return format!(
            "<p class=\"lede\">No map: a map is drawn for rings, 2-D meshes and tori, the Macramé \
             grid and folded Clos networks; this network is {}.</p>\n",
            escape(&fab.to_string())
        );
    }
    match super::map::channel_map(fab, r) {
        Ok(svg) => figure(&svg, caption, None),
        Err(e) => format!("<p class=\"failed\">No map: {}</p>\n", escape(&e)),
    }
}

/// A plot as a figure, or a line saying why there is none.
fn plot_figure(plot: &Plot, caption: &str) -> String {
    match svg(plot) {
        Ok(s) => figure(&s, caption, None),
        Err(e) => format!("<p class=\"failed\">No plot: {}</p>\n", escape(&e)),
    }
}

/// The terminal's summary of `r`, its wall-time line marked as timing.
fn summary_block(r: &RunResult) -> String {
    let mut s = String::from("<pre class=\"summary\">");
    for line in summary(r).lines() {
        if line.trim_start().starts_with("run: ") {
            let _ = writeln!(s, "<span class=\"timing\">{}</span>", escape(line));
        } else {
            let _ = writeln!(s, "{}", escape(line));
        }
    }
    s.push_str("</pre>\n");
    s
}

/// The header: `h1` and a line saying what the network is.
fn header(title: &str, r: &RunResult) -> String {
    format!(
        "<header>\n<h1>{}</h1>\n<p class=\"lede\">{} hosts, {} switches, {} channels, {} routing, \
         injection {}, seed {}; one cycle = {} ps.</p>\n</header>\n",
        escape(title),
        r.hosts,
        r.switches,
        r.channels,
        escape(&r.routing),
        escape(&r.injection),
        r.seed,
        if r.cycle_ps.fract() == 0.0 {
            format!("{}", r.cycle_ps)
        } else {
            format!("{:.3}", r.cycle_ps)
        }
    )
}

/// The page of one run: the summary, the latency distributions, the map.
pub fn run_page(fab: &Fabric, r: &RunResult, made: &Made) -> String {
    let mut b = header(&format!("reef run: {}", r.name), r);
    b.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    b.push_str(&summary_block(r));
    b.push_str(
        "<p class=\"lede\">Packet latency runs from a packet's creation to its tail's delivery, \
         source queueing included; network latency from its head's injection. ± is a 95 % \
         confidence half-width by batch means.</p>\n</section>\n",
    );
    b.push_str("<section id=\"latency\">\n<h2>Latency distributions</h2>\n");
    if r.has_latency() {
        b.push_str(&plot_figure(
            &latency_plot(r),
            "packet and network latency: the fraction of measured packets per bin",
        ));
    } else {
        b.push_str("<p class=\"lede\">None: no measured packet was delivered.</p>\n");
    }
    b.push_str("</section>\n<section id=\"map\">\n<h2>Channel use</h2>\n");
    b.push_str(&map_figure(
        fab,
        r,
        "each switch-to-switch channel coloured by the share of the window it was sending",
    ));
    b.push_str("</section>\n");
    b.push_str(&made_section(made));
    html::page(&format!("reef run: {}", r.name), &b)
}

/// The last point that ran in steady state (not saturated, no deadlock, packets measured).
pub fn last_stable(sw: &Sweep) -> Option<&SweepPoint> {
    sw.points
        .iter()
        .rev()
        .find(|p| !p.result.saturated && p.result.deadlock.is_none() && p.result.has_latency())
}

/// Latency against accepted throughput, steady points only (a saturated run's latency only
/// says that it grew), with the saturation throughput as an upright line.
pub fn latency_plot_of(sw: &Sweep) -> Plot<'_> {
    let steady: Vec<&SweepPoint> = sw
        .points
        .iter()
        .filter(|p| !p.result.saturated && p.result.has_latency())
        .collect();
    let series = |name: &str, f: &dyn Fn(&RunResult) -> f64| Series {
        name: name.into(),
        points: steady
            .iter()
            .map(|p| (p.result.accepted_flits_per_node_cycle, f(&p.result)))
            .collect(),
        markers_only: false,
        color: None,
    };
    let mut s = vec![
        series("packet latency, mean", &|r| r.packet_latency_cycles.mean),
        series("network latency, mean", &|r| r.network_latency_cycles.mean),
        series("packet latency, p99", &|r| r.packet_latency_cycles.p99),
    ];
    if let Some(t) = sw.saturation_throughput {
        let ys = s.iter().flat_map(|x| x.points.iter().map(|p| p.1));
        let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
        if lo.is_finite() {
            s.push(Series {
                name: format!("saturation throughput {t:.4}"),
                points: vec![(t, lo), (t, hi)],
                markers_only: false,
                color: Some(7),
            });
        }
    }
    Plot {
        title: &sw.name,
        x_label: "accepted throughput [flits/cycle/host]",
        y_label: "latency [cycles]",
        series: s,
        log_y: false,
        log_x: false,
    }
}

/// Accepted against offered load, every point, with the line where they are equal and
/// the saturation throughput.
pub fn throughput_plot(sw: &Sweep) -> Plot<'_> {
    let pts: Vec<(f64, f64)> = sw
        .points
        .iter()
        .filter_map(|p| {
            p.result
                .offered_flits_per_node_cycle
                .map(|o| (o, p.result.accepted_flits_per_node_cycle))
        })
        .collect();
    let top = pts.iter().map(|p| p.0).fold(0.0f64, f64::max);
    let mut s = vec![
        Series {
            name: "accepted".into(),
            points: pts,
            markers_only: false,
            color: None,
        },
        Series {
            name: "accepted = offered".into(),
            points: vec![(0.0, 0.0), (top, top)],
            markers_only: false,
            color: Some(7),
        },
    ];
    if let Some(t) = sw.saturation_throughput {
        s.push(Series {
            name: format!("saturation throughput {t:.4}"),
            points: vec![(0.0, t), (top, t)],
            markers_only: false,
            color: Some(1),
        });
    }
    Plot {
        title: &sw.name,
        x_label: "offered load [flits/cycle/host]",
        y_label: "accepted throughput [flits/cycle/host]",
        series: s,
        log_y: false,
        log_x: false,
    }
}

/// The sweep's points as a table.
fn points_table(sw: &Sweep) -> String {
    let mut s = String::from(
        "<table class=\"points\">\n<thead><tr><th class=\"num\">load</th><th class=\"num\">offered</th>\
         <th class=\"num\">accepted</th><th class=\"num\">packet mean</th><th class=\"num\">packet p99</th>\
         <th class=\"num\">network mean</th><th class=\"num\">network p99</th><th class=\"num\">mean hops</th>\
         <th>state</th></tr></thead>\n<tbody>\n",
    );
    for p in &sw.points {
        let r = &p.result;
        let (state, class) = if r.deadlock.is_some() {
            ("deadlock", "far")
        } else if r.saturated {
            ("saturated", "near")
        } else {
            ("steady", "")
        };
        let lat = if r.has_latency() {
            let (pl, nl) = (&r.packet_latency_cycles, &r.network_latency_cycles);
            format!(
                "<td class=\"num\">{:.2}</td><td class=\"num\">{:.1}</td><td class=\"num\">{:.2}</td>\
                 <td class=\"num\">{:.1}</td><td class=\"num\">{:.2}</td>",
                pl.mean, pl.p99, nl.mean, nl.p99, r.mean_hops
            )
        } else {
            "<td class=\"num\">–</td>".repeat(5)
        };
        let _ = writeln!(
            s,
            "<tr><td class=\"num\">{:.3}</td><td class=\"num\">{}</td><td class=\"num\">{:.4}</td>{lat}\
             <td class=\"{class}\">{state}</td></tr>",
            p.load,
            r.offered_flits_per_node_cycle
                .map_or("–".into(), |o| format!("{o:.4}")),
            r.accepted_flits_per_node_cycle,
        );
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// The page of a load sweep: the curves, the saturation point, the points, the map at the
/// last steady load.
pub fn sweep_page(fab: &Fabric, sw: &Sweep, made: &Made) -> String {
    let title = format!("reef sweep: {}", sw.name);
    let mut b = match sw.points.first() {
        Some(p) => header(&title, &p.result),
        None => format!("<header>\n<h1>{}</h1>\n</header>\n", escape(&title)),
    };
    b.push_str("<section id=\"saturation\">\n<h2>Saturation</h2>\n<p>");
    match sw.saturation_throughput {
        Some(t) => {
            let _ = write!(
                b,
                "Saturation throughput, with every source backlogged: <strong>{t:.4} \
                 flits/cycle/host</strong>."
            );
        }
        None => b.push_str(
            "Saturation throughput: none (the run with every source backlogged deadlocked or failed).",
        ),
    }
    match last_stable(sw) {
        Some(p) => {
            let _ = write!(
                b,
                " The last load in steady state: {:.3} (accepted {:.4}, mean packet latency {:.2} cycles).",
                p.load, p.result.accepted_flits_per_node_cycle, p.result.packet_latency_cycles.mean
            );
        }
        None => b.push_str(" No load ran in steady state."),
    }
    if let Some(p) = sw.points.iter().find(|p| p.result.saturated) {
        let _ = write!(
            b,
            " The first load that saturated: {:.3}{}.",
            p.load,
            p.result
                .saturation_reason
                .as_deref()
                .map_or(String::new(), |w| format!(" ({})", escape(w)))
        );
    }
    b.push_str("</p>\n");
    if let Some((load, d)) = sw
        .points
        .iter()
        .find_map(|p| p.result.deadlock.as_ref().map(|d| (p.load, d)))
    {
        let _ = writeln!(
            b,
            "<p class=\"failed\">Deadlock at load {load}, {} ns: {} VCs can never move; waiting \
             cycle: {}</p>",
            d.time as f64 / 1000.0,
            d.blocked_vcs,
            escape(&d.cycle.join(" → "))
        );
    }
    b.push_str("<div class=\"plots\">\n");
    b.push_str(&plot_figure(
        &latency_plot_of(sw),
        "latency against accepted throughput (steady loads); the upright line is the saturation throughput",
    ));
    b.push_str(&plot_figure(
        &throughput_plot(sw),
        "accepted throughput against offered load, every point",
    ));
    b.push_str("</div>\n</section>\n<section id=\"points\">\n<h2>Every point</h2>\n");
    b.push_str("<p class=\"lede\">Loads and throughputs in flits/cycle/host, latencies in cycles.</p>\n");
    b.push_str(&points_table(sw));
    b.push_str("</section>\n<section id=\"map\">\n<h2>Channel use at the last steady load</h2>\n");
    match last_stable(sw) {
        Some(p) => b.push_str(&map_figure(
            fab,
            &p.result,
            &format!(
                "load {:.3}: each switch-to-switch channel coloured by its use",
                p.load
            ),
        )),
        None => b.push_str("<p class=\"lede\">None: no load ran in steady state.</p>\n"),
    }
    b.push_str("</section>\n");
    b.push_str(&made_section(made));
    html::page(&title, &b)
}

fn made_section(made: &Made) -> String {
    let mut s = String::from("<section id=\"made\">\n<h2>How this page was made</h2>\n");
    s.push_str(&html::made_list(&made.lines, &made.timing));
    s.push_str("</section>\n");
    s
}

//! `reef reproduce all`: every modelled system run at once over the cores the job pool
//! allows, then one report: `index.html` (the scoreboard, a section per system, how the
//! report was made), and beside it each system's JSON, CSVs and SVG plots. The page is built
//! from what each system declares ([`crate::systems::about`]) and the [`Report`] it
//! returns: no system has report code of its own.

use super::html::{self, anchor, escape, figure, records_table};
use crate::systems::about::{ALL, System, Verdict, verdict};
use crate::systems::{Options, Record, Report, pool};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// One system's reproduction: its report (or why there is none) and its wall time [s].
pub struct SystemRun {
    pub system: &'static System,
    pub report: Result<Report, String>,
    pub wall_s: f64,
}

/// How a report was made: what the page's last section says.
#[derive(Clone, Debug)]
pub struct Made {
    pub version: String,
    /// The source tree's commit, or why it is not known.
    pub commit: String,
    pub seed: u64,
    pub quick: bool,
    pub jobs: usize,
    pub machine: String,
    /// The command line, as typed.
    pub command: String,
    /// When the run started (a timing line).
    pub started: String,
    /// Wall time of the whole run [s] (a timing line).
    pub wall_s: f64,
}

/// A figure's count per verdict, in [`Verdict`] order.
pub type Counts = [usize; 3];

/// How many of `rep`'s records are within `system`'s tolerance, missed, or have no
/// published value.
pub fn counts(system: &System, rep: &Report) -> Counts {
    let mut c = [0; 3];
    for r in &rep.records {
        c[verdict(r, system.tolerance.of(&r.experiment).0) as usize] += 1;
    }
    c
}

/// Runs every system in [`ALL`], the costliest first, each on a thread holding a job slot
/// (and spreading its own experiments over free slots); a bar on a terminal when
/// `progress`. The order of running changes no result.
pub fn run_all(opts: &Options, progress: bool) -> Vec<SystemRun> {
    let quiet = Options {
        progress: false,
        ..opts.clone()
    };
    let mut order: Vec<usize> = (0..ALL.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(ALL[i].cost));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let bar = Bar::new(ALL.len(), progress);
    let done: Mutex<Vec<Option<SystemRun>>> = Mutex::new((0..ALL.len()).map(|_| None).collect());
    std::thread::scope(|sc| {
        for _ in 0..ALL.len() {
            sc.spawn(|| {
                let _slot = pool::acquire();
                // The system is picked once a slot is held: the costliest first, whichever
                // thread wakes.
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { return };
                let s = &ALL[i];
                bar.start(s.name);
                let t0 = Instant::now();
                let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (s.reproduce)(&quiet)))
                    .unwrap_or_else(|e| Err(format!("the reproduction panicked: {}", panic_text(&e))));
                let wall_s = t0.elapsed().as_secs_f64();
                bar.end(s.name);
                if let Ok(mut d) = done.lock() {
                    d[i] = Some(SystemRun {
                        system: s,
                        report,
                        wall_s,
                    });
                }
            });
        }
    });
    bar.finish();
    done.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .zip(ALL)
        .map(|(r, s)| {
            r.unwrap_or(SystemRun {
                system: s,
                report: Err("did not run".into()),
                wall_s: 0.0,
            })
        })
        .collect()
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// The progress of `reproduce all`: systems done and those running, on a terminal only.
struct Bar {
    bar: Option<indicatif::ProgressBar>,
    running: Mutex<Vec<&'static str>>,
}

impl Bar {
    fn new(n: usize, show: bool) -> Bar {
        let show = show && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let bar = show.then(|| {
            let b = indicatif::ProgressBar::new(n as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "reproduce all [{elapsed_precise}] {bar:30} {pos}/{len} systems  {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(250));
            b
        });
        Bar {
            bar,
            running: Mutex::new(Vec::new()),
        }
    }

    fn show(&self, running: &[&str]) {
        if let Some(b) = &self.bar {
            b.set_message(format!("running: {}", running.join(", ")));
        }
    }

    fn start(&self, name: &'static str) {
        if let Ok(mut r) = self.running.lock() {
            r.push(name);
            self.show(&r);
        }
    }

    fn end(&self, name: &'static str) {
        if let Ok(mut r) = self.running.lock() {
            r.retain(|x| *x != name);
            self.show(&r);
        }
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The experiment a plot belongs under: the one its file is named after, else the one
/// its name starts with, else the one sharing most leading words with it.
fn plot_home(file: &str, experiments: &[String]) -> Option<usize> {
    let stem = file.trim_end_matches(".svg");
    if let Some(i) = experiments.iter().position(|e| e == stem) {
        return Some(i);
    }
    if let Some(i) = experiments
        .iter()
        .position(|e| stem.starts_with(&format!("{e}-")))
    {
        return Some(i);
    }
    let words = |s: &str| s.split('-').map(str::to_string).collect::<Vec<_>>();
    let w = words(stem);
    let shared = |e: &String| words(e).iter().zip(&w).take_while(|(a, b)| a == b).count();
    experiments
        .iter()
        .enumerate()
        .map(|(i, e)| (shared(e), std::cmp::Reverse(i)))
        .max()
        .filter(|m| m.0 > 0)
        .map(|m| m.1.0)
}

/// Whether an artifact is a drawing of a network (shown before the experiments).
fn is_network(file: &str) -> bool {
    file.starts_with("network-")
}

/// A strip of one bar per published figure: its |deviation| against the tolerance (the
/// line), coloured as the tables colour it, each with its figure in a tooltip.
fn deviation_strip(system: &System, rep: &Report) -> String {
    let figs: Vec<&Record> = rep.records.iter().filter(|r| r.published.is_some()).collect();
    if figs.is_empty() {
        return "<span class=\"lede\">no published figure</span>".into();
    }
    // Bars of 6 px 2 px apart, narrower where there are many: the strip stays within
    // 330 px (ATOMIC's full run has 83 published figures, which pushed the table off the
    // page).
    let n = figs.len() as f64;
    let pitch = (330.0 / n).min(8.0);
    let (bw, gap, h) = (pitch * 0.75, pitch * 0.25, 34.0);
    let w = n * (bw + gap) + gap;
    // Three tolerances fill the height; the line marks one.
    let top = 3.0;
    let y = |x: f64| h - 2.0 - (x.min(top) / top) * (h - 4.0);
    let mut s = format!(
        "<svg class=\"strip\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" \
         xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"deviation of each published figure\">\n"
    );
    let _ = writeln!(
        s,
        "<line x1=\"0\" x2=\"{w:.0}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#59636e\" stroke-dasharray=\"2 2\"/>",
        y(1.0),
        y(1.0)
    );
    for (k, r) in figs.iter().enumerate() {
        let tol = system.tolerance.of(&r.experiment).0;
        let rel = r.deviation().map_or(top, |d| d.abs() / tol);
        let rel = if r.simulated.is_finite() { rel } else { top };
        let colour = match html::closeness(r, tol) {
            Some("within") => "#1a7f37",
            Some("near") => "#bf8700",
            _ => "#cf222e",
        };
        let x = gap + k as f64 * (bw + gap);
        // (At least 3 px, so a figure on the mark still shows its colour.)
        let y0 = y(rel).min(h - 5.0);
        let _ = writeln!(
            s,
            "<rect class=\"bar\" x=\"{x:.1}\" y=\"{y0:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"{colour}\">\
             <title>{}</title></rect>",
            h - 2.0 - y0,
            escape(&format!(
                "{} {} {}: simulated {}, published {}, {}",
                r.experiment,
                html::case_text(r),
                r.metric,
                html::simulated_text(r),
                r.published.map_or(String::new(), crate::systems::fmt_num),
                html::deviation_text(r)
            ))
        );
    }
    s.push_str("</svg>");
    s
}

/// The tolerance as a reader reads it: `±5 %`.
fn pct(x: f64) -> String {
    let p = 100.0 * x;
    if p.fract() == 0.0 {
        format!("±{p:.0} %")
    } else {
        format!("±{p} %")
    }
}

fn scoreboard(runs: &[SystemRun]) -> String {
    let mut s = String::from(
        "<section id=\"scoreboard\">\n<h2>Scoreboard</h2>\n\
         <p>Each system's published figures, judged by the tolerance its spec states or this report \
         declares: reproduced within it, missed, and the figures the model reports with no \
         published value to compare with. Each bar is one published figure, its height the \
         deviation in tolerances (the dashed line is one tolerance; bars stop at three). A \
         simulated figure measured from random traffic shows its 95 % confidence interval \
         (<code>414 ± 22</code>, by batch means) and is printed to the digits that interval \
         allows; a figure without one is what the model computes exactly, to four significant \
         digits.</p>\n\
         <table class=\"scoreboard\">\n<thead><tr><th>system</th><th>tolerance</th>\
         <th class=\"num\">within</th><th class=\"num\">missed</th>\
         <th class=\"num\">no published value</th><th>deviation of each published figure</th></tr></thead>\n<tbody>\n",
    );
    let mut total = [0; 3];
    for run in runs {
        let sys = run.system;
        let mut tol = escape(&pct(sys.tolerance.within));
        for (e, w, _) in sys.tolerance.experiments {
            let _ = write!(
                tol,
                "<br><span class=\"lede\">{}: {}</span>",
                escape(e),
                escape(&pct(*w))
            );
        }
        let name = format!(
            "<a href=\"#{}\"><strong>{}</strong></a><br><span class=\"lede\">{}</span>",
            sys.name,
            escape(sys.name),
            escape(sys.title)
        );
        match &run.report {
            Ok(rep) => {
                let c = counts(sys, rep);
                for k in 0..3 {
                    total[k] += c[k];
                }
                let _ = writeln!(
                    s,
                    "<tr id=\"score-{}\" data-system=\"{}\"><td>{name}</td><td class=\"tol\">{tol}</td>\
                     <td class=\"n within\">{}</td><td class=\"n missed\">{}</td>\
                     <td class=\"n unpublished\">{}</td><td>{}</td></tr>",
                    sys.name,
                    sys.name,
                    c[Verdict::Within as usize],
                    c[Verdict::Missed as usize],
                    c[Verdict::Unpublished as usize],
                    deviation_strip(sys, rep)
                );
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "<tr id=\"score-{}\" data-system=\"{}\"><td>{name}</td><td class=\"tol\">{tol}</td>\
                     <td colspan=\"4\" class=\"failed\">failed: {}</td></tr>",
                    sys.name,
                    sys.name,
                    escape(e)
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "</tbody>\n<tfoot><tr><td>all systems</td><td></td><td class=\"n within\">{}</td>\
         <td class=\"n missed\">{}</td><td class=\"n unpublished\">{}</td><td></td></tr></tfoot>\n</table>\n\
         <p class=\"key\">Deviation, (simulated − published) / published: \
         <span class=\"within\">within the tolerance</span><span class=\"near\">missed, within twice it</span>\
         <span class=\"far\">missed by more</span></p>\n</section>",
        total[0], total[1], total[2]
    );
    s
}

fn system_section(run: &SystemRun) -> String {
    let sys = run.system;
    let mut s = format!(
        "<section class=\"system\" id=\"{}\">\n<h2>{} — {}</h2>\n<p class=\"sources\"><strong>Sources:</strong> {}</p>\n\
         <p>{}</p>\n",
        sys.name,
        escape(sys.name),
        escape(sys.title),
        escape(sys.sources),
        escape(sys.modelled)
    );
    let _ = write!(
        s,
        "<p class=\"tolerance\"><strong>Tolerance:</strong> {} ({})",
        pct(sys.tolerance.within),
        escape(sys.tolerance.source)
    );
    for (e, w, src) in sys.tolerance.experiments {
        let _ = write!(s, "; {}: {} ({})", escape(e), pct(*w), escape(src));
    }
    s.push_str(".</p>\n");
    s.push_str("<h3>Parameters</h3>\n<table class=\"params\">\n<thead><tr><th>parameter</th><th>value</th><th>source</th></tr></thead>\n<tbody>\n");
    for p in (sys.parameters)() {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"src\">{}</td></tr>",
            escape(p.name),
            escape(&p.value),
            escape(p.source)
        );
    }
    s.push_str("</tbody>\n</table>\n");
    let rep = match &run.report {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(
                s,
                "<p class=\"failed\">The reproduction failed: {}</p>\n</section>",
                escape(e)
            );
            return s;
        }
    };
    let experiments = rep.experiments();
    let mut homes: Vec<Vec<&crate::systems::Artifact>> = vec![Vec::new(); experiments.len()];
    let (mut networks, mut others) = (Vec::new(), Vec::new());
    for a in &rep.plots {
        if is_network(&a.file) {
            networks.push(a);
        } else {
            match plot_home(&a.file, &experiments) {
                Some(i) => homes[i].push(a),
                None => others.push(a),
            }
        }
    }
    let href = |file: &str| format!("{}/{}", sys.name, file);
    let plots = |list: &[&crate::systems::Artifact]| {
        let mut o = String::from("<div class=\"plots\">\n");
        for a in list {
            o.push_str(&figure(&a.text, &a.file, Some(&href(&a.file))));
        }
        o.push_str("</div>\n");
        o
    };
    if !networks.is_empty() {
        s.push_str("<h3>The networks</h3>\n");
        s.push_str(&plots(&networks).replacen("class=\"plots\"", "class=\"plots networks\"", 1));
    }
    let c = counts(sys, rep);
    let _ = writeln!(
        s,
        "<p>{} figures in {} experiments: {} within the tolerance, {} missed, {} with no published value.</p>",
        rep.records.len(),
        experiments.len(),
        c[0],
        c[1],
        c[2]
    );
    for (i, e) in experiments.iter().enumerate() {
        let rows: Vec<&Record> = rep.records.iter().filter(|r| &r.experiment == e).collect();
        let (tol, src) = sys.tolerance.of(e);
        let _ = writeln!(s, "<h3 id=\"{}-{}\">{}</h3>", sys.name, anchor(e), escape(e));
        if (tol, src) != (sys.tolerance.within, sys.tolerance.source) {
            let _ = writeln!(
                s,
                "<p class=\"tolerance\">Tolerance here: {} ({}).</p>",
                pct(tol),
                escape(src)
            );
        }
        s.push_str(&records_table(&rows, tol));
        if !homes[i].is_empty() {
            s.push_str(&plots(&homes[i]));
        }
    }
    if !others.is_empty() {
        s.push_str("<h3>More plots</h3>\n");
        s.push_str(&plots(&others));
    }
    if !rep.notes.is_empty() {
        s.push_str("<h3>Assumptions and notes</h3>\n<p>What the model assumes, and why each miss is a miss.</p>\n<ul class=\"notes\">\n");
        for n in &rep.notes {
            let _ = writeln!(s, "<li>{}</li>", escape(n));
        }
        s.push_str("</ul>\n");
    }
    let mut files = vec![format!("{}.json", sys.name)];
    files.extend(rep.csvs().iter().map(|a| href(&a.file)));
    let _ = writeln!(
        s,
        "<p class=\"files\">Beside this page: {}.</p>\n</section>",
        files
            .iter()
            .map(|f| format!("<a href=\"{}\">{}</a>", escape(f), escape(f)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

fn made_section(runs: &[SystemRun], made: &Made) -> String {
    let mut s = String::from("<section id=\"made\">\n<h2>How this report was made</h2>\n");
    let lines = [
        ("command", made.command.clone()),
        ("reef", made.version.clone()),
        ("commit", made.commit.clone()),
        ("seed", made.seed.to_string()),
        (
            "run lengths",
            if made.quick {
                "--quick: short runs, for tests; figures are noisier than a full run's"
            } else {
                "full"
            }
            .into(),
        ),
        ("machine", made.machine.clone()),
        ("jobs", format!("{} at once", made.jobs)),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let mut timing = vec![("started".to_string(), made.started.clone())];
    for r in runs {
        timing.push((r.system.name.to_string(), format!("{:.1} s", r.wall_s)));
    }
    timing.push(("in all".into(), format!("{:.1} s", made.wall_s)));
    s.push_str(&html::made_list(&lines, &timing));
    s.push_str("</section>\n");
    s
}

/// The whole page.
pub fn page(runs: &[SystemRun], made: &Made) -> String {
    let mut body = String::from(
        "<header>\n<h1>reef: five classic networks, reproduced</h1>\n<p class=\"lede\">reef models each \
         system from its hardware and reruns the measurements its papers published; every figure \
         below stands beside the published one where there is one, misses included. ",
    );
    let _ = write!(
        body,
        "Seed {}{}.</p>\n<nav class=\"toc\"><a href=\"#scoreboard\">scoreboard</a>",
        made.seed,
        if made.quick {
            "; <code>--quick</code> (short runs: figures are noisier than a full run's)"
        } else {
            ""
        }
    );
    for r in runs {
        let _ = write!(
            body,
            "<a href=\"#{}\">{}</a>",
            r.system.name,
            escape(r.system.name)
        );
    }
    body.push_str("<a href=\"#made\">how it was made</a></nav>\n</header>\n");
    body.push_str(&scoreboard(runs));
    body.push('\n');
    for r in runs {
        body.push_str(&system_section(r));
        body.push('\n');
    }
    body.push_str(&made_section(runs, made));
    html::page("reef: five classic networks, reproduced", &body)
}

/// Writes the report into `dir`: each system's `<name>.json`, its CSVs and plots in
/// `<name>/`, then `index.html`, each file whole or not at all, the page last. Returns the
/// page's path.
pub fn write(dir: &Path, runs: &[SystemRun], made: &Made) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    for run in runs {
        let Ok(rep) = &run.report else { continue };
        write_atomic(&dir.join(format!("{}.json", run.system.name)), &rep.json())?;
        let sub = dir.join(run.system.name);
        std::fs::create_dir_all(&sub)?;
        for a in rep.csvs().iter().chain(rep.plots.iter()) {
            write_atomic(&sub.join(&a.file), &a.text)?;
        }
    }
    let index = dir.join("index.html");
    write_atomic(&index, &page(runs, made))?;
    Ok(index)
}

/// Fails now, before any run, where `dir` could not take the report: it cannot be made, or
/// a file cannot be created in it.
pub fn check_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".reef-probe.{}", std::process::id()));
    std::fs::write(&probe, "")?;
    std::fs::remove_file(&probe)
}

/// The scoreboard as text, for the terminal.
pub fn scoreboard_text(runs: &[SystemRun]) -> String {
    let mut s = format!(
        "{:<10} {:>9} {:>7} {:>7} {:>13}  wall\n",
        "system", "tolerance", "within", "missed", "no published"
    );
    for r in runs {
        let tol = pct(r.system.tolerance.within);
        match &r.report {
            Ok(rep) => {
                let c = counts(r.system, rep);
                let _ = writeln!(
                    s,
                    "{:<10} {:>9} {:>7} {:>7} {:>13}  {:.1} s",
                    r.system.name, tol, c[0], c[1], c[2], r.wall_s
                );
            }
            Err(e) => {
                let _ = writeln!(s, "{:<10} {:>9}  FAILED: {e}", r.system.name, tol);
            }
        }
    }
    s
}

/// The commit of the source tree reef was built from, if it is a git checkout still (`+`
/// when it has uncommitted changes), else why it is not known.
pub fn commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(h) if !h.is_empty() => {
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{h} + uncommitted changes")
            } else {
                h
            }
        }
        _ => "unknown (not built from a git checkout)".into(),
    }
}

/// The processor, its cores and the operating system.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "processor unknown".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{cpu}, {cores} cores, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// Now, as `2026-11-27 17:46 UTC`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Writes `text` whole or not at all ([`crate::output::write`]: a temporary file, then
/// renamed), so an interrupted run leaves no half file.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    crate::output::write(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::{Artifact, Record};
    use serde_json::json;

    fn demo_runs(wall: f64) -> Vec<SystemRun> {
        ALL.iter()
            .enumerate()
            .map(|(i, s)| {
                let mut r = Report::new(s.name);
                r.push(
                    Record::new("speed", &[("size", json!(64))], "rate", "MB/s", 9.3).published(9.32, "spec"),
                );
                r.push(
                    Record::new("speed", &[("size", json!(128))], "rate", "MB/s", 12.0).published(9.0, "x"),
                );
                r.push(Record::new("other", &[], "count", "", 3.0));
                r.notes.push("a <note>".into());
                r.plots.push(Artifact {
                    file: "speed.svg".into(),
                    text: "<svg width=\"10\" height=\"10\"><circle cx=\"1\" cy=\"1\" r=\"1\"/></svg>".into(),
                });
                SystemRun {
                    system: s,
                    report: if i == 1 { Err("broke".into()) } else { Ok(r) },
                    wall_s: wall * (i + 1) as f64,
                }
            })
            .collect()
    }

    fn made(wall: f64, started: &str) -> Made {
        Made {
            version: "0.1.0".into(),
            commit: "abc".into(),
            seed: 1,
            quick: true,
            jobs: 2,
            machine: "m".into(),
            command: "reef reproduce all --quick".into(),
            started: started.into(),
            wall_s: wall,
        }
    }

    #[test]
    fn a_page_has_a_scoreboard_a_section_per_system_and_how_it_was_made() {
        let runs = demo_runs(1.0);
        let p = page(&runs, &made(3.0, "then"));
        for s in ALL {
            assert!(
                p.contains(&format!("<section class=\"system\" id=\"{}\">", s.name)),
                "{}",
                s.name
            );
            assert!(p.contains(&format!("<tr id=\"score-{}\"", s.name)));
        }
        assert!(p.find("id=\"scoreboard\"") < p.find("class=\"system\""));
        assert!(p.contains("failed: broke"));
        assert!(p.contains(
            "<td class=\"n within\">1</td><td class=\"n missed\">1</td><td class=\"n unpublished\">1</td>"
        ));
        assert!(p.contains("a &lt;note&gt;") && !p.contains("<note>"));
        assert!(p.contains("<figure class=\"plot\">\n<svg"));
        // Nothing that a browser would fetch (an SVG's xmlns is a name, not a fetch).
        for fetch in ["<script", "<link", "src=", "href=\"http", "url(", "@import"] {
            assert!(!p.contains(fetch), "{fetch}");
        }
        // The plot sits under its experiment, before the next one.
        let speed = p.find("id=\"atm-speed\"").unwrap();
        assert!(
            speed < p.find("<figure").unwrap()
                && p.find("<figure").unwrap() < p.find("id=\"atm-other\"").unwrap()
        );
    }

    /// Same figures, other timings: the same page but for the lines marked `timing`.
    #[test]
    fn only_the_timing_lines_differ() {
        let a = page(&demo_runs(1.0), &made(3.0, "2026-01-01 10:00 UTC"));
        let b = page(&demo_runs(2.5), &made(7.25, "2026-01-02 11:30 UTC"));
        assert_ne!(a, b);
        let strip = |p: &str| {
            p.lines()
                .filter(|l| !l.contains("class=\"timing\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&a), strip(&b));
    }

    #[test]
    fn plots_find_their_experiments() {
        let e: Vec<String> = ["streaming", "arbitration", "torus-scaling", "mapping"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(plot_home("streaming.svg", &e), Some(0));
        assert_eq!(plot_home("arbitration-shares.svg", &e), Some(1));
        assert_eq!(plot_home("torus-latency.svg", &e), Some(2));
        assert_eq!(plot_home("mapping-messages.svg", &e), Some(3));
        assert_eq!(plot_home("noise.svg", &e), None);
    }

    #[test]
    fn dates() {
        let d = now_utc();
        assert!(d.len() == 20 && d.ends_with(" UTC") && d.starts_with("20"), "{d}");
    }
}

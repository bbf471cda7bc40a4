//! `reef reproduce all`: its errors, and its `--quick` report opened in a real browser
//! (headless Chromium): every system's section is there, the scoreboard's counts are the
//! JSON's records judged by each system's tolerance, every published figure stands beside
//! its simulated value, every plot is an SVG with data in it, nothing is fetched from the
//! network, and the screenshot is not blank.
//!
//! Without Chromium the browser half is skipped, loudly; `.ci/run` installs Chromium where
//! it can and then sets `REEF_REQUIRE_BROWSER=1`, which makes a missing browser a failure.

mod common;
use common::reef;

use reef::systems::about::{ALL, verdict};
use reef::systems::{Record, fmt_value};
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reef-report-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let (code, _, err) = reef(&["reproduce", "nosuch", "--quick"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no reproduction for `nosuch`") && err.contains("or all"),
        "{err}"
    );
    // `all` writes each system's JSON into --out.
    let (code, _, err) = reef(&["reproduce", "all", "--quick", "--json", "x.json"]);
    assert_eq!(code, 1);
    assert!(err.contains("DIR/<system>.json"), "{err}");
    // An --out that is a file, or that cannot be made.
    let f = tmp("a-file");
    std::fs::write(&f, "x").unwrap();
    let (code, _, err) = reef(&["reproduce", "all", "--quick", "--out", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("is a file"), "{err}");
    let (code, _, err) = reef(&["reproduce", "all", "--quick", "--out", "/proc/reef-no"]);
    assert_eq!(code, 1);
    assert!(err.contains("--out /proc/reef-no: cannot be written"), "{err}");
    let (code, _, err) = reef(&["reproduce", "all", "--jobs", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("--jobs"), "{err}");
}

/// Text of an HTML fragment with its character references decoded (the few a serializer
/// writes).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The part of `html` from the element that opens with `open` to its closing `close`
/// (the first after it; the elements looked for here do not nest).
fn element<'a>(html: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let a = html.find(open)?;
    let b = html[a..].find(close)? + a + close.len();
    Some(&html[a..b])
}

/// Every element `<tag …>…</tag>` in `html` (not nested in each other), as (opening tag,
/// inner HTML).
fn elements<'a>(html: &'a str, tag: &str) -> Vec<(&'a str, &'a str)> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(a) = rest.find(&open) {
        let after = &rest[a..];
        // `<tr` must not match `<tref…`.
        if !after[open.len()..].starts_with([' ', '>']) {
            rest = &after[open.len()..];
            continue;
        }
        let Some(gt) = after.find('>') else { break };
        let Some(end) = after.find(&close) else { break };
        out.push((&after[..=gt], &after[gt + 1..end]));
        rest = &after[end + close.len()..];
    }
    out
}

/// The value of attribute `name` in an opening tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let a = tag.find(&key)? + key.len();
    let b = tag[a..].find('"')? + a;
    Some(&tag[a..b])
}

/// Whether a table cell shows `want` as the tables print it ([`fmt_value`]: yes or no, or
/// four significant digits), or `–` for no value. (The JSON's figures are rounded to six digits, the page's
/// to four from the full value, so one is compared as a number, not as text.) A figure with
/// a 95 % interval `ci` shows as `value ± half-width`, rounded to the interval's digits.
fn shows(cell: Option<String>, want: Option<f64>, unit: &str, ci: Option<f64>) -> bool {
    match (cell, want) {
        (Some(c), None) => c == "–",
        (Some(c), Some(w)) if ci.is_some() => {
            let (v, h) = c.split_once(" ± ").unwrap_or((&c, ""));
            let (v, h) = (v.parse::<f64>(), h.parse::<f64>());
            let ci = ci.unwrap();
            // Rounded to the interval's place: within half a unit of it, and the printed
            // half-width within that too.
            let unit = 10f64.powi(-reef::systems::ci_decimals(ci));
            v.is_ok_and(|v| (v - w).abs() <= 0.5 * unit * (1.0 + 1e-9))
                && h.is_ok_and(|h| (h - ci).abs() <= 0.5 * unit * (1.0 + 1e-9))
        }
        (Some(c), Some(w)) => {
            c == fmt_value(w, unit)
                || c.parse::<f64>()
                    .is_ok_and(|v| (v - w).abs() <= 5e-4 * w.abs().max(1e-12))
        }
        (None, _) => false,
    }
}

/// Data marks in a plot or map: circles and polylines of a colour (not black, white or
/// none), outside the legend's box (a black-bordered rectangle without fill), which holds
/// one sample mark per series whether it has data or not.
fn data_marks(svg: &str) -> usize {
    let num = |t: &str, k: &str| attr(t, k).and_then(|v| v.parse::<f64>().ok());
    let legends: Vec<(f64, f64, f64, f64)> = svg
        .split('<')
        .filter(|t| t.starts_with("rect "))
        .filter(|t| attr(t, "fill") == Some("none") && attr(t, "stroke") == Some("#000000"))
        .filter_map(|t| Some((num(t, "x")?, num(t, "y")?, num(t, "width")?, num(t, "height")?)))
        .collect();
    // A legend is a box over the plot, or the column beside its 800 px
    // (`reef::report::plot`, which draws the legend there).
    let in_legend = |x: f64, y: f64| {
        x >= 800.0
            || legends
                .iter()
                .any(|&(lx, ly, w, h)| x >= lx && x <= lx + w && y >= ly && y <= ly + h)
    };
    let coloured = |t: &str| {
        [attr(t, "stroke"), attr(t, "fill")].iter().flatten().any(|c| {
            !matches!(
                c.to_ascii_uppercase().as_str(),
                "NONE" | "#000000" | "#FFFFFF" | "BLACK" | "WHITE"
            )
        })
    };
    svg.split('<')
        .filter(|t| (t.starts_with("circle ") || t.starts_with("polyline ")) && coloured(t))
        .filter(|t| {
            let at = if t.starts_with("circle ") {
                num(t, "cx").zip(num(t, "cy"))
            } else {
                attr(t, "points").and_then(|p| {
                    let mut xy = p.split_whitespace().next()?.split(',');
                    Some((xy.next()?.parse().ok()?, xy.next()?.parse().ok()?))
                })
            };
            at.is_some_and(|(x, y)| !in_legend(x, y))
        })
        .count()
}

/// The check of a plot's marks, tried on plots drawn here: one with data passes, one whose
/// series are empty (only their legend entries are drawn) fails.
#[test]
fn a_plot_without_data_has_no_data_marks() {
    use reef::report::plot::{Plot, Series, svg};
    let plot = |points: Vec<(f64, f64)>| Plot {
        title: "t",
        x_label: "x [s]",
        y_label: "y [m]",
        series: vec![
            Series {
                name: "line".into(),
                points: points.clone(),
                markers_only: false,
                color: None,
            },
            Series {
                name: "dots".into(),
                points,
                markers_only: true,
                color: None,
            },
        ],
        log_y: false,
        log_x: false,
    };
    let full = svg(&plot(vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)])).unwrap();
    // (Of a line, its 3 points and 3 markers, those the legend's box covers are not
    // counted.)
    assert!((1..=7).contains(&data_marks(&full)), "{}", data_marks(&full));
    let empty = svg(&plot(Vec::new())).unwrap();
    assert!(
        empty.contains("<circle") && empty.contains("<polyline"),
        "the legend's marks"
    );
    assert_eq!(data_marks(&empty), 0);
}

/// A headless Chromium: `REEF_CHROMIUM`, else the first of Debian's names on the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REEF_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium-headless-shell",
        "chromium",
        "chromium-browser",
        "google-chrome",
    ]
    .iter()
    .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
    .find(|p| p.is_file())
}

/// Chromium with no network but a proxy that records every connection made to it:
/// `(stdout, requests made)`.
fn browse(chrome: &Path, args: &[String]) -> (String, Vec<String>) {
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    proxy.set_nonblocking(true).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let listener = {
        let (seen, stop) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match proxy.accept() {
                    Ok((mut c, _)) => {
                        let _ = c.set_read_timeout(Some(Duration::from_millis(500)));
                        let mut buf = [0u8; 512];
                        let n = c.read(&mut buf).unwrap_or(0);
                        let line = String::from_utf8_lossy(&buf[..n]);
                        seen.lock()
                            .unwrap()
                            .push(line.lines().next().unwrap_or("(a connection)").to_string());
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        })
    };
    let profile = tmp(&format!("chromium-profile-{port}"));
    let _cleanup = RemoveOnDrop(profile.clone());
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", profile.display()),
            // Every request, to loopback too, goes to the recording proxy.
            &format!("--proxy-server=http://127.0.0.1:{port}"),
            "--proxy-bypass-list=<-loopback>",
        ])
        .args(args)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    listener.join().unwrap();
    let seen = seen.lock().unwrap().clone();
    (String::from_utf8_lossy(&out.stdout).into_owned(), seen)
}

/// Removes a directory when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The records of `DIR/<system>.json`.
fn records(dir: &Path, system: &str) -> Vec<Record> {
    let text = std::fs::read_to_string(dir.join(format!("{system}.json"))).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["system"], system);
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let case: Vec<(&str, serde_json::Value)> = r["case"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            // (A NaN is written as null.)
            let sim = r["simulated"].as_f64().unwrap_or(f64::NAN);
            let rec = Record::new(
                r["experiment"].as_str().unwrap(),
                &case,
                r["metric"].as_str().unwrap(),
                r["unit"].as_str().unwrap(),
                sim,
            )
            .ci95(r["ci95"].as_f64());
            match r["published"].as_f64() {
                Some(p) => rec.published(p, r["source"].as_str().unwrap()),
                None => rec.source(r["source"].as_str().unwrap()),
            }
        })
        .collect()
}

/// The checks of a report's page (`dom`: as the browser has it) against the files beside
/// it.
fn check_page(dom: &str, dir: &Path) {
    for fetch in ["<script", "<link", " src=", "href=\"http", "url(", "@import"] {
        assert!(!dom.contains(fetch), "the page would fetch: {fetch}");
    }
    let board = element(dom, "<section id=\"scoreboard\">", "</section>").expect("a scoreboard");
    assert!(
        dom.find("id=\"scoreboard\"") < dom.find("<section class=\"system\""),
        "the scoreboard comes first"
    );
    for sys in ALL {
        let section = element(
            dom,
            &format!("<section class=\"system\" id=\"{}\">", sys.name),
            "</section>",
        )
        .unwrap_or_else(|| panic!("no section for {}", sys.name));
        assert!(unescape(section).contains(sys.title), "{}: no title", sys.name);
        let recs = records(dir, sys.name);
        assert!(!recs.is_empty(), "{}", sys.name);
        // The scoreboard's counts are the JSON's records, judged by the tolerance.
        let mut want = [0usize; 3];
        for r in &recs {
            want[verdict(r, sys.tolerance.of(&r.experiment).0) as usize] += 1;
        }
        let row = elements(board, "tr")
            .into_iter()
            .find(|(t, _)| attr(t, "id") == Some(&format!("score-{}", sys.name)))
            .unwrap_or_else(|| panic!("no scoreboard row for {}", sys.name))
            .1;
        let count = |class: &str| -> usize {
            elements(row, "td")
                .into_iter()
                .find(|(t, _)| attr(t, "class") == Some(&format!("n {class}")))
                .unwrap_or_else(|| panic!("{}: no {class} count", sys.name))
                .1
                .trim()
                .parse()
                .unwrap()
        };
        let got = [count("within"), count("missed"), count("unpublished")];
        assert_eq!(got, want, "{}: scoreboard against the JSON", sys.name);
        assert_eq!(got.iter().sum::<usize>(), recs.len());
        // One bar per published figure.
        let published = recs.iter().filter(|r| r.published.is_some()).count();
        assert_eq!(row.matches("class=\"bar\"").count(), published, "{}", sys.name);
        // Every record is a row of the section, every published one beside its simulated
        // value.
        let rows: Vec<Vec<(String, String)>> = elements(section, "tr")
            .into_iter()
            .map(|(_, inner)| {
                elements(inner, "td")
                    .into_iter()
                    .map(|(t, text)| (attr(t, "class").unwrap_or("").to_string(), unescape(text)))
                    .collect()
            })
            .collect();
        let cell = |row: &[(String, String)], class: &str| {
            row.iter()
                .find(|c| c.0.split(' ').any(|k| k == class))
                .map(|c| c.1.clone())
        };
        for r in &recs {
            let case = reef::report::html::case_text(r);
            let found = rows.iter().any(|row| {
                cell(row, "case").as_deref() == Some(case.as_str())
                    && row.iter().any(|c| c.1 == r.metric)
                    && shows(cell(row, "sim"), Some(r.simulated), &r.unit, r.ci95)
                    && shows(cell(row, "pub"), r.published, &r.unit, None)
            });
            assert!(
                found,
                "{}: no row with {r:?} beside its published value",
                sys.name
            );
        }
        // The drawings of the networks, channels coloured by use, come first.
        let drawings = match sys.name {
            "atomic" => &["network-mosaic-board.svg"][..],
            "atoll" => &["network-torus-256.svg"],
            "ieee1355" => &["network-clos-256.svg", "network-grid-256.svg"],
            _ => &[],
        };
        for d in drawings {
            let at = section
                .find(&format!("<figcaption>{d} "))
                .unwrap_or_else(|| panic!("{}: no drawing {d}", sys.name));
            assert!(
                at < section.find("<table class=\"records\"").unwrap(),
                "{}: {d} comes before the experiments",
                sys.name
            );
        }
        // Every plot is an SVG with data in it.
        let plots = elements(section, "figure");
        assert!(!plots.is_empty(), "{}: no plot at all", sys.name);
        for (_, inner) in plots {
            let svg = element(inner, "<svg", "</svg>")
                .unwrap_or_else(|| panic!("{}: a figure without an SVG", sys.name));
            let caption = element(inner, "<figcaption>", "</figcaption>").unwrap_or("");
            assert!(
                data_marks(svg) > 0,
                "{}: a plot with no data: {caption}",
                sys.name
            );
            assert!(
                svg.contains("<text"),
                "{}: a plot with no labels: {caption}",
                sys.name
            );
        }
    }
    assert!(dom.contains("id=\"made\""), "how the report was made");
}

/// Whether a screenshot shows something: a share of its pixels far from the background,
/// in more than a couple of colours.
fn not_blank(png_path: &Path) -> Result<(), String> {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png_path).unwrap()));
    let mut reader = dec.read_info().map_err(|e| e.to_string())?;
    let mut buf = vec![0; reader.output_buffer_size().ok_or("no size")?];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let channels = info.color_type.samples();
    let px: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let inked = px.iter().filter(|p| p.iter().take(3).any(|&c| c < 200)).count();
    let colours: std::collections::BTreeSet<&[u8]> = px.iter().copied().take(200_000).collect();
    let share = inked as f64 / px.len() as f64;
    if share > 0.01 && colours.len() > 16 {
        Ok(())
    } else {
        Err(format!(
            "{:.4} of the pixels inked, {} colours",
            share,
            colours.len()
        ))
    }
}

/// The `--quick` report, written, then opened in Chromium.
#[test]
fn the_quick_report_opens_in_a_browser_and_adds_up() {
    let dir = tmp("report");
    let t0 = std::time::Instant::now();
    let (code, out, err) = reef(&["reproduce", "all", "--quick", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    eprintln!("reproduce all --quick: {:.1} s", t0.elapsed().as_secs_f64());
    for s in ALL {
        assert!(out.contains(s.name), "{out}");
        assert!(dir.join(format!("{}.json", s.name)).is_file(), "{}", s.name);
        assert!(
            std::fs::read_dir(dir.join(s.name)).unwrap().count() > 0,
            "{}",
            s.name
        );
    }
    let index = dir.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    // The file as written passes the checks too (and they run without a browser).
    check_page(&html, &dir);
    // No temporary file is left beside it.
    assert!(
        std::fs::read_dir(&dir)
            .unwrap()
            .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
    );
    let Some(chrome) = chromium() else {
        let required = std::env::var_os("REEF_REQUIRE_BROWSER").is_some();
        eprintln!(
            "\n*** SKIPPED: the browser half of this test: no headless Chromium here (install \
             Debian's chromium-headless-shell or chromium, or set REEF_CHROMIUM) ***\n"
        );
        assert!(!required, "REEF_REQUIRE_BROWSER is set and no Chromium was found");
        return;
    };
    let url = format!("file://{}", index.canonicalize().unwrap().display());
    let (dom, requests) = browse(&chrome, &["--dump-dom".into(), url.clone()]);
    assert!(
        dom.len() > html.len() / 2,
        "the DOM is whole: {} bytes",
        dom.len()
    );
    check_page(&dom, &dir);
    let shot = dir.join("first-screen.png");
    let (_, more) = browse(
        &chrome,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,900".into(),
            url,
        ],
    );
    assert!(
        requests.is_empty() && more.is_empty(),
        "fetched from the network: {requests:?} {more:?}"
    );
    not_blank(&shot).unwrap_or_else(|e| panic!("the screenshot is blank: {e}"));
    let _ = std::fs::remove_file(&shot);
    same_report_again(
        &dir,
        &["reproduce", "all", "--quick", "--out", dir.to_str().unwrap()],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file under `dir`, by path, as text.
fn files(dir: &Path) -> std::collections::BTreeMap<PathBuf, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// Runs `args` again into `dir`: the same seed gives the same report, every file bit for
/// bit but for the page's timing lines.
fn same_report_again(dir: &Path, args: &[&str]) {
    let before = files(dir);
    let (code, _, err) = reef(args);
    assert_eq!(code, 0, "{err}");
    let after = files(dir);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "the same files"
    );
    for (path, text) in &before {
        let again = &after[path];
        if path.ends_with("index.html") {
            // (The timing lines are there, and all that is left out.)
            assert!(untimed(text).len() < text.len() && text.matches("class=\"timing\"").count() >= 4);
            assert_eq!(untimed(text), untimed(again), "{}", path.display());
        } else {
            assert!(
                text == again,
                "{} differs between two runs of one seed",
                path.display()
            );
        }
    }
}

/// The page of `reef run` or `reef sweep` with `--html`, and its checks: each named section,
/// every figure an SVG with data in it, nothing fetched.
fn check_study_page(page: &str, sections: &[&str], figures: usize) {
    for fetch in ["<script", "<link", " src=", "href=\"http", "url(", "@import"] {
        assert!(!page.contains(fetch), "the page would fetch: {fetch}");
    }
    for s in sections {
        assert!(page.contains(&format!("<section id=\"{s}\">")), "no section {s}");
    }
    let figs = elements(page, "figure");
    assert_eq!(figs.len(), figures, "figures");
    for (_, inner) in figs {
        let svg = element(inner, "<svg", "</svg>").expect("a figure without an SVG");
        let caption = element(inner, "<figcaption>", "</figcaption>").unwrap_or("");
        assert!(data_marks(svg) > 0, "a plot with no data: {caption}");
    }
}

/// A page without its timing lines: what two runs of one seed must agree on.
fn untimed(page: &str) -> String {
    page.lines()
        .filter(|l| !l.contains("class=\"timing\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_run_and_a_sweep_each_write_a_page() {
    let short = "sim.measure=\"3000 cycles\"";
    let page = tmp("run.html");
    let run = || {
        let (code, out, err) = reef(&[
            "run",
            "examples/mesh8x8.toml",
            "--set",
            short,
            "-q",
            "--html",
            page.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        (out, std::fs::read_to_string(&page).unwrap())
    };
    let (out, first) = run();
    // The summary, both latency distributions (one plot), the map.
    check_study_page(&first, &["summary", "latency", "map", "made"], 2);
    let accepted = out.lines().find(|l| l.contains("accepted")).unwrap();
    assert!(
        unescape(&first).contains(accepted),
        "the terminal's summary: {accepted}"
    );
    assert!(first.contains("packet latency (bins of") && first.contains("network latency (bins of"));
    assert_eq!(untimed(&run().1), untimed(&first), "same seed, same page");

    let (page, json) = (tmp("sweep.html"), tmp("sweep.json"));
    let (code, _, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.4:0.1",
        "--set",
        short,
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let sweep = std::fs::read_to_string(&page).unwrap();
    // The latency and throughput curves, the map at the last steady load.
    check_study_page(&sweep, &["saturation", "points", "map", "made"], 3);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let sat = v["saturation_throughput"].as_f64().unwrap();
    assert!(
        sweep.contains(&format!("<strong>{sat:.4} flits/cycle/host</strong>")),
        "the saturation point"
    );
    let points = v["points"].as_array().unwrap();
    let table = element(&sweep, "<table class=\"points\">", "</table>").unwrap();
    assert_eq!(elements(table, "tr").len(), points.len() + 1, "a row per point");
    let steady = points
        .iter()
        .rev()
        .find(|p| !p["result"]["saturated"].as_bool().unwrap())
        .unwrap();
    let load = steady["load"].as_f64().unwrap();
    assert!(sweep.contains(&format!("load {load:.3}: each switch-to-switch channel")));

    // In a browser, the same.
    if let Some(chrome) = chromium() {
        let url = format!("file://{}", page.canonicalize().unwrap().display());
        let (dom, requests) = browse(&chrome, &["--dump-dom".into(), url]);
        assert!(requests.is_empty(), "fetched: {requests:?}");
        check_study_page(&dom, &["saturation", "points", "map", "made"], 3);
    }

    // A message benchmark has no latency distribution or channel use to show; an --html
    // that is a directory is refused before the run.
    let (code, _, err) = reef(&["run", "examples/atoll-pingpong.toml", "-q", "--html", "x.html"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--html") && err.contains("message benchmark"),
        "{err}"
    );
    let dir = tmp("a-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let (code, _, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.1:0.1",
        "--html",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("is a directory"), "{err}");
}

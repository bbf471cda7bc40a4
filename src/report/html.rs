//! Self-contained HTML pages: one file with its CSS inline and its plots as inline SVG, no
//! script and nothing fetched, so it opens from a file on a machine with no network. The
//! pieces every page shares: escaping, the page shell and its style, tables of figures,
//! plots, and writing a file so that an interrupted run never leaves half of one.

use crate::systems::about::{Verdict, verdict};
use crate::systems::{Record, fmt_value};
use std::fmt::Write;

/// `s` with `&`, `<`, `>`, `"` and `'` escaped: safe as text and as an attribute value.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A fragment identifier made of `s`: lower-case letters, digits and `-`.
pub fn anchor(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') {
            o.push('-');
        }
    }
    o.trim_matches('-').to_string()
}

/// The style of every page: local fonts only, readable on a screen and on paper.
const CSS: &str = r#"
:root { --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0; --band: #f6f8fa;
  --within: #1a7f37; --within-bg: #dafbe1; --near: #7d4e00; --near-bg: #fff1c2;
  --far: #b42318; --far-bg: #ffe4e1; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 21px; margin: 36px 0 8px; padding-top: 10px; border-top: 3px solid var(--ink); }
h3 { font-size: 16px; margin: 26px 0 6px; }
p { margin: 6px 0 10px; max-width: 80ch; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.lede { color: var(--muted); }
nav.toc { margin: 10px 0 0; font-size: 14px; }
nav.toc a { margin-right: 14px; }
table { border-collapse: collapse; margin: 6px 0 14px; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--rule); vertical-align: top; text-align: left; }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.src { color: var(--muted); max-width: 56ch; }
td.case { white-space: nowrap; }
td.within { color: var(--within); background: var(--within-bg); font-weight: 600; }
td.near { color: var(--near); background: var(--near-bg); font-weight: 600; }
td.far { color: var(--far); background: var(--far-bg); font-weight: 600; }
table.scoreboard { font-size: 15px; }
table.scoreboard td.tol { white-space: nowrap; }
table.scoreboard td:first-child { min-width: 15em; }
p.key { max-width: none; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; white-space: nowrap; }
table.scoreboard td { vertical-align: middle; padding: 6px 10px; }
table.scoreboard td.n { text-align: right; font-size: 18px; font-weight: 700; font-variant-numeric: tabular-nums; }
table.scoreboard td.n.within { background: none; }
table.scoreboard td.n.missed { color: var(--far); }
table.scoreboard td.n.unpublished { color: var(--muted); }
table.scoreboard tfoot td { font-weight: 700; border-top: 2px solid var(--ink); }
.key span { display: inline-block; padding: 0 6px; margin-right: 6px; border-radius: 3px; font-weight: 600; }
.key .within { color: var(--within); background: var(--within-bg); }
.key .near { color: var(--near); background: var(--near-bg); }
.key .far { color: var(--far); background: var(--far-bg); }
figure { margin: 10px 0 18px; }
figure svg { max-width: 100%; height: auto; border: 1px solid var(--rule); }
figcaption { font-size: 13px; color: var(--muted); }
.plots { display: flex; flex-wrap: wrap; gap: 8px 18px; }
.plots figure { flex: 1 1 520px; max-width: 820px; }
.plots.networks figure { flex: 0 1 560px; }
ul.notes li { margin-bottom: 6px; max-width: 100ch; }
.failed { color: var(--far); font-weight: 700; }
.files { font-size: 13px; color: var(--muted); }
pre.summary { font: 13px/1.45 "DejaVu Sans Mono", Menlo, Consolas, monospace; background: var(--band);
  padding: 10px 14px; overflow-x: auto; border: 1px solid var(--rule); }
dl.made { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; font-size: 14px; }
dl.made dt { font-weight: 600; }
dl.made dd { margin: 0; }
@media print { h2 { break-before: page; } figure, tr { break-inside: avoid; } }
"#;

/// A whole page: `title` and `body` (HTML) in the shell with the style inline.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"reef {}\">\n<title>{}</title>\n<style>{CSS}</style>\n\
         </head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

/// An SVG document as an inline element: its XML prolog and comments dropped.
pub fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => svg[i..].trim_end(),
        None => "",
    }
}

/// A plot as a figure: the SVG inline, a caption naming the file beside the page (`href`).
pub fn figure(svg: &str, caption: &str, href: Option<&str>) -> String {
    let link = href.map_or(String::new(), |h| {
        format!(" (<a href=\"{}\">{}</a>)", escape(h), escape(h))
    });
    format!(
        "<figure class=\"plot\">\n{}\n<figcaption>{}{link}</figcaption>\n</figure>\n",
        inline_svg(svg),
        escape(caption)
    )
}

/// A record's case as `key=value …`, as the terminal tables print it.
pub fn case_text(r: &Record) -> String {
    r.case_text()
}

/// How far outside its tolerance a figure is: `within`, `near` (missed, within twice the
/// tolerance) or `far`; `None` without a published value.
pub fn closeness(r: &Record, within: f64) -> Option<&'static str> {
    match verdict(r, within) {
        Verdict::Unpublished => None,
        Verdict::Within => Some("within"),
        Verdict::Missed => match r.deviation() {
            Some(d) if d.abs() <= 2.0 * within => Some("near"),
            _ => Some("far"),
        },
    }
}

/// The deviation as printed: `+5.6 %`.
pub fn deviation_text(r: &Record) -> String {
    match (r.published, r.deviation()) {
        (None, _) => String::new(),
        // (A deviation that rounds to nothing is +0.0, not -0.0.)
        (Some(_), Some(d)) => format!("{:+.1} %", (1000.0 * d).round() / 10.0 + 0.0),
        (Some(_), None) => "n/a".into(),
    }
}

/// The simulated figure as a page prints it: with `± half-width` where it has a 95 %
/// confidence interval, to the digits that interval makes meaningful.
pub fn simulated_text(r: &Record) -> String {
    match r.simulated_text() {
        (v, ci) if ci.is_empty() => v,
        (v, ci) => format!("{v} ± {ci}"),
    }
}

/// A table of records, published beside simulated, the deviation coloured by `within`.
pub fn records_table(rows: &[&Record], within: f64) -> String {
    let mut s = String::from(
        "<table class=\"records\">\n<thead><tr><th>case</th><th>metric</th><th>unit</th>\
         <th class=\"num\">simulated</th><th class=\"num\">published</th>\
         <th class=\"num\">deviation</th><th>source</th></tr></thead>\n<tbody>\n",
    );
    for r in rows {
        let v = verdict(r, within);
        let dev_class = closeness(r, within).map_or(String::new(), |c| format!(" {c}"));
        let _ = writeln!(
            s,
            "<tr class=\"{}\"><td class=\"case\">{}</td><td>{}</td><td>{}</td>\
             <td class=\"num sim\">{}</td><td class=\"num pub\">{}</td>\
             <td class=\"num dev{dev_class}\">{}</td><td class=\"src\">{}</td></tr>",
            v.name(),
            escape(&case_text(r)),
            escape(&r.metric),
            escape(&r.unit),
            escape(&simulated_text(r)),
            r.published
                .map_or("–".to_string(), |p| escape(&fmt_value(p, &r.unit))),
            escape(&deviation_text(r)),
            escape(&r.source),
        );
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// How a page was made, as two lists: `lines` (what, value) that are the same for every
/// run of one seed, then the `timing` lines, each a line of the page of its own marked
/// `class="timing"`, so that two runs compare equal without them.
pub fn made_list(lines: &[(String, String)], timing: &[(String, String)]) -> String {
    let mut s = String::from("<dl class=\"made\">\n");
    for (k, v) in lines {
        let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
    }
    s.push_str(
        "</dl>\n<p>Wall time (these lines differ from run to run; nothing else does for the same \
         seed):</p>\n<dl class=\"made\">\n",
    );
    for (k, v) in timing {
        let _ = writeln!(
            s,
            "<dt class=\"timing\">{}</dt><dd class=\"timing\">{}</dd>",
            escape(k),
            escape(v)
        );
    }
    s.push_str("</dl>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_everything_that_could_end_text_or_an_attribute() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(anchor("Latency vs. load (µs)"), "latency-vs-load-s");
    }

    #[test]
    fn a_table_puts_published_beside_simulated_and_colours_the_deviation() {
        let a = Record::new("e", &[("size", json!(64))], "rate", "MB/s", 10.4).published(10.0, "<paper>");
        let b = Record::new("e", &[("size", json!(128))], "rate", "MB/s", 13.0).published(10.0, "p");
        let c = Record::new("e", &[("size", json!(256))], "rate", "MB/s", 8.0).published(10.0, "p");
        let d = Record::new("e", &[("mode", json!("a&b"))], "rate", "MB/s", 8.0);
        let t = records_table(&[&a, &b, &c, &d], 0.05);
        assert!(t.contains("<td class=\"num sim\">10.40</td><td class=\"num pub\">10</td><td class=\"num dev within\">+4.0 %</td>"), "{t}");
        assert!(t.contains("dev far\">+30.0 %"), "{t}");
        assert!(
            t.contains("dev near\">-20.0 %") || t.contains("dev far\">-20.0 %"),
            "{t}"
        );
        assert!(t.contains("&lt;paper&gt;") && t.contains("mode=a&amp;b"), "{t}");
        let e = Record::new("e", &[], "t", "us", 1.99999).published(2.0, "p");
        assert_eq!(deviation_text(&e), "+0.0 %");
        assert_eq!(t.matches("<tr class=\"missed\">").count(), 2);
        assert_eq!(t.matches("<tr class=\"unpublished\">").count(), 1);
    }

    #[test]
    fn an_svg_goes_inline_without_its_prolog() {
        let f = figure(
            "<?xml version=\"1.0\"?>\n<svg width=\"1\"></svg>\n",
            "a < b",
            Some("x.svg"),
        );
        assert!(
            f.starts_with("<figure class=\"plot\">\n<svg width=\"1\"></svg>\n"),
            "{f}"
        );
        assert!(f.contains("a &lt; b") && f.contains("href=\"x.svg\""));
    }
}

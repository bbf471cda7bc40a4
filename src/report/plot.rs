//! SVG line plots (plotters): one or more series of (x, y) points with axis labels and
//! optional logarithmic axes (labelled with the values, not their logarithms: 1-2-5 in each
//! decade, or powers of two where every point sits on one, as sizes do). Ticks print as
//! numbers do (`1000`, not `1000.0`); the legend stands beside the plot, never over the
//! data; each series has its own marker, and lines drawn later are thinner, so a series
//! that lies on another still shows.

use plotters::prelude::*;

/// One named series.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw markers only, no line.
    pub markers_only: bool,
    /// Colour index; `None`: the series' position. Series given the same index (measured
    /// points and the model drawn over them) share a colour.
    pub color: Option<usize>,
}

/// A plot to draw.
pub struct Plot<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: Vec<Series>,
    pub log_y: bool,
    pub log_x: bool,
}

/// Distinct series colours (Tableau 10 and two more); a plot with more series reuses them.
const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(0, 0, 128),
];

fn range(vals: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (0.1, 1.0) } else { (0.0, 1.0) };
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-9);
        ((lo - pad).min(0.0_f64.max(lo - pad)), hi + pad)
    }
}

/// A tick's label: the value to at most four significant digits, as a number prints
/// (`1000`, `0.25`, `1e-6`).
fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let r: f64 = format!("{v:.3e}").parse().unwrap_or(v);
    if (1e-4..1e7).contains(&r.abs()) {
        format!("{r}")
    } else {
        format!("{r:e}")
    }
}

/// The labelled values of a log axis over `[lo, hi]`: powers of two if every value in
/// `data` is one (sizes), else 1-2-5 in each decade (1 and 3 once the range spans more than
/// four decades, 1 alone past eight).
fn log_ticks(lo: f64, hi: f64, data: &[f64]) -> Vec<f64> {
    let pow2 = !data.is_empty() && data.iter().all(|&v| v > 0.0 && v.log2().fract() == 0.0);
    let mut out = Vec::new();
    if pow2 {
        let step = (((hi / lo).log2() / 10.0).ceil() as i32).max(1);
        let mut e = lo.log2().ceil() as i32;
        while 2f64.powi(e) <= hi {
            out.push(2f64.powi(e));
            e += step;
        }
        return out;
    }
    let decades = (hi / lo).log10();
    let mults: &[f64] = if decades > 8.0 {
        &[1.0]
    } else if decades > 4.0 {
        &[1.0, 3.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut e = lo.log10().floor() as i32;
    while 10f64.powi(e) <= hi {
        for m in mults {
            let v: f64 = format!("{m}e{e}").parse().unwrap_or(0.0);
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
        e += 1;
    }
    out
}

/// Width of the legend column beside the plot [px].
fn legend_width(p: &Plot) -> u32 {
    let longest = p.series.iter().map(|s| s.name.chars().count()).max().unwrap_or(0);
    if longest == 0 { 0 } else { 60 + 7 * longest as u32 }
}

/// Series `i`'s markers: their style and size [px]. Markers alone are outlines, the
/// earlier series' larger, so points that coincide show as nested shapes; markers on a line
/// are small dots.
fn marker_style(p: &Plot, i: usize, c: RGBColor) -> (ShapeStyle, i32) {
    if p.series[i].markers_only {
        let later = p.series[i + 1..].iter().filter(|s| s.markers_only).count();
        (c.stroke_width(2), 4 + later.min(3) as i32)
    } else {
        (c.filled(), 3)
    }
}

/// Draws a marker of shape `k` and size `r` at a pixel (the legend's).
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    at: (i32, i32),
    k: usize,
    (style, r): (ShapeStyle, i32),
) -> Result<(), String> {
    let (x, y) = at;
    let res = match k % 4 {
        0 => area.draw(&Circle::new(at, r, style)),
        1 => area.draw(&TriangleMarker::new(at, r + 1, style)),
        2 => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], style)),
        _ => area.draw(&Cross::new(at, r, style.stroke_width(2))),
    };
    res.map_err(|e| e.to_string())
}

/// Draws the plot as SVG text.
pub fn svg(p: &Plot) -> Result<String, String> {
    let mut buf = String::new();
    {
        let lw = legend_width(p);
        let root = SVGBackend::with_string(&mut buf, (800 + lw, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot_area, legend_area) = root.split_horizontally(800);
        let pts = || p.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = range(pts().map(|q| q.0), p.log_x);
        let (y0, y1) = range(pts().map(|q| q.1), p.log_y);
        let xs: Vec<f64> = pts().map(|q| q.0).filter(|v| v.is_finite()).collect();
        let ys: Vec<f64> = pts().map(|q| q.1).filter(|v| v.is_finite()).collect();
        let mut b = ChartBuilder::on(&plot_area);
        b.caption(p.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(p.x_label)
                    .y_desc(p.y_label)
                    .x_label_formatter(&|v| tick(*v))
                    .y_label_formatter(&|v| tick(*v))
                    .light_line_style(TRANSPARENT)
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, s) in p.series.iter().enumerate() {
                    let k = s.color.unwrap_or(i);
                    let c = COLORS[k % COLORS.len()];
                    let pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .copied()
                        .filter(|q| {
                            q.0.is_finite()
                                && q.1.is_finite()
                                && (!p.log_y || q.1 > 0.0)
                                && (!p.log_x || q.0 > 0.0)
                        })
                        .collect();
                    if !s.markers_only {
                        // Earlier series wider: one drawn over another leaves its edges.
                        let later = p.series[i + 1..].iter().filter(|s| !s.markers_only).count();
                        let w = 2 + later.min(3) as u32;
                        chart
                            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(w)))
                            .map_err(|e| e.to_string())?;
                    }
                    let (st, r) = marker_style(p, i, c);
                    match i % 4 {
                        0 => chart
                            .draw_series(pts.iter().map(|&q| Circle::new(q, r, st)))
                            .map(|_| ()),
                        1 => chart
                            .draw_series(pts.iter().map(|&q| TriangleMarker::new(q, r + 1, st)))
                            .map(|_| ()),
                        2 => chart
                            .draw_series(
                                pts.iter()
                                    .map(|&q| EmptyElement::at(q) + Rectangle::new([(-r, -r), (r, r)], st)),
                            )
                            .map(|_| ()),
                        _ => chart
                            .draw_series(pts.iter().map(|&q| Cross::new(q, r, st.stroke_width(2))))
                            .map(|_| ()),
                    }
                    .map_err(|e| e.to_string())?;
                }
            }};
        }
        match (p.log_x, p.log_y) {
            (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| e.to_string())?),
            (false, true) => draw!(
                b.build_cartesian_2d(
                    x0..x1,
                    (y0..y1).log_scale().with_key_points(log_ticks(y0, y1, &ys))
                )
                .map_err(|e| e.to_string())?
            ),
            (true, false) => draw!(
                b.build_cartesian_2d(
                    (x0..x1).log_scale().with_key_points(log_ticks(x0, x1, &xs)),
                    y0..y1
                )
                .map_err(|e| e.to_string())?
            ),
            (true, true) => draw!(
                b.build_cartesian_2d(
                    (x0..x1).log_scale().with_key_points(log_ticks(x0, x1, &xs)),
                    (y0..y1).log_scale().with_key_points(log_ticks(y0, y1, &ys))
                )
                .map_err(|e| e.to_string())?
            ),
        }
        // The legend, beside the plot.
        let font = ("sans-serif", 14).into_font().color(&BLACK);
        for (i, s) in p.series.iter().enumerate() {
            let c = COLORS[s.color.unwrap_or(i) % COLORS.len()];
            let y = 60 + 24 * i as i32;
            if !s.markers_only {
                legend_area
                    .draw(&PathElement::new(vec![(8, y), (40, y)], c.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
            }
            let (st, r) = marker_style(p, i, c);
            marker(&legend_area, (24, y), i, (st, r.min(6)))?;
            legend_area
                .draw(&Text::new(s.name.clone(), (50, y - 8), font.clone()))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_svg() {
        let p = Plot {
            title: "t",
            x_label: "x",
            y_label: "y",
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.0, 1.0), (1.0, 10.0)],
                markers_only: false,
                color: None,
            }],
            log_y: true,
            log_x: false,
        };
        let s = svg(&p).unwrap();
        assert!(s.starts_with("<svg") && s.contains("</svg>"));
    }

    /// Issue 31: ticks print as numbers do; log axes are labelled in real units, often
    /// enough to read; sizes on powers of two.
    #[test]
    fn r31_ticks_read_as_values() {
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(2.0000000001), "2");
        assert_eq!(tick(1e-6), "1e-6");
        assert_eq!(
            log_ticks(0.004, 0.3, &[0.005, 0.25]),
            vec![0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
        );
        assert_eq!(
            log_ticks(0.7, 90.0, &[1.0, 4.0, 64.0]),
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(log_ticks(1e-9, 10.0, &[1e-9, 10.0]).len(), 11);
    }

    /// Issue 31: every series shows (its own marker; an earlier line wider than a later one
    /// on the same points) and the legend stands beside the plot, right of its 800 px.
    #[test]
    fn r31_every_series_shows_and_the_legend_is_beside_the_plot() {
        let same = vec![(1.0, 1.0), (2.0, 2.0)];
        let p = Plot {
            title: "t",
            x_label: "x",
            y_label: "y",
            series: (0..4)
                .map(|i| Series {
                    name: format!("series {i}"),
                    points: same.clone(),
                    markers_only: false,
                    color: None,
                })
                .collect(),
            log_y: false,
            log_x: false,
        };
        let s = svg(&p).unwrap();
        // Four stroke widths from widest to narrowest (5, 4, 3, 2) and four marker shapes.
        for w in [
            "stroke-width=\"5\"",
            "stroke-width=\"4\"",
            "stroke-width=\"3\"",
            "stroke-width=\"2\"",
        ] {
            assert!(s.contains(w), "{w}");
        }
        assert!(
            s.contains("<circle") && s.contains("<polygon") && s.contains("<rect"),
            "markers"
        );
        for i in 0..4 {
            let at = s
                .find(&format!(">\nseries {i}\n"))
                .unwrap_or_else(|| panic!("series {i}"));
            // The label's <text x="…">: beyond the plot's 800 px.
            let tag = &s[s[..at].rfind("<text").unwrap()..at];
            let x: f64 = tag
                .split("x=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(x > 800.0, "{tag}");
        }
    }
}

//! SVG line plots (plotters): one or more series of (x, y) points with axis labels and
//! optional logarithmic axes (labelled with the values, not their logarithms).

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

/// Draws the plot as SVG text.
pub fn svg(p: &Plot) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (800, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let pts = || p.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = range(pts().map(|q| q.0), p.log_x);
        let (y0, y1) = range(pts().map(|q| q.1), p.log_y);
        let mut b = ChartBuilder::on(&root);
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
                    .light_line_style(TRANSPARENT)
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, s) in p.series.iter().enumerate() {
                    let c = COLORS[s.color.unwrap_or(i) % COLORS.len()];
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
                    if s.markers_only {
                        chart
                            .draw_series(pts.iter().map(|&q| Circle::new(q, 4, c.filled())))
                            .map_err(|e| e.to_string())?
                            .label(s.name.clone())
                            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
                    } else {
                        chart
                            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                            .map_err(|e| e.to_string())?
                            .label(s.name.clone())
                            .legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                            });
                        chart
                            .draw_series(pts.iter().map(|&q| Circle::new(q, 2, c.filled())))
                            .map_err(|e| e.to_string())?;
                    }
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| e.to_string())?;
            }};
        }
        match (p.log_x, p.log_y) {
            (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| e.to_string())?),
            (false, true) => draw!(
                b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                    .map_err(|e| e.to_string())?
            ),
            (true, false) => draw!(
                b.build_cartesian_2d((x0..x1).log_scale(), y0..y1)
                    .map_err(|e| e.to_string())?
            ),
            (true, true) => draw!(
                b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
                    .map_err(|e| e.to_string())?
            ),
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
}

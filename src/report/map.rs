//! A picture of a run on a ring, a 2-D mesh or torus, or the Macramé grid: each switch a
//! square at its coordinates, each switch-to-switch channel a line beside the one the other
//! way, coloured by the fraction of the measurement window it was sending (viridis, from 0
//! to the busiest channel); on a folded Clos, a matrix of terminal by centre switches per
//! direction. The numbers are the run's `channel_utilization`.

use crate::engine::result::RunResult;
use crate::fabric::{Fabric, NodeId, Shape};
use plotters::prelude::*;
use std::collections::BTreeMap;

/// How the switches sit on the plane: `kx` by `ky` cells, switch `s` at
/// (s mod kx, s div kx), or its transpose (the Macramé grid numbers switch (x, y) as
/// x·k + y, `grid::switch_at`; a cube's dimension 0 varies fastest, `mesh::coords`).
struct Layout {
    kx: u32,
    ky: u32,
    transpose: bool,
}

impl Layout {
    fn of(shape: &Shape) -> Option<Layout> {
        let (kx, ky, transpose) = match shape {
            Shape::Cube { k, .. } if k.len() == 1 => (k[0], 1, false),
            Shape::Cube { k, .. } if k.len() == 2 => (k[0], k[1], false),
            &Shape::Grid { k, .. } => (k, k, true),
            _ => return None,
        };
        Some(Layout { kx, ky, transpose })
    }

    /// Switch `s`'s cell (x, y).
    fn pos(&self, s: u32) -> (u32, u32) {
        if self.transpose {
            (s / self.ky, s % self.ky)
        } else {
            (s % self.kx, s / self.kx)
        }
    }
}

/// Viridis (matplotlib's default colour map, readable in grey and by the colour-blind) at
/// `f` in [0, 1], interpolated between eight of its colours. (plotters has it only with its
/// full palette, a table of some 250 named colours reef does not use.)
fn viridis(f: f64) -> RGBColor {
    const V: [(f64, f64, f64); 8] = [
        (68.0, 1.0, 84.0),
        (70.0, 50.0, 127.0),
        (54.0, 92.0, 141.0),
        (39.0, 127.0, 143.0),
        (31.0, 162.0, 136.0),
        (74.0, 194.0, 110.0),
        (160.0, 219.0, 57.0),
        (254.0, 232.0, 37.0),
    ];
    let x = f.clamp(0.0, 1.0) * (V.len() - 1) as f64;
    let i = (x as usize).min(V.len() - 2);
    let t = x - i as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(
        mix(V[i].0, V[i + 1].0),
        mix(V[i].1, V[i + 1].1),
        mix(V[i].2, V[i + 1].2),
    )
}

/// The colour of utilization `u` on a scale from 0 to `busiest`.
fn shade(u: f64, busiest: f64) -> RGBColor {
    viridis(if busiest > 0.0 { u / busiest } else { 0.0 })
}

/// Whether [`channel_map`] can draw this network.
pub fn can_draw(fab: &Fabric) -> bool {
    Layout::of(&fab.shape).is_some() || fab.shape.clos_dims().is_some()
}

/// The switch a channel end belongs to: the node itself, or for an output buffer (a stage
/// after a switch output) the switch that feeds it.
fn owner(fab: &Fabric, n: NodeId) -> NodeId {
    if n.0 >= fab.stage_base && n.0 < fab.switches {
        let c = fab.in_chan[n.idx()].iter().flatten().next();
        if let Some(c) = c {
            return fab.channels[c.idx()].src;
        }
    }
    n
}

/// Draws `r`'s channel utilization on `fab` as SVG text. Parallel links between the same
/// two switches (the Macramé grid's groups) are drawn as one, at their mean utilization.
pub fn channel_map(fab: &Fabric, r: &RunResult) -> Result<String, String> {
    if r.channel_utilization.len() != fab.channels.len() {
        return Err("the result is not of this network".into());
    }
    let util: Vec<f64> = r.channel_utilization.iter().map(|c| c.utilization).collect();
    if let Some((leaves, _, spines, _)) = fab.shape.clos_dims() {
        return clos_map(fab, &util, &r.name, leaves, spines);
    }
    let Some(lay) = Layout::of(&fab.shape) else {
        return Err(format!(
            "a map is drawn for rings, 2-D meshes and tori, the Macramé grid and folded Clos \
             networks, not for {}",
            fab
        ));
    };
    let links = links(fab, &util);
    let busiest = links.values().map(|&(u, n)| u / n as f64).fold(0.0f64, f64::max);
    let (kx, ky) = (lay.kx, lay.ky);
    let cell = (720 / kx.max(ky)).clamp(14, 90) as i32;
    let (margin, top, bar) = (30, 50, 90);
    let title = format!("{}: channel utilization (busiest {:.3})", r.name, busiest);
    let (w, h) = (
        (2 * margin + cell * kx as i32 + bar).max(title_width(&title) + 2 * margin),
        top + margin + cell * ky as i32,
    );
    let centre = |s: u32| {
        let (x, y) = lay.pos(s);
        (
            margin + cell * x as i32 + cell / 2,
            top + cell * y as i32 + cell / 2,
        )
    };
    let colour = |u: f64| shade(u, busiest);
    let mut buf = String::new();
    {
        let root = canvas(&mut buf, w, h, &title, margin)?;
        let err = |e: DrawingAreaErrorKind<_>| e.to_string();
        let half = (cell as f64 * 0.15).max(3.0);
        let gap = (cell as f64 * 0.07).max(2.0);
        let stroke = (cell / 12).clamp(2, 6) as u32;
        for (&(a, b), &(u, n)) in &links {
            let ((x0, y0), (x1, y1)) = (centre(a), centre(b));
            let (dx, dy) = ((x1 - x0) as f64, (y1 - y0) as f64);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (ux, uy) = (dx / len, dy / len);
            let neighbours = len <= cell as f64 * 1.01;
            // From the edge of one square to the edge of the next, to the right of the way
            // it goes; a wrap-around link as a stub leaving toward the edge it wraps over.
            let (ux, uy, reach) = if neighbours {
                (ux, uy, len - 2.0 * half)
            } else {
                (-ux, -uy, cell as f64 * 0.5 - half)
            };
            let (ox, oy) = (-uy * gap, ux * gap);
            let sx = x0 as f64 + ux * half + ox;
            let sy = y0 as f64 + uy * half + oy;
            let pts = vec![
                (sx as i32, sy as i32),
                ((sx + ux * reach) as i32, (sy + uy * reach) as i32),
            ];
            root.draw(&PathElement::new(pts, colour(u / n as f64).stroke_width(stroke)))
                .map_err(err)?;
        }
        for s in 0..fab.stage_base {
            let (x, y) = centre(s);
            let hh = half as i32;
            root.draw(&Rectangle::new(
                [(x - hh, y - hh), (x + hh, y + hh)],
                BLACK.mix(0.6).filled(),
            ))
            .map_err(err)?;
        }
        scale(
            &root,
            2 * margin + cell * kx as i32 + 20,
            top,
            h - margin,
            busiest,
        )?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// Links between switches (into a true switch; a switch's own output buffer is part of
/// it), by (from, to): summed utilization and count.
fn links(fab: &Fabric, util: &[f64]) -> BTreeMap<(u32, u32), (f64, u32)> {
    let mut links: BTreeMap<(u32, u32), (f64, u32)> = BTreeMap::new();
    for (i, ch) in fab.channels.iter().enumerate() {
        if !fab.is_switch(ch.src) || ch.dst.0 >= fab.stage_base {
            continue;
        }
        let (a, b) = (owner(fab, ch.src), ch.dst);
        if a == b {
            continue;
        }
        let e = links.entry((a.0, b.0)).or_default();
        e.0 += util[i];
        e.1 += 1;
    }
    links
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A white drawing `w` by `h` into `buf`, its title at the top left.
fn canvas<'a>(buf: &'a mut String, w: i32, h: i32, title: &str, margin: i32) -> Result<Area<'a>, String> {
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let root = SVGBackend::with_string(buf, (w as u32, h as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    root.draw(&Text::new(title, (margin, 14), ("sans-serif", 18)))
        .map_err(err)?;
    Ok(root)
}

/// The colour scale at `x` from `y0` (the busiest channel) down to `y1` (idle).
fn scale(root: &Area, x: i32, y0: i32, y1: i32, busiest: f64) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let steps = 64;
    for i in 0..steps {
        let f = i as f64 / (steps - 1) as f64;
        let y = y1 - ((y1 - y0) as f64 * (i + 1) as f64 / steps as f64) as i32;
        let y2 = y1 - ((y1 - y0) as f64 * i as f64 / steps as f64) as i32;
        root.draw(&Rectangle::new([(x, y), (x + 16, y2)], viridis(f).filled()))
            .map_err(err)?;
    }
    let font = ("sans-serif", 13);
    root.draw(&Text::new(format!("{busiest:.3}"), (x + 20, y0), font))
        .map_err(err)?;
    root.draw(&Text::new("0", (x + 20, y1 - 12), font)).map_err(err)?;
    Ok(())
}

/// A folded Clos as two matrices, one row per terminal switch and one column per centre
/// switch: the links up (terminal to centre) on the left, down on the right, each cell a
/// pair's parallel links at their mean utilization. (Drawn as the network, its links from
/// every terminal switch to every centre switch cross in a knot no one can read.)
fn clos_map(fab: &Fabric, util: &[f64], name: &str, leaves: u32, spines: u32) -> Result<String, String> {
    let links = links(fab, util);
    let busiest = links.values().map(|&(u, n)| u / n as f64).fold(0.0f64, f64::max);
    let title = format!("{name}: channel utilization (busiest {busiest:.3})");
    let (margin, top, bar, label, between) = (30i32, 86i32, 90i32, 34i32, 40i32);
    let cw = (380 / spines as i32).clamp(4, 40);
    let ch = (400 / leaves as i32).clamp(3, cw.max(12));
    let mw = cw * spines as i32;
    let w = (2 * (label + mw) + between + 2 * margin + bar).max(title_width(&title) + 2 * margin);
    let h = top + ch * leaves as i32 + 50;
    let colour = |u: f64| shade(u, busiest);
    let mut buf = String::new();
    {
        let root = canvas(&mut buf, w, h, &title, margin)?;
        let err = |e: DrawingAreaErrorKind<_>| e.to_string();
        let font = ("sans-serif", 13);
        // Every row and column labelled where they are few, else every so many.
        let every = |px: i32| ((16 + px - 1) / px).max(1) as usize;
        for (k, heading) in [
            "up: terminal switch → centre switch",
            "down: centre switch → terminal switch",
        ]
        .iter()
        .enumerate()
        {
            let x0 = margin + label + k as i32 * (label + mw + between);
            root.draw(&Text::new(*heading, (x0, top - 42), font))
                .map_err(err)?;
            root.draw(&Text::new("centre switch", (x0, top - 24), ("sans-serif", 11)))
                .map_err(err)?;
            let (ec, er) = (every(cw), every(ch));
            for c in (0..spines).step_by(ec) {
                root.draw(&Text::new(
                    c.to_string(),
                    (x0 + c as i32 * cw + cw / 2 - 4, top - 12),
                    ("sans-serif", 10),
                ))
                .map_err(err)?;
            }
            for l in (0..leaves).step_by(er) {
                root.draw(&Text::new(
                    l.to_string(),
                    (x0 - 22, top + l as i32 * ch + ch / 2 - 5),
                    ("sans-serif", 10),
                ))
                .map_err(err)?;
            }
            // Each cell a thick stroke across it, so that it reads as a mark of data.
            for l in 0..leaves {
                for c in 0..spines {
                    let key = if k == 0 { (l, leaves + c) } else { (leaves + c, l) };
                    let Some(&(u, n)) = links.get(&key) else { continue };
                    let y = top + l as i32 * ch + ch / 2;
                    let (xa, xb) = (x0 + c as i32 * cw + 1, x0 + (c as i32 + 1) * cw - 1);
                    root.draw(&PathElement::new(
                        vec![(xa, y), (xb, y)],
                        colour(u / n as f64).stroke_width((ch - 1).max(1) as u32),
                    ))
                    .map_err(err)?;
                }
            }
        }
        root.draw(&Text::new(
            format!("rows: the {leaves} terminal switches; columns: the {spines} centre switches"),
            (margin, top + ch * leaves as i32 + 22),
            font,
        ))
        .map_err(err)?;
        scale(
            &root,
            margin + 2 * (label + mw) + between + 20,
            top,
            top + ch * leaves as i32,
            busiest,
        )?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// About how wide `text` is in the maps' 18-pixel sans-serif title font [px].
fn title_width(text: &str) -> i32 {
    (text.chars().count() as f64 * 8.6) as i32
}

#[cfg(test)]
mod tests {
    use crate::engine::Spec;
    use crate::engine::result::RunResult;

    fn spec(text: &str) -> Spec {
        crate::config::load_str("map.toml", text, std::path::Path::new("."), &[]).unwrap()
    }

    fn run(s: &Spec) -> RunResult {
        crate::runner::run_spec(s, &mut |_| {}).unwrap()
    }

    fn lines(svg: &str) -> usize {
        svg.matches("<polyline").count()
    }

    #[test]
    fn draws_every_link_of_a_mesh_and_a_torus_once() {
        for (kind, links) in [("mesh", 2 * 2 * 4 * 3), ("torus", 2 * 2 * 4 * 4)] {
            let s = spec(&format!(
                "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"1000 cycles\"\n[topology]\nkind = \"{kind}\"\nk = 4\n[traffic]\nload = 0.2\n"
            ));
            let r = run(&s);
            let svg = super::channel_map(&s.fabric, &r).unwrap();
            assert_eq!(lines(&svg), links, "{kind}");
            assert!(svg.contains("busiest"), "{svg}");
        }
    }

    #[test]
    fn output_buffers_belong_to_their_switch() {
        let s = spec(
            "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"1000 cycles\"\n[topology]\nkind = \"mesh\"\nk = 3\n[switch]\noutput_buffer = 4\n[traffic]\nload = 0.2\n",
        );
        let r = run(&s);
        let svg = super::channel_map(&s.fabric, &r).unwrap();
        assert_eq!(lines(&svg), 2 * 2 * 3 * 2);
    }

    /// A folded Clos: one cell per terminal-centre pair and direction (a pair's parallel
    /// links as one).
    #[test]
    fn draws_a_clos_leaf_to_spine() {
        let s = spec(
            "[sim]\nclock = \"10 MHz\"\nwarmup = \"10 us\"\nmeasure = \"50 us\"\n[topology]\nkind = \"macrame\"\nnetwork = \"clos\"\nnodes = 64\n[traffic]\nload = \"4 MB/s\"\npacket_size = 66\n",
        );
        assert!(super::can_draw(&s.fabric));
        let r = run(&s);
        let svg = super::channel_map(&s.fabric, &r).unwrap();
        // 4 terminal switches, 2 centre switches, groups of 8 links: a cell per pair and
        // direction.
        assert_eq!(lines(&svg), 2 * 4 * 2);
        assert!(svg.contains("the 4 terminal switches; columns: the 2 centre switches"));
    }

    #[test]
    fn viridis_runs_from_purple_to_yellow() {
        assert_eq!(super::viridis(0.0), plotters::style::RGBColor(68, 1, 84));
        assert_eq!(super::viridis(1.0), plotters::style::RGBColor(254, 232, 37));
        assert_eq!(super::viridis(0.5), plotters::style::RGBColor(35, 145, 140));
    }

    #[test]
    fn other_topologies_are_refused() {
        let s = spec(
            "[sim]\nwarmup = \"100 cycles\"\nmeasure = \"1000 cycles\"\n[topology]\nkind = \"full\"\nswitches = 4\n[traffic]\nload = 0.1\n",
        );
        assert!(!super::can_draw(&s.fabric));
        let r = run(&s);
        let e = super::channel_map(&s.fabric, &r).unwrap_err();
        assert!(e.contains("2-D meshes") && e.contains("Clos"), "{e}");
    }
}

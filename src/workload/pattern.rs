//! Traffic patterns: who sends to whom (Dally & Towles, *Principles and Practices of
//! Interconnection Networks*, §3.2; the same definitions as BookSim2).
//!
//! Bit patterns (bit-complement, bit-reverse, shuffle, transpose) act on the host number and
//! need a power-of-two number of hosts. Where the switches have coordinates, transpose,
//! tornado and neighbour act on those instead, and keep a host's place on its switch:
//!
//! - transpose swaps the switch coordinates of a square 2-D mesh or torus and of the Macramé
//!   switch grid or torus ([`Shape::Grid`]): host `p` of switch (x, y) sends to host `p` of
//!   switch (y, x), for any k and any number of hosts per switch;
//! - tornado takes each coordinate x to (x + ⌈k/2⌉ − 1) mod k, neighbour to (x + 1) mod k, on
//!   a mesh, torus or Macramé grid or torus. Both wrap round mod k even where the network has
//!   no wrap links (as BookSim2 does), so a pattern is the same permutation on a grid as on
//!   its torus.
//!
//! Elsewhere tornado and neighbour act on the host number as a ring. A pattern that maps a
//! host to itself (transpose on the diagonal, tornado with k = 2) sends it through its switch
//! and back, as BookSim2 does.
//!
//! The Macramé papers (`../shared/systems/ieee1355.md`, "Traffic") define no transpose,
//! tornado or neighbour traffic: their grid runs random traffic and systematic pairs (best
//! case with a node on a nearest-neighbour switch, worst case with the mirror image through
//! the grid's centre; [`crate::systems::ieee1355::pairs`], run by `reef reproduce
//! ieee1355`). On the grid, these patterns are therefore Dally & Towles's, per switch
//! coordinate as on a mesh; `neighbour` is not the papers' best case, nor transpose their
//! worst.

use crate::fabric::Shape;
use crate::fabric::grid::{host_at, host_place};
use crate::fabric::mesh::{coords, index};
use crate::rng::Stream;

/// A pattern, as configured.
#[derive(Clone, Debug, PartialEq)]
pub enum PatternSpec {
    /// No synthetic traffic (an agent, or nothing, sends).
    None,
    Uniform,
    /// Fixed (source, destination) pairs; other hosts stay silent.
    Pairs(Vec<(u32, u32)>),
    /// A random permutation drawn once from the seed.
    Permutation,
    Transpose,
    BitComplement,
    BitReverse,
    Shuffle,
    Tornado,
    Neighbour,
    /// A fraction of the packets goes to the hot hosts, the rest uniformly.
    HotSpot {
        hot: Vec<u32>,
        fraction: f64,
    },
}

/// A pattern, ready to draw destinations.
#[derive(Clone, Debug)]
pub enum Pattern {
    Uniform {
        include_self: bool,
    },
    /// Fixed destination per source; `u32::MAX` means the source is silent.
    Map(Vec<u32>),
    HotSpot {
        hot: Vec<u32>,
        fraction: f64,
        include_self: bool,
    },
}

pub const SILENT: u32 = u32::MAX;

fn log2_exact(n: u32) -> Option<u32> {
    n.is_power_of_two().then(|| n.trailing_zeros())
}

/// A destination drawn uniformly among the `n` hosts (but `src`, unless `include_self`).
#[inline(always)]
fn uniform(src: u32, n: u32, rng: &mut Stream, include_self: bool) -> u32 {
    if include_self {
        rng.below(n as u64) as u32
    } else {
        let d = rng.below(n as u64 - 1) as u32;
        if d >= src { d + 1 } else { d }
    }
}

/// A hot-spot destination: one of `hot` with probability `fraction`, else uniform. A hot
/// host sends its hot share to the other hot hosts, or, the only one, to anyone but itself,
/// unless `include_self`. (Out of line: inlined, it slowed the uniform pattern's packets.)
#[inline(never)]
fn hot_spot(hot: &[u32], fraction: f64, include_self: bool, src: u32, n: u32, rng: &mut Stream) -> u32 {
    if rng.unit() >= fraction {
        return uniform(src, n, rng, include_self);
    }
    if include_self || !hot.contains(&src) {
        return hot[rng.below(hot.len() as u64) as usize];
    }
    let others = hot.iter().filter(|&&h| h != src).count();
    if others == 0 {
        return uniform(src, n, rng, false);
    }
    let j = rng.below(others as u64) as usize;
    hot.iter().copied().filter(|&h| h != src).nth(j).expect("counted")
}

impl Pattern {
    /// Builds `spec` for `n` hosts arranged as `shape`; `rng` draws random permutations.
    pub fn build(
        spec: &PatternSpec,
        shape: &Shape,
        n: u32,
        include_self: bool,
        rng: &mut Stream,
    ) -> Result<Pattern, String> {
        if n < 2 && !include_self && *spec != PatternSpec::None {
            return Err("a pattern needs at least 2 hosts".into());
        }
        let bits = || {
            log2_exact(n)
                .ok_or_else(|| format!("this pattern needs a power-of-two number of hosts (have {n})"))
        };
        let map = |f: &dyn Fn(u32) -> u32| Pattern::Map((0..n).map(f).collect());
        if *spec == PatternSpec::None {
            return Ok(Pattern::Map(vec![SILENT; n as usize]));
        }
        Ok(match spec {
            PatternSpec::None => unreachable!("handled above"),
            PatternSpec::Uniform => Pattern::Uniform { include_self },
            PatternSpec::HotSpot { hot, fraction } => {
                if hot.is_empty() || hot.iter().any(|&h| h >= n) {
                    return Err(format!("hot hosts must be a non-empty list of hosts below {n}"));
                }
                if !(0.0..=1.0).contains(fraction) {
                    return Err(format!("hot_fraction must be in [0, 1], got {fraction}"));
                }
                Pattern::HotSpot {
                    hot: hot.clone(),
                    fraction: *fraction,
                    include_self,
                }
            }
            PatternSpec::Pairs(pairs) => {
                let mut m = vec![SILENT; n as usize];
                for &(s, d) in pairs {
                    if s >= n || d >= n {
                        return Err(format!("pair ({s}, {d}) names a host outside 0..{n}"));
                    }
                    if m[s as usize] != SILENT {
                        return Err(format!("host {s} appears twice as a source in pairs"));
                    }
                    m[s as usize] = d;
                }
                Pattern::Map(m)
            }
            PatternSpec::Permutation => {
                let mut p: Vec<u32> = (0..n).collect();
                for i in (1..n as usize).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    p.swap(i, j);
                }
                Pattern::Map(p)
            }
            PatternSpec::BitComplement => {
                bits()?;
                map(&|s| !s & (n - 1))
            }
            PatternSpec::BitReverse => {
                let b = bits()?;
                map(&|s| if b == 0 { 0 } else { s.reverse_bits() >> (32 - b) })
            }
            PatternSpec::Shuffle => {
                let b = bits()?;
                map(&|s| {
                    if b == 0 {
                        0
                    } else {
                        ((s << 1) | (s >> (b - 1))) & (n - 1)
                    }
                })
            }
            PatternSpec::Transpose => match shape {
                Shape::Cube { k, conc, .. } if k.len() == 2 && k[0] == k[1] => {
                    let (k0, conc) = (k[0], *conc);
                    map(&|s| {
                        let (sw, local) = (s / conc, s % conc);
                        ((sw % k0) * k0 + sw / k0) * conc + local
                    })
                }
                &Shape::Grid { k, conc, .. } => map(&|s| {
                    let (x, y, p) = host_place(k, conc, s);
                    host_at(k, conc, y, x, p)
                }),
                _ => {
                    let b = bits()?;
                    if b % 2 != 0 {
                        return Err(format!(
                            "transpose needs an even number of address bits (have {b})"
                        ));
                    }
                    let h = b / 2;
                    map(&|s| ((s << h) | (s >> h)) & (n - 1))
                }
            },
            PatternSpec::Tornado | PatternSpec::Neighbour => {
                let tornado = matches!(spec, PatternSpec::Tornado);
                // One coordinate's step, wrapping mod k whether or not the network wraps.
                let step = |x: u32, kd: u32| {
                    if tornado {
                        (x + kd.div_ceil(2) - 1) % kd
                    } else {
                        (x + 1) % kd
                    }
                };
                match shape {
                    Shape::Cube { k, conc, .. } => map(&|s| {
                        let (sw, local) = (s / conc, s % conc);
                        let x: Vec<u32> = coords(k, sw).iter().zip(k).map(|(&x, &kd)| step(x, kd)).collect();
                        index(k, &x) * conc + local
                    }),
                    &Shape::Grid { k, conc, .. } => map(&|s| {
                        let (x, y, p) = host_place(k, conc, s);
                        host_at(k, conc, step(x, k), step(y, k), p)
                    }),
                    _ => map(&|s| {
                        if tornado {
                            (s + n.div_ceil(2) - 1) % n
                        } else {
                            (s + 1) % n
                        }
                    }),
                }
            }
        })
    }

    /// The destination of the next packet from `src`, or `None` if `src` is silent.
    #[inline]
    pub fn dest(&self, src: u32, n: u32, rng: &mut Stream) -> Option<u32> {
        match self {
            Pattern::Uniform { include_self } => Some(uniform(src, n, rng, *include_self)),
            Pattern::Map(m) => Some(m[src as usize]).filter(|&d| d != SILENT),
            Pattern::HotSpot {
                hot,
                fraction,
                include_self,
            } => Some(hot_spot(hot, *fraction, *include_self, src, n, rng)),
        }
    }

    /// Whether `src` ever sends.
    pub fn sends(&self, src: u32) -> bool {
        match self {
            Pattern::Map(m) => m[src as usize] != SILENT,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    fn build(spec: PatternSpec, shape: &Shape, n: u32) -> Vec<u32> {
        let mut r = Stream::new(1, Purpose::Setup, 0);
        match Pattern::build(&spec, shape, n, false, &mut r).unwrap() {
            Pattern::Map(m) => m,
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn bit_patterns() {
        let irr = Shape::Irregular;
        assert_eq!(
            build(PatternSpec::BitComplement, &irr, 8),
            vec![7, 6, 5, 4, 3, 2, 1, 0]
        );
        assert_eq!(
            build(PatternSpec::BitReverse, &irr, 8),
            vec![0, 4, 2, 6, 1, 5, 3, 7]
        );
        assert_eq!(build(PatternSpec::Shuffle, &irr, 8), vec![0, 2, 4, 6, 1, 3, 5, 7]);
        assert_eq!(build(PatternSpec::Transpose, &irr, 16)[1], 4);
    }

    #[test]
    fn transpose_on_a_mesh_swaps_coordinates() {
        let m = Shape::Cube {
            k: vec![3, 3],
            wrap: false,
            conc: 1,
        };
        let t = build(PatternSpec::Transpose, &m, 9);
        assert_eq!(t[1], 3); // (1,0) → (0,1)
        assert_eq!(t[5], 7); // (2,1) → (1,2)
        // Two hosts per switch (a concentrated mesh, 18 hosts, not a power of two): the
        // switches swap, each host keeps its port.
        let m = Shape::Cube {
            k: vec![3, 3],
            wrap: false,
            conc: 2,
        };
        let t = build(PatternSpec::Transpose, &m, 18);
        assert_eq!(t[2], 6); // switch (1,0) port 0 → switch (0,1) port 0
        assert_eq!(t[11], 15); // switch (2,1) port 1 → switch (1,2) port 1
        assert_eq!(t[9], 9); // switch (1,1) port 1, on the diagonal, to itself
    }

    #[test]
    fn tornado_and_neighbour_on_a_torus() {
        let t = Shape::Cube {
            k: vec![8, 8],
            wrap: true,
            conc: 1,
        };
        let tor = build(PatternSpec::Tornado, &t, 64);
        assert_eq!(tor[0], 3 + 3 * 8);
        let nb = build(PatternSpec::Neighbour, &t, 64);
        assert_eq!(nb[7], 8); // (7,0) → (0,1)
    }

    fn grid(k: u32, conc: u32) -> Shape {
        Shape::Grid {
            k,
            wrap: false,
            conc,
            group: 1,
        }
    }

    #[test]
    fn transpose_on_a_grid_swaps_switches_and_keeps_the_port() {
        // 3×3 switches, 2 hosts each: host 2p.. of switch (x, y) = 3x + y.
        let t = build(PatternSpec::Transpose, &grid(3, 2), 18);
        assert_eq!(t[2], 6); // switch (0,1) port 0 → switch (1,0) port 0
        assert_eq!(t[3], 7); // switch (0,1) port 1 → switch (1,0) port 1
        assert_eq!(t[10], 14); // switch (1,2) port 0 → switch (2,1) port 0
        assert_eq!(t[5], 13); // switch (0,2) port 1 → switch (2,0) port 1
        assert_eq!(t[9], 9); // the diagonal's hosts send to themselves
        assert_eq!(t[17], 17);
        assert!((0..18).all(|h| t[t[h as usize] as usize] == h), "{t:?}");
    }

    #[test]
    fn transpose_on_the_400_node_macrame_grid() {
        // 5×5 switches of 16 nodes: 400 hosts, not a power of two, yet transposable.
        let t = build(PatternSpec::Transpose, &grid(5, 16), 400);
        // Node 3 of switch (1, 4) = 9 is host 147; it sends to node 3 of switch (4, 1) = 21.
        assert_eq!(t[147], 21 * 16 + 3);
        assert!((0..400).all(|h| t[t[h as usize] as usize] == h && t[h as usize] % 16 == h % 16));
    }

    #[test]
    fn tornado_and_neighbour_on_a_grid() {
        let g = grid(5, 2);
        let tor = build(PatternSpec::Tornado, &g, 50);
        // ⌈5/2⌉ − 1 = 2 along each coordinate: switch (0,0) → (2,2) = 12.
        assert_eq!(tor[1], 12 * 2 + 1);
        // (4,3) → (1,0) = 5, wrapping round although the grid does not.
        assert_eq!(tor[2 * 23], 2 * 5);
        let nb = build(PatternSpec::Neighbour, &grid(3, 2), 18);
        assert_eq!(nb[13], 3); // switch (2,0) port 1 → (0,1) port 1
        assert_eq!(nb[0], 8); // switch (0,0) port 0 → (1,1) port 0
        for m in [&tor, &nb] {
            let mut sorted = m.clone();
            sorted.sort();
            assert_eq!(sorted, (0..m.len() as u32).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_grid_maps_as_the_cube_of_the_same_switches() {
        // The grid's switch x·k + y is the cube's switch with coordinates (y, x): the
        // coordinate patterns must agree host for host, grid or torus, mesh or torus.
        for k in [2, 3, 4, 5] {
            for conc in [1, 2, 3] {
                for wrap in [false, true] {
                    let n = k * k * conc;
                    let g = Shape::Grid {
                        k,
                        wrap,
                        conc,
                        group: 2,
                    };
                    let c = Shape::Cube {
                        k: vec![k, k],
                        wrap,
                        conc,
                    };
                    for spec in [
                        PatternSpec::Tornado,
                        PatternSpec::Neighbour,
                        PatternSpec::Transpose,
                    ] {
                        assert_eq!(build(spec.clone(), &g, n), build(spec, &c, n), "{k} {conc}");
                    }
                }
            }
        }
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut p = build(PatternSpec::Permutation, &Shape::Irregular, 100);
        p.sort();
        assert_eq!(p, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn uniform_excludes_self() {
        let mut r = Stream::new(1, Purpose::Setup, 0);
        let p = Pattern::Uniform { include_self: false };
        for _ in 0..1000 {
            assert_ne!(p.dest(3, 4, &mut r), Some(3));
        }
    }

    #[test]
    fn hot_spot_excludes_self_unless_asked() {
        let mut r = Stream::new(1, Purpose::Setup, 0);
        for hot in [vec![3], vec![3, 1], vec![3, 3, 0]] {
            let p = Pattern::HotSpot {
                hot: hot.clone(),
                fraction: 1.0,
                include_self: false,
            };
            let mut seen = [false; 4];
            for _ in 0..1000 {
                let d = p.dest(3, 4, &mut r).unwrap();
                assert_ne!(d, 3, "{hot:?}");
                seen[d as usize] = true;
            }
            // The other hot hosts take the hot share; a lone hot host sends to anyone else.
            let want: Vec<bool> = (0..4)
                .map(|h| h != 3 && (hot.len() == 1 || hot.contains(&h)))
                .collect();
            assert_eq!(seen.to_vec(), want, "{hot:?}");
        }
        let p = Pattern::HotSpot {
            hot: vec![3],
            fraction: 1.0,
            include_self: true,
        };
        assert_eq!(p.dest(3, 4, &mut r), Some(3));
    }

    #[test]
    fn bad_patterns_are_errors() {
        let mut r = Stream::new(1, Purpose::Setup, 0);
        assert!(Pattern::build(&PatternSpec::BitReverse, &Shape::Irregular, 12, false, &mut r).is_err());
        assert!(
            Pattern::build(
                &PatternSpec::Pairs(vec![(0, 1), (0, 2)]),
                &Shape::Irregular,
                4,
                false,
                &mut r
            )
            .is_err()
        );
    }
}

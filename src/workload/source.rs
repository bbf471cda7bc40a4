//! Injection processes (when a host creates packets) and packet sizes.
//!
//! The arrival sequence of a host does not depend on the network, so a host keeps only a
//! cursor on it ([`Arrivals`]): the creation time and size of the oldest packet not yet
//! injected. The source queue is unbounded (latency includes source queueing, as in
//! BookSim2) yet takes no memory, and a copy of the cursor counts what was offered.
//! Bernoulli: a packet each cycle with probability p (geometric gaps). Poisson: exponential
//! gaps. Periodic: the n-th packet at phase + ⌊n·P⌋ with a random phase per host. On/off:
//! Bernoulli during on-periods; on and off periods are geometric with the configured means.

use crate::rng::Stream;
use crate::time::{Clock, Ratio, Time};

#[derive(Clone, Debug, PartialEq)]
pub enum Process {
    /// A packet each cycle of `cycle` with probability `p`.
    Bernoulli { p: f64, cycle: Clock },
    /// Exponential gaps with mean `mean_gap` [ps].
    Poisson { mean_gap: f64 },
    /// One packet every `period` [ps] (exact rational).
    Periodic { period: Ratio },
    /// Bernoulli(`p_on`) per cycle in on-periods; mean on and off period lengths [cycles].
    OnOff {
        p_on: f64,
        mean_on: f64,
        mean_off: f64,
        cycle: Clock,
    },
    /// Every source always has a packet waiting (saturation throughput).
    Backlogged,
    /// A batch (BookSim2's `sim_type = batch`): `count` packets, one created each edge of
    /// `cycle` from 0; then the source falls silent. With a `window` (0: none), a source
    /// takes a packet only while fewer than `window` of its packets are in flight, and one
    /// that had to wait creates its next packet the cycle after the delivery that let it go
    /// on, the rest one a cycle from there (BookSim2's `max_outstanding_requests`).
    Batch { count: u64, cycle: Clock, window: u32 },
}

/// Packet sizes [flits].
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    Fixed(u32),
    /// Sizes with cumulative probabilities (last = 1).
    Weighted {
        sizes: Vec<u32>,
        cum: Vec<f64>,
    },
}

impl Sizes {
    /// Sizes with the given weights (need not sum to 1).
    pub fn weighted(pairs: &[(u32, f64)]) -> Result<Sizes, String> {
        if pairs.is_empty() {
            return Err("sizes must list at least one [size, weight]".into());
        }
        if pairs.iter().any(|&(s, w)| s == 0 || !w.is_finite() || w < 0.0) {
            return Err("sizes need positive sizes and finite, non-negative weights".into());
        }
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        if total <= 0.0 {
            return Err("size weights sum to zero".into());
        }
        if !total.is_finite() {
            return Err(format!("size weights sum to {total}: use smaller weights"));
        }
        let mut acc = 0.0;
        let cum = pairs
            .iter()
            .map(|p| {
                acc += p.1 / total;
                acc
            })
            .collect();
        Ok(Sizes::Weighted {
            sizes: pairs.iter().map(|p| p.0).collect(),
            cum,
        })
    }

    /// Mean size [flits].
    pub fn mean(&self) -> f64 {
        match self {
            Sizes::Fixed(s) => *s as f64,
            Sizes::Weighted { sizes, cum } => {
                let mut prev = 0.0;
                sizes
                    .iter()
                    .zip(cum)
                    .map(|(&s, &c)| {
                        let p = c - prev;
                        prev = c;
                        s as f64 * p
                    })
                    .sum()
            }
        }
    }

    pub fn max(&self) -> u32 {
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::Weighted { sizes, .. } => sizes.iter().copied().max().unwrap_or(1),
        }
    }

    #[inline]
    fn draw(&self, rng: &mut Stream) -> u32 {
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::Weighted { sizes, cum } => {
                let u = rng.unit();
                let i = cum.partition_point(|&c| c <= u).min(sizes.len() - 1);
                sizes[i]
            }
        }
    }
}

/// A cursor on one host's arrival sequence: the oldest packet not yet injected.
#[derive(Clone, Debug)]
pub struct Arrivals {
    rng: Stream,
    /// Creation time of the packet under the cursor [ps].
    pub time: Time,
    /// Its size [flits].
    pub size: u32,
    n: u64,
    phase: Time,
    /// On/off: cycle index of the last arrival and end of the current on-period.
    cyc: u64,
    on_end: u64,
    /// Bernoulli with p < 1: p and ln(1 − p), for the geometric gaps.
    ln_q: Option<(f64, f64)>,
}

impl Arrivals {
    pub fn new(process: &Process, sizes: &Sizes, mut rng: Stream) -> Arrivals {
        let phase = match process {
            Process::Periodic { period } => {
                let p = period.ceil().max(1);
                rng.below(p)
            }
            _ => 0,
        };
        let mut a = Arrivals {
            rng,
            time: 0,
            size: 1,
            n: 0,
            phase,
            cyc: 0,
            on_end: 0,
            ln_q: match *process {
                Process::Bernoulli { p, .. } if p < 1.0 => Some((p, (-p).ln_1p())),
                _ => None,
            },
        };
        a.first(process, sizes);
        a
    }

    fn first(&mut self, process: &Process, sizes: &Sizes) {
        match *process {
            Process::Bernoulli { p, cycle } => {
                self.cyc = self.rng.geometric(p) - 1;
                self.time = cycle.edge(self.cyc);
            }
            Process::Poisson { mean_gap } => {
                self.time = self.rng.exponential(mean_gap).round() as Time;
            }
            Process::Periodic { .. } => self.time = self.phase,
            Process::OnOff {
                p_on,
                mean_on,
                mean_off,
                cycle,
            } => {
                // Start in the stationary state: on with probability on / (on + off).
                let on = self.rng.unit() < mean_on / (mean_on + mean_off);
                let start = if on { 0 } else { self.rng.geometric(1.0 / mean_off) };
                self.on_end = start + self.rng.geometric(1.0 / mean_on);
                self.cyc = start;
                self.onoff_next(p_on, mean_on, mean_off, true);
                self.time = cycle.edge(self.cyc);
            }
            Process::Backlogged => self.time = 0,
            Process::Batch { count, cycle, .. } => {
                self.time = if count > 0 { cycle.edge(0) } else { Time::MAX }
            }
        }
        self.size = sizes.draw(&mut self.rng);
    }

    fn onoff_next(&mut self, p_on: f64, mean_on: f64, mean_off: f64, first: bool) {
        // Trials are memoryless, so a gap that runs past the on-period restarts in the next.
        let mut base = if first { self.cyc } else { self.cyc + 1 };
        loop {
            let g = self.rng.geometric(p_on) - 1;
            if base + g < self.on_end {
                self.cyc = base + g;
                return;
            }
            let off = self.rng.geometric(1.0 / mean_off);
            base = self.on_end + off;
            self.on_end = base + self.rng.geometric(1.0 / mean_on);
        }
    }

    /// Moves the cursor to the next packet.
    #[inline]
    pub fn advance(&mut self, process: &Process, sizes: &Sizes) {
        match *process {
            Process::Bernoulli { p, cycle } => {
                let gap = match self.ln_q {
                    Some((q, ln_q)) if q == p => self.rng.geometric_ln(ln_q),
                    _ => self.rng.geometric(p),
                };
                self.cyc = self.cyc.saturating_add(gap);
                self.time = cycle.edge(self.cyc);
            }
            Process::Poisson { mean_gap } => {
                // (A gap too long for the clock is never: the host sends no more.)
                let gap = self.rng.exponential(mean_gap).round() as Time;
                self.time = self.time.saturating_add(gap);
            }
            Process::Periodic { period } => {
                self.n += 1;
                self.time = self.phase + Ratio::int(self.n as u128).times(period).floor();
            }
            Process::OnOff {
                p_on,
                mean_on,
                mean_off,
                cycle,
            } => {
                self.onoff_next(p_on, mean_on, mean_off, false);
                self.time = cycle.edge(self.cyc);
            }
            Process::Backlogged => {}
            Process::Batch { count, cycle, .. } => {
                self.n += 1;
                self.cyc += 1;
                self.time = if self.n < count {
                    cycle.edge(self.cyc)
                } else {
                    Time::MAX
                };
            }
        }
        self.size = sizes.draw(&mut self.rng);
    }

    /// A batch source that waited for its window creates its next packet no earlier than
    /// the `at`-th edge of its clock, and the rest one an edge from there.
    pub fn hold_until(&mut self, process: &Process, at: u64) {
        if let Process::Batch { count, cycle, .. } = *process
            && self.n < count
            && at > self.cyc
        {
            self.cyc = at;
            self.time = cycle.edge(at);
        }
    }

    /// Whether a batch source has taken every packet of its batch (never, for the other
    /// processes).
    #[inline]
    pub fn exhausted(&self, process: &Process) -> bool {
        match *process {
            Process::Batch { count, .. } => self.n >= count,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    fn rate(process: Process, horizon: Time) -> f64 {
        let sizes = Sizes::Fixed(1);
        let mut a = Arrivals::new(&process, &sizes, Stream::new(9, Purpose::Arrivals, 0));
        let mut n = 0;
        while a.time < horizon {
            n += 1;
            a.advance(&process, &sizes);
        }
        n as f64 / horizon as f64
    }

    #[test]
    fn processes_hit_their_rates() {
        let h = 2_000_000;
        let b = rate(
            Process::Bernoulli {
                p: 0.1,
                cycle: Clock::from_period(Ratio::int(1)),
            },
            h,
        );
        assert!((b - 0.1).abs() < 0.002, "bernoulli {b}");
        let p = rate(Process::Poisson { mean_gap: 10.0 }, h);
        assert!((p - 0.1).abs() < 0.002, "poisson {p}");
        let q = rate(
            Process::Periodic {
                period: Ratio::new(10, 1),
            },
            h,
        );
        assert!((q - 0.1).abs() < 1e-5, "periodic {q}");
        // p_on 0.4 for a quarter of the time: 0.1 on average.
        let o = rate(
            Process::OnOff {
                p_on: 0.4,
                mean_on: 50.0,
                mean_off: 150.0,
                cycle: Clock::from_period(Ratio::int(1)),
            },
            h * 5,
        );
        assert!((o - 0.1).abs() < 0.004, "on/off {o}");
    }

    #[test]
    fn a_batch_creates_one_packet_a_cycle_then_stops() {
        let sizes = Sizes::Fixed(4);
        let pr = Process::Batch {
            count: 5,
            cycle: Clock::from_period(Ratio::int(1000)),
            window: 0,
        };
        let mut a = Arrivals::new(&pr, &sizes, Stream::new(1, Purpose::Arrivals, 0));
        let mut times = Vec::new();
        while !a.exhausted(&pr) {
            times.push(a.time);
            a.advance(&pr, &sizes);
            if times.len() == 2 {
                // A wait for the window: on from cycle 7 (and never back).
                a.hold_until(&pr, 7);
                a.hold_until(&pr, 3);
            }
        }
        assert_eq!(times, [0, 1000, 7000, 8000, 9000]);
        assert_eq!(a.time, Time::MAX);
        a.hold_until(&pr, 20);
        assert_eq!(a.time, Time::MAX);
    }

    #[test]
    fn periodic_does_not_drift() {
        let sizes = Sizes::Fixed(1);
        let pr = Process::Periodic {
            period: Ratio::new(10_000, 3),
        };
        let mut a = Arrivals::new(&pr, &sizes, Stream::new(1, Purpose::Arrivals, 0));
        let t0 = a.time;
        for _ in 0..3_000 {
            a.advance(&pr, &sizes);
        }
        assert_eq!(a.time - t0, 10_000_000);
    }

    #[test]
    fn weighted_sizes() {
        let s = Sizes::weighted(&[(4, 3.0), (20, 1.0)]).unwrap();
        assert!((s.mean() - 8.0).abs() < 1e-12);
        assert_eq!(s.max(), 20);
        assert!(Sizes::weighted(&[]).is_err());
        // Infinite weights, or finite ones summing past f64, made NaN rates downstream.
        assert!(
            Sizes::weighted(&[(4, f64::INFINITY)])
                .unwrap_err()
                .contains("finite")
        );
        let e = Sizes::weighted(&[(4, 1e308), (2, 1e308)]).unwrap_err();
        assert!(e.contains("sum to inf"), "{e}");
    }
}

//! The search for the highest sustainable ATLAS event rate (the knee of accepted against
//! offered throughput, [`super::atlas`]).
//!
//! A run is asked for at an *attempted* event rate; the events of a Poisson process that fall
//! in its window are a few hundred, so the rate it *realised* (its offered payload over the
//! mean event size) differs by some 5-20 %. Runs are therefore placed by their realised rate:
//! the knee lies between the highest realised rate judged sustainable and the lowest above it
//! judged not, taking the step that agrees with most verdicts (one verdict that noise turned
//! does not move it far). The search steps out from a first guess until it has both sides,
//! then halves the bracket. Each judgement is one run's 95 % tests; the bracket is what the
//! runs allow one to say about the knee.

use super::atlas::{EventShape, Placement};
use super::experiments::{AtlasWindow, Outcome};

/// Stepping factor while the knee is not yet bracketed.
pub const STEP: f64 = 1.25;

/// One search: a placement and an event shape.
#[derive(Clone, Debug)]
pub struct Knee {
    pub placement: Placement,
    pub shape: EventShape,
    /// The search's seed: its `n`-th run has seed [`run_seed`]`(seed, n)`.
    pub seed: u64,
    pub window: AtlasWindow,
    /// First rate to try if nothing is known [kHz].
    pub start: f64,
    /// Runs the search may still make.
    pub runs_left: usize,
    /// Every run: the attempted rate [kHz] and what it measured.
    pub runs: Vec<(f64, Outcome)>,
}

impl Knee {
    pub fn new(
        placement: Placement,
        shape: EventShape,
        seed: u64,
        window: AtlasWindow,
        start: f64,
        runs: usize,
    ) -> Knee {
        Knee {
            placement,
            shape,
            seed,
            window,
            start,
            runs_left: runs,
            runs: Vec::new(),
        }
    }

    /// The event rate a run realised: its offered payload over the mean event size [kHz].
    pub fn realised(&self, o: &Outcome) -> f64 {
        o.offered * 1e6 / self.shape.event_bytes() / 1e3
    }

    /// The runs by realised rate: (realised [kHz], sustainable, index into `runs`).
    fn ordered(&self) -> Vec<(f64, bool, usize)> {
        let mut v: Vec<(f64, bool, usize)> = self
            .runs
            .iter()
            .enumerate()
            .map(|(i, (_, o))| (self.realised(o), o.sustainable(), i))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        v
    }

    /// The bracket: the run of the highest realised rate judged sustainable and the run of
    /// the lowest above it judged not (indices into `runs`), from the step that agrees with
    /// most verdicts (ties: the higher step).
    pub fn bracket(&self) -> (Option<usize>, Option<usize>) {
        let v = self.ordered();
        let wrong = |k: usize| v[..k].iter().filter(|x| !x.1).count() + v[k..].iter().filter(|x| x.1).count();
        let k = (0..=v.len()).rev().min_by_key(|&k| wrong(k)).unwrap_or(0);
        ((k > 0).then(|| v[k - 1].2), v.get(k).map(|x| x.2))
    }

    /// The highest sustainable run: its realised rate [kHz] and outcome.
    pub fn lo(&self) -> Option<(f64, &Outcome)> {
        self.bracket()
            .0
            .map(|i| (self.realised(&self.runs[i].1), &self.runs[i].1))
    }

    /// The lowest unsustainable run above it: its realised rate [kHz].
    pub fn hi(&self) -> Option<f64> {
        self.bracket().1.map(|i| self.realised(&self.runs[i].1))
    }

    /// The rate to attempt next, if the search goes on [kHz].
    pub fn next(&self) -> Option<f64> {
        if self.runs_left == 0 {
            return None;
        }
        Some(match (self.lo(), self.hi()) {
            (None, None) => self.start,
            (Some((l, _)), None) => l * STEP,
            (None, Some(h)) => h / STEP,
            (Some((l, _)), Some(h)) => (l + h) / 2.0,
        })
    }

    /// The seed of the next run.
    pub fn next_seed(&self) -> u64 {
        run_seed(self.seed, self.runs.len())
    }

    /// Takes a run at attempted `rate`.
    pub fn record(&mut self, rate: f64, o: Outcome) {
        self.runs_left = self.runs_left.saturating_sub(1);
        self.runs.push((rate, o));
    }

    /// Takes the runs of a sweep, made with seeds [`run_seed`]`(seed, 0..)` (they do not
    /// count against the search's runs).
    pub fn with_runs(mut self, rates: &[f64], runs: &[Outcome]) -> Knee {
        self.runs.extend(rates.iter().copied().zip(runs.iter().cloned()));
        self
    }
}

/// The seed of the `n`-th run of a search whose seed is `seed`: every run draws its own
/// events, so one unlucky stretch of the event sequence does not shift every rate alike.
pub fn run_seed(seed: u64, n: usize) -> u64 {
    seed.wrapping_add((n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::ieee1355::atlas::Verdict;
    use crate::systems::ieee1355::traffic::Window;

    const W: AtlasWindow = AtlasWindow {
        window: Window {
            warmup: 0,
            measure: 1,
            drain: 0,
        },
        batches: 2,
    };

    /// A run that realised `khz` (10 KB events), sustainable or not.
    fn run(khz: f64, ok: bool) -> Outcome {
        Outcome {
            offered: khz * EventShape::CHOSEN.event_bytes() / 1e3,
            verdict: Some(Verdict {
                surplus: (0.0, 1.0),
                growth: (if ok { 0.0 } else { 2.0 }, 1.0),
                ..Verdict::default()
            }),
            ..Outcome::default()
        }
    }

    fn knee(runs: &[(f64, bool)]) -> Knee {
        let mut k = Knee::new(Placement::Grouped, EventShape::CHOSEN, 1, W, 20.0, 9);
        for &(r, ok) in runs {
            k.record(r, run(r, ok));
        }
        k
    }

    #[test]
    fn a_knee_search_brackets_then_bisects() {
        // The true knee at 33 kHz, each run realising what it attempted; start at 20.
        let mut k = knee(&[]);
        k.runs_left = 6;
        while let Some(r) = k.next() {
            k.record(r, run(r, r <= 33.0));
        }
        let (lo, hi) = (k.lo().unwrap().0, k.hi().unwrap());
        assert!(lo <= 33.0 && 33.0 < hi, "{lo} {hi}");
        // 20, 25, 31.25, 39.06 (not), then two halvings of 31.25..39.06.
        assert_eq!(k.runs.len(), 6);
        assert!(hi - lo < 2.0, "{lo} {hi}");
    }

    #[test]
    fn runs_are_placed_by_the_rate_they_realised() {
        // The step that fits most verdicts: 10 and 20 sustainable, 30 not, 40 sustainable,
        // 50 and 60 not: the steps after 20 and after 40 each get one wrong; the higher wins.
        let b = |v: &[(f64, bool)]| {
            let k = knee(v);
            (k.lo().map(|l| l.0), k.hi())
        };
        let t = |r: f64| (r, true);
        let f = |r: f64| (r, false);
        assert_eq!(
            b(&[t(10.), t(20.), f(30.), t(40.), f(50.), f(60.)]),
            (Some(40.), Some(50.))
        );
        assert_eq!(
            b(&[t(10.), f(20.), t(30.), t(40.), f(50.)]),
            (Some(40.), Some(50.))
        );
        assert_eq!(
            b(&[t(10.), t(20.), f(30.), f(40.), t(50.), f(60.)]),
            (Some(20.), Some(30.))
        );
        assert_eq!(b(&[f(10.), f(20.)]), (None, Some(10.)));
        assert_eq!(b(&[t(10.), t(20.)]), (Some(20.), None));
        // Order of running does not matter, only the realised rates.
        assert_eq!(b(&[f(50.), t(20.), t(40.)]), (Some(40.), Some(50.)));
        assert_eq!(knee(&[t(10.), t(20.), f(30.)]).next(), Some(25.0));
        // A run that attempted 40 kHz but realised 32 sits at 32.
        let mut k = knee(&[]);
        k.record(40.0, run(32.0, true));
        k.record(50.0, run(41.0, false));
        assert_eq!((k.lo().map(|l| l.0), k.hi()), (Some(32.0), Some(41.0)));
    }
}

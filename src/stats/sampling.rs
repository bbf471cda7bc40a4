//! BookSim2's sampling (`sim.sampling = "booksim"`): how long a run warms up and how long it
//! measures, decided as the run goes by BookSim2's convergence test, so that the averages
//! reef prints are over the same packets as BookSim2's.
//!
//! The algorithm is `TrafficManager::_SingleSim` of booksim/booksim2 (`trafficmanager.cpp`,
//! commit `28f43299`), read line by line (docs/booksim.md, "Sampling"):
//! - the run goes in sample periods of `sample_period` cycles; after each, the average
//!   packet latency of the packets delivered since the statistics were last cleared and the
//!   accepted throughput since then (flits a node a cycle) are compared with those after
//!   the previous period: the change is `|cur − prev| / cur`;
//! - warm-up: the statistics are cleared before every even period (0, 2, 4, …) and count
//!   every packet delivered; it ends after `warmup_periods` periods, or, with
//!   `warmup_periods = 0`, after the first period whose two changes are within
//!   `warmup_thres` and `acc_warmup_thres`; the statistics are cleared then, and from then
//!   on count only the packets created after the clear (measured packets);
//! - measurement: a period whose changes are within `stopping_thres` and
//!   `acc_stopping_thres` converges, any other sets the count back to 0; three in a row end
//!   the sampling, and so does `max_samples` periods in all (warm-up included), which
//!   BookSim2 accepts as silently as convergence (reef reports it);
//! - after every period, the average age of everything delivered since the clear and of
//!   every flit in flight (in the network or at its source) above `latency_thres` cycles
//!   ends the run as unstable (BookSim2: "Simulation unstable"); so does a warm-up that has
//!   not ended after `max_samples` periods; and, every 1,000 cycles while the measured
//!   packets drain, the same average above `latency_thres`.
//!
//! BookSim2's throughput simulation (`sim_type = throughput`, `_measure_latency` false)
//! tests only the accepted throughput's change, never `latency_thres` ("throughput will just
//! continue"), and does not drain the measured packets under load: its sources stop when
//! the sampling ends and the network empties (`Run`), the measured packets' latencies
//! counted as they come out. reef runs it as [`Sampling::latency`] false, its sources
//! stopping at the end of the window (`sim.drain = "all"`).
//!
//! A negative threshold switches its test off, as in BookSim2. reef counts a packet as
//! measured by its creation time (BookSim2 by the cycle it reaches the front of its source
//! queue, which differs only for packets queued across the clear) and accepted flits at the
//! packet's tail (BookSim2 flit by flit).

use crate::time::Time;

/// BookSim2's sampling parameters (its names; times in ps).
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// One sample period [ps].
    pub period: Time,
    /// Warm-up periods; 0: until the warm-up test passes.
    pub warmup_periods: u32,
    /// Periods in all, warm-up included, at most.
    pub max_samples: u32,
    /// Average age above which the run is unstable [ps]; `None`: no such test.
    pub latency_thres: Option<Time>,
    pub warmup_thres: f64,
    pub acc_warmup_thres: f64,
    pub stopping_thres: f64,
    pub acc_stopping_thres: f64,
    /// BookSim2's latency simulation (`sim_type = latency`); `false`: its throughput one,
    /// which tests neither the latency's change nor `latency_thres`.
    pub latency: bool,
}

impl Sampling {
    /// BookSim2's defaults (`booksim_config.cpp`) for a cycle of `cycle` ps.
    pub fn booksim_defaults(cycle: Time) -> Sampling {
        Sampling {
            period: 1000 * cycle,
            warmup_periods: 3,
            max_samples: 10,
            latency_thres: Some(500 * cycle),
            warmup_thres: 0.05,
            acc_warmup_thres: 0.05,
            stopping_thres: 0.05,
            acc_stopping_thres: 0.05,
            latency: true,
        }
    }
}

/// Where the sampling stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    WarmingUp,
    Running,
    /// Sampling over: the measured packets drain.
    Draining,
    Done,
}

/// How the sampling ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SamplingOutcome {
    /// Sample periods of warm-up.
    pub warmup_periods: u32,
    /// Sample periods measured (after the warm-up).
    pub measured_periods: u32,
    /// Three periods in a row passed the convergence test (`false`: `max_samples` ended the
    /// sampling first, or the run was unstable).
    pub converged: bool,
    /// Why BookSim2 would call the run unstable (it prints no averages then).
    pub unstable: Option<String>,
}

/// What the engine is to do after a sample period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go on sampling.
    Continue,
    /// The warm-up ended now: packets created from now on are measured.
    WarmedUp,
    /// The sampling ended now: packets created from now on are not measured; the measured
    /// ones drain.
    Measured,
    /// Unstable: stop.
    Unstable,
}

/// BookSim2's sampling as a run goes: fed every delivered and injected packet and called at
/// every period's end ([`Sampler::period_end`]).
#[derive(Clone, Debug)]
pub struct Sampler {
    p: Sampling,
    nodes: f64,
    phase: Phase,
    /// Packets in the statistics since the last clear, and their latencies [ps].
    count: u64,
    sum: u128,
    /// Flits delivered since the last clear.
    accepted: u64,
    /// The last clear [ps].
    reset: Time,
    /// Flits injected and not delivered, and the sum of their creation times [ps].
    in_flight: u64,
    in_flight_created: u128,
    prev_latency: f64,
    prev_accepted: f64,
    converged: u32,
    phases: u32,
    clear_last: bool,
    warm: u32,
    /// Sample periods run, once the sampling is over.
    ran: u32,
    /// The end of the sampling [ps], once known.
    drain_from: Time,
    next_drain_check: Time,
    cycle: Time,
    unstable: Option<String>,
}

impl Sampler {
    /// A sampler for a run on `nodes` nodes with cycles of `cycle` ps.
    pub fn new(p: Sampling, nodes: usize, cycle: Time) -> Sampler {
        Sampler {
            p,
            nodes: nodes.max(1) as f64,
            phase: Phase::WarmingUp,
            count: 0,
            sum: 0,
            accepted: 0,
            reset: 0,
            in_flight: 0,
            in_flight_created: 0,
            prev_latency: 0.0,
            prev_accepted: 0.0,
            converged: 0,
            phases: 0,
            clear_last: false,
            warm: 0,
            ran: 0,
            drain_from: Time::MAX,
            next_drain_check: Time::MAX,
            cycle: cycle.max(1),
            unstable: None,
        }
    }

    /// The end of the next sample period [ps] (`Time::MAX` once sampling is over).
    pub fn next_period_end(&self) -> Time {
        match self.phase {
            Phase::WarmingUp | Phase::Running => (self.phases as Time + 1) * self.p.period,
            Phase::Draining => self.next_drain_check,
            Phase::Done => Time::MAX,
        }
    }

    /// A packet of `len` flits created at `created` starts into the network.
    #[inline]
    pub fn injected(&mut self, created: Time, len: u32) {
        self.in_flight += len as u64;
        self.in_flight_created += created as u128 * len as u128;
    }

    /// A packet of `len` flits created at `created` is delivered at `now`.
    #[inline]
    pub fn delivered(&mut self, created: Time, now: Time, len: u32) {
        self.in_flight -= len as u64;
        self.in_flight_created -= created as u128 * len as u128;
        match self.phase {
            Phase::WarmingUp => {
                self.accepted += len as u64;
                self.count += 1;
                self.sum += (now - created) as u128;
            }
            Phase::Running => {
                self.accepted += len as u64;
                if created >= self.reset {
                    self.count += 1;
                    self.sum += (now - created) as u128;
                }
            }
            Phase::Draining => {
                if created >= self.reset && created < self.drain_from {
                    self.count += 1;
                    self.sum += (now - created) as u128;
                }
            }
            Phase::Done => {}
        }
    }

    fn clear(&mut self, now: Time) {
        self.count = 0;
        self.sum = 0;
        self.accepted = 0;
        self.reset = now;
    }

    /// The average age [ps] of what the statistics hold and of every flit in flight, which
    /// BookSim2 holds to `latency_thres`.
    fn age(&self, now: Time) -> f64 {
        let ages = self.in_flight as u128 * now as u128 - self.in_flight_created;
        (self.sum + ages) as f64 / (self.count + self.in_flight) as f64
    }

    fn too_old(&mut self, now: Time) -> bool {
        let Some(t) = self.p.latency_thres.filter(|_| self.p.latency) else {
            return false;
        };
        let age = self.age(now);
        if age > t as f64 {
            self.unstable = Some(format!(
                "average latency {:.1} cycles (packets delivered and flits in flight) exceeded \
                 BookSim2's latency_thres of {} cycles at cycle {}",
                age / self.cycle as f64,
                t / self.cycle,
                now / self.cycle
            ));
            self.phase = Phase::Done;
            return true;
        }
        false
    }

    /// The measured packets have drained: the run may end.
    pub fn drained(&mut self) {
        self.phase = Phase::Done;
    }

    /// The sample period (or, draining, the 1,000 cycles) ending at `now` is over.
    pub fn period_end(&mut self, now: Time) -> Verdict {
        match self.phase {
            Phase::Done => return Verdict::Continue,
            Phase::Draining => {
                self.next_drain_check += 1000 * self.cycle;
                return if self.too_old(now) {
                    Verdict::Unstable
                } else {
                    Verdict::Continue
                };
            }
            Phase::WarmingUp | Phase::Running => {}
        }
        let warming = self.phase == Phase::WarmingUp;
        let cur_latency = self.sum as f64 / self.count as f64;
        let cur_accepted = self.accepted as f64 / ((now - self.reset) / self.cycle) as f64 / self.nodes;
        let latency_change = ((cur_latency - self.prev_latency) / cur_latency).abs();
        self.prev_latency = cur_latency;
        let accepted_change = ((cur_accepted - self.prev_accepted) / cur_accepted).abs();
        self.prev_accepted = cur_accepted;
        // (As BookSim2 compares: a NaN change, from an empty period, passes.)
        let (lt, at) = if warming {
            (self.p.warmup_thres, self.p.acc_warmup_thres)
        } else {
            (self.p.stopping_thres, self.p.acc_stopping_thres)
        };
        let exceeds = |thres: f64, change: f64| thres >= 0.0 && change > thres;
        // (A throughput simulation tests the accepted throughput only.)
        let latency_moved = self.p.latency && exceeds(lt, latency_change);
        let passes = !latency_moved && !exceeds(at, accepted_change);
        if self.too_old(now) {
            self.ran = self.phases + 1;
            return Verdict::Unstable;
        }
        let mut verdict = Verdict::Continue;
        if warming {
            let done = if self.p.warmup_periods > 0 {
                self.phases + 1 >= self.p.warmup_periods
            } else {
                passes
            };
            if done {
                self.clear_last = true;
                self.phase = Phase::Running;
                self.warm = self.phases + 1;
                verdict = Verdict::WarmedUp;
            }
        } else if passes {
            self.converged += 1;
        } else {
            self.converged = 0;
        }
        self.phases += 1;
        let more = self.phases < self.p.max_samples && (self.phase != Phase::Running || self.converged < 3);
        if more {
            if self.clear_last || (self.phase == Phase::WarmingUp && self.phases.is_multiple_of(2)) {
                self.clear_last = false;
                self.clear(now);
            }
            return verdict;
        }
        if self.phase != Phase::Running {
            self.unstable = Some(format!(
                "the warm-up did not settle within max_samples = {} sample periods",
                self.p.max_samples
            ));
            self.phase = Phase::Done;
            self.ran = self.phases;
            return Verdict::Unstable;
        }
        self.ran = self.phases;
        // (A warm-up that ended with the last period leaves nothing measured: the window
        // is the reset instant, empty.)
        if verdict == Verdict::WarmedUp {
            self.clear(now);
        }
        self.phase = Phase::Draining;
        self.drain_from = now;
        self.next_drain_check = now + 1000 * self.cycle;
        Verdict::Measured
    }

    /// Where the measurement window begins [ps] (the last clear).
    pub fn window_start(&self) -> Time {
        self.reset
    }

    /// How the sampling went, for the result.
    pub fn outcome(&self) -> SamplingOutcome {
        let ran = match self.phase {
            Phase::WarmingUp | Phase::Running => self.phases,
            Phase::Draining | Phase::Done => self.ran,
        };
        // (A warm-up that never ended was all the run.)
        let warm = if self.warm > 0 { self.warm.min(ran) } else { ran };
        SamplingOutcome {
            warmup_periods: warm,
            measured_periods: ran - warm,
            converged: self.converged >= 3 && self.unstable.is_none(),
            unstable: self.unstable.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Time = 1000;

    fn params(warm: u32, max: u32) -> Sampling {
        Sampling {
            period: 100 * C,
            warmup_periods: warm,
            max_samples: max,
            ..Sampling::booksim_defaults(C)
        }
    }

    /// Feeds a period of `n` packets, each of one flit and `lat` cycles old at delivery,
    /// delivered at the period's end, and returns the verdict.
    fn period(s: &mut Sampler, n: u64, lat: Time) -> Verdict {
        let end = s.next_period_end();
        for _ in 0..n {
            s.injected(end - lat * C, 1);
            s.delivered(end - lat * C, end, 1);
        }
        s.period_end(end)
    }

    #[test]
    fn a_steady_series_converges_after_three_periods_of_measurement() {
        let mut s = Sampler::new(params(3, 10), 1, C);
        let v: Vec<Verdict> = (0..6).map(|_| period(&mut s, 50, 20)).collect();
        use Verdict::*;
        assert_eq!(v, [Continue, Continue, WarmedUp, Continue, Continue, Measured]);
        let o = s.outcome();
        assert_eq!((o.warmup_periods, o.measured_periods, o.converged), (3, 3, true));
        assert_eq!(o.unstable, None);
        assert_eq!(s.window_start(), 300 * C);
    }

    #[test]
    fn a_climbing_latency_does_not_converge_before_max_samples() {
        // Measured packets are those created after the clear: here all of them are.
        let mut s = Sampler::new(params(3, 10), 1, C);
        let mut last = Verdict::Continue;
        for k in 0..10 {
            // Each period's latency 20 % above the last's: the cumulative average moves
            // by more than 5 % every period.
            let lat = (20.0 * 1.2f64.powi(k)) as Time;
            let end = s.next_period_end();
            for _ in 0..50 {
                let created = end.saturating_sub(lat * C).max(s.window_start());
                s.injected(created, 1);
                s.delivered(created, end, 1);
            }
            last = s.period_end(end);
            if last != Verdict::Continue && last != Verdict::WarmedUp {
                break;
            }
        }
        assert_eq!(last, Verdict::Measured);
        let o = s.outcome();
        assert_eq!((o.warmup_periods, o.measured_periods, o.converged), (3, 7, false));
        assert_eq!(o.unstable, None);
    }

    #[test]
    fn flits_waiting_past_the_latency_threshold_make_the_run_unstable() {
        let mut s = Sampler::new(params(3, 10), 1, C);
        assert_eq!(period(&mut s, 1, 20), Verdict::Continue);
        // 100 flits created at 0 and never delivered, beside one packet of 20 cycles a
        // period: at 500 cycles (20 + 100·500)/101 = 495.2, at 600 (40 + 100·600)/102 =
        // 588.6 > 500, before the third converging period would end the sampling.
        for _ in 0..100 {
            s.injected(0, 1);
        }
        let v: Vec<Verdict> = (0..5).map(|_| period(&mut s, 1, 20)).collect();
        use Verdict::*;
        assert_eq!(v, [Continue, WarmedUp, Continue, Continue, Unstable]);
        let o = s.outcome();
        assert_eq!((o.warmup_periods, o.measured_periods, o.converged), (3, 3, false));
        assert!(o.unstable.unwrap().contains("latency_thres of 500 cycles"));
    }

    #[test]
    fn a_warm_up_by_the_test_ends_at_the_first_settled_period() {
        let mut s = Sampler::new(params(0, 20), 1, C);
        // Latency 20, then 40 (changes 100 %), then 40 again: settled at the third.
        // Latencies 20, 60, 80, 80 cycles; the statistics are cleared before periods 0
        // and 2: averages 20, 40, 80, 80, changes 100 %, 50 %, 50 %, 0.
        assert_eq!(period(&mut s, 50, 20), Verdict::Continue);
        assert_eq!(period(&mut s, 50, 60), Verdict::Continue);
        assert_eq!(period(&mut s, 50, 80), Verdict::Continue);
        assert_eq!(period(&mut s, 50, 80), Verdict::WarmedUp);
        assert_eq!(s.outcome().warmup_periods, 4);
    }

    #[test]
    fn a_warm_up_that_never_settles_is_unstable() {
        let mut s = Sampler::new(params(0, 4), 1, C);
        let mut v = Verdict::Continue;
        for k in 0..4 {
            v = period(&mut s, 50, 10 + 30 * k);
        }
        assert_eq!(v, Verdict::Unstable);
        assert!(s.outcome().unstable.unwrap().contains("did not settle"));
    }

    /// A throughput simulation tests only the accepted throughput: a latency that climbs
    /// every period still converges once the throughput is steady, and flits far older
    /// than `latency_thres` do not make it unstable ("throughput will just continue").
    #[test]
    fn a_throughput_simulation_tests_only_the_accepted_throughput() {
        let mut s = Sampler::new(
            Sampling {
                latency: false,
                ..params(3, 10)
            },
            1,
            C,
        );
        for _ in 0..100 {
            s.injected(0, 1);
        }
        let mut v = Vec::new();
        for k in 0..6 {
            v.push(period(&mut s, 50, 20 * (k + 1)));
        }
        use Verdict::*;
        assert_eq!(v, [Continue, Continue, WarmedUp, Continue, Continue, Measured]);
        let o = s.outcome();
        assert_eq!((o.warmup_periods, o.measured_periods, o.converged), (3, 3, true));
        assert_eq!(o.unstable, None);
        // Draining, the old flits are still not too old.
        let end = s.next_period_end();
        assert_eq!(s.period_end(end), Continue);
    }
}

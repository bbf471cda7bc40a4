//! The measurement window when BookSim2's sampling decides it as the run goes
//! (`sim.sampling = "booksim"`, [`crate::stats::sampling`]), counted in the one run that
//! decides it.
//!
//! The window starts and ends on sample-period boundaries, and each is decided at its
//! boundary, before anything at or after it happens. Until the end is decided it is
//! provisionally the next boundary (`Sim::me`), and what is counted against the window is
//! counted up to there, exactly as a run with that end fixed would count it. A few counts
//! are made ahead of their time: a channel's busy time from a send that lasts past the
//! boundary, and the landing times of a train's flits (or, in the express engine, of a
//! flit as it is sent). Their parts at or past the boundary are kept aside
//! ([`Deferred`]) and counted at the boundary, once it is known whether the window goes on
//! there. The batches of the window are counted in sub-batches of a sample period's
//! `1/n` (`n` the batches asked for), which are summed into `n` equal batches once the end
//! is known: a window of `m` periods has `m·n` sub-batches, and sub-batch `j` falls in
//! batch `⌊j/m⌋`, which is the batch `⌊(t − start)·n / (m·period)⌋` a fixed window of the
//! same span gives. So the run counts what a run of the decided window would: the same
//! numbers, bit for bit, in one run instead of two.

use super::*;

/// A count made ahead of its time, past the window's provisional end.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Deferred {
    /// Channel `c` (the general engine's number) is busy from `from` to `to` [ps].
    Busy { c: u32, from: Time, to: Time },
    /// A flit lands at host `h` at `t` [ps].
    Flit { h: u32, t: Time },
}

impl Sim<'_> {
    /// Starts BookSim2's sampling for this run: the window undecided, its start
    /// provisionally after the last period (or after the warm-up periods, if fixed), its
    /// end the first period's end.
    pub(super) fn start_sampling(&mut self, p: crate::stats::sampling::Sampling) {
        let last = p.period.saturating_mul(p.max_samples as Time);
        self.ms = if p.warmup_periods > 0 {
            p.period.saturating_mul(p.warmup_periods as Time).min(last)
        } else {
            last
        };
        self.me = p.period.min(last);
        self.next_sample = p.period;
        self.sub_period = p.period.max(1);
        self.n_batches = self.c.batches.len().max(1);
        // (One sub-batch to start with; `window_moved` adds them as the window grows.)
        self.c.batches = vec![Batch::default()];
        self.window_open = true;
        self.defer_at = self.me;
        let cycle = self.spec.params.cycle.floor().max(1);
        self.sampler = Some(Box::new(crate::stats::sampling::Sampler::new(
            p,
            self.hosts.len(),
            cycle,
        )));
    }

    /// Channel `c` is busy from `from` to `to`: its time inside the window is counted, and
    /// its part past the window's provisional end is kept aside.
    #[inline]
    pub(crate) fn count_busy(&mut self, c: u32, from: Time, to: Time) {
        self.chans[c as usize].busy += to.min(self.me).saturating_sub(from.max(self.ms));
        if to > self.defer_at {
            self.defer_busy(c, from, to);
        }
    }

    /// A flit lands at host `h` at `t`: counted for the host and its batch if inside the
    /// window, kept aside if past its provisional end.
    #[inline]
    pub(crate) fn count_landing(&mut self, h: u32, t: Time) {
        if t >= self.ms && t < self.me {
            self.c.flits_window[h as usize] += 1;
            let b = self.batch_of(t);
            self.c.batches[b].flits += 1;
        } else if t >= self.defer_at {
            self.defer_flit(h, t);
        }
    }

    /// Channel `c` is busy from `from` to `to`, past the window's provisional end: its part
    /// from there is counted when the end is decided.
    #[cold]
    #[inline(never)]
    pub(crate) fn defer_busy(&mut self, c: u32, from: Time, to: Time) {
        let from = from.max(self.me);
        self.deferred.push(Deferred::Busy { c, from, to });
    }

    /// A flit lands at host `h` at `t`, past the window's provisional end.
    #[cold]
    #[inline(never)]
    pub(crate) fn defer_flit(&mut self, h: u32, t: Time) {
        self.deferred.push(Deferred::Flit { h, t });
    }

    /// The window's start or end moved at a period's boundary (`window_open`: its end is
    /// still provisional): the sub-batches now cover it, and what was counted ahead is
    /// counted as far as the window goes now.
    pub(super) fn window_moved(&mut self) {
        self.defer_at = if self.window_open { self.me } else { Time::MAX };
        let subs = self.sub_batches();
        if self.c.batches.len() < subs {
            self.c.batches.resize(subs, Batch::default());
        }
        // Counted again as far as the window goes now; what lies past it is kept aside again.
        for d in std::mem::take(&mut self.deferred) {
            match d {
                Deferred::Busy { c, from, to } => self.count_busy(c, from, to),
                Deferred::Flit { h, t } => self.count_landing(h, t),
            }
        }
    }

    /// The sub-batches that cover the window as far as it goes now.
    fn sub_batches(&self) -> usize {
        let span = self.me.saturating_sub(self.ms) as u128;
        (span * self.n_batches as u128).div_ceil(self.sub_period as u128) as usize
    }

    /// The window's end as far as is known: while BookSim2's sampling has not decided it,
    /// the latest it can be (for progress reports).
    pub(super) fn window_end_ahead(&self) -> Time {
        match &self.spec.params.sampling {
            Some(p) if self.window_open => p.period.saturating_mul(p.max_samples as Time),
            _ => self.me,
        }
    }

    /// After the run: the sub-batches summed into the batches asked for, and the window
    /// closed (a run stopped before its warm-up ended measured nothing).
    pub(super) fn close_sampling(&mut self) {
        self.window_open = false;
        self.defer_at = Time::MAX;
        self.deferred.clear();
        if self.ms > self.me {
            self.me = self.ms;
        }
        let n = self.n_batches;
        let subs = self.sub_batches().min(self.c.batches.len());
        let mut out = vec![Batch::default(); n];
        for (j, b) in self.c.batches.iter().take(subs).enumerate() {
            let o = &mut out[j * n / subs];
            o.packet_sum += b.packet_sum;
            o.network_sum += b.network_sum;
            o.packets += b.packets;
            o.flits += b.flits;
        }
        self.c.batches = out;
        self.sub_period = 0;
        if let Some(s) = self.sampler.as_ref() {
            self.sampling = Some(s.outcome());
        }
    }
}

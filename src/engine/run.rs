//! The run loop: each instant's events applied, then each component that something
//! happened to evaluated; agents consulted, the watchdog's deadlock search, the
//! measurement window, sampling and the drain, and the end-of-run accounting.

use super::*;

impl<'a> Sim<'a> {
    #[inline(always)]
    pub(super) fn apply(&mut self, e: u64) -> Res<()> {
        let kind = e >> 61;
        let id = ((e >> 32) as u32) & MAX_ID;
        match kind {
            K_FLIT => {
                // The first flit of a train lands now; `rem` more follow it, each one unit
                // of its own later. All go into the buffer now, each marked with its arrival.
                let flit = e as u32;
                let k = ((e >> 57) & 15) as u32 + 1;
                let ends_tail = (e >> 56) & 1 != 0;
                let node = self.vcs[id as usize].node;
                if self.check {
                    self.inflight[id as usize] -= k;
                }
                if e & EV_STRIDE2 != 0 {
                    // Only switches receive interleaved trains (see `send_pair`).
                    let ft = self.tm(self.vcs[id as usize].chan).flit_time;
                    self.receive_at::<true>(id, flit, k, ends_tail, self.now, 2 * ft)
                } else if (node as usize) < self.sws.len() {
                    self.switch_receive(id, flit, k, ends_tail)
                } else {
                    self.host_receive(id, flit, k, ends_tail)
                }
            }
            K_CREDIT => {
                let v = &self.vcs[id as usize];
                let (owner, c) = (v.owner, v.chan);
                if e as u32 == crate::link::ds::TOKENS_DUE {
                    self.tokens_due(c);
                    return Ok(());
                }
                let ch = &self.chans[c as usize];
                let (src, port) = (ch.src, ch.src_port);
                if (src as usize) < self.sws.len() {
                    self.switch_credit(src, port, owner);
                } else {
                    self.mark_dirty(src);
                }
                Ok(())
            }
            K_TXFREE => {
                let ch = &self.chans[id as usize];
                let (src, port) = (ch.src, ch.src_port);
                if (src as usize) < self.sws.len() {
                    let sw = &self.sws[src as usize];
                    let base = (sw.bits_base + sw.words + sw.pwords) as usize;
                    set_bit(&mut self.bits, base, port as usize);
                    if self.vc_alloc != crate::fabric::VcAllocator::Greedy {
                        // A separable VC allocator looks at the output again (see
                        // `switch::vc_alloc`).
                        let vb = (sw.bits_base + sw.words) as usize;
                        set_bit(&mut self.bits, vb, port as usize);
                    }
                }
                self.mark_dirty(src);
                Ok(())
            }
            K_ROUTE => {
                self.route_timer_done(id, e as u32);
                Ok(())
            }
            K_TAILGONE => {
                self.held_due(id);
                Ok(())
            }
            K_DELIVER => self.deliver_and_wake(e as u32, e & EV_PAID != 0),
            K_TIMER => {
                let slot = e as u32;
                let token = self.tokens[slot as usize];
                self.free_tokens.push(slot);
                self.notes.push((agent::Note::Timer { host: id, token }, None));
                Ok(())
            }
            K_GEN => {
                let h = &mut self.hosts[id as usize];
                h.gen_at = Time::MAX;
                let node = h.node;
                self.mark_dirty(node);
                Ok(())
            }
            _ => Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!("unknown event kind {kind}"),
            })),
        }
    }

    #[inline(always)]
    pub(super) fn eval(&mut self, node: u32) -> Res<()> {
        if (node as usize) < self.sws.len() {
            self.eval_switch(node as usize)
        } else {
            self.eval_host(self.node_host[node as usize] as usize)
        }
    }

    /// Prefetches the front flits of the input VCs switch `s` will route.
    #[inline]
    pub(super) fn prefetch_fronts(&self, s: usize) {
        let sw = &self.sws[s];
        let mut word = self.bits[sw.bits_base as usize];
        while word != 0 {
            let l = word.trailing_zeros();
            word &= word - 1;
            let v = &self.vcs[self.sw_in[(sw.in_base + l) as usize] as usize];
            self.ring.prefetch((v.buf + (v.head & v.mask)) as usize);
            // Its own channel, for the credits its flits send back.
            self.chans.prefetch(v.chan as usize);
            if v.flags & F_ROUTED != 0 && v.want_port != u16::MAX {
                // Routed ahead: the output it will ask for.
                let port = &self.ports[(sw.port_base + v.want_port as u32) as usize];
                if port.out != NONE {
                    let o = (port.vc_base + v.want_lo as u32) as usize;
                    self.vcs.prefetch(o);
                    self.held.prefetch(o);
                    self.chans.prefetch(port.out as usize);
                }
            }
        }
    }

    /// Runs to the end of the measurement window and the drain, or until a deadlock stops
    /// the network. `progress` is called now and then.
    pub fn run(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<RunOutcome, SimError> {
        if let Some(p) = self.spec.params.sampling.clone()
            && self.sampler.is_none()
            && self.sampling.is_none()
        {
            // BookSim2's sampling decides the window as the network goes (see `window`).
            self.start_sampling(p);
            let r = match self.run_express(progress) {
                Some(r) => r,
                None => self.run_inner(&mut agent::NoAgent, progress),
            };
            self.close_sampling();
            return r.map_err(|e| *e);
        }
        if let Some(r) = self.run_express(progress) {
            return r.map_err(|e| *e);
        }
        self.run_inner(&mut agent::NoAgent, progress).map_err(|e| *e)
    }

    /// Whether Ctrl-C ([`Sim::interruptible`]) or [`Sim::cancel`] asks the run to stop
    /// (read at its progress reports only).
    pub(crate) fn stop_asked(&self) -> bool {
        self.cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            || (self.interruptible && crate::interrupt::check())
    }

    /// As [`Sim::run`], with `agent` playing the hosts' part (see [`agent`]).
    pub fn run_with(
        &mut self,
        agent: &mut dyn agent::Agent,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunOutcome, SimError> {
        self.run_inner(agent, progress).map_err(|e| *e)
    }

    /// Lets every node something happened to at this instant decide what to do, in the
    /// order they were touched (which does not change any result).
    pub(super) fn eval_dirty(&mut self) -> Res<()> {
        let mut k = 0;
        let nsw = self.sws.len();
        while k < self.dirty.len() {
            // Switches a little ahead are brought into the cache while this one is
            // evaluated, in two stages, the second needing the first: bits and ports two
            // ahead; the heads to route, their flits and, for heads routed ahead, their
            // outputs one ahead. (Two more stages, the switch records four ahead and the
            // heads and send channels two ahead, cost more instructions than they saved:
            // 8×8 mesh +4 %, torus +1 %, 32×32 mesh even without them.)
            if let Some(&m) = self.dirty.get(k + 2)
                && (m as usize) < nsw
            {
                let sw = &self.sws[m as usize];
                self.bits.prefetch(sw.bits_base as usize);
                self.ports.prefetch(sw.port_base as usize);
                self.ports
                    .prefetch((sw.port_base + sw.n_ports.saturating_sub(1)) as usize);
            }
            if let Some(&m) = self.dirty.get(k + 1)
                && (m as usize) < nsw
            {
                self.prefetch_fronts(m as usize);
            }
            let n = self.dirty[k];
            self.eval(n)?;
            k += 1;
        }
        self.dirty.clear();
        if !self.fct_due.is_empty() {
            self.flush_tokens();
        }
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Hands the agent what happened this instant, in a fixed order, and lets the hosts act
    /// on what it sent, until nothing more happens at this instant.
    pub(super) fn consult(&mut self, agent: &mut dyn agent::Agent) -> Res<()> {
        while !self.notes.is_empty() {
            let mut notes = std::mem::take(&mut self.notes);
            notes.sort_by_key(|n| n.0);
            for (note, d) in notes.drain(..) {
                let mut ctl = agent::Ctl { sim: self };
                match (note, d) {
                    (agent::Note::Delivered { .. }, Some(d)) => agent.delivered(&mut ctl, &d),
                    (agent::Note::Timer { host, token }, _) => agent.timer(&mut ctl, host, token),
                    (agent::Note::Idle { host }, _) => agent.idle(&mut ctl, host),
                    _ => {}
                }
            }
            if self.notes.is_empty() {
                self.notes = notes;
            }
            self.eval_dirty()?;
        }
        Ok(())
    }

    pub(super) fn run_inner(
        &mut self,
        agent: &mut dyn agent::Agent,
        progress: &mut dyn FnMut(Progress),
    ) -> Res<RunOutcome> {
        let wall = std::time::Instant::now();
        self.step += 1;
        agent.start(&mut agent::Ctl { sim: self });
        self.eval_dirty()?;
        for h in 0..self.hosts.len() {
            if self.hosts[h].active {
                let t = self.next_ready(h);
                self.hosts[h].gen_at = t;
                self.q.push_at(self.now, t, ev(K_GEN, h as u32, 0));
            }
        }
        let wd = self.spec.params.watchdog.max(1);
        // The watchdog looks on a fixed grid of half periods, each time as of the grid point
        // just passed (nothing happened between it and the event that brought the run past
        // it): trains, which skip events, then look at the same instants as flit by flit.
        let half = (wd / 2).max(1);
        let mut next_watch = half;
        let mut finalized = false;
        let mut drain_failed = false;
        let mut deadlock = None;
        let mut interrupted = false;
        let mut iter = 0u64;
        while let Some(t) = self.q.next_time() {
            if self.ends_before(t, &mut finalized, &mut drain_failed) {
                break;
            }
            if t >= next_watch {
                let g = t - t % half;
                next_watch = g + half;
                self.now = g;
                if self.check {
                    self.check_credits()?;
                }
                if let Some(d) = self.find_deadlock(wd) {
                    deadlock = Some(d);
                    // As of `g`, before anything at it: nothing placed there on is counted.
                    (self.end, self.end_open) = (g, true);
                    break;
                }
            }
            self.now = t;
            self.step += 1;
            if self.reverse_order {
                let mut evs = std::mem::take(&mut self.scratch_events);
                while let Some(e) = self.q.pop_at(t) {
                    evs.push(e);
                }
                for &e in evs.iter().rev() {
                    self.c.events += 1;
                    self.apply(e)?;
                }
                evs.clear();
                self.scratch_events = evs;
                self.dirty.reverse();
            } else {
                // Events pushed while applying are always later than `t`, so one pass over
                // the classes empties the instant.
                let mut k = 0;
                while let Some(c) = self.q.due_class_from(k) {
                    while let Some(e) = self.q.pop_class(c, t) {
                        self.c.events += 1;
                        self.apply(e)?;
                    }
                    k = c + 1;
                }
                while let Some(e) = self.q.pop_heap(t) {
                    self.c.events += 1;
                    self.apply(e)?;
                }
            }
            self.eval_dirty()?;
            if !self.notes.is_empty() {
                self.consult(agent)?;
            }
            if self.stop {
                self.end = self.now;
                break;
            }
            iter += 1;
            if iter & 0x3FFF == 0 {
                progress(Progress {
                    now: self.now,
                    window_end: self.window_end_ahead(),
                    events: self.c.events,
                    delivered: self.c.packets_delivered,
                });
                if self.stop_asked() {
                    interrupted = true;
                    self.end = self.now;
                    break;
                }
            }
        }
        if deadlock.is_none() && !interrupted && self.q.is_empty() && self.vcs.iter().any(|v| v.len > 0) {
            // Nothing can ever happen again, yet flits are inside: every one of them waits.
            // The network stopped when its last flit landed; the last event (a credit, a
            // wake-up that found nothing to do) may come later, and trains, which skip
            // events, reach it sooner: the deadlock and the run's end are dated by that flit.
            let last_landed = self
                .chans
                .iter()
                .filter(|ch| ch.tr_k > 0)
                .map(|ch| {
                    let tm = &self.timing[ch.prof as usize];
                    if tm.clock.is_some() {
                        return tm.send_pace().at(ch.tr_start, ch.tr_k as u32) + tm.latency;
                    }
                    let unit = if ch.mid { tm.flit_time } else { tm.tail_time };
                    ch.tr_start + (ch.tr_k as Time - 1) * tm.flit_time + unit + tm.latency
                })
                .max();
            if let Some(t) = last_landed {
                self.now = t;
            }
            deadlock = self.find_deadlock(0);
            if deadlock.is_none() {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: "the network stopped with flits inside but no waiting cycle was found".into(),
                }));
            }
        }
        if self.batch && deadlock.is_none() && !interrupted {
            // (A batch whose last events came with its last delivery.)
            self.batch_over();
        }
        if !finalized {
            // A deadlock ends the measurement window where it stopped the run: the sources
            // create nothing after it, and the rates are over the time that was simulated
            // (none, if it came before the window began).
            if let Some(d) = &deadlock {
                self.me = self.me.min(d.time.max(self.ms));
            }
            if interrupted {
                self.me = self.me.min(self.now.max(self.ms));
            }
            self.finalize_window();
        }
        if self.check && deadlock.is_none() && !interrupted {
            self.check_credits()?;
            self.check_conservation(!drain_failed)?;
        }
        Ok(RunOutcome {
            drain_failed,
            deadlock,
            wall_s: wall.elapsed().as_secs_f64(),
            interrupted,
            express: false,
        })
    }

    /// Whether the run ends before the instant `t`, the next with an event: drained, or
    /// past the drain limit (`drain_failed`). The measured packets still in the source
    /// queues are counted once, before the first instant at or after the window's end
    /// (`finalized`).
    pub(super) fn ends_before(&mut self, t: Time, finalized: &mut bool, drain_failed: &mut bool) -> bool {
        if self.batch && self.batch_over() {
            return true;
        }
        if t >= self.next_sample {
            self.sample_until(t);
        }
        if !*finalized && t >= self.me {
            self.finalize_window();
            *finalized = true;
        }
        // Drained: the run ends at the last instant it processed, and never before the
        // window's end, whose instant is processed in full. (It ended at the last instant
        // before the window's end once, when nothing was left to drain there: an instant
        // that trains, which skip events, and flit by flit placed differently, so the
        // flits counted up to it differed.)
        if *finalized && t > self.me && self.drained() {
            self.end = self.now.max(self.me);
            return true;
        }
        if t > self.me.saturating_add(self.spec.params.drain_limit) {
            *drain_failed = true;
            self.end = self.me.saturating_add(self.spec.params.drain_limit);
            return true;
        }
        false
    }

    /// BookSim2's sampling at every period's end up to `t` (before anything at `t`):
    /// the window's start and end as it decides them (see [`super::window`]). A run
    /// BookSim2 would call unstable goes on to drain the window it had; its result says
    /// why BookSim2 would stop.
    #[inline(never)]
    pub(super) fn sample_until(&mut self, t: Time) {
        use crate::stats::sampling::Verdict;
        while t >= self.next_sample {
            let Some(s) = self.sampler.as_mut() else {
                self.next_sample = Time::MAX;
                return;
            };
            let b = self.next_sample;
            let verdict = s.period_end(b);
            let start = s.window_start();
            self.next_sample = if verdict == Verdict::Unstable {
                Time::MAX
            } else {
                s.next_period_end()
            };
            match verdict {
                Verdict::Continue => {}
                Verdict::WarmedUp => self.ms = b,
                Verdict::Measured => {
                    (self.ms, self.me) = (start, b);
                    self.window_open = false;
                }
                Verdict::Unstable => {
                    // The window ends where the test stopped the sampling (empty if the
                    // warm-up had not ended).
                    if self.window_open {
                        if b <= self.ms {
                            (self.ms, self.me) = (b, b);
                        } else {
                            self.me = self.me.min(b);
                        }
                    }
                    self.window_open = false;
                }
            }
            if self.window_open {
                self.me = self.next_sample;
            }
            self.window_moved();
        }
    }

    /// Whether a batch is through: every host has taken its last packet, and every packet
    /// taken is delivered (or lost). Then the run ends where it is, and the window, which
    /// every rate is over, is the batch: from the start to the last delivery.
    pub(super) fn batch_over(&mut self) -> bool {
        let c = &self.c;
        if c.packets_delivered + c.packets_lost < c.packets_injected || self.hosts.iter().any(|h| h.active) {
            return false;
        }
        self.end = self.now;
        self.me = c.last_delivery.max(self.ms);
        true
    }

    pub(super) fn drained(&self) -> bool {
        if self.spec.params.drain_all {
            // A host in the middle of a packet has one injected and not delivered; one whose
            // packet created in the window still waits (for its send overhead, or credits)
            // will inject it.
            self.c.packets_delivered + self.c.packets_lost >= self.c.packets_injected
                && (0..self.hosts.len()).all(|h| !self.may_create(h))
        } else {
            self.c.delivered_measured >= self.c.total_measured
        }
    }

    /// Counts the measured packets still waiting in source queues, so the drain knows how
    /// many to wait for.
    pub(super) fn finalize_window(&mut self) {
        let wl = &self.spec.workload;
        if matches!(wl.process, Process::Backlogged) {
            self.c.total_measured = self.c.injected_measured;
            return;
        }
        let mut pending = 0;
        let mut pending_flits = 0;
        for h in &self.hosts {
            if !h.active {
                continue;
            }
            if !self.spec.params.source_queueing {
                // Packets dated at the front of the source queue: only the one there now
                // can be dated in the window (those behind it reach the front once its
                // tail is out, past the window's end, and so does the next of a host in
                // the middle of a packet).
                let at = h.arrivals.time.max(h.tail_out);
                if h.cur == NONE && at >= self.ms && at < self.me {
                    pending += 1;
                    pending_flits += h.arrivals.size as u64;
                }
                continue;
            }
            let mut a = h.arrivals.clone();
            // The cursor is at the oldest packet not yet injected.
            while a.time < self.me {
                if a.time >= self.ms {
                    pending += 1;
                    pending_flits += a.size as u64;
                }
                a.advance(&wl.process, &wl.sizes);
            }
        }
        self.c.total_measured = self.c.injected_measured + pending;
        self.c.offered_flits += pending_flits;
    }
}

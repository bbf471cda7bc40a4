//! A channel's transfers: trains of flits sent on a channel and landing in the receiver's
//! buffer at their own flit times (clocked channels on their clock's edges), the channel's
//! occupancy, credits taken and returned, and what a failed channel does with what it
//! carries (DESIGN.md, "Engine": the model of time in the parent module).

use super::*;

impl<'a> Sim<'a> {
    /// `send_train` on a channel that has failed: the first flit of a packet caught part
    /// way across goes on as a forced tail; everything else is lost.
    #[cold]
    pub(crate) fn send_dead(&mut self, c: u32, o: u32, first: u32, k: u32, ends_tail: bool) -> Time {
        let now = self.now;
        let pid = first & PID;
        let mut sent = 0;
        if self.chans[c as usize].mid {
            self.fail_at[c as usize] = Time::MAX;
            let dst = self.pkts[pid as usize].dst;
            let last = self.send_train(c, o, first | TAIL, dst, 1, true);
            self.fail_at[c as usize] = now;
            let p = &mut self.pkts[pid as usize];
            if !p.truncated {
                self.c.packets_lost += 1;
            }
            p.truncated = true;
            p.parts += 1;
            sent = 1;
            if k == 1 {
                // The packet's own tail was the flit after the cut: its upstream part ends.
                if ends_tail {
                    self.part_done(pid);
                }
                self.chans[c as usize].mid = false;
                return last;
            }
        } else if first & HEAD != 0 {
            self.c.packets_lost += 1;
            self.pkts[pid as usize].truncated = true;
        }
        let tm = self.timing[self.chans[c as usize].prof as usize];
        let (ft, tt) = (tm.flit_time, tm.tail_time);
        let pace = tm.send_pace();
        let last_start = pace.at(now, k - 1);
        let ch = &mut self.chans[c as usize];
        ch.tx_busy = if tm.clock.is_some() {
            pace.at(now, k)
        } else {
            last_start + if ends_tail { tt } else { ft }
        };
        ch.tr_start = now;
        ch.tr_k = k as u8;
        ch.mid = false;
        self.c.flits_dropped += (k - sent) as u64;
        if self.vcs[o as usize].flags & F_FROM_HOST != 0 {
            self.c.flits_injected += (k - sent) as u64;
        }
        if ends_tail {
            self.part_done(pid);
        }
        last_start
    }

    /// The timing profile of channel `c`.
    #[inline(always)]
    pub(crate) fn tm(&self, c: u32) -> &Timing {
        &self.timing[self.chans[c as usize].prof as usize]
    }

    /// Current simulated time [ps].
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub(crate) fn mark_dirty(&mut self, node: u32) {
        let n = node as usize;
        if self.dirty_stamp[n] != self.step {
            self.dirty_stamp[n] = self.step;
            self.dirty.push(node);
        }
    }

    /// Makes sure channel `c`'s sender is woken at `t` (once per distinct time).
    #[inline]
    pub(crate) fn ensure_txfree(&mut self, c: u32, t: Time) {
        let ch = &mut self.chans[c as usize];
        if ch.txfree_at == t && t >= self.now {
            return;
        }
        ch.txfree_at = t;
        let tm = &self.timing[ch.prof as usize];
        let e = ev(K_TXFREE, c, 0);
        let now = self.now;
        if t == now + tm.flit_time {
            let k = tm.tx_data;
            self.q.push(k, now, e);
        } else if t == now + tm.tail_time {
            let k = tm.tx_tail;
            self.q.push(k, now, e);
        } else {
            self.q.push_at(self.now, t, e);
        }
    }

    /// Arrival time of flit `j` of a `k`-flit train on channel `c` whose first flit lands
    /// at `a0`: one flit time apart, the tail's own unit time for the tail.
    #[inline(always)]
    pub(crate) fn train_arrival(&self, c: u32, a0: Time, j: u32, k: u32, ends_tail: bool) -> Time {
        let ch = self.tm(c);
        if ch.clock.is_some() {
            // (A clocked channel's tail takes one period, as every flit.)
            ch.land_pace().at(a0, j)
        } else if ends_tail && j + 1 == k && k >= 2 {
            a0 + (k - 2) as Time * ch.flit_time + ch.tail_time
        } else {
            a0 + j as Time * ch.flit_time
        }
    }

    /// Sends `k` flits of one packet back to back on channel `c` toward VC `o`, starting
    /// now: `first` is the first flit's word (with its head flag), `ends_tail` says whether
    /// the last one is the packet's tail. Flit j starts at `now + j·flit_time` (on a clocked
    /// channel, `now` is an edge and flit j starts j edges later), occupies the channel for
    /// its unit time and lands one unit plus the propagation delay later; the receiver sees
    /// each landing as its own event. The caller has checked `k` credits. Returns the
    /// start time of the last flit.
    #[inline]
    pub(crate) fn send_train(
        &mut self,
        c: u32,
        o: u32,
        first: u32,
        dst: u32,
        k: u32,
        ends_tail: bool,
    ) -> Time {
        debug_assert!((1..=MAX_TRAIN).contains(&k));
        let now = self.now;
        if !self.fail_at.is_empty() && now >= self.fail_at[c as usize] {
            return self.send_dead(c, o, first, k, ends_tail);
        }
        let tm = *self.tm(c);
        let (ft, tt) = (tm.flit_time, tm.tail_time);
        let last_start = self.occupy(c, k, ft, if ends_tail { tt } else { ft }, !ends_tail);
        let credit = self.chans[c as usize].credit;
        let shortcut = self.may_skip_arrival(c, first);
        let single_tail = k == 1 && ends_tail;
        let (class, route_class) = if single_tail {
            (tm.arr_tail, tm.head_route_tail)
        } else {
            (tm.arr_data, tm.head_route)
        };
        let clocked = tm.clock.is_some();
        let a0 = if clocked {
            tm.send_pace().at(now, 1)
        } else {
            now + if single_tail { tt } else { ft }
        } + tm.latency;
        self.land_train::<false>(
            c,
            o,
            first,
            dst,
            k,
            ends_tail,
            (now, a0, ft),
            (class, route_class),
            (credit, shortcut, clocked),
        );
        last_start
    }

    /// Channel `c` carries `k` flits back to back from now, each `ft` long but the last,
    /// which is `last_unit` long (`mid`: that last one is not a tail): it is busy until they
    /// are out, and their time inside the measurement window counts. (A clocked channel's
    /// flits take one period each, edge to edge, from now, an edge.) Returns the start
    /// time of the last flit.
    #[inline(always)]
    pub(crate) fn occupy(&mut self, c: u32, k: u32, ft: Time, last_unit: Time, mid: bool) -> Time {
        let prof = self.chans[c as usize].prof;
        if self.timing[prof as usize].clock.is_some() {
            return self.occupy_clocked(c, k, mid);
        }
        self.occupy_from(c, self.now, k, ft, last_unit, mid)
    }

    /// [`Self::occupy`] on a channel without a clock, from `start` (now or later: a switch's
    /// output queue may hold the flits until then).
    #[inline(always)]
    pub(crate) fn occupy_from(
        &mut self,
        c: u32,
        start: Time,
        k: u32,
        ft: Time,
        last_unit: Time,
        mid: bool,
    ) -> Time {
        let (window, defer) = ((self.ms, self.me), self.defer_at);
        let ch = &mut self.chans[c as usize];
        let last_start = start + (k - 1) as Time * ft;
        ch.tx_busy = last_start + last_unit;
        ch.busy += window_busy(window, start, k, ft, last_unit);
        ch.tr_start = start;
        ch.tr_k = k as u8;
        ch.mid = mid;
        if last_start + last_unit > defer {
            self.defer_busy(c, start, last_start + last_unit);
        }
        last_start
    }

    /// [`Self::occupy`] on a clocked channel.
    #[inline(never)]
    pub(super) fn occupy_clocked(&mut self, c: u32, k: u32, mid: bool) -> Time {
        let now = self.now;
        let pace = self.tm(c).send_pace();
        #[cfg(feature = "checked")]
        assert_eq!(
            self.tm(c).next_start(now),
            now,
            "a clocked channel sends off its clock's edges"
        );
        let (last_start, end) = (pace.at(now, k - 1), pace.at(now, k));
        let ch = &mut self.chans[c as usize];
        ch.tx_busy = end;
        ch.tr_start = now;
        ch.tr_k = k as u8;
        ch.mid = mid;
        self.count_busy(c, now, end);
        last_start
    }

    /// Whether flits starting with `first` sent on channel `c` now may go straight into the
    /// receiver's buffer, skipping their arrival event (see [`Self::land_train`]): a head,
    /// on a channel that allows it (`Chan::shortcut`), exact only if no flits are still on
    /// the wire ahead.
    #[inline(always)]
    pub(crate) fn may_skip_arrival(&self, c: u32, first: u32) -> bool {
        let ch = &self.chans[c as usize];
        ch.shortcut && first & HEAD != 0 && ch.landing <= self.now
    }

    /// The receiving half of [`Self::send_train`]: `k` flits of one packet toward VC `o` of
    /// channel `c`, the first starting at `start` (now, or later for the second worm of an
    /// interleaved train) and landing at `a0`, the others `stride` apart; `class` and
    /// `route_class` are the delay classes of the landing and of the routed head, for a
    /// train that starts now; `credit`: the channel has credit flow control; `shortcut`: the
    /// flits may skip their arrival event (see `send_train`); `clocked`: the channel sends on
    /// a clock's edges, so the delay classes do not apply. `INTERLEAVED`: one worm's part
    /// of an interleaved train, `stride` two flit times, which may start later (without,
    /// the code is that of an ordinary train). The caller has checked `k` credits.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn land_train<const INTERLEAVED: bool>(
        &mut self,
        c: u32,
        o: u32,
        first: u32,
        dst: u32,
        k: u32,
        ends_tail: bool,
        (start, a0, stride): (Time, Time, Time),
        (class, route_class): (Class, Class),
        (credit, shortcut, clocked): (bool, bool, bool),
    ) {
        let now = self.now;
        let mut flit = first;
        if k == 1 && ends_tail {
            flit |= TAIL;
        }
        if credit {
            self.take_credits(o, k);
        }
        let node = self.vcs[o as usize].node;
        let to_host = shortcut && (node as usize) >= self.sws.len();
        let into_buffer = shortcut && !to_host && self.vcs[o as usize].strip_pending == 0;
        if dst > DST_MASK && !into_buffer {
            // The head's hop count leaves the slots here: into the packet record.
            self.pkts[(first & PID) as usize].hops += (dst >> DST_BITS) as u16;
        }
        if to_host {
            // A host takes flits as they arrive, each at a known time: record it all now.
            // The result is the same as arrival by arrival (a host keeps no state that
            // anything else reads before then); only the tail's delivery waits for its time.
            debug_assert_eq!(stride, self.tm(c).flit_time);
            if let Err(e) = self.host_accept(o, flit, k, ends_tail, a0) {
                self.failed.get_or_insert(e);
            }
        } else if into_buffer {
            // Only this sender feeds `o` and nothing it sent before is still on the wire:
            // the flits go into the buffer now, marked with their arrival times. The head
            // starts when it lands or, behind a packet still there, when that one has left.
            let v = &self.vcs[o as usize];
            let (was_empty, state) = (v.len == 0, v.state);
            self.ring_put::<INTERLEAVED>(o, flit, dst, k, ends_tail, a0, stride, self.flit_delay);
            if was_empty {
                self.last_move[o as usize] = a0;
                let freed = self.t_aux[o as usize];
                if state == DRAIN && freed >= a0 {
                    self.start_at(o, freed, true, false);
                } else {
                    debug_assert!(state == IDLE || state == DRAIN);
                    self.set_state(o, ROUTING);
                    let sw = &self.sws[node as usize];
                    let (r, base) = (sw.router_delay, sw.bits_base);
                    self.t_aux[o as usize] = a0 + r;
                    let e = route_event(node, base, self.vcs[o as usize].local);
                    if (!INTERLEAVED || start == now) && !clocked {
                        self.q.push(route_class, now, e);
                    } else {
                        self.q.push_at(now, a0 + r, e);
                    }
                }
                self.route_ahead(node as usize, o, dst & DST_MASK);
            }
        } else {
            let mut e = ev_train(o, flit, k - 1, ends_tail);
            if INTERLEAVED {
                let ch = &mut self.chans[c as usize];
                ch.landing = ch.landing.max(a0);
                e |= EV_STRIDE2;
            } else {
                self.chans[c as usize].landing = a0;
            }
            if (!INTERLEAVED || start == now) && !clocked {
                self.q.push(class, now, e);
            } else {
                self.q.push_at(now, a0, e);
            }
            if self.check {
                self.inflight[o as usize] += k;
            }
        }
        self.c.flit_hops += k as u64;
        if self.vcs[o as usize].flags & F_FROM_HOST != 0 {
            self.c.flits_injected += k as u64;
        }
    }

    /// The `k` flits just taken out of input VC `i` (its ring head has moved past them) left
    /// the j-th at `pace.at(t0, j)` (the last at `last` instead): their credits start back
    /// to the sender, which is woken when the first lands only if it is waiting for it.
    #[inline(always)]
    pub(crate) fn return_credits(&mut self, i: u32, k: u32, t0: Time, pace: Pace, last: Time) {
        let v = &mut self.vcs[i as usize];
        let ch = &self.chans[v.chan as usize];
        if !ch.credit {
            v.cr_head = v.head;
            return;
        }
        if ch.tokens {
            let c = v.chan;
            self.tokens_left(c, i, k, t0, pace, last);
            return;
        }
        let tm = &self.timing[ch.prof as usize];
        let cd = tm.credit_delay;
        let (first, mask) = (v.head.wrapping_sub(k), v.mask);
        let (ring, buf) = (&mut self.ring, v.buf);
        if pace.clock.is_none() {
            let mut t = t0 + cd;
            for j in 0..k - 1 {
                ring[(buf + (first.wrapping_add(j) & mask)) as usize].time = t;
                t += pace.unit;
            }
        } else {
            for j in 0..k - 1 {
                ring[(buf + (first.wrapping_add(j) & mask)) as usize].time = pace.at(t0, j) + cd;
            }
        }
        ring[(buf + (first.wrapping_add(k - 1) & mask)) as usize].time = last + cd;
        // The last flit leaves last; a stripped header's credit may land later than credits
        // written after it, so the bound only grows.
        #[cfg(feature = "checked")]
        assert!(
            k < 2 || last >= pace.at(t0, k - 2),
            "credits written out of order"
        );
        v.cr_last = v.cr_last.max(last + cd);
        if v.flags & F_CWAIT != 0 {
            v.flags &= !F_CWAIT;
            let cl = tm.credit_class;
            // The first credit lands `cd` after the first flit left, which is now or later.
            if t0 == self.now {
                self.q.push(cl, self.now, ev(K_CREDIT, i, 0));
            } else {
                self.q.push_at(self.now, t0 + cd, ev(K_CREDIT, i, 0));
            }
        }
    }

    /// Credits the sender of VC `o` holds now, collecting returned credits that have landed.
    #[inline]
    pub(crate) fn credits_now(&mut self, o: u32) -> u32 {
        let now = self.now;
        let v = &mut self.vcs[o as usize];
        if now >= v.cr_last {
            // All of them have landed.
            v.credits += v.head.wrapping_sub(v.cr_head);
            v.cr_head = v.head;
            return v.credits;
        }
        while v.cr_head != v.head && self.ring[(v.buf + (v.cr_head & v.mask)) as usize].time <= now {
            v.cr_head = v.cr_head.wrapping_add(1);
            v.credits += 1;
        }
        v.credits
    }

    /// How many of the next `max` flits on VC `o`, flit j starting at `pace.at(start, j)`
    /// (`start` now or later), have a credit by the time they start: the credits held now,
    /// then those on their way back, in the order they land. A train may run that far
    /// without waiting, exactly as the flit-by-flit sender would find each credit there
    /// when its flit is due.
    #[inline(always)]
    pub(crate) fn train_credits(&mut self, o: u32, max: u32, start: Time, pace: Pace) -> u32 {
        let held = self.credits_now(o);
        if held >= max {
            return max;
        }
        let now = start;
        let v = &self.vcs[o as usize];
        let pending = v.head.wrapping_sub(v.cr_head);
        let mut n = held;
        while n < max && n - held < pending {
            let slot = v.buf + (v.cr_head.wrapping_add(n - held) & v.mask);
            if self.ring[slot as usize].time > pace.at(now, n) {
                break;
            }
            n += 1;
        }
        n
    }

    /// Takes `k` credits of VC `o` for a train about to leave, collecting early those still
    /// on their way that [`Self::train_credits`] counted on.
    #[inline]
    pub(crate) fn take_credits(&mut self, o: u32, k: u32) {
        let v = &mut self.vcs[o as usize];
        if v.credits < k {
            let early = k - v.credits;
            v.cr_head = v.cr_head.wrapping_add(early);
            v.credits += early;
        }
        v.credits -= k;
    }

    /// The admissible outputs of the routed head at input VC `i`.
    #[inline]
    pub(crate) fn want_of(&self, i: u32) -> Want {
        let v = &self.vcs[i as usize];
        if v.want_port == u16::MAX {
            self.wants[i as usize]
        } else {
            Want {
                ports: crate::routing::PortSet::single(v.want_port),
                vc_lo: v.want_lo,
                vc_hi: v.want_hi,
                escape: crate::routing::Escape::NONE,
            }
        }
    }

    /// Credits of VC `o` at the present instant, without collecting them.
    pub(crate) fn credits_at(&self, o: u32) -> u32 {
        let v = &self.vcs[o as usize];
        let landed = (0..v.head.wrapping_sub(v.cr_head))
            .filter(|&k| self.ring[(v.buf + (v.cr_head.wrapping_add(k) & v.mask)) as usize].time <= self.now)
            .count() as u32;
        v.credits.saturating_add(landed)
    }

    /// Whether VC `o` has at least `need` (≥ 1) credits now; if not, the sender is woken when
    /// they are there.
    #[inline(always)]
    pub(crate) fn has_credits(&mut self, o: u32, need: u32) -> bool {
        self.vcs[o as usize].credits >= need.max(1) || self.has_credits_slow(o, need.max(1))
    }

    /// A switch's output VC `o` given only with its whole buffer's credits back (waiting for
    /// the last tail's credit, or Duato's empty buffer for `min-adapt`), and they are: the
    /// head it goes to still stays [`Sim::flit_delay`] after the last of them landed
    /// (BookSim2 gives the VC in the cycle that credit is read, and the head goes to switch
    /// allocation after it); until then, a wake-up then. A host takes it as it lands.
    fn all_credits_seen(&mut self, o: u32) -> bool {
        let v = &self.vcs[o as usize];
        if self.flit_delay == 0 || v.flags & F_FROM_HOST != 0 {
            return true;
        }
        // The last flit's slot holds its credit's landing (the VC took no flit since).
        let last = self.ring[(v.buf + (v.head.wrapping_sub(1) & v.mask)) as usize].time;
        let t = last + self.flit_delay;
        if t <= self.now {
            return true;
        }
        if self.cwake[o as usize] != t {
            self.cwake[o as usize] = t;
            self.q.push_at(self.now, t, ev(K_CREDIT, o, 0));
        }
        false
    }

    /// The credits `need` stands for on VC `o`: itself, or the VC's whole buffer for
    /// [`NEED_ALL`].
    pub(crate) fn credits_needed(&self, o: u32, need: u32) -> u32 {
        if need == NEED_ALL {
            self.caps[o as usize]
        } else {
            need
        }
    }

    #[inline(never)]
    pub(super) fn has_credits_slow(&mut self, o: u32, need: u32) -> bool {
        let all = need == NEED_ALL;
        let need = self.credits_needed(o, need);
        if self.credits_now(o) >= need {
            return !all || self.all_credits_seen(o);
        }
        // Credits already on their way wake the sender when the one that completes `need`
        // lands; otherwise the next flit to leave the receiver's buffer does. Both orders of
        // sender and receiver within an instant give the same wake-up.
        let v = &mut self.vcs[o as usize];
        let missing = need - v.credits;
        if v.head.wrapping_sub(v.cr_head) >= missing {
            let t = self.ring[(v.buf + (v.cr_head.wrapping_add(missing - 1) & v.mask)) as usize].time;
            if t >= crate::link::ds::PENDING {
                // Its token is not sent yet: the token wakes the sender when it is.
                v.flags |= F_CWAIT;
            } else if self.cwake[o as usize] != t {
                self.cwake[o as usize] = t;
                self.q.push_at(self.now, t, ev(K_CREDIT, o, 0));
            }
        } else {
            v.flags |= F_CWAIT;
        }
        false
    }
}

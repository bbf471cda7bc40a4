//! A switch's outputs sending: one flit at a time from the next VC in round-robin order
//! with a flit in, a credit and its crossbar input free; the output VC held until the tail
//! has passed, then released.
//!
//! Trains: when an output channel has one VC, its owner is the only thing that can use it
//! until the tail passes, so the buffered flits it has credit for can be sent in one step at
//! their flit-by-flit times ([`Sim::send_train`]). The one thing that happens later, the tail
//! passing, is replayed at its own time: the output stays `HELD` until then and is released
//! lazily, or by a `TAILGONE` event at that instant if a head waits for it; the input VC
//! moves on at once, its next head reaching the front no earlier than the tail leaves. Two
//! worms on the two VCs of one channel take turns flit by flit; while nothing else can come
//! between them, their turns go as one interleaved train (`send_pair`): two trains of
//! stride two, the second starting one flit time later. The flit-by-flit path (`trains =
//! false`) is the reference; the tests require identical results (`switch::alloc`'s tests).

use super::alloc::RrScan;
use crate::engine::*;
use crate::fabric::SwAllocator;
use crate::time::Time;

impl Sim<'_> {
    /// Output `p` of switch `s` sends what it can: the next flit, or a train of flits.
    pub(super) fn try_send(&mut self, s: usize, p: u32) {
        let sw = &self.sws[s];
        let (port_base, xbar) = (sw.port_base, sw.xbar);
        let c = self.ports[(port_base + p) as usize].out;
        if c == NONE {
            return;
        }
        let now = self.now;
        let ch = &self.chans[c as usize];
        let (nvc, vc_base, rr, credit, tx_busy) =
            (ch.nvc as u32, ch.vc_base, ch.rr as u32, ch.credit, ch.tx_busy);
        self.release_passed_trains(s, p, c, vc_base, now);
        if tx_busy > now {
            if self.output_has_work(c) {
                self.ensure_txfree(c, tx_busy);
            }
            return;
        }
        // A clocked channel sends from the edges of its clock only.
        let start = self.tm(c).next_start(now);
        if start != now {
            if self.output_has_work(c) {
                self.ensure_txfree(c, start);
            }
            return;
        }
        let mut xbar_wait = Time::MAX;
        // The VCs in round-robin order from the one after the last that sent, those with
        // an owner only (`owned`): from there up, then from 0.
        let from = if rr + 1 >= nvc { 0 } else { rr + 1 };
        let owned = self.owned[c as usize];
        let (mut hi, mut lo) = (owned & (u64::MAX << from), owned & !(u64::MAX << from));
        while hi | lo != 0 {
            let vv = if hi != 0 {
                let b = hi.trailing_zeros();
                hi &= hi - 1;
                b
            } else {
                let b = lo.trailing_zeros();
                lo &= lo - 1;
                b
            };
            let o = vc_base + vv;
            let i = match self.ready_front(o, now) {
                Ok(i) => i,
                Err(t) => {
                    xbar_wait = xbar_wait.min(t);
                    continue;
                }
            };
            let iv = &self.vcs[i as usize];
            let in_port = port_base + iv.in_port as u32;
            if credit && !self.has_credits(o, 1) {
                continue;
            }
            if xbar {
                let xf = self.ports[in_port as usize].xbar_free;
                if xf > now {
                    xbar_wait = xbar_wait.min(xf);
                    continue;
                }
            }
            // With a worm on the other VC of two, the two may take turns as one train.
            // (Most often the other VC has no worm: that is seen here, without the call.)
            let paired = nvc == 2 && {
                let ob = vc_base + (1 - vv);
                self.vcs[ob as usize].owner < HELD_EV && self.send_pair(s, p, c, (i, o), ob)
            };
            if !paired {
                self.send_flits(s, p, i, o, c, in_port, nvc == 1 && !xbar);
                self.chans[c as usize].rr = vv as u8;
            }
            // More to send on this output once these flits are out?
            let busy = self.chans[c as usize].tx_busy;
            if self.output_has_work(c) {
                self.ensure_txfree(c, busy);
            }
            return;
        }
        if xbar_wait != Time::MAX {
            self.ensure_txfree(c, xbar_wait);
        }
    }

    #[inline]
    pub(crate) fn output_has_work(&self, c: u32) -> bool {
        let vc_base = self.chans[c as usize].vc_base;
        let mut m = self.owned[c as usize];
        while m != 0 {
            let ov = &self.vcs[(vc_base + m.trailing_zeros()) as usize];
            m &= m - 1;
            if ov.owner < HELD_EV && {
                let iv = &self.vcs[ov.owner as usize];
                iv.len > 0 && iv.state == ACTIVE
            } {
                return true;
            }
        }
        false
    }

    /// Moves flits from the front of input VC `i` out on output VC `o` of channel `c`: one,
    /// or (`train`) as many of the same packet as are buffered and covered by credits.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_flits(&mut self, s: usize, p: u32, i: u32, o: u32, c: u32, in_port: u32, train: bool) {
        let now = self.now;
        let mut k = 1;
        let v = &self.vcs[i as usize];
        let (buf, head, mask, len) = (v.buf, v.head, v.mask, v.len);
        let front = self.ring[(buf + (head & mask)) as usize];
        let (first, dst) = (front.flit, front.dst);
        let mut ends_tail = first & TAIL != 0;
        let unit = self.tm(c).flit_time;
        let pace = self.tm(c).send_pace();
        // Out of a token channel's buffer, trains only where its slots may free at their
        // own times (`Sim::token_trains_out`); on a channel that tokens interleave with,
        // only until a token could come between.
        let held_back = v.flags & F_TOKENS != 0 && !self.token_trains_out(v.chan);
        // Through a switch whose inputs share the crossbar, a wavefront or `max_size`
        // allocator sends one flit a match: its pointer moves at every allocation with
        // requests. A separable one's pointers move past the matched pair only, so a train
        // with no rival (`train_horizon`) leaves them as its flits' matches one by one would.
        if self.spec.params.trains
            && !ends_tail
            && len > 1
            && !held_back
            && (!self.sws[s].xbar || !self.sw_allocator.moves_every_allocation())
        {
            // Without competition for the output or the crossbar input (one VC, one VC per
            // input), a train runs to the tail; otherwise only until something could compete.
            let horizon = if train {
                u32::MAX
            } else {
                self.train_horizon(s, p, c, o, i, unit)
            };
            let mut limit = len.min(MAX_TRAIN).min(horizon).min(self.fail_limit(c));
            if self.chans[c as usize].credit {
                limit = self.train_credits(o, limit, now, pace);
            }
            if limit > 1 && self.tm(c).tokens_between {
                limit = limit.min(self.token_train_limit(c, unit));
            }
            while k < limit {
                let slot = (buf + (head.wrapping_add(k) & mask)) as usize;
                // Flit k leaves at now + k·unit; it must have arrived by then.
                if self.ring[slot].time > pace.at(now, k) {
                    break;
                }
                let f = self.ring[slot].flit;
                k += 1;
                if f & TAIL != 0 {
                    ends_tail = true;
                    break;
                }
            }
        }
        let v = &mut self.vcs[i as usize];
        v.head = v.head.wrapping_add(k);
        v.len -= k;
        self.last_move[i as usize] = now;
        let last_start = self.send_train(c, o, first & !TAIL, dst, k, ends_tail);
        self.return_credits(i, k, now, pace, last_start);
        let sw = &self.sws[s];
        if sw.xbar {
            let u = if ends_tail { self.tm(c).tail_time } else { unit };
            self.ports[in_port as usize].xbar_free = last_start + sw.xbar_time(u);
        }
        if ends_tail {
            if k == 1 {
                self.release(s, p, i, o);
            } else {
                debug_assert_eq!(last_start, pace.at(now, k - 1));
                let cl = self.train_class_ids[(self.tm(c).train_class + k - 2) as usize];
                let cl = (pace.clock.is_none()).then_some(cl);
                self.tail_later(s, p, i, o, last_start, cl);
            }
        }
    }

    /// The tail of input VC `i`'s packet, sent on output VC `o` (port `p`), passes at
    /// `last_start`, after now (flit-by-flit time): the output is held until then (and the
    /// VC-reuse delay after, [`Sim::vc_reuse`]), released lazily or, if a head waits for it,
    /// by an event then (`class`: the delay class from now to `last_start`, if there is one).
    /// The input moves on now; its next head reaches the front no earlier than `last_start`.
    #[inline(always)]
    pub(super) fn tail_later(
        &mut self,
        s: usize,
        p: u32,
        i: u32,
        o: u32,
        last_start: Time,
        class: Option<crate::engine::queue::Class>,
    ) {
        if self.vc_reuse == 0 {
            self.hold_out(s, p, o, last_start, class);
        } else {
            self.hold_out(s, p, o, last_start + self.vc_reuse, None);
        }
        let v = &mut self.vcs[i as usize];
        v.fwd = NONE;
        if v.len > 0 {
            self.start_next(i, last_start);
        } else {
            debug_assert_eq!(v.state, ACTIVE);
            v.state = DRAIN;
            self.t_aux[i as usize] = last_start;
        }
    }

    /// Output VC `o` (port `p` of switch `s`) is held until `end` (after now), released
    /// lazily or, if a head waits for it, by an event then (`class`: the delay class from
    /// now to `end`, if there is one).
    #[inline(always)]
    pub(super) fn hold_out(
        &mut self,
        s: usize,
        p: u32,
        o: u32,
        end: Time,
        class: Option<crate::engine::queue::Class>,
    ) {
        self.held[o as usize] = end;
        let sw = &self.sws[s];
        let waiting = any_bit(
            &self.bits,
            (sw.req_base + p * sw.words) as usize,
            sw.words as usize,
        );
        if waiting {
            self.vcs[o as usize].owner = HELD_EV;
            let e = ev(K_TAILGONE, o, 0);
            match class {
                Some(cl) => self.q.push(cl, self.now, e),
                None => self.q.push_at(self.now, end, e),
            }
        } else {
            self.vcs[o as usize].owner = HELD;
        }
    }

    /// The next packet in input VC `i` starts behind a tail that passes at `freed` (send
    /// phase; out of line: most trains leave their input empty).
    #[inline(never)]
    pub(super) fn start_next(&mut self, i: u32, freed: Time) {
        self.start_front(i, Some(freed), true);
    }

    /// Whether the channel of input VC `i` has a live VC (one whose front packet waits for
    /// or holds an output; `ROUTING_TOO`: or is being routed) other than `i` and `also`: it
    /// would compete (or may come to compete) for the crossbar input.
    #[inline(always)]
    pub(super) fn other_live_vc<const ROUTING_TOO: bool>(&self, i: u32, also: u32) -> bool {
        let v = &self.vcs[i as usize];
        if v.vc == 0 && v.flags & F_LAST_VC != 0 {
            return false;
        }
        // The channel's VCs have consecutive ids.
        let mut x = i - v.vc as u32;
        loop {
            let w = &self.vcs[x as usize];
            let live = match w.state {
                ACTIVE | WAITING => true,
                ROUTING | READY => ROUTING_TOO,
                _ => false,
            };
            if x != i && x != also && live {
                return true;
            }
            if w.flags & F_LAST_VC != 0 {
                return false;
            }
            x += 1;
        }
    }

    /// The horizon `h`, cut for each head being routed at switch `s` as `rival` says: not at
    /// all ([`HARMLESS`]), at the end of its router delay ([`CUT`]; `None` if it is ready
    /// now), or, for a head routed to output `q` from the crossbar input of a train on output
    /// `p` of flit time `unit` (`rival` says `q`), where it could first have that input
    /// ([`Self::xbar_rival_at`]).
    #[inline(always)]
    pub(super) fn routing_horizon(
        &self,
        s: usize,
        mut h: Time,
        (p, unit): (u32, Time),
        rival: impl Fn(&Vc) -> u32,
    ) -> Option<Time> {
        let sw = &self.sws[s];
        let pb = s * self.pend_words as usize;
        for wi in 0..sw.words as usize {
            let mut word = self.pending[pb + wi];
            while word != 0 {
                let l = (wi << 6) as u32 + word.trailing_zeros();
                word &= word - 1;
                let x = self.sw_in[(sw.in_base + l) as usize];
                let w = &self.vcs[x as usize];
                match w.state {
                    ROUTING | READY => {
                        let q = rival(w);
                        if q == HARMLESS {
                            continue;
                        }
                        // Routing, its router delay over at this instant, or ready without one.
                        let t = self.t_aux[x as usize];
                        let ready = w.state == READY || t <= self.now;
                        if q == CUT {
                            if ready {
                                return None;
                            }
                            h = h.min(t);
                        } else {
                            h = h.min(self.xbar_rival_at(s, p, q, ready, t, unit)?);
                        }
                    }
                    _ => {}
                }
            }
        }
        Some(h)
    }

    /// Output `p` of switch `s` (channel `c`, two VCs) has a live worm, input VC `ia` on
    /// output VC `oa`, which may send now. If another, `ib`, holds the other VC `ob`, flit by
    /// flit the two take turns, one flit time each, as long as each has its next flit in, a
    /// credit for it and its crossbar input, and neither has ended; nothing else can use the
    /// channel meanwhile (both its VCs are held), nor, if inputs share the crossbar, these
    /// two inputs. Sends that stretch as one interleaved train (two trains of stride two,
    /// `ib`'s starting one flit time later) and returns whether it did (not for fewer than
    /// two flits).
    #[inline(never)]
    pub(super) fn send_pair(&mut self, s: usize, p: u32, c: u32, (ia, oa): (u32, u32), ob: u32) -> bool {
        let ib = self.vcs[ob as usize].owner;
        if ib >= HELD_EV {
            return false;
        }
        let now = self.now;
        let tm = *self.tm(c);
        let u = tm.flit_time;
        if !self.fail_at.is_empty()
            || !self.spec.params.trains
            || tm.tokens_between
            || tm.tail_time != u
            || tm.delete_header
            || self.routing.uses_header()
            || (self.vcs[oa as usize].node as usize) >= self.sws.len()
        {
            return false;
        }
        let (va, vb) = (self.vcs[ia as usize], self.vcs[ib as usize]);
        if vb.state != ACTIVE || vb.len == 0 || (va.flags | vb.flags) & F_TOKENS != 0 {
            return false;
        }
        let sw = self.sws[s];
        let (pa, pb) = (va.in_port, vb.in_port);
        let mut h = Time::MAX;
        if sw.xbar {
            // The two inputs must have the crossbar to themselves: no other live VC on
            // either input port, and no head there that could be granted another output
            // before the train ends.
            if self.ports[(sw.port_base + pb as u32) as usize].xbar_free > now + u {
                return false;
            }
            if self.other_live_vc::<false>(ia, ib) || self.other_live_vc::<false>(ib, ia) {
                return false;
            }
            // A head routed ahead to this output (both its VCs are held) or, from another
            // input port, anywhere does not compete.
            let Some(hr) = self.routing_horizon(s, now + sw.router_delay.max(1), (p, u), |w| {
                let harmless = w.flags & F_ROUTED != 0
                    && w.want_port != u16::MAX
                    && (w.want_port as u32 == p || (w.in_port != pa && w.in_port != pb));
                if harmless { HARMLESS } else { CUT }
            }) else {
                return false;
            };
            h = hr;
        }
        // Slot j (flit time now + j·u) belongs to `ia` for even j, `ib` for odd j; each
        // worm's flit f has a credit by its slot if f < `cred`.
        let credit = self.chans[c as usize].credit;
        let cred = if credit {
            [
                self.train_credits(oa, MAX_TRAIN, now, Pace::every(2 * u)),
                self.train_credits(ob, MAX_TRAIN, now + u, Pace::every(2 * u)),
            ]
        } else {
            [MAX_TRAIN; 2]
        };
        let (ins, outs) = ([ia, ib], [oa, ob]);
        let mut k = [0u32; 2];
        let mut ends = [false; 2];
        let mut n = 0u32;
        loop {
            let w = (n & 1) as usize;
            let t = now + n as Time * u;
            let f = k[w];
            let v = &self.vcs[ins[w] as usize];
            if t >= h || f >= cred[w] || f >= v.len {
                break;
            }
            let slot = self.ring[(v.buf + (v.head.wrapping_add(f) & v.mask)) as usize];
            if slot.time > t {
                break;
            }
            k[w] += 1;
            n += 1;
            if slot.flit & TAIL != 0 {
                ends[w] = true;
                break;
            }
        }
        if n < 2 {
            return false;
        }
        self.c.pair_trains += 1;
        // The channel: n flits back to back from now, the last one from worm (n - 1) & 1.
        let last = ((n - 1) & 1) as usize;
        self.occupy(c, n, u, u, !ends[last]);
        let ch = &mut self.chans[c as usize];
        ch.rr = (outs[last] - ch.vc_base) as u8;
        let xf_unit = sw.xbar_time(u);
        for w in 0..2 {
            let (i, o, kw) = (ins[w], outs[w], k[w]);
            let start = now + w as Time * u;
            let last_w = start + (kw - 1) as Time * 2 * u;
            let v = &mut self.vcs[i as usize];
            let front = self.ring[(v.buf + (v.head & v.mask)) as usize];
            v.head = v.head.wrapping_add(kw);
            v.len -= kw;
            let in_port = v.in_port;
            self.last_move[i as usize] = now;
            let a0 = start + u + tm.latency;
            let classes = if kw == 1 && ends[w] {
                (tm.arr_tail, tm.head_route_tail)
            } else {
                (tm.arr_data, tm.head_route)
            };
            // The first part's arrival event, if it has one, holds back the second part's
            // shortcut.
            let shortcut = self.may_skip_arrival(c, front.flit);
            self.land_train::<true>(
                c,
                o,
                front.flit & !TAIL,
                front.dst,
                kw,
                ends[w],
                (start, a0, 2 * u),
                classes,
                (credit, shortcut, false),
            );
            self.return_credits(i, kw, start, Pace::every(2 * u), last_w);
            if sw.xbar {
                let xf = &mut self.ports[(sw.port_base + in_port as u32) as usize].xbar_free;
                *xf = (*xf).max(last_w + xf_unit);
            }
            if ends[w] {
                self.tail_later(s, p, i, o, last_w, None);
            }
        }
        true
    }

    /// How many flits a train from input VC `i` on output VC `o` (channel `c`, port `p`) of
    /// switch `s` may carry and still be exactly what the flit-by-flit path sends: as long as
    /// nothing else can want the output channel or `i`'s crossbar input. Another VC of the
    /// output owned by a live worm, or a head waiting for this port that may take another of
    /// its VCs, stop it at once; a head being routed that could take another VC of it stops
    /// it at the end of its router delay; a head not yet here cannot be routed before
    /// `router_delay` from now. Where inputs share the crossbar, the input's other live VCs
    /// and the heads being routed on it stop it where they could first have the crossbar
    /// input ([`Self::xbar_turn`]; without a predictable rotation, at once or at the end of
    /// their router delay).
    #[inline(never)]
    pub(super) fn train_horizon(&mut self, s: usize, p: u32, c: u32, o: u32, i: u32, unit: Time) -> u32 {
        let now = self.now;
        let sw = &self.sws[s];
        let (r, in_base, n_in, req_base, words, xbar) = (
            sw.router_delay,
            sw.in_base,
            sw.n_in,
            sw.req_base,
            sw.words,
            sw.xbar,
        );
        let ch = &self.chans[c as usize];
        let (vc_base, nvc) = (ch.vc_base, ch.nvc as u32);
        // A worm on another VC (not a train's tail passing) competes for the channel. (Only
        // VCs with an owner can hold one: `owned`.)
        let mut m = self.owned[c as usize] & !(1u64 << (o - vc_base));
        while m != 0 {
            let w = vc_base + m.trailing_zeros();
            m &= m - 1;
            if self.vcs[w as usize].owner < HELD_EV {
                return 1;
            }
        }
        // A routed head that may take only `o` of this channel's VCs waits for this train's
        // tail (`want_lo..=want_hi` are its VCs on each of its ports).
        let ov = (o - vc_base) as u8;
        let only_o = |w: &Vc| w.want_lo == ov && w.want_hi.min((nvc - 1) as u8) == ov;
        let rq = (req_base + p * words) as usize;
        if nvc > 1 && any_bit(&self.bits, rq, words as usize) {
            // A head waiting for this output competes only if it may take another of its
            // VCs (one freed at this instant, granted in the next round).
            let mut scan = RrScan::new(rq, words as usize, NONE, n_in);
            while let Some(l) = scan.next(&self.bits) {
                if !only_o(&self.vcs[self.sw_in[(in_base + l) as usize] as usize]) {
                    return 1;
                }
            }
        }
        // Where inputs share the crossbar, the input's other VCs, live or being routed, may
        // want it: out of line (most trains have no such rival).
        if xbar && self.other_live_vc::<true>(i, i) {
            // A separable allocator's turns are its pointers': a rival stops the train.
            if self.sw_allocator != SwAllocator::Greedy {
                return 1;
            }
            return self.train_horizon_rivals(s, p, c, o, i, unit);
        }
        // A head being routed that may take another VC of this output (or whose output is not
        // known) stops the train at the end of its router delay; one routed ahead to another
        // output, or to this one and only `o`, never competes with it.
        let Some(h) = self.routing_horizon(s, now + r.max(1), (p, unit), |w| {
            let q = w.want_port as u32;
            if w.flags & F_ROUTED == 0 || w.want_port == u16::MAX || (q == p && !only_o(w)) {
                CUT
            } else {
                HARMLESS
            }
        }) else {
            return 1;
        };
        Self::train_len(now, h, unit)
    }

    /// How many flits, one a flit time `unit` from now, start before `h` (at least one; a
    /// division only for a horizon shorter than the longest train).
    #[inline(always)]
    pub(super) fn train_len(now: Time, h: Time, unit: Time) -> u32 {
        let span = h.saturating_sub(now);
        if span >= MAX_TRAIN as Time * unit {
            MAX_TRAIN
        } else {
            span.div_ceil(unit).max(1) as u32
        }
    }

    /// [`Self::train_horizon`] for a train whose crossbar input another VC of its input
    /// channel may want: the input's live VCs and the heads being routed on it stop the
    /// train where they could first have that input ([`Self::xbar_turn`]; without a
    /// predictable rotation, at once or at the end of their router delay), the other heads
    /// being routed as there.
    #[inline(never)]
    pub(super) fn train_horizon_rivals(
        &mut self,
        s: usize,
        p: u32,
        c: u32,
        o: u32,
        i: u32,
        unit: Time,
    ) -> u32 {
        let now = self.now;
        let mut h = now + self.sws[s].router_delay.max(1);
        let ch = &self.chans[c as usize];
        let (vc_base, nvc) = (ch.vc_base, ch.nvc as u32);
        let ov = (o - vc_base) as u8;
        let only_o = |w: &Vc| w.want_lo == ov && w.want_hi.min((nvc - 1) as u8) == ov;
        let Some((live, t)) = self.xbar_rivals(s, i, p, unit) else {
            return 1;
        };
        h = h.min(t);
        let in_port = self.vcs[i as usize].in_port;
        // One routed ahead to another output from this input port competes for the crossbar
        // input only. (Input `i` itself is `ACTIVE`, never among the inputs being routed.)
        let Some(h) = self.routing_horizon(s, h, (p, unit), |w| {
            let q = w.want_port as u32;
            if w.flags & F_ROUTED == 0 || w.want_port == u16::MAX || (q == p && !only_o(w)) {
                CUT
            } else if w.in_port == in_port && q != p {
                q
            } else {
                HARMLESS
            }
        }) else {
            return 1;
        };
        let k = Self::train_len(now, h, unit);
        if live && k > 1 {
            self.c.turn_trains += 1;
        }
        k
    }

    /// Whether input VC `i`'s channel has a live VC other than `i` (one whose front packet
    /// holds or waits for an output), and the first flit time, from now, at which one could
    /// take the crossbar input from a train of `i`'s on output `p` of switch `s` (see
    /// [`Self::xbar_turn`]; `Time::MAX` if none could). `None` if one could at any time: a
    /// head waiting for several outputs, or turns not known ahead.
    #[inline]
    pub(super) fn xbar_rivals(&self, s: usize, i: u32, p: u32, unit: Time) -> Option<(bool, Time)> {
        let now = self.now;
        let v = &self.vcs[i as usize];
        if v.vc == 0 && v.flags & F_LAST_VC != 0 {
            return Some((false, Time::MAX));
        }
        let known = self.turns_known(s, unit);
        let (mut live, mut h) = (false, Time::MAX);
        // The channel's VCs have consecutive ids.
        let mut x = i - v.vc as u32;
        loop {
            let w = &self.vcs[x as usize];
            // Its output: granted (`ACTIVE`) or asked for (`WAITING`). One waiting for this
            // output waits for this train's tail (a head that may take another VC of it has
            // stopped the train already).
            let q = match w.state {
                ACTIVE => Some(w.fwd_port),
                WAITING => Some(w.want_port),
                _ => None,
            };
            if x != i
                && let Some(q) = q
            {
                live = true;
                if !known || q == u16::MAX {
                    return None;
                }
                if q as u32 != p {
                    h = h.min(now + self.xbar_turn(s, p, q as u32, 1, unit) * unit);
                }
            }
            if w.flags & F_LAST_VC != 0 {
                return Some((live, h));
            }
            x += 1;
        }
    }

    /// Whether turns at a shared crossbar input of switch `s` are known ahead for a train of
    /// flit time `unit`: each flit holds the input for one flit time (speed-up 1), and the
    /// send phase's rotation moves one output a flit time.
    #[inline(always)]
    pub(super) fn turns_known(&self, s: usize, unit: Time) -> bool {
        let sw = &self.sws[s];
        sw.xbar && sw.speedup == 1 && sw.sa_period == unit
    }

    /// For a head being routed to output `q` from the crossbar input of a train on output
    /// `p` of switch `s` (flit time `unit`), ready now or at `t`: where the train must stop
    /// for it. With turns known, the first flit time it could have the input; else at `t`
    /// (`None` if that is now). (Out of line: such heads are rare.)
    #[inline(never)]
    pub(super) fn xbar_rival_at(
        &self,
        s: usize,
        p: u32,
        q: u32,
        ready: bool,
        t: Time,
        unit: Time,
    ) -> Option<Time> {
        if !self.turns_known(s, unit) {
            return (!ready).then_some(t);
        }
        // Ready now, it may be granted in this instant's next round and want the input
        // from the next flit time on (the train has it now).
        let j0 = if ready { 1 } else { (t - self.now).div_ceil(unit) };
        Some(self.now + self.xbar_turn(s, p, q, j0, unit) * unit)
    }

    /// Flit by flit, a train's flits on output `p` of switch `s` and a rival's on output `q`
    /// from the same crossbar input (speed-up 1) want that input at the same instants, the
    /// flit times of the train; the send phase visits the outputs from a rotating first one,
    /// one step a flit time (`Sw::sa_period`), and the first visited wins. So the rival can
    /// win flit time j (from now, j ≥ `j0`) only where the rotation reaches `q` before `p`:
    /// when it starts at one of p + 1, …, q (mod the switch's outputs). Returns the first
    /// such j. (Out of line: only trains with a rival need it.)
    #[inline(never)]
    pub(super) fn xbar_turn(&self, s: usize, p: u32, q: u32, j0: Time, unit: Time) -> Time {
        let sw = &self.sws[s];
        let n = sw.n_ports as Time;
        debug_assert_eq!(sw.sa_period, unit);
        let (at, per, nn, start) = self.sa_memo;
        // Where the rotation starts now (kept by this instant's send phase).
        let s0 = if at == self.now && per == sw.sa_period && nn == sw.n_ports {
            start as Time
        } else {
            (self.now / sw.sa_period) % n
        };
        // Mod n without dividing: every sum here is below 2n (`j0` is most often 1).
        let wrap = |x: Time| if x >= n { x - n } else { x };
        let then = if j0 < n { wrap(s0 + j0) } else { (s0 + j0) % n };
        let arc = wrap(q as Time + n - p as Time);
        // How far the rotation at flit time j0 is past p + 1, the arc's first output.
        let d = wrap(then + n - wrap(p as Time + 1));
        if d < arc { j0 } else { j0 + n - d }
    }

    /// The tail of input VC `i`'s packet has passed output VC `o` (port `p`): the output is
    /// free for a waiting head, and the next head in `i` (if any) starts.
    pub(super) fn release(&mut self, s: usize, p: u32, i: u32, o: u32) {
        let v = &mut self.vcs[i as usize];
        debug_assert_eq!(v.state, ACTIVE);
        v.state = IDLE;
        v.fwd = NONE;
        let more = v.len > 0;
        if self.vc_reuse == 0 {
            self.release_out(s, p, o);
        } else {
            self.hold_out(s, p, o, self.now + self.vc_reuse, None);
        }
        if more {
            if self.internal_speedup == 1 {
                self.start_front(i, Some(self.now), true);
            } else {
                // With an internal speed-up the next head starts a step after the tail.
                let front = self.now + self.alloc_period(self.vcs[i as usize].chan);
                self.start_front_from(i, Some(front), true, false);
            }
        }
    }

    /// Output VC `o` (port `p` of switch `s`) is free: a head waiting for it may have it.
    pub(crate) fn release_out(&mut self, s: usize, p: u32, o: u32) {
        self.disown(o);
        let sw = &self.sws[s];
        let (req_base, words, bits_base) = (sw.req_base, sw.words, sw.bits_base);
        if any_bit(&self.bits, (req_base + p * words) as usize, words as usize) {
            set_bit(&mut self.bits, (bits_base + words) as usize, p as usize);
        }
    }
}

/// What [`Sim::routing_horizon`]'s `rival` says of a head that does not compete.
const HARMLESS: u32 = u32::MAX;
/// What [`Sim::routing_horizon`]'s `rival` says of a head that competes from its routing on.
const CUT: u32 = u32::MAX - 1;

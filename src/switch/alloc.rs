//! Switch behaviour on the engine's arrays: a flit lands in an input VC; a head that reaches
//! the front waits the router delay, is routed (the routing step returns admissible outputs),
//! picks a free one by the selection policy or waits for all of them; each output grants a
//! free output VC to a waiting head in round-robin (or oldest-first) order, and each output
//! channel sends one flit at a time, round robin over its VCs, when the next buffer has
//! credit. The output VC is held until the tail has passed (wormhole), so a blocked worm
//! blocks everything behind it. Cut-through and store-and-forward also require room for the
//! whole packet downstream before the head is granted; store-and-forward routes the head only
//! once the whole packet is in the buffer.
//!
//! Trains: when an output channel has one VC, its owner is the only thing that can use it
//! until the tail passes, so the buffered flits it has credit for can be sent in one step at
//! their flit-by-flit times ([`Sim::send_train`]). The one thing that happens later, the tail
//! passing, is replayed at its own time: the output stays `HELD` until then and is released
//! lazily, or by a `TAILGONE` event at that instant if a head waits for it; the input VC
//! moves on at once, its next head reaching the front no earlier than the tail leaves. Two
//! worms on the two VCs of one channel take turns flit by flit; while nothing else can come
//! between them, their turns go as one interleaved train ([`Sim::send_pair`]): two trains of
//! stride two, the second starting one flit time later. The flit-by-flit path (`trains =
//! false`) is the reference; the tests require identical results.

use crate::engine::arr::Arr;
use crate::engine::*;
use crate::fabric::{Arbitration, Selection, SwAllocator, SwitchMode};
use crate::routing::{At, Header, PortSet, RouteError, Want};
use crate::time::Time;

impl Sim<'_> {
    /// The first of `k` flits of one packet lands in input VC `o` of a switch; the others
    /// follow one unit each later and go into the buffer now, marked with their arrival.
    #[inline]
    pub(crate) fn switch_receive(&mut self, o: u32, first: u32, k: u32, ends_tail: bool) -> Res<()> {
        if self.vcs[o as usize].strip_pending > 0 {
            return self.receive_stripping(o, first, k, ends_tail);
        }
        self.receive_at::<false>(o, first, k, ends_tail, self.now, 0)
    }

    /// Flits land in a buffer that owes header strips: the first ones (never a tail) are
    /// removed as they land, their credits going back at once; the rest are received.
    #[cold]
    fn receive_stripping(&mut self, o: u32, first: u32, k: u32, ends_tail: bool) -> Res<()> {
        let now = self.now;
        let v = &self.vcs[o as usize];
        let c = v.chan;
        let pace = self.tm(c).land_pace();
        let droppable = if ends_tail { k - 1 } else { k };
        let j = (v.strip_pending as u32).min(droppable);
        if j > 0 {
            // Through the ring and straight out, as a host takes flits.
            let v = &mut self.vcs[o as usize];
            v.head = v.head.wrapping_add(j);
            v.strip_pending -= j as u8;
            self.return_credits(o, j, now, pace, pace.at(now, j - 1));
        }
        let v = &mut self.vcs[o as usize];
        if ends_tail && j == k - 1 {
            v.strip_pending = 0;
        }
        if j == k {
            return Ok(());
        }
        let first = first & PID;
        // The rest lands from flit j on; a lone tail after the stripped flits lands at the
        // tail's own time (its unit time may differ from a flit's).
        let a0 = self.train_arrival(c, now, j, k, ends_tail);
        self.receive_at::<false>(o, first, k - j, ends_tail, a0, 0)
    }

    /// As [`Self::switch_receive`], the first flit landing at `a0` (now or later) and the
    /// others one unit apart or, `STRIDED`, `stride` apart (two flit times for an
    /// interleaved train, whose channel has tail time = flit time).
    #[inline]
    pub(crate) fn receive_at<const STRIDED: bool>(
        &mut self,
        o: u32,
        first: u32,
        k: u32,
        ends_tail: bool,
        a0: Time,
        stride: Time,
    ) -> Res<()> {
        let now = self.now;
        let v = &self.vcs[o as usize];
        if v.len + k > v.mask + 1 {
            self.buffer_full(o, k)?;
        }
        let c = self.vcs[o as usize].chan;
        if self.vcs[o as usize].len == 0 {
            self.last_move[o as usize] = a0;
        }
        let dst = self.pkts[(first & PID) as usize].dst;
        self.ring_put::<STRIDED>(o, first, dst, k, ends_tail, a0, stride);
        if self.chans[c as usize].tokens {
            self.tokens_arrived(c);
        }
        let v = &self.vcs[o as usize];
        let (state, fwd_port, node) = (v.state, v.fwd_port, v.node);
        match state {
            ACTIVE => {
                let sw = &self.sws[node as usize];
                let base = (sw.bits_base + sw.words + sw.pwords) as usize;
                set_bit(&mut self.bits, base, fwd_port as usize);
                self.mark_dirty(node);
            }
            IDLE | DRAIN => {
                if self.check && first & HEAD == 0 {
                    return Err(Box::new(SimError::Invariant {
                        time: now,
                        what: format!(
                            "a body flit of packet {} reached the front of an empty VC",
                            first & PID
                        ),
                    }));
                }
                // Behind a train whose tail passes at `t_aux`, the head waits for it.
                let freed = (state == DRAIN).then(|| self.t_aux[o as usize]);
                self.start_front(o, freed, false);
            }
            AWAIT_TAIL if ends_tail => {
                // Routing starts when the tail is in and the head at the front.
                let t = if STRIDED {
                    a0 + (k - 1) as Time * stride
                } else {
                    self.train_arrival(c, a0, k - 1, k, ends_tail)
                };
                let front = self.t_aux[o as usize];
                if t > front {
                    self.start_at(o, t, false, false);
                } else {
                    let late = self.vcs[o as usize].flags & F_FRONT_LATE != 0;
                    self.start_at(o, front, late, false);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Puts `k` flits of one packet at the back of input VC `o`'s buffer, the first landing at
    /// `a0` and each next one `stride` later: one flit time, or two for an interleaved train
    /// (the tail lands its own unit, not a flit time, after its slot starts).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ring_put<const STRIDED: bool>(
        &mut self,
        o: u32,
        first: u32,
        dst: u32,
        k: u32,
        ends_tail: bool,
        a0: Time,
        stride: Time,
    ) {
        let c = self.vcs[o as usize].chan;
        let tm = self.tm(c);
        if !STRIDED && tm.clock.is_some() {
            return self.ring_put_clocked(o, first, dst, k, ends_tail, a0);
        }
        let (ft, tt) = if STRIDED {
            (stride, stride - tm.flit_time + tm.tail_time)
        } else {
            (tm.flit_time, tm.tail_time)
        };
        let (buf, mask, mut at, first) = self.ring_back(o, first, k);
        let ring = &mut self.ring;
        let tail = if ends_tail { TAIL } else { 0 };
        if k == 1 {
            ring[(buf + (at & mask)) as usize] = Slot {
                time: a0,
                flit: first | tail,
                dst,
            };
            return;
        }
        ring[(buf + (at & mask)) as usize] = Slot {
            time: a0,
            flit: first,
            dst,
        };
        let body = first & PID;
        // Only the head's slot carries the hop count.
        let dst = dst & DST_MASK;
        let mut t = a0 + ft;
        for _ in 1..k - 1 {
            at = at.wrapping_add(1);
            ring[(buf + (at & mask)) as usize] = Slot {
                time: t,
                flit: body,
                dst,
            };
            t += ft;
        }
        // The tail lands its own unit time after its slot starts.
        at = at.wrapping_add(1);
        ring[(buf + (at & mask)) as usize] = Slot {
            time: if ends_tail { t - ft + tt } else { t },
            flit: body | tail,
            dst,
        };
    }

    /// [`Self::ring_put`] from a clocked channel: flit j lands j edges of its clock after
    /// flit 0 (each flit, the tail too, takes one period).
    #[inline(never)]
    fn ring_put_clocked(&mut self, o: u32, first: u32, dst: u32, k: u32, ends_tail: bool, a0: Time) {
        let pace = self.tm(self.vcs[o as usize].chan).land_pace();
        let (buf, mask, at, first) = self.ring_back(o, first, k);
        for j in 0..k {
            let flit = if j == 0 { first } else { first & PID };
            let tail = if ends_tail && j + 1 == k { TAIL } else { 0 };
            self.ring[(buf + (at.wrapping_add(j) & mask)) as usize] = Slot {
                time: pace.at(a0, j),
                flit: flit | tail,
                // Only the head's slot carries the hop count.
                dst: if j == 0 { dst } else { dst & DST_MASK },
            };
        }
    }

    /// Makes room for `k` flits at the back of input VC `o`'s ring: its buffer, mask and the
    /// position of the first, and the first flit's word (a head, if the header before it was
    /// stripped as it landed).
    #[inline(always)]
    fn ring_back(&mut self, o: u32, first: u32, k: u32) -> (u32, u32, u32, u32) {
        let v = &mut self.vcs[o as usize];
        let at = v.head.wrapping_add(v.len);
        v.len += k;
        let first = if v.flags & F_HEAD_NEXT != 0 {
            v.flags &= !F_HEAD_NEXT;
            first | HEAD
        } else {
            first
        };
        (v.buf, v.mask, at, first)
    }

    /// Flits arrive at a full buffer: an error under credit flow control, a bigger buffer
    /// without.
    #[cold]
    fn buffer_full(&mut self, o: u32, k: u32) -> Res<()> {
        let v = self.vcs[o as usize];
        if self.chans[v.chan as usize].credit {
            return Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!(
                    "buffer of {} vc {} overflows its {} flits",
                    self.fab.channel_name(crate::fabric::ChannelId(v.chan)),
                    v.vc,
                    self.caps[o as usize]
                ),
            }));
        }
        // Flow control `none`: the buffer grows (its old slots are abandoned).
        let new_cap = ((v.mask + 1) * 2).max(v.len + k).next_power_of_two().max(8);
        let base = self.ring.len() as u32;
        for j in 0..v.len {
            let slot = self.ring[(v.buf + (v.head.wrapping_add(j) & v.mask)) as usize];
            self.ring.push(slot);
        }
        self.ring
            .resize((base + new_cap) as usize, crate::engine::Slot::default());
        let v = &mut self.vcs[o as usize];
        v.buf = base;
        v.head = 0;
        v.cr_head = 0;
        v.mask = new_cap - 1;
        Ok(())
    }

    /// A credit that output `port` of switch `s` was waiting for has landed.
    #[inline]
    pub(crate) fn switch_credit(&mut self, s: u32, port: u16, owner: u32) {
        let sw = &self.sws[s as usize];
        let (bb, words, pwords, rq) = (sw.bits_base, sw.words, sw.pwords, sw.req_base);
        let whole = sw.mode != SwitchMode::Wormhole || sw.tail_credit;
        if owner < HELD_EV {
            set_bit(&mut self.bits, (bb + words + pwords) as usize, port as usize);
        }
        // Heads that wait for credits (not only for a free VC) are woken by them.
        if whole && any_bit(&self.bits, (rq + port as u32 * words) as usize, words as usize) {
            set_bit(&mut self.bits, (bb + words) as usize, port as usize);
        }
        self.mark_dirty(s);
    }

    /// The head at the front of input VC `i` starts its way through the switch: when it is
    /// there (a train may have announced it before it lands) and, if the packet before it
    /// leaves at `freed` (its tail passes then), not before. Store-and-forward also waits
    /// for the packet's tail. `sending`: called from this instant's send phase.
    #[inline(always)]
    pub(crate) fn start_front(&mut self, i: u32, freed: Option<Time>, sending: bool) {
        let now = self.now;
        let v = &self.vcs[i as usize];
        let front = self.ring[(v.buf + (v.head & v.mask)) as usize];
        let arrival = front.time;
        let (mut t, mut late) = match freed {
            Some(f) if f >= arrival => (f, true),
            _ => (arrival.max(now), false),
        };
        if self.sws[v.node as usize].mode == SwitchMode::StoreAndForward {
            // Routing starts when the whole packet is in: when its tail arrives.
            match self.tail_arrival(i) {
                None => {
                    self.t_aux[i as usize] = t;
                    self.set_state(i, AWAIT_TAIL);
                    let v = &mut self.vcs[i as usize];
                    v.flags = if late {
                        v.flags | F_FRONT_LATE
                    } else {
                        v.flags & !F_FRONT_LATE
                    };
                    return;
                }
                Some(ta) if ta > t => (t, late) = (ta, false),
                _ => {}
            }
        }
        self.start_at(i, t, late, sending);
        let node = self.vcs[i as usize].node;
        self.route_ahead(node as usize, i, front.dst & DST_MASK);
    }

    /// Arrival time of the front packet's tail, if it is in the buffer.
    fn tail_arrival(&self, i: u32) -> Option<Time> {
        let v = &self.vcs[i as usize];
        (0..v.len)
            .map(|k| (v.buf + (v.head.wrapping_add(k) & v.mask)) as usize)
            .find(|&slot| self.ring[slot].flit & TAIL != 0)
            .map(|slot| self.ring[slot].time)
    }

    /// Routing of the head at the front of input VC `i` starts at `t` (now or later); it is
    /// ready a router delay later. `late`: it came to the front because a tail left at `t`,
    /// which flit by flit happens in `t`'s send phase, so without router delay it is routed
    /// only after that instant's first switch allocation. `sending`: we are in that phase.
    #[inline(always)]
    pub(crate) fn start_at(&mut self, i: u32, t: Time, late: bool, sending: bool) {
        let now = self.now;
        self.vcs[i as usize].flags &= !F_ROUTED;
        let node = self.vcs[i as usize].node;
        let sw = &self.sws[node as usize];
        let r = sw.router_delay;
        if r == 0 && t == now {
            // Not an event at the present instant: those are being applied now, and one
            // added now would be applied or not depending on their order.
            let base = if late && !sending {
                sw.late_base()
            } else {
                sw.bits_base
            };
            self.set_state(i, READY);
            let local = self.vcs[i as usize].local;
            set_bit(&mut self.bits, base as usize, local as usize);
            self.mark_dirty(node);
            return;
        }
        let class = sw.route_class;
        // Without router delay, a head that came to the front as a tail left at `t` is
        // routed after that instant's first switch allocation, as flit by flit.
        let base = if late && r == 0 {
            sw.late_base()
        } else {
            sw.bits_base
        };
        let e = route_event(node, base, self.vcs[i as usize].local);
        self.set_state(i, ROUTING);
        self.t_aux[i as usize] = t + r;
        if t == now {
            self.q.push(class, now, e);
        } else {
            self.q.push_at(now, t + r, e);
        }
    }

    /// The router delay of a head at switch `node` has passed: `bit` files it for routing.
    /// (Its state stays `ROUTING`, its delay over: `t_aux` is now or earlier.)
    #[inline(always)]
    pub(crate) fn route_timer_done(&mut self, node: u32, bit: u32) {
        self.bits[(bit >> 6) as usize] |= 1 << (bit & 63);
        self.mark_dirty(node);
    }

    /// The tail of a train passes output VC `o` now, and a head waits for it: the output is
    /// released in this instant's send phase, as flit by flit.
    #[inline(always)]
    pub(crate) fn held_due(&mut self, o: u32) {
        if self.vcs[o as usize].owner != HELD_EV || self.held[o as usize] != self.now {
            return;
        }
        let ch = &self.chans[self.vcs[o as usize].chan as usize];
        let (node, port) = (ch.src, ch.src_port);
        let sw = &self.sws[node as usize];
        let base = (sw.bits_base + sw.words + sw.pwords) as usize;
        set_bit(&mut self.bits, base, port as usize);
        self.mark_dirty(node);
    }

    /// Everything switch `s` does at the present instant: route the heads whose router delay
    /// is over, grant free outputs to waiting heads, and send on every output that can.
    pub(crate) fn eval_switch(&mut self, s: usize) -> Res<()> {
        self.sent_phase = false;
        loop {
            let sw = &self.sws[s];
            let (words, pwords, xbar) = (sw.words as usize, sw.pwords as usize, sw.xbar);
            let rb = sw.bits_base as usize;
            let vb = rb + words;
            let sb = vb + pwords;
            for w in 0..words {
                let mut word = std::mem::take(&mut self.bits[rb + w]);
                while word != 0 {
                    let l = (w << 6) as u32 + word.trailing_zeros();
                    word &= word - 1;
                    // The last head routed in this pass (none follows in a later word).
                    let last = word == 0 && w + 1 == words;
                    #[cfg(feature = "checked")]
                    let last = last && self.lone_grant;
                    self.route_head(s, l, last)?;
                }
            }
            for w in 0..pwords {
                let mut word = std::mem::take(&mut self.bits[vb + w]);
                while word != 0 {
                    let p = (w << 6) as u32 + word.trailing_zeros();
                    word &= word - 1;
                    self.allocate(s, p);
                }
            }
            if xbar && self.sw_allocator != SwAllocator::Greedy {
                self.separable_send(s);
            } else if xbar {
                // Outputs compete for shared crossbar inputs: start at a rotating output so
                // none always has the first pick.
                // The rotation follows time, not the number of visits, so that it does not
                // depend on how many wake-ups an instant happens to have.
                let (n, period) = (self.sws[s].n_ports, self.sws[s].sa_period);
                let (at, per, nn, mut start) = self.sa_memo;
                if at != self.now || per != period || nn != n {
                    let q = self.now / period;
                    start = match u32::try_from(q) {
                        Ok(q) => q % n,
                        Err(_) => (q % n as Time) as u32,
                    };
                    self.sa_memo = (self.now, period, n, start);
                }
                let (w0, b0) = ((start >> 6) as usize, start & 63);
                if pwords == 1 {
                    // The usual case, one word: its bits from `b0` up, then those below.
                    let up = !0u64 << b0;
                    for keep in [up, !up] {
                        let mut word = self.bits[sb] & keep;
                        self.bits[sb] &= !keep;
                        while word != 0 {
                            let p = word.trailing_zeros();
                            word &= word - 1;
                            self.try_send(s, p);
                        }
                    }
                } else {
                    for pass in 0..=pwords {
                        let wi = if w0 + pass >= pwords {
                            w0 + pass - pwords
                        } else {
                            w0 + pass
                        };
                        let keep = if pass == 0 {
                            !0u64 << b0
                        } else if pass == pwords {
                            !(!0u64 << b0)
                        } else {
                            !0u64
                        };
                        let mut word = self.bits[sb + wi] & keep;
                        self.bits[sb + wi] &= !keep;
                        while word != 0 {
                            let p = (wi << 6) as u32 + word.trailing_zeros();
                            word &= word - 1;
                            self.try_send(s, p);
                        }
                    }
                }
            } else {
                for w in 0..pwords {
                    let mut word = std::mem::take(&mut self.bits[sb + w]);
                    while word != 0 {
                        let p = (w << 6) as u32 + word.trailing_zeros();
                        word &= word - 1;
                        self.try_send(s, p);
                    }
                }
            }
            if !self.sent_phase {
                self.sent_phase = true;
                // Heads that came to the front as a tail left at this instant (no router
                // delay) are routed now, after the first allocation, as flit by flit.
                let lb = self.sws[s].late_base() as usize;
                for w in 0..words {
                    let x = std::mem::take(&mut self.bits[lb + w]);
                    self.bits[rb + w] |= x;
                }
            }
            // Sending a tail may free an output for a waiting head, or bring the next head to
            // the front with no router delay: go round again for those.
            if !any_bit(&self.bits, rb, words + pwords) {
                return Ok(());
            }
        }
    }

    /// Sets the state of switch input VC `i`, keeping the switch's set of inputs being
    /// routed.
    #[inline]
    pub(crate) fn set_state(&mut self, i: u32, st: u8) {
        let v = &mut self.vcs[i as usize];
        let was = matches!(v.state, ROUTING | READY);
        let is = matches!(st, ROUTING | READY);
        v.state = st;
        if was != is && v.flags & F_UNWATCHED == 0 {
            let l = v.local as usize;
            let word = &mut self.pending[v.node as usize * self.pend_words as usize + (l >> 6)];
            *word ^= 1 << (l & 63);
        }
    }

    /// Routes the head at local input `l` of switch `s` and files its requests. `last`: no
    /// other head is routed after it in this pass.
    fn route_head(&mut self, s: usize, l: u32, last: bool) -> Res<()> {
        let sw = &self.sws[s];
        let (in_base, words, req_base, bits_base) = (sw.in_base, sw.words, sw.req_base, sw.bits_base);
        let i = self.sw_in[(in_base + l) as usize];
        let v = &self.vcs[i as usize];
        let front = self.ring[(v.buf + (v.head & v.mask)) as usize];
        let (pid, dst) = (front.flit & PID, front.dst & DST_MASK);
        if v.flags & F_ROUTED != 0 {
            // Routed ahead, when it reached the front: its outputs are kept with it.
            self.vcs[i as usize].flags &= !F_ROUTED;
        } else {
            let want = self.routing_step(s, i, dst, pid).map_err(|err| {
                Box::new(SimError::Route {
                    time: self.now,
                    src: self.pkts[pid as usize].src,
                    dst,
                    err,
                })
            })?;
            self.keep_want(i, want);
        }
        self.set_state(i, WAITING);
        // One admissible output (the usual case) is asked for as it is; among several, the
        // selection policy picks one that is free, or the head asks for all.
        let one = self.vcs[i as usize].want_port;
        let chosen = if one != u16::MAX {
            Some(one)
        } else {
            let len = self.pkts[pid as usize].len;
            self.select(s, i, len)
        };
        let vb = (bits_base + words) as usize;
        match chosen {
            Some(p) => {
                let rq = (req_base + p as u32 * words) as usize;
                // The last head routed in this pass, asking for one output that no other head
                // asks for and that is not up for allocation yet: the allocation phase would
                // look at this output for this head alone, so it does so now.
                let alone = last
                    && one != u16::MAX
                    && self.bits[vb + (p as usize >> 6)] & (1 << (p & 63)) == 0
                    && !any_bit(&self.bits, rq, words as usize);
                if alone {
                    // Its request is filed only if it has to wait.
                    if !self.allocate_alone(s, p as u32, l, i, pid) {
                        set_bit(&mut self.bits, rq, l as usize);
                    }
                } else {
                    set_bit(&mut self.bits, rq, l as usize);
                    set_bit(&mut self.bits, vb, p as usize);
                }
            }
            None => {
                for p in self.wants[i as usize].ports.iter() {
                    set_bit(&mut self.bits, (req_base + p as u32 * words) as usize, l as usize);
                    set_bit(&mut self.bits, vb, p as usize);
                }
            }
        }
        Ok(())
    }

    /// The routing step for the head of packet `pid` to host `dst` at the front of input VC
    /// `i` of switch `s` (reads only).
    #[inline(always)]
    fn routing_step(&self, s: usize, i: u32, dst: u32, pid: u32) -> Result<Want, RouteError> {
        let v = &self.vcs[i as usize];
        // The packet record only for routes carried in the packet.
        let sym: &[u16] = if self.route_stride == 0 {
            &[]
        } else {
            let pkt = &self.pkts[pid as usize];
            let base = pid as usize * self.route_stride;
            &self.route_store[base + pkt.route_pos as usize..base + pkt.route_len as usize]
        };
        let at = At {
            switch: s as u32,
            in_port: v.in_port,
            in_vc: v.vc,
            in_class: if self.uses_class {
                self.chans[v.chan as usize].class
            } else {
                0
            },
        };
        self.routing.route(self.fab, at, Header { dst, sym })
    }

    /// Keeps the routed head's admissible outputs with input VC `i`.
    #[inline(always)]
    fn keep_want(&mut self, i: u32, want: Want) {
        let single = want.ports.len() == 1;
        let v = &mut self.vcs[i as usize];
        v.want_lo = want.vc_lo;
        v.want_hi = want.vc_hi;
        v.want_port = if single {
            want.ports.0.trailing_zeros() as u16
        } else {
            u16::MAX
        };
        if !single {
            self.wants[i as usize] = want;
        }
    }

    /// A head to host `dst` has just become the front of input VC `i` of switch `s` (from a
    /// sender that has it in hand, on landing, or as the packet before it left): where the
    /// route does not depend on header symbols (which later header operations could
    /// change), it is taken now, while its slot is at hand, so that the switch's evaluation
    /// can fetch the output ahead and trains can tell that the head will not compete with
    /// them (`F_ROUTED`). The router delay still runs before the head asks for an output. A
    /// failing step is left to the usual path, which reports it at the routing time.
    #[inline(always)]
    pub(crate) fn route_ahead(&mut self, s: usize, i: u32, dst: u32) {
        if self.route_stride != 0 {
            return;
        }
        if let crate::routing::Routing::Dor(d) = &self.routing
            && (s as u32) < self.fab.stage_base
        {
            // Dimension-order routing has one output: kept as it is, without a port set.
            let v = &mut self.vcs[i as usize];
            if let Some((port, lo, hi)) = d.route_port(s as u32, v.in_port, v.vc, dst) {
                (v.want_port, v.want_lo, v.want_hi) = (port, lo, hi);
                v.flags |= F_ROUTED;
            }
            return;
        }
        if let Ok(want) = self.routing_step(s, i, dst, 0) {
            self.keep_want(i, want);
            self.vcs[i as usize].flags |= F_ROUTED;
        }
    }

    /// A free output VC of channel `c` among `lo..=hi` with at least `need` credits (0: any).
    #[inline(always)]
    fn free_vc(&mut self, pi: usize, lo: u8, hi: u8, need: u32) -> Option<u8> {
        let port = &self.ports[pi];
        let (base, credit) = (port.vc_base, port.credit);
        let hi = hi.min(port.nvc - 1);
        let mut vv = lo;
        while vv <= hi {
            if self.vc_free(base + vv as u32, need, credit) {
                return Some(vv);
            }
            vv += 1;
        }
        None
    }

    /// Whether output VC `o` is free, with at least `need` credits (0: any) where the
    /// channel has credits.
    #[inline(always)]
    fn vc_free(&mut self, o: u32, need: u32, credit: bool) -> bool {
        let owner = self.vcs[o as usize].owner;
        if owner == HELD || owner == HELD_EV {
            self.look_at_held(o, owner);
        }
        self.vcs[o as usize].owner == NONE && (need == 0 || !credit || self.has_credits(o, need))
    }

    /// [`Self::free_vc`] for input VC `i` where VCs are chosen round robin
    /// ([`crate::fabric::VcChoice::RoundRobin`]): the first free one after the VC `i` was
    /// last given if that was one of these, wrapping within `lo..=hi`; else from `lo`.
    #[inline(never)]
    fn free_vc_rr(&mut self, pi: usize, i: u32, lo: u8, hi: u8, need: u32) -> Option<u8> {
        let port = &self.ports[pi];
        let (base, credit) = (port.vc_base, port.credit);
        let hi = hi.min(port.nvc - 1) as u32;
        let lo = lo as u32;
        if lo > hi {
            return None;
        }
        let last = self.va_last[i as usize];
        let start = if last != NONE && last >= base + lo && last < base + hi {
            last - base + 1
        } else {
            lo
        };
        let n = hi - lo + 1;
        for j in 0..n {
            let vv = start + j;
            let vv = if vv > hi { vv - n } else { vv };
            if self.vc_free(base + vv, need, credit) {
                return Some(vv as u8);
            }
        }
        None
    }

    /// [`Self::free_vc`], or [`Self::free_vc_rr`] for input VC `i` if `rr`.
    #[inline(always)]
    fn free_vc_for(&mut self, rr: bool, pi: usize, i: u32, lo: u8, hi: u8, need: u32) -> Option<u8> {
        if rr {
            self.free_vc_rr(pi, i, lo, hi, need)
        } else {
            self.free_vc(pi, lo, hi, need)
        }
    }

    /// Output VC `o` is held by a train whose tail passes at `end`, and a head looks at it:
    /// it is free if that is past (or now, after this instant's first send phase, where the
    /// tail went flit by flit); else the release must now happen on time, for this head.
    #[inline]
    fn look_at_held(&mut self, o: u32, owner: u32) {
        let end = self.held[o as usize];
        if end < self.now || (end == self.now && self.sent_phase) {
            self.vcs[o as usize].owner = NONE;
        } else if owner == HELD {
            self.release_on_time(o, end);
        }
    }

    /// Output VC `o`, held by a train whose tail passes at `end` (now or later), is wanted:
    /// it is released then by an event (or in this instant's send phase).
    #[inline(never)]
    fn release_on_time(&mut self, o: u32, end: Time) {
        self.vcs[o as usize].owner = HELD_EV;
        if end == self.now {
            self.held_due(o);
        } else {
            self.q.push_at(self.now, end, ev(K_TAILGONE, o, 0));
        }
    }

    /// Credits a head needs on an output VC before it may be granted: none (wormhole), the
    /// packet's length (cut-through, store-and-forward), or the whole buffer where the VC
    /// waits for the last tail's credit.
    #[inline]
    fn need(mode: SwitchMode, tail_credit: bool, len: u32) -> u32 {
        if tail_credit {
            NEED_ALL
        } else if mode == SwitchMode::Wormhole {
            0
        } else {
            len
        }
    }

    /// [`Self::need`] of packet `pid`'s head; a wormhole switch that releases VCs with the
    /// tail needs nothing, and then the packet is not read.
    #[inline(always)]
    fn need_of(&self, mode: SwitchMode, tail_credit: bool, pid: u32) -> u32 {
        if mode == SwitchMode::Wormhole && !tail_credit {
            0
        } else {
            Self::need(mode, tail_credit, self.pkts[pid as usize].len)
        }
    }

    /// The selection policy: which of the admissible outputs, among those free now, the head
    /// at input VC `i` asks for. `None` if none is free (it then waits for all).
    fn select(&mut self, s: usize, i: u32, len: u32) -> Option<u16> {
        let sw = &self.sws[s];
        let (port_base, selection, rr) = (sw.port_base, sw.selection, sw.vc_rr);
        let want = self.wants[i as usize];
        let need = Self::need(sw.mode, sw.tail_credit, len);
        let free = |this: &mut Self, p: u16| -> Option<u32> {
            let pi = (port_base + p as u32) as usize;
            if this.ports[pi].out == NONE {
                return None;
            }
            this.free_vc_for(rr, pi, i, want.vc_lo, want.vc_hi, need)
                .map(|vv| {
                    let o = this.ports[pi].vc_base + vv as u32;
                    this.credits_now(o)
                })
        };
        match selection {
            Selection::FirstFree => want.ports.iter().find(|&p| free(self, p).is_some()),
            Selection::LeastOccupied => {
                let mut best: Option<(u32, u16)> = None;
                for p in want.ports.iter() {
                    if let Some(cr) = free(self, p)
                        && best.is_none_or(|b| cr > b.0)
                    {
                        best = Some((cr, p));
                    }
                }
                best.map(|b| b.1)
            }
            Selection::RoundRobin => {
                let last = self.sel_rr[i as usize];
                let pick = want
                    .ports
                    .iter()
                    .find(|&p| p > last && free(self, p).is_some())
                    .or_else(|| want.ports.iter().find(|&p| p <= last && free(self, p).is_some()));
                if let Some(p) = pick {
                    self.sel_rr[i as usize] = p;
                }
                pick
            }
            Selection::Random => {
                let mut cands = PortSet::EMPTY;
                for p in want.ports.iter() {
                    if free(self, p).is_some() {
                        cands.insert(p);
                    }
                }
                let n = cands.len();
                if n == 0 {
                    return None;
                }
                let k = self.sw_rng[s].below(n as u64) as usize;
                cands.iter().nth(k)
            }
        }
    }

    /// Grants free VCs of output `p` of switch `s` to waiting heads, in round-robin order
    /// from the input after the last one granted (or oldest packet first).
    fn allocate(&mut self, s: usize, p: u32) {
        let sw = &self.sws[s];
        let (port_base, req_base, words, n_in, in_base, mode, arb, tail_credit, rr) = (
            sw.port_base,
            sw.req_base,
            sw.words,
            sw.n_in,
            sw.in_base,
            sw.mode,
            sw.arbitration,
            sw.tail_credit,
            sw.vc_rr,
        );
        let pi = (port_base + p) as usize;
        let (c, single_vc) = (self.ports[pi].out, self.ports[pi].nvc == 1);
        if c == NONE {
            return;
        }
        let rq = (req_base + p * words) as usize;
        let nw = words as usize;
        if single_vc && mode == SwitchMode::Wormhole && arb == Arbitration::RoundRobin && !tail_credit {
            // One VC, granted without credits: it is free or not for every requester alike,
            // and the first requester in round-robin order that may use it has it. (The VC
            // is looked at only if there is such a requester, as the general scan does.)
            let mut scan = RrScan::new(rq, nw, self.ports[pi].va_rr, n_in);
            let mut first = None;
            while let Some(l) = scan.next(&self.bits) {
                let i = self.sw_in[(in_base + l) as usize];
                if self.vcs[i as usize].want_lo == 0 {
                    first = Some((l, i));
                    break;
                }
            }
            let Some((l, i)) = first else { return };
            let o = self.ports[pi].vc_base;
            let owner = self.vcs[o as usize].owner;
            if owner == HELD || owner == HELD_EV {
                self.look_at_held(o, owner);
            }
            if self.vcs[o as usize].owner == NONE {
                self.grant::<true>(s, p, l, i, c, 0);
            }
            return;
        }
        loop {
            let mut grant: Option<(u32, u32, u8)> = None;
            let mut best_created = Time::MAX;
            let mut scan = RrScan::new(rq, nw, self.ports[pi].va_rr, n_in);
            'scan: {
                while let Some(l) = scan.next(&self.bits) {
                    let i = self.sw_in[(in_base + l) as usize];
                    let v = &self.vcs[i as usize];
                    let (vc_lo, vc_hi) = (v.want_lo, v.want_hi);
                    // The packet itself matters only to cut-through and oldest-first.
                    let pid = if mode != SwitchMode::Wormhole || arb == Arbitration::OldestFirst {
                        self.ring[(v.buf + (v.head & v.mask)) as usize].flit & PID
                    } else {
                        0
                    };
                    let need = self.need_of(mode, tail_credit, pid);
                    let Some(vv) = self.free_vc_for(rr, pi, i, vc_lo, vc_hi, need) else {
                        continue;
                    };
                    match arb {
                        Arbitration::RoundRobin => {
                            grant = Some((l, i, vv));
                            break 'scan;
                        }
                        Arbitration::OldestFirst => {
                            let created = self.pkts[pid as usize].created;
                            if created < best_created {
                                best_created = created;
                                grant = Some((l, i, vv));
                            }
                        }
                    }
                }
            }
            let Some((l, i, vv)) = grant else { return };
            self.grant::<true>(s, p, l, i, c, vv);
            if single_vc {
                // The only VC of this output is taken now.
                return;
            }
        }
    }

    /// [`Self::allocate`] for output `p` of switch `s` when the head at local input `l`
    /// (input VC `i`, packet `pid`) is its only requester: it has a free VC of its range, or
    /// it waits. Whatever the arbitration, a lone requester is the one chosen. Returns whether
    /// it was granted (its request is not filed).
    #[inline(always)]
    fn allocate_alone(&mut self, s: usize, p: u32, l: u32, i: u32, pid: u32) -> bool {
        let sw = &self.sws[s];
        let (pi, mode, tail_credit, rr) = ((sw.port_base + p) as usize, sw.mode, sw.tail_credit, sw.vc_rr);
        let c = self.ports[pi].out;
        if c == NONE {
            return false;
        }
        let v = &self.vcs[i as usize];
        let (vc_lo, vc_hi) = (v.want_lo, v.want_hi);
        let need = self.need_of(mode, tail_credit, pid);
        #[cfg(feature = "checked")]
        {
            self.c.lone_grants += 1;
        }
        match self.free_vc_for(rr, pi, i, vc_lo, vc_hi, need) {
            Some(vv) => {
                self.grant::<false>(s, p, l, i, c, vv);
                true
            }
            None => false,
        }
    }

    /// Grants VC `vv` of output `p` (channel `c`) to the head at local input `l` (input VC
    /// `i`). `FILED`: its requests are filed (and are withdrawn now).
    #[inline(always)]
    fn grant<const FILED: bool>(&mut self, s: usize, p: u32, l: u32, i: u32, c: u32, vv: u8) {
        let sw = &self.sws[s];
        let (req_base, words, port_base, bits_base, pwords) =
            (sw.req_base, sw.words, sw.port_base, sw.bits_base, sw.pwords);
        let pi = (port_base + p) as usize;
        let o = self.ports[pi].vc_base + vv as u32;
        if sw.vc_rr {
            self.va_last[i as usize] = o;
        }
        self.vcs[o as usize].owner = i;
        let v = &mut self.vcs[i as usize];
        v.fwd = o;
        v.fwd_port = p as u16;
        debug_assert_eq!(v.state, WAITING);
        v.state = ACTIVE;
        let front = &mut self.ring[(v.buf + (v.head & v.mask)) as usize];
        let flit = front.flit;
        // Count the hop in the head's slot; the packet record takes the count when the head
        // leaves the fabric, when it goes by an arrival event, or every 256 hops.
        let flush = front.dst >= 255 << DST_BITS;
        if flush {
            front.dst &= DST_MASK;
        } else {
            front.dst += 1 << DST_BITS;
        }
        if FILED {
            if v.want_port != u16::MAX {
                let q = v.want_port as u32;
                clear_bit(&mut self.bits, (req_base + q * words) as usize, l as usize);
            } else {
                for q in self.wants[i as usize].ports.iter() {
                    clear_bit(&mut self.bits, (req_base + q as u32 * words) as usize, l as usize);
                }
            }
        }
        self.ports[(port_base + p) as usize].va_rr = l;
        let pid = flit & PID;
        if flush {
            self.pkts[pid as usize].hops += 256;
        }
        if self.header_ops || self.ports[pi].delete_header {
            self.header_op(s, p, i, c, pid);
        }
        set_bit(&mut self.bits, (bits_base + words + pwords) as usize, p as usize);
    }

    /// Releases the output VCs among `vc_base..vc_base + nvc` (of output `p` of switch `s`)
    /// whose train's tail has passed by `now`: before anything else looks at the output.
    #[inline(always)]
    pub(crate) fn release_passed_trains(&mut self, s: usize, p: u32, vc_base: u32, nvc: u32, now: Time) {
        let mut w = vc_base;
        while w < vc_base + nvc {
            let owner = self.vcs[w as usize].owner;
            if (owner == HELD || owner == HELD_EV) && self.held[w as usize] <= now {
                self.release_out(s, p, w);
            }
            w += 1;
        }
    }

    /// The input VC holding output VC `o` with its front flit here at `now`: `Ok(i)`; else
    /// `Err(t)`, `t` when that flit arrives (announced by a train but not here yet), or
    /// `Time::MAX` if no live worm holds `o`.
    #[inline(always)]
    pub(crate) fn ready_front(&self, o: u32, now: Time) -> Result<u32, Time> {
        let i = self.vcs[o as usize].owner;
        if i >= HELD_EV {
            return Err(Time::MAX);
        }
        let iv = &self.vcs[i as usize];
        if iv.len == 0 || iv.state != ACTIVE {
            return Err(Time::MAX);
        }
        let front_in = self.ring[(iv.buf + (iv.head & iv.mask)) as usize].time;
        if front_in > now {
            return Err(front_in);
        }
        Ok(i)
    }

    /// The head at input VC `i` was granted output `p` (channel `c`): the routing's header
    /// operation and the link's header deletion happen as it leaves. Stripped header flits
    /// are not sent on; their buffer slots are freed now.
    #[cold]
    fn header_op(&mut self, s: usize, p: u32, i: u32, c: u32, pid: u32) {
        let v = &self.vcs[i as usize];
        // Header flits may be stripped: the hop count leaves the head's slot first.
        let front = &mut self.ring[(v.buf + (v.head & v.mask)) as usize];
        self.pkts[pid as usize].hops += (front.dst >> DST_BITS) as u16;
        front.dst &= DST_MASK;
        let ch_in = &self.chans[v.chan as usize];
        let at = At {
            switch: s as u32,
            in_port: self.fab.channels[v.chan as usize].dst_port,
            in_vc: v.vc,
            in_class: ch_in.class,
        };
        let pkt = &self.pkts[pid as usize];
        let base = pid as usize * self.route_stride;
        let sym = &self.route_store[base + pkt.route_pos as usize..base + pkt.route_len as usize];
        let mut op = self
            .routing
            .header_op(self.fab, at, Header { dst: pkt.dst, sym }, p as u16);
        if self.tm(c).delete_header {
            op.advance += 1;
            op.strip += self.routing.header_width();
        }
        let pkt = &mut self.pkts[pid as usize];
        pkt.route_pos = (pkt.route_pos + op.advance as u16).min(pkt.route_len);
        if let Some(x) = op.set
            && pkt.route_pos < pkt.route_len
        {
            let at = base + pkt.route_pos as usize;
            self.route_store[at] = x;
        }
        // A packet's last flit is never stripped (a packet of header bytes only keeps its
        // last one), nor the forced tail of a cut packet.
        let strip = (op.strip as u32).min(self.pkts[pid as usize].len.saturating_sub(1));
        for _ in 0..strip {
            let v = &mut self.vcs[i as usize];
            let slot = (v.buf + (v.head & v.mask)) as usize;
            let flit = self.ring[slot].flit;
            if v.len > 0 && flit & TAIL != 0 {
                break;
            }
            if v.len == 0 {
                // Not here yet: removed as it lands.
                v.strip_pending += 1;
                v.flags |= F_HEAD_NEXT;
            } else {
                // Here, or announced by a train: leaves now, its credit going back from the
                // moment it lands.
                let t = self.ring[slot].time.max(self.now);
                v.head = v.head.wrapping_add(1);
                v.len -= 1;
                let c_in = v.chan;
                let pace = self.tm(c_in).land_pace();
                self.return_credits(i, 1, t, pace, t);
                let v = &mut self.vcs[i as usize];
                if v.len > 0 {
                    let front = (v.buf + (v.head & v.mask)) as usize;
                    self.ring[front].flit |= HEAD;
                } else {
                    v.flags |= F_HEAD_NEXT;
                }
            }
            self.pkts[pid as usize].len -= 1;
            self.c.flits_stripped += 1;
        }
    }

    /// Output `p` of switch `s` sends what it can: the next flit, or a train of flits.
    fn try_send(&mut self, s: usize, p: u32) {
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
        self.release_passed_trains(s, p, vc_base, nvc, now);
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
        // The VCs in round-robin order from the one after the last that sent.
        let mut vv = rr;
        for _ in 0..nvc {
            vv = if vv + 1 >= nvc { 0 } else { vv + 1 };
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
        let ch = &self.chans[c as usize];
        (0..ch.nvc as u32).any(|vv| {
            let ov = &self.vcs[(ch.vc_base + vv) as usize];
            ov.owner < HELD_EV && {
                let iv = &self.vcs[ov.owner as usize];
                iv.len > 0 && iv.state == ACTIVE
            }
        })
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
        // No trains on a channel that tokens interleave with, nor out of a token channel's
        // buffer (its slots must free at their own times, token by token).
        let no_trains = self.tm(c).no_trains || v.flags & F_TOKENS != 0;
        // A separable allocator sends one flit a match (trains through other switches, with
        // one VC per input, are exact as they are).
        if self.spec.params.trains
            && !ends_tail
            && len > 1
            && !no_trains
            && (self.sw_allocator == SwAllocator::Greedy || !self.sws[s].xbar)
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
    fn tail_later(
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
    fn hold_out(&mut self, s: usize, p: u32, o: u32, end: Time, class: Option<crate::engine::queue::Class>) {
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
    fn start_next(&mut self, i: u32, freed: Time) {
        self.start_front(i, Some(freed), true);
    }

    /// Whether the channel of input VC `i` has a live VC (one whose front packet waits for
    /// or holds an output; `ROUTING_TOO`: or is being routed) other than `i` and `also`: it
    /// would compete (or may come to compete) for the crossbar input.
    #[inline(always)]
    fn other_live_vc<const ROUTING_TOO: bool>(&self, i: u32, also: u32) -> bool {
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
    fn routing_horizon(
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
    fn send_pair(&mut self, s: usize, p: u32, c: u32, (ia, oa): (u32, u32), ob: u32) -> bool {
        let ib = self.vcs[ob as usize].owner;
        if ib >= HELD_EV {
            return false;
        }
        let now = self.now;
        let tm = *self.tm(c);
        let u = tm.flit_time;
        if !self.fail_at.is_empty()
            || !self.spec.params.trains
            || tm.no_trains
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
    fn train_horizon(&mut self, s: usize, p: u32, c: u32, o: u32, i: u32, unit: Time) -> u32 {
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
        for w in vc_base..vc_base + nvc {
            // A worm on another VC (not a train's tail passing) competes for the channel.
            if w != o && self.vcs[w as usize].owner < HELD_EV {
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
    fn train_len(now: Time, h: Time, unit: Time) -> u32 {
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
    fn train_horizon_rivals(&mut self, s: usize, p: u32, c: u32, o: u32, i: u32, unit: Time) -> u32 {
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
    fn xbar_rivals(&self, s: usize, i: u32, p: u32, unit: Time) -> Option<(bool, Time)> {
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
    fn turns_known(&self, s: usize, unit: Time) -> bool {
        let sw = &self.sws[s];
        sw.xbar && sw.speedup == 1 && sw.sa_period == unit
    }

    /// For a head being routed to output `q` from the crossbar input of a train on output
    /// `p` of switch `s` (flit time `unit`), ready now or at `t`: where the train must stop
    /// for it. With turns known, the first flit time it could have the input; else at `t`
    /// (`None` if that is now). (Out of line: such heads are rare.)
    #[inline(never)]
    fn xbar_rival_at(&self, s: usize, p: u32, q: u32, ready: bool, t: Time, unit: Time) -> Option<Time> {
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
    fn xbar_turn(&self, s: usize, p: u32, q: u32, j0: Time, unit: Time) -> Time {
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
    fn release(&mut self, s: usize, p: u32, i: u32, o: u32) {
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
            self.start_front(i, Some(self.now), true);
        }
    }

    /// Output VC `o` (port `p` of switch `s`) is free: a head waiting for it may have it.
    pub(crate) fn release_out(&mut self, s: usize, p: u32, o: u32) {
        self.vcs[o as usize].owner = NONE;
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

/// The requesters of one output in round-robin order: the local inputs whose bits are set
/// in the `nw` request words at `rq`, starting after `last` (the one granted last, `NONE`:
/// none yet) and wrapping at `n_in`. Each word is read when the scan reaches it; the bits
/// are passed to every step, so the caller may change the engine's state in between.
struct RrScan {
    rq: usize,
    nw: usize,
    /// Word and bit the scan starts at.
    w0: usize,
    b0: u32,
    /// Passes begun: the rest of `w0`, the other words, then the beginning of `w0`.
    pass: usize,
    /// The word of the current pass and its bits not yet given out.
    wi: usize,
    word: u64,
}

impl RrScan {
    #[inline(always)]
    fn new(rq: usize, nw: usize, last: u32, n_in: u32) -> RrScan {
        let start = if last == NONE || last + 1 >= n_in {
            0
        } else {
            last + 1
        };
        RrScan {
            rq,
            nw,
            w0: (start >> 6) as usize,
            b0: start & 63,
            pass: 0,
            wi: 0,
            word: 0,
        }
    }

    /// The next requester, as a local input index.
    #[inline(always)]
    fn next(&mut self, bits: &Arr<u64>) -> Option<u32> {
        while self.word == 0 {
            if self.pass > self.nw {
                return None;
            }
            let p = self.pass;
            self.pass += 1;
            self.wi = if self.w0 + p >= self.nw {
                self.w0 + p - self.nw
            } else {
                self.w0 + p
            };
            let keep = if p == 0 {
                !0u64 << self.b0
            } else if p == self.nw {
                !(!0u64 << self.b0)
            } else {
                !0u64
            };
            self.word = bits[self.rq + self.wi] & keep;
        }
        let l = (self.wi << 6) as u32 + self.word.trailing_zeros();
        self.word &= self.word - 1;
        Some(l)
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Sim;

    /// Two VCs a head may choose between, on a loaded mesh: worms share channels.
    const NET: &str = r#"
[sim]
warmup = "300 cycles"
measure = "3000 cycles"
check = true
[topology]
kind = "mesh"
k = [4, 4]
[channel]
vcs = 2
buffer = 6
latency = "1 cycles"
credit_delay = "2 cycles"
[switch]
router_delay = "2 cycles"
[traffic]
load = 0.35
packet_size = 6
"#;

    /// The result (without its event count), the interleaved trains sent and the trains
    /// sent past a crossbar rival.
    fn run(set: &[String]) -> (String, u64, u64) {
        let spec = crate::config::load_str("pairs.toml", NET, std::path::Path::new("."), set).unwrap();
        let mut sim = Sim::new(&spec).unwrap();
        let out = sim.run(&mut |_| {}).unwrap();
        let mut r = sim.result(&out);
        r.events = 0;
        (
            serde_json::to_string(&r).unwrap(),
            sim.c.pair_trains,
            sim.c.turn_trains,
        )
    }

    /// Allocating a lone head's output as it is routed gives what the allocation phase
    /// gives, whatever the VCs, switching mode, arbitration and router delay.
    #[test]
    fn lone_grants_happen_and_change_nothing() {
        let cases = [
            vec![],
            vec!["channel.vcs=1", "traffic.load=0.25"],
            vec![
                "switch.mode=\"cut-through\"",
                "switch.arbitration=\"oldest-first\"",
            ],
            vec![
                "switch.mode=\"store-and-forward\"",
                "channel.buffer=8",
                "traffic.load=0.2",
            ],
            vec![
                "switch.router_delay=\"0 cycles\"",
                "channel.vcs=1",
                "traffic.load=0.25",
            ],
            vec![
                "switch.arbitration=\"oldest-first\"",
                "switch.router_delay=\"0 cycles\"",
            ],
        ];
        for case in cases {
            let set: Vec<String> = case.iter().map(|s| s.to_string()).collect();
            let spec = crate::config::load_str("lone.toml", NET, std::path::Path::new("."), &set).unwrap();
            let result = |lone: bool| {
                let mut sim = Sim::new(&spec).unwrap();
                sim.lone_grant = lone;
                let out = sim.run(&mut |_| {}).unwrap();
                let mut r = sim.result(&out);
                r.events = 0;
                (serde_json::to_string(&r).unwrap(), sim.c.lone_grants)
            };
            let ((with, n), (without, none)) = (result(true), result(false));
            assert!(n > 1000, "{case:?}: only {n} lone grants");
            assert_eq!(none, 0);
            assert!(with == without, "{case:?}: lone grants change the result");
        }
    }

    #[test]
    fn interleaved_trains_happen_and_change_nothing() {
        for speedup in [1, 2] {
            let set = vec![format!("switch.speedup={speedup}")];
            let (trains, pairs, _) = run(&set);
            let mut flat = set.clone();
            flat.push("sim.trains=false".into());
            let (flits, none, _) = run(&flat);
            assert!(pairs > 100, "speed-up {speedup}: only {pairs} interleaved trains");
            assert_eq!(none, 0);
            assert!(
                trains == flits,
                "speed-up {speedup}: interleaved trains change the result"
            );
        }
    }

    /// Two VCs of one input port, each holding an output, share the crossbar input: flit by
    /// flit they take it in the turns the send phase's rotation gives them, and trains run
    /// through those turns exactly. Also on links with a longer propagation delay, with
    /// longer packets and a longer router delay (so that trains may run longer than the
    /// turns), and with cut-through.
    #[test]
    fn crossbar_turns_happen_and_change_nothing() {
        for extra in [
            vec![],
            vec!["channel.latency=\"3 cycles\""],
            vec!["traffic.packet_size=12", "channel.buffer=12", "traffic.load=0.3"],
            vec![
                "switch.router_delay=\"6 cycles\"",
                "traffic.packet_size=10",
                "channel.buffer=10",
            ],
            vec![
                "switch.mode=\"cut-through\"",
                "channel.buffer=8",
                "traffic.load=0.3",
            ],
        ] {
            let set: Vec<String> = extra.iter().map(|x| x.to_string()).collect();
            let (trains, _, turns) = run(&set);
            let mut flat = set.clone();
            flat.push("sim.trains=false".into());
            let (flits, _, none) = run(&flat);
            assert!(
                turns > 100,
                "{extra:?}: only {turns} trains past a crossbar rival"
            );
            assert_eq!(none, 0);
            assert!(trains == flits, "{extra:?}: crossbar turns change the result");
        }
    }

    /// BookSim2's allocation, as reef models it, changes nothing about trains: with the VCs
    /// given in turn, a VC-reuse delay and separable switch allocators, trains give what
    /// flit by flit gives (and the invariant checks hold, `check = true`).
    #[test]
    fn vcs_in_turn_and_reuse_delay_keep_trains_exact() {
        for extra in [
            vec!["switch.vc_choice=\"round-robin\""],
            vec!["switch.vc_reuse_delay=\"2 cycles\""],
            vec![
                "switch.vc_choice=\"round-robin\"",
                "switch.vc_reuse_delay=\"3 cycles\"",
                "channel.vcs=1",
                "traffic.load=0.25",
            ],
            vec![
                "switch.vc_choice=\"round-robin\"",
                "switch.vc_reuse_delay=\"2 cycles\"",
                "switch.vc_release=\"tail-credit\"",
                "traffic.load=0.2",
            ],
            vec!["switch.allocator=\"islip\""],
            vec![
                "switch.allocator=\"separable-input-first\"",
                "switch.vc_choice=\"round-robin\"",
                "switch.vc_reuse_delay=\"2 cycles\"",
            ],
            vec![
                "switch.allocator=\"separable-output-first\"",
                "switch.speedup=2",
                "channel.vcs=4",
            ],
        ] {
            let set: Vec<String> = extra.iter().map(|x| x.to_string()).collect();
            let (trains, _, _) = run(&set);
            let mut flat = set.clone();
            flat.push("sim.trains=false".into());
            let (flits, _, _) = run(&flat);
            assert!(trains == flits, "{extra:?}: trains change the result");
            let (plain, _, _) = run(&[]);
            assert!(trains != plain, "{extra:?}: changes nothing");
        }
    }

    /// A hand-worked case of [`Sim::free_vc_rr`]: input VC `i` was last given VC `v` of an
    /// output of 4 VCs; the next head it holds gets the first free VC after `v`, wrapping
    /// within its range, and the lowest of its range when it was last given another output.
    #[test]
    fn vcs_in_turn_start_after_the_last_one_given() {
        let set = vec![
            "channel.vcs=4".to_string(),
            "switch.vc_choice=\"round-robin\"".to_string(),
        ];
        let spec = crate::config::load_str("rr.toml", NET, std::path::Path::new("."), &set).unwrap();
        let mut sim = Sim::new(&spec).unwrap();
        let sw = sim.sws[5];
        // An output of switch 5 that leads to another switch, and an input VC of it.
        let (pi, other) = {
            let mut ps = (sw.port_base..sw.port_base + sw.n_ports)
                .map(|p| p as usize)
                .filter(|&p| sim.ports[p].out != crate::engine::NONE && sim.ports[p].nvc == 4);
            (ps.next().unwrap(), ps.next().unwrap())
        };
        let i = sim.sw_in[sw.in_base as usize];
        let base = sim.ports[pi].vc_base;
        // None given yet: the lowest.
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(0));
        sim.va_last[i as usize] = base + 1;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(2));
        // VC 2 taken: the next free after it.
        sim.vcs[(base + 2) as usize].owner = 12345;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(3));
        // The last one given was the top of the range: wrap to its bottom.
        sim.va_last[i as usize] = base + 3;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(0));
        assert_eq!(sim.free_vc_rr(pi, i, 1, 3, 0), Some(1));
        // Within a range (a dateline class) the turn wraps at its top: 1 was last, 2 is
        // taken, so 1 again.
        sim.va_last[i as usize] = base + 1;
        assert_eq!(sim.free_vc_rr(pi, i, 1, 2, 0), Some(1));
        // Last given a VC of another output: from the bottom of the range.
        sim.va_last[i as usize] = sim.ports[other].vc_base + 1;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(0));
        // Everything taken: none.
        for v in 0..4 {
            sim.vcs[(base + v) as usize].owner = 12345;
        }
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), None);
    }
}

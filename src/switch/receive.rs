//! A switch's inputs: flits landing in an input VC's ring (header symbols stripped where a
//! link deletes them), the buffer-full check, credits back to the switch's outputs, and a
//! head reaching the front of its VC, from when its router delay runs.

use crate::engine::*;
use crate::fabric::{SwAllocator, SwitchMode};
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
    pub(super) fn receive_stripping(&mut self, o: u32, first: u32, k: u32, ends_tail: bool) -> Res<()> {
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
        self.ring_put::<STRIDED>(o, first, dst, k, ends_tail, a0, stride, self.flit_delay);
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
    /// (the tail lands its own unit, not a flit time, after its slot starts). Each slot holds
    /// when its flit may leave: its landing plus `stay` (a switch's [`Sim::flit_delay`], 0
    /// into a host).
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
        stay: Time,
    ) {
        let c = self.vcs[o as usize].chan;
        let tm = self.tm(c);
        if !STRIDED && tm.clock.is_some() {
            return self.ring_put_clocked(o, first, dst, k, ends_tail, a0, stay);
        }
        let a0 = a0 + stay;
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

    /// When a flit landed in a switch's input VC, from its slot's time (when it may leave,
    /// [`Sim::flit_delay`] after): a head's router delay runs from its landing.
    #[inline(always)]
    pub(crate) fn landed(&self, slot_time: Time) -> Time {
        slot_time - self.flit_delay
    }

    /// [`Self::ring_put`] from a clocked channel: flit j lands j edges of its clock after
    /// flit 0 (each flit, the tail too, takes one period).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ring_put_clocked(
        &mut self,
        o: u32,
        first: u32,
        dst: u32,
        k: u32,
        ends_tail: bool,
        a0: Time,
        stay: Time,
    ) {
        let pace = self.tm(self.vcs[o as usize].chan).land_pace();
        let (buf, mask, at, first) = self.ring_back(o, first, k);
        for j in 0..k {
            let flit = if j == 0 { first } else { first & PID };
            let tail = if ends_tail && j + 1 == k { TAIL } else { 0 };
            self.ring[(buf + (at.wrapping_add(j) & mask)) as usize] = Slot {
                time: pace.at(a0, j) + stay,
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
    pub(super) fn ring_back(&mut self, o: u32, first: u32, k: u32) -> (u32, u32, u32, u32) {
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
    pub(super) fn buffer_full(&mut self, o: u32, k: u32) -> Res<()> {
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
        self.start_front_from(i, freed, sending, true);
    }

    /// [`Self::start_front`]; `late_ok`: a head behind a tail that left at `freed` counts as
    /// late (an internal speed-up's next head starts a step after the tail: not late).
    pub(crate) fn start_front_from(&mut self, i: u32, freed: Option<Time>, sending: bool, late_ok: bool) {
        let now = self.now;
        let v = &self.vcs[i as usize];
        let front = self.ring[(v.buf + (v.head & v.mask)) as usize];
        let arrival = self.landed(front.time);
        let (mut t, mut late) = match freed {
            Some(f) if f >= arrival => (f, late_ok),
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
    pub(super) fn tail_arrival(&self, i: u32) -> Option<Time> {
        let v = &self.vcs[i as usize];
        (0..v.len)
            .map(|k| (v.buf + (v.head.wrapping_add(k) & v.mask)) as usize)
            .find(|&slot| self.ring[slot].flit & TAIL != 0)
            .map(|slot| self.landed(self.ring[slot].time))
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
        if sw.xbar && self.sw_allocator != SwAllocator::Greedy {
            // A separable switch gives it to a waiting head before it allocates its
            // crossbar, so that the head asks for the switch in this instant's allocation
            // (BookSim2's VC allocation of the cycle before).
            self.release_out(node as usize, port as u32, o);
            self.mark_dirty(node);
            return;
        }
        let base = (sw.bits_base + sw.words + sw.pwords) as usize;
        set_bit(&mut self.bits, base, port as usize);
        self.mark_dirty(node);
    }
}

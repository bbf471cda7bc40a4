//! The express engine's sending: how far a worm may go as a train before anything could
//! come between (its horizon), moving the train's flits and credits, and committing its
//! channel time and hop counts.

use super::*;

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// The latest time before which nothing can come between the flits of a worm from
    /// input VC `i` on output VC `o` of channel `c` at switch `s`: another worm on the
    /// channel or on the crossbar input, or a head that may come to be one. (`now` + one
    /// flit time where one may already.)
    #[inline(never)]
    pub(super) fn horizon(&self, sim: &Sim, s: SwIx, c: ChIx, o: VcIx, i: VcIx, ft: Time) -> Time {
        let now = sim.now;
        let sw = &self.sw[s];
        let one = now + ft;
        // A head not yet at the front of its input here (not landed, or behind a tail that
        // leaves now or later) asks for an output a router delay from now at the earliest.
        // (The router delay here is in the timing of every channel into this switch.)
        let mut h = now + self.tm[self.v[i].prof as usize].router_delay;
        let l = &self.ln[c];
        let nvc = l.nvc as u32;
        let vo = l.vc_no(o);
        if nvc > 1 {
            if l.owned & !(1 << vo) != 0 {
                // Another worm on the channel.
                return one;
            }
            if F::VC_TURN && self.sep_on && l.req != 0 {
                // A separable VC allocator may leave a head that may take another VC waiting
                // while one is free: as the general engine, any such head waiting for the
                // channel stops the train (its turns are the allocators' pointers).
                let mut r = l.req;
                while r != 0 {
                    let y = &self.v[sw.input(r.trailing_zeros())];
                    r &= r - 1;
                    if y.lo as u32 != vo || (y.hi as u32).min(nvc - 1) != vo {
                        return one;
                    }
                }
            } else if l.req != 0 && l.held_until >= now {
                // A head waiting for the channel may have another VC when it frees (after
                // the send at its instant, so a flit that starts then goes first): one held
                // by a tail that has not passed, or for the VC-reuse delay after it. (Not a
                // free one: allocation, just before, would have granted it to a head that
                // may have it. Not an owned one: there is none.)
                let mut held = l.held & !(1 << vo);
                while held != 0 {
                    let w = held.trailing_zeros();
                    held &= held - 1;
                    h = h.min(self.v[l.vc(w)].free_at.max(now) + 1);
                }
            }
        }
        let (sib, me) = (self.v[i].sib(), 1u64 << self.v[i].local);
        if sw.xbar && sw.active & sib & !me != 0 {
            // Another VC of the same input, waiting or holding, wants the crossbar input.
            return one;
        }
        // Heads being routed here that will ask for another VC of the channel, or for the
        // crossbar input.
        let mut bits = sw.routing;
        let port = sw.port_of(c);
        while bits != 0 {
            let l = bits.trailing_zeros();
            bits &= bits - 1;
            let yi = sw.input(l);
            let y = &self.v[yi];
            // (One with several ports may ask for any of them.)
            let asks = y.port as u32 == port
                || (R::MULTI && y.port == MULTI_PORT && self.want[yi] & (1 << port) != 0);
            let other_vc = asks && (y.lo as u32 != vo || y.hi as u32 != vo);
            if other_vc || (sw.xbar && sib & (1 << l) != 0) {
                // (Its router delay's end.)
                h = h.min(y.front_at);
            }
        }
        h.max(one)
    }

    /// Sends the worm at input VC `i` on output VC `o` (channel `c`) from now: as a train
    /// of the flits that are in the buffer and have credits at their flit times, up to its
    /// tail, or to where something could come between (`held`: credits held now). Returns
    /// whether its tail went.
    #[inline(always)]
    pub(super) fn send(&mut self, sim: &mut Sim, s: SwIx, c: ChIx, o: VcIx, i: VcIx, held: u32) -> bool {
        let now = sim.now;
        let x = self.v[i];
        let (hd, avail) = (x.hd, x.tl.wrapping_sub(x.hd));
        let ft = self.tm[self.v[o].prof as usize].flit_time;
        let mut lim = avail.min(MAX_TRAIN);
        let contended = self.ln[c].nvc > 1 || self.sw[s].xbar;
        let mut cut = false;
        if contended && lim > 1 {
            // Flit j may go if it starts before the horizon: j·ft < h - now.
            let room = self.horizon(sim, s, c, o, i, ft) - now;
            if room <= (lim - 1) as Time * ft {
                lim = room.div_ceil(ft) as u32;
                cut = true;
            }
        }
        // The worm's flits in the buffer by their flit times, up to its tail.
        let (mut kf, mut tail, mut late) = (0, false, Time::MAX);
        while kf < lim {
            let slot = &self.ring[x.slot(hd.wrapping_add(kf))];
            if slot.time > now + kf as Time * ft {
                late = slot.time;
                break;
            }
            kf += 1;
            if slot.flit & TAIL != 0 {
                tail = true;
                break;
            }
        }
        let (k, _) = if kf > held {
            self.credits_for(sim, o, kf, ft)
        } else {
            (kf, held)
        };
        if k < kf {
            tail = false;
        } else if !tail {
            if late != Time::MAX {
                self.wake(sim, c, late);
            } else if kf == avail && !cut {
                self.v[i].flags |= XF_WAIT_FLIT;
            } else {
                self.wake(sim, c, now + k as Time * ft);
            }
        }
        self.move_train(sim, s, c, o, i, k, tail, held);
        tail
    }

    /// Moves `k` flits of the worm at input VC `i` onto output VC `o` of channel `c`, flit j
    /// leaving at now + j·flit time (`tail`: the last is the worm's tail; `held`: credits
    /// the sender held for them, the rest are taken from those on their way).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn move_train(
        &mut self,
        sim: &mut Sim,
        s: SwIx,
        c: ChIx,
        o: VcIx,
        i: VcIx,
        k: u32,
        tail: bool,
        held: u32,
    ) {
        let now = sim.now;
        let ox = self.v[o];
        let (oprof, otl, to_host) = (ox.prof, ox.tl, ox.flags & XF_TO_HOST != 0);
        let ix = self.v[i];
        let (iprof, ihd, in_port) = (ix.prof, ix.hd, ix.in_port);
        let tm = &self.tm[oprof as usize];
        let (ft, tt, lat, ocd) = (tm.flit_time, tm.tail_time, tm.latency, tm.credit_delay);
        let head_class = if k == 1 && tail {
            tm.head_route_tail
        } else {
            tm.head_route
        };
        let in_cd = self.tm[iprof as usize].credit_delay;
        // Flit j leaves at now + j·ft and lands a unit and the latency later (the tail's
        // unit its own).
        let a_last = now + (k - 1) as Time * ft + if tail { tt } else { ft } + lat;
        let mut host = usize::MAX;
        let (mut t, mut a) = (now, now + ft + lat);
        if to_host {
            for j in 0..k {
                if j + 1 == k {
                    a = a_last;
                }
                let ii = ix.slot(ihd.wrapping_add(j));
                let slot = self.ring[ii];
                // It leaves input i: its credit starts back.
                self.ring[ii].time = t + in_cd;
                let mut dst = slot.dst;
                if slot.flit & HEAD != 0 {
                    // One more switch crossed.
                    dst = self.hop(sim, dst, slot.flit);
                }
                // The host takes it as it lands: the slot holds its credit from then on.
                let io = ox.slot(otl.wrapping_add(j));
                self.ring[io] = Slot {
                    time: a + ocd,
                    flit: slot.flit,
                    dst,
                };
                self.host_land(sim, slot.flit, dst, a);
                host = (dst & DST_MASK) as usize;
                t += ft;
                a += ft;
            }
        } else {
            // (At a switch a flit may leave `stay` after it lands: its slot holds then.)
            let stay = self.stay;
            let ring = &mut self.ring;
            a += stay;
            for j in 0..k {
                let ii = ix.slot(ihd.wrapping_add(j));
                let from = &mut ring[ii];
                let slot = *from;
                // It leaves input i: its credit starts back.
                from.time = t + in_cd;
                let io = ox.slot(otl.wrapping_add(j));
                ring[io] = Slot { time: a, ..slot };
                t += ft;
                a += ft;
            }
            // The last flit lands its own unit after it leaves; a head (only a train's
            // first flit can be one) has crossed one more switch.
            ring[ox.slot(otl.wrapping_add(k - 1))].time = a_last + stay;
            let first = ring[ox.slot(otl)];
            if first.flit & HEAD != 0 {
                let dst = self.hop(sim, first.dst, first.flit);
                self.ring[ox.slot(otl)].dst = dst;
            }
        }
        let a = a_last;
        let last = now + (k - 1) as Time * ft;
        let sw = &self.sw[s];
        if sw.xbar {
            let u = if tail { tt } else { ft };
            let port = sw.xbar_in(in_port as u32);
            self.xbar_free[port] = last + self.swt[sw.prof as usize].xbar_time(u);
        }
        // Input i: the flits left, their credits are on their way.
        let x = &mut self.v[i];
        x.hd = x.hd.wrapping_add(k);
        x.cr_last = x.cr_last.max(last + in_cd);
        if x.flags & XF_WAIT_CREDIT != 0 {
            x.flags &= !XF_WAIT_CREDIT;
            let up = self.vch[i];
            self.wake(sim, up, now + in_cd);
        }
        if tail {
            self.sw[s].active &= !(1 << self.v[i].local);
            let x = &mut self.v[i];
            x.front_at = last;
            if x.hd != x.tl {
                // The next packet's head is at the front now (or when it lands: its slot
                // holds when it may leave, `stay` after).
                let next = self.ring[x.slot(x.hd)].time - self.stay;
                self.start_routing(sim, i, next.max(last), None);
            } else {
                x.state = XS_IDLE;
            }
        }
        // Output o: the credits taken, the flits in the receiver's buffer.
        let x = &mut self.v[o];
        x.tl = x.tl.wrapping_add(k);
        x.cr = x.cr.wrapping_add(k.saturating_sub(held));
        if tail {
            let free = last + self.reuse;
            x.owner = VcIx::HELD;
            x.free_at = free;
            let l = &mut self.ln[c];
            let bit = 1 << l.vc_no(o);
            l.owned &= !bit;
            l.held |= bit;
            l.held_until = l.held_until.max(free);
            if free > now && self.ln[c].req != 0 {
                // A head waits: the VC is free for it as the tail passes (and the VC-reuse
                // delay after).
                self.wake(sim, c, free);
            }
        }
        self.check_ring(sim, o);
        if to_host {
            let x = &mut self.v[o];
            x.hd = x.tl;
            x.cr_last = x.cr_last.max(a + ocd);
            if x.flags & XF_WAIT_CREDIT != 0 {
                // The train took the last credit: the host frees the first slot as it lands.
                x.flags &= !XF_WAIT_CREDIT;
                let first = now + if k == 1 && tail { tt } else { ft } + lat + ocd;
                self.wake(sim, c, first);
            }
            Self::host_train(sim, self.csim[c], host, k, tail);
        } else {
            let a0 = now + if k == 1 && tail { tt } else { ft } + lat;
            self.landed(sim, o, a0, head_class);
        }
        self.commit(sim, c, k, tail, ft, tt);
    }

    /// Channel `c` carries `k` flits from now, back to back (`tail`: the last is a tail).
    #[inline(always)]
    pub(super) fn commit(&mut self, sim: &mut Sim, c: ChIx, k: u32, tail: bool, ft: Time, tt: Time) {
        let now = sim.now;
        let last = if tail { tt } else { ft };
        let window = (sim.ms, sim.me);
        let l = &mut self.ln[c];
        let last_start = now + (k - 1) as Time * ft;
        l.used += window_busy(window, now, k, ft, last);
        l.tr_k = k as u8;
        l.mid = !tail;
        l.busy = last_start + last;
        if l.busy > sim.defer_at && self.csim[c] != NONE {
            sim.defer_busy(self.csim[c], now, last_start + last);
        }
        sim.c.flit_hops += k as u64;
        if l.from_host {
            sim.c.flits_injected += k as u64;
        }
    }

    /// A head's slot `dst` with one more switch crossed: the count rides in the slot's top
    /// eight bits; at 255 the packet record takes 256 and the slot starts again from 0, as in
    /// the general engine (a mesh more than 255 hops wide).
    #[inline(always)]
    pub(super) fn hop(&self, sim: &mut Sim, dst: u32, flit: u32) -> u32 {
        let (next, carry) = dst.overflowing_add(1 << DST_BITS);
        if carry {
            Self::hops_256(sim, flit);
        }
        next
    }

    /// A head's 256th hop since its slot last counted from 0 ([`Self::hop`]).
    #[cold]
    #[inline(never)]
    pub(super) fn hops_256(sim: &mut Sim, flit: u32) {
        sim.pkts[(flit & PID) as usize].hops += 256;
    }
}

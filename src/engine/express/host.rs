//! The express engine's hosts: packets landing at their destination (and delivered once
//! the host has paid its receive costs), a host starting and sending packets on its
//! injection channel (once it has paid its send costs, `Sim::next_ready`), and the events
//! applied at an instant.

use super::*;

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// A flit just sent lands at its host at `a`: counted in the window, and a tail
    /// delivers its packet then.
    #[inline(always)]
    pub(super) fn host_land(&mut self, sim: &mut Sim, flit: u32, dst: u32, a: Time) {
        let h = (dst & DST_MASK) as usize;
        sim.count_landing(h as u32, a);
        Self::check_landing(sim, flit, h as u32);
        let pid = flit & PID;
        if flit & HEAD != 0 {
            sim.pkts[pid as usize].hops += (dst >> DST_BITS) as u16;
        }
        if flit & TAIL != 0 {
            sim.q.push_at(sim.now, a, (X_DELIVER << 62) | pid as u64);
        }
    }

    /// A train of `k` flits just sent on channel `c` (the general engine's number) into
    /// host `h`: kept as the general engine keeps it, for the end-of-run count of flits
    /// that land after the end.
    #[inline(always)]
    pub(super) fn host_train(sim: &mut Sim, c: u32, h: usize, k: u32, tail: bool) {
        let tm = sim.tm(c);
        let a0 = sim.now
            + if k == 1 && tail {
                tm.tail_time
            } else {
                tm.flit_time
            }
            + tm.latency;
        sim.c.flits_delivered += k as u64;
        while let Some(&(b0, bk, bt)) = sim.hosts[h].rx_trains.front() {
            if sim.train_arrival(c, b0, bk - 1, bk, bt) > sim.now {
                break;
            }
            sim.hosts[h].rx_trains.pop_front();
        }
        sim.hosts[h].rx_trains.push_back((a0, k, tail));
    }

    /// Host `h` acts at this instant: starts its next packet if it is due and a VC has a
    /// credit, and sends what it can of it.
    pub(super) fn host_serve(&mut self, sim: &mut Sim, h: usize) {
        let c = self.hinj[h];
        let now = sim.now;
        let busy = self.ln[c].busy;
        if busy > now {
            if sim.hosts[h].cur != NONE || sim.may_create(h) {
                self.wake(sim, c, busy);
            }
            return;
        }
        if sim.hosts[h].cur == NONE && !self.start_packet(sim, h) {
            return;
        }
        // (The host's VC, in this engine's numbering for the run: `start_packet`.)
        let o = VcIx(sim.hosts[h].cur_vc);
        let tm = &self.tm[self.v[o].prof as usize];
        let (ft, tt, lat) = (tm.flit_time, tm.tail_time, tm.latency);
        let classes = (tm.head_route, tm.head_route_tail);
        let hs = &sim.hosts[h];
        let (pid, sent, len) = (hs.cur, hs.cur_sent, hs.cur_len);
        let left = len - sent;
        let (k, held) = self.credits_for(sim, o, left.min(MAX_TRAIN), ft);
        if k == 0 {
            return;
        }
        let tail = k == left;
        let head_class = if k == 1 && tail { classes.1 } else { classes.0 };
        let dst = sim.pkts[pid as usize].dst;
        let x = &mut self.v[o];
        for j in 0..k {
            let mut flit = pid;
            if sent + j == 0 {
                flit |= HEAD;
            }
            let last = j + 1 == k && tail;
            if last {
                flit |= TAIL;
            }
            // (It may leave the switch `stay` after it lands.)
            let a = now + j as Time * ft + if last { tt } else { ft } + lat + self.stay;
            self.ring[x.slot(x.tl.wrapping_add(j))] = Slot { time: a, flit, dst };
        }
        x.tl = x.tl.wrapping_add(k);
        x.cr = x.cr.wrapping_add(k.saturating_sub(held));
        self.check_ring(sim, o);
        let a0 = now + if k == 1 && tail { tt } else { ft } + lat;
        self.landed(sim, o, a0, head_class);
        sim.c.flits_sent += k as u64;
        self.commit(sim, c, k, tail, ft, tt);
        let busy = self.ln[c].busy;
        let hs = &mut sim.hosts[h];
        hs.cur_sent += k;
        if tail {
            hs.cur = NONE;
            hs.tail_out = busy;
        }
        if sim.hosts[h].cur != NONE {
            self.wake(sim, c, busy);
        } else if sim.may_create(h) {
            let t = sim.next_ready(h).max(busy);
            self.wake(sim, c, t);
        }
    }

    /// Takes the packet under host `h`'s cursor if it is due and a VC of its channel has a
    /// credit (the first such VC), as `Sim::start_packet` does. Returns whether it did.
    pub(super) fn start_packet(&mut self, sim: &mut Sim, h: usize) -> bool {
        if !sim.may_create(h) {
            return false;
        }
        let now = sim.now;
        let c = self.hinj[h];
        let ready = sim.next_ready(h);
        if ready > now {
            self.wake(sim, c, ready);
            return false;
        }
        let ft = sim.tm(self.csim[c]).flit_time;
        let l = self.ln[c];
        let last = sim.hosts[h].last_vc;
        let vv = if !F::VC_TURN {
            (0..l.nvc as u32).find(|&k| self.credits_for(sim, l.vc(k), 1, ft).0 > 0)
        } else if last == NONE || last >= l.nvc as u32 {
            // VCs in turn, as the general engine's `injection_vc_rr`: the first packet on
            // VC 0 or none (as BookSim2's source), then from the one after the last.
            (self.credits_for(sim, l.vc(0), 1, ft).0 > 0).then_some(0)
        } else {
            let n = l.nvc as u32;
            (1..=n)
                .map(|j| (last + j) % n)
                .find(|&k| self.credits_for(sim, l.vc(k), 1, ft).0 > 0)
        };
        let Some(vv) = vv else {
            return false;
        };
        let o = l.vc(vv);
        let size = sim.hosts[h].arrivals.size;
        let Some((dst, created)) = sim.next_synthetic(h, ready) else {
            return false;
        };
        let pid = match sim.alloc_pkt() {
            Ok(p) => p,
            Err(e) => {
                sim.failed.get_or_insert(e);
                return false;
            }
        };
        let measured = sim.count_injected(created, size);
        sim.pkts[pid as usize] = Pkt {
            src: h as u32,
            dst,
            len: size,
            created,
            head_inj: now,
            measured,
            tag: agent::NO_TAG,
            // (Its number at its host keys the switches' random selections for it.)
            serial: (h as u64) << 40 | sim.hosts[h].started,
            ..Pkt::default()
        };
        let hs = &mut sim.hosts[h];
        hs.started += 1;
        hs.cur = pid;
        hs.cur_vc = o.0;
        hs.last_vc = vv;
        hs.cur_sent = 0;
        hs.cur_len = size;
        true
    }

    /// Packet `pid`'s tail is in at its host: if the host has receive costs, the packet is
    /// delivered when they are paid (returns `true`: an event then).
    #[cold]
    #[inline(never)]
    fn pay_receive(sim: &mut Sim, pid: u32) -> bool {
        let Some(t) = sim.pay_receive(pid) else {
            return false;
        };
        sim.q.push_at(sim.now, t, (X_DELIVER << 62) | X_PAID | pid as u64);
        true
    }

    #[inline(always)]
    pub(super) fn apply(&mut self, sim: &mut Sim, e: u64) {
        let id = e as u32;
        match e >> 62 {
            X_ROUTE => self.route_done(sim, VcIx(id)),
            X_ROUTE_SW => {
                let (s, _, _) = Self::route_sw_event(e);
                self.asks.push(e);
                self.mark_sw(s, 0, sim.now);
            }
            X_WAKE if e & X_AT_SW != 0 => {
                let s = SwIx(((e & (X_AT_SW - 1)) >> 6) as u32);
                self.mark_sw(s, 1 << (e & 63), sim.now);
            }
            X_WAKE => {
                let c = ChIx(id);
                let l = &self.ln[c];
                let (src, port) = (l.src, l.src_port);
                self.mark(c, src, port, sim.now);
            }
            _ => {
                // A tail in at its host: delivered once the host has paid its receive costs
                // for it (`X_PAID`: they are), as the general engine's delivery (no agent to
                // tell on this engine).
                if self.recv_costs && e & X_PAID == 0 && Self::pay_receive(sim, id) {
                    return;
                }
                if let Err(e) = sim.deliver(id, true) {
                    sim.failed.get_or_insert(e);
                }
                while let Some((h, t)) = sim.released.pop() {
                    let c = self.hinj[h as usize];
                    self.wake(sim, c, t);
                }
            }
        }
    }
}

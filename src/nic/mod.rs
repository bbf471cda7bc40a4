//! Host interfaces: an unbounded source queue (a cursor on the arrival sequence, see
//! [`crate::workload::source`]), per-packet and per-byte send costs before injection,
//! injection over the host's channel one flit at a time as credits allow, and ejection with
//! per-packet and per-byte receive costs. Latency includes source queueing, as BookSim2
//! reports it. The costs are parameters (default 0); the modelled systems set them from
//! their specs.

pub mod hostif;

use crate::engine::agent;
use crate::engine::*;
use crate::time::Time;
use crate::workload::Process;

impl Sim<'_> {
    /// When the packet under host `h`'s cursor may start to be injected.
    /// Messages an agent queued go first, in order; then synthetic traffic.
    pub(crate) fn next_ready(&self, h: usize) -> Time {
        let hs = &self.hosts[h];
        let hp = &self.host_params[h];
        let (created, flits) = match hs.outbox.front() {
            Some((t, m, _)) => (*t, m.flits),
            None => (
                match self.spec.workload.process {
                    Process::Backlogged => hs.cpu_free,
                    _ => hs.arrivals.time,
                },
                hs.arrivals.size,
            ),
        };
        let bytes = flits as Time * self.spec.params.flit_bytes as Time;
        created.max(hs.cpu_free) + hp.send_overhead + bytes * hp.send_per_byte
    }

    fn ensure_gen(&mut self, h: usize, t: Time) {
        if self.hosts[h].gen_at != t {
            self.hosts[h].gen_at = t;
            self.q.push_at(self.now, t, ev(K_GEN, h as u32, 0));
        }
    }

    /// Host `h` injects what it can at the present instant: the next flit of its packet, or
    /// a train of them (nothing else uses the host's channel, so a train is exact).
    pub(crate) fn eval_host(&mut self, h: usize) -> Res<()> {
        let c = self.hosts[h].inj;
        let now = self.now;
        if let Some((t, b)) = self.hosts[h].mem_release
            && t <= now
        {
            let hs = &mut self.hosts[h];
            hs.mem_release = None;
            hs.mem_used = hs.mem_used.saturating_sub(b);
            if hs.gated {
                self.ungate(h)?;
            }
        }
        let busy = self.chans[c as usize].tx_busy;
        if busy > now {
            // (A token on the link may have taken it after the host's wake-up was set.)
            if self.hosts[h].cur != NONE || self.may_create(h) {
                self.ensure_txfree(c, busy);
            }
            return Ok(());
        }
        // A clocked channel sends from the edges of its clock only.
        let start = self.tm(c).next_start(now);
        if start != now {
            if self.hosts[h].cur != NONE || self.may_create(h) {
                self.ensure_txfree(c, start);
            }
            return Ok(());
        }
        if self.hosts[h].cur == NONE && !self.start_packet(h)? {
            return Ok(());
        }
        let (o, pid, sent) = (self.hosts[h].cur_vc, self.hosts[h].cur, self.hosts[h].cur_sent);
        let credit = self.chans[c as usize].credit;
        if credit && !self.has_credits(o, 1) {
            return Ok(());
        }
        let left = self.hosts[h].cur_len - sent;
        let k = if self.spec.params.trains {
            let k = left.min(MAX_TRAIN).min(self.fail_limit(c));
            let k = if credit {
                let pace = self.tm(c).send_pace();
                self.train_credits(o, k, now, pace)
            } else {
                k
            };
            // On a channel that tokens interleave with, a train only until a token could
            // come between its flits.
            if k > 1 && self.tm(c).tokens_between {
                k.min(self.token_train_limit(c, self.tm(c).flit_time))
            } else {
                k
            }
        } else {
            1
        };
        // A packet whose data is still coming in goes no faster than it comes.
        let k = match self.hosts[h].avail {
            None => k,
            Some(a) => {
                let pace = self.tm(c).send_pace();
                let at = |i: u32| match i.checked_sub(a.from) {
                    None => 0,
                    Some(d) => a.start + (d as Time + 1) * a.per_flit,
                };
                let first = at(sent);
                if first > now {
                    self.ensure_gen(h, first);
                    return Ok(());
                }
                (1..k).find(|&j| at(sent + j) > pace.at(now, j)).unwrap_or(k)
            }
        };
        let mut flit = pid;
        if sent == 0 {
            flit |= HEAD;
            self.pkts[pid as usize].head_inj = now;
        }
        let ends_tail = k == left;
        let dst = self.pkts[pid as usize].dst;
        self.send_train(c, o, flit, dst, k, ends_tail);
        self.c.flits_sent += k as u64;
        if ends_tail && self.hosts[h].mem_cap != u64::MAX {
            // The packet's bytes leave memory once its tail is out.
            let bytes = self.hosts[h].cur_len as u64 * self.spec.params.flit_bytes as u64;
            let t = self.chans[c as usize].tx_busy;
            let hs = &mut self.hosts[h];
            let prev = hs.mem_release.map_or(0, |x| x.1);
            hs.mem_release = Some((t, prev + bytes));
            self.q.push_at(self.now, t, ev(K_GEN, h as u32, 0));
        }
        let busy = self.chans[c as usize].tx_busy;
        let hs = &mut self.hosts[h];
        hs.cur_sent += k;
        if ends_tail {
            hs.cur = NONE;
            hs.tail_out = busy;
        }
        if self.hosts[h].cur != NONE {
            self.ensure_txfree(c, busy);
        } else if self.may_create(h) {
            let t = self.next_ready(h).max(busy);
            if t == busy {
                self.ensure_txfree(c, busy);
            } else {
                self.ensure_gen(h, t);
            }
        }
        Ok(())
    }

    /// Whether host `h` will create more packets: with `drain = "all"`, only those created
    /// before the window's end (a backlogged source creates its packet as it starts it).
    pub(crate) fn may_create(&self, h: usize) -> bool {
        let hs = &self.hosts[h];
        if !hs.outbox.is_empty() {
            return true;
        }
        if self.window != 0 && hs.outstanding >= self.window {
            // A batch source waits for one of its packets to arrive.
            return false;
        }
        if !hs.active || !self.spec.params.drain_all {
            return hs.active;
        }
        let created = match self.spec.workload.process {
            Process::Backlogged => self.now,
            _ => hs.arrivals.time,
        };
        // (While BookSim2's sampling has not decided the window's end, the sources go on.)
        created < self.me || self.window_open
    }

    /// The synthetic packet under host `h`'s cursor, taken now (it was ready at `ready`):
    /// its destination and creation time; the cursor moves to the next one. `None` if the
    /// pattern gives the host nothing to send (it falls silent).
    pub(crate) fn next_synthetic(&mut self, h: usize, ready: Time) -> Option<(u32, Time)> {
        let wl = &self.spec.workload;
        let n = self.hosts.len() as u32;
        let hs = &mut self.hosts[h];
        let Some(dst) = wl.pattern.dest(h as u32, n, &mut hs.dst_rng) else {
            hs.active = false;
            return None;
        };
        let created = match wl.process {
            Process::Backlogged => self.now,
            // Dated where it reaches the front of the source queue: once created, and once
            // the packet before it is out (BookSim2's `include_queuing = 0`).
            _ if !self.spec.params.source_queueing => hs.arrivals.time.max(hs.tail_out),
            _ => hs.arrivals.time,
        };
        hs.cpu_free = ready;
        if self.window != 0 {
            hs.outstanding += 1;
        }
        hs.arrivals.advance(&wl.process, &wl.sizes);
        if hs.arrivals.exhausted(&wl.process) {
            // A batch source with nothing left to send.
            hs.active = false;
        }
        Some((dst, created))
    }

    /// Counts a packet of `size` flits created at `created` as injected now. Returns whether
    /// it is measured (created in the window).
    pub(crate) fn count_injected(&mut self, created: Time, size: u32) -> bool {
        let measured = created >= self.ms && created < self.me;
        self.c.packets_injected += 1;
        if let Some(s) = self.sampler.as_mut() {
            s.injected(created, size);
        }
        // After the window, packets created in it were already counted from the source
        // queues (finalize_window); count only those injected within it here.
        if measured && self.now < self.me {
            self.c.injected_measured += 1;
            self.c.offered_flits += size as u64;
        }
        measured
    }

    /// Takes the packet under the cursor if it is ready and a VC has room. Returns whether a
    /// packet is now being injected.
    fn start_packet(&mut self, h: usize) -> Res<bool> {
        if !self.may_create(h) {
            return Ok(false);
        }
        let now = self.now;
        let ready = self.next_ready(h);
        if ready > now {
            self.ensure_gen(h, ready);
            return Ok(false);
        }
        let c = self.hosts[h].inj;
        let ch = self.chans[c as usize];
        let explicit = !self.hosts[h].outbox.is_empty();
        let size = match self.hosts[h].outbox.front() {
            Some((_, m, _)) => m.flits,
            None => self.hosts[h].arrivals.size,
        };
        let need = match self.hosts[h].need {
            _ if !ch.credit => 0,
            NEED_LEN => size,
            n => n,
        };
        let (lo, hi) = if self.inj_by_dst {
            self.injection_range(h, ch.nvc as u32)
        } else {
            (0, ch.nvc as u32 - 1)
        };
        let vv = if self.hosts[h].vc_rr {
            self.injection_vc_rr(h, ch.vc_base, lo, hi, need)
        } else {
            (lo..=hi).find(|&vv| need == 0 || self.has_credits(ch.vc_base + vv, need))
        };
        let Some(vv) = vv else {
            return Ok(false);
        };
        let mut header = std::mem::take(&mut self.scratch_route);
        header.clear();
        let (dst, created, tag) = if explicit {
            let hs = &mut self.hosts[h];
            let (t, m, data) = hs.outbox.pop_front().expect("checked non-empty");
            hs.cpu_free = ready;
            hs.avail = data;
            header.extend_from_slice(&m.header);
            if hs.outbox.is_empty() {
                self.notes.push((agent::Note::Idle { host: h as u32 }, None));
            }
            (m.dst, t, m.tag)
        } else {
            let Some((dst, created)) = self.next_synthetic(h, ready) else {
                self.scratch_route = header;
                return Ok(false);
            };
            self.hosts[h].avail = None;
            (dst, created, agent::NO_TAG)
        };
        let routed = header.is_empty() && self.routing.uses_header();
        if routed {
            self.routing
                .header_for(self.fab, h as u32, dst, &mut header)
                .map_err(|err| {
                    Box::new(SimError::Route {
                        time: now,
                        src: h as u32,
                        dst,
                        err,
                    })
                })?;
        }
        // A route that travels in the packet (ATOLL's routing string) lengthens a packet by
        // a flit a hop; its size as sent is what is offered (and, every route flit used up
        // on the way, what arrives). A message whose agent gave its header counts the
        // header's flits itself.
        let len = if routed && self.routing.route_in_packet() {
            size + header.len() as u32
        } else {
            size
        };
        if let Some(a) = &mut self.hosts[h].avail {
            a.from += len - size;
        }
        let pid = self.alloc_pkt()?;
        let measured = self.count_injected(created, size);
        let base = pid as usize * self.route_stride;
        let l = header.len().min(self.route_stride);
        self.route_store[base..base + l].copy_from_slice(&header[..l]);
        self.scratch_route = header;
        self.pkts[pid as usize] = Pkt {
            src: h as u32,
            dst,
            len,
            created,
            head_inj: now,
            head_dlv: 0,
            hops: 0,
            route_pos: 0,
            route_len: l as u16,
            measured,
            seen: 0,
            tag,
            truncated: false,
            parts: 0,
            draw: if self.route_draws == 0 {
                0
            } else {
                self.hosts[h].route_rng.below(self.route_draws as u64) as u32
            },
            serial: (h as u64) << 40 | self.hosts[h].started,
        };
        let hs = &mut self.hosts[h];
        hs.started += 1;
        hs.cur = pid;
        hs.cur_vc = ch.vc_base + vv;
        hs.last_vc = vv;
        hs.cur_sent = 0;
        hs.cur_len = len;
        Ok(true)
    }

    /// The VC of VCs `lo..=hi` from `base` of host `h`'s injection channel that its next
    /// packet starts on where VCs are chosen round robin: the first after the last
    /// packet's, within the range, with `need` credits (0: any); where the last packet's is
    /// outside the range (or before the first packet), `lo` or none, as BookSim2's source
    /// tries only the range's first VC then (`trafficmanager.cpp`, `_last_vc`).
    #[inline(never)]
    fn injection_vc_rr(&mut self, h: usize, base: u32, lo: u32, hi: u32, need: u32) -> Option<u32> {
        let last = self.hosts[h].last_vc;
        let ok = |this: &mut Self, vv: u32| need == 0 || this.has_credits(base + vv, need);
        if last == NONE || last < lo || last > hi {
            return ok(self, lo).then_some(lo);
        }
        let n = hi - lo + 1;
        (1..=n).map(|j| lo + (last - lo + j) % n).find(|&vv| ok(self, vv))
    }

    /// The injection VCs (first, last, of `nvc`) host `h`'s next packet may start on where
    /// they depend on its destination (`ugal_pni`, [`Routing::injection_vcs`]): its
    /// destination looked at ahead, from a copy of the host's stream, which draws it again
    /// as the packet starts. All VCs where it has none (the pattern falls silent).
    #[inline(never)]
    fn injection_range(&self, h: usize, nvc: u32) -> (u32, u32) {
        let hs = &self.hosts[h];
        let dst = match hs.outbox.front() {
            Some((_, m, _)) => Some(m.dst),
            None => {
                let n = self.hosts.len() as u32;
                self.spec
                    .workload
                    .pattern
                    .dest(h as u32, n, &mut hs.dst_rng.clone())
            }
        };
        dst.and_then(|d| self.routing.injection_vcs(d))
            .map(|(lo, hi)| (u32::from(lo), u32::from(hi).min(nvc - 1)))
            .filter(|&(lo, hi)| lo <= hi)
            .unwrap_or((0, nvc - 1))
    }

    /// The first of `k` flits of one packet arrives at its destination host through input
    /// VC `o`; the others follow one unit each later. The host takes each as it arrives, and
    /// the packet counts as delivered when its tail is in (and the receive costs are paid).
    pub(crate) fn host_receive(&mut self, o: u32, first: u32, k: u32, ends_tail: bool) -> Res<()> {
        let h = self.node_host[self.vcs[o as usize].node as usize] as usize;
        if self.hosts[h].mem_cap != u64::MAX {
            return self.host_receive_gated(h, o, first, k, ends_tail);
        }
        self.host_accept(o, first, k, ends_tail, self.now)
    }

    /// Reserves memory for packet `pid` at host `h` if it fits.
    fn admit(&mut self, h: usize, pid: u32) -> bool {
        let bytes = self.pkts[pid as usize].len as u64 * self.spec.params.flit_bytes as u64;
        let hs = &mut self.hosts[h];
        if hs.mem_used + bytes <= hs.mem_cap || hs.mem_used == 0 {
            hs.mem_used += bytes;
            true
        } else {
            false
        }
    }

    /// Arrival at a host with bounded memory: a packet whose head finds no room waits in the
    /// ejection buffer (holding its credits), and so does everything behind it.
    fn host_receive_gated(&mut self, h: usize, o: u32, first: u32, k: u32, ends_tail: bool) -> Res<()> {
        let now = self.now;
        if self.vcs[o as usize].len > 0 || (first & HEAD != 0 && !self.admit(h, first & PID)) {
            let dst = self.pkts[(first & PID) as usize].dst;
            self.ring_put::<false>(o, first, dst, k, ends_tail, now, 0, 0);
            self.hosts[h].gated = true;
            return Ok(());
        }
        self.host_accept(o, first, k, ends_tail, now)
    }

    /// Memory was freed at host `h`: admits what waits in its ejection buffer, in order,
    /// each flit at its arrival or now, whichever is later.
    fn ungate(&mut self, h: usize) -> Res<()> {
        let o = self.fab.ejection_channel(h as u32).0;
        let o = self.chans[o as usize].vc_base;
        loop {
            let v = &self.vcs[o as usize];
            if v.len == 0 {
                self.hosts[h].gated = false;
                return Ok(());
            }
            let slot = self.ring[(v.buf + (v.head & v.mask)) as usize];
            if slot.flit & HEAD != 0 && !self.admit(h, slot.flit & PID) {
                return Ok(());
            }
            self.vcs[o as usize].len -= 1;
            let tail = slot.flit & TAIL != 0;
            self.host_accept(o, slot.flit & !TAIL, 1, tail, slot.time.max(self.now))?;
        }
    }

    /// As [`Self::host_receive`], for a train whose first flit lands at `a0` (now or later).
    pub(crate) fn host_accept(&mut self, o: u32, first: u32, k: u32, ends_tail: bool, a0: Time) -> Res<()> {
        let now = a0;
        let (c, node) = (self.vcs[o as usize].chan, self.vcs[o as usize].node);
        let h = self.node_host[node as usize];
        let last = self.train_arrival(c, now, k - 1, k, ends_tail);
        let pace = self.tm(c).land_pace();
        // The host takes each flit as it arrives: the k slots pass straight to "left".
        let v = &mut self.vcs[o as usize];
        v.head = v.head.wrapping_add(k);
        self.return_credits(o, k, now, pace, last);
        let pid = first & PID;
        self.c.flits_delivered += k as u64;
        let ej = c;
        while let Some(&(b0, bk, bt)) = self.hosts[h as usize].rx_trains.front() {
            if self.train_arrival(ej, b0, bk - 1, bk, bt) > self.now {
                break;
            }
            self.hosts[h as usize].rx_trains.pop_front();
        }
        self.hosts[h as usize].rx_trains.push_back((now, k, ends_tail));
        let inside = now >= self.ms && last < self.me;
        let b = if inside { self.batch_of(now) } else { usize::MAX };
        if inside && b == self.batch_of(last) {
            // The whole train lands in one batch of the window (the usual case).
            self.c.flits_window[h as usize] += k as u64;
            self.c.batches[b].flits += k as u64;
        } else if (now < self.me && last >= self.ms) || last >= self.defer_at {
            for j in 0..k {
                let t = self.train_arrival(c, now, j, k, ends_tail);
                self.count_landing(h, t);
            }
        }
        let pkt = &mut self.pkts[pid as usize];
        if first & HEAD != 0 {
            pkt.head_dlv = now;
        }
        if self.check {
            let before = pkt.seen;
            pkt.seen += k;
            let bad = if pkt.truncated {
                None
            } else {
                landing_fault(pid, pkt, h, before, first & HEAD != 0, ends_tail)
            };
            if let Some(what) = bad {
                return Err(Box::new(SimError::Invariant { time: now, what }));
            }
        }
        if ends_tail {
            if self.pkts[pid as usize].truncated && self.hosts[h as usize].mem_cap != u64::MAX {
                let bytes = self.pkts[pid as usize].len as u64 * self.spec.params.flit_bytes as u64;
                let hs = &mut self.hosts[h as usize];
                hs.mem_used = hs.mem_used.saturating_sub(bytes);
            }
            if last == self.now {
                return self.deliver_and_wake(pid, false);
            }
            self.q.push_at(self.now, last, ev(K_DELIVER, h, pid));
        }
        Ok(())
    }

    /// The tail of packet `pid` is in at its destination now: when its host has paid its
    /// receive costs for it, if it has any (`None`: it is delivered now). The host takes its
    /// packets one at a time, each for its costs: this one is delivered (counted, its
    /// latency taken, the agent told) when they are paid, so a host that cannot keep up
    /// holds up the drain as a slow sender does.
    #[inline]
    pub(crate) fn pay_receive(&mut self, pid: u32) -> Option<Time> {
        let pkt = &self.pkts[pid as usize];
        let h = pkt.dst as usize;
        let hp = self.host_params[h];
        if hp.recv_overhead == 0 && hp.recv_per_byte == 0 {
            return None;
        }
        let bytes = pkt.len as Time * self.spec.params.flit_bytes as Time;
        let hs = &mut self.hosts[h];
        hs.recv_free = hs.recv_free.max(self.now) + hp.recv_overhead + bytes * hp.recv_per_byte;
        Some(hs.recv_free)
    }

    /// [`Self::deliver`] on the general engine: then the batch sources it let go on are
    /// woken.
    pub(crate) fn deliver_and_wake(&mut self, pid: u32, paid: bool) -> Res<()> {
        self.deliver(pid, paid)?;
        while let Some((h, t)) = self.released.pop() {
            self.ensure_gen(h as usize, t);
        }
        Ok(())
    }

    /// A packet from batch source `h` is delivered now: one fewer in flight. If the source
    /// was waiting for its window, it goes on (listed in `released` for the engine to wake
    /// it), and if it had a packet due by now, it creates that packet the next cycle, as
    /// BookSim2's source, which asks each cycle from the one its queue emptied in and dates
    /// the packet it makes from the cycle after the delivery (`_IssuePacket`, `_Inject`).
    #[cold]
    fn window_freed(&mut self, h: usize) {
        let now = self.now;
        let hs = &mut self.hosts[h];
        let full = hs.outstanding == self.window;
        hs.outstanding -= 1;
        if full && hs.active && hs.cur == NONE {
            if hs.tail_out <= now
                && hs.arrivals.time <= now
                && let Process::Batch { cycle, .. } = self.spec.workload.process
            {
                hs.arrivals
                    .hold_until(&self.spec.workload.process, cycle.edge_at_or_after(now) + 1);
            }
            // (Later than now: past the hold, or where the host's queue empties or its next
            // packet is due.)
            let out = hs.tail_out;
            let t = self.next_ready(h).max(out);
            self.released.push((h as u32, t));
        }
    }

    /// The tail of packet `pid` is in at its destination now.
    /// `paid`: the host's receive costs for it have been paid, and it is delivered now.
    pub(crate) fn deliver(&mut self, pid: u32, paid: bool) -> Res<()> {
        let now = self.now;
        let pkt = self.pkts[pid as usize];
        if pkt.truncated {
            // The part of a cut packet that got through: its destination discards it.
            self.part_done(pid);
            return Ok(());
        }
        let h = pkt.dst;
        if !paid && let Some(t) = self.pay_receive(pid) {
            self.q.push_at(now, t, ev(K_DELIVER, h, pid) | EV_PAID);
            return Ok(());
        }
        let done = now;
        if let Some(s) = self.sampler.as_mut() {
            s.delivered(pkt.created, done, pkt.len);
        }
        if pkt.measured {
            let pl = done - pkt.created;
            let nl = done - pkt.head_inj;
            self.c.packet_lat.record(pl);
            self.c.network_lat.record(nl);
            let b = self.batch_of(pkt.created);
            let bt = &mut self.c.batches[b];
            bt.packet_sum += pl as u128;
            bt.network_sum += nl as u128;
            bt.packets += 1;
            self.c.delivered_measured += 1;
            self.c.last_delivery = done;
            self.c.hops_measured += pkt.hops as u64;
        }
        if self.window != 0 {
            self.window_freed(pkt.src as usize);
        }
        if pkt.tag != agent::NO_TAG {
            let d = agent::Delivery {
                host: h,
                src: pkt.src,
                tag: pkt.tag,
                flits: pkt.len,
                created: pkt.created,
                head_injected: pkt.head_inj,
                head_delivered: pkt.head_dlv,
                delivered: done,
                hops: pkt.hops,
            };
            let note = agent::Note::Delivered {
                host: h,
                src: pkt.src,
                tag: pkt.tag,
                pid,
                time: done,
            };
            self.notes.push((note, Some(d)));
        }
        self.c.packets_delivered += 1;
        self.free_pkts.push(pid);
        Ok(())
    }

    /// The batch of the measurement window that time `t` falls in.
    #[inline]
    pub(crate) fn batch_of(&self, t: Time) -> usize {
        // (Under BookSim2's sampling, the sub-batch: see `engine::window`.)
        let (n, span) = if self.sub_period != 0 {
            (self.n_batches, self.sub_period)
        } else {
            (self.c.batches.len(), self.me.saturating_sub(self.ms).max(1))
        };
        let since = t.saturating_sub(self.ms);
        let b = match since.checked_mul(n as u64) {
            Some(x) => x / span,
            None => (since as u128 * n as u128 / span as u128) as u64,
        };
        (b as usize).min(self.c.batches.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{NONE, Sim};

    /// Where VCs are chosen round robin, a host starts each packet on the VC after its last
    /// packet's (wrapping), skipping VCs without the credits it needs; its first packet
    /// tries VC 0 only, as BookSim2's source does.
    #[test]
    fn a_host_takes_its_injection_vcs_in_turn() {
        let net = "[topology]\nkind = \"mesh\"\nk = [2, 2]\n[channel]\nvcs = 4\nbuffer = 4\n\
                   [switch]\nvc_choice = \"round-robin\"\n[traffic]\nload = 0.1\n";
        let spec = crate::config::load_str("rr.toml", net, std::path::Path::new("."), &[]).unwrap();
        let mut sim = Sim::new(&spec).unwrap();
        assert!(sim.hosts[0].vc_rr);
        let base = sim.chans[sim.hosts[0].inj as usize].vc_base;
        assert_eq!(sim.hosts[0].last_vc, NONE);
        // (last VC, range, credits needed, VC taken.) Every VC is empty: each has the 4
        // credits of its buffer, none has 5. Within a range (ugal_pni's VCs of a
        // destination): after the last packet's VC in it, wrapping in it; from a VC outside
        // it, the range's first VC only.
        for (last, lo, hi, need, want) in [
            (NONE, 0, 3, 1, Some(0)),
            (0, 0, 3, 1, Some(1)),
            (3, 0, 3, 1, Some(0)),
            (1, 0, 3, 4, Some(2)),
            (1, 0, 3, 5, None),
            (3, 2, 3, 1, Some(2)),
            (2, 2, 3, 1, Some(3)),
            (1, 2, 3, 1, Some(2)),
            (1, 2, 3, 5, None),
        ] {
            sim.hosts[0].last_vc = last;
            assert_eq!(
                sim.injection_vc_rr(0, base, lo, hi, need),
                want,
                "{last} {lo}-{hi}"
            );
        }
    }

    /// Under `flatfly-ugal-pni` a host's next packet may start only on the injection VCs
    /// of its destination router's digit 0, looked at ahead of the draw that makes it.
    #[test]
    fn ugal_pni_hosts_start_packets_on_their_destinations_vcs() {
        let net = "[topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nhosts_per_switch = 4\nrouters_per_row = 4\n\
                   [channel]\nvcs = 8\n[traffic]\nload = 0.1\n[routing]\nalgorithm = \"flatfly-ugal-pni\"\n";
        let spec = crate::config::load_str("pni.toml", net, std::path::Path::new("."), &[]).unwrap();
        let mut sim = Sim::new(&spec).unwrap();
        assert!(sim.inj_by_dst);
        for h in 0..4 {
            let (lo, hi) = sim.injection_range(h, 8);
            let mut rng = sim.hosts[h].dst_rng.clone();
            let dst = sim.spec.workload.pattern.dest(h as u32, 64, &mut rng).unwrap();
            let (t, _) = crate::fabric::cmesh::router_of(dst, 4, 2);
            assert_eq!((lo, hi), (t % 4 * 2, t % 4 * 2 + 1), "{h} {dst}");
            // The look ahead draws nothing: the packet is the one looked at.
            assert_eq!(sim.next_synthetic(h, 0).map(|(d, _)| d), Some(dst));
        }
    }
}

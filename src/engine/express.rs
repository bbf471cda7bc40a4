//! The express engine: the same model as the general engine (`Sim::run`), for the fabrics
//! most runs use — one virtual channel per channel, wormhole switches with round-robin
//! arbitration, credit flow control and dimension-order routing on a mesh — with none of
//! the general engine's machinery for what such a fabric cannot have (virtual-channel
//! choice, shared crossbar inputs, tokens, header operations, failures, agents, deadlock).
//! Its results are those of the general engine bit for bit (`tests/express.rs` compares
//! the two on random fabrics; only the count of events differs); it exists for speed
//! (docs/performance.md, "The express engine").
//!
//! Model (DESIGN.md, "Engine"; the same rules as `engine::mod`): a flit sent on a channel
//! at `t` occupies it for its unit time (flit or tail time) and lands in the receiver's
//! buffer one unit and the propagation delay later; its credit lands back at the sender
//! one credit delay after it leaves that buffer. A head at the front of its input at `t`
//! asks for its output at `t + router_delay`; the output goes, in round-robin order of the
//! input ports after the last one granted, to a head that asks for it once the tail of the
//! worm before has left (the instant its tail is sent), and the worm's flits follow one
//! flit time apart as they are in the buffer and credits allow. A head reaches the front
//! when it lands or, behind another packet, when that packet's tail leaves.
//!
//! How it runs. Every channel has one record (a cache line): its transmitter, the output
//! VC's owner, and the receiver's buffer ring (the general engine's ring array, reused).
//! Three kinds of event: a head's router delay ends (it files its request with its output),
//! a sender is woken (its channel is free, a flit or a credit it waits for lands, or a
//! packet is due at a host), and a packet's tail reaches its host. At each instant the
//! outputs something happened to act, each independently of the others: grant, then send
//! a train, as many flits as are in the buffer and have credits at their own flit times
//! (at most [`MAX_TRAIN`], so the end-of-run count of committed flits works as for the
//! general engine's trains).

use super::*;
use crate::routing::dor::Dor;

/// Event kinds (the top two bits; the rest is a channel or a packet slot).
const X_ROUTE: u64 = 0;
const X_WAKE: u64 = 1;
const X_DELIVER: u64 = 2;

/// Channel flags: the sender waits for a credit that is not on its way yet.
const XF_WAIT_CREDIT: u8 = 1;
/// The worm holding the output waits for a flit not yet sent to this input.
const XF_WAIT_FLIT: u8 = 2;
/// The channel ends at a host.
const XF_TO_HOST: u8 = 4;
/// The channel starts at a host.
const XF_FROM_HOST: u8 = 8;

/// Input states: no packet at the front, or one (being routed, waiting, or holding its
/// output).
const XS_IDLE: u8 = 0;
const XS_BUSY: u8 = 1;

/// One channel: the sender's transmitter and output VC, and the receiver's input buffer.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct XCh {
    /// End of the transmission in progress [ps].
    busy: Time,
    /// The output VC is free for the next worm from this time on (its last tail's start).
    free_at: Time,
    /// When the last tail left this input (a head behind it is at the front from then).
    front_at: Time,
    /// No credit of slots `cr..hd` lands later than this: once it has passed, the sender
    /// takes them all without reading the slots.
    cr_last: Time,
    /// The input channel whose worm holds this output, or `NONE`.
    owner: u32,
    /// As an input: the output its front packet asks for or holds.
    out: u32,
    /// The ring: slots `cr..hd` hold the landing times of credits on their way back,
    /// `hd..tl` the buffered flits with their arrival times.
    hd: u32,
    tl: u32,
    cr: u32,
    buf: u32,
    mask: u16,
    cap: u16,
    prof: u8,
    in_port: u8,
    state: u8,
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<XCh>() == 64);

/// The express engine's state beside the `Sim` it runs for.
pub(crate) struct Express {
    ch: Vec<XCh>,
    /// Per output channel: the input ports whose heads ask for it, and the last one granted.
    req: Vec<u64>,
    rr: Vec<u8>,
    /// Per channel: the node it leads to.
    node: Vec<u32>,
    /// Per switch port (`Sw::port_base + p`): the channel arriving there.
    in_ch: Vec<u32>,
    dor: Dor,
    /// Per channel: the time of the pending wake-up of its sender (not a second one then).
    wake_at: Vec<Time>,
    /// Channels with something to do at this instant, and when each was last listed.
    dirty: Vec<u32>,
    dirty_at: Vec<Time>,
}

/// Why a run cannot go on the express engine (`None`: it can).
pub(crate) fn ineligible(sim: &Sim) -> Option<&'static str> {
    let spec = sim.spec;
    let p = &spec.params;
    let fab = sim.fab;
    if !p.express {
        return Some("the general engine was asked for");
    }
    if p.check || !p.trains || sim.reverse_order {
        return Some("invariant checks, the flit-by-flit path or reversed order");
    }
    let Routing::Dor(d) = sim.routing else {
        return Some("routing other than dimension order");
    };
    if d.dateline() || !matches!(&fab.shape, crate::fabric::Shape::Cube { wrap: false, .. }) {
        return Some("a fabric other than a mesh");
    }
    if fab.stage_base != fab.switches {
        return Some("output buffers");
    }
    if !sim.fail_at.is_empty()
        || sim.tok.iter().any(|t| t.on)
        || sim.host_params.iter().any(|h| *h != HostParams::default())
        || sim
            .hosts
            .iter()
            .any(|h| h.mem_cap != u64::MAX || !h.outbox.is_empty())
    {
        return Some("failures, tokens, host costs or host memory");
    }
    if sim.timing.len() > 255 {
        return Some("too many channel timings");
    }
    for (ci, ch) in fab.channels.iter().enumerate() {
        let lp = &ch.params;
        let c = &sim.chans[ci];
        if lp.vcs != 1 || !c.credit || lp.delete_header || lp.buffer > 1 << 15 || lp.flit_time == 0 {
            return Some("a channel with several VCs, no credits, header deletion or a large buffer");
        }
        if ch.dst_port > 63 {
            return Some("a switch of more than 64 ports");
        }
    }
    for sp in &fab.switch_params[..fab.switches as usize] {
        if sp.mode != SwitchMode::Wormhole
            || sp.arbitration != Arbitration::RoundRobin
            || sp.router_delay == 0
        {
            return Some("a switch that is not wormhole with round robin and a router delay");
        }
    }
    // Hop counts ride in a head's slot (eight bits above the destination).
    if let crate::fabric::Shape::Cube { k, .. } = &fab.shape
        && k.iter().map(|&x| x as u64 - 1).sum::<u64>() >= 255
    {
        return Some("a mesh too wide for the hop count");
    }
    None
}

impl Express {
    fn new(sim: &Sim) -> Express {
        let fab = sim.fab;
        let Routing::Dor(dor) = sim.routing else {
            unreachable!("checked by `ineligible`")
        };
        let n = fab.channels.len();
        let mut ch = Vec::with_capacity(n);
        let mut node = Vec::with_capacity(n);
        for (ci, c) in fab.channels.iter().enumerate() {
            let v = &sim.vcs[sim.chans[ci].vc_base as usize];
            let mut flags = 0;
            if !fab.is_switch(c.dst) {
                flags |= XF_TO_HOST;
            }
            if !fab.is_switch(c.src) {
                flags |= XF_FROM_HOST;
            }
            ch.push(XCh {
                busy: 0,
                free_at: 0,
                front_at: 0,
                cr_last: 0,
                owner: NONE,
                out: NONE,
                hd: 0,
                tl: 0,
                cr: 0,
                buf: v.buf,
                mask: v.mask as u16,
                cap: c.params.buffer as u16,
                prof: sim.chans[ci].prof as u8,
                in_port: c.dst_port as u8,
                state: XS_IDLE,
                flags,
            });
            node.push(c.dst.0);
        }
        let mut in_ch = vec![NONE; sim.ports.len()];
        for s in 0..sim.sws.len() {
            let base = sim.sws[s].port_base as usize;
            for (p, c) in fab.in_chan[s].iter().enumerate() {
                if let Some(c) = c {
                    in_ch[base + p] = c.0;
                }
            }
        }
        Express {
            ch,
            req: vec![0; n],
            rr: vec![u8::MAX; n],
            node,
            in_ch,
            dor: dor.clone(),
            wake_at: vec![Time::MAX; n],
            dirty: Vec::new(),
            dirty_at: vec![Time::MAX; n],
        }
    }

    #[inline(always)]
    fn mark(&mut self, o: u32, now: Time) {
        if self.dirty_at[o as usize] != now {
            self.dirty_at[o as usize] = now;
            self.dirty.push(o);
        }
    }

    /// Wakes the sender of channel `o` at `t` (later than now; once per distinct time).
    #[inline(always)]
    fn wake(&mut self, sim: &mut Sim, o: u32, t: Time) {
        let w = &mut self.wake_at[o as usize];
        if *w != t {
            *w = t;
            sim.q.push_at(sim.now, t, (X_WAKE << 62) | o as u64);
        }
    }

    /// Of the next `max` flits on channel `o`, flit j starting at now + j·ft, how many have
    /// a credit by their start (the credits held now, then those on their way back, in the
    /// order they land), and how many of those are held now; the credits landed by now are
    /// collected. If fewer than `max`, the sender is woken when the next one lands (or, if
    /// none is on its way, when the receiver next frees a slot).
    #[inline(always)]
    fn credits_for(&mut self, sim: &mut Sim, o: u32, max: u32, ft: Time) -> (u32, u32) {
        let now = sim.now;
        let x = &mut self.ch[o as usize];
        let mask = x.mask as u32;
        if now >= x.cr_last {
            x.cr = x.hd;
        } else {
            while x.cr != x.hd && sim.ring[(x.buf + (x.cr & mask)) as usize].time <= now {
                x.cr = x.cr.wrapping_add(1);
            }
        }
        let held = x.cap as u32 - x.tl.wrapping_sub(x.cr);
        if held >= max {
            return (max, held);
        }
        let mut n = held;
        loop {
            let p = x.cr.wrapping_add(n - held);
            if p == x.hd {
                x.flags |= XF_WAIT_CREDIT;
                return (n, held);
            }
            let tc = sim.ring[(x.buf + (p & mask)) as usize].time;
            if tc > now + n as Time * ft {
                self.wake(sim, o, tc);
                return (n, held);
            }
            n += 1;
            if n == max {
                return (n, held);
            }
        }
    }

    /// `k` flits were just written into the buffer of switch input `o`, the first landing at
    /// `a0`: a head at an empty input starts its router delay when it is at the front, and
    /// a worm waiting for its next flit goes on when it lands.
    #[inline(always)]
    fn landed(&mut self, sim: &mut Sim, o: u32, a0: Time, head_class: Class) {
        let x = &mut self.ch[o as usize];
        if x.state == XS_IDLE {
            // (Only a head comes to an input with no packet at its front.)
            x.state = XS_BUSY;
            let e = (X_ROUTE << 62) | o as u64;
            if x.front_at <= a0 {
                sim.q.push(head_class, sim.now, e);
            } else {
                let s = self.node[o as usize];
                let t = x.front_at + sim.sws[s as usize].router_delay;
                sim.q.push_at(sim.now, t, e);
            }
        } else if x.flags & XF_WAIT_FLIT != 0 {
            x.flags &= !XF_WAIT_FLIT;
            let out = x.out;
            self.wake(sim, out, a0);
        }
    }

    /// A head's router delay is over at input `c`: it asks for its output.
    #[inline(always)]
    fn route(&mut self, sim: &mut Sim, c: u32) {
        let x = &self.ch[c as usize];
        let in_port = x.in_port;
        let dst = sim.ring[(x.buf + (x.hd & x.mask as u32)) as usize].dst;
        let s = self.node[c as usize];
        let (port, _, _) = self
            .dor
            .route_port(s, in_port as u16, 0, dst & DST_MASK)
            .expect("a mesh routes every host");
        let o = sim.ports[(sim.sws[s as usize].port_base + port as u32) as usize].out;
        self.ch[c as usize].out = o;
        self.req[o as usize] |= 1 << in_port;
        self.mark(o, sim.now);
    }

    /// Output channel `o` of a switch acts at this instant: grants itself to a waiting head
    /// if it is free, and sends what its worm can.
    fn serve(&mut self, sim: &mut Sim, o: u32) {
        let now = sim.now;
        loop {
            let ou = o as usize;
            if self.ch[ou].owner == NONE {
                let r = self.req[ou];
                if r == 0 {
                    return;
                }
                if self.ch[ou].free_at > now {
                    let t = self.ch[ou].free_at;
                    self.wake(sim, o, t);
                    return;
                }
                // Round robin: the first port asking after the last one granted.
                let last = self.rr[ou] as u32;
                let after = if last >= 63 {
                    0
                } else {
                    r & (u64::MAX << (last + 1))
                };
                let p = if after != 0 {
                    after.trailing_zeros()
                } else {
                    r.trailing_zeros()
                };
                self.req[ou] &= !(1 << p);
                self.rr[ou] = p as u8;
                let s = self.node_of_output(sim, o);
                let c = self.in_ch[(sim.sws[s as usize].port_base + p) as usize];
                self.ch[ou].owner = c;
            }
            if self.ch[ou].busy > now {
                let t = self.ch[ou].busy;
                self.wake(sim, o, t);
                return;
            }
            let c = self.ch[ou].owner;
            if !self.send(sim, c, o) {
                return;
            }
            // The tail left: the output is free for the next worm from its start.
            if self.req[ou] == 0 {
                return;
            }
        }
    }

    /// The switch an output channel leaves (its sender).
    #[inline(always)]
    fn node_of_output(&self, sim: &Sim, o: u32) -> u32 {
        sim.chans[o as usize].src
    }

    /// Sends the worm at input `c` on output `o` from now, as a train of the flits that are
    /// in the buffer and have credits at their flit times. Returns whether its tail went.
    #[inline(always)]
    fn send(&mut self, sim: &mut Sim, c: u32, o: u32) -> bool {
        let now = sim.now;
        let xc = &self.ch[c as usize];
        let (hd, avail, cbuf, cmask) = (xc.hd, xc.tl.wrapping_sub(xc.hd), xc.buf, xc.mask as u32);
        if avail == 0 {
            self.ch[c as usize].flags |= XF_WAIT_FLIT;
            return false;
        }
        let ft = sim.timing[self.ch[o as usize].prof as usize].flit_time;
        // The worm's flits in the buffer by their flit times, up to its tail.
        let lim = avail.min(MAX_TRAIN);
        let (mut kf, mut tail, mut late) = (0, false, Time::MAX);
        while kf < lim {
            let slot = &sim.ring[(cbuf + (hd.wrapping_add(kf) & cmask)) as usize];
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
        if kf == 0 {
            // Its next flit is on its way.
            self.wake(sim, o, late);
            return false;
        }
        let (k, held) = self.credits_for(sim, o, kf, ft);
        if k == 0 {
            return false;
        }
        if k < kf {
            tail = false;
        } else if !tail {
            if late != Time::MAX {
                self.wake(sim, o, late);
            } else if kf == avail {
                self.ch[c as usize].flags |= XF_WAIT_FLIT;
            } else {
                self.wake(sim, o, now + k as Time * ft);
            }
        }
        self.move_train(sim, c, o, k, tail, held);
        tail
    }

    /// Moves `k` flits of the worm at input `c` onto output `o`, flit j leaving at
    /// now + j·flit time (`tail`: the last is the worm's tail; `held`: credits the sender
    /// held for them, the rest are taken from those on their way).
    #[inline(always)]
    fn move_train(&mut self, sim: &mut Sim, c: u32, o: u32, k: u32, tail: bool, held: u32) {
        let now = sim.now;
        let xo = self.ch[o as usize];
        let xc = self.ch[c as usize];
        let tm = &sim.timing[xo.prof as usize];
        let (ft, tt, lat, ocd) = (tm.flit_time, tm.tail_time, tm.latency, tm.credit_delay);
        let head_class = if k == 1 && tail {
            tm.head_route_tail
        } else {
            tm.head_route
        };
        let in_cd = sim.timing[xc.prof as usize].credit_delay;
        let to_host = xo.flags & XF_TO_HOST != 0;
        let (cmask, omask) = (xc.mask as u32, xo.mask as u32);
        let mut a = 0;
        let mut host = usize::MAX;
        for j in 0..k {
            let t = now + j as Time * ft;
            let ic = (xc.buf + (xc.hd.wrapping_add(j) & cmask)) as usize;
            let slot = sim.ring[ic];
            // It leaves input c: its credit starts back.
            sim.ring[ic].time = t + in_cd;
            let mut dst = slot.dst;
            if slot.flit & HEAD != 0 {
                // One more switch crossed.
                dst += 1 << DST_BITS;
            }
            a = t + if j + 1 == k && tail { tt } else { ft } + lat;
            let io = (xo.buf + (xo.tl.wrapping_add(j) & omask)) as usize;
            if to_host {
                // The host takes it as it lands: the slot holds its credit from then on.
                sim.ring[io] = Slot {
                    time: a + ocd,
                    flit: slot.flit,
                    dst,
                };
                self.host_land(sim, slot.flit, dst, a);
                host = (dst & DST_MASK) as usize;
            } else {
                sim.ring[io] = Slot {
                    time: a,
                    flit: slot.flit,
                    dst,
                };
            }
        }
        let last = now + (k - 1) as Time * ft;
        // Input c: the flits left, their credits are on their way.
        let x = &mut self.ch[c as usize];
        x.hd = x.hd.wrapping_add(k);
        x.cr_last = x.cr_last.max(last + in_cd);
        if x.flags & XF_WAIT_CREDIT != 0 {
            x.flags &= !XF_WAIT_CREDIT;
            self.wake(sim, c, now + in_cd);
        }
        if tail {
            let x = &mut self.ch[c as usize];
            x.front_at = last;
            if x.hd != x.tl {
                // The next packet's head is at the front now (or when it lands).
                let next = sim.ring[(x.buf + (x.hd & cmask)) as usize].time;
                let s = self.node[c as usize];
                let r = sim.sws[s as usize].router_delay;
                sim.q.push_at(now, next.max(last) + r, (X_ROUTE << 62) | c as u64);
            } else {
                x.state = XS_IDLE;
            }
        }
        // Output o: the credits taken, the flits in the receiver's buffer.
        let x = &mut self.ch[o as usize];
        x.tl = x.tl.wrapping_add(k);
        x.cr = x.cr.wrapping_add(k.saturating_sub(held));
        if tail {
            x.owner = NONE;
            x.free_at = last;
        }
        if to_host {
            x.hd = x.tl;
            x.cr_last = x.cr_last.max(a + ocd);
            if x.flags & XF_WAIT_CREDIT != 0 {
                // The train took the last credit: the host frees the first slot as it lands.
                x.flags &= !XF_WAIT_CREDIT;
                let first = now + if k == 1 && tail { tt } else { ft } + lat + ocd;
                self.wake(sim, o, first);
            }
            Express::host_train(sim, o, host, k, tail);
        } else {
            let a0 = now + if k == 1 && tail { tt } else { ft } + lat;
            self.landed(sim, o, a0, head_class);
        }
        self.commit(sim, o, k, tail, ft, tt);
    }

    /// Channel `o` carries `k` flits from now, back to back (`tail`: the last is a tail).
    #[inline(always)]
    fn commit(&mut self, sim: &mut Sim, o: u32, k: u32, tail: bool, ft: Time, tt: Time) {
        let now = sim.now;
        let last = if tail { tt } else { ft };
        let window = (sim.ms, sim.me);
        let ch = &mut sim.chans[o as usize];
        let last_start = now + (k - 1) as Time * ft;
        ch.busy += window_busy(window, now, k, ft, last);
        ch.tr_start = now;
        ch.tr_k = k as u8;
        ch.mid = !tail;
        self.ch[o as usize].busy = last_start + last;
        sim.c.flit_hops += k as u64;
        if self.ch[o as usize].flags & XF_FROM_HOST != 0 {
            sim.c.flits_injected += k as u64;
        }
    }

    /// A flit just sent on channel `o` lands at its host at `a`: counted in the window,
    /// and a tail delivers its packet then.
    #[inline(always)]
    fn host_land(&mut self, sim: &mut Sim, flit: u32, dst: u32, a: Time) {
        let h = (dst & DST_MASK) as usize;
        if a >= sim.ms && a < sim.me {
            sim.c.flits_window[h] += 1;
            let b = sim.batch_of(a);
            sim.c.batches[b].flits += 1;
        }
        let pid = flit & PID;
        if flit & HEAD != 0 {
            sim.pkts[pid as usize].hops = (dst >> DST_BITS) as u16;
        }
        if flit & TAIL != 0 {
            sim.q.push_at(sim.now, a, (X_DELIVER << 62) | pid as u64);
        }
    }

    /// A train of `k` flits just sent on channel `o` into host `h`: kept as the general
    /// engine keeps it, for the end-of-run count of flits that land after the end.
    #[inline(always)]
    fn host_train(sim: &mut Sim, o: u32, h: usize, k: u32, tail: bool) {
        let tm = sim.tm(o);
        let a0 = sim.now
            + if k == 1 && tail {
                tm.tail_time
            } else {
                tm.flit_time
            }
            + tm.latency;
        sim.c.flits_delivered += k as u64;
        while let Some(&(b0, bk, bt)) = sim.hosts[h].rx_trains.front() {
            if sim.train_arrival(o, b0, bk - 1, bk, bt) > sim.now {
                break;
            }
            sim.hosts[h].rx_trains.pop_front();
        }
        sim.hosts[h].rx_trains.push_back((a0, k, tail));
    }

    /// Host `h` acts at this instant: starts its next packet if it is due and a credit is
    /// there, and sends what it can of it.
    fn host_serve(&mut self, sim: &mut Sim, h: usize) {
        let o = sim.hosts[h].inj;
        let now = sim.now;
        let busy = self.ch[o as usize].busy;
        if busy > now {
            if sim.hosts[h].cur != NONE || sim.may_create(h) {
                self.wake(sim, o, busy);
            }
            return;
        }
        if sim.hosts[h].cur == NONE && !self.start_packet(sim, h) {
            return;
        }
        let tm = &sim.timing[self.ch[o as usize].prof as usize];
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
        let x = &mut self.ch[o as usize];
        let mask = x.mask as u32;
        for j in 0..k {
            let mut flit = pid;
            if sent + j == 0 {
                flit |= HEAD;
            }
            let last = j + 1 == k && tail;
            if last {
                flit |= TAIL;
            }
            let a = now + j as Time * ft + if last { tt } else { ft } + lat;
            sim.ring[(x.buf + (x.tl.wrapping_add(j) & mask)) as usize] = Slot { time: a, flit, dst };
        }
        x.tl = x.tl.wrapping_add(k);
        x.cr = x.cr.wrapping_add(k.saturating_sub(held));
        let a0 = now + if k == 1 && tail { tt } else { ft } + lat;
        self.landed(sim, o, a0, head_class);
        sim.c.flits_sent += k as u64;
        self.commit(sim, o, k, tail, ft, tt);
        let hs = &mut sim.hosts[h];
        hs.cur_sent += k;
        if tail {
            hs.cur = NONE;
        }
        let busy = self.ch[o as usize].busy;
        if sim.hosts[h].cur != NONE {
            self.wake(sim, o, busy);
        } else if sim.may_create(h) {
            let t = sim.next_ready(h).max(busy);
            self.wake(sim, o, t);
        }
    }

    /// Takes the packet under host `h`'s cursor if it is due and a credit is there (as
    /// `Sim::start_packet`). Returns whether it did.
    fn start_packet(&mut self, sim: &mut Sim, h: usize) -> bool {
        if !sim.may_create(h) {
            return false;
        }
        let now = sim.now;
        let o = sim.hosts[h].inj;
        let ready = sim.next_ready(h);
        if ready > now {
            self.wake(sim, o, ready);
            return false;
        }
        let ft = sim.tm(o).flit_time;
        if self.credits_for(sim, o, 1, ft).0 == 0 {
            return false;
        }
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
            ..Pkt::default()
        };
        let hs = &mut sim.hosts[h];
        hs.cur = pid;
        hs.cur_sent = 0;
        hs.cur_len = size;
        true
    }
}

impl Sim<'_> {
    /// Why [`Sim::run`] will run on the general engine rather than the express engine
    /// (`None`: it will run on the express engine).
    pub fn express_refused(&self) -> Option<&'static str> {
        ineligible(self)
    }

    /// Runs on the express engine if this run can (see the module doc); `None` if not.
    pub(crate) fn run_express(&mut self, progress: &mut dyn FnMut(Progress)) -> Option<Res<RunOutcome>> {
        if ineligible(self).is_some() {
            return None;
        }
        let mut x = Express::new(self);
        Some(self.express_loop(&mut x, progress))
    }

    fn express_loop(&mut self, x: &mut Express, progress: &mut dyn FnMut(Progress)) -> Res<RunOutcome> {
        let wall = std::time::Instant::now();
        for h in 0..self.hosts.len() {
            if self.hosts[h].active {
                let t = self.next_ready(h);
                let o = self.hosts[h].inj;
                x.wake(self, o, t);
            }
        }
        let nsw = self.sws.len() as u32;
        let mut finalized = false;
        let mut drain_failed = false;
        let mut iter = 0u64;
        while let Some(t) = self.q.next_time() {
            if self.ends_before(t, &mut finalized, &mut drain_failed) {
                break;
            }
            self.now = t;
            for k in 0..self.q.classes() {
                while let Some(e) = self.q.pop_class(k, t) {
                    self.c.events += 1;
                    x.apply(self, e);
                }
            }
            while let Some(e) = self.q.pop_heap(t) {
                self.c.events += 1;
                x.apply(self, e);
            }
            let mut i = 0;
            while i < x.dirty.len() {
                let o = x.dirty[i];
                let src = self.chans[o as usize].src;
                if src < nsw {
                    x.serve(self, o);
                } else {
                    let h = self.node_host[src as usize] as usize;
                    x.host_serve(self, h);
                }
                i += 1;
            }
            x.dirty.clear();
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            iter += 1;
            if iter & 0x3FFF == 0 {
                progress(Progress {
                    now: self.now,
                    window_end: self.me,
                    events: self.c.events,
                });
            }
        }
        if !finalized {
            self.finalize_window();
        }
        Ok(RunOutcome {
            drain_failed,
            deadlock: None,
            wall_s: wall.elapsed().as_secs_f64(),
        })
    }
}

impl Express {
    #[inline(always)]
    fn apply(&mut self, sim: &mut Sim, e: u64) {
        let id = e as u32;
        match e >> 62 {
            X_ROUTE => self.route(sim, id),
            X_WAKE => self.mark(id, sim.now),
            _ => {
                // (The general engine's delivery: no receive costs to pay, no agent to tell.)
                if let Err(e) = sim.deliver(id, true) {
                    sim.failed.get_or_insert(e);
                }
            }
        }
    }
}

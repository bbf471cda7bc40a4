//! The express engine's switches: marking what has to be done at an instant, routing a
//! head, output-VC allocation in round-robin order of the inputs, and the choice of the
//! next VC to send (the rules in the parent module's doc).

use super::*;
use crate::fabric::Selection;
use crate::rng::{Purpose, Stream};

/// The `k`-th lowest set bit of `b` (`k` below its count of bits).
#[inline]
fn nth_bit(mut b: u64, k: u32) -> u32 {
    for _ in 0..k {
        b &= b - 1;
    }
    b.trailing_zeros()
}

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// Channel `c`'s sender (switch `s`, or a host) has something to do now: the channel
    /// is listed, or, where the switch's inputs share the crossbar, the switch with its
    /// port `port`.
    #[inline(always)]
    pub(super) fn mark(&mut self, c: ChIx, src: NodeIx, port: u8, now: Time) {
        match self.switch(src) {
            Some(s) if R::MULTI || self.sw[s].xbar => self.mark_sw(s, 1 << port, now),
            _ => {
                if self.dirty_at[c] != now {
                    self.dirty_at[c] = now;
                    self.dirty.push(c);
                }
            }
        }
    }

    /// Crossbar-sharing switch `s` has something to do now: on its ports `todo` (bits), or
    /// (none) for a head asking for its output (`asks`).
    #[inline(always)]
    pub(super) fn mark_sw(&mut self, s: SwIx, todo: u64, now: Time) {
        let w = &mut self.sw[s];
        w.todo |= todo;
        if w.dirty_at != now {
            w.dirty_at = now;
            self.dirty_sw.push(s);
        }
    }

    /// Wakes the sender of channel `c` at `t` (now at the earliest; once per distinct time).
    /// (A crossbar-sharing switch is named in the event with its port, so that the wake-up
    /// does not read the channel again.)
    #[inline(always)]
    pub(super) fn wake(&mut self, sim: &mut Sim, c: ChIx, t: Time) {
        let l = &mut self.ln[c];
        if l.wake_at != t {
            l.wake_at = t;
            let (src, port) = (l.src, l.src_port);
            let e = match self.switch(src) {
                Some(s) if R::MULTI || self.sw[s].xbar => X_AT_SW | (s.0 as u64) << 6 | port as u64,
                _ => c.0 as u64,
            };
            sim.q.push_at(sim.now, t, (X_WAKE << 62) | e);
        }
    }

    /// Of the next `max` flits on output VC `o`, flit j starting at now + j·ft, how many
    /// have a credit by their start (the credits held now, then those on their way back, in
    /// the order they land), and how many of those are held now; the credits landed by now
    /// are collected. If fewer than `max`, the sender is woken when the next one lands (or,
    /// if none is on its way, when the receiver next frees a slot).
    #[inline(always)]
    pub(super) fn credits_for(&mut self, sim: &mut Sim, o: VcIx, max: u32, ft: Time) -> (u32, u32) {
        let now = sim.now;
        let x = &mut self.v[o];
        let held = x.collect_credits(&self.ring, now);
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
            let tc = self.ring[x.slot(p)].time;
            if tc > now + n as Time * ft {
                let c = self.vch[o];
                self.wake(sim, c, tc);
                return (n, held);
            }
            n += 1;
            if n == max {
                return (n, held);
            }
        }
    }

    /// The head at the front of switch input VC `i` (from `front`, now or later) is routed
    /// now, and asks for its output a router delay after `front` (`class`: the delay class
    /// of that event from now, if `front` is the landing of a train sent now).
    #[inline(always)]
    pub(super) fn start_routing(&mut self, sim: &mut Sim, i: VcIx, front: Time, class: Option<Class>) {
        self.check_front(sim, i);
        let x = &self.v[i];
        let s = x.sw;
        let dst = self.ring[x.slot(x.hd)].dst & DST_MASK;
        let r = self.tm[x.prof as usize].router_delay;
        let out = if R::MULTI {
            // Several ports: the switch selects among them when the router delay is over.
            self.route
                .ports(sim, s.0, x.in_port, x.local - x.sib0, x.class, dst)
                .map(|(set, lo, hi)| {
                    self.want[i] = set;
                    let port = if set & (set - 1) == 0 {
                        set.trailing_zeros() as u8
                    } else {
                        MULTI_PORT
                    };
                    (port, lo, hi)
                })
        } else {
            self.route
                .port(sim, s.0, x.in_port, x.local - x.sib0, x.class, dst)
        };
        let (port, lo, hi) = match out {
            Some(out) => out,
            None => return self.route_failed(sim, i, s, dst),
        };
        let x = &mut self.v[i];
        x.state = XS_BUSY;
        (x.port, x.lo, x.hi) = (port, lo, hi);
        let local = x.local;
        if x.flags & XF_WATCHED != 0 {
            // (The time the last tail left is not needed again until the next leaves.)
            x.front_at = front + r;
            self.sw[s].routing |= 1 << local;
        }
        let e = if R::MULTI || x.flags & XF_XBAR != 0 {
            // (With several ports, `ask_sw` reads them from the input.)
            (X_ROUTE_SW << 62) | (s.0 as u64) << 12 | ((port & 63) as u64) << 6 | local as u64
        } else {
            (X_ROUTE << 62) | i.0 as u64
        };
        match class {
            Some(cl) => sim.q.push(cl, sim.now, e),
            None => sim.q.push_at(sim.now, front + r, e),
        }
    }

    /// The head at the front of input VC `i`, to host `dst`, has no route (a table without
    /// an entry for it): the run ends with the error at the end of this instant, as on the
    /// general engine.
    #[cold]
    #[inline(never)]
    fn route_failed(&mut self, sim: &mut Sim, i: VcIx, s: SwIx, dst: u32) {
        let x = &self.v[i];
        let pid = self.ring[x.slot(x.hd)].flit & PID;
        let src = sim.pkts[pid as usize].src;
        sim.failed.get_or_insert(Box::new(SimError::Route {
            time: sim.now,
            src,
            dst,
            err: crate::routing::RouteError::NoRoute { switch: s.0, dst },
        }));
    }

    /// A head's router delay is over at input VC `i`: it asks for its output.
    #[inline(always)]
    pub(super) fn route_done(&mut self, sim: &mut Sim, i: VcIx) {
        let x = &self.v[i];
        let (s, local, port) = (x.sw, x.local, x.port);
        let out = self.ask(s, local, port);
        self.mark(out, s.node(), port, sim.now);
    }

    /// The head at input `local` of switch `s` asks for the output on port `port`: returns
    /// the output's channel.
    #[inline(always)]
    pub(super) fn ask(&mut self, s: SwIx, local: u8, port: u8) -> ChIx {
        let bit = 1u64 << local;
        let w = &mut self.sw[s];
        let out = w.out(port as u32);
        w.routing &= !bit;
        w.active |= bit;
        self.ln[out].req |= bit;
        out
    }

    /// The switch, the output's port and the input an `X_ROUTE_SW` event `e` names.
    #[inline(always)]
    pub(super) fn route_sw_event(e: u64) -> (SwIx, u8, u8) {
        (
            SwIx(((e & (u64::MAX >> 2)) >> 12) as u32),
            ((e >> 6) & 63) as u8,
            (e & 63) as u8,
        )
    }

    /// [`Self::ask`] at a crossbar-sharing switch, from its `X_ROUTE_SW` event `e`: the
    /// input's record is not read (the instant's requests are all taken at once, while
    /// their channels' records load side by side).
    #[inline(always)]
    pub(super) fn ask_sw(&mut self, sim: &mut Sim, e: u64) {
        let (s, port, local) = Self::route_sw_event(e);
        if R::MULTI {
            return self.ask_adaptive(sim, s, local);
        }
        self.ask(s, local, port);
        self.sw[s].todo |= 1 << port;
    }

    /// [`Self::ask_sw`] with adaptive routing: the head at input `local` of switch `s` asks
    /// for the one port of its set, or for the one the switch's selection policy picks
    /// among them, or, if it picks none, for all of them (the general engine's `route_head`
    /// and `select`). (The switch acts only after every head it routes at this instant
    /// has asked, and selecting changes nothing another selection reads: the heads may ask
    /// in any order.)
    #[inline(never)]
    pub(super) fn ask_adaptive(&mut self, sim: &mut Sim, s: SwIx, local: u8) {
        let i = self.sw[s].input(local as u32);
        let mut port = self.v[i].port;
        if port == MULTI_PORT
            && let Some(p) = self.select(sim, s, i)
        {
            port = p;
            self.v[i].port = p;
        }
        if port != MULTI_PORT {
            self.ask(s, local, port);
            self.sw[s].todo |= 1 << port;
            return;
        }
        let bit = 1u64 << local;
        let w = &mut self.sw[s];
        w.routing &= !bit;
        w.active |= bit;
        let sw = *w;
        let mut set = self.want[i];
        while set != 0 {
            let p = set.trailing_zeros();
            set &= set - 1;
            let out = sw.out(p);
            // (A port without an output is never granted: it is not asked.)
            if self.ln[out].nvc != 0 {
                self.ln[out].req |= bit;
                self.sw[s].todo |= 1 << p;
            }
        }
    }

    /// Whether output channel `c` has a VC among `lo..=hi` free for a head routed now
    /// (free before this instant: one whose tail leaves now is free only after the send).
    #[inline(always)]
    fn vc_free_now(&self, c: ChIx, lo: u8, hi: u8, now: Time) -> bool {
        self.free_vc_now(c, lo, hi, now).is_some()
    }

    /// The lowest VC among `lo..=hi` of output channel `c` free for a head routed now
    /// (see [`Self::vc_free_now`]).
    #[inline(always)]
    fn free_vc_now(&self, c: ChIx, lo: u8, hi: u8, now: Time) -> Option<VcIx> {
        let l = &self.ln[c];
        if l.nvc == 0 {
            return None;
        }
        let hi = (hi as u32).min(l.nvc as u32 - 1);
        (lo as u32..=hi).map(|vv| l.vc(vv)).find(|&o| {
            let x = &self.v[o];
            x.owner == VcIx::NONE || (x.owner == VcIx::HELD && x.free_at < now)
        })
    }

    /// The free VC among `lo..=hi` of output channel `c` that the head at input VC `i` would
    /// be given now (see [`Self::vc_free_now`]): the lowest, or with VCs given in turn the
    /// first after the one it was last given, wrapping round (the general engine's
    /// `free_vc_for`, as [`Self::vc_in_turn`] chooses).
    #[inline(always)]
    fn free_vc_for(&self, c: ChIx, i: VcIx, lo: u8, hi: u8, now: Time) -> Option<VcIx> {
        if !F::VC_TURN {
            return self.free_vc_now(c, lo, hi, now);
        }
        let l = &self.ln[c];
        if l.nvc == 0 {
            return None;
        }
        let (lo, hi) = (lo as u32, (hi as u32).min(l.nvc as u32 - 1));
        if lo > hi {
            return None;
        }
        let start = self.turn_start(i, l, lo, hi);
        let n = hi - lo + 1;
        (0..n)
            .map(|j| if start + j > hi { start + j - n } else { start + j })
            .map(|vv| l.vc(vv))
            .find(|&o| {
                let x = &self.v[o];
                x.owner == VcIx::NONE || (x.owner == VcIx::HELD && x.free_at < now)
            })
    }

    /// The credits the sender of output VC `o` holds now, those landed by now collected
    /// (the general engine's `Sim::credits_now`).
    #[inline(never)]
    fn credits_now(&mut self, o: VcIx, now: Time) -> u32 {
        self.v[o].collect_credits(&self.ring, now)
    }

    /// The selection policy of switch `s` for the head at input VC `i`, of several
    /// admissible ports: the port it asks for alone, or `None` (it asks for all). As the
    /// general engine's `Sim::select`.
    fn select(&mut self, sim: &mut Sim, s: SwIx, i: VcIx) -> Option<u8> {
        let now = sim.now;
        let sw = self.sw[s];
        let x = &self.v[i];
        let (lo, hi, set) = (x.lo, x.hi, self.want[i]);
        // The admissible ports with a free VC, as bits.
        let free_set = || {
            let (mut b, mut f) = (set, 0u64);
            while b != 0 {
                let p = b.trailing_zeros();
                b &= b - 1;
                if self.vc_free_now(sw.out(p), lo, hi, now) {
                    f |= 1 << p;
                }
            }
            f
        };
        let pick = match sw.sel {
            k if k == Selection::FirstFree as u8 => {
                let mut b = set;
                loop {
                    if b == 0 {
                        break None;
                    }
                    let p = b.trailing_zeros();
                    b &= b - 1;
                    if self.vc_free_now(sw.out(p), lo, hi, now) {
                        break Some(p);
                    }
                }
            }
            k if k == Selection::RoundRobin as u8 => {
                let gi = self.vsim[i] as usize;
                let last = sim.sel_rr[gi] as u32;
                let f = free_set();
                // The first free one after the last picked, else the first from the lowest.
                let after = if last >= 63 {
                    0
                } else {
                    f & (u64::MAX << (last + 1))
                };
                let pick = [after, f]
                    .into_iter()
                    .find(|&b| b != 0)
                    .map(|b| b.trailing_zeros());
                if let Some(p) = pick {
                    sim.sel_rr[gi] = p as u16;
                }
                pick
            }
            k if k == Selection::Random as u8 => {
                let f = free_set();
                let n = f.count_ones() as u64;
                (n > 0).then(|| nth_bit(f, self.selection_draws(sim, s, i).below(n) as u32))
            }
            k if k == Selection::LeastOccupied as u8 => {
                // The most credits on the free VC the head would be given, the first such
                // port on a tie.
                let (mut b, mut best) = (set, None::<(u32, u32)>);
                while b != 0 {
                    let p = b.trailing_zeros();
                    b &= b - 1;
                    if let Some(o) = self.free_vc_for(sw.out(p), i, lo, hi, now) {
                        let cr = self.credits_now(o, now);
                        if best.is_none_or(|(m, _)| cr > m) {
                            best = Some((cr, p));
                        }
                    }
                }
                best.map(|(_, p)| p)
            }
            _ => {
                // `RandomAny`: one of them all, free or not. (`TwoRandomLeastUsed` does not
                // come here: `Feature::SelectionByUsedCredits`.)
                let n = set.count_ones() as u64;
                Some(nth_bit(set, self.selection_draws(sim, s, i).below(n) as u32))
            }
        };
        pick.map(|p| p as u8)
    }

    /// The draws of switch `s`'s random selection for the head at its input VC `i`: the
    /// general engine's stream for it (`Sim::selection_draws`: the run's seed keyed by the
    /// packet, the switch and the input, in the general engine's numbering).
    #[cold]
    fn selection_draws(&self, sim: &Sim, s: SwIx, i: VcIx) -> Stream {
        let x = &self.v[i];
        let pid = self.ring[x.slot(x.hd)].flit & PID;
        let serial = sim.pkts[pid as usize].serial;
        let at = (s.0 as u64) << 32 | self.vsim[i] as u64;
        Stream::new(sim.spec.params.seed, Purpose::Switch, Stream::key(serial, at))
    }

    /// `k` flits were just written into the buffer of switch input VC `i`, the first
    /// landing at `a0`: a head at an empty input is at the front when it lands (or when the
    /// tail before it has left), and a worm waiting for its next flit goes on when it lands.
    #[inline(always)]
    pub(super) fn landed(&mut self, sim: &mut Sim, i: VcIx, a0: Time, head_class: Class) {
        let x = &mut self.v[i];
        if x.state == XS_IDLE {
            // (Only a head comes to an input with no packet at its front.)
            if x.front_at <= a0 {
                self.start_routing(sim, i, a0, Some(head_class));
            } else {
                let f = x.front_at;
                self.start_routing(sim, i, f, None);
            }
        } else if x.flags & XF_WAIT_FLIT != 0 {
            x.flags &= !XF_WAIT_FLIT;
            let (s, port) = (x.sw, x.port);
            let out = self.sw[s].out(port as u32);
            self.wake(sim, out, a0 + self.stay);
        }
    }

    /// Switch `s` acts at this instant, on each port something happened to (from the
    /// rotating first one where inputs share the crossbar): grants, then sends.
    pub(super) fn eval_switch(&mut self, sim: &mut Sim, s: SwIx) {
        if R::MULTI {
            return self.eval_switch_phased(sim, s);
        }
        if F::VC_TURN && self.sep.is_some() {
            return self.eval_switch_sep(sim, s);
        }
        let sw = &mut self.sw[s];
        let mut todo = std::mem::take(&mut sw.todo);
        let sw = *sw;
        // Outputs compete for shared crossbar inputs: start at a rotating output (as the
        // general engine's send phase does), going once round.
        let (n, period) = (sw.n_ports as u32, self.swt[sw.prof as usize].sa_period);
        let (at, per, nn, mut start) = self.rot;
        if at != sim.now || per != period || nn != n {
            start = ((sim.now / period) % n as Time) as u32;
            self.rot = (sim.now, period, n, start);
        }
        if self.reuse != 0 {
            return self.eval_switch_reuse(sim, s, todo, start);
        }
        // (A VC whose hold ends now has its tail leaving now: the channel is busy with it,
        // so its grant after the send, in `eval_port`, sends nothing now, and may come
        // before the other outputs send.)
        let mut rest = todo & !(u64::MAX << start);
        todo &= u64::MAX << start;
        loop {
            if todo == 0 {
                if rest == 0 {
                    return;
                }
                (todo, rest) = (rest, 0);
            }
            let p = todo.trailing_zeros();
            todo &= todo - 1;
            // (Only ports with an output are marked.)
            self.eval_port(sim, s, sw.out(p));
        }
    }

    /// [`Self::eval_switch`] with a VC-reuse delay, on ports `todo` from `start` round:
    /// a VC whose hold ends now may have its channel free, so the VCs freed now are granted
    /// after every output has sent (as flit by flit), and their outputs send then, in the
    /// same order.
    #[inline(never)]
    fn eval_switch_reuse(&mut self, sim: &mut Sim, s: SwIx, todo: u64, start: u32) {
        let sw = self.sw[s];
        let order = |b: u64| [b & (u64::MAX << start), b & !(u64::MAX << start)];
        let mut again = 0u64;
        for mut b in order(todo) {
            while b != 0 {
                let p = b.trailing_zeros();
                b &= b - 1;
                // (Only ports with an output are marked.)
                let c = sw.out(p);
                if self.ln[c].req != 0 {
                    self.allocate(sim, s, c, true);
                }
                self.try_send(sim, s, c);
                if self.ln[c].req != 0 && self.released_now(c, sim.now) {
                    again |= 1 << p;
                }
            }
        }
        for mut b in order(again) {
            while b != 0 {
                let c = sw.out(b.trailing_zeros());
                b &= b - 1;
                if self.allocate(sim, s, c, false) {
                    self.try_send(sim, s, c);
                }
            }
        }
    }

    /// [`Self::eval_switch`] where heads may ask for several outputs, so that a grant on
    /// one output withdraws requests from others: the switch's outputs act phase by phase,
    /// as the general engine's `Sim::eval_switch` (grants on every output, lowest port
    /// first; then sends, from the rotating first output where inputs share the crossbar;
    /// then grants of the VCs whose tail left at this instant). (Sends on one output
    /// change no grant on another: their order among the grants matters not.)
    fn eval_switch_phased(&mut self, sim: &mut Sim, s: SwIx) {
        let sw = &mut self.sw[s];
        let todo = std::mem::take(&mut sw.todo);
        let sw = *sw;
        let mut b = todo;
        while b != 0 {
            let c = sw.out(b.trailing_zeros());
            b &= b - 1;
            if self.ln[c].req != 0 {
                self.allocate(sim, s, c, true);
            }
        }
        let (mut first, mut rest) = (todo, 0);
        if sw.xbar {
            let (n, period) = (sw.n_ports as u32, self.swt[sw.prof as usize].sa_period);
            let (at, per, nn, mut start) = self.rot;
            if at != sim.now || per != period || nn != n {
                start = ((sim.now / period) % n as Time) as u32;
                self.rot = (sim.now, period, n, start);
            }
            (first, rest) = (todo & (u64::MAX << start), todo & !(u64::MAX << start));
        }
        for mut b in [first, rest] {
            while b != 0 {
                let c = sw.out(b.trailing_zeros());
                b &= b - 1;
                self.try_send(sim, s, c);
            }
        }
        // Grants of the VCs whose hold ended now, lowest port first, then sends on the
        // outputs granted, in the order above (a VC-reuse delay may have freed the channel
        // before: the new worm may go now).
        let (mut b, mut granted) = (todo, 0u64);
        while b != 0 {
            let p = b.trailing_zeros();
            let c = sw.out(p);
            b &= b - 1;
            if self.ln[c].req != 0 && self.released_now(c, sim.now) && self.allocate(sim, s, c, false) {
                granted |= 1 << p;
            }
        }
        if granted != 0 {
            for mut b in [granted & first, granted & rest] {
                while b != 0 {
                    let c = sw.out(b.trailing_zeros());
                    b &= b - 1;
                    self.try_send(sim, s, c);
                }
            }
        }
    }

    /// Output channel `c` of switch `s` acts at this instant: grants, then sends.
    #[inline(always)]
    pub(super) fn eval_port(&mut self, sim: &mut Sim, s: SwIx, c: ChIx) {
        if self.ln[c].nvc == 1 && !self.sw[s].xbar {
            self.serve_one(sim, s, c);
            return;
        }
        if self.ln[c].req != 0 {
            self.allocate(sim, s, c, true);
        }
        self.try_send(sim, s, c);
        // A VC whose hold ends now (its tail leaving now, or a VC-reuse delay after it) is
        // free for a head that waits after the send; the new worm sends when the channel
        // is free: busy with the tail now, or, after a delay, perhaps free now (which comes
        // here only where outputs share no crossbar input: else `eval_switch_reuse`).
        if self.ln[c].req != 0 && self.released_now(c, sim.now) && self.allocate(sim, s, c, false) {
            self.try_send(sim, s, c);
        }
    }

    /// [`Self::eval_port`] for an output of one VC whose inputs do not share the crossbar:
    /// grant it (granting before or after the send is the same here: a VC whose tail
    /// leaves now goes to a worm that cannot send before the tail is out), and send.
    #[inline(always)]
    pub(super) fn serve_one(&mut self, sim: &mut Sim, s: SwIx, c: ChIx) {
        let now = sim.now;
        let o = self.ln[c].vc_base;
        loop {
            let x = &mut self.v[o];
            if x.owner >= VcIx::HELD {
                let r = self.ln[c].req;
                if r == 0 {
                    return;
                }
                if x.owner == VcIx::HELD && x.free_at > now {
                    let f = x.free_at;
                    self.wake(sim, c, f);
                    return;
                }
                // Round robin: the first input asking after the last one granted.
                let after = after_last(r, self.ln[c].va_rr);
                let l = if after != 0 {
                    after.trailing_zeros()
                } else {
                    r.trailing_zeros()
                };
                let l_ = &mut self.ln[c];
                l_.req &= !(1 << l);
                l_.va_rr = l as u8;
                (l_.owned, l_.held) = (1, 0);
                let i = self.sw[s].input(l);
                self.v[o].owner = i;
                if F::VC_TURN {
                    self.va_last[i] = o;
                }
            }
            let busy = self.ln[c].busy;
            if busy > now {
                self.wake(sim, c, busy);
                return;
            }
            let i = self.v[o].owner;
            let held = match self.ready(sim, o, i) {
                Ready::Go(held) => held,
                Ready::At(t) => {
                    self.wake(sim, c, t);
                    return;
                }
                Ready::Not => return,
            };
            if !self.send(sim, s, c, o, i, held) || self.ln[c].req == 0 {
                return;
            }
        }
    }

    /// What stands between the worm at input VC `i`, holding output VC `o`, and its next
    /// flit leaving now: nothing (`Go`, with the credits held), that flit's landing (`At`),
    /// or a flit not yet sent here (it wakes the output as it lands) or a credit (the
    /// sender is woken for it): `Not`.
    #[inline(always)]
    pub(super) fn ready(&mut self, sim: &mut Sim, o: VcIx, i: VcIx) -> Ready {
        let x = &mut self.v[i];
        if x.hd == x.tl {
            x.flags |= XF_WAIT_FLIT;
            return Ready::Not;
        }
        let front = self.ring[x.slot(x.hd)].time;
        if front > sim.now {
            return Ready::At(front);
        }
        let ft = self.tm[self.v[o].prof as usize].flit_time;
        match self.credits_for(sim, o, 1, ft) {
            (0, _) => Ready::Not,
            (_, held) => Ready::Go(held),
        }
    }

    /// Whether a VC of channel `c` had its last tail leave at `now`.
    #[inline(always)]
    pub(super) fn released_now(&self, c: ChIx, now: Time) -> bool {
        let l = &self.ln[c];
        let mut held = l.held;
        while held != 0 {
            let x = &self.v[l.vc(held.trailing_zeros())];
            if x.owner == VcIx::HELD && x.free_at == now {
                return true;
            }
            held &= held - 1;
        }
        false
    }

    /// Grants free VCs of output channel `c` of switch `s` to the heads asking for it, in
    /// round-robin order from the input after the last one granted. A VC whose last tail
    /// left at this instant is free only after the send. Returns whether it granted one.
    #[inline(always)]
    pub(super) fn allocate(&mut self, sim: &mut Sim, s: SwIx, c: ChIx, before_send: bool) -> bool {
        let now = sim.now;
        let l = &mut self.ln[c];
        let nvc = l.nvc as u32;
        let ln = *l;
        // The free VCs, as bits. One held by a tail that has not passed is free for the
        // heads asking once it has: they look at it again then.
        if l.held_until < now {
            l.held = 0;
        }
        let (mut held, mut next) = (l.held, Time::MAX);
        let mut free = (u64::MAX >> (64 - nvc)) & !(l.owned as u64) & !(held as u64);
        let mut hb = held;
        while hb != 0 {
            let vv = hb.trailing_zeros();
            hb &= hb - 1;
            let x = &mut self.v[ln.vc(vv)];
            let f = x.free_at;
            if f < now || (!before_send && f == now) {
                x.owner = VcIx::NONE;
                held &= !(1 << vv);
                free |= 1 << vv;
            } else if f > now {
                next = next.min(f);
            }
        }
        self.ln[c].held = held;
        if next != Time::MAX {
            self.wake(sim, c, next);
        }
        if free == 0 {
            return false;
        }
        // The heads asking, in round-robin order from the one after the last granted (one
        // pass: a head passed over finds no more free VCs after a grant than before).
        let sw = self.sw[s];
        let r = self.ln[c].req;
        let after = after_last(r, self.ln[c].va_rr);
        let (mut bits, mut rest) = (after, r & !after);
        let mut granted = false;
        loop {
            if bits == 0 {
                if rest == 0 {
                    return granted;
                }
                (bits, rest) = (rest, 0);
            }
            let l = bits.trailing_zeros();
            bits &= bits - 1;
            let i = sw.input(l);
            let y = &self.v[i];
            let range = (u64::MAX >> (63 - y.hi as u32)) & (u64::MAX << y.lo);
            let ok = free & range;
            if ok == 0 {
                continue;
            }
            let vv = if F::VC_TURN {
                self.vc_in_turn(i, &ln, ok, y.lo, y.hi)
            } else {
                ok.trailing_zeros()
            };
            free &= !(1 << vv);
            granted = true;
            let o = ln.vc(vv);
            self.v[o].owner = i;
            if F::VC_TURN {
                self.va_last[i] = o;
            }
            if R::MULTI && self.v[i].port == MULTI_PORT {
                self.withdraw(sw, i, l, c);
            }
            let l_ = &mut self.ln[c];
            l_.req &= !(1 << l);
            l_.va_rr = l as u8;
            l_.owned |= 1 << vv;
            if free == 0 {
                return true;
            }
        }
    }

    /// Of the free VCs `ok` (bits) of channel `l` in the range `lo..=hi` of the head at
    /// input VC `i`, the one it gets where VCs are given in turn: the first after the VC it
    /// was last given, if that was one of these below `hi`, wrapping round; else the lowest
    /// (the general engine's `free_vc_rr`).
    #[inline(never)]
    pub(super) fn vc_in_turn(&self, i: VcIx, l: &XLink, ok: u64, lo: u8, hi: u8) -> u32 {
        let start = self.turn_start(i, l, lo as u32, (hi as u32).min(l.nvc as u32 - 1));
        let after = ok & (u64::MAX << start);
        if after != 0 {
            after.trailing_zeros()
        } else {
            ok.trailing_zeros()
        }
    }

    /// Where the head at input VC `i` starts looking among VCs `lo..=hi` (`hi` below the
    /// channel's count) of channel `l` when VCs are given in turn: after the VC it was last
    /// given, if that was one of these below `hi`; else at `lo`.
    #[inline(always)]
    pub(super) fn turn_start(&self, i: VcIx, l: &XLink, lo: u32, hi: u32) -> u32 {
        let (last, base) = (self.va_last[i], l.vc_base.0);
        if last != VcIx::NONE && last.0 >= base + lo && last.0 < base + hi {
            last.0 - base + 1
        } else {
            lo
        }
    }

    /// The head at input `l` (VC `i`) of switch `sw`, asking for every port of its set, is
    /// granted output channel `c`: it asks for the others no more (the general engine's
    /// `grant::<true>`).
    #[inline(never)]
    fn withdraw(&mut self, sw: XSw, i: VcIx, l: u32, c: ChIx) {
        let mut set = self.want[i];
        while set != 0 {
            let p = set.trailing_zeros();
            set &= set - 1;
            self.ln[sw.out(p)].req &= !(1 << l);
        }
        self.v[i].port = sw.port_of(c) as u8;
    }

    /// Whether some worm holding a VC of channel `c` has a flit in its buffer.
    #[inline(always)]
    pub(super) fn has_work(&self, c: ChIx) -> bool {
        let l = &self.ln[c];
        let mut owned = l.owned;
        while owned != 0 {
            let i = self.v[l.vc(owned.trailing_zeros())].owner;
            let x = &self.v[i];
            if x.hd != x.tl {
                return true;
            }
            owned &= owned - 1;
        }
        false
    }

    /// Output channel `c` of switch `s` sends what it can at this instant: from its VCs in
    /// round-robin order after the last that sent, the first whose worm has a flit in, a
    /// credit and its crossbar input free.
    #[inline(always)]
    pub(super) fn try_send(&mut self, sim: &mut Sim, s: SwIx, c: ChIx) {
        let now = sim.now;
        let ln = self.ln[c];
        let nvc = ln.nvc as u32;
        let busy = ln.busy;
        if busy > now {
            if self.has_work(c) {
                self.wake(sim, c, busy);
            }
            return;
        }
        let sw = self.sw[s];
        let mut wait = Time::MAX;
        let owned = ln.owned;
        if owned == 0 {
            return;
        }
        let mut vv = ln.rr as u32;
        for _ in 0..nvc {
            vv = if vv + 1 >= nvc { 0 } else { vv + 1 };
            if owned & (1 << vv) == 0 {
                continue;
            }
            let o = ln.vc(vv);
            let i = self.v[o].owner;
            let held = match self.ready(sim, o, i) {
                Ready::Go(held) => held,
                Ready::At(t) => {
                    wait = wait.min(t);
                    continue;
                }
                Ready::Not => continue,
            };
            let in_port = sw.xbar_in(self.v[i].in_port as u32);
            if sw.xbar && self.xbar_free[in_port] > now {
                wait = wait.min(self.xbar_free[in_port]);
                continue;
            }
            self.send(sim, s, c, o, i, held);
            self.ln[c].rr = vv as u8;
            // Another VC's worm goes on when the channel is free. (With one VC, the train
            // stopped for a reason that wakes the channel when it is gone.)
            if nvc > 1 && self.has_work(c) {
                let b = self.ln[c].busy;
                self.wake(sim, c, b);
            }
            return;
        }
        if wait != Time::MAX {
            self.wake(sim, c, wait);
        }
    }
}

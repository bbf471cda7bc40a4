//! Routing a head at a switch: the routing step (the network's routing function at this
//! switch), the admissible outputs it leaves the head, routing ahead where the router
//! delay allows, and the header operations a switch applies as the head leaves (the
//! STC104's header deletion, source routes' next byte).

use crate::engine::*;
use crate::fabric::VcAllocator;
use crate::routing::dragonfly::Ugal;
use crate::routing::flatfly::Flatfly;
use crate::routing::xy_yx::XyYx;
use crate::routing::{At, Header, PortSet, RouteError, Routing, Want};

impl Sim<'_> {
    /// Routes the head at local input `l` of switch `s` and files its requests. `last`: no
    /// other head is routed after it in this pass.
    pub(super) fn route_head(&mut self, s: usize, l: u32, last: bool) -> Res<()> {
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
            let mut want = self.routing_step(s, i, dst, pid).map_err(|err| {
                Box::new(SimError::Route {
                    time: self.now,
                    src: self.pkts[pid as usize].src,
                    dst,
                    err,
                })
            })?;
            match self.routing {
                Routing::Ugal(u) => want = self.ugal_choice(s, i, u, dst, pid),
                Routing::Flatfly(f) if f.kind.chooses() => {
                    want = self.flatfly_choice(s, i, f, dst, pid, want)
                }
                Routing::XyYx(x) if x.adaptive => {
                    if let Some(w) = self.xy_yx_choice(s, i, x, dst, pid) {
                        want = w;
                    }
                }
                _ => {}
            }
            self.keep_want(i, want);
        }
        self.set_state(i, WAITING);
        // One admissible output (the usual case) is asked for as it is; among several, the
        // selection policy picks one that is free, or the head asks for all.
        let one = self.vcs[i as usize].want_port;
        let chosen = if one != u16::MAX {
            Some(one)
        } else if self.wants[i as usize].escape.is_some() {
            // The switch-wide VC allocator weighs the outputs and their priorities itself
            // (the config asks for a separable one).
            None
        } else {
            self.select(s, i, pid)
        };
        let vb = (bits_base + words) as usize;
        match chosen {
            Some(p) => {
                let rq = (req_base + p as u32 * words) as usize;
                // The last head routed in this pass, asking for one output that no other head
                // asks for and that is not up for allocation yet: the allocation phase would
                // look at this output for this head alone, so it does so now (unless a
                // separable VC allocator has allocated it at this instant already: then the
                // allocation phase puts the head off to the next cycle).
                let alone = last
                    && one != u16::MAX
                    && self.bits[vb + (p as usize >> 6)] & (1 << (p & 63)) == 0
                    && !any_bit(&self.bits, rq, words as usize)
                    && (self.vc_alloc == VcAllocator::Greedy
                        || self.vsep.at[(self.sws[s].port_base + p as u32) as usize] != self.now);
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
                for p in self.wants[i as usize].all_ports().iter() {
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
    pub(super) fn routing_step(&self, s: usize, i: u32, dst: u32, pid: u32) -> Result<Want, RouteError> {
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
        // The packet record again only for a randomized routing's draw.
        let draw = if self.route_draws == 0 {
            0
        } else {
            self.pkts[pid as usize].draw
        };
        self.routing.route(self.fab, at, Header { dst, sym, draw })
    }

    /// BookSim2's UGAL for the packet `pid` at input VC `i` of switch `s`: at its source
    /// router the minimal output or the one towards its intermediate router, by the credits
    /// used on each (`GetUsedCredit`: flits sent on all its VCs whose credits have not come
    /// back), taken as the head asks for an output (BookSim2 routes a step ahead, as the
    /// head leaves its node: a cycle or more sooner).
    #[cold]
    fn ugal_choice(&mut self, s: usize, i: u32, u: &Ugal, dst: u32, pid: u32) -> Want {
        let at = self.at_unlabelled(s, i);
        let intm = Ugal::intermediate(self.pkts[pid as usize].draw);
        let minimal = match u.choice(at, dst, intm) {
            Some((min, other)) => {
                let (q_min, q_other) = (self.used_credits(s, min), self.used_credits(s, other));
                Ugal::prefers_min(q_min, q_other)
            }
            None => true,
        };
        let step = u.step(at, dst, intm, minimal);
        Want {
            ports: PortSet::single(step.port),
            vc_lo: step.vc,
            vc_hi: step.vc,
            escape: crate::routing::Escape::NONE,
        }
    }

    /// BookSim2's UGAL and adaptive XY/YX on its flatfly for the packet `pid` at input VC
    /// `i` of switch `s`: at its source router, the minimal route or the one through its
    /// intermediate router by the credits used on each one's output and their hops
    /// (`ugal_flatfly_onchip`), or x or y first by the credits used on the two next outputs
    /// (`adaptive_xyyx_flatfly`), taken as for UGAL on the dragonfly (above). Elsewhere the
    /// routing step's `want` stands.
    #[cold]
    fn flatfly_choice(&mut self, s: usize, i: u32, f: &Flatfly, dst: u32, pid: u32, want: Want) -> Want {
        let at = self.at_unlabelled(s, i);
        let draw = self.pkts[pid as usize].draw;
        let Some(c) = f.choice(at, dst, draw) else {
            return want;
        };
        let draw = f.decide(
            draw,
            c,
            self.used_credits(s, c.a_port),
            self.used_credits(s, c.b_port),
        );
        f.route(at, Header { dst, sym: &[], draw }).unwrap_or(want)
    }

    /// BookSim2's adaptive XY/YX for the packet `pid` at input VC `i` of switch `s`: at its
    /// first switch, x or y first by the credits used on the two next outputs, the draw on
    /// a tie, taken as the head asks for an output (as for UGAL, above); `None` elsewhere
    /// (the order is then the VC class it came in on).
    #[cold]
    fn xy_yx_choice(&mut self, s: usize, i: u32, x: &XyYx, dst: u32, pid: u32) -> Option<Want> {
        let at = self.at_unlabelled(s, i);
        let (p_xy, p_yx) = x.first_ports(at, dst)?;
        let draw = XyYx::choose(
            self.used_credits(s, p_xy),
            self.used_credits(s, p_yx),
            self.pkts[pid as usize].draw,
        );
        x.route(at, Header { dst, sym: &[], draw }).ok()
    }

    /// Where input VC `i` of switch `s` is, for routings without channel labels.
    fn at_unlabelled(&self, s: usize, i: u32) -> At {
        let v = &self.vcs[i as usize];
        At {
            switch: s as u32,
            in_port: v.in_port,
            in_vc: v.vc,
            in_class: 0,
        }
    }

    /// The credits used on output `p` of switch `s`, over all its VCs.
    pub(super) fn used_credits(&mut self, s: usize, p: u16) -> u32 {
        let pi = (self.sws[s].port_base + p as u32) as usize;
        let (base, n) = (self.ports[pi].vc_base, self.ports[pi].nvc as u32);
        (base..base + n)
            .map(|o| self.caps[o as usize].saturating_sub(self.credits_now(o)))
            .sum()
    }

    /// Keeps the routed head's admissible outputs with input VC `i`.
    #[inline(always)]
    pub(super) fn keep_want(&mut self, i: u32, want: Want) {
        let single = want.ports.len() == 1 && !want.escape.is_some();
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
        // (Nor where it depends on the packet's draw, which is in its record.)
        if self.route_stride != 0 || self.route_draws != 0 {
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

    /// The head at input VC `i` was granted output `p` (channel `c`): the routing's header
    /// operation and the link's header deletion happen as it leaves. Stripped header flits
    /// are not sent on; their buffer slots are freed now.
    #[cold]
    pub(super) fn header_op(&mut self, s: usize, p: u32, i: u32, c: u32, pid: u32) {
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
        let mut op = self.routing.header_op(
            self.fab,
            at,
            Header {
                dst: pkt.dst,
                sym,
                draw: pkt.draw,
            },
            p as u16,
        );
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
                // (`Sim::landed`, written out: `v` holds `self.vcs` here.)
                let t = (self.ring[slot].time - self.flit_delay).max(self.now);
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
}

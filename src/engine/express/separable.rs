//! The express engine's switches with BookSim2's separable allocators (its input-queued
//! router, `switch::separable` and `switch::vc_alloc`), on BookSim2's cycle grid: where
//! every channel has one flit time `T` and every delay is a whole number of `T`
//! (`engine::features`, `separable_on_grid`), so that everything happens on the edges of
//! the grid. A switch allocates at every edge at which it has something to match: first
//! its output VCs, output by output (separable, or reef's VCs in turn where the VC
//! allocator is greedy or an output has one VC), to the heads waiting for them, a VC whose
//! hold ends at this edge free for them; then its crossbar, with the separable allocator
//! over the outputs free to send and the crossbar inputs with a flit for them
//! (`switch::separable::allocate`, the general engine's own function, and its pointer
//! rule `separable::advance`). A head that lost while a VC it may take is free, and an
//! output that lost, try again at the next edge.
//!
//! The general engine allocates on the outputs its events mark (a head's request, a VC's
//! release, a channel come free, a landing, a credit, a lost allocation's next cycle); on
//! the grid that is every output with something to match, and so is what this engine
//! marks: allocating at every edge the switch is woken at, over its marked outputs and
//! those just given a VC, gives the general engine's results, whichever events woke it
//! (`tests/express.rs` compares the two, and the flit-by-flit reference). The VCs are
//! looked at in the order the general engine looks at them (`look_sep`): a VC whose hold
//! ends later wakes its output then only where a head looked at it, and such a wake-up
//! may be a run's last event. A matched pair goes as a train as far as nothing can come
//! between (`Express::send`, `horizon`), one flit with the allocators whose pointers move
//! at every allocation (wavefront, `max_size`, `loa`).

use super::*;
use crate::fabric::{SwAllocator, VcAllocator};
use crate::switch::separable::{self as sep, Requests, Scratch};
use crate::switch::vc_alloc::turn;

/// The separable allocators' state: pointers, and scratch for one switch's allocation.
/// (`Express::sep` is `None` where the switches allocate as reef's own.)
pub(super) struct XSep {
    sw_alloc: SwAllocator,
    vc_alloc: VcAllocator,
    /// The grid's cycle: every channel's flit time [ps].
    period: Time,
    /// Per switch: the instant it last allocated.
    at: Vec<Time>,
    /// Per switch port (`XSw::port_base + p`): as an output, its pointer over the switch's
    /// crossbar inputs; as a crossbar input, its pointer over the outputs and the VC its
    /// requests start from in round-robin order.
    out_ptr: Vec<u16>,
    in_ptr: Vec<u16>,
    vc_off: Vec<u8>,
    /// Per switch: the wavefront's priority diagonal, or where `max_size` starts.
    sw_ptr: Vec<u16>,
    /// Per output VC: the switch input it last granted (`NONE`: none yet).
    last: Vec<u32>,
    /// Scratch, per output and crossbar input of the switch allocating: the input VC that
    /// asks (`NONE`: none), the output VC it holds and the credits it holds.
    req: Vec<u32>,
    req_o: Vec<u32>,
    req_held: Vec<u32>,
    /// Scratch: per output, the crossbar input matched (`NONE`: none); the outputs with
    /// requests; the allocators' own.
    matched: Vec<u32>,
    outs: Vec<u32>,
    asks: Vec<u32>,
    from: Vec<u32>,
    front: Vec<u32>,
    next: Vec<u32>,
    /// Scratch for an output's VC allocation: per head its input, input VC and range; the VC
    /// it takes (`u8::MAX`: none); per VC the head it grants.
    heads: Vec<(u32, VcIx, u8, u8)>,
    pick: Vec<u8>,
    grant: Vec<u32>,
}

impl XSep {
    /// The state for `sim` (on: its switches allocate with separable allocators).
    pub(super) fn new(sim: &Sim, nv: usize) -> XSep {
        let n = sim.sws.len();
        let max_ports = sim.sws.iter().map(|s| s.n_ports as usize).max().unwrap_or(0);
        let sq = max_ports * max_ports;
        XSep {
            sw_alloc: sim.sw_allocator,
            vc_alloc: sim.vc_alloc,
            period: sim.timing.first().map_or(1, |t| t.flit_time),
            at: vec![Time::MAX; n],
            out_ptr: vec![0; sim.ports.len()],
            in_ptr: vec![0; sim.ports.len()],
            vc_off: vec![0; sim.ports.len()],
            sw_ptr: vec![0; n],
            last: vec![NONE; nv],
            req: vec![NONE; sq],
            req_o: vec![NONE; sq],
            req_held: vec![0; sq],
            matched: vec![NONE; max_ports],
            outs: Vec::with_capacity(max_ports),
            asks: vec![NONE; max_ports],
            from: vec![NONE; max_ports],
            front: vec![NONE; max_ports],
            next: vec![NONE; max_ports],
            heads: Vec::with_capacity(64),
            pick: Vec::with_capacity(64),
            grant: Vec::with_capacity(32),
        }
    }
}

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// Switch `s` acts at this instant, an edge of the grid: VC allocation on every output
    /// with heads waiting, then crossbar allocation over the outputs marked or just given a
    /// VC (see the module doc).
    /// Woken again at the same instant (not expected), what came up waits for the next
    /// edge, as in the general engine.
    pub(super) fn eval_switch_sep(&mut self, sim: &mut Sim, s: SwIx) {
        // (Out of `self` while the switch acts: a pointer's move.)
        let Some(mut sp) = self.sep.take() else {
            return;
        };
        self.eval_switch_sep_with(sim, s, &mut sp);
        self.sep = Some(sp);
    }

    fn eval_switch_sep_with(&mut self, sim: &mut Sim, s: SwIx, sp: &mut XSep) {
        let now = sim.now;
        let w = &mut self.sw[s];
        let todo = std::mem::take(&mut w.todo);
        let sw = *w;
        let n = sw.n_ports as u32;
        let period = sp.period;
        let si = s.0 as usize;
        if sp.at[si] == now {
            let mut b = todo;
            while b != 0 {
                let c = sw.out(b.trailing_zeros());
                b &= b - 1;
                if self.ln[c].nvc != 0 && (self.ln[c].req != 0 || self.has_work(c)) {
                    let t = self.ln[c].busy.max(now + period);
                    self.wake(sim, c, t);
                }
            }
            return;
        }
        sp.at[si] = now;
        let separable_vc = sp.vc_alloc != VcAllocator::Greedy;
        // The outputs the crossbar looks at: those marked (a flit landed or a credit came
        // for them, their channel came free, a lost allocation's next edge, a head's
        // request) and those given a VC now; the others have nothing to send at this edge.
        let mut scan = todo;
        for p in 0..n {
            let c = sw.out(p);
            let l = &mut self.ln[c];
            if l.nvc == 0 || l.req == 0 {
                continue;
            }
            if l.held_until < now {
                l.held = 0;
            }
            let granted = if l.nvc > 1 && separable_vc {
                self.allocate_vc_sep(sim, s, c, sp)
            } else {
                self.allocate_vc_turn(sim, s, c)
            };
            if granted {
                scan |= 1 << p;
            }
        }
        self.allocate_xbar_sep(sim, s, sw, scan, sp);
    }

    /// Whether VC `vv` of output channel `c` is free for a head at this edge, as the general
    /// engine's `vc_free` looks at it: one held by a tail whose hold ends by now is free
    /// (and taken out of the held ones); one whose hold ends later is not, and the output
    /// is woken then (the general engine's `release_on_time`, for a head that looked).
    #[inline]
    fn look_sep(&mut self, sim: &mut Sim, c: ChIx, vv: u32) -> bool {
        let l = self.ln[c];
        let bit = 1u32 << vv;
        if l.owned & bit != 0 {
            return false;
        }
        if l.held & bit == 0 {
            return true;
        }
        let o = l.vc(vv);
        let f = self.v[o].free_at;
        if f <= sim.now {
            self.v[o].owner = VcIx::NONE;
            self.ln[c].held &= !bit;
            true
        } else {
            self.wake(sim, c, f);
            false
        }
    }

    /// The VC of `lo..=hi` (its top below the channel's count) of output channel `c` that
    /// the head at input VC `i` is given, the first free one after the VC it was last given
    /// (the general engine's `free_vc_rr`, looking at each VC on the way: `look_sep`).
    fn free_vc_turn_sep(&mut self, sim: &mut Sim, c: ChIx, i: VcIx, lo: u32, hi: u32) -> Option<u32> {
        if lo > hi {
            return None;
        }
        let ln = self.ln[c];
        let start = self.turn_start(i, &ln, lo, hi);
        let m = hi - lo + 1;
        (0..m)
            .map(|j| if start + j > hi { start + j - m } else { start + j })
            .find(|&vv| self.look_sep(sim, c, vv))
    }

    /// Output VC `vv` of channel `c` goes to the head at input `li`, VC `i`.
    #[inline]
    fn grant_sep(&mut self, c: ChIx, li: u32, i: VcIx, vv: u32) {
        let o = self.ln[c].vc(vv);
        self.v[o].owner = i;
        self.va_last[i] = o;
        let l = &mut self.ln[c];
        l.req &= !(1 << li);
        l.va_rr = li as u8;
        l.owned |= 1 << vv;
    }

    /// reef's own VC allocation of output channel `c` of switch `s` at an edge, the VCs
    /// given in turn (the general engine's `allocate`): the heads in round-robin order
    /// from the one after the last granted, each given the free VC of its range after the
    /// one it was last given. (One pass: a head passed over finds no more free VCs after a
    /// grant than before.)
    fn allocate_vc_turn(&mut self, sim: &mut Sim, s: SwIx, c: ChIx) -> bool {
        let sw = self.sw[s];
        let mut granted = false;
        let ln = self.ln[c];
        let nvc = ln.nvc as u32;
        let r = ln.req;
        let after = after_last(r, ln.va_rr);
        for mut bits in [after, r & !after] {
            while bits != 0 {
                let li = bits.trailing_zeros();
                bits &= bits - 1;
                let i = sw.input(li);
                let (lo, hi) = (self.v[i].lo as u32, (self.v[i].hi as u32).min(nvc - 1));
                if let Some(vv) = self.free_vc_turn_sep(sim, c, i, lo, hi) {
                    self.grant_sep(c, li, i, vv);
                    granted = true;
                }
            }
        }
        granted
    }

    /// One separable VC allocation of output channel `c` of switch `s` among the heads
    /// asking for it (the general engine's `allocate_separable`): input-first, each head
    /// picks the free VC it would be given in turn and each VC picked grants the first
    /// picker after the one it last granted; output-first (and iSLIP's one iteration), each
    /// free VC grants the first head after the one it last granted that may take it, and
    /// each head accepts the first granting VC in its own turn. The VCs are looked at as
    /// the general engine looks at them (`look_sep`).
    fn allocate_vc_sep(&mut self, sim: &mut Sim, s: SwIx, c: ChIx, sp: &mut XSep) -> bool {
        let sw = self.sw[s];
        let ln = self.ln[c];
        let nvc = ln.nvc as u32;
        let n_in = sim.sws[s.0 as usize].n_in;
        let mut heads = std::mem::take(&mut sp.heads);
        let mut pick = std::mem::take(&mut sp.pick);
        heads.clear();
        pick.clear();
        let mut r = ln.req;
        while r != 0 {
            let li = r.trailing_zeros();
            r &= r - 1;
            let i = sw.input(li);
            let y = &self.v[i];
            heads.push((li, i, y.lo, y.hi.min(nvc as u8 - 1)));
        }
        let last_of = |sep: &XSep, vv: u32| sep.last[ln.vc(vv).0 as usize];
        if sp.vc_alloc == VcAllocator::SeparableInputFirst {
            // Each head picks one free VC ...
            for &(_, i, lo, hi) in &heads {
                let vv = self.free_vc_turn_sep(sim, c, i, lo as u32, hi as u32);
                pick.push(vv.map_or(u8::MAX, |v| v as u8));
            }
            // ... and each VC picked grants the first picker from its pointer.
            for vv in 0..nvc {
                let last = last_of(sp, vv);
                let win = (0..heads.len())
                    .filter(|&k| pick[k] as u32 == vv)
                    .min_by_key(|&k| turn(heads[k].0, last, n_in));
                for (k, pk) in pick.iter_mut().enumerate() {
                    if *pk as u32 == vv && Some(k) != win {
                        *pk = u8::MAX;
                    }
                }
            }
        } else {
            // Each free VC grants the first head from its pointer that may take it ...
            let mut grant = std::mem::take(&mut sp.grant);
            grant.clear();
            for vv in 0..nvc {
                let mut best = (u32::MAX, NONE);
                let asked = heads
                    .iter()
                    .any(|&(_, _, lo, hi)| (lo as u32..=hi as u32).contains(&vv));
                if asked && self.look_sep(sim, c, vv) {
                    let last = last_of(sp, vv);
                    for (k, &(li, _, lo, hi)) in heads.iter().enumerate() {
                        if (lo as u32..=hi as u32).contains(&vv) {
                            let d = turn(li, last, n_in);
                            if d < best.0 {
                                best = (d, k as u32);
                            }
                        }
                    }
                }
                grant.push(best.1);
            }
            // ... and each head accepts the first granting VC in its own turn.
            for (k, &(_, i, lo, hi)) in heads.iter().enumerate() {
                let mut chosen = u8::MAX;
                if lo <= hi {
                    let (lo, hi) = (lo as u32, hi as u32);
                    let start = self.turn_start(i, &ln, lo, hi);
                    let m = hi - lo + 1;
                    for j in 0..m {
                        let vv = if start + j > hi { start + j - m } else { start + j };
                        if grant[vv as usize] == k as u32 {
                            chosen = vv as u8;
                            break;
                        }
                    }
                }
                pick.push(chosen);
            }
            sp.grant = grant;
        }
        // The matched pairs.
        let (mut lost, mut granted) = (false, false);
        for (k, &(li, i, _, _)) in heads.iter().enumerate() {
            let vv = pick[k];
            if vv == u8::MAX {
                lost = true;
                continue;
            }
            granted = true;
            sp.last[ln.vc(vv as u32).0 as usize] = li;
            self.grant_sep(c, li, i, vv as u32);
        }
        // A head left waiting while a VC it may take is free asks again at the next edge
        // (each looking from the bottom of its range, as the general engine's `free_vc`).
        if lost {
            for (k, &(_, _, lo, hi)) in heads.iter().enumerate() {
                if pick[k] == u8::MAX && (lo as u32..=hi as u32).any(|vv| self.look_sep(sim, c, vv)) {
                    let t = sim.now + sp.period;
                    self.wake(sim, c, t);
                    break;
                }
            }
        }
        sp.heads = heads;
        sp.pick = pick;
        granted
    }

    /// Switch `s` allocates its crossbar with its separable allocator over its outputs
    /// `scan` (bits) and sends on each matched pair, a flit or a train (the general
    /// engine's `separable_send` and `separable_requests`): each of those outputs free to
    /// send takes, per crossbar input, the VC of that input holding it whose next flit is
    /// in and has a credit, the first in round-robin order from the VC after the one that
    /// input last sent.
    fn allocate_xbar_sep(&mut self, sim: &mut Sim, s: SwIx, sw: XSw, mut scan: u64, sp: &mut XSep) {
        let now = sim.now;
        let n = sw.n_ports as u32;
        let (base, si) = (sw.port_base as usize, s.0 as usize);
        sp.outs.clear();
        while scan != 0 {
            let p = scan.trailing_zeros();
            scan &= scan - 1;
            let c = sw.out(p);
            let l = self.ln[c];
            if l.nvc == 0 || l.owned == 0 {
                continue;
            }
            if l.busy > now {
                if self.has_work(c) {
                    self.wake(sim, c, l.busy);
                }
                continue;
            }
            let (mut wait, mut any) = (Time::MAX, false);
            let mut owned = l.owned;
            while owned != 0 {
                let vv = owned.trailing_zeros();
                owned &= owned - 1;
                let o = l.vc(vv);
                let i = self.v[o].owner;
                let held = match self.ready(sim, o, i) {
                    Ready::Go(held) => held,
                    Ready::At(t) => {
                        wait = wait.min(t);
                        continue;
                    }
                    Ready::Not => continue,
                };
                let y = &self.v[i];
                let (x, vc, nvc_in) = (y.in_port as u32, (y.local - y.sib0) as u32, y.sibn as u32);
                let r = (p * n + x) as usize;
                let cur = sp.req[r];
                let first = cur == NONE || {
                    let z = &self.v[VcIx(cur)];
                    sep::rr_before(
                        vc,
                        (z.local - z.sib0) as u32,
                        sp.vc_off[base + x as usize] as u32,
                        nvc_in,
                    )
                };
                if first {
                    sp.req[r] = i.0;
                    sp.req_o[r] = o.0;
                    sp.req_held[r] = held;
                }
                any = true;
            }
            if wait != Time::MAX {
                self.wake(sim, c, wait);
            }
            if any {
                sp.outs.push(p);
            }
        }
        if sp.outs.is_empty() {
            return;
        }
        {
            let XSep {
                sw_alloc,
                req,
                outs,
                out_ptr,
                in_ptr,
                sw_ptr,
                matched,
                asks,
                from,
                front,
                next,
                ..
            } = sp;
            sep::allocate(
                *sw_alloc,
                Requests { req, outs, n, nx: n },
                |e| out_ptr[base + e as usize] as u32,
                |x| in_ptr[base + x as usize] as u32,
                &mut sw_ptr[si],
                matched,
                Scratch {
                    asks,
                    from,
                    front,
                    next,
                },
            );
        }
        let loa = sp.sw_alloc == SwAllocator::Loa;
        for k in 0..sp.outs.len() {
            let p = sp.outs[k];
            let c = sw.out(p);
            let x = std::mem::replace(&mut sp.matched[p as usize], NONE);
            let row = (p * n) as usize;
            if x != NONE {
                let r = row + x as usize;
                let (i, o, held) = (VcIx(sp.req[r]), VcIx(sp.req_o[r]), sp.req_held[r]);
                let (gp, gx) = (base + p as usize, base + x as usize);
                sep::advance(&mut sp.out_ptr[gp], &mut sp.in_ptr[gx], (p, n), (x, n), loa);
                let y = self.v[i];
                sp.vc_off[gx] = (((y.local - y.sib0) as u32 + 1) % y.sibn as u32) as u8;
                let tail = if self.sep_trains {
                    // As far as nothing can come between (`horizon`): the matches of the
                    // flits one by one would be this one's, its pointers moved alike.
                    self.send(sim, s, c, o, i, held)
                } else {
                    let tail = self.ring[y.slot(y.hd)].flit & TAIL != 0;
                    self.move_train(sim, s, c, o, i, 1, tail, held);
                    if !tail && self.v[i].hd == self.v[i].tl {
                        // Its next flit wakes the output as it lands.
                        self.v[i].flags |= XF_WAIT_FLIT;
                    }
                    tail
                };
                // Without a VC-reuse delay the tail's VC is free as it leaves, for a head
                // waiting for it (after the send: the general engine's later pass; its
                // worm asks for the crossbar at the next edge). (With a separable VC
                // allocator the grid has a VC-reuse delay: `separable_on_grid`.)
                if tail
                    && self.reuse == 0
                    && sp.vc_alloc == VcAllocator::Greedy
                    && self.ln[c].req != 0
                    && self.allocate_vc_turn(sim, s, c)
                {
                    let t = self.ln[c].busy.max(now + sp.period);
                    self.wake(sim, c, t);
                }
                if self.has_work(c) {
                    let b = self.ln[c].busy;
                    self.wake(sim, c, b);
                }
            } else {
                // Lost: it asks again at the next edge.
                let t = now + sp.period;
                self.wake(sim, c, t);
            }
            sp.req[row..row + n as usize].fill(NONE);
        }
    }
}

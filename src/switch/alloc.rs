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
//! This module evaluates a switch at an instant and grants output VCs to waiting heads
//! (round robin or oldest first); which output VCs are free (the lowest one or in turn) is
//! in `out_vc`, its inputs are in `receive`, routing in `route`, the outputs' sending (and
//! trains) in `send`, the separable switch allocators in [`super::separable`].

use crate::engine::arr::Arr;
use crate::engine::*;
use crate::fabric::{Arbitration, Selection, SwAllocator, SwitchMode, VcAllocator};
use crate::rng::{Purpose, Stream};
use crate::routing::PortSet;
use crate::time::Time;

impl Sim<'_> {
    /// Everything switch `s` does at the present instant: route the heads whose router delay
    /// is over, grant free outputs to waiting heads, and send on every output that can.
    pub(crate) fn eval_switch(&mut self, s: usize) -> Res<()> {
        self.sent_phase = false;
        // A separable switch allocates its crossbar once an instant, after the output VCs
        // whose hold ends now have gone to waiting heads (see `separable`).
        self.release_due = self.sws[s].xbar && self.sw_allocator != SwAllocator::Greedy;
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
                    // (With an internal speed-up every head goes through the step's VC
                    // allocation, its pointers moved as BookSim2's are.)
                    let last = last && self.internal_speedup == 1;
                    self.route_head(s, l, last)?;
                }
            }
            // (A switch-wide VC allocation counts the passes: once a pass.)
            self.vsep.pass += 1;
            for w in 0..pwords {
                let mut word = std::mem::take(&mut self.bits[vb + w]);
                while word != 0 {
                    let p = (w << 6) as u32 + word.trailing_zeros();
                    word &= word - 1;
                    self.allocate(s, p);
                }
            }
            if xbar && self.sw_allocator != SwAllocator::Greedy {
                self.separable_send(s, !self.sent_phase);
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

    /// The selection policy: which of the admissible outputs, among those free now, the head
    /// at input VC `i` asks for. `None` if none is free (it then waits for all).
    /// `RandomAny` draws one of all the admissible outputs, free or not; `TwoRandomLeastUsed`
    /// draws two and takes the less used.
    pub(super) fn select(&mut self, s: usize, i: u32, pid: u32) -> Option<u16> {
        let sw = &self.sws[s];
        let (port_base, selection, rr) = (sw.port_base, sw.selection, sw.vc_rr);
        let want = self.wants[i as usize];
        let need = Self::need(sw.mode, sw.tail_credit, self.pkts[pid as usize].len);
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
                let k = self.selection_draws(s, i, pid).below(n as u64) as usize;
                cands.iter().nth(k)
            }
            Selection::RandomAny => {
                let k = self.selection_draws(s, i, pid).below(want.ports.len() as u64) as usize;
                want.ports.iter().nth(k)
            }
            Selection::TwoRandomLeastUsed => {
                let n = want.ports.len() as u64;
                let mut draws = self.selection_draws(s, i, pid);
                let k1 = draws.below(n) as usize;
                let k2 = draws.below(n) as usize;
                let p1 = want.ports.iter().nth(k1)?;
                let p2 = want.ports.iter().nth(k2)?;
                if self.used_credits(s, p1) > self.used_credits(s, p2) {
                    Some(p2)
                } else {
                    Some(p1)
                }
            }
        }
    }

    /// The draws of switch `s`'s random selection for the head of packet `pid` at its input
    /// VC `i`: a stream of the run's seed keyed by the packet (its source and number there),
    /// the switch and the input, so that no draw depends on which heads drew before it
    /// (trains and flit-by-flit route an instant's heads in different orders).
    #[cold]
    fn selection_draws(&self, s: usize, i: u32, pid: u32) -> Stream {
        let serial = self.pkts[pid as usize].serial;
        let at = (s as u64) << 32 | i as u64;
        Stream::new(self.spec.params.seed, Purpose::Switch, Stream::key(serial, at))
    }

    /// Grants free VCs of output `p` of switch `s` to waiting heads, in round-robin order
    /// from the input after the last one granted (or oldest packet first).
    pub(super) fn allocate(&mut self, s: usize, p: u32) {
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
        if self.vsep.router {
            return self.allocate_router(s, p);
        }
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
        if self.vc_alloc != crate::fabric::VcAllocator::Greedy {
            return self.allocate_separable(s, p, c);
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
    pub(super) fn allocate_alone(&mut self, s: usize, p: u32, l: u32, i: u32, pid: u32) -> bool {
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
        // A separable VC allocator's state moves as its allocation of this one head would
        // move it: the output allocated at this instant, the VC's pointer one past the head.
        let separable = self.vc_alloc != VcAllocator::Greedy;
        if separable {
            self.vsep.at[pi] = self.now;
        }
        match self.free_vc_for(rr, pi, i, vc_lo, vc_hi, need) {
            Some(vv) => {
                if separable {
                    self.vsep.last[(self.ports[pi].vc_base + vv as u32) as usize] = l;
                }
                self.grant::<false>(s, p, l, i, c, vv);
                true
            }
            None => false,
        }
    }

    /// Grants VC `vv` of output `p` (channel `c`) to the head at local input `l` (input VC
    /// `i`). `FILED`: its requests are filed (and are withdrawn now).
    #[inline(always)]
    pub(super) fn grant<const FILED: bool>(&mut self, s: usize, p: u32, l: u32, i: u32, c: u32, vv: u8) {
        let sw = &self.sws[s];
        let (req_base, words, port_base, bits_base, pwords) =
            (sw.req_base, sw.words, sw.port_base, sw.bits_base, sw.pwords);
        let pi = (port_base + p) as usize;
        let o = self.ports[pi].vc_base + vv as u32;
        if sw.vc_rr {
            self.va_last[i as usize] = o;
        }
        self.own(o, i);
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
                for q in self.wants[i as usize].all_ports().iter() {
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
}

/// The requesters of one output in round-robin order: the local inputs whose bits are set
/// in the `nw` request words at `rq`, starting after `last` (the one granted last, `NONE`:
/// none yet) and wrapping at `n_in`. Each word is read when the scan reaches it; the bits
/// are passed to every step, so the caller may change the engine's state in between.
pub(super) struct RrScan {
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
    pub(super) fn new(rq: usize, nw: usize, last: u32, n_in: u32) -> RrScan {
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
    pub(super) fn next(&mut self, bits: &Arr<u64>) -> Option<u32> {
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
pub(super) mod tests {
    use crate::engine::Sim;

    /// Two VCs a head may choose between, on a loaded mesh: worms share channels. On the
    /// general engine, whose trains and grants these tests count (the express engine would
    /// take this mesh, checks and all).
    pub(in crate::switch) const NET: &str = r#"
[sim]
warmup = "300 cycles"
measure = "3000 cycles"
check = true
express = false
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
            // BookSim2's separable VC allocators: a lone head's grant moves their pointers
            // as their allocation would.
            vec![
                "switch.vc_allocator=\"islip\"",
                "switch.allocator=\"islip\"",
                "switch.vc_choice=\"round-robin\"",
                "switch.vc_reuse_delay=\"2 cycles\"",
                "traffic.load=0.3",
            ],
            vec![
                "switch.vc_allocator=\"separable-input-first\"",
                "switch.allocator=\"max-size\"",
                "switch.vc_choice=\"round-robin\"",
                "traffic.load=0.3",
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
}

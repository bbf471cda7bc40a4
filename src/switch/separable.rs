//! Separable switch allocation, cycle by cycle, for switches whose inputs share the crossbar
//! (more VCs at an input port than its speed-up): BookSim2's input-queued router's
//! `islip`, `separable_output_first` and `separable_input_first` allocators with one
//! iteration and round-robin arbiters (booksim/booksim2 `src/allocators/`,
//! `src/routers/iq_router.cpp`, commit 28f43299).
//!
//! Such a switch allocates its crossbar once an instant at which it has outputs free to
//! send, on the requests present then, as BookSim2 allocates once a cycle
//! (`IQRouter::_SWAllocEvaluate`). First the output VCs whose hold ends at this instant go
//! to the heads waiting for them (in BookSim2 a VC freed in one cycle goes to a head in the
//! next cycle's VC allocation, and that head asks for the switch the cycle after, with
//! every other request of that cycle). Then each free output collects its requests: for
//! each crossbar input (an input port, or with a speed-up of S
//! one of its S slices, VC v on slice v mod S, as BookSim2 expands inputs) the VC of that
//! input, holding this output, whose next flit is in and has a credit downstream; among
//! several, the first in round-robin order from the VC after the one that input last sent
//! (`_sw_rr_offset`). Output-first (iSLIP): each output grants the first asking input from
//! its pointer, each input accepts the first granting output from its pointer.
//! Input-first: each input asks for the first output from its pointer, each output grants
//! the first of those inputs from its pointer. Pointers move one past the matched partner,
//! for matched pairs only. A matched pair sends one flit; an output left unmatched tries
//! again a flit time later, and so does one that comes up for sending later in the instant
//! (a head given a VC that a tail sent now freed at once, with no VC-reuse delay): an input
//! that lost gets no second round. An input sends at most one flit an instant.
//!
//! Where the greedy allocator gives every free output an input that is free (a maximal
//! match), the separable ones may leave an output idle while an input that asked for it
//! sends elsewhere: under load the crossbar carries fewer flits a cycle, as BookSim2's does.
//! BookSim2's `wavefront` (`wavefront.cpp`) and `max_size` (`maxsize.cpp`) allocators run
//! on the same requests: the wavefront sweeps the request matrix diagonal by diagonal from
//! a priority diagonal that moves one on after every allocation with requests (a maximal
//! match); `max_size` grows a maximum matching by shortest augmenting paths, searched from
//! the unmatched inputs in turn from a starting input that moves one on after every
//! allocation. Each has one such pointer per switch, so through such a switch flits go one
//! at a time. The separable allocators' pointers move past a matched pair only, the same
//! after one match of an input and an output as after several: a worm with no rival for
//! its output or its crossbar input goes as a train (`Sim::train_horizon`).
//!
//! With an output speed-up of S (`switch.output_speedup`) each output port is S crossbar
//! outputs, sub-port r asked only by the input ports numbered r mod S, each with its own
//! pointers; an output may then take up to S flits an allocation, into its queue
//! (`switch::speedup`).

use crate::engine::*;
use crate::fabric::SwAllocator;
use crate::time::Time;

/// The separable allocators' pointers, per output and per crossbar input of every switch,
/// and one switch's requests while it allocates. Empty when switches allocate greedily.
#[derive(Clone, Debug, Default)]
pub(crate) struct Separable {
    /// Per crossbar output (`(port_base + port) · os + sub-port`): its pointer over its
    /// switch's crossbar inputs.
    out_ptr: Vec<u16>,
    /// Per crossbar input (`(port_base + port) · smax + slice`): its pointer over its
    /// switch's crossbar outputs.
    in_ptr: Vec<u16>,
    /// Per crossbar input: the VC its requests start from in round-robin order.
    vc_off: Vec<u8>,
    /// Per switch (at its first port): the wavefront's priority diagonal, or the crossbar
    /// input `max_size` starts its search from.
    sw_ptr: Vec<u16>,
    /// Per switch (at its first port): the instant it last allocated [ps]. Checked builds
    /// hold every switch to one allocation an instant.
    #[cfg(feature = "checked")]
    alloc_at: Vec<Time>,
    /// The largest speed-up of any switch (slices per input port).
    smax: u32,
    /// The output speed-up (crossbar outputs, or sub-ports, per output port).
    os: u32,
    /// Scratch, per crossbar output and input of the switch allocating: the input VC that
    /// asks (`NONE`: none).
    req: Vec<u32>,
    /// Scratch, per crossbar output: the crossbar input it is matched with (`NONE`: none).
    matched: Vec<u32>,
    /// Scratch, per crossbar input (input-first): the output it asks for (`NONE`: none).
    asks: Vec<u32>,
    /// Scratch: the crossbar outputs with requests.
    outs: Vec<u32>,
    /// Scratch for `max_size`: per crossbar output, the input its search reached it from, and the
    /// search's two frontiers of inputs.
    from: Vec<u32>,
    front: Vec<u32>,
    next: Vec<u32>,
}

impl Separable {
    /// State for `ports` ports in all, switches of at most `max_ports` ports, an input
    /// speed-up of at most `smax` and an output speed-up of `os`.
    pub(crate) fn new(ports: usize, max_ports: usize, smax: usize, os: usize) -> Separable {
        let xin = ports * smax;
        let xout = max_ports * os;
        Separable {
            out_ptr: vec![0; ports * os],
            in_ptr: vec![0; xin],
            vc_off: vec![0; xin],
            sw_ptr: vec![0; ports],
            #[cfg(feature = "checked")]
            alloc_at: vec![Time::MAX; ports],
            smax: smax as u32,
            os: os as u32,
            req: vec![NONE; xout * max_ports * smax],
            matched: vec![NONE; xout],
            asks: vec![NONE; max_ports * smax],
            outs: Vec::with_capacity(xout),
            from: vec![NONE; xout],
            front: vec![NONE; max_ports * smax],
            next: vec![NONE; max_ports * smax],
        }
    }
}

impl Separable {
    /// Output `p` of `n` (global port `gp`) and crossbar input `x` of `nx` (global index
    /// `gx`) are matched: each one's pointer moves one past the other, or with `loa` one on
    /// from where it was (BookSim2's `LOA::Allocate`).
    #[inline]
    fn advance(&mut self, gp: usize, gx: usize, p: (u32, u32), x: (u32, u32), loa: bool) {
        advance(&mut self.out_ptr[gp], &mut self.in_ptr[gx], p, x, loa);
    }
}

/// The pointers `out_ptr` of output `p` (of `n`) and `in_ptr` of crossbar input `x` (of
/// `nx`), matched: each one past the other, or with `loa` each one on from where it was
/// (BookSim2's `LOA::Allocate`). (Both engines' separable switches.)
#[inline]
pub(crate) fn advance(
    out_ptr: &mut u16,
    in_ptr: &mut u16,
    (p, n): (u32, u32),
    (x, nx): (u32, u32),
    loa: bool,
) {
    if loa {
        *out_ptr = ((*out_ptr as u32 + 1) % nx) as u16;
        *in_ptr = ((*in_ptr as u32 + 1) % n) as u16;
    } else {
        *out_ptr = ((x + 1) % nx) as u16;
        *in_ptr = ((p + 1) % n) as u16;
    }
}

/// One switch's requests for a cycle: `req[p · nx + x] != NONE` where output `p` (of `n`)
/// has a request from crossbar input `x` (of `nx`); `outs`, the outputs with requests, in
/// ascending order.
pub(crate) struct Requests<'a> {
    pub req: &'a [u32],
    pub outs: &'a [u32],
    pub n: u32,
    pub nx: u32,
}

/// Scratch for one allocation: per input (`asks`, and `front`, `next` for `max_size`) and
/// per output (`from`).
pub(crate) struct Scratch<'a> {
    pub asks: &'a mut [u32],
    pub from: &'a mut [u32],
    pub front: &'a mut [u32],
    pub next: &'a mut [u32],
}

/// One allocation (`kind`, not [`SwAllocator::Greedy`]) with the outputs' pointers
/// `out_ptr(p)` over the inputs, the inputs' `in_ptr(x)` over the outputs (separable) and
/// the switch's pointer `sw_ptr` (wavefront, `max_size`: moved on here): leaves in
/// `matched[p]` the input matched with output `p` (`NONE`: none), for every `p` in `r.outs`.
pub(crate) fn allocate(
    kind: SwAllocator,
    r: Requests,
    out_ptr: impl Fn(u32) -> u32,
    in_ptr: impl Fn(u32) -> u32,
    sw_ptr: &mut u16,
    matched: &mut [u32],
    scratch: Scratch,
) {
    let Requests { req, outs, n, nx } = r;
    let asks = scratch.asks;
    match kind {
        SwAllocator::Wavefront => return wavefront(r, sw_ptr, matched, asks, false),
        SwAllocator::RrWavefront => return wavefront(r, sw_ptr, matched, asks, true),
        SwAllocator::MaxSize => {
            let Scratch {
                from, front, next, ..
            } = scratch;
            return max_size(r, sw_ptr, matched, asks, [from, front, next]);
        }
        SwAllocator::Loa => return loa(r, out_ptr, in_ptr, matched, asks, scratch.from),
        _ => {}
    }
    if kind == SwAllocator::SeparableInputFirst {
        // Each input asks for the first output it has a request to, from its pointer ...
        for x in 0..nx {
            let cands = outs
                .iter()
                .copied()
                .filter(|&p| req[(p * nx + x) as usize] != NONE);
            asks[x as usize] = first_in_turn(cands, in_ptr(x), n);
        }
        // ... and each output grants the first input that asked for it, from its pointer.
        for &p in outs {
            matched[p as usize] = first_from(out_ptr(p), nx, |x| asks[x as usize] == p);
        }
        return;
    }
    // Each output grants the first asking input from its pointer ...
    for &p in outs {
        let row = &req[(p * nx) as usize..((p + 1) * nx) as usize];
        matched[p as usize] = first_from(out_ptr(p), nx, |x| row[x as usize] != NONE);
    }
    // ... and each input accepts the first granting output from its pointer.
    for x in 0..nx {
        asks[x as usize] = NONE;
    }
    for &p in outs {
        let x = matched[p as usize];
        if x != NONE && asks[x as usize] == NONE {
            let cands = outs.iter().copied().filter(|&q| matched[q as usize] == x);
            asks[x as usize] = first_in_turn(cands, in_ptr(x), n);
        }
    }
    for &p in outs {
        let x = matched[p as usize];
        if x != NONE && asks[x as usize] != p {
            matched[p as usize] = NONE;
        }
    }
}

/// BookSim2's wavefront allocation (`Wavefront::Allocate`, every request of one priority):
/// over the square of side `max(nx, n)`, diagonal `d` from the priority diagonal `pri` on,
/// output `p` from 0 up, the request of input `(pri + d − p) mod side` is granted if that
/// input and output are still free. `pri` moves one on (the allocator is not called
/// without requests, as BookSim2's returns at once then), or with `skip` (`rr_wavefront`)
/// to the diagonal after that of the first grant, its input plus its output, as BookSim2's
/// `_skip_diags` (a lone request's too: BookSim2 grants it without the sweep, the same
/// grant).
fn wavefront(r: Requests, pri: &mut u16, matched: &mut [u32], inmatch: &mut [u32], skip: bool) {
    let Requests { req, outs, n, nx } = r;
    let side = n.max(nx);
    inmatch[..nx as usize].fill(NONE);
    let p0 = *pri as u32 % side;
    let mut first = NONE;
    for d in 0..side {
        for p in 0..n {
            let x = (p0 + d + side - p) % side;
            if x < nx
                && inmatch[x as usize] == NONE
                && matched[p as usize] == NONE
                && req[(p * nx + x) as usize] != NONE
            {
                inmatch[x as usize] = p;
                matched[p as usize] = x;
                if first == NONE {
                    first = x + p;
                }
            }
        }
    }
    debug_assert!(outs.iter().any(|&p| matched[p as usize] != NONE));
    let from = if skip && first != NONE { first } else { p0 };
    *pri = ((from + 1) % side) as u16;
}

/// BookSim2's lonely output allocation (`LOA::Allocate`): each output's requests counted
/// (`counts`), each input asks for the output it has a request to with the fewest, the
/// first such from its pointer, and each output grants the first input that asked for it
/// from its own pointer (the caller moves the pointers of the matched pairs).
fn loa(
    r: Requests,
    out_ptr: impl Fn(u32) -> u32,
    in_ptr: impl Fn(u32) -> u32,
    matched: &mut [u32],
    asks: &mut [u32],
    counts: &mut [u32],
) {
    let Requests { req, outs, n, nx } = r;
    for p in 0..n {
        let row = &req[(p * nx) as usize..((p + 1) * nx) as usize];
        counts[p as usize] = row.iter().filter(|&&i| i != NONE).count() as u32;
    }
    for x in 0..nx {
        let (off, mut lonely, mut fewest) = (in_ptr(x), NONE, u32::MAX);
        for o in 0..n {
            let p = (o + off) % n;
            if req[(p * nx + x) as usize] != NONE && counts[p as usize] < fewest {
                (lonely, fewest) = (p, counts[p as usize]);
            }
        }
        asks[x as usize] = lonely;
    }
    for &p in outs {
        matched[p as usize] = first_from(out_ptr(p), nx, |x| asks[x as usize] == p);
    }
}

/// BookSim2's maximum-size matching (`MaxSizeMatch::Allocate`): while a shortest augmenting
/// path exists, flip it. Each search starts from the unmatched inputs in turn from `prio`,
/// and goes breadth first, an input trying the outputs in ascending order; an output is
/// reached once, from the first input to try it. `prio` moves one on.
fn max_size(
    r: Requests,
    prio: &mut u16,
    outmatch: &mut [u32],
    inmatch: &mut [u32],
    [from, front, next]: [&mut [u32]; 3],
) {
    let Requests { req, n, nx, .. } = r;
    inmatch[..nx as usize].fill(NONE);
    let start = *prio as u32 % nx;
    'augment: loop {
        let mut len = 0;
        for k in 0..nx {
            let x = (k + start) % nx;
            if inmatch[x as usize] == NONE {
                front[len] = x;
                len += 1;
            }
        }
        from[..n as usize].fill(NONE);
        let (mut cur, mut nxt) = (&mut *front, &mut *next);
        for _ in 0..nx {
            let mut nlen = 0;
            for &x in &cur[..len] {
                for p in 0..n {
                    if req[(p * nx + x) as usize] != NONE
                        && inmatch[x as usize] != p
                        && from[p as usize] == NONE
                    {
                        from[p as usize] = x;
                        if outmatch[p as usize] == NONE {
                            // An augmenting path ends at output `p`: flip it back to its
                            // unmatched input.
                            let (mut p, mut x) = (p, x);
                            outmatch[p as usize] = x;
                            while inmatch[x as usize] != NONE {
                                std::mem::swap(&mut inmatch[x as usize], &mut p);
                                x = from[p as usize];
                                outmatch[p as usize] = x;
                            }
                            inmatch[x as usize] = p;
                            continue 'augment;
                        }
                        nxt[nlen] = outmatch[p as usize];
                        nlen += 1;
                    }
                }
            }
            std::mem::swap(&mut cur, &mut nxt);
            len = nlen;
        }
        break;
    }
    *prio = ((start + 1) % nx) as u16;
}

/// The one of `cands` (of `0..n`) first from `ptr` on, wrapping (`NONE`: none).
#[inline(always)]
fn first_in_turn(cands: impl Iterator<Item = u32>, ptr: u32, n: u32) -> u32 {
    cands
        .min_by_key(|&p| if p >= ptr { p - ptr } else { p + n - ptr })
        .unwrap_or(NONE)
}

/// Whether VC `a` comes before VC `b` in round-robin order from `off` among `n`.
#[inline(always)]
pub(crate) fn rr_before(a: u32, b: u32, off: u32, n: u32) -> bool {
    (a + n - off) % n < (b + n - off) % n
}

/// The first of `0..n` from `ptr` on (wrapping) for which `ok` holds.
#[inline(always)]
fn first_from(ptr: u32, n: u32, mut ok: impl FnMut(u32) -> bool) -> u32 {
    for j in 0..n {
        let x = if ptr + j >= n { ptr + j - n } else { ptr + j };
        if ok(x) {
            return x;
        }
    }
    NONE
}

impl Sim<'_> {
    /// Switch `s` (whose inputs share the crossbar) allocates its crossbar for this instant
    /// with its separable allocator and sends the matched flits, one per matched pair
    /// (`first`: its first send phase of the instant). An output that comes up for sending
    /// in a later phase of the instant (a head given a VC that a tail sent in the first one
    /// freed) waits for the next allocation, a flit time later: one allocation an instant.
    pub(crate) fn separable_send(&mut self, s: usize, first: bool) {
        let sw = self.sws[s];
        let (n, pb, sp) = (sw.n_ports, sw.port_base, sw.speedup);
        let os = self.sep.os;
        let (nx, no) = (n * sp, n * os);
        let sb = (sw.bits_base + sw.words + sw.pwords) as usize;
        #[cfg(feature = "checked")]
        if first {
            let at = &mut self.sep.alloc_at[pb as usize];
            assert!(*at != self.now, "switch {s} allocates twice at {} ps", self.now);
            *at = self.now;
        }
        let mut outs = std::mem::take(&mut self.sep.outs);
        outs.clear();
        for w in 0..sw.pwords as usize {
            let mut word = std::mem::take(&mut self.bits[sb + w]);
            while word != 0 {
                let p = (w << 6) as u32 + word.trailing_zeros();
                word &= word - 1;
                if first {
                    self.separable_requests(s, p, nx, &mut outs);
                    continue;
                }
                // A later phase: the output waits for the next allocation.
                let c = self.ports[(pb + p) as usize].out;
                if c != NONE && self.output_has_work(c) {
                    let t = self.output_free_at(c);
                    let t = t.max(self.now + self.alloc_period(c));
                    self.ensure_txfree(c, t);
                }
            }
        }
        if outs.is_empty() {
            self.sep.outs = outs;
            return;
        }
        let smax = self.sep.smax;
        let sep = &mut self.sep;
        let (out_ptr, in_ptr) = (&sep.out_ptr, &sep.in_ptr);
        allocate(
            self.sw_allocator,
            Requests {
                req: &sep.req,
                outs: &outs,
                n: no,
                nx,
            },
            |e| out_ptr[(pb * os + e) as usize] as u32,
            |x| in_ptr[((pb + x / sp) * smax + x % sp) as usize] as u32,
            &mut sep.sw_ptr[pb as usize],
            &mut sep.matched,
            Scratch {
                asks: &mut sep.asks,
                from: &mut sep.from,
                front: &mut sep.front,
                next: &mut sep.next,
            },
        );
        // The crossbar outputs matched, a port's sub-ports together in ascending order: a
        // port that took flits sends them from its queue in that order.
        let mut k = 0;
        while k < outs.len() {
            let p = outs[k] / os;
            let c = self.ports[(pb + p) as usize].out;
            let mut sent = false;
            while k < outs.len() && outs[k] / os == p {
                let e = outs[k];
                k += 1;
                let x = std::mem::replace(&mut self.sep.matched[e as usize], NONE);
                if x != NONE {
                    let i = self.sep.req[(e * nx + x) as usize];
                    let iv = &self.vcs[i as usize];
                    let (o, vc, in_port) = (iv.fwd, iv.vc as u32, iv.in_port as u32);
                    let nvc_in = self.chans[iv.chan as usize].nvc as u32;
                    let gx = ((pb + in_port) * smax + x % sp) as usize;
                    let loa = self.sw_allocator == SwAllocator::Loa;
                    self.sep
                        .advance((pb * os + e) as usize, gx, (e, no), (x, nx), loa);
                    self.sep.vc_off[gx] = ((vc + sp) % nvc_in) as u8;
                    if self.queued {
                        self.send_queued(s, p, i, o, c, pb + in_port);
                    } else {
                        self.send_flits(s, p, i, o, c, pb + in_port, false);
                    }
                    sent = true;
                }
                self.sep.req[(e * nx) as usize..((e + 1) * nx) as usize].fill(NONE);
            }
            if sent {
                let busy = self.output_free_at(c);
                if self.output_has_work(c) {
                    self.ensure_txfree(c, busy);
                }
            } else {
                // Lost: it asks again next cycle.
                let t = self.now + self.alloc_period(c);
                self.ensure_txfree(c, t);
            }
        }
        self.sep.outs = outs;
    }

    /// Files the requests of output `p` of switch `s` (`nx` crossbar inputs) for this
    /// instant, if it is free to send, and adds its crossbar outputs that have any to
    /// `outs` (with an output speed-up of S, sub-port r takes the requests of the input
    /// ports numbered r mod S, as BookSim2 expands outputs). An output that is not free, or
    /// whose next flits are not in yet, is woken when that changes.
    fn separable_requests(&mut self, s: usize, p: u32, nx: u32, outs: &mut Vec<u32>) {
        let sw = &self.sws[s];
        let (pb, sp) = (sw.port_base, sw.speedup);
        let c = self.ports[(pb + p) as usize].out;
        if c == NONE {
            return;
        }
        let now = self.now;
        let ch = &self.chans[c as usize];
        let (vc_base, credit, tx_busy) = (ch.vc_base, ch.credit, ch.tx_busy);
        // A train's tail passing now releases its output VC before anything else.
        self.release_passed_trains(s, p, c, vc_base, now);
        let free = if self.queued {
            self.accept[c as usize]
        } else {
            tx_busy.max(self.tm(c).next_start(now))
        };
        if free > now {
            if self.output_has_work(c) {
                self.ensure_txfree(c, free);
            }
            return;
        }
        let (smax, os) = (self.sep.smax, self.sep.os);
        let mut wait = Time::MAX;
        // The sub-ports with requests, a bit each.
        let mut subs = 0u32;
        // (Only VCs with an owner can have a flit to send: `owned`.)
        let mut m = self.owned[c as usize];
        while m != 0 {
            let o = vc_base + m.trailing_zeros();
            m &= m - 1;
            let i = match self.ready_front(o, now) {
                Ok(i) => i,
                Err(t) => {
                    wait = wait.min(t);
                    continue;
                }
            };
            let iv = &self.vcs[i as usize];
            let (vc, in_port) = (iv.vc as u32, iv.in_port as u32);
            let nvc_in = self.chans[iv.chan as usize].nvc as u32;
            if credit && !self.has_credits(o, 1) {
                continue;
            }
            let slice = vc % sp;
            let gx = ((pb + in_port) * smax + slice) as usize;
            let sub = in_port % os;
            let r = ((p * os + sub) * nx + in_port * sp + slice) as usize;
            let held = self.sep.req[r];
            if held == NONE
                || rr_before(
                    vc,
                    self.vcs[held as usize].vc as u32,
                    self.sep.vc_off[gx] as u32,
                    nvc_in,
                )
            {
                self.sep.req[r] = i;
            }
            subs |= 1 << sub;
        }
        if wait != Time::MAX {
            self.ensure_txfree(c, wait);
        }
        while subs != 0 {
            outs.push(p * os + subs.trailing_zeros());
            subs &= subs - 1;
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    const OUT: SwAllocator = SwAllocator::SeparableOutputFirst;
    const IN: SwAllocator = SwAllocator::SeparableInputFirst;
    const WAVE: SwAllocator = SwAllocator::Wavefront;
    const RRWAVE: SwAllocator = SwAllocator::RrWavefront;
    const LOA: SwAllocator = SwAllocator::Loa;
    const MAX: SwAllocator = SwAllocator::MaxSize;

    /// Runs one allocation on `n` outputs and inputs (no speed-up) with the requests
    /// `(output, input)` and the pointers given; returns each output's match.
    fn run(kind: SwAllocator, n: u32, asks: &[(u32, u32)], out_ptr: &[u32], in_ptr: &[u32]) -> Vec<u32> {
        run_sw(kind, n, asks, out_ptr, in_ptr, &mut 0)
    }

    /// As [`run`], with the switch's pointer `sw_ptr` (wavefront, `max_size`).
    fn run_sw(
        kind: SwAllocator,
        n: u32,
        asks: &[(u32, u32)],
        out_ptr: &[u32],
        in_ptr: &[u32],
        sw_ptr: &mut u16,
    ) -> Vec<u32> {
        let mut req = vec![NONE; (n * n) as usize];
        let mut outs = Vec::new();
        for &(p, x) in asks {
            req[(p * n + x) as usize] = 7; // an input VC
            if !outs.contains(&p) {
                outs.push(p);
            }
        }
        outs.sort();
        let mut matched = vec![NONE; n as usize];
        let mut scratch = vec![vec![NONE; n as usize]; 4];
        let [a, f, fr, nx] = &mut scratch[..] else {
            unreachable!()
        };
        let r = Requests {
            req: &req,
            outs: &outs,
            n,
            nx: n,
        };
        allocate(
            kind,
            r,
            |p| out_ptr[p as usize],
            |x| in_ptr[x as usize],
            sw_ptr,
            &mut matched,
            Scratch {
                asks: a,
                from: f,
                front: fr,
                next: nx,
            },
        );
        matched
    }

    /// Two inputs ask for one output in the same cycle: the first from the output's pointer
    /// wins; with the pointer moved one past the winner, the other wins the next cycle.
    #[test]
    fn two_inputs_one_output_take_turns() {
        for kind in [OUT, IN] {
            let asks = [(0, 1), (0, 2)];
            assert_eq!(run(kind, 3, &asks, &[0, 0, 0], &[0, 0, 0])[0], 1, "{kind:?}");
            let mut sep = Separable::new(3, 3, 1, 1);
            sep.advance(0, 1, (0, 3), (1, 3), false);
            assert_eq!((sep.out_ptr[0], sep.in_ptr[1]), (2, 1));
            let m = run(kind, 3, &asks, &[2, 0, 0], &[0, 1, 0]);
            assert_eq!(m[0], 2, "{kind:?}");
            // With the pointer at input 0, which does not ask: input 1.
            assert_eq!(run(kind, 3, &asks, &[0, 0, 0], &[0, 0, 0])[0], 1, "{kind:?}");
        }
    }

    /// The separable allocators lose matches: input 0 asks for outputs 0 and 1, input 1 for
    /// output 1 only. Output-first, both outputs grant input 0 (their pointers are at 0),
    /// which accepts output 0: output 1 idles this cycle though input 1 asked for it.
    /// Input-first, input 0 asks for output 0 only, and both pairs match.
    #[test]
    fn a_separable_match_need_not_be_maximal() {
        let asks = [(0, 0), (1, 0), (1, 1)];
        assert_eq!(run(OUT, 2, &asks, &[0, 0], &[0, 0]), vec![0, NONE]);
        assert_eq!(run(IN, 2, &asks, &[0, 0], &[0, 0]), vec![0, 1]);
        // With input 0's pointer at output 1 it accepts output 1 (output-first) or asks for
        // it (input-first); output 0 idles, and input 1 waits.
        assert_eq!(run(OUT, 2, &asks, &[0, 0], &[1, 0]), vec![NONE, 0]);
        assert_eq!(run(IN, 2, &asks, &[0, 0], &[1, 0]), vec![NONE, 0]);
    }

    /// A loaded 4×4 mesh, 4 VCs an input: the separable switches share their crossbar
    /// inputs (also `vc_alloc`'s tests).
    pub(in crate::switch) const NET: &str = r#"
[sim]
warmup = "300 cycles"
measure = "3000 cycles"
check = true
[topology]
kind = "mesh"
k = [4, 4]
[channel]
vcs = 4
buffer = 4
latency = "1 cycles"
credit_delay = "2 cycles"
[switch]
router_delay = "2 cycles"
vc_choice = "round-robin"
[traffic]
load = 0.4
packet_size = 3
"#;

    /// Each switch allocates its crossbar once an instant (checked builds assert it in
    /// `separable_send`), also where a tail frees its output VC at once (no VC-reuse delay)
    /// and a waiting head takes it at the same instant: that head waits for the next
    /// allocation. The runs keep their invariants (`check`) and repeat bit for bit.
    #[test]
    fn a_separable_switch_allocates_once_an_instant() {
        for alloc in [
            "separable-input-first",
            "separable-output-first",
            "wavefront",
            "max-size",
        ] {
            for reuse in ["0 cycles", "2 cycles"] {
                let set = vec![
                    format!("switch.allocator=\"{alloc}\""),
                    format!("switch.vc_reuse_delay=\"{reuse}\""),
                ];
                let spec =
                    crate::config::load_str("once.toml", NET, std::path::Path::new("."), &set).unwrap();
                let result = || {
                    let mut sim = Sim::new(&spec).unwrap();
                    assert!(sim.sws.iter().any(|w| w.xbar), "{set:?}: no shared crossbar");
                    let out = sim.run(&mut |_| {}).unwrap();
                    assert!(out.deadlock.is_none(), "{set:?}");
                    serde_json::to_string(&sim.result(&out)).unwrap()
                };
                let r = result();
                assert!(r.contains("accepted"), "{set:?}");
                assert_eq!(r, result(), "{set:?}: not deterministic");
            }
        }
    }

    /// Every output is matched with at most one input and every input with at most one
    /// output, whatever the requests and pointers (4 outputs, 4 inputs: all 2^16 request
    /// sets, pointers varied with them).
    #[test]
    fn a_match_pairs_each_input_and_output_once() {
        for bits in 0u32..1 << 16 {
            let asks: Vec<(u32, u32)> = (0..16)
                .filter(|b| bits >> b & 1 != 0)
                .map(|b| (b / 4, b % 4))
                .collect();
            let ptr: Vec<u32> = (0..4).map(|k| (bits >> (k * 3)) % 4).collect();
            let iptr: Vec<u32> = (0..4).map(|k| (bits >> (k * 2 + 1)) % 4).collect();
            let most = max_matching(&asks, 4);
            for kind in [OUT, IN, WAVE, RRWAVE, MAX, LOA] {
                let m = run_sw(kind, 4, &asks, &ptr, &iptr, &mut ((bits % 4) as u16));
                for (p, &x) in m.iter().enumerate() {
                    if x != NONE {
                        assert!(asks.contains(&(p as u32, x)), "{kind:?} {asks:?}: {m:?}");
                        assert_eq!(
                            m.iter().filter(|&&y| y == x).count(),
                            1,
                            "{kind:?} {asks:?}: {m:?}"
                        );
                    }
                }
                // Some pair matches whenever there is a request.
                assert_eq!(asks.is_empty(), m.iter().all(|&x| x == NONE), "{kind:?} {asks:?}");
                let size = m.iter().filter(|&&x| x != NONE).count();
                if kind == WAVE || kind == RRWAVE {
                    // Maximal: no request left with both its input and output free.
                    for &(p, x) in &asks {
                        assert!(m[p as usize] != NONE || m.contains(&x), "{asks:?}: {m:?}");
                    }
                }
                if kind == MAX {
                    assert_eq!(size, most, "{asks:?}: {m:?}");
                }
            }
        }
    }

    /// The size of a maximum matching of `asks` (`n` outputs and inputs), by trying every
    /// assignment of outputs to inputs.
    fn max_matching(asks: &[(u32, u32)], n: u32) -> usize {
        fn go(p: u32, n: u32, asks: &[(u32, u32)], used: &mut Vec<bool>) -> usize {
            if p == n {
                return 0;
            }
            let mut best = go(p + 1, n, asks, used);
            for x in 0..n {
                if !used[x as usize] && asks.contains(&(p, x)) {
                    used[x as usize] = true;
                    best = best.max(1 + go(p + 1, n, asks, used));
                    used[x as usize] = false;
                }
            }
            best
        }
        go(0, n, asks, &mut vec![false; n as usize])
    }

    /// The wavefront sweeps diagonals from its priority diagonal, worked by hand from
    /// `Wavefront::Allocate`: with every input asking for every output of three, diagonal
    /// 0 pairs output 0 with input 0, output 1 with input 2 and output 2 with input 1;
    /// the next allocation starts from diagonal 1 (outputs 0, 1, 2 with inputs 1, 0, 2).
    #[test]
    fn the_wavefront_turns_its_priority_diagonal() {
        let all: Vec<(u32, u32)> = (0..9).map(|b| (b / 3, b % 3)).collect();
        let mut pri = 0;
        assert_eq!(run_sw(WAVE, 3, &all, &[0; 3], &[0; 3], &mut pri), vec![0, 2, 1]);
        assert_eq!(pri, 1);
        assert_eq!(run_sw(WAVE, 3, &all, &[0; 3], &[0; 3], &mut pri), vec![1, 0, 2]);
        assert_eq!(pri, 2);
        // One request: granted, and the diagonal still moves on.
        assert_eq!(
            run_sw(WAVE, 3, &[(1, 1)], &[0; 3], &[0; 3], &mut pri),
            vec![NONE, 1, NONE]
        );
        assert_eq!(pri, 0);
    }

    /// `rr_wavefront` grants as the wavefront does, and moves its priority diagonal past the
    /// diagonal of its first grant (`_skip_diags`): worked by hand, three outputs and
    /// inputs, from diagonal 0 a lone request of input 2 for output 2 is met on diagonal
    /// 1 (2 + 2 = 4, so 4 + 1 mod 3: diagonal 2 next), where the wavefront moves to 1.
    #[test]
    fn the_rr_wavefront_skips_to_the_diagonal_after_its_first_grant() {
        for (kind, next) in [(WAVE, 1), (RRWAVE, 2)] {
            let mut pri = 0;
            let m = run_sw(kind, 3, &[(2, 2)], &[0; 3], &[0; 3], &mut pri);
            assert_eq!(m, vec![NONE, NONE, 2]);
            assert_eq!(pri, next, "{kind:?}");
        }
        // Every request: the first grant is on the priority diagonal itself (output 0,
        // input `pri`), so both move one on.
        let all: Vec<(u32, u32)> = (0..9).map(|b| (b / 3, b % 3)).collect();
        let mut pri = 1;
        assert_eq!(run_sw(RRWAVE, 3, &all, &[0; 3], &[0; 3], &mut pri), vec![1, 0, 2]);
        assert_eq!(pri, 2);
    }

    /// The lonely output allocator, worked by hand from `LOA::Allocate`: input 0 asks for
    /// outputs 0 and 1, input 1 for output 0 alone. Output 0 has two requests, output 1 one:
    /// input 0 asks for the lonelier output 1, so both outputs are matched (input-first
    /// from the same pointers would have both inputs ask for output 0). Between outputs of
    /// as many requests an input takes the first from its pointer.
    #[test]
    fn the_lonely_output_allocator_asks_for_the_output_fewest_want() {
        let asks = [(0, 0), (0, 1), (1, 0)];
        assert_eq!(run(LOA, 2, &asks, &[0; 2], &[0; 2]), vec![1, 0]);
        assert_eq!(run(IN, 2, &asks, &[0; 2], &[0; 2]), vec![0, NONE]);
        let both = [(0, 0), (1, 0)];
        assert_eq!(run(LOA, 2, &both, &[0; 2], &[0; 2]), vec![0, NONE]);
        assert_eq!(run(LOA, 2, &both, &[0; 2], &[1, 0]), vec![NONE, 0]);
    }

    /// `max_size` finds the augmenting path a separable match misses, worked by hand from
    /// `MaxSizeMatch::_ShortestAugmenting`: input 0 asks for outputs 0 and 1, input 1 for
    /// output 0. The first search matches input 0 with output 0; the second, from input 1,
    /// reaches output 0, then input 0, then output 1, and flips the path: output 0 to
    /// input 1, output 1 to input 0. The search's first input moves on each allocation.
    #[test]
    fn max_size_augments_a_path() {
        let asks = [(0, 0), (1, 0), (0, 1)];
        let mut prio = 0;
        assert_eq!(run_sw(MAX, 2, &asks, &[0; 2], &[0; 2], &mut prio), vec![1, 0]);
        assert_eq!(prio, 1);
        assert_eq!(run(OUT, 2, &asks, &[0; 2], &[0; 2]), vec![0, NONE]);
        // From input 1 first: it takes output 0, then input 0 output 1; the same match.
        assert_eq!(run_sw(MAX, 2, &asks, &[0; 2], &[0; 2], &mut prio), vec![1, 0]);
        assert_eq!(prio, 0);
    }
}

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
//! match), this one may leave an output idle while an input that asked for it sends
//! elsewhere: under load the crossbar carries fewer flits a cycle, as BookSim2's does.
//! Flits go one at a time (no trains through such a switch).

use crate::engine::*;
use crate::fabric::SwAllocator;
use crate::time::Time;

/// The separable allocators' pointers, per output and per crossbar input of every switch,
/// and one switch's requests while it allocates. Empty when switches allocate greedily.
#[derive(Clone, Debug, Default)]
pub(crate) struct Separable {
    /// Per port of every node (`port_base + port`): the output's pointer over its switch's
    /// crossbar inputs.
    out_ptr: Vec<u16>,
    /// Per crossbar input (`(port_base + port) · smax + slice`): its pointer over its
    /// switch's outputs.
    in_ptr: Vec<u16>,
    /// Per crossbar input: the VC its requests start from in round-robin order.
    vc_off: Vec<u8>,
    /// Per switch (at its first port): the instant it last allocated [ps]. Checked builds
    /// hold every switch to one allocation an instant.
    #[cfg(feature = "checked")]
    alloc_at: Vec<Time>,
    /// The largest speed-up of any switch (slices per input port).
    smax: u32,
    /// Scratch, per output and crossbar input of the switch allocating: the input VC that
    /// asks (`NONE`: none).
    req: Vec<u32>,
    /// Scratch, per output: the crossbar input it is matched with (`NONE`: none).
    matched: Vec<u32>,
    /// Scratch, per crossbar input (input-first): the output it asks for (`NONE`: none).
    asks: Vec<u32>,
    /// Scratch: the outputs with requests.
    outs: Vec<u32>,
}

impl Separable {
    /// State for `ports` ports in all, switches of at most `max_ports` ports and a speed-up
    /// of at most `smax`.
    pub(crate) fn new(ports: usize, max_ports: usize, smax: usize) -> Separable {
        let xin = ports * smax;
        Separable {
            out_ptr: vec![0; ports],
            in_ptr: vec![0; xin],
            vc_off: vec![0; xin],
            #[cfg(feature = "checked")]
            alloc_at: vec![Time::MAX; ports],
            smax: smax as u32,
            req: vec![NONE; max_ports * max_ports * smax],
            matched: vec![NONE; max_ports],
            asks: vec![NONE; max_ports * smax],
            outs: Vec::with_capacity(max_ports),
        }
    }
}

impl Separable {
    /// Output `p` of `n` (global port `gp`) and crossbar input `x` of `nx` (global index
    /// `gx`) are matched: each one's pointer moves one past the other.
    #[inline]
    fn advance(&mut self, gp: usize, gx: usize, (p, n): (u32, u32), (x, nx): (u32, u32)) {
        self.out_ptr[gp] = ((x + 1) % nx) as u16;
        self.in_ptr[gx] = ((p + 1) % n) as u16;
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

/// One iteration of separable allocation (`kind`, not [`SwAllocator::Greedy`]) with the
/// outputs' pointers `out_ptr(p)` over the inputs and the inputs' `in_ptr(x)` over the
/// outputs: leaves in `matched[p]` the input matched with output `p` (`NONE`: none), for
/// every `p` in `r.outs`. `asks` is scratch (one per input).
pub(crate) fn allocate(
    kind: SwAllocator,
    r: Requests,
    out_ptr: impl Fn(u32) -> u32,
    in_ptr: impl Fn(u32) -> u32,
    matched: &mut [u32],
    asks: &mut [u32],
) {
    let Requests { req, outs, n, nx } = r;
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

/// The one of `cands` (of `0..n`) first from `ptr` on, wrapping (`NONE`: none).
#[inline(always)]
fn first_in_turn(cands: impl Iterator<Item = u32>, ptr: u32, n: u32) -> u32 {
    cands
        .min_by_key(|&p| if p >= ptr { p - ptr } else { p + n - ptr })
        .unwrap_or(NONE)
}

/// Whether VC `a` comes before VC `b` in round-robin order from `off` among `n`.
#[inline(always)]
fn rr_before(a: u32, b: u32, off: u32, n: u32) -> bool {
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
        let nx = n * sp;
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
                    if self.separable_requests(s, p, nx) {
                        outs.push(p);
                    }
                    continue;
                }
                // A later phase: the output waits for the next allocation.
                let c = self.ports[(pb + p) as usize].out;
                if c != NONE && self.output_has_work(c) {
                    let t = self.chans[c as usize].tx_busy;
                    let t = t.max(self.now + self.tm(c).flit_time);
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
                n,
                nx,
            },
            |p| out_ptr[(pb + p) as usize] as u32,
            |x| in_ptr[((pb + x / sp) * smax + x % sp) as usize] as u32,
            &mut sep.matched,
            &mut sep.asks,
        );
        for &p in &outs {
            let x = std::mem::replace(&mut self.sep.matched[p as usize], NONE);
            let c = self.ports[(pb + p) as usize].out;
            if x == NONE {
                // Lost: it asks again next cycle.
                let t = self.now + self.tm(c).flit_time;
                self.ensure_txfree(c, t);
            } else {
                let i = self.sep.req[(p * nx + x) as usize];
                let iv = &self.vcs[i as usize];
                let (o, vc, in_port) = (iv.fwd, iv.vc as u32, iv.in_port as u32);
                let nvc_in = self.chans[iv.chan as usize].nvc as u32;
                let gx = ((pb + in_port) * smax + x % sp) as usize;
                self.sep.advance((pb + p) as usize, gx, (p, n), (x, nx));
                self.sep.vc_off[gx] = ((vc + sp) % nvc_in) as u8;
                self.send_flits(s, p, i, o, c, pb + in_port, false);
                let busy = self.chans[c as usize].tx_busy;
                if self.output_has_work(c) {
                    self.ensure_txfree(c, busy);
                }
            }
            self.sep.req[(p * nx) as usize..((p + 1) * nx) as usize].fill(NONE);
        }
        self.sep.outs = outs;
    }

    /// Files the requests of output `p` of switch `s` (`nx` crossbar inputs) for this
    /// instant, if it is free to send; returns whether there are any. An output that is not
    /// free, or whose next flits are not in yet, is woken when that changes.
    fn separable_requests(&mut self, s: usize, p: u32, nx: u32) -> bool {
        let sw = &self.sws[s];
        let (pb, sp) = (sw.port_base, sw.speedup);
        let c = self.ports[(pb + p) as usize].out;
        if c == NONE {
            return false;
        }
        let now = self.now;
        let ch = &self.chans[c as usize];
        let (nvc, vc_base, credit, tx_busy) = (ch.nvc as u32, ch.vc_base, ch.credit, ch.tx_busy);
        // A train's tail passing now releases its output VC before anything else.
        self.release_passed_trains(s, p, vc_base, nvc, now);
        let start = self.tm(c).next_start(now);
        if tx_busy > now || start != now {
            if self.output_has_work(c) {
                self.ensure_txfree(c, tx_busy.max(start));
            }
            return false;
        }
        let smax = self.sep.smax;
        let mut wait = Time::MAX;
        let mut any = false;
        for vv in 0..nvc {
            let o = vc_base + vv;
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
            let r = (p * nx + in_port * sp + slice) as usize;
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
            any = true;
        }
        if wait != Time::MAX {
            self.ensure_txfree(c, wait);
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: SwAllocator = SwAllocator::SeparableOutputFirst;
    const IN: SwAllocator = SwAllocator::SeparableInputFirst;

    /// Runs one allocation on `n` outputs and inputs (no speed-up) with the requests
    /// `(output, input)` and the pointers given; returns each output's match.
    fn run(kind: SwAllocator, n: u32, asks: &[(u32, u32)], out_ptr: &[u32], in_ptr: &[u32]) -> Vec<u32> {
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
        let mut scratch = vec![NONE; n as usize];
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
            &mut matched,
            &mut scratch,
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
            let mut sep = Separable::new(3, 3, 1);
            sep.advance(0, 1, (0, 3), (1, 3));
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
    /// inputs.
    const NET: &str = r#"
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
        for alloc in ["separable-input-first", "separable-output-first"] {
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
            for kind in [OUT, IN] {
                let m = run(kind, 4, &asks, &ptr, &iptr);
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
            }
        }
    }
}

//! Switches that queue flits after the crossbar: an internal speed-up of 2
//! (`switch.internal_speedup`), BookSim2's input-queued router run with
//! `internal_speedup = 2.0` (`Router::Evaluate` calls `IQRouter::_InternalStep` twice a
//! cycle, booksim/booksim2 commit 28f43299) as the `dragonflyconfig` example sets it, and
//! an output speed-up (`switch.output_speedup`, below).
//!
//! The switch allocates its crossbar twice a cycle, each time as once a cycle without a
//! speed-up (the separable allocators of [`super::separable`], the VC allocators of
//! [`super::vc_alloc`]): an output takes at most one flit a step (half a flit time), and an
//! input sends at most one. A flit crossing goes into the output's queue (`_output_buffer`,
//! one FIFO for all the output's VCs, unbounded as BookSim2's default
//! `output_buffer_size = -1`), which sends one flit a cycle on the channel, on the edges
//! of its flit time: a flit allocated at an edge leaves then, one allocated half way
//! through a cycle leaves at the next edge (in BookSim2 its crossbar step falls in the next
//! cycle), each no earlier than the flit ahead of it has left. The flit takes its credit
//! downstream as it is allocated, and its own input buffer's credit starts back from the
//! edge of the cycle it was allocated in: BookSim2 sends both steps' credits at the end of
//! the cycle (`_SendCredits`). The next head in the input VC behind a tail starts its
//! router delay a step after the tail (`_SWAllocUpdate` files it for the next step).
//!
//! Every time the switch acts on is then on the half-flit-time grid where the delays are
//! (the BookSim2 translation's are), and each step allocates on the state as BookSim2's step
//! sees it. As in BookSim2's pipeline, a head spends at least a step in the switch before
//! it is allocated and a freed output VC at least two (the config refuses shorter
//! `router_delay` and `vc_reuse_delay`), and every head goes through the step's VC
//! allocation (no grant to a lone head as it is routed): what happens at an instant then
//! does not depend on the order of its events (`tests/speedup.rs`).
//!
//! An output speed-up of S (`switch.output_speedup`, BookSim2's `output_speedup`) uses the
//! same output queue once a cycle: the separable allocator matches S crossbar outputs per
//! output port, sub-port r taking the requests of the input ports numbered r mod S
//! (`IQRouter::_SWAllocEvaluate`'s expanded outputs), each with its own pointers; the flits
//! an output takes at an allocation join its queue in the order of their sub-ports (in
//! BookSim2, of its list of VCs in switch allocation), and the queue sends one a flit time,
//! each as soon as the channel is free. Each flit's input credit starts back as it is
//! allocated, as without a queue.

use crate::engine::*;
use crate::time::Time;

impl Sim<'_> {
    /// How long after an allocation the output of channel `c` (or an input) may take part in
    /// the next: a flit time, or a step with an internal speed-up.
    #[inline(always)]
    pub(crate) fn alloc_period(&self, c: u32) -> Time {
        let ft = self.tm(c).flit_time;
        if self.internal_speedup == 1 {
            ft
        } else {
            ft / self.internal_speedup as Time
        }
    }

    /// When the output of channel `c` may take its next flit: when the channel is free, or
    /// with an output queue when the queue takes the next.
    #[inline(always)]
    pub(crate) fn output_free_at(&self, c: u32) -> Time {
        if !self.queued {
            self.chans[c as usize].tx_busy
        } else {
            self.accept[c as usize]
        }
    }

    /// The flit at the front of input VC `i` (in port `in_port`) crosses the switch `s` to
    /// output VC `o` (port `p`, channel `c`) through its output queue (an internal or an
    /// output speed-up): see the module doc.
    pub(super) fn send_queued(&mut self, s: usize, p: u32, i: u32, o: u32, c: u32, in_port: u32) {
        let now = self.now;
        let v = &self.vcs[i as usize];
        let (buf, head, mask, in_chan) = (v.buf, v.head, v.mask, v.chan);
        let front = self.ring[(buf + (head & mask)) as usize];
        let (first, dst) = (front.flit, front.dst);
        let ends_tail = first & TAIL != 0;
        let v = &mut self.vcs[i as usize];
        v.head = v.head.wrapping_add(1);
        v.len -= 1;
        self.last_move[i as usize] = now;
        let tm = *self.tm(c);
        let ft = tm.flit_time;
        let tx_busy = self.chans[c as usize].tx_busy;
        let it = *self.tm(in_chan);
        let (ift, icd) = (it.flit_time, it.credit_delay);
        let (d, t0) = if self.internal_speedup == 1 {
            // An output speed-up alone: the queue sends as soon as the channel is free, and
            // the credit starts back now.
            (now.max(tx_busy), now)
        } else {
            // The input buffer's credit starts back from the cycle's edge (never before its
            // credit delay before now: a credit cannot land in the past).
            let edge = |t: Time| t.div_ceil(ft) * ft;
            let t0 = (now / ift * ift).max(now.saturating_sub(icd));
            (edge(now).max(edge(tx_busy)), t0)
        };
        self.send_at(c, o, first & !TAIL, dst, ends_tail, d);
        let pace = it.send_pace();
        self.return_credits(i, 1, t0, pace, t0);
        let step = self.alloc_period(c);
        self.accept[c as usize] = now + step;
        self.ports[in_port as usize].xbar_free = now + step;
        if ends_tail {
            self.release(s, p, i, o);
        }
    }

    /// Channel `c` carries one flit toward VC `o` from `d` (now or later: the output queue
    /// holds it until then); it lands a unit and the channel's latency after.
    fn send_at(&mut self, c: u32, o: u32, first: u32, dst: u32, ends_tail: bool, d: Time) {
        if !self.fail_at.is_empty() && d >= self.fail_at[c as usize] {
            self.send_dead(c, o, first, 1, ends_tail);
            return;
        }
        let tm = *self.tm(c);
        let unit = if ends_tail { tm.tail_time } else { tm.flit_time };
        self.occupy_from(c, d, 1, tm.flit_time, unit, !ends_tail);
        let credit = self.chans[c as usize].credit;
        let classes = if ends_tail {
            (tm.arr_tail, tm.head_route_tail)
        } else {
            (tm.arr_data, tm.head_route)
        };
        let a0 = d + unit + tm.latency;
        // No arrival shortcut, and the events at their times (`clocked`): the flit may
        // start later than now.
        self.land_train::<false>(
            c,
            o,
            first,
            dst,
            1,
            ends_tail,
            (d, a0, tm.flit_time),
            classes,
            (credit, false, true),
        );
    }
}

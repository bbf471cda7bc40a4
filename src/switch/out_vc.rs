//! Output VCs as allocation sees them: whether one is free (the lowest free VC of a range,
//! or the VCs in turn after the one an input VC was last given, as BookSim2's VC allocators
//! give them), the credits a head needs before it is granted one, and a VC held by a train
//! until its tail passes, released on time when a head wants it.

use crate::engine::*;
use crate::fabric::SwitchMode;
use crate::time::Time;

impl Sim<'_> {
    /// A free output VC of channel `c` among `lo..=hi` with at least `need` credits (0: any).
    #[inline(always)]
    pub(super) fn free_vc(&mut self, pi: usize, lo: u8, hi: u8, need: u32) -> Option<u8> {
        let port = &self.ports[pi];
        let (base, credit) = (port.vc_base, port.credit);
        let hi = hi.min(port.nvc - 1);
        let mut vv = lo;
        while vv <= hi {
            if self.vc_free(base + vv as u32, need, credit) {
                return Some(vv);
            }
            vv += 1;
        }
        None
    }

    /// Whether output VC `o` is free, with at least `need` credits (0: any) where the
    /// channel has credits.
    #[inline(always)]
    pub(super) fn vc_free(&mut self, o: u32, need: u32, credit: bool) -> bool {
        let owner = self.vcs[o as usize].owner;
        if owner == HELD || owner == HELD_EV {
            self.look_at_held(o, owner);
        }
        self.vcs[o as usize].owner == NONE && (need == 0 || !credit || self.has_credits(o, need))
    }

    /// [`Self::free_vc`] for input VC `i` where VCs are chosen round robin
    /// ([`crate::fabric::VcChoice::RoundRobin`]): the first free one after the VC `i` was
    /// last given if that was one of these, wrapping within `lo..=hi`; else from `lo`.
    #[inline(never)]
    pub(super) fn free_vc_rr(&mut self, pi: usize, i: u32, lo: u8, hi: u8, need: u32) -> Option<u8> {
        let port = &self.ports[pi];
        let (base, credit) = (port.vc_base, port.credit);
        let hi = hi.min(port.nvc - 1) as u32;
        let lo = lo as u32;
        if lo > hi {
            return None;
        }
        let last = self.va_last[i as usize];
        let start = if last != NONE && last >= base + lo && last < base + hi {
            last - base + 1
        } else {
            lo
        };
        let n = hi - lo + 1;
        for j in 0..n {
            let vv = start + j;
            let vv = if vv > hi { vv - n } else { vv };
            if self.vc_free(base + vv, need, credit) {
                return Some(vv as u8);
            }
        }
        None
    }

    /// [`Self::free_vc`], or [`Self::free_vc_rr`] for input VC `i` if `rr`.
    #[inline(always)]
    pub(super) fn free_vc_for(
        &mut self,
        rr: bool,
        pi: usize,
        i: u32,
        lo: u8,
        hi: u8,
        need: u32,
    ) -> Option<u8> {
        if rr {
            self.free_vc_rr(pi, i, lo, hi, need)
        } else {
            self.free_vc(pi, lo, hi, need)
        }
    }

    /// Output VC `o` is held by a train whose tail passes at `end`, and a head looks at it:
    /// it is free if that is past (or now, after this instant's first send phase, where the
    /// tail went flit by flit, or at once on a separable switch); else the release must now
    /// happen on time, for this head.
    #[inline]
    pub(super) fn look_at_held(&mut self, o: u32, owner: u32) {
        let end = self.held[o as usize];
        if end < self.now || (end == self.now && (self.sent_phase || self.release_due)) {
            self.disown(o);
        } else if owner == HELD {
            self.release_on_time(o, end);
        }
    }

    /// Output VC `o`, held by a train whose tail passes at `end` (now or later), is wanted:
    /// it is released then by an event (or in this instant's send phase).
    #[inline(never)]
    pub(super) fn release_on_time(&mut self, o: u32, end: Time) {
        self.vcs[o as usize].owner = HELD_EV;
        if end == self.now {
            self.held_due(o);
        } else {
            self.q.push_at(self.now, end, ev(K_TAILGONE, o, 0));
        }
    }

    /// Credits a head needs on an output VC before it may be granted: none (wormhole), the
    /// packet's length (cut-through, store-and-forward), or the whole buffer where the VC
    /// waits for the last tail's credit.
    #[inline]
    pub(super) fn need(mode: SwitchMode, tail_credit: bool, len: u32) -> u32 {
        if tail_credit {
            NEED_ALL
        } else if mode == SwitchMode::Wormhole {
            0
        } else {
            len
        }
    }

    /// [`Self::need`] of packet `pid`'s head; a wormhole switch that releases VCs with the
    /// tail needs nothing, and then the packet is not read.
    #[inline(always)]
    pub(super) fn need_of(&self, mode: SwitchMode, tail_credit: bool, pid: u32) -> u32 {
        if mode == SwitchMode::Wormhole && !tail_credit {
            0
        } else {
            Self::need(mode, tail_credit, self.pkts[pid as usize].len)
        }
    }

    /// Releases the output VCs of channel `c` (first VC `vc_base`; output `p` of switch `s`)
    /// whose train's tail has passed by `now`: before anything else looks at the output.
    #[inline(always)]
    pub(crate) fn release_passed_trains(&mut self, s: usize, p: u32, c: u32, vc_base: u32, now: Time) {
        let mut m = self.owned[c as usize];
        while m != 0 {
            let w = vc_base + m.trailing_zeros();
            m &= m - 1;
            let owner = self.vcs[w as usize].owner;
            if (owner == HELD || owner == HELD_EV) && self.held[w as usize] <= now {
                self.release_out(s, p, w);
            }
        }
    }

    /// Output VC `o` goes to input VC `i`.
    #[inline(always)]
    pub(crate) fn own(&mut self, o: u32, i: u32) {
        let v = &mut self.vcs[o as usize];
        v.owner = i;
        let (c, b) = (v.chan, v.vc);
        self.owned[c as usize] |= 1 << b;
    }

    /// Output VC `o` is free.
    #[inline(always)]
    pub(crate) fn disown(&mut self, o: u32) {
        let v = &mut self.vcs[o as usize];
        v.owner = NONE;
        let (c, b) = (v.chan, v.vc);
        self.owned[c as usize] &= !(1 << b);
    }
}

#[cfg(test)]
mod tests {
    use super::super::alloc::tests::NET;
    use crate::engine::Sim;

    /// A hand-worked case of [`Sim::free_vc_rr`]: input VC `i` was last given VC `v` of an
    /// output of 4 VCs; the next head it holds gets the first free VC after `v`, wrapping
    /// within its range, and the lowest of its range when it was last given another output.
    #[test]
    fn vcs_in_turn_start_after_the_last_one_given() {
        let set = vec![
            "channel.vcs=4".to_string(),
            "switch.vc_choice=\"round-robin\"".to_string(),
        ];
        let spec = crate::config::load_str("rr.toml", NET, std::path::Path::new("."), &set).unwrap();
        let mut sim = Sim::new(&spec).unwrap();
        let sw = sim.sws[5];
        // An output of switch 5 that leads to another switch, and an input VC of it.
        let (pi, other) = {
            let mut ps = (sw.port_base..sw.port_base + sw.n_ports)
                .map(|p| p as usize)
                .filter(|&p| sim.ports[p].out != crate::engine::NONE && sim.ports[p].nvc == 4);
            (ps.next().unwrap(), ps.next().unwrap())
        };
        let i = sim.sw_in[sw.in_base as usize];
        let base = sim.ports[pi].vc_base;
        // None given yet: the lowest.
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(0));
        sim.va_last[i as usize] = base + 1;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(2));
        // VC 2 taken: the next free after it.
        sim.vcs[(base + 2) as usize].owner = 12345;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(3));
        // The last one given was the top of the range: wrap to its bottom.
        sim.va_last[i as usize] = base + 3;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(0));
        assert_eq!(sim.free_vc_rr(pi, i, 1, 3, 0), Some(1));
        // Within a range (a dateline class) the turn wraps at its top: 1 was last, 2 is
        // taken, so 1 again.
        sim.va_last[i as usize] = base + 1;
        assert_eq!(sim.free_vc_rr(pi, i, 1, 2, 0), Some(1));
        // Last given a VC of another output: from the bottom of the range.
        sim.va_last[i as usize] = sim.ports[other].vc_base + 1;
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), Some(0));
        // Everything taken: none.
        for v in 0..4 {
            sim.vcs[(base + v) as usize].owner = 12345;
        }
        assert_eq!(sim.free_vc_rr(pi, i, 0, 3, 0), None);
    }
}

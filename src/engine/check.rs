//! The invariant checks of `sim.check`: every credit accounted for, buffers within their
//! bounds, each switch's routing marks matching its inputs' states, and flits and packets
//! conserved.

use super::*;

impl<'a> Sim<'a> {
    /// Every credit accounted for: for each credit-controlled VC, credits held by the sender
    /// + flits in flight + flits buffered + credits on their way back = buffer size.
    pub(super) fn check_credits(&self) -> Res<()> {
        for (o, v) in self.vcs.iter().enumerate() {
            let ch = &self.chans[v.chan as usize];
            if (self.owned[v.chan as usize] >> v.vc & 1 != 0) != (v.owner != NONE) {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "{} vc {}: its owner is {} but the channel's owned VCs are {:#x}",
                        self.fab.channel_name(crate::fabric::ChannelId(v.chan)),
                        v.vc,
                        v.owner,
                        self.owned[v.chan as usize]
                    ),
                }));
            }
            if !ch.credit {
                continue;
            }
            let back = v.head.wrapping_sub(v.cr_head);
            let sum = v.credits as u64 + self.inflight[o] as u64 + v.len as u64 + back as u64;
            if sum != self.caps[o] as u64 {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "credits of {} vc {} do not add up: {} held + {} flits in flight + {} buffered + {} \
                         credits in flight ≠ {} (vc id {o})",
                        self.fab.channel_name(crate::fabric::ChannelId(v.chan)),
                        v.vc,
                        v.credits,
                        self.inflight[o],
                        v.len,
                        back,
                        self.caps[o]
                    ),
                }));
            }
            if v.len > self.caps[o] {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "buffer of {} vc {} holds {} flits, more than its {}",
                        self.fab.channel_name(crate::fabric::ChannelId(v.chan)),
                        v.vc,
                        v.len,
                        self.caps[o]
                    ),
                }));
            }
        }
        // Each switch's set of inputs being routed matches their states.
        for v in self.vcs.iter() {
            let s = v.node as usize;
            if s >= self.sws.len() {
                continue;
            }
            let l = v.local as usize;
            let word = self.pending[s * self.pend_words as usize + (l >> 6)];
            let marked = word >> (l & 63) & 1 != 0;
            let routed = matches!(v.state, ROUTING | READY) && v.flags & F_UNWATCHED == 0;
            if marked != routed {
                return Err(Box::new(SimError::Invariant {
                    time: self.now,
                    what: format!(
                        "switch {}: input {} is {}marked as being routed, in state {}",
                        self.fab.nodes[s].name,
                        l,
                        if marked { "" } else { "not " },
                        v.state
                    ),
                }));
            }
        }
        Ok(())
    }

    /// No flit created or lost: injected = delivered + buffered + in flight; and after a
    /// completed full drain, every packet delivered.
    pub(super) fn check_conservation(&self, drained: bool) -> Res<()> {
        let buffered: u64 = self.vcs.iter().map(|v| v.len as u64).sum();
        let in_flight: u64 = self.inflight.iter().map(|&f| f as u64).sum();
        // A header flit stripped before it reached the switch that strips it is counted as
        // stripped already, and still where it is (on the wire, upstream, or not yet injected
        // at all): once too often.
        let stripped_ahead: u64 = self.vcs.iter().map(|v| v.strip_pending as u64).sum();
        if self.c.flits_sent + stripped_ahead
            != self.c.flits_delivered + buffered + in_flight + self.c.flits_stripped + self.c.flits_dropped
        {
            return Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!(
                    "flits not conserved: {} injected ≠ {} delivered + {} buffered + {} in flight + {} \
                     stripped ({} of them before they arrived)",
                    self.c.flits_sent,
                    self.c.flits_delivered,
                    buffered,
                    in_flight,
                    self.c.flits_stripped,
                    stripped_ahead
                ),
            }));
        }
        self.check_packets(drained)
    }

    /// After a completed full drain, every packet delivered (or lost to a failure).
    pub(super) fn check_packets(&self, drained: bool) -> Res<()> {
        if drained
            && self.spec.params.drain_all
            && self.c.packets_delivered + self.c.packets_lost != self.c.packets_injected
        {
            return Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!(
                    "{} packets injected but {} delivered after a full drain",
                    self.c.packets_injected, self.c.packets_delivered
                ),
            }));
        }
        Ok(())
    }
}

/// What is wrong, if anything, with flits of packet `pid` landing at host `h`: `before` of
/// its flits had landed (`pkt.seen` counts these too), the first of them a head or not,
/// the last a tail or not. Both engines' checks ask it.
pub(crate) fn landing_fault(
    pid: u32,
    pkt: &Pkt,
    h: u32,
    before: u32,
    head: bool,
    tail: bool,
) -> Option<String> {
    if pkt.dst != h {
        Some(format!("packet {pid} for host {} arrived at host {h}", pkt.dst))
    } else if head != (before == 0) {
        Some(format!(
            "packet {pid}: head flag on flit {} of {}",
            before + 1,
            pkt.len
        ))
    } else if tail != (pkt.seen == pkt.len) {
        Some(format!(
            "packet {pid}: tail flag after flit {} of {}",
            pkt.seen, pkt.len
        ))
    } else {
        None
    }
}

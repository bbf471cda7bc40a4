//! The express engine's invariant checks (`sim.check`), compiled into `Express<_, true>` only
//! (in `Express<_, false>` every one is `if false`): each VC's ring holds no more than its
//! buffer (credits on their way back and flits, `cr..hd..tl`), only a head comes to the
//! front of a VC, every flit reaches the host its packet is for, in order, head first and
//! tail last, and at the end flits and packets are conserved — what the general engine's
//! checks (`engine::check`) say of the same run.

use super::*;

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// Records a broken invariant: the run stops at the end of this instant with it.
    #[cold]
    fn broken(sim: &mut Sim, what: String) {
        let e = Box::new(SimError::Invariant { time: sim.now, what });
        sim.failed.get_or_insert(e);
    }

    /// The general engine's name of VC `o`: its channel and VC number.
    fn vc_name(&self, sim: &Sim, o: VcIx) -> String {
        let v = &sim.vcs[self.vsim[o] as usize];
        format!(
            "{} vc {}",
            sim.fab.channel_name(crate::fabric::ChannelId(v.chan)),
            v.vc
        )
    }

    /// VC `o`'s ring holds no more than its buffer.
    #[inline(always)]
    pub(super) fn check_ring(&self, sim: &mut Sim, o: VcIx) {
        if !F::CHECK {
            return;
        }
        let x = &self.v[o];
        let used = x.tl.wrapping_sub(x.cr);
        let flits = x.tl.wrapping_sub(x.hd);
        if used > x.cap as u32 || flits > used {
            let what = if flits > used {
                format!(
                    "buffer of {}: its ring's flits ({flits}) pass its returning credits",
                    self.vc_name(sim, o)
                )
            } else {
                format!(
                    "buffer of {} holds {flits} flits and {} credits on their way back, more than its {}",
                    self.vc_name(sim, o),
                    used - flits,
                    x.cap
                )
            };
            Self::broken(sim, what);
        }
    }

    /// The packet at the front of input VC `i` starts with its head.
    #[inline(always)]
    pub(super) fn check_front(&self, sim: &mut Sim, i: VcIx) {
        if !F::CHECK {
            return;
        }
        let x = &self.v[i];
        let flit = self.ring[x.slot(x.hd)].flit;
        if flit & HEAD == 0 {
            let what = format!(
                "a body flit of packet {} reached the front of an empty VC ({})",
                flit & PID,
                self.vc_name(sim, i)
            );
            Self::broken(sim, what);
        }
    }

    /// Flit `flit` of a packet lands at host `h`: the packet's host, its flits in order.
    #[inline(always)]
    pub(super) fn check_landing(sim: &mut Sim, flit: u32, h: u32) {
        if !F::CHECK {
            return;
        }
        let pid = flit & PID;
        let pkt = &mut sim.pkts[pid as usize];
        let before = pkt.seen;
        pkt.seen += 1;
        let bad = landing_fault(pid, pkt, h, before, flit & HEAD != 0, flit & TAIL != 0);
        if let Some(what) = bad {
            Self::broken(sim, what);
        }
    }

    /// At the end of a run: every ring within its buffer, and no flit created or lost
    /// (sent by hosts = delivered + in the network, buffered or on their way); after a
    /// completed full drain, every packet delivered.
    pub(super) fn check_end(&self, sim: &mut Sim, drained: bool) -> Res<()> {
        if !F::CHECK {
            return Ok(());
        }
        for o in 0..self.v.len() as u32 {
            self.check_ring(sim, VcIx(o));
        }
        if let Some(e) = sim.failed.take() {
            return Err(e);
        }
        // A flit into a host is delivered as it is sent (the host's ring keeps only its
        // credits); every other ring holds the flits on their way to its switch.
        let in_network: u64 = self
            .v
            .iter()
            .filter(|x| x.flags & XF_TO_HOST == 0)
            .map(|x| x.tl.wrapping_sub(x.hd) as u64)
            .sum();
        if sim.c.flits_sent != sim.c.flits_delivered + in_network {
            return Err(Box::new(SimError::Invariant {
                time: sim.now,
                what: format!(
                    "flits not conserved: {} injected ≠ {} delivered + {} in the network",
                    sim.c.flits_sent, sim.c.flits_delivered, in_network
                ),
            }));
        }
        sim.check_packets(drained)
    }
}

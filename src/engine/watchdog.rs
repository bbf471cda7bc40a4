//! The run-time deadlock watchdog. Every half watchdog period the engine looks at the input
//! VCs whose front flit has not moved for a whole period. Such a VC is *blocked* if it
//! holds an output whose next buffer is full (it waits for that buffer), or if every output
//! it asked for is held by another worm (it waits for those worms). The deadlocked set is the
//! largest set of stale, blocked VCs that wait only on each other; if it is not empty, the
//! network can never move again, and the engine stops and names a cycle of channels in it.
//! A slow but live network never qualifies, whatever the period: a VC that waits on anything
//! that can still move is removed from the set.

use super::{ACTIVE, NONE, Sim, WAITING};
use crate::fabric::ChannelId;
use crate::routing::cdg::ChanVc;
use crate::time::Time;
use serde::Serialize;

/// A detected deadlock.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Deadlock {
    /// When it was detected [ps].
    pub time: Time,
    /// Input VCs that can never move again.
    pub blocked_vcs: usize,
    /// A cycle of channels waiting on each other, `"s0:1→s1:0 (vc 0)"` each.
    pub cycle: Vec<String>,
    /// The same cycle as (channel, vc) ids.
    #[serde(skip)]
    pub cycle_ids: Vec<ChanVc>,
}

impl Sim<'_> {
    /// VCs that input VC `i` waits on, if it is blocked, each with the channel VC it waits
    /// for (the full buffer it needs, or the output VC another worm holds).
    fn waits_on(&self, i: u32, out: &mut Vec<(u32, u32)>) -> bool {
        out.clear();
        let v = &self.vcs[i as usize];
        match v.state {
            ACTIVE => {
                if self.credits_at(v.fwd) == 0 {
                    out.push((v.fwd, v.fwd));
                    return true;
                }
                false
            }
            WAITING => {
                let want = self.want_of(i);
                let sw = &self.sws[v.node as usize];
                let need = if sw.tail_credit {
                    super::NEED_ALL
                } else if sw.mode == crate::fabric::SwitchMode::Wormhole {
                    0
                } else {
                    let pid = self.ring[(v.buf + (v.head & v.mask)) as usize].flit & super::PID;
                    self.pkts[pid as usize].len
                };
                let l = v.local as usize;
                for p in want.all_ports().iter() {
                    // Only the outputs it asked for: a selection policy may have picked one
                    // of several, and the head waits for that one alone, even if another it
                    // could have taken is free now.
                    let rq = (sw.req_base + p as u32 * sw.words) as usize + (l >> 6);
                    if self.bits[rq] >> (l & 63) & 1 == 0 {
                        continue;
                    }
                    let c = self.ports[(sw.port_base + p as u32) as usize].out;
                    if c == NONE {
                        continue;
                    }
                    let oc = &self.chans[c as usize];
                    let vcs = want
                        .ranges_at(p)
                        .into_iter()
                        .flatten()
                        .flat_map(|(lo, hi, empty)| {
                            let need = if empty { super::NEED_ALL } else { need };
                            (lo..=hi.min(oc.nvc - 1)).map(move |vv| (vv, need))
                        });
                    for (vv, need) in vcs {
                        let o = oc.vc_base + vv as u32;
                        let ov = &self.vcs[o as usize];
                        if ov.owner == super::HELD || ov.owner == super::HELD_EV {
                            // A train's tail is passing it: it is free or soon will be.
                            return false;
                        } else if ov.owner != NONE {
                            out.push((ov.owner, o));
                        } else if self.credits_at(o) >= self.credits_needed(o, need) {
                            // A free output it can take: not blocked.
                            return false;
                        } else {
                            // Free but short of credits (cut-through, or waiting for a tail's
                            // credit): waits for the buffer.
                            out.push((o, o));
                        }
                    }
                }
                !out.is_empty()
            }
            _ => false,
        }
    }

    /// The deadlock, if the network has one.
    pub(crate) fn find_deadlock(&self, period: Time) -> Option<Deadlock> {
        let now = self.now;
        let n = self.vcs.len();
        let stale = |i: usize| self.vcs[i].len > 0 && now.saturating_sub(self.last_move[i]) >= period;
        if !(0..n).any(stale) {
            return None;
        }
        let mut inset = vec![false; n];
        let mut succ: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut buf = Vec::new();
        for i in 0..n {
            if stale(i) && self.waits_on(i as u32, &mut buf) {
                inset[i] = true;
                succ[i] = buf.clone();
            }
        }
        // Greatest fixpoint: drop members that wait on a non-member.
        loop {
            let mut changed = false;
            for i in 0..n {
                if inset[i] && succ[i].iter().any(|&(j, _)| !inset[j as usize]) {
                    inset[i] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let blocked = inset.iter().filter(|&&b| b).count();
        let start = inset.iter().position(|&b| b)?;
        // Walk successors inside the set until a VC repeats: that loop is a cycle. Report the
        // channels waited for along it, each once.
        let mut order = vec![usize::MAX; n];
        let mut path: Vec<(usize, u32)> = Vec::new();
        let mut x = start;
        while order[x] == usize::MAX {
            order[x] = path.len();
            let (j, via) = succ[x]
                .iter()
                .copied()
                .find(|&(j, _)| inset[j as usize])
                .expect("members wait on members");
            path.push((x, via));
            x = j as usize;
        }
        let mut vias: Vec<u32> = path[order[x]..].iter().map(|p| p.1).collect();
        vias.dedup();
        if vias.len() > 1 && vias.first() == vias.last() {
            vias.pop();
        }
        let ids: Vec<ChanVc> = vias
            .iter()
            .map(|&o| ChanVc {
                channel: ChannelId(self.vcs[o as usize].chan),
                vc: self.vcs[o as usize].vc,
            })
            .collect();
        Some(Deadlock {
            time: now,
            blocked_vcs: blocked,
            cycle: ids
                .iter()
                .map(|cv| format!("{} (vc {})", self.fab.channel_name(cv.channel), cv.vc))
                .collect(),
            cycle_ids: ids,
        })
    }
}

//! Flow-control tokens on the engine's arrays: the IEEE 1355 DS link's FCTs
//! (`../shared/systems/ieee1355.md`, "DS link").
//!
//! The receiver of a token channel grants the sender `grant` characters (8) per token. Each
//! flit that leaves the receiver's buffer frees a slot; the freed slots wait, *pending*, until
//! `grant` of them make a token. The token is sent on the reverse channel (whose transmitter
//! is the receiving node's own output on that link) at the first moment that transmitter is
//! free, before its next flit, and occupies it for `token_time` (4 bits); the grant lands at
//! the sender when the token has arrived. At most `max_outstanding` characters (56) may be
//! granted and not yet received; at link start-up every side holds as many grants as its
//! receiver has room for, up to that bound.
//!
//! The lazy credit ring of every VC holds this exactly: a slot whose flit has left carries
//! [`PENDING`] plus the time it leaves until its token is sent, then the token's arrival
//! time; the sender collects slots in order as their times pass, as for plain credits.
//!
//! Order independence: a token needed at instant `t` is placed only after every component has
//! acted at `t` ([`Sim::flush_tokens`]): a flit that starts at `t` on the reverse channel keeps
//! it, and the token follows that flit. A token needed earlier and still waiting has taken
//! the channel before any later flit (the transmitter's `tx_busy` moves past it), which is the
//! token's priority over the next data character.
//!
//! Trains: a switch or a host sends a train on a channel that carries tokens only as far as
//! no token can come between its flits ([`Sim::token_train_limit`]). Flits that leave a
//! token channel's buffer in a train (or land in a host, or are stripped, as a train lands)
//! leave at their own times, after now: their slots count towards a token only from then
//! (`TokChan::ahead`), and an event then sends the token they complete, at the instant flit
//! by flit would.

use crate::engine::*;
use crate::fabric::Fabric;
use crate::fabric::FlowControl;
use crate::time::Time;

/// Credit time of a slot whose flit has left but whose token is not yet sent: this plus
/// the time the flit leaves (any time at or above it: not landed, for the sender).
pub(crate) const PENDING: Time = 1 << 62;

/// The low bits of a `K_CREDIT` event that settles a token channel's slots whose flits
/// have left by now ([`Sim::tokens_due`]).
pub(crate) const TOKENS_DUE: u32 = 1;

/// Token state of one channel (token channels have one VC).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokChan {
    /// Freed slots not yet covered by a token.
    pub pend: u32,
    /// Slots freed by flits that leave after now (the last `ahead` before the ring's head,
    /// in the order they leave): they join `pend` as their time comes.
    pub ahead: u32,
    /// When the settling event last asked for happens (`Time::MAX`: none asked for).
    pub due_at: Time,
    pub grant: u32,
    pub max_out: u32,
    /// The reverse channel the tokens travel on.
    pub rev: u32,
    pub token_time: Time,
    /// The buffer is larger than `max_outstanding`: arrivals may allow a token, and
    /// flits land in and leave the buffer one at a time (a train would change the
    /// receiver's count of outstanding grants at once; see [`Sim::token_train_limit`]).
    pub bound: bool,
    /// Queued for this instant's token flush.
    pub queued: bool,
    pub on: bool,
    /// The token channel whose tokens travel on this channel ([`NONE`]: none).
    pub carries: u32,
}

impl Default for TokChan {
    fn default() -> TokChan {
        TokChan {
            pend: 0,
            ahead: 0,
            due_at: Time::MAX,
            grant: 0,
            max_out: 0,
            rev: NONE,
            token_time: 0,
            bound: false,
            queued: false,
            on: false,
            carries: NONE,
        }
    }
}

/// The token state of every channel of `fab` (default for others), checking that token
/// channels have one VC, a reverse channel and room for a whole grant.
pub(crate) fn token_channels(fab: &Fabric) -> Result<Vec<TokChan>, SimError> {
    let mut out = vec![TokChan::default(); fab.channels.len()];
    for (c, ch) in fab.channels.iter().enumerate() {
        let FlowControl::Tokens {
            grant,
            max_outstanding,
            token_time,
        } = ch.params.flow
        else {
            continue;
        };
        let name = || fab.channel_name(crate::fabric::ChannelId(c as u32));
        let bad = |what: String| Err(SimError::Invalid(format!("{}: {what}", name())));
        if ch.params.vcs != 1 {
            return bad(format!(
                "token flow control runs on one VC, not {}",
                ch.params.vcs
            ));
        }
        let Some(rev) = ch.reverse else {
            return bad("token flow control needs a channel in the opposite direction".into());
        };
        if grant == 0 || token_time == 0 || max_outstanding < grant || ch.params.buffer < grant {
            return bad(format!(
                "tokens need token_grant ≥ 1, a positive token_time, token_max ≥ token_grant \
                 and a buffer ≥ token_grant (token_grant {grant}, token_max {max_outstanding}, \
                 buffer {})",
                ch.params.buffer
            ));
        }
        out[c] = TokChan {
            pend: 0,
            ahead: 0,
            due_at: Time::MAX,
            grant,
            max_out: max_outstanding,
            rev: rev.0,
            token_time,
            bound: ch.params.buffer > max_outstanding,
            queued: false,
            on: true,
            carries: out[c].carries,
        };
        out[rev.idx()].carries = c as u32;
    }
    Ok(out)
}

impl Sim<'_> {
    /// The state after link start-up: the sender holds as many whole grants as the buffer
    /// has room for, up to `max_outstanding`; the rest of the buffer is pending.
    pub(crate) fn tokens_start(&mut self) {
        for c in 0..self.tok.len() {
            let t = self.tok[c];
            if !t.on {
                continue;
            }
            let o = self.chans[c].vc_base as usize;
            let cap = self.caps[o];
            let granted = cap.min(t.max_out) / t.grant * t.grant;
            let v = &mut self.vcs[o];
            v.credits = granted;
            v.cr_head = 0;
            v.head = cap - granted;
            for j in 0..v.head {
                let slot = (v.buf + (j & v.mask)) as usize;
                self.ring[slot].time = PENDING;
            }
            self.tok[c].pend = cap - granted;
        }
    }

    /// Whether flits may leave token channel `c`'s buffer in trains (see
    /// [`Sim::token_train_limit`]).
    #[inline(never)]
    pub(crate) fn token_trains_out(&self, c: u32) -> bool {
        !self.tok[c as usize].bound && self.fail_at.is_empty() && !self.queued
    }

    /// How many flits a switch or a host may send from now as one train on channel `c`,
    /// whose flits tokens may come between (it carries another channel's tokens, or is a
    /// token channel itself): at least 1.
    ///
    /// A token that becomes due at an instant `t` goes after the flit that started at or
    /// before `t` ([`Sim::flush_tokens`]), so a train of `k` flits is what flit by flit
    /// sends if no token for the channel `r` it carries becomes due before its last flit
    /// starts. A token for `r` becomes due when a flit leaving `r`'s buffer (at the other
    /// end of `r`) makes `grant` freed slots: those that leave at known times after now
    /// first (`TokChan::ahead`), then the buffer's, no earlier than [`Sim::nth_departure`].
    ///
    /// A token channel takes trains (its flits landing, leaving and freeing their slots at
    /// their own times) where it is no larger than `max_outstanding`: then neither the
    /// receiver's count of outstanding grants, which a train would change at once, ever
    /// stops a token, nor do arrivals send one. Channels that may fail, and switches that
    /// queue flits after the crossbar (a speed-up), keep flits one at a time.
    #[inline(never)]
    pub(crate) fn token_train_limit(&self, c: u32, unit: Time) -> u32 {
        let t = &self.tok[c as usize];
        if (t.on && t.bound) || !self.fail_at.is_empty() || self.queued || unit == 0 {
            return 1;
        }
        let r = t.carries;
        if r == NONE {
            return u32::MAX;
        }
        let tr = &self.tok[r as usize];
        if tr.queued || tr.bound {
            return 1;
        }
        let i = self.chans[r as usize].vc_base;
        let v = &self.vcs[i as usize];
        let now = self.now;
        // The slots freed after now, in the order their flits leave; those whose time has
        // come count as pending.
        let leaves = |j: u32| {
            self.ring[(v.buf + (v.head.wrapping_sub(tr.ahead - j) & v.mask)) as usize].time - PENDING
        };
        let gone = (0..tr.ahead).take_while(|&j| leaves(j) <= now).count() as u32;
        let need = tr.grant.saturating_sub(tr.pend + gone).max(1);
        let ahead = tr.ahead - gone;
        let due = if need <= ahead {
            leaves(gone + need - 1)
        } else {
            let after = if ahead > 0 { leaves(tr.ahead - 1) } else { now };
            self.nth_departure(i, need - ahead).max(after)
        };
        ((due - now) / unit).min(MAX_TRAIN as Time) as u32 + 1
    }

    /// The earliest time the `n`-th flit from now (`n` ≥ 1) could leave the buffer of
    /// input VC `i` (a lower bound, now or later).
    ///
    /// - No flit leaves before it has landed: those in the buffer at their landing
    ///   times, then those still to land, one at least every `min(flit, tail time)` of the
    ///   channel, the first of them now if one may be on its way, else one unit and the
    ///   latency after now.
    /// - A head being routed leaves its router delay after it reached the front.
    /// - A worm holding an output sends a flit only with a credit ([`Sim::nth_credit`]):
    ///   the `n`-th flit leaves no earlier than the last of the first `n` that is in the
    ///   buffer and known to be the worm's (up to its tail).
    pub(crate) fn nth_departure(&self, i: u32, n: u32) -> Time {
        let now = self.now;
        let v = &self.vcs[i as usize];
        let slot = |j: u32| &self.ring[(v.buf + (v.head.wrapping_add(j) & v.mask)) as usize];
        // (A slot holds its flit's landing plus the switch's flit delay: a head is routed,
        // and stripped of its header, from its landing on.)
        let landing = |j: u32| slot(j).time.saturating_sub(self.flit_delay);
        let landed = if n <= v.len {
            landing(n - 1).max(now)
        } else {
            let tm = self.tm(v.chan);
            let u = tm.flit_time.min(tm.tail_time);
            let first = if self.chans[v.chan as usize].tx_busy + tm.latency > now {
                now
            } else {
                now + u + tm.latency
            };
            first.saturating_add((n - v.len - 1) as Time * u)
        };
        let own = match v.state {
            ROUTING if v.len > 0 => landing(0) + self.tm(v.chan).router_delay,
            ACTIVE if v.fwd < HELD_EV && v.len > 0 => {
                let known = n.min(v.len);
                let own = (0..known)
                    .find(|&j| slot(j).flit & TAIL != 0)
                    .map_or(known, |j| j + 1);
                self.nth_credit(v.fwd, own)
            }
            _ => now,
        };
        landed.max(own)
    }

    /// The earliest time the sender of output VC `o` could hold its `n`-th credit from now
    /// (a lower bound, now or later): those it holds and those on their way (a slot whose
    /// token is not sent yet, now), then those of the flits in the receiver's buffer, if
    /// it is an output buffer: they leave it on its one channel one after another, the
    /// first when that channel is free, each a unit (flit or tail time) after the one
    /// before, and their credits land the credit delay after they leave.
    fn nth_credit(&self, o: u32, n: u32) -> Time {
        let now = self.now;
        let v = &self.vcs[o as usize];
        if n <= v.credits || !self.chans[v.chan as usize].credit {
            return now;
        }
        let m = n - v.credits;
        let back = v.head.wrapping_sub(v.cr_head);
        if m <= back {
            let t = self.ring[(v.buf + (v.cr_head.wrapping_add(m - 1) & v.mask)) as usize].time;
            return if t >= PENDING { now } else { t.max(now) };
        }
        let node = v.node;
        if node < self.fab.stage_base || node >= self.fab.switches {
            return now;
        }
        let Some(out) = self.fab.out_chan[node as usize].iter().flatten().next() else {
            return now;
        };
        let tm = self.tm(out.0);
        let mut t = self.chans[out.idx()].tx_busy.max(now);
        for j in 0..m - back - 1 {
            t += if j >= v.len {
                tm.flit_time.min(tm.tail_time)
            } else if self.ring[(v.buf + (v.head.wrapping_add(j) & v.mask)) as usize].flit & TAIL != 0 {
                tm.tail_time
            } else {
                tm.flit_time
            };
        }
        t + self.tm(v.chan).credit_delay
    }

    /// `k` flits just left the buffer of token channel `c`'s VC `i` (its ring head has moved
    /// past them), the j-th leaving at `pace.at(t0, j)` (the last at `last`), now or later:
    /// their slots wait for a token, counted as pending from then.
    #[inline]
    pub(crate) fn tokens_left(&mut self, c: u32, i: u32, k: u32, t0: Time, pace: Pace, last: Time) {
        let v = &self.vcs[i as usize];
        let first = v.head.wrapping_sub(k);
        for j in 0..k {
            let slot = (v.buf + (first.wrapping_add(j) & v.mask)) as usize;
            let leaves = if j + 1 == k { last } else { pace.at(t0, j) };
            self.ring[slot].time = PENDING + leaves;
        }
        self.tok[c as usize].ahead += k;
        self.tokens_settle(c);
    }

    /// Counts token channel `c`'s slots whose flits have left by now as pending; queues
    /// the token they complete for this instant's flush, or asks to be called again when
    /// the flit that completes the next one leaves.
    fn tokens_settle(&mut self, c: u32) {
        let now = self.now;
        let v = &self.vcs[self.chans[c as usize].vc_base as usize];
        let (buf, head, mask) = (v.buf, v.head, v.mask);
        let t = &mut self.tok[c as usize];
        while t.ahead > 0 {
            let slot = (buf + (head.wrapping_sub(t.ahead) & mask)) as usize;
            if self.ring[slot].time - PENDING > now {
                break;
            }
            t.ahead -= 1;
            t.pend += 1;
        }
        if t.pend >= t.grant {
            if !t.queued {
                t.queued = true;
                self.fct_due.push(c);
            }
        } else {
            self.tokens_ask(c);
        }
    }

    /// Asks for a `K_CREDIT` event (`TOKENS_DUE`) when the flit that completes token
    /// channel `c`'s next token leaves, if it is among those that leave after now.
    fn tokens_ask(&mut self, c: u32) {
        let t = self.tok[c as usize];
        if t.pend >= t.grant || t.pend + t.ahead < t.grant {
            return;
        }
        let o = self.chans[c as usize].vc_base;
        let v = &self.vcs[o as usize];
        let j = t.ahead - (t.grant - t.pend - 1);
        let at = self.ring[(v.buf + (v.head.wrapping_sub(j) & v.mask)) as usize].time - PENDING;
        if at != t.due_at {
            self.tok[c as usize].due_at = at;
            self.q.push_at(self.now, at, ev(K_CREDIT, o, TOKENS_DUE));
        }
    }

    /// The event [`Sim::tokens_ask`] asked for: token channel `c`'s slots whose flits
    /// have left by now count as pending.
    pub(crate) fn tokens_due(&mut self, c: u32) {
        self.tok[c as usize].due_at = Time::MAX;
        self.tokens_settle(c);
    }

    /// A flit arrived on token channel `c` whose buffer exceeds `max_outstanding`: the
    /// outstanding count fell, which may let a waiting token go.
    #[inline]
    pub(crate) fn tokens_arrived(&mut self, c: u32) {
        let t = &mut self.tok[c as usize];
        if t.bound && t.pend >= t.grant && !t.queued {
            t.queued = true;
            self.fct_due.push(c);
        }
    }

    /// Sends the tokens that became due at this instant, after every component has acted.
    pub(crate) fn flush_tokens(&mut self) {
        let mut due = std::mem::take(&mut self.fct_due);
        for &c in &due {
            self.send_tokens(c);
        }
        due.clear();
        self.fct_due = due;
    }

    fn send_tokens(&mut self, c: u32) {
        let o = self.chans[c as usize].vc_base;
        self.tok[c as usize].queued = false;
        loop {
            let t = self.tok[c as usize];
            if t.pend < t.grant {
                self.tokens_ask(c);
                return;
            }
            // Granted and not yet received, as the receiver counts it (flits that leave
            // after now are in its buffer until then).
            let outstanding = self.caps[o as usize] - self.vcs[o as usize].len - t.ahead - t.pend;
            if outstanding + t.grant > t.max_out {
                return;
            }
            let now = self.now;
            let latency = self.tm(t.rev).latency;
            let r = &mut self.chans[t.rev as usize];
            let start = r.tx_busy.max(now);
            r.tx_busy = start + t.token_time;
            // Its time inside the window, as flits count theirs.
            self.count_busy(t.rev, start, start + t.token_time);
            let lands = start + t.token_time + latency;
            let v = &mut self.vcs[o as usize];
            let first = v.head.wrapping_sub(t.ahead + t.pend);
            for j in 0..t.grant {
                let slot = (v.buf + (first.wrapping_add(j) & v.mask)) as usize;
                self.ring[slot].time = lands;
            }
            self.tok[c as usize].pend -= t.grant;
            let v = &mut self.vcs[o as usize];
            if v.flags & F_CWAIT != 0 {
                v.flags &= !F_CWAIT;
                self.q.push_at(self.now, lands, ev(K_CREDIT, o, 0));
            }
        }
    }
}

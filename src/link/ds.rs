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
//! [`PENDING`] until its token is sent, then the token's arrival time; the sender collects
//! slots in order as their times pass, as for plain credits.
//!
//! Order independence: a token needed at instant `t` is placed only after every component has
//! acted at `t` ([`Sim::flush_tokens`]): a flit that starts at `t` on the reverse channel keeps
//! it, and the token follows that flit. A token needed earlier and still waiting has taken
//! the channel before any later flit (the transmitter's `tx_busy` moves past it), which is the
//! token's priority over the next data character.

use crate::engine::*;
use crate::fabric::Fabric;
use crate::fabric::FlowControl;
use crate::time::Time;

/// Credit time of a slot whose flit has left but whose token is not yet sent.
pub(crate) const PENDING: Time = Time::MAX;

/// Token state of one channel (token channels have one VC).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TokChan {
    /// Freed slots not yet covered by a token.
    pub pend: u32,
    pub grant: u32,
    pub max_out: u32,
    /// The reverse channel the tokens travel on.
    pub rev: u32,
    pub token_time: Time,
    /// The buffer is larger than `max_outstanding`: arrivals may allow a token.
    pub bound: bool,
    /// Queued for this instant's token flush.
    pub queued: bool,
    pub on: bool,
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
            grant,
            max_out: max_outstanding,
            rev: rev.0,
            token_time,
            bound: ch.params.buffer > max_outstanding,
            queued: false,
            on: true,
        };
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

    /// `k` flits just left the buffer of token channel `c`'s VC `i`: their slots wait for a
    /// token.
    #[inline]
    pub(crate) fn tokens_left(&mut self, c: u32, i: u32, k: u32) {
        let v = &self.vcs[i as usize];
        let first = v.head.wrapping_sub(k);
        for j in 0..k {
            let slot = (v.buf + (first.wrapping_add(j) & v.mask)) as usize;
            self.ring[slot].time = PENDING;
        }
        let t = &mut self.tok[c as usize];
        t.pend += k;
        if t.pend >= t.grant && !t.queued {
            t.queued = true;
            self.fct_due.push(c);
        }
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
                return;
            }
            // Granted and not yet received, as the receiver counts it.
            let outstanding = self.caps[o as usize] - self.vcs[o as usize].len - t.pend;
            if outstanding + t.grant > t.max_out {
                return;
            }
            let now = self.now;
            let (ms, me) = (self.ms, self.me);
            let latency = self.tm(t.rev).latency;
            let r = &mut self.chans[t.rev as usize];
            let start = r.tx_busy.max(now);
            r.tx_busy = start + t.token_time;
            // Its time inside the window, as flits count theirs.
            r.busy += window_busy((ms, me), start, 1, t.token_time, t.token_time);
            let lands = start + t.token_time + latency;
            let v = &mut self.vcs[o as usize];
            let first = v.head.wrapping_sub(t.pend);
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

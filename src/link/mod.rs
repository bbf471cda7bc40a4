//! Channel timing and flow-control models.
//!
//! A channel is a unidirectional delay line from one port to another (BookSim2's "a channel
//! carries flits forward and credits back"). Its timing is per kind of unit it carries: most
//! channels send every flit in one flit time, but a DS link sends 10-bit data characters and a
//! 4-bit end-of-packet character on one wire (`../shared/systems/ieee1355.md`), so the tail
//! unit has its own time. Flow control is a model chosen per channel ([`FlowControl`]); the
//! switch only asks "may I send on this VC now?" and reports "I sent" / "a flit left my
//! buffer", so new models are new variants here, not changes to the switch.
//!
//! [`FlowControl::Tokens`] is the IEEE 1355 DS link's: the receiver grants characters in
//! blocks by flow-control tokens sent on the reverse channel ([`ds`]).

pub mod ds;

use crate::time::{Clock, Time};

/// How the receiver of a channel tells the sender it may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowControl {
    /// Credit based: the sender holds one credit per free flit slot of the receiver's buffer
    /// for each virtual channel; a credit returns `delay` after its flit leaves that buffer.
    Credit {
        /// Credit return delay [ps]; must be positive.
        delay: Time,
    },
    /// Flow-control tokens (IEEE 1355 DS links, `../shared/systems/ieee1355.md`): the
    /// receiver grants `grant` more flits with each token (an FCT), which it sends on the
    /// reverse channel with priority over that channel's next flit, occupying it for
    /// `token_time`; the grant lands at the sender when the token arrives. At most
    /// `max_outstanding` flits may be granted and not yet received. The channel needs one VC
    /// and a reverse channel; no trains run on it or on its reverse (tokens interleave).
    Tokens {
        /// Flits granted per token (8 on a DS link).
        grant: u32,
        /// Most flits granted but not yet received (56 on a DS link: 7 tokens).
        max_outstanding: u32,
        /// Time a token occupies the reverse channel [ps] (a 4-bit control character).
        token_time: Time,
    },
    /// No flow control: the receiver's buffer is unbounded (idealised studies).
    None,
}

impl FlowControl {
    /// The credit return delay, if credits flow back on this channel.
    pub fn credit_delay(&self) -> Option<Time> {
        match *self {
            FlowControl::Credit { delay } => Some(delay),
            // Grants return with the tokens; their time depends on the reverse channel.
            FlowControl::Tokens { token_time, .. } => Some(token_time),
            FlowControl::None => None,
        }
    }

    /// The IEEE 1355 DS link's tokens: 8 characters per FCT, at most 56 outstanding, an FCT
    /// taking `token_time` (4 bits) on the reverse channel.
    pub fn ds_link(token_time: Time) -> FlowControl {
        FlowControl::Tokens {
            grant: 8,
            max_outstanding: 56,
            token_time,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            FlowControl::Credit { .. } => "credit",
            FlowControl::Tokens { .. } => "tokens",
            FlowControl::None => "none",
        }
    }
}

/// Timing and buffering of one channel, as built from the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkParams {
    /// Time to send one flit [ps]; positive.
    pub flit_time: Time,
    /// Time to send the last flit of a packet [ps] (an end-of-packet character on a DS link);
    /// equals `flit_time` on most channels.
    pub tail_time: Time,
    /// Propagation delay after the last bit is sent [ps].
    pub latency: Time,
    /// Virtual channels (1..=64).
    pub vcs: u8,
    /// Receiver buffer per virtual channel [flits].
    pub buffer: u32,
    pub flow: FlowControl,
    /// The link removes the first header symbol (one flit) of every packet it carries: the
    /// STC104's per-link header deletion, so the next switch routes on the next byte.
    pub delete_header: bool,
    /// The clock the channel sends on, when its flit time is not a whole number of
    /// picoseconds (a byte-wide link clocked at 300 MHz moves a byte every 3333⅓ ps): each
    /// flit starts on an edge of this clock, the n-th at ⌊n·P⌋, and lasts until the next
    /// edge, so rounding never accumulates; `flit_time` (and `tail_time`, which must equal
    /// it) is then the period rounded, for what needs one number. `None`: a flit starts
    /// when its sender sends it and lasts `flit_time`.
    pub clock: Option<Clock>,
}

/// Per-flit request/acknowledge over a cable (a Mosaic channel without slack buffers): a byte
/// cannot follow until the acknowledgement of the previous one is back, so the time per
/// byte is `fixed + per_ft · cable` whenever that is longer than the channel's own byte time.
/// Applied when a channel is built ([`LinkParams::over_cable`]); the engine then sees an
/// ordinary credit channel with that flit time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    /// Per-byte time without a cable [ps].
    pub fixed: Time,
    /// Round trip of the cable per foot [ps/ft].
    pub per_ft: Time,
}

impl Handshake {
    /// Mosaic C channels: 13 ns plus 3 ns per foot (1.5 ns/ft each way)
    /// (`../shared/systems/atomic.md`, "handshake").
    pub const MOSAIC: Handshake = Handshake {
        fixed: 13_000,
        per_ft: 3_000,
    };

    /// Time per byte over `cable_mft` thousandths of a foot of cable [ps].
    /// (Saturates: a cable too long for the clock is then refused as too slow, not wrapped
    /// round to a short one.)
    pub fn cycle(&self, cable_mft: u64) -> Time {
        let t = self.fixed as u128 + self.per_ft as u128 * cable_mft as u128 / 1000;
        Time::try_from(t).unwrap_or(Time::MAX)
    }
}

impl LinkParams {
    /// This channel over a cable of `cable_mft` thousandths of a foot with handshake `h`:
    /// flit and tail times become the longer of their own and the handshake cycle.
    pub fn over_cable(self, h: Handshake, cable_mft: u64) -> LinkParams {
        let t = h.cycle(cable_mft);
        LinkParams {
            flit_time: self.flit_time.max(t),
            tail_time: self.tail_time.max(t),
            ..self
        }
    }

    /// Time to send a flit [ps], the tail flit of a packet taking the tail time.
    #[inline]
    pub fn unit_time(&self, tail: bool) -> Time {
        if tail { self.tail_time } else { self.flit_time }
    }
}

/// `"2ft"`, `"0.5 ft"` → thousandths of a foot.
pub fn parse_feet(s: &str) -> Option<u64> {
    let v = s.trim().strip_suffix("ft")?.trim();
    let x: f64 = v.parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| (x * 1000.0).round() as u64)
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            flit_time: 1_000,
            tail_time: 1_000,
            latency: 0,
            vcs: 1,
            buffer: 8,
            flow: FlowControl::Credit { delay: 1_000 },
            delete_header: false,
            clock: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_slows_long_cables_only() {
        let p = LinkParams {
            flit_time: 16_000,
            tail_time: 16_000,
            ..LinkParams::default()
        };
        let h = Handshake::MOSAIC;
        assert_eq!(p.over_cable(h, 1000).flit_time, 16_000);
        assert_eq!(p.over_cable(h, 15_000).flit_time, 58_000);
        assert_eq!(parse_feet("2.3ft"), Some(2300));
        assert_eq!(parse_feet("2 ft"), Some(2000));
        assert_eq!(parse_feet("2m"), None);
        // Past the clock's range the cycle saturates (it wrapped to a short one once).
        assert_eq!(Handshake::MOSAIC.cycle(parse_feet("1e18ft").unwrap()), Time::MAX);
    }
}

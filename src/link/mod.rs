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

use crate::time::Time;

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
}

impl LinkParams {
    /// Time to send a flit [ps], the tail flit of a packet taking the tail time.
    #[inline]
    pub fn unit_time(&self, tail: bool) -> Time {
        if tail { self.tail_time } else { self.flit_time }
    }
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
        }
    }
}

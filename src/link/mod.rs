//! Channel timing and flow-control models.
//!
//! A channel is a unidirectional delay line from one port to another (BookSim2's "a channel
//! carries flits forward and credits back"). Its timing is per kind of unit it carries: most
//! channels send every flit in one flit time, but a DS link sends 10-bit data characters and a
//! 4-bit end-of-packet character on one wire (`../shared/systems/ieee1355.md`), so the tail
//! unit has its own time. Flow control is a model chosen per channel
//! ([`crate::fabric::FlowControl`], with the channel's other parameters); the
//! switch only asks "may I send on this VC now?" and reports "I sent" / "a flit left my
//! buffer", so new models are new variants here, not changes to the switch.
//!
//! [`crate::fabric::FlowControl::Tokens`] is the IEEE 1355 DS link's: the receiver grants characters in
//! blocks by flow-control tokens sent on the reverse channel ([`ds`]).

pub mod ds;

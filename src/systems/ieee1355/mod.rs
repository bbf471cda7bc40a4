//! IEEE 1355 DS links, the STC104 switch and CERN's Macramé testbed
//! (`../shared/systems/ieee1355.md`): the model's parameters and published figures
//! ([`params`]), the networks ([`net`]), the traffic nodes ([`traffic`]) and their systematic
//! pairings ([`pairs`]), the ATLAS fan-in generator ([`atlas`]), and the experiments
//! `reef reproduce ieee1355` runs ([`experiments`]), their notes and plots ([`report`]).
//!
//! The DS link's flow control is the engine's [`crate::fabric::FlowControl::Tokens`], the
//! STC104's interval tables are [`crate::routing::interval`], the grid and torus are
//! [`crate::fabric::grid`].

pub mod about;
pub mod atlas;
pub mod cross;
pub mod experiments;
pub mod knee;
pub mod net;
pub mod pairs;
pub mod params;
pub mod report;
pub mod traffic;

pub use experiments::reproduce;

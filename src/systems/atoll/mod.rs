//! ATOLL (`../shared/systems/atoll.md`): a system-area network on one chip per node — four
//! host ports, an 8×8 crossbar and four link ports — wired as a 2-D torus and routed by
//! routing strings. The chip is [`crate::fabric::atoll`], its parameters are [`params`].

pub mod about;
pub mod calibrate;
pub mod experiments;
pub mod net;
pub mod params;

pub use experiments::reproduce;

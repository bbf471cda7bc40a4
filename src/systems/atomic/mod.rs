//! ATOMIC (`../shared/systems/atomic.md`): Mosaic source routing, store-and-forward between
//! routes, and the Address Consultant. Parameters and published figures in [`params`], the
//! networks and simulation set-up in [`net`], the experiments in [`experiments`].

pub mod about;
pub mod experiments;
pub mod net;
pub mod params;
pub mod routes;

pub use experiments::reproduce;

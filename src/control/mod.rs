//! The control plane of ATOMIC (`../shared/systems/atomic.md`): the Address Consultant (AC)
//! that maps a network it is not told by sending packets through it, keeps the map current
//! and hands out source routes, and the small programs the Mosaic nodes and the host
//! interfaces run for it. [`graph`] is the network as a map, [`routes`] computes ATOMIC
//! routes on it, [`ac`] runs everything as an agent inside the simulation.

pub mod ac;
pub mod graph;
pub mod route_set;
pub mod routes;

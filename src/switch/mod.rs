//! The crossbar switch: per-input-VC FIFOs, a routing stage with a delay for the head,
//! output-VC allocation with per-output round-robin arbitration (the lowest free VC, or the
//! VCs in turn per input VC as BookSim2's VC allocators give them:
//! [`crate::fabric::VcChoice`]), and switch allocation per output channel, in wormhole,
//! virtual cut-through or store-and-forward mode.
//!
//! The allocation logic that runs on the engine's arrays is in [`alloc`] (which output VCs
//! are free in `out_vc`, the separable allocators in [`separable`], two allocations a
//! cycle into output queues in `speedup`); the parameters it
//! reads are the fabric's ([`crate::fabric::SwitchParams`]), from the config.

pub mod alloc;
mod out_vc;
mod receive;
mod route;
mod send;
pub mod separable;
mod speedup;
pub(crate) mod vc_alloc;

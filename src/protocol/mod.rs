//! Bit-exact codecs for the wire formats reef carries: ATM cells and AAL3/4 / AAL5 (Penn ATM
//! host interface, `../shared/systems/atm.md`) and IEEE 1355 DS-link characters.

pub mod atm;
pub mod ds;

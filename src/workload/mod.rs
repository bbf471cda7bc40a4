//! Traffic: who sends to whom ([`pattern`]), when and how much ([`source`]), drawn from
//! seeded per-component streams ([`rng`]).

pub mod pattern;
pub mod rng;
pub mod source;

pub use pattern::{Pattern, PatternSpec};
pub use source::{Arrivals, Process, Sizes};

/// Everything the engine needs to generate traffic.
#[derive(Clone, Debug)]
pub struct Workload {
    pub pattern: Pattern,
    pub process: Process,
    pub sizes: Sizes,
    /// Offered load [flits/cycle/host], as configured (for reports).
    pub load: f64,
}

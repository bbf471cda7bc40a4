//! Traffic: who sends to whom ([`pattern`]), when and how much ([`source`]), drawn from
//! seeded per-component streams ([`crate::rng`]).

pub mod message;
pub mod pattern;
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

impl Workload {
    /// No synthetic traffic from any of `hosts` hosts: an agent sends, or nothing does.
    pub fn silent(hosts: usize) -> Workload {
        Workload {
            pattern: Pattern::Map(vec![pattern::SILENT; hosts]),
            process: Process::Bernoulli {
                p: 0.0,
                cycle: crate::time::Clock::from_period(crate::time::Ratio::int(1000)),
            },
            sizes: Sizes::Fixed(1),
            load: 0.0,
        }
    }
}

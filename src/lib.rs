//! reef: an exact, fast, discrete-event simulator of switched high-speed LANs and
//! system-area networks — links, switches, host interfaces, the protocols on them and their
//! control plane. See `README.md` for use and `../shared/DESIGN.md` for the architecture.

// Doc comments give units in brackets, "Time [ps]", as the house style asks; they are not links.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod bench;
pub mod config;
pub mod control;
pub mod engine;
pub mod fabric;
pub mod interrupt;
pub mod link;
#[cfg(target_os = "linux")]
pub mod live;
pub mod memory;
pub mod nic;
pub mod output;
pub mod plan;
pub mod protocol;
pub mod report;
pub mod rng;
pub mod routing;
pub mod runner;
pub mod stats;
pub mod switch;
pub mod systems;
pub mod time;
pub mod workload;

//! reef: an exact, fast, discrete-event simulator of switched high-speed LANs and
//! system-area networks (links, switches, host interfaces, protocols, control plane).

pub mod protocol;

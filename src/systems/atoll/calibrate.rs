//! The two host costs the spec lets the reproduction calibrate (`../shared/systems/atoll.md`:
//! "calibrate them from the figures above"), each from one published figure, with every
//! other parameter from the hardware or assumed:
//!
//! - the software overhead per message (sender and receiver together) from the best 1-hop
//!   start-up latency, 3.34 µs: a 1-byte ping-pong without it is simulated, and the
//!   overhead is what is left;
//! - the DMA engine's time per byte from the peak bandwidth, 269 MB/s: 512 KB messages are
//!   streamed over one hop, and the time per byte is solved for from the simulated time per
//!   message (a fixed part, found by the run, plus the bytes at the DMA rate), twice.
//!
//! Noise is off: the best latency is a round trip no interrupt touched.

use super::net::Net;
use super::params as P;
use crate::nic::hostif::HostIf;
use crate::time::{SEC, Time, US};
use crate::workload::message::{Kind, MessageSpec, run_size};

/// The calibrated host costs and what they were calibrated to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Software overhead per message, sender's and receiver's together [ps].
    pub overhead: Time,
    /// The DMA engine's time per byte [ps/byte].
    pub dma_per_byte: Time,
    /// The 1-byte, 1-hop half round trip without software overhead [ps].
    pub bare_latency: Time,
    /// The message size the peak was calibrated at [bytes].
    pub peak_size: u64,
}

impl Calibration {
    /// The host interface with these costs (and `noise`, if any).
    pub fn host(&self, noise: bool) -> HostIf {
        P::host(self.overhead, self.dma_per_byte, noise.then(P::noise))
    }

    /// The DMA engine's rate [MB/s].
    pub fn dma_mbps(&self) -> f64 {
        1e6 / self.dma_per_byte as f64
    }
}

fn run(net: &Net, pair: (u32, u32), kind: Kind, host: HostIf, size: u64, count: u32) -> Result<f64, String> {
    let m = MessageSpec {
        kind,
        pair,
        sizes: vec![size],
        count,
        host,
    };
    let r = run_size(&net.message_spec(1), &m, size, count).map_err(|e| e.to_string())?;
    Ok(match kind {
        Kind::PingPong => r.latency_min_ps as f64,
        Kind::Streaming => r.bandwidth_bytes_per_s,
    })
}

/// Calibrates on `net` between the hosts of `pair`, one hop apart.
pub fn calibrate(net: &Net, pair: (u32, u32)) -> Result<Calibration, String> {
    // A first guess at the DMA rate: it does not touch a 1-byte message (PIO).
    let guess = (SEC as f64 / (P::PEAK_MBPS * 1e6)).round() as Time;
    let bare = run(net, pair, Kind::PingPong, P::host(0, guess, None), 1, 3)? as Time;
    let target = (P::STARTUP_BEST_US * US as f64).round() as Time;
    if bare >= target {
        return Err(format!(
            "the model's 1-byte, 1-hop latency without software overhead is already {:.3} us, \
             above the published best of {} us: nothing is left to calibrate",
            bare as f64 / 1e6,
            P::STARTUP_BEST_US
        ));
    }
    let overhead = target - bare;
    // The time per message at the peak is a part the run finds and the bytes at the DMA rate.
    let size = 512 * 1024;
    let per_message = SEC as f64 * size as f64 / (P::PEAK_MBPS * 1e6);
    let mut d = guess;
    for _ in 0..2 {
        let bw = run(net, pair, Kind::Streaming, P::host(overhead, d, None), size, 4)?;
        let fixed = SEC as f64 * size as f64 / bw - size as f64 * d as f64;
        d = ((per_message - fixed) / size as f64).round().max(1.0) as Time;
    }
    Ok(Calibration {
        overhead,
        dma_per_byte: d,
        bare_latency: bare,
        peak_size: size,
    })
}

//! The experiments of `reef reproduce atoll` (`../shared/systems/atoll.md`, "Experiments
//! to reproduce"), as runs of the ATOLL model, and their records and plots.
//!
//! The micro-benchmarks run on an 8×8 torus between host 0 and a neighbour (1 hop) or a
//! host whose routing strings both ways are 7 hops long (6 intermediate chips that switch
//! in hardware, their hosts idle): at zero load only the hop count matters. Each message
//! size is a simulation of its own; the paper ran 1,000 messages a size, which the
//! reproduction does up to a budget of bytes (the model's streaming rate settles within a
//! few messages of any size; the ping-pong's spread comes only from the noise model).
//!
//! The parts: `messages` the streaming and ping-pong benchmarks, `torus` the scaling of tori,
//! `sensitivity` the parameters the paper does not publish; this file holds the benchmark
//! pairs and runs they share, the order of the reproduction and its notes.

mod messages;
mod sensitivity;
mod torus;

use messages::message_runs;
use sensitivity::sensitivity;
use torus::torus_scaling;

use super::calibrate::{Calibration, calibrate};
use super::net::Net;
use super::params as P;
use crate::fabric::atoll::Wiring;
use crate::nic::hostif::HostIf;
use crate::report::messages::size_text;
use crate::report::plot::{Plot, svg};
use crate::systems::{Artifact, Options, Record, Report};
use crate::time::US;
use crate::workload::message::{Kind, MessageSpec, SizeResult, run_size};
use serde_json::json;

/// Bytes a streaming run moves per size at most (full, quick), and a ping-pong's bytes
/// each way; the fewest messages and round trips a size.
const STREAM_BUDGET: [u64; 2] = [2 << 20, 256 << 10];
const PING_BUDGET: [u64; 2] = [1 << 20, 128 << 10];
const MIN_MESSAGES: u32 = 4;
const MIN_ROUND_TRIPS: u32 = 3;
/// Messages a size at most (the paper's 1,000; fewer with --quick).
const MAX_MESSAGES: [u32; 2] = [1000, 50];
/// Samples of the latency-variation run (the paper's 10,000).
const VARIATION_SAMPLES: [u32; 2] = [10_000, 1_000];

/// The benchmark pairs: (host 0, a neighbour), (host 0, a host 7 hops away both ways).
pub struct Bench {
    pub net: Net,
    pub one: (u32, u32),
    pub seven: (u32, u32),
}

impl Bench {
    /// The 8×8 torus and its benchmark pairs.
    pub fn new() -> Result<Bench, String> {
        let net = Net::new("atoll-torus-8x8", &Wiring::Torus { k: [8, 8] }, P::FIFO_BYTES)?;
        let one = (0, 1);
        let seven = pair_at(&net, 7).ok_or("no host of the 8x8 torus has 7-hop routes to and from host 0")?;
        if (net.hops(one.0, one.1), net.hops(one.1, one.0)) != (1, 1) {
            return Err("hosts 0 and 1 of the 8x8 torus are not one hop apart both ways".into());
        }
        Ok(Bench { net, one, seven })
    }

    fn pair(&self, hops: u32) -> (u32, u32) {
        if hops == 1 { self.one } else { self.seven }
    }
}

/// Host 0 and the first host whose routes to and from it are both `hops` links long.
pub fn pair_at(net: &Net, hops: usize) -> Option<(u32, u32)> {
    (1..net.fabric.num_hosts() as u32)
        .find(|&b| net.hops(0, b) == hops && net.hops(b, 0) == hops)
        .map(|b| (0, b))
}

/// The sizes of the sweeps: every power of two from 1 B to 512 KB (with --quick, a few).
pub fn sizes(quick: bool) -> Vec<u64> {
    if quick {
        vec![1, 8, 64, 512, 4096, 32768, 524_288]
    } else {
        (0..=19).map(|i| 1u64 << i).collect()
    }
}

/// Messages of `size` bytes a run sends.
fn count(kind: Kind, size: u64, quick: bool) -> u32 {
    let q = usize::from(quick);
    let (budget, min) = match kind {
        Kind::Streaming => (STREAM_BUDGET[q], MIN_MESSAGES),
        Kind::PingPong => (PING_BUDGET[q], MIN_ROUND_TRIPS),
    };
    (budget / size).clamp(min as u64, MAX_MESSAGES[q] as u64) as u32
}

/// One message benchmark run.
#[derive(Clone, Debug)]
struct Job {
    kind: Kind,
    hops: u32,
    size: u64,
    count: u32,
    host: HostIf,
}

fn run_job(b: &Bench, j: &Job, seed: u64) -> Result<SizeResult, String> {
    let m = MessageSpec {
        kind: j.kind,
        pair: b.pair(j.hops),
        sizes: vec![j.size],
        count: j.count,
        host: j.host,
    };
    run_size(&b.net.message_spec(seed), &m, j.size, j.count)
        .map_err(|e| format!("{} {} B: {e}", j.kind.name(), j.size))
}

/// The steps of the reproduction and their rough shares of its running time.
const STEPS: &[(&str, f64)] = &[
    ("building the 8x8 torus and its routing strings", 1.0),
    ("calibration", 1.0),
    ("streaming, ping-pong, hop-cost, latency-variation", 1.0),
    ("torus-scaling", 1.0),
    ("sensitivity", 1.0),
];

/// Runs every experiment.
pub fn reproduce(opts: &Options) -> Result<Report, String> {
    let mut rep = Report::new("atoll");
    let mut steps = crate::systems::Steps::new("atoll", STEPS, opts);
    if !steps.next(&mut rep, "building the 8x8 torus and its routing strings") {
        return Ok(rep);
    }
    let b = Bench::new()?;
    if !steps.next(&mut rep, "calibration") {
        return Ok(rep);
    }
    let cal = calibrate(&b.net, b.one)?;
    rep.push(
        Record::new(
            "calibration",
            &[],
            "software_overhead_us",
            "us",
            us(cal.overhead as f64),
        )
        .source("calibrated: sender and receiver together, from the best 1-hop start-up latency"),
    );
    rep.push(
        Record::new("calibration", &[], "dma_rate_MBps", "MB/s", cal.dma_mbps())
            .source("calibrated: the DMA engine's rate, from the peak bandwidth"),
    );
    if steps.next(&mut rep, "streaming, ping-pong, hop-cost, latency-variation") {
        message_runs(&mut rep, &b, &cal, opts)?;
    }
    if !rep.interrupted && steps.next(&mut rep, "torus-scaling") {
        torus_scaling(&mut rep, &cal, opts)?;
    }
    if !rep.interrupted && steps.next(&mut rep, "sensitivity") {
        sensitivity(&mut rep, &b, &cal, opts)?;
    }
    notes(&mut rep, &b, &cal);
    Ok(rep)
}

fn case(hops: u32, size: u64) -> [(&'static str, serde_json::Value); 2] {
    [("hops", json!(hops)), ("size_bytes", json!(size))]
}

fn mbps(r: &SizeResult) -> f64 {
    r.bandwidth_bytes_per_s / 1e6
}

fn us(ps: f64) -> f64 {
    ps / US as f64
}

fn plot_artifact(file: &str, p: &Plot) -> Artifact {
    Artifact {
        file: file.to_string(),
        text: svg(p).unwrap_or_else(|e| format!("<!-- plot failed: {e} -->")),
    }
}

/// The notes under the tables: how each figure was got, the calibration, the assumptions
/// and what bounds each curve where.
fn notes(rep: &mut Report, b: &Bench, cal: &Calibration) {
    let h = cal.host(true);
    let n = &mut rep.notes;
    n.push(format!(
        "calibrated (as the spec allows): software overhead per message {:.3} us (sender {:.3}, receiver \
         {:.3}; the split is ASSUMED even), from the best 1-hop start-up latency {} us (the same ping-pong \
         without it: {:.3} us); DMA engine {:.3} ns/byte ({:.1} MB/s) from the peak {} MB/s, streamed at {}.",
        us(cal.overhead as f64),
        us(h.send_overhead as f64),
        us(h.recv_overhead as f64),
        P::STARTUP_BEST_US,
        us(cal.bare_latency as f64),
        cal.dma_per_byte as f64 / 1e3,
        cal.dma_mbps(),
        P::PEAK_MBPS,
        size_text(cal.peak_size)
    ));
    n.push(format!(
        "from the hardware: links a byte per core cycle at 300 MHz ({:.4} ns, edges at floor(n*10000/3) ps), \
         27 cycles a hop link input to link output ({:.1} ns: the byte's cycle on the link and 26 in the \
         chip), wormhole switching, routing strings in the packet, a byte used up per chip.",
        P::byte_ns(),
        P::cycles(P::HOP_CYCLES) as f64 / 1e3
    ));
    n.push(format!(
        "ASSUMED (not published; see the sensitivity table): input FIFOs of {} bytes, credits back {} cycles \
         after their byte leaves (a flow-control signal crossing a hop); packets of at most {} bytes of payload \
         and {} of framing; PIO up to {} bytes at {:.3} ns/byte (64-byte PCI-X bursts with 4 extra phases), \
         DMA above, {:.1} us to its first byte; receive writes at {:.3} ns/byte; each host port as fast as a \
         link port into the crossbar.",
        P::FIFO_BYTES,
        P::CREDIT_CYCLES,
        P::MTU,
        P::FRAMING,
        P::PIO_MAX,
        h.pio_per_byte as f64 / 1e3,
        us(P::DMA_LATENCY as f64),
        h.rx_per_byte as f64 / 1e3
    ));
    n.push(format!(
        "noise (ping-pong, latency-variation; explicit and seeded, {}): min is a round trip no interrupt \
         touched, avg and max carry the interrupts that fell in the samples. Streaming, calibration and \
         torus scaling run without noise.",
        P::NOISE_SRC
    ));
    n.push(format!(
        "pairs: an 8x8 torus, host 0 to host {} (1 hop) and to host {} (7 hops both ways, 6 chips between \
         switching in hardware); the paper's 1,000 messages a size, up to {} a streaming size and {} of \
         ping-pong each way (at least {} messages, {} round trips).",
        b.one.1,
        b.seven.1,
        size_text(STREAM_BUDGET[0]),
        size_text(PING_BUDGET[0]),
        MIN_MESSAGES,
        MIN_ROUND_TRIPS
    ));
    n.push(bounds(&h));
    n.push(
        "torus-scaling: saturation falls far faster than the torus's bisection and than its routes' \
         flow bound (flow_bound_per_node_MBps: the load at which the busiest channel would be always \
         busy): at saturation the network is mostly idle (32x32: mean channel use about 2 %, the \
         busiest about 30 %). Without virtual channels a blocked 1 KB worm holds every channel from its \
         head back to its tail (16 or more, with 64-byte FIFOs), and flows that merge at many chips get \
         ever smaller shares of each chip's round-robin arbitration, so most worms wait on others; \
         every packet also pays 26 cycles of routing at each chip. The sensitivity table shows deeper \
         FIFOs and longer packets help, shorter ones do not. Nothing published to compare."
            .to_string(),
    );
    n.push(
        "hop-cost at 1 KB: a message larger than a PIO is fetched by the DMA engine more slowly than \
         the link sends (3.71 against 3.33 ns a byte), so the worm runs at the DMA's pace and its tail, \
         which pays no routing delay, catches up on the head's 26 cycles a chip: 7 hops cost less \
         over 1 than the head's 6 x 90 ns."
            .to_string(),
    );
}

/// Which resource bounds the streaming rate at each size, from the model's stage times
/// per message (the slowest stage sets the pace of back-to-back messages).
pub fn bounds(h: &HostIf) -> String {
    let link = P::core().period().to_f64();
    let stage = |s: u64| -> (&'static str, f64) {
        let packets = s.div_ceil(h.mtu as u64).max(1);
        let pio = s <= h.pio_max as u64;
        let cpu = h.send_overhead as f64 + if pio { (s * h.pio_per_byte) as f64 } else { 0.0 };
        let dma = if pio {
            0.0
        } else {
            (h.dma_latency + s * h.dma_per_byte) as f64
        };
        let wire = (s + packets * (h.framing as u64 + 2)) as f64 * link;
        let rx = (s * h.rx_per_byte) as f64;
        let recv = h.recv_overhead as f64;
        [
            ("the sender's CPU (overhead and PIO)", cpu),
            ("the DMA engine", dma),
            ("the link", wire),
            ("the receive writes", rx),
            ("the receiver's CPU", recv),
        ]
        .into_iter()
        .fold(("", 0.0), |a, x| if x.1 > a.1 { x } else { a })
    };
    let mut parts: Vec<(u64, u64, &str)> = Vec::new();
    for s in (0..=19).map(|i| 1u64 << i) {
        let (name, _) = stage(s);
        match parts.last_mut() {
            Some(p) if p.2 == name => p.1 = s,
            _ => parts.push((s, s, name)),
        }
    }
    let text: Vec<String> = parts
        .iter()
        .map(|(a, b, name)| format!("{}–{}: {name}", size_text(*a), size_text(*b)))
        .collect();
    format!(
        "what bounds the streaming rate (the slowest stage of the model per message): {}. The ping-pong \
         latency is the stages' sum: the software overheads below about 1 KB, the slowest per-byte stage \
         (the DMA engine) above.",
        text.join("; ")
    )
}

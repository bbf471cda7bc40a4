//! Message workloads between two hosts of any fabric, as the micro-benchmarks of the
//! interconnect papers run them (NetPIPE-style): **ping-pong**, a master sends a message
//! to a slave, which returns it as soon as its application has it, and half the round trip
//! is the latency; **streaming**, the master sends its messages back to back and the slave
//! only takes them in, and the bandwidth is the bytes over the time from the first send to
//! the last message in the slave's hands. A message goes through the host interface
//! ([`HostIf`]: software overheads, PIO or DMA, packets of at most an MTU with their
//! framing, the receive path, OS noise) and the fabric's packets through the engine. Each
//! message size is a run of its own.

use crate::engine::agent::{Agent, Ctl, DataPace, Delivery, Message};
use crate::engine::{Sim, SimError, Spec};
use crate::nic::hostif::{Cpu, HostIf, packets, receive_time, send_times};
use crate::time::Time;

/// Which benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    PingPong,
    Streaming,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::PingPong => "ping-pong",
            Kind::Streaming => "streaming",
        }
    }
}

/// A message benchmark: between which hosts, of which sizes, how many messages each.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageSpec {
    pub kind: Kind,
    /// Master and slave hosts.
    pub pair: (u32, u32),
    /// Message sizes [bytes], each at least 1.
    pub sizes: Vec<u64>,
    /// Messages per size (ping-pong: round trips).
    pub count: u32,
    pub host: HostIf,
}

/// What one message size gave.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SizeResult {
    pub size_bytes: u64,
    pub messages: u32,
    /// Ping-pong: half round trips [ps], lowest, mean, highest; every sample, in order.
    pub latency_min_ps: Time,
    pub latency_avg_ps: f64,
    pub latency_max_ps: Time,
    #[serde(skip)]
    pub samples: Vec<Time>,
    /// Streaming: bytes delivered over the time from the first send to the last message
    /// in the slave's hands [bytes/s] (ping-pong: size over the mean half round trip).
    pub bandwidth_bytes_per_s: f64,
    /// Simulated time [ps] and the engine's flit-hops.
    pub sim_time_ps: Time,
    pub flit_hops: u64,
}

/// Runs `count` messages of `size` bytes.
pub fn run_size(spec: &Spec, m: &MessageSpec, size: u64, count: u32) -> Result<SizeResult, SimError> {
    let n = spec.fabric.num_hosts() as u32;
    if m.pair.0 >= n || m.pair.1 >= n || m.pair.0 == m.pair.1 {
        return Err(SimError::Invalid(format!(
            "a {} needs two different hosts of the {n} (got {} and {})",
            m.kind.name(),
            m.pair.0,
            m.pair.1
        )));
    }
    let mut sim = Sim::new(spec)?;
    let mut ag = Bench::new(m, spec, size, count.max(1));
    sim.run_with(&mut ag, &mut |_| {})?;
    let flit_hops = sim.flit_hops();
    ag.result(flit_hops, sim.now())
}

/// Runs every size of `m` (one simulation each), reporting each as it finishes.
pub fn run(spec: &Spec, m: &MessageSpec, on: &mut dyn FnMut(usize)) -> Result<Vec<SizeResult>, SimError> {
    let mut out = Vec::with_capacity(m.sizes.len());
    for (i, &s) in m.sizes.iter().enumerate() {
        out.push(run_size(spec, m, s, m.count)?);
        on(i + 1);
    }
    Ok(out)
}

// Timer tokens: what happens, the message, the packet.
const T_PACKET: u64 = 0;
const T_SEEN: u64 = 1;

fn token(kind: u64, msg: u32, pkt: u32) -> u64 {
    (kind << 62) | ((msg as u64) << 31) | pkt as u64
}

struct Bench<'m> {
    m: &'m MessageSpec,
    size: u64,
    count: u32,
    flit_bytes: u64,
    /// Payload of each packet of a message.
    payloads: Vec<u32>,
    /// Per side (0 master, 1 slave): its host, CPU, when its DMA engine and its receive
    /// path are next free.
    host: [u32; 2],
    cpu: [Cpu; 2],
    dma_free: [Time; 2],
    rx_free: [Time; 2],
    /// Per message: the side that sends it, and its packets still to arrive.
    msgs: Vec<(u8, u32)>,
    /// Per packet of the message being handed over: when its data starts to come, and the
    /// time per byte (the NIC's pace), for each message in flight.
    paces: Vec<Vec<(Time, Time)>>,
    times: Vec<(Time, Time)>,
    /// Ping-pong: when the round trip under way began; the half round trips.
    began: Time,
    samples: Vec<Time>,
    /// Streaming: messages the slave has, and when the last of them came.
    seen: u32,
    last_seen: Time,
    error: Option<String>,
}

impl<'m> Bench<'m> {
    fn new(m: &'m MessageSpec, spec: &Spec, size: u64, count: u32) -> Bench<'m> {
        let seed = spec.params.seed;
        Bench {
            m,
            size,
            count,
            flit_bytes: spec.params.flit_bytes.max(1) as u64,
            payloads: packets(&m.host, size).collect(),
            host: [m.pair.0, m.pair.1],
            cpu: [
                Cpu::new(m.host.noise, seed, m.pair.0),
                Cpu::new(m.host.noise, seed, m.pair.1),
            ],
            dma_free: [0; 2],
            rx_free: [0; 2],
            msgs: Vec::new(),
            paces: Vec::new(),
            times: Vec::new(),
            began: 0,
            samples: Vec::new(),
            seen: 0,
            last_seen: 0,
            error: None,
        }
    }

    /// Side `side`'s application hands a message over at `t`: its packets are handed to the
    /// NIC as their bytes get there.
    fn send(&mut self, ctl: &mut Ctl, side: u8, t: Time) {
        let id = self.msgs.len() as u32;
        self.msgs.push((side, self.payloads.len() as u32));
        let s = side as usize;
        let mut times = std::mem::take(&mut self.times);
        send_times(
            &self.m.host,
            self.size,
            t,
            &mut self.cpu[s],
            &mut self.dma_free[s],
            &mut times,
        );
        for (i, &(at, _)) in times.iter().enumerate() {
            ctl.timer(self.host[s], at, token(T_PACKET, id, i as u32));
        }
        self.paces.push(times.clone());
        self.times = times;
    }

    fn result(self, flit_hops: u64, end: Time) -> Result<SizeResult, SimError> {
        if let Some(e) = self.error {
            return Err(SimError::Invalid(e));
        }
        let bytes = self.size as f64;
        let (lo, hi, avg, bw) = match self.m.kind {
            Kind::PingPong => {
                if self.samples.len() < self.count as usize {
                    return Err(SimError::Invalid(format!(
                        "ping-pong of {} bytes: {} of {} round trips finished",
                        self.size,
                        self.samples.len(),
                        self.count
                    )));
                }
                let avg = self.samples.iter().map(|&x| x as f64).sum::<f64>() / self.samples.len() as f64;
                let lo = self.samples.iter().copied().min().unwrap_or(0);
                let hi = self.samples.iter().copied().max().unwrap_or(0);
                (lo, hi, avg, bytes / (avg * 1e-12))
            }
            Kind::Streaming => {
                if self.seen < self.count {
                    return Err(SimError::Invalid(format!(
                        "streaming of {} bytes: {} of {} messages arrived",
                        self.size, self.seen, self.count
                    )));
                }
                let bw = bytes * self.count as f64 / (self.last_seen.max(1) as f64 * 1e-12);
                (0, 0, 0.0, bw)
            }
        };
        Ok(SizeResult {
            size_bytes: self.size,
            messages: self.count,
            latency_min_ps: lo,
            latency_avg_ps: avg,
            latency_max_ps: hi,
            samples: self.samples,
            bandwidth_bytes_per_s: bw,
            sim_time_ps: end,
            flit_hops,
        })
    }
}

impl Agent for Bench<'_> {
    fn start(&mut self, ctl: &mut Ctl) {
        match self.m.kind {
            Kind::PingPong => self.send(ctl, 0, 0),
            Kind::Streaming => {
                // Back to back: each as soon as the CPU is through with the one before.
                for _ in 0..self.count {
                    let t = self.cpu[0].free;
                    self.send(ctl, 0, t);
                }
            }
        }
    }

    fn timer(&mut self, ctl: &mut Ctl, _: u32, token: u64) {
        let (kind, id, pkt) = (
            token >> 62,
            ((token >> 31) & 0x7FFF_FFFF) as u32,
            (token & 0x7FFF_FFFF) as u32,
        );
        let side = self.msgs[id as usize].0 as usize;
        match kind {
            T_PACKET => {
                let payload = self.payloads[pkt as usize] as u64;
                let framing = self.m.host.framing as u64;
                let flits = (payload + framing).div_ceil(self.flit_bytes).max(1);
                let (start, per_byte) = self.paces[id as usize][pkt as usize];
                let sent = ctl.send_paced(
                    Message {
                        src: self.host[side],
                        dst: self.host[1 - side],
                        flits: u32::try_from(flits).unwrap_or(u32::MAX),
                        header: Vec::new(),
                        tag: ((id as u64) << 32) | pkt as u64,
                    },
                    DataPace {
                        start,
                        per_flit: per_byte * self.flit_bytes,
                        from: (framing / self.flit_bytes) as u32,
                    },
                );
                if let Err(e) = sent {
                    self.error = Some(e);
                    ctl.stop();
                }
            }
            _ => {
                // The receiving side's application has message `id`.
                let now = ctl.now();
                match self.m.kind {
                    Kind::PingPong if side == 0 => self.send(ctl, 1, now),
                    Kind::PingPong => {
                        self.samples.push((now - self.began) / 2);
                        if self.samples.len() < self.count as usize {
                            self.began = now;
                            self.send(ctl, 0, now);
                        } else {
                            ctl.stop();
                        }
                    }
                    Kind::Streaming => {
                        self.seen += 1;
                        self.last_seen = now;
                        if self.seen == self.count {
                            ctl.stop();
                        }
                    }
                }
            }
        }
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        let (id, pkt) = ((d.tag >> 32) as u32, (d.tag & 0xFFFF_FFFF) as u32);
        let side = self.msgs[id as usize].0 as usize;
        let r = 1 - side;
        // The receiving NIC writes the payload into memory as it comes.
        let payload = self.payloads[pkt as usize];
        let written = receive_time(
            &self.m.host,
            payload,
            d.head_delivered,
            d.delivered,
            &mut self.rx_free[r],
        );
        let left = &mut self.msgs[id as usize].1;
        *left -= 1;
        if *left == 0 {
            self.paces[id as usize] = Vec::new();
            // The application notices it (after any interrupt) and takes it.
            let at = self.cpu[r].resume(written);
            let seen = self.cpu[r].run(at, self.m.host.recv_overhead);
            ctl.timer(self.host[r], seen, token(T_SEEN, id, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        let t = token(T_SEEN, 123_456, 789);
        assert_eq!(
            (t >> 62, (t >> 31) & 0x7FFF_FFFF, t & 0x7FFF_FFFF),
            (1, 123_456, 789)
        );
    }
}

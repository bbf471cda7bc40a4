//! A host interface for messages: how a message gets from an application's memory into the
//! network and out again on a user-level NIC (ATOLL's host ports, `../shared/systems/
//! atoll.md`; any NIC of its kind). The sending CPU spends a software overhead per message;
//! a small message it then writes into the NIC itself (PIO, at the rate of its stores over
//! the I/O bus), a large one the NIC's DMA engine fetches (a start-up latency per message,
//! then a rate; one message at a time). The NIC cuts the message into packets of at most
//! `mtu` payload bytes, each with `framing` bytes of its own (and the route, where the
//! routing puts it in the packet), and sends a packet as its data comes in (cut-through:
//! the header at once, each byte once it is there, no faster than the link). At the
//! receiver the NIC writes the payload into host memory as it arrives (a rate; a packet
//! after the one before it), and the application sees the message a receive overhead
//! after its last byte is written (polling and software).
//!
//! The CPU may be interrupted ([`Noise`]): an explicit, seeded model of operating-system
//! noise (a periodic timer tick and, optionally, Poisson-arriving other interrupts, each
//! taking a time drawn uniformly from a range), during which CPU work stands still and a
//! message that arrives is noticed only when the interrupt is over. Off by default. The
//! NIC's DMA is not affected.
//!
//! The parameters are plain data; `reef reproduce atoll` fills them from the ATOLL spec and
//! its calibration, `[nic]` in a config (docs/config.md) from the user.

use crate::rng::{Purpose, Stream};
use crate::time::Time;

/// The host side of one NIC, the same at every host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostIf {
    /// Most payload bytes per packet (a message is cut into packets of at most this).
    pub mtu: u32,
    /// Bytes a packet carries besides its payload and its route (header, CRC).
    pub framing: u32,
    /// Sender's software time per message, before the data moves [ps].
    pub send_overhead: Time,
    /// Messages of at most this many bytes go by PIO, larger ones by DMA.
    pub pio_max: u32,
    /// PIO: CPU time per byte written into the NIC, framing included [ps/byte].
    pub pio_per_byte: Time,
    /// DMA: from the CPU posting the message to its first byte at the NIC [ps].
    pub dma_latency: Time,
    /// DMA: time per payload byte fetched [ps/byte].
    pub dma_per_byte: Time,
    /// Receive: NIC time per payload byte written into host memory [ps/byte].
    pub rx_per_byte: Time,
    /// Receiver's time from the message's last byte in memory to the application having
    /// it (noticing it by polling, and the software) [ps].
    pub recv_overhead: Time,
    /// Operating-system noise on the CPUs, if modelled.
    pub noise: Option<Noise>,
}

impl Default for HostIf {
    /// An ideal host: no costs, a message in one packet of any size, no framing.
    fn default() -> Self {
        HostIf {
            mtu: u32::MAX,
            framing: 0,
            send_overhead: 0,
            pio_max: 0,
            pio_per_byte: 0,
            dma_latency: 0,
            dma_per_byte: 0,
            rx_per_byte: 0,
            recv_overhead: 0,
            noise: None,
        }
    }
}

/// Interrupts that take the CPU away: a periodic tick (at a random phase per host) and,
/// if `rate_hz` > 0, others arriving as a Poisson process; each takes a time drawn
/// uniformly from its range [ps].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    /// Timer tick period [ps] (0: none).
    pub tick: Time,
    /// Duration of a tick's interrupt: uniform in `tick_min..=tick_max` [ps].
    pub tick_min: Time,
    pub tick_max: Time,
    /// Other interrupts per second (0: none), and their duration range [ps].
    pub rate_hz: f64,
    pub other_min: Time,
    pub other_max: Time,
}

/// A message's packets: how many, and the payload of each.
pub fn packets(h: &HostIf, bytes: u64) -> impl Iterator<Item = u32> + '_ {
    let mtu = h.mtu.max(1) as u64;
    let n = bytes.div_ceil(mtu).max(1);
    (0..n).map(move |i| (bytes - i * mtu).min(mtu) as u32)
}

/// One host's CPU: when it is free, and the interrupts it has yet to take.
#[derive(Clone, Debug)]
pub struct Cpu {
    pub free: Time,
    noise: Option<NoiseState>,
}

#[derive(Clone, Debug)]
struct NoiseState {
    n: Noise,
    rng: Stream,
    /// The next tick and the next other interrupt: (start, duration) [ps].
    next_tick: Option<(Time, Time)>,
    next_other: Option<(Time, Time)>,
    ticks: u64,
    phase: Time,
}

impl NoiseState {
    fn draw(rng: &mut Stream, lo: Time, hi: Time) -> Time {
        lo + rng.below(hi - lo + 1)
    }

    fn tick(&mut self) -> Option<(Time, Time)> {
        (self.n.tick > 0).then(|| {
            let t = self.phase + self.ticks * self.n.tick;
            self.ticks += 1;
            (t, Self::draw(&mut self.rng, self.n.tick_min, self.n.tick_max))
        })
    }

    fn other(&mut self, after: Time) -> Option<(Time, Time)> {
        (self.n.rate_hz > 0.0).then(|| {
            let gap = -self.rng.unit().max(1e-300).ln() / self.n.rate_hz * 1e12;
            let t = after + gap.min(1e18) as Time;
            (t, Self::draw(&mut self.rng, self.n.other_min, self.n.other_max))
        })
    }

    /// The earliest interrupt not yet taken.
    fn peek(&self) -> Option<(Time, Time)> {
        match (self.next_tick, self.next_other) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    fn pop(&mut self) {
        match (self.next_tick, self.next_other) {
            (Some(a), Some(b)) if b.0 < a.0 => self.next_other = self.other(b.0),
            (Some(_), _) => self.next_tick = self.tick(),
            (None, Some(b)) => self.next_other = self.other(b.0),
            (None, None) => {}
        }
    }
}

impl Cpu {
    /// Host `host`'s CPU, its noise drawn from its own stream of `seed`.
    pub fn new(noise: Option<Noise>, seed: u64, host: u32) -> Cpu {
        let noise = noise.map(|n| {
            let mut rng = Stream::new(seed, Purpose::Noise, host as u64);
            let phase = if n.tick > 0 { rng.below(n.tick) } else { 0 };
            let mut s = NoiseState {
                n,
                rng,
                next_tick: None,
                next_other: None,
                ticks: 0,
                phase,
            };
            s.next_tick = s.tick();
            s.next_other = s.other(0);
            s
        });
        Cpu { free: 0, noise }
    }

    /// Runs `work` of CPU time from `start` (or when the CPU is free, if later): returns
    /// when it is done, interrupts taken on the way. The CPU is busy until then.
    pub fn run(&mut self, start: Time, work: Time) -> Time {
        let mut t = self.resume(start.max(self.free));
        let mut left = work;
        if let Some(s) = &mut self.noise {
            // Each interrupt that starts before the work is done stops it for its time.
            while let Some((at, d)) = s.peek() {
                if at >= t + left {
                    break;
                }
                left -= at.saturating_sub(t).min(left);
                t = at.max(t) + d;
                s.pop();
            }
        }
        self.free = t + left;
        self.free
    }

    /// The first instant at or after `t` the CPU is not in an interrupt (a message that
    /// arrives during one is noticed when it is over).
    pub fn resume(&mut self, mut t: Time) -> Time {
        if let Some(s) = &mut self.noise {
            while let Some((at, d)) = s.peek() {
                if at > t {
                    break;
                }
                t = t.max(at + d);
                s.pop();
            }
        }
        t
    }
}

/// How the NIC moves one message in: for each packet, when its data starts to come in and
/// the time per byte after that (its byte i is there at `start + (i + 1) · per_byte`).
/// `send` is when the application hands it over; `cpu` and `dma_free` (when the DMA engine
/// is next free) advance. The NIC makes each packet's framing itself.
pub fn send_times(
    h: &HostIf,
    bytes: u64,
    send: Time,
    cpu: &mut Cpu,
    dma_free: &mut Time,
    out: &mut Vec<(Time, Time)>,
) {
    out.clear();
    let ready = cpu.run(send, h.send_overhead);
    if bytes <= h.pio_max as u64 {
        // The CPU writes each packet's payload into the NIC in turn. (An interrupt in the
        // middle of one delays it whole: its last byte is there when the CPU is done.)
        let mut t = ready;
        for p in packets(h, bytes) {
            let work = p as Time * h.pio_per_byte;
            let end = cpu.run(t, work);
            out.push((end - work, h.pio_per_byte));
            t = end;
        }
    } else {
        // The DMA engine fetches the payload, message after message.
        let mut t = ready.max(*dma_free) + h.dma_latency;
        for p in packets(h, bytes) {
            out.push((t, h.dma_per_byte));
            t += p as Time * h.dma_per_byte;
        }
        *dma_free = t;
    }
}

/// When a packet's payload (`payload` bytes; head in at `head`, tail at `tail`) is all in
/// host memory, the NIC writing it as it arrives but after the packet before it (until
/// `rx_free`, which advances).
pub fn receive_time(h: &HostIf, payload: u32, head: Time, tail: Time, rx_free: &mut Time) -> Time {
    let start = (*rx_free).max(head);
    let write = payload as Time * h.rx_per_byte;
    *rx_free = (start + write).max(tail + h.rx_per_byte.min(write));
    *rx_free
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_cut_at_the_mtu() {
        let h = HostIf {
            mtu: 100,
            ..HostIf::default()
        };
        assert_eq!(packets(&h, 250).collect::<Vec<_>>(), vec![100, 100, 50]);
        assert_eq!(packets(&h, 100).collect::<Vec<_>>(), vec![100]);
        assert_eq!(packets(&h, 1).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn pio_and_dma_times_against_arithmetic() {
        let h = HostIf {
            mtu: 64,
            framing: 8,
            send_overhead: 1_000,
            pio_max: 64,
            pio_per_byte: 10,
            dma_latency: 500,
            dma_per_byte: 4,
            ..HostIf::default()
        };
        let mut cpu = Cpu::new(None, 1, 0);
        let (mut dma, mut out) = (0, Vec::new());
        // PIO: overhead, then 64 payload bytes at 10 ps.
        send_times(&h, 64, 100, &mut cpu, &mut dma, &mut out);
        assert_eq!(out, vec![(1_100, 10)]);
        assert_eq!(cpu.free, 1_740);
        // DMA: overhead from when the CPU is free, latency, then 4 ps a payload byte; the
        // CPU is free once it has posted it.
        send_times(&h, 130, 0, &mut cpu, &mut dma, &mut out);
        assert_eq!(out, vec![(3_240, 4), (3_496, 4), (3_752, 4)]);
        assert_eq!((cpu.free, dma), (2_740, 3_760));
        // The next DMA waits for the engine.
        send_times(&h, 65, 0, &mut cpu, &mut dma, &mut out);
        assert_eq!(out[0], (3_760 + 500, 4));
        // Receiving: written as it arrives, after the packet before.
        let h = HostIf { rx_per_byte: 2, ..h };
        let mut rx = 0;
        assert_eq!(receive_time(&h, 100, 1_000, 1_300, &mut rx), 1_302);
        assert_eq!(receive_time(&h, 100, 1_250, 1_320, &mut rx), 1_502);
    }

    #[test]
    fn interrupts_stop_the_cpu_for_their_time() {
        let n = Noise {
            tick: 1_000,
            tick_min: 100,
            tick_max: 100,
            rate_hz: 0.0,
            other_min: 0,
            other_max: 0,
        };
        let mut cpu = Cpu::new(Some(n), 3, 0);
        let phase = cpu.noise.as_ref().unwrap().phase;
        // 2.5 ticks' worth of work from just after a tick: two ticks in it.
        let end = cpu.run(phase + 150, 2_500);
        assert_eq!(end, phase + 150 + 2_500 + 200);
        // A message arriving during a tick is noticed when it ends.
        let t = 3 * 1_000 + phase + 50;
        assert_eq!(cpu.resume(t), phase + 3_000 + 100);
        // Without noise nothing changes.
        let mut quiet = Cpu::new(None, 3, 0);
        assert_eq!(quiet.run(7, 10), 17);
    }
}

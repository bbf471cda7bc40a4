//! CLAN on reef's engine: the prototype fabric (two five-port switches, eight of the twelve
//! NICs, 1 Gb/s links; [`spec`]) with an agent that plays the NICs and the hosts above it.
//!
//! What the agent models, from `shared/systems/clan.md` and [`super::params`]:
//! - **PIO**: stores into an aperture merge into 32-byte write-buffer blocks; each block
//!   crosses the sender's PCI bus and leaves as one packet. The CPU stalls only when all six
//!   write-buffer entries wait for the bus.
//! - **DMA**: transfers of [`P::DMA_THRESHOLD`] bytes or more are posted as a descriptor;
//!   the NIC's DMA engine reads them over PCI in packets of up to [`P::DMA_PACKET`] bytes,
//!   one packet at a time, so other bus transactions interleave.
//! - **Receive**: a packet's payload is written into host memory over PCI; Tripwire
//!   ([`super::nic::Tripwire`]) compares the write with its watches in one 30 ns match cycle
//!   and a match writes an event into the event queue ([`super::nic::EventQueue`]) over PCI.
//! - **Hosts**: one single-threaded process each. The server's loop takes events until
//!   the queue is empty, calling the endpoint's callback for each, polls for up to 15 µs,
//!   then sleeps in `select` (the next event then pays interrupt, reschedule and `select`).
//!   Clients and stream senders spin (they never sleep), as the published round trip needs.
//! - **Queue**: [`super::queue::Ring`] per direction with a lazy read pointer written back
//!   by PIO.
//!
//! This file holds the fabric, the scenarios and the costs; [`agent`] the NICs and hosts.
//!
//! Everything runs in integer picoseconds in a fixed order: the same inputs give the same
//! result bit for bit.

mod agent;

pub use agent::max_write;

use super::params as P;
use crate::engine::{HostParams, Sim, SimParams, Spec};
use crate::fabric::full::fully_connected;
use crate::fabric::{Arbitration, Selection, SwitchMode, SwitchParams, VcRelease};
use crate::fabric::{FlowControl, LinkParams};
use crate::routing::{Routing, table};
use crate::time::{Ratio, Time};
use crate::workload::Workload;

/// The host costs of the 533 MHz Alpha and the NICs' latency, as the model takes them
/// ([`super::calibrate`] derives them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// Taking one event from the event queue and calling its endpoint's callback [ps].
    pub tripwire_event: Time,
    /// The server's own work per request, beyond receiving it and sending the reply [ps].
    pub server_work: Time,
    /// The NIC's interrupt, to the point the sleeper is runnable [ps].
    pub interrupt: Time,
    /// Rescheduling the woken process [ps].
    pub reschedule: Time,
    /// `select` returning the readable event queue [ps].
    pub select: Time,
    /// Latency of each NIC's link pipeline (transmit or receive) [ps], calibrated: what the
    /// 1.5 µs leaves once the bus crossings, the serialisation and the switch's header wait
    /// are taken off, half at each end.
    pub nic_latency: Time,
    /// Copying into and out of the Queue [bytes/s] (ASSUMED: [`P::COPY_RATE`]).
    pub copy_rate: f64,
    /// PIO write rate [bytes/s]: 32-byte write-combined blocks stored across the bus (from
    /// the bus timing, [`P::pio_write_rate`]: the figures the spec gives cannot fix it).
    pub pio_write_rate: f64,
}

impl Costs {
    /// Copying `bytes` into or out of the Queue [ps].
    pub fn copy(&self, bytes: u64) -> Time {
        (bytes as f64 / self.copy_rate * 1e12).round() as Time
    }

    /// Bus time of a PIO store of `bytes` [ps]: the PCI transaction's, scaled to the PIO
    /// write rate.
    pub fn pio_time(&self, bytes: u64) -> Time {
        (P::pci_time(bytes) as f64 * P::pio_write_rate() / self.pio_write_rate).round() as Time
    }

    /// A sleeping process's way back to work [ps].
    pub fn wake(&self) -> Time {
        self.interrupt + self.reschedule + self.select
    }
}

/// The engine spec of the prototype: two five-port switches joined by one link, four NICs
/// on each, 1 Gb/s links of one byte per flit, cut-through (wormhole) switches.
///
/// Latencies sit on the links, as delay lines: the NICs' pipeline latency on each host
/// link, and the switch's wait for a packet's header ([`P::SWITCH_ROUTING`]) on the links
/// into a switch (half on each host link, whole on the inter-switch link), so that a path
/// through one switch pays it once and one through both pays it twice. The engine's
/// `router_delay` is not used for it: that delay starts when a head reaches the front of
/// its input buffer, after the previous packet's tail has left, so it would put a gap
/// between back-to-back packets, where a cut-through switch has the next header in its
/// FIFO and forwards at the link rate.
pub fn spec(nic_latency: Time) -> Result<Spec, String> {
    let net = LinkParams {
        flit_time: P::LINK_BYTE_TIME,
        tail_time: P::LINK_BYTE_TIME,
        latency: 0,
        vcs: 1,
        buffer: P::SWITCH_BUFFER,
        flow: FlowControl::Credit {
            delay: P::LINK_BYTE_TIME,
        },
        delete_header: false,
        clock: None,
    };
    let host = LinkParams {
        latency: nic_latency + P::SWITCH_ROUTING / 2,
        ..net
    };
    let net = LinkParams {
        latency: P::INTER_SWITCH_CABLE + P::SWITCH_ROUTING,
        ..net
    };
    let sw = SwitchParams {
        router_delay: 0,
        mode: SwitchMode::Wormhole,
        selection: Selection::FirstFree,
        arbitration: Arbitration::RoundRobin,
        speedup: 1,
        release: VcRelease::Tail,
    };
    let conc = P::SWITCH_PORTS - 1;
    let fab = fully_connected(P::SWITCHES, conc, net, host, sw).map_err(|e| e.to_string())?;
    let t = table::full(&fab).ok_or("no tables for the prototype")?;
    let n = fab.num_hosts();
    Ok(Spec {
        name: "clan-prototype".into(),
        fabric: fab,
        routing: Routing::Table(t),
        workload: Workload::silent(n),
        params: SimParams {
            seed: 1,
            warmup: 0,
            measure: 1_000_000_000_000_000,
            drain_limit: 0,
            drain_all: false,
            batches: 1,
            cycle: Ratio::int(P::LINK_BYTE_TIME as u128),
            check: false,
            watchdog: 1_000_000_000,
            flit_bytes: 1,
            trains: true,
            express: true,
            max_header: 0,
            sampling: None,
            runs: 1,
            source_queueing: true,
        },
        host: HostParams::default(),
        messages: None,
    })
}

/// The server's host (on switch 0).
pub const SERVER: u32 = 0;
/// The client of the round trips and the stream's sender (on the server's switch, as the
/// one-switch path of the 1.5 µs figure).
pub const CLIENT: u32 = 1;

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// One 8-byte PIO store from [`CLIENT`] to [`SERVER`]'s memory, no Tripwire: the
    /// application-to-application latency (the receiver spins on the word).
    OneWord,
    /// One 40-byte Queue transfer: from the sender's first store to the event in the
    /// receiver's event queue.
    OneWay,
    /// `count` 40-byte requests from [`CLIENT`], each sent when the previous reply is in,
    /// after `gap` [ps] (0: at once).
    RoundTrip { gap: Time, count: u32 },
    /// `outstanding` connections from the seven other hosts, each sending its next 40-byte
    /// request when its reply is in, `count` requests in all.
    Transactions { outstanding: u32, count: u32 },
    /// `count` messages of `size` bytes from [`CLIENT`] into a Queue of `ring` bytes.
    Stream { size: u64, count: u32, ring: u64 },
}

/// What a run gives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// OneWord / OneWay: the latency [ps].
    pub latency: Time,
    /// Round trips: each request's round trip [ps], in order.
    pub rtts: Vec<Time>,
    /// Transactions: when each reply was consumed [ps], in order.
    pub completions: Vec<Time>,
    /// Stream: (time, bytes) of each consumption by the receiver.
    pub consumed: Vec<(Time, u64)>,
    /// When the run ended [ps].
    pub end: Time,
    /// Times the server went to sleep in `select`.
    pub sleeps: u64,
    /// Events lost to a full event queue (a model error if not 0).
    pub event_overflows: u64,
}

/// Runs `scen` on the prototype with `costs`.
pub fn run(costs: &Costs, scen: Scenario) -> Result<Outcome, String> {
    let spec = spec(costs.nic_latency)?;
    let mut sim = Sim::new(&spec).map_err(|e| e.to_string())?;
    let mut ag = agent::Clan::new(costs, scen, spec.fabric.num_hosts() as u32)?;
    sim.run_with(&mut ag, &mut |_| {}).map_err(|e| e.to_string())?;
    if let Some(e) = ag.error {
        return Err(e);
    }
    let out = ag.out;
    let complete = match scen {
        Scenario::OneWord | Scenario::OneWay => out.latency > 0,
        Scenario::RoundTrip { count, .. } => out.rtts.len() == count as usize,
        Scenario::Transactions { count, .. } => out.completions.len() == count as usize,
        Scenario::Stream { size, count, .. } => {
            out.consumed.iter().map(|c| c.1).sum::<u64>() == size * count as u64
        }
    };
    if !complete {
        return Err(format!(
            "{scen:?}: the run ended before its work was done (a model error)"
        ));
    }
    if out.event_overflows > 0 {
        return Err(format!(
            "{scen:?}: {} events lost to a full event queue",
            out.event_overflows
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NS, US};

    fn costs() -> Costs {
        Costs {
            tripwire_event: US,
            server_work: 500 * NS,
            interrupt: 3 * US,
            reschedule: 3 * US,
            select: 3 * US,
            nic_latency: 400 * NS,
            copy_rate: P::COPY_RATE,
            pio_write_rate: P::pio_write_rate(),
        }
    }

    /// Two five-port switches joined by one link: every free port has a NIC.
    #[test]
    fn the_prototype_has_eight_nics_on_two_five_port_switches() {
        let s = spec(400 * NS).unwrap();
        assert_eq!(s.fabric.num_hosts(), P::NICS_ATTACHED as usize);
        assert_eq!(P::NICS_ATTACHED, 8);
        for h in 0..P::NICS_ATTACHED {
            let (sw, port) = s.fabric.host_switch(h);
            assert_eq!(sw.idx(), (h / 4) as usize, "host {h}");
            assert!(port < P::SWITCH_PORTS as u16, "host {h} on port {port}");
        }
    }

    #[test]
    fn one_word_latency_is_the_sum_of_its_stages() {
        let c = costs();
        let o = run(&c, Scenario::OneWord).unwrap();
        // PIO across the bus, the transmitting NIC, 20 bytes onto the link, the switch's
        // routing, the receiving NIC (wormhole: the tail follows the head), the DMA write.
        let wire = (P::APP_TO_APP_BYTES + P::PACKET_OVERHEAD) * P::LINK_BYTE_TIME;
        let expect = 2 * P::pci_time(8) + 2 * c.nic_latency + P::SWITCH_ROUTING + wire;
        let d = o.latency as i64 - expect as i64;
        // The engine adds one byte time per hop for the head to cross each link.
        assert!(
            (0..=2 * P::LINK_BYTE_TIME as i64).contains(&d),
            "{} vs {expect}",
            o.latency
        );
    }

    /// The switch's header wait is latency only: a 64 KB stream moves DMA packets at the
    /// link's payload rate, less only the write pointers and descriptors (a routing delay at
    /// the front of the switch's input FIFO cost 3 % here: 920 Mb/s where this gives 947).
    #[test]
    fn the_switch_forwards_back_to_back_packets_at_the_link_rate() {
        let c = costs();
        let o = run(
            &c,
            Scenario::Stream {
                size: 65_536,
                count: 24,
                ring: P::QUEUE_BYTES,
            },
        )
        .unwrap();
        let n = o.consumed.len();
        let bytes: u64 = o.consumed[n / 2 + 1..].iter().map(|x| x.1).sum();
        let dt = (o.consumed[n - 1].0 - o.consumed[n / 2].0) as f64;
        let got = bytes as f64 / dt;
        let link = P::DMA_PACKET as f64 / ((P::DMA_PACKET + P::PACKET_OVERHEAD) * P::LINK_BYTE_TIME) as f64;
        assert!(got > 0.985 * link && got <= link, "{got} bytes/ps against {link}");
    }

    #[test]
    fn sleeping_adds_exactly_the_wake_up() {
        let c = costs();
        let poll = run(&c, Scenario::RoundTrip { gap: 0, count: 20 }).unwrap();
        let sleep = run(
            &c,
            Scenario::RoundTrip {
                gap: P::SLEEP_GAP,
                count: 20,
            },
        )
        .unwrap();
        // Request by request (each 40-byte message falls on the 32-byte blocks in its own
        // way, so round trips differ a little from one another, the same way in both runs).
        for i in 1..20 {
            assert_eq!(sleep.rtts[i] - poll.rtts[i], c.wake(), "request {i}");
        }
        assert!(
            sleep.sleeps >= 19 && poll.sleeps == 0,
            "{} {}",
            sleep.sleeps,
            poll.sleeps
        );
        // A gap that keeps the server's idle time just under the poll limit: no sleep.
        let longest = *poll.rtts.iter().max().unwrap();
        let g = P::POLL_LIMIT - longest;
        let near = run(&c, Scenario::RoundTrip { gap: g, count: 20 }).unwrap();
        assert_eq!(near.rtts, poll.rtts);
        assert_eq!(near.sleeps, 0);
        // A gap of the poll limit itself: the server is idle longer than that (the gap and
        // the messages' travel), so it sleeps before every request but the first.
        let at = run(
            &c,
            Scenario::RoundTrip {
                gap: P::POLL_LIMIT,
                count: 20,
            },
        )
        .unwrap();
        assert_eq!(at.sleeps, 19);
        for i in 1..20 {
            assert_eq!(at.rtts[i] - poll.rtts[i], c.wake(), "request {i}");
        }
    }

    #[test]
    fn a_saturated_server_runs_at_its_per_message_time() {
        let c = costs();
        let o = run(
            &c,
            Scenario::Transactions {
                outstanding: 64,
                count: 4000,
            },
        )
        .unwrap();
        let n = o.completions.len();
        let (a, b) = (o.completions[n / 2], o.completions[n - 1]);
        let per = (b - a) as f64 / (n - 1 - n / 2) as f64;
        let s = (c.tripwire_event + c.server_work + c.copy(40)) as f64;
        assert!((per / s - 1.0).abs() < 0.01, "{per} vs {s}");
    }

    #[test]
    fn a_stream_delivers_every_byte_with_any_ring() {
        let c = costs();
        for (size, ring) in [(16, 10 * 1024), (3000, 1000), (65536, 10 * 1024), (5, 7)] {
            let o = run(
                &c,
                Scenario::Stream {
                    size,
                    count: 20,
                    ring,
                },
            )
            .unwrap();
            let total: u64 = o.consumed.iter().map(|x| x.1).sum();
            assert_eq!(total, size * 20);
        }
        assert!(
            run(
                &c,
                Scenario::Stream {
                    size: 0,
                    count: 1,
                    ring: 10
                }
            )
            .is_err()
        );
    }

    #[test]
    fn runs_are_deterministic() {
        let c = costs();
        let s = Scenario::Transactions {
            outstanding: 13,
            count: 500,
        };
        assert_eq!(run(&c, s).unwrap(), run(&c, s).unwrap());
    }
}

//! Agents: the code that plays the hosts' part when they do more than send synthetic
//! traffic — a traffic node working through its descriptor list, a ping-pong, a server, an
//! Address Consultant mapping the network. An agent sends messages from hosts (each a
//! packet with its own length, header and tag), hears of every tagged packet that is
//! delivered and of the timers it set, and can stop the run.
//!
//! Determinism: within an instant, the engine first moves every flit, then hands the agent
//! what happened in a fixed order (deliveries by host, source and tag; then timers by host and
//! token; then hosts that took the last message queued for them), then lets the hosts act on
//! what the agent sent. Dynamic dispatch happens once per
//! delivered packet or timer, never per flit.

use super::{K_TIMER, NONE, Sim, ev};
use crate::fabric::Fabric;
use crate::time::Time;

/// A packet that carries no tag (synthetic traffic): not reported to agents.
pub const NO_TAG: u64 = u64::MAX;

/// A message an agent sends: one packet from host `src` to host `dst`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub src: u32,
    pub dst: u32,
    /// Length [flits]: with a `header` of its own that travels in the packet, its flits
    /// included; with the routing's own header, not (a route that travels in the packet,
    /// an ATOLL routing string, adds its flits).
    pub flits: u32,
    /// Header symbols routing reads (a source route, header bytes); empty for routing by
    /// destination or to use the routing's own header for `dst`.
    pub header: Vec<u16>,
    /// Reported back on delivery; [`NO_TAG`] for none.
    pub tag: u64,
}

/// When a message's data reaches its NIC, for a NIC that starts sending a packet before it
/// has all of it (its DMA engine still fetching): flits `from` on (counted in the packet as
/// the message gives it, a route the routing adds in front not counted) become available
/// one every `per_flit`, flit `from + j` at `start + (j + 1) · per_flit`; the flits before
/// them (a header the NIC makes) at once. The host sends no flit before it is available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPace {
    pub start: Time,
    pub per_flit: Time,
    pub from: u32,
}

/// A tagged packet that reached its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The destination host.
    pub host: u32,
    pub src: u32,
    pub tag: u64,
    /// Length at arrival [flits] (header flits stripped on the way are gone).
    pub flits: u32,
    /// When the agent handed the message over [ps].
    pub created: Time,
    /// When its head left the source host [ps].
    pub head_injected: Time,
    /// When its head reached the destination [ps].
    pub head_delivered: Time,
    /// When its tail was in and the receive costs paid [ps].
    pub delivered: Time,
    /// Switches it crossed.
    pub hops: u16,
}

/// What the engine tells an agent, in this order within an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Note {
    Delivered {
        host: u32,
        src: u32,
        tag: u64,
        pid: u32,
        time: Time,
    },
    Timer {
        host: u32,
        token: u64,
    },
    /// The host started the last message queued for it.
    Idle {
        host: u32,
    },
}

/// The system code behind the hosts.
pub trait Agent {
    /// At time 0, before anything moves.
    fn start(&mut self, ctl: &mut Ctl) {
        let _ = ctl;
    }

    /// A tagged packet was delivered.
    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery);

    /// A timer this agent set went off.
    fn timer(&mut self, ctl: &mut Ctl, host: u32, token: u64) {
        let _ = (ctl, host, token);
    }

    /// `host` started sending the last message queued for it: a message sent now is the next
    /// it sends (a backlogged source keeps its queue this way).
    fn idle(&mut self, ctl: &mut Ctl, host: u32) {
        let _ = (ctl, host);
    }
}

/// An agent that does nothing (runs without one use it).
pub struct NoAgent;

impl Agent for NoAgent {
    fn delivered(&mut self, _: &mut Ctl, _: &Delivery) {}
}

/// What an agent may do.
pub struct Ctl<'s, 'a> {
    pub(crate) sim: &'s mut Sim<'a>,
}

impl Ctl<'_, '_> {
    /// The present [ps].
    pub fn now(&self) -> Time {
        self.sim.now
    }

    pub fn fabric(&self) -> &Fabric {
        self.sim.fab
    }

    /// Queues a message at its source host; it leaves when the host has sent what it queued
    /// before (and paid its send costs).
    pub fn send(&mut self, m: Message) -> Result<(), String> {
        self.send_with(m, None)
    }

    /// As [`Self::send`], the message's data reaching the NIC at the pace `data` says.
    pub fn send_paced(&mut self, m: Message, data: DataPace) -> Result<(), String> {
        self.send_with(m, Some(data))
    }

    fn send_with(&mut self, m: Message, data: Option<DataPace>) -> Result<(), String> {
        let n = self.sim.hosts.len() as u32;
        if m.src >= n || m.dst >= n {
            return Err(format!("message {}→{}: hosts are 0..{n}", m.src, m.dst));
        }
        if m.flits == 0 {
            return Err("a message needs at least one flit".into());
        }
        if m.header.len() > self.sim.route_stride {
            return Err(format!(
                "a header of {} symbols is longer than the {} this run makes room for (SimParams::max_header)",
                m.header.len(),
                self.sim.route_stride
            ));
        }
        let h = &mut self.sim.hosts[m.src as usize];
        h.outbox.push_back((self.sim.now, m, data));
        let node = h.node;
        self.sim.mark_dirty(node);
        Ok(())
    }

    /// Calls the agent back at `at` (not before now) with `token`, on behalf of `host`.
    pub fn timer(&mut self, host: u32, at: Time, token: u64) {
        let at = at.max(self.sim.now);
        let slot = match self.sim.free_tokens.pop() {
            Some(s) => {
                self.sim.tokens[s as usize] = token;
                s
            }
            None => {
                self.sim.tokens.push(token);
                self.sim.tokens.len() as u32 - 1
            }
        };
        self.sim.q.push_at(self.sim.now, at, ev(K_TIMER, host, slot));
    }

    /// Ends the run after this instant.
    pub fn stop(&mut self) {
        self.sim.stop = true;
    }

    /// Messages waiting at `host` (not yet started).
    pub fn queued(&self, host: u32) -> usize {
        self.sim.hosts[host as usize].outbox.len() + usize::from(self.sim.hosts[host as usize].cur != NONE)
    }
}

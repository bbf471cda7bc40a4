//! The agent that plays the CLAN NICs and the hosts above them on reef's engine: PIO
//! through the write buffer, the DMA engine, the receive path with Tripwire and the event
//! queue, the Queue's rings, and each host's single-threaded select loop (what is modelled
//! and where the numbers come from: [`super`] and [`super::super::params`]).

use std::collections::VecDeque;

use super::super::nic::{Arrival, EventQueue, Tripwire};
use super::super::params as P;
use super::super::queue::{Ring, pieces};
use super::{CLIENT, Costs, Outcome, SERVER, Scenario};
use crate::engine::agent::{Agent, Ctl, Delivery, Message};
use crate::time::Time;

#[derive(Debug, Clone, Copy)]
enum Pkt {
    Data,
    /// The write pointer of ring `r` (a Tripwire watches it at the receiver).
    WrPtr {
        r: u32,
        v: u64,
    },
    /// The read pointer of ring `r`, written back into the sender's memory.
    RdPtr {
        r: u32,
        v: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Packet {
    src: u32,
    dst: u32,
    bytes: u64,
    addr: u64,
    kind: Pkt,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Send(u32),
    LandWr {
        r: u32,
        v: u64,
    },
    LandRd {
        r: u32,
        v: u64,
    },
    Event {
        h: u32,
        r: u32,
    },
    CpuDone {
        h: u32,
        r: u32,
        n: u64,
    },
    Resume(u32),
    PollExpire {
        h: u32,
        epoch: u64,
    },
    Wake(u32),
    ClientNext(u32),
    DmaNext(u32),
    /// OneWord: the store is in the receiver's memory.
    Landed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Request(u32),
    Reply(u32),
    Stream,
}

struct RingState {
    q: Ring,
    tx: u32,
    rx: u32,
    role: Role,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Busy,
    Sleeping,
}

struct Host {
    pci_free: Time,
    /// Drain times of the write-buffer entries still waiting for the bus.
    wb: VecDeque<Time>,
    ev: EventQueue,
    tw: Tripwire,
    /// `Some(limit)`: the select loop polls this long, then sleeps; `None`: spins.
    poll: Option<Time>,
    state: State,
    epoch: u64,
    /// Requests to send (connections), in order.
    pending: VecDeque<u32>,
    /// DMA transfers posted: (ring, [(ring offset, bytes)] still to read, write pointer).
    dma: VecDeque<Dma>,
    dma_busy: bool,
}

/// A posted DMA transfer: its ring, the (ring offset, bytes) packets still to read, and the
/// write pointer to publish after them.
type Dma = (u32, VecDeque<(u64, u64)>, u64);

struct Conn {
    client: u32,
    req: u32,
    rep: u32,
    sent_at: Time,
}

struct StreamState {
    ring: u32,
    size: u64,
    left_in_msg: u64,
    msgs_left: u32,
    blocked: bool,
}

pub(super) struct Clan<'c> {
    costs: &'c Costs,
    scen: Scenario,
    hosts: Vec<Host>,
    rings: Vec<RingState>,
    conns: Vec<Conn>,
    stream: Option<StreamState>,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    actions: Vec<Action>,
    free_actions: Vec<u64>,
    /// Requests still to send / replies still to come.
    to_send: u32,
    to_finish: u32,
    pub(super) out: Outcome,
    pub(super) error: Option<String>,
}

/// ASSUMED: the most a stream sender writes before publishing its write pointer: a quarter
/// of the ring, so that the receiver copies one part while the next arrives (one write of
/// the whole free space would leave the link idle while the receiver copies).
pub fn max_write(cap: u64) -> u64 {
    (cap / 4).max(1)
}

/// Address of ring `r`'s data in its receiver's memory.
fn ring_base(r: u32) -> u64 {
    (r as u64 + 1) << 24
}

/// Address of ring `r`'s write pointer at its receiver (watched by Tripwire).
fn wr_addr(r: u32) -> u64 {
    ring_base(r) + (1 << 22)
}

/// Address of ring `r`'s read pointer in its sender's memory.
fn rd_addr(r: u32) -> u64 {
    ring_base(r) + (2 << 22)
}

impl<'c> Clan<'c> {
    pub(super) fn new(costs: &'c Costs, scen: Scenario, hosts: u32) -> Result<Clan<'c>, String> {
        let mk = |poll| Host {
            pci_free: 0,
            wb: VecDeque::new(),
            ev: EventQueue::new(P::EVENT_QUEUE_EVENTS),
            tw: Tripwire::new(P::TRIPWIRE_ENTRIES),
            poll,
            state: State::Idle,
            epoch: 0,
            pending: VecDeque::new(),
            dma: VecDeque::new(),
            dma_busy: false,
        };
        let mut c = Clan {
            costs,
            scen,
            hosts: (0..hosts)
                .map(|h| mk((h == SERVER).then_some(P::POLL_LIMIT)))
                .collect(),
            rings: Vec::new(),
            conns: Vec::new(),
            stream: None,
            packets: Vec::new(),
            free_packets: Vec::new(),
            actions: Vec::new(),
            free_actions: Vec::new(),
            to_send: 0,
            to_finish: 0,
            out: Outcome::default(),
            error: None,
        };
        let lazy = |cap: u64| (cap / 2).max(1);
        match scen {
            Scenario::OneWord => {}
            Scenario::OneWay => {
                c.add_ring(CLIENT, SERVER, P::QUEUE_BYTES, lazy(P::QUEUE_BYTES), Role::Stream)?;
            }
            Scenario::RoundTrip { count, .. } => {
                c.add_conn(CLIENT)?;
                (c.to_send, c.to_finish) = (count, count);
            }
            Scenario::Transactions { outstanding, count } => {
                if outstanding == 0 || count < outstanding {
                    return Err(format!(
                        "transactions: need 1 <= outstanding <= count (got {outstanding}, {count})"
                    ));
                }
                let clients: Vec<u32> = (0..hosts).filter(|&h| h != SERVER).collect();
                for i in 0..outstanding {
                    c.add_conn(clients[i as usize % clients.len()])?;
                }
                (c.to_send, c.to_finish) = (count, count);
            }
            Scenario::Stream { size, count, ring } => {
                if size == 0 || count == 0 || ring < 2 {
                    return Err(format!(
                        "stream: need a size and a count of at least 1 and a ring of at least 2 bytes (got {size}, {count}, {ring})"
                    ));
                }
                let r = c.add_ring(CLIENT, SERVER, ring, lazy(ring), Role::Stream)?;
                c.stream = Some(StreamState {
                    ring: r,
                    size,
                    left_in_msg: size,
                    msgs_left: count,
                    blocked: false,
                });
            }
        }
        Ok(c)
    }

    fn add_ring(&mut self, tx: u32, rx: u32, cap: u64, lazy: u64, role: Role) -> Result<u32, String> {
        let r = self.rings.len() as u32;
        self.hosts[rx as usize]
            .tw
            .watch(wr_addr(r), wr_addr(r) + P::POINTER_BYTES - 1, r as u64)
            .map_err(|e| format!("host {rx}: {e}"))?;
        self.rings.push(RingState {
            q: Ring::new(cap, lazy),
            tx,
            rx,
            role,
        });
        Ok(r)
    }

    fn add_conn(&mut self, client: u32) -> Result<(), String> {
        let c = self.conns.len() as u32;
        let q = P::QUEUE_BYTES;
        let req = self.add_ring(client, SERVER, q, q / 2, Role::Request(c))?;
        let rep = self.add_ring(SERVER, client, q, q / 2, Role::Reply(c))?;
        self.conns.push(Conn {
            client,
            req,
            rep,
            sent_at: 0,
        });
        Ok(())
    }

    fn at(&mut self, ctl: &mut Ctl, host: u32, t: Time, a: Action) {
        let tok = match self.free_actions.pop() {
            Some(i) => {
                self.actions[i as usize] = a;
                i
            }
            None => {
                self.actions.push(a);
                self.actions.len() as u64 - 1
            }
        };
        ctl.timer(host, t, tok);
    }

    fn packet(&mut self, p: Packet) -> u32 {
        match self.free_packets.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                self.packets.len() as u32 - 1
            }
        }
    }

    /// One bus transaction of `bytes` at host `h` (DMA or a NIC's write), not before `t`;
    /// returns its end.
    fn pci(&mut self, h: u32, t: Time, bytes: u64) -> Time {
        self.bus(h, t, P::pci_time(bytes))
    }

    /// The bus of host `h` busy for `dur` [ps], not before `t`; returns the end.
    fn bus(&mut self, h: u32, t: Time, dur: Time) -> Time {
        let host = &mut self.hosts[h as usize];
        let start = t.max(host.pci_free);
        host.pci_free = start + dur;
        host.pci_free
    }

    /// The CPU of `h` stores `blocks` (packets to send, in order; `None`: a store to the
    /// NIC itself) from `t` on. Returns when the CPU is free again (later than `t` only if
    /// the write buffer filled) and when the last block reached the NIC.
    fn pio(&mut self, ctl: &mut Ctl, h: u32, t: Time, blocks: &[(u64, Option<Packet>)]) -> (Time, Time) {
        let mut cpu = t;
        let mut last = t;
        for &(bytes, p) in blocks {
            let wb = &mut self.hosts[h as usize].wb;
            while wb.front().is_some_and(|&d| d <= cpu) {
                wb.pop_front();
            }
            if wb.len() >= P::WRITE_BUFFER_ENTRIES {
                cpu = wb.pop_front().unwrap_or(cpu);
            }
            let end = self.bus(h, cpu, self.costs.pio_time(bytes));
            self.hosts[h as usize].wb.push_back(end);
            last = end;
            if let Some(p) = p {
                let id = self.packet(p);
                self.at(ctl, h, end, Action::Send(id));
            }
        }
        (cpu, last)
    }

    /// The write-combined blocks of `n` bytes written at ring offset `at` of ring `r`,
    /// followed by the write pointer `v`.
    fn queue_blocks(&self, r: u32, at: u64, n: u64, v: u64) -> Vec<(u64, Option<Packet>)> {
        let rs = &self.rings[r as usize];
        let (tx, rx) = (rs.tx, rs.rx);
        let mut out = Vec::new();
        for (off, len) in pieces(at, n, rs.q.capacity()) {
            let mut a = off;
            while a < off + len {
                let end = ((a / P::WC_BLOCK + 1) * P::WC_BLOCK).min(off + len);
                out.push((
                    end - a,
                    Some(Packet {
                        src: tx,
                        dst: rx,
                        bytes: end - a,
                        addr: ring_base(r) + a,
                        kind: Pkt::Data,
                    }),
                ));
                a = end;
            }
        }
        out.push((P::POINTER_BYTES, Some(self.wr_packet(r, v))));
        out
    }

    fn wr_packet(&self, r: u32, v: u64) -> Packet {
        let rs = &self.rings[r as usize];
        Packet {
            src: rs.tx,
            dst: rs.rx,
            bytes: P::POINTER_BYTES,
            addr: wr_addr(r),
            kind: Pkt::WrPtr { r, v },
        }
    }

    /// Writes `n` bytes into ring `r` (all must fit) from host `h` at `t`, by PIO or DMA.
    /// Returns when the CPU is free.
    fn queue_send(&mut self, ctl: &mut Ctl, r: u32, n: u64, t: Time) -> Result<Time, String> {
        let h = self.rings[r as usize].tx;
        let (at, k, v) = self.rings[r as usize].q.write(n);
        if k != n {
            return Err(format!("ring {r}: {n} bytes do not fit ({k} free)"));
        }
        if n >= P::DMA_THRESHOLD {
            let (cpu, desc_at) = self.pio(ctl, h, t, &[(P::DMA_DESCRIPTOR, None)]);
            let mut parts = VecDeque::new();
            for (off, len) in pieces(at, n, self.rings[r as usize].q.capacity()) {
                let mut a = off;
                while a < off + len {
                    let b = (a + P::DMA_PACKET).min(off + len);
                    parts.push_back((a, b - a));
                    a = b;
                }
            }
            let host = &mut self.hosts[h as usize];
            host.dma.push_back((r, parts, v));
            if !host.dma_busy {
                host.dma_busy = true;
                self.at(ctl, h, desc_at, Action::DmaNext(h));
            }
            Ok(cpu)
        } else {
            let blocks = self.queue_blocks(r, at, n, v);
            Ok(self.pio(ctl, h, t, &blocks).0)
        }
    }

    /// The DMA engine of `h` reads its next packet over the bus.
    fn dma_next(&mut self, ctl: &mut Ctl, h: u32, t: Time) {
        let Some((r, parts, v)) = self.hosts[h as usize].dma.front_mut() else {
            self.hosts[h as usize].dma_busy = false;
            return;
        };
        let (r, v) = (*r, *v);
        match parts.pop_front() {
            Some((off, len)) => {
                let rs = &self.rings[r as usize];
                let p = Packet {
                    src: rs.tx,
                    dst: rs.rx,
                    bytes: len,
                    addr: ring_base(r) + off,
                    kind: Pkt::Data,
                };
                let end = self.pci(h, t, len);
                let id = self.packet(p);
                self.at(ctl, h, end, Action::Send(id));
                self.at(ctl, h, end, Action::DmaNext(h));
            }
            None => {
                // The descriptor's last act: the write pointer, from the NIC itself.
                self.hosts[h as usize].dma.pop_front();
                let p = self.wr_packet(r, v);
                let id = self.packet(p);
                self.at(ctl, h, t, Action::Send(id));
                self.at(ctl, h, t, Action::DmaNext(h));
            }
        }
    }

    fn send_request(&mut self, ctl: &mut Ctl, c: u32, t: Time) -> Result<Time, String> {
        self.to_send -= 1;
        self.conns[c as usize].sent_at = t;
        let r = self.conns[c as usize].req;
        self.queue_send(ctl, r, P::MESSAGE_BYTES, t)
    }

    /// The stream sender writes what fits of its current message; returns when its CPU is
    /// free, or `None` if it blocks on a full ring or has finished.
    fn stream_send(&mut self, ctl: &mut Ctl, t: Time) -> Result<Option<Time>, String> {
        let Some(s) = &mut self.stream else {
            return Ok(None);
        };
        if s.msgs_left == 0 {
            return Ok(None);
        }
        let r = s.ring;
        let q = &self.rings[r as usize].q;
        let n = s.left_in_msg.min(q.free()).min(max_write(q.capacity()));
        let s = self.stream.as_mut().expect("stream");
        if n == 0 {
            s.blocked = true;
            return Ok(None);
        }
        s.left_in_msg -= n;
        if s.left_in_msg == 0 {
            s.msgs_left -= 1;
            s.left_in_msg = s.size;
        }
        self.queue_send(ctl, r, n, t).map(Some)
    }

    /// Host `h`'s process, free at `t`, takes its next piece of work or goes idle.
    fn kick(&mut self, ctl: &mut Ctl, h: u32, t: Time) -> Result<(), String> {
        if self.hosts[h as usize].state != State::Idle {
            return Ok(());
        }
        if let Some(c) = self.hosts[h as usize].pending.pop_front() {
            let cpu = self.send_request(ctl, c, t)?;
            return self.resume_at(ctl, h, t, cpu);
        }
        if h == CLIENT
            && let Some(cpu) = self.stream_send(ctl, t)?
        {
            return self.resume_at(ctl, h, t, cpu);
        }
        if let Some(r) = self.hosts[h as usize].ev.pop() {
            let rs = &self.rings[r as usize];
            let n = rs.q.readable();
            let mut cost = self.costs.tripwire_event + self.costs.copy(n);
            if let Role::Request(_) = rs.role {
                cost += self.costs.server_work * (n / P::MESSAGE_BYTES);
            }
            self.hosts[h as usize].state = State::Busy;
            self.at(ctl, h, t + cost, Action::CpuDone { h, r: r as u32, n });
            return Ok(());
        }
        let host = &mut self.hosts[h as usize];
        if let Some(limit) = host.poll {
            host.epoch += 1;
            let epoch = host.epoch;
            self.at(ctl, h, t + limit, Action::PollExpire { h, epoch });
        }
        Ok(())
    }

    fn resume_at(&mut self, ctl: &mut Ctl, h: u32, t: Time, cpu: Time) -> Result<(), String> {
        if cpu > t {
            self.hosts[h as usize].state = State::Busy;
            self.at(ctl, h, cpu, Action::Resume(h));
            Ok(())
        } else {
            self.kick(ctl, h, t)
        }
    }

    /// The callback for `n` bytes of ring `r` is done at `t`.
    fn cpu_done(&mut self, ctl: &mut Ctl, h: u32, r: u32, n: u64, t: Time) -> Result<(), String> {
        self.hosts[h as usize].state = State::Idle;
        let mut cpu = t;
        if n > 0 {
            if let Some(v) = self.rings[r as usize].q.consume(n) {
                let rs = &self.rings[r as usize];
                let p = Packet {
                    src: rs.rx,
                    dst: rs.tx,
                    bytes: P::POINTER_BYTES,
                    addr: rd_addr(r),
                    kind: Pkt::RdPtr { r, v },
                };
                cpu = self.pio(ctl, h, cpu, &[(P::POINTER_BYTES, Some(p))]).0;
            }
            match self.rings[r as usize].role {
                Role::Request(c) => {
                    let rep = self.conns[c as usize].rep;
                    for _ in 0..n / P::MESSAGE_BYTES {
                        cpu = self.queue_send(ctl, rep, P::MESSAGE_BYTES, cpu)?;
                    }
                }
                Role::Reply(c) => {
                    for _ in 0..n / P::MESSAGE_BYTES {
                        self.finish_request(ctl, c, t);
                    }
                }
                Role::Stream => {
                    self.out.consumed.push((t, n));
                    let done = self.stream.as_ref().is_some_and(|s| s.msgs_left == 0)
                        && self.rings[r as usize].q.consumed() == self.rings[r as usize].q.written();
                    if done {
                        self.out.end = t;
                        ctl.stop();
                    }
                }
            }
        }
        self.resume_at(ctl, h, t, cpu)
    }

    fn finish_request(&mut self, ctl: &mut Ctl, c: u32, t: Time) {
        let sent = self.conns[c as usize].sent_at;
        match self.scen {
            Scenario::RoundTrip { .. } => self.out.rtts.push(t - sent),
            _ => self.out.completions.push(t),
        }
        self.to_finish -= 1;
        if self.to_finish == 0 {
            self.out.end = t;
            ctl.stop();
            return;
        }
        if self.to_send > 0 {
            let gap = match self.scen {
                Scenario::RoundTrip { gap, .. } => gap,
                _ => 0,
            };
            let client = self.conns[c as usize].client;
            self.at(ctl, client, t + gap, Action::ClientNext(c));
        }
    }

    fn event(&mut self, ctl: &mut Ctl, h: u32, r: u32, t: Time) -> Result<(), String> {
        if self.scen == Scenario::OneWay {
            self.out.latency = t;
            ctl.stop();
            return Ok(());
        }
        match self.hosts[h as usize].ev.push(r as u64) {
            Arrival::Overflow => self.out.event_overflows += 1,
            Arrival::Interrupt => {
                let w = t + self.costs.wake();
                self.at(ctl, h, w, Action::Wake(h));
            }
            Arrival::Queued => {
                if self.hosts[h as usize].state == State::Idle {
                    // The poll loop (or a spinning process) sees the event at once.
                    self.kick(ctl, h, t)?;
                }
            }
        }
        Ok(())
    }

    fn act(&mut self, ctl: &mut Ctl, a: Action) -> Result<(), String> {
        let t = ctl.now();
        match a {
            Action::Send(id) => {
                let p = self.packets[id as usize];
                ctl.send(Message {
                    src: p.src,
                    dst: p.dst,
                    flits: (p.bytes + P::PACKET_OVERHEAD) as u32,
                    header: Vec::new(),
                    tag: id as u64,
                })?;
            }
            Action::LandWr { r, v } => self.rings[r as usize].q.land_wr(v),
            Action::LandRd { r, v } => {
                self.rings[r as usize].q.land_rd(v);
                let blocked = self.stream.as_ref().is_some_and(|s| s.blocked && s.ring == r);
                if blocked {
                    self.stream.as_mut().expect("stream").blocked = false;
                    let tx = self.rings[r as usize].tx;
                    self.kick(ctl, tx, t)?;
                }
            }
            Action::Event { h, r } => self.event(ctl, h, r, t)?,
            Action::CpuDone { h, r, n } => self.cpu_done(ctl, h, r, n, t)?,
            Action::Resume(h) => {
                self.hosts[h as usize].state = State::Idle;
                self.kick(ctl, h, t)?;
            }
            Action::PollExpire { h, epoch } => {
                let host = &mut self.hosts[h as usize];
                if host.state == State::Idle && host.epoch == epoch {
                    if host.ev.arm() {
                        host.state = State::Sleeping;
                        self.out.sleeps += 1;
                    } else {
                        self.kick(ctl, h, t)?;
                    }
                }
            }
            Action::Wake(h) => {
                self.hosts[h as usize].state = State::Idle;
                self.kick(ctl, h, t)?;
            }
            Action::ClientNext(c) => {
                let h = self.conns[c as usize].client;
                self.hosts[h as usize].pending.push_back(c);
                self.kick(ctl, h, t)?;
            }
            Action::DmaNext(h) => self.dma_next(ctl, h, t),
            Action::Landed => {
                self.out.latency = t;
                ctl.stop();
            }
        }
        Ok(())
    }
}

impl Agent for Clan<'_> {
    fn start(&mut self, ctl: &mut Ctl) {
        let r = (|| -> Result<(), String> {
            match self.scen {
                Scenario::OneWord => {
                    let p = Packet {
                        src: CLIENT,
                        dst: SERVER,
                        bytes: P::APP_TO_APP_BYTES,
                        addr: 0x100,
                        kind: Pkt::Data,
                    };
                    self.pio(ctl, CLIENT, 0, &[(P::APP_TO_APP_BYTES, Some(p))]);
                }
                Scenario::OneWay => {
                    self.queue_send(ctl, 0, P::MESSAGE_BYTES, 0)?;
                }
                Scenario::RoundTrip { .. } | Scenario::Transactions { .. } => {
                    for c in 0..self.conns.len() as u32 {
                        let h = self.conns[c as usize].client;
                        self.hosts[h as usize].pending.push_back(c);
                    }
                    for h in 0..self.hosts.len() as u32 {
                        self.kick(ctl, h, 0)?;
                    }
                }
                Scenario::Stream { .. } => {
                    self.kick(ctl, SERVER, 0)?;
                    self.kick(ctl, CLIENT, 0)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            self.error = Some(e);
            ctl.stop();
        }
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        let p = self.packets[d.tag as usize];
        self.free_packets.push(d.tag as u32);
        // The payload goes into host memory over the receiver's bus; Tripwire watches the
        // transfer.
        let end = self.pci(p.dst, d.delivered, p.bytes);
        match p.kind {
            Pkt::Data if self.scen == Scenario::OneWord => self.at(ctl, p.dst, end, Action::Landed),
            Pkt::Data => {}
            Pkt::WrPtr { r, v } => self.at(ctl, p.dst, end, Action::LandWr { r, v }),
            Pkt::RdPtr { r, v } => self.at(ctl, p.dst, end, Action::LandRd { r, v }),
        }
        for tok in self.hosts[p.dst as usize].tw.matches(p.addr, p.bytes) {
            let ev_at = self.pci(p.dst, end + P::TRIPWIRE_MATCH, P::EVENT_BYTES);
            self.at(
                ctl,
                p.dst,
                ev_at,
                Action::Event {
                    h: p.dst,
                    r: tok as u32,
                },
            );
        }
    }

    fn timer(&mut self, ctl: &mut Ctl, _host: u32, token: u64) {
        let a = self.actions[token as usize];
        self.free_actions.push(token);
        if let Err(e) = self.act(ctl, a) {
            self.error = Some(e);
            ctl.stop();
        }
    }
}

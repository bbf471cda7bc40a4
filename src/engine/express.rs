//! The express engine: the same model as the general engine (`Sim::run`), for the fabrics
//! the reference workloads and most runs use — meshes, and tori with dateline VCs, of
//! wormhole switches with round-robin arbitration, credit flow control and
//! dimension-order routing — without the general engine's machinery for what such fabrics
//! cannot have (adaptive selection, cut-through, tokens, header operations, output buffers,
//! failures, agents, deadlock). Its results are those of the general engine bit for bit
//! (`tests/express.rs` compares the two on random fabrics; only the count of events
//! differs); it exists for speed (docs/performance.md, "the express engine", 2026-11-26).
//!
//! Model (DESIGN.md, "Engine"; the rules of `engine::mod` and `switch::alloc`): a flit sent
//! on a channel at `t` occupies it for its unit time (flit or tail time) and lands in the
//! receiver's buffer one unit and the propagation delay later; its credit lands back at the
//! sender one credit delay after it leaves that buffer. A head reaches the front of its
//! input VC when it lands or, behind another packet, when that packet's tail leaves; it
//! asks for its output a router delay later. At each instant a switch, output by output
//! (from a rotating first one where inputs share the crossbar): grants free VCs of the
//! output to the heads that ask for them, in round-robin order of its inputs after the last
//! one granted (a VC whose tail leaves at this instant only after the send); then sends one
//! flit, from the next VC in round-robin order whose worm has a flit in, a credit, and its
//! crossbar input free.
//!
//! How it runs. Every VC has one record (a cache line): as an output, its owner and the
//! credits of the receiver's buffer; as an input, the buffer ring (the general engine's
//! ring array, reused) and the state of its front packet. Every channel has one too (its
//! transmitter, its requests, which of its VCs are held, as bits), and every switch (what
//! it has to do at this instant, its inputs being routed or active, as bits). They are
//! numbered so that a switch's input VC follows from the switch and its index there, and
//! a switch's output channel from the switch and its port, with no table between (each
//! such table was a cache line more on a hop: see `Express::new`). Three kinds of
//! event: a head's router delay ends (it asks for its output), a sender is woken (its
//! channel is free, a flit or a credit it waits for lands, a tail passes, or a packet
//! is due at a host), and a packet's tail reaches its host. Where inputs share the
//! crossbar, the first two name the switch (with the input and its output's port, or
//! the port) and only mark it: the instant's requests are taken together once its
//! events are in, before the switches act, reading only the switches and the channels
//! asked for (an input's record, read in the event, was cold again an instant's worth
//! of events later; read when the requests are taken, it put one cache miss behind
//! another). A worm that nothing can come between goes as a train: as many flits as are
//! in the buffer and have credits at their own flit times (at most [`MAX_TRAIN`], so
//! the end-of-run count of committed flits works as for the general engine's trains).
//! Where something could (another worm on the channel or on the same crossbar input, or
//! a head that may come to be one), the train stops before it could, and contended
//! flits go one at a time, exactly as the rules above pick them.

use super::arr::at_mut;
use super::*;
use crate::routing::dor::Dor;

/// Event kinds (the top two bits; the rest is a VC, a channel or a packet slot).
const X_ROUTE: u64 = 0;
const X_WAKE: u64 = 1;
const X_DELIVER: u64 = 2;
/// A head's router delay ends at a crossbar-sharing switch (the rest: the switch, above
/// the output's port and the input's local index, six bits each): its request is taken
/// once the instant's events are in, before the switches act (see `ask_sw`).
const X_ROUTE_SW: u64 = 3;
/// With `X_WAKE`: the sender is a crossbar-sharing switch, and the rest is the switch and
/// the port (six bits), not the channel.
const X_AT_SW: u64 = 1 << 61;

/// VC flags: the sender waits for a credit that is not on its way yet.
const XF_WAIT_CREDIT: u8 = 1;
/// The worm at this input holds its output and waits for a flit not yet sent here.
const XF_WAIT_FLIT: u8 = 2;
/// The channel ends at a host.
const XF_TO_HOST: u8 = 4;
/// The channel ends at a switch where worms may interleave (an output of several VCs, or
/// inputs sharing the crossbar: trains there need the switch's `routing` bits and the
/// routed heads' VCs), or at one whose inputs share the crossbar (`XSw::xbar`): so routing
/// a head there need not read the switch's record first.
const XF_WATCHED: u8 = 8;
const XF_XBAR: u8 = 16;

/// Input VC states: no packet at the front; a packet there (its head being routed, waiting
/// for an output VC, or its worm holding one: the switch's `routing` and `active` bits
/// say which, where anything reads it).
const XS_IDLE: u8 = 0;
const XS_BUSY: u8 = 1;

/// An output VC whose last tail has been sent but may not have passed (see `free_at`).
const HELD_X: u32 = u32::MAX - 1;

/// See [`Express::ready`].
enum Ready {
    Go(u32),
    At(Time),
    Not,
}

/// The requesters `r` (bits of local input indices) after `last`, the one granted last
/// (`u8::MAX`: none yet): where a round-robin scan starts.
#[inline(always)]
fn after_last(r: u64, last: u8) -> u64 {
    if last >= 63 {
        0
    } else {
        r & (u64::MAX << (last + 1))
    }
}

/// One VC: the sender's side (output) and the receiver's (input buffer).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct XVc {
    /// As an output, with owner `HELD_X`: the start of the last tail sent; the VC is free
    /// for another worm after it (and at it, once the instant's send phase is over).
    free_at: Time,
    /// As an input: when the last tail left (a head behind it is at the front from then);
    /// while its head is being routed at a switch where worms may interleave, when the
    /// head's router delay ends.
    front_at: Time,
    /// No credit of slots `cr..hd` lands later than this: once it has passed, the sender
    /// takes them all without reading the slots.
    cr_last: Time,
    /// As an output: the input VC whose worm holds it, `HELD_X`, or `NONE`.
    owner: u32,
    /// As an input: the receiving node.
    node: u32,
    /// The ring: slots `cr..hd` hold the landing times of credits on their way back,
    /// `hd..tl` the buffered flits with their arrival times.
    hd: u32,
    tl: u32,
    cr: u32,
    buf: u32,
    mask: u16,
    cap: u16,
    prof: u8,
    in_port: u8,
    state: u8,
    flags: u8,
    /// As a switch input: its index among the switch's inputs, and the first and number
    /// of its channel's VCs there (the inputs that share its crossbar input).
    local: u8,
    sib0: u8,
    sibn: u8,
    /// The port of the output its routed head asks for, and the admissible VCs there.
    port: u8,
    lo: u8,
    hi: u8,
}

const _: () = assert!(std::mem::size_of::<XVc>() == 64);

impl XVc {
    /// The switch's inputs (bits) that share this one's crossbar input, itself included.
    #[inline(always)]
    fn sib(&self) -> u64 {
        (u64::MAX >> (64 - self.sibn as u32)) << self.sib0
    }
}

/// One channel: its requesters (bits of the sending switch's local input indices), the
/// time of the pending wake-up of its sender, when its transmitter is free, its sending
/// node and port, its first VC and VCs, which of them a worm holds and which a tail may
/// not have passed (as bits: so that the channel's VCs are read only where they matter),
/// the last VC that sent and the last requester granted; and what the general engine's
/// `Chan` keeps of it for the results (copied back at the end of the run): its time busy
/// in the window and its last train (`busy` and these give when it started).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct XLink {
    req: u64,
    wake_at: Time,
    busy: Time,
    used: Time,
    /// The latest `free_at` of the VCs in `held` (none of them matters after it).
    held_until: Time,
    src: u32,
    vc_base: u32,
    /// VCs (bits) whose owner is an input VC.
    owned: u32,
    /// VCs (bits) whose owner is `HELD_X`, perhaps among others whose tail has passed.
    held: u32,
    src_port: u8,
    nvc: u8,
    rr: u8,
    va_rr: u8,
    tr_k: u8,
    mid: bool,
    from_host: bool,
}

const _: () = assert!(std::mem::size_of::<XLink>() == 64);

/// One switch: what it has to do at this instant, and (copied from its `Sw`, so that one
/// cache line serves the switch) its layout and timing.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct XSw {
    todo: u64,
    routing: u64,
    /// Inputs whose head waits for its output or whose worm holds one.
    active: u64,
    /// The instant it was last listed in `dirty_sw`.
    dirty_at: Time,
    port_base: u32,
    in_base: u32,
    /// Its timing, in `Express::swt`.
    prof: u32,
    n_ports: u8,
    /// Inputs share the crossbar: the outputs act in the rotating order of `eval_switch`
    /// (else each output acts on its own, in any order).
    xbar: bool,
}

const _: () = assert!(std::mem::size_of::<XSw>() == 64);

/// A switch timing: its allocation period and its crossbar speed-up. (Its router delay is
/// in the timing of the channels into it, `Timing::router_delay`.)
#[derive(Clone, Copy, Debug, PartialEq)]
struct XSwT {
    sa_period: Time,
    speedup: u32,
}

impl XSwT {
    /// How long a flit of unit time `u` holds its crossbar input (`Sw::xbar_time`).
    #[inline(always)]
    fn xbar_time(&self, u: Time) -> Time {
        if self.speedup == 1 {
            u
        } else {
            u / self.speedup as Time
        }
    }
}

/// The express engine's state beside the `Sim` it runs for.
pub(crate) struct Express {
    v: Arr<XVc>,
    /// Per VC, its channel.
    vch: Arr<u32>,
    /// Per channel, its VCs and allocation (see [`XLink`]).
    ln: Arr<XLink>,
    /// Per switch, its ports with something to do at this instant, and its inputs whose
    /// head is being routed (bits of local input indices).
    sw: Arr<XSw>,
    /// The switch timings (a few).
    swt: Arr<XSwT>,
    /// Per switch port (`Sw::port_base + p`): when its crossbar input is free.
    xbar_free: Arr<Time>,
    /// Per channel (this engine's numbering, see [`Express::new`]), the general engine's
    /// channel (`NONE` for a switch port without an output); per host, its channel; per VC,
    /// the general engine's VC.
    csim: Arr<u32>,
    hinj: Arr<u32>,
    vsim: Arr<u32>,
    dor: Dor,
    /// The rotation of the last crossbar switch evaluated: at this instant, for this period
    /// and this many ports, the output to start at (switches alike share it).
    rot: (Time, Time, u32, u32),
    /// Channels whose sender has something to do at this instant (a host, or a switch
    /// whose inputs do not share the crossbar), with the instant each was last listed, and
    /// crossbar-sharing switches that have.
    dirty: Vec<u32>,
    dirty_at: Arr<Time>,
    dirty_sw: Vec<u32>,
    /// The `X_ROUTE_SW` events of this instant.
    asks: Vec<u64>,
}

/// Why a run cannot go on the express engine (`None`: it can).
pub(crate) fn ineligible(sim: &Sim) -> Option<&'static str> {
    let spec = sim.spec;
    let p = &spec.params;
    let fab = sim.fab;
    if !p.express {
        return Some("sim.express = false");
    }
    if p.check || !p.trains || sim.reverse_order {
        return Some("invariant checks, the flit-by-flit path or a reversed event order");
    }
    let Routing::Dor(d) = sim.routing else {
        return Some("routing other than dimension order");
    };
    let crate::fabric::Shape::Cube { wrap, .. } = &fab.shape else {
        return Some("a fabric other than a mesh or torus");
    };
    if *wrap && !d.dateline() {
        return Some("a torus without datelines (it may deadlock)");
    }
    if fab.stage_base != fab.switches {
        return Some("output buffers");
    }
    if !sim.fail_at.is_empty()
        || sim.tok.iter().any(|t| t.on)
        || sim.host_params.iter().any(|h| *h != HostParams::default())
        || sim
            .hosts
            .iter()
            .any(|h| h.mem_cap != u64::MAX || !h.outbox.is_empty())
    {
        return Some("failures, tokens, host costs or host memory");
    }
    if sim.timing.len() > 255 {
        return Some("too many channel timings");
    }
    if fab.vc_choice != crate::fabric::VcChoice::Lowest {
        return Some("VCs chosen round robin (switch.vc_choice = \"round-robin\")");
    }
    if fab.vc_reuse != 0 {
        return Some("a VC-reuse delay (switch.vc_reuse_delay)");
    }
    if fab.sw_allocator != crate::fabric::SwAllocator::Greedy {
        return Some("a separable switch allocator (switch.allocator)");
    }
    for (ci, ch) in fab.channels.iter().enumerate() {
        let lp = &ch.params;
        if sim.chans[ci].nvc > 32 {
            return Some("channels of more than 32 VCs");
        }
        if lp.clock.is_some() {
            return Some("channels clocked at a period that is not whole picoseconds");
        }
        if !sim.chans[ci].credit || lp.delete_header || lp.buffer > 1 << 15 || lp.flit_time == 0 {
            return Some("channels without credits, with header deletion or of buffers over 32,768 flits");
        }
    }
    for (s, sp) in fab.switch_params[..fab.switches as usize].iter().enumerate() {
        if sp.mode != SwitchMode::Wormhole
            || sp.release != crate::fabric::VcRelease::Tail
            || sp.arbitration != Arbitration::RoundRobin
            || sp.router_delay == 0
        {
            return Some(
                "switches other than wormhole ones with round-robin arbitration, a router delay and VCs released with the tail",
            );
        }
        if sim.sws[s].n_in > 64 || sim.sws[s].n_ports > 64 {
            return Some("switches of more than 64 ports or input VCs");
        }
    }
    None
}

impl Express {
    /// Builds the engine's records for `sim`, in its own numbering, chosen so that an id
    /// follows from what names it without a table:
    /// - a VC into a switch is `Sw::in_base` + its index among the switch's inputs (the
    ///   general engine's `sw_in` index), so the inputs of a switch and the VCs of a channel
    ///   sit side by side; VCs into hosts follow, in the general engine's order;
    /// - a channel out of a switch is `Sw::port_base` + its port (the general engine's port
    ///   index); channels out of hosts follow.
    fn new(sim: &Sim) -> Express {
        let fab = sim.fab;
        let Routing::Dor(dor) = sim.routing else {
            unreachable!("checked by `ineligible`")
        };
        let nv = sim.vcs.len();
        let nsw = sim.sws.len();
        // The numbering: general engine's VC or channel -> this engine's, and back.
        let mut vx = vec![NONE; nv];
        let mut next = sim.sw_in.len() as u32;
        for (gv, g) in sim.vcs.iter().enumerate() {
            vx[gv] = if g.local == NONE {
                next += 1;
                next - 1
            } else {
                sim.sws[g.node as usize].in_base + g.local
            };
        }
        let mut vsim = vec![NONE; nv];
        for (gv, &x) in vx.iter().enumerate() {
            vsim[x as usize] = gv as u32;
        }
        let mut cx = vec![NONE; sim.chans.len()];
        let mut next = sim.ports.len() as u32;
        for (ci, c) in sim.chans.iter().enumerate() {
            cx[ci] = if (c.src as usize) < nsw {
                sim.sws[c.src as usize].port_base + c.src_port as u32
            } else {
                next += 1;
                next - 1
            };
        }
        let mut csim = vec![NONE; next as usize];
        for (ci, &x) in cx.iter().enumerate() {
            csim[x as usize] = ci as u32;
        }
        let watched: Vec<bool> = sim
            .sws
            .iter()
            .map(|sw| {
                let ports = sw.port_base as usize..(sw.port_base + sw.n_ports) as usize;
                sw.xbar || sim.ports.0[ports].iter().any(|p| p.nvc > 1)
            })
            .collect();
        let mut v = Vec::with_capacity(nv);
        let mut vch = Vec::with_capacity(nv);
        for &gv in vsim.iter() {
            let g = &sim.vcs[gv as usize];
            let c = &fab.channels[g.chan as usize];
            let mut flags = 0;
            if !fab.is_switch(c.dst) {
                flags |= XF_TO_HOST;
            } else {
                if watched[c.dst.idx()] {
                    flags |= XF_WATCHED;
                }
                if sim.sws[c.dst.idx()].xbar {
                    flags |= XF_XBAR;
                }
            }
            v.push(XVc {
                free_at: 0,
                front_at: 0,
                cr_last: 0,
                owner: NONE,
                node: g.node,
                hd: 0,
                tl: 0,
                cr: 0,
                buf: g.buf,
                mask: g.mask as u16,
                cap: c.params.buffer as u16,
                prof: sim.chans[g.chan as usize].prof as u8,
                in_port: c.dst_port as u8,
                state: XS_IDLE,
                flags,
                local: if g.local == NONE { 0 } else { g.local as u8 },
                sib0: if g.local == NONE {
                    0
                } else {
                    (g.local - g.vc as u32) as u8
                },
                sibn: sim.chans[g.chan as usize].nvc,
                port: 0,
                lo: 0,
                hi: 0,
            });
            vch.push(cx[g.chan as usize]);
        }
        let mut swt: Vec<XSwT> = Vec::new();
        let mut sw_prof = |sw: &Sw| {
            let t = XSwT {
                sa_period: sw.sa_period,
                speedup: sw.speedup,
            };
            match swt.iter().position(|u| *u == t) {
                Some(p) => p as u32,
                None => {
                    swt.push(t);
                    swt.len() as u32 - 1
                }
            }
        };
        // A switch port without an output (never named) has the record of a channel with no
        // VCs from nowhere.
        let gap = XLink {
            req: 0,
            wake_at: Time::MAX,
            busy: 0,
            used: 0,
            held_until: 0,
            owned: 0,
            held: 0,
            tr_k: 0,
            mid: false,
            from_host: false,
            src: NONE,
            src_port: 0,
            vc_base: NONE,
            nvc: 0,
            rr: 0,
            va_rr: u8::MAX,
        };
        let ln = csim
            .iter()
            .map(|&ci| {
                let Some(c) = sim.chans.get(ci as usize) else {
                    return gap;
                };
                let base = vx[c.vc_base as usize];
                debug_assert!((0..c.nvc as u32).all(|w| vx[(c.vc_base + w) as usize] == base + w));
                XLink {
                    from_host: !fab.is_switch(crate::fabric::NodeId(c.src)),
                    src: c.src,
                    src_port: c.src_port as u8,
                    vc_base: base,
                    nvc: c.nvc,
                    rr: c.rr,
                    ..gap
                }
            })
            .collect();
        Express {
            v: Arr(v),
            vch: Arr(vch),
            ln: Arr(ln),
            sw: Arr((0..nsw)
                .map(|s| {
                    let sw = &sim.sws[s];
                    XSw {
                        todo: 0,
                        routing: 0,
                        active: 0,
                        dirty_at: Time::MAX,
                        port_base: sw.port_base,
                        in_base: sw.in_base,
                        prof: sw_prof(sw),
                        n_ports: sw.n_ports as u8,
                        xbar: sw.xbar,
                    }
                })
                .collect()),
            swt: Arr(swt),
            xbar_free: Arr(vec![0; sim.ports.len()]),
            hinj: Arr(sim.hosts.iter().map(|h| cx[h.inj as usize]).collect()),
            dirty_at: Arr(vec![Time::MAX; csim.len()]),
            csim: Arr(csim),
            vsim: Arr(vsim),
            dor: dor.clone(),
            rot: (Time::MAX, 0, 0, 0),
            dirty: Vec::new(),
            dirty_sw: Vec::new(),
            asks: Vec::new(),
        }
    }

    /// Channel `c`'s sender (switch `s`, or a host) has something to do now: the channel
    /// is listed, or, where the switch's inputs share the crossbar, the switch with its
    /// port `port`.
    #[inline(always)]
    fn mark(&mut self, c: u32, s: u32, port: u8, now: Time) {
        if (s as usize) < self.sw.len() && self.sw[s as usize].xbar {
            self.mark_sw(s, 1 << port, now);
        } else if self.dirty_at[c as usize] != now {
            self.dirty_at[c as usize] = now;
            self.dirty.push(c);
        }
    }

    /// Crossbar-sharing switch `s` has something to do now: on its ports `todo` (bits), or
    /// (none) for a head asking for its output (`asks`).
    #[inline(always)]
    fn mark_sw(&mut self, s: u32, todo: u64, now: Time) {
        let w = &mut self.sw[s as usize];
        w.todo |= todo;
        if w.dirty_at != now {
            w.dirty_at = now;
            self.dirty_sw.push(s);
        }
    }

    /// Wakes the sender of channel `c` at `t` (now at the earliest; once per distinct time).
    /// (A crossbar-sharing switch is named in the event with its port, so that the wake-up
    /// does not read the channel again.)
    #[inline(always)]
    fn wake(&mut self, sim: &mut Sim, c: u32, t: Time) {
        let l = &mut self.ln[c as usize];
        if l.wake_at != t {
            l.wake_at = t;
            let (s, port) = (l.src, l.src_port);
            let e = if (s as usize) < self.sw.len() && self.sw[s as usize].xbar {
                X_AT_SW | (s as u64) << 6 | port as u64
            } else {
                c as u64
            };
            sim.q.push_at(sim.now, t, (X_WAKE << 62) | e);
        }
    }

    /// Of the next `max` flits on output VC `o`, flit j starting at now + j·ft, how many
    /// have a credit by their start (the credits held now, then those on their way back, in
    /// the order they land), and how many of those are held now; the credits landed by now
    /// are collected. If fewer than `max`, the sender is woken when the next one lands (or,
    /// if none is on its way, when the receiver next frees a slot).
    #[inline(always)]
    fn credits_for(&mut self, sim: &mut Sim, o: u32, max: u32, ft: Time) -> (u32, u32) {
        let now = sim.now;
        let x = &mut self.v[o as usize];
        let mask = x.mask as u32;
        if now >= x.cr_last {
            x.cr = x.hd;
        } else {
            while x.cr != x.hd && sim.ring[(x.buf + (x.cr & mask)) as usize].time <= now {
                x.cr = x.cr.wrapping_add(1);
            }
        }
        let held = x.cap as u32 - x.tl.wrapping_sub(x.cr);
        if held >= max {
            return (max, held);
        }
        let mut n = held;
        loop {
            let p = x.cr.wrapping_add(n - held);
            if p == x.hd {
                x.flags |= XF_WAIT_CREDIT;
                return (n, held);
            }
            let tc = sim.ring[(x.buf + (p & mask)) as usize].time;
            if tc > now + n as Time * ft {
                let c = self.vch[o as usize];
                self.wake(sim, c, tc);
                return (n, held);
            }
            n += 1;
            if n == max {
                return (n, held);
            }
        }
    }

    /// The head at the front of switch input VC `i` (from `front`, now or later) is routed
    /// now, and asks for its output a router delay after `front` (`class`: the delay class
    /// of that event from now, if `front` is the landing of a train sent now).
    #[inline(always)]
    fn start_routing(&mut self, sim: &mut Sim, i: u32, front: Time, class: Option<Class>) {
        let iu = i as usize;
        let x = &self.v[iu];
        let s = x.node;
        let dst = sim.ring[(x.buf + (x.hd & x.mask as u32)) as usize].dst & DST_MASK;
        let r = sim.timing[x.prof as usize].router_delay;
        let (port, lo, hi) = self
            .dor
            .route_port(s, x.in_port as u16, x.local - x.sib0, dst)
            .expect("a cube routes every host");
        let x = &mut self.v[iu];
        x.state = XS_BUSY;
        (x.port, x.lo, x.hi) = (port as u8, lo, hi);
        let local = x.local;
        if x.flags & XF_WATCHED != 0 {
            // (The time the last tail left is not needed again until the next leaves.)
            x.front_at = front + r;
            self.sw[s as usize].routing |= 1 << local;
        }
        let e = if x.flags & XF_XBAR != 0 {
            (X_ROUTE_SW << 62) | (s as u64) << 12 | (port as u64) << 6 | local as u64
        } else {
            (X_ROUTE << 62) | i as u64
        };
        match class {
            Some(cl) => sim.q.push(cl, sim.now, e),
            None => sim.q.push_at(sim.now, front + r, e),
        }
    }

    /// A head's router delay is over at input VC `i`: it asks for its output.
    #[inline(always)]
    fn route_done(&mut self, sim: &mut Sim, i: u32) {
        let x = &self.v[i as usize];
        let (s, local, port) = (x.node, x.local, x.port);
        let out = self.ask(s, local, port);
        self.mark(out, s, port, sim.now);
    }

    /// The head at input `local` of switch `s` asks for the output on port `port`: returns
    /// the output's channel.
    #[inline(always)]
    fn ask(&mut self, s: u32, local: u8, port: u8) -> u32 {
        let bit = 1u64 << local;
        let w = &mut self.sw[s as usize];
        let out = w.port_base + port as u32;
        w.routing &= !bit;
        w.active |= bit;
        self.ln[out as usize].req |= bit;
        out
    }

    /// The switch, the output's port and the input an `X_ROUTE_SW` event `e` names.
    #[inline(always)]
    fn route_sw_event(e: u64) -> (u32, u8, u8) {
        (
            ((e & (u64::MAX >> 2)) >> 12) as u32,
            ((e >> 6) & 63) as u8,
            (e & 63) as u8,
        )
    }

    /// [`Self::ask`] at a crossbar-sharing switch, from its `X_ROUTE_SW` event `e`: the
    /// input's record is not read (the instant's requests are all taken at once, while
    /// their channels' records load side by side).
    #[inline(always)]
    fn ask_sw(&mut self, e: u64) {
        let (s, port, local) = Express::route_sw_event(e);
        self.ask(s, local, port);
        self.sw[s as usize].todo |= 1 << port;
    }

    /// `k` flits were just written into the buffer of switch input VC `i`, the first
    /// landing at `a0`: a head at an empty input is at the front when it lands (or when the
    /// tail before it has left), and a worm waiting for its next flit goes on when it lands.
    #[inline(always)]
    fn landed(&mut self, sim: &mut Sim, i: u32, a0: Time, head_class: Class) {
        let x = &mut self.v[i as usize];
        if x.state == XS_IDLE {
            // (Only a head comes to an input with no packet at its front.)
            if x.front_at <= a0 {
                self.start_routing(sim, i, a0, Some(head_class));
            } else {
                let f = x.front_at;
                self.start_routing(sim, i, f, None);
            }
        } else if x.flags & XF_WAIT_FLIT != 0 {
            x.flags &= !XF_WAIT_FLIT;
            let (s, port) = (x.node, x.port);
            let out = self.sw[s as usize].port_base + port as u32;
            self.wake(sim, out, a0);
        }
    }

    /// Switch `s` acts at this instant, on each port something happened to (from the
    /// rotating first one where inputs share the crossbar): grants, then sends.
    fn eval_switch(&mut self, sim: &mut Sim, s: u32) {
        let sw = &mut self.sw[s as usize];
        let mut todo = std::mem::take(&mut sw.todo);
        let port_base = sw.port_base;
        // Outputs compete for shared crossbar inputs: start at a rotating output (as the
        // general engine's send phase does), going once round.
        let (n, period) = (sw.n_ports as u32, self.swt[sw.prof as usize].sa_period);
        let (at, per, nn, mut start) = self.rot;
        if at != sim.now || per != period || nn != n {
            start = ((sim.now / period) % n as Time) as u32;
            self.rot = (sim.now, period, n, start);
        }
        let mut rest = todo & !(u64::MAX << start);
        todo &= u64::MAX << start;
        loop {
            if todo == 0 {
                if rest == 0 {
                    return;
                }
                (todo, rest) = (rest, 0);
            }
            let p = todo.trailing_zeros();
            todo &= todo - 1;
            // (Only ports with an output are marked.)
            self.eval_port(sim, s, port_base + p);
        }
    }

    /// Output channel `c` of switch `s` acts at this instant: grants, then sends.
    #[inline(always)]
    fn eval_port(&mut self, sim: &mut Sim, s: u32, c: u32) {
        if self.ln[c as usize].nvc == 1 && !self.sw[s as usize].xbar {
            self.serve_one(sim, s, c);
            return;
        }
        if self.ln[c as usize].req != 0 {
            self.allocate(sim, s, c, true);
        }
        self.try_send(sim, s, c);
        // A tail that leaves now frees its VC for a head that waits, after the send; the
        // channel, which sent that tail, is free for the new worm when the tail is out.
        if self.ln[c as usize].req != 0 && self.released_now(c, sim.now) && self.allocate(sim, s, c, false) {
            self.try_send(sim, s, c);
        }
    }

    /// [`Self::eval_port`] for an output of one VC whose inputs do not share the crossbar:
    /// grant it (granting before or after the send is the same here: a VC whose tail
    /// leaves now goes to a worm that cannot send before the tail is out), and send.
    #[inline(always)]
    fn serve_one(&mut self, sim: &mut Sim, s: u32, c: u32) {
        let now = sim.now;
        let cu = c as usize;
        let o = self.ln[cu].vc_base;
        let ou = o as usize;
        loop {
            let x = &mut self.v[ou];
            if x.owner >= HELD_X {
                let r = self.ln[cu].req;
                if r == 0 {
                    return;
                }
                if x.owner == HELD_X && x.free_at > now {
                    let f = x.free_at;
                    self.wake(sim, c, f);
                    return;
                }
                // Round robin: the first input asking after the last one granted.
                let after = after_last(r, self.ln[cu].va_rr);
                let l = if after != 0 {
                    after.trailing_zeros()
                } else {
                    r.trailing_zeros()
                };
                let l_ = &mut self.ln[cu];
                l_.req &= !(1 << l);
                l_.va_rr = l as u8;
                (l_.owned, l_.held) = (1, 0);
                let i = self.sw[s as usize].in_base + l;
                self.v[ou].owner = i;
            }
            let busy = self.ln[cu].busy;
            if busy > now {
                self.wake(sim, c, busy);
                return;
            }
            let i = self.v[ou].owner;
            let held = match self.ready(sim, o, i) {
                Ready::Go(held) => held,
                Ready::At(t) => {
                    self.wake(sim, c, t);
                    return;
                }
                Ready::Not => return,
            };
            if !self.send(sim, s, c, o, i, held) || self.ln[cu].req == 0 {
                return;
            }
        }
    }

    /// What stands between the worm at input VC `i`, holding output VC `o`, and its next
    /// flit leaving now: nothing (`Go`, with the credits held), that flit's landing (`At`),
    /// or a flit not yet sent here (it wakes the output as it lands) or a credit (the
    /// sender is woken for it): `Not`.
    #[inline(always)]
    fn ready(&mut self, sim: &mut Sim, o: u32, i: u32) -> Ready {
        let x = &mut self.v[i as usize];
        if x.hd == x.tl {
            x.flags |= XF_WAIT_FLIT;
            return Ready::Not;
        }
        let front = sim.ring[(x.buf + (x.hd & x.mask as u32)) as usize].time;
        if front > sim.now {
            return Ready::At(front);
        }
        let ft = sim.timing[self.v[o as usize].prof as usize].flit_time;
        match self.credits_for(sim, o, 1, ft) {
            (0, _) => Ready::Not,
            (_, held) => Ready::Go(held),
        }
    }

    /// Whether a VC of channel `c` had its last tail leave at `now`.
    #[inline(always)]
    fn released_now(&self, c: u32, now: Time) -> bool {
        let l = &self.ln[c as usize];
        let (base, mut held) = (l.vc_base, l.held);
        while held != 0 {
            let x = &self.v[(base + held.trailing_zeros()) as usize];
            if x.owner == HELD_X && x.free_at == now {
                return true;
            }
            held &= held - 1;
        }
        false
    }

    /// Grants free VCs of output channel `c` of switch `s` to the heads asking for it, in
    /// round-robin order from the input after the last one granted. A VC whose last tail
    /// left at this instant is free only after the send. Returns whether it granted one.
    #[inline(always)]
    fn allocate(&mut self, sim: &mut Sim, s: u32, c: u32, before_send: bool) -> bool {
        let now = sim.now;
        let cu = c as usize;
        let l = &mut self.ln[cu];
        let (base, nvc) = (l.vc_base, l.nvc as u32);
        // The free VCs, as bits. One held by a tail that has not passed is free for the
        // heads asking once it has: they look at it again then.
        if l.held_until < now {
            l.held = 0;
        }
        let (mut held, mut next) = (l.held, Time::MAX);
        let mut free = (u64::MAX >> (64 - nvc)) & !(l.owned as u64) & !(held as u64);
        let mut hb = held;
        while hb != 0 {
            let vv = hb.trailing_zeros();
            hb &= hb - 1;
            let x = &mut self.v[(base + vv) as usize];
            let f = x.free_at;
            if f < now || (!before_send && f == now) {
                x.owner = NONE;
                held &= !(1 << vv);
                free |= 1 << vv;
            } else if f > now {
                next = next.min(f);
            }
        }
        self.ln[cu].held = held;
        if next != Time::MAX {
            self.wake(sim, c, next);
        }
        if free == 0 {
            return false;
        }
        // The heads asking, in round-robin order from the one after the last granted (one
        // pass: a head passed over finds no more free VCs after a grant than before).
        let in_base = self.sw[s as usize].in_base;
        let r = self.ln[cu].req;
        let after = after_last(r, self.ln[cu].va_rr);
        let (mut bits, mut rest) = (after, r & !after);
        let mut granted = false;
        loop {
            if bits == 0 {
                if rest == 0 {
                    return granted;
                }
                (bits, rest) = (rest, 0);
            }
            let l = bits.trailing_zeros();
            bits &= bits - 1;
            let i = in_base + l;
            let y = &self.v[i as usize];
            let range = (u64::MAX >> (63 - y.hi as u32)) & (u64::MAX << y.lo);
            let ok = free & range;
            if ok == 0 {
                continue;
            }
            let vv = ok.trailing_zeros();
            free &= !(1 << vv);
            granted = true;
            let o = base + vv;
            self.v[o as usize].owner = i;
            let l_ = &mut self.ln[cu];
            l_.req &= !(1 << l);
            l_.va_rr = l as u8;
            l_.owned |= 1 << vv;
            if free == 0 {
                return true;
            }
        }
    }

    /// Whether some worm holding a VC of channel `c` has a flit in its buffer.
    #[inline(always)]
    fn has_work(&self, c: u32) -> bool {
        let l = &self.ln[c as usize];
        let (base, mut owned) = (l.vc_base, l.owned);
        while owned != 0 {
            let i = self.v[(base + owned.trailing_zeros()) as usize].owner;
            let x = &self.v[i as usize];
            if x.hd != x.tl {
                return true;
            }
            owned &= owned - 1;
        }
        false
    }

    /// Output channel `c` of switch `s` sends what it can at this instant: from its VCs in
    /// round-robin order after the last that sent, the first whose worm has a flit in, a
    /// credit and its crossbar input free.
    #[inline(always)]
    fn try_send(&mut self, sim: &mut Sim, s: u32, c: u32) {
        let now = sim.now;
        let cu = c as usize;
        let (base, nvc) = (self.ln[cu].vc_base, self.ln[cu].nvc as u32);
        let busy = self.ln[cu].busy;
        if busy > now {
            if self.has_work(c) {
                self.wake(sim, c, busy);
            }
            return;
        }
        let sw = &self.sw[s as usize];
        let (xbar, port_base) = (sw.xbar, sw.port_base);
        let mut wait = Time::MAX;
        let owned = self.ln[cu].owned;
        if owned == 0 {
            return;
        }
        let mut vv = self.ln[cu].rr as u32;
        for _ in 0..nvc {
            vv = if vv + 1 >= nvc { 0 } else { vv + 1 };
            if owned & (1 << vv) == 0 {
                continue;
            }
            let o = base + vv;
            let i = self.v[o as usize].owner;
            let held = match self.ready(sim, o, i) {
                Ready::Go(held) => held,
                Ready::At(t) => {
                    wait = wait.min(t);
                    continue;
                }
                Ready::Not => continue,
            };
            let in_port = port_base + self.v[i as usize].in_port as u32;
            if xbar && self.xbar_free[in_port as usize] > now {
                wait = wait.min(self.xbar_free[in_port as usize]);
                continue;
            }
            self.send(sim, s, c, o, i, held);
            self.ln[cu].rr = vv as u8;
            // Another VC's worm goes on when the channel is free. (With one VC, the train
            // stopped for a reason that wakes the channel when it is gone.)
            if nvc > 1 && self.has_work(c) {
                let b = self.ln[cu].busy;
                self.wake(sim, c, b);
            }
            return;
        }
        if wait != Time::MAX {
            self.wake(sim, c, wait);
        }
    }

    /// The latest time before which nothing can come between the flits of a worm from
    /// input VC `i` on output VC `o` of channel `c` at switch `s`: another worm on the
    /// channel or on the crossbar input, or a head that may come to be one. (`now` + one
    /// flit time where one may already.)
    #[inline(never)]
    fn horizon(&self, sim: &Sim, s: u32, c: u32, o: u32, i: u32, ft: Time) -> Time {
        let now = sim.now;
        let sw = &self.sw[s as usize];
        let one = now + ft;
        // A head not yet at the front of its input here (not landed, or behind a tail that
        // leaves now or later) asks for an output a router delay from now at the earliest.
        // (The router delay here is in the timing of every channel into this switch.)
        let mut h = now + sim.timing[self.v[i as usize].prof as usize].router_delay;
        let cu = c as usize;
        let (base, nvc) = (self.ln[cu].vc_base, self.ln[cu].nvc as u32);
        let vo = o - base;
        let l = &self.ln[cu];
        if nvc > 1 {
            if l.owned & !(1 << vo) != 0 {
                // Another worm on the channel.
                return one;
            }
            if l.req != 0 && l.held_until >= now {
                // A head waiting for the channel may have another VC when it frees (after
                // the send at its instant): one held by a tail that has not passed. (Not a
                // free one: allocation, just before, would have granted it to a head that
                // may have it. Not an owned one: there is none.)
                let mut held = l.held & !(1 << vo);
                while held != 0 {
                    let w = held.trailing_zeros();
                    held &= held - 1;
                    h = h.min(self.v[(base + w) as usize].free_at.max(now) + ft);
                }
            }
        }
        let (sib, me) = (self.v[i as usize].sib(), 1u64 << self.v[i as usize].local);
        if sw.xbar && sw.active & sib & !me != 0 {
            // Another VC of the same input, waiting or holding, wants the crossbar input.
            return one;
        }
        // Heads being routed here that will ask for another VC of the channel, or for the
        // crossbar input.
        let mut bits = sw.routing;
        let port = c - sw.port_base;
        while bits != 0 {
            let l = bits.trailing_zeros();
            bits &= bits - 1;
            let y = &self.v[(sw.in_base + l) as usize];
            let other_vc = y.port as u32 == port && (y.lo as u32 != vo || y.hi as u32 != vo);
            if other_vc || (sw.xbar && sib & (1 << l) != 0) {
                // (Its router delay's end.)
                h = h.min(y.front_at);
            }
        }
        h.max(one)
    }

    /// Sends the worm at input VC `i` on output VC `o` (channel `c`) from now: as a train
    /// of the flits that are in the buffer and have credits at their flit times, up to its
    /// tail, or to where something could come between (`held`: credits held now). Returns
    /// whether its tail went.
    #[inline(always)]
    fn send(&mut self, sim: &mut Sim, s: u32, c: u32, o: u32, i: u32, held: u32) -> bool {
        let now = sim.now;
        let x = &self.v[i as usize];
        let (hd, avail, ibuf, imask) = (x.hd, x.tl.wrapping_sub(x.hd), x.buf, x.mask as u32);
        let ft = sim.timing[self.v[o as usize].prof as usize].flit_time;
        let mut lim = avail.min(MAX_TRAIN);
        let contended = self.ln[c as usize].nvc > 1 || self.sw[s as usize].xbar;
        let mut cut = false;
        if contended && lim > 1 {
            // Flit j may go if it starts before the horizon: j·ft < h - now.
            let room = self.horizon(sim, s, c, o, i, ft) - now;
            if room <= (lim - 1) as Time * ft {
                lim = room.div_ceil(ft) as u32;
                cut = true;
            }
        }
        // The worm's flits in the buffer by their flit times, up to its tail.
        let (mut kf, mut tail, mut late) = (0, false, Time::MAX);
        while kf < lim {
            let slot = &sim.ring[(ibuf + (hd.wrapping_add(kf) & imask)) as usize];
            if slot.time > now + kf as Time * ft {
                late = slot.time;
                break;
            }
            kf += 1;
            if slot.flit & TAIL != 0 {
                tail = true;
                break;
            }
        }
        let (k, _) = if kf > held {
            self.credits_for(sim, o, kf, ft)
        } else {
            (kf, held)
        };
        if k < kf {
            tail = false;
        } else if !tail {
            if late != Time::MAX {
                self.wake(sim, c, late);
            } else if kf == avail && !cut {
                self.v[i as usize].flags |= XF_WAIT_FLIT;
            } else {
                self.wake(sim, c, now + k as Time * ft);
            }
        }
        self.move_train(sim, s, c, o, i, k, tail, held);
        tail
    }

    /// Moves `k` flits of the worm at input VC `i` onto output VC `o` of channel `c`, flit j
    /// leaving at now + j·flit time (`tail`: the last is the worm's tail; `held`: credits
    /// the sender held for them, the rest are taken from those on their way).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn move_train(&mut self, sim: &mut Sim, s: u32, c: u32, o: u32, i: u32, k: u32, tail: bool, held: u32) {
        let now = sim.now;
        let (oprof, obuf, omask, otl, to_host) = {
            let x = &self.v[o as usize];
            (x.prof, x.buf, x.mask as u32, x.tl, x.flags & XF_TO_HOST != 0)
        };
        let (iprof, ibuf, imask, ihd, in_port) = {
            let x = &self.v[i as usize];
            (x.prof, x.buf, x.mask as u32, x.hd, x.in_port)
        };
        let tm = &sim.timing[oprof as usize];
        let (ft, tt, lat, ocd) = (tm.flit_time, tm.tail_time, tm.latency, tm.credit_delay);
        let head_class = if k == 1 && tail {
            tm.head_route_tail
        } else {
            tm.head_route
        };
        let in_cd = sim.timing[iprof as usize].credit_delay;
        // Flit j leaves at now + j·ft and lands a unit and the latency later (the tail's
        // unit its own).
        let a_last = now + (k - 1) as Time * ft + if tail { tt } else { ft } + lat;
        let mut host = usize::MAX;
        let (mut t, mut a) = (now, now + ft + lat);
        if to_host {
            for j in 0..k {
                if j + 1 == k {
                    a = a_last;
                }
                let ii = (ibuf + (ihd.wrapping_add(j) & imask)) as usize;
                let slot = sim.ring[ii];
                // It leaves input i: its credit starts back.
                sim.ring[ii].time = t + in_cd;
                let mut dst = slot.dst;
                if slot.flit & HEAD != 0 {
                    // One more switch crossed.
                    dst = self.hop(sim, dst, slot.flit);
                }
                // The host takes it as it lands: the slot holds its credit from then on.
                let io = (obuf + (otl.wrapping_add(j) & omask)) as usize;
                sim.ring[io] = Slot {
                    time: a + ocd,
                    flit: slot.flit,
                    dst,
                };
                self.host_land(sim, slot.flit, dst, a);
                host = (dst & DST_MASK) as usize;
                t += ft;
                a += ft;
            }
        } else {
            let ring = &mut sim.ring.0[..];
            for j in 0..k {
                let ii = (ibuf + (ihd.wrapping_add(j) & imask)) as usize;
                let from = at_mut(ring, ii);
                let slot = *from;
                // It leaves input i: its credit starts back.
                from.time = t + in_cd;
                let io = (obuf + (otl.wrapping_add(j) & omask)) as usize;
                *at_mut(ring, io) = Slot { time: a, ..slot };
                t += ft;
                a += ft;
            }
            // The last flit lands its own unit after it leaves; a head (only a train's
            // first flit can be one) has crossed one more switch.
            at_mut(ring, (obuf + (otl.wrapping_add(k - 1) & omask)) as usize).time = a_last;
            let first = *at_mut(ring, (obuf + (otl & omask)) as usize);
            if first.flit & HEAD != 0 {
                let dst = self.hop(sim, first.dst, first.flit);
                at_mut(&mut sim.ring.0[..], (obuf + (otl & omask)) as usize).dst = dst;
            }
        }
        let a = a_last;
        let last = now + (k - 1) as Time * ft;
        let sw = &self.sw[s as usize];
        if sw.xbar {
            let u = if tail { tt } else { ft };
            let port = sw.port_base + in_port as u32;
            self.xbar_free[port as usize] = last + self.swt[sw.prof as usize].xbar_time(u);
        }
        // Input i: the flits left, their credits are on their way.
        let x = &mut self.v[i as usize];
        x.hd = x.hd.wrapping_add(k);
        x.cr_last = x.cr_last.max(last + in_cd);
        if x.flags & XF_WAIT_CREDIT != 0 {
            x.flags &= !XF_WAIT_CREDIT;
            let up = self.vch[i as usize];
            self.wake(sim, up, now + in_cd);
        }
        if tail {
            self.sw[s as usize].active &= !(1 << self.v[i as usize].local);
            let x = &mut self.v[i as usize];
            x.front_at = last;
            if x.hd != x.tl {
                // The next packet's head is at the front now (or when it lands).
                let next = sim.ring[(x.buf + (x.hd & imask)) as usize].time;
                self.start_routing(sim, i, next.max(last), None);
            } else {
                x.state = XS_IDLE;
            }
        }
        // Output o: the credits taken, the flits in the receiver's buffer.
        let x = &mut self.v[o as usize];
        x.tl = x.tl.wrapping_add(k);
        x.cr = x.cr.wrapping_add(k.saturating_sub(held));
        if tail {
            x.owner = HELD_X;
            x.free_at = last;
            let l = &mut self.ln[c as usize];
            let bit = 1 << (o - l.vc_base);
            l.owned &= !bit;
            l.held |= bit;
            l.held_until = l.held_until.max(last);
            if last > now && self.ln[c as usize].req != 0 {
                // A head waits: the VC is free for it as the tail passes.
                self.wake(sim, c, last);
            }
        }
        if to_host {
            let x = &mut self.v[o as usize];
            x.hd = x.tl;
            x.cr_last = x.cr_last.max(a + ocd);
            if x.flags & XF_WAIT_CREDIT != 0 {
                // The train took the last credit: the host frees the first slot as it lands.
                x.flags &= !XF_WAIT_CREDIT;
                let first = now + if k == 1 && tail { tt } else { ft } + lat + ocd;
                self.wake(sim, c, first);
            }
            Express::host_train(sim, self.csim[c as usize], host, k, tail);
        } else {
            let a0 = now + if k == 1 && tail { tt } else { ft } + lat;
            self.landed(sim, o, a0, head_class);
        }
        self.commit(sim, c, k, tail, ft, tt);
    }

    /// Channel `c` carries `k` flits from now, back to back (`tail`: the last is a tail).
    #[inline(always)]
    fn commit(&mut self, sim: &mut Sim, c: u32, k: u32, tail: bool, ft: Time, tt: Time) {
        let now = sim.now;
        let last = if tail { tt } else { ft };
        let window = (sim.ms, sim.me);
        let l = &mut self.ln[c as usize];
        let last_start = now + (k - 1) as Time * ft;
        l.used += window_busy(window, now, k, ft, last);
        l.tr_k = k as u8;
        l.mid = !tail;
        l.busy = last_start + last;
        sim.c.flit_hops += k as u64;
        if l.from_host {
            sim.c.flits_injected += k as u64;
        }
    }

    /// A head's slot `dst` with one more switch crossed: the count rides in the slot's top
    /// eight bits; at 255 the packet record takes 256 and the slot starts again from 0, as in
    /// the general engine (a mesh more than 255 hops wide).
    #[inline(always)]
    fn hop(&self, sim: &mut Sim, dst: u32, flit: u32) -> u32 {
        let (next, carry) = dst.overflowing_add(1 << DST_BITS);
        if carry {
            Self::hops_256(sim, flit);
        }
        next
    }

    /// A head's 256th hop since its slot last counted from 0 ([`Self::hop`]).
    #[cold]
    #[inline(never)]
    fn hops_256(sim: &mut Sim, flit: u32) {
        sim.pkts[(flit & PID) as usize].hops += 256;
    }

    /// A flit just sent lands at its host at `a`: counted in the window, and a tail
    /// delivers its packet then.
    #[inline(always)]
    fn host_land(&mut self, sim: &mut Sim, flit: u32, dst: u32, a: Time) {
        let h = (dst & DST_MASK) as usize;
        if a >= sim.ms && a < sim.me {
            sim.c.flits_window[h] += 1;
            let b = sim.batch_of(a);
            sim.c.batches[b].flits += 1;
        }
        let pid = flit & PID;
        if flit & HEAD != 0 {
            sim.pkts[pid as usize].hops += (dst >> DST_BITS) as u16;
        }
        if flit & TAIL != 0 {
            sim.q.push_at(sim.now, a, (X_DELIVER << 62) | pid as u64);
        }
    }

    /// A train of `k` flits just sent on channel `c` (the general engine's number) into
    /// host `h`: kept as the general engine keeps it, for the end-of-run count of flits
    /// that land after the end.
    #[inline(always)]
    fn host_train(sim: &mut Sim, c: u32, h: usize, k: u32, tail: bool) {
        let tm = sim.tm(c);
        let a0 = sim.now
            + if k == 1 && tail {
                tm.tail_time
            } else {
                tm.flit_time
            }
            + tm.latency;
        sim.c.flits_delivered += k as u64;
        while let Some(&(b0, bk, bt)) = sim.hosts[h].rx_trains.front() {
            if sim.train_arrival(c, b0, bk - 1, bk, bt) > sim.now {
                break;
            }
            sim.hosts[h].rx_trains.pop_front();
        }
        sim.hosts[h].rx_trains.push_back((a0, k, tail));
    }

    /// Host `h` acts at this instant: starts its next packet if it is due and a VC has a
    /// credit, and sends what it can of it.
    fn host_serve(&mut self, sim: &mut Sim, h: usize) {
        let c = self.hinj[h];
        let now = sim.now;
        let busy = self.ln[c as usize].busy;
        if busy > now {
            if sim.hosts[h].cur != NONE || sim.may_create(h) {
                self.wake(sim, c, busy);
            }
            return;
        }
        if sim.hosts[h].cur == NONE && !self.start_packet(sim, h) {
            return;
        }
        let o = sim.hosts[h].cur_vc;
        let tm = &sim.timing[self.v[o as usize].prof as usize];
        let (ft, tt, lat) = (tm.flit_time, tm.tail_time, tm.latency);
        let classes = (tm.head_route, tm.head_route_tail);
        let hs = &sim.hosts[h];
        let (pid, sent, len) = (hs.cur, hs.cur_sent, hs.cur_len);
        let left = len - sent;
        let (k, held) = self.credits_for(sim, o, left.min(MAX_TRAIN), ft);
        if k == 0 {
            return;
        }
        let tail = k == left;
        let head_class = if k == 1 && tail { classes.1 } else { classes.0 };
        let dst = sim.pkts[pid as usize].dst;
        let x = &mut self.v[o as usize];
        let mask = x.mask as u32;
        for j in 0..k {
            let mut flit = pid;
            if sent + j == 0 {
                flit |= HEAD;
            }
            let last = j + 1 == k && tail;
            if last {
                flit |= TAIL;
            }
            let a = now + j as Time * ft + if last { tt } else { ft } + lat;
            sim.ring[(x.buf + (x.tl.wrapping_add(j) & mask)) as usize] = Slot { time: a, flit, dst };
        }
        x.tl = x.tl.wrapping_add(k);
        x.cr = x.cr.wrapping_add(k.saturating_sub(held));
        let a0 = now + if k == 1 && tail { tt } else { ft } + lat;
        self.landed(sim, o, a0, head_class);
        sim.c.flits_sent += k as u64;
        self.commit(sim, c, k, tail, ft, tt);
        let hs = &mut sim.hosts[h];
        hs.cur_sent += k;
        if tail {
            hs.cur = NONE;
        }
        let busy = self.ln[c as usize].busy;
        if sim.hosts[h].cur != NONE {
            self.wake(sim, c, busy);
        } else if sim.may_create(h) {
            let t = sim.next_ready(h).max(busy);
            self.wake(sim, c, t);
        }
    }

    /// Takes the packet under host `h`'s cursor if it is due and a VC of its channel has a
    /// credit (the first such VC), as `Sim::start_packet` does. Returns whether it did.
    fn start_packet(&mut self, sim: &mut Sim, h: usize) -> bool {
        if !sim.may_create(h) {
            return false;
        }
        let now = sim.now;
        let c = self.hinj[h];
        let ready = sim.next_ready(h);
        if ready > now {
            self.wake(sim, c, ready);
            return false;
        }
        let ft = sim.tm(self.csim[c as usize]).flit_time;
        let (base, nvc) = (self.ln[c as usize].vc_base, self.ln[c as usize].nvc as u32);
        let Some(o) = (base..base + nvc).find(|&o| self.credits_for(sim, o, 1, ft).0 > 0) else {
            return false;
        };
        let size = sim.hosts[h].arrivals.size;
        let Some((dst, created)) = sim.next_synthetic(h, ready) else {
            return false;
        };
        let pid = match sim.alloc_pkt() {
            Ok(p) => p,
            Err(e) => {
                sim.failed.get_or_insert(e);
                return false;
            }
        };
        let measured = sim.count_injected(created, size);
        sim.pkts[pid as usize] = Pkt {
            src: h as u32,
            dst,
            len: size,
            created,
            head_inj: now,
            measured,
            tag: agent::NO_TAG,
            ..Pkt::default()
        };
        let hs = &mut sim.hosts[h];
        hs.cur = pid;
        hs.cur_vc = o;
        hs.cur_sent = 0;
        hs.cur_len = size;
        true
    }

    #[inline(always)]
    fn apply(&mut self, sim: &mut Sim, e: u64) {
        let id = e as u32;
        match e >> 62 {
            X_ROUTE => self.route_done(sim, id),
            X_ROUTE_SW => {
                let (s, _, _) = Express::route_sw_event(e);
                self.asks.push(e);
                self.mark_sw(s, 0, sim.now);
            }
            X_WAKE if e & X_AT_SW != 0 => {
                let s = ((e & (X_AT_SW - 1)) >> 6) as u32;
                self.mark_sw(s, 1 << (e & 63), sim.now);
            }
            X_WAKE => {
                let l = &self.ln[id as usize];
                let (src, port) = (l.src, l.src_port);
                self.mark(id, src, port, sim.now);
            }
            _ => {
                // (The general engine's delivery: no receive costs to pay, no agent to tell.)
                if let Err(e) = sim.deliver(id, true) {
                    sim.failed.get_or_insert(e);
                }
            }
        }
    }
}

impl Sim<'_> {
    /// Why [`Sim::run`] will run on the general engine rather than the express engine
    /// (`None`: it will run on the express engine).
    pub fn express_refused(&self) -> Option<&'static str> {
        ineligible(self)
    }

    /// Runs on the express engine if this run can (see the module doc); `None` if not.
    pub(crate) fn run_express(&mut self, progress: &mut dyn FnMut(Progress)) -> Option<Res<RunOutcome>> {
        if ineligible(self).is_some() {
            return None;
        }
        let mut x = Express::new(self);
        let r = self.express_loop(&mut x, progress);
        // What the results read of the channels, and the hosts' packets in flight, in the
        // general engine's numbering.
        for (l, &ci) in x.ln.iter().zip(x.csim.iter()) {
            if ci == NONE {
                continue;
            }
            let ch = &mut self.chans[ci as usize];
            ch.busy += l.used;
            if l.tr_k > 0 {
                let tm = &self.timing[ch.prof as usize];
                let unit = if l.mid { tm.flit_time } else { tm.tail_time };
                ch.tr_start = l.busy - unit - (l.tr_k as Time - 1) * tm.flit_time;
                (ch.tr_k, ch.mid) = (l.tr_k, l.mid);
            }
        }
        for h in self.hosts.iter_mut() {
            if h.cur_vc != NONE {
                h.cur_vc = x.vsim[h.cur_vc as usize];
            }
        }
        Some(r)
    }

    fn express_loop(&mut self, x: &mut Express, progress: &mut dyn FnMut(Progress)) -> Res<RunOutcome> {
        let wall = std::time::Instant::now();
        for h in 0..self.hosts.len() {
            if self.hosts[h].active {
                let t = self.next_ready(h);
                let c = x.hinj[h];
                x.wake(self, c, t);
            }
        }
        let nsw = self.sws.len() as u32;
        let mut finalized = false;
        let mut drain_failed = false;
        let mut interrupted = false;
        let mut iter = 0u64;
        while let Some(t) = self.q.next_time() {
            if self.ends_before(t, &mut finalized, &mut drain_failed) {
                break;
            }
            self.now = t;
            for k in 0..self.q.classes() {
                while let Some(e) = self.q.pop_class(k, t) {
                    self.c.events += 1;
                    x.apply(self, e);
                }
            }
            while let Some(e) = self.q.pop_heap(t) {
                self.c.events += 1;
                x.apply(self, e);
            }
            for j in 0..x.asks.len() {
                let e = x.asks[j];
                x.ask_sw(e);
            }
            x.asks.clear();
            let mut i = 0;
            while i < x.dirty.len() {
                let c = x.dirty[i];
                let src = x.ln[c as usize].src;
                if src < nsw {
                    x.eval_port(self, src, c);
                } else {
                    let h = self.node_host[src as usize] as usize;
                    x.host_serve(self, h);
                }
                i += 1;
            }
            x.dirty.clear();
            for j in 0..x.dirty_sw.len() {
                let s = x.dirty_sw[j];
                x.eval_switch(self, s);
            }
            x.dirty_sw.clear();
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            iter += 1;
            if iter & 0x3FFF == 0 {
                progress(Progress {
                    now: self.now,
                    window_end: self.me,
                    events: self.c.events,
                });
                if self.stop_asked() {
                    interrupted = true;
                    self.end = self.now;
                    break;
                }
            }
        }
        if !interrupted && self.q.is_empty() && x.v.iter().any(|v| v.hd != v.tl && v.flags & XF_TO_HOST == 0)
        {
            // Nothing can happen any more, yet flits wait: the fabrics this engine takes
            // cannot deadlock, so a wake-up was lost (a bug, reported instead of hidden).
            return Err(Box::new(SimError::Invariant {
                time: self.now,
                what: "the express engine stopped with flits in buffers".into(),
            }));
        }
        if !finalized {
            if interrupted {
                self.me = self.me.min(self.now.max(self.ms));
            }
            self.finalize_window();
        }
        Ok(RunOutcome {
            drain_failed,
            deadlock: None,
            wall_s: wall.elapsed().as_secs_f64(),
            interrupted,
        })
    }
}

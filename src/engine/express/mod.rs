//! The express engine: the same model as the general engine (`Sim::run`), for the fabrics
//! the reference workloads and most runs use — wormhole switches with round-robin
//! arbitration and credit flow control, routed by dimension order (meshes, and tori with
//! dateline VCs) or by tables free of deadlock by construction (trees, Clos, flies, …:
//! `route`), deterministic or adaptive with a selection by free VCs and their credits —
//! without the general engine's machinery for what such fabrics cannot have (selection
//! by the credits of busy outputs, cut-through, tokens, header operations, output
//! buffers, failures, agents, deadlock). Its results are those of the general
//! engine bit for bit (`tests/express.rs` compares the two on random fabrics; only the
//! count of events differs); it exists for speed (docs/performance.md, "the express
//! engine", 2026-11-26).
//!
//! Model (DESIGN.md, "Engine"; the rules of `engine::mod` and `switch::alloc`): a flit sent
//! on a channel at `t` occupies it for its unit time (flit or tail time) and lands in the
//! receiver's buffer one unit and the propagation delay later; its credit lands back at the
//! sender one credit delay after it leaves that buffer. A head reaches the front of its
//! input VC when it lands or, behind another packet, when that packet's tail leaves; it
//! asks for its output a router delay later; where it has several admissible outputs, for
//! the one the switch's selection policy picks among those with a free VC, or for all of
//! them if it picks none. At each instant a switch, output by output
//! (from a rotating first one where inputs share the crossbar): grants free VCs of the
//! output to the heads that ask for them, in round-robin order of its inputs after the last
//! one granted (a VC whose hold ends at this instant — its last tail's start, and the VC-reuse
//! delay after — only after the switch's outputs have sent); then sends one
//! flit, from the next VC in round-robin order whose worm has a flit in, a credit, and its
//! crossbar input free. (A head granted one output asks for the others no more; where heads
//! may ask for several, the switch grants on all its outputs before it sends on any.)
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
//!
//! Its parts: the records' layout (`build`) and their ids, one type per kind (`ids`), the
//! routing step (`route`), switches
//! (`switch`; with BookSim2's separable allocators on its cycle grid, `separable`), trains
//! (`send`), hosts and events (`host`), and the invariant checks of
//! `sim.check` (`check`). It is compiled twelve times, `Express<R, F>`: for dimension
//! order, the network's other deterministic routing or adaptive tables (`R`), with the
//! checks and VCs given in turn compiled in or not (`F`, `feat`); which runs come here is decided by the features they use
//! (`engine::features`), the instantiation by `run_express`, and an instantiation runs
//! nothing its `F::HAS` lacks.

use super::recs::{Recs, Zeroed};
use super::*;
use crate::routing::dor::Dor;

mod build;
mod check;
pub(crate) mod feat;
mod host;
mod ids;
mod prefetch;
mod route;
mod send;
mod separable;
mod switch;

use ids::{ChIx, NodeIx, PortIx, SlotIx, SwIx, VcIx};

use super::features::Feature;
use feat::{Feat, XFeat};
use route::{Adaptive, Routed, XRoute};

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
/// With `X_DELIVER`: the receiving host has paid its costs for the packet.
const X_PAID: u64 = 1 << 61;

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

/// An input's `port` while its head asks for every port of its admissible set
/// (`Express::want`), none of them free when it was routed.
const MULTI_PORT: u8 = u8::MAX;

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
    /// As an output, with owner `VcIx::HELD`: the start of the last tail sent, and the
    /// VC-reuse delay after it; the VC is free for another worm after it (and at it, once
    /// the instant's send phase is over).
    free_at: Time,
    /// As an input: when the last tail left (a head behind it is at the front from then);
    /// while its head is being routed at a switch where worms may interleave, when the
    /// head's router delay ends.
    front_at: Time,
    /// No credit of slots `cr..hd` lands later than this: once it has passed, the sender
    /// takes them all without reading the slots.
    cr_last: Time,
    /// As an output: the input VC whose worm holds it, `VcIx::HELD`, or `VcIx::NONE`.
    owner: VcIx,
    /// As a switch input: its switch (`SwIx::NONE` for a VC into a host).
    sw: SwIx,
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
    /// The port of the output its routed head asks for (`MULTI_PORT`: all those of its
    /// set, [`Express::want`]), and the admissible VCs there.
    port: u8,
    lo: u8,
    hi: u8,
    /// Its channel's routing label (`Routing::channel_class`; 0 where the routing has
    /// none).
    class: u8,
}

const _: () = assert!(std::mem::size_of::<XVc>() == 64);

// SAFETY: integers and `bool`s only.
unsafe impl Zeroed for XVc {}

impl XVc {
    /// The switch's inputs (bits) that share this one's crossbar input, itself included.
    #[inline(always)]
    fn sib(&self) -> u64 {
        (u64::MAX >> (64 - self.sibn as u32)) << self.sib0
    }

    /// The slot of position `p` of its ring (`cr`, `hd`, `tl`, counting on past them).
    #[inline(always)]
    fn slot(&self, p: u32) -> SlotIx {
        SlotIx(self.buf + (p & self.mask as u32))
    }

    /// Collects the credits of this output VC that have landed by `now` (`ring` holds
    /// their landing times); returns the credits its sender holds.
    #[inline(always)]
    fn collect_credits(&mut self, ring: &Recs<Slot, SlotIx>, now: Time) -> u32 {
        if now >= self.cr_last {
            self.cr = self.hd;
        } else {
            while self.cr != self.hd && ring[self.slot(self.cr)].time <= now {
                self.cr = self.cr.wrapping_add(1);
            }
        }
        self.cap as u32 - self.tl.wrapping_sub(self.cr)
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
    src: NodeIx,
    vc_base: VcIx,
    /// VCs (bits) whose owner is an input VC.
    owned: u32,
    /// VCs (bits) whose owner is `VcIx::HELD`, perhaps among others whose tail has passed.
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

// SAFETY: integers and `bool`s only.
unsafe impl Zeroed for XLink {}

impl XLink {
    /// Its VC number `k`.
    #[inline(always)]
    fn vc(&self, k: u32) -> VcIx {
        VcIx(self.vc_base.0 + k)
    }

    /// The number of its VC `o` (which must be one of its VCs).
    #[inline(always)]
    fn vc_no(&self, o: VcIx) -> u32 {
        o.0 - self.vc_base.0
    }
}

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
    /// Its selection policy among several admissible outputs (`Selection as u8`).
    sel: u8,
}

const _: () = assert!(std::mem::size_of::<XSw>() == 64);

// SAFETY: integers and `bool`s only.
unsafe impl Zeroed for XSw {}

impl XSw {
    /// The channel out of its port `port`.
    #[inline(always)]
    fn out(&self, port: u32) -> ChIx {
        ChIx(self.port_base + port)
    }

    /// The port of its output channel `c`.
    #[inline(always)]
    fn port_of(&self, c: ChIx) -> u32 {
        c.0 - self.port_base
    }

    /// Its port `port` as a crossbar input.
    #[inline(always)]
    fn xbar_in(&self, port: u32) -> PortIx {
        PortIx(self.port_base + port)
    }

    /// Its input `local` (its index among the switch's inputs).
    #[inline(always)]
    fn input(&self, local: u32) -> VcIx {
        VcIx(self.in_base + local)
    }
}

/// A switch timing: its allocation period and its crossbar speed-up. (Its router delay is
/// in the timing of the channels into it, `Timing::router_delay`.)
#[derive(Clone, Copy, Debug, PartialEq)]
struct XSwT {
    sa_period: Time,
    speedup: u32,
}

// SAFETY: integers only.
unsafe impl Zeroed for XSwT {}

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

/// The express engine's state beside the `Sim` it runs for (`F`: the features compiled
/// in, `feat`).
pub(crate) struct Express<R, F> {
    /// Fetch records ahead of their events (`prefetch`): the records outgrow a core's cache.
    ahead: bool,
    /// The VC-reuse delay (`switch.vc_reuse_delay`): an output VC takes the next packet's
    /// head that long after its last tail started.
    reuse: Time,
    /// The least time a flit stays in a switch's input buffer (`switch.flit_delay`): the
    /// time in its slot there is when it may leave, landing plus this.
    stay: Time,
    /// Some host has receive costs (`host.recv_overhead`, `recv_per_byte`).
    recv_costs: bool,
    v: Recs<XVc, VcIx>,
    /// Per VC, its channel.
    vch: Recs<ChIx, VcIx>,
    /// Per channel, its VCs and allocation (see [`XLink`]).
    ln: Recs<XLink, ChIx>,
    /// Per switch, its ports with something to do at this instant, and its inputs whose
    /// head is being routed (bits of local input indices).
    sw: Recs<XSw, SwIx>,
    /// The switch timings (a few).
    swt: Recs<XSwT>,
    /// The channel timings (`Sim::timing`, at most 255 on this engine), by a VC's `prof`:
    /// 256 of them, so that no index of a `u8` needs a check.
    tm: Box<[Timing; 256]>,
    /// Per switch port (`Sw::port_base + p`): when its crossbar input is free.
    xbar_free: Recs<Time, PortIx>,
    /// Per channel (this engine's numbering, see [`Express::new`]), the general engine's
    /// channel (`NONE` for a switch port without an output); per host, its channel; per VC,
    /// the general engine's VC.
    csim: Recs<u32, ChIx>,
    hinj: Recs<ChIx>,
    vsim: Recs<u32, VcIx>,
    /// The flit slots of every VC's ring (`Sim::ring`, taken for the run and given back).
    ring: Recs<Slot, SlotIx>,
    /// The routing step (`route`).
    route: R,
    /// The rotation of the last crossbar switch evaluated: at this instant, for this period
    /// and this many ports, the output to start at (switches alike share it).
    rot: (Time, Time, u32, u32),
    /// Channels whose sender has something to do at this instant (a host, or a switch
    /// whose inputs do not share the crossbar), with the instant each was last listed, and
    /// crossbar-sharing switches that have.
    dirty: Vec<ChIx>,
    dirty_at: Recs<Time, ChIx>,
    dirty_sw: Vec<SwIx>,
    /// The `X_ROUTE_SW` events of this instant.
    asks: Vec<u64>,
    /// With adaptive routing (`XRoute::MULTI`), per switch input, the ports (bits) its
    /// head may take; read while it is routed and while it asks for all of them.
    want: Recs<u64, VcIx>,
    /// With VCs given in turn (`F::VC_TURN`), per switch input VC, the output VC it was
    /// last given (empty otherwise).
    va_last: Recs<VcIx, VcIx>,
    /// BookSim2's separable allocators (`separable`), in the instantiations with VCs given
    /// in turn, where a run has them (off otherwise).
    sep: Option<Box<separable::XSep>>,
    /// The switches allocate with separable allocators (`sep`), and (`sep_trains`) a worm
    /// with no rival may go as a train through them (their pointers move past a matched
    /// pair only: not the wavefront's, `max_size`'s or `loa`'s).
    sep_on: bool,
    sep_trains: bool,
    features: std::marker::PhantomData<F>,
}

impl<R, F> Express<R, F> {
    /// Node `n` as a switch (`None`: a host).
    #[inline(always)]
    fn switch(&self, n: NodeIx) -> Option<SwIx> {
        ((n.0 as usize) < self.sw.len()).then_some(SwIx(n.0))
    }
}

/// Why a run cannot go on the express engine (`None`: it can): the first feature it uses
/// that the express engine lacks ([`super::features`]).
pub(crate) fn ineligible(sim: &Sim) -> Option<&'static str> {
    super::features::Features::of(sim)
        .beyond(super::features::EXPRESS)
        .map(super::features::Feature::why)
}

impl Sim<'_> {
    /// Why [`Sim::run`] will run on the general engine rather than the express engine
    /// (`None`: it will run on the express engine).
    pub fn express_refused(&self) -> Option<&'static str> {
        ineligible(self)
    }

    /// The engine and instantiation [`Sim::run`] will run on, and why, as `reef check`
    /// prints it.
    pub fn engine_choice(&self) -> String {
        let used = super::features::Features::of(self);
        let why: Vec<&str> = used
            .all_beyond(super::features::EXPRESS)
            .map(super::features::Feature::why)
            .collect();
        if let Some((last, rest)) = why.split_last() {
            return match rest {
                [] => format!("general, because of {last}"),
                _ => format!("general, because of {}; and {last}", rest.join("; ")),
            };
        }
        if !super::recs::space_available() {
            return "general, because the system will not reserve the express engine's address space (README, \"Benchmarks\")".into();
        }
        let route = match self.routing {
            Routing::Dor(_) => "dimension order",
            Routing::FatTree(_) => "fat-tree routes",
            Routing::Table(t) if !t.deterministic() => "adaptive routing tables",
            _ => "routing tables",
        };
        let checks = match (used.has(Feature::Checks), used.has(Feature::VcInTurn)) {
            (false, false) => "",
            (true, false) => ", with its invariant checks compiled in",
            (false, true) => ", with VCs given in turn compiled in",
            (true, true) => ", with its invariant checks and VCs given in turn compiled in",
        };
        let sep = if used.has(Feature::SeparableAllocator) {
            "; BookSim2's separable allocators on its cycle grid"
        } else {
            ""
        };
        let one_vc = if super::features::moot_switch_settings(self) {
            "; the switches' VC choice and allocators change nothing with one VC a channel"
        } else {
            ""
        };
        format!("express ({route}){checks}{sep}{one_vc}")
    }

    /// Runs on the express engine if this run can (see the module doc); `None` if not.
    pub(crate) fn run_express(&mut self, progress: &mut dyn FnMut(Progress)) -> Option<Res<RunOutcome>> {
        // The features the run uses, found once: whether it can come here, and which
        // instantiation it runs on.
        let used = super::features::Features::of(self);
        if used.beyond(super::features::EXPRESS).is_some() {
            return None;
        }
        // The routing step, and the invariant checks and VCs in turn compiled in or not:
        // one instantiation each (`Express<R, F>`).
        let (check, turn) = (used.has(Feature::Checks), used.has(Feature::VcInTurn));
        let adaptive = matches!(self.routing, Routing::Table(t) if !t.deterministic());
        match (self.routing, check, turn) {
            (Routing::Dor(_), false, false) => self.run_express_as::<Dor, Feat<false, false>>(progress, used),
            (Routing::Dor(_), true, false) => self.run_express_as::<Dor, Feat<true, false>>(progress, used),
            (Routing::Dor(_), false, true) => self.run_express_as::<Dor, Feat<false, true>>(progress, used),
            (Routing::Dor(_), true, true) => self.run_express_as::<Dor, Feat<true, true>>(progress, used),
            (_, false, false) if adaptive => {
                self.run_express_as::<Adaptive, Feat<false, false>>(progress, used)
            }
            (_, true, false) if adaptive => {
                self.run_express_as::<Adaptive, Feat<true, false>>(progress, used)
            }
            (_, false, true) if adaptive => {
                self.run_express_as::<Adaptive, Feat<false, true>>(progress, used)
            }
            (_, true, true) if adaptive => self.run_express_as::<Adaptive, Feat<true, true>>(progress, used),
            (_, false, false) => self.run_express_as::<Routed, Feat<false, false>>(progress, used),
            (_, true, false) => self.run_express_as::<Routed, Feat<true, false>>(progress, used),
            (_, false, true) => self.run_express_as::<Routed, Feat<false, true>>(progress, used),
            (_, true, true) => self.run_express_as::<Routed, Feat<true, true>>(progress, used),
        }
    }

    /// (`None`: the system would not give the records' address space; the run goes on
    /// the general engine, to the same results.)
    fn run_express_as<R: XRoute, F: XFeat>(
        &mut self,
        progress: &mut dyn FnMut(Progress),
        used: super::features::Features,
    ) -> Option<Res<RunOutcome>> {
        if let Some(f) = used.beyond(F::HAS) {
            // (Not reached: `run_express` picks an instantiation with every feature used.)
            return Some(Err(Box::new(SimError::Invariant {
                time: self.now,
                what: format!("the express engine's instantiation lacks {}", f.why()),
            })));
        }
        let mut x = Express::<R, F>::new(self)?;
        if F::VC_TURN && used.has(Feature::SeparableAllocator) {
            x.sep = Some(Box::new(separable::XSep::new(self, x.v.len())));
            x.sep_on = true;
            x.sep_trains = self.spec.params.trains && !self.sw_allocator.moves_every_allocation();
        }
        // The flit slots are this engine's for the run, if laid out for it.
        match std::mem::take(&mut self.ring).into_recs() {
            Ok(ring) => x.ring = ring,
            Err(ring) => {
                self.ring = ring;
                return None;
            }
        }
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
                h.cur_vc = x.vsim[VcIx(h.cur_vc)];
            }
        }
        let Express { ring, .. } = x;
        self.ring = ring.into_store();
        Some(r)
    }

    fn express_loop<R: XRoute, F: XFeat>(
        &mut self,
        x: &mut Express<R, F>,
        progress: &mut dyn FnMut(Progress),
    ) -> Res<RunOutcome> {
        let wall = std::time::Instant::now();
        for h in 0..self.hosts.len() {
            if self.hosts[h].active {
                let t = self.next_ready(h);
                let c = x.hinj[h];
                x.wake(self, c, t);
            }
        }
        let mut finalized = false;
        let mut drain_failed = false;
        let mut interrupted = false;
        let mut iter = 0u64;
        while let Some(t) = self.q.next_time() {
            if self.ends_before(t, &mut finalized, &mut drain_failed) {
                break;
            }
            self.now = t;
            let mut k = 0;
            while let Some(c) = self.q.due_class_from(k) {
                while let Some(e) = self.q.pop_class(c, t) {
                    if x.ahead {
                        for (stage, &d) in prefetch::AHEAD_EVENTS.iter().enumerate() {
                            if let Some(a) = self.q.peek_class(c, d - 1) {
                                x.prefetch_event(a, stage);
                            }
                        }
                    }
                    self.c.events += 1;
                    x.apply(self, e);
                }
                k = c + 1;
            }
            while let Some(e) = self.q.pop_heap(t) {
                self.c.events += 1;
                x.apply(self, e);
            }
            for j in 0..x.asks.len() {
                let e = x.asks[j];
                x.ask_sw(self, e);
            }
            x.asks.clear();
            let mut i = 0;
            while i < x.dirty.len() {
                if x.ahead {
                    for (stage, &d) in prefetch::AHEAD_DIRTY.iter().enumerate() {
                        if let Some(&a) = x.dirty.get(i + d) {
                            x.prefetch_dirty(a, stage);
                        }
                    }
                }
                let c = x.dirty[i];
                let src = x.ln[c].src;
                match x.switch(src) {
                    Some(s) => x.eval_port(self, s, c),
                    None => {
                        let h = self.node_host[src.0 as usize] as usize;
                        x.host_serve(self, h);
                    }
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
                    window_end: self.window_end_ahead(),
                    events: self.c.events,
                    delivered: self.c.packets_delivered,
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
        if self.batch && !interrupted {
            // (A batch whose last events came with its last delivery.)
            self.batch_over();
        }
        if !finalized {
            if interrupted {
                self.me = self.me.min(self.now.max(self.ms));
            }
            self.finalize_window();
        }
        if !interrupted {
            x.check_end(self, !drain_failed)?;
        }
        Ok(RunOutcome {
            drain_failed,
            deadlock: None,
            wall_s: wall.elapsed().as_secs_f64(),
            interrupted,
            express: true,
        })
    }
}

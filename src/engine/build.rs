//! Laying a [`Spec`] out as the engine's arrays: one record a channel, VC, switch, host,
//! the flit rings of every buffer in one allocation, the channel timings shared, the
//! event classes, and the traffic sources with their own seeded streams (`Sim::new`).

use super::*;

impl<'a> Sim<'a> {
    /// Lays the spec out in arrays. Fails only if the model exceeds the engine's id widths.
    pub fn new(spec: &'a Spec) -> Result<Sim<'a>, SimError> {
        let fab = &spec.fabric;
        let p = &spec.params;
        let mut q = EventQueue::new();
        let total_vcs: u64 = fab.channels.iter().map(|c| c.params.vcs as u64).sum();
        // Ids 0..=MAX_ID fit an event's id field.
        let ids = MAX_ID as u64 + 1;
        if total_vcs > ids || fab.channels.len() as u64 > ids || fab.nodes.len() as u64 > ids {
            return Err(SimError::TooLarge(format!(
                "{} channels with {} virtual channels exceed the engine's limit of {} ids",
                fab.channels.len(),
                total_vcs,
                ids
            )));
        }
        let routing = &spec.routing;
        let tok = crate::link::ds::token_channels(fab)?;
        let mut chans = Vec::with_capacity(fab.channels.len());
        let mut vcs = Vec::with_capacity(total_vcs as usize);
        let mut caps = Vec::with_capacity(total_vcs as usize);
        let mut train_classes: Vec<(Time, u32)> = Vec::new();
        let mut train_class_ids: Vec<Class> = Vec::new();
        let mut timing: Vec<Timing> = Vec::new();
        let mut prof_of = std::collections::HashMap::new();
        let mut flit_store = 0u32;
        for (ci, ch) in fab.channels.iter().enumerate() {
            let lp = &ch.params;
            let credit_delay = lp.flow.credit_delay();
            let to_switch = fab.is_switch(ch.dst);
            let router_delay = to_switch.then(|| fab.switch_params[ch.dst.idx()].router_delay);
            let tokens_between = tok[ci].on || ch.reverse.is_some_and(|r| tok[r.idx()].on);
            let key = (
                lp.flit_time,
                lp.tail_time,
                lp.latency,
                credit_delay,
                router_delay,
                lp.delete_header,
                tokens_between,
                lp.clock,
            );
            let prof = *prof_of.entry(key).or_insert_with(|| {
                let arr_data = q.class(lp.flit_time + lp.latency);
                let arr_tail = q.class(lp.tail_time + lp.latency);
                let train_class = match train_classes.iter().position(|&(ft, _)| ft == lp.flit_time) {
                    Some(x) => train_classes[x].1,
                    None => {
                        let base = train_class_ids.len() as u32;
                        for j in 1..MAX_TRAIN as Time {
                            train_class_ids.push(q.class(j * lp.flit_time));
                        }
                        train_classes.push((lp.flit_time, base));
                        base
                    }
                };
                let (head_route, head_route_tail) = match router_delay {
                    Some(r) => (
                        q.class(lp.flit_time + lp.latency + r),
                        q.class(lp.tail_time + lp.latency + r),
                    ),
                    None => (arr_data, arr_tail),
                };
                timing.push(Timing {
                    flit_time: lp.flit_time,
                    tail_time: lp.tail_time,
                    credit_delay: credit_delay.unwrap_or(0),
                    latency: lp.latency,
                    arr_data,
                    arr_tail,
                    tx_data: q.class(lp.flit_time),
                    tx_tail: q.class(lp.tail_time),
                    credit_class: q.class(credit_delay.unwrap_or(1).max(1)),
                    head_route,
                    head_route_tail,
                    router_delay: router_delay.unwrap_or(0),
                    train_class,
                    delete_header: lp.delete_header,
                    tokens_between,
                    clock: lp.clock,
                });
                timing.len() as u32 - 1
            });
            let shortcut = !to_switch || fab.switch_params[ch.dst.idx()].mode != SwitchMode::StoreAndForward;
            chans.push(Chan {
                tx_busy: 0,
                txfree_at: Time::MAX,
                busy: 0,
                tr_start: 0,
                landing: 0,
                vc_base: vcs.len() as u32,
                prof,
                src: ch.src.0,
                src_port: ch.src_port,
                tr_k: 0,
                nvc: lp.vcs,
                rr: lp.vcs - 1,
                class: routing.channel_class(ci),
                mid: false,
                credit: credit_delay.is_some(),
                tokens: tok[ci].on,
                shortcut: shortcut && !tok[ci].on && credit_delay.is_some() && p.trains,
            });
            let to_host = !fab.is_switch(ch.dst);
            for v in 0..lp.vcs {
                // Slots hold buffered flits and, beside them, credits on their way back.
                // Hosts consume flits as they arrive but still return credits.
                let storage = if to_host && credit_delay.is_none() {
                    0
                } else {
                    // (Config checks keep buffers far below 2^31; a fabric built in code
                    // might not.)
                    lp.buffer.checked_next_power_of_two().ok_or_else(|| {
                        SimError::TooLarge(format!(
                            "a buffer of {} flits is beyond the engine's limit of 2^31",
                            lp.buffer
                        ))
                    })?
                };
                // A ring of up to four slots never straddles two cache lines, nor does a
                // four-slot group of a longer one (once the store itself is aligned, see
                // `ring_of`): a train of four flits is one line, read and written.
                let align = storage.clamp(1, 4);
                flit_store = flit_store
                    .checked_next_multiple_of(align)
                    .ok_or_else(|| SimError::TooLarge("buffers exceed 2^32 flit slots in total".into()))?;
                vcs.push(Vc {
                    buf: flit_store,
                    mask: storage.saturating_sub(1),
                    head: 0,
                    len: 0,
                    fwd: NONE,
                    local: NONE,
                    node: ch.dst.0,
                    chan: ci as u32,
                    credits: if credit_delay.is_some() {
                        lp.buffer
                    } else {
                        u32::MAX
                    },
                    owner: NONE,
                    cr_head: 0,
                    want_port: 0,
                    want_lo: 0,
                    want_hi: 0,
                    cr_last: if tok[ci].on { Time::MAX } else { 0 },
                    state: IDLE,
                    vc: v,
                    flags: if fab.is_switch(ch.src) { 0 } else { F_FROM_HOST }
                        | if tok[ci].on { F_TOKENS } else { 0 }
                        | if v + 1 == lp.vcs { F_LAST_VC } else { 0 },
                    strip_pending: 0,
                    fwd_port: 0,
                    in_port: ch.dst_port,
                });
                caps.push(lp.buffer);
                flit_store = flit_store
                    .checked_add(storage)
                    .ok_or_else(|| SimError::TooLarge("buffers exceed 2^32 flit slots in total".into()))?;
            }
        }
        // Ports of every node, flattened.
        let mut port_base = Vec::with_capacity(fab.nodes.len());
        let mut port_out = Vec::new();
        for (n, node) in fab.nodes.iter().enumerate() {
            port_base.push(port_out.len() as u32);
            for pt in 0..node.ports as usize {
                port_out.push(fab.out_chan[n][pt].map_or(NONE, |c| c.0));
            }
        }
        let mut sws = Vec::with_capacity(fab.switches as usize);
        let mut sw_in = Vec::new();
        let mut bits_len = 0u32;
        let mut pend_words = 1u32;
        #[allow(clippy::needless_range_loop)] // s indexes five parallel per-node tables
        for s in 0..fab.switches as usize {
            let node = &fab.nodes[s];
            if node.ports as usize > crate::fabric::MAX_PORTS {
                return Err(SimError::TooLarge(format!(
                    "switch {} has {} ports; reef routes switches of up to {} ports",
                    node.name,
                    node.ports,
                    crate::fabric::MAX_PORTS
                )));
            }
            let in_base = sw_in.len() as u32;
            for c in fab.in_chan[s].iter().flatten() {
                let base = chans[c.idx()].vc_base;
                for v in 0..chans[c.idx()].nvc as u32 {
                    vcs[(base + v) as usize].local = sw_in.len() as u32 - in_base;
                    sw_in.push(base + v);
                }
            }
            let n_in = sw_in.len() as u32 - in_base;
            let words = n_in.div_ceil(64).max(1);
            let n_ports = node.ports as u32;
            let pwords = n_ports.div_ceil(64).max(1);
            let sp = fab.switch_params[s];
            let route_class = q.class(sp.router_delay.max(1));
            let max_in_vcs = fab.in_chan[s]
                .iter()
                .flatten()
                .map(|c| fab.channels[c.idx()].params.vcs as u32)
                .max()
                .unwrap_or(1);
            // With an internal or output speed-up every switch allocates its crossbar cycle
            // by cycle.
            let xbar = max_in_vcs > sp.speedup.max(1) || fab.output_queues();
            sws.push(Sw {
                in_base,
                n_in,
                words,
                port_base: port_base[s],
                n_ports,
                pwords,
                // Request words follow the switch's bit sets in one block.
                req_base: bits_len + words + 2 * pwords,
                bits_base: bits_len,
                router_delay: sp.router_delay,
                route_class,
                mode: sp.mode,
                selection: sp.selection,
                arbitration: sp.arbitration,
                speedup: sp.speedup.max(1),
                sa_period: fab.out_chan[s]
                    .iter()
                    .flatten()
                    .map(|c| fab.channels[c.idx()].params.flit_time)
                    .min()
                    .unwrap_or(1)
                    .max(1),
                xbar,
                tail_credit: sp.release == VcRelease::TailCredit,
                vc_rr: fab.vc_choice == VcChoice::RoundRobin,
            });
            // Only trains that could meet competition look at the heads being routed.
            let one_vc_out = fab.out_chan[s]
                .iter()
                .flatten()
                .all(|c| fab.channels[c.idx()].params.vcs == 1);
            if one_vc_out && !xbar {
                for &x in &sw_in[in_base as usize..] {
                    vcs[x as usize].flags |= F_UNWATCHED;
                }
            }
            bits_len = (2 * words + 2 * pwords + n_ports * words)
                .checked_add(bits_len)
                .filter(|&b| b <= 1 << 26)
                .ok_or_else(|| {
                    SimError::TooLarge(format!(
                        "the switches' allocation state exceeds the engine's limit of 2^32 bits (at switch {})",
                        node.name
                    ))
                })?;
            pend_words = pend_words.max(words);
        }
        // A clocked channel's flits are placed on its clock's edges by the paths that send a
        // packet's flits one after another; those that interleave flits of several packets
        // (VCs, a crossbar input shared by several VCs, tokens) count in flit times.
        for (ci, ch) in fab.channels.iter().enumerate() {
            let lp = &ch.params;
            if lp.clock.is_none() {
                continue;
            }
            let bad = if lp.vcs != 1 {
                Some("has more than one virtual channel")
            } else if lp.tail_time != lp.flit_time {
                Some("has a tail of its own length")
            } else if tok[ci].on {
                Some("has token flow control")
            } else if fab.is_switch(ch.src) && sws[ch.src.idx()].xbar {
                Some("leaves a switch whose inputs share the crossbar")
            } else {
                None
            };
            if let Some(why) = bad {
                return Err(SimError::Invalid(format!(
                    "{}: a channel whose flit time is not a whole number of picoseconds (it sends on a \
                     clock's edges) {why}; reef does not model that",
                    fab.channel_name(crate::fabric::ChannelId(ci as u32))
                )));
            }
        }
        // A head that lands behind a train still leaving starts routing when that train's
        // tail has passed, j flit times from now, plus the router delay: classes for those
        // delays let its event skip the heap (when there are few such combinations).
        let mut delays: Vec<Time> = sws.iter().map(|s| s.router_delay).filter(|&r| r > 0).collect();
        delays.sort_unstable();
        delays.dedup();
        if delays.len() * train_classes.len() <= 4 {
            for &r in &delays {
                for &(ft, _) in &train_classes {
                    for j in 1..=MAX_TRAIN as Time {
                        q.class(r + j * ft);
                    }
                }
            }
        }
        let wl: &Workload = &spec.workload;
        let n = fab.num_hosts() as u32;
        let mut hosts = Vec::with_capacity(n as usize);
        let mut node_host = vec![NONE; fab.nodes.len()];
        for h in 0..n {
            let node = fab.hosts[h as usize].0;
            node_host[node as usize] = h;
            let inj = fab.injection_channel(h).0;
            let first = fab.channels[inj as usize].dst;
            let need = match fab.is_switch(first).then(|| fab.switch_params[first.idx()]) {
                Some(sp) if sp.release == VcRelease::TailCredit => NEED_ALL,
                Some(sp) if sp.mode != SwitchMode::Wormhole => NEED_LEN,
                _ => 1,
            };
            hosts.push(HostState {
                node,
                inj,
                active: wl.pattern.sends(h),
                arrivals: Arrivals::new(
                    &wl.process,
                    &wl.sizes,
                    Stream::new(p.seed, Purpose::Arrivals, h as u64),
                ),
                dst_rng: Stream::new(p.seed, Purpose::Destinations, h as u64),
                route_rng: Stream::new(p.seed, Purpose::Routing, h as u64),
                started: 0,
                cpu_free: 0,
                tail_out: 0,
                outstanding: 0,
                recv_free: 0,
                cur: NONE,
                cur_vc: NONE,
                last_vc: NONE,
                vc_rr: fab.vc_choice == VcChoice::RoundRobin,
                cur_sent: 0,
                cur_len: 0,
                gen_at: Time::MAX,
                need,
                rx_trains: std::collections::VecDeque::new(),
                outbox: std::collections::VecDeque::new(),
                avail: None,
                mem_cap: u64::MAX,
                mem_used: 0,
                mem_release: None,
                gated: false,
            });
        }
        let sep = if fab.sw_allocator == SwAllocator::Greedy {
            Separable::default()
        } else {
            let max_ports = sws.iter().map(|w: &Sw| w.n_ports).max().unwrap_or(0);
            let smax = sws.iter().map(|w: &Sw| w.speedup).max().unwrap_or(1);
            Separable::new(
                port_out.len(),
                max_ports as usize,
                smax as usize,
                fab.output_speedup as usize,
            )
        };
        let route_stride = routing.max_header().max(p.max_header);
        let nodes = fab.nodes.len();
        let wants = vec![Want::port(0, 1); vcs.len()];
        let batches = p.batches.max(1) as usize;
        let ports: Vec<Port> = port_out
            .iter()
            .map(|&out| {
                let ch = (out != NONE).then(|| &chans[out as usize]);
                Port {
                    out,
                    va_rr: NONE,
                    xbar_free: 0,
                    vc_base: ch.map_or(0, |c| c.vc_base),
                    nvc: ch.map_or(0, |c| c.nvc),
                    credit: ch.is_some_and(|c| c.credit),
                    delete_header: ch.is_some_and(|c| timing[c.prof as usize].delete_header),
                }
            })
            .collect();
        let uses_class = (0..fab.channels.len()).any(|c| routing.channel_class(c) != 0);
        let (ring, pad) = ring_of(flit_store as usize)?;
        for v in vcs.iter_mut() {
            v.buf += pad;
        }
        let mut sim = Sim {
            spec,
            fab,
            routing,
            now: 0,
            q,
            chans: Arr(chans),
            timing: Arr(timing),
            fail_at: Vec::new(),
            vcs: Arr(vcs),
            ring,
            inflight: vec![0; if p.check { caps.len() } else { 0 }],
            sel_rr: vec![0; caps.len()],
            va_last: if fab.vc_choice == VcChoice::RoundRobin {
                vec![NONE; caps.len()]
            } else {
                Vec::new()
            },
            t_aux: Arr(vec![0; caps.len()]),
            last_move: Arr(vec![0; caps.len()]),
            held: Arr(vec![0; caps.len()]),
            owned: Arr(vec![0; fab.channels.len()]),
            vc_reuse: fab.vc_reuse,
            flit_delay: fab.flit_delay,
            internal_speedup: fab.internal_speedup,
            queued: fab.output_queues(),
            accept: Arr(if fab.output_queues() {
                vec![0; fab.channels.len()]
            } else {
                Vec::new()
            }),
            sw_allocator: fab.sw_allocator,
            sep,
            vc_alloc: fab.vc_allocator,
            vsep: if fab.vc_allocator == crate::fabric::VcAllocator::Greedy {
                Default::default()
            } else {
                crate::switch::vc_alloc::VcSep::new(
                    caps.len(),
                    port_out.len(),
                    sws.len(),
                    routing.has_escape(),
                )
            },
            cwake: vec![Time::MAX; caps.len()],
            caps,
            wants,
            train_class_ids,
            pending: Arr(vec![0; sws.len() * pend_words as usize]),
            pend_words,
            sws: Arr(sws),
            sw_in: Arr(sw_in),
            ports: Arr(ports),
            bits: Arr(vec![0; bits_len as usize]),
            hosts,
            node_host,
            pkts: Arr(Vec::new()),
            free_pkts: Vec::new(),
            route_store: Vec::new(),
            route_stride,
            uses_class,
            route_draws: routing.draws(),
            inj_by_dst: routing.splits_injection(),
            header_ops: routing.uses_header(),
            scratch_route: Vec::new(),
            dirty: Vec::with_capacity(nodes),
            dirty_stamp: vec![0; nodes],
            step: 0,
            ms: p.warmup,
            me: p.warmup + p.measure,
            c: Counters {
                flits_window: vec![0; n as usize],
                batches: vec![Batch::default(); batches],
                ..Counters::default()
            },
            check: p.check,
            batch: matches!(spec.workload.process, Process::Batch { .. }),
            window: match spec.workload.process {
                Process::Batch { window, .. } => window,
                _ => 0,
            },
            released: Vec::new(),
            reverse_order: false,
            interruptible: false,
            cancel: None,
            #[cfg(feature = "checked")]
            lone_grant: true,
            scratch_events: Vec::new(),
            end: Time::MAX,
            end_open: false,
            failed: None,
            notes: Vec::new(),
            tokens: Vec::new(),
            free_tokens: Vec::new(),
            stop: false,
            sent_phase: false,
            release_due: false,
            sa_memo: (Time::MAX, 0, 0, 0),
            host_params: vec![spec.host; n as usize],
            tok,
            fct_due: Vec::new(),
            sampler: None,
            next_sample: Time::MAX,
            defer_at: Time::MAX,
            window_open: false,
            sub_period: 0,
            n_batches: batches,
            deferred: Vec::new(),
            sampling: None,
        };
        sim.tokens_start();
        Ok(sim)
    }
}

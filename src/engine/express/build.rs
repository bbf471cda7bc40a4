//! The express engine's records for a run, in its own numbering (`Express::new`).

use super::*;

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// Builds the engine's records for `sim`, in its own numbering, chosen so that an id
    /// follows from what names it without a table:
    /// - a VC into a switch is `Sw::in_base` + its index among the switch's inputs (the
    ///   general engine's `sw_in` index), so the inputs of a switch and the VCs of a channel
    ///   sit side by side; VCs into hosts follow, in the general engine's order;
    /// - a channel out of a switch is `Sw::port_base` + its port (the general engine's port
    ///   index); channels out of hosts follow.
    ///
    /// `None` if the system will not give the records' address space (`recs`).
    pub(super) fn new(sim: &Sim) -> Option<Self> {
        let fab = sim.fab;
        let route = R::of(sim).expect("an instantiation for the run's routing (`run_express`)");
        let nv = sim.vcs.len();
        let nsw = sim.sws.len();
        // The numbering: general engine's VC or channel -> this engine's, and back.
        let mut vx = vec![VcIx::NONE; nv];
        let mut next = sim.sw_in.len() as u32;
        for (gv, g) in sim.vcs.iter().enumerate() {
            vx[gv] = VcIx(if g.local == NONE {
                next += 1;
                next - 1
            } else {
                sim.sws[g.node as usize].in_base + g.local
            });
        }
        let mut vsim = vec![NONE; nv];
        for (gv, &x) in vx.iter().enumerate() {
            vsim[x.0 as usize] = gv as u32;
        }
        let mut cx = vec![ChIx(NONE); sim.chans.len()];
        let mut next = sim.ports.len() as u32;
        for (ci, c) in sim.chans.iter().enumerate() {
            cx[ci] = ChIx(if (c.src as usize) < nsw {
                sim.sws[c.src as usize].port_base + c.src_port as u32
            } else {
                next += 1;
                next - 1
            });
        }
        let mut csim = vec![NONE; next as usize];
        for (ci, &x) in cx.iter().enumerate() {
            csim[x.0 as usize] = ci as u32;
        }
        let watched: Vec<bool> = sim
            .sws
            .iter()
            .map(|sw| {
                let ports = sw.port_base as usize..(sw.port_base + sw.n_ports) as usize;
                sw.xbar || sim.ports.0[ports].iter().any(|p| p.nvc > 1)
            })
            .collect();
        let mut v = Recs::zeroed(nv)?;
        let mut vch = Recs::zeroed(nv)?;
        for (x, &gv) in vsim.iter().enumerate() {
            let x = VcIx(x as u32);
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
            v[x] = XVc {
                free_at: 0,
                front_at: 0,
                cr_last: 0,
                owner: VcIx::NONE,
                sw: if g.local == NONE { SwIx::NONE } else { SwIx(g.node) },
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
                class: if sim.uses_class {
                    sim.chans[g.chan as usize].class
                } else {
                    0
                },
            };
            vch[x] = cx[g.chan as usize];
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
            src: NodeIx(NONE),
            src_port: 0,
            vc_base: VcIx::NONE,
            nvc: 0,
            rr: 0,
            va_rr: u8::MAX,
        };
        let mut ln = Recs::zeroed(csim.len())?;
        for (x, &ci) in csim.iter().enumerate() {
            ln[ChIx(x as u32)] = match sim.chans.get(ci as usize) {
                None => gap,
                Some(c) => {
                    let base = vx[c.vc_base as usize];
                    debug_assert!(
                        (0..c.nvc as u32).all(|w| vx[(c.vc_base + w) as usize] == VcIx(base.0 + w))
                    );
                    XLink {
                        from_host: !fab.is_switch(crate::fabric::NodeId(c.src)),
                        src: NodeIx(c.src),
                        src_port: c.src_port as u8,
                        vc_base: base,
                        nvc: c.nvc,
                        rr: c.rr,
                        ..gap
                    }
                }
            };
        }
        let mut sw = Recs::zeroed(nsw)?;
        for (s, g) in sim.sws.iter().enumerate() {
            sw[SwIx(s as u32)] = XSw {
                todo: 0,
                routing: 0,
                active: 0,
                dirty_at: Time::MAX,
                port_base: g.port_base,
                in_base: g.in_base,
                prof: sw_prof(g),
                n_ports: g.n_ports as u8,
                xbar: g.xbar,
                sel: g.selection as u8,
            };
        }
        let ahead = prefetch::worth_it(
            (v.len() + ln.len() + sw.len()) * std::mem::size_of::<XVc>()
                + sim.ring.len() * std::mem::size_of::<Slot>(),
        );
        Some(Express {
            ahead,
            reuse: sim.vc_reuse,
            stay: sim.flit_delay,
            recv_costs: sim
                .host_params
                .iter()
                .any(|h| h.recv_overhead != 0 || h.recv_per_byte != 0),
            v,
            vch,
            ln,
            sw,
            swt: Recs::from_vec(swt)?,
            tm: {
                let mut tm = vec![*sim.timing.first()?; 256];
                tm.get_mut(..sim.timing.len())?.copy_from_slice(&sim.timing);
                tm.into_boxed_slice().try_into().ok()?
            },
            xbar_free: Recs::zeroed(sim.ports.len())?,
            hinj: Recs::from_vec(sim.hosts.iter().map(|h| cx[h.inj as usize]).collect())?,
            dirty_at: Recs::from_vec(vec![Time::MAX; csim.len()])?,
            csim: Recs::from_vec(csim)?,
            vsim: Recs::from_vec(vsim)?,
            // (Until the run takes `Sim::ring`.)
            ring: Recs::zeroed(0)?,
            route,
            rot: (Time::MAX, 0, 0, 0),
            dirty: Vec::new(),
            dirty_sw: Vec::new(),
            asks: Vec::new(),
            want: Recs::zeroed(if R::MULTI { nv } else { 0 })?,
            // (Made last: each array made takes the next cache colour, `recs::color`.)
            va_last: Recs::from_vec(if F::VC_TURN {
                vec![VcIx::NONE; nv]
            } else {
                Vec::new()
            })?,
            sep: None,
            sep_on: false,
            sep_trains: false,
            features: std::marker::PhantomData,
        })
    }
}

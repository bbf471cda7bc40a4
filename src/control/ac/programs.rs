//! The programs the Mosaic node processors and the HIs' kernels run: forwarding exploration
//! packets and reporting edges to the AC (flooding), keeping the route to the AC, and the
//! host kernel's address table, route requests and data flows.

use super::{Atomic, Body, EdgeRep, Piece, Prog, hi_entry, one_hop};
use crate::control::routes::Route;
use crate::engine::agent::Ctl;
use crate::routing::mosaic::{EAST, NORTH, SOUTH, WEST};

impl Atomic<'_> {
    fn prog(&mut self, host: u32, ac: u32, epoch: u32) -> &mut Prog {
        self.progs.entry((host, ac, epoch)).or_default()
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn explore(
        &mut self,
        ctl: &mut Ctl,
        x: u32,
        in_port: u16,
        (ac, epoch): (u32, u32),
        from: Vec<u16>,
        port: u16,
        from_hi: Option<u32>,
    ) {
        let hi = (!self.is_proc(x)).then_some(x);
        if self.acs.get(&ac).is_some_and(|a| a.host == x && a.epoch == epoch) {
            // The AC's own HI.
            let e = EdgeRep {
                from,
                port,
                to: vec![],
                in_port: 0,
                hi: Some(x),
                from_hi,
            };
            self.ac_cpu(ctl, x);
            self.learn(ctl, x, &[e]);
            return;
        }
        let p = self.prog(x, ac, epoch);
        let first = p.label.is_none();
        if first {
            let mut l = from.clone();
            l.extend([port, in_port]);
            p.label = Some(l);
        }
        let me = p.label.clone().expect("set");
        let e = EdgeRep {
            from,
            port,
            to: me.clone(),
            in_port,
            hi,
            from_hi,
        };
        if let Some(r) = p.to_ac.clone() {
            let body = Body::Report {
                ac,
                epoch,
                edges: vec![e],
            };
            self.launch(ctl, x, Self::pieces(&r), 24, body, Some(ac));
        } else {
            p.stored.push(e);
        }
        if first {
            let ports: Vec<u16> = if hi.is_some() {
                vec![u16::MAX]
            } else {
                vec![EAST, WEST, NORTH, SOUTH]
            };
            for q in ports {
                let (bytes, qq) = if q == u16::MAX {
                    let (_, hp) = self.entry(x);
                    ([hi_entry(hp), vec![0, 0]].concat(), 0)
                } else {
                    (one_hop(q), q)
                };
                let body = Body::Explore {
                    ac,
                    epoch,
                    label: me.clone(),
                    port: qq,
                    from_hi: hi,
                };
                self.launch(ctl, x, vec![Piece::Bytes(bytes)], 8, body, Some(ac));
            }
        }
    }

    pub(super) fn install(&mut self, ctl: &mut Ctl, x: u32, ac: u32, epoch: u32, to_ac: Route) {
        if !self.is_proc(x) {
            let k = &mut self.kern[x as usize];
            let newer = k.ac.as_ref().is_none_or(|(a, _)| *a == ac);
            if newer {
                k.ac = Some((ac, to_ac.clone()));
            }
            let waiting: Vec<u32> = std::mem::take(&mut self.kern[x as usize].waiting)
                .into_iter()
                .collect();
            for addr in waiting {
                self.request(ctl, x, addr);
            }
        }
        let p = self.prog(x, ac, epoch);
        p.to_ac = Some(to_ac.clone());
        let stored = std::mem::take(&mut p.stored);
        if !stored.is_empty() {
            let n = stored.len() as u32;
            let body = Body::Report {
                ac,
                epoch,
                edges: stored,
            };
            self.launch(ctl, x, Self::pieces(&to_ac), 16 + 8 * n, body, Some(ac));
        }
    }

    // ---------------------------------------------------------------- host kernels

    fn hb_of(&self, src: u32, addr: u32) -> bool {
        self.cfg
            .flows
            .iter()
            .any(|f| f.src == src && f.dst == addr && f.hb)
    }

    pub(super) fn request(&mut self, ctl: &mut Ctl, x: u32, addr: u32) {
        let Some((ac, r)) = self.kern[x as usize].ac.clone() else {
            self.kern[x as usize].waiting.insert(addr);
            return;
        };
        let hb = self.hb_of(x, addr);
        if self.acs.contains_key(&x) && ac == x {
            self.ac_cpu(ctl, x);
            self.answer_local(ctl, x, addr, hb);
            return;
        }
        let body = Body::RouteReq {
            ac,
            from: x,
            addr,
            hb,
        };
        self.launch(ctl, x, Self::pieces(&r), 16, body, None);
    }

    /// An AC host asking itself: the route goes straight into its table.
    pub(super) fn answer_local(&mut self, ctl: &mut Ctl, h: u32, addr: u32, hb: bool) {
        let Some(g) = self.file_request(h, h, addr, hb) else {
            return;
        };
        let (Some(fi), Some(ti)) = (g.hi_of(h), g.hi_of(addr)) else {
            self.kern[h as usize].waiting.insert(addr);
            return;
        };
        let Some(route) = self.route_for(h, &g, fi, ti, (h, addr), hb) else {
            return;
        };
        let epoch = self.acs[&h].epoch;
        self.given.push((h, addr, route.clone()));
        self.kern[h as usize].table.insert(addr, (epoch, route));
        let _ = ctl;
    }

    pub(super) fn send_data(&mut self, ctl: &mut Ctl, f: usize) {
        let fl = self.cfg.flows[f];
        if self.dead.contains(&fl.src) {
            return;
        }
        match self.kern[fl.src as usize].table.get(&fl.dst).cloned() {
            Some((epoch, route)) => {
                self.flows[f].sent += 1;
                self.flows[f].route = Some(route.clone());
                let body = Body::Data { flow: f, epoch };
                self.launch(ctl, fl.src, Self::pieces(&route), fl.payload, body, None);
            }
            None => {
                // Ask the AC, again only if no answer came for a while.
                let now = ctl.now();
                let k = &mut self.kern[fl.src as usize];
                if k.asked
                    .get(&fl.dst)
                    .is_none_or(|&t| now >= t + self.cfg.complain_after)
                {
                    k.asked.insert(fl.dst, now);
                    self.request(ctl, fl.src, fl.dst);
                }
            }
        }
    }
}

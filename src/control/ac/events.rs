//! What the agent does when the engine calls it: at the start, when a packet is delivered
//! (forwarded on, or handed to the program it is for) and when a timer is due.

use super::{
    Atomic, Body, Fault, Found, Piece, T_ELECT, T_END, T_FAULT, T_FLOW, T_PROBE, T_QUIET, T_SEND, T_WATCH,
    hi_entry, one_hop_exact, tok,
};
use crate::engine::agent::{Agent, Ctl, Delivery};
use crate::time::Time;

impl Atomic<'_> {
    fn arrive(&mut self, ctl: &mut Ctl, x: u32, tag: u64) {
        let Some(mut pk) = self.pkts.remove(&tag) else {
            return;
        };
        if self.dead.contains(&x) {
            return;
        }
        let in_port = pk.in_port;
        if matches!(pk.pieces.front(), Some(Piece::Bytes(_))) {
            pk.pieces.pop_front();
        }
        // A loop probe's far end: mark, and put in the hop back.
        if matches!(pk.pieces.front(), Some(Piece::Return)) {
            if let Body::Probe {
                ac,
                epoch,
                label,
                ref mut found,
                ..
            } = pk.body
            {
                let f = if self.is_proc(x) {
                    let p = self.progs.entry((x, ac, epoch)).or_default();
                    match p.mark {
                        Some(l) => Found::Node { label: l, new: false },
                        None => {
                            p.mark = Some(label);
                            Found::Node { label, new: true }
                        }
                    }
                } else {
                    Found::Hi(x)
                };
                *found = Some(f);
            }
            let back = if self.is_proc(x) {
                one_hop_exact(in_port)
            } else {
                let (_, p) = self.entry(x);
                hi_entry(p)
            };
            pk.pieces[0] = Piece::Bytes(back);
        }
        if !pk.pieces.is_empty() {
            // Store and forward (the node processor, or an HI's kernel: never the AC's
            // user process).
            pk.expect = None;
            self.pkts.insert(tag, pk);
            self.send_leg(ctl, x, tag);
            return;
        }
        if self.acs.contains_key(&x) {
            self.ac_cpu(ctl, x);
        }
        match pk.body {
            Body::Probe {
                ac,
                epoch,
                found: Some(f),
                ..
            } => {
                if ac == x && self.acs.get(&x).is_some_and(|a| a.epoch == epoch) {
                    self.probe_back(ctl, x, tag, f);
                }
            }
            Body::Probe { .. } => {}
            Body::Explore {
                ac,
                epoch,
                label,
                port,
                from_hi,
            } => self.explore(ctl, x, in_port, (ac, epoch), label, port, from_hi),
            Body::Report { ac, epoch, edges } => {
                if ac == x && self.acs.get(&x).is_some_and(|a| a.epoch == epoch) {
                    self.learn(ctl, x, &edges);
                }
            }
            Body::Install { ac, epoch, to_ac } => self.install(ctl, x, ac, epoch, to_ac),
            Body::RouteReq { ac, from, addr, hb } => {
                if self.acs.contains_key(&ac) && ac == x {
                    self.answer(ctl, x, from, addr, hb);
                }
            }
            Body::RouteReply { epoch, addr, route } => {
                self.kern[x as usize].table.insert(addr, (epoch, route));
                // A fresh route gets a fresh chance before any complaint.
                let now = ctl.now();
                for (i, f) in self.cfg.flows.iter().enumerate() {
                    if f.src == x && f.dst == addr {
                        self.flows[i].last_ack = now;
                    }
                }
            }
            Body::Complaint { epoch, .. } => {
                if self.stale(ctl, x, epoch) {
                    self.remap(ctl, x);
                }
            }
            Body::Data { flow, epoch } => {
                let now = ctl.now();
                let fs = &mut self.flows[flow];
                fs.delivered += 1;
                if let Some(e0) = fs.epoch_at_fault
                    && epoch > e0
                    && fs.recovered_at.is_none()
                {
                    fs.recovered_at = Some(now);
                }
                if fs.delivered.is_multiple_of(self.cfg.ack_every as u64) {
                    let src = self.cfg.flows[flow].src;
                    match self.kern[x as usize].table.get(&src).cloned() {
                        Some((_, r)) => {
                            self.launch(ctl, x, Self::pieces(&r), 8, Body::Ack { flow }, None);
                        }
                        None => {
                            let now = ctl.now();
                            let k = &mut self.kern[x as usize];
                            if k.asked
                                .get(&src)
                                .is_none_or(|&t| now >= t + self.cfg.complain_after)
                            {
                                k.asked.insert(src, now);
                                self.request(ctl, x, src);
                            }
                        }
                    }
                }
            }
            Body::Ack { flow } => {
                self.flows[flow].last_ack = ctl.now();
            }
        }
    }
}

impl Agent for Atomic<'_> {
    fn start(&mut self, ctl: &mut Ctl) {
        for h in self.cfg.acs.clone() {
            self.start_ac(ctl, h);
        }
        for (i, &h) in self.cfg.candidates.clone().iter().enumerate() {
            let t = self.cfg.find_timeout + i as Time * self.cfg.stagger;
            ctl.timer(h, t, tok(T_ELECT, h as u64));
        }
        for (i, f) in self.cfg.flows.clone().iter().enumerate() {
            ctl.timer(f.src, f.start, tok(T_FLOW, i as u64));
            ctl.timer(f.src, f.start + self.cfg.complain_after, tok(T_WATCH, i as u64));
        }
        for (i, &(t, _)) in self.cfg.faults.clone().iter().enumerate() {
            ctl.timer(0, t, tok(T_FAULT, i as u64));
        }
        ctl.timer(0, self.cfg.stop_at, tok(T_END, 0));
    }

    fn delivered(&mut self, ctl: &mut Ctl, d: &Delivery) {
        self.arrive(ctl, d.host, d.tag);
    }

    fn timer(&mut self, ctl: &mut Ctl, host: u32, token: u64) {
        let (kind, x) = (token >> 56, token & ((1 << 56) - 1));
        match kind {
            T_SEND => self.send_leg(ctl, host, x),
            T_PROBE => self.probe_timeout(ctl, host, x),
            T_QUIET => {
                if let Some(a) = self.acs.get(&host)
                    && a.mapping
                    && a.epoch as u64 == x
                {
                    // Quiet counts from the last news or the end of the AC's own work.
                    let due = a.last_news.max(a.busy) + self.cfg.quiet;
                    if ctl.now() >= due {
                        self.map_done(ctl, host);
                    } else {
                        ctl.timer(host, due, tok(T_QUIET, x));
                    }
                }
            }
            T_FLOW => {
                let f = x as usize;
                self.send_data(ctl, f);
                let t = ctl.now() + self.cfg.flows[f].period;
                ctl.timer(host, t, tok(T_FLOW, x));
            }
            T_WATCH => {
                let f = x as usize;
                let fl = self.cfg.flows[f];
                let now = ctl.now();
                if self.flows[f].sent > 0 && now >= self.flows[f].last_ack + self.cfg.complain_after {
                    // Delete the route from the address table and tell the AC.
                    let epoch = self.kern[fl.src as usize].table.remove(&fl.dst).map(|r| r.0);
                    self.flows[f].complaints += 1;
                    self.flows[f].last_ack = now;
                    if let Some((ac, r)) = self.kern[fl.src as usize].ac.clone() {
                        if ac == fl.src {
                            if self.stale(ctl, ac, epoch) {
                                self.remap(ctl, ac);
                            }
                        } else {
                            let body = Body::Complaint { epoch };
                            self.launch(ctl, fl.src, Self::pieces(&r), 16, body, None);
                        }
                    }
                }
                ctl.timer(host, now + self.cfg.complain_after / 4, tok(T_WATCH, x));
            }
            T_ELECT => {
                let h = x as u32;
                if self.kern[h as usize].ac.is_none() && !self.acs.contains_key(&h) {
                    self.start_ac(ctl, h);
                }
            }
            T_FAULT => {
                let (_, f) = self.cfg.faults[x as usize];
                if let Fault::Node(n) = f {
                    self.dead.insert(n);
                }
                for (i, fl) in self.cfg.flows.iter().enumerate() {
                    let e = self.kern[fl.src as usize].table.get(&fl.dst).map_or(0, |r| r.0);
                    self.flows[i].epoch_at_fault = Some(e);
                    self.flows[i].recovered_at = None;
                }
            }
            T_END => ctl.stop(),
            _ => {}
        }
    }
}

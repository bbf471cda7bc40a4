//! Fetching ahead: the records that an instant's next events and next dirty channels will
//! touch, asked of the memory a few of them before they are handled. An instant of a large
//! network at low load has thousands of events, each touching records that no cache holds
//! any more (a 256×256 mesh keeps about 350 MB); handled one by one, each waits for its
//! misses in turn. Fetched in stages — a record first, then, once it is in the cache, the
//! records it names — the misses of several events overlap (docs/performance.md). A
//! prefetch is a hint: it reads nothing the model sees, and no result depends on it.

use super::route::XRoute;
use super::*;

/// How many events ahead each stage fetches.
pub(super) const AHEAD_EVENTS: [usize; 3] = [24, 16, 8];
/// How many dirty channels ahead each stage fetches.
pub(super) const AHEAD_DIRTY: [usize; 5] = [20, 16, 12, 8, 4];

/// Flit slots to a cache line.
const SLOTS_A_LINE: u32 = (64 / std::mem::size_of::<Slot>()) as u32;

/// Whether records of `bytes` in all are worth fetching ahead: more than a core's share of
/// the caches close to it (1 MB of L2 on this machine's processor). Below, the records stay
/// in the cache and fetching ahead only costs (the 8×8 mesh of `reef bench` ran 18 % slower
/// with it, the 32×32 one 10 % faster: docs/performance.md). Test builds (the `checked`
/// feature) always fetch ahead, so that every test runs this code with its reads checked.
pub(super) fn worth_it(bytes: usize) -> bool {
    cfg!(feature = "checked") || bytes > 1 << 20
}

impl<R: XRoute, F: XFeat> Express<R, F> {
    /// Stage `stage` (0 to 2) of fetching what event `e` will touch when it is handled:
    /// a routed head's input VC, then its switch, then the output it asks for; a woken
    /// channel, then its sender.
    #[inline(always)]
    pub(super) fn prefetch_event(&self, e: u64, stage: usize) {
        let id = e as u32;
        match (e >> 62, stage) {
            (X_ROUTE, 0) => self.v.prefetch(VcIx(id)),
            (X_ROUTE, 1) => self.sw.prefetch(self.v[VcIx(id)].sw),
            (X_ROUTE, _) => {
                let x = &self.v[VcIx(id)];
                let out = self.sw[x.sw].out(x.port as u32);
                self.ln.prefetch(out);
                self.dirty_at.prefetch(out);
            }
            (X_ROUTE_SW, 0) => self.sw.prefetch(Self::route_sw_event(e).0),
            (X_WAKE, 0) if e & X_AT_SW != 0 => self.sw.prefetch(SwIx(((e & (X_AT_SW - 1)) >> 6) as u32)),
            (X_WAKE, _) if e & X_AT_SW != 0 => {}
            (X_WAKE, 0) => self.ln.prefetch(ChIx(id)),
            (X_WAKE, 1) => {
                let c = ChIx(id);
                if let Some(s) = self.switch(self.ln[c].src) {
                    self.sw.prefetch(s);
                }
                self.dirty_at.prefetch(c);
            }
            _ => {}
        }
    }

    /// Stage `stage` (0 to 4) of fetching what dirty channel `c` will touch when its sender
    /// acts: the channel, then its sender and first VC, then that VC's ring and the input VC
    /// whose worm holds it (or will), then the flit at that input's front, then what the
    /// routing step of a head there reads at the next switch.
    #[inline(always)]
    pub(super) fn prefetch_dirty(&self, c: ChIx, stage: usize) {
        match stage {
            0 => self.ln.prefetch(c),
            1 => {
                let l = &self.ln[c];
                if let Some(s) = self.switch(l.src) {
                    self.sw.prefetch(s);
                }
                self.v.prefetch(l.vc_base);
            }
            2 => {
                if let Some(i) = self.next_owner(c) {
                    self.v.prefetch(i);
                }
                // The first VC's ring: the slots its credits come back to (the next
                // cache line too: collecting them may read on into it) and the one its
                // next flit lands in.
                let o = &self.v[self.ln[c].vc_base];
                self.ring.prefetch(o.slot(o.cr));
                self.ring.prefetch(o.slot(o.cr.wrapping_add(SLOTS_A_LINE)));
                self.ring.prefetch(o.slot(o.tl));
            }
            3 => {
                if let Some(i) = self.next_owner(c) {
                    // Its front, and the next line, where the flit behind a train is.
                    let x = &self.v[i];
                    self.ring.prefetch(x.slot(x.hd));
                    self.ring.prefetch(x.slot(x.hd.wrapping_add(SLOTS_A_LINE)));
                }
            }
            _ => {
                // A head at that front is routed at the next switch as it is sent: what
                // its routing step reads there.
                if let Some(i) = self.next_owner(c) {
                    let x = &self.v[i];
                    let f = &self.ring[x.slot(x.hd)];
                    let next = self.v[self.ln[c].vc_base].sw;
                    if f.flit & HEAD != 0 && next != SwIx::NONE {
                        self.route.prefetch(next.0, f.dst & DST_MASK);
                    }
                }
            }
        }
    }

    /// The input VC whose worm will hold the first VC of channel `c` when its sender acts:
    /// the one that holds it, or the requester a round-robin grant would pick now (a guess
    /// for what to fetch; the grant itself is `serve_one`'s or `allocate`'s).
    #[inline(always)]
    fn next_owner(&self, c: ChIx) -> Option<VcIx> {
        let l = &self.ln[c];
        let owner = self.v[l.vc_base].owner;
        if owner < VcIx::HELD {
            return Some(owner);
        }
        if l.req == 0 {
            return None;
        }
        let s = self.switch(l.src)?;
        let after = after_last(l.req, l.va_rr);
        let k = if after != 0 { after } else { l.req }.trailing_zeros();
        Some(self.sw[s].input(k))
    }
}

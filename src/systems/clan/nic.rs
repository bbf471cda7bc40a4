//! The CLAN NIC's synchronisation hardware: Tripwire, a content-addressable memory that
//! watches the NIC's transfers to host memory for writes to application-chosen addresses or
//! ranges, and the event queue its matches feed, whose descriptor is readable while it
//! holds events (`shared/systems/clan.md`, "Tripwire"; the CLAN project's Tripwire page for
//! the 30 ns match cycle). Sizes: [`super::params::TRIPWIRE_ENTRIES`] and
//! [`super::params::EVENT_QUEUE_EVENTS`], both ASSUMED.
//!
//! A CAM matches a key against value/mask entries, so a watched range becomes the aligned
//! power-of-two blocks that cover it exactly (the usual range-to-prefix expansion): one
//! entry for an aligned block, up to 2·64 − 2 for an arbitrary range. A transfer matches a
//! watch if any byte it writes lies in the range; every matching watch fires, in the order
//! the watches were set.

use std::collections::VecDeque;
use thiserror::Error;

/// Why a watch could not be set.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TripwireError {
    /// The range is empty or wraps.
    #[error("a watched range must have lo <= hi (got {lo:#x}..={hi:#x})")]
    BadRange { lo: u64, hi: u64 },
    /// Not enough free CAM entries for the range's blocks.
    #[error("the Tripwire CAM is full: the range needs {needed} entries, {free} of {capacity} are free")]
    Full {
        needed: usize,
        free: usize,
        capacity: usize,
    },
    /// No watch has this id.
    #[error("no watch {0}")]
    NoWatch(u32),
}

/// One CAM entry: the addresses `a` with `a & !mask == value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub value: u64,
    /// Bits that do not take part in the match (a block of 2^k bytes: the low k bits).
    pub mask: u64,
    /// The watch the entry belongs to.
    pub watch: u32,
}

/// The aligned blocks `(base, mask)` that cover `lo..=hi` exactly, largest first from `lo`.
pub fn blocks(lo: u64, hi: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut a = lo;
    loop {
        // The largest block aligned at `a` that does not pass `hi`: 2^k bytes with k at
        // most a's alignment and 2^k - 1 at most hi - a.
        let align = if a == 0 { 64 } else { a.trailing_zeros() };
        let span = hi - a;
        let fits = if span == u64::MAX {
            64
        } else {
            63 - (span + 1).leading_zeros()
        };
        let k = align.min(fits);
        let mask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
        out.push((a, mask));
        let end = a + mask;
        if end >= hi {
            break;
        }
        a = end + 1;
    }
    out
}

/// The Tripwire CAM.
#[derive(Debug, Clone)]
pub struct Tripwire {
    capacity: usize,
    entries: Vec<Entry>,
    /// Watch id → (lo, hi, the action's token), in the order set.
    watches: Vec<(u32, u64, u64, u64)>,
    next_id: u32,
}

impl Tripwire {
    pub fn new(capacity: usize) -> Tripwire {
        Tripwire {
            capacity,
            entries: Vec::new(),
            watches: Vec::new(),
            next_id: 0,
        }
    }

    /// CAM entries in use.
    pub fn used(&self) -> usize {
        self.entries.len()
    }

    /// Watches `lo..=hi`; a match fires `token`. Returns the watch's id.
    pub fn watch(&mut self, lo: u64, hi: u64, token: u64) -> Result<u32, TripwireError> {
        if lo > hi {
            return Err(TripwireError::BadRange { lo, hi });
        }
        let bl = blocks(lo, hi);
        let free = self.capacity - self.entries.len();
        if bl.len() > free {
            return Err(TripwireError::Full {
                needed: bl.len(),
                free,
                capacity: self.capacity,
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        self.entries.extend(bl.into_iter().map(|(value, mask)| Entry {
            value,
            mask,
            watch: id,
        }));
        self.watches.push((id, lo, hi, token));
        Ok(id)
    }

    /// Removes a watch and frees its entries.
    pub fn unwatch(&mut self, id: u32) -> Result<(), TripwireError> {
        let i = self
            .watches
            .iter()
            .position(|w| w.0 == id)
            .ok_or(TripwireError::NoWatch(id))?;
        self.watches.remove(i);
        self.entries.retain(|e| e.watch != id);
        Ok(())
    }

    /// The tokens of every watch a write of `len` bytes at `addr` matches, in the order the
    /// watches were set. The hardware compares the transfer's addresses against every entry
    /// in one match cycle; the model asks whether any entry's block meets the written range.
    pub fn matches(&self, addr: u64, len: u64) -> Vec<u64> {
        if len == 0 {
            return Vec::new();
        }
        let last = addr.saturating_add(len - 1);
        let hit = |e: &Entry| e.value <= last && e.value.saturating_add(e.mask) >= addr;
        self.watches
            .iter()
            .filter(|w| self.entries.iter().any(|e| e.watch == w.0 && hit(e)))
            .map(|w| w.3)
            .collect()
    }
}

/// The event queue: events in arrival order; readable while non-empty; an interrupt is due
/// when an event arrives and a sleeper has armed it.
#[derive(Debug, Clone)]
pub struct EventQueue {
    capacity: usize,
    events: VecDeque<u64>,
    armed: bool,
    /// Events lost because the queue was full (the library must then rescan its endpoints).
    pub overflows: u64,
}

/// What an arriving event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Queued; nobody is asleep on the queue.
    Queued,
    /// Queued, and the queue was armed: raise an interrupt to wake the sleeper.
    Interrupt,
    /// The queue was full: the event is lost and counted.
    Overflow,
}

impl EventQueue {
    pub fn new(capacity: usize) -> EventQueue {
        EventQueue {
            capacity,
            events: VecDeque::new(),
            armed: false,
            overflows: 0,
        }
    }

    /// `select` would report the descriptor readable.
    pub fn readable(&self) -> bool {
        !self.events.is_empty()
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// A process about to sleep in `select` arms the queue; returns false (do not sleep)
    /// if events are already there.
    pub fn arm(&mut self) -> bool {
        if self.readable() {
            return false;
        }
        self.armed = true;
        true
    }

    /// The NIC appends an event.
    pub fn push(&mut self, ev: u64) -> Arrival {
        if self.events.len() >= self.capacity {
            self.overflows += 1;
            return Arrival::Overflow;
        }
        self.events.push_back(ev);
        if std::mem::replace(&mut self.armed, false) {
            Arrival::Interrupt
        } else {
            Arrival::Queued
        }
    }

    /// The handler takes the oldest event.
    pub fn pop(&mut self) -> Option<u64> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_aligned_block_is_one_entry_and_a_range_its_prefixes() {
        assert_eq!(blocks(0x1000, 0x1fff), vec![(0x1000, 0xfff)]);
        assert_eq!(blocks(8, 8), vec![(8, 0)]);
        // 1..=6: 1, 2-3, 4-5, 6.
        assert_eq!(blocks(1, 6), vec![(1, 0), (2, 1), (4, 1), (6, 0)]);
        assert_eq!(blocks(0, u64::MAX), vec![(0, u64::MAX)]);
        assert_eq!(blocks(u64::MAX, u64::MAX), vec![(u64::MAX, 0)]);
    }

    #[test]
    fn range_watches_match_exactly_their_bytes() {
        let mut t = Tripwire::new(64);
        t.watch(100, 199, 7).unwrap();
        assert_eq!(t.matches(100, 1), vec![7]);
        assert_eq!(t.matches(199, 1), vec![7]);
        assert_eq!(t.matches(90, 11), vec![7], "a write ending on the first byte");
        assert!(t.matches(90, 10).is_empty(), "a write ending just before");
        assert!(t.matches(200, 8).is_empty());
        assert!(t.matches(150, 0).is_empty(), "an empty write");
    }

    #[test]
    fn overlapping_watches_all_fire_in_the_order_set() {
        let mut t = Tripwire::new(64);
        let a = t.watch(0, 1023, 1).unwrap();
        t.watch(512, 520, 2).unwrap();
        t.watch(516, 516, 3).unwrap();
        assert_eq!(t.matches(514, 4), vec![1, 2, 3]);
        assert_eq!(t.matches(100, 8), vec![1]);
        t.unwatch(a).unwrap();
        assert_eq!(t.matches(514, 4), vec![2, 3]);
        assert_eq!(t.unwatch(a), Err(TripwireError::NoWatch(a)));
    }

    #[test]
    fn a_full_cam_refuses_a_watch_and_frees_entries_on_unwatch() {
        let mut t = Tripwire::new(4);
        // 1..=6 needs four entries.
        let w = t.watch(1, 6, 0).unwrap();
        assert_eq!(t.used(), 4);
        assert_eq!(
            t.watch(64, 64, 1),
            Err(TripwireError::Full {
                needed: 1,
                free: 0,
                capacity: 4
            })
        );
        t.unwatch(w).unwrap();
        assert_eq!(t.used(), 0);
        t.watch(64, 127, 1).unwrap();
        assert_eq!(t.used(), 1);
        assert!(matches!(t.watch(5, 4, 0), Err(TripwireError::BadRange { .. })));
    }

    #[test]
    fn event_queue_readable_armed_and_overflow() {
        let mut q = EventQueue::new(2);
        assert!(!q.readable());
        assert_eq!(q.push(1), Arrival::Queued);
        assert!(!q.arm(), "events waiting: no sleep");
        assert_eq!(q.pop(), Some(1));
        assert!(q.arm());
        assert_eq!(q.push(2), Arrival::Interrupt);
        assert_eq!(q.push(3), Arrival::Queued, "the interrupt was taken once");
        assert_eq!(q.push(4), Arrival::Overflow);
        assert_eq!(q.overflows, 1);
        assert_eq!((q.pop(), q.pop(), q.pop()), (Some(2), Some(3), None));
    }

    proptest! {
        /// The blocks of a range are aligned, disjoint, contiguous and cover it exactly,
        /// and there are at most 2·64 of them.
        #[test]
        fn blocks_cover_a_range_exactly(lo in any::<u64>(), len in 0u64..1 << 40) {
            let hi = lo.saturating_add(len);
            let b = blocks(lo, hi);
            prop_assert!(b.len() <= 128);
            let mut next = lo;
            for &(base, mask) in &b {
                prop_assert_eq!(base, next);
                prop_assert_eq!(base & mask, 0, "aligned");
                prop_assert!((mask.wrapping_add(1)).is_power_of_two() || mask == u64::MAX);
                next = base.wrapping_add(mask).wrapping_add(1);
            }
            prop_assert_eq!(next.wrapping_sub(1), hi);
        }

        /// A write matches a watch exactly when the two byte ranges meet.
        #[test]
        fn matching_is_range_intersection(lo in 0u64..4096, w in 0u64..512, a in 0u64..5000, l in 1u64..64) {
            let mut t = Tripwire::new(256);
            t.watch(lo, lo + w, 9).unwrap();
            let meets = a <= lo + w && a + l > lo;
            prop_assert_eq!(t.matches(a, l) == vec![9], meets);
        }
    }
}

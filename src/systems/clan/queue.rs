//! The CLAN Queue's flow control (`shared/systems/clan.md`, "Queue"): a ring of
//! [`super::params::QUEUE_BYTES`] in the receiver's memory that the sender writes through
//! an aperture, a write pointer the sender publishes after the data, and a read pointer the
//! receiver writes back into the sender's memory lazily, when it has consumed at least
//! `lazy` bytes since it last did. The sender writes only into space it knows is free (as
//! the last read pointer to land tells it), so it never overwrites unread data, and it
//! blocks when the ring is full.
//!
//! Pointers are byte counts since the start (they never wrap); the ring offset of a pointer
//! is its value modulo the capacity.

/// One direction of a Queue, as both ends see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    cap: u64,
    lazy: u64,
    /// Bytes the sender has written.
    wr: u64,
    /// The write pointer as it has landed in the receiver's memory.
    wr_seen: u64,
    /// Bytes the receiver has consumed.
    rd: u64,
    /// The read pointer the receiver last wrote back.
    rd_written: u64,
    /// The read pointer as it has landed in the sender's memory.
    rd_seen: u64,
}

impl Ring {
    /// A ring of `cap` bytes whose receiver writes its read pointer back every `lazy`
    /// consumed bytes (`1..=cap`; the default is half the ring).
    pub fn new(cap: u64, lazy: u64) -> Ring {
        assert!(cap > 0 && (1..=cap).contains(&lazy), "ring {cap}, lazy {lazy}");
        Ring {
            cap,
            lazy,
            wr: 0,
            wr_seen: 0,
            rd: 0,
            rd_written: 0,
            rd_seen: 0,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.cap
    }

    /// Space the sender knows is free [bytes].
    pub fn free(&self) -> u64 {
        self.cap - (self.wr - self.rd_seen)
    }

    /// Bytes written in all.
    pub fn written(&self) -> u64 {
        self.wr
    }

    /// Bytes consumed in all.
    pub fn consumed(&self) -> u64 {
        self.rd
    }

    /// Bytes the receiver can see and has not consumed.
    pub fn readable(&self) -> u64 {
        self.wr_seen - self.rd
    }

    /// The sender writes up to `want` bytes: as many as it knows are free. Returns the ring
    /// offset they start at and how many (0: the ring is full and the sender blocks), and
    /// the new write pointer to publish.
    pub fn write(&mut self, want: u64) -> (u64, u64, u64) {
        let n = want.min(self.free());
        let at = self.wr % self.cap;
        self.wr += n;
        (at, n, self.wr)
    }

    /// A published write pointer lands in the receiver's memory.
    pub fn land_wr(&mut self, wr: u64) {
        debug_assert!(wr <= self.wr);
        self.wr_seen = self.wr_seen.max(wr);
    }

    /// The receiver consumes `n` of the bytes it can see; returns the read pointer to
    /// write back if one is due.
    pub fn consume(&mut self, n: u64) -> Option<u64> {
        assert!(
            n <= self.readable(),
            "consuming {n} of {} readable",
            self.readable()
        );
        self.rd += n;
        if self.rd - self.rd_written >= self.lazy {
            self.rd_written = self.rd;
            Some(self.rd)
        } else {
            None
        }
    }

    /// A written-back read pointer lands in the sender's memory.
    pub fn land_rd(&mut self, rd: u64) {
        debug_assert!(rd <= self.rd);
        self.rd_seen = self.rd_seen.max(rd);
    }

    /// Bytes in the ring that the receiver has not consumed: never more than its capacity.
    pub fn unread(&self) -> u64 {
        self.wr - self.rd
    }
}

/// The pieces `(offset, len)` of `n` bytes written at ring offset `at` of a ring of `cap`
/// bytes, split where the ring wraps.
pub fn pieces(at: u64, n: u64, cap: u64) -> [(u64, u64); 2] {
    let first = n.min(cap - at);
    [(at, first), (0, n - first)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_full_ring_blocks_until_the_read_pointer_lands() {
        let mut r = Ring::new(100, 50);
        assert_eq!(r.write(70), (0, 70, 70));
        assert_eq!(r.write(70), (70, 30, 100), "only what is free");
        assert_eq!(r.write(1).1, 0, "full: the sender blocks");
        r.land_wr(100);
        assert_eq!(r.consume(40), None, "40 < lazy 50: no write-back yet");
        assert_eq!(r.write(1).1, 0, "consumed but not written back: still blocked");
        assert_eq!(r.consume(20), Some(60));
        assert_eq!(r.write(1).1, 0, "written back but not landed");
        r.land_rd(60);
        assert_eq!(r.free(), 60);
        assert_eq!(r.write(100), (0, 60, 160), "wraps to offset 0");
        assert_eq!(pieces(70, 50, 100), [(70, 30), (0, 20)]);
        assert_eq!(pieces(0, 10, 100), [(0, 10), (0, 0)]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Send(u64),
        LandWr,
        Consume,
        LandRd,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u64..3000).prop_map(Op::Send),
            Just(Op::LandWr),
            Just(Op::Consume),
            Just(Op::LandRd),
        ]
    }

    proptest! {
        /// Whatever the order in which writes, landings and reads happen, the sender never
        /// has more than the ring's capacity unread (it never overwrites unread data), and
        /// when everything has landed and been read, a blocked sender can go on: the lazy
        /// write-back never leaves it waiting for ever.
        #[test]
        fn never_overwrites_and_never_deadlocks(
            cap in 64u64..4096, lazy_frac in 1u64..=4, ops in prop::collection::vec(op(), 1..400)
        ) {
            let lazy = (cap * lazy_frac / 4).max(1);
            let mut r = Ring::new(cap, lazy);
            let mut wr_pending: Vec<u64> = Vec::new();
            let mut rd_pending: Vec<u64> = Vec::new();
            for o in ops {
                match o {
                    Op::Send(n) => {
                        let (_, k, p) = r.write(n);
                        if k > 0 { wr_pending.push(p); }
                    }
                    Op::LandWr => if !wr_pending.is_empty() { r.land_wr(wr_pending.remove(0)); },
                    Op::Consume => {
                        let n = r.readable();
                        if let Some(p) = r.consume(n) { rd_pending.push(p); }
                    }
                    Op::LandRd => if !rd_pending.is_empty() { r.land_rd(rd_pending.remove(0)); },
                }
                prop_assert!(r.unread() <= cap, "unread {} > cap {cap}", r.unread());
                prop_assert!(r.free() <= cap);
            }
            // Drain: land and read everything; a full ring must then have room.
            for p in wr_pending.drain(..) { r.land_wr(p); }
            let n = r.readable();
            if let Some(p) = r.consume(n) { rd_pending.push(p); }
            for p in rd_pending.drain(..) { r.land_rd(p); }
            if r.free() == 0 {
                prop_assert!(false, "deadlock: everything read, the sender still sees a full ring");
            }
        }
    }
}

//! The event calendar.
//!
//! Nearly every event is scheduled a fixed delay after the present: a flit arrives one flit
//! time plus the propagation delay after it is sent, a credit one credit delay after its flit
//! left, a routed head one router delay after it reached the front. Events of one delay
//! class are therefore pushed in time order, and a FIFO per class is already sorted: pushing
//! and popping are O(1), and the next time is the least of the FIFO fronts. With few classes
//! the fronts are scanned at every instant; with many (a network of many timings: the
//! Macramé Clos has 61, and most of its instants have one event), a binary heap of the
//! non-empty classes keeps them in order instead (the scan was a quarter of that run).
//! An event pushed at an explicit time that is some class's delay after the present still
//! goes to that class's FIFO (a head that starts when a train's tail has passed, j flit times
//! plus a router delay from now, has classes made for it). Events at other times (packet
//! arrivals at sources) go to a radix heap: the engine never schedules into the past, so keys
//! only grow, and a radix heap pushes in O(1) and pops in amortised O(log of the time span)
//! without comparing tuples as a binary heap does.
//!
//! Events carry a 64-bit payload. The engine processes all events of one time before it lets
//! any component act, and components at one time act independently, so the order in which
//! equal-time events leave the queue does not change any result (DESIGN.md: no result depends
//! on insertion order).

use crate::time::Time;

/// A delay class: events scheduled `delay` after the present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class(pub u16);

/// A FIFO of timed events in a power-of-two ring that doubles when full.
#[derive(Debug)]
struct Ring {
    buf: Vec<(Time, u64)>,
    head: usize,
    len: usize,
    /// The length at which a push takes the slow path ([`EventQueue::push_slow`]): the
    /// ring's size (it must grow), or 0 for an empty class the heap of fronts does not
    /// hold (it must enter), so that the fast path tests one thing either way.
    limit: usize,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            buf: vec![(0, 0); 1024],
            head: 0,
            len: 0,
            limit: 1024,
        }
    }

    /// Pushes `x`, if neither the ring must grow nor its class enter the heap (`false`).
    // (Always inlined: one caller, the send path, got it out of line.)
    #[inline(always)]
    fn push_fast(&mut self, x: (Time, u64)) -> bool {
        if self.len == self.limit {
            return false;
        }
        let mask = self.buf.len() - 1;
        self.buf[(self.head + self.len) & mask] = x;
        self.len += 1;
        true
    }

    #[cold]
    fn grow(&mut self) {
        let n = self.buf.len();
        let mut nb = Vec::with_capacity(2 * n);
        for k in 0..self.len {
            nb.push(self.buf[(self.head + k) & (n - 1)]);
        }
        nb.resize(2 * n, (0, 0));
        self.buf = nb;
        self.head = 0;
        self.limit = 2 * n;
    }

    #[inline]
    fn front_time(&self) -> Option<Time> {
        (self.len > 0).then(|| self.buf[self.head].0)
    }

    /// The event `d` places behind the front, if there is one.
    #[inline(always)]
    fn peek(&self, d: usize) -> Option<u64> {
        (d < self.len).then(|| self.buf[(self.head + d) & (self.buf.len() - 1)].1)
    }

    #[inline]
    fn pop_if(&mut self, t: Time) -> Option<u64> {
        if self.len > 0 {
            let (ft, ev) = self.buf[self.head];
            if ft == t {
                self.head = (self.head + 1) & (self.buf.len() - 1);
                self.len -= 1;
                return Some(ev);
            }
        }
        None
    }
}

/// A monotone priority queue of timed events (Ahuja, Mehlhorn, Orlin, Tarjan 1990): bucket
/// b > 0 holds the events whose time first differs from `last` in bit b - 1, bucket 0 those
/// at `last` itself. `last` is the time of the last pop and never exceeds any key.
#[derive(Debug)]
struct RadixHeap {
    last: Time,
    buckets: Vec<Vec<(Time, u64)>>,
    len: usize,
    /// The smallest key (`Time::MAX` if empty).
    min: Time,
}

impl Default for RadixHeap {
    fn default() -> RadixHeap {
        RadixHeap {
            last: 0,
            buckets: vec![Vec::new(); 65],
            len: 0,
            min: Time::MAX,
        }
    }
}

impl RadixHeap {
    #[inline]
    fn bucket(last: Time, t: Time) -> usize {
        if t == last {
            0
        } else {
            64 - (t ^ last).leading_zeros() as usize
        }
    }

    #[inline]
    fn push(&mut self, t: Time, ev: u64) {
        assert!(t >= self.last, "event scheduled in the past: {t} < {}", self.last);
        self.buckets[Self::bucket(self.last, t)].push((t, ev));
        self.len += 1;
        self.min = self.min.min(t);
    }

    /// Removes and returns one event at time `t` if `t` is the smallest key.
    #[inline]
    fn pop_if(&mut self, t: Time) -> Option<u64> {
        if self.min != t {
            return None;
        }
        if self.last != t || self.buckets[0].is_empty() {
            // The smallest key is in the lowest non-empty bucket: spread that bucket over
            // the lower ones, relative to the new `last`.
            let b = (1..65).find(|&b| !self.buckets[b].is_empty())?;
            self.last = t;
            let mut moving = std::mem::take(&mut self.buckets[b]);
            for &(k, e) in &moving {
                self.buckets[Self::bucket(t, k)].push((k, e));
            }
            moving.clear();
            self.buckets[b] = moving;
        }
        let (_, ev) = self.buckets[0].pop()?;
        self.len -= 1;
        if self.buckets[0].is_empty() {
            self.min = (1..65)
                .find(|&b| !self.buckets[b].is_empty())
                .map_or(Time::MAX, |b| {
                    self.buckets[b].iter().map(|x| x.0).min().unwrap_or(Time::MAX)
                });
        }
        Some(ev)
    }
}

/// Entries of the delay-to-class table [`EventQueue::push_at`] looks in.
const LUT: usize = 256;

#[derive(Debug)]
pub struct EventQueue {
    delays: Vec<Time>,
    fifos: Vec<Ring>,
    /// The classes with events, each as `(front time, class)`, a binary min-heap: the
    /// root is the next class due, and classes due at one time come in class order. A
    /// class's entry changes only when it is taken (its front is popped) or when a push
    /// finds it empty (pushes into a class come in time order).
    /// (A class is out of it exactly when its ring's `limit` is 0.)
    fronts: Vec<(Time, u32)>,
    /// Whether the fronts are scanned rather than kept in `fronts`: while there are at most
    /// [`Self::SCAN_MAX`] classes.
    scan: bool,
    /// With `scan`: the classes whose front is at the time [`Self::next_time`] last
    /// returned, as bits.
    due: Vec<u64>,
    /// The class an instant is popping ([`Self::due_class_from`]), still at the root of
    /// `fronts` with its old front until the next call settles it (`u32::MAX`: none).
    taken: u32,
    /// The time [`Self::next_time`] last returned (with the heap).
    at: Time,
    heap: RadixHeap,
    /// Delay → class, so that an event pushed at an explicit time that happens to be a class
    /// delay after the present goes to that class's FIFO instead of the heap: entry
    /// `(delay >> lut_shift) % LUT` holds `(delay, class)` (`Time::MAX`: empty). Delays that
    /// collide with an earlier class keep going to the heap (correct, only slower).
    lut: Vec<(Time, u16)>,
    lut_shift: u32,
}

impl Default for EventQueue {
    fn default() -> EventQueue {
        EventQueue {
            delays: Vec::new(),
            fifos: Vec::new(),
            fronts: Vec::new(),
            scan: true,
            due: Vec::new(),
            taken: u32::MAX,
            at: 0,
            heap: RadixHeap::default(),
            lut: vec![(Time::MAX, 0); LUT],
            lut_shift: 0,
        }
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    #[inline(always)]
    fn lut_index(&self, delay: Time) -> usize {
        (delay >> self.lut_shift) as usize & (LUT - 1)
    }

    /// The class for events `delay` ps after the present, created on first use (build time
    /// only). `delay` must be positive.
    pub fn class(&mut self, delay: Time) -> Class {
        assert!(delay > 0, "zero-delay events are handled inline, not queued");
        if let Some(i) = self.delays.iter().position(|&d| d == delay) {
            return Class(i as u16);
        }
        self.delays.push(delay);
        let mut ring = Ring::new();
        if !self.scan {
            ring.limit = 0;
        }
        self.fifos.push(ring);
        self.due.resize(self.fifos.len().div_ceil(64), 0);
        if self.scan && self.fifos.len() > Self::SCAN_MAX {
            self.take_up_heap();
        }
        // The table indexes delays by their bits above the zeros all delays share.
        self.lut_shift = self.delays.iter().map(|d| d.trailing_zeros()).min().unwrap_or(0);
        self.lut.fill((Time::MAX, 0));
        for (k, &d) in self.delays.iter().enumerate() {
            let x = self.lut_index(d);
            if self.lut[x].0 == Time::MAX {
                self.lut[x] = (d, k as u16);
            }
        }
        Class(self.delays.len() as u16 - 1)
    }

    pub fn classes(&self) -> usize {
        self.delays.len()
    }

    /// Schedules `ev` at `now + delay(class)`.
    #[inline(always)]
    pub fn push(&mut self, class: Class, now: Time, ev: u64) {
        let k = class.0 as usize;
        let t = now + self.delays[k];
        if !self.fifos[k].push_fast((t, ev)) {
            self.push_slow(k, (t, ev));
        }
    }

    /// Schedules `ev` at any time `t` (not before `now`): in the FIFO of the class whose
    /// delay is `t - now`, if there is one, else in the heap.
    #[inline(always)]
    pub fn push_at(&mut self, now: Time, t: Time, ev: u64) {
        let d = t.wrapping_sub(now);
        let (delay, k) = self.lut[self.lut_index(d)];
        if delay == d {
            if !self.fifos[k as usize].push_fast((t, ev)) {
                self.push_slow(k as usize, (t, ev));
            }
        } else {
            self.heap.push(t, ev);
        }
    }

    /// Pushes `x` into class `k` when the fast path cannot: the ring grows, or the class,
    /// empty and out of the heap of fronts, enters it.
    #[inline(never)]
    fn push_slow(&mut self, k: usize, x: (Time, u64)) {
        let f = &mut self.fifos[k];
        if f.len == f.buf.len() {
            f.grow();
        }
        if f.len == 0 {
            // (Only with the heap: a scanned ring's `limit` is never 0.)
            f.limit = f.buf.len();
            self.enter(k, x.0);
        }
        let pushed = self.fifos[k].push_fast(x);
        debug_assert!(pushed);
    }

    /// Gives class `k`, its front now at `t`, its entry in `fronts` (with the heap).
    fn enter(&mut self, k: usize, t: Time) {
        debug_assert!(!self.scan);
        self.fronts.push((t, k as u32));
        self.sift_up(self.fronts.len() - 1);
    }

    fn sift_up(&mut self, mut i: usize) {
        let x = self.fronts[i];
        while i > 0 {
            let up = (i - 1) / 2;
            if self.fronts[up] <= x {
                break;
            }
            self.fronts[i] = self.fronts[up];
            i = up;
        }
        self.fronts[i] = x;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.fronts.len();
        let x = self.fronts[i];
        loop {
            let mut c = 2 * i + 1;
            if c >= n {
                break;
            }
            if c + 1 < n && self.fronts[c + 1] < self.fronts[c] {
                c += 1;
            }
            if x <= self.fronts[c] {
                break;
            }
            self.fronts[i] = self.fronts[c];
            i = c;
        }
        self.fronts[i] = x;
    }

    /// Puts the class taken last back in its place by its new front, or out if it is empty.
    #[inline]
    fn settle(&mut self) {
        if self.taken == u32::MAX {
            return;
        }
        let k = self.taken as usize;
        self.taken = u32::MAX;
        match self.fifos[k].front_time() {
            Some(f) => self.fronts[0] = (f, k as u32),
            None => {
                self.fifos[k].limit = 0;
                let last = self.fronts.pop().expect("the taken class is at the root");
                if self.fronts.is_empty() {
                    return;
                }
                self.fronts[0] = last;
            }
        }
        self.sift_down(0);
    }

    /// Classes up to which the fronts are scanned: a scan of a few cache lines costs less
    /// than the heap's upkeep when an instant has several classes due, as on a cube's
    /// synchronous clock (`reef bench`'s 20 classes: the heap made it 5–8 % slower).
    const SCAN_MAX: usize = 24;

    /// The earliest scheduled time.
    #[inline(always)]
    pub fn next_time(&mut self) -> Option<Time> {
        if self.scan {
            return self.scan_fronts();
        }
        self.heap_next_time()
    }

    /// [`Self::next_time`] from the heap of fronts.
    #[inline(never)]
    fn heap_next_time(&mut self) -> Option<Time> {
        self.settle();
        let m = self.fronts.first().map_or(Time::MAX, |f| f.0);
        let t = if self.heap.len > 0 {
            self.heap.min.min(m)
        } else {
            m
        };
        self.at = t;
        (!self.fronts.is_empty() || self.heap.len > 0).then_some(t)
    }

    /// Goes from the scan to the heap (when the classes made outnumber
    /// [`Self::SCAN_MAX`]), entering the classes that have events. (Classes are made as the
    /// engine is built, never in the middle of an instant.)
    #[cold]
    fn take_up_heap(&mut self) {
        self.scan = false;
        for k in 0..self.fifos.len() {
            match self.fifos[k].front_time() {
                Some(t) => self.enter(k, t),
                None => self.fifos[k].limit = 0,
            }
        }
    }

    /// [`Self::next_time`] by a scan of every class's front.
    #[inline(always)]
    fn scan_fronts(&mut self) -> Option<Time> {
        let mut t = if self.heap.len > 0 {
            self.heap.min
        } else {
            Time::MAX
        };
        let mut any = self.heap.len > 0;
        for w in 0..self.due.len() {
            let mut bits = 0u64;
            let fifos = &self.fifos[w << 6..self.fifos.len().min((w + 1) << 6)];
            for (b, f) in fifos.iter().enumerate() {
                if let Some(ft) = f.front_time() {
                    any = true;
                    if ft < t {
                        // An earlier time: the classes noted so far are not due.
                        t = ft;
                        bits = 0;
                        self.due[..w].fill(0);
                    }
                    if ft == t {
                        bits |= 1 << b;
                    }
                }
            }
            self.due[w] = bits;
        }
        any.then_some(t)
    }

    /// The next class with events at the time [`Self::next_time`] last returned, in class
    /// order: an instant pops each such class with [`Self::pop_class`] until it has no more
    /// at that time, then asks for the next, from the class after it (`k`; the heap
    /// knows without it). (Events pushed meanwhile are later: a class's delay is never
    /// zero.)
    #[inline(always)]
    pub fn due_class_from(&mut self, k: usize) -> Option<usize> {
        if self.scan {
            return self.scan_due(k);
        }
        self.settle();
        match self.fronts.first() {
            Some(&(f, k)) if f == self.at => {
                self.taken = k;
                Some(k as usize)
            }
            _ => None,
        }
    }

    /// With the scan: the first due class from `k` on.
    #[inline(always)]
    fn scan_due(&self, k: usize) -> Option<usize> {
        let mut w = k >> 6;
        let mut bits = *self.due.get(w)? & (u64::MAX << (k & 63));
        loop {
            if bits != 0 {
                return Some((w << 6) + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.due.get(w)?;
        }
    }

    /// Removes and returns the next event of class `k` if it is scheduled at exactly `t`.
    #[inline(always)]
    pub fn pop_class(&mut self, k: usize, t: Time) -> Option<u64> {
        self.fifos[k].pop_if(t)
    }

    /// The event of class `k` that `d` more pops will reach, whatever its time (to fetch
    /// what it will touch ahead of it: [`Self::pop_class`] decides what is due).
    #[inline(always)]
    pub fn peek_class(&self, k: usize, d: usize) -> Option<u64> {
        self.fifos[k].peek(d)
    }

    /// Removes and returns the next heap event if it is scheduled at exactly `t`.
    #[inline]
    pub fn pop_heap(&mut self, t: Time) -> Option<u64> {
        self.heap.pop_if(t)
    }

    /// Removes and returns one event scheduled at exactly `t`, if any is left.
    #[inline]
    pub fn pop_at(&mut self, t: Time) -> Option<u64> {
        if self.scan {
            for f in &mut self.fifos {
                if let Some(ev) = f.pop_if(t) {
                    return Some(ev);
                }
            }
            return self.heap.pop_if(t);
        }
        debug_assert_eq!(t, self.at, "pop_at follows next_time");
        loop {
            if self.taken != u32::MAX
                && let Some(ev) = self.fifos[self.taken as usize].pop_if(t)
            {
                return Some(ev);
            }
            if self.due_class_from(0).is_none() {
                return self.heap.pop_if(t);
            }
        }
    }

    /// Events scheduled.
    pub fn len(&self) -> usize {
        self.heap.len + self.fifos.iter().map(|f| f.len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instant's pops, as the run loops take them: the classes due at the next time, in
    /// order, then the heap.
    fn instant(q: &mut EventQueue) -> Option<(Time, Vec<u64>)> {
        let t = q.next_time()?;
        let mut evs = Vec::new();
        let mut k = 0;
        while let Some(c) = q.due_class_from(k) {
            while let Some(e) = q.pop_class(c, t) {
                evs.push(e);
            }
            k = c + 1;
        }
        while let Some(e) = q.pop_heap(t) {
            evs.push(e);
        }
        Some((t, evs))
    }

    /// Over 70 classes, an instant takes every event at its time, class by class in order
    /// and the heap last, and none later.
    #[test]
    fn an_instant_takes_the_due_classes_in_order() {
        let mut q = EventQueue::new();
        // Class i has delay 10·(i + 1).
        let cls: Vec<Class> = (1..=70).map(|d| q.class(d * 10)).collect();
        q.push(cls[9], 0, 1); // 100
        q.push(cls[4], 50, 2); // 100
        q.push_at(0, 100, 3); // class 9's FIFO (delay 100)
        q.push_at(0, 105, 4); // heap
        q.push(cls[66], 0, 5); // 670
        q.push(cls[69], 0, 6); // 700
        q.push(cls[0], 60, 7); // 70: the earliest, in word 0
        q.push(cls[65], 0, 8); // 660
        q.push_at(0, 100, 9); // class 9 again
        assert_eq!(instant(&mut q), Some((70, vec![7])));
        assert_eq!(instant(&mut q), Some((100, vec![2, 1, 3, 9])));
        assert_eq!(instant(&mut q), Some((105, vec![4])));
        assert_eq!(instant(&mut q), Some((660, vec![8])));
        q.push(cls[68], 600, 10); // 1290
        q.push(cls[1], 1270, 11); // 1290
        assert_eq!(instant(&mut q), Some((670, vec![5])));
        assert_eq!(instant(&mut q), Some((700, vec![6])));
        assert_eq!(instant(&mut q), Some((1290, vec![11, 10])));
        assert_eq!(instant(&mut q), None);
        assert!(q.is_empty());
    }

    /// A class's ring grows past its first size, scanned or in the heap of fronts, and
    /// gives every event back in order.
    #[test]
    fn a_class_ring_grows_in_either_mode() {
        for n in [2, EventQueue::SCAN_MAX + 1] {
            let mut q = EventQueue::new();
            let cls: Vec<Class> = (1..=n as Time).map(|d| q.class(d)).collect();
            for e in 0..3000u64 {
                q.push(cls[1], e, e);
            }
            for e in 0..3000u64 {
                assert_eq!(instant(&mut q), Some((e + 2, vec![e])));
            }
            assert_eq!(instant(&mut q), None);
        }
    }

    #[test]
    fn pops_in_time_order_across_classes_and_heap() {
        let mut q = EventQueue::new();
        let a = q.class(3);
        let b = q.class(5);
        assert_eq!(q.class(3), a);
        q.push(a, 0, 1); // t = 3
        q.push(b, 0, 2); // t = 5
        q.push(a, 2, 3); // t = 5
        q.push_at(0, 4, 4);
        q.push_at(0, 5, 5); // into class b's FIFO
        q.push_at(1, 6, 6); // a delay of no class: into the heap
        let mut got = Vec::new();
        while let Some(t) = q.next_time() {
            let mut at_t = Vec::new();
            while let Some(e) = q.pop_at(t) {
                at_t.push(e);
            }
            at_t.sort();
            got.push((t, at_t));
        }
        assert_eq!(
            got,
            vec![(3, vec![1]), (4, vec![4]), (5, vec![2, 3, 5]), (6, vec![6])]
        );
        assert!(q.is_empty());
    }

    proptest::proptest! {
        /// With few classes (scanned) or many (a heap of fronts), every instant takes the
        /// events at the least time, class by class in class order and in push order within
        /// a class, then the heap's, whatever the mix of pushes and instants.
        #[test]
        fn instants_take_classes_in_order_scanned_or_heaped(
            many in proptest::bool::ANY,
            reversed in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..4, 0usize..64, 0u64..40), 1..300),
        ) {
            let n = if many { EventQueue::SCAN_MAX + 16 } else { 5 };
            let mut q = EventQueue::new();
            let delays: Vec<Time> = (0..n as Time).map(|i| 3 + 2 * i).collect();
            let cls: Vec<Class> = delays.iter().map(|&d| q.class(d)).collect();
            // (time, class or `usize::MAX` for the heap, event)
            let mut pending: Vec<(Time, usize, u64)> = Vec::new();
            let mut now = 0;
            for (e, &(op, c, dt)) in ops.iter().enumerate() {
                let (e, c) = (e as u64, c % n);
                match op {
                    0 | 1 => {
                        q.push(cls[c], now, e);
                        pending.push((now + delays[c], c, e));
                    }
                    2 => {
                        // At a class's delay it goes to that class, else to the heap.
                        let t = now + 1 + dt;
                        q.push_at(now, t, e);
                        let k = delays.iter().position(|&d| d == t - now).unwrap_or(usize::MAX);
                        pending.push((t, k, e));
                    }
                    _ => {
                        // (A reversed order's pops, `pop_at`, in any order.)
                        let next = if reversed {
                            q.next_time().map(|t| {
                                let mut evs = Vec::new();
                                while let Some(e) = q.pop_at(t) {
                                    evs.push(e);
                                }
                                (t, evs)
                            })
                        } else {
                            instant(&mut q)
                        };
                        let Some((t, mut got)) = next else {
                            proptest::prop_assert!(pending.is_empty());
                            continue;
                        };
                        now = t;
                        let least = pending.iter().map(|x| x.0).min().expect("events pending");
                        proptest::prop_assert_eq!(t, least);
                        let (mut due, rest): (Vec<_>, Vec<_>) = pending.iter().partition(|x| x.0 == t);
                        pending = rest;
                        // Class order, push order within a class (stable sort); the heap's
                        // own order is its business.
                        due.sort_by_key(|x| x.1);
                        let heaped = due.iter().filter(|x| x.1 == usize::MAX).count();
                        let mut want: Vec<u64> = due.iter().map(|x| x.2).collect();
                        if reversed {
                            got.sort();
                            want.sort();
                            proptest::prop_assert_eq!(got, want);
                            continue;
                        }
                        let split = want.len() - heaped;
                        proptest::prop_assert_eq!(&got[..split], &want[..split]);
                        let mut a = got[split..].to_vec();
                        let mut b = want[split..].to_vec();
                        a.sort();
                        b.sort();
                        proptest::prop_assert_eq!(a, b);
                    }
                }
            }
            proptest::prop_assert_eq!(q.len(), pending.len());
        }

        /// The radix heap gives every event back at its time, in time order, whatever the
        /// mix of pushes (never into the past) and pops.
        #[test]
        fn radix_heap_pops_in_time_order(ops in proptest::collection::vec((0u64..3, 0u64..5000), 1..400)) {
            let mut h = RadixHeap::default();
            let mut reference: Vec<(Time, u64)> = Vec::new();
            let mut now = 0;
            for (n, &(op, dt)) in ops.iter().enumerate() {
                if op < 2 {
                    h.push(now + dt, n as u64);
                    reference.push((now + dt, n as u64));
                } else if let Some(&(t, _)) = reference.iter().min() {
                    now = t;
                    let e = h.pop_if(t).expect("an event at the smallest time");
                    let k = reference.iter().position(|&x| x == (t, e)).expect("popped a pushed event");
                    reference.swap_remove(k);
                }
                let min = reference.iter().map(|x| x.0).min().unwrap_or(Time::MAX);
                proptest::prop_assert_eq!(h.min, min);
                proptest::prop_assert_eq!(h.len, reference.len());
            }
        }
    }
}

//! The event calendar.
//!
//! Nearly every event is scheduled a fixed delay after the present: a flit arrives one flit
//! time plus the propagation delay after it is sent, a credit one credit delay after its flit
//! left, a routed head one router delay after it reached the front. Events of one delay
//! class are therefore pushed in time order, and a FIFO per class is already sorted: pushing
//! and popping are O(1), and the next time is the minimum over a handful of FIFO fronts.
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
}

impl Ring {
    fn new() -> Ring {
        Ring {
            buf: vec![(0, 0); 1024],
            head: 0,
            len: 0,
        }
    }

    // (Always inlined: one caller, the send path, got it out of line.)
    #[inline(always)]
    fn push(&mut self, x: (Time, u64)) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        self.buf[(self.head + self.len) & mask] = x;
        self.len += 1;
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
    /// The classes whose front event is at the time [`Self::next_time`] last found, as
    /// bits: an instant's pops visit only those (a network of many timings has many
    /// classes, the Macramé Clos 61, most of them not due at any instant). Found as the
    /// next time is, so pushes and pops pay nothing for it.
    due: Vec<u64>,
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
            due: Vec::new(),
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
        self.fifos.push(Ring::new());
        self.due.resize(self.fifos.len().div_ceil(64), 0);
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
    #[inline]
    pub fn push(&mut self, class: Class, now: Time, ev: u64) {
        let k = class.0 as usize;
        let t = now + self.delays[k];
        self.fifos[k].push((t, ev));
    }

    /// Schedules `ev` at any time `t` (not before `now`): in the FIFO of the class whose
    /// delay is `t - now`, if there is one, else in the heap.
    #[inline(always)]
    pub fn push_at(&mut self, now: Time, t: Time, ev: u64) {
        let d = t.wrapping_sub(now);
        let (delay, k) = self.lut[self.lut_index(d)];
        if delay == d {
            self.fifos[k as usize].push((t, ev));
        } else {
            self.heap.push(t, ev);
        }
    }

    /// The earliest scheduled time, noting which classes have events at it
    /// ([`Self::due_class_from`]).
    #[inline]
    pub fn next_time(&mut self) -> Option<Time> {
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

    /// The first class from `k` on with events at the time [`Self::next_time`] last
    /// returned: an instant's pops go through those classes in order. (Events pushed since
    /// are later: a class's delay is never zero.)
    #[inline(always)]
    pub fn due_class_from(&self, k: usize) -> Option<usize> {
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
        for f in &mut self.fifos {
            if let Some(ev) = f.pop_if(t) {
                return Some(ev);
            }
        }
        self.heap.pop_if(t)
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

    /// Over more than 64 classes (two words of due bits), an instant takes every event at
    /// its time, class by class in order and the heap last, and none later; an earlier
    /// event in a later word makes the earlier words' classes not due.
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
        // Class 1 (word 0) at 1290 is seen before class 66 (word 1) at 670, which is
        // earlier: class 1 is not due then.
        q.push(cls[68], 600, 10); // 1290
        q.push(cls[1], 1270, 11); // 1290
        assert_eq!(instant(&mut q), Some((670, vec![5])));
        assert_eq!(instant(&mut q), Some((700, vec![6])));
        assert_eq!(instant(&mut q), Some((1290, vec![11, 10])));
        assert_eq!(instant(&mut q), None);
        assert!(q.is_empty());
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

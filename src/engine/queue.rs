//! The event calendar.
//!
//! Nearly every event is scheduled a fixed delay after the present: a flit arrives one flit
//! time plus the propagation delay after it is sent, a credit one credit delay after its flit
//! left, a routed head one router delay after it reached the front. Events of one delay
//! class are therefore pushed in time order, and a FIFO per class is already sorted: pushing
//! and popping are O(1), and the next time is the minimum over a handful of FIFO fronts.
//! Events at arbitrary times (packet arrivals at sources, phase ends) go to a binary heap.
//!
//! Events carry a 64-bit payload. The engine processes all events of one time before it lets
//! any component act, and components at one time act independently, so the order in which
//! equal-time events leave the queue does not change any result (DESIGN.md: no result depends
//! on insertion order).

use crate::time::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

    #[inline]
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

#[derive(Debug, Default)]
pub struct EventQueue {
    delays: Vec<Time>,
    fifos: Vec<Ring>,
    heap: BinaryHeap<Reverse<(Time, u64)>>,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
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

    /// Schedules `ev` at any time `t`.
    #[inline]
    pub fn push_at(&mut self, t: Time, ev: u64) {
        self.heap.push(Reverse((t, ev)));
    }

    /// The earliest scheduled time.
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        let mut t = self.heap.peek().map(|r| r.0.0);
        for f in &self.fifos {
            if let Some(ft) = f.front_time() {
                t = Some(t.map_or(ft, |x| x.min(ft)));
            }
        }
        t
    }

    /// Removes and returns the next event of class `k` if it is scheduled at exactly `t`.
    #[inline(always)]
    pub fn pop_class(&mut self, k: usize, t: Time) -> Option<u64> {
        self.fifos[k].pop_if(t)
    }

    /// Removes and returns the next heap event if it is scheduled at exactly `t`.
    #[inline]
    pub fn pop_heap(&mut self, t: Time) -> Option<u64> {
        if let Some(&Reverse((ht, ev))) = self.heap.peek()
            && ht == t
        {
            self.heap.pop();
            return Some(ev);
        }
        None
    }

    /// Removes and returns one event scheduled at exactly `t`, if any is left.
    #[inline]
    pub fn pop_at(&mut self, t: Time) -> Option<u64> {
        for f in &mut self.fifos {
            if let Some(ev) = f.pop_if(t) {
                return Some(ev);
            }
        }
        if let Some(&Reverse((ht, ev))) = self.heap.peek()
            && ht == t
        {
            self.heap.pop();
            return Some(ev);
        }
        None
    }

    /// Events scheduled.
    pub fn len(&self) -> usize {
        self.heap.len() + self.fifos.iter().map(|f| f.len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_across_classes_and_heap() {
        let mut q = EventQueue::new();
        let a = q.class(3);
        let b = q.class(5);
        assert_eq!(q.class(3), a);
        q.push(a, 0, 1); // t = 3
        q.push(b, 0, 2); // t = 5
        q.push(a, 2, 3); // t = 5
        q.push_at(4, 4);
        q.push_at(5, 5);
        let mut got = Vec::new();
        while let Some(t) = q.next_time() {
            let mut at_t = Vec::new();
            while let Some(e) = q.pop_at(t) {
                at_t.push(e);
            }
            at_t.sort();
            got.push((t, at_t));
        }
        assert_eq!(got, vec![(3, vec![1]), (4, vec![4]), (5, vec![2, 3, 5])]);
        assert!(q.is_empty());
    }
}

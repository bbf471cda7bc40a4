//! The process's budget of simulation threads (`--jobs`): every thread that runs a
//! reproduction's work holds a slot, so that `reef reproduce all` can run several systems at
//! once, each spreading its experiments over the cores with [`super::par_map`], and still
//! keep at most `--jobs` of them busy.
//!
//! A thread that asks for work to be spread always works on it itself (under the slot it
//! holds, or one it waits for), and helpers join it only while slots are free: no thread
//! ever waits for a slot that only its own waiting could free, so nesting cannot deadlock.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Slots in use, guarded; waiters sleep on [`FREED`].
static IN_USE: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();
/// The budget; 0: the machine's cores.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread holds a slot.
    static HOLDS: Cell<bool> = const { Cell::new(false) };
}

/// Sets the budget to `n` threads (at least 1).
pub fn set_jobs(n: usize) {
    LIMIT.store(n.max(1), Ordering::Relaxed);
}

/// The budget: what [`set_jobs`] set, else the machine's cores.
pub fn jobs() -> usize {
    match LIMIT.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

fn lock() -> MutexGuard<'static, usize> {
    // A thread that panicked holding the lock left the count consistent (it is changed
    // only by whole statements): go on with it.
    IN_USE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A held slot; dropping it frees it for a waiting thread.
pub struct Slot {
    /// A slot this thread held already (the outer one is freed by its own holder).
    inherited: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if !self.inherited {
            HOLDS.with(|h| h.set(false));
            *lock() -= 1;
            FREED.notify_all();
        }
    }
}

/// A slot for this thread, waiting while all are taken (the slot it holds already, if it
/// holds one).
pub fn acquire() -> Slot {
    acquire_while(|| true).unwrap_or(Slot { inherited: true })
}

/// A slot for this thread as soon as one is free, or `None` once `wanted` turns false
/// first (checked whenever a slot is freed or [`wake`] is called).
pub fn acquire_while(wanted: impl Fn() -> bool) -> Option<Slot> {
    if HOLDS.with(Cell::get) {
        return Some(Slot { inherited: true });
    }
    let mut n = lock();
    loop {
        if !wanted() {
            return None;
        }
        if *n < jobs() {
            *n += 1;
            HOLDS.with(|h| h.set(true));
            return Some(Slot { inherited: false });
        }
        n = FREED.wait(n).unwrap_or_else(|e| e.into_inner());
    }
}

/// Tells threads waiting in [`acquire_while`] to look at their condition again.
pub fn wake() {
    let _g = lock();
    FREED.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// The budget holds across nested spreading, and nothing waits for ever.
    #[test]
    fn at_most_jobs_threads_work_and_nesting_finishes() {
        set_jobs(2);
        let (busy, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let work = || {
            let b = busy.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(b, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(2));
            busy.fetch_sub(1, Ordering::SeqCst);
        };
        let outer: Vec<usize> = (0..4).collect();
        std::thread::scope(|sc| {
            for _ in 0..3 {
                sc.spawn(|| {
                    let _s = acquire();
                    let r = super::super::par_map(
                        &outer,
                        |&i| {
                            let inner: Vec<usize> = (0..3).collect();
                            super::super::par_map(
                                &inner,
                                |&j| {
                                    work();
                                    i * 10 + j
                                },
                                |_| {},
                            )
                        },
                        |_| {},
                    );
                    assert_eq!(r[3], vec![30, 31, 32]);
                });
            }
        });
        assert!(most.load(Ordering::SeqCst) <= 2, "{most:?}");
        assert_eq!(*lock(), 0);
    }
}

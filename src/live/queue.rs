//! The CLAN Queue between two processes on this machine, with the design of
//! `shared/systems/clan.md`: the aperture is a shared memory mapping; each direction is a
//! ring of [`QUEUE_BYTES`] that the sender writes with plain stores, publishing its write
//! pointer after the data; the receiver writes its read pointer back lazily, after
//! consuming half the ring. Tripwire becomes a watched location plus a wake-up: a waiting
//! process polls the location for up to its poll time, then records itself as a sleeper
//! and sleeps on its eventfd; a store path (publishing a pointer) writes the peer's eventfd
//! only when the peer has recorded itself as a sleeper.
//!
//! No wake-up is lost: the sleeper records itself, then looks again before it sleeps; the
//! store path publishes, then looks for a sleeper; both sequentially consistent, so at least
//! one of them sees the other (and an eventfd write made before the sleeper sleeps is still
//! there when it does). A process that dies closes its end of a socket pair; a waiter
//! sleeps on that socket as well as on its eventfd, so a killed peer is reported
//! ([`LiveError::PeerDied`]), never waited for.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Buffer per Queue endpoint [bytes] (spec: 10 KB).
pub const QUEUE_BYTES: u64 = 10 * 1024;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The other process died (its end of the link closed) while this one waited for it.
    #[error("the peer process died while this one waited for it")]
    PeerDied,
    /// A system call failed.
    #[error("{what}: {err}")]
    Os { what: &'static str, err: std::io::Error },
    /// The peer broke the protocol or reported a failure.
    #[error("{0}")]
    Failed(String),
}

fn os(what: &'static str) -> LiveError {
    LiveError::Os {
        what,
        err: std::io::Error::last_os_error(),
    }
}

/// Bytes of a ring's header: the write pointer and the read pointer on lines of their own.
const RING_HEADER: usize = 128;
/// The control block: per process a sleeper flag and a flag word, then shared flags.
const CONTROL: usize = 256;

/// A shared anonymous mapping, inherited across `fork`.
struct Shm {
    ptr: *mut u8,
    len: usize,
}

impl Shm {
    fn new(len: usize) -> Result<Shm, LiveError> {
        // SAFETY: a fresh anonymous shared mapping; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os("mmap"));
        }
        Ok(Shm { ptr: p.cast(), len })
    }
}

impl Drop for Shm {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// One process's view of a link: the shared mapping with its rings, the two eventfds and
/// its end of the socket pair that tells it the peer died.
pub struct Link {
    shm: Shm,
    rings: usize,
    /// 0: the parent, 1: the child.
    me: usize,
    efd: [RawFd; 2],
    death: RawFd,
}

impl Drop for Link {
    fn drop(&mut self) {
        // SAFETY: descriptors this link owns, closed once.
        unsafe {
            libc::close(self.efd[0]);
            libc::close(self.efd[1]);
            libc::close(self.death);
        }
    }
}

/// Shared flags in the control block.
#[derive(Debug, Clone, Copy)]
pub enum Flag {
    /// The parent asks the child to stop.
    Stop = 0,
    /// The child has sent its last byte.
    Done = 1,
}

impl Link {
    fn atomic64(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off + 8 <= self.shm.len && off.is_multiple_of(8));
        // SAFETY: in the mapping, aligned, and only ever accessed atomically.
        unsafe { &*(self.shm.ptr.add(off) as *const AtomicU64) }
    }

    fn atomic32(&self, off: usize) -> &AtomicU32 {
        debug_assert!(off + 4 <= self.shm.len && off.is_multiple_of(4));
        // SAFETY: as `atomic64`.
        unsafe { &*(self.shm.ptr.add(off) as *const AtomicU32) }
    }

    fn sleeping(&self, p: usize) -> &AtomicU32 {
        self.atomic32(p * 64)
    }

    /// A shared flag.
    pub fn flag(&self, f: Flag) -> &AtomicU32 {
        self.atomic32(128 + 4 * f as usize)
    }

    fn ring_off(&self, r: usize) -> usize {
        assert!(r < self.rings, "ring {r} of {}", self.rings);
        CONTROL + r * (RING_HEADER + QUEUE_BYTES as usize)
    }

    fn wr(&self, r: usize) -> &AtomicU64 {
        self.atomic64(self.ring_off(r))
    }

    fn rd(&self, r: usize) -> &AtomicU64 {
        self.atomic64(self.ring_off(r) + 64)
    }

    fn data(&self, r: usize) -> *mut u8 {
        // SAFETY: the ring's data lies inside the mapping.
        unsafe { self.shm.ptr.add(self.ring_off(r) + RING_HEADER) }
    }

    /// Rings in the mapping.
    pub fn rings(&self) -> usize {
        self.rings
    }

    /// The store path's wake-up: signal the peer only if it recorded itself as a sleeper.
    pub fn wake_peer(&self) {
        if self.sleeping(1 - self.me).load(Ordering::SeqCst) != 0 {
            let one: u64 = 1;
            // SAFETY: an 8-byte write to an eventfd this link owns. A full counter (it
            // cannot be: it is read on every wake) would only make the write fail, and the
            // peer is then awake anyway.
            unsafe {
                libc::write(self.efd[1 - self.me], (&one as *const u64).cast(), 8);
            }
        }
    }

    /// Waits until `ready()`: polls for up to `spin`, then sleeps on the eventfd (and the
    /// peer's end of the socket pair) until woken and ready.
    pub fn wait(&self, spin: Duration, mut ready: impl FnMut() -> bool) -> Result<(), LiveError> {
        if ready() {
            return Ok(());
        }
        if !spin.is_zero() {
            let start = Instant::now();
            loop {
                for _ in 0..64 {
                    if ready() {
                        return Ok(());
                    }
                    std::hint::spin_loop();
                }
                if start.elapsed() >= spin {
                    break;
                }
            }
        }
        let me = self.sleeping(self.me);
        loop {
            me.store(1, Ordering::SeqCst);
            if ready() {
                me.store(0, Ordering::SeqCst);
                return Ok(());
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.efd[self.me],
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.death,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: two valid pollfd records.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            me.store(0, Ordering::SeqCst);
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(LiveError::Os { what: "poll", err: e });
            }
            if fds[0].revents != 0 {
                let mut v: u64 = 0;
                // SAFETY: an 8-byte read from a non-blocking eventfd this link owns.
                unsafe {
                    libc::read(self.efd[self.me], (&mut v as *mut u64).cast(), 8);
                }
            }
            if ready() {
                return Ok(());
            }
            if fds[1].revents != 0 {
                return Err(LiveError::PeerDied);
            }
        }
    }

    /// Whether the peer has died (its end of the socket pair closed), without waiting.
    pub fn peer_dead(&self) -> bool {
        let mut fd = libc::pollfd {
            fd: self.death,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd record, no wait.
        unsafe { libc::poll(&mut fd, 1, 0) > 0 }
    }
}

/// The sending end of ring `r`.
pub struct Tx {
    r: usize,
    wr: u64,
}

/// The receiving end of ring `r`.
pub struct Rx {
    r: usize,
    rd: u64,
    published: u64,
}

impl Tx {
    pub fn new(r: usize) -> Tx {
        Tx { r, wr: 0 }
    }

    /// Writes all of `buf`, blocking (poll, then sleep) while the ring is full.
    pub fn send(&mut self, link: &Link, spin: Duration, buf: &[u8]) -> Result<(), LiveError> {
        let cap = QUEUE_BYTES;
        let (wr_a, rd_a, data) = (link.wr(self.r), link.rd(self.r), link.data(self.r));
        let mut off = 0usize;
        while off < buf.len() {
            let mut free = cap - (self.wr - rd_a.load(Ordering::Acquire));
            if free == 0 {
                let wr = self.wr;
                link.wait(spin, || rd_a.load(Ordering::Acquire) + cap > wr)?;
                free = cap - (self.wr - rd_a.load(Ordering::Acquire));
            }
            let n = free.min((buf.len() - off) as u64) as usize;
            let at = (self.wr % cap) as usize;
            let first = n.min(cap as usize - at);
            // SAFETY: `n` bytes the receiver has consumed (the read pointer says so) and
            // will not read until the write pointer below covers them; both pieces inside
            // the ring.
            unsafe {
                std::ptr::copy_nonoverlapping(buf.as_ptr().add(off), data.add(at), first);
                std::ptr::copy_nonoverlapping(buf.as_ptr().add(off + first), data, n - first);
            }
            self.wr += n as u64;
            wr_a.store(self.wr, Ordering::SeqCst);
            link.wake_peer();
            off += n;
        }
        Ok(())
    }
}

impl Rx {
    pub fn new(r: usize) -> Rx {
        Rx {
            r,
            rd: 0,
            published: 0,
        }
    }

    /// Bytes ready to read.
    pub fn available(&self, link: &Link) -> u64 {
        link.wr(self.r).load(Ordering::Acquire) - self.rd
    }

    /// Reads exactly `buf.len()` bytes, blocking (poll, then sleep) while the ring is empty.
    pub fn recv(&mut self, link: &Link, spin: Duration, buf: &mut [u8]) -> Result<(), LiveError> {
        let cap = QUEUE_BYTES;
        let (wr_a, rd_a, data) = (link.wr(self.r), link.rd(self.r), link.data(self.r));
        let mut off = 0usize;
        while off < buf.len() {
            let mut avail = wr_a.load(Ordering::Acquire) - self.rd;
            if avail == 0 {
                let rd = self.rd;
                link.wait(spin, || wr_a.load(Ordering::Acquire) != rd)?;
                avail = wr_a.load(Ordering::Acquire) - self.rd;
            }
            if avail > cap {
                return Err(LiveError::Failed(format!(
                    "ring {}: the write pointer is {avail} bytes ahead of a {cap}-byte ring",
                    self.r
                )));
            }
            let n = avail.min((buf.len() - off) as u64) as usize;
            let at = (self.rd % cap) as usize;
            let first = n.min(cap as usize - at);
            // SAFETY: `n` bytes the write pointer covers, inside the ring; the sender does
            // not write them again until the read pointer passes them.
            unsafe {
                std::ptr::copy_nonoverlapping(data.add(at), buf.as_mut_ptr().add(off), first);
                std::ptr::copy_nonoverlapping(data, buf.as_mut_ptr().add(off + first), n - first);
            }
            self.rd += n as u64;
            if self.rd - self.published >= cap / 2 {
                self.published = self.rd;
                rd_a.store(self.rd, Ordering::SeqCst);
                link.wake_peer();
            }
            off += n;
        }
        Ok(())
    }
}

/// A child process running on the other end of a link. Dropping it kills and reaps it if
/// it was not waited for.
pub struct Child {
    pid: libc::pid_t,
    reaped: bool,
}

impl Child {
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Waits for the child; its exit status (a signal number is reported as 128 + n).
    pub fn wait(mut self) -> Result<i32, LiveError> {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r >= 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(LiveError::Os {
                    what: "waitpid",
                    err: e,
                });
            }
        }
        self.reaped = true;
        Ok(exit_code(status))
    }

    /// The child's exit status if it has ended (reaping it), `None` while it runs.
    pub fn try_wait(&mut self) -> Result<Option<i32>, LiveError> {
        if self.reaped {
            return Err(LiveError::Failed("the child was already waited for".into()));
        }
        let mut status = 0;
        // SAFETY: asking after our own child, without waiting.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r < 0 {
            return Err(os("waitpid"));
        }
        if r == 0 {
            return Ok(None);
        }
        self.reaped = true;
        Ok(Some(exit_code(status)))
    }

    /// Kills the child (SIGKILL).
    pub fn kill(&self) {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            let mut status = 0;
            // SAFETY: reaping our own child.
            unsafe {
                libc::waitpid(self.pid, &mut status, 0);
            }
        }
    }
}

/// Makes a link of `rings` rings and forks: the child runs `child` with its view of the
/// link and exits with the status it returns (101 if it panics); the parent gets its view
/// and the child.
///
/// The child should keep to the link and plain memory (it may run while other threads of
/// the parent held locks at the fork).
pub fn spawn(rings: usize, child: impl FnOnce(&Link) -> i32) -> Result<(Link, Child), LiveError> {
    spawn_keeping(rings, &[], child)
}

/// [`spawn`], the child keeping the descriptors `keep` open besides its link's. It closes
/// every other descriptor it inherited: another thread of the parent may have made links
/// of its own, and a child holding a copy of one of their ends would keep its peer from
/// seeing a death.
pub fn spawn_keeping(
    rings: usize,
    keep: &[RawFd],
    child: impl FnOnce(&Link) -> i32,
) -> Result<(Link, Child), LiveError> {
    let len = CONTROL + rings * (RING_HEADER + QUEUE_BYTES as usize);
    let shm = Shm::new(len)?;
    let mut fds = Fds(Vec::new());
    let mut efd = [-1; 2];
    for e in &mut efd {
        // SAFETY: a new eventfd; checked.
        *e = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if *e < 0 {
            return Err(os("eventfd"));
        }
        fds.0.push(*e);
    }
    let mut sp = [-1; 2];
    // SAFETY: a new socket pair; checked.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            sp.as_mut_ptr(),
        )
    } < 0
    {
        return Err(os("socketpair"));
    }
    fds.0.extend(sp);
    // Made before the fork: the child allocates nothing before it has closed what it must.
    let mut child_keeps: Vec<RawFd> = keep.iter().copied().chain([efd[0], efd[1], sp[1]]).collect();
    child_keeps.sort_unstable();
    // SAFETY: fork; the child only runs `child` and exits without unwinding into the
    // parent's code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os("fork"));
    }
    // From here the link owns its descriptors.
    std::mem::forget(fds);
    if pid == 0 {
        close_all_but(&child_keeps);
        let link = Link {
            shm,
            rings,
            me: 1,
            efd,
            death: sp[1],
        };
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| child(&link))).unwrap_or(101);
        // SAFETY: ends the child at once, without running the parent's atexit handlers.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: the child's end of the socket pair is not the parent's.
    unsafe { libc::close(sp[1]) };
    Ok((
        Link {
            shm,
            rings,
            me: 0,
            efd,
            death: sp[0],
        },
        Child { pid, reaped: false },
    ))
}

/// A wait status as an exit code (a signal number as 128 + n).
fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// Descriptors closed on drop (those of a link not yet made).
struct Fds(Vec<RawFd>);

impl Drop for Fds {
    fn drop(&mut self) {
        for &fd in &self.0 {
            // SAFETY: descriptors this value owns, closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// Closes every descriptor from 3 up except those in `keep` (sorted).
fn close_all_but(keep: &[RawFd]) {
    let mut first: u32 = 3;
    for &k in keep {
        let Ok(k) = u32::try_from(k) else { continue };
        if k < first {
            continue;
        }
        if k > first {
            close_range(first, k - 1);
        }
        first = k + 1;
    }
    close_range(first, u32::MAX);
}

/// Closes descriptors `first..=last`: one `close_range` call (Linux 5.9), or one by one up
/// to the descriptor limit where the kernel has no such call.
fn close_range(first: u32, last: u32) {
    // SAFETY: closes only descriptors; no flags.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) };
    if r == 0 {
        return;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: fills `lim`.
    let max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur.min(1 << 20) as u32
    } else {
        1 << 16
    };
    for fd in first..=last.min(max) {
        // SAFETY: closing a descriptor number, open or not.
        unsafe { libc::close(fd as RawFd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPIN: Duration = Duration::from_micros(15);

    #[test]
    fn bytes_cross_in_order_through_a_small_ring() {
        let (link, child) = spawn(1, |l| {
            let mut tx = Tx::new(0);
            for i in 0..5000u32 {
                let msg: Vec<u8> = (0..(i % 3000)).map(|k| (k ^ i) as u8).collect();
                if tx.send(l, SPIN, &(msg.len() as u32).to_le_bytes()).is_err()
                    || tx.send(l, SPIN, &msg).is_err()
                {
                    return 1;
                }
            }
            0
        })
        .unwrap();
        let mut rx = Rx::new(0);
        for i in 0..5000u32 {
            let mut len = [0u8; 4];
            rx.recv(&link, SPIN, &mut len).unwrap();
            let n = u32::from_le_bytes(len);
            assert_eq!(n, i % 3000);
            let mut buf = vec![0u8; n as usize];
            rx.recv(&link, SPIN, &mut buf).unwrap();
            assert!(
                buf.iter().enumerate().all(|(k, &b)| b == (k as u32 ^ i) as u8),
                "message {i}"
            );
        }
        assert_eq!(child.wait().unwrap(), 0);
    }

    #[test]
    fn a_killed_sender_is_reported_not_waited_for() {
        let (link, child) = spawn(1, |l| {
            let mut tx = Tx::new(0);
            let _ = tx.send(l, SPIN, &[7u8; 100]);
            // SAFETY: the child kills itself, as a crash would.
            unsafe { libc::raise(libc::SIGKILL) };
            0
        })
        .unwrap();
        let mut rx = Rx::new(0);
        let mut buf = [0u8; 100];
        rx.recv(&link, SPIN, &mut buf).unwrap();
        assert_eq!(buf, [7u8; 100]);
        let e = rx.recv(&link, SPIN, &mut buf).unwrap_err();
        assert!(matches!(e, LiveError::PeerDied), "{e}");
        assert_eq!(child.wait().unwrap(), 128 + libc::SIGKILL);
    }

    /// A child holds no other link's descriptors. Link B's child is forked after link A
    /// was made, so it inherited A's parent-side ends; had it kept them, A's child would not
    /// see A's parent end close until B's child ended. B's child runs until told to stop
    /// (or a minute, so that a failure ends rather than hangs).
    #[test]
    fn another_links_child_does_not_hide_a_death() {
        let (a, a_child) = spawn(1, |l| {
            let mut buf = [0u8; 1];
            match Rx::new(0).recv(l, SPIN, &mut buf) {
                Err(LiveError::PeerDied) => 7,
                _ => 1,
            }
        })
        .unwrap();
        let (b, mut b_child) = spawn(1, |l| {
            let start = Instant::now();
            while l.flag(Flag::Stop).load(Ordering::SeqCst) == 0
                && !l.peer_dead()
                && start.elapsed() < Duration::from_secs(60)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            0
        })
        .unwrap();
        drop(a);
        assert_eq!(a_child.wait().unwrap(), 7, "A's child saw its parent's end close");
        assert_eq!(
            b_child.try_wait().unwrap(),
            None,
            "and B's child was still running"
        );
        b.flag(Flag::Stop).store(1, Ordering::SeqCst);
        assert_eq!(b_child.wait().unwrap(), 0);
    }

    #[test]
    fn a_sender_blocked_on_a_dead_receiver_is_told() {
        let (link, child) = spawn(1, |_| 0).unwrap();
        assert_eq!(child.wait().unwrap(), 0);
        let mut tx = Tx::new(0);
        // The ring takes 10 KB; the rest can never be read.
        let e = tx
            .send(&link, SPIN, &vec![1u8; 3 * QUEUE_BYTES as usize])
            .unwrap_err();
        assert!(matches!(e, LiveError::PeerDied), "{e}");
        assert!(link.peer_dead());
    }
}

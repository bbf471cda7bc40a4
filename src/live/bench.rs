//! The measurements of `reef live clan`, each between this process and a forked child:
//! round trips, streaming and transactions over the CLAN Queue ([`super::queue`]), TCP over
//! loopback and Unix domain sockets. A server is single-threaded and, for the sockets,
//! `poll`-based (the `select` of the 2001 measurements).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::queue::{Flag, Link, LiveError, Rx, Tx, spawn, spawn_keeping};

/// Request and reply size [bytes] (spec: 40).
pub const MESSAGE: usize = 40;

/// The transports measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The CLAN Queue; its waiters poll for `poll` before they sleep.
    Clan {
        poll: Duration,
    },
    Tcp,
    Unix,
}

/// How a client waits for a reply in the Queue's round trips: it polls this long (it
/// should not fall asleep itself, so that only the server's wake-up is measured).
const CLIENT_SPIN: Duration = Duration::from_millis(1);

fn err(what: &str, e: std::io::Error) -> LiveError {
    LiveError::Failed(format!("{what}: {e}"))
}

/// Connected stream pairs (parent end, child end), `k` of them.
enum Streams {
    Tcp(Vec<TcpStream>),
    Unix(Vec<UnixStream>),
}

/// A stream of either kind.
trait Stream: Read + Write + AsRawFd {}
impl Stream for TcpStream {}
impl Stream for UnixStream {}

impl Streams {
    fn get(&mut self) -> Vec<&mut dyn Stream> {
        match self {
            Streams::Tcp(v) => v.iter_mut().map(|s| s as &mut dyn Stream).collect(),
            Streams::Unix(v) => v.iter_mut().map(|s| s as &mut dyn Stream).collect(),
        }
    }
}

/// Makes `k` connections of `t` (a socket transport), forks, and runs `child` on the
/// child's ends; returns the parent's ends, the link (for its flags) and the child.
fn socket_spawn(
    t: Transport,
    k: usize,
    child: impl FnOnce(&Link, Streams) -> i32,
) -> Result<(Streams, Link, super::queue::Child), LiveError> {
    match t {
        Transport::Tcp => {
            let l = TcpListener::bind("127.0.0.1:0").map_err(|e| err("bind 127.0.0.1", e))?;
            let addr = l.local_addr().map_err(|e| err("local_addr", e))?;
            let (link, ch) = spawn(0, move |link| {
                let mut v = Vec::new();
                for _ in 0..k {
                    match TcpStream::connect(addr) {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            v.push(s);
                        }
                        Err(_) => return 2,
                    }
                }
                child(link, Streams::Tcp(v))
            })?;
            let mut v = Vec::new();
            for _ in 0..k {
                let (s, _) = l.accept().map_err(|e| err("accept", e))?;
                s.set_nodelay(true).map_err(|e| err("TCP_NODELAY", e))?;
                v.push(s);
            }
            Ok((Streams::Tcp(v), link, ch))
        }
        Transport::Unix => {
            let mut mine = Vec::new();
            let mut theirs = Vec::new();
            for _ in 0..k {
                let (a, b) = UnixStream::pair().map_err(|e| err("socketpair", e))?;
                mine.push(a);
                theirs.push(b);
            }
            // The child keeps its ends and closes the rest, the parent's ends among them (it
            // would never see the end of a stream); the parent drops the child's.
            let keep: Vec<i32> = theirs.iter().map(|s| s.as_raw_fd()).collect();
            let (link, ch) = spawn_keeping(0, &keep, move |link| child(link, Streams::Unix(theirs)))?;
            Ok((Streams::Unix(mine), link, ch))
        }
        Transport::Clan { .. } => Err(LiveError::Failed("not a socket transport".into())),
    }
}

/// Which of the `conns` still `open` are readable (or closed), waiting at most `timeout_ms`
/// (-1: without limit); none when a signal interrupted the wait.
fn readable(conns: &[&mut dyn Stream], open: &[bool], timeout_ms: i32) -> std::io::Result<Vec<bool>> {
    let mut fds: Vec<libc::pollfd> = conns
        .iter()
        .zip(open)
        .map(|(c, &o)| libc::pollfd {
            fd: if o { c.as_raw_fd() } else { -1 },
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: valid pollfd records (negative fds are ignored).
    if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) } < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
        return Ok(vec![false; fds.len()]);
    }
    Ok(fds.iter().zip(open).map(|(f, &o)| o && f.revents != 0).collect())
}

fn finish(ch: super::queue::Child, what: &str) -> Result<(), LiveError> {
    match ch.wait()? {
        0 => Ok(()),
        c => Err(LiveError::Failed(format!(
            "{what}: the child process failed (status {c})"
        ))),
    }
}

/// Times `one` round trip after another for `dur` (at most `max` of them), `gap` apart;
/// returns each [µs].
fn timed(
    dur: Duration,
    max: usize,
    gap: Duration,
    mut one: impl FnMut() -> Result<(), LiveError>,
) -> Result<Vec<f64>, LiveError> {
    let mut rtts = Vec::new();
    let start = Instant::now();
    // At least one, however long the process waited for a core.
    loop {
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let t0 = Instant::now();
        one()?;
        rtts.push(t0.elapsed().as_secs_f64() * 1e6);
        if start.elapsed() >= dur || rtts.len() >= max.max(1) {
            return Ok(rtts);
        }
    }
}

/// 40-byte round trips for `dur` (at most `max` of them), `gap` apart; returns each [µs].
pub fn round_trips(t: Transport, dur: Duration, max: usize, gap: Duration) -> Result<Vec<f64>, LiveError> {
    let rtts;
    let req = [0x5au8; MESSAGE];
    match t {
        Transport::Clan { poll } => {
            // Ring 0: requests to the child; ring 1: replies.
            let (link, ch) = spawn(2, move |l| {
                let (mut rx, mut tx) = (Rx::new(0), Tx::new(1));
                let mut m = [0u8; MESSAGE];
                loop {
                    let stop = l.flag(Flag::Stop);
                    if l.wait(poll, || rx.available(l) > 0 || stop.load(Ordering::SeqCst) != 0)
                        .is_err()
                    {
                        return 3;
                    }
                    if rx.available(l) == 0 {
                        return 0;
                    }
                    if rx.recv(l, poll, &mut m).is_err() || tx.send(l, poll, &m).is_err() {
                        return 3;
                    }
                }
            })?;
            let (mut tx, mut rx) = (Tx::new(0), Rx::new(1));
            let mut m = [0u8; MESSAGE];
            rtts = timed(dur, max, gap, || {
                tx.send(&link, poll, &req)?;
                rx.recv(&link, CLIENT_SPIN, &mut m)?;
                if m != req {
                    return Err(LiveError::Failed(
                        "round trip: the reply is not the request".into(),
                    ));
                }
                Ok(())
            })?;
            link.flag(Flag::Stop).store(1, Ordering::SeqCst);
            link.wake_peer();
            drop(link);
            finish(ch, "round trip")?;
        }
        _ => {
            let (mut s, _link, ch) = socket_spawn(t, 1, |_, mut s| {
                let c = &mut s.get()[0];
                let mut m = [0u8; MESSAGE];
                while c.read_exact(&mut m).is_ok() {
                    if c.write_all(&m).is_err() {
                        return 3;
                    }
                }
                0
            })?;
            {
                let c = &mut s.get()[0];
                let mut m = [0u8; MESSAGE];
                rtts = timed(dur, max, gap, || {
                    c.write_all(&req).map_err(|e| err("write", e))?;
                    c.read_exact(&mut m).map_err(|e| err("read", e))?;
                    Ok(())
                })?;
            }
            drop(s);
            finish(ch, "round trip")?;
        }
    }
    Ok(rtts)
}

/// The child streams messages of `size` bytes until told to stop; the parent reads for
/// `dur` and returns the bandwidth it received [Mb/s].
pub fn stream(t: Transport, size: usize, dur: Duration) -> Result<f64, LiveError> {
    let mut buf = vec![0u8; size.max(64 * 1024)];
    match t {
        Transport::Clan { poll } => {
            let (link, ch) = spawn(1, move |l| {
                let mut tx = Tx::new(0);
                let msg = vec![0xa5u8; size];
                while l.flag(Flag::Stop).load(Ordering::SeqCst) == 0 {
                    if tx.send(l, poll, &msg).is_err() {
                        return 3;
                    }
                }
                l.flag(Flag::Done).store(1, Ordering::SeqCst);
                l.wake_peer();
                0
            })?;
            let mut rx = Rx::new(0);
            let m = &mut buf[..size];
            // The first message starts the clock.
            rx.recv(&link, poll, m)?;
            let start = Instant::now();
            let mut bytes = 0u64;
            // At least one message, however long the process waited for a core.
            loop {
                rx.recv(&link, poll, m)?;
                bytes += size as u64;
                if start.elapsed() >= dur {
                    break;
                }
            }
            let secs = start.elapsed().as_secs_f64();
            link.flag(Flag::Stop).store(1, Ordering::SeqCst);
            // Drain until the child has sent its last byte.
            let done = link.flag(Flag::Done);
            loop {
                let avail = rx.available(&link);
                if avail > 0 {
                    let n = (avail as usize).min(m.len());
                    rx.recv(&link, poll, &mut m[..n])?;
                } else if done.load(Ordering::SeqCst) != 0 {
                    break;
                } else {
                    link.wait(poll, || {
                        rx.available(&link) > 0 || done.load(Ordering::SeqCst) != 0
                    })?;
                }
            }
            drop(link);
            finish(ch, "stream")?;
            Ok(bytes as f64 * 8.0 / secs / 1e6)
        }
        _ => {
            let (mut s, link, ch) = socket_spawn(t, 1, move |l, mut s| {
                let c = &mut s.get()[0];
                let msg = vec![0xa5u8; size];
                while l.flag(Flag::Stop).load(Ordering::SeqCst) == 0 {
                    if c.write_all(&msg).is_err() {
                        return 3;
                    }
                }
                0
            })?;
            let bw;
            {
                let c = &mut s.get()[0];
                let n = c.read(&mut buf).map_err(|e| err("read", e))?;
                if n == 0 {
                    return Err(LiveError::Failed("stream: the sender closed at once".into()));
                }
                let start = Instant::now();
                let mut bytes = 0u64;
                // At least one read, however long the process waited for a core.
                loop {
                    let n = c.read(&mut buf).map_err(|e| err("read", e))?;
                    if n == 0 {
                        return Err(LiveError::PeerDied);
                    }
                    bytes += n as u64;
                    if start.elapsed() >= dur {
                        break;
                    }
                }
                bw = bytes as f64 * 8.0 / start.elapsed().as_secs_f64() / 1e6;
                link.flag(Flag::Stop).store(1, Ordering::SeqCst);
                while c.read(&mut buf).map_err(|e| err("read", e))? > 0 {}
            }
            drop(s);
            finish(ch, "stream")?;
            Ok(bw)
        }
    }
}

/// Closed-loop transactions: `k` connections, one 40-byte request outstanding on each, for
/// `dur`; returns requests/s.
pub fn transactions(t: Transport, k: usize, dur: Duration) -> Result<f64, LiveError> {
    match t {
        Transport::Clan { poll } => {
            // Ring 2i: requests of connection i; ring 2i + 1: its replies.
            let (link, ch) = spawn(2 * k, move |l| {
                let mut rxs: Vec<Rx> = (0..k).map(|i| Rx::new(2 * i)).collect();
                let mut txs: Vec<Tx> = (0..k).map(|i| Tx::new(2 * i + 1)).collect();
                let stop = l.flag(Flag::Stop);
                let mut m = [0u8; MESSAGE];
                loop {
                    // The handler takes every request there is, then polls, then sleeps.
                    let mut any = false;
                    for i in 0..k {
                        while rxs[i].available(l) >= MESSAGE as u64 {
                            any = true;
                            if rxs[i].recv(l, poll, &mut m).is_err() || txs[i].send(l, poll, &m).is_err() {
                                return 3;
                            }
                        }
                    }
                    if !any {
                        if stop.load(Ordering::SeqCst) != 0 {
                            return 0;
                        }
                        let ready = || {
                            stop.load(Ordering::SeqCst) != 0
                                || rxs.iter().any(|r| r.available(l) >= MESSAGE as u64)
                        };
                        if l.wait(poll, ready).is_err() {
                            return 3;
                        }
                    }
                }
            })?;
            let mut txs: Vec<Tx> = (0..k).map(|i| Tx::new(2 * i)).collect();
            let mut rxs: Vec<Rx> = (0..k).map(|i| Rx::new(2 * i + 1)).collect();
            let req = [0x3cu8; MESSAGE];
            let mut m = [0u8; MESSAGE];
            for tx in &mut txs {
                tx.send(&link, poll, &req)?;
            }
            let start = Instant::now();
            let mut done = 0u64;
            let mut open = k;
            let mut live = vec![true; k];
            while open > 0 {
                let mut any = false;
                for i in 0..k {
                    if live[i] && rxs[i].available(&link) >= MESSAGE as u64 {
                        any = true;
                        rxs[i].recv(&link, poll, &mut m)?;
                        done += 1;
                        if start.elapsed() < dur {
                            txs[i].send(&link, poll, &req)?;
                        } else {
                            live[i] = false;
                            open -= 1;
                        }
                    }
                }
                if !any {
                    link.wait(poll, || {
                        (0..k).any(|i| live[i] && rxs[i].available(&link) >= MESSAGE as u64)
                    })?;
                }
            }
            let secs = start.elapsed().as_secs_f64();
            link.flag(Flag::Stop).store(1, Ordering::SeqCst);
            link.wake_peer();
            drop(link);
            finish(ch, "transactions")?;
            Ok(done as f64 / secs)
        }
        _ => {
            let (mut s, _link, ch) = socket_spawn(t, k, move |_, mut s| {
                let mut conns = s.get();
                let mut open = vec![true; conns.len()];
                let mut m = [0u8; MESSAGE];
                while open.iter().any(|&o| o) {
                    let Ok(ready) = readable(&conns, &open, -1) else {
                        return 3;
                    };
                    for (i, &r) in ready.iter().enumerate() {
                        if r {
                            if conns[i].read_exact(&mut m).is_err() {
                                open[i] = false;
                            } else if conns[i].write_all(&m).is_err() {
                                return 3;
                            }
                        }
                    }
                }
                0
            })?;
            let rate;
            {
                let mut conns = s.get();
                let req = [0x3cu8; MESSAGE];
                let mut m = [0u8; MESSAGE];
                for c in conns.iter_mut() {
                    c.write_all(&req).map_err(|e| err("write", e))?;
                }
                let start = Instant::now();
                let mut done = 0u64;
                let mut live = vec![true; k];
                while live.iter().any(|&l| l) {
                    let ready = readable(&conns, &live, 1000).map_err(|e| err("poll", e))?;
                    for (i, &r) in ready.iter().enumerate() {
                        if r {
                            conns[i].read_exact(&mut m).map_err(|e| err("read", e))?;
                            done += 1;
                            if start.elapsed() < dur {
                                conns[i].write_all(&req).map_err(|e| err("write", e))?;
                            } else {
                                live[i] = false;
                            }
                        }
                    }
                }
                rate = done as f64 / start.elapsed().as_secs_f64();
            }
            drop(s);
            finish(ch, "transactions")?;
            Ok(rate)
        }
    }
}

/// The kernel's buffers of a connected socket of `t` (send plus receive, as `getsockopt`
/// reports them) [bytes]; `None` for the Queue.
pub fn socket_buffer(t: Transport) -> Option<u64> {
    fn get(fd: i32, opt: libc::c_int) -> Option<u64> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: an int-sized option of a socket the caller holds open.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        (r == 0).then_some(v as u64)
    }
    let both = |fd: i32| Some(get(fd, libc::SO_SNDBUF)? + get(fd, libc::SO_RCVBUF)?);
    match t {
        Transport::Unix => {
            let (a, _b) = UnixStream::pair().ok()?;
            both(a.as_raw_fd())
        }
        Transport::Tcp => {
            let l = TcpListener::bind("127.0.0.1:0").ok()?;
            let c = TcpStream::connect(l.local_addr().ok()?).ok()?;
            let _s = l.accept().ok()?;
            both(c.as_raw_fd())
        }
        Transport::Clan { .. } => None,
    }
}

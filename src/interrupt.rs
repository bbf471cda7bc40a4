//! Ctrl-C: a request to stop at the next safe point and keep what has finished. The first
//! SIGINT (or SIGTERM) only sets a flag that the long-running parts read where they can stop
//! cleanly — a run between two instants, a sweep between points, a reproduction between
//! experiments — and the command then prints and writes what it has, marked as interrupted,
//! and exits 130. A second signal ends the process at once (exit 130, or 143 for SIGTERM),
//! from the signal handler itself, for when the safe point is too far away.
//!
//! Nothing in the library stops unless asked: a [`crate::engine::Sim`] stops at the flag only
//! with `interruptible` set, as the command line's runs and sweeps set it.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// Exit status of a command that was interrupted (128 + SIGINT), as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Catches SIGINT and SIGTERM: the first sets the flag, the second exits at once.
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    for (sig, status) in [(SIGINT, 130), (SIGTERM, 143)] {
        // The shutdown first: it exits only if the flag was already set by an earlier signal.
        flag::register_conditional_shutdown(sig, status, &REQUESTED)?;
        flag::register(sig, &REQUESTED)?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn install() -> std::io::Result<()> {
    Ok(())
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Asks for a stop, as a signal does (for tests and for callers without signals).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for; the first time it is seen, says on stderr what happens now.
pub fn check() -> bool {
    let r = requested();
    if r && !ANNOUNCED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "\ninterrupted: stopping at the next safe point and keeping what has finished \
             (Ctrl-C again to quit at once)"
        );
    }
    r
}

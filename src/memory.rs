//! The memory a network takes to simulate, estimated from its counts before it is built, and
//! the limit it is held to: the memory this machine has available, or `--memory-limit`.
//!
//! The estimate is a sum over what the model keeps per component, each cost measured as the
//! peak resident memory of `reef run` on meshes, tori, rings, 3-D meshes and networks with
//! more hosts per switch, VCs and buffer slots (2026-11-27, this 2-core machine; fitted
//! by hand, every case within 8 %; README "Memory"):
//! - a switch: its ports, allocation state and fabric records, [`PER_SWITCH`];
//! - a host: its source queue, random streams and counters, [`PER_HOST`];
//! - a channel: its fabric record, timing profile and engine state, [`PER_CHANNEL`];
//! - a virtual channel: its state (a cache line in the express engine and the general
//!   engine's own), [`PER_VC`];
//! - a buffer slot: the flit it holds and, in a loaded network, the events of the flits in
//!   flight, [`PER_SLOT`];
//! - a routing table entry while tables are built (one per switch and destination host:
//!   the tables of Clos, fat-tree, up*/down* and minimal routing), and the dense array of
//!   them the tables keep (`routing::table::DENSE_MAX`), [`PER_TABLE_ENTRY`];
//! - and [`BASE`] for the program itself.

use std::sync::atomic::{AtomicU64, Ordering};

/// The program itself, a network of a few switches [bytes].
pub const BASE: u64 = 6 << 20;
/// Per switch (and output buffer stage) [bytes].
pub const PER_SWITCH: u64 = 540;
/// Per host [bytes].
pub const PER_HOST: u64 = 800;
/// Per channel [bytes].
pub const PER_CHANNEL: u64 = 320;
/// Per virtual channel [bytes].
pub const PER_VC: u64 = 146;
/// Per buffer slot: 15 at setup, about 8 more for the events of a loaded network [bytes].
pub const PER_SLOT: u64 = 23;
/// Per (switch, destination host) entry while routing tables are built [bytes]: 8 in the
/// builder, and 2 in the dense array built beside it.
pub const PER_TABLE_ENTRY: u64 = 10;

/// What a network has, as far as its memory goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub switches: u64,
    pub hosts: u64,
    pub channels: u64,
    pub vcs: u64,
    /// Buffer slots [flits], over every VC of every channel.
    pub slots: u64,
    /// Routing table entries built (switches × hosts for table routing, else 0).
    pub table_entries: u64,
}

impl Counts {
    /// The estimate [bytes] (saturating: a network too large to count is too large).
    pub fn bytes(&self) -> u64 {
        [
            (self.switches, PER_SWITCH),
            (self.hosts, PER_HOST),
            (self.channels, PER_CHANNEL),
            (self.vcs, PER_VC),
            (self.slots, PER_SLOT),
            (self.table_entries, PER_TABLE_ENTRY),
        ]
        .iter()
        .fold(BASE, |s, &(n, per)| s.saturating_add(n.saturating_mul(per)))
    }

    /// The counts of a built network.
    pub fn of(fab: &crate::fabric::Fabric, tables: bool) -> Counts {
        let vcs: u64 = fab.channels.iter().map(|c| c.params.vcs as u64).sum();
        let slots: u64 = fab
            .channels
            .iter()
            .map(|c| c.params.vcs as u64 * c.params.buffer as u64)
            .sum();
        let (switches, hosts) = (fab.switches as u64, fab.num_hosts() as u64);
        Counts {
            switches,
            hosts,
            channels: fab.channels.len() as u64,
            vcs,
            slots,
            table_entries: if tables { switches * hosts } else { 0 },
        }
    }

    /// [`Counts::of`] a spec's network, with tables where its routing builds them.
    pub fn of_spec(spec: &crate::engine::Spec) -> Counts {
        use crate::routing::Routing;
        let tables = match &spec.routing {
            Routing::Table(_) => true,
            Routing::Source(s) => s.placed_set().is_none(),
            _ => false,
        };
        Counts::of(&spec.fabric, tables)
    }

    /// The estimate in words, with what it is made of.
    pub fn describe(&self) -> String {
        let mut parts = vec![
            format!("{} switches", self.switches),
            format!("{} hosts", self.hosts),
            format!("{} channels", self.channels),
            format!("{} VCs", self.vcs),
            format!("{} buffer slots", self.slots),
        ];
        if self.table_entries > 0 {
            parts.push(format!("{} routing-table entries", self.table_entries));
        }
        format!("about {} ({})", bytes_text(self.bytes()), parts.join(", "))
    }
}

/// `1.5 GB`, `320 MB`, `12 kB` (powers of 1000, as `--memory-limit` reads them).
pub fn bytes_text(b: u64) -> String {
    let b = b as f64;
    if b >= 1e12 {
        format!("{:.1} TB", b / 1e12)
    } else if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}

/// Reads a size: a number and a unit, `8GB`, `512 MB`, `1.5G`, `16GiB` (B, kB, MB, GB, TB
/// and their one-letter forms count in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a size such as 8GB or 512MB"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        u => {
            return Err(format!(
                "`{s}`: unknown unit `{u}` (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ));
        }
    };
    let b = x * mult;
    if !(b.is_finite() && b >= 1e6) {
        return Err(format!("`{s}`: a memory limit is at least 1 MB"));
    }
    Ok(b.min(u64::MAX as f64) as u64)
}

/// The limit set by `--memory-limit` [bytes]; 0: none set.
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Holds every network to `bytes` from now on (`--memory-limit`).
pub fn set_limit(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The memory this machine has available now [bytes] (Linux: `MemAvailable`), if known.
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The limit a network is held to [bytes] and where it comes from.
pub fn limit() -> Option<(u64, &'static str)> {
    match LIMIT.load(Ordering::Relaxed) {
        0 => available().map(|b| (b, "the memory this machine has available")),
        b => Some((b, "--memory-limit")),
    }
}

/// Whether [`check`] says, on standard error, what a large network will take before it is
/// built (the command line turns it on; a library user hears nothing).
static ANNOUNCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Networks estimated above this, or above half the limit, are announced
/// ([`announce_large`]) [bytes].
pub const LARGE: u64 = 1_000_000_000;

/// The next network above [`LARGE`] (or half the limit) that [`check`] passes has its
/// estimate printed before it is built: building one takes a while, and a user should know what it will hold.
pub fn announce_large(on: bool) {
    ANNOUNCE.store(on, Ordering::Relaxed);
}

/// An error if `c` does not fit the limit: the estimate, the limit and what to change.
pub fn check(c: &Counts, change: &str) -> Result<(), String> {
    let Some((lim, from)) = limit() else {
        return Ok(());
    };
    if c.bytes() <= lim {
        // (Once: a network is checked as planned, then as built.)
        if c.bytes() > LARGE.min(lim / 2) && ANNOUNCE.swap(false, Ordering::Relaxed) {
            eprintln!(
                "note: building a network that needs {} to simulate ({from}: {})",
                c.describe(),
                bytes_text(lim)
            );
        }
        return Ok(());
    }
    let or = if from == "--memory-limit" {
        "or a larger --memory-limit"
    } else {
        "or give --memory-limit if the estimate is wrong for this machine"
    };
    Err(format!(
        "this network needs {} to simulate, more than {from} ({}); use {change}, {or}",
        c.describe(),
        bytes_text(lim)
    ))
}

/// The `reef` binary's allocator: the system's, with every block of [`HUGE_MIN`] bytes or
/// more advised onto transparent huge pages (`madvise(MADV_HUGEPAGE)` on the 2 MB pages
/// inside it) before anything touches it. A large network's records are read at random,
/// one cache line a hop; with 4 KB pages nearly every such read past the caches is also a
/// TLB miss, and 2 MB pages make those rare. The blocks keep the addresses the system
/// gives them (aligning each to 2 MB put element i of every array in the same cache sets,
/// and was slower: docs/performance.md). Where the kernel gives no huge pages, nothing
/// changes.
pub struct HugeAlloc;

/// The smallest block advised onto huge pages [bytes].
pub const HUGE_MIN: usize = 4 << 20;

/// Asks the processor to bring the cache line at `p` in ahead of its use (a hint: no
/// effect on results, and none at all off x86-64). Any address will do: a prefetch never
/// faults and reads nothing the program sees.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as above; the address is not dereferenced.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(target_os = "linux")]
pub(crate) fn advise_huge(p: *mut u8, size: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    if p.is_null() || size < HUGE_MIN {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + size) & !(HUGE_PAGE - 1);
    if end > start {
        // SAFETY: the range lies inside the block just allocated; the advice changes only
        // how the kernel backs it, never its contents (a failure is harmless and ignored).
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge(_: *mut u8, _: usize) {}

// SAFETY: every block comes from, and goes back to, the system allocator with the layout
// it was asked for; the advice does not change a block's address, size or contents.
unsafe impl std::alloc::GlobalAlloc for HugeAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as the caller's contract for `alloc`.
        let p = unsafe { std::alloc::System.alloc(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as the caller's contract for `alloc_zeroed`.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `p` came from `System` with this layout (above).
        unsafe { std::alloc::System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the caller's contract for `realloc`; `p` came from `System`.
        let q = unsafe { std::alloc::System.realloc(p, layout, new_size) };
        advise_huge(q, new_size);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_written() {
        assert_eq!(parse_size("8GB"), Ok(8_000_000_000));
        assert_eq!(parse_size("512 MB"), Ok(512_000_000));
        assert_eq!(parse_size("1.5G"), Ok(1_500_000_000));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn the_estimate_adds_its_parts() {
        let c = Counts {
            switches: 1,
            hosts: 1,
            channels: 2,
            vcs: 2,
            slots: 16,
            table_entries: 0,
        };
        assert_eq!(
            c.bytes(),
            BASE + PER_SWITCH + PER_HOST + 2 * PER_CHANNEL + 2 * PER_VC + 16 * PER_SLOT
        );
        let huge = Counts { slots: u64::MAX, ..c };
        assert_eq!(huge.bytes(), u64::MAX);
    }
}

//! The host side of the Penn interface's transmit path: the character-device driver
//! `/dev/host0` and its `write()` (spec, "Host bus and driver"), with the two no-copy what-ifs.
//!
//! - **copy** (the driver that was measured): `write()` pays its per-call overhead, copies the
//!   user's data into one of two 64 KB pinned kernel buffers (waiting if both are still
//!   streaming), starts the streaming transfer if the device is idle (else the transfer starts
//!   when the device finishes) and returns. Copying the next block overlaps streaming the last.
//! - **nocopy**: the transfer streams straight from the user's pages; `write()` blocks until
//!   streaming ends.
//! - **fault-on-write**: no copy; the busy pages are marked fault-on-write and `write()`
//!   returns at once, so only a writer that touches a busy buffer blocks. The driver keeps two
//!   transfers outstanding (ASSUMED, [`FAULT_ON_WRITE_SLOTS`]).
//!
//! The per-`write()` overhead and the copy rate are the host costs the spec asks to calibrate
//! from Table I ([`super::calibrate`]); the no-copy drivers are charged the same overhead,
//! which is optimistic for them: pinning user pages and building translation control words on
//! every call is not free, and is not published.

use std::collections::VecDeque;

use thiserror::Error;

use crate::time::{SEC, Time, US};

use super::params::{FAULT_ON_WRITE_SLOTS, KERNEL_BUFFER_BYTES, KERNEL_BUFFERS};

/// Which `write()` path the host uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Driver {
    /// Copy into two pinned 64 KB kernel buffers, double buffered (the measured driver).
    Copy,
    /// No copy; the writer blocks until its data has streamed.
    NoCopy,
    /// No copy; busy pages fault on write, so only a writer touching them blocks.
    FaultOnWrite,
}

impl Driver {
    /// The three drivers, measured one first.
    pub const ALL: [Driver; 3] = [Driver::Copy, Driver::NoCopy, Driver::FaultOnWrite];

    /// The name used in reports: `copy`, `nocopy`, `fault-on-write`.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Copy => "copy",
            Driver::NoCopy => "nocopy",
            Driver::FaultOnWrite => "fault-on-write",
        }
    }
}

/// The host's software costs, calibrated from Table I.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostCosts {
    /// Per-`write()` overhead: system call, context switch, setting up the transfer [ps].
    pub overhead: Time,
    /// Rate of the copy into a pinned kernel buffer [bytes/s].
    pub copy_rate: f64,
}

impl HostCosts {
    /// From an overhead [µs] and a copy rate [MB/s, 10⁶ bytes/s].
    pub fn new(overhead_us: f64, copy_mb_per_s: f64) -> HostCosts {
        HostCosts {
            overhead: (overhead_us * US as f64).round() as Time,
            copy_rate: copy_mb_per_s * 1e6,
        }
    }

    /// Time to copy `bytes` [ps].
    pub fn copy(&self, bytes: u64) -> Time {
        (bytes as f64 / self.copy_rate * SEC as f64).round() as Time
    }
}

/// How the application calls `write()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writer {
    /// Whether it refills its buffer before each `write()` (a producer) or writes the same
    /// bytes again (the Table I program, which measured transfer only).
    pub touches_buffer: bool,
    /// User buffers it cycles through (at least one).
    pub user_buffers: usize,
}

impl Writer {
    /// The Table I program: one user buffer, written again and again without being touched.
    pub const TABLE_I: Writer = Writer {
        touches_buffer: false,
        user_buffers: 1,
    };
}

/// A `write()` the driver cannot take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DriverError {
    /// The copy driver's pinned buffers hold 64 KB; a larger write does not fit one.
    #[error("write of {bytes} bytes exceeds the {max}-byte pinned buffer")]
    TooLarge {
        /// Bytes asked for [bytes].
        bytes: u64,
        /// Buffer size [bytes].
        max: u64,
    },
    /// `write()` was called before the previous write's streaming end was reported, or
    /// `streamed()` without a write.
    #[error("driver calls out of order: each write() needs its streamed() before the next")]
    OutOfOrder,
    /// A writer with no buffer.
    #[error("a writer needs at least one user buffer")]
    NoUserBuffers,
}

/// The driver and the writing process on one host.
#[derive(Debug, Clone)]
pub struct Host {
    driver: Driver,
    costs: HostCosts,
    writer: Writer,
    /// Streaming end of the most recent writes, newest last.
    ends: VecDeque<Time>,
    /// How many of the last ends to keep.
    keep: usize,
    /// When the previous `write()` returned [ps].
    returned: Time,
    /// A write is waiting for its `streamed()`.
    pending: bool,
    /// CPU time in `write()`: overhead and copies [ps].
    cpu_busy: Time,
    writes: u64,
}

impl Host {
    pub fn new(driver: Driver, costs: HostCosts, writer: Writer) -> Result<Host, DriverError> {
        if writer.user_buffers == 0 {
            return Err(DriverError::NoUserBuffers);
        }
        let keep = KERNEL_BUFFERS.max(FAULT_ON_WRITE_SLOTS).max(writer.user_buffers);
        Ok(Host {
            driver,
            costs,
            writer,
            ends: VecDeque::with_capacity(keep),
            keep,
            returned: 0,
            pending: false,
            cpu_busy: 0,
            writes: 0,
        })
    }

    /// When the write `back` writes ago finished streaming; 0 if there was none (a buffer or
    /// slot never used is free from the start).
    fn end_back(&self, back: usize) -> Time {
        self.ends.len().checked_sub(back).map_or(0, |i| self.ends[i])
    }

    /// The next `write()` of `bytes`, called as soon as the previous one returned (and, for
    /// a writer that refills its buffer, as soon as the refill could be done). Returns when
    /// the data is ready to stream [ps]; the device streams writes in order.
    pub fn write(&mut self, bytes: u64) -> Result<Time, DriverError> {
        if self.pending {
            return Err(DriverError::OutOfOrder);
        }
        if self.driver == Driver::Copy && bytes > KERNEL_BUFFER_BYTES {
            return Err(DriverError::TooLarge {
                bytes,
                max: KERNEL_BUFFER_BYTES,
            });
        }
        let mut call = self.returned;
        if self.writer.touches_buffer && self.driver == Driver::FaultOnWrite {
            // Refilling a user buffer whose pages are still streaming faults, and the writer
            // sleeps until that transfer ends.
            call = call.max(self.end_back(self.writer.user_buffers));
        }
        let entered = call + self.costs.overhead;
        self.cpu_busy += self.costs.overhead;
        let ready = match self.driver {
            Driver::Copy => {
                // The buffers alternate: this one last held the write KERNEL_BUFFERS ago.
                let copy = self.costs.copy(bytes);
                self.cpu_busy += copy;
                let ready = entered.max(self.end_back(KERNEL_BUFFERS)) + copy;
                self.returned = ready;
                ready
            }
            Driver::NoCopy => entered,
            Driver::FaultOnWrite => {
                let ready = entered.max(self.end_back(FAULT_ON_WRITE_SLOTS));
                self.returned = ready;
                ready
            }
        };
        self.pending = true;
        self.writes += 1;
        Ok(ready)
    }

    /// The device finished streaming the last write's data at `end` [ps].
    pub fn streamed(&mut self, end: Time) -> Result<(), DriverError> {
        if !self.pending {
            return Err(DriverError::OutOfOrder);
        }
        self.pending = false;
        if self.driver == Driver::NoCopy {
            self.returned = end;
        }
        if self.ends.len() == self.keep {
            self.ends.pop_front();
        }
        self.ends.push_back(end);
        Ok(())
    }

    /// When the last `write()` returned [ps].
    pub fn returned(&self) -> Time {
        self.returned
    }

    /// CPU time spent in `write()` [ps].
    pub fn cpu_busy(&self) -> Time {
        self.cpu_busy
    }

    /// Writes issued.
    pub fn writes(&self) -> u64 {
        self.writes
    }
}

/// One Table I style run: `total` bytes written in calls of `size` bytes, host → interface
/// over the Micro Channel with the interface taking data as fast as the bus brings it (the
/// measurement did not include the link).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WriteRun {
    /// From the first call to the end of the last transfer [ps].
    pub elapsed: Time,
    /// `total` bits over `elapsed` [Mb/s].
    pub mbit_per_s: f64,
    /// Share of the elapsed time the CPU spent in `write()`.
    pub cpu_share: f64,
    /// Share of the elapsed time the bus spent in bursts (reloads excluded).
    pub bus_share: f64,
}

/// Runs `total / size` writes of `size` bytes through `driver` and the Micro Channel.
pub fn write_run(
    driver: Driver,
    costs: HostCosts,
    writer: Writer,
    channel: super::bus::MicroChannel,
    size: u64,
    total: u64,
) -> Result<WriteRun, DriverError> {
    let mut host = Host::new(driver, costs, writer)?;
    let mut bus = super::bus::Bus::new(channel);
    let calls = total / size.max(1);
    let mut end = 0;
    for _ in 0..calls {
        let ready = host.write(size)?;
        end = bus.transfer(ready, size).1;
        host.streamed(end)?;
    }
    let elapsed = end.max(host.returned()).max(1);
    Ok(WriteRun {
        elapsed,
        mbit_per_s: (calls * size * 8) as f64 / (elapsed as f64 / SEC as f64) / 1e6,
        cpu_share: host.cpu_busy() as f64 / elapsed as f64,
        bus_share: bus.busy() as f64 / elapsed as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::atm::bus::MicroChannel;

    const COSTS: HostCosts = HostCosts {
        overhead: 250 * US,
        copy_rate: 15e6,
    };

    fn run(driver: Driver, writer: Writer, size: u64) -> WriteRun {
        write_run(driver, COSTS, writer, MicroChannel::PENN, size, 8 << 20).unwrap()
    }

    /// When the copy is slower than the bus, every call costs overhead + copy and only the
    /// last transfer's streaming shows: N·(o + s/r) + stream(s).
    #[test]
    fn copy_driver_is_copy_bound_when_the_copy_is_slower_than_the_bus() {
        let mc = MicroChannel::PENN;
        for size in [1024u64, 8192, 65536] {
            let n = (8 << 20) / size;
            let expect = n * (COSTS.overhead + COSTS.copy(size)) + mc.transfer(size);
            assert_eq!(run(Driver::Copy, Writer::TABLE_I, size).elapsed, expect, "{size}");
        }
    }

    #[test]
    fn nocopy_blocks_for_every_transfer() {
        let mc = MicroChannel::PENN;
        let size = 16384;
        let n = (8 << 20) / size;
        let r = run(Driver::NoCopy, Writer::TABLE_I, size);
        assert_eq!(r.elapsed, n * (COSTS.overhead + mc.transfer(size)));
    }

    /// The Table I writer never touches its buffer, so fault-on-write never faults: large
    /// writes run at the bus's duty cycle, small ones at one call per overhead.
    #[test]
    fn fault_on_write_overlaps_everything_for_the_table_i_writer() {
        let mc = MicroChannel::PENN;
        let big = run(Driver::FaultOnWrite, Writer::TABLE_I, 65536);
        assert!(big.mbit_per_s > 0.999 * mc.ceiling_mbit(), "{big:?}");
        assert!(big.bus_share > 0.44 && big.bus_share < 0.45, "{big:?}");
        let small = run(Driver::FaultOnWrite, Writer::TABLE_I, 1024);
        let per_call = 1024.0 * 8.0 / (COSTS.overhead as f64 / SEC as f64) / 1e6;
        assert!((small.mbit_per_s / per_call - 1.0).abs() < 1e-3, "{small:?}");
    }

    /// A writer that refills its only buffer before each write touches busy pages every time:
    /// fault-on-write then degenerates to the blocking driver.
    #[test]
    fn fault_on_write_with_a_touching_writer_is_the_blocking_driver() {
        let producer = Writer {
            touches_buffer: true,
            user_buffers: 1,
        };
        for size in [1024u64, 65536] {
            assert_eq!(
                run(Driver::FaultOnWrite, producer, size).elapsed,
                run(Driver::NoCopy, Writer::TABLE_I, size).elapsed
            );
        }
        // Two user buffers let the refill of one overlap the streaming of the other.
        let two = Writer {
            touches_buffer: true,
            user_buffers: 2,
        };
        assert!(
            run(Driver::FaultOnWrite, two, 65536).mbit_per_s
                > run(Driver::NoCopy, Writer::TABLE_I, 65536).mbit_per_s
        );
    }

    #[test]
    fn refusals() {
        let mut host = Host::new(Driver::Copy, COSTS, Writer::TABLE_I).unwrap();
        assert_eq!(
            host.write(65537),
            Err(DriverError::TooLarge {
                bytes: 65537,
                max: 65536
            })
        );
        assert!(host.write(100).is_ok());
        assert_eq!(host.write(100), Err(DriverError::OutOfOrder));
        assert!(host.streamed(5).is_ok());
        assert_eq!(host.streamed(5), Err(DriverError::OutOfOrder));
        let none = Writer {
            touches_buffer: false,
            user_buffers: 0,
        };
        assert_eq!(
            Host::new(Driver::Copy, COSTS, none).unwrap_err(),
            DriverError::NoUserBuffers
        );
    }
}

//! The RS/6000 Micro Channel in 32-bit streaming mode, as the Penn interface's DMA uses it:
//! bursts of sixteen 32-bit words (64 bytes) in 1.6 µs, each followed by 2.0 µs while the I/O
//! channel controller reloads its buffers (spec, "Host bus and driver", measured with a logic
//! analyser). The duty cycle gives the ceiling: 64 B per 3.6 µs = 17.78 MB/s = 142.2 Mb/s.
//!
//! A transfer is a sequence of bursts; a final burst of fewer words takes proportionally less
//! (0.1 µs per word). Its data has arrived when its last burst ends; the bus can start the next
//! burst (of this or another transfer) only after the reload.

use crate::time::{SEC, Time};

use super::params::{BURST_BYTES, BURST_TIME, RELOAD_TIME};

/// Bytes per bus word [bytes].
const WORD_BYTES: u64 = 4;

/// The Micro Channel's streaming timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MicroChannel {
    /// Bytes per burst [bytes].
    pub burst_bytes: u64,
    /// Time of a full burst [ps].
    pub burst_time: Time,
    /// Reload after each burst [ps].
    pub reload: Time,
}

impl MicroChannel {
    /// The RS/6000 model 320 as measured by Traw and Smith.
    pub const PENN: MicroChannel = MicroChannel {
        burst_bytes: BURST_BYTES,
        burst_time: BURST_TIME,
        reload: RELOAD_TIME,
    };

    /// Time to move one burst of `bytes` (at most a full burst) [ps].
    pub fn burst(&self, bytes: u64) -> Time {
        let words_per_burst = self.burst_bytes / WORD_BYTES;
        bytes.div_ceil(WORD_BYTES) * self.burst_time / words_per_burst
    }

    /// Time from the first burst of a `bytes`-long transfer to the end of its last [ps]
    /// (the reload after the last burst is not included).
    pub fn transfer(&self, bytes: u64) -> Time {
        self.moving(bytes) + bytes.saturating_sub(1) / self.burst_bytes * self.reload
    }

    /// Time a `bytes`-long transfer spends in bursts, reloads excluded [ps].
    pub fn moving(&self, bytes: u64) -> Time {
        if bytes == 0 {
            return 0;
        }
        let full = (bytes - 1) / self.burst_bytes;
        full * self.burst_time + self.burst(bytes - full * self.burst_bytes)
    }

    /// The duty-cycle ceiling: a full burst per burst + reload [Mb/s].
    pub fn ceiling_mbit(&self) -> f64 {
        (self.burst_bytes * 8) as f64 / ((self.burst_time + self.reload) as f64 / SEC as f64) / 1e6
    }
}

/// A Micro Channel moving one transfer after another, in order.
#[derive(Debug, Clone)]
pub struct Bus {
    channel: MicroChannel,
    /// When the next burst may start [ps].
    free_at: Time,
    /// Time spent in bursts [ps].
    busy: Time,
}

impl Bus {
    pub fn new(channel: MicroChannel) -> Bus {
        Bus {
            channel,
            free_at: 0,
            busy: 0,
        }
    }

    /// The channel's timing.
    pub fn channel(&self) -> MicroChannel {
        self.channel
    }

    /// Moves a whole transfer of `bytes` whose data is ready at `ready`, with nothing to hold
    /// its bursts back; returns (first burst start, last burst end) [ps].
    pub fn transfer(&mut self, ready: Time, bytes: u64) -> (Time, Time) {
        let start = ready.max(self.free_at);
        let end = start + self.channel.transfer(bytes);
        self.free_at = end + self.channel.reload;
        self.busy += self.channel.moving(bytes);
        (start, end)
    }

    /// Moves one burst of `bytes` (at most a full burst) that may not start before
    /// `earliest`; returns (start, end) [ps].
    pub fn burst(&mut self, earliest: Time, bytes: u64) -> (Time, Time) {
        let start = earliest.max(self.free_at);
        let d = self.channel.burst(bytes);
        self.free_at = start + d + self.channel.reload;
        self.busy += d;
        (start, start + d)
    }

    /// Time spent moving data, reloads excluded [ps].
    pub fn busy(&self) -> Time {
        self.busy
    }

    /// Streams `bytes` in back-to-back transfers of `chunk` bytes from time 0 and returns the
    /// rate [Mb/s]: what the duty cycle allows when nothing else waits.
    pub fn streaming_rate_mbit(channel: MicroChannel, bytes: u64, chunk: u64) -> f64 {
        let mut bus = Bus::new(channel);
        let mut left = bytes;
        let mut end = 0;
        while left > 0 {
            let n = left.min(chunk);
            end = bus.transfer(0, n).1;
            left -= n;
        }
        (bytes * 8) as f64 / (end as f64 / SEC as f64) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NS, US};

    #[test]
    fn duty_cycle_ceiling_is_64_bytes_per_3_6_us() {
        let mc = MicroChannel::PENN;
        // 512 bits / 3.6 µs = 142.22 Mb/s.
        assert!((mc.ceiling_mbit() - 512.0 / 3.6).abs() < 1e-9);
        assert_eq!(mc.burst(64), 1_600 * NS);
        assert_eq!(mc.burst(4), 100 * NS);
        assert_eq!(mc.burst(5), 200 * NS);
        assert_eq!(mc.transfer(64), 1_600 * NS);
        assert_eq!(mc.transfer(65), 3_600 * NS + 100 * NS);
        assert_eq!(mc.transfer(64 * 1024), 1023 * 3_600 * NS + 1_600 * NS);
        // A long stream approaches the ceiling from above only by the last reload missing.
        let r = Bus::streaming_rate_mbit(mc, 8 << 20, 64 << 10);
        assert!(r > mc.ceiling_mbit() && r < mc.ceiling_mbit() * 1.0001, "{r}");
    }

    #[test]
    fn bursts_one_by_one_match_a_whole_transfer() {
        let mc = MicroChannel::PENN;
        let mut whole = Bus::new(mc);
        let mut bursts = Bus::new(mc);
        for (ready, bytes) in [(0, 1000u64), (10 * US, 64), (200 * US, 130), (0, 7)] {
            let w = whole.transfer(ready, bytes);
            let mut left = bytes;
            let mut first = None;
            let mut end = 0;
            while left > 0 {
                let n = left.min(64);
                let (s, e) = bursts.burst(ready, n);
                first.get_or_insert(s);
                end = e;
                left -= n;
            }
            assert_eq!(w, (first.unwrap(), end));
        }
        assert_eq!(whole.busy(), bursts.busy());
    }
}

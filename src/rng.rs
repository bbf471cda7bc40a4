//! Seeded random streams and the few distributions reef draws from.
//!
//! Every random consumer (each host's arrival process, each host's destination choice, each
//! switch's random selection for each packet) has its own xoshiro256++ stream, seeded from
//! the run's seed and a stream number through SplitMix64, so a result never depends on the
//! order in which components run. The distributions are written here rather than taken from `rand` so that
//! the numbers drawn for a seed cannot change under a dependency upgrade.

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

/// A seeded random stream.
#[derive(Clone, Debug)]
pub struct Stream(Xoshiro256PlusPlus);

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stream families, so that streams of different purposes never coincide.
#[derive(Clone, Copy, Debug)]
pub enum Purpose {
    Arrivals = 1,
    Destinations = 2,
    Switch = 3,
    Setup = 4,
    /// Operating-system noise on a host's CPU (`nic::hostif`).
    Noise = 5,
    /// A host's draws for randomized routing (Valiant's intermediate switch, XY or YX).
    Routing = 6,
}

impl Stream {
    /// Stream `index` of family `purpose` for run seed `seed`.
    pub fn new(seed: u64, purpose: Purpose, index: u64) -> Stream {
        let s =
            splitmix(splitmix(seed ^ splitmix(purpose as u64)) ^ splitmix(index.wrapping_add(0x5851_F42D)));
        Stream(Xoshiro256PlusPlus::seed_from_u64(s))
    }

    /// One stream index from two keys (for [`Stream::new`]), colliding with another pair's
    /// only by chance (a 64-bit hash).
    pub fn key(a: u64, b: u64) -> u64 {
        splitmix(splitmix(a) ^ b)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`), without bias (Lemire's method).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            let lo = m as u64;
            if lo >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]`.
    #[inline]
    fn unit_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Number of Bernoulli(p) trials up to and including the first success (≥ 1).
    #[inline]
    pub fn geometric(&mut self, p: f64) -> u64 {
        if p >= 1.0 {
            return 1;
        }
        self.geometric_ln((-p).ln_1p())
    }

    /// [`Self::geometric`] for `p < 1`, given `ln_q` = ln(1 − p) (a source draws many with
    /// one `p`: the logarithm is taken once).
    #[inline]
    pub fn geometric_ln(&mut self, ln_q: f64) -> u64 {
        let u = self.unit_open0();
        // Both logarithms are ≤ 0, so the quotient is ≥ 0 and truncation is its floor.
        let g = u.ln() / ln_q;
        if g >= (u64::MAX / 2) as f64 {
            u64::MAX / 2
        } else {
            1 + g as u64
        }
    }

    /// Exponentially distributed with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.unit_open0().ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = Stream::new(7, Purpose::Arrivals, 3);
        let mut b = Stream::new(7, Purpose::Arrivals, 3);
        let mut c = Stream::new(7, Purpose::Destinations, 3);
        let x: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let z: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut s = Stream::new(1, Purpose::Setup, 0);
        let mut count = [0u32; 7];
        for _ in 0..70_000 {
            count[s.below(7) as usize] += 1;
        }
        assert!(count.iter().all(|&c| (9_000..11_000).contains(&c)), "{count:?}");
    }

    #[test]
    fn geometric_mean_is_one_over_p() {
        let mut s = Stream::new(2, Purpose::Setup, 0);
        let n = 200_000;
        let mean = (0..n).map(|_| s.geometric(0.05) as f64).sum::<f64>() / n as f64;
        assert!((mean - 20.0).abs() < 0.3, "{mean}");
        assert_eq!(s.geometric(1.0), 1);
    }

    proptest::proptest! {
        /// The gap drawn with ln(1 − p) taken once and truncated is the textbook
        /// ⌊ln u / ln(1 − p)⌋ + 1, draw for draw.
        #[test]
        fn geometric_ln_is_the_floor_formula(seed in 0u64..1_000, p in 1e-6f64..0.999_999) {
            let mut fast = Stream::new(seed, Purpose::Arrivals, 0);
            let mut slow = fast.clone();
            let ln_q = (-p).ln_1p();
            for _ in 0..64 {
                let g = (slow.unit_open0().ln() / (-p).ln_1p()).floor();
                let want = if g >= (u64::MAX / 2) as f64 { u64::MAX / 2 } else { 1 + g as u64 };
                proptest::prop_assert_eq!(fast.geometric_ln(ln_q), want);
            }
        }
    }

    #[test]
    fn exponential_mean() {
        let mut s = Stream::new(3, Purpose::Setup, 0);
        let n = 200_000;
        let mean = (0..n).map(|_| s.exponential(5.0)).sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.05, "{mean}");
    }
}

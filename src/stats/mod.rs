//! Streaming statistics: latency histograms (HDR, 3 significant digits, with exact sums,
//! minima and maxima beside them), accepted throughput per host, channel utilization, and
//! batch means with Student-t confidence intervals (Law & Kelton, *Simulation Modeling and
//! Analysis*, §9.5). Nothing here stores a record per packet.

pub mod sampling;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latencies of one kind, streamed.
#[derive(Clone, Debug)]
pub struct LatencyAcc {
    hist: Histogram<u64>,
    sum: u128,
    count: u64,
    min: u64,
    max: u64,
}

impl Default for LatencyAcc {
    fn default() -> Self {
        LatencyAcc {
            hist: Histogram::new(3).expect("3 significant digits is a valid HDR precision"),
            sum: 0,
            count: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl LatencyAcc {
    /// Records one latency [ps].
    #[inline]
    pub fn record(&mut self, v: u64) {
        // An auto-resizing histogram only fails on values beyond 2^63.
        let _ = self.hist.record(v);
        self.sum += v as u128;
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest value recorded [ps] (0 if none).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact mean [ps].
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Exact sum [ps].
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Fraction of recorded values strictly above `v` [ps] (to HDR precision).
    pub fn fraction_above(&self, v: u64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let below = self.hist.count_between(0, v);
        1.0 - below as f64 / self.count as f64
    }

    /// The value at quantile `p` [ps], to HDR precision and within the exact extremes (the
    /// histogram gives the top of a bucket, which may lie past the largest value recorded).
    fn quantile(&self, p: f64) -> u64 {
        self.hist.value_at_quantile(p).clamp(self.min, self.max)
    }

    /// Summary in the unit `scale` ps (e.g. 1000 for ns), with a batch-means CI half-width.
    pub fn summary(&self, scale: f64, ci95: Option<f64>) -> LatencySummary {
        let q = |p: f64| {
            if self.count == 0 {
                0.0
            } else {
                self.quantile(p) as f64 / scale
            }
        };
        LatencySummary {
            count: self.count,
            mean: self.mean() / scale,
            min: if self.count == 0 {
                0.0
            } else {
                self.min as f64 / scale
            },
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: self.max as f64 / scale,
            ci95: ci95.map(|c| c / scale),
        }
    }

    /// Counts in consecutive bins of `width` [ps] from 0 up to the largest value: (bin start
    /// [ps], count), to HDR precision.
    pub fn bins(&self, width: u64) -> Vec<(u64, u64)> {
        if self.count == 0 || width == 0 {
            return Vec::new();
        }
        let n = (self.max / width + 1) as usize;
        let mut out: Vec<(u64, u64)> = (0..n as u64).map(|i| (i * width, 0)).collect();
        for v in self.hist.iter_recorded() {
            let b = ((v.value_iterated_to() / width) as usize).min(n - 1);
            out[b].1 += v.count_at_value();
        }
        out
    }

    /// The centre of the most populated bin of `width` [ps] (the distribution's peak).
    pub fn mode(&self, width: u64) -> Option<u64> {
        let bins = self.bins(width);
        let best = bins.iter().map(|b| b.1).max()?;
        bins.iter().find(|b| b.1 == best).map(|b| b.0 + width / 2)
    }

    /// Points of the cumulative distribution: (value [ps], fraction ≤ value).
    pub fn cdf(&self, points: usize) -> Vec<(u64, f64)> {
        if self.count == 0 {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(points);
        for i in 1..=points {
            let q = i as f64 / points as f64;
            out.push((self.quantile(q), q));
        }
        out
    }
}

/// A latency distribution: counts of packets in equal bins from 0, bin `i` holding
/// latencies in [i·width, (i + 1)·width) (to the histogram's precision, 3 significant
/// digits), up to the bin of the largest.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct LatencyHistogram {
    /// Bin width [cycles].
    pub bin_cycles: f64,
    pub counts: Vec<u64>,
}

impl LatencyHistogram {
    /// `acc`'s distribution in bins of `width` cycles of `cycle` ps.
    pub fn of(acc: &LatencyAcc, width: f64, cycle: f64) -> LatencyHistogram {
        let ps = ((width * cycle).round() as u64).max(1);
        LatencyHistogram {
            bin_cycles: width,
            counts: acc.bins(ps).into_iter().map(|b| b.1).collect(),
        }
    }
}

/// The bin width, 1, 2 or 5 times a power of ten, that covers 0 to `max` in at most `bins`
/// bins with the fewest bins wasted (1 if `max` is not positive).
pub fn nice_width(max: f64, bins: usize) -> f64 {
    let raw = max / bins.max(1) as f64;
    if raw.is_nan() || raw <= 0.0 || raw.is_infinite() {
        return 1.0;
    }
    let decade = 10f64.powi(raw.log10().floor() as i32);
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&w| w * bins as f64 >= max)
        .unwrap_or(10.0 * decade)
}

/// Latency statistics in one unit (mean and extremes exact, quantiles to 3 digits).
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// Half-width of the 95 % confidence interval of the mean, by batch means.
    pub ci95: Option<f64>,
}

/// Two-sided 95 % Student-t quantile for `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// Mean and 95 % confidence half-width of batch values (`None` if fewer than 2 batches).
pub fn batch_ci(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, t95(n - 1) * (var / n as f64).sqrt()))
}

/// One batch of the measurement window.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Sum of packet latencies of packets created in the batch [ps].
    pub packet_sum: u128,
    /// Sum of network latencies of those packets [ps].
    pub network_sum: u128,
    pub packets: u64,
    /// Flits delivered during the batch.
    pub flits: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_widths_cover_the_range_in_at_most_the_bins_asked() {
        for (max, bins, want) in [
            (1336.0, 100, 20.0),
            (1000.0, 100, 10.0),
            (1001.0, 100, 20.0),
            (35.0, 100, 0.5),
            (4.0e6, 50, 1.0e5),
            (0.0, 100, 1.0),
        ] {
            let w = nice_width(max, bins);
            assert!((w - want).abs() < 1e-9 * want, "{max}/{bins}: {w}, want {want}");
            assert!(w * bins as f64 >= max);
        }
    }

    #[test]
    fn a_histogram_counts_every_value_in_its_bin() {
        let mut a = LatencyAcc::default();
        // Cycles of 1000 ps: 3.5, 7, 7.2, 19.9 and 20 cycles.
        for v in [3_500, 7_000, 7_200, 19_900, 20_000] {
            a.record(v);
        }
        let h = LatencyHistogram::of(&a, 5.0, 1000.0);
        assert_eq!(h.bin_cycles, 5.0);
        assert_eq!(h.counts, vec![1, 2, 0, 1, 1]);
    }

    #[test]
    fn exact_mean_min_max() {
        let mut a = LatencyAcc::default();
        for v in [1000, 2000, 3000, 4000] {
            a.record(v);
        }
        let s = a.summary(1000.0, None);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert_eq!(s.count, 4);
        assert!((a.fraction_above(2000) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn quantiles_stay_within_the_extremes() {
        // 26,000 ps sits in a bucket 16 ps wide at 3 digits: its top is past the maximum.
        let mut a = LatencyAcc::default();
        for v in [25_000, 26_000] {
            a.record(v);
        }
        assert!(a.hist.value_at_quantile(0.999) > 26_000);
        let s = a.summary(1000.0, None);
        assert_eq!((s.p999, s.max), (26.0, 26.0));
        assert!(s.p50 >= s.min && s.p50 <= s.max);
        assert!(a.cdf(10).iter().all(|&(v, _)| (25_000..=26_000).contains(&v)));
    }

    #[test]
    fn confidence_intervals() {
        let (m, h) = batch_ci(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        // s = 1, t(2) = 4.303, half-width = 4.303 / √3.
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert!(batch_ci(&[1.0]).is_none());
    }
}

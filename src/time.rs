//! Simulated time and the units configs are written in.
//!
//! Time is an integer number of picoseconds ([`Time`]). Configs give delays and rates in
//! natural units (`"10 ns"`, `"1.5 us"`, `"4 cycles"`, `"100 MBaud"`, `"300 MB/s"`,
//! `"300 MHz"`); they are parsed into exact rationals ([`Ratio`]) and converted to
//! picoseconds once, exactly where the value is a whole number of picoseconds. A clock whose
//! period is not a whole number of picoseconds (300 MHz, an OC-3c cell slot) places its n-th
//! edge at ⌊n·P⌋ from its origin ([`Clock`]), so rounding never accumulates
//! (`../shared/DESIGN.md`, "Engine"). MB/s means 10⁶ bytes/s and Mb/s 10⁶ bits/s, as in the
//! system specs.

use std::fmt;

/// Simulated time [ps].
pub type Time = u64;

/// One picosecond [ps].
pub const PS: Time = 1;
/// One nanosecond [ps].
pub const NS: Time = 1_000;
/// One microsecond [ps].
pub const US: Time = 1_000_000;
/// One millisecond [ps].
pub const MS: Time = 1_000_000_000;
/// One second [ps].
pub const SEC: Time = 1_000_000_000_000;

/// The longest span reef takes in a config, 1,000 s: one duration, a clock period, or what
/// one packet may take on one hop (its flits on a channel, the credit and router delays and
/// the host costs). Simulated time is `u64` picoseconds (about 213 days), so the sums the
/// engine forms from a few such spans cannot overflow.
pub const MAX_SPAN: Time = 1_000 * SEC;

/// A non-negative exact rational number, kept reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: u128,
    den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ratio {
    /// `num / den`; `den` must not be zero.
    pub fn new(num: u128, den: u128) -> Ratio {
        assert!(den != 0, "Ratio with zero denominator");
        let g = gcd(num, den).max(1);
        Ratio {
            num: num / g,
            den: den / g,
        }
    }

    /// A whole number.
    pub fn int(n: u128) -> Ratio {
        Ratio { num: n, den: 1 }
    }

    pub fn num(self) -> u128 {
        self.num
    }

    pub fn den(self) -> u128 {
        self.den
    }

    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    /// The value if it is a whole number that fits in a `u64`.
    pub fn exact(self) -> Option<u64> {
        (self.den == 1)
            .then_some(self.num)
            .and_then(|n| u64::try_from(n).ok())
    }

    /// ⌊self⌋, saturating at `u64::MAX`.
    pub fn floor(self) -> u64 {
        u64::try_from(self.num / self.den).unwrap_or(u64::MAX)
    }

    /// ⌈self⌉, saturating at `u64::MAX`.
    pub fn ceil(self) -> u64 {
        u64::try_from(self.num.div_ceil(self.den)).unwrap_or(u64::MAX)
    }

    /// The nearest whole number (halves round up), saturating at `u64::MAX`.
    pub fn round(self) -> u64 {
        u64::try_from((2 * self.num + self.den) / (2 * self.den)).unwrap_or(u64::MAX)
    }

    pub fn times(self, o: Ratio) -> Ratio {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        Ratio::new(
            (self.num / g1).saturating_mul(o.num / g2),
            (self.den / g2).saturating_mul(o.den / g1),
        )
    }

    /// `self / o`; `o` must not be zero.
    pub fn over(self, o: Ratio) -> Ratio {
        assert!(o.num != 0, "Ratio division by zero");
        self.times(Ratio {
            num: o.den,
            den: o.num,
        })
    }

    pub fn plus(self, o: Ratio) -> Ratio {
        let g = gcd(self.den, o.den).max(1);
        let den = self.den / g * o.den;
        Ratio::new(self.num * (o.den / g) + o.num * (self.den / g), den)
    }

    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}", self.to_f64())
        }
    }
}

/// A clock of period `P = num/den` ps whose n-th edge is at ⌊n·P⌋ ps from time 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Clock {
    period: Ratio,
}

impl Clock {
    /// A clock with the given period [ps]; the period must be positive.
    pub fn from_period(period: Ratio) -> Clock {
        assert!(!period.is_zero(), "clock period must be positive");
        Clock { period }
    }

    /// A clock of `hz` cycles per second (a rational number of hertz).
    pub fn from_hz(hz: Ratio) -> Clock {
        Clock::from_period(Ratio::int(SEC as u128).over(hz))
    }

    /// Period [ps], exact.
    pub fn period(&self) -> Ratio {
        self.period
    }

    /// Time of the n-th edge [ps]: ⌊n·P⌋. (Sources call this for every packet: one
    /// multiplication, and one division only for a period that is not whole picoseconds.)
    #[inline]
    pub fn edge(&self, n: u64) -> Time {
        let (num, den) = (self.period.num, self.period.den);
        match (n as u128).checked_mul(num) {
            Some(x) if den == 1 => u64::try_from(x).unwrap_or(u64::MAX),
            Some(x) => u64::try_from(x / den).unwrap_or(u64::MAX),
            None => Ratio::int(n as u128).times(self.period).floor(),
        }
    }

    /// Duration of `n` cycles as an exact rational [ps].
    pub fn cycles(&self, n: Ratio) -> Ratio {
        n.times(self.period)
    }

    /// Index of the first edge at or after `t`.
    pub fn edge_at_or_after(&self, t: Time) -> u64 {
        // Smallest n with ⌊n·num/den⌋ ≥ t, i.e. n·num ≥ t·den.
        let (num, den) = (self.period.num, self.period.den);
        u64::try_from((t as u128 * den).div_ceil(num)).unwrap_or(u64::MAX)
    }
}

/// A quantity as written in a config: a duration, a number of clock cycles, a data rate or
/// a frequency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// A duration [ps].
    Duration(Ratio),
    /// A number of cycles of the config's declared clock.
    Cycles(Ratio),
    /// A data rate [bits/s].
    BitRate(Ratio),
    /// A frequency [Hz].
    Frequency(Ratio),
}

impl Quantity {
    pub fn kind(&self) -> &'static str {
        match self {
            Quantity::Duration(_) => "a duration",
            Quantity::Cycles(_) => "a number of cycles",
            Quantity::BitRate(_) => "a data rate",
            Quantity::Frequency(_) => "a frequency",
        }
    }
}

/// Parses a decimal number (`12`, `1.5`, `2.5e3`) exactly.
pub fn parse_decimal(s: &str) -> Option<Ratio> {
    let s = s.trim();
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int_part, frac_part) = match mant.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.chars().all(|c| c.is_ascii_digit()) || !frac_part.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits: String = format!("{int_part}{frac_part}");
    if digits.len() > 30 {
        return None;
    }
    let m: u128 = digits.parse().ok()?;
    let exp = exp - frac_part.len() as i32;
    if exp.unsigned_abs() > 30 {
        return None;
    }
    let p = 10u128.pow(exp.unsigned_abs());
    Some(if exp >= 0 {
        Ratio::new(m.checked_mul(p)?, 1)
    } else {
        Ratio::new(m, p)
    })
}

/// A unit's name and how it turns a number into a quantity.
type Unit = (&'static str, fn(Ratio) -> Quantity);

const UNITS: &[Unit] = &[
    ("ps", |v| Quantity::Duration(v)),
    ("ns", |v| Quantity::Duration(v.times(Ratio::int(NS as u128)))),
    ("us", |v| Quantity::Duration(v.times(Ratio::int(US as u128)))),
    ("µs", |v| Quantity::Duration(v.times(Ratio::int(US as u128)))),
    ("ms", |v| Quantity::Duration(v.times(Ratio::int(MS as u128)))),
    ("s", |v| Quantity::Duration(v.times(Ratio::int(SEC as u128)))),
    ("cycle", Quantity::Cycles),
    ("cycles", Quantity::Cycles),
    ("Hz", Quantity::Frequency),
    ("kHz", |v| Quantity::Frequency(v.times(Ratio::int(1_000)))),
    ("MHz", |v| Quantity::Frequency(v.times(Ratio::int(1_000_000)))),
    ("GHz", |v| Quantity::Frequency(v.times(Ratio::int(1_000_000_000)))),
    ("b/s", Quantity::BitRate),
    ("bit/s", Quantity::BitRate),
    ("Baud", Quantity::BitRate),
    ("kb/s", |v| Quantity::BitRate(v.times(Ratio::int(1_000)))),
    ("kbit/s", |v| Quantity::BitRate(v.times(Ratio::int(1_000)))),
    ("kBaud", |v| Quantity::BitRate(v.times(Ratio::int(1_000)))),
    ("Mb/s", |v| Quantity::BitRate(v.times(Ratio::int(1_000_000)))),
    ("Mbit/s", |v| Quantity::BitRate(v.times(Ratio::int(1_000_000)))),
    ("MBaud", |v| Quantity::BitRate(v.times(Ratio::int(1_000_000)))),
    ("Gb/s", |v| Quantity::BitRate(v.times(Ratio::int(1_000_000_000)))),
    ("Gbit/s", |v| {
        Quantity::BitRate(v.times(Ratio::int(1_000_000_000)))
    }),
    ("GBaud", |v| Quantity::BitRate(v.times(Ratio::int(1_000_000_000)))),
    ("B/s", |v| Quantity::BitRate(v.times(Ratio::int(8)))),
    ("kB/s", |v| Quantity::BitRate(v.times(Ratio::int(8_000)))),
    ("MB/s", |v| Quantity::BitRate(v.times(Ratio::int(8_000_000)))),
    ("GB/s", |v| Quantity::BitRate(v.times(Ratio::int(8_000_000_000)))),
];

/// The units [`parse_quantity`] accepts, for error hints.
pub const UNIT_HINT: &str = "units: ps ns us ms s, cycles, Hz kHz MHz GHz, b/s kb/s Mb/s Gb/s, \
Baud kBaud MBaud GBaud, B/s kB/s MB/s GB/s (MB = 10^6 bytes)";

/// Parses `"<number> <unit>"` (the space is optional), e.g. `"10 ns"`, `"4 cycles"`,
/// `"100 MBaud"`, `"300 MB/s"`, `"1 GHz"`.
pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    let s = s.trim();
    let split = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // An exponent marker directly followed by a unit letter ("2e" is not a number) is rare;
    // fall back to splitting at the first space when the split left a dangling 'e'.
    let (num, unit) = s.split_at(split);
    let (num, unit) = if num.ends_with(['e', 'E']) {
        match s.split_once(' ') {
            Some((a, b)) => (a, b),
            None => (num, unit),
        }
    } else {
        (num, unit)
    };
    let value = parse_decimal(num).ok_or_else(|| {
        if num.starts_with('-') && num.parse::<f64>().is_ok() {
            format!("`{s}`: durations, rates and frequencies cannot be negative")
        } else if num.parse::<f64>().is_ok() {
            format!(
                "`{num}` in `{s}` is out of range: reef reads up to 30 digits and powers of ten \
                 from 10^-30 to 10^30"
            )
        } else {
            format!("`{s}` does not start with a number")
        }
    })?;
    let unit = unit.trim();
    if unit.is_empty() {
        return Err(format!("`{s}` has no unit"));
    }
    UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, f)| f(value))
        .ok_or_else(|| format!("unknown unit `{unit}` in `{s}`"))
}

/// Formats a time [ps] with a readable unit.
pub fn fmt_time(t: Time) -> String {
    if t >= SEC {
        format!("{:.6} s", t as f64 / SEC as f64)
    } else if t >= MS {
        format!("{:.6} ms", t as f64 / MS as f64)
    } else if t >= US {
        format!("{:.3} us", t as f64 / US as f64)
    } else if t >= NS {
        format!("{:.3} ns", t as f64 / NS as f64)
    } else {
        format!("{t} ps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_decimal("1.5"), Some(Ratio::new(3, 2)));
        assert_eq!(parse_decimal("2.5e3"), Some(Ratio::int(2500)));
        assert_eq!(parse_decimal("0.001"), Some(Ratio::new(1, 1000)));
        assert_eq!(parse_decimal(".5"), Some(Ratio::new(1, 2)));
        assert_eq!(parse_decimal("abc"), None);
        assert_eq!(parse_decimal("-1"), None);
        assert_eq!(parse_decimal(""), None);
    }

    #[test]
    fn durations_convert_to_ps() {
        assert_eq!(
            parse_quantity("10 ns"),
            Ok(Quantity::Duration(Ratio::int(10_000)))
        );
        assert_eq!(
            parse_quantity("1.5us"),
            Ok(Quantity::Duration(Ratio::int(1_500_000)))
        );
        assert_eq!(parse_quantity("4 cycles"), Ok(Quantity::Cycles(Ratio::int(4))));
        assert!(parse_quantity("10").is_err());
        assert!(parse_quantity("10 parsecs").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn rates_and_frequencies() {
        assert_eq!(
            parse_quantity("100 MBaud"),
            Ok(Quantity::BitRate(Ratio::int(100_000_000)))
        );
        assert_eq!(
            parse_quantity("300 MB/s"),
            Ok(Quantity::BitRate(Ratio::int(2_400_000_000)))
        );
        assert_eq!(
            parse_quantity("300 MHz"),
            Ok(Quantity::Frequency(Ratio::int(300_000_000)))
        );
    }

    #[test]
    fn clock_edges_do_not_accumulate_rounding() {
        // 300 MHz: P = 3333.33.. ps; edge 3 is exactly 10 ns, edge 3e6 exactly 10 ms.
        let c = Clock::from_hz(Ratio::int(300_000_000));
        assert_eq!(c.edge(1), 3333);
        assert_eq!(c.edge(2), 6666);
        assert_eq!(c.edge(3), 10_000);
        assert_eq!(c.edge(3_000_000), 10 * MS);
        assert_eq!(c.edge_at_or_after(10_000), 3);
        assert_eq!(c.edge_at_or_after(10_001), 4);
        assert_eq!(c.edge_at_or_after(3333), 1);
        assert_eq!(c.edge_at_or_after(3334), 2);
        // 27 cycles at 300 MHz is exactly 90 ns (the ATOLL hop).
        assert_eq!(c.cycles(Ratio::int(27)).exact(), Some(90 * NS));
    }

    #[test]
    fn ratio_rounding() {
        let r = Ratio::new(10_000, 3);
        assert_eq!(r.floor(), 3333);
        assert_eq!(r.ceil(), 3334);
        assert_eq!(r.round(), 3333);
        assert_eq!(Ratio::new(5, 2).round(), 3);
        assert_eq!(r.exact(), None);
        assert_eq!(Ratio::new(6, 3).exact(), Some(2));
    }

    proptest::proptest! {
        /// The fast edge (one multiplication and at most one division) is the exact
        /// rational product, floored and saturated, for any period and edge index.
        #[test]
        fn edges_match_the_rational_product(
            num in 1u128..=u64::MAX as u128 * 4,
            den in 1u128..1_000_000_000,
            n in proptest::prop_oneof![0u64..1_000_000, proptest::num::u64::ANY],
        ) {
            let c = Clock::from_period(Ratio::new(num, den));
            proptest::prop_assert_eq!(c.edge(n), Ratio::int(n as u128).times(c.period()).floor());
        }
    }
}

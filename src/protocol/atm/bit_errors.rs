//! How often random bit errors on the link get past the HEC and the CRC-10: the analytical
//! value the ATM model's error experiment prints beside the simulated rate
//! (`shared/systems/atm.md`, "errors").
//!
//! Model: each bit of a cell is flipped independently with probability `p` (a binary
//! symmetric channel). A check misses an error exactly when the error pattern is itself a
//! nonzero codeword of the (linear) code, so for a code of length `n`
//!
//! ```text
//! P_undetected(p) = Σ_{w ≥ 1} A_w p^w (1 − p)^(n − w)
//! ```
//!
//! where `A_w` counts the codewords of weight `w`. The HEC's coset (XOR 0x55) does not change
//! which patterns pass. The weight distribution comes from the dual code, which for a CRC with
//! `r` check bits has only 2^r words (256 for the HEC, 1,024 for the CRC-10): its weights
//! `B_j` are counted directly, and the MacWilliams identity gives
//!
//! ```text
//! P(error pattern ∈ code) = 2^−r Σ_j B_j (1 − 2p)^j          (zero pattern included)
//! A_w = 2^−r Σ_j B_j K_w(j),   K_w(j) = Σ_s (−1)^s C(j, s) C(n − j, w − s)
//! ```
//!
//! The first form is exact but subtracts numbers near 1 when `p` is small, so it is used only
//! where the result is large; otherwise the sum over `A_w` for `w ≤ 12` (exact integers) is
//! used, with the binomial tail beyond `w = 12` shown to be below 10⁻⁹ of the result.
//!
//! Computed here (and checked by exhaustive search in the tests): the HEC code (n = 40,
//! r = 8) and the SAR-PDU CRC-10 code (n = 384, r = 10) both have minimum distance 4: every
//! error of 1, 2 or 3 bits is caught. They have A_4 = 727 and A_4 = 1,752,074 words of
//! weight 4, so at p = 10⁻⁵ a cell carries undetected damage with probability about
//! 1.75·10⁻¹⁴, almost all of it in the SAR-PDU. x⁸+x²+x+1 and x¹⁰+x⁹+x⁵+x⁴+x+1 = (x+1)(x⁹+x⁴+1) both
//! have the factor x+1, so every odd number of errors is caught too.

use std::sync::OnceLock;

use thiserror::Error;

use super::aal34::cell_count;
use super::crc::{CRC8_POLY, CRC10_POLY};

/// Codeword weights counted exactly (and used for small `p`).
pub const LOW_WEIGHT_MAX: usize = 12;
/// Bits the HEC covers: four header bytes and itself.
pub const HEADER_BITS: usize = 40;
/// Bits the CRC-10 covers: the whole SAR-PDU.
pub const SAR_PDU_BITS: usize = 384;

/// Why a code or a probability cannot be computed.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
pub enum BitErrorError {
    /// Check bits outside 1..=12 (the dual code is enumerated: 2^r words).
    #[error("{0} check bits: only 1 to 12 are supported")]
    CheckBits(u32),
    /// Code length outside r..=1024 bits.
    #[error("code length {0} bits: must be at least the check bits and at most 1024")]
    Length(usize),
    /// A bit error rate outside [0, 1] or not a number.
    #[error("bit error rate {0} is not a probability")]
    Probability(f64),
}

/// A CRC code of a given length: its dual's weight distribution and its low weights.
#[derive(Debug, Clone)]
pub struct CrcCode {
    n: usize,
    r: u32,
    /// `dual_weights[j]`: words of the dual code of weight j.
    dual_weights: Vec<u64>,
    /// `low_weights[w]`: codewords of weight w, for w ≤ LOW_WEIGHT_MAX.
    low_weights: Vec<u128>,
}

/// Binomial coefficient, exact (the sizes here stay far below u128's range).
fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 1..=k {
        // c · (n − k + i) / i stays an integer: it is C(n − k + i, i).
        c = c * (n - k + i) as u128 / i as u128;
    }
    c
}

impl CrcCode {
    /// The code of codewords of `n` bits divisible by the generator of degree `r` whose lower
    /// terms are `poly` (e.g. 0x07 for x⁸+x²+x+1).
    pub fn new(poly: u32, r: u32, n: usize) -> Result<Self, BitErrorError> {
        if !(1..=12).contains(&r) {
            return Err(BitErrorError::CheckBits(r));
        }
        if n < r as usize || n > 1024 {
            return Err(BitErrorError::Length(n));
        }
        // Bit k from the end of a word contributes x^k mod g to its remainder.
        let generator = (poly & ((1 << r) - 1)) | (1 << r);
        let mut syndromes = Vec::with_capacity(n);
        let mut s: u32 = 1;
        for _ in 0..n {
            syndromes.push(s);
            s <<= 1;
            if s & (1 << r) != 0 {
                s ^= generator;
            }
        }
        // Dual word for a functional u: bit k is the parity of u & syndrome_k.
        let mut dual_weights = vec![0u64; n + 1];
        for u in 0..(1u32 << r) {
            let weight = syndromes
                .iter()
                .filter(|&&s| (u & s).count_ones() % 2 == 1)
                .count();
            dual_weights[weight] += 1;
        }
        let low_weights = (0..=LOW_WEIGHT_MAX.min(n))
            .map(|w| {
                let sum: i128 = (0..=n)
                    .filter(|&j| dual_weights[j] != 0)
                    .map(|j| {
                        let k: i128 = (0..=w)
                            .map(|s| {
                                let term = (binomial(j, s) * binomial(n - j, w - s)) as i128;
                                if s % 2 == 0 { term } else { -term }
                            })
                            .sum();
                        dual_weights[j] as i128 * k
                    })
                    .sum();
                // MacWilliams: the sum is 2^r · A_w exactly.
                (sum >> r) as u128
            })
            .collect();
        Ok(CrcCode {
            n,
            r,
            dual_weights,
            low_weights,
        })
    }

    /// The HEC code: CRC-8 x⁸+x²+x+1 over the 40 header bits.
    pub fn hec() -> &'static CrcCode {
        static CODE: OnceLock<CrcCode> = OnceLock::new();
        CODE.get_or_init(|| CrcCode::new(u32::from(CRC8_POLY), 8, HEADER_BITS).expect("valid HEC code"))
    }

    /// The SAR-PDU code: CRC-10 x¹⁰+x⁹+x⁵+x⁴+x+1 over the 384 bits of a SAR-PDU.
    pub fn sar_crc10() -> &'static CrcCode {
        static CODE: OnceLock<CrcCode> = OnceLock::new();
        CODE.get_or_init(|| CrcCode::new(u32::from(CRC10_POLY), 10, SAR_PDU_BITS).expect("valid CRC-10 code"))
    }

    /// Code length [bits].
    pub fn length(&self) -> usize {
        self.n
    }

    /// Codewords of weight `w`, for `w ≤ LOW_WEIGHT_MAX`.
    pub fn weight_count(&self, w: usize) -> Option<u128> {
        self.low_weights.get(w).copied()
    }

    /// Smallest weight of a nonzero codeword, if one is within `LOW_WEIGHT_MAX`.
    pub fn minimum_distance(&self) -> Option<usize> {
        (1..self.low_weights.len()).find(|&w| self.low_weights[w] > 0)
    }

    /// Probability that a random error pattern at bit error rate `p` is a nonzero codeword:
    /// damage the check does not see.
    pub fn undetected_probability(&self, p: f64) -> Result<f64, BitErrorError> {
        check_probability(p)?;
        if p == 0.0 {
            return Ok(0.0);
        }
        let n = self.n as f64;
        if p <= 0.5 {
            let q = p / (1.0 - p);
            let base = (n * (-p).ln_1p()).exp();
            let low: f64 = (1..self.low_weights.len())
                .map(|w| self.low_weights[w] as f64 * q.powi(w as i32) * base)
                .sum();
            if binomial_tail(self.n, p, self.low_weights.len()) <= 1e-9 * low {
                return Ok(low);
            }
        }
        // 2^−r Σ B_j (1 − 2p)^j − (1 − p)^n, exact; the subtraction is harmless here because
        // the result is not small.
        let pass: f64 = self
            .dual_weights
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b != 0)
            .map(|(j, &b)| b as f64 * (1.0 - 2.0 * p).powi(j as i32))
            .sum::<f64>()
            / f64::from(1u32 << self.r);
        Ok((pass - (1.0 - p).powf(n)).max(0.0))
    }
}

fn check_probability(p: f64) -> Result<(), BitErrorError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(BitErrorError::Probability(p))
    }
}

/// P(more than `from − 1` of `n` bits in error) at rate `p` ≤ 0.5, summed term by term in
/// logarithms so that tiny tails are not lost.
fn binomial_tail(n: usize, p: f64, from: usize) -> f64 {
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut ln_c: f64 = (0..from.min(n + 1))
        .map(|k| ((n - k) as f64).ln() - ((k + 1) as f64).ln())
        .sum();
    let mut tail = 0.0;
    for w in from..=n {
        tail += (ln_c + w as f64 * lp + (n - w) as f64 * lq).exp();
        ln_c += ((n - w) as f64).ln() - ((w + 1) as f64).ln();
    }
    tail
}

/// P(at least one of `n` bits in error) at rate `p`, without cancellation.
fn any_error(n: usize, p: f64) -> f64 {
    -(n as f64 * (-p).ln_1p()).exp_m1()
}

/// What bit errors do to one cell at bit error rate `p`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellErrorRates {
    /// Header damaged and the HEC sees it: the cell is discarded.
    pub header_detected: f64,
    /// Header damaged into another valid header: the cell goes to the wrong circuit or
    /// changes type; the reassembler usually catches it later as a loss.
    pub header_undetected: f64,
    /// SAR-PDU damaged and the CRC-10 sees it: the cell is discarded.
    pub payload_detected: f64,
    /// SAR-PDU damaged into another valid SAR-PDU: corrupt data may be delivered.
    pub payload_undetected: f64,
    /// Some damage that neither check sees (header, payload or both).
    pub cell_undetected: f64,
}

/// Rates of detected and undetected damage for one AAL3/4 cell at bit error rate `p`.
pub fn cell_error_rates(p: f64) -> Result<CellErrorRates, BitErrorError> {
    let header_undetected = CrcCode::hec().undetected_probability(p)?;
    let payload_undetected = CrcCode::sar_crc10().undetected_probability(p)?;
    let header_ok = 1.0 - any_error(HEADER_BITS, p);
    let payload_ok = 1.0 - any_error(SAR_PDU_BITS, p);
    Ok(CellErrorRates {
        header_detected: any_error(HEADER_BITS, p) - header_undetected,
        header_undetected,
        payload_detected: any_error(SAR_PDU_BITS, p) - payload_undetected,
        payload_undetected,
        // Both patterns codewords, not both zero.
        cell_undetected: header_undetected * payload_ok
            + header_ok * payload_undetected
            + header_undetected * payload_undetected,
    })
}

/// Probability that an AAL3/4 frame of `frame_len` bytes is delivered with corrupt data at
/// bit error rate `p`.
///
/// With k = cells of the frame, the frame is delivered corrupt when every cell arrives with
/// an error-free header and a SAR-PDU that passes the CRC-10, and at least one SAR-PDU is
/// damaged:
///
/// ```text
/// P = (1 − p)^(40k) · [ (P_ok + P_ud)^k − P_ok^k ],   P_ok = (1 − p)^384, P_ud as above
/// ```
///
/// Two simplifications, in opposite directions, both of order p⁴ per cell against the terms
/// kept: a cell whose header is damaged into another valid header is counted as lost to the
/// frame (the reassembler then usually finds the frame short), and every undetected SAR-PDU
/// error is counted as delivered, though one that changes ST, SN, MID or LI is usually
/// caught by the reassembler. The Penn hardware ignores SN, which this estimate matches.
pub fn aal34_frame_undetected(p: f64, frame_len: usize) -> Result<f64, BitErrorError> {
    check_probability(p)?;
    let k = cell_count(frame_len) as f64;
    let payload_undetected = CrcCode::sar_crc10().undetected_probability(p)?;
    let payload_ok = 1.0 - any_error(SAR_PDU_BITS, p);
    if payload_ok == 0.0 {
        // p = 1: every header is damaged, so no frame arrives at all.
        return Ok(0.0);
    }
    let header_ok_all = (k * HEADER_BITS as f64 * (-p).ln_1p()).exp();
    let ok_all = (k * SAR_PDU_BITS as f64 * (-p).ln_1p()).exp();
    // (P_ok + P_ud)^k − P_ok^k = P_ok^k · expm1(k · ln(1 + P_ud / P_ok)).
    Ok(header_ok_all * ok_all * (k * (payload_undetected / payload_ok).ln_1p()).exp_m1())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All error patterns of weight `w` over `n` bits whose syndromes XOR to zero.
    fn brute_force_count(code_syndromes: &[u32], w: usize) -> u128 {
        fn rec(s: &[u32], start: usize, left: usize, acc: u32) -> u128 {
            if left == 0 {
                return u128::from(acc == 0);
            }
            (start..s.len())
                .map(|i| rec(s, i + 1, left - 1, acc ^ s[i]))
                .sum()
        }
        rec(code_syndromes, 0, w, 0)
    }

    fn syndromes(poly: u32, r: u32, n: usize) -> Vec<u32> {
        let g = poly | (1 << r);
        let mut s = 1;
        (0..n)
            .map(|_| {
                let out = s;
                s <<= 1;
                if s & (1 << r) != 0 {
                    s ^= g;
                }
                out
            })
            .collect()
    }

    #[test]
    fn hec_code_has_distance_4_by_exhaustive_search() {
        let code = CrcCode::hec();
        let s = syndromes(0x07, 8, 40);
        for w in 1..=3 {
            assert_eq!(brute_force_count(&s, w), 0, "weight {w}");
        }
        let a4 = brute_force_count(&s, 4);
        assert!(a4 > 0);
        assert_eq!(code.weight_count(4), Some(a4));
        assert_eq!(code.minimum_distance(), Some(4));
        assert_eq!(code.weight_count(0), Some(1));
    }

    #[test]
    fn crc10_code_has_distance_4_by_exhaustive_search() {
        let code = CrcCode::sar_crc10();
        let s = syndromes(0x233, 10, 384);
        // Weights 1..=3 exhaustively (C(384, 3) ≈ 9.4 million patterns).
        for w in 1..=3 {
            assert_eq!(brute_force_count(&s, w), 0, "weight {w}");
        }
        // Weight 4 by pairs: pairs with equal syndrome sums form a 4-set, each counted in 3
        // ways; two pairs with equal sums cannot share a bit since no 2-pattern is a codeword.
        let mut pairs = vec![0u128; 1 << 10];
        for i in 0..s.len() {
            for j in i + 1..s.len() {
                pairs[(s[i] ^ s[j]) as usize] += 1;
            }
        }
        let a4: u128 = pairs.iter().map(|&m| m * m.saturating_sub(1) / 2).sum::<u128>() / 3;
        assert!(a4 > 0);
        assert_eq!(code.weight_count(4), Some(a4));
        assert_eq!(code.minimum_distance(), Some(4));
        assert_eq!(code.length(), 384);
    }

    #[test]
    fn odd_weights_never_pass() {
        for code in [CrcCode::hec(), CrcCode::sar_crc10()] {
            for w in (1..=LOW_WEIGHT_MAX).step_by(2) {
                assert_eq!(code.weight_count(w), Some(0));
            }
        }
    }

    #[test]
    fn small_p_follows_the_leading_term() {
        let code = CrcCode::sar_crc10();
        let a4 = code.weight_count(4).unwrap() as f64;
        let p = 1e-9;
        let got = code.undetected_probability(p).unwrap();
        let lead = a4 * p.powi(4) * (1.0 - p).powi(380);
        assert!((got / lead - 1.0).abs() < 1e-6, "{got} vs {lead}");
    }

    #[test]
    fn both_formulas_agree_where_both_are_accurate() {
        for code in [CrcCode::hec(), CrcCode::sar_crc10()] {
            for p in [1e-3, 3e-3] {
                let low = code.undetected_probability(p).unwrap();
                let q = p / (1.0 - p);
                let base = (1.0 - p).powi(code.length() as i32);
                let by_weights: f64 = (1..=LOW_WEIGHT_MAX)
                    .map(|w| code.weight_count(w).unwrap() as f64 * q.powi(w as i32) * base)
                    .sum();
                let pass: f64 = code
                    .dual_weights
                    .iter()
                    .enumerate()
                    .map(|(j, &b)| b as f64 * (1.0 - 2.0 * p).powi(j as i32))
                    .sum::<f64>()
                    / f64::from(1u32 << code.r);
                let dual = pass - base;
                assert!((low / dual - 1.0).abs() < 1e-5, "{p}: {low} {dual}");
                assert!((by_weights / dual - 1.0).abs() < 1e-5, "{p}: {by_weights} {dual}");
            }
        }
    }

    #[test]
    fn at_half_every_pattern_is_equally_likely() {
        // p = 1/2: each of the 2^n patterns has probability 2^−n, and 2^(n−r) are codewords.
        let code = CrcCode::sar_crc10();
        let got = code.undetected_probability(0.5).unwrap();
        let expected = 2f64.powi(-10) - 2f64.powi(-384);
        assert!((got / expected - 1.0).abs() < 1e-12);
    }

    #[test]
    fn cell_and_frame_rates() {
        let r = cell_error_rates(1e-5).unwrap();
        assert!(r.header_detected > 3.9e-4 && r.header_detected < 4.0e-4);
        assert!(r.payload_detected > 3.8e-3 && r.payload_detected < 3.9e-3);
        // Dominated by four-bit patterns in the SAR-PDU: A_4 p⁴.
        let lead = CrcCode::sar_crc10().weight_count(4).unwrap() as f64 * 1e-20;
        assert!((r.cell_undetected / lead - 1.0).abs() < 1e-2, "{r:?}");
        assert_eq!(cell_error_rates(0.0).unwrap().cell_undetected, 0.0);
        // At a low rate a frame of k cells is k times as exposed as one cell.
        let one_cell = aal34_frame_undetected(1e-7, 36).unwrap();
        let largest = aal34_frame_undetected(1e-7, 65_535).unwrap();
        let clean_rest = (1.0 - 1e-7f64).powi(424 * 1489);
        assert!(((largest / one_cell) / (1490.0 * clean_rest) - 1.0).abs() < 1e-3);
        // At a high rate a large frame hardly ever arrives at all, corrupt or not.
        assert!(aal34_frame_undetected(1e-4, 65_535).unwrap() < 1e-30);
        let one = aal34_frame_undetected(1e-4, 36).unwrap();
        // One cell: the frame's rate is the cell's payload rate times a clean header.
        let per_cell = CrcCode::sar_crc10().undetected_probability(1e-4).unwrap() * (1.0 - 1e-4f64).powi(40);
        assert!((one / per_cell - 1.0).abs() < 1e-9);
        assert_eq!(aal34_frame_undetected(1.0, 100), Ok(0.0));
        assert_eq!(
            aal34_frame_undetected(-0.1, 100),
            Err(BitErrorError::Probability(-0.1))
        );
        assert!(cell_error_rates(f64::NAN).is_err());
    }

    #[test]
    fn bad_codes_are_refused() {
        assert_eq!(
            CrcCode::new(0x07, 0, 40).unwrap_err(),
            BitErrorError::CheckBits(0)
        );
        assert_eq!(CrcCode::new(0x07, 8, 4).unwrap_err(), BitErrorError::Length(4));
        assert_eq!(
            CrcCode::new(0x07, 8, 2000).unwrap_err(),
            BitErrorError::Length(2000)
        );
    }
}

//! Medians, means and bootstrap intervals. The bootstrap draws from a small
//! seeded generator, so the same runs always give the same report.

use serde::Serialize;

/// A statistic with its 95 % bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// How many values it was computed from.
    pub n: usize,
}

/// SplitMix64: tiny, fast and good enough for resampling indices.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    })
}

pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Resamples drawn for an interval.
pub const RESAMPLES: usize = 2000;
/// The generator's seed: fixed, so a report can be reproduced exactly.
pub const BOOTSTRAP_SEED: u64 = 0x6b6e_6163_6b65_7661;

/// `statistic` of `values` with its percentile bootstrap 95 % interval.
pub fn bootstrap(values: &[f64], statistic: fn(&[f64]) -> Option<f64>) -> Option<Estimate> {
    let value = statistic(values)?;
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    let mut stats = Vec::with_capacity(RESAMPLES);
    let mut sample = vec![0.0; values.len()];
    for _ in 0..RESAMPLES {
        for slot in sample.iter_mut() {
            *slot = values[rng.below(values.len())];
        }
        if let Some(s) = statistic(&sample) {
            stats.push(s);
        }
    }
    stats.sort_by(f64::total_cmp);
    let at = |q: f64| stats[((stats.len() - 1) as f64 * q).round() as usize];
    Some(Estimate {
        value,
        low: at(0.025),
        high: at(0.975),
        n: values.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_odd_lists() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn the_bootstrap_is_deterministic_and_brackets_the_value() {
        let values = [10.0, 12.0, 9.0, 14.0, 11.0, 30.0];
        let a = bootstrap(&values, median).unwrap();
        let b = bootstrap(&values, median).unwrap();
        assert_eq!(a, b);
        assert!(a.low <= a.value && a.value <= a.high, "{a:?}");
        assert!(a.low >= 9.0 && a.high <= 30.0);
        let constant = bootstrap(&[5.0; 4], mean).unwrap();
        assert_eq!((constant.low, constant.high), (5.0, 5.0));
    }
}

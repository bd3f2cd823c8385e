//! Percentiles and formatting shared by the benchmarks.

use std::time::Duration;

/// The `p` quantile (0–1) of sorted samples, nearest rank.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Milliseconds with `decimals` digits.
pub fn ms(d: Duration, decimals: usize) -> String {
    format!("{:.*} ms", decimals, d.as_secs_f64() * 1000.0)
}

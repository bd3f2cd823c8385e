//! Percentiles, formatting and sizes from the environment, shared by the benchmarks.

use std::time::Duration;

/// The `p` quantile (0–1) of sorted samples, nearest rank.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Prints `what: p50 … p99 … max … (N trials)` for `samples`, in milliseconds; the p50.
pub fn report(what: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let p50 = percentile(&samples, 0.50);
    println!(
        "{what}: p50 {}  p99 {}  max {}  ({} trials)",
        ms(p50, 2),
        ms(percentile(&samples, 0.99), 2),
        ms(*samples.last().unwrap(), 2),
        samples.len()
    );
    p50
}

/// Milliseconds with `decimals` digits.
pub fn ms(d: Duration, decimals: usize) -> String {
    format!("{:.*} ms", decimals, d.as_secs_f64() * 1000.0)
}

/// The number in environment variable `name` (a benchmark's size or count), else `default`.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

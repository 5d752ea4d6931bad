//! Percentiles of timed samples.

use std::time::Duration;

/// The nearest-rank percentile `q` (0–100) of `samples`; zero when there are none.
pub fn percentile(samples: &[Duration], q: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((q / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The largest sample; zero when there are none.
pub fn max(samples: &[Duration]) -> Duration {
    samples.iter().copied().max().unwrap_or(Duration::ZERO)
}

/// Bytes over time in MiB/s; zero for a zero time.
pub fn mib_per_s(bytes: u64, took: Duration) -> f64 {
    let seconds = took.as_secs_f64();
    if seconds <= 0.0 {
        return 0.0;
    }
    bytes as f64 / (1024.0 * 1024.0) / seconds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&samples, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&samples[..1], 99.0), Duration::from_millis(1));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }
}

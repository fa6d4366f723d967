//! Wakeup-latency statistics: exact count, min, max and mean, plus an HDR histogram (two
//! significant digits) for percentiles, so memory does not grow with the number of samples.
//! The histogram is allocated at the first sample: tasks that never wake cost nothing.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latencies above this (100 s) are clamped into the top bucket.
const HIGHEST_NS: u64 = 100_000_000_000;

#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    hist: Option<Histogram<u32>>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// The summary written to the results (ns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min: u64,
    pub mean: u64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub max: u64,
}

impl LatencyHistogram {
    pub fn record(&mut self, ns: u64) {
        let h = self.hist.get_or_insert_with(|| {
            Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("valid histogram bounds")
        });
        h.saturating_record(ns.clamp(1, HIGHEST_NS));
        if self.count == 0 || ns < self.min {
            self.min = ns;
        }
        self.max = self.max.max(ns);
        self.count += 1;
        self.sum += ns as u128;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Merge another histogram into this one (e.g. all threads of a generator).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let Some(oh) = &other.hist else { return };
        let h = self.hist.get_or_insert_with(|| {
            Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("valid histogram bounds")
        });
        // Same bounds on both sides: adding cannot fail.
        let _ = h.add(oh);
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }

    /// A percentile (0..=100), never outside [min, max].
    pub fn percentile(&self, q: f64) -> u64 {
        match &self.hist {
            Some(h) if self.count > 0 => h.value_at_quantile(q / 100.0).clamp(self.min, self.max),
            _ => 0,
        }
    }

    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.count,
            min: self.min,
            mean: (self.sum / self.count as u128) as u64,
            p50: self.percentile(50.0),
            p90: self.percentile(90.0),
            p95: self.percentile(95.0),
            p99: self.percentile(99.0),
            max: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_two_digits() {
        let mut h = LatencyHistogram::default();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min, 1000);
        assert_eq!(s.max, 1_000_000);
        assert_eq!(s.mean, 500_500);
        for (p, want) in [(s.p50, 500_000.0), (s.p90, 900_000.0), (s.p99, 990_000.0)] {
            assert!((p as f64 - want).abs() / want < 0.01, "{p} vs {want}");
        }
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(
            LatencyHistogram::default().summary(),
            LatencySummary::default()
        );
    }
}

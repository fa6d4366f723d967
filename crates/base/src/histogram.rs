//! Wakeup-latency statistics: exact count, min, max and mean, plus a histogram for
//! percentiles with HDR's buckets at two significant digits (256 sub-buckets per power of
//! two), so memory does not grow with the number of samples.
//!
//! The buckets are kept sparse: a sorted list of the buckets that hold samples, each entry
//! one `u64` packing (bucket << 32) | count, so a new bucket moves half as many bytes as a
//! (bucket, count) pair of 16 would. A task's latencies fall in few buckets, so ten thousand
//! tasks cost kilobytes each, not the 16 KB a dense HDR array over 1 ns..100 s takes (and
//! clears) per histogram. A count that would pass `u32::MAX` goes on in a new entry of the
//! same bucket: a bucket's entries are adjacent, the one not full (if any) first, so the
//! packed values stay sorted and no count wraps or is lost. Percentiles are HDR's
//! `value_at_quantile` over the same buckets (the tests check it against the hdrhistogram
//! crate).

use serde::Serialize;

/// Latencies above this (100 s) are clamped into the top bucket.
const HIGHEST_NS: u64 = 100_000_000_000;
/// log2 of half the sub-buckets per bucket: two significant digits need 200 distinct
/// values below the first doubling, rounded up to 256 sub-buckets (HDR's layout).
const HALF_MAG: u32 = 7;
const SUB_MASK: u64 = (1 << (HALF_MAG + 1)) - 1;
/// The count bits of an entry; a full entry holds `COUNT_MAX`.
const COUNT_MAX: u64 = u32::MAX as u64;

/// HDR's bucket of `v` (v ≥ 1): (power-of-two bucket << 8) | sub-bucket, ordered like the
/// values.
fn bucket_of(v: u64) -> u32 {
    let bucket = (64 - HALF_MAG - 1) - (v | SUB_MASK).leading_zeros();
    (bucket << 8) | (v >> bucket) as u32
}

/// The lowest and highest value of a bucket.
fn bucket_range(key: u32) -> (u64, u64) {
    let (bucket, sub) = (key >> 8, u64::from(key & 0xff));
    let lo = sub << bucket;
    (lo, lo + (1u64 << bucket) - 1)
}

/// The bucket of a packed entry.
fn key_of(entry: u64) -> u32 {
    (entry >> 32) as u32
}

/// The count of a packed entry.
fn count_of(entry: u64) -> u64 {
    entry & COUNT_MAX
}

/// Appends `n` samples of bucket `key` as packed entries: the part that does not fill an
/// entry first, then full entries.
fn push_count(out: &mut Vec<u64>, key: u32, n: u64) {
    let base = u64::from(key) << 32;
    if n % COUNT_MAX != 0 {
        out.push(base | (n % COUNT_MAX));
    }
    for _ in 0..n / COUNT_MAX {
        out.push(base | COUNT_MAX);
    }
}

#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    /// Non-empty buckets, packed (bucket << 32) | count, sorted; of a bucket's entries at
    /// most one is not full, the first.
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl LatencyHistogram {
    /// The empty histogram (`default()`), for statics.
    pub const EMPTY: LatencyHistogram = LatencyHistogram {
        buckets: Vec::new(),
        count: 0,
        sum: 0,
        min: 0,
        max: 0,
    };
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
        let key = bucket_of(ns.clamp(1, HIGHEST_NS));
        let first = u64::from(key) << 32;
        let i = self.buckets.partition_point(|&e| e < first);
        match self.buckets.get_mut(i) {
            Some(e) if *e < first | COUNT_MAX => *e += 1,
            _ => self.buckets.insert(i, first | 1),
        }
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
        if other.count == 0 {
            return;
        }
        let (a, b) = (&self.buckets, &other.buckets);
        let mut merged = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        let mut open: Option<(u32, u64)> = None;
        while i < a.len() || j < b.len() {
            let e = if j == b.len() || (i < a.len() && a[i] < b[j]) {
                i += 1;
                a[i - 1]
            } else {
                j += 1;
                b[j - 1]
            };
            match &mut open {
                Some((key, n)) if *key == key_of(e) => *n += count_of(e),
                _ => {
                    if let Some((key, n)) = open {
                        push_count(&mut merged, key, n);
                    }
                    open = Some((key_of(e), count_of(e)));
                }
            }
        }
        if let Some((key, n)) = open {
            push_count(&mut merged, key, n);
        }
        self.buckets = merged;
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }

    /// A percentile (0..=100), never outside [min, max]: HDR's `value_at_quantile`, the
    /// highest value of the bucket where the running count reaches ⌈q·count⌉ (the lowest
    /// for q = 0).
    pub fn percentile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let quantile = (q / 100.0).min(1.0);
        let target = ((quantile * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for &e in &self.buckets {
            seen += count_of(e);
            if seen >= target {
                let (lo, hi) = bucket_range(key_of(e));
                let v = if quantile == 0.0 { lo } else { hi };
                return v.clamp(self.min, self.max);
            }
        }
        self.max
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

    /// Same percentiles as the hdrhistogram crate with the bounds the dense histogram had
    /// (1 ns..100 s, two significant digits), over spreads from ns to seconds.
    #[test]
    fn percentiles_equal_hdrhistogram() {
        let mut rng = crate::sim::SimRng::new(3);
        for spread in [100u64, 10_000, 3_000_000, 90_000_000_000] {
            let mut ours = LatencyHistogram::default();
            let mut parts = [LatencyHistogram::default(), LatencyHistogram::default()];
            let mut hdr =
                hdrhistogram::Histogram::<u32>::new_with_bounds(1, HIGHEST_NS, 2).unwrap();
            for i in 0..5000 {
                let v = rng.below(spread) + rng.below(50);
                ours.record(v);
                parts[i % 2].record(v);
                hdr.saturating_record(v.clamp(1, HIGHEST_NS));
            }
            parts[0].merge(&parts[1].clone());
            for q in [0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
                let want = hdr.value_at_quantile(q / 100.0).clamp(ours.min, ours.max);
                assert_eq!(ours.percentile(q), want, "spread {spread} q {q}");
                assert_eq!(
                    parts[0].percentile(q),
                    want,
                    "merged, spread {spread} q {q}"
                );
            }
            assert_eq!(parts[0].summary(), ours.summary());
        }
    }

    /// The samples of each bucket, whatever the entries that hold them.
    fn counts(h: &LatencyHistogram) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = Vec::new();
        for &e in &h.buckets {
            match out.last_mut() {
                Some((key, n)) if *key == key_of(e) => *n += count_of(e),
                _ => out.push((key_of(e), count_of(e))),
            }
        }
        out
    }

    /// A bucket past `u32::MAX` samples goes on counting in a second entry, recording and
    /// merging, and percentiles see the whole count.
    #[test]
    fn counts_past_u32_are_kept() {
        let (low, high) = (1_000u64, 5_000_000u64);
        let (k_low, k_high) = (bucket_of(low), bucket_of(high));
        let mut h = LatencyHistogram::default();
        h.record(high);
        h.record(low);
        // A full entry of `low` as ⌈u32::MAX⌉ recordings would leave it.
        h.buckets[0] |= COUNT_MAX;
        h.count += COUNT_MAX - 1;
        h.sum += u128::from(low) * u128::from(COUNT_MAX - 1);
        h.record(low);
        h.record(low);
        h.record(high);
        assert_eq!(counts(&h), [(k_low, COUNT_MAX + 2), (k_high, 2)]);
        assert_eq!(h.buckets.len(), 3);
        assert_eq!(h.count, COUNT_MAX + 4);
        assert_eq!(h.percentile(100.0), high);
        let (_, hi) = bucket_range(k_low);
        assert_eq!(h.percentile(99.9), hi);

        let mut m = h.clone();
        m.merge(&h);
        assert_eq!(counts(&m), [(k_low, 2 * COUNT_MAX + 4), (k_high, 4)]);
        assert_eq!(m.count, 2 * (COUNT_MAX + 4));
        assert!(m.buckets.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(m.buckets.len(), 4);
        m.record(low);
        assert_eq!(counts(&m), [(k_low, 2 * COUNT_MAX + 5), (k_high, 4)]);
        assert_eq!(m.buckets.len(), 4);
        assert_eq!(m.summary().p99, hi);
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(
            LatencyHistogram::default().summary(),
            LatencySummary::default()
        );
    }
}

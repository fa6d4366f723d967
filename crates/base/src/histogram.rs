//! Wakeup-latency statistics: exact count, min, max and mean, plus a histogram for
//! percentiles with HDR's buckets at two significant digits (256 sub-buckets per power of
//! two), so memory does not grow with the number of samples.
//!
//! The buckets are kept sparse: a sorted list of the buckets that hold samples, each entry
//! one `u64` packing (bucket << 32) | count. A task's latencies fall in few buckets, so ten
//! thousand tasks cost kilobytes each, not the 16 KB a dense HDR array over 1 ns..100 s takes
//! (and clears) per histogram. A count that would pass `u32::MAX` goes on in a new entry of
//! the same bucket: a bucket's entries are adjacent, the one not full (if any) first, so the
//! packed values stay sorted and no count wraps or is lost. A sample is first only noted
//! (its bucket pushed on a list of fresh ones); once the fresh buckets are as many as the
//! entries (and at least `FRESH_MIN`), they are sorted and merged into the list in one pass,
//! so a record costs no search and no move of the entries, and memory stays bounded by the
//! buckets' (a task's latencies spread over hundreds of buckets: most samples would insert
//! one). Percentiles are HDR's `value_at_quantile` over the same buckets (the tests check it
//! against the hdrhistogram crate).

use serde::Serialize;
use std::borrow::Cow;

/// Latencies above this (100 s) are clamped into the top bucket.
const HIGHEST_NS: u64 = 100_000_000_000;
/// log2 of half the sub-buckets per bucket: two significant digits need 200 distinct
/// values below the first doubling, rounded up to 256 sub-buckets (HDR's layout).
const HALF_MAG: u32 = 7;
const SUB_MASK: u64 = (1 << (HALF_MAG + 1)) - 1;
/// The count bits of an entry; a full entry holds `COUNT_MAX`.
const COUNT_MAX: u64 = u32::MAX as u64;
/// The fewest fresh samples merged at once.
const FRESH_MIN: usize = 256;
/// A fresh sample already counted into its bucket during a merge (above every bucket).
const TAKEN: u32 = u32::MAX;

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
    /// most one is not full, the first. The samples of `fresh` are not in them yet.
    buckets: Vec<u64>,
    /// The buckets of the samples recorded since the last merge, one per sample, unsorted.
    fresh: Vec<u32>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl LatencyHistogram {
    /// The empty histogram (`default()`), for statics.
    pub const EMPTY: LatencyHistogram = LatencyHistogram {
        buckets: Vec::new(),
        fresh: Vec::new(),
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
        self.fresh.push(bucket_of(ns.clamp(1, HIGHEST_NS)));
        if self.fresh.len() >= self.buckets.len().max(FRESH_MIN) {
            self.settle();
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

    /// Merge the fresh samples into the buckets: sorted, each run of a bucket already held
    /// adds to that bucket's first entry as the cursor walks the entries, and the runs of
    /// new buckets are then merged in from the back, each entry moved once.
    #[inline(never)]
    fn settle(&mut self) {
        self.fresh.sort_unstable();
        let (mut new, mut i, mut j) = (0, 0, 0);
        while j < self.fresh.len() {
            let key = self.fresh[j];
            let run = self.fresh[j..].iter().take_while(|&&k| k == key).count();
            let first = u64::from(key) << 32;
            while i < self.buckets.len() && self.buckets[i] < first {
                i += 1;
            }
            match self.buckets.get_mut(i) {
                Some(e) if key_of(*e) == key => {
                    let (c, n) = (count_of(*e), run as u64);
                    if c + n <= COUNT_MAX {
                        *e += n;
                    } else {
                        // The first entry fills up; the rest starts a new first entry.
                        *e = first | COUNT_MAX;
                        self.buckets.insert(i, first | (c + n - COUNT_MAX));
                    }
                    self.fresh[j..j + run].fill(TAKEN);
                }
                _ => new += 1,
            }
            j += run;
        }
        if new > 0 {
            let old = self.buckets.len();
            self.buckets.resize(old + new, 0);
            let (mut i, mut w, mut j) = (old, old + new, self.fresh.len());
            while j > 0 {
                let key = self.fresh[j - 1];
                let run = self.fresh[..j]
                    .iter()
                    .rev()
                    .take_while(|&&k| k == key)
                    .count();
                j -= run;
                if key == TAKEN {
                    continue;
                }
                // A new bucket: no entry shares its key, so the packed values order it.
                let entry = (u64::from(key) << 32) | run as u64;
                while i > 0 && self.buckets[i - 1] > entry {
                    w -= 1;
                    i -= 1;
                    self.buckets[w] = self.buckets[i];
                }
                w -= 1;
                self.buckets[w] = entry;
            }
            debug_assert_eq!(w, i, "every new bucket placed");
        }
        self.fresh.clear();
    }

    /// This histogram with every sample in its buckets.
    fn settled(&self) -> Cow<'_, LatencyHistogram> {
        if self.fresh.is_empty() {
            Cow::Borrowed(self)
        } else {
            let mut h = self.clone();
            h.settle();
            Cow::Owned(h)
        }
    }

    /// Merge another histogram into this one (e.g. all threads of a generator).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        self.settle();
        let other = other.settled();
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
        self.settled().settled_percentile(q)
    }

    /// [`LatencyHistogram::percentile`] of a histogram with no fresh samples.
    fn settled_percentile(&self, q: f64) -> u64 {
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
        let h = self.settled();
        LatencySummary {
            count: self.count,
            min: self.min,
            mean: (self.sum / self.count as u128) as u64,
            p50: h.settled_percentile(50.0),
            p90: h.settled_percentile(90.0),
            p95: h.settled_percentile(95.0),
            p99: h.settled_percentile(99.0),
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
        for &e in &h.settled().buckets {
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
        h.settle();
        // A full entry of `low` as ⌈u32::MAX⌉ recordings would leave it.
        h.buckets[0] |= COUNT_MAX;
        h.count += COUNT_MAX - 1;
        h.sum += u128::from(low) * u128::from(COUNT_MAX - 1);
        h.record(low);
        h.record(low);
        h.record(high);
        assert_eq!(counts(&h), [(k_low, COUNT_MAX + 2), (k_high, 2)]);
        assert_eq!(h.settled().buckets.len(), 3);
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
        assert_eq!(m.settled().buckets.len(), 4);
        assert_eq!(m.summary().p99, hi);
    }

    /// Fresh samples that take a bucket's first entry past `u32::MAX` fill it and start a
    /// new first entry with the rest.
    #[test]
    fn a_merge_of_fresh_samples_past_u32_fills_the_entry() {
        let v = 1_000u64;
        let key = bucket_of(v);
        let mut h = LatencyHistogram::default();
        h.record(v);
        h.settle();
        h.buckets[0] += COUNT_MAX - 2;
        for _ in 0..FRESH_MIN {
            h.record(v);
        }
        let first = u64::from(key) << 32;
        assert_eq!(
            h.buckets,
            [first | (FRESH_MIN as u64 - 1), first | COUNT_MAX]
        );
        assert!(h.fresh.is_empty());
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(
            LatencyHistogram::default().summary(),
            LatencySummary::default()
        );
    }
}

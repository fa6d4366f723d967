//! The `menu` cpuidle governor of v6.1 (drivers/cpuidle/governors/menu.c): the idle length is
//! predicted from the time till the next timer event, scaled by a correction factor learnt per
//! bucket (order of magnitude of that time, iowait or not), and capped by the typical interval
//! of the last eight idle periods when they are regular enough; a state is deep enough only if
//! its target residency fits the prediction and its exit latency fits both the PM QoS limit and
//! the prediction divided by the performance multiplier.

use super::{IdleInput, Selection};
use crate::platform::IdleState;

/// menu.c's tuning constants.
const BUCKETS: usize = 12;
const INTERVAL_SHIFT: u32 = 3;
const INTERVALS: usize = 1 << INTERVAL_SHIFT;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
/// 50 ms: idle periods at least this long count as perfect predictions.
const MAX_INTERESTING: u64 = 50_000 * NSEC_PER_USEC;
/// Below this typical interval menu skips the next-timer look-up (`RESIDENCY_THRESHOLD_NS`).
const RESIDENCY_THRESHOLD_NS: u64 = 15 * NSEC_PER_USEC;
const NSEC_PER_USEC: u64 = 1000;
/// `KTIME_MAX`.
const KTIME_MAX: u64 = i64::MAX as u64;

/// `struct menu_device`.
#[derive(Debug, Clone)]
pub struct MenuDevice {
    next_timer_ns: u64,
    bucket: usize,
    correction_factor: [u64; BUCKETS],
    /// The last idle lengths, µs.
    intervals: [u64; INTERVALS],
    interval_ptr: usize,
    /// The same lengths sorted (smallest first), with their sum and sum of squares, kept
    /// as each one is replaced: `typical_interval_us` reads its first round off them and
    /// drops the largest from the end of the sorted copy, where menu.c walks the eight
    /// intervals once per round (the same integers: sums of integers, in any order).
    /// (Intervals are below 2^54 µs, so their sum fits 64 bits; their squares do not.)
    sorted: [u64; INTERVALS],
    sum: u64,
    sum_sq: u128,
}

impl Default for MenuDevice {
    /// `menu_enable_device()`: a factor of one everywhere, no history.
    fn default() -> Self {
        MenuDevice {
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            sorted: [0; INTERVALS],
            sum: 0,
            sum_sq: 0,
        }
    }
}

/// [`MenuDevice::typical_interval_us`] over the sorted intervals, their sum and their sum
/// of squares in `W` (u64 or u128, wide enough for the terms).
fn typical_interval<W>(sorted: &[u64; INTERVALS], mut sum: u64, mut sum_sq: W) -> u64
where
    W: Copy
        + Ord
        + From<u64>
        + std::ops::Add<Output = W>
        + std::ops::Sub<Output = W>
        + std::ops::Mul<Output = W>
        + std::ops::Div<Output = W>,
{
    let w = W::from;
    let mut divisor = INTERVALS;
    loop {
        let avg = sum / divisor as u64;
        // The kernel's Σ(v − avg)² from the sums: Σv² − 2·avg·Σv + n·avg², the same integer
        // (avg is an integer).
        let (a, n) = (w(avg), w(divisor as u64));
        let variance = (sum_sq + n * a * a - w(2) * a * w(sum)) / n;
        if (a * a > variance * w(36) && divisor * 4 >= INTERVALS * 3) || variance <= w(400) {
            return avg;
        }
        if divisor * 4 <= INTERVALS * 3 {
            return u64::MAX;
        }
        // The next round's threshold is this round's largest less one: every interval equal
        // to the largest goes (some remain, or the variance would be 0).
        let max = sorted[divisor - 1];
        while sorted[divisor - 1] == max {
            sum -= max;
            sum_sq = sum_sq - w(max) * w(max);
            divisor -= 1;
        }
    }
}

/// `which_bucket()`: by the decade of the expected length in µs, iowaiters in the upper half.
fn which_bucket(duration_ns: u64, nr_iowaiters: u32) -> usize {
    let base = if nr_iowaiters > 0 { BUCKETS / 2 } else { 0 };
    let us = duration_ns / NSEC_PER_USEC;
    let decade = match us {
        0..=9 => 0,
        10..=99 => 1,
        100..=999 => 2,
        1000..=9999 => 3,
        10_000..=99_999 => 4,
        _ => 5,
    };
    base + decade
}

/// `performance_multiplier()`: ten more per task in iowait on this CPU.
fn performance_multiplier(nr_iowaiters: u32) -> u64 {
    1 + 10 * u64::from(nr_iowaiters)
}

impl MenuDevice {
    /// `get_typical_interval()`: the average of the last intervals (in µs) when their
    /// standard deviation is small (≤ 20 µs, or a sixth of the average with at least 3/4 of
    /// the samples), dropping the largest outliers while 3/4 remain; `u64::MAX` otherwise.
    /// Each round keeps the intervals below the last round's largest: a prefix of the
    /// sorted copy, whose sums are the running ones less the dropped values'. In 64 bits
    /// while the sum of squares is below 2^58 (intervals below ~2^27 µs): then no term
    /// overflows (avg is at most the mean, so n·avg² ≤ Σv², 2·avg·Σv ≤ 2·Σv², and
    /// Σ(v − avg)² ≤ Σv², so the variance times 36 is below 36·2^58 < 2^64); in 128 bits
    /// otherwise.
    fn typical_interval_us(&self) -> u64 {
        match u64::try_from(self.sum_sq) {
            Ok(sum_sq) if sum_sq < 1 << 58 => typical_interval(&self.sorted, self.sum, sum_sq),
            _ => typical_interval(&self.sorted, self.sum, self.sum_sq),
        }
    }

    /// Record an idle length (µs) in place of the oldest, in the history and the sorted
    /// copy and its sums; `us` is an idle length in ns divided by 1000, so below 2^54.
    fn push_interval(&mut self, us: u64) {
        debug_assert!(us < 1 << 54, "{us} µs is no idle length");
        let old = std::mem::replace(&mut self.intervals[self.interval_ptr], us);
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
        self.sum = self.sum - old + us;
        self.sum_sq =
            self.sum_sq - u128::from(old) * u128::from(old) + u128::from(us) * u128::from(us);
        // Take `old` out of the sorted copy and slide `us` into its place in order.
        let mut at = self.sorted.partition_point(|&v| v < old);
        while at + 1 < INTERVALS && self.sorted[at + 1] < us {
            self.sorted[at] = self.sorted[at + 1];
            at += 1;
        }
        while at > 0 && self.sorted[at - 1] > us {
            self.sorted[at] = self.sorted[at - 1];
            at -= 1;
        }
        self.sorted[at] = us;
    }

    /// `menu_select()` on a CPU whose tick still runs (every selection in the model is made
    /// on idle entry or at an idle tick, never with the tick already stopped).
    pub fn select(&mut self, states: &[IdleState], inp: &IdleInput) -> Selection {
        let typical = self.typical_interval_us();
        let mut predicted_ns = typical.saturating_mul(NSEC_PER_USEC);
        let delta_tick;
        if predicted_ns > RESIDENCY_THRESHOLD_NS {
            self.next_timer_ns = inp.sleep_length_ns;
            delta_tick = inp.delta_tick_ns;
            self.bucket = which_bucket(self.next_timer_ns, inp.nr_iowaiters);
            // Round up the result for half microseconds.
            let rd = u128::from(RESOLUTION * DECAY * NSEC_PER_USEC);
            let timer_us = (rd / 2
                + u128::from(self.next_timer_ns) * u128::from(self.correction_factor[self.bucket]))
                / rd;
            let timer_ns = u64::try_from(timer_us * u128::from(NSEC_PER_USEC)).unwrap_or(KTIME_MAX);
            predicted_ns = predicted_ns.min(timer_ns);
        } else {
            // No timer look-up: the closest timer is taken as far away, the tick as half a
            // period away.
            self.next_timer_ns = KTIME_MAX;
            delta_tick = inp.tick_ns / 2;
            self.bucket = which_bucket(KTIME_MAX, inp.nr_iowaiters);
        }
        let mut latency_req = inp.latency_req_ns;
        if states.len() <= 1
            || latency_req == 0
            || self.next_timer_ns < states[1].target_residency_ns
            || latency_req < states[1].exit_latency_ns
        {
            return Selection {
                state: 0,
                stop_tick: !states.first().is_some_and(|s| s.polling),
            };
        }
        latency_req = latency_req.min(predicted_ns / performance_multiplier(inp.nr_iowaiters));
        let mut idx = 0;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns > predicted_ns {
                // A physical state rather than polling, unless a timer is due soon enough.
                if states[idx].polling
                    && s.exit_latency_ns <= latency_req
                    && s.target_residency_ns <= self.next_timer_ns
                {
                    predicted_ns = s.target_residency_ns;
                    idx = i;
                    break;
                }
                if predicted_ns < inp.tick_ns {
                    break;
                }
                // The state so far is shallow: keep the tick and let the governor run again.
                predicted_ns = states[idx].target_residency_ns;
                break;
            }
            if s.exit_latency_ns > latency_req {
                break;
            }
            idx = i;
        }
        let mut stop_tick = true;
        if states[idx].polling || predicted_ns < inp.tick_ns {
            stop_tick = false;
            // The tick keeps running: the state must pay off before it.
            if idx > 0 && states[idx].target_residency_ns > delta_tick {
                idx = (0..idx)
                    .rev()
                    .find(|&i| states[i].target_residency_ns <= delta_tick)
                    .unwrap_or(0);
            }
        }
        Selection {
            state: idx,
            stop_tick,
        }
    }

    /// `menu_reflect()` + `menu_update()`: learn from the idle period that just ended in
    /// `state` (`residency_ns` from entry to the end of the exit, as `last_residency_ns`).
    pub fn reflect(
        &mut self,
        states: &[IdleState],
        state: usize,
        residency_ns: u64,
        tick_wakeup: bool,
        tick_ns: u64,
    ) {
        let mut measured_ns = if tick_wakeup && self.next_timer_ns > tick_ns {
            // Woken by a tick the prediction expected to be stopped: it could have been long.
            9 * MAX_INTERESTING / 10
        } else {
            let lat = states[state].exit_latency_ns;
            if residency_ns > 2 * lat {
                residency_ns - lat
            } else {
                residency_ns / 2
            }
        };
        measured_ns = measured_ns.min(self.next_timer_ns);
        let mut factor = self.correction_factor[self.bucket];
        factor -= factor / DECAY;
        if self.next_timer_ns > 0 && measured_ns < MAX_INTERESTING {
            // Below 50 ms, RESOLUTION × measured fits 64 bits (< 2^36).
            factor += RESOLUTION * measured_ns / self.next_timer_ns;
        } else {
            factor += RESOLUTION;
        }
        self.correction_factor[self.bucket] = factor;
        self.push_interval(measured_ns / NSEC_PER_USEC);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::cpuidle::tests::{arm_states, input};

    /// Idle periods of `len` ending at the timer, as a periodic timer makes them.
    fn train(m: &mut MenuDevice, s: &[IdleState], len: u64) -> Selection {
        for _ in 0..2 * INTERVALS {
            let sel = m.select(s, &input(len));
            m.reflect(
                s,
                sel.state,
                len + s[sel.state].exit_latency_ns,
                false,
                4_000_000,
            );
        }
        m.select(s, &input(len))
    }

    /// `get_typical_interval()` as menu.c writes it: the average, then the variance of the
    /// intervals at or below the threshold in a second pass, the largest dropped while the
    /// distribution is wide and 3/4 of the samples remain.
    fn kernel_typical_interval_us(intervals: &[u64; INTERVALS]) -> u64 {
        let mut thresh = u64::MAX;
        loop {
            let kept: Vec<u64> = intervals.iter().copied().filter(|&v| v <= thresh).collect();
            let n = kept.len();
            let avg = kept.iter().sum::<u64>() / n as u64;
            let variance = kept
                .iter()
                .map(|&v| u128::from(v.abs_diff(avg)).pow(2))
                .sum::<u128>()
                / n as u128;
            if (u128::from(avg).pow(2) > variance * 36 && n * 4 >= INTERVALS * 3) || variance <= 400
            {
                return avg;
            }
            if n * 4 <= INTERVALS * 3 {
                return u64::MAX;
            }
            thresh = kept.iter().max().unwrap() - 1;
        }
    }

    #[test]
    fn the_typical_interval_is_get_typical_intervals() {
        let mut rng = schedlab_base::sim::SimRng::new(7);
        for round in 0..20_000 {
            let mut m = MenuDevice::default();
            // Regular and irregular histories, from a few µs to past 2^32 µs.
            let scale = [10, 1_000, 100_000, 10_000_000, 1 << 40][round % 5];
            let base = rng.below(scale) + 1;
            // A full history and up to as many again, so that pushes replace recorded
            // lengths (the sorted copy and its sums follow).
            for _ in 0..INTERVALS as u64 + rng.below(INTERVALS as u64) {
                m.push_interval(match rng.below(4) {
                    0 => rng.below(scale * 4),
                    _ => base + rng.below(base / 8 + 1),
                });
            }
            assert_eq!(
                m.typical_interval_us(),
                kernel_typical_interval_us(&m.intervals),
                "{:?}",
                m.intervals
            );
        }
    }

    #[test]
    fn a_long_regular_sleep_goes_deep_and_stops_the_tick() {
        let s = arm_states();
        let sel = train(&mut MenuDevice::default(), &s, 20_000_000);
        assert_eq!(sel.state, 1);
        assert!(sel.stop_tick);
    }

    #[test]
    fn a_short_regular_sleep_stays_shallow() {
        let s = arm_states();
        let sel = train(&mut MenuDevice::default(), &s, 300_000);
        assert_eq!(sel.state, 0);
    }

    #[test]
    fn a_sleep_longer_than_the_residency_but_shorter_than_the_tick_keeps_the_tick() {
        let s = arm_states();
        let sel = train(&mut MenuDevice::default(), &s, 2_000_000);
        assert_eq!(sel.state, 1);
        assert!(!sel.stop_tick);
    }

    #[test]
    fn no_history_means_shallow_until_the_tick_teaches_otherwise() {
        let s = arm_states();
        let mut m = MenuDevice::default();
        // Eight zero intervals: typical 0, so the first choice is the shallow state.
        assert_eq!(m.select(&s, &input(KTIME_MAX)).state, 0);
        for _ in 0..INTERVALS {
            let sel = m.select(&s, &input(KTIME_MAX));
            m.reflect(&s, sel.state, 4_000_000, true, 4_000_000);
        }
        let sel = m.select(&s, &input(KTIME_MAX));
        assert_eq!(sel.state, 1);
        assert!(sel.stop_tick);
    }

    #[test]
    fn pm_qos_zero_allows_only_the_first_state() {
        let s = arm_states();
        let mut m = MenuDevice::default();
        train(&mut m, &s, 20_000_000);
        let sel = m.select(
            &s,
            &IdleInput {
                latency_req_ns: 0,
                ..input(20_000_000)
            },
        );
        assert_eq!(sel.state, 0);
    }

    #[test]
    fn buckets_follow_decades_and_iowait() {
        assert_eq!(which_bucket(5_000, 0), 0);
        assert_eq!(which_bucket(50_000, 0), 1);
        assert_eq!(which_bucket(2_000_000, 1), 9);
        assert_eq!(which_bucket(KTIME_MAX, 0), 5);
    }
}

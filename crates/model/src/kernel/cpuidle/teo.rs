//! The `teo` (timer events oriented) cpuidle governor of v6.1
//! (drivers/cpuidle/governors/teo.c): each idle state has a bin of the idle lengths between
//! its target residency and the next state's; a wake-up in the bin of the time till the next
//! timer is a "hit", one in a shallower bin an "intercept". The state the next timer allows
//! is taken unless intercepts of shallower bins dominate (overall, or among the last nine
//! wake-ups), in which case the deepest shallower state that most intercepts would still have
//! paid for is taken.

use super::{IdleInput, Selection};
use crate::platform::IdleState;

/// teo.c's constants: the weight of one event, the decay of the metrics (1/8 per update), the
/// number of recent intercepts remembered.
const PULSE: u32 = 1024;
const DECAY_SHIFT: u32 = 3;
const NR_RECENT: usize = 9;

/// `struct teo_bin`.
#[derive(Debug, Clone, Copy, Default)]
struct TeoBin {
    intercepts: u32,
    hits: u32,
    recent: u32,
}

/// `struct teo_cpu`, with the cpuidle device's `last_state_idx`.
#[derive(Debug, Clone)]
pub struct TeoCpu {
    sleep_length_ns: u64,
    bins: Vec<TeoBin>,
    total: u32,
    next_recent_idx: usize,
    recent_idx: [Option<usize>; NR_RECENT],
}

impl TeoCpu {
    /// `teo_enable_device()`.
    pub fn new(nr_states: usize) -> TeoCpu {
        TeoCpu {
            sleep_length_ns: 0,
            bins: vec![TeoBin::default(); nr_states],
            total: 0,
            next_recent_idx: 0,
            recent_idx: [None; NR_RECENT],
        }
    }

    /// `teo_reflect()` + `teo_update()`: `time_span_ns` from selection to wake-up (the
    /// sleep length when a tick woke the CPU although the timer was further), `residency_ns`
    /// the time in the state including its exit.
    pub fn reflect(
        &mut self,
        states: &[IdleState],
        state: usize,
        residency_ns: u64,
        tick_wakeup: bool,
        tick_ns: u64,
    ) {
        let time_span_ns = if tick_wakeup && self.sleep_length_ns > tick_ns {
            self.sleep_length_ns
        } else {
            residency_ns
        };
        let measured_ns = if time_span_ns >= self.sleep_length_ns {
            // Woken by the timer (or a safety net): a hit in the timer's bin.
            u64::MAX
        } else {
            // Half the exit latency, as a rough average of the real wake-up delay.
            let lat = states[state].exit_latency_ns;
            if residency_ns >= lat {
                residency_ns - lat / 2
            } else {
                residency_ns / 2
            }
        };
        self.total = 0;
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for (i, (bin, s)) in self.bins.iter_mut().zip(states).enumerate() {
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            self.total += bin.hits + bin.intercepts;
            if s.target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                if s.target_residency_ns <= measured_ns {
                    idx_duration = i;
                }
            }
        }
        let i = self.next_recent_idx;
        self.next_recent_idx = (i + 1) % NR_RECENT;
        if let Some(old) = self.recent_idx[i] {
            self.bins[old].recent -= 1;
        }
        if idx_timer == idx_duration {
            self.bins[idx_timer].hits += PULSE;
            self.recent_idx[i] = None;
        } else {
            self.bins[idx_duration].intercepts += PULSE;
            self.bins[idx_duration].recent += 1;
            self.recent_idx[i] = Some(idx_duration);
        }
        self.total += PULSE;
    }

    /// `teo_select()` on a CPU whose tick still runs.
    pub fn select(&mut self, states: &[IdleState], inp: &IdleInput) -> Selection {
        let mut duration_ns = inp.sleep_length_ns;
        self.sleep_length_ns = duration_ns;
        let mut idx = 0;
        'choose: {
            if states.len() < 2 || states[1].target_residency_ns > duration_ns {
                break 'choose;
            }
            // The deepest state the sleep length pays for, the deepest one within the
            // latency limit, and the metric sums of the states shallower than the former.
            let mut constraint_idx = 0;
            let (mut intercept_sum, mut hit_sum, mut recent_sum) = (0, 0, 0);
            let (mut idx_intercept_sum, mut idx_hit_sum, mut idx_recent_sum) = (0, 0, 0);
            #[allow(clippy::needless_range_loop)] // `i` indexes the bins and the states
            for i in 1..states.len() {
                let prev = self.bins[i - 1];
                intercept_sum += prev.intercepts;
                hit_sum += prev.hits;
                recent_sum += prev.recent;
                if states[i].target_residency_ns > duration_ns {
                    break;
                }
                idx = i;
                if states[i].exit_latency_ns <= inp.latency_req_ns {
                    constraint_idx = i;
                }
                idx_intercept_sum = intercept_sum;
                idx_hit_sum = hit_sum;
                idx_recent_sum = recent_sum;
            }
            if idx == 0 {
                break 'choose;
            }
            let alt_intercepts = 2 * idx_intercept_sum > self.total - idx_hit_sum;
            let alt_recent = idx_recent_sum > (NR_RECENT / 2) as u32;
            if alt_recent || alt_intercepts {
                // The deepest shallower state whose target residency most intercepts (and
                // most recent ones) did not fall short of; with the tick running every
                // span is acceptable (`teo_time_ok`).
                let (mut isum, mut rsum) = (0, 0);
                for i in (0..idx).rev() {
                    isum += self.bins[i].intercepts;
                    rsum += self.bins[i].recent;
                    if (!alt_recent || 2 * rsum > idx_recent_sum)
                        && (!alt_intercepts || 2 * isum > idx_intercept_sum)
                    {
                        idx = i;
                        duration_ns =
                            (states[i].target_residency_ns + states[i + 1].target_residency_ns) / 2;
                        break;
                    }
                }
            }
            idx = idx.min(constraint_idx);
        }
        let mut stop_tick = true;
        if states.get(idx).is_some_and(|s| s.polling) || duration_ns < inp.tick_ns {
            stop_tick = false;
            // The tick keeps running: a state must pay off before it.
            if idx > 0 && states[idx].target_residency_ns > inp.delta_tick_ns {
                idx = (0..idx)
                    .rev()
                    .find(|&i| states[i].target_residency_ns <= inp.delta_tick_ns)
                    .unwrap_or(0);
            }
        }
        Selection {
            state: idx,
            stop_tick,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::cpuidle::tests::{arm_states, input};

    #[test]
    fn the_next_timer_picks_the_state() {
        let s = arm_states();
        let mut t = TeoCpu::new(s.len());
        let long = t.select(&s, &input(20_000_000));
        assert_eq!(long.state, 1);
        assert!(long.stop_tick);
        assert_eq!(t.select(&s, &input(300_000)).state, 0);
    }

    #[test]
    fn intercepts_make_a_far_timer_shallow() {
        let s = arm_states();
        let mut t = TeoCpu::new(s.len());
        // A timer 20 ms away, but something else wakes the CPU after 100 µs every time.
        for _ in 0..16 {
            let sel = t.select(&s, &input(20_000_000));
            t.reflect(&s, sel.state, 100_000, false, 4_000_000);
        }
        assert_eq!(t.select(&s, &input(20_000_000)).state, 0);
    }

    #[test]
    fn pm_qos_zero_allows_only_the_first_state() {
        let s = arm_states();
        let mut t = TeoCpu::new(s.len());
        let sel = t.select(
            &s,
            &IdleInput {
                latency_req_ns: 0,
                ..input(20_000_000)
            },
        );
        assert_eq!(sel.state, 0);
    }
}

//! Where each CPU and each cluster spends its time, for the energy report (SPEC §9): busy time
//! per OPP, idle time per OPP (cpufreq's time_in_state counts both), and idle time per idle
//! state.
//!
//! The idle state of an idle period is chosen when the period ends, knowing its length: the
//! deepest state whose exit latency is at most half the period (an idle governor that
//! predicts perfectly; cpuidle's menu/teo approximate this). A cluster is idle while all its
//! CPUs are, and picks its state the same way.

use crate::platform::IdleState;

/// The state an idle period of `len_ns` is spent in: the deepest one whose exit latency fits
/// twice over (None without idle states).
pub fn idle_state_for(states: &[IdleState], len_ns: u64) -> Option<usize> {
    if states.is_empty() {
        return None;
    }
    let fits = |s: &IdleState| s.exit_latency_ns.saturating_mul(2) <= len_ns;
    Some(states.iter().rposition(fits).unwrap_or(0))
}

/// Residency of one CPU, or of one cluster (a frequency domain).
#[derive(Debug, Clone)]
pub struct Residency {
    opp: usize,
    busy: bool,
    since: u64,
    idle_start: u64,
    pub busy_opp_ns: Vec<u64>,
    pub idle_opp_ns: Vec<u64>,
    pub idle_state_ns: Vec<u64>,
}

impl Residency {
    pub fn new(nr_opps: usize, nr_idle_states: usize, opp: usize) -> Residency {
        Residency {
            opp,
            busy: false,
            since: 0,
            idle_start: 0,
            busy_opp_ns: vec![0; nr_opps],
            idle_opp_ns: vec![0; nr_opps],
            idle_state_ns: vec![0; nr_idle_states],
        }
    }

    fn account(&mut self, now: u64) {
        debug_assert!(now >= self.since, "residency time went back");
        let dt = now - self.since;
        if self.busy {
            self.busy_opp_ns[self.opp] += dt;
        } else {
            self.idle_opp_ns[self.opp] += dt;
        }
        self.since = now;
    }

    fn close_idle_period(&mut self, now: u64, states: &[IdleState]) {
        let len = now - self.idle_start;
        if let Some(i) = idle_state_for(states, len) {
            self.idle_state_ns[i] += len;
        }
        self.idle_start = now;
    }

    pub fn set_busy(&mut self, now: u64, busy: bool, states: &[IdleState]) {
        if busy == self.busy {
            return;
        }
        self.account(now);
        if busy {
            self.close_idle_period(now, states);
        } else {
            self.idle_start = now;
        }
        self.busy = busy;
    }

    pub fn set_opp(&mut self, now: u64, opp: usize) {
        self.account(now);
        self.opp = opp;
    }

    /// Account up to `now` (end of run), closing an open idle period.
    pub fn finish(&mut self, now: u64, states: &[IdleState]) {
        self.account(now);
        if !self.busy {
            self.close_idle_period(now, states);
        }
    }

    pub fn busy_ns(&self) -> u64 {
        self.busy_opp_ns.iter().sum()
    }

    pub fn idle_ns(&self) -> u64 {
        self.idle_opp_ns.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states() -> Vec<IdleState> {
        vec![
            IdleState {
                name: "WFI".into(),
                power_mw: 6.0,
                exit_latency_ns: 1_000,
            },
            IdleState {
                name: "sleep".into(),
                power_mw: 0.0,
                exit_latency_ns: 1_000_000,
            },
        ]
    }

    #[test]
    fn short_idle_is_shallow_long_idle_is_deep() {
        let s = states();
        assert_eq!(idle_state_for(&s, 500), Some(0));
        assert_eq!(idle_state_for(&s, 1_999_999), Some(0));
        assert_eq!(idle_state_for(&s, 2_000_000), Some(1));
        assert_eq!(idle_state_for(&[], 5), None);
    }

    #[test]
    fn time_is_split_by_opp_and_state() {
        let s = states();
        let mut r = Residency::new(2, 2, 1);
        r.set_busy(100, true, &s);
        r.set_opp(300, 0);
        r.set_busy(400, false, &s);
        r.finish(5_000_400, &s);
        assert_eq!(r.busy_opp_ns, vec![100, 200]);
        assert_eq!(r.idle_opp_ns, vec![5_000_000, 100]);
        // 100 ns idle at start (WFI), then 5 ms (deep sleep).
        assert_eq!(r.idle_state_ns, vec![100, 5_000_000]);
        assert_eq!(r.busy_ns() + r.idle_ns(), 5_000_400);
    }
}

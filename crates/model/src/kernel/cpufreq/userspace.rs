//! The userspace governor (`cpufreq_userspace.c`): no scheduler hook; each policy runs at
//! what was last written to its `scaling_setspeed`, kept within the limits.

use super::{FreqChange, Policies, Relation};

#[derive(Debug, Clone)]
pub struct Userspace {
    policies: Policies,
    /// `*setspeed` per policy: the last frequency asked for (kHz).
    setspeed: Vec<u32>,
}

impl Userspace {
    pub fn new(policies: Policies) -> Userspace {
        let setspeed = vec![0; policies.len()];
        Userspace { policies, setspeed }
    }

    pub fn policies(&self) -> &Policies {
        &self.policies
    }

    /// `cpufreq_userspace_policy_start()` takes `policy->cur` as the request, then
    /// `cpufreq_start_governor()` runs `->limits`.
    pub fn start(&mut self) -> Vec<FreqChange> {
        for p in 0..self.policies.len() {
            self.setspeed[p] = self.policies.get(p).cur_khz;
        }
        (0..self.policies.len())
            .filter_map(|p| self.limits(p))
            .collect()
    }

    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        self.policies.get_mut(policy).set_limits(min_khz, max_khz);
        self.limits(policy)
    }

    /// `cpufreq_set()`, the `store_setspeed` of a write to `scaling_setspeed`: the request
    /// is kept and the driver asked for the lowest frequency at or above it, within the
    /// limits.
    pub fn store_setspeed(&mut self, policy: usize, khz: u32) -> Option<FreqChange> {
        self.setspeed[policy] = khz;
        let p = self.policies.get_mut(policy);
        p.driver_target(khz, Relation::L)
            .map(|freq_khz| FreqChange { policy, freq_khz })
    }

    /// `cpufreq_userspace_policy_limits()`: the request, unless the limits exclude it.
    fn limits(&mut self, policy: usize) -> Option<FreqChange> {
        let want = self.setspeed[policy];
        let p = self.policies.get_mut(policy);
        let freq = if p.max_khz < want {
            p.driver_target(p.max_khz, Relation::H)
        } else if p.min_khz > want {
            p.driver_target(p.min_khz, Relation::L)
        } else {
            p.driver_target(want, Relation::L)
        };
        freq.map(|freq_khz| FreqChange { policy, freq_khz })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    /// Juno r0's LITTLE policy (450, 575, 700, 775, 850 MHz) at `cur_khz`.
    fn governor(cur_khz: u32) -> Userspace {
        let juno = Platform::resolve("juno-r0").unwrap();
        let mut policies = Policies::from_platform(&juno, false).unwrap();
        policies.get_mut(0).cur_khz = cur_khz;
        Userspace::new(policies)
    }

    #[test]
    fn starts_at_the_current_frequency_and_sets_what_is_written() {
        let mut g = governor(450_000);
        // policy->cur is already an OPP: no change at start.
        assert_eq!(g.start(), Vec::new());
        // A request between OPPs gets the lowest one at or above it (CPUFREQ_RELATION_L).
        let fc = g.store_setspeed(0, 600_000).unwrap();
        assert_eq!((fc.policy, fc.freq_khz), (0, 700_000));
        // The frequency it is at already: no change.
        assert_eq!(g.store_setspeed(0, 700_000), None);
        assert_eq!(g.store_setspeed(0, 450_000).unwrap().freq_khz, 450_000);
        // Above the highest OPP: the highest (the limits clamp it).
        assert_eq!(g.store_setspeed(0, 950_000).unwrap().freq_khz, 850_000);
    }

    #[test]
    fn limits_hold_the_request_within_them_and_give_it_back() {
        let mut g = governor(450_000);
        g.start();
        g.store_setspeed(0, 850_000);
        // max below the request: max (RELATION_H).
        assert_eq!(g.set_limits(0, 450_000, 700_000).unwrap().freq_khz, 700_000);
        // The request is remembered: lifting the limit restores it.
        assert_eq!(g.set_limits(0, 450_000, 850_000).unwrap().freq_khz, 850_000);
        g.store_setspeed(0, 450_000);
        // min above the request: min (RELATION_L).
        assert_eq!(g.set_limits(0, 700_000, 850_000).unwrap().freq_khz, 700_000);
    }
}

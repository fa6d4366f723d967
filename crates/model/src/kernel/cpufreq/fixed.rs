//! The performance and powersave governors (`cpufreq_performance.c`, `cpufreq_powersave.c`):
//! no scheduler hook, only a `->limits` callback that pins each policy to its max (min).

use super::{FreqChange, GovernorKind, Policies, Relation};

#[derive(Debug, Clone)]
pub struct Fixed {
    policies: Policies,
    /// performance (true) or powersave (false).
    highest: bool,
}

impl Fixed {
    pub fn new(policies: Policies, highest: bool) -> Fixed {
        Fixed { policies, highest }
    }

    pub fn kind(&self) -> GovernorKind {
        if self.highest {
            GovernorKind::Performance
        } else {
            GovernorKind::Powersave
        }
    }

    pub fn policies(&self) -> &Policies {
        &self.policies
    }

    /// `cpufreq_start_governor()` runs `->limits` right after `->start`.
    pub fn start(&mut self) -> Vec<FreqChange> {
        (0..self.policies.len())
            .filter_map(|p| self.limits(p))
            .collect()
    }

    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        self.policies.get_mut(policy).set_limits(min_khz, max_khz);
        self.limits(policy)
    }

    /// `cpufreq_gov_performance_limits()` / `cpufreq_gov_powersave_limits()`.
    fn limits(&mut self, policy: usize) -> Option<FreqChange> {
        let p = self.policies.get_mut(policy);
        let freq = if self.highest {
            p.driver_target(p.max_khz, Relation::H)
        } else {
            p.driver_target(p.min_khz, Relation::L)
        };
        freq.map(|freq_khz| FreqChange { policy, freq_khz })
    }
}

//! The energy model as v6.1 registers it for the CPUs (`kernel/power/energy_model.c`,
//! `include/linux/energy_model.h`): per performance domain a table of performance states with
//! `cost = power × fmax / f` (power in µW, `em_scale_power`), states whose cost is not below a
//! faster one's flagged inefficient, and `em_cpu_energy()`. Only per-CPU active power enters;
//! cluster power and idle states are for the energy report, not for EAS.

use crate::platform::{FreqDomain, Platform};

/// `struct em_perf_state`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmPerfState {
    pub freq_khz: u64,
    pub cost: u64,
    /// EM_PERF_STATE_INEFFICIENT.
    pub inefficient: bool,
}

/// `struct em_perf_domain`.
#[derive(Debug, Clone, PartialEq)]
pub struct EmPerfDomain {
    /// Ascending by frequency.
    pub table: Vec<EmPerfState>,
    /// EM_PERF_DOMAIN_SKIP_INEFFICIENCIES: cpufreq was told of the inefficient states.
    pub skip_inefficiencies: bool,
}

/// µW from the platform's mW.
fn em_scale_power(power_mw: f64) -> u64 {
    (power_mw * 1000.0).round().max(0.0) as u64
}

impl EmPerfDomain {
    /// `em_create_perf_table()` for one cpufreq policy.
    pub fn new(d: &FreqDomain) -> EmPerfDomain {
        let fmax = u64::from(d.opps.last().map_or(1, |o| o.freq_khz.max(1)));
        let mut table: Vec<EmPerfState> = d
            .opps
            .iter()
            .map(|o| EmPerfState {
                freq_khz: u64::from(o.freq_khz),
                cost: fmax * em_scale_power(o.power_mw) / u64::from(o.freq_khz.max(1)),
                inefficient: false,
            })
            .collect();
        let mut prev_cost = u64::MAX;
        for ps in table.iter_mut().rev() {
            if ps.cost >= prev_cost {
                ps.inefficient = true;
            } else {
                prev_cost = ps.cost;
            }
        }
        EmPerfDomain {
            table,
            skip_inefficiencies: true,
        }
    }

    /// `em_pd_get_efficient_state()`: the first state at or above `freq`, skipping
    /// inefficient ones.
    pub fn efficient_state(&self, freq: u64) -> &EmPerfState {
        let last = self.table.len() - 1;
        self.table
            .iter()
            .find(|ps| ps.freq_khz >= freq && !(self.skip_inefficiencies && ps.inefficient))
            .unwrap_or(&self.table[last])
    }

    /// `em_cpu_energy()`: the energy the domain's CPUs spend over a period in which they run
    /// `sum_util` in total at the state that `max_util` (+25% headroom, capped at
    /// `allowed_cpu_cap`) selects. `scale_cpu` is the domain's CPU capacity.
    pub fn em_cpu_energy(
        &self,
        max_util: u64,
        sum_util: u64,
        allowed_cpu_cap: u64,
        scale_cpu: u64,
    ) -> u64 {
        let Some(top) = self.table.last() else {
            return 0;
        };
        let max_util = (max_util + (max_util >> 2)).min(allowed_cpu_cap);
        let freq = top.freq_khz * max_util / scale_cpu.max(1);
        self.efficient_state(freq).cost * sum_util / scale_cpu.max(1)
    }
}

/// The energy model of every performance domain, indexed like `Platform::freq_domains`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyModel {
    pub pds: Vec<EmPerfDomain>,
}

impl EnergyModel {
    pub fn new(p: &Platform) -> EnergyModel {
        EnergyModel {
            pds: p.freq_domains.iter().map(EmPerfDomain::new).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::preset;

    #[test]
    fn juno_costs_and_state_selection() {
        let em = EnergyModel::new(&preset("juno-r0").unwrap());
        let little = &em.pds[0];
        // A53 at 450 MHz: 33 mW × 850/450.
        assert_eq!(little.table[0].cost, 33_000 * 850_000 / 450_000);
        assert_eq!(little.table[4].cost, 93_000);
        // max_util 200 on a 447 CPU: 250/447 of 850 MHz = 475 MHz → the 575 MHz state.
        let e = little.em_cpu_energy(200, 200, 447, 447);
        assert_eq!(e, little.table[1].cost * 200 / 447);
        // Headroom capped at the CPU's capacity: the top state.
        let e = little.em_cpu_energy(447, 447, 447, 447);
        assert_eq!(e, 93_000);
    }
}

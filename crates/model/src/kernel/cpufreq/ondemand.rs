//! ondemand (`drivers/cpufreq/cpufreq_ondemand.c`, v6.1; SPEC §7.2): a load above
//! `up_threshold` goes straight to the highest frequency, any other load maps linearly onto
//! the cpuinfo range. `powersave_bias` is not modelled (its default, 0, is what runs).

use super::dbs::{CpuTimes, Dbs};
use super::{Action, Env, FreqChange, Policies, Relation, Tunables};

/// `DEF_FREQUENCY_UP_THRESHOLD`: without nohz idle accounting.
const DEF_FREQUENCY_UP_THRESHOLD: u32 = 80;
/// `MICRO_FREQUENCY_UP_THRESHOLD`: with nohz idle accounting (`get_cpu_idle_time_us()`
/// works), which `od_init()` checks.
const MICRO_FREQUENCY_UP_THRESHOLD: u32 = 95;

#[derive(Debug, Clone)]
pub struct Ondemand {
    dbs: Dbs,
}

impl Ondemand {
    /// `cpufreq_dbs_governor_init()` + `od_init()`.
    pub fn new(policies: Policies, tunables: &Tunables, env: &Env) -> Result<Ondemand, String> {
        let default_up = if env.nohz {
            MICRO_FREQUENCY_UP_THRESHOLD
        } else {
            DEF_FREQUENCY_UP_THRESHOLD
        };
        let up_threshold = tunables.up_threshold.unwrap_or(default_up);
        let io_is_busy = tunables.io_is_busy.unwrap_or(env.io_is_busy);
        Ok(Ondemand {
            dbs: Dbs::new(policies, tunables, env, up_threshold, io_is_busy)?,
        })
    }

    pub fn policies(&self) -> &Policies {
        &self.dbs.policies
    }

    /// `cpufreq_dbs_governor_start()`.
    pub fn start(&mut self, now: u64, times: &dyn Fn(usize) -> CpuTimes) {
        self.dbs.start(now, times);
    }

    /// `dbs_update_util_handler()` for `cpu`'s rq, run on `local`.
    pub fn update_util(&mut self, cpu: usize, local: usize, now: u64) -> Option<Action> {
        self.dbs.update_util(cpu, local, now)
    }

    /// `dbs_work_handler()` with `od_dbs_update()` / `od_update()`.
    pub fn work(
        &mut self,
        policy: usize,
        now: u64,
        times: &dyn Fn(usize) -> CpuTimes,
    ) -> Option<FreqChange> {
        let load = self.dbs.dbs_update(policy, now, times);
        let p = self.dbs.policies.get_mut(policy);
        let pd = &mut self.dbs.policy[policy];
        let freq = if load > self.dbs.up_threshold {
            // Going to max: stay there sampling_down_factor periods before reconsidering.
            if p.cur_khz < p.max_khz {
                pd.rate_mult = self.dbs.sampling_down_factor;
            }
            // dbs_freq_increase()
            if p.cur_khz == p.max_khz {
                None
            } else {
                p.driver_target(p.max_khz, Relation::HE)
            }
        } else {
            let (min_f, max_f) = (p.cpuinfo_min_khz(), p.cpuinfo_max_khz());
            let freq_next = min_f + load.wrapping_mul(max_f - min_f) / 100;
            pd.rate_mult = 1;
            p.driver_target(freq_next, Relation::CE)
        };
        let delay_us = pd.sampling_rate.wrapping_mul(pd.rate_mult);
        self.dbs.finish_work(policy, delay_us);
        freq.map(|freq_khz| FreqChange { policy, freq_khz })
    }

    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        self.dbs.set_limits(policy, min_khz, max_khz)
    }
}

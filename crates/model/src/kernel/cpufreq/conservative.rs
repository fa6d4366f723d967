//! conservative (`drivers/cpufreq/cpufreq_conservative.c`, v6.1; SPEC §7.2): the requested
//! frequency moves by `freq_step` percent of `policy->max` per sample: up above
//! `up_threshold`, down below `down_threshold` (every `sampling_down_factor` samples), and
//! down one step per whole sampling period a CPU slept through.

use super::dbs::{CpuTimes, Dbs};
use super::{Action, Env, FreqChange, Policies, Relation, Tunables};

/// `DEF_FREQUENCY_UP_THRESHOLD`.
const DEF_FREQUENCY_UP_THRESHOLD: u32 = 80;
/// `DEF_FREQUENCY_STEP`: the step when `freq_step` percent of max rounds to 0 kHz.
const DEF_FREQUENCY_STEP: u32 = 5;
/// `MAX_SAMPLING_DOWN_FACTOR`.
const MAX_SAMPLING_DOWN_FACTOR: u32 = 10;

/// `struct cs_policy_dbs_info`.
#[derive(Debug, Clone, Copy)]
struct CsPolicy {
    down_skip: u32,
    /// The frequency asked for last, before the driver's resolution.
    requested_freq: u32,
}

#[derive(Debug, Clone)]
pub struct Conservative {
    dbs: Dbs,
    cs: Vec<CsPolicy>,
    down_threshold: u32,
    freq_step: u32,
}

impl Conservative {
    /// `cpufreq_dbs_governor_init()` + `cs_init()`, with the cross-checks of the
    /// `up_threshold`, `down_threshold` and `sampling_down_factor` stores.
    pub fn new(policies: Policies, tunables: &Tunables, env: &Env) -> Result<Conservative, String> {
        let up_threshold = tunables.up_threshold.unwrap_or(DEF_FREQUENCY_UP_THRESHOLD);
        if up_threshold <= tunables.down_threshold {
            return Err(format!(
                "up_threshold above down_threshold ({}) for conservative",
                tunables.down_threshold
            ));
        }
        if tunables.sampling_down_factor > MAX_SAMPLING_DOWN_FACTOR {
            return Err(format!(
                "sampling_down_factor in 1..={MAX_SAMPLING_DOWN_FACTOR} for conservative"
            ));
        }
        let cs = vec![
            CsPolicy {
                down_skip: 0,
                requested_freq: 0
            };
            policies.len()
        ];
        // cs_init() leaves io_is_busy at 0: iowait always counts as idle.
        Ok(Conservative {
            dbs: Dbs::new(policies, tunables, env, up_threshold, false)?,
            cs,
            down_threshold: tunables.down_threshold,
            freq_step: tunables.freq_step,
        })
    }

    pub fn policies(&self) -> &Policies {
        &self.dbs.policies
    }

    /// `cpufreq_dbs_governor_start()` + `cs_start()`.
    pub fn start(&mut self, now: u64, times: &dyn Fn(usize) -> CpuTimes) {
        self.dbs.start(now, times);
        for (cs, p) in self.cs.iter_mut().zip(self.dbs.policies.iter()) {
            cs.down_skip = 0;
            cs.requested_freq = p.cur_khz;
        }
    }

    /// `dbs_update_util_handler()` for `cpu`'s rq, run on `local`.
    pub fn update_util(&mut self, cpu: usize, local: usize, now: u64) -> Option<Action> {
        self.dbs.update_util(cpu, local, now)
    }

    /// `dbs_work_handler()` with `cs_dbs_update()`.
    pub fn work(
        &mut self,
        policy: usize,
        now: u64,
        times: &dyn Fn(usize) -> CpuTimes,
    ) -> Option<FreqChange> {
        let load = self.dbs.dbs_update(policy, now, times);
        let freq = self.cs_update(policy, load);
        let delay_us = self.dbs.policy[policy].sampling_rate;
        self.dbs.finish_work(policy, delay_us);
        freq.map(|freq_khz| FreqChange { policy, freq_khz })
    }

    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        self.dbs.set_limits(policy, min_khz, max_khz)
    }

    /// The decision of `cs_dbs_update()`; the new frequency if the driver changed it.
    fn cs_update(&mut self, policy: usize, load: u32) -> Option<u32> {
        // freq_step 0 freezes the frequency.
        if self.freq_step == 0 {
            return None;
        }
        let p = self.dbs.policies.get_mut(policy);
        let pd = &mut self.dbs.policy[policy];
        let cs = &mut self.cs[policy];
        let mut requested_freq = cs.requested_freq;
        // Out of the limits: they changed since, so start over from the current frequency.
        if requested_freq > p.max_khz || requested_freq < p.min_khz {
            requested_freq = p.cur_khz;
            cs.requested_freq = requested_freq;
        }
        // get_freq_step()
        let mut freq_step = self.freq_step.wrapping_mul(p.max_khz) / 100;
        if freq_step == 0 {
            freq_step = DEF_FREQUENCY_STEP;
        }
        // One step down per sampling period the policy idled through without a sample.
        if pd.idle_periods < u32::MAX {
            let freq_steps = pd.idle_periods.wrapping_mul(freq_step);
            requested_freq = if requested_freq > p.min_khz.wrapping_add(freq_steps) {
                requested_freq - freq_steps
            } else {
                p.min_khz
            };
            pd.idle_periods = u32::MAX;
        }
        if load > self.dbs.up_threshold {
            cs.down_skip = 0;
            if requested_freq == p.max_khz {
                return None;
            }
            requested_freq = (requested_freq + freq_step).min(p.max_khz);
            let freq = p.driver_target(requested_freq, Relation::HE);
            cs.requested_freq = requested_freq;
            return freq;
        }
        // Lowering waits sampling_down_factor samples.
        cs.down_skip += 1;
        if cs.down_skip < self.dbs.sampling_down_factor {
            return None;
        }
        cs.down_skip = 0;
        if load >= self.down_threshold || requested_freq == p.min_khz {
            return None;
        }
        requested_freq = if requested_freq > freq_step {
            requested_freq - freq_step
        } else {
            p.min_khz
        };
        let freq = p.driver_target(requested_freq, Relation::LE);
        cs.requested_freq = requested_freq;
        freq
    }
}

//! schedutil (kernel/sched/cpufreq_schedutil.c, v6.1): the frequency follows the
//! scheduler's utilization, re-evaluated at `cpufreq_update_util()` calls at most once per
//! `rate_limit_us`, with the iowait boost on top.
//!
//! `sugov_update_single_perf()` (drivers with `->adjust_perf`, i.e. intel_cpufreq on HWP) is
//! not modelled: every single-CPU policy takes `sugov_update_single_freq()`.

use super::{
    effective_cpu_util, uclamp_rq_is_capped, uclamp_rq_util_with, Action, CpuUtil, Env, FreqChange,
    Policies, Relation, Tunables, UtilType, NSEC_PER_USEC, SCHED_CAPACITY_SHIFT,
    SCHED_CPUFREQ_IOWAIT,
};
use crate::platform::SCHED_CAPACITY_SCALE;

/// `IOWAIT_BOOST_MIN`: the first step of the boost, an eighth of the biggest CPU.
const IOWAIT_BOOST_MIN: u32 = SCHED_CAPACITY_SCALE / 8;

/// `struct sugov_policy`.
#[derive(Debug, Clone)]
struct SugovPolicy {
    /// `rate_limit_us` in ns.
    freq_update_delay_ns: u64,
    last_freq_update_time: u64,
    next_freq: u32,
    /// The unresolved frequency `next_freq` was computed from.
    cached_raw_freq: u32,
    /// The sugov kthread has been woken and has not yet read `next_freq`.
    work_in_progress: bool,
    limits_changed: bool,
    need_freq_update: bool,
}

/// `struct sugov_cpu`.
#[derive(Debug, Clone, Default)]
struct SugovCpu {
    iowait_boost_pending: bool,
    iowait_boost: u32,
    last_update: u64,
    util: u64,
    bw_dl: u64,
    /// `arch_scale_cpu_capacity()` at the last evaluation.
    max: u64,
    saved_idle_calls: u64,
}

/// The schedutil governor of every policy.
#[derive(Debug, Clone)]
pub struct Sugov {
    policies: Policies,
    sg_policy: Vec<SugovPolicy>,
    /// Indexed by CPU.
    sg_cpu: Vec<SugovCpu>,
    /// `tick_nohz_get_idle_calls_cpu()`, indexed by CPU.
    idle_calls: Vec<u64>,
    tick_ns: u64,
    freq_invariant: bool,
    nohz: bool,
    iowait_boost: bool,
}

impl Sugov {
    /// `sugov_init()` + `sugov_start()`.
    pub fn new(policies: Policies, tunables: &Tunables, env: &Env) -> Sugov {
        let sg_policy = policies
            .iter()
            .map(|p| SugovPolicy {
                freq_update_delay_ns: tunables
                    .rate_limit_us
                    .unwrap_or_else(|| p.transition_delay_us())
                    * NSEC_PER_USEC,
                last_freq_update_time: 0,
                next_freq: 0,
                cached_raw_freq: 0,
                work_in_progress: false,
                limits_changed: false,
                // No modelled driver sets CPUFREQ_NEED_UPDATE_LIMITS (intel_cpufreq does only
                // with HWP).
                need_freq_update: false,
            })
            .collect();
        let nr_cpus = policies.nr_cpus();
        Sugov {
            policies,
            sg_policy,
            sg_cpu: vec![SugovCpu::default(); nr_cpus],
            idle_calls: vec![0; nr_cpus],
            tick_ns: env.tick_ns,
            freq_invariant: env.freq_invariant,
            nohz: env.nohz,
            iowait_boost: tunables.iowait_boost,
        }
    }

    pub fn policies(&self) -> &Policies {
        &self.policies
    }

    /// The update_util hook `sugov_start()` installs on `cpu`: `sugov_update_shared()` for a
    /// policy of several CPUs, `sugov_update_single_freq()` otherwise, run on CPU `local`.
    /// `input(j)` reads CPU `j`'s rq; it is called for `cpu`, and for every CPU of a shared
    /// policy when the rate limit lets an evaluation through. A call from a CPU that may not
    /// update the policy (`cpufreq_this_cpu_can_update()`) still counts for the iowait boost
    /// and `last_update`, and evaluates nothing.
    pub fn update_util(
        &mut self,
        cpu: usize,
        local: usize,
        now: u64,
        flags: u32,
        input: &impl Fn(usize) -> CpuUtil,
    ) -> Option<Action> {
        let policy = self.policies.of_cpu(cpu);
        if self.policies.get(policy).cpus.len() > 1 {
            self.update_shared(cpu, local, policy, now, flags, input)
        } else {
            self.update_single_freq(cpu, local, policy, now, flags, input)
        }
    }

    /// `sugov_work()`: the sugov kthread of `policy` runs and sets the latest `next_freq`.
    pub fn work(&mut self, policy: usize) -> Option<FreqChange> {
        let sg_policy = &mut self.sg_policy[policy];
        let freq = sg_policy.next_freq;
        sg_policy.work_in_progress = false;
        self.policies
            .get_mut(policy)
            .driver_target(freq, Relation::L)
            .map(|freq_khz| FreqChange { policy, freq_khz })
    }

    /// `cpu` stopped its tick to idle (`idle_calls++` in `__tick_nohz_idle_stop_tick()`).
    pub fn note_idle_enter(&mut self, cpu: usize) {
        self.idle_calls[cpu] += 1;
    }

    /// `cpufreq_set_policy()` then `sugov_limits()`: the slow path applies the new limits at
    /// once; either way the next update re-evaluates, bypassing the rate limit.
    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        let p = self.policies.get_mut(policy);
        p.set_limits(min_khz, max_khz);
        let applied = if p.fast_switch {
            None
        } else {
            p.apply_limits()
        };
        self.sg_policy[policy].limits_changed = true;
        applied.map(|freq_khz| FreqChange { policy, freq_khz })
    }

    /// `sugov_update_single_freq()`.
    fn update_single_freq(
        &mut self,
        cpu: usize,
        local: usize,
        policy: usize,
        time: u64,
        flags: u32,
        input: &impl Fn(usize) -> CpuUtil,
    ) -> Option<Action> {
        let cached_freq = self.sg_policy[policy].cached_raw_freq;
        let rq = input(cpu);
        if !self.update_single_common(cpu, local, policy, time, flags, &rq) {
            return None;
        }
        let (util, max) = (self.sg_cpu[cpu].util, self.sg_cpu[cpu].max);
        let mut next_f = self.get_next_freq(policy, util, max);
        // A CPU that has not idled since the last evaluation is likely to stay busy, so a
        // lower frequency would be premature, unless uclamp_max is what holds it down.
        if !uclamp_rq_is_capped(&rq)
            && self.cpu_is_busy(cpu)
            && next_f < self.sg_policy[policy].next_freq
        {
            next_f = self.sg_policy[policy].next_freq;
            // next_freq no longer comes from the raw frequency just cached.
            self.sg_policy[policy].cached_raw_freq = cached_freq;
        }
        if !self.update_next_freq(policy, time, next_f) {
            return None;
        }
        self.commit(local, policy, next_f)
    }

    /// `sugov_update_single_common()`: returns whether an evaluation was due.
    fn update_single_common(
        &mut self,
        cpu: usize,
        local: usize,
        policy: usize,
        time: u64,
        flags: u32,
        rq: &CpuUtil,
    ) -> bool {
        let sg_cpu = &mut self.sg_cpu[cpu];
        sg_cpu.iowait_boost(time, flags, self.tick_ns, self.iowait_boost);
        sg_cpu.last_update = time;
        self.ignore_dl_rate_limit(cpu, policy, rq);
        if !self.should_update_freq(policy, local, time) {
            return false;
        }
        let sg_cpu = &mut self.sg_cpu[cpu];
        sg_cpu.get_util(rq);
        sg_cpu.iowait_apply(time, rq, self.tick_ns);
        true
    }

    /// `sugov_update_shared()`.
    fn update_shared(
        &mut self,
        cpu: usize,
        local: usize,
        policy: usize,
        time: u64,
        flags: u32,
        input: &impl Fn(usize) -> CpuUtil,
    ) -> Option<Action> {
        let sg_cpu = &mut self.sg_cpu[cpu];
        sg_cpu.iowait_boost(time, flags, self.tick_ns, self.iowait_boost);
        sg_cpu.last_update = time;
        self.ignore_dl_rate_limit(cpu, policy, &input(cpu));
        if !self.should_update_freq(policy, local, time) {
            return None;
        }
        let next_f = self.next_freq_shared(policy, time, input);
        if !self.update_next_freq(policy, time, next_f) {
            return None;
        }
        self.commit(local, policy, next_f)
    }

    /// `sugov_next_freq_shared()`: the frequency for the CPU with the highest util/max.
    fn next_freq_shared(
        &mut self,
        policy: usize,
        time: u64,
        input: &impl Fn(usize) -> CpuUtil,
    ) -> u32 {
        let (mut util, mut max) = (0, 1);
        for &j in &self.policies.get(policy).cpus {
            let rq = input(j);
            let j_cpu = &mut self.sg_cpu[j];
            j_cpu.get_util(&rq);
            // Also decays or resets the boost of CPUs that made no call of their own.
            j_cpu.iowait_apply(time, &rq, self.tick_ns);
            if j_cpu.util * max > j_cpu.max * util {
                util = j_cpu.util;
                max = j_cpu.max;
            }
        }
        self.get_next_freq(policy, util, max)
    }

    /// `get_next_freq()`: `map_util_perf()` adds 25% headroom, `map_util_freq()` scales to
    /// `cpuinfo.max_freq` (frequency invariant) or to `policy->cur` (not invariant: util is
    /// then relative to the current frequency), and `cpufreq_driver_resolve_freq()` picks the
    /// lowest efficient OPP at or above the result.
    fn get_next_freq(&mut self, policy: usize, util: u64, max: u64) -> u32 {
        let p = self.policies.get(policy);
        let fmax = if self.freq_invariant {
            p.cpuinfo_max_khz()
        } else {
            p.cur_khz
        };
        let util = util + (util >> 2);
        // A capacity of 0 is no real CPU; keep the division defined.
        let freq = (u64::from(fmax) * util / max.max(1)) as u32;
        let sg_policy = &mut self.sg_policy[policy];
        if freq == sg_policy.cached_raw_freq && !sg_policy.need_freq_update {
            return sg_policy.next_freq;
        }
        sg_policy.cached_raw_freq = freq;
        p.resolve(freq, Relation::LE)
    }

    /// `sugov_should_update_freq()` on CPU `local`: nothing for a CPU that may not update the
    /// policy (`cpufreq_this_cpu_can_update()`: "calculating the frequency is pointless if we
    /// cannot in fact act on it"; a pending limits change waits for a CPU that can); then the
    /// rate limit, bypassed once after a limits change.
    #[inline]
    fn should_update_freq(&mut self, policy: usize, local: usize, time: u64) -> bool {
        if !self.policies.get(policy).this_cpu_can_update(local) {
            return false;
        }
        let sg_policy = &mut self.sg_policy[policy];
        if sg_policy.limits_changed {
            sg_policy.limits_changed = false;
            sg_policy.need_freq_update = true;
            return true;
        }
        let delta_ns = time.wrapping_sub(sg_policy.last_freq_update_time) as i64;
        delta_ns >= sg_policy.freq_update_delay_ns as i64
    }

    /// `sugov_update_next_freq()`: whether `next_f` is news. Evaluations that keep the
    /// frequency leave `last_freq_update_time` alone, so the rate limit counts from the last
    /// change.
    fn update_next_freq(&mut self, policy: usize, time: u64, next_f: u32) -> bool {
        let sg_policy = &mut self.sg_policy[policy];
        if sg_policy.need_freq_update {
            sg_policy.need_freq_update = false;
        } else if sg_policy.next_freq == next_f {
            return false;
        }
        sg_policy.next_freq = next_f;
        sg_policy.last_freq_update_time = time;
        true
    }

    /// `cpufreq_driver_fast_switch()`, or `sugov_deferred_update()` from CPU `cpu`: wake the
    /// kthread unless it is already pending (it will read the newest `next_freq`).
    fn commit(&mut self, cpu: usize, policy: usize, next_f: u32) -> Option<Action> {
        let p = self.policies.get_mut(policy);
        if p.fast_switch {
            let freq_khz = p.fast_switch_to(next_f);
            return Some(Action::Switch(FreqChange { policy, freq_khz }));
        }
        let sg_policy = &mut self.sg_policy[policy];
        if sg_policy.work_in_progress {
            return None;
        }
        sg_policy.work_in_progress = true;
        Some(Action::QueueWork { policy, cpu })
    }

    /// `ignore_dl_rate_limit()`: more DL bandwidth than at the last evaluation must be
    /// granted now, so it counts as a limits change.
    fn ignore_dl_rate_limit(&mut self, cpu: usize, policy: usize, rq: &CpuUtil) {
        if rq.bw_dl > self.sg_cpu[cpu].bw_dl {
            self.sg_policy[policy].limits_changed = true;
        }
    }

    /// `sugov_cpu_is_busy()`: no tick-stopping idle entry since the last check. Without
    /// CONFIG_NO_HZ_COMMON there is no idle count and no CPU is held busy.
    fn cpu_is_busy(&mut self, cpu: usize) -> bool {
        if !self.nohz {
            return false;
        }
        let idle_calls = self.idle_calls[cpu];
        let sg_cpu = &mut self.sg_cpu[cpu];
        let busy = idle_calls == sg_cpu.saved_idle_calls;
        sg_cpu.saved_idle_calls = idle_calls;
        busy
    }
}

impl SugovCpu {
    /// `sugov_get_util()`.
    fn get_util(&mut self, rq: &CpuUtil) {
        self.max = rq.capacity_orig;
        self.bw_dl = rq.bw_dl;
        self.util = effective_cpu_util(rq, rq.util_cfs, UtilType::Frequency, None);
    }

    /// `sugov_iowait_reset()`: after more than a tick without a call the CPU is taken to have
    /// idled, and the boost restarts from `IOWAIT_BOOST_MIN` if this call asks for one, else
    /// from nothing.
    fn iowait_reset(&mut self, time: u64, set_iowait_boost: bool, tick_ns: u64) -> bool {
        let delta_ns = time.wrapping_sub(self.last_update) as i64;
        if delta_ns <= tick_ns as i64 {
            return false;
        }
        self.iowait_boost = if set_iowait_boost {
            IOWAIT_BOOST_MIN
        } else {
            0
        };
        self.iowait_boost_pending = set_iowait_boost;
        true
    }

    /// `sugov_iowait_boost()`, run at every call: an IOWAIT call doubles the boost (from
    /// `IOWAIT_BOOST_MIN` up to `SCHED_CAPACITY_SCALE`), once per evaluation: a request still
    /// pending does not double it again. `enabled` is schedlab's `cpufreq.iowait_boost`.
    fn iowait_boost(&mut self, time: u64, flags: u32, tick_ns: u64, enabled: bool) {
        if !enabled {
            return;
        }
        let set_iowait_boost = flags & SCHED_CPUFREQ_IOWAIT != 0;
        if self.iowait_boost != 0 && self.iowait_reset(time, set_iowait_boost, tick_ns) {
            return;
        }
        if !set_iowait_boost || self.iowait_boost_pending {
            return;
        }
        self.iowait_boost_pending = true;
        self.iowait_boost = if self.iowait_boost != 0 {
            (self.iowait_boost << 1).min(SCHED_CAPACITY_SCALE)
        } else {
            IOWAIT_BOOST_MIN
        };
    }

    /// `sugov_iowait_apply()`, run only in an evaluation the rate limit let through: without
    /// a new request the boost halves (and is dropped below `IOWAIT_BOOST_MIN`); the boost,
    /// scaled to this CPU's capacity and clamped by the rq's uclamp, is a floor for util.
    fn iowait_apply(&mut self, time: u64, rq: &CpuUtil, tick_ns: u64) {
        if self.iowait_boost == 0 || self.iowait_reset(time, false, tick_ns) {
            return;
        }
        if !self.iowait_boost_pending {
            self.iowait_boost >>= 1;
            if self.iowait_boost < IOWAIT_BOOST_MIN {
                self.iowait_boost = 0;
                return;
            }
        }
        self.iowait_boost_pending = false;
        let boost = (u64::from(self.iowait_boost) * self.max) >> SCHED_CAPACITY_SHIFT;
        let boost = uclamp_rq_util_with(rq, boost, None);
        self.util = self.util.max(boost);
    }
}

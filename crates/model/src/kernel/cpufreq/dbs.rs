//! What ondemand and conservative share (`drivers/cpufreq/cpufreq_governor.c`, v6.1): they
//! do not read PELT but measure each CPU's busy time between samples. A sample is not a
//! timer: like schedutil they hook `cpufreq_update_util()`, and the first call at least
//! `sampling_rate` after the previous sample queues the governor's work, which computes the
//! load over the time since the previous sample (`dbs_update()`) and sets the frequency.
//!
//! `sampling_rate` defaults to max(2 ticks, `cpufreq_policy_transition_delay_us()`)
//! (`cpufreq_dbs_governor_init()`; `CPUFREQ_DBS_MIN_SAMPLING_INTERVAL` is 2 ticks, and a
//! smaller `sampling_rate` is refused). With tunables shared by all policies (drivers without
//! `CPUFREQ_HAVE_GOVERNOR_PER_POLICY`) the kernel takes the first policy's default for all;
//! here each policy computes its own, which is the same on every preset.

use super::{Action, Env, FreqChange, Policies, Tunables, NSEC_PER_USEC};

/// One CPU's time accounting since boot, cumulative, up to the moment it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// Idle time outside iowait (`get_cpu_idle_time_us()`: tick-sched's `idle_sleeptime`),
    /// including the idle period under way.
    pub idle_ns: u64,
    /// Idle time while a task that slept on this CPU waits for I/O
    /// (`get_cpu_iowait_time_us()`: `iowait_sleeptime`), including the period under way.
    pub iowait_ns: u64,
    /// Time spent running tasks of nice > 0 (`kcpustat_cpu(cpu).cpustat[CPUTIME_NICE]`).
    pub nice_ns: u64,
}

/// `struct cpu_dbs_info`, in the kernel's units (µs, the nice time in ns).
#[derive(Debug, Clone, Copy, Default)]
struct CpuDbs {
    prev_cpu_idle: u64,
    prev_update_time: u64,
    prev_cpu_nice: u64,
    prev_load: u32,
}

/// `struct policy_dbs_info` with the policy's `dbs_data->sampling_rate`.
#[derive(Debug, Clone)]
pub(super) struct PolicyDbs {
    /// µs.
    pub sampling_rate: u32,
    last_sample_time: u64,
    sample_delay_ns: i64,
    work_in_progress: bool,
    /// Multiplier of the sampling period (ondemand's `sampling_down_factor` at max).
    pub rate_mult: u32,
    /// Whole sampling periods the idlest CPU slept through, if more than two; else `u32::MAX`.
    pub idle_periods: u32,
}

/// The common state of a dbs governor (`struct dbs_data` and the per-policy, per-CPU data).
#[derive(Debug, Clone)]
pub(super) struct Dbs {
    pub policies: Policies,
    pub policy: Vec<PolicyDbs>,
    /// Indexed by CPU.
    cpu: Vec<CpuDbs>,
    pub up_threshold: u32,
    pub sampling_down_factor: u32,
    ignore_nice_load: bool,
    io_is_busy: bool,
}

impl Dbs {
    /// `cpufreq_dbs_governor_init()` with the governor's `up_threshold` and `io_is_busy`.
    pub fn new(
        policies: Policies,
        tunables: &Tunables,
        env: &Env,
        up_threshold: u32,
        io_is_busy: bool,
    ) -> Result<Dbs, String> {
        let min_interval_us = 2 * env.tick_ns / NSEC_PER_USEC;
        if let Some(rate) = tunables.sampling_rate {
            if rate < min_interval_us {
                return Err(format!(
                    "sampling_rate: at least {min_interval_us} (two ticks, in µs)"
                ));
            }
        }
        let policy = policies
            .iter()
            .map(|p| PolicyDbs {
                sampling_rate: tunables
                    .sampling_rate
                    .unwrap_or_else(|| min_interval_us.max(p.transition_delay_us()))
                    as u32,
                last_sample_time: 0,
                sample_delay_ns: 0,
                work_in_progress: false,
                rate_mult: 1,
                idle_periods: u32::MAX,
            })
            .collect();
        let nr_cpus = policies.nr_cpus();
        Ok(Dbs {
            policies,
            policy,
            cpu: vec![CpuDbs::default(); nr_cpus],
            up_threshold,
            sampling_down_factor: tunables.sampling_down_factor,
            ignore_nice_load: tunables.ignore_nice_load,
            io_is_busy,
        })
    }

    /// `cpufreq_dbs_governor_start()`, then the `->limits` that `cpufreq_start_governor()`
    /// runs after it (`cpufreq_dbs_governor_limits()`): the first sample measures from now
    /// and is taken at the first hook call (`gov_update_sample_delay(policy_dbs, 0)`), the
    /// policy staying at `policy->cur` until then (it is within the limits).
    pub fn start(&mut self, now: u64, times: &dyn Fn(usize) -> CpuTimes) {
        for (p, pd) in self.policy.iter_mut().enumerate() {
            pd.rate_mult = 1;
            for &j in &self.policies.get(p).cpus {
                let t = times(j);
                let (idle, update_time) = cpu_idle_time(&t, now, self.io_is_busy);
                let c = &mut self.cpu[j];
                c.prev_cpu_idle = idle;
                c.prev_update_time = update_time;
                c.prev_load = 0;
                c.prev_cpu_nice = t.nice_ns;
            }
            // gov_set_update_util() sets the delay to sampling_rate; the limits zero it.
            pd.sample_delay_ns = 0;
            pd.last_sample_time = 0;
        }
    }

    /// `dbs_update_util_handler()` for `cpu`'s rq, run on CPU `local`: nothing unless `local`
    /// may update the policy (`cpufreq_this_cpu_can_update()`); then queue a sample (its work
    /// on `local`) if none is under way and the sample delay has passed since the last one.
    pub fn update_util(&mut self, cpu: usize, local: usize, now: u64) -> Option<Action> {
        let policy = self.policies.of_cpu(cpu);
        if !self.policies.get(policy).this_cpu_can_update(local) {
            return None;
        }
        let pd = &mut self.policy[policy];
        if pd.work_in_progress {
            return None;
        }
        if (now.wrapping_sub(pd.last_sample_time) as i64) < pd.sample_delay_ns {
            return None;
        }
        pd.last_sample_time = now;
        pd.work_in_progress = true;
        Some(Action::QueueWork { policy, cpu: local })
    }

    /// `dbs_update()`: the policy's load in percent, the highest of its CPUs' busy shares
    /// since the previous sample, in the kernel's 32-bit µs arithmetic.
    pub fn dbs_update(
        &mut self,
        policy: usize,
        now: u64,
        times: &dyn Fn(usize) -> CpuTimes,
    ) -> u32 {
        let pd = &mut self.policy[policy];
        // A longer period at max (ondemand's rate_mult) also raises the bar for "was idle".
        let sampling_rate = pd.sampling_rate.wrapping_mul(pd.rate_mult);
        let mut max_load = 0;
        let mut idle_periods = u32::MAX;
        for &j in &self.policies.get(policy).cpus {
            let t = times(j);
            let (cur_idle_time, update_time) = cpu_idle_time(&t, now, self.io_is_busy);
            let c = &mut self.cpu[j];
            let time_elapsed = update_time.wrapping_sub(c.prev_update_time) as u32;
            c.prev_update_time = update_time;
            let mut idle_time = cur_idle_time.wrapping_sub(c.prev_cpu_idle) as u32;
            c.prev_cpu_idle = cur_idle_time;
            if self.ignore_nice_load {
                let nice_us = t.nice_ns.wrapping_sub(c.prev_cpu_nice) / NSEC_PER_USEC;
                idle_time = idle_time.wrapping_add(nice_us as u32);
                c.prev_cpu_nice = t.nice_ns;
            }
            let long_idle = idle_time > sampling_rate.wrapping_mul(2);
            let load = if time_elapsed == 0 {
                // Two samples at the same µs: keep the last load.
                c.prev_load
            } else if long_idle && c.prev_load != 0 {
                // A task waking on a CPU that slept for long would otherwise start at the
                // lowest frequency; reuse the previous load once.
                let load = c.prev_load;
                c.prev_load = 0;
                load
            } else {
                let load = if time_elapsed >= idle_time {
                    100u32.wrapping_mul(time_elapsed - idle_time) / time_elapsed
                } else if (idle_time as i32) < 0 {
                    100
                } else {
                    0
                };
                c.prev_load = load;
                load
            };
            if long_idle {
                idle_periods = idle_periods.min(idle_time / sampling_rate);
            }
            max_load = max_load.max(load);
        }
        pd.idle_periods = idle_periods;
        max_load
    }

    /// The end of `dbs_work_handler()`: the next sample is due `delay_us` after this one.
    pub fn finish_work(&mut self, policy: usize, delay_us: u32) {
        let pd = &mut self.policy[policy];
        pd.sample_delay_ns = i64::from(delay_us) * NSEC_PER_USEC as i64;
        pd.work_in_progress = false;
    }

    /// `cpufreq_set_policy()` then `cpufreq_dbs_governor_limits()`: apply the limits and
    /// take the next sample at the next call.
    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        let p = self.policies.get_mut(policy);
        p.set_limits(min_khz, max_khz);
        let applied = p.apply_limits();
        self.policy[policy].sample_delay_ns = 0;
        applied.map(|freq_khz| FreqChange { policy, freq_khz })
    }
}

/// `get_cpu_idle_time()` with nohz idle accounting: idle µs (with iowait unless `io_is_busy`)
/// and the time of the reading in µs.
fn cpu_idle_time(t: &CpuTimes, now: u64, io_is_busy: bool) -> (u64, u64) {
    let mut idle = t.idle_ns / NSEC_PER_USEC;
    if !io_is_busy {
        idle += t.iowait_ns / NSEC_PER_USEC;
    }
    (idle, now / NSEC_PER_USEC)
}

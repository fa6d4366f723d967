//! The scheduler side of cpufreq (kernel/sched/cpufreq.c and the hooks around it): the
//! `cpufreq_update_util()` hook each CPU calls, the rq signals the governor reads
//! (`CpuUtil`), the idle/iowait/nice time the sampling governors read (`CpuTimes`), and
//! applying a frequency change to the simulated CPUs — their speed, PELT clock, residency and
//! the `cpu_frequency` trace event.

use super::core::{Event, Kernel};
use super::cpufreq::{Action, CpuTimes, CpuUtil, FreqChange};
use super::fair::Fair;
use super::sched::{freq_scale, Class, Rq, Task};
use crate::kernel::tracepoint::TraceEvent;
use crate::machine;
use crate::platform::Platform;
use schedlab_base::sim::{EventQueue, Time};

/// `SCHED_CPUFREQ_IOWAIT`.
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1;

/// Idle, iowait and nice time of one CPU since boot (`tick_sched` and `kcpustat`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimesAcc {
    pub idle_ns: u64,
    pub iowait_ns: u64,
    pub nice_ns: u64,
    pub since: u64,
}

/// The rq signals `effective_cpu_util()` reads for `cpu`.
pub(super) fn cpu_util(
    rqs: &[Rq],
    fair: &Fair,
    platform: &Platform,
    uclamp_used: bool,
    cpu: usize,
) -> CpuUtil {
    let rq = &rqs[cpu];
    let cap = platform.cpus[cpu].capacity_orig as u64;
    CpuUtil {
        util_cfs: fair.cpu_util_cfs(cpu, cap),
        util_rt: rq.avg_rt.util_avg,
        util_dl: rq.avg_dl.util_avg,
        bw_dl: rq.dl_running_bw,
        util_irq: 0,
        capacity_orig: cap,
        rt_runnable: rq.rt.nr_running > 0 && !rq.rt.throttled,
        uclamp_used,
        uclamp_min: rq.uclamp.value[0] as u64,
        uclamp_max: rq.uclamp.value[1] as u64,
        uclamp_idle: rq.uclamp.flags_idle,
    }
}

/// The cumulative times of `cpu` up to `now`, the interval under way included.
fn cpu_times(rqs: &[Rq], tasks: &[Task], cpu: usize, now: Time) -> CpuTimes {
    let rq = &rqs[cpu];
    let mut t = rq.times;
    add_interval(&mut t, rq, tasks, now);
    CpuTimes {
        idle_ns: t.idle_ns,
        iowait_ns: t.iowait_ns,
        nice_ns: t.nice_ns,
    }
}

/// Charge the time since `acc.since` to idle, iowait or nice as the rq stands.
fn add_interval(acc: &mut CpuTimesAcc, rq: &Rq, tasks: &[Task], now: Time) {
    let dt = now.saturating_sub(acc.since);
    match rq.curr {
        None if rq.nr_iowait > 0 => acc.iowait_ns += dt,
        None => acc.idle_ns += dt,
        Some(t) if tasks[t].class() == Class::Fair && tasks[t].nice > 0 => acc.nice_ns += dt,
        Some(_) => {}
    }
    acc.since = now;
}

impl Kernel {
    /// Account idle/iowait/nice time up to `now`; call before the rq's state changes.
    pub(super) fn account_times(&mut self, cpu: usize, now: Time) {
        let mut acc = self.rqs[cpu].times;
        add_interval(&mut acc, &self.rqs[cpu], &self.tasks, now);
        self.rqs[cpu].times = acc;
    }

    /// `cpufreq_update_util(rq, flags)` for `cpu`'s rq, run on `self.this_cpu`.
    pub(super) fn cpufreq_update_util(
        &mut self,
        cpu: usize,
        flags: u32,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let (rqs, fair, platform) = (&self.rqs, &self.fair, &self.platform);
        // uclamp_is_used(): the static key (always false without CONFIG_UCLAMP_TASK).
        let used = self.variant.uclamp_task && self.uclamp.active();
        let local = self.this_cpu;
        let action = self.cpufreq.update_util(cpu, local, now, flags, &|c| {
            cpu_util(rqs, fair, platform, used, c)
        });
        self.cpufreq_action(action, now, q);
    }

    fn cpufreq_action(&mut self, action: Option<Action>, now: Time, q: &mut EventQueue<Event>) {
        match action {
            None => {}
            Some(Action::Switch(fc)) => self.set_policy_freq(fc, now, q),
            // The sugov kthread or the dbs kworker runs the work shortly after; their own
            // CPU time is not modelled.
            Some(Action::QueueWork { policy, .. }) => q.schedule(
                now + machine::cpufreq_work(&self.costs).wall_ns,
                Event::CpufreqWork { policy },
            ),
        }
    }

    /// The deferred cpufreq work of `policy` runs.
    pub(super) fn cpufreq_work(&mut self, policy: usize, now: Time, q: &mut EventQueue<Event>) {
        let (rqs, tasks) = (&self.rqs, &self.tasks);
        let change = self
            .cpufreq
            .work(policy, now, &|c| cpu_times(rqs, tasks, c, now));
        if let Some(fc) = change {
            self.set_policy_freq(fc, now, q);
        }
    }

    /// The governor's `->start`: fixed governors set their frequency at once.
    pub(super) fn cpufreq_start(&mut self, now: Time, q: &mut EventQueue<Event>) {
        let (rqs, tasks) = (&self.rqs, &self.tasks);
        let changes = self.cpufreq.start(now, &|c| cpu_times(rqs, tasks, c, now));
        for fc in changes {
            self.set_policy_freq(fc, now, q);
        }
    }

    /// A CPU enters idle with its tick stopped (schedutil's busy hold ends).
    pub(super) fn cpufreq_idle_enter(&mut self, cpu: usize) {
        self.cpufreq.note_idle_enter(cpu);
    }

    /// Set the frequency of a policy (= a frequency domain): its CPUs' work in flight is
    /// re-timed, their PELT clocks accounted at the old speed first.
    pub(super) fn set_policy_freq(&mut self, fc: FreqChange, now: Time, q: &mut EventQueue<Event>) {
        let d = fc.policy;
        let Some(opp) = self.platform.freq_domains[d]
            .opps
            .iter()
            .position(|o| o.freq_khz == fc.freq_khz)
        else {
            debug_assert!(
                false,
                "governor chose {} kHz, not an OPP of domain {d}",
                fc.freq_khz
            );
            return;
        };
        if opp == self.domains[d].opp {
            return;
        }
        self.domains[d].opp = opp;
        self.domains[d].res.set_opp(now, opp);
        for i in 0..self.platform.freq_domains[d].cpus.len() {
            let cpu = self.platform.freq_domains[d].cpus[i];
            self.account_progress(cpu, now);
            self.update_rq_clock(cpu, now);
            let cap = self.platform.capacity_at(cpu, fc.freq_khz) as u64;
            let invariant = self
                .variant
                .freq_invariance
                .unwrap_or(self.platform.freq_invariant);
            let scale = freq_scale(&self.platform, invariant, cpu, fc.freq_khz);
            let rq = &mut self.rqs[cpu];
            rq.res.set_opp(now, opp);
            rq.freq_khz = fc.freq_khz;
            rq.capacity_cur = cap;
            rq.freq_scale = scale;
            if rq.curr.is_some() {
                self.arm_work(cpu, now, q);
            }
            self.emit(
                now,
                cpu,
                &TraceEvent::CpuFrequency {
                    khz: fc.freq_khz,
                    cpu,
                },
            );
            if self.events.sched_cpu_capacity {
                let orig = self.platform.cpus[cpu].capacity_orig as u64;
                let ev = TraceEvent::SchedCpuCapacity {
                    cpu,
                    capacity: orig,
                    capacity_orig: orig,
                    capacity_curr: cap,
                };
                self.emit(now, cpu, &ev);
            }
        }
    }
}

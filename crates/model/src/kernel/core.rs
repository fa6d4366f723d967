//! The core scheduler (kernel/sched/core.c): runqueues, `try_to_wake_up`, `schedule()`,
//! `scheduler_tick()`, fork and exit, `sched_setscheduler`, affinity and migration — and the
//! execution of the simulated threads' requests (the system-call boundary).
//!
//! Time flows only through events: a tick of a busy CPU, the end of the running task's
//! current piece of work, the end of a sleep, the RT period timer, a deadline task's
//! replenishment. Every event handler ends by running `schedule()` on each CPU that needs it,
//! so a wakeup that preempts takes effect at the same nanosecond (an IPI without delay).

use super::cgroup::{Cgroups, ROOT};
use super::cpufreq::{uclamp_rq_util_with, CpuUtil, Cpufreq};
use super::cpuidle::CpuidleDevice;
use super::deadline::DlEntity;
use super::fair::{Fair, LoadWeight, Preempt, QueueFlags};
use super::fair_balance::Balance;
use super::futex::Futexes;
use super::hrtimer::HrtimerBases;
use super::invariants::Checks;
use super::pelt::{self, SchedAvg};
use super::pipe::Channels;
use super::pm_qos::CpuLatencyQos;
use super::rt::RtBandwidth;
use super::sched::{
    Activity, Class, Domain, ExitedForks, LazyStats, Rq, Task, TaskId, TaskState, TaskStats,
    COMM_MAX,
};
use super::sched_cpufreq::SCHED_CPUFREQ_IOWAIT;
use super::uclamp::{
    eff_value, uclamp_fork, uclamp_post_fork, ClampId, TaskCtx, TaskUclamp, UclampSys,
};
use super::variant::{UpdateSites, Variant};
use crate::kernel::tracepoint::{
    EventSelection, Observer, PeltFields, TaskRef, TraceEvent, UclampFields, IDLE_COMM,
};
use crate::machine::{self, Charge, Payer, Placement, Touched};
use crate::platform::{Costs, Memory, Platform, SCHED_CAPACITY_SCALE};
use crate::workload::{
    CpuSet, LoopRecord, Policy, RtappLogs, SchedParams, Thread, UserSpace, Workload,
};
use schedlab_base::sim::{EventQueue, Model, SimRng, Time};
use std::sync::Arc;

/// The engine's events. A task or CPU number beside a 64-bit field is a `u32`, so that an
/// event is 16 bytes and an entry of the event queue 32. The default one fills the queue's
/// unused places and is never queued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Event {
    /// Create an initial thread of the workload.
    Spawn { task: TaskId },
    /// `scheduler_tick()` on a busy CPU.
    Tick { cpu: usize },
    /// The running task's current work (or wall-clock spin) is done.
    WorkDone { cpu: usize },
    /// A sleep or I/O ends: wake the task.
    Wake { task: u32, gen: u64 },
    /// The RT bandwidth period timer (`sched_rt_period_timer`).
    #[default]
    RtPeriod,
    /// Deferred cpufreq work of a policy (sugov kthread, dbs kworker).
    CpufreqWork { policy: usize },
    /// The nohz blocked-load update of idle CPUs (`NOHZ_STATS_KICK`).
    NohzStats,
    /// The `index`-th timed sysctl/cgroup write of the run's settings.
    AdminWrite { index: usize },
    /// A throttled deadline task's replenishment timer (`dl_task_timer`), armed for the
    /// deadline the task had when it ran out.
    DlReplenish { task: u32, deadline: u64 },
    /// The tick of an idle CPU whose cpuidle governor kept it.
    IdleTick { cpu: usize },
    /// An idle CPU woken for a task is out of its idle state (at `until`).
    IdleExit { cpu: u32, until: u64 },
}

const _: () = assert!(std::mem::size_of::<Event>() == 16);

const IDLE_REF: TaskRef<'static> = TaskRef {
    comm: IDLE_COMM,
    pid: 0,
    prio: 120,
};

/// The comm of rt-app's main thread, which its threads inherit before naming themselves.
const RTAPP_COMM: &str = "rt-app";

/// How often blocked PELT signals are refreshed: `LOAD_AVG_PERIOD` jiffies-as-ms of
/// `nohz.next_blocked`, used for busy CPUs' rebalance too.
const BLOCKED_UPDATE_PERIOD_NS: u64 = pelt::LOAD_AVG_PERIOD * 1_000_000;

/// The first pid given to a workload thread (below are the kernel's own threads).
pub(super) const FIRST_PID: u32 = 1000;

/// rt-app's main process as its own trace_marker lines name it: it is not simulated (it only
/// creates the threads and waits), so it writes on CPU 0 as a pid just below its threads'.
const RTAPP_MAIN: TaskRef<'static> = TaskRef {
    comm: RTAPP_COMM,
    pid: FIRST_PID - 1,
    prio: 120,
};

/// What a timed write did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AdminRecord {
    pub at_ns: u64,
    pub key: String,
    pub value: String,
    /// "ok" or the errno name.
    pub result: &'static str,
}

/// Where the kernel reports what happens.
#[derive(Default)]
pub struct KernelOutputs {
    /// The trace writer (or any observer of the event stream).
    pub observer: Option<Box<dyn Observer>>,
    pub rtapp_logs: Option<RtappLogs>,
    /// Load-tracking events to emit to the observer.
    pub events: EventSelection,
}

/// The simulated machine: platform, kernel state and user space.
pub struct Kernel {
    pub platform: Platform,
    pub variant: Variant,
    /// What the kernel paths cost and the memory refills come from: the platform's with the
    /// variant's `cost.*`/`memory.*` switches.
    pub costs: Costs,
    pub memory: Memory,
    pub(super) workload: Workload,
    pub(super) user: UserSpace,
    pub tasks: Vec<Task>,
    pub rqs: Vec<Rq>,
    /// Bytes touched in each last-level cache so far (by all of its CPUs), by LLC id.
    pub(super) llc_touched: Vec<u64>,
    pub domains: Vec<Domain>,
    pub fair: Fair,
    /// Scheduling domains, energy model, overutilized flag and balancer state.
    pub lb: Balance,
    /// `smp_processor_id()`: the CPU running the kernel path being simulated. Each event sets
    /// it to the CPU it happens on ([`Kernel::handle`]); a path that runs elsewhere sets it
    /// for its span: a remote `schedule()`, a wake list's enqueue (the target), the nohz idle
    /// balancer's work (the kicked CPU), an RT push (the overloaded CPU). The cpufreq hook
    /// compares it with the policy of the rq it updates (`cpufreq_this_cpu_can_update()`).
    pub(super) this_cpu: usize,
    pub(super) cpufreq: Cpufreq,
    /// uclamp sysctls, static key and switches.
    pub uclamp: UclampSys,
    /// The cgroup v2 cpu controller's task groups.
    pub cgroups: Cgroups,
    /// The cgroup of each of the workload's `taskgroup` paths.
    pub(super) tg_cgroup: Vec<usize>,
    pub(super) nohz_stats_armed: bool,
    /// The run's randomness (thread start times, I/O service times).
    pub(super) rng: SimRng,
    pub(super) futex: Futexes,
    /// Pipes, sockets and futex words of the workload's `send`/`recv` events.
    pub channels: Channels,
    pub(super) rt_bw: RtBandwidth,
    pub(super) rt_period_armed: bool,
    pub(super) next_pid: u32,
    /// Capacity of the calibration CPU at its highest OPP (work of `run` events).
    pub(super) run_capacity: u64,
    pub(super) observer: Option<Box<dyn Observer>>,
    pub(super) rtapp_logs: Option<RtappLogs>,
    /// Load-tracking events the observer wants.
    pub(super) events: EventSelection,
    /// Results of the timed sysctl/cgroup writes, in order.
    pub admin_log: Vec<AdminRecord>,
    /// Slots of exited forked threads, reused by new ones: a fork loop's memory stays flat.
    pub(super) free_tasks: Vec<TaskId>,
    /// The CPUs whose `need_resched` is set, one bit each (64 CPUs per word), so
    /// `resched_pending` finds them without looking at every runqueue.
    pub(super) resched_mask: Vec<u64>,
    /// What the debug checks look at after the event (`invariants.rs`).
    pub(super) checks: Checks,
    /// What exited forked threads did, per workload task.
    pub exited_forks: Vec<ExitedForks>,
    /// Threads created and not exited, and whether one has exited: the workload has ended
    /// when none is left (`workload_ended`).
    pub(super) threads_alive: usize,
    pub(super) thread_exited: bool,
    /// Forks that failed because `threads_alive` had reached the workload's `threads_max`
    /// (`copy_process()`'s EAGAIN), per workload task forked.
    pub fork_failures: Vec<u64>,
    /// The mask of every CPU, which the tasks allowed on all of them share, and the other
    /// masks tasks were given, one copy of each (`shared_mask`).
    pub(super) all_cpus: Arc<CpuSet>,
    pub(super) masks: std::collections::HashSet<Arc<CpuSet>>,
    /// Scratch lists reused to avoid allocating per event.
    pub(super) wake_scratch: Vec<TaskId>,
    pub(super) log_scratch: Vec<LoopRecord>,
    /// Each CPU's cpuidle device (governor data, state while idle).
    pub(super) cpuidle: Vec<CpuidleDevice>,
    /// Sleep timers per CPU (the hrtimer bases), for the idle governors' next timer event.
    pub(super) hrtimers: HrtimerBases,
    /// `/dev/cpu_dma_latency` requests.
    pub(super) pm_qos: CpuLatencyQos,
}

impl Kernel {
    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// The workload threads' shared user-space state (the use case's start time, …).
    pub fn user(&self) -> &UserSpace {
        &self.user
    }

    /// Every thread of the workload has exited: rt-app's main has joined them all and the
    /// run is over, whatever kernel timers are still armed.
    pub fn workload_ended(&self) -> bool {
        self.thread_exited && self.threads_alive == 0
    }

    /// Flush the trace and the rt-app logs at the end of the run: the first error met by
    /// each.
    pub fn finish_outputs(&mut self) -> (std::io::Result<()>, std::io::Result<()>) {
        let trace = self.observer.as_mut().map_or(Ok(()), |o| o.finish());
        let logs = self.rtapp_logs.as_mut().map_or(Ok(()), |l| l.finish());
        (trace, logs)
    }

    /// Emit `ev` to the trace, if there is one. Inlined: most runs have no trace, and the
    /// test then costs less than the call (and the event is not built).
    #[inline]
    pub(super) fn emit(&mut self, ts: Time, cpu: usize, ev: &TraceEvent<'_>) {
        if let Some(obs) = self.observer.as_mut() {
            let current = self.rqs[cpu].curr.map(|t| task_ref(&self.tasks[t]));
            obs.event(ts, cpu, current, ev);
        }
    }

    /// Emit an event about task `t` (the event borrows its name).
    pub(super) fn emit_task<F>(&mut self, ts: Time, cpu: usize, t: TaskId, make: F)
    where
        F: for<'a> FnOnce(TaskRef<'a>) -> TraceEvent<'a>,
    {
        if let Some(obs) = self.observer.as_mut() {
            let current = self.rqs[cpu].curr.map(|c| task_ref(&self.tasks[c]));
            obs.event(ts, cpu, current, &make(task_ref(&self.tasks[t])));
        }
    }

    // ----- task creation and exit -------------------------------------------------------

    /// `copy_process()` + `sched_fork()`: a new task in TASK_NEW, not yet on a runqueue,
    /// named and numbered as rt-app names its threads. A forked thread starts with its
    /// parent's affinity (pthread_create inherits it); the thread's program then applies
    /// its own scheduling attributes.
    pub(super) fn create_task(&mut self, spec: usize, parent: Option<TaskId>) -> TaskId {
        self.threads_alive += 1;
        let (index, name) = self
            .user
            .name_thread(&self.workload, spec, parent.is_some());
        let s = &self.workload.tasks[spec];
        let params = s.params;
        let cpus_allowed = match parent {
            Some(p) => Arc::clone(&self.tasks[p].cpus_allowed),
            None => Arc::clone(&self.all_cpus),
        };
        let id = self.free_tasks.last().copied().unwrap_or(self.tasks.len());
        let cpu = parent.map_or(0, |p| self.tasks[p].cpu);
        let (nice, rt_priority) = split_priority(params);
        let se = self.fair.alloc_se(
            LoadWeight::for_nice(nice, params.policy == Policy::Idle),
            params.policy == Policy::Idle,
            cpu,
            id,
        );
        // sched_fork(): the child copies its parent's latency nice and offset, unless the
        // parent asked for reset_on_fork (patch 2).
        let reset = parent.is_some_and(|p| self.tasks[p].sched_reset_on_fork);
        let (latency_nice, latency_offset) = match parent {
            Some(p) if !reset => (
                self.tasks[p].latency_nice,
                self.fair.ses[self.tasks[p].se].latency_offset,
            ),
            _ => (0, self.fair.latency_offset(0)),
        };
        self.fair.set_latency_offset(se, latency_offset);
        // v6.12: a fair task's sched_runtime is its custom slice (EEVDF).
        let runtime = if params.policy.is_fair() {
            params.dl_runtime_ns
        } else {
            0
        };
        self.fair.set_custom_slice(se, runtime);
        let cgroup = parent.map_or(ROOT, |p| self.tasks[p].cgroup);
        self.fair.set_task_group(se, cgroup);
        let pid = self.next_pid;
        self.next_pid += 1;
        let task = Task {
            pid,
            name,
            index,
            renamed: false,
            spec,
            forked: parent.is_some(),
            state: TaskState::New,
            on_rq: false,
            cpu,
            policy: params.policy,
            nice,
            rt_priority,
            cpus_allowed,
            se,
            dl: dl_entity(params),
            rr_ticks: self.rr_timeslice_ticks(),
            in_iowait: false,
            sum_exec_runtime: 0,
            thread: None,
            activity: Activity::Next,
            wake_gen: 0,
            timer_slack_ns: self.workload.tasks[spec]
                .timer_slack_ns
                .or(parent.map(|p| self.tasks[p].timer_slack_ns))
                .unwrap_or(self.variant.timer_slack_ns),
            migrate_pending: false,
            cgroup,
            uclamp: match parent {
                Some(p) => {
                    let mut child = uclamp_fork(&self.tasks[p].uclamp, reset, &self.uclamp);
                    uclamp_post_fork(&mut child, &self.uclamp, params.policy.is_rt());
                    child
                }
                None if params.policy.is_rt() => TaskUclamp::rt(&self.uclamp),
                None => TaskUclamp::fair(&self.uclamp),
            },
            latency_nice,
            sched_reset_on_fork: false,
            setattr_errors: 0,
            last_setattr_errno: None,
            // A process of its own (hackbench's forked senders and receivers), or a thread
            // of rt-app's process.
            mm: if self.workload.tasks[spec].own_process {
                pid
            } else {
                0
            },
            working_set: self.workload.tasks[spec].working_set,
            ran_on: None,
            touched_mark: 0,
            llc_mark: 0,
            retry_send: None,
            last_ran: None,
            stats: LazyStats::default(),
        };
        match self.free_tasks.pop() {
            Some(slot) => self.tasks[slot] = task,
            None => self.tasks.push(task),
        }
        id
    }

    /// The user-space state of task `t`'s thread as it starts: its workload task's program
    /// at its first instruction, and for a fork the affinity it inherited (its mask, which
    /// only the thread itself changes, is still its parent's at the fork).
    fn new_thread(&self, t: TaskId) -> Thread {
        let task = &self.tasks[t];
        let mut thread = Thread::new(
            &self.workload,
            task.spec,
            task.index,
            task.name.clone(),
            self.run_capacity,
        );
        if task.forked {
            thread.set_default_affinity(*task.cpus_allowed);
        }
        thread.set_logging(self.rtapp_logs.is_some());
        thread
    }

    pub(super) fn rr_timeslice_ticks(&self) -> u64 {
        (self.variant.sched_rr_timeslice_ms * self.variant.hz as u64 / 1000).max(1)
    }

    /// `wake_up_new_task()`: fork balancing, first enqueue, preemption check.
    pub(super) fn wake_up_new_task(
        &mut self,
        t: TaskId,
        parent: Option<TaskId>,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let parent_cpu = parent.map_or(0, |p| self.tasks[p].cpu);
        // The parent's CPU enqueues the child on the CPU fork balancing chose, remote or not
        // (no wake list for a new task).
        debug_assert_eq!(parent_cpu, self.this_cpu, "a fork runs on the parent's CPU");
        let cpu = self.select_task_rq(t, parent_cpu, parent_cpu, true, false, now);
        let se = self.tasks[t].se;
        // task_fork_fair() runs against the parent's queue, then the child moves.
        let parent_se = parent.map(|p| self.tasks[p].se);
        self.fair.task_fork(parent_cpu, parent_se, se, now);
        self.checks.task(t);
        self.checks.cpu(self.tasks[t].cpu);
        self.tasks[t].cpu = cpu;
        self.tasks[t].state = TaskState::Running;
        self.update_rq_clock(cpu, now);
        let cap = self.platform.cpus[cpu].capacity_orig as u64;
        self.fair.post_init_entity_util_avg(cpu, se, cap);
        self.enqueue_task(t, cpu, cpu, QueueFlags::default(), false, now, q);
        let trace_cpu = parent.map_or(cpu, |p| self.tasks[p].cpu);
        self.emit_task(now, trace_cpu, t, |p| TraceEvent::SchedWakeupNew {
            p,
            target_cpu: cpu,
        });
        self.check_preempt_curr(cpu, t, true, now);
    }

    /// `kernel_clone()` from a running thread. With `threads_max` threads alive,
    /// `copy_process()` fails with EAGAIN (`nr_threads >= max_threads`, kernel/fork.c):
    /// no child, the failure counted, and the parent goes on, as `pthread_create`
    /// returns the error to it.
    pub(super) fn do_fork(
        &mut self,
        parent: TaskId,
        spec: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        if self.threads_alive >= self.workload.global.threads_max as usize {
            self.fork_failures[spec] += 1;
            return;
        }
        let child = self.create_task(spec, Some(parent));
        self.tasks[parent].stats.forks += 1;
        let pcpu = self.tasks[parent].cpu;
        if let Some(obs) = self.observer.as_mut() {
            let cur = task_ref(&self.tasks[parent]);
            let ev = TraceEvent::SchedProcessFork {
                parent: cur,
                child: task_ref(&self.tasks[child]),
            };
            obs.event(now, pcpu, Some(cur), &ev);
        }
        self.wake_up_new_task(child, Some(parent), now, q);
    }

    /// `do_exit()` of the running task `t`.
    pub(super) fn do_exit(&mut self, t: TaskId, now: Time) {
        self.threads_alive -= 1;
        self.thread_exited = true;
        let cpu = self.tasks[t].cpu;
        self.emit_task(now, cpu, t, |p| TraceEvent::SchedProcessExit { p });
        self.checks.task(t);
        self.tasks[t].state = TaskState::Dead;
        self.futex.forget(t);
        self.channels.forget(t);
        if let Some(logs) = self.rtapp_logs.as_mut() {
            logs.close(t);
        }
        self.resched_curr(cpu);
    }

    /// An exited forked thread's numbers join its task's totals and its slot is freed.
    pub(super) fn reap_forked(&mut self, t: TaskId) {
        let task = &mut self.tasks[t];
        let spec = task.spec;
        if self.exited_forks.len() <= spec {
            self.exited_forks
                .resize_with(spec + 1, ExitedForks::default);
        }
        let agg = &mut self.exited_forks[spec];
        let c = &mut agg.counts;
        c.threads += 1;
        c.runtime_ns += task.sum_exec_runtime;
        c.wakeups += task.stats.wakeups;
        c.preemptions += task.stats.preemptions;
        c.migrations += task.stats.migrations;
        c.io_completions += task.stats.io_completions;
        c.forks += task.stats.forks;
        agg.wakeup_latency.merge(&task.stats.wakeup_latency);
        agg.latency_split.add(&task.stats.latency_split);
        self.free_tasks.push(t);
    }

    // ----- runqueue operations ----------------------------------------------------------

    /// `enqueue_task()` of the task's class on `cpu`'s rq, run by `payer` (the CPU that pays
    /// its work: `cpu` itself, or the waker that enqueues without the wake list), plus
    /// `rq->nr_running`, with the cpufreq hooks of the enqueue paths.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn enqueue_task(
        &mut self,
        t: TaskId,
        cpu: usize,
        payer: usize,
        flags: QueueFlags,
        head: bool,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        self.update_rq_clock(cpu, now);
        let levels = self.queue_levels(t);
        let mut ops = 0;
        if self.uclamp_enabled(t) {
            // uclamp_rq_inc() before the class enqueue.
            let ctx = self.uclamp_ctx(t);
            let before = self.rqs[cpu].uclamp.ops.total();
            self.rqs[cpu]
                .uclamp
                .inc(&mut self.tasks[t].uclamp, ctx, &self.uclamp);
            ops = self.rqs[cpu].uclamp.ops.total() - before;
        }
        self.pay(payer, machine::queue_op(&self.costs, levels, ops));
        self.checks.task(t);
        self.checks.cpu(cpu);
        let task = &mut self.tasks[t];
        debug_assert!(!task.on_rq, "task {} enqueued twice", task.pid);
        task.on_rq = true;
        self.rqs[cpu].nr_running += 1;
        // add_nr_running(): a second task makes the root domain overloaded.
        self.lb.overload |= self.rqs[cpu].nr_running == 2;
        match task.class() {
            Class::Fair => {
                let (se, iowait) = (task.se, task.in_iowait);
                let iowait_flag = if iowait { SCHED_CPUFREQ_IOWAIT } else { 0 };
                self.fair.util_est_enqueue(cpu, se);
                let v61 = self.variant.cpufreq_update_sites == UpdateSites::V61;
                if v61 && iowait {
                    self.cpufreq_update_util(cpu, iowait_flag, now, q);
                }
                self.fair.enqueue_entity(cpu, se, flags, now);
                let curr_fair = self.rqs[cpu]
                    .curr
                    .is_some_and(|c| self.tasks[c].class() == Class::Fair);
                if !curr_fair {
                    self.fair.check_preempt_from_others(cpu, se);
                }
                if flags.wakeup {
                    self.update_overutilized_status(cpu, now);
                }
                self.trace_pelt(cpu, t, false, now);
                if v61 {
                    self.fair_util_change(cpu, now, q);
                } else {
                    self.cpufreq_update_util(cpu, iowait_flag, now, q);
                }
            }
            Class::Rt => {
                let prio = task.prio() as usize;
                self.rqs[cpu].rt.enqueue(t, prio, head);
                if !self.rt_period_armed && self.rt_bw.runtime.is_some() {
                    self.rt_period_armed = true;
                    q.schedule(now + self.rt_bw.period, Event::RtPeriod);
                }
                // enqueue_top_rt_rq() kicks cpufreq.
                self.cpufreq_update_util(cpu, 0, now, q);
            }
            Class::Dl => {
                if flags.wakeup || task.dl.deadline == 0 {
                    task.dl.update_at_wakeup(now);
                }
                if task.dl.throttled {
                    arm_dl_timer(&task.dl, t, now, q);
                } else {
                    self.rqs[cpu].dl.enqueue(t, task.dl.deadline);
                }
                // add_running_bw() kicks cpufreq.
                self.rqs[cpu].dl_running_bw += task.dl.bandwidth();
                self.cpufreq_update_util(cpu, 0, now, q);
            }
        }
    }

    /// `dequeue_task()`, with the cpufreq hooks of the dequeue paths.
    pub(super) fn dequeue_task(
        &mut self,
        t: TaskId,
        cpu: usize,
        flags: QueueFlags,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        self.update_rq_clock(cpu, now);
        let levels = self.queue_levels(t);
        let mut ops = 0;
        if self.uclamp_enabled(t) {
            let before = self.rqs[cpu].uclamp.ops.total();
            self.rqs[cpu].uclamp.dec(&mut self.tasks[t].uclamp);
            ops = self.rqs[cpu].uclamp.ops.total() - before;
        }
        self.pay(cpu, machine::queue_op(&self.costs, levels, ops));
        self.checks.task(t);
        self.checks.cpu(cpu);
        let task = &mut self.tasks[t];
        debug_assert!(task.on_rq && task.cpu == cpu);
        task.on_rq = false;
        self.rqs[cpu].nr_running -= 1;
        match task.class() {
            Class::Fair => {
                let se = task.se;
                self.fair.util_est_dequeue(cpu, se);
                self.fair.dequeue_entity(cpu, se, flags, now);
                let cap = self.platform.cpus[cpu].capacity_orig as u64;
                self.fair.util_est_update(se, flags.wakeup, cap);
                self.trace_pelt(cpu, t, flags.wakeup, now);
                if self.variant.cpufreq_update_sites == UpdateSites::V61 {
                    self.fair_util_change(cpu, now, q);
                } else {
                    self.fair.take_util_change(cpu);
                    self.cpufreq_update_util(cpu, 0, now, q);
                }
            }
            Class::Rt => {
                self.rqs[cpu].rt.dequeue(t, task.prio() as usize);
                // dequeue_rt_entity() ends in enqueue_top_rt_rq(), which kicks cpufreq.
                self.cpufreq_update_util(cpu, 0, now, q);
            }
            Class::Dl => {
                if !task.dl.throttled {
                    self.rqs[cpu].dl.dequeue(t);
                }
                self.rqs[cpu].dl_running_bw -= task.dl.bandwidth();
                self.cpufreq_update_util(cpu, 0, now, q);
            }
        }
    }

    /// LISA's load-tracking events after a fair task's PELT update on `cpu`. The test is
    /// inlined into each enqueue and dequeue: without a trace taking the events, no call.
    #[inline]
    pub(super) fn trace_pelt(&mut self, cpu: usize, t: TaskId, dequeued_sleeping: bool, now: Time) {
        if self.events.any_pelt() && self.observer.is_some() {
            self.emit_pelt(cpu, t, dequeued_sleeping, now);
        }
    }

    /// [`Kernel::trace_pelt`]'s events.
    #[inline(never)]
    fn emit_pelt(&mut self, cpu: usize, t: TaskId, dequeued_sleeping: bool, now: Time) {
        let sel = self.events;
        let Some(obs) = self.observer.as_mut() else {
            return;
        };
        let current = self.rqs[cpu].curr.map(|c| task_ref(&self.tasks[c]));
        let se = &self.fair.ses[self.tasks[t].se].avg;
        let p = task_ref(&self.tasks[t]);
        if sel.sched_pelt_se {
            obs.event(
                now,
                cpu,
                current,
                &TraceEvent::SchedPeltSe {
                    cpu,
                    p,
                    avg: pelt_fields(se),
                },
            );
        }
        if sel.sched_util_est_se && dequeued_sleeping {
            let ev = TraceEvent::SchedUtilEstSe {
                cpu,
                p,
                enqueued: se.util_est.enqueued & !pelt::UTIL_AVG_UNCHANGED,
                ewma: se.util_est.ewma,
                util: se.util_avg,
            };
            obs.event(now, cpu, current, &ev);
        }
        let rq = &self.rqs[cpu];
        let used = self.variant.uclamp_task && self.uclamp.active();
        let clamps = |util: u64| {
            let rq_util = CpuUtil {
                uclamp_used: used,
                uclamp_min: rq.uclamp.value[0] as u64,
                uclamp_max: rq.uclamp.value[1] as u64,
                uclamp_idle: rq.uclamp.flags_idle,
                ..CpuUtil::default()
            };
            UclampFields {
                util_avg: util,
                uclamp_avg: uclamp_rq_util_with(&rq_util, util, None),
                uclamp_min: rq_util.uclamp_min,
                uclamp_max: rq_util.uclamp_max,
            }
        };
        if sel.uclamp_util_se {
            let ev = TraceEvent::UclampUtilSe {
                cpu,
                p,
                clamps: clamps(se.util_avg),
            };
            obs.event(now, cpu, current, &ev);
        }
        let cfs = &self.fair.rqs[cpu].avg;
        if sel.uclamp_util_cfs {
            obs.event(
                now,
                cpu,
                current,
                &TraceEvent::UclampUtilCfs {
                    cpu,
                    clamps: clamps(cfs.util_avg),
                },
            );
        }
        if sel.sched_pelt_cfs {
            obs.event(
                now,
                cpu,
                current,
                &TraceEvent::SchedPeltCfs {
                    cpu,
                    avg: pelt_fields(cfs),
                },
            );
        }
        if sel.sched_util_est_cfs {
            let ev = TraceEvent::SchedUtilEstCfs {
                cpu,
                enqueued: cfs.util_est.enqueued,
                ewma: cfs.util_est.ewma,
                util: cfs.util_avg,
            };
            obs.event(now, cpu, current, &ev);
        }
    }

    /// Whether `uclamp_rq_inc/dec` run for `t`: the static key is on (or uclamp is always
    /// active) and the class has `uclamp_enabled` (fair and RT).
    pub(super) fn uclamp_enabled(&self, t: TaskId) -> bool {
        self.variant.uclamp_task && self.uclamp.active() && self.tasks[t].class() != Class::Dl
    }

    /// `cpu` pays `c` ([`machine`]'s rules) on behalf of what it runs now, or of the next
    /// task it runs: as time before that task's work progresses ([`Rq::kernel_work`]), its
    /// work at capacity 1024 and its wall time at the CPU's current capacity.
    #[inline]
    pub(super) fn pay(&mut self, cpu: usize, c: Charge) {
        let rq = &mut self.rqs[cpu];
        rq.kernel_work += c.capacity_ns(rq.capacity_cur);
        self.checks.cpu(cpu);
    }

    /// Take `cpu`'s pending kernel work as wall time at its current capacity.
    fn take_kernel_work(&mut self, cpu: usize) -> u64 {
        let rq = &mut self.rqs[cpu];
        std::mem::take(&mut rq.kernel_work).div_ceil(rq.capacity_cur.max(1))
    }

    /// The runqueues an enqueue or dequeue of `t` walks: its group levels for a fair task
    /// (`for_each_sched_entity`), one for RT and deadline tasks.
    fn queue_levels(&self, t: TaskId) -> u64 {
        match self.tasks[t].class() {
            Class::Fair => self.fair.levels(self.tasks[t].se),
            Class::Rt | Class::Dl => 1,
        }
    }

    /// An interrupt reaches `cpu` at `at`: nothing it brings runs before then, and an idle
    /// CPU starts leaving its idle state then (`idle_exit_pending`).
    fn interrupt_arrives(&mut self, cpu: usize, at: Time) {
        let rq = &mut self.rqs[cpu];
        rq.irq_arrival = rq.irq_arrival.max(at);
    }

    /// The task's group clamps and class, for its effective uclamp values.
    pub(super) fn uclamp_ctx(&self, t: TaskId) -> TaskCtx {
        let task = &self.tasks[t];
        TaskCtx {
            group: (self.variant.uclamp_task_group && task.cgroup != ROOT)
                .then(|| self.cgroups.effective(task.cgroup)),
            is_rt: task.class() != Class::Fair,
        }
    }

    /// `uclamp_eff_value()` of both clamps; without CONFIG_UCLAMP_TASK, (0, 1024).
    pub fn uclamp_eff(&mut self, t: TaskId) -> (u32, u32) {
        if !self.variant.uclamp_task {
            return (0, SCHED_CAPACITY_SCALE);
        }
        let ctx = self.uclamp_ctx(t);
        let u = &mut self.tasks[t].uclamp;
        (
            eff_value(u, ClampId::Min, ctx, &self.uclamp),
            eff_value(u, ClampId::Max, ctx, &self.uclamp),
        )
    }

    /// The effective clamps as `uclamp_eff_value()` would return them now, without the side
    /// effect of the lazy RT-default variant (for reporting).
    pub fn uclamp_eff_now(&self, t: TaskId) -> (u32, u32) {
        if !self.variant.uclamp_task {
            return (0, SCHED_CAPACITY_SCALE);
        }
        let ctx = self.uclamp_ctx(t);
        let mut u = self.tasks[t].uclamp;
        (
            eff_value(&mut u, ClampId::Min, ctx, &self.uclamp),
            eff_value(&mut u, ClampId::Max, ctx, &self.uclamp),
        )
    }

    /// `cfs_rq_util_change()`: under the v6.1 call sites, a change of the root cfs_rq's
    /// PELT signals (decay, attach, detach) calls `cpufreq_update_util()`.
    pub(super) fn fair_util_change(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        if self.fair.take_util_change(cpu) && self.variant.cpufreq_update_sites == UpdateSites::V61
        {
            self.cpufreq_update_util(cpu, 0, now, q);
        }
    }

    /// `set_task_cpu()` for a task that is not queued.
    pub(super) fn set_task_cpu(&mut self, t: TaskId, dest: usize, now: Time, trace_cpu: usize) {
        let orig = self.tasks[t].cpu;
        if orig == dest {
            return;
        }
        self.emit_task(now, trace_cpu, t, |p| TraceEvent::SchedMigrateTask {
            p,
            orig_cpu: orig,
            dest_cpu: dest,
        });
        self.checks.task(t);
        self.checks.cpu(orig);
        self.checks.cpu(dest);
        let task = &mut self.tasks[t];
        task.cpu = dest;
        task.stats.migrations += 1;
        if task.class() == Class::Fair {
            task.last_ran = None;
        }
    }

    /// Move a queued, not running task to another CPU (`move_queued_task`, or a balance's
    /// `detach_task()`/`attach_task()`). `sched_migrate_task` is written where the move
    /// runs (`this_cpu`): the pulling CPU in a balance, the source in a stopper's or a push.
    pub(super) fn move_queued_task(
        &mut self,
        t: TaskId,
        dest: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let src = self.tasks[t].cpu;
        let migrating = QueueFlags {
            migrating: true,
            ..QueueFlags::default()
        };
        self.dequeue_task(t, src, migrating, now, q);
        self.set_task_cpu(t, dest, now, self.this_cpu);
        self.enqueue_task(t, dest, dest, QueueFlags::default(), false, now, q);
        self.check_preempt_curr(dest, t, false, now);
    }

    pub(super) fn resched_curr(&mut self, cpu: usize) {
        self.checks.cpu(cpu);
        self.rqs[cpu].need_resched = true;
        self.resched_mask[cpu / 64] |= 1 << (cpu % 64);
    }

    /// `check_preempt_curr()`: does the newly queued `t` preempt what `cpu` runs?
    pub(super) fn check_preempt_curr(&mut self, cpu: usize, t: TaskId, fork: bool, now: Time) {
        let Some(c) = self.rqs[cpu].curr else {
            self.resched_curr(cpu);
            return;
        };
        if c == t {
            return;
        }
        let (tc, cc) = (self.tasks[t].class(), self.tasks[c].class());
        let preempt = if tc != cc {
            tc > cc
        } else {
            match tc {
                Class::Fair => {
                    self.update_curr(cpu, now);
                    let normal = self.tasks[t].policy == Policy::Other;
                    self.fair.check_preempt_wakeup(
                        self.rqs[cpu].need_resched,
                        self.tasks[c].se,
                        self.tasks[t].se,
                        normal,
                        fork,
                        now,
                    ) == Preempt::Yes
                }
                Class::Rt => self.tasks[t].prio() < self.tasks[c].prio(),
                Class::Dl => self.tasks[t].dl.deadline < self.tasks[c].dl.deadline,
            }
        };
        if preempt {
            self.resched_curr(cpu);
        }
    }

    // ----- accounting -------------------------------------------------------------------

    /// `update_rq_clock()`: the rq's PELT clock advances by the elapsed time scaled by the
    /// CPU's capacity and, with frequency invariance, its current frequency; an idle rq's
    /// PELT clock is synced to the task clock. Inlined: a few instructions, at every
    /// enqueue, dequeue, switch and tick.
    #[inline]
    pub(super) fn update_rq_clock(&mut self, cpu: usize, now: Time) {
        let rq = &mut self.rqs[cpu];
        let cap = self.platform.cpus[cpu].capacity_orig as u64;
        rq.pelt
            .update(now, rq.curr.is_none(), cap, rq.freq_scale, true);
        self.fair.rqs[cpu].clock_pelt = rq.pelt.now();
    }

    /// `update_rt_rq_load_avg()` / `update_dl_rq_load_avg()` with `running` the class's.
    pub(super) fn update_rt_dl_load_avg(&mut self, cpu: usize, running: Option<Class>, now: Time) {
        let rq = &mut self.rqs[cpu];
        let pnow = rq.pelt.now();
        let rt = pelt::update_rt_rq(&mut rq.avg_rt, pnow, running == Some(Class::Rt));
        let dl = pelt::update_dl_rq(&mut rq.avg_dl, pnow, running == Some(Class::Dl));
        self.trace_pelt_rt_dl(cpu, rt, dl, now);
    }

    /// LISA's `sched_pelt_rt` / `sched_pelt_dl` when the rq's signal was updated
    /// (`trace_pelt_rt_tp()` / `trace_pelt_dl_tp()` in pelt.c).
    fn trace_pelt_rt_dl(&mut self, cpu: usize, rt: bool, dl: bool, now: Time) {
        let sel = self.events;
        if rt && sel.sched_pelt_rt {
            let avg = pelt_fields(&self.rqs[cpu].avg_rt);
            self.emit(now, cpu, &TraceEvent::SchedPeltRt { cpu, avg });
        }
        if dl && sel.sched_pelt_dl {
            let avg = pelt_fields(&self.rqs[cpu].avg_dl);
            self.emit(now, cpu, &TraceEvent::SchedPeltDl { cpu, avg });
        }
    }

    /// Every CPU's state at the start of the trace, so that a CPU that never runs a task
    /// still has lines: the enabled PELT signals of its runqueue (its `cpu_idle` comes
    /// from the idle loop it boots into, `do_idle()`).
    pub(super) fn trace_initial_state(&mut self, cpu: usize) {
        let sel = self.events;
        if sel.sched_pelt_cfs {
            let avg = pelt_fields(&self.fair.rqs[cpu].avg);
            self.emit(0, cpu, &TraceEvent::SchedPeltCfs { cpu, avg });
        }
        self.trace_pelt_rt_dl(cpu, true, true, 0);
    }

    /// The thread's first instructions (rt-app's `thread_body`): it names itself, from
    /// the `rt-app` it inherited from the main thread. `pthread_setname_np` fails with
    /// ERANGE for a name of 16 bytes or more, and the thread keeps `rt-app`.
    pub(super) fn thread_start(&mut self, t: TaskId, cpu: usize, now: Time) {
        if self.tasks[t].renamed {
            return;
        }
        self.tasks[t].thread = Some(Box::new(self.new_thread(t)));
        let task = &mut self.tasks[t];
        task.renamed = true;
        if task.name.len() <= COMM_MAX {
            self.emit_task(now, cpu, t, |p| TraceEvent::TaskRename {
                p,
                oldcomm: RTAPP_COMM,
            });
        }
    }

    /// Log the rt-app trace_marker lines user space wrote as `print` events at `now` on
    /// `cpu`, written by task `t` (None: rt-app's main process).
    pub(super) fn write_marks(&mut self, cpu: usize, now: Time, t: Option<TaskId>) {
        if let Some(obs) = self.observer.as_mut() {
            let writer = t.map_or(RTAPP_MAIN, |t| task_ref(&self.tasks[t]));
            self.user.marks.take(|text| {
                obs.event(now, cpu, Some(writer), &TraceEvent::Print { text });
            });
        }
    }

    /// `update_blocked_averages()`: age a CPU's signals that nothing else updates (its
    /// cfs_rq while no fair task runs, its RT/DL signals); schedutil hears of a decay.
    pub(super) fn update_blocked_averages(&mut self, cpu: usize, now: Time) {
        self.update_rq_clock(cpu, now);
        let running = self.rqs[cpu].curr.map(|t| self.tasks[t].class());
        let rq = &mut self.rqs[cpu];
        let pnow = rq.pelt.now();
        let rt = pelt::update_rt_rq(&mut rq.avg_rt, pnow, running == Some(Class::Rt));
        let dl = pelt::update_dl_rq(&mut rq.avg_dl, pnow, running == Some(Class::Dl));
        self.trace_pelt_rt_dl(cpu, rt, dl, now);
        let mut decayed = rt || dl;
        decayed |= self.fair.update_blocked(cpu);
        if decayed {
            self.fair.rqs[cpu].util_changed = true;
        }
    }

    /// Whether a CPU still has PELT signals to decay (`cfs_rq_has_blocked`, `others_have_blocked`).
    pub(super) fn has_blocked(&self, cpu: usize) -> bool {
        let a = &self.fair.rqs[cpu].avg;
        let rq = &self.rqs[cpu];
        a.load_avg != 0 || a.util_avg != 0 || rq.avg_rt.util_avg != 0 || rq.avg_dl.util_avg != 0
    }

    /// Charge the running task for the time since `exec_start` (`update_curr` of every
    /// class): runtime statistics, RT bandwidth, deadline runtime, CFS vruntime.
    pub(super) fn update_curr(&mut self, cpu: usize, now: Time) {
        let Some(t) = self.rqs[cpu].curr else { return };
        let rq = &mut self.rqs[cpu];
        let delta = now.saturating_sub(rq.exec_start);
        rq.exec_start = rq.exec_start.max(now);
        let task = &mut self.tasks[t];
        task.sum_exec_runtime += delta;
        task.stats.cpu_runtime.add(cpu, delta);
        match task.class() {
            Class::Fair => {
                self.fair.update_curr(cpu, now);
            }
            Class::Rt => {
                if self.rt_bw.charge(&mut self.rqs[cpu].rt, delta) {
                    self.resched_curr(cpu);
                }
            }
            Class::Dl => {
                if !task.dl.throttled && task.dl.charge(delta).is_some() {
                    // Throttled: off the EDF queue until the replenishment timer fires,
                    // which `schedule()` arms when it switches the task out.
                    self.rqs[cpu].dl.dequeue(t);
                    self.resched_curr(cpu);
                }
            }
        }
    }

    /// Account the running task's work progress up to `now` at the current capacity.
    pub(super) fn account_progress(&mut self, cpu: usize, now: Time) {
        let rq = &mut self.rqs[cpu];
        if now <= rq.progress_ts {
            return;
        }
        if let Some(t) = rq.curr {
            if let Activity::Work(w) = self.tasks[t].activity {
                let done = (now - rq.progress_ts) * rq.capacity_cur;
                self.tasks[t].activity = Activity::Work(w.saturating_sub(done));
            }
        }
        rq.progress_ts = now;
    }

    /// Schedule the completion of the running task's current activity. The CPU's queued
    /// completion event, if any (of this task, moved by the tick's or an interrupt's work
    /// charged to it, or of the task before), is moved to the new time with a new sequence
    /// number: events run in the order a new event per arm gives, and none is left stale.
    /// A CPU left without a task has its event taken out.
    pub(super) fn arm_work(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let rq = &mut self.rqs[cpu];
        let Some(t) = rq.curr else {
            if let Some(old) = rq.work_queued.take() {
                q.cancel(old);
            }
            return;
        };
        let mut start = rq.progress_ts.max(now);
        // The running task pays for the kernel work done on its behalf (the system call's
        // wake-ups, an interrupt), unless a switch is due at once (that switch charges it).
        if rq.kernel_work > 0 && !rq.need_resched {
            start += self.take_kernel_work(cpu);
            self.rqs[cpu].progress_ts = start;
        }
        let rq = &self.rqs[cpu];
        let done = match self.tasks[t].activity {
            Activity::Next => start,
            Activity::Work(w) => start + w.div_ceil(rq.capacity_cur.max(1)),
            Activity::Until(u) => u.max(start),
        };
        let rq = &mut self.rqs[cpu];
        let event = Event::WorkDone { cpu };
        rq.work_queued = Some(match rq.work_queued {
            Some(old) => q.requeue(old, done, event),
            None => q.schedule_in(work_slot(cpu), done, event),
        });
    }

    /// The CPU turns busy or idle: its residency, and its cluster's.
    pub(super) fn set_cpu_busy(&mut self, cpu: usize, busy: bool, now: Time) {
        let c = &self.platform.cpus[cpu];
        self.rqs[cpu].res.set_busy(now, busy);
        let d = &mut self.domains[c.freq_domain];
        if busy {
            d.busy_cpus += 1;
        } else {
            d.busy_cpus -= 1;
        }
        d.res.set_busy(now, d.busy_cpus > 0);
    }

    // ----- wakeup and placement ---------------------------------------------------------

    /// `available_idle_cpu()`.
    pub(super) fn cpu_idle(&self, cpu: usize) -> bool {
        self.rqs[cpu].is_idle()
    }

    /// `select_task_rq()` from `this_cpu`: fair tasks go through `select_task_rq_fair`, RT
    /// tasks through `select_task_rq_rt`; deadline tasks, for now, to the previous CPU if
    /// idle, else the lowest-numbered idle CPU they may use, else the previous CPU (or the
    /// first allowed one).
    pub(super) fn select_task_rq(
        &mut self,
        t: TaskId,
        prev: usize,
        this_cpu: usize,
        fork: bool,
        sync: bool,
        now: Time,
    ) -> usize {
        match self.tasks[t].class() {
            Class::Rt => return self.select_task_rq_rt(t, prev),
            Class::Fair => return self.select_task_rq_fair(t, prev, this_cpu, fork, sync, now),
            Class::Dl => {}
        }
        let allowed = *self.tasks[t].cpus_allowed;
        let n = self.platform.nr_cpus();
        if allowed.contains(prev) && self.cpu_idle(prev) {
            return prev;
        }
        if let Some(c) = (0..n).find(|&c| allowed.contains(c) && self.cpu_idle(c)) {
            return c;
        }
        if allowed.contains(prev) {
            prev
        } else {
            (0..n).find(|&c| allowed.contains(c)).unwrap_or(prev)
        }
    }

    /// `try_to_wake_up()`. `waker_cpu` is where the wakeup is issued (for the trace); `sync`
    /// is `WF_SYNC`, a waker that is about to sleep (`pipe::wake_is_sync`).
    pub(super) fn try_to_wake_up(
        &mut self,
        t: TaskId,
        waker_cpu: usize,
        sync: bool,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let st = self.tasks[t].state;
        if st != TaskState::Interruptible && st != TaskState::Uninterruptible {
            return;
        }
        let prev = self.tasks[t].cpu;
        self.emit_task(now, waker_cpu, t, |p| TraceEvent::SchedWaking {
            p,
            target_cpu: prev,
        });
        if self.tasks[t].in_iowait {
            // The I/O is done: the old CPU has one iowait sleeper fewer.
            self.account_times(prev, now);
            self.rqs[prev].nr_iowait -= 1;
            self.tasks[t].stats.io_completions += 1;
        }
        self.checks.task(t);
        let task = &mut self.tasks[t];
        task.state = TaskState::Running;
        task.wake_gen += 1;
        self.hrtimers.cancel(t);
        task.stats.wakeups += 1;
        task.stats.woken_at = Some(now);
        let scanned = self.placement_scan(t);
        self.pay(waker_cpu, machine::wakeup(&self.costs, scanned));
        let cpu = self.select_task_rq(t, prev, waker_cpu, false, sync, now);
        let migrated = cpu != prev;
        if migrated {
            if self.tasks[t].class() == Class::Fair {
                let se = self.tasks[t].se;
                self.fair.migrate_sleeping(se);
                let src_idle = self.rqs[prev].curr.is_none();
                self.fair
                    .migrate_task_pelt(se, &self.rqs[prev].pelt, src_idle, now);
            }
            self.set_task_cpu(t, cpu, now, waker_cpu);
        }
        // ttwu_queue(): through the target's wake list, with an IPI (the target then does
        // the enqueue after the IPI arrives), or by the waker.
        let wakelist = ttwu_queue_cond(
            &self.variant,
            waker_cpu,
            cpu,
            self.lb.topo.share_cache(waker_cpu, cpu),
            self.rqs[cpu].nr_running == 0,
        );
        let queue = machine::ttwu_queue(&self.costs, wakelist);
        if let Some(ipi) = queue.ipi {
            self.send_ipi(ipi, waker_cpu, cpu, now, Some(t));
        }
        let was_resched = self.rqs[cpu].need_resched;
        let enqueuer = payer_cpu(queue.enqueuer, waker_cpu, cpu);
        debug_assert_eq!(
            waker_cpu, self.this_cpu,
            "a wake-up runs on its waker's CPU"
        );
        // sched_ttwu_pending() runs on the target, in the IPI's handler.
        self.this_cpu = enqueuer;
        self.enqueue_task(
            t,
            cpu,
            enqueuer,
            QueueFlags {
                wakeup: true,
                migrated,
                migrating: false,
            },
            false,
            now,
            q,
        );
        self.this_cpu = waker_cpu;
        self.ttwu_avg_idle(cpu, now);
        // The task leaves iowait when it runs again (io_schedule_finish); the enqueue above
        // still saw it in iowait.
        self.tasks[t].in_iowait = false;
        self.check_preempt_curr(cpu, t, false, now);
        // A preemption of another CPU's task takes a reschedule IPI (`resched_curr`); the
        // wake list's IPI already carries it.
        let rq = &self.rqs[cpu];
        if !wakelist && cpu != waker_cpu && rq.need_resched && !was_resched && rq.curr.is_some() {
            self.send_ipi(machine::ipi(&self.costs), waker_cpu, cpu, now, None);
        }
        self.emit_task(now, waker_cpu, t, |p| TraceEvent::SchedWakeup {
            p,
            target_cpu: cpu,
        });
    }

    /// `from` (the waker) sends `to` (the target) `ipi` at `now`, after the kernel work it
    /// has done so far (the wake-up that asks for it): `from` pays the send, `to` takes the
    /// interrupt when it arrives (leaving idle first). With `woken`, it carries that task's
    /// wake-up, whose latency split records the delivery and the handler.
    fn send_ipi(
        &mut self,
        ipi: machine::Ipi,
        from: usize,
        to: usize,
        now: Time,
        woken: Option<TaskId>,
    ) {
        self.pay(payer_cpu(ipi.send.payer, from, to), ipi.send);
        let lead = self.rqs[from]
            .kernel_work
            .div_ceil(self.rqs[from].capacity_cur.max(1));
        self.interrupt_arrives(to, now + lead + ipi.delivery_ns);
        self.pay(payer_cpu(ipi.handler.payer, from, to), ipi.handler);
        if let Some(t) = woken {
            let handler = ipi.handler.wall_at(self.rqs[to].capacity_cur);
            let st = &mut self.tasks[t].stats;
            st.wake_ipi_ns += ipi.delivery_ns;
            st.wake_irq_ns += handler;
        }
    }

    /// The CPUs `select_task_rq` examines for `t`, for its cost ([`machine::placement_scan`]).
    fn placement_scan(&self, t: TaskId) -> u64 {
        let rt = self.tasks[t].class() != Class::Fair;
        let p = Placement {
            rt,
            nr_cpus: self.platform.nr_cpus() as u64,
            asymmetric: !rt && self.platform.is_asymmetric(),
            eas: self.lb.eas && !self.lb.overutilized,
            nr_pd: self.platform.freq_domains.len() as u64,
        };
        machine::placement_scan(p, || self.lb.topo.llc[self.tasks[t].cpu].weight() as u64)
    }

    /// The kernel work an interrupt or path charged to `cpu` delays what it runs now: the
    /// running task's work resumes after it (unless a switch is due, which charges it). A
    /// CPU that stays idle (the wake-up went elsewhere) did the work on its way back to the
    /// idle loop, delaying nothing modelled.
    fn pay_now(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let rq = &self.rqs[cpu];
        if rq.need_resched || rq.kernel_work == 0 {
            return;
        }
        if rq.curr.is_some() {
            self.account_progress(cpu, now);
            self.arm_work(cpu, now, q);
        } else if self.rqs[cpu].nr_running == 0 {
            self.rqs[cpu].kernel_work = 0;
        }
    }

    /// What `t`, switched in on `cpu`, spends refilling what it lost of its working set
    /// and its kernel state since it last ran ([`machine::cache_refill`]).
    fn cache_refill(&mut self, t: TaskId, cpu: usize) -> Charge {
        let ws = self.tasks[t].working_set;
        let llc = self.lb.topo.llc_id[cpu];
        let task = &self.tasks[t];
        // The marks are of the CPU and LLC the task last ran on: the classification reads
        // them only where those are `cpu` and its LLC.
        let touched = Touched {
            cpu_now: self.rqs[cpu].touched_bytes,
            cpu_mark: task.touched_mark,
            llc_now: self.llc_touched[llc],
            llc_mark: task.llc_mark,
        };
        let (topo, platform) = (&self.lb.topo, &self.platform);
        let resume = machine::resume(
            task.ran_on,
            cpu,
            touched,
            |c| topo.share_cache(c, cpu),
            |c| platform.node_distance(platform.cpus[c].node, platform.cpus[cpu].node),
        );
        self.touch(cpu, machine::footprint(ws));
        let task = &mut self.tasks[t];
        task.touched_mark = self.rqs[cpu].touched_bytes;
        task.llc_mark = self.llc_touched[llc];
        task.ran_on = Some(cpu);
        machine::cache_refill(&self.memory, ws, resume)
    }

    /// `bytes` were touched on `cpu`: they evict from its private cache and its LLC.
    pub(super) fn touch(&mut self, cpu: usize, bytes: u64) {
        let rq = &mut self.rqs[cpu].touched_bytes;
        *rq = rq.saturating_add(bytes);
        let llc = &mut self.llc_touched[self.lb.topo.llc_id[cpu]];
        *llc = llc.saturating_add(bytes);
    }

    // ----- schedule() -------------------------------------------------------------------

    /// `put_prev_task()` + `pick_next_task()` + `set_next_task()`, with the PELT updates of
    /// the RT/DL classes and the idle path.
    pub(super) fn pick_next_task(
        &mut self,
        cpu: usize,
        prev: Option<TaskId>,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> Option<TaskId> {
        let prev_class = prev.map(|p| self.tasks[p].class());
        match prev_class {
            Some(Class::Fair) => {
                let p = prev.expect("a class implies a task");
                if self.fair.is_current(self.tasks[p].se) {
                    self.fair.put_prev_entity(cpu, self.tasks[p].se, now);
                }
            }
            // put_prev_task_rt()/_dl(): the class ran until now.
            Some(c) => self.update_rt_dl_load_avg(cpu, Some(c), now),
            None => {}
        }
        let rq = &self.rqs[cpu];
        let next = rq.dl.pick().or_else(|| rq.rt.pick()).or_else(|| {
            self.fair
                .pick_next_entity(cpu)
                .map(|se| self.fair.ses[se].task)
        });
        match next.map(|n| (n, self.tasks[n].class())) {
            Some((n, Class::Fair)) => {
                self.fair.set_next_entity(cpu, self.tasks[n].se, now);
                if let Some(t) = self.fair.prefetch_next(cpu) {
                    self.tasks[t].prefetch();
                }
                if self.variant.cpufreq_update_sites == UpdateSites::LessAggressive {
                    self.cpufreq_update_util(cpu, 0, now, q);
                }
            }
            // set_next_task_rt()/_dl(): coming from another class, the class did not run.
            Some((_, c)) if prev_class != Some(c) => self.update_rt_dl_load_avg(cpu, None, now),
            Some(_) => {}
            None => {
                // update_idle_rq_clock_pelt() on the way to idle.
                let (cfs, rq) = (&self.fair.rqs[cpu].avg, &mut self.rqs[cpu]);
                rq.pelt
                    .update_idle(cfs.util_sum, rq.avg_rt.util_sum, rq.avg_dl.util_sum);
            }
        }
        self.fair_util_change(cpu, now, q);
        next
    }

    /// Newly-idle balance: pull the best waiting RT or deadline task this CPU may run from
    /// the busiest runqueue (as `pull_rt_task` would), else the fair class's
    /// `newidle_balance` (fair_balance.rs).
    pub(super) fn idle_balance(
        &mut self,
        cpu: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> bool {
        let n = self.platform.nr_cpus();
        // Only an overloaded root domain (some rq with two tasks) has a task to pull.
        let candidates = if self.lb.overload { 0..n } else { 0..0 };
        let busiest = candidates
            .filter(|&c| c != cpu && self.rqs[c].nr_running >= 2)
            .max_by_key(|&c| (self.rqs[c].nr_running, std::cmp::Reverse(c)));
        let pick = busiest.and_then(|src| {
            let rq = &self.rqs[src];
            let allowed =
                |t: TaskId| self.tasks[t].cpus_allowed.contains(cpu) && rq.curr != Some(t);
            rq.dl
                .waiting(rq.curr)
                .find(|&t| allowed(t))
                .or_else(|| rq.rt.waiting(rq.curr).find(|&t| allowed(t)))
        });
        match pick {
            Some(t) => {
                self.move_queued_task(t, cpu, now, q);
                true
            }
            None => self.newidle_balance(cpu, now, q),
        }
    }

    /// `__schedule()` on `cpu`.
    pub(super) fn schedule(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        self.account_progress(cpu, now);
        self.update_rq_clock(cpu, now);
        self.update_curr(cpu, now);
        self.checks.cpu(cpu);
        self.rqs[cpu].need_resched = false;
        self.resched_mask[cpu / 64] &= !(1 << (cpu % 64));
        if self.idle_exit_pending(cpu, now, q) {
            return;
        }
        self.pay(cpu, machine::schedule(&self.costs));
        let prev = self.rqs[cpu].curr;
        let mut prev_state = TaskState::Running;
        if let Some(p) = prev {
            prev_state = self.tasks[p].state;
            if prev_state != TaskState::Running {
                // deactivate_task(): the task sleeps or exits.
                if self.tasks[p].in_iowait {
                    self.account_times(cpu, now);
                    self.rqs[cpu].nr_iowait += 1;
                }
                let sleep = QueueFlags {
                    wakeup: prev_state != TaskState::Dead,
                    ..QueueFlags::default()
                };
                self.dequeue_task(p, cpu, sleep, now, q);
            } else if self.tasks[p].class() == Class::Dl && self.tasks[p].dl.throttled {
                arm_dl_timer(&self.tasks[p].dl, p, now, q);
            } else if self.tasks[p].migrate_pending {
                // The stopper moves a running task whose affinity excludes this CPU to an
                // allowed one (`cpumask_any_and_distribute()` of the new mask).
                self.tasks[p].migrate_pending = false;
                if self.tasks[p].class() == Class::Fair {
                    self.fair.put_prev_entity(cpu, self.tasks[p].se, now);
                }
                let dest = self.tasks[p].cpus_allowed.iter().next().unwrap_or(cpu);
                self.move_queued_task(p, dest, now, q);
            } else if let Some(dest) = self.take_active_balance(cpu, p) {
                // The stopper of an active balance moves the running task.
                self.fair.put_prev_entity(cpu, self.tasks[p].se, now);
                self.move_queued_task(p, dest, now, q);
            }
        }
        if let Some(p) = prev {
            self.balance_rt(cpu, p, now, q);
        }
        let mut next = self.pick_next_task(cpu, prev, now, q);
        if next.is_none() && self.idle_balance(cpu, now, q) {
            next = self.pick_next_task(cpu, None, now, q);
        }
        self.fair_post_schedule(cpu, next);
        if next != prev {
            self.context_switch(cpu, prev, prev_state, next, now);
            if next.is_none() {
                self.do_idle(cpu, now, q);
                self.arm_nohz_stats(cpu, now, q);
            }
        } else if next.is_none() {
            // Woken for nothing: the work done on the way ends with it.
            self.rqs[cpu].kernel_work = 0;
            self.idle_exit_abort(cpu, now, q);
        }
        if self.rqs[cpu].rt.nr_running >= 2 {
            self.push_rt_tasks(cpu, now, q);
        }
        self.arm_work(cpu, now, q);
        self.update_tick(cpu, now, q);
    }

    pub(super) fn context_switch(
        &mut self,
        cpu: usize,
        prev: Option<TaskId>,
        prev_state: TaskState,
        next: Option<TaskId>,
        now: Time,
    ) {
        self.account_times(cpu, now);
        // Out of idle: the exit latency `schedule()` waited for (`idle_exit_pending`).
        let idle_exit = if prev.is_none() {
            self.cpuidle_exit(cpu, now)
        } else {
            0
        };
        if prev.is_none() != next.is_none() {
            self.set_cpu_busy(cpu, next.is_some(), now);
        }
        if let Some(p) = prev {
            if prev_state == TaskState::Running {
                self.tasks[p].stats.preemptions += 1;
            }
        }
        if let Some(obs) = self.observer.as_mut() {
            let pr = prev.map_or(IDLE_REF, |p| task_ref(&self.tasks[p]));
            let nx = next.map_or(IDLE_REF, |n| task_ref(&self.tasks[n]));
            let ev = TraceEvent::SchedSwitch {
                prev: pr,
                prev_state: prev_state.letter(),
                next: nx,
                cpu,
            };
            obs.event(now, cpu, prev.map(|_| pr), &ev);
        }
        if let Some(p) = prev {
            self.tasks[p].last_ran = Some(now);
            if prev_state == TaskState::Running {
                self.tasks[p].stats.preempted_at = Some(now);
            }
        }
        // The switch charges the kernel work done on this CPU meanwhile (prev's dequeue,
        // this schedule(), an interrupt's handler and try_to_wake_up among it) before next's
        // own code runs, no earlier than the interrupt that woke this CPU arrived, and with
        // next's cache refill. Going idle, the work ends with the CPU's last task (the idle
        // loop's own time is not modelled).
        let (start, progress) = match next {
            Some(n) => {
                let mm = self.tasks[n].mm;
                let levels = self.queue_levels(n);
                let switch =
                    machine::context_switch(&self.costs, mm != self.rqs[cpu].last_mm, levels);
                self.pay(cpu, switch);
                let refill = self.cache_refill(n, cpu);
                self.pay(cpu, refill);
                let work = self.take_kernel_work(cpu);
                let rq = &mut self.rqs[cpu];
                rq.last_mm = mm;
                let start = now.max(rq.irq_arrival);
                (start, start + work)
            }
            None => {
                self.take_kernel_work(cpu);
                (now, now)
            }
        };
        let rq = &mut self.rqs[cpu];
        rq.curr = next;
        rq.exec_start = now;
        rq.progress_ts = progress;
        if let Some(n) = next {
            let st = &mut self.tasks[n].stats;
            if st.woken_at.is_some() {
                st.wake_idle_exit_ns = idle_exit;
            }
            record_latency(st, start, progress);
        }
        if let Some(p) = prev {
            if self.tasks[p].state == TaskState::Dead {
                if self.tasks[p].class() == Class::Fair {
                    self.fair.task_dead(self.tasks[p].se);
                }
                self.fair.free_se(self.tasks[p].se);
                if self.tasks[p].forked {
                    self.reap_forked(p);
                }
            }
        }
    }

    /// Start the tick when a CPU gets busy, stop it when it goes idle (NO_HZ_IDLE). Ticks
    /// stay on the global jiffy grid.
    pub(super) fn update_tick(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let rq = &mut self.rqs[cpu];
        match (rq.curr.is_some(), rq.tick_on) {
            (true, false) => {
                rq.tick_on = true;
                let tick = self.variant.tick_ns();
                self.queue_tick(cpu, (now / tick + 1) * tick, Event::Tick { cpu }, q);
            }
            // The idle loop has stopped its event or made it the kept idle tick.
            (false, true) => rq.tick_on = false,
            _ => {}
        }
    }

    /// Queue `event`, `cpu`'s tick or its idle tick, at `at`: the CPU's queued tick event of
    /// either kind, if any (a stopped tick's, a superseded idle tick's), is moved there
    /// with a new sequence number, so it sorts as a new event would and none is left stale.
    pub(super) fn queue_tick(
        &mut self,
        cpu: usize,
        at: Time,
        event: Event,
        q: &mut EventQueue<Event>,
    ) {
        let rq = &mut self.rqs[cpu];
        rq.tick_queued = Some(match rq.tick_queued {
            Some(old) => q.requeue(old, at, event),
            None => q.schedule_in(tick_slot(cpu), at, event),
        });
    }

    /// `tick_nohz_idle_stop_tick()`: idle `cpu`'s tick stops, its hrtimer cancelled: the
    /// queued tick event of either kind is taken out.
    pub(super) fn cancel_tick(&mut self, cpu: usize, q: &mut EventQueue<Event>) {
        if let Some(old) = self.rqs[cpu].tick_queued.take() {
            q.cancel(old);
        }
    }

    /// The rest of `__hrtimer_run_queues()` in an hrtimer interrupt on `cpu` whose handlers
    /// so far took `handled` work: the sleep timers whose soft expiry has passed wake their
    /// tasks before their hard expiry, in hard-expiry order (a task's timer slack lets an
    /// earlier interrupt take its wake-up). The test is inlined at every tick and timer
    /// interrupt, most of which find no such timer; the expiries are not.
    #[inline]
    fn expire_soft_timers(
        &mut self,
        cpu: usize,
        handled: Charge,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        if self.hrtimers.soft_expired(cpu, now).is_some() {
            self.expire_soft_timers_now(cpu, handled, now, q);
        }
    }

    #[inline(never)]
    fn expire_soft_timers_now(
        &mut self,
        cpu: usize,
        mut handled: Charge,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let expiry = machine::hrtimer_expiry(&self.costs);
        while let Some(t) = self.hrtimers.soft_expired(cpu, now) {
            self.pay(cpu, expiry);
            handled.work_ns += expiry.work_ns;
            self.tasks[t].stats.wake_irq_ns = handled.wall_at(self.rqs[cpu].capacity_cur);
            // `__run_hrtimer()` takes the timer off the base before its callback wakes the
            // sleeper.
            self.hrtimers.cancel(t);
            self.try_to_wake_up(t, cpu, false, now, q);
        }
    }

    /// `scheduler_tick()`, with the periodic `update_blocked_averages` of the load-balance
    /// softirq.
    pub(super) fn scheduler_tick(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        self.account_progress(cpu, now);
        self.update_rq_clock(cpu, now);
        self.update_curr(cpu, now);
        let Some(t) = self.rqs[cpu].curr else { return };
        // The tick interrupt runs in front of the task.
        self.pay(cpu, machine::tick(&self.costs));
        match self.tasks[t].class() {
            Class::Fair => {
                if self.fair.task_tick(cpu, now) == Preempt::Yes {
                    self.resched_curr(cpu);
                }
                self.update_misfit_status(cpu, Some(t));
                self.update_overutilized_status(cpu, now);
                self.trace_pelt(cpu, t, false, now);
                if self.variant.cpufreq_update_sites == UpdateSites::LessAggressive {
                    self.fair.take_util_change(cpu);
                    self.cpufreq_update_util(cpu, 0, now, q);
                } else {
                    self.fair_util_change(cpu, now, q);
                }
            }
            Class::Rt => {
                self.update_rt_dl_load_avg(cpu, Some(Class::Rt), now);
                self.task_tick_rt(t, cpu);
            }
            Class::Dl => self.update_rt_dl_load_avg(cpu, Some(Class::Dl), now),
        }
        if now >= self.rqs[cpu].next_blocked {
            self.rqs[cpu].next_blocked = now + BLOCKED_UPDATE_PERIOD_NS;
            self.update_blocked_averages(cpu, now);
            self.fair_util_kick(cpu, now, q);
        }
        self.trigger_load_balance(cpu, now, q);
    }

    /// `task_tick_rt()`: only SCHED_RR has a slice, and it rotates only among peers.
    pub(super) fn task_tick_rt(&mut self, t: TaskId, cpu: usize) {
        let slice = self.rr_timeslice_ticks();
        let task = &mut self.tasks[t];
        if task.policy != Policy::Rr {
            return;
        }
        task.rr_ticks -= 1;
        if task.rr_ticks > 0 {
            return;
        }
        task.rr_ticks = slice;
        let prio = self.tasks[t].prio() as usize;
        if self.rqs[cpu].rt.has_peers(prio) {
            self.rqs[cpu].rt.requeue_tail(t, prio);
            self.resched_curr(cpu);
        }
    }

    /// `update_blocked_averages()` ends in `cpufreq_update_util()` when a signal decayed,
    /// under either call-site variant (it does not go through `cfs_rq_util_change`).
    pub(super) fn fair_util_kick(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        if self.fair.take_util_change(cpu) {
            self.cpufreq_update_util(cpu, 0, now, q);
        }
    }

    /// The nohz idle balancer's blocked-load update (`NOHZ_STATS_KICK`): every
    /// `LOAD_AVG_PERIOD` ms while some idle CPU still has PELT signals to decay.
    pub(super) fn nohz_stats(&mut self, now: Time, q: &mut EventQueue<Event>) {
        // The kicked idle CPU (find_new_ilb()) updates every idle CPU's rq, its own included:
        // on the others' policies its hook counts only if the driver allows any CPU.
        if let Some(ilb) = self.find_new_ilb(None) {
            self.this_cpu = ilb;
        }
        let mut pending = false;
        for cpu in 0..self.rqs.len() {
            if self.rqs[cpu].curr.is_none() && self.has_blocked(cpu) {
                self.update_blocked_averages(cpu, now);
                self.fair_util_kick(cpu, now, q);
                pending |= self.has_blocked(cpu);
            }
        }
        self.nohz_stats_armed = pending;
        if pending {
            q.schedule(now + BLOCKED_UPDATE_PERIOD_NS, Event::NohzStats);
        }
    }

    /// A CPU went idle: make sure its blocked signals will decay.
    pub(super) fn arm_nohz_stats(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        if !self.nohz_stats_armed && self.has_blocked(cpu) {
            self.nohz_stats_armed = true;
            q.schedule(now + BLOCKED_UPDATE_PERIOD_NS, Event::NohzStats);
        }
    }

    // ----- timers -----------------------------------------------------------------------

    /// `sched_rt_period_timer()`: replenish every CPU's RT runtime.
    pub(super) fn rt_period(&mut self, now: Time, q: &mut EventQueue<Event>) {
        let mut active = false;
        for cpu in 0..self.rqs.len() {
            if self.rt_bw.replenish(&mut self.rqs[cpu].rt) {
                if let Some(t) = self.rqs[cpu].rt.pick() {
                    self.check_preempt_curr(cpu, t, false, now);
                }
            }
            active |= self.rqs[cpu].rt.rt_time > 0 || self.rqs[cpu].rt.nr_running > 0;
        }
        self.rt_period_armed = active;
        if active {
            q.schedule(now + self.rt_bw.period, Event::RtPeriod);
        }
    }

    pub(super) fn dl_replenish(&mut self, t: TaskId, now: Time) {
        let task = &mut self.tasks[t];
        if !task.dl.throttled {
            return;
        }
        task.dl.replenish(now);
        if task.on_rq {
            let cpu = task.cpu;
            self.rqs[cpu].dl.enqueue(t, task.dl.deadline);
            self.check_preempt_curr(cpu, t, false, now);
        }
    }

    /// Run `schedule()` wherever a reschedule is pending, until none is.
    pub(super) fn resched_pending(&mut self, now: Time, q: &mut EventQueue<Event>) {
        // Lowest CPU first, as a scan of the runqueues would take them: a schedule() may
        // set need_resched on any CPU, so the mask is searched again after each.
        while let Some(cpu) = self
            .resched_mask
            .iter()
            .position(|&w| w != 0)
            .map(|i| i * 64 + self.resched_mask[i].trailing_zeros() as usize)
        {
            // A remote CPU's reschedule is its own schedule(), after the IPI.
            self.this_cpu = cpu;
            self.schedule(cpu, now, q);
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
    }

    /// Close the books at the end of the run: charge running tasks and residencies to `now`.
    pub fn finish(&mut self, now: Time) {
        // rt-app's main: when the run stops with threads left it is rt-app's `duration`
        // ending them (shutdown), else it has joined them all; then its end.
        if self
            .tasks
            .iter()
            .any(|t| !t.thread.as_ref().is_some_and(|th| th.is_done()))
        {
            self.user.marks.main("shutdown");
        }
        self.user.marks.main("end");
        self.write_marks(0, now, None);
        for cpu in 0..self.rqs.len() {
            self.account_progress(cpu, now);
            self.update_curr(cpu, now);
            self.rqs[cpu].res.finish(now);
        }
        for dom in &mut self.domains {
            dom.res.finish(now);
        }
    }
}

impl Kernel {
    /// The CPU `event` happens on, `smp_processor_id()` as its handler starts.
    fn event_cpu(&self, event: &Event) -> usize {
        match *event {
            Event::Tick { cpu, .. } | Event::WorkDone { cpu, .. } | Event::IdleTick { cpu, .. } => {
                cpu
            }
            Event::IdleExit { cpu, .. } => cpu as usize,
            // The sleep's hrtimer (or the I/O's interrupt) fires on the CPU the task slept on;
            // the deadline timer on the CPU the task ran out on.
            Event::Wake { task, .. } | Event::DlReplenish { task, .. } => {
                self.tasks[task as usize].cpu
            }
            // rt-app's main process (its trace lines are on CPU 0) creates the initial threads;
            // a timed write's writer is not simulated and is taken to run there too. The RT
            // period timer and the cpufreq work call no hook; the nohz idle balancer picks its
            // CPU when it runs (`nohz_stats`).
            Event::NohzStats
            | Event::Spawn { .. }
            | Event::AdminWrite { .. }
            | Event::RtPeriod
            | Event::CpufreqWork { .. } => 0,
        }
    }
}

impl Model for Kernel {
    type Event = Event;

    fn ended(&self) -> bool {
        self.workload_ended()
    }

    fn handle(&mut self, now: Time, event: Event, q: &mut EventQueue<Event>) -> bool {
        self.this_cpu = self.event_cpu(&event);
        match event {
            Event::Spawn { task } => self.wake_up_new_task(task, None, now, q),
            Event::Tick { cpu } => {
                self.rqs[cpu].tick_queued = None;
                debug_assert!(self.rqs[cpu].tick_on, "cpu {cpu}: a tick while stopped");
                self.scheduler_tick(cpu, now, q);
                // The tick is an hrtimer: its interrupt expires the timers whose range began.
                self.expire_soft_timers(cpu, machine::tick(&self.costs), now, q);
                self.pay_now(cpu, now, q);
                self.queue_tick(cpu, now + self.variant.tick_ns(), Event::Tick { cpu }, q);
            }
            Event::WorkDone { cpu } => {
                self.rqs[cpu].work_queued = None;
                self.account_progress(cpu, now);
                if let Some(t) = self.rqs[cpu].curr {
                    let finished = match self.tasks[t].activity {
                        Activity::Next => true,
                        Activity::Work(w) => w == 0,
                        Activity::Until(u) => u <= now,
                    };
                    if finished {
                        self.run_thread(t, cpu, now, q);
                    } else {
                        self.arm_work(cpu, now, q);
                    }
                }
            }
            Event::Wake { task, gen } => {
                let task = task as usize;
                if gen != self.tasks[task].wake_gen {
                    return false;
                }
                // The hrtimer of a sleep (or the device's completion interrupt) fires on
                // the CPU the task slept on, which leaves idle for it and runs the wake-up.
                let cpu = self.tasks[task].cpu;
                self.interrupt_arrives(cpu, now);
                let timer = !self.tasks[task].in_iowait;
                let irq = machine::timer_interrupt(&self.costs, timer);
                self.pay(cpu, irq);
                self.tasks[task].stats.wake_irq_ns = irq.wall_at(self.rqs[cpu].capacity_cur);
                self.try_to_wake_up(task, cpu, false, now, q);
                if timer {
                    self.expire_soft_timers(cpu, irq, now, q);
                }
                self.pay_now(cpu, now, q);
                // The timer's interrupt woke `cpu`; if the sleeper went elsewhere, it idles on.
                self.cpuidle_wakeup(cpu, false, now, q);
            }
            Event::RtPeriod => self.rt_period(now, q),
            Event::CpufreqWork { policy } => self.cpufreq_work(policy, now, q),
            Event::NohzStats => self.nohz_stats(now, q),
            Event::AdminWrite { index } => self.admin_write(index, now, q),
            Event::DlReplenish { task, deadline } => {
                let task = task as usize;
                if self.tasks[task].dl.deadline != deadline {
                    return false;
                }
                self.dl_replenish(task, now);
            }
            Event::IdleTick { cpu } => self.cpuidle_tick(cpu, now, q),
            Event::IdleExit { cpu, until } => {
                let cpu = cpu as usize;
                if !self.idle_exit_done(cpu, until) {
                    return false;
                }
            }
        }
        self.resched_pending(now, q);
        true
    }
}

/// v6.1 `ttwu_queue_cond()` (with `TTWU_QUEUE`): whether a wake-up by `waker` onto `target`
/// goes through the target's wake list (an IPI; the target does the enqueue) rather than
/// the waker enqueueing: when the CPUs share no LLC (`share_llc`), or the target is idle
/// (`target_idle`: nothing queued) where the variant has v6.0's idle-target rule.
pub fn ttwu_queue_cond(
    variant: &Variant,
    waker: usize,
    target: usize,
    share_llc: bool,
    target_idle: bool,
) -> bool {
    variant.features.ttwu_queue
        && target != waker
        && (!share_llc || (variant.wakelist_idle_target && target_idle))
}

/// The CPU that pays a wake-up's `payer`, woken by `waker` onto `target`.
#[inline]
fn payer_cpu(payer: Payer, waker: usize, target: usize) -> usize {
    match payer {
        Payer::Waker => waker,
        Payer::Target => target,
        Payer::Running | Payer::Deferred => {
            unreachable!("a wake-up's charges are the waker's or the target's")
        }
    }
}

/// A task switched in at `now` runs its own code from `progress`, after the kernel work
/// that started at `start` (the switch, or the arrival of the interrupt it waited for): its
/// pending wake-up's latency and where it went, or the end of its wait after a preemption.
///
/// The split is attributed in order, so that its parts sum to the latency: the idle exit,
/// then the interrupt (an IPI's delivery and the handlers), then the wake-up path (the work
/// the switch charged after `start`), and what is left is time spent waiting on the runqueue.
fn record_latency(st: &mut TaskStats, start: Time, progress: Time) {
    if let Some(w) = st.woken_at.take() {
        let total = progress - w;
        st.wakeup_latency.record(total);
        let idle_exit = st.wake_idle_exit_ns.min(total);
        let irq = (st.wake_ipi_ns + st.wake_irq_ns).min(total - idle_exit);
        let path = (progress - start)
            .saturating_sub(st.wake_irq_ns)
            .min(total - idle_exit - irq);
        let split = &mut st.latency_split;
        split.idle_exit_ns += idle_exit;
        split.irq_ns += irq;
        split.wakeup_path_ns += path;
        split.runqueue_ns += total - idle_exit - irq - path;
    }
    if let Some(p) = st.preempted_at.take() {
        st.latency_split.preempted_ns += progress - p;
    }
    st.wake_idle_exit_ns = 0;
    st.wake_ipi_ns = 0;
    st.wake_irq_ns = 0;
}

pub(super) fn task_ref(t: &Task) -> TaskRef<'_> {
    TaskRef {
        comm: t.comm(),
        pid: t.pid,
        prio: t.prio(),
    }
}

/// A PELT signal as LISA's `sched_pelt_*` events print it.
fn pelt_fields(a: &SchedAvg) -> PeltFields {
    PeltFields {
        load: a.load_avg,
        runnable: a.runnable_avg,
        util: a.util_avg,
        update_time: a.last_update_time,
    }
}

/// rt-app's `priority` is a nice value for fair policies and an rt_priority for RT ones.
pub(super) fn split_priority(p: SchedParams) -> (i32, u32) {
    if p.policy.is_rt() {
        (0, p.priority.clamp(1, 99) as u32)
    } else if p.policy.is_fair() {
        (p.priority.clamp(-20, 19), 0)
    } else {
        (0, 0)
    }
}

/// The event-queue slot of `cpu`'s completion event, and of its tick event.
fn work_slot(cpu: usize) -> usize {
    2 * cpu
}

fn tick_slot(cpu: usize) -> usize {
    2 * cpu + 1
}

/// `start_dl_timer()`: replenish at the start of the next period.
fn arm_dl_timer(dl: &DlEntity, t: TaskId, now: Time, q: &mut EventQueue<Event>) {
    let at = dl.deadline - dl.dl_deadline + dl.dl_period;
    q.schedule(
        at.max(now),
        Event::DlReplenish {
            task: t as u32,
            deadline: dl.deadline,
        },
    );
}

pub(super) fn dl_entity(p: SchedParams) -> DlEntity {
    let period = if p.dl_period_ns > 0 {
        p.dl_period_ns
    } else {
        p.dl_runtime_ns
    };
    let deadline = if p.dl_deadline_ns > 0 {
        p.dl_deadline_ns
    } else {
        period
    };
    DlEntity::new(p.dl_runtime_ns, deadline, period)
}

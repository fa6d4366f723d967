//! `task_struct` and `struct rq` (kernel/sched/sched.h): the per-task and per-CPU state the
//! classes share.

use super::cpuidle::Residency;
use super::deadline::{DlEntity, DlRq};
use super::fair::SeId;
use super::pelt::{PeltClock, SchedAvg};
use super::rt::RtRq;
use super::sched_cpufreq::CpuTimesAcc;
use super::uclamp::{RqUclamp, TaskUclamp};
use crate::platform::{Platform, SCHED_CAPACITY_SCALE};
use crate::workload::{CpuSet, Policy, Thread};
use schedlab_base::sim::Pending;
use schedlab_base::LatencyHistogram;
use std::fmt;
use std::sync::Arc;

/// `TASK_COMM_LEN` less its NUL: the bytes of a name `comm` keeps.
pub const COMM_MAX: usize = 15;

pub type TaskId = usize;

/// `p->__state` as the scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// TASK_NEW: created, not yet woken by `wake_up_new_task`.
    New,
    /// TASK_RUNNING: on a runqueue (running or waiting to).
    Running,
    /// TASK_INTERRUPTIBLE sleep ("S").
    Interruptible,
    /// TASK_UNINTERRUPTIBLE sleep ("D"), e.g. blocking I/O.
    Uninterruptible,
    /// Exited ("X").
    Dead,
}

impl TaskState {
    /// The `prev_state` letter of `sched_switch`.
    pub fn letter(self) -> &'static str {
        match self {
            TaskState::Running | TaskState::New => "R",
            TaskState::Interruptible => "S",
            TaskState::Uninterruptible => "D",
            TaskState::Dead => "X",
        }
    }
}

/// Scheduling classes in pick order (`for_each_class`): higher rank preempts lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Fair = 1,
    Rt = 2,
    Dl = 3,
}

impl Class {
    pub fn of(policy: Policy) -> Class {
        match policy {
            Policy::Deadline => Class::Dl,
            Policy::Fifo | Policy::Rr => Class::Rt,
            Policy::Other | Policy::Batch | Policy::Idle => Class::Fair,
        }
    }
}

/// What the task's user space is doing on the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Nothing in flight: the thread is asked for its next request when it runs.
    Next,
    /// Burning an amount of work (capacity·ns) still to do.
    Work(u64),
    /// Burning CPU until this wall-clock time.
    Until(u64),
}

/// A task's runtime per CPU (ns): the CPU it runs on inline, so that `update_curr` touches
/// no memory beyond the task; the CPUs it ran on before as sorted (cpu, ns) pairs, updated
/// when it runs elsewhere (a task's CPUs are a few of the machine's, not NR_CPUS counters).
#[derive(Debug, Default)]
pub struct CpuRuntime {
    cpu: usize,
    ns: u64,
    earlier: Vec<(usize, u64)>,
}

impl CpuRuntime {
    pub fn add(&mut self, cpu: usize, ns: u64) {
        if cpu != self.cpu {
            self.fold();
            self.cpu = cpu;
        }
        self.ns += ns;
    }

    /// Moves the current CPU's count into `earlier`.
    fn fold(&mut self) {
        if self.ns == 0 {
            return;
        }
        match self.earlier.binary_search_by_key(&self.cpu, |&(c, _)| c) {
            Ok(i) => self.earlier[i].1 += self.ns,
            Err(i) => self.earlier.insert(i, (self.cpu, self.ns)),
        }
        self.ns = 0;
    }

    /// (cpu, ns) of each CPU the task ran on, by CPU.
    pub fn per_cpu(&self) -> Vec<(usize, u64)> {
        let mut all = self.earlier.clone();
        if self.ns > 0 {
            match all.binary_search_by_key(&self.cpu, |&(c, _)| c) {
                Ok(i) => all[i].1 += self.ns,
                Err(i) => all.insert(i, (self.cpu, self.ns)),
            }
        }
        all
    }
}

/// A task's counters, made when first written: a thread that has not run yet has none
/// to keep (most of the threads of a large workload, at its start), and reads as zeros.
#[derive(Default)]
pub struct LazyStats(Option<Box<TaskStats>>);

/// What a task that has written no counter reads (`TaskStats::default()`).
static NO_STATS: TaskStats = TaskStats {
    wakeups: 0,
    preemptions: 0,
    migrations: 0,
    io_completions: 0,
    forks: 0,
    cpu_runtime: CpuRuntime {
        cpu: 0,
        ns: 0,
        earlier: Vec::new(),
    },
    woken_at: None,
    wake_idle_exit_ns: 0,
    wake_ipi_ns: 0,
    wake_irq_ns: 0,
    preempted_at: None,
    wakeup_latency: LatencyHistogram::EMPTY,
    latency_split: LatencySplit {
        idle_exit_ns: 0,
        irq_ns: 0,
        wakeup_path_ns: 0,
        runqueue_ns: 0,
        preempted_ns: 0,
    },
};

impl std::ops::Deref for LazyStats {
    type Target = TaskStats;

    fn deref(&self) -> &TaskStats {
        self.0.as_deref().unwrap_or(&NO_STATS)
    }
}

impl std::ops::DerefMut for LazyStats {
    fn deref_mut(&mut self) -> &mut TaskStats {
        self.0.get_or_insert_with(Box::default)
    }
}

/// Per-task counters for the results.
#[derive(Debug, Default)]
pub struct TaskStats {
    pub wakeups: u64,
    /// Involuntary switches out (the task was still runnable).
    pub preemptions: u64,
    pub migrations: u64,
    /// Blocking I/Os completed.
    pub io_completions: u64,
    /// Threads this task forked.
    pub forks: u64,
    /// Runtime per CPU, ns.
    pub cpu_runtime: CpuRuntime,
    /// When the last wakeup happened, until the task is switched in.
    pub woken_at: Option<u64>,
    /// Of the pending wakeup, wall ns: the idle exit it waited for, an IPI's delivery, and
    /// the interrupt handlers (timer and hrtimer, or the IPI's) that ran before it.
    pub wake_idle_exit_ns: u64,
    pub wake_ipi_ns: u64,
    pub wake_irq_ns: u64,
    /// When the task was preempted (switched out still runnable), until it runs again.
    pub preempted_at: Option<u64>,
    /// From a wakeup to the task running its own code again.
    pub wakeup_latency: LatencyHistogram,
    pub latency_split: LatencySplit,
}

/// Where a task's wake-up latency went (sums over its wakeups, ns), as `perf sched
/// latency` and runqlat users read it, and the time it waited after being preempted.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct LatencySplit {
    /// The CPU leaving its idle state.
    pub idle_exit_ns: u64,
    /// The interrupt that carried the wake-up: a timer interrupt and the hrtimer expiry,
    /// or an IPI (its delivery and the target's interrupt entry).
    pub irq_ns: u64,
    /// `try_to_wake_up` after the interrupt, `schedule()`, the context switch, and the
    /// cache refill before the task's own code runs.
    pub wakeup_path_ns: u64,
    /// Waiting on the runqueue while other tasks ran.
    pub runqueue_ns: u64,
    /// Runnable after being preempted, until running again (not part of wake-up latency).
    pub preempted_ns: u64,
}

impl LatencySplit {
    pub fn add(&mut self, o: &LatencySplit) {
        self.idle_exit_ns += o.idle_exit_ns;
        self.irq_ns += o.irq_ns;
        self.wakeup_path_ns += o.wakeup_path_ns;
        self.runqueue_ns += o.runqueue_ns;
        self.preempted_ns += o.preempted_ns;
    }
}

/// Summed counters of threads (exited forked threads of one workload task).
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct ThreadCounts {
    pub threads: u64,
    pub runtime_ns: u64,
    pub wakeups: u64,
    pub preemptions: u64,
    pub migrations: u64,
    pub io_completions: u64,
    pub forks: u64,
}

/// The totals of a workload task's forked threads that have exited (their slots are reused).
#[derive(Debug, Default)]
pub struct ExitedForks {
    pub counts: ThreadCounts,
    pub wakeup_latency: LatencyHistogram,
    pub latency_split: LatencySplit,
}

/// `struct task_struct`, reduced to what the scheduler models.
pub struct Task {
    pub pid: u32,
    /// The full thread name (as rt-app names it); `comm()` is its first 15 characters.
    pub name: String,
    /// The thread has named itself (rt-app's `pthread_setname_np` at its start: the
    /// trace's `task_rename` from `rt-app`).
    pub renamed: bool,
    /// Index of the workload task this thread runs, and the thread's rt-app index.
    pub spec: usize,
    pub index: u32,
    /// Created by a fork of another thread (not at start).
    pub forked: bool,
    pub state: TaskState,
    pub on_rq: bool,
    pub cpu: usize,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    /// Shared, as a mask is NR_CPUS bits, more than the rest of a task: every task allowed
    /// on all CPUs holds the kernel's one mask of them, a fork its parent's, and a
    /// `sched_setaffinity` the kernel's copy of an equal mask (`Kernel::shared_mask`).
    pub cpus_allowed: Arc<CpuSet>,
    pub se: SeId,
    pub dl: DlEntity,
    /// SCHED_RR ticks left in the slice.
    pub rr_ticks: u64,
    pub in_iowait: bool,
    /// Total CPU time, all classes (`se.sum_exec_runtime` in the kernel).
    pub sum_exec_runtime: u64,
    /// The thread's user-space state, made when it first runs (`Kernel::thread_start`):
    /// until then a thread costs its kernel state alone, as a million created threads
    /// that have not run yet must stay cheap.
    pub thread: Option<Box<Thread>>,
    pub activity: Activity,
    /// Generation of the pending sleep-end event; bumped to cancel it.
    pub wake_gen: u64,
    /// `timer_slack_ns`: how late a timed sleep may end (`prctl(PR_SET_TIMERSLACK)`;
    /// inherited at fork; ignored while the task is RT or deadline).
    pub timer_slack_ns: u64,
    /// A running task whose affinity no longer allows its CPU moves at the next switch
    /// (the stopper's `migration_cpu_stop`).
    pub migrate_pending: bool,
    /// The task's cgroup (index into `Kernel::cgroups`).
    pub cgroup: usize,
    /// uclamp requests and effective values.
    pub uclamp: TaskUclamp,
    /// `latency_nice` (seed 002; the kernel keeps `latency_prio` = this + 20).
    pub latency_nice: i32,
    /// `sched_reset_on_fork`.
    pub sched_reset_on_fork: bool,
    /// sched_setattr calls (rt-app's util_min/util_max) that failed, and the last errno.
    pub setattr_errors: u64,
    pub last_setattr_errno: Option<&'static str>,
    /// The address space (`mm`): the workload's process, or one of the task's own.
    pub mm: u32,
    /// Bytes the task touches between switches (its working set), and where it last ran
    /// with the values of that CPU's `touched_bytes` and its LLC's then, for cache refills.
    pub working_set: u64,
    pub ran_on: Option<usize>,
    pub touched_mark: u64,
    pub llc_mark: u64,
    /// When the task last ran (`se.exec_start` as `task_hot()` reads it on a queued task);
    /// None before its first run and after a migration of a fair task, which zeroes
    /// `exec_start` (`migrate_task_rq_fair()`: "no longer consider this task hot").
    pub last_ran: Option<u64>,
    /// A channel write (channel, bytes) the task was woken to try again (a pipe writer's
    /// spurious wake-up): its next request, before its thread's own.
    pub retry_send: Option<(usize, u64)>,
    pub stats: LazyStats,
}

impl Task {
    /// Ask the host's caches for the fields that picking and running the task read, one
    /// pick ahead ([`schedlab_base::sim::prefetch`]): they lie apart in the struct, which the
    /// thread's state and two CPU masks make a few kilobytes long.
    pub fn prefetch(&self) {
        use schedlab_base::sim::prefetch;
        prefetch(&self.policy);
        prefetch(&self.se);
        prefetch(&self.state);
        prefetch(&self.ran_on);
        prefetch(&self.touched_mark);
        prefetch(&self.last_ran);
        prefetch(&self.sum_exec_runtime);
        prefetch(&self.cpus_allowed);
        prefetch(&self.uclamp);
        prefetch(&self.activity);
        prefetch(&self.stats.cpu_runtime);
        prefetch(&self.stats.preempted_at);
        prefetch(&self.stats.latency_split);
        if let Some(thread) = &self.thread {
            thread.prefetch();
        }
    }

    /// `comm`: the name's first 15 characters (`TASK_COMM_LEN` less the NUL).
    pub fn comm(&self) -> &str {
        let end = self
            .name
            .char_indices()
            .nth(COMM_MAX)
            .map_or(self.name.len(), |(i, _)| i);
        &self.name[..end]
    }

    /// The thread's activations and deadline misses (none before it first ran).
    pub fn thread_counts(&self) -> (u64, u64) {
        self.thread
            .as_ref()
            .map_or((0, 0), |th| (th.activations(), th.deadline_misses()))
    }

    pub fn class(&self) -> Class {
        Class::of(self.policy)
    }

    /// `p->prio`: 0..99 for RT (99 - rt_priority), 120 + nice for fair, -1 for deadline.
    pub fn prio(&self) -> i32 {
        match self.class() {
            Class::Dl => -1,
            Class::Rt => 99 - self.rt_priority as i32,
            Class::Fair => 120 + self.nice,
        }
    }
}

/// `struct rq`: one per CPU.
pub struct Rq {
    pub curr: Option<TaskId>,
    /// Tasks queued on this CPU, all classes, the running one included.
    pub nr_running: u32,
    pub rt: RtRq,
    pub dl: DlRq,
    pub need_resched: bool,
    /// Whether the tick runs (a busy CPU; NO_HZ idle stops it).
    pub tick_on: bool,
    /// This CPU's queued tick event, a `Tick` or an `IdleTick`: the next tick of either
    /// kind moves it, a stopped tick takes it out (`Kernel::queue_tick`).
    pub tick_queued: Option<Pending>,
    /// This CPU's queued completion event: the next arm moves it (`Kernel::arm_work`).
    pub work_queued: Option<Pending>,
    /// From when the running task's work progresses (after the context-switch cost); work
    /// before this instant has been accounted.
    pub progress_ts: u64,
    /// Kernel work (capacity·ns, the paths of `platform/costs.rs`) this CPU did or has to do
    /// on behalf of what it runs now or next and has not yet charged to it.
    pub kernel_work: u64,
    /// The latest interrupt (a timer, an IPI on its way) to reach this CPU: what it brings
    /// runs no earlier, and an idle CPU starts leaving its idle state then.
    pub irq_arrival: u64,
    /// The address space the CPU last ran in (the idle task borrows it: lazy TLB).
    pub last_mm: u32,
    /// Bytes touched here so far (what evicted whom): the working sets and kernel state of
    /// the tasks switched in, and the data of their channel operations.
    pub touched_bytes: u64,
    /// Start of the running task's current accounting interval (`exec_start`).
    pub exec_start: u64,
    /// Current frequency and capacity at it.
    pub freq_khz: u32,
    pub capacity_cur: u64,
    /// `arch_scale_freq_capacity()` at `freq_khz` ([`freq_scale`]): set with the frequency,
    /// so that each `update_rq_clock()` reads it instead of dividing.
    pub freq_scale: u64,
    /// Busy/idle time per OPP and idle time per idle state.
    pub res: Residency,
    /// The rq's PELT clock (`clock_pelt`, `lost_idle_time`).
    pub pelt: PeltClock,
    /// PELT utilization of the RT and deadline classes (`rq->avg_rt`, `rq->avg_dl`).
    pub avg_rt: SchedAvg,
    pub avg_dl: SchedAvg,
    /// When the next periodic `update_blocked_averages` of this busy CPU is due.
    pub next_blocked: u64,
    /// Tasks that went to sleep in iowait from this CPU and have not woken (`nr_iowait`).
    pub nr_iowait: u32,
    /// Idle/iowait/nice time, for the sampling governors.
    pub times: CpuTimesAcc,
    /// `running_bw` of the deadline tasks queued here, on the 0..=1024 scale.
    pub dl_running_bw: u64,
    /// uclamp buckets and the rq's clamps.
    pub uclamp: RqUclamp,
}

impl Rq {
    /// `idle_cpu()`: nothing runs and nothing is queued.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.nr_running == 0
    }
}

/// A frequency domain (cpufreq policy) and the cluster its CPUs form.
pub struct Domain {
    /// Index of the current OPP in the domain's table.
    pub opp: usize,
    /// CPUs of the domain not idle.
    pub busy_cpus: u32,
    /// The cluster's residency: busy while any of its CPUs is.
    pub res: Residency,
}

#[cfg(test)]
mod tests {
    use super::CpuRuntime;

    /// The per-CPU counts are what was charged on each CPU, whatever the order of the moves.
    #[test]
    fn runtime_per_cpu_sums_what_each_cpu_charged() {
        let mut r = CpuRuntime::default();
        let charges = [
            (3, 10),
            (3, 5),
            (0, 7),
            (200, 1),
            (3, 2),
            (0, 0),
            (0, 4),
            (200, 9),
        ];
        for (cpu, ns) in charges {
            r.add(cpu, ns);
        }
        assert_eq!(r.per_cpu(), vec![(0, 11), (3, 17), (200, 10)]);
        assert_eq!(CpuRuntime::default().per_cpu(), vec![]);
    }
}

/// Error numbers the scheduler's user interfaces return, by name.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Errno {
    EPERM,
    /// No such file: the root cgroup has no `cpu.uclamp.*`.
    ENOENT,
    ESRCH,
    E2BIG,
    EINVAL,
    ERANGE,
    EOPNOTSUPP,
}

impl Errno {
    pub fn name(self) -> &'static str {
        match self {
            Errno::EPERM => "EPERM",
            Errno::ENOENT => "ENOENT",
            Errno::ESRCH => "ESRCH",
            Errno::E2BIG => "E2BIG",
            Errno::EINVAL => "EINVAL",
            Errno::ERANGE => "ERANGE",
            Errno::EOPNOTSUPP => "EOPNOTSUPP",
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `arch_scale_freq_capacity()` of `cpu` at `freq_khz`: the current to the highest frequency
/// of its domain, << 10, under frequency invariance (`invariant`); 1024 without it.
pub fn freq_scale(platform: &Platform, invariant: bool, cpu: usize, freq_khz: u32) -> u64 {
    if invariant {
        u64::from(freq_khz) * u64::from(SCHED_CAPACITY_SCALE)
            / u64::from(platform.max_freq_khz(cpu).max(1))
    } else {
        u64::from(SCHED_CAPACITY_SCALE)
    }
}

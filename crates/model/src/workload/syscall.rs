//! The interface between simulated user space (rt-app threads, generators) and the simulated
//! kernel: what a thread asks for next. A thread is a state machine; the kernel calls
//! `Thread::step` whenever the previous request completed, and executes the returned
//! `Syscall`.

pub use schedlab_base::cpumask::{CpuSet, NR_CPUS};

/// Scheduling policy, as `sched_setattr` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Policy {
    #[serde(rename = "SCHED_OTHER")]
    Other,
    #[serde(rename = "SCHED_BATCH")]
    Batch,
    #[serde(rename = "SCHED_IDLE")]
    Idle,
    #[serde(rename = "SCHED_FIFO")]
    Fifo,
    #[serde(rename = "SCHED_RR")]
    Rr,
    #[serde(rename = "SCHED_DEADLINE")]
    Deadline,
}

impl Policy {
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch | Policy::Idle)
    }
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }
}

/// Scheduling parameters of a thread, as rt-app sets them (task or phase level).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedParams {
    pub policy: Policy,
    /// Nice (-20..=19) for fair policies, rt_priority (1..=99) for FIFO/RR.
    pub priority: i32,
    /// SCHED_DEADLINE runtime/deadline/period in ns (runtime also the custom slice of a
    /// SCHED_OTHER task under EEVDF); 0 when unset.
    pub dl_runtime_ns: u64,
    pub dl_deadline_ns: u64,
    pub dl_period_ns: u64,
}

/// What a thread asks of the kernel next. Resource ids index the workload's resource tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syscall {
    /// Burn CPU: an amount of work in capacity·ns (at capacity `c` it takes `work / c` ns).
    Run {
        work: u64,
    },
    /// Burn CPU until the wall clock reaches `until` ns (rt-app `runtime`).
    RunUntil {
        until: u64,
    },
    /// `clock_nanosleep(TIMER_ABSTIME)`: interruptible sleep until `until` ns.
    SleepUntil {
        until: u64,
    },
    /// Blocking I/O: uninterruptible sleep in iowait for `service_ns`.
    Io {
        service_ns: u64,
    },
    MutexLock(usize),
    MutexUnlock(usize),
    /// `pthread_cond_wait`: release the mutex, wait for a signal, take the mutex again.
    CondWait {
        cond: usize,
        mutex: usize,
    },
    /// `pthread_cond_signal`: wake one waiter (lost if none waits).
    CondSignal(usize),
    /// `pthread_cond_broadcast`: wake all waiters.
    CondBroadcast(usize),
    /// Wait at a barrier until all its participants arrived.
    Barrier(usize),
    /// `sched_yield()`.
    Yield,
    /// Create a new thread running the workload's task `task` (index into `Workload::tasks`).
    Fork {
        task: usize,
    },
    /// `sched_setaffinity()` of the mask the thread's prologue has just chosen
    /// (`Thread::affinity`). The mask (NR_CPUS bits) stays with the thread, so that a queued
    /// request is a few bytes.
    SetAffinity,
    /// `sched_setattr()` of policy and priority.
    SetScheduler(SchedParams),
    /// `sched_setattr()` with SCHED_FLAG_UTIL_CLAMP_*: -1 resets, None leaves unchanged.
    SetUclamp {
        min: Option<i32>,
        max: Option<i32>,
    },
    /// `sched_setattr()` with SCHED_FLAG_LATENCY_NICE (seed 002): the thread's latency nice.
    SetLatencyNice(i32),
    /// Move this thread to the task group at index `group` of `Workload::taskgroups`.
    SetTaskgroup(usize),
    /// Write a message of `bytes` to channel `chan` (`Workload::channels`): blocks while the
    /// channel is full, unless it drops what does not fit.
    Send {
        chan: usize,
        bytes: u64,
    },
    /// Read one datagram, or up to `max` bytes of a stream: blocks while the channel is empty.
    Recv {
        chan: usize,
        max: u64,
    },
    /// Thread end.
    Exit,
}

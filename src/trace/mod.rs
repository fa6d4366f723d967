//! Observers of the kernel's event stream: the ftrace text writer (`ftrace.rs`), in the
//! `trace-cmd report` format LISA and Perfetto read, and rt-app's per-thread logs
//! (`rtapp_log.rs`). The kernel emits `TraceEvent`s; it knows nothing of formats.

mod ftrace;
mod rtapp_log;

pub use ftrace::Ftrace;
pub use rtapp_log::RtappLogs;

/// How an event names a task: comm (≤ 15 chars), pid, kernel prio.
#[derive(Debug, Clone, Copy)]
pub struct TaskRef<'a> {
    pub comm: &'a str,
    pub pid: u32,
    pub prio: i32,
}

/// The idle task of a CPU as events name it.
pub const IDLE_COMM: &str = "<idle>";

/// `PWR_EVENT_EXIT`: the `cpu_idle` state meaning "leaving idle".
pub const PWR_EVENT_EXIT: u32 = u32::MAX;

/// One kernel trace event, with the fields of its tracepoint.
#[derive(Debug, Clone, Copy)]
pub enum TraceEvent<'a> {
    SchedSwitch {
        prev: TaskRef<'a>,
        /// "R", "S", "D", "X"… as `__trace_sched_switch_state` reports it.
        prev_state: &'static str,
        next: TaskRef<'a>,
        /// The CPU number, to name the idle task `swapper/N`.
        cpu: usize,
    },
    SchedWaking {
        p: TaskRef<'a>,
        target_cpu: usize,
    },
    SchedWakeup {
        p: TaskRef<'a>,
        target_cpu: usize,
    },
    SchedWakeupNew {
        p: TaskRef<'a>,
        target_cpu: usize,
    },
    SchedMigrateTask {
        p: TaskRef<'a>,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    SchedProcessFork {
        parent: TaskRef<'a>,
        child: TaskRef<'a>,
    },
    SchedProcessExit {
        p: TaskRef<'a>,
    },
    CpuIdle {
        state: u32,
        cpu: usize,
    },
    CpuFrequency {
        khz: u32,
        cpu: usize,
    },
}

/// Something that wants the event stream. `current` is the task running on `cpu` when the
/// event happens (None: the idle task).
pub trait Observer {
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>);
    /// Flush at the end of the run, reporting the first write error.
    fn finish(&mut self) -> std::io::Result<()>;
}

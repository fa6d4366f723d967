//! The events the kernel emits (include/trace/events/: sched, power, the PELT and uclamp
//! events of LISA's kernel module, trace_marker prints) and the `Observer` that receives
//! them. The kernel knows nothing of formats: the trace crate's writers, the plots and the
//! tests observe this stream.

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

/// The load-tracking events a trace carries besides the scheduler's and power events
/// (`--trace-events`): off by default, they multiply a trace's size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventSelection {
    pub sched_pelt_se: bool,
    pub sched_pelt_cfs: bool,
    pub sched_util_est_se: bool,
    pub sched_util_est_cfs: bool,
    pub sched_cpu_capacity: bool,
    pub uclamp_util_se: bool,
    pub uclamp_util_cfs: bool,
    pub sched_pelt_rt: bool,
    pub sched_pelt_dl: bool,
}

impl EventSelection {
    pub const NAMES: &'static [&'static str] = &[
        "sched_pelt_se",
        "sched_pelt_cfs",
        "sched_util_est_se",
        "sched_util_est_cfs",
        "sched_cpu_capacity",
        "uclamp_util_se",
        "uclamp_util_cfs",
        "sched_pelt_rt",
        "sched_pelt_dl",
    ];

    /// A comma-separated list of event names, or `all`.
    pub fn parse(list: &str) -> Result<EventSelection, schedlab_base::error::InputError> {
        let mut sel = EventSelection::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let all = name == "all";
            let mut known = all;
            for (n, flag) in [
                ("sched_pelt_se", &mut sel.sched_pelt_se),
                ("sched_pelt_cfs", &mut sel.sched_pelt_cfs),
                ("sched_util_est_se", &mut sel.sched_util_est_se),
                ("sched_util_est_cfs", &mut sel.sched_util_est_cfs),
                ("sched_cpu_capacity", &mut sel.sched_cpu_capacity),
                ("uclamp_util_se", &mut sel.uclamp_util_se),
                ("uclamp_util_cfs", &mut sel.uclamp_util_cfs),
                ("sched_pelt_rt", &mut sel.sched_pelt_rt),
                ("sched_pelt_dl", &mut sel.sched_pelt_dl),
            ] {
                if all || n == name {
                    *flag = true;
                    known = true;
                }
            }
            if !known {
                return Err(schedlab_base::error::InputError::new(
                    "--trace-events",
                    name,
                    format!("all or some of {}", Self::NAMES.join(", ")),
                    format!("`{name}`"),
                ));
            }
        }
        Ok(sel)
    }

    /// Whether a trace with this selection shows `ev` (the events outside the selection
    /// always show).
    pub fn shows(&self, ev: &TraceEvent<'_>) -> bool {
        match ev {
            TraceEvent::SchedPeltSe { .. } => self.sched_pelt_se,
            TraceEvent::SchedPeltCfs { .. } => self.sched_pelt_cfs,
            TraceEvent::SchedPeltRt { .. } => self.sched_pelt_rt,
            TraceEvent::SchedPeltDl { .. } => self.sched_pelt_dl,
            TraceEvent::SchedUtilEstSe { .. } => self.sched_util_est_se,
            TraceEvent::SchedUtilEstCfs { .. } => self.sched_util_est_cfs,
            TraceEvent::SchedCpuCapacity { .. } => self.sched_cpu_capacity,
            TraceEvent::UclampUtilSe { .. } => self.uclamp_util_se,
            TraceEvent::UclampUtilCfs { .. } => self.uclamp_util_cfs,
            _ => true,
        }
    }

    /// The events `--trace-counters` turns into Perfetto counter tracks, added to `self`.
    pub fn with_counter_sources(mut self) -> EventSelection {
        self.sched_pelt_se = true;
        self.sched_pelt_cfs = true;
        self.uclamp_util_cfs = true;
        self
    }

    pub fn any_pelt(&self) -> bool {
        self.sched_pelt_se
            || self.sched_pelt_cfs
            || self.sched_util_est_se
            || self.sched_util_est_cfs
    }
}

/// PELT signals as LISA's kernel-module events print them.
#[derive(Debug, Clone, Copy)]
pub struct PeltFields {
    pub load: u64,
    pub runnable: u64,
    pub util: u64,
    pub update_time: u64,
}

/// A utilization with the rq's uclamp values as LISA's uclamp events print them.
#[derive(Debug, Clone, Copy)]
pub struct UclampFields {
    pub util_avg: u64,
    /// `uclamp_rq_util_with(rq, util_avg, NULL)`.
    pub uclamp_avg: u64,
    pub uclamp_min: u64,
    pub uclamp_max: u64,
}

/// One kernel trace event as the kernel emits it and the writers read it.
pub type TraceEvent<'a> = Tracepoint<TaskRef<'a>, &'a str, &'a crate::workload::CpuSet>;

/// One kernel trace event, with the fields of its tracepoint: generic over how it names a
/// task (`T`), a string (`S`) and a CPU mask (`M`), so that the ring buffer holds it with
/// those fields copied out of the kernel (`ring_buffer.rs`) and `map` turns one form into
/// the other.
#[derive(Debug, Clone, Copy)]
pub enum Tracepoint<T, S, M> {
    SchedSwitch {
        prev: T,
        /// "R", "S", "D", "X"… as `__trace_sched_switch_state` reports it.
        prev_state: &'static str,
        next: T,
        /// The CPU number, to name the idle task `swapper/N`.
        cpu: usize,
    },
    SchedWaking {
        p: T,
        target_cpu: usize,
    },
    SchedWakeup {
        p: T,
        target_cpu: usize,
    },
    SchedWakeupNew {
        p: T,
        target_cpu: usize,
    },
    SchedMigrateTask {
        p: T,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    SchedProcessFork {
        parent: T,
        child: T,
    },
    SchedProcessExit {
        p: T,
    },
    CpuIdle {
        state: u32,
        cpu: usize,
    },
    CpuFrequency {
        khz: u32,
        cpu: usize,
    },
    /// LISA's `sched_pelt_se` (a task's entity; path "(null)" without task groups).
    SchedPeltSe {
        cpu: usize,
        p: T,
        avg: PeltFields,
    },
    /// LISA's `sched_pelt_cfs` for a CPU's root cfs_rq (path "/").
    SchedPeltCfs {
        cpu: usize,
        avg: PeltFields,
    },
    /// LISA's `sched_pelt_rt`: the rq's `avg_rt` (load and runnable are 0 there, as in
    /// the kernel, which tracks only running time for it).
    SchedPeltRt {
        cpu: usize,
        avg: PeltFields,
    },
    /// LISA's `sched_pelt_dl`: the rq's `avg_dl`.
    SchedPeltDl {
        cpu: usize,
        avg: PeltFields,
    },
    /// `task_rename` (include/trace/events/task.h): a thread set its comm (`prctl`,
    /// `pthread_setname_np`); `p` carries the new name.
    TaskRename {
        p: T,
        oldcomm: S,
    },
    SchedUtilEstSe {
        cpu: usize,
        p: T,
        enqueued: u32,
        ewma: u32,
        util: u64,
    },
    SchedUtilEstCfs {
        cpu: usize,
        enqueued: u32,
        ewma: u32,
        util: u64,
    },
    SchedCpuCapacity {
        cpu: usize,
        capacity: u64,
        capacity_orig: u64,
        capacity_curr: u64,
    },
    /// LISA's `uclamp_util_se`: a task's util and the rq's clamps.
    UclampUtilSe {
        cpu: usize,
        p: T,
        clamps: UclampFields,
    },
    /// LISA's `uclamp_util_cfs`: the root cfs_rq's util and the rq's clamps.
    UclampUtilCfs {
        cpu: usize,
        clamps: UclampFields,
    },
    /// The root domain's overutilized flag was written (LISA's `sched_overutilized`);
    /// `span` is the root domain's CPU mask.
    SchedOverutilized {
        overutilized: bool,
        span: M,
    },
    /// A line written to trace_marker (`print: tracing_mark_write: …`).
    Print {
        text: S,
    },
}

/// How `Tracepoint::map` carries an event's task, string and mask fields into another form.
pub trait Fields<T, S, M> {
    type Task;
    type Str;
    type Mask;
    fn task(&mut self, t: T) -> Self::Task;
    fn str(&mut self, s: S) -> Self::Str;
    fn mask(&mut self, m: M) -> Self::Mask;
}

impl<T, S, M> Tracepoint<T, S, M> {
    /// The same event with its tasks, strings and masks carried over by `f`; every other
    /// field as it is.
    pub fn map<F: Fields<T, S, M>>(self, f: &mut F) -> Tracepoint<F::Task, F::Str, F::Mask> {
        use Tracepoint as E;
        match self {
            E::SchedSwitch {
                prev,
                prev_state,
                next,
                cpu,
            } => E::SchedSwitch {
                prev: f.task(prev),
                prev_state,
                next: f.task(next),
                cpu,
            },
            E::SchedWaking { p, target_cpu } => E::SchedWaking {
                p: f.task(p),
                target_cpu,
            },
            E::SchedWakeup { p, target_cpu } => E::SchedWakeup {
                p: f.task(p),
                target_cpu,
            },
            E::SchedWakeupNew { p, target_cpu } => E::SchedWakeupNew {
                p: f.task(p),
                target_cpu,
            },
            E::SchedMigrateTask {
                p,
                orig_cpu,
                dest_cpu,
            } => E::SchedMigrateTask {
                p: f.task(p),
                orig_cpu,
                dest_cpu,
            },
            E::SchedProcessFork { parent, child } => E::SchedProcessFork {
                parent: f.task(parent),
                child: f.task(child),
            },
            E::SchedProcessExit { p } => E::SchedProcessExit { p: f.task(p) },
            E::CpuIdle { state, cpu } => E::CpuIdle { state, cpu },
            E::CpuFrequency { khz, cpu } => E::CpuFrequency { khz, cpu },
            E::SchedPeltSe { cpu, p, avg } => E::SchedPeltSe {
                cpu,
                p: f.task(p),
                avg,
            },
            E::SchedPeltCfs { cpu, avg } => E::SchedPeltCfs { cpu, avg },
            E::SchedPeltRt { cpu, avg } => E::SchedPeltRt { cpu, avg },
            E::SchedPeltDl { cpu, avg } => E::SchedPeltDl { cpu, avg },
            E::TaskRename { p, oldcomm } => E::TaskRename {
                p: f.task(p),
                oldcomm: f.str(oldcomm),
            },
            E::SchedUtilEstSe {
                cpu,
                p,
                enqueued,
                ewma,
                util,
            } => E::SchedUtilEstSe {
                cpu,
                p: f.task(p),
                enqueued,
                ewma,
                util,
            },
            E::SchedUtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            } => E::SchedUtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            },
            E::SchedCpuCapacity {
                cpu,
                capacity,
                capacity_orig,
                capacity_curr,
            } => E::SchedCpuCapacity {
                cpu,
                capacity,
                capacity_orig,
                capacity_curr,
            },
            E::UclampUtilSe { cpu, p, clamps } => E::UclampUtilSe {
                cpu,
                p: f.task(p),
                clamps,
            },
            E::UclampUtilCfs { cpu, clamps } => E::UclampUtilCfs { cpu, clamps },
            E::SchedOverutilized { overutilized, span } => E::SchedOverutilized {
                overutilized,
                span: f.mask(span),
            },
            E::Print { text } => E::Print { text: f.str(text) },
        }
    }
}

/// Something that wants the event stream. `current` is the task running on `cpu` when the
/// event happens (None: the idle task).
pub trait Observer {
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>);
    /// Flush at the end of the run, reporting the first write error.
    fn finish(&mut self) -> std::io::Result<()>;
}

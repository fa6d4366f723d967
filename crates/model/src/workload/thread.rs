//! One rt-app thread as a state machine (rt-app's `thread_body`, `run` and `run_event`).
//!
//! The kernel calls `Thread::step` when the thread starts and whenever the request it returned
//! has completed; the thread answers with its next request. Between two requests no simulated
//! time passes, exactly like the user-space code between two system calls. What rt-app does
//! with several calls (suspend: lock, wait, unlock) comes out one `Syscall` per step; what it
//! keeps in user space (timer references, semaphore counts, fork counters) lives in `Thread`
//! or, when threads share it, in `UserSpace`.
//!
//! Semantics taken from rt-app (src/rt-app.c):
//! - Start: `t_zero` is when the first thread starts; a task's `delay` sleeps until
//!   `t_zero + delay` (forked threads too: the delay counts from the use case's start). Then
//!   the task's policy/priority is set (always, as rt-app does), its uclamp and task group.
//! - Each phase iteration first applies the phase's affinity (phase `cpus`, else the task's,
//!   else the default), scheduling parameters, uclamp and task group, each only when it
//!   differs from what the thread has; then runs the events and writes one log row.
//! - `timer`: the reference starts at `t_zero + delay` on first use and advances by the
//!   period on each use; the thread sleeps until it if it is still ahead. Otherwise the
//!   period is missed (negative slack, counted as a deadline miss): no sleep, the wake-up
//!   latency sum of the row restarts at 0, and a relative timer moves its reference to now
//!   while an absolute one keeps it. A shared timer advances once per use by any thread.
//! - `suspend` waits on the thread's task condition under the task mutex; `resume`
//!   broadcasts it under that mutex. Nothing remembers a resume that comes when nobody is
//!   suspended (rt-app added `sem_post`/`sem_wait` for remembered wake-ups).
//! - `sync` signals the condition then waits on it; `wait`, like in rt-app, expects the
//!   mutex held through an earlier `lock`.
//! - `sem_post`/`sem_wait`: a count protected by a mutex, waited for on a condition.
//! - `fork` creates a thread of the named task; each target task can be forked
//!   `FORKS_LIMIT` times (rt-app then stops the whole use case; here the forking thread ends
//!   and `UserSpace::fork_limit_hit` tells it).
//! - rt-app's own ftrace lines (`rtapp_ftrace.rs`) go into `UserSpace::marks` where rt-app
//!   writes them: task start (after `t_zero`'s clock reference) and end, each iteration's
//!   loop start (after its attributes), each event, the loop end and its stats.

use std::fmt;

use super::rtapp::{Calibration, Event, PhaseSpec, TaskSpec, Workload};
use super::rtapp_ftrace::{FtraceCategories, Marks};
use super::syscall::{CpuSet, Policy, SchedParams, Syscall};
use schedlab_base::LatencyHistogram;

/// rt-app's limit on forks of one task, against fork bombs.
pub const FORKS_LIMIT: u32 = 1024;

/// CPU work charged for a loop iteration that took no simulated time at all (only missed
/// timers, zero sleeps, non-blocking locks…): rt-app would spin through its loop reading
/// clocks and logging, and charging it keeps the simulation from looping forever at one
/// instant. 1 µs at capacity 1024.
const IDLE_ITERATION_WORK: u64 = 1_000 * 1024;

/// rt-app's `runtime` runs 32 µs chunks of calibrated work until the time is up.
const RUNTIME_CHUNK_US: u64 = 32;

/// What a thread's `step` sees of the world.
pub struct UserCtx<'a> {
    /// Simulated time, ns.
    pub now: u64,
    /// CPU time this thread has run so far, ns.
    pub cputime_ns: u64,
    /// User-space state shared by all threads of the workload.
    pub user: &'a mut UserSpace,
    /// The workload the thread was created from (`Thread::new`): its program is read
    /// there, not copied into every thread.
    pub workload: &'a Workload,
}

/// User-space state that threads share: the use case's start, shared timers, semaphores
/// (their mutex and condition, and counts), and thread and fork numbering.
#[derive(Debug, Clone)]
pub struct UserSpace {
    t_zero: Option<u64>,
    timers: Vec<TimerState>,
    sems: Vec<(usize, usize)>,
    sem_counts: Vec<u64>,
    next_index: u32,
    /// Per task: fork requests made (for the limit) and forked threads named.
    fork_requests: Vec<u32>,
    forks_named: Vec<u32>,
    fork_limit_hit: bool,
    /// Forks allowed per task (`Global::fork_limit`; 0: no limit).
    fork_limit: u32,
    /// rt-app's trace_marker lines written since the kernel last took them (none unless
    /// `enable_marks`).
    pub marks: Marks,
}

#[derive(Debug, Clone, Copy)]
struct TimerState {
    armed: bool,
    t_next: u64,
    relative: bool,
}

impl UserSpace {
    pub fn new(workload: &Workload) -> UserSpace {
        UserSpace {
            t_zero: None,
            timers: workload
                .timers
                .iter()
                .map(|t| TimerState::new(t.absolute))
                .collect(),
            sems: workload
                .semaphores
                .iter()
                .map(|s| (s.mutex, s.cond))
                .collect(),
            sem_counts: vec![0; workload.semaphores.len()],
            next_index: 0,
            fork_requests: vec![0; workload.tasks.len()],
            forks_named: vec![0; workload.tasks.len()],
            fork_limit_hit: false,
            fork_limit: workload.global.fork_limit,
            marks: Marks::default(),
        }
    }

    /// Threads write rt-app's ftrace lines of `categories` (the workload's `global.ftrace`)
    /// into `marks`: for a traced run.
    pub fn enable_marks(&mut self, categories: FtraceCategories) {
        self.marks = Marks::new(categories);
    }

    /// Numbers and names a new thread of `task` as rt-app does: `<task>-<index>` at start,
    /// `<task>-<index>-<nnnn>` when forked, where the index counts every thread created so
    /// far and `nnnn` the forks of that task. Call it for every thread, in creation order
    /// (`Workload::initial_threads`, then each `Syscall::Fork`); pass the index to
    /// `Thread::new`.
    pub fn name_thread(&mut self, workload: &Workload, task: usize, forked: bool) -> (u32, String) {
        let index = self.next_index;
        self.next_index += 1;
        // `<name>-<index>`, and `-<n:04>` for a fork: pushed rather than `format!`ed, as
        // every thread of a workload of many is named so.
        let name = &workload.tasks[task].name;
        let mut s = String::with_capacity(name.len() + 16);
        s.push_str(name);
        s.push('-');
        s.push_str(itoa::Buffer::new().format(index));
        if forked {
            let n = self.forks_named[task];
            self.forks_named[task] += 1;
            let mut b = itoa::Buffer::new();
            let digits = b.format(n);
            s.push('-');
            s.extend(std::iter::repeat('0').take(4usize.saturating_sub(digits.len())));
            s.push_str(digits);
        }
        (index, s)
    }

    /// When the first thread started (rt-app's `t_zero`), once one has.
    pub fn t_zero(&self) -> Option<u64> {
        self.t_zero
    }

    /// Whether a thread tried to fork a task more than `FORKS_LIMIT` times (rt-app exits
    /// with a failure then).
    pub fn fork_limit_hit(&self) -> bool {
        self.fork_limit_hit
    }
}

impl TimerState {
    fn new(absolute: bool) -> TimerState {
        TimerState {
            armed: false,
            t_next: 0,
            relative: !absolute,
        }
    }
}

/// Fresh copies of the `unique` timers that `task`'s phases use, sorted by timer index: a
/// thread's timer state is sized by its own program, not by the workload's timer count.
fn own_timers(workload: &Workload, task: usize) -> Vec<(usize, TimerState)> {
    let mut own: Vec<(usize, TimerState)> = workload.tasks[task]
        .phases
        .iter()
        .flat_map(|p| &p.events)
        .filter_map(|e| match *e {
            Event::Timer { timer, .. } if workload.timers[timer].unique_to.is_some() => {
                Some((timer, TimerState::new(workload.timers[timer].absolute)))
            }
            _ => None,
        })
        .collect();
    own.sort_by_key(|t| t.0);
    own.dedup_by_key(|t| t.0);
    own
}

/// One row of an rt-app thread log: one phase iteration. Times in µs, rounded as rt-app
/// rounds them; absolute times count from the start of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoopRecord {
    /// rt-app's thread index.
    pub idx: u32,
    /// Calibrated work done by run events, in thousands of calibration loops.
    pub perf: u64,
    /// Wall time spent in run and runtime events.
    pub run: u64,
    /// Wall time of the whole iteration.
    pub period: u64,
    pub start: u64,
    pub end: u64,
    /// Start relative to the use case's start.
    pub rel_st: u64,
    /// Time left before the last timer's expiry (negative when missed), or the sum over
    /// the iteration's timers with `cumulative_slack`.
    pub slack: i64,
    /// Configured durations of run and runtime events.
    pub c_duration: u64,
    /// Configured timer periods.
    pub c_period: u64,
    /// Wake-up latencies after timer sleeps.
    pub wu_lat: u64,
}

/// The header line of an rt-app thread log, newline included.
pub fn log_header() -> &'static str {
    concat!(
        "#idx     perf      run   period           start             end",
        "          rel_st      slack c_duration   c_period     wu_lat\n"
    )
}

impl LoopRecord {
    /// Writes the row as rt-app's `log_timing` does, newline included.
    pub fn fmt_line(&self, out: &mut impl fmt::Write) -> fmt::Result {
        writeln!(
            out,
            "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
            self.idx,
            self.perf,
            self.run,
            self.period,
            self.start,
            self.end,
            self.rel_st,
            self.slack,
            self.c_duration,
            self.c_period,
            self.wu_lat
        )
    }
}

/// Where the thread is in its program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pc {
    /// Not started: take `t_zero`, sleep the delay.
    Start,
    /// Apply the task's scheduling attributes.
    Setup,
    /// Begin an iteration of the current phase (or end the thread).
    IterStart,
    /// Run the event at this index of the current phase; past the end, end the iteration.
    Event(usize),
    Done,
}

/// What to account for when the request just returned completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    None,
    /// A run or runtime event that started at `start` with `cpu_start` of CPU time.
    Run {
        start: u64,
        cpu_start: u64,
        runtime: bool,
    },
    /// A timer sleep that should end at `t_next`.
    TimerWake {
        t_next: u64,
    },
    /// The semaphore's mutex is held (after a lock or a wait): take a unit or wait again.
    SemWaitCheck {
        sem: usize,
    },
    /// The semaphore's mutex is held: post.
    SemPostLocked {
        sem: usize,
    },
}

/// Requests queued by one event or prologue, returned one per step. Five is the most any
/// sequence needs (a phase prologue: affinity, scheduler, uclamp, latency nice, task group).
#[derive(Debug, Clone)]
struct Outbox {
    buf: [(Syscall, Pending); 5],
    head: usize,
    len: usize,
}

impl Outbox {
    fn new() -> Outbox {
        Outbox {
            buf: [(Syscall::Yield, Pending::None); 5],
            head: 0,
            len: 0,
        }
    }

    fn push(&mut self, call: Syscall, then: Pending) {
        assert!(
            self.len < self.buf.len(),
            "outbox sequences are at most 5 requests"
        );
        self.buf[(self.head + self.len) % self.buf.len()] = (call, then);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<(Syscall, Pending)> {
        if self.len == 0 {
            return None;
        }
        let item = self.buf[self.head];
        self.head = (self.head + 1) % self.buf.len();
        self.len -= 1;
        Some(item)
    }
}

/// The log data of the iteration in progress (rt-app's `log_data_t`).
#[derive(Debug, Clone, Copy, Default)]
struct IterData {
    start_ns: u64,
    perf: u64,
    run_us: u64,
    slack_us: i64,
    c_duration: u64,
    c_period: u64,
    wu_lat_us: u64,
}

/// One rt-app thread.
#[derive(Debug, Clone)]
pub struct Thread {
    name: String,
    task: usize,
    index: u32,

    // The program: the phases and the `cpus` lists are the workload's (`UserCtx::workload`),
    // the rest copied.
    task_loop: i64,
    delay_ns: u64,
    task_params: SchedParams,
    task_util: (Option<i32>, Option<i32>),
    task_taskgroup: Option<usize>,
    task_latency_nice: Option<i32>,
    run_capacity: u64,
    /// rt-app's ns per calibration loop, for the log's `perf`.
    p_load: u64,
    mem_bytes_per_us: u64,
    mem_chase_ns_per_hop: u64,
    cumulative_slack: bool,

    // Progress.
    pc: Pc,
    phase: usize,
    phase_loop: i64,
    thread_loop: i64,
    outbox: Outbox,
    pending: Pending,
    t_first: u64,
    /// The thread's own copies of the `unique` timers its phases use, by timer index
    /// (sorted); the other timers are shared, in `UserSpace`.
    own_timers: Vec<(usize, TimerState)>,

    // The attributes this thread last set (or inherited).
    /// A forked thread's inherited mask; None: every CPU (`CpuSet::all(NR_CPUS)`). Boxed,
    /// since most threads have none and a mask is NR_CPUS bits.
    default_affinity: Option<Box<CpuSet>>,
    /// Where the mask the thread last set or inherited comes from (phase, task or default),
    /// which makes the mask (`affinity`) without a copy of its NR_CPUS bits per thread: no
    /// source changes while the thread runs, and the same source again skips building and
    /// comparing masks.
    affinity_src: AffinitySrc,
    cur_params: SchedParams,
    cur_util: (Option<i32>, Option<i32>),
    cur_taskgroup: Option<usize>,
    cur_latency_nice: Option<i32>,
    /// The phase whose prologue ran last: the attributes above are then that phase's, and
    /// its prologue again would change nothing (a one-phase task's every iteration).
    settled_phase: Option<usize>,

    iter: IterData,
    logging: bool,
    log: Vec<LoopRecord>,
    activations: u64,
    deadline_misses: u64,
    /// Timer wake-ups: from the expiry to the thread running again (cyclictest's latency).
    timer_latency: LatencyHistogram,
    /// Periodic jobs: from a period's start to the thread reaching its next timer event.
    response_time: LatencyHistogram,
    /// When the thread returned `Syscall::Exit`.
    exited_at: Option<u64>,
}

/// Where a thread's affinity comes from (`Thread::prologue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AffinitySrc {
    Phase(usize),
    Task,
    Default,
}

impl Thread {
    /// A thread of `workload.tasks[task]` with rt-app thread index `index` (see
    /// `UserSpace::name_thread`). `run_capacity` is the capacity (0..=1024) of the
    /// calibration CPU at its highest OPP, 1024 without CPU calibration: a `run` of X µs is
    /// X·1000·run_capacity capacity·ns of work.
    pub fn new(
        workload: &Workload,
        task: usize,
        index: u32,
        name: String,
        run_capacity: u64,
    ) -> Thread {
        let spec = &workload.tasks[task];
        Thread {
            name,
            task,
            index,
            task_loop: spec.loop_count,
            delay_ns: spec.delay_ns,
            task_params: spec.params,
            task_util: (spec.util_min, spec.util_max),
            task_taskgroup: spec.taskgroup,
            task_latency_nice: spec.latency_nice,
            run_capacity,
            p_load: match workload.global.calibration {
                Calibration::LoopNs(ns) => ns.max(1),
                // Without a real loop, one loop is 1 ns of work at the calibration capacity.
                Calibration::Cpu(_) | Calibration::None => 1,
            },
            mem_bytes_per_us: workload.global.mem_bytes_per_us.max(1),
            mem_chase_ns_per_hop: workload.global.mem_chase_ns_per_hop,
            cumulative_slack: workload.global.cumulative_slack,
            pc: Pc::Start,
            phase: 0,
            phase_loop: 0,
            thread_loop: 0,
            outbox: Outbox::new(),
            pending: Pending::None,
            t_first: 0,
            own_timers: own_timers(workload, task),
            default_affinity: None,
            affinity_src: AffinitySrc::Default,
            cur_params: spec.params,
            cur_util: (None, None),
            cur_taskgroup: None,
            cur_latency_nice: None,
            settled_phase: None,
            iter: IterData::default(),
            logging: false,
            log: Vec::new(),
            activations: 0,
            deadline_misses: 0,
            timer_latency: LatencyHistogram::default(),
            response_time: LatencyHistogram::default(),
            exited_at: None,
        }
    }

    /// The mask the thread last set or inherited (what `Syscall::SetAffinity` asks for), of
    /// its program in `workload`.
    pub fn affinity(&self, workload: &Workload) -> CpuSet {
        self.mask_of(&workload.tasks[self.task], self.affinity_src)
    }

    /// The mask of source `src` of the thread's program `spec`.
    fn mask_of(&self, spec: &TaskSpec, src: AffinitySrc) -> CpuSet {
        let cpus = match src {
            AffinitySrc::Phase(p) => spec.phases[p].cpus.as_ref(),
            AffinitySrc::Task => spec.cpus.as_ref(),
            AffinitySrc::Default => None,
        };
        match cpus {
            Some(c) => c.iter().copied().collect::<CpuSet>(),
            None => self
                .default_affinity
                .as_deref()
                .copied()
                .unwrap_or_else(|| CpuSet::all(super::NR_CPUS)),
        }
    }

    /// The affinity a phase without `cpus` returns to, which is also the thread's affinity
    /// when created: rt-app reads it at start, so it is all CPUs for threads created at
    /// start (the default, every bit set: the kernel keeps the possible CPUs of it, as
    /// `sched_setaffinity` does) and the parent's affinity for forked threads.
    pub fn set_default_affinity(&mut self, mask: CpuSet) {
        self.default_affinity = Some(Box::new(mask));
        self.affinity_src = AffinitySrc::Default;
        self.settled_phase = None;
    }

    /// Keeps a `LoopRecord` per phase iteration for `drain_log` (off by default, so that
    /// memory does not grow with simulated time unless someone reads the rows).
    pub fn set_logging(&mut self, on: bool) {
        self.logging = on;
    }

    /// Moves the rows logged since the last call to the end of `out`.
    pub fn drain_log(&mut self, out: &mut Vec<LoopRecord>) {
        out.append(&mut self.log);
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The index of the thread's task in `Workload::tasks`.
    pub fn task(&self) -> usize {
        self.task
    }

    /// rt-app's thread index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Timer sleeps that ended (the thread was woken by its timer).
    pub fn activations(&self) -> u64 {
        self.activations
    }

    /// Timer periods found already over when the timer event ran (negative slack).
    pub fn deadline_misses(&self) -> u64 {
        self.deadline_misses
    }

    /// Timer wake-up latencies (ns): expiry to running, as cyclictest measures them.
    pub fn timer_latency(&self) -> &LatencyHistogram {
        &self.timer_latency
    }

    /// Response times (ns) of periodic jobs: from the start of a timer period to the
    /// thread's next timer event, i.e. when the work of that period was done.
    pub fn response_time(&self) -> &LatencyHistogram {
        &self.response_time
    }

    /// When the thread exited (simulated ns), if it did.
    pub fn exited_at(&self) -> Option<u64> {
        self.exited_at
    }

    /// Whether the thread has returned `Syscall::Exit`.
    pub fn is_done(&self) -> bool {
        self.pc == Pc::Done
    }

    /// Ask the host's caches for the fields `step` reads first ([`schedlab_base::sim::prefetch`]).
    pub fn prefetch(&self) {
        use schedlab_base::sim::prefetch;
        prefetch(&self.pc);
        prefetch(&self.pending);
        prefetch(&self.iter);
        prefetch(&self.outbox);
        prefetch(&self.task_params);
        prefetch(&self.cur_params);
    }

    /// The next request, given that the previous one has completed. Never allocates once
    /// the log buffer has grown to its working size.
    pub fn step(&mut self, ctx: &mut UserCtx) -> Syscall {
        let workload: &Workload = ctx.workload;
        let spec = &workload.tasks[self.task];
        let phases = &spec.phases[..];
        let now = ctx.now;
        self.complete(ctx);
        loop {
            if let Some((call, then)) = self.outbox.pop() {
                self.pending = then;
                return call;
            }
            match self.pc {
                Pc::Start => {
                    if ctx.user.t_zero.is_none() {
                        ctx.user.marks.clock_ref(round_us(now));
                    }
                    ctx.user.marks.task("start");
                    let t_zero = *ctx.user.t_zero.get_or_insert(now);
                    self.t_first = t_zero.saturating_add(self.delay_ns);
                    self.pc = Pc::Setup;
                    if self.t_first > now {
                        return Syscall::SleepUntil {
                            until: self.t_first,
                        };
                    }
                }
                Pc::Setup => {
                    self.setup();
                    self.pc = Pc::IterStart;
                }
                Pc::IterStart => {
                    if self.thread_loop == self.task_loop || phases.is_empty() {
                        self.pc = Pc::Done;
                        continue;
                    }
                    if self.settled_phase != Some(self.phase) {
                        self.prologue(spec);
                        self.settled_phase = Some(self.phase);
                    }
                    self.iter = IterData::default();
                    self.pc = Pc::Event(0);
                }
                Pc::Event(i) => {
                    if i == 0 {
                        let (tl, p, pl) = (self.thread_loop, self.phase, self.phase_loop);
                        ctx.user.marks.phase_loop("start", tl, p, pl);
                        self.iter.start_ns = now;
                    }
                    let phase = &phases[self.phase];
                    match phase.events.get(i).copied() {
                        Some(ev) => {
                            ctx.user.marks.event(i, &phase.labels[i]);
                            self.pc = Pc::Event(i + 1);
                            if let Some(call) = self.event(ev, ctx) {
                                return call;
                            }
                        }
                        None => {
                            self.end_iteration(phases, now, &mut ctx.user.marks);
                            self.pc = Pc::IterStart;
                            if now == self.iter.start_ns {
                                return Syscall::Run {
                                    work: IDLE_ITERATION_WORK,
                                };
                            }
                        }
                    }
                }
                Pc::Done => return self.exit(now, ctx),
            }
        }
    }

    /// Accounts for the completion of the request returned last.
    fn complete(&mut self, ctx: &mut UserCtx) {
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::None => {}
            Pending::Run {
                start,
                cpu_start,
                runtime,
            } => {
                self.iter.run_us += round_us(ctx.now.saturating_sub(start));
                if runtime {
                    // The chunks rt-app would have run, had they all gone at calibration
                    // speed: CPU time over the chunk length, rounded up.
                    let cpu = ctx.cputime_ns.saturating_sub(cpu_start);
                    let chunks = cpu.div_ceil(RUNTIME_CHUNK_US * 1000);
                    self.iter.perf += chunks * (RUNTIME_CHUNK_US / self.p_load);
                }
            }
            Pending::TimerWake { t_next } => {
                self.iter.wu_lat_us += round_us(ctx.now.saturating_sub(t_next));
                self.timer_latency.record(ctx.now.saturating_sub(t_next));
                self.activations += 1;
            }
            Pending::SemWaitCheck { sem } => {
                let (mutex, cond) = ctx.user.sems[sem];
                let count = &mut ctx.user.sem_counts[sem];
                if *count > 0 {
                    *count -= 1;
                    self.outbox.push(Syscall::MutexUnlock(mutex), Pending::None);
                } else {
                    self.outbox.push(
                        Syscall::CondWait { cond, mutex },
                        Pending::SemWaitCheck { sem },
                    );
                }
            }
            Pending::SemPostLocked { sem } => {
                let (mutex, cond) = ctx.user.sems[sem];
                ctx.user.sem_counts[sem] += 1;
                self.outbox.push(Syscall::CondSignal(cond), Pending::None);
                self.outbox.push(Syscall::MutexUnlock(mutex), Pending::None);
            }
        }
    }

    /// rt-app's start: the task's policy and priority (set even when they look like the
    /// defaults: a forked thread inherits its parent's), then uclamp and task group.
    fn setup(&mut self) {
        let p = self.task_params;
        self.outbox.push(Syscall::SetScheduler(p), Pending::None);
        self.cur_params = p;
        let (min, max) = self.task_util;
        // rt-app sets no uclamp on SCHED_DEADLINE threads.
        if p.policy != Policy::Deadline && (min.is_some() || max.is_some()) {
            self.outbox
                .push(Syscall::SetUclamp { min, max }, Pending::None);
            self.cur_util = (min.or(self.cur_util.0), max.or(self.cur_util.1));
        }
        if let Some(v) = self.task_latency_nice {
            self.outbox.push(Syscall::SetLatencyNice(v), Pending::None);
            self.cur_latency_nice = Some(v);
        }
        if let Some(g) = self.task_taskgroup {
            self.outbox.push(Syscall::SetTaskgroup(g), Pending::None);
            self.cur_taskgroup = Some(g);
        }
    }

    /// What rt-app does before each iteration: affinity, scheduling parameters, uclamp and
    /// task group of the current phase, each only where it changes something.
    fn prologue(&mut self, spec: &TaskSpec) {
        let phase = &spec.phases[self.phase];
        let src = match (&phase.cpus, &spec.cpus) {
            (Some(_), _) => AffinitySrc::Phase(self.phase),
            (None, Some(_)) => AffinitySrc::Task,
            (None, None) => AffinitySrc::Default,
        };
        // A mask is NR_CPUS bits, too big to build or compare per iteration: only when its
        // source changes.
        if self.affinity_src != src {
            if self.mask_of(spec, src) != self.mask_of(spec, self.affinity_src) {
                self.outbox.push(Syscall::SetAffinity, Pending::None);
            }
            self.affinity_src = src;
        }
        if let Some(p) = phase.params {
            if p != self.cur_params {
                self.outbox.push(Syscall::SetScheduler(p), Pending::None);
                self.cur_params = p;
            }
        }
        if self.cur_params.policy != Policy::Deadline {
            let min = phase.util_min.filter(|&v| Some(v) != self.cur_util.0);
            let max = phase.util_max.filter(|&v| Some(v) != self.cur_util.1);
            if min.is_some() || max.is_some() {
                self.outbox
                    .push(Syscall::SetUclamp { min, max }, Pending::None);
                self.cur_util = (min.or(self.cur_util.0), max.or(self.cur_util.1));
            }
        }
        if let Some(v) = phase.latency_nice {
            if Some(v) != self.cur_latency_nice {
                self.outbox.push(Syscall::SetLatencyNice(v), Pending::None);
                self.cur_latency_nice = Some(v);
            }
        }
        if let Some(g) = phase.taskgroup {
            if Some(g) != self.cur_taskgroup {
                self.outbox.push(Syscall::SetTaskgroup(g), Pending::None);
                self.cur_taskgroup = Some(g);
            }
        }
    }

    /// Starts one event: returns its first request, or `None` when it needs none (a
    /// missed timer, a zero duration) and the next event follows at once.
    fn event(&mut self, ev: Event, ctx: &mut UserCtx) -> Option<Syscall> {
        let now = ctx.now;
        let cpu_start = ctx.cputime_ns;
        let run_pending = |runtime| Pending::Run {
            start: now,
            cpu_start,
            runtime,
        };
        let (call, then) = match ev {
            Event::Run { us } => {
                self.iter.c_duration += us;
                self.iter.perf += us / self.p_load;
                if us == 0 {
                    return None;
                }
                let work = (us * 1000).saturating_mul(self.run_capacity);
                (Syscall::Run { work }, run_pending(false))
            }
            Event::Runtime { us } => {
                self.iter.c_duration += us;
                if us == 0 {
                    return None;
                }
                let until = now.saturating_add(us * 1000);
                (Syscall::RunUntil { until }, run_pending(true))
            }
            Event::Sleep { us } => {
                if us == 0 {
                    return None;
                }
                let until = now.saturating_add(us * 1000);
                (Syscall::SleepUntil { until }, Pending::None)
            }
            Event::Timer { timer, period_us } => return self.timer(timer, period_us, ctx),
            Event::Lock { mutex } => (Syscall::MutexLock(mutex), Pending::None),
            Event::Unlock { mutex } => (Syscall::MutexUnlock(mutex), Pending::None),
            Event::Wait { cond, mutex } => (Syscall::CondWait { cond, mutex }, Pending::None),
            Event::Signal { cond } => (Syscall::CondSignal(cond), Pending::None),
            Event::Broadcast { cond } => (Syscall::CondBroadcast(cond), Pending::None),
            Event::Sync { cond, mutex } => {
                self.outbox
                    .push(Syscall::CondWait { cond, mutex }, Pending::None);
                (Syscall::CondSignal(cond), Pending::None)
            }
            Event::Barrier { barrier } => (Syscall::Barrier(barrier), Pending::None),
            Event::Suspend { cond, mutex } => {
                self.outbox
                    .push(Syscall::CondWait { cond, mutex }, Pending::None);
                self.outbox.push(Syscall::MutexUnlock(mutex), Pending::None);
                (Syscall::MutexLock(mutex), Pending::None)
            }
            Event::Resume { cond, mutex } => {
                self.outbox
                    .push(Syscall::CondBroadcast(cond), Pending::None);
                self.outbox.push(Syscall::MutexUnlock(mutex), Pending::None);
                (Syscall::MutexLock(mutex), Pending::None)
            }
            Event::Yield => (Syscall::Yield, Pending::None),
            Event::Fork { task } => {
                if ctx.user.fork_limit > 0 && ctx.user.fork_requests[task] >= ctx.user.fork_limit {
                    ctx.user.fork_limit_hit = true;
                    self.pc = Pc::Done;
                    return Some(self.exit(now, ctx));
                }
                ctx.user.fork_requests[task] += 1;
                (Syscall::Fork { task }, Pending::None)
            }
            Event::Mem { bytes } => {
                let work = bytes * 1000 * 1024 / self.mem_bytes_per_us;
                if work == 0 {
                    return None;
                }
                (Syscall::Run { work }, Pending::None)
            }
            Event::MemChase { hops } => {
                // Both factors come from the file (up to 2^31 each): saturate.
                let work = hops
                    .saturating_mul(self.mem_chase_ns_per_hop)
                    .saturating_mul(1024);
                if work == 0 {
                    return None;
                }
                (Syscall::Run { work }, Pending::None)
            }
            Event::IoRun { service_ns, .. } => (Syscall::Io { service_ns }, Pending::None),
            Event::SemPost { sem } => (
                Syscall::MutexLock(ctx.user.sems[sem].0),
                Pending::SemPostLocked { sem },
            ),
            Event::SemWait { sem } => (
                Syscall::MutexLock(ctx.user.sems[sem].0),
                Pending::SemWaitCheck { sem },
            ),
            Event::Send { chan, bytes } => (Syscall::Send { chan, bytes }, Pending::None),
            Event::Recv { chan, max } => (Syscall::Recv { chan, max }, Pending::None),
        };
        self.pending = then;
        Some(call)
    }

    /// rt-app's `rtapp_timer` event.
    fn timer(&mut self, timer: usize, period_us: u64, ctx: &mut UserCtx) -> Option<Syscall> {
        let now = ctx.now;
        let state = match self.own_timers.binary_search_by_key(&timer, |t| t.0) {
            Ok(i) => &mut self.own_timers[i].1,
            Err(_) => &mut ctx.user.timers[timer],
        };
        if !state.armed {
            state.armed = true;
            state.t_next = self.t_first;
        } else if period_us > 0 {
            // The work of the period that started at the reference is done.
            self.response_time.record(now.saturating_sub(state.t_next));
        }
        state.t_next = state.t_next.saturating_add(period_us * 1000);
        let t_next = state.t_next;
        self.iter.c_period += period_us;
        let slack_ns = i64::try_from(i128::from(t_next) - i128::from(now)).unwrap_or(i64::MIN);
        let slack = round_us_signed(slack_ns);
        if self.cumulative_slack {
            self.iter.slack_us += slack;
        } else {
            self.iter.slack_us = slack;
        }
        if now < t_next {
            self.pending = Pending::TimerWake { t_next };
            return Some(Syscall::SleepUntil { until: t_next });
        }
        if state.relative {
            state.t_next = now;
        }
        self.iter.wu_lat_us = 0;
        // A period of 0 is how rt-app files switch a timer off, not a deadline.
        if now > t_next && period_us > 0 {
            self.deadline_misses += 1;
        }
        None
    }

    /// The thread's end (rt-app's `rtapp_task: event=end` is its last line).
    fn exit(&mut self, now: u64, ctx: &mut UserCtx) -> Syscall {
        if self.exited_at.is_none() {
            self.exited_at = Some(now);
            ctx.user.marks.task("end");
        }
        Syscall::Exit
    }

    /// The log row of the iteration ending at `now`.
    fn loop_record(&self, now: u64) -> LoopRecord {
        let start = round_us(self.iter.start_ns);
        LoopRecord {
            idx: self.index,
            perf: self.iter.perf,
            run: self.iter.run_us,
            period: round_us(now.saturating_sub(self.iter.start_ns)),
            start,
            end: round_us(now),
            rel_st: start,
            slack: self.iter.slack_us,
            c_duration: self.iter.c_duration,
            c_period: self.iter.c_period,
            wu_lat: self.iter.wu_lat_us,
        }
    }

    /// Writes the iteration's log row and its ftrace lines, and moves to the next
    /// iteration, phase or task loop.
    fn end_iteration(&mut self, phases: &[PhaseSpec], now: u64, marks: &mut Marks) {
        // The row exists for the log and the stats line, when either is on.
        let row = (self.logging || marks.wants_stats()).then(|| self.loop_record(now));
        if let Some(row) = row.filter(|_| self.logging) {
            self.log.push(row);
        }
        marks.phase_loop("end", self.thread_loop, self.phase, self.phase_loop);
        if let Some(row) = &row {
            marks.stats(row);
        }
        self.phase_loop += 1;
        if self.phase_loop == phases[self.phase].loop_count {
            self.phase_loop = 0;
            self.phase += 1;
            if self.phase == phases.len() {
                self.phase = 0;
                self.thread_loop += 1;
            }
        }
    }
}

/// ns to µs, rounded half away from zero like rt-app's `lround(ns / 1000.0)`.
fn round_us(ns: u64) -> u64 {
    ns / 1000 + u64::from(ns % 1000 >= 500)
}

fn round_us_signed(ns: i64) -> i64 {
    let mag = round_us(ns.unsigned_abs()) as i64;
    if ns < 0 {
        -mag
    } else {
        mag
    }
}

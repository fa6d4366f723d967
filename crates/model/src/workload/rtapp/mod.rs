//! rt-app's JSON workload grammar, read into a validated, index-resolved `Workload`.
//!
//! The grammar and its defaults are rt-app's (`doc/tutorial.txt`, `src/rt-app_parse_config.c`):
//!
//! - Top level: `tasks` (required), `global`, `resources` (legacy and ignored: rt-app creates
//!   resources from the events that name them).
//! - `global`: `duration` (s; ≤ 0 or absent: until every thread ended), `calibration`
//!   (`"CPUn"`, or an integer ns per loop; 0 means CPU0 as in rt-app; absent: work is counted
//!   at capacity 1024), `default_policy` (`SCHED_OTHER`), `cumulative_slack` (false),
//!   `pi_enabled` (false), `log_basename` (`rt-app`), `ftrace` (rt-app's categories of its own
//!   trace lines, `"main,task,loop,event,stats"` or `none`, or the deprecated `true` for all;
//!   written when the run is traced). `lock_pages`, `logdir`, `log_size`, `gnuplot`,
//!   `io_device` and `mem_buffer_size` are type-checked and ignored.
//! - Task: `instance` (1; 0 creates no thread, only a fork target), `loop` (-1 = forever),
//!   `delay` (µs after the use case started), `phases`, and the properties below. A task
//!   without `phases` is one phase; then its `loop` is the phase's loop and the task runs it
//!   once, or forever when `loop` is absent — so, as in rt-app, `"loop": 0` there means
//!   forever, while a task-level `"loop": 0` beside `phases` runs nothing.
//! - Task and phase properties: `loop` (phase: 1; ≤ 0 forever), `cpus`, `policy`, `priority`
//!   (nice for fair policies, default 0; 1..99 for FIFO/RR, default 10; ignored for
//!   DEADLINE), `dl-runtime`/`dl-period`/`dl-deadline` (µs; period defaults to runtime,
//!   deadline to period; at task level the legacy keys `runtime`, `period`, `deadline` are
//!   read too when the dl- ones are absent, beside `phases` as without them (an exact
//!   `runtime` key beside phases is not an event; in a phase-less task it is also its dl-runtime),
//!   the custom slice of a SCHED_OTHER task), `util_min`/`util_max` (-1 = unchanged),
//!   `taskgroup` (`"/a/b"`, `""` = none; fair policies only), `nodes_membind` (ignored).
//!   A phase changes only what it sets: a phase `priority` without `policy` keeps the policy
//!   in force when the phase is first entered.
//! - Events, recognised by prefix in rt-app's order (`run0`, `runtime-1`, `sleep_a` …), in file
//!   order with repeated keys kept: `run`, `runtime`, `sleep` (µs), `timer`
//!   (`{"ref", "period", "mode"}`), `lock`, `unlock`, `wait`/`sync` (`{"ref", "mutex"}`),
//!   `signal`, `broad`, `barrier`, `suspend` (value ignored: a thread suspends on its task's name), `resume` (the name
//!   threads suspend on, a wait resource as in rt-app), `yield`,
//!   `fork` (a task name), `mem` (bytes), `memrun` (`{"type", "size", "count", …}`), `iorun`
//!   (bytes), `sem_post`, `sem_wait`.
//!
//! What rt-app accepts and ignores is read as rt-app reads it and reported as a `Warning`
//! (file, JSON path, a "did you mean" when a known key is close): unknown keys anywhere
//! (`global.frag`, a dead key since 2014; a typo such as `slep`), a repeated property (the
//! last counts, as json-c keeps the last), events beside `phases` (rt-app reads events only
//! inside phases), and a `resume` or `signal` that no thread waits on (a no-op). `--strict`
//! makes the first warning an error. Errors that leave the rest readable are recorded and
//! reading goes on, so `check_workload` returns every problem of a file at once.
//!
//! schedlab extension keys (rt-app ignores them):
//! - `latency_nice` (task and phase, -20..19): the latency nice request of the thread.
//! - `process` (task, default false): each thread of the task is a process of its own, so
//!   switching to it switches address spaces (`switch_mm`), as forked hackbench senders.
//! - `working_set` (task, bytes, default 16 KiB): what the thread touches between
//!   switches, refilled from the LLC or memory after other tasks evicted it or a migration.
//! - `hrtimer_slack_ns` (task, ns, default `model.timer_slack_ns`): the thread's timer
//!   slack, as `prctl(PR_SET_TIMERSLACK)` sets it: a timed sleep (`timer`, `sleep`) of the
//!   thread while it is neither RT nor deadline may end this much late. (Not
//!   `timer_slack_ns`: rt-app reads every key that starts with `timer` as a timer event.)
//! - `io_service_us` (global, default 100): service time of one `iorun`, a blocking I/O
//!   spent in iowait. An `iorun` may also be an object `{"bytes": N, "service_us": T}`
//!   (both optional) to give one I/O its own service time.
//! - `mem_bytes_per_us` (global, default 4000, i.e. 4 GB/s at capacity 1024): the CPU work
//!   of `mem` and of `memrun` reads and writes, which rt-app runs as CPU loops.
//! - `mem_chase_ns_per_hop` (global, default 100, a DRAM access at capacity 1024): the CPU
//!   work of one `memrun` pointer-chase hop.
//! - `fork_limit` (global, default 1024 as rt-app's `FORKS_LIMIT`; 0: none): how many
//!   times one task may be forked.
//! - `threads_max` (global, default and at most 2^20 = `MAX_THREADS`): the most threads
//!   alive at once, as `/proc/sys/kernel/threads-max`: the instances add up to at most this,
//!   and a fork beyond it fails (EAGAIN), counted and reported as a warning.
//! - `pm_qos_cpu_dma_latency_us` (global, absent: no request): a `/dev/cpu_dma_latency`
//!   request held for the whole run, as cyclictest holds one (0 keeps every CPU in its
//!   first idle state).
//! - `generator` (global): the `schedlab gen` generator that wrote the file (`fio`,
//!   `forkloop`, …); the results then report its metric.
//! - `channels` (global): `{"name": {"kind": K, "capacity": bytes}}` declares IPC channels
//!   (`kernel/pipe.rs`): `pipe` (default), `unix` (AF_UNIX stream socket) and `tcp` are
//!   byte streams whose writers block while the buffer is full; `udp` datagrams and `futex`
//!   posts are dropped when it is full (capacity 0: only a waiting receiver gets one).
//!   Default capacity: 65536 (a pipe's 16 pages). A message takes its bytes of the
//!   capacity, at least 1.
//! - events `send` (`{"channel": name, "bytes": N}`) and `recv` (`{"channel": name}` or
//!   `{"channel": name, "bytes": max}`): write one message, blocking while the channel is
//!   full (or dropping it); read one datagram, or up to `bytes` of a stream (default: all
//!   queued), blocking while it is empty. Every channel needs a sender and a receiver.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::syscall::{Policy, SchedParams};
use super::thread::FORKS_LIMIT;
use super::warning::Warning;
use super::EventLabel;
use super::Generator;
use schedlab_base::error::InputError;
use schedlab_base::json::{self, quote, Value};
use schedlab_base::place::{self, did_you_mean, join};

mod events;
mod global;
mod parser;
mod resources;
mod task;

use events::*;
use parser::*;
use resources::*;

/// A parsed, validated rt-app workload. Events refer to resources by index into the tables
/// here; every table is in order of first appearance in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The file it came from, for messages.
    pub file: String,
    pub global: Global,
    /// In file order; a thread's task index is its position here.
    pub tasks: Vec<TaskSpec>,
    /// Mutexes: those of `lock`/`unlock`/`wait`/`sync`, one per task that is suspended or
    /// resumed (named after the task, as rt-app does), and one per semaphore.
    pub mutexes: Vec<String>,
    /// Condition variables: those of `wait`/`sync`/`signal`/`broad`, one per task that is
    /// suspended or resumed (named after the task), and one per semaphore.
    pub conds: Vec<String>,
    pub barriers: Vec<BarrierSpec>,
    pub timers: Vec<TimerSpec>,
    pub semaphores: Vec<SemSpec>,
    /// Task group paths such as `/tg1/tg11`, as written.
    pub taskgroups: Vec<String>,
    /// IPC channels (extension): declared in `global.channels` or named by `send`/`recv`.
    pub channels: Vec<ChannelSpec>,
    /// The workloads an experiment combined into this one (empty for a single workload):
    /// the results report each one's generator metric under its name.
    pub parts: Vec<Part>,
    /// What the file has that rt-app ignores (`Warning`), in file order; an experiment's
    /// combined workload holds those of all its workloads.
    pub warnings: Vec<Warning>,
}

/// Everything found in a file: the workload when it had no error, and every error and
/// warning (`schedlab check` prints them all).
#[derive(Debug, Clone)]
pub struct Checked {
    pub workload: Option<Workload>,
    pub errors: Vec<InputError>,
    pub warnings: Vec<Warning>,
}

impl Checked {
    /// The workload, or the first error.
    pub fn into_result(self) -> Result<Workload, InputError> {
        match (self.workload, self.errors.into_iter().next()) {
            (Some(w), None) => Ok(w),
            (_, Some(e)) => Err(e),
            (None, None) => unreachable!("a workload is missing only after an error"),
        }
    }

    fn error(e: InputError) -> Checked {
        Checked {
            workload: None,
            errors: vec![e],
            warnings: Vec::new(),
        }
    }
}

/// One of several workloads run together (`experiment.rs` combines them).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub name: String,
    /// What its task and resource names start with in the combined workload.
    pub prefix: String,
    pub generator: Option<super::Generator>,
}

/// What an IPC channel models (extension `global.channels`), which decides its semantics
/// and its CPU costs (`kernel/pipe.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// An anonymous pipe: a byte stream; writers block while it is full.
    Pipe,
    /// An AF_UNIX SOCK_STREAM socket pair: a byte stream; writers block while it is full.
    Unix,
    /// TCP over loopback: a byte stream; writers block while it is full (flow control).
    Tcp,
    /// UDP over loopback: datagrams, dropped when the receive buffer is full.
    Udp,
    /// A futex word: a post wakes a waiter, or is kept while there is room, else lost.
    Futex,
}

impl ChannelKind {
    pub const NAMES: &'static [&'static str] = &["pipe", "unix", "tcp", "udp", "futex"];

    pub fn parse(s: &str) -> Option<ChannelKind> {
        match s {
            "pipe" => Some(ChannelKind::Pipe),
            "unix" => Some(ChannelKind::Unix),
            "tcp" => Some(ChannelKind::Tcp),
            "udp" => Some(ChannelKind::Udp),
            "futex" => Some(ChannelKind::Futex),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChannelKind::Pipe => "pipe",
            ChannelKind::Unix => "unix",
            ChannelKind::Tcp => "tcp",
            ChannelKind::Udp => "udp",
            ChannelKind::Futex => "futex",
        }
    }

    /// Byte streams (a read takes any number of queued bytes) rather than messages.
    pub fn is_stream(self) -> bool {
        matches!(
            self,
            ChannelKind::Pipe | ChannelKind::Unix | ChannelKind::Tcp
        )
    }

    /// Whether a send that does not fit is dropped (else the sender blocks).
    pub fn drops_when_full(self) -> bool {
        !self.is_stream()
    }
}

/// One IPC channel (extension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelSpec {
    pub name: String,
    pub kind: ChannelKind,
    /// Bytes (units for futex posts) queued before a writer blocks or a message is dropped.
    pub capacity: u64,
}

/// Default channel capacity: a pipe's 16 pages.
pub const DEFAULT_CHANNEL_CAPACITY: u64 = 65536;

/// The `global` object.
#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    /// How long the use case runs; `None` when until every thread has ended.
    pub duration_ns: Option<u64>,
    pub calibration: Calibration,
    pub default_policy: Policy,
    /// Whether mutexes use priority inheritance.
    pub pi_enabled: bool,
    /// Whether a phase's log slack sums all its timers' slacks instead of keeping the last.
    pub cumulative_slack: bool,
    /// Prefix of the per-thread log files (`<basename>-<thread>.log`).
    pub log_basename: String,
    /// Service time of one `iorun` (extension `io_service_us`).
    pub io_service_ns: u64,
    /// Bytes that `mem` writes per µs at capacity 1024 (extension `mem_bytes_per_us`).
    pub mem_bytes_per_us: u64,
    /// Time of one `memrun` chase hop at capacity 1024 (extension `mem_chase_ns_per_hop`).
    pub mem_chase_ns_per_hop: u64,
    /// The `schedlab gen` generator that wrote the file (extension `generator`): the
    /// results then carry its metric under `"workload"`.
    pub generator: Option<Generator>,
    /// How many times one task may be forked before rt-app gives up (extension
    /// `fork_limit`; rt-app's `FORKS_LIMIT` of 1024 by default, 0 for no limit).
    pub fork_limit: u32,
    /// The most threads alive at once (extension `threads_max`, `/proc/sys/kernel/threads-max`;
    /// default and largest `MAX_THREADS`): the tasks' instances may add up to it, and a fork
    /// beyond it fails with EAGAIN, counted (`Kernel::fork_failures`) while the run goes on.
    pub threads_max: u32,
    /// A `/dev/cpu_dma_latency` request held for the whole run, µs (extension
    /// `pm_qos_cpu_dma_latency_us`, as cyclictest writes 0 unless `--laptop`).
    pub pm_qos_cpu_dma_latency_us: Option<u64>,
    /// The categories of rt-app's own ftrace lines (`ftrace`; none by default).
    pub ftrace: crate::workload::FtraceCategories,
}

/// How `run` durations turn into work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibration {
    /// `"CPUn"`: µs of run at CPU n's highest OPP.
    Cpu(usize),
    /// An integer: rt-app's ns per loop, skipping calibration; work is counted at capacity
    /// 1024 and the number only scales the log's `perf` column.
    LoopNs(u64),
    /// No calibration key: µs at capacity 1024.
    None,
}

/// One task object: the template of `instances` threads (and of forked ones).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSpec {
    pub name: String,
    /// Threads created at start.
    pub instances: u32,
    /// Times the phases run; -1 forever.
    pub loop_count: i64,
    /// Delay of the start, counted from the start of the use case.
    pub delay_ns: u64,
    /// Policy and priority set when the thread starts.
    pub params: SchedParams,
    /// Affinity for phases that set none; `None`: all CPUs.
    pub cpus: Option<Vec<usize>>,
    /// uclamp requests set at start; `None` leaves the default.
    pub util_min: Option<i32>,
    pub util_max: Option<i32>,
    /// Index into `Workload::taskgroups` joined at start.
    pub taskgroup: Option<usize>,
    /// Extension: latency nice.
    pub latency_nice: Option<i32>,
    /// Extension `process`: each thread is a process of its own (an address space of its
    /// own, as forked hackbench senders); default: a thread of rt-app's process.
    pub own_process: bool,
    /// Extension `working_set` (bytes): what the thread touches between switches, refilled
    /// after other tasks evicted it or a migration (default [`DEFAULT_WORKING_SET`]).
    pub working_set: u64,
    /// Extension `hrtimer_slack_ns`: the thread's `prctl(PR_SET_TIMERSLACK)`; absent: the
    /// model's default (`model.timer_slack_ns`), or a forked thread's parent's.
    pub timer_slack_ns: Option<u64>,
    /// At least one.
    pub phases: Vec<PhaseSpec>,
}

/// A thread's working set when the file gives none: 16 KiB, half an L1D of the cores the
/// presets model (its stack, the rt-app loop's data, the kernel objects it touches).
pub const DEFAULT_WORKING_SET: u64 = 16 * 1024;

/// One phase: its events run `loop_count` times in a row; properties apply on entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSpec {
    /// The key in `phases`, or the task name for a task without `phases`.
    pub name: String,
    /// -1 forever.
    pub loop_count: i64,
    /// At least one, in file order.
    pub events: Vec<Event>,
    /// How rt-app's `rtapp_event` lines name each of `events` (shared by the threads).
    pub labels: Arc<[EventLabel]>,
    /// Affinity while in this phase; `None`: the task's.
    pub cpus: Option<Vec<usize>>,
    /// Scheduling parameters set on entry, fully resolved; `None` keeps the current ones.
    pub params: Option<SchedParams>,
    /// uclamp requests set on entry; `None` keeps the current one.
    pub util_min: Option<i32>,
    pub util_max: Option<i32>,
    /// Task group joined on entry; `None` stays.
    pub taskgroup: Option<usize>,
    /// Extension: latency nice set on entry.
    pub latency_nice: Option<i32>,
}

/// One rt-app event, with resources resolved to indices into the `Workload` tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Calibrated work: µs at the calibration CPU's highest OPP.
    Run {
        us: u64,
    },
    /// Wall time spent running.
    Runtime {
        us: u64,
    },
    Sleep {
        us: u64,
    },
    /// Wait for the next period of a timer (`Workload::timers`).
    Timer {
        timer: usize,
        period_us: u64,
    },
    Lock {
        mutex: usize,
    },
    Unlock {
        mutex: usize,
    },
    /// `pthread_cond_wait` (the mutex must be held, as in rt-app).
    Wait {
        cond: usize,
        mutex: usize,
    },
    Signal {
        cond: usize,
    },
    Broadcast {
        cond: usize,
    },
    /// Signal the condition, then wait on it.
    Sync {
        cond: usize,
        mutex: usize,
    },
    Barrier {
        barrier: usize,
    },
    /// Wait on the thread's own task condition under its own task mutex.
    Suspend {
        cond: usize,
        mutex: usize,
    },
    /// Broadcast the named task's condition under its mutex.
    Resume {
        cond: usize,
        mutex: usize,
    },
    Yield,
    Fork {
        task: usize,
    },
    /// CPU work writing or reading `bytes` of memory.
    Mem {
        bytes: u64,
    },
    /// CPU work of `hops` dependent loads.
    MemChase {
        hops: u64,
    },
    /// One blocking I/O.
    IoRun {
        bytes: u64,
        service_ns: u64,
    },
    SemPost {
        sem: usize,
    },
    SemWait {
        sem: usize,
    },
    /// Write one message of `bytes` to a channel (extension).
    Send {
        chan: usize,
        bytes: u64,
    },
    /// Read one datagram, or up to `max` bytes of a stream, from a channel (extension).
    Recv {
        chan: usize,
        max: u64,
    },
}

/// A barrier and the number of threads that must reach it: the instances of every task that
/// uses it, counted when the file is read (which is why rt-app forbids barriers in forked
/// tasks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierSpec {
    pub name: String,
    pub participants: u32,
}

/// A timer. Named timers are shared by every thread that uses them; a `ref` starting with
/// `unique` names a timer private to each thread of one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimerSpec {
    pub name: String,
    /// The task whose threads each have their own copy (a `unique…` ref).
    pub unique_to: Option<usize>,
    /// Absolute mode: a missed period keeps the reference, so later periods stay in phase.
    pub absolute: bool,
}

/// A counting semaphore (`sem_post`/`sem_wait`), built from a mutex and a condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemSpec {
    pub name: String,
    pub mutex: usize,
    pub cond: usize,
}

/// Default `io_service_us`: a fast flash random read.
pub const DEFAULT_IO_SERVICE_US: u64 = 100;
/// Default `mem_bytes_per_us`: memset bandwidth of a big mobile core, 4 GB/s.
pub const DEFAULT_MEM_BYTES_PER_US: u64 = 4000;
/// Default `mem_chase_ns_per_hop`: a DRAM access, which a random chase is made to cause.
pub const DEFAULT_MEM_CHASE_NS_PER_HOP: u64 = 100;

/// rt-app reads integers as C `int`.
const INT_MAX: i64 = i32::MAX as i64;

/// The most threads alive at once (`global.threads_max`'s default and largest value), the
/// instances and forked threads together: 2^20, a million threads, as a large server runs
/// (v6.1's `PID_MAX_LIMIT` is 4M on 64 bits, `threads-max` lower still on most machines);
/// more would take the simulator minutes to set up before simulating anything.
pub const MAX_THREADS: i64 = 1 << 20;

impl Workload {
    /// The threads created at start, in rt-app's creation order: each task's instances in
    /// file order. A thread's rt-app index is its position in this list.
    pub fn initial_threads(&self) -> Vec<(usize, u32)> {
        self.tasks
            .iter()
            .enumerate()
            .flat_map(|(t, spec)| (0..spec.instances).map(move |i| (t, i)))
            .collect()
    }

    /// `--strict`: the first warning, as an error.
    pub fn check_strict(&self) -> Result<(), InputError> {
        match self.warnings.first() {
            Some(w) => Err(w.clone().into_error()),
            None => Ok(()),
        }
    }

    /// Checks what depends on the platform: CPU numbers in `cpus` and the calibration CPU.
    pub fn check_platform(&self, nr_cpus: usize) -> Result<(), InputError> {
        let bad = |place: String, cpu: usize| {
            InputError::new(
                &self.file,
                place,
                format!("a CPU number below {nr_cpus}, the platform's CPU count"),
                cpu.to_string(),
            )
        };
        if let Calibration::Cpu(c) = self.global.calibration {
            if c >= nr_cpus {
                return Err(bad("global.calibration".to_string(), c));
            }
        }
        for t in &self.tasks {
            if let Some(&c) = t.cpus.iter().flatten().find(|&&c| c >= nr_cpus) {
                return Err(bad(format!("tasks.{}.cpus", t.name), c));
            }
            for p in &t.phases {
                if let Some(&c) = p.cpus.iter().flatten().find(|&&c| c >= nr_cpus) {
                    return Err(bad(format!("tasks.{}.phases.{}.cpus", t.name, p.name), c));
                }
            }
        }
        Ok(())
    }
}

/// Reads a workload file. The caller handles `-` (standard input) with `parse_workload`.
pub fn load_workload(path: &Path) -> Result<Workload, InputError> {
    check_file(path).into_result()
}

/// Reads a workload file, keeping every problem found (see `check_workload`).
pub fn check_file(path: &Path) -> Checked {
    let file = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return Checked::error(InputError::new(
                &file,
                "file",
                "a readable file",
                e.to_string(),
            ))
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => check_workload(&text, &file),
        Err(e) => {
            // json-c does not check UTF-8 (no JSON_TOKENER_VALIDATE_UTF8), so rt-app reads
            // such a file; the bad bytes are read as U+FFFD, with a warning at the first.
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let before = String::from_utf8_lossy(good);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let warning = Warning {
                file: file.clone(),
                place: format!("line {line} column {column}"),
                found: "a byte that is not UTF-8".to_string(),
                effect: "read as U+FFFD, as json-c does not check UTF-8".to_string(),
                expected: "UTF-8 text".to_string(),
                suggestion: None,
            };
            let mut checked = check_workload(&String::from_utf8_lossy(e.as_bytes()), &file);
            checked.warnings.insert(0, warning.clone());
            if let Some(w) = &mut checked.workload {
                w.warnings.insert(0, warning);
            }
            checked
        }
    }
}

/// Parses and validates rt-app JSON text; `file` names it in messages. The first error,
/// if any; warnings are in `Workload::warnings`.
pub fn parse_workload(text: &str, file: &str) -> Result<Workload, InputError> {
    check_workload(text, file).into_result()
}

/// Parses and validates rt-app JSON text, recording every error it can recover from (a
/// JSON syntax error stops it: it is the only one then) and every warning.
pub fn check_workload(text: &str, file: &str) -> Checked {
    match json::parse_json_c(text) {
        Ok((root, rest)) => {
            let mut parser = Parser::new(file, &root);
            if let Some(pos) = rest {
                parser.warn(
                    &format!("line {} column {}", pos.line, pos.column),
                    "text after the top-level object".to_string(),
                    "ignored, as json-c stops reading there",
                    "end of input after the top-level value",
                    None,
                );
            }
            parser.workload()
        }
        Err(e) => Checked::error(place::json_syntax_error(file, e)),
    }
}

//! rt-app's JSON workload grammar, read into a validated, index-resolved `Workload`.
//!
//! The grammar and its defaults are rt-app's (`doc/tutorial.txt`, `src/rt-app_parse_config.c`):
//!
//! - Top level: `tasks` (required), `global`, `resources` (legacy and ignored: rt-app creates
//!   resources from the events that name them).
//! - `global`: `duration` (s; ≤ 0 or absent: until every thread ended), `calibration`
//!   (`"CPUn"`, or an integer ns per loop; 0 means CPU0 as in rt-app; absent: work is counted
//!   at capacity 1024), `default_policy` (`SCHED_OTHER`), `cumulative_slack` (false),
//!   `pi_enabled` (false), `log_basename` (`rt-app`). `lock_pages`, `logdir`, `log_size`,
//!   `ftrace`, `gnuplot`, `io_device` and `mem_buffer_size` are type-checked and ignored.
//! - Task: `instance` (1; 0 creates no thread, only a fork target), `loop` (-1 = forever),
//!   `delay` (µs after the use case started), `phases`, and the properties below. A task
//!   without `phases` is one phase; then its `loop` is the phase's loop and the task runs it
//!   once, or forever when `loop` is absent — so, as in rt-app, `"loop": 0` there means
//!   forever, while a task-level `"loop": 0` beside `phases` runs nothing.
//! - Task and phase properties: `loop` (phase: 1; ≤ 0 forever), `cpus`, `policy`, `priority`
//!   (nice for fair policies, default 0; 1..99 for FIFO/RR, default 10; ignored for
//!   DEADLINE), `dl-runtime`/`dl-period`/`dl-deadline` (µs; period defaults to runtime,
//!   deadline to period; at task level the legacy keys `runtime`, `period`, `deadline` are
//!   read too, so an exact `runtime` event key in a phase-less task is also its dl-runtime,
//!   the custom slice of a SCHED_OTHER task), `util_min`/`util_max` (-1 = unchanged),
//!   `taskgroup` (`"/a/b"`, `""` = none; fair policies only), `nodes_membind` (ignored).
//!   A phase changes only what it sets: a phase `priority` without `policy` keeps the policy
//!   in force when the phase is first entered.
//! - Events, recognised by prefix in rt-app's order (`run0`, `runtime-1`, `sleep_a` …), in file
//!   order with repeated keys kept: `run`, `runtime`, `sleep` (µs), `timer`
//!   (`{"ref", "period", "mode"}`), `lock`, `unlock`, `wait`/`sync` (`{"ref", "mutex"}`),
//!   `signal`, `broad`, `barrier`, `suspend` (value ignored), `resume` (a task name), `yield`,
//!   `fork` (a task name), `mem` (bytes), `memrun` (`{"type", "size", "count", …}`), `iorun`
//!   (bytes), `sem_post`, `sem_wait`.
//!
//! Unknown keys are errors (rt-app silently ignores them, which hides typos such as `slep`).
//!
//! schedlab extension keys (rt-app ignores them):
//! - `latency_nice` (task and phase, -20..19): the latency nice request of the thread.
//! - `io_service_us` (global, default 100): service time of one `iorun`, a blocking I/O
//!   spent in iowait. An `iorun` may also be an object `{"bytes": N, "service_us": T}`
//!   (both optional) to give one I/O its own service time.
//! - `mem_bytes_per_us` (global, default 4000, i.e. 4 GB/s at capacity 1024): the CPU work
//!   of `mem` and of `memrun` reads and writes, which rt-app runs as CPU loops.
//! - `mem_chase_ns_per_hop` (global, default 100, a DRAM access at capacity 1024): the CPU
//!   work of one `memrun` pointer-chase hop.
//! - `fork_limit` (global, default 1024 as rt-app's `FORKS_LIMIT`; 0: none): how many
//!   times one task may be forked.
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

use super::gen::Generator;
use super::json::{self, quote, Value};
use super::syscall::{Policy, SchedParams};
use super::thread::FORKS_LIMIT;
use crate::error::InputError;

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
}

/// One of several workloads run together (`experiment.rs` combines them).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub name: String,
    /// What its task and resource names start with in the combined workload.
    pub prefix: String,
    pub generator: Option<super::gen::Generator>,
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
    /// At least one.
    pub phases: Vec<PhaseSpec>,
}

/// One phase: its events run `loop_count` times in a row; properties apply on entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSpec {
    /// The key in `phases`, or the task name for a task without `phases`.
    pub name: String,
    /// -1 forever.
    pub loop_count: i64,
    /// At least one, in file order.
    pub events: Vec<Event>,
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

/// The most threads a workload's `instance` counts may add up to: 2^20, a million threads, as
/// a large server runs (v6.1's `PID_MAX_LIMIT` is 4M on 64 bits, `threads-max` lower still on
/// most machines); more would take the simulator minutes to set up before simulating anything.
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
    let file = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(&file, "file", "a readable file", e.to_string()))?;
    match String::from_utf8(bytes) {
        Ok(text) => parse_workload(&text, &file),
        Err(e) => {
            let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let text = String::from_utf8_lossy(good);
            let line = text.matches('\n').count() + 1;
            let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Err(InputError::new(
                &file,
                format!("line {line} column {column}"),
                "UTF-8 text",
                "a byte that is not UTF-8",
            ))
        }
    }
}

/// Parses and validates rt-app JSON text; `file` names it in messages.
pub fn parse_workload(text: &str, file: &str) -> Result<Workload, InputError> {
    let root = json::parse(text).map_err(|e| {
        InputError::new(
            file,
            format!("line {} column {}", e.pos.line, e.pos.column),
            e.expected,
            e.found,
        )
    })?;
    Parser::new(file).workload(&root)
}

/// The event kinds, found by key prefix in the order rt-app's parser tries them (so that
/// `runtime` is not `run`, and `memrun` is not `mem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Run,
    Runtime,
    Sleep,
    MemRun,
    Mem,
    IoRun,
    Lock,
    Unlock,
    Signal,
    Broad,
    Wait,
    Sync,
    Barrier,
    Timer,
    Resume,
    Suspend,
    Yield,
    Fork,
    SemPost,
    SemWait,
    Send,
    Recv,
}

fn event_kind(key: &str) -> Option<Kind> {
    const PREFIXES: [(&str, Kind); 22] = [
        ("runtime", Kind::Runtime),
        ("run", Kind::Run),
        ("sleep", Kind::Sleep),
        ("memrun", Kind::MemRun),
        ("mem", Kind::Mem),
        ("iorun", Kind::IoRun),
        ("lock", Kind::Lock),
        ("unlock", Kind::Unlock),
        ("signal", Kind::Signal),
        ("broad", Kind::Broad),
        ("wait", Kind::Wait),
        ("sync", Kind::Sync),
        ("barrier", Kind::Barrier),
        ("timer", Kind::Timer),
        ("resume", Kind::Resume),
        ("suspend", Kind::Suspend),
        ("yield", Kind::Yield),
        ("fork", Kind::Fork),
        ("sem_post", Kind::SemPost),
        ("sem_wait", Kind::SemWait),
        ("send", Kind::Send),
        ("recv", Kind::Recv),
    ];
    PREFIXES
        .iter()
        .find(|(p, _)| key.starts_with(p))
        .map(|&(_, k)| k)
}

const EVENT_LIST: &str = "run, runtime, sleep, timer, lock, unlock, wait, signal, broad, \
                          sync, barrier, suspend, resume, yield, fork, mem, memrun, iorun, \
                          sem_post, sem_wait, send, recv";
const TASK_KEYS: &[&str] = &[
    "instance",
    "loop",
    "delay",
    "phases",
    "cpus",
    "nodes_membind",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "period",
    "deadline",
    "util_min",
    "util_max",
    "taskgroup",
    "latency_nice",
];
const PHASE_KEYS: &[&str] = &[
    "loop",
    "cpus",
    "nodes_membind",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "taskgroup",
    "latency_nice",
];
const GLOBAL_KEYS: &[&str] = &[
    "duration",
    "calibration",
    "default_policy",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
    "io_service_us",
    "mem_bytes_per_us",
    "mem_chase_ns_per_hop",
    "generator",
    "fork_limit",
    "channels",
];

type Members = [(String, Value, json::Pos)];

/// Names in first-appearance order with a lookup by (name space, name): a semaphore's
/// internal mutex must not be a user mutex of the same name, nor a task's unique timer
/// another task's.
#[derive(Default)]
struct Table {
    names: Vec<String>,
    index: HashMap<(usize, String), usize>,
}

/// The name space of resources that the file names directly.
const USER: usize = 0;
/// The name space of the mutexes and conditions that implement semaphores.
const SEMAPHORE: usize = 1;

impl Table {
    /// The index of `name` in `space`, adding it (shown as `shown`) when new.
    fn intern(&mut self, space: usize, name: &str, shown: &str) -> usize {
        if let Some(&i) = self.index.get(&(space, name.to_string())) {
            return i;
        }
        self.names.push(shown.to_string());
        self.index
            .insert((space, name.to_string()), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The index of a name the file gives directly.
    fn named(&mut self, name: &str) -> usize {
        self.intern(USER, name, name)
    }
}

/// A reference checked once the whole file is read: it must name something that another
/// event makes meaningful (a resume must reach a waiter, an unlock a locked mutex…).
enum Deferred {
    Resume {
        cond: usize,
        name: String,
        place: String,
    },
    Signal {
        cond: usize,
        name: String,
        place: String,
    },
    Unlock {
        mutex: usize,
        name: String,
        place: String,
    },
    SemWait {
        sem: usize,
        name: String,
        place: String,
    },
    /// A channel one side of which is never used.
    Channel {
        chan: usize,
        send: bool,
        place: String,
    },
}

struct Parser<'a> {
    file: &'a str,
    global: Global,
    task_index: HashMap<String, usize>,
    task_instances: Vec<u32>,
    mutexes: Table,
    conds: Table,
    barriers: Table,
    barrier_participants: Vec<u32>,
    /// (barrier, task, place) of each use, to refuse uses in forked tasks.
    barrier_uses: Vec<(usize, usize, String)>,
    timers: Table,
    timer_specs: Vec<TimerSpec>,
    sems: Table,
    sem_specs: Vec<SemSpec>,
    taskgroups: Table,
    /// Conditions something waits on, mutexes something locks, semaphores something posts.
    cond_waited: HashSet<usize>,
    mutex_locked: HashSet<usize>,
    sem_posted: HashSet<usize>,
    forked: HashSet<usize>,
    deferred: Vec<Deferred>,
    channels: Table,
    channel_specs: Vec<ChannelSpec>,
    /// Channels something sends to, and receives from.
    chan_sent: HashSet<usize>,
    chan_received: HashSet<usize>,
}

/// The scheduling keys of one task or phase object, as written.
#[derive(Default)]
struct SchedKeys {
    policy: Option<Policy>,
    priority: Option<i64>,
    dl_runtime: Option<u64>,
    dl_period: Option<u64>,
    dl_deadline: Option<u64>,
    util_min: Option<i32>,
    util_max: Option<i32>,
}

impl<'a> Parser<'a> {
    fn new(file: &'a str) -> Self {
        Parser {
            file,
            global: Global {
                duration_ns: None,
                calibration: Calibration::None,
                default_policy: Policy::Other,
                pi_enabled: false,
                cumulative_slack: false,
                log_basename: "rt-app".to_string(),
                io_service_ns: DEFAULT_IO_SERVICE_US * 1000,
                mem_bytes_per_us: DEFAULT_MEM_BYTES_PER_US,
                mem_chase_ns_per_hop: DEFAULT_MEM_CHASE_NS_PER_HOP,
                generator: None,
                fork_limit: FORKS_LIMIT,
            },
            task_index: HashMap::new(),
            task_instances: Vec::new(),
            mutexes: Table::default(),
            conds: Table::default(),
            barriers: Table::default(),
            barrier_participants: Vec::new(),
            barrier_uses: Vec::new(),
            timers: Table::default(),
            timer_specs: Vec::new(),
            sems: Table::default(),
            sem_specs: Vec::new(),
            taskgroups: Table::default(),
            cond_waited: HashSet::new(),
            mutex_locked: HashSet::new(),
            sem_posted: HashSet::new(),
            forked: HashSet::new(),
            deferred: Vec::new(),
            channels: Table::default(),
            channel_specs: Vec::new(),
            chan_sent: HashSet::new(),
            chan_received: HashSet::new(),
        }
    }

    fn err(
        &self,
        place: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> InputError {
        InputError::new(self.file, place, expected, found)
    }

    fn workload(mut self, root: &Value) -> Result<Workload, InputError> {
        let Value::Object(top) = root else {
            return Err(self.err("top level", "a JSON object", root.describe()));
        };
        let top = self.properties(
            top,
            "",
            &["tasks", "global", "resources"],
            "a top-level key: tasks, global or resources",
        )?;
        if let Some(g) = top.get("global") {
            self.parse_global(g)?;
        }
        let Some(tasks) = top.get("tasks") else {
            return Err(self.err("top level", "a \"tasks\" object", "none"));
        };
        let Value::Object(tasks) = tasks else {
            return Err(self.err("tasks", "an object of tasks", tasks.describe()));
        };
        if tasks.is_empty() {
            return Err(self.err("tasks", "at least one task", "an empty object"));
        }
        // First pass: names and instance counts, which fork, resume and barrier need before
        // the task that defines them has been read.
        let mut objects = Vec::with_capacity(tasks.len());
        for (name, v, _) in tasks {
            let place = format!("tasks.{name}");
            if self.task_index.contains_key(name.as_str()) {
                return Err(self.err(
                    &place,
                    "each task name once",
                    format!("a second {}", quote(name)),
                ));
            }
            let Value::Object(m) = v else {
                return Err(self.err(&place, "a task object", v.describe()));
            };
            let instances = match m.iter().rev().find(|(k, _, _)| k == "instance") {
                Some((_, v, _)) => self.int_in(
                    v,
                    &format!("{place}.instance"),
                    0,
                    MAX_THREADS,
                    "a number of threads",
                )? as u32,
                None => 1,
            };
            let total: i64 = self.task_instances.iter().map(|&n| i64::from(n)).sum();
            if total + i64::from(instances) > MAX_THREADS {
                return Err(self.err(
                    &format!("{place}.instance"),
                    format!("at most {MAX_THREADS} threads in all the tasks' instances"),
                    format!("{}", total + i64::from(instances)),
                ));
            }
            self.task_index
                .insert(name.clone(), self.task_instances.len());
            self.task_instances.push(instances);
            objects.push((name, m));
        }
        let mut specs = Vec::with_capacity(objects.len());
        for (t, (name, m)) in objects.into_iter().enumerate() {
            specs.push(self.task(t, name, m)?);
        }
        self.finish(specs)
    }

    fn finish(self, tasks: Vec<TaskSpec>) -> Result<Workload, InputError> {
        for d in &self.deferred {
            match d {
                Deferred::Resume { cond, name, place } => {
                    if !self.task_index.contains_key(name) && !self.cond_waited.contains(cond) {
                        return Err(self.err(
                            place,
                            "the name of a task (resume wakes its threads suspended on it)",
                            quote(name),
                        ));
                    }
                }
                Deferred::Signal { cond, name, place } => {
                    if !self.cond_waited.contains(cond) {
                        return Err(self.err(
                            place,
                            "a condition that a wait, sync or suspend event waits on",
                            quote(name),
                        ));
                    }
                }
                Deferred::Unlock { mutex, name, place } => {
                    if !self.mutex_locked.contains(mutex) {
                        return Err(self.err(
                            place,
                            "a mutex that a lock, wait or sync event takes",
                            quote(name),
                        ));
                    }
                }
                Deferred::SemWait { sem, name, place } => {
                    if !self.sem_posted.contains(sem) {
                        return Err(self.err(
                            place,
                            "a semaphore that a sem_post event posts",
                            quote(name),
                        ));
                    }
                }
                Deferred::Channel { chan, send, place } => {
                    let (other, what) = if *send {
                        (&self.chan_received, "a recv")
                    } else {
                        (&self.chan_sent, "a send")
                    };
                    if !other.contains(chan) {
                        return Err(self.err(
                            place,
                            format!("a channel that {what} event also uses"),
                            quote(&self.channel_specs[*chan].name),
                        ));
                    }
                }
            }
        }
        for (b, task, place) in &self.barrier_uses {
            if self.forked.contains(task) {
                let barrier = quote(&self.barriers.names[*b]);
                let task = quote(&tasks[*task].name);
                return Err(self.err(
                    place,
                    "barriers only in tasks that no fork event creates \
                     (rt-app counts a barrier's threads at start)",
                    format!("barrier {barrier} in forked task {task}"),
                ));
            }
        }
        let barriers = self
            .barriers
            .names
            .into_iter()
            .zip(self.barrier_participants)
            .map(|(name, participants)| BarrierSpec { name, participants })
            .collect();
        Ok(Workload {
            file: self.file.to_string(),
            global: self.global,
            tasks,
            mutexes: self.mutexes.names,
            conds: self.conds.names,
            barriers,
            timers: self.timer_specs,
            semaphores: self.sem_specs,
            taskgroups: self.taskgroups.names,
            channels: self.channel_specs,
            parts: Vec::new(),
        })
    }

    /// Splits an object's known keys into a map, refusing unknown and repeated ones.
    fn properties<'v>(
        &self,
        m: impl IntoIterator<Item = &'v (String, Value, json::Pos)>,
        base: &str,
        allowed: &[&str],
        expected: &str,
    ) -> Result<HashMap<&'v str, &'v Value>, InputError> {
        let mut map = HashMap::new();
        for (k, v, _) in m {
            let place = join(base, k);
            if !allowed.contains(&k.as_str()) {
                return Err(self.err(&place, expected, format!("unknown key {}", quote(k))));
            }
            if map.insert(k.as_str(), v).is_some() {
                return Err(self.err(
                    &place,
                    "each property once",
                    format!("a second {}", quote(k)),
                ));
            }
        }
        Ok(map)
    }

    fn parse_global(&mut self, g: &Value) -> Result<(), InputError> {
        let Value::Object(m) = g else {
            return Err(self.err("global", "an object", g.describe()));
        };
        let p = self.properties(
            m,
            "global",
            GLOBAL_KEYS,
            "a global key (duration, calibration, default_policy, …)",
        )?;
        for (&k, &v) in &p {
            let place = format!("global.{k}");
            match k {
                "duration" => {
                    let s = self.int_in(v, &place, i64::MIN, INT_MAX, "a duration in seconds")?;
                    self.global.duration_ns = (s > 0).then(|| s as u64 * 1_000_000_000);
                }
                "calibration" => self.global.calibration = self.calibration(v, &place)?,
                "default_policy" => self.global.default_policy = self.policy(v, &place)?,
                "pi_enabled" => self.global.pi_enabled = self.boolean(v, &place)?,
                "cumulative_slack" => self.global.cumulative_slack = self.boolean(v, &place)?,
                "log_basename" => self.global.log_basename = self.string(v, &place)?.to_string(),
                "lock_pages" | "gnuplot" => {
                    self.boolean(v, &place)?;
                }
                "logdir" | "io_device" => {
                    self.string(v, &place)?;
                }
                "log_size" => {
                    if !matches!(v, Value::Int(_) | Value::Str(_)) {
                        return Err(self.err(
                            &place,
                            "a size in MB or \"file\", \"disable\" or \"auto\"",
                            v.describe(),
                        ));
                    }
                }
                "ftrace" => {
                    if !matches!(v, Value::Bool(_) | Value::Str(_)) {
                        return Err(self.err(&place, "a list of ftrace categories", v.describe()));
                    }
                }
                "mem_buffer_size" => {
                    self.int_in(v, &place, 1, INT_MAX, "a buffer size in bytes")?;
                }
                "generator" => {
                    let name = self.string(v, &place)?;
                    let g = Generator::parse(name).ok_or_else(|| {
                        self.err(
                            &place,
                            format!("one of {}", Generator::NAMES.join(", ")),
                            quote(name),
                        )
                    })?;
                    self.global.generator = Some(g);
                }
                "fork_limit" => {
                    self.global.fork_limit = self.int_in(
                        v,
                        &place,
                        0,
                        u32::MAX as i64,
                        "a number of forks (0: no limit)",
                    )? as u32;
                }
                "io_service_us" => {
                    self.global.io_service_ns =
                        self.int_in(v, &place, 0, INT_MAX, "a service time in µs")? as u64 * 1000;
                }
                "mem_bytes_per_us" => {
                    self.global.mem_bytes_per_us =
                        self.int_in(v, &place, 1, INT_MAX, "a rate in bytes per µs")? as u64;
                }
                "mem_chase_ns_per_hop" => {
                    self.global.mem_chase_ns_per_hop =
                        self.int_in(v, &place, 0, INT_MAX, "a time in ns")? as u64;
                }
                "channels" => self.parse_channels(v, &place)?,
                _ => unreachable!("properties() admits only GLOBAL_KEYS"),
            }
        }
        Ok(())
    }

    fn calibration(&self, v: &Value, place: &str) -> Result<Calibration, InputError> {
        const EXPECTED: &str = "\"CPUn\" or an integer number of ns per loop";
        match v {
            // rt-app calibrates CPU0 when the number is 0.
            Value::Int(0) => Ok(Calibration::Cpu(0)),
            Value::Int(n) if (1..=INT_MAX).contains(n) => Ok(Calibration::LoopNs(*n as u64)),
            Value::Str(s) => s
                .strip_prefix("CPU")
                .filter(|d| !d.is_empty() && d.len() <= 6 && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse().ok())
                .map(Calibration::Cpu)
                .ok_or_else(|| self.err(place, EXPECTED, v.describe())),
            _ => Err(self.err(place, EXPECTED, v.describe())),
        }
    }

    fn task(&mut self, t: usize, name: &str, m: &Members) -> Result<TaskSpec, InputError> {
        let base = format!("tasks.{name}");
        let has_phases = m.iter().any(|(k, _, _)| k == "phases");
        let events: Vec<_> = m
            .iter()
            .filter(|(k, _, _)| event_kind(k).is_some())
            .collect();
        if let (true, Some((k, _, _))) = (has_phases, events.first()) {
            return Err(self.err(
                &join(&base, k),
                "events inside \"phases\" when the task has phases",
                format!("event {}", quote(k)),
            ));
        }
        // rt-app's legacy grammar also reads an exact task-level "runtime" as dl-runtime:
        // the last one, which is the one json-c keeps.
        let legacy_runtime = m.iter().rev().find(|(k, _, _)| k == "runtime");
        let props = m
            .iter()
            .filter(|(k, _, _)| event_kind(k).is_none())
            .chain(legacy_runtime);
        let expected = format!(
            "an event ({EVENT_LIST}) or a task property ({})",
            TASK_KEYS.join(", ")
        );
        let mut keys = TASK_KEYS.to_vec();
        keys.push("runtime");
        let p = self.properties(props, &base, &keys, &expected)?;

        let instances = self.task_instances[t];
        let sched = self.sched_keys(&p, &base, true)?;
        let policy = sched.policy.unwrap_or(self.global.default_policy);
        let priority = match sched.priority {
            Some(pr) => self.check_priority(policy, pr, &join(&base, "priority"))?,
            None => default_priority(policy),
        };
        let dl_runtime = sched.dl_runtime.unwrap_or(0);
        let dl_period = sched.dl_period.unwrap_or(dl_runtime);
        let dl_deadline = sched.dl_deadline.unwrap_or(dl_period);
        let params = SchedParams {
            policy,
            priority,
            dl_runtime_ns: dl_runtime * 1000,
            dl_deadline_ns: dl_deadline * 1000,
            dl_period_ns: dl_period * 1000,
        };
        self.check_deadline(&params, &base)?;
        let cpus = self.cpus(&p, &base)?;
        let taskgroup = self.taskgroup(&p, &base)?;
        let latency_nice = self.latency_nice(&p, &base)?;
        let delay_ns = match p.get("delay") {
            Some(v) => {
                self.int_in(v, &join(&base, "delay"), 0, INT_MAX, "a delay in µs")? as u64 * 1000
            }
            None => 0,
        };
        let loop_value = match p.get("loop") {
            Some(v) => Some(self.int_in(
                v,
                &join(&base, "loop"),
                i64::MIN,
                i64::MAX,
                "a loop count (-1: forever)",
            )?),
            None => None,
        };
        if taskgroup.is_some() && !policy.is_fair() {
            return Err(self.taskgroup_policy_error(&base, policy));
        }

        let (loop_count, phases) = if let Some(v) = p.get("phases") {
            let place = join(&base, "phases");
            let Value::Object(pm) = v else {
                return Err(self.err(&place, "an object of phases", v.describe()));
            };
            if pm.is_empty() {
                return Err(self.err(&place, "at least one phase", "an empty object"));
            }
            // The policy and task group in force as the phases are first entered, in file
            // order, to resolve "same policy" and to check task groups as rt-app does.
            let mut cur = params;
            let mut cur_tg = taskgroup;
            let mut phases = Vec::with_capacity(pm.len());
            for (pname, pv, _) in pm {
                let pplace = join(&place, pname);
                let Value::Object(pmm) = pv else {
                    return Err(self.err(&pplace, "a phase object", pv.describe()));
                };
                let phase = self.phase(t, name, pname, pmm, &pplace, &mut cur)?;
                cur_tg = phase.taskgroup.or(cur_tg);
                if cur_tg.is_some() && !cur.policy.is_fair() {
                    return Err(self.taskgroup_policy_error(&pplace, cur.policy));
                }
                phases.push(phase);
            }
            (normalize_task_loop(loop_value.unwrap_or(-1)), phases)
        } else {
            if events.is_empty() {
                return Err(self.err(&base, format!("at least one event ({EVENT_LIST})"), "none"));
            }
            let evs = self.events(t, name, &events, &base)?;
            // Without "phases", "loop" is the phase's count and the task runs the phase once;
            // without "loop" it runs it forever.
            let (task_loop, phase_loop) = match loop_value {
                Some(n) => (1, normalize_phase_loop(n)),
                None => (-1, 1),
            };
            let phase = PhaseSpec {
                name: name.to_string(),
                loop_count: phase_loop,
                events: evs,
                cpus: None,
                params: None,
                util_min: None,
                util_max: None,
                taskgroup: None,
                latency_nice: None,
            };
            (task_loop, vec![phase])
        };

        Ok(TaskSpec {
            name: name.to_string(),
            instances,
            loop_count,
            delay_ns,
            params,
            cpus,
            util_min: sched.util_min,
            util_max: sched.util_max,
            taskgroup,
            latency_nice,
            phases,
        })
    }

    fn taskgroup_policy_error(&self, place: &str, policy: Policy) -> InputError {
        self.err(
            &join(place, "taskgroup"),
            "a task group only with SCHED_OTHER, SCHED_BATCH or SCHED_IDLE",
            format!("a task group with {}", policy.name()),
        )
    }

    /// One phase object. `cur` is the scheduling state in force when it is first entered;
    /// it is updated with what the phase sets.
    fn phase(
        &mut self,
        t: usize,
        task_name: &str,
        name: &str,
        m: &Members,
        base: &str,
        cur: &mut SchedParams,
    ) -> Result<PhaseSpec, InputError> {
        let events: Vec<_> = m
            .iter()
            .filter(|(k, _, _)| event_kind(k).is_some())
            .collect();
        let props = m.iter().filter(|(k, _, _)| event_kind(k).is_none());
        let expected = format!(
            "an event ({EVENT_LIST}) or a phase property ({})",
            PHASE_KEYS.join(", ")
        );
        let p = self.properties(props, base, PHASE_KEYS, &expected)?;
        if events.is_empty() {
            return Err(self.err(base, format!("at least one event ({EVENT_LIST})"), "none"));
        }
        let sched = self.sched_keys(&p, base, false)?;
        let dl_given =
            sched.dl_runtime.is_some() || sched.dl_period.is_some() || sched.dl_deadline.is_some();
        let policy = sched.policy.unwrap_or(cur.policy);
        // rt-app changes policy and priority only when the phase names one of them (or, for
        // SCHED_DEADLINE, its parameters); otherwise the phase keeps what is in force.
        let params = if sched.policy.is_some()
            || sched.priority.is_some()
            || (dl_given && policy == Policy::Deadline)
        {
            let priority = match (sched.priority, sched.policy) {
                (Some(pr), _) => self.check_priority(policy, pr, &join(base, "priority"))?,
                (None, Some(pol)) => default_priority(pol),
                (None, None) => cur.priority,
            };
            // Runtime, period and deadline not given stay as they are while the policy
            // stays (rt-app asks the kernel to keep them); a new policy starts from 0.
            let old = if policy == cur.policy {
                *cur
            } else {
                SchedParams {
                    dl_runtime_ns: 0,
                    dl_deadline_ns: 0,
                    dl_period_ns: 0,
                    ..*cur
                }
            };
            let dl_runtime_ns = sched.dl_runtime.map_or(old.dl_runtime_ns, |us| us * 1000);
            let dl_period_ns = match sched.dl_period {
                Some(us) => us * 1000,
                None if sched.dl_runtime.is_some() => dl_runtime_ns,
                None => old.dl_period_ns,
            };
            let dl_deadline_ns = match sched.dl_deadline {
                Some(us) => us * 1000,
                None if sched.dl_runtime.is_some() || sched.dl_period.is_some() => dl_period_ns,
                None => old.dl_deadline_ns,
            };
            let params = SchedParams {
                policy,
                priority,
                dl_runtime_ns,
                dl_deadline_ns,
                dl_period_ns,
            };
            self.check_deadline(&params, base)?;
            *cur = params;
            Some(params)
        } else {
            None
        };
        let loop_count = match p.get("loop") {
            Some(v) => normalize_phase_loop(self.int_in(
                v,
                &join(base, "loop"),
                i64::MIN,
                i64::MAX,
                "a loop count (-1: forever)",
            )?),
            None => 1,
        };
        let events = self.events(t, task_name, &events, base)?;
        Ok(PhaseSpec {
            name: name.to_string(),
            loop_count,
            events,
            cpus: self.cpus(&p, base)?,
            params,
            util_min: sched.util_min,
            util_max: sched.util_max,
            taskgroup: self.taskgroup(&p, base)?,
            latency_nice: self.latency_nice(&p, base)?,
        })
    }

    fn sched_keys(
        &self,
        p: &HashMap<&str, &Value>,
        base: &str,
        task_level: bool,
    ) -> Result<SchedKeys, InputError> {
        let mut s = SchedKeys::default();
        if let Some(v) = p.get("policy") {
            s.policy = Some(self.policy(v, &join(base, "policy"))?);
        }
        if let Some(v) = p.get("priority") {
            s.priority =
                Some(self.int_in(v, &join(base, "priority"), i64::MIN, i64::MAX, "a priority")?);
        }
        let us = |key: &str| -> Result<Option<u64>, InputError> {
            match p.get(key) {
                Some(v) => Ok(Some(
                    self.int_in(v, &join(base, key), 0, INT_MAX, "a time in µs")? as u64,
                )),
                None => Ok(None),
            }
        };
        s.dl_runtime = us("dl-runtime")?;
        s.dl_period = us("dl-period")?;
        s.dl_deadline = us("dl-deadline")?;
        if task_level {
            // rt-app's legacy grammar, read only when the dl- key is absent.
            s.dl_runtime = s.dl_runtime.or(us("runtime")?);
            s.dl_period = s.dl_period.or(us("period")?);
            s.dl_deadline = s.dl_deadline.or(us("deadline")?);
        }
        let clamp = |key: &str| -> Result<Option<i32>, InputError> {
            match p.get(key) {
                Some(v) => {
                    let c = self.int_in(
                        v,
                        &join(base, key),
                        -1,
                        1024,
                        "a utilization clamp, or -1 for unchanged",
                    )?;
                    Ok((c >= 0).then_some(c as i32))
                }
                None => Ok(None),
            }
        };
        s.util_min = clamp("util_min")?;
        s.util_max = clamp("util_max")?;
        if let (Some(lo), Some(hi)) = (s.util_min, s.util_max) {
            if lo > hi {
                return Err(self.err(
                    &join(base, "util_min"),
                    format!("util_min at most util_max ({hi})"),
                    lo.to_string(),
                ));
            }
        }
        Ok(s)
    }

    fn check_priority(
        &self,
        policy: Policy,
        priority: i64,
        place: &str,
    ) -> Result<i32, InputError> {
        let (lo, hi, what) = match policy {
            Policy::Fifo | Policy::Rr => (1, 99, "an RT priority from 1 to 99"),
            Policy::Other | Policy::Batch | Policy::Idle => {
                (-20, 19, "a nice value from -20 to 19")
            }
            // rt-app passes sched_priority 0 for SCHED_DEADLINE whatever is written.
            Policy::Deadline => return Ok(0),
        };
        if (lo..=hi).contains(&priority) {
            Ok(priority as i32)
        } else {
            Err(self.err(
                place,
                format!("{what} for {}", policy.name()),
                priority.to_string(),
            ))
        }
    }

    fn check_deadline(&self, p: &SchedParams, base: &str) -> Result<(), InputError> {
        if p.policy != Policy::Deadline {
            return Ok(());
        }
        if p.dl_runtime_ns == 0 {
            return Err(self.err(
                &join(base, "dl-runtime"),
                "a runtime above 0 µs for SCHED_DEADLINE",
                "0",
            ));
        }
        if !(p.dl_runtime_ns <= p.dl_deadline_ns && p.dl_deadline_ns <= p.dl_period_ns) {
            return Err(self.err(
                &join(base, "dl-deadline"),
                "dl-runtime ≤ dl-deadline ≤ dl-period",
                format!(
                    "runtime {} µs, deadline {} µs, period {} µs",
                    p.dl_runtime_ns / 1000,
                    p.dl_deadline_ns / 1000,
                    p.dl_period_ns / 1000
                ),
            ));
        }
        Ok(())
    }

    fn policy(&self, v: &Value, place: &str) -> Result<Policy, InputError> {
        const EXPECTED: &str =
            "SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE";
        match v {
            Value::Str(s) => match s.as_str() {
                "SCHED_OTHER" => Ok(Policy::Other),
                "SCHED_BATCH" => Ok(Policy::Batch),
                "SCHED_IDLE" => Ok(Policy::Idle),
                "SCHED_FIFO" => Ok(Policy::Fifo),
                "SCHED_RR" => Ok(Policy::Rr),
                "SCHED_DEADLINE" => Ok(Policy::Deadline),
                _ => Err(self.err(place, EXPECTED, v.describe())),
            },
            _ => Err(self.err(place, EXPECTED, v.describe())),
        }
    }

    fn cpus(
        &self,
        p: &HashMap<&str, &Value>,
        base: &str,
    ) -> Result<Option<Vec<usize>>, InputError> {
        let Some(v) = p.get("cpus") else {
            return Ok(None);
        };
        let place = join(base, "cpus");
        let Value::Array(items) = v else {
            return Err(self.err(&place, "an array of CPU numbers", v.describe()));
        };
        if items.is_empty() {
            return Err(self.err(&place, "at least one CPU", "an empty array"));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, (c, _))| {
                // The affinity mask (CpuSet) holds 64 CPUs.
                self.int_in(c, &format!("{place}[{i}]"), 0, 63, "a CPU number")
                    .map(|c| c as usize)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn taskgroup(
        &mut self,
        p: &HashMap<&str, &Value>,
        base: &str,
    ) -> Result<Option<usize>, InputError> {
        let Some(v) = p.get("taskgroup") else {
            return Ok(None);
        };
        let place = join(base, "taskgroup");
        let s = self.string(v, &place)?;
        if s.is_empty() {
            return Ok(None);
        }
        if !s.starts_with('/') {
            return Err(self.err(&place, "a task group path starting with '/'", quote(s)));
        }
        Ok(Some(self.taskgroups.named(s)))
    }

    fn latency_nice(
        &self,
        p: &HashMap<&str, &Value>,
        base: &str,
    ) -> Result<Option<i32>, InputError> {
        match p.get("latency_nice") {
            Some(v) => Ok(Some(self.int_in(
                v,
                &join(base, "latency_nice"),
                -20,
                19,
                "a latency nice value",
            )? as i32)),
            None => Ok(None),
        }
    }

    fn events(
        &mut self,
        t: usize,
        task_name: &str,
        entries: &[&(String, Value, json::Pos)],
        base: &str,
    ) -> Result<Vec<Event>, InputError> {
        let mut barriers_here = HashSet::new();
        let mut out = Vec::with_capacity(entries.len());
        for (key, v, _) in entries.iter().copied() {
            let place = join(base, key);
            let kind = event_kind(key).expect("callers pass events only");
            let ev = self.event(t, task_name, kind, v, &place)?;
            if let Event::Barrier { barrier } = ev {
                // rt-app counts one more thread per use, so a second use in one task waits for
                // a thread that never comes.
                if !barriers_here.insert(barrier) {
                    return Err(self.err(
                        &place,
                        "each barrier once per task (every use counts one more thread to wait for)",
                        format!("a second use of {}", quote(&self.barriers.names[barrier])),
                    ));
                }
            }
            out.push(ev);
        }
        Ok(out)
    }

    fn event(
        &mut self,
        t: usize,
        task_name: &str,
        kind: Kind,
        v: &Value,
        place: &str,
    ) -> Result<Event, InputError> {
        let duration = |p: &Self| {
            p.int_in(v, place, 0, INT_MAX, "a duration in µs")
                .map(|d| d as u64)
        };
        Ok(match kind {
            Kind::Run => Event::Run {
                us: duration(self)?,
            },
            Kind::Runtime => Event::Runtime {
                us: duration(self)?,
            },
            Kind::Sleep => Event::Sleep {
                us: duration(self)?,
            },
            Kind::Mem => Event::Mem {
                bytes: self.int_in(v, place, 0, INT_MAX, "a number of bytes")? as u64,
            },
            Kind::MemRun => self.memrun(v, place)?,
            Kind::IoRun => self.iorun(v, place)?,
            Kind::Lock | Kind::Unlock => {
                let name = self.string(v, place)?;
                let mutex = self.mutexes.named(name);
                if kind == Kind::Lock {
                    self.mutex_locked.insert(mutex);
                    Event::Lock { mutex }
                } else {
                    self.deferred.push(Deferred::Unlock {
                        mutex,
                        name: name.to_string(),
                        place: place.to_string(),
                    });
                    Event::Unlock { mutex }
                }
            }
            Kind::Signal | Kind::Broad => {
                let name = self.string(v, place)?;
                let cond = self.conds.named(name);
                self.deferred.push(Deferred::Signal {
                    cond,
                    name: name.to_string(),
                    place: place.to_string(),
                });
                if kind == Kind::Signal {
                    Event::Signal { cond }
                } else {
                    Event::Broadcast { cond }
                }
            }
            Kind::Wait | Kind::Sync => {
                let m = self.object(
                    v,
                    place,
                    &["ref", "mutex"],
                    "{\"ref\": condition, \"mutex\": mutex}",
                )?;
                let (Some(r), Some(mx)) = (m.get("ref"), m.get("mutex")) else {
                    return Err(self.err(
                        place,
                        "both \"ref\" (a condition) and \"mutex\"",
                        v.describe(),
                    ));
                };
                let r = self.string(r, &join(place, "ref"))?;
                let mx = self.string(mx, &join(place, "mutex"))?;
                let cond = self.conds.named(r);
                let mutex = self.mutexes.named(mx);
                self.cond_waited.insert(cond);
                self.mutex_locked.insert(mutex);
                if kind == Kind::Wait {
                    Event::Wait { cond, mutex }
                } else {
                    Event::Sync { cond, mutex }
                }
            }
            Kind::Barrier => {
                let name = self.string(v, place)?;
                let barrier = self.barriers.named(name);
                if barrier == self.barrier_participants.len() {
                    self.barrier_participants.push(0);
                }
                self.barrier_participants[barrier] =
                    self.barrier_participants[barrier].saturating_add(self.task_instances[t]);
                self.barrier_uses.push((barrier, t, place.to_string()));
                Event::Barrier { barrier }
            }
            Kind::Timer => self.timer(t, v, place)?,
            Kind::Suspend => {
                // The value is ignored: a thread suspends on its own task's condition.
                let cond = self.conds.named(task_name);
                let mutex = self.mutexes.named(task_name);
                self.cond_waited.insert(cond);
                self.mutex_locked.insert(mutex);
                Event::Suspend { cond, mutex }
            }
            Kind::Resume => {
                let name = self.string(v, place)?;
                let cond = self.conds.named(name);
                let mutex = self.mutexes.named(name);
                self.deferred.push(Deferred::Resume {
                    cond,
                    name: name.to_string(),
                    place: place.to_string(),
                });
                Event::Resume { cond, mutex }
            }
            Kind::Yield => Event::Yield,
            Kind::Fork => {
                let name = self.string(v, place)?;
                let Some(&task) = self.task_index.get(name) else {
                    return Err(self.err(place, "the name of a task to fork", quote(name)));
                };
                self.forked.insert(task);
                Event::Fork { task }
            }
            Kind::Send | Kind::Recv => self.channel_event(kind, v, place)?,
            Kind::SemPost | Kind::SemWait => {
                let name = self.string(v, place)?;
                let sem = self.semaphore(name);
                if kind == Kind::SemPost {
                    self.sem_posted.insert(sem);
                    Event::SemPost { sem }
                } else {
                    self.deferred.push(Deferred::SemWait {
                        sem,
                        name: name.to_string(),
                        place: place.to_string(),
                    });
                    Event::SemWait { sem }
                }
            }
        })
    }

    /// The channel `name`, declared with the defaults if `global.channels` did not.
    fn channel(&mut self, name: &str) -> usize {
        let n = self.channel_specs.len();
        let chan = self.channels.named(name);
        if chan == n {
            self.channel_specs.push(ChannelSpec {
                name: name.to_string(),
                kind: ChannelKind::Pipe,
                capacity: DEFAULT_CHANNEL_CAPACITY,
            });
        }
        chan
    }

    /// `global.channels`: `{"name": {"kind": K, "capacity": bytes}}`.
    fn parse_channels(&mut self, v: &Value, place: &str) -> Result<(), InputError> {
        let Value::Object(m) = v else {
            return Err(self.err(
                place,
                "an object of channels {\"name\": {\"kind\", \"capacity\"}}",
                v.describe(),
            ));
        };
        for (name, cv, _) in m {
            let cplace = join(place, name);
            if self.channels.index.contains_key(&(USER, name.clone())) {
                return Err(self.err(
                    &cplace,
                    "each channel once",
                    format!("a second {}", quote(name)),
                ));
            }
            let p = self.object(
                cv,
                &cplace,
                &["kind", "capacity"],
                "{\"kind\": pipe|unix|tcp|udp|futex, \"capacity\": bytes}",
            )?;
            let kind = match p.get("kind") {
                Some(k) => {
                    let kplace = join(&cplace, "kind");
                    let s = self.string(k, &kplace)?;
                    ChannelKind::parse(s).ok_or_else(|| {
                        self.err(
                            &kplace,
                            format!("one of {}", ChannelKind::NAMES.join(", ")),
                            quote(s),
                        )
                    })?
                }
                None => ChannelKind::Pipe,
            };
            // A channel that blocks its writers must hold at least one byte.
            let min = u64::from(!kind.drops_when_full());
            let capacity = match p.get("capacity") {
                Some(c) => self.int_in(
                    c,
                    &join(&cplace, "capacity"),
                    min as i64,
                    INT_MAX,
                    if min == 1 {
                        "a capacity in bytes (at least 1)"
                    } else {
                        "a capacity in bytes"
                    },
                )? as u64,
                None => DEFAULT_CHANNEL_CAPACITY,
            };
            let chan = self.channel(name);
            self.channel_specs[chan].kind = kind;
            self.channel_specs[chan].capacity = capacity;
        }
        Ok(())
    }

    /// `send`/`recv` (extension).
    fn channel_event(&mut self, kind: Kind, v: &Value, place: &str) -> Result<Event, InputError> {
        let send = kind == Kind::Send;
        let m = self.object(
            v,
            place,
            &["channel", "bytes"],
            "{\"channel\": name, \"bytes\": N}",
        )?;
        let Some(name) = m.get("channel") else {
            return Err(self.err(place, "a \"channel\" key", "none"));
        };
        let name = self.string(name, &join(place, "channel"))?;
        let chan = self.channel(name);
        let spec = &self.channel_specs[chan];
        let (stream, capacity, drops) = (
            spec.kind.is_stream(),
            spec.capacity,
            spec.kind.drops_when_full(),
        );
        let bplace = join(place, "bytes");
        let bytes = match m.get("bytes") {
            Some(b) => Some(self.int_in(b, &bplace, 0, INT_MAX, "a number of bytes")? as u64),
            None => None,
        };
        self.deferred.push(Deferred::Channel {
            chan,
            send,
            place: place.to_string(),
        });
        if send {
            self.chan_sent.insert(chan);
            let Some(bytes) = bytes else {
                return Err(self.err(place, "a \"bytes\" key", "none"));
            };
            if stream && bytes == 0 {
                return Err(self.err(&bplace, "at least 1 byte on a stream channel", "0"));
            }
            if !drops && bytes > capacity {
                return Err(self.err(
                    &bplace,
                    format!("at most the channel's capacity ({capacity}): a bigger message would block forever"),
                    bytes.to_string(),
                ));
            }
            Ok(Event::Send { chan, bytes })
        } else {
            self.chan_received.insert(chan);
            let max = bytes.unwrap_or(u64::MAX);
            if stream && max == 0 {
                return Err(self.err(&bplace, "at least 1 byte on a stream channel", "0"));
            }
            Ok(Event::Recv { chan, max })
        }
    }

    fn semaphore(&mut self, name: &str) -> usize {
        let n = self.sems.names.len();
        let sem = self.sems.named(name);
        if sem == n {
            let shown = format!("sem:{name}");
            let mutex = self.mutexes.intern(SEMAPHORE, name, &shown);
            let cond = self.conds.intern(SEMAPHORE, name, &shown);
            self.sem_specs.push(SemSpec {
                name: name.to_string(),
                mutex,
                cond,
            });
        }
        sem
    }

    fn timer(&mut self, t: usize, v: &Value, place: &str) -> Result<Event, InputError> {
        let m = self.object(
            v,
            place,
            &["ref", "period", "mode"],
            "{\"ref\": name, \"period\": µs, \"mode\": \"relative\" or \"absolute\"}",
        )?;
        let name = match m.get("ref") {
            Some(r) => self.string(r, &join(place, "ref"))?,
            None => "unknown",
        };
        let period_us = match m.get("period") {
            Some(p) => {
                let place = join(place, "period");
                self.int_in(p, &place, 0, INT_MAX, "a period in µs")? as u64
            }
            None => 0,
        };
        let absolute = match m.get("mode") {
            None => false,
            Some(Value::Str(s)) if s == "relative" => false,
            Some(Value::Str(s)) if s == "absolute" => true,
            Some(other) => {
                return Err(self.err(
                    &join(place, "mode"),
                    "\"relative\" or \"absolute\"",
                    other.describe(),
                ))
            }
        };
        let unique_to = name.starts_with("unique").then_some(t);
        // Shared timers live in space 0, each task's unique timers in space task + 1.
        let space = unique_to.map_or(0, |t| t + 1);
        let n = self.timer_specs.len();
        let timer = self.timers.intern(space, name, name);
        if timer == n {
            self.timer_specs.push(TimerSpec {
                name: name.to_string(),
                unique_to,
                absolute: false,
            });
        }
        // As in rt-app the mode belongs to the timer: one absolute use makes it absolute.
        self.timer_specs[timer].absolute |= absolute;
        Ok(Event::Timer { timer, period_us })
    }

    fn memrun(&self, v: &Value, place: &str) -> Result<Event, InputError> {
        let m = self.object(
            v,
            place,
            &["type", "size", "count", "stride", "pattern", "ref"],
            "{\"type\", \"size\", \"count\", …}",
        )?;
        let get = |k: &str| {
            m.get(k)
                .copied()
                .ok_or_else(|| self.err(place, format!("a \"{k}\" key"), "none"))
        };
        let ty = self.string(get("type")?, &join(place, "type"))?;
        self.int_in(
            get("size")?,
            &join(place, "size"),
            1,
            INT_MAX,
            "a buffer size in bytes",
        )?;
        let count =
            self.int_in(get("count")?, &join(place, "count"), 0, INT_MAX, "a count")? as u64;
        if let Some(s) = m.get("stride") {
            self.int_in(s, &join(place, "stride"), 1, INT_MAX, "a stride in bytes")?;
        }
        if let Some(p) = m.get("pattern") {
            let p = self.string(p, &join(place, "pattern"))?;
            if p != "random" && p != "sequential" {
                return Err(self.err(
                    &join(place, "pattern"),
                    "\"random\" or \"sequential\"",
                    quote(p),
                ));
            }
        }
        if let Some(r) = m.get("ref") {
            self.string(r, &join(place, "ref"))?;
        }
        match ty {
            "read" | "write" => Ok(Event::Mem { bytes: count }),
            "chase" => Ok(Event::MemChase { hops: count }),
            _ => Err(self.err(
                &join(place, "type"),
                "\"read\", \"write\" or \"chase\"",
                quote(ty),
            )),
        }
    }

    fn iorun(&self, v: &Value, place: &str) -> Result<Event, InputError> {
        if let Value::Object(_) = v {
            let m = self.object(
                v,
                place,
                &["bytes", "service_us"],
                "{\"bytes\": N, \"service_us\": µs}",
            )?;
            let bytes = match m.get("bytes") {
                Some(b) => {
                    self.int_in(b, &join(place, "bytes"), 0, INT_MAX, "a number of bytes")? as u64
                }
                None => 0,
            };
            let service_ns = match m.get("service_us") {
                Some(s) => {
                    self.int_in(
                        s,
                        &join(place, "service_us"),
                        0,
                        INT_MAX,
                        "a service time in µs",
                    )? as u64
                        * 1000
                }
                None => self.global.io_service_ns,
            };
            return Ok(Event::IoRun { bytes, service_ns });
        }
        let bytes = self.int_in(
            v,
            place,
            0,
            INT_MAX,
            "a number of bytes, or {\"bytes\": N, \"service_us\": µs}",
        )? as u64;
        Ok(Event::IoRun {
            bytes,
            service_ns: self.global.io_service_ns,
        })
    }

    /// The members of an event's object value, refusing unknown and repeated keys.
    fn object<'v>(
        &self,
        v: &'v Value,
        place: &str,
        allowed: &[&str],
        shape: &str,
    ) -> Result<HashMap<&'v str, &'v Value>, InputError> {
        let Value::Object(m) = v else {
            return Err(self.err(place, format!("an object {shape}"), v.describe()));
        };
        self.properties(
            m,
            place,
            allowed,
            &format!("one of the keys {}", allowed.join(", ")),
        )
    }

    fn int_in(
        &self,
        v: &Value,
        place: &str,
        lo: i64,
        hi: i64,
        what: &str,
    ) -> Result<i64, InputError> {
        match v {
            Value::Int(i) if (lo..=hi).contains(i) => Ok(*i),
            Value::Int(_) => {
                let range = match (lo, hi) {
                    (i64::MIN, i64::MAX) => String::new(),
                    (i64::MIN, hi) => format!(" (at most {hi})"),
                    (lo, i64::MAX) => format!(" (at least {lo})"),
                    (lo, hi) => format!(" (from {lo} to {hi})"),
                };
                Err(self.err(place, format!("{what}{range}"), v.describe()))
            }
            _ => Err(self.err(place, format!("{what} (an integer)"), v.describe())),
        }
    }

    fn boolean(&self, v: &Value, place: &str) -> Result<bool, InputError> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.err(place, "true or false", v.describe())),
        }
    }

    fn string<'v>(&self, v: &'v Value, place: &str) -> Result<&'v str, InputError> {
        match v {
            Value::Str(s) => Ok(s),
            _ => Err(self.err(place, "a string", v.describe())),
        }
    }
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

fn default_priority(policy: Policy) -> i32 {
    match policy {
        Policy::Fifo | Policy::Rr => 10,
        _ => 0,
    }
}

/// rt-app stops the task loop when the counter equals `loop`, counting from 0 and wrapping
/// to 0 on overflow: any negative count runs forever, 0 runs nothing.
fn normalize_task_loop(n: i64) -> i64 {
    if n < 0 {
        -1
    } else {
        n
    }
}

/// rt-app ends a phase when its counter, already incremented, equals `loop`: so 0 and any
/// negative count run forever.
fn normalize_phase_loop(n: i64) -> i64 {
    if n <= 0 {
        -1
    } else {
        n
    }
}

//! A trace's records → what each task did: running stretches as work, blocks with who ended
//! them, forks and exits, in the order they happened; plus the trace's own per-task numbers
//! (CPU time, wake-ups, wake-up latency) and per-CPU frequency residency for the fidelity
//! report.
//!
//! Work is capacity·ns, as the simulator counts it: a stretch of `dt` ns on a CPU of capacity
//! `C` running at `f` of its maximum `F` is `dt × ⌊C·f/F⌋` (the kernel's
//! `arch_scale_freq_capacity` scaling of `capacity_orig`).

use super::reader::{Head, PrevState, Reader, Record};
use schedlab_base::error::InputError;
use schedlab_base::CpuSet;
use schedlab_model::kernel::core::ttwu_queue_cond;
use schedlab_model::kernel::Variant;
use schedlab_model::machine::{self, Charge, Payer, Placement, Touched};
use schedlab_model::platform::{Costs, Memory};
use schedlab_model::workload::DEFAULT_WORKING_SET;
use std::collections::BTreeMap;

/// What the extraction needs to know of the traced machine: the CPUs' capacities and
/// frequencies, and the kernel's costs on it. The replay charges the model's kernel work
/// (`platform::costs`) again, so what the timeline credits a task with is its running time
/// less that work (see `Builder::account` and docs/decisions.md, "Trace replay").
#[derive(Debug, Clone, PartialEq)]
pub struct CpuInfo {
    pub capacity: Vec<u32>,
    pub max_khz: Vec<u32>,
    /// The lowest OPP (0: unknown).
    pub min_khz: Vec<u32>,
    /// The frequency before the trace's first `cpu_frequency` event on the CPU.
    pub init_khz: Vec<u32>,
    /// The kernel paths' work (`[costs]`).
    pub costs: Costs,
    /// The memory a task's working set is refilled from (`[memory]`).
    pub memory: Memory,
    /// Per CPU: the id of its last-level cache.
    pub llc: Vec<usize>,
    /// Performance domains, which EAS's placement evaluates.
    pub nr_pd: usize,
    /// Whether placement runs EAS (`compute_energy` over the domains) while the system is
    /// not overutilized.
    pub eas: bool,
    /// The tick period (`CONFIG_HZ`): each tick on a busy CPU is `irq_ns + tick_ns` of work.
    pub tick_ns: u64,
    /// Per CPU, its idle states (the CPU's, then its cluster's that the CPU's lack): exit
    /// latency and target residency, ns.
    pub idle_states: Vec<Vec<(u64, u64)>>,
}

impl TaskTrace {
    /// The mean latency of its wake-ups after the first `skip`; None when the trace logged
    /// none of them (it has no wake-up events) though the task was woken.
    pub fn latency_mean_ns(&self, skip: u64) -> Option<u64> {
        let woken = self.wakeups.saturating_sub(skip);
        let l = self.latencies_ns.get(skip as usize..).unwrap_or(&[]);
        match (l.len() as u64, woken) {
            (0, 0) => Some(0),
            (0, _) => None,
            (n, _) => Some(l.iter().sum::<u64>() / n),
        }
    }
}

impl TaskTrace {
    /// The work its steps hold (its CPU work less the kernel work taken out).
    fn run_work(&self) -> u64 {
        self.work
            + self
                .steps
                .iter()
                .map(|s| match s {
                    Step::Run(w) => *w,
                    _ => 0,
                })
                .sum::<u64>()
    }
}

impl CpuInfo {
    /// From a platform: cpufreq starts every policy at its highest frequency.
    pub fn from_platform(p: &schedlab_model::platform::Platform) -> CpuInfo {
        let max: Vec<u32> = (0..p.nr_cpus()).map(|c| p.max_freq_khz(c)).collect();
        let hz =
            p.hz.unwrap_or(schedlab_model::kernel::variant::Variant::default().hz);
        CpuInfo {
            capacity: p.cpus.iter().map(|c| c.capacity_orig).collect(),
            min_khz: (0..p.nr_cpus()).map(|c| p.min_freq_khz(c)).collect(),
            init_khz: max.clone(),
            max_khz: max,
            costs: p.costs,
            memory: p.memory,
            llc: p.cpus.iter().map(|c| c.llc).collect(),
            nr_pd: p.freq_domains.len(),
            // The default variant's EAS conditions (fair_balance.rs): an energy model on an
            // asymmetric system without SMT, with schedutil.
            eas: p.energy_model
                && p.is_asymmetric()
                && p.cpus.iter().all(|c| c.smt_siblings.len() <= 1),
            tick_ns: 1_000_000_000 / hz.max(1) as u64,
            idle_states: p
                .cpus
                .iter()
                .map(|c| {
                    let cluster = &p.freq_domains[c.freq_domain].cluster_idle_states;
                    c.idle_states
                        .iter()
                        .chain(
                            cluster
                                .iter()
                                .filter(|s| c.idle_states.iter().all(|o| o.name != s.name)),
                        )
                        .map(|s| (s.exit_latency_ns, s.target_residency_ns))
                        .collect()
                })
                .collect(),
        }
    }

    /// The exit latency of idle CPU `cpu` running a task after `idle_ns` of idle: that of
    /// the state `cpu_idle` logged (schedlab's traces log the model's choice; a board's
    /// governor chooses alike, deep for an I/O wait whose end no timer tells), else of the
    /// deepest state whose target residency and exit fit in the stay (the governors' choice
    /// when the next timer is the wake-up).
    fn exit_latency(&self, cpu: usize, logged: Option<u32>, idle_ns: u64) -> u64 {
        let Some(states) = self.idle_states.get(cpu) else {
            return 0;
        };
        if let Some(&(exit, _)) = logged.and_then(|k| states.get(k as usize)) {
            return exit;
        }
        states
            .iter()
            .filter(|&&(exit, residency)| exit + residency <= idle_ns)
            .map(|s| s.0)
            .max()
            .unwrap_or(0)
    }

    /// `capacity_orig × f / f_max`; a frequency above the highest OPP (a trace of another
    /// board) as the highest.
    fn speed(&self, cpu: usize, khz: u32) -> u64 {
        let cap = self.capacity.get(cpu).copied().unwrap_or(1024) as u64;
        match self.max_khz.get(cpu).copied().unwrap_or(0) {
            0 => cap,
            max => cap * khz.min(max) as u64 / max as u64,
        }
    }

    fn asymmetric(&self) -> bool {
        self.capacity.iter().any(|&c| c != self.capacity[0])
    }

    fn share_llc(&self, a: usize, b: usize) -> bool {
        self.llc.get(a) == self.llc.get(b)
    }
}

/// Who ended a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waker {
    /// The task current on the CPU that logged the wake-up.
    Task(usize),
    /// The idle task or interrupt context: a timer or a device.
    Irq,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub uninterruptible: bool,
    pub start: u64,
    /// None: still blocked when the trace ends.
    pub end: Option<u64>,
    pub waker: Waker,
    /// The wake-up was logged on the CPU the task last ran on (a timer fires there too).
    pub same_cpu: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Work, capacity·ns.
    Run(u64),
    /// Woke task `wakee`, ending its block number `block` (an index into its steps).
    Wake {
        wakee: usize,
        block: usize,
    },
    Fork(usize),
    Block(Block),
    /// Woken by `to`, it preempted `to` and blocked with the CPU going straight back to it
    /// (`Builder::preemption_reply`).
    Reply {
        to: usize,
    },
    /// Preempted by `by`, the task it had just woken, and run again when `by` blocked
    /// (`Builder::preemption_reply`); `work` is the kernel work (capacity·ns) of the switch
    /// back that it paid before its own.
    Preempted {
        by: usize,
        work: u64,
    },
}

/// A stretch of a task's run between two moves of its own: a `sched_migrate_task` of the
/// task logged in its own context on the CPU it was running on, which is how schedlab's
/// trace shows both an affinity change (`sched_setaffinity`, rt-app's per-phase `cpus`:
/// the task's CPU left its mask, the stopper moves it) and an active balance (the stopper
/// of a misfit or an imbalance moves the running task). The trace does not say which it
/// was; `balance` says whether load balancing could have made the move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stretch {
    /// The index of its first step (the steps before it are the previous stretch's).
    pub first_step: usize,
    /// The CPUs it was switched in on in the stretch.
    pub cpus: CpuSet,
    /// The move that began it is one load balancing makes: to a CPU of more capacity (a
    /// misfit, an asymmetric capacity's active balance) or off a CPU with other tasks to
    /// run (the CPU did not go idle after). False for the first stretch.
    pub balance: bool,
    /// The move was the stopper's: the task was preempted by `migration/N` and moved to
    /// another CPU (`Builder::own_move`).
    pub by_stopper: bool,
}

/// CPU time a task may run before a move of its own is still its start: rt-app applies a
/// thread's `cpus` as the thread starts, before its phases (µs of work; a misfit takes
/// milliseconds of running to build up).
const START_UP_NS: u64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not seen yet in a state we know.
    Unknown,
    Running(usize),
    Runnable,
    /// Blocked in its step number `usize`.
    Blocked(usize),
    Dead,
}

#[derive(Debug, Clone)]
pub struct TaskTrace {
    pub pid: u32,
    /// The last comm the trace gave it.
    pub comm: String,
    /// The last kernel prio seen (the kernel's: 120 + nice for fair tasks, 99 − rt_priority for RT,
    /// -1 for deadline).
    pub prio: i32,
    /// When its program starts: the window's start for a task alive before it.
    pub start: u64,
    pub forked_by: Option<usize>,
    pub exited: bool,
    pub steps: Vec<Step>,
    /// The trace's own numbers.
    pub cpu_time_ns: u64,
    /// Its running time × the capacity it ran at (`capacity_orig × f / f_max`): the work
    /// the CPU did for it, kernel paths included (capacity·ns).
    pub cpu_work: u64,
    pub wakeups: u64,
    /// The latency of each wake-up whose time the trace logged (`sched_waking`, or
    /// `sched_wakeup` without it) to the task's switch-in, in order.
    pub latencies_ns: Vec<u64>,
    /// Its `sched_migrate_task` events.
    pub migrations: u64,
    /// The CPUs it ran on (since the moves of its start, which set its affinity).
    pub cpus: CpuSet,
    /// Its run cut at its own moves after its start; at least one.
    pub stretches: Vec<Stretch>,
    /// Each CPU it was seen running on, from the first and at each change: the index of
    /// its next step and the CPU.
    pub moves: Vec<(usize, usize)>,
    state: State,
    work: u64,
    last_cpu: Option<usize>,
    woken_at: Option<u64>,
    /// The CPU its last switch-in was on, and the CPU's and its LLC's `touched` after it (the cache
    /// refill of `machine::cache_refill`).
    ran_on: Option<usize>,
    touched_mark: u64,
    llc_mark: u64,
    /// Its pending wake-up: the CPU that logged it, when, and the wake path's work there.
    wake_from: Option<(usize, u64, u64)>,
    /// It moved itself off its CPU at its start: its next switch-in starts its CPUs anew.
    affinity_set: bool,
    /// Preempted by the stopper (`migration/N`) on this CPU, not yet run since.
    stopped_on: Option<usize>,
    /// Its switch back after its wakee's reply is next (`preemption_reply`).
    reply_pending: bool,
    /// The index of its `Step::Preempted` and the switch back's work it has still to pay.
    owed: Option<(usize, u64)>,
    /// Woken onto a busy CPU of another: the IPI's wall delay (the waker's work before the
    /// send and the delivery) and whether it is a reschedule IPI of its own (not the wake
    /// list's), paid if the task preempts at once; also when it was woken and the waker's
    /// CPU.
    preempt_ipi: Option<(u64, bool, u64, usize)>,
    /// Its block step that began with `prev_state` bit 64 (`PrevState::DeadOrParked`): an
    /// exit if it never ends.
    gone_at: Option<usize>,
    /// Its last wake-up event with a `target_cpu`: that CPU and when.
    woke_to: Option<(usize, u64)>,
}

/// A trace read into per-task programs.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub file: String,
    pub nr_cpus: usize,
    pub start: u64,
    pub end: u64,
    pub tasks: Vec<TaskTrace>,
    /// Per CPU: Σ khz·ns and ns (the time-weighted mean frequency).
    pub freq_ns: Vec<(u128, u64)>,
    /// Per CPU: busy ns at each frequency (kHz).
    pub busy_khz: Vec<BTreeMap<u32, u64>>,
    /// Per CPU: its frequency (kHz) at `start`.
    pub start_khz: Vec<u32>,
    /// The frequency changes within the window: when, the CPU, the new kHz.
    pub freq_changes: Vec<(u64, usize, u32)>,
    /// `cost.syscall_ns` of the platform read with.
    pub syscall_ns: u64,
    /// What the trace left to assumption (each CPU's frequency before its first event,
    /// frequencies the platform lacks), a line each.
    pub notes: Vec<String>,
}

/// A time window (ns, inclusive) of the trace to extract.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub from: Option<u64>,
    pub to: Option<u64>,
}

struct Cpu {
    curr: Option<usize>,
    since: u64,
    /// Kernel work (capacity·ns) the current task, or the next one when the CPU switches
    /// at once, pays before its own work progresses (`Rq::kernel_work`).
    debt: u64,
    /// When `debt` last grew.
    debt_at: u64,
    /// Bytes the tasks switched in here touched (`Rq::touched_bytes`).
    touched: u64,
    khz: u32,
    freq_since: u64,
    /// Busy ns at `khz` not yet added to `busy_khz`.
    busy_at_khz: u64,
    /// A task that moved itself off this CPU, until the CPU's next switch says whether
    /// the CPU had other tasks to run.
    moved: Option<usize>,
    /// Its last switch: a task preempted by the task it had just woken (`preemption_reply`).
    preempted: Option<(usize, usize)>,
    /// When it last switched to idle, and the idle state `cpu_idle` said it entered since.
    idle_since: u64,
    idle_state: Option<u32>,
    /// Its last switch was to idle: a task seen current here before a switch to it was
    /// switched in untraced (`Builder::untraced_switch_in`).
    idle: bool,
}

/// `PID_MAX_LIMIT` on 64-bit kernels: the largest `pid_max`.
const PID_MAX_LIMIT: u32 = 1 << 22;

/// Task index by pid: a dense table for real pids, a map for larger numbers (which only a
/// malformed trace has), so a lookup per event costs an index, not a hash.
#[derive(Default)]
struct PidMap {
    dense: Vec<u32>,
    sparse: BTreeMap<u32, usize>,
}

impl PidMap {
    const NONE: u32 = u32::MAX;

    fn get(&self, pid: u32) -> Option<usize> {
        if pid < PID_MAX_LIMIT {
            match self.dense.get(pid as usize) {
                Some(&i) if i != Self::NONE => Some(i as usize),
                _ => None,
            }
        } else {
            self.sparse.get(&pid).copied()
        }
    }

    fn insert(&mut self, pid: u32, task: usize) {
        if pid < PID_MAX_LIMIT {
            let p = pid as usize;
            if self.dense.len() <= p {
                self.dense.resize(p + 1, Self::NONE);
            }
            self.dense[p] = task as u32;
        } else {
            self.sparse.insert(pid, task);
        }
    }
}

struct Builder<'i> {
    info: &'i CpuInfo,
    /// The kernel's switches the trace is taken to have run with: the defaults (its
    /// wake-list rule).
    variant: Variant,
    cpus: Vec<Cpu>,
    tasks: Vec<TaskTrace>,
    by_pid: PidMap,
    start: u64,
    freq_ns: Vec<(u128, u64)>,
    busy_khz: Vec<BTreeMap<u32, u64>>,
    start_khz: Vec<u32>,
    freq_changes: Vec<(u64, usize, u32)>,
    /// The root domain's overutilized state (`sched_overutilized`), which turns EAS off.
    overutilized: bool,
    /// Per CPU, its LLC's index into `llc_touched`: the bytes touched in each LLC so far
    /// (`Kernel`'s `llc_touched`).
    llc_of: Vec<usize>,
    llc_touched: Vec<u64>,
    notes: Vec<String>,
    /// CPUs the trace shows above the platform's highest OPP: the highest frequency seen.
    above_max: BTreeMap<usize, u32>,
    /// Per CPU, the runs whose switch-in the trace lacks (`untraced_switch_in`): those
    /// started at their wake-up, and those at their first event.
    untraced: Vec<(u64, u64)>,
    /// Kernel work (capacity·ns) a task's run was too short to pay by its switch-out.
    unpaid: u64,
}

/// Read `text` (a trace named `file`) into a timeline.
pub fn read(
    text: &str,
    file: &str,
    info: &CpuInfo,
    window: Window,
) -> Result<Timeline, InputError> {
    let mut r = Reader::new(text, file);
    let mut b: Option<Builder> = None;
    let mut last = 0u64;
    let mut started = false;
    while let Some((head, rec)) = r.next()? {
        let bld = b.get_or_insert_with(|| {
            let n = r.nr_cpus().unwrap_or(1);
            let mut b = Builder::new(info, n);
            let (khz, notes) = initial_khz(text, file, info, n);
            for (c, k) in khz.into_iter().enumerate() {
                b.cpus[c].khz = k;
            }
            b.notes = notes;
            b
        });
        let ts = if matches!(rec, Record::Lost { .. }) {
            last
        } else {
            head.ts.max(last)
        };
        last = ts;
        if window.to.is_some_and(|to| ts > to) {
            break;
        }
        if window.from.is_some_and(|from| ts < from) {
            // Before the window only the frequencies matter.
            if let Record::Frequency { cpu, khz } | Record::FrequencyReport { cpu, khz } = rec {
                if cpu < bld.cpus.len() {
                    bld.cpus[cpu].khz = khz;
                }
            }
            continue;
        }
        if !started {
            started = true;
            bld.begin(ts);
        }
        bld.record(head, rec, ts, r.line(), file)?;
    }
    let Some(mut bld) = b else {
        return Err(InputError::new(
            file,
            "the whole file",
            "a trace with events",
            "none",
        ));
    };
    if !started {
        bld.begin(last);
    }
    bld.finish(last);
    let mut notes = std::mem::take(&mut bld.notes);
    let taken: u64 = bld.tasks.iter().map(|t| t.cpu_work).sum::<u64>()
        - bld.tasks.iter().map(TaskTrace::run_work).sum::<u64>();
    if bld.unpaid > 0 && bld.unpaid * 10 >= taken {
        // The real kernel did its work within the runs: the model's is more.
        notes.push(format!(
            "the model's kernel work ({:.3} ms) is more than the trace's runs held: {:.3} ms of \
             it did not fit before the switch-out; the platform's [costs] are above the \
             traced machine's, and the replay runs slower than the trace",
            (taken + bld.unpaid) as f64 / 1024e6,
            bld.unpaid as f64 / 1024e6
        ));
    }
    for (c, &(woke, first)) in bld.untraced.iter().enumerate() {
        if woke + first > 0 {
            let rest = if first > 0 {
                format!(" ({first} with none logged onto the CPU: at their first event)")
            } else {
                String::new()
            };
            notes.push(format!(
                "{} runs on CPU {c} began without a traced switch-in; started at their wake-up{rest}",
                woke + first
            ));
        }
    }
    let mut above: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (&c, &khz) in &bld.above_max {
        above.entry(khz).or_default().push(c);
    }
    for (khz, cpus) in above {
        let max = info.max_khz.get(cpus[0]).copied().unwrap_or(0);
        notes.push(format!(
            "CPUs {} at {} MHz in the trace, above the platform's highest OPP ({} MHz): \
             counted at that OPP (is the platform the traced board's?)",
            list(&cpus),
            khz / 1000,
            max / 1000
        ));
    }
    Ok(Timeline {
        file: file.to_string(),
        nr_cpus: bld.cpus.len(),
        start: bld.start,
        end: last.max(bld.start),
        tasks: bld.tasks,
        freq_ns: bld.freq_ns,
        busy_khz: bld.busy_khz,
        start_khz: bld.start_khz,
        freq_changes: bld.freq_changes,
        syscall_ns: machine::syscall(&info.costs).work_ns,
        notes,
    })
}

/// CPU numbers, space-separated.
fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Each CPU's frequency at the start of `text`, and notes on what was assumed. cpufreq
/// emits `cpu_frequency` only on a change, so the frequency before a CPU's first event is
/// unknown, except where devlib reported it (`Record::FrequencyReport`) before any change:
/// then it held from the start. A first change up to the highest OPP says the CPU was below
/// it: the lowest OPP is taken (the governor was raising it from rest). Otherwise (a first
/// change down, or none) the highest, where cpufreq starts a policy (and schedlab's runs
/// start).
fn initial_khz(text: &str, file: &str, info: &CpuInfo, n: usize) -> (Vec<u32>, Vec<String>) {
    let mut first: Vec<Option<(bool, u32, u64)>> = vec![None; n];
    let mut left = n;
    let bytes = text.as_bytes();
    for at in memchr::memmem::find_iter(bytes, b"cpu_frequency") {
        if left == 0 {
            break;
        }
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        let mut r = Reader::with_cpus(&text[start..end], file, n);
        let Ok(Some((head, rec))) = r.next() else {
            continue;
        };
        let (cpu, khz, report) = match rec {
            Record::Frequency { cpu, khz } => (cpu, khz, false),
            Record::FrequencyReport { cpu, khz } => (cpu, khz, true),
            _ => continue,
        };
        if cpu < n && first[cpu].is_none() {
            first[cpu] = Some((report, khz, head.ts));
            left -= 1;
        }
    }
    let mut khz: Vec<u32> = (0..n)
        .map(|c| info.init_khz.get(c).copied().unwrap_or(0))
        .collect();
    // (report or raised, kHz taken, first event's time) → CPUs.
    let mut by: BTreeMap<(bool, u32, u32), (Vec<usize>, u64)> = BTreeMap::new();
    for (c, f) in first.iter().enumerate() {
        let max = info.max_khz.get(c).copied().unwrap_or(0);
        let min = info.min_khz.get(c).copied().unwrap_or(0);
        match *f {
            Some((true, k, ts)) => {
                khz[c] = k;
                let e = by.entry((true, k, 0)).or_insert((Vec::new(), ts));
                e.0.push(c);
            }
            Some((false, k, ts)) if max > 0 && k >= max && min > 0 && min < max => {
                khz[c] = min;
                let e = by.entry((false, min, k)).or_insert((Vec::new(), ts));
                e.0.push(c);
            }
            _ => {}
        }
    }
    let notes = by
        .into_iter()
        .map(|((report, k, to), (cpus, ts))| {
            if report {
                format!(
                    "CPUs {} at {} MHz from the start: devlib's report at {:.6} s, no cpu_frequency before it",
                    list(&cpus),
                    k / 1000,
                    ts as f64 / 1e9
                )
            } else {
                format!(
                    "CPUs {} below {} MHz before their first cpu_frequency ({:.6} s raised them to it): \
                     taken at the lowest OPP, {} MHz",
                    list(&cpus),
                    to / 1000,
                    ts as f64 / 1e9,
                    k / 1000
                )
            }
        })
        .collect();
    (khz, notes)
}

impl<'i> Builder<'i> {
    fn new(info: &'i CpuInfo, n: usize) -> Self {
        let cpus = (0..n)
            .map(|c| Cpu {
                curr: None,
                since: 0,
                debt: 0,
                debt_at: 0,
                touched: 0,
                khz: info.init_khz.get(c).copied().unwrap_or(0),
                freq_since: 0,
                busy_at_khz: 0,
                moved: None,
                preempted: None,
                idle_since: 0,
                idle_state: None,
                idle: false,
            })
            .collect();
        let ids: Vec<Option<usize>> = (0..n).map(|c| info.llc.get(c).copied()).collect();
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let llc_of = ids
            .iter()
            .map(|id| distinct.binary_search(id).unwrap_or(0))
            .collect();
        Builder {
            info,
            variant: Variant::default(),
            llc_of,
            llc_touched: vec![0; distinct.len()],
            cpus,
            tasks: Vec::new(),
            by_pid: PidMap::default(),
            start: 0,
            freq_ns: vec![(0, 0); n],
            busy_khz: vec![BTreeMap::new(); n],
            start_khz: Vec::new(),
            freq_changes: Vec::new(),
            overutilized: false,
            notes: Vec::new(),
            above_max: BTreeMap::new(),
            untraced: vec![(0, 0); n],
            unpaid: 0,
        }
    }

    fn begin(&mut self, ts: u64) {
        self.start = ts;
        for c in &mut self.cpus {
            c.since = ts;
            c.freq_since = ts;
        }
        self.start_khz = self.cpus.iter().map(|c| c.khz).collect();
    }

    /// The task with `pid`, created when first seen.
    fn task(&mut self, pid: u32, comm: &str, prio: Option<i32>, start: u64) -> usize {
        let i = self.by_pid.get(pid).unwrap_or_else(|| {
            self.tasks.push(TaskTrace {
                pid,
                comm: comm.to_string(),
                prio: prio.unwrap_or(120),
                start,
                forked_by: None,
                exited: false,
                steps: Vec::new(),
                cpu_time_ns: 0,
                cpu_work: 0,
                wakeups: 0,
                latencies_ns: Vec::new(),
                migrations: 0,
                cpus: CpuSet::empty(),
                stretches: vec![Stretch {
                    first_step: 0,
                    cpus: CpuSet::empty(),
                    balance: false,
                    by_stopper: false,
                }],
                moves: Vec::new(),
                state: State::Unknown,
                work: 0,
                last_cpu: None,
                woken_at: None,
                ran_on: None,
                touched_mark: 0,
                llc_mark: 0,
                wake_from: None,
                affinity_set: false,
                stopped_on: None,
                reply_pending: false,
                owed: None,
                preempt_ipi: None,
                gone_at: None,
                woke_to: None,
            });
            self.by_pid.insert(pid, self.tasks.len() - 1);
            self.tasks.len() - 1
        });
        let t = &mut self.tasks[i];
        if let Some(p) = prio {
            t.prio = p;
        }
        if !comm.is_empty() && comm != t.comm && !comm.starts_with("<...>") {
            t.comm.clear();
            t.comm.push_str(comm);
        }
        i
    }

    /// Credit the CPU's current task with its running time up to `ts`.
    fn account(&mut self, cpu: usize, ts: u64) {
        let c = &mut self.cpus[cpu];
        if ts > c.freq_since {
            let f = &mut self.freq_ns[cpu];
            f.0 += c.khz as u128 * (ts - c.freq_since) as u128;
            f.1 += ts - c.freq_since;
            c.freq_since = ts;
        }
        if ts <= c.since {
            return;
        }
        let dt = ts - c.since;
        c.since = ts;
        if let Some(t) = c.curr {
            // The ticks of a busy CPU, on the jiffy grid, run in front of its task.
            let period = self.info.tick_ns.max(1);
            let ticks = ts / period - (ts - dt) / period;
            let speed = self.info.speed(cpu, c.khz);
            if ticks > 0 {
                c.debt += ticks * machine::tick(&self.info.costs).capacity_ns(speed);
                c.debt_at = ts / period * period;
            }
            let gained = dt * speed;
            let paid = gained.min(c.debt);
            c.debt -= paid;
            let task = &mut self.tasks[t];
            // The CPU's work is paid oldest first: the switch back's comes before any since.
            if let Some((i, rest)) = task.owed {
                let back = paid.min(rest);
                if let Some(Step::Preempted { work, .. }) = task.steps.get_mut(i) {
                    *work += back;
                }
                task.owed = (rest > back).then_some((i, rest - back));
            }
            task.work += gained - paid;
            task.cpu_time_ns += dt;
            task.cpu_work += gained;
            c.busy_at_khz += dt;
        }
    }

    /// A new frequency on `cpu`: the busy time at the old one goes to `busy_khz`.
    fn set_khz(&mut self, cpu: usize, khz: u32) {
        let max = self.info.max_khz.get(cpu).copied().unwrap_or(0);
        if max > 0 && khz > max {
            let seen = self.above_max.entry(cpu).or_insert(0);
            *seen = (*seen).max(khz);
        }
        let c = &mut self.cpus[cpu];
        if c.busy_at_khz > 0 {
            *self.busy_khz[cpu].entry(c.khz).or_insert(0) += std::mem::take(&mut c.busy_at_khz);
        }
        c.khz = khz;
    }

    /// The trace says `t` is current on `cpu` at `ts` (a switch's prev, a waker, a forking
    /// parent): if we did not know it, it ran there since what we last knew of the CPU.
    fn current(&mut self, cpu: usize, t: usize, ts: u64) {
        match self.cpus[cpu].curr {
            Some(c) if c == t => self.account(cpu, ts),
            None => {
                self.cpus[cpu].curr = Some(t);
                self.account(cpu, ts);
            }
            Some(_) => {
                self.account(cpu, ts);
                self.cpus[cpu].curr = Some(t);
            }
        }
        let task = &mut self.tasks[t];
        if matches!(task.state, State::Blocked(_)) {
            // A missed wake-up (lost events, or a trace without wake-up events): the block
            // ends here, cause unknown; when it was woken is unknown too, so it has no
            // wake-up latency.
            self.end_block(t, ts, Waker::Irq, cpu);
            self.tasks[t].woken_at = None;
        }
        let task = &mut self.tasks[t];
        if task.state != State::Running(cpu) {
            // Switched in (or first seen) here: a CPU of its stretch.
            let s = task.stretches.last_mut().expect("a task has a stretch");
            s.cpus.set(cpu);
        }
        task.state = State::Running(cpu);
        // `last_cpu` is always in `cpus`.
        if task.last_cpu != Some(cpu) {
            task.cpus.set(cpu);
            task.moves.push((task.steps.len(), cpu));
        }
        task.last_cpu = Some(cpu);
    }

    fn flush(&mut self, t: usize) {
        let task = &mut self.tasks[t];
        if task.work == 0 {
            return;
        }
        let w = std::mem::take(&mut task.work);
        // A stretch's work is its own.
        let fresh = task.stretches.last().map(|s| s.first_step) == Some(task.steps.len());
        match task.steps.last_mut() {
            Some(Step::Run(prev)) if !fresh => *prev += w,
            _ => task.steps.push(Step::Run(w)),
        }
    }

    fn end_block(&mut self, t: usize, ts: u64, waker: Waker, cpu: usize) {
        let task = &mut self.tasks[t];
        let State::Blocked(i) = task.state else {
            return;
        };
        if let Step::Block(b) = &mut task.steps[i] {
            b.end = Some(ts);
            b.waker = waker;
            b.same_cpu = task.last_cpu == Some(cpu);
        }
        task.state = State::Runnable;
        task.wakeups += 1;
        task.woken_at = Some(ts);
    }

    /// `t`, blocked, is switched in at `ts` on `cpu`, which was idle, and the trace logged no
    /// wake-up (a trace without `sched_waking`/`sched_wakeup`): the wake-up came the CPU's
    /// exit latency before (`CpuInfo::exit_latency`), so the block ends there and the
    /// replay's own wake-up takes its own; and the CPU did the wake path the model charges a
    /// timer's wake-up there (the interrupt, `try_to_wake_up` and placement when the task
    /// last ran there, else the wake list's interrupt; and the enqueue), which the task pays
    /// after its switch-in.
    fn unlogged_wake(&mut self, cpu: usize, t: usize, ts: u64) {
        let c = &self.cpus[cpu];
        let exit = self
            .info
            .exit_latency(cpu, c.idle_state, ts.saturating_sub(c.idle_since));
        let State::Blocked(i) = self.tasks[t].state else {
            return;
        };
        let (start, io) = match self.tasks[t].steps[i] {
            Step::Block(b) => (b.start, b.uninterruptible),
            _ => (ts, false),
        };
        let here = self.tasks[t].last_cpu.map_or(true, |l| l == cpu);
        // A block the exit does not fit in (the board's real exit is quicker than the
        // platform's worst case) still blocks: a µs, the least a sleep or I/O rounds to.
        let end = ts.saturating_sub(exit).max(start + 1_000).min(ts);
        self.end_block(t, end, Waker::Irq, cpu);
        self.tasks[t].woken_at = None;
        let k = self.info.costs;
        if here {
            self.charge(cpu, machine::timer_interrupt(&k, !io), ts);
            let scan = self.scan(t);
            self.charge(cpu, machine::wakeup(&k, scan), ts);
        } else {
            self.charge(cpu, machine::ipi(&k).handler, ts);
        }
        self.charge(cpu, machine::queue_op(&k, 1, 0), ts);
    }

    /// `charge` ([`machine`]'s rules) as capacity·ns of `cpu` at its current speed.
    fn capacity_ns(&self, cpu: usize, charge: Charge) -> u64 {
        charge.capacity_ns(self.info.speed(cpu, self.cpus[cpu].khz))
    }

    /// `cpu` pays `charge` at `ts`.
    fn charge(&mut self, cpu: usize, charge: Charge, ts: u64) {
        let work = self.capacity_ns(cpu, charge);
        let c = &mut self.cpus[cpu];
        c.debt += work;
        c.debt_at = ts;
    }

    /// The CPUs `select_task_rq` examines for `t` ([`machine::placement_scan`]).
    fn scan(&self, t: usize) -> u64 {
        let n = self.info.capacity.len() as u64;
        let task = &self.tasks[t];
        let rt = task.prio < 100;
        let p = Placement {
            rt,
            nr_cpus: n,
            asymmetric: !rt && self.info.asymmetric(),
            eas: self.info.eas && !self.overutilized,
            nr_pd: self.info.nr_pd as u64,
        };
        machine::placement_scan(p, || {
            let prev = task.last_cpu.unwrap_or(0);
            (0..n as usize)
                .filter(|&o| self.info.share_llc(prev, o))
                .count() as u64
        })
    }

    /// The `sched_waking` of `w`, which ends its block number `block`, logged on the CPU of
    /// `head`: who woke it, and the wake path's work there (the interrupt and hrtimer expiry
    /// of a timer or device, `try_to_wake_up` and the placement).
    fn waking(&mut self, head: Head, w: usize, block: usize, ts: u64) {
        let cpu = head.cpu;
        // sched_waking runs in the waker's context; sched_wakeup alone only when the
        // trace has no sched_waking (then the same holds for it).
        let waker = if head.irq || head.pid == 0 {
            Waker::Irq
        } else {
            let t = self.task(head.pid, "", None, self.start);
            if t == w {
                Waker::Irq
            } else {
                self.current(cpu, t, ts);
                self.flush(t);
                self.tasks[t].steps.push(Step::Wake { wakee: w, block });
                Waker::Task(t)
            }
        };
        let io = matches!(self.tasks[w].steps[block], Step::Block(b) if b.uninterruptible);
        self.end_block(w, ts, waker, cpu);
        let k = &self.info.costs;
        let irq = match waker {
            Waker::Irq => self.capacity_ns(cpu, machine::timer_interrupt(k, !io)),
            Waker::Task(_) => 0,
        };
        let path = irq + self.capacity_ns(cpu, machine::wakeup(k, self.scan(w)));
        let c = &mut self.cpus[cpu];
        c.debt += path;
        c.debt_at = ts;
        self.tasks[w].wake_from = Some((cpu, ts, path));
    }

    /// The `sched_wakeup` of `w`, woken on `from` (its CPU, time and path work), queued on
    /// `target`: the enqueue, and the IPI of v6.1's wake list (`ttwu_queue_cond`: another
    /// LLC, or an idle target), or a reschedule IPI to a busy target.
    fn queued(&mut self, w: usize, from: (usize, u64, u64), target: usize, ts: u64) {
        let (c, _, path) = from;
        let k = self.info.costs;
        let busy = self.cpus[target].curr.is_some();
        let share_llc = self.info.share_llc(c, target);
        let queue = machine::ttwu_queue(
            &k,
            ttwu_queue_cond(&self.variant, c, target, share_llc, !busy),
        );
        // The IPI the wake-up sends a busy target: the wake list's, or a reschedule.
        let ipi = queue.ipi.unwrap_or(machine::ipi(&k));
        let mut lead = path + self.capacity_ns(c, ipi.send);
        if let Some(ipi) = queue.ipi {
            self.charge(c, ipi.send, ts);
            self.charge(target, ipi.handler, ts);
        }
        let enqueue = machine::queue_op(&k, 1, 0);
        match queue.enqueuer {
            Payer::Waker => {
                self.charge(c, enqueue, ts);
                lead += self.capacity_ns(c, enqueue);
            }
            _ => self.charge(target, enqueue, ts),
        }
        if target != c && busy {
            let speed = self.info.speed(c, self.cpus[c].khz).max(1);
            let delay = lead.div_ceil(speed) + ipi.delivery_ns;
            self.tasks[w].preempt_ipi = Some((delay, queue.ipi.is_none(), ts, c));
        }
        if target != c && self.cpus[c].curr.is_none() {
            // An idle CPU whose wake-up went elsewhere did the work on its way back to
            // idle, delaying nothing.
            self.cpus[c].debt = 0;
        }
    }

    /// `n` is switched in on `cpu` at `ts`: the context switch, a reschedule IPI's
    /// interrupt and delivery when it preempts at once, and the refill of its working set.
    fn switch_in(&mut self, cpu: usize, n: usize, ts: u64, preempted: bool) {
        let k = self.info.costs;
        let speed = self.info.speed(cpu, self.cpus[cpu].khz);
        // Threads of one process at the root group (the trace says neither).
        let mut debt = machine::context_switch(&k, false, 1).capacity_ns(speed);
        let task = &mut self.tasks[n];
        task.wake_from = None;
        if let Some((delay, own, at, waker)) = task.preempt_ipi.take() {
            if preempted && at == ts {
                debt += delay * speed;
                if own {
                    let ipi = machine::ipi(&k);
                    debt += ipi.handler.capacity_ns(speed);
                    self.charge(waker, ipi.send, ts);
                }
            }
        }
        // The working set (rt-app's default: the trace does not carry it) lost to the
        // tasks switched in here since, or to a migration.
        let ws = DEFAULT_WORKING_SET;
        let task = &self.tasks[n];
        let llc = self.llc_of[cpu];
        let touched = Touched {
            cpu_now: self.cpus[cpu].touched,
            cpu_mark: task.touched_mark,
            llc_now: self.llc_touched[llc],
            llc_mark: task.llc_mark,
        };
        // The trace's platform description has no NUMA distances.
        let resume = machine::resume(
            task.ran_on,
            cpu,
            touched,
            |c| self.info.share_llc(c, cpu),
            |_| 10,
        );
        debt += machine::cache_refill(&self.info.memory, ws, resume).capacity_ns(speed);
        self.cpus[cpu].touched += machine::footprint(ws);
        self.llc_touched[llc] += machine::footprint(ws);
        let task = &mut self.tasks[n];
        task.touched_mark = self.cpus[cpu].touched;
        task.llc_mark = self.llc_touched[llc];
        task.ran_on = Some(cpu);
        let c = &mut self.cpus[cpu];
        c.debt += debt;
        c.debt_at = ts;
    }

    fn record(
        &mut self,
        head: Head,
        rec: Record<'_>,
        ts: u64,
        line: usize,
        file: &str,
    ) -> Result<(), InputError> {
        let cpu = head.cpu;
        // The scheduler's events, logged in the current task's context (not `print`s:
        // schedlab's own traces write rt-app's main thread's markers without running it).
        let sched = matches!(
            rec,
            Record::Switch { .. }
                | Record::Wake { .. }
                | Record::Migrate { .. }
                | Record::Fork { .. }
                | Record::Exit { .. }
                | Record::Rename { .. }
        );
        if head.pid != 0 && sched && self.cpus[cpu].idle {
            self.untraced_switch_in(cpu, head.pid, ts);
        }
        match rec {
            Record::Frequency { cpu, khz } | Record::FrequencyReport { cpu, khz } => {
                if cpu >= self.cpus.len() {
                    return Err(InputError::new(
                        file,
                        format!("line {line}"),
                        format!("a cpu_id below cpus={}", self.cpus.len()),
                        format!("cpu_id={cpu}"),
                    ));
                }
                self.account(cpu, ts);
                self.set_khz(cpu, khz);
                self.freq_changes.push((ts, cpu, khz));
            }
            rec @ Record::Switch { .. } => self.switch(cpu, rec, ts),
            rec @ Record::Wake { .. } => self.wake(head, rec, ts),
            Record::Overutilized { on } => self.overutilized = on,
            rec @ Record::Migrate { .. } => self.migrate(head, rec, ts),
            Record::Fork {
                parent_pid,
                child_pid,
                child_comm,
            } => {
                let prio = self.by_pid.get(parent_pid).map(|p| self.tasks[p].prio);
                let p = self.task(parent_pid, "", None, self.start);
                if head.pid == parent_pid {
                    self.current(cpu, p, ts);
                }
                let fresh = self.by_pid.get(child_pid).is_none();
                let c = self.task(child_pid, child_comm, prio, ts);
                if fresh {
                    self.flush(p);
                    self.tasks[p].steps.push(Step::Fork(c));
                    let child = &mut self.tasks[c];
                    child.forked_by = Some(p);
                    child.state = State::Runnable;
                }
            }
            Record::Exit { pid } => {
                if let Some(t) = self.by_pid.get(pid) {
                    if self.cpus[cpu].curr == Some(t) {
                        self.account(cpu, ts);
                    }
                    self.flush(t);
                    self.tasks[t].exited = true;
                }
            }
            Record::Rename { pid, newcomm } => {
                let t = self.task(pid, newcomm, None, self.start);
                self.tasks[t].comm = newcomm.to_string();
            }
            Record::CpuIdle { cpu, state } => {
                if let (Some(c), Some(k)) = (self.cpus.get_mut(cpu), state) {
                    c.idle_state = Some(k);
                }
            }
            Record::Lost { cpu } => {
                if cpu < self.cpus.len() {
                    let c = &mut self.cpus[cpu];
                    c.curr = None;
                    c.since = ts;
                    c.debt = 0;
                    c.idle = false;
                    c.preempted = None;
                }
            }
            Record::Other => {}
        }
        Ok(())
    }

    /// `sched_switch` on `cpu`: prev out (runnable, blocked, exited), the switch's work,
    /// next in.
    fn switch(&mut self, cpu: usize, rec: Record<'_>, ts: u64) {
        let Record::Switch {
            prev_pid,
            prev_comm,
            prev_prio,
            prev_state,
            next_pid,
            next_comm,
            next_prio,
        } = rec
        else {
            return;
        };
        if let Some(m) = self.cpus[cpu].moved.take() {
            // What the CPU did after the task moved itself off it: another task to
            // run means the move could be a balance.
            if self.tasks[m].pid == prev_pid && next_pid != 0 {
                let s = self.tasks[m].stretches.last_mut().expect("a stretch");
                s.balance = true;
            }
        }
        let preempted = self.cpus[cpu].preempted.take();
        let mut prev = None;
        if prev_pid != 0 {
            let p = self.task(prev_pid, prev_comm, Some(prev_prio), self.start);
            prev = Some(p);
            self.current(cpu, p, ts);
            // What it did not pay by now it never pays.
            self.tasks[p].owed = None;
            match prev_state {
                PrevState::Runnable => {
                    self.tasks[p].state = State::Runnable;
                    if next_comm.starts_with("migration/") {
                        self.tasks[p].stopped_on = Some(cpu);
                    }
                }
                PrevState::Sleeping | PrevState::Uninterruptible | PrevState::DeadOrParked => {
                    self.flush(p);
                    if let Some((w, t)) = preempted.filter(|&(w, t)| {
                        t == p
                            && self.tasks[w].pid == next_pid
                            && prev_state != PrevState::DeadOrParked
                    }) {
                        self.preemption_reply(w, t);
                    }
                    let task = &mut self.tasks[p];
                    if prev_state == PrevState::DeadOrParked {
                        // An exit unless it runs again (`finish`).
                        task.gone_at = Some(task.steps.len());
                    }
                    task.steps.push(Step::Block(Block {
                        uninterruptible: prev_state == PrevState::Uninterruptible,
                        start: ts,
                        end: None,
                        waker: Waker::Irq,
                        same_cpu: false,
                    }));
                    task.state = State::Blocked(task.steps.len() - 1);
                }
                PrevState::Dead => {
                    self.flush(p);
                    // Switched out dead: exited, with or without its
                    // `sched_process_exit`.
                    self.tasks[p].exited = true;
                    self.tasks[p].state = State::Dead;
                }
            }
        } else {
            self.account(cpu, ts);
        }
        // `schedule()`, and prev's dequeue when it blocks or exits. What the task
        // that ran did not pay by now it never pays (its own time took it); work
        // done at this instant (a wake-up that preempts, a tick) is the switch's.
        let k = &self.info.costs;
        let schedule = self.capacity_ns(cpu, machine::schedule(k));
        let dequeue = self.capacity_ns(cpu, machine::queue_op(k, 1, 0));
        let c = &mut self.cpus[cpu];
        if prev_pid != 0 && c.debt_at < ts {
            self.unpaid += std::mem::take(&mut c.debt);
        }
        c.debt += schedule;
        if prev_pid != 0 && prev_state != PrevState::Runnable {
            c.debt += dequeue;
        }
        c.debt_at = ts;
        c.curr = None;
        if next_pid == 0 {
            // Going idle: the work ends with the CPU's last task.
            c.debt = 0;
        }
        c.idle = next_pid == 0;
        if next_pid == 0 {
            c.idle_since = ts;
            c.idle_state = None;
        }
        if next_pid != 0 {
            let n = self.task(next_pid, next_comm, Some(next_prio), ts);
            if prev_pid == 0 && matches!(self.tasks[n].state, State::Blocked(_)) {
                self.unlogged_wake(cpu, n, ts);
            }
            let task = &mut self.tasks[n];
            if let Some(w) = task.woken_at.take() {
                task.latencies_ns.push(ts - w);
            }
            if let Some(from) = self.tasks[n].stopped_on.take().filter(|&f| f != cpu) {
                // Preempted by the stopper there, running here next, and no
                // `sched_migrate_task` logged it (`migrate`): the stopper moved it, for its
                // own `sched_setaffinity()`, its `sched_exec()` (an exec's placement, v6.1
                // and before) or an active balance.
                self.own_move(n, from, cpu, true);
            }
            if std::mem::take(&mut self.tasks[n].affinity_set) {
                let task = &mut self.tasks[n];
                task.cpus = CpuSet::empty();
                if let Some(s) = task.stretches.last_mut() {
                    s.cpus = CpuSet::empty();
                }
            }
            self.current(cpu, n, ts);
            let preempted = prev_pid != 0 && prev_state == PrevState::Runnable;
            if let Some(p) = prev.filter(|_| preempted) {
                // Preempted by a task it woke, which has not run since.
                let woke = matches!(
                    self.tasks[n].steps.last(),
                    Some(Step::Block(b)) if b.waker == Waker::Task(p) && b.end.is_some()
                );
                if woke {
                    self.cpus[cpu].preempted = Some((p, n));
                }
            }
            self.switch_in(cpu, n, ts, preempted);
            if std::mem::take(&mut self.tasks[n].reply_pending) {
                let i = self.tasks[n].steps.len() - 1;
                self.tasks[n].owed = Some((i, self.cpus[cpu].debt));
            }
        }
    }

    /// `t`, woken by `w`, preempted it at once (`wakeup_preempt`), and blocked with the CPU
    /// going straight back to `w`: `w` could not go on before `t` blocked. In a pipe's
    /// ping-pong (`perf bench sched pipe`) it is how one side waits for the other's reply:
    /// `w` writes, wakes the reader `t`, which preempts it, writes its reply and blocks on
    /// its next read; `w` then reads the reply without blocking. The trace shows `w`'s wait
    /// as a preemption, not a block, so without this step `w`'s program would send its
    /// writes back to back and `t` would read them without blocking, and the replay would
    /// lose `t`'s blocks and the kernel work each costs (the extraction took it out of `t`'s
    /// runs). The extraction makes the pair a `send` of `t`'s and a `recv` of `w`'s when it
    /// recurs (`Extraction::replies`).
    fn preemption_reply(&mut self, w: usize, t: usize) {
        self.tasks[t].steps.push(Step::Reply { to: w });
        self.flush(w);
        self.tasks[w].steps.push(Step::Preempted { by: t, work: 0 });
        self.tasks[w].reply_pending = true;
    }

    /// Task `pid` is current on `cpu` at `ts` (a scheduler event in its context) though the CPU's last
    /// switch was to idle: its switch-in was not traced. A kernel may not trace it: v6.18 on
    /// the project's VM logs no `sched_switch` out of idle (and no `cpu_idle`) on CPU 1, and
    /// a task woken there shows only as its wake-up and then events of its own. Its run
    /// began at the best evidence: its last wake-up onto this CPU since the CPU went idle
    /// (it could not run before it), else this first event of its; never at the switch to
    /// idle, which would count the idle time as its. The switch-in is then made as a traced
    /// one (its kernel work, its cache refill), with no wake-up latency (when it ran after
    /// the wake-up is unknown).
    fn untraced_switch_in(&mut self, cpu: usize, pid: u32, ts: u64) {
        let idle_since = self.cpus[cpu].idle_since;
        let known = self.by_pid.get(pid);
        let woke = known
            .and_then(|t| self.tasks[t].woke_to)
            .filter(|&(to, at)| to == cpu && at >= idle_since && at <= ts)
            .map(|w| w.1);
        let start = woke.unwrap_or(ts);
        let n = &mut self.untraced[cpu];
        if woke.is_some() {
            n.0 += 1;
        } else {
            n.1 += 1;
        }
        let c = &mut self.cpus[cpu];
        c.since = c.since.min(start);
        let prio = known.map_or(120, |t| self.tasks[t].prio);
        if let Some(t) = known {
            self.tasks[t].woken_at = None;
        }
        let switch = Record::Switch {
            prev_pid: 0,
            prev_comm: "",
            prev_prio: 120,
            prev_state: PrevState::Runnable,
            next_pid: pid,
            next_comm: "",
            next_prio: prio,
        };
        self.switch(cpu, switch, start);
    }

    /// `sched_waking`, `sched_wakeup` and `sched_wakeup_new`.
    fn wake(&mut self, head: Head, rec: Record<'_>, ts: u64) {
        let Record::Wake {
            waking,
            new,
            pid,
            comm,
            prio,
            target_cpu,
        } = rec
        else {
            return;
        };
        if pid == 0 {
            return;
        }
        let known = self.by_pid.get(pid).is_some();
        let w = self.task(pid, comm, Some(prio), if new { ts } else { self.start });
        if let Some(t) = target_cpu {
            self.tasks[w].woke_to = Some((t, ts));
        }
        if new {
            let task = &mut self.tasks[w];
            if !known {
                task.state = State::Runnable;
            }
            // wake_up_new_task(): the enqueue, on the CPU it is queued on.
            if let Some(t) = target_cpu.filter(|&t| t < self.cpus.len()) {
                self.charge(t, machine::queue_op(&self.info.costs, 1, 0), ts);
            }
            return;
        }
        if !known {
            // Blocked since before the window.
            let task = &mut self.tasks[w];
            task.steps.push(Step::Block(Block {
                uninterruptible: false,
                start: self.start,
                end: None,
                waker: Waker::Irq,
                same_cpu: false,
            }));
            task.state = State::Blocked(0);
        }
        if let State::Blocked(block) = self.tasks[w].state {
            self.waking(head, w, block, ts);
        }
        if !waking {
            // sched_wakeup: where the wake-up queued the task.
            if let (Some(target), Some(from)) = (target_cpu, self.tasks[w].wake_from) {
                self.tasks[w].wake_from = None;
                if target < self.cpus.len() {
                    self.queued(w, from, target, ts);
                }
            }
        }
    }

    /// `sched_migrate_task`.
    fn migrate(&mut self, head: Head, rec: Record<'_>, ts: u64) {
        let Record::Migrate {
            pid,
            orig_cpu,
            dest_cpu,
        } = rec
        else {
            return;
        };
        // A task that moves itself off its CPU at its start (before it first blocks,
        // within `START_UP_NS` of running) changed its own affinity as it started
        // (rt-app's task `cpus`, `sched_setaffinity`): where it ran until then is
        // not where it may run. A later move of its own ends a stretch (`Stretch`).
        if let Some(t) = self.by_pid.get(pid) {
            self.tasks[t].migrations += 1;
            let stopped = self.tasks[t].stopped_on.take() == Some(orig_cpu);
            let own = head.pid == pid && self.cpus.get(orig_cpu).is_some_and(|c| c.curr == Some(t));
            if own {
                self.account(orig_cpu, ts);
                if self.own_move(t, orig_cpu, dest_cpu, false) {
                    self.cpus[orig_cpu].moved = Some(t);
                }
            } else if stopped {
                // The stopper, having preempted it, moves it (see `switch`).
                self.own_move(t, orig_cpu, dest_cpu, true);
            }
        }
    }

    /// A move of `t`'s own from `from` to `to`: at its start, its affinity being set (where
    /// it ran until then is not where it may run); later, the start of a stretch. Whether
    /// it began a stretch.
    fn own_move(&mut self, t: usize, from: usize, to: usize, by_stopper: bool) -> bool {
        let task = &self.tasks[t];
        if task.wakeups == 0 && task.cpu_time_ns < START_UP_NS {
            self.tasks[t].affinity_set = true;
            return false;
        }
        self.flush(t);
        let cap = |c: usize| self.info.capacity.get(c).copied().unwrap_or(0);
        let up = cap(to) > cap(from);
        let task = &mut self.tasks[t];
        task.stretches.push(Stretch {
            first_step: task.steps.len(),
            cpus: CpuSet::empty(),
            balance: up,
            by_stopper,
        });
        true
    }

    fn finish(&mut self, end: u64) {
        for c in 0..self.cpus.len() {
            self.account(c, end);
            self.set_khz(c, self.cpus[c].khz);
        }
        for t in 0..self.tasks.len() {
            self.flush(t);
            // Switched out with bit 64 and never woken: `TASK_DEAD` (before v4.14), an exit.
            let task = &mut self.tasks[t];
            if let Some(i) = task.gone_at {
                if matches!(task.steps.get(i), Some(Step::Block(b)) if b.end.is_none()) {
                    task.steps.truncate(i);
                    task.exited = true;
                    task.state = State::Dead;
                }
            }
        }
        // A task never seen in a known state ran or waited since the window's start.
        for t in &mut self.tasks {
            if t.state == State::Unknown && t.forked_by.is_none() {
                t.start = t.start.min(self.start);
            }
        }
    }
}

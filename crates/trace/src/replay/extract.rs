//! A timeline → an rt-app workload: per task its policy and priority (from `prio`) and, in
//! order, what it did.
//!
//! - A running stretch is `run` work (µs at capacity 1024, the timeline's capacity·ns).
//! - A block ended by a task that is kept is a dependency: the waker posts to a futex
//!   channel of the pair (schedlab's `send`) at the point of its run where it woke the task,
//!   and the wakee waits on it (`recv`). The channel remembers a post nobody waits for yet
//!   (its capacity is the pair's number of posts, so none is dropped; each `recv` takes
//!   one): a replay in which the waker gets there first cannot lose the wake-up, which
//!   rt-app's `resume`/`suspend` and condition signals would (docs/model.md, "Blocking
//!   IPC"). rt-app's own semaphores (`sem_post`/`sem_wait`) remember posts too, but are a
//!   mutex and a condition: a post and a wait that meet make a block and a wake-up of the
//!   mutex the trace never had.
//! - A block ended by a timer or an interrupt (or by a task left out) keeps its delay:
//!   `sleep`, or for a `D` block `iorun` with its service time; when the task's wake-ups of
//!   that kind lie on a grid, they are an rt-app `timer` of that period (absolute mode), so a
//!   replay on slower CPUs keeps the period and stretches the run; once the grid's phase
//!   moved (rt-app's relative timer after a late period), they wake at their traced times
//!   (`Item::WakeAt`). One that lasted at least
//!   a CFS period (`resync_ns`) wakes at its time in the trace: an absolute `timer` of the
//!   task's own whose periods are the times between such wake-ups (`Item::WakeAt`).
//! - A fork is rt-app's `fork` of a task made for the child; an exit ends the program.
//!
//! Repeated runs of the same events (within 1% on their amounts) become phases with a loop
//! count, so the file stays readable.

use super::timeline::{Block, Step, TaskTrace, Timeline, Waker};
use schedlab_base::CpuSet;
use schedlab_model::kernel::Variant;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use std::collections::hash_map::{Entry, HashMap};
use std::collections::{BTreeMap, BTreeSet};

/// Which tasks to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Comm patterns (`*` matches any run of characters) or pids; empty: every task.
    pub tasks: Vec<String>,
    /// Drop tasks that ran less than this (ns of CPU time in the trace).
    pub min_runtime_ns: u64,
    /// Pin each task to the CPUs it ran on in the trace (rt-app `cpus`): the trace does not
    /// say what affinity or cpuset a task had.
    pub affinity: bool,
    /// Pin each run to the CPU it ran on, moving the task where the trace moved it
    /// (`run_pins`): the trace's placement, not the replay kernel's.
    pub per_run: bool,
}

impl Filter {
    fn keeps(&self, t: &TaskTrace) -> bool {
        let named = |t: &TaskTrace| {
            self.tasks
                .iter()
                .any(|p| p.parse::<u32>().ok() == Some(t.pid) || glob(p, &t.comm))
        };
        t.cpu_time_ns >= self.min_runtime_ns
            && if self.tasks.is_empty() {
                model_own(&t.comm).is_none()
            } else {
                named(t)
            }
    }
}

/// What the model does itself of a kernel thread of the trace, which the replay therefore
/// leaves to it (unless `--task` names the thread): schedutil's `sugov:N` (the model's
/// governor sets the frequency after `cost.cpufreq_work_ns`, without a task) and the
/// stopper `migration/N` (the model makes its active-balance and affinity moves itself).
/// The idle tasks are not tasks of the trace at all.
pub fn model_own(comm: &str) -> Option<&'static str> {
    let numbered = |prefix: &str| {
        comm.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if numbered("sugov:") {
        Some("schedutil's kthread: the model's governor")
    } else if numbered("migration/") {
        Some("the stopper: the model's own moves")
    } else {
        None
    }
}

/// `*` matches any run of characters; anything else itself.
fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first) || s.len() < first.len() + last.len() || !s.ends_with(last) {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// How a block is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Woken by a kept task: a futex channel of the pair.
    Task(usize),
    /// A periodic wake-up: the task's timer.
    Timer,
    /// A timer or interrupt that is not periodic: the delay (sleep or I/O).
    Interrupt,
}

/// A periodic grid of wake-ups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    pub period_ns: u64,
    /// The first wake-up at which its phase moved, if it did: rt-app's timer in its default
    /// (relative) mode takes its reference from the moment the task came to it late, past a
    /// whole period, so its wake-ups go on a period apart from there.
    pub moved: Option<u64>,
    /// The wake-ups on it, in order: the task's first wake-up first.
    pub on: Vec<u64>,
}

impl Grid {
    /// The first wake-up on it.
    pub fn first(&self) -> u64 {
        self.on[0]
    }
}

/// Timers fire within their slack (50 µs by default for a fair task: `timer_slack_ns`), plus
/// the interrupt's own latency.
const GRID_TOLERANCE_NS: u64 = 60_000;
/// Same-CPU wake-ups by one task that make it a chain rather than coincidences of a timer
/// firing under it.
const CHAIN_MIN: u64 = 3;
/// Delays shorter than this are not worth a sleep at a task's start (schedlab spreads the
/// initial threads' starts over `model.start_spread_ns`, 20 µs).
const START_SLACK_NS: u64 = 100_000;

/// The extraction: which tasks are kept, how each block ends, each task's grid.
pub struct Extraction<'t> {
    pub timeline: &'t Timeline,
    pub kept: Vec<bool>,
    pub names: Vec<String>,
    /// Per task, per step: the cause of a block step.
    pub causes: Vec<Vec<Option<Cause>>>,
    pub grids: Vec<Option<Grid>>,
    /// Pin each task to the CPUs it ran on (`Filter::affinity`), or each run
    /// (`Filter::per_run`).
    affinity: bool,
    per_run: bool,
    /// The pairs (waker, wakee) of kept tasks whose wakee's reply the replay makes a
    /// channel of (`Extraction::replies`).
    replies: BTreeSet<(usize, usize)>,
    /// A block an interrupt ended after at least this long wakes at its time in the trace
    /// (`resync_ns`); a shorter one keeps its length.
    resync_ns: u64,
}

impl<'t> Extraction<'t> {
    pub fn new(timeline: &'t Timeline, filter: &Filter) -> Extraction<'t> {
        let kept: Vec<bool> = timeline.tasks.iter().map(|t| filter.keeps(t)).collect();
        let names = task_names(timeline, &kept);
        let mut causes = Vec::with_capacity(timeline.tasks.len());
        let mut grids = Vec::with_capacity(timeline.tasks.len());
        for (i, t) in timeline.tasks.iter().enumerate() {
            let dependency = |b: &Block| match b.waker {
                Waker::Task(w) if kept[w] && w != i => Some(w),
                _ => None,
            };
            // A wake-up logged on the CPU the task slept on, by the task running there, is
            // ambiguous without the trace's irq flags: the task's timer fires on that CPU,
            // under whatever runs. When one waker does most of them it is a chain (a real
            // dependency); when the wakers vary, or one did it once or twice (a timer that
            // fired under it), they are the task's timer or interrupts.
            let mut same_cpu_wakers: BTreeMap<usize, u64> = BTreeMap::new();
            for s in &t.steps {
                if let Step::Block(b) = s {
                    if let (true, Some(w)) = (b.same_cpu && b.end.is_some(), dependency(b)) {
                        *same_cpu_wakers.entry(w).or_insert(0) += 1;
                    }
                }
            }
            let total: u64 = same_cpu_wakers.values().sum();
            let top = same_cpu_wakers.values().copied().max().unwrap_or(0);
            let chain = top >= CHAIN_MIN && top * 5 >= total * 4;
            let ambiguous = |b: &Block| b.same_cpu && !chain && dependency(b).is_some();
            // Timer candidates: blocks no kept task surely ended.
            let candidates: Vec<u64> = t
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::Block(b)
                        if !b.uninterruptible && (dependency(b).is_none() || ambiguous(b)) =>
                    {
                        b.end
                    }
                    _ => None,
                })
                .collect();
            let grid = find_grid(&candidates);
            let on_grid = |w: u64| {
                grid.as_ref()
                    .is_some_and(|g| g.on.binary_search(&w).is_ok())
            };
            let c = t
                .steps
                .iter()
                .map(|s| {
                    let Step::Block(b) = s else { return None };
                    let end = b.end?;
                    // A timer is re-armed every period: a block across more than one did
                    // not end by it (a steady interrupt, e.g. network traffic, can look
                    // periodic), and as the timer its wait would be one per period.
                    let within_period = grid
                        .as_ref()
                        .is_some_and(|g| end - b.start <= g.period_ns * 3 / 2);
                    let periodic = !b.uninterruptible && within_period && on_grid(end);
                    Some(match dependency(b) {
                        _ if periodic && (dependency(b).is_none() || ambiguous(b)) => Cause::Timer,
                        Some(_) if ambiguous(b) => Cause::Interrupt,
                        Some(w) => Cause::Task(w),
                        None => Cause::Interrupt,
                    })
                })
                .collect();
            causes.push(c);
            grids.push(grid);
        }
        let replies = replies(timeline, &kept);
        let resync_ns = resync_ns(timeline.nr_cpus);
        Extraction {
            timeline,
            kept,
            names,
            causes,
            grids,
            affinity: filter.affinity,
            per_run: filter.per_run,
            replies,
            resync_ns,
        }
    }

    /// The trace's threads left to the model (`model_own`), a line per kind: what they are
    /// and which ones.
    pub fn left_to_model(&self) -> Vec<String> {
        let mut by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (i, t) in self.timeline.tasks.iter().enumerate() {
            if let (false, Some(why)) = (self.kept[i], model_own(&t.comm)) {
                by.entry(why).or_default().push(&t.comm);
            }
        }
        by.into_iter()
            .map(|(why, comms)| {
                format!(
                    "left to the model, not replayed: {} ({why})",
                    comms.join(" ")
                )
            })
            .collect()
    }

    /// Wake-ups of kept tasks by cause: (task, timer, interrupt).
    pub fn attribution(&self) -> (u64, u64, u64) {
        let mut n = (0, 0, 0);
        for (i, c) in self.causes.iter().enumerate() {
            if !self.kept[i] {
                continue;
            }
            for c in c.iter().flatten() {
                match c {
                    Cause::Task(_) => n.0 += 1,
                    Cause::Timer => n.1 += 1,
                    Cause::Interrupt => n.2 += 1,
                }
            }
        }
        n
    }

    /// Who wakes whom: (waker, wakee) name pairs with their counts.
    pub fn edges(&self) -> BTreeMap<(String, String), u64> {
        self.named(self.wake_pairs())
    }

    /// The wake-ups of kept tasks by kept tasks, by (waker, wakee) index pair: counted by
    /// pair first, as a pair of names per wake-up would be two allocations.
    fn wake_pairs(&self) -> BTreeMap<(usize, usize), u64> {
        let mut pairs: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        for (i, c) in self.causes.iter().enumerate() {
            if !self.kept[i] {
                continue;
            }
            for c in c.iter().flatten() {
                if let Cause::Task(w) = c {
                    *pairs.entry((*w, i)).or_insert(0) += 1;
                }
            }
        }
        pairs
    }

    /// Index pairs as name pairs, the counts of pairs of the same names added.
    fn named(&self, pairs: BTreeMap<(usize, usize), u64>) -> BTreeMap<(String, String), u64> {
        let mut m = BTreeMap::new();
        for ((w, i), n) in pairs {
            *m.entry((self.names[w].clone(), self.names[i].clone()))
                .or_insert(0) += n;
        }
        m
    }

    /// The rt-app workload as a JSON value.
    pub fn workload(&self) -> Value {
        serde_json::to_value(self.programs()).expect("the workload serialises")
    }

    /// The rt-app workload as pretty-printed JSON text, the text of `workload()`: written
    /// from the programs directly, without a `Value` tree (a map per phase) in between.
    pub fn workload_json(&self) -> String {
        serde_json::to_string_pretty(&self.programs()).expect("the workload serialises")
    }

    /// The kept tasks' programs and the global section.
    fn programs(&self) -> Workload<'_> {
        let tl = self.timeline;
        // In pid order: the order the tasks were created in, which is the order schedlab
        // starts a workload's threads in (and draws their start times).
        let mut order: Vec<usize> = (0..tl.tasks.len()).filter(|&i| self.kept[i]).collect();
        order.sort_by_key(|&i| tl.tasks[i].pid);
        let mut tasks: Vec<(usize, Program)> = Vec::with_capacity(order.len());
        // Where each name is in `tasks`: a task whose cleaned name another's took (comm
        // `a-5` beside two `a`s, one of pid 5) replaces it in its place, as a map would.
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(order.len());
        for i in order {
            let p = self.task(i, &tl.tasks[i]);
            match at.entry(&self.names[i]) {
                Entry::Occupied(e) => tasks[*e.get()] = (i, p),
                Entry::Vacant(e) => {
                    e.insert(tasks.len());
                    tasks.push((i, p));
                }
            }
        }
        let channels = self.named(channels(&tasks));
        Workload {
            names: &self.names,
            tasks,
            duration: (tl.end - tl.start).div_ceil(1_000_000_000).max(1),
            channels,
        }
    }

    /// What task `i`'s program does before the trace's first step of it: its `delay` (µs,
    /// from the start of the use case), the items that bring it to its first activity (a
    /// sleep until it, when its timer starts before), and its timer's start.
    fn prelude(&self, i: usize, t: &TaskTrace) -> (Option<u64>, Vec<Item>, Option<u64>) {
        let tl = self.timeline;
        let mut items = Vec::new();
        let mut start = t.start;
        // The last timer wake-up, or the timer's start: each timer wake-up first advances
        // the timer by the periods missed since (below).
        let mut last_timer: Option<u64> = None;
        if let Some(g) = &self.grids[i] {
            // rt-app's timer counts periods from the task's start: start it a whole number
            // of periods before its grid's first wake-up, at or before its first activity.
            // The periods until its first timer wake-up are advanced there, where they are
            // past (no wait): the task did other things in them (its first activity, a long
            // sleep), which a wait per period at the start would put off.
            let first = g.first();
            let lead = (first - first.min(t.start)).saturating_sub(GRID_TOLERANCE_NS);
            let periods = lead.div_ceil(g.period_ns).max(1);
            let anchor = first.saturating_sub(periods * g.period_ns).max(tl.start);
            if anchor < t.start && t.start - anchor >= START_SLACK_NS {
                items.push(Item::Sleep(t.start - anchor));
            }
            start = anchor;
            last_timer = Some(anchor);
        }
        let delay_us = if t.forked_by.is_none() && start - tl.start >= START_SLACK_NS {
            Some((start - tl.start) / 1000)
        } else if t.forked_by.is_some() && self.grids[i].is_some() {
            Some(start.saturating_sub(tl.start) / 1000)
        } else {
            None
        };
        (delay_us, items, last_timer)
    }

    /// The wake-ups of task `i`'s replay that the trace does not count: those of its
    /// prelude (`prelude`), the end of its `delay` and of a sleep until its first activity.
    /// The trace counts a wake-up it saw end a block; the replay's thread starts with the
    /// use case and sleeps until the task's first activity in the trace, whose wake-up the
    /// trace saw only if it logged it (and then as the end of the block that the trace's
    /// first steps hold, which the replay has too).
    pub fn prelude_wakeups(&self, i: usize) -> u64 {
        let (delay_us, items, _) = self.prelude(i, &self.timeline.tasks[i]);
        u64::from(delay_us.is_some_and(|d| d > 0)) + items.len() as u64
    }

    fn task(&self, i: usize, t: &TaskTrace) -> Program {
        let tl = self.timeline;
        let (policy, priority) = policy(t.prio);
        let mut dl_us = None;
        if policy == "SCHED_DEADLINE" {
            // The trace has no deadline parameters: a reservation of the task's longest
            // run in every period of that length, which lets it run as it did.
            let longest = t.steps.iter().filter_map(|s| match s {
                Step::Run(w) => Some(w / 1024 / 1000),
                _ => None,
            });
            dl_us = Some(longest.max().unwrap_or(0).max(1));
        }
        let pins = if self.per_run {
            Some(run_pins(t))
        } else if self.affinity {
            stretch_pins(t)
        } else {
            None
        };
        let cpus = (self.affinity && pins.is_none()).then(|| t.cpus.iter().collect());
        let pins = pins.unwrap_or_default();
        // Where each stretch starts in the items, with its CPUs.
        let mut cuts: Vec<(usize, Vec<usize>)> = Vec::new();
        let (delay_us, mut items, mut last_timer) = self.prelude(i, t);
        let mut last_wake = tl.start + delay_us.unwrap_or(0) * 1000;
        for (s, step) in t.steps.iter().enumerate() {
            while let Some(p) = pins.get(cuts.len()).filter(|p| p.0 <= s) {
                // The first stretch holds what comes before the steps (a timer's start).
                let at = if cuts.is_empty() { 0 } else { items.len() };
                cuts.push((at, p.1.clone()));
            }
            match *step {
                Step::Run(w) => {
                    // The runs on either side of a move the task keeps no stretch for are
                    // one (the timeline cuts its run at each move of its own).
                    let moved = t
                        .stretches
                        .binary_search_by_key(&s, |st| st.first_step)
                        .is_ok();
                    let cut = cuts.last().map(|c| c.0) == Some(items.len());
                    match items.last_mut() {
                        Some(Item::Run(prev)) if moved && !cut => *prev += w,
                        _ => items.push(Item::Run(w)),
                    }
                }
                Step::Wake { wakee, block } => {
                    if self.causes[wakee][block] == Some(Cause::Task(i)) && self.kept[wakee] {
                        items.push(Item::Post(i, wakee));
                    }
                }
                Step::Fork(c) => {
                    if self.kept[c] {
                        items.push(Item::Fork(c));
                    }
                }
                Step::Reply { to } => {
                    if self.replies.contains(&(to, i)) {
                        items.push(Item::Post(i, to));
                    }
                }
                Step::Preempted { by, work } => {
                    if self.replies.contains(&(i, by)) {
                        items.push(Item::Wait(by, i));
                    } else if work > 0 {
                        // No wait, so no switch in the replay: the work of the traced
                        // switch back, taken out of the run after it, stays the task's.
                        match items.last_mut() {
                            Some(Item::Run(prev)) => *prev += work,
                            _ => items.push(Item::Run(work)),
                        }
                    }
                }
                Step::Block(b) => {
                    let Some(end) = b.end else {
                        // Still blocked at the end: sleep past it.
                        items.push(Item::Sleep(tl.end - b.start + 1_000_000_000));
                        continue;
                    };
                    match self.causes[i][s].expect("every ended block has a cause") {
                        Cause::Task(w) => items.push(Item::Wait(w, i)),
                        // Once its phase moved, the timer's wake-ups come at their times in
                        // the trace: an absolute timer keeps the phase it started with.
                        Cause::Timer
                            if self.grids[i]
                                .as_ref()
                                .and_then(|g| g.moved)
                                .is_some_and(|m| end >= m) =>
                        {
                            items.push(Item::WakeAt(end - last_wake));
                            last_wake = end;
                        }
                        Cause::Timer => {
                            let g = self.grids[i].as_ref().expect("a timer block has a grid");
                            // Periods missed since the last timer wake-up (the task was late
                            // and did not sleep, or slept otherwise) still advance the timer.
                            if let Some(prev) = last_timer {
                                let n = ((end - prev) + g.period_ns / 2) / g.period_ns;
                                for _ in 1..n {
                                    items.push(Item::Timer);
                                }
                            }
                            last_timer = Some(end);
                            items.push(Item::Timer);
                        }
                        Cause::Interrupt if b.uninterruptible => {
                            items.push(Item::Io(end - b.start))
                        }
                        Cause::Interrupt if end - b.start >= self.resync_ns => {
                            items.push(Item::WakeAt(end - last_wake));
                            last_wake = end;
                        }
                        Cause::Interrupt => items.push(Item::Sleep(end - b.start)),
                    }
                }
            }
        }
        for p in pins.iter().skip(cuts.len()) {
            let at = if cuts.is_empty() { 0 } else { items.len() };
            cuts.push((at, p.1.clone()));
        }
        if !t.exited {
            // Alive at the end of the trace: it must not exit in the replay.
            if !matches!(items.last(), Some(Item::Sleep(_))) {
                items.push(Item::Sleep(tl.end - tl.start + 1_000_000_000));
            }
        }
        remove_syscall_costs(&mut items, tl.syscall_ns);
        // Each new stretch's affinity is a `sched_setaffinity` the replay makes at the end
        // of the stretch before, where the traced task made it: out of the run it ends.
        for &(at, _) in cuts.iter().skip(1) {
            if let Some(Item::Run(w)) = at.checked_sub(1).and_then(|k| items.get_mut(k)) {
                *w = w.saturating_sub(tl.syscall_ns * 1024);
            }
        }
        let leads = leads(&items);
        let period_us = self.grids[i]
            .as_ref()
            .map_or(0, |g| g.period_ns.div_ceil(1000));
        let phases = phases(&items, &leads, &cuts);
        Program {
            instance: t.forked_by.is_some_and(|p| self.kept[p]),
            policy,
            priority,
            dl_us,
            cpus,
            delay_us,
            timer_ref: format!("{}-timer", self.names[i]),
            wake_ref: format!("{}-wake", self.names[i]),
            period_us,
            pins: cuts.into_iter().map(|c| c.1).collect(),
            phases,
        }
    }
}

/// The futex channels the programs name, by (sender, receiver) index pair, with the posts
/// each carries (a phase's posts times its loops): wake-ups and replies alike, counted from
/// the items themselves. Every one is declared with room for all its posts: one left out
/// would be a pipe, whose `recv` takes every byte queued, so two posts made before their
/// `recv`s (a replay whose wake-ups come in another order than traced) would end one wait,
/// and the next would wait for ever.
fn channels(tasks: &[(usize, Program)]) -> BTreeMap<(usize, usize), u64> {
    let mut pairs: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for (_, p) in tasks {
        for ph in &p.phases {
            for (_, it) in &ph.events {
                match *it {
                    Item::Post(w, t) => *pairs.entry((w, t)).or_insert(0) += ph.reps as u64,
                    // Waited on only: a futex all the same (no post ends it either way).
                    Item::Wait(w, t) => {
                        pairs.entry((w, t)).or_insert(0);
                    }
                    _ => {}
                }
            }
        }
    }
    // A capacity is at least 1.
    pairs.values_mut().for_each(|n| *n = (*n).max(1));
    pairs
}

/// How long a block ended by an interrupt must have lasted for the replay to wake it at the
/// interrupt's time in the trace rather than after the block's length: one period of the
/// traced kernel's CFS (v6.1 `sysctl_sched_latency`, 6 ms × `1 + ilog2(min(CPUs, 8))`; the
/// trace does not say its sysctls, so the defaults).
///
/// An interrupt comes when its device says, not when the task that waits for it gets
/// there: a replayed task that runs later than it did in the trace (each of its wake-ups a
/// few µs slower, a run that waited longer for its CPU) would carry that lateness through
/// every sleep of the traced length, and a shell or a daemon waiting on a terminal or a
/// network for seconds ends its trace with its last runs after the trace's end. Woken at
/// the trace's time, it is back on the trace's clock after each such block. But a task that
/// blocks after the time its interrupt came would not block at all (the rt-app timer of an
/// absolute time that has passed does not sleep), and the trace says it did: a block is
/// taken as the interrupt's time only when it is long enough that the replay's lateness
/// cannot pass it. Within one CFS period every runnable task has had its turn, so a task is
/// rarely later than that at one wake-up; the blocks shorter than that keep their length.
fn resync_ns(nr_cpus: usize) -> u64 {
    let v = Variant::default();
    v.sched_latency_ns * v.tunable_factor(nr_cpus)
}

/// Moves of its own a load balancer does not make (`Stretch::balance`) that show a task
/// changing its affinity as it runs (rt-app's per-phase `cpus`): one or two can be a
/// balance the trace cannot tell from one (a spread of lone tasks across clusters); a
/// repeated pattern is the task's own doing.
const AFFINITY_MOVES_MIN: usize = CHAIN_MIN as usize;

/// Per stretch of a task's run (its first step, its CPUs), when the trace shows the task
/// changing its affinity as it runs (`AFFINITY_MOVES_MIN`): each stretch is pinned to the
/// CPUs it ran on in it, as rt-app's per-phase `cpus` would (the trace shows where the task
/// ran, not its mask: that the mask was those CPUs is the guess `--pin` makes for a whole
/// task). Then every move of its own starts a stretch, a balance-like one too (the task
/// moving up as its phase's mask changes); consecutive stretches on the same CPUs are one.
/// None otherwise: the task's moves are balancing's, and the task keeps its one pin.
fn stretch_pins(t: &TaskTrace) -> Option<Vec<(usize, Vec<usize>)>> {
    let own = t.stretches.iter().skip(1).filter(|s| !s.balance).count();
    if own < AFFINITY_MOVES_MIN && !t.stretches.iter().any(|s| s.by_stopper) {
        return None;
    }
    let mut pins: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut last: Option<&CpuSet> = None;
    for s in &t.stretches {
        // A stretch never switched in (the trace ended) goes with the one before.
        if s.cpus.is_empty() || last == Some(&s.cpus) {
            continue;
        }
        last = Some(&s.cpus);
        pins.push((
            if pins.is_empty() { 0 } else { s.first_step },
            s.cpus.iter().collect(),
        ));
    }
    Some(pins)
}

/// Per move of a task (`TaskTrace::moves`), the CPU it ran on from there: each a pin,
/// applied by a `sched_setaffinity` at the end of the run before, as for `stretch_pins`.
fn run_pins(t: &TaskTrace) -> Vec<(usize, Vec<usize>)> {
    let mut pins: Vec<(usize, Vec<usize>)> = Vec::new();
    for &(step, cpu) in &t.moves {
        let at = if pins.is_empty() { 0 } else { step };
        match pins.last_mut() {
            // Moves before the next step replace each other: the last one holds.
            Some(last) if last.0 == at => last.1 = vec![cpu],
            _ => pins.push((at, vec![cpu])),
        }
    }
    pins
}

/// The traced runs include the system calls of the program; the replay charges its own
/// (`syscall_ns` each, at capacity 1024): take them out of the work around them. A
/// thread's start sets its policy (one call); a futex post or wait costs one call after it,
/// a fork one before it.
fn remove_syscall_costs(items: &mut [Item], syscall_ns: u64) {
    let call = syscall_ns * 1024;
    let take = |items: &mut [Item], from: Option<usize>, calls: u64| {
        if let Some(Item::Run(w)) = from.and_then(|k| items.get_mut(k)) {
            *w = w.saturating_sub(calls * call);
        }
    };
    let first_run = items.iter().position(|it| matches!(it, Item::Run(_)));
    take(items, first_run, 1);
    for k in 0..items.len() {
        let before = k
            .checked_sub(1)
            .filter(|&b| matches!(items[b], Item::Run(_)));
        let after = Some(k + 1).filter(|&a| matches!(items.get(a), Some(Item::Run(_))));
        match items[k] {
            Item::Post(..) | Item::Wait(..) => take(items, after, 1),
            Item::Fork(_) => take(items, before, 1),
            _ => {}
        }
    }
}

/// Which amounts lead to a dependency: per item, whether it lies between a point that sets
/// the task's time from outside its program (its start, the end of a `recv`, a timer of the
/// grid) and a later `send` or `fork`, with no such point in between.
///
/// The amounts are rounded to µs with the remainders carried on (`phase_events`), so a
/// task's own clock stays within a µs of the trace's. What another task sees, though, is
/// where a `send` falls after the point that last set the sender's time; in a pair that
/// syncs both ways (barriers) each crossing's wait ends at the other's post, so the errors
/// of these leading stretches add up along the chain of crossings even while each task's
/// clock holds. Carried together with the rest they have a bias (the same amounts, rounded
/// alike, every loop): example7's replay ran 30 µs ahead of its trace after 0.4 s, which
/// moved a wake-up from after a tick to before it, the wakee's CPU out of the deeper idle
/// state it re-entered at the tick (1.2 ms of exit latency), and the order of the next
/// barrier: the post came first, the `recv` did not block, a wake-up was lost. With a carry
/// of their own the leading stretches' errors sum to within a µs (between phases that loop;
/// within one, each repetition rounds alike), so the `send`s do not drift.
fn leads(items: &[Item]) -> Vec<bool> {
    let mut leads = vec![false; items.len()];
    let mut pending = false;
    for (k, it) in items.iter().enumerate().rev() {
        match it {
            Item::Post(..) | Item::Fork(_) => pending = true,
            Item::Wait(..) | Item::Timer | Item::WakeAt(_) => pending = false,
            Item::Run(_) | Item::Sleep(_) | Item::Io(_) => leads[k] = pending,
        }
    }
    leads
}

/// The pairs (waker, wakee) of kept tasks where the wakee, preempting its waker, blocked
/// with the CPU going straight back to the waker (`Step::Reply`, `Step::Preempted`: the
/// waker waited for the wakee's reply) at least `CHAIN_MIN` times and in at least four of
/// five of the waker's wake-ups of it (the share a chain needs): a ping-pong, which the
/// replay makes a `send` of the wakee's before that block and a `recv` of the waker's where
/// it was preempted. Fewer, or a waker that mostly woke the wakee without waiting for it
/// (a shell writing to a terminal's kworker), are taken for chance: a `recv` there would
/// hold the waker back in the replay where it was never waiting.
fn replies(tl: &Timeline, kept: &[bool]) -> BTreeSet<(usize, usize)> {
    let mut n: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let mut wakes: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for (t, task) in tl.tasks.iter().enumerate().filter(|(t, _)| kept[*t]) {
        for s in &task.steps {
            match *s {
                Step::Reply { to } if kept[to] && to != t => {
                    *n.entry((to, t)).or_insert(0) += 1;
                }
                Step::Wake { wakee, .. } => *wakes.entry((t, wakee)).or_insert(0) += 1,
                _ => {}
            }
        }
    }
    n.into_iter()
        .filter(|&(pair, k)| k >= CHAIN_MIN && k * 5 >= wakes.get(&pair).copied().unwrap_or(0) * 4)
        .map(|(pair, _)| pair)
        .collect()
}

/// Names of the kept tasks: the comm, with the pid when two kept tasks share one; characters
/// rt-app names cannot hold are replaced.
fn task_names(tl: &Timeline, kept: &[bool]) -> Vec<String> {
    let clean = |t: &TaskTrace| -> String {
        let c: String = t
            .comm
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if c.is_empty() {
            format!("pid{}", t.pid)
        } else {
            c
        }
    };
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (t, _) in tl.tasks.iter().zip(kept).filter(|(_, &k)| k) {
        *count.entry(clean(t)).or_insert(0) += 1;
    }
    tl.tasks
        .iter()
        .map(|t| {
            let c = clean(t);
            if count.get(&c).copied().unwrap_or(0) > 1 {
                format!("{c}-{}", t.pid)
            } else {
                c
            }
        })
        .collect()
}

/// rt-app's policy and priority for a kernel prio.
fn policy(prio: i32) -> (&'static str, Option<i32>) {
    match prio {
        p if p < 0 => ("SCHED_DEADLINE", None),
        p if p < 100 => ("SCHED_FIFO", Some(99 - p)),
        p => ("SCHED_OTHER", Some((p - 120).clamp(-20, 19))),
    }
}

/// The periodic grid of a task's wake-up times, if most of them lie on one: the period is
/// the densest cluster of the gaps between consecutive wake-ups (a missed period makes a
/// gap of two).
fn find_grid(wakes: &[u64]) -> Option<Grid> {
    if wakes.len() < 4 {
        return None;
    }
    let mut gaps: Vec<u64> = wakes
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&g| g > 0)
        .collect();
    gaps.sort_unstable();
    let (mut best, mut best_at, mut j) = (0, 0, 0);
    for i in 0..gaps.len() {
        let tol = GRID_TOLERANCE_NS.min(gaps[i] / 20);
        j = j.max(i);
        while j < gaps.len() && gaps[j] - gaps[i] <= tol {
            j += 1;
        }
        if j - i > best {
            best = j - i;
            best_at = i;
        }
    }
    let cluster = &gaps[best_at..best_at + best];
    let period = cluster.iter().sum::<u64>() / cluster.len() as u64;
    if period == 0 || best < 3 {
        return None;
    }
    let tol = GRID_TOLERANCE_NS.min(period / 10);
    // Whole periods from `from` to `w`, if `w` lies on the grid from `from`.
    let periods = |from: u64, w: u64| {
        let n = ((w - from) + period / 2) / period;
        (n >= 1 && (w - from).abs_diff(n * period) <= tol).then_some(n as usize)
    };
    // Whether `w` lies clearly off the phase of the grid through `from`: further from it than
    // two tolerances, more than a late timer's jitter (cyclictest's wake-ups on a busy VM
    // spread ±30 µs about their phase, so two of them may lie 64 µs apart).
    let moved_phase = |from: u64, w: u64| {
        let off = (w - from) % period;
        off.min(period - off) > 2 * tol
    };
    // Count the wake-ups on the grid, re-anchoring at each (timer drift), and the periods
    // they span (`spans`, one per wake-up on it). A wake-up clearly off its phase from
    // which the next MOVE_CONFIRM come a period apart each moves the grid's phase there
    // (rt-app's relative timer after a late period). A later wake-up back on the phase
    // from before the move shows the stretch between to have been late wake-ups of a
    // timer that kept its phase (cyclictest's, behind a busy CPU): off the grid, no move.
    let mut last = wakes[0];
    let mut on = vec![wakes[0]];
    let mut spans = vec![0];
    // Per move: where it starts in `on`, and the last wake-up on the grid before it.
    let mut moves: Vec<(usize, u64)> = Vec::new();
    for (k, &w) in wakes.iter().enumerate().skip(1) {
        let n = if let Some(n) = periods(last, w) {
            n
        } else if let Some((at, n)) = moves
            .last()
            .and_then(|&(at, before)| Some((at, periods(before, w)?)))
        {
            on.truncate(at);
            spans.truncate(at);
            moves.pop();
            n
        } else if moved_phase(last, w)
            && (k..k + MOVE_CONFIRM).all(|j| match (wakes.get(j), wakes.get(j + 1)) {
                (Some(&a), Some(&b)) => periods(a, b) == Some(1),
                _ => false,
            })
        {
            moves.push((on.len(), last));
            1
        } else {
            continue;
        };
        on.push(w);
        spans.push(n);
        last = w;
    }
    let spanned: usize = spans.iter().sum();
    // Most wake-ups on it, and a wake-up in most of its periods: a timer fires every period
    // unless its task overran it. An interrupt of a steady rate (network traffic) puts many
    // wake-ups on a short grid, with long gaps between. A phase moves now and then (a late
    // period): wake-ups that move it all the time lie on no grid.
    (on.len() * 2 >= wakes.len()
        && (on.len() - 1) * 2 >= spanned
        && moves.len() * MOVES_PER_WAKEUPS <= on.len())
    .then(|| Grid {
        period_ns: period,
        moved: moves.first().map(|&(at, _)| on[at]),
        on,
    })
}

/// How many periods in a row from a wake-up off the grid make it where the grid's phase
/// moved, and the fewest wake-ups on the grid per move.
const MOVE_CONFIRM: usize = 3;
const MOVES_PER_WAKEUPS: usize = 8;

/// One event of a task's program, amounts in ns (work: capacity·ns); in a `Phase`, µs.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Run(u64),
    Sleep(u64),
    Io(u64),
    Timer,
    /// A wake-up at a time of the trace, ns after the task's previous one of these (or after
    /// the end of its `delay`, where rt-app starts a timer): its wake timer.
    WakeAt(u64),
    /// A wake-up of task `.1` by task `.0` (task indices; the channel is named at output).
    Post(usize, usize),
    Wait(usize, usize),
    Fork(usize),
}

impl Item {
    /// Same kind and target, amounts within 1% (or 1 µs).
    fn like(&self, o: &Item) -> bool {
        let close = |a: u64, b: u64, unit: u64| a.abs_diff(b) <= (a.max(b) / 100).max(unit);
        match (self, o) {
            (Item::Run(a), Item::Run(b)) => close(*a, *b, 1024 * 1000),
            (Item::Sleep(a), Item::Sleep(b))
            | (Item::Io(a), Item::Io(b))
            | (Item::WakeAt(a), Item::WakeAt(b)) => close(*a, *b, 1000),
            _ => self == o,
        }
    }
}

/// The longest repeated pattern considered for a phase.
const MAX_PATTERN: usize = 8;

/// The items as rt-app phases: a repeated pattern is one phase with a loop count and the
/// mean amounts; the rest, in order, phases run once. `cuts` are where the task's stretches
/// start (item index) with their CPUs (`stretch_pins`): no phase spans two, and each of a
/// stretch's phases carries its `cpus` (the cut's index); none, one stretch on the task's
/// CPUs.
fn phases(items: &[Item], leads: &[bool], cuts: &[(usize, Vec<usize>)]) -> Vec<Phase> {
    let mut out = Vec::new();
    // Rounding carries (ns) so that the µs amounts add up to the trace's.
    let mut carry = Carries::default();
    let p = Phasing { items, leads };
    if cuts.is_empty() {
        p.stretch(0, items.len(), None, &mut out, &mut carry);
    }
    for (k, &(from, _)) in cuts.iter().enumerate() {
        let to = cuts.get(k + 1).map_or(items.len(), |c| c.0);
        p.stretch(from, to, Some(k), &mut out, &mut carry);
    }
    if out.is_empty() {
        out.push(Phase {
            reps: 1,
            events: vec![(0, Item::Sleep(0))],
            cpus: None,
        });
    }
    out
}

/// What `phases` writes the phases of.
struct Phasing<'a> {
    items: &'a [Item],
    leads: &'a [bool],
}

impl Phasing<'_> {
    /// A phase of `items` (looped `reps` times) into `out`, with the CPUs of cut `cpus` if
    /// given.
    fn push(
        &self,
        items: &[Item],
        leads: &[bool],
        reps: usize,
        cpus: Option<usize>,
        out: &mut Vec<Phase>,
        carry: &mut Carries,
    ) {
        let events = phase_events(items, leads, reps, carry);
        if !events.is_empty() {
            out.push(Phase { reps, events, cpus });
        }
    }

    /// The phases of the items `lo..hi`.
    fn stretch(
        &self,
        lo: usize,
        hi: usize,
        cpus: Option<usize>,
        out: &mut Vec<Phase>,
        carry: &mut Carries,
    ) {
        let (items, leads) = (self.items, self.leads);
        // The items since the last repeated pattern, to run once: `single..i`.
        let mut single = lo;
        let mut i = lo;
        let flush_single = |from: usize, to: usize, out: &mut Vec<Phase>, c: &mut Carries| {
            if from < to {
                self.push(&items[from..to], &leads[from..to], 1, cpus, out, c);
            }
        };
        while i < hi {
            let mut best = (1, 1);
            for len in 1..=MAX_PATTERN.min(hi - i) {
                let mut reps = 1;
                while i + (reps + 1) * len <= hi
                    && (0..len).all(|k| {
                        let j = i + reps * len + k;
                        items[j].like(&items[i + k]) && leads[j] == leads[i + k]
                    })
                {
                    reps += 1;
                }
                if reps >= 2 && reps * len > best.0 * best.1 {
                    best = (len, reps);
                }
            }
            let (len, reps) = best;
            if reps < 2 {
                i += 1;
                continue;
            }
            flush_single(single, i, out, carry);
            let mean: Vec<Item> = (0..len)
                .map(|k| {
                    let all = (0..reps).map(|r| &items[i + r * len + k]);
                    let avg =
                        |f: &dyn Fn(&Item) -> u64| all.clone().map(f).sum::<u64>() / reps as u64;
                    match &items[i + k] {
                        Item::Run(_) => {
                            Item::Run(avg(&|x| if let Item::Run(a) = x { *a } else { 0 }))
                        }
                        Item::Sleep(_) => {
                            Item::Sleep(avg(&|x| if let Item::Sleep(a) = x { *a } else { 0 }))
                        }
                        Item::Io(_) => Item::Io(avg(&|x| if let Item::Io(a) = x { *a } else { 0 })),
                        Item::WakeAt(_) => {
                            Item::WakeAt(avg(&|x| if let Item::WakeAt(a) = x { *a } else { 0 }))
                        }
                        other => other.clone(),
                    }
                })
                .collect();
            self.push(&mean, &leads[i..i + len], reps, cpus, out, carry);
            i += len * reps;
            single = i;
        }
        flush_single(single, i, out, carry);
    }
}

/// Rounding remainders (ns) of the run, sleep and I/O amounts written so far: per kind, one
/// for the amounts that lead to a dependency and one for the rest (`leads`).
type Carries = [[i64; 2]; 4];

/// One phase's events, amounts rounded to µs, each with its index in `items` (the number
/// of its key: `run0`, `sleep1`…). `carry` keeps the rounding remainders (over a loop,
/// `reps` times each); `leads` says, per item, which of its two carries an amount goes
/// with. Runs shorter than a µs are left out; empty when nothing is left.
fn phase_events(
    items: &[Item],
    leads: &[bool],
    reps: usize,
    carry: &mut Carries,
) -> Vec<(usize, Item)> {
    let mut events = Vec::with_capacity(items.len());
    for (n, it) in items.iter().enumerate() {
        let lead = leads[n] as usize;
        let mut round = |ns: u64, kind: usize| -> u64 {
            let carry = &mut carry[kind][lead];
            let want = ns as i64 + *carry / reps as i64;
            let us = (want + 500).div_euclid(1000).max(0);
            *carry += (ns as i64 - us * 1000) * reps as i64;
            us as u64
        };
        let event = match it {
            Item::Run(w) => {
                let us = round(w / 1024, 0);
                if us == 0 {
                    continue;
                }
                Item::Run(us)
            }
            Item::Sleep(ns) => Item::Sleep(round(*ns, 1)),
            Item::Io(ns) => Item::Io(round(*ns, 2)),
            Item::WakeAt(ns) => Item::WakeAt(round(*ns, 3)),
            other => other.clone(),
        };
        events.push((n, event));
    }
    events
}

/// The extracted workload, for serde: JSON text (`workload_json`) or a `Value`
/// (`workload`) from the same entries in the same order.
struct Workload<'a> {
    names: &'a [String],
    /// The kept tasks in pid order: index and program.
    tasks: Vec<(usize, Program)>,
    /// `global.duration`, s.
    duration: u64,
    channels: BTreeMap<(String, String), u64>,
}

/// A task's object.
struct Program {
    /// Forked by a kept task: `instance: 0`, started by its `fork`.
    instance: bool,
    policy: &'static str,
    priority: Option<i32>,
    /// `dl-runtime` and `dl-period`, µs.
    dl_us: Option<u64>,
    /// The task's own `cpus` (`--pin` without per-stretch pins).
    cpus: Option<Vec<usize>>,
    delay_us: Option<u64>,
    timer_ref: String,
    period_us: u64,
    wake_ref: String,
    /// The CPUs of each stretch, which phases name by index.
    pins: Vec<Vec<usize>>,
    phases: Vec<Phase>,
}

/// A phase: its events (amounts in µs, each with the number of its key), looped `reps`
/// times, on the CPUs of `pins[cpus]` if given.
struct Phase {
    reps: usize,
    events: Vec<(usize, Item)>,
    cpus: Option<usize>,
}

/// A key made of a name and a number (`p3`, `run0`), written without a `String` of its own.
struct Key(&'static str, usize);

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // On the stack, not through `collect_str`: `fmt` machinery and an escaping adapter
        // per key cost more than the rest of writing it (keys are most of the output).
        let mut buf = [0u8; 32];
        let name = self.0.as_bytes();
        buf[..name.len()].copy_from_slice(name);
        let mut digits = [0u8; 20];
        let mut n = self.1;
        let mut k = digits.len();
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let len = name.len() + digits.len() - k;
        buf[name.len()..len].copy_from_slice(&digits[k..]);
        s.serialize_str(std::str::from_utf8(&buf[..len]).expect("ASCII"))
    }
}

/// The name of the futex channel of a waker and a wakee: `waker>wakee`.
struct Channel<'a>(&'a str, &'a str);

impl Serialize for Channel<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // On the stack as `Key`, when the names fit (comms are at most 15 bytes).
        let (a, b) = (self.0.as_bytes(), self.1.as_bytes());
        let mut buf = [0u8; 96];
        let len = a.len() + 1 + b.len();
        if len > buf.len() {
            return s.collect_str(&format_args!("{}>{}", self.0, self.1));
        }
        buf[..a.len()].copy_from_slice(a);
        buf[a.len()] = b'>';
        buf[a.len() + 1..len].copy_from_slice(b);
        s.serialize_str(std::str::from_utf8(&buf[..len]).expect("two names and a `>`"))
    }
}

/// A value of a program that writes names (`send`, `recv`, `fork`): with the names.
struct Named<'a, T>(&'a T, &'a [String]);

impl Serialize for Workload<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Tasks<'a>(&'a Workload<'a>);
        impl Serialize for Tasks<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let w = self.0;
                let mut m = s.serialize_map(Some(w.tasks.len()))?;
                for (i, p) in &w.tasks {
                    m.serialize_entry(&w.names[*i], &Named(p, w.names))?;
                }
                m.end()
            }
        }
        struct Channels<'a>(&'a BTreeMap<(String, String), u64>);
        impl Serialize for Channels<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for ((a, b), n) in self.0 {
                    m.serialize_entry(&Channel(a, b), &Futex(*n))?;
                }
                m.end()
            }
        }
        struct Futex(u64);
        impl Serialize for Futex {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("kind", "futex")?;
                m.serialize_entry("capacity", &self.0)?;
                m.end()
            }
        }
        struct Global<'a>(&'a Workload<'a>);
        impl Serialize for Global<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let w = self.0;
                let channels = !w.channels.is_empty();
                let mut m = s.serialize_map(Some(2 + channels as usize))?;
                m.serialize_entry("duration", &w.duration)?;
                m.serialize_entry("default_policy", "SCHED_OTHER")?;
                if channels {
                    m.serialize_entry("channels", &Channels(&w.channels))?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("tasks", &Tasks(self))?;
        m.serialize_entry("global", &Global(self))?;
        m.end()
    }
}

impl Serialize for Named<'_, Program> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Phases<'a>(&'a Program, &'a [String]);
        impl Serialize for Phases<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.phases.len()))?;
                for (k, ph) in self.0.phases.iter().enumerate() {
                    m.serialize_entry(&Key("p", k), &Named(&(self.0, ph), self.1))?;
                }
                m.end()
            }
        }
        let p = self.0;
        let mut m = s.serialize_map(None)?;
        if p.instance {
            m.serialize_entry("instance", &0)?;
        }
        m.serialize_entry("policy", p.policy)?;
        if let Some(pr) = p.priority {
            m.serialize_entry("priority", &pr)?;
        }
        if let Some(us) = p.dl_us {
            m.serialize_entry("dl-runtime", &us)?;
            m.serialize_entry("dl-period", &us)?;
        }
        if let Some(c) = &p.cpus {
            m.serialize_entry("cpus", c)?;
        }
        if let Some(d) = p.delay_us {
            m.serialize_entry("delay", &d)?;
        }
        m.serialize_entry("loop", &1)?;
        m.serialize_entry("phases", &Phases(p, self.1))?;
        m.end()
    }
}

impl Serialize for Named<'_, (&Program, &Phase)> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (p, ph) = *self.0;
        let names = self.1;
        let mut m = s.serialize_map(Some(1 + ph.events.len() + ph.cpus.is_some() as usize))?;
        m.serialize_entry("loop", &ph.reps)?;
        for (n, it) in &ph.events {
            let n = *n;
            match *it {
                Item::Run(us) => m.serialize_entry(&Key("run", n), &us)?,
                Item::Sleep(us) => m.serialize_entry(&Key("sleep", n), &us)?,
                Item::Io(us) => m.serialize_entry(&Key("iorun", n), &Io(us))?,
                Item::Timer => m.serialize_entry(&Key("timer", n), &Timer(p))?,
                Item::WakeAt(us) => m.serialize_entry(&Key("timer", n), &Wake(p, us))?,
                Item::Post(w, t) => {
                    m.serialize_entry(&Key("send", n), &Send(Channel(&names[w], &names[t])))?
                }
                Item::Wait(w, t) => {
                    m.serialize_entry(&Key("recv", n), &Recv(Channel(&names[w], &names[t])))?
                }
                Item::Fork(c) => m.serialize_entry(&Key("fork", n), &names[c])?,
            }
        }
        if let Some(k) = ph.cpus {
            m.serialize_entry("cpus", &p.pins[k])?;
        }
        m.end()
    }
}

/// `iorun`'s value: a 4 KiB I/O of this service time (µs).
struct Io(u64);
/// `timer`'s value: the task's timer, absolute.
struct Timer<'a>(&'a Program);
struct Wake<'a>(&'a Program, u64);
struct Send<'a>(Channel<'a>);
struct Recv<'a>(Channel<'a>);

impl Serialize for Io {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("bytes", &4096)?;
        m.serialize_entry("service_us", &self.0)?;
        m.end()
    }
}

impl Serialize for Timer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("ref", &self.0.timer_ref)?;
        m.serialize_entry("period", &self.0.period_us)?;
        m.serialize_entry("mode", "absolute")?;
        m.end()
    }
}

impl Serialize for Wake<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("ref", &self.0.wake_ref)?;
        m.serialize_entry("period", &self.1)?;
        m.serialize_entry("mode", "absolute")?;
        m.end()
    }
}

impl Serialize for Send<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("channel", &self.0)?;
        m.serialize_entry("bytes", &1)?;
        m.end()
    }
}

impl Serialize for Recv<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("channel", &self.0)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("thread*", "thread0-0"));
        assert!(glob("*-0", "thread0-0"));
        assert!(glob("a*c*e", "abcde"));
        assert!(!glob("a*c*e", "abde"));
        assert!(glob("rt-app", "rt-app"));
        assert!(!glob("rt-app", "rt-app2"));
    }

    /// A barrier-like pair's program: woken, work, post, work, sleep, wait. The work between
    /// the wake-up and the post rounds on its own carry, so the posts do not drift.
    #[test]
    fn the_work_before_a_post_rounds_apart() {
        let mut items = vec![Item::Run(100_000 * 1024)];
        let (mut lead, mut rest) = (0u64, 0u64);
        for k in 0..50u64 {
            // Amounts that differ by more than 1% each time: no loop.
            let (a, b) = (400_600 + k * 10_000, 200_400 + k * 5_000);
            items.extend([
                Item::Wait(1, 0),
                Item::Run(a * 1024),
                Item::Post(0, 1),
                Item::Run(b * 1024),
                Item::Sleep(2_000_000),
            ]);
            lead += a;
            rest += b;
        }
        let leads = leads(&items);
        assert!(!leads[0] && leads[2] && !leads[4] && !leads[5]);
        let phases = phases(&items, &leads, &[]);
        // The runs in order: the first, then per round the leading one and the rest.
        let mut runs = Vec::new();
        for p in &phases {
            for _ in 0..p.reps {
                runs.extend(p.events.iter().filter_map(|(_, e)| match e {
                    Item::Run(us) => Some(us * 1000),
                    _ => None,
                }));
            }
        }
        assert_eq!(runs.len(), 101);
        // Each carried apart: within a µs of its own total (carried together, the leading
        // runs' 0.6 µs would round up every time, 20 µs in all).
        let sum = |from: usize| runs[from..].iter().step_by(2).sum::<u64>();
        assert!(sum(1).abs_diff(lead) <= 1000, "{} ns for {lead}", sum(1));
        assert!(sum(2).abs_diff(rest) <= 1000, "{} ns for {rest}", sum(2));
    }

    #[test]
    fn grid_of_a_timer_with_a_missed_period() {
        let p = 16_666_667;
        let mut w: Vec<u64> = (0..20).map(|k| 1_000_000 + k * p).collect();
        w.remove(7);
        let g = find_grid(&w).expect("periodic");
        assert_eq!(g.period_ns, p);
        // A sleeper whose run stretches vary has no grid.
        let mut t = 0;
        let s: Vec<u64> = (0..20)
            .map(|k| {
                t += 80_000_000 + (k * k * 37_000) % 3_000_000;
                t
            })
            .collect();
        assert_eq!(find_grid(&s), None);
    }

    /// rt-app's timer in its default relative mode: a task late at it by more than a period
    /// takes its reference from then, so its wake-ups go on a period apart from a new phase.
    /// The grid follows the move and says where it was; wake-ups that move all the time (a
    /// burst of short blocks 76-100 µs apart, LISA's sched_load `shutils`) lie on none.
    #[test]
    fn grid_of_a_timer_whose_phase_moved() {
        let p = 10_000_000;
        let mut w: Vec<u64> = (0..20).map(|k| 1_000_000 + k * p).collect();
        let shift = 2_690_000;
        w.extend((20..60).map(|k| 1_000_000 + k * p + shift));
        let g = find_grid(&w).expect("periodic");
        assert_eq!(g.period_ns, p);
        assert_eq!(g.moved, Some(w[20]));
        assert_eq!(g.on, w);
        // Without the move, the same wake-ups from the start keep the first phase.
        let g = find_grid(&w[..20]).expect("periodic");
        assert_eq!((g.moved, g.on.len()), (None, 20));
        let mut t = 2_084_237_703_000;
        let burst: Vec<u64> = [0, 100_000, 76_000, 80_000, 78_000, 78_000, 449_000, 92_000]
            .iter()
            .map(|d| {
                t += d;
                t
            })
            .collect();
        assert_eq!(find_grid(&burst), None);
        // An absolute timer (cyclictest's) whose task was late four periods running, 200 µs
        // each, behind a busy CPU: back on its phase after, so no move; those four are off.
        let mut late: Vec<u64> = (0..40).map(|k| 1_000_000 + k * p).collect();
        for x in &mut late[10..14] {
            *x += 200_000;
        }
        let g = find_grid(&late).expect("periodic");
        assert_eq!((g.moved, g.on.len()), (None, 36));
        assert!(!g.on.contains(&late[11]));
    }

    /// A task woken by an interrupt of a steady rate (network packets every 217 µs) in
    /// bursts with long gaps is no timer: a timer fires every period.
    #[test]
    fn a_steady_interrupt_in_bursts_is_no_grid() {
        let p = 217_000;
        let mut w = Vec::new();
        let mut t = 1_000_000;
        for burst in 0..6 {
            for _ in 0..5 {
                t += p;
                w.push(t);
            }
            t += (20 + burst) * p;
        }
        assert_eq!(find_grid(&w), None);
        // The same wake-ups every period: a timer.
        let w: Vec<u64> = (0..30).map(|k| 1_000_000 + k * p).collect();
        assert_eq!(find_grid(&w).map(|g| g.period_ns), Some(p));
    }
}

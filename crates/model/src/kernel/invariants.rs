//! The kernel's invariants, checked after every event in debug builds (`resched_pending`)
//! at a cost proportional to what the event touched, with a full check now and then.
//!
//! - **Touched.** The model marks what it changes at a few central places: a CPU's
//!   runqueue at enqueue and dequeue, `resched_curr()`, `schedule()`, the charging of kernel
//!   work, a task's move to another CPU, the misfit update and the idle loop's state choice;
//!   a task at enqueue and dequeue, at each change of its state (fork, wake-up, sleep,
//!   exit) and of its CPU. The fair class marks its entities and queues (`fair.rs`), the
//!   timelines the nodes they relink (`fair/timeline.rs`), the channels those operated on
//!   (`pipe.rs`), the hrtimer bases the timers they arm or move (`hrtimer.rs`). After the
//!   event each touched thing is checked alone, in O(1) or O(depth of a timeline):
//!   counters are compared with recounts kept up to date from the touched things (this
//!   module's tasks per runqueue, `fair/shadow.rs` for the fair queues) instead of walking
//!   the queues.
//! - **Full.** Everything: every task, CPU, entity, queue, whole timeline, channel and
//!   timer, and every recorded recount against the thing itself (a change the marking
//!   missed shows up there). It runs at the first
//!   event and then every [`EVENTS_PER_ITEM`] × (tasks + CPUs + entities + queues +
//!   channel items) events, so its cost per event stays O(1) as the model grows.
//!   [`Kernel::check_fully_every_event`] (or `Simulation::check_fully_every_event`) makes
//!   it run after every event: `tests/it/invariants.rs` does that over a few small scenarios.
//!
//! Release builds mark nothing and check nothing ([`Touched`] is empty there).

use super::sched::TaskId;
use super::touched::Touched;
#[cfg(debug_assertions)]
use super::{core::Kernel, sched::TaskState};

/// Events between full checks per item a full check walks, which keeps the full checks to
/// a small share of a run's checking: 2.5% of a debug hackbench run (8 groups, 40 loops,
/// smp8) against 22% for the per-event ones (callgrind instructions).
#[cfg(debug_assertions)]
const EVENTS_PER_ITEM: usize = 4;

/// What the kernel's debug checks keep: the CPUs and tasks touched since the last check,
/// the recount of each runqueue's tasks, and when the next full check runs.
#[derive(Debug, Default)]
pub(super) struct Checks {
    cpus: Touched,
    tasks: Touched,
    /// Run the full check after every event.
    #[cfg(debug_assertions)]
    full_every_event: bool,
    /// Events left before the next full check.
    #[cfg(debug_assertions)]
    until_full: usize,
    /// Per task, the CPU whose runqueue counts it, as last checked; per CPU, the tasks
    /// counted on it (`Rq::nr_running` recounted); and the full check's scratch recount.
    #[cfg(debug_assertions)]
    counted_on: Vec<Option<usize>>,
    #[cfg(debug_assertions)]
    queued: Vec<u32>,
    #[cfg(debug_assertions)]
    recount: Vec<u32>,
}

impl Checks {
    /// The checks of a machine of `nr_cpus` CPUs.
    #[cfg(debug_assertions)]
    pub(super) fn new(nr_cpus: usize) -> Checks {
        Checks {
            queued: vec![0; nr_cpus],
            ..Checks::default()
        }
    }

    /// No checks in release builds.
    #[cfg(not(debug_assertions))]
    pub(super) fn new(_nr_cpus: usize) -> Checks {
        Checks::default()
    }

    /// `cpu`'s runqueue (or its idle state, kernel work, balancer state) changed.
    #[inline]
    pub(super) fn cpu(&mut self, cpu: usize) {
        self.cpus.mark(cpu);
    }

    /// Task `t`'s state, queueing or CPU changed.
    #[inline]
    pub(super) fn task(&mut self, t: TaskId) {
        self.tasks.mark(t);
    }
}

#[cfg(debug_assertions)]
impl Kernel {
    /// The checks after an event: the full one when due, else those of what it touched.
    pub(super) fn check_invariants(&mut self) {
        if self.checks.full_every_event || self.checks.until_full == 0 {
            self.check_all();
            self.checks.until_full = EVENTS_PER_ITEM * self.check_items();
        } else {
            self.checks.until_full -= 1;
            self.check_touched();
        }
    }

    /// Run the full check after every event from now on (debug builds): slow, for tests.
    pub fn check_fully_every_event(&mut self) {
        self.checks.full_every_event = true;
    }

    /// What a full check walks.
    fn check_items(&self) -> usize {
        self.tasks.len() + self.rqs.len() + self.fair.check_items() + self.channels.check_items()
    }

    /// The checks of what the event touched.
    fn check_touched(&mut self) {
        // Recount every touched task before any runqueue is compared with the recount.
        while let Some(t) = self.checks.tasks.pop() {
            self.recount_task(t);
            self.check_task(t);
        }
        while let Some(cpu) = self.checks.cpus.pop() {
            self.check_cpu(cpu);
        }
        self.fair.check_touched();
        let tasks = &self.tasks;
        self.channels.check_touched(|t| tasks[t].on_rq);
        self.hrtimers
            .check_touched(|t| tasks[t].state != TaskState::Running);
    }

    /// Everything, and every recount against what it counts.
    fn check_all(&mut self) {
        self.check_touched();
        let c = &mut self.checks;
        c.recount.clear();
        c.recount.resize(self.rqs.len(), 0);
        for (id, t) in self.tasks.iter().enumerate() {
            let on = t.on_rq.then_some(t.cpu);
            assert_eq!(
                c.counted_on.get(id).copied().flatten(),
                on,
                "task {} queued or moved where no debug check was told",
                t.pid
            );
            if let Some(cpu) = on {
                c.recount[cpu] += 1;
            }
        }
        assert_eq!(c.recount, c.queued, "runqueue recount out of step");
        for t in 0..self.tasks.len() {
            self.check_task(t);
        }
        for cpu in 0..self.rqs.len() {
            self.check_cpu(cpu);
        }
        self.fair.check_all();
        self.channels.check_invariants();
        for ch in &self.channels.chans {
            for t in ch.waiters() {
                assert!(
                    !self.tasks[t].on_rq,
                    "task {} blocked on a channel is queued",
                    self.tasks[t].pid
                );
            }
        }
        self.check_balance_invariants();
        self.check_cpuidle_invariants();
        self.hrtimers
            .check(|t| self.tasks[t].state != TaskState::Running);
    }

    /// Move task `t` in the recount to the runqueue that counts it now.
    fn recount_task(&mut self, t: TaskId) {
        let task = &self.tasks[t];
        let on = task.on_rq.then_some(task.cpu);
        let c = &mut self.checks;
        if c.counted_on.len() <= t {
            c.counted_on.resize(t + 1, None);
        }
        if let Some(cpu) = std::mem::replace(&mut c.counted_on[t], on) {
            c.queued[cpu] -= 1;
        }
        if let Some(cpu) = on {
            c.queued[cpu] += 1;
        }
    }

    /// Task `t`: on a runqueue exactly when runnable (a new task not yet); current only
    /// if runnable; no sleep timer armed while runnable.
    fn check_task(&self, t: TaskId) {
        let task = &self.tasks[t];
        match task.state {
            TaskState::Running => assert!(task.on_rq, "runnable task {} on no runqueue", task.pid),
            TaskState::New => assert!(!task.on_rq),
            _ => assert!(!task.on_rq, "sleeping task {} still queued", task.pid),
        }
        // A task is current only on its own CPU (`check_cpu`), so that one tells.
        if self.rqs[task.cpu].curr == Some(t) {
            assert_eq!(task.state, TaskState::Running, "task {} current", task.pid);
        }
        assert!(
            task.state != TaskState::Running || !self.hrtimers.has_timer(t),
            "task {} runs with a sleep timer",
            task.pid
        );
    }

    /// CPU `cpu`: its task count is the recount's; its resched bit is `need_resched`; its
    /// current task is on it (so no task is current on two CPUs) and runnable; it has kernel
    /// work pending while idle only for the task it is about to run; and its balancer and
    /// idle states.
    fn check_cpu(&self, cpu: usize) {
        let rq = &self.rqs[cpu];
        assert_eq!(
            self.checks.queued[cpu], rq.nr_running,
            "cpu {cpu}: nr_running out of step"
        );
        assert_eq!(
            self.resched_mask[cpu / 64] >> (cpu % 64) & 1 == 1,
            rq.need_resched,
            "cpu {cpu}: resched mask out of step"
        );
        if let Some(c) = rq.curr {
            assert_eq!(self.tasks[c].cpu, cpu, "current task on the wrong CPU");
            assert_eq!(
                self.tasks[c].state,
                TaskState::Running,
                "task {} current",
                self.tasks[c].pid
            );
        }
        // Kernel work is charged at the next switch or work arming: an idle CPU carries
        // some only for the task it is about to run.
        assert!(
            rq.kernel_work == 0 || rq.curr.is_some() || rq.need_resched || rq.nr_running > 0,
            "cpu {cpu}: kernel work pending on an idle CPU"
        );
        self.check_balance_cpu(cpu);
        self.check_cpuidle_cpu(cpu);
    }
}

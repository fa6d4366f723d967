//! The per-CPU hrtimer bases (kernel/time/hrtimer.c), reduced to the sleep timers of tasks: a
//! timed sleep arms a timer on the CPU the task sleeps on, and the timer stays there when the
//! task is woken elsewhere. What the idle governors need of them is the earliest expiry of a
//! CPU (`tick_nohz_get_sleep_length()`), so each base is a min-heap (the kernel's timerqueue
//! is an rb-tree with a cached leftmost node) with each task's position kept for cancelling.
//! Heaps and positions grow to the number of tasks and are reused: nothing is allocated per
//! timer once every task has slept once.
//!
//! A timer has a range (`hrtimer_set_expires_range_ns()`): a sleep of a task that is neither
//! RT nor deadline gets the task's `timer_slack_ns` (`hrtimer_nanosleep()`). The base is
//! ordered by the hard expiry, which the clock event device is programmed for; an hrtimer
//! interrupt expires, in that order, every timer whose soft expiry has passed and stops at
//! the first that has not (`__hrtimer_run_queues()`).

use super::sched::TaskId;
use super::touched::Touched;

/// One armed timer.
#[derive(Debug, Clone, Copy)]
struct Timer {
    /// The hard expiry.
    expires: u64,
    /// The soft expiry: the timer may run from here on.
    soft: u64,
    task: TaskId,
}

/// The bases of all CPUs.
#[derive(Debug, Default)]
pub struct HrtimerBases {
    bases: Vec<Vec<Timer>>,
    /// Per task: the CPU and heap slot of its armed timer.
    slot: Vec<Option<(usize, usize)>>,
    /// Tasks whose timer was armed, cancelled or moved since the last debug check.
    touched: Touched,
}

impl HrtimerBases {
    pub fn new(nr_cpus: usize) -> HrtimerBases {
        HrtimerBases {
            bases: vec![Vec::new(); nr_cpus],
            slot: Vec::new(),
            touched: Touched::default(),
        }
    }

    /// Arm `task`'s sleep timer on `cpu` for the range `soft..=expires` (re-arming moves
    /// it).
    pub fn start(&mut self, cpu: usize, task: TaskId, soft: u64, expires: u64) {
        debug_assert!(soft <= expires, "a timer's range ends after it starts");
        self.cancel(task);
        if task >= self.slot.len() {
            self.slot.resize(task + 1, None);
        }
        let heap = &mut self.bases[cpu];
        heap.push(Timer {
            expires,
            soft,
            task,
        });
        let at = heap.len() - 1;
        self.slot[task] = Some((cpu, at));
        self.touched.mark(task);
        self.sift_up(cpu, at);
    }

    /// Remove `task`'s timer, expired or not (nothing if none is armed). The test is
    /// inlined (every arming calls it first), the removal is not.
    #[inline]
    pub fn cancel(&mut self, task: TaskId) {
        if self.slot.get(task).is_some_and(Option::is_some) {
            self.cancel_armed(task);
        }
    }

    #[inline(never)]
    fn cancel_armed(&mut self, task: TaskId) {
        let Some((cpu, at)) = self.slot[task].take() else {
            unreachable!("task {task} has a timer armed");
        };
        let heap = &mut self.bases[cpu];
        let last = heap.pop().expect("an armed timer is in its base");
        if at < heap.len() {
            // The last timer fills the hole, then moves down or up to its place.
            heap[at] = last;
            self.slot[last.task] = Some((cpu, at));
            self.touched.mark(last.task);
            if self.sift_down(cpu, at) == at {
                self.sift_up(cpu, at);
            }
        }
    }

    /// The earliest hard expiry armed on `cpu`.
    pub fn next_expiry(&self, cpu: usize) -> Option<u64> {
        self.bases[cpu].first().map(|t| t.expires)
    }

    /// The task of the first timer of `cpu` in hard-expiry order if its soft expiry is at or
    /// before `now` and its hard expiry after: the next one an hrtimer interrupt at `now`
    /// expires early. A timer due at `now` itself is left to its own expiry event (timers
    /// due at the same instant each take an interrupt in the model), and so stops the walk
    /// as one not yet due would. The caller cancels the timer and wakes the task.
    pub fn soft_expired(&self, cpu: usize, now: u64) -> Option<TaskId> {
        self.bases[cpu]
            .first()
            .filter(|t| t.soft <= now && now < t.expires)
            .map(|t| t.task)
    }

    /// Whether `task` has a timer armed on `cpu` expiring at `expires` (invariant checks).
    pub fn is_armed(&self, task: TaskId, cpu: usize, expires: u64) -> bool {
        match self.slot.get(task).copied().flatten() {
            Some((c, at)) => c == cpu && self.bases[c][at].expires == expires,
            None => false,
        }
    }

    /// Put `t` at `at` of `cpu`'s heap, its slot pointing there.
    fn place(&mut self, cpu: usize, at: usize, t: Timer) {
        self.bases[cpu][at] = t;
        self.slot[t.task] = Some((cpu, at));
        self.touched.mark(t.task);
    }

    /// Move the timer at `at` (its slot pointing there) up to its place. The sifts move
    /// the timers they pass over into the hole and place the sifted one once, at the end
    /// (if it moved): one write (and slot) per level instead of a swap's two. Any heap has
    /// the same first timer (the order is total), which is all that is read of it.
    fn sift_up(&mut self, cpu: usize, mut at: usize) {
        let (from, t) = (at, self.bases[cpu][at]);
        while at > 0 {
            let parent = (at - 1) / 2;
            let p = self.bases[cpu][parent];
            if !before(&t, &p) {
                break;
            }
            self.place(cpu, at, p);
            at = parent;
        }
        if at != from {
            self.place(cpu, at, t);
        }
    }

    /// Move the timer at `at` (its slot pointing there) down to its place; returns that
    /// place.
    fn sift_down(&mut self, cpu: usize, mut at: usize) -> usize {
        let n = self.bases[cpu].len();
        let (from, t) = (at, self.bases[cpu][at]);
        loop {
            let h = &self.bases[cpu];
            let l = 2 * at + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && before(&h[l + 1], &h[l]) {
                l + 1
            } else {
                l
            };
            let child = h[c];
            if !before(&child, &t) {
                break;
            }
            self.place(cpu, at, child);
            at = c;
        }
        if at != from {
            self.place(cpu, at, t);
        }
        at
    }
}

/// Order by expiry, then task id (deterministic among equal expiries; a task has one timer,
/// so the order is total).
fn before(a: &Timer, b: &Timer) -> bool {
    (a.expires, a.task) < (b.expires, b.task)
}

#[cfg(debug_assertions)]
impl HrtimerBases {
    /// Invariants, all timers: each base is a heap by (expiry, task), every timer's slot
    /// points back at it, and every armed timer's task is asleep (`asleep(task)`).
    pub fn check(&self, asleep: impl Fn(TaskId) -> bool) {
        for (cpu, heap) in self.bases.iter().enumerate() {
            for at in 0..heap.len() {
                self.check_timer(cpu, at, &asleep);
            }
        }
    }

    /// Whether `task` has a timer armed.
    pub fn has_timer(&self, task: TaskId) -> bool {
        self.slot.get(task).copied().flatten().is_some()
    }

    /// The same of the timers armed, cancelled or moved since the last call, each against
    /// its parent and children in the heap.
    pub fn check_touched(&mut self, asleep: impl Fn(TaskId) -> bool) {
        while let Some(task) = self.touched.pop() {
            if let Some((cpu, at)) = self.slot.get(task).copied().flatten() {
                self.check_timer(cpu, at, &asleep);
                for child in [2 * at + 1, 2 * at + 2] {
                    if child < self.bases[cpu].len() {
                        self.check_timer(cpu, child, &asleep);
                    }
                }
            }
        }
    }

    /// The timer at `at` of `cpu`'s heap: its task's slot points at it, it sorts no earlier
    /// than its parent, and its task is asleep.
    fn check_timer(&self, cpu: usize, at: usize, asleep: impl Fn(TaskId) -> bool) {
        let task = self.bases[cpu][at].task;
        assert_eq!(
            self.slot.get(task).copied().flatten(),
            Some((cpu, at)),
            "cpu {cpu}: timer of task {task} out of its slot"
        );
        assert!(
            at == 0 || !before(&self.bases[cpu][at], &self.bases[cpu][(at - 1) / 2]),
            "cpu {cpu}: timer heap out of order"
        );
        assert!(asleep(task), "task {task} runs with a sleep timer");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_timer_of_each_cpu_survives_cancels() {
        let mut b = HrtimerBases::new(2);
        for (task, exp) in [(0, 50), (1, 10), (2, 30), (3, 20), (4, 40)] {
            b.start(0, task, exp, exp);
        }
        b.start(1, 5, 7, 7);
        assert_eq!(b.next_expiry(0), Some(10));
        assert_eq!(b.next_expiry(1), Some(7));
        b.cancel(1);
        assert_eq!(b.next_expiry(0), Some(20));
        b.cancel(2);
        b.cancel(2);
        b.start(0, 0, 15, 15);
        assert_eq!(b.next_expiry(0), Some(15));
        assert!(b.is_armed(4, 0, 40));
        b.cancel(0);
        b.cancel(3);
        assert_eq!(b.next_expiry(0), Some(40));
        b.cancel(4);
        b.cancel(5);
        assert_eq!(
            (
                b.next_expiry(0),
                b.next_expiry(1),
                b.bases.iter().all(Vec::is_empty)
            ),
            (None, None, true)
        );
    }

    /// `__hrtimer_run_queues()` walks the base in hard-expiry order and stops at the first
    /// timer whose soft expiry is still ahead, even when a later one's has passed.
    #[test]
    fn an_interrupt_expires_timers_in_hard_order_while_their_soft_expiry_has_passed() {
        let mut b = HrtimerBases::new(1);
        b.start(0, 0, 100, 150);
        b.start(0, 1, 60, 160);
        b.start(0, 2, 130, 140);
        assert_eq!(b.next_expiry(0), Some(140));
        assert_eq!(
            b.soft_expired(0, 120),
            None,
            "task 2 (hard 140) is not due at 120"
        );
        assert_eq!(
            b.soft_expired(0, 140),
            None,
            "task 2 is due at 140: its own event"
        );
        assert_eq!(b.soft_expired(0, 130), Some(2));
        b.cancel(2);
        assert_eq!(b.soft_expired(0, 130), Some(0));
        b.cancel(0);
        assert_eq!(b.soft_expired(0, 130), Some(1));
        b.cancel(1);
        assert_eq!(b.soft_expired(0, 130), None);
    }
}

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

/// Where a task's timer is armed: its CPU and its index in that CPU's heap (`at` is
/// `UNARMED` when none is). A sift rewrites `at` alone.
#[derive(Debug, Clone, Copy)]
struct Slot {
    cpu: u32,
    at: u32,
}

const UNARMED: u32 = u32::MAX;

/// Children per heap node: a base of a thousand tasks' timers is half as deep as a binary
/// heap, and a cancel (mostly of the first timer) moves the hole down half as many levels.
const ARITY: usize = 4;

/// The bases of all CPUs.
#[derive(Debug, Default)]
pub struct HrtimerBases {
    bases: Vec<Vec<Timer>>,
    /// Per task: where its timer is armed.
    slot: Vec<Slot>,
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
            self.slot.resize(
                task + 1,
                Slot {
                    cpu: 0,
                    at: UNARMED,
                },
            );
        }
        let heap = &mut self.bases[cpu];
        heap.push(Timer {
            expires,
            soft,
            task,
        });
        let at = heap.len() - 1;
        self.slot[task] = Slot {
            cpu: cpu as u32,
            at: at as u32,
        };
        self.touched.mark(task);
        self.base(cpu).sift_up(at);
    }

    /// Remove `task`'s timer, expired or not (nothing if none is armed). The test is
    /// inlined (every arming calls it first), the removal is not.
    #[inline]
    pub fn cancel(&mut self, task: TaskId) {
        if self.slot.get(task).is_some_and(|s| s.at != UNARMED) {
            self.cancel_armed(task);
        }
    }

    #[inline(never)]
    fn cancel_armed(&mut self, task: TaskId) {
        let Slot { cpu, at } = self.slot[task];
        assert!(at != UNARMED, "task {task} has a timer armed");
        self.slot[task].at = UNARMED;
        let (cpu, at) = (cpu as usize, at as usize);
        let heap = &mut self.bases[cpu];
        let last = heap.pop().expect("an armed timer is in its base");
        if at < heap.len() {
            // The hole moves down along the earlier children to a leaf, and the last timer
            // sifts up from there (past `at` if it sorts before its parent): it sorts late
            // (the removed timer is mostly the first, just expired), so it rarely climbs,
            // and no level compares it on the way down.
            let mut base = self.base(cpu);
            let leaf = base.hole_to_leaf(at);
            base.place(leaf, last);
            base.sift_up(leaf);
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
        match self.slot.get(task) {
            Some(s) if s.at != UNARMED => {
                s.cpu as usize == cpu && self.bases[cpu][s.at as usize].expires == expires
            }
            _ => false,
        }
    }

    /// `cpu`'s heap with the slots, apart from the other bases.
    fn base(&mut self, cpu: usize) -> Base<'_> {
        Base {
            heap: &mut self.bases[cpu],
            slot: &mut self.slot,
            touched: &mut self.touched,
        }
    }
}

/// One CPU's heap and the tasks' slots, borrowed apart so that a sift keeps the heap in
/// registers across the slot writes.
struct Base<'a> {
    heap: &'a mut [Timer],
    slot: &'a mut [Slot],
    touched: &'a mut Touched,
}

impl Base<'_> {
    /// Put `t` at `at`, its slot pointing there.
    #[inline]
    fn place(&mut self, at: usize, t: Timer) {
        self.heap[at] = t;
        self.slot[t.task].at = at as u32;
        self.touched.mark(t.task);
    }

    /// Move the timer at `at` (its slot pointing there) up to its place. The sifts move
    /// the timers they pass over into the hole and place the sifted one once, at the end
    /// (if it moved): one write (and slot) per level instead of a swap's two. Any heap has
    /// the same first timer (the order is total), which is all that is read of it.
    ///
    /// The first test is inlined: a new timer (a sleep's end, mostly the latest) and the
    /// last one moved into a cancel's hole rarely climb.
    #[inline]
    fn sift_up(&mut self, at: usize) {
        if at > 0 && before(&self.heap[at], &self.heap[(at - 1) / ARITY]) {
            self.climb(at);
        }
    }

    #[inline(never)]
    fn climb(&mut self, mut at: usize) {
        let (from, t) = (at, self.heap[at]);
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let p = self.heap[parent];
            if !before(&t, &p) {
                break;
            }
            self.place(at, p);
            at = parent;
        }
        if at != from {
            self.place(at, t);
        }
    }

    /// Move the hole at `at` down to a leaf, the earliest child filling it at each level;
    /// returns the leaf.
    fn hole_to_leaf(&mut self, mut at: usize) -> usize {
        let n = self.heap.len();
        loop {
            let first = ARITY * at + 1;
            let c = if first + ARITY <= n {
                // All four children: the earlier of the earliest of each pair.
                let h = &self.heap[first..first + ARITY];
                let pair = |c: usize| if before(&h[c + 1], &h[c]) { c + 1 } else { c };
                let (a, b) = (pair(0), pair(2));
                first + if before(&h[b], &h[a]) { b } else { a }
            } else if first < n {
                (first + 1..n).fold(first, |c, d| {
                    if before(&self.heap[d], &self.heap[c]) {
                        d
                    } else {
                        c
                    }
                })
            } else {
                return at;
            };
            self.place(at, self.heap[c]);
            at = c;
        }
    }
}

/// Order by expiry, then task id (deterministic among equal expiries; a task has one timer,
/// so the order is total).
fn before(a: &Timer, b: &Timer) -> bool {
    a.key() < b.key()
}

impl Timer {
    /// (expiry, task) as one number: one wide compare.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.expires) << 64) | self.task as u128
    }
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
        self.armed(task).is_some()
    }

    /// The CPU and heap index of `task`'s armed timer.
    fn armed(&self, task: TaskId) -> Option<(usize, usize)> {
        self.slot
            .get(task)
            .filter(|s| s.at != UNARMED)
            .map(|s| (s.cpu as usize, s.at as usize))
    }

    /// The same of the timers armed, cancelled or moved since the last call, each against
    /// its parent and children in the heap.
    pub fn check_touched(&mut self, asleep: impl Fn(TaskId) -> bool) {
        while let Some(task) = self.touched.pop() {
            if let Some((cpu, at)) = self.armed(task) {
                self.check_timer(cpu, at, &asleep);
                for child in ARITY * at + 1..=ARITY * at + ARITY {
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
            self.armed(task),
            Some((cpu, at)),
            "cpu {cpu}: timer of task {task} out of its slot"
        );
        assert!(
            at == 0 || !before(&self.bases[cpu][at], &self.bases[cpu][(at - 1) / ARITY]),
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

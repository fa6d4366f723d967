//! The real-time class as in v6.1 `kernel/sched/rt.c`: 100 priority levels with a FIFO list
//! each and a bitmap of non-empty levels, SCHED_RR timeslices, and RT throttling
//! (`sched_rt_runtime_us` of every `sched_rt_period_us`, per CPU since RT_RUNTIME_SHARE is
//! off by default).
//!
//! As in the kernel, the running RT task stays in its list: a preempted FIFO task therefore
//! resumes at the head of its level, and an RR task whose slice ran out is moved to the tail.

use super::core::{Event, Kernel};
use super::sched::Class;
use super::uclamp::rt_task_fits_capacity;
use schedlab_base::sim::{EventQueue, Time};
use std::collections::VecDeque;

/// `MAX_RT_PRIO`: kernel priorities 0..99 belong to RT.
pub const MAX_RT_PRIO: usize = 100;

pub type TaskId = usize;

/// Per-CPU `struct rt_rq`.
#[derive(Debug, Clone)]
pub struct RtRq {
    queues: Vec<VecDeque<TaskId>>,
    bitmap: u128,
    pub nr_running: u32,
    /// RT time consumed in the current period, ns.
    pub rt_time: u64,
    pub throttled: bool,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq {
            queues: vec![VecDeque::new(); MAX_RT_PRIO],
            bitmap: 0,
            nr_running: 0,
            rt_time: 0,
            throttled: false,
        }
    }
}

impl RtRq {
    /// `enqueue_rt_entity()`: at the tail of its level, or the head (ENQUEUE_HEAD).
    pub fn enqueue(&mut self, task: TaskId, prio: usize, head: bool) {
        let q = &mut self.queues[prio];
        if head {
            q.push_front(task);
        } else {
            q.push_back(task);
        }
        self.bitmap |= 1u128 << prio;
        self.nr_running += 1;
    }

    /// `dequeue_rt_entity()`.
    pub fn dequeue(&mut self, task: TaskId, prio: usize) {
        let q = &mut self.queues[prio];
        let i = q.iter().position(|&t| t == task);
        debug_assert!(
            i.is_some(),
            "RT task {task} not on its priority list {prio}"
        );
        if let Some(i) = i {
            q.remove(i);
            self.nr_running -= 1;
        }
        if q.is_empty() {
            self.bitmap &= !(1u128 << prio);
        }
    }

    /// `requeue_task_rt()`: move to the tail of its level (RR slice expiry, yield).
    pub fn requeue_tail(&mut self, task: TaskId, prio: usize) {
        self.dequeue(task, prio);
        self.enqueue(task, prio, false);
    }

    /// Whether `task` shares its level with others (RR only rotates then).
    pub fn has_peers(&self, prio: usize) -> bool {
        self.queues[prio].len() > 1
    }

    /// `pick_next_rt_entity()`: the first task of the highest non-empty level, unless the
    /// runqueue is throttled.
    pub fn pick(&self) -> Option<TaskId> {
        if self.throttled || self.bitmap == 0 {
            return None;
        }
        let prio = self.bitmap.trailing_zeros() as usize;
        self.queues[prio].front().copied()
    }

    /// The highest priority (lowest number) queued, if any.
    pub fn highest_prio(&self) -> Option<usize> {
        (self.bitmap != 0).then(|| self.bitmap.trailing_zeros() as usize)
    }

    /// Queued tasks other than `except`, highest priority first (for pulling).
    /// The levels come from the bitmap (`sched_find_first_bit` and on), not a walk of all 100.
    pub fn waiting(&self, except: Option<TaskId>) -> impl Iterator<Item = TaskId> + '_ {
        let mut levels = self.bitmap;
        std::iter::from_fn(move || {
            (levels != 0).then(|| {
                let prio = levels.trailing_zeros() as usize;
                levels &= levels - 1;
                prio
            })
        })
        .flat_map(|prio| self.queues[prio].iter().copied())
        .filter(move |&t| Some(t) != except)
    }
}

/// RT bandwidth of one runqueue: `sched_rt_runtime_exceeded()` and the period timer's
/// replenishment (`do_sched_rt_period_timer`).
#[derive(Debug, Clone, Copy)]
pub struct RtBandwidth {
    /// ns of RT time allowed per period; None = RUNTIME_INF (`sched_rt_runtime_us = -1`).
    pub runtime: Option<u64>,
    pub period: u64,
}

impl RtBandwidth {
    /// Charge `delta` ns of RT execution; returns true if the runqueue just got throttled.
    pub fn charge(&self, rt: &mut RtRq, delta: u64) -> bool {
        let Some(runtime) = self.runtime else {
            return false;
        };
        rt.rt_time += delta;
        if rt.throttled || runtime >= self.period {
            return false;
        }
        if rt.rt_time > runtime {
            rt.throttled = true;
            return true;
        }
        false
    }

    /// One period elapsed: forgive a period's worth of runtime; returns true if the runqueue
    /// was throttled and is not any more.
    pub fn replenish(&self, rt: &mut RtRq) -> bool {
        let Some(runtime) = self.runtime else {
            return false;
        };
        rt.rt_time = rt.rt_time.saturating_sub(runtime);
        if rt.throttled && rt.rt_time < runtime {
            rt.throttled = false;
            return true;
        }
        false
    }
}

impl Kernel {
    /// `push_rt_tasks()`: while a queued RT task of `cpu` cannot run because the current task
    /// has higher priority, move it to the CPU `find_lowest_rq()` finds for it.
    pub(super) fn push_rt_tasks(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        for _ in 0..self.platform.nr_cpus() {
            let rq = &self.rqs[cpu];
            let Some(curr) = rq.curr else { return };
            // pick_next_pushable_task(): the highest queued task that may run elsewhere.
            let pushable = rq
                .rt
                .waiting(Some(curr))
                .find(|&t| self.tasks[t].cpus_allowed.weight() > 1);
            let Some(t) = pushable else { return };
            if self.tasks[t].prio() < self.tasks[curr].prio() {
                // It will preempt the current task here instead.
                self.resched_curr(cpu);
                return;
            }
            let clamp = self.uclamp_eff(t);
            match self.find_lowest_rq(t, cpu, clamp) {
                Some(target) if target != cpu => self.move_queued_task(t, target, now, q),
                _ => return,
            }
        }
    }

    /// `balance_rt()` on the way out of RT task `prev`: if the CPU's highest RT priority
    /// dropped below `prev`'s (`need_pull_rt_task`), pull from the overloaded CPUs.
    pub(super) fn balance_rt(
        &mut self,
        cpu: usize,
        prev: TaskId,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let rt_prio = self.rqs[cpu].rt.highest_prio().unwrap_or(MAX_RT_PRIO);
        if self.tasks[prev].class() != Class::Rt || rt_prio <= self.tasks[prev].prio() as usize {
            return;
        }
        self.pull_rt_task(cpu, now, q);
    }

    /// `pull_rt_task()`: `cpu` lowered its RT priority (its RT task left, lowered its own
    /// priority or left the class): take the highest waiting task of each overloaded CPU
    /// that beats this CPU's new highest priority and does not beat its own CPU's current
    /// task. (v6.1 with RT_PUSH_IPI asks the overloaded CPUs to push instead; the task moves
    /// to the same CPU, an IPI later.)
    pub(super) fn pull_rt_task(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let rt_prio = |k: &Kernel| k.rqs[cpu].rt.highest_prio().unwrap_or(MAX_RT_PRIO);
        let n = self.platform.nr_cpus();
        for i in 1..n {
            let src = (cpu + i) % n;
            let rq = &self.rqs[src];
            if rq.rt.nr_running < 2 {
                continue;
            }
            let Some(curr) = rq.curr else { continue };
            let Some(t) = rq
                .rt
                .waiting(Some(curr))
                .find(|&t| self.tasks[t].cpus_allowed.contains(cpu))
            else {
                continue;
            };
            let prio = self.tasks[t].prio();
            if (prio as usize) < rt_prio(self) && prio >= self.tasks[curr].prio() {
                // RT_PUSH_IPI: the overloaded CPU pushes the task, in its irq_work.
                let puller = std::mem::replace(&mut self.this_cpu, src);
                self.move_queued_task(t, cpu, now, q);
                self.this_cpu = puller;
            }
        }
    }
}

/// RT placement (`select_task_rq_rt()`, `find_lowest_rq()` over cpupri).
impl Kernel {
    /// `rt_task_fits_capacity()`: on asymmetric systems a CPU fits an RT task when its
    /// capacity covers the task's effective uclamp min (capped by its max).
    pub(super) fn rt_fits(&self, cpu: usize, clamp: (u32, u32)) -> bool {
        !self.platform.is_asymmetric()
            || rt_task_fits_capacity(clamp.0, clamp.1, self.platform.cpus[cpu].capacity_orig)
    }

    /// The `cpupri` level of a CPU: 0 for a CPU running fair tasks or nothing, 1..=99 for
    /// the highest RT priority queued, 100 with a deadline task.
    pub(super) fn cpupri(&self, cpu: usize) -> u32 {
        let rq = &self.rqs[cpu];
        if rq.dl.nr_running() > 0 {
            100
        } else {
            rq.rt.highest_prio().map_or(0, |p| 99 - p as u32)
        }
    }

    /// `select_task_rq_rt()`: stay unless the CPU runs an RT task of higher or equal
    /// priority or does not fit the task; then `find_lowest_rq()`.
    pub(super) fn select_task_rq_rt(&mut self, t: TaskId, prev: usize) -> usize {
        let clamp = self.uclamp_eff(t);
        let prio = self.tasks[t].prio();
        let curr_blocks = self.rqs[prev].curr.is_some_and(|c| {
            let c = &self.tasks[c];
            c.class() == Class::Rt && c.prio() <= prio
        });
        let fits = self.rt_fits(prev, clamp);
        let allowed = *self.tasks[t].cpus_allowed;
        if !allowed.contains(prev) {
            // select_fallback_rq(): the task may not stay where it was.
            return self
                .find_lowest_rq(t, prev, clamp)
                .or_else(|| allowed.iter().next())
                .unwrap_or(prev);
        }
        if curr_blocks || !fits {
            if let Some(target) = self.find_lowest_rq(t, prev, clamp) {
                // Moving only for a better fit is pointless if the search found none.
                let pointless = !curr_blocks && !self.rt_fits(target, clamp);
                if !pointless && (prio as u32) < 99 - self.cpupri(target).min(99) {
                    return target;
                }
            }
        }
        prev
    }

    /// `find_lowest_rq()` over `cpupri_find_fitness()`: the CPUs of the lowest priority level
    /// below the task's that it may use and that fit it (any of that level if none fits);
    /// prefer the task's CPU, then the lowest-numbered one.
    pub(super) fn find_lowest_rq(
        &self,
        t: TaskId,
        prev: usize,
        clamp: (u32, u32),
    ) -> Option<usize> {
        let allowed = *self.tasks[t].cpus_allowed;
        let task_pri = 99 - self.tasks[t].prio().clamp(0, 99) as u32;
        // The lowest cpupri level below the task's among the CPUs it may use.
        let level = allowed
            .iter()
            .filter(|&c| c < self.platform.nr_cpus())
            .map(|c| self.cpupri(c))
            .filter(|&l| l < task_pri)
            .min()?;
        // (first, prev is one) among the fitting CPUs and among all CPUs of that level.
        let (mut fit, mut any) = ((None, false), (None, false));
        for c in allowed
            .iter()
            .filter(|&c| c < self.platform.nr_cpus() && self.cpupri(c) == level)
        {
            let set = if self.rt_fits(c, clamp) {
                &mut fit
            } else {
                &mut any
            };
            set.0.get_or_insert(c);
            set.1 |= c == prev;
        }
        let chosen = if fit.0.is_some() { fit } else { any };
        if chosen.1 {
            Some(prev)
        } else {
            chosen.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_priority_first_fifo_within_a_level() {
        let mut rq = RtRq::default();
        rq.enqueue(1, 50, false);
        rq.enqueue(2, 10, false);
        rq.enqueue(3, 10, false);
        assert_eq!(rq.pick(), Some(2));
        rq.requeue_tail(2, 10);
        assert_eq!(rq.pick(), Some(3));
        rq.dequeue(3, 10);
        rq.dequeue(2, 10);
        assert_eq!(rq.pick(), Some(1));
        assert_eq!(rq.nr_running, 1);
    }

    #[test]
    fn throttles_past_runtime_and_unthrottles_after_replenish() {
        let bw = RtBandwidth {
            runtime: Some(950_000_000),
            period: 1_000_000_000,
        };
        let mut rq = RtRq::default();
        rq.enqueue(1, 0, false);
        assert!(!bw.charge(&mut rq, 900_000_000));
        assert!(bw.charge(&mut rq, 60_000_000));
        assert_eq!(rq.pick(), None);
        assert!(bw.replenish(&mut rq));
        assert_eq!(rq.pick(), Some(1));
    }
}

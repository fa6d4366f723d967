//! The deadline class, reduced to what rt-app workloads need today (v6.1
//! `kernel/sched/deadline.c`): EDF among runnable SCHED_DEADLINE tasks of a CPU, and the
//! constant-bandwidth server that gives each `dl_runtime` every `dl_period` — the runtime is
//! refreshed with a new deadline at wakeup when the old one cannot be kept
//! (`update_dl_entity`), and a task that exhausts it is throttled until its next period
//! (`start_dl_timer` / `replenish_dl_entity`). Global EDF push/pull and admission control
//! across a root domain are not modelled.

pub type TaskId = usize;

/// `struct sched_dl_entity`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    /// Remaining runtime in this period (may go negative by the overrun).
    pub runtime: i64,
    /// Absolute deadline.
    pub deadline: u64,
    pub throttled: bool,
}

impl DlEntity {
    pub fn new(runtime: u64, deadline: u64, period: u64) -> DlEntity {
        DlEntity {
            dl_runtime: runtime,
            dl_deadline: deadline,
            dl_period: period,
            ..DlEntity::default()
        }
    }

    /// `to_ratio(period, runtime)` on the 0..=1024 capacity scale: the bandwidth the task
    /// reserves (`cpu_bw_dl`, schedutil's DL term).
    pub fn bandwidth(&self) -> u64 {
        (self.dl_runtime * 1024)
            .checked_div(self.dl_period)
            .unwrap_or(0)
    }

    /// `update_dl_entity()`: at wakeup, start a new period if the current deadline has
    /// passed or the remaining runtime would exceed the reserved bandwidth before it.
    pub fn update_at_wakeup(&mut self, now: u64) {
        let overflow = self.deadline > now
            && (self.runtime.max(0) as u128) * (self.dl_period as u128)
                > ((self.deadline - now) as u128) * (self.dl_runtime as u128);
        if self.deadline <= now || overflow {
            self.deadline = now + self.dl_deadline;
            self.runtime = self.dl_runtime as i64;
        }
    }

    /// `update_curr_dl()`: consume runtime. Returns the time of the replenishment timer if
    /// the runtime is exhausted (the task must then be throttled).
    pub fn charge(&mut self, delta: u64) -> Option<u64> {
        self.runtime -= delta as i64;
        if self.runtime > 0 {
            return None;
        }
        self.throttled = true;
        // dl_next_period(): the start of the next period.
        Some(self.deadline - self.dl_deadline + self.dl_period)
    }

    /// `replenish_dl_entity()` at the timer: postpone the deadline by periods until the
    /// runtime is positive again.
    pub fn replenish(&mut self, now: u64) {
        while self.runtime <= 0 {
            self.deadline += self.dl_period;
            self.runtime += self.dl_runtime as i64;
        }
        if self.deadline <= now {
            self.deadline = now + self.dl_deadline;
            self.runtime = self.dl_runtime as i64;
        }
        self.throttled = false;
    }
}

/// Per-CPU `struct dl_rq`: runnable deadline tasks ordered by absolute deadline.
#[derive(Debug, Clone, Default)]
pub struct DlRq {
    queue: Vec<(u64, TaskId)>,
}

impl DlRq {
    pub fn enqueue(&mut self, task: TaskId, deadline: u64) {
        let i = self.queue.partition_point(|e| *e <= (deadline, task));
        self.queue.insert(i, (deadline, task));
    }

    pub fn dequeue(&mut self, task: TaskId) {
        let i = self.queue.iter().position(|e| e.1 == task);
        debug_assert!(i.is_some(), "DL task {task} not queued");
        if let Some(i) = i {
            self.queue.remove(i);
        }
    }

    /// The earliest deadline task.
    pub fn pick(&self) -> Option<TaskId> {
        self.queue.first().map(|e| e.1)
    }

    pub fn nr_running(&self) -> usize {
        self.queue.len()
    }

    pub fn waiting(&self, except: Option<TaskId>) -> impl Iterator<Item = TaskId> + '_ {
        self.queue
            .iter()
            .map(|e| e.1)
            .filter(move |&t| Some(t) != except)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbs_throttles_at_exhaustion_and_replenishes_next_period() {
        let mut dl = DlEntity::new(2_000_000, 10_000_000, 10_000_000);
        dl.update_at_wakeup(0);
        assert_eq!(dl.deadline, 10_000_000);
        assert_eq!(dl.charge(1_000_000), None);
        assert_eq!(dl.charge(1_000_000), Some(10_000_000));
        assert!(dl.throttled);
        dl.replenish(10_000_000);
        assert_eq!(dl.deadline, 20_000_000);
        assert_eq!(dl.runtime, 2_000_000);
    }

    #[test]
    fn earliest_deadline_first() {
        let mut rq = DlRq::default();
        rq.enqueue(1, 30);
        rq.enqueue(2, 10);
        rq.enqueue(3, 20);
        assert_eq!(rq.pick(), Some(2));
        rq.dequeue(2);
        assert_eq!(rq.pick(), Some(3));
    }
}

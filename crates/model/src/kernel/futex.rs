//! The pthread objects rt-app threads synchronise with, as the futex-based glibc
//! implementations behave from the scheduler's point of view: a mutex with a FIFO wait queue
//! (the lock is handed to the first waiter on unlock, which keeps runs deterministic), a
//! condition variable whose woken waiters must take the mutex again (requeued onto it, as
//! FUTEX_CMP_REQUEUE does), and a barrier of a fixed number of participants.

use std::collections::VecDeque;

pub type TaskId = usize;

#[derive(Debug, Clone, Default)]
pub struct Mutex {
    pub owner: Option<TaskId>,
    pub waiters: VecDeque<TaskId>,
}

#[derive(Debug, Clone, Default)]
pub struct Cond {
    /// Waiters with the mutex they must take again when woken.
    pub waiters: VecDeque<(TaskId, usize)>,
}

#[derive(Debug, Clone, Default)]
pub struct Barrier {
    pub participants: u32,
    pub waiters: Vec<TaskId>,
}

/// Everything a workload's threads share.
#[derive(Debug, Clone, Default)]
pub struct Futexes {
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
}

/// What a futex operation means for the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The caller goes on.
    Proceed,
    /// The caller sleeps until woken.
    Block,
}

impl Futexes {
    /// `pthread_mutex_lock`.
    pub fn lock(&mut self, m: usize, task: TaskId) -> Outcome {
        let mx = &mut self.mutexes[m];
        match mx.owner {
            None => {
                mx.owner = Some(task);
                Outcome::Proceed
            }
            Some(_) => {
                mx.waiters.push_back(task);
                Outcome::Block
            }
        }
    }

    /// `pthread_mutex_unlock`: returns the waiter that now owns the mutex and must be woken.
    pub fn unlock(&mut self, m: usize, task: TaskId) -> Option<TaskId> {
        let mx = &mut self.mutexes[m];
        if mx.owner != Some(task) {
            // Unlocking a mutex one does not hold: glibc's default mutex does not check;
            // nothing changes hands.
            return None;
        }
        mx.owner = mx.waiters.pop_front();
        mx.owner
    }

    /// `pthread_cond_wait`: release the mutex (returning a waiter to wake) and wait.
    pub fn cond_wait(&mut self, c: usize, m: usize, task: TaskId) -> Option<TaskId> {
        self.conds[c].waiters.push_back((task, m));
        self.unlock(m, task)
    }

    /// Wake one (or all) waiters of a condition; each must take its mutex again. Pushes onto
    /// `wake` the tasks that got their mutex and can run; the others now wait on the mutex.
    pub fn cond_wake(&mut self, c: usize, all: bool, wake: &mut Vec<TaskId>) {
        while let Some((t, m)) = self.conds[c].waiters.pop_front() {
            if self.lock(m, t) == Outcome::Proceed {
                wake.push(t);
            }
            if !all {
                break;
            }
        }
    }

    /// Arrive at a barrier: the last participant releases the others (pushed onto `wake`).
    pub fn barrier(&mut self, b: usize, task: TaskId, wake: &mut Vec<TaskId>) -> Outcome {
        let br = &mut self.barriers[b];
        if br.waiters.len() as u32 + 1 >= br.participants {
            wake.append(&mut br.waiters);
            Outcome::Proceed
        } else {
            br.waiters.push(task);
            Outcome::Block
        }
    }

    /// Forget a task that exits while queued somewhere (it can only be queued if it was
    /// killed at the end of the run, so this is bookkeeping for the invariant checks).
    pub fn forget(&mut self, task: TaskId) {
        for mx in &mut self.mutexes {
            mx.waiters.retain(|&t| t != task);
            if mx.owner == Some(task) {
                mx.owner = mx.waiters.pop_front();
            }
        }
        for c in &mut self.conds {
            c.waiters.retain(|&(t, _)| t != task);
        }
        for b in &mut self.barriers {
            b.waiters.retain(|&t| t != task);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fx() -> Futexes {
        Futexes {
            mutexes: vec![Mutex::default()],
            conds: vec![Cond::default()],
            barriers: vec![Barrier {
                participants: 2,
                waiters: vec![],
            }],
        }
    }

    #[test]
    fn mutex_is_handed_to_waiters_in_order() {
        let mut f = fx();
        assert_eq!(f.lock(0, 1), Outcome::Proceed);
        assert_eq!(f.lock(0, 2), Outcome::Block);
        assert_eq!(f.lock(0, 3), Outcome::Block);
        assert_eq!(f.unlock(0, 1), Some(2));
        assert_eq!(f.unlock(0, 2), Some(3));
        assert_eq!(f.unlock(0, 3), None);
        assert_eq!(f.mutexes[0].owner, None);
    }

    #[test]
    fn signalled_waiter_needs_the_mutex_back() {
        let mut f = fx();
        f.lock(0, 1);
        assert_eq!(f.cond_wait(0, 0, 1), None);
        f.lock(0, 2);
        let mut wake = vec![];
        f.cond_wake(0, false, &mut wake);
        // Task 2 holds the mutex: task 1 now waits for it instead of running.
        assert!(wake.is_empty());
        assert_eq!(f.unlock(0, 2), Some(1));
    }

    #[test]
    fn barrier_releases_when_all_arrived() {
        let mut f = fx();
        let mut wake = vec![];
        assert_eq!(f.barrier(0, 1, &mut wake), Outcome::Block);
        assert_eq!(f.barrier(0, 2, &mut wake), Outcome::Proceed);
        assert_eq!(wake, vec![1]);
    }
}

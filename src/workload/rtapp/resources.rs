//! Resource tables (mutexes, conditions, timers…) and the checks made once the whole file is read.

use super::*;

/// Names in first-appearance order with a lookup by (name space, name): a semaphore's
/// internal mutex must not be a user mutex of the same name, nor a task's unique timer
/// another task's.
#[derive(Default)]
pub(super) struct Table {
    pub(super) names: Vec<String>,
    pub(super) index: HashMap<(usize, String), usize>,
}

/// The name space of resources that the file names directly.
pub(super) const USER: usize = 0;
/// The name space of the mutexes and conditions that implement semaphores.
pub(super) const SEMAPHORE: usize = 1;

impl Table {
    /// The index of `name` in `space`, adding it (shown as `shown`) when new.
    pub(super) fn intern(&mut self, space: usize, name: &str, shown: &str) -> usize {
        if let Some(&i) = self.index.get(&(space, name.to_string())) {
            return i;
        }
        self.names.push(shown.to_string());
        self.index
            .insert((space, name.to_string()), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The index of a name the file gives directly.
    pub(super) fn named(&mut self, name: &str) -> usize {
        self.intern(USER, name, name)
    }
}

/// A reference checked once the whole file is read: it must name something that another
/// event makes meaningful (a resume must reach a waiter, an unlock a locked mutex…).
pub(super) enum Deferred {
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

impl Parser<'_> {
    pub(super) fn finish(self, tasks: Vec<TaskSpec>) -> Result<Workload, InputError> {
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
}

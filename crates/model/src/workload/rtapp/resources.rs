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
    /// The checks that need the whole file, then the workload (`None` when anything was
    /// wrong: the errors are recorded).
    pub(super) fn finish(&mut self, tasks: Vec<TaskSpec>) -> Option<Workload> {
        let deferred = std::mem::take(&mut self.deferred);
        // A resume of nobody suggests a name threads suspend on; the names are gathered once
        // and the comparisons bounded for the whole file, so that a file of many such resumes
        // is read in linear time (the suggestions stop once the budget is spent).
        let mut suspending: Option<Vec<String>> = None;
        let mut budget = SUGGESTION_BUDGET;
        for d in &deferred {
            match d {
                // rt-app's resume and signal name a wait resource (get_resource_index(ref,
                // rtapp_wait, …)): with no thread waiting on it they wake nobody.
                Deferred::Resume { cond, name, place } => {
                    if !self.cond_waited.contains(cond) {
                        let names = suspending.get_or_insert_with(|| self.suspending_names());
                        let suggestion = if names.len() <= budget {
                            budget -= names.len();
                            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                            did_you_mean(name, &refs).map(str::to_string)
                        } else {
                            None
                        };
                        self.warn(
                            place,
                            format!("resume of {}", quote(name)),
                            "does nothing: no thread suspends or waits on that name \
                             (a thread suspends on its own task's name), as in rt-app",
                            "the name of a task whose threads suspend",
                            suggestion.as_deref(),
                        );
                    }
                }
                Deferred::Signal { cond, name, place } => {
                    if !self.cond_waited.contains(cond) {
                        self.warn(
                            place,
                            format!("signal of {}", quote(name)),
                            "does nothing: no wait, sync or suspend event waits on it, as in \
                             rt-app",
                            "a condition that a wait, sync or suspend event waits on",
                            None,
                        );
                    }
                }
                Deferred::Unlock { mutex, name, place } => {
                    if !self.mutex_locked.contains(mutex) {
                        let e = self.err(
                            place,
                            "a mutex that a lock, wait or sync event takes",
                            quote(name),
                        );
                        self.errors.push(e);
                    }
                }
                Deferred::SemWait { sem, name, place } => {
                    if !self.sem_posted.contains(sem) {
                        let e = self.err(
                            place,
                            "a semaphore that a sem_post event posts",
                            quote(name),
                        );
                        self.errors.push(e);
                    }
                }
                Deferred::Channel { chan, send, place } => {
                    let (other, what) = if *send {
                        (&self.chan_received, "a recv")
                    } else {
                        (&self.chan_sent, "a send")
                    };
                    if !other.contains(chan) {
                        let e = self.err(
                            place,
                            format!("a channel that {what} event also uses"),
                            quote(&self.channel_specs[*chan].name),
                        );
                        self.errors.push(e);
                    }
                }
            }
        }
        for (b, task, place) in &self.barrier_uses {
            if self.forked.contains(task) {
                let barrier = quote(&self.barriers.names[*b]);
                let task = quote(&self.task_names[*task]);
                let e = self.err(
                    place,
                    "barriers only in tasks that no fork event creates \
                     (rt-app counts a barrier's threads at start)",
                    format!("barrier {barrier} in forked task {task}"),
                );
                self.errors.push(e);
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        let barriers = std::mem::take(&mut self.barriers.names)
            .into_iter()
            .zip(std::mem::take(&mut self.barrier_participants))
            .map(|(name, participants)| BarrierSpec { name, participants })
            .collect();
        Some(Workload {
            file: self.file.to_string(),
            global: self.global.clone(),
            tasks,
            mutexes: std::mem::take(&mut self.mutexes.names),
            conds: std::mem::take(&mut self.conds.names),
            barriers,
            timers: std::mem::take(&mut self.timer_specs),
            semaphores: std::mem::take(&mut self.sem_specs),
            taskgroups: std::mem::take(&mut self.taskgroups.names),
            channels: std::mem::take(&mut self.channel_specs),
            parts: Vec::new(),
            warnings: self.warnings.clone(),
        })
    }

    /// The names threads suspend on (their tasks' names), for a resume's suggestion.
    fn suspending_names(&self) -> Vec<String> {
        self.task_names
            .iter()
            .filter(|n| {
                self.conds
                    .index
                    .get(&(USER, n.to_string()))
                    .is_some_and(|c| self.cond_waited.contains(c))
            })
            .cloned()
            .collect()
    }
}

/// How many names the "did you mean" of all of a file's resumes may compare with, in all:
/// about a tenth of a second of edit distances.
const SUGGESTION_BUDGET: usize = 1_000_000;

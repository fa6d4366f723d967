//! The system-call boundary and the administrative writes (kernel/sched/syscalls.c since
//! v6.11, core.c before): executing what a simulated thread asks for — blocking, waking,
//! forking, `sched_setattr()`, `sched_setaffinity()`, `sched_yield()`, cgroup moves — and the
//! timed writes of uclamp sysctls and cgroup files with their effects.

use super::cgroup::ROOT;
use super::core::{dl_entity, split_priority, task_ref, AdminRecord, Event, Kernel};
use super::fair::{LoadWeight, QueueFlags};
use super::futex::Outcome;
use super::pipe::SendOutcome;
use super::sched::Errno;
use super::sched::{Activity, Class, Task, TaskId, TaskState};
use super::setattr::{
    setattr_syscall_checks, validate_setattr, SchedAttr, SetattrConfig, SetattrTask,
    SCHED_ATTR_SIZE_VER1, SCHED_ATTR_SIZE_VER2, SCHED_BATCH, SCHED_DEADLINE, SCHED_FIFO,
    SCHED_FLAG_KEEP_ALL, SCHED_FLAG_KEEP_PARAMS, SCHED_FLAG_LATENCY_NICE, SCHED_FLAG_RESET_ON_FORK,
    SCHED_FLAG_UTIL_CLAMP, SCHED_FLAG_UTIL_CLAMP_MAX, SCHED_FLAG_UTIL_CLAMP_MIN, SCHED_IDLE,
    SCHED_NORMAL, SCHED_RR,
};
use super::uclamp::{apply_setattr_uclamp, sync_rt_default};
use super::variant::AdminTarget;
use super::variant::LatencyNice;
use crate::kernel::tracepoint::TraceEvent;
use crate::machine;
use crate::platform::SCHED_CAPACITY_SCALE;
use crate::workload::{CpuSet, Policy, SchedParams, Syscall, Thread, UserCtx};
use schedlab_base::sim::{EventQueue, Time};
use std::sync::Arc;

impl Kernel {
    // ----- system calls -----------------------------------------------------------------

    /// The running task `t` finished its previous request: run its thread until it asks for
    /// something that takes time or blocks.
    pub(super) fn run_thread(
        &mut self,
        t: TaskId,
        cpu: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let cost = machine::syscall(&self.costs).work_ns * SCHED_CAPACITY_SCALE as u64;
        self.thread_start(t, cpu, now);
        let task = &mut self.tasks[t];
        let mut ctx = UserCtx {
            now,
            cputime_ns: task.sum_exec_runtime,
            user: &mut self.user,
            workload: &self.workload,
        };
        let retry = task.retry_send.take();
        let call = match retry {
            Some((chan, bytes)) => Syscall::Send { chan, bytes },
            None => started(task).step(&mut ctx),
        };
        if let Some(logs) = self.rtapp_logs.as_mut() {
            started(task).drain_log(&mut self.log_scratch);
            logs.write(t, &task.name, &self.log_scratch);
            self.log_scratch.clear();
        }
        if !self.user.marks.is_empty() {
            self.write_marks(cpu, now, Some(t));
        }
        // Requests that complete at once still take CPU time: a system call's cost.
        let mut activity = Activity::Work(cost);
        match call {
            Syscall::Run { work } if work > 0 => activity = Activity::Work(work),
            Syscall::RunUntil { until } if until > now => activity = Activity::Until(until),
            Syscall::Run { .. } | Syscall::RunUntil { .. } => {}
            Syscall::SleepUntil { until } => {
                if until > now {
                    // `hrtimer_nanosleep()` arms the timer on the CPU the task sleeps on,
                    // with the task's slack unless it is RT or deadline.
                    let slack = match self.tasks[t].class() {
                        Class::Fair => self.tasks[t].timer_slack_ns,
                        Class::Rt | Class::Dl => 0,
                    };
                    let hard = until.saturating_add(slack);
                    self.hrtimers.start(cpu, t, until, hard);
                    self.sleep(t, TaskState::Interruptible, hard, q);
                    return;
                }
            }
            Syscall::Io { service_ns } => {
                self.tasks[t].in_iowait = true;
                let service = self.rng.jitter(service_ns, self.variant.io_jitter_pct);
                self.sleep(t, TaskState::Uninterruptible, now + service, q);
                return;
            }
            Syscall::MutexLock(m) => {
                if self.futex.lock(m, t) == Outcome::Block {
                    self.block(t);
                    return;
                }
            }
            Syscall::MutexUnlock(m) => {
                if let Some(w) = self.futex.unlock(m, t) {
                    self.try_to_wake_up(w, cpu, false, now, q);
                }
            }
            Syscall::CondWait { cond, mutex } => {
                if let Some(w) = self.futex.cond_wait(cond, mutex, t) {
                    self.try_to_wake_up(w, cpu, false, now, q);
                }
                self.block(t);
                return;
            }
            Syscall::CondSignal(c) | Syscall::CondBroadcast(c) => {
                let mut wake = std::mem::take(&mut self.wake_scratch);
                self.futex
                    .cond_wake(c, matches!(call, Syscall::CondBroadcast(_)), &mut wake);
                for w in wake.drain(..) {
                    self.try_to_wake_up(w, cpu, false, now, q);
                }
                self.wake_scratch = wake;
            }
            Syscall::Barrier(b) => {
                let mut wake = std::mem::take(&mut self.wake_scratch);
                let outcome = self.futex.barrier(b, t, &mut wake);
                for w in wake.drain(..) {
                    self.try_to_wake_up(w, cpu, false, now, q);
                }
                self.wake_scratch = wake;
                if outcome == Outcome::Block {
                    self.block(t);
                    return;
                }
            }
            Syscall::Yield => self.sched_yield(t, cpu, now),
            Syscall::Fork { task: spec } => self.do_fork(t, spec, now, q),
            Syscall::SetAffinity => {
                let mask = started(&mut self.tasks[t]).affinity(&self.workload);
                self.set_cpus_allowed(t, mask);
            }
            Syscall::SetScheduler(params) => self.setscheduler(t, params, now, q),
            Syscall::SetUclamp { min, max } => {
                // A refusal is counted on the task (rt-app logs it and goes on).
                let _ = self.set_uclamp(t, min, max, now, q);
            }
            Syscall::SetLatencyNice(v) => {
                // A refusal is counted on the task, as for uclamp.
                let _ = self.set_latency_nice(t, v, now, q);
            }
            Syscall::SetTaskgroup(g) => self.move_to_taskgroup(t, g, now, q),
            Syscall::Send { chan, bytes } => {
                let outcome = self.channels.send(chan, t, bytes, retry.is_some());
                self.wake_channel_waiters(cpu, now, q);
                if outcome == SendOutcome::Block {
                    self.block(t);
                    return;
                }
                self.touch_channel_data(cpu, chan, bytes);
                activity = Activity::Work(self.channel_op_work(chan, true, bytes));
            }
            Syscall::Recv { chan, max } => {
                let got = self.channels.recv(chan, t, max);
                self.wake_channel_waiters(cpu, now, q);
                let Some(got) = got else {
                    self.block(t);
                    return;
                };
                self.touch_channel_data(cpu, chan, got);
                activity = Activity::Work(self.channel_op_work(chan, false, got));
            }
            Syscall::Exit => {
                self.do_exit(t, now);
                return;
            }
        }
        self.tasks[t].activity = activity;
        self.arm_work(cpu, now, q);
    }

    /// CPU work (capacity·ns) of one channel read or write of `bytes`, the task's own.
    fn channel_op_work(&self, chan: usize, send: bool, bytes: u64) -> u64 {
        let kind = self.channels.chans[chan].kind;
        machine::channel_op(&self.costs, kind, send, bytes).work_ns * SCHED_CAPACITY_SCALE as u64
    }

    /// The data of a channel read or write of `bytes` done on `cpu` evicts from its caches.
    #[inline]
    fn touch_channel_data(&mut self, cpu: usize, chan: usize, bytes: u64) {
        let kind = self.channels.chans[chan].kind;
        self.touch(cpu, super::pipe::op_footprint(kind, bytes));
    }

    /// Wake the tasks whose blocked channel operation the last send or receive completed;
    /// each runs its operation's cost before its thread goes on. A writer woken to retry
    /// issues its write again when it runs.
    #[inline]
    fn wake_channel_waiters(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        // Most operations complete no waiter's: this check stays in the caller.
        if self.channels.has_completed() {
            self.wake_completed(cpu, now, q);
        }
    }

    /// The waking itself, kept out of line so that the check above inlines small.
    #[inline(never)]
    fn wake_completed(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let done = self.channels.take_completed();
        for c in &done {
            if c.retry {
                self.tasks[c.task].retry_send = Some((c.chan, c.bytes));
            } else {
                // The hand-off is accounted on the waker's CPU, whose operation made it.
                self.touch_channel_data(cpu, c.chan, c.bytes);
                self.tasks[c.task].activity =
                    Activity::Work(self.channel_op_work(c.chan, c.send, c.bytes));
            }
            let sync = super::pipe::wake_is_sync(self.channels.chans[c.chan].kind, c.send);
            self.try_to_wake_up(c.task, cpu, sync, now, q);
        }
        self.channels.restore_completed(done);
    }

    /// The running task sleeps until `until` (a timer or an I/O completion wakes it).
    pub(super) fn sleep(
        &mut self,
        t: TaskId,
        state: TaskState,
        until: Time,
        q: &mut EventQueue<Event>,
    ) {
        self.block(t);
        let task = &mut self.tasks[t];
        task.state = state;
        q.schedule(
            until,
            Event::Wake {
                task: t as u32,
                gen: task.wake_gen,
            },
        );
    }

    /// The running task blocks (`schedule()` will dequeue it).
    pub(super) fn block(&mut self, t: TaskId) {
        self.checks.task(t);
        let task = &mut self.tasks[t];
        task.state = TaskState::Interruptible;
        task.activity = Activity::Next;
        let cpu = task.cpu;
        self.resched_curr(cpu);
    }

    /// `sched_yield()`.
    pub(super) fn sched_yield(&mut self, t: TaskId, cpu: usize, now: Time) {
        match self.tasks[t].class() {
            Class::Fair => self.fair.yield_task(cpu, self.tasks[t].se, now),
            Class::Rt => {
                let prio = self.tasks[t].prio() as usize;
                self.rqs[cpu].rt.requeue_tail(t, prio);
            }
            Class::Dl => {}
        }
        self.resched_curr(cpu);
    }

    /// `sched_setaffinity()` of the running task.
    pub(super) fn set_cpus_allowed(&mut self, t: TaskId, mask: CpuSet) {
        let valid = mask.and(&CpuSet::all(self.platform.nr_cpus()));
        if valid.is_empty() {
            // EINVAL: the mask has no online CPU; nothing changes.
            return;
        }
        let valid = self.shared_mask(valid);
        let task = &mut self.tasks[t];
        task.cpus_allowed = valid;
        if !task.cpus_allowed.contains(task.cpu) {
            task.migrate_pending = true;
            let cpu = task.cpu;
            self.resched_curr(cpu);
        }
    }

    /// The kernel's one copy of `mask`, made the first time a task is given it: tasks share
    /// their masks, and a thread that changes its affinity at every phase allocates
    /// nothing after its first round.
    fn shared_mask(&mut self, mask: CpuSet) -> Arc<CpuSet> {
        if mask == *self.all_cpus {
            return Arc::clone(&self.all_cpus);
        }
        if let Some(m) = self.masks.get(&mask) {
            return Arc::clone(m);
        }
        let m = Arc::new(mask);
        self.masks.insert(Arc::clone(&m));
        m
    }

    /// `__sched_setscheduler()` of the running task: requeue under the new class/priority.
    pub(super) fn setscheduler(
        &mut self,
        t: TaskId,
        params: SchedParams,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let (nice, rt_priority) = split_priority(params);
        let task = &self.tasks[t];
        if task.policy == params.policy
            && task.nice == nice
            && task.rt_priority == rt_priority
            && task.dl.dl_runtime == params.dl_runtime_ns
        {
            return;
        }
        self.requeue(t, now, q, |k, t| {
            let idle = params.policy == Policy::Idle;
            let task = &mut k.tasks[t];
            task.policy = params.policy;
            task.nice = nice;
            task.rt_priority = rt_priority;
            task.dl = dl_entity(params);
            k.fair
                .reweight(task.se, LoadWeight::for_nice(nice, idle), idle);
            let runtime = if params.policy.is_fair() {
                params.dl_runtime_ns
            } else {
                0
            };
            k.fair.set_custom_slice(task.se, runtime);
        });
    }

    /// Change a queued task's scheduling attributes the way `__sched_setscheduler` and
    /// `sched_move_task` do: dequeue (and put_prev if running), change, enqueue (and
    /// set_next), then let `schedule()` pick again.
    pub(super) fn requeue(
        &mut self,
        t: TaskId,
        now: Time,
        q: &mut EventQueue<Event>,
        change: impl FnOnce(&mut Kernel, TaskId),
    ) {
        if !self.tasks[t].on_rq {
            // A sleeping task is simply changed; its next enqueue sees the change.
            change(self, t);
            return;
        }
        let cpu = self.tasks[t].cpu;
        self.update_curr(cpu, now);
        let running = self.rqs[cpu].curr == Some(t);
        if running && self.tasks[t].class() == Class::Fair {
            self.fair.put_prev_entity(cpu, self.tasks[t].se, now);
        }
        let (old_class, old_prio) = (self.tasks[t].class(), self.tasks[t].prio());
        self.dequeue_task(t, cpu, QueueFlags::default(), now, q);
        change(self, t);
        self.enqueue_task(t, cpu, cpu, QueueFlags::default(), false, now, q);
        if running && self.tasks[t].class() == Class::Fair {
            self.fair.set_next_entity(cpu, self.tasks[t].se, now);
        }
        // check_class_changed(): an RT task leaving the class with no RT task left behind
        // (switched_from_rt()), or a running one lowering its priority (prio_changed_rt()),
        // queues pull_rt_task() as a balance callback, run before the call returns.
        if old_class == Class::Rt {
            let pull = if self.tasks[t].class() == Class::Rt {
                running && self.tasks[t].prio() > old_prio
            } else {
                self.rqs[cpu].rt.nr_running == 0
            };
            if pull {
                self.pull_rt_task(cpu, now, q);
            }
        }
        // check_class_changed()/prio_changed(): let schedule() pick again.
        self.resched_curr(cpu);
    }

    /// rt-app's `util_min`/`util_max`: `sched_setattr()` with SCHED_FLAG_KEEP_ALL and the
    /// clamp flags of the values given (-1 resets). A refused call is counted with its errno.
    pub(super) fn set_uclamp(
        &mut self,
        t: TaskId,
        min: Option<i32>,
        max: Option<i32>,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> Result<(), Errno> {
        let mut flags = SCHED_FLAG_KEEP_ALL;
        if min.is_some() {
            flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
        }
        if max.is_some() {
            flags |= SCHED_FLAG_UTIL_CLAMP_MAX;
        }
        let attr = SchedAttr {
            size: SCHED_ATTR_SIZE_VER1,
            flags,
            util_min: min.unwrap_or(0),
            util_max: max.unwrap_or(0),
            ..SchedAttr::default()
        };
        let config = SetattrConfig {
            uclamp_task: self.variant.uclamp_task,
            latency_nice: false,
        };
        let task = &self.tasks[t];
        let checked =
            setattr_syscall_checks(task.pid as i32, 0, &attr, config).and_then(|mut attr| {
                // SCHED_FLAG_KEEP_PARAMS (part of KEEP_ALL).
                get_params(task, &mut attr);
                let target = SetattrTask {
                    policy: policy_number(task.policy),
                    reset_on_fork: false,
                    uclamp: &task.uclamp,
                };
                validate_setattr(&attr, target, config, &mut self.uclamp)
            });
        match checked {
            Ok(attr) => {
                self.requeue(t, now, q, |k, t| {
                    let is_rt = k.tasks[t].class() != Class::Fair;
                    apply_setattr_uclamp(&mut k.tasks[t].uclamp, &attr, &k.uclamp, is_rt);
                });
                Ok(())
            }
            Err(e) => {
                let task = &mut self.tasks[t];
                task.setattr_errors += 1;
                task.last_setattr_errno = Some(e.name());
                Err(e)
            }
        }
    }

    /// The ABI configuration of this kernel: CONFIG_UCLAMP_TASK and whether the latency-nice
    /// series (SCHED_FLAG_LATENCY_NICE, `struct sched_attr` VER2) is applied.
    fn setattr_config(&self) -> SetattrConfig {
        SetattrConfig {
            uclamp_task: self.variant.uclamp_task,
            latency_nice: self.variant.latency_nice != LatencyNice::Off,
        }
    }

    /// The live thread with this pid.
    fn task_by_pid(&self, pid: i32) -> Option<TaskId> {
        let pid = u32::try_from(pid).ok()?;
        self.tasks
            .iter()
            .position(|t| t.pid == pid && t.state != TaskState::Dead)
    }

    /// `sched_setattr()` with SCHED_FLAG_KEEP_ALL | SCHED_FLAG_LATENCY_NICE and a VER2 struct,
    /// as a thread sets its latency nice (rt-app's `latency_nice`, `task.X.latency_nice`).
    /// A refused call is counted with its errno.
    pub(super) fn set_latency_nice(
        &mut self,
        t: TaskId,
        latency_nice: i32,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> Result<(), Errno> {
        let attr = SchedAttr {
            size: SCHED_ATTR_SIZE_VER2,
            flags: SCHED_FLAG_KEEP_ALL | SCHED_FLAG_LATENCY_NICE,
            latency_nice,
            ..SchedAttr::default()
        };
        let pid = self.tasks[t].pid as i32;
        let result = self.sched_setattr(pid, &attr, 0, now, q);
        if let Err(e) = result {
            let task = &mut self.tasks[t];
            task.setattr_errors += 1;
            task.last_setattr_errno = Some(e.name());
        }
        result
    }

    /// `sys_sched_setattr(pid, attr, flags)` from outside the simulated threads (a test, a
    /// tool): the ABI checks, `get_params()` under SCHED_FLAG_KEEP_PARAMS,
    /// `__sched_setscheduler()`'s checks, then the change with the task dequeued: policy and
    /// parameters, reset_on_fork, latency nice (`__setscheduler_latency()`, the offset from
    /// the latency as it is now) and uclamp. pid 0 (the caller) names no simulated thread.
    pub fn sched_setattr(
        &mut self,
        pid: i32,
        attr: &SchedAttr,
        flags: u32,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> Result<(), Errno> {
        let config = self.setattr_config();
        let mut a = setattr_syscall_checks(pid, flags, attr, config)?;
        let t = self.task_by_pid(pid).ok_or(Errno::ESRCH)?;
        let task = &self.tasks[t];
        if a.flags & SCHED_FLAG_KEEP_PARAMS != 0 {
            get_params(task, &mut a);
        }
        let target = SetattrTask {
            policy: policy_number(task.policy),
            reset_on_fork: task.sched_reset_on_fork,
            uclamp: &task.uclamp,
        };
        let a = validate_setattr(&a, target, config, &mut self.uclamp)?;
        let policy = policy_of(a.policy);
        let params = SchedParams {
            policy,
            priority: if policy.is_rt() {
                a.priority as i32
            } else {
                a.nice
            },
            dl_runtime_ns: a.runtime,
            dl_deadline_ns: a.deadline,
            dl_period_ns: a.period,
        };
        let (nice, rt_priority) = split_priority(params);
        let task = &mut self.tasks[t];
        task.sched_reset_on_fork = a.flags & SCHED_FLAG_RESET_ON_FORK != 0;
        let latency_change =
            a.flags & SCHED_FLAG_LATENCY_NICE != 0 && a.latency_nice != task.latency_nice;
        // The DL parameters, or a fair task's custom slice (sched_runtime).
        let (old, new) = (&task.dl, dl_entity(params));
        let runtime_change = (old.dl_runtime, old.dl_deadline, old.dl_period)
            != (new.dl_runtime, new.dl_deadline, new.dl_period);
        let unchanged = task.policy == policy
            && task.nice == nice
            && task.rt_priority == rt_priority
            && !runtime_change
            && !latency_change
            && a.flags & SCHED_FLAG_UTIL_CLAMP == 0;
        if unchanged {
            return Ok(());
        }
        self.requeue(t, now, q, |k, t| {
            let idle = policy == Policy::Idle;
            let task = &mut k.tasks[t];
            task.policy = policy;
            task.nice = nice;
            task.rt_priority = rt_priority;
            task.dl = dl_entity(params);
            k.fair
                .reweight(task.se, LoadWeight::for_nice(nice, idle), idle);
            if policy.is_fair() {
                k.fair.set_custom_slice(task.se, a.runtime);
            }
            if a.flags & SCHED_FLAG_LATENCY_NICE != 0 {
                task.latency_nice = a.latency_nice;
                let offset = k.fair.latency_offset(a.latency_nice);
                k.fair.set_latency_offset(task.se, offset);
            }
            if k.variant.uclamp_task {
                let is_rt = task.class() != Class::Fair;
                apply_setattr_uclamp(&mut task.uclamp, &a, &k.uclamp, is_rt);
            }
        });
        Ok(())
    }

    /// `sys_sched_getattr(pid)`: the thread's policy, parameters, reset_on_fork flag, uclamp
    /// requests and latency nice, in a struct of the kernel's size.
    pub fn sched_getattr(&self, pid: i32) -> Result<SchedAttr, Errno> {
        if pid < 0 {
            return Err(Errno::EINVAL);
        }
        let t = self.task_by_pid(pid).ok_or(Errno::ESRCH)?;
        let task = &self.tasks[t];
        let config = self.setattr_config();
        Ok(SchedAttr {
            size: if config.latency_nice {
                SCHED_ATTR_SIZE_VER2
            } else {
                SCHED_ATTR_SIZE_VER1
            },
            policy: policy_number(task.policy),
            flags: if task.sched_reset_on_fork {
                SCHED_FLAG_RESET_ON_FORK
            } else {
                0
            },
            nice: task.nice,
            priority: task.rt_priority,
            runtime: task.dl.dl_runtime,
            deadline: task.dl.dl_deadline,
            period: task.dl.dl_period,
            util_min: task.uclamp.req[0].value as i32,
            util_max: task.uclamp.req[1].value as i32,
            latency_nice: if config.latency_nice {
                task.latency_nice
            } else {
                0
            },
            trailing_nonzero: false,
        })
    }

    /// `sched_move_task()`: the running task joins the cgroup of the workload's taskgroup `g`.
    pub(super) fn move_to_taskgroup(
        &mut self,
        t: TaskId,
        g: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        self.move_to_cgroup(t, self.tg_cgroup[g], now, q);
    }

    pub(super) fn move_to_cgroup(
        &mut self,
        t: TaskId,
        cg: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        if self.tasks[t].cgroup != cg {
            self.requeue(t, now, q, |k, t| {
                k.tasks[t].cgroup = cg;
                k.fair.set_task_group(k.tasks[t].se, cg);
            });
        }
    }

    /// The live thread named `name`.
    pub(super) fn task_by_name(&self, name: &str) -> Option<TaskId> {
        self.tasks
            .iter()
            .position(|t| t.name == name && t.state != TaskState::Dead && t.state != TaskState::New)
    }

    // ----- administration ---------------------------------------------------------------

    /// A timed write to a uclamp sysctl or a cgroup file, with the kernel's effects: the
    /// root group follows the sysctls, groups pass their clamps down, the running tasks of
    /// changed groups are updated at once (`uclamp_update_active_tasks`), and under the
    /// eager strategy RT tasks take a new RT default request. The result (ok or the errno)
    /// is recorded and traced; the run goes on either way.
    pub(super) fn admin_write(&mut self, index: usize, now: Time, q: &mut EventQueue<Event>) {
        let w = self.variant.timed_writes[index].clone();
        let result = match &w.target {
            AdminTarget::Sysctl(which) => {
                let value = w.value.parse::<i64>().unwrap_or(i64::MIN);
                self.uclamp.write_sysctl(*which, value).map(|effect| {
                    if effect.update_root_tg {
                        self.cgroups
                            .set_root([self.uclamp.util_min, self.uclamp.util_max]);
                        self.update_active_tasks(ROOT);
                    }
                    if effect.sync_rt_tasks {
                        for t in &mut self.tasks {
                            let is_rt = t.class() != Class::Fair;
                            sync_rt_default(&mut t.uclamp, &self.uclamp, is_rt);
                        }
                    }
                })
            }
            AdminTarget::Cgroup { path, file } if !file.starts_with("cpu.uclamp.") => {
                let g = self.cgroups.create(path);
                self.sync_fair_groups();
                self.write_fair_cgroup(g, file, &w.value, now)
            }
            AdminTarget::Cgroup { path, file } => {
                let g = self.cgroups.create(path);
                self.sync_fair_groups();
                let id = usize::from(file == "cpu.uclamp.max");
                self.cgroups.write_uclamp(g, id, &w.value).map(|()| {
                    if self.variant.uclamp_task_group {
                        self.uclamp.enable_static_key();
                        self.update_active_tasks(g);
                    }
                })
            }
            AdminTarget::TaskUclamp { task, min } => match self.task_by_name(task) {
                None => Err(Errno::ESRCH),
                Some(t) => {
                    let v = w.value.parse::<i32>().ok();
                    let (lo, hi) = if *min { (v, None) } else { (None, v) };
                    self.set_uclamp(t, lo, hi, now, q)
                }
            },
            AdminTarget::TaskLatencyNice { task } => match self.task_by_name(task) {
                None => Err(Errno::ESRCH),
                Some(t) => {
                    let v = w.value.parse::<i32>().unwrap_or(i32::MIN);
                    self.set_latency_nice(t, v, now, q)
                }
            },
            AdminTarget::TaskCgroup { task } => match self.task_by_name(task) {
                None => Err(Errno::ESRCH),
                Some(t) => {
                    let g = self.cgroups.create(&w.value);
                    self.sync_fair_groups();
                    self.move_to_cgroup(t, g, now, q);
                    Ok(())
                }
            },
            AdminTarget::ScalingSetspeed { cpu } => {
                // The key was checked at boot: `cpu` heads a policy.
                let policy = self.platform.cpus[*cpu].freq_domain;
                let khz = w.value.parse::<u32>().unwrap_or(0);
                self.cpufreq.store_setspeed(policy, khz).map(|change| {
                    if let Some(fc) = change {
                        self.set_policy_freq(fc, now, q);
                    }
                })
            }
        };
        let outcome = result.map_or_else(|e| e.name(), |()| "ok");
        self.admin_log.push(AdminRecord {
            at_ns: now,
            key: w.target.key(),
            value: w.value.clone(),
            result: outcome,
        });
        if let Some(obs) = self.observer.as_mut() {
            let text = format!("schedlab: {}={} {}", w.target.key(), w.value, outcome);
            obs.event(
                now,
                0,
                self.rqs[0].curr.map(|c| task_ref(&self.tasks[c])),
                &TraceEvent::Print { text: &text },
            );
        }
    }

    /// The fair class learns of cgroups created since it last looked (CONFIG_FAIR_GROUP_SCHED:
    /// `cpu_cgroup_css_alloc()` allocates the group's queues and entities).
    pub(super) fn sync_fair_groups(&mut self) {
        if !self.fair.group_sched() {
            return;
        }
        for g in self.fair.nr_groups()..self.cgroups.len() {
            self.fair.online_group(g, self.cgroups.parent(g));
        }
    }

    /// A write to `cpu.weight` (`sched_group_set_shares()` of weight × 1024 / 100) or
    /// `cpu.latency.nice` (patch 5: the offset of the value, from the latency as it is now).
    /// Neither file exists on the root nor without CONFIG_FAIR_GROUP_SCHED (nor
    /// `cpu.latency.nice` without the latency-nice series): ENOENT.
    pub(super) fn write_fair_cgroup(
        &mut self,
        g: usize,
        file: &str,
        value: &str,
        now: Time,
    ) -> Result<(), Errno> {
        if g == ROOT || !self.fair.group_sched() {
            return Err(Errno::ENOENT);
        }
        if file == "cpu.weight" {
            let shares = super::cgroup::weight_to_shares(value)?;
            self.fair.set_group_shares(g, shares, now);
        } else {
            if self.variant.latency_nice == LatencyNice::Off {
                return Err(Errno::ENOENT);
            }
            let nice = super::cgroup::parse_latency_nice(value)?;
            let offset = self.fair.latency_offset(nice);
            self.fair.set_group_latency(g, offset);
        }
        Ok(())
    }

    /// `uclamp_update_active_tasks()` for the queued tasks of `g` and the groups below it.
    pub(super) fn update_active_tasks(&mut self, g: usize) {
        if !self.uclamp.active() {
            return;
        }
        for t in 0..self.tasks.len() {
            let task = &self.tasks[t];
            if task.on_rq && task.class() != Class::Dl && self.cgroups.is_within(task.cgroup, g) {
                let (cpu, ctx) = (task.cpu, self.uclamp_ctx(t));
                self.rqs[cpu]
                    .uclamp
                    .update_active(&mut self.tasks[t].uclamp, ctx, &self.uclamp);
            }
        }
    }
}

/// The user-space state of a task that is running its thread (`thread_start` made it).
fn started(task: &mut Task) -> &mut Thread {
    task.thread
        .as_mut()
        .expect("a running task's thread has started")
}

/// The policy of a `sched_attr` policy number that `validate_setattr` accepted.
fn policy_of(n: i32) -> Policy {
    match n {
        SCHED_FIFO => Policy::Fifo,
        SCHED_RR => Policy::Rr,
        SCHED_BATCH => Policy::Batch,
        SCHED_IDLE => Policy::Idle,
        SCHED_DEADLINE => Policy::Deadline,
        _ => Policy::Other,
    }
}

/// The `sched_attr` policy number of a policy.
fn policy_number(p: Policy) -> i32 {
    match p {
        Policy::Other => SCHED_NORMAL,
        Policy::Fifo => SCHED_FIFO,
        Policy::Rr => SCHED_RR,
        Policy::Batch => SCHED_BATCH,
        Policy::Idle => SCHED_IDLE,
        Policy::Deadline => SCHED_DEADLINE,
    }
}

/// `get_params()`: SCHED_FLAG_KEEP_PARAMS keeps the task's own nice, priority and DL
/// parameters (or custom slice).
fn get_params(task: &Task, attr: &mut SchedAttr) {
    attr.nice = task.nice;
    attr.priority = task.rt_priority;
    attr.runtime = task.dl.dl_runtime;
    attr.deadline = task.dl.dl_deadline;
    attr.period = task.dl.dl_period;
}

//! The idle loop (kernel/sched/idle.c: `do_idle()`, `cpuidle_idle_call()`): a CPU going idle
//! asks its cpuidle governor for a state, stops the tick or keeps it, and enters the state;
//! a kept tick wakes it at the next jiffy and it selects again; a CPU woken for a task pays
//! its state's exit latency before the task runs. The cluster follows its last idle CPU.

use super::core::{Event, Kernel};
use super::cpuidle::{cluster_state, IdleInput};
use crate::kernel::tracepoint::{TraceEvent, PWR_EVENT_EXIT};
use crate::machine;
use crate::platform::IdleState;
use schedlab_base::sim::{EventQueue, Time};

/// `KTIME_MAX`: the sleep length of a CPU without timers.
const KTIME_MAX: u64 = i64::MAX as u64;

/// `trace_cpu_idle(1, cpu)` of `default_idle_call()`, for a CPU without cpuidle states.
const DEFAULT_IDLE_STATE: u32 = 1;

/// The softlockup watchdog's per-CPU hrtimer period (kernel/watchdog.c: `sample_period` =
/// 2 × `watchdog_thresh` (10 s) / `NUM_SAMPLE_PERIODS` (5) = 4 s): every CPU of a v6.1
/// kernel has a timer at most this far away, so no idle CPU expects to sleep forever. Its
/// expiries bound the governors' sleep length; the wake-ups themselves are not simulated
/// (they would keep a finished run going), so a CPU idle past one stays in its state.
const WATCHDOG_PERIOD_NS: u64 = 4_000_000_000;

/// The time from `now` till the earlier of `next` (a timer's expiry, `u64::MAX` for none)
/// and the watchdog's next expiry.
fn sleep_length(next: Time, now: Time) -> u64 {
    let watchdog = (now / WATCHDOG_PERIOD_NS + 1) * WATCHDOG_PERIOD_NS;
    next.min(watchdog).saturating_sub(now)
}

impl Kernel {
    /// The declared exit latency of the state idle `cpu` is in, or of its cluster's state if
    /// deeper (0 when the CPU is not idle): what the kernel reads (`idle_get_state()`'s
    /// `exit_latency`), the worst case.
    pub fn idle_exit_latency_ns(&self, cpu: usize) -> u64 {
        self.idle_exit(cpu, |s| s.exit_latency_ns)
    }

    /// How long a wake-up of `cpu` takes to get it running: the exit its state (or its
    /// cluster's, if longer) pays (`IdleState::exit_paid_ns`: the typical exit where the
    /// platform gives one, else the declared latency); 0 when the CPU is not idle.
    pub fn idle_exit_paid_ns(&self, cpu: usize) -> u64 {
        self.idle_exit(cpu, IdleState::exit_paid_ns)
    }

    fn idle_exit(&self, cpu: usize, exit: impl Fn(&IdleState) -> u64) -> u64 {
        if self.rqs[cpu].curr.is_some() {
            return 0;
        }
        let Some(s) = self.cpuidle[cpu].state else {
            return 0;
        };
        let c = &self.platform.cpus[cpu];
        let d = c.freq_domain;
        let cluster = self.domains[d].res.state().map_or(0, |k| {
            exit(&self.platform.freq_domains[d].cluster_idle_states[k])
        });
        exit(&c.idle_states[s]).max(cluster)
    }

    /// The time till `cpu`'s next timer event from `now`, the tick left out
    /// (`tick_nohz_get_sleep_length()`): its earliest armed sleep timer, or the watchdog's.
    fn sleep_length_ns(&self, cpu: usize, now: Time) -> u64 {
        sleep_length(self.hrtimers.next_expiry(cpu).unwrap_or(u64::MAX), now)
    }

    fn idle_input(&self, cpu: usize, now: Time) -> IdleInput {
        let tick = self.variant.tick_ns();
        IdleInput {
            sleep_length_ns: self.sleep_length_ns(cpu, now),
            delta_tick_ns: (now / tick + 1) * tick - now,
            tick_ns: tick,
            latency_req_ns: self.pm_qos.latency_req_ns(),
            nr_iowaiters: self.rqs[cpu].nr_iowait,
        }
    }

    /// `do_idle()`: `cpu` has just gone idle.
    pub(super) fn do_idle(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        self.cpuidle[cpu].idle_stamp = now;
        self.cpuidle_idle_call(cpu, now, q);
    }

    /// `cpuidle_idle_call()`: select and enter a state.
    fn cpuidle_idle_call(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let states = &self.platform.cpus[cpu].idle_states;
        if states.is_empty() {
            self.emit(
                now,
                cpu,
                &TraceEvent::CpuIdle {
                    state: DEFAULT_IDLE_STATE,
                    cpu,
                },
            );
            self.cancel_tick(cpu, q);
            self.cpufreq_idle_enter(cpu);
            return;
        }
        self.checks.cpu(cpu);
        let inp = self.idle_input(cpu, now);
        let sel = self.cpuidle[cpu].select(states, &inp, now);
        self.rqs[cpu].res.enter_state(now, Some(sel.state));
        self.emit(
            now,
            cpu,
            &TraceEvent::CpuIdle {
                state: sel.state as u32,
                cpu,
            },
        );
        if sel.stop_tick {
            // `tick_nohz_idle_stop_tick()` counts an idle call: schedutil's busy hold sees it.
            self.cancel_tick(cpu, q);
            self.cpufreq_idle_enter(cpu);
        } else {
            self.queue_tick(cpu, now + inp.delta_tick_ns, Event::IdleTick { cpu }, q);
        }
        self.cluster_idle_update(self.platform.cpus[cpu].freq_domain, now);
    }

    /// The kept tick of an idle CPU: the governor learns that the tick woke it, and selects
    /// again (the tick's own scheduler work on an idle CPU is not modelled). A CPU that
    /// leaves idle or stops its tick moves or cancels this event, so it finds the CPU idle.
    pub(super) fn cpuidle_tick(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        self.rqs[cpu].tick_queued = None;
        debug_assert!(
            self.cpuidle[cpu].state.is_some() && !self.cpuidle[cpu].tick_stopped,
            "cpu {cpu}: an idle tick not kept"
        );
        self.cpuidle_wakeup(cpu, true, now, q);
    }

    /// A timer interrupt woke idle `cpu` without giving it a task (the sleeper it woke went
    /// to another CPU, or only the tick ran): back to the idle loop. The test is inlined at
    /// each timer interrupt, most of which find the CPU busy; the re-entry is not.
    #[inline]
    pub(super) fn cpuidle_wakeup(
        &mut self,
        cpu: usize,
        tick: bool,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let rq = &self.rqs[cpu];
        let dev = &self.cpuidle[cpu];
        if rq.is_idle() && !rq.need_resched && dev.state.is_some() && dev.exiting.is_none() {
            self.cpuidle_reenter(cpu, tick, now, q);
        }
    }

    /// [`Kernel::cpuidle_wakeup`] of a CPU still idle: out of its state and in again.
    #[inline(never)]
    fn cpuidle_reenter(&mut self, cpu: usize, tick: bool, now: Time, q: &mut EventQueue<Event>) {
        let tick_ns = self.variant.tick_ns();
        let states = &self.platform.cpus[cpu].idle_states;
        self.cpuidle[cpu].reflect(states, now, false, tick, tick_ns);
        self.emit(
            now,
            cpu,
            &TraceEvent::CpuIdle {
                state: PWR_EVENT_EXIT,
                cpu,
            },
        );
        self.cpuidle_idle_call(cpu, now, q);
    }

    /// `schedule()` on idle `cpu` with a task queued: the CPU first leaves its idle state,
    /// so the switch waits for the exit latency (an `IdleExit` event re-runs `schedule()`;
    /// meanwhile the CPU stays idle, the task queued). True while the exit is under way.
    pub(super) fn idle_exit_pending(
        &mut self,
        cpu: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> bool {
        let rq = &self.rqs[cpu];
        if rq.curr.is_some() || rq.nr_running == 0 {
            return false;
        }
        if let Some((_, until)) = self.cpuidle[cpu].exiting {
            return now < until;
        }
        // The exit starts when the interrupt that brought the task arrives (an IPI may
        // still be on its way).
        let start = now.max(rq.irq_arrival);
        let until = start + machine::idle_exit(self.idle_exit_paid_ns(cpu)).wall_ns;
        self.cpuidle[cpu].exiting = Some((start, until));
        if until == now {
            return false;
        }
        let event = Event::IdleExit {
            cpu: cpu as u32,
            until,
        };
        q.schedule(until, event);
        true
    }

    /// The exit latency of `cpu` has passed (`until`): run what woke it. False if that exit
    /// was abandoned (stale).
    pub(super) fn idle_exit_done(&mut self, cpu: usize, until: Time) -> bool {
        let current = self.cpuidle[cpu].exiting.is_some_and(|(_, u)| u == until);
        if current {
            self.resched_curr(cpu);
        }
        current
    }

    /// `schedule()` on idle `cpu` found nothing to run after all (the task left during the
    /// exit, or cannot run): back to the idle loop.
    pub(super) fn idle_exit_abort(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        if self.cpuidle[cpu].exiting.take().is_some() {
            self.cpuidle_wakeup(cpu, false, now, q);
        }
    }

    /// `cpu` switches from idle to a task at `now`: the exit latency it paid before.
    pub(super) fn cpuidle_exit(&mut self, cpu: usize, now: Time) -> u64 {
        let tick = self.variant.tick_ns();
        let dev = &mut self.cpuidle[cpu];
        let latency = dev.exiting.take().map_or(0, |(since, _)| now - since);
        dev.reflect(&self.platform.cpus[cpu].idle_states, now, true, false, tick);
        self.emit(
            now,
            cpu,
            &TraceEvent::CpuIdle {
                state: PWR_EVENT_EXIT,
                cpu,
            },
        );
        latency
    }

    /// While every CPU of frequency domain `d` is idle, its cluster is in the state their
    /// choices allow (`cluster_state`); re-evaluated whenever one of them selects again.
    fn cluster_idle_update(&mut self, d: usize, now: Time) {
        if self.domains[d].busy_cpus > 0 {
            return;
        }
        let fd = &self.platform.freq_domains[d];
        let cpus = fd.cpus.iter().filter_map(|&c| {
            let states = &self.platform.cpus[c].idle_states;
            self.cpuidle[c]
                .state
                .map(|s| (states[s].exit_latency_ns, s + 1 == states.len()))
        });
        // The shortest of their sleep lengths: the earliest of their timers and the watchdog.
        let next = fd
            .cpus
            .iter()
            .filter_map(|&c| self.hrtimers.next_expiry(c))
            .min()
            .unwrap_or(u64::MAX);
        let sleep = if fd.cpus.is_empty() {
            KTIME_MAX
        } else {
            sleep_length(next, now)
        };
        let k = cluster_state(
            &fd.cluster_idle_states,
            cpus,
            self.pm_qos.latency_req_ns(),
            sleep,
        );
        if k != self.domains[d].res.state() {
            self.domains[d].res.enter_state(now, k);
        }
    }
}

#[cfg(debug_assertions)]
impl Kernel {
    /// cpuidle invariants of `cpu` and its cluster: the CPU is in an idle state exactly
    /// while it is idle (if it has any), the state is within the PM QoS limit unless it is
    /// the first, and the cluster is in a state only while all its CPUs are idle.
    pub(super) fn check_cpuidle_cpu(&self, cpu: usize) {
        let limit = self.pm_qos.latency_req_ns();
        let rq = &self.rqs[cpu];
        let states = &self.platform.cpus[cpu].idle_states;
        let dev = &self.cpuidle[cpu];
        let idle = rq.curr.is_none() && !states.is_empty();
        assert_eq!(
            dev.state.is_some(),
            idle,
            "cpu {cpu}: idle state out of step"
        );
        assert_eq!(
            dev.state,
            rq.res.state(),
            "cpu {cpu}: residency state out of step"
        );
        assert!(
            dev.exiting.is_none() || rq.curr.is_none(),
            "cpu {cpu}: runs a task while leaving idle"
        );
        if let Some(s) = dev.state {
            assert!(
                s == 0 || states[s].exit_latency_ns <= limit,
                "cpu {cpu}: state {s} beyond the PM QoS limit"
            );
        }
        self.check_cluster(self.platform.cpus[cpu].freq_domain);
    }

    /// Cluster `d` is in a state only while all its CPUs are idle, and within the PM QoS
    /// limit (or no deeper than its CPUs' own states).
    fn check_cluster(&self, d: usize) {
        let Some(k) = self.domains[d].res.state() else {
            return;
        };
        assert_eq!(
            self.domains[d].busy_cpus, 0,
            "cluster {d} in a state with busy CPUs"
        );
        let fd = &self.platform.freq_domains[d];
        let cpus_exit = fd
            .cpus
            .iter()
            .map(|&c| self.idle_exit_latency_ns(c))
            .min()
            .unwrap_or(0);
        let s = &fd.cluster_idle_states[k];
        assert!(
            s.exit_latency_ns <= self.pm_qos.latency_req_ns().max(cpus_exit),
            "cluster {d} beyond the PM QoS limit"
        );
    }

    /// The cpuidle invariants of every CPU and cluster (each cluster has CPUs).
    pub(super) fn check_cpuidle_invariants(&self) {
        for cpu in 0..self.rqs.len() {
            self.check_cpuidle_cpu(cpu);
        }
    }
}

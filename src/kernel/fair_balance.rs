//! The placement and balancing half of v6.1 `kernel/sched/fair.c` (SPEC §8): wakeup placement
//! (`select_task_rq_fair` with `wake_wide`/`wake_affine`, `select_idle_sibling`,
//! `select_idle_capacity`; `find_idlest_cpu` for fork), Energy Aware Scheduling
//! (`find_energy_efficient_cpu`, `compute_energy`), the root domain's overutilized flag,
//! misfit tasks, and load balancing (periodic per domain with `balance_interval`, newly idle,
//! nohz idle through a kick from a busy CPU's tick, active balance of a running task).
//!
//! The balancer keeps the kernel's structure — group statistics per domain, group types, the
//! busiest group and queue, the migration types `migrate_load`/`util`/`task`/`misfit` — and
//! leaves out what ARCHITECTURE.md lists (task_hot, runnable_avg in group classification,
//! imbalanced groups from affinity, NUMA, asym packing).

use super::core::{Event, Kernel};
use super::cpufreq::{effective_cpu_util, uclamp_rq_util_with, CpuUtil, TaskClamp, UtilType};
use super::energy_model::EnergyModel;
use super::sched::{Class, TaskId};
use super::sched_cpufreq::cpu_util;
use super::topology::{cpus, Topology};
use crate::platform::{Platform, SCHED_CAPACITY_SCALE};
use crate::sim::{EventQueue, Time};
use crate::trace::TraceEvent;
use crate::workload::CpuSet;

/// `fits_capacity()`: util fits with the ~20% margin.
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

/// `capacity_greater()`: cap1 is bigger than cap2 by more than ~5%.
fn capacity_greater(cap1: u64, cap2: u64) -> bool {
    cap1 * 1024 > cap2 * 1078
}

/// `enum cpu_idle_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleType {
    Idle,
    NotIdle,
    NewlyIdle,
}

/// `enum group_type`, in the kernel's order (higher is busier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    Misfit,
    Overloaded,
}

/// `enum migration_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Migration {
    Load,
    Util,
    Task,
    Misfit,
}

/// `struct sg_lb_stats`, reduced.
#[derive(Debug, Clone, Copy, Default)]
struct GroupStats {
    /// The group's CPUs (a `CpuSet` mask).
    span: u64,
    weight: u64,
    /// rq->nr_running summed, and the fair part (`sum_h_nr_running`).
    nr_running: u64,
    h_nr_running: u64,
    load: u64,
    util: u64,
    runnable: u64,
    capacity: u64,
    min_capacity: u64,
    max_capacity: u64,
    idle_cpus: u64,
    misfit_load: u64,
    avg_load: u64,
    kind: GroupType,
}

/// Per CPU and domain: `last_balance`, `balance_interval`, `nr_balance_failed`.
#[derive(Debug, Clone, Copy, Default)]
struct SdState {
    last_balance: u64,
    interval_ms: u64,
    nr_balance_failed: u32,
}

/// `wakee_flips`, `last_wakee`, `wakee_flip_decay_ts` of a task.
#[derive(Debug, Clone, Copy, Default)]
struct Wakee {
    flips: u32,
    last: Option<TaskId>,
    decay_ts: u64,
}

/// Counters of the balancer for the results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct BalanceStats {
    /// Tasks moved by `load_balance` (all idle types).
    pub lb_migrations: u64,
    /// Running tasks moved by active balance (misfit or failed balancing).
    pub active_migrations: u64,
    /// Wakeups placed by `find_energy_efficient_cpu`.
    pub eas_wakeups: u64,
    /// Times the root domain's overutilized flag was raised.
    pub overutilized_raised: u64,
    /// Ticks that found the running task misfit (`rq->misfit_task_load` set).
    pub misfit_ticks: u64,
}

/// The scheduler-domain state of the machine and the balancer's per-CPU bookkeeping.
pub struct Balance {
    pub topo: Topology,
    pub em: EnergyModel,
    /// `sched_energy_enabled()`.
    pub eas: bool,
    /// `rd->overutilized`.
    pub overutilized: bool,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: Vec<u64>,
    /// `rq->next_balance`.
    next_balance: Vec<u64>,
    sd: Vec<Vec<SdState>>,
    /// `rq->push_cpu` of an active balance under way.
    push_cpu: Vec<Option<usize>>,
    wakee: Vec<Wakee>,
    /// Reused group statistics of the domain being balanced.
    groups: Vec<GroupStats>,
    /// Per-CPU samples of the EAS estimate under way.
    eas_cpus: Vec<EasCpu>,
    pub stats: BalanceStats,
}

impl Balance {
    /// `build_sched_domains()` and `build_perf_domains()`: EAS needs the energy model (the
    /// platform's and the switch), asymmetric capacities, no SMT, frequency invariance and
    /// schedutil on every policy.
    pub fn new(p: &Platform, energy_model: bool, freq_invariant: bool, schedutil: bool) -> Self {
        let topo = Topology::new(p);
        let n = p.nr_cpus();
        let eas = energy_model
            && p.energy_model
            && topo.asym()
            && !topo.smt_active
            && freq_invariant
            && schedutil;
        let sd = topo
            .domains
            .iter()
            .map(|ds| {
                ds.iter()
                    .map(|d| SdState {
                        last_balance: 0,
                        interval_ms: d.min_interval_ms,
                        nr_balance_failed: 0,
                    })
                    .collect()
            })
            .collect();
        Balance {
            em: EnergyModel::new(p),
            eas,
            overutilized: false,
            misfit_task_load: vec![0; n],
            next_balance: vec![0; n],
            sd,
            push_cpu: vec![None; n],
            wakee: Vec::new(),
            groups: Vec::new(),
            eas_cpus: vec![EasCpu::default(); n],
            stats: BalanceStats::default(),
            topo,
        }
    }
}

impl Kernel {
    // ----- signals ----------------------------------------------------------------------

    fn capacity_orig(&self, cpu: usize) -> u64 {
        u64::from(self.platform.cpus[cpu].capacity_orig)
    }

    /// `capacity_of()`: what RT and deadline pressure leave of the CPU (`scale_rt_capacity`).
    pub(super) fn capacity_of(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let max = self.capacity_orig(cpu);
        let used = rq.avg_rt.util_avg + rq.avg_dl.util_avg;
        if used >= max {
            1
        } else {
            max - used
        }
    }

    fn cpu_load(&self, cpu: usize) -> u64 {
        self.fair.rqs[cpu].avg.load_avg
    }

    fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        self.fair.cpu_util_cfs(cpu, self.capacity_orig(cpu))
    }

    fn task_util_est(&self, t: TaskId) -> u64 {
        super::pelt::task_util_est(&self.fair.ses[self.tasks[t].se].avg)
    }

    fn task_load(&self, t: TaskId) -> u64 {
        self.fair.ses[self.tasks[t].se].avg.load_avg
    }

    fn uclamp_used(&self) -> bool {
        self.variant.uclamp_task && self.uclamp.active()
    }

    /// The rq's clamps as `uclamp_rq_get()` gives them, or (0, 1024) while unused or idle.
    fn rq_clamps(&self, cpu: usize) -> (u64, u64) {
        let rq = &self.rqs[cpu].uclamp;
        if !self.uclamp_used() || rq.flags_idle {
            (0, u64::from(SCHED_CAPACITY_SCALE))
        } else {
            (u64::from(rq.value[0]), u64::from(rq.value[1]))
        }
    }

    /// `util_fits_cpu()` (v6.2, in 6.1.y): the margin on `util`, but a uclamp_max below the
    /// CPU's capacity fits whatever the util, and a uclamp_min must fit the capacity too.
    fn util_fits_cpu(&self, util: u64, uclamp_min: u64, uclamp_max: u64, cpu: usize) -> bool {
        let fits = fits_capacity(util, self.capacity_of(cpu));
        if !self.uclamp_used() {
            return fits;
        }
        let orig = self.capacity_orig(cpu);
        let scale = u64::from(SCHED_CAPACITY_SCALE);
        let max_fits = !(orig == scale && uclamp_max == scale) && uclamp_max <= orig;
        let mut fits = fits || max_fits;
        let uclamp_min = uclamp_min.min(uclamp_max);
        if util < uclamp_min && orig != scale {
            fits = fits && uclamp_min <= orig;
        }
        fits
    }

    /// The task's effective clamps.
    fn task_clamp(&mut self, t: TaskId) -> TaskClamp {
        let (min, max) = self.uclamp_eff(t);
        TaskClamp {
            min: u64::from(min),
            max: u64::from(max),
        }
    }

    /// `uclamp_task_util()`: util_est clamped into the task's effective clamps.
    fn uclamp_task_util(&self, t: TaskId, c: TaskClamp) -> u64 {
        self.task_util_est(t).max(c.min).min(c.max)
    }

    /// `task_fits_cpu()`: v6.1's `task_fits_capacity()` or, with the switch,
    /// `util_fits_cpu()` on the task's own clamps.
    fn task_fits_cpu(&self, t: TaskId, c: TaskClamp, cpu: usize) -> bool {
        if self.variant.util_fits_cpu {
            self.util_fits_cpu(self.task_util_est(t), c.min, c.max, cpu)
        } else {
            fits_capacity(self.uclamp_task_util(t, c), self.capacity_of(cpu))
        }
    }

    /// `cpu_util_next()`: the CFS util of `cpu` if `t` moved to `dst` (None: away from
    /// everywhere), util_est included, capped at the CPU's capacity.
    fn cpu_util_next(&self, cpu: usize, t: TaskId, dst: Option<usize>) -> u64 {
        let cfs = &self.fair.rqs[cpu].avg;
        let task = &self.tasks[t];
        let p = &self.fair.ses[task.se].avg;
        let mut util = cfs.util_avg;
        if task.cpu == cpu && dst != Some(cpu) {
            util = util.saturating_sub(p.util_avg);
        } else if task.cpu != cpu && dst == Some(cpu) {
            util += p.util_avg;
        }
        if self.variant.features.util_est {
            let mut est = u64::from(cfs.util_est.enqueued & !super::pelt::UTIL_AVG_UNCHANGED);
            let task_est = u64::from(p.util_est.task_est());
            if dst == Some(cpu) {
                est += task_est;
            } else if task.on_rq && task.cpu == cpu {
                est = est.saturating_sub(task_est);
            }
            util = util.max(est);
        }
        util.min(self.capacity_orig(cpu))
    }

    // ----- overutilized and misfit -------------------------------------------------------

    /// `cpu_overutilized()`.
    fn cpu_overutilized(&self, cpu: usize) -> bool {
        let util = self.cpu_util_cfs(cpu);
        if self.variant.util_fits_cpu {
            let (min, max) = self.rq_clamps(cpu);
            !self.util_fits_cpu(util, min, max, cpu)
        } else {
            !fits_capacity(util, self.capacity_of(cpu))
        }
    }

    /// Write the root domain's overutilized flag, with its trace event.
    fn set_overutilized(&mut self, value: bool, cpu: usize, now: Time) {
        if value && !self.lb.overutilized {
            self.lb.stats.overutilized_raised += 1;
        }
        self.lb.overutilized = value;
        let span = CpuSet::all(self.platform.nr_cpus()).0;
        self.emit(
            now,
            cpu,
            &TraceEvent::SchedOverutilized {
                overutilized: value,
                span,
            },
        );
    }

    /// `update_overutilized_status()`: at the enqueue of a waking fair task and at the fair
    /// tick, the flag is raised if this CPU is overutilized.
    pub(super) fn update_overutilized_status(&mut self, cpu: usize, now: Time) {
        if !self.lb.overutilized && self.cpu_overutilized(cpu) {
            self.set_overutilized(true, cpu, now);
        }
    }

    /// After `schedule()` picked `next` on `cpu`: an active balance asked of this CPU has
    /// been served or is moot (its task left the CPU), and the misfit status follows `next`.
    pub(super) fn fair_post_schedule(&mut self, cpu: usize, next: Option<TaskId>) {
        self.lb.push_cpu[cpu] = None;
        self.update_misfit_status(cpu, next);
    }

    /// `update_misfit_status()`: the fair task `curr` now running on `cpu` (None: the CPU
    /// went idle) is misfit when it does not fit the CPU on an asymmetric system. A task of
    /// another class leaves the status as it was (the kernel updates it in the fair class).
    pub(super) fn update_misfit_status(&mut self, cpu: usize, curr: Option<TaskId>) {
        if !self.lb.topo.asym() {
            return;
        }
        let Some(t) = curr.filter(|&t| self.tasks[t].class() == Class::Fair) else {
            if curr.is_none() {
                self.lb.misfit_task_load[cpu] = 0;
            }
            return;
        };
        let single = self.tasks[t].cpus_allowed.0.count_ones() <= 1;
        let c = self.task_clamp(t);
        self.lb.misfit_task_load[cpu] = if single || self.task_fits_cpu(t, c, cpu) {
            0
        } else {
            self.task_load(t).max(1)
        };
    }

    /// Invariants of the balancer's state (debug builds).
    #[cfg(debug_assertions)]
    pub(super) fn check_balance_invariants(&self) {
        for cpu in 0..self.rqs.len() {
            let misfit = self.lb.misfit_task_load[cpu];
            assert!(
                misfit == 0 || self.lb.topo.asym(),
                "misfit on a symmetric system"
            );
            assert!(
                misfit == 0 || self.rqs[cpu].curr.is_some(),
                "cpu {cpu}: idle with a misfit task"
            );
            assert_ne!(self.lb.push_cpu[cpu], Some(cpu), "active balance to itself");
        }
        assert!(!self.lb.eas || self.lb.topo.asym() && !self.lb.topo.smt_active);
    }

    // ----- wakeup placement --------------------------------------------------------------

    /// `select_task_rq_fair()`: `this_cpu` is where the wakeup or fork runs.
    pub(super) fn select_task_rq_fair(
        &mut self,
        t: TaskId,
        prev: usize,
        this_cpu: usize,
        fork: bool,
        now: Time,
    ) -> usize {
        if self.lb.wakee.len() <= t {
            self.lb.wakee.resize(t + 1, Wakee::default());
        }
        let allowed = self.tasks[t].cpus_allowed;
        let cpu = if fork {
            self.lb.wakee[t] = Wakee::default();
            self.find_idlest_cpu(t, this_cpu, prev)
        } else {
            let waker = self.rqs[this_cpu].curr.filter(|&w| w != t);
            if let Some(w) = waker {
                self.record_wakee(w, t, now);
            }
            if let Some(c) = self
                .lb
                .eas
                .then(|| self.find_energy_efficient_cpu(t, prev, this_cpu))
                .flatten()
            {
                self.lb.stats.eas_wakeups += 1;
                c
            } else {
                let want_affine = !self.wake_wide(t, waker, this_cpu) && allowed.contains(this_cpu);
                let mut new_cpu = prev;
                if want_affine && this_cpu != prev {
                    let sd = self.lb.topo.domains[this_cpu]
                        .iter()
                        .position(|d| d.span.contains(prev));
                    if let Some(level) = sd {
                        new_cpu = self.wake_affine(level, t, this_cpu, prev);
                    }
                }
                self.select_idle_sibling(t, prev, new_cpu)
            }
        };
        if allowed.contains(cpu) {
            cpu
        } else {
            // select_fallback_rq().
            cpus(allowed).next().unwrap_or(prev)
        }
    }

    /// `record_wakee()`: the waker's flips decay by half every second and count wakee changes.
    fn record_wakee(&mut self, waker: TaskId, wakee: TaskId, now: Time) {
        if self.lb.wakee.len() <= waker {
            self.lb.wakee.resize(waker + 1, Wakee::default());
        }
        let w = &mut self.lb.wakee[waker];
        if now > w.decay_ts + 1_000_000_000 {
            w.flips >>= 1;
            w.decay_ts = now;
        }
        if w.last != Some(wakee) {
            w.last = Some(wakee);
            w.flips += 1;
        }
    }

    /// `wake_wide()`: a waker switching among many wakees (or a wakee among many wakers),
    /// more than the LLC has CPUs, spreads instead of pulling the wakee to itself.
    fn wake_wide(&self, t: TaskId, waker: Option<TaskId>, this_cpu: usize) -> bool {
        let Some(w) = waker else { return false };
        let mut master = self.lb.wakee[w].flips;
        let mut slave = self.lb.wakee[t].flips;
        let factor = self.lb.topo.llc[this_cpu].0.count_ones();
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    /// `wake_affine()`: WA_IDLE, then WA_WEIGHT (with WA_BIAS); prev_cpu unless this CPU wins.
    fn wake_affine(&self, level: usize, t: TaskId, this_cpu: usize, prev: usize) -> usize {
        if self.cpu_idle(this_cpu) && self.lb.topo.share_cache(this_cpu, prev) {
            return if self.cpu_idle(prev) { prev } else { this_cpu };
        }
        if self.cpu_idle(prev) {
            return prev;
        }
        let imbalance_pct = self.lb.topo.domains[this_cpu][level].imbalance_pct as i128;
        let task_load = self.task_load(t) as i128;
        let this_eff =
            (self.cpu_load(this_cpu) as i128 + task_load) * 100 * self.capacity_of(prev) as i128;
        let prev_eff = (self.cpu_load(prev) as i128 - task_load)
            * (100 + (imbalance_pct - 100) / 2)
            * self.capacity_of(this_cpu) as i128;
        if this_eff < prev_eff {
            this_cpu
        } else {
            prev
        }
    }

    /// `select_idle_sibling()`: target or prev if idle (and fitting, on asymmetric systems),
    /// else on asymmetric systems `select_idle_capacity()` over the asymmetric domain, else an
    /// idle core, SMT sibling or CPU of the target's LLC.
    fn select_idle_sibling(&mut self, t: TaskId, prev: usize, target: usize) -> usize {
        let asym = self.lb.topo.asym();
        let c = self.task_clamp(t);
        let fits = |k: &Kernel, cpu: usize| !asym || k.task_fits_cpu(t, c, cpu);
        if self.cpu_idle(target) && fits(self, target) {
            return target;
        }
        if prev != target
            && self.lb.topo.share_cache(prev, target)
            && self.cpu_idle(prev)
            && fits(self, prev)
        {
            return prev;
        }
        let allowed = self.tasks[t].cpus_allowed;
        if asym {
            if let Some(level) = self.lb.topo.asym_level[target] {
                let span = self.lb.topo.domains[target][level].span;
                return self
                    .select_idle_capacity(t, c, CpuSet(span.0 & allowed.0), target)
                    .unwrap_or(target);
            }
        }
        let llc = CpuSet(self.lb.topo.llc[target].0 & allowed.0);
        let n = self.platform.nr_cpus();
        let core_idle = |k: &Kernel, cpu: usize| cpus(k.lb.topo.smt[cpu]).all(|s| k.cpu_idle(s));
        let has_idle_core = self.lb.topo.smt_active && cpus(llc).any(|c| core_idle(self, c));
        if self.lb.topo.smt_active && !has_idle_core && self.lb.topo.share_cache(prev, target) {
            // select_idle_smt(): an idle sibling of prev.
            if let Some(s) = cpus(self.lb.topo.smt[prev])
                .find(|&s| s != prev && llc.contains(s) && self.cpu_idle(s))
            {
                return s;
            }
        }
        // select_idle_cpu(): from target + 1, wrapping; a whole idle core first if one exists.
        let mut idle_cpu = None;
        for i in 1..=n {
            let cpu = (target + i) % n;
            if !llc.contains(cpu) || !self.cpu_idle(cpu) {
                continue;
            }
            if !has_idle_core || core_idle(self, cpu) {
                return cpu;
            }
            idle_cpu.get_or_insert(cpu);
        }
        idle_cpu.unwrap_or(target)
    }

    /// `select_idle_capacity()`: the first idle CPU from `target` on that fits the task, else
    /// the idle CPU with the largest capacity.
    fn select_idle_capacity(
        &self,
        t: TaskId,
        c: TaskClamp,
        cpus: CpuSet,
        target: usize,
    ) -> Option<usize> {
        let n = self.platform.nr_cpus();
        let mut best: Option<(u64, usize)> = None;
        for i in 0..n {
            let cpu = (target + i) % n;
            if !cpus.contains(cpu) || !self.cpu_idle(cpu) {
                continue;
            }
            if self.task_fits_cpu(t, c, cpu) {
                return Some(cpu);
            }
            let cap = self.capacity_of(cpu);
            if best.map_or(true, |(b, _)| cap > b) {
                best = Some((cap, cpu));
            }
        }
        best.map(|(_, cpu)| cpu)
    }

    // ----- fork balancing ----------------------------------------------------------------

    /// `find_idlest_cpu()` from the top domain of `this_cpu` (SD_BALANCE_FORK on every level).
    fn find_idlest_cpu(&mut self, t: TaskId, this_cpu: usize, prev: usize) -> usize {
        let allowed = self.tasks[t].cpus_allowed;
        let mut cpu = this_cpu;
        let mut level = match self.lb.topo.domains[cpu].len() {
            0 => return this_cpu,
            l => l - 1,
        };
        if self.lb.topo.domains[cpu][level].span.0 & allowed.0 == 0 {
            return prev;
        }
        let mut new_cpu = cpu;
        loop {
            let group = self.find_idlest_group(t, cpu, level);
            match group {
                None => {
                    if level == 0 {
                        break;
                    }
                    level -= 1;
                }
                Some(g) => {
                    new_cpu = self.find_idlest_group_cpu(g, allowed, cpu);
                    if new_cpu == cpu {
                        if level == 0 {
                            break;
                        }
                        level -= 1;
                        continue;
                    }
                    let weight = self.lb.topo.domains[cpu][level].weight;
                    cpu = new_cpu;
                    match self.lb.topo.domains[cpu]
                        .iter()
                        .rposition(|d| d.weight < weight)
                    {
                        Some(l) => level = l,
                        None => break,
                    }
                }
            }
        }
        new_cpu
    }

    /// Wakeup statistics of a group for `t` (`update_sg_wakeup_stats`), `t` not counted.
    fn wakeup_group_stats(&mut self, t: TaskId, span: CpuSet, asym: bool, pct: u64) -> GroupStats {
        let mut s = GroupStats {
            span: span.0,
            min_capacity: u64::MAX,
            ..GroupStats::default()
        };
        for cpu in cpus(span) {
            let here = self.tasks[t].on_rq && self.tasks[t].cpu == cpu;
            s.load += self.cpu_load(cpu);
            s.util += self.cpu_util_next(cpu, t, None);
            s.runnable += self.fair.rqs[cpu].avg.runnable_avg;
            s.nr_running += u64::from(self.rqs[cpu].nr_running) - u64::from(here);
            s.h_nr_running += u64::from(self.fair.rqs[cpu].h_nr_running) - u64::from(here);
            if self.cpu_idle(cpu) {
                s.idle_cpus += 1;
            }
            let cap = self.capacity_of(cpu);
            s.capacity += cap;
            s.min_capacity = s.min_capacity.min(cap);
            s.max_capacity = s.max_capacity.max(cap);
            s.weight += 1;
        }
        let c = self.task_clamp(t);
        if asym && !fits_capacity(self.uclamp_task_util(t, c), s.max_capacity) {
            s.misfit_load = 1;
        }
        s.kind = classify(&s, pct);
        s.avg_load = s.load * u64::from(SCHED_CAPACITY_SCALE) / s.capacity.max(1);
        s
    }

    /// `find_idlest_group()`: the least busy group of the domain, or None to stay local.
    fn find_idlest_group(&mut self, t: TaskId, this_cpu: usize, level: usize) -> Option<CpuSet> {
        let allowed = self.tasks[t].cpus_allowed;
        let sd = &self.lb.topo.domains[this_cpu][level];
        let (asym, pct, nr_groups) = (sd.asym_cpucapacity, sd.imbalance_pct, sd.groups.len());
        let mut local: Option<GroupStats> = None;
        let mut idlest: Option<GroupStats> = None;
        for g in 0..nr_groups {
            let span = self.lb.topo.domains[this_cpu][level].groups[g];
            if span.0 & allowed.0 == 0 {
                continue;
            }
            let s = self.wakeup_group_stats(t, span, asym, pct);
            if span.contains(this_cpu) {
                local = Some(s);
            } else if idlest.map_or(true, |i| pick_idlest(&i, &s)) {
                idlest = Some(s);
            }
        }
        let idlest = idlest?;
        let Some(local) = local else {
            return Some(CpuSet(idlest.span));
        };
        if local.kind < idlest.kind {
            return None;
        }
        if idlest.kind < local.kind {
            return Some(CpuSet(idlest.span));
        }
        let stay = match local.kind {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = u64::from(SCHED_CAPACITY_SCALE) * (pct - 100) / 100;
                idlest.avg_load >= local.avg_load + imbalance
                    || 100 * local.avg_load <= pct * idlest.avg_load
            }
            GroupType::Misfit => local.max_capacity >= idlest.max_capacity,
            GroupType::HasSpare => local.idle_cpus >= idlest.idle_cpus,
        };
        (!stay).then_some(CpuSet(idlest.span))
    }

    /// `find_idlest_group_cpu()`: the idle CPU in the shallowest idle state, the most
    /// recently idled among equals, else the least loaded one.
    fn find_idlest_group_cpu(&self, group: CpuSet, allowed: CpuSet, this_cpu: usize) -> usize {
        if group.0.count_ones() == 1 {
            return cpus(group).next().unwrap_or(this_cpu);
        }
        let mut idle: Option<((u64, std::cmp::Reverse<u64>), usize)> = None;
        let mut least: Option<(u64, usize)> = None;
        for cpu in cpus(group).filter(|&c| allowed.contains(c)) {
            if self.cpu_idle(cpu) {
                let key = (
                    self.idle_exit_latency_ns(cpu),
                    std::cmp::Reverse(self.cpuidle[cpu].idle_stamp),
                );
                if idle.map_or(true, |(k, _)| key < k) {
                    idle = Some((key, cpu));
                }
            } else {
                let load = self.cpu_load(cpu);
                if least.map_or(true, |(l, _)| load < l) {
                    least = Some((load, cpu));
                }
            }
        }
        idle.map(|(_, c)| c)
            .or(least.map(|(_, c)| c))
            .unwrap_or(this_cpu)
    }

    // ----- Energy Aware Scheduling -------------------------------------------------------

    /// The per-CPU inputs of one EAS estimate, sampled once per wakeup into `lb.eas_cpus`:
    /// within a performance domain only the destination CPU's utilization depends on where
    /// the task goes (`cpu_util_next()` of any other CPU is the same for every candidate).
    fn sample_eas_cpus(&mut self, t: TaskId) {
        let used = self.uclamp_used();
        for cpu in 0..self.platform.nr_cpus() {
            let rq = cpu_util(&self.rqs, &self.fair, &self.platform, used, cpu);
            let without = self.cpu_util_next(cpu, t, None);
            self.lb.eas_cpus[cpu] = EasCpu {
                rq,
                with: self.cpu_util_next(cpu, t, Some(cpu)),
                freq_without: effective_cpu_util(&rq, without, UtilType::Frequency, None),
                energy_without: effective_cpu_util(&rq, without, UtilType::Energy, None),
            };
        }
    }

    /// `find_energy_efficient_cpu()`: None when EAS does not apply (overutilized, no
    /// asymmetric domain); else prev_cpu or the CPU whose energy delta is strictly lower.
    fn find_energy_efficient_cpu(
        &mut self,
        t: TaskId,
        prev: usize,
        this_cpu: usize,
    ) -> Option<usize> {
        if self.lb.overutilized {
            return None;
        }
        let level = self.lb.topo.asym_level[this_cpu]?;
        let sd_span = self.lb.topo.domains[this_cpu][level..]
            .iter()
            .find(|d| d.span.contains(prev))?
            .span;
        let task_busy = self.task_util_est(t);
        if task_busy == 0 {
            return Some(prev);
        }
        let clamp = self.task_clamp(t);
        let allowed = self.tasks[t].cpus_allowed;
        self.sample_eas_cpus(t);
        let (mut best_delta, mut prev_delta) = (u64::MAX, u64::MAX);
        let mut best_cpu = prev;
        for pd in 0..self.lb.topo.perf_domains.len() {
            let pd_cpus = self.lb.topo.perf_domains[pd];
            let Some(first) = cpus(pd_cpus).next() else {
                continue;
            };
            let cpu_cap = self.capacity_orig(first);
            let pd_cap = cpu_cap * u64::from(pd_cpus.0.count_ones());
            let (mut max_spare, mut max_spare_cpu) = (0u64, None);
            let (mut prev_spare, mut compute_prev) = (0u64, false);
            for cpu in cpus(pd_cpus) {
                if !sd_span.contains(cpu) || !allowed.contains(cpu) {
                    continue;
                }
                let c = &self.lb.eas_cpus[cpu];
                let util = c.with;
                let mut cap = self.capacity_of(cpu);
                let (fits, used) = if self.variant.util_fits_cpu {
                    let (rmin, rmax) = self.rq_clamps(cpu);
                    let fits =
                        self.util_fits_cpu(util, rmin.max(clamp.min), rmax.max(clamp.max), cpu);
                    (fits, util)
                } else {
                    let clamped = uclamp_rq_util_with(&c.rq, util, Some(clamp));
                    (fits_capacity(clamped, cap), clamped)
                };
                if !fits {
                    continue;
                }
                cap = cap.saturating_sub(used);
                if cpu == prev {
                    prev_spare = cap;
                    compute_prev = true;
                } else if cap > max_spare {
                    max_spare = cap;
                    max_spare_cpu = Some(cpu);
                }
            }
            if max_spare_cpu.is_none() && !compute_prev {
                continue;
            }
            let pd_busy = cpus(pd_cpus)
                .map(|c| self.lb.eas_cpus[c].energy_without)
                .sum::<u64>()
                .min(pd_cap);
            let env = EnergyEnv {
                pd,
                cpus: pd_cpus,
                cpu_cap,
                pd_cap,
                pd_busy,
                task_busy,
                clamp,
            };
            let base = self.compute_energy(&env, None);
            if compute_prev {
                let e = self.compute_energy(&env, Some(prev));
                if e < base {
                    return Some(prev);
                }
                prev_delta = e - base;
                best_delta = best_delta.min(prev_delta);
            }
            if let Some(c) = max_spare_cpu.filter(|_| max_spare > prev_spare) {
                let e = self.compute_energy(&env, Some(c));
                if e < base {
                    return Some(prev);
                }
                let delta = e - base;
                if delta < best_delta {
                    best_delta = delta;
                    best_cpu = c;
                }
            }
        }
        Some(if best_delta < prev_delta {
            best_cpu
        } else {
            prev
        })
    }

    /// `compute_energy()`: the domain's energy with the task on `dst` (None: nowhere in it),
    /// from the CPUs sampled by `sample_eas_cpus()`.
    fn compute_energy(&self, env: &EnergyEnv, dst: Option<usize>) -> u64 {
        let mut max_util = 0;
        for cpu in cpus(env.cpus) {
            let c = &self.lb.eas_cpus[cpu];
            let util = if Some(cpu) == dst {
                effective_cpu_util(&c.rq, c.with, UtilType::Frequency, Some(env.clamp))
            } else {
                c.freq_without
            };
            max_util = max_util.max(util);
        }
        let max_util = max_util.min(env.cpu_cap);
        let busy = match dst {
            Some(_) => (env.pd_busy + env.task_busy).min(env.pd_cap),
            None => env.pd_busy,
        };
        self.lb.em.pds[env.pd].em_cpu_energy(max_util, busy, env.cpu_cap, env.cpu_cap)
    }

    // ----- load balancing ----------------------------------------------------------------

    /// `get_sd_balance_interval()` in ns: the domain's interval (× busy_factor when busy),
    /// in jiffies, at most `HZ × nr_cpus / 10`.
    fn sd_interval(&self, cpu: usize, level: usize, busy: bool) -> u64 {
        let d = &self.lb.topo.domains[cpu][level];
        let mut ms = self.lb.sd[cpu][level].interval_ms;
        if busy {
            ms *= d.busy_factor;
        }
        let tick = self.variant.tick_ns();
        let jiffies = (ms * 1_000_000).div_ceil(tick);
        let max = u64::from(self.variant.hz) * self.platform.nr_cpus() as u64 / 10;
        jiffies.clamp(1, max.max(1)) * tick
    }

    /// `trigger_load_balance()` from a busy CPU's tick: its own periodic balance when due,
    /// and the nohz kick of the idle CPUs.
    pub(super) fn trigger_load_balance(
        &mut self,
        cpu: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        if self.lb.misfit_task_load[cpu] > 0 {
            self.lb.stats.misfit_ticks += 1;
        }
        if now >= self.lb.next_balance[cpu] {
            let idle = if self.cpu_idle(cpu) {
                IdleType::Idle
            } else {
                IdleType::NotIdle
            };
            self.rebalance_domains(cpu, idle, now, q);
        }
        self.nohz_balancer_kick(cpu, now, q);
    }

    /// `rebalance_domains()`: balance each domain whose interval has passed.
    fn rebalance_domains(
        &mut self,
        cpu: usize,
        mut idle: IdleType,
        now: Time,
        q: &mut EventQueue<Event>,
    ) {
        let mut busy = idle == IdleType::NotIdle;
        let mut next = now + 60_000_000_000;
        for level in 0..self.lb.topo.domains[cpu].len() {
            let mut interval = self.sd_interval(cpu, level, busy);
            if now >= self.lb.sd[cpu][level].last_balance + interval {
                if self.load_balance(cpu, level, idle, now, q) {
                    idle = if self.cpu_idle(cpu) {
                        IdleType::Idle
                    } else {
                        IdleType::NotIdle
                    };
                    busy = idle == IdleType::NotIdle;
                }
                self.lb.sd[cpu][level].last_balance = now;
                interval = self.sd_interval(cpu, level, busy);
            }
            next = next.min(self.lb.sd[cpu][level].last_balance + interval);
        }
        self.lb.next_balance[cpu] = next;
    }

    /// `nohz_balancer_kick()` + `nohz_idle_balance()`: a busy CPU with waiting tasks, RT/DL
    /// pressure, a misfit task or (symmetric systems) a busy LLC sibling has the idle CPUs
    /// whose balance is due balanced at once.
    fn nohz_balancer_kick(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        let n = self.platform.nr_cpus();
        let due = (0..n).any(|c| self.cpu_idle(c) && now >= self.lb.next_balance[c]);
        if !due {
            return;
        }
        let rq = &self.rqs[cpu];
        let mut kick = rq.nr_running >= 2;
        if !kick {
            if let Some(sd) = self.lb.topo.domains[cpu].first() {
                kick = self.fair.rqs[cpu].h_nr_running >= 1
                    && self.capacity_of(cpu) * sd.imbalance_pct < self.capacity_orig(cpu) * 100;
            }
        }
        if !kick {
            kick = if self.lb.topo.asym_level[cpu].is_some() {
                self.lb.misfit_task_load[cpu] > 0
                    && (self.capacity_orig(cpu) < u64::from(self.lb.topo.max_capacity)
                        || self.capacity_of(cpu) * 117 < self.capacity_orig(cpu) * 100)
            } else {
                self.lb.topo.llc[cpu]
                    .iter()
                    .filter(|&c| !self.cpu_idle(c))
                    .count()
                    > 1
            };
        }
        if !kick {
            return;
        }
        for i in 1..=n {
            let c = (cpu + i) % n;
            if self.cpu_idle(c) && now >= self.lb.next_balance[c] {
                self.rebalance_domains(c, IdleType::Idle, now, q);
            }
        }
    }

    /// `newidle_balance()` for the fair class: when some CPU is overloaded (`rd->overload`,
    /// read here as it is now: a runqueue with two tasks or a misfit one), balance each
    /// domain, lowest first, until a task was pulled; the CPU's next periodic balance is due
    /// at its idle intervals.
    pub(super) fn newidle_balance(
        &mut self,
        cpu: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> bool {
        let n = self.platform.nr_cpus();
        let overload =
            (0..n).any(|c| self.rqs[c].nr_running >= 2 || self.lb.misfit_task_load[c] > 0);
        let mut next = self.lb.next_balance[cpu];
        let mut pulled = false;
        for level in 0..self.lb.topo.domains[cpu].len() {
            next =
                next.min(self.lb.sd[cpu][level].last_balance + self.sd_interval(cpu, level, false));
            if !overload || pulled {
                continue;
            }
            pulled = self.load_balance(cpu, level, IdleType::NewlyIdle, now, q)
                || self.rqs[cpu].nr_running > 0;
        }
        self.lb.next_balance[cpu] = next;
        pulled
    }

    /// `update_sd_lb_stats()` into `self.lb.groups`; returns (local group index, whether a
    /// CPU of the domain is overutilized). The root domain's flag is written here.
    fn update_sd_lb_stats(&mut self, dst: usize, level: usize, now: Time) -> usize {
        let mut groups = std::mem::take(&mut self.lb.groups);
        groups.clear();
        let sd = &self.lb.topo.domains[dst][level];
        let (asym, pct, root) = (
            sd.asym_cpucapacity,
            sd.imbalance_pct,
            level + 1 == self.lb.topo.domains[dst].len(),
        );
        let mut overutilized = false;
        let mut local = 0;
        for g in 0..self.lb.topo.domains[dst][level].groups.len() {
            let span = self.lb.topo.domains[dst][level].groups[g];
            let is_local = span.contains(dst);
            let mut s = GroupStats {
                span: span.0,
                min_capacity: u64::MAX,
                ..GroupStats::default()
            };
            for cpu in cpus(span) {
                s.load += self.cpu_load(cpu);
                s.util += self.cpu_util_cfs(cpu);
                s.runnable += self.fair.rqs[cpu].avg.runnable_avg;
                s.nr_running += u64::from(self.rqs[cpu].nr_running);
                s.h_nr_running += u64::from(self.fair.rqs[cpu].h_nr_running);
                if self.cpu_idle(cpu) {
                    s.idle_cpus += 1;
                }
                overutilized |= self.cpu_overutilized(cpu);
                let cap = self.capacity_of(cpu);
                s.capacity += cap;
                s.min_capacity = s.min_capacity.min(cap);
                s.max_capacity = s.max_capacity.max(cap);
                s.weight += 1;
                if asym && !is_local {
                    s.misfit_load = s.misfit_load.max(self.lb.misfit_task_load[cpu]);
                }
            }
            s.kind = classify(&s, pct);
            s.avg_load = s.load * u64::from(SCHED_CAPACITY_SCALE) / s.capacity.max(1);
            if is_local {
                local = groups.len();
            }
            groups.push(s);
        }
        self.lb.groups = groups;
        if root {
            self.set_overutilized(overutilized, dst, now);
        } else if overutilized {
            self.set_overutilized(true, dst, now);
        }
        local
    }

    /// `load_balance()` of `dst` at domain `level`: whether tasks were moved to it.
    fn load_balance(
        &mut self,
        dst: usize,
        level: usize,
        idle: IdleType,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> bool {
        let local_idx = self.update_sd_lb_stats(dst, level, now);
        let outcome = if self.lb.eas && !self.lb.overutilized {
            None
        } else {
            self.find_busiest_group(dst, level, local_idx, idle)
        };
        let Some((busiest, migration, imbalance)) = outcome else {
            // out_balanced.
            let st = &mut self.lb.sd[dst][level];
            st.nr_balance_failed = 0;
            if idle != IdleType::NewlyIdle {
                let max = self.lb.topo.domains[dst][level].max_interval_ms;
                if st.interval_ms < max {
                    st.interval_ms = (st.interval_ms * 2).min(max);
                }
            }
            return false;
        };
        let Some(src) = self.find_busiest_queue(dst, level, busiest, migration, imbalance) else {
            return false;
        };
        let moved = self.detach_attach_tasks(src, dst, level, idle, migration, imbalance, now, q);
        let d = &self.lb.topo.domains[dst][level];
        let (min_interval, cache_nice_tries, pct) =
            (d.min_interval_ms, d.cache_nice_tries, d.imbalance_pct);
        if moved > 0 {
            self.lb.sd[dst][level].nr_balance_failed = 0;
            self.lb.sd[dst][level].interval_ms = min_interval;
            self.lb.stats.lb_migrations += moved;
            return true;
        }
        if idle != IdleType::NewlyIdle {
            self.lb.sd[dst][level].nr_balance_failed += 1;
        }
        let failed = self.lb.sd[dst][level].nr_balance_failed;
        // need_active_balance().
        let single = self.fair.rqs[src].h_nr_running == 1;
        let active = (migration == Migration::Task && failed > cache_nice_tries + 2)
            || (idle != IdleType::NotIdle
                && single
                && self.capacity_of(src) * pct < self.capacity_orig(src) * 100
                && self.capacity_of(src) * pct < self.capacity_of(dst) * 100)
            || migration == Migration::Misfit;
        let running = self.rqs[src].curr.filter(|&c| {
            self.tasks[c].class() == Class::Fair && self.tasks[c].cpus_allowed.contains(dst)
        });
        if active && running.is_some() && self.lb.push_cpu[src].is_none() {
            self.lb.push_cpu[src] = Some(dst);
            self.resched_curr(src);
            self.lb.sd[dst][level].nr_balance_failed = cache_nice_tries + 1;
            self.lb.sd[dst][level].interval_ms = min_interval;
        }
        false
    }

    /// `find_busiest_group()` + `calculate_imbalance()` over `self.lb.groups`: the busiest
    /// group's index, how to migrate and how much.
    fn find_busiest_group(
        &self,
        dst: usize,
        level: usize,
        local_idx: usize,
        idle: IdleType,
    ) -> Option<(usize, Migration, u64)> {
        let sd = &self.lb.topo.domains[dst][level];
        let groups = &self.lb.groups;
        let local = &groups[local_idx];
        let dst_cap = self.capacity_of(dst);
        // update_sd_pick_busiest().
        let mut busiest: Option<usize> = None;
        for (i, s) in groups.iter().enumerate() {
            if i == local_idx || s.h_nr_running == 0 {
                continue;
            }
            if s.kind == GroupType::Misfit
                && (!capacity_greater(dst_cap, s.max_capacity) || local.kind != GroupType::HasSpare)
            {
                continue;
            }
            if sd.asym_cpucapacity
                && s.kind <= GroupType::FullyBusy
                && capacity_greater(s.min_capacity, dst_cap)
            {
                continue;
            }
            let better = match busiest.map(|b| &groups[b]) {
                None => true,
                Some(b) if s.kind != b.kind => s.kind > b.kind,
                Some(b) => match s.kind {
                    GroupType::Overloaded | GroupType::FullyBusy => s.avg_load > b.avg_load,
                    GroupType::Misfit => s.misfit_load > b.misfit_load,
                    GroupType::HasSpare => {
                        s.idle_cpus < b.idle_cpus
                            || (s.idle_cpus == b.idle_cpus && s.nr_running > b.nr_running)
                    }
                },
            };
            if better {
                busiest = Some(i);
            }
        }
        let bi = busiest?;
        let b = &groups[bi];
        if b.kind == GroupType::Misfit {
            return Some((bi, Migration::Misfit, 1));
        }
        if local.kind > b.kind {
            return None;
        }
        let total_load: u64 = groups.iter().map(|g| g.load).sum();
        let total_cap: u64 = groups.iter().map(|g| g.capacity).sum::<u64>().max(1);
        let sds_avg = total_load * u64::from(SCHED_CAPACITY_SCALE) / total_cap;
        if local.kind == GroupType::Overloaded
            && (local.avg_load >= b.avg_load
                || local.avg_load >= sds_avg
                || 100 * b.avg_load <= sd.imbalance_pct * local.avg_load)
        {
            return None;
        }
        // SD_PREFER_SIBLING of the child level: set unless this level is asymmetric.
        let prefer_sibling = level > 0 && !sd.asym_cpucapacity;
        let force = prefer_sibling
            && local.kind == GroupType::HasSpare
            && b.nr_running > local.nr_running + 1;
        if !force && b.kind != GroupType::Overloaded {
            if idle == IdleType::NotIdle {
                return None;
            }
            if b.weight > 1 && local.idle_cpus <= b.idle_cpus + 1 {
                return None;
            }
            if b.h_nr_running == 1 {
                return None;
            }
        }
        // calculate_imbalance().
        if local.kind == GroupType::HasSpare {
            if b.kind > GroupType::FullyBusy && !sd.share_pkg_resources {
                let imb = local.capacity.max(local.util) - local.util;
                if idle != IdleType::NotIdle && imb == 0 {
                    return Some((bi, Migration::Task, 1));
                }
                return Some((bi, Migration::Util, imb)).filter(|x| x.2 > 0);
            }
            let imb = if b.weight == 1 || prefer_sibling {
                b.nr_running.saturating_sub(local.nr_running) >> 1
            } else {
                local.idle_cpus.saturating_sub(b.idle_cpus) >> 1
            };
            return Some((bi, Migration::Task, imb)).filter(|x| x.2 > 0);
        }
        if local.kind < GroupType::Overloaded && local.avg_load >= sds_avg {
            return None;
        }
        let imb = (b.avg_load.saturating_sub(sds_avg) * b.capacity)
            .min(sds_avg.saturating_sub(local.avg_load) * local.capacity)
            / u64::from(SCHED_CAPACITY_SCALE);
        Some((bi, Migration::Load, imb)).filter(|x| x.2 > 0)
    }

    /// `find_busiest_queue()` in the busiest group.
    fn find_busiest_queue(
        &self,
        dst: usize,
        level: usize,
        group: usize,
        migration: Migration,
        imbalance: u64,
    ) -> Option<usize> {
        let sd = &self.lb.topo.domains[dst][level];
        let dst_cap = self.capacity_of(dst);
        let mut best: Option<(u64, u64, usize)> = None;
        for cpu in cpus(CpuSet(self.lb.groups[group].span)) {
            let nr = u64::from(self.fair.rqs[cpu].h_nr_running);
            if nr == 0 || cpu == dst {
                continue;
            }
            let cap = self.capacity_of(cpu);
            if sd.asym_cpucapacity && !capacity_greater(dst_cap, cap) && nr == 1 {
                continue;
            }
            // (value, capacity) compared as value/capacity for load, plainly otherwise.
            let (val, vcap) = match migration {
                Migration::Load => {
                    let load = self.cpu_load(cpu);
                    if nr == 1
                        && load > imbalance
                        && cap * sd.imbalance_pct >= self.capacity_orig(cpu) * 100
                    {
                        continue;
                    }
                    (load, cap)
                }
                Migration::Util => {
                    if nr <= 1 {
                        continue;
                    }
                    (self.cpu_util_cfs(cpu), 1)
                }
                Migration::Task => (nr, 1),
                Migration::Misfit => (self.lb.misfit_task_load[cpu], 1),
            };
            if val == 0 && migration == Migration::Misfit {
                continue;
            }
            if best.map_or(true, |(bv, bc, _)| val * bc > bv * vcap) {
                best = Some((val, vcap, cpu));
            }
        }
        best.map(|(_, _, c)| c)
    }

    /// `detach_tasks()` + `attach_tasks()`: waiting fair tasks of `src` that may run on `dst`,
    /// last in the timeline first, until the imbalance is covered (one task when newly idle).
    #[allow(clippy::too_many_arguments)]
    fn detach_attach_tasks(
        &mut self,
        src: usize,
        dst: usize,
        level: usize,
        idle: IdleType,
        migration: Migration,
        imbalance: u64,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> u64 {
        let mut imbalance = imbalance as i128;
        let mut moved = 0;
        let failed = self.lb.sd[dst][level].nr_balance_failed;
        for _ in 0..32 {
            if self.rqs[src].nr_running <= 1 {
                break;
            }
            let curr = self.rqs[src].curr;
            // detach_tasks() walks the tasks from the tail, entering group queues.
            let accept = |t: TaskId| {
                if Some(t) == curr || !self.tasks[t].cpus_allowed.contains(dst) {
                    return false;
                }
                match migration {
                    Migration::Load => {
                        let load = self.task_load(t).max(1) >> failed.min(63);
                        (load as i128) <= imbalance
                    }
                    Migration::Util => (self.task_util_est(t) as i128) <= imbalance,
                    Migration::Task => true,
                    Migration::Misfit => {
                        let c = self.uclamp_eff_now(t);
                        let c = TaskClamp {
                            min: u64::from(c.0),
                            max: u64::from(c.1),
                        };
                        !self.task_fits_cpu(t, c, src)
                    }
                }
            };
            let pick = self.fair.find_task_rev(src, &accept);
            let Some(t) = pick else { break };
            imbalance -= match migration {
                Migration::Load => self.task_load(t).max(1) as i128,
                Migration::Util => self.task_util_est(t) as i128,
                Migration::Task => 1,
                Migration::Misfit => imbalance,
            };
            self.move_queued_task(t, dst, now, q);
            moved += 1;
            if idle == IdleType::NewlyIdle || imbalance <= 0 {
                break;
            }
        }
        moved
    }

    /// The stopper of an active balance: the task running on `cpu` when it reschedules moves
    /// to the CPU that asked for it (`active_load_balance_cpu_stop`).
    pub(super) fn take_active_balance(&mut self, cpu: usize, t: TaskId) -> Option<usize> {
        let dst = self.lb.push_cpu[cpu].take()?;
        let task = &self.tasks[t];
        if task.class() != Class::Fair || !task.cpus_allowed.contains(dst) {
            return None;
        }
        self.lb.stats.active_migrations += 1;
        Some(dst)
    }
}

/// One CPU as an EAS estimate sees it: its rq signals, its CFS util with the task placed
/// on it, and its effective utilization without the task (frequency and energy flavours).
#[derive(Debug, Clone, Copy, Default)]
struct EasCpu {
    rq: CpuUtil,
    with: u64,
    freq_without: u64,
    energy_without: u64,
}

/// Inputs of `compute_energy()` for one performance domain (`struct energy_env`).
struct EnergyEnv {
    pd: usize,
    cpus: CpuSet,
    cpu_cap: u64,
    pd_cap: u64,
    pd_busy: u64,
    task_busy: u64,
    clamp: TaskClamp,
}

/// `group_classify()`, without the imbalanced (affinity) group type.
fn classify(s: &GroupStats, pct: u64) -> GroupType {
    let busy = s.capacity * 100 < s.util * pct || s.capacity * pct < s.runnable * 100;
    // group_has_capacity(): a spare CPU, or utilization and runnable below the margin.
    let has_capacity = s.nr_running < s.weight
        || (s.capacity * pct >= s.runnable * 100 && s.capacity * 100 > s.util * pct);
    if s.nr_running > s.weight && busy {
        GroupType::Overloaded
    } else if s.misfit_load > 0 {
        GroupType::Misfit
    } else if !has_capacity {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `update_pick_idlest()`: whether `s` is idler than the idlest so far.
fn pick_idlest(idlest: &GroupStats, s: &GroupStats) -> bool {
    if s.kind != idlest.kind {
        return s.kind < idlest.kind;
    }
    match s.kind {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < idlest.avg_load,
        GroupType::Misfit => s.max_capacity > idlest.max_capacity,
        GroupType::HasSpare => {
            s.idle_cpus > idlest.idle_cpus
                || (s.idle_cpus == idlest.idle_cpus && s.util < idlest.util)
        }
    }
}

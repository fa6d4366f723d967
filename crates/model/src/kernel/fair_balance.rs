//! The placement and balancing half of v6.1 `kernel/sched/fair.c`: wakeup placement
//! (`select_task_rq_fair` with `wake_wide`/`wake_affine`, `select_idle_sibling`,
//! `select_idle_capacity`; `find_idlest_cpu` for fork), Energy Aware Scheduling
//! (`find_energy_efficient_cpu`, `compute_energy`), the root domain's overutilized flag,
//! misfit tasks, and load balancing (periodic per domain with `balance_interval`, newly idle,
//! nohz idle through a kick from a busy CPU's tick, active balance of a running task).
//!
//! The balancer keeps the kernel's structure — group statistics per domain, group types, the
//! busiest group and queue, the migration types `migrate_load`/`util`/`task`/`misfit` — and
//! leaves out what docs/model.md lists (runnable_avg in group classification, imbalanced
//! groups from affinity, NUMA imbalance allowances, asym packing).

use super::core::{Event, Kernel};
use super::cpufreq::{effective_cpu_util, uclamp_rq_util_with, CpuUtil, TaskClamp, UtilType};
use super::energy_model::EnergyModel;
use super::sched::{Class, TaskId};
use super::sched_cpufreq::cpu_util;
use super::topology::{SchedDomain, Topology};
use crate::kernel::tracepoint::TraceEvent;
use crate::platform::{Platform, SCHED_CAPACITY_SCALE};
use crate::workload::{CpuSet, Policy};
use schedlab_base::sim::{EventQueue, Time};

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
    /// The group's index in its domain's `groups`.
    group: usize,
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

/// `struct sd_lb_stats`, reduced: the local group's statistics, the busiest other group's,
/// and the domain's sums.
#[derive(Debug, Clone, Copy)]
struct SdStats {
    local: GroupStats,
    busiest: Option<GroupStats>,
    total_load: u64,
    total_capacity: u64,
    total_util: u64,
}

/// `sg_status` of `update_sd_lb_stats()`: a CPU of the domain has two tasks or a misfit one
/// (`SG_OVERLOAD`), or is overutilized (`SG_OVERUTILIZED`).
#[derive(Debug, Clone, Copy, Default)]
struct SgStatus {
    overload: bool,
    overutilized: bool,
}

/// Per CPU and domain: `last_balance`, `balance_interval`, `nr_balance_failed`,
/// `max_newidle_lb_cost` (ns) and `last_decay_max_lb_cost`.
#[derive(Debug, Clone, Copy, Default)]
struct SdState {
    last_balance: u64,
    interval_ms: u64,
    /// `get_sd_balance_interval()` of `interval_ms` in ns, idle and busy: worked out when
    /// the interval changes (`Balance::set_interval`), not at each of its reads (every
    /// newly-idle balance reads one per level).
    interval_ns: [u64; 2],
    nr_balance_failed: u32,
    max_newidle_lb_cost: u64,
    last_decay_max_lb_cost: u64,
}

/// The newly-idle balancing bounds of one rq: `avg_idle`, `idle_stamp`,
/// `max_idle_balance_cost` (ns).
#[derive(Debug, Clone, Copy)]
struct IdleBalance {
    avg_idle: u64,
    idle_stamp: Option<u64>,
    max_idle_balance_cost: u64,
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
    /// Newly-idle balances skipped because `avg_idle` was below the lowest domain's
    /// `max_newidle_lb_cost`, and domain passes newly-idle balancing made.
    pub newidle_skipped: u64,
    pub newidle_passes: u64,
    /// CPUs `select_idle_cpu` examined (SIS_UTIL bounds it per wakeup).
    pub idle_scan_cpus: u64,
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
    /// The root domain's span (every CPU), as `sched_overutilized` prints it.
    root_span: CpuSet,
    /// `sd_llc_shared->nr_idle_scan` per LLC (`Topology::llc_id`); 0 until the LLC's first
    /// periodic balance, as the kernel's zeroed `sched_domain_shared` is.
    nr_idle_scan: Vec<u32>,
    /// `rq->next_balance`.
    next_balance: Vec<u64>,
    sd: Vec<Vec<SdState>>,
    /// `rq->push_cpu` of an active balance under way.
    push_cpu: Vec<Option<usize>>,
    wakee: Vec<Wakee>,
    idle: Vec<IdleBalance>,
    /// `nohz.idle_cpus_mask` and `nohz.next_balance`.
    nohz_idle: CpuSet,
    nohz_next_balance: u64,
    /// `rd->overload`: set when a runqueue reaches two tasks, written at each root-level
    /// balance (a CPU with two tasks or a misfit one).
    pub overload: bool,
    /// Per-CPU samples of the EAS estimate under way.
    eas_cpus: Vec<EasCpu>,
    /// The jiffy in ns, and the longest balance interval in jiffies (`HZ × nr_cpus / 10`,
    /// at least 1): `get_sd_balance_interval()`'s constants, worked out once at boot.
    tick_ns: u64,
    max_interval_jiffies: u64,
    pub stats: BalanceStats,
}

impl Balance {
    /// `build_sched_domains()` and `build_perf_domains()`: EAS needs the energy model (the
    /// platform's and the switch), asymmetric capacities, no SMT, frequency invariance and
    /// schedutil on every policy.
    /// `migration_cost_ns` is `sysctl_sched_migration_cost`, which seeds `avg_idle` (twice
    /// it) and `max_idle_balance_cost` (`sched_init`); `(tick_ns, hz)` the jiffy and HZ.
    pub fn new(
        p: &Platform,
        energy_model: bool,
        freq_invariant: bool,
        schedutil: bool,
        migration_cost_ns: u64,
        (tick_ns, hz): (u64, u64),
    ) -> Self {
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
            .map(|ds| vec![SdState::default(); ds.len()])
            .collect();
        let mut b = Balance {
            em: EnergyModel::new(p),
            eas,
            overutilized: false,
            misfit_task_load: vec![0; n],
            root_span: CpuSet::all(n),
            nr_idle_scan: vec![0; topo.llc_id.iter().max().map_or(1, |m| m + 1)],
            next_balance: vec![0; n],
            sd,
            push_cpu: vec![None; n],
            wakee: Vec::new(),
            idle: vec![
                IdleBalance {
                    avg_idle: 2 * migration_cost_ns,
                    idle_stamp: None,
                    max_idle_balance_cost: migration_cost_ns,
                };
                n
            ],
            overload: false,
            // Every CPU starts idle with its tick stopped, its first balance due at once.
            nohz_idle: CpuSet::all(n),
            nohz_next_balance: 0,
            eas_cpus: vec![EasCpu::default(); n],
            tick_ns,
            max_interval_jiffies: (hz * n as u64 / 10).max(1),
            stats: BalanceStats::default(),
            topo,
        };
        for cpu in 0..n {
            for level in 0..b.topo.domains[cpu].len() {
                b.set_interval(cpu, level, b.topo.domains[cpu][level].min_interval_ms);
            }
        }
        b
    }

    /// `sd->balance_interval` of `cpu`'s domain `level` becomes `ms`, with the intervals
    /// `get_sd_balance_interval()` makes of it in ns: × `busy_factor` when busy, in
    /// jiffies (rounded up), at least one and at most `HZ × nr_cpus / 10`.
    fn set_interval(&mut self, cpu: usize, level: usize, ms: u64) {
        // Already `ms` (a balance that moved tasks at the minimum interval): the same ns.
        // A set interval is at least a tick.
        let st = &self.sd[cpu][level];
        if st.interval_ms == ms && st.interval_ns[0] != 0 {
            return;
        }
        let busy_factor = self.topo.domains[cpu][level].busy_factor;
        let (tick, max) = (self.tick_ns, self.max_interval_jiffies);
        let ns = |ms: u64| (ms * 1_000_000).div_ceil(tick).clamp(1, max) * tick;
        let st = &mut self.sd[cpu][level];
        st.interval_ms = ms;
        st.interval_ns = [ns(ms), ns(ms * busy_factor)];
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
        self.util_overutilizes(cpu, self.cpu_util_cfs(cpu), self.capacity_of(cpu))
    }

    /// `cpu_overutilized()` of `cpu` whose CFS util (`cpu_util_cfs()`) and `capacity_of()`
    /// the caller has.
    #[inline]
    fn util_overutilizes(&self, cpu: usize, util: u64, capacity: u64) -> bool {
        if self.variant.util_fits_cpu {
            let (min, max) = self.rq_clamps(cpu);
            !self.util_fits_cpu(util, min, max, cpu)
        } else {
            !fits_capacity(util, capacity)
        }
    }

    /// Write the root domain's overutilized flag, with its trace event.
    fn set_overutilized(&mut self, value: bool, cpu: usize, now: Time) {
        if value && !self.lb.overutilized {
            self.lb.stats.overutilized_raised += 1;
        }
        self.lb.overutilized = value;
        if self.observer.is_none() {
            return;
        }
        let span = self.lb.root_span;
        self.emit(
            now,
            cpu,
            &TraceEvent::SchedOverutilized {
                overutilized: value,
                span: &span,
            },
        );
    }

    /// `update_overutilized_status()`: at the enqueue of a waking fair task and at the fair
    /// tick, the flag is raised if this CPU is overutilized.
    #[inline]
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
    #[inline]
    pub(super) fn update_misfit_status(&mut self, cpu: usize, curr: Option<TaskId>) {
        if self.lb.topo.asym() {
            self.update_misfit_asym(cpu, curr);
        }
    }

    /// [`Kernel::update_misfit_status`] on an asymmetric system (the test above is inlined
    /// at each switch and tick, this is not).
    #[inline(never)]
    fn update_misfit_asym(&mut self, cpu: usize, curr: Option<TaskId>) {
        self.checks.cpu(cpu);
        let Some(t) = curr.filter(|&t| self.tasks[t].class() == Class::Fair) else {
            if curr.is_none() {
                self.lb.misfit_task_load[cpu] = 0;
            }
            return;
        };
        let single = self.tasks[t].cpus_allowed.weight() <= 1;
        let c = self.task_clamp(t);
        self.lb.misfit_task_load[cpu] = if single || self.task_fits_cpu(t, c, cpu) {
            0
        } else {
            self.task_load(t).max(1)
        };
    }

    /// Invariants of the balancer's state on `cpu` (debug builds): misfit status only on
    /// asymmetric systems and never on an idle CPU; no active balance to the CPU itself.
    #[cfg(debug_assertions)]
    pub(super) fn check_balance_cpu(&self, cpu: usize) {
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

    /// The balancer's invariants on every CPU, and EAS only on asymmetric systems without
    /// SMT.
    #[cfg(debug_assertions)]
    pub(super) fn check_balance_invariants(&self) {
        for cpu in 0..self.rqs.len() {
            self.check_balance_cpu(cpu);
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
        sync: bool,
        now: Time,
    ) -> usize {
        if self.lb.wakee.len() <= t {
            self.lb.wakee.resize(t + 1, Wakee::default());
        }
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
                let want_affine = !self.wake_wide(t, waker, this_cpu)
                    && self.tasks[t].cpus_allowed.contains(this_cpu);
                let mut new_cpu = prev;
                if want_affine && this_cpu != prev {
                    let sd = self.lb.topo.domains[this_cpu]
                        .iter()
                        .position(|d| d.wake_affine && d.span.contains(prev));
                    if let Some(level) = sd {
                        new_cpu = self.wake_affine(level, t, this_cpu, prev, sync);
                    }
                }
                self.select_idle_sibling(t, prev, new_cpu)
            }
        };
        let allowed = &self.tasks[t].cpus_allowed;
        if allowed.contains(cpu) {
            cpu
        } else {
            // select_fallback_rq().
            allowed.first().unwrap_or(prev)
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
        let factor = self.lb.topo.llc[this_cpu].weight();
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    /// `wake_affine()`: WA_IDLE, then WA_WEIGHT (with WA_BIAS); prev_cpu unless this CPU wins.
    /// A sync wake-up (`WF_SYNC`: the waker, current on `this_cpu`, is about to sleep) counts
    /// the waker out: `wake_affine_idle()` takes this CPU when the waker is all it runs, and
    /// `wake_affine_weight()` takes the waker's load off this CPU's (this CPU outright when
    /// the waker carries more than all of it) and breaks a tie toward this CPU.
    fn wake_affine(
        &self,
        level: usize,
        t: TaskId,
        this_cpu: usize,
        prev: usize,
        sync: bool,
    ) -> usize {
        if self.cpu_idle(this_cpu) && self.lb.topo.share_cache(this_cpu, prev) {
            return if self.cpu_idle(prev) { prev } else { this_cpu };
        }
        if sync && self.rqs[this_cpu].nr_running == 1 {
            return this_cpu;
        }
        if self.cpu_idle(prev) {
            return prev;
        }
        let imbalance_pct = self.lb.topo.domains[this_cpu][level].imbalance_pct as i128;
        let mut this_load = self.cpu_load(this_cpu) as i128;
        if let Some(waker) = self.rqs[this_cpu].curr.filter(|_| sync) {
            let current = self.task_load(waker) as i128;
            if current > this_load {
                return this_cpu;
            }
            this_load -= current;
        }
        let task_load = self.task_load(t) as i128;
        let this_eff = (this_load + task_load) * 100 * self.capacity_of(prev) as i128;
        let prev_eff = (self.cpu_load(prev) as i128 - task_load)
            * (100 + (imbalance_pct - 100) / 2)
            * self.capacity_of(this_cpu) as i128
            + i128::from(sync);
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
        // The clamps matter only to the capacity fit of an asymmetric system; unread
        // elsewhere (reading a fair task's changes nothing: the lazy sync is RT's).
        let clamp = self.lb.topo.asym().then(|| self.task_clamp(t));
        let fits = |k: &Kernel, cpu: usize| clamp.map_or(true, |c| k.task_fits_cpu(t, c, cpu));
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
        if let Some(c) = clamp {
            let allowed = *self.tasks[t].cpus_allowed;
            if let Some(level) = self.lb.topo.asym_level[target] {
                let span = self.lb.topo.domains[target][level].span.and(&allowed);
                return self
                    .select_idle_capacity(t, c, &span, target)
                    .unwrap_or(target);
            }
        }
        let allowed = &self.tasks[t].cpus_allowed;
        let llc = &self.lb.topo.llc[target];
        let core_idle = |k: &Kernel, cpu: usize| k.lb.topo.smt[cpu].iter().all(|s| k.cpu_idle(s));
        let has_idle_core = self.lb.topo.smt_active
            && llc
                .iter()
                .any(|c| allowed.contains(c) && core_idle(self, c));
        if self.lb.topo.smt_active && !has_idle_core && self.lb.topo.share_cache(prev, target) {
            // select_idle_smt(): an idle sibling of prev.
            if let Some(s) = self.lb.topo.smt[prev]
                .iter()
                .find(|&s| s != prev && allowed.contains(s) && self.cpu_idle(s))
            {
                return s;
            }
        }
        // select_idle_cpu(): from target + 1, wrapping; a whole idle core first if one exists,
        // else at most SIS_UTIL's nr_idle_scan CPUs.
        let limit = (!has_idle_core && self.variant.features.sis_util)
            .then(|| self.lb.nr_idle_scan[self.lb.topo.llc_id[target]]);
        let candidates = llc.iter_wrap(target + 1).filter(|&c| allowed.contains(c));
        let (found, scanned) = select_idle_cpu(candidates, limit, |cpu| {
            if !self.cpu_idle(cpu) {
                Scan::Busy
            } else if !has_idle_core || core_idle(self, cpu) {
                Scan::Take
            } else {
                Scan::Fallback
            }
        });
        self.lb.stats.idle_scan_cpus += scanned as u64;
        found.unwrap_or(target)
    }

    /// `select_idle_capacity()`: the first idle CPU from `target` on that fits the task, else
    /// the idle CPU with the largest capacity.
    fn select_idle_capacity(
        &self,
        t: TaskId,
        c: TaskClamp,
        cpus: &CpuSet,
        target: usize,
    ) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for cpu in cpus.iter_wrap(target) {
            if !self.cpu_idle(cpu) {
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

    /// `find_idlest_cpu()` from the highest domain of `this_cpu` reached through levels with
    /// SD_BALANCE_FORK (all but NUMA levels beyond `node_reclaim_distance`).
    fn find_idlest_cpu(&mut self, t: TaskId, this_cpu: usize, prev: usize) -> usize {
        let mut cpu = this_cpu;
        let domains = &self.lb.topo.domains[cpu];
        let mut level = match domains
            .iter()
            .position(|d| !d.balance_fork)
            .unwrap_or(domains.len())
        {
            0 => return this_cpu,
            l => l - 1,
        };
        if !self.lb.topo.domains[cpu][level]
            .span
            .intersects(&self.tasks[t].cpus_allowed)
        {
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
                    new_cpu = self.find_idlest_group_cpu(
                        t,
                        &self.lb.topo.domains[cpu][level].groups[g],
                        cpu,
                    );
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
    fn wakeup_group_stats(
        &mut self,
        t: TaskId,
        (this_cpu, level, group): (usize, usize, usize),
        asym: bool,
        pct: u64,
    ) -> GroupStats {
        let mut s = GroupStats {
            group,
            min_capacity: u64::MAX,
            ..GroupStats::default()
        };
        for cpu in self.lb.topo.domains[this_cpu][level].groups[group].iter() {
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
    /// `find_idlest_group()`: the index of the least busy group of the domain, or None to
    /// stay local.
    fn find_idlest_group(&mut self, t: TaskId, this_cpu: usize, level: usize) -> Option<usize> {
        let sd = &self.lb.topo.domains[this_cpu][level];
        let (asym, pct, nr_groups) = (sd.asym_cpucapacity, sd.imbalance_pct, sd.groups.len());
        let mut local: Option<GroupStats> = None;
        let mut idlest: Option<GroupStats> = None;
        for g in 0..nr_groups {
            let span = &self.lb.topo.domains[this_cpu][level].groups[g];
            if !span.intersects(&self.tasks[t].cpus_allowed) {
                continue;
            }
            let local_group = span.contains(this_cpu);
            let s = self.wakeup_group_stats(t, (this_cpu, level, g), asym, pct);
            if local_group {
                local = Some(s);
            } else if idlest.map_or(true, |i| pick_idlest(&i, &s)) {
                idlest = Some(s);
            }
        }
        let idlest = idlest?;
        let Some(local) = local else {
            return Some(idlest.group);
        };
        if local.kind < idlest.kind {
            return None;
        }
        if idlest.kind < local.kind {
            return Some(idlest.group);
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
        (!stay).then_some(idlest.group)
    }

    /// `find_idlest_group_cpu()`: the idle CPU in the shallowest idle state, the most
    /// recently idled among equals, else the least loaded one.
    fn find_idlest_group_cpu(&self, t: TaskId, group: &CpuSet, this_cpu: usize) -> usize {
        if group.weight() == 1 {
            return group.first().unwrap_or(this_cpu);
        }
        let allowed = &self.tasks[t].cpus_allowed;
        let mut idle: Option<((u64, std::cmp::Reverse<u64>), usize)> = None;
        let mut least: Option<(u64, usize)> = None;
        for cpu in group.iter().filter(|&c| allowed.contains(c)) {
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
        let sd_level = level
            + self.lb.topo.domains[this_cpu][level..]
                .iter()
                .position(|d| d.span.contains(prev))?;
        let task_busy = self.task_util_est(t);
        if task_busy == 0 {
            return Some(prev);
        }
        let clamp = self.task_clamp(t);
        self.sample_eas_cpus(t);
        let allowed = &self.tasks[t].cpus_allowed;
        let sd_span = &self.lb.topo.domains[this_cpu][sd_level].span;
        let (mut best_delta, mut prev_delta) = (u64::MAX, u64::MAX);
        let mut best_cpu = prev;
        for pd in 0..self.lb.topo.perf_domains.len() {
            let pd_cpus = &self.lb.topo.perf_domains[pd];
            let Some(first) = pd_cpus.first() else {
                continue;
            };
            let cpu_cap = self.capacity_orig(first);
            let pd_cap = cpu_cap * u64::from(pd_cpus.weight());
            let (mut max_spare, mut max_spare_cpu) = (0u64, None);
            let (mut prev_spare, mut compute_prev) = (0u64, false);
            for cpu in pd_cpus.iter() {
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
            let pd_busy = pd_cpus
                .iter()
                .map(|c| self.lb.eas_cpus[c].energy_without)
                .sum::<u64>()
                .min(pd_cap);
            let env = EnergyEnv {
                pd,
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
        for cpu in self.lb.topo.perf_domains[env.pd].iter() {
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

    /// `get_sd_balance_interval()` in ns (`Balance::set_interval` works it out).
    fn sd_interval(&self, cpu: usize, level: usize, busy: bool) -> u64 {
        self.lb.sd[cpu][level].interval_ns[usize::from(busy)]
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
        let mut max_cost = 0;
        let mut need_decay = false;
        for level in 0..self.lb.topo.domains[cpu].len() {
            // Decay the newidle max times here too (at most once a second per domain).
            need_decay |= self.update_newidle_cost(cpu, level, 0, now);
            max_cost = max_cost.max(self.lb.sd[cpu][level].max_newidle_lb_cost);
            let mut interval = self.sd_interval(cpu, level, busy);
            if now >= self.lb.sd[cpu][level].last_balance + interval {
                if self.load_balance(cpu, level, idle, now, q).0 {
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
        if need_decay {
            self.lb.idle[cpu].max_idle_balance_cost =
                max_cost.max(self.variant.sched_migration_cost_ns);
        }
        self.lb.next_balance[cpu] = next;
    }

    /// `nohz_balancer_kick()` from a busy CPU's tick: the CPU leaves the nohz idle mask;
    /// when idle CPUs' balancing is due (`nohz.next_balance`) and this CPU has waiting tasks,
    /// RT/DL pressure, a misfit task or (symmetric systems) a busy LLC sibling, it kicks one
    /// idle CPU of the mask (`find_new_ilb`), which balances for them all.
    fn nohz_balancer_kick(&mut self, cpu: usize, now: Time, q: &mut EventQueue<Event>) {
        self.lb.nohz_idle.clear(cpu);
        if self.lb.nohz_idle.is_empty() || now < self.lb.nohz_next_balance {
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
                // sds->nr_busy_cpus of the LLC.
                self.lb.topo.llc[cpu]
                    .iter()
                    .filter(|&c| !self.cpu_idle(c))
                    .nth(1)
                    .is_some()
            };
        }
        if !kick {
            return;
        }
        if let Some(ilb) = self.find_new_ilb(Some(cpu)) {
            // The kicked CPU balances for the idle ones (smp_processor_id() is ilb there).
            let kicker = std::mem::replace(&mut self.this_cpu, ilb);
            self.nohz_idle_balance(ilb, now, q);
            self.this_cpu = kicker;
        }
    }

    /// `find_new_ilb()`: the first idle CPU of the nohz mask other than the kicking one.
    pub(super) fn find_new_ilb(&self, kicker: Option<usize>) -> Option<usize> {
        self.lb
            .nohz_idle
            .iter()
            .find(|&c| Some(c) != kicker && self.cpu_idle(c))
    }

    /// `_nohz_idle_balance()` on the kicked CPU `ilb` (at once: the IPI's delay is not
    /// modelled): every other idle CPU of the nohz mask whose balance is due, from ilb + 1
    /// wrapping, then ilb itself, runs `rebalance_domains`; `nohz.next_balance` becomes the
    /// earliest next balance among them.
    fn nohz_idle_balance(&mut self, ilb: usize, now: Time, q: &mut EventQueue<Event>) {
        let mask = self.lb.nohz_idle;
        let mut next = now + 60_000_000_000;
        for c in mask.iter_wrap(ilb + 1).chain(std::iter::once(ilb)) {
            if !self.cpu_idle(c) || (c == ilb && !mask.contains(c)) {
                continue;
            }
            if now >= self.lb.next_balance[c] {
                self.rebalance_domains(c, IdleType::Idle, now, q);
            }
            next = next.min(self.lb.next_balance[c]);
        }
        self.lb.nohz_next_balance = next;
    }

    /// `nohz_balance_enter_idle()`: a CPU that found nothing to pull goes idle with its tick
    /// stopped and joins the nohz idle mask; its next balance bounds `nohz.next_balance`.
    fn nohz_enter_idle(&mut self, cpu: usize) {
        self.lb.nohz_idle.set(cpu);
        self.lb.nohz_next_balance = self.lb.nohz_next_balance.min(self.lb.next_balance[cpu]);
    }

    /// `update_newidle_cost()`: the domain's max cost rises to `cost`, else decays by ~1%
    /// (253/256) once a second has passed since the last rise or decay; true when it decayed.
    fn update_newidle_cost(&mut self, cpu: usize, level: usize, cost: u64, now: Time) -> bool {
        let st = &mut self.lb.sd[cpu][level];
        if cost > st.max_newidle_lb_cost {
            st.max_newidle_lb_cost = cost;
            st.last_decay_max_lb_cost = now + 1_000_000_000;
        } else if now > st.last_decay_max_lb_cost {
            st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
            st.last_decay_max_lb_cost = now;
            return true;
        }
        false
    }

    /// The `ttwu_do_wakeup()` part of `rq->avg_idle`: a task woken onto a CPU whose
    /// newly-idle balance set `idle_stamp` adds the idle period to the average (1/8 weight),
    /// capped at twice `max_idle_balance_cost`.
    pub(super) fn ttwu_avg_idle(&mut self, cpu: usize, now: Time) {
        let ib = &mut self.lb.idle[cpu];
        if let Some(stamp) = ib.idle_stamp.take() {
            let delta = now.saturating_sub(stamp) as i64;
            let avg = ib.avg_idle as i64;
            ib.avg_idle = (avg + (delta - avg) / 8) as u64;
            ib.avg_idle = ib.avg_idle.min(2 * ib.max_idle_balance_cost);
        }
    }

    /// `rq->avg_idle` of a CPU (results and tests).
    pub fn avg_idle(&self, cpu: usize) -> u64 {
        self.lb.idle[cpu].avg_idle
    }

    /// `newidle_balance()` for the fair class (v6.1): the CPU stamps the start of its idle
    /// period; unless the root domain is overloaded and `avg_idle` covers the lowest domain's
    /// `max_newidle_lb_cost`, it does not balance. Otherwise each domain, lowest first, is
    /// balanced while `avg_idle` covers the cost so far plus the domain's max cost, until a
    /// task was pulled; each pass's cost feeds the domain's max. The CPU's next periodic
    /// balance is due at its idle intervals.
    pub(super) fn newidle_balance(
        &mut self,
        cpu: usize,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> bool {
        self.lb.idle[cpu].idle_stamp = Some(now);
        let nr_levels = self.lb.topo.domains[cpu].len();
        let mut next = self.lb.next_balance[cpu];
        let avg_idle = self.lb.idle[cpu].avg_idle;
        let skip = !self.lb.overload
            || (nr_levels > 0 && avg_idle < self.lb.sd[cpu][0].max_newidle_lb_cost);
        if skip {
            if nr_levels > 0 {
                self.lb.stats.newidle_skipped += u64::from(self.lb.overload);
                next = next.min(self.lb.sd[cpu][0].last_balance + self.sd_interval(cpu, 0, false));
            }
            self.lb.next_balance[cpu] = next;
            self.nohz_enter_idle(cpu);
            return false;
        }
        let mut pulled = false;
        let mut curr_cost = 0;
        for level in 0..nr_levels {
            next =
                next.min(self.lb.sd[cpu][level].last_balance + self.sd_interval(cpu, level, false));
            if avg_idle < curr_cost + self.lb.sd[cpu][level].max_newidle_lb_cost {
                break;
            }
            let (moved, examined) = self.load_balance(cpu, level, IdleType::NewlyIdle, now, q);
            let cpus = self.lb.topo.domains[cpu][level].weight as usize;
            let cost = crate::machine::newidle_pass_estimate_ns(cpus, examined);
            self.update_newidle_cost(cpu, level, cost, now);
            self.lb.stats.newidle_passes += 1;
            curr_cost += cost;
            pulled = moved || self.rqs[cpu].nr_running > 0;
            if pulled {
                break;
            }
        }
        let ib = &mut self.lb.idle[cpu];
        ib.max_idle_balance_cost = ib.max_idle_balance_cost.max(curr_cost);
        if pulled {
            ib.idle_stamp = None;
        }
        self.lb.next_balance[cpu] = next;
        if !pulled {
            self.nohz_enter_idle(cpu);
        }
        pulled
    }

    /// `update_sd_lb_stats()`: the statistics of `dst`'s domain at `level`, the busiest
    /// group picked as the groups are summed. The local group comes first, as the kernel's
    /// ring of groups starts at it (picking the busiest reads its type); the others follow
    /// in their order. The root domain's flags are written here.
    fn update_sd_lb_stats(
        &mut self,
        dst: usize,
        level: usize,
        idle: IdleType,
        now: Time,
    ) -> SdStats {
        let sd = &self.lb.topo.domains[dst][level];
        let (asym, root) = (
            sd.asym_cpucapacity,
            level + 1 == self.lb.topo.domains[dst].len(),
        );
        let dst_cap = self.capacity_of(dst);
        let mut status = SgStatus::default();
        let local_g = sd.local_group;
        let local = self.update_sg_lb_stats(sd, local_g, dst, &mut status);
        let mut sds = SdStats {
            local,
            busiest: None,
            total_load: local.load,
            total_capacity: local.capacity,
            total_util: local.util,
        };
        for g in (0..sd.groups.len()).filter(|&g| g != local_g) {
            let s = self.update_sg_lb_stats(sd, g, dst, &mut status);
            sds.total_load += s.load;
            sds.total_capacity += s.capacity;
            sds.total_util += s.util;
            if update_sd_pick_busiest(asym, dst_cap, &sds, &s) {
                sds.busiest = Some(s);
            }
        }
        // update_idle_cpu_scan(): a periodic (not newly idle) balance of the LLC domain sets
        // the LLC's SIS_UTIL scan depth from the utilisation of its groups.
        let llc_weight = self.lb.topo.llc[dst].weight();
        if idle != IdleType::NewlyIdle && sd.weight == llc_weight {
            let nr = nr_idle_scan(sds.total_util, u64::from(llc_weight), sd.imbalance_pct);
            self.lb.nr_idle_scan[self.lb.topo.llc_id[dst]] = nr;
        }
        if root {
            self.lb.overload = status.overload;
            self.set_overutilized(status.overutilized, dst, now);
        } else if status.overutilized {
            self.set_overutilized(true, dst, now);
        }
        sds
    }

    /// `update_sg_lb_stats()` of group `g` of domain `sd` balanced by `dst`; the CPUs'
    /// overload and overutilization go into `status`. Always inlined into its one caller:
    /// out of line, its prologue and the reloading of the per-CPU arrays cost more than the
    /// group's own statistics (periodic16 +4.5 M instructions).
    #[inline(always)]
    fn update_sg_lb_stats(
        &self,
        sd: &SchedDomain,
        g: usize,
        dst: usize,
        status: &mut SgStatus,
    ) -> GroupStats {
        let span = &sd.groups[g];
        let is_local = span.contains(dst);
        let mut s = GroupStats {
            group: g,
            min_capacity: u64::MAX,
            ..GroupStats::default()
        };
        for cpu in span.iter() {
            let (rq, cfs) = (&self.rqs[cpu], &self.fair.rqs[cpu]);
            let util = self.cpu_util_cfs(cpu);
            // cpu_load(), on the cfs_rq already read.
            s.load += cfs.avg.load_avg;
            s.util += util;
            s.runnable += cfs.avg.runnable_avg;
            s.nr_running += u64::from(rq.nr_running);
            s.h_nr_running += u64::from(cfs.h_nr_running);
            if rq.is_idle() {
                s.idle_cpus += 1;
            }
            let cap = self.capacity_of(cpu);
            status.overutilized |= self.util_overutilizes(cpu, util, cap);
            status.overload |= rq.nr_running > 1 || self.lb.misfit_task_load[cpu] > 0;
            s.capacity += cap;
            s.min_capacity = s.min_capacity.min(cap);
            s.max_capacity = s.max_capacity.max(cap);
            s.weight += 1;
            if sd.asym_cpucapacity && !is_local {
                s.misfit_load = s.misfit_load.max(self.lb.misfit_task_load[cpu]);
            }
        }
        s.kind = classify(&s, sd.imbalance_pct);
        // update_sg_lb_stats() computes avg_load for an overloaded group only: a fully-busy
        // group's stays 0, so update_sd_pick_busiest() keeps the first fully-busy group.
        if s.kind == GroupType::Overloaded {
            s.avg_load = s.load * u64::from(SCHED_CAPACITY_SCALE) / s.capacity.max(1);
        }
        s
    }

    /// `load_balance()` of `dst` at domain `level`: whether tasks were moved to it, and how
    /// many tasks `detach_tasks` examined.
    fn load_balance(
        &mut self,
        dst: usize,
        level: usize,
        idle: IdleType,
        now: Time,
        q: &mut EventQueue<Event>,
    ) -> (bool, usize) {
        let sds = self.update_sd_lb_stats(dst, level, idle, now);
        let outcome = if self.lb.eas && !self.lb.overutilized {
            None
        } else {
            self.find_busiest_group(dst, level, &sds, idle)
        };
        let Some((busiest, migration, imbalance)) = outcome else {
            // out_balanced.
            self.lb.sd[dst][level].nr_balance_failed = 0;
            if idle != IdleType::NewlyIdle {
                let max = self.lb.topo.domains[dst][level].max_interval_ms;
                let ms = self.lb.sd[dst][level].interval_ms;
                if ms < max {
                    self.lb.set_interval(dst, level, (ms * 2).min(max));
                }
            }
            return (false, 0);
        };
        let Some(src) = self.find_busiest_queue(dst, level, busiest, migration, imbalance) else {
            return (false, 0);
        };
        let (moved, examined) =
            self.detach_attach_tasks(src, dst, level, idle, migration, imbalance, now, q);
        let d = &self.lb.topo.domains[dst][level];
        let (min_interval, cache_nice_tries, pct) =
            (d.min_interval_ms, d.cache_nice_tries, d.imbalance_pct);
        if moved > 0 {
            self.lb.sd[dst][level].nr_balance_failed = 0;
            self.lb.set_interval(dst, level, min_interval);
            self.lb.stats.lb_migrations += moved;
            return (true, examined);
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
            self.lb.set_interval(dst, level, min_interval);
        }
        (false, examined)
    }

    /// `find_busiest_group()` + `calculate_imbalance()` from the domain's statistics: the
    /// busiest group's index in the domain, how to migrate and how much.
    fn find_busiest_group(
        &self,
        dst: usize,
        level: usize,
        sds: &SdStats,
        idle: IdleType,
    ) -> Option<(usize, Migration, u64)> {
        let sd = &self.lb.topo.domains[dst][level];
        let local = &sds.local;
        let b = sds.busiest.as_ref()?;
        let bi = b.group;
        if b.kind == GroupType::Misfit {
            return Some((bi, Migration::Misfit, 1));
        }
        if local.kind > b.kind {
            return None;
        }
        let sds_avg = sds.total_load * u64::from(SCHED_CAPACITY_SCALE) / sds.total_capacity.max(1);
        if local.kind == GroupType::Overloaded
            && (local.avg_load >= b.avg_load
                || local.avg_load >= sds_avg
                || 100 * b.avg_load <= sd.imbalance_pct * local.avg_load)
        {
            return None;
        }
        // SD_PREFER_SIBLING of the child level (cleared below an asymmetric level and on
        // NUMA levels).
        let prefer_sibling = level > 0 && self.lb.topo.domains[dst][level - 1].prefer_sibling;
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
        // A local group short of overloaded gets its avg_load here, where it will take load.
        let local_avg = if local.kind < GroupType::Overloaded {
            let avg = local.load * u64::from(SCHED_CAPACITY_SCALE) / local.capacity.max(1);
            if avg >= b.avg_load || avg >= sds_avg {
                return None;
            }
            avg
        } else {
            local.avg_load
        };
        let imb = (b.avg_load.saturating_sub(sds_avg) * b.capacity)
            .min(sds_avg.saturating_sub(local_avg) * local.capacity)
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
        for cpu in sd.groups[group].iter() {
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
    ) -> (u64, usize) {
        let mut imbalance = imbalance as i128;
        let mut moved = 0;
        let mut examined = 0;
        let failed = self.lb.sd[dst][level].nr_balance_failed;
        let d = &self.lb.topo.domains[dst][level];
        // can_migrate_task(): a cache-hot task stays until balancing failed more than
        // cache_nice_tries times; SMT siblings share their caches.
        let hot_matters = failed <= d.cache_nice_tries && !d.share_cpucapacity;
        for _ in 0..32 {
            if self.rqs[src].nr_running <= 1 {
                break;
            }
            let curr = self.rqs[src].curr;
            // detach_tasks() walks the tasks from the tail, entering group queues.
            let examined_here = std::cell::Cell::new(0);
            let accept = |t: TaskId| {
                examined_here.set(examined_here.get() + 1);
                if Some(t) == curr || !self.tasks[t].cpus_allowed.contains(dst) {
                    return false;
                }
                if hot_matters && self.task_hot(t, dst, now) {
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
            examined += examined_here.get();
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
        (moved, examined)
    }

    /// `task_hot()`: `t` is a next or last buddy of its queue while `dst` runs something
    /// (CACHE_HOT_BUDDY), or ran less than `sysctl_sched_migration_cost` ago (-1 is not a
    /// value the switch takes; 0 makes no task hot but a buddy) and has not migrated since
    /// (its `exec_start` is then 0: never hot). SCHED_IDLE tasks are never hot.
    fn task_hot(&self, t: TaskId, dst: usize, now: Time) -> bool {
        let task = &self.tasks[t];
        if task.class() != Class::Fair || task.policy == Policy::Idle {
            return false;
        }
        if self.rqs[dst].nr_running > 0 && self.fair.is_next_or_last_buddy(task.se) {
            return true;
        }
        let cost = self.variant.sched_migration_cost_ns;
        cost != 0
            && task
                .last_ran
                .is_some_and(|ran| now.saturating_sub(ran) < cost)
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
    cpu_cap: u64,
    pd_cap: u64,
    pd_busy: u64,
    task_busy: u64,
    clamp: TaskClamp,
}

/// What `select_idle_cpu()` makes of one candidate CPU.
enum Scan {
    Busy,
    /// Idle and what the scan looks for (an idle core's CPU when one exists).
    Take,
    /// Idle, kept in case no idle core turns up.
    Fallback,
}

/// The loop of `select_idle_cpu()` over `cpus` (the LLC and the task's affinity, from
/// target + 1 wrapping): the first CPU `look` takes, else the first fallback. With `limit`
/// (SIS_UTIL without an idle core) at most that many CPUs are examined, none when it is 0.
/// Returns the CPU and how many CPUs were examined. The limit is checked before the next
/// candidate is looked for: a busy LLC's limit of 0 costs no walk of its mask.
fn select_idle_cpu(
    mut cpus: impl Iterator<Item = usize>,
    limit: Option<u32>,
    mut look: impl FnMut(usize) -> Scan,
) -> (Option<usize>, u32) {
    let mut fallback = None;
    let mut scanned = 0;
    while limit.map_or(true, |l| scanned < l) {
        let Some(cpu) = cpus.next() else {
            break;
        };
        scanned += 1;
        match look(cpu) {
            Scan::Take => return (Some(cpu), scanned),
            Scan::Fallback => {
                fallback.get_or_insert(cpu);
            }
            Scan::Busy => {}
        }
    }
    (fallback, scanned)
}

/// `update_idle_cpu_scan()` (v6.1): how many CPUs of an LLC of `llc_weight` CPUs
/// `select_idle_cpu` may scan, given the LLC's summed CFS util. With x = sum_util / weight,
/// y = 1024 - x² · pct² / (10000 · 1024), clamped at 0, and nr = weight · y / 1024: all CPUs
/// when the LLC is idle, none from 100/pct (85% at the LLC's imbalance_pct of 117) on.
pub fn nr_idle_scan(sum_util: u64, llc_weight: u64, imbalance_pct: u64) -> u32 {
    let scale = u64::from(SCHED_CAPACITY_SCALE);
    let x = sum_util / llc_weight.max(1);
    let tmp = (x * x * imbalance_pct * imbalance_pct / (10000 * scale)).min(scale);
    ((scale - tmp) * llc_weight / scale) as u32
}

/// `update_sd_pick_busiest()`: whether group `s` (not the local one) is busier than the
/// busiest so far, for a balance onto a CPU of capacity `dst_cap`.
fn update_sd_pick_busiest(asym: bool, dst_cap: u64, sds: &SdStats, s: &GroupStats) -> bool {
    if s.h_nr_running == 0 {
        return false;
    }
    if s.kind == GroupType::Misfit
        && (!capacity_greater(dst_cap, s.max_capacity) || sds.local.kind != GroupType::HasSpare)
    {
        return false;
    }
    if asym && s.kind <= GroupType::FullyBusy && capacity_greater(s.min_capacity, dst_cap) {
        return false;
    }
    match &sds.busiest {
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
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nr_idle_scan_follows_the_llc_utilisation() {
        // An idle LLC may be scanned whole; at 100/imbalance_pct of its capacity (85% at
        // 117) and above, not at all; in between the quadratic of update_idle_cpu_scan.
        assert_eq!(nr_idle_scan(0, 16, 117), 16);
        let threshold = 16 * 1024 * 100 / 117 + 16;
        assert_eq!(nr_idle_scan(threshold, 16, 117), 0);
        assert_eq!(nr_idle_scan(16 * 1024, 16, 117), 0);
        // Half utilised: y = 1024 - 512² · 117² / (10000 · 1024) = 1024 - 350 = 674.
        assert_eq!(nr_idle_scan(16 * 512, 16, 117), (674 * 16 / 1024) as u32);
        let mut last = u32::MAX;
        for util in (0..=16 * 1024).step_by(512) {
            let nr = nr_idle_scan(util, 16, 117);
            assert!(nr <= last && nr <= 16);
            last = nr;
        }
    }

    #[test]
    fn select_idle_cpu_scans_no_more_than_nr_idle_scan() {
        // Sixteen CPUs of which only the last is idle: a limit stops the scan before it.
        let idle = |c: usize| if c == 15 { Scan::Take } else { Scan::Busy };
        for limit in 0..20u32 {
            let (found, scanned) = select_idle_cpu(0..16, Some(limit), idle);
            assert!(scanned <= limit);
            assert_eq!(found.is_some(), limit >= 16, "limit {limit}");
        }
        // Without the limit (an idle core exists, or SIS_UTIL off) the whole LLC is seen.
        assert_eq!(select_idle_cpu(0..16, None, idle), (Some(15), 16));
        // An idle CPU that is not the idle core sought is the fallback.
        let look = |c: usize| match c {
            3 => Scan::Fallback,
            9 => Scan::Take,
            _ => Scan::Busy,
        };
        assert_eq!(select_idle_cpu(0..16, None, look), (Some(9), 10));
        assert_eq!(select_idle_cpu(0..8, None, look), (Some(3), 8));
    }
}

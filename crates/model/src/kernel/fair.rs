//! The completely fair scheduling class as in v6.1 `kernel/sched/fair.c`: weights and the
//! fixed-point `__calc_delta`, vruntime, the per-CPU timeline ordered by vruntime,
//! `sched_slice`, `place_entity` (START_DEBIT, GENTLE_FAIR_SLEEPERS), wakeup and tick
//! preemption, next/last/skip buddies and min_vruntime.
//!
//! Seed 002's latency nice is here too: the offset table, `wakeup_latency_gran()` in wakeup
//! and tick preemption, `check_preempt_from_others()` and patch 7's latency timeline.
//!
//! Entities live in an arena (`Fair::ses`) and runqueues in `Fair::rqs` (index = CPU for the
//! root cfs_rq of each CPU, then the queues of the task groups), so the group entities and
//! per-group runqueues of CONFIG_FAIR_GROUP_SCHED (`group.rs`) are more of the same rows.
//! The public methods the core calls take a task's entity and its CPU and walk the hierarchy;
//! per queue they apply CFS or, with `variant.fair=eevdf`, EEVDF (`eevdf.rs`).

use super::pelt::{self, Removed, SchedAvg};
use super::touched::Touched;
use super::variant::{FairPolicy, Features, LatencyNice, Variant};

mod eevdf;
mod group;
#[cfg(debug_assertions)]
mod shadow;
mod timeline;

pub use eevdf::{MAX_CUSTOM_SLICE_NS, MIN_CUSTOM_SLICE_NS};
pub use group::FairGroup;
use timeline::{Nodes, Timeline};

pub type SeId = usize;

/// `NICE_0_LOAD` (weights kept unscaled: `scale_load_down` is the identity here).
pub const NICE_0_LOAD: u64 = 1024;
/// `WMULT_CONST`, `WMULT_SHIFT` of `__calc_delta`.
const WMULT_CONST: u64 = 0xffff_ffff;
const WMULT_SHIFT: u32 = 32;
/// Where min_vruntime starts. The kernel compares vruntimes as signed differences so they
/// may wrap; starting far from 0 (the kernel starts just below the wrap, to catch bugs) lets
/// relative vruntimes that are "negative" — a sleeper placed behind min_vruntime, moved to an
/// idle CPU — be renormalised without wrapping, so plain ordering stays valid.
const INITIAL_MIN_VRUNTIME: u64 = 1 << 62;

/// `WEIGHT_IDLEPRIO` / `WMULT_IDLEPRIO`: the weight of SCHED_IDLE tasks.
pub const WEIGHT_IDLEPRIO: u64 = 3;
pub const WMULT_IDLEPRIO: u64 = 1_431_655_765;

/// `sched_prio_to_weight[]` (core.c): nice -20 .. 19, each step ~10% of CPU.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]` (core.c): 2^32 / weight, precomputed.
pub const SCHED_PRIO_TO_WMULT: [u64; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// `sched_latency_to_weight[]` (seed 002, patch 4): latency nice -20 .. 19 to a fraction of
/// `sysctl_sched_latency` in 1/1024ths, linear from -1024 to 973.
pub const SCHED_LATENCY_TO_WEIGHT: [i64; 40] = [
    -1024, -973, -922, -870, -819, -768, -717, -666, -614, -563, -512, -461, -410, -358, -307,
    -256, -205, -154, -102, -51, 0, 51, 102, 154, 205, 256, 307, 358, 410, 461, 512, 563, 614, 666,
    717, 768, 819, 870, 922, 973,
];
/// `NICE_LATENCY_WEIGHT_MAX`.
const NICE_LATENCY_WEIGHT_MAX: i64 = 1024;
pub const MIN_LATENCY_NICE: i32 = -20;
pub const MAX_LATENCY_NICE: i32 = 19;

/// `struct load_weight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadWeight {
    pub weight: u64,
    /// 0 = not computed yet (`__update_inv_weight` computes it lazily, as the kernel does).
    pub inv_weight: u64,
}

impl LoadWeight {
    /// `set_load_weight()` for a nice value, or SCHED_IDLE.
    pub fn for_nice(nice: i32, sched_idle: bool) -> LoadWeight {
        if sched_idle {
            return LoadWeight {
                weight: WEIGHT_IDLEPRIO,
                inv_weight: WMULT_IDLEPRIO,
            };
        }
        let i = (nice.clamp(-20, 19) + 20) as usize;
        LoadWeight {
            weight: SCHED_PRIO_TO_WEIGHT[i],
            inv_weight: SCHED_PRIO_TO_WMULT[i],
        }
    }

    fn add(&mut self, w: u64) {
        self.weight += w;
        self.inv_weight = 0;
    }

    fn sub(&mut self, w: u64) {
        self.weight -= w;
        self.inv_weight = 0;
    }

    /// `__update_inv_weight()`.
    fn inv(&self) -> u64 {
        if self.inv_weight != 0 {
            self.inv_weight
        } else if self.weight >= WMULT_CONST {
            1
        } else {
            WMULT_CONST.checked_div(self.weight).unwrap_or(WMULT_CONST)
        }
    }
}

/// `__calc_delta()`: `delta_exec * weight / lw.weight` in the kernel's 32-bit fixed point.
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let mut fact = weight;
    let mut shift = WMULT_SHIFT;
    let hi = fact >> 32;
    if hi != 0 {
        let fs = 64 - hi.leading_zeros();
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact & 0xffff_ffff) * lw.inv();
    let hi = fact >> 32;
    if hi != 0 {
        let fs = 64 - hi.leading_zeros();
        shift -= fs;
        fact >>= fs;
    }
    ((delta_exec as u128 * fact as u128) >> shift) as u64
}

/// `struct sched_entity` (the parts CFS needs).
#[derive(Debug, Clone, Default)]
pub struct SchedEntity {
    pub load: LoadWeight,
    pub vruntime: u64,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub on_rq: bool,
    /// The cfs_rq this entity is (or last was) queued on.
    pub cfs_rq: usize,
    /// SCHED_IDLE entity (`se_is_idle`).
    pub idle: bool,
    /// The task this entity schedules (`task_of`); meaningless for a group entity.
    pub task: usize,
    /// CONFIG_FAIR_GROUP_SCHED: the queue this group entity owns (`my_q`; None for a task),
    /// and the task group: a task's own, or the one a group entity represents.
    pub my_q: Option<usize>,
    pub tg: usize,
    /// PELT signals of the entity.
    pub avg: SchedAvg,
    /// `latency_offset` (seed 002): ns added to the vruntime difference at preemption checks;
    /// negative for latency-sensitive entities.
    pub latency_offset: i64,
    /// `on_latency`: in its cfs_rq's latency timeline.
    pub on_latency: bool,
    /// EEVDF: virtual deadline of the current request, lag kept over a sleep, the request
    /// size (wall ns) and whether it is a custom one (`sched_runtime`, v6.12).
    pub deadline: u64,
    pub vlag: i64,
    pub slice: u64,
    pub custom_slice: bool,
    /// EEVDF: a new task, placed with half a request (PLACE_DEADLINE_INITIAL).
    eevdf_initial: bool,
    /// EEVDF: went to sleep not eligible, so v6.12 would have kept it queued
    /// (DELAY_DEQUEUE) at this vruntime until it became eligible.
    delayed: bool,
    /// EEVDF RUN_TO_PARITY: picked and not yet past its deadline (the kernel marks it by
    /// `vlag == deadline`).
    protect: bool,
}

/// `struct cfs_rq`.
#[derive(Debug, Clone, Default)]
pub struct CfsRq {
    /// The CPU (whose root cfs_rq has index `cpu`) and the task group of this queue.
    pub cpu: usize,
    pub tg: usize,
    pub load: LoadWeight,
    pub nr_running: u32,
    /// Tasks below this cfs_rq (equal to nr_running without group scheduling).
    pub h_nr_running: u32,
    pub idle_h_nr_running: u32,
    pub min_vruntime: u64,
    /// The timeline: entities waiting to run, ordered by (vruntime, insertion). The running
    /// entity (`curr`) is not in it, as in the kernel. Under EEVDF its nodes carry (deadline,
    /// insertion) as the augmented key, the kernel's `min_deadline`.
    timeline: Timeline,
    /// The latency timeline of patch 7: waiting entities with a negative latency offset that
    /// qualified at insertion, ordered by (vruntime + latency_offset, insertion).
    latency_timeline: Timeline,
    /// EEVDF: `avg_vruntime` / `avg_load`: the sums of key × weight and weight over the
    /// waiting entities.
    avg_vruntime: i128,
    avg_load: u64,
    /// EEVDF: the running entity's request ended with others waiting (`resched_curr` from
    /// `update_deadline`), not yet acted on.
    eevdf_resched: bool,
    pub curr: Option<SeId>,
    pub next: Option<SeId>,
    pub last: Option<SeId>,
    pub skip: Option<SeId>,
    /// PELT signals of the queue (util_est.enqueued: the sum over its enqueued tasks).
    pub avg: SchedAvg,
    /// Load of tasks that left while the queue was not updated (`cfs_rq->removed`).
    pub removed: Removed,
    /// `cfs_rq_clock_pelt()`: the rq's PELT clock, set by the core at each clock update.
    pub clock_pelt: u64,
    /// `cfs_rq_util_change()` happened since the core last looked: schedutil must hear of it.
    pub util_changed: bool,
}

impl CfsRq {
    /// `__pick_first_entity()`.
    pub fn first(&self) -> Option<SeId> {
        self.timeline.first()
    }

    /// The next (0), last (1) or skip (2) buddy.
    fn buddy_mut(&mut self, which: usize) -> &mut Option<SeId> {
        match which {
            0 => &mut self.next,
            1 => &mut self.last,
            _ => &mut self.skip,
        }
    }

    /// Entities waiting in the timeline, leftmost first (`nodes`: `Fair::tl_nodes`).
    pub fn queued<'a>(&'a self, nodes: &'a Nodes) -> impl DoubleEndedIterator<Item = SeId> + 'a {
        self.timeline.iter(nodes)
    }
}

/// `ENQUEUE_*` / `DEQUEUE_*` flags that CFS looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueFlags {
    /// ENQUEUE_WAKEUP / DEQUEUE_SLEEP.
    pub wakeup: bool,
    /// ENQUEUE_MIGRATED: the task changed CPU while sleeping.
    pub migrated: bool,
    /// The task is being moved between runqueues while queued (`task_on_rq_migrating`):
    /// its PELT signals are detached from the old queue at dequeue.
    pub migrating: bool,
}

/// What `update_load_avg()` does besides aging (its flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadAvgAction {
    Update,
    /// DO_ATTACH: attach a new or migrated entity.
    Attach,
    /// DO_DETACH: detach an entity leaving the queue while queued.
    Detach,
}

/// The scaled CFS tunables (`update_sysctl()`).
#[derive(Debug, Clone, Copy)]
pub struct Tunables {
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    pub idle_min_granularity: u64,
    /// `sched_nr_latency`: latency / min_granularity.
    pub nr_latency: u64,
}

impl Tunables {
    pub fn new(v: &Variant, nr_cpus: usize) -> Tunables {
        let f = v.tunable_factor(nr_cpus);
        let latency = v.sched_latency_ns * f;
        let min_granularity = v.sched_min_granularity_ns * f;
        Tunables {
            latency,
            min_granularity,
            wakeup_granularity: v.sched_wakeup_granularity_ns * f,
            idle_min_granularity: v.sched_idle_min_granularity_ns,
            nr_latency: (latency / min_granularity).max(1),
        }
    }
}

/// What `check_preempt_wakeup` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preempt {
    No,
    Yes,
}

/// The state of the fair class over all CPUs.
pub struct Fair {
    pub ses: Vec<SchedEntity>,
    pub rqs: Vec<CfsRq>,
    pub tun: Tunables,
    pub feat: Features,
    /// sched features UTIL_EST / UTIL_EST_FASTUP.
    util_est: bool,
    util_est_fastup: bool,
    free_ses: Vec<SeId>,
    /// `ses[id].task` in a dense array (`u32::MAX` for a group's entity): the host finds
    /// the task a queued entity schedules without reading the entity itself
    /// ([`Fair::prefetch_next`]).
    task_of: Vec<u32>,
    /// The nodes of the timelines and of the latency timelines, one per entity.
    tl_nodes: Nodes,
    lat_nodes: Nodes,
    tree_seq: u64,
    /// `variant.latency_nice` and its fixes.
    latency_nice: LatencyNice,
    gentle_offset: bool,
    sleeper_credit: bool,
    /// `variant.fair`, and TICK_NSEC (EEVDF's lag limit).
    policy: FairPolicy,
    tick_ns: u64,
    /// CONFIG_FAIR_GROUP_SCHED's task groups, indexed like the cgroups (0: the root).
    tgs: Vec<FairGroup>,
    group_sched: bool,
    /// The entities and queues changed since the last debug check ([`Fair::check_touched`]),
    /// and the recount of the queues' counters it keeps (`shadow.rs`).
    touched_ses: Touched,
    touched_rqs: Touched,
    #[cfg(debug_assertions)]
    shadow: shadow::Shadow,
}

impl Fair {
    pub fn new(nr_cpus: usize, v: &Variant) -> Fair {
        let rqs = (0..nr_cpus)
            .map(|cpu| CfsRq {
                cpu,
                min_vruntime: INITIAL_MIN_VRUNTIME,
                ..CfsRq::default()
            })
            .collect();
        Fair {
            ses: Vec::new(),
            rqs,
            tun: Tunables::new(v, nr_cpus),
            feat: v.features.clone(),
            util_est: v.features.util_est,
            util_est_fastup: v.features.util_est_fastup,
            free_ses: Vec::new(),
            task_of: Vec::new(),
            // EEVDF's pick needs the subtree minima of the deadline; CFS's tree has none.
            tl_nodes: if v.fair == FairPolicy::Eevdf {
                Nodes::augmented()
            } else {
                Nodes::default()
            },
            lat_nodes: Nodes::default(),
            tree_seq: 0,
            latency_nice: v.latency_nice,
            gentle_offset: v.latency_nice_gentle_offset,
            sleeper_credit: v.latency_nice_sleeper_credit,
            policy: v.fair,
            tick_ns: v.tick_ns(),
            tgs: vec![FairGroup::root(nr_cpus)],
            group_sched: v.fair_group_sched,
            touched_ses: Touched::default(),
            touched_rqs: Touched::default(),
            #[cfg(debug_assertions)]
            shadow: shadow::Shadow::default(),
        }
    }

    /// A new entity (reusing the slot of an exited task's), with `init_entity_runnable_average`.
    pub fn alloc_se(&mut self, load: LoadWeight, idle: bool, cfs_rq: usize, task: usize) -> SeId {
        let mut se = SchedEntity {
            load,
            idle,
            cfs_rq,
            task,
            slice: self.base_slice(),
            ..SchedEntity::default()
        };
        pelt::init_entity_runnable_average(&mut se.avg, load.weight);
        let task_of = u32::try_from(task).unwrap_or(u32::MAX);
        match self.free_ses.pop() {
            Some(id) => {
                self.ses[id] = se;
                self.task_of[id] = task_of;
                id
            }
            None => {
                self.ses.push(se);
                self.task_of.push(task_of);
                let id = self.ses.len() - 1;
                self.tl_nodes.ensure(id);
                self.lat_nodes.ensure(id);
                id
            }
        }
    }

    pub fn free_se(&mut self, se: SeId) {
        debug_assert!(!self.ses[se].on_rq);
        self.free_ses.push(se);
    }

    /// Entities waiting in queue `cfs`'s timeline, leftmost first.
    pub fn queued(&self, cfs: usize) -> impl DoubleEndedIterator<Item = SeId> + '_ {
        self.rqs[cfs].queued(&self.tl_nodes)
    }

    /// Entity `se` and queue `cfs` changed: the debug checks look at them after the event.
    #[inline]
    fn touch(&mut self, cfs: usize, se: SeId) {
        self.touched_rqs.mark(cfs);
        self.touched_ses.mark(se);
    }

    /// `__enqueue_entity()`.
    fn tree_insert(&mut self, cfs: usize, se: SeId) {
        self.touch(cfs, se);
        self.tree_seq += 1;
        let key = (self.ses[se].vruntime, self.tree_seq);
        let dkey = (self.ses[se].deadline, self.tree_seq);
        self.rqs[cfs]
            .timeline
            .insert(&mut self.tl_nodes, se, key, dkey);
        if self.policy == FairPolicy::Eevdf {
            self.avg_vruntime_add(cfs, se, true);
        }
    }

    /// `avg_vruntime_add()` / `avg_vruntime_sub()`.
    fn avg_vruntime_add(&mut self, cfs: usize, se: SeId, add: bool) {
        let w = self.ses[se].load.weight;
        let key = self.ses[se]
            .vruntime
            .wrapping_sub(self.rqs[cfs].min_vruntime) as i64;
        let rq = &mut self.rqs[cfs];
        let kw = i128::from(key) * i128::from(w);
        if add {
            rq.avg_vruntime += kw;
            rq.avg_load += w;
        } else {
            rq.avg_vruntime -= kw;
            rq.avg_load -= w;
        }
    }

    /// `__dequeue_entity()`.
    fn tree_remove(&mut self, cfs: usize, se: SeId) {
        debug_assert_eq!(
            Timeline::key_of(&self.tl_nodes, se).0,
            self.ses[se].vruntime,
            "entity's vruntime changed in the timeline"
        );
        self.touch(cfs, se);
        self.rqs[cfs].timeline.remove(&mut self.tl_nodes, se);
        if self.policy == FairPolicy::Eevdf {
            self.avg_vruntime_add(cfs, se, false);
        }
    }

    /// `calc_delta_fair()`: wall time to virtual time for `se`.
    pub fn calc_delta_fair(&self, delta: u64, se: SeId) -> u64 {
        let lw = &self.ses[se].load;
        if lw.weight != NICE_0_LOAD {
            calc_delta(delta, NICE_0_LOAD, lw)
        } else {
            delta
        }
    }

    /// `__sched_period()`.
    fn sched_period(&self, nr_running: u64) -> u64 {
        if nr_running > self.tun.nr_latency {
            nr_running * self.tun.min_granularity
        } else {
            self.tun.latency
        }
    }

    /// `sched_slice()`: the wall-time slice of `se` in one period of its cfs_rq.
    /// Under ALT_PERIOD the period counts every task of the CPU (`rq->cfs.h_nr_running`),
    /// and the slice is the entity's part of it at each level of its hierarchy.
    pub fn sched_slice(&self, cfs: usize, se: SeId) -> u64 {
        let rq = &self.rqs[cfs];
        let e = &self.ses[se];
        let nr = if self.feat.alt_period {
            self.rqs[rq.cpu].h_nr_running
        } else {
            rq.nr_running
        } as u64;
        let mut slice = self.sched_period(nr + u64::from(!e.on_rq));
        let (mut level, mut cur) = (cfs, Some(se));
        while let Some(s) = cur {
            let q = &self.ses[s];
            let mut load = self.rqs[level].load;
            if !q.on_rq {
                load.add(q.load.weight);
            }
            slice = calc_delta(slice, q.load.weight, &load);
            cur = self.parent_se(s);
            if let Some(p) = cur {
                level = self.ses[p].cfs_rq;
            }
        }
        if self.feat.base_slice {
            let min_gran = if e.idle && rq.idle_h_nr_running != rq.h_nr_running {
                self.tun.idle_min_granularity
            } else {
                self.tun.min_granularity
            };
            slice = slice.max(min_gran);
        }
        slice
    }

    /// `sched_vslice()`.
    fn sched_vslice(&self, cfs: usize, se: SeId) -> u64 {
        self.calc_delta_fair(self.sched_slice(cfs, se), se)
    }

    /// `update_min_vruntime()`.
    fn update_min_vruntime(&mut self, cfs: usize) {
        let rq = &self.rqs[cfs];
        let curr = rq.curr.filter(|&c| self.ses[c].on_rq);
        let mut vruntime = rq.min_vruntime;
        if let Some(c) = curr {
            vruntime = self.ses[c].vruntime;
        }
        if let Some(l) = rq.first() {
            let lv = self.ses[l].vruntime;
            vruntime = if curr.is_some() { vruntime.min(lv) } else { lv };
        }
        self.touched_rqs.mark(cfs);
        let rq = &mut self.rqs[cfs];
        let old = rq.min_vruntime;
        rq.min_vruntime = rq.min_vruntime.max(vruntime);
        // The keys of the waiting entities shrink by the advance (`update_min_vruntime()`'s
        // `avg_vruntime_update()`).
        rq.avg_vruntime -= i128::from(rq.avg_load) * i128::from(rq.min_vruntime - old);
    }

    /// `update_curr()`: charge the running entity for the time since `exec_start`. Returns
    /// the wall time charged. The test is inlined: most calls find no running entity or no
    /// time passed (676 k of 1.04 M on periodic1000), the charge is not.
    #[inline]
    fn update_curr_cfs(&mut self, cfs: usize, now: u64) -> u64 {
        match self.rqs[cfs].curr {
            Some(curr) if now > self.ses[curr].exec_start => self.charge_curr(cfs, curr, now),
            _ => 0,
        }
    }

    #[inline(never)]
    fn charge_curr(&mut self, cfs: usize, curr: SeId, now: u64) -> u64 {
        let e = &mut self.ses[curr];
        let delta = now - e.exec_start;
        e.exec_start = now;
        e.sum_exec_runtime += delta;
        let dv = self.calc_delta_fair(delta, curr);
        self.ses[curr].vruntime += dv;
        if self.policy == FairPolicy::Eevdf {
            self.update_deadline(cfs, curr);
        }
        self.update_min_vruntime(cfs);
        delta
    }

    /// `update_load_avg()`: age the entity (if attached) and the queue, then attach or detach
    /// as asked. A change of the queue's signals flags `util_changed` (`cfs_rq_util_change`).
    ///
    /// PELT stays flat under CONFIG_FAIR_GROUP_SCHED: a task's signals attach to its CPU's
    /// root cfs_rq whatever its group, and group entities carry none, so the root signals
    /// (the sum over the CPU's tasks, what schedutil reads) are those without groups.
    fn update_load_avg(&mut self, cfs: usize, se: SeId, action: LoadAvgAction) {
        if self.ses[se].my_q.is_some() {
            return;
        }
        let running = self.rqs[cfs].curr == Some(se);
        let root = self.rqs[cfs].cpu;
        let rq = &mut self.rqs[root];
        let e = &mut self.ses[se];
        let now = rq.clock_pelt;
        if e.avg.last_update_time != 0 {
            pelt::update_se(&mut e.avg, now, e.load.weight, running, e.on_rq, 1);
        }
        let mut decayed = pelt::apply_removed(&mut rq.avg, &mut rq.removed);
        decayed |= pelt::update_cfs_rq(
            &mut rq.avg,
            now,
            rq.load.weight,
            rq.h_nr_running,
            rq.curr.is_some(),
        );
        if e.avg.last_update_time == 0 && action == LoadAvgAction::Attach {
            pelt::attach(&mut rq.avg, &mut e.avg, e.load.weight);
            rq.util_changed = true;
        } else if action == LoadAvgAction::Detach {
            pelt::detach(&mut rq.avg, &e.avg, e.load.weight);
            e.avg.last_update_time = 0;
            rq.util_changed = true;
        } else if decayed {
            rq.util_changed = true;
        }
    }

    /// `update_blocked_averages()` for this queue (no group hierarchy): age the queue's
    /// signals; returns whether they decayed.
    pub fn update_blocked(&mut self, cfs: usize) -> bool {
        let rq = &mut self.rqs[cfs];
        let mut decayed = pelt::apply_removed(&mut rq.avg, &mut rq.removed);
        decayed |= pelt::update_cfs_rq(
            &mut rq.avg,
            rq.clock_pelt,
            rq.load.weight,
            rq.h_nr_running,
            rq.curr.is_some(),
        );
        decayed
    }

    /// `cpu_util_cfs()`.
    pub fn cpu_util_cfs(&self, cfs: usize, capacity_orig: u64) -> u64 {
        let a = &self.rqs[cfs].avg;
        pelt::cpu_util_cfs(
            a.util_avg,
            a.util_est.enqueued,
            capacity_orig,
            self.util_est,
        )
    }

    /// `util_est_enqueue()` at the start of `enqueue_task_fair`.
    pub fn util_est_enqueue(&mut self, cfs: usize, se: SeId) {
        pelt::util_est_enqueue(&mut self.rqs[cfs].avg, &self.ses[se].avg, self.util_est);
    }

    /// `util_est_dequeue()` at the start of `dequeue_task_fair`.
    pub fn util_est_dequeue(&mut self, cfs: usize, se: SeId) {
        pelt::util_est_dequeue(&mut self.rqs[cfs].avg, &self.ses[se].avg, self.util_est);
    }

    /// `util_est_update()` at the end of `dequeue_task_fair`.
    pub fn util_est_update(&mut self, se: SeId, task_sleep: bool, capacity_orig: u64) {
        let (ue, fastup) = (self.util_est, self.util_est_fastup);
        pelt::util_est_update(&mut self.ses[se].avg, task_sleep, capacity_orig, ue, fastup);
    }

    /// `post_init_entity_util_avg()` of a new task about to be enqueued on `cfs`.
    pub fn post_init_entity_util_avg(&mut self, cfs: usize, se: SeId, capacity_orig: u64) {
        let e = &mut self.ses[se];
        pelt::post_init_entity_util_avg(
            &mut e.avg,
            &self.rqs[cfs].avg,
            e.load.weight,
            capacity_orig,
        );
    }

    /// `migrate_task_rq_fair()` for a task woken on another CPU: its load leaves the old
    /// queue at that queue's next update, its signals are aged by the old CPU's idle time
    /// (`migrate_se_pelt_lag`), and it attaches to the new queue at enqueue.
    pub fn migrate_task_pelt(
        &mut self,
        se: SeId,
        src_clock: &pelt::PeltClock,
        src_idle: bool,
        now: u64,
    ) {
        let cfs = self.rqs[self.ses[se].cfs_rq].cpu;
        let rq = &mut self.rqs[cfs];
        let e = &mut self.ses[se];
        let last = rq.avg.last_update_time;
        pelt::remove_entity_load_avg(&mut rq.removed, &mut e.avg, e.load.weight, last);
        pelt::migrate_se_pelt_lag(&mut e.avg, e.load.weight, src_clock, last, now, src_idle);
        e.avg.last_update_time = 0;
    }

    /// `task_dead_fair()`: an exited task's load leaves its queue at the queue's next update.
    pub fn task_dead(&mut self, se: SeId) {
        let cfs = self.rqs[self.ses[se].cfs_rq].cpu;
        let rq = &mut self.rqs[cfs];
        let e = &mut self.ses[se];
        let last = rq.avg.last_update_time;
        pelt::remove_entity_load_avg(&mut rq.removed, &mut e.avg, e.load.weight, last);
    }

    /// Whether schedutil must hear of a change of this queue's signals; clears the flag.
    pub fn take_util_change(&mut self, cfs: usize) -> bool {
        std::mem::take(&mut self.rqs[cfs].util_changed)
    }

    /// `account_entity_enqueue()`, and the task counts of the queue a task entity joins (the
    /// queues above count it as its group entities go: `enqueue_task_fair()`).
    fn account_enqueue(&mut self, cfs: usize, se: SeId) {
        self.touch(cfs, se);
        let (w, idle, task) = (
            self.ses[se].load.weight,
            self.ses[se].idle,
            self.ses[se].my_q.is_none(),
        );
        let rq = &mut self.rqs[cfs];
        rq.load.add(w);
        rq.nr_running += 1;
        if task {
            rq.h_nr_running += 1;
            rq.idle_h_nr_running += u32::from(idle);
        }
    }

    fn account_dequeue(&mut self, cfs: usize, se: SeId) {
        self.touch(cfs, se);
        let (w, idle, task) = (
            self.ses[se].load.weight,
            self.ses[se].idle,
            self.ses[se].my_q.is_none(),
        );
        let rq = &mut self.rqs[cfs];
        rq.load.sub(w);
        rq.nr_running -= 1;
        if task {
            rq.h_nr_running -= 1;
            rq.idle_h_nr_running -= u32::from(idle);
        }
    }

    /// `place_entity()`.
    pub fn place_entity(&mut self, cfs: usize, se: SeId, initial: bool) {
        let mut vruntime = self.rqs[cfs].min_vruntime;
        if initial && self.feat.start_debit {
            vruntime += self.sched_vslice(cfs, se);
        }
        if !initial {
            vruntime = vruntime.saturating_sub(self.sleeper_thresh(self.ses[se].idle));
        }
        // Never gain time by being placed backwards.
        let e = &mut self.ses[se];
        e.vruntime = e.vruntime.max(vruntime);
    }

    /// `enqueue_entity()`. A non-wakeup enqueue (or a migrated wakeup) carries a vruntime
    /// relative to its old queue's min_vruntime, which is renormalised here.
    fn enqueue_se(&mut self, cfs: usize, se: SeId, flags: QueueFlags, now: u64) {
        let renorm = !flags.wakeup || flags.migrated;
        let is_curr = self.rqs[cfs].curr == Some(se);
        // Relative vruntimes may be "negative" (behind min_vruntime): u64 wrapping
        // arithmetic, as the kernel's.
        let min = self.rqs[cfs].min_vruntime;
        if renorm && is_curr {
            self.ses[se].vruntime = self.ses[se].vruntime.wrapping_add(min);
        }
        self.update_curr_cfs(cfs, now);
        if renorm && !is_curr {
            let min = self.rqs[cfs].min_vruntime;
            self.ses[se].vruntime = self.ses[se].vruntime.wrapping_add(min);
        }
        self.ses[se].cfs_rq = cfs;
        let eevdf = self.policy == FairPolicy::Eevdf;
        if eevdf && !is_curr {
            // v6.6 places every enqueue, by lag.
            self.place_entity_eevdf(cfs, se, flags.wakeup && !flags.migrated);
        }
        self.update_load_avg(cfs, se, LoadAvgAction::Attach);
        self.update_cfs_group(se, now);
        self.account_enqueue(cfs, se);
        if flags.wakeup && !eevdf {
            self.place_entity(cfs, se, false);
        }
        if !is_curr {
            self.tree_insert(cfs, se);
            self.enqueue_latency(cfs, se, flags.wakeup);
        }
        self.ses[se].on_rq = true;
    }

    /// `clear_buddies()`: each buddy pointing at `se` is cleared, and at the levels above
    /// while it points at `se`'s ancestors (`__clear_buddies_next()` etc.). The test is
    /// inlined at each dequeue and pick, most of which find no buddy of `se`; the clearing
    /// is not.
    #[inline]
    fn clear_buddies(&mut self, cfs: usize, se: SeId) {
        let rq = &self.rqs[cfs];
        if rq.next == Some(se) || rq.last == Some(se) || rq.skip == Some(se) {
            self.clear_buddies_up(cfs, se);
        }
    }

    /// `se` is the next or the last buddy of its queue (`task_hot()`'s CACHE_HOT_BUDDY).
    pub fn is_next_or_last_buddy(&self, se: SeId) -> bool {
        let rq = &self.rqs[self.ses[se].cfs_rq];
        rq.next == Some(se) || rq.last == Some(se)
    }

    /// [`Fair::clear_buddies`] of an entity some buddy of its queue points at.
    #[inline(never)]
    fn clear_buddies_up(&mut self, cfs: usize, se: SeId) {
        for which in 0..3 {
            let (mut cfs, mut se) = (cfs, se);
            loop {
                let b = self.rqs[cfs].buddy_mut(which);
                if *b != Some(se) {
                    break;
                }
                *b = None;
                match self.parent_se(se) {
                    Some(p) => (cfs, se) = (self.ses[p].cfs_rq, p),
                    None => break,
                }
            }
        }
    }

    /// `set_next_buddy()` / `set_last_buddy()` / `set_skip_buddy()` (0, 1, 2): `se` and its
    /// ancestors become that buddy of their queues (not for SCHED_IDLE entities).
    fn set_buddy(&mut self, which: usize, se: SeId) {
        let mut se = Some(se);
        while let Some(e) = se {
            if which < 2 && self.ses[e].idle {
                return;
            }
            let cfs = self.ses[e].cfs_rq;
            *self.rqs[cfs].buddy_mut(which) = Some(e);
            se = self.parent_se(e);
        }
    }

    /// `dequeue_entity()`. A dequeue that is not a sleep leaves the vruntime relative to
    /// this queue's min_vruntime, ready for another queue.
    fn dequeue_se(&mut self, cfs: usize, se: SeId, flags: QueueFlags, now: u64) {
        self.update_curr_cfs(cfs, now);
        let action = if flags.migrating {
            LoadAvgAction::Detach
        } else {
            LoadAvgAction::Update
        };
        self.update_load_avg(cfs, se, action);
        self.clear_buddies(cfs, se);
        if self.policy == FairPolicy::Eevdf {
            self.update_entity_lag(cfs, se);
            self.ses[se].delayed = flags.wakeup && self.ses[se].vlag < 0;
        }
        if self.rqs[cfs].curr != Some(se) {
            self.tree_remove(cfs, se);
            self.dequeue_latency(cfs, se);
        }
        self.ses[se].on_rq = false;
        self.account_dequeue(cfs, se);
        self.update_cfs_group(se, now);
        if !flags.wakeup {
            let min = self.rqs[cfs].min_vruntime;
            let e = &mut self.ses[se];
            e.vruntime = e.vruntime.wrapping_sub(min);
        }
        self.update_min_vruntime(cfs);
    }

    /// How far behind min_vruntime a sleeper is placed (`get_sched_latency()` of the
    /// sleeper-credit fix): the latency, or the min granularity for SCHED_IDLE, halved under
    /// GENTLE_FAIR_SLEEPERS.
    fn sleeper_thresh(&self, idle: bool) -> u64 {
        let thresh = if idle {
            self.tun.min_granularity
        } else {
            self.tun.latency
        };
        if self.feat.gentle_fair_sleepers {
            thresh >> 1
        } else {
            thresh
        }
    }

    /// The period latency offsets are fractions of: the scaled `sysctl_sched_latency`, halved
    /// under GENTLE_FAIR_SLEEPERS with the gentle-offset fix (so a latency-nice task cannot
    /// preempt further than sleepers are placed).
    fn latency_period(&self) -> i64 {
        let period = self.tun.latency as i64;
        if self.gentle_offset && self.feat.gentle_fair_sleepers {
            period >> 1
        } else {
            period
        }
    }

    /// `set_latency_offset()` / `cpu_latency_nice_write_s64()`: the offset of a latency nice
    /// value, from the latency as it is now (not recomputed if the sysctl changes later).
    /// Zero without the latency-nice series.
    pub fn latency_offset(&self, latency_nice: i32) -> i64 {
        if self.latency_nice == LatencyNice::Off {
            return 0;
        }
        let idx = (latency_nice.clamp(MIN_LATENCY_NICE, MAX_LATENCY_NICE) + 20) as usize;
        // div_s64() truncates toward zero, as Rust's `/` does.
        self.latency_period() * SCHED_LATENCY_TO_WEIGHT[idx] / NICE_LATENCY_WEIGHT_MAX
    }

    /// `cpu_latency_nice_read_s64()` with Dietmar's fix: the latency nice whose table weight
    /// is closest to `offset` as a fraction of the same period the write used.
    pub fn latency_nice_of_offset(&self, offset: i64) -> i32 {
        let weight = offset * NICE_LATENCY_WEIGHT_MAX / self.latency_period().max(1);
        let mut last_delta = i64::MAX;
        let mut prio = 0;
        while prio < SCHED_LATENCY_TO_WEIGHT.len() {
            let delta = (SCHED_LATENCY_TO_WEIGHT[prio] - weight).abs();
            if delta >= last_delta {
                break;
            }
            last_delta = delta;
            prio += 1;
        }
        prio as i32 - 1 - 20
    }

    /// Set the latency offset of a dequeued entity (`__setscheduler_latency()` runs between
    /// the dequeue and the enqueue of `__sched_setscheduler()`).
    pub fn set_latency_offset(&mut self, se: SeId, offset: i64) {
        let e = &mut self.ses[se];
        debug_assert!(!e.on_latency, "latency offset changed while in the tree");
        e.latency_offset = offset;
    }

    /// `wakeup_latency_gran()`: how much the latency offsets shift the vruntime comparison of
    /// `se` against `curr`. Both offsets count as soon as either is negative (the `||` Chen Yu
    /// asked about: the same delta of latency nice gives the same offset).
    fn wakeup_latency_gran(&self, curr: SeId, se: SeId) -> i64 {
        let (c, s) = (self.ses[curr].latency_offset, self.ses[se].latency_offset);
        if s < 0 || c < 0 {
            s - c
        } else {
            s
        }
    }

    /// `__enqueue_latency()` (patch 7): a latency-sensitive entity enters the latency timeline
    /// at wakeup, or when put back after running less than the min granularity (preempted by
    /// a higher class or a more latency-sensitive entity). Only the v5 latency rbtree has that
    /// timeline: the test is inlined at each enqueue.
    #[inline]
    fn enqueue_latency(&mut self, cfs: usize, se: SeId, wakeup: bool) {
        if self.latency_nice == LatencyNice::V5Rbtree {
            self.enqueue_latency_rbtree(cfs, se, wakeup);
        }
    }

    /// [`Fair::enqueue_latency`] under the v5 latency rbtree.
    #[inline(never)]
    fn enqueue_latency_rbtree(&mut self, cfs: usize, se: SeId, wakeup: bool) {
        let e = &self.ses[se];
        if e.latency_offset >= 0 || e.on_latency {
            return;
        }
        if !wakeup && e.sum_exec_runtime - e.prev_sum_exec_runtime >= self.tun.min_granularity {
            return;
        }
        self.tree_seq += 1;
        let key = (
            e.vruntime.wrapping_add(e.latency_offset as u64),
            self.tree_seq,
        );
        self.touch(cfs, se);
        self.rqs[cfs]
            .latency_timeline
            .insert(&mut self.lat_nodes, se, key, (0, 0));
        self.ses[se].on_latency = true;
    }

    /// `__dequeue_latency()`.
    fn dequeue_latency(&mut self, cfs: usize, se: SeId) {
        if !self.ses[se].on_latency {
            return;
        }
        self.touch(cfs, se);
        self.rqs[cfs]
            .latency_timeline
            .remove(&mut self.lat_nodes, se);
        self.ses[se].on_latency = false;
    }

    /// `check_preempt_from_others()` (patch 4): a latency-sensitive entity enqueued while
    /// another class (or idle) runs cannot preempt now, so it becomes the next buddy if it
    /// would have preempted the entity CFS would pick.
    pub fn check_preempt_from_others(&mut self, _cpu: usize, se: SeId) {
        let cfs = self.ses[se].cfs_rq;
        if self.ses[se].latency_offset >= 0 || self.rqs[cfs].nr_running <= 1 {
            return;
        }
        let next = self.rqs[cfs].next.or_else(|| self.rqs[cfs].first());
        if let Some(next) = next {
            if self.wakeup_preempt_entity(next, se) == 1 {
                self.set_buddy(0, se);
            }
        }
    }

    /// `wakeup_gran()`.
    fn wakeup_gran(&self, se: SeId) -> u64 {
        self.calc_delta_fair(self.tun.wakeup_granularity, se)
    }

    /// `wakeup_preempt_entity()`: -1 if `se` is not ahead of `curr`, 1 if it is ahead by more
    /// than the wakeup granularity, 0 in between.
    pub fn wakeup_preempt_entity(&self, curr: SeId, se: SeId) -> i32 {
        if self.sleeper_credit {
            // A sleeper placed a whole (gentle) latency behind min_vruntime has credit to
            // use: it preempts, whatever the latency offsets say.
            let cfs = self.ses[curr].cfs_rq;
            let min_vdiff = self.rqs[cfs]
                .min_vruntime
                .wrapping_sub(self.ses[se].vruntime) as i64;
            let period = self.sleeper_thresh(false) as i64 - self.tun.min_granularity as i64;
            if min_vdiff >= period {
                return 1;
            }
        }
        let mut vdiff = self.ses[curr].vruntime.wrapping_sub(self.ses[se].vruntime) as i64;
        vdiff -= self.wakeup_latency_gran(curr, se);
        if vdiff <= 0 {
            return -1;
        }
        if vdiff as u64 > self.wakeup_gran(se) {
            1
        } else {
            0
        }
    }

    /// `pick_next_entity()` with `curr` already put back into the timeline.
    fn pick_se(&self, cfs: usize) -> Option<SeId> {
        if self.policy == FairPolicy::Eevdf {
            return self.pick_eevdf(cfs);
        }
        let rq = &self.rqs[cfs];
        let left = rq.first()?;
        let mut se = left;
        if rq.skip == Some(se) {
            if let Some(second) = rq.timeline.next(&self.tl_nodes, se) {
                if self.wakeup_preempt_entity(second, left) < 1 {
                    se = second;
                }
            }
        }
        if let Some(next) = rq.next.filter(|&n| self.wakeup_preempt_entity(n, left) < 1) {
            se = next;
        } else if let Some(last) = rq.last.filter(|&l| self.wakeup_preempt_entity(l, left) < 1) {
            se = last;
        }
        // Patch 7: a latency-sensitive entity waiting to run goes first unless that would be
        // unfair to the pick by more than the wakeup granularity.
        if let Some(latency) = rq.latency_timeline.first() {
            if latency != se && self.wakeup_preempt_entity(latency, se) < 1 {
                se = latency;
            }
        }
        Some(se)
    }

    /// `set_next_entity()`: `se` becomes the running entity. Since v5.14 the buddies are
    /// cleared here rather than in `pick_next_entity()`.
    fn set_next_se(&mut self, cfs: usize, se: SeId, now: u64) {
        self.touch(cfs, se);
        self.clear_buddies(cfs, se);
        if self.ses[se].on_rq {
            self.tree_remove(cfs, se);
            self.dequeue_latency(cfs, se);
            self.update_load_avg(cfs, se, LoadAvgAction::Update);
        }
        self.rqs[cfs].curr = Some(se);
        self.rqs[cfs].eevdf_resched = false;
        let e = &mut self.ses[se];
        e.exec_start = now;
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        e.protect = self.policy == FairPolicy::Eevdf;
    }

    /// `put_prev_entity()`: the running entity stops running; if still queued it goes back
    /// into the timeline.
    fn put_prev_se(&mut self, cfs: usize, se: SeId, now: u64) {
        self.touch(cfs, se);
        if self.ses[se].on_rq {
            self.update_curr_cfs(cfs, now);
            self.tree_insert(cfs, se);
            self.enqueue_latency(cfs, se, false);
            self.update_load_avg(cfs, se, LoadAvgAction::Update);
        }
        self.rqs[cfs].curr = None;
    }

    /// `check_preempt_tick()`: whether the running entity has had its slice.
    pub fn check_preempt_tick(&mut self, cfs: usize, curr: SeId) -> Preempt {
        let ideal = self.sched_slice(cfs, curr);
        let e = &self.ses[curr];
        let delta_exec = e.sum_exec_runtime - e.prev_sum_exec_runtime;
        if delta_exec > ideal {
            self.clear_buddies(cfs, curr);
            return Preempt::Yes;
        }
        // Ensure a task that preempts another gets some time before being preempted.
        if delta_exec < self.tun.min_granularity {
            return Preempt::No;
        }
        let Some(first) = self.rqs[cfs].first() else {
            return Preempt::No;
        };
        let mut delta = e.vruntime.wrapping_sub(self.ses[first].vruntime) as i64;
        delta -= self.wakeup_latency_gran(curr, first);
        if delta > ideal as i64 {
            Preempt::Yes
        } else {
            Preempt::No
        }
    }

    /// `task_tick_fair()`: `entity_tick()` at each level, from the running task up.
    pub fn task_tick(&mut self, cpu: usize, now: u64) -> Preempt {
        let mut preempt = Preempt::No;
        let mut se = self.running_task(cpu);
        while let Some(e) = se {
            let cfs = self.ses[e].cfs_rq;
            if self.entity_tick(cfs, now) == Preempt::Yes {
                preempt = Preempt::Yes;
            }
            se = self.parent_se(e);
        }
        preempt
    }

    /// `entity_tick()`'s preemption part: charge the running entity, check its slice.
    fn entity_tick(&mut self, cfs: usize, now: u64) -> Preempt {
        self.update_curr_cfs(cfs, now);
        if let Some(curr) = self.rqs[cfs].curr {
            self.update_load_avg(cfs, curr, LoadAvgAction::Update);
            self.update_cfs_group(curr, now);
        }
        if self.policy == FairPolicy::Eevdf {
            // The request ending in update_curr() is EEVDF's tick preemption.
            return if std::mem::take(&mut self.rqs[cfs].eevdf_resched) {
                Preempt::Yes
            } else {
                Preempt::No
            };
        }
        match self.rqs[cfs].curr {
            Some(curr) if self.rqs[cfs].nr_running > 1 => self.check_preempt_tick(cfs, curr),
            _ => Preempt::No,
        }
    }

    /// `check_preempt_wakeup()` for a fair task woken (or forked) onto a CPU running the fair
    /// entity `curr`. `pse_is_normal` is `p->policy == SCHED_NORMAL`; `need_resched` is
    /// `test_tsk_need_resched(curr)`: a reschedule already asked for ends the check once the
    /// next buddy is marked ("we can come here with TIF_NEED_RESCHED already set from new task
    /// wake up path"), before the idle-policy test and the last buddy.
    pub fn check_preempt_wakeup(
        &mut self,
        need_resched: bool,
        curr: SeId,
        pse: SeId,
        pse_is_normal: bool,
        fork: bool,
        now: u64,
    ) -> Preempt {
        if curr == pse {
            return Preempt::No;
        }
        // Compare the entities of the two tasks' hierarchies that share a queue.
        let task_cfs = self.ses[curr].cfs_rq;
        let (curr, pse) = self.find_matching_se(curr, pse);
        let cfs = self.ses[curr].cfs_rq;
        if self.policy == FairPolicy::Eevdf {
            // v6.6: NEXT_BUDDY is off by default, then the same early return.
            if need_resched {
                return Preempt::No;
            }
            let (cse_idle, pse_idle) = (self.ses[curr].idle, self.ses[pse].idle);
            if !self.feat.wakeup_preemption {
                return Preempt::No;
            }
            if cse_idle && !pse_idle {
                return Preempt::Yes;
            }
            if cse_idle != pse_idle || !pse_is_normal {
                return Preempt::No;
            }
            return self.check_preempt_eevdf(cfs, curr, pse, now);
        }
        let scale = self.rqs[task_cfs].nr_running as u64 >= self.tun.nr_latency;
        let mut next_buddy_marked = false;
        if self.feat.next_buddy && scale && !fork {
            self.set_buddy(0, pse);
            next_buddy_marked = true;
        }
        if need_resched {
            return Preempt::No;
        }
        let (cse_idle, pse_idle) = (self.ses[curr].idle, self.ses[pse].idle);
        // Idle tasks are by definition preempted by non-idle tasks.
        let preempt = if cse_idle && !pse_idle {
            true
        } else if !pse_is_normal || !self.feat.wakeup_preemption || cse_idle != pse_idle {
            // Batch and idle tasks do not preempt: their preemption is driven by the tick.
            false
        } else {
            self.update_curr_cfs(cfs, now);
            if self.wakeup_preempt_entity(curr, pse) == 1 {
                if !next_buddy_marked {
                    self.set_buddy(0, pse);
                }
                true
            } else {
                false
            }
        };
        if !preempt {
            return Preempt::No;
        }
        if self.feat.last_buddy && scale && self.ses[curr].on_rq && self.ses[curr].my_q.is_none() {
            self.set_buddy(1, curr);
        }
        Preempt::Yes
    }

    /// `task_fork_fair()`: the child starts from the parent's vruntime, placed with
    /// START_DEBIT, and leaves relative to the parent's queue (it may be enqueued elsewhere).
    /// `parent` is None for threads the simulation creates at start (no running parent).
    pub fn task_fork(&mut self, parent_cpu: usize, parent: Option<SeId>, child: SeId, now: u64) {
        let parent_cfs = self.tgs[self.ses[child].tg].rq[parent_cpu];
        self.ses[child].cfs_rq = parent_cfs;
        if let Some(p) = parent.filter(|&p| self.rqs[parent_cfs].curr == Some(p)) {
            self.update_curr_cfs(parent_cfs, now);
            self.ses[child].vruntime = self.ses[p].vruntime;
        }
        if self.policy == FairPolicy::Eevdf {
            // Placed at its first enqueue, with no lag and half a request.
            let e = &mut self.ses[child];
            e.vlag = 0;
            e.eevdf_initial = true;
        } else {
            self.place_entity(parent_cfs, child, true);
        }
        let min = self.rqs[parent_cfs].min_vruntime;
        let e = &mut self.ses[child];
        e.vruntime = e.vruntime.wrapping_sub(min);
    }

    /// `migrate_task_rq_fair()` for a sleeping task: make its vruntime relative to the queue
    /// it leaves (enqueue with `migrated` adds the new queue's min_vruntime).
    pub fn migrate_sleeping(&mut self, se: SeId) {
        let min = self.rqs[self.ses[se].cfs_rq].min_vruntime;
        let e = &mut self.ses[se];
        e.vruntime = e.vruntime.wrapping_sub(min);
    }

    /// `yield_task_fair()`: mark the running entity to be skipped by the next pick.
    pub fn yield_task(&mut self, cpu: usize, se: SeId, now: u64) {
        if self.rqs[cpu].h_nr_running == 1 {
            return;
        }
        let cfs = self.ses[se].cfs_rq;
        self.clear_buddies(cfs, se);
        self.update_curr_cfs(cfs, now);
        if self.policy == FairPolicy::Eevdf {
            self.yield_eevdf(se);
            return;
        }
        self.set_buddy(2, se);
    }

    /// Change the weight of a dequeued entity (`reweight_task` between the dequeue and
    /// enqueue of `__sched_setscheduler`): its PELT load follows the new weight.
    pub fn reweight(&mut self, se: SeId, load: LoadWeight, idle: bool) {
        let e = &mut self.ses[se];
        debug_assert!(!e.on_rq, "reweight of a queued entity");
        pelt::reweight_se(&mut e.avg, load.weight);
        e.load = load;
        e.idle = idle;
    }

    /// Debug checks after an event (`kernel/invariants.rs`): the entities and queues it
    /// touched and the timeline nodes it relinked, each in O(1) or O(depth of its timeline).
    #[cfg(debug_assertions)]
    pub fn check_touched(&mut self) {
        // Recount every touched entity before any queue is compared with the sums.
        while let Some(se) = self.touched_ses.pop() {
            self.shadow.recount(se, self.share_of(se));
            self.check_se(se);
        }
        while let Some(cfs) = self.touched_rqs.pop() {
            self.check_cfs_rq(cfs);
        }
        self.tl_nodes.check_touched();
        self.lat_nodes.check_touched();
    }

    /// Debug check of everything: each entity where it stands and as recounted, each queue
    /// against its counters and its timelines walked whole.
    #[cfg(debug_assertions)]
    pub fn check_all(&mut self) {
        self.check_touched();
        for se in 0..self.ses.len() {
            assert_eq!(
                self.shadow.share(se),
                self.share_of(se),
                "entity {se} changed where no debug check was told"
            );
            self.check_se(se);
        }
        for cfs in 0..self.rqs.len() {
            self.check_cfs_rq(cfs);
            self.walk_cfs_rq(cfs);
        }
    }

    /// What a full check walks: the entities and the queues.
    #[cfg(debug_assertions)]
    pub fn check_items(&self) -> usize {
        self.ses.len() + self.rqs.len()
    }

    /// Entity `se` where it stands: in its queue's timeline exactly while it waits there,
    /// under its vruntime (and EEVDF deadline), near the queue's min_vruntime; in the
    /// latency timeline only as patch 7 puts it there; its task mirrored in `task_of`; a
    /// group entity queued exactly when its queue has entities.
    #[cfg(debug_assertions)]
    fn check_se(&self, se: SeId) {
        let e = &self.ses[se];
        let cfs = e.cfs_rq;
        let rq = &self.rqs[cfs];
        let waiting = e.on_rq && rq.curr != Some(se);
        let in_timeline = rq.timeline.contains(&self.tl_nodes, se);
        assert_eq!(
            in_timeline, waiting,
            "entity {se}: timeline of cfs_rq {cfs}"
        );
        if waiting {
            let (v, _) = Timeline::key_of(&self.tl_nodes, se);
            assert_eq!(
                v, e.vruntime,
                "entity {se}: vruntime changed in the timeline"
            );
            if self.policy == FairPolicy::Eevdf {
                let (d, _) = Timeline::aux_of(&self.tl_nodes, se);
                assert_eq!(
                    d, e.deadline,
                    "entity {se}: deadline changed in the timeline"
                );
            }
            // Queued vruntimes stay near min_vruntime (a wrapped, un-renormalised one would
            // not).
            let lag = e.vruntime.abs_diff(rq.min_vruntime);
            assert!(
                lag < 1 << 50,
                "cfs_rq {cfs}: entity {se} vruntime {} far from {}",
                e.vruntime,
                rq.min_vruntime
            );
        } else {
            assert!(!self.tl_nodes.is_linked(se), "entity {se}: in a timeline");
        }
        // The latency timeline: only waiting latency-sensitive entities of this queue, under
        // the key they were inserted with.
        let on_latency = rq.latency_timeline.contains(&self.lat_nodes, se);
        assert_eq!(on_latency, e.on_latency, "entity {se}: latency timeline");
        if e.on_latency {
            assert!(
                waiting && e.latency_offset < 0,
                "entity {se}: latency timeline"
            );
            let (k, _) = Timeline::key_of(&self.lat_nodes, se);
            assert_eq!(k, e.vruntime.wrapping_add(e.latency_offset as u64));
        } else {
            assert!(
                !self.lat_nodes.is_linked(se),
                "entity {se}: in a latency timeline"
            );
        }
        // `task_of` mirrors the entity's task (`prefetch_next` reads it instead).
        let task = u32::try_from(e.task).unwrap_or(u32::MAX);
        assert_eq!(self.task_of[se], task, "entity {se}: task_of out of step");
        if e.my_q.is_some() {
            self.check_group_se(se);
        }
    }

    /// Queue `cfs`'s counters against the recount of its entities (`shadow.rs`), and the
    /// ends of its timelines.
    #[cfg(debug_assertions)]
    fn check_cfs_rq(&self, cfs: usize) {
        let rq = &self.rqs[cfs];
        let queued =
            rq.timeline.len() as u32 + u32::from(rq.curr.is_some_and(|c| self.ses[c].on_rq));
        assert_eq!(
            queued, rq.nr_running,
            "cfs_rq {cfs}: nr_running out of step"
        );
        let sums = self.shadow.sums(cfs);
        assert_eq!(sums.load, rq.load.weight, "cfs_rq {cfs}: load out of step");
        assert_eq!(
            sums.h_nr_running, rq.h_nr_running,
            "cfs_rq {cfs}: h_nr_running out of step"
        );
        if self.policy == FairPolicy::Eevdf {
            self.check_avg_vruntime(cfs, sums.waiting_vw, sums.waiting_load);
        }
        rq.timeline.check_ends(&self.tl_nodes);
        rq.latency_timeline.check_ends(&self.lat_nodes);
        if self.latency_nice != LatencyNice::V5Rbtree {
            assert!(
                rq.latency_timeline.is_empty(),
                "cfs_rq {cfs}: latency timeline"
            );
        }
        if let Some(g) = self.owner_se(cfs) {
            self.check_group_se(g);
        }
    }

    /// Queue `cfs` walked: its timelines whole, its entities on it, and its sums recomputed
    /// from them equal to the recount.
    #[cfg(debug_assertions)]
    fn walk_cfs_rq(&self, cfs: usize) {
        let rq = &self.rqs[cfs];
        rq.timeline.check(&self.tl_nodes);
        rq.latency_timeline.check(&self.lat_nodes);
        let curr = rq.curr.filter(|&c| self.ses[c].on_rq);
        let mut sums = shadow::Sums::default();
        for se in self.queued(cfs).chain(curr) {
            assert_eq!(self.ses[se].cfs_rq, cfs, "entity {se}: on another cfs_rq");
            sums = sums.with(self, se);
        }
        assert_eq!(
            sums,
            self.shadow.sums(cfs),
            "cfs_rq {cfs}: recount out of step"
        );
        for se in rq.latency_timeline.iter(&self.lat_nodes) {
            let e = &self.ses[se];
            assert!(
                e.on_latency && e.cfs_rq == cfs,
                "entity {se}: latency timeline"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmult_is_two_to_the_32_over_weight() {
        for (w, m) in SCHED_PRIO_TO_WEIGHT.iter().zip(SCHED_PRIO_TO_WMULT) {
            let exact = (1u64 << 32) as f64 / *w as f64;
            assert!(
                (exact - m as f64).abs() <= 1.0,
                "weight {w}: {m} vs {exact}"
            );
        }
    }

    #[test]
    fn weights_step_by_about_ten_percent_of_cpu() {
        // "each nice level ... 10% CPU": consecutive weights have a ratio of about 1.25.
        for w in SCHED_PRIO_TO_WEIGHT.windows(2) {
            let r = w[0] as f64 / w[1] as f64;
            assert!((1.18..1.32).contains(&r), "{w:?}");
        }
        assert_eq!(SCHED_PRIO_TO_WEIGHT[20], NICE_0_LOAD);
    }

    #[test]
    fn calc_delta_scales_by_weight_ratio() {
        let lw = LoadWeight::for_nice(5, false); // 335
        let d = calc_delta(1_000_000, NICE_0_LOAD, &lw);
        let exact = 1_000_000f64 * 1024.0 / 335.0;
        assert!((d as f64 - exact).abs() / exact < 1e-6);
        // Identity for nice 0.
        let lw0 = LoadWeight::for_nice(0, false);
        assert_eq!(calc_delta(123_456, NICE_0_LOAD, &lw0), 123_456);
        // A summed queue weight uses the truncated WMULT_CONST / w: the result is a hair
        // below the exact quotient, never above it.
        let mut q = LoadWeight::default();
        q.add(2048);
        let s = calc_delta(6_000_000, 1024, &q);
        assert!((2_999_990..=3_000_000).contains(&s), "{s}");
    }

    fn fair(nr_cpus: usize) -> Fair {
        Fair::new(nr_cpus, &Variant::default())
    }

    #[test]
    fn slice_splits_the_latency_by_weight() {
        let mut f = fair(1);
        let a = f.alloc_se(LoadWeight::for_nice(0, false), false, 0, 0);
        let b = f.alloc_se(LoadWeight::for_nice(0, false), false, 0, 0);
        f.enqueue_entity(0, a, QueueFlags::default(), 0);
        f.enqueue_entity(0, b, QueueFlags::default(), 0);
        // One CPU: factor 1, latency 6 ms, two equal tasks: 3 ms each (less the fixed-point
        // truncation of __calc_delta).
        let slice = f.sched_slice(0, a);
        assert!((2_999_990..=3_000_000).contains(&slice), "{slice}");
        #[cfg(debug_assertions)]
        f.check_all();
    }

    /// v6.1 `check_preempt_wakeup()`: a wake-up that would preempt does not when the running
    /// task already has TIF_NEED_RESCHED, and the check stops after the NEXT_BUDDY mark (so
    /// the next buddy is still set, the last buddy is not).
    #[test]
    fn a_reschedule_already_asked_ends_the_wakeup_check_after_the_next_buddy() {
        for need_resched in [false, true] {
            let mut f = fair(1);
            f.feat.next_buddy = true;
            f.feat.last_buddy = true;
            let nice0 = LoadWeight::for_nice(0, false);
            let ids: Vec<_> = (0..9).map(|_| f.alloc_se(nice0, false, 0, 0)).collect();
            for &se in &ids[..8] {
                f.enqueue_entity(0, se, QueueFlags::default(), 0);
            }
            let curr = ids[0];
            f.set_next_entity(0, curr, 0);
            // A long sleeper, placed half a latency (3 ms on one CPU) behind min_vruntime:
            // past the 1 ms wake-up granularity.
            let woken = ids[8];
            f.ses[woken].vruntime = f.rqs[0].min_vruntime.wrapping_sub(100_000_000);
            let wakeup = QueueFlags {
                wakeup: true,
                ..QueueFlags::default()
            };
            f.enqueue_entity(0, woken, wakeup, 0);
            let preempt = f.check_preempt_wakeup(need_resched, curr, woken, true, false, 0);
            assert_eq!(preempt == Preempt::Yes, !need_resched);
            assert_eq!(f.rqs[0].next, Some(woken), "need_resched {need_resched}");
            assert_eq!(f.rqs[0].last.is_some(), !need_resched);
        }
    }

    #[test]
    fn sleeper_is_placed_half_a_latency_behind_min_vruntime() {
        let mut f = fair(1);
        let a = f.alloc_se(LoadWeight::for_nice(0, false), false, 0, 0);
        f.rqs[0].min_vruntime = 100_000_000;
        f.ses[a].vruntime = 10;
        f.enqueue_entity(
            0,
            a,
            QueueFlags {
                wakeup: true,
                ..QueueFlags::default()
            },
            0,
        );
        assert_eq!(f.ses[a].vruntime, 100_000_000 - 3_000_000);
    }

    #[test]
    fn timeline_picks_smallest_vruntime_and_fifo_among_equals() {
        let mut f = fair(1);
        let ids: Vec<_> = (0..3)
            .map(|_| f.alloc_se(LoadWeight::for_nice(0, false), false, 0, 0))
            .collect();
        f.ses[ids[0]].vruntime = 5;
        f.ses[ids[1]].vruntime = 5;
        f.ses[ids[2]].vruntime = 1;
        for &s in &ids {
            f.enqueue_entity(0, s, QueueFlags::default(), 0);
        }
        assert_eq!(f.pick_next_entity(0), Some(ids[2]));
        f.dequeue_entity(0, ids[2], QueueFlags::default(), 0);
        assert_eq!(f.pick_next_entity(0), Some(ids[0]));
        #[cfg(debug_assertions)]
        f.check_all();
    }
}

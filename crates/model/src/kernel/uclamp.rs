//! Utilization clamping (uclamp) as in v6.1 `kernel/sched/core.c`, plus the variants the seeds
//! argue about (SPEC §6): how the RT default boost reaches the tasks, the `sched_uclamp_used`
//! static key, and the pre-5.14 task-group restriction. Also the uclamp half of the
//! `sched_setattr()` ABI (`uclamp_validate()`, `__setscheduler_uclamp()`; the rest of the ABI
//! is `setattr.rs`) and the two capacity-fit tests that read effective clamps
//! (SPEC §4, §6).
//!
//! Like `pelt.rs`, this module holds state and arithmetic only. The kernel core owns the tasks
//! and runqueues and decides when the kernel would make each call:
//!
//! | v6.1 call site | here |
//! |---|---|
//! | `enqueue_task()`: `uclamp_rq_inc()` before `sched_class->enqueue_task()` | [`RqUclamp::inc`] |
//! | `dequeue_task()`: `uclamp_rq_dec()` before `sched_class->dequeue_task()` | [`RqUclamp::dec`] |
//! | `sys_sched_setattr()` up to `find_process_by_pid()` (incl. `sched_copy_attr()`) | [`setattr_syscall_checks`] |
//! | `__sched_setscheduler()` before the rq lock (incl. `uclamp_validate()`) | [`validate_setattr`] |
//! | `__sched_setscheduler()`: `__setscheduler_uclamp()` between dequeue and enqueue | [`apply_setattr_uclamp`] |
//! | `sched_fork()`: `uclamp_fork()` | [`uclamp_fork`] |
//! | `sched_post_fork()` (copy_process, before `wake_up_new_task()`): `uclamp_post_fork()` | [`uclamp_post_fork`] |
//! | `sysctl_sched_uclamp_handler()` | [`UclampSys::write_sysctl`] |
//! | the handler's `uclamp_sync_util_min_rt_default()` walk over all threads | [`sync_rt_default`] |
//! | `cpu_uclamp_write()`: `static_branch_enable()` | [`UclampSys::enable_static_key`] |
//! | `uclamp_update_active_tasks()` → `uclamp_update_active()` (cgroup writes) | [`RqUclamp::update_active`] |
//! | `uclamp_eff_value()` (RT and fair placement, EAS, `uclamp_rq_util_with()`'s `p`) | [`eff_value`] |
//! | `rt_task_fits_capacity()` (rt.c) | [`rt_task_fits_capacity`] |
//! | `task_fits_capacity()` (fair.c) | [`task_fits_capacity`] |
//!
//! The static key: in mainline, `uclamp_rq_inc()` and `uclamp_rq_dec()` return at once while
//! `sched_uclamp_used` is off, and `uclamp_is_used()` (cpufreq's `effective_cpu_util()` and
//! `uclamp_rq_util_with()`) reads it. Nothing else is gated: `uclamp_eff_value()`, setattr,
//! fork and the sysctls work the same with the key off. The caller therefore checks
//! [`UclampSys::active`] (and that the task's class has `uclamp_enabled`: fair and RT only)
//! before calling [`RqUclamp::inc`] or [`RqUclamp::dec`], exactly where the kernel's early
//! returns are; the operation counters then measure what the key saves (seeds 000, 001).
//!
//! Nothing on the enqueue/dequeue path allocates: the buckets are fixed arrays sized for the
//! largest `CONFIG_UCLAMP_BUCKETS_COUNT`.

use std::ops::AddAssign;

use super::sched::Errno;
use super::setattr::{
    SchedAttr, SCHED_FLAG_UTIL_CLAMP, SCHED_FLAG_UTIL_CLAMP_MAX, SCHED_FLAG_UTIL_CLAMP_MIN,
};
use crate::platform::SCHED_CAPACITY_SCALE;

/// `enum uclamp_id`: `UCLAMP_MIN` (protection, a boost) and `UCLAMP_MAX` (limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClampId {
    Min = 0,
    Max = 1,
}

impl ClampId {
    /// `for_each_clamp_id()` order: MIN before MAX, as every loop in core.c runs them.
    pub const ALL: [ClampId; 2] = [ClampId::Min, ClampId::Max];

    /// Index into the `[_; UCLAMP_CNT]` arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `uclamp_none()`: the value that does not clamp at all, 0 for MIN and 1024 for MAX.
    pub fn none(self) -> u32 {
        match self {
            ClampId::Min => 0,
            ClampId::Max => SCHED_CAPACITY_SCALE,
        }
    }
}

/// Largest `CONFIG_UCLAMP_BUCKETS_COUNT` (its Kconfig range is 5..=20); fixes the array size.
pub const UCLAMP_BUCKETS_MAX: usize = 20;

/// Smallest `CONFIG_UCLAMP_BUCKETS_COUNT`, also its default.
pub const UCLAMP_BUCKETS_MIN: u32 = 5;

/// `CONFIG_UCLAMP_BUCKETS_COUNT` and the bucket arithmetic that follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UclampConfig {
    buckets: u32,
}

impl Default for UclampConfig {
    fn default() -> Self {
        UclampConfig {
            buckets: UCLAMP_BUCKETS_MIN,
        }
    }
}

impl UclampConfig {
    /// `None` outside the Kconfig range 5..=20.
    pub fn new(buckets: u32) -> Option<UclampConfig> {
        (UCLAMP_BUCKETS_MIN..=UCLAMP_BUCKETS_MAX as u32)
            .contains(&buckets)
            .then_some(UclampConfig { buckets })
    }

    /// `UCLAMP_BUCKETS`.
    pub fn buckets(self) -> u32 {
        self.buckets
    }

    /// `UCLAMP_BUCKET_DELTA` = `DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS)`:
    /// 205 for 5 buckets, 51 for 20.
    pub fn bucket_delta(self) -> u32 {
        (SCHED_CAPACITY_SCALE + self.buckets / 2) / self.buckets
    }

    /// `uclamp_bucket_id()`. The delta is rounded, so the top values can divide to
    /// `UCLAMP_BUCKETS` itself (1024 / 51 = 20 with 20 buckets); they belong to the last bucket.
    pub fn bucket_id(self, value: u32) -> u32 {
        (value / self.bucket_delta()).min(self.buckets - 1)
    }

    /// A `struct uclamp_se` as `uclamp_se_set()` leaves it (not active).
    pub fn se(self, value: u32, user_defined: bool) -> UclampSe {
        UclampSe {
            value,
            bucket_id: self.bucket_id(value),
            active: false,
            user_defined,
        }
    }
}

/// `struct uclamp_se`: a clamp request (`p->uclamp_req[]`, `uclamp_default[]`) or a task's
/// effective clamp while it is refcounted in an rq bucket (`p->uclamp[]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UclampSe {
    pub value: u32,
    pub bucket_id: u32,
    /// Effective values only: the task holds a reference in `bucket_id` of its rq.
    pub active: bool,
    /// Requests only: set by `sched_setattr()`, so defaults and resets leave it alone.
    pub user_defined: bool,
}

/// The uclamp fields of a `task_struct`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskUclamp {
    /// `p->uclamp_req[]`: what the task asked for (or its class default).
    pub req: [UclampSe; 2],
    /// `p->uclamp[]`: the effective values computed at enqueue; meaningful while `active`.
    pub eff: [UclampSe; 2],
}

impl TaskUclamp {
    /// A task with default requests: min 0, max 1024 (`uclamp_none()`).
    pub fn fair(sys: &UclampSys) -> TaskUclamp {
        TaskUclamp {
            req: ClampId::ALL.map(|id| sys.config.se(id.none(), false)),
            eff: [UclampSe::default(); 2],
        }
    }

    /// An RT task with default requests: min = `sysctl_sched_uclamp_util_min_rt_default`
    /// (what `__setscheduler_uclamp()` gives a task switched to RT), max 1024.
    pub fn rt(sys: &UclampSys) -> TaskUclamp {
        let mut t = TaskUclamp::fair(sys);
        t.req[ClampId::Min.index()] = sys.config.se(sys.util_min_rt_default, false);
        t
    }
}

/// Which of the three uclamp sysctls a write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sysctl {
    /// `kernel.sched_util_clamp_min`: the largest effective MIN any task may get.
    Min,
    /// `kernel.sched_util_clamp_max`: the largest effective MAX any task may get.
    Max,
    /// `kernel.sched_util_clamp_min_rt_default`: the MIN request of RT tasks that set none.
    MinRtDefault,
}

impl Sysctl {
    pub const ALL: [Sysctl; 3] = [Sysctl::Min, Sysctl::Max, Sysctl::MinRtDefault];

    /// The /proc/sys path below `/proc/sys/`, dotted as sysctl(8) prints it.
    pub fn name(self) -> &'static str {
        match self {
            Sysctl::Min => "kernel.sched_util_clamp_min",
            Sysctl::Max => "kernel.sched_util_clamp_max",
            Sysctl::MinRtDefault => "kernel.sched_util_clamp_min_rt_default",
        }
    }

    pub fn from_name(name: &str) -> Option<Sysctl> {
        Sysctl::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Switch `uclamp_static_key` (SPEC §6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StaticKeyMode {
    /// Mainline since v5.9: rq aggregation starts with the first use of uclamp.
    #[default]
    StaticKey,
    /// v5.7/v5.8: no key, the rq buckets are maintained from boot.
    AlwaysActive,
}

impl StaticKeyMode {
    pub const NAMES: &'static [&'static str] = &["static-key", "always-active"];

    pub fn name(self) -> &'static str {
        match self {
            StaticKeyMode::StaticKey => "static-key",
            StaticKeyMode::AlwaysActive => "always-active",
        }
    }

    pub fn from_name(name: &str) -> Option<StaticKeyMode> {
        [StaticKeyMode::StaticKey, StaticKeyMode::AlwaysActive]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// Switch for how a new `sched_util_clamp_min_rt_default` reaches RT tasks (SPEC §6, seed 000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtSync {
    /// Mainline: the sysctl write rewrites the request of every RT task without a
    /// user-defined min ([`sync_rt_default`] over all tasks); forks pick it up in
    /// [`uclamp_post_fork`], policy changes in [`apply_setattr_uclamp`].
    #[default]
    Eager,
    /// The v5 patch: `uclamp_sync_util_min_rt_default()` runs inside `uclamp_eff_get()`, so
    /// every effective-value computation (enqueue, and placement/frequency paths of a task not
    /// enqueued) syncs the request; `__setscheduler_uclamp()` has no RT special case.
    V5LazyEffective,
    /// The v2 patch after review: synced in `uclamp_rq_inc()`, RT tasks only.
    V2LazyEnqueue,
    /// The v2 patch as posted: synced in `uclamp_rq_inc()` without its `rt_task()` check, so
    /// every fair task without a user-defined min gets the RT default too.
    V2MissingRtFilter,
}

impl RtSync {
    pub const NAMES: &'static [&'static str] = &[
        "eager",
        "v5-lazy-effective",
        "v2-lazy-enqueue",
        "v2-missing-rt-filter",
    ];

    pub fn name(self) -> &'static str {
        match self {
            RtSync::Eager => "eager",
            RtSync::V5LazyEffective => "v5-lazy-effective",
            RtSync::V2LazyEnqueue => "v2-lazy-enqueue",
            RtSync::V2MissingRtFilter => "v2-missing-rt-filter",
        }
    }

    pub fn from_name(name: &str) -> Option<RtSync> {
        [
            RtSync::Eager,
            RtSync::V5LazyEffective,
            RtSync::V2LazyEnqueue,
            RtSync::V2MissingRtFilter,
        ]
        .into_iter()
        .find(|m| m.name() == name)
    }
}

/// Switch for `uclamp_tg_restrict()` (SPEC §6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TgRestrict {
    /// v5.14+: the request is clamped into the group's effective [min, max].
    #[default]
    V61,
    /// Before "sched/uclamp: Fix uclamp_tg_restrict()" (v5.14): a request that is not
    /// user-defined, or is above the group's effective value, is replaced by that value.
    Pre514,
}

impl TgRestrict {
    pub const NAMES: &'static [&'static str] = &["v6.1", "tg-restrict-pre-5.14"];

    pub fn name(self) -> &'static str {
        match self {
            TgRestrict::V61 => "v6.1",
            TgRestrict::Pre514 => "tg-restrict-pre-5.14",
        }
    }

    pub fn from_name(name: &str) -> Option<TgRestrict> {
        [TgRestrict::V61, TgRestrict::Pre514]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// What a successful sysctl write asks of the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteEffect {
    /// `sched_util_clamp_min` or `_max` changed: with CONFIG_UCLAMP_TASK_GROUP the kernel now
    /// runs `uclamp_update_root_tg()` (root group requests := the two sysctls, then
    /// `cpu_util_update_eff()` from the root). Without groups enqueued tasks keep their
    /// effective values until their next enqueue.
    pub update_root_tg: bool,
    /// The RT default changed under [`RtSync::Eager`]: call [`sync_rt_default`] on every task
    /// (`uclamp_sync_util_min_rt_default()`'s `for_each_process_thread()`).
    pub sync_rt_tasks: bool,
}

/// System-wide uclamp state: the sysctls, `uclamp_default[]`, the static key, the switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UclampSys {
    pub config: UclampConfig,
    /// `sysctl_sched_uclamp_util_min`. Write through [`UclampSys::write_sysctl`].
    pub util_min: u32,
    /// `sysctl_sched_uclamp_util_max`.
    pub util_max: u32,
    /// `sysctl_sched_uclamp_util_min_rt_default`.
    pub util_min_rt_default: u32,
    /// `uclamp_default[]`: caps every effective value (`uclamp_eff_get()`).
    pub uclamp_default: [UclampSe; 2],
    /// The `sched_uclamp_used` static key; once on it stays on.
    pub used: bool,
    pub static_key: StaticKeyMode,
    pub rt_sync: RtSync,
    pub tg_restrict: TgRestrict,
}

impl UclampSys {
    /// Boot state (`init_uclamp()`): all three sysctls 1024, key off.
    pub fn new(
        config: UclampConfig,
        static_key: StaticKeyMode,
        rt_sync: RtSync,
        tg_restrict: TgRestrict,
    ) -> UclampSys {
        UclampSys {
            config,
            util_min: SCHED_CAPACITY_SCALE,
            util_max: SCHED_CAPACITY_SCALE,
            util_min_rt_default: SCHED_CAPACITY_SCALE,
            uclamp_default: [config.se(SCHED_CAPACITY_SCALE, false); 2],
            used: false,
            static_key,
            rt_sync,
            tg_restrict,
        }
    }

    /// `uclamp_is_used()` as the fast path sees it: rq aggregation runs and cpufreq honours the
    /// rq clamps.
    pub fn active(&self) -> bool {
        self.used || self.static_key == StaticKeyMode::AlwaysActive
    }

    /// `static_branch_enable(&sched_uclamp_used)`. Called here for setattr and sysctl writes;
    /// the cgroup code calls it on every parsable `cpu.uclamp.{min,max}` write.
    pub fn enable_static_key(&mut self) {
        self.used = true;
    }

    /// `sysctl_sched_uclamp_handler()` for a write of `value` to `which`.
    ///
    /// `proc_dointvec()` rejects what is not an int; the variables are unsigned, so a negative
    /// int fails the range checks. Either way nothing changes (the handler's undo) and the
    /// result is EINVAL, as for min > max, max > 1024 or rt_default > 1024. The RT default is
    /// compared with neither min nor max. Writing the value a sysctl already has changes nothing
    /// and, as in v6.1, does not turn the static key on.
    pub fn write_sysctl(&mut self, which: Sysctl, value: i64) -> Result<WriteEffect, Errno> {
        let value = i32::try_from(value).map_err(|_| Errno::EINVAL)? as u32;
        let (mut min, mut max, mut min_rt) =
            (self.util_min, self.util_max, self.util_min_rt_default);
        match which {
            Sysctl::Min => min = value,
            Sysctl::Max => max = value,
            Sysctl::MinRtDefault => min_rt = value,
        }
        if min > max || max > SCHED_CAPACITY_SCALE || min_rt > SCHED_CAPACITY_SCALE {
            return Err(Errno::EINVAL);
        }

        let mut effect = WriteEffect::default();
        if min != self.util_min {
            self.util_min = min;
            self.uclamp_default[ClampId::Min.index()] = self.config.se(min, false);
            effect.update_root_tg = true;
        }
        if max != self.util_max {
            self.util_max = max;
            self.uclamp_default[ClampId::Max.index()] = self.config.se(max, false);
            effect.update_root_tg = true;
        }
        if effect.update_root_tg {
            self.enable_static_key();
        }
        if min_rt != self.util_min_rt_default {
            self.util_min_rt_default = min_rt;
            self.enable_static_key();
            // Only mainline walks the tasks; the lazy variants pick the value up later.
            effect.sync_rt_tasks = self.rt_sync == RtSync::Eager;
        }
        Ok(effect)
    }
}

/// How an effective value is computed for one task: its group and class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskCtx {
    /// `task_group(p)->uclamp[MIN/MAX].value` (the group's *effective* clamps), or `None` in
    /// the root group, in an autogroup, or without CONFIG_UCLAMP_TASK_GROUP: no restriction.
    pub group: Option<[u32; 2]>,
    /// `rt_task(p)`: `p->prio < MAX_RT_PRIO`, so also true for DL tasks and PI-boosted ones.
    pub is_rt: bool,
}

/// `uclamp_update_util_min_rt_default()`: an RT task whose min request is not user-defined
/// takes the current `sched_util_clamp_min_rt_default`. The v5 and fixed-v2 syncs compute the
/// same thing (the v5 one skips the store when the value is already there). Mainline calls it for every thread after a write that changed the RT
/// default ([`WriteEffect::sync_rt_tasks`]) and at [`uclamp_post_fork`]. The task's effective
/// value and rq bucket are left alone: an enqueued task sees the new request at its next enqueue.
pub fn sync_rt_default(task: &mut TaskUclamp, sys: &UclampSys, is_rt: bool) {
    let min = &mut task.req[ClampId::Min.index()];
    if is_rt && !min.user_defined {
        *min = sys.config.se(sys.util_min_rt_default, false);
    }
}

/// `uclamp_tg_restrict()`.
fn tg_restrict(req: UclampSe, id: ClampId, group: Option<[u32; 2]>, sys: &UclampSys) -> UclampSe {
    let Some(tg) = group else {
        return req;
    };
    match sys.tg_restrict {
        TgRestrict::V61 => {
            let value = req.value.max(tg[0]).min(tg[1]);
            sys.config.se(value, false)
        }
        TgRestrict::Pre514 => {
            let tg_value = tg[id.index()];
            if req.value > tg_value || !req.user_defined {
                sys.config.se(tg_value, false)
            } else {
                req
            }
        }
    }
}

/// `uclamp_eff_get()`: the request, restricted by the task group, capped by `uclamp_default[]`.
/// Under [`RtSync::V5LazyEffective`] the RT default is first synced into the MIN request, which
/// is why this takes the task mutably.
pub fn eff_get(task: &mut TaskUclamp, id: ClampId, ctx: TaskCtx, sys: &UclampSys) -> UclampSe {
    if sys.rt_sync == RtSync::V5LazyEffective && id == ClampId::Min {
        sync_rt_default(task, sys, ctx.is_rt);
    }
    let req = tg_restrict(task.req[id.index()], id, ctx.group, sys);
    let cap = sys.uclamp_default[id.index()];
    if req.value > cap.value {
        cap
    } else {
        req
    }
}

/// `uclamp_eff_value()`: the value refcounted on the rq while the task is enqueued with
/// aggregation on, else a fresh [`eff_get`]. Not gated by the static key: RT placement sees the
/// RT boost even while uclamp is otherwise unused (SPEC §4).
pub fn eff_value(task: &mut TaskUclamp, id: ClampId, ctx: TaskCtx, sys: &UclampSys) -> u32 {
    let eff = task.eff[id.index()];
    if eff.active {
        eff.value
    } else {
        eff_get(task, id, ctx, sys).value
    }
}

/// `uclamp_fork()` on a child that `dup_task_struct()` copied from `parent`: nothing is
/// refcounted yet, and with `sched_reset_on_fork` both requests go back to `uclamp_none()`.
/// No RT default there even for an RT parent: `sched_fork()` turns such a child into
/// SCHED_NORMAL right after (Quentin Perret's v5.7 fix removed the RT case).
pub fn uclamp_fork(parent: &TaskUclamp, reset_on_fork: bool, sys: &UclampSys) -> TaskUclamp {
    let mut child = *parent;
    for id in ClampId::ALL {
        child.eff[id.index()].active = false;
        if reset_on_fork {
            child.req[id.index()] = sys.config.se(id.none(), false);
        }
    }
    child
}

/// `uclamp_post_fork()`: closes the race between a fork and the eager sysctl walk by syncing
/// the RT default into the new task. The lazy variants had no such hook; their child keeps the
/// parent's request until the next lazy sync.
pub fn uclamp_post_fork(child: &mut TaskUclamp, sys: &UclampSys, is_rt: bool) {
    if sys.rt_sync == RtSync::Eager {
        sync_rt_default(child, sys, is_rt);
    }
}

/// `struct uclamp_bucket`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// RUNNABLE tasks refcounting this bucket.
    pub tasks: u32,
    /// The largest value enqueued since the bucket last became non-empty ("local max
    /// aggregation": not lowered when that task leaves while others stay).
    pub value: u32,
}

/// Fast-path uclamp operations on one rq, the cost the static key removes (seeds 000, 001).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UclampOps {
    /// `uclamp_rq_inc_id()` calls (two per enqueue).
    pub inc: u64,
    /// `uclamp_rq_dec_id()` calls that released a reference.
    pub dec: u64,
    /// `uclamp_rq_max_value()` scans.
    pub rescan: u64,
}

impl UclampOps {
    /// All bucket operations: increments, decrements and rescans.
    pub fn total(&self) -> u64 {
        self.inc + self.dec + self.rescan
    }
}

impl AddAssign for UclampOps {
    fn add_assign(&mut self, o: UclampOps) {
        self.inc += o.inc;
        self.dec += o.dec;
        self.rescan += o.rescan;
    }
}

/// `rq->uclamp[]` (`struct uclamp_rq`) and `rq->uclamp_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqUclamp {
    pub bucket: [[Bucket; UCLAMP_BUCKETS_MAX]; 2],
    /// `rq->uclamp[id].value`: max over non-empty buckets, or the idle value.
    pub value: [u32; 2],
    /// `UCLAMP_FLAG_IDLE`: no RUNNABLE task; MAX keeps the last task's clamp meanwhile.
    pub flags_idle: bool,
    pub ops: UclampOps,
}

impl Default for RqUclamp {
    /// `init_uclamp_rq()`: MIN 0, MAX 1024, idle.
    fn default() -> Self {
        RqUclamp {
            bucket: [[Bucket::default(); UCLAMP_BUCKETS_MAX]; 2],
            value: ClampId::ALL.map(ClampId::none),
            flags_idle: true,
            ops: UclampOps::default(),
        }
    }
}

impl RqUclamp {
    /// `uclamp_rq_inc()` past its two early returns: the caller has checked
    /// [`UclampSys::active`] and that the task's class is fair or RT (`uclamp_enabled`).
    /// Computes the task's effective clamps, refcounts them and raises the rq clamps.
    pub fn inc(&mut self, task: &mut TaskUclamp, ctx: TaskCtx, sys: &UclampSys) {
        debug_assert!(sys.active(), "uclamp_rq_inc() with the static key off");
        match sys.rt_sync {
            // The v2 patch synced here, on every enqueue.
            RtSync::V2LazyEnqueue => sync_rt_default(task, sys, ctx.is_rt),
            RtSync::V2MissingRtFilter => sync_rt_default(task, sys, true),
            RtSync::Eager | RtSync::V5LazyEffective => {}
        }
        for id in ClampId::ALL {
            self.inc_id(task, id, ctx, sys);
        }
        self.flags_idle = false;
    }

    /// `uclamp_rq_dec()` past its early returns (same caller checks as [`RqUclamp::inc`]).
    /// A task enqueued before the key was turned on holds no reference and is skipped.
    pub fn dec(&mut self, task: &mut TaskUclamp) {
        for id in ClampId::ALL {
            self.dec_id(task, id);
        }
    }

    /// `uclamp_update_active()` for a task on this rq (or last on it): move its references to
    /// freshly computed effective values. The cgroup code calls it for the tasks of a group
    /// whose effective clamps changed (`uclamp_update_active_tasks()`).
    pub fn update_active(&mut self, task: &mut TaskUclamp, ctx: TaskCtx, sys: &UclampSys) {
        for id in ClampId::ALL {
            // uclamp_rq_reinc_id()
            if !task.eff[id.index()].active {
                continue;
            }
            self.dec_id(task, id);
            self.inc_id(task, id, ctx, sys);
            // The dec may have emptied the rq for an instant and set the idle hold.
            if id == ClampId::Max {
                self.flags_idle = false;
            }
        }
    }

    /// `uclamp_rq_inc_id()`.
    fn inc_id(&mut self, task: &mut TaskUclamp, id: ClampId, ctx: TaskCtx, sys: &UclampSys) {
        let i = id.index();
        let mut se = eff_get(task, id, ctx, sys);
        se.active = true;
        task.eff[i] = se;
        self.ops.inc += 1;

        let bucket = &mut self.bucket[i][se.bucket_id as usize];
        bucket.tasks += 1;
        // uclamp_idle_reset(): the first task after idle replaces the held value.
        if self.flags_idle {
            self.value[i] = se.value;
        }
        if bucket.tasks == 1 || se.value > bucket.value {
            bucket.value = se.value;
        }
        if se.value > self.value[i] {
            self.value[i] = se.value;
        }
    }

    /// `uclamp_rq_dec_id()`.
    fn dec_id(&mut self, task: &mut TaskUclamp, id: ClampId) {
        let i = id.index();
        let se = &mut task.eff[i];
        if !se.active {
            return;
        }
        self.ops.dec += 1;
        let bucket = &mut self.bucket[i][se.bucket_id as usize];
        debug_assert!(bucket.tasks > 0, "uclamp bucket refcount underflow");
        bucket.tasks = bucket.tasks.saturating_sub(1);
        se.active = false;
        // Buckets still in use keep their value, possibly overboosting the tasks left in them.
        if bucket.tasks > 0 {
            return;
        }
        let (bucket_value, removed) = (bucket.value, se.value);
        debug_assert!(
            bucket_value <= self.value[i],
            "uclamp bucket above rq clamp"
        );
        // Only the bucket that defined the rq clamp forces a rescan; `>` is the kernel's
        // defensive fix-up of a broken invariant.
        if bucket_value >= self.value[i] {
            self.value[i] = self.max_value(id, removed);
        }
    }

    /// `uclamp_rq_max_value()`: the top non-empty bucket, or `uclamp_idle_value()`.
    fn max_value(&mut self, id: ClampId, removed: u32) -> u32 {
        self.ops.rescan += 1;
        if let Some(b) = self.bucket[id.index()].iter().rev().find(|b| b.tasks > 0) {
            return b.value;
        }
        match id {
            // Going idle: hold the last MAX clamp so blocked utilization does not raise the
            // frequency once the limit is gone.
            ClampId::Max => {
                self.flags_idle = true;
                removed
            }
            ClampId::Min => ClampId::Min.none(),
        }
    }

    /// Debug invariant check against the effective clamps of the tasks enqueued on this rq:
    /// bucket counts equal the refcounting tasks, no bucket is below a task it counts, the rq
    /// value is the max over non-empty buckets, and an empty rq is idle with MIN 0.
    pub fn check(&self, enqueued: impl IntoIterator<Item = [UclampSe; 2]>) {
        let mut tasks = [[0u32; UCLAMP_BUCKETS_MAX]; 2];
        let mut top = [[0u32; UCLAMP_BUCKETS_MAX]; 2];
        for eff in enqueued {
            for (i, se) in eff.iter().enumerate() {
                if se.active {
                    let b = se.bucket_id as usize;
                    tasks[i][b] += 1;
                    top[i][b] = top[i][b].max(se.value);
                }
            }
        }
        for i in 0..2 {
            let buckets = &self.bucket[i];
            for (b, (n, top)) in buckets.iter().zip(tasks[i].into_iter().zip(top[i])) {
                debug_assert_eq!(b.tasks, n, "uclamp bucket count (clamp {i})");
                debug_assert!(b.tasks == 0 || b.value >= top, "uclamp bucket below a task");
            }
            match buckets.iter().rev().find(|b| b.tasks > 0) {
                Some(b) => debug_assert_eq!(self.value[i], b.value, "uclamp rq value (clamp {i})"),
                None => {
                    debug_assert!(self.flags_idle, "empty uclamp rq not idle");
                    debug_assert_eq!(self.value[ClampId::Min.index()], 0, "idle uclamp min");
                }
            }
        }
    }
}

/// `rt_task_fits_capacity()` once `sched_asym_cpucap_active()` (the caller's check): the CPU's
/// original capacity covers the task's boost, itself limited by the task's max.
pub fn rt_task_fits_capacity(eff_min: u32, eff_max: u32, capacity_orig: u32) -> bool {
    capacity_orig >= eff_min.min(eff_max)
}

/// v6.1 fair.c `task_fits_capacity()`: `fits_capacity(uclamp_task_util(p), capacity)`, the
/// task's util_est clamped into its effective [min, max] (max wins if they cross, as the kernel's
/// `clamp()` does), with the ~20% margin `util * 1280 < capacity * 1024`.
pub fn task_fits_capacity(util_est: u64, eff_min: u32, eff_max: u32, capacity: u64) -> bool {
    let util = util_est.max(u64::from(eff_min)).min(u64::from(eff_max));
    util * 1280 < capacity * 1024
}

/// `uclamp_validate()` up to its `static_branch_enable()`.
pub(super) fn uclamp_validate(attr: &SchedAttr, current: &TaskUclamp) -> Result<(), Errno> {
    // SPEC §2.1: only -1 and 0..=1024 are valid. (v6.1's `util + 1 > SCHED_CAPACITY_SCALE + 1`
    // compares in long and so lets other negative values through; the model rejects them.)
    let valid = |v: i32| v == -1 || (0..=SCHED_CAPACITY_SCALE as i32).contains(&v);
    let mut util_min = current.req[ClampId::Min.index()].value as i32;
    let mut util_max = current.req[ClampId::Max.index()].value as i32;
    if attr.flags & SCHED_FLAG_UTIL_CLAMP_MIN != 0 {
        util_min = attr.util_min;
        if !valid(util_min) {
            return Err(Errno::EINVAL);
        }
    }
    if attr.flags & SCHED_FLAG_UTIL_CLAMP_MAX != 0 {
        util_max = attr.util_max;
        if !valid(util_max) {
            return Err(Errno::EINVAL);
        }
    }
    if util_min != -1 && util_max != -1 && util_min > util_max {
        return Err(Errno::EINVAL);
    }
    Ok(())
}

/// `__setscheduler_uclamp()`, called with the task dequeued (its references dropped) and its
/// new policy/priority already set, so `is_rt` is `rt_task(p)` *after* the change. Resets the
/// requests that follow the class default (not user-defined, on a call without clamp flags)
/// and those set to -1, then stores explicit values as user-defined. Without
/// CONFIG_UCLAMP_TASK the caller does not call it.
pub fn apply_setattr_uclamp(task: &mut TaskUclamp, attr: &SchedAttr, sys: &UclampSys, is_rt: bool) {
    let clamp_flags = attr.flags & SCHED_FLAG_UTIL_CLAMP;
    let request = |id: ClampId| match id {
        ClampId::Min => (SCHED_FLAG_UTIL_CLAMP_MIN, attr.util_min),
        ClampId::Max => (SCHED_FLAG_UTIL_CLAMP_MAX, attr.util_max),
    };
    for id in ClampId::ALL {
        let (flag, value) = request(id);
        let req = &mut task.req[id.index()];
        // uclamp_reset()
        let reset =
            (clamp_flags == 0 && !req.user_defined) || (attr.flags & flag != 0 && value == -1);
        if !reset {
            continue;
        }
        // The v5 patch dropped the RT case here and left it to the sync in eff_get().
        let value = if is_rt && id == ClampId::Min && sys.rt_sync != RtSync::V5LazyEffective {
            sys.util_min_rt_default
        } else {
            id.none()
        };
        *req = sys.config.se(value, false);
    }
    for id in ClampId::ALL {
        let (flag, value) = request(id);
        if attr.flags & flag != 0 && value != -1 {
            task.req[id.index()] = sys.config.se(value as u32, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sys(rt_sync: RtSync) -> UclampSys {
        UclampSys::new(
            UclampConfig::default(),
            StaticKeyMode::StaticKey,
            rt_sync,
            TgRestrict::V61,
        )
    }

    const ROOT_FAIR: TaskCtx = TaskCtx {
        group: None,
        is_rt: false,
    };

    #[test]
    fn bucket_arithmetic() {
        let c5 = UclampConfig::default();
        assert_eq!(c5.bucket_delta(), 205);
        assert_eq!(
            [0, 204, 205, 409, 410, 819, 820, 1024].map(|v| c5.bucket_id(v)),
            [0, 0, 1, 1, 2, 3, 4, 4]
        );
        let c20 = UclampConfig::new(20).unwrap();
        assert_eq!(c20.bucket_delta(), 51);
        assert_eq!(1024 / c20.bucket_delta(), 20);
        assert_eq!(c20.bucket_id(1024), 19);
        assert_eq!(UclampConfig::new(4), None);
        assert_eq!(UclampConfig::new(21), None);
    }

    #[test]
    fn rq_starts_idle_with_max_1024() {
        let rq = RqUclamp::default();
        assert_eq!(rq.value, [0, 1024]);
        assert!(rq.flags_idle);
        rq.check([]);
    }

    #[test]
    fn enqueue_dequeue_aggregates_and_holds_max_when_idle() {
        let mut s = sys(RtSync::Eager);
        s.enable_static_key();
        let mut rq = RqUclamp::default();
        let mut a = TaskUclamp::fair(&s);
        let mut b = TaskUclamp::fair(&s);
        a.req = [s.config.se(300, true), s.config.se(600, true)];
        b.req = [s.config.se(100, true), s.config.se(900, true)];

        rq.inc(&mut a, ROOT_FAIR, &s);
        assert_eq!(rq.value, [300, 600]);
        assert!(!rq.flags_idle);
        rq.inc(&mut b, ROOT_FAIR, &s);
        assert_eq!(rq.value, [300, 900]);
        rq.check([a.eff, b.eff]);

        rq.dec(&mut b);
        assert_eq!(rq.value, [300, 600]);
        rq.dec(&mut a);
        // MIN drops to 0, MAX keeps the last task's limit while idle.
        assert_eq!(rq.value, [0, 600]);
        assert!(rq.flags_idle);
        rq.check([]);
        // b's MIN bucket was below the rq clamp: three rescans, not four.
        assert_eq!(
            rq.ops,
            UclampOps {
                inc: 4,
                dec: 4,
                rescan: 3
            }
        );

        // The first task after idle replaces the held MAX even if lower.
        b.req[1] = s.config.se(200, true);
        rq.inc(&mut b, ROOT_FAIR, &s);
        assert_eq!(rq.value, [100, 200]);
    }

    #[test]
    fn bucket_keeps_its_max_until_empty() {
        let mut s = sys(RtSync::Eager);
        s.enable_static_key();
        let mut rq = RqUclamp::default();
        // 300 and 250 share bucket 1 (205..409).
        let mut a = TaskUclamp::fair(&s);
        let mut b = TaskUclamp::fair(&s);
        a.req[0] = s.config.se(300, true);
        b.req[0] = s.config.se(250, true);
        rq.inc(&mut a, ROOT_FAIR, &s);
        rq.inc(&mut b, ROOT_FAIR, &s);
        rq.dec(&mut a);
        assert_eq!(
            rq.value[0], 300,
            "overboost accepted while the bucket is in use"
        );
        rq.check([b.eff]);
    }

    #[test]
    fn dec_of_task_enqueued_before_the_key_is_a_no_op() {
        let mut s = sys(RtSync::Eager);
        let mut rq = RqUclamp::default();
        let mut early = TaskUclamp::fair(&s);
        s.enable_static_key();
        let mut late = TaskUclamp::fair(&s);
        rq.inc(&mut late, ROOT_FAIR, &s);
        rq.dec(&mut early);
        rq.check([early.eff, late.eff]);
        assert_eq!(rq.ops.dec, 0);
    }

    #[test]
    fn sysctl_write_enables_key_only_on_change() {
        let mut s = sys(RtSync::Eager);
        assert_eq!(
            s.write_sysctl(Sysctl::Min, 1024),
            Ok(WriteEffect::default())
        );
        assert!(!s.used);
        let e = s.write_sysctl(Sysctl::MinRtDefault, 128).unwrap();
        assert!(e.sync_rt_tasks && !e.update_root_tg && s.used);
    }

    #[test]
    fn tg_restrict_variants() {
        let mut s = sys(RtSync::Eager);
        let ctx = TaskCtx {
            group: Some([200, 800]),
            is_rt: false,
        };
        let mut t = TaskUclamp::fair(&s);
        // Default requests (0, 1024) are clamped into the group's range.
        assert_eq!(eff_get(&mut t, ClampId::Min, ctx, &s).value, 200);
        assert_eq!(eff_get(&mut t, ClampId::Max, ctx, &s).value, 800);
        t.req[0] = s.config.se(500, true);
        assert_eq!(eff_get(&mut t, ClampId::Min, ctx, &s).value, 500);

        s.tg_restrict = TgRestrict::Pre514;
        // A user-defined min above the group's min is cut down to it...
        assert_eq!(eff_get(&mut t, ClampId::Min, ctx, &s).value, 200);
        // ...and one below it stays below.
        t.req[0] = s.config.se(100, true);
        assert_eq!(eff_get(&mut t, ClampId::Min, ctx, &s).value, 100);
    }
}

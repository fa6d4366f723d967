//! The `sched_setattr()` ABI as v6.1's `kernel/sched/core.c` checks it: `struct sched_attr`
//! and its sizes, the policies and flags, `sys_sched_setattr()`'s checks up to the task
//! lookup (`sched_copy_attr()` included) and `__sched_setscheduler()`'s before the rq lock.
//! The uclamp half (`uclamp_validate()`, `__setscheduler_uclamp()`) is in `uclamp.rs`.

use super::sched::Errno;
use super::uclamp::{uclamp_validate, TaskUclamp, UclampSys};

pub const SCHED_NORMAL: i32 = 0;
pub const SCHED_FIFO: i32 = 1;
pub const SCHED_RR: i32 = 2;
pub const SCHED_BATCH: i32 = 3;
pub const SCHED_IDLE: i32 = 5;
pub const SCHED_DEADLINE: i32 = 6;
/// `SETPARAM_POLICY`: "keep the task's policy" (what SCHED_FLAG_KEEP_POLICY turns into).
pub const SETPARAM_POLICY: i32 = -1;

pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;
pub const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;
pub const SCHED_FLAG_KEEP_POLICY: u64 = 0x08;
pub const SCHED_FLAG_KEEP_PARAMS: u64 = 0x10;
pub const SCHED_FLAG_UTIL_CLAMP_MIN: u64 = 0x20;
pub const SCHED_FLAG_UTIL_CLAMP_MAX: u64 = 0x40;
/// From the latency-nice series (seed 002).
pub const SCHED_FLAG_LATENCY_NICE: u64 = 0x80;
pub const SCHED_FLAG_KEEP_ALL: u64 = SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS;
pub const SCHED_FLAG_UTIL_CLAMP: u64 = SCHED_FLAG_UTIL_CLAMP_MIN | SCHED_FLAG_UTIL_CLAMP_MAX;
/// `SCHED_FLAG_ALL` of v6.1, without the latency-nice flag.
pub const SCHED_FLAG_ALL: u64 = SCHED_FLAG_RESET_ON_FORK
    | SCHED_FLAG_RECLAIM
    | SCHED_FLAG_DL_OVERRUN
    | SCHED_FLAG_KEEP_ALL
    | SCHED_FLAG_UTIL_CLAMP;

/// `sizeof` the first published `struct sched_attr`.
pub const SCHED_ATTR_SIZE_VER0: u32 = 48;
/// With `sched_util_min`/`sched_util_max`.
pub const SCHED_ATTR_SIZE_VER1: u32 = 56;
/// With `sched_latency_nice` (seed 002).
pub const SCHED_ATTR_SIZE_VER2: u32 = 60;
/// The largest `size` `sched_copy_attr()` accepts.
pub const PAGE_SIZE: u32 = 4096;

/// `MAX_RT_PRIO`: RT priorities are 1..=99.
const MAX_RT_PRIO: u32 = 100;
const MIN_NICE: i32 = -20;
const MAX_NICE: i32 = 19;
const MIN_LATENCY_NICE: i32 = -20;
const MAX_LATENCY_NICE: i32 = 19;
/// `DL_SCALE`: DL runtimes below 2^10 ns would vanish in the kernel's fixed-point maths.
const DL_SCALE: u32 = 10;
/// `sysctl_sched_dl_period_max` / `_min` defaults, in µs.
const DL_PERIOD_MAX_US: u64 = 1 << 22;
const DL_PERIOD_MIN_US: u64 = 100;

/// `struct sched_attr` as user space passes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAttr {
    pub size: u32,
    /// `sched_policy` (a `__u32`, read as an int: negative is EINVAL).
    pub policy: i32,
    pub flags: u64,
    pub nice: i32,
    pub priority: u32,
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
    /// `sched_util_min` (a `__u32`; -1 resets to the default).
    pub util_min: i32,
    pub util_max: i32,
    pub latency_nice: i32,
    /// Bytes past the kernel's `struct sched_attr` (when `size` is larger) are not all zero.
    pub trailing_nonzero: bool,
}

/// Kernel configuration the ABI checks depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetattrConfig {
    /// `CONFIG_UCLAMP_TASK`.
    pub uclamp_task: bool,
    /// The latency-nice series is applied: SCHED_FLAG_LATENCY_NICE exists and the kernel's
    /// struct is VER2.
    pub latency_nice: bool,
}

/// What `__sched_setscheduler()` reads of its target besides the attr.
#[derive(Clone, Copy, Debug)]
pub struct SetattrTask<'a> {
    pub policy: i32,
    pub reset_on_fork: bool,
    pub uclamp: &'a TaskUclamp,
}

fn rt_policy(policy: i32) -> bool {
    policy == SCHED_FIFO || policy == SCHED_RR
}

/// `__checkparam_dl()` with the default `sched_deadline_period_{min,max}_us`.
fn checkparam_dl(attr: &SchedAttr) -> bool {
    const MSB: u64 = 1 << 63;
    if attr.deadline == 0 || attr.runtime < (1 << DL_SCALE) {
        return false;
    }
    if attr.deadline & MSB != 0 || attr.period & MSB != 0 {
        return false;
    }
    let period = if attr.period == 0 {
        attr.deadline
    } else {
        attr.period
    };
    period >= attr.deadline
        && attr.deadline >= attr.runtime
        && (DL_PERIOD_MIN_US * 1000..=DL_PERIOD_MAX_US * 1000).contains(&period)
}

/// The checks `sys_sched_setattr()` makes before it looks the task up, `sched_copy_attr()`
/// included, so they take precedence over ESRCH. Returns the attr the kernel goes on with: the
/// size resolved (0 means VER0), fields past `size` zeroed (a field counts as copied only if
/// `size` covers all of it), `nice` clamped silently to -20..=19, and the policy replaced by
/// [`SETPARAM_POLICY`] under SCHED_FLAG_KEEP_POLICY. The caller then returns ESRCH if `pid`
/// names no task, and under SCHED_FLAG_KEEP_PARAMS overwrites the priority / nice / DL
/// parameters with the task's own (`get_params()`) before [`validate_setattr`].
pub fn setattr_syscall_checks(
    pid: i32,
    syscall_flags: u32,
    attr: &SchedAttr,
    config: SetattrConfig,
) -> Result<SchedAttr, Errno> {
    if pid < 0 || syscall_flags != 0 {
        return Err(Errno::EINVAL);
    }
    let size = if attr.size == 0 {
        SCHED_ATTR_SIZE_VER0
    } else {
        attr.size
    };
    if !(SCHED_ATTR_SIZE_VER0..=PAGE_SIZE).contains(&size) {
        return Err(Errno::E2BIG);
    }
    // copy_struct_from_user(): a larger user struct must be zero past what the kernel knows.
    let ksize = if config.latency_nice {
        SCHED_ATTR_SIZE_VER2
    } else {
        SCHED_ATTR_SIZE_VER1
    };
    let unknown_latency = !config.latency_nice && size >= SCHED_ATTR_SIZE_VER2;
    if size > ksize && (attr.trailing_nonzero || unknown_latency && attr.latency_nice != 0) {
        return Err(Errno::E2BIG);
    }
    let mut a = *attr;
    a.size = size;
    a.trailing_nonzero = false;
    if size < SCHED_ATTR_SIZE_VER0 + 4 {
        a.util_min = 0;
    }
    if size < SCHED_ATTR_SIZE_VER1 {
        a.util_max = 0;
    }
    if size < SCHED_ATTR_SIZE_VER2 || !config.latency_nice {
        a.latency_nice = 0;
    }
    if a.flags & SCHED_FLAG_UTIL_CLAMP != 0 && size < SCHED_ATTR_SIZE_VER1 {
        return Err(Errno::EINVAL);
    }
    if config.latency_nice && a.flags & SCHED_FLAG_LATENCY_NICE != 0 && size < SCHED_ATTR_SIZE_VER2
    {
        return Err(Errno::EINVAL);
    }
    a.nice = a.nice.clamp(MIN_NICE, MAX_NICE);
    if a.policy < 0 {
        return Err(Errno::EINVAL);
    }
    if a.flags & SCHED_FLAG_KEEP_POLICY != 0 {
        a.policy = SETPARAM_POLICY;
    }
    Ok(a)
}

/// The checks `__sched_setscheduler()` makes before taking the rq lock, for a user caller
/// (permission checks, which would give EPERM, are not modelled). `attr` is what
/// [`setattr_syscall_checks`] returned, after the caller's KEEP_PARAMS substitution.
///
/// Validated clamp flags turn the static key on here, as `uclamp_validate()` does, so a reset
/// to -1 counts and the key stays on even if a later check (latency nice) fails.
///
/// Returns the attr to apply: `policy` resolved to the task's for [`SETPARAM_POLICY`], and
/// SCHED_FLAG_RESET_ON_FORK set to the `sched_reset_on_fork` the task ends up with (its old
/// one when the policy is kept).
pub fn validate_setattr(
    attr: &SchedAttr,
    task: SetattrTask<'_>,
    config: SetattrConfig,
    sys: &mut UclampSys,
) -> Result<SchedAttr, Errno> {
    let mut a = *attr;
    let reset_on_fork = if a.policy < 0 {
        a.policy = task.policy;
        task.reset_on_fork
    } else {
        if !matches!(
            a.policy,
            SCHED_NORMAL | SCHED_FIFO | SCHED_RR | SCHED_BATCH | SCHED_IDLE | SCHED_DEADLINE
        ) {
            return Err(Errno::EINVAL);
        }
        a.flags & SCHED_FLAG_RESET_ON_FORK != 0
    };
    // SCHED_FLAG_SUGOV is known to the kernel but refused to user space: EINVAL either way.
    let known = if config.latency_nice {
        SCHED_FLAG_ALL | SCHED_FLAG_LATENCY_NICE
    } else {
        SCHED_FLAG_ALL
    };
    if a.flags & !known != 0 {
        return Err(Errno::EINVAL);
    }
    if a.priority > MAX_RT_PRIO - 1 {
        return Err(Errno::EINVAL);
    }
    if (a.policy == SCHED_DEADLINE && !checkparam_dl(&a))
        || rt_policy(a.policy) != (a.priority != 0)
    {
        return Err(Errno::EINVAL);
    }
    if a.flags & SCHED_FLAG_UTIL_CLAMP != 0 {
        if !config.uclamp_task {
            return Err(Errno::EOPNOTSUPP);
        }
        uclamp_validate(&a, task.uclamp)?;
        sys.enable_static_key();
    }
    if a.flags & SCHED_FLAG_LATENCY_NICE != 0
        && !(MIN_LATENCY_NICE..=MAX_LATENCY_NICE).contains(&a.latency_nice)
    {
        return Err(Errno::EINVAL);
    }
    if reset_on_fork {
        a.flags |= SCHED_FLAG_RESET_ON_FORK;
    } else {
        a.flags &= !SCHED_FLAG_RESET_ON_FORK;
    }
    Ok(a)
}

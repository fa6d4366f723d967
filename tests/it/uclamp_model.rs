//! uclamp model against kernel behaviour (SPEC §2.1, §4, §6; seeds 000 and 001).

use proptest::prelude::*;
use schedlab::kernel::sched::Errno;
use schedlab::kernel::setattr::*;
use schedlab::kernel::uclamp::*;

const MIN: usize = 0;
const MAX: usize = 1;

fn sys_with(rt_sync: RtSync, tg: TgRestrict) -> UclampSys {
    UclampSys::new(
        UclampConfig::default(),
        StaticKeyMode::StaticKey,
        rt_sync,
        tg,
    )
}

fn sys(rt_sync: RtSync) -> UclampSys {
    sys_with(rt_sync, TgRestrict::V61)
}

fn ctx(is_rt: bool) -> TaskCtx {
    TaskCtx { group: None, is_rt }
}

const CFG: SetattrConfig = SetattrConfig {
    uclamp_task: true,
    latency_nice: true,
};

/// A VER1 uclamp-only call as rt-app makes it: keep policy and params, set the clamps.
fn clamp_attr(min: Option<i32>, max: Option<i32>) -> SchedAttr {
    let mut a = SchedAttr {
        size: SCHED_ATTR_SIZE_VER1,
        flags: SCHED_FLAG_KEEP_ALL,
        ..SchedAttr::default()
    };
    if let Some(v) = min {
        a.flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
        a.util_min = v;
    }
    if let Some(v) = max {
        a.flags |= SCHED_FLAG_UTIL_CLAMP_MAX;
        a.util_max = v;
    }
    a
}

/// The whole syscall for a task with policy `policy` (fair nice 0 or RT priority 50).
fn setattr(
    attr: &SchedAttr,
    policy: i32,
    task: &TaskUclamp,
    config: SetattrConfig,
    s: &mut UclampSys,
) -> Result<SchedAttr, Errno> {
    let mut a = setattr_syscall_checks(0, 0, attr, config)?;
    if a.flags & SCHED_FLAG_KEEP_PARAMS != 0 {
        // get_params()
        if policy == SCHED_FIFO || policy == SCHED_RR {
            a.priority = 50;
        } else {
            a.nice = 0;
        }
    }
    let t = SetattrTask {
        policy,
        reset_on_fork: false,
        uclamp: task,
    };
    validate_setattr(&a, t, config, s)
}

#[test]
fn bucket_ids() {
    let c = UclampConfig::default();
    assert_eq!(c.buckets(), 5);
    assert_eq!(c.bucket_delta(), 205);
    for (v, b) in [
        (0, 0),
        (204, 0),
        (205, 1),
        (512, 2),
        (819, 3),
        (820, 4),
        (1024, 4),
    ] {
        assert_eq!(c.bucket_id(v), b, "value {v}");
    }
    // 20 buckets: the rounded delta (51) puts 1020..=1024 one past the end; they are folded
    // into the last bucket.
    let c = UclampConfig::new(20).unwrap();
    assert_eq!(c.bucket_delta(), 51);
    assert_eq!(c.bucket_id(1019), 19);
    assert_eq!(c.bucket_id(1020), 19);
    assert_eq!(c.bucket_id(1024), 19);
    assert_eq!(c.se(1024, false).bucket_id, 19);
}

#[test]
fn defaults() {
    let s = sys(RtSync::Eager);
    assert_eq!(
        (s.util_min, s.util_max, s.util_min_rt_default),
        (1024, 1024, 1024)
    );
    assert!(!s.used && !s.active());
    let fair = TaskUclamp::fair(&s);
    let rt = TaskUclamp::rt(&s);
    assert_eq!((fair.req[MIN].value, fair.req[MAX].value), (0, 1024));
    assert_eq!((rt.req[MIN].value, rt.req[MAX].value), (1024, 1024));
    assert!(!rt.req[MIN].user_defined);
    let always = UclampSys::new(
        UclampConfig::default(),
        StaticKeyMode::AlwaysActive,
        RtSync::Eager,
        TgRestrict::V61,
    );
    assert!(always.active() && !always.used);
}

#[test]
fn switch_names_round_trip() {
    for m in [StaticKeyMode::StaticKey, StaticKeyMode::AlwaysActive] {
        assert_eq!(StaticKeyMode::from_name(m.name()), Some(m));
    }
    for m in [
        RtSync::Eager,
        RtSync::V5LazyEffective,
        RtSync::V2LazyEnqueue,
        RtSync::V2MissingRtFilter,
    ] {
        assert_eq!(RtSync::from_name(m.name()), Some(m));
    }
    for m in [TgRestrict::V61, TgRestrict::Pre514] {
        assert_eq!(TgRestrict::from_name(m.name()), Some(m));
    }
    for m in [Sysctl::Min, Sysctl::Max, Sysctl::MinRtDefault] {
        assert_eq!(Sysctl::from_name(m.name()), Some(m));
    }
    assert_eq!(RtSync::default(), RtSync::Eager);
    assert_eq!(Errno::E2BIG.to_string(), "E2BIG");
}

#[test]
fn idle_holds_the_last_max_clamp() {
    let mut s = sys(RtSync::Eager);
    s.enable_static_key();
    let mut rq = RqUclamp::default();
    let mut t = TaskUclamp::fair(&s);
    apply_setattr_uclamp(&mut t, &clamp_attr(Some(100), Some(300)), &s, false);
    rq.inc(&mut t, ctx(false), &s);
    assert_eq!(rq.value, [100, 300]);
    rq.dec(&mut t);
    assert!(rq.flags_idle);
    assert_eq!(rq.value, [0, 300], "MIN drops, MAX is held while idle");
    rq.check([t.eff]);
    let mut u = TaskUclamp::fair(&s);
    rq.inc(&mut u, ctx(false), &s);
    assert_eq!(rq.value, [0, 1024]);
    assert!(!rq.flags_idle);
}

#[test]
fn sysctl_validation_undoes_the_whole_write() {
    let mut s = sys(RtSync::Eager);
    // Both start at 1024, so the max cannot go down before the min does.
    assert_eq!(s.write_sysctl(Sysctl::Max, 800), Err(Errno::EINVAL));
    s.write_sysctl(Sysctl::Min, 500).unwrap();
    s.write_sysctl(Sysctl::Max, 800).unwrap();
    let before = s;
    let bad = [
        (Sysctl::Min, 801),  // min > max
        (Sysctl::Max, 499),  // max < min
        (Sysctl::Max, 1025), // max > 1024
        (Sysctl::MinRtDefault, 1025),
        (Sysctl::Min, -1), // negative: an unsigned variable, so far above max
        (Sysctl::MinRtDefault, -5),
        (Sysctl::Max, 1 << 40), // not an int
    ];
    for (which, v) in bad {
        assert_eq!(
            s.write_sysctl(which, v),
            Err(Errno::EINVAL),
            "{} = {v}",
            which.name()
        );
        assert_eq!(s, before, "{} = {v} left a trace", which.name());
    }
    // The RT default is compared with neither min nor max.
    assert!(s.write_sysctl(Sysctl::MinRtDefault, 1024).is_ok());
    assert!(s.write_sysctl(Sysctl::MinRtDefault, 900).is_ok());
    assert_eq!(s.uclamp_default[MIN].value, 500);
    assert_eq!(s.uclamp_default[MAX].value, 800);
}

#[test]
fn sysctl_static_key_and_effects() {
    let mut s = sys(RtSync::Eager);
    // Same value: nothing changes, the key stays off.
    for which in [Sysctl::Min, Sysctl::Max, Sysctl::MinRtDefault] {
        assert_eq!(s.write_sysctl(which, 1024), Ok(WriteEffect::default()));
    }
    assert!(!s.used);
    // A failed write does not turn it on either.
    assert!(s.write_sysctl(Sysctl::Max, 2000).is_err());
    assert!(!s.used);
    let e = s.write_sysctl(Sysctl::Min, 1000).unwrap();
    assert_eq!(
        e,
        WriteEffect {
            update_root_tg: true,
            sync_rt_tasks: false
        }
    );
    assert!(s.used);

    let mut s = sys(RtSync::Eager);
    let e = s.write_sysctl(Sysctl::MinRtDefault, 128).unwrap();
    assert!(s.used && e.sync_rt_tasks && !e.update_root_tg);
    // Lazy variants never ask for the walk.
    for v in [
        RtSync::V5LazyEffective,
        RtSync::V2LazyEnqueue,
        RtSync::V2MissingRtFilter,
    ] {
        let mut s = sys(v);
        let e = s.write_sysctl(Sysctl::MinRtDefault, 128).unwrap();
        assert!(s.used && !e.sync_rt_tasks, "{}", v.name());
    }
}

/// Seed 000, Dietmar's test: `echo 999 > sched_util_clamp_min_rt_default` gives an RT task an
/// effective min of 999; then `echo 666 > sched_util_clamp_min` caps it to 666.
#[test]
fn dietmar_rt_default_then_system_min() {
    for v in [
        RtSync::Eager,
        RtSync::V5LazyEffective,
        RtSync::V2LazyEnqueue,
        RtSync::V2MissingRtFilter,
    ] {
        let mut s = sys(v);
        let mut rq = RqUclamp::default();
        let mut p = TaskUclamp::rt(&s);
        let e = s.write_sysctl(Sysctl::MinRtDefault, 999).unwrap();
        if e.sync_rt_tasks {
            sync_rt_default(&mut p, &s, true);
        }
        // The next wakeup: enqueue (the static key is on since the write).
        assert!(s.active());
        rq.inc(&mut p, ctx(true), &s);
        assert_eq!(p.eff[MIN].value, 999, "{}", v.name());
        assert_eq!(p.req[MIN].value, 999, "{}", v.name());
        assert_eq!(rq.value[MIN], 999);
        rq.dec(&mut p);

        s.write_sysctl(Sysctl::Min, 666).unwrap();
        rq.inc(&mut p, ctx(true), &s);
        assert_eq!(p.eff[MIN].value, 666, "{}", v.name());
        assert_eq!(p.req[MIN].value, 999, "the request is untouched");
        assert_eq!(eff_value(&mut p, ClampId::Min, ctx(true), &s), 666);
        rq.dec(&mut p);
        rq.check([p.eff]);
    }
}

#[test]
fn eager_sync_updates_requests_not_enqueued_effective_values() {
    let mut s = sys(RtSync::Eager);
    s.enable_static_key();
    let mut rq = RqUclamp::default();
    let mut queued = TaskUclamp::rt(&s);
    let mut sleeping = TaskUclamp::rt(&s);
    let mut pinned = TaskUclamp::rt(&s);
    let mut fair = TaskUclamp::fair(&s);
    apply_setattr_uclamp(&mut pinned, &clamp_attr(Some(700), None), &s, true);
    rq.inc(&mut queued, ctx(true), &s);

    let e = s.write_sysctl(Sysctl::MinRtDefault, 128).unwrap();
    assert!(e.sync_rt_tasks);
    sync_rt_default(&mut queued, &s, true);
    sync_rt_default(&mut sleeping, &s, true);
    sync_rt_default(&mut pinned, &s, true);
    sync_rt_default(&mut fair, &s, false);

    assert_eq!(queued.req[MIN].value, 128);
    assert_eq!(sleeping.req[MIN].value, 128);
    assert_eq!(pinned.req[MIN].value, 700, "user-defined min is kept");
    assert_eq!(fair.req[MIN].value, 0, "fair tasks are not RT");
    // The enqueued task keeps its refcounted value until its next enqueue...
    assert_eq!(eff_value(&mut queued, ClampId::Min, ctx(true), &s), 1024);
    assert_eq!(rq.value[MIN], 1024);
    // ...while placement of the sleeping one already sees the new request.
    assert_eq!(eff_value(&mut sleeping, ClampId::Min, ctx(true), &s), 128);
    rq.dec(&mut queued);
    rq.inc(&mut queued, ctx(true), &s);
    assert_eq!(rq.value[MIN], 128);
}

#[test]
fn v2_lazy_enqueue_places_first_wakeup_with_the_old_value() {
    let mut s = sys(RtSync::V2LazyEnqueue);
    let mut rq = RqUclamp::default();
    let mut p = TaskUclamp::rt(&s);
    s.write_sysctl(Sysctl::MinRtDefault, 128).unwrap();
    // select_task_rq_rt() runs before the enqueue: old boost, big CPU only.
    let min = eff_value(&mut p, ClampId::Min, ctx(true), &s);
    let max = eff_value(&mut p, ClampId::Max, ctx(true), &s);
    assert_eq!(min, 1024);
    assert!(!rt_task_fits_capacity(min, max, 404));
    rq.inc(&mut p, ctx(true), &s);
    assert_eq!(p.req[MIN].value, 128);
    assert_eq!(p.eff[MIN].value, 128);
    rq.dec(&mut p);
    assert!(rt_task_fits_capacity(
        eff_value(&mut p, ClampId::Min, ctx(true), &s),
        eff_value(&mut p, ClampId::Max, ctx(true), &s),
        404
    ));
    // A fair task is untouched by the fixed v2 patch.
    let mut f = TaskUclamp::fair(&s);
    rq.inc(&mut f, ctx(false), &s);
    assert_eq!(f.eff[MIN].value, 0);
}

#[test]
fn v5_lazy_effective_syncs_in_eff_get_but_not_for_refcounted_tasks() {
    let mut s = sys(RtSync::V5LazyEffective);
    s.enable_static_key();
    let mut rq = RqUclamp::default();
    let mut queued = TaskUclamp::rt(&s);
    let mut sleeping = TaskUclamp::rt(&s);
    rq.inc(&mut queued, ctx(true), &s);
    s.write_sysctl(Sysctl::MinRtDefault, 300).unwrap();
    // Not enqueued: the placement path computes the effective value and syncs the request.
    assert_eq!(eff_value(&mut sleeping, ClampId::Min, ctx(true), &s), 300);
    assert_eq!(sleeping.req[MIN].value, 300);
    // Enqueued: uclamp_eff_value() returns the refcounted value without syncing.
    assert_eq!(eff_value(&mut queued, ClampId::Min, ctx(true), &s), 1024);
    assert_eq!(queued.req[MIN].value, 1024);
    // The v5 __setscheduler_uclamp() resets an RT min to 0; the next computation fixes it.
    let mut t = TaskUclamp::rt(&s);
    apply_setattr_uclamp(&mut t, &clamp_attr(Some(-1), None), &s, true);
    assert_eq!(t.req[MIN].value, 0);
    assert_eq!(eff_value(&mut t, ClampId::Min, ctx(true), &s), 300);
    // A fair task is never synced.
    let mut f = TaskUclamp::fair(&s);
    assert_eq!(eff_value(&mut f, ClampId::Min, ctx(false), &s), 0);
}

#[test]
fn v2_missing_rt_filter_boosts_fair_tasks() {
    let mut s = sys(RtSync::V2MissingRtFilter);
    s.enable_static_key();
    let mut rq = RqUclamp::default();
    let mut fair = TaskUclamp::fair(&s);
    rq.inc(&mut fair, ctx(false), &s);
    // Even without touching the RT default, its value (1024) lands on the fair task.
    assert_eq!(fair.req[MIN].value, 1024);
    assert_eq!(fair.eff[MIN].value, 1024);
    assert_eq!(rq.value[MIN], 1024);
    rq.dec(&mut fair);
    s.write_sysctl(Sysctl::MinRtDefault, 128).unwrap();
    rq.inc(&mut fair, ctx(false), &s);
    assert_eq!(fair.eff[MIN].value, 128);
    rq.dec(&mut fair);
    // A user-defined min escapes it.
    let mut pinned = TaskUclamp::fair(&s);
    apply_setattr_uclamp(&mut pinned, &clamp_attr(Some(50), None), &s, false);
    rq.inc(&mut pinned, ctx(false), &s);
    assert_eq!(pinned.eff[MIN].value, 50);
}

#[test]
fn fork_and_post_fork() {
    let mut s = sys(RtSync::Eager);
    s.enable_static_key();
    let mut rq = RqUclamp::default();
    let mut parent = TaskUclamp::rt(&s);
    apply_setattr_uclamp(&mut parent, &clamp_attr(None, Some(800)), &s, true);
    rq.inc(&mut parent, ctx(true), &s);

    let child = uclamp_fork(&parent, false, &s);
    assert_eq!(child.req, parent.req, "requests are inherited");
    assert!(!child.eff[MIN].active && !child.eff[MAX].active);

    let reset = uclamp_fork(&parent, true, &s);
    assert_eq!((reset.req[MIN].value, reset.req[MAX].value), (0, 1024));
    assert!(!reset.req[MAX].user_defined);

    // The RT default changed between the fork and the walk: post_fork catches it up.
    let mut child = uclamp_fork(&parent, false, &s);
    s.util_min_rt_default = 200; // as if the write raced with the fork
    uclamp_post_fork(&mut child, &s, true);
    assert_eq!(child.req[MIN].value, 200);

    let mut lazy = sys(RtSync::V2LazyEnqueue);
    let mut child = uclamp_fork(&TaskUclamp::rt(&lazy), false, &lazy);
    lazy.util_min_rt_default = 200;
    uclamp_post_fork(&mut child, &lazy, true);
    assert_eq!(
        child.req[MIN].value, 1024,
        "no post-fork hook in the v2 patch"
    );
}

#[test]
fn setattr_uclamp_apply() {
    let s = sys(RtSync::Eager);
    let mut t = TaskUclamp::fair(&s);
    apply_setattr_uclamp(&mut t, &clamp_attr(Some(300), Some(700)), &s, false);
    assert_eq!(t.req[MIN], s.config.se(300, true));
    assert_eq!(t.req[MAX], s.config.se(700, true));
    // -1 resets to the default and drops user_defined.
    apply_setattr_uclamp(&mut t, &clamp_attr(Some(-1), None), &s, false);
    assert_eq!(t.req[MIN], s.config.se(0, false));
    assert_eq!(t.req[MAX].value, 700);
    // A class change without clamp flags: non-user-defined values follow the new class.
    let to_rt = SchedAttr {
        size: SCHED_ATTR_SIZE_VER1,
        policy: SCHED_FIFO,
        priority: 10,
        ..SchedAttr::default()
    };
    apply_setattr_uclamp(&mut t, &to_rt, &s, true);
    assert_eq!(t.req[MIN], s.config.se(1024, false));
    assert_eq!(
        t.req[MAX].value, 700,
        "user-defined max survives the class change"
    );
    let to_fair = SchedAttr {
        size: SCHED_ATTR_SIZE_VER1,
        ..SchedAttr::default()
    };
    apply_setattr_uclamp(&mut t, &to_fair, &s, false);
    assert_eq!(t.req[MIN].value, 0);
    // Resetting an RT task's min gives the RT default.
    let mut r = TaskUclamp::rt(&s);
    apply_setattr_uclamp(&mut r, &clamp_attr(Some(10), None), &s, true);
    apply_setattr_uclamp(&mut r, &clamp_attr(Some(-1), Some(-1)), &s, true);
    assert_eq!(r.req, TaskUclamp::rt(&s).req);
}

#[test]
fn setattr_size_and_syscall_errors() {
    let s0 = sys(RtSync::Eager);
    let t = TaskUclamp::fair(&s0);
    let run = |attr: SchedAttr| {
        let mut s = sys(RtSync::Eager);
        setattr(&attr, SCHED_NORMAL, &t, CFG, &mut s)
    };
    let base = SchedAttr::default();
    // size 0 is VER0.
    assert_eq!(run(base).map(|a| a.size), Ok(SCHED_ATTR_SIZE_VER0));
    for size in [1, 47, PAGE_SIZE + 1] {
        assert_eq!(
            run(SchedAttr { size, ..base }),
            Err(Errno::E2BIG),
            "size {size}"
        );
    }
    assert!(run(SchedAttr {
        size: PAGE_SIZE,
        ..base
    })
    .is_ok());
    let tail = SchedAttr {
        size: 64,
        trailing_nonzero: true,
        ..base
    };
    assert_eq!(run(tail), Err(Errno::E2BIG));
    assert!(run(SchedAttr { size: 64, ..base }).is_ok());
    // Without the latency-nice series the kernel struct ends at 56: a nonzero latency_nice is
    // an unknown trailing byte.
    let mainline = SetattrConfig {
        uclamp_task: true,
        latency_nice: false,
    };
    let ln = SchedAttr {
        size: SCHED_ATTR_SIZE_VER2,
        latency_nice: 3,
        ..base
    };
    assert_eq!(
        setattr_syscall_checks(0, 0, &ln, mainline),
        Err(Errno::E2BIG)
    );
    assert!(setattr_syscall_checks(0, 0, &ln, CFG).is_ok());
    assert_eq!(
        setattr_syscall_checks(-1, 0, &base, CFG),
        Err(Errno::EINVAL)
    );
    assert_eq!(setattr_syscall_checks(0, 1, &base, CFG), Err(Errno::EINVAL));
    // Size errors come before a bad policy.
    let both = SchedAttr {
        size: 20,
        policy: -3,
        ..base
    };
    assert_eq!(run(both), Err(Errno::E2BIG));
    assert_eq!(run(SchedAttr { policy: -3, ..base }), Err(Errno::EINVAL));
    // Nice is clamped, not rejected.
    assert_eq!(run(SchedAttr { nice: 40, ..base }).map(|a| a.nice), Ok(19));
    assert_eq!(
        run(SchedAttr { nice: -99, ..base }).map(|a| a.nice),
        Ok(-20)
    );
    // Fields past the size are not read.
    let short = SchedAttr {
        size: SCHED_ATTR_SIZE_VER0,
        util_min: 5,
        util_max: 6,
        ..base
    };
    let a = run(short).unwrap();
    assert_eq!((a.util_min, a.util_max), (0, 0));
}

#[test]
fn setattr_policy_flag_priority_errors() {
    let s0 = sys(RtSync::Eager);
    let t = TaskUclamp::fair(&s0);
    let run = |attr: SchedAttr| {
        let mut s = sys(RtSync::Eager);
        setattr(&attr, SCHED_NORMAL, &t, CFG, &mut s)
    };
    let base = SchedAttr {
        size: SCHED_ATTR_SIZE_VER2,
        ..SchedAttr::default()
    };
    for policy in [4, 7, 100] {
        assert_eq!(
            run(SchedAttr { policy, ..base }),
            Err(Errno::EINVAL),
            "policy {policy}"
        );
    }
    for flags in [0x100, 0x1000_0000 /* SUGOV */, 1 << 40] {
        assert_eq!(
            run(SchedAttr { flags, ..base }),
            Err(Errno::EINVAL),
            "flags {flags:#x}"
        );
    }
    let fifo = |priority| SchedAttr {
        policy: SCHED_FIFO,
        priority,
        ..base
    };
    assert_eq!(run(fifo(0)), Err(Errno::EINVAL));
    assert_eq!(run(fifo(100)), Err(Errno::EINVAL));
    assert!(run(fifo(1)).is_ok() && run(fifo(99)).is_ok());
    assert_eq!(
        run(SchedAttr {
            priority: 1,
            ..base
        }),
        Err(Errno::EINVAL)
    );
    let batch = SchedAttr {
        policy: SCHED_BATCH,
        ..base
    };
    assert!(run(batch).is_ok());
    // Deadline parameters: runtime <= deadline <= period, period within 100 µs..~4 s.
    let dl = |runtime, deadline, period| SchedAttr {
        policy: SCHED_DEADLINE,
        runtime,
        deadline,
        period,
        ..base
    };
    assert!(run(dl(1_000_000, 5_000_000, 10_000_000)).is_ok());
    assert!(run(dl(1_000_000, 5_000_000, 0)).is_ok());
    assert_eq!(run(dl(1_000_000, 0, 0)), Err(Errno::EINVAL));
    assert_eq!(run(dl(6_000_000, 5_000_000, 0)), Err(Errno::EINVAL));
    assert_eq!(run(dl(500, 5_000_000, 0)), Err(Errno::EINVAL));
    assert_eq!(run(dl(10_000, 50_000, 0)), Err(Errno::EINVAL));
    // KEEP_POLICY: the task's policy and reset_on_fork stay.
    let keep = SchedAttr {
        policy: SCHED_FIFO,
        flags: SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_RESET_ON_FORK,
        ..base
    };
    let a = run(keep).unwrap();
    assert_eq!(a.policy, SCHED_NORMAL);
    assert_eq!(a.flags & SCHED_FLAG_RESET_ON_FORK, 0);
    let rof = SchedAttr {
        flags: SCHED_FLAG_RESET_ON_FORK,
        ..base
    };
    assert_ne!(run(rof).unwrap().flags & SCHED_FLAG_RESET_ON_FORK, 0);
}

#[test]
fn setattr_uclamp_errors() {
    let mut s = sys(RtSync::Eager);
    let fair = TaskUclamp::fair(&s);
    for v in [1025, -2, i32::MIN, i32::MAX] {
        let a = clamp_attr(Some(v), None);
        assert_eq!(
            setattr(&a, SCHED_NORMAL, &fair, CFG, &mut s),
            Err(Errno::EINVAL),
            "min {v}"
        );
        let a = clamp_attr(None, Some(v));
        assert_eq!(
            setattr(&a, SCHED_NORMAL, &fair, CFG, &mut s),
            Err(Errno::EINVAL),
            "max {v}"
        );
    }
    assert!(!s.used, "invalid clamps do not turn the key on");
    // Clamp flags need VER1.
    let mut short = clamp_attr(Some(10), None);
    short.size = SCHED_ATTR_SIZE_VER0;
    assert_eq!(
        setattr(&short, SCHED_NORMAL, &fair, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    // min > max, the missing side from the current request.
    let a = clamp_attr(Some(600), Some(500));
    assert_eq!(
        setattr(&a, SCHED_NORMAL, &fair, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    let mut pinned = fair;
    apply_setattr_uclamp(&mut pinned, &clamp_attr(Some(800), None), &s, false);
    let a = clamp_attr(None, Some(500));
    assert_eq!(
        setattr(&a, SCHED_NORMAL, &pinned, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    // An RT task's default boost (1024) counts too: lowering only its max fails.
    let rt = TaskUclamp::rt(&s);
    assert_eq!(
        setattr(&a, SCHED_FIFO, &rt, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    assert!(!s.used);
    // -1 on either side skips the comparison.
    let a = clamp_attr(Some(-1), Some(500));
    assert!(setattr(&a, SCHED_FIFO, &rt, CFG, &mut s).is_ok());
    assert!(s.used, "a validated reset to -1 turns the static key on");
    let mut s = sys(RtSync::Eager);
    let a = clamp_attr(Some(900), Some(-1));
    assert!(setattr(&a, SCHED_NORMAL, &pinned, CFG, &mut s).is_ok());
    // CONFIG_UCLAMP_TASK off.
    let off = SetattrConfig {
        uclamp_task: false,
        latency_nice: true,
    };
    let mut s = sys(RtSync::Eager);
    let a = clamp_attr(Some(100), None);
    assert_eq!(
        setattr(&a, SCHED_NORMAL, &fair, off, &mut s),
        Err(Errno::EOPNOTSUPP)
    );
    assert!(!s.used);
    assert!(setattr(&SchedAttr::default(), SCHED_NORMAL, &fair, off, &mut s).is_ok());
}

#[test]
fn setattr_latency_nice_errors() {
    let mut s = sys(RtSync::Eager);
    let t = TaskUclamp::fair(&s);
    let ln = |size, latency_nice| SchedAttr {
        size,
        flags: SCHED_FLAG_LATENCY_NICE,
        latency_nice,
        ..SchedAttr::default()
    };
    assert_eq!(
        setattr(&ln(56, 0), SCHED_NORMAL, &t, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        setattr(&ln(60, 20), SCHED_NORMAL, &t, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        setattr(&ln(60, -21), SCHED_NORMAL, &t, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    assert!(setattr(&ln(60, -20), SCHED_NORMAL, &t, CFG, &mut s).is_ok());
    assert!(setattr(&ln(60, 19), SCHED_NORMAL, &t, CFG, &mut s).is_ok());
    // Without the series the flag is unknown.
    let mainline = SetattrConfig {
        uclamp_task: true,
        latency_nice: false,
    };
    assert_eq!(
        setattr(&ln(60, 0), SCHED_NORMAL, &t, mainline, &mut s),
        Err(Errno::EINVAL)
    );
    // uclamp_validate() runs before the latency-nice range check: the key is on even though
    // the call fails.
    let mut s = sys(RtSync::Eager);
    let mut both = ln(60, 30);
    both.flags |= SCHED_FLAG_UTIL_CLAMP_MAX;
    both.util_max = 512;
    assert_eq!(
        setattr(&both, SCHED_NORMAL, &t, CFG, &mut s),
        Err(Errno::EINVAL)
    );
    assert!(s.used);
}

#[test]
fn tg_restrict_v61_vs_pre_514() {
    // An RT task (default boost, not user-defined) in a group with cpu.uclamp.min 20%
    // (205) and the default max.
    let group = TaskCtx {
        group: Some([205, 1024]),
        is_rt: true,
    };
    let s61 = sys_with(RtSync::Eager, TgRestrict::V61);
    let old = sys_with(RtSync::Eager, TgRestrict::Pre514);
    let mut rt = TaskUclamp::rt(&s61);
    assert_eq!(eff_get(&mut rt, ClampId::Min, group, &s61).value, 1024);
    assert_eq!(eff_get(&mut rt, ClampId::Min, group, &old).value, 205);
    // A fair task with defaults: v6.1 lifts it to the group's min; pre-5.14 replaces it by
    // the group's value, the same here.
    let mut fair = TaskUclamp::fair(&s61);
    let g = TaskCtx {
        group: Some([205, 600]),
        is_rt: false,
    };
    assert_eq!(eff_get(&mut fair, ClampId::Min, g, &s61).value, 205);
    assert_eq!(eff_get(&mut fair, ClampId::Min, g, &old).value, 205);
    assert_eq!(eff_get(&mut fair, ClampId::Max, g, &s61).value, 600);
    assert_eq!(eff_get(&mut fair, ClampId::Max, g, &old).value, 600);
    // User-defined requests inside the group range.
    apply_setattr_uclamp(&mut fair, &clamp_attr(Some(100), Some(400)), &s61, false);
    assert_eq!(
        eff_get(&mut fair, ClampId::Min, g, &s61).value,
        205,
        "raised to the floor"
    );
    assert_eq!(
        eff_get(&mut fair, ClampId::Min, g, &old).value,
        100,
        "old: min as a limit"
    );
    assert_eq!(eff_get(&mut fair, ClampId::Max, g, &s61).value, 400);
    assert_eq!(eff_get(&mut fair, ClampId::Max, g, &old).value, 400);
    // Root group and autogroups: no restriction, only the system caps.
    let mut s = s61;
    s.write_sysctl(Sysctl::Min, 150).unwrap();
    s.write_sysctl(Sysctl::Max, 300).unwrap();
    assert_eq!(eff_get(&mut fair, ClampId::Max, ctx(false), &s).value, 300);
    assert_eq!(eff_get(&mut fair, ClampId::Min, ctx(false), &s).value, 100);
    assert_eq!(eff_get(&mut rt, ClampId::Min, ctx(true), &s).value, 150);
}

#[test]
fn update_active_moves_references() {
    let mut s = sys(RtSync::Eager);
    s.enable_static_key();
    let mut rq = RqUclamp::default();
    let mut a = TaskUclamp::fair(&s);
    let mut b = TaskUclamp::fair(&s);
    let mut sleeping = TaskUclamp::fair(&s);
    rq.inc(&mut a, ctx(false), &s);
    rq.inc(&mut b, ctx(false), &s);
    let g = TaskCtx {
        group: Some([400, 500]),
        is_rt: false,
    };
    rq.update_active(&mut a, g, &s);
    rq.update_active(&mut sleeping, g, &s);
    assert!(!sleeping.eff[MIN].active, "not enqueued: nothing to move");
    assert_eq!(rq.value, [400, 1024]);
    rq.update_active(&mut b, g, &s);
    assert_eq!(rq.value, [400, 500]);
    rq.check([a.eff, b.eff]);
    // A lone task moved: the rq is never left idle.
    rq.dec(&mut a);
    rq.update_active(&mut b, ctx(false), &s);
    assert!(!rq.flags_idle);
    assert_eq!(rq.value, [0, 1024]);
    rq.check([b.eff]);
}

/// Pavan's SDM845 case (seed 000): little CPUs of capacity 404.
#[test]
fn rt_fit() {
    assert!(!rt_task_fits_capacity(1024, 1024, 404));
    assert!(rt_task_fits_capacity(1024, 1024, 1024));
    assert!(rt_task_fits_capacity(128, 1024, 404));
    // The max limits the boost.
    assert!(rt_task_fits_capacity(1024, 300, 404));
    assert!(rt_task_fits_capacity(404, 1024, 404));
}

#[test]
fn fair_fit() {
    // 20% margin: 819 fits 1024 (1048320 < 1048576), 820 does not.
    assert!(task_fits_capacity(819, 0, 1024, 1024));
    assert!(!task_fits_capacity(820, 0, 1024, 1024));
    // A max clamp lets a big task fit; a min clamp makes a small one not fit.
    assert!(task_fits_capacity(1000, 0, 500, 1024));
    assert!(!task_fits_capacity(10, 400, 1024, 404));
    assert!(task_fits_capacity(10, 300, 1024, 404));
    // Crossed clamps: the max wins, as with the kernel's clamp().
    assert!(task_fits_capacity(10, 900, 300, 404));
}

#[derive(Clone, Debug)]
enum Op {
    Toggle(usize),
    Request(usize, u32, u32),
    Group(usize, Option<(u32, u32)>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..6usize).prop_map(Op::Toggle),
        1 => (0..6usize, 0..=1024u32, 0..=1024u32).prop_map(|(t, a, b)| Op::Request(t, a, b)),
        1 => (0..6usize, proptest::option::of((0..=1024u32, 0..=1024u32)))
            .prop_map(|(t, g)| Op::Group(t, g)),
    ]
}

proptest! {
    /// Random enqueue/dequeue/clamp-change sequences keep the kernel's aggregation rules:
    /// bucket counts match the enqueued tasks, the rq value is the max over non-empty buckets,
    /// which is at least every enqueued task's effective value and in the same bucket as the
    /// largest; an idle rq has MIN 0 and holds the MAX of the last task that left.
    #[test]
    fn rq_aggregation(buckets in 5u32..=20, ops in proptest::collection::vec(op(), 1..200)) {
        let mut s = UclampSys::new(
            UclampConfig::new(buckets).unwrap(),
            StaticKeyMode::StaticKey,
            RtSync::Eager,
            TgRestrict::V61,
        );
        s.enable_static_key();
        let c = s.config;
        let mut rq = RqUclamp::default();
        let mut tasks = [TaskUclamp::fair(&s); 6];
        let mut ctxs = [ctx(false); 6];
        let mut queued = [false; 6];
        let mut last_max = 1024;
        for op in ops {
            match op {
                Op::Toggle(i) if queued[i] => {
                    rq.dec(&mut tasks[i]);
                    last_max = tasks[i].eff[MAX].value;
                    queued[i] = false;
                }
                Op::Toggle(i) => {
                    let was_idle = rq.flags_idle;
                    rq.inc(&mut tasks[i], ctxs[i], &s);
                    queued[i] = true;
                    if was_idle {
                        prop_assert_eq!(rq.value, [tasks[i].eff[MIN].value, tasks[i].eff[MAX].value]);
                    }
                }
                Op::Request(i, a, b) => {
                    let attr = clamp_attr(Some(a.min(b) as i32), Some(a.max(b) as i32));
                    apply_setattr_uclamp(&mut tasks[i], &attr, &s, false);
                }
                Op::Group(i, g) => {
                    ctxs[i].group = g.map(|(a, b)| [a.min(b), a.max(b)]);
                    rq.update_active(&mut tasks[i], ctxs[i], &s);
                }
            }
            rq.check(tasks.iter().map(|t| t.eff));
            let enqueued: Vec<_> = (0..6).filter(|&i| queued[i]).collect();
            for id in [MIN, MAX] {
                for &i in &enqueued {
                    prop_assert!(tasks[i].eff[id].active);
                    prop_assert_eq!(tasks[i].eff[id].bucket_id, c.bucket_id(tasks[i].eff[id].value));
                }
                match enqueued.iter().map(|&i| tasks[i].eff[id].value).max() {
                    Some(top) => {
                        prop_assert!(rq.value[id] >= top);
                        prop_assert_eq!(c.bucket_id(rq.value[id]), c.bucket_id(top));
                        prop_assert!(!rq.flags_idle);
                    }
                    None => {
                        prop_assert!(rq.flags_idle);
                        prop_assert_eq!(rq.value, [0, last_max]);
                    }
                }
            }
        }
    }

    /// Effective values never exceed the system caps and, in v6.1, sit in the group's range
    /// when the group range is below the caps.
    #[test]
    fn eff_within_caps(
        min in 0..=1024u32, max in 0..=1024u32,
        sys_max in 0..=1024u32, sys_min in 0..=1024u32,
        g in proptest::option::of((0..=1024u32, 0..=1024u32)),
        is_rt in any::<bool>(),
    ) {
        let mut s = sys(RtSync::Eager);
        let sys_min = sys_min.min(sys_max);
        s.write_sysctl(Sysctl::Min, i64::from(sys_min)).unwrap();
        s.write_sysctl(Sysctl::Max, i64::from(sys_max)).unwrap();
        let mut t = if is_rt { TaskUclamp::rt(&s) } else { TaskUclamp::fair(&s) };
        let attr = clamp_attr(Some(min.min(max) as i32), Some(min.max(max) as i32));
        apply_setattr_uclamp(&mut t, &attr, &s, is_rt);
        let group = g.map(|(a, b)| [a.min(b), a.max(b)]);
        let c = TaskCtx { group, is_rt };
        let lo = eff_value(&mut t, ClampId::Min, c, &s);
        let hi = eff_value(&mut t, ClampId::Max, c, &s);
        prop_assert!(lo <= sys_min && hi <= sys_max);
        if let Some([gl, gh]) = group {
            prop_assert!(lo == sys_min || (gl..=gh).contains(&lo));
            prop_assert!(hi == sys_max || (gl..=gh).contains(&hi));
        }
    }
}

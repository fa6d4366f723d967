//! uclamp at the system level (SPEC §4, §6; seeds 000, 001, 003): RT default boost and
//! placement, sysctls, strategies of syncing the RT default, cgroup clamps, the static key.

use crate::common;
use common::*;
use schedlab::report::Results;

/// A small periodic FIFO task: 500 µs of work (at capacity 1024) every 16 ms.
const RT_TASK: &str = r#"{ "tasks": { "rt": { "loop": -1, "policy": "SCHED_FIFO", "priority": 50,
    "run": 500, "timer": { "ref": "unique", "period": 16000 } } } }"#;

fn cpus_used(r: &Results, name: &str) -> Vec<usize> {
    task(r, name)
        .cpu_runtime_ns
        .keys()
        .map(|c| c.parse().unwrap())
        .collect()
}

/// Mean time per activation, µs.
fn per_activation_us(r: &Results, name: &str) -> f64 {
    let t = task(r, name);
    t.runtime_ns as f64 / t.activations as f64 / 1000.0
}

/// Each activation of `name` ran its `work_us` at its CPU's top speed: it took that, plus at
/// most the kernel's path of a wake-up (`wake_path_bound_ns`, which is at the lowest OPP).
fn runs_at_top_speed(r: &Results, platform: &str, name: &str, work_us: f64) -> bool {
    let per = per_activation_us(r, name);
    let slack = task(r, name)
        .cpu_runtime_ns
        .keys()
        .map(|c| wake_path_bound_ns(platform, c.parse().unwrap()))
        .max()
        .unwrap() as f64
        / 1000.0;
    per >= work_us && per <= work_us + slack
}

#[test]
fn seed_000_rt_default_boost_on_sdm845() {
    // 000_4ca246fac171556c.txt, Pavan's test. With the default boost the RT task has an
    // effective min of 1024: only the big CPUs (4-7) fit it, and with uclamp otherwise unused
    // an RT runnable CPU runs at its highest frequency (500 µs of work takes 500 µs).
    let r = run_json("sdm845", RT_TASK, 2 * S, &[]);
    let t = task(&r, "rt-0");
    assert_eq!(t.uclamp_min, 1024);
    assert!(
        cpus_used(&r, "rt-0").iter().all(|&c| c >= 4),
        "{:?}",
        t.cpu_runtime_ns
    );
    assert!(runs_at_top_speed(&r, "sdm845", "rt-0", 500.0));
    assert_eq!(r.uclamp_ops.inc, 0, "uclamp unused: no bucket work");
    // With sched_util_clamp_min_rt_default = 128 it fits a little CPU, and the frequency
    // follows its clamped utilization instead of going to max.
    let r = run_json(
        "sdm845",
        RT_TASK,
        2 * S,
        &["kernel.sched_util_clamp_min_rt_default=128"],
    );
    assert_eq!(task(&r, "rt-0").uclamp_min, 128);
    assert!(
        cpus_used(&r, "rt-0").iter().all(|&c| c < 4),
        "{:?}",
        task(&r, "rt-0").cpu_runtime_ns
    );
    // At the little cluster's top (capacity 404) the work would take 1267 µs.
    assert!(per_activation_us(&r, "rt-0") > 1.5 * 1267.0);
    assert!(r.uclamp_static_key_on);
}

#[test]
fn seed_000_dietmar_system_limit_wins_over_rt_default() {
    let r = run_json(
        "sdm845",
        RT_TASK,
        S,
        &["kernel.sched_util_clamp_min_rt_default=999"],
    );
    assert_eq!(task(&r, "rt-0").uclamp_min, 999);
    let r = run_json(
        "sdm845",
        RT_TASK,
        S,
        &[
            "kernel.sched_util_clamp_min_rt_default=999",
            "kernel.sched_util_clamp_min=666",
        ],
    );
    assert_eq!(task(&r, "rt-0").uclamp_min, 666);
}

/// The wakeups of `name` between `from` (s) and its first migration after it.
fn wakeups_before_first_migration(trace: &str, name: &str, from: f64) -> usize {
    let after = |l: &&str| {
        l.split_whitespace()
            .nth(2)
            .and_then(|t| t.trim_end_matches(':').parse::<f64>().ok())
            .is_some_and(|t| t >= from)
    };
    let comm = format!("comm={name} ");
    let mut wakeups = 0;
    for l in trace.lines().filter(after).filter(|l| l.contains(&comm)) {
        if l.contains("sched_migrate_task") {
            return wakeups;
        }
        if l.contains(" sched_wakeup: ") {
            wakeups += 1;
        }
    }
    panic!("{name} never migrated after {from} s");
}

fn rt_default_raised_mid_run(strategy: &str) -> (Results, String) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    let out = schedlab::Outputs {
        trace: Some(trace.clone()),
        ..Default::default()
    };
    let json = r#"{ "tasks": {
        "rt": { "loop": -1, "policy": "SCHED_FIFO", "priority": 50, "run": 500,
                "timer": { "ref": "unique", "period": 16000 } },
        "pinned": { "loop": -1, "policy": "SCHED_FIFO", "priority": 50, "util_min": 200, "run": 500,
                "timer": { "ref": "unique", "period": 16000 } } } }"#;
    let mut variant = schedlab::kernel::Variant::default();
    for s in [
        "kernel.sched_util_clamp_min_rt_default=128",
        &format!("variant.uclamp_rt_sync={strategy}"),
    ] {
        variant.set_pair(s, "test").unwrap();
    }
    variant
        .set_at(
            500 * MS + 8 * MS,
            "kernel.sched_util_clamp_min_rt_default=1024",
            "test",
        )
        .unwrap();
    let r = run_variant("sdm845", json, S, variant, 0, &out);
    (r, std::fs::read_to_string(trace).unwrap())
}

#[test]
fn eager_sync_updates_sleeping_rt_tasks_at_once_lazy_enqueue_one_wakeup_later() {
    // Mainline writes the new RT default into every RT task's request at once: the first
    // wakeup after the write is placed with min 1024 and leaves the little CPU.
    let (r, trace) = rt_default_raised_mid_run("eager");
    assert_eq!(r.admin_writes[0].result, "ok");
    assert_eq!(wakeups_before_first_migration(&trace, "rt-0", 0.508), 0);
    assert_eq!(task(&r, "rt-0").uclamp_min, 1024);
    // The v2 patch synced at enqueue: that first wakeup is still placed with the old 128.
    let (r, trace) = rt_default_raised_mid_run("v2-lazy-enqueue");
    assert_eq!(wakeups_before_first_migration(&trace, "rt-0", 0.508), 1);
    assert_eq!(task(&r, "rt-0").uclamp_min, 1024);
    // A user-defined min is never overwritten.
    for s in ["eager", "v2-lazy-enqueue", "v5-lazy-effective"] {
        assert_eq!(
            task(&rt_default_raised_mid_run(s).0, "pinned-1").uclamp_min,
            200,
            "{s}"
        );
    }
}

#[test]
fn v2_missing_rt_filter_boosts_fair_tasks() {
    // A small fair task: 1 ms of work every 16 ms on a big sdm845 CPU (its driver switches
    // frequency from the scheduler at once, so "at max" is exact).
    let json = r#"{ "tasks": { "f": { "loop": -1, "cpus": [4], "run": 1000,
        "timer": { "ref": "unique", "period": 16000 } } } }"#;
    // The v2 patch predates the static key: uclamp always active.
    let on = "variant.uclamp_static_key=always-active";
    let bug = run_json(
        "sdm845",
        json,
        2 * S,
        &[on, "variant.uclamp_rt_sync=v2-missing-rt-filter"],
    );
    assert_eq!(task(&bug, "f-0").uclamp_min, 1024);
    // Its CPU runs at the top whenever it runs: 1 ms of work takes 1 ms.
    assert!(runs_at_top_speed(&bug, "sdm845", "f-0", 1000.0));
    for s in ["eager", "v5-lazy-effective", "v2-lazy-enqueue"] {
        let ok = run_json(
            "sdm845",
            json,
            2 * S,
            &[on, &format!("variant.uclamp_rt_sync={s}")],
        );
        assert_eq!(task(&ok, "f-0").uclamp_min, 0, "{s}");
        assert!(per_activation_us(&ok, "f-0") > 1500.0, "{s}");
    }
}

#[test]
fn cgroup_uclamp_max_caps_the_frequency() {
    // An always-running task in a group capped at 40% on an A57: schedutil asks for at most
    // 1.25 × 40% × 1024 = 512, the lowest OPP covering it is 625 MHz (capacity 579).
    let json =
        r#"{ "tasks": { "hog": { "loop": -1, "cpus": [1], "taskgroup": "/bg", "run": 100000 } } }"#;
    let r = run_json("juno-r0", json, 2 * S, &["cgroup./bg.cpu.uclamp.max=40.00"]);
    let res = &r.cpus[1].freq_residency_ns;
    let above: u64 = ["800000", "950000", "1100000"]
        .iter()
        .map(|k| res[*k])
        .sum();
    // Only the boot frequency before schedutil's first evaluation.
    assert!(above < 20 * MS, "{res:?}");
    assert!(res["625000"] > 19 * S / 10);
    assert_eq!(task(&r, "hog-0").uclamp_max, 410);
    assert_eq!(r.cgroups[0].uclamp_max, "40.00");
}

#[test]
fn cgroup_nesting_and_user_defined_requests() {
    let json = r#"{ "tasks": {
        "nested": { "loop": -1, "taskgroup": "/a/b", "run": 1000, "sleep": 9000 },
        "greedy": { "loop": -1, "taskgroup": "/bg", "util_min": 800, "run": 1000, "sleep": 9000 } } }"#;
    let r = run_json(
        "juno-r0",
        json,
        S,
        &[
            "cgroup./a.cpu.uclamp.max=30",
            "cgroup./a/b.cpu.uclamp.max=60",
            "cgroup./bg.cpu.uclamp.max=40",
        ],
    );
    // Nested groups take the tighter limit.
    assert_eq!(task(&r, "nested-0").uclamp_max, 307);
    // A user-defined min above the group's limit is cut to it (v6.1 uclamp_tg_restrict).
    assert_eq!(task(&r, "greedy-1").uclamp_min, 410);
}

fn forkloop_pids(sets: &[&str]) -> f64 {
    let a = schedlab::gen::ForkloopArgs {
        parent_us: 80,
        child_us: 180,
        runtime: 2,
        taskgroup: Some("/user.slice".into()),
        cpus: Vec::new(),
    };
    let json = schedlab::gen::forkloop(&a).to_string();
    let r = run_json("x86-4c8t", &json, 2 * S, sets);
    r.workload_metrics.unwrap()["pids_per_sec"]
        .as_f64()
        .unwrap()
}

#[test]
fn seed_003_new_cgroup_acting_as_max_keeps_schedutil_at_max() {
    // 003_5097063a106228c6.txt: the fork loop in a new cgroup whose cpu.uclamp.min reads
    // 0.00 but acts as max (kernels before 5.6, which also had no static key).
    let old = "variant.uclamp_static_key=always-active";
    let perf = forkloop_pids(&["cpufreq.governor=performance"]);
    let buggy = forkloop_pids(&[old, "variant.cgroup_online_no_eff_update=true"]);
    let fixed = forkloop_pids(&[old]);
    // The seed's i7-2600K runs the buggy schedutil within 2% of performance (3310 vs 3333,
    // 3935 vs 3940), 2.2-2.4 times faster than once fixed. Here the buggy min clamp lifts
    // each request made on the launcher's CPU, but a child is enqueued on its idle CPU from
    // the launcher's, and intel_cpufreq does not set dvfs_possible_from_any_cpu, so
    // sugov_should_update_freq() ignores that remote call (cpufreq_this_cpu_can_update());
    // the child's CPU raises its request only from its own calls, by at most 1.25 x
    // policy->cur each without frequency invariance (get_next_freq()). The i7-2600K's cores
    // share one clock, at the highest request of the busy cores, so there the launcher's
    // request carried every child: the known difference (REPRODUCTIONS.md,
    // seed003-forkloop-governors). The seed's direction remains: the bug is clearly faster
    // than the fix, and slower than performance here.
    assert!(buggy < perf, "buggy {buggy} vs performance {perf}");
    assert!(buggy > 1.2 * fixed, "buggy {buggy} vs fixed {fixed}");
    assert!(fixed < 0.6 * perf, "fixed {fixed} vs performance {perf}");
}

#[test]
fn static_key_is_off_until_first_use() {
    // On a big sdm845 CPU (fast frequency switching).
    let json = r#"{ "tasks": { "rt": { "loop": -1, "cpus": [4], "policy": "SCHED_FIFO", "priority": 50,
        "run": 1000, "timer": { "ref": "unique", "period": 16000 } } } }"#;
    let unused = run_json("sdm845", json, 2 * S, &[]);
    assert!(!unused.uclamp_static_key_on);
    assert_eq!(
        unused.uclamp_ops.inc + unused.uclamp_ops.dec + unused.uclamp_ops.rescan,
        0
    );
    // RT runnable → max frequency: 1 ms of work takes 1 ms.
    assert!(runs_at_top_speed(&unused, "sdm845", "rt-0", 1000.0));
    // One sched_setattr with a clamp flag turns the key on; the RT task then follows its
    // clamp (min 0) instead of forcing the maximum.
    let used = json.replace(r#""priority": 50,"#, r#""priority": 50, "util_min": 0,"#);
    let used = run_json("sdm845", &used, 2 * S, &[]);
    assert!(used.uclamp_static_key_on);
    assert!(used.uclamp_ops.inc > 0 && used.uclamp_ops.dec > 0);
    assert_eq!(task(&used, "rt-0").uclamp_min, 0);
    assert!(per_activation_us(&used, "rt-0") > 1500.0);
}

#[test]
fn timed_setattr_and_cgroup_moves_act_on_named_threads() {
    // A power HAL boosts a thread, then moves another into a capped group; naming a thread
    // that does not exist fails with ESRCH, as sched_setattr would.
    let json = r#"{ "tasks": {
        "ui": { "loop": -1, "cpus": [1], "run": 1000, "timer": { "ref": "unique", "period": 16000 } },
        "bg": { "loop": -1, "cpus": [2], "run": 100000 } } }"#;
    let mut variant = schedlab::kernel::Variant::default();
    variant
        .set_pair("cgroup./bg.cpu.uclamp.max=40", "test")
        .unwrap();
    variant
        .set_at(200 * MS, "task.ui-0.uclamp.min=1024", "test")
        .unwrap();
    variant
        .set_at(300 * MS, "task.bg-1.cgroup=/bg", "test")
        .unwrap();
    variant
        .set_at(400 * MS, "task.nobody-7.uclamp.max=100", "test")
        .unwrap();
    let r = run_variant(
        "juno-r0",
        json,
        2 * S,
        variant,
        0,
        &schedlab::Outputs::default(),
    );
    let results: Vec<&str> = r.admin_writes.iter().map(|w| w.result).collect();
    assert_eq!(results, ["ok", "ok", "ESRCH"]);
    assert_eq!(task(&r, "ui-0").uclamp_min, 1024);
    assert_eq!(task(&r, "bg-1").uclamp_max, 410);
}

//! CONFIG_FAIR_GROUP_SCHED: cgroup v2 `cpu.weight` and seed 002's `cpu.latency.nice`.

use crate::common;

use common::*;
use schedlab::kernel::core::KernelOutputs;
use schedlab::kernel::{Kernel, Variant};
use schedlab::platform::Platform;
use schedlab::sim::{EventQueue, SimRng};
use schedlab::workload::parse_workload;

fn variant(sets: &[&str], at: &[&str]) -> Variant {
    let platform = Platform::resolve("smp8").unwrap();
    let mut v = Variant::for_platform(&platform);
    for s in sets {
        v.set_pair(s, "test").unwrap();
    }
    for s in at {
        v.set_at(MS, s, "test").unwrap();
    }
    v
}

/// Two hogs in /a and two in /b, all on CPU 0: the CPU time of each group.
fn group_split(sets: &[&str]) -> (u64, u64) {
    let json = r#"{"tasks": {
        "a": {"instance": 2, "loop": -1, "cpus": [0], "taskgroup": "/a", "run": 100000},
        "b": {"instance": 2, "loop": -1, "cpus": [0], "taskgroup": "/b", "run": 100000}
    }}"#;
    let r = run_variant("smp8", json, S, variant(sets, &[]), 0, &Default::default());
    let sum = |p: &str| {
        r.tasks
            .iter()
            .filter(|t| t.name.starts_with(p))
            .map(|t| t.runtime_ns)
            .sum::<u64>()
    };
    (sum("a-"), sum("b-"))
}

#[test]
fn cpu_weight_splits_the_cpu_between_groups() {
    // cpu.weight 200 vs 100: shares 2048 vs 1024, whatever the number of tasks inside.
    let (a, b) = group_split(&["cgroup./a.cpu.weight=200"]);
    let ratio = a as f64 / b as f64;
    assert!((ratio - 2.0).abs() < 0.1, "{a} vs {b}");
    // Default weights: an even split. Tasks in a group share its part evenly.
    for (sets, expected) in [
        (&[][..], 1.0),
        (&["cgroup./b.cpu.weight=300"][..], 1.0 / 3.0),
    ] {
        let (a, b) = group_split(sets);
        let ratio = a as f64 / b as f64;
        assert!(
            (ratio - expected).abs() < 0.05 * expected,
            "{sets:?}: {ratio}"
        );
    }
    // The files read back as written (shares 2048 and 1024: weights 200 and 100).
    let json = r#"{"tasks": {"a": {"loop": -1, "taskgroup": "/a", "run": 1000}}}"#;
    for w in [1, 33, 100, 200, 9999, 10000] {
        let v = variant(&[&format!("cgroup./a.cpu.weight={w}")], &[]);
        let r = run_variant("smp8", json, MS, v, 0, &Default::default());
        assert_eq!(r.cgroups[0].weight, Some(w));
        assert_eq!(
            r.cgroups[0].latency_nice, None,
            "no file without the series"
        );
    }
    // Without CONFIG_FAIR_GROUP_SCHED tasks compete one by one and the file does not exist.
    let (a, b) = group_split(&["config.FAIR_GROUP_SCHED=false"]);
    assert!((a as f64 / b as f64 - 1.0).abs() < 0.05);
    let json = r#"{"tasks": {"a": {"loop": -1, "taskgroup": "/a", "run": 1000}}}"#;
    let v = variant(
        &["config.FAIR_GROUP_SCHED=false"],
        &["cgroup./a.cpu.weight=200"],
    );
    let r = run_variant("smp8", json, 10 * MS, v, 0, &Default::default());
    assert_eq!(r.admin_writes[0].result, "ENOENT");
}

#[test]
fn a_group_gets_its_share_however_many_tasks_it_has() {
    // One hog in /a against three in /b: with groups /a gets half the CPU; without, a quarter.
    let json = r#"{"tasks": {
        "a": {"loop": -1, "cpus": [0], "taskgroup": "/a", "run": 100000},
        "b": {"instance": 3, "loop": -1, "cpus": [0], "taskgroup": "/b", "run": 100000}
    }}"#;
    for (sets, share) in [
        (&[][..], 0.5),
        (&["config.FAIR_GROUP_SCHED=false"][..], 0.25),
    ] {
        let r = run_variant("smp8", json, S, variant(sets, &[]), 0, &Default::default());
        let total: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
        let a = task(&r, "a-0").runtime_ns as f64 / total as f64;
        assert!((a - share).abs() < 0.02, "{sets:?}: {a}");
    }
}

#[test]
fn cpu_weight_and_latency_nice_writes_are_checked() {
    let json = r#"{"tasks": {"a": {"loop": -1, "taskgroup": "/g", "run": 100, "sleep": 1000}}}"#;
    let v = variant(
        &["variant.latency_nice=v5"],
        &[
            "cgroup./.cpu.latency.nice=-20",
            "cgroup./.cpu.weight=200",
            "cgroup./g.cpu.latency.nice=-21",
            "cgroup./g.cpu.latency.nice=20",
            "cgroup./g.cpu.latency.nice=x",
            "cgroup./g.cpu.weight=0",
            "cgroup./g.cpu.weight=10001",
            "cgroup./g.cpu.weight=10000",
            "cgroup./g.cpu.latency.nice=-20",
        ],
    );
    let r = run_variant("smp8", json, 5 * MS, v, 0, &Default::default());
    let results: Vec<_> = r.admin_writes.iter().map(|w| w.result).collect();
    assert_eq!(
        results,
        ["ENOENT", "ENOENT", "ERANGE", "ERANGE", "EINVAL", "ERANGE", "ERANGE", "ok", "ok"]
    ); // Without the latency-nice series the file does not exist.
    let v = variant(&[], &["cgroup./g.cpu.latency.nice=-20"]);
    let r = run_variant("smp8", json, 5 * MS, v, 0, &Default::default());
    assert_eq!(r.admin_writes[0].result, "ENOENT");
}

#[test]
fn cpu_latency_nice_reads_back_through_the_table() {
    for gentle in ["false", "true"] {
        for nice in -20..=19 {
            let json = r#"{"tasks": {"a": {"loop": 1, "taskgroup": "/g", "run": 100}}}"#;
            let w = format!("cgroup./g.cpu.latency.nice={nice}");
            let g = format!("variant.latency_nice_gentle_offset={gentle}");
            let v = variant(&["variant.latency_nice=v5", &g, &w], &[]);
            let platform = Platform::resolve("smp8").unwrap();
            let workload = parse_workload(json, "t.json").unwrap();
            let outputs = KernelOutputs {
                observer: None,
                rtapp_logs: None,
                events: Default::default(),
            };
            let mut q = EventQueue::new();
            let k = Kernel::new(platform, v, workload, outputs, SimRng::new(0), &mut q).unwrap();
            let grp = k.cgroups.find("/g").unwrap();
            assert_eq!(k.fair.group_latency_nice(grp), nice, "gentle {gentle}");
        }
    }
}

/// Wakeup latency (mean, max) of `l` (1.8 ms every 3 ms, above its group's half) in /lat
/// on CPU 0 of smp8, against two hogs and four bursty tasks in /busy.
fn group_latency(sets: &[&str]) -> (u64, u64) {
    let json = r#"{"tasks": {
        "busy": {"instance": 2, "loop": -1, "cpus": [0], "taskgroup": "/busy", "run": 100000},
        "bursty": {"instance": 4, "loop": -1, "cpus": [0], "taskgroup": "/busy",
                   "run": 300, "sleep": 900},
        "l": {"loop": -1, "cpus": [0], "taskgroup": "/lat",
              "timer": {"ref": "t", "period": 3000}, "run": 1800}
    }}"#;
    let r = run_variant(
        "smp8",
        json,
        2 * S,
        variant(sets, &[]),
        0,
        &Default::default(),
    );
    let l = &r.tasks.iter().find(|t| t.name.starts_with("l-")).unwrap();
    (l.wakeup_latency_ns.mean, l.wakeup_latency_ns.max)
}

#[test]
fn cpu_latency_nice_lowers_the_wakeup_latency_of_the_group() {
    let lat = "cgroup./lat.cpu.latency.nice=-20";
    let (mean0, max0) = group_latency(&["variant.latency_nice=v5"]);
    let (mean20, _) = group_latency(&["variant.latency_nice=v5", lat]);
    assert!(mean20 * 2 < mean0, "v5: {mean20} vs {mean0}");
    let (tmean20, tmax20) = group_latency(&["variant.latency_nice=v5+rbtree", lat]);
    assert!(tmean20 * 2 < mean0, "rbtree: {tmean20} vs {mean0}");
    assert!(tmax20 < max0, "rbtree max {tmax20} vs {max0}");
}

#[test]
fn every_fair_switch_keeps_the_kernel_invariants() {
    // Nested groups, migrations, forks, group moves, yields, latency nice and custom slices:
    // debug builds assert the runqueue, timeline, group and EEVDF invariants after every
    // event; runs are reproducible; no CPU runs more than the time there was.
    let json = r#"{"tasks": {
        "h": {"instance": 6, "loop": -1, "taskgroup": "/a/b", "run": 20000, "sleep": 500},
        "x": {"instance": 10, "loop": -1, "taskgroup": "/a", "run": 300, "sleep": 700},
        "y": {"instance": 6, "loop": -1, "taskgroup": "/c", "latency_nice": -20,
              "dl-runtime": 300, "run": 3000, "sleep": 100},
        "r": {"instance": 4, "loop": -1, "priority": 5, "run": 1000, "sleep": 2000},
        "f": {"loop": -1, "taskgroup": "/c", "run": 100, "fork": "k", "sleep": 1000},
        "k": {"instance": 0, "loop": 1, "run": 500},
        "m": {"loop": -1, "phases": {
            "p0": {"loop": 3, "taskgroup": "/a", "latency_nice": 19, "run": 500, "sleep": 300},
            "p1": {"loop": 3, "taskgroup": "/c", "latency_nice": -5, "run": 500, "yield": 0}
        }}
    }}"#;
    for fair in ["cfs", "eevdf"] {
        for ln in ["off", "v5", "v5+rbtree"] {
            for groups in ["true", "false"] {
                let f = format!("variant.fair={fair}");
                let l = format!("variant.latency_nice={ln}");
                let g = format!("config.FAIR_GROUP_SCHED={groups}");
                let sets = [f.as_str(), l.as_str(), g.as_str()];
                let mut v = variant(&sets, &[]);
                if groups == "true" {
                    v.set_at(300 * MS, "cgroup./a.cpu.weight=300", "test")
                        .unwrap();
                }
                let run = || {
                    let r =
                        run_variant("juno-r0", json, 600 * MS, v.clone(), 3, &Default::default());
                    serde_json::to_string(&r).unwrap()
                };
                let (a, b) = (run(), run());
                assert_eq!(a, b, "{sets:?} not reproducible");
                let r: serde_json::Value = serde_json::from_str(&a).unwrap();
                let total: u64 = r["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["runtime_ns"].as_u64().unwrap())
                    .sum();
                assert!(total <= 6 * 600 * MS, "{sets:?}: {total}");
            }
        }
    }
}

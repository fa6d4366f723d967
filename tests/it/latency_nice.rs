//! Latency nice (seed 002): offsets from the table, the sched_setattr/getattr ABI through the
//! kernel, fork inheritance and reset_on_fork, Youssef's bursty tasks and the GENTLE fix,
//! wakeup latency with and without the latency rb-tree, and the rt-app/`--set-at` paths.

use crate::common;

use common::*;
use schedlab::kernel::core::{Event, KernelOutputs};
use schedlab::kernel::fair::{Fair, LoadWeight, Preempt, QueueFlags, SCHED_LATENCY_TO_WEIGHT};
use schedlab::kernel::sched::Errno;
use schedlab::kernel::setattr::{
    SchedAttr, SCHED_FLAG_KEEP_ALL, SCHED_FLAG_KEEP_PARAMS, SCHED_FLAG_LATENCY_NICE,
    SCHED_FLAG_RESET_ON_FORK, SCHED_NORMAL,
};
use schedlab::kernel::{Kernel, Variant};
use schedlab::platform::Platform;
use schedlab::sim::{self, EventQueue, SimRng};
use schedlab::workload::parse_workload;

fn variant(platform: &Platform, sets: &[&str]) -> Variant {
    let mut v = Variant::for_platform(platform);
    for s in sets {
        v.set_pair(s, "test").unwrap();
    }
    v
}

#[test]
fn offsets_are_the_table_times_the_scaled_latency() {
    let smp8 = Platform::resolve("smp8").unwrap();
    let f = Fair::new(8, &variant(&smp8, &["variant.latency_nice=v5"]));
    // Patch 4's table at -20, 0 and 19, times sysctl_sched_latency = 6 ms x (1 + ilog2(8)).
    assert_eq!(SCHED_LATENCY_TO_WEIGHT[0], -1024);
    assert_eq!(SCHED_LATENCY_TO_WEIGHT[20], 0);
    assert_eq!(SCHED_LATENCY_TO_WEIGHT[39], 973);
    assert_eq!(f.latency_offset(-20), -24_000_000);
    assert_eq!(f.latency_offset(0), 0);
    assert_eq!(f.latency_offset(19), 24_000_000 * 973 / 1024); // 22.8 ms
                                                               // Vincent's GENTLE fix: half the latency under GENTLE_FAIR_SLEEPERS (on by default).
    let gentle = [
        "variant.latency_nice=v5",
        "variant.latency_nice_gentle_offset=true",
    ];
    let g = Fair::new(8, &variant(&smp8, &gentle));
    assert_eq!(g.latency_offset(-20), -12_000_000);
    assert_eq!(g.latency_offset(19), 12_000_000 * 973 / 1024);
    let no_gentle = [gentle[0], gentle[1], "feature.GENTLE_FAIR_SLEEPERS=false"];
    let ng = Fair::new(8, &variant(&smp8, &no_gentle));
    assert_eq!(ng.latency_offset(-20), -24_000_000);
    // Two CPUs: factor 2, 12 ms. Without the series there is no offset.
    let two = Fair::new(2, &variant(&smp8, &["variant.latency_nice=v5"]));
    assert_eq!(two.latency_offset(-20), -12_000_000);
    assert_eq!(Fair::new(8, &variant(&smp8, &[])).latency_offset(-20), 0);
}

#[test]
fn an_offset_reads_back_as_its_latency_nice() {
    // cpu.latency.nice's read path finds the closest table entry, dividing by the same
    // period the write used (Dietmar's catch in the GENTLE fix).
    let smp8 = Platform::resolve("smp8").unwrap();
    for sets in [
        &["variant.latency_nice=v5"][..],
        &[
            "variant.latency_nice=v5",
            "variant.latency_nice_gentle_offset=true",
        ],
    ] {
        let f = Fair::new(8, &variant(&smp8, sets));
        for n in -20..=19 {
            assert_eq!(f.latency_nice_of_offset(f.latency_offset(n)), n, "{sets:?}");
        }
    }
}

/// A kernel on smp8 running `json`, advanced to `until`.
fn boot(json: &str, sets: &[&str], until: u64) -> (Kernel, EventQueue<Event>) {
    let platform = Platform::resolve("smp8").unwrap();
    let v = variant(&platform, sets);
    let workload = parse_workload(json, "test.json").unwrap();
    let mut q = EventQueue::new();
    let outputs = KernelOutputs {
        observer: None,
        rtapp_logs: None,
        events: Default::default(),
    };
    let mut k = Kernel::new(platform, v, workload, outputs, SimRng::new(0), &mut q).unwrap();
    sim::run(&mut k, &mut q, until);
    (k, q)
}

fn pid_of(k: &Kernel, prefix: &str) -> i32 {
    k.tasks
        .iter()
        .find(|t| t.name.starts_with(prefix))
        .map(|t| t.pid as i32)
        .unwrap()
}

fn ln_attr(size: u32, latency_nice: i32) -> SchedAttr {
    SchedAttr {
        size,
        flags: SCHED_FLAG_KEEP_ALL | SCHED_FLAG_LATENCY_NICE,
        latency_nice,
        ..SchedAttr::default()
    }
}

const SLEEPER: &str = r#"{"tasks": {"t": {"loop": -1, "run": 100, "sleep": 1000}}}"#;

#[test]
fn setattr_sets_and_getattr_returns_latency_nice() {
    let (mut k, mut q) = boot(SLEEPER, &["variant.latency_nice=v5"], MS);
    let pid = pid_of(&k, "t-");
    assert_eq!(k.sched_getattr(pid).unwrap().latency_nice, 0);
    assert_eq!(k.sched_getattr(pid).unwrap().size, 60);
    k.sched_setattr(pid, &ln_attr(60, -7), 0, MS, &mut q)
        .unwrap();
    assert_eq!(k.sched_getattr(pid).unwrap().latency_nice, -7);
    let se = k.tasks.iter().find(|t| t.pid as i32 == pid).unwrap().se;
    assert_eq!(k.fair.ses[se].latency_offset, k.fair.latency_offset(-7));
    // Errors: the flag needs a VER2 struct; out of -20..19 is EINVAL; a size below VER0 is
    // E2BIG. None of them changes the value.
    let errors = [
        (ln_attr(56, 5), Errno::EINVAL),
        (ln_attr(60, 20), Errno::EINVAL),
        (ln_attr(60, -21), Errno::EINVAL),
        (ln_attr(40, 5), Errno::E2BIG),
    ];
    for (attr, errno) in errors {
        assert_eq!(
            k.sched_setattr(pid, &attr, 0, MS, &mut q),
            Err(errno),
            "{attr:?}"
        );
    }
    assert_eq!(k.sched_getattr(pid).unwrap().latency_nice, -7);
    assert_eq!(
        k.sched_setattr(9999, &ln_attr(60, 1), 0, MS, &mut q),
        Err(Errno::ESRCH)
    );
    // Keeping going still works: the task runs on with its new value.
    sim::run(&mut k, &mut q, 10 * MS);
    assert_eq!(k.sched_getattr(pid).unwrap().latency_nice, -7);
}

#[test]
fn without_the_series_the_flag_is_refused() {
    let (mut k, mut q) = boot(SLEEPER, &[], MS);
    let pid = pid_of(&k, "t-");
    // v6.1's struct ends at VER1: non-zero bytes past it are E2BIG, the flag is unknown.
    assert_eq!(
        k.sched_setattr(pid, &ln_attr(60, -7), 0, MS, &mut q),
        Err(Errno::E2BIG)
    );
    assert_eq!(
        k.sched_setattr(pid, &ln_attr(56, 0), 0, MS, &mut q),
        Err(Errno::EINVAL)
    );
    assert_eq!(k.sched_getattr(pid).unwrap().size, 56);
}

/// Latency nice of the child forked by a parent at latency nice -20, with or without
/// SCHED_FLAG_RESET_ON_FORK on the parent.
fn child_latency_nice(reset_on_fork: bool) -> (i32, i64) {
    let json = r#"{"tasks": {
        "parent": {"loop": 1, "sleep": 2000, "fork": "child", "sleep1": 20000},
        "child": {"instance": 0, "loop": 1, "run": 100, "sleep": 100000}
    }}"#;
    let (mut k, mut q) = boot(json, &["variant.latency_nice=v5"], MS);
    let pid = pid_of(&k, "parent");
    let mut attr = ln_attr(60, -20);
    if reset_on_fork {
        attr.flags = SCHED_FLAG_KEEP_PARAMS | SCHED_FLAG_LATENCY_NICE | SCHED_FLAG_RESET_ON_FORK;
        attr.policy = SCHED_NORMAL;
    }
    k.sched_setattr(pid, &attr, 0, MS, &mut q).unwrap();
    assert_eq!(
        k.sched_getattr(pid).unwrap().flags & SCHED_FLAG_RESET_ON_FORK != 0,
        reset_on_fork
    );
    sim::run(&mut k, &mut q, 2500 * 1000);
    let child = k.tasks.iter().find(|t| t.forked).expect("child forked");
    let offset = k.fair.ses[child.se].latency_offset;
    (
        k.sched_getattr(child.pid as i32).unwrap().latency_nice,
        offset,
    )
}

#[test]
fn children_inherit_latency_nice_unless_reset_on_fork() {
    assert_eq!(child_latency_nice(false), (-20, -24_000_000));
    assert_eq!(child_latency_nice(true), (0, 0));
}

/// Youssef's test: two tasks pinned to CPU 0 of smp8, each sleeping 1 ms (usleep(1000) with
/// the default 50 µs timer slack) then busy 10 ms, `a` at latency nice `ln`. CPU time of a, b.
fn bursty_pair(ln: i32, sets: &[&str]) -> (f64, f64) {
    let json = format!(
        r#"{{"tasks": {{
            "a": {{"loop": -1, "cpus": [0], "latency_nice": {ln}, "sleep": 1050, "run": 10000}},
            "b": {{"loop": -1, "cpus": [0], "sleep": 1050, "run": 10000}}
        }}}}"#
    );
    let r = run_json("smp8", &json, 3 * S, sets);
    (
        task(&r, "a-0").runtime_ns as f64,
        task(&r, "b-1").runtime_ns as f64,
    )
}

#[test]
fn youssef_gentle_offset_keeps_the_bandwidth_fair() {
    for tree in ["variant.latency_nice=v5", "variant.latency_nice=v5+rbtree"] {
        let (a, b) = bursty_pair(0, &[tree]);
        assert!((a / b - 1.0).abs() < 0.05, "{tree} both at 0: {a} vs {b}");
        // Without the fix the -20 task preempts up to latency - wakeup_gran ahead while the
        // other is placed only half a latency back: it takes more than its share.
        let (a, b) = bursty_pair(-20, &[tree]);
        assert!(a > 1.2 * b, "{tree}: -20 got {a} vs {b}");
        // With it, latency nice reorders but does not give bandwidth.
        let (a, b) = bursty_pair(-20, &[tree, "variant.latency_nice_gentle_offset=true"]);
        assert!((a / b - 1.0).abs() < 0.05, "{tree} gentle: {a} vs {b}");
    }
}

/// Wakeup latency of a periodic task `l` (1 ms every 3.7 ms, above its fair share) on CPU 0
/// of smp8 against two CPU hogs and four bursty tasks: (mean, p99, max) in ns.
fn periodic_latency(ln: i32, sets: &[&str]) -> (u64, u64, u64) {
    let json = format!(
        r#"{{"tasks": {{
            "hog": {{"instance": 2, "loop": -1, "cpus": [0], "run": 100000}},
            "bursty": {{"instance": 4, "loop": -1, "cpus": [0], "run": 300, "sleep": 900}},
            "l": {{"loop": -1, "cpus": [0], "latency_nice": {ln},
                   "timer": {{"ref": "t", "period": 3700}}, "run": 1000}}
        }}}}"#
    );
    let r = run_json("smp8", &json, 2 * S, sets);
    let t = r.tasks.iter().find(|t| t.name.starts_with("l-")).unwrap();
    assert_eq!(t.latency_nice, ln);
    let l = &t.wakeup_latency_ns;
    (l.mean, l.p99, l.max)
}

#[test]
fn latency_nice_lowers_wakeup_latency_and_the_rbtree_the_worst_case() {
    // v5 (patches 1-6): the average drops several-fold, the worst case does not (seed 002,
    // patch 4's cyclictest tables).
    let v5 = ["variant.latency_nice=v5"];
    let (mean0, _, max0) = periodic_latency(0, &v5);
    let (mean20, _, max20) = periodic_latency(-20, &v5);
    assert!(mean20 * 2 < mean0, "v5 mean {mean20} vs {mean0}");
    assert!(max20 * 2 > max0, "v5 max {max20} vs {max0}");
    // Patch 7: the latency tree gives the latency-sensitive task its turn first, so the p99
    // and the max drop as well.
    let tree = ["variant.latency_nice=v5+rbtree"];
    let (tmean0, tp99_0, tmax0) = periodic_latency(0, &tree);
    assert_eq!(
        (tmean0, tmax0),
        (mean0, max0),
        "no tree entries at latency nice 0"
    );
    let (tmean20, tp99_20, tmax20) = periodic_latency(-20, &tree);
    assert!(tmean20 * 2 < mean0, "rbtree mean {tmean20} vs {mean0}");
    assert!(
        tmax20 < max0 && tmax20 * 3 < max20,
        "rbtree max {tmax20}, v5 {max20}"
    );
    assert!(tp99_20 < tp99_0, "rbtree p99 {tp99_20} vs {tp99_0}");
}

#[test]
fn rtapp_phase_key_and_timed_write_set_latency_nice() {
    let json = r#"{"tasks": {"t": {"loop": -1, "phases": {
        "p0": {"loop": 2, "run": 100, "sleep": 1000},
        "p1": {"loop": -1, "latency_nice": 5, "run": 100, "sleep": 1000}
    }}}}"#;
    let r = run_json("smp8", json, 20 * MS, &["variant.latency_nice=v5"]);
    assert_eq!(task(&r, "t-0").latency_nice, 5);
    assert_eq!(task(&r, "t-0").setattr_errors, 0);
    // Without the series the kernel refuses the flag: rt-app's call fails and is counted.
    let r = run_json("smp8", json, 20 * MS, &[]);
    assert_eq!(task(&r, "t-0").latency_nice, 0);
    assert_eq!(task(&r, "t-0").setattr_errors, 1);
    // --set-at: a valid and an out-of-range write.
    let platform = Platform::resolve("smp8").unwrap();
    let mut v = variant(&platform, &["variant.latency_nice=v5"]);
    v.set_at(5 * MS, "task.t-0.latency_nice=-20", "test")
        .unwrap();
    v.set_at(6 * MS, "task.t-0.latency_nice=25", "test")
        .unwrap();
    let r = run_variant("smp8", json, 10 * MS, v, 0, &Default::default());
    let results: Vec<_> = r.admin_writes.iter().map(|w| w.result).collect();
    assert_eq!(results, ["ok", "EINVAL"]);
    assert_eq!(task(&r, "t-0").latency_nice, -20);
}

/// Seed 002's cyclictest beside `hackbench -l 10000 -g 16` on smp8 with a `llc_kib` KiB L2 per
/// cluster, cyclictest at latency nice -20 under `variant.latency_nice=tree`, for 5 s at
/// `seed`: its wake-up latency (p99, max) in µs.
fn cyclictest_beside_hackbench(tree: &str, llc_kib: u64, seed: u64) -> (f64, f64) {
    let exp = schedlab::experiment::Experiment::parse(
        &format!(
            r#"
            platform = "smp8"
            duration = "5s"
            [set]
            variant.latency_nice = "{tree}"
            memory.llc_kib = {llc_kib}
            [[workload]]
            name = "ct"
            gen = "cyclictest"
            args = {{ policy = "other", interval = 1000, duration = 5, latency-nice = -20 }}
            [[workload]]
            name = "hb"
            gen = "hackbench"
            args = {{ groups = 16, loops = 10000 }}
            "#
        ),
        "ct.toml",
        std::path::Path::new("."),
    )
    .unwrap();
    let r = exp.run(seed, true, &Default::default()).unwrap();
    let ct = &r.workload_metrics.as_ref().unwrap()["ct"];
    (
        ct["p99_us"].as_f64().unwrap(),
        ct["max_us"].as_f64().unwrap(),
    )
}

/// Patch 7 beside hackbench -g 16, 5 s as the board ran it: a -20 wake-up that did not
/// preempt the running task is picked at the next schedule (`pick_next_entity()` checks the
/// latency tree), so it waits for the running task to block or, at a tick, to exhaust its
/// slice; without the tree it waits until its vruntime is the queue's leftmost. Both cases
/// arise only once the -20 task's vruntime has run 20 ms ahead of the running task's
/// (`a_minus_20_wakeup_ahead_of_the_queue_waits_for_the_next_pick`), which happens when its
/// CPU per cycle outruns the advance of its CPU's `min_vruntime` (held back by hackbench's
/// sleepers, placed 12 ms behind it). The cycle's cost decides that, and the cluster's cache
/// decides the cycle: with a 2 MiB L2 (about 14 µs a cycle) a typical run never gets there
/// — the board's picture: p99 110 against 120 µs, max 444 µs against 82 ms — and the tree
/// keeps every wake-up to the kernel's path. In a run that does get there (one seed in
/// eight), v5 waits once for tens of ms, under 1% of its wake-ups, and the tree waits a
/// slice at many, so a typical run is what is compared: the median over eight seeds. At the
/// HiKey 620's 512 KiB that `smp8` models (26.5 µs a cycle) most runs get there:
/// REPRODUCTIONS.md, seed002-cyclictest, has both.
#[test]
fn latency_tree_does_not_make_the_minus_20_task_wait_longer() {
    // A wake-up onto a busy CPU (cyclictest holds the idle states off).
    let path_us = busy_wake_path_bound_ns("smp8", 0) as f64 / 1000.0;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[3] + v[4]) / 2.0
    };
    let runs = |tree| -> (Vec<f64>, Vec<f64>) {
        (0..8)
            .map(|seed| cyclictest_beside_hackbench(tree, 2048, seed))
            .unzip()
    };
    let (v5_p99, v5_max) = runs("v5");
    let (tree_p99, tree_max) = runs("v5+rbtree");
    let (v5_p99, v5_max, tree_p99, tree_max) = (
        median(v5_p99),
        median(v5_max),
        median(tree_p99),
        median(tree_max),
    );
    // At p99 and at worst, the tree's typical run waits for nothing but the kernel's path,
    // or no longer than v5's.
    assert!(
        tree_p99 <= v5_p99.max(path_us),
        "median rbtree p99 {tree_p99} µs, v5 {v5_p99} µs, path {path_us} µs"
    );
    assert!(
        tree_max <= v5_max.max(path_us),
        "median rbtree max {tree_max} µs, v5 {v5_max} µs, path {path_us} µs"
    );
}

/// Patch 4's wake-up test and patch 7's pick, from their arithmetic alone. On smp8 the -20
/// offset is the scaled `sched_latency`, -24 ms, and the wakeup granularity 1 ms × 4. A -20
/// wake-up whose vruntime is more than 24 − 4 = 20 ms ahead of the running entity's does not
/// preempt (`wakeup_preempt_entity(curr, se)`: curr − se − `wakeup_latency_gran()` = curr −
/// se + 24 ms is not above the granularity). With the latency tree the next pick still takes
/// it while it is at most 24 + 4 = 28 ms ahead of what the pick would run
/// (`wakeup_preempt_entity(latency, se) < 1`, patch 7's hunk in `pick_next_entity()`), and
/// passes it over beyond; without the tree the pick runs the leftmost. So a -20 task whose
/// vruntime has gained 20 to 28 ms on the queue waits for the running task's next schedule
/// at every wake-up with the tree, where v5 makes it wait, once, until it is the leftmost.
#[test]
fn a_minus_20_wakeup_ahead_of_the_queue_waits_for_the_next_pick() {
    const MS_NS: u64 = 1_000_000;
    let smp8 = Platform::resolve("smp8").unwrap();
    let wakeup = QueueFlags {
        wakeup: true,
        ..QueueFlags::default()
    };
    // (variant, the -20 entity's lead over the two nice-0 entities, preempts, picked next)
    for (tree, lead, preempts, picked) in [
        ("v5+rbtree", 19 * MS_NS, true, true),
        ("v5+rbtree", 21 * MS_NS, false, true),
        ("v5+rbtree", 28 * MS_NS, false, true),
        ("v5+rbtree", 28 * MS_NS + 1, false, false),
        ("v5", 21 * MS_NS, false, false),
    ] {
        let mut f = Fair::new(
            8,
            &variant(&smp8, &[&format!("variant.latency_nice={tree}")]),
        );
        let nice0 = LoadWeight::for_nice(0, false);
        let (waiting, curr, ct) = (
            f.alloc_se(nice0, false, 0, 0),
            f.alloc_se(nice0, false, 0, 1),
            f.alloc_se(nice0, false, 0, 2),
        );
        f.enqueue_entity(0, waiting, QueueFlags::default(), 0);
        f.enqueue_entity(0, curr, QueueFlags::default(), 0);
        f.set_next_entity(0, curr, 0);
        let offset = f.latency_offset(-20);
        assert_eq!(offset, -24 * MS_NS as i64);
        f.set_latency_offset(ct, offset);
        f.ses[ct].vruntime = f.ses[curr].vruntime + lead;
        f.enqueue_entity(0, ct, wakeup, 0);
        let preempt = f.check_preempt_wakeup(false, curr, ct, true, false, 0);
        assert_eq!(preempt == Preempt::Yes, preempts, "{tree}, lead {lead} ns");
        f.put_prev_entity(0, curr, 0);
        let next = f.pick_next_entity(0);
        let expected = if picked { ct } else { waiting };
        assert_eq!(next, Some(expected), "{tree}, lead {lead} ns");
    }
}

//! Timer slack (kernel/time/hrtimer.c): `hrtimer_nanosleep()` arms a sleep of a task that is
//! neither RT nor deadline for the range from the requested time to that plus the task's
//! `timer_slack_ns`. The clock event is programmed for the range's end; an hrtimer interrupt
//! that comes inside the range (another timer's, the tick's) expires it early
//! (`__hrtimer_run_queues()` runs every timer whose soft expiry has passed).

use crate::common;
use common::*;
use schedlab::report::Results;
use serde_json::json;

const MS: u64 = 1_000_000;

/// cyclictest threads as the generator writes them (`timer` in absolute mode, pinned),
/// each `(name, cpu, interval µs, timer_slack_ns, policy)`; the generator's metrics take the
/// tasks named `cyclictest…`.
fn cyclictest(threads: &[(&str, usize, u64, u64, &str)]) -> Results {
    let mut tasks = serde_json::Map::new();
    for &(name, cpu, interval, slack, policy) in threads {
        let priority = if policy == "SCHED_FIFO" { 80 } else { 0 };
        tasks.insert(
            name.to_string(),
            json!({
                "policy": policy, "priority": priority, "loop": -1, "cpus": [cpu],
                "hrtimer_slack_ns": slack,
                "timer": { "ref": "unique", "period": interval, "mode": "absolute" }
            }),
        );
    }
    let w = json!({ "tasks": tasks, "global": { "generator": "cyclictest",
                    "pm_qos_cpu_dma_latency_us": 0 } });
    run_json(
        "smp8",
        &w.to_string(),
        500 * MS,
        &["cpufreq.governor=performance"],
    )
}

/// The (min, avg, max) latency in µs of the one thread of task `task`.
fn latencies(r: &Results, task: &str) -> (f64, f64, f64) {
    let w = r.workload_metrics.as_ref().expect("cyclictest's metrics");
    let prefix = format!("{task}-");
    let t = w["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["thread"].as_str().is_some_and(|n| n.starts_with(&prefix)))
        .unwrap_or_else(|| panic!("no thread of {task} in {w}"));
    let f = |k: &str| t[k].as_f64().unwrap_or_else(|| panic!("{k} of {t}"));
    (f("min_us"), f("avg_us"), f("max_us"))
}

/// One cyclictest thread of `policy` on CPU 2, 1 ms interval, with `slack_ns`: its (min,
/// avg, max) latency in µs.
fn alone(policy: &str, slack_ns: u64) -> (f64, f64, f64) {
    let r = cyclictest(&[("cyclictest", 2, 1000, slack_ns, policy)]);
    latencies(&r, "cyclictest")
}

/// On an idle CPU nothing else interrupts inside the range: every wake-up of a fair sleeper
/// comes at its end, the slack later than without it, through the same path.
#[test]
fn a_fair_sleeper_on_an_idle_cpu_wakes_at_the_end_of_its_slack() {
    let (none, fifty) = (alone("SCHED_OTHER", 0), alone("SCHED_OTHER", 50_000));
    for (a, b, what) in [
        (none.0, fifty.0, "min"),
        (none.1, fifty.1, "avg"),
        (none.2, fifty.2, "max"),
    ] {
        assert!(
            (b - a - 50.0).abs() < 1.0,
            "{what}: {a} µs without slack, {b} µs with 50 µs"
        );
    }
}

/// `hrtimer_nanosleep()` gives RT and deadline sleepers no slack, whatever the task's value.
#[test]
fn an_rt_sleeper_has_no_slack() {
    assert_eq!(alone("SCHED_FIFO", 0), alone("SCHED_FIFO", 5_000_000));
}

/// The default slack comes from `model.timer_slack_ns` when the workload gives none.
#[test]
fn the_default_slack_is_the_models() {
    let args = ["--policy", "other", "--duration", "1"].map(String::from);
    let w = schedlab::gen::generate("cyclictest", &args, "test", "gen").unwrap();
    let avg = |sets: &[&str]| {
        let r = run_json("smp8", &w.to_string(), 500 * MS, sets);
        r.workload_metrics.as_ref().unwrap()["avg_us"]
            .as_f64()
            .unwrap()
    };
    let base = avg(&["cpufreq.governor=performance"]);
    let slack = avg(&["cpufreq.governor=performance", "model.timer_slack_ns=30000"]);
    assert!(
        (slack - base - 30.0).abs() < 1.0,
        "{base} µs, then {slack} µs"
    );
}

/// A timer whose range has begun is expired by the next hrtimer interrupt on its CPU:
/// another sleeper's timer (here every 1 ms) or, on a busy CPU, the tick. Alone on an idle
/// CPU it waits for the range's end.
#[test]
fn another_hrtimer_interrupt_inside_the_range_expires_the_timer_early() {
    const SLACK: u64 = 20_000_000;
    let lone = cyclictest(&[("cyclictest", 3, 30_000, SLACK, "SCHED_OTHER")]);
    let (min, _, _) = latencies(&lone, "cyclictest");
    assert!(min >= 20_000.0, "alone: min {min} µs, the slack is 20 ms");

    let beside_timer = cyclictest(&[
        ("cyclictest", 3, 30_000, SLACK, "SCHED_OTHER"),
        ("cyclictest_ms", 3, 1000, 0, "SCHED_OTHER"),
    ]);
    let (_, _, max) = latencies(&beside_timer, "cyclictest");
    assert!(
        max < 1100.0,
        "beside a 1 ms timer on its CPU: max {max} µs, more than that timer's period"
    );

    let w = json!({ "tasks": {
        "hog": { "loop": -1, "cpus": [3], "run": 100_000 },
        "cyclictest": { "loop": -1, "cpus": [3], "hrtimer_slack_ns": SLACK,
                        "timer": { "ref": "unique", "period": 30_000, "mode": "absolute" } } },
        "global": { "generator": "cyclictest", "pm_qos_cpu_dma_latency_us": 0 } });
    let sets = ["cpufreq.governor=performance", "config.HZ=250"];
    let r = run_json("smp8", &w.to_string(), 500 * MS, &sets);
    let (_, _, max) = latencies(&r, "cyclictest");
    assert!(
        max < 4000.0 + 1000.0,
        "beside a busy task (the tick every 4 ms): max {max} µs"
    );
}

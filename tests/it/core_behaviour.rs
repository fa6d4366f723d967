//! Behaviour of the kernel core, CFS and RT classes, each test a property of the
//! kernel being modelled.

use crate::common;
use common::*;

// Threads are named as rt-app names them: `<task>-<n>` where n counts the threads created
// so far in the run.

/// Two always-running tasks pinned to CPU 0 with the given nice values.
fn two_hogs(nice_a: i32, nice_b: i32) -> String {
    format!(
        r#"{{ "tasks": {{
            "a": {{ "loop": -1, "cpus": [0], "priority": {nice_a}, "run": 1000000 }},
            "b": {{ "loop": -1, "cpus": [0], "priority": {nice_b}, "run": 1000000 }} }},
          "global": {{ "default_policy": "SCHED_OTHER" }} }}"#
    )
}

#[test]
fn equal_nice_tasks_share_a_cpu_evenly() {
    let r = run_json("juno-r0", &two_hogs(0, 0), 10 * S, &[]);
    let (a, b) = (
        task(&r, "a-0").runtime_ns as f64,
        task(&r, "b-1").runtime_ns as f64,
    );
    assert!(a + b > 9.9e9, "the CPU stays busy: {a} + {b}");
    assert!((a / (a + b) - 0.5).abs() < 0.01, "shares {a} vs {b}");
}

#[test]
fn nice_levels_share_in_the_ratio_of_their_weights() {
    let r = run_json("juno-r0", &two_hogs(0, 5), 10 * S, &[]);
    let (a, b) = (
        task(&r, "a-0").runtime_ns as f64,
        task(&r, "b-1").runtime_ns as f64,
    );
    // sched_prio_to_weight: nice 0 = 1024, nice 5 = 335.
    let want = 1024.0 / 335.0;
    assert!(
        ((a / b) / want - 1.0).abs() < 0.02,
        "ratio {} vs {want}",
        a / b
    );
}

#[test]
fn waking_fifo_task_preempts_a_fair_task_at_once() {
    let json = r#"{ "tasks": {
        "hog": { "loop": -1, "cpus": [1], "run": 1000000 },
        "rt": { "loop": -1, "cpus": [1], "policy": "SCHED_FIFO", "priority": 10,
                "run": 1000, "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let r = run_json("juno-r0", json, S, &[]);
    let rt = task(&r, "rt-1");
    assert!(rt.wakeups >= 99, "{} wakeups", rt.wakeups);
    let switch_cost = wake_path_bound_ns("juno-r0", 1);
    assert!(
        rt.wakeup_latency_ns.max < switch_cost,
        "RT wakeup latency {} ns with a fair task running",
        rt.wakeup_latency_ns.max
    );
    assert_eq!(rt.deadline_misses, 0);
    assert!(task(&r, "hog-0").preemptions >= 99);
}

/// A FIFO hog and a periodic FIFO task of the given priorities on one CPU.
fn fifo_pair(hog_prio: u32, periodic_prio: u32) -> schedlab::report::Results {
    let json = format!(
        r#"{{ "tasks": {{
        "hog": {{ "loop": -1, "cpus": [2], "policy": "SCHED_FIFO", "priority": {hog_prio}, "run": 1000000 }},
        "per": {{ "loop": -1, "cpus": [2], "policy": "SCHED_FIFO", "priority": {periodic_prio},
                 "run": 2000, "timer": {{ "ref": "unique", "period": 10000 }} }} }} }}"#
    );
    run_json(
        "juno-r0",
        &json,
        S,
        &["kernel.sched_rt_runtime_us=-1", "model.start_spread_ns=0"],
    )
}

#[test]
fn higher_fifo_priority_runs_first() {
    // The higher-priority periodic task preempts the hog at every wakeup...
    let r = fifo_pair(10, 20);
    let per = task(&r, "per-1");
    assert!(per.wakeups > 90);
    assert!(per.wakeup_latency_ns.max < wake_path_bound_ns("juno-r0", 2));
    // ...and a lower-priority one never gets the CPU from a higher-priority hog (it runs only
    // its start-up, before rt-app's thread pins itself to the hog's CPU).
    let r = fifo_pair(20, 10);
    let per = task(&r, "per-1");
    assert_eq!(per.activations, 0);
    assert!(per.runtime_ns < 100_000, "{} ns", per.runtime_ns);
    assert!(task(&r, "hog-0").runtime_ns > 999 * MS);
}

#[test]
fn round_robin_tasks_alternate_every_timeslice() {
    let json = r#"{ "tasks": {
        "rr": { "instance": 2, "loop": -1, "cpus": [3], "policy": "SCHED_RR", "priority": 30,
                "run": 1000000 } } }"#;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rr.txt");
    let out = schedlab::Outputs {
        trace: Some(trace.clone()),
        ..Default::default()
    };
    let r = run_full(
        "juno-r0",
        json,
        2 * S,
        &["kernel.sched_rt_runtime_us=-1"],
        0,
        &out,
    );
    let (a, b) = (task(&r, "rr-0"), task(&r, "rr-1"));
    let total = (a.runtime_ns + b.runtime_ns) as f64;
    assert!((a.runtime_ns as f64 / total - 0.5).abs() < 0.06);
    // Switches between the two on CPU 3 happen every sched_rr_timeslice (100 ms).
    let text = std::fs::read_to_string(&trace).unwrap();
    let times = trace_times(&text, |l| {
        l.contains("sched_switch") && l.contains("prev_comm=rr-") && l.contains("next_comm=rr-")
    });
    assert!(times.len() >= 15, "{} RR rotations", times.len());
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!((gap - 0.100).abs() < 0.005, "RR rotation after {gap} s");
    }
}

#[test]
fn rt_throttling_leaves_five_percent_to_fair_tasks() {
    let json = r#"{ "tasks": {
        "rt": { "loop": -1, "cpus": [0], "policy": "SCHED_FIFO", "priority": 50, "run": 1000000 },
        "fair": { "loop": -1, "cpus": [0], "run": 1000000 } } }"#;
    let r = run_json("juno-r0", json, 5 * S, &[]);
    let f = task(&r, "fair-1").runtime_ns as f64 / (5 * S) as f64;
    // sched_rt_runtime_us 950000 of 1000000: the fair task gets the remaining 5%.
    assert!((f - 0.05).abs() < 0.01, "fair share {f}");
}

#[test]
fn lone_periodic_task_runs_at_once_and_meets_its_deadlines() {
    let json = r#"{ "tasks": { "p": { "loop": -1, "run": 3000,
        "timer": { "ref": "unique", "period": 16000 } } } }"#;
    let r = run_json("juno-r0", json, 2 * S, &[]);
    let p = task(&r, "p-0");
    assert!(p.activations >= 120, "{} activations", p.activations);
    assert_eq!(p.deadline_misses, 0);
    // An idle CPU runs the woken task as soon as it is out of its idle state and through
    // the kernel's wake-up path: at most the deepest exit latency (juno's cpu/cluster sleep)
    // and the path, never waiting on the runqueue.
    let bound = p
        .cpu_runtime_ns
        .keys()
        .map(|c| wake_path_bound_ns("juno-r0", c.parse().unwrap()))
        .max()
        .unwrap();
    assert!(
        p.wakeup_latency_ns.max <= bound,
        "{:?} beyond {bound}",
        p.wakeup_latency_ns
    );
    let split = &p.latency_split_ns;
    assert!(split.idle_exit_ns > 0 && split.wakeup_path_ns > 0);
    assert_eq!(split.runqueue_ns, 0);
}

#[test]
fn overloaded_periodic_task_misses_deadlines() {
    let json = r#"{ "tasks": {
        "p": { "loop": -1, "cpus": [0], "run": 8000, "timer": { "ref": "unique", "period": 10000 } },
        "hog": { "loop": -1, "cpus": [0], "run": 1000000 } } }"#;
    let r = run_json("juno-r0", json, 2 * S, &[]);
    assert!(task(&r, "p-0").deadline_misses > 10);
}

/// A task that runs `run` µs once, calibrated on `cal`, pinned to `cpu`.
fn one_run(cal: &str, cpu: usize) -> f64 {
    let json = format!(
        r#"{{ "tasks": {{ "t": {{ "loop": 1, "cpus": [{cpu}], "run": 10000 }} }},
             "global": {{ "calibration": "{cal}" }} }}"#
    );
    let r = run_json("juno-r0", &json, S, &["cpufreq.governor=performance"]);
    task(&r, "t-0").runtime_ns as f64 / 1e6
}

#[test]
fn run_is_work_calibrated_on_a_cpu() {
    // Calibrated on the A57 (CPU1, capacity 1024): 10 ms there, 1024/447 longer on an A53.
    let big = one_run("CPU1", 1);
    assert!((big - 10.0).abs() < 0.05, "{big} ms on CPU1");
    let little = one_run("CPU1", 0);
    assert!(
        (little - 10.0 * 1024.0 / 447.0).abs() < 0.1,
        "{little} ms on CPU0"
    );
    // Calibrated on the A53: 10 ms on the A53.
    let cal_little = one_run("CPU0", 0);
    assert!((cal_little - 10.0).abs() < 0.05, "{cal_little} ms on CPU0");
}

#[test]
fn same_seed_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/workloads/default.json"
    ))
    .unwrap();
    let mut outs = vec![];
    for i in 0..2 {
        let trace = dir.path().join(format!("t{i}.txt"));
        let out = schedlab::Outputs {
            trace: Some(trace.clone()),
            ..Default::default()
        };
        let r = run_full("juno-r0", &json, S, &[], 7, &out);
        outs.push((
            serde_json::to_string(&r).unwrap(),
            std::fs::read(&trace).unwrap(),
        ));
    }
    assert_eq!(outs[0].0, outs[1].0, "JSON differs between identical runs");
    assert!(
        outs[0].1 == outs[1].1,
        "trace differs between identical runs"
    );
    assert!(outs[0].1.len() > 1000);
}

#[test]
fn every_shared_rtapp_example_runs_to_completion() {
    let Some(dir) = examples_dir() else {
        return;
    };
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let json = std::fs::read_to_string(&p).unwrap();
        let r = run_json("juno-r0", &json, 3 * S, &[]);
        let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
        assert!(busy > 0, "{}: nothing ran", p.display());
        assert!(
            r.tasks.iter().all(|t| t.runtime_ns > 0),
            "{}: a thread never ran",
            p.display()
        );
        n += 1;
    }
    assert!(n >= 13);
}

#[test]
fn rtapp_logs_have_a_row_per_iteration() {
    let json = r#"{ "tasks": { "p": { "loop": -1, "cpus": [1], "run": 10000,
        "timer": { "ref": "unique", "period": 100000 } } },
        "global": { "calibration": "CPU1", "log_basename": "demo" } }"#;
    let dir = tempfile::tempdir().unwrap();
    let out = schedlab::Outputs {
        rtapp_logs: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let r = run_full(
        "juno-r0",
        json,
        S,
        &["cpufreq.governor=performance"],
        0,
        &out,
    );
    let text = std::fs::read_to_string(dir.path().join("demo-p-0.log")).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("#idx"));
    let rows: Vec<Vec<i64>> = lines
        .map(|l| l.split_whitespace().map(|f| f.parse().unwrap()).collect())
        .collect();
    // One row per completed period of 100 ms within the second simulated.
    assert!((9..=10).contains(&rows.len()), "{} rows", rows.len());
    assert!(rows.len() as u64 <= task(&r, "p-0").activations);
    for row in &rows {
        // run ≈ 10 ms at CPU1's highest OPP (calibrated there), c_period = the timer period.
        assert!((row[2] - 10_000).abs() <= 5, "run column {}", row[2]);
        assert_eq!(row[9], 100_000);
    }
}

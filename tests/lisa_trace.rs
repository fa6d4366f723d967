//! The trace opens in LISA (lisa-linux 3.1, installed by scripts/install-lisa.sh into
//! target/lisa-venv) and LISA's dataframes agree with the JSON results. Skipped, with a
//! message, when LISA is not installed.

mod common;
use common::*;
use std::process::Command;

#[test]
fn lisa_reads_the_trace_and_agrees_with_the_results() {
    let Some(python) = lisa_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.txt");
    // Periodic tasks, a task hopping between CPUs by affinity, more runners than CPUs (so
    // idle CPUs pull) and a forking task whose children exit.
    let json = r#"{ "tasks": {
        "per": { "instance": 2, "loop": -1, "run": 2000, "timer": { "ref": "unique", "period": 8000 } },
        "hop": { "loop": -1, "phases": {
            "a": { "cpus": [0], "run": 3000, "sleep": 2000 },
            "b": { "cpus": [1], "run": 3000, "sleep": 2000 } } },
        "busy": { "instance": 6, "loop": -1, "run": 5000, "sleep": 1000 },
        "child": { "instance": 0, "loop": 1, "run": 500 },
        "parent": { "loop": -1, "fork": "child", "sleep": 20000 } } }"#;
    let out = schedlab::Outputs {
        trace: Some(trace.clone()),
        trace_events: schedlab::trace::EventSelection::parse("all").unwrap(),
        ..Default::default()
    };
    let r = run_full("juno-r0", json, S, &[], 0, &out);
    let events = "sched_switch,sched_wakeup,sched_waking,sched_wakeup_new,sched_migrate_task,\
                  sched_process_fork,sched_process_exit,cpu_idle,cpu_frequency,sched_pelt_se,\
                  sched_pelt_cfs,sched_util_est_se,sched_util_est_cfs,sched_cpu_capacity,\
                  uclamp_util_se,uclamp_util_cfs";
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/lisa_trace_counts.py");
    let o = Command::new(python)
        .args([script, trace.to_str().unwrap(), events])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "LISA failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let counts: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines = |ev: &str| {
        text.lines()
            .filter(|l| l.contains(&format!(" {ev}: ")))
            .count() as u64
    };
    assert_eq!(
        counts["sched_switch"],
        lines("sched_switch"),
        "LISA dropped sched_switch rows"
    );
    let wakeups: u64 = r.tasks.iter().map(|t| t.wakeups).sum::<u64>()
        + r.exited_forks.iter().map(|e| e.counts.wakeups).sum::<u64>();
    assert!(wakeups > 100);
    assert_eq!(counts["sched_wakeup"], wakeups);
    assert_eq!(counts["sched_waking"], wakeups);
    let exited_forks: u64 = r.exited_forks.iter().map(|e| e.counts.threads).sum();
    assert_eq!(
        counts["sched_wakeup_new"],
        r.tasks.len() as u64 + exited_forks
    );
    let migrations: u64 = r.tasks.iter().map(|t| t.migrations).sum::<u64>()
        + r.exited_forks
            .iter()
            .map(|e| e.counts.migrations)
            .sum::<u64>();
    assert!(migrations > 10);
    assert_eq!(counts["sched_migrate_task"], migrations);
    let exited = r.tasks.iter().filter(|t| t.exited).count() as u64 + exited_forks;
    assert!(exited > 10);
    assert_eq!(counts["sched_process_exit"], exited);
    let forks: u64 = r.tasks.iter().map(|t| t.forks).sum::<u64>()
        + r.exited_forks.iter().map(|e| e.counts.forks).sum::<u64>();
    assert_eq!(counts["sched_process_fork"], forks);
    let forked_alive = r.tasks.iter().filter(|t| t.forked).count() as u64;
    assert_eq!(forks, exited_forks + forked_alive);
    // One cpu_frequency per CPU at boot, then one per CPU of a policy at each change.
    assert!(counts["cpu_frequency"].as_u64().unwrap() > r.cpus.len() as u64);
    assert_eq!(counts["cpu_frequency"], lines("cpu_frequency"));
    assert!(counts["cpu_idle"].as_u64().unwrap() > 0);
    // The load-tracking events in LISA's kernel-module formats parse, row for row.
    for &ev in schedlab::trace::EventSelection::NAMES {
        assert!(counts[ev].as_u64().unwrap() > 0, "{ev}: no rows");
        assert_eq!(counts[ev], lines(ev), "{ev}: LISA dropped rows");
    }
}

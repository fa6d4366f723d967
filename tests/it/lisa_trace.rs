//! The trace opens in LISA (lisa-linux 3.1, installed by scripts/install-lisa.sh into
//! target/lisa-venv), as text and as trace.dat, and LISA's dataframes agree with the JSON
//! results; LISA's analyses run on traces of rt-app's examples. Skipped, with a message,
//! when LISA is not installed, and failing then under `CI=true`.

use crate::common;
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
        trace_events: schedlab::kernel::tracepoint::EventSelection::parse("all").unwrap(),
        ..Default::default()
    };
    let r = run_full("juno-r0", json, S, &[], 0, &out);
    let events = "sched_switch,sched_wakeup,sched_waking,sched_wakeup_new,sched_migrate_task,\
                  sched_process_fork,sched_process_exit,cpu_idle,cpu_frequency,task_rename,\
                  sched_pelt_se,sched_pelt_cfs,sched_pelt_rt,sched_pelt_dl,sched_util_est_se,\
                  sched_util_est_cfs,sched_cpu_capacity,uclamp_util_se,uclamp_util_cfs";
    // The same run as trace.dat, which LISA reads through trace-cmd.
    let dat = dir.path().join("run.dat");
    let dat_out = schedlab::Outputs {
        trace: Some(dat.clone()),
        ..out.clone()
    };
    run_full("juno-r0", json, S, &[], 0, &dat_out);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/lisa_trace_counts.py");
    let count = |path: &std::path::Path| {
        let o = Command::new(&python)
            .args([script, path.to_str().unwrap(), events])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "LISA failed on {}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let counts = count(&trace);
    if Command::new("trace-cmd").arg("--version").output().is_ok() {
        assert_eq!(
            count(&dat),
            counts,
            "LISA reads the same rows from the trace.dat"
        );
    } else {
        eprintln!("SKIPPED: trace-cmd is not installed: LISA cannot read the trace.dat");
        assert!(std::env::var("CI").as_deref() != Ok("true"));
    }
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
    // Every thread renames itself from rt-app once.
    assert_eq!(counts["task_rename"], counts["sched_wakeup_new"]);
    // The load-tracking events in LISA's kernel-module formats parse, row for row.
    for &ev in schedlab::kernel::tracepoint::EventSelection::NAMES {
        assert!(counts[ev].as_u64().unwrap() > 0, "{ev}: no rows");
        assert_eq!(counts[ev], lines(ev), "{ev}: LISA dropped rows");
    }
}

/// LISA's tasks, latency, load_tracking, frequency, idle, rta and energy-model analyses run
/// on a trace of every rt-app example (with its plat_info), for every task, rt-app thread
/// and CPU, with every rt-app ftrace category on (`"ftrace": true`) so that the `rta`
/// analyses have rt-app's own lines to read: none finds an event missing but one the run
/// never had cause to emit (a task that never sleeps is never woken: LISA then reports
/// sched_wakeup missing, as for a real kernel's trace). The text traces are read with the
/// docs/outputs.md's recipe, and one example as trace.dat too when trace-cmd is installed.
#[test]
fn lisa_analyses_run_on_the_rt_app_examples() {
    let Some(python) = lisa_python() else {
        return;
    };
    let Some(examples) = examples_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    let has_trace_cmd = Command::new("trace-cmd").arg("--version").output().is_ok();
    if !has_trace_cmd {
        skip("trace-cmd is not installed: LISA's analyses of a trace.dat are not run");
    }
    for path in &names {
        let json = std::fs::read_to_string(path).unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let mut traces = vec![dir.path().join(stem).with_extension("txt")];
        if stem == "example7" && has_trace_cmd {
            traces.push(dir.path().join(stem).with_extension("dat"));
        }
        for trace in traces {
            run_all_categories(&json, &trace);
            args.push(trace.display().to_string());
            args.push(schedlab::plat_info_path(&trace).display().to_string());
        }
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/lisa_analyses.py");
    let o = Command::new(python)
        .arg(script)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "LISA failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let results: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut rta_ok = 0;
    for (trace, calls) in results.as_object().unwrap() {
        let text = if trace.ends_with(".dat") {
            String::from_utf8(
                Command::new("trace-cmd")
                    .args(["report", trace])
                    .output()
                    .unwrap()
                    .stdout,
            )
            .unwrap()
        } else {
            std::fs::read_to_string(trace).unwrap()
        };
        // Every example's threads are rt-app threads and write rt-app's lines.
        assert!(
            calls["rta.threads"].as_u64().unwrap() > 0,
            "{trace}: no rt-app thread found by LISA"
        );
        for (call, outcome) in calls.as_object().unwrap() {
            let Some(outcome) = outcome.as_str() else {
                continue;
            };
            ran += 1;
            if call.starts_with("rta.") && outcome == "ok" {
                rta_ok += 1;
            }
            let no_rows = outcome.starts_with("MissingTraceEventError")
                && outcome
                    .split("required events: ")
                    .nth(1)
                    .and_then(|r| r.split(". Available").next())
                    .is_some_and(|evs| {
                        evs.split(", ")
                            .all(|ev| !text.contains(&format!(" {ev}: ")))
                    });
            if outcome != "ok" && !no_rows {
                failures.push(format!("{trace}: {call}: {outcome}"));
            }
        }
        assert!(
            calls["energy.estimate_from_trace"] == "ok",
            "{trace}: the energy model runs"
        );
    }
    assert!(ran > 1000, "{ran} calls");
    assert!(rta_ok > 300, "{rta_ok} rta calls ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Simulate an rt-app example on juno-r0 for 300 ms into `trace` with every load-tracking
/// event and every rt-app ftrace category.
fn run_all_categories(json: &str, trace: &std::path::Path) {
    let mut workload = schedlab::workload::parse_workload(json, "example.json").unwrap();
    workload.global.ftrace = schedlab::workload::FtraceCategories::ALL;
    let platform = schedlab::platform::Platform::resolve("juno-r0").unwrap();
    let out = schedlab::Outputs {
        trace: Some(trace.to_path_buf()),
        trace_events: schedlab::kernel::tracepoint::EventSelection::parse("all").unwrap(),
        ..Default::default()
    };
    schedlab::simulate(
        schedlab::Run {
            variant: schedlab::kernel::Variant::for_platform(&platform),
            platform,
            workload,
            duration_ns: Some(300 * MS),
            seed: 0,
            reproducible: true,
        },
        &out,
    )
    .unwrap();
}

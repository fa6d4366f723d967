//! The command line: the README's first command works, and bad input of every kind exits
//! with code 2 and one line naming the file, the place, what was expected and what was found.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn schedlab(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedlab runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Exit code 2 and a single stderr line containing every fragment.
fn assert_input_error(out: &Output, fragments: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected: {err}"
    );
    for f in fragments {
        assert!(err.contains(f), "`{f}` missing from: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn default_run_simulates_the_default_workload() {
    let out = schedlab(&["run", "--duration", "1s"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("juno-r0"), "{text}");
    assert!(text.contains("ui-0"), "{text}");
}

#[test]
fn json_results_have_the_documented_fields() {
    let out = schedlab(
        &[
            "run",
            "--duration",
            "500ms",
            "--json",
            "-",
            "--reproducible",
        ],
        None,
    );
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in [
        "schedlab_version",
        "platform",
        "seed",
        "duration_ns",
        "variant",
        "tasks",
        "cpus",
        "sim_events",
        "wall_ns",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    let t = &v["tasks"][0];
    for k in [
        "name",
        "pid",
        "policy",
        "prio",
        "runtime_ns",
        "wakeups",
        "preemptions",
        "migrations",
        "activations",
        "deadline_misses",
        "wakeup_latency_ns",
        "cpu_runtime_ns",
    ] {
        assert!(t.get(k).is_some(), "task field {k} missing");
    }
    for k in ["min", "mean", "p50", "p90", "p95", "p99", "max"] {
        assert!(
            t["wakeup_latency_ns"].get(k).is_some(),
            "latency field {k} missing"
        );
    }
    for k in [
        "cpu",
        "capacity_orig",
        "busy_ns",
        "idle_ns",
        "freq_residency_ns",
    ] {
        assert!(v["cpus"][0].get(k).is_some(), "cpu field {k} missing");
    }
    assert_eq!(v["duration_ns"], 500_000_000u64);
}

#[test]
fn malformed_json_names_line_and_column() {
    let out = schedlab(
        &["run", "-"],
        Some("{ \"tasks\": { \"t\": { \"run\": 10 \n }"),
    );
    assert_input_error(&out, &["-:", "line"]);
}

#[test]
fn unknown_event_is_rejected_with_strict() {
    let out = schedlab(
        &["check", "--strict", "-"],
        Some(r#"{ "tasks": { "t": { "frobnicate": 10, "run": 10 } } }"#),
    );
    assert_input_error(&out, &["tasks.t.frobnicate", "--strict"]);
}

#[test]
fn negative_duration_is_rejected() {
    let out = schedlab(
        &["run", "-"],
        Some(r#"{ "tasks": { "t": { "loop": 1, "sleep": -5 } } }"#),
    );
    assert_input_error(&out, &["sleep", "-5"]);
}

#[test]
fn priority_out_of_range_is_rejected() {
    let out = schedlab(
        &["run", "-"],
        Some(r#"{ "tasks": { "t": { "policy": "SCHED_FIFO", "priority": 120, "run": 10 } } }"#),
    );
    assert_input_error(&out, &["priority", "120"]);
}

#[test]
fn unknown_platform_is_rejected() {
    let out = schedlab(&["run", "--platform", "pixel9000"], None);
    assert_input_error(&out, &["--platform", "pixel9000", "juno-r0"]);
}

#[test]
fn unknown_set_key_is_rejected() {
    let out = schedlab(&["run", "--set", "kernel.sched_frobnicate=1"], None);
    assert_input_error(&out, &["--set", "kernel.sched_frobnicate"]);
}

#[test]
fn bad_set_value_is_rejected() {
    let out = schedlab(&["run", "--set", "config.HZ=123"], None);
    assert_input_error(&out, &["config.HZ", "123"]);
}

#[test]
fn missing_workload_file_is_input_error() {
    let out = schedlab(&["run", "/nonexistent/w.json"], None);
    assert_input_error(&out, &["/nonexistent/w.json"]);
}

#[test]
fn bad_duration_is_rejected() {
    let out = schedlab(&["run", "--duration", "ten seconds"], None);
    assert_input_error(&out, &["--duration", "ten seconds"]);
}

#[test]
fn platforms_lists_the_presets() {
    let out = schedlab(&["platforms"], None);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for p in ["juno-r0", "sdm845", "rk3399", "x86-4c8t", "smp8"] {
        assert!(text.contains(p), "{p} missing");
    }
    let out = schedlab(&["platforms", "juno-r0"], None);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("1024"));
}

#[test]
fn invalid_uclamp_sysctls_stop_the_run_with_einval() {
    // min > max, max > 1024, rt_default > 1024 (SPEC §6).
    for sets in [
        vec![
            "kernel.sched_util_clamp_max=512",
            "kernel.sched_util_clamp_min=600",
        ],
        vec!["kernel.sched_util_clamp_max=1025"],
        vec!["kernel.sched_util_clamp_min_rt_default=2000"],
    ] {
        let mut args = vec!["run", "--duration", "100ms"];
        for s in &sets {
            args.extend(["--set", s]);
        }
        let out = schedlab(&args, None);
        assert_input_error(&out, &["EINVAL", "sched_util_clamp"]);
    }
}

#[test]
fn root_cgroup_has_no_uclamp_files() {
    let out = schedlab(&["run", "--set", "cgroup./.cpu.uclamp.min=10"], None);
    assert_input_error(&out, &["cpu.uclamp.min", "ENOENT"]);
    let out = schedlab(&["run", "--set", "cgroup./bg.cpu.uclamp.max=120"], None);
    assert_input_error(&out, &["/bg", "ERANGE"]);
}

#[test]
fn timed_writes_report_their_result_and_the_run_goes_on() {
    let out = schedlab(
        &[
            "run",
            "--duration",
            "300ms",
            "--json",
            "-",
            "--set-at",
            "100ms:kernel.sched_util_clamp_max=2000",
            "--set-at",
            "200ms:kernel.sched_util_clamp_min_rt_default=128",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["admin_writes"][0]["result"], "EINVAL");
    assert_eq!(v["admin_writes"][1]["result"], "ok");
    assert_eq!(v["admin_writes"][1]["at_ns"], 200_000_000u64);
    // Only run-time writable things can be written mid-run.
    let out = schedlab(&["run", "--set-at", "1s:config.HZ=100"], None);
    assert_input_error(&out, &["--set-at", "config.HZ"]);
}

#[test]
fn compare_prints_an_mmtests_table() {
    let fio = schedlab(&["gen", "fio", "--runtime", "1"], None);
    assert!(fio.status.success());
    let out = schedlab(
        &[
            "compare",
            "-",
            "--platform",
            "rk3399",
            "--runs",
            "3",
            "--vs",
            "cpufreq.iowait_boost=false",
        ],
        Some(&String::from_utf8_lossy(&fio.stdout)),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Hmean  iops"), "{text}");
    assert!(text.contains("Stddev iops"), "{text}");
    let bad = schedlab(
        &["compare", "-", "--vs", "nope=1"],
        Some(r#"{ "tasks": { "t": { "run": 10 } } }"#),
    );
    assert_input_error(&bad, &["--vs", "nope"]);
}

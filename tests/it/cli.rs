//! The command line: the README's first command works, and bad input of every kind exits
//! with code 2 and one line naming the file, the place, what was expected and what was found.

use crate::common;
use common::schedlab_cli as schedlab;
use std::process::Output;

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

/// `schedlab … | head`: a reader that goes away ends the program quietly, with no panic.
#[test]
fn a_closed_standard_output_ends_the_program_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // Far more than a pipe's buffer, so the write is still going when the reader leaves.
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["gen", "hackbench", "--groups", "64"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedlab runs");
    let mut head = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.is_empty(), "{err}");
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
    // min > max, max > 1024, rt_default > 1024.
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
    // A policy is named by its first CPU (juno-r0: policy0 and policy1), and its speed
    // is a kHz integer.
    let out = schedlab(
        &[
            "run",
            "--set-at",
            "1ms:cpufreq.policy2.scaling_setspeed=600000",
        ],
        None,
    );
    assert_input_error(
        &out,
        &["cpufreq.policy2.scaling_setspeed", "0, 1", "policy2"],
    );
    let out = schedlab(
        &[
            "run",
            "--set-at",
            "1ms:cpufreq.policy0.scaling_setspeed=6e5",
        ],
        None,
    );
    assert_input_error(&out, &["cpufreq.policy0.scaling_setspeed", "kHz", "6e5"]);
    // In an experiment file, the policy's error names the file and the key's place.
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("sa.toml");
    std::fs::write(
        &exp,
        "platform = \"juno-r0\"\nduration = \"10ms\"\n[[set_at]]\nat = \"1ms\"\n\
         cpufreq.policy2.scaling_setspeed = 600000\n[[workload]]\nname = \"w\"\ngen = \"pipe\"\n",
    )
    .unwrap();
    let out = schedlab(&["run", exp.to_str().unwrap()], None);
    assert_input_error(&out, &["sa.toml", "set_at[0]", "line 5", "policy2"]);
    // `replay --freq trace` writes them through the userspace governor: another governor
    // would refuse every write.
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/host-traces/cyclictest.txt"
    );
    let platform = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/host-traces/cyclictest.platform.toml"
    );
    let out = schedlab(
        &[
            "replay",
            trace,
            "--trace-platform",
            platform,
            "--freq",
            "trace",
            "--set",
            "cpufreq.governor=schedutil",
        ],
        None,
    );
    assert_input_error(&out, &["cpufreq.governor", "userspace", "schedutil"]);
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

// Every input handled, every output trustworthy.

/// Exit code 3 (an output could not be written) and one line naming the path.
fn assert_output_error(out: &Output, path: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(path), "`{path}` missing from: {err}");
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn counts_and_sizes_are_bounded_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for runs in ["9223372036854775807", "4294967295", "1001"] {
        let exp = write(
            dir.path(),
            "r.toml",
            &format!("runs = {runs}\n[[workload]]\ngen = \"fio\"\n"),
        );
        assert_input_error(
            &schedlab(&["check", &exp], None),
            &["runs", "from 1 to 1000"],
        );
    }
    let seeds: Vec<String> = (0..1001).map(|i| i.to_string()).collect();
    let exp = write(
        dir.path(),
        "s.toml",
        &format!(
            "seeds = [{}]\n[[workload]]\ngen = \"fio\"\n",
            seeds.join(",")
        ),
    );
    assert_input_error(&schedlab(&["check", &exp], None), &["seeds", "1001 seeds"]);
    // A million threads is a real server; 1e8 is not, in one task or spread over two.
    let out = schedlab(
        &["check", "-"],
        Some(r#"{"tasks": {"a": {"instance": 100000000, "run": 10}}}"#),
    );
    assert_input_error(&out, &["tasks.a.instance", "1048576"]);
    let out = schedlab(
        &["check", "-"],
        Some(
            r#"{"tasks": {"a": {"instance": 1000000, "run": 10},
                          "b": {"instance": 100000, "run": 10}}}"#,
        ),
    );
    assert_input_error(&out, &["tasks.b.instance", "at most 1048576 threads"]);
    let out = schedlab(&["run", "--duration", "1e30s"], None);
    assert_input_error(&out, &["--duration", "at most 1000000s", "1e30s"]);
    let out = schedlab(
        &[
            "sweep",
            "-",
            "--param",
            "model.start_spread_ns=0,1,2,3,4,5,6,7,8,9",
            "--param",
            "debug.migration_cost_ns=0,1,2,3,4,5,6,7,8,9",
            "--param",
            "cost.syscall_ns=1,2,3,4,5,6,7,8,9,10",
            "--param",
            "cost.pipe_op_ns=1,2,3,4,5,6,7,8,9,10",
            "--param",
            "cost.unix_op_ns=1,2,3,4,5,6,7,8,9,10,11",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        Some(r#"{"tasks": {"t": {"run": 10}}}"#),
    );
    assert_input_error(&out, &["the grid", "at most 100000 points", "110000"]);
}

#[test]
fn a_failed_output_leaves_nothing_behind_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = d.join("no/such/dir/r.json");
    let out = schedlab(
        &[
            "run",
            "--duration",
            "100ms",
            "--json",
            json.to_str().unwrap(),
        ],
        None,
    );
    assert_output_error(&out, json.to_str().unwrap());
    // The trace is fine but the logs directory is a file: no trace, no plat_info.yml.
    let file = write(d, "file", "");
    let trace = d.join("run.txt");
    let out = schedlab(
        &[
            "run",
            "--duration",
            "100ms",
            "--trace",
            trace.to_str().unwrap(),
            "--rtapp-logs",
            &file,
        ],
        None,
    );
    assert_output_error(&out, &file);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
    let mut left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["file"], "half-written outputs left behind");
    // A full device: exit 3, and no plat_info.yml beside it.
    if std::path::Path::new("/dev/full").exists() {
        let out = schedlab(
            &["run", "--duration", "100ms", "--trace", "/dev/full"],
            None,
        );
        assert_output_error(&out, "/dev/full");
        assert!(!std::path::Path::new("/dev/full.plat_info.yml").exists());
    }
    // A run that succeeds leaves its outputs and no temporary file.
    let out = schedlab(
        &[
            "run",
            "--duration",
            "100ms",
            "--trace",
            trace.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success());
    let mut left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["file", "run.plat_info.yml", "run.txt"]);
}

#[test]
fn switches_are_validated_as_the_kernel_does_and_typos_get_a_suggestion() {
    // Documented, so accepted.
    let out = schedlab(
        &[
            "run",
            "--duration",
            "100ms",
            "--set",
            "model.io_jitter_pct=5",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // sched_rt_global_validate(): runtime above the period is EINVAL, in either write order.
    let out = schedlab(
        &["run", "--set", "kernel.sched_rt_runtime_us=2000000"],
        None,
    );
    assert_input_error(&out, &["kernel.sched_rt_runtime_us", "EINVAL"]);
    let out = schedlab(&["run", "--set", "kernel.sched_rt_period_us=900000"], None);
    assert_input_error(&out, &["kernel.sched_rt_period_us", "EINVAL"]);
    let out = schedlab(&["run", "--set", "kernel.sched_rt_runtime_us=-2"], None);
    assert_input_error(&out, &["kernel.sched_rt_runtime_us"]);
    let out = schedlab(
        &[
            "run",
            "--duration",
            "100ms",
            "--set",
            "kernel.sched_rt_period_us=2000000",
            "--set",
            "kernel.sched_rt_runtime_us=1500000",
            "--set",
            "kernel.sched_rt_runtime_us=-1",
            "--json",
            "-",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // sched_rr_handler(): 0 or less restores RR_TIMESLICE (100 ms).
    let out = schedlab(
        &[
            "run",
            "--duration",
            "100ms",
            "--set",
            "kernel.sched_rr_timeslice_ms=-5",
            "--json",
            "-",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["variant"]["kernel.sched_rr_timeslice_ms"], 100);
    let out = schedlab(&["run", "--set", "config.HZZ=100"], None);
    assert_input_error(&out, &["config.HZZ", "did you mean `config.HZ`?"]);
    let out = schedlab(&["run", "--set", "feature.UTIL_ESTT=false"], None);
    assert_input_error(&out, &["did you mean `feature.UTIL_EST`?"]);
}

#[test]
fn switches_lists_every_key_with_default_type_range_and_meaning() {
    let out = schedlab(&["switches"], None);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for s in schedlab::kernel::variant::switches() {
        assert!(text.contains(&s.key), "{} missing", s.key);
        assert!(!s.meaning.is_empty() && !s.range.is_empty(), "{s:?}");
    }
    assert!(
        text.contains("kernel.sched_rt_runtime_us\n    default 950000; integer in -1..=2147483647")
    );
    let out = schedlab(&["switches", "uclamp"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("config.UCLAMP_BUCKETS_COUNT") || text.contains("variant.uclamp_rt_sync")
    );
    assert!(!text.contains("config.HZ\n"), "{text}");
    assert_input_error(&schedlab(&["switches", "zzzz"], None), &["PATTERN", "zzzz"]);
}

/// The table of docs/switches.md: its lines from the first that starts with `|` to the last.
fn documented_switch_table() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/switches.md"))
        .expect("docs/switches.md");
    let rows: Vec<&str> = doc
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    rows.join("\n") + "\n"
}

/// The documented table is the registry's, as `schedlab switches --markdown` writes it:
/// every key, default, type, values and meaning (regenerate it with that command).
#[test]
fn the_documented_switch_table_is_the_registrys() {
    let registry = schedlab::kernel::variant::switches();
    let generated = schedlab::report::switch_table(&registry);
    assert!(
        documented_switch_table() == generated,
        "docs/switches.md's table differs from `schedlab switches --markdown`"
    );
    assert_eq!(generated.lines().count(), registry.len() + 2);
    let out = schedlab(&["switches", "--markdown"], None);
    assert_eq!(String::from_utf8_lossy(&out.stdout), generated);
}

#[test]
fn a_timed_write_after_the_end_is_an_error_and_failed_ones_show_in_the_summary() {
    let out = schedlab(
        &[
            "run",
            "--duration",
            "1s",
            "--set-at",
            "20s:kernel.sched_util_clamp_min=100",
        ],
        None,
    );
    assert_input_error(
        &out,
        &["--set-at", "before the end of the run (1 s)", "20 s"],
    );
    let out = schedlab(
        &[
            "run",
            "--duration",
            "300ms",
            "--set-at",
            "100ms:kernel.sched_util_clamp_max=2000",
            "--set-at",
            "200ms:task.nobody.uclamp.min=100",
        ],
        None,
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("timed write failed: kernel.sched_util_clamp_max=2000 at 0.100 s: EINVAL"),
        "{text}"
    );
    assert!(
        text.contains("task.nobody.uclamp.min=100 at 0.200 s: ESRCH"),
        "{text}"
    );
}

#[test]
fn sweeps_check_everything_first_and_fail_when_nothing_ran() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let w = r#"{"tasks": {"t": {"run": 1000, "sleep": 1000}}}"#;
    let sweep = |params: &[&str]| {
        let mut args = vec!["sweep", "-", "--duration", "100ms", "--out"];
        args.push(out_dir.to_str().unwrap());
        for p in params {
            args.extend(["--param", p]);
        }
        schedlab(&args, Some(w))
    };
    let out = sweep(&["nope.key=1,2"]);
    assert_input_error(&out, &["--param", "nope.key"]);
    assert!(!out_dir.join("points.csv").exists(), "ran before checking");
    let out = sweep(&["cpufreq.rate_limit_us=200,x"]);
    assert_input_error(&out, &["cpufreq.rate_limit_us", "`x`"]);
    // Each value alone is valid, the combination is sched_rt_global_validate()'s EINVAL.
    let out = sweep(&[
        "kernel.sched_rt_period_us=960000",
        "kernel.sched_rt_runtime_us=990000",
    ]);
    assert_input_error(&out, &["EINVAL"]);
    // Every point fails when it runs: non-zero.
    let out = sweep(&["kernel.sched_util_clamp_max=2000,3000"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("every one of the 2 points"));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = schedlab(
        &[
            "sweep",
            "--merge",
            empty.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        None,
    );
    assert_input_error(&out, &["--merge", "none"]);
}

#[test]
fn error_messages_are_one_line_whatever_the_input_holds() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.toml", "name = \"x\nruns = 3\n");
    assert_input_error(&schedlab(&["check", &bad], None), &["bad.toml", "line 1"]);
    let bad = write(dir.path(), "bad2.toml", "[set\ncpufreq.governor = 1\n");
    assert_input_error(&schedlab(&["check", &bad], None), &["bad2.toml", "TOML"]);
    let out = schedlab(
        &["check", "--strict", "-"],
        Some("{\"tasks\": {\"a\\nb\": {\"run\": 10, \"bo\\u001bgus\": 1}}}"),
    );
    assert_input_error(&out, &["a\\nb"]);
    // Without --strict the unknown key is a warning, on one line too.
    let out = schedlab(
        &["check", "-"],
        Some("{\"tasks\": {\"a\\nb\": {\"run\": 10, \"bo\\u001bgus\": 1}}}"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn run_help_names_every_governor() {
    let out = schedlab(&["run", "--help"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    for g in [
        "schedutil",
        "performance",
        "powersave",
        "ondemand",
        "conservative",
    ] {
        assert!(text.contains(g), "{g} missing from run --help");
    }
}

#[test]
fn compare_follows_mmtests_conventions_and_keeps_every_seed() {
    let w =
        r#"{"tasks": {"t": {"loop": -1, "run": 2000, "timer": {"ref": "t", "period": 10000}}}}"#;
    let out = schedlab(
        &[
            "compare",
            "-",
            "--duration",
            "300ms",
            "--runs",
            "3",
            "--vs",
            "cost.uclamp_rq_op_ns=0 variant.uclamp_static_key=always-active",
            "--stats",
            "--json",
            "-",
        ],
        Some(w),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["seeds"], serde_json::json!([0, 1, 2]));
    let metrics = v["metrics"].as_array().unwrap();
    for m in metrics {
        let values = m["values"].as_array().unwrap();
        assert_eq!(values.len(), 2);
        assert!(
            values.iter().all(|s| s.as_array().unwrap().len() == 3),
            "{m}"
        );
    }
    // uclamp_ops is 0 on the base and not on the always-active side: a time-like count that
    // went up from a zero base reads -99 as mmtests' pndiff.
    let ops = metrics
        .iter()
        .find(|m| m["metric"] == "uclamp_ops")
        .unwrap();
    assert_eq!(ops["means"][0], 0.0);
    assert_eq!(ops["diff_pct"][1], -99.0, "{ops}");
    let out = schedlab(
        &[
            "compare",
            "-",
            "--duration",
            "300ms",
            "--runs",
            "2",
            "--vs",
            "variant.uclamp_static_key=always-active",
            "--stats",
        ],
        Some(w),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("# % is + when better"), "{text}");
    for row in ["CoeffVar", "Min ", "Max "] {
        assert!(text.contains(row), "{row} missing: {text}");
    }
}

/// Mistakes in the command line itself are one `schedlab:` line naming the option, what it
/// takes and what it was given, with exit code 2; negative numbers are values, so their own
/// check answers. `--help` and `--version` still print their text.
#[test]
fn command_line_mistakes_are_one_line() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["compare", "--runs", "x", "a.json", "b.json"],
            &["schedlab: --runs: expected an integer 1..=1000, found \"x\""],
        ),
        (
            &["run", "--seed", "-1"],
            &["schedlab: --seed: expected an integer 0..=18446744073709551615, found \"-1\""],
        ),
        (
            &["frob"],
            &["command line", "a command: run, compare", "\"frob\""],
        ),
        (&["rnu"], &["did you mean \"run\""]),
        (
            &["run", "--duration", "-1s"],
            &["--duration", "a positive time", "-1s"],
        ),
        (
            &["gen", "fio", "--service-time", "-5"],
            &["--service-time", "an integer 0..=", "\"-5\""],
        ),
        (
            &["gen", "fio", "--iodepth", "x"],
            &["--iodepth", "an integer 1..=1", "\"x\""],
        ),
        (
            &["run", "--sed", "1"],
            &["schedlab run", "\"--sed\"", "did you mean \"--seed\""],
        ),
        (&["gen"], &["schedlab gen", "a command: fio"]),
        (&[], &["command line", "a command"]),
    ];
    for (args, fragments) in cases {
        let out = schedlab(args, None);
        assert_input_error(&out, fragments);
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("schedlab: "),
            "{args:?}"
        );
    }
    // An experiment's generator arguments are words too: a negative number is a value.
    let dir = tempfile::tempdir().unwrap();
    let exp = write(
        dir.path(),
        "neg.toml",
        "[[workload]]\ngen = \"fio\"\nargs = { service-time = -80 }\n",
    );
    assert_input_error(
        &schedlab(&["check", &exp], None),
        &[
            "neg.toml",
            "workload[0].gen (line 2 column 1) --service-time",
            "\"-80\"",
        ],
    );
    for flag in ["--help", "--version"] {
        let out = schedlab(&[flag], None);
        assert_eq!(out.status.code(), Some(0), "{flag}");
        assert!(!out.stdout.is_empty() && out.stderr.is_empty(), "{flag}");
    }
}

/// A run that fails leaves nothing behind: not the directories `--plot` and `--rtapp-logs`
/// would have filled, whether the input (found once the machine is built) or another output
/// is what failed.
#[test]
fn a_failed_run_leaves_no_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("new/logs");
    let plots = dir.path().join("plots");
    let out = schedlab(
        &[
            "run",
            "--duration",
            "10ms",
            "--set",
            "config.FAIR_GROUP_SCHED=false",
            "--set",
            "cgroup./g.cpu.weight=5",
            "--rtapp-logs",
            logs.to_str().unwrap(),
            "--plot",
            plots.to_str().unwrap(),
        ],
        None,
    );
    assert_input_error(&out, &["cgroup./g.cpu.weight"]);
    let out = schedlab(
        &[
            "run",
            "--duration",
            "10ms",
            "--plot",
            plots.to_str().unwrap(),
            "--rtapp-logs",
            "/dev/null/logs",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

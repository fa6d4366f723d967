//! Experiment files: they say what `--set`, `--set-at` and a workload say, the command line
//! wins over them, several workloads run side by side each with its own resources, options
//! and metric, and every mistake is one input error naming the file, the TOML key path, what
//! was expected and what was found.

use crate::common;
use common::*;
use schedlab::experiment::Experiment;
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use std::path::Path;
use std::process::{Command, Output};

fn parse(text: &str) -> Result<Experiment, schedlab::InputError> {
    Experiment::parse(text, "exp.toml", Path::new("."))
}

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .expect("schedlab runs")
}

/// Exit code 2 and one stderr line holding every fragment.
fn assert_input_error(out: &Output, fragments: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for f in fragments {
        assert!(err.contains(f), "`{f}` missing from: {err}");
    }
}

const RT_TASK: &str = r#"{ "tasks": { "rt": { "loop": -1, "policy": "SCHED_FIFO", "priority": 50,
    "run": 500, "timer": { "ref": "unique", "period": 16000 } } } }"#;

#[test]
fn a_file_says_what_set_and_set_at_say() {
    // The same run, once from an experiment file and once from switches given one by one:
    // the results are the same bytes.
    let exp = parse(&format!(
        r#"
        platform = "sdm845"
        duration = "1s"
        seed = 3
        [set]
        kernel.sched_util_clamp_min_rt_default = 128
        cgroup."/bg".cpu.uclamp.max = 40
        config.HZ = 1000
        [[set_at]]
        at = "500ms"
        kernel.sched_util_clamp_min_rt_default = 1024
        [[workload]]
        json = '''{RT_TASK}'''
        "#
    ))
    .unwrap();
    assert_eq!(exp.seeds, [3]);
    let from_file = exp.run(3, true, &Default::default()).unwrap();
    let mut v = Variant::for_platform(&Platform::resolve("sdm845").unwrap());
    v.set_pair("kernel.sched_util_clamp_min_rt_default=128", "t")
        .unwrap();
    v.set_pair("cgroup./bg.cpu.uclamp.max=40", "t").unwrap();
    v.set_pair("config.HZ=1000", "t").unwrap();
    v.set_at(500 * MS, "kernel.sched_util_clamp_min_rt_default=1024", "t")
        .unwrap();
    let by_hand = run_variant("sdm845", RT_TASK, S, v, 3, &Default::default());
    let json = |r| {
        let mut v = serde_json::to_value(r).unwrap();
        v["workload_file"] = serde_json::Value::Null;
        v
    };
    assert_eq!(json(&from_file), json(&by_hand));
    assert_eq!(from_file.admin_writes[0].result, "ok");
    assert_eq!(from_file.variant["config.HZ"], 1000);
}

#[test]
fn the_command_line_wins_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.toml");
    std::fs::write(
        &path,
        r#"
        platform = "rk3399"
        duration = "200ms"
        [set]
        cpufreq.rate_limit_us = 2000
        [[workload]]
        gen = "fio"
        args = ["--runtime", "1", "--service-time", "100"]
        "#,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let out = schedlab(&[
        "run",
        p,
        "--json",
        "-",
        "--set",
        "cpufreq.rate_limit_us=300",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["variant"]["cpufreq.rate_limit_us"], "300");
    assert_eq!(v["platform"], "rk3399");
    assert_eq!(v["duration_ns"], 200_000_000u64);
    assert!(v["workload"]["iops"].as_f64().unwrap() > 0.0);
    let out = schedlab(&[
        "run",
        p,
        "--json",
        "-",
        "--platform",
        "smp8",
        "--duration",
        "100ms",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"], "smp8");
    assert_eq!(v["duration_ns"], 100_000_000u64);
}

#[test]
fn workloads_run_side_by_side_with_their_own_resources_and_metrics() {
    // Two ping-pongs that both name their mutex "pipe" and their condition "token", and a
    // fio loop in a capped group: each pipe keeps its own token (otherwise the four threads
    // would share one and the round trips would not be counted per pair).
    let exp = parse(
        r#"
        platform = "smp8"
        duration = "300ms"
        [set]
        cgroup."/io".cpu.uclamp.max = 40
        [[workload]]
        name = "a"
        gen = "pipe"
        args = { cpu = 1 }
        [[workload]]
        name = "b"
        gen = "pipe"
        args = { cpu = 2 }
        latency_nice = -20
        [[workload]]
        name = "io"
        gen = "fio"
        args = { cpu = 3 }
        taskgroup = "/io"
        "#,
    )
    .unwrap();
    let names: Vec<&str> = exp.workload.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["a.sender", "a.receiver", "b.sender", "b.receiver", "io.fio"]
    );
    assert_eq!(exp.workload.mutexes.len(), 2, "{:?}", exp.workload.mutexes);
    let nice: Vec<Option<i32>> = exp.workload.tasks.iter().map(|t| t.latency_nice).collect();
    assert_eq!(nice, [None, None, Some(-20), Some(-20), None]);
    let r = exp.run(0, true, &Default::default()).unwrap();
    let m = r.workload_metrics.as_ref().unwrap();
    // Threads are numbered in rt-app's creation order over the whole experiment.
    for (part, first) in [("a", 0), ("b", 2)] {
        let ops = m[part]["ops"].as_u64().unwrap();
        // Each round trip wakes the sender once and the receiver once.
        let sender = task(&r, &format!("{part}.sender-{first}")).wakeups;
        let receiver = task(&r, &format!("{part}.receiver-{}", first + 1)).wakeups;
        assert_eq!(ops, sender);
        assert!(ops > 1000 && sender.abs_diff(receiver) <= 1, "{part}: {m}");
    }
    assert!(m["io"]["iops"].as_f64().unwrap() > 100.0, "{m}");
    // The group's cpu.uclamp.max of 40% caps the fio thread's effective clamp.
    assert_eq!(task(&r, "io.fio-4").uclamp_max, 410);
    let samples = schedlab::report::compare::samples(&r);
    assert!(samples.iter().any(|s| s.name == "b.ops_per_sec"));
    assert!(samples.iter().any(|s| s.name == "io.iops"));
}

#[test]
fn a_workload_file_is_read_relative_to_the_experiment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("w")).unwrap();
    std::fs::write(dir.path().join("w/rt.json"), RT_TASK).unwrap();
    std::fs::write(
        dir.path().join("e.toml"),
        "platform = \"sdm845\"\nruns = 3\n[[workload]]\nfile = \"w/rt.json\"\n",
    )
    .unwrap();
    let e = Experiment::load(&dir.path().join("e.toml")).unwrap();
    assert_eq!(e.seeds, [0, 1, 2]);
    assert_eq!(e.name, "e");
    assert_eq!(e.workload.tasks[0].name, "rt");
}

#[test]
fn mistakes_name_the_file_the_key_path_and_what_was_expected() {
    let cases: &[(&str, &str, &str)] = &[
        ("plattform = \"x\"\n", "plattform (line 1 column 1)", "did you mean \"platform\""),
        ("duration = [1]\n[[workload]]\ngen = \"pipe\"", "duration", "an array"),
        ("[set]\ncpufreq.rate_limit_us = -3\n[[workload]]\ngen = \"pipe\"", "set.cpufreq.rate_limit_us", "`-3`"),
        ("[set]\nnope.key = 1\n[[workload]]\ngen = \"pipe\"", "set.nope.key", "unknown key"),
        ("[[set_at]]\nat = \"1s\"\nconfig.HZ = 100\n[[workload]]\ngen = \"pipe\"", "set_at[0].config.HZ", "other switches are fixed at boot"),
        ("[[workload]]\ngen = \"nosuch\"", "workload[0].gen", "nosuch"),
        ("[[workload]]\ngen = \"fio\"\nargs = { iodepth = 4 }", "workload[0].gen", "4"),
        ("[[workload]]\ngen = \"pipe\"\nlatency_nice = -21", "workload[0].latency_nice", "-21"),
        ("[[workload]]\njson = '''", "line 2", "TOML"),
        ("[[workload]]\ngen = \"pipe\"\nfile = \"x.json\"", "workload[0]", "file and gen"),
        ("[[workload]]\njson = '{ \"tasks\": { \"t\": { \"policy\": \"SCHED_FIFO\", \"run\": 10 } } }'\ntaskgroup = \"/g\"", "workload[0].taskgroup", "SCHED_FIFO"),
        ("seed = 1\nruns = 2\n[[workload]]\ngen = \"pipe\"", "runs", "only one of"),
        ("[[workload]]\nname = \"a\"\ngen = \"pipe\"\n[[workload]]\nname = \"a\"\ngen = \"fio\"", "workload[1].name", "`a` again"),
        ("", "workload", "at least one"),
        ("platform = \"pixel9000\"\n[[workload]]\ngen = \"pipe\"", "platform", "pixel9000"),
    ];
    for (text, place, found) in cases {
        let e = parse(text).expect_err(text);
        assert_eq!(e.file, "exp.toml", "{text}: {e}");
        assert!(e.place.contains(place), "{text}: place {e}");
        assert!(e.to_string().contains(found), "{text}: {e}");
    }
    // On the command line: exit 2 and one line.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, cases[2].0).unwrap();
    let out = schedlab(&["run", path.to_str().unwrap()]);
    assert_input_error(&out, &["bad.toml", "set.cpufreq.rate_limit_us", "-3"]);
}

#[test]
fn compare_takes_experiment_files_and_several_vs_sides() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.toml");
    std::fs::write(
        &base,
        "platform = \"rk3399\"\nduration = \"500ms\"\n[set]\ncpufreq.rate_limit_us = 2000\n\
         [[workload]]\ngen = \"fio\"\nargs = { runtime = 1 }\n",
    )
    .unwrap();
    let other = dir.path().join("noboost.toml");
    std::fs::write(&other, std::fs::read_to_string(&base).unwrap() + "\n").unwrap();
    let text = std::fs::read_to_string(&other)
        .unwrap()
        .replace("[set]\n", "[set]\ncpufreq.iowait_boost = false\n");
    std::fs::write(&other, text).unwrap();
    let plot = dir.path().join("plots");
    let out = schedlab(&[
        "compare",
        base.to_str().unwrap(),
        other.to_str().unwrap(),
        "--vs",
        "cpufreq.governor=performance",
        "--vs",
        "cpufreq.governor=powersave cpufreq.iowait_boost=false",
        "--runs",
        "3",
        "--json",
        "-",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sides: Vec<&str> = v["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(sides[..2], ["base", "noboost"]);
    assert_eq!(sides.len(), 4);
    let iops = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "iops")
        .unwrap();
    let diff: Vec<f64> = iops["diff_pct"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    // Without the boost fewer IOPS; at the lowest frequency fewest. (At the highest, menu's
    // choice of idle states for fio's short idles decides, not the frequency.)
    assert!(diff[1] < -5.0 && diff[3] < diff[1], "{diff:?}");
    assert!(plot.join("compare.svg").exists());
    let only = schedlab(&[
        "compare",
        base.to_str().unwrap(),
        "--vs",
        "cpufreq.iowait_boost=false",
        "--runs",
        "2",
        "--metric",
        "iops",
    ]);
    let text = String::from_utf8_lossy(&only.stdout);
    assert_eq!(
        text.lines().count(),
        4,
        "the % rule, header, Hmean and Stddev of iops: {text}"
    );
    let one = schedlab(&["compare", base.to_str().unwrap()]);
    assert_input_error(&one, &["two or more sides"]);
}

//! Trace replay: schedlab's own traces replayed give back what the trace shows;
//! dependencies, timers and RT tasks replay as the kernel would run the live workload; bad
//! traces are input errors, never panics.

use crate::common;

use common::*;
use proptest::prelude::*;
use schedlab::replay::extract::{Cause, Extraction, Filter};
use schedlab::replay::fidelity::Report;
use schedlab::replay::timeline::{self, CpuInfo, Window};
use schedlab::replay::{self as rp, FromTraceArgs, ReplayArgs};
use schedlab::Outputs;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Run `json` on `platform` for `secs` s with a trace into `dir/name.txt`.
fn record(dir: &Path, name: &str, json: &str, platform: &str, sets: &[&str], secs: u64) -> PathBuf {
    let path = dir.join(format!("{name}.txt"));
    let out = Outputs {
        trace: Some(path.clone()),
        ..Outputs::default()
    };
    run_full(platform, json, secs * S, sets, 0, &out);
    path
}

fn extract_args(trace: &Path, pin: bool) -> FromTraceArgs {
    FromTraceArgs {
        trace: trace.to_path_buf(),
        trace_platform: None,
        from: None,
        to: None,
        tasks: Vec::new(),
        min_runtime: None,
        pin,
    }
}

fn replay(
    trace: &Path,
    pin: bool,
    platform: Option<&str>,
    sets: &[&str],
    trace_out: Option<PathBuf>,
) -> Report {
    rp::replay_report(&ReplayArgs {
        extract: extract_args(trace, pin),
        platform: platform.map(str::to_string),
        set: sets.iter().map(|s| s.to_string()).collect(),
        set_at: Vec::new(),
        seed: 0,
        json: None,
        trace_out,
    })
    .unwrap_or_else(|e| panic!("{}: {e}", trace.display()))
}

/// Who wakes whom in a trace, by workload task name (a replay names its threads
/// `<task>-<index>`: the index is dropped).
fn edges(trace: &Path, strip_index: bool) -> BTreeMap<(String, String), u64> {
    let l = extract_args(trace, false).load().unwrap();
    let ext = l.extraction();
    let base = |n: &str| -> String {
        if strip_index {
            n.rsplit_once('-').map_or(n, |(b, _)| b).to_string()
        } else {
            n.to_string()
        }
    };
    ext.edges()
        .into_iter()
        .map(|((a, b), n)| ((base(&a), base(&b)), n))
        .collect()
}

fn within(a: u64, b: u64, frac: f64) -> bool {
    (a as f64 - b as f64).abs() <= frac * a as f64
}

#[test]
fn every_rt_app_example_round_trips() {
    let Some(dir) = examples_dir() else {
        println!("SKIPPED: ../shared/workloads/rt-app-examples not found beside the checkout");
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true needs the rt-app examples"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut checked = 0;
    for p in files {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let json = std::fs::read_to_string(&p).unwrap();
        let trace = record(tmp.path(), &name, &json, "juno-r0", &[], 2);
        // example5 pins its threads (rt-app `cpus`): the replay pins them where they ran;
        // example8 changes its thread's affinity per phase: the replay pins each stretch
        // between its moves to where it ran.
        let pin = name == "example5" || name == "example8";
        let out = tmp.path().join(format!("{name}.replay.txt"));
        let r = replay(&trace, pin, None, &[], Some(out.clone()));
        assert!(!r.tasks.is_empty(), "{name}: no task");
        if name == "example3" {
            // Twelve identical instances on four little and two big CPUs: which instance
            // gets a big CPU turns on µs; the task's total holds, and each one's wake-ups.
            let (a, b) = r.tasks.iter().fold((0, 0), |s, t| {
                (s.0 + t.trace_runtime_ns, s.1 + t.replay_runtime_ns)
            });
            assert!(
                within(a, b, 0.02),
                "{name}: CPU time {a} in the trace, {b} replayed"
            );
        }
        for t in &r.tasks {
            if name != "example3" {
                assert!(
                    within(t.trace_runtime_ns, t.replay_runtime_ns, 0.02),
                    "{name} {}: CPU time {} ns in the trace, {} replayed",
                    t.task,
                    t.trace_runtime_ns,
                    t.replay_runtime_ns
                );
            }
            assert!(
                within(t.trace_wakeups, t.replay_wakeups, 0.01),
                "{name} {}: {} wake-ups in the trace, {} replayed",
                t.task,
                t.trace_wakeups,
                t.replay_wakeups
            );
        }
        // Dependencies that repeat; a timer firing under another task on the CPU the
        // sleeper left can look like a wake-up by that task once in a while.
        let repeated = |e: BTreeMap<(String, String), u64>| -> BTreeMap<(String, String), u64> {
            e.into_iter().filter(|(_, n)| *n >= 3).collect()
        };
        let (a, b) = (repeated(edges(&trace, false)), repeated(edges(&out, true)));
        checked += 1;
        if name == "example3" {
            // Twelve independent timer tasks: their timers fire under each other, which
            // looks like a wake-up by the task running there, and whether such coincidences
            // repeat turns on µs. The extraction invents no dependency the trace lacks.
            let seen = edges(&trace, false);
            for d in r.dependencies.keys() {
                let (w, s) = d.split_once('>').expect("waker>wakee");
                assert!(
                    seen.contains_key(&(w.to_string(), s.to_string())),
                    "{name}: dependency {d} is not in the trace ({a:?}, replay {b:?})"
                );
            }
            continue;
        }
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{name}: who wakes whom"
        );
        for (k, n) in &a {
            assert!(
                within(*n, b[k], 0.02),
                "{name}: {k:?} woken {n} times in the trace, {} replayed",
                b[k]
            );
        }
    }
    assert!(checked >= 10, "only {checked} examples");
}

/// The CPUs a task was switched in on, in order, each change once (`comm` a prefix of the
/// task's `next_comm`).
fn cpu_sequence(trace: &Path, comm: &str) -> Vec<usize> {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut seq: Vec<usize> = Vec::new();
    for l in text.lines() {
        if !l.contains("sched_switch:") || !l.contains(&format!("next_comm={comm}")) {
            continue;
        }
        let cpu = l
            .split_once('[')
            .and_then(|(_, r)| r.split_once(']'))
            .unwrap()
            .0;
        let cpu: usize = cpu.trim().parse().unwrap();
        if seq.last() != Some(&cpu) {
            seq.push(cpu);
        }
    }
    seq
}

/// The affinity of each phase the extraction writes for the trace's only task, and the
/// task's own `cpus`.
fn extracted_cpus(trace: &Path) -> (Option<serde_json::Value>, Vec<Vec<u64>>) {
    let l = extract_args(trace, true).load().unwrap();
    let w = l.extraction().workload();
    let tasks = w["tasks"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let t = tasks.values().next().unwrap();
    let phases = t["phases"].as_object().unwrap();
    let per_phase = phases
        .values()
        .filter_map(|p| p.get("cpus"))
        .map(|c| {
            c.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect()
        })
        .collect();
    (t.get("cpus").cloned(), per_phase)
}

/// rt-app's per-phase `cpus` (sched_setaffinity, which the trace does not show): the trace
/// shows the task moving itself off CPUs it is alone on, to CPUs of no more capacity, which
/// no balancer does; `--pin` pins each stretch between its moves to where it ran, and the
/// replay runs those stretches on those CPUs, in that order.
#[test]
fn a_task_whose_affinity_changes_by_phase_replays_on_those_cpus() {
    let tmp = tempfile::tempdir().unwrap();
    let json = r#"{ "tasks": { "t": { "loop": -1, "phases": {
        "a": { "cpus": [3], "run": 3000, "sleep": 2000 },
        "b": { "cpus": [1], "run": 2000 },
        "c": { "cpus": [4], "run": 1000, "sleep": 1000 } } } } }"#;
    let trace = record(tmp.path(), "phased", json, "juno-r0", &[], 1);
    let (task_cpus, per_phase) = extracted_cpus(&trace);
    assert_eq!(task_cpus, None, "a task-level pin");
    assert!(
        per_phase.len() >= 100,
        "{} phases with cpus",
        per_phase.len()
    );
    for (k, c) in per_phase.iter().enumerate() {
        assert_eq!(c, &[[3], [1], [4]][k % 3].to_vec(), "phase {k}");
    }
    let out = tmp.path().join("phased.replay.txt");
    let r = replay(&trace, true, None, &[], Some(out.clone()));
    let (a, b) = (cpu_sequence(&trace, "t-0"), cpu_sequence(&out, "t-0"));
    let n = a.len().min(b.len());
    assert!(n >= 100 && a.len().abs_diff(b.len()) <= 3, "{a:?}\n{b:?}");
    assert_eq!(a[..n], b[..n], "the CPUs in order");
    for c in &r.cpus {
        assert!(
            c.trace_busy_ns.abs_diff(c.replay_busy_ns) <= c.trace_busy_ns / 50 + 1_000_000,
            "CPU {}: busy {} ns in the trace, {} replayed",
            c.cpu,
            c.trace_busy_ns,
            c.replay_busy_ns
        );
    }
    let t = &r.tasks[0];
    assert!(within(t.trace_runtime_ns, t.replay_runtime_ns, 0.02));
    assert_eq!(t.trace_wakeups, t.replay_wakeups);
}

/// A CPU hog on a little CPU is moved up by a misfit active balance, which the trace shows
/// as the same kind of move: it is no affinity change, and `--pin` keeps the one pin to
/// the CPUs the task ran on (not the big CPU alone, nor a pin per stretch).
#[test]
fn a_task_moved_by_balancing_keeps_one_pin() {
    let tmp = tempfile::tempdir().unwrap();
    let json = r#"{ "tasks": { "hog": { "loop": -1, "run": 100000 } } }"#;
    let trace = record(tmp.path(), "hog", json, "juno-r0", &[], 1);
    let seq = cpu_sequence(&trace, "hog-0");
    assert!(seq.len() >= 2, "the hog stayed on {seq:?}");
    let (task_cpus, per_phase) = extracted_cpus(&trace);
    assert!(per_phase.is_empty(), "per-phase pins {per_phase:?}");
    let mut ran: Vec<usize> = seq.clone();
    ran.sort_unstable();
    ran.dedup();
    assert_eq!(task_cpus, Some(serde_json::json!(ran)));
}

const PING_PONG: &str = r#"{ "tasks": {
    "ping": { "loop": -1, "run": 5000, "resume": "pong", "suspend": "ping" },
    "pong": { "loop": -1, "run": 5000, "resume": "ping", "suspend": "pong" } } }"#;

#[test]
fn a_ping_pong_replays_as_a_ping_pong() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = record(tmp.path(), "pp", PING_PONG, "juno-r0", &[], 1);
    let l = extract_args(&trace, false).load().unwrap();
    let ext = l.extraction();
    let names: Vec<&str> = ext.names.iter().map(String::as_str).collect();
    let e = ext.edges();
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e
        .keys()
        .all(|(a, b)| names.contains(&a.as_str()) && names.contains(&b.as_str()) && a != b));
    // On slower CPUs both stretch together: the same number of hand-offs each, fewer than
    // in the trace.
    for (platform, sets) in [
        ("juno-r0", &["cpufreq.governor=powersave"][..]),
        ("rk3399", &[][..]),
    ] {
        let r = replay(&trace, false, Some(platform), sets, None);
        let (a, b) = (&r.tasks[0], &r.tasks[1]);
        assert!(
            a.replay_wakeups.abs_diff(b.replay_wakeups) <= 1,
            "{platform}: {a:?} {b:?}"
        );
        assert!(a.replay_wakeups < a.trace_wakeups, "{platform}: {a:?}");
        // Their CPU times differ by at most one stretch.
        let stretch = a.replay_runtime_ns / a.replay_wakeups.max(1);
        assert!(
            a.replay_runtime_ns.abs_diff(b.replay_runtime_ns) <= stretch * 3 / 2,
            "{platform}: {a:?} {b:?}"
        );
    }
}

/// A 10 ms periodic producer and a consumer it wakes through a channel.
const CHAIN: &str = r#"{ "tasks": {
    "prod": { "loop": -1, "run": 2000, "send": { "channel": "c", "bytes": 1 },
              "timer": { "ref": "t", "period": 10000 } },
    "cons": { "loop": -1, "recv": { "channel": "c" }, "run": 1000 } },
  "global": { "channels": { "c": { "kind": "futex" } } } }"#;

/// Per wake-up of `wakee` in a trace, its time after the latest wake-up of `first`.
fn offsets(trace: &Path, first: &str, wakee: &str) -> Vec<u64> {
    let l = extract_args(trace, false).load().unwrap();
    let by = |n: &str| {
        l.timeline
            .tasks
            .iter()
            .position(|t| t.comm.starts_with(n))
            .unwrap()
    };
    let ends = |i: usize| -> Vec<u64> {
        l.timeline.tasks[i]
            .steps
            .iter()
            .filter_map(|s| match s {
                timeline::Step::Block(b) => b.end,
                _ => None,
            })
            .collect()
    };
    let (p, c) = (ends(by(first)), ends(by(wakee)));
    c.iter()
        .filter_map(|&w| p.iter().rev().find(|&&s| s <= w).map(|s| w - s))
        .collect()
}

#[test]
fn a_periodic_task_replays_as_a_timer_and_its_chain_follows() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = record(tmp.path(), "chain", CHAIN, "juno-r0", &[], 1);
    let l = extract_args(&trace, false).load().unwrap();
    let ext: Extraction = l.extraction();
    let prod = ext
        .names
        .iter()
        .position(|n| n.starts_with("prod"))
        .unwrap();
    let cons = ext
        .names
        .iter()
        .position(|n| n.starts_with("cons"))
        .unwrap();
    let grid = ext.grids[prod].expect("the producer is periodic");
    assert!(grid.period_ns.abs_diff(10 * MS) <= 1000, "{grid:?}");
    assert!(ext.causes[prod]
        .iter()
        .flatten()
        .all(|c| *c == Cause::Timer));
    assert!(ext.causes[cons]
        .iter()
        .flatten()
        .all(|c| *c == Cause::Task(prod)));
    let out = tmp.path().join("slow.txt");
    let r = replay(
        &trace,
        false,
        None,
        &["cpufreq.governor=powersave"],
        Some(out.clone()),
    );
    let p = r.tasks.iter().find(|t| t.task.starts_with("prod")).unwrap();
    // The period stays: as many activations; the run stretches at the lowest OPP.
    assert!(p.trace_wakeups.abs_diff(p.replay_wakeups) <= 1, "{p:?}");
    assert!(
        p.replay_runtime_ns as f64 > 1.1 * p.trace_runtime_ns as f64,
        "{p:?}"
    );
    // The consumer is woken when the producer's longer run is done.
    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
    let (before, after) = (
        mean(&offsets(&trace, "prod", "cons")),
        mean(&offsets(&out, "prod", "cons")),
    );
    assert!(
        after as f64 > 1.1 * before as f64,
        "consumer woken {before} ns after the producer, {after} replayed"
    );
}

const RT: &str = r#"{ "tasks": {
    "rt": { "instance": 2, "loop": -1, "policy": "SCHED_FIFO", "priority": 50, "run": 1000,
            "timer": { "ref": "unique", "period": 8000 } },
    "bg": { "loop": -1, "run": 3000, "sleep": 9000 } } }"#;

/// The share of the RT tasks' CPU time spent on little CPUs (juno-r0: capacity < 1024).
fn little_share(r: &schedlab::report::Results) -> f64 {
    let little: Vec<String> = r
        .cpus
        .iter()
        .filter(|c| c.capacity_orig < 1024)
        .map(|c| c.cpu.to_string())
        .collect();
    let (mut l, mut all) = (0, 0);
    for t in r.tasks.iter().filter(|t| t.name.starts_with("rt")) {
        for (cpu, ns) in &t.cpu_runtime_ns {
            all += ns;
            if little.contains(cpu) {
                l += ns;
            }
        }
    }
    l as f64 / all.max(1) as f64
}

#[test]
fn rt_tasks_replayed_under_the_rt_default_clamp_move_as_live_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = record(tmp.path(), "rt", RT, "juno-r0", &[], 2);
    const CLAMP: &str = "kernel.sched_util_clamp_min_rt_default=128";
    let live = run_json("juno-r0", RT, 2 * S, &[CLAMP]);
    let live_default = run_json("juno-r0", RT, 2 * S, &[]);
    let replayed = replay(&trace, false, None, &[CLAMP], None);
    let replayed_default = replay(&trace, false, None, &[], None);
    let (lv, ld) = (little_share(&live), little_share(&live_default));
    let rv = little_share(replayed.results.as_ref().unwrap());
    let rd = little_share(replayed_default.results.as_ref().unwrap());
    // The default boost (1024) keeps RT tasks on the big CPUs; at 128 they fit the little ones.
    assert!(
        lv > ld + 0.3,
        "live: {lv} of RT time on little CPUs at 128, {ld} by default"
    );
    assert!((rv - lv).abs() < 0.15, "replayed {rv}, live {lv} at 128");
    assert!(
        (rd - ld).abs() < 0.15,
        "replayed {rd}, live {ld} by default"
    );
}

fn cli(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_traces_exit_2_naming_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let good =
        "          <idle>-0     [000] 0.000100000: sched_switch: prev_comm=swapper/0 prev_pid=0 \
                prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120\n";
    for (name, text, want) in [
        (
            "truncated",
            format!("cpus=2\n{good}{}", &good[..60]),
            "line 3",
        ),
        ("no-cpus", good.to_string(), "cpus=N"),
        (
            "format",
            "cpus=2\n{\"tasks\": {}}\n".to_string(),
            "COMM-PID",
        ),
        (
            "field",
            format!("cpus=2\n{}", good.replace("next_pid=7", "next_pid=x")),
            "next_pid",
        ),
    ] {
        let p = tmp.path().join(format!("{name}.txt"));
        std::fs::write(&p, text).unwrap();
        let path = p.to_str().unwrap();
        for cmd in [&["gen", "from-trace", path][..], &["replay", path][..]] {
            let (code, err) = cli(cmd);
            assert_eq!(code, 2, "{name} {cmd:?}: {err}");
            assert!(
                err.contains(path) && err.contains("expected") && err.contains(want),
                "{name}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        }
    }
}

/// A trace.dat is read through `trace-cmd report`, whose sched plugin prints `sched_switch`
/// and `sched_wakeup[_new]` in its own layout (`COMM:PID [PRIO] S ==> …`, `COMM:PID [PRIO]
/// CPU:000`): the same run's .dat and text traces extract the same workload.
#[test]
fn a_trace_dat_extracts_as_its_text_does() {
    if std::process::Command::new("trace-cmd")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("trace-cmd is not installed: a trace.dat cannot be read");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = record(tmp.path(), "pp", PING_PONG, "juno-r0", &[], 1);
    let dat = tmp.path().join("pp.dat");
    let out = Outputs {
        trace: Some(dat.clone()),
        ..Outputs::default()
    };
    run_full("juno-r0", PING_PONG, S, &[], 0, &out);
    let workload = |trace: &Path| {
        let l = extract_args(trace, false)
            .load()
            .unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
        l.extraction().workload()
    };
    assert_eq!(workload(&dat), workload(&text));
}

#[test]
fn gen_from_trace_writes_a_workload_that_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = record(tmp.path(), "pp", PING_PONG, "juno-r0", &[], 1);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["gen", "from-trace", trace.to_str().unwrap(), "--task", "p*"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("/*") && text.contains(trace.to_str().unwrap()),
        "{text}"
    );
    let w = schedlab::workload::parse_workload(&text, "w.json").unwrap();
    assert_eq!(w.tasks.len(), 2);
    // A filter that keeps one task turns its waits into sleeps of the same length.
    let l = FromTraceArgs {
        tasks: vec!["ping*".into()],
        ..extract_args(&trace, false)
    }
    .load()
    .unwrap();
    let ext = l.extraction();
    assert!(ext.edges().is_empty());
    let w = schedlab::workload::parse_workload(&l.workload_text(&ext), "w.json").unwrap();
    assert_eq!(w.tasks.len(), 1);
}

/// A small trace with every event kind the reader knows.
fn sample() -> String {
    let mut text = String::from("# tracer: nop\ncpus=2\n");
    text.push_str(
        "          <idle>-0     [000] 0.000000000: cpu_frequency: state=850000 cpu_id=0\n\
         <...>-9     [001] 0.000001000: task_rename: pid=9 oldcomm=a newcomm=b oom_score_adj=0\n\
         b-9     [001] 0.000002000: sched_process_fork: comm=b pid=9 child_comm=b child_pid=10\n\
         b-9     [001] 0.000002000: sched_wakeup_new: comm=b pid=10 prio=120 target_cpu=000\n\
         <idle>-0     [000] 0.000003000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=10 next_prio=120\n\
         b-10    [000] 0.001003000: sched_switch: prev_comm=b prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\
         b-9     [001] 0.002000000: sched_waking: comm=b pid=10 prio=120 target_cpu=000\n\
         b-9     [001] 0.002000000: print: tracing_mark_write: hello\n\
         CPU:1 [LOST 3 EVENTS]\n\
         <idle>-0 [000] d.h2. 0.003000000: sched_waking: comm=c pid=11 prio=98 success=1 target_cpu=000\n\
         b-10    [000] 0.004000000: sched_switch: prev_comm=b prev_pid=10 prev_prio=120 prev_state=D ==> next_comm=c next_pid=11 next_prio=98\n\
         c-11    [000] 0.005000000: sched_process_exit: comm=c pid=11 prio=98\n\
         c-11    [000] 0.005000000: sched_switch: prev_comm=c prev_pid=11 prev_prio=98 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120\n",
    );
    text
}

#[test]
fn the_reader_takes_what_real_traces_hold() {
    let info = CpuInfo::from_platform(&schedlab::platform::Platform::resolve("juno-r0").unwrap());
    let tl = timeline::read(&sample(), "s.txt", &info, Window::default()).unwrap();
    let b = tl.tasks.iter().find(|t| t.pid == 10).unwrap();
    assert_eq!(b.forked_by.map(|p| tl.tasks[p].pid), Some(9));
    assert_eq!(b.wakeups, 1);
    let ext = Extraction::new(&tl, &Filter::default());
    let w = ext.workload();
    assert!(w["tasks"]["b-10"]["instance"] == 0, "{w}");
    assert!(tl
        .tasks
        .iter()
        .any(|t| t.pid == 11 && t.exited && t.prio == 98));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn mangled_traces_never_panic(cut in 0usize..2000, del in 0usize..2000, len in 0usize..40,
                                  ins in prop::collection::vec(any::<u8>(), 0..12), dup in 0usize..20) {
        let text = sample();
        let mut bytes = text.into_bytes();
        let at = del.min(bytes.len());
        let end = (at + len).min(bytes.len());
        bytes.drain(at..end);
        let at = cut.min(bytes.len());
        bytes.splice(at..at, ins);
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let mut v = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            v.extend_from_slice(l);
            v.push(b'\n');
            if i == dup % lines.len().max(1) {
                v.extend_from_slice(l);
                v.push(b'\n');
            }
        }
        let s = String::from_utf8_lossy(&v);
        let info = CpuInfo::from_platform(&schedlab::platform::Platform::resolve("juno-r0").unwrap());
        if let Ok(tl) = timeline::read(&s, "m.txt", &info, Window::default()) {
            let ext = Extraction::new(&tl, &Filter::default());
            let text = serde_json::to_string(&ext.workload()).unwrap();
            prop_assert!(!text.is_empty());
        }
    }
}

/// The JSON text is the pretty-printed `Value`, for every kind of event and the affinity
/// of `--pin` (a task's own, and per stretch).
#[test]
fn the_text_is_the_value_printed() {
    // `per` runs short enough never to overrun its period beside the others: the
    // extraction does not follow a timer's grid past an overrun's late wake-up.
    let workload = r#"{ "tasks": {
        "per": { "loop": -1, "run": 100, "timer": { "ref": "unique", "period": 2000 } },
        "io": { "loop": -1, "run": 200, "iorun": 500, "sleep": 1000 },
        "rt": { "policy": "SCHED_FIFO", "priority": 10, "loop": -1, "run": 100,
                "sleep": 3000 },
        "a": { "loop": -1, "run": 200, "send": { "channel": "x", "bytes": 1 },
               "recv": { "channel": "y" } },
        "b": { "loop": -1, "recv": { "channel": "x" }, "run": 200,
               "send": { "channel": "y", "bytes": 1 } },
        "mv": { "loop": -1, "phases": { "p0": { "cpus": [0], "run": 500 },
                "p1": { "cpus": [1], "run": 500 }, "p2": { "cpus": [2], "run": 500 } } } },
      "global": { "channels": { "x": { "kind": "futex" }, "y": { "kind": "futex" } } } }"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    let platform = schedlab::platform::Platform::resolve("juno-r0").unwrap();
    let out = Outputs {
        trace: Some(path.clone()),
        ..Outputs::default()
    };
    run_full("juno-r0", workload, 300 * MS, &[], 0, &out);
    let text = std::fs::read_to_string(&path).unwrap();
    let info = timeline::CpuInfo::from_platform(&platform);
    let tl = timeline::read(&text, "t.txt", &info, Default::default()).unwrap();
    for affinity in [false, true] {
        let filter = Filter {
            affinity,
            ..Filter::default()
        };
        let ext = Extraction::new(&tl, &filter);
        let json = ext.workload_json();
        for key in ["\"timer", "\"iorun", "\"send", "\"recv", "\"SCHED_FIFO\""] {
            assert!(json.contains(key), "{key} in {json}");
        }
        assert_eq!(json.contains("\"cpus\""), affinity);
        assert_eq!(serde_json::to_string_pretty(&ext.workload()).unwrap(), json);
    }
}

/// Every trace `schedlab host record` recorded on a real machine (tests/data/host-traces:
/// rt-app, hackbench, perf bench sched pipe and cyclictest on the project's VM, each with
/// its platform beside it) extracts and replays without error.
#[test]
fn recorded_host_traces_extract_and_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/host-traces");
    let mut traces: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 4, "{traces:?}");
    for trace in &traces {
        let platform = trace.with_extension("platform.toml");
        assert!(
            platform.exists(),
            "{} beside {}",
            platform.display(),
            trace.display()
        );
        let (t, p) = (trace.to_str().unwrap(), platform.to_str().unwrap());
        let (code, err) = cli(&["gen", "from-trace", t, "--trace-platform", p]);
        assert_eq!(code, 0, "gen from-trace {t}: {err}");
        let (code, err) = cli(&["replay", t, "--trace-platform", p]);
        assert_eq!(code, 0, "replay {t}: {err}");
    }
}

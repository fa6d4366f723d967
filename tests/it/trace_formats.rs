//! The trace formats: trace-cmd's `trace.dat` reports the same events as the text trace
//! (checked with Debian's `trace-cmd`, skipped with a message when it is missing and failing
//! under `CI=true`), the `.dat` is deterministic, the text starts with the header Perfetto
//! looks for and carries atrace counters on request, every CPU and thread is described
//! from the start (initial CPU state, `task_rename`), rt-app's own trace_marker lines follow
//! rt-app's source, and KernelShark's loader (libkshark) loads every record of the `.dat` in
//! time order (no record at time 0, which it reads as "no record").

use crate::common;
use common::*;
use schedlab::kernel::tracepoint::EventSelection;
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::trace::TraceFormat;
use schedlab::Outputs;
use std::path::Path;
use std::process::Command;

/// Fair periodic tasks, an RT and a deadline task (so the rq's RT and DL signals move), a
/// task hopping CPUs by affinity, forks whose children exit, a thread name too long for a
/// comm, a timed write that reaches the trace as a trace_marker print, and rt-app's own
/// trace_marker lines of every category.
const WORKLOAD: &str = r#"{ "global": { "ftrace": "main,task,loop,event,stats" }, "tasks": {
    "per": { "instance": 2, "loop": -1, "run": 2000, "timer": { "ref": "unique", "period": 8000 } },
    "rt": { "policy": "SCHED_FIFO", "priority": 10, "loop": -1, "run": 1000, "sleep": 9000 },
    "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 20000,
            "dl-deadline": 20000, "loop": -1, "run": 1000, "timer": { "ref": "dlt", "period": 20000 } },
    "hop": { "loop": -1, "phases": {
        "a": { "cpus": [0], "run": 3000, "sleep": 2000 },
        "b": { "cpus": [1], "run": 3000, "sleep": 2000 } } },
    "child": { "instance": 0, "loop": 1, "run": 500 },
    "parent": { "loop": -1, "fork": "child", "sleep": 20000 },
    "a-name-longer-than-a-comm": { "loop": -1, "run": 700, "sleep": 3000 } } }"#;

fn run_to(path: &Path, format: TraceFormat, counters: bool) {
    let platform = "juno-r0";
    let mut v = Variant::for_platform(&Platform::resolve(platform).unwrap());
    v.set_at(
        50 * MS,
        "kernel.sched_util_clamp_min_rt_default=512",
        "test",
    )
    .unwrap();
    let out = Outputs {
        trace: Some(path.to_path_buf()),
        trace_events: EventSelection::parse("all").unwrap(),
        trace_format: format,
        trace_counters: counters,
        ..Default::default()
    };
    run_variant(platform, WORKLOAD, 200 * MS, v, 7, &out);
}

/// A trace-cmd report line as (time ns, cpu, pid, event, fields with single spaces). The
/// normalisation: trace-cmd pads the columns differently (the comm, the timestamp, the
/// event name), and its leading comm is the pid's saved cmdline (one name per pid, the
/// last), where the text names the task as it was then; so the comm column is dropped and
/// the pid kept.
type Row = (u64, u32, u32, String, String);

fn rows(text: &str) -> Vec<Row> {
    text.lines().filter_map(row).collect()
}

fn row(line: &str) -> Option<Row> {
    let open = line.find(" [")?;
    let close = open + line[open..].find("] ")?;
    let pid = line[..open].rsplit('-').next()?.trim().parse().ok()?;
    let cpu = line[open + 2..close].parse().ok()?;
    let rest = line[close + 2..].trim_start();
    let (ts, rest) = rest.split_once(": ")?;
    let (secs, ns) = ts.split_once('.')?;
    let ts = secs.parse::<u64>().ok()? * 1_000_000_000 + ns.parse::<u64>().ok()?;
    let (event, fields) = rest.split_once(':')?;
    let fields = fields.split_whitespace().collect::<Vec<_>>().join(" ");
    Some((ts, cpu, pid, event.to_string(), fields))
}

fn trace_cmd() -> Option<&'static str> {
    let ok = Command::new("trace-cmd")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() || !o.stdout.is_empty());
    if ok {
        return Some("trace-cmd");
    }
    eprintln!("SKIPPED: trace-cmd is not installed (Debian: apt-get install trace-cmd)");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "trace-cmd is missing under CI=true"
    );
    None
}

#[test]
fn trace_dat_reports_the_same_events_as_the_text_trace() {
    let Some(bin) = trace_cmd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("run.txt");
    let dat = dir.path().join("run.dat");
    run_to(&txt, TraceFormat::Auto, false);
    run_to(&dat, TraceFormat::Auto, false);
    // -N: no plugins, so every event prints through its format's print fmt, as LISA reads
    // it; -t: nanosecond timestamps.
    let o = Command::new(bin)
        .args(["report", "-N", "-t"])
        .arg(&dat)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "trace-cmd report failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report = String::from_utf8(o.stdout).unwrap();
    assert!(report.starts_with("cpus=6\n"), "{}", &report[..80]);
    let text = std::fs::read_to_string(&txt).unwrap();
    let mut want = rows(&text);
    // trace-cmd merges the per-CPU buffers by time, the lowest CPU first on a tie; within a
    // CPU the order is the order of writing.
    want.sort_by_key(|r| (r.0, r.1));
    let got = rows(&report);
    assert!(want.len() > 2_000, "a busy trace: {} rows", want.len());
    for ev in [
        "sched_switch",
        "sched_wakeup_new",
        "sched_process_fork",
        "sched_process_exit",
        "sched_pelt_se",
        "sched_pelt_rt",
        "sched_pelt_dl",
        "task_rename",
        "print",
        "sched_overutilized",
    ] {
        assert!(want.iter().any(|r| r.3 == ev), "the run emits {ev}");
    }
    assert_eq!(got.len(), want.len(), "trace-cmd reports every event");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "row {i} differs");
    }
}

#[test]
fn trace_dat_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.dat");
    let b = dir.path().join("b.trace");
    run_to(&a, TraceFormat::Auto, false);
    run_to(&b, TraceFormat::Dat, false);
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert_eq!(&a[..3], &[0x17, 0x08, 0x44]);
    assert_eq!(&a[3..12], b"tracing6\0");
    assert!(a.len() > 16 * 4096);
    assert_eq!(a.len() % 4096, 0, "CPU data is in whole pages");
    assert!(a == b, "same inputs and seed, same bytes");
    // No scratch file is left beside the output.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn text_trace_starts_as_perfetto_expects_and_carries_counters() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("run.txt");
    run_to(&txt, TraceFormat::Text, true);
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.starts_with("# tracer: nop\n"));
    assert!(text.lines().any(|l| l == "cpus=6"), "LISA reads cpus=N");
    // atrace counters: `tracing_mark_write: C|pid|name|value`, value an integer.
    let mut names = std::collections::BTreeSet::new();
    for (_, _, pid, event, fields) in rows(&text) {
        if event != "tracing_mark_write" {
            continue;
        }
        let line = fields;
        let parts: Vec<&str> = line.splitn(4, '|').collect();
        assert_eq!(parts.len(), 4, "{line}");
        assert_eq!(parts[0], "C");
        let counter_pid: u32 = parts[1].parse().unwrap();
        assert!(counter_pid == 0 || counter_pid >= 1000, "{line} from {pid}");
        let value: i64 = parts[3].parse().unwrap();
        assert!((0..=1024).contains(&value) || parts[2] == "util", "{line}");
        names.insert(parts[2].to_string());
    }
    for name in ["util", "cpu0 util", "cpu5 uclamp_max", "cpu1 util clamped"] {
        assert!(names.contains(name), "counter {name} in {names:?}");
    }
}

#[test]
fn every_cpu_and_thread_is_described_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("run.txt");
    run_to(&txt, TraceFormat::Text, false);
    let text = std::fs::read_to_string(&txt).unwrap();
    let rows = rows(&text);
    // The trace's clock is the simulation's plus CLOCK_OFFSET_NS: no record is at 0.
    const START: u64 = schedlab::trace::CLOCK_OFFSET_NS;
    assert!(START > 0 && rows.iter().all(|r| r.0 >= START));
    for cpu in 0..6u32 {
        for ev in [
            "cpu_idle",
            "cpu_frequency",
            "sched_pelt_cfs",
            "sched_pelt_rt",
            "sched_pelt_dl",
        ] {
            assert!(
                rows.iter().any(|r| r.0 == START && r.1 == cpu && r.3 == ev),
                "{ev} of CPU {cpu} at t = 0 (the trace's {START} ns)"
            );
        }
    }
    // Each thread renames itself from rt-app as it starts, before anything it does (its
    // first switch-in precedes it); a name of 16 bytes or more stays rt-app (ERANGE).
    let renames: Vec<&Row> = rows.iter().filter(|r| r.3 == "task_rename").collect();
    let new_tasks: Vec<&Row> = rows.iter().filter(|r| r.3 == "sched_wakeup_new").collect();
    assert_eq!(renames.len() + long_named(&new_tasks), new_tasks.len());
    for r in &renames {
        assert!(r.4.contains("oldcomm=rt-app newcomm="), "{}", r.4);
        let pid = format!("pid={}", r.2);
        assert!(r.4.starts_with(&pid), "a thread renames itself: {r:?}");
        let first = rows
            .iter()
            .position(|x| x.2 == r.2 && x.3 != "sched_switch")
            .unwrap();
        assert_eq!(&rows[first], *r, "the rename is the thread's first act");
    }
}

fn long_named(new_tasks: &[&Row]) -> usize {
    new_tasks
        .iter()
        .filter(|r| r.4.starts_with("comm=a-name-longer-t pid="))
        .count()
}

/// A periodic two-phase task that ends, a task looping until the run stops, and rt-app's
/// lines of every category.
const RTAPP_LINES: &str = r#"{ "global": { "ftrace": "main,task,loop,event,stats" }, "tasks": {
    "a": { "loop": 2, "phases": {
        "p0": { "loop": 2, "run": 1000, "timer": { "ref": "t", "period": 5000 } },
        "p1": { "lock": "m", "run": 500, "unlock": "m", "sleep": 1000 } } },
    "b": { "loop": -1, "run": 2000, "sleep": 3000 } } }"#;

/// The `rtapp_*` texts of `text`'s print lines, with their row.
fn rtapp_lines(text: &str) -> Vec<(Row, String)> {
    rows(text)
        .into_iter()
        .filter_map(|r| {
            let t = r.4.strip_prefix("tracing_mark_write: ")?.to_string();
            (r.3 == "print" && t.starts_with("rtapp_")).then_some((r, t))
        })
        .collect()
}

fn run_json_to(json: &str, path: &Path) {
    let out = Outputs {
        trace: Some(path.to_path_buf()),
        ..Default::default()
    };
    run_full("juno-r0", json, 100 * MS, &[], 3, &out);
}

/// rt-app's `log_ftrace` sequence (rt-app.c): the main process's start first and its end
/// last (after `shutdown`: a thread still loops when the run stops); per thread
/// `rtapp_task: event=start`, then per phase iteration `rtapp_loop: event=start` with the
/// counters rt-app keeps (thread_loop, phase, phase_loop), one `rtapp_event` per event in
/// file order with rt-app's `resource_t` and name, `rtapp_loop: event=end` with the same
/// counters and `rtapp_stats` whose period is the iteration's length; `rtapp_task:
/// event=end` is the last line of a thread that ends. The lines are the thread's own,
/// written on its CPU.
#[test]
fn rtapp_lines_follow_rt_app() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("run.txt");
    run_json_to(RTAPP_LINES, &txt);
    let text = std::fs::read_to_string(&txt).unwrap();
    let lines = rtapp_lines(&text);
    let first = &lines.first().unwrap();
    // The trace's clock is the simulation's plus CLOCK_OFFSET_NS; rt-app's clock (its
    // clock_ref) is the simulation's.
    const START: u64 = schedlab::trace::CLOCK_OFFSET_NS;
    assert_eq!(first.1, "rtapp_main: event=start");
    assert_eq!(first.0 .0, START);
    let n = lines.len();
    assert_eq!(lines[n - 2].1, "rtapp_main: event=shutdown");
    assert_eq!(lines[n - 1].1, "rtapp_main: event=end");
    assert_eq!(lines[n - 1].0 .0, START + 100 * MS, "at the run's end");
    let clock_refs: Vec<_> = lines
        .iter()
        .filter(|l| l.1.starts_with("rtapp_main: event=clock_ref data="))
        .collect();
    assert_eq!(clock_refs.len(), 1, "one thread takes the use case's start");
    let data: u64 = clock_refs[0].1.rsplit('=').next().unwrap().parse().unwrap();
    assert_eq!(
        data,
        (clock_refs[0].0 .0 - START + 500) / 1000,
        "µs of that instant"
    );
    // Thread a (pid 1000): the whole program, in order.
    let a: Vec<&(Row, String)> = lines.iter().filter(|l| l.0 .2 == 1000).collect();
    let texts: Vec<&str> = a
        .iter()
        .map(|l| l.1.as_str())
        .filter(|t| !t.starts_with("rtapp_main"))
        .collect();
    let mut want = vec!["rtapp_task: event=start".to_string()];
    let p0 = [("0", "6", "run"), ("1", "10", "timer:t")];
    let p1 = [
        ("0", "8", "lock:m"),
        ("1", "6", "run"),
        ("2", "9", "unlock:m"),
        ("3", "5", "sleep"),
    ];
    for tl in 0..2 {
        for (phase, pl, events) in [(0, 0, &p0[..]), (0, 1, &p0[..]), (1, 0, &p1[..])] {
            let counters = format!("thread_loop={tl} phase={phase} phase_loop={pl}");
            want.push(format!("rtapp_loop: event=start {counters}"));
            for (id, ty, desc) in events {
                want.push(format!("rtapp_event: id={id} type={ty} desc={desc}"));
            }
            want.push(format!("rtapp_loop: event=end {counters}"));
            want.push("rtapp_stats".to_string());
        }
    }
    want.push("rtapp_task: event=end".to_string());
    assert_eq!(texts.len(), want.len(), "{texts:#?}");
    for (t, w) in texts.iter().zip(&want) {
        assert!(t.starts_with(w.as_str()), "{t} is not {w}");
    }
    // Each stats line follows its loop end: period is the iteration's length, run and
    // c_run cover the run events (the configured µs, and at least as long in wall time).
    for (i, l) in a.iter().enumerate() {
        let Some(stats) = l.1.strip_prefix("rtapp_stats: ") else {
            continue;
        };
        let v: std::collections::BTreeMap<&str, i64> = stats
            .split(' ')
            .map(|kv| kv.split_once('=').unwrap())
            .map(|(k, v)| (k, v.parse().unwrap()))
            .collect();
        let keys: Vec<&str> = v.keys().copied().collect();
        assert_eq!(
            keys,
            ["c_period", "c_run", "period", "run", "slack", "wu_lat"]
        );
        let end = &a[i - 1];
        let start = a[..i]
            .iter()
            .rev()
            .find(|x| x.1.starts_with("rtapp_loop: event=start"))
            .unwrap();
        let length_us = (end.0 .0 - start.0 .0) as i64;
        assert!((v["period"] - length_us / 1000).abs() <= 1, "{stats}");
        assert!(v["run"] >= v["c_run"], "{stats}");
        let periodic = v["c_period"] == 5000;
        assert!(periodic || v["c_period"] == 0, "{stats}");
        if periodic {
            assert_eq!(v["c_run"], 1000);
        } else {
            assert_eq!(v["c_run"], 500);
        }
    }
    // The lines are the writing thread's, on the CPU it runs on then.
    let rows = rows(&text);
    let mut checked = 0;
    for (i, r) in rows.iter().enumerate() {
        if r.2 != 1000 || r.3 != "print" {
            continue;
        }
        let running = rows[..i]
            .iter()
            .rev()
            .find(|x| x.1 == r.1 && x.3 == "sched_switch")
            .unwrap();
        assert!(running.4.contains("next_pid=1000"), "{r:?} vs {running:?}");
        checked += 1;
    }
    assert_eq!(checked, a.len());
    // Thread b never ends: no task end, its iterations stop at the run's end.
    let b: Vec<&str> = lines
        .iter()
        .filter(|l| l.0 .2 == 1001)
        .map(|l| l.1.as_str())
        .collect();
    assert!(b.contains(&"rtapp_task: event=start"));
    assert!(!b.contains(&"rtapp_task: event=end"));
    assert!(b.iter().filter(|t| t.starts_with("rtapp_stats")).count() >= 10);
}

/// `global.ftrace` selects rt-app's categories (`ftrace_setup`): only those lines are
/// written; without the key, or with `none`, there are none; a name rt-app does not know is
/// an input error.
#[test]
fn rtapp_ftrace_categories_select_the_lines() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("run.txt");
    let with = |ftrace: &str| RTAPP_LINES.replace("\"main,task,loop,event,stats\"", ftrace);
    let kinds = |json: &str| {
        run_json_to(json, &txt);
        let text = std::fs::read_to_string(&txt).unwrap();
        let mut k: Vec<String> = rtapp_lines(&text)
            .into_iter()
            .map(|l| l.1.split(':').next().unwrap().to_string())
            .collect();
        k.sort();
        k.dedup();
        k
    };
    assert_eq!(kinds(&with("\"loop\"")), ["rtapp_loop"]);
    assert_eq!(
        kinds(&with("\"Event,STATS\"")),
        ["rtapp_event", "rtapp_stats"]
    );
    // The use case's clock reference is in the task category.
    assert_eq!(kinds(&with("\"task\"")), ["rtapp_main", "rtapp_task"]);
    assert_eq!(
        kinds(&with("true")),
        [
            "rtapp_event",
            "rtapp_loop",
            "rtapp_main",
            "rtapp_stats",
            "rtapp_task"
        ]
    );
    assert!(kinds(&with("\"main,none\"")).is_empty());
    assert!(kinds(&with("false")).is_empty());
    assert!(kinds(&RTAPP_LINES.replace(
        "\"ftrace\": \"main,task,loop,event,stats\"",
        "\"duration\": 1"
    ))
    .is_empty());
    let e = schedlab::workload::parse_workload(&with("\"main,tasks\""), "w.json").unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("global.ftrace") && msg.contains("main,tasks"),
        "{msg}"
    );
}

/// KernelShark opens the `.dat`: its loader (libkshark, what the GUI reads files with,
/// driven through `scripts/kshark_load.py`) loads one entry per record that `trace-cmd
/// report` prints, with the same time, CPU, pid and event, and merges the CPUs in time
/// order. libkshark's merge (`pick_next_cpu()`) takes a record at time 0 for "no record":
/// with the CPUs' initial state at 0 it emitted CPU 5's records, then CPU 4's, …, and
/// KernelShark drew each CPU busy over a fraction of the run only.
#[test]
fn kernelshark_loads_every_record_of_the_dat() {
    let Some(bin) = trace_cmd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dat = dir.path().join("run.dat");
    run_to(&dat, TraceFormat::Auto, false);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kshark_load.py");
    let o = Command::new("python3")
        .arg(script)
        .arg(&dat)
        .output()
        .unwrap();
    if o.status.code() == Some(3) {
        skip("KernelShark is not installed (Debian: apt-get install kernelshark)");
        return;
    }
    assert!(
        o.status.success(),
        "KernelShark's loader failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut loaded: Vec<(u64, u32, u32, String)> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let event = f[3].rsplit('/').next().unwrap().to_string();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                event,
            )
        })
        .collect();
    let report = Command::new(bin)
        .args(["report", "-N", "-t"])
        .arg(&dat)
        .output()
        .unwrap();
    let mut reported: Vec<(u64, u32, u32, String)> =
        rows(&String::from_utf8(report.stdout).unwrap())
            .into_iter()
            .map(|r| (r.0, r.1, r.2, r.3))
            .collect();
    assert!(reported.len() > 2_000);
    // KernelShark's order is the time order; trace-cmd's (ties: the lowest CPU first) too.
    if let Some(i) = (1..loaded.len()).find(|&i| loaded[i].0 < loaded[i - 1].0) {
        panic!(
            "KernelShark's entry {i} goes back in time: {:?} after {:?}",
            loaded[i],
            loaded[i - 1]
        );
    }
    let by_time = |rows: &[(u64, u32, u32, String)]| -> Vec<(u64, u32)> {
        rows.iter().map(|r| (r.0, r.1)).collect()
    };
    assert!(
        by_time(&loaded) == by_time(&reported),
        "the same merge as trace-cmd's"
    );
    // Every CPU has records from the start to near the run's end: its timeline spans the run.
    let end = reported.last().unwrap().0;
    for cpu in 0..6 {
        let last = loaded.iter().rev().find(|r| r.1 == cpu).unwrap();
        let first = loaded.iter().find(|r| r.1 == cpu).unwrap();
        assert_eq!(
            first.0,
            schedlab::trace::CLOCK_OFFSET_NS,
            "CPU {cpu} from the start"
        );
        assert!(last.0 > end - 50 * MS, "CPU {cpu} until the end: {last:?}");
    }
    loaded.sort();
    reported.sort();
    assert_eq!(loaded.len(), reported.len(), "one entry per record");
    assert!(loaded == reported, "the same records");
}

//! rt-app workloads: the example corpus parses, bad input is reported precisely, and the
//! thread state machine issues the system calls rt-app would.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::VecDeque;
use std::path::PathBuf;

use crate::common;
use proptest::prelude::*;
use schedlab::error::InputError;
use schedlab::workload::*;

fn examples_dir() -> Option<PathBuf> {
    common::examples_dir()
}

fn example(name: &str) -> Option<Workload> {
    let path = examples_dir()?.join(name);
    Some(load_workload(&path).unwrap_or_else(|e| panic!("{e}")))
}

fn parse(text: &str) -> Workload {
    parse_workload(text, "t.json").unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> InputError {
    match parse_workload(text, "t.json") {
        Ok(w) => panic!("accepted: {w:?}"),
        Err(e) => e,
    }
}

fn task<'a>(w: &'a Workload, name: &str) -> &'a TaskSpec {
    w.tasks.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn every_example_parses() {
    let Some(dir) = examples_dir() else { return };
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let w = load_workload(&path).unwrap_or_else(|e| panic!("{e}"));
            w.check_platform(8).unwrap_or_else(|e| panic!("{e}"));
            assert!(!w.tasks.is_empty());
            n += 1;
        }
    }
    assert!(n >= 12, "only {n} examples");
}

#[test]
fn example5_keeps_repeated_keys_in_file_order() {
    let Some(w) = example("example5.json") else {
        return;
    };
    let mutex = w.mutexes.iter().position(|m| m == "mutex").unwrap();
    let queue = w.conds.iter().position(|c| c == "queue").unwrap();
    let t1_cond = w.conds.iter().position(|c| c == "thread1").unwrap();
    let t1_mutex = w.mutexes.iter().position(|c| c == "thread1").unwrap();
    let t0 = task(&w, "thread0");
    assert_eq!(t0.params.priority, -19);
    assert_eq!(t0.cpus, Some(vec![0]));
    assert_eq!(t0.loop_count, 1);
    let p1 = &t0.phases[1];
    assert_eq!(p1.name, "p1");
    assert_eq!(p1.loop_count, 8);
    let tick = w.timers.iter().position(|t| t.name == "tick").unwrap();
    assert_eq!(
        p1.events,
        vec![
            Event::Lock { mutex },
            Event::Run { us: 10000 },
            Event::Signal { cond: queue },
            Event::Run { us: 10000 },
            Event::Unlock { mutex },
            Event::Run { us: 100000 },
            Event::Resume {
                cond: t1_cond,
                mutex: t1_mutex
            },
            Event::Timer {
                timer: tick,
                period_us: 200000
            },
        ]
    );
    let t1 = task(&w, "thread1");
    // Without "phases", "loop" is the phase's count and the task runs the phase once.
    assert_eq!((t1.loop_count, t1.phases[0].loop_count), (1, 3));
    let suspend = Event::Suspend {
        cond: t1_cond,
        mutex: t1_mutex,
    };
    assert_eq!(
        t1.phases[0].events,
        vec![
            Event::Lock { mutex },
            Event::Wait { cond: queue, mutex },
            Event::Unlock { mutex },
            Event::Run { us: 10000 },
            suspend,
            Event::Run { us: 10000 },
            suspend,
            Event::Run { us: 10000 },
        ]
    );
}

#[test]
fn examples_get_rt_app_defaults() {
    let Some(w) = example("example1.json") else {
        return;
    };
    assert_eq!(w.global.duration_ns, Some(2_000_000_000));
    assert_eq!(w.global.calibration, Calibration::Cpu(0));
    let t = &w.tasks[0];
    assert_eq!(
        (t.instances, t.loop_count, t.phases[0].loop_count),
        (1, 1, -1)
    );
    assert_eq!(t.params.policy, Policy::Other);
    assert_eq!(t.params.priority, 0);

    // No global object: run until the threads end, work at capacity 1024.
    let w = example("example3.json").unwrap();
    assert_eq!(w.global.duration_ns, None);
    assert_eq!(w.global.calibration, Calibration::None);
    assert_eq!(w.global.io_service_ns, 100_000);
    let t = &w.tasks[0];
    assert_eq!((t.instances, t.loop_count), (12, 1));
    assert_eq!(w.initial_threads().len(), 12);
    // Both phases use the task's one "unique" timer.
    assert_eq!(w.timers.len(), 1);
    assert_eq!(w.timers[0].unique_to, Some(0));
    assert!(!w.timers[0].absolute);

    let w = example("example9.json").unwrap();
    assert_eq!(w.initial_threads(), vec![(0, 0), (2, 0)]);
    assert_eq!(
        task(&w, "thread3").phases[0].events[0],
        Event::Fork { task: 0 }
    );

    let w = example("example7.json").unwrap();
    assert_eq!(
        w.barriers,
        ["FIRST", "SECOND", "THIRD"].map(|n| BarrierSpec {
            name: n.to_string(),
            participants: 2
        })
    );

    let w = example("example6.json").unwrap();
    assert_eq!(
        w.tasks[0].phases[0].events[3],
        Event::IoRun {
            bytes: 100000,
            service_ns: 100_000
        }
    );

    let w = example("example11.json").unwrap();
    assert_eq!(w.taskgroups, ["/tg1/tg11", "/"]);
    let phases = &w.tasks[0].phases;
    assert_eq!(
        phases.iter().map(|p| p.taskgroup).collect::<Vec<_>>(),
        [Some(0), None, Some(1)]
    );

    let w = example("custom-slice.json").unwrap();
    let (t0, t1) = (&w.tasks[0].params, &w.tasks[1].params);
    assert_eq!(
        (t0.policy, t0.priority, t0.dl_runtime_ns),
        (Policy::Other, -19, 100_000_000)
    );
    assert_eq!(t1.policy, Policy::Deadline);
    assert_eq!(
        (t1.dl_runtime_ns, t1.dl_deadline_ns, t1.dl_period_ns),
        (200_000_000, 200_000_000, 200_000_000)
    );
}

#[test]
fn syntax_errors_give_line_and_column() {
    let e = parse_err("{\n  \"tasks\": {\n    \"t\": { \"run\": 10 \"sleep\": 5 }\n  }\n}");
    assert_eq!(e.file, "t.json");
    assert_eq!(e.place, "line 3 column 22");
    assert_eq!(e.expected, "',' or '}'");
    assert_eq!(e.found, "'\"'");
    assert_eq!(
        e.to_string(),
        "t.json: line 3 column 22: expected ',' or '}', found '\"'"
    );

    let e = parse_err("{\"tasks\": {\"t\": {\"run\": 10}}");
    assert_eq!(e.place, "line 1 column 29");
    assert_eq!(e.found, "end of input");
}

#[test]
fn bad_values_name_their_json_path() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"run": -5}}}}}"#,
            "tasks.t.phases.p1.run",
            "-5",
        ),
        (
            r#"{"tasks": {"t": {"sleep": 1.5}}}"#,
            "tasks.t.sleep",
            "1.5",
        ),
        (
            r#"{"tasks": {"t": {"run": "10"}}}"#,
            "tasks.t.run",
            "\"10\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "priority": 20}}}"#,
            "tasks.t.priority",
            "20",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "policy": "SCHED_FIFO", "priority": 0}}}"#,
            "tasks.t.priority",
            "0",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "policy": "SCHED_RT"}}}"#,
            "tasks.t.policy",
            "\"SCHED_RT\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "fork": "nobody"}}}"#,
            "tasks.t.fork",
            "\"nobody\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "hrtimer_slack_ns": -1}}}"#,
            "tasks.t.hrtimer_slack_ns",
            "-1",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "unlock": "m"}}}"#,
            "tasks.t.unlock",
            "\"m\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "cpus": [0, "1"]}}}"#,
            "tasks.t.cpus[1]",
            "\"1\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "util_min": 2000}}}"#,
            "tasks.t.util_min",
            "2000",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "taskgroup": "tg1"}}}"#,
            "tasks.t.taskgroup",
            "\"tg1\"",
        ),
        (
            r#"{"tasks": {"t": {"timer": {"ref": "a", "period": 10, "mode": "abs"}}}}"#,
            "tasks.t.timer.mode",
            "\"abs\"",
        ),
        (
            r#"{"tasks": {"t": {"wait": "q"}}}"#,
            "tasks.t.wait",
            "\"q\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1}}, "global": {"default_policy": 3}}"#,
            "global.default_policy",
            "3",
        ),
        (
            r#"{"tasks": {"t": {"run": 1}}, "global": {"calibration": "cpu0"}}"#,
            "global.calibration",
            "\"cpu0\"",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"loop": 3}}}}}"#,
            "tasks.t.phases.p",
            "none",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "policy": "SCHED_FIFO", "taskgroup": "/a"}}}"#,
            "tasks.t.taskgroup",
            "a task group with SCHED_FIFO",
        ),
        (
            r#"{"tasks": {"a": {"barrier": "B", "run": 1, "barrier1": "B"}, "b": {"barrier": "B"}}}"#,
            "tasks.a.barrier1",
            "a second use of \"B\"",
        ),
        (
            r#"{"tasks": {"a": {"barrier": "B", "fork": "b"}, "b": {"instance": 0, "barrier": "B"}}}"#,
            "tasks.b.barrier",
            "barrier \"B\" in forked task \"b\"",
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "policy": "SCHED_DEADLINE"}}}"#,
            "tasks.t.dl-runtime",
            "0",
        ),
        (
            r#"{"tasks": {"t": {"sem_wait": "s"}}}"#,
            "tasks.t.sem_wait",
            "\"s\"",
        ),
        (r#"{"tasks": []}"#, "tasks", "an array"),
        (r#"{"task": {}}"#, "top level", "none"),
        (r#"{"tasks": {"t": {"slep": 10}}}"#, "tasks.t", "none"),
    ];
    for (text, place, found) in cases {
        let e = parse_err(text);
        assert_eq!(
            (common::key_path(&e.place), e.found.as_str()),
            (*place, *found),
            "{text}\n{e}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("t.json: {}: expected ", e.place)),
            "{e}"
        );
        assert!(e.place.starts_with(place), "{e}");
    }
}

/// What rt-app accepts and ignores is read as rt-app reads it, with a warning naming the
/// place (and a close key); `check_strict` makes the first warning the error.
#[test]
fn what_rt_app_ignores_is_a_warning_and_strict_makes_it_an_error() {
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            r#"{"tasks": {"t": {"run": 1, "slep": 10}}}"#,
            "tasks.t.slep",
            "unknown key \"slep\"",
            Some("sleep"),
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"run": 10, "sleeep2": 5}}}}}"#,
            "tasks.t.phases.p1.sleeep2",
            "unknown key \"sleeep2\"",
            Some("sleep"),
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "resume": "tread1"}}}"#,
            "tasks.t.resume",
            "resume of \"tread1\"",
            None,
        ),
        (
            r#"{"tasks": {"t1": {"run": 1, "suspend": "x"}, "t": {"run": 1, "resume": "tt1"}}}"#,
            "tasks.t.resume",
            "resume of \"tt1\"",
            Some("t1"),
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "signal": "q"}}}"#,
            "tasks.t.signal",
            "signal of \"q\"",
            None,
        ),
        (
            r#"{"tasks": {"t": {"run": 1, "loop": 2, "loop": 3}}}"#,
            "tasks.t.loop",
            "a second \"loop\"",
            None,
        ),
        (
            r#"{"tasks": {"t": {"run": 1}}, "global": {"duraton": 3}}"#,
            "global.duraton",
            "unknown key \"duraton\"",
            Some("duration"),
        ),
        (
            r#"{"tasks": {"t": {"run": 1}}, "global": {"frag": 1}}"#,
            "global.frag",
            "unknown key \"frag\"",
            None,
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"run": 3}}, "sleep": 5}}}"#,
            "tasks.t.sleep",
            "event \"sleep\"",
            None,
        ),
        (
            r#"{"tasks": {"t": {"timer": {"ref": "a", "period": 10, "mdoe": "absolute"}}}}"#,
            "tasks.t.timer.mdoe",
            "unknown key \"mdoe\"",
            Some("mode"),
        ),
        (
            r#"{"tasks": {"t": {"run": 1}}, "resources": {}, "tsks": {}}"#,
            "tsks",
            "unknown key \"tsks\"",
            Some("tasks"),
        ),
    ];
    for (text, place, found, suggestion) in cases {
        let w = parse(text);
        assert_eq!(w.warnings.len(), 1, "{text}: {:?}", w.warnings);
        let warning = &w.warnings[0];
        assert_eq!(
            (warning.place.as_str(), warning.found.as_str()),
            (*place, *found),
            "{text}"
        );
        assert_eq!(warning.suggestion.as_deref(), *suggestion, "{text}");
        assert!(
            warning
                .to_string()
                .starts_with(&format!("t.json: {place}: warning: {found}")),
            "{warning}"
        );
        let e = w.check_strict().unwrap_err();
        assert_eq!(common::key_path(&e.place), *place, "{text}");
        assert!(e.found.starts_with(found), "{e}");
    }
}

#[test]
fn ignored_keys_change_nothing() {
    let plain = parse(r#"{"tasks": {"t": {"loop": 3, "run": 10, "sleep": 5}}}"#);
    let noisy = parse(
        r#"{"tasks": {"t": {"loop": 3, "run": 10, "colour": "red", "sleep": 5}},
            "global": {"frag": 1}, "comment": "x"}"#,
    );
    assert_eq!(plain.tasks, noisy.tasks);
    assert_eq!(plain.global, noisy.global);
    assert!(plain.warnings.is_empty());
    assert_eq!(noisy.warnings.len(), 3);
    assert!(plain.check_strict().is_ok());
}

/// rt-app's parse_sched_data reads a task's legacy `runtime`, `period` and `deadline` (µs)
/// when the `dl-` keys are absent, whether or not the task has phases; beside phases the
/// `runtime` is not an event.
#[test]
fn legacy_deadline_keys_beside_phases_are_the_threads_parameters() {
    let w = parse(
        r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "runtime": 1000, "period": 10000,
            "deadline": 5000, "phases": {"a": {"run": 500, "sleep": 100}}}}}"#,
    );
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
    let t = task(&w, "t");
    assert_eq!(t.params.policy, Policy::Deadline);
    assert_eq!(
        (
            t.params.dl_runtime_ns,
            t.params.dl_deadline_ns,
            t.params.dl_period_ns
        ),
        (1_000_000, 5_000_000, 10_000_000)
    );
    assert_eq!(
        t.phases[0].events,
        vec![Event::Run { us: 500 }, Event::Sleep { us: 100 }]
    );
    // Period defaults to runtime and deadline to period, as for the dl- keys.
    let w = parse(
        r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "runtime": 2000,
            "phases": {"a": {"run": 500}}}}}"#,
    );
    let p = task(&w, "t").params;
    assert_eq!((p.dl_deadline_ns, p.dl_period_ns), (2_000_000, 2_000_000));
    // The dl- keys win over the legacy ones.
    let w = parse(
        r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "runtime": 2000,
            "phases": {"a": {"run": 500}}}}}"#,
    );
    assert_eq!(task(&w, "t").params.dl_runtime_ns, 300_000);
    // A bad legacy value is an error at its own key.
    let e = parse_err(
        r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "runtime": 100, "deadline": 50,
            "phases": {"a": {"run": 500}}}}}"#,
    );
    assert_eq!(common::key_path(&e.place), "tasks.t.dl-deadline");
}

/// json-c does not check UTF-8, so rt-app reads a file with a Latin-1 comment: so do we,
/// with a warning at the first bad byte.
#[test]
fn bytes_that_are_not_utf8_are_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.json");
    let mut text = b"{\n  /* caf".to_vec();
    text.push(0xE9); // 'é' in Latin-1
    text.extend_from_slice(b" */ \"tasks\": {\"t\": {\"run\": 10}}}");
    std::fs::write(&path, text).unwrap();
    let c = check_file(&path);
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    assert_eq!(c.warnings.len(), 1);
    assert_eq!(c.warnings[0].place, "line 2 column 9");
    let w = c.workload.unwrap();
    assert_eq!(w.warnings, c.warnings);
    assert!(w.check_strict().is_err());
}

/// `check_workload` goes on after an error it can recover from: every bad value of the
/// file is reported at once, in file order within each object.
#[test]
fn check_reports_every_problem_at_once() {
    let c = check_workload(
        r#"{"global": {"calibration": "bad", "duraton": 1},
            "tasks": {"a": {"run": "x", "sleep": -1, "priority": 50},
                      "b": {"phases": {"p1": {"run": 1, "cpus": []}, "p2": {"loop": 2}}},
                      "c": {"run": 1, "unlock": "m", "slep": 3}}}"#,
        "t.json",
    );
    assert!(c.workload.is_none());
    let places: Vec<&str> = c
        .errors
        .iter()
        .map(|e| common::key_path(&e.place))
        .collect();
    assert_eq!(
        places,
        [
            "global.calibration",
            "tasks.a.priority",
            "tasks.a.run",
            "tasks.a.sleep",
            "tasks.b.phases.p1.cpus",
            "tasks.b.phases.p2",
            "tasks.c.unlock",
        ]
    );
    let warned: Vec<&str> = c.warnings.iter().map(|w| w.place.as_str()).collect();
    assert_eq!(warned, ["global.duraton", "tasks.c.slep"]);
    // A JSON syntax error stops the reading: it is the only problem, with line and column.
    let c = check_workload("{\n \"tasks\": {\"a\": {\"run\": 1,, }}}", "t.json");
    assert_eq!(c.errors.len(), 1);
    assert_eq!(c.errors[0].place, "line 2 column 27");
}

#[test]
fn platform_check_catches_cpus_beyond_the_platform() {
    let w = parse(
        r#"{"tasks": {"t": {"phases": {"p": {"run": 1, "cpus": [5]}}}}, "global": {"calibration": "CPU2"}}"#,
    );
    assert!(w.check_platform(6).is_ok());
    let e = w.check_platform(4).unwrap_err();
    assert_eq!(
        (e.place.as_str(), e.found.as_str()),
        ("tasks.t.phases.p.cpus", "5")
    );
    let e = w.check_platform(2).unwrap_err();
    assert_eq!(
        (e.place.as_str(), e.found.as_str()),
        ("global.calibration", "2")
    );
}

#[test]
fn accepts_comments_trailing_commas_and_extension_keys() {
    let w = parse(
        r#"{ // comment
        "tasks": { "t": { "run": 5, "latency_nice": -10, "hrtimer_slack_ns": 50000, "iorun": {"service_us": 250}, "iorun2": 4096, }, },
        "global": { "io_service_us": 80, "mem_bytes_per_us": 1000, "pi_enabled": true, "ftrace": "none", },
        "resources": { "m": { "type": "mutex" } }
    }"#,
    );
    assert_eq!(w.tasks[0].latency_nice, Some(-10));
    assert_eq!(w.tasks[0].timer_slack_ns, Some(50_000));
    assert!(w.global.pi_enabled);
    assert_eq!(
        w.tasks[0].phases[0].events[1..],
        [
            Event::IoRun {
                bytes: 0,
                service_ns: 250_000
            },
            Event::IoRun {
                bytes: 4096,
                service_ns: 80_000
            }
        ]
    );
}

#[test]
fn phase_parameters_resolve_against_what_is_in_force() {
    let w = parse(
        r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 50, "util_min": 100, "phases": {
            "a": {"run": 1},
            "b": {"run": 1, "priority": 20},
            "c": {"run": 1, "policy": "SCHED_OTHER"},
            "d": {"run": 1, "priority": 5, "util_max": 800}
        }}}}"#,
    );
    let t = &w.tasks[0];
    assert_eq!(
        (t.params.policy, t.params.priority, t.util_min),
        (Policy::Fifo, 50, Some(100))
    );
    let p: Vec<_> = t
        .phases
        .iter()
        .map(|p| p.params.map(|s| (s.policy, s.priority)))
        .collect();
    assert_eq!(
        p,
        [
            None,
            Some((Policy::Fifo, 20)),
            Some((Policy::Other, 0)),
            Some((Policy::Other, 5))
        ]
    );
    assert_eq!(t.phases[3].util_max, Some(800));
    // A nice value is checked against the policy in force, not only a written one.
    let e = parse_err(r#"{"tasks": {"t": {"phases": {"a": {"run": 1, "priority": 50}}}}}"#);
    assert_eq!(common::key_path(&e.place), "tasks.t.phases.a.priority");
}

#[test]
fn loop_counts_follow_rt_app() {
    let w = parse(
        r#"{"tasks": {
            "forever": {"run": 1},
            "phaseless0": {"run": 1, "loop": 0},
            "none": {"loop": 0, "phases": {"p": {"run": 1, "loop": 0}}}
        }}"#,
    );
    assert_eq!(
        (w.tasks[0].loop_count, w.tasks[0].phases[0].loop_count),
        (-1, 1)
    );
    // rt-app compares the incremented phase counter with 0: a phase "loop": 0 never ends.
    assert_eq!(
        (w.tasks[1].loop_count, w.tasks[1].phases[0].loop_count),
        (1, -1)
    );
    assert_eq!(
        (w.tasks[2].loop_count, w.tasks[2].phases[0].loop_count),
        (0, -1)
    );
}

/// Steps one thread alone on a CPU of capacity `cap`: zero-time calls complete at once,
/// runs take work / cap, sleeps end at their time. Returns each call with its issue time.
fn run_alone(
    w: &Workload,
    cap: u64,
    run_capacity: u64,
    max_calls: usize,
) -> (Vec<(u64, Syscall)>, Thread) {
    let (calls, th, _) = run_alone_masks(w, cap, run_capacity, max_calls);
    (calls, th)
}

/// `run_alone`, also giving the mask each `SetAffinity` asks for (the thread's, read when
/// the request is made, as the kernel reads it).
fn run_alone_masks(
    w: &Workload,
    cap: u64,
    run_capacity: u64,
    max_calls: usize,
) -> (Vec<(u64, Syscall)>, Thread, Vec<CpuSet>) {
    let mut user = UserSpace::new(w);
    let (index, name) = user.name_thread(w, 0, false);
    let mut th = Thread::new(w, 0, index, name, run_capacity);
    th.set_logging(true);
    let (mut now, mut cpu) = (0u64, 0u64);
    let mut calls = Vec::new();
    let mut masks = Vec::new();
    for _ in 0..max_calls {
        let call = th.step(&mut UserCtx {
            now,
            cputime_ns: cpu,
            user: &mut user,
            workload: w,
        });
        calls.push((now, call));
        match call {
            Syscall::Run { work } => {
                let d = work.div_ceil(cap);
                now += d;
                cpu += d;
            }
            Syscall::RunUntil { until } => {
                cpu += until - now;
                now = until;
            }
            Syscall::SleepUntil { until } => now = now.max(until),
            Syscall::Io { service_ns } => now += service_ns,
            Syscall::SetAffinity => masks.push(th.affinity(w)),
            Syscall::Exit => break,
            _ => {}
        }
    }
    (calls, th, masks)
}

/// The calls of a thread run alone other than its runs (the attribute changes, sleeps and
/// exit), and the mask each `SetAffinity` asks for.
fn attribute_calls(w: &Workload) -> (Vec<Syscall>, Vec<CpuSet>) {
    let (calls, _, masks) = run_alone_masks(w, 1024, 1024, 100);
    let calls = calls
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| !matches!(c, Syscall::Run { .. }))
        .collect();
    (calls, masks)
}

#[test]
fn run_is_calibrated_work_and_sleep_is_time() {
    let w = parse(
        r#"{"tasks": {"t": {"loop": 2, "run": 10000, "sleep": 5000}}, "global": {"calibration": "CPU0"}}"#,
    );
    let (calls, th) = run_alone(&w, 447, 447, 100);
    let default = SchedParams {
        policy: Policy::Other,
        priority: 0,
        dl_runtime_ns: 0,
        dl_deadline_ns: 0,
        dl_period_ns: 0,
    };
    assert_eq!(
        calls,
        [
            (0, Syscall::SetScheduler(default)),
            (
                0,
                Syscall::Run {
                    work: 10_000_000 * 447
                }
            ),
            (10_000_000, Syscall::SleepUntil { until: 15_000_000 }),
            (
                15_000_000,
                Syscall::Run {
                    work: 10_000_000 * 447
                }
            ),
            (25_000_000, Syscall::SleepUntil { until: 30_000_000 }),
            (30_000_000, Syscall::Exit),
        ]
    );
    assert_eq!(th.name(), "t-0");
    assert!(th.is_done());
}

#[test]
fn absolute_timer_wakes_at_multiples_of_its_period_and_counts_misses() {
    // Periods of 100 ms; the third iteration runs 250 ms and misses two expiries.
    let w = parse(
        r#"{"tasks": {"t": {"loop": 1, "phases": {
            "a": {"loop": 2, "run": 20000, "timer": {"ref": "tick", "period": 100000, "mode": "absolute"}},
            "b": {"loop": 1, "run": 250000, "timer": {"ref": "tick", "period": 100000}},
            "c": {"loop": 3, "run": 20000, "timer": {"ref": "tick", "period": 100000}}
        }}}}"#,
    );
    let (calls, th) = run_alone(&w, 1024, 1024, 100);
    let sleeps: Vec<_> = calls
        .iter()
        .filter_map(|(_, c)| match c {
            Syscall::SleepUntil { until } => Some(*until),
            _ => None,
        })
        .collect();
    // 0-20 run, sleep to 100; 100-120, sleep to 200; 200-450 run: 300 missed;
    // 450-470: 400 missed; 470-490: sleep to 500; 500-520 sleep to 600.
    assert_eq!(sleeps, [100_000_000, 200_000_000, 500_000_000, 600_000_000]);
    assert!(sleeps.iter().all(|t| t % 100_000_000 == 0));
    assert_eq!(th.deadline_misses(), 2);
    assert_eq!(th.activations(), 4);
}

#[test]
fn relative_timer_restarts_from_a_missed_period() {
    let w = parse(
        r#"{"tasks": {"t": {"loop": 1, "phases": {
            "a": {"loop": 1, "run": 150000, "timer": {"ref": "unique", "period": 100000}},
            "b": {"loop": 2, "run": 10000, "timer": {"ref": "unique", "period": 100000}}
        }}}}"#,
    );
    let (calls, th) = run_alone(&w, 1024, 1024, 100);
    let sleeps: Vec<_> = calls
        .iter()
        .filter_map(|(_, c)| match c {
            Syscall::SleepUntil { until } => Some(*until),
            _ => None,
        })
        .collect();
    // Missed at 150 ms: the reference moves to 150 ms, so the next expiries are 250, 350.
    assert_eq!(sleeps, [250_000_000, 350_000_000]);
    assert_eq!(th.deadline_misses(), 1);
}

#[test]
fn log_rows_follow_rt_app_columns() {
    let w = parse(
        r#"{"tasks": {"t": {"loop": 2, "run": 10000, "timer": {"ref": "unique", "period": 100000}}}}"#,
    );
    let (_, mut th) = run_alone(&w, 512, 1024, 100);
    let mut rows = Vec::new();
    th.drain_log(&mut rows);
    assert_eq!(rows.len(), 2);
    let r = rows[1];
    // Run of 10 ms of work at half capacity: 20 ms of wall time; then sleep to 200 ms.
    assert_eq!(
        r,
        LoopRecord {
            idx: 0,
            perf: 10000,
            run: 20000,
            period: 100000,
            start: 100000,
            end: 200000,
            rel_st: 100000,
            slack: 80000,
            c_duration: 10000,
            c_period: 100000,
            wu_lat: 0,
        }
    );
    let mut text = String::from(log_header());
    r.fmt_line(&mut text).unwrap();
    let expected_header = format!(
        "{} {:>8} {:>8} {:>8} {:>15} {:>15} {:>15} {:>10} {:>10} {:>10} {:>10}\n",
        "#idx",
        "perf",
        "run",
        "period",
        "start",
        "end",
        "rel_st",
        "slack",
        "c_duration",
        "c_period",
        "wu_lat"
    );
    assert_eq!(log_header(), expected_header);
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "   0    10000    20000   100000          100000          200000          100000      80000      10000     100000          0"
    );
    th.drain_log(&mut rows);
    assert_eq!(rows.len(), 2, "rows are taken once");
}

#[test]
fn phases_change_affinity_policy_uclamp_and_taskgroup_on_entry() {
    let w = parse(
        r#"{"tasks": {"t": {"cpus": [2], "loop": 2, "phases": {
            "p1": {"cpus": [0], "run": 1000, "util_min": 300, "taskgroup": "/bg"},
            "p2": {"cpus": [1], "run": 1000, "policy": "SCHED_BATCH", "priority": 5},
            "p3": {"run": 1000}
        }}}}"#,
    );
    let (calls, masks) = attribute_calls(&w);
    let batch = SchedParams {
        policy: Policy::Batch,
        priority: 5,
        dl_runtime_ns: 0,
        dl_deadline_ns: 0,
        dl_period_ns: 0,
    };
    let other = SchedParams {
        policy: Policy::Other,
        priority: 0,
        ..batch
    };
    assert_eq!(
        calls,
        [
            Syscall::SetScheduler(other),
            Syscall::SetAffinity, // p1: CPU 0
            Syscall::SetUclamp {
                min: Some(300),
                max: None
            },
            Syscall::SetTaskgroup(0),
            Syscall::SetAffinity, // p2: CPU 1
            Syscall::SetScheduler(batch),
            Syscall::SetAffinity, // p3: the task's CPU 2
            // Second task loop: p1's uclamp and group are already in force, p2's policy too.
            Syscall::SetAffinity,
            Syscall::SetAffinity,
            Syscall::SetAffinity,
            Syscall::Exit,
        ]
    );
    let cpus = [0, 1, 2, 0, 1, 2].map(CpuSet::single);
    assert_eq!(masks, cpus, "each phase's mask, then the task's");
}

#[test]
fn a_phase_run_again_sets_nothing_again() {
    // rt-app's prologue changes an attribute only where it differs from what the thread set
    // last: a phase looping on itself sets its mask and clamp once, whatever the loops.
    let w = parse(
        r#"{"tasks": {"t": {"loop": 2, "phases": {
            "p1": {"loop": 3, "cpus": [0], "run": 1000, "util_min": 300}
        }}}}"#,
    );
    let (calls, masks) = attribute_calls(&w);
    assert!(matches!(calls[0], Syscall::SetScheduler(_)));
    assert_eq!(
        calls[1..],
        [
            Syscall::SetAffinity,
            Syscall::SetUclamp {
                min: Some(300),
                max: None
            },
            Syscall::Exit,
        ]
    );
    assert_eq!(masks, [CpuSet::single(0)]);
}

#[test]
fn delay_counts_from_the_start_of_the_use_case() {
    let w = parse(r#"{"tasks": {"t": {"delay": 3000, "loop": 1, "run": 1000}}}"#);
    let (calls, _) = run_alone(&w, 1024, 1024, 10);
    assert_eq!(calls[0], (0, Syscall::SleepUntil { until: 3_000_000 }));
    assert!(matches!(calls[1], (3_000_000, Syscall::SetScheduler(_))));
}

#[test]
fn events_without_time_still_cost_cpu_per_iteration() {
    // A timer switched off (period 0) alone would let the loop spin at one instant.
    let w = parse(r#"{"tasks": {"t": {"loop": 3, "timer": {"ref": "x", "period": 0}}}}"#);
    let (calls, th) = run_alone(&w, 1024, 1024, 20);
    assert_eq!(
        calls
            .iter()
            .filter(|(_, c)| matches!(c, Syscall::Run { .. }))
            .count(),
        3
    );
    assert_eq!(calls.last().unwrap().1, Syscall::Exit);
    assert_eq!(th.deadline_misses(), 0);
}

#[test]
fn suspend_resume_sync_and_semaphores_map_to_mutex_and_condition_calls() {
    let w = parse(
        r#"{"tasks": {
            "a": {"loop": 1, "suspend": "", "resume": "b", "sync": {"ref": "c", "mutex": "m"}, "sem_post": "s"},
            "b": {"loop": 1, "suspend": "b", "sem_wait": "s", "signal": "c"}
        }}"#,
    );
    let cond = |n: &str| w.conds.iter().position(|c| c == n).unwrap();
    let mutex = |n: &str| w.mutexes.iter().position(|c| c == n).unwrap();
    let (calls, _) = run_alone(&w, 1024, 1024, 40);
    let sem = &w.semaphores[0];
    // Task "a" alone, as if nothing blocked; the iteration took no time, so it ends with
    // the charge of an idle iteration (a Run), then exits.
    let calls: Vec<Syscall> = calls.into_iter().map(|(_, c)| c).collect();
    assert!(matches!(
        calls[calls.len() - 2..],
        [Syscall::Run { .. }, Syscall::Exit]
    ));
    assert_eq!(
        calls[1..calls.len() - 2],
        [
            Syscall::MutexLock(mutex("a")),
            Syscall::CondWait {
                cond: cond("a"),
                mutex: mutex("a")
            },
            Syscall::MutexUnlock(mutex("a")),
            Syscall::MutexLock(mutex("b")),
            Syscall::CondBroadcast(cond("b")),
            Syscall::MutexUnlock(mutex("b")),
            Syscall::CondSignal(cond("c")),
            Syscall::CondWait {
                cond: cond("c"),
                mutex: mutex("m")
            },
            Syscall::MutexLock(sem.mutex),
            Syscall::CondSignal(sem.cond),
            Syscall::MutexUnlock(sem.mutex),
        ]
    );
}

/// A minimal kernel for tests: every thread has its own CPU of capacity 1024; among threads
/// ready at the same instant the lowest index goes first and runs its calls that take no
/// time back to back, as a thread between two blocking points does.
struct MiniKernel {
    w: Workload,
    user: UserSpace,
    threads: Vec<(Thread, Option<u64>, u64)>,
    owner: Vec<Option<usize>>,
    lock_waiters: Vec<VecDeque<usize>>,
    cond_waiters: Vec<VecDeque<(usize, usize)>>,
    barrier_waiters: Vec<Vec<usize>>,
    now: u64,
    trace: Vec<(u64, String, Syscall)>,
}

impl MiniKernel {
    fn new(w: Workload) -> MiniKernel {
        let mut k = MiniKernel {
            user: UserSpace::new(&w),
            threads: Vec::new(),
            owner: vec![None; w.mutexes.len()],
            lock_waiters: vec![VecDeque::new(); w.mutexes.len()],
            cond_waiters: vec![VecDeque::new(); w.conds.len()],
            barrier_waiters: vec![Vec::new(); w.barriers.len()],
            now: 0,
            trace: Vec::new(),
            w,
        };
        for (task, _) in k.w.initial_threads() {
            k.spawn(task, false);
        }
        k
    }

    fn spawn(&mut self, task: usize, forked: bool) {
        let (index, name) = self.user.name_thread(&self.w, task, forked);
        let th = Thread::new(&self.w, task, index, name, 1024);
        self.threads.push((th, Some(self.now), 0));
    }

    fn lock(&mut self, m: usize, t: usize) {
        if self.owner[m].is_none() {
            self.owner[m] = Some(t);
            self.threads[t].1 = Some(self.now);
        } else {
            self.lock_waiters[m].push_back(t);
        }
    }

    fn unlock(&mut self, m: usize) {
        self.owner[m] = None;
        if let Some(w) = self.lock_waiters[m].pop_front() {
            self.lock(m, w);
        }
    }

    /// Runs until `until` or until no thread can run; returns whether threads are left
    /// blocked with nothing to wake them.
    fn run(&mut self, until: u64) -> bool {
        loop {
            let next = self
                .threads
                .iter()
                .enumerate()
                .filter_map(|(i, (_, ready, _))| ready.map(|r| (r, i)))
                .min();
            let Some((at, t)) = next else {
                return self.threads.iter().any(|(th, _, _)| !th.is_done());
            };
            if at > until {
                return false;
            }
            self.now = at;
            let (th, ready, cpu) = &mut self.threads[t];
            let call = th.step(&mut UserCtx {
                now: at,
                cputime_ns: *cpu,
                user: &mut self.user,
                workload: &self.w,
            });
            self.trace.push((at, th.name().to_string(), call));
            *ready = Some(at);
            match call {
                Syscall::Run { work } => {
                    *cpu += work / 1024;
                    *ready = Some(at + work / 1024);
                }
                Syscall::RunUntil { until } => {
                    *cpu += until - at;
                    *ready = Some(until);
                }
                Syscall::SleepUntil { until } => *ready = Some(until.max(at)),
                Syscall::Io { service_ns } => *ready = Some(at + service_ns),
                Syscall::Exit => *ready = None,
                Syscall::MutexLock(m) => {
                    *ready = None;
                    self.lock(m, t);
                }
                Syscall::MutexUnlock(m) => self.unlock(m),
                Syscall::CondWait { cond, mutex } => {
                    *ready = None;
                    self.cond_waiters[cond].push_back((t, mutex));
                    self.unlock(mutex);
                }
                Syscall::CondSignal(c) => {
                    if let Some((w, m)) = self.cond_waiters[c].pop_front() {
                        self.lock(m, w);
                    }
                }
                Syscall::CondBroadcast(c) => {
                    while let Some((w, m)) = self.cond_waiters[c].pop_front() {
                        self.lock(m, w);
                    }
                }
                Syscall::Barrier(b) => {
                    *ready = None;
                    self.barrier_waiters[b].push(t);
                    if self.barrier_waiters[b].len() as u32 == self.w.barriers[b].participants {
                        for w in std::mem::take(&mut self.barrier_waiters[b]) {
                            self.threads[w].1 = Some(at);
                        }
                    }
                }
                Syscall::Fork { task } => self.spawn(task, true),
                // Channel blocking is the kernel's (tests/it/generators.rs): none here.
                Syscall::Send { .. } | Syscall::Recv { .. } => {
                    panic!("this harness runs no channel workloads")
                }
                Syscall::Yield
                | Syscall::SetAffinity
                | Syscall::SetScheduler(_)
                | Syscall::SetUclamp { .. }
                | Syscall::SetLatencyNice(_)
                | Syscall::SetTaskgroup(_) => {}
            }
        }
    }

    fn runs_of(&self, name: &str) -> Vec<u64> {
        self.trace
            .iter()
            .filter(|(_, n, c)| n == name && matches!(c, Syscall::Run { .. }))
            .map(|(t, _, _)| *t)
            .collect()
    }
}

#[test]
fn example4_threads_take_turns_without_deadlock() {
    let Some(w) = example("example4.json") else {
        return;
    };
    let mut k = MiniKernel::new(w);
    assert!(!k.run(100_000_000), "deadlock");
    // Both start together; then they alternate, each running while the other is suspended.
    let a = k.runs_of("thread0-0");
    let b = k.runs_of("thread1-1");
    assert_eq!(a[..3], [0, 10_000_000, 30_000_000]);
    assert_eq!(b[..3], [0, 20_000_000, 40_000_000]);
}

#[test]
fn example7_barriers_synchronise_the_two_tasks() {
    let Some(w) = example("example7.json") else {
        return;
    };
    let mut k = MiniKernel::new(w);
    assert!(!k.run(20_000_000), "deadlock");
    // The sequence of the example's comment: both pass FIRST at 3 ms and SECOND at 6 ms.
    let passes = |name: &str| -> Vec<u64> {
        k.trace
            .iter()
            .filter(|(_, n, c)| n == name && matches!(c, Syscall::RunUntil { .. }))
            .map(|(t, _, _)| *t)
            .take(3)
            .collect()
    };
    assert_eq!(passes("task0-0"), [0, 3_000_000, 6_000_000]);
    assert_eq!(passes("task1-1"), [0, 3_000_000, 6_000_000]);
}

#[test]
fn example9_forks_name_threads_as_rt_app() {
    let Some(w) = example("example9.json") else {
        return;
    };
    let mut k = MiniKernel::new(w);
    assert!(!k.run(1_000_000_000));
    let names: Vec<_> = k
        .threads
        .iter()
        .map(|(t, _, _)| t.name().to_string())
        .collect();
    assert_eq!(
        names,
        ["thread1-0", "thread3-1", "thread1-2-0000", "thread2-3-0000"]
    );
    // thread3 loops once; the others have phases and no loop, so they loop forever.
    let done: Vec<_> = k.threads.iter().map(|(t, _, _)| t.is_done()).collect();
    assert_eq!(done, [false, true, false, false]);
}

#[test]
fn semaphores_remember_posts() {
    let w = parse(
        r#"{"tasks": {
            "poster": {"loop": 3, "sem_post": "s"},
            "waiter": {"delay": 1000, "loop": 4, "sem_wait": "s", "run": 100}
        }}"#,
    );
    let mut k = MiniKernel::new(w);
    // Three posts come before the waiter starts; its fourth wait never returns.
    assert!(k.run(1_000_000_000), "the fourth wait blocks forever");
    assert_eq!(k.runs_of("waiter-1").len(), 3);
}

#[test]
fn every_example_runs_in_the_mini_kernel() {
    let Some(dir) = examples_dir() else { return };
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let w = load_workload(&path).unwrap();
        let mut k = MiniKernel::new(w);
        k.run(300_000_000);
    }
}

#[test]
fn forks_stop_at_rt_app_limit() {
    let w = parse(
        r#"{"tasks": {
            "parent": {"fork": "child", "sleep": 10},
            "child": {"instance": 0, "loop": 1, "run": 10}
        }}"#,
    );
    let mut user = UserSpace::new(&w);
    let mut th = Thread::new(&w, 0, 0, "parent-0".to_string(), 1024);
    let (mut now, mut forks) = (0, 0);
    loop {
        match th.step(&mut UserCtx {
            now,
            cputime_ns: 0,
            user: &mut user,
            workload: &w,
        }) {
            Syscall::Fork { task } => {
                assert_eq!(task, 1);
                forks += 1;
            }
            Syscall::SleepUntil { until } => now = until,
            Syscall::Exit => break,
            _ => {}
        }
        assert!(forks <= FORKS_LIMIT);
    }
    assert_eq!(forks, FORKS_LIMIT);
    assert!(user.fork_limit_hit());
}

/// Counts this thread's heap allocations, to check that stepping does not allocate.
struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a plain thread-local cell.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

#[test]
fn stepping_does_not_allocate_in_steady_state() {
    let w = parse(
        r#"{"tasks": {"t": {"phases": {
            "a": {"loop": 3, "run": 100, "timer": {"ref": "tick", "period": 1000}, "lock": "m", "unlock": "m",
                  "sem_post": "s", "sem_wait": "s", "cpus": [0], "util_min": 10},
            "b": {"loop": 2, "runtime": 50, "sleep": 10, "mem": 4096, "iorun": 1, "yield": "",
                  "suspend": "", "resume": "t", "cpus": [1], "util_min": 20, "priority": 3}
        }}}}"#,
    );
    let mut user = UserSpace::new(&w);
    let mut th = Thread::new(&w, 0, 0, "t-0".to_string(), 1024);
    th.set_logging(true);
    let mut rows = Vec::with_capacity(64);
    let (mut now, mut cpu) = (0u64, 0u64);
    let mut step = |th: &mut Thread, user: &mut UserSpace| {
        let call = th.step(&mut UserCtx {
            now,
            cputime_ns: cpu,
            user,
            workload: &w,
        });
        match call {
            Syscall::Run { work } => {
                now += work / 1024;
                cpu += work / 1024;
            }
            Syscall::RunUntil { until } | Syscall::SleepUntil { until } => now = now.max(until),
            Syscall::Io { service_ns } => now += service_ns,
            _ => {}
        }
    };
    // Warm up: the log buffer grows to the rows of one drain period, and each latency
    // histogram's list of fresh samples to the size it merges at (a few hundred samples).
    for _ in 0..20_000 {
        step(&mut th, &mut user);
    }
    th.drain_log(&mut rows);
    rows.clear();
    let before = allocations();
    for i in 0..20_000 {
        step(&mut th, &mut user);
        if i % 100 == 99 {
            th.drain_log(&mut rows);
            rows.clear();
        }
    }
    assert_eq!(allocations() - before, 0);
    let probe = allocations();
    drop(std::hint::black_box(vec![1u8; 8]));
    assert!(allocations() > probe, "the counter counts");
    assert!(th.activations() > 100);
}

/// rt-app's own examples (`tests/rtapp-doc-examples/`): name and text.
fn doc_examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rtapp-doc-examples");
    let mut out = Vec::new();
    for sub in ["", "tutorial"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                out.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "examples missing");
    out
}

/// What `check_workload` returns holds together: a workload exactly when there is no
/// error, every message names the file, and the workload carries the warnings.
fn assert_consistent(c: &Checked, file: &str) {
    assert_eq!(c.workload.is_some(), c.errors.is_empty(), "{:?}", c.errors);
    for e in &c.errors {
        assert!(e.to_string().starts_with(&format!("{file}: ")), "{e}");
    }
    for w in &c.warnings {
        assert!(w.to_string().starts_with(&format!("{file}: ")), "{w}");
    }
    if let Some(w) = &c.workload {
        assert_eq!(&w.warnings, &c.warnings);
    }
}

proptest! {
    /// Mutated rt-app files never panic the reader, and what it returns holds together.
    #[test]
    fn mutated_rt_app_examples_never_panic(
        which in any::<proptest::sample::Index>(),
        edits in proptest::collection::vec(
            (any::<proptest::sample::Index>(), 0u8..3, any::<u8>()), 1..8),
    ) {
        let files = doc_examples();
        let (name, text) = &files[which.index(files.len())];
        let mut bytes = text.clone().into_bytes();
        for (at, op, byte) in edits {
            let i = at.index(bytes.len() + 1);
            const ALPHABET: &[u8] = b"{}[]\"',:/*-0123456789 \nrunsleptimerfoklxyzTN";
            let b = ALPHABET[usize::from(byte) % ALPHABET.len()];
            match op {
                0 if i < bytes.len() => { bytes.remove(i); }
                1 => bytes.insert(i, b),
                _ if i < bytes.len() => bytes[i] = b,
                _ => {}
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        assert_consistent(&check_workload(&text, name), name);
    }

    /// A typo in a key of rt-app's grammar (its second letter doubled) never passes
    /// unnoticed: there is a warning at the misspelt key.
    #[test]
    fn a_misspelt_key_is_always_reported(
        which in any::<proptest::sample::Index>(),
        nth in any::<proptest::sample::Index>(),
    ) {
        const KEYS: &[&str] = &[
            "tasks", "global", "instance", "loop", "phases", "priority", "policy", "cpus",
            "delay", "duration", "calibration", "default_policy", "log_basename", "logdir",
            "run", "sleep", "timer", "ref", "period", "mode", "lock", "unlock", "wait",
            "signal", "mutex", "suspend", "resume", "barrier", "fork", "dl-runtime",
        ];
        let files = doc_examples();
        let (name, text) = &files[which.index(files.len())];
        prop_assume!(check_workload(text, name).errors.is_empty());
        let spots: Vec<usize> = KEYS
            .iter()
            .flat_map(|k| {
                let quoted = format!("\"{k}\"");
                text.match_indices(&quoted).map(|(i, _)| i).collect::<Vec<_>>()
            })
            // A key, not a word in a comment: only blanks, '{' or ',' before it on its line.
            .filter(|&i| {
                let before = text[..i].rsplit('\n').next().unwrap_or("").trim_end();
                before.trim_start().is_empty() || before.ends_with('{') || before.ends_with(',')
            })
            .collect();
        prop_assume!(!spots.is_empty());
        let at = spots[nth.index(spots.len())];
        let key: String = text[at + 1..].chars().take_while(|&c| c != '"').collect();
        let typo = format!("{}{}", &key[..2], &key[1..]);
        let mutated = format!("{}\"{typo}\"{}", &text[..at], &text[at + key.len() + 2..]);
        let c = check_workload(&mutated, name);
        assert_consistent(&c, name);
        prop_assert!(
            c.warnings.iter().any(|w| w.place == typo || w.place.ends_with(&format!(".{typo}"))),
            "{} in {}: {:?} {:?}", typo, name, c.warnings, c.errors
        );
    }

    #[test]
    fn random_text_never_panics(s in "\\PC{0,300}") {
        let _ = parse_workload(&s, "p.json");
    }

    #[test]
    fn random_workload_like_text_never_panics(
        s in r#"\{"tasks": \{"t": \{("(run|sleep|timer|lock|unlock|loop|phases|cpus|fork|resume|barrier|wait|send|recv)[0-9]?": ([-0-9]{1,4}|"[a-z]{0,3}"|\[[0-9, ]{0,5}\]|\{"ref": "[a-z]{0,2}"\}),? ?){0,6}\}\}\}"#
    ) {
        let _ = parse_workload(&s, "p.json");
    }
}

#[test]
fn channels_are_declared_or_default_to_pipes() {
    let w = parse(
        r#"{"global": {"channels": {"s": {"kind": "unix", "capacity": 1000}}},
            "tasks": {"a": {"send": {"channel": "s", "bytes": 100},
                            "send1": {"channel": "p", "bytes": 10}},
                      "b": {"recv": {"channel": "s", "bytes": 100}, "recv1": {"channel": "p"}}}}"#,
    );
    assert_eq!(w.channels.len(), 2);
    assert_eq!(w.channels[0].kind, ChannelKind::Unix);
    assert_eq!(w.channels[0].capacity, 1000);
    assert_eq!(w.channels[1].kind, ChannelKind::Pipe);
    assert_eq!(w.channels[1].capacity, DEFAULT_CHANNEL_CAPACITY);
    assert_eq!(
        task(&w, "a").phases[0].events,
        vec![
            Event::Send {
                chan: 0,
                bytes: 100
            },
            Event::Send { chan: 1, bytes: 10 }
        ]
    );
    assert_eq!(
        task(&w, "b").phases[0].events,
        vec![
            Event::Recv { chan: 0, max: 100 },
            Event::Recv {
                chan: 1,
                max: u64::MAX
            }
        ]
    );
}

#[test]
fn bad_channels_name_their_place() {
    let cases: &[(&str, &str, &str)] = &[
        // Nobody reads: the writer would block forever once the pipe is full.
        (
            r#"{"tasks": {"a": {"send": {"channel": "c", "bytes": 1}}}}"#,
            "tasks.a.send",
            "\"c\"",
        ),
        (
            r#"{"tasks": {"a": {"recv": {"channel": "c"}}}}"#,
            "tasks.a.recv",
            "\"c\"",
        ),
        // A message bigger than a blocking channel can ever hold.
        (
            r#"{"global": {"channels": {"c": {"capacity": 10}}},
                "tasks": {"a": {"send": {"channel": "c", "bytes": 11}}, "b": {"recv": {"channel": "c"}}}}"#,
            "tasks.a.send.bytes",
            "11",
        ),
        (
            r#"{"global": {"channels": {"c": {"kind": "fifo"}}}, "tasks": {"a": {"run": 1}}}"#,
            "global.channels.c.kind",
            "\"fifo\"",
        ),
        (
            r#"{"global": {"channels": {"c": {"kind": "pipe", "capacity": 0}}}, "tasks": {"a": {"run": 1}}}"#,
            "global.channels.c.capacity",
            "0",
        ),
        (
            r#"{"tasks": {"a": {"send": {"channel": "c"}}, "b": {"recv": {"channel": "c"}}}}"#,
            "tasks.a.send",
            "none",
        ),
        (
            r#"{"tasks": {"a": {"send": {"channel": "c", "bytes": 0}}, "b": {"recv": {"channel": "c"}}}}"#,
            "tasks.a.send.bytes",
            "0",
        ),
        (
            r#"{"tasks": {"a": {"send": {"chan": "c", "bytes": 1}}}}"#,
            "tasks.a.send",
            "none",
        ),
    ];
    for (text, place, found) in cases {
        let e = parse_err(text);
        assert_eq!(common::key_path(&e.place), *place, "{text}: {e}");
        assert!(e.found.contains(found), "{text}: {e}");
    }
}

#[test]
fn dropping_channels_may_have_no_room() {
    // A futex word of capacity 0: a post reaches only a waiter; a 0-byte post is fine.
    let w = parse(
        r#"{"global": {"channels": {"f": {"kind": "futex", "capacity": 0}}},
            "tasks": {"a": {"send": {"channel": "f", "bytes": 0}}, "b": {"recv": {"channel": "f"}}}}"#,
    );
    assert_eq!(w.channels[0].capacity, 0);
}

#[test]
fn every_generator_writes_a_valid_workload() {
    use schedlab::gen::*;
    let cyclic = CyclictestArgs {
        policy: "fifo".into(),
        priority: None,
        interval: 1000,
        threads: 4,
        affinity: true,
        duration: 1,
        laptop: false,
        latency_nice: Some(-20),
    };
    let jsons = [
        hackbench(&HackbenchArgs {
            groups: 2,
            loops: 3,
            pipe: false,
            threads: true,
            datasize: 100,
            latency_nice: Some(19),
        }),
        cyclictest(&cyclic).unwrap(),
        schbench(&SchbenchArgs {
            message_threads: 2,
            workers: 3,
            runtime: 1,
            sleeptime: 10_000,
            cputime: 10_000,
            latency_nice: None,
        }),
        netperf(&NetperfArgs {
            test: "TCP_STREAM".into(),
            size: 64,
            duration: 1,
            sender_cpu: Some(0),
            receiver_cpu: Some(1),
            uclamp_min: None,
        }),
        frames(&FramesArgs {
            period: 16_666,
            frame_us: 2000,
            background: 8,
            background_us: 4000,
            background_period: 37_777,
            duration: 1,
            latency_nice: None,
        }),
    ];
    for j in jsons {
        let w = parse(&j.to_string());
        assert!(w.global.generator.is_some());
        assert!(w.warnings.is_empty(), "{:?}", w.warnings);
        w.check_platform(8).unwrap_or_else(|e| panic!("{e}"));
    }
    // A priority outside the policy's range is an input error, not a workload.
    let bad = CyclictestArgs {
        priority: Some(0),
        ..cyclic
    };
    assert_eq!(cyclictest(&bad).unwrap_err().place, "--priority");
}

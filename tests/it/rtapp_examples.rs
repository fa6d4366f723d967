//! rt-app's own `doc/examples` (copied into `tests/rtapp-doc-examples/`) run unchanged: every
//! file rt-app's parser accepts simulates on juno-r0 and its threads run the phases the file
//! describes; what rt-app ignores is a warning (stderr once, and the results), `--strict`
//! makes it exit 2 naming the first unknown key, and what json-c rejects exits 2 with the line
//! and column.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::workload::{load_workload, Event, Workload};
use schedlab::{simulate, Outputs, Run};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rtapp-doc-examples")
}

/// Every example file, sorted, as paths relative to `dir()`.
fn examples() -> Vec<String> {
    fn walk(d: &Path, base: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(&dir(), &dir(), &mut out);
    out.sort();
    out
}

/// The files json-c refuses: a member without a value (`"suspend",`).
fn rejected_by_json_c(name: &str) -> bool {
    name.starts_with("video-")
}

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .expect("schedlab runs")
}

/// The condition variables each task waits on in its first phase (suspend, wait, sync),
/// and those it wakes anywhere (resume, signal, broad, sync).
fn waits_and_wakes(w: &Workload, t: usize) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let spec = &w.tasks[t];
    let waits = spec.phases[0]
        .events
        .iter()
        .filter_map(|e| match *e {
            Event::Suspend { cond, .. } | Event::Wait { cond, .. } | Event::Sync { cond, .. } => {
                Some(cond)
            }
            _ => None,
        })
        .collect();
    let wakes = spec
        .phases
        .iter()
        .flat_map(|p| &p.events)
        .filter_map(|e| match *e {
            Event::Resume { cond, .. }
            | Event::Signal { cond }
            | Event::Broadcast { cond }
            | Event::Sync { cond, .. } => Some(cond),
            _ => None,
        })
        .collect();
    (waits, wakes)
}

/// The tasks whose threads can get through their first phase, from the file alone: a
/// thread that waits on a condition (in rt-app a `suspend` waits on its own task's name) is
/// stuck unless another task that is not stuck wakes that name. Starting from every task
/// and removing the stuck ones until nothing changes.
fn can_progress(w: &Workload) -> Vec<bool> {
    let n = w.tasks.len();
    let ww: Vec<_> = (0..n).map(|t| waits_and_wakes(w, t)).collect();
    let mut live = vec![true; n];
    loop {
        let mut changed = false;
        for t in 0..n {
            if !live[t] {
                continue;
            }
            let woken = ww[t]
                .0
                .iter()
                .all(|c| (0..n).any(|o| o != t && live[o] && ww[o].1.contains(c)));
            if !woken {
                live[t] = false;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

/// Rows (phase iterations) of each thread's rt-app log.
fn log_rows(logs: &Path, basename: &str, thread: &str) -> usize {
    let path = logs.join(format!("{basename}-{thread}.log"));
    std::fs::read_to_string(path)
        .map(|t| t.lines().filter(|l| !l.starts_with('#')).count())
        .unwrap_or(0)
}

#[test]
fn every_example_rt_app_accepts_runs_its_threads_on_juno() {
    let files = examples();
    assert!(files.len() >= 20, "examples missing: {files:?}");
    let platform = Platform::resolve("juno-r0").unwrap();
    for name in files.iter().filter(|n| !rejected_by_json_c(n)) {
        let w = load_workload(&dir().join(name)).unwrap_or_else(|e| panic!("{e}"));
        let live = can_progress(&w);
        let logs = tempfile::tempdir().unwrap();
        let r = simulate(
            Run {
                platform: platform.clone(),
                workload: w.clone(),
                variant: Variant::for_platform(&platform),
                duration_ns: Some(2_000_000_000),
                seed: 0,
                reproducible: true,
            },
            &Outputs {
                rtapp_logs: Some(logs.path().to_path_buf()),
                ..Outputs::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.warnings.len(), w.warnings.len(), "{name}");
        // rt-app names a thread after its task and its index among all the threads.
        for (index, (t, _)) in w.initial_threads().into_iter().enumerate() {
            let spec = &w.tasks[t];
            {
                let thread = format!("{}-{index}", spec.name);
                let res = r
                    .tasks
                    .iter()
                    .find(|x| x.name == thread)
                    .unwrap_or_else(|| panic!("{name}: no thread {thread}"));
                let rows = log_rows(logs.path(), &w.global.log_basename, &thread);
                if live[t] {
                    assert!(res.runtime_ns > 0, "{name}: {thread} never ran");
                    assert!(rows >= 1, "{name}: {thread} finished no phase iteration");
                } else {
                    // Nobody wakes what it waits on: as in rt-app it stays blocked (a resume
                    // of a name nobody suspends on does nothing).
                    assert_eq!(rows, 0, "{name}: {thread} got past a wait nobody ends");
                }
            }
        }
    }
}

/// The Android use cases: browser threads suspend on their own task names, which only some
/// resumes name; mp3's chain of resumes reaches every thread.
#[test]
fn browser_and_mp3_block_and_progress_as_rt_app_reads_them() {
    let browser = load_workload(&dir().join("browser-short.json")).unwrap();
    let live = can_progress(&browser);
    let names: Vec<&str> = browser
        .tasks
        .iter()
        .zip(&live)
        .filter(|(_, &l)| l)
        .map(|(t, _)| t.name.as_str())
        .collect();
    // BrowserMain's first phase waits on nothing; Binder-dummy waits on queue11, which
    // BrowserDisplay's sync signals, but BrowserDisplay suspends on its own name first and
    // nobody resumes "BrowserDisplay".
    assert_eq!(names, ["BrowserMain"]);
    let mp3 = load_workload(&dir().join("mp3-short.json")).unwrap();
    assert!(can_progress(&mp3).iter().all(|&l| l));
}

#[test]
fn ignored_keys_warn_once_on_stderr_and_in_the_results() {
    let file = dir().join("mp3-short.json");
    let out = schedlab(&[
        "run",
        file.to_str().unwrap(),
        "--duration",
        "50ms",
        "--json",
        "-",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("global.frag") && lines[0].contains("warning"),
        "{err}"
    );
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = results["warnings"].as_array().expect("a warnings array");
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        format!("schedlab: {}", warnings[0].as_str().unwrap()),
        lines[0]
    );
}

#[test]
fn strict_exits_2_naming_the_first_unknown_key() {
    for name in [
        "mp3-short.json",
        "mp3-long.json",
        "browser-short.json",
        "browser-long.json",
    ] {
        let file = dir().join(name);
        let file = file.to_str().unwrap();
        for args in [
            vec!["run", "--strict", file, "--duration", "10ms"],
            vec!["check", "--strict", file],
            vec![
                "sweep",
                "--strict",
                file,
                "--param",
                "config.HZ=250",
                "--out",
            ],
            vec![
                "compare",
                "--strict",
                file,
                "--vs",
                "config.HZ=1000",
                "--runs",
                "1",
            ],
        ] {
            let mut args = args;
            let out_dir = tempfile::tempdir().unwrap();
            if args[0] == "sweep" {
                args.push(out_dir.path().to_str().unwrap());
            }
            let out = schedlab(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            let first = err.lines().next().unwrap_or("");
            assert!(
                first.contains(&format!("{file}: global.frag:"))
                    && first.contains("unknown key \"frag\""),
                "{args:?}: {err}"
            );
            if args[0] != "check" {
                assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            }
        }
        // Without --strict the same file checks fine.
        let out = schedlab(&["check", file]);
        assert_eq!(out.status.code(), Some(0), "{name}");
    }
}

#[test]
fn check_reports_every_warning_and_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.json");
    std::fs::write(
        &file,
        r#"{"global": {"frag": 1, "calibration": "CPU9"},
            "tasks": {"a": {"run": -1, "slep": 5, "sleep": 1},
                      "b": {"run": 1, "priority": 99, "resume": "nobody"}}}"#,
    )
    .unwrap();
    let out = schedlab(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for place in [
        "global.frag: warning",
        "tasks.a.slep: warning",
        "did you mean \"sleep\"",
        "tasks.b.resume: warning",
        "tasks.a.run (line 2 column 29): expected",
        "tasks.b.priority: expected",
    ] {
        assert!(err.contains(place), "`{place}` missing: {err}");
    }
    // The calibration CPU is checked against the platform once the file itself is valid.
    std::fs::write(
        &file,
        r#"{"global": {"calibration": "CPU9"}, "tasks": {"a": {"run": 1}}}"#,
    )
    .unwrap();
    let out = schedlab(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("global.calibration"), "{err}");
}

#[test]
fn files_json_c_rejects_exit_2_with_line_and_column() {
    for name in examples().iter().filter(|n| rejected_by_json_c(n)) {
        let file = dir().join(name);
        let out = schedlab(&["check", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        // `"suspend",` on line 6: json-c wants the ':' where the ',' is.
        assert!(
            err.contains("line 6 column 13") && err.contains("':'"),
            "{name}: {err}"
        );
    }
}

/// What `schedlab gen` writes is read without a warning: every key it uses is rt-app's or
/// a documented extension.
#[test]
fn every_generator_writes_files_without_warnings() {
    use clap::Subcommand;
    let gen = schedlab::gen::GenCommand::augment_subcommands(clap::Command::new("gen"));
    let names: Vec<&str> = gen.get_subcommands().map(|c| c.get_name()).collect();
    assert!(names.len() >= 8, "{names:?}");
    // `from-trace` needs a trace to read (tests/it/replay.rs checks what it writes).
    for name in names.into_iter().filter(|&n| n != "from-trace") {
        let out = schedlab(&["gen", name]);
        assert_eq!(out.status.code(), Some(0), "gen {name}");
        let c = schedlab::workload::check_workload(&String::from_utf8_lossy(&out.stdout), name);
        assert!(c.errors.is_empty(), "gen {name}: {:?}", c.errors);
        assert!(c.warnings.is_empty(), "gen {name}: {:?}", c.warnings);
    }
}

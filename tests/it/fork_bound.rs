//! The bound on threads: a task that
//! forks itself without end meets `threads-max` as on a real kernel, where `copy_process()`
//! fails with EAGAIN once `nr_threads >= max_threads` (kernel/fork.c) and the forking
//! thread gets the error and goes on; and a million created threads that have not run yet
//! cost their kernel state alone, so that the largest workload the reader accepts fits in
//! a machine's memory.

use crate::common::schedlab_cli as schedlab;

/// An rt-app task forking itself at every iteration, the fork limit off: without a bound
/// on threads it doubles its threads every few tens of µs.
fn fork_bomb(threads_max: Option<u32>) -> String {
    let max = threads_max.map_or(String::new(), |n| format!(", \"threads_max\": {n}"));
    format!(
        r#"{{"tasks": {{"f": {{"loop": -1, "run": 10, "fork": "f"}}}},
            "global": {{"duration": 5, "fork_limit": 0{max}}}}}"#
    )
}

#[test]
fn a_fork_bomb_stops_at_threads_max_and_the_run_goes_on() {
    let out = schedlab(
        &["run", "-", "--duration", "20ms", "--json", "-"],
        Some(&fork_bomb(Some(64))),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    // One warning, on the forking task, naming the error and the bound.
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    for f in ["tasks.f", "EAGAIN", "64 threads", "threads_max"] {
        assert!(warnings[0].contains(f), "`{f}` missing from: {err}");
    }
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failures = r["fork_failures"].as_u64().unwrap();
    assert!(failures > 0, "no fork failed");
    assert!(r["warnings"].as_array().unwrap()[0]
        .as_str()
        .unwrap()
        .contains(&format!("{failures} forks")));
    // No forked thread exits (loop -1): every thread ever created is alive at the end, and
    // they are exactly the bound: forks fail only there, and none succeeds past it.
    let tasks = r["tasks"].as_array().unwrap();
    assert!(tasks.iter().all(|t| t["exited"] == false));
    assert_eq!(tasks.len(), 64);
    assert!(r["exited_forks"].as_array().unwrap().is_empty());
    // The failing forks did not stop their parents: the run lasted its duration, and the
    // threads kept running after the bound was reached (each ran more than one 10 µs
    // iteration's work: every thread forks once per iteration, so the bound is reached
    // within a few iterations of the first).
    assert_eq!(r["duration_ns"], 20_000_000);
    let busy: u64 = tasks
        .iter()
        .map(|t| t["runtime_ns"].as_u64().unwrap())
        .sum();
    assert!(busy > 64 * 10_000, "{busy} ns of work in all");
}

#[test]
fn the_default_bound_is_the_instance_bound() {
    // The instances may use the whole bound, and not more: `threads_max` lowers both.
    let out = schedlab(
        &["check", "-"],
        Some(r#"{"tasks": {"t": {"instance": 65, "run": 10}}, "global": {"threads_max": 64}}"#),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("tasks.t.instance") && err.contains("at most 64 threads"),
        "{err}"
    );
    for bad in ["0", "1048577"] {
        let out = schedlab(
            &["check", "-"],
            Some(&format!(
                r#"{{"tasks": {{"t": {{"run": 10}}}}, "global": {{"threads_max": {bad}}}}}"#
            )),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("global.threads_max") && err.contains("1048576"),
            "{err}"
        );
    }
    let out = schedlab(&["check", "-"], Some(&fork_bomb(None)));
    assert_eq!(out.status.code(), Some(0));
    // An experiment's workloads run on one machine: their instances share one bound.
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("e.toml");
    let part = |name: &str| {
        format!(
            "[[workload]]\nname = \"{name}\"\njson = '''{{\"tasks\": {{\"t\": {{\"instance\": 40, \
             \"run\": 10}}}}, \"global\": {{\"threads_max\": 64}}}}'''\n"
        )
    };
    std::fs::write(&exp, part("a") + &part("b")).unwrap();
    let out = schedlab(&["check", exp.to_str().unwrap()], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("at most 64 threads") && err.contains("80"),
        "{err}"
    );
}

/// The peak resident memory (bytes) of `schedlab args`, from `wait4()`'s rusage of that
/// child alone (the test binary's other children leave it untouched).
#[cfg(target_os = "linux")]
fn max_rss(args: &[&str], stdin: &str) -> (std::process::ExitStatus, u64) {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    /// `struct rusage` (64-bit Linux): two `struct timeval`s, then `ru_maxrss` (KiB) and
    /// thirteen more longs.
    #[repr(C)]
    struct Rusage {
        times: [i64; 4],
        maxrss_kib: i64,
        rest: [i64; 13],
    }
    extern "C" {
        fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
    }
    // Reaped by `wait4` below, which gives its peak RSS.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("schedlab runs");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let mut status = 0;
    let mut usage = Rusage {
        times: [0; 4],
        maxrss_kib: 0,
        rest: [0; 13],
    };
    // SAFETY: the child is ours and not waited for yet; both pointers are to live locals.
    let pid = unsafe { wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    (
        std::process::ExitStatus::from_raw(status),
        usage.maxrss_kib as u64 * 1024,
    )
}

#[cfg(target_os = "linux")]
#[test]
fn a_million_threads_that_have_not_run_fit_in_a_gigabyte_and_a_half() {
    // 10^6 threads created at start; in 1 ms every one has been woken (`wake_up_new_task`
    // within `model.start_spread_ns`, 20 µs) and a handful has run: the others are each
    // a task on a runqueue, its scheduling entity and its row of the results.
    let w = r#"{"tasks": {"t": {"instance": 1000000, "loop": 1, "run": 100}}}"#;
    let (status, rss) = max_rss(&["run", "-", "--duration", "1ms"], w);
    assert!(status.success(), "{status}");
    assert!(rss < 1536 << 20, "{} MiB", rss >> 20);
}

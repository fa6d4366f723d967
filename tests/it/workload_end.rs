//! A run ends when its workload has: rt-app's main returns once it has joined every thread,
//! whatever kernel timers are still armed (problem 6 of the LISA trace issue: the
//! calibration workload's FIFO thread exits at 4.17 ms and the run went on to the RT
//! period's timer, 1 s, or 2 s with a 2 s period, with that tail in `duration_ns` and the
//! energy).

use crate::common::*;
use schedlab::Outputs;

/// rt-app's cpufreq_governor_efficiency calibration: one FIFO thread, 2 ms of work and a
/// 2 ms sleep, once.
const CALIBRATION: &str = r#"{ "tasks": { "thread": { "instance": 1, "loop": 1, "phases": {
    "run": { "loop": 1, "run": 2000 }, "sleep": { "loop": 1, "sleep": 2000 } } } },
    "global": { "default_policy": "SCHED_FIFO", "calibration": "CPU0" } }"#;

/// The last `sched_process_exit` of a trace, ns of simulated time (the trace clock less
/// `CLOCK_OFFSET_NS`).
fn last_exit(trace: &str) -> u64 {
    let line = trace
        .lines()
        .rev()
        .find(|l| l.contains("sched_process_exit"))
        .expect("an exit");
    let ts = line.split("] ").nth(1).unwrap().split(':').next().unwrap();
    let (s, f) = ts.trim().split_once('.').unwrap();
    s.parse::<u64>().unwrap() * 1_000_000_000 + f.parse::<u64>().unwrap()
        - schedlab::trace::CLOCK_OFFSET_NS
}

#[test]
fn a_run_ends_when_its_last_thread_exits() {
    let dir = tempfile::tempdir().unwrap();
    for sets in [&[][..], &["kernel.sched_rt_period_us=2000000"][..]] {
        let path = dir.path().join("t.txt");
        let out = Outputs {
            trace: Some(path.clone()),
            ..Outputs::default()
        };
        let r = run_full("juno-r0", CALIBRATION, 10 * S, sets, 0, &out);
        let trace = std::fs::read_to_string(&path).unwrap();
        let exit = last_exit(&trace);
        assert!(r.tasks.iter().all(|t| t.exited), "{sets:?}");
        assert_eq!(
            r.duration_ns, exit,
            "{sets:?}: the run went on after the last exit"
        );
        assert!(
            exit > 4 * MS && exit < 10 * MS,
            "{sets:?}: exit at {exit} ns"
        );
        // Nothing after it: the trace, the idle time and the energy end there.
        let busy_and_idle: u64 = r.cpus.iter().map(|c| c.busy_ns + c.idle_ns).max().unwrap();
        assert_eq!(busy_and_idle, exit, "{sets:?}");
    }
}

/// A run with a thread left runs its duration.
#[test]
fn a_run_with_a_thread_left_runs_its_duration() {
    let w = r#"{ "tasks": {
        "short": { "loop": 1, "run": 2000 },
        "long": { "loop": -1, "run": 1000, "sleep": 9000 } } }"#;
    let r = run_json("juno-r0", w, 300 * MS, &[]);
    assert_eq!(r.duration_ns, 300 * MS);
}

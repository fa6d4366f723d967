//! Seed 002's benchmark tables as properties, through experiment files: hackbench completes
//! sooner with every task at latency nice 19 (patch 4), and cyclictest beside hackbench wakes
//! up several-fold sooner at latency nice -20, its p99 and max too with the latency tree
//! (patch 7). Without the series the requests are refused and change nothing.

use schedlab::experiment::Experiment;
use schedlab::report::Results;
use std::path::Path;

fn run(text: &str, seed: u64) -> Results {
    Experiment::parse(text, "seed002.toml", Path::new("."))
        .unwrap()
        .run(seed, true, &Default::default())
        .unwrap()
}

fn metric(r: &Results, path: &[&str]) -> f64 {
    let mut v = r.workload_metrics.as_ref().expect("generator metrics");
    for p in path {
        v = &v[*p];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} in {:?}", r.workload_metrics))
}

/// `hackbench -p -g 2 -l 256` on smp8, every task at latency nice `ln`.
fn hackbench_pipe(series: &str, ln: i32, seed: u64) -> Results {
    run(
        &format!(
            r#"platform = "smp8"
               duration = "2s"
               set = {{ variant.latency_nice = "{series}" }}
               [[workload]]
               gen = "hackbench"
               args = {{ pipe = true, groups = 2, loops = 256 }}
               latency_nice = {ln}"#
        ),
        seed,
    )
}

#[test]
fn hackbench_over_pipes_completes_sooner_at_latency_nice_19() {
    // Patch 4: a high latency nice lowers the preemptions at wakeup, so the senders and
    // receivers run longer before switching and the whole run completes sooner.
    for seed in [0, 1] {
        let at0 = hackbench_pipe("v5", 0, seed);
        let at19 = hackbench_pipe("v5", 19, seed);
        let (t0, t19) = (
            metric(&at0, &["completion_ns"]),
            metric(&at19, &["completion_ns"]),
        );
        assert!(t19 < t0, "seed {seed}: latency nice 19 {t19} vs 0 {t0}");
        assert!(at19.tasks.iter().all(|t| t.latency_nice == 19));
    }
    // v6.1 has no latency nice: every task's request fails and the run is the same.
    let at0 = hackbench_pipe("off", 0, 0);
    let at19 = hackbench_pipe("off", 19, 0);
    assert!(at19
        .tasks
        .iter()
        .all(|t| t.latency_nice == 0 && t.setattr_errors == 1));
    assert_eq!(
        metric(&at0, &["completion_ns"]),
        metric(&at19, &["completion_ns"])
    );
}

/// cyclictest (SCHED_OTHER, 1 ms) at latency nice `ln` beside `hackbench -g 4` over sockets on
/// smp8: (avg, p99, max) in µs. At the highest frequency, where hackbench holds the board
/// in the seed's steady state: 150 ms would otherwise be mostly schedutil's ramp from the
/// idle machine's lowest OPP.
fn cyclictest(series: &str, ln: i32) -> (f64, f64, f64) {
    let r = run(
        &format!(
            r#"platform = "smp8"
               duration = "150ms"
               set = {{ variant.latency_nice = "{series}", cpufreq.governor = "performance" }}
               [[workload]]
               name = "ct"
               gen = "cyclictest"
               args = {{ policy = "other", interval = 1000, duration = 1 }}
               latency_nice = {ln}
               [[workload]]
               name = "hb"
               gen = "hackbench"
               args = {{ groups = 4, loops = 10000 }}"#
        ),
        0,
    );
    let m = |k| metric(&r, &["ct", k]);
    (m("avg_us"), m("p99_us"), m("max_us"))
}

#[test]
fn cyclictest_beside_hackbench_wakes_sooner_at_latency_nice_minus_20() {
    let base = cyclictest("v5", 0);
    // The load makes CFS's wakeup latency millisecond-scale at latency nice 0.
    assert!(base.1 >= 1000.0, "p99 at latency nice 0: {base:?}");
    // Patches 1-6: the -20 offset lets each wakeup preempt the hackbench task running.
    let v5 = cyclictest("v5", -20);
    assert!(v5.0 * 3.0 <= base.0, "v5 avg {v5:?} vs {base:?}");
    assert!(v5.1 * 3.0 <= base.1, "v5 p99 {v5:?} vs {base:?}");
    // Patch 7: the latency tree picks it first when it could not preempt.
    let tree = cyclictest("v5+rbtree", -20);
    assert!(tree.1 * 3.0 <= base.1, "rbtree p99 {tree:?} vs {base:?}");
    assert!(tree.2 * 3.0 <= base.2, "rbtree max {tree:?} vs {base:?}");
    // v6.1: the request is refused and nothing changes.
    assert_eq!(cyclictest("off", -20), base);
}

//! EEVDF (`variant.fair=eevdf`: v6.6 lag placement and eligibility, v6.12 custom slices).

use crate::common;

use common::*;
use schedlab::kernel::fair::Fair;
use schedlab::kernel::Variant;

const EEVDF: &[&str] = &["variant.fair=eevdf"];

/// Two periodic tasks (0.5 ms every 4 ms) on CPU 0 of smp8 against two CPU hogs, `s` with
/// a custom slice of `slice_us` (rt-app's `dl-runtime` on a SCHED_OTHER task).
fn periodic_pair(slice_us: u64) -> (TaskNumbers, TaskNumbers) {
    let json = format!(
        r#"{{"tasks": {{
            "hog": {{"instance": 2, "loop": -1, "cpus": [0], "run": 100000}},
            "s": {{"loop": -1, "cpus": [0], "dl-runtime": {slice_us},
                   "timer": {{"ref": "a", "period": 4000}}, "run": 500}},
            "d": {{"loop": -1, "cpus": [0], "timer": {{"ref": "b", "period": 4000}}, "run": 500}}
        }}}}"#
    );
    let r = run_json("smp8", &json, 2 * S, EEVDF);
    let get = |prefix: &str| {
        let t = r.tasks.iter().find(|t| t.name.starts_with(prefix)).unwrap();
        TaskNumbers {
            runtime: t.runtime_ns,
            mean_latency: t.wakeup_latency_ns.mean,
        }
    };
    (get("s-"), get("d-"))
}

struct TaskNumbers {
    runtime: u64,
    mean_latency: u64,
}

#[test]
fn a_short_custom_slice_lowers_wakeup_latency_not_bandwidth() {
    let (s, d) = periodic_pair(300);
    // PREEMPT_SHORT: the eligible waking task with the shorter request takes the CPU from a
    // hog still inside its slice; the default-slice task waits for the hog's deadline.
    assert!(
        s.mean_latency * 2 < d.mean_latency,
        "short slice {} ns vs default {} ns",
        s.mean_latency,
        d.mean_latency
    );
    // Both get what they ask (0.5 ms per 4 ms, under their quarter share) over 2 s.
    for t in [&s, &d] {
        let demand = 500_000 * 500;
        assert!(t.runtime * 100 > demand * 97, "{} of {demand}", t.runtime);
    }
    // With equal (default) slices neither is favoured.
    let (s0, d0) = periodic_pair(0);
    let ratio = s0.mean_latency as f64 / d0.mean_latency as f64;
    assert!((0.7..1.4).contains(&ratio), "{ratio}");
}

#[test]
fn custom_slices_share_the_cpu_by_weight() {
    // Three CPU-bound tasks on one CPU, one with a 0.2 ms slice, one with 20 ms: a slice is
    // a request size, not a share, so each gets a third.
    let json = r#"{"tasks": {
        "a": {"loop": -1, "cpus": [0], "dl-runtime": 200, "run": 100000},
        "b": {"loop": -1, "cpus": [0], "dl-runtime": 20000, "run": 100000},
        "c": {"loop": -1, "cpus": [0], "run": 100000}
    }}"#;
    let r = run_json("smp8", json, S, EEVDF);
    let total: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
    for t in &r.tasks {
        let share = t.runtime_ns as f64 / total as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.02, "{} {share}", t.name);
    }
    // Weights still count: nice -5 (3121) against nice 0 (1024) gets about three times more.
    let json = r#"{"tasks": {
        "hi": {"loop": -1, "cpus": [0], "priority": -5, "run": 100000},
        "lo": {"loop": -1, "cpus": [0], "run": 100000}
    }}"#;
    let r = run_json("smp8", json, S, EEVDF);
    let ratio = task(&r, "hi-0").runtime_ns as f64 / task(&r, "lo-1").runtime_ns as f64;
    assert!((ratio - 3121.0 / 1024.0).abs() < 0.15, "{ratio}");
}

#[test]
fn custom_slices_are_clamped_as_in_v6_12() {
    let mut f = Fair::new(8, &Variant::default());
    let se = f.alloc_se(Default::default(), false, 0, 0);
    f.set_custom_slice(se, 1_000);
    assert_eq!(f.ses[se].slice, 100_000);
    f.set_custom_slice(se, 1_000_000_000);
    assert_eq!(f.ses[se].slice, 100_000_000);
    f.set_custom_slice(se, 0);
    // sysctl_sched_base_slice: 0.75 ms x (1 + ilog2(8)).
    assert_eq!(f.ses[se].slice, 3_000_000);
    assert!(!f.ses[se].custom_slice);
}

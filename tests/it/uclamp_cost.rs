//! The CPU cost of uclamp's enqueue/dequeue fast path (seeds 000 and 001,
//! `cost.uclamp_rq_op_ns`): paid only while `uclamp_rq_inc/dec` run (compiled in and the
//! `sched_uclamp_used` static key on, or always active before the key), and by the CPU that
//! does the enqueue — a waker sharing the target's LLC (`ttwu_queue()`), else the target.

use crate::common;

use common::*;
use schedlab::gen::*;
use schedlab::kernel::Variant;
use schedlab::report::Results;
use schedlab::Outputs;

const MS: u64 = 1_000_000;

fn metric(r: &Results, key: &str) -> f64 {
    r.workload_metrics.as_ref().expect("a generator's metric")[key]
        .as_f64()
        .unwrap()
}

/// `perf bench sched pipe -T` pinned to Juno's big CPU 1 under the performance governor.
fn pipe_variant(sets: &[&str]) -> Variant {
    let mut v = Variant::default();
    for s in ["cpufreq.governor=performance"].iter().chain(sets) {
        v.set_pair(s, "test").unwrap();
    }
    v
}

fn pipe_run(v: Variant) -> Results {
    let a = PipeArgs {
        runtime: 1,
        cpu: Some(1),
        uclamp_min: None,
        taskgroup: None,
        processes: false,
    };
    let json = pipe(&a).to_string();
    run_variant("juno-r0", &json, 20 * MS, v, 0, &Outputs::default())
}

#[test]
fn the_fast_path_costs_cpu_time_only_while_the_static_key_is_on() {
    let rate = |sets: &[&str]| {
        let r = pipe_run(pipe_variant(sets));
        (metric(&r, "ops_per_sec"), r.uclamp_ops.total())
    };
    let (out, out_ops) = rate(&["config.UCLAMP_TASK=false"]);
    let (key_off, key_off_ops) = rate(&["variant.uclamp_static_key=static-key"]);
    let (always, always_ops) = rate(&["variant.uclamp_static_key=always-active"]);
    let (free, _) = rate(&[
        "variant.uclamp_static_key=always-active",
        "cost.uclamp_rq_op_ns=0",
    ]);
    // Compiled out and compiled in behind a key nobody turned on run the same code path.
    assert_eq!((out_ops, key_off_ops), (0, 0));
    assert_eq!(out, key_off);
    // Always active: every enqueue and dequeue refcounts both clamp ids, and that is slower.
    assert!(always_ops > 0);
    assert!(always < out, "always active {always} ops/s vs {out}");
    // The bucket operations are the only difference: free of cost, the rate is the same.
    assert_eq!(free, out);
}

#[test]
fn the_key_turned_on_mid_run_slows_the_fast_path_from_then_on() {
    // A write that changes a uclamp sysctl turns the key on for good
    // (`sysctl_sched_uclamp_handler`).
    let mut v = pipe_variant(&["variant.uclamp_static_key=static-key"]);
    v.set_at(10 * MS, "kernel.sched_util_clamp_min=512", "test")
        .unwrap();
    let half = pipe_run(v);
    assert!(half.uclamp_static_key_on);
    let off = pipe_run(pipe_variant(&["variant.uclamp_static_key=static-key"]));
    let on = pipe_run(pipe_variant(&["variant.uclamp_static_key=always-active"]));
    let (half, off, on) = (
        metric(&half, "ops_per_sec"),
        metric(&off, "ops_per_sec"),
        metric(&on, "ops_per_sec"),
    );
    assert!(on < half && half < off, "{on} < {half} < {off}");
}

/// netperf UDP_STREAM send-64 on Juno, sender on big CPU 1, receiver on `receiver_cpu`.
fn netperf_sends(receiver_cpu: usize, keys: &[&str]) -> f64 {
    let a = NetperfArgs {
        test: "UDP_STREAM".into(),
        size: 64,
        duration: 1,
        sender_cpu: Some(1),
        receiver_cpu: Some(receiver_cpu),
        uclamp_min: None,
    };
    let mut sets = vec!["cpufreq.governor=performance"];
    sets.extend_from_slice(keys);
    let r = run_json("juno-r0", &netperf(&a).to_string(), 20 * MS, &sets);
    metric(&r, "sends_per_sec")
}

/// v6.1 `ttwu_queue_cond()`: a wake-up goes through the target's wake list (the target does
/// the enqueue) when the two CPUs share no LLC or the target is idle; else the waker
/// enqueues and pays for the buckets.
#[test]
fn the_cpu_that_enqueues_pays_the_waker_within_an_llc_the_target_across() {
    let (out, on) = (
        "config.UCLAMP_TASK=false",
        "variant.uclamp_static_key=always-active",
    );
    let direct = "feature.TTWU_QUEUE=false";
    // Without the wake list the sender enqueues the receiver on CPU 2 itself and pays for
    // the buckets, so it sends less.
    assert!(netperf_sends(2, &[on, direct]) < netperf_sends(2, &[out, direct]));
    // CPU 0 is a little CPU (another LLC), and the receiver's idle CPU 2 takes the wake
    // list too: the receiver's CPU does the enqueue; the sender's rate does not change.
    for cpu in [0, 2] {
        assert_eq!(
            netperf_sends(cpu, &[on]),
            netperf_sends(cpu, &[out]),
            "CPU {cpu}"
        );
    }
}

//! `compare`: no significant difference between identical sides, a significant one with the
//! right sign on a switch known to matter, and results independent of the thread count.

mod common;
use common::*;
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::report::compare::{compare, Comparison};
use schedlab::workload::parse_workload;

fn fio_sides(second: &[&str], runs: u64) -> Comparison {
    let workload = parse_workload(&fio_json(1), "fio.json").unwrap();
    let platform = Platform::resolve("rk3399").unwrap();
    let mut base = Variant::for_platform(&platform);
    base.set_pair("cpufreq.rate_limit_us=2000", "test").unwrap();
    let mut other = base.clone();
    for s in second {
        other.set_pair(s, "test").unwrap();
    }
    let sides = vec![("base".into(), base), ("other".into(), other)];
    let results = schedlab::simulate_sides(&platform, &workload, Some(S), sides, runs).unwrap();
    compare(&results)
}

#[test]
fn identical_sides_differ_in_nothing() {
    // iowait boost on is the default: both sides are the same kernel.
    let c = fio_sides(&["cpufreq.iowait_boost=true"], 4);
    assert!(c.metrics.iter().all(|m| !m.significant[1]), "{c:?}");
}

#[test]
fn turning_iowait_boost_off_lowers_iops_significantly() {
    let c = fio_sides(&["cpufreq.iowait_boost=false"], 4);
    let iops = c.metrics.iter().find(|m| m.metric == "iops").unwrap();
    assert!(iops.significant[1]);
    assert!(iops.diff_pct[1] < -5.0, "{iops:?}");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            serde_json::to_string(&fio_sides(&["cpufreq.iowait_boost=false"], 3)).unwrap()
        })
    };
    assert_eq!(run(1), run(2));
}

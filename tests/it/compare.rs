//! `compare`: no significant difference between identical sides, a significant one with the
//! right sign on a switch known to matter, N sides against the first, and results independent
//! of the thread count.

use schedlab::experiment::{run_sides, Experiment};
use schedlab::report::compare::{compare, Comparison};
use std::path::Path;

/// seed 004's fio load on rk3399 with rate_limit_us=2000 (Christian Loehle's setting).
fn fio_base() -> Experiment {
    let text = r#"
        platform = "rk3399"
        duration = "1s"
        [set]
        cpufreq.rate_limit_us = 2000
        [[workload]]
        gen = "fio"
        args = { runtime = 1 }
    "#;
    Experiment::parse(text, "fio.toml", Path::new(".")).unwrap()
}

/// The base, then one side per list of switches on top of it.
fn fio_sides(others: &[&[&str]], runs: u64) -> Comparison {
    let mut sides = vec![fio_base()];
    for (i, sets) in others.iter().enumerate() {
        let mut side = fio_base();
        for s in *sets {
            side.set(s, "test").unwrap();
        }
        side.name = format!("side{}", i + 1);
        sides.push(side);
    }
    let seeds: Vec<u64> = (0..runs).collect();
    let results = run_sides(&sides, &seeds).unwrap();
    let named: Vec<_> = sides.iter().map(|s| s.name.clone()).zip(results).collect();
    compare(&named)
}

#[test]
fn identical_sides_differ_in_nothing() {
    // iowait boost on is the default: both sides are the same kernel.
    let c = fio_sides(&[&["cpufreq.iowait_boost=true"]], 4);
    assert!(c.metrics.iter().all(|m| !m.significant[1]), "{c:?}");
}

#[test]
fn turning_iowait_boost_off_lowers_iops_significantly() {
    let c = fio_sides(&[&["cpufreq.iowait_boost=false"]], 4);
    let iops = c.metrics.iter().find(|m| m.metric == "iops").unwrap();
    assert!(iops.significant[1]);
    assert!(iops.diff_pct[1] < -5.0, "{iops:?}");
}

#[test]
fn every_side_is_compared_with_the_first() {
    // seed 004 (Christian Loehle's nvme rows, without the patch 2000 µs ~4040 IOPS): a
    // 200 µs rate limit keeps the boost (~3975), the patch's call sites at 200 µs lose it
    // (~2490), and so does turning the boost off (~2860).
    let la = "variant.cpufreq_update_sites=less-aggressive";
    let c = fio_sides(
        &[
            &["cpufreq.rate_limit_us=200"],
            &[la, "cpufreq.rate_limit_us=200"],
            &["cpufreq.iowait_boost=false"],
        ],
        3,
    );
    assert_eq!(c.sides.len(), 4);
    let iops = c.metrics.iter().find(|m| m.metric == "iops").unwrap();
    assert_eq!(iops.means.len(), 4);
    assert!(!iops.significant[0] && iops.diff_pct[0] == 0.0);
    assert!(iops.diff_pct[1].abs() < 10.0, "{iops:?}");
    assert!(iops.significant[2] && iops.diff_pct[2] < -15.0, "{iops:?}");
    assert!(iops.significant[3] && iops.diff_pct[3] < -15.0, "{iops:?}");
    let text = schedlab::report::compare::render(&c);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("Hmean  iops"))
            .count(),
        1
    );
    assert!(text.contains("side3"), "{text}");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            serde_json::to_string(&fio_sides(&[&["cpufreq.iowait_boost=false"]], 3)).unwrap()
        })
    };
    assert_eq!(run(1), run(2));
}

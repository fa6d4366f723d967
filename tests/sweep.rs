//! `sweep`: the same points whatever the thread count, shards that merge into the whole grid,
//! and a failing point reported while the others run.

mod common;
use common::*;
use schedlab::sweep::{merge, parse_param, run, Sweep};

fn fio_sweep(shard: (usize, usize)) -> Sweep {
    let json = fio_json(1);
    let platform = schedlab::platform::Platform::resolve("rk3399").unwrap();
    Sweep {
        base: schedlab::kernel::Variant::for_platform(&platform),
        platform,
        workload: schedlab::workload::parse_workload(&json, "fio.json").unwrap(),
        duration_ns: Some(S / 2),
        seed: 0,
        params: vec![
            parse_param("cpufreq.rate_limit_us=200,2000").unwrap(),
            parse_param("cpufreq.iowait_boost=true,false,maybe").unwrap(),
        ],
        shard,
    }
}

#[test]
fn one_or_two_threads_give_the_same_points() {
    let points = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| serde_json::to_string(&run(&fio_sweep((0, 1)), &|| ())).unwrap())
    };
    assert_eq!(points(1), points(2));
}

#[test]
fn shards_merge_into_the_whole_grid() {
    let whole = run(&fio_sweep((0, 1)), &|| ());
    assert_eq!(whole.len(), 6);
    let shards = (0..3).map(|i| run(&fio_sweep((i, 3)), &|| ())).collect();
    assert_eq!(merge(shards), whole);
}

#[test]
fn a_failing_point_is_reported_and_the_others_run() {
    let points = run(&fio_sweep((0, 1)), &|| ());
    let failed: Vec<_> = points.iter().filter(|p| p.status != "ok").collect();
    assert_eq!(failed.len(), 2, "the two `maybe` points");
    assert!(failed
        .iter()
        .all(|p| p.status.contains("cpufreq.iowait_boost") && p.metrics.is_empty()));
    assert!(points
        .iter()
        .filter(|p| p.status == "ok")
        .all(|p| p.metrics["iops"] > 1000.0));
}

//! Speed of the simulator on fixed scenarios, reported by criterion as simulated events per
//! second of host time (`Throughput::Elements` = the run's `sim_events`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::workload::parse_workload;
use schedlab::{simulate, Outputs, Run};
use std::path::PathBuf;
use std::time::Duration;

fn run(platform: &str, json: &str, duration_ns: u64) -> u64 {
    run_gov(platform, json, duration_ns, "schedutil")
}

fn run_gov(platform: &str, json: &str, duration_ns: u64, governor: &str) -> u64 {
    run_with(
        platform,
        json,
        duration_ns,
        &[&format!("cpufreq.governor={governor}")],
    )
}

fn run_with(platform: &str, json: &str, duration_ns: u64, sets: &[&str]) -> u64 {
    let platform = Platform::resolve(platform).unwrap();
    let mut variant = Variant::for_platform(&platform);
    for s in sets {
        variant.set_pair(s, "bench").unwrap();
    }
    let r = simulate(
        Run {
            platform,
            workload: parse_workload(json, "bench").unwrap(),
            variant,
            duration_ns: Some(duration_ns),
            seed: 0,
            reproducible: true,
        },
        &Outputs::default(),
    )
    .unwrap();
    r.sim_events
}

/// 64 periodic tasks of mixed periods and duty cycles.
fn periodic_64() -> String {
    let tasks: Vec<String> = (0..64)
        .map(|i| {
            let period = 4000 + (i % 8) * 2000;
            let run = period * (5 + (i % 10) * 5) / 100;
            format!(r#""p{i}": {{ "loop": -1, "run": {run}, "timer": {{ "ref": "unique", "period": {period} }} }}"#)
        })
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(","))
}

/// 256 bursty tasks (0.2-1 ms of work, 0.5-2 ms of sleep) in 8 cgroups, one in two at
/// latency nice -20: crowded fair runqueues with group entities and latency-tree entries.
fn crowded_256() -> String {
    let tasks: Vec<String> = (0..256)
        .map(|i| {
            let run = 200 + (i % 5) * 200;
            let sleep = 500 + (i % 4) * 500;
            let ln = if i % 2 == 0 { -20 } else { 0 };
            let g = i % 8;
            format!(
                r#""t{i}": {{ "loop": -1, "taskgroup": "/g{g}", "latency_nice": {ln}, "run": {run}, "sleep": {sleep} }}"#
            )
        })
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(","))
}

fn scenarios(c: &mut Criterion) {
    let mut g = c.benchmark_group("scenarios");
    g.sample_size(10).measurement_time(Duration::from_secs(20));

    let json = periodic_64();
    let events = run("smp8", &json, 60_000_000_000);
    g.throughput(Throughput::Elements(events));
    g.bench_function("smp8_64_periodic_60s", |b| {
        b.iter(|| run("smp8", &json, 60_000_000_000))
    });

    let examples =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/workloads/rt-app-examples");
    if let Ok(dir) = std::fs::read_dir(&examples) {
        let mut files: Vec<String> = dir
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        files.sort();
        let events: u64 = files
            .iter()
            .map(|j| run("juno-r0", j, 10_000_000_000))
            .sum();
        g.throughput(Throughput::Elements(events));
        g.bench_function("juno_rtapp_examples_10s", |b| {
            b.iter(|| {
                files
                    .iter()
                    .map(|j| run("juno-r0", j, 10_000_000_000))
                    .sum::<u64>()
            })
        });
    } else {
        eprintln!(
            "skipping juno_rtapp_examples_10s: {} not found",
            examples.display()
        );
    }
    // The default workload under schedutil (PELT and governor updates on the hot path) and
    // under the performance governor (no governor work), to see what frequency scaling costs.
    let default = include_str!("../workloads/default.json");
    for gov in ["schedutil", "performance"] {
        let events = run_gov("juno-r0", default, 60_000_000_000, gov);
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("juno_default_60s_{gov}"), |b| {
            b.iter(|| run_gov("juno-r0", default, 60_000_000_000, gov))
        });
    }
    // Seed 001's question, on the simulator itself: what uclamp costs the enqueue/dequeue
    // fast path when compiled out, compiled in but unused (static key off), and in use.
    let args = |m| schedlab::workload::gen::PipeArgs {
        runtime: 1,
        cpu: None,
        uclamp_min: m,
    };
    let plain = schedlab::workload::gen::pipe(&args(None)).to_string();
    let clamped = schedlab::workload::gen::pipe(&args(Some(100))).to_string();
    for (name, json, sets) in [
        (
            "pipe_uclamp_compiled_out",
            &plain,
            &["config.UCLAMP_TASK=false"][..],
        ),
        ("pipe_uclamp_unused", &plain, &[][..]),
        ("pipe_uclamp_in_use", &clamped, &[][..]),
    ] {
        let events = run_with("smp8", json, 1_000_000_000, sets);
        g.throughput(Throughput::Elements(events));
        g.bench_function(name, |b| {
            b.iter(|| run_with("smp8", json, 1_000_000_000, sets))
        });
    }
    // The fair class on crowded runqueues: CFS with groups, with the latency rb-tree, and
    // EEVDF (its deadline timeline and eligibility on every pick).
    let crowded = crowded_256();
    for (name, sets) in [
        ("smp8_crowded_256_cfs", &["variant.latency_nice=v5"][..]),
        (
            "smp8_crowded_256_latency_rbtree",
            &["variant.latency_nice=v5+rbtree"][..],
        ),
        ("smp8_crowded_256_eevdf", &["variant.fair=eevdf"][..]),
    ] {
        let events = run_with("smp8", &crowded, 2_000_000_000, sets);
        g.throughput(Throughput::Elements(events));
        g.bench_function(name, |b| {
            b.iter(|| run_with("smp8", &crowded, 2_000_000_000, sets))
        });
    }
    // Seed 002's `hackbench -l (2560 / group) -g 16` over AF_UNIX sockets: 640 tasks, a
    // million messages through bounded channels; the run ends when the last task exits.
    let hackbench = schedlab::workload::gen::hackbench(&schedlab::workload::gen::HackbenchArgs {
        groups: 16,
        loops: 160,
        pipe: false,
        threads: false,
        datasize: 100,
        latency_nice: None,
    })
    .to_string();
    let events = run("smp8", &hackbench, 3_600_000_000_000);
    g.throughput(Throughput::Elements(events));
    g.bench_function("smp8_hackbench_g16_l160", |b| {
        b.iter(|| run("smp8", &hackbench, 3_600_000_000_000))
    });
    g.finish();
}

criterion_group!(benches, scenarios);
criterion_main!(benches);

//! Speed of the simulator on fixed scenarios, reported by criterion as useful (handled)
//! simulated events per second of host time (`Throughput::Elements` = the run's
//! `sim_events`, stale events excluded); the hackbench scenarios report wake-ups. A scenario
//! times the whole run (parse, set-up, simulation, results) unless its name says
//! `steady_events` (a stretch of simulation after a warm-up, set-up and teardown outside the
//! timing) or `setup` (parse and set-up alone).

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput,
};
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::workload::parse_workload;
use schedlab::{Outputs, Run, Simulation};
use std::path::{Path, PathBuf};

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
    run_on(
        Platform::resolve(platform).unwrap(),
        json,
        duration_ns,
        sets,
        &Outputs::default(),
    )
    .0
}

/// One run on `platform`: (handled events, wake-ups).
fn run_on(
    platform: Platform,
    json: &str,
    duration_ns: u64,
    sets: &[&str],
    out: &Outputs,
) -> (u64, u64) {
    finish(prepare(platform, json, duration_ns, sets, out))
}

/// A run parsed and set up, not yet simulated.
fn prepare(
    platform: Platform,
    json: &str,
    duration_ns: u64,
    sets: &[&str],
    out: &Outputs,
) -> Simulation {
    let mut variant = Variant::for_platform(&platform);
    for s in sets {
        variant.set_pair(s, "bench").unwrap();
    }
    let run = Run {
        platform,
        workload: parse_workload(json, "bench").unwrap(),
        variant,
        duration_ns: Some(duration_ns),
        seed: 0,
        reproducible: true,
    };
    Simulation::new(run, out).unwrap()
}

/// Simulate a prepared run: (handled events, wake-ups).
fn finish(sim: Simulation) -> (u64, u64) {
    let r = sim.run().unwrap();
    let wakeups = r.tasks.iter().map(|t| t.wakeups).sum();
    (r.sim_events, wakeups)
}

/// An SMP platform of `n` identical CPUs in LLCs of 8, one frequency domain.
fn smp_platform(n: usize) -> Platform {
    let mut t =
        String::from("name = \"smp-bench\"\ndescription = \"bench\"\nfreq_invariant = true\n");
    for cpu in 0..n {
        t += &format!(
            "[[cpus]]\nuarch = \"bench\"\ncapacity_orig = 1024\nfreq_domain = 0\nllc = {}\n\
             idle_states = [{{ name = \"WFI\", power_mw = 15, exit_latency_ns = 1000 }}]\n",
            cpu / 8
        );
    }
    let cpus: Vec<String> = (0..n).map(|c| c.to_string()).collect();
    t += &format!(
        "[[freq_domains]]\ncpus = [{}]\nfast_switch = true\ntransition_latency_ns = 500000\n\
         opps = [{{ freq_khz = 2000000, power_mw = 1000, cluster_power_mw = 100 }}]\n\
         cluster_idle_states = [{{ name = \"WFI\", power_mw = 50, exit_latency_ns = 1000 }}]\n",
        cpus.join(", ")
    );
    schedlab::platform::parse_platform(&t, "bench.toml").unwrap()
}

/// Two tasks per CPU at half load each (the issue's cost-per-event scenario): 1 ms of work
/// every 2 ms, unique timers.
fn half_load(n_cpus: usize) -> String {
    let tasks: Vec<String> = (0..2 * n_cpus)
        .map(|i| {
            format!(r#""h{i}": {{ "loop": -1, "run": 1000, "timer": {{ "ref": "unique", "period": 2000 }} }}"#)
        })
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(","))
}

/// `n` periodic tasks whose total load is `load_pct`% of 8 CPUs (periods 4-18 ms).
fn periodic_n(n: usize, load_pct: usize) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            let period = 4000 + (i % 8) * 2000;
            let run = (period * 8 * load_pct / 100 / n).max(1);
            format!(r#""p{i}": {{ "loop": -1, "run": {run}, "timer": {{ "ref": "unique", "period": {period} }} }}"#)
        })
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(","))
}

/// `n` always-runnable tasks (one CPU platform: the timeline holds them all).
fn runnable_n(n: usize) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| format!(r#""r{i}": {{ "loop": -1, "run": 1000000 }}"#))
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(","))
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
    // Warm-up and measurement times come from the command line
    // (`-- --warm-up-time 1 --measurement-time 3` on a shared machine).
    g.sample_size(10);
    let examples =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/workloads/rt-app-examples");
    workloads(&mut g, &examples);
    fair_paths(&mut g);
    hackbench_and_scale(&mut g);
    many_tasks(&mut g);
    example7(&mut g, &examples);
    g.finish();
}

/// Periodic tasks, rt-app's examples, and the default workload under two governors.
fn workloads(g: &mut BenchmarkGroup<'_, WallTime>, examples: &Path) {
    // The machine's-time target: 16 and 1000 periodic tasks at half the load of smp8, per
    // simulated second no dearer than 6f81f9a (the default governor, as it was measured).
    let smp8 = Platform::resolve("smp8").unwrap();
    let none = Outputs::default();
    for (n, secs) in [(16, 20), (1000, 2)] {
        let json = periodic_n(n, 50);
        let ns = secs * 1_000_000_000;
        let (events, _) = run_on(smp8.clone(), &json, ns, &[], &none);
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("smp8_{n}_periodic_half_load_{secs}s"), |b| {
            b.iter(|| run_on(smp8.clone(), &json, ns, &[], &none))
        });
    }
    let json = periodic_64();
    let events = run("smp8", &json, 60_000_000_000);
    g.throughput(Throughput::Elements(events));
    g.bench_function("smp8_64_periodic_60s", |b| {
        b.iter(|| run("smp8", &json, 60_000_000_000))
    });

    if let Ok(dir) = std::fs::read_dir(examples) {
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
    let default = include_str!("../../../workloads/default.json");
    for gov in ["schedutil", "performance"] {
        let events = run_gov("juno-r0", default, 60_000_000_000, gov);
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("juno_default_60s_{gov}"), |b| {
            b.iter(|| run_gov("juno-r0", default, 60_000_000_000, gov))
        });
    }
}

/// uclamp's fast-path cost and the fair class on crowded runqueues.
fn fair_paths(g: &mut BenchmarkGroup<'_, WallTime>) {
    // Seed 001's question, on the simulator itself: what uclamp costs the enqueue/dequeue
    // fast path when compiled out, compiled in but unused (static key off), and in use.
    let args = |m| schedlab::gen::PipeArgs {
        runtime: 1,
        cpu: None,
        uclamp_min: m,
        taskgroup: None,
        processes: false,
    };
    let plain = schedlab::gen::pipe(&args(None)).to_string();
    let clamped = schedlab::gen::pipe(&args(Some(100))).to_string();
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
}

/// hackbench by events and by wake-ups, and the cost per event from 8 to 256 CPUs.
fn hackbench_and_scale(g: &mut BenchmarkGroup<'_, WallTime>) {
    // Seed 002's `hackbench -l (2560 / group) -g 16` over AF_UNIX sockets: 640 tasks, a
    // million messages through bounded channels; the run ends when the last task exits.
    let hackbench = schedlab::gen::hackbench(&schedlab::gen::HackbenchArgs {
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
    // The issue's target is wake-ups per wall second (a model splitting work into more
    // events is not faster): the same run with wake-ups as the elements.
    let smp8 = Platform::resolve("smp8").unwrap();
    let none = Outputs::default();
    let (_, wakeups) = run_on(smp8.clone(), &hackbench, 3_600_000_000_000, &[], &none);
    g.throughput(Throughput::Elements(wakeups));
    g.bench_function("smp8_hackbench_g16_l160_wakeups", |b| {
        b.iter(|| run_on(smp8.clone(), &hackbench, 3_600_000_000_000, &[], &none))
    });
    // The issue's cost-per-event scenario, two tasks per CPU at half load, on 8 CPUs and on
    // the 256 CPUs of `zen3-2s` (SMT, CCX LLCs, NUMA, one cpufreq policy per CPU): the target
    // is at most 1.5x the cost per event at 256 CPUs.
    for (platform, n) in [("smp8", 8), ("zen3-2s", 256)] {
        let p = Platform::resolve(platform).unwrap();
        let json = half_load(n);
        let (events, _) = run_on(p.clone(), &json, 1_000_000_000, &[], &none);
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("{platform}_2_per_cpu_half_load_1s"), |b| {
            b.iter(|| run_on(p.clone(), &json, 1_000_000_000, &[], &none))
        });
    }
    let zen3 = Platform::resolve("zen3-2s").unwrap();
    let (_, wakeups) = run_on(zen3.clone(), &hackbench, 3_600_000_000_000, &[], &none);
    g.throughput(Throughput::Elements(wakeups));
    g.bench_function("zen3-2s_hackbench_g16_l160_wakeups", |b| {
        b.iter(|| run_on(zen3.clone(), &hackbench, 3_600_000_000_000, &[], &none))
    });
}

/// Ten thousand periodic tasks, their set-up, and a hundred thousand runnable ones.
fn many_tasks(g: &mut BenchmarkGroup<'_, WallTime>) {
    let smp8 = Platform::resolve("smp8").unwrap();
    let none = Outputs::default();
    let json = periodic_n(10_000, 70);
    let (events, _) = run_on(smp8.clone(), &json, 1_000_000_000, &[], &none);
    g.throughput(Throughput::Elements(events));
    g.bench_function("smp8_10k_periodic_1s", |b| {
        b.iter(|| run_on(smp8.clone(), &json, 1_000_000_000, &[], &none))
    });
    // The issue's "set-up under one second": parse and build the 10,000 tasks (one element).
    g.throughput(Throughput::Elements(1));
    g.bench_function("smp8_10k_periodic_setup", |b| {
        b.iter_with_large_drop(|| prepare(smp8.clone(), &json, 1_000_000_000, &[], &none))
    });
    let up1 = smp_platform(1);
    for n in [1_000, 100_000] {
        let json = runnable_n(n);
        let (events, _) = run_on(up1.clone(), &json, 20_000_000_000, &[], &none);
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("up1_{n}_runnable_20s"), |b| {
            b.iter(|| run_on(up1.clone(), &json, 20_000_000_000, &[], &none))
        });
    }
    // The cost per event in the steady state, which the target (100k within 2x of 1k) is
    // about: the set-up, every task's first run and the teardown are left out. Each task
    // runs a tick (4 ms) per turn, so 100k tasks take 400 s to have all run once; the timed
    // stretch is the 400 s after a 450 s warm-up.
    const WARM: u64 = 450_000_000_000;
    const SPAN: u64 = 400_000_000_000;
    for n in [1_000, 100_000] {
        let json = runnable_n(n);
        let warm = || {
            let mut sim = prepare(up1.clone(), &json, WARM + SPAN, &[], &none);
            sim.advance(WARM);
            sim
        };
        let events = warm().advance(WARM + SPAN).handled;
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("up1_{n}_runnable_steady_events"), |b| {
            b.iter_batched(
                warm,
                |mut sim| {
                    sim.advance(WARM + SPAN);
                    sim
                },
                BatchSize::PerIteration,
            )
        });
    }
}

/// rt-app's example 7, without and with its trace.
fn example7(g: &mut BenchmarkGroup<'_, WallTime>, examples: &Path) {
    let none = Outputs::default();
    let ex7 = examples.join("example7.json");
    match std::fs::read_to_string(&ex7) {
        Ok(json) => {
            let juno = Platform::resolve("juno-r0").unwrap();
            let run = |out: &Outputs| run_on(juno.clone(), &json, 10_000_000_000, &[], out);
            let (events, _) = run(&none);
            g.throughput(Throughput::Elements(events));
            g.bench_function("juno_example7_10s", |b| b.iter(|| run(&none)));
            // The trace's cost is formatting and writing it (with its plat_info.yml).
            // Replacing earlier files also costs their file system the old files' removal
            // (and, on ext4, `auto_da_alloc`'s flush of the new ones at the rename):
            // `_trace` removes the old files outside the timing, as fresh output paths
            // would; `_trace_replacing` times that too.
            let dir = tempfile::tempdir().unwrap();
            let traced = Outputs {
                trace: Some(dir.path().join("ex7.txt")),
                ..Outputs::default()
            };
            g.bench_function("juno_example7_10s_trace", |b| {
                b.iter_batched(
                    || {
                        for name in ["ex7.txt", "ex7.plat_info.yml"] {
                            let _ = std::fs::remove_file(dir.path().join(name));
                        }
                    },
                    |()| run(&traced),
                    BatchSize::PerIteration,
                )
            });
            g.bench_function("juno_example7_10s_trace_replacing", |b| {
                b.iter(|| run(&traced))
            });
        }
        Err(_) => eprintln!("skipping juno_example7_10s: {} not found", ex7.display()),
    }
}

criterion_group!(benches, scenarios);
criterion_main!(benches);

//! The machine's time (`platform/costs.rs`): kernel paths cost CPU work at the CPU's current
//! capacity, IPIs and idle exits delay a wake-up, address-space switches, group levels and
//! cache refills cost what the kernel and the hardware make them cost. The calibration
//! points of `experiments/calibration/` hold their fits; everything else here is a property
//! the costs must give, not a number read back from schedlab.

use crate::common;
use common::*;
use schedlab::experiment::Experiment;
use schedlab::report::Results;
use schedlab::Outputs;
use std::path::PathBuf;

const MS: u64 = 1_000_000;

fn calibration(name: &str, seed: u64) -> Results {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("experiments/calibration")
        .join(format!("{name}.toml"));
    Experiment::load(&path)
        .expect("calibration experiment loads")
        .run(seed, true, &Outputs::default())
        .expect("calibration experiment runs")
}

/// The mean of `key` over seeds 0–4 (run in parallel), as the fits were made.
fn calibration_mean(name: &str, key: &str) -> f64 {
    let runs: Vec<f64> = std::thread::scope(|s| {
        let h: Vec<_> = (0..5)
            .map(|seed| s.spawn(move || metric(&calibration(name, seed), key)))
            .collect();
        h.into_iter().map(|h| h.join().unwrap()).collect()
    });
    runs.iter().sum::<f64>() / runs.len() as f64
}

/// `schedlab gen WORDS…` as a workload.
fn gen(words: &[&str]) -> String {
    let args: Vec<String> = words[1..].iter().map(|w| w.to_string()).collect();
    schedlab::gen::generate(words[0], &args, "test", "gen")
        .expect("generator")
        .to_string()
}

fn metric(r: &Results, key: &str) -> f64 {
    let w = r.workload_metrics.as_ref().expect("a generator's metric");
    w[key].as_f64().unwrap_or_else(|| panic!("no {key} in {w}"))
}

fn within(ours: f64, seed: f64, pct: f64) -> bool {
    (ours / seed - 1.0).abs() * 100.0 <= pct
}

/// Seed 002 "group 0": cyclictest alone, min 17 µs (the fit), avg 18, max 28. The fit is
/// the steady wake-up of an idle board at its lowest OPP, which the board's min and avg both
/// show; ours reaches it once the new thread's initial utilization has decayed (its first
/// 20 ms run at 729 MHz, so our min is lower: see REPRODUCTIONS.md), so the median is
/// checked against the fit and the average against the board's.
#[test]
fn idle_cyclictest_on_smp8_takes_the_boards_time() {
    let r = calibration("smp8-cyclictest", 0);
    let (p50, avg) = (metric(&r, "p50_us"), metric(&r, "avg_us"));
    assert!(within(p50, 17.0, 25.0), "p50 {p50} µs, the board's min 17");
    assert!(within(avg, 18.0, 25.0), "avg {avg} µs, the board 18");
}

/// The hackbench fits were made on the mean of seeds 0–4; our runs spread up to ±9%.
#[test]
fn hackbench_on_smp8_takes_the_boards_time() {
    for (name, seed_s) in [
        ("smp8-hackbench-socket", 1.315),
        ("smp8-hackbench-pipe", 0.786),
    ] {
        let s = calibration_mean(name, "completion_ns") / 1e9;
        assert!(
            within(s, seed_s, 10.0),
            "{name}: {s} s, the board {seed_s} s"
        );
    }
}

#[test]
fn udp_send_64_on_x86_moves_the_seeds_rate() {
    let r = calibration("x86-netperf-udp64", 0);
    let rate = metric(&r, "mbit_per_sec");
    assert!(within(rate, 62.15, 5.0), "{rate} Mbit/s, the seed 62.15");
}

fn cyclictest(platform: &str, sets: &[&str]) -> Results {
    let a = [
        "cyclictest",
        "--policy",
        "other",
        "--duration",
        "1",
        "--interval",
        "1000",
    ];
    run_json(platform, &gen(&a), 1000 * MS, sets)
}

/// A path is CPU work: at the lowest OPP the same wake-up takes longer than at the highest,
/// by the ratio of the frequencies for everything but the idle exit.
#[test]
fn a_wakeup_at_the_lowest_opp_takes_longer_than_at_the_highest() {
    let fast = cyclictest("smp8", &["cpufreq.governor=performance"]);
    let slow = cyclictest("smp8", &["cpufreq.governor=powersave"]);
    let (f, s) = (metric(&fast, "avg_us"), metric(&slow, "avg_us"));
    let p = schedlab::platform::Platform::resolve("smp8").unwrap();
    let ratio = p.max_freq_khz(0) as f64 / p.min_freq_khz(0) as f64;
    let exit = p.cpus[0].idle_states[0].exit_latency_ns as f64 / 1000.0;
    assert!(s > f, "powersave {s} µs, performance {f} µs");
    let scaled = (s - exit) / (f - exit);
    assert!(
        (scaled / ratio - 1.0).abs() < 0.05,
        "work part scales by {scaled}, the frequencies by {ratio}"
    );
}

/// A pinned waker and a pinned wakee that blocks on a pipe; `wakee_cpu` decides where.
fn pipe_wake(waker_cpu: usize, wakee_cpu: usize) -> Results {
    let json = format!(
        r#"{{ "global": {{ "channels": {{ "c": {{ "kind": "pipe", "capacity": 65536 }} }} }},
        "tasks": {{
          "waker": {{ "loop": -1, "cpus": [{waker_cpu}], "run": 200,
                      "send": {{ "channel": "c", "bytes": 8 }}, "sleep": 2000 }},
          "wakee": {{ "loop": -1, "cpus": [{wakee_cpu}],
                      "recv": {{ "channel": "c", "bytes": 8 }}, "run": 50 }} }} }}"#
    );
    run_json("smp8", &json, 200 * MS, &["cpufreq.governor=performance"])
}

/// v6.1 `ttwu_queue_cond`: a wake-up of an idle CPU in another LLC goes through its wake
/// list and an IPI, whose delivery the wakee waits for; one on the waker's own CPU takes no
/// interrupt at all.
#[test]
fn a_remote_wakeup_across_llcs_pays_an_ipi_and_a_local_one_does_not() {
    let costs = schedlab::platform::Platform::resolve("smp8").unwrap().costs;
    // smp8: CPUs 0-3 share one L2, 4-7 the other.
    let remote = pipe_wake(0, 4);
    let local = pipe_wake(0, 0);
    let split = |r: &Results| {
        let t = task(r, "wakee-1");
        (t.wakeup_latency_ns.count, t.latency_split_ns)
    };
    let (n, s) = split(&remote);
    assert!(n > 50);
    assert!(
        s.irq_ns / n >= costs.ipi_latency_ns,
        "{} ns of interrupt per wake-up, the IPI alone takes {}",
        s.irq_ns / n,
        costs.ipi_latency_ns
    );
    let (n, s) = split(&local);
    assert!(n > 50);
    assert_eq!(s.irq_ns, 0, "a local wake-up took an interrupt");
    assert_eq!(s.idle_exit_ns, 0, "the waker's CPU was running the waker");
}

/// hackbench -g 1 -l 50 -s 8192 on CPU 0 of smp8 at its highest frequency, with `seed`: on
/// one CPU there is no placement for the two modes' interleavings to diverge through, and a
/// socket holds only 13 such messages, so the tasks switch every few messages (with 100-byte
/// messages a socket holds 278 and, its writers woken only at a quarter, they hardly switch).
fn hackbench_on_one_cpu(extra: &[&str], seed: u64) -> f64 {
    let mut a = vec![
        "hackbench",
        "--groups",
        "1",
        "--loops",
        "50",
        "--datasize",
        "8192",
    ];
    a.extend_from_slice(extra);
    let mut w: serde_json::Value = serde_json::from_str(&gen(&a)).unwrap();
    for t in w["tasks"].as_object_mut().unwrap().values_mut() {
        t["cpus"] = serde_json::json!([0]);
    }
    let sets = ["cpufreq.governor=performance"];
    let r = run_full(
        "smp8",
        &w.to_string(),
        60_000 * MS,
        &sets,
        seed,
        &Outputs::default(),
    );
    metric(&r, "completion_ns")
}

/// Switching between processes switches the address space (`switch_mm`), which a switch
/// between threads of one process skips: hackbench's processes are slower than threads.
#[test]
fn hackbench_processes_are_slower_than_threads() {
    for seed in 0..3 {
        let procs = hackbench_on_one_cpu(&[], seed);
        let threads = hackbench_on_one_cpu(&["--threads"], seed);
        assert!(
            procs > threads,
            "seed {seed}: processes {procs} ns, threads {threads} ns"
        );
    }
}

/// A pinned pair passing a byte back and forth over two pipes switches at every hand-off:
/// as processes each round trip pays two address-space switches more than as threads.
#[test]
fn a_process_switch_costs_more_than_a_thread_switch() {
    let round_trip = |process: bool| {
        let json = format!(
            r#"{{ "global": {{ "channels": {{
                "ab": {{ "kind": "pipe", "capacity": 65536 }},
                "ba": {{ "kind": "pipe", "capacity": 65536 }} }} }},
            "tasks": {{
              "a": {{ "loop": -1, "cpus": [1], "process": {process},
                      "send": {{ "channel": "ab", "bytes": 1 }},
                      "recv": {{ "channel": "ba", "bytes": 1 }} }},
              "b": {{ "loop": -1, "cpus": [1], "process": {process},
                      "recv": {{ "channel": "ab", "bytes": 1 }},
                      "send": {{ "channel": "ba", "bytes": 1 }} }} }} }}"#
        );
        let r = run_json(
            "juno-r0",
            &json,
            100 * MS,
            &["cpufreq.governor=performance"],
        );
        let trips = task(&r, "a-0").wakeups.max(1);
        r.duration_ns as f64 / trips as f64
    };
    let costs = schedlab::platform::Platform::resolve("juno-r0")
        .unwrap()
        .costs;
    let (procs, threads) = (round_trip(true), round_trip(false));
    let extra = procs - threads;
    // Two switches per round trip, at CPU 1's full capacity (1024).
    let expected = 2.0 * costs.mm_switch_ns as f64;
    assert!(
        (extra / expected - 1.0).abs() < 0.1,
        "processes take {extra} ns more per round trip, two mm switches are {expected} ns"
    );
}

fn pipe_op_ns(sets: &[&str], taskgroup: Option<&str>) -> f64 {
    let mut a = vec!["pipe", "--runtime", "1", "--cpu", "1"];
    if let Some(g) = taskgroup {
        a.extend_from_slice(&["--taskgroup", g]);
    }
    let json = gen(&a);
    let mut all = vec!["cpufreq.governor=performance"];
    all.extend_from_slice(sets);
    let r = run_json("juno-r0", &json, 200 * MS, &all);
    1e9 / metric(&r, "ops_per_sec")
}

/// Seed 000's cost per cgroup level: every level of the group hierarchy is a cfs_rq that
/// enqueue, dequeue, pick and put walk, so a pipe pair three levels deep takes longer per
/// round trip than at the root, and longer with CONFIG_FAIR_GROUP_SCHED than without.
#[test]
fn a_deeper_cgroup_costs_more_per_round_trip() {
    let root = pipe_op_ns(&[], None);
    let deep = pipe_op_ns(&[], Some("/a/b/c"));
    let flat = pipe_op_ns(&["config.FAIR_GROUP_SCHED=false"], Some("/a/b/c"));
    assert!(deep > root, "3 levels {deep} ns, root {root} ns");
    assert!(deep > flat, "group scheduling {deep} ns, without {flat} ns");
    assert!(
        (flat - root).abs() / root < 0.01,
        "without group scheduling the depth costs nothing: {flat} vs {root}"
    );
}

/// A task with a working set of `ws` bytes runs 2 ms on CPU 0, then 2 ms wherever its
/// second phase pins it, sleeping between.
fn migrating(second_cpu: usize, ws: u64) -> u64 {
    let json = format!(
        r#"{{ "tasks": {{ "t": {{ "loop": 1, "working_set": {ws}, "phases": {{
            "a": {{ "cpus": [0], "run": 2000, "sleep": 1000 }},
            "b": {{ "cpus": [{second_cpu}], "run": 2000, "sleep": 1000 }} }} }} }} }}"#
    );
    let r = run_json("smp8", &json, 20 * MS, &["cpufreq.governor=performance"]);
    task(&r, "t-0").runtime_ns
}

/// Cache refill: the same work takes longer after a migration in the LLC (the private
/// cache is cold) and longer again across LLCs (the data comes from memory).
#[test]
fn a_migrated_task_takes_longer_for_the_same_work() {
    let ws = 256 * 1024;
    let (stay, same_llc, other_llc) = (migrating(0, ws), migrating(1, ws), migrating(4, ws));
    assert!(
        same_llc > stay,
        "in the LLC {same_llc} ns, stayed {stay} ns"
    );
    assert!(
        other_llc > same_llc,
        "across LLCs {other_llc} ns, in the LLC {same_llc} ns"
    );
}

/// The split accounts for the whole latency: its wake-up parts sum to the time from the
/// wake-ups to the task running (the histogram's mean × count, within its rounding).
#[test]
fn the_latency_split_sums_to_the_latency() {
    let r = cyclictest("smp8", &[]);
    let t = task(&r, "cyclictest-0");
    let s = t.latency_split_ns;
    let sum = s.idle_exit_ns + s.irq_ns + s.wakeup_path_ns + s.runqueue_ns;
    let l = &t.wakeup_latency_ns;
    let mean = sum as f64 / l.count as f64;
    assert!(
        (mean / l.mean as f64 - 1.0).abs() < 0.01,
        "split mean {mean} ns, latency mean {} ns",
        l.mean
    );
    // Alone on an idle CPU: it leaves idle, takes the timer interrupt, runs the path, and
    // never waits for another task.
    assert!(s.idle_exit_ns > 0 && s.irq_ns > 0 && s.wakeup_path_ns > 0);
    assert_eq!(s.runqueue_ns, 0);
}

/// One row of `schedlab explain-cost`'s table: (path, case, payer, work, wall, on the CPU,
/// keys).
fn explain_rows(text: &str) -> Vec<(String, String, String, u64, u64, u64, String)> {
    let table = text.split("\n\n").nth(1).expect("the table");
    table
        .lines()
        .skip(1)
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let n = t.len();
            let num = |i: usize| t[i].parse::<u64>().unwrap();
            (
                t[0].to_string(),
                t[1..n - 7].join(" "),
                t[n - 7].to_string(),
                num(n - 6),
                num(n - 5),
                num(n - 4),
                t[n - 1].to_string(),
            )
        })
        .collect()
}

/// `schedlab explain-cost` evaluates machine.rs's rules, not a copy: every `[costs]` and
/// `[memory]` key moves a row it prints (a new cost cannot be left out of it, nor be charged
/// nowhere), and what it prints for a path is what machine.rs's function returns.
#[test]
fn explain_cost_prints_what_machine_rs_charges_for_every_key() {
    use schedlab::machine::{self, Charge, Resume};
    use schedlab::platform::{Platform, COST_FIELDS, MEMORY_FIELDS};
    use schedlab::report::{explain_cost, ExplainCostArgs};
    use schedlab::workload::{ChannelKind, DEFAULT_WORKING_SET};
    for platform in ["smp8", "juno-r0"] {
        let args = ExplainCostArgs {
            path: None,
            platform: platform.to_string(),
            khz: None,
            opp: None,
            cpu: 0,
            sets: Vec::new(),
        };
        let rows = explain_rows(&explain_cost(&args).unwrap());
        let keys: Vec<&str> = rows.iter().flat_map(|r| r.6.split(',')).collect();
        let fields = COST_FIELDS.iter().map(|f| format!("cost.{}", f.name));
        let fields = fields.chain(MEMORY_FIELDS.iter().map(|f| format!("memory.{}", f.name)));
        for f in fields {
            assert!(keys.contains(&f.as_str()), "{platform}: {f} moves no row");
        }
        let p = Platform::resolve(platform).unwrap();
        let (c, m) = (&p.costs, &p.memory);
        let cap = u64::from(p.capacity_at(0, p.max_freq_khz(0)));
        let printed = |path: &str, case: &str| {
            let r = rows.iter().find(|r| r.0 == path && r.1.starts_with(case));
            let r = r.unwrap_or_else(|| panic!("{platform}: no row {path} {case}"));
            (r.2.clone(), r.3, r.4, r.5)
        };
        let expect = |ch: Charge| {
            (
                ch.payer.name().to_string(),
                ch.work_ns,
                ch.wall_ns,
                ch.wall_at(cap),
            )
        };
        let across = format!(
            "{} KiB working set, moved across",
            DEFAULT_WORKING_SET / 1024
        );
        let checks = [
            (printed("tick", ""), machine::tick(c)),
            (printed("ipi", "send"), machine::ipi(c).send),
            (printed("ipi", "handler"), machine::ipi(c).handler),
            (
                printed("context_switch", "processes, root group"),
                machine::context_switch(c, true, 1),
            ),
            (
                printed("channel_op", "pipe send of 100 bytes"),
                machine::channel_op(c, ChannelKind::Pipe, true, 100),
            ),
            (
                printed("cache_refill", &across),
                machine::cache_refill(m, DEFAULT_WORKING_SET, Resume::OtherLlc { distance: 10 }),
            ),
            (printed("cpufreq_work", ""), machine::cpufreq_work(c)),
            (printed("syscall", ""), machine::syscall(c)),
        ];
        for (got, charge) in checks {
            assert_eq!(got, expect(charge), "{platform}");
        }
    }
}

/// Seed 003's fork loop (test 1, in user.slice) on `platform` under performance and teo, the
/// launcher pinned to CPU 0 or not: PIDs per second over 2 s.
fn forkloop_pids(platform: &schedlab::platform::Platform, pinned: bool) -> f64 {
    let a = schedlab::gen::ForkloopArgs {
        parent_us: 80,
        child_us: 180,
        runtime: 2,
        taskgroup: Some("/user.slice".into()),
        cpus: if pinned { vec![0] } else { Vec::new() },
    };
    let json = schedlab::gen::forkloop(&a).to_string();
    let mut variant = schedlab::kernel::Variant::for_platform(platform);
    for s in ["cpufreq.governor=performance", "cpuidle.governor=teo"] {
        variant.set_pair(s, "test").unwrap();
    }
    let run = schedlab::Run {
        platform: platform.clone(),
        workload: schedlab::workload::parse_workload(&json, "fork.json").unwrap(),
        variant,
        duration_ns: Some(2_000 * MS),
        seed: 0,
        reproducible: true,
    };
    let r = schedlab::simulate(run, &Outputs::default()).unwrap();
    metric(&r, "pids_per_sec")
}

/// Seed 003, Ubuntu 20.04 test 1: the loop pinned to one CPU ("reference") runs 6.9% more
/// PIDs/s than unpinned under performance, the 16.04 one as many (0 to +9% over the kernels):
/// unpinned, the launcher and each child wake an idle CPU. x86-4c8t charges a wake-up from
/// C3 or C6 the core's typical exit (`typical_exit_ns`, derived from intel_idle's package
/// versus core figures), not the table's worst case, which would cost the loop twice the
/// seed's gain.
#[test]
fn pinning_the_fork_loop_gains_what_seed_003_measured() {
    let x86 = schedlab::platform::Platform::resolve("x86-4c8t").unwrap();
    let gain = |p: &schedlab::platform::Platform| forkloop_pids(p, true) / forkloop_pids(p, false);
    let typical = gain(&x86);
    assert!((1.0..1.09).contains(&typical), "pinned gains {typical}");
    let mut worst = x86.clone();
    for s in worst.cpus.iter_mut().flat_map(|c| c.idle_states.iter_mut()) {
        s.typical_exit_ns = None;
    }
    let table = gain(&worst);
    assert!(table > 1.15, "with the table's exits pinned gains {table}");
}

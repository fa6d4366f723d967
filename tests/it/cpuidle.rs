//! cpuidle: the menu and teo governors pick idle states from the next timer
//! and their history, PM QoS (`/dev/cpu_dma_latency`) caps them, a woken CPU runs its task
//! only after its state's exit latency, and residency and energy follow the choices.

use crate::common;
use common::*;
use schedlab::gen::{cyclictest, CyclictestArgs};
use schedlab::platform::Platform;
use schedlab::report::Results;

fn cyclictest_json(interval_us: u64, laptop: bool) -> String {
    cyclictest(&CyclictestArgs {
        policy: "other".into(),
        priority: None,
        interval: interval_us,
        threads: 1,
        affinity: true,
        duration: 2,
        laptop,
        latency_nice: None,
    })
    .unwrap()
    .to_string()
}

fn metric(r: &Results, key: &str) -> f64 {
    r.workload_metrics.as_ref().unwrap()[key].as_f64().unwrap()
}

/// A task on `cpu` of smp8 that runs 100 µs and sleeps `sleep_us`, periodically.
fn periodic(cpu: usize, sleep_us: u64, extra_global: &str) -> String {
    format!(
        r#"{{ "global": {{ {extra_global} }}, "tasks": {{ "p": {{ "loop": -1, "cpus": [{cpu}],
            "run": 100, "timer": {{ "ref": "t", "period": {}, "mode": "absolute" }} }} }} }}"#,
        sleep_us + 100
    )
}

#[test]
fn with_laptop_deep_states_are_used_and_wake_ups_pay_their_exit_latency() {
    // cyclictest every 10 ms on an idle smp8 (hi6220): with /dev/cpu_dma_latency at 0 the
    // CPUs stay in WFI; with --laptop the governor sees the 10 ms timer, all eight CPUs
    // power down and so does the cluster, whose exit latency the wake-up then pays.
    let qos0 = run_json("smp8", &cyclictest_json(10_000, false), 3 * S, &[]);
    let laptop = run_json("smp8", &cyclictest_json(10_000, true), 3 * S, &[]);
    let p = Platform::resolve("smp8").unwrap();
    let wfi = &p.cpus[0].idle_states[0];
    let cluster_sleep = p.freq_domains[0].cluster_idle_states.last().unwrap();
    for c in &qos0.cpus {
        assert_eq!(c.idle_state_ns["cpu-sleep"], 0, "cpu {} left WFI", c.cpu);
    }
    assert_eq!(qos0.domains[0].idle_state_ns["cluster-sleep"], 0);
    let cpu0 = &laptop.cpus[0];
    assert!(cpu0.idle_state_ns["cpu-sleep"] > 9 * cpu0.idle_state_ns["WFI"]);
    assert!(laptop.domains[0].idle_state_ns["cluster-sleep"] > 0);
    let grown_us = metric(&laptop, "p50_us") - metric(&qos0, "p50_us");
    let want_us = (cluster_sleep.exit_latency_ns - wfi.exit_latency_ns) as f64 / 1000.0;
    assert!(
        (grown_us - want_us).abs() <= 1.0,
        "p50 grew by {grown_us} µs, the states' exit latencies differ by {want_us} µs"
    );
    // The delay is the task's idle-exit time: one exit latency per cycle.
    let t = task(&laptop, "cyclictest0-0");
    assert!(
        t.latency_split_ns.idle_exit_ns as f64
            >= 0.9 * 200.0 * cluster_sleep.exit_latency_ns as f64
    );
    assert!(laptop.energy_mj < qos0.energy_mj);
}

#[test]
fn pm_qos_limits_the_states_chosen() {
    // x86-4c8t: POLL, C1 (2 µs), C1E (10), C3 (80), C6 (104). A 5 ms sleeper would go to C6.
    let free = run_json("x86-4c8t", &periodic(1, 5_000, ""), S, &[]);
    let c6 = free.cpus[1].idle_state_ns["C6"];
    assert!(
        c6 > free.cpus[1].idle_ns / 2,
        "{:?}",
        free.cpus[1].idle_state_ns
    );
    let q100 = run_json(
        "x86-4c8t",
        &periodic(1, 5_000, r#""pm_qos_cpu_dma_latency_us": 100"#),
        S,
        &[],
    );
    for c in &q100.cpus {
        assert_eq!(c.idle_state_ns["C6"], 0, "cpu {}: C6 exceeds 100 µs", c.cpu);
    }
    assert!(q100.cpus[1].idle_state_ns["C3"] > q100.cpus[1].idle_ns / 2);
    for gov in ["menu", "teo"] {
        let set = format!("cpuidle.governor={gov}");
        let q0 = run_json(
            "x86-4c8t",
            &periodic(1, 5_000, r#""pm_qos_cpu_dma_latency_us": 0"#),
            S,
            &[&set],
        );
        for c in &q0.cpus {
            // Only state 0 (POLL) is left, whose exit latency is 0.
            assert_eq!(c.idle_state_ns["POLL"], c.idle_ns, "{gov} cpu {}", c.cpu);
        }
    }
}

#[test]
fn the_next_timer_makes_a_long_sleep_deep_and_a_short_one_shallow() {
    for gov in ["menu", "teo"] {
        let set = format!("cpuidle.governor={gov}");
        // cpu-sleep needs 1 ms to pay off (hi6220's min-residency).
        let long = run_json("smp8", &periodic(2, 20_000, ""), 2 * S, &[&set]);
        let short = run_json("smp8", &periodic(2, 300, ""), 2 * S, &[&set]);
        let (l, s) = (&long.cpus[2], &short.cpus[2]);
        assert!(
            l.idle_state_ns["cpu-sleep"] > 9 * l.idle_state_ns["WFI"],
            "{gov} long: {:?}",
            l.idle_state_ns
        );
        assert!(
            s.idle_state_ns["WFI"] > 9 * s.idle_state_ns["cpu-sleep"],
            "{gov} short: {:?}",
            s.idle_state_ns
        );
    }
}

#[test]
fn idle_residency_per_state_sums_to_the_idle_time() {
    let json = r#"{ "tasks": {
        "a": { "loop": -1, "run": 3000, "sleep": 7000 },
        "b": { "instance": 3, "loop": -1, "run": 500, "sleep": 1500 },
        "io": { "loop": -1, "run": 200, "iorun": 1 } } }"#;
    for platform in ["juno-r0", "smp8", "x86-4c8t", "rk3399", "sdm845"] {
        for gov in ["menu", "teo"] {
            let set = format!("cpuidle.governor={gov}");
            let r = run_json(platform, json, S, &[&set]);
            for c in &r.cpus {
                let sum: u64 = c.idle_state_ns.values().sum();
                assert_eq!(sum, c.idle_ns, "{platform} {gov} cpu {}", c.cpu);
                assert_eq!(c.busy_ns + c.idle_ns, S);
            }
            for d in &r.domains {
                // A cluster is in a state only while all its CPUs are idle.
                let sum: u64 = d.idle_state_ns.values().sum();
                assert!(sum <= S - d.busy_ns, "{platform} {gov} {:?}", d.cpus);
            }
        }
    }
}

#[test]
fn energy_never_decreases_along_a_run() {
    let json = r#"{ "tasks": {
        "a": { "loop": -1, "run": 3000, "sleep": 27000 },
        "b": { "loop": -1, "run": 20000, "sleep": 80000 } } }"#;
    for gov in ["menu", "teo"] {
        let set = format!("cpuidle.governor={gov}");
        let mut last = 0.0;
        for ms in [50, 100, 200, 400, 800] {
            let r = run_json("juno-r0", json, ms * MS, &[&set]);
            assert!(
                r.energy_mj >= last,
                "{gov} {ms} ms: {} < {last}",
                r.energy_mj
            );
            for (c, prev) in r.cpus.iter().zip(0..) {
                assert!(c.energy_mj >= 0.0, "cpu {prev}");
            }
            last = r.energy_mj;
        }
    }
}

#[test]
fn the_trace_shows_the_state_chosen_on_entry_and_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("idle.txt");
    let out = schedlab::Outputs {
        trace: Some(trace.clone()),
        ..Default::default()
    };
    let r = run_full("smp8", &periodic(2, 20_000, ""), S, &[], 0, &out);
    assert!(r.cpus[2].idle_state_ns["cpu-sleep"] > 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    let cpu2: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("cpu_idle:") && l.contains("cpu_id=2"))
        .collect();
    assert!(cpu2.iter().any(|l| l.contains("state=1 ")));
    assert!(cpu2.iter().any(|l| l.contains("state=0 ")));
    assert!(cpu2.iter().any(|l| l.contains("state=4294967295 ")));
    // Entries and exits alternate.
    for pair in cpu2.windows(2) {
        let exit = |l: &str| l.contains("state=4294967295 ");
        assert_ne!(exit(pair[0]), exit(pair[1]), "{pair:?}");
    }
}

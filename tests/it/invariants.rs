//! The kernel's full invariant check after every event (`kernel/invariants.rs`), over small
//! scenarios that between them exercise every part of the model it covers. Other tests run
//! with the per-event checks of what each event touched and a full check now and then; here
//! every event gets the full one, so a change the marking of touched things misses shows up
//! at the event that made it. Debug builds only: release builds check nothing.
#![cfg(debug_assertions)]

use crate::common;

use common::{MS, S};
use schedlab::gen::{hackbench, HackbenchArgs};
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::report::Results;
use schedlab::workload::parse_workload;
use schedlab::{Outputs, Run, Simulation};

/// Simulate `json` on `platform` with the switches `sets` (and `at`, timed writes at 50 ms),
/// the full check after every event.
fn fully_checked(platform: &str, json: &str, ns: u64, sets: &[&str], at: &[&str]) -> Results {
    let platform = Platform::resolve(platform).expect("platform");
    let mut variant = Variant::for_platform(&platform);
    for s in sets {
        variant.set_pair(s, "test").expect("valid switch");
    }
    for s in at {
        variant.set_at(50 * MS, s, "test").expect("valid write");
    }
    let run = Run {
        platform,
        workload: parse_workload(json, "test.json").expect("workload parses"),
        variant,
        duration_ns: Some(ns),
        seed: 1,
        reproducible: true,
    };
    let mut sim = Simulation::new(run, &Outputs::default()).expect("simulation boots");
    sim.check_fully_every_event();
    sim.run().expect("simulation runs")
}

/// Nested groups, forks and exits, group moves, yields, latency nice and custom slices, on
/// an asymmetric platform (EAS and misfit), under CFS with and without groups and with
/// patch 7's latency timeline, and under EEVDF; a group's weight changes halfway.
#[test]
fn fair_policies_groups_and_latency_nice() {
    let json = r#"{"tasks": {
        "h": {"instance": 3, "loop": -1, "taskgroup": "/a/b", "run": 20000, "sleep": 500},
        "x": {"instance": 4, "loop": -1, "taskgroup": "/a", "run": 300, "sleep": 700},
        "y": {"instance": 3, "loop": -1, "taskgroup": "/c", "latency_nice": -20,
              "dl-runtime": 300, "run": 3000, "sleep": 100},
        "f": {"loop": -1, "taskgroup": "/c", "run": 100, "fork": "k", "sleep": 1000},
        "k": {"instance": 0, "loop": 1, "run": 500},
        "m": {"loop": -1, "phases": {
            "p0": {"loop": 3, "taskgroup": "/a", "latency_nice": 19, "run": 500, "sleep": 300},
            "p1": {"loop": 3, "taskgroup": "/c", "latency_nice": -5, "run": 500, "yield": 0}
        }}
    }}"#;
    for (fair, latency_nice, groups) in [
        ("cfs", "v5+rbtree", "true"),
        ("cfs", "off", "false"),
        ("eevdf", "v5", "true"),
    ] {
        let sets = [
            format!("variant.fair={fair}"),
            format!("variant.latency_nice={latency_nice}"),
            format!("config.FAIR_GROUP_SCHED={groups}"),
        ];
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let at: &[&str] = if groups == "true" {
            &["cgroup./a.cpu.weight=300"]
        } else {
            &[]
        };
        let r = fully_checked("juno-r0", json, 400 * MS, &sets, at);
        // Every task has run (the forked `k` threads may still wait at the end).
        let mut started = r.tasks.iter().filter(|t| !t.name.starts_with("k-"));
        assert!(started.all(|t| t.runtime_ns > 0), "{sets:?}");
    }
}

/// Pipes and AF_UNIX sockets (hackbench), TCP and UDP streams with blocked and dropped
/// writes, and a futex word, with readers and writers on several CPUs.
#[test]
fn pipes_sockets_and_futex_words() {
    for pipe in [true, false] {
        let json = hackbench(&HackbenchArgs {
            groups: 2,
            loops: 10,
            pipe,
            threads: false,
            datasize: 100,
            latency_nice: None,
        });
        let r = fully_checked("smp8", &json.to_string(), S, &[], &[]);
        assert!(r.channels.iter().all(|c| c.stats.sends > 0));
    }
    let json = r#"{"global": {"channels": {
            "t": {"kind": "tcp", "capacity": 8192},
            "u": {"kind": "udp", "capacity": 2048},
            "w": {"kind": "futex", "capacity": 1}}},
        "tasks": {
            "ts": {"instance": 2, "loop": -1, "send": {"channel": "t", "bytes": 3000}, "run": 50},
            "tr": {"loop": -1, "cpus": [1], "recv": {"channel": "t"}, "run": 400},
            "us": {"loop": -1, "send": {"channel": "u", "bytes": 1024}, "run": 30},
            "ur": {"loop": -1, "cpus": [2], "recv": {"channel": "u"}, "run": 300},
            "ws": {"loop": -1, "run": 200, "send": {"channel": "w", "bytes": 0}, "sleep": 300},
            "wr": {"instance": 3, "loop": -1, "recv": {"channel": "w"}, "run": 100}
        }}"#;
    let r = fully_checked("x86-4c8t", json, 100 * MS, &[], &[]);
    assert!(r.channels.iter().all(|c| c.stats.recvs > 0));
}

/// RT (FIFO and RR, with RT throttling) and deadline tasks beside fair ones, with mutexes,
/// condition variables and barriers, on an SMT platform.
#[test]
fn rt_deadline_and_futexes() {
    let json = r#"{"tasks": {
        "fifo": {"instance": 2, "loop": -1, "policy": "SCHED_FIFO", "priority": 50,
                 "run": 900, "timer": {"ref": "unique", "period": 1000}},
        "rr": {"instance": 3, "loop": -1, "cpus": [3], "policy": "SCHED_RR", "priority": 20,
               "run": 5000, "sleep": 500},
        "dl": {"loop": -1, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 4000,
               "run": 800, "timer": {"ref": "d", "period": 4000}},
        "lk": {"instance": 3, "loop": -1, "lock": "m", "run": 200, "signal": "q",
               "unlock": "m", "sleep": 300},
        "wt": {"loop": -1, "lock": "m", "wait": {"ref": "q", "mutex": "m"}, "unlock": "m",
               "run": 100},
        "b": {"instance": 3, "loop": -1, "run": 400, "barrier": "bb"},
        "hog": {"instance": 6, "loop": -1, "run": 100000}
    }}"#;
    let r = fully_checked("x86-4c8t", json, 300 * MS, &[], &[]);
    assert!(r.tasks.iter().all(|t| t.runtime_ns > 0));
}

/// EAS on an asymmetric platform: small periodic tasks packed by energy, a task growing
/// into a misfit that the balancer moves up, and the cpufreq and idle states under them.
#[test]
fn eas_and_misfit_on_an_asymmetric_platform() {
    let json = r#"{"tasks": {
        "small": {"instance": 4, "loop": -1, "run": 1000,
                  "timer": {"ref": "unique", "period": 16000}},
        "ramp": {"loop": -1, "phases": {
            "light": {"loop": 20, "run": 1000, "timer": {"ref": "r", "period": 10000}},
            "heavy": {"loop": 40, "run": 9500, "timer": {"ref": "r", "period": 10000}}
        }}
    }}"#;
    for platform in ["rk3399", "juno-r0"] {
        let r = fully_checked(platform, json, 500 * MS, &[], &[]);
        assert!(r.tasks.iter().all(|t| t.runtime_ns > 0), "{platform}");
    }
}

/// Idle states and cluster states under both cpuidle governors, with a PM QoS request and
/// timer slack on the sleeps that pick them.
#[test]
fn idle_states_under_each_governor() {
    let json = r#"{"global": {"pm_qos_cpu_dma_latency_us": 100},
        "tasks": {
            "p": {"instance": 3, "loop": -1, "run": 200, "hrtimer_slack_ns": 50000,
                  "timer": {"ref": "unique", "period": 3000}},
            "q": {"loop": -1, "run": 50, "sleep": 20000},
            "io": {"loop": -1, "run": 100, "iorun": 2000}
        }}"#;
    for governor in ["menu", "teo"] {
        for platform in ["smp8", "sdm845"] {
            let set = format!("cpuidle.governor={governor}");
            let r = fully_checked(platform, json, 500 * MS, &[&set], &[]);
            assert!(
                r.tasks.iter().all(|t| t.runtime_ns > 0),
                "{platform} {governor}"
            );
        }
    }
}

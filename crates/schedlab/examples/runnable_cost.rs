//! The bench's `up1_N_runnable_20s` scenario as a program, for callgrind: parses and
//! simulates N always-runnable tasks on one CPU (the bench's platform), prints the handled
//! events. `cargo run --release --example runnable_cost -- 100000 [seconds]`.

use schedlab::kernel::Variant;
use schedlab::platform::{parse_platform, Platform};
use schedlab::workload::parse_workload;
use schedlab::{simulate, Outputs, Run};

const UP1: &str = r#"name = "smp-bench"
description = "bench"
freq_invariant = true
[[cpus]]
uarch = "bench"
capacity_orig = 1024
freq_domain = 0
llc = 0
idle_states = [{ name = "WFI", power_mw = 15, exit_latency_ns = 1000 }]
[[freq_domains]]
cpus = [0]
fast_switch = true
transition_latency_ns = 500000
opps = [{ freq_khz = 2000000, power_mw = 1000, cluster_power_mw = 100 }]
cluster_idle_states = [{ name = "WFI", power_mw = 50, exit_latency_ns = 1000 }]
"#;

fn run(platform: Platform, json: &str, duration_ns: u64) -> u64 {
    let variant = Variant::for_platform(&platform);
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

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1000, |a| a.parse().unwrap());
    let secs: u64 = args.next().map_or(20, |a| a.parse().unwrap());
    let tasks: Vec<String> = (0..n)
        .map(|i| format!(r#""r{i}": {{ "loop": -1, "run": 1000000 }}"#))
        .collect();
    let json = format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(","));
    let platform = parse_platform(UP1, "bench.toml").unwrap();
    println!("{}", run(platform, &json, secs * 1_000_000_000));
}

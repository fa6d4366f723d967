//! Servers at full size: the 256-CPU Zen3 and 40-CPU Xeon presets run every
//! governor and fair policy, affinity above CPU 63 is honoured, masks and platforms beyond
//! their bounds are input errors, and newly-idle balancing obeys v6.1's `avg_idle` cutoff.

use crate::common;

use common::{run_json, task};
use std::process::Command;

/// Two periodic tasks per CPU at a quarter of a CPU each: the machine at half load.
fn half_load(nr_cpus: usize) -> String {
    format!(
        r#"{{"tasks": {{"t": {{"instance": {}, "loop": -1, "run": 2500,
            "timer": {{"ref": "unique", "period": 10000}}}}}}}}"#,
        2 * nr_cpus
    )
}

#[test]
fn zen3_runs_under_every_governor_and_fair_policy() {
    let json = half_load(256);
    for governor in [
        "schedutil",
        "performance",
        "powersave",
        "ondemand",
        "conservative",
    ] {
        for fair in ["cfs", "eevdf"] {
            let g = format!("cpufreq.governor={governor}");
            let f = format!("variant.fair={fair}");
            let r = run_json("zen3-2s", &json, 30_000_000, &[&g, &f]);
            assert_eq!(r.cpus.len(), 256);
            // 512 tasks of 25% over 256 CPUs: every CPU works, none is saturated.
            let busy = r.cpus.iter().filter(|c| c.busy_ns > 0).count();
            assert!(busy >= 250, "{governor}/{fair}: {busy} CPUs busy");
            let ran = r.tasks.iter().filter(|t| t.runtime_ns > 0).count();
            assert_eq!(ran, 512, "{governor}/{fair}");
        }
    }
}

#[test]
fn affinity_above_64_is_honoured() {
    // Pinned tasks on CPUs of the second socket and the second thread of cores; a phase moves
    // one across the 64-CPU word boundary and back.
    let json = r#"{"tasks": {
        "a": {"cpus": [200], "loop": -1, "run": 3000, "timer": {"ref": "ta", "period": 5000}},
        "b": {"cpus": [64, 65], "instance": 3, "loop": -1, "run": 3000,
              "timer": {"ref": "unique", "period": 5000}},
        "c": {"loop": -1, "phases": {
            "p1": {"cpus": [255], "run": 2000, "sleep": 1000},
            "p2": {"cpus": [63], "run": 2000, "sleep": 1000}}}}}"#;
    for platform in ["zen3-2s-nps4", "zen3-2s"] {
        let r = run_json(platform, json, 200_000_000, &[]);
        let ran_on = |name: &str| -> Vec<usize> {
            let t = task(&r, name);
            t.cpu_runtime_ns
                .iter()
                .filter(|(_, &ns)| ns > 0)
                .map(|(c, _)| c.trim_start_matches("cpu").parse().unwrap())
                .collect()
        };
        // rt-app threads pin themselves at start: a few µs may run where they were created.
        let mostly_on = |name: &str, allowed: &[usize]| {
            let t = task(&r, name);
            let inside: u64 = t
                .cpu_runtime_ns
                .iter()
                .filter(|(c, _)| allowed.contains(&c.trim_start_matches("cpu").parse().unwrap()))
                .map(|(_, &ns)| ns)
                .sum();
            assert!(
                inside * 1000 >= t.runtime_ns * 999,
                "{platform} {name}: {inside} of {} ns on {allowed:?} ({:?})",
                t.runtime_ns,
                ran_on(name)
            );
        };
        // rt-app names threads <task>-<index>.
        mostly_on("a-0", &[200]);
        for i in 1..=3 {
            mostly_on(&format!("b-{i}"), &[64, 65]);
        }
        mostly_on("c-4", &[255, 63]);
        assert!(ran_on("c-4").contains(&255) && ran_on("c-4").contains(&63));
    }
}

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn masks_and_platforms_out_of_bounds_are_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.json");
    std::fs::write(&w, r#"{"tasks": {"t": {"cpus": [3, 300], "run": 1000}}}"#).unwrap();
    let out = schedlab(&["run", "--platform", "zen3-2s", w.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("w.json") && err.contains("tasks.t.cpus"),
        "{err}"
    );
    assert!(err.contains("300") && err.contains("256"), "{err}");

    // xeon-2s with one line changed: exit 2 naming the file, the layout and NR_CPUS.
    let too_many = |from: &str, to: &str| {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/platforms/xeon-2s.toml"
        ))
        .unwrap()
        .replace(from, to);
        let p = dir.path().join("huge.toml");
        std::fs::write(&p, text).unwrap();
        let out = schedlab(&[
            "run",
            "--platform",
            p.to_str().unwrap(),
            w.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains("huge.toml") && err.contains("layout") && err.contains("4096"),
            "{err}"
        );
        err
    };
    // 2 × 1250 × 2 = 5000 CPUs: more than a CPU mask (NR_CPUS) holds.
    let err = too_many("cores_per_socket = 10", "cores_per_socket = 1250");
    assert!(err.contains("5000"), "{err}");
    // A count whose product overflows a machine word is the same error, not a panic.
    too_many("sockets = 2", "sockets = 9223372036854775807");
}

#[test]
fn numa_tables_are_checked() {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/platforms/xeon-2s.toml"
    ))
    .unwrap();
    let bad = |from: &str, to: &str| {
        let text = base.replace(from, to);
        assert_ne!(text, base);
        schedlab::platform::parse_platform(&text, "x.toml").unwrap_err()
    };
    let e = bad("[21, 10],", "[22, 10],");
    assert_eq!(
        crate::common::key_path(&e.place),
        "numa_distance[0][1]",
        "{e}"
    );
    let e = bad("[10, 21],", "[11, 21],");
    assert_eq!(crate::common::key_path(&e.place), "numa_distance[0][0]");
    let e = bad("[21, 10],\n]", "[21, 10],\n  [21, 21],\n]");
    assert_eq!(crate::common::key_path(&e.place), "numa_distance");
    let e = bad("cores_per_llc = 10", "cores_per_llc = 3");
    assert_eq!(crate::common::key_path(&e.place), "layout.cores_per_llc");
}

/// Newly-idle balancing with idle periods far shorter or far longer than a balancing pass.
fn newidle(sleep_us: u64) -> schedlab::report::Results {
    // Two hogs share CPU 0's LLC sibling set so the root domain stays overloaded, while
    // short sleepers on the other CPUs go newly idle again and again.
    let json = format!(
        r#"{{"tasks": {{
            "hog": {{"instance": 3, "cpus": [0], "loop": -1, "run": 100000}},
            "s": {{"instance": 6, "loop": -1, "run": 50, "sleep": {sleep_us}}}}}}}"#
    );
    run_json("smp8", &json, 1_000_000_000, &[])
}

#[test]
fn newly_idle_balancing_is_skipped_when_avg_idle_is_below_its_cost() {
    // avg_idle averages the idle periods a wakeup ends (1/8 weight): idle periods under 1 µs bring
    // it below the first pass's cost (lb_pass_cost_ns: at least 1 µs + 100 ns per CPU,
    // learnt as max_newidle_lb_cost), so the kernel stops balancing and skips.
    let short = newidle(1);
    assert!(short.balance.newidle_skipped > 0, "{:?}", short.balance);
    // 20 ms idle periods keep avg_idle at its cap (2 × max_idle_balance_cost ≥ 1 ms), far
    // above any domain's cost: newly-idle balancing runs on every idle entry.
    let long = newidle(20_000);
    assert_eq!(long.balance.newidle_skipped, 0, "{:?}", long.balance);
    assert!(long.balance.newidle_passes > 0, "{:?}", long.balance);
}

/// `tbench N` on `platform` for `ms` of simulated time, with the switches `sets`: (results,
/// MB/s). `no_deep_idle` holds `/dev/cpu_dma_latency` at 0 for the run, as a benchmarker who
/// keeps the idle states' exit latencies out of a throughput figure does.
fn tbench_run(
    platform: &str,
    clients: u32,
    ms: u64,
    no_deep_idle: bool,
    sets: &[&str],
) -> (schedlab::report::Results, f64) {
    use schedlab::gen::{tbench, TbenchArgs};
    let mut json = tbench(&TbenchArgs {
        clients,
        duration: 1,
    });
    if no_deep_idle {
        json["global"]["pm_qos_cpu_dma_latency_us"] = 0.into();
    }
    let r = run_json(platform, &json.to_string(), ms * 1_000_000, sets);
    let w = r.workload_metrics.as_ref().expect("tbench's metric");
    let mb = w["mb_per_sec"].as_f64().expect("mb_per_sec");
    (r, mb)
}

#[test]
fn tbench_scales_with_clients_until_the_cpus_saturate() {
    // Each client waits for its server's reply, so a pair keeps at most about one CPU and a
    // half busy (the writer's send path overlaps the woken reader): on 8 CPUs throughput
    // doubles from 1 to 2 clients, and past the CPU count more clients share the same CPUs.
    // The idle states are held off: with one or two pairs the CPUs idle between messages,
    // and the exit latency of a deep state would be measured instead (checked below). So is
    // the frequency: smp8's eight CPUs are one schedutil policy, and a ping-pong's
    // frequency-invariant utilization falls with the frequency, so one or two pairs can
    // settle at either of two OPPs (729 or 960 MHz) by the run's first few ms, and the
    // ratio would compare clocks, not CPUs.
    let perf = ["cpufreq.governor=performance"];
    let mb: Vec<f64> = [1, 2, 8, 16, 32]
        .iter()
        .map(|&n| tbench_run("smp8", n, 100, true, &perf).1)
        .collect();
    assert!(mb[1] > 1.8 * mb[0], "1 → 2 clients: {mb:?}");
    assert!(mb[2] > 3.0 * mb[0], "1 → 8 clients: {mb:?}");
    for m in &mb[3..] {
        assert!(
            *m < 1.1 * mb[2] && *m > 0.8 * mb[2],
            "past 8 clients: {mb:?}"
        );
    }
    // Saturation is the steady state: over 200 ms, the start (the clients' connections and
    // the first requests, a few ms with CPUs still idle) weighs less.
    let (r, _) = tbench_run("smp8", 16, 200, false, &[]);
    let busy = r.cpus.iter().map(|c| c.busy_ns).sum::<u64>() as f64 / (8.0 * 200e6);
    assert!(busy > 0.98, "16 clients leave the CPUs {busy} busy");
    // The 256-CPU Zen3 is far from saturated by 32 clients: linear growth.
    let few = tbench_run("zen3-2s", 4, 50, false, &[]).1;
    let many = tbench_run("zen3-2s", 32, 50, false, &[]).1;
    assert!(many > 6.4 * few, "zen3-2s 4 → 32 clients: {few} → {many}");
}

/// With the idle states available, a lone client's CPUs sleep between its messages, and each
/// wake-up from a state waits for that state's exit latency (hi6220's `cpu-sleep`: 250 µs
/// against the 40 µs a message takes): one client moves less data than with the PM QoS
/// limit at 0, where only WFI (1 µs) is left.
#[test]
fn a_lone_tbench_client_pays_the_idle_states_exit_latency() {
    let (_, with_deep) = tbench_run("smp8", 1, 100, false, &[]);
    let (_, wfi_only) = tbench_run("smp8", 1, 100, true, &[]);
    assert!(
        with_deep < wfi_only,
        "{with_deep} MB/s against {wfi_only} with WFI only"
    );
}

#[test]
fn tbench_counts_the_read_and_written_payload_of_completed_operations() {
    use schedlab::gen::{tbench_channels, tbench_payload_bytes};
    let (r, mb) = tbench_run("smp8", 3, 50, false, &[]);
    let chan = |name: &str| r.channels.iter().find(|c| c.name == name).unwrap();
    let mut bytes = 0;
    for i in 0..3 {
        let (req, reply) = tbench_channels(i);
        let (req, reply) = (chan(&req), chan(&reply));
        // One request, one reply: the client never has two requests in flight.
        assert!(req.stats.sends - reply.stats.recvs <= 1, "client {i}");
        // The server answers each request it read (the last one may be in progress).
        assert!(req.stats.recvs - reply.stats.sends <= 1, "server {i}");
        // Every reply is read whole (MSG_WAITALL).
        assert_eq!(reply.stats.recvs, reply.stats.sends - reply.queued.min(1));
        // Enough operations (50 ms from the idle OPP) that the payload is not one op's.
        assert!(
            reply.stats.recvs > 50,
            "client {i} completed {}",
            reply.stats.recvs
        );
        bytes += tbench_payload_bytes(reply.stats.recvs);
    }
    let want = bytes as f64 / 1e6 / 0.05;
    assert!((mb - want).abs() < 1e-6 * want, "{mb} MB/s vs {want}");
}

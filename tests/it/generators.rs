//! The benchmark generators of seeds 000 and 002 (hackbench, cyclictest, schbench, netperf,
//! frames) and the blocking IPC they run on: properties of the benchmarks and of the kernel
//! paths they exercise, not numbers read back from earlier runs. Debug builds also check the
//! buffer rules of the channels each event operated on (`Channels::check_touched`), and of
//! all of them in the periodic full check (`Channels::check_invariants`).

use crate::common;

use common::{run_json, MS, S};
use schedlab::gen::*;
use schedlab::report::Results;
use serde_json::Value;

fn metric(r: &Results, key: &str) -> f64 {
    let w = r.workload_metrics.as_ref().expect("a generator's metric");
    w[key].as_f64().unwrap_or_else(|| panic!("no {key} in {w}"))
}

fn hackbench_args(groups: u32, loops: u32, pipe: bool) -> HackbenchArgs {
    HackbenchArgs {
        groups,
        loops,
        pipe,
        threads: false,
        datasize: 100,
        latency_nice: None,
    }
}

/// Run hackbench to completion (the duration is only a bound).
fn hackbench_run(a: &HackbenchArgs, sets: &[&str]) -> Results {
    run_json("smp8", &hackbench(a).to_string(), 60 * S, sets)
}

fn completion(r: &Results) -> f64 {
    let w = r.workload_metrics.as_ref().unwrap();
    assert_eq!(
        w["finished"],
        Value::Bool(true),
        "hackbench did not finish: {w}"
    );
    metric(r, "completion_ns")
}

#[test]
fn hackbench_receives_every_message_sent() {
    let (groups, loops) = (2, 5);
    let r = hackbench_run(&hackbench_args(groups, loops, false), &[]);
    let expected = f64::from(groups * GROUP_FDS * GROUP_FDS * loops);
    assert_eq!(metric(&r, "messages_sent"), expected);
    assert_eq!(metric(&r, "messages_received"), expected);
    assert_eq!(r.channels.len(), (groups * GROUP_FDS) as usize);
    for c in &r.channels {
        // Each receiver reads 20 senders × loops messages of 100 bytes, and nothing is left.
        assert_eq!(c.stats.recvs, u64::from(GROUP_FDS * loops), "{}", c.name);
        assert_eq!(c.stats.received_bytes, c.stats.sent_bytes);
        assert_eq!(c.queued, 0);
        assert!(c.stats.max_queued <= c.capacity);
    }
    // Every task ran to its end; the run stopped once they had, not at the 60 s bound.
    assert!(r.tasks.iter().all(|t| t.exited));
    assert!(r.duration_ns < 60 * S);
    assert!(completion(&r) <= r.duration_ns as f64);
}

#[test]
fn hackbench_time_grows_linearly_with_loops() {
    // At a fixed frequency: a run this short is otherwise mostly schedutil's ramp from the
    // idle machine's lowest OPP. Over eight seeds: a 5-loop run lasts a few ms, and where the
    // forked tasks first land moves one run's time by a factor of three. Linear is a fixed
    // start-up (forks, the first wake-ups) plus the same time per loop: the loops from 10 to
    // 20 cost per loop what those from 5 to 10 did.
    let perf = ["cpufreq.governor=performance"];
    let mean = |loops| {
        (0..8)
            .map(|seed| {
                let json = hackbench(&hackbench_args(1, loops, true)).to_string();
                let r = common::run_full("smp8", &json, 60 * S, &perf, seed, &Default::default());
                completion(&r)
            })
            .sum::<f64>()
            / 8.0
    };
    let (t5, t10, t20) = (mean(5), mean(10), mean(20));
    let (first, second) = ((t10 - t5) / 5.0, (t20 - t10) / 10.0);
    assert!(first > 0.0 && second > 0.0, "{t5} {t10} {t20} ns");
    let ratio = second / first;
    assert!(
        (0.75..1.33).contains(&ratio),
        "a loop from 10 to 20 cost {ratio:.2} times one from 5 to 10 ({t5}, {t10}, {t20} ns)"
    );
}

#[test]
fn pipes_beat_sockets_as_long_as_they_cost_less() {
    // At a fixed frequency, as above.
    let a = |pipe| hackbench_args(1, 5, pipe);
    let perf = ["cpufreq.governor=performance"];
    let pipe = completion(&hackbench_run(&a(true), &perf));
    let socket = completion(&hackbench_run(&a(false), &perf));
    assert!(pipe < socket, "pipe {pipe} ns, socket {socket} ns");
    // The ordering follows the costs, not the channel kind: make sockets the cheap ones.
    let swapped = [
        "cpufreq.governor=performance",
        "cost.pipe_op_ns=6000",
        "cost.unix_op_ns=1000",
    ];
    let pipe = completion(&hackbench_run(&a(true), &swapped));
    let socket = completion(&hackbench_run(&a(false), &swapped));
    assert!(socket < pipe, "pipe {pipe} ns, socket {socket} ns");
}

/// A writer and a reader on one small pipe, with the given work after each operation, each
/// on a CPU of its own (the pipe's rules, not where its sync wake-ups place the reader).
fn pipe_pair(capacity: u64, writer_us: u64, reader_us: u64) -> String {
    format!(
        r#"{{"global": {{"channels": {{"c": {{"kind": "pipe", "capacity": {capacity}}}}}}},
            "tasks": {{
              "writer": {{"loop": 200, "cpus": [0], "send": {{"channel": "c", "bytes": 100}}, "run": {writer_us}}},
              "reader": {{"loop": 200, "cpus": [1], "recv": {{"channel": "c", "bytes": 100}}, "run": {reader_us}}}}}}}"#
    )
}

#[test]
fn a_full_pipe_blocks_the_writer_and_an_empty_one_the_reader() {
    // A slow reader: the writer fills the pipe and then waits for room, never beyond it. A
    // pipe holds whole pages (`round_pipe_size()`): 300 bytes ask for one, where forty
    // 100-byte writes merge and the 41st finds no room; the page is freed only once read to
    // its end, so what the reader took meanwhile is not written again.
    let r = run_json("smp8", &pipe_pair(300, 1, 50), S, &[]);
    let c = &r.channels[0];
    assert!(c.stats.writer_blocks > 0);
    assert!((3000..=4000).contains(&c.stats.max_queued), "{c:?}");
    // Each read from the full pipe wakes the writer, who sleeps again until the page is freed.
    assert!(
        c.stats.spurious_writer_wakeups > c.stats.writer_blocks / 2,
        "{c:?}"
    );
    assert_eq!((c.stats.sends, c.stats.recvs), (200, 200));
    // A slow writer: the reader waits on the empty pipe and never reads what is not there.
    let r = run_json("smp8", &pipe_pair(300, 50, 1), S, &[]);
    let c = &r.channels[0];
    assert!(c.stats.reader_blocks > 150, "{c:?}");
    assert_eq!(c.stats.writer_blocks, 0);
    assert!(c.stats.max_queued <= 100, "{c:?}");
    assert_eq!(c.stats.received_bytes, 200 * 100);
}

#[test]
fn hackbench_is_deterministic() {
    let a = hackbench_args(1, 3, false);
    let one = serde_json::to_string(&hackbench_run(&a, &[])).unwrap();
    let two = serde_json::to_string(&hackbench_run(&a, &[])).unwrap();
    assert_eq!(one, two);
}

fn cyclictest_args(policy: &str, duration: u64) -> CyclictestArgs {
    CyclictestArgs {
        policy: policy.into(),
        priority: None,
        interval: 1000,
        threads: 1,
        affinity: false,
        duration,
        laptop: false,
        latency_nice: None,
    }
}

/// cyclictest with a hackbench of `groups` groups beside it (seed 002's experiment).
fn cyclictest_beside_hackbench(policy: &str, groups: u32) -> Results {
    let mut w = cyclictest(&cyclictest_args(policy, 1)).unwrap();
    let h = hackbench(&hackbench_args(groups, 40, false));
    for (k, v) in h["tasks"].as_object().unwrap() {
        w["tasks"][k] = v.clone();
    }
    w["global"]["channels"] = h["global"]["channels"].clone();
    // Hackbench is still running at the end of the window.
    let r = run_json("smp8", &w.to_string(), 40 * MS, &[]);
    assert_eq!(
        r.workload_metrics.as_ref().unwrap()["generator"],
        "cyclictest"
    );
    assert!(r
        .tasks
        .iter()
        .any(|t| t.name.starts_with("receiver") && !t.exited));
    r
}

#[test]
fn fifo_cyclictest_is_not_delayed_by_fair_load() {
    // Alone on an idle CPU the thread runs as soon as it is woken: only the idle exit and
    // the kernel's wake-up path.
    let path_us = common::wake_path_bound_ns("smp8", 0) as f64 / 1000.0;
    let alone = run_json(
        "smp8",
        &cyclictest(&cyclictest_args("fifo", 1)).unwrap().to_string(),
        200 * MS,
        &[],
    );
    assert!(metric(&alone, "max_us") <= path_us);
    let other = cyclictest_beside_hackbench("other", 4);
    let fifo = cyclictest_beside_hackbench("fifo", 4);
    // SCHED_FIFO preempts the hackbench tasks at once; SCHED_OTHER waits its turn.
    assert!(
        metric(&fifo, "max_us") <= path_us,
        "{}",
        metric(&fifo, "max_us")
    );
    let waited_us = |r: &Results| {
        let t = common::task(r, "cyclictest-0");
        t.latency_split_ns.runqueue_ns as f64 / t.wakeups.max(1) as f64 / 1000.0
    };
    assert!(
        waited_us(&fifo) < 1.0,
        "fifo waited {} µs",
        waited_us(&fifo)
    );
    assert!(
        waited_us(&other) > 10.0,
        "other waited {} µs",
        waited_us(&other)
    );
}

#[test]
fn cyclictest_histogram_counts_every_timer_wakeup() {
    let r = cyclictest_beside_hackbench("other", 4);
    let w = r.workload_metrics.as_ref().unwrap();
    let t = common::task(&r, "cyclictest-0");
    // Every wake-up of the thread is a timer expiry, and each is measured once the thread
    // runs: the last may still be leaving its CPU's idle state when the window closes.
    let count = metric(&r, "count") as u64;
    assert!(
        count == t.wakeups || count + 1 == t.wakeups,
        "{count} vs {}",
        t.wakeups
    );
    assert_eq!(count, t.activations);
    assert_eq!(w["threads"][0]["cycles"].as_u64(), Some(count));
    let order = ["min_us", "p50_us", "p90_us", "p95_us", "p99_us", "max_us"];
    for pair in order.windows(2) {
        assert!(metric(&r, pair[0]) <= metric(&r, pair[1]), "{w}");
    }
    assert!(metric(&r, "min_us") <= metric(&r, "avg_us"));
    assert!(metric(&r, "avg_us") <= metric(&r, "max_us"));
}

fn schbench_run(workers: u32) -> Results {
    let a = SchbenchArgs {
        message_threads: 1,
        workers,
        runtime: 1,
        sleeptime: 10_000,
        cputime: 10_000,
        latency_nice: None,
    };
    run_json("smp8", &schbench(&a).to_string(), 300 * MS, &[])
}

#[test]
fn schbench_latency_grows_when_workers_outnumber_cpus() {
    let few = schbench_run(4);
    let many = schbench_run(32);
    for r in [&few, &many] {
        assert!(metric(r, "count") > 0.0);
        let order = ["p50_us", "p90_us", "p99_us", "max_us"];
        for pair in order.windows(2) {
            assert!(metric(r, pair[0]) <= metric(r, pair[1]));
        }
    }
    // 4 workers on 8 CPUs find an idle CPU; 32 thinking 10 ms per round queue behind each
    // other.
    assert!(
        metric(&many, "p99_us") > 10.0 * metric(&few, "p99_us").max(1.0),
        "p99 {} µs with 32 workers, {} µs with 4",
        metric(&many, "p99_us"),
        metric(&few, "p99_us")
    );
}

fn netperf_run(test: &str, size: u64, sets: &[&str]) -> Results {
    let a = NetperfArgs {
        test: test.into(),
        size,
        duration: 1,
        sender_cpu: None,
        receiver_cpu: None,
        uclamp_min: None,
    };
    run_json("x86-4c8t", &netperf(&a).to_string(), 20 * MS, sets)
}

#[test]
fn netperf_throughput_grows_with_size_and_falls_with_cost() {
    for test in ["UDP_STREAM", "TCP_STREAM"] {
        let sizes = [64, 1024, 16384].map(|s| metric(&netperf_run(test, s, &[]), "mbit_per_sec"));
        assert!(
            sizes[0] < sizes[1] && sizes[1] < sizes[2],
            "{test}: {sizes:?}"
        );
    }
    let base = metric(&netperf_run("UDP_STREAM", 64, &[]), "mbit_per_sec");
    let dear = metric(
        &netperf_run("UDP_STREAM", 64, &["cost.net_rx_ns=12000"]),
        "mbit_per_sec",
    );
    assert!(dear < base, "{dear} vs {base}");
    // TCP coalesces small sends into segments; UDP sends a packet each.
    let tcp = metric(&netperf_run("TCP_STREAM", 64, &[]), "mbit_per_sec");
    assert!(tcp > 4.0 * base, "tcp {tcp}, udp {base}");
}

#[test]
fn udp_datagrams_are_received_dropped_or_still_queued() {
    // A receiver that gets little CPU: the sender fills its buffer and datagrams drop.
    let r = run_json(
        "smp8",
        r#"{"global": {"channels": {"c": {"kind": "udp", "capacity": 4096}}},
            "tasks": {"s": {"loop": -1, "cpus": [0], "send": {"channel": "c", "bytes": 1024}},
                      "r": {"loop": -1, "cpus": [1], "recv": {"channel": "c"}, "run": 100}}}"#,
        20 * MS,
        &[],
    );
    let c = &r.channels[0];
    assert!(c.stats.drops > 0);
    assert_eq!(c.stats.sends, c.stats.recvs + c.queued / 1024);
    assert!(c.stats.max_queued <= 4096);
}

fn frames_run(background: u32, background_us: u64, sets: &[&str]) -> Results {
    let a = FramesArgs {
        period: 16_666,
        frame_us: 8_000,
        background,
        background_us,
        background_period: 37_777,
        duration: 1,
        latency_nice: None,
    };
    run_json("smp8", &frames(&a).to_string(), 500 * MS, sets)
}

#[test]
fn frames_miss_only_when_the_cpus_are_saturated() {
    let idle = frames_run(0, 0, &["cpufreq.governor=performance"]);
    assert!(metric(&idle, "frames") >= 28.0);
    assert_eq!(metric(&idle, "missed_frames"), 0.0);
    // An 8 ms frame always fits its 16.6 ms period on a free CPU.
    assert!(metric(&idle, "max_us") < 16_666.0);
    // Sixteen tasks wanting 30 ms of every 37.8 ms on 8 CPUs: the frame gets a share.
    let busy = frames_run(16, 30_000, &["cpufreq.governor=performance"]);
    assert!(metric(&busy, "missed_frames") > 0.0);
    assert!(metric(&busy, "p99_us") > 16_666.0);
}

#[test]
fn a_bad_generator_argument_is_an_input_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["gen", "cyclictest", "--policy", "fifo", "--priority", "0"])
        .output()
        .expect("schedlab runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--priority") && err.contains("found 0"),
        "{err}"
    );
}

//! `schedlab host calibrate` and `host validate`, the parts that do not need the machine:
//! the benchmarks' outputs read from text they printed on this project's VM
//! (tests/data/host/output), the table and its summary line, and the fit being the same given
//! the same measured medians. One live test runs the tools briefly and reads their output; it
//! skips visibly where they are missing and asserts no host timing.

use crate::common::skip;
use crate::host::{data, platform_of, schedlab};
use schedlab::platform::load_file;
use schedlab::report::validation::{render, Noise, Row, Spread, Validation};
use schedlab_host::calibrate::{fit_scale, Spec};
use schedlab_host::measure::{
    cyclictest_numbers, hackbench_s, have, perf_pipe_us, perf_total_s, run, words,
};
use std::path::PathBuf;

fn output(name: &str) -> String {
    std::fs::read_to_string(data("output").join(name)).unwrap()
}

#[test]
fn perf_and_hackbench_numbers_are_the_ones_they_printed() {
    assert_eq!(perf_pipe_us(&output("perf-pipe-threads.txt")), Some(9.3947));
    assert_eq!(
        perf_pipe_us(&output("perf-pipe-processes.txt")),
        perf_pipe_us(
            output("perf-pipe-processes.txt")
                .lines()
                .find(|l| l.contains("usecs/op"))
                .unwrap()
        )
    );
    assert_eq!(perf_total_s(&output("perf-messaging.txt")), Some(0.627));
    assert_eq!(
        hackbench_s(&output("hackbench-pipes-threads.txt")),
        Some(0.083)
    );
    let sp = output("hackbench-sockets-processes.txt");
    let line = sp.lines().find(|l| l.starts_with("Time: ")).unwrap();
    assert_eq!(hackbench_s(&sp), line[6..].trim().parse().ok());
    // Output without the number is None (validate then says the command printed none).
    assert_eq!(perf_pipe_us(&output("hackbench-pipes-threads.txt")), None);
    assert_eq!(hackbench_s(&output("perf-messaging.txt")), None);
}

/// (bucket µs, samples) of a cyclictest `-h` histogram, and its overflows.
fn histogram(out: &str) -> (Vec<(u64, u64)>, u64) {
    let b = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (a, c) = l.split_once(' ')?;
            Some((a.parse().ok()?, c.trim().parse().ok()?))
        })
        .collect();
    let over = out
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows: "))
        .unwrap()
        .parse()
        .unwrap();
    (b, over)
}

#[test]
fn cyclictest_min_max_are_its_own_and_percentiles_split_its_histogram() {
    for (file, min, max) in [
        ("cyclictest-other.txt", 33.0, 4036.0),
        ("cyclictest-fifo.txt", 23.0, 1390.0),
    ] {
        let out = output(file);
        let [lo, p50, p99, hi] = cyclictest_numbers(&out).unwrap();
        assert_eq!((lo, hi), (min, max), "{file}");
        assert!(lo <= p50 && p50 <= p99 && p99 <= hi, "{file}");
        // A percentile is the first bucket at or past its share of the samples, overflows
        // (beyond the last bucket) counted.
        let (buckets, over) = histogram(&out);
        let n: u64 = buckets.iter().map(|b| b.1).sum::<u64>() + over;
        for (q, v) in [(0.5, p50), (0.99, p99)] {
            let below: u64 = buckets
                .iter()
                .filter(|b| (b.0 as f64) < v)
                .map(|b| b.1)
                .sum();
            let upto: u64 = buckets
                .iter()
                .filter(|b| b.0 as f64 <= v)
                .map(|b| b.1)
                .sum();
            let rank = (q * n as f64).ceil() as u64;
            assert!(below < rank, "{file} p{q}");
            assert!(upto >= rank || v == hi, "{file} p{q}");
        }
    }
    assert_eq!(cyclictest_numbers(&output("perf-messaging.txt")), None);
}

fn row(name: &str, real: &[f64], sim: &[f64]) -> Row {
    Row {
        family: "hackbench".into(),
        name: name.into(),
        real: Spread::of(real),
        sim: Spread::of(sim),
        fit: false,
        not_run: None,
        noise: Noise {
            steal_ms: 3.0,
            others_pct: 12.0,
        },
    }
}

#[test]
fn the_table_counts_rows_within_25_percent_and_ends_with_the_summary() {
    let mut fit = row("fitted", &[5.0], &[5.0]);
    fit.fit = true;
    let v = Validation {
        platform: "p.toml".into(),
        runs: 3,
        rows: vec![
            row("at +25%", &[4.0, 3.0, 5.0], &[5.0, 5.0, 5.0]),
            row("at -25%", &[4.0], &[3.0]),
            row("beyond", &[4.0], &[5.2]),
            row("both zero", &[0.0], &[0.0]),
            fit,
            Row::not_run("cyclictest", "all", "cyclictest is not installed"),
        ],
        notes: vec!["a note".into()],
    };
    // Medians: 4 → 5 is +25%, 4 → 3 is −25% (both within), 5.2 is not; a fit and a row
    // that did not run are shown, not counted.
    assert_eq!(v.score(), (3, 4));
    let text = render(&v);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("p.toml") && lines[0].contains("3 run(s)"));
    for col in ["machine", "schedlab", "ratio", "±25%", "steal ms", "others"] {
        assert!(lines[1].contains(col), "{col}: {}", lines[1]);
    }
    let find = |name: &str| *lines.iter().find(|l| l.contains(name)).unwrap();
    assert!(find("at +25%").contains("4.00 (3.00..5.00)"));
    assert!(find("at +25%").contains(" 1.25 ") && find("at +25%").contains(" yes "));
    assert!(find("beyond").contains(" 1.30 ") && find("beyond").contains(" no "));
    assert!(find("fitted").contains(" fit "));
    assert!(find("cyclictest all").contains("could not run: cyclictest is not installed"));
    assert_eq!(lines[lines.len() - 2], "note: a note");
    assert_eq!(lines[lines.len() - 1], "host: 3 of 4 rows within 25%");
}

#[test]
fn the_scale_fit_is_the_same_for_the_same_median_and_slower_for_a_slower_machine() {
    let h = schedlab_host::platform::read(&data("xeon-vm")).unwrap();
    let spec = Spec {
        pipe_sim_ns: 20_000_000,
        ..Spec::default()
    };
    let a = fit_scale(&h.platform, 9.39, &spec);
    assert_eq!(a, fit_scale(&h.platform, 9.39, &spec));
    assert!(a.reached, "{a:?}");
    assert!((a.simulated / 9.39 - 1.0).abs() < 0.01, "{a:?}");
    // A round trip twice as slow is a machine doing less work per cycle.
    let slow = fit_scale(&h.platform, 18.78, &spec);
    assert!(slow.reached && slow.value < a.value, "{slow:?} {a:?}");
}

#[test]
fn calibrate_writes_the_same_file_for_the_same_medians_each_cost_naming_its_measurement() {
    let dir = tempfile::tempdir().unwrap();
    platform_of(&data("xeon-vm"), dir.path());
    let plat = dir.path().join("p.toml");
    let files: Vec<PathBuf> = (0..2)
        .map(|i| dir.path().join(format!("c{i}.toml")))
        .collect();
    std::thread::scope(|s| {
        for f in &files {
            let plat = &plat;
            s.spawn(move || {
                let out = schedlab(&[
                    "host",
                    "calibrate",
                    "--platform",
                    plat.to_str().unwrap(),
                    "--measured-pipe-us",
                    "9.39",
                    "--measured-messaging-s",
                    "0.627",
                    "--measured-messaging-pipe-s",
                    "0.30",
                    "--out",
                    f.to_str().unwrap(),
                ]);
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            });
        }
    });
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(text, std::fs::read_to_string(&files[1]).unwrap());
    let p = load_file(&files[0]).unwrap();
    // Each IPC operation is fitted on its own benchmark: sockets on messaging, the pipe's on
    // messaging over pipes; the file holds the value it read back.
    for (key, bench, value) in [
        ("unix_op_ns", "messaging", p.costs.ipc.unix_op_ns),
        ("pipe_op_ns", "messaging -p", p.costs.ipc.pipe_op_ns),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap();
        assert!(
            line.ends_with(&format!("# fitted on perf bench sched {bench}")),
            "{line}"
        );
        assert!(line.starts_with(&format!("{key} = {value} ")), "{line}");
    }
    // The scale's benchmark runs both threads on one CPU (the snapshot's last), and so
    // does its simulation: the paths alone, no IPI or idle exit.
    assert!(text.contains("fitted on `taskset -c 1 perf bench sched pipe -T"));
    assert!(text.contains("`schedlab gen pipe --cpu 1` simulates"));
    // Every other key says where it comes from: its A53 cycles, or its wall time.
    let costs = text.split("[costs]\n").nth(1).unwrap();
    for l in costs.lines().take_while(|l| !l.starts_with("# (end")) {
        if l.starts_with('#') {
            continue;
        }
        assert!(
            l.contains("A53 cycles") || l.contains("wall time") || l.contains("fitted on"),
            "{l}"
        );
    }
    // A measurement that is not a positive number is one line, exit 2.
    let out = schedlab(&["host", "calibrate", "--measured-pipe-us=0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--measured-pipe-us: expected a positive number, found 0"));
}

#[test]
fn the_host_tools_print_what_validate_reads() {
    let tools = ["perf", "hackbench", "cyclictest"];
    if let Some(t) = tools.iter().find(|t| !have(t)) {
        skip(&format!(
            "{t} is not installed (apt-get install linux-perf rt-tests)"
        ));
        return;
    }
    let read = |cmd: &str| run(&words(cmd)).map(|(out, _)| out);
    for cmd in [
        "perf bench sched pipe -T -l 200",
        "taskset -c 0 perf bench sched pipe -T -l 200",
    ] {
        let pipe = read(cmd).unwrap();
        assert!(perf_pipe_us(&pipe).is_some_and(|v| v > 0.0), "{pipe}");
    }
    let hb = read("hackbench -g 1 -l 5").unwrap();
    assert!(hackbench_s(&hb).is_some(), "{hb}");
    let ct = read("cyclictest -q -l 20 -i 1000 -h 100").unwrap();
    let [lo, _, _, hi] = cyclictest_numbers(&ct).expect(&ct);
    assert!(lo <= hi);
}

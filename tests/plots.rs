//! `--plot DIR`: the run's four SVGs and compare's bars are written without any external
//! program, are not empty, and carry their axis titles (with units) and legends.

mod common;
use common::*;
use schedlab::Outputs;

fn svg(dir: &std::path::Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(text.starts_with("<svg"), "{name}");
    assert!(text.contains("width=\"1200\""), "{name} is 1200 px wide");
    text
}

/// The texts of an SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().to_string())
        })
        .collect()
}

#[test]
fn a_run_draws_frequency_utilization_residency_and_latency() {
    let dir = tempfile::tempdir().unwrap();
    let out = Outputs {
        plot: Some(dir.path().join("plots")),
        ..Outputs::default()
    };
    // The default workload: periodic fair and FIFO tasks on juno-r0 (two clusters).
    let json = include_str!("../workloads/default.json");
    let r = run_full("juno-r0", json, S, &[], 0, &out);
    let p = dir.path().join("plots");
    let freq = svg(&p, "frequency.svg");
    assert!(freq.contains("time (s)") && freq.contains("frequency (MHz)"));
    assert!(
        freq.contains("CPU0") && freq.contains("CPU5"),
        "a legend entry per CPU"
    );
    let util = svg(&p, "util.svg");
    assert!(util.contains("utilization (0..1024)"));
    let gantt = svg(&p, "residency.svg");
    assert!(gantt.contains("CPU"));
    let cdf = svg(&p, "latency_cdf.svg");
    assert!(cdf.contains("wakeup latency (µs, log scale"));
    assert!(cdf.contains("all tasks"));
    // Every task that ran is in the residency legend; every fair task (PELT tracks fair
    // entities, so not the FIFO audio task) has a utilization line.
    let (gantt, util) = (texts(&gantt), texts(&util));
    for t in r.tasks.iter().filter(|t| t.runtime_ns > 0) {
        assert!(
            gantt.contains(&t.name),
            "{} missing from the Gantt legend",
            t.name
        );
        let fair = t.policy == "SCHED_OTHER";
        assert_eq!(
            util.contains(&t.name),
            fair,
            "{} in the util legend",
            t.name
        );
    }
}

#[test]
fn plots_do_not_change_the_results_and_go_beside_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let json = include_str!("../workloads/default.json");
    let plain = run_full("juno-r0", json, S / 2, &[], 0, &Outputs::default());
    let out = Outputs {
        plot: Some(dir.path().join("p")),
        trace: Some(dir.path().join("t.txt")),
        ..Outputs::default()
    };
    let both = run_full("juno-r0", json, S / 2, &[], 0, &out);
    let strip = |r: &schedlab::report::Results| {
        let mut v = serde_json::to_value(r).unwrap();
        v["sim_events"] = serde_json::Value::Null;
        v["sim_events_stale"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&plain), strip(&both));
    // The trace holds only what it was asked for: no load-tracking events the plots used.
    let trace = std::fs::read_to_string(dir.path().join("t.txt")).unwrap();
    assert!(trace.contains("sched_switch") && !trace.contains("sched_pelt_se"));
    svg(&dir.path().join("p"), "util.svg");
}

#[test]
fn compare_draws_bars_with_error_bars() {
    use schedlab::experiment::{run_sides, Experiment};
    let text = "platform = \"rk3399\"\nduration = \"300ms\"\n[[workload]]\ngen = \"fio\"\n";
    let base = Experiment::parse(text, "base.toml", std::path::Path::new(".")).unwrap();
    let mut off = base.clone();
    off.set("cpufreq.iowait_boost=false", "test").unwrap();
    off.name = "no-boost".into();
    let sides = [base, off];
    let results = run_sides(&sides, &[0, 1, 2]).unwrap();
    let named: Vec<_> = sides.iter().map(|s| s.name.clone()).zip(results).collect();
    let c = schedlab::report::compare::compare(&named);
    let dir = tempfile::tempdir().unwrap();
    schedlab::report::plot::compare_bars(&c, dir.path()).unwrap();
    let bars = svg(dir.path(), "compare.svg");
    let labels = texts(&bars);
    for l in [
        "iops (Hmean ± stddev)",
        "iops (I/O per second)",
        "base",
        "no-boost",
    ] {
        assert!(labels.iter().any(|t| t == l), "{l} missing from {labels:?}");
    }
    // The difference to the base is written over the bar, between * when significant.
    assert!(
        labels
            .iter()
            .any(|t| t.starts_with("*-") && t.ends_with("%*")),
        "{labels:?}"
    );
    // A panel per metric that is not zero everywhere, each with a bar per side (and a
    // background).
    let drawn = c
        .metrics
        .iter()
        .filter(|m| m.means.iter().any(|&x| x != 0.0))
        .count();
    assert!(drawn >= 2, "iops and energy at least");
    assert_eq!(bars.matches("<rect").count(), 1 + 2 * drawn);
    assert!(
        !labels.iter().any(|t| t.starts_with("deadline_misses")),
        "{labels:?}"
    );
}

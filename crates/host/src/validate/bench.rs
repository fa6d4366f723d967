//! The benchmarks of rt-tests and perf on the machine and their schedlab generators:
//! hackbench (sockets and pipes, threads and processes, 1–8 groups: its `Time:`),
//! `perf bench sched pipe` (threads and processes: µs per round trip) and cyclictest
//! (SCHED_OTHER and FIFO, idle and beside a hackbench loop: min, p50, p99, max).

use super::{Item, Opts, FAMILY_CYCLICTEST, FAMILY_HACKBENCH, FAMILY_PIPE};
use crate::measure::{self, words, Load, Runs};
use schedlab::experiment::Experiment;
use schedlab::report::validation::Row;
use schedlab::Outputs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// An experiment of generator workloads (`(name, gen, args)`, args as a TOML inline table's
/// body) on the platform file, for `duration` if given.
fn experiment(
    platform: &Path,
    duration: Option<&str>,
    workloads: &[(&str, &str, String)],
) -> Result<Experiment, String> {
    let mut t = format!(
        "name = \"host-validate\"\nplatform = {:?}\n",
        platform.display().to_string()
    );
    if let Some(d) = duration {
        t.push_str(&format!("duration = \"{d}\"\n"));
    }
    for (name, gen, args) in workloads {
        t.push_str(&format!(
            "[[workload]]\nname = \"{name}\"\ngen = \"{gen}\"\nargs = {{ {args} }}\n"
        ));
    }
    Experiment::parse(&t, "host validate", Path::new("")).map_err(|e| e.to_string())
}

/// Simulate `exp` with seeds 0..seeds and read each metric (a path into the generator
/// metrics: `["ct", "p50_us"]`) scaled by its factor.
fn simulate(
    exp: &Experiment,
    seeds: usize,
    metrics: &[(&[&str], f64)],
) -> Result<Vec<Vec<f64>>, String> {
    let mut out = vec![Vec::new(); metrics.len()];
    for seed in 0..seeds as u64 {
        let r = exp
            .run(seed, true, &Outputs::default())
            .map_err(|e| e.to_string())?;
        let m = r.workload_metrics.unwrap_or_default();
        for (i, (path, scale)) in metrics.iter().enumerate() {
            let v = path
                .iter()
                .try_fold(&m, |v, k| v.get(k))
                .and_then(|v| v.as_f64());
            if let Some(v) = v {
                out[i].push(v * scale);
            }
        }
    }
    Ok(out)
}

/// Messages each sender writes in a hackbench of `groups` (the same messages in all: about
/// 0.3 s on a 2-CPU VM, 0.05 s with --quick).
fn hackbench_loops(quick: bool, groups: u32) -> u32 {
    let per_group = if quick { 100 } else { 800 };
    (per_group / groups).max(5)
}

/// The simulation of one measured row, queued.
#[allow(clippy::too_many_arguments)] // a row's fields, as the tables name them
fn sim_row(
    o: &Opts,
    family: &'static str,
    name: String,
    runs: Runs,
    fit: bool,
    workloads: Vec<(&'static str, &'static str, String)>,
    metric: Vec<&'static str>,
    scale: f64,
    duration: Option<String>,
) -> Item {
    let platform = o.platform.clone();
    let seeds = o.runs;
    Item::sim(move || {
        let sim = experiment(&platform, duration.as_deref(), &workloads)
            .and_then(|e| simulate(&e, seeds, &[(&metric, scale)]));
        let mut row = match sim {
            Ok(v) => super::row(family, &name, &runs.values, &v[0]),
            Err(e) => Row::not_run(family, &name, format!("schedlab: {e}")),
        };
        row.fit = fit;
        row.noise = runs.noise();
        vec![row]
    })
}

/// hackbench (rt-tests): sockets and pipes, processes and threads, 1, 2, 4 and 8 groups.
pub fn hackbench(o: &Opts) -> Vec<Item> {
    if !measure::have("hackbench") {
        return vec![Item::rows(Row::not_run(
            FAMILY_HACKBENCH,
            "all",
            "hackbench is not installed (Debian: apt-get install rt-tests)",
        ))];
    }
    let mut items = Vec::new();
    for pipe in [false, true] {
        for threads in [false, true] {
            for groups in [1, 2, 4, 8] {
                let loops = hackbench_loops(o.quick, groups);
                let cmd = format!(
                    "hackbench{}{} -g {groups} -l {loops}",
                    if pipe { " -p" } else { "" },
                    if threads { " -T" } else { "" }
                );
                let name = format!("`{cmd}` s");
                (o.log)(&format!("hackbench: {cmd}"));
                match measure::runs_of(&words(&cmd), o.runs, "Time:", measure::hackbench_s) {
                    Ok(runs) => {
                        let args = format!("groups = {groups}, loops = {loops}, pipe = {pipe}, threads = {threads}");
                        items.push(sim_row(
                            o,
                            FAMILY_HACKBENCH,
                            name,
                            runs,
                            false,
                            vec![("hb", "hackbench", args)],
                            vec!["completion_ns"],
                            1e-9,
                            None,
                        ));
                    }
                    Err(e) => items.push(Item::rows(Row::not_run(FAMILY_HACKBENCH, &name, e))),
                }
            }
        }
    }
    items
}

/// Round trips of `perf bench sched pipe` (`-l`): the calibration's 50 000, 10 000 with
/// --quick.
pub fn pipe_loops(quick: bool) -> u64 {
    if quick {
        10_000
    } else {
        50_000
    }
}

/// `perf bench sched pipe`, threads (`-T`) and processes, both on one CPU (the
/// calibration's measurement is threads on one CPU) and where the kernel places them.
pub fn perf_pipe(o: &Opts) -> Vec<Item> {
    if !measure::have("perf") {
        return vec![Item::rows(Row::not_run(
            FAMILY_PIPE,
            "all",
            "perf is not installed (Debian: apt-get install linux-perf)",
        ))];
    }
    let loops = pipe_loops(o.quick);
    let sim_ms = if o.quick { 50 } else { 200 };
    let mut items = Vec::new();
    for pinned in [true, false] {
        for threads in [true, false] {
            let cmd = format!(
                "{}perf bench sched pipe{} -l {loops}",
                if pinned {
                    format!("taskset -c {} ", o.pipe_cpu)
                } else {
                    String::new()
                },
                if threads { " -T" } else { "" }
            );
            let name = format!("`{cmd}` µs/op");
            (o.log)(&format!("perf: {cmd}"));
            match measure::runs_of(&words(&cmd), o.runs, "usecs/op", measure::perf_pipe_us) {
                Ok(runs) => {
                    let mut args = format!("runtime = 1, processes = {}", !threads);
                    if pinned {
                        args += &format!(", cpu = {}", o.pipe_cpu);
                    }
                    items.push(sim_row(
                        o,
                        FAMILY_PIPE,
                        name,
                        runs,
                        pinned && threads && o.fitted,
                        vec![("pipe", "pipe", args)],
                        vec!["usecs_per_op"],
                        1.0,
                        Some(format!("{sim_ms}ms")),
                    ));
                }
                Err(e) => items.push(Item::rows(Row::not_run(FAMILY_PIPE, &name, e))),
            }
        }
    }
    items
}

/// The background of the loaded cyclictest rows: hackbench runs one after another.
const BACKGROUND: &str = "hackbench -g 2 -l 1000";

/// cyclictest SCHED_OTHER and FIFO, idle and beside a hackbench loop.
pub fn cyclictest(o: &Opts) -> Vec<Item> {
    if !measure::have("cyclictest") {
        return vec![Item::rows(Row::not_run(
            FAMILY_CYCLICTEST,
            "all",
            "cyclictest is not installed (Debian: apt-get install rt-tests)",
        ))];
    }
    let d = if o.quick { 1 } else { 5 };
    let mut items = Vec::new();
    for (policy, flags, gen_args) in [
        ("other", "--policy other", "policy = \"other\""),
        ("fifo", "-p 50", "policy = \"fifo\", priority = 50"),
    ] {
        for loaded in [false, true] {
            let cmd = format!("cyclictest -m -q -i 1000 -D {d} {flags} -h 10000");
            let what = if loaded {
                format!("`{cmd}` beside `{BACKGROUND}` in a loop")
            } else {
                format!("`{cmd}`")
            };
            (o.log)(&format!("cyclictest: {what}"));
            let label = move |m: &str| {
                format!(
                    "{policy}{} {m} µs",
                    if loaded { " + hackbench" } else { "" }
                )
            };
            let mut runs = [
                Runs::default(),
                Runs::default(),
                Runs::default(),
                Runs::default(),
            ];
            let mut failed = None;
            for _ in 0..o.runs {
                let r = if loaded {
                    beside_background(&words(&cmd))
                } else {
                    measure::run(&words(&cmd))
                };
                match r.and_then(|(out, load)| {
                    measure::cyclictest_numbers(&out)
                        .map(|n| (n, load))
                        .ok_or_else(|| format!("`{cmd}` printed no histogram"))
                }) {
                    Ok((n, load)) => {
                        for (i, v) in n.iter().enumerate() {
                            runs[i].values.push(*v);
                            runs[i].loads.push(load);
                        }
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                items.push(Item::rows(Row::not_run(
                    FAMILY_CYCLICTEST,
                    &label("all"),
                    e,
                )));
                continue;
            }
            let platform = o.platform.clone();
            let seeds = o.runs;
            let ct_args = format!("{gen_args}, interval = 1000, duration = {d}");
            items.push(Item::sim(move || {
                let mut w = vec![("ct", "cyclictest", ct_args)];
                if loaded {
                    w.push(("hb", "hackbench", "groups = 2, loops = 1000000".into()));
                }
                // The run ends with the measurement (the hackbench beside it would not).
                let dur = format!("{}ms", d * 1000 + 10);
                let metric = |m: &'static str| -> Vec<&'static str> {
                    if loaded {
                        vec!["ct", m]
                    } else {
                        vec![m]
                    }
                };
                let keys = ["min_us", "p50_us", "p99_us", "max_us"];
                let paths: Vec<Vec<&str>> = keys.iter().map(|k| metric(k)).collect();
                let ms: Vec<(&[&str], f64)> = paths.iter().map(|p| (p.as_slice(), 1.0)).collect();
                let sim =
                    experiment(&platform, Some(&dur), &w).and_then(|e| simulate(&e, seeds, &ms));
                ["min", "p50", "p99", "max"]
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        let mut row = match &sim {
                            Ok(v) => {
                                super::row(FAMILY_CYCLICTEST, &label(m), &runs[i].values, &v[i])
                            }
                            Err(e) => {
                                Row::not_run(FAMILY_CYCLICTEST, &label(m), format!("schedlab: {e}"))
                            }
                        };
                        row.noise = runs[i].noise();
                        row
                    })
                    .collect()
            }));
        }
    }
    items
}

/// Run `cmd` while `BACKGROUND` runs again and again beside it.
fn beside_background(cmd: &[String]) -> Result<(String, Load), String> {
    let stop = AtomicBool::new(false);
    let bg = words(BACKGROUND);
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                measure::run(&bg)?;
            }
            Ok(())
        });
        // Let the first hackbench start.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let r = measure::run(cmd);
        stop.store(true, Ordering::Relaxed);
        let bg = h
            .join()
            .unwrap_or_else(|_| Err("the background loop panicked".into()));
        bg.and(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hackbench_sends_about_as_many_messages_whatever_the_groups() {
        for q in [false, true] {
            let m: Vec<u32> = [1, 2, 4, 8]
                .iter()
                .map(|&g| g * hackbench_loops(q, g))
                .collect();
            assert!(m.iter().all(|&x| x * 10 >= m[0] * 9 && x <= m[0]), "{m:?}");
        }
    }
}

//! Trace versus replay: per task its CPU time, wake-ups and mean wake-up latency in the trace
//! and in the replay; per CPU its busy time, mean frequency and active energy (the same
//! estimate on both sides: busy time at each frequency × that OPP's power, from the replay's
//! own trace); and how the extraction attributed the trace's wake-ups.

use super::extract::Extraction;
use super::timeline::{self, CpuInfo, TaskTrace, Timeline, Window};
use super::Loaded;
use crate::experiment::Experiment;
use crate::platform::Platform;
use crate::report::Results;
use crate::{Error, Outputs};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub task: String,
    pub pid: u32,
    pub trace_runtime_ns: u64,
    pub replay_runtime_ns: u64,
    /// CPU time × the capacity it ran at (`capacity_orig × f / f_max`, over 1024): ns of
    /// work at capacity 1024, kernel paths included. What the extraction gives back; the
    /// CPU time it takes depends on where and how fast the replay runs it.
    pub trace_work_ns: u64,
    pub replay_work_ns: u64,
    pub trace_wakeups: u64,
    pub replay_wakeups: u64,
    /// None where the trace cannot give it: no wake-up of the task was logged (a trace
    /// without `sched_waking`/`sched_wakeup`).
    pub trace_latency_mean_ns: Option<u64>,
    pub replay_latency_mean_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuRow {
    pub cpu: usize,
    pub trace_busy_ns: u64,
    pub replay_busy_ns: u64,
    pub trace_mean_khz: u64,
    pub replay_mean_khz: u64,
    /// Busy time × OPP power, mJ; None where the platform's power is unknown.
    pub trace_active_mj: Option<f64>,
    pub replay_active_mj: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Attribution {
    pub task: u64,
    pub timer: u64,
    pub interrupt: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub trace: String,
    pub platform: String,
    /// What the traced platform was made of (a plat_info.yml on a preset) and what the
    /// trace left to assumption, a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub seed: u64,
    pub tasks: Vec<TaskRow>,
    pub cpus: Vec<CpuRow>,
    pub attribution: Attribution,
    /// Who woke whom in the trace, as the replay's channels: "waker>wakee" → count.
    pub dependencies: BTreeMap<String, u64>,
    /// The replay's energy as the simulator counts it (CPUs and clusters, idle states too).
    pub replay_energy_mj: f64,
    #[serde(skip)]
    pub results: Option<Box<Results>>,
}

/// Run the extracted workload and compare; the replay's trace goes to `trace_out` if given.
/// `platform`, if given, replaces the experiment's (a plat_info.yml's on its preset).
pub fn run(
    l: &Loaded,
    ext: &Extraction,
    exp: &Experiment,
    seed: u64,
    trace_out: Option<&Path>,
    platform: Option<&Platform>,
) -> Result<Report, Error> {
    let temp;
    let path = match trace_out {
        Some(p) => p,
        None => {
            temp = std::env::temp_dir().join(format!(
                "schedlab-replay-{}-{}.txt",
                std::process::id(),
                TEMP.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            &temp
        }
    };
    let outputs = Outputs {
        trace: Some(path.to_path_buf()),
        ..Outputs::default()
    };
    let results = match platform {
        None => exp.run(seed, true, &outputs),
        Some(p) => exp.build().map_err(Error::from).and_then(|(_, variant)| {
            crate::simulate(
                crate::Run {
                    platform: p.clone(),
                    workload: exp.workload.clone(),
                    variant,
                    duration_ns: exp.duration_ns,
                    seed,
                    reproducible: true,
                },
                &outputs,
            )
        }),
    };
    let text = std::fs::read_to_string(path);
    if trace_out.is_none() {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(crate::plat_info_path(path));
    }
    let results = results?;
    let text = text.map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let platform = match platform {
        Some(p) => p.clone(),
        None => exp.build()?.0,
    };
    let replay_tl = timeline::read(
        &text,
        &path.display().to_string(),
        &CpuInfo::from_platform(&platform),
        Window::default(),
    )?;
    let trace_platform = match &l.derived {
        Some(d) => Some(d.clone()),
        None => l
            .platform
            .as_deref()
            .and_then(|p| Platform::resolve(p).ok()),
    };
    Ok(compare(
        l,
        ext,
        results,
        &replay_tl,
        trace_platform.as_ref(),
        &platform,
        seed,
    ))
}

static TEMP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn compare(
    l: &Loaded,
    ext: &Extraction,
    results: Results,
    replay: &Timeline,
    trace_platform: Option<&Platform>,
    platform: &Platform,
    seed: u64,
) -> Report {
    let tl = &l.timeline;
    // The replay's threads by workload task: `<task>-<index>`, forked `<task>-<index>-<n>`.
    let base = |name: &'_ str, forked: bool| -> String {
        let mut b = name;
        for _ in 0..if forked { 2 } else { 1 } {
            b = b.rsplit_once('-').map_or(b, |(b, _)| b);
        }
        b.to_string()
    };
    let mut runtime: BTreeMap<String, u64> = BTreeMap::new();
    for r in &results.tasks {
        *runtime.entry(base(&r.name, r.forked)).or_default() += r.runtime_ns;
    }
    for f in &results.exited_forks {
        *runtime.entry(f.task.clone()).or_default() += f.counts.runtime_ns;
    }
    // Their work, wake-ups and wake-up latencies from the replay's own trace, read as the
    // trace was (counted alike): each thread of it by its workload task (`replay_threads`).
    let threads = replay_threads(tl, ext, &results, replay, &runtime, base);
    let tasks = tl
        .tasks
        .iter()
        .enumerate()
        .filter(|(i, _)| ext.kept[*i])
        .map(|(i, t)| {
            let name = ext.names[i].as_str();
            let th = threads.get(name).map_or(&[][..], Vec::as_slice);
            // Counted as the trace counts them: not the replay's own wake-ups before the
            // task's first activity (`Extraction::prelude_wakeups`), in each of its threads.
            let skip = ext.prelude_wakeups(i);
            let latencies: Vec<u64> = th
                .iter()
                .flat_map(|r| r.latencies_ns.iter().skip(skip as usize).copied())
                .collect();
            TaskRow {
                task: name.to_string(),
                pid: t.pid,
                trace_runtime_ns: t.cpu_time_ns,
                replay_runtime_ns: runtime.get(name).copied().unwrap_or(0),
                trace_work_ns: t.cpu_work / 1024,
                replay_work_ns: th.iter().map(|r| r.cpu_work).sum::<u64>() / 1024,
                trace_wakeups: t.wakeups,
                replay_wakeups: th.iter().map(|r| r.wakeups.saturating_sub(skip)).sum(),
                trace_latency_mean_ns: t.latency_mean_ns(0),
                replay_latency_mean_ns: latencies
                    .iter()
                    .sum::<u64>()
                    .checked_div(latencies.len() as u64)
                    .unwrap_or(0),
            }
        })
        .collect();
    let cpus = (0..tl.nr_cpus.max(replay.nr_cpus))
        .map(|c| CpuRow {
            cpu: c,
            trace_busy_ns: busy(tl, c),
            replay_busy_ns: busy(replay, c),
            trace_mean_khz: mean_khz(tl, c),
            replay_mean_khz: mean_khz(replay, c),
            trace_active_mj: trace_platform.map(|p| active_mj(tl, p, c)),
            replay_active_mj: active_mj(replay, platform, c),
        })
        .collect();
    let (task, timer, interrupt) = ext.attribution();
    Report {
        trace: tl.file.clone(),
        platform: results.platform.clone(),
        notes: l.notes.iter().cloned().chain(ext.left_to_model()).collect(),
        seed,
        tasks,
        cpus,
        attribution: Attribution {
            task,
            timer,
            interrupt,
        },
        dependencies: ext
            .edges()
            .into_iter()
            .map(|((a, b), n)| (format!("{a}>{b}"), n))
            .collect(),
        replay_energy_mj: results.energy_mj,
        results: Some(Box::new(results)),
    }
}

/// The replay's threads (tasks of its own trace) by the workload task they ran. A thread the
/// results list is found by its pid. A forked one that exited is not listed: its comm is cut
/// to 15 bytes (`TASK_COMM_LEN`), which may end inside its task's name, so it is found by its
/// parent, whose forks the replay made in the order the trace's parent made them (the
/// extraction writes them as the parent's `fork` items in that order): its parent's k-th
/// fork ran the task the trace's parent forked k-th. A thread neither finds is matched by
/// its comm or the comm less its `-<index>` and `-<nnnn>` suffixes.
fn replay_threads<'r>(
    tl: &Timeline,
    ext: &Extraction,
    results: &Results,
    replay: &'r Timeline,
    runtime: &BTreeMap<String, u64>,
    base: impl Fn(&str, bool) -> String,
) -> BTreeMap<String, Vec<&'r TaskTrace>> {
    // The trace side: each kept task's kept forks, in order, by name.
    let mut forks: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (i, t) in tl.tasks.iter().enumerate().filter(|(i, _)| ext.kept[*i]) {
        let children = t.steps.iter().filter_map(|s| match *s {
            timeline::Step::Fork(c) if ext.kept[c] => Some(ext.names[c].as_str()),
            _ => None,
        });
        forks.insert(ext.names[i].as_str(), children.collect());
    }
    // The replay side: each forked thread's place among its parent's forks.
    let mut nth_fork: Vec<Option<usize>> = vec![None; replay.tasks.len()];
    for t in &replay.tasks {
        let children = t.steps.iter().filter_map(|s| match *s {
            timeline::Step::Fork(c) => Some(c),
            _ => None,
        });
        for (k, c) in children.enumerate() {
            nth_fork[c] = Some(k);
        }
    }
    let by_pid: BTreeMap<u32, String> = results
        .tasks
        .iter()
        .map(|r| (r.pid, base(&r.name, r.forked)))
        .collect();
    // Parents come before their children (a child is made at its fork).
    let mut name: Vec<Option<String>> = Vec::with_capacity(replay.tasks.len());
    for (i, t) in replay.tasks.iter().enumerate() {
        let forked = || {
            let parent = name.get(t.forked_by?)?.as_deref()?;
            let child = forks.get(parent)?.get(nth_fork[i]?)?;
            Some(child.to_string())
        };
        let by_comm = || {
            let mut b = t.comm.as_str();
            for _ in 0..3 {
                if runtime.contains_key(b) {
                    return Some(b.to_string());
                }
                b = b.rsplit_once('-').map_or(b, |(b, _)| b);
            }
            None
        };
        let n = by_pid.get(&t.pid).cloned().or_else(forked).or_else(by_comm);
        name.push(n);
    }
    let mut threads: BTreeMap<String, Vec<&TaskTrace>> = BTreeMap::new();
    for (t, n) in replay.tasks.iter().zip(name) {
        if let Some(n) = n {
            threads.entry(n).or_default().push(t);
        }
    }
    threads
}

fn busy(tl: &Timeline, cpu: usize) -> u64 {
    tl.busy_khz.get(cpu).map_or(0, |m| m.values().sum())
}

fn mean_khz(tl: &Timeline, cpu: usize) -> u64 {
    tl.freq_ns
        .get(cpu)
        .and_then(|&(khz_ns, ns)| khz_ns.checked_div(ns as u128))
        .unwrap_or(0) as u64
}

/// Busy time at each frequency × the power of the OPP at or above it, mJ.
fn active_mj(tl: &Timeline, p: &Platform, cpu: usize) -> f64 {
    let Some(m) = tl.busy_khz.get(cpu) else {
        return 0.0;
    };
    if cpu >= p.nr_cpus() {
        return 0.0;
    }
    let opps = &p.domain_of(cpu).opps;
    m.iter()
        .map(|(&khz, &ns)| {
            let opp = opps.iter().find(|o| o.freq_khz >= khz).or(opps.last());
            opp.map_or(0.0, |o| o.power_mw * ns as f64 / 1e9)
        })
        .sum()
}

fn pct(a: u64, b: u64) -> String {
    if a == 0 {
        return if b == 0 { "0.0%".into() } else { "new".into() };
    }
    format!("{:+.1}%", (b as f64 - a as f64) * 100.0 / a as f64)
}

/// The report as a table.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "replay of {} on {} (seed {})",
        r.trace, r.platform, r.seed
    );
    for n in &r.notes {
        let _ = writeln!(s, "{n}");
    }
    let _ = writeln!(
        s,
        "{:<20} {:>11} {:>11} {:>7}  {:>9} {:>9} {:>7}  {:>8} {:>8} {:>7}  {:>10} {:>10}",
        "task",
        "trace ms",
        "replay ms",
        "Δ",
        "work ms",
        "replay",
        "Δ",
        "wakeups",
        "replay",
        "Δ",
        "lat µs",
        "replay"
    );
    for t in &r.tasks {
        let _ = writeln!(
            s,
            "{:<20} {:>11.3} {:>11.3} {:>7}  {:>9.3} {:>9.3} {:>7}  {:>8} {:>8} {:>7}  {:>10} {:>10.1}",
            t.task,
            t.trace_runtime_ns as f64 / 1e6,
            t.replay_runtime_ns as f64 / 1e6,
            pct(t.trace_runtime_ns, t.replay_runtime_ns),
            t.trace_work_ns as f64 / 1e6,
            t.replay_work_ns as f64 / 1e6,
            pct(t.trace_work_ns, t.replay_work_ns),
            t.trace_wakeups,
            t.replay_wakeups,
            pct(t.trace_wakeups, t.replay_wakeups),
            t.trace_latency_mean_ns
                .map_or("-".into(), |l| format!("{:.1}", l as f64 / 1e3)),
            t.replay_latency_mean_ns as f64 / 1e3,
        );
    }
    let _ = writeln!(
        s,
        "{:<5} {:>11} {:>11} {:>10} {:>10} {:>11} {:>11}",
        "cpu", "busy ms", "replay", "mean MHz", "replay", "active mJ", "replay"
    );
    for c in &r.cpus {
        let _ = writeln!(
            s,
            "{:<5} {:>11.3} {:>11.3} {:>10.0} {:>10.0} {:>11} {:>11.2}",
            c.cpu,
            c.trace_busy_ns as f64 / 1e6,
            c.replay_busy_ns as f64 / 1e6,
            c.trace_mean_khz as f64 / 1e3,
            c.replay_mean_khz as f64 / 1e3,
            c.trace_active_mj.map_or("-".into(), |e| format!("{e:.2}")),
            c.replay_active_mj,
        );
    }
    let a = &r.attribution;
    let total = (a.task + a.timer + a.interrupt).max(1) as f64;
    let _ = writeln!(
        s,
        "wake-ups in the trace: {:.1}% by a task, {:.1}% by a periodic timer, {:.1}% by another timer or interrupt",
        a.task as f64 * 100.0 / total,
        a.timer as f64 * 100.0 / total,
        a.interrupt as f64 * 100.0 / total
    );
    let _ = writeln!(
        s,
        "replay energy (CPUs, clusters, idle): {:.2} mJ",
        r.replay_energy_mj
    );
    s
}

//! The rt-app examples on the machine's rt-app (Debian's 1.0) and in schedlab: each example
//! made into what rt-app 1.0 runs the same way schedlab reads it, recorded with `host record`,
//! and compared per thread — CPU time, wake-ups, migrations and wake-up latency from the
//! recorded trace against the simulation's results, and the medians of rt-app's own
//! per-period log (`run`, `slack`, `wu_lat`) against schedlab's `--rtapp-logs`.
//!
//! rt-app 1.0 (2017) differs from the rt-app schedlab reads (`rt-app_parse_config.c` at
//! v1.0, and running it):
//! - `ftrace` is a boolean (json-c reads any non-empty string as true), and when true it opens
//!   `/sys/kernel/debug/tracing/trace_marker`, failing where debugfs is not mounted;
//! - `calibration` as `"CPU0"` calibrates for a minute on a busy machine: a fixed ns per
//!   loop, measured once here, is given instead; `duration` is whole seconds;
//! - it has no `fork` event, no `taskgroup` and no custom slice (`dl-runtime` of a fair
//!   task): it ignores them, so they are left out of what both sides run;
//! - a deadline task without `dl-deadline` gets deadline 0 (a bug of 1.0's parser: it tests
//!   the period where it means the deadline) and `sched_setattr()` fails: the period (which
//!   defaults to the runtime) is written as its deadline, as later rt-app defaults it;
//! - json-c keeps the last of repeated keys, where schedlab keeps every one (workgen's
//!   reading): repeated keys are collapsed to the last value in the first one's place.

use super::{Item, Opts, FAMILY_RTAPP};
use crate::measure::{self, Load};
use crate::record;
use schedlab::experiment::Experiment;
use schedlab::report::validation::{Noise, Row};
use schedlab::report::Results;
use schedlab::trace::replay::timeline::{self, CpuInfo, Timeline, Window};
use schedlab::Outputs;
use schedlab_base::json::{parse_json_c, Value as JsonC};
use schedlab_base::LatencyHistogram;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where rt-app 1.0 writes its trace lines when `ftrace` is true.
const TRACE_MARKER: &str = "/sys/kernel/debug/tracing/trace_marker";
/// Task keys rt-app 1.0 does not know (it ignores them) that schedlab honours.
const TASK_KEYS_1_0_IGNORES: &[&str] = &["taskgroup", "util_min", "util_max", "latency_nice"];
/// Event prefixes rt-app 1.0 does not know.
const EVENTS_1_0_IGNORES: &[&str] = &["fork", "sem_post", "sem_wait", "send", "recv"];

/// An example made into rt-app 1.0's dialect.
#[derive(Debug, Clone)]
pub struct Converted {
    pub json: Value,
    /// What was changed, in words.
    pub notes: Vec<String>,
    /// The task keys, in file order, with their instances.
    pub tasks: Vec<(String, u64)>,
}

/// What a conversion sets.
pub struct Settings<'a> {
    pub calibration_ns: u64,
    /// `duration` in whole seconds: Some overrides the example's (`--quick`); its own, or
    /// `default_s`, otherwise.
    pub duration_s: Option<u64>,
    pub default_s: u64,
    pub logdir: &'a Path,
    pub basename: &'a str,
    /// rt-app's trace lines: on only where 1.0 can write them.
    pub ftrace: bool,
}

/// json-c's reading of a value: objects keep the first place of a repeated key and its last
/// value (serde_json's map, in order, replaces in place); the count of collapsed keys.
fn json_c_value(v: &JsonC, repeated: &mut usize) -> Value {
    match v {
        JsonC::Null => Value::Null,
        JsonC::Bool(b) => json!(b),
        JsonC::Int(i) => json!(i),
        JsonC::Float(f, _) => json!(f),
        JsonC::Str(s) => json!(s),
        JsonC::Array(a) => Value::Array(a.iter().map(|(x, _)| json_c_value(x, repeated)).collect()),
        JsonC::Object(m) => {
            let mut out = Map::new();
            for (k, x, _) in m {
                if out.insert(k.clone(), json_c_value(x, repeated)).is_some() {
                    *repeated += 1;
                }
            }
            Value::Object(out)
        }
    }
}

/// Leave out of a task or phase object what rt-app 1.0 ignores; the keys left out.
fn drop_unknown(obj: &mut Map<String, Value>, task_level: bool) -> Vec<String> {
    let mut gone = Vec::new();
    obj.retain(|k, _| {
        let event = EVENTS_1_0_IGNORES.iter().any(|p| k.starts_with(p));
        let key = TASK_KEYS_1_0_IGNORES.contains(&k.as_str()) && (task_level || k == "taskgroup");
        if event || key {
            gone.push(k.clone());
        }
        !(event || key)
    });
    gone
}

/// Make an example (`text`, from `file`) what rt-app 1.0 runs as schedlab reads it.
pub fn convert(text: &str, file: &str, s: &Settings) -> Result<Converted, String> {
    let (v, _) = parse_json_c(text).map_err(|e| {
        format!(
            "{file}:{}:{}: expected {}, found {}",
            e.pos.line, e.pos.column, e.expected, e.found
        )
    })?;
    let mut repeated = 0;
    let mut root = json_c_value(&v, &mut repeated);
    let mut notes = Vec::new();
    if repeated > 0 {
        notes.push(format!(
            "{repeated} repeated key(s) collapsed to the last value, as json-c reads them"
        ));
    }
    let Some(obj) = root.as_object_mut() else {
        return Err(format!("{file}: not a JSON object"));
    };
    let Some(Value::Object(tasks)) = obj.get_mut("tasks") else {
        return Err(format!("{file}: no tasks object"));
    };
    let mut names = Vec::new();
    for (name, task) in tasks.iter_mut() {
        let Some(t) = task.as_object_mut() else {
            continue;
        };
        let instances = t.get("instance").and_then(Value::as_u64).unwrap_or(1);
        names.push((name.clone(), instances));
        let mut gone = drop_unknown(t, true);
        if let Some(Value::Object(phases)) = t.get_mut("phases") {
            for (p, phase) in phases.iter_mut() {
                if let Some(ph) = phase.as_object_mut() {
                    gone.extend(
                        drop_unknown(ph, false)
                            .into_iter()
                            .map(|k| format!("{p}.{k}")),
                    );
                }
            }
        }
        let deadline = t.get("policy").and_then(Value::as_str) == Some("SCHED_DEADLINE");
        if !deadline && t.remove("dl-runtime").is_some() {
            gone.push("dl-runtime (a fair task's custom slice)".into());
        }
        if !gone.is_empty() {
            notes.push(format!(
                "{name}: {} left out (rt-app 1.0 ignores it)",
                gone.join(", ")
            ));
        }
        if deadline && !t.contains_key("dl-deadline") {
            let period = t
                .get("dl-period")
                .or_else(|| t.get("dl-runtime"))
                .cloned()
                .unwrap_or(json!(0));
            notes.push(format!(
                "{name}: dl-deadline {period} µs written (rt-app 1.0 sets deadline 0 without it)"
            ));
            t.insert("dl-deadline".into(), period);
        }
    }
    let global = obj
        .entry("global")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(g) = global.as_object_mut() else {
        return Err(format!("{file}: global is not an object"));
    };
    let own = g.get("duration").and_then(Value::as_u64).filter(|&d| d > 0);
    let duration = s.duration_s.or(own).unwrap_or(s.default_s);
    if own != Some(duration) {
        notes.push(format!("duration {duration} s"));
    }
    g.insert("duration".into(), json!(duration));
    g.insert("calibration".into(), json!(s.calibration_ns));
    g.insert("logdir".into(), json!(s.logdir.display().to_string()));
    g.insert("log_basename".into(), json!(s.basename));
    g.insert("gnuplot".into(), json!(false));
    let asked = match g.get("ftrace") {
        Some(Value::String(c)) => c != "none" && !c.is_empty(),
        Some(Value::Bool(b)) => *b,
        _ => false,
    };
    g.insert("ftrace".into(), json!(asked && s.ftrace));
    if asked && !s.ftrace {
        notes.push(format!("ftrace off: no {TRACE_MARKER} for rt-app 1.0"));
    }
    Ok(Converted {
        json: root,
        notes,
        tasks: names,
    })
}

/// rt-app's calibration, measured once: ns per loop of its busy loop.
pub struct Calibration {
    /// What the files get (rt-app 1.0 takes whole ns).
    pub ns: u64,
    /// As measured.
    pub measured: f64,
}

/// Run 20 iterations of a 5 ms `run` at a calibration of 10 ns per loop: each takes
/// 500 000 loops, and the fastest iteration's time over them is the loop's cost (the
/// others were slowed by whatever else ran).
pub fn calibrate(dir: &Path) -> Result<Calibration, String> {
    let (given, run_us) = (10.0, 5000.0);
    let file = dir.join("calibrate.json");
    let w = json!({
        "tasks": { "calib": { "loop": 20, "run": run_us as u64 } },
        "global": { "duration": 10, "calibration": given as u64, "logdir": dir.display().to_string(),
                    "log_basename": "calibrate", "ftrace": false, "gnuplot": false,
                    "lock_pages": false }
    });
    std::fs::write(&file, w.to_string()).map_err(|e| format!("{}: {e}", file.display()))?;
    measure::run(&["rt-app".into(), file.display().to_string()])?;
    let rows = log_rows(&dir.join("calibrate-calib-0.log"));
    let fastest = rows
        .iter()
        .map(|r| r.run)
        .filter(|&r| r > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !fastest.is_finite() {
        return Err("rt-app wrote no log rows for its calibration".into());
    }
    let measured = given * fastest / run_us;
    Ok(Calibration {
        ns: (measured.round() as u64).max(1),
        measured,
    })
}

/// One row of an rt-app log, the columns compared.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LogRow {
    run: f64,
    slack: f64,
    c_period: f64,
    wu_lat: f64,
}

/// The rows of an rt-app log (`#idx perf run period start end rel_st slack c_duration
/// c_period wu_lat`).
fn log_rows(path: &Path) -> Vec<LogRow> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<f64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (f.len() >= 11).then(|| LogRow {
                run: f[2],
                slack: f[7],
                c_period: f[9],
                wu_lat: f[10],
            })
        })
        .collect()
}

/// Per task key: the rows of its instances' logs in `dir` (`<basename>-<task>-<index>.log`).
fn logs_by_task(dir: &Path, basename: &str) -> BTreeMap<String, Vec<LogRow>> {
    let mut by = BTreeMap::new();
    let prefix = format!("{basename}-");
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name
            .strip_prefix(&prefix)
            .and_then(|n| n.strip_suffix(".log"))
        else {
            continue;
        };
        // A forked thread's log is `<task>-<index>-<n>`: its task is before the index.
        let task = stem
            .split('-')
            .take_while(|p| p.parse::<u64>().is_err())
            .collect::<Vec<_>>()
            .join("-");
        by.entry(task)
            .or_insert_with(Vec::new)
            .extend(log_rows(&e.path()));
    }
    by
}

/// What one run (or one simulation) gives a task key, its instances together.
#[derive(Debug, Clone, Default)]
struct TaskStats {
    cpu_ms: f64,
    wakeups: f64,
    migrations: f64,
    /// Per instance that was woken: its wake-up latency's p50 and p99, µs.
    p50: Vec<f64>,
    p99: Vec<f64>,
    log: Vec<LogRow>,
}

type Stats = BTreeMap<String, TaskStats>;

/// A metric of a thread: its name and how a run's stats give it (None: not in this run).
type Metric = (&'static str, fn(&TaskStats) -> Option<f64>);

/// The metrics compared.
fn metrics() -> Vec<Metric> {
    fn med(v: impl Iterator<Item = f64>) -> Option<f64> {
        let v: Vec<f64> = v.collect();
        (!v.is_empty()).then(|| measure::median(&v))
    }
    fn timer(s: &TaskStats) -> bool {
        s.log.iter().any(|r| r.c_period > 0.0)
    }
    vec![
        ("cpu ms", |s| Some(s.cpu_ms)),
        ("wake-ups", |s| Some(s.wakeups)),
        ("migrations", |s| Some(s.migrations)),
        ("wake-up latency p50 µs", |s| med(s.p50.iter().copied())),
        ("wake-up latency p99 µs", |s| med(s.p99.iter().copied())),
        ("log run µs (median)", |s| med(s.log.iter().map(|r| r.run))),
        ("log slack µs (median)", |s| {
            timer(s)
                .then(|| med(s.log.iter().map(|r| r.slack)))
                .flatten()
        }),
        ("log wu_lat µs (median)", |s| {
            timer(s)
                .then(|| med(s.log.iter().map(|r| r.wu_lat)))
                .flatten()
        }),
    ]
}

/// The real run's stats: the rt-app threads of the trace (forked by the `rt-app` process,
/// named after their task, as 1.0 names them), and the logs.
fn real_stats(tl: &Timeline, tasks: &[(String, u64)], logdir: &Path, basename: &str) -> Stats {
    let mut out = Stats::new();
    let logs = logs_by_task(logdir, basename);
    for (key, _) in tasks {
        let comm: String = key.chars().take(15).collect();
        let mut s = TaskStats::default();
        for t in &tl.tasks {
            let parent = t.forked_by.map(|p| tl.tasks[p].comm.as_str());
            if t.comm != comm || parent != Some("rt-app") {
                continue;
            }
            s.cpu_ms += t.cpu_time_ns as f64 / 1e6;
            s.wakeups += t.wakeups as f64;
            s.migrations += t.migrations as f64;
            if !t.latencies_ns.is_empty() {
                let mut h = LatencyHistogram::default();
                t.latencies_ns.iter().for_each(|&l| h.record(l));
                s.p50.push(h.percentile(50.0) as f64 / 1e3);
                s.p99.push(h.percentile(99.0) as f64 / 1e3);
            }
        }
        s.log = logs.get(key).cloned().unwrap_or_default();
        out.insert(key.clone(), s);
    }
    out
}

/// A simulation's stats: its threads `<task>-<index>` and its logs.
fn sim_stats(r: &Results, tasks: &[(String, u64)], logdir: &Path, basename: &str) -> Stats {
    let mut out = Stats::new();
    let logs = logs_by_task(logdir, basename);
    for (key, _) in tasks {
        let mut s = TaskStats::default();
        let prefix = format!("{key}-");
        for t in r.tasks.iter().filter(|t| t.name.starts_with(&prefix)) {
            s.cpu_ms += t.runtime_ns as f64 / 1e6;
            s.wakeups += t.wakeups as f64;
            s.migrations += t.migrations as f64;
            let l = &t.wakeup_latency_ns;
            if l.count > 0 {
                s.p50.push(l.p50 as f64 / 1e3);
                s.p99.push(l.p99 as f64 / 1e3);
            }
        }
        s.log = logs.get(key).cloned().unwrap_or_default();
        out.insert(key.clone(), s);
    }
    out
}

/// rt-app's reason for refusing a file: its first critical or error line.
fn refusal(output: &str, status: i32) -> String {
    output
        .lines()
        .find(|l| l.contains("<crit>") || l.contains("<error>"))
        .map(|l| {
            let l = l.trim_start_matches("[rt-app] ");
            format!(
                "rt-app 1.0 refused it (exit {status}): {}",
                l.split_whitespace().collect::<Vec<_>>().join(" ")
            )
        })
        .unwrap_or_else(|| format!("rt-app 1.0 exited with status {status}"))
}

/// What the examples' conversions set: whole seconds (1 with --quick, else the example's
/// own, 2 if it has none), the calibration, the logs' place.
fn settings_for<'a>(
    o: &Opts,
    calib: &Calibration,
    logdir: &'a Path,
    basename: &'a str,
) -> Settings<'a> {
    Settings {
        calibration_ns: calib.ns,
        duration_s: o.quick.then_some(1),
        default_s: 2,
        logdir,
        basename,
        ftrace: Path::new(TRACE_MARKER).exists(),
    }
}

/// One example: converted, recorded `runs` times, its simulations queued.
fn example(
    o: &Opts,
    path: &Path,
    calib: &Calibration,
    info: &CpuInfo,
    traces: &mut Vec<(String, PathBuf, Vec<String>)>,
) -> Vec<Item> {
    let name = path
        .file_stem()
        .map_or("example".into(), |s| s.to_string_lossy().into_owned());
    let not_run = |why: String| vec![Item::rows(Row::not_run(FAMILY_RTAPP, &name, why))];
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return not_run(format!("{}: {e}", path.display())),
    };
    let dir = o.work.join("rtapp").join(&name);
    let file = path.display().to_string();
    let conv = match convert(&text, &file, &settings_for(o, calib, &dir, &name)) {
        Ok(c) => c,
        Err(e) => return not_run(e),
    };
    // The simulation's reading, checked before anything runs.
    let sim_text = serde_json::to_string_pretty(&conv.json).expect("JSON serialises");
    let workload =
        match schedlab::workload::parse_workload(&sim_text, &format!("{name} (rt-app 1.0)")) {
            Ok(w) => w,
            Err(e) => return not_run(format!("schedlab refused it: {e}")),
        };
    let mut real: Vec<Stats> = Vec::new();
    let mut loads: Vec<Load> = Vec::new();
    let mut untraced = Vec::new();
    for run in 0..o.runs {
        let logdir = dir.join(format!("run{run}"));
        let conv =
            convert(&text, &file, &settings_for(o, calib, &logdir, &name)).expect("converted once");
        let (stats, load, trace, notes) = match run_once(&conv, &logdir, &name, info) {
            Ok(r) => r,
            Err(e) => return not_run(e),
        };
        if run == 0 {
            untraced = notes;
            let mut patterns: Vec<String> = conv
                .tasks
                .iter()
                .map(|(k, _)| k.chars().take(15).collect())
                .collect();
            patterns.push("rt-app".into());
            traces.push((name.clone(), trace, patterns));
        }
        real.push(stats);
        loads.push(load);
    }
    let mut items = Vec::new();
    if !untraced.is_empty() {
        items.push(Item::Note(format!(
            "rt-app {name}, the first run's trace: {}",
            untraced.join("; ")
        )));
    }
    if !conv.notes.is_empty() {
        items.push(Item::Note(format!(
            "rt-app {name}: {}",
            conv.notes.join("; ")
        )));
    }
    let sim = Sim {
        platform: o.platform.display().to_string(),
        seeds: o.runs as u64,
        tasks: conv.tasks,
        dir: dir.join("sim"),
        name,
        noise: measure::noise(&loads),
    };
    items.push(Item::sim(move || sim.rows(workload, &real)));
    items
}

/// One run of the converted example on the machine under `host record`, its log and trace
/// in `logdir`: the threads' numbers, the load meanwhile, the trace and what its reading
/// says of the runs whose switch-in the kernel did not trace; Err is why the row could not
/// run.
fn run_once(
    conv: &Converted,
    logdir: &Path,
    name: &str,
    info: &CpuInfo,
) -> Result<(Stats, Load, PathBuf, Vec<String>), String> {
    let _ = std::fs::create_dir_all(logdir);
    let file = logdir.join(format!("{name}.json"));
    let json = serde_json::to_string_pretty(&conv.json).expect("JSON");
    std::fs::write(&file, json).map_err(|e| format!("{}: {e}", file.display()))?;
    let trace = logdir.join(format!("{name}.txt"));
    let output = logdir.join("rt-app.out");
    let req = record::Request {
        out: trace.clone(),
        events: None,
        buffer_kb: None,
        tracefs: None,
        command: vec!["rt-app".into(), file.display().to_string()],
        output: Some(output.clone()),
    };
    let (rec, load) = measure::during(|| record::record(&req));
    let rec = rec.map_err(|e| format!("host record: {e}"))?;
    if rec.status != 0 {
        let out = std::fs::read_to_string(&output).unwrap_or_default();
        return Err(refusal(&out, rec.status));
    }
    let text = std::fs::read_to_string(&trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let tl = timeline::read(&text, &trace.display().to_string(), info, Window::default())
        .map_err(|e| format!("the trace: {e}"))?;
    let untraced = tl
        .notes
        .iter()
        .filter(|n| n.contains("without a traced switch-in"))
        .cloned()
        .collect();
    Ok((
        real_stats(&tl, &conv.tasks, logdir, name),
        load,
        trace,
        untraced,
    ))
}

/// An example's simulation, queued until every measurement is done.
struct Sim {
    platform: String,
    seeds: u64,
    tasks: Vec<(String, u64)>,
    dir: PathBuf,
    name: String,
    noise: Noise,
}

impl Sim {
    /// Simulate the workload with seeds 0..seeds: a row per thread and metric beside the
    /// machine's `real` runs.
    fn rows(self, workload: schedlab::workload::Workload, real: &[Stats]) -> Vec<Row> {
        let name = &self.name;
        let exp = Experiment::from_workload(workload, &self.platform);
        let mut sims: Vec<Stats> = Vec::new();
        for seed in 0..self.seeds {
            let logdir = self.dir.join(format!("seed{seed}"));
            let out = Outputs {
                rtapp_logs: Some(logdir.clone()),
                ..Outputs::default()
            };
            match exp.run(seed, true, &out) {
                Ok(r) => sims.push(sim_stats(&r, &self.tasks, &logdir, name)),
                Err(e) => return vec![Row::not_run(FAMILY_RTAPP, name, format!("schedlab: {e}"))],
            }
        }
        let mut rows = Vec::new();
        for (key, instances) in &self.tasks {
            let who = if *instances == 1 {
                key.clone()
            } else {
                format!("{key}×{instances}")
            };
            for (metric, f) in metrics() {
                let pick = |runs: &[Stats]| -> Vec<f64> {
                    runs.iter().filter_map(|s| s.get(key).and_then(f)).collect()
                };
                let r = pick(real);
                if r.is_empty() {
                    continue;
                }
                let mut row = super::row(
                    FAMILY_RTAPP,
                    &format!("{name} {who} {metric}"),
                    &r,
                    &pick(&sims),
                );
                row.noise = self.noise;
                rows.push(row);
            }
        }
        rows
    }
}

/// Every example of the directory that rt-app 1.0 takes; the traces of their first runs
/// (name, trace, the tasks to replay) for the replay rows.
pub fn examples(
    o: &Opts,
    info: &CpuInfo,
    traces: &mut Vec<(String, PathBuf, Vec<String>)>,
) -> Vec<Item> {
    if !measure::have("rt-app") {
        return vec![Item::rows(Row::not_run(
            FAMILY_RTAPP,
            "examples",
            "rt-app is not installed (Debian: apt-get install rt-app)",
        ))];
    }
    if let Err(e) = crate::tracefs::Tracefs::open(None) {
        return vec![Item::rows(Row::not_run(
            FAMILY_RTAPP,
            "examples",
            format!("no tracefs for host record: {e}"),
        ))];
    }
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&o.examples) {
        Ok(d) => d
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(e) => {
            return vec![Item::rows(Row::not_run(
                FAMILY_RTAPP,
                "examples",
                format!("{}: {e}", o.examples.display()),
            ))]
        }
    };
    files.sort();
    let dir = o.work.join("rtapp");
    let _ = std::fs::create_dir_all(&dir);
    (o.log)("rt-app: calibrating its busy loop");
    let calib = match calibrate(&dir) {
        Ok(c) => c,
        Err(e) => {
            return vec![Item::rows(Row::not_run(
                FAMILY_RTAPP,
                "examples",
                format!("rt-app's calibration: {e}"),
            ))]
        }
    };
    let mut items = vec![Item::Note(format!(
        "rt-app examples: calibration {} ns per loop (measured {:.2}: the fastest of 20 runs of 5 ms)",
        calib.ns, calib.measured
    ))];
    for f in &files {
        (o.log)(&format!("rt-app: {}", f.display()));
        items.extend(example(o, f, &calib, info, traces));
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(logdir: &Path) -> Settings<'_> {
        Settings {
            calibration_ns: 14,
            duration_s: None,
            default_s: 2,
            logdir,
            basename: "ex",
            ftrace: false,
        }
    }

    #[test]
    fn an_example_becomes_what_rt_app_1_0_runs_as_schedlab_reads_it() {
        let text = r#"{ /* comment */
            "tasks": {
                "a": { "run": 1, "run": 2, "sleep": 3, "taskgroup": "/tg", "fork": "b" },
                "b": { "instance": 2, "policy": "SCHED_DEADLINE", "dl-runtime": 100, "run": 5 },
                "c": { "policy": "SCHED_OTHER", "dl-runtime": 50,
                       "phases": { "p": { "run": 1, "taskgroup": "/x" } } },
            },
            "global": { "duration": 3, "calibration": "CPU0", "ftrace": "main,task", "gnuplot": true }
        }"#;
        let dir = Path::new("/tmp/logs");
        let c = convert(text, "x.json", &settings(dir)).unwrap();
        let j = &c.json;
        // json-c: the first place, the last value.
        assert_eq!(j["tasks"]["a"], json!({ "run": 2, "sleep": 3 }));
        assert_eq!(j["tasks"]["b"]["dl-deadline"], json!(100));
        assert_eq!(
            j["tasks"]["c"],
            json!({ "policy": "SCHED_OTHER", "phases": { "p": { "run": 1 } } })
        );
        let g = &j["global"];
        assert_eq!(g["duration"], json!(3));
        assert_eq!(g["calibration"], json!(14));
        assert_eq!(g["ftrace"], json!(false));
        assert_eq!(g["gnuplot"], json!(false));
        assert_eq!(g["logdir"], json!("/tmp/logs"));
        assert_eq!(
            c.tasks,
            [
                ("a".to_string(), 1),
                ("b".to_string(), 2),
                ("c".to_string(), 1)
            ]
        );
        let notes = c.notes.join("\n");
        for n in [
            "1 repeated key",
            "taskgroup, fork left out",
            "dl-deadline 100",
            "p.taskgroup",
            "custom slice",
            "ftrace off",
        ] {
            assert!(notes.contains(n), "{n} in {notes}");
        }
        // schedlab reads what rt-app 1.0 runs.
        let w = serde_json::to_string(j).unwrap();
        schedlab::workload::parse_workload(&w, "x.json").unwrap();
    }

    #[test]
    fn a_file_without_global_gets_one_and_quick_shortens_the_duration() {
        let dir = Path::new("/l");
        let mut s = settings(dir);
        s.duration_s = Some(1);
        let c = convert(
            r#"{ "tasks": { "t": { "loop": -1, "run": 10 } } }"#,
            "x",
            &s,
        )
        .unwrap();
        assert_eq!(c.json["global"]["duration"], json!(1));
        assert!(c.notes.iter().any(|n| n == "duration 1 s"), "{:?}", c.notes);
        assert!(convert("[1]", "x", &s).is_err());
    }

    #[test]
    fn log_rows_are_grouped_by_task_and_refusals_quote_rt_app() {
        let dir = tempfile::tempdir().unwrap();
        let head = "# Policy : SCHED_OTHER priority : 0\n#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat\n";
        let row = "   0   200000     2771    93637     10660544129     10660637766            6277          7      20000          0          3\n";
        for f in [
            "ex-thread0-0.log",
            "ex-thread0-1.log",
            "ex-my-task-2.log",
            "ex-b-3-0001.log",
            "other-x-0.log",
        ] {
            std::fs::write(dir.path().join(f), format!("{head}{row}")).unwrap();
        }
        let by = logs_by_task(dir.path(), "ex");
        let keys: Vec<_> = by.keys().cloned().collect();
        assert_eq!(keys, ["b", "my-task", "thread0"]);
        assert_eq!(by["thread0"].len(), 2);
        assert_eq!(
            by["b"][0],
            LogRow {
                run: 2771.0,
                slack: 7.0,
                c_period: 0.0,
                wu_lat: 3.0
            }
        );
        let out =
            "[rt-app] <notice> x\n[rt-app] <crit> [json]         Invalid cpu 2 in cpuset [ 2 ]\n";
        assert_eq!(
            refusal(out, 2),
            "rt-app 1.0 refused it (exit 2): <crit> [json] Invalid cpu 2 in cpuset [ 2 ]"
        );
        assert_eq!(refusal("", 1), "rt-app 1.0 exited with status 1");
    }
}

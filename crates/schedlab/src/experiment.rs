//! Experiment files (TOML): everything a run needs in one reviewable file — the platform, one
//! or several workloads (rt-app files, inline rt-app JSON or `schedlab gen` invocations), the
//! duration, the seeds, every `--set` switch, timed writes (`--set-at`), a sweep grid and, for
//! the bundled reproductions, the seed's numbers.
//!
//! ```toml
//! name = "fio-boost"
//! platform = "rk3399"            # a preset, or a platform file relative to this file
//! duration = "4s"                # or a number of seconds
//! seeds = [0, 1, 2]              # or `seed = 3`, or `runs = 5` (seeds 0..5)
//!
//! [set]                          # any --set switch, as TOML keys
//! cpufreq.rate_limit_us = 2000
//! cgroup."/bg".cpu.uclamp.max = 40
//!
//! [[set_at]]                     # a --set-at write
//! at = "1s"
//! kernel.sched_util_clamp_min = 512
//!
//! [[workload]]
//! name = "fio"                   # prefixes its task names when there are several workloads
//! gen = "fio"                    # or file = "w.json", or json = '''{ "tasks": … }'''
//! args = { service-time = 80 }   # or ["--service-time", "80"]
//! taskgroup = "/io"              # rt-app `taskgroup` of each of its tasks
//! latency_nice = -20             # rt-app `latency_nice` of each of its tasks
//!
//! [sweep]                        # the grid `schedlab sweep` runs when given no --param
//! cpufreq.iowait_boost = [true, false]
//! ```
//!
//! Several workloads run together in one simulation: each task is renamed
//! `<workload>.<task>` and its resources (mutexes, timers, barriers, …) are the workload's own,
//! and each workload's generator metric is reported under its name.

use crate::error::InputError;
use crate::gen::generate;
use crate::kernel::Variant;
use crate::platform::{preset, Platform};
use crate::report::Results;
use crate::workload::{load_workload, parse_workload, Event, Part, Workload};
use crate::{simulate, Error, Outputs, Run};
use std::path::{Path, PathBuf};
use toml::Value;

/// The longest simulated time a run may take: 10^6 s (11.6 days). A busy workload simulates
/// at a few million events per host second, so this is hours of host time already; u64
/// nanoseconds would allow 584 years.
pub const MAX_DURATION_NS: u64 = 1_000_000 * 1_000_000_000;

/// The most seeds (runs) an experiment or a comparison runs: 1000, as `compare --runs`.
pub const MAX_RUNS: u64 = 1000;

/// `10s`, `500ms`, `250us`, `1000ns`, or plain seconds; `source` names the file or option.
pub fn parse_duration(s: &str, source: &str, place: &str) -> Result<u64, InputError> {
    let bad = || {
        InputError::new(
            source,
            place,
            "a positive time such as 10s, 500ms, 250us",
            format!("`{s}`"),
        )
    };
    let t = s.trim();
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(suf, k)| t.strip_suffix(suf).map(|n| (n, *k)))
        .unwrap_or((t, 1e9));
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let ns = v * scale;
    if ns > MAX_DURATION_NS as f64 {
        return Err(InputError::new(
            source,
            place,
            "a time of at most 1000000s (the longest run schedlab simulates)",
            format!("`{s}`"),
        ));
    }
    if ns.is_nan() || ns < 1.0 {
        return Err(bad());
    }
    Ok(ns as u64)
}

/// A switch as written, with where it was written (for messages).
#[derive(Debug, Clone)]
struct Setting {
    key: String,
    value: String,
    place: String,
    /// Simulated time of a `set_at` write.
    at_ns: Option<u64>,
}

/// A loaded experiment: the workload is combined and checked; switches are kept as written
/// so that command-line switches apply on top (`build`).
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    /// The file (or the workload's file for a plain workload), for messages.
    pub file: String,
    /// A preset name or a platform file path (made relative to the current directory).
    pub platform: String,
    /// Whether `platform` was written in the experiment file (errors then name its key).
    platform_from_file: bool,
    pub duration_ns: Option<u64>,
    pub seeds: Vec<u64>,
    pub workload: Workload,
    settings: Vec<Setting>,
    /// `[sweep]`: KEY → values.
    pub sweep: Vec<(String, Vec<String>)>,
    /// The `[reproduce]` table, read by `reproduce.rs`.
    pub reproduce: Option<toml::Table>,
    /// The file's TOML and where its relative paths start (`with_workload` re-reads it).
    source: toml::Table,
    dir: PathBuf,
}

/// TOML value → the text `--set` would take.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Dotted TOML keys (`cpufreq.rate_limit_us = 2000`, `[set.cgroup."/bg"]`) → `(KEY, value)`.
pub(crate) fn flatten<'a>(
    prefix: &str,
    table: &'a toml::Table,
    out: &mut Vec<(String, &'a Value)>,
) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(t) => flatten(&key, t, out),
            _ => out.push((key, v)),
        }
    }
}

/// Reads one file's TOML with line/column errors.
fn parse_toml(text: &str, file: &str) -> Result<toml::Table, InputError> {
    text.parse::<toml::Table>().map_err(|e| {
        let place = match e.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!("line {line} column {column}")
            }
            None => "document".to_string(),
        };
        // The parser's message may span lines: fold it into the one line of the error.
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        InputError::new(file, place, "TOML", message)
    })
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "platform",
    "duration",
    "seed",
    "seeds",
    "runs",
    "set",
    "set_at",
    "workload",
    "sweep",
    "reproduce",
];
const WORKLOAD_KEYS: &[&str] = &[
    "name",
    "file",
    "json",
    "gen",
    "args",
    "taskgroup",
    "latency_nice",
];

struct Reader<'a> {
    file: &'a str,
    dir: PathBuf,
}

impl Reader<'_> {
    fn err(
        &self,
        place: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> InputError {
        InputError::new(self.file, place, expected, found)
    }

    fn check_keys(&self, t: &toml::Table, base: &str, allowed: &[&str]) -> Result<(), InputError> {
        match t.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(self.err(
                &join(base, k),
                format!("one of {}", allowed.join(", ")),
                format!("unknown key `{k}`"),
            )),
            None => Ok(()),
        }
    }

    fn string(&self, t: &toml::Table, key: &str, base: &str) -> Result<Option<String>, InputError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(&join(base, key), "a string", type_name(v))),
        }
    }

    fn duration(&self, v: &Value, place: &str) -> Result<u64, InputError> {
        match v {
            Value::String(s) => parse_duration(s, self.file, place),
            Value::Integer(_) | Value::Float(_) => {
                parse_duration(&scalar(v).expect("a number"), self.file, place)
            }
            _ => Err(self.err(
                place,
                "a time such as \"4s\" or a number of seconds",
                type_name(v),
            )),
        }
    }

    fn seed_list(&self, t: &toml::Table) -> Result<Vec<u64>, InputError> {
        let given: Vec<&str> = ["seed", "seeds", "runs"]
            .into_iter()
            .filter(|k| t.contains_key(*k))
            .collect();
        if given.len() > 1 {
            return Err(self.err(
                given[1],
                "only one of seed, seeds, runs",
                given.join(" and "),
            ));
        }
        let uint = |v: &Value, place: &str| match v {
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            v => Err(self.err(
                place,
                "a non-negative integer",
                scalar(v).unwrap_or_else(|| type_name(v).into()),
            )),
        };
        Ok(match given.first().copied() {
            None => vec![0],
            Some("seed") => vec![uint(&t["seed"], "seed")?],
            Some("runs") => match uint(&t["runs"], "runs")? {
                0 => return Err(self.err("runs", "at least 1", "0")),
                n if n > MAX_RUNS => {
                    return Err(self.err("runs", format!("at most {MAX_RUNS}"), n.to_string()))
                }
                n => (0..n).collect(),
            },
            _ => match &t["seeds"] {
                Value::Array(a) if a.len() as u64 > MAX_RUNS => {
                    return Err(self.err(
                        "seeds",
                        format!("at most {MAX_RUNS} seeds"),
                        format!("{} seeds", a.len()),
                    ))
                }
                Value::Array(a) if !a.is_empty() => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| uint(v, &format!("seeds[{i}]")))
                    .collect::<Result<_, _>>()?,
                v => return Err(self.err("seeds", "a non-empty array of seeds", type_name(v))),
            },
        })
    }

    /// `[set]` and `[[set_at]]` → settings, in file order.
    fn settings(&self, t: &toml::Table) -> Result<Vec<Setting>, InputError> {
        let mut out = Vec::new();
        let mut push = |table: &toml::Table, base: &str, at_ns: Option<u64>| {
            let mut flat = Vec::new();
            flatten("", table, &mut flat);
            for (key, v) in flat {
                if at_ns.is_some() && key == "at" {
                    continue;
                }
                let place = join(base, &key);
                let value = scalar(v)
                    .ok_or_else(|| self.err(&place, "a string, number or boolean", type_name(v)))?;
                out.push(Setting {
                    key,
                    value,
                    place,
                    at_ns,
                });
            }
            Ok::<(), InputError>(())
        };
        match t.get("set") {
            None => {}
            Some(Value::Table(s)) => push(s, "set", None)?,
            Some(v) => return Err(self.err("set", "a table of switches", type_name(v))),
        }
        match t.get("set_at") {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let base = format!("set_at[{i}]");
                    let Value::Table(w) = item else {
                        return Err(self.err(
                            &base,
                            "a table with `at` and switches",
                            type_name(item),
                        ));
                    };
                    let at = w.get("at").ok_or_else(|| {
                        self.err(&join(&base, "at"), "the time of the write", "nothing")
                    })?;
                    let at_ns = match at {
                        Value::String(s) if s.trim() == "0" => 0,
                        _ => self.duration(at, &join(&base, "at"))?,
                    };
                    push(w, &base, Some(at_ns))?;
                }
            }
            Some(v) => {
                return Err(self.err("set_at", "an array of tables ([[set_at]])", type_name(v)))
            }
        }
        Ok(out)
    }

    fn sweep(&self, t: &toml::Table) -> Result<Vec<(String, Vec<String>)>, InputError> {
        let Some(v) = t.get("sweep") else {
            return Ok(Vec::new());
        };
        let Value::Table(s) = v else {
            return Err(self.err("sweep", "a table of KEY = [values]", type_name(v)));
        };
        let mut flat = Vec::new();
        flatten("", s, &mut flat);
        flat.into_iter()
            .map(|(key, v)| {
                let place = join("sweep", &key);
                match v {
                    Value::Array(vs) if !vs.is_empty() => Ok((
                        key,
                        vs.iter()
                            .map(|x| {
                                scalar(x).ok_or_else(|| {
                                    self.err(
                                        &place,
                                        "an array of strings, numbers or booleans",
                                        type_name(x),
                                    )
                                })
                            })
                            .collect::<Result<_, _>>()?,
                    )),
                    v => Err(self.err(&place, "a non-empty array of values", type_name(v))),
                }
            })
            .collect()
    }

    /// One `[[workload]]`: its rt-app workload with the part's options applied.
    fn workload(&self, w: &toml::Table, base: &str) -> Result<(String, Workload), InputError> {
        self.check_keys(w, base, WORKLOAD_KEYS)?;
        let sources: Vec<&str> = ["file", "json", "gen"]
            .into_iter()
            .filter(|k| w.contains_key(*k))
            .collect();
        if sources.len() != 1 {
            return Err(self.err(
                base,
                "exactly one of file, json, gen",
                if sources.is_empty() {
                    "none".to_string()
                } else {
                    sources.join(" and ")
                },
            ));
        }
        if w.contains_key("args") && sources[0] != "gen" {
            return Err(self.err(&join(base, "args"), "args only with gen", "args"));
        }
        let mut workload = match sources[0] {
            "file" => {
                let f = self.string(w, "file", base)?.expect("present");
                load_workload(&self.dir.join(f))?
            }
            "json" => {
                let text = self.string(w, "json", base)?.expect("present");
                parse_workload(&text, &format!("{} {}", self.file, join(base, "json")))?
            }
            _ => {
                let name = self.string(w, "gen", base)?.expect("present");
                let place = join(base, "args");
                let args: Vec<String> = match w.get("args") {
                    None => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|v| scalar(v).ok_or_else(|| self.err(&place, "strings", type_name(v))))
                        .collect::<Result<_, _>>()?,
                    Some(Value::Table(t)) => {
                        let mut out = Vec::new();
                        for (k, v) in t {
                            match v {
                                Value::Boolean(true) => out.push(format!("--{k}")),
                                Value::Boolean(false) => {}
                                v => out.extend([
                                    format!("--{k}"),
                                    scalar(v).ok_or_else(|| {
                                        self.err(
                                            &join(&place, k),
                                            "a string, number or boolean",
                                            type_name(v),
                                        )
                                    })?,
                                ]),
                            }
                        }
                        out
                    }
                    Some(v) => {
                        return Err(self.err(
                            &place,
                            "an array or a table of arguments",
                            type_name(v),
                        ))
                    }
                };
                let json = generate(&name, &args, self.file, &join(base, "gen"))?;
                parse_workload(&json.to_string(), &format!("{} {}", self.file, base))?
            }
        };
        let name = match self.string(w, "name", base)? {
            Some(n) if valid_name(&n) => n,
            Some(n) => {
                return Err(self.err(
                    &join(base, "name"),
                    "a name of letters, digits, - and _",
                    format!("`{n}`"),
                ))
            }
            None => default_name(w),
        };
        if let Some(v) = w.get("taskgroup") {
            let place = join(base, "taskgroup");
            let Value::String(g) = v else {
                return Err(self.err(&place, "a cgroup path such as \"/bg\"", type_name(v)));
            };
            if !g.starts_with('/') || g.len() < 2 {
                return Err(self.err(
                    &place,
                    "a cgroup path below / such as \"/bg\"",
                    format!("`{g}`"),
                ));
            }
            if let Some(t) = workload.tasks.iter().find(|t| {
                !t.params.policy.is_fair()
                    || t.phases
                        .iter()
                        .any(|p| p.params.is_some_and(|s| !s.policy.is_fair()))
            }) {
                return Err(self.err(
                    &place,
                    "a workload of fair tasks (task groups hold SCHED_OTHER/BATCH/IDLE tasks)",
                    format!("task `{}` with policy {}", t.name, t.params.policy.name()),
                ));
            }
            let index = match workload.taskgroups.iter().position(|x| x == g) {
                Some(i) => i,
                None => {
                    workload.taskgroups.push(g.clone());
                    workload.taskgroups.len() - 1
                }
            };
            for t in &mut workload.tasks {
                t.taskgroup = Some(index);
            }
        }
        if let Some(v) = w.get("latency_nice") {
            let place = join(base, "latency_nice");
            match v {
                Value::Integer(n) if (-20..=19).contains(n) => {
                    for t in &mut workload.tasks {
                        t.latency_nice = Some(*n as i32);
                    }
                }
                v => {
                    return Err(self.err(
                        &place,
                        "an integer in -20..=19",
                        scalar(v).unwrap_or_else(|| type_name(v).into()),
                    ))
                }
            }
        }
        Ok((name, workload))
    }
}

/// An unnamed workload's name: its generator's, or its file's stem.
fn default_name(w: &toml::Table) -> String {
    match (w.get("gen"), w.get("file")) {
        (Some(Value::String(g)), _) => g.clone(),
        (_, Some(Value::String(f))) => Path::new(f).file_stem().map_or("workload".into(), |s| {
            s.to_string_lossy().replace(['.', ' '], "_")
        }),
        _ => "workload".into(),
    }
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Several workloads as one: task `t` of workload `w` becomes `w.t`, every resource table is
/// concatenated and each event's index moved by the tables before it. The globals must agree
/// on what changes how work runs.
fn combine(file: &str, parts: Vec<(String, Workload)>) -> Result<Workload, InputError> {
    let mut iter = parts.into_iter();
    let (first_name, mut all) = iter.next().expect("at least one workload");
    rename(&mut all, &first_name);
    all.global.generator = None;
    for (i, (name, mut w)) in iter.enumerate() {
        let place = format!("workload[{}].global", i + 1);
        let (a, b) = (&all.global, &w.global);
        for (what, same) in [
            ("calibration", a.calibration == b.calibration),
            ("pi_enabled", a.pi_enabled == b.pi_enabled),
            ("mem_bytes_per_us", a.mem_bytes_per_us == b.mem_bytes_per_us),
            (
                "mem_chase_ns_per_hop",
                a.mem_chase_ns_per_hop == b.mem_chase_ns_per_hop,
            ),
        ] {
            if !same {
                return Err(InputError::new(
                    file,
                    join(&place, what),
                    format!("the same {what} as workload `{first_name}`"),
                    "a different one",
                ));
            }
        }
        all.global.duration_ns = match (all.global.duration_ns, w.global.duration_ns) {
            (Some(x), Some(y)) => Some(x.max(y)),
            _ => None,
        };
        // 0 is "no limit".
        all.global.fork_limit = match (all.global.fork_limit, w.global.fork_limit) {
            (0, _) | (_, 0) => 0,
            (x, y) => x.max(y),
        };
        rename(&mut w, &name);
        let off = Offsets {
            task: all.tasks.len(),
            mutex: all.mutexes.len(),
            cond: all.conds.len(),
            barrier: all.barriers.len(),
            timer: all.timers.len(),
            sem: all.semaphores.len(),
            group: all.taskgroups.len(),
            chan: all.channels.len(),
        };
        for mut t in w.tasks {
            t.taskgroup = t.taskgroup.map(|g| g + off.group);
            for p in &mut t.phases {
                p.taskgroup = p.taskgroup.map(|g| g + off.group);
                for e in &mut p.events {
                    off.shift(e);
                }
            }
            all.tasks.push(t);
        }
        all.mutexes.extend(w.mutexes);
        all.conds.extend(w.conds);
        all.barriers.extend(w.barriers);
        all.timers.extend(w.timers.into_iter().map(|mut t| {
            t.unique_to = t.unique_to.map(|x| x + off.task);
            t
        }));
        all.semaphores.extend(w.semaphores.into_iter().map(|mut s| {
            s.mutex += off.mutex;
            s.cond += off.cond;
            s
        }));
        all.taskgroups.extend(w.taskgroups);
        all.channels.extend(w.channels);
        all.warnings.extend(w.warnings);
    }
    // Workloads may share a task group: join equal paths into one.
    let mut groups: Vec<String> = Vec::new();
    let map: Vec<usize> = all
        .taskgroups
        .iter()
        .map(|g| match groups.iter().position(|x| x == g) {
            Some(i) => i,
            None => {
                groups.push(g.clone());
                groups.len() - 1
            }
        })
        .collect();
    for t in &mut all.tasks {
        t.taskgroup = t.taskgroup.map(|g| map[g]);
        for p in &mut t.phases {
            p.taskgroup = p.taskgroup.map(|g| map[g]);
        }
    }
    all.taskgroups = groups;
    all.file = file.to_string();
    Ok(all)
}

/// Prefix a workload's task and resource names with `name.`.
fn rename(w: &mut Workload, name: &str) {
    let p = |s: &mut String| *s = format!("{name}.{s}");
    w.tasks.iter_mut().for_each(|t| p(&mut t.name));
    w.mutexes.iter_mut().for_each(p);
    w.conds.iter_mut().for_each(p);
    w.barriers.iter_mut().for_each(|b| p(&mut b.name));
    w.timers.iter_mut().for_each(|t| p(&mut t.name));
    w.semaphores.iter_mut().for_each(|s| p(&mut s.name));
    w.channels.iter_mut().for_each(|c| p(&mut c.name));
}

struct Offsets {
    task: usize,
    mutex: usize,
    cond: usize,
    barrier: usize,
    timer: usize,
    sem: usize,
    group: usize,
    chan: usize,
}

impl Offsets {
    fn shift(&self, e: &mut Event) {
        match e {
            Event::Run { .. }
            | Event::Runtime { .. }
            | Event::Sleep { .. }
            | Event::Yield
            | Event::Mem { .. }
            | Event::MemChase { .. }
            | Event::IoRun { .. } => {}
            Event::Timer { timer, .. } => *timer += self.timer,
            Event::Lock { mutex } | Event::Unlock { mutex } => *mutex += self.mutex,
            Event::Signal { cond } | Event::Broadcast { cond } => *cond += self.cond,
            Event::Wait { cond, mutex }
            | Event::Sync { cond, mutex }
            | Event::Suspend { cond, mutex }
            | Event::Resume { cond, mutex } => {
                *cond += self.cond;
                *mutex += self.mutex;
            }
            Event::Barrier { barrier } => *barrier += self.barrier,
            Event::Fork { task } => *task += self.task,
            Event::SemPost { sem } | Event::SemWait { sem } => *sem += self.sem,
            Event::Send { chan, .. } | Event::Recv { chan, .. } => *chan += self.chan,
        }
    }
}

impl Experiment {
    /// Read an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, InputError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            InputError::new(&file, "file", "a readable experiment file", e.to_string())
        })?;
        Experiment::parse(&text, &file, path.parent().unwrap_or(Path::new("")))
    }

    /// Parse experiment TOML; `dir` is where relative paths in it start.
    pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Experiment, InputError> {
        Experiment::from_table(parse_toml(text, file)?, file, dir)
    }

    fn from_table(t: toml::Table, file: &str, dir: &Path) -> Result<Experiment, InputError> {
        let r = Reader {
            file,
            dir: dir.to_path_buf(),
        };
        r.check_keys(&t, "", TOP_KEYS)?;
        let stem = Path::new(file)
            .file_stem()
            .map_or("experiment".into(), |s| s.to_string_lossy().into_owned());
        let name = r.string(&t, "name", "")?.unwrap_or(stem);
        r.string(&t, "description", "")?;
        let platform_from_file = t.contains_key("platform");
        let platform = match r.string(&t, "platform", "")? {
            None => "juno-r0".to_string(),
            Some(p) if preset(&p).is_some() => p,
            Some(p) => dir.join(p).display().to_string(),
        };
        let duration_ns = t
            .get("duration")
            .map(|v| r.duration(v, "duration"))
            .transpose()?;
        let seeds = r.seed_list(&t)?;
        let settings = r.settings(&t)?;
        let sweep = r.sweep(&t)?;
        let reproduce = match t.get("reproduce") {
            None => None,
            Some(Value::Table(x)) => Some(x.clone()),
            Some(v) => return Err(r.err("reproduce", "a table", type_name(v))),
        };
        let items = match t.get("workload") {
            Some(Value::Array(a)) if !a.is_empty() => a,
            Some(v) => return Err(r.err("workload", "[[workload]] tables", type_name(v))),
            None => return Err(r.err("workload", "at least one [[workload]]", "none")),
        };
        let mut loaded = Vec::new();
        for (i, w) in items.iter().enumerate() {
            let base = format!("workload[{i}]");
            let Value::Table(w) = w else {
                return Err(r.err(&base, "a table", type_name(w)));
            };
            let (n, wl) = r.workload(w, &base)?;
            if loaded.iter().any(|(m, _): &(String, Workload)| *m == n) {
                return Err(r.err(
                    &join(&base, "name"),
                    "a name no other workload has",
                    format!("`{n}` again"),
                ));
            }
            loaded.push((n, wl));
        }
        let workload = if loaded.len() == 1 {
            loaded.pop().expect("one").1
        } else {
            let parts = loaded
                .iter()
                .map(|(n, w)| Part {
                    name: n.clone(),
                    prefix: format!("{n}."),
                    generator: w.global.generator,
                })
                .collect();
            let mut w = combine(file, loaded)?;
            w.parts = parts;
            w
        };
        let e = Experiment {
            name,
            file: file.to_string(),
            platform,
            platform_from_file,
            duration_ns,
            seeds,
            workload,
            settings,
            sweep,
            reproduce,
            source: t.clone(),
            dir: dir.to_path_buf(),
        };
        // Check the platform and every switch now, so errors name this file.
        let (platform, _) = e.build()?;
        e.workload.check_platform(platform.nr_cpus())?;
        Ok(e)
    }

    /// A plain rt-app workload as an experiment (no switches, seed 0).
    pub fn from_workload(workload: Workload, platform: &str) -> Experiment {
        let name = Path::new(&workload.file)
            .file_stem()
            .map_or("workload".into(), |s| s.to_string_lossy().into_owned());
        Experiment {
            file: workload.file.clone(),
            name,
            platform: platform.to_string(),
            platform_from_file: false,
            duration_ns: None,
            seeds: vec![0],
            workload,
            settings: Vec::new(),
            sweep: Vec::new(),
            reproduce: None,
            source: toml::Table::new(),
            dir: PathBuf::new(),
        }
    }

    /// This experiment with the keys of its workload `name` (`args`, `latency_nice`, …)
    /// replaced by `keys`, re-read from the file's TOML; switches, seeds and duration as set
    /// here. `place` names where the replacement was written, for errors.
    pub fn with_workload(
        &self,
        name: &str,
        keys: &toml::Table,
        place: &str,
    ) -> Result<Experiment, InputError> {
        let r = Reader {
            file: &self.file,
            dir: self.dir.clone(),
        };
        let mut t = self.source.clone();
        let Some(Value::Array(items)) = t.get_mut("workload") else {
            return Err(r.err(place, "an experiment file's workload", "a plain workload"));
        };
        let mut names = Vec::new();
        let mut found = false;
        for w in items.iter_mut() {
            let Value::Table(w) = w else { continue };
            let n = match w.get("name") {
                Some(Value::String(n)) => n.clone(),
                _ => default_name(w),
            };
            if n == name {
                for (k, v) in keys {
                    w.insert(k.clone(), v.clone());
                }
                found = true;
            }
            names.push(n);
        }
        if !found {
            return Err(r.err(
                place,
                format!("a workload of the file ({})", names.join(", ")),
                format!("`{name}`"),
            ));
        }
        let mut e = Experiment::from_table(t, &self.file, &self.dir).map_err(|e| InputError {
            place: format!("{place} ({})", e.place),
            ..e
        })?;
        e.name = self.name.clone();
        e.platform = self.platform.clone();
        e.platform_from_file = self.platform_from_file;
        e.duration_ns = self.duration_ns;
        e.seeds = self.seeds.clone();
        e.settings = self.settings.clone();
        Ok(e)
    }

    /// Run on another platform than the file's (`--platform`).
    pub fn set_platform(&mut self, platform: &str) {
        self.platform = platform.to_string();
        self.platform_from_file = false;
    }

    /// Add a switch on top of the file's (`--set`, which wins).
    pub fn set(&mut self, pair: &str, source: &str) -> Result<(), InputError> {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| InputError::new(source, pair, "KEY=VALUE", format!("`{pair}`")))?;
        self.settings.push(Setting {
            key: k.trim().to_string(),
            value: v.trim().to_string(),
            place: source.to_string(),
            at_ns: None,
        });
        self.build().map(drop).inspect_err(|_| {
            self.settings.pop();
        })
    }

    /// Add a timed write (`--set-at`).
    /// A `--set-at TIME:KEY=VALUE` item of the command line.
    pub fn set_at_item(&mut self, item: &str) -> Result<(), InputError> {
        let (time, pair) = item.split_once(':').ok_or_else(|| {
            InputError::new("--set-at", item, "TIME:KEY=VALUE", format!("`{item}`"))
        })?;
        let at = parse_duration(time, "--set-at", item)?;
        self.set_at(at, pair, "--set-at")
    }

    pub fn set_at(&mut self, at_ns: u64, pair: &str, source: &str) -> Result<(), InputError> {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| InputError::new(source, pair, "TIME:KEY=VALUE", format!("`{pair}`")))?;
        self.settings.push(Setting {
            key: k.trim().to_string(),
            value: v.trim().to_string(),
            place: source.to_string(),
            at_ns: Some(at_ns),
        });
        self.build().map(drop).inspect_err(|_| {
            self.settings.pop();
        })
    }

    /// The platform and the kernel variant: the platform's defaults, then every switch in the
    /// order written (file first, command line last).
    pub fn build(&self) -> Result<(Platform, Variant), InputError> {
        let platform = Platform::resolve(&self.platform).map_err(|e| {
            if self.platform_from_file && e.file == "--platform" {
                InputError {
                    file: self.file.clone(),
                    place: "platform".into(),
                    found: format!("`{}`, neither", e.place),
                    ..e
                }
            } else {
                e
            }
        })?;
        let mut variant = Variant::for_platform(&platform);
        for s in &self.settings {
            // A switch from the command line names the option; one from the file names the
            // file and its TOML key path.
            let from_file = !s.place.starts_with("--");
            let result = match s.at_ns {
                None => variant.set(&s.key, &s.value, &s.place),
                Some(at) => variant.set_at(at, &format!("{}={}", s.key, s.value), &s.place),
            };
            result.map_err(|e| {
                if from_file {
                    InputError {
                        file: self.file.clone(),
                        place: s.place.clone(),
                        ..e
                    }
                } else {
                    e
                }
            })?;
        }
        let end = self.duration();
        if let Some(w) = variant.timed_writes.iter().find(|w| w.at_ns >= end) {
            let (file, place) = match self
                .settings
                .iter()
                .rev()
                .find(|s| s.at_ns == Some(w.at_ns) && s.key == w.target.key())
            {
                Some(s) if !s.place.starts_with("--") => (self.file.clone(), s.place.clone()),
                Some(s) => (s.place.clone(), s.key.clone()),
                None => ("--set-at".to_string(), w.target.key()),
            };
            return Err(InputError::new(
                file,
                place,
                format!(
                    "a time before the end of the run ({} s), or the write never happens",
                    end as f64 / 1e9
                ),
                format!("{} s", w.at_ns as f64 / 1e9),
            ));
        }
        Ok((platform, variant))
    }

    /// The simulated time of a run: the experiment's duration, the workload's
    /// `global.duration`, else 10 s.
    pub fn duration(&self) -> u64 {
        self.duration_ns
            .or(self.workload.global.duration_ns)
            .unwrap_or(crate::DEFAULT_DURATION_NS)
    }

    /// Simulate with `seed`: the results carry each workload's own metric (under its name
    /// when there are several). `reproducible` leaves host timing out.
    pub fn run(&self, seed: u64, reproducible: bool, out: &Outputs) -> Result<Results, Error> {
        let (platform, variant) = self.build()?;
        simulate(
            Run {
                platform,
                workload: self.workload.clone(),
                variant,
                duration_ns: self.duration_ns,
                seed,
                reproducible,
            },
            out,
        )
    }
}

/// Run every side over `seeds`, all runs in parallel; the results are in side and seed order
/// and do not depend on the number of threads (each run is independent and deterministic).
pub fn run_sides(sides: &[Experiment], seeds: &[u64]) -> Result<Vec<Vec<Results>>, Error> {
    run_sides_with(sides, seeds, &|| {})
}

/// `run_sides`, calling `tick` after each run (a progress bar).
pub fn run_sides_with(
    sides: &[Experiment],
    seeds: &[u64],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Vec<Results>>, Error> {
    use rayon::prelude::*;
    let jobs: Vec<(usize, u64)> = (0..sides.len())
        .flat_map(|s| seeds.iter().map(move |&seed| (s, seed)))
        .collect();
    let results: Vec<Results> = jobs
        .par_iter()
        .map(|&(s, seed)| {
            let r = sides[s].run(seed, true, &Outputs::default());
            tick();
            r
        })
        .collect::<Result<_, _>>()?;
    let mut results = results.into_iter();
    Ok(sides
        .iter()
        .map(|_| results.by_ref().take(seeds.len()).collect())
        .collect())
}

/// An experiment file (`.toml`) or an rt-app workload (anything else, `-` for standard
/// input) as an experiment; `platform` is used for a plain workload.
pub fn load_side(arg: &str, platform: &str) -> Result<Experiment, InputError> {
    if arg.ends_with(".toml") {
        return Experiment::load(Path::new(arg));
    }
    if arg != "-" && crate::replay::is_trace(Path::new(arg)) {
        return crate::replay::trace_side(arg, platform);
    }
    let workload = if arg == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| InputError::new("-", "standard input", "rt-app JSON", e.to_string()))?;
        parse_workload(&text, "-")?
    } else {
        load_workload(Path::new(arg))?
    };
    Ok(Experiment::from_workload(workload, platform))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("4s", "f", "p").unwrap(), 4_000_000_000);
        assert_eq!(parse_duration("250us", "f", "p").unwrap(), 250_000);
        assert_eq!(parse_duration("2", "f", "p").unwrap(), 2_000_000_000);
        assert!(parse_duration("-1s", "f", "p").is_err());
        assert!(parse_duration("soon", "f", "p").is_err());
    }
}

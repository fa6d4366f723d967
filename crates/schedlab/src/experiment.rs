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
use crate::{Error, Outputs, Run, Simulation};
use schedlab_base::json::quote;
use schedlab_base::place::{self, join, At, Doc, Kind, Node, Table};
use std::path::{Path, PathBuf};

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
    /// Where `platform` was written in the experiment file, if it was (errors then name
    /// its key).
    platform_from_file: Option<String>,
    pub duration_ns: Option<u64>,
    pub seeds: Vec<u64>,
    pub workload: Workload,
    settings: Vec<Setting>,
    /// `[sweep]`: KEY → values.
    pub sweep: Vec<(String, Vec<String>)>,
    /// The file's document (its `[reproduce]` table is read by `reproduce.rs`;
    /// `with_workload` re-reads it) and where its relative paths start.
    source: Doc,
    dir: PathBuf,
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

/// What a seed is: any `u64`, as `--seed` takes it.
const SEED: &str = "a seed (an integer from 0 to 18446744073709551615)";

/// A time: `"4s"`, `"500ms"`, or a number of seconds.
fn duration(at: &At) -> Result<u64, InputError> {
    match &at.node().value {
        Kind::Str(_) | Kind::Int(_) | Kind::Float(..) => {
            let text = at.scalar("a time")?;
            parse_duration(&text, at.file(), &at.place())
        }
        _ => Err(at.mismatch("a time such as \"4s\" or a number of seconds")),
    }
}

fn seed_list(t: &Table) -> Result<Vec<u64>, InputError> {
    let given: Vec<&str> = ["seed", "seeds", "runs"]
        .into_iter()
        .filter(|k| t.has(k))
        .collect();
    if given.len() > 1 {
        return Err(t.error_at(
            given[1],
            "only one of seed, seeds, runs",
            given.join(" and "),
        ));
    }
    Ok(match given.first().copied() {
        None => vec![0],
        Some("seed") => vec![t.req("seed", SEED)?.int(SEED)?],
        Some("runs") => {
            let n = t
                .req("runs", "")?
                .int_in(1, i128::from(MAX_RUNS), "a number of runs")?;
            (0..n as u64).collect()
        }
        _ => {
            let at = t.req("seeds", "")?;
            let items = at.items("a non-empty array of seeds")?;
            if items.is_empty() {
                return Err(at.error("a non-empty array of seeds", "an empty array"));
            }
            if items.len() as u64 > MAX_RUNS {
                return Err(at.error(
                    format!("at most {MAX_RUNS} seeds"),
                    format!("{} seeds", items.len()),
                ));
            }
            items
                .iter()
                .map(|s| s.int(SEED))
                .collect::<Result<_, _>>()?
        }
    })
}

/// `[set]` and `[[set_at]]` → settings, in file order.
fn settings(t: &Table) -> Result<Vec<Setting>, InputError> {
    let mut out = Vec::new();
    let mut push = |table: &Table, at_ns: Option<u64>| {
        for (key, v) in table.flatten() {
            if at_ns.is_some() && key == "at" {
                continue;
            }
            out.push(Setting {
                value: v.scalar("a string, number or boolean")?,
                key,
                place: v.place(),
                at_ns,
            });
        }
        Ok::<(), InputError>(())
    };
    if let Some(s) = t.get("set") {
        push(&s.any_table("of switches")?, None)?;
    }
    if let Some(s) = t.get("set_at") {
        for item in s.items("an array of tables ([[set_at]])")? {
            let w = item.any_table("with `at` and switches")?;
            let at = w.req("at", "the time of the write")?;
            let at_ns = match &at.node().value {
                Kind::Str(s) if s.trim() == "0" => 0,
                Kind::Int(0) => 0,
                _ => duration(&at)?,
            };
            push(&w, Some(at_ns))?;
        }
    }
    Ok(out)
}

fn sweep(t: &Table) -> Result<Vec<(String, Vec<String>)>, InputError> {
    let Some(s) = t.get("sweep") else {
        return Ok(Vec::new());
    };
    s.any_table("of KEY = [values]")?
        .flatten()
        .into_iter()
        .map(|(key, v)| {
            let values = v.items("a non-empty array of values")?;
            if values.is_empty() {
                return Err(v.error("a non-empty array of values", "an empty array"));
            }
            let values = values
                .iter()
                .map(|x| x.scalar("an array of strings, numbers or booleans"))
                .collect::<Result<_, _>>()?;
            Ok((key, values))
        })
        .collect()
}

/// A generator's arguments as the words of its command line: an array as it is, a table
/// as `--key=value` (a value may start with `-`), `--key` for true, nothing for false.
fn gen_args(at: &At) -> Result<Vec<String>, InputError> {
    match &at.node().value {
        Kind::Array(_) => at.items("")?.iter().map(|v| v.scalar("strings")).collect(),
        Kind::Table(_) => {
            let mut out = Vec::new();
            for (k, v) in at.any_table("")?.entries() {
                match v.node().value {
                    Kind::Bool(true) => out.push(format!("--{k}")),
                    Kind::Bool(false) => {}
                    _ => out.push(format!(
                        "--{k}={}",
                        v.scalar("a string, number or boolean")?
                    )),
                }
            }
            Ok(out)
        }
        _ => Err(at.mismatch("an array or a table of arguments")),
    }
}

/// One `[[workload]]`: its rt-app workload with the part's options applied; `dir` is where
/// its relative paths start.
fn workload(at: &At, dir: &Path) -> Result<(String, Workload), InputError> {
    let file = at.file();
    let w = at.table(WORKLOAD_KEYS, "of a workload's keys")?;
    let sources: Vec<&str> = ["file", "json", "gen"]
        .into_iter()
        .filter(|k| w.has(k))
        .collect();
    if sources.len() != 1 {
        return Err(at.error(
            "exactly one of file, json, gen",
            if sources.is_empty() {
                "none".to_string()
            } else {
                sources.join(" and ")
            },
        ));
    }
    if w.has("args") && sources[0] != "gen" {
        return Err(w.error_at("args", "args only with gen", "args"));
    }
    let mut workload = match sources[0] {
        "file" => {
            let f = w.req("file", "")?;
            let name = f.str("the path of an rt-app file")?;
            let path = dir.join(name);
            // A file that cannot be opened is this file's mistake, at its key; one that can
            // is read and its own mistakes name it.
            std::fs::File::open(&path).map_err(|e| {
                f.error(
                    "a readable rt-app file (relative to the experiment's directory)",
                    format!("{}: {e}", quote(name)),
                )
            })?;
            load_workload(&path)?
        }
        "json" => {
            let text = w.req("json", "")?.str("rt-app JSON text")?;
            parse_workload(text, &format!("{file} {}", join(at.path(), "json")))?
        }
        _ => {
            let g = w.req("gen", "")?;
            let name = g.str("a generator's name")?;
            let args = match w.get("args") {
                None => Vec::new(),
                Some(a) => gen_args(&a)?,
            };
            let json = generate(name, &args, file, &g.place())?;
            parse_workload(&json.to_string(), &format!("{file} {}", at.path()))?
        }
    };
    let name = match w.get("name") {
        None => default_name(at.node()),
        Some(n) => {
            let s = n.str("a name of letters, digits, - and _")?;
            if !valid_name(s) {
                return Err(n.error("a name of letters, digits, - and _", format!("`{s}`")));
            }
            s.to_string()
        }
    };
    if let Some(v) = w.get("taskgroup") {
        let g = v.str("a cgroup path such as \"/bg\"")?;
        if !g.starts_with('/') || g.len() < 2 {
            return Err(v.error("a cgroup path below / such as \"/bg\"", format!("`{g}`")));
        }
        if let Some(t) = workload.tasks.iter().find(|t| {
            !t.params.policy.is_fair()
                || t.phases
                    .iter()
                    .any(|p| p.params.is_some_and(|s| !s.policy.is_fair()))
        }) {
            return Err(v.error(
                "a workload of fair tasks (task groups hold SCHED_OTHER/BATCH/IDLE tasks)",
                format!("task `{}` with policy {}", t.name, t.params.policy.name()),
            ));
        }
        let index = match workload.taskgroups.iter().position(|x| x == g) {
            Some(i) => i,
            None => {
                workload.taskgroups.push(g.to_string());
                workload.taskgroups.len() - 1
            }
        };
        for t in &mut workload.tasks {
            t.taskgroup = Some(index);
        }
    }
    if let Some(v) = w.get("latency_nice") {
        let n = v.int_in(-20, 19, "a latency nice value")? as i32;
        for t in &mut workload.tasks {
            t.latency_nice = Some(n);
        }
    }
    Ok((name, workload))
}

/// An unnamed workload's name: its generator's, or its file's stem.
fn default_name(w: &Node) -> String {
    let text = |key: &str| match w.get(key).map(|n| &n.value) {
        Some(Kind::Str(s)) => Some(s.as_str()),
        _ => None,
    };
    match (text("gen"), text("file")) {
        (Some(g), _) => g.to_string(),
        (_, Some(f)) => Path::new(f).file_stem().map_or("workload".into(), |s| {
            s.to_string_lossy().replace(['.', ' '], "_")
        }),
        _ => "workload".into(),
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
        // One machine, one threads-max: the largest asked for, which the instances of all
        // the workloads share.
        all.global.threads_max = all.global.threads_max.max(w.global.threads_max);
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
    let threads: u64 = all.tasks.iter().map(|t| u64::from(t.instances)).sum();
    if threads > u64::from(all.global.threads_max) {
        return Err(InputError::new(
            file,
            "workload",
            format!(
                "at most {} threads in all the workloads' instances (global.threads_max)",
                all.global.threads_max
            ),
            threads.to_string(),
        ));
    }
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
        let text = place::read_text(path, "experiment file")?;
        Experiment::parse(
            &text,
            &path.display().to_string(),
            path.parent().unwrap_or(Path::new("")),
        )
    }

    /// Parse experiment TOML; `dir` is where relative paths in it start.
    pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Experiment, InputError> {
        Experiment::from_doc(Doc::parse_toml(text, file)?, dir)
    }

    fn from_doc(doc: Doc, dir: &Path) -> Result<Experiment, InputError> {
        let file = doc.file().to_string();
        let root = doc.root();
        let t = root.table(TOP_KEYS, "of an experiment's keys")?;
        let stem = Path::new(&file)
            .file_stem()
            .map_or("experiment".into(), |s| s.to_string_lossy().into_owned());
        let name = match t.get("name") {
            Some(n) => n.str("a name (a string)")?.to_string(),
            None => stem,
        };
        if let Some(d) = t.get("description") {
            d.str("a description (a string)")?;
        }
        let platform_at = t.get("platform");
        let platform = match &platform_at {
            None => "juno-r0".to_string(),
            Some(p) => {
                let p = p.str("a preset's name or a platform file")?;
                if preset(p).is_some() {
                    p.to_string()
                } else {
                    dir.join(p).display().to_string()
                }
            }
        };
        let duration_ns = t.get("duration").map(|v| duration(&v)).transpose()?;
        let seeds = seed_list(&t)?;
        let settings = settings(&t)?;
        let sweep = sweep(&t)?;
        if let Some(r) = t.get("reproduce") {
            r.any_table("(see `schedlab reproduce`)")?;
        }
        let items = t
            .get("workload")
            .ok_or_else(|| t.error_at("workload", "at least one [[workload]]", "none"))?;
        let items = items.items("[[workload]] tables")?;
        if items.is_empty() {
            return Err(t.error_at("workload", "at least one [[workload]]", "an empty array"));
        }
        let mut loaded = Vec::new();
        for w in &items {
            let (n, wl) = workload(w, dir)?;
            if loaded.iter().any(|(m, _): &(String, Workload)| *m == n) {
                let at = w.any_table("")?;
                return Err(at.error_at(
                    "name",
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
            let mut w = combine(&file, loaded)?;
            w.parts = parts;
            w
        };
        let platform_from_file = platform_at.map(|p| p.place());
        let e = Experiment {
            name,
            file,
            platform,
            platform_from_file,
            duration_ns,
            seeds,
            workload,
            settings,
            sweep,
            source: doc.clone(),
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
            platform_from_file: None,
            duration_ns: None,
            seeds: vec![0],
            source: Doc::empty(&workload.file),
            workload,
            settings: Vec::new(),
            sweep: Vec::new(),
            dir: PathBuf::new(),
        }
    }

    /// The experiment file's document (an experiment made from a plain workload has an
    /// empty one).
    pub fn doc(&self) -> &Doc {
        &self.source
    }

    /// This experiment with the keys of its workload `name` (`args`, `latency_nice`, …)
    /// replaced by those of the table `keys`, re-read from the file's document; switches,
    /// seeds and duration as set here. `place` names where the replacement was written, for
    /// errors.
    pub fn with_workload(
        &self,
        name: &str,
        keys: &Node,
        place: &str,
    ) -> Result<Experiment, InputError> {
        let mut doc = self.source.clone();
        let items = match doc.root_mut().value {
            Kind::Table(ref mut top) => {
                top.iter_mut()
                    .find(|(k, _)| k == "workload")
                    .and_then(|(_, n)| match &mut n.value {
                        Kind::Array(items) => Some(items),
                        _ => None,
                    })
            }
            _ => None,
        };
        let Some(items) = items else {
            return Err(InputError::new(
                &self.file,
                place,
                "an experiment file's workload",
                "a plain workload",
            ));
        };
        let mut names = Vec::new();
        let mut found = false;
        for w in items.iter_mut() {
            let n = match w.get("name").map(|n| &n.value) {
                Some(Kind::Str(n)) => n.clone(),
                _ => default_name(w),
            };
            if n == name {
                if let Kind::Table(entries) = &keys.value {
                    for (k, v) in entries {
                        w.set(k, v.clone());
                    }
                }
                found = true;
            }
            names.push(n);
        }
        if !found {
            return Err(InputError::new(
                &self.file,
                place,
                format!("a workload of the file ({})", names.join(", ")),
                format!("`{name}`"),
            ));
        }
        let mut e = Experiment::from_doc(doc, &self.dir).map_err(|e| InputError {
            place: format!("{place} ({})", e.place),
            ..e
        })?;
        e.name = self.name.clone();
        e.platform = self.platform.clone();
        e.platform_from_file = self.platform_from_file.clone();
        e.duration_ns = self.duration_ns;
        e.seeds = self.seeds.clone();
        e.settings = self.settings.clone();
        Ok(e)
    }

    /// Run on another platform than the file's (`--platform`).
    pub fn set_platform(&mut self, platform: &str) {
        self.platform = platform.to_string();
        self.platform_from_file = None;
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
        self.set_at_all(&[(at_ns, pair.to_string())], source)
    }

    /// Timed writes (time, `KEY=VALUE`) added and checked together: all or none.
    pub fn set_at_all(&mut self, writes: &[(u64, String)], source: &str) -> Result<(), InputError> {
        let before = self.settings.len();
        for (at_ns, pair) in writes {
            let Some((k, v)) = pair.split_once('=') else {
                self.settings.truncate(before);
                return Err(InputError::new(
                    source,
                    pair,
                    "TIME:KEY=VALUE",
                    format!("`{pair}`"),
                ));
            };
            self.settings.push(Setting {
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                place: source.to_string(),
                at_ns: Some(*at_ns),
            });
        }
        self.build().map(drop).inspect_err(|_| {
            self.settings.truncate(before);
        })
    }

    /// The platform and the kernel variant: the platform's defaults, then every switch in the
    /// order written (file first, command line last).
    pub fn build(&self) -> Result<(Platform, Variant), InputError> {
        let platform =
            Platform::resolve(&self.platform).map_err(|e| match &self.platform_from_file {
                Some(place) if e.file == "--platform" => InputError {
                    file: self.file.clone(),
                    place: place.clone(),
                    found: format!("`{}`, neither", e.place),
                    ..e
                },
                _ => e,
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
        // A timed write's error names the file and key path it was written at, or its option.
        let locate = |at_ns: u64, key: &str| match self
            .settings
            .iter()
            .rev()
            .find(|s| s.at_ns == Some(at_ns) && s.key == key)
        {
            Some(s) if !s.place.starts_with("--") => (self.file.clone(), s.place.clone()),
            Some(s) => (s.place.clone(), s.key.clone()),
            None => ("--set-at".to_string(), key.to_string()),
        };
        if let Err((i, e)) = variant.check_timed_writes(&platform) {
            let (file, place) = locate(variant.timed_writes[i].at_ns, &e.place);
            return Err(InputError { file, place, ..e });
        }
        let end = self.duration();
        if let Some(w) = variant.timed_writes.iter().find(|w| w.at_ns >= end) {
            let (file, place) = locate(w.at_ns, &w.target.key());
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
        self.start(seed, reproducible, out)?.run()
    }

    /// The run set up (the machine built, the outputs opened) and not yet simulated: what
    /// can be wrong with the input has been found when this returns.
    pub fn start(&self, seed: u64, reproducible: bool, out: &Outputs) -> Result<Simulation, Error> {
        let (platform, variant) = self.build()?;
        Simulation::new(
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

//! `schedlab reproduce`: the bundled experiments (`experiments/*.toml`) that re-run a seed's
//! result table, printed beside the seed's own numbers.
//!
//! A reproduction is an experiment file with a `[reproduce]` table:
//!
//! ```toml
//! [reproduce]
//! seed = "004_31cebf75612e9cd8.txt"           # the seed thread, by file name
//! message = "Christian Loehle, Re: [PATCH 1/4] …, 2023-12-12"
//! metric = "iops"                             # a metric of `compare` (ours)
//! seed_metric = "IOPS of fio randread on nvme" # what the seed's numbers are
//! opposite = false     # true: the seed's metric moves opposite to ours (a rate vs a cost)
//! tie_pct = 5          # changes within ±tie_pct % count as "no change"
//! magnitude = true     # claim: every row's change is within 25 % of the seed's
//! quick = { duration = "1s", runs = 2 }       # the test tier's size
//! # quick.rows = ["…"]  # the rows the test tier runs (with their reference rows)
//! # quick.workload.fio = { args = { runtime = 1 } } # workload keys it replaces (after a row's)
//!
//! [[reproduce.row]]
//! label = "v6.1, rate_limit_us=2000, boost"
//! set = { cpufreq.rate_limit_us = 2000 }      # switches on top of the experiment's
//! workload.fio = { args = { service-time = 90 } } # keys of a [[workload]] (by name) replaced
//! seed = [3918, 4021, 4043, 4081, 4085]       # the seed's values (Hmean/Amean taken)
//! ref = "…"            # the row this one is compared with (default: the first row)
//! differs = "why"      # a known difference: reported, not counted as a match
//! ```
//!
//! Each row runs over the experiment's seeds (all rows and seeds in parallel). A row's change
//! is its mean relative to its reference row's; the direction matches when ours and the
//! seed's are both up, both down or both within ±`tie_pct` %; the magnitude matches when
//! our ratio to the reference is within 25 % of the seed's.
//!
//! `metric` is a metric of `compare` or `task.<thread>.runtime_ms`, the CPU time of one thread.

use crate::error::InputError;
use crate::experiment::{parse_duration, run_sides, Experiment};
use crate::report::compare::{mean, samples, variance, MeanKind, Sample};
use crate::report::Results;
use crate::Error;
use schedlab_base::place::{At, Kind, Node, Table};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// How far our ratio to the reference row may be from the seed's for the magnitude to
/// match.
pub const MAGNITUDE_TOLERANCE: f64 = 0.25;

/// One row of a seed's table.
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    /// KEY=VALUE switches on top of the experiment's.
    pub sets: Vec<String>,
    /// Workload keys replaced: (workload name, its keys).
    pub workloads: Vec<(String, Node)>,
    /// The seed's values for this row.
    pub seed_values: Vec<f64>,
    /// Index of the row this one is compared with.
    pub reference: usize,
    /// A known difference from the seed, explained.
    pub differs: Option<String>,
}

/// A bundled reproduction.
#[derive(Debug, Clone)]
pub struct Reproduction {
    pub experiment: Experiment,
    pub seed_file: String,
    pub message: String,
    pub metric: String,
    pub seed_metric: String,
    pub opposite: bool,
    pub tie_pct: f64,
    pub claims_magnitude: bool,
    pub quick_duration_ns: Option<u64>,
    pub quick_runs: Option<u64>,
    /// The rows the quick size runs (indices; their reference rows too). Empty: all.
    pub quick_rows: Vec<usize>,
    /// Workload keys the quick size replaces in every row (after the row's own).
    pub quick_workloads: Vec<(String, Node)>,
    pub rows: Vec<Row>,
}

/// What a row gave.
#[derive(Debug, Clone, Serialize)]
pub struct RowOutcome {
    pub label: String,
    pub ours: f64,
    pub ours_stddev: f64,
    /// The seed's mean, if it has a number for this row.
    pub seed: Option<f64>,
    pub reference: String,
    /// Change to the reference row, percent (None for a reference row itself).
    pub ours_pct: Option<f64>,
    pub seed_pct: Option<f64>,
    /// None when there is nothing to compare (reference row, or no seed number).
    pub direction_ok: Option<bool>,
    pub magnitude_ok: Option<bool>,
    pub differs: Option<String>,
}

/// What a reproduction gave.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub name: String,
    pub seed_file: String,
    pub message: String,
    pub metric: String,
    pub seed_metric: String,
    pub runs: usize,
    pub duration_ns: Option<u64>,
    pub rows: Vec<RowOutcome>,
    pub claims_magnitude: bool,
    /// Host time the runs took.
    pub wall_ms: u64,
}

impl Outcome {
    /// Every row that has a seed number and no declared difference goes the seed's way.
    pub fn direction_matches(&self) -> bool {
        self.rows
            .iter()
            .filter(|r| r.differs.is_none())
            .all(|r| r.direction_ok != Some(false))
    }

    /// Every such row's change is within 25 % of the seed's.
    pub fn magnitude_matches(&self) -> bool {
        self.rows
            .iter()
            .filter(|r| r.differs.is_none())
            .all(|r| r.magnitude_ok != Some(false))
    }
}

impl Reproduction {
    /// The experiment file's `[reproduce]` table.
    pub fn load(path: &Path) -> Result<Reproduction, InputError> {
        let experiment = Experiment::load(path)?;
        Reproduction::from_experiment(experiment)
    }

    pub fn from_experiment(experiment: Experiment) -> Result<Reproduction, InputError> {
        const KEYS: &[&str] = &[
            "seed",
            "message",
            "metric",
            "seed_metric",
            "opposite",
            "tie_pct",
            "magnitude",
            "quick",
            "row",
        ];
        const ROW_KEYS: &[&str] = &["label", "set", "workload", "seed", "ref", "differs"];
        let doc = experiment.doc().clone();
        let top = doc.root().any_table("")?;
        let t = top
            .get("reproduce")
            .ok_or_else(|| top.error_at("reproduce", "a [reproduce] table", "none"))?
            .table(KEYS, "(see `schedlab reproduce`)")?;
        let string = |k: &str| -> Result<String, InputError> {
            Ok(t.req(k, "a string")?.str("a string")?.to_string())
        };
        let boolean = |k: &str| t.get(k).map_or(Ok(false), |v| v.bool("true or false"));
        let tie_pct = match t.get("tie_pct") {
            None => 5.0,
            Some(v) => {
                let x = v.float("a percentage")?;
                if x.is_nan() || x < 0.0 {
                    return Err(v.mismatch("a percentage of at least 0"));
                }
                x
            }
        };
        let quick = match t.get("quick") {
            Some(q) => read_quick(&q)?,
            None => Quick::default(),
        };
        let items = t.req("row", "two or more [[reproduce.row]]")?;
        let items = items.items("two or more [[reproduce.row]]")?;
        if items.len() < 2 {
            return Err(t.error_at("row", "two or more [[reproduce.row]]", "fewer"));
        }
        let rows_read: Vec<_> = items
            .iter()
            .map(|r| r.table(ROW_KEYS, "(a row of the seed's table)"))
            .collect::<Result<_, _>>()?;
        let labels: Vec<String> = rows_read
            .iter()
            .map(|r| match r.get("label").map(|l| l.node().value.clone()) {
                Some(Kind::Str(s)) => s,
                _ => String::new(),
            })
            .collect();
        let rows = rows_read
            .iter()
            .enumerate()
            .map(|(i, r)| read_row(r, i, &labels))
            .collect::<Result<Vec<_>, _>>()?;
        let quick_rows = quick_rows(&quick.labels, &labels, &rows)?;
        let repro = Reproduction {
            seed_file: string("seed")?,
            message: string("message")?,
            metric: string("metric")?,
            seed_metric: string("seed_metric")?,
            opposite: boolean("opposite")?,
            claims_magnitude: boolean("magnitude")?,
            tie_pct,
            quick_duration_ns: quick.duration_ns,
            quick_runs: quick.runs,
            quick_rows,
            quick_workloads: quick.workloads,
            rows,
            experiment,
        };
        // Every row's switches must be valid now, not when it runs; errors name the row.
        for (i, row) in repro.rows.iter().enumerate() {
            let mut side = repro.side(&repro.experiment, row, &format!("reproduce.row[{i}]"))?;
            if repro.quick_rows.is_empty() || repro.quick_rows.contains(&i) {
                repro.quick_side(&side, "reproduce.quick")?;
            }
            let set = rows_read[i]
                .get("set")
                .map(|s| s.any_table(""))
                .transpose()?;
            for (s, (_, at)) in row.sets.iter().zip(set.iter().flat_map(|t| t.flatten())) {
                side.set(s, &at.place())?;
            }
        }
        Ok(repro)
    }

    /// `side` with the quick size's workload keys replaced.
    fn quick_side(&self, side: &Experiment, place: &str) -> Result<Experiment, InputError> {
        let mut side = side.clone();
        for (name, keys) in &self.quick_workloads {
            side = side.with_workload(name, keys, &format!("{place}.workload.{name}"))?;
        }
        Ok(side)
    }

    /// `base` with a row's workload keys replaced.
    fn side(&self, base: &Experiment, row: &Row, place: &str) -> Result<Experiment, InputError> {
        let mut side = base.clone();
        for (name, keys) in &row.workloads {
            side = side.with_workload(name, keys, &format!("{place}.workload.{name}"))?;
        }
        Ok(side)
    }

    /// Run every row over the experiment's seeds (or the quick size) and compare.
    pub fn run(&self, quick: bool) -> Result<Outcome, Error> {
        let started = std::time::Instant::now();
        let mut base = self.experiment.clone();
        let mut seeds = base.seeds.clone();
        if quick {
            if let Some(d) = self.quick_duration_ns {
                base.duration_ns = Some(d);
            }
            if let Some(n) = self.quick_runs {
                seeds = (0..n).collect();
            }
        }
        let rows: Vec<&Row> = if quick && !self.quick_rows.is_empty() {
            self.quick_rows.iter().map(|&i| &self.rows[i]).collect()
        } else {
            self.rows.iter().collect()
        };
        // A row's reference, as an index into `rows`.
        let reference = |row: &Row| {
            let label = &self.rows[row.reference].label;
            rows.iter()
                .position(|r| r.label == *label)
                .expect("a quick row's reference runs too")
        };
        let sides: Vec<Experiment> = rows
            .iter()
            .map(|row| {
                let mut side = self.side(&base, row, "reproduce")?;
                if quick {
                    side = self.quick_side(&side, "reproduce.quick")?;
                }
                for s in &row.sets {
                    side.set(s, "reproduce")?;
                }
                side.name = row.label.clone();
                Ok(side)
            })
            .collect::<Result<_, InputError>>()?;
        let results = run_sides(&sides, &seeds)?;
        let mut values: Vec<(MeanKind, Vec<f64>)> = Vec::new();
        for (row, runs) in rows.iter().zip(&results) {
            let mut kind = MeanKind::Amean;
            let mut xs = Vec::new();
            for r in runs {
                let s = metric(r, &self.metric).ok_or_else(|| {
                    InputError::new(
                        &self.experiment.file,
                        "reproduce.metric",
                        "a metric the runs report",
                        format!("no `{}` in row `{}`", self.metric, row.label),
                    )
                })?;
                kind = s.kind;
                xs.push(s.value);
            }
            values.push((kind, xs));
        }
        let ours: Vec<(f64, f64)> = values
            .iter()
            .map(|(k, xs)| (mean(*k, xs), stddev(xs)))
            .collect();
        let kind = values.first().map_or(MeanKind::Amean, |v| v.0);
        let seed: Vec<Option<f64>> = rows
            .iter()
            .map(|r| (!r.seed_values.is_empty()).then(|| mean(kind, &r.seed_values)))
            .collect();
        let pct = |x: f64, base: f64| {
            if base != 0.0 {
                (x - base) / base * 100.0
            } else if x == 0.0 {
                0.0
            } else {
                f64::INFINITY
            }
        };
        let class = |p: f64| {
            if p > self.tie_pct {
                1
            } else if p < -self.tie_pct {
                -1
            } else {
                0
            }
        };
        let outcomes = rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let r = reference(row);
                let is_ref = r == i;
                let ours_pct = (!is_ref).then(|| pct(ours[i].0, ours[r].0));
                let seed_pct = match (is_ref, seed[i], seed[r]) {
                    (false, Some(s), Some(b)) => Some(pct(s, b)),
                    _ => None,
                };
                let (direction_ok, magnitude_ok) = match (ours_pct, seed_pct) {
                    (Some(o), Some(s)) => {
                        let sign = if self.opposite { -1 } else { 1 };
                        let dir = class(o) == sign * class(s);
                        let ratio = (1.0 + o / 100.0) / (1.0 + s / 100.0);
                        let mag = (!self.opposite && ratio.is_finite())
                            .then(|| (ratio - 1.0).abs() <= MAGNITUDE_TOLERANCE);
                        (Some(dir), mag)
                    }
                    _ => (None, None),
                };
                RowOutcome {
                    label: row.label.clone(),
                    ours: ours[i].0,
                    ours_stddev: ours[i].1,
                    seed: seed[i],
                    reference: rows[r].label.clone(),
                    ours_pct,
                    seed_pct,
                    direction_ok,
                    magnitude_ok,
                    differs: row.differs.clone(),
                }
            })
            .collect();
        Ok(Outcome {
            name: self.experiment.name.clone(),
            seed_file: self.seed_file.clone(),
            message: self.message.clone(),
            metric: self.metric.clone(),
            seed_metric: self.seed_metric.clone(),
            runs: seeds.len(),
            duration_ns: base.duration_ns,
            rows: outcomes,
            claims_magnitude: self.claims_magnitude,
            wall_ms: started.elapsed().as_millis() as u64,
        })
    }
}

/// A metric of `compare`, or `task.<thread>.runtime_ms`.
fn metric(r: &Results, name: &str) -> Option<Sample> {
    if let Some(thread) = name
        .strip_prefix("task.")
        .and_then(|t| t.strip_suffix(".runtime_ms"))
    {
        return r.tasks.iter().find(|t| t.name == thread).map(|t| Sample {
            name: name.to_string(),
            kind: MeanKind::Amean,
            value: t.runtime_ns as f64 / 1e6,
        });
    }
    samples(r).into_iter().find(|s| s.name == name)
}

/// `workload = { <name> = { <workload key> = … } }` of a row or of `quick`: each name and
/// its table of keys.
fn workload_keys(at: &At) -> Result<Vec<(String, Node)>, InputError> {
    at.any_table("of workload names and their keys")?
        .entries()
        .map(|(name, keys)| {
            keys.any_table("of workload keys")?;
            Ok((name.to_string(), keys.node().clone()))
        })
        .collect()
}

fn stddev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

/// The bundled reproductions in `dir`, by file name order; `name` picks one (the
/// experiment's name or its file stem).
pub fn bundled(dir: &Path, name: Option<&str>) -> Result<Vec<Reproduction>, InputError> {
    let d = dir.display().to_string();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| {
            InputError::new(
                &d,
                "the directory",
                "the bundled experiments",
                e.to_string(),
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let e = Experiment::load(&f)?;
        if e.doc().root().any_table("")?.get("reproduce").is_none() {
            continue;
        }
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned());
        if name.is_some_and(|n| n != e.name && Some(n) != stem.as_deref()) {
            continue;
        }
        out.push(Reproduction::from_experiment(e)?);
    }
    if out.is_empty() {
        return Err(InputError::new(
            &d,
            name.unwrap_or("the directory"),
            "a bundled reproduction (an experiment with a [reproduce] table)",
            "none",
        ));
    }
    Ok(out)
}

/// Our table beside the seed's.
pub fn render(o: &Outcome) -> String {
    let mut s = String::new();
    let secs = o
        .duration_ns
        .map_or("the workload's".into(), |d| format!("{}s", d as f64 / 1e9));
    let _ = writeln!(s, "== {} — seed {}", o.name, o.seed_file);
    let _ = writeln!(s, "   {}", o.message);
    let _ = writeln!(
        s,
        "   ours: {} over {} runs of {secs} ({:.1} s wall); seed: {}",
        o.metric,
        o.runs,
        o.wall_ms as f64 / 1e3,
        o.seed_metric
    );
    let w = o
        .rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(10)
        .max(10);
    let _ = writeln!(
        s,
        "{:<w$} {:>12} {:>9} {:>12} {:>10} {:>10}  match",
        "row", "ours", "±stddev", "seed", "ours Δ%", "seed Δ%"
    );
    let pct = |p: Option<f64>| p.map_or("ref".to_string(), |p| format!("{p:+.1}"));
    for r in &o.rows {
        let verdict = match (r.direction_ok, r.magnitude_ok) {
            (None, _) => String::new(),
            (Some(true), Some(true)) => "direction, magnitude".into(),
            (Some(true), _) => "direction".into(),
            (Some(false), _) => "DIFFERS".into(),
        };
        let verdict = match &r.differs {
            Some(why) => format!("{verdict} (known: {why})"),
            None => verdict,
        };
        let _ = writeln!(
            s,
            "{:<w$} {:>12.2} {:>9.2} {:>12} {:>10} {:>10}  {}",
            r.label,
            r.ours,
            r.ours_stddev,
            r.seed.map_or("-".into(), |x| format!("{x:.2}")),
            if r.reference == r.label {
                "ref".into()
            } else {
                pct(r.ours_pct)
            },
            if r.reference == r.label {
                "ref".into()
            } else {
                r.seed_pct.map_or("-".into(), |p| format!("{p:+.1}"))
            },
            verdict
        );
    }
    let _ = writeln!(
        s,
        "   direction: {}{}",
        if o.direction_matches() {
            "matches the seed"
        } else {
            "DIFFERS from the seed"
        },
        if o.claims_magnitude {
            if o.magnitude_matches() {
                "; magnitude within 25%"
            } else {
                "; magnitude NOT within 25%"
            }
        } else {
            ""
        }
    );
    s
}

/// A `[reproduce.quick]` table as read: the test tier's size.
#[derive(Default)]
struct Quick<'d> {
    duration_ns: Option<u64>,
    runs: Option<u64>,
    labels: Vec<At<'d>>,
    workloads: Vec<(String, Node)>,
}

fn read_quick<'d>(q: &At<'d>) -> Result<Quick<'d>, InputError> {
    let q = q.table(
        &["duration", "runs", "rows", "workload"],
        "(the test tier's size)",
    )?;
    let mut quick = Quick::default();
    if let Some(d) = q.get("duration") {
        let s = d.str("a time such as \"1s\"")?;
        quick.duration_ns = Some(parse_duration(s, d.file(), &d.place())?);
    }
    if let Some(w) = q.get("workload") {
        quick.workloads = workload_keys(&w)?;
    }
    if let Some(rows) = q.get("rows") {
        quick.labels = rows.items("an array of row labels")?;
    }
    if let Some(r) = q.get("runs") {
        quick.runs = Some(r.int_in(
            2,
            i128::from(crate::experiment::MAX_RUNS),
            "a number of runs",
        )? as u64);
    }
    Ok(quick)
}

/// Row `i` of `[[reproduce.row]]`; `labels` are every row's.
fn read_row(r: &Table, i: usize, labels: &[String]) -> Result<Row, InputError> {
    if labels[i].is_empty() || labels[..i].contains(&labels[i]) {
        return Err(r.error_at(
            "label",
            "a label no other row has",
            format!("`{}`", labels[i]),
        ));
    }
    let mut sets = Vec::new();
    if let Some(s) = r.get("set") {
        for (k, v) in s.any_table("of switches")?.flatten() {
            // A string is the switch's value as written, without quotes.
            sets.push(format!("{k}={}", v.scalar("a string, number or boolean")?));
        }
    }
    let workloads = match r.get("workload") {
        Some(w) => workload_keys(&w)?,
        None => Vec::new(),
    };
    let seed_values = match r.get("seed") {
        None => Vec::new(),
        Some(v) => {
            const SEED: &str = "a positive number or an array of them";
            let xs = match &v.node().value {
                Kind::Array(_) => v.list(SEED, |x| x.float(SEED))?,
                _ => vec![v.float(SEED)?],
            };
            if !xs.iter().all(|x| *x > 0.0) {
                return Err(v.mismatch(SEED));
            }
            xs
        }
    };
    let reference = match r.get("ref") {
        None => 0,
        Some(v) => {
            let l = v.str("a row label")?;
            labels
                .iter()
                .position(|x| x == l)
                .ok_or_else(|| v.error("the label of a row", format!("`{l}`")))?
        }
    };
    let differs = match r.get("differs") {
        None => None,
        Some(v) => Some(v.str("a string")?.to_string()),
    };
    Ok(Row {
        label: labels[i].clone(),
        sets,
        workloads,
        seed_values,
        reference,
        differs,
    })
}

/// The rows the quick tier runs: those it names and their references, in table order.
fn quick_rows(named: &[At], labels: &[String], rows: &[Row]) -> Result<Vec<usize>, InputError> {
    let mut quick_rows = Vec::new();
    for at in named {
        let l = at.str("a row label")?;
        let r = labels
            .iter()
            .position(|x| x == l)
            .ok_or_else(|| at.error("the label of a row", format!("`{l}`")))?;
        for x in [r, rows[r].reference] {
            if !quick_rows.contains(&x) {
                quick_rows.push(x);
            }
        }
    }
    quick_rows.sort_unstable();
    Ok(quick_rows)
}

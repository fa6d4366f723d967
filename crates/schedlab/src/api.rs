//! What `schedlab run`, `compare` and `sweep` do, as library calls: the command line
//! (`main.rs`) parses its arguments into these requests and prints the answers, the Python
//! module (`python/`) builds them from keyword arguments. Neither adds logic of its own.

use crate::error::InputError;
use crate::experiment::{self, Experiment};
use crate::kernel::tracepoint::EventSelection;
use crate::report::compare::Comparison;
use crate::report::Results;
use crate::sweep::{self, Point, Sweep};
use crate::trace::TraceFormat;
use crate::workload::parse_workload;
use crate::{Error, Outputs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The workload `schedlab run` simulates when none is named (see the file's comment).
pub const DEFAULT_WORKLOAD: &str = include_str!("../../../workloads/default.json");

/// Where a side's workload comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// An experiment file (`.toml`), an rt-app JSON file, a trace, or `-` for standard input.
    Arg(String),
    /// rt-app JSON text; `name` stands for the file in messages and the results.
    Json { text: String, name: String },
    /// `workloads/default.json`, built in.
    Default,
}

/// What every side of a run, comparison or sweep shares: the command line's `--platform`,
/// `--duration`, `--set` and `--strict`.
#[derive(Debug, Clone, Default)]
pub struct SideOptions {
    pub platform: Option<String>,
    pub duration: Option<String>,
    /// `KEY=VALUE` switches, in order (they win over an experiment file's).
    pub set: Vec<String>,
    /// The first warning (a key rt-app ignores, a resume of nobody) is the error.
    pub strict: bool,
}

/// `--duration` as nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64, InputError> {
    experiment::parse_duration(s, "--duration", s)
}

/// Called with each side as soon as it is loaded, before the options apply: the command line
/// prints its warnings there (the results carry them too).
pub type Loaded<'a> = &'a dyn Fn(&Experiment);

/// A source as an experiment, with the options' platform, duration and switches on top;
/// with `strict` its first warning is the error.
pub fn load_side(source: &Source, opts: &SideOptions, loaded: Loaded) -> Result<Experiment, Error> {
    let fallback = opts.platform.as_deref().unwrap_or("juno-r0");
    let mut e = match source {
        Source::Arg(arg) => experiment::load_side(arg, fallback)?,
        Source::Json { text, name } => {
            Experiment::from_workload(parse_workload(text, name)?, fallback)
        }
        Source::Default => {
            // The built-in workload has no warnings to be strict about.
            let mut e = Experiment::from_workload(
                parse_workload(DEFAULT_WORKLOAD, "<default workload>")?,
                fallback,
            );
            e.duration_ns = opts.duration.as_deref().map(parse_duration).transpose()?;
            for pair in &opts.set {
                e.set(pair, "--set")?;
            }
            return Ok(e);
        }
    };
    if opts.strict {
        e.workload.check_strict()?;
    }
    loaded(&e);
    if let Some(p) = &opts.platform {
        e.set_platform(p);
    }
    if let Some(d) = &opts.duration {
        e.duration_ns = Some(parse_duration(d)?);
    }
    for pair in &opts.set {
        e.set(pair, "--set")?;
    }
    Ok(e)
}

/// `schedlab run`.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub workload: Source,
    pub side: SideOptions,
    /// `--governor`: the `cpufreq.governor` switch, applied before `side.set`.
    pub governor: Option<String>,
    /// `TIME:KEY=VALUE` timed writes.
    pub set_at: Vec<String>,
    /// None: the experiment's first seed, else 0.
    pub seed: Option<u64>,
    pub reproducible: bool,
    pub trace: Option<PathBuf>,
    /// `--trace-events`: `all` or a comma-separated list.
    pub trace_events: Option<String>,
    /// `--trace-format`: `text` or `dat` (default: from the trace's name).
    pub trace_format: Option<String>,
    pub trace_counters: bool,
    pub rtapp_logs: Option<PathBuf>,
    pub plot: Option<PathBuf>,
}

impl RunRequest {
    /// The experiment the request runs, with its seed and outputs.
    pub fn prepare(&self, loaded: Loaded) -> Result<(Experiment, u64, Outputs), Error> {
        let mut exp = load_side(
            &self.workload,
            &SideOptions {
                set: Vec::new(),
                ..self.side.clone()
            },
            loaded,
        )?;
        if let Some(g) = &self.governor {
            exp.set(&format!("cpufreq.governor={g}"), "--governor")?;
        }
        for pair in &self.side.set {
            exp.set(pair, "--set")?;
        }
        for item in &self.set_at {
            exp.set_at_item(item)?;
        }
        let trace_events = match self.trace_events.as_deref() {
            Some(list) => EventSelection::parse(list)?,
            None => EventSelection::default(),
        };
        let trace_format = match self.trace_format.as_deref() {
            Some(f) => TraceFormat::parse(f)?,
            None => TraceFormat::Auto,
        };
        let outputs = Outputs {
            trace: self.trace.clone(),
            trace_events,
            trace_format,
            trace_counters: self.trace_counters,
            rtapp_logs: self.rtapp_logs.clone(),
            plot: self.plot.clone(),
        };
        let seed = self
            .seed
            .unwrap_or_else(|| exp.seeds.first().copied().unwrap_or(0));
        Ok((exp, seed, outputs))
    }
}

/// The plat_info.yml a run's trace gets (`--trace`): the platform and the run's kernel
/// settings, as LISA's `PlatformInfo` reads them.
pub fn run_plat_info(exp: &Experiment) -> Result<String, Error> {
    let (platform, variant) = exp.build()?;
    let info = crate::report::plat_info::RunInfo::new(
        &platform,
        &variant,
        exp.workload.global.calibration,
    );
    Ok(crate::report::plat_info::run_plat_info_yaml(
        &platform, &info,
    ))
}

/// `schedlab compare`.
#[derive(Debug, Clone, Default)]
pub struct CompareRequest {
    /// The first is the base the others are compared with.
    pub sides: Vec<Source>,
    /// More sides: the first with these `KEY=VALUE …` switches (`--vs`).
    pub vs: Vec<String>,
    pub side: SideOptions,
    /// Seeds 0..N (default: the first side's seeds, else 5).
    pub runs: Option<u64>,
    /// Only these metrics, by name (`iops`) or with their workload (`io.iops`).
    pub metrics: Vec<String>,
    /// Print Min, Max and CoeffVar rows too.
    pub stats: bool,
}

impl CompareRequest {
    /// The sides as experiments, and the seeds each runs.
    pub fn prepare(&self, loaded: Loaded) -> Result<(Vec<Experiment>, Vec<u64>), Error> {
        let mut sides = Vec::new();
        for s in &self.sides {
            sides.push(load_side(s, &self.side, loaded)?);
        }
        for vs in &self.vs {
            let Some(first) = sides.first() else { break };
            let mut side = first.clone();
            for pair in vs.split_whitespace() {
                side.set(pair, "--vs")?;
            }
            side.name = vs.clone();
            sides.push(side);
        }
        if sides.len() < 2 {
            return Err(InputError::new(
                "compare",
                "the sides",
                "two or more sides (files, or a file and --vs KEY=VALUE)",
                if sides.is_empty() { "none" } else { "one" },
            )
            .into());
        }
        let seeds: Vec<u64> = match self.runs {
            Some(n) if !(1..=experiment::MAX_RUNS).contains(&n) => {
                return Err(InputError::new(
                    "compare",
                    "runs",
                    format!("1..={}", experiment::MAX_RUNS),
                    n.to_string(),
                )
                .into())
            }
            Some(n) => (0..n).collect(),
            None if sides[0].seeds.len() > 1 => sides[0].seeds.clone(),
            None => (0..5).collect(),
        };
        Ok((sides, seeds))
    }

    /// Run every side over the seeds (in parallel; the numbers do not depend on the thread
    /// count), calling `tick` after each run, and compare them.
    pub fn run(
        &self,
        sides: &[Experiment],
        seeds: &[u64],
        tick: &(dyn Fn() + Sync),
    ) -> Result<Comparison, Error> {
        let results = experiment::run_sides_with(sides, seeds, tick)?;
        let named: Vec<(String, Vec<Results>)> =
            sides.iter().map(|s| s.name.clone()).zip(results).collect();
        let mut cmp = crate::report::compare::compare(&named);
        cmp.stats = self.stats;
        if !self.metrics.is_empty() {
            cmp.metrics.retain(|m| {
                let leaf = m.metric.rsplit('.').next().unwrap_or(&m.metric);
                self.metrics.iter().any(|f| *f == m.metric || f == leaf)
            });
            if cmp.metrics.is_empty() {
                return Err(InputError::new(
                    "--metric",
                    self.metrics.join(", "),
                    "a metric of the runs (iops, energy_mj, …)",
                    "none of them",
                )
                .into());
            }
        }
        Ok(cmp)
    }
}

/// `schedlab sweep` (not `--merge`).
#[derive(Debug, Clone)]
pub struct SweepRequest {
    pub workload: Source,
    pub side: SideOptions,
    /// `KEY=V1,V2,…` each; none: the experiment's `[sweep]` table.
    pub params: Vec<String>,
    /// None: the experiment's first seed, else 0.
    pub seed: Option<u64>,
    /// `I/N`: only the points whose index is I modulo N.
    pub shard: Option<String>,
}

impl SweepRequest {
    /// The sweep, its grid and every point's switches checked before any point runs.
    pub fn prepare(&self, loaded: Loaded) -> Result<Sweep, Error> {
        let exp = load_side(&self.workload, &self.side, loaded)?;
        let params = if self.params.is_empty() {
            exp.sweep.clone()
        } else {
            self.params
                .iter()
                .map(|p| sweep::parse_param(p))
                .collect::<Result<Vec<_>, _>>()?
        };
        sweep::validate(&exp, &params)?;
        let shard = self
            .shard
            .as_deref()
            .map(sweep::parse_shard)
            .transpose()?
            .unwrap_or((0, 1));
        Ok(Sweep {
            seed: self
                .seed
                .unwrap_or_else(|| exp.seeds.first().copied().unwrap_or(0)),
            experiment: exp,
            params,
            shard,
        })
    }
}

/// One point of a sweep, on its own: what an outside executor (Dask, Ray, a batch job)
/// runs. `SweepRequest::points` makes them; `run_point` runs one.
#[derive(Debug, Clone)]
pub struct PointSpec {
    pub workload: Source,
    pub side: SideOptions,
    pub seed: u64,
    pub index: usize,
    pub params: BTreeMap<String, String>,
}

impl SweepRequest {
    /// The shard's points, each runnable alone (`run_point`), in grid order.
    pub fn points(&self) -> Result<Vec<PointSpec>, Error> {
        let spec = self.prepare(&|_| {})?;
        Ok(sweep::grid(&spec.params)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % spec.shard.1 == spec.shard.0)
            .map(|(index, params)| PointSpec {
                workload: self.workload.clone(),
                side: self.side.clone(),
                seed: spec.seed,
                index,
                params,
            })
            .collect())
    }
}

/// Run one point as `schedlab sweep` runs it: its failure is in its row.
pub fn run_point(spec: &PointSpec) -> Point {
    match load_side(&spec.workload, &spec.side, &|_| {}) {
        Ok(exp) => sweep::run_point(&exp, spec.seed, spec.index, spec.params.clone()),
        Err(e) => sweep::failed_point(spec.index, spec.params.clone(), &e),
    }
}

/// A sweep's outcome: an error when every point failed (an input error when every point's
/// was the input's), else fine — the failures are in their rows.
pub fn check_points(points: &[Point]) -> Result<(), Error> {
    let failed = points.iter().filter(|p| p.status != "ok").count();
    if failed > 0 && failed == points.len() {
        let first = &points[0];
        if points.iter().all(|p| p.input_error) {
            return Err(InputError::new(
                "sweep",
                format!("every one of the {failed} points"),
                "a point that runs",
                first.status.clone(),
            )
            .into());
        }
        return Err(Error::Failed(format!(
            "every one of the {failed} points failed; the first: {}",
            first.status
        )));
    }
    Ok(())
}

/// `schedlab sweep --merge DIR…`: the points of every points*.json file in the directories.
pub fn read_shards(dirs: &[PathBuf]) -> Result<Vec<Point>, Error> {
    let mut shards = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            InputError::new(
                dir.display().to_string(),
                "the directory",
                "a directory of points*.json",
                e.to_string(),
            )
        })?;
        for e in entries.flatten() {
            let path = e.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.starts_with("points") && name.ends_with(".json") {
                shards.push(read_points(&path)?);
            }
        }
    }
    if shards.is_empty() {
        return Err(InputError::new(
            "--merge",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            "points*.json files written by `schedlab sweep`",
            "none",
        )
        .into());
    }
    Ok(sweep::merge(shards))
}

/// A points JSON file `schedlab sweep` wrote.
fn read_points(path: &Path) -> Result<Vec<Point>, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        InputError::new(
            path.display().to_string(),
            "the file",
            "a readable points JSON",
            e.to_string(),
        )
    })?;
    parse_points(&text, &path.display().to_string())
}

/// Points JSON (as `schedlab sweep` writes it); `file` names it in messages.
pub fn parse_points(text: &str, file: &str) -> Result<Vec<Point>, InputError> {
    serde_json::from_str(text).map_err(|e| {
        InputError::new(
            file,
            format!("line {} column {}", e.line(), e.column()),
            "a sweep's points JSON",
            e.to_string(),
        )
    })
}

/// The built-in platforms: name, number of CPUs, description.
pub fn platforms() -> Vec<(&'static str, usize, String)> {
    crate::platform::preset_names()
        .iter()
        .map(|n| {
            let p = crate::platform::preset(n).expect("every preset name has a preset");
            (*n, p.nr_cpus(), p.description)
        })
        .collect()
}

/// The plat_info.yml of a run on `p` with its default kernel and no rt-app calibration: what
/// LISA's rt-app workload generator (`RTAConf.from_profile`) needs to write a workload for it.
pub fn platform_plat_info(p: &crate::platform::Platform) -> String {
    let variant = crate::kernel::Variant::for_platform(p);
    let info =
        crate::report::plat_info::RunInfo::new(p, &variant, crate::workload::Calibration::None);
    crate::report::plat_info::run_plat_info_yaml(p, &info)
}

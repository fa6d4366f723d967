//! Trace replay: a trace recorded on a machine (the ftrace text `trace-cmd report` prints, or
//! a `trace.dat` through `trace-cmd`) → the rt-app workload its tasks ran (`schedlab gen
//! from-trace`) → a run of it under any kernel variant (`schedlab replay`), with a table of
//! what changed against the trace.
//!
//! The trace crate's `replay/` reads the lines, turns records into per-task steps (work,
//! blocks, wake-ups, forks) and writes the workload; here the commands run it, and
//! `fidelity.rs` compares a replay with the trace.

pub mod fidelity;

pub use schedlab_trace::replay::{extract, reader, timeline};

use crate::error::InputError;
use crate::experiment::{self, Experiment};
use crate::platform::Platform;
use crate::Error;
use extract::{Extraction, Filter};
use std::path::{Path, PathBuf};
use timeline::{CpuInfo, Timeline, Window};

/// What to extract from a trace (`schedlab gen from-trace`, `schedlab replay`).
#[derive(Debug, Clone, clap::Args)]
pub struct FromTraceArgs {
    /// The trace: `trace-cmd report` text (what `schedlab run --trace` writes) or a
    /// trace.dat (read through `trace-cmd report`).
    pub trace: PathBuf,
    /// The traced machine's platform (preset or file) when no `<trace>.plat_info.yml` is
    /// beside the trace (default juno-r0).
    #[arg(long = "trace-platform", value_name = "P")]
    pub trace_platform: Option<String>,
    /// Start of the window to extract (time in the trace, e.g. 1.5s).
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,
    /// End of the window to extract.
    #[arg(long, value_name = "TIME")]
    pub to: Option<String>,
    /// Keep only tasks whose comm matches (`*` wildcards) or with this pid (repeatable).
    #[arg(long = "task", value_name = "PATTERN|PID")]
    pub tasks: Vec<String>,
    /// Drop tasks that ran less than this in the trace (e.g. 1ms).
    #[arg(long = "min-runtime", value_name = "TIME")]
    pub min_runtime: Option<String>,
    /// Pin each task to the CPUs it ran on in the trace (the trace does not say what
    /// affinity or cpuset a task had).
    #[arg(long)]
    pub pin: bool,
}

/// `schedlab gen from-trace` (a generator: `GenCommand::FromTrace`).
#[derive(Debug, Clone, clap::Args)]
pub struct GenFromTraceArgs {
    #[command(flatten)]
    pub extract: FromTraceArgs,
    /// Print the fidelity report (trace vs a replay under the platform's default variant)
    /// to standard error.
    #[arg(long)]
    pub report: bool,
}

/// `schedlab replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub extract: FromTraceArgs,
    /// Platform to replay on (default: the trace's).
    #[arg(long)]
    pub platform: Option<String>,
    /// A kernel switch KEY=VALUE (repeatable), as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A timed write TIME:KEY=VALUE (repeatable), as for `run`.
    #[arg(long = "set-at", value_name = "TIME:KEY=VALUE")]
    pub set_at: Vec<String>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the comparison as JSON to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write the replay's own trace to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,
}

/// Whether a `compare` side or a workload argument is a trace: a `.dat` file, or text whose
/// first line that is not a comment is trace-cmd's `cpus=N` (or `version = N`) header.
pub fn is_trace(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e == "dat") {
        return true;
    }
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = [0u8; 4096];
    let n = std::io::Read::read(&mut f, &mut buf).unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    head.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("cpus=") || l.starts_with("version ="))
}

/// A trace's text: the file, or for a trace.dat what `trace-cmd report -t` prints of it.
pub fn load_text(path: &Path) -> Result<String, InputError> {
    let file = path.display().to_string();
    let dat = path.extension().is_some_and(|e| e == "dat")
        || std::fs::read(path)
            .map(|b| b.starts_with(b"\x17\x08\x44tracing"))
            .unwrap_or(false);
    let bytes = if dat {
        let out = std::process::Command::new("trace-cmd")
            .arg("report")
            // The times in ns (`-t`), as the text trace has them; without it, µs.
            .arg("-t")
            .arg("-i")
            .arg(path)
            .output()
            .map_err(|e| {
                InputError::new(
                    &file,
                    "the file",
                    "trace-cmd installed to read a trace.dat (or the text of `trace-cmd report`)",
                    format!("trace-cmd could not run: {e}"),
                )
            })?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr);
            return Err(InputError::new(
                &file,
                "the file",
                "a trace.dat trace-cmd can report",
                msg.lines().next().unwrap_or("trace-cmd failed").to_string(),
            ));
        }
        out.stdout
    } else {
        std::fs::read(path)
            .map_err(|e| InputError::new(&file, "the file", "a readable trace", e.to_string()))?
    };
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        InputError::new(&file, format!("line {line}"), "UTF-8 text", "invalid bytes")
    })
}

/// The traced machine: the LISA `plat_info.yml` beside the trace, else `platform`.
/// Returns the CPUs and, when the platform is known by name, its name.
pub fn trace_platform(
    trace: &Path,
    platform: Option<&str>,
) -> Result<(CpuInfo, Option<String>), InputError> {
    if platform.is_none() {
        let yml = crate::plat_info_path(trace);
        if let Ok(text) = std::fs::read_to_string(&yml) {
            let (info, name) = plat_info(&text, &yml.display().to_string())?;
            let preset = name.filter(|n| crate::platform::preset(n).is_some());
            // A preset's file has what a plat_info lacks: the cores' costs, the caches.
            if let Some(p) = preset.as_deref().and_then(|n| Platform::resolve(n).ok()) {
                if p.cpus
                    .iter()
                    .map(|c| c.capacity_orig)
                    .eq(info.capacity.iter().copied())
                {
                    return Ok((CpuInfo::from_platform(&p), preset));
                }
            }
            return Ok((info, preset));
        }
    }
    let name = platform.unwrap_or("juno-r0");
    let p = Platform::resolve(name)?;
    Ok((CpuInfo::from_platform(&p), Some(name.to_string())))
}

/// The CPUs of a LISA `plat_info.yml` (`cpu-capacities: orig:`, `freqs:`) and its `name`.
pub fn plat_info(text: &str, file: &str) -> Result<(CpuInfo, Option<String>), InputError> {
    let mut name = None;
    let mut caps: Vec<(usize, u32)> = Vec::new();
    let mut freqs: Vec<(usize, u32)> = Vec::new();
    // The section (by key) the indented `N: value` lines belong to.
    let mut section = "";
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "name" if name.is_none() => {
                name = Some(v.trim_matches('"').trim_matches('\'').to_string())
            }
            "orig" => section = "orig",
            "freqs" => section = "freqs",
            "cpu-capacities" | "writeable" => {}
            _ => match k.parse::<usize>() {
                Ok(cpu) if section == "orig" => {
                    if let Ok(c) = v.parse() {
                        caps.push((cpu, c));
                    }
                }
                Ok(cpu) if section == "freqs" => {
                    let max = v
                        .trim_matches(|c| c == '[' || c == ']')
                        .split(',')
                        .filter_map(|f| f.trim().parse::<u32>().ok())
                        .max();
                    if let Some(m) = max {
                        freqs.push((cpu, m));
                    }
                }
                Ok(_) => {}
                Err(_) => {
                    if !raw.starts_with("      ") {
                        section = "";
                    }
                }
            },
        }
    }
    if caps.is_empty() {
        return Err(InputError::new(
            file,
            "cpu-capacities.orig",
            "the CPUs' capacities (LISA's plat_info `cpu-capacities: orig:`)",
            "none",
        ));
    }
    let n = caps.iter().map(|c| c.0).max().unwrap_or(0) + 1;
    let mut capacity = vec![1024; n];
    for (c, v) in caps {
        capacity[c] = v;
    }
    let mut max_khz = vec![0; n];
    // A plat_info names no micro-architecture, caches or tick: the costs of an unknown core
    // at the highest frequency it gives, the fallback memory, one LLC per capacity (a
    // cluster), the default tick rate, EAS on an asymmetric system.
    let costs =
        crate::platform::Costs::for_uarch("", freqs.iter().map(|f| f.1).max().unwrap_or(1_000_000));
    let mut clusters: Vec<u32> = capacity.clone();
    clusters.sort_unstable();
    clusters.dedup();
    let llc = capacity
        .iter()
        .map(|c| clusters.binary_search(c).unwrap_or(0))
        .collect();
    let nr_pd = clusters.len();
    for (c, f) in freqs {
        if c < n {
            max_khz[c] = f;
        }
    }
    Ok((
        CpuInfo {
            capacity,
            init_khz: max_khz.clone(),
            max_khz,
            costs,
            memory: crate::platform::Memory::fallback(),
            llc,
            nr_pd,
            eas: nr_pd > 1,
            tick_ns: 1_000_000_000 / crate::kernel::variant::Variant::default().hz as u64,
        },
        name,
    ))
}

fn time_arg(s: &Option<String>, flag: &str) -> Result<Option<u64>, InputError> {
    s.as_deref()
        .map(|v| experiment::parse_duration(v, flag, v))
        .transpose()
}

/// A trace read with the options: the timeline and its traced machine.
pub struct Loaded {
    pub timeline: Timeline,
    pub filter: Filter,
    pub info: CpuInfo,
    /// The traced platform's name, when it is a preset or was given.
    pub platform: Option<String>,
}

impl FromTraceArgs {
    pub fn load(&self) -> Result<Loaded, InputError> {
        let (info, platform) = trace_platform(&self.trace, self.trace_platform.as_deref())?;
        let text = load_text(&self.trace)?;
        let file = self.trace.display().to_string();
        let window = Window {
            from: time_arg(&self.from, "--from")?,
            to: time_arg(&self.to, "--to")?,
        };
        let timeline = timeline::read(&text, &file, &info, window)?;
        if timeline.nr_cpus > info.capacity.len() {
            return Err(InputError::new(
                &file,
                "cpus=",
                format!(
                    "at most the {} CPUs of the trace's platform (a plat_info.yml beside it, or --trace-platform)",
                    info.capacity.len()
                ),
                format!("cpus={}", timeline.nr_cpus),
            ));
        }
        let filter = Filter {
            tasks: self.tasks.clone(),
            min_runtime_ns: time_arg(&self.min_runtime, "--min-runtime")?.unwrap_or(0),
            affinity: self.pin,
        };
        Ok(Loaded {
            timeline,
            filter,
            info,
            platform,
        })
    }
}

impl Loaded {
    pub fn extraction(&self) -> Extraction<'_> {
        Extraction::new(&self.timeline, &self.filter)
    }

    /// The workload as rt-app JSON text, with a header comment naming the source.
    pub fn workload_text(&self, ext: &Extraction) -> String {
        let tl = &self.timeline;
        let (t, timer, irq) = ext.attribution();
        format!(
            "/*\n * schedlab gen from-trace: the tasks of {}\n * ({} of {} tasks kept, {:.6} s to {:.6} s of the trace; platform {}).\n * Wake-ups: {t} by tasks (send/recv), {timer} by timers (timer), {irq} by\n * other interrupts or left-out tasks (sleep, iorun). run is µs at capacity 1024.\n */\n{}\n",
            tl.file,
            ext.kept.iter().filter(|&&k| k).count(),
            tl.tasks.len(),
            tl.start as f64 / 1e9,
            tl.end as f64 / 1e9,
            self.platform.as_deref().unwrap_or("from plat_info.yml"),
            ext.workload_json()
        )
    }

    /// The workload parsed, ready to run.
    pub fn experiment(&self, ext: &Extraction, platform: &str) -> Result<Experiment, InputError> {
        let file = format!("{} (extracted)", self.timeline.file);
        let w = crate::workload::parse_workload(&self.workload_text(ext), &file)?;
        let mut e = Experiment::from_workload(w, platform);
        e.name = self
            .timeline
            .file
            .rsplit('/')
            .next()
            .unwrap_or("trace")
            .to_string();
        e.duration_ns = Some(self.timeline.end - self.timeline.start);
        Ok(e)
    }

    /// The platform to replay on when none is named.
    pub fn default_platform(&self) -> Result<String, InputError> {
        self.platform.clone().ok_or_else(|| {
            InputError::new(
                &self.timeline.file,
                "the platform",
                "--platform (the trace's plat_info.yml names no schedlab preset)",
                "none",
            )
        })
    }
}

/// `compare`'s hook: a trace as a side, replayed on the trace's platform, else `fallback`
/// (`--platform` still overrides it).
pub fn trace_side(arg: &str, fallback: &str) -> Result<Experiment, InputError> {
    let args = FromTraceArgs {
        trace: PathBuf::from(arg),
        trace_platform: None,
        from: None,
        to: None,
        tasks: Vec::new(),
        min_runtime: None,
        pin: false,
    };
    let l = args.load()?;
    let ext = l.extraction();
    let p = l.platform.clone().unwrap_or_else(|| fallback.to_string());
    l.experiment(&ext, &p)
}

/// `schedlab gen from-trace`: the workload text (and the fidelity report, if asked, on
/// standard error).
pub fn gen_from_trace(args: &GenFromTraceArgs) -> Result<String, Error> {
    let l = args.extract.load()?;
    let ext = l.extraction();
    if args.report {
        let p = l.default_platform()?;
        let exp = l.experiment(&ext, &p)?;
        let r = fidelity::run(&l, &ext, &exp, 0, None)?;
        eprint!("{}", fidelity::render(&r));
    }
    Ok(l.workload_text(&ext))
}

/// `schedlab replay`: extract, run with the switches, and the table of trace vs replay (and
/// its JSON when `--json` asks for it).
pub fn replay(args: &ReplayArgs) -> Result<(String, Option<String>), Error> {
    let r = replay_report(args)?;
    let json = args
        .json
        .as_ref()
        .map(|_| serde_json::to_string_pretty(&r).expect("report serialises"));
    Ok((fidelity::render(&r), json))
}

/// The replay's comparison with the trace.
pub fn replay_report(args: &ReplayArgs) -> Result<fidelity::Report, Error> {
    let l = args.extract.load()?;
    let ext = l.extraction();
    let p = match &args.platform {
        Some(p) => p.clone(),
        None => l.default_platform()?,
    };
    let mut exp = l.experiment(&ext, &p)?;
    for pair in &args.set {
        exp.set(pair, "--set")?;
    }
    for item in &args.set_at {
        exp.set_at_item(item)?;
    }
    fidelity::run(&l, &ext, &exp, args.seed, args.trace_out.as_deref())
}

//! Trace replay: a trace recorded on a machine (the ftrace text `trace-cmd report` prints, or
//! a `trace.dat` through `trace-cmd`) → the rt-app workload its tasks ran (`schedlab gen
//! from-trace`) → a run of it under any kernel variant (`schedlab replay`), with a table of
//! what changed against the trace.
//!
//! The trace crate's `replay/` reads the lines, turns records into per-task steps (work,
//! blocks, wake-ups, forks) and writes the workload; here the commands run it, and
//! `fidelity.rs` compares a replay with the trace.

pub mod fidelity;
pub mod plat_info;

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
    /// The traced machine's platform (preset or file) when neither `<trace>.platform.toml`
    /// (what `schedlab host record` writes) nor `<trace>.plat_info.yml` is beside the trace
    /// (default juno-r0).
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
    /// Pin each run to the CPU it ran on in the trace: the task moves where the trace moved
    /// it (a `sched_setaffinity` before each move), so the replay keeps the trace's
    /// placement rather than making its own.
    #[arg(long = "pin-runs")]
    pub pin_runs: bool,
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
    /// The CPUs' frequencies: chosen by the replay's governor (`model`), or set as the trace
    /// shows them (`trace`: the userspace governor, each policy's `scaling_setspeed` written
    /// at the start and at each of the trace's `cpu_frequency` changes).
    #[arg(long, value_enum, default_value_t = FreqSource::Model)]
    pub freq: FreqSource,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the comparison as JSON to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write the replay's own trace to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,
}

/// Where a replay's frequencies come from (`--freq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FreqSource {
    /// The replay's governor (the platform's default, or `--set cpufreq.governor=`).
    Model,
    /// The trace's frequencies, through the userspace governor.
    Trace,
}

/// The trace's frequencies as writes to each policy of `platform` (`scaling_setspeed`, at
/// the time from the window's start): the frequency the window starts at, then each change
/// the trace shows on any CPU of the policy.
fn traced_frequencies(tl: &Timeline, platform: &Platform) -> Vec<(u64, String)> {
    let mut writes = Vec::new();
    for d in &platform.freq_domains {
        let head = d.cpus[0];
        let key = format!("cpufreq.policy{head}.scaling_setspeed");
        let mut last = tl.start_khz.get(head).copied();
        if let Some(khz) = last {
            writes.push((0, format!("{key}={khz}")));
        }
        for &(ts, cpu, khz) in &tl.freq_changes {
            if d.cpus.contains(&cpu) && last != Some(khz) {
                writes.push((ts - tl.start, format!("{key}={khz}")));
                last = Some(khz);
            }
        }
    }
    writes
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

/// The traced machine.
pub struct TracePlatform {
    /// What the extraction needs of it.
    pub info: CpuInfo,
    /// The preset to replay on when none is named: the one given or named, or the nearest
    /// to the plat_info.yml.
    pub preset: Option<String>,
    /// The platform made of the plat_info.yml and that preset, when it is not the preset
    /// itself (`plat_info::derive`).
    pub derived: Option<Platform>,
    /// What was taken from where, a line each.
    pub notes: Vec<String>,
}

/// The traced machine: `platform` if given, else the platform file `schedlab host record`
/// wrote beside the trace (the machine itself), else the LISA `plat_info.yml` beside it (on
/// the nearest preset, `plat_info::derive`), else juno-r0.
pub fn trace_platform(trace: &Path, platform: Option<&str>) -> Result<TracePlatform, InputError> {
    let recorded = crate::platform_file_path(trace);
    let (name, notes) = match platform {
        Some(name) => (name.to_string(), Vec::new()),
        None if recorded.is_file() => {
            let name = recorded.display().to_string();
            let note =
                format!("platform: {name}, beside the trace (`schedlab host record` wrote it)");
            (name, vec![note])
        }
        None => {
            if let Some(tp) = plat_info_platform(trace)? {
                return Ok(tp);
            }
            ("juno-r0".to_string(), Vec::new())
        }
    };
    let p = Platform::resolve(&name)?;
    Ok(TracePlatform {
        info: CpuInfo::from_platform(&p),
        preset: Some(name),
        derived: None,
        notes,
    })
}

/// The traced machine from the LISA `plat_info.yml` beside the trace, if there is one.
fn plat_info_platform(trace: &Path) -> Result<Option<TracePlatform>, InputError> {
    let yml = crate::plat_info_path(trace);
    let Ok(text) = std::fs::read_to_string(&yml) else {
        return Ok(None);
    };
    let file = yml.display().to_string();
    let pi = plat_info::read(&text, &file)?;
    Ok(Some(match plat_info::derive(&pi, &file)? {
        Some(d) => {
            let preset = Platform::resolve(&d.preset)?;
            let mut same = d.platform.clone();
            same.name = preset.name.clone();
            same.description = preset.description.clone();
            if same == preset {
                // The plat_info of a preset (schedlab's own traces): the preset.
                TracePlatform {
                    info: CpuInfo::from_platform(&preset),
                    notes: vec![format!(
                        "platform: {file} describes the preset {}",
                        d.preset
                    )],
                    preset: Some(d.preset),
                    derived: None,
                }
            } else {
                TracePlatform {
                    info: CpuInfo::from_platform(&d.platform),
                    preset: Some(d.preset),
                    derived: Some(d.platform),
                    notes: d.notes,
                }
            }
        }
        None => TracePlatform {
            info: cpu_info(&pi),
            preset: None,
            notes: vec![format!(
                "platform: {file} alone (no preset has its {} CPUs in its frequency domains): \
                 the costs of an unknown core, no idle states; replay with --platform",
                pi.capacities.len()
            )],
            derived: None,
        },
    }))
}

/// The CPUs of a plat_info no preset fits: its capacities and frequencies (cpufreq starting
/// at the highest), the costs of an unknown core at the highest frequency it gives, the
/// fallback memory, one LLC and performance domain per frequency domain (or per capacity),
/// the default tick rate, EAS on an asymmetric system.
fn cpu_info(pi: &plat_info::PlatInfo) -> CpuInfo {
    let n = pi.capacities.len();
    let max_khz: Vec<u32> = (0..n)
        .map(|c| {
            pi.freqs
                .get(&c)
                .and_then(|f| f.last().copied())
                .unwrap_or(0)
        })
        .collect();
    let costs = crate::platform::Costs::for_uarch(
        "",
        max_khz.iter().copied().max().unwrap_or(1_000_000).max(1),
    );
    let mut llc = vec![0; n];
    let nr_pd;
    if pi.freq_domains.is_empty() {
        let mut clusters: Vec<u32> = pi.capacities.clone();
        clusters.sort_unstable();
        clusters.dedup();
        for (c, cap) in pi.capacities.iter().enumerate() {
            llc[c] = clusters.binary_search(cap).unwrap_or(0);
        }
        nr_pd = clusters.len();
    } else {
        for (d, cpus) in pi.freq_domains.iter().enumerate() {
            for &c in cpus {
                llc[c] = d;
            }
        }
        nr_pd = pi.freq_domains.len();
    }
    let asymmetric = pi.capacities.iter().any(|&c| c != pi.capacities[0]);
    CpuInfo {
        capacity: pi.capacities.clone(),
        min_khz: (0..n)
            .map(|c| {
                pi.freqs
                    .get(&c)
                    .and_then(|f| f.first().copied())
                    .unwrap_or(0)
            })
            .collect(),
        init_khz: max_khz.clone(),
        max_khz,
        costs,
        memory: crate::platform::Memory::fallback(),
        llc,
        nr_pd,
        eas: nr_pd > 1 && asymmetric,
        tick_ns: 1_000_000_000 / crate::kernel::variant::Variant::default().hz as u64,
        idle_states: vec![Vec::new(); n],
    }
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
    /// The preset to replay on when none is named (`TracePlatform::preset`).
    pub platform: Option<String>,
    /// The traced platform made of its plat_info.yml, when it is not a preset.
    pub derived: Option<Platform>,
    /// What the traced platform was made of (when not a preset) and what the trace left to
    /// assumption, a line each.
    pub notes: Vec<String>,
}

impl FromTraceArgs {
    pub fn load(&self) -> Result<Loaded, InputError> {
        let tp = trace_platform(&self.trace, self.trace_platform.as_deref())?;
        let info = tp.info;
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
                    "at most the {} CPUs of the trace's platform (a platform.toml or plat_info.yml beside it, or --trace-platform)",
                    info.capacity.len()
                ),
                format!("cpus={}", timeline.nr_cpus),
            ));
        }
        let filter = Filter {
            tasks: self.tasks.clone(),
            min_runtime_ns: time_arg(&self.min_runtime, "--min-runtime")?.unwrap_or(0),
            affinity: self.pin,
            per_run: self.pin_runs,
        };
        let notes = tp
            .notes
            .into_iter()
            .chain(timeline.notes.iter().cloned())
            .collect();
        Ok(Loaded {
            timeline,
            filter,
            info,
            notes,
            platform: tp.preset,
            derived: tp.derived,
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
        let platform = match (&self.derived, &self.platform) {
            (Some(d), Some(p)) => format!("{} (plat_info.yml on {p})", d.name),
            (None, Some(p)) => p.clone(),
            (_, None) => "from plat_info.yml".into(),
        };
        let mut notes = String::new();
        for n in self.notes.iter().chain(&ext.left_to_model()) {
            notes.push_str(" * ");
            notes.push_str(&n.replace("*/", "* /"));
            notes.push('\n');
        }
        format!(
            "/*\n * schedlab gen from-trace: the tasks of {}\n * ({} of {} tasks kept, {:.6} s to {:.6} s of the trace; platform {}).\n * Wake-ups: {t} by tasks (send/recv), {timer} by timers (timer), {irq} by\n * other interrupts or left-out tasks (sleep, iorun). run is µs at capacity 1024.\n{notes} */\n{}\n",
            tl.file,
            ext.kept.iter().filter(|&&k| k).count(),
            tl.tasks.len(),
            tl.start as f64 / 1e9,
            tl.end as f64 / 1e9,
            platform,
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

    /// The preset to replay on when none is named (with `derived` put in, if any).
    pub fn default_platform(&self) -> Result<String, InputError> {
        self.platform.clone().ok_or_else(|| {
            InputError::new(
                &self.timeline.file,
                "the platform",
                "--platform (no schedlab preset has the CPUs and frequency domains of the trace's plat_info.yml)",
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
        pin_runs: false,
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
    for n in l.notes.iter().chain(&ext.left_to_model()) {
        eprintln!("{n}");
    }
    if args.report {
        let p = l.default_platform()?;
        let exp = l.experiment(&ext, &p)?;
        let r = fidelity::run(&l, &ext, &exp, 0, None, l.derived.as_ref())?;
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
    if args.freq == FreqSource::Trace {
        let (platform, _) = exp.build()?;
        exp.set("cpufreq.governor=userspace", "--freq trace")?;
        exp.set_at_all(&traced_frequencies(&l.timeline, &platform), "--freq trace")?;
    }
    for pair in &args.set {
        exp.set(pair, "--set")?;
    }
    for item in &args.set_at {
        exp.set_at_item(item)?;
    }
    if args.freq == FreqSource::Trace {
        let (_, v) = exp.build()?;
        if v.governor != crate::kernel::cpufreq::GovernorKind::Userspace {
            return Err(InputError::new(
                "--set",
                "cpufreq.governor",
                "userspace with --freq trace (it writes the trace's frequencies through it)",
                v.governor.name(),
            )
            .into());
        }
    }
    // The traced platform made of its plat_info.yml, unless another is named.
    let derived = l.derived.as_ref().filter(|_| args.platform.is_none());
    fidelity::run(
        &l,
        &ext,
        &exp,
        args.seed,
        args.trace_out.as_deref(),
        derived,
    )
}

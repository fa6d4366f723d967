//! The `schedlab` command line: parse, call the library, print. Exit codes: 0 success,
//! 2 invalid input, 3 an output could not be written, 1 internal error.

use clap::{Parser, Subcommand};
use schedlab::api::{self, CompareRequest, RunRequest, SideOptions, Source, SweepRequest};
use schedlab::error::InputError;
use schedlab::error::OneLine;
use schedlab::experiment::Experiment;
use schedlab::platform::Platform;
use schedlab::Error;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Standard output, as `print!`; a reader that went away (`schedlab … | head`) ends the
/// program quietly, as other command-line tools do, instead of a panic.
macro_rules! out {
    ($($arg:tt)*) => { emit(&format!($($arg)*)) };
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($arg:tt)*) => { emit(&(format!($($arg)*) + "\n")) };
}

mod host;

fn emit(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("schedlab: standard output: {e}");
        std::process::exit(3);
    }
}

#[derive(Parser)]
#[command(
    name = "schedlab",
    version,
    about = "Simulate the Linux scheduler's utilization-driven machinery"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a workload and print a summary.
    Run(RunArgs),
    /// Run a workload with and without some switches over several seeds, and print an
    /// mmtests-style comparison (means, stddev, % difference, * where Welch's t-test says
    /// significant at 95%).
    Compare(CompareArgs),
    /// Run a workload over a grid of switch values (in parallel), writing a CSV and a JSON
    /// row per point; or join the JSON of shards run elsewhere (--merge).
    Sweep(SweepArgs),
    /// Run the bundled reproductions of the seeds' result tables (experiments/*.toml with a
    /// [reproduce] table), all or the one named, and print ours beside the seed's.
    Reproduce(ReproduceArgs),
    /// List the switches `--set` takes (those whose key contains PATTERN): default, type,
    /// values and meaning.
    Switches {
        /// Part of a key, e.g. `uclamp` or `kernel.`.
        pattern: Option<String>,
        /// Print them as the Markdown table of docs/switches.md.
        #[arg(long)]
        markdown: bool,
    },
    /// Validate a workload without simulating it.
    Check {
        /// Experiment file (.toml), rt-app JSON file, or - for standard input.
        workload: String,
        /// Also check CPU numbers against this platform (default juno-r0, or the
        /// experiment's).
        #[arg(long)]
        platform: Option<String>,
        /// Report warnings (keys rt-app ignores, resumes of nobody) as errors.
        #[arg(long)]
        strict: bool,
    },
    /// List the built-in platforms, or show one.
    Platforms { name: Option<String> },
    /// Print a generated rt-app workload (JSON) to standard output.
    #[command(subcommand)]
    Gen(schedlab::gen::GenCommand),
    /// Extract a trace's tasks and run them under this kernel (with any switch): a table of
    /// each task's runtime, wake-ups and latency and each CPU's frequency and energy against
    /// the trace.
    Replay(schedlab::replay::ReplayArgs),
    /// What each kernel path costs on a platform at a frequency, with who pays, in ns and
    /// cycles; and one wake-up step by step (machine.rs's rules with representative inputs).
    ExplainCost(schedlab::report::ExplainCostArgs),
    /// The machine schedlab runs on: its platform file, and traces of commands run on it.
    #[command(subcommand)]
    Host(host::HostCommand),
}

fn replay(args: schedlab::replay::ReplayArgs) -> Result<(), Error> {
    let (table, json) = schedlab::replay::replay(&args)?;
    match (args.json.as_deref(), json) {
        (Some(path), Some(json)) => output(Some(path), || json, || table),
        _ => output(None, String::new, || table),
    }
}

#[derive(clap::Args)]
struct CompareArgs {
    /// The sides: experiment files (.toml) or rt-app workloads (- for standard input); the
    /// first is the base the others are compared with.
    #[arg(required = true)]
    sides: Vec<String>,
    /// One more side: the first side with these switches, "KEY=VALUE [KEY=VALUE…]"
    /// (repeatable: each --vs is a side).
    #[arg(long = "vs", value_name = "KEY=VALUE …")]
    vs: Vec<String>,
    /// Seeds per side (0..N; default: the first side's seeds, else 5).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    runs: Option<u64>,
    /// Platform of the workload sides (default juno-r0); overrides an experiment's.
    #[arg(long)]
    platform: Option<String>,
    /// Simulated time of each run, e.g. 5s.
    #[arg(long)]
    duration: Option<String>,
    /// Switches of every side, KEY=VALUE (repeatable; they win over the files').
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write the comparison as JSON to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Draw the metrics as bars with error bars (SVG) into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Only this metric (repeatable), by name (`iops`) or with its workload (`io.iops`).
    #[arg(long, value_name = "NAME")]
    metric: Vec<String>,
    /// Make the first warning (a key rt-app ignores, a resume of nobody) an error.
    #[arg(long)]
    strict: bool,
    /// Also print Min, Max and CoeffVar rows per metric, as mmtests' compare-kernels does.
    #[arg(long)]
    stats: bool,
}

#[derive(clap::Args)]
struct ReproduceArgs {
    /// The experiment's name or file stem (default: all).
    name: Option<String>,
    /// Where the bundled experiments are (default: ./experiments, else the source tree's).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The test tier's size: each reproduction's `quick` duration and runs.
    #[arg(long)]
    quick: bool,
    /// Write the outcomes as JSON to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// Experiment file (.toml) or rt-app JSON file, or - for standard input (not with
    /// --merge).
    #[arg(required_unless_present = "merge")]
    workload: Option<String>,
    /// A switch and its values, KEY=V1,V2,… (repeatable: the grid is every combination;
    /// default: the experiment's [sweep] table).
    #[arg(long = "param", value_name = "KEY=V1,V2,...")]
    param: Vec<String>,
    /// Switches of every point, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Platform of a workload (default juno-r0); overrides an experiment's.
    #[arg(long)]
    platform: Option<String>,
    #[arg(long)]
    duration: Option<String>,
    /// Seed of every point (default: the experiment's first seed, else 0).
    #[arg(long)]
    seed: Option<u64>,
    /// Run only the points whose index is I modulo N (for batch systems).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Join the points*.json files found in these directories.
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["workload", "param", "shard"])]
    merge: Vec<PathBuf>,
    /// Where to write points.csv and points.json (points-I-of-N.* for a shard).
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// Make the first warning (a key rt-app ignores, a resume of nobody) an error.
    #[arg(long)]
    strict: bool,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Experiment file (.toml), rt-app JSON file, or - for standard input (default:
    /// workloads/default.json, built in).
    workload: Option<String>,
    /// Platform preset or platform file (TOML/JSON); default juno-r0 or the experiment's.
    #[arg(long)]
    platform: Option<String>,
    /// Simulated time, e.g. 10s, 500ms (default: the experiment's duration, the workload's
    /// global.duration, else 10s).
    #[arg(long)]
    duration: Option<String>,
    /// cpufreq governor: schedutil, performance, powersave, ondemand or conservative.
    #[arg(long)]
    governor: Option<String>,
    /// A kernel switch KEY=VALUE (repeatable), e.g. config.HZ=1000,
    /// feature.GENTLE_FAIR_SLEEPERS=false.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A sysctl or cgroup write at a simulated time, TIME:KEY=VALUE (repeatable), e.g.
    /// 500ms:kernel.sched_util_clamp_min_rt_default=128 or 1s:cgroup./bg.cpu.uclamp.max=40.
    #[arg(long = "set-at", value_name = "TIME:KEY=VALUE")]
    set_at: Vec<String>,
    /// Seed of the run (default: the experiment's first seed, else 0).
    #[arg(long)]
    seed: Option<u64>,
    /// Write the JSON results to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write an ftrace trace to FILE (and FILE's stem .plat_info.yml beside it): trace-cmd
    /// report text, or trace-cmd's binary trace.dat when FILE ends in .dat.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The trace's format whatever its name: text or dat.
    #[arg(long, value_name = "FORMAT")]
    trace_format: Option<String>,
    /// Add utilisation, clamp and overutilized values to the text trace as atrace counter
    /// lines (tracing_mark_write: C|pid|name|value), which Perfetto shows as tracks.
    #[arg(long)]
    trace_counters: bool,
    /// Load-tracking events to add to the trace: all, or a comma-separated list of
    /// sched_pelt_se, sched_pelt_cfs, sched_util_est_se, sched_util_est_cfs,
    /// sched_cpu_capacity (LISA's kernel-module formats).
    #[arg(long, value_name = "LIST")]
    trace_events: Option<String>,
    /// Write rt-app style per-thread logs into DIR.
    #[arg(long, value_name = "DIR")]
    rtapp_logs: Option<PathBuf>,
    /// Leave host timing (wall_ns) out of the results, so runs compare byte for byte.
    #[arg(long)]
    reproducible: bool,
    /// Write SVG plots into DIR: per-CPU frequency, task utilization, per-CPU residency,
    /// wakeup-latency CDF.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Make the first warning (a key rt-app ignores, a resume of nobody) an error.
    #[arg(long)]
    strict: bool,
}

/// The command line's `--platform`, `--duration`, `--set` and `--strict`.
fn side_options(
    platform: Option<&str>,
    duration: Option<&str>,
    set: &[String],
    strict: bool,
) -> SideOptions {
    SideOptions {
        platform: platform.map(str::to_string),
        duration: duration.map(str::to_string),
        set: set.to_vec(),
        strict,
    }
}

/// The warnings of the loaded sides (they are also in the results), kept until the input
/// has been accepted: a command that fails on its input prints its error alone, as the last
/// and only `schedlab:` line.
#[derive(Default)]
struct Warnings(std::cell::RefCell<Vec<String>>);

impl Warnings {
    fn keep(&self, exp: &Experiment) {
        let mut kept = self.0.borrow_mut();
        kept.extend(exp.workload.warnings.iter().map(ToString::to_string));
    }

    /// Print what was kept.
    fn print(&self) {
        for w in self.0.borrow_mut().drain(..) {
            eprintln!("schedlab: {w}");
        }
    }
}

fn run(args: RunArgs) -> Result<(), Error> {
    let req = RunRequest {
        workload: args.workload.clone().map_or(Source::Default, Source::Arg),
        side: side_options(
            args.platform.as_deref(),
            args.duration.as_deref(),
            &args.set,
            args.strict,
        ),
        governor: args.governor.clone(),
        set_at: args.set_at.clone(),
        seed: args.seed,
        reproducible: args.reproducible,
        trace: args.trace.clone(),
        trace_events: args.trace_events.clone(),
        trace_format: args.trace_format.clone(),
        trace_counters: args.trace_counters,
        rtapp_logs: args.rtapp_logs.clone(),
        plot: args.plot.clone(),
    };
    let warnings = Warnings::default();
    let (exp, seed, outputs) = req.prepare(&|e| warnings.keep(e))?;
    let simulation = exp.start(seed, req.reproducible, &outputs)?;
    warnings.print();
    let results = simulation.run()?;
    // What the run itself found (forks that failed at threads_max), after the workload's.
    for w in &results.warnings[exp.workload.warnings.len()..] {
        eprintln!("schedlab: {w}");
    }
    let json = || serde_json::to_string_pretty(&results).expect("results serialise");
    output(args.json.as_deref(), json, || {
        schedlab::report::summary(&results)
    })?;
    Ok(())
}

fn compare(args: CompareArgs) -> Result<(), Error> {
    let req = CompareRequest {
        sides: args.sides.iter().cloned().map(Source::Arg).collect(),
        vs: args.vs.clone(),
        side: side_options(
            args.platform.as_deref(),
            args.duration.as_deref(),
            &args.set,
            args.strict,
        ),
        runs: args.runs,
        metrics: args.metric.clone(),
        stats: args.stats,
    };
    let warnings = Warnings::default();
    let (sides, seeds) = req.prepare(&|e| warnings.keep(e))?;
    let bar = progress((sides.len() * seeds.len()) as u64);
    let cmp = req.run(&sides, &seeds, &|| bar.inc(1));
    bar.finish_and_clear();
    let cmp = cmp?;
    warnings.print();
    if let Some(dir) = &args.plot {
        schedlab::report::plot::compare_bars(&cmp, dir)?;
    }
    let json = || serde_json::to_string_pretty(&cmp).expect("comparison serialises");
    output(args.json.as_deref(), json, || {
        schedlab::report::compare::render(&cmp)
    })?;
    Ok(())
}

/// `--json -` prints the JSON instead of the human text; `--json FILE` writes it beside it.
/// The JSON is made only then: a million threads' results are a gigabyte of it.
fn output(
    json_to: Option<&str>,
    json: impl FnOnce() -> String,
    human: impl FnOnce() -> String,
) -> Result<(), Error> {
    match json_to {
        Some("-") => outln!("{}", json()),
        Some(path) => {
            write_file(std::path::Path::new(path), &(json() + "\n"))?;
            out!("{}", human());
        }
        None => out!("{}", human()),
    }
    Ok(())
}

/// Written under a temporary name and renamed into place (`output.rs`).
fn write_file(path: &std::path::Path, text: &str) -> Result<(), Error> {
    schedlab::output::write_atomic(path, text.as_bytes()).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })
}

/// A progress bar on standard error when it is a terminal; hidden otherwise.
fn progress(len: u64) -> indicatif::ProgressBar {
    if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(len)
    } else {
        indicatif::ProgressBar::hidden()
    }
}

fn sweep(args: SweepArgs) -> Result<(), Error> {
    use schedlab::sweep;
    let warnings = Warnings::default();
    let (points, stem) = if args.merge.is_empty() {
        let req = SweepRequest {
            workload: Source::Arg(args.workload.clone().unwrap_or_else(|| "-".into())),
            side: side_options(
                args.platform.as_deref(),
                args.duration.as_deref(),
                &args.set,
                args.strict,
            ),
            params: args.param.clone(),
            seed: args.seed,
            shard: args.shard.clone(),
        };
        let spec = req.prepare(&|e| warnings.keep(e))?;
        let shard = spec.shard;
        let bar = progress(spec.len() as u64);
        let points = sweep::run(&spec, &|| bar.inc(1));
        bar.finish_and_clear();
        let stem = match args.shard {
            Some(_) => format!("points-{}-of-{}", shard.0, shard.1),
            None => "points".to_string(),
        };
        (points, stem)
    } else {
        (api::read_shards(&args.merge)?, "points".to_string())
    };
    // A sweep none of whose points ran fails as a whole: its error alone, nothing written.
    api::check_points(&points)?;
    warnings.print();
    let failed = points.iter().filter(|p| p.status != "ok").count();
    std::fs::create_dir_all(&args.out).map_err(|e| Error::Io {
        path: args.out.display().to_string(),
        source: e,
    })?;
    write_file(&args.out.join(format!("{stem}.csv")), &sweep::csv(&points))?;
    write_file(
        &args.out.join(format!("{stem}.json")),
        &serde_json::to_string_pretty(&points).expect("points serialise"),
    )?;
    outln!(
        "{} points ({failed} failed) in {}",
        points.len(),
        args.out.join(format!("{stem}.csv")).display()
    );
    for p in points.iter().filter(|p| p.status != "ok") {
        eprintln!("schedlab: point {} {:?}: {}", p.index, p.params, p.status);
    }
    Ok(())
}

/// `schedlab check`: every warning and every error of an rt-app file (an experiment file:
/// its first error, and its workloads' warnings). False when there was an error (with
/// `strict`, a warning), all of them printed.
fn check(arg: &str, platform: Option<&str>, strict: bool) -> Result<bool, Error> {
    if arg.ends_with(".toml") {
        let warnings = Warnings::default();
        let e = api::load_side(
            &Source::Arg(arg.to_string()),
            &side_options(platform, None, &[], strict),
            &|e| warnings.keep(e),
        )?;
        let (p, _) = e.build()?;
        e.workload.check_platform(p.nr_cpus())?;
        warnings.print();
        outln!("{arg}: ok ({} tasks)", e.workload.tasks.len());
        return Ok(true);
    }
    let checked = if arg == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| InputError::new("-", "standard input", "rt-app JSON", e.to_string()))?;
        schedlab::workload::check_workload(&text, "-")
    } else {
        schedlab::workload::check_file(std::path::Path::new(arg))
    };
    let mut errors = checked.errors;
    if let Some(w) = &checked.workload {
        let e = Experiment::from_workload(w.clone(), platform.unwrap_or("juno-r0"));
        let (p, _) = e.build()?;
        errors.extend(w.check_platform(p.nr_cpus()).err());
    }
    for w in &checked.warnings {
        if strict {
            eprintln!("schedlab: {}", w.clone().into_error());
        } else {
            eprintln!("schedlab: {w}");
        }
    }
    for e in &errors {
        eprintln!("schedlab: {e}");
    }
    let failed = errors.len() + if strict { checked.warnings.len() } else { 0 };
    match (&checked.workload, failed) {
        (Some(w), 0) => {
            outln!(
                "{arg}: ok ({} tasks, {} warnings)",
                w.tasks.len(),
                checked.warnings.len()
            );
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn reproduce(args: ReproduceArgs) -> Result<(), Error> {
    let dir = args.dir.clone().unwrap_or_else(|| {
        let here = PathBuf::from("experiments");
        if here.is_dir() {
            here
        } else {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("experiments")
        }
    });
    let all = schedlab::reproduce::bundled(&dir, args.name.as_deref())?;
    let mut outcomes = Vec::new();
    let bar = progress(all.len() as u64);
    for r in &all {
        bar.set_message(r.experiment.name.clone());
        let o = r.run(args.quick)?;
        bar.inc(1);
        if args.json.as_deref() != Some("-") {
            bar.suspend(|| outln!("{}", schedlab::reproduce::render(&o)));
        }
        outcomes.push(o);
    }
    bar.finish_and_clear();
    let json = serde_json::to_string_pretty(&outcomes).expect("outcomes serialise");
    match args.json.as_deref() {
        Some("-") => outln!("{json}"),
        Some(path) => write_file(std::path::Path::new(path), &(json + "\n"))?,
        None => {}
    }
    Ok(())
}

/// `schedlab switches [PATTERN]`: the registry (`kernel/variant.rs`) as a table.
fn switches(pattern: Option<&str>, markdown: bool) -> Result<(), Error> {
    let all = schedlab::kernel::variant::switches();
    let shown: Vec<_> = all
        .iter()
        .filter(|s| pattern.map_or(true, |p| s.key.contains(p)))
        .collect();
    if shown.is_empty() {
        let p = pattern.unwrap_or_default();
        let expected = match schedlab::kernel::variant::suggest(p) {
            Some(near) => format!("part of a switch's key (did you mean `{near}`?)"),
            None => "part of a switch's key".to_string(),
        };
        return Err(InputError::new("switches", "PATTERN", expected, format!("`{p}`")).into());
    }
    if markdown {
        let shown: Vec<_> = shown.into_iter().cloned().collect();
        outln!("{}", schedlab::report::switch_table(&shown).trim_end());
        return Ok(());
    }
    for s in shown {
        outln!(
            "{}\n    default {}; {} in {}\n    {}",
            s.key,
            s.default,
            s.kind,
            s.range,
            s.meaning
        );
    }
    Ok(())
}

/// The command line parsed; a mistake in it is one `schedlab:` line and exit code 2
/// (`--help` and `--version` print their text and exit 0).
fn parse_command_line() -> Result<Cli, ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    let cmd = schedlab::args::lenient(Cli::command());
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let parsed = cmd
        .clone()
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m));
    let words: Vec<String> = args
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    parsed.map_err(|e| match schedlab::args::error_parts(&cmd, &words, &e) {
        Some((what, expected, found)) => {
            eprintln!(
                "schedlab: {}: expected {}, found {}",
                OneLine(&what),
                OneLine(&expected),
                OneLine(&found)
            );
            ExitCode::from(2)
        }
        None => e.exit(),
    })
}

fn main() -> ExitCode {
    let cli = match parse_command_line() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Compare(args) => compare(args),
        Command::Sweep(args) => sweep(args),
        Command::Reproduce(args) => reproduce(args),
        Command::Check {
            workload,
            platform,
            strict,
        } => match check(&workload, platform.as_deref(), strict) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(2),
            Err(e) => Err(e),
        },
        Command::Switches { pattern, markdown } => switches(pattern.as_deref(), markdown),
        Command::Platforms { name: None } => {
            for (n, cpus, description) in api::platforms() {
                outln!("{n:<10} {cpus} CPUs  {description}");
            }
            Ok(())
        }
        Command::Gen(g) => g.text().map(|text| outln!("{}", text.trim_end())),
        Command::Replay(args) => replay(args),
        Command::ExplainCost(args) => schedlab::report::explain_cost(&args)
            .map(|text| out!("{text}"))
            .map_err(Error::from),
        Command::Host(h) => match host::run(h) {
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
        Command::Platforms { name: Some(n) } => Platform::resolve(&n)
            .map(|p| out!("{}", p.describe()))
            .map_err(Error::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Input(e)) => {
            eprintln!("schedlab: {e}");
            ExitCode::from(2)
        }
        Err(e @ Error::Io { .. }) => {
            eprintln!("schedlab: cannot write {e}");
            ExitCode::from(3)
        }
        Err(e) => {
            eprintln!("schedlab: {e}");
            ExitCode::from(1)
        }
    }
}

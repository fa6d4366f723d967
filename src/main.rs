//! The `schedlab` command line: parse, call the library, print. Exit codes: 0 success,
//! 2 invalid input, 1 internal error.

use clap::{Parser, Subcommand};
use schedlab::error::InputError;
use schedlab::kernel::Variant;
use schedlab::platform::{preset, preset_names, Platform};
use schedlab::trace::EventSelection;
use schedlab::workload::{parse_workload, Workload};
use schedlab::{simulate, Error, Outputs, Run};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

/// The workload `schedlab run` simulates when none is named (see the file's comment).
const DEFAULT_WORKLOAD: &str = include_str!("../workloads/default.json");

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
    /// Validate a workload without simulating it.
    Check {
        /// rt-app JSON file, or - for standard input.
        workload: String,
        /// Also check CPU numbers against this platform.
        #[arg(long, default_value = "juno-r0")]
        platform: String,
    },
    /// List the built-in platforms, or show one.
    Platforms { name: Option<String> },
    /// Print a generated rt-app workload (JSON) to standard output.
    #[command(subcommand)]
    Gen(GenCommand),
}

#[derive(Subcommand)]
enum GenCommand {
    /// fio-like psync I/O loop (seed 004); the results report `iops`.
    Fio(schedlab::workload::gen::FioArgs),
    /// One short-lived task at a time, forked and waited for (seed 003); reports
    /// `pids_per_sec`.
    Forkloop(schedlab::workload::gen::ForkloopArgs),
    /// `perf bench sched pipe -T`-like ping-pong (seeds 000, 001); reports `ops_per_sec`.
    Pipe(schedlab::workload::gen::PipeArgs),
    /// `hackbench -g G -l L [-p] [-T]` (seed 002): senders and receivers over sockets or
    /// pipes; reports `completion_ns`.
    Hackbench(schedlab::workload::gen::HackbenchArgs),
    /// `cyclictest --policy other|fifo -i US -D S` (seed 002); reports the timer wake-up
    /// latency (min/avg/max, percentiles).
    Cyclictest(schedlab::workload::gen::CyclictestArgs),
    /// `schbench -m M -t T` (seed 002); reports the workers' wake-up latency percentiles.
    Schbench(schedlab::workload::gen::SchbenchArgs),
    /// `netperf -t UDP_STREAM|TCP_STREAM -- -m SIZE` on loopback (seeds 000, 001); reports
    /// throughput.
    Netperf(schedlab::workload::gen::NetperfArgs),
    /// TouchLatency-like frames beside periodic background load (seed 002); reports missed
    /// frames and frame latency.
    Frames(schedlab::workload::gen::FramesArgs),
}

#[derive(clap::Args)]
struct CompareArgs {
    /// rt-app JSON file, or - for standard input.
    workload: String,
    /// The switches of the second side, KEY=VALUE (repeatable).
    #[arg(long = "vs", value_name = "KEY=VALUE", required = true)]
    vs: Vec<String>,
    /// Seeds per side.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    runs: u64,
    #[arg(long, default_value = "juno-r0")]
    platform: String,
    /// Simulated time of each run, e.g. 5s.
    #[arg(long)]
    duration: Option<String>,
    /// Switches of both sides, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write the comparison as JSON to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// rt-app JSON file, or - for standard input (not with --merge).
    #[arg(required_unless_present = "merge")]
    workload: Option<String>,
    /// A switch and its values, KEY=V1,V2,… (repeatable: the grid is every combination).
    #[arg(long = "param", value_name = "KEY=V1,V2,...")]
    param: Vec<String>,
    /// Switches of every point, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[arg(long, default_value = "juno-r0")]
    platform: String,
    #[arg(long)]
    duration: Option<String>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Run only the points whose index is I modulo N (for batch systems).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Join the points*.json files found in these directories.
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["workload", "param", "shard"])]
    merge: Vec<PathBuf>,
    /// Where to write points.csv and points.json (points-I-of-N.* for a shard).
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct RunArgs {
    /// rt-app JSON file, or - for standard input (default: workloads/default.json, built in).
    workload: Option<String>,
    /// Platform preset or platform file (TOML/JSON).
    #[arg(long, default_value = "juno-r0")]
    platform: String,
    /// Simulated time, e.g. 10s, 500ms (default: the workload's global.duration, else 10s).
    #[arg(long)]
    duration: Option<String>,
    /// cpufreq governor: performance or powersave.
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
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the JSON results to FILE (- for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write an ftrace text trace to FILE (and FILE's stem .plat_info.yml beside it).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
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
}

fn read_workload(arg: &str) -> Result<Workload, Error> {
    let mut text = String::new();
    let read = if arg == "-" {
        std::io::stdin().read_to_string(&mut text).map(drop)
    } else {
        std::fs::read_to_string(arg).map(|t| text = t)
    };
    read.map_err(|e| {
        InputError::new(
            arg,
            "the file",
            "a readable rt-app JSON file",
            e.to_string(),
        )
    })?;
    Ok(parse_workload(&text, arg)?)
}

/// `10s`, `500ms`, `250us`, `1000ns`, or plain seconds.
fn parse_duration(s: &str) -> Result<u64, InputError> {
    let bad = || {
        InputError::new(
            "--duration",
            s,
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
    if !(1.0..1e19).contains(&ns) {
        return Err(bad());
    }
    Ok(ns as u64)
}

fn run(args: RunArgs) -> Result<(), Error> {
    let workload = match &args.workload {
        Some(w) => read_workload(w)?,
        None => parse_workload(DEFAULT_WORKLOAD, "<default workload>")?,
    };
    let platform = Platform::resolve(&args.platform)?;
    let mut variant = Variant::for_platform(&platform);
    if let Some(g) = &args.governor {
        variant.set("cpufreq.governor", g, "--governor")?;
    }
    for pair in &args.set {
        variant.set_pair(pair, "--set")?;
    }
    for item in &args.set_at {
        let (time, pair) = item.split_once(':').ok_or_else(|| {
            InputError::new(
                "--set-at",
                item.as_str(),
                "TIME:KEY=VALUE",
                format!("`{item}`"),
            )
        })?;
        let at = parse_duration(time).map_err(|e| InputError {
            file: "--set-at".into(),
            ..e
        })?;
        variant.set_at(at, pair, "--set-at")?;
    }
    let duration_ns = args.duration.as_deref().map(parse_duration).transpose()?;
    let trace_events = match args.trace_events.as_deref() {
        Some(list) => EventSelection::parse(list)?,
        None => EventSelection::default(),
    };
    let outputs = Outputs {
        trace: args.trace.clone(),
        trace_events,
        rtapp_logs: args.rtapp_logs.clone(),
    };
    let results = simulate(
        Run {
            platform,
            workload,
            variant,
            duration_ns,
            seed: args.seed,
            reproducible: args.reproducible,
        },
        &outputs,
    )?;
    let json = serde_json::to_string_pretty(&results).expect("results serialise");
    output(args.json.as_deref(), json, || {
        schedlab::report::summary(&results)
    })?;
    Ok(())
}

fn compare(args: CompareArgs) -> Result<(), Error> {
    let workload = read_workload(&args.workload)?;
    let platform = Platform::resolve(&args.platform)?;
    let mut base = Variant::for_platform(&platform);
    for pair in &args.set {
        base.set_pair(pair, "--set")?;
    }
    let mut other = base.clone();
    for pair in &args.vs {
        other.set_pair(pair, "--vs")?;
    }
    let duration_ns = args.duration.as_deref().map(parse_duration).transpose()?;
    let sides = vec![("base".to_string(), base), (args.vs.join(" "), other)];
    let results = schedlab::simulate_sides(&platform, &workload, duration_ns, sides, args.runs)?;
    let cmp = schedlab::report::compare::compare(&results);
    let json = serde_json::to_string_pretty(&cmp).expect("comparison serialises");
    output(args.json.as_deref(), json, || {
        schedlab::report::compare::render(&cmp)
    })?;
    Ok(())
}

/// `--json -` prints the JSON instead of the human text; `--json FILE` writes it beside it.
fn output(
    json_to: Option<&str>,
    json: String,
    human: impl FnOnce() -> String,
) -> Result<(), Error> {
    match json_to {
        Some("-") => println!("{json}"),
        Some(path) => {
            write_file(std::path::Path::new(path), &(json + "\n"))?;
            print!("{}", human());
        }
        None => print!("{}", human()),
    }
    Ok(())
}

fn write_file(path: &std::path::Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })
}

fn sweep(args: SweepArgs) -> Result<(), Error> {
    use schedlab::sweep;
    std::fs::create_dir_all(&args.out).map_err(|e| Error::Io {
        path: args.out.display().to_string(),
        source: e,
    })?;
    let (points, stem) = if args.merge.is_empty() {
        let workload = read_workload(args.workload.as_deref().unwrap_or("-"))?;
        let platform = Platform::resolve(&args.platform)?;
        let mut base = Variant::for_platform(&platform);
        for pair in &args.set {
            base.set_pair(pair, "--set")?;
        }
        let params = args
            .param
            .iter()
            .map(|p| sweep::parse_param(p))
            .collect::<Result<Vec<_>, _>>()?;
        let shard = args
            .shard
            .as_deref()
            .map(sweep::parse_shard)
            .transpose()?
            .unwrap_or((0, 1));
        let spec = sweep::Sweep {
            platform,
            workload,
            base,
            duration_ns: args.duration.as_deref().map(parse_duration).transpose()?,
            seed: args.seed,
            params,
            shard,
        };
        let bar = if std::io::stderr().is_terminal() {
            indicatif::ProgressBar::new(spec.len() as u64)
        } else {
            indicatif::ProgressBar::hidden()
        };
        let points = sweep::run(&spec, &|| bar.inc(1));
        bar.finish_and_clear();
        let stem = match args.shard {
            Some(_) => format!("points-{}-of-{}", shard.0, shard.1),
            None => "points".to_string(),
        };
        (points, stem)
    } else {
        let mut shards = Vec::new();
        for dir in &args.merge {
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
                    let text = std::fs::read_to_string(&path).map_err(|e| Error::Io {
                        path: path.display().to_string(),
                        source: e,
                    })?;
                    let points: Vec<sweep::Point> = serde_json::from_str(&text).map_err(|e| {
                        InputError::new(
                            path.display().to_string(),
                            format!("line {} column {}", e.line(), e.column()),
                            "a sweep's points JSON",
                            e.to_string(),
                        )
                    })?;
                    shards.push(points);
                }
            }
        }
        (sweep::merge(shards), "points".to_string())
    };
    let failed = points.iter().filter(|p| p.status != "ok").count();
    write_file(&args.out.join(format!("{stem}.csv")), &sweep::csv(&points))?;
    write_file(
        &args.out.join(format!("{stem}.json")),
        &serde_json::to_string_pretty(&points).expect("points serialise"),
    )?;
    println!(
        "{} points ({failed} failed) in {}",
        points.len(),
        args.out.join(format!("{stem}.csv")).display()
    );
    for p in points.iter().filter(|p| p.status != "ok") {
        eprintln!("schedlab: point {} {:?}: {}", p.index, p.params, p.status);
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Compare(args) => compare(args),
        Command::Sweep(args) => sweep(args),
        Command::Check { workload, platform } => read_workload(&workload).and_then(|w| {
            let p = Platform::resolve(&platform)?;
            w.check_platform(p.nr_cpus())?;
            println!("{workload}: ok ({} tasks)", w.tasks.len());
            Ok(())
        }),
        Command::Platforms { name: None } => {
            for n in preset_names() {
                let p = preset(n).expect("every preset name has a preset");
                println!("{n:<10} {} CPUs  {}", p.nr_cpus(), p.description);
            }
            Ok(())
        }
        Command::Gen(g) => {
            let json = match g {
                GenCommand::Fio(a) => schedlab::workload::gen::fio(&a),
                GenCommand::Forkloop(a) => schedlab::workload::gen::forkloop(&a),
                GenCommand::Pipe(a) => schedlab::workload::gen::pipe(&a),
                GenCommand::Hackbench(a) => schedlab::workload::gen::hackbench(&a),
                GenCommand::Cyclictest(a) => match schedlab::workload::gen::cyclictest(&a) {
                    Ok(json) => json,
                    Err(e) => {
                        eprintln!("schedlab: {e}");
                        return ExitCode::from(2);
                    }
                },
                GenCommand::Schbench(a) => schedlab::workload::gen::schbench(&a),
                GenCommand::Netperf(a) => schedlab::workload::gen::netperf(&a),
                GenCommand::Frames(a) => schedlab::workload::gen::frames(&a),
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&json).expect("JSON serialises")
            );
            Ok(())
        }
        Command::Platforms { name: Some(n) } => Platform::resolve(&n)
            .map(|p| print!("{}", p.describe()))
            .map_err(Error::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Input(e)) => {
            eprintln!("schedlab: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("schedlab: {e}");
            ExitCode::from(1)
        }
    }
}

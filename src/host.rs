//! `schedlab host`: the machine schedlab runs on (crates/host). `platform` writes its
//! platform file; `record` runs a command under tracefs and writes the trace, the platform
//! and LISA's plat_info.yml; `calibrate` fits the platform's costs on two microbenchmarks;
//! `validate` prints real workloads beside their simulation (exit 0 whatever they show).
//! Exit codes: `record` exits with the command's status (as `time` and `strace` do; 128 + N
//! when a signal N ended it) once the trace is written; 2 when tracefs cannot be used or an
//! argument is wrong, 3 when an output cannot be written.

use crate::emit;
use schedlab::error::InputError;
use schedlab::platform::Platform;
use schedlab::Error;
use schedlab_host::{platform, record};
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum HostCommand {
    /// Write a platform file (TOML, commented) describing this machine, read from sysfs and
    /// procfs; `schedlab run --platform FILE` simulates it.
    Platform(PlatformArgs),
    /// Run CMD while tracefs records the scheduler's events, and write the trace as `run
    /// --trace` writes it, with TRACE's stem .platform.toml and .plat_info.yml beside it.
    /// Needs root. Exits with CMD's status.
    Record(RecordArgs),
    /// Fit this machine's platform costs on three named microbenchmarks run here: the common
    /// scale of the kernel paths on `perf bench sched pipe -T` on one CPU, `unix_op_ns` on
    /// `perf bench sched messaging`, `pipe_op_ns` on `perf bench sched messaging -p`. Writes
    /// the platform file with a commented [costs] table and prints the runs.
    Calibrate(CalibrateArgs),
    /// Run real workloads here (the rt-app examples, hackbench, perf bench sched pipe,
    /// cyclictest, replays of their traces) and the same in schedlab on this machine's
    /// platform, and print them side by side with how many are within 25%. A report: exit 0
    /// whatever the numbers (2 for bad arguments). Needs root for tracefs.
    Validate(ValidateArgs),
}

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// The platform to calibrate (default: this machine's, as `host platform` reads it).
    #[arg(long, value_name = "FILE")]
    platform: Option<PathBuf>,
    /// Write the calibrated platform file to FILE (default: standard output, the runs then
    /// on standard error).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Runs of each benchmark (the median is fitted).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    runs: u64,
    /// Take this as perf bench sched pipe -T's µs/op instead of running it (tests).
    #[arg(long, hide = true, value_name = "US")]
    measured_pipe_us: Option<f64>,
    /// Take this as perf bench sched messaging's total time (s) instead of running it.
    #[arg(long, hide = true, value_name = "S")]
    measured_messaging_s: Option<f64>,
    /// Take this as perf bench sched messaging -p's total time (s) instead of running it.
    #[arg(long, hide = true, value_name = "S")]
    measured_messaging_pipe_s: Option<f64>,
}

#[derive(clap::Args)]
pub struct ValidateArgs {
    /// Smaller sizes, one run each (unless --runs): under 2 minutes on 2 CPUs.
    #[arg(long)]
    quick: bool,
    /// Runs of each real workload and seeds of each simulation (default 3, 1 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100))]
    runs: Option<u64>,
    /// Also write the table as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The platform to simulate (default: this machine's, as `host platform` reads it; a
    /// file `host calibrate` wrote has its fitted costs).
    #[arg(long, value_name = "FILE")]
    platform: Option<PathBuf>,
    /// The rt-app examples (default: ../shared/workloads/rt-app-examples beside the
    /// repository, where the examples of the project live).
    #[arg(long, value_name = "DIR")]
    examples: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct PlatformArgs {
    /// Write the platform file to FILE (default: standard output).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Read DIR/sys/… and DIR/proc/… instead of this machine's (a snapshot made by
    /// scripts/host-snapshot.sh).
    #[arg(long, value_name = "DIR")]
    sysfs_root: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct RecordArgs {
    /// The trace to write (text, as `schedlab run --trace` writes it).
    #[arg(long, value_name = "TRACE")]
    out: PathBuf,
    /// The events to record, comma-separated names (or subsystem:name); `print` keeps
    /// trace_marker writes. Default: sched_switch, sched_waking, sched_wakeup,
    /// sched_wakeup_new, sched_migrate_task, sched_process_fork, sched_process_exit,
    /// cpu_idle, irq_handler_entry/exit, softirq_entry/exit, hrtimer_expire_entry, print.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    events: Option<Vec<String>>,
    /// The ring buffer's size per CPU in KiB (default 65536, less when memory is short).
    /// When a CPU's buffer fills, the trace ends there on every CPU.
    #[arg(long, value_name = "N")]
    buffer_kb: Option<u64>,
    /// Use the tracefs mounted at DIR (default: /sys/kernel/tracing, mounted there if
    /// needed).
    #[arg(long, value_name = "DIR")]
    tracefs: Option<PathBuf>,
    /// The command to trace, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Run a `host` command: the exit code when it succeeds.
pub fn run(cmd: HostCommand) -> Result<u8, Error> {
    match cmd {
        HostCommand::Platform(args) => platform_file(&args).map(|()| 0),
        HostCommand::Record(args) => record_trace(args),
        HostCommand::Calibrate(args) => calibrate(&args).map(|()| 0),
        HostCommand::Validate(args) => validate(&args).map(|()| 0),
    }
}

/// The platform to work on: the file given, else this machine's; its text and a name for
/// messages.
fn platform_input(file: Option<&Path>) -> Result<(Platform, String, String), Error> {
    match file {
        Some(p) => {
            let name = p.display().to_string();
            let text = std::fs::read_to_string(p).map_err(|e| {
                InputError::new(&name, "file", "a readable platform file", e.to_string())
            })?;
            let platform = schedlab::platform::parse_platform(&text, &name)?;
            Ok((platform, text, name))
        }
        None => {
            let h = platform::read(Path::new("/"))?;
            Ok((h.platform, h.text, "this machine".into()))
        }
    }
}

fn calibrate(args: &CalibrateArgs) -> Result<(), Error> {
    use schedlab_host::calibrate::{self as cal, IpcOp, Measurements, Spec};
    for (what, v) in [
        ("--measured-pipe-us", args.measured_pipe_us),
        ("--measured-messaging-s", args.measured_messaging_s),
        (
            "--measured-messaging-pipe-s",
            args.measured_messaging_pipe_s,
        ),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(InputError::new(
                "host calibrate",
                what,
                "a positive number",
                v.to_string(),
            )
            .into());
        }
    }
    let (base, text, name) = platform_input(args.platform.as_deref())?;
    let spec = Spec::for_platform(&base);
    let runs = args.runs as usize;
    let failed = |what: String, e: String| {
        InputError::new("host calibrate", what, "a benchmark that runs here", e)
    };
    let pipe = match args.measured_pipe_us {
        Some(v) => cal::given(spec.pipe_command(), "µs/op", v),
        None => {
            let cmd = spec.pipe_command().join(" ");
            eprintln!("schedlab: measuring `{cmd}` × {runs}");
            cal::measure_pipe(&spec, runs).map_err(|e| failed(cmd, e))?
        }
    };
    let messaging = |op: IpcOp, given: Option<f64>| match given {
        Some(v) => Ok(cal::given(spec.messaging_command(op), "s", v)),
        None => {
            let cmd = spec.messaging_command(op).join(" ");
            eprintln!("schedlab: measuring `{cmd}` × {runs}");
            cal::measure_messaging(&spec, op, runs).map_err(|e| failed(cmd, e))
        }
    };
    let m = Measurements {
        pipe,
        messaging: messaging(IpcOp::Unix, args.measured_messaging_s)?,
        messaging_pipe: messaging(IpcOp::Pipe, args.measured_messaging_pipe_s)?,
    };
    eprintln!("schedlab: fitting {name}'s costs");
    let c = cal::fit(&base, &text, &name, m, &spec)?;
    let report = cal::report(&c);
    match &args.out {
        Some(path) => {
            crate::write_file(path, &c.text)?;
            out!("{report}");
        }
        None => {
            eprint!("{report}");
            out!("{}", c.text);
        }
    }
    Ok(())
}

fn validate(args: &ValidateArgs) -> Result<(), Error> {
    use schedlab_host::validate::{self as val, Request};
    let examples = args.examples.clone().unwrap_or_else(|| {
        // The repository's root is where the binary was built from; the examples are in
        // ../shared beside it.
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/workloads/rt-app-examples")
    });
    let req = Request {
        quick: args.quick,
        runs: args
            .runs
            .map_or(if args.quick { 1 } else { 3 }, |r| r as usize),
        platform: args.platform.clone(),
        examples,
    };
    let v = val::validate(&req, &|line| eprintln!("schedlab: {line}"))?;
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&v).expect("the table serialises");
        crate::write_file(path, &json)?;
    }
    out!("{}", schedlab::report::validation::render(&v));
    Ok(())
}

fn platform_file(args: &PlatformArgs) -> Result<(), Error> {
    let root = args.sysfs_root.as_deref().unwrap_or(Path::new("/"));
    if !root.is_dir() {
        return Err(InputError::new(
            "--sysfs-root",
            root.display().to_string(),
            "a directory holding a machine's sys/ and proc/",
            "no such directory",
        )
        .into());
    }
    let host = platform::read(root)?;
    match &args.out {
        Some(path) => crate::write_file(path, &host.text),
        None => {
            out!("{}", host.text);
            Ok(())
        }
    }
}

fn record_trace(args: RecordArgs) -> Result<u8, Error> {
    let req = record::Request {
        out: args.out,
        events: args.events,
        buffer_kb: args.buffer_kb,
        tracefs: args.tracefs,
        command: args.command,
        output: None,
    };
    let r = record::record(&req)?;
    for w in &r.warnings {
        eprintln!("schedlab: {w}");
    }
    let files: Vec<String> = r.files.iter().map(|f| f.display().to_string()).collect();
    eprintln!(
        "schedlab: {} events on {} CPUs ({} lost) in {}; the command {}",
        r.events,
        r.nr_cpus,
        r.lost,
        files.join(", "),
        r.ended
    );
    if let Some(cut) = r.cut_s {
        eprintln!(
            "schedlab: a CPU's buffer filled: the trace ends at {cut:.6} s on every CPU, {} later events left out (raise --buffer-kb)",
            r.cut_events
        );
    }
    Ok(u8::try_from(r.status).unwrap_or(1))
}

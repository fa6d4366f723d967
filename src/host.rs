//! `schedlab host`: the machine schedlab runs on (crates/host). `platform` writes its
//! platform file; `record` runs a command under tracefs and writes the trace, the platform
//! and LISA's plat_info.yml. Exit codes: `record` exits with the command's status (as
//! `time` and `strace` do; 128 + N when a signal N ended it) once the trace is written;
//! 2 when tracefs cannot be used or an argument is wrong, 3 when an output cannot be written.

use crate::emit;
use schedlab::error::InputError;
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
    }
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

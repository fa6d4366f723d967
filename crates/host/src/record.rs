//! `schedlab host record`: run a command while tracefs records the scheduler's events in an
//! instance of our own, then write the trace in schedlab's text layout with the machine's
//! platform file and LISA `plat_info.yml` beside it.
//!
//! The ring buffer is read once, after the command ends, rather than through `trace_pipe`
//! while it runs: a reader would take CPU time from the command on a small machine and show
//! in the trace. The buffer is sized instead (`--buffer-kb`, per CPU; by default 64 MiB, or
//! a quarter of the available memory over the CPUs if that is less: tens of seconds of a
//! busy machine) and does not overwrite: when a CPU's buffer fills, its later events are
//! dropped and counted, and the trace is cut where the first full CPU's events end, so that
//! what it holds is complete on every CPU.
//!
//! SIGINT, SIGTERM and SIGHUP are caught (signal-hook) while the command runs and forwarded
//! to it; the trace of what ran until then is still written and tracefs restored.

use crate::convert::{self, Converted};
use crate::platform::{self, HostPlatform};
use crate::tracefs::{Instance, Tracefs, DEFAULT_EVENTS};
use schedlab::error::InputError;
use schedlab::output::Staged;
use schedlab::Error;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Per-CPU buffer size at most, KiB.
const BUFFER_KB_MAX: u64 = 64 << 10;
/// ... and at least.
const BUFFER_KB_MIN: u64 = 1 << 10;

/// What `schedlab host record` was asked.
pub struct Request {
    /// The trace to write.
    pub out: PathBuf,
    /// The events (names, or `subsystem:name`), `print` for trace_marker writes; None: the
    /// default list.
    pub events: Option<Vec<String>>,
    /// Per-CPU buffer size in KiB (None: the default).
    pub buffer_kb: Option<u64>,
    /// The tracefs to use (None: the machine's).
    pub tracefs: Option<PathBuf>,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Where the command's standard output and error go (None: schedlab's own).
    pub output: Option<PathBuf>,
}

/// What a recording wrote.
pub struct Recorded {
    /// The command's exit status as a shell gives it: its code, or 128 + the signal that
    /// ended it.
    pub status: i32,
    /// How it ended, in words.
    pub ended: String,
    pub events: u64,
    pub nr_cpus: usize,
    /// Events the buffer lost (overrun + dropped, every CPU).
    pub lost: u64,
    /// Events recorded after the cut, left out.
    pub cut_events: u64,
    /// The time the trace was cut at when a buffer filled (s).
    pub cut_s: Option<f64>,
    /// The files written: the trace, then the platform and plat_info when there was one.
    pub files: Vec<PathBuf>,
    /// Warnings: what was not recorded or not read.
    pub warnings: Vec<String>,
}

pub fn record(req: &Request) -> Result<Recorded, Error> {
    let Some((program, args)) = req.command.split_first() else {
        return Err(
            InputError::new("host record", "CMD", "a command to run after --", "none").into(),
        );
    };
    if req.buffer_kb == Some(0) {
        return Err(
            InputError::new("host record", "--buffer-kb", "a size in KiB from 1", "0").into(),
        );
    }
    let names: Vec<String> = match &req.events {
        Some(list) => list.clone(),
        None => DEFAULT_EVENTS.iter().map(|s| s.to_string()).collect(),
    };
    let tfs = Tracefs::open(req.tracefs.as_deref())?;
    let mut warnings = Vec::new();
    if tfs.mounted() {
        warnings.push(format!(
            "mounted tracefs at {} for the recording (unmounted after)",
            tfs.dir.display()
        ));
    }
    // Every event named must exist before anything runs.
    let mut paths = Vec::new();
    let mut markers = false;
    for name in &names {
        if name == "print" {
            markers = true;
            continue;
        }
        match tfs.event_path(name) {
            Some(p) => paths.push(p),
            None => {
                return Err(InputError::new(
                    "--events",
                    name.as_str(),
                    format!(
                        "an event of this kernel (see {}/available_events), or print",
                        tfs.dir.display()
                    ),
                    "none by that name",
                )
                .into())
            }
        }
    }

    // The machine, read before the command changes anything.
    let host = match platform::read(Path::new("/")) {
        Ok(h) => Some(h),
        Err(e) => {
            warnings.push(format!("no platform file beside the trace: {e}"));
            None
        }
    };
    let nr_cpus = host
        .as_ref()
        .map_or_else(|| per_cpu_count(&tfs.dir), |h| h.platform.nr_cpus());

    // The trace's file, opened before anything runs: a path that cannot be written is
    // known before the command runs.
    let (staged, file) = Staged::file(&req.out).map_err(|e| io_error(&req.out, e))?;
    let inst = Instance::create(&tfs, &format!("schedlab-{}", std::process::id()))?;
    inst.write("tracing_on", "0")?;
    let buffer_kb = req.buffer_kb.unwrap_or_else(|| default_buffer_kb(nr_cpus));
    inst.write("buffer_size_kb", &buffer_kb.to_string())?;
    inst.write("options/overwrite", "0")?;
    // trace_marker copies carry the top-level buffer's clock: the instance keeps the same.
    let clock = tfs.clock().unwrap_or_else(|| "local".into());
    inst.write("trace_clock", &clock)?;
    if markers {
        if inst.has("options/copy_trace_marker") {
            inst.write("options/copy_trace_marker", "1")?;
        } else {
            warnings.push("this kernel has no copy_trace_marker (v6.17+): trace_marker writes (print, rt-app's lines) stay in the top-level buffer and are not in the trace".into());
        }
    }
    for p in &paths {
        inst.write(&format!("events/{p}/enable"), "1")?;
    }

    let (status, ended) = run(&inst, program, args, req.output.as_deref())?;
    inst.write("tracing_on", "0")?;

    let losses = inst.lost();
    let lost: u64 = losses.iter().map(|(_, l)| l.overrun + l.dropped).sum();
    let trace_file = inst.dir.join("trace");
    let read = |out: &mut dyn Write, cut: Option<u64>| -> Result<Converted, Error> {
        let f = std::fs::File::open(&trace_file).map_err(|e| io_error(&trace_file, e))?;
        let mut out = out;
        convert::convert(BufReader::with_capacity(1 << 20, f), &mut out, nr_cpus, cut)
            .map_err(|e| io_error(&req.out, e))
    };
    // A CPU whose buffer filled stopped recording: cut every CPU where the first did.
    let cut = if losses.iter().any(|(_, l)| l.dropped > 0) {
        let scan = read(&mut std::io::sink(), None)?;
        losses
            .iter()
            .filter(|(_, l)| l.dropped > 0)
            .filter_map(|(c, _)| scan.last_ts.get(*c).copied().flatten())
            .min()
    } else {
        None
    };

    let command = one_line(&req.command.join(" "));
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut header = format!(
        "# tracer: nop\n#\n# schedlab host record -- {command}: {ended}\n\
         # Linux {}, tracefs instance {}, trace_clock {clock}, {buffer_kb} KiB per CPU, events {}\n",
        one_line(release.trim()),
        inst.name,
        names.join(",")
    );
    header.push_str(&format!(
        "# lost events: {lost} (per_cpu/cpu*/stats overrun and dropped events){}\n",
        cut.map_or(String::new(), |c| format!(
            "; the trace ends at {:.6} s, where the first full CPU buffer's events end",
            c as f64 / 1e9
        ))
    ));
    header.push_str(&format!("cpus={nr_cpus}\n"));
    w.write_all(header.as_bytes())
        .map_err(|e| io_error(&req.out, e))?;
    let converted = read(&mut w, cut)?;
    w.flush().map_err(|e| io_error(&req.out, e))?;
    drop(w);
    staged.commit().map_err(|e| io_error(&req.out, e))?;
    let mut files = vec![req.out.clone()];
    drop(inst);
    drop(tfs);

    if let Some(h) = &host {
        write_beside(&req.out, h, &mut files)?;
    }
    Ok(Recorded {
        status,
        ended,
        events: converted.events,
        nr_cpus,
        lost,
        cut_events: converted.cut_events,
        cut_s: cut.map(|c| c as f64 / 1e9),
        files,
        warnings,
    })
}

/// The platform file and plat_info.yml beside the trace.
fn write_beside(trace: &Path, h: &HostPlatform, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    let toml = schedlab::platform_file_path(trace);
    schedlab::output::write_atomic(&toml, h.text.as_bytes()).map_err(|e| io_error(&toml, e))?;
    files.push(toml);
    let yml = schedlab::plat_info_path(trace);
    let text = schedlab::api::platform_plat_info(&h.platform);
    schedlab::output::write_atomic(&yml, text.as_bytes()).map_err(|e| io_error(&yml, e))?;
    files.push(yml);
    Ok(())
}

/// Run the command with tracing on (its output to `output` if given), forwarding the
/// signals schedlab receives: its status as a shell gives it, and how it ended.
fn run(
    inst: &Instance,
    program: &str,
    args: &[String],
    output: Option<&Path>,
) -> Result<(i32, String), Error> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut command = std::process::Command::new(program);
    command.args(args);
    if let Some(path) = output {
        let f = std::fs::File::create(path).map_err(|e| io_error(path, e))?;
        let err = f.try_clone().map_err(|e| io_error(path, e))?;
        command.stdout(f).stderr(err);
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]).ok();
    inst.write("tracing_on", "1")?;
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Err(InputError::new(
                "host record",
                "CMD",
                "a program that can run",
                format!("`{program}`: {e}"),
            )
            .into())
        }
    };
    let pid = child.id();
    let handle = signals.as_ref().map(|s| s.handle());
    let forwarder = signals.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut first = None;
            for sig in s.forever() {
                first.get_or_insert(sig);
                crate::sys::forward(pid, sig);
            }
            first
        })
    });
    let waited = child.wait();
    if let Some(h) = handle {
        h.close();
    }
    let caught = forwarder.and_then(|t| t.join().ok()).flatten();
    let status = waited.map_err(|e| io_error(Path::new(program), e))?;
    let (code, mut ended) = exit(status);
    if let Some(sig) = caught {
        ended.push_str(&format!(" (schedlab got signal {sig} and passed it on)"));
    }
    Ok((code, ended))
}

#[cfg(unix)]
fn exit(status: std::process::ExitStatus) -> (i32, String) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => (c, format!("exited with status {c}")),
        (None, Some(s)) => (128 + s, format!("killed by signal {s}")),
        _ => (1, "ended".into()),
    }
}

#[cfg(not(unix))]
fn exit(status: std::process::ExitStatus) -> (i32, String) {
    let c = status.code().unwrap_or(1);
    (c, format!("exited with status {c}"))
}

/// 64 MiB per CPU, or a quarter of the available memory over the CPUs if less.
fn default_buffer_kb(nr_cpus: usize) -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(u64::MAX);
    (available / 4 / nr_cpus.max(1) as u64).clamp(BUFFER_KB_MIN, BUFFER_KB_MAX)
}

/// The CPUs tracefs has buffers for (when the platform could not be read).
fn per_cpu_count(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("per_cpu"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix("cpu")
                        .and_then(|n| n.parse::<usize>().ok())
                })
                .max()
                .map_or(1, |m| m + 1)
        })
        .unwrap_or(1)
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

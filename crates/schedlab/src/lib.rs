//! schedlab: a deterministic discrete-event simulator of the Linux CPU scheduler's
//! utilization-driven machinery.
//!
//! A run is `Run` (platform + workload + kernel variant + duration + seed) → `simulate` →
//! `Results`, with optional trace and rt-app logs written as the simulation goes.
//!
//! ```
//! use schedlab::{kernel::Variant, platform::Platform, workload::parse_workload};
//! use schedlab::{simulate, Outputs, Run};
//!
//! // A 10% periodic task on juno-r0's default variant (schedutil, v6.1 CFS).
//! let json = r#"{ "tasks": { "p": { "loop": -1, "run": 1000,
//!     "timer": { "ref": "unique", "period": 10000 } } } }"#;
//! let run = Run {
//!     platform: Platform::resolve("juno-r0").unwrap(),
//!     workload: parse_workload(json, "example.json").unwrap(),
//!     variant: Variant::default(),
//!     duration_ns: Some(1_000_000_000),
//!     seed: 0,
//!     reproducible: true,
//! };
//! let results = simulate(run, &Outputs::default()).unwrap();
//! let p = &results.tasks[0];
//! assert_eq!(p.name, "p-0");
//! assert!(p.activations >= 99 && p.deadline_misses == 0);
//! ```

pub mod api;
pub mod args;
pub mod experiment;
pub mod gen;
pub mod output;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod sweep;

// The crates below, under the names the library has always had.
pub use schedlab_base::{error, sim};
pub use schedlab_model::{kernel, machine, platform, workload};
pub use schedlab_trace as trace;

pub use error::InputError;
use kernel::core::{Event, Kernel, KernelOutputs};
use kernel::tracepoint::{EventSelection, Observer};
use kernel::Variant;
use platform::Platform;
use report::plot::{PlotRecorder, Tee};
use report::Results;
use sim::{EventQueue, SimRng};
use std::path::{Path, PathBuf};
use trace::{Dat, Deferred, Ftrace, TraceFormat};
use workload::{RtappLogs, Workload};

/// Simulated time of a run whose workload and command line give none.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;

/// Everything that defines a run.
pub struct Run {
    pub platform: Platform,
    pub workload: Workload,
    pub variant: Variant,
    /// None: the workload's `global.duration`, else `DEFAULT_DURATION_NS`.
    pub duration_ns: Option<u64>,
    pub seed: u64,
    /// Leave host timing out of the results so they compare byte for byte.
    pub reproducible: bool,
}

/// Where a run writes besides its results.
#[derive(Debug, Default, Clone)]
pub struct Outputs {
    pub trace: Option<PathBuf>,
    /// Load-tracking events the trace carries besides the default ones.
    pub trace_events: EventSelection,
    /// Text or trace.dat (`--trace-format`; by default from the file name).
    pub trace_format: TraceFormat,
    /// Perfetto counter lines in the text trace (`--trace-counters`).
    pub trace_counters: bool,
    pub rtapp_logs: Option<PathBuf>,
    /// Where to draw the run's SVG plots (`report/plot.rs`).
    pub plot: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Input(#[from] InputError),
    /// An output could not be written (exit code 3).
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Nothing the user asked for came out (every point of a sweep failed): exit code 1.
    #[error("{0}")]
    Failed(String),
}

impl Error {
    fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// The plat_info.yml path beside a trace: `run.txt` → `run.plat_info.yml`.
pub fn plat_info_path(trace: &Path) -> PathBuf {
    beside(trace, "plat_info.yml")
}

/// The platform file `schedlab host record` writes beside its trace: `run.txt` →
/// `run.platform.toml`.
pub fn platform_file_path(trace: &Path) -> PathBuf {
    beside(trace, "platform.toml")
}

/// `run.txt` → `run.EXT`.
fn beside(trace: &Path, ext: &str) -> PathBuf {
    let stem = trace
        .file_stem()
        .map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    trace.with_file_name(format!("{stem}.{ext}"))
}

/// Simulate one run: `Simulation::new` then `Simulation::run`.
pub fn simulate(run: Run, out: &Outputs) -> Result<Results, Error> {
    Simulation::new(run, out)?.run()
}

/// A run set up and not yet finished: the machine, its tasks and the staged outputs. The
/// halves of `simulate` (`new`, then `run`), apart so that a benchmark can time the
/// simulation without its set-up, or a stretch of it (`advance`; `benches/scenarios.rs`).
pub struct Simulation {
    kernel: Kernel,
    queue: EventQueue<Event>,
    /// What the run has popped so far.
    stats: sim::RunStats,
    duration: u64,
    seed: u64,
    reproducible: bool,
    started: std::time::Instant,
    out: Outputs,
    staged: [Option<output::Staged>; 3],
    plat_info: Option<(PathBuf, String)>,
}

impl Simulation {
    /// Check the workload against the platform, open the outputs and build the kernel.
    pub fn new(run: Run, out: &Outputs) -> Result<Simulation, Error> {
        run.workload.check_platform(run.platform.nr_cpus())?;
        let duration = run
            .duration_ns
            .or(run.workload.global.duration_ns)
            .unwrap_or(DEFAULT_DURATION_NS);
        // Every output is staged (output.rs) and put in place only once the run has succeeded.
        let mut staged_trace = None;
        let trace: Option<Box<dyn Observer>> = match &out.trace {
            Some(path) => {
                let (staged, f) = output::Staged::file(path).map_err(|e| Error::io(path, e))?;
                let nr_cpus = run.platform.nr_cpus();
                // The file's writer runs on a reader thread of the ring buffer.
                let deferred = match out.trace_format.of(path) {
                    TraceFormat::Dat => {
                        // The .dat writer reopens its (staged) file and writes its page files
                        // beside it.
                        drop(f);
                        Deferred::new(Dat::new(staged.path(), nr_cpus), "trace-dat")
                    }
                    _ => Deferred::new(
                        Ftrace::with_options(f, nr_cpus, out.trace_events, out.trace_counters),
                        "trace-text",
                    ),
                };
                let trace: Box<dyn Observer> = Box::new(deferred.map_err(|e| Error::io(path, e))?);
                staged_trace = Some(staged);
                Some(trace)
            }
            None => None,
        };
        let plat_info = out.trace.as_ref().map(|p| {
            let info = report::plat_info::RunInfo::new(
                &run.platform,
                &run.variant,
                run.workload.global.calibration,
            );
            (
                plat_info_path(p),
                report::plat_info::run_plat_info_yaml(&run.platform, &info),
            )
        });
        let staged_plot = match &out.plot {
            Some(dir) => Some(output::Staged::dir(dir).map_err(|e| Error::io(dir, e))?),
            None => None,
        };
        let mut events = out.trace_events;
        if out.trace.is_some() && out.trace_counters {
            events = events.with_counter_sources();
        }
        let observer: Option<Box<dyn Observer>> = match (&staged_plot, trace) {
            (None, trace) => trace,
            (Some(dir), trace) => {
                let plot = PlotRecorder::new(dir.path(), &run.platform, duration);
                let wanted = PlotRecorder::events();
                events.sched_pelt_se |= wanted.sched_pelt_se;
                events.uclamp_util_se |= wanted.uclamp_util_se;
                match trace {
                    Some(trace) => Some(Box::new(Tee {
                        trace,
                        trace_events: out.trace_events,
                        plot,
                    })),
                    None => Some(Box::new(plot)),
                }
            }
        };
        let staged_logs = match &out.rtapp_logs {
            Some(dir) => Some(output::Staged::dir(dir).map_err(|e| Error::io(dir, e))?),
            None => None,
        };
        let logs = match &staged_logs {
            Some(dir) => Some(
                RtappLogs::new(dir.path(), &run.workload.global.log_basename)
                    .map_err(|e| Error::io(dir.target(), e))?,
            ),
            None => None,
        };
        let started = std::time::Instant::now();
        let mut queue: EventQueue<Event> = EventQueue::new();
        let kernel = Kernel::new(
            run.platform,
            run.variant,
            run.workload,
            KernelOutputs {
                observer,
                rtapp_logs: logs,
                events,
            },
            SimRng::new(run.seed),
            &mut queue,
        )?;
        Ok(Simulation {
            kernel,
            queue,
            stats: sim::RunStats::default(),
            duration,
            seed: run.seed,
            reproducible: run.reproducible,
            started,
            out: out.clone(),
            staged: [staged_trace, staged_logs, staged_plot],
            plat_info,
        })
    }

    /// Simulate up to `until` (at most the run's duration): what this stretch popped.
    pub fn advance(&mut self, until: sim::Time) -> sim::RunStats {
        let stretch = sim::run(&mut self.kernel, &mut self.queue, until.min(self.duration));
        self.stats.handled += stretch.handled;
        self.stats.stale += stretch.stale;
        self.stats.last = self.stats.last.max(stretch.last);
        stretch
    }

    /// Run the kernel's full invariant check after every event (debug builds only; by
    /// default it runs now and then, and after each event only the checks of what the event
    /// touched: `kernel/invariants.rs`). Slow: for tests.
    #[cfg(debug_assertions)]
    pub fn check_fully_every_event(&mut self) {
        self.kernel.check_fully_every_event();
    }

    /// Simulate to the end, put the outputs in place and collect the results.
    pub fn run(mut self) -> Result<Results, Error> {
        self.advance(self.duration);
        let Simulation {
            mut kernel,
            queue,
            stats: events,
            duration,
            seed,
            reproducible,
            started,
            out,
            staged,
            plat_info,
        } = self;
        // The run ends at the duration, or earlier when every thread has exited (the last
        // exit, whatever kernel timers are still armed, as rt-app's main ends when it has
        // joined its threads), or when nothing is left to happen.
        let end = if queue.is_empty() || kernel.workload_ended() {
            events.last
        } else {
            duration
        };
        // The events left (a thread each that has not started yet, in a run cut short)
        // go before the results are made beside the kernel.
        drop(queue);
        kernel.finish(end);
        let (trace_done, logs_done) = kernel.finish_outputs();
        if let Some(path) = out.trace.as_ref().or(out.plot.as_ref()) {
            trace_done.map_err(|e| Error::io(path, e))?;
        }
        if let Some(dir) = &out.rtapp_logs {
            logs_done.map_err(|e| Error::io(dir, e))?;
        }
        // The outputs are complete: put them in place, the trace's plat_info.yml last.
        for staged in staged.into_iter().flatten() {
            let target = staged.target().to_path_buf();
            staged.commit().map_err(|e| Error::io(&target, e))?;
        }
        if let Some((yml, text)) = plat_info {
            output::write_atomic(&yml, text.as_bytes()).map_err(|e| Error::io(&yml, e))?;
        }
        let wall = if reproducible {
            0
        } else {
            started.elapsed().as_nanos() as u64
        };
        Ok(Results::collect(&kernel, seed, end, events, wall))
    }
}

//! `schedlab gen`: workloads the seeds measure, written as rt-app JSON (plus the schedlab
//! `generator` key, so the results report the generator's own metric).

mod cyclictest;
mod fio;
mod forkloop;
mod frames;
mod hackbench;
mod netperf;
mod pipe;
mod schbench;
mod tbench;

pub use crate::workload::Generator;
pub use cyclictest::{cyclictest, CyclictestArgs};
pub use fio::{fio, FioArgs};
pub use forkloop::{forkloop, ForkloopArgs};
pub use frames::{frames, FramesArgs};
pub use hackbench::{hackbench, HackbenchArgs, GROUP_FDS};
pub use netperf::{netperf, NetperfArgs};
pub use pipe::{pipe, PipeArgs};
pub use schbench::{schbench, SchbenchArgs};
pub use tbench::{channels as tbench_channels, payload_bytes as tbench_payload_bytes};
pub use tbench::{tbench, TbenchArgs};

/// Every generator, as `schedlab gen NAME ARGS…` and experiment files (`gen = "NAME"`, `args`)
/// name it. A new generator is a variant here and an arm in [`GenCommand::json`].
#[derive(Debug, Clone, clap::Subcommand)]
pub enum GenCommand {
    /// fio-like psync I/O loop (seed 004); the results report `iops`.
    Fio(FioArgs),
    /// One short-lived task at a time, forked and waited for (seed 003); reports
    /// `pids_per_sec`.
    Forkloop(ForkloopArgs),
    /// `perf bench sched pipe -T`-like ping-pong (seeds 000, 001); reports `ops_per_sec`.
    Pipe(PipeArgs),
    /// `hackbench -g G -l L [-p] [-T]` (seed 002): senders and receivers over sockets or
    /// pipes; reports `completion_ns`.
    Hackbench(HackbenchArgs),
    /// `cyclictest --policy other|fifo -i US -D S` (seed 002); reports the timer wake-up
    /// latency (min/avg/max, percentiles).
    Cyclictest(CyclictestArgs),
    /// `schbench -m M -t T` (seed 002); reports the workers' wake-up latency percentiles.
    Schbench(SchbenchArgs),
    /// `netperf -t UDP_STREAM|TCP_STREAM -- -m SIZE` on loopback (seeds 000, 001); reports
    /// throughput.
    Netperf(NetperfArgs),
    /// dbench's `tbench N`: client/server process pairs exchanging SMB-sized packets over
    /// loopback TCP; reports `mb_per_sec`.
    Tbench(TbenchArgs),
    /// TouchLatency-like frames beside periodic background load (seed 002); reports missed
    /// frames and frame latency.
    Frames(FramesArgs),
    /// The tasks of a trace (`trace-cmd report` text or trace.dat) as an rt-app workload.
    FromTrace(crate::replay::GenFromTraceArgs),
}

impl GenCommand {
    /// The generated rt-app workload, or the error of arguments clap cannot check alone.
    pub fn json(&self) -> Result<serde_json::Value, crate::error::InputError> {
        Ok(match self {
            GenCommand::Fio(a) => fio(a),
            GenCommand::Forkloop(a) => forkloop(a),
            GenCommand::Pipe(a) => pipe(a),
            GenCommand::Hackbench(a) => hackbench(a),
            GenCommand::Cyclictest(a) => cyclictest(a)?,
            GenCommand::Schbench(a) => schbench(a),
            GenCommand::Netperf(a) => netperf(a),
            GenCommand::Tbench(a) => tbench(a),
            GenCommand::Frames(a) => frames(a),
            GenCommand::FromTrace(a) => {
                let l = a.extract.load()?;
                l.extraction().workload()
            }
        })
    }

    /// What `schedlab gen` prints: the JSON, or for `from-trace` the workload with a header
    /// comment naming its trace.
    pub fn text(&self) -> Result<String, crate::Error> {
        match self {
            GenCommand::FromTrace(a) => crate::replay::gen_from_trace(a),
            _ => Ok(serde_json::to_string_pretty(&self.json()?).expect("JSON serialises")),
        }
    }
}

/// `schedlab gen`'s grammar, to parse a generator invocation given as words.
#[derive(clap::Parser, Debug)]
#[command(name = "schedlab gen", no_binary_name = true)]
struct GenWords {
    #[command(subcommand)]
    command: GenCommand,
}

/// Run generator `name` with command-line style `args` (`["--runtime", "5"]`); a bad name or
/// argument is an input error naming `file` and `place`.
pub fn generate(
    name: &str,
    args: &[String],
    file: &str,
    place: &str,
) -> Result<serde_json::Value, crate::error::InputError> {
    use clap::{CommandFactory, FromArgMatches};
    let cmd = crate::args::lenient(GenWords::command());
    let words: Vec<String> = std::iter::once(name.to_string())
        .chain(args.iter().cloned())
        .collect();
    let command = cmd
        .clone()
        .try_get_matches_from(&words)
        .and_then(|m| GenWords::from_arg_matches(&m))
        .map_err(|e| {
            let (what, expected, found) = crate::args::error_parts(&cmd, &words, &e)
                .unwrap_or_else(|| {
                    let usage = format!("a generator invocation (`schedlab gen {name} --help`)");
                    (
                        "--help".to_string(),
                        usage,
                        "a request for help".to_string(),
                    )
                });
            crate::error::InputError::new(file, format!("{place} {what}"), expected, found)
        })?
        .command;
    command.json().map_err(|e| {
        crate::error::InputError::new(file, format!("{place} {}", e.place), e.expected, e.found)
    })
}

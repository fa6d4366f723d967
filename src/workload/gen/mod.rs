//! `schedlab gen`: workloads the seeds measure, written as rt-app JSON (plus the schedlab
//! `generator` key, so the results report the generator's own metric).

mod fio;
mod forkloop;
mod pipe;

pub use fio::{fio, FioArgs};
pub use forkloop::{forkloop, ForkloopArgs};
pub use pipe::{pipe, PipeArgs};

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
}

impl GenCommand {
    /// The generated rt-app workload.
    pub fn json(&self) -> serde_json::Value {
        match self {
            GenCommand::Fio(a) => fio(a),
            GenCommand::Forkloop(a) => forkloop(a),
            GenCommand::Pipe(a) => pipe(a),
        }
    }
}

/// `schedlab gen`'s grammar, to parse a generator invocation given as words.
#[derive(clap::Parser)]
#[command(name = "gen", no_binary_name = true)]
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
    use clap::Parser;
    let words = std::iter::once(name.to_string()).chain(args.iter().cloned());
    GenWords::try_parse_from(words)
        .map(|g| g.command.json())
        .map_err(|e| {
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            crate::error::InputError::new(
                file,
                place,
                format!("a generator invocation (`schedlab gen {name} --help`)"),
                first.to_string(),
            )
        })
}

/// A generator whose metric the results report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// fio-like psync I/O loop: `iops`.
    Fio,
    /// One short-lived task at a time, forked and waited for: `pids_per_sec`.
    Forkloop,
    /// Two threads passing a token: `ops_per_sec`, `usecs_per_op`.
    Pipe,
}

impl Generator {
    pub const NAMES: &'static [&'static str] = &["fio", "forkloop", "pipe"];

    pub fn parse(s: &str) -> Option<Generator> {
        match s {
            "fio" => Some(Generator::Fio),
            "forkloop" => Some(Generator::Forkloop),
            "pipe" => Some(Generator::Pipe),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Generator::Fio => "fio",
            Generator::Forkloop => "forkloop",
            Generator::Pipe => "pipe",
        }
    }
}

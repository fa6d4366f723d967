//! `schedlab gen`: workloads the seeds measure, written as rt-app JSON (plus the schedlab
//! `generator` key, so the results report the generator's own metric).

mod fio;
mod forkloop;
mod pipe;

pub use fio::{fio, FioArgs};
pub use forkloop::{forkloop, ForkloopArgs};
pub use pipe::{pipe, PipeArgs};

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

//! `schedlab gen`: workloads the seeds measure, written as rt-app JSON (plus the schedlab
//! `generator` key, so the results report the generator's own metric).

mod fio;
mod forkloop;

pub use fio::{fio, FioArgs};
pub use forkloop::{forkloop, ForkloopArgs};

/// A generator whose metric the results report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// fio-like psync I/O loop: `iops`.
    Fio,
    /// One short-lived task at a time, forked and waited for: `pids_per_sec`.
    Forkloop,
}

impl Generator {
    pub const NAMES: &'static [&'static str] = &["fio", "forkloop"];

    pub fn parse(s: &str) -> Option<Generator> {
        match s {
            "fio" => Some(Generator::Fio),
            "forkloop" => Some(Generator::Forkloop),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Generator::Fio => "fio",
            Generator::Forkloop => "forkloop",
        }
    }
}

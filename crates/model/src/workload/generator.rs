//! The schedlab extension key `generator`: which of `schedlab gen`'s generators wrote a
//! workload, so that the results report that generator's own metric.

/// A generator whose metric the results report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// fio-like psync I/O loop: `iops`.
    Fio,
    /// One short-lived task at a time, forked and waited for: `pids_per_sec`.
    Forkloop,
    /// Two threads passing a token: `ops_per_sec`, `usecs_per_op`.
    Pipe,
    /// Groups of senders and receivers over sockets or pipes: `completion_ns`. `threads`:
    /// hackbench's `-T` (only the reported mode differs).
    Hackbench { threads: bool },
    /// Timer wake-up latency: min/avg/max and percentiles, µs.
    Cyclictest,
    /// Message threads waking workers: the workers' wake-up latency percentiles, µs.
    Schbench,
    /// A sender and a receiver over loopback: `mbit_per_sec`, messages per second.
    Netperf,
    /// Client/server pairs over loopback TCP: `mb_per_sec` of read and written payload.
    Tbench,
    /// A frame task beside periodic background load: missed frames, frame latency.
    Frames,
}

impl Generator {
    pub const NAMES: &'static [&'static str] = &[
        "fio",
        "forkloop",
        "pipe",
        "hackbench",
        "hackbench-threads",
        "cyclictest",
        "schbench",
        "netperf",
        "tbench",
        "frames",
    ];

    pub fn parse(s: &str) -> Option<Generator> {
        match s {
            "fio" => Some(Generator::Fio),
            "forkloop" => Some(Generator::Forkloop),
            "pipe" => Some(Generator::Pipe),
            "hackbench" => Some(Generator::Hackbench { threads: false }),
            "hackbench-threads" => Some(Generator::Hackbench { threads: true }),
            "cyclictest" => Some(Generator::Cyclictest),
            "schbench" => Some(Generator::Schbench),
            "netperf" => Some(Generator::Netperf),
            "tbench" => Some(Generator::Tbench),
            "frames" => Some(Generator::Frames),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Generator::Fio => "fio",
            Generator::Forkloop => "forkloop",
            Generator::Pipe => "pipe",
            Generator::Hackbench { threads: false } => "hackbench",
            Generator::Hackbench { threads: true } => "hackbench-threads",
            Generator::Cyclictest => "cyclictest",
            Generator::Schbench => "schbench",
            Generator::Netperf => "netperf",
            Generator::Tbench => "tbench",
            Generator::Frames => "frames",
        }
    }
}

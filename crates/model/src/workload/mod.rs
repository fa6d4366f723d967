//! Simulated user space: rt-app workloads (`rtapp/` parses the JSON grammar, read by the
//! base crate's lenient ordered JSON reader; `warning.rs` what rt-app ignores and we report;
//! `thread.rs` runs one rt-app thread as a state machine that issues `Syscall`s to the
//! simulated kernel; `rtapp_ftrace.rs` the trace_marker lines it writes; `rtapp_log.rs` its
//! per-thread log files).

mod generator;
mod rtapp;
mod rtapp_ftrace;
mod rtapp_log;
mod syscall;
mod thread;
mod warning;

pub use generator::Generator;
pub use rtapp::*;
pub use rtapp_ftrace::*;
pub use rtapp_log::RtappLogs;
pub use syscall::*;
pub use thread::*;
pub use warning::*;

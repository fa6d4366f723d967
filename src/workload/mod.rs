//! Simulated user space: rt-app workloads (`rtapp.rs` parses the JSON grammar, `json.rs` is
//! the lenient ordered JSON reader it needs, `warning.rs` what rt-app ignores and we report, `thread.rs` runs one rt-app thread as a state
//! machine that issues `Syscall`s to the simulated kernel, `rtapp_ftrace.rs` the trace_marker lines it writes, `gen/` writes the seeds' workloads).

mod cpumask;
pub mod gen;
mod json;
mod rtapp;
mod rtapp_ftrace;
mod syscall;
mod thread;
mod warning;

pub use rtapp::*;
pub use rtapp_ftrace::*;
pub use syscall::*;
pub use thread::*;
pub use warning::*;

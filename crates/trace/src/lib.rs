//! Traces, written and read. Writers observe the kernel's event stream
//! (`schedlab_model::kernel::tracepoint`): the ftrace text writer (`ftrace.rs`), in the
//! `trace-cmd report` format LISA and Perfetto read, with its tasks' renderings kept
//! (`task_text.rs`, numbers by `text.rs`); trace-cmd's binary `trace.dat` (`dat.rs`, with the
//! tracefs format files in `dat/formats.rs`). A trace file's writer runs on a thread of its
//! own, fed by the ring buffer (`ring_buffer.rs`). `replay/` reads a recorded trace (ours or a
//! real machine's) into per-task steps and extracts an rt-app workload from them.

mod dat;
mod ftrace;
pub mod replay;
mod ring_buffer;
mod task_text;
mod text;

pub use dat::Dat;
pub use ftrace::Ftrace;
pub use ring_buffer::Deferred;

/// A trace file's clock: the simulated time plus this, in both formats. A kernel's trace
/// clock counts from boot, so a real trace has no record at 0, and KernelShark's loader
/// reads 0 as "no record": libkshark's `pick_next_cpu()` (src/libkshark-tepdata.c, 2.0
/// to 2.3.1) merges the CPUs' records by `if (!ts || rec_ts < ts)`, so while the record it
/// holds is at 0 the next CPU's wins whatever its time, and the records at t = 0 (every
/// CPU's initial state) made it emit CPU after CPU instead of in time order. One
/// nanosecond keeps every record off 0 and moves nothing else: durations, the order, what
/// a reader computes from differences (LISA's analyses, the replay reader) are unchanged.
/// Only the timestamps move: the times events carry (PELT's `update_time`, rt-app's
/// `clock_ref`) and the results' stay the simulation's.
pub const CLOCK_OFFSET_NS: u64 = 1;

/// The file format of `--trace`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TraceFormat {
    /// `dat` when the file name ends in `.dat`, else `text`.
    #[default]
    Auto,
    /// `trace-cmd report` text (`ftrace.rs`).
    Text,
    /// trace-cmd's binary trace.dat (`dat.rs`).
    Dat,
}

impl TraceFormat {
    /// `--trace-format`'s value.
    pub fn parse(s: &str) -> Result<TraceFormat, schedlab_base::error::InputError> {
        match s {
            "text" => Ok(TraceFormat::Text),
            "dat" => Ok(TraceFormat::Dat),
            _ => Err(schedlab_base::error::InputError::new(
                "--trace-format",
                s,
                "text or dat",
                format!("`{s}`"),
            )),
        }
    }

    /// The format of a trace written to `path`.
    pub fn of(self, path: &std::path::Path) -> TraceFormat {
        match self {
            TraceFormat::Auto if path.extension().is_some_and(|e| e == "dat") => TraceFormat::Dat,
            TraceFormat::Auto => TraceFormat::Text,
            f => f,
        }
    }
}

//! What a run reports: the JSON results (`results.rs`), the human summary (`summary.rs`) and
//! the latency histograms they are built from (`histogram.rs`).

mod histogram;
mod results;
mod summary;

pub use histogram::{LatencyHistogram, LatencySummary};
pub use results::{CpuResult, Results, TaskResult};
pub use summary::summary;

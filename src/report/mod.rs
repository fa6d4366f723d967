//! What a run reports: the JSON results (`results.rs`), the human summary (`summary.rs`), the
//! latency histograms (`histogram.rs`) and energy (`energy.rs`) they are built from, and the
//! latency and throughput generators' metrics (`workload.rs`).

pub mod compare;
mod energy;
mod histogram;
pub mod plot;
mod results;
mod summary;
mod workload;

pub use energy::{cluster_energy_mj, cpu_energy_mj};
pub use histogram::{LatencyHistogram, LatencySummary};
pub use results::{CpuResult, DomainResult, ExitedForksResult, Results, TaskResult};
pub use summary::summary;
pub use workload::{completion_ns, ChannelResult};

//! What a run reports: the JSON results (`results.rs`), the human summary (`summary.rs`), the
//! latency histograms (`histogram.rs`) and energy (`energy.rs`) they are built from.

pub mod compare;
mod energy;
mod histogram;
pub mod plot;
mod results;
mod summary;

pub use energy::{cluster_energy_mj, cpu_energy_mj};
pub use histogram::{LatencyHistogram, LatencySummary};
pub use results::{
    generator_metrics, CpuResult, DomainResult, ExitedForksResult, Results, TaskResult,
};
pub use summary::summary;

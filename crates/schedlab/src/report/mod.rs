//! What a run reports: the JSON results (`results.rs`), the human summary (`summary.rs`), the
//! energy (`energy.rs`) they are built from, the latency and throughput generators' metrics
//! (`workload.rs`), LISA's `plat_info.yml` (`plat_info.rs`), comparisons (`compare.rs`),
//! plots (`plot.rs`), what the machine's paths cost (`explain.rs`, `schedlab explain-cost`)
//! and `host validate`'s table of the machine against schedlab (`validation.rs`).

pub mod compare;
mod energy;
mod explain;
pub mod plat_info;
pub mod plot;
mod results;
mod summary;
mod switches;
pub mod validation;
mod workload;

pub use energy::{cluster_energy_mj, cpu_energy_mj};
pub use explain::{explain_cost, ExplainCostArgs};
pub use results::{CpuResult, DomainResult, ExitedForksResult, Results, TaskResult};
pub use schedlab_base::histogram::{LatencyHistogram, LatencySummary};
pub use summary::summary;
pub use switches::switch_table;
pub use workload::{completion_ns, ChannelResult};

//! schedlab's foundation, below the model: the discrete-event engine (`sim/`), the inline
//! `NR_CPUS`-bit CPU mask (`cpumask.rs`), user-input errors with their places (`error.rs`),
//! the ordered, place-keeping JSON reader rt-app's grammar needs (`json.rs`), the one reader
//! of TOML and JSON documents by key path with their places (`place.rs`), and the sparse HDR
//! latency histograms (`histogram.rs`). Nothing here knows the kernel.

pub mod cpumask;
pub mod error;
pub mod histogram;
pub mod json;
pub mod place;
pub mod sim;

pub use cpumask::{CpuSet, NR_CPUS};
pub use error::InputError;
pub use histogram::{LatencyHistogram, LatencySummary};

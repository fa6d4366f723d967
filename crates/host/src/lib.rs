//! schedlab-host: schedlab on the machine it runs on, for ground truth from the kernel there.
//!
//! - [`platform`]: the machine as a platform file (`schedlab host platform`), read from
//!   sysfs and procfs under a root (`/`, or a snapshot for tests: [`sysfs`]), with
//!   `/proc/cpuinfo`'s model mapped to the uarch names schedlab's costs know ([`cpuinfo`]).
//! - [`record`]: a command run under tracefs (`schedlab host record`): a trace instance of
//!   our own ([`tracefs`]) records the scheduler's events, and its text becomes the layout
//!   `schedlab run --trace` writes ([`convert`]), which `gen from-trace` and `replay` read.
//! - [`calibrate`]: the platform's kernel path costs fitted on two named microbenchmarks of
//!   the machine (`schedlab host calibrate`), measured with [`measure`] (each run with the
//!   steal time and the other tasks' CPU time beside it).
//! - [`validate`]: real workloads (the rt-app examples, hackbench, `perf bench sched pipe`,
//!   cyclictest, replays of their traces) against schedlab on the platform (`schedlab host
//!   validate`).
//!
//! Above the `schedlab` crate (for the platform reader and LISA's plat_info), below the
//! command line, which parses the arguments (`src/host.rs`).

pub mod calibrate;
pub mod convert;
pub mod cpuinfo;
mod kernel;
pub mod measure;
pub mod platform;
pub mod record;
mod sys;
pub mod sysfs;
pub mod tracefs;
pub mod validate;

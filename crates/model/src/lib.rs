//! schedlab's model: the simulated machine and what runs on it. `platform/` (CPUs,
//! capacities, OPPs, idle states, caches, the `[costs]` table and its files), `machine.rs`
//! (the rules that turn the kernel's paths into time on the machine's CPUs, with the table),
//! `kernel/` (the v6.1 scheduler, one module per kernel file, and the events it emits),
//! `workload/` (the simulated user space: rt-app's grammar and its threads). No command line,
//! no reports.

pub mod kernel;
pub mod machine;
pub mod platform;
pub mod workload;

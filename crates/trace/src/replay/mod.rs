//! A recorded trace read back: `reader.rs` (trace-cmd report text, allocation-free per line),
//! `timeline.rs` (records → per-task steps: work, blocks and who ended them, forks, with the
//! machine's time taken out), `extract.rs` (steps → an rt-app workload: channels, timers,
//! sleeps, phases).

pub mod extract;
pub mod reader;
pub mod timeline;

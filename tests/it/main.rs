//! The integration tests: one binary (one link), a module per area. Each test asserts a
//! property of the kernel being modelled (the mailing-list threads, kernel source, the host kernel) or
//! of the tool's contract; `common` holds the helpers and the visible skip.

mod common;

mod cli;
mod compare;
mod core_behaviour;
mod cpufreq_governors;
mod cpuidle;
mod docs;
mod eevdf;
mod energy;
mod experiment;
mod fork_bound;
mod frequency;
mod generators;
mod group_sched;
mod host;
mod host_validate;
mod hrtimer;
mod invariants;
mod latency_nice;
mod layers;
mod lisa_trace;
mod machine_time;
mod pelt_oracle;
mod placement;
mod platform;
mod plots;
mod properties;
mod replay;
mod reproduce;
mod rtapp_examples;
mod schema;
mod seed002;
mod servers;
mod skips;
mod smoke;
mod sweep;
mod trace_formats;
mod uclamp_cost;
mod uclamp_model;
mod uclamp_system;
mod workload_end;
mod workload_parse;

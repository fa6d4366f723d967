//! The JSON results of a run (DESIGN.md "JSON results"): stable field names, fields are added
//! and never renamed.

use super::LatencySummary;
use crate::kernel::Kernel;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    pub name: String,
    pub pid: u32,
    pub policy: &'static str,
    pub prio: i32,
    pub runtime_ns: u64,
    pub wakeups: u64,
    pub preemptions: u64,
    pub migrations: u64,
    /// Timer-driven activations (rt-app `timer` events).
    pub activations: u64,
    /// Activations that found their period already over (rt-app's negative slack).
    pub deadline_misses: u64,
    pub wakeup_latency_ns: LatencySummary,
    /// Runtime per CPU, keyed by CPU number (CPUs the task never ran on are left out).
    pub cpu_runtime_ns: BTreeMap<String, u64>,
    /// Whether the task had exited by the end of the run.
    pub exited: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuResult {
    pub cpu: usize,
    pub capacity_orig: u32,
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// Time at each frequency, keyed by kHz.
    pub freq_residency_ns: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub schedlab_version: &'static str,
    pub platform: String,
    pub workload: String,
    pub seed: u64,
    pub duration_ns: u64,
    pub variant: serde_json::Value,
    pub tasks: Vec<TaskResult>,
    pub cpus: Vec<CpuResult>,
    /// Events the engine handled.
    pub sim_events: u64,
    /// Host time the simulation took (0 with `--reproducible`, so results compare byte for
    /// byte).
    pub wall_ns: u64,
}

impl Results {
    /// Collect the results from a kernel whose books were closed at `end`.
    pub fn collect(k: &Kernel, seed: u64, end: u64, sim_events: u64, wall_ns: u64) -> Results {
        let tasks = k
            .tasks
            .iter()
            .map(|t| TaskResult {
                name: t.name.clone(),
                pid: t.pid,
                policy: t.policy.name(),
                prio: t.prio(),
                runtime_ns: t.sum_exec_runtime,
                wakeups: t.stats.wakeups,
                preemptions: t.stats.preemptions,
                migrations: t.stats.migrations,
                activations: t.thread.activations(),
                deadline_misses: t.thread.deadline_misses(),
                wakeup_latency_ns: t.stats.wakeup_latency.summary(),
                cpu_runtime_ns: t
                    .stats
                    .cpu_runtime
                    .iter()
                    .enumerate()
                    .filter(|(_, &ns)| ns > 0)
                    .map(|(c, &ns)| (c.to_string(), ns))
                    .collect(),
                exited: t.state == crate::kernel::sched::TaskState::Dead,
            })
            .collect();
        let cpus = k
            .rqs
            .iter()
            .enumerate()
            .map(|(cpu, rq)| CpuResult {
                cpu,
                capacity_orig: k.platform.cpus[cpu].capacity_orig,
                busy_ns: rq.busy_ns,
                idle_ns: rq.idle_ns,
                freq_residency_ns: rq
                    .freq_residency
                    .iter()
                    .map(|&(khz, ns)| (khz.to_string(), ns))
                    .collect(),
            })
            .collect();
        Results {
            schedlab_version: env!("CARGO_PKG_VERSION"),
            platform: k.platform.name.clone(),
            workload: k.workload().file.clone(),
            seed,
            duration_ns: end,
            variant: k.variant.to_json(),
            tasks,
            cpus,
            sim_events,
            wall_ns,
        }
    }
}

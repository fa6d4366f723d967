//! The JSON results of a run (DESIGN.md "JSON results"): stable field names, fields are added
//! and never renamed.

use super::workload::ChannelResult;
use super::{cluster_energy_mj, cpu_energy_mj, LatencySummary};
use crate::error::OneLine;
use crate::gen::Generator;
use crate::kernel::core::AdminRecord;
use crate::kernel::cpuidle::Residency;
use crate::kernel::fair_balance::BalanceStats;
use crate::kernel::sched::{LatencySplit, TaskState, ThreadCounts};
use crate::kernel::uclamp::{Sysctl, UclampOps};
use crate::kernel::Kernel;
use crate::platform::{IdleState, Opp};
use crate::sim::RunStats;
use schedlab_base::place::join;
use serde::Serialize;
use serde_json::json;
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
    /// Blocking I/Os (rt-app `iorun`) completed.
    pub io_completions: u64,
    /// Threads forked.
    pub forks: u64,
    /// Timer-driven activations (rt-app `timer` events).
    pub activations: u64,
    /// Activations that found their period already over (rt-app's negative slack).
    pub deadline_misses: u64,
    pub wakeup_latency_ns: LatencySummary,
    /// Where the wake-up latency went, summed over the wakeups (and the wait after
    /// preemptions, which is not part of it).
    pub latency_split_ns: LatencySplit,
    /// PELT utilization at the task's last update (0..=1024), and its util_est ewma; 0 for
    /// an exited task (its entity is gone).
    pub util_avg: u64,
    pub util_est_ewma: u32,
    /// Runtime per CPU, keyed by CPU number (CPUs the task never ran on are left out).
    pub cpu_runtime_ns: BTreeMap<String, u64>,
    /// Effective uclamp values at the end (`uclamp_eff_value`).
    pub uclamp_min: u32,
    pub uclamp_max: u32,
    /// The requests as `sched_getattr` returns them (`sched_util_min`, `sched_util_max`).
    pub uclamp_request: [u32; 2],
    /// The latency nice `sched_getattr` returns (seed 002; 0 without the series).
    pub latency_nice: i32,
    /// rt-app's util_min/util_max requests the kernel refused, and the last errno.
    pub setattr_errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setattr_errno: Option<&'static str>,
    /// Whether the task had exited by the end of the run.
    pub exited: bool,
    /// Whether another thread forked it (rather than it starting with the workload).
    pub forked: bool,
}

/// The forked threads of one workload task that exited during the run, summed (their
/// entries are not kept one by one, so a fork loop's results stay small).
#[derive(Debug, Clone, Serialize)]
pub struct ExitedForksResult {
    /// The workload task they ran.
    pub task: String,
    #[serde(flatten)]
    pub counts: ThreadCounts,
    pub wakeup_latency_ns: LatencySummary,
    pub latency_split_ns: LatencySplit,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuResult {
    pub cpu: usize,
    pub capacity_orig: u32,
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// CPU energy (active + idle states), mJ; the cluster's share is in `domains`.
    pub energy_mj: f64,
    /// Time at each frequency (busy or idle), keyed by kHz.
    pub freq_residency_ns: BTreeMap<String, u64>,
    /// Idle time per idle state, keyed by state name.
    pub idle_state_ns: BTreeMap<String, u64>,
}

/// A task group of the cpu controller.
#[derive(Debug, Clone, Serialize)]
pub struct CgroupResult {
    pub path: String,
    #[serde(rename = "cpu.uclamp.min")]
    pub uclamp_min: String,
    #[serde(rename = "cpu.uclamp.max")]
    pub uclamp_max: String,
    pub effective: [u32; 2],
    /// `cpu.weight` and `cpu.latency.nice` as they read; null where the file does not exist
    /// (CONFIG_FAIR_GROUP_SCHED off; the latency-nice series off).
    #[serde(rename = "cpu.weight")]
    pub weight: Option<u64>,
    #[serde(rename = "cpu.latency.nice")]
    pub latency_nice: Option<i32>,
}

/// A frequency domain and the cluster its CPUs form.
#[derive(Debug, Clone, Serialize)]
pub struct DomainResult {
    pub cpus: Vec<usize>,
    /// Time with at least one CPU busy.
    pub busy_ns: u64,
    /// Cluster energy (shared logic: active while any CPU runs, cluster idle states), mJ.
    pub cluster_energy_mj: f64,
    /// Time of the domain at each frequency, keyed by kHz.
    pub freq_residency_ns: BTreeMap<String, u64>,
    pub idle_state_ns: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    /// The format version of this JSON (`schema/results.schema.json`).
    pub schema_version: u32,
    pub schedlab_version: &'static str,
    pub platform: String,
    /// The workload file (or `-`, or `<default workload>`).
    pub workload_file: String,
    /// What the workload has that rt-app ignores (unknown keys, resumes of nobody), one
    /// line each as printed on stderr.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub seed: u64,
    pub duration_ns: u64,
    pub variant: serde_json::Value,
    /// Threads alive at the end, and threads started with the workload.
    pub tasks: Vec<TaskResult>,
    pub exited_forks: Vec<ExitedForksResult>,
    /// Forks that failed with EAGAIN because `global.threads_max` threads were alive (each
    /// forked task's count is a warning too); absent when none did.
    #[serde(skip_serializing_if = "is_zero")]
    pub fork_failures: u64,
    pub cpus: Vec<CpuResult>,
    pub domains: Vec<DomainResult>,
    /// Total energy of CPUs and clusters, mJ.
    pub energy_mj: f64,
    /// The generator's own metric, for workloads written by `schedlab gen`.
    #[serde(rename = "workload", skip_serializing_if = "Option::is_none")]
    pub workload_metrics: Option<serde_json::Value>,
    /// The workload's IPC channels (extension `send`/`recv`) and what went through them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<ChannelResult>,
    /// uclamp fast-path work (bucket increments, decrements, rescans), the cost the static
    /// key debate of seeds 000/001 is about, and whether the key is on at the end.
    pub uclamp_ops: UclampOps,
    pub uclamp_static_key_on: bool,
    /// The uclamp sysctls as they read at the end.
    pub sysctls: BTreeMap<&'static str, u32>,
    /// The timed sysctl/cgroup writes and their results.
    pub admin_writes: Vec<AdminRecord>,
    /// Task groups with their `cpu.uclamp.*` files as they read and their effective clamps.
    pub cgroups: Vec<CgroupResult>,
    /// Whether EAS ran, and the placement and balancing counters.
    pub eas_enabled: bool,
    pub balance: BalanceStats,
    /// Events the engine handled (useful work).
    pub sim_events: u64,
    /// Events popped and ignored because a generation counter had cancelled them.
    pub sim_events_stale: u64,
    /// Host time the simulation took (0 with `--reproducible`, so results compare byte for
    /// byte).
    pub wall_ns: u64,
}

impl Results {
    /// Collect the results from a kernel whose books were closed at `end`.
    pub fn collect(k: &Kernel, seed: u64, end: u64, events: RunStats, wall_ns: u64) -> Results {
        let tasks = task_results(k);
        let (cpus, domains) = cpu_results(k);
        let energy_mj = cpus.iter().map(|c| c.energy_mj).sum::<f64>()
            + domains.iter().map(|d| d.cluster_energy_mj).sum::<f64>();
        let exited_forks: Vec<ExitedForksResult> = k
            .exited_forks
            .iter()
            .enumerate()
            .filter(|(_, e)| e.counts.threads > 0)
            .map(|(spec, e)| ExitedForksResult {
                task: k.workload().tasks[spec].name.clone(),
                counts: e.counts,
                wakeup_latency_ns: e.wakeup_latency.summary(),
                latency_split_ns: e.latency_split,
            })
            .collect();
        let mut uclamp_ops = UclampOps::default();
        for rq in &k.rqs {
            uclamp_ops += rq.uclamp.ops;
        }
        let cgroups = cgroup_results(k);
        let w = k.workload();
        let workload_metrics = if w.parts.is_empty() {
            w.global
                .generator
                .map(|g| generator_metrics(k, g, "", &tasks, &exited_forks, end))
        } else {
            let parts = w.parts.iter().filter_map(|p| {
                let g = p.generator?;
                let m = generator_metrics(k, g, &p.prefix, &tasks, &exited_forks, end);
                Some((p.name.clone(), m))
            });
            Some(serde_json::Value::Object(parts.collect()))
        };
        Results {
            schema_version: super::compare::SCHEMA_VERSION,
            schedlab_version: env!("CARGO_PKG_VERSION"),
            platform: k.platform.name.clone(),
            workload_file: k.workload().file.clone(),
            warnings: k
                .workload()
                .warnings
                .iter()
                .map(ToString::to_string)
                .chain(fork_warnings(k))
                .collect(),
            seed,
            duration_ns: end,
            variant: k.variant.to_json(),
            tasks,
            exited_forks,
            fork_failures: k.fork_failures.iter().sum(),
            cpus,
            domains,
            energy_mj,
            workload_metrics,
            channels: super::workload::channels(k),
            uclamp_ops,
            uclamp_static_key_on: k.uclamp.used,
            sysctls: [
                (Sysctl::Min.name(), k.uclamp.util_min),
                (Sysctl::Max.name(), k.uclamp.util_max),
                (Sysctl::MinRtDefault.name(), k.uclamp.util_min_rt_default),
            ]
            .into_iter()
            .collect(),
            admin_writes: k.admin_log.clone(),
            cgroups,
            eas_enabled: k.lb.eas,
            balance: k.lb.stats,
            sim_events: events.handled,
            sim_events_stale: events.stale,
            wall_ns,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A warning for each workload task some forks of which failed at `threads_max`, written
/// as the workload's warnings are.
fn fork_warnings(k: &Kernel) -> impl Iterator<Item = String> + '_ {
    let w = k.workload();
    let (file, max) = (&w.file, w.global.threads_max);
    k.fork_failures
        .iter()
        .zip(&w.tasks)
        .filter(|(n, _)| **n > 0)
        .map(move |(n, task)| {
            format!(
                "{}: {}: warning: {n} forks of it failed with EAGAIN, {max} threads being \
                 alive (global.threads_max, as kernel.threads-max); the forking threads went \
                 on without their child",
                OneLine(file),
                OneLine(&join("tasks", &task.name)),
            )
        })
}

/// Each task's results, without the forked threads that exited (counted in
/// `exited_forks`: their slots may be reused).
fn task_results(k: &Kernel) -> Vec<TaskResult> {
    let live = |t: &crate::kernel::sched::Task| (t.state != TaskState::Dead).then_some(t.se);
    // Room for them all at once: a million threads' results are a few hundred MB, which
    // growing by doubling would hold twice at the peak, beside the kernel's.
    let mut all = Vec::with_capacity(k.tasks.len());
    all.extend(
        k.tasks
            .iter()
            // Exited forked threads are counted in `exited_forks` (their slots may be reused).
            .enumerate()
            .filter(|(_, t)| !(t.forked && t.state == TaskState::Dead))
            .map(|(id, t)| TaskResult {
                name: t.name.clone(),
                pid: t.pid,
                policy: t.policy.name(),
                prio: t.prio(),
                runtime_ns: t.sum_exec_runtime,
                wakeups: t.stats.wakeups,
                preemptions: t.stats.preemptions,
                migrations: t.stats.migrations,
                io_completions: t.stats.io_completions,
                forks: t.stats.forks,
                activations: t.thread_counts().0,
                deadline_misses: t.thread_counts().1,
                wakeup_latency_ns: t.stats.wakeup_latency.summary(),
                latency_split_ns: t.stats.latency_split,
                util_avg: live(t).map_or(0, |se| k.fair.ses[se].avg.util_avg),
                util_est_ewma: live(t).map_or(0, |se| k.fair.ses[se].avg.util_est.ewma),
                cpu_runtime_ns: t
                    .stats
                    .cpu_runtime
                    .per_cpu()
                    .into_iter()
                    .map(|(c, ns)| (c.to_string(), ns))
                    .collect(),
                uclamp_request: [t.uclamp.req[0].value, t.uclamp.req[1].value],
                latency_nice: t.latency_nice,
                uclamp_min: k.uclamp_eff_now(id).0,
                uclamp_max: k.uclamp_eff_now(id).1,
                setattr_errors: t.setattr_errors,
                setattr_errno: t.last_setattr_errno,
                exited: t.state == TaskState::Dead,
                forked: t.forked,
            }),
    );
    all
}

/// Each CPU's and each frequency domain's results.
fn cpu_results(k: &Kernel) -> (Vec<CpuResult>, Vec<DomainResult>) {
    let p = &k.platform;
    let cpus: Vec<CpuResult> = k
        .rqs
        .iter()
        .enumerate()
        .map(|(cpu, rq)| {
            let c = &p.cpus[cpu];
            let opps = &p.freq_domains[c.freq_domain].opps;
            CpuResult {
                cpu,
                capacity_orig: c.capacity_orig,
                busy_ns: rq.res.busy_ns(),
                idle_ns: rq.res.idle_ns(),
                energy_mj: cpu_energy_mj(&rq.res, opps, &c.idle_states),
                freq_residency_ns: freq_residency(&rq.res, opps),
                idle_state_ns: per_state(&rq.res, &c.idle_states),
            }
        })
        .collect();
    let domains: Vec<DomainResult> = k
        .domains
        .iter()
        .zip(&p.freq_domains)
        .map(|(d, fd)| DomainResult {
            cpus: fd.cpus.clone(),
            busy_ns: d.res.busy_ns(),
            cluster_energy_mj: cluster_energy_mj(&d.res, &fd.opps, &fd.cluster_idle_states),
            freq_residency_ns: freq_residency(&d.res, &fd.opps),
            idle_state_ns: per_state(&d.res, &fd.cluster_idle_states),
        })
        .collect();
    (cpus, domains)
}

/// Each cgroup's files as read at the end, the root left out.
fn cgroup_results(k: &Kernel) -> Vec<CgroupResult> {
    (1..k.cgroups.len())
        .map(|g| CgroupResult {
            path: k.cgroups.path(g).to_string(),
            uclamp_min: k.cgroups.read_uclamp(g, 0),
            uclamp_max: k.cgroups.read_uclamp(g, 1),
            effective: k.cgroups.effective(g),
            weight: k.fair.group_sched().then(|| k.fair.group_weight(g)),
            latency_nice: (k.fair.group_sched()
                && k.variant.latency_nice != crate::kernel::variant::LatencyNice::Off)
                .then(|| k.fair.group_latency_nice(g)),
        })
        .collect()
}

/// The metric of generator `g` over the threads whose names start with `prefix` (and the
/// channels named so), for a run that ended at `end` ns.
fn generator_metrics(
    k: &Kernel,
    g: Generator,
    prefix: &str,
    tasks: &[TaskResult],
    exited_forks: &[ExitedForksResult],
    end: u64,
) -> serde_json::Value {
    let secs = end as f64 / 1e9;
    let own = |name: &str| name.strip_prefix(prefix).map(str::to_string);
    let tasks = tasks.iter().filter(|t| own(&t.name).is_some());
    let forks = exited_forks.iter().filter(|e| own(&e.task).is_some());
    match g {
        Generator::Fio => {
            let ios: u64 = tasks.map(|t| t.io_completions).sum::<u64>()
                + forks.map(|e| e.counts.io_completions).sum::<u64>();
            json!({ "generator": g.name(), "ios": ios, "iops": ios as f64 / secs })
        }
        Generator::Pipe => {
            // Each round trip wakes the sender once.
            let ops: u64 = tasks
                .filter(|t| own(&t.name).is_some_and(|n| n.starts_with("sender-")))
                .map(|t| t.wakeups)
                .sum();
            let per_sec = ops as f64 / secs;
            json!({ "generator": g.name(), "ops": ops, "ops_per_sec": per_sec, "usecs_per_op": 1e6 / per_sec })
        }
        Generator::Forkloop => {
            // A PID is consumed per launched program that ran to its end.
            let pids: u64 = forks.map(|e| e.counts.threads).sum();
            json!({ "generator": g.name(), "pids": pids, "pids_per_sec": pids as f64 / secs })
        }
        Generator::Hackbench { .. }
        | Generator::Cyclictest
        | Generator::Schbench
        | Generator::Netperf
        | Generator::Tbench
        | Generator::Frames => super::workload::metrics(k, g, prefix, end),
    }
}

/// Time at each OPP, busy or idle, keyed by kHz.
fn freq_residency(res: &Residency, opps: &[Opp]) -> BTreeMap<String, u64> {
    opps.iter()
        .enumerate()
        .map(|(i, o)| {
            (
                o.freq_khz.to_string(),
                res.busy_opp_ns[i] + res.idle_opp_ns[i],
            )
        })
        .collect()
}

fn per_state(res: &Residency, states: &[IdleState]) -> BTreeMap<String, u64> {
    states
        .iter()
        .zip(&res.idle_state_ns)
        .map(|(s, &ns)| (s.name.clone(), ns))
        .collect()
}

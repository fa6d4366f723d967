//! The simulated hardware: CPUs with their capacities, frequency domains (cpufreq policies)
//! with OPP tables and power, idle states, caches and SMT siblings.
//!
//! Presets are platform files compiled into the binary (`presets.rs`); `file.rs` reads the
//! same fields from a TOML or JSON file.

mod costs;
mod file;
mod presets;

pub use costs::{
    a53_cycles, work_per_cycle, Costs, IpcCosts, MachineField, Memory, COST_FIELDS, MEMORY_FIELDS,
    TASK_STATE_LINES,
};
pub use file::{load_file, parse_platform};
pub use presets::{preset, preset_names};

use schedlab_base::error::InputError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// `SCHED_CAPACITY_SCALE`: the biggest CPU at its highest OPP.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;

/// One operating performance point of a frequency domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opp {
    /// Frequency in kHz, as cpufreq and the `cpu_frequency` trace event use.
    pub freq_khz: u32,
    /// Active power of one CPU of the domain running at this OPP, in mW.
    pub power_mw: f64,
    /// Extra power of the cluster while any of its CPUs runs at this OPP, in mW.
    #[serde(default)]
    pub cluster_power_mw: f64,
}

/// One idle state (cpuidle state of a CPU, or of a whole cluster).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleState {
    pub name: String,
    pub power_mw: f64,
    pub exit_latency_ns: u64,
    /// The shortest stay that pays for entering the state (`target_residency_ns`, the
    /// device tree's `min-residency-us`); the file's default is the exit latency.
    pub target_residency_ns: u64,
    /// `CPUIDLE_FLAG_POLLING`: the CPU spins instead of stopping (x86's POLL state).
    #[serde(default)]
    pub polling: bool,
    /// The exit a wake-up from this state pays on average, where `exit_latency_ns` is the
    /// worst case the driver declares (intel_idle's tables) and the governors, PM QoS and
    /// placement plan with. The machine's time charges this one (`IdleState::exit_paid_ns`);
    /// unset, the declared latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typical_exit_ns: Option<u64>,
}

impl IdleState {
    /// What a wake-up from this state waits before the CPU runs: its typical exit if the
    /// platform gives one, else the declared exit latency.
    pub fn exit_paid_ns(&self) -> u64 {
        self.typical_exit_ns.unwrap_or(self.exit_latency_ns)
    }
}

/// A cpufreq policy: CPUs that share one frequency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreqDomain {
    pub cpus: Vec<usize>,
    /// Ascending by frequency.
    pub opps: Vec<Opp>,
    /// `cpuinfo.transition_latency` in ns.
    #[serde(default)]
    pub transition_latency_ns: u64,
    /// The driver's `transition_delay_us`, if it sets one.
    #[serde(default)]
    pub transition_delay_us: Option<u64>,
    /// The driver can set the frequency from the scheduler's context
    /// (`fast_switch_possible`); otherwise schedutil defers to its kthread.
    #[serde(default = "default_true")]
    pub fast_switch: bool,
    /// The driver has a frequency table (x86 P-states have none: schedutil then requests
    /// raw kHz).
    #[serde(default = "default_true")]
    pub freq_table: bool,
    /// `policy->dvfs_possible_from_any_cpu`: the driver takes a frequency request from any
    /// CPU (cpufreq-dt, scpi-cpufreq, scmi-cpufreq and qcom-cpufreq-hw set it). Without it
    /// (intel_cpufreq, acpi-cpufreq) `cpufreq_this_cpu_can_update()` is false on a CPU outside
    /// the policy, and the governors ignore a `cpufreq_update_util()` made there for this
    /// policy's rqs (a remote enqueue, the nohz idle balancer's blocked-load update).
    /// Written out only when unset, so a platform that does not say stays as it was.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub dvfs_possible_from_any_cpu: bool,
    /// Idle states of the cluster these CPUs form (shallowest first).
    #[serde(default)]
    pub cluster_idle_states: Vec<IdleState>,
}

/// One CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    /// Micro-architecture name, for humans and plat_info (e.g. "cortex-a53").
    pub uarch: String,
    /// Capacity at the highest OPP, 1..=1024.
    pub capacity_orig: u32,
    /// Index into `Platform::freq_domains`.
    pub freq_domain: usize,
    /// Last-level-cache id: CPUs with the same id share an LLC.
    pub llc: usize,
    /// SMT siblings of this CPU (other logical CPUs of the same core), if any.
    #[serde(default)]
    pub smt_siblings: Vec<usize>,
    /// Physical package (socket) id: CPUs of one package form the DIE level.
    #[serde(default)]
    pub package: usize,
    /// NUMA node id, a row of `Platform::numa_distance` (0 on a machine without one).
    #[serde(default)]
    pub node: usize,
    /// Idle states of this CPU (shallowest first).
    #[serde(default)]
    pub idle_states: Vec<IdleState>,
}

/// A whole platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub cpus: Vec<Cpu>,
    pub freq_domains: Vec<FreqDomain>,
    /// The platform's CONFIG_HZ if it differs from the kernel default (rk3399: 100).
    #[serde(default)]
    pub hz: Option<u32>,
    /// Whether the kernel registers an energy model for the CPUs (DT power data on Arm;
    /// not on the x86 of seed 003). cpufreq then skips inefficient OPPs.
    #[serde(default = "default_true")]
    pub energy_model: bool,
    /// Whether the architecture provides frequency invariance (arm64 AMU/cpufreq: yes; the
    /// x86 of seed 003: no).
    #[serde(default = "default_true")]
    pub freq_invariant: bool,
    /// The ACPI SLIT: `numa_distance[a][b]` is node_distance(a, b), 10 on the diagonal.
    /// Empty: one node.
    #[serde(default)]
    pub numa_distance: Vec<Vec<u32>>,
    /// The architecture's `node_reclaim_distance` if it changes RECLAIM_DISTANCE (30):
    /// AMD Zen sets 32. NUMA levels farther than it lose SD_WAKE_AFFINE and fork balancing.
    #[serde(default)]
    pub node_reclaim_distance: Option<u32>,
    /// What the kernel paths cost (`[costs]`; missing keys from the uarch of the
    /// capacity-1024 CPU, see `costs.rs`).
    pub costs: Costs,
    /// The memory hierarchy working sets are refilled from (`[memory]`).
    pub memory: Memory,
    /// The kernel the platform runs, as `--set` switches (`[kernel]`: `variant.fair =
    /// "eevdf"` for a v6.6+ kernel, `config.UCLAMP_TASK = false`, a tunable): the
    /// platform's defaults (`Variant::for_platform`), which an experiment's `[set]` and the
    /// command line's `--set` override. By key; checked when the file is read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel: BTreeMap<String, String>,
}

fn default_true() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Platform {
    /// A preset by name, or a platform file by path.
    pub fn resolve(name_or_path: &str) -> Result<Platform, InputError> {
        if let Some(p) = preset(name_or_path) {
            return Ok(p);
        }
        let path = std::path::Path::new(name_or_path);
        if path.exists() {
            return load_file(path);
        }
        Err(InputError::new(
            "--platform",
            name_or_path,
            format!(
                "a preset ({}) or a platform file",
                preset_names().join(", ")
            ),
            "neither",
        ))
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The number of NUMA nodes (1 without a distance table).
    pub fn nr_nodes(&self) -> usize {
        self.numa_distance.len().max(1)
    }

    /// `node_distance(a, b)`: the SLIT entry, `LOCAL_DISTANCE` (10) without a table.
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        self.numa_distance
            .get(a)
            .and_then(|row| row.get(b))
            .copied()
            .unwrap_or(10)
    }

    pub fn domain_of(&self, cpu: usize) -> &FreqDomain {
        &self.freq_domains[self.cpus[cpu].freq_domain]
    }

    /// Highest frequency of the CPU's domain, in kHz (`cpuinfo.max_freq`).
    pub fn max_freq_khz(&self, cpu: usize) -> u32 {
        self.domain_of(cpu).opps.last().map_or(0, |o| o.freq_khz)
    }

    /// Lowest frequency of the CPU's domain, in kHz (`cpuinfo.min_freq`).
    pub fn min_freq_khz(&self, cpu: usize) -> u32 {
        self.domain_of(cpu).opps.first().map_or(0, |o| o.freq_khz)
    }

    /// Capacity of `cpu` at `freq_khz`: `capacity_orig * freq / max_freq`.
    pub fn capacity_at(&self, cpu: usize, freq_khz: u32) -> u32 {
        let max = self.max_freq_khz(cpu) as u64;
        if max == 0 {
            return self.cpus[cpu].capacity_orig;
        }
        (self.cpus[cpu].capacity_orig as u64 * freq_khz as u64 / max) as u32
    }

    /// Whether CPU capacities differ (SD_ASYM_CPUCAPACITY).
    pub fn is_asymmetric(&self) -> bool {
        let first = self.cpus.first().map(|c| c.capacity_orig);
        self.cpus.iter().any(|c| Some(c.capacity_orig) != first)
    }

    /// The text `schedlab platforms NAME` prints: CPUs, frequency domains with their OPP
    /// tables, idle states, CONFIG_HZ and frequency invariance.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let topology = if self.is_asymmetric() {
            "asymmetric CPU capacities (SD_ASYM_CPUCAPACITY)"
        } else {
            "symmetric CPU capacities"
        };
        let domains = match self.freq_domains.len() {
            1 => "1 frequency domain".to_string(),
            n => format!("{n} frequency domains"),
        };
        let _ = writeln!(
            out,
            "{}: {} CPUs, {domains}, {topology}",
            self.name,
            self.nr_cpus()
        );
        if !self.description.is_empty() {
            let _ = writeln!(out, "{}", self.description.trim_end());
        }
        let hz = self
            .hz
            .map_or("the kernel's default".to_string(), |hz| hz.to_string());
        let _ = writeln!(out, "CONFIG_HZ: {hz}");
        let invariance = if self.freq_invariant {
            "yes (arch_scale_freq_capacity() follows the current frequency)"
        } else {
            "no (arch_scale_freq_capacity() is always 1024)"
        };
        let _ = writeln!(out, "Frequency invariance: {invariance}");
        if !self.kernel.is_empty() {
            let switches: Vec<String> = self
                .kernel
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let _ = writeln!(out, "Kernel defaults: {}", switches.join(" "));
        }

        let uarch_width = self
            .cpus
            .iter()
            .map(|c| c.uarch.len())
            .max()
            .unwrap_or(0)
            .max(5);
        let _ = writeln!(
            out,
            "\nCPU  {:uarch_width$}  capacity  domain  LLC  SMT siblings  idle states",
            "uarch"
        );
        for (i, cpu) in self.cpus.iter().enumerate() {
            let siblings = if cpu.smt_siblings.is_empty() {
                "-".to_string()
            } else {
                cpu_list(&cpu.smt_siblings)
            };
            let _ = writeln!(
                out,
                "{i:>3}  {:uarch_width$}  {:>8}  {:>6}  {:>3}  {siblings:12}  {}",
                cpu.uarch,
                cpu.capacity_orig,
                cpu.freq_domain,
                cpu.llc,
                idle_states(&cpu.idle_states)
            );
        }

        // Domains with the same tables (one policy per CPU on x86) are shown once.
        let alike = |a: &FreqDomain, b: &FreqDomain| {
            let capacity = |d: &FreqDomain| d.cpus.first().map(|&c| self.cpus[c].capacity_orig);
            a.opps == b.opps
                && a.transition_latency_ns == b.transition_latency_ns
                && a.transition_delay_us == b.transition_delay_us
                && a.cluster_idle_states == b.cluster_idle_states
                && capacity(a) == capacity(b)
        };
        let mut shown = vec![false; self.freq_domains.len()];
        for (d, domain) in self.freq_domains.iter().enumerate() {
            if shown[d] {
                continue;
            }
            let group: Vec<usize> = (d..self.freq_domains.len())
                .filter(|&e| !shown[e] && alike(domain, &self.freq_domains[e]))
                .collect();
            for &e in &group {
                shown[e] = true;
            }
            if group.len() == 1 {
                let _ = writeln!(
                    out,
                    "\nFrequency domain {d}: CPUs {}",
                    cpu_list(&domain.cpus)
                );
            } else {
                let cpus: Vec<String> = group
                    .iter()
                    .map(|&e| cpu_list(&self.freq_domains[e].cpus))
                    .collect();
                let _ = writeln!(
                    out,
                    "\nFrequency domains {}, alike: CPUs {}",
                    cpu_list(&group),
                    cpus.join("; ")
                );
            }
            let delay = domain
                .transition_delay_us
                .map_or("none set by the driver".to_string(), |us| {
                    format!("{us} us")
                });
            let _ = writeln!(
                out,
                "  transition latency {}, transition delay {delay}",
                duration(domain.transition_latency_ns)
            );
            if !domain.cluster_idle_states.is_empty() {
                let _ = writeln!(
                    out,
                    "  cluster idle states: {}",
                    idle_states(&domain.cluster_idle_states)
                );
            }
            // The capacity column is that of the domain's first CPU, as capacity_at() gives it.
            let Some(&first) = domain.cpus.first() else {
                continue;
            };
            let _ = writeln!(
                out,
                "  {:>9}  {:>8}  {:>8}  {:>10}",
                "freq_khz", "capacity", "power_mw", "cluster_mw"
            );
            for opp in &domain.opps {
                let _ = writeln!(
                    out,
                    "  {:>9}  {:>8}  {:>8}  {:>10}",
                    opp.freq_khz,
                    self.capacity_at(first, opp.freq_khz),
                    opp.power_mw,
                    opp.cluster_power_mw
                );
            }
        }
        out
    }
}

/// CPU ids in the kernel's cpulist style: `0,3-5`.
fn cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn idle_states(states: &[IdleState]) -> String {
    if states.is_empty() {
        return "-".to_string();
    }
    let states: Vec<String> = states
        .iter()
        .map(|s| {
            let typical = s
                .typical_exit_ns
                .map_or(String::new(), |t| format!(" (typical {})", duration(t)));
            format!(
                "{} {} mW exit {}{typical} residency {}",
                s.name,
                s.power_mw,
                duration(s.exit_latency_ns),
                duration(s.target_residency_ns)
            )
        })
        .collect();
    states.join(", ")
}

/// A duration in ns, in us when that is exact.
fn duration(ns: u64) -> String {
    if ns % 1000 == 0 {
        format!("{} us", ns / 1000)
    } else {
        format!("{ns} ns")
    }
}

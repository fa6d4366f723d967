//! LISA's `plat_info.yml`, written beside a trace so that LISA analyses know the platform
//! (DESIGN.md, "Trace").
//!
//! The file is what `lisa.platforms.platinfo.PlatformInfo.from_yaml_map()` (LISA 3.1) reads:
//! the keys under `platform-info: conf:`, typed as LISA's `PlatformInfo.STRUCTURE` declares
//! them. The energy model is built with LISA's `!call:` tag, which calls a Python class with
//! keyword arguments; that constructs a real `lisa.energy_model.EnergyModel`, with its own
//! consistency checks, instead of the pickled object graph LISA's own dump would contain.
//! The YAML is written by hand in a fixed order, so equal platforms give equal bytes.

use crate::platform::SCHED_CAPACITY_SCALE;
use crate::platform::{FreqDomain, IdleState, Platform};
use crate::workload::Calibration;
use std::fmt::Write;

/// The kernel whose scheduler schedlab models (mainline v6.1).
const KERNEL_VERSION: &str = "6.1.0";

/// What a run adds to its platform's plat_info: the kernel's configuration and rt-app's
/// calibration.
pub struct RunInfo {
    /// `CONFIG_*` name and Kconfig value (`y`, `n`, a number), in order.
    pub config: Vec<(String, String)>,
    /// Per CPU: rt-app's calibration, ns per loop at the CPU's highest OPP.
    pub calib: Vec<u64>,
}

/// Kconfig options the model always has (an SMP v6.1 kernel with the cpu cgroup
/// controller and idle NO_HZ), set `y` beside the variant's own `config.*` switches.
const FIXED_CONFIG: &[&str] = &["SMP", "CGROUP_SCHED", "NO_HZ_IDLE"];

/// rt-app's loop has no fixed cost in schedlab (`calibration` only scales the logs), so a
/// workload without an ns-per-loop integer is described with a nominal 1024 ns per loop
/// at capacity 1024: LISA derives CPU capacities from the ratios of these values.
const NOMINAL_LOOP_NS: u64 = 1024;

impl RunInfo {
    /// The plat_info additions of a run with `variant` and the workload's `calibration`.
    pub fn new(p: &Platform, variant: &crate::kernel::Variant, calibration: Calibration) -> Self {
        let mut config: Vec<(String, String)> = FIXED_CONFIG
            .iter()
            .map(|n| (format!("CONFIG_{n}"), "y".to_string()))
            .collect();
        if let serde_json::Value::Object(switches) = variant.to_json() {
            for (key, value) in switches {
                let Some(name) = key.strip_prefix("config.") else {
                    continue;
                };
                let value = match value {
                    serde_json::Value::Bool(b) => if b { "y" } else { "n" }.to_string(),
                    v => v.to_string(),
                };
                config.push((format!("CONFIG_{name}"), value));
            }
        }
        let (loop_ns, at_capacity) = match calibration {
            Calibration::LoopNs(ns) => (ns, SCHED_CAPACITY_SCALE),
            Calibration::Cpu(c) if c < p.nr_cpus() => (NOMINAL_LOOP_NS, p.cpus[c].capacity_orig),
            _ => (NOMINAL_LOOP_NS, SCHED_CAPACITY_SCALE),
        };
        let calib = p
            .cpus
            .iter()
            .map(|c| (loop_ns * u64::from(at_capacity) / u64::from(c.capacity_orig.max(1))).max(1))
            .collect();
        RunInfo { config, calib }
    }
}

/// Micro-architecture names of the Arm cores platform files use (the presets' cortex-*
/// and Qualcomm kryo*, and Neoverse servers).
const ARM_UARCH_PREFIXES: &[&str] = &["cortex-", "kryo", "neoverse-"];

/// The ABI LISA names (devlib's `abi`): `arm64` for Arm cores, else `x86_64`.
fn abi(p: &Platform) -> &'static str {
    let arm = p
        .cpus
        .iter()
        .all(|c| ARM_UARCH_PREFIXES.iter().any(|a| c.uarch.starts_with(a)));
    if arm {
        "arm64"
    } else {
        "x86_64"
    }
}

/// LISA's `plat_info.yml` for `p`.
pub fn plat_info_yaml(p: &Platform) -> String {
    yaml(p, None)
}

/// LISA's `plat_info.yml` for a run on `p`: also `abi`, `kernel.config` and `rtapp.calib`,
/// which LISA's rt-app workload generator needs.
pub fn run_plat_info_yaml(p: &Platform, run: &RunInfo) -> String {
    yaml(p, Some(run))
}

fn yaml(p: &Platform, run: Option<&RunInfo>) -> String {
    let mut y = Yaml(String::new());
    y.line(
        0,
        &format!(
            "# LISA platform info for the schedlab platform {}.",
            quote(&p.name)
        ),
    );
    y.line(
        0,
        "# Load with lisa.platforms.platinfo.PlatformInfo.from_yaml_map(path).",
    );
    y.line(0, "platform-info:");
    y.line(1, "conf:");
    y.line(2, &format!("name: {}", quote(&p.name)));
    y.line(2, "os: linux");
    y.line(2, &format!("cpus-count: {}", p.nr_cpus()));
    y.line(2, "numa-nodes-count: 1");
    y.line(2, "kernel:");
    y.line(3, "version: !call:devlib.target.KernelVersion");
    y.line(4, &format!("version_string: {}", quote(KERNEL_VERSION)));
    if let Some(run) = run {
        // A .config's text, which devlib parses into typed values (tristates, ints).
        let text: String = run
            .config
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect();
        y.line(3, "config: !call:devlib.target.TypedKernelConfig.from_str");
        y.line(4, &format!("text: {}", quote(&text)));
        y.line(2, &format!("abi: {}", quote(abi(p))));
        y.line(2, "rtapp:");
        y.line(3, "calib:");
        for (i, c) in run.calib.iter().enumerate() {
            y.line(4, &format!("{i}: {c}"));
        }
    }
    y.line(2, "cpu-capacities:");
    // LISA derives rt-app capacities from calibration only when these are writeable.
    y.line(3, "writeable: false");
    y.line(3, "orig:");
    for (i, cpu) in p.cpus.iter().enumerate() {
        y.line(4, &format!("{i}: {}", cpu.capacity_orig));
    }
    y.line(2, "freq-domains:");
    for domain in &p.freq_domains {
        y.line(2, &format!("- {}", flow_list(&domain.cpus)));
    }
    y.line(2, "freqs:");
    for i in 0..p.nr_cpus() {
        let freqs: Vec<u32> = p.domain_of(i).opps.iter().map(|o| o.freq_khz).collect();
        y.line(3, &format!("{i}: {}", flow_list(&freqs)));
    }
    if p.cpus.iter().all(|c| !c.idle_states.is_empty()) {
        energy_model(&mut y, p);
    } else {
        // LISA's EnergyModel.guess_idle_states() indexes every CPU's idle states.
        y.line(
            2,
            "# nrg-model omitted: LISA's energy model needs idle states on every CPU.",
        );
    }
    y.0
}

/// `nrg-model`: a two-level `lisa.energy_model.EnergyModel`, one cluster node and one power
/// domain per frequency domain (where schedlab keeps cluster power and cluster idle states),
/// one leaf per CPU.
///
/// LISA looks an idle state up by name at every level of the tree, and numbers states from the
/// root power domain down. So every node lists the CPU-level states first, then the states
/// only a whole cluster enters: a cluster whose CPUs sit in a CPU-level state draws the power
/// of its own state of that name, or else of its shallowest state (it is still up); a CPU in a
/// cluster-level state draws what its deepest own state draws.
fn energy_model(y: &mut Yaml, p: &Platform) {
    y.line(2, "nrg-model: !call:lisa.energy_model.EnergyModel");
    y.line(3, "freq_domains:");
    for domain in &p.freq_domains {
        y.line(3, &format!("- {}", flow_list(&domain.cpus)));
    }
    y.line(3, "root_node: !call:lisa.energy_model.EnergyModelRoot");
    y.line(4, "children:");
    for (d, domain) in p.freq_domains.iter().enumerate() {
        let (cpu_level, cluster_only) = idle_levels(p, domain);
        let cluster = &domain.cluster_idle_states;
        let cluster_up_mw = cluster.first().map_or(0.0, |s| s.power_mw);

        y.line(4, "-   !call:lisa.energy_model.EnergyModelNode");
        y.line(5, &format!("name: {}", quote(&format!("cluster{d}"))));
        y.line(5, "active_states: !!omap");
        for opp in &domain.opps {
            y.line(
                5,
                &format!(
                    "-   {}: !call:lisa.energy_model.ActiveState {{power: {}}}",
                    opp.freq_khz,
                    number(opp.cluster_power_mw)
                ),
            );
        }
        y.line(5, "idle_states: !!omap");
        for name in &cpu_level {
            let power = cluster
                .iter()
                .find(|s| s.name == *name)
                .map_or(cluster_up_mw, |s| s.power_mw);
            y.line(5, &format!("-   {}: {}", quote(name), number(power)));
        }
        for state in &cluster_only {
            y.line(
                5,
                &format!("-   {}: {}", quote(&state.name), number(state.power_mw)),
            );
        }
        y.line(5, "children:");
        for &c in &domain.cpus {
            let cpu = &p.cpus[c];
            y.line(5, "-   !call:lisa.energy_model.EnergyModelNode");
            y.line(6, &format!("cpu: {c}"));
            y.line(6, "active_states: !!omap");
            for opp in &domain.opps {
                y.line(
                    6,
                    &format!(
                        "-   {}: !call:lisa.energy_model.ActiveState {{capacity: {}, power: {}}}",
                        opp.freq_khz,
                        p.capacity_at(c, opp.freq_khz),
                        number(opp.power_mw)
                    ),
                );
            }
            y.line(6, "idle_states: !!omap");
            for state in &cpu.idle_states {
                y.line(
                    6,
                    &format!("-   {}: {}", quote(&state.name), number(state.power_mw)),
                );
            }
            let deepest_mw = cpu.idle_states.last().map_or(0.0, |s| s.power_mw);
            for state in &cluster_only {
                y.line(
                    6,
                    &format!("-   {}: {}", quote(&state.name), number(deepest_mw)),
                );
            }
        }
    }
    y.line(3, "root_power_domain: !call:lisa.energy_model.PowerDomain");
    y.line(4, "idle_states: []");
    y.line(4, "children:");
    for domain in &p.freq_domains {
        let (_, cluster_only) = idle_levels(p, domain);
        let cluster_only: Vec<&str> = cluster_only.iter().map(|s| s.name.as_str()).collect();
        y.line(4, "-   !call:lisa.energy_model.PowerDomain");
        y.line(5, &format!("idle_states: {}", flow_names(&cluster_only)));
        y.line(5, "children:");
        for &c in &domain.cpus {
            let names: Vec<&str> = p.cpus[c]
                .idle_states
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            y.line(
                5,
                &format!(
                    "-   !call:lisa.energy_model.PowerDomain {{cpu: {c}, idle_states: {}}}",
                    flow_names(&names)
                ),
            );
        }
    }
}

/// The idle-state names of `domain`'s CPUs, in order of first appearance, and the cluster
/// idle states with other names: those only the whole cluster enters.
fn idle_levels<'p>(p: &'p Platform, domain: &'p FreqDomain) -> (Vec<&'p str>, Vec<&'p IdleState>) {
    let mut cpu_level: Vec<&str> = Vec::new();
    for &c in &domain.cpus {
        for state in &p.cpus[c].idle_states {
            if !cpu_level.contains(&state.name.as_str()) {
                cpu_level.push(&state.name);
            }
        }
    }
    let cluster_only = domain
        .cluster_idle_states
        .iter()
        .filter(|s| !cpu_level.contains(&s.name.as_str()))
        .collect();
    (cpu_level, cluster_only)
}

/// YAML text under construction, indented four spaces a level as LISA writes it.
struct Yaml(String);

impl Yaml {
    fn line(&mut self, level: usize, text: &str) {
        let _ = writeln!(self.0, "{:width$}{text}", "", width = 4 * level);
    }
}

/// A YAML double-quoted scalar: JSON's string syntax is valid YAML.
fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn flow_list<T: std::fmt::Display>(items: &[T]) -> String {
    let items: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    format!("[{}]", items.join(", "))
}

fn flow_names(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| quote(n)).collect();
    format!("[{}]", names.join(", "))
}

/// A power in mW as YAML reads it back: `33` for whole numbers, else the shortest decimal
/// that round-trips (Rust never prints f64 in exponent form here).
fn number(mw: f64) -> String {
    if mw == 0.0 {
        // Also turns -0.0 into 0.
        "0".to_string()
    } else {
        mw.to_string()
    }
}

//! cpufreq: the policies (`struct cpufreq_policy`) and the governors that choose
//! their frequencies, after v6.1 `drivers/cpufreq/cpufreq.c`, `include/linux/cpufreq.h`,
//! `kernel/sched/cpufreq_schedutil.c` and `drivers/cpufreq/cpufreq_{governor,ondemand,
//! conservative,performance,powersave,userspace}.c`.
//!
//! Governors are pure state machines. The simulated kernel owns time and tasks; it calls
//! [`Cpufreq::update_util`] wherever the kernel calls `cpufreq_update_util()`, runs the work
//! the governor asks for ([`Action::QueueWork`]) as the kernel would (the sugov kthread, a
//! kworker) and applies every [`FreqChange`] it gets back.

mod conservative;
mod dbs;
mod fixed;
mod ondemand;
mod schedutil;
mod userspace;

pub use conservative::Conservative;
pub use dbs::CpuTimes;
pub use fixed::Fixed;
pub use ondemand::Ondemand;
pub use schedutil::Sugov;
pub use userspace::Userspace;

use crate::kernel::sched::Errno;
use crate::platform::{FreqDomain, Opp, Platform, SCHED_CAPACITY_SCALE};

/// `SCHED_CPUFREQ_IOWAIT`: the `flags` bit of a `cpufreq_update_util()` call made when a task
/// that slept in iowait is enqueued.
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1 << 0;

/// `LATENCY_MULTIPLIER`: transition latency (µs) to default transition delay (µs).
pub const LATENCY_MULTIPLIER: u64 = 1000;

const NSEC_PER_USEC: u64 = 1000;
const SCHED_CAPACITY_SHIFT: u32 = 10;

/// A governor, by the name `scaling_governor` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GovernorKind {
    Schedutil,
    Performance,
    Powersave,
    Ondemand,
    Conservative,
    Userspace,
}

impl GovernorKind {
    pub const NAMES: &'static [&'static str] = &[
        "schedutil",
        "performance",
        "powersave",
        "ondemand",
        "conservative",
        "userspace",
    ];

    pub fn parse(s: &str) -> Option<GovernorKind> {
        match s {
            "schedutil" => Some(GovernorKind::Schedutil),
            "performance" => Some(GovernorKind::Performance),
            "powersave" => Some(GovernorKind::Powersave),
            "ondemand" => Some(GovernorKind::Ondemand),
            "conservative" => Some(GovernorKind::Conservative),
            "userspace" => Some(GovernorKind::Userspace),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GovernorKind::Schedutil => "schedutil",
            GovernorKind::Performance => "performance",
            GovernorKind::Powersave => "powersave",
            GovernorKind::Ondemand => "ondemand",
            GovernorKind::Conservative => "conservative",
            GovernorKind::Userspace => "userspace",
        }
    }
}

/// `cpufreq.start_khz`: the frequency every policy holds (`policy->cur`) when its governor
/// starts, at the beginning of a run. v6.1's `cpufreq_start_governor()` runs the governor's
/// `->start` then `->limits` from there: performance and powersave set their frequency at
/// once, ondemand and conservative take `policy->cur` as it is (conservative's
/// `requested_freq` starts from it, `cs_start()`), schedutil keeps it until its first
/// evaluation. At boot `policy->cur` is what the driver found (intel_cpufreq:
/// `cpuinfo.min_freq`); when a governor is switched to on a running machine, it is the
/// frequency the previous governor set last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartFreq {
    /// The governor's own idle frequency, as on a board that has been idle under it for a
    /// while: performance the highest, powersave `policy->min`, schedutil and the sampling
    /// governors the lowest OPP that is not inefficient (their idle requests resolve with an
    /// `E` relation).
    Idle,
    /// `cpuinfo.min_freq`.
    Min,
    /// `cpuinfo.max_freq`: what a performance run leaves behind.
    Max,
    /// The highest OPP at or below this many kHz (the lowest if none is).
    Khz(u32),
}

impl StartFreq {
    pub const EXPECTED: &'static str = "idle, min, max or a frequency in kHz";

    pub fn parse(s: &str) -> Option<StartFreq> {
        match s {
            "idle" => Some(StartFreq::Idle),
            "min" => Some(StartFreq::Min),
            "max" => Some(StartFreq::Max),
            _ => s.parse::<u32>().ok().filter(|&k| k > 0).map(StartFreq::Khz),
        }
    }

    pub fn name(self) -> String {
        match self {
            StartFreq::Idle => "idle".into(),
            StartFreq::Min => "min".into(),
            StartFreq::Max => "max".into(),
            StartFreq::Khz(k) => k.to_string(),
        }
    }
}

/// `CPUFREQ_RELATION_*`. The `E` variants skip OPPs the energy model found inefficient when
/// the policy has any (`policy->efficiencies_available`); only a table without a single
/// efficient OPP falls back to all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Lowest frequency at or above the target.
    L,
    /// Highest frequency at or below the target.
    H,
    /// Closest frequency to the target.
    C,
    LE,
    HE,
    CE,
}

impl Relation {
    fn efficient(self) -> bool {
        matches!(self, Relation::LE | Relation::HE | Relation::CE)
    }
}

/// `__resolve_freq()` on an ascending table: clamp `target_khz` into the policy limits, then
/// pick an entry by `relation` (`cpufreq_frequency_table_target()`). `inefficient` marks
/// OPPs per entry (empty: none, see [`em_inefficient_opps`]). `cpufreq_driver_resolve_freq()`
/// is this with [`Relation::LE`].
pub fn resolve_freq(
    opps_khz: &[u32],
    inefficient: &[bool],
    target_khz: u32,
    min_khz: u32,
    max_khz: u32,
    relation: Relation,
) -> u32 {
    // clamp_val(): min first, then max, so an inverted range yields max as the kernel's does.
    let target = target_khz.max(min_khz).min(max_khz);
    if opps_khz.is_empty() {
        return target;
    }
    opps_khz[table_target(opps_khz, inefficient, target, relation)]
}

/// `cpufreq_frequency_table_target()` on a non-empty ascending table.
fn table_target(table: &[u32], inefficient: &[bool], target: u32, relation: Relation) -> usize {
    let efficiencies = relation.efficient() && inefficient.contains(&true);
    find_index(table, inefficient, target, relation, efficiencies)
        .or_else(|| find_index(table, inefficient, target, relation, false))
        .unwrap_or(0)
}

/// `cpufreq_table_find_index_{al,ah,ac}()`: `None` when no entry is usable.
fn find_index(
    table: &[u32],
    inefficient: &[bool],
    target: u32,
    relation: Relation,
    efficiencies: bool,
) -> Option<usize> {
    let usable = (0..table.len()).filter(|&i| !(efficiencies && inefficient.get(i) == Some(&true)));
    let mut best = None;
    for i in usable {
        let freq = table[i];
        match relation {
            Relation::L | Relation::LE => {
                if freq >= target {
                    return Some(i);
                }
            }
            Relation::H | Relation::HE => {
                if freq == target {
                    return Some(i);
                }
                if freq > target {
                    return Some(best.unwrap_or(i));
                }
            }
            Relation::C | Relation::CE => {
                if freq == target {
                    return Some(i);
                }
                if freq > target {
                    // The closer of the two around the target; a tie goes to the lower one.
                    return Some(match best {
                        Some(b) if target - table[b] <= freq - target => b,
                        _ => i,
                    });
                }
            }
        }
        best = Some(i);
    }
    best
}

/// The OPPs `em_create_perf_table()` marks `EM_PERF_STATE_INEFFICIENT`: those whose cost
/// `fmax * power / freq` (integer mW) is not below that of some faster OPP. They reach the
/// policy through `em_cpufreq_update_efficiencies()` when an energy model is registered.
pub fn em_inefficient_opps(opps: &[Opp]) -> Vec<bool> {
    let fmax = u64::from(opps.last().map_or(0, |o| o.freq_khz));
    let mut inefficient = vec![false; opps.len()];
    let mut prev_cost = u64::MAX;
    for (i, opp) in opps.iter().enumerate().rev() {
        let power = opp.power_mw.round() as u64;
        let cost = fmax * power / u64::from(opp.freq_khz.max(1));
        if cost >= prev_cost {
            inefficient[i] = true;
        } else {
            prev_cost = cost;
        }
    }
    inefficient
}

/// `cpufreq_policy_transition_delay_us()`: the driver's transition delay if it sets one, else
/// `LATENCY_MULTIPLIER` times the transition latency in µs capped at 10 ms, else 1 ms.
/// schedutil's default `rate_limit_us`; the dbs governors' `sampling_rate` floor.
pub fn transition_delay_us(latency_ns: u64, driver_delay_us: Option<u64>) -> u64 {
    if let Some(delay) = driver_delay_us.filter(|&d| d != 0) {
        return delay;
    }
    let latency_us = latency_ns / NSEC_PER_USEC;
    if latency_us != 0 {
        return (latency_us * LATENCY_MULTIPLIER).min(10_000);
    }
    LATENCY_MULTIPLIER
}

/// One cpufreq policy: the part of `struct cpufreq_policy` the governors read and write.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `policy->cpus`.
    pub cpus: Vec<usize>,
    /// Frequencies the driver can set, ascending: the frequency table, or the P-states of a
    /// driver without one.
    pub opps_khz: Vec<u32>,
    /// `CPUFREQ_INEFFICIENT_FREQ` per entry of `opps_khz`, empty when none is marked.
    pub inefficient: Vec<bool>,
    /// Whether `policy->freq_table` exists. intel_cpufreq (x86 passive mode) has none: the
    /// governors' requests stay raw kHz and the driver rounds them to a P-state.
    pub freq_table: bool,
    /// `policy->fast_switch_enabled`: schedutil sets the frequency from the scheduler's
    /// context; otherwise it wakes its kthread ([`Action::QueueWork`]).
    pub fast_switch: bool,
    /// `policy->dvfs_possible_from_any_cpu`: a CPU outside `cpus` may update this policy
    /// ([`Policy::this_cpu_can_update`]).
    pub dvfs_possible_from_any_cpu: bool,
    /// `cpuinfo.transition_latency`.
    pub transition_latency_ns: u64,
    /// `policy->transition_delay_us`, if the driver sets one.
    pub transition_delay_us: Option<u64>,
    /// `policy->min`, `policy->max`: the limits, resolved to table entries.
    pub min_khz: u32,
    pub max_khz: u32,
    /// `policy->cur`.
    pub cur_khz: u32,
}

impl Policy {
    /// A policy over a platform frequency domain, with the full OPP range as limits and the
    /// highest OPP as current frequency; with an `energy_model` its inefficient OPPs are
    /// marked ([`em_inefficient_opps`]). The platform does not say whether the driver can fast
    /// switch or has a table, so this assumes both (cpufreq-dt and scpi-cpufreq cannot fast
    /// switch and intel_cpufreq has no table: set the fields for those).
    pub fn from_domain(domain: &FreqDomain, energy_model: bool) -> Policy {
        let opps_khz: Vec<u32> = domain.opps.iter().map(|o| o.freq_khz).collect();
        let min_khz = opps_khz.first().copied().unwrap_or(0);
        let max_khz = opps_khz.last().copied().unwrap_or(0);
        let inefficient = if energy_model {
            em_inefficient_opps(&domain.opps)
        } else {
            Vec::new()
        };
        Policy {
            cpus: domain.cpus.clone(),
            opps_khz,
            inefficient,
            freq_table: true,
            fast_switch: true,
            dvfs_possible_from_any_cpu: domain.dvfs_possible_from_any_cpu,
            transition_latency_ns: domain.transition_latency_ns,
            transition_delay_us: domain.transition_delay_us,
            min_khz,
            max_khz,
            cur_khz: max_khz,
        }
    }

    /// `policy->cpuinfo.min_freq`.
    pub fn cpuinfo_min_khz(&self) -> u32 {
        self.opps_khz.first().copied().unwrap_or(0)
    }

    /// `policy->cpuinfo.max_freq`.
    pub fn cpuinfo_max_khz(&self) -> u32 {
        self.opps_khz.last().copied().unwrap_or(0)
    }

    /// `cpufreq_this_cpu_can_update()` (kernel/sched/cpufreq.c) with `local` the CPU running
    /// the hook (`smp_processor_id()`): a CPU of the policy, or any CPU if the driver allows
    /// it. (Its other half, the local CPU still having a hook installed, holds while a
    /// governor runs: every CPU of a modelled system has one.)
    pub fn this_cpu_can_update(&self, local: usize) -> bool {
        self.dvfs_possible_from_any_cpu || self.cpus.contains(&local)
    }

    /// The OPP `policy->cur` holds when `governor` starts from `start`, within the limits.
    pub fn start_freq(&self, start: StartFreq, governor: GovernorKind) -> u32 {
        let opp = |target: u32, relation: Relation| {
            let target = target.max(self.min_khz).min(self.max_khz);
            if self.opps_khz.is_empty() {
                return target;
            }
            let ineff: &[bool] = if self.freq_table {
                &self.inefficient
            } else {
                &[]
            };
            self.opps_khz[table_target(&self.opps_khz, ineff, target, relation)]
        };
        match (start, governor) {
            (StartFreq::Idle, GovernorKind::Performance) | (StartFreq::Max, _) => {
                opp(self.max_khz, Relation::H)
            }
            (StartFreq::Idle, GovernorKind::Powersave) | (StartFreq::Min, _) => {
                opp(self.min_khz, Relation::L)
            }
            (StartFreq::Idle, _) => opp(self.min_khz, Relation::LE),
            (StartFreq::Khz(k), _) => opp(k, Relation::H),
        }
    }

    /// `cpufreq_policy_transition_delay_us()` of this policy.
    pub fn transition_delay_us(&self) -> u64 {
        transition_delay_us(self.transition_latency_ns, self.transition_delay_us)
    }

    /// `__resolve_freq()`: within the limits, then a table entry unless there is no table.
    /// An `E` relation may pick an efficient OPP above `max` (v6.1 does not re-check it).
    pub fn resolve(&self, target_khz: u32, relation: Relation) -> u32 {
        let clamped = target_khz.max(self.min_khz).min(self.max_khz);
        if !self.freq_table || self.opps_khz.is_empty() {
            return clamped;
        }
        self.opps_khz[table_target(&self.opps_khz, &self.inefficient, clamped, relation)]
    }

    /// The frequency the hardware ends up at for a resolved request: the entry itself with a
    /// table; without one, intel_cpufreq's rounding to a P-state (`intel_cpufreq_target()`:
    /// up for L, down for H, `DIV_ROUND_CLOSEST()` for C, where a tie rounds up).
    fn driver_freq(&self, resolved_khz: u32, relation: Relation) -> u32 {
        let opps = &self.opps_khz;
        if self.freq_table || opps.is_empty() {
            return resolved_khz;
        }
        match relation {
            Relation::C | Relation::CE => match opps.iter().position(|&f| f >= resolved_khz) {
                Some(u) if u > 0 && resolved_khz - opps[u - 1] < opps[u] - resolved_khz => {
                    opps[u - 1]
                }
                Some(u) => opps[u],
                None => opps[opps.len() - 1],
            },
            // Without a table there are no efficiency marks.
            _ => opps[table_target(opps, &[], resolved_khz, relation)],
        }
    }

    /// `__cpufreq_driver_target()`: resolve, and switch unless that is already the current
    /// frequency. Returns the new frequency.
    fn driver_target(&mut self, target_khz: u32, relation: Relation) -> Option<u32> {
        let resolved = self.resolve(target_khz, relation);
        if resolved == self.cur_khz {
            return None;
        }
        self.cur_khz = self.driver_freq(resolved, relation);
        Some(self.cur_khz)
    }

    /// `cpufreq_driver_fast_switch()`: clamp into the limits; the driver sets the lowest
    /// frequency at or above the request (intel_cpufreq rounds up to a P-state).
    fn fast_switch_to(&mut self, target_khz: u32) -> u32 {
        let clamped = target_khz.max(self.min_khz).min(self.max_khz);
        self.cur_khz = self.driver_freq(clamped, Relation::L);
        self.cur_khz
    }

    /// The limits part of `cpufreq_set_policy()`: the driver's `->verify` keeps them within
    /// cpuinfo with min <= max (`cpufreq_verify_within_cpu_limits()`) and, with a table, with
    /// an OPP between them, raising max to the next OPP if need be
    /// (`cpufreq_frequency_table_verify()`); then min resolves up and max down to OPPs.
    fn set_limits(&mut self, min_khz: u32, max_khz: u32) {
        let (lo, hi) = (self.cpuinfo_min_khz(), self.cpuinfo_max_khz());
        let within = |min: u32, max: u32| {
            let max = max.max(lo).min(hi);
            (min.max(lo).min(hi).min(max), max)
        };
        let (mut min, mut max) = within(min_khz, max_khz);
        if self.freq_table && !self.opps_khz.iter().any(|&f| f >= min && f <= max) {
            let next_larger = self.opps_khz.iter().copied().find(|&f| f > max);
            (min, max) = within(min, next_larger.unwrap_or(u32::MAX));
        }
        self.min_khz = min;
        self.max_khz = max;
        self.min_khz = self.resolve(min, Relation::L);
        self.max_khz = self.resolve(max, Relation::H);
    }

    /// `cpufreq_policy_apply_limits()`: bring `cur` back within new limits.
    fn apply_limits(&mut self) -> Option<u32> {
        if self.max_khz < self.cur_khz {
            self.driver_target(self.max_khz, Relation::HE)
        } else if self.min_khz > self.cur_khz {
            self.driver_target(self.min_khz, Relation::LE)
        } else {
            None
        }
    }
}

/// All policies of a system and which policy each CPU belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Policies {
    list: Vec<Policy>,
    of_cpu: Vec<usize>,
}

impl Policies {
    /// Policies over the given CPU sets. Every CPU id below the largest one must belong to
    /// exactly one policy.
    pub fn new(list: Vec<Policy>) -> Result<Policies, String> {
        let nr_cpus = list
            .iter()
            .flat_map(|p| p.cpus.iter())
            .max()
            .map_or(0, |&c| c + 1);
        let mut of_cpu = vec![usize::MAX; nr_cpus];
        for (i, p) in list.iter().enumerate() {
            if p.cpus.is_empty() {
                return Err(format!("policy {i}: at least one CPU"));
            }
            for &cpu in &p.cpus {
                if of_cpu[cpu] != usize::MAX {
                    return Err(format!("CPU {cpu} in one policy only"));
                }
                of_cpu[cpu] = i;
            }
        }
        if let Some(cpu) = of_cpu.iter().position(|&p| p == usize::MAX) {
            return Err(format!("CPU {cpu} in a policy"));
        }
        Ok(Policies { list, of_cpu })
    }

    /// One policy per frequency domain of the platform ([`Policy::from_domain`]).
    pub fn from_platform(platform: &Platform, energy_model: bool) -> Result<Policies, String> {
        Policies::new(
            platform
                .freq_domains
                .iter()
                .map(|d| Policy::from_domain(d, energy_model))
                .collect(),
        )
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn nr_cpus(&self) -> usize {
        self.of_cpu.len()
    }

    pub fn get(&self, policy: usize) -> &Policy {
        &self.list[policy]
    }

    /// For the kernel to set driver properties the platform does not carry
    /// ([`Policy::fast_switch`], [`Policy::freq_table`]) before the governor starts.
    pub fn get_mut(&mut self, policy: usize) -> &mut Policy {
        &mut self.list[policy]
    }

    /// The policy `cpu` belongs to (`cpufreq_cpu_get()`).
    pub fn of_cpu(&self, cpu: usize) -> usize {
        self.of_cpu[cpu]
    }

    pub fn iter(&self) -> impl Iterator<Item = &Policy> {
        self.list.iter()
    }
}

/// What the governors need to know about the kernel they run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Env {
    /// `TICK_NSEC` (1e9 / CONFIG_HZ).
    pub tick_ns: u64,
    /// `arch_scale_freq_invariant()`: schedutil maps util against `cpuinfo.max_freq` when
    /// true, against `policy->cur` when false.
    pub freq_invariant: bool,
    /// CONFIG_NO_HZ_COMMON with nohz active: schedutil's busy hold on single-CPU policies
    /// (`sugov_cpu_is_busy()`) exists only then, and ondemand's `up_threshold` defaults to 95
    /// (idle micro accounting) instead of 80.
    pub nohz: bool,
    /// `should_io_be_busy()`: true on Intel family 6 model >= 15 (Core 2 and later), where
    /// ondemand counts iowait as busy time by default.
    pub io_is_busy: bool,
}

/// The governor tunables users write after `cpufreq.` (`--set cpufreq.rate_limit_us=200`).
/// Shared by every policy; `None` means the per-policy default the kernel computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tunables {
    /// schedutil `rate_limit_us`; default `cpufreq_policy_transition_delay_us()`.
    pub rate_limit_us: Option<u64>,
    /// schedlab switch (not a v6.1 tunable): false turns schedutil's iowait boost off.
    pub iowait_boost: bool,
    /// ondemand/conservative `sampling_rate` in µs; default
    /// max(2 ticks, `cpufreq_policy_transition_delay_us()`) (`cpufreq_dbs_governor_init()`).
    pub sampling_rate: Option<u64>,
    /// ondemand/conservative `up_threshold` (%); default 95 (ondemand with nohz), 80
    /// (ondemand without nohz, conservative).
    pub up_threshold: Option<u32>,
    /// conservative `down_threshold` (%).
    pub down_threshold: u32,
    /// ondemand/conservative `sampling_down_factor`.
    pub sampling_down_factor: u32,
    /// conservative `freq_step` (% of `policy->max`).
    pub freq_step: u32,
    /// ondemand/conservative `ignore_nice_load`: time of nice > 0 tasks counts as idle.
    pub ignore_nice_load: bool,
    /// ondemand `io_is_busy`; default [`Env::io_is_busy`]. Conservative has no such tunable
    /// and always counts iowait as idle.
    pub io_is_busy: Option<bool>,
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            rate_limit_us: None,
            iowait_boost: true,
            sampling_rate: None,
            up_threshold: None,
            down_threshold: 20,
            sampling_down_factor: 1,
            freq_step: 5,
            ignore_nice_load: false,
            io_is_busy: None,
        }
    }
}

impl Tunables {
    pub const KEYS: &'static [&'static str] = &[
        "rate_limit_us",
        "iowait_boost",
        "sampling_rate",
        "up_threshold",
        "down_threshold",
        "sampling_down_factor",
        "freq_step",
        "ignore_nice_load",
        "io_is_busy",
    ];

    /// Write one tunable with the checks of its sysfs `_store()`; a value the kernel clamps
    /// (`freq_step` above 100, `ignore_nice_load` above 1) is clamped. Checks that need the
    /// governor, the tick or another tunable (the `sampling_rate` floor, conservative's
    /// `up_threshold > down_threshold`, its `sampling_down_factor <= 10`) are made by
    /// [`Cpufreq::new`]. The error says what was expected.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let v = value.trim();
        let uint = |lo: u32, hi: u32| -> Result<u32, String> {
            match v.parse::<u32>() {
                Ok(x) if (lo..=hi).contains(&x) => Ok(x),
                _ => Err(format!("an integer in {lo}..={hi}")),
            }
        };
        let flag = || -> Result<bool, String> {
            match v {
                "true" | "on" | "yes" => Ok(true),
                "false" | "off" | "no" => Ok(false),
                _ => v
                    .parse::<u32>()
                    .map(|x| x != 0)
                    .map_err(|_| "true, false or an integer".to_string()),
            }
        };
        match key {
            "rate_limit_us" => self.rate_limit_us = Some(uint(0, u32::MAX)?.into()),
            "iowait_boost" => self.iowait_boost = flag()?,
            "sampling_rate" => self.sampling_rate = Some(uint(0, u32::MAX)?.into()),
            // ondemand's range; conservative also wants it above down_threshold.
            "up_threshold" => self.up_threshold = Some(uint(1, 100)?),
            "down_threshold" => self.down_threshold = uint(1, 100)?,
            // ondemand's MAX_SAMPLING_DOWN_FACTOR; conservative's is 10.
            "sampling_down_factor" => self.sampling_down_factor = uint(1, 100_000)?,
            "freq_step" => self.freq_step = uint(0, u32::MAX)?.min(100),
            "ignore_nice_load" => self.ignore_nice_load = flag()?,
            "io_is_busy" => self.io_is_busy = Some(flag()?),
            _ => return Err(format!("one of {}", Tunables::KEYS.join(", "))),
        }
        Ok(())
    }

    /// The value of one tunable as `set` takes it, `default` when unset.
    pub fn get(&self, key: &str) -> Option<String> {
        let opt = |x: Option<u64>| x.map_or("default".to_string(), |x| x.to_string());
        Some(match key {
            "rate_limit_us" => opt(self.rate_limit_us),
            "iowait_boost" => self.iowait_boost.to_string(),
            "sampling_rate" => opt(self.sampling_rate),
            "up_threshold" => opt(self.up_threshold.map(u64::from)),
            "down_threshold" => self.down_threshold.to_string(),
            "sampling_down_factor" => self.sampling_down_factor.to_string(),
            "freq_step" => self.freq_step.to_string(),
            "ignore_nice_load" => self.ignore_nice_load.to_string(),
            "io_is_busy" => self
                .io_is_busy
                .map_or("default".to_string(), |b| b.to_string()),
            _ => return None,
        })
    }
}

/// A frequency set on a policy; the kernel updates the capacity of its CPUs and emits
/// `cpu_frequency` for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreqChange {
    pub policy: usize,
    pub freq_khz: u32,
}

/// What a `cpufreq_update_util()` call asks the kernel to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Fast switch: the frequency is set now, from the scheduler's context.
    Switch(FreqChange),
    /// Work was queued for `policy` from CPU `cpu` (the one running the hook): schedutil's
    /// `irq_work` waking the policy's sugov kthread (SCHED_DEADLINE, runtime 1 ms / period
    /// 10 ms, bound to the policy's CPUs, bandwidth not accounted), or a dbs governor's
    /// `irq_work` scheduling its work on `cpu` (a kworker,
    /// `schedule_work_on(smp_processor_id())`). When that runs, call [`Cpufreq::work`].
    QueueWork { policy: usize, cpu: usize },
}

/// The rq signals `effective_cpu_util()` reads for one CPU, sampled when it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuUtil {
    /// `cpu_util_cfs()`: root cfs_rq `util_avg`, or `util_est.enqueued` if larger
    /// (UTIL_EST), capped at `capacity_orig`.
    pub util_cfs: u64,
    /// `cpu_util_rt()`: `rq->avg_rt.util_avg`.
    pub util_rt: u64,
    /// `cpu_util_dl()`: `rq->avg_dl.util_avg`.
    pub util_dl: u64,
    /// `cpu_bw_dl()`: `running_bw` on the 0..=1024 scale.
    pub bw_dl: u64,
    /// `cpu_util_irq()`; 0 without CONFIG_HAVE_SCHED_AVG_IRQ.
    pub util_irq: u64,
    /// `arch_scale_cpu_capacity()`.
    pub capacity_orig: u64,
    /// `rt_rq_is_runnable()`: RT tasks queued on the rq.
    pub rt_runnable: bool,
    /// `uclamp_is_used()`: the `sched_uclamp_used` static key.
    pub uclamp_used: bool,
    /// `rq->uclamp[UCLAMP_MIN].value`, `rq->uclamp[UCLAMP_MAX].value`.
    pub uclamp_min: u64,
    pub uclamp_max: u64,
    /// `rq->uclamp_flags & UCLAMP_FLAG_IDLE`.
    pub uclamp_idle: bool,
}

/// `enum cpu_util_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilType {
    /// For frequency selection: clamped, with DL bandwidth.
    Frequency,
    /// For energy estimation: unclamped, with DL utilization.
    Energy,
}

/// Effective uclamp values of a task (`uclamp_eff_value(p, UCLAMP_MIN/MAX)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskClamp {
    pub min: u64,
    pub max: u64,
}

/// `uclamp_rq_util_with()`: `util` clamped to the max-aggregated clamps of the rq and `p`.
pub fn uclamp_rq_util_with(rq: &CpuUtil, util: u64, p: Option<TaskClamp>) -> u64 {
    if !rq.uclamp_used {
        return util;
    }
    let (mut min_util, mut max_util) = p.map_or((0, 0), |c| (c.min, c.max));
    // An idle rq's clamps belong to the last task that ran; `p` will replace them.
    if p.is_none() || !rq.uclamp_idle {
        min_util = min_util.max(rq.uclamp_min);
        max_util = max_util.max(rq.uclamp_max);
    }
    // Clamps of different runnable tasks can invert.
    if min_util >= max_util {
        return min_util;
    }
    util.clamp(min_util, max_util)
}

/// `uclamp_rq_is_capped()`: the rq's max clamp holds its CFS + RT utilization down.
pub fn uclamp_rq_is_capped(rq: &CpuUtil) -> bool {
    rq.uclamp_used
        && rq.uclamp_max != u64::from(SCHED_CAPACITY_SCALE)
        && rq.util_cfs + rq.util_rt >= rq.uclamp_max
}

/// `effective_cpu_util()` (kernel/sched/core.c) for `cpu` with CFS utilization `util_cfs`
/// (`rq.util_cfs` for the CPU as it is; EAS passes a prediction) and task `p`'s clamps.
pub fn effective_cpu_util(
    rq: &CpuUtil,
    util_cfs: u64,
    kind: UtilType,
    p: Option<TaskClamp>,
) -> u64 {
    let max = rq.capacity_orig;
    // Before uclamp is used, RT runs at the highest frequency.
    if !rq.uclamp_used && kind == UtilType::Frequency && rq.rt_runnable {
        return max;
    }
    let irq = rq.util_irq;
    if irq >= max {
        return max;
    }
    let mut util = util_cfs + rq.util_rt;
    if kind == UtilType::Frequency {
        util = uclamp_rq_util_with(rq, util, p);
    }
    // No idle time left: the highest frequency, whatever the DL bandwidth says.
    if util + rq.util_dl >= max {
        return max;
    }
    if kind == UtilType::Energy {
        util += rq.util_dl;
    }
    // scale_irq_capacity(): task clocks exclude IRQ time, so scale them into what remains
    // (with no IRQ time, util itself: the division is skipped).
    if irq > 0 {
        util = util * (max - irq) / max + irq;
    }
    if kind == UtilType::Frequency {
        util += rq.bw_dl;
    }
    util.min(max)
}

/// The governor of every policy, with the policies it drives.
#[derive(Debug, Clone)]
pub enum Cpufreq {
    Schedutil(Sugov),
    /// performance or powersave.
    Fixed(Fixed),
    Ondemand(Ondemand),
    Conservative(Conservative),
    Userspace(Userspace),
}

impl Cpufreq {
    /// `cpufreq_init_governor()`: the governor's `->init`, with the tunables checked as the
    /// sysfs stores would have.
    pub fn new(
        kind: GovernorKind,
        policies: Policies,
        tunables: &Tunables,
        env: &Env,
    ) -> Result<Cpufreq, String> {
        Ok(match kind {
            GovernorKind::Schedutil => Cpufreq::Schedutil(Sugov::new(policies, tunables, env)),
            GovernorKind::Performance => Cpufreq::Fixed(Fixed::new(policies, true)),
            GovernorKind::Powersave => Cpufreq::Fixed(Fixed::new(policies, false)),
            GovernorKind::Ondemand => Cpufreq::Ondemand(Ondemand::new(policies, tunables, env)?),
            GovernorKind::Conservative => {
                Cpufreq::Conservative(Conservative::new(policies, tunables, env)?)
            }
            GovernorKind::Userspace => Cpufreq::Userspace(Userspace::new(policies)),
        })
    }

    pub fn kind(&self) -> GovernorKind {
        match self {
            Cpufreq::Schedutil(_) => GovernorKind::Schedutil,
            Cpufreq::Fixed(f) => f.kind(),
            Cpufreq::Ondemand(_) => GovernorKind::Ondemand,
            Cpufreq::Conservative(_) => GovernorKind::Conservative,
            Cpufreq::Userspace(_) => GovernorKind::Userspace,
        }
    }

    /// The governor's `->start`, at `now`, with each CPU's cumulative [`CpuTimes`] (read by
    /// the dbs governors only). Returns the frequencies performance/powersave set at once.
    pub fn start(&mut self, now: u64, times: &dyn Fn(usize) -> CpuTimes) -> Vec<FreqChange> {
        match self {
            Cpufreq::Schedutil(_) => Vec::new(),
            Cpufreq::Fixed(f) => f.start(),
            Cpufreq::Ondemand(g) => {
                g.start(now, times);
                Vec::new()
            }
            Cpufreq::Conservative(g) => {
                g.start(now, times);
                Vec::new()
            }
            Cpufreq::Userspace(u) => u.start(),
        }
    }

    /// The `cpufreq_update_util(rq, flags)` hook of `cpu`'s rq at `now`, run on CPU `local`
    /// (`smp_processor_id()`: `cpu` itself, or the CPU that updates another's rq); `util`
    /// gives the rq signals of any CPU of the policy (read by schedutil only).
    pub fn update_util(
        &mut self,
        cpu: usize,
        local: usize,
        now: u64,
        flags: u32,
        util: &impl Fn(usize) -> CpuUtil,
    ) -> Option<Action> {
        match self {
            Cpufreq::Schedutil(s) => s.update_util(cpu, local, now, flags, util),
            // No update_util hook: the frequency only moves with the limits (and a
            // userspace write).
            Cpufreq::Fixed(_) | Cpufreq::Userspace(_) => None,
            Cpufreq::Ondemand(g) => g.update_util(cpu, local, now),
            Cpufreq::Conservative(g) => g.update_util(cpu, local, now),
        }
    }

    /// Run the work queued by [`Action::QueueWork`] for `policy` (`sugov_work()`,
    /// `dbs_work_handler()`), at `now` with each CPU's cumulative [`CpuTimes`].
    pub fn work(
        &mut self,
        policy: usize,
        now: u64,
        times: &dyn Fn(usize) -> CpuTimes,
    ) -> Option<FreqChange> {
        match self {
            Cpufreq::Schedutil(s) => s.work(policy),
            Cpufreq::Fixed(_) | Cpufreq::Userspace(_) => None,
            Cpufreq::Ondemand(g) => g.work(policy, now, times),
            Cpufreq::Conservative(g) => g.work(policy, now, times),
        }
    }

    /// `cpu` enters idle and stops its tick (`tick_nohz_idle_stop_tick()` counting
    /// `idle_calls`): schedutil's busy hold is lifted at its next evaluation.
    pub fn note_idle_enter(&mut self, cpu: usize) {
        if let Cpufreq::Schedutil(s) = self {
            s.note_idle_enter(cpu);
        }
    }

    /// New `scaling_min_freq`/`scaling_max_freq` for `policy` (`cpufreq_set_policy()` and the
    /// governor's `->limits`).
    pub fn set_limits(&mut self, policy: usize, min_khz: u32, max_khz: u32) -> Option<FreqChange> {
        match self {
            Cpufreq::Schedutil(s) => s.set_limits(policy, min_khz, max_khz),
            Cpufreq::Fixed(f) => f.set_limits(policy, min_khz, max_khz),
            Cpufreq::Ondemand(g) => g.set_limits(policy, min_khz, max_khz),
            Cpufreq::Conservative(g) => g.set_limits(policy, min_khz, max_khz),
            Cpufreq::Userspace(u) => u.set_limits(policy, min_khz, max_khz),
        }
    }

    /// A write of `khz` to `policy`'s `scaling_setspeed` (`store_scaling_setspeed()`):
    /// `EINVAL` unless the governor has a `store_setspeed` (userspace alone does).
    pub fn store_setspeed(&mut self, policy: usize, khz: u32) -> Result<Option<FreqChange>, Errno> {
        match self {
            Cpufreq::Userspace(u) => Ok(u.store_setspeed(policy, khz)),
            _ => Err(Errno::EINVAL),
        }
    }

    pub fn policies(&self) -> &Policies {
        match self {
            Cpufreq::Schedutil(s) => s.policies(),
            Cpufreq::Fixed(f) => f.policies(),
            Cpufreq::Ondemand(g) => g.policies(),
            Cpufreq::Conservative(g) => g.policies(),
            Cpufreq::Userspace(u) => u.policies(),
        }
    }
}

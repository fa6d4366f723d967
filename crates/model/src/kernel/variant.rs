//! Every kernel switch of a run: CONFIG_* options, sched features, debugfs/sysctl
//! tunables, patch variants and the model's own cost parameters. The kernel reads them from
//! here only; `--set KEY=VALUE` and experiment files write them through `Variant::set`, which
//! validates the value and names what it expected.

use super::cpufreq::{GovernorKind, StartFreq, Tunables};
use super::cpuidle::CpuidleGovernor;
use super::uclamp::{RtSync, StaticKeyMode, Sysctl, TgRestrict};
use crate::platform::{Costs, MachineField, Memory, Platform, COST_FIELDS, MEMORY_FIELDS};
use schedlab_base::error::InputError;
use serde_json::{Map, Value};

/// Where `cpufreq_update_util()` is called from (seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateSites {
    /// Mainline v6.1: from `cfs_rq_util_change()` when the root cfs_rq's PELT signals decay or
    /// a task attaches/detaches, at enqueue of a task leaving iowait, RT/DL enqueue paths.
    V61,
    /// "sched/fair: Be less aggressive in calling cpufreq_update_util()": at the end of every
    /// fair enqueue and dequeue, at each fair pick and tick, not from PELT updates.
    LessAggressive,
}

impl UpdateSites {
    pub const NAMES: &'static [&'static str] = &["v6.1", "less-aggressive"];

    pub fn parse(s: &str) -> Option<UpdateSites> {
        match s {
            "v6.1" => Some(UpdateSites::V61),
            "less-aggressive" => Some(UpdateSites::LessAggressive),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            UpdateSites::V61 => "v6.1",
            UpdateSites::LessAggressive => "less-aggressive",
        }
    }
}

/// `variant.latency_nice`: which part of seed 002's latency-nice series is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyNice {
    /// Mainline v6.1: no latency nice (SCHED_FLAG_LATENCY_NICE is EINVAL).
    Off,
    /// Patches 1-6: the attribute, its offset at wakeup and tick preemption, the cgroup file.
    V5,
    /// Patch 7 as well: the latency rb-tree consulted by `pick_next_entity()`.
    V5Rbtree,
}

impl LatencyNice {
    pub const NAMES: &'static [&'static str] = &["off", "v5", "v5+rbtree"];

    pub fn parse(s: &str) -> Option<LatencyNice> {
        match s {
            "off" => Some(LatencyNice::Off),
            "v5" => Some(LatencyNice::V5),
            "v5+rbtree" => Some(LatencyNice::V5Rbtree),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LatencyNice::Off => "off",
            LatencyNice::V5 => "v5",
            LatencyNice::V5Rbtree => "v5+rbtree",
        }
    }
}

/// `variant.fair`: the fair class's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairPolicy {
    /// CFS as in v6.1.
    Cfs,
    /// EEVDF as merged in v6.6, with v6.12's custom slices.
    Eevdf,
}

impl FairPolicy {
    pub const NAMES: &'static [&'static str] = &["cfs", "eevdf"];

    pub fn parse(s: &str) -> Option<FairPolicy> {
        match s {
            "cfs" => Some(FairPolicy::Cfs),
            "eevdf" => Some(FairPolicy::Eevdf),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FairPolicy::Cfs => "cfs",
            FairPolicy::Eevdf => "eevdf",
        }
    }
}

/// A write to a cgroup file, as `echo VALUE > /sys/fs/cgroup<path>/<file>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupWrite {
    pub path: String,
    pub file: String,
    pub value: String,
}

/// A sysctl or cgroup write at a simulated time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedWrite {
    pub at_ns: u64,
    pub target: AdminTarget,
    /// The value as written (for the report).
    pub value: String,
    /// Where it was written (`--set-at`, an experiment's `[[set_at]]`), for errors found
    /// when the run boots.
    pub place: String,
}

/// What a timed write writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminTarget {
    Sysctl(Sysctl),
    Cgroup {
        path: String,
        file: String,
    },
    /// `sched_setattr()` of a thread's latency nice (SCHED_FLAG_LATENCY_NICE), by thread name.
    TaskLatencyNice {
        task: String,
    },
    /// `sched_setattr()` of a thread's uclamp min (`min` true) or max, by thread name.
    TaskUclamp {
        task: String,
        min: bool,
    },
    /// Moving a thread to the cgroup at the value's path (`echo PID > cgroup.procs`).
    TaskCgroup {
        task: String,
    },
    /// `cpufreq/policyN/scaling_setspeed` (kHz), N the policy's first CPU.
    ScalingSetspeed {
        cpu: usize,
    },
}

impl AdminTarget {
    /// The key as the user wrote it.
    pub fn key(&self) -> String {
        match self {
            AdminTarget::Sysctl(s) => s.name().to_string(),
            AdminTarget::Cgroup { path, file } => format!("cgroup.{path}.{file}"),
            AdminTarget::TaskUclamp { task, min } => {
                format!("task.{task}.uclamp.{}", if *min { "min" } else { "max" })
            }
            AdminTarget::TaskCgroup { task } => format!("task.{task}.cgroup"),
            AdminTarget::TaskLatencyNice { task } => format!("task.{task}.latency_nice"),
            AdminTarget::ScalingSetspeed { cpu } => format!("cpufreq.policy{cpu}.scaling_setspeed"),
        }
    }
}

/// The cgroup files schedlab models.
pub const CGROUP_FILES: &[&str] = &[
    "cpu.uclamp.min",
    "cpu.uclamp.max",
    "cpu.weight",
    "cpu.latency.nice",
];

/// The kernel variant and configuration of one run. Defaults are mainline v6.1.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// `variant.freq_invariance`: PELT scaled by frequency and schedutil mapping util against
    /// the maximum frequency. None: as the platform (arm64 yes, the x86 of seed 003 no).
    pub freq_invariance: Option<bool>,
    /// `variant.cpufreq_update_sites`.
    pub cpufreq_update_sites: UpdateSites,
    /// CONFIG_UCLAMP_TASK, CONFIG_UCLAMP_TASK_GROUP, CONFIG_UCLAMP_BUCKETS_COUNT.
    pub uclamp_task: bool,
    pub uclamp_task_group: bool,
    pub uclamp_buckets: u32,
    /// `variant.uclamp_rt_sync`, `variant.uclamp_static_key`, `variant.uclamp_tg_restrict`.
    pub uclamp_rt_sync: RtSync,
    pub uclamp_static_key: StaticKeyMode,
    pub uclamp_tg_restrict: TgRestrict,
    /// `variant.cgroup_online_no_eff_update`: seed 003's pre-5.6 cgroup bug.
    pub cgroup_online_no_eff_update: bool,
    /// `kernel.sched_util_clamp_*` writes made before the workload starts, in order.
    pub sysctl_writes: Vec<(Sysctl, i64)>,
    /// `cgroup.<path>.<file>=<value>` writes made before the workload starts, in order.
    pub cgroup_writes: Vec<CgroupWrite>,
    /// Writes made while the workload runs (`--set-at TIME:KEY=VALUE`), as an init script or
    /// a power HAL makes them; their results (ok or an errno) are reported, and the run goes on.
    pub timed_writes: Vec<TimedWrite>,
    /// `variant.latency_nice` and its follow-up fixes from the review of seed 002:
    /// `variant.latency_nice_gentle_offset` (the offset spans half the latency under
    /// GENTLE_FAIR_SLEEPERS) and `variant.latency_nice_sleeper_credit` (a sleeper placed a
    /// whole gentle latency behind min_vruntime preempts in `wakeup_preempt_entity()`).
    pub latency_nice: LatencyNice,
    pub latency_nice_gentle_offset: bool,
    pub latency_nice_sleeper_credit: bool,
    /// CONFIG_FAIR_GROUP_SCHED: hierarchical fair runqueues for cgroups (`cpu.weight`).
    pub fair_group_sched: bool,
    /// `variant.fair`: CFS or EEVDF.
    pub fair: FairPolicy,
    /// `cpufreq.governor`: the governor of every policy.
    pub governor: GovernorKind,
    /// `cpufreq.<tunable>`: the governors' sysfs tunables.
    pub cpufreq: Tunables,
    /// `cpufreq.start_khz`: `policy->cur` when the governor starts (the run's start).
    pub cpufreq_start: StartFreq,
    /// `cpuidle.governor`: the idle governor of every CPU (menu, as v6.1's default on
    /// tickless kernels).
    pub cpuidle_governor: CpuidleGovernor,
    /// CONFIG_HZ: tick frequency.
    pub hz: u32,
    /// `config.ENERGY_MODEL`: the energy model is registered (where the platform has one),
    /// so EAS runs when its other conditions hold; off, fair placement is capacity-aware only.
    pub energy_model: bool,
    /// `variant.util_fits_cpu`: fair fit tests use v6.2's uclamp-aware `util_fits_cpu()`
    /// (backported to 6.1.y) instead of v6.1's `task_fits_capacity()`.
    pub util_fits_cpu: bool,
    /// `variant.wakelist_idle_target`: `ttwu_queue_cond()` also sends a wake-up within the
    /// LLC through an idle target's wake list (v6.0's "Remove the limitation of WF_ON_CPU
    /// on wakelist if wakee cpu is idle"); false: only across LLCs, as v5.7 and before (the
    /// kernels of seeds 000 and 001).
    pub wakelist_idle_target: bool,
    pub features: Features,
    /// /sys/kernel/debug/sched/latency_ns etc. *before* scaling by the CPU count.
    pub sched_latency_ns: u64,
    pub sched_min_granularity_ns: u64,
    pub sched_wakeup_granularity_ns: u64,
    pub sched_idle_min_granularity_ns: u64,
    /// 0 none, 1 log (default), 2 linear: how the three tunables above scale with CPUs.
    pub sched_tunable_scaling: u32,
    pub sched_migration_cost_ns: u64,
    /// kernel.sched_rt_runtime_us (-1: no throttling) and kernel.sched_rt_period_us.
    pub sched_rt_runtime_us: i64,
    pub sched_rt_period_us: u64,
    /// kernel.sched_rr_timeslice_ms.
    pub sched_rr_timeslice_ms: u64,
    /// `cost.*` and `memory.*` written with `--set`: replace the platform's `[costs]` and
    /// `[memory]` values (see [`Variant::machine`]), in the order written.
    pub machine_sets: Vec<(String, u64)>,
    /// Blocking I/O service times vary uniformly by ± this percentage (seeded): devices
    /// are not metronomes, and a perfectly periodic I/O loop phase-locks with the governor.
    pub io_jitter_pct: u64,
    /// The workload's initial threads start at a time drawn uniformly from
    /// `0..start_spread_ns` with the run's seed, as rt-app's threads never start at the same
    /// nanosecond.
    pub start_spread_ns: u64,
    /// The `timer_slack_ns` a task has unless its workload gives one
    /// (`model.timer_slack_ns`).
    pub timer_slack_ns: u64,
}

/// sched features (kernel/sched/features.h, v6.1 defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    pub gentle_fair_sleepers: bool,
    pub start_debit: bool,
    pub next_buddy: bool,
    pub last_buddy: bool,
    pub wakeup_preemption: bool,
    pub alt_period: bool,
    pub base_slice: bool,
    pub util_est: bool,
    pub util_est_fastup: bool,
    /// SIS_UTIL: `select_idle_cpu` scans at most the LLC's `nr_idle_scan` CPUs.
    pub sis_util: bool,
    /// TTWU_QUEUE: remote wake-ups go through the target's wake list (with an IPI).
    pub ttwu_queue: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            gentle_fair_sleepers: true,
            start_debit: true,
            next_buddy: false,
            last_buddy: true,
            wakeup_preemption: true,
            alt_period: true,
            base_slice: true,
            util_est: true,
            util_est_fastup: true,
            sis_util: true,
            ttwu_queue: true,
        }
    }
}

impl Default for Variant {
    fn default() -> Self {
        Variant {
            freq_invariance: None,
            cpufreq_update_sites: UpdateSites::V61,
            uclamp_task: true,
            uclamp_task_group: true,
            uclamp_buckets: 5,
            uclamp_rt_sync: RtSync::Eager,
            uclamp_static_key: StaticKeyMode::StaticKey,
            uclamp_tg_restrict: TgRestrict::V61,
            cgroup_online_no_eff_update: false,
            sysctl_writes: Vec::new(),
            cgroup_writes: Vec::new(),
            timed_writes: Vec::new(),
            latency_nice: LatencyNice::Off,
            latency_nice_gentle_offset: false,
            latency_nice_sleeper_credit: false,
            fair: FairPolicy::Cfs,
            fair_group_sched: true,
            governor: GovernorKind::Schedutil,
            cpufreq: Tunables::default(),
            cpufreq_start: StartFreq::Idle,
            cpuidle_governor: CpuidleGovernor::Menu,
            hz: 250,
            energy_model: true,
            util_fits_cpu: false,
            wakelist_idle_target: true,
            features: Features::default(),
            sched_latency_ns: 6_000_000,
            sched_min_granularity_ns: 750_000,
            sched_wakeup_granularity_ns: 1_000_000,
            sched_idle_min_granularity_ns: 750_000,
            sched_tunable_scaling: 1,
            sched_migration_cost_ns: 500_000,
            sched_rt_runtime_us: 950_000,
            sched_rt_period_us: 1_000_000,
            sched_rr_timeslice_ms: 100,
            machine_sets: Vec::new(),
            io_jitter_pct: 10,
            start_spread_ns: 20_000,
            timer_slack_ns: 0,
        }
    }
}

enum Kind {
    Bool,
    /// An unsigned integer within the inclusive range.
    Uint(u64, u64),
    /// A signed integer within the inclusive range.
    Int(i64, i64),
}

/// One settable switch: its key, its type, what it means and how to read and write it.
struct Knob {
    key: &'static str,
    kind: Kind,
    meaning: &'static str,
    get: fn(&Variant) -> Value,
    set: fn(&mut Variant, i64),
}

macro_rules! knob {
    ($key:literal, Bool, $($field:ident).+, $meaning:literal) => {
        Knob {
            key: $key,
            kind: Kind::Bool,
            meaning: $meaning,
            get: |v| Value::from(v.$($field).+),
            set: |v, x| v.$($field).+ = x != 0,
        }
    };
    ($key:literal, Uint($lo:expr, $hi:expr), $($field:ident).+, $meaning:literal) => {
        Knob {
            key: $key,
            kind: Kind::Uint($lo, $hi),
            meaning: $meaning,
            get: |v| Value::from(v.$($field).+),
            set: |v, x| v.$($field).+ = x as _,
        }
    };
    ($key:literal, Int($lo:expr, $hi:expr), $($field:ident).+, $meaning:literal) => {
        Knob {
            key: $key,
            kind: Kind::Int($lo, $hi),
            meaning: $meaning,
            get: |v| Value::from(v.$($field).+),
            set: |v, x| v.$($field).+ = x as _,
        }
    };
}

/// The kernel's `int` sysctls go through `proc_dointvec()`: a value outside `int` is EINVAL.
const INT_MAX: i64 = i32::MAX as i64;

/// `max_rt_runtime` of v6.1 `kernel/sched/rt.c`: `MAX_BW`, `(1 << (64 - BW_SHIFT)) - 1` ns
/// with `BW_SHIFT` 20 (kernel/sched/sched.h), a little over 4 hours.
const MAX_RT_RUNTIME_NS: u64 = (1 << (64 - 20)) - 1;

/// `RR_TIMESLICE` (include/linux/sched/rt.h, `100 * HZ / 1000` jiffies): 100 ms.
const RR_TIMESLICE_MS: u64 = 100;

const KNOBS: &[Knob] = &[
    knob!("config.HZ", Uint(100, 1000), hz, "tick rate: 100, 250, 300 or 1000 (the platform's default: 250, 100 on rk3399)"),
    knob!("config.UCLAMP_TASK", Bool, uclamp_task, "uclamp compiled in"),
    knob!("config.ENERGY_MODEL", Bool, energy_model, "the platform's energy model is registered: EAS runs where the kernel would; false: capacity-aware placement only"),
    knob!("variant.util_fits_cpu", Bool, util_fits_cpu, "fair fit tests use 6.1.y's uclamp-aware util_fits_cpu() instead of v6.1's task_fits_capacity()"),
    knob!("variant.wakelist_idle_target", Bool, wakelist_idle_target, "a wake-up within the LLC goes through an idle target's wake list (v6.0+); false: only across LLCs (v5.7, seeds 000 and 001)"),
    knob!("config.UCLAMP_TASK_GROUP", Bool, uclamp_task_group, "task groups restrict clamps"),
    knob!("config.UCLAMP_BUCKETS_COUNT", Uint(5, 20), uclamp_buckets, "uclamp buckets per clamp"),
    knob!("config.FAIR_GROUP_SCHED", Bool, fair_group_sched, "hierarchical fair runqueues per cgroup; off: every task competes alone"),
    knob!("variant.cgroup_online_no_eff_update", Bool, cgroup_online_no_eff_update, "seed 003's bug: a new group acts as its parent's clamps until written"),
    knob!("variant.latency_nice_gentle_offset", Bool, latency_nice_gentle_offset, "Vincent's fix for Youssef's report: offsets span half the latency under GENTLE_FAIR_SLEEPERS"),
    knob!("variant.latency_nice_sleeper_credit", Bool, latency_nice_sleeper_credit, "Vincent's sleeper-credit fix: a sleeper placed a whole (gentle) latency back preempts"),
    knob!("feature.GENTLE_FAIR_SLEEPERS", Bool, features.gentle_fair_sleepers, "sched feature"),
    knob!("feature.START_DEBIT", Bool, features.start_debit, "sched feature"),
    knob!("feature.NEXT_BUDDY", Bool, features.next_buddy, "sched feature"),
    knob!("feature.LAST_BUDDY", Bool, features.last_buddy, "sched feature"),
    knob!("feature.WAKEUP_PREEMPTION", Bool, features.wakeup_preemption, "sched feature"),
    knob!("feature.ALT_PERIOD", Bool, features.alt_period, "sched feature"),
    knob!("feature.BASE_SLICE", Bool, features.base_slice, "sched feature"),
    knob!("feature.UTIL_EST", Bool, features.util_est, "util_est"),
    knob!("feature.UTIL_EST_FASTUP", Bool, features.util_est_fastup, "util_est's fast ramp-up"),
    knob!("feature.SIS_UTIL", Bool, features.sis_util, "select_idle_cpu's scan is limited by the LLC's utilisation (nr_idle_scan)"),
    knob!("feature.TTWU_QUEUE", Bool, features.ttwu_queue, "remote wake-ups go through the target CPU's wake list and an IPI when it shares no LLC with the waker or is idle (ttwu_queue_cond)"),
    knob!("debug.latency_ns", Uint(100_000, 1_000_000_000), sched_latency_ns, "CFS target latency before CPU scaling"),
    knob!("debug.min_granularity_ns", Uint(100_000, 1_000_000_000), sched_min_granularity_ns, "CFS minimum slice before CPU scaling"),
    knob!("debug.wakeup_granularity_ns", Uint(0, 1_000_000_000), sched_wakeup_granularity_ns, "CFS wakeup preemption granularity before CPU scaling"),
    knob!("debug.idle_min_granularity_ns", Uint(100_000, 1_000_000_000), sched_idle_min_granularity_ns, "CFS minimum slice of SCHED_IDLE tasks before CPU scaling"),
    knob!("debug.tunable_scaling", Uint(0, 2), sched_tunable_scaling, "0 none, 1 1 + ilog2(min(cpus, 8)), 2 linear"),
    knob!("debug.migration_cost_ns", Uint(0, 1_000_000_000), sched_migration_cost_ns, "how long a task stays cache-hot"),
    knob!("kernel.sched_rt_runtime_us", Int(-1, INT_MAX), sched_rt_runtime_us, "RT throttling: RT time per period (-1: off); at most the period (sched_rt_global_validate, EINVAL)"),
    knob!("kernel.sched_rt_period_us", Uint(1, INT_MAX as u64), sched_rt_period_us, "RT throttling period; at least the runtime (sched_rt_global_validate, EINVAL)"),
    knob!("kernel.sched_rr_timeslice_ms", Int(i32::MIN as i64, INT_MAX), sched_rr_timeslice_ms, "SCHED_RR timeslice; 0 or less resets it to RR_TIMESLICE, 100 ms (sched_rr_handler)"),
    knob!("model.start_spread_ns", Uint(0, 1_000_000_000), start_spread_ns, "initial threads start at seeded random times in this window"),
    knob!("model.timer_slack_ns", Uint(0, 1_000_000_000), timer_slack_ns, "how late a fair task's timed sleep may end unless its workload says (the kernel's default is 50000; 0 matches seed 002's idle cyclictest)"),
    knob!("model.io_jitter_pct", Uint(0, 100), io_jitter_pct, "blocking I/O service times vary by ± this percentage (seeded)"),
];

/// The tables of a platform file that `cost.*` and `memory.*` switches write.
#[derive(Clone, Copy)]
enum MachineTable {
    Costs,
    Memory,
}

/// A flat struct of integers as a JSON object.
fn fields<T: serde::Serialize>(t: &T) -> Map<String, Value> {
    match serde_json::to_value(t).expect("integers serialize") {
        Value::Object(m) => m,
        _ => unreachable!("a struct serializes to an object"),
    }
}

/// The struct a JSON object of its fields makes.
fn back<T: serde::de::DeserializeOwned>(m: Map<String, Value>) -> T {
    serde_json::from_value(Value::Object(m)).expect("integers only")
}

/// `cost.<field>` of `[costs]` or `memory.<field>` of `[memory]`, if `key` is one, with the
/// field's documentation.
fn machine_key(key: &str) -> Option<(MachineTable, &MachineField)> {
    let (table, field, known) = if let Some(f) = key.strip_prefix("cost.") {
        (MachineTable::Costs, f, COST_FIELDS)
    } else if let Some(f) = key.strip_prefix("memory.") {
        (MachineTable::Memory, f, MEMORY_FIELDS)
    } else {
        return None;
    };
    known.iter().find(|m| m.name == field).map(|m| (table, m))
}

/// One switch as `schedlab switches` lists it and docs/switches.md's table names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchInfo {
    /// The key; `<path>` stands for a cgroup path from `/`.
    pub key: String,
    pub default: String,
    /// `bool`, `integer`, `choice`, `string`.
    pub kind: &'static str,
    /// The values it takes.
    pub range: String,
    pub meaning: String,
}

const GOVERNOR_KEY: &str = "cpufreq.governor";
const CPUIDLE_GOVERNOR_KEY: &str = "cpuidle.governor";
const START_KEY: &str = "cpufreq.start_khz";
const FREQ_INVARIANCE_KEY: &str = "variant.freq_invariance";
const UPDATE_SITES_KEY: &str = "variant.cpufreq_update_sites";
const RT_SYNC_KEY: &str = "variant.uclamp_rt_sync";
const STATIC_KEY_KEY: &str = "variant.uclamp_static_key";
const TG_RESTRICT_KEY: &str = "variant.uclamp_tg_restrict";
const LATENCY_NICE_KEY: &str = "variant.latency_nice";
const FAIR_KEY: &str = "variant.fair";

fn parse_bool(raw: &str) -> Option<bool> {
    match raw {
        "true" | "1" | "on" | "yes" => Some(true),
        "false" | "0" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != *cb)).min(row[j] + 1).min(up + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// The known key nearest to `key`, if it is near enough to be a typo (a third of its length).
pub fn suggest(key: &str) -> Option<String> {
    switches()
        .into_iter()
        .filter(|s| !s.key.contains('<'))
        .map(|s| (edit_distance(key, &s.key), s.key))
        .filter(|(d, _)| *d <= (key.chars().count() / 3).max(2))
        .min()
        .map(|(_, k)| k)
}

fn choice(default: &str, names: &[&str], meaning: &str) -> (String, &'static str, String, String) {
    (
        default.to_string(),
        "choice",
        names.join(", "),
        meaning.to_string(),
    )
}

/// A switch's key and its default, type, values and meaning.
type SwitchRow = (String, (String, &'static str, String, String));

/// The switches that choose a mechanism, and the governor's start.
fn choice_switches(d: &Variant) -> Vec<SwitchRow> {
    let mut out: Vec<SwitchRow> = vec![
        (
            GOVERNOR_KEY.into(),
            choice(
                d.governor.name(),
                GovernorKind::NAMES,
                "the cpufreq governor of every policy (also --governor)",
            ),
        ),
        (
            CPUIDLE_GOVERNOR_KEY.into(),
            choice(
                d.cpuidle_governor.name(),
                CpuidleGovernor::NAMES,
                "the idle governor of every CPU: v6.1's menu or teo",
            ),
        ),
        (
            FREQ_INVARIANCE_KEY.into(),
            (
                "the platform's".into(),
                "bool",
                "true, false".into(),
                "PELT scaled by frequency, schedutil against the max frequency".into(),
            ),
        ),
        (
            UPDATE_SITES_KEY.into(),
            choice(
                d.cpufreq_update_sites.name(),
                UpdateSites::NAMES,
                "where cpufreq_update_util() is called (seed 004's patch: less-aggressive)",
            ),
        ),
        (
            RT_SYNC_KEY.into(),
            choice(
                d.uclamp_rt_sync.name(),
                RtSync::NAMES,
                "how the RT default boost reaches RT tasks (seed 000)",
            ),
        ),
        (
            STATIC_KEY_KEY.into(),
            choice(
                d.uclamp_static_key.name(),
                StaticKeyMode::NAMES,
                "uclamp's static key (seed 001)",
            ),
        ),
        (
            TG_RESTRICT_KEY.into(),
            choice(
                d.uclamp_tg_restrict.name(),
                TgRestrict::NAMES,
                "how task groups restrict clamps",
            ),
        ),
        (
            LATENCY_NICE_KEY.into(),
            choice(
                d.latency_nice.name(),
                LatencyNice::NAMES,
                "seed 002's latency nice series: off (v6.1), v5 (patches 1-6), v5+rbtree (7 too)",
            ),
        ),
        (
            FAIR_KEY.into(),
            choice(
                d.fair.name(),
                FairPolicy::NAMES,
                "the fair policy: CFS (v6.1) or EEVDF (v6.6, v6.12 custom slices)",
            ),
        ),
    ];
    out.push((
        START_KEY.into(),
        (
            d.cpufreq_start.name(),
            "string",
            StartFreq::EXPECTED.into(),
            "policy->cur when the governor starts: its own idle frequency, cpuinfo's min or max (a \
             governor switched to after performance), or the highest OPP at or below a kHz value"
                .into(),
        ),
    ));
    out
}

/// The governors' tunables, the uclamp sysctls and the cgroup files.
fn file_switches(d: &Variant, out: &mut Vec<SwitchRow>) {
    for k in Tunables::KEYS {
        out.push((
            format!("cpufreq.{k}"),
            (
                d.cpufreq.get(k).unwrap_or_default(),
                "integer",
                "as the governor's sysfs store".into(),
                "schedutil/ondemand/conservative tunable (default: the policy's or v6.1's)".into(),
            ),
        ));
    }
    for s in Sysctl::ALL {
        out.push((
            s.name().into(),
            (
                "1024".into(),
                "integer",
                "0..=1024 (EINVAL otherwise)".into(),
                "uclamp sysctl; min <= max <= 1024 as sysctl_sched_uclamp_handler() checks".into(),
            ),
        ));
    }
    for (file, default, range, meaning) in [
        (
            "cpu.uclamp.min",
            "0.00",
            "0.00..=100.00 or max",
            "a group's minimum clamp",
        ),
        (
            "cpu.uclamp.max",
            "max",
            "0.00..=100.00 or max",
            "a group's maximum clamp",
        ),
        (
            "cpu.weight",
            "100",
            "1..=10000 (ERANGE)",
            "a group's weight",
        ),
        (
            "cpu.latency.nice",
            "0",
            "-20..=19 (ERANGE)",
            "a group's latency nice",
        ),
    ] {
        debug_assert!(CGROUP_FILES.contains(&file));
        out.push((
            format!("cgroup.<path>.{file}"),
            (default.into(), "string", range.into(), meaning.into()),
        ));
    }
}

/// The knobs, and the platform's cost and memory fields.
fn knob_switches(d: &Variant, out: &mut Vec<SwitchRow>) {
    for k in KNOBS {
        let (kind, range) = match k.kind {
            Kind::Bool => ("bool", "true, false".to_string()),
            Kind::Uint(lo, hi) => ("integer", format!("{lo}..={hi}")),
            Kind::Int(lo, hi) => ("integer", format!("{lo}..={hi}")),
        };
        out.push((
            k.key.into(),
            ((k.get)(d).to_string(), kind, range, k.meaning.to_string()),
        ));
    }
    for (prefix, table) in [("cost", COST_FIELDS), ("memory", MEMORY_FIELDS)] {
        for f in table {
            out.push((
                format!("{prefix}.{}", f.name),
                (
                    "the platform's".into(),
                    "integer",
                    format!("{}..", f.min),
                    f.meaning.into(),
                ),
            ));
        }
    }
}

/// Every switch `--set` takes, with its default (mainline v6.1 on juno-r0), type, values and
/// meaning: the one list `schedlab switches` prints and docs/switches.md's table is checked against.
pub fn switches() -> Vec<SwitchInfo> {
    let d = Variant::default();
    let mut out = choice_switches(&d);
    file_switches(&d, &mut out);
    knob_switches(&d, &mut out);
    out.into_iter()
        .map(|(key, (default, kind, range, meaning))| SwitchInfo {
            key,
            default,
            kind,
            range,
            meaning,
        })
        .collect()
}

impl Variant {
    /// The defaults on `platform`: its CONFIG_HZ if it sets one (rk3399: 100), then the
    /// switches of its `[kernel]` table (a host's `variant.fair = "eevdf"`).
    pub fn for_platform(platform: &Platform) -> Variant {
        let mut v = Variant {
            hz: platform.hz.unwrap_or(Variant::default().hz),
            ..Variant::default()
        };
        for (key, value) in &platform.kernel {
            // Each was checked when the platform file was read (`platform/file.rs`); one
            // that a platform built in code got wrong leaves the default.
            let _ = v.set(key, value, "the platform's [kernel]");
        }
        v
    }

    /// Apply `KEY=VALUE`; `source` names where it came from (`--set`, a file) for errors.
    pub fn set(&mut self, key: &str, value: &str, source: &str) -> Result<(), InputError> {
        let raw = value.trim();
        let bad = |expected: String| InputError::new(source, key, expected, format!("`{raw}`"));
        if key == GOVERNOR_KEY {
            self.governor = GovernorKind::parse(raw)
                .ok_or_else(|| bad(format!("one of {}", GovernorKind::NAMES.join(", "))))?;
            return Ok(());
        }
        if key == CPUIDLE_GOVERNOR_KEY {
            self.cpuidle_governor = CpuidleGovernor::parse(raw)
                .ok_or_else(|| bad(format!("one of {}", CpuidleGovernor::NAMES.join(", "))))?;
            return Ok(());
        }
        if key == START_KEY {
            self.cpufreq_start =
                StartFreq::parse(raw).ok_or_else(|| bad(StartFreq::EXPECTED.into()))?;
            return Ok(());
        }
        if let Some(tunable) = key.strip_prefix("cpufreq.") {
            if Tunables::KEYS.contains(&tunable) {
                return self.cpufreq.set(tunable, raw).map_err(bad);
            }
        }
        if key == FREQ_INVARIANCE_KEY {
            self.freq_invariance =
                Some(parse_bool(raw).ok_or_else(|| bad("true or false".into()))?);
            return Ok(());
        }
        if let Some(which) = Sysctl::from_name(key) {
            let v = raw
                .parse::<i64>()
                .map_err(|_| bad("an integer (EINVAL otherwise)".into()))?;
            self.sysctl_writes.push((which, v));
            return Ok(());
        }
        if let Some(rest) = key.strip_prefix("cgroup.") {
            let file = CGROUP_FILES
                .iter()
                .find(|f| rest.ends_with(&format!(".{f}")));
            let Some(file) = file.filter(|f| rest.len() > f.len() + 1 && rest.starts_with('/'))
            else {
                return Err(InputError::new(
                    source,
                    key,
                    format!(
                        "cgroup.<path>.<file> with a path from / and a file among {}",
                        CGROUP_FILES.join(", ")
                    ),
                    format!("`{key}`"),
                ));
            };
            let path = &rest[..rest.len() - file.len() - 1];
            self.cgroup_writes.push(CgroupWrite {
                path: path.to_string(),
                file: file.to_string(),
                value: raw.to_string(),
            });
            return Ok(());
        }
        for (k, names) in [
            (RT_SYNC_KEY, RtSync::NAMES),
            (STATIC_KEY_KEY, StaticKeyMode::NAMES),
            (TG_RESTRICT_KEY, TgRestrict::NAMES),
        ] {
            if key == k && !names.contains(&raw) {
                return Err(bad(format!("one of {}", names.join(", "))));
            }
        }
        if key == RT_SYNC_KEY {
            self.uclamp_rt_sync = RtSync::from_name(raw).expect("checked above");
            return Ok(());
        }
        if key == STATIC_KEY_KEY {
            self.uclamp_static_key = StaticKeyMode::from_name(raw).expect("checked above");
            return Ok(());
        }
        if key == TG_RESTRICT_KEY {
            self.uclamp_tg_restrict = TgRestrict::from_name(raw).expect("checked above");
            return Ok(());
        }
        if key == LATENCY_NICE_KEY {
            self.latency_nice = LatencyNice::parse(raw)
                .ok_or_else(|| bad(format!("one of {}", LatencyNice::NAMES.join(", "))))?;
            return Ok(());
        }
        if key == FAIR_KEY {
            self.fair = FairPolicy::parse(raw)
                .ok_or_else(|| bad(format!("one of {}", FairPolicy::NAMES.join(", "))))?;
            return Ok(());
        }
        if key == UPDATE_SITES_KEY {
            self.cpufreq_update_sites = UpdateSites::parse(raw)
                .ok_or_else(|| bad(format!("one of {}", UpdateSites::NAMES.join(", "))))?;
            return Ok(());
        }
        if let Some((_, field)) = machine_key(key) {
            let x = raw.parse::<u64>().ok().filter(|&x| x >= field.min);
            let Some(x) = x else {
                return Err(bad(format!("an integer from {}", field.min)));
            };
            self.machine_sets.retain(|(k, _)| k != key);
            self.machine_sets.push((key.to_string(), x));
            return Ok(());
        }
        let Some(knob) = KNOBS.iter().find(|k| k.key == key) else {
            let expected = match suggest(key) {
                Some(near) => format!("a known switch (did you mean `{near}`?)"),
                None => "a known switch (`schedlab switches` lists them)".to_string(),
            };
            return Err(InputError::new(
                source,
                key,
                expected,
                format!("unknown key `{key}`"),
            ));
        };
        let x = match knob.kind {
            Kind::Bool => match parse_bool(raw) {
                Some(b) => i64::from(b),
                None => return Err(bad("true or false".into())),
            },
            Kind::Uint(lo, hi) => match raw.parse::<u64>() {
                Ok(x) if (lo..=hi).contains(&x) => x as i64,
                _ => return Err(bad(format!("an integer in {lo}..={hi}"))),
            },
            Kind::Int(lo, hi) => match raw.parse::<i64>() {
                Ok(x) if (lo..=hi).contains(&x) => x,
                _ => return Err(bad(format!("an integer in {lo}..={hi}"))),
            },
        };
        if key == "config.HZ" && ![100, 250, 300, 1000].contains(&x) {
            return Err(bad("one of 100, 250, 300, 1000".into()));
        }
        if key == "kernel.sched_rr_timeslice_ms" {
            // sched_rr_handler(): a value of 0 or less restores RR_TIMESLICE.
            self.sched_rr_timeslice_ms = if x <= 0 { RR_TIMESLICE_MS } else { x as u64 };
            return Ok(());
        }
        let before = self.clone_rt();
        (knob.set)(self, x);
        if key == "kernel.sched_rt_runtime_us" || key == "kernel.sched_rt_period_us" {
            if let Err(why) = self.rt_global_validate() {
                (self.sched_rt_runtime_us, self.sched_rt_period_us) = before;
                return Err(bad(why));
            }
        }
        Ok(())
    }

    fn clone_rt(&self) -> (i64, u64) {
        (self.sched_rt_runtime_us, self.sched_rt_period_us)
    }

    /// v6.1 `sched_rt_global_validate()`: the runtime is -1 (RUNTIME_INF) or at most the
    /// period and `max_rt_runtime`; otherwise the write fails with EINVAL.
    fn rt_global_validate(&self) -> Result<(), String> {
        let (runtime, period) = self.clone_rt();
        if runtime == -1 {
            return Ok(());
        }
        let runtime = runtime as u64;
        if runtime > period || runtime * 1000 > MAX_RT_RUNTIME_NS {
            return Err(format!(
                "kernel.sched_rt_runtime_us ({}) at most kernel.sched_rt_period_us ({period}) \
                 or -1 (sched_rt_global_validate: EINVAL)",
                self.sched_rt_runtime_us
            ));
        }
        Ok(())
    }

    /// `TIME:KEY=VALUE` (`--set-at`): a sysctl or cgroup write at simulated time TIME. Only
    /// what a running system lets one write may be written mid-run.
    pub fn set_at(&mut self, at_ns: u64, pair: &str, source: &str) -> Result<(), InputError> {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(InputError::new(
                source,
                pair,
                "TIME:KEY=VALUE",
                format!("`{pair}`"),
            ));
        };
        let key = key.trim();
        let value = value.trim();
        if let Some(rest) = key.strip_prefix("task.") {
            let target = if let Some(task) = rest.strip_suffix(".uclamp.min") {
                AdminTarget::TaskUclamp {
                    task: task.into(),
                    min: true,
                }
            } else if let Some(task) = rest.strip_suffix(".uclamp.max") {
                AdminTarget::TaskUclamp {
                    task: task.into(),
                    min: false,
                }
            } else if let Some(task) = rest.strip_suffix(".cgroup") {
                AdminTarget::TaskCgroup { task: task.into() }
            } else if let Some(task) = rest.strip_suffix(".latency_nice") {
                AdminTarget::TaskLatencyNice { task: task.into() }
            } else {
                return Err(InputError::new(
                    source,
                    key,
                    "task.<thread>.uclamp.min, task.<thread>.uclamp.max, \
                     task.<thread>.latency_nice or task.<thread>.cgroup",
                    format!("`{key}`"),
                ));
            };
            let valid = match &target {
                AdminTarget::TaskCgroup { .. } => value.starts_with('/'),
                _ => value.parse::<i32>().is_ok(),
            };
            if !valid {
                let expected = match target {
                    AdminTarget::TaskCgroup { .. } => "a cgroup path from /",
                    AdminTarget::TaskLatencyNice { .. } => "an integer latency nice",
                    _ => "an integer clamp (-1 resets)",
                };
                return Err(InputError::new(source, key, expected, format!("`{value}`")));
            }
            self.timed_writes.push(TimedWrite {
                at_ns,
                target,
                value: value.to_string(),
                place: source.to_string(),
            });
            return Ok(());
        }
        if let Some(policy) = key.strip_prefix("cpufreq.policy") {
            let cpu = policy
                .strip_suffix(".scaling_setspeed")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| {
                    InputError::new(
                        source,
                        key,
                        "cpufreq.policy<N>.scaling_setspeed, N the policy's first CPU",
                        format!("`{key}`"),
                    )
                })?;
            // store_scaling_setspeed() reads it with sscanf("%u").
            if value.parse::<u32>().is_err() {
                return Err(InputError::new(
                    source,
                    key,
                    "a frequency in kHz",
                    format!("`{value}`"),
                ));
            }
            self.timed_writes.push(TimedWrite {
                at_ns,
                target: AdminTarget::ScalingSetspeed { cpu },
                value: value.to_string(),
                place: source.to_string(),
            });
            return Ok(());
        }
        let (before_s, before_c) = (self.sysctl_writes.len(), self.cgroup_writes.len());
        let is_admin = Sysctl::from_name(key).is_some() || key.starts_with("cgroup.");
        if !is_admin {
            return Err(InputError::new(
                source,
                key,
                "a kernel.sched_util_clamp_* sysctl, a cgroup.<path>.<file>, a task.<thread>.* \
                 attribute or cpufreq.policy<N>.scaling_setspeed (other switches are fixed at \
                 boot)",
                format!("`{key}`"),
            ));
        }
        // Parse through `set`, then move what it recorded into the timed list.
        self.set(key, value, source)?;
        let target = if self.sysctl_writes.len() > before_s {
            let (s, _) = self.sysctl_writes.pop().expect("set recorded it");
            AdminTarget::Sysctl(s)
        } else {
            debug_assert!(self.cgroup_writes.len() > before_c);
            let w = self.cgroup_writes.pop().expect("set recorded it");
            AdminTarget::Cgroup {
                path: w.path,
                file: w.file,
            }
        };
        self.timed_writes.push(TimedWrite {
            at_ns,
            target,
            value: value.to_string(),
            place: source.to_string(),
        });
        Ok(())
    }

    /// The timed writes' targets that exist on `platform`: a `scaling_setspeed` names a
    /// policy by its first CPU. The first that does not: its index, and the error at its
    /// place.
    pub fn check_timed_writes(&self, platform: &Platform) -> Result<(), (usize, InputError)> {
        let heads: Vec<usize> = platform.freq_domains.iter().map(|d| d.cpus[0]).collect();
        for (i, w) in self.timed_writes.iter().enumerate() {
            if let AdminTarget::ScalingSetspeed { cpu } = w.target {
                if !heads.contains(&cpu) {
                    let firsts: Vec<String> = heads.iter().map(usize::to_string).collect();
                    return Err((
                        i,
                        InputError::new(
                            &w.place,
                            w.target.key(),
                            format!(
                                "a policy of {} (policy<N>, N the first CPU of a frequency \
                                 domain: {})",
                                platform.name,
                                firsts.join(", ")
                            ),
                            format!("policy{cpu}"),
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Parse and apply `KEY=VALUE`.
    pub fn set_pair(&mut self, pair: &str, source: &str) -> Result<(), InputError> {
        match pair.split_once('=') {
            Some((k, v)) => self.set(k.trim(), v, source),
            None => Err(InputError::new(
                source,
                pair,
                "KEY=VALUE",
                format!("`{pair}`"),
            )),
        }
    }

    /// All switches with their values, for the results' "variant" object.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(GOVERNOR_KEY.to_string(), Value::from(self.governor.name()));
        m.insert(
            CPUIDLE_GOVERNOR_KEY.to_string(),
            Value::from(self.cpuidle_governor.name()),
        );
        m.insert(
            START_KEY.to_string(),
            Value::from(self.cpufreq_start.name()),
        );
        for k in Tunables::KEYS {
            let v = self.cpufreq.get(k).unwrap_or_default();
            m.insert(format!("cpufreq.{k}"), Value::from(v));
        }
        m.insert(
            FREQ_INVARIANCE_KEY.to_string(),
            self.freq_invariance.map_or(Value::Null, Value::from),
        );
        m.insert(
            UPDATE_SITES_KEY.to_string(),
            Value::from(self.cpufreq_update_sites.name()),
        );
        m.insert(
            LATENCY_NICE_KEY.to_string(),
            Value::from(self.latency_nice.name()),
        );
        m.insert(FAIR_KEY.to_string(), Value::from(self.fair.name()));
        for k in KNOBS {
            m.insert(k.key.to_string(), (k.get)(self));
        }
        for (k, v) in &self.machine_sets {
            m.insert(k.clone(), Value::from(*v));
        }
        Value::Object(m)
    }

    /// The platform's costs and memory with the `cost.*` / `memory.*` switches applied.
    pub fn machine(&self, platform: &Platform) -> (Costs, Memory) {
        let mut costs = fields(&platform.costs);
        let mut memory = fields(&platform.memory);
        for (key, v) in &self.machine_sets {
            let (table, field) = machine_key(key).expect("set() checks the key");
            let m = match table {
                MachineTable::Costs => &mut costs,
                MachineTable::Memory => &mut memory,
            };
            m.insert(field.name.to_string(), Value::from(*v));
        }
        (back(costs), back(memory))
    }

    /// `TICK_NSEC`.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz as u64
    }

    /// `get_update_sysctl_factor()`: how the CFS tunables scale with the number of CPUs.
    pub fn tunable_factor(&self, nr_cpus: usize) -> u64 {
        let cpus = nr_cpus.clamp(1, 8) as u64;
        match self.sched_tunable_scaling {
            0 => 1,
            2 => cpus,
            _ => 1 + cpus.ilog2() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_is_one_plus_ilog2_of_cpus_capped_at_8() {
        let v = Variant::default();
        assert_eq!(v.tunable_factor(1), 1);
        assert_eq!(v.tunable_factor(2), 2);
        assert_eq!(v.tunable_factor(6), 3);
        assert_eq!(v.tunable_factor(8), 4);
        assert_eq!(v.tunable_factor(64), 4);
    }

    #[test]
    fn set_validates_and_names_the_key() {
        let mut v = Variant::default();
        v.set("feature.START_DEBIT", "false", "--set").unwrap();
        assert!(!v.features.start_debit);
        v.set("config.HZ", "1000", "--set").unwrap();
        assert_eq!(v.tick_ns(), 1_000_000);
        let e = v.set("config.HZ", "123", "--set").unwrap_err();
        assert_eq!(e.place, "config.HZ");
        let e = v.set("nope.key", "1", "--set").unwrap_err();
        assert!(e.found.contains("nope.key"));
        assert!(v.set_pair("feature.LAST_BUDDY", "--set").is_err());
        v.set("cpufreq.governor", "powersave", "--set").unwrap();
        assert_eq!(v.governor, GovernorKind::Powersave);
        assert!(v.set("cpufreq.governor", "schedutil-ish", "--set").is_err());
        v.set("cpufreq.rate_limit_us", "200", "--set").unwrap();
        assert_eq!(v.cpufreq.rate_limit_us, Some(200));
        assert!(v.set("cpufreq.rate_limit_us", "-3", "--set").is_err());
        assert_eq!(v.cpufreq_start, StartFreq::Idle);
        v.set("cpufreq.start_khz", "max", "--set").unwrap();
        assert_eq!(v.cpufreq_start, StartFreq::Max);
        v.set("cpufreq.start_khz", "1800000", "--set").unwrap();
        assert_eq!(v.cpufreq_start, StartFreq::Khz(1_800_000));
        assert!(v.set("cpufreq.start_khz", "0", "--set").is_err());
        assert!(v.set("cpufreq.start_khz", "boot", "--set").is_err());
    }

    #[test]
    fn every_knob_appears_in_the_json() {
        let j = Variant::default().to_json();
        assert_eq!(
            j.as_object().unwrap().len(),
            KNOBS.len() + 7 + Tunables::KEYS.len()
        );
        assert_eq!(j["config.HZ"], 250);
    }
}

//! `schedlab host platform`: the machine the program runs on as a platform file, read from
//! sysfs and procfs — CPUs, SMT siblings, packages, NUMA nodes and distances, caches (the
//! LLC grouping and `[memory]`), capacities, cpufreq policies and their OPPs (or the one
//! fixed frequency), cpuidle states, and the kernel (version, CONFIG_*, scheduler sysctls
//! and debugfs tunables) as the `[kernel]` switches schedlab applies as the platform's
//! defaults. Each value's comment says where it was read; what schedlab cannot use is a
//! comment; a file that cannot be read is a note at the top, never an error.

use crate::cpuinfo::{self, CpuModel};
use crate::kernel::{debugfs, kernel_config, sysctls, timer_slack, version, Switch};
use crate::sysfs::{cpulist, one_line, Root};
use schedlab::error::InputError;
use schedlab::platform::{parse_platform, Platform};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// A machine's platform file.
pub struct HostPlatform {
    /// The platform file, commented like `platforms/*.toml`.
    pub text: String,
    /// The file as `--platform FILE` reads it.
    pub platform: Platform,
    /// What could not be read (also at the top of `text`).
    pub notes: Vec<String>,
}

const CPU_DIR: &str = "/sys/devices/system/cpu";
const NODE_DIR: &str = "/sys/devices/system/node";
pub(crate) const DEBUG_SCHED: &str = "/sys/kernel/debug/sched";

/// The platform of the machine whose `/sys` and `/proc` are under `root` (`/`: this one).
/// On this machine, as root, a debugfs not mounted is mounted for the read in a private
/// directory and unmounted after, so the scheduler's tunables are read too.
pub fn read(root: &Path) -> Result<HostPlatform, InputError> {
    let mut r = Root::new(root);
    let _debugfs = if r.is_live() && !r.exists(DEBUG_SCHED) {
        match PrivateDebugfs::mount() {
            Ok(m) => {
                r.debugfs_at(&m.dir);
                Some(m)
            }
            Err(why) => {
                r.note(format!("/sys/kernel/debug: not mounted, and {why}"));
                None
            }
        }
    } else {
        None
    };
    let facts = Facts::read(&mut r)?;
    let text = facts.render(&r.notes);
    let origin = format!("the platform read from {}", root.display());
    let platform = parse_platform(&text, &origin)?;
    Ok(HostPlatform {
        text,
        platform,
        notes: r.notes,
    })
}

/// debugfs mounted in a directory of our own for one read (a mount of the one debugfs the
/// kernel has: what others mount elsewhere is not touched).
struct PrivateDebugfs {
    dir: PathBuf,
}

impl PrivateDebugfs {
    fn mount() -> Result<PrivateDebugfs, String> {
        if !crate::sys::is_root() {
            return Err("reading the scheduler's tunables needs root".into());
        }
        let dir = std::env::temp_dir().join(format!("schedlab-debugfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        match crate::sys::mount("debugfs", &dir) {
            Ok(()) => Ok(PrivateDebugfs { dir }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(format!("mounting it failed ({e})"))
            }
        }
    }
}

impl Drop for PrivateDebugfs {
    fn drop(&mut self) {
        let _ = crate::sys::unmount(&self.dir);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// One cache of a CPU (`cache/indexN`).
#[derive(Debug, Clone)]
struct Cache {
    index: usize,
    level: u32,
    kind: String,
    kib: u64,
    shared: Vec<usize>,
}

/// One cpuidle state (`cpuidle/stateN`).
#[derive(Debug, Clone)]
struct Idle {
    index: usize,
    name: String,
    latency_us: u64,
    residency_us: u64,
    disabled: bool,
}

/// What was read of one CPU.
#[derive(Debug, Clone)]
struct CpuFacts {
    siblings: Vec<usize>,
    core_id: Option<i64>,
    package_raw: Option<i64>,
    capacity: Option<u32>,
    caches: Vec<Cache>,
    idle: Vec<Idle>,
    model: CpuModel,
}

/// A cpufreq policy.
#[derive(Debug, Clone)]
struct Policy {
    name: String,
    cpus: Vec<usize>,
    khz: Vec<u32>,
    /// Where the frequencies came from.
    source: String,
    latency_ns: Option<u64>,
    driver: Option<String>,
    governor: Option<String>,
}

struct Facts {
    cpus: Vec<CpuFacts>,
    node_of: Vec<usize>,
    /// The SLIT rows of the nodes with CPUs (renumbered from 0), and what was said of them.
    distances: Vec<Vec<u32>>,
    node_comment: String,
    policies: Vec<Policy>,
    /// The fixed frequency when there is no cpufreq: kHz and its source.
    fixed_khz: Option<(u32, String)>,
    osrelease: Option<String>,
    config: Option<(BTreeMap<String, String>, String)>,
    idle_driver: Option<String>,
    idle_governor: Option<String>,
    energy_model: (bool, String),
    freq_invariant: (bool, String),
    kernel: Vec<Switch>,
}

impl Facts {
    fn read(r: &mut Root) -> Result<Facts, InputError> {
        let online = match r.cpulist(&format!("{CPU_DIR}/online"), false) {
            Some(l) if !l.is_empty() => l,
            _ => r
                .numbered(CPU_DIR, "cpu")
                .into_iter()
                .map(|(n, _)| n)
                .collect(),
        };
        if online.is_empty() {
            return Err(InputError::new(
                r.path(CPU_DIR).display().to_string(),
                "online CPUs",
                "the CPUs of the machine (`online`, or cpuN directories)",
                "none",
            ));
        }
        if online.iter().enumerate().any(|(i, &c)| i != c) {
            return Err(InputError::new(
                r.path(&format!("{CPU_DIR}/online")).display().to_string(),
                "online CPUs",
                "CPUs numbered from 0 without a gap (a platform has no offline CPUs: bring them online)",
                cpulist(&online),
            ));
        }
        let n = online.len();
        let models = match r.read("/proc/cpuinfo") {
            Some(t) => cpuinfo::parse(&t),
            None => BTreeMap::new(),
        };
        let mut cpus = Vec::with_capacity(n);
        for c in 0..n {
            let dir = format!("{CPU_DIR}/cpu{c}");
            let siblings = r
                .cpulist(&format!("{dir}/topology/thread_siblings_list"), false)
                .unwrap_or_default()
                .into_iter()
                .filter(|&s| s != c && s < n)
                .collect();
            let core_id = r.parse(&format!("{dir}/topology/core_id"), false);
            let package_raw = r.parse(&format!("{dir}/topology/physical_package_id"), false);
            let capacity = r.parse(&format!("{dir}/cpu_capacity"), true);
            let mut caches = Vec::new();
            for (index, name) in r.numbered(&format!("{dir}/cache"), "index") {
                let d = format!("{dir}/cache/{name}");
                let (Some(level), Some(kind), Some(size), Some(shared)) = (
                    r.parse::<u32>(&format!("{d}/level"), false),
                    r.read(&format!("{d}/type")),
                    r.read(&format!("{d}/size")),
                    r.cpulist(&format!("{d}/shared_cpu_list"), false),
                ) else {
                    continue;
                };
                let Some(kib) = size_kib(&size) else {
                    r.note(format!("{d}/size: `{}` is not a size", one_line(&size)));
                    continue;
                };
                caches.push(Cache {
                    index,
                    level,
                    kind,
                    kib,
                    shared: shared.into_iter().filter(|&s| s < n).collect(),
                });
            }
            let mut idle = Vec::new();
            for (index, name) in r.numbered(&format!("{dir}/cpuidle"), "state") {
                let d = format!("{dir}/cpuidle/{name}");
                let (Some(name), Some(latency_us), Some(residency_us)) = (
                    r.read(&format!("{d}/name")),
                    r.parse(&format!("{d}/latency"), false),
                    r.parse(&format!("{d}/residency"), false),
                ) else {
                    continue;
                };
                let disabled = r.parse::<u32>(&format!("{d}/disable"), true) == Some(1);
                idle.push(Idle {
                    index,
                    name: one_line(&name),
                    latency_us,
                    residency_us,
                    disabled,
                });
            }
            cpus.push(CpuFacts {
                siblings,
                core_id,
                package_raw,
                capacity,
                caches,
                idle,
                model: models.get(&c).cloned().unwrap_or_default(),
            });
        }

        let (node_of, distances, node_comment) = nodes(r, n);
        let policies = policies(r, n);
        let fixed_khz = if policies.iter().map(|p| p.cpus.len()).sum::<usize>() < n {
            let khz = cpus.iter().find_map(|c| c.model.khz());
            Some(match khz {
                Some((khz, from)) => (khz, format!("/proc/cpuinfo {from}")),
                None => {
                    r.note("/proc/cpuinfo: no clock (cpu MHz, or `@ N GHz` in the model name): 1 GHz assumed".into());
                    (1_000_000, "assumed: nothing gives the clock".into())
                }
            })
        } else {
            None
        };
        let osrelease = r.read("/proc/sys/kernel/osrelease");
        let config = kernel_config(r, osrelease.as_deref());
        let idle_driver = r.read_optional(&format!("{CPU_DIR}/cpuidle/current_driver"));
        let idle_governor = r
            .read_optional(&format!("{CPU_DIR}/cpuidle/current_governor"))
            .or_else(|| r.read_optional(&format!("{CPU_DIR}/cpuidle/current_governor_ro")));
        let mut facts = Facts {
            cpus,
            node_of,
            distances,
            node_comment,
            policies,
            fixed_khz,
            osrelease,
            config,
            idle_driver,
            idle_governor,
            energy_model: (false, String::new()),
            freq_invariant: (false, String::new()),
            kernel: Vec::new(),
        };
        facts.energy_model = facts.energy_model(r);
        facts.freq_invariant = facts.freq_invariant(r);
        facts.kernel = facts.kernel_switches(r);
        Ok(facts)
    }

    fn config_value(&self, name: &str) -> Option<&str> {
        self.config
            .as_ref()
            .and_then(|(c, _)| c.get(name))
            .map(String::as_str)
    }

    fn config_source(&self) -> &str {
        self.config.as_ref().map_or("", |(_, s)| s.as_str())
    }

    fn is_x86(&self) -> bool {
        self.cpus.iter().any(|c| c.model.family.is_some())
    }

    /// Whether the kernel registers an energy model (EAS needs one).
    fn energy_model(&self, r: &mut Root) -> (bool, String) {
        if self.config.is_some() && self.config_value("CONFIG_ENERGY_MODEL").is_none() {
            let src = self.config_source().to_string();
            return (false, format!("{src}: CONFIG_ENERGY_MODEL is not set"));
        }
        let pds = r.list("/sys/kernel/debug/energy_model");
        if !pds.is_empty() {
            return (
                true,
                format!("/sys/kernel/debug/energy_model: {}", pds.join(" ")),
            );
        }
        if r.exists("/sys/kernel/debug/sched") {
            return (
                false,
                "/sys/kernel/debug/energy_model: no performance domain".into(),
            );
        }
        (
            false,
            "assumed: no /sys/kernel/debug/energy_model to say otherwise".into(),
        )
    }

    /// Whether the architecture scales PELT by the current frequency.
    fn freq_invariant(&self, r: &mut Root) -> (bool, String) {
        let single = self.policies.iter().all(|p| p.khz.len() <= 1);
        let moot = if single {
            " (one frequency: it changes nothing)"
        } else {
            ""
        };
        if self.is_x86() {
            let flags = r.read("/proc/cpuinfo").unwrap_or_default();
            let has = flags
                .lines()
                .find(|l| l.starts_with("flags"))
                .is_some_and(|l| l.split_whitespace().any(|f| f == "aperfmperf"));
            let why = if has {
                "/proc/cpuinfo flags: aperfmperf (x86 APERF/MPERF)"
            } else {
                "/proc/cpuinfo flags: no aperfmperf"
            };
            return (has, format!("{why}{moot}"));
        }
        let has = !self.policies.is_empty();
        let why = if has {
            "arm64: cpufreq's frequency scale"
        } else {
            "no cpufreq to scale by"
        };
        (has, format!("{why}{moot}"))
    }

    /// The `[kernel]` switches and the comments on what schedlab does not model.
    fn kernel_switches(&self, r: &mut Root) -> Vec<Switch> {
        let mut out = Vec::new();
        let set = |out: &mut Vec<Switch>, k: &str, v: String, why: String| {
            out.push(Switch::Set(k.into(), v, why))
        };
        match self.osrelease.as_deref().and_then(version) {
            Some((major, minor)) => {
                let release = self.osrelease.as_deref().unwrap_or_default();
                let (fair, why) = if (major, minor) >= (6, 6) {
                    ("eevdf", "EEVDF since v6.6")
                } else {
                    ("cfs", "CFS before v6.6")
                };
                set(
                    &mut out,
                    "variant.fair",
                    quote(fair),
                    format!("/proc/sys/kernel/osrelease {release}: {why}"),
                );
                if (major, minor) < (6, 1) {
                    out.push(Switch::Comment(format!(
                        "Linux {major}.{minor} predates the v6.1 scheduler schedlab models"
                    )));
                }
            }
            None => out.push(Switch::Comment(
                "variant.fair: the kernel's version is unknown (/proc/sys/kernel/osrelease): schedlab's default".into(),
            )),
        }
        if self.config.is_some() {
            let src = self.config_source().to_string();
            for name in ["UCLAMP_TASK", "FAIR_GROUP_SCHED", "UCLAMP_TASK_GROUP"] {
                let key = format!("CONFIG_{name}");
                if name == "UCLAMP_TASK_GROUP" && self.config_value("CONFIG_UCLAMP_TASK").is_none()
                {
                    continue;
                }
                let (v, how) = match self.config_value(&key) {
                    Some("y") => ("true", format!("{key}=y")),
                    _ => ("false", format!("{key} is not set")),
                };
                set(
                    &mut out,
                    &format!("config.{name}"),
                    v.into(),
                    format!("{src}: {how}"),
                );
            }
            if let Some(count) = self.config_value("CONFIG_UCLAMP_BUCKETS_COUNT") {
                if count.parse::<u32>().is_ok() {
                    set(
                        &mut out,
                        "config.UCLAMP_BUCKETS_COUNT",
                        count.into(),
                        format!("{src}: CONFIG_UCLAMP_BUCKETS_COUNT={count}"),
                    );
                }
            }
            let preempt = ["PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT", "PREEMPT_RT"]
                .into_iter()
                .find(|m| self.config_value(&format!("CONFIG_{m}")) == Some("y"));
            if let Some(m) = preempt {
                let dynamic = if self.config_value("CONFIG_PREEMPT_DYNAMIC") == Some("y") {
                    " with PREEMPT_DYNAMIC"
                } else {
                    ""
                };
                out.push(Switch::Comment(format!(
                    "CONFIG_{m}{dynamic} ({src}): not modelled (schedlab preempts at every wake-up check)"
                )));
            }
        }
        self.governors(&mut out);
        sysctls(r, &mut out);
        timer_slack(r, &mut out);
        debugfs(r, self.cpus.len(), &mut out);
        out
    }

    /// cpufreq's and cpuidle's governors, where schedlab models them.
    fn governors(&self, out: &mut Vec<Switch>) {
        const CPUFREQ: &[&str] = &[
            "schedutil",
            "performance",
            "powersave",
            "ondemand",
            "conservative",
        ];
        let govs: Vec<&str> = self
            .policies
            .iter()
            .filter_map(|p| p.governor.as_deref())
            .collect();
        if let Some(&g) = govs.first() {
            let at = format!(
                "{CPU_DIR}/cpufreq/{}/scaling_governor",
                self.policies[0].name
            );
            if govs.iter().any(|&o| o != g) {
                out.push(Switch::Comment(format!(
                    "cpufreq.governor: the policies differ ({}): schedlab gives every policy one",
                    govs.join(", ")
                )));
            } else if CPUFREQ.contains(&g) {
                out.push(Switch::Set(
                    "cpufreq.governor".into(),
                    quote(g),
                    at.to_string(),
                ));
            } else {
                out.push(Switch::Comment(format!(
                    "cpufreq.governor: {g} ({at}) is not modelled"
                )));
            }
        }
        if let Some(g) = &self.idle_governor {
            let at = format!("{CPU_DIR}/cpuidle/current_governor");
            if g == "menu" || g == "teo" {
                out.push(Switch::Set("cpuidle.governor".into(), quote(g), at));
            } else {
                out.push(Switch::Comment(format!(
                    "cpuidle.governor: {} ({at}) is not modelled (menu and teo are): schedlab's default",
                    one_line(g)
                )));
            }
        }
    }

    /// The platform file.
    fn render(&self, notes: &[String]) -> String {
        let mut o = String::new();
        let n = self.cpus.len();
        // The models, each with its number of CPUs.
        let mut models: Vec<(String, usize)> = Vec::new();
        for c in &self.cpus {
            let d = c.model.describe();
            match models.iter_mut().find(|(m, _)| *m == d) {
                Some((_, k)) => *k += 1,
                None => models.push((d, 1)),
            }
        }
        let model = match models.as_slice() {
            [(m, _)] => m.clone(),
            _ => models
                .iter()
                .map(|(m, k)| format!("{k} × {m}"))
                .collect::<Vec<_>>()
                .join(" + "),
        };
        let release = self.osrelease.as_deref().unwrap_or("of unknown version");
        let _ = writeln!(
            o,
            "# The machine schedlab ran on, as `schedlab host platform` read it from sysfs and\n\
             # procfs: {model}, {n} CPUs, Linux {release}.\n\
             # Each value says where it was read; what schedlab cannot use is a comment."
        );
        if !notes.is_empty() {
            let _ = writeln!(o, "#\n# Not read:");
            for note in notes {
                let _ = writeln!(o, "#   {}", one_line_long(note));
            }
        }
        // The uarch of each distinct model.
        let mut seen = Vec::new();
        for c in &self.cpus {
            let (known, line) = uarch_comment(&c.model);
            if !seen.contains(&line) {
                let _ = writeln!(o, "#\n# uarch {known:?}: {line}");
                seen.push(line);
            }
        }
        let _ = writeln!(o, "\nname = \"host\"");
        let desc = format!(
            "{model}: {n} CPUs, Linux {release}. Read by `schedlab host platform` from sysfs and procfs: \
             topology, caches, capacities, cpufreq, cpuidle and the kernel's configuration; \
             power is unknown (0 mW)."
        );
        let _ = writeln!(o, "description = {}", quote(&desc));
        match self.config_value("CONFIG_HZ") {
            Some(hz) if hz.parse::<u32>().is_ok() => {
                let _ = writeln!(o, "hz = {hz}  # {}: CONFIG_HZ={hz}", self.config_source());
            }
            _ => {
                let _ = writeln!(
                    o,
                    "# hz: CONFIG_HZ unknown (no kernel configuration read): the model's default"
                );
            }
        }
        let _ = writeln!(
            o,
            "energy_model = {}  # {}",
            self.energy_model.0, self.energy_model.1
        );
        let _ = writeln!(
            o,
            "freq_invariant = {}  # {}",
            self.freq_invariant.0, self.freq_invariant.1
        );
        if self.distances.len() > 1 {
            let _ = writeln!(o, "# {}", self.node_comment);
            let _ = writeln!(o, "numa_distance = [");
            for row in &self.distances {
                let row: Vec<String> = row.iter().map(u32::to_string).collect();
                let _ = writeln!(o, "  [{}],", row.join(", "));
            }
            let _ = writeln!(o, "]");
        } else {
            let _ = writeln!(o, "# {}", self.node_comment);
        }

        self.render_kernel(&mut o);
        self.render_costs_memory(&mut o);
        let domains = self.domains();
        self.render_cpus(&mut o, &domains);
        self.render_domains(&mut o, &domains);
        o
    }

    fn render_kernel(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "\n# The kernel, as `--set` switches: the platform's defaults, which an experiment's [set]\n\
             # and the command line's --set override."
        );
        let _ = writeln!(o, "[kernel]");
        for s in &self.kernel {
            match s {
                Switch::Set(k, v, why) => {
                    let _ = writeln!(o, "{k} = {v}  # {}", one_line_long(why));
                }
                Switch::Comment(c) => {
                    let _ = writeln!(o, "# {}", one_line_long(c));
                }
            }
        }
    }

    /// The reference CPU: the first of the highest capacity (whose uarch gives the costs).
    fn reference(&self) -> usize {
        let caps = self.capacities();
        (0..self.cpus.len())
            .max_by_key(|&c| (caps[c], std::cmp::Reverse(c)))
            .unwrap_or(0)
    }

    fn render_costs_memory(&self, o: &mut String) {
        let reference = self.reference();
        let c = &self.cpus[reference];
        let _ = writeln!(
            o,
            "\n# [costs]: none here; every key comes from CPU {reference}'s uarch at its highest frequency\n\
             # (crates/model/src/platform/costs.rs, Costs::for_uarch)."
        );
        let _ = writeln!(
            o,
            "\n# The caches (CPU {reference}, {CPU_DIR}/cpu{reference}/cache/index*):"
        );
        for k in &c.caches {
            let _ = writeln!(
                o,
                "#   index{}: L{} {} {} KiB, CPUs {}",
                k.index,
                k.level,
                one_line(&k.kind),
                k.kib,
                cpulist(&k.shared)
            );
        }
        let _ = writeln!(o, "[memory]");
        let llc = llc_of(c);
        match llc {
            Some(l) => {
                let own: Vec<usize> = std::iter::once(reference)
                    .chain(c.siblings.iter().copied())
                    .collect();
                let private: Vec<&Cache> = c
                    .caches
                    .iter()
                    .filter(|k| k.level < l.level && k.kind != "Instruction")
                    .filter(|k| k.shared.iter().all(|s| own.contains(s)))
                    .collect();
                if private.is_empty() {
                    let _ = writeln!(
                        o,
                        "# private_kib: no private cache below the LLC: the fallback"
                    );
                } else {
                    let sum: u64 = private.iter().map(|k| k.kib).sum();
                    let parts: Vec<String> = private
                        .iter()
                        .map(|k| format!("L{} {} {} KiB", k.level, one_line(&k.kind), k.kib))
                        .collect();
                    let _ = writeln!(
                        o,
                        "private_kib = {sum}  # {}, private to CPU {reference}'s core",
                        parts.join(" + ")
                    );
                }
                let _ = writeln!(
                    o,
                    "llc_kib = {}  # L{} {}, shared by CPUs {} (index{})",
                    l.kib,
                    l.level,
                    one_line(&l.kind),
                    cpulist(&l.shared),
                    l.index
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "# private_kib, llc_kib: no caches in sysfs: the fallback"
                );
            }
        }
        let _ = writeln!(
            o,
            "# llc_mb_s, dram_mb_s, llc_latency_ns, dram_latency_ns: not in sysfs; the fallback\n\
             # (costs.rs, Memory::fallback)."
        );
    }

    /// Capacities as the platform gives them: `cpu_capacity`, scaled so the biggest is 1024.
    fn capacities(&self) -> Vec<u32> {
        let max = self
            .cpus
            .iter()
            .filter_map(|c| c.capacity)
            .max()
            .unwrap_or(1024)
            .max(1);
        self.cpus
            .iter()
            .map(|c| match c.capacity {
                Some(cap) => ((u64::from(cap) * 1024 / u64::from(max)) as u32).max(1),
                None => 1024,
            })
            .collect()
    }

    /// The LLC id of each CPU: CPUs sharing their highest-level cache (else their package)
    /// share one, numbered by first CPU.
    fn llcs(&self) -> (Vec<usize>, Vec<String>) {
        let n = self.cpus.len();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut ids = vec![0; n];
        let mut how = vec![String::new(); n];
        for (c, cpu) in self.cpus.iter().enumerate() {
            let (mut group, why) = match llc_of(cpu) {
                Some(l) => (
                    l.shared.clone(),
                    format!("L{} shared by CPUs {}", l.level, cpulist(&l.shared)),
                ),
                None => {
                    let same: Vec<usize> = (0..n)
                        .filter(|&o| self.cpus[o].package_raw == cpu.package_raw)
                        .collect();
                    let why = format!("no caches in sysfs: the package's CPUs {}", cpulist(&same));
                    (same, why)
                }
            };
            if !group.contains(&c) {
                group.push(c);
                group.sort_unstable();
            }
            ids[c] = match groups.iter().position(|g| g.contains(&c)) {
                Some(i) => i,
                None => {
                    groups.push(group);
                    groups.len() - 1
                }
            };
            how[c] = why;
        }
        (ids, how)
    }

    /// Packages renumbered from 0 in the order of their first CPU.
    fn packages(&self) -> Vec<usize> {
        let mut seen: Vec<Option<i64>> = Vec::new();
        self.cpus
            .iter()
            .map(|c| match seen.iter().position(|p| *p == c.package_raw) {
                Some(i) => i,
                None => {
                    seen.push(c.package_raw);
                    seen.len() - 1
                }
            })
            .collect()
    }

    /// The frequency domains: each cpufreq policy, then the fixed clock of the CPUs no
    /// policy has. (cpus, OPPs in kHz, comment lines, driver fields).
    fn domains(&self) -> Vec<Domain> {
        let mut out: Vec<Domain> = self
            .policies
            .iter()
            .map(|p| {
                let mut comments = vec![format!(
                    "cpufreq {}: CPUs {} ({CPU_DIR}/cpufreq/{}/related_cpus), OPPs from {}",
                    p.name,
                    cpulist(&p.cpus),
                    p.name,
                    p.source
                )];
                if let Some(d) = &p.driver {
                    comments.push(format!("driver {}", one_line(d)));
                }
                let table = p.source.contains("scaling_available_frequencies");
                Domain {
                    cpus: p.cpus.clone(),
                    khz: p.khz.clone(),
                    comments,
                    latency_ns: p.latency_ns,
                    fast_switch: p.driver.as_deref() != Some("cpufreq-dt"),
                    freq_table: table,
                    // Neither sets policy->dvfs_possible_from_any_cpu (cpufreq-dt, scmi, scpi,
                    // qcom-cpufreq-hw and the other SoC drivers do).
                    any_cpu: !matches!(p.driver.as_deref(), Some("intel_cpufreq" | "acpi-cpufreq")),
                }
            })
            .collect();
        let covered: Vec<usize> = out.iter().flat_map(|d| d.cpus.clone()).collect();
        let rest: Vec<usize> = (0..self.cpus.len())
            .filter(|c| !covered.contains(c))
            .collect();
        if let (false, Some((khz, from))) = (rest.is_empty(), &self.fixed_khz) {
            out.push(Domain {
                cpus: rest.clone(),
                khz: vec![*khz],
                comments: vec![format!(
                    "no cpufreq ({CPU_DIR}/cpufreq has no policy for CPUs {}): one fixed frequency, {khz} kHz ({from})",
                    cpulist(&rest)
                )],
                latency_ns: None,
                fast_switch: true,
                freq_table: true,
                any_cpu: true,
            });
        }
        out
    }

    fn render_cpus(&self, o: &mut String, domains: &[Domain]) {
        let caps = self.capacities();
        let (llcs, llc_how) = self.llcs();
        let packages = self.packages();
        let max_cap = self.cpus.iter().filter_map(|c| c.capacity).max();
        for (c, cpu) in self.cpus.iter().enumerate() {
            let dir = format!("{CPU_DIR}/cpu{c}");
            let _ = writeln!(o, "\n[[cpus]]  # CPU {c}");
            let (known, _) = uarch_comment(&cpu.model);
            let _ = writeln!(o, "uarch = {}", quote(known));
            let cap_why = match (cpu.capacity, max_cap) {
                (Some(v), Some(1024)) => format!("{dir}/cpu_capacity: {v}"),
                (Some(v), Some(m)) => {
                    format!("{dir}/cpu_capacity: {v}, scaled so the biggest ({m}) is 1024")
                }
                _ => format!("no {dir}/cpu_capacity: every CPU alike"),
            };
            let _ = writeln!(o, "capacity_orig = {}  # {cap_why}", caps[c]);
            let d = domains
                .iter()
                .position(|d| d.cpus.contains(&c))
                .unwrap_or(0);
            let _ = writeln!(o, "freq_domain = {d}");
            let _ = writeln!(o, "llc = {}  # {}", llcs[c], llc_how[c]);
            let core = cpu
                .core_id
                .map_or(String::new(), |id| format!(" (core_id {id})"));
            let _ = writeln!(
                o,
                "smt_siblings = [{}]  # topology/thread_siblings_list{core}",
                cpu.siblings
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let pkg = cpu
                .package_raw
                .map_or("unknown".to_string(), |p| p.to_string());
            let _ = writeln!(
                o,
                "package = {}  # topology/physical_package_id {pkg}",
                packages[c]
            );
            let _ = writeln!(o, "node = {}", self.node_of[c]);
            self.render_idle(o, c, cpu);
        }
    }

    fn render_idle(&self, o: &mut String, c: usize, cpu: &CpuFacts) {
        if cpu.idle.is_empty() {
            let _ = writeln!(
                o,
                "# idle_states: none ({CPU_DIR}/cpu{c}/cpuidle has no state)"
            );
            return;
        }
        let driver = self
            .idle_driver
            .as_deref()
            .map_or(String::new(), |d| format!(", driver {}", one_line(d)));
        let _ = writeln!(
            o,
            "# cpuidle{driver}: exit latency and target residency from cpuidle/stateN/{{latency,residency}} (us); power unknown"
        );
        let _ = writeln!(o, "idle_states = [");
        let mut kept: Vec<&Idle> = Vec::new();
        for s in &cpu.idle {
            let why = if s.disabled {
                Some("disabled (disable = 1)")
            } else if kept.iter().any(|k| k.name == s.name) {
                Some("a name already used")
            } else if kept.last().is_some_and(|k| s.latency_us < k.latency_us) {
                Some("shallower than the state before it")
            } else {
                None
            };
            if let Some(why) = why {
                let _ = writeln!(
                    o,
                    "  # state{} {:?} (exit {} us, residency {} us): left out, {why}",
                    s.index, s.name, s.latency_us, s.residency_us
                );
                continue;
            }
            let polling = if s.name == "POLL" {
                ", polling = true"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "  {{ name = {}, power_mw = 0, exit_latency_ns = {}, target_residency_ns = {}{polling} }},  # state{}",
                quote(&s.name),
                s.latency_us.saturating_mul(1000),
                s.residency_us.saturating_mul(1000),
                s.index
            );
            kept.push(s);
        }
        let _ = writeln!(o, "]");
    }

    fn render_domains(&self, o: &mut String, domains: &[Domain]) {
        for d in domains {
            let _ = writeln!(o, "\n[[freq_domains]]");
            for c in &d.comments {
                let _ = writeln!(o, "# {}", one_line_long(c));
            }
            let cpus: Vec<String> = d.cpus.iter().map(usize::to_string).collect();
            let _ = writeln!(o, "cpus = [{}]", cpus.join(", "));
            if let Some(ns) = d.latency_ns {
                let _ = writeln!(
                    o,
                    "transition_latency_ns = {ns}  # cpuinfo_transition_latency"
                );
            }
            if !d.fast_switch {
                let _ = writeln!(o, "fast_switch = false  # cpufreq-dt has no fast switch");
            }
            if !d.freq_table {
                let _ = writeln!(
                    o,
                    "freq_table = false  # no scaling_available_frequencies: no frequency table"
                );
            }
            if !d.any_cpu {
                let _ = writeln!(
                    o,
                    "dvfs_possible_from_any_cpu = false  # the driver takes requests from the policy's CPUs only"
                );
            }
            let _ = writeln!(o, "# power unknown: 0 mW");
            let _ = writeln!(o, "opps = [");
            for khz in &d.khz {
                let _ = writeln!(o, "  {{ freq_khz = {khz}, power_mw = 0 }},");
            }
            let _ = writeln!(o, "]");
        }
    }
}

/// A frequency domain as written.
struct Domain {
    cpus: Vec<usize>,
    khz: Vec<u32>,
    comments: Vec<String>,
    latency_ns: Option<u64>,
    fast_switch: bool,
    freq_table: bool,
    /// `policy->dvfs_possible_from_any_cpu`.
    any_cpu: bool,
}

/// The highest-level data or unified cache of a CPU.
fn llc_of(cpu: &CpuFacts) -> Option<&Cache> {
    cpu.caches
        .iter()
        .filter(|k| k.kind != "Instruction")
        .max_by_key(|k| (k.level, k.kib))
}

/// The known uarch name of a CPU and the comment saying how it was chosen.
fn uarch_comment(m: &CpuModel) -> (&'static str, String) {
    let what = m.describe();
    match m.uarch() {
        Some(u) if u.exact => (
            u.known,
            format!("{what} from /proc/cpuinfo is {}", u.core),
        ),
        Some(u) => (
            u.known,
            format!(
                "{what} from /proc/cpuinfo is {}; costs.rs's work_per_cycle has no entry for it, \
                 {} is its nearest",
                u.core, u.known
            ),
        ),
        None => (
            "unknown",
            format!("{what}: /proc/cpuinfo does not identify the core; costs.rs's work_per_cycle gives an unknown core 1.0 (an A53)"),
        ),
    }
}

/// `48K` → 48, `2M` → 2048 (sysfs writes `%uK`).
fn size_kib(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1),
        b'M' => (&s[..s.len() - 1], 1024),
        b'G' => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A note or comment on one line, whole.
fn one_line_long(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Which node each CPU is on, the SLIT rows of the nodes with CPUs (renumbered), and a
/// comment on them.
fn nodes(r: &mut Root, n: usize) -> (Vec<usize>, Vec<Vec<u32>>, String) {
    let listed = r.numbered(NODE_DIR, "node");
    if listed.is_empty() {
        return (
            vec![0; n],
            Vec::new(),
            format!("one NUMA node ({NODE_DIR} lists none)"),
        );
    }
    let mut cpus_of: Vec<(usize, Vec<usize>)> = Vec::new();
    for (id, name) in &listed {
        let cpus = r
            .cpulist(&format!("{NODE_DIR}/{name}/cpulist"), false)
            .unwrap_or_default();
        cpus_of.push((*id, cpus.into_iter().filter(|&c| c < n).collect()));
    }
    let with_cpus: Vec<usize> = cpus_of
        .iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(id, _)| *id)
        .collect();
    let mut node_of = vec![0; n];
    for (id, cpus) in &cpus_of {
        if let Some(k) = with_cpus.iter().position(|w| w == id) {
            for &c in cpus {
                node_of[c] = k;
            }
        }
    }
    let dropped: Vec<String> = cpus_of
        .iter()
        .filter(|(_, c)| c.is_empty())
        .map(|(id, _)| format!("node{id}"))
        .collect();
    let dropped = if dropped.is_empty() {
        String::new()
    } else {
        format!("; without CPUs, left out: {}", dropped.join(" "))
    };
    if with_cpus.len() <= 1 {
        let d = with_cpus
            .first()
            .and_then(|id| r.read(&format!("{NODE_DIR}/node{id}/distance")))
            .unwrap_or_default();
        return (
            node_of,
            Vec::new(),
            format!(
                "one NUMA node ({NODE_DIR}/node{}/distance: {}){dropped}: no numa_distance table",
                with_cpus.first().copied().unwrap_or(0),
                one_line(&d)
            ),
        );
    }
    // Each node's `distance` lists its distance to every online node, in node order.
    let online: Vec<usize> = r
        .cpulist(&format!("{NODE_DIR}/online"), true)
        .unwrap_or_else(|| listed.iter().map(|(id, _)| *id).collect());
    let mut rows = Vec::new();
    for id in &with_cpus {
        let path = format!("{NODE_DIR}/node{id}/distance");
        let row: Option<Vec<u32>> = r
            .read(&path)
            .and_then(|t| t.split_whitespace().map(|d| d.parse().ok()).collect());
        let Some(row) = row.filter(|row| row.len() == online.len()) else {
            r.note(format!(
                "{path}: not a row of {} distances: one node assumed",
                online.len()
            ));
            return (
                vec![0; n],
                Vec::new(),
                "one NUMA node assumed: the distances could not be read".into(),
            );
        };
        let picked = with_cpus
            .iter()
            .filter_map(|w| online.iter().position(|o| o == w).map(|i| row[i]))
            .collect::<Vec<u32>>();
        rows.push(picked);
    }
    let names: Vec<String> = with_cpus.iter().map(|id| format!("node{id}")).collect();
    (
        node_of,
        rows,
        format!(
            "NUMA nodes {} ({NODE_DIR}/node*/cpulist and distance), numbered from 0{dropped}",
            names.join(" ")
        ),
    )
}

/// The cpufreq policies.
fn policies(r: &mut Root, n: usize) -> Vec<Policy> {
    let mut out = Vec::new();
    for (_, name) in r.numbered(&format!("{CPU_DIR}/cpufreq"), "policy") {
        let d = format!("{CPU_DIR}/cpufreq/{name}");
        let cpus = r
            .cpulist(&format!("{d}/related_cpus"), true)
            .or_else(|| r.cpulist(&format!("{d}/affected_cpus"), false))
            .unwrap_or_default()
            .into_iter()
            .filter(|&c| c < n)
            .collect::<Vec<_>>();
        if cpus.is_empty() {
            continue;
        }
        let list = |r: &mut Root, f: &str| -> Option<Vec<u32>> {
            let t = r.read_optional(&format!("{d}/{f}"))?;
            t.split_whitespace().map(|k| k.parse().ok()).collect()
        };
        let min: Option<u32> = r.parse(&format!("{d}/cpuinfo_min_freq"), false);
        let max: Option<u32> = r.parse(&format!("{d}/cpuinfo_max_freq"), false);
        let (mut khz, source) = match list(r, "scaling_available_frequencies") {
            Some(mut f) if !f.is_empty() => {
                let mut source = "scaling_available_frequencies".to_string();
                if let Some(boost) = list(r, "scaling_boost_frequencies").filter(|b| !b.is_empty())
                {
                    f.extend(boost);
                    source.push_str(" and scaling_boost_frequencies");
                }
                (f, source)
            }
            _ => match (min, max) {
                (Some(lo), Some(hi)) if lo > 0 && lo <= hi => {
                    // No table (a P-state driver): 100 MHz steps, as intel_pstate's are.
                    let mut f: Vec<u32> = (lo..hi).step_by(100_000).collect();
                    f.push(hi);
                    (
                        f,
                        "cpuinfo_min_freq to cpuinfo_max_freq in 100 MHz steps (no frequency table)"
                            .to_string(),
                    )
                }
                _ => {
                    r.note(format!("{d}: no frequencies (scaling_available_frequencies, cpuinfo_min/max_freq): left out"));
                    continue;
                }
            },
        };
        if let Some(hi) = max {
            if !khz.contains(&hi) && khz.iter().all(|&k| k < hi) {
                khz.push(hi);
            }
        }
        khz.retain(|&k| k > 0);
        khz.sort_unstable();
        khz.dedup();
        let latency_ns = r
            .parse::<u64>(&format!("{d}/cpuinfo_transition_latency"), true)
            // CPUFREQ_ETERNAL: the driver does not know.
            .filter(|&l| l != u64::from(u32::MAX));
        out.push(Policy {
            name,
            cpus,
            khz,
            source,
            latency_ns,
            driver: r.read_optional(&format!("{d}/scaling_driver")),
            governor: r.read_optional(&format!("{d}/scaling_governor")),
        });
    }
    // A CPU in two policies is kept in the first.
    let mut taken = Vec::new();
    out.retain_mut(|p| {
        p.cpus.retain(|c| !taken.contains(c));
        taken.extend(p.cpus.iter().copied());
        !p.cpus.is_empty()
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_versions() {
        assert_eq!(size_kib("48K"), Some(48));
        assert_eq!(size_kib("32M"), Some(32768));
        assert_eq!(size_kib("x"), None);
        assert_eq!(quote("a \"b\"\n"), "\"a \\\"b\\\"\\u000A\"");
    }
}

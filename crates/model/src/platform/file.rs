//! Platform files: the fields of [`Platform`] as TOML or JSON (SPEC §1), read into a
//! `Platform` and checked against what a kernel could boot on.
//!
//! The text is read by the place-keeping reader of `schedlab_base::place` rather than handed
//! to serde, so that every mistake is reported at its key path and line
//! (`freq_domains[1].opps[3].freq_khz (line 40 column 3)`) in both formats, with what was
//! expected there and what was found. The accepted keys and their defaults are those of the
//! serde derives in `mod.rs`; `tests/it/platform.rs` checks that both readings of every
//! preset agree.

use super::{Costs, Cpu, FreqDomain, IdleState, Memory, Opp, Platform, SCHED_CAPACITY_SCALE};
use schedlab_base::error::InputError;
use schedlab_base::place::{At, Doc};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The largest platform schedlab accepts: what a CPU mask holds.
const MAX_CPUS: usize = crate::workload::NR_CPUS;

/// `LOCAL_DISTANCE`, the SLIT's value for a node to itself (include/linux/topology.h).
const LOCAL_DISTANCE: u32 = 10;

/// The CONFIG_HZ range that Kconfig offers across architectures (24 to 1200).
const HZ_RANGE: std::ops::RangeInclusive<u32> = 24..=1200;

/// Reads and checks the platform file at `path`.
pub fn load_file(path: &Path) -> Result<Platform, InputError> {
    let text = schedlab_base::place::read_text(path, "UTF-8 platform file")?;
    parse_platform(&text, &path.display().to_string())
}

/// Parses platform `text` (TOML, or JSON when it starts with `{` or `file` ends in `.json`)
/// and checks it; `file` names the source in errors.
pub fn parse_platform(text: &str, file: &str) -> Result<Platform, InputError> {
    let doc = Doc::parse(text, file)?;
    let platform = platform(&doc.root())?;
    // A rule broken by what was read is named at the key's line when the file has the key
    // (a layout's CPUs are computed: those have their path only).
    validate(&platform, file).map_err(|e| InputError {
        place: doc.place_of(&e.place),
        ..e
    })?;
    Ok(platform)
}

/// An optional key: `None` when absent or null.
fn optional<'d>(t: &schedlab_base::place::Table<'d>, key: &str) -> Option<At<'d>> {
    t.get(key).filter(|at| !at.is_null())
}

fn platform(root: &At) -> Result<Platform, InputError> {
    const KEYS: &[&str] = &[
        "name",
        "description",
        "cpus",
        "freq_domains",
        "hz",
        "freq_invariant",
        "energy_model",
        "numa_distance",
        "node_reclaim_distance",
        "layout",
        "costs",
        "memory",
        "kernel",
    ];
    let t = root.table(KEYS, "of the platform's fields")?;
    let name = t.req("name", NAME)?.str(NAME)?.to_string();
    let description = match t.get("description") {
        Some(at) => at.str(DESCRIPTION)?.to_string(),
        None => String::new(),
    };
    let numa_distance = match t.get("numa_distance") {
        Some(at) => at.list(DISTANCES, |row| row.list(DISTANCES, |d| d.int(DISTANCE)))?,
        None => Vec::new(),
    };
    let node_reclaim_distance = optional(&t, "node_reclaim_distance")
        .map(|at| at.int(DISTANCE))
        .transpose()?;
    let (cpus, freq_domains) = match t.get("layout") {
        Some(layout) => {
            for key in ["cpus", "freq_domains"] {
                if t.has(key) {
                    return Err(t.error_at(
                        key,
                        "either a layout or cpus and freq_domains",
                        format!("both layout and {key}"),
                    ));
                }
            }
            self::layout(&layout, &t, numa_distance.len())?
        }
        None => {
            let cpus = t.req("cpus", CPUS)?.list(CPUS, |at| cpu(at, true))?;
            let freq_domains = t
                .req("freq_domains", DOMAINS)?
                .list(DOMAINS, |at| domain(at, true))?;
            (cpus, freq_domains)
        }
    };
    let hz = optional(&t, "hz").map(|at| at.int(HZ)).transpose()?;
    let flag = |key: &str| t.get(key).map_or(Ok(true), |at| at.bool(BOOL));
    let freq_invariant = flag("freq_invariant")?;
    let energy_model = flag("energy_model")?;
    // Missing costs come from the uarch of the capacity-1024 CPU at its top frequency.
    let fastest = cpus
        .iter()
        .enumerate()
        .max_by_key(|(i, c)| (c.capacity_orig, std::cmp::Reverse(*i)));
    let default_costs = fastest.map_or(Costs::for_uarch("", 1_000_000), |(_, c)| {
        let max_khz = freq_domains
            .get(c.freq_domain)
            .and_then(|d| d.opps.last())
            .map_or(1_000_000, |o| o.freq_khz);
        Costs::for_uarch(&c.uarch, max_khz)
    });
    let costs = override_fields(t.get("costs"), default_costs, COST)?;
    let memory = override_fields(t.get("memory"), Memory::fallback(), MEMORY)?;
    let kernel = match t.get("kernel") {
        Some(at) => kernel(&at)?,
        None => BTreeMap::new(),
    };
    Ok(Platform {
        name,
        description,
        cpus,
        freq_domains,
        hz,
        energy_model,
        freq_invariant,
        numa_distance,
        node_reclaim_distance,
        costs,
        memory,
        kernel,
    })
}

/// A `[kernel]` table: switches as an experiment's `[set]` writes them (dotted keys, values
/// as strings, integers or booleans), each checked as `--set` checks it. Costs, memory and
/// the tick have their own tables and keys; cgroup writes are a run's, not a machine's.
fn kernel(at: &At) -> Result<BTreeMap<String, String>, InputError> {
    let table = at.any_table("a table of kernel switches")?;
    let mut probe = crate::kernel::Variant::default();
    let mut out = BTreeMap::new();
    for (key, value) in table.flatten() {
        let own = match key.split('.').next() {
            Some("cost") => Some("the [costs] table"),
            Some("memory") => Some("the [memory] table"),
            Some("cgroup") => Some("an experiment (a cgroup write is a run's, not a machine's)"),
            _ if key == "config.HZ" => Some("the platform's `hz` key"),
            _ => None,
        };
        if let Some(own) = own {
            return Err(value.error(
                format!("a kernel switch (`{key}` belongs in {own})"),
                format!("`{key}`"),
            ));
        }
        let text = match (value.str(""), value.bool(""), value.int::<i128>("")) {
            (Ok(s), _, _) => s.to_string(),
            (_, Ok(b), _) => b.to_string(),
            (_, _, Ok(i)) => i.to_string(),
            _ => return Err(value.mismatch(SWITCH_VALUE)),
        };
        probe
            .set(&key, &text, value.file())
            .map_err(|e| value.error(e.expected, e.found))?;
        out.insert(key, text);
    }
    Ok(out)
}

/// A table of non-negative integers over the fields of `default` (a flat serde struct): the
/// keys it has replace the defaults.
fn override_fields<T: serde::Serialize + serde::de::DeserializeOwned>(
    at: Option<At>,
    default: T,
    expected: &str,
) -> Result<T, InputError> {
    let serde_json::Value::Object(mut fields) =
        serde_json::to_value(&default).expect("a flat struct of integers serializes")
    else {
        unreachable!("a struct serializes to an object")
    };
    if let Some(at) = at {
        let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
        let t = at.table(&keys, "of costs")?;
        for (key, value) in t.entries() {
            let x: u64 = value.int(expected)?;
            fields.insert(key.to_string(), x.into());
        }
    }
    Ok(serde_json::from_value(serde_json::Value::Object(fields))
        .expect("every field is an integer"))
}

/// A `[layout]` table: a regular server (sockets × cores × threads, cores sharing an LLC in
/// groups, NUMA nodes per socket) expanded into CPUs and cpufreq policies, numbered as Linux
/// numbers x86 servers (firmware lists the first thread of every core, package by package,
/// then the second threads: CPU n and n + cores are siblings). `top` is the platform's
/// table, for the error about its `numa_distance`.
fn layout(
    at: &At,
    top: &schedlab_base::place::Table,
    nr_nodes: usize,
) -> Result<(Vec<Cpu>, Vec<FreqDomain>), InputError> {
    const KEYS: &[&str] = &[
        "sockets",
        "cores_per_socket",
        "threads_per_core",
        "cores_per_llc",
        "nodes_per_socket",
        "policy_per",
        "cpu",
        "freq_domain",
    ];
    let t = at.table(KEYS, "of the server's shape")?;
    let count = |key: &str| -> Result<usize, InputError> {
        let n = t.req(key, COUNT)?.int_in(1, MAX_CPUS as i128, "a count")?;
        Ok(n as usize)
    };
    let sockets = count("sockets")?;
    let cores = count("cores_per_socket")?;
    let threads = count("threads_per_core")?;
    let per_llc = count("cores_per_llc")?;
    let nps = match t.get("nodes_per_socket") {
        Some(_) => count("nodes_per_socket")?,
        None => 1,
    };
    for (key, n) in [("cores_per_llc", per_llc), ("nodes_per_socket", nps)] {
        if cores % n != 0 {
            let expected = format!("a divisor of cores_per_socket ({cores})");
            return Err(t.error_at(key, expected, n.to_string()));
        }
    }
    if (cores / nps) % per_llc != 0 {
        let expected = format!(
            "LLCs that do not straddle nodes ({} cores per node)",
            cores / nps
        );
        return Err(t.error_at("cores_per_llc", expected, per_llc.to_string()));
    }
    let product = sockets
        .checked_mul(cores)
        .and_then(|n| n.checked_mul(threads));
    let nr_cpus = match product {
        Some(n) if n <= MAX_CPUS => n,
        _ => {
            let found = product.map_or("more than can be counted".to_string(), |n| {
                format!("{n} CPUs")
            });
            return Err(t.at().error(
                format!("at most {MAX_CPUS} CPUs"),
                format!("{sockets} × {cores} × {threads} = {found}"),
            ));
        }
    };
    if sockets * nps > 1 && nr_nodes != sockets * nps {
        return Err(top.error_at(
            "numa_distance",
            format!(
                "a {0} × {0} table, one row per node (sockets × nodes_per_socket)",
                sockets * nps
            ),
            format!("{nr_nodes} rows"),
        ));
    }
    let per_package = match t.get("policy_per") {
        None => false,
        Some(at) => at.choice(&["cpu", "package"], POLICY_PER)? == "package",
    };
    let template = cpu(&t.req("cpu", CPU)?, false)?;
    let domain = domain(&t.req("freq_domain", DOMAIN)?, false)?;
    let total_cores = sockets * cores;
    let mut cpus = Vec::with_capacity(nr_cpus);
    for id in 0..nr_cpus {
        let core = id % total_cores;
        let package = core / cores;
        cpus.push(Cpu {
            freq_domain: if per_package { package } else { id },
            llc: core / per_llc,
            smt_siblings: (0..threads)
                .map(|k| k * total_cores + core)
                .filter(|&s| s != id)
                .collect(),
            package,
            node: if sockets * nps > 1 {
                package * nps + (core % cores) / (cores / nps)
            } else {
                0
            },
            ..template.clone()
        });
    }
    let freq_domains = if per_package {
        (0..sockets)
            .map(|s| FreqDomain {
                cpus: (0..nr_cpus).filter(|&c| cpus[c].package == s).collect(),
                ..domain.clone()
            })
            .collect()
    } else {
        (0..nr_cpus)
            .map(|c| FreqDomain {
                cpus: vec![c],
                ..domain.clone()
            })
            .collect()
    };
    Ok((cpus, freq_domains))
}

/// A CPU entry; `placed`: with the keys that place it (freq_domain, llc, smt_siblings,
/// package, node), which a layout computes instead (its `cpu` template).
fn cpu(at: &At, placed: bool) -> Result<Cpu, InputError> {
    const KEYS: &[&str] = &[
        "uarch",
        "capacity_orig",
        "idle_states",
        "freq_domain",
        "llc",
        "smt_siblings",
        "package",
        "node",
    ];
    let t = at.table(if placed { KEYS } else { &KEYS[..3] }, "of a CPU's fields")?;
    let uarch = t.req("uarch", UARCH)?.str(UARCH)?.to_string();
    let capacity_orig = t.req("capacity_orig", CAPACITY)?.int(CAPACITY)?;
    let (freq_domain, llc) = if placed {
        (
            t.req("freq_domain", DOMAIN_INDEX)?.int(DOMAIN_INDEX)?,
            t.req("llc", LLC)?.int(LLC)?,
        )
    } else {
        (0, 0)
    };
    let id = |key: &str, expected: &str| t.get(key).map_or(Ok(0), |at| at.int(expected));
    let package = id("package", PACKAGE)?;
    let node = id("node", NODE)?;
    let smt_siblings = match t.get("smt_siblings") {
        Some(at) => at.list(SIBLINGS, |c| c.int(CPU_ID))?,
        None => Vec::new(),
    };
    let idle_states = match t.get("idle_states") {
        Some(at) => at.list(IDLE_STATES, idle_state)?,
        None => Vec::new(),
    };
    Ok(Cpu {
        uarch,
        capacity_orig,
        freq_domain,
        llc,
        smt_siblings,
        package,
        node,
        idle_states,
    })
}

/// A frequency domain; `with_cpus`: with its `cpus` key (a layout computes them).
fn domain(at: &At, with_cpus: bool) -> Result<FreqDomain, InputError> {
    const KEYS: &[&str] = &[
        "opps",
        "transition_latency_ns",
        "transition_delay_us",
        "fast_switch",
        "freq_table",
        "dvfs_possible_from_any_cpu",
        "cluster_idle_states",
        "cpus",
    ];
    let keys = if with_cpus {
        KEYS
    } else {
        &KEYS[..KEYS.len() - 1]
    };
    let t = at.table(keys, "of a cpufreq policy's fields")?;
    let cpus = if with_cpus {
        t.req("cpus", DOMAIN_CPUS)?
            .list(DOMAIN_CPUS, |c| c.int(CPU_ID))?
    } else {
        Vec::new()
    };
    let opps = t.req("opps", OPPS)?.list(OPPS, opp)?;
    let transition_latency_ns = t
        .get("transition_latency_ns")
        .map_or(Ok(0), |at| at.int(LATENCY))?;
    let transition_delay_us = optional(&t, "transition_delay_us")
        .map(|at| at.int(DELAY))
        .transpose()?;
    let cluster_idle_states = match t.get("cluster_idle_states") {
        Some(at) => at.list(IDLE_STATES, idle_state)?,
        None => Vec::new(),
    };
    let flag = |key: &str| t.get(key).map_or(Ok(true), |at| at.bool(BOOL));
    Ok(FreqDomain {
        cpus,
        opps,
        transition_latency_ns,
        transition_delay_us,
        fast_switch: flag("fast_switch")?,
        freq_table: flag("freq_table")?,
        dvfs_possible_from_any_cpu: flag("dvfs_possible_from_any_cpu")?,
        cluster_idle_states,
    })
}

fn opp(at: &At) -> Result<Opp, InputError> {
    let t = at.table(
        &["freq_khz", "power_mw", "cluster_power_mw"],
        "of an OPP's fields",
    )?;
    Ok(Opp {
        freq_khz: t.req("freq_khz", FREQ)?.int(FREQ)?,
        power_mw: t.req("power_mw", POWER)?.float(POWER)?,
        cluster_power_mw: t
            .get("cluster_power_mw")
            .map_or(Ok(0.0), |at| at.float(POWER))?,
    })
}

fn idle_state(at: &At) -> Result<IdleState, InputError> {
    let t = at.table(
        &[
            "name",
            "power_mw",
            "exit_latency_ns",
            "target_residency_ns",
            "polling",
            "typical_exit_ns",
        ],
        "of an idle state's fields",
    )?;
    let exit_latency_ns = t.req("exit_latency_ns", EXIT_LATENCY)?.int(EXIT_LATENCY)?;
    Ok(IdleState {
        name: t.req("name", STATE_NAME)?.str(STATE_NAME)?.to_string(),
        power_mw: t.req("power_mw", POWER)?.float(POWER)?,
        exit_latency_ns,
        target_residency_ns: t
            .get("target_residency_ns")
            .map_or(Ok(exit_latency_ns), |at| at.int(RESIDENCY))?,
        polling: t.get("polling").map_or(Ok(false), |at| at.bool(BOOL))?,
        typical_exit_ns: optional(&t, "typical_exit_ns")
            .map(|at| at.int(EXIT_LATENCY))
            .transpose()?,
    })
}

// What each field holds, as error messages say it.
const NAME: &str = "the platform's name (a string)";
const DESCRIPTION: &str = "a description (a string)";
const CPUS: &str = "an array of CPUs";
const DOMAINS: &str = "an array of frequency domains";
const HZ: &str = "CONFIG_HZ (an integer)";
const BOOL: &str = "true or false";
const UARCH: &str = "the micro-architecture's name (a string)";
const CAPACITY: &str = "a capacity from 1 to 1024";
const DOMAIN_INDEX: &str = "the index of a frequency domain (an integer from 0)";
const LLC: &str = "a last-level-cache id (an integer from 0)";
const SIBLINGS: &str = "an array of CPU ids";
const CPU_ID: &str = "a CPU id (an integer from 0)";
const IDLE_STATES: &str = "an array of idle states, shallowest first";
const DOMAIN_CPUS: &str = "an array of the CPU ids in this frequency domain";
const OPPS: &str = "an array of OPPs, ascending by frequency";
const LATENCY: &str = "a transition latency in ns (an integer from 0)";
const DELAY: &str = "a transition delay in us (an integer from 0)";
const FREQ: &str = "a frequency in kHz (a positive integer)";
const POWER: &str = "a power in mW (a number from 0 to 65535, EM_MAX_POWER)";
const STATE_NAME: &str = "the idle state's name (a string)";
const EXIT_LATENCY: &str = "an exit latency in ns (an integer from 0)";
const DISTANCES: &str = "an array of rows of node distances (the ACPI SLIT)";
const DISTANCE: &str = "a node distance (an integer, 10 for a node to itself)";
const PACKAGE: &str = "a package (socket) id (an integer from 0)";
const NODE: &str = "a NUMA node id (an integer from 0)";
const COUNT: &str = "a count (a positive integer)";
const POLICY_PER: &str = "\"cpu\" or \"package\" (one cpufreq policy per CPU or per package)";
const CPU: &str = "a CPU (uarch, capacity_orig, idle_states)";
const DOMAIN: &str = "a cpufreq policy (opps and the driver's fields, without cpus)";
const RESIDENCY: &str = "a target residency in ns (an integer from 0)";
const COST: &str = "a cost in ns at capacity 1024 (an integer from 0)";
const MEMORY: &str = "a size in KiB or a bandwidth in MB/s (an integer from 0)";
const SWITCH_VALUE: &str = "a switch's value (a string, an integer or a boolean)";

/// Checks that `p` describes hardware the simulated kernel can run on; the first problem
/// found is reported at its key path.
fn validate(p: &Platform, file: &str) -> Result<(), InputError> {
    let fail = |place: String, expected: String, found: String| {
        Err(InputError::new(file, place, expected, found))
    };
    if p.name.trim().is_empty() {
        return fail(
            "name".into(),
            "a non-empty name".into(),
            "an empty string".into(),
        );
    }
    let nr_cpus = p.cpus.len();
    if nr_cpus == 0 {
        return fail("cpus".into(), "at least one CPU".into(), "none".into());
    }
    if nr_cpus > MAX_CPUS {
        return fail(
            "cpus".into(),
            format!("at most {MAX_CPUS} CPUs"),
            format!("{nr_cpus} CPUs"),
        );
    }
    let nr_domains = p.freq_domains.len();
    if nr_domains == 0 {
        return fail(
            "freq_domains".into(),
            "at least one frequency domain".into(),
            "none".into(),
        );
    }
    if let Some(hz) = p.hz {
        if !HZ_RANGE.contains(&hz) {
            let expected = format!("CONFIG_HZ from {} to {}", HZ_RANGE.start(), HZ_RANGE.end());
            return fail("hz".into(), expected, hz.to_string());
        }
    }

    // A thread looping on requests that complete at once must still see time pass, and a
    // sender whose datagrams are dropped loops too: those costs are at least 1 ns.
    let c = &p.costs;
    for (key, value) in [
        ("syscall_ns", c.syscall_ns),
        ("pipe_op_ns", c.ipc.pipe_op_ns),
        ("unix_op_ns", c.ipc.unix_op_ns),
        ("inet_op_ns", c.ipc.inet_op_ns),
        ("tcp_send_ns", c.ipc.tcp_send_ns),
    ] {
        if value == 0 {
            return fail(format!("costs.{key}"), "at least 1 ns".into(), "0".into());
        }
    }
    for (key, value) in [
        ("llc_mb_s", p.memory.llc_mb_s),
        ("dram_mb_s", p.memory.dram_mb_s),
    ] {
        if value == 0 {
            return fail(
                format!("memory.{key}"),
                "a bandwidth of at least 1 MB/s".into(),
                "0".into(),
            );
        }
    }

    for i in 0..nr_cpus {
        validate_cpu(p, i, file)?;
    }
    let biggest = (0..nr_cpus)
        .max_by_key(|&i| (p.cpus[i].capacity_orig, std::cmp::Reverse(i)))
        .unwrap_or(0);
    if p.cpus[biggest].capacity_orig != SCHED_CAPACITY_SCALE {
        return fail(
            format!("cpus[{biggest}].capacity_orig"),
            format!(
                "the biggest CPU to have capacity {SCHED_CAPACITY_SCALE} (SCHED_CAPACITY_SCALE)"
            ),
            p.cpus[biggest].capacity_orig.to_string(),
        );
    }

    validate_numa(p, file)?;

    for d in 0..nr_domains {
        validate_domain(p, d, file)?;
    }
    Ok(())
}

/// CPU `i`'s capacity, frequency domain, LLC, node, siblings and idle states.
fn validate_cpu(p: &Platform, i: usize, file: &str) -> Result<(), InputError> {
    let fail = |place: String, expected: String, found: String| {
        Err(InputError::new(file, place, expected, found))
    };
    let (cpu, nr_cpus, nr_domains) = (&p.cpus[i], p.cpus.len(), p.freq_domains.len());
    let at = |field: &str| format!("cpus[{i}].{field}");
    if !(1..=SCHED_CAPACITY_SCALE).contains(&cpu.capacity_orig) {
        return fail(
            at("capacity_orig"),
            CAPACITY.into(),
            cpu.capacity_orig.to_string(),
        );
    }
    let Some(domain) = p.freq_domains.get(cpu.freq_domain) else {
        let expected = format!(
            "the index of one of the {nr_domains} frequency domains (0 to {})",
            nr_domains - 1
        );
        return fail(at("freq_domain"), expected, cpu.freq_domain.to_string());
    };
    if !domain.cpus.contains(&i) {
        return fail(
            at("freq_domain"),
            format!("a frequency domain whose cpus include CPU {i}"),
            format!(
                "freq_domains[{}] with cpus {:?}",
                cpu.freq_domain, domain.cpus
            ),
        );
    }
    if cpu.llc >= nr_cpus {
        return fail(
            at("llc"),
            format!("an LLC id below the number of CPUs ({nr_cpus})"),
            cpu.llc.to_string(),
        );
    }
    if cpu.node >= p.nr_nodes() {
        let expected = match p.numa_distance.len() {
            0 => "node 0 (the platform has no numa_distance table)".to_string(),
            n => format!("a node below {n}, the rows of numa_distance"),
        };
        return fail(at("node"), expected, cpu.node.to_string());
    }
    validate_siblings(p, i, file)?;
    validate_idle_states(&cpu.idle_states, &at("idle_states"), file)?;
    Ok(())
}

/// Frequency domain `d`'s CPUs, OPPs and cluster idle states.
fn validate_domain(p: &Platform, d: usize, file: &str) -> Result<(), InputError> {
    let fail = |place: String, expected: String, found: String| {
        Err(InputError::new(file, place, expected, found))
    };
    let (domain, nr_cpus) = (&p.freq_domains[d], p.cpus.len());
    let at = |field: &str| format!("freq_domains[{d}].{field}");
    if domain.cpus.is_empty() {
        return fail(at("cpus"), "at least one CPU".into(), "none".into());
    }
    let mut seen = BTreeSet::new();
    for (k, &c) in domain.cpus.iter().enumerate() {
        let place = format!("freq_domains[{d}].cpus[{k}]");
        let Some(cpu) = p.cpus.get(c) else {
            return fail(place, format!("a CPU id below {nr_cpus}"), c.to_string());
        };
        if !seen.insert(c) {
            return fail(
                place,
                "each CPU listed once".into(),
                format!("CPU {c} again"),
            );
        }
        if cpu.freq_domain != d {
            return fail(
                place,
                format!("a CPU whose freq_domain is {d}"),
                format!("CPU {c}, whose freq_domain is {}", cpu.freq_domain),
            );
        }
    }
    if domain.opps.is_empty() {
        return fail(at("opps"), "at least one OPP".into(), "none".into());
    }
    for (k, opp) in domain.opps.iter().enumerate() {
        let at = |field: &str| format!("freq_domains[{d}].opps[{k}].{field}");
        let floor = if k == 0 {
            0
        } else {
            domain.opps[k - 1].freq_khz
        };
        if opp.freq_khz <= floor {
            let expected = if k == 0 {
                FREQ.to_string()
            } else {
                format!("a frequency above the previous OPP's {floor} kHz (OPPs ascend strictly)")
            };
            return fail(at("freq_khz"), expected, opp.freq_khz.to_string());
        }
        check_power(opp.power_mw, at("power_mw"), file)?;
        check_power(opp.cluster_power_mw, at("cluster_power_mw"), file)?;
    }
    validate_idle_states(
        &domain.cluster_idle_states,
        &at("cluster_idle_states"),
        file,
    )?;
    Ok(())
}

/// The SLIT is square, 10 on its diagonal and above it elsewhere, and symmetric (the
/// kernel's `sched_init_numa` assumes node_distance(a, b) == node_distance(b, a)); every
/// node has CPUs, and an LLC stays within one node and one package.
fn validate_numa(p: &Platform, file: &str) -> Result<(), InputError> {
    let fail = |place: String, expected: String, found: String| {
        Err(InputError::new(file, place, expected, found))
    };
    let n = p.numa_distance.len();
    for (a, row) in p.numa_distance.iter().enumerate() {
        if row.len() != n {
            return fail(
                format!("numa_distance[{a}]"),
                format!("{n} distances (the table is square)"),
                format!("{} distances", row.len()),
            );
        }
        for (b, &d) in row.iter().enumerate() {
            let place = format!("numa_distance[{a}][{b}]");
            if a == b && d != LOCAL_DISTANCE {
                return fail(
                    place,
                    format!("{LOCAL_DISTANCE} (LOCAL_DISTANCE)"),
                    d.to_string(),
                );
            }
            if a != b && d <= LOCAL_DISTANCE {
                return fail(
                    place,
                    format!("a distance above {LOCAL_DISTANCE} between two nodes"),
                    d.to_string(),
                );
            }
            if d != p.numa_distance[b][a] {
                return fail(
                    place,
                    format!(
                        "{}, as numa_distance[{b}][{a}] (distances are symmetric)",
                        p.numa_distance[b][a]
                    ),
                    d.to_string(),
                );
            }
        }
    }
    for node in 0..p.nr_nodes() {
        if !p.cpus.iter().any(|c| c.node == node) {
            return fail(
                format!("numa_distance[{node}]"),
                format!("a node some CPU is on (node {node})"),
                "a node without CPUs".into(),
            );
        }
    }
    for (i, cpu) in p.cpus.iter().enumerate() {
        if let Some(j) = p.cpus[..i]
            .iter()
            .position(|o| o.llc == cpu.llc && (o.node != cpu.node || o.package != cpu.package))
        {
            return fail(
                format!("cpus[{i}].llc"),
                format!(
                    "an LLC within one node and package (CPU {j} shares LLC {} on another)",
                    cpu.llc
                ),
                cpu.llc.to_string(),
            );
        }
    }
    Ok(())
}

/// SMT siblings are the other threads of one core: every thread of the core lists the same
/// set, and threads share the core's cache and capacity.
fn validate_siblings(p: &Platform, i: usize, file: &str) -> Result<(), InputError> {
    let cpu = &p.cpus[i];
    let place = format!("cpus[{i}].smt_siblings");
    let mut core = BTreeSet::from([i]);
    for (k, &s) in cpu.smt_siblings.iter().enumerate() {
        let at = format!("{place}[{k}]");
        if s >= p.cpus.len() {
            return Err(InputError::new(
                file,
                at,
                format!("a CPU id below {}", p.cpus.len()),
                s.to_string(),
            ));
        }
        if !core.insert(s) {
            let found = if s == i {
                "the CPU itself".to_string()
            } else {
                format!("CPU {s} again")
            };
            return Err(InputError::new(file, at, "another CPU, listed once", found));
        }
    }
    for &s in &cpu.smt_siblings {
        let sibling = &p.cpus[s];
        let theirs: BTreeSet<usize> = sibling.smt_siblings.iter().copied().chain([s]).collect();
        if theirs != core {
            let expected: Vec<usize> = core.iter().copied().filter(|&c| c != s).collect();
            return Err(InputError::new(
                file,
                format!("cpus[{s}].smt_siblings"),
                format!("{expected:?}, as CPU {i} lists CPU {s} among its SMT siblings"),
                format!("{:?}", sibling.smt_siblings),
            ));
        }
        if sibling.llc != cpu.llc {
            return Err(InputError::new(
                file,
                format!("cpus[{s}].llc"),
                format!("{}, the LLC of its SMT sibling CPU {i}", cpu.llc),
                sibling.llc.to_string(),
            ));
        }
        if sibling.capacity_orig != cpu.capacity_orig {
            return Err(InputError::new(
                file,
                format!("cpus[{s}].capacity_orig"),
                format!(
                    "{}, the capacity of its SMT sibling CPU {i}",
                    cpu.capacity_orig
                ),
                sibling.capacity_orig.to_string(),
            ));
        }
    }
    Ok(())
}

/// Idle states are listed shallowest first, so exit latencies never decrease; names identify
/// states in traces and plat_info, so they are unique.
fn validate_idle_states(states: &[IdleState], place: &str, file: &str) -> Result<(), InputError> {
    for (k, state) in states.iter().enumerate() {
        let at = |field: &str| format!("{place}[{k}].{field}");
        if state.name.trim().is_empty() {
            return Err(InputError::new(
                file,
                at("name"),
                "a non-empty name",
                "an empty string",
            ));
        }
        if states[..k].iter().any(|s| s.name == state.name) {
            return Err(InputError::new(
                file,
                at("name"),
                "a name not used by an earlier state",
                format!("{:?} again", state.name),
            ));
        }
        check_power(state.power_mw, at("power_mw"), file)?;
        if let Some(typical) = state.typical_exit_ns {
            if typical > state.exit_latency_ns {
                return Err(InputError::new(
                    file,
                    at("typical_exit_ns"),
                    format!(
                        "at most the state's exit_latency_ns, {} (the worst case)",
                        state.exit_latency_ns
                    ),
                    typical.to_string(),
                ));
            }
        }
        if let Some(prev) = k.checked_sub(1).map(|j| &states[j]) {
            if state.exit_latency_ns < prev.exit_latency_ns {
                return Err(InputError::new(
                    file,
                    at("exit_latency_ns"),
                    format!(
                        "at least the previous state's {} ns (states are listed shallowest first)",
                        prev.exit_latency_ns
                    ),
                    state.exit_latency_ns.to_string(),
                ));
            }
        }
    }
    Ok(())
}

/// `EM_MAX_POWER` (v6.1 include/linux/energy_model.h): the most mW `em_create_perf_table()`
/// accepts for a performance state; schedlab bounds every power by it.
const MAX_POWER_MW: f64 = 65_535.0;

fn check_power(power_mw: f64, place: String, file: &str) -> Result<(), InputError> {
    if (0.0..=MAX_POWER_MW).contains(&power_mw) {
        Ok(())
    } else {
        Err(InputError::new(file, place, POWER, power_mw.to_string()))
    }
}

//! Platform files: the fields of [`Platform`] as TOML or JSON (SPEC §1), read into a
//! `Platform` and checked against what a kernel could boot on.
//!
//! The text is first parsed into a generic tree and then walked by hand rather than handed to
//! serde, so that every mistake is reported at its key path (`freq_domains[1].opps[3].freq_khz`)
//! in both formats, with what was expected there and what was found. The accepted keys and
//! their defaults are those of the serde derives in `mod.rs`; `tests/it/platform.rs` checks that
//! both readings of every preset agree.

use super::{Costs, Cpu, FreqDomain, IdleState, Memory, Opp, Platform, SCHED_CAPACITY_SCALE};
use schedlab_base::error::InputError;
use std::collections::BTreeSet;
use std::path::Path;

/// The largest platform schedlab accepts: what a CPU mask holds.
const MAX_CPUS: usize = crate::workload::NR_CPUS;

/// `LOCAL_DISTANCE`, the SLIT's value for a node to itself (include/linux/topology.h).
const LOCAL_DISTANCE: u32 = 10;

/// The CONFIG_HZ range that Kconfig offers across architectures (24 to 1200).
const HZ_RANGE: std::ops::RangeInclusive<u32> = 24..=1200;

/// Reads and checks the platform file at `path`.
pub fn load_file(path: &Path) -> Result<Platform, InputError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        InputError::new(
            &file,
            "file",
            "a readable UTF-8 platform file",
            e.to_string(),
        )
    })?;
    parse_platform(&text, &file)
}

/// Parses platform `text` (TOML, or JSON when it starts with `{` or `file` ends in `.json`)
/// and checks it; `file` names the source in errors.
pub fn parse_platform(text: &str, file: &str) -> Result<Platform, InputError> {
    let json = file.ends_with(".json") || text.trim_start().starts_with('{');
    let root = if json {
        parse_json(text, file)?
    } else {
        parse_toml(text, file)?
    };
    let platform = Reader { file, json }.platform(&root)?;
    validate(&platform, file)?;
    Ok(platform)
}

/// A TOML or JSON document reduced to what can appear in a platform file.
enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// A TOML date or time, which no platform field accepts.
    Datetime(String),
    Array(Vec<Node>),
    Table(Vec<(String, Node)>),
}

fn parse_toml(text: &str, file: &str) -> Result<Node, InputError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let place = match e.span() {
            Some(span) => line_column(text, span.start),
            None => "document".to_string(),
        };
        syntax_error(file, place, "TOML", e.message())
    })?;
    Ok(from_toml(toml::Value::Table(table)))
}

fn from_toml(value: toml::Value) -> Node {
    match value {
        toml::Value::String(s) => Node::Str(s),
        toml::Value::Integer(i) => Node::Int(i.into()),
        toml::Value::Float(f) => Node::Float(f),
        toml::Value::Boolean(b) => Node::Bool(b),
        toml::Value::Datetime(d) => Node::Datetime(d.to_string()),
        toml::Value::Array(items) => Node::Array(items.into_iter().map(from_toml).collect()),
        toml::Value::Table(table) => {
            Node::Table(table.into_iter().map(|(k, v)| (k, from_toml(v))).collect())
        }
    }
}

fn parse_json(text: &str, file: &str) -> Result<Node, InputError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let place = format!("line {} column {}", e.line(), e.column());
        // serde_json appends the position to its message; it is in `place` already.
        let message = e.to_string();
        let message = message
            .strip_suffix(&format!(" at {place}"))
            .unwrap_or(&message);
        syntax_error(file, place, "JSON", message)
    })?;
    Ok(from_json(value))
}

fn from_json(value: serde_json::Value) -> Node {
    match value {
        serde_json::Value::Null => Node::Null,
        serde_json::Value::Bool(b) => Node::Bool(b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Node::Int(i.into())
            } else if let Some(u) = n.as_u64() {
                Node::Int(u.into())
            } else {
                Node::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Node::Str(s),
        serde_json::Value::Array(items) => Node::Array(items.into_iter().map(from_json).collect()),
        serde_json::Value::Object(map) => {
            Node::Table(map.into_iter().map(|(k, v)| (k, from_json(v))).collect())
        }
    }
}

/// `line L column C` (both from 1) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> String {
    let (mut line, mut column) = (1, 1);
    for (_, c) in text.char_indices().take_while(|&(i, _)| i < offset) {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    format!("line {line} column {column}")
}

/// A parser's complaint as an [`InputError`]. Parser messages often carry a line saying
/// what they expected (``expected `,` or `}` ``); that becomes `expected`, the rest `found`.
fn syntax_error(file: &str, place: String, format: &str, message: &str) -> InputError {
    let mut expected = None;
    let mut found = Vec::new();
    for line in message.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.strip_prefix("expected ") {
            Some(what) if expected.is_none() => {
                expected = Some(format!("{what} ({format} syntax)"))
            }
            _ => found.push(line),
        }
    }
    let found = if found.is_empty() {
        "something else".to_string()
    } else {
        found.join("; ")
    };
    let expected = expected.unwrap_or_else(|| format!("valid {format}"));
    InputError::new(file, place, expected, found)
}

/// Walks a parsed document into a [`Platform`], naming the key path of anything wrong.
struct Reader<'a> {
    file: &'a str,
    /// Whether the document is JSON, so that errors say "object" rather than "table".
    json: bool,
}

/// The entries of one table, and where it sits in the document.
struct Table<'n> {
    place: String,
    entries: &'n [(String, Node)],
}

impl<'n> Table<'n> {
    fn at(&self, key: &str) -> String {
        if self.place.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.place)
        }
    }

    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl Reader<'_> {
    fn error(
        &self,
        place: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> InputError {
        let place = if place.is_empty() { "top level" } else { place };
        InputError::new(self.file, place, expected, found)
    }

    fn mismatch(&self, place: &str, expected: &str, node: &Node) -> InputError {
        self.error(place, expected, self.describe(node))
    }

    /// How `node` reads in an error message.
    fn describe(&self, node: &Node) -> String {
        match node {
            Node::Null => "null".to_string(),
            Node::Bool(b) => format!("the boolean {b}"),
            Node::Int(i) => format!("the integer {i}"),
            Node::Float(f) => format!("the number {f}"),
            Node::Str(s) if s.chars().count() > 40 => {
                format!("the string {:?}…", s.chars().take(40).collect::<String>())
            }
            Node::Str(s) => format!("the string {s:?}"),
            Node::Datetime(d) => format!("the date-time {d}"),
            Node::Array(items) => format!("an array of {} items", items.len()),
            Node::Table(_) if self.json => "an object".to_string(),
            Node::Table(_) => "a table".to_string(),
        }
    }

    fn table<'n>(
        &self,
        node: &'n Node,
        place: String,
        keys: &[&str],
    ) -> Result<Table<'n>, InputError> {
        let Node::Table(entries) = node else {
            let what = if self.json { "an object" } else { "a table" };
            return Err(self.mismatch(
                &place,
                &format!("{what} with keys {}", keys.join(", ")),
                node,
            ));
        };
        let table = Table { place, entries };
        if let Some((key, _)) = entries.iter().find(|(k, _)| !keys.contains(&k.as_str())) {
            return Err(self.error(
                &table.at(key),
                format!("one of the keys {}", keys.join(", ")),
                format!("the unknown key {key:?}"),
            ));
        }
        Ok(table)
    }

    fn required<'n>(
        &self,
        table: &Table<'n>,
        key: &str,
        expected: &str,
    ) -> Result<&'n Node, InputError> {
        table
            .get(key)
            .ok_or_else(|| self.error(&table.at(key), expected, "nothing: the key is missing"))
    }

    fn string(&self, node: &Node, place: &str, expected: &str) -> Result<String, InputError> {
        match node {
            Node::Str(s) => Ok(s.clone()),
            other => Err(self.mismatch(place, expected, other)),
        }
    }

    fn boolean(&self, node: &Node, place: &str, expected: &str) -> Result<bool, InputError> {
        match node {
            Node::Bool(b) => Ok(*b),
            other => Err(self.mismatch(place, expected, other)),
        }
    }

    /// An integer that fits `T`; range rules beyond the type are `validate`'s job.
    fn int<T: TryFrom<i128>>(
        &self,
        node: &Node,
        place: &str,
        expected: &str,
    ) -> Result<T, InputError> {
        match node {
            Node::Int(i) => {
                T::try_from(*i).map_err(|_| self.error(place, expected, format!("the integer {i}")))
            }
            other => Err(self.mismatch(place, expected, other)),
        }
    }

    /// A number: integers are accepted where a fraction is allowed (`power_mw = 33`).
    fn number(&self, node: &Node, place: &str, expected: &str) -> Result<f64, InputError> {
        match node {
            Node::Int(i) => Ok(*i as f64),
            Node::Float(f) => Ok(*f),
            other => Err(self.mismatch(place, expected, other)),
        }
    }

    fn array<'n>(
        &self,
        node: &'n Node,
        place: &str,
        expected: &str,
    ) -> Result<&'n [Node], InputError> {
        match node {
            Node::Array(items) => Ok(items),
            other => Err(self.mismatch(place, expected, other)),
        }
    }

    /// Each item of an array, read by `item` at its own place (`cpus[3]`).
    fn list<T>(
        &self,
        node: &Node,
        place: &str,
        expected: &str,
        item: impl Fn(&Node, String) -> Result<T, InputError>,
    ) -> Result<Vec<T>, InputError> {
        self.array(node, place, expected)?
            .iter()
            .enumerate()
            .map(|(i, n)| item(n, format!("{place}[{i}]")))
            .collect()
    }

    fn platform(&self, root: &Node) -> Result<Platform, InputError> {
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
        ];
        let t = self.table(root, String::new(), KEYS)?;
        let name = self.string(self.required(&t, "name", NAME)?, &t.at("name"), NAME)?;
        let description = match t.get("description") {
            Some(n) => self.string(n, &t.at("description"), DESCRIPTION)?,
            None => String::new(),
        };
        let numa_distance = match t.get("numa_distance") {
            Some(n) => self.list(n, &t.at("numa_distance"), DISTANCES, |row, p| {
                self.list(row, &p, DISTANCES, |d, p| self.int(d, &p, DISTANCE))
            })?,
            None => Vec::new(),
        };
        let node_reclaim_distance = match t.get("node_reclaim_distance") {
            None | Some(Node::Null) => None,
            Some(n) => Some(self.int(n, &t.at("node_reclaim_distance"), DISTANCE)?),
        };
        let (cpus, freq_domains) = match t.get("layout") {
            Some(layout) => {
                for key in ["cpus", "freq_domains"] {
                    if t.get(key).is_some() {
                        return Err(self.error(
                            &t.at(key),
                            "either a layout or cpus and freq_domains",
                            format!("both layout and {key}"),
                        ));
                    }
                }
                self.layout(layout, t.at("layout"), numa_distance.len())?
            }
            None => {
                let cpus_node = self.required(&t, "cpus", CPUS)?;
                let cpus = self.list(cpus_node, &t.at("cpus"), CPUS, |n, p| self.cpu(n, p))?;
                let domains_node = self.required(&t, "freq_domains", DOMAINS)?;
                let freq_domains =
                    self.list(domains_node, &t.at("freq_domains"), DOMAINS, |n, p| {
                        self.domain(n, p)
                    })?;
                (cpus, freq_domains)
            }
        };
        let hz = match t.get("hz") {
            None | Some(Node::Null) => None,
            Some(n) => Some(self.int(n, &t.at("hz"), HZ)?),
        };
        let freq_invariant = match t.get("freq_invariant") {
            None => true,
            Some(n) => self.boolean(n, &t.at("freq_invariant"), BOOL)?,
        };
        let energy_model = match t.get("energy_model") {
            None => true,
            Some(n) => self.boolean(n, &t.at("energy_model"), BOOL)?,
        };
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
        let costs = self.override_fields(t.get("costs"), &t.at("costs"), default_costs, COST)?;
        let memory =
            self.override_fields(t.get("memory"), &t.at("memory"), Memory::fallback(), MEMORY)?;
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
        })
    }

    /// A table of non-negative integers over the fields of `default` (a flat serde
    /// struct): the keys it has replace the defaults.
    fn override_fields<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        node: Option<&Node>,
        place: &str,
        default: T,
        expected: &str,
    ) -> Result<T, InputError> {
        let serde_json::Value::Object(mut fields) =
            serde_json::to_value(&default).expect("a flat struct of integers serializes")
        else {
            unreachable!("a struct serializes to an object")
        };
        if let Some(node) = node {
            let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
            let t = self.table(node, place.to_string(), &keys)?;
            for (key, value) in t.entries {
                let x: u64 = self.int(value, &t.at(key), expected)?;
                fields.insert(key.clone(), x.into());
            }
        }
        Ok(serde_json::from_value(serde_json::Value::Object(fields))
            .expect("every field is an integer"))
    }

    /// A `[layout]` table: a regular server (sockets × cores × threads, cores sharing an
    /// LLC in groups, NUMA nodes per socket) expanded into CPUs and cpufreq policies, numbered
    /// as Linux numbers x86 servers (firmware lists the first thread of every core, package
    /// by package, then the second threads: CPU n and n + cores are siblings).
    fn layout(
        &self,
        node: &Node,
        place: String,
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
        let t = self.table(node, place, KEYS)?;
        let count = |key: &str| -> Result<usize, InputError> {
            let n: usize = self.int(self.required(&t, key, COUNT)?, &t.at(key), COUNT)?;
            if n == 0 {
                return Err(self.error(&t.at(key), COUNT, "0"));
            }
            Ok(n)
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
                return Err(self.error(&t.at(key), expected, n.to_string()));
            }
        }
        if (cores / nps) % per_llc != 0 {
            let expected = format!(
                "LLCs that do not straddle nodes ({} cores per node)",
                cores / nps
            );
            return Err(self.error(&t.at("cores_per_llc"), expected, per_llc.to_string()));
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
                return Err(self.error(
                    &t.place,
                    format!("at most {MAX_CPUS} CPUs"),
                    format!("{sockets} × {cores} × {threads} = {found}"),
                ));
            }
        };
        if sockets * nps > 1 && nr_nodes != sockets * nps {
            return Err(self.error(
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
            Some(Node::Str(s)) if s == "cpu" => false,
            Some(Node::Str(s)) if s == "package" => true,
            Some(other) => return Err(self.mismatch(&t.at("policy_per"), POLICY_PER, other)),
        };
        let template = self.layout_cpu(self.required(&t, "cpu", CPU)?, t.at("cpu"))?;
        let domain_node = self.required(&t, "freq_domain", DOMAIN)?;
        let domain = self.layout_domain(domain_node, t.at("freq_domain"))?;
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

    /// The CPU of a layout: a `[[cpus]]` entry without the fields the layout gives.
    fn layout_cpu(&self, node: &Node, place: String) -> Result<Cpu, InputError> {
        self.cpu_with(node, place, false)
    }

    /// The cpufreq policy of a layout: a `[[freq_domains]]` entry without `cpus`.
    fn layout_domain(&self, node: &Node, place: String) -> Result<FreqDomain, InputError> {
        self.domain_with(node, place, false)
    }

    fn cpu(&self, node: &Node, place: String) -> Result<Cpu, InputError> {
        self.cpu_with(node, place, true)
    }

    /// A CPU entry; `placed`: with the keys that place it (freq_domain, llc, smt_siblings,
    /// package, node), which a layout computes instead.
    fn cpu_with(&self, node: &Node, place: String, placed: bool) -> Result<Cpu, InputError> {
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
        let t = self.table(node, place, if placed { KEYS } else { &KEYS[..3] })?;
        let uarch = self.string(self.required(&t, "uarch", UARCH)?, &t.at("uarch"), UARCH)?;
        let capacity_orig = self.int(
            self.required(&t, "capacity_orig", CAPACITY)?,
            &t.at("capacity_orig"),
            CAPACITY,
        )?;
        let (freq_domain, llc) = if placed {
            let freq_domain = self.int(
                self.required(&t, "freq_domain", DOMAIN_INDEX)?,
                &t.at("freq_domain"),
                DOMAIN_INDEX,
            )?;
            (
                freq_domain,
                self.int(self.required(&t, "llc", LLC)?, &t.at("llc"), LLC)?,
            )
        } else {
            (0, 0)
        };
        let id = |key: &str, expected: &str| match t.get(key) {
            Some(n) => self.int(n, &t.at(key), expected),
            None => Ok(0),
        };
        let package = id("package", PACKAGE)?;
        let node = id("node", NODE)?;
        let smt_siblings = match t.get("smt_siblings") {
            Some(n) => self.list(n, &t.at("smt_siblings"), SIBLINGS, |n, p| {
                self.int(n, &p, CPU_ID)
            })?,
            None => Vec::new(),
        };
        let idle_states = match t.get("idle_states") {
            Some(n) => self.list(n, &t.at("idle_states"), IDLE_STATES, |n, p| {
                self.idle_state(n, p)
            })?,
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

    fn domain(&self, node: &Node, place: String) -> Result<FreqDomain, InputError> {
        self.domain_with(node, place, true)
    }

    /// A frequency domain; `with_cpus`: with its `cpus` key (a layout computes them).
    fn domain_with(
        &self,
        node: &Node,
        place: String,
        with_cpus: bool,
    ) -> Result<FreqDomain, InputError> {
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
        let t = self.table(node, place, keys)?;
        let cpus = if with_cpus {
            let cpus_node = self.required(&t, "cpus", DOMAIN_CPUS)?;
            self.list(cpus_node, &t.at("cpus"), DOMAIN_CPUS, |n, p| {
                self.int(n, &p, CPU_ID)
            })?
        } else {
            Vec::new()
        };
        let opps_node = self.required(&t, "opps", OPPS)?;
        let opps = self.list(opps_node, &t.at("opps"), OPPS, |n, p| self.opp(n, p))?;
        let transition_latency_ns = match t.get("transition_latency_ns") {
            Some(n) => self.int(n, &t.at("transition_latency_ns"), LATENCY)?,
            None => 0,
        };
        let transition_delay_us = match t.get("transition_delay_us") {
            None | Some(Node::Null) => None,
            Some(n) => Some(self.int(n, &t.at("transition_delay_us"), DELAY)?),
        };
        let cluster_idle_states = match t.get("cluster_idle_states") {
            Some(n) => self.list(n, &t.at("cluster_idle_states"), IDLE_STATES, |n, p| {
                self.idle_state(n, p)
            })?,
            None => Vec::new(),
        };
        let flag = |key: &str| match t.get(key) {
            None => Ok(true),
            Some(n) => self.boolean(n, &t.at(key), BOOL),
        };
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

    fn opp(&self, node: &Node, place: String) -> Result<Opp, InputError> {
        let t = self.table(node, place, &["freq_khz", "power_mw", "cluster_power_mw"])?;
        let freq_khz = self.int(
            self.required(&t, "freq_khz", FREQ)?,
            &t.at("freq_khz"),
            FREQ,
        )?;
        let power_mw = self.number(
            self.required(&t, "power_mw", POWER)?,
            &t.at("power_mw"),
            POWER,
        )?;
        let cluster_power_mw = match t.get("cluster_power_mw") {
            Some(n) => self.number(n, &t.at("cluster_power_mw"), POWER)?,
            None => 0.0,
        };
        Ok(Opp {
            freq_khz,
            power_mw,
            cluster_power_mw,
        })
    }

    fn idle_state(&self, node: &Node, place: String) -> Result<IdleState, InputError> {
        let t = self.table(
            node,
            place,
            &[
                "name",
                "power_mw",
                "exit_latency_ns",
                "target_residency_ns",
                "polling",
                "typical_exit_ns",
            ],
        )?;
        let name = self.string(
            self.required(&t, "name", STATE_NAME)?,
            &t.at("name"),
            STATE_NAME,
        )?;
        let power_mw = self.number(
            self.required(&t, "power_mw", POWER)?,
            &t.at("power_mw"),
            POWER,
        )?;
        let exit_latency_ns = self.int(
            self.required(&t, "exit_latency_ns", EXIT_LATENCY)?,
            &t.at("exit_latency_ns"),
            EXIT_LATENCY,
        )?;
        let target_residency_ns = match t.get("target_residency_ns") {
            Some(v) => self.int(v, &t.at("target_residency_ns"), RESIDENCY)?,
            None => exit_latency_ns,
        };
        let polling = match t.get("polling") {
            Some(v) => self.boolean(v, &t.at("polling"), BOOL)?,
            None => false,
        };
        let typical_exit_ns = match t.get("typical_exit_ns") {
            None | Some(Node::Null) => None,
            Some(v) => Some(self.int(v, &t.at("typical_exit_ns"), EXIT_LATENCY)?),
        };
        Ok(IdleState {
            name,
            power_mw,
            exit_latency_ns,
            target_residency_ns,
            polling,
            typical_exit_ns,
        })
    }
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

    for (i, cpu) in p.cpus.iter().enumerate() {
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

    for (d, domain) in p.freq_domains.iter().enumerate() {
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
                    format!(
                        "a frequency above the previous OPP's {floor} kHz (OPPs ascend strictly)"
                    )
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
    }
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

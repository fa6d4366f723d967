//! LISA's `plat_info.yml` beside a trace: the traced machine's CPU capacities, OPPs and
//! energy model, read into a schedlab platform.
//!
//! LISA writes the file two ways, and both are read: its own dump (`PlatformInfo.to_yaml`:
//! PyYAML with `!!python/object` tags, anchors and aliases, block lists, the energy model a
//! pickled `lisa.energy_model.EnergyModel` whose `ActiveState`s are `[capacity, power]`
//! lists) and the `!call:` form schedlab's own `plat_info.yml` uses (`report/plat_info.rs`).
//! The YAML is read by a small reader of the subset these files use (block maps and lists,
//! flow lists and maps on one line, tags and anchors skipped, aliases resolved, quoted and
//! plain scalars); the crate has no YAML dependency.
//!
//! A plat_info names no micro-architecture, caches, idle-state latencies or kernel-path
//! costs, so the platform is the nearest preset (the same CPUs in the same frequency
//! domains, the closest capacities and OPPs; `nearest_preset`) with what the plat_info says
//! put in: each CPU's `capacity_orig` (`cpu-capacities: orig:`), each domain's OPPs
//! (`freqs:`), and from `nrg-model` each OPP's per-CPU and per-cluster power and each
//! idle state's power. `Derived::notes` says what came from where.

use crate::error::InputError;
use crate::platform::{preset, preset_names, IdleState, Opp, Platform};
use std::collections::BTreeMap;

/// A YAML node of the subset LISA's files use.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Scalar(String),
    Seq(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

impl Yaml {
    /// The value of `key` in a map.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A map's entries, or a list of one-entry maps' (`!!omap`).
    pub fn entries(&self) -> Vec<(&str, &Yaml)> {
        match self {
            Yaml::Map(m) => m.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            Yaml::Seq(items) => items
                .iter()
                .filter_map(|i| match i {
                    Yaml::Map(m) if m.len() == 1 => Some((m[0].0.as_str(), &m[0].1)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn items(&self) -> &[Yaml] {
        match self {
            Yaml::Seq(items) => items,
            _ => &[],
        }
    }

    pub fn str(&self) -> Option<&str> {
        match self {
            Yaml::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub fn f64(&self) -> Option<f64> {
        self.str()?.parse().ok()
    }

    pub fn u64(&self) -> Option<u64> {
        let s = self.str()?;
        s.parse().ok().or_else(|| {
            s.parse::<f64>()
                .ok()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        })
    }
}

/// One line of the text: its indentation, its content (comment removed) and number.
#[derive(Debug, Clone)]
struct Line {
    indent: usize,
    text: String,
    no: usize,
}

struct Parser<'a> {
    lines: Vec<Line>,
    pos: usize,
    anchors: BTreeMap<String, Yaml>,
    file: &'a str,
}

/// Parse the YAML subset: block maps and lists, flow collections, scalars.
pub fn parse_yaml(text: &str, file: &str) -> Result<Yaml, InputError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim_end_matches('\r');
        let body = strip_comment(raw);
        let t = body.trim_end();
        let content = t.trim_start();
        if content.is_empty() || content == "---" || content == "..." || content.starts_with('%') {
            continue;
        }
        if raw.starts_with('\t') {
            return Err(InputError::new(
                file,
                format!("line {}", i + 1),
                "YAML indented with spaces",
                "a tab",
            ));
        }
        lines.push(Line {
            indent: t.len() - content.len(),
            text: content.to_string(),
            no: i + 1,
        });
    }
    let mut p = Parser {
        lines,
        pos: 0,
        anchors: BTreeMap::new(),
        file,
    };
    if p.lines.is_empty() {
        return Ok(Yaml::Null);
    }
    let indent = p.lines[0].indent;
    let root = p.block(indent)?;
    if let Some(l) = p.lines.get(p.pos) {
        return Err(p.err(
            l.no,
            "the document to end (a line at a known indentation)",
            &l.text,
        ));
    }
    Ok(root)
}

/// The line without its comment (`#` at its start or after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = b' ';
    for (i, &b) in line.as_bytes().iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'#' && (prev == b' ' || prev == b'\t') => return &line[..i],
            None => {}
        }
        prev = b;
    }
    line
}

/// `- item` or a lone `-`.
fn is_dash(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Where a `key:` ends (the colon followed by a space or the line's end), outside quotes and
/// flow brackets; None for a line that is not a map entry.
fn key_colon(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    if matches!(b.first(), Some(b'[' | b'{' | b'!' | b'&' | b'*')) {
        return None;
    }
    let mut quote = None;
    for (i, &c) in b.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if (c == b'\'' || c == b'"') && i == 0 => quote = Some(c),
            None if c == b':' && (i + 1 == b.len() || b[i + 1] == b' ') => return Some(i),
            None => {}
        }
    }
    None
}

/// A scalar's text: quotes removed (`''` in single quotes, backslash escapes in double).
fn unquote(s: &str) -> String {
    let s = s.trim();
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        return s[1..s.len() - 1].replace("''", "'");
    }
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        let mut out = String::new();
        let mut chars = s[1..s.len() - 1].chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            }
        }
        return out;
    }
    s.to_string()
}

impl Parser<'_> {
    fn err(&self, line: usize, expected: &str, found: &str) -> InputError {
        let shown: String = found.chars().take(60).collect();
        InputError::new(
            self.file,
            format!("line {line}"),
            expected,
            format!("`{shown}`"),
        )
    }

    /// The node whose first line is the current one, at `indent`.
    fn block(&mut self, indent: usize) -> Result<Yaml, InputError> {
        let Some(l) = self.lines.get(self.pos) else {
            return Ok(Yaml::Null);
        };
        if l.indent < indent {
            return Ok(Yaml::Null);
        }
        let indent = l.indent;
        if is_dash(&l.text) {
            self.seq(indent)
        } else if key_colon(&l.text).is_some() {
            self.map(indent)
        } else {
            // A scalar or flow node alone on its line (a list item's content).
            let text = l.text.clone();
            self.pos += 1;
            let text = self.continued(text, indent);
            self.value(&text)
        }
    }

    /// A plain scalar's text with the lines that continue it (more indented, not entries).
    fn continued(&mut self, mut text: String, indent: usize) -> String {
        while let Some(l) = self.lines.get(self.pos) {
            if l.indent <= indent {
                break;
            }
            text.push(' ');
            text.push_str(&l.text);
            self.pos += 1;
        }
        text
    }

    fn seq(&mut self, indent: usize) -> Result<Yaml, InputError> {
        let mut items = Vec::new();
        while let Some(l) = self.lines.get(self.pos) {
            if l.indent != indent || !is_dash(&l.text) {
                break;
            }
            let rest = l.text[1..].trim_start();
            if rest.is_empty() {
                // The item's node is on the lines below, more indented.
                self.pos += 1;
                let below = self.lines.get(self.pos).map(|n| n.indent);
                items.push(match below {
                    Some(b) if b > indent => self.block(b)?,
                    _ => Yaml::Null,
                });
                continue;
            }
            // The item's node starts on this line, at the column after the dash.
            let at = indent + (l.text.len() - rest.len());
            let rest = rest.to_string();
            let (anchor, rest) = props(&rest);
            if rest.is_empty() {
                self.pos += 1;
                let below = self.lines.get(self.pos).map(|n| n.indent);
                let node = match below {
                    Some(b) if b > indent => self.block(b)?,
                    _ => Yaml::Null,
                };
                self.anchor(anchor, &node);
                items.push(node);
                continue;
            }
            self.lines[self.pos].indent = at;
            self.lines[self.pos].text = rest.to_string();
            let node = self.block(at)?;
            self.anchor(anchor, &node);
            items.push(node);
        }
        Ok(Yaml::Seq(items))
    }

    fn map(&mut self, indent: usize) -> Result<Yaml, InputError> {
        let mut entries = Vec::new();
        while let Some(l) = self.lines.get(self.pos) {
            if l.indent != indent || is_dash(&l.text) {
                break;
            }
            let Some(colon) = key_colon(&l.text) else {
                return Err(self.err(l.no, "`key: value`", &l.text));
            };
            let key = unquote(&l.text[..colon]);
            let rest = l.text[colon + 1..].trim().to_string();
            let no = l.no;
            self.pos += 1;
            let (anchor, rest) = props(&rest);
            let node = if rest.is_empty() {
                // The value on the lines below: more indented, or a list at this indentation.
                match self.lines.get(self.pos) {
                    Some(n) if n.indent > indent || (n.indent == indent && is_dash(&n.text)) => {
                        let at = n.indent;
                        self.block(at)?
                    }
                    _ => Yaml::Null,
                }
            } else {
                let text = self.continued(rest.to_string(), indent);
                self.value(&text).map_err(|e| InputError {
                    place: format!("line {no}"),
                    ..e
                })?
            };
            self.anchor(anchor, &node);
            entries.push((key, node));
        }
        Ok(Yaml::Map(entries))
    }

    fn anchor(&mut self, anchor: Option<&str>, node: &Yaml) {
        if let Some(a) = anchor {
            self.anchors.insert(a.to_string(), node.clone());
        }
    }

    /// An inline value: an alias, a flow collection or a scalar.
    fn value(&mut self, text: &str) -> Result<Yaml, InputError> {
        let (anchor, text) = props(text);
        let node = if let Some(name) = text.strip_prefix('*') {
            // An alias of a node not finished yet (a parent link): nothing.
            self.anchors.get(name.trim()).cloned().unwrap_or(Yaml::Null)
        } else if text.starts_with('[') || text.starts_with('{') {
            let mut f = Flow {
                s: text.as_bytes(),
                i: 0,
            };
            let node = f
                .node()
                .ok_or_else(|| self.err(0, "a flow list or map", text))?;
            f.space();
            if f.i != f.s.len() {
                return Err(self.err(0, "one flow list or map", text));
            }
            node
        } else if text == "~" || text == "null" || text.is_empty() {
            Yaml::Null
        } else {
            Yaml::Scalar(unquote(text))
        };
        self.anchor(anchor, &node);
        Ok(node)
    }
}

/// A node's properties before it: an anchor (`&name`, returned) and tags (`!…`, skipped).
fn props(text: &str) -> (Option<&str>, &str) {
    let mut anchor = None;
    let mut rest = text.trim_start();
    loop {
        if rest.starts_with('&') || rest.starts_with('!') {
            let end = rest.find(' ').unwrap_or(rest.len());
            if rest.starts_with('&') {
                anchor = Some(&rest[1..end]);
            }
            rest = rest[end..].trim_start();
        } else {
            return (anchor, rest);
        }
    }
}

/// A flow collection (`[a, b]`, `{k: v}`), nested, with plain or quoted scalars.
struct Flow<'a> {
    s: &'a [u8],
    i: usize,
}

impl Flow<'_> {
    fn space(&mut self) {
        while self.s.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
    }

    fn node(&mut self) -> Option<Yaml> {
        self.space();
        match *self.s.get(self.i)? {
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.space();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Some(Yaml::Seq(items));
                    }
                    items.push(self.node()?);
                    self.space();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {}
                        _ => return None,
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut entries = Vec::new();
                loop {
                    self.space();
                    if self.s.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Some(Yaml::Map(entries));
                    }
                    let key = self.scalar(true)?;
                    self.space();
                    let value = if self.s.get(self.i) == Some(&b':') {
                        self.i += 1;
                        self.node()?
                    } else {
                        Yaml::Null
                    };
                    entries.push((key, value));
                    self.space();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {}
                        _ => return None,
                    }
                }
            }
            _ => {
                let s = self.scalar(false)?;
                Some(if s == "~" || s == "null" {
                    Yaml::Null
                } else {
                    Yaml::Scalar(s)
                })
            }
        }
    }

    /// A scalar up to `,`, `]`, `}` (and `:` followed by a space, for a key).
    fn scalar(&mut self, key: bool) -> Option<String> {
        self.space();
        let start = self.i;
        if let Some(&q @ (b'\'' | b'"')) = self.s.get(self.i) {
            self.i += 1;
            while self.i < self.s.len() {
                if self.s[self.i] == q {
                    if q == b'\'' && self.s.get(self.i + 1) == Some(&b'\'') {
                        self.i += 2;
                        continue;
                    }
                    self.i += 1;
                    let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                    return Some(unquote(text));
                }
                if q == b'"' && self.s[self.i] == b'\\' {
                    self.i += 1;
                }
                self.i += 1;
            }
            return None;
        }
        while let Some(&c) = self.s.get(self.i) {
            let end = matches!(c, b',' | b']' | b'}')
                || (key && c == b':' && matches!(self.s.get(self.i + 1), None | Some(b' ')));
            if end {
                break;
            }
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        // A tag before a flow scalar (`!!float 1`): skipped.
        let (_, text) = props(text);
        Some(text.trim().to_string())
    }
}

/// An OPP of a node of the energy model: kHz, the capacity there (a CPU's; None for a
/// cluster's) and the power, mW.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveState {
    pub khz: u32,
    pub capacity: Option<f64>,
    pub power_mw: f64,
}

/// A node of LISA's energy model: a CPU (`cpu` set) or a group of CPUs (a cluster).
#[derive(Debug, Clone, PartialEq)]
pub struct EmNode {
    pub cpus: Vec<usize>,
    pub active: Vec<ActiveState>,
    /// Idle state name → power, mW, shallowest first.
    pub idle: Vec<(String, f64)>,
}

/// What a LISA `plat_info.yml` says of the machine.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlatInfo {
    pub name: Option<String>,
    /// Per CPU: `cpu-capacities: orig:`.
    pub capacities: Vec<u32>,
    /// `freq-domains:`, each a list of CPUs.
    pub freq_domains: Vec<Vec<usize>>,
    /// Per CPU: `freqs:` (kHz, ascending).
    pub freqs: BTreeMap<usize, Vec<u32>>,
    /// `nrg-model`: its CPU nodes and the groups above them (clusters) that have power.
    pub em_cpus: Vec<EmNode>,
    pub em_clusters: Vec<EmNode>,
    /// `kernel: version:`'s release, when given.
    pub kernel: Option<String>,
}

/// Read a LISA `plat_info.yml` (`file` names it in errors).
pub fn read(text: &str, file: &str) -> Result<PlatInfo, InputError> {
    let root = parse_yaml(text, file)?;
    let conf = root
        .get("platform-info")
        .and_then(|p| p.get("conf"))
        .or_else(|| root.get("conf"))
        .unwrap_or(&root);
    let bad = |place: &str, expected: &str, found: String| {
        Err(InputError::new(file, place, expected, found))
    };
    let mut info = PlatInfo {
        name: conf.get("name").and_then(Yaml::str).map(str::to_string),
        ..PlatInfo::default()
    };
    let caps = conf.get("cpu-capacities").and_then(|c| c.get("orig"));
    let Some(caps) = caps.filter(|c| !c.entries().is_empty()) else {
        return bad(
            "platform-info.conf.cpu-capacities.orig",
            "the CPUs' capacities (LISA's plat_info `cpu-capacities: orig:`)",
            "none".into(),
        );
    };
    let mut by_cpu = BTreeMap::new();
    for (k, v) in caps.entries() {
        let place = format!("cpu-capacities.orig.{k}");
        let (Ok(cpu), Some(c)) = (k.parse::<usize>(), v.u64()) else {
            return bad(&place, "CPU: capacity, two integers", format!("{k}: {v:?}"));
        };
        if !(1..=1024).contains(&c) || cpu >= crate::workload::NR_CPUS {
            return bad(
                &place,
                "a capacity from 1 to 1024 of a CPU below NR_CPUS",
                format!("{cpu}: {c}"),
            );
        }
        by_cpu.insert(cpu, c as u32);
    }
    let n = by_cpu.keys().max().map_or(0, |m| m + 1);
    if by_cpu.len() != n {
        return bad(
            "cpu-capacities.orig",
            "a capacity for every CPU from 0",
            format!("CPUs {:?}", by_cpu.keys().collect::<Vec<_>>()),
        );
    }
    info.capacities = by_cpu.into_values().collect();
    if let Some(d) = conf.get("freq-domains") {
        for (i, dom) in d.items().iter().enumerate() {
            let cpus: Option<Vec<usize>> = dom
                .items()
                .iter()
                .map(|c| c.u64().map(|c| c as usize))
                .collect();
            match cpus {
                Some(c) if !c.is_empty() && c.iter().all(|&c| c < n) => info.freq_domains.push(c),
                _ => {
                    return bad(
                        &format!("freq-domains[{i}]"),
                        &format!("a list of CPUs below {n}"),
                        format!("{dom:?}"),
                    )
                }
            }
        }
    }
    if let Some(f) = conf.get("freqs") {
        for (k, v) in f.entries() {
            let place = format!("freqs.{k}");
            let cpu = k.parse::<usize>().ok().filter(|&c| c < n);
            let khz: Option<Vec<u32>> = v
                .items()
                .iter()
                .map(|x| {
                    x.u64()
                        .filter(|&f| f > 0 && f <= u32::MAX as u64)
                        .map(|f| f as u32)
                })
                .collect();
            match (cpu, khz) {
                (Some(cpu), Some(mut khz)) if !khz.is_empty() => {
                    khz.sort_unstable();
                    khz.dedup();
                    info.freqs.insert(cpu, khz);
                }
                _ => {
                    return bad(
                        &place,
                        &format!("a CPU below {n} and a list of frequencies in kHz"),
                        format!("{k}: {v:?}"),
                    )
                }
            }
        }
    }
    info.kernel = conf
        .get("kernel")
        .and_then(|k| k.get("version"))
        .and_then(|v| v.get("release").or_else(|| v.get("version_string")))
        .and_then(Yaml::str)
        .map(str::to_string);
    if let Some(em) = conf.get("nrg-model") {
        energy_nodes(em, &mut info, file)?;
        info.em_cpus.sort_by_key(|n| n.cpus[0]);
    }
    Ok(info)
}

/// The CPU nodes and the power-carrying groups (clusters) of the energy model under `node`,
/// wherever they are: LISA's dump holds them as anchors in whatever place PyYAML met them
/// first (the root inside CPU 0's `parent`, where an alias back to CPU 0 cannot resolve), so
/// the tree is searched rather than walked from its root. A node with `cpu` set is a CPU's;
/// one with `active_states` over several CPUs (`cpus`, or its children's) a cluster's.
fn energy_nodes(node: &Yaml, info: &mut PlatInfo, file: &str) -> Result<Vec<usize>, InputError> {
    let mut cpus = Vec::new();
    match node {
        Yaml::Seq(items) => {
            for i in items {
                energy_nodes(i, info, file)?;
            }
            return Ok(cpus);
        }
        Yaml::Map(entries) => {
            for (k, v) in entries {
                let under = energy_nodes(v, info, file)?;
                if k == "children" {
                    cpus.extend(under);
                }
            }
        }
        _ => return Ok(cpus),
    }
    if let Some(Yaml::Seq(children)) = node.get("children") {
        for c in children {
            if let Some(cpu) = c.get("cpu").and_then(Yaml::u64) {
                cpus.push(cpu as usize);
            } else if let Some(l) = c.get("cpus") {
                cpus.extend(l.items().iter().filter_map(Yaml::u64).map(|c| c as usize));
            }
        }
    }
    let own: Vec<usize> = node
        .get("cpus")
        .map(|l| {
            l.items()
                .iter()
                .filter_map(Yaml::u64)
                .map(|c| c as usize)
                .collect()
        })
        .unwrap_or_default();
    if !own.is_empty() {
        cpus = own;
    }
    cpus.sort_unstable();
    cpus.dedup();
    let active = active_states(node.get("active_states"), file)?;
    let idle = || -> Vec<(String, f64)> {
        node.get("idle_states")
            .map(|i| {
                i.entries()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.f64().unwrap_or(0.0)))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(cpu) = node.get("cpu").and_then(Yaml::u64) {
        let cpu = cpu as usize;
        if !active.is_empty() && !info.em_cpus.iter().any(|n| n.cpus == [cpu]) {
            info.em_cpus.push(EmNode {
                cpus: vec![cpu],
                active,
                idle: idle(),
            });
        }
        return Ok(vec![cpu]);
    }
    if !active.is_empty() && cpus.len() > 1 && !info.em_clusters.iter().any(|n| n.cpus == cpus) {
        info.em_clusters.push(EmNode {
            cpus: cpus.clone(),
            active,
            idle: idle(),
        });
    }
    Ok(cpus)
}

/// `active_states`: kHz → `ActiveState` as `[capacity, power]` (LISA's dump) or
/// `{capacity:, power:}` (`!call:`).
fn active_states(node: Option<&Yaml>, file: &str) -> Result<Vec<ActiveState>, InputError> {
    let mut out = Vec::new();
    let Some(node) = node else { return Ok(out) };
    for (k, v) in node.entries() {
        let khz = k
            .parse::<u64>()
            .ok()
            .filter(|&f| f > 0 && f <= u32::MAX as u64);
        let (capacity, power) = match v {
            Yaml::Seq(items) if items.len() == 2 => (items[0].f64(), items[1].f64()),
            Yaml::Map(_) => (
                v.get("capacity").and_then(Yaml::f64),
                v.get("power").and_then(Yaml::f64),
            ),
            _ => (None, None),
        };
        match (khz, power) {
            (Some(khz), Some(power_mw)) if power_mw >= 0.0 && power_mw.is_finite() => {
                out.push(ActiveState {
                    khz: khz as u32,
                    capacity,
                    power_mw,
                })
            }
            _ => {
                return Err(InputError::new(
                    file,
                    format!("nrg-model active_states.{k}"),
                    "a frequency in kHz and an ActiveState (capacity, power)",
                    format!("{v:?}"),
                ))
            }
        }
    }
    out.sort_by_key(|a| a.khz);
    Ok(out)
}

/// A platform made of a plat_info and the preset it was put on, with what came from where.
#[derive(Debug, Clone)]
pub struct Derived {
    pub platform: Platform,
    pub preset: String,
    /// One line per source: what the plat_info gave, what the preset did.
    pub notes: Vec<String>,
}

/// The CPUs of each frequency domain, sorted, the domains sorted.
fn partition(domains: impl Iterator<Item = Vec<usize>>) -> Vec<Vec<usize>> {
    let mut d: Vec<Vec<usize>> = domains
        .map(|mut c| {
            c.sort_unstable();
            c
        })
        .collect();
    d.sort();
    d
}

/// The plat_info's frequency domains: `freq-domains`, or else the CPUs grouped by equal
/// frequency lists and capacities.
fn info_domains(info: &PlatInfo) -> Vec<Vec<usize>> {
    if !info.freq_domains.is_empty() {
        return partition(info.freq_domains.iter().cloned());
    }
    let mut groups: BTreeMap<(u32, Option<&Vec<u32>>), Vec<usize>> = BTreeMap::new();
    for (cpu, &cap) in info.capacities.iter().enumerate() {
        groups
            .entry((cap, info.freqs.get(&cpu)))
            .or_default()
            .push(cpu);
    }
    partition(groups.into_values())
}

/// The preset nearest to the plat_info: the same number of CPUs in the same frequency
/// domains (required), then the least capacity difference summed over the CPUs, then the
/// most OPP frequencies in common, then a name that starts with the plat_info's.
pub fn nearest_preset(info: &PlatInfo) -> Option<Platform> {
    let domains = info_domains(info);
    let mut best: Option<((u64, usize, bool), Platform)> = None;
    for name in preset_names() {
        let p = preset(name).expect("a preset");
        if p.nr_cpus() != info.capacities.len()
            || partition(p.freq_domains.iter().map(|d| d.cpus.clone())) != domains
        {
            continue;
        }
        let cap_diff: u64 = p
            .cpus
            .iter()
            .zip(&info.capacities)
            .map(|(c, &i)| c.capacity_orig.abs_diff(i) as u64)
            .sum();
        let missing: usize = (0..p.nr_cpus())
            .map(|c| {
                let have: Vec<u32> = p.domain_of(c).opps.iter().map(|o| o.freq_khz).collect();
                info.freqs
                    .get(&c)
                    .map_or(0, |f| f.iter().filter(|k| !have.contains(k)).count())
            })
            .sum();
        let other_name = !info
            .name
            .as_deref()
            .is_some_and(|n| !n.is_empty() && p.name.starts_with(n));
        let key = (cap_diff, missing, other_name);
        if best.as_ref().map_or(true, |(k, _)| key < *k) {
            best = Some((key, p));
        }
    }
    best.map(|(_, p)| p)
}

/// Frequency domain `d` of `p` from `info`: its OPPs (the plat_info's frequencies; powers
/// from its energy model, else the preset's at the same frequency) and its idle states'
/// powers. The OPPs whose power came from the preset and the per-OPP capacities that differ
/// from capacity × f / f_max are added to the two lists.
fn derive_domain(
    info: &PlatInfo,
    p: &mut Platform,
    d: usize,
    file: &str,
    opps_from_preset: &mut Vec<String>,
    per_opp_capacity: &mut Vec<String>,
) -> Result<(), InputError> {
    let em_cpu = |c: usize| info.em_cpus.iter().find(|n| n.cpus == [c]);
    let has_em = !info.em_cpus.is_empty();
    let cpus = p.freq_domains[d].cpus.clone();
    let first = cpus[0];
    let freqs: Vec<u32> = match info.freqs.get(&first) {
        Some(f) => f.clone(),
        None => em_cpu(first).map_or_else(
            || p.freq_domains[d].opps.iter().map(|o| o.freq_khz).collect(),
            |n| n.active.iter().map(|a| a.khz).collect(),
        ),
    };
    for &c in &cpus {
        if let Some(f) = info.freqs.get(&c) {
            if *f != freqs {
                return Err(InputError::new(
                    file,
                    format!("freqs.{c}"),
                    format!("the frequencies of CPU {first}, which shares its frequency domain"),
                    format!("{f:?}"),
                ));
            }
        }
    }
    let old = p.freq_domains[d].opps.clone();
    let cluster = info.em_clusters.iter().find(|n| {
        let mut a = n.cpus.clone();
        a.sort_unstable();
        a == cpus
    });
    let mut opps = Vec::with_capacity(freqs.len());
    for &khz in &freqs {
        let node_power = em_cpu(first).and_then(|n| n.active.iter().find(|a| a.khz == khz));
        let preset_opp = old.iter().find(|o| o.freq_khz == khz);
        let power_mw = match (node_power, preset_opp) {
            (Some(a), _) => a.power_mw,
            (None, Some(o)) if !has_em => {
                opps_from_preset.push(format!("{} MHz", khz / 1000));
                o.power_mw
            }
            _ => {
                return Err(InputError::new(
                    file,
                    format!("nrg-model (CPU {first})"),
                    format!("the power of the OPP {khz} kHz"),
                    "none",
                ))
            }
        };
        // Capacities per OPP are derived as capacity_orig × f / f_max: say where the
        // plat_info's differ by more than rounding.
        if let Some(cap) = node_power.and_then(|a| a.capacity) {
            let max = *freqs.last().expect("an OPP") as f64;
            let derived = info.capacities[first] as f64 * khz as f64 / max;
            if (cap - derived).abs() > 1.0 {
                per_opp_capacity.push(format!(
                    "CPU {first} at {khz} kHz: {cap:.0}, derived {derived:.0}"
                ));
            }
        }
        let cluster_power_mw = match cluster {
            Some(n) => n
                .active
                .iter()
                .find(|a| a.khz == khz)
                .map_or(0.0, |a| a.power_mw),
            None if has_em => 0.0,
            None => preset_opp.map_or(0.0, |o| o.cluster_power_mw),
        };
        opps.push(Opp {
            freq_khz: khz,
            power_mw,
            cluster_power_mw,
        });
    }
    p.freq_domains[d].opps = opps;
    // Idle states: the preset's (their latencies), the power the energy model gives.
    if has_em {
        for &c in &cpus {
            let node = em_cpu(c);
            for s in &mut p.cpus[c].idle_states {
                s.power_mw = node
                    .and_then(|n| n.idle.iter().find(|(k, _)| *k == s.name))
                    .map_or(0.0, |(_, w)| *w);
            }
        }
        let states: &mut Vec<IdleState> = &mut p.freq_domains[d].cluster_idle_states;
        for s in states.iter_mut() {
            s.power_mw = cluster
                .and_then(|n| n.idle.iter().find(|(k, _)| *k == s.name))
                .map_or(0.0, |(_, w)| *w);
        }
    }
    Ok(())
}

/// The platform of `info`: the nearest preset with the plat_info's capacities, OPPs and
/// energy model put in. None when no preset has its CPUs in its frequency domains.
pub fn derive(info: &PlatInfo, file: &str) -> Result<Option<Derived>, InputError> {
    let Some(mut p) = nearest_preset(info) else {
        return Ok(None);
    };
    let preset = p.name.clone();
    let mut notes = Vec::new();
    let mut from_info = vec![format!(
        "capacities (cpu-capacities.orig: {})",
        info.capacities
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    )];
    for (c, &cap) in info.capacities.iter().enumerate() {
        p.cpus[c].capacity_orig = cap;
    }
    // OPPs: the plat_info's frequencies; powers from its energy model, else the preset's at
    // the same frequency.
    let has_em = !info.em_cpus.is_empty();
    let mut opps_from_preset = Vec::new();
    let mut per_opp_capacity = Vec::new();
    for d in 0..p.freq_domains.len() {
        derive_domain(
            info,
            &mut p,
            d,
            file,
            &mut opps_from_preset,
            &mut per_opp_capacity,
        )?;
    }
    from_info.push("OPPs (freqs)".into());
    if has_em {
        let levels = if info.em_clusters.is_empty() {
            "per-CPU power at each OPP and in each idle state; no cluster level, so no cluster power"
        } else {
            "per-CPU and per-cluster power at each OPP and in each idle state"
        };
        from_info.push(format!("energy model (nrg-model: {levels})"));
    }
    let name = info.name.clone().unwrap_or_else(|| "plat_info".into());
    notes.push(format!(
        "platform: {file} (`{name}`) on the preset {preset}, the nearest (same CPUs in the same frequency domains)"
    ));
    notes.push(format!("  from {file}: {}", from_info.join("; ")));
    let mut from_preset = vec![
        "idle-state exit latencies and residencies".to_string(),
        "DVFS latencies".into(),
        "caches and memory".into(),
        "kernel-path costs".into(),
        "HZ".into(),
    ];
    if !has_em {
        from_preset.insert(0, "power (the plat_info has no nrg-model)".into());
    } else if !opps_from_preset.is_empty() {
        from_preset.insert(0, format!("power at {}", opps_from_preset.join(", ")));
    }
    notes.push(format!("  from {preset}: {}", from_preset.join("; ")));
    if !per_opp_capacity.is_empty() {
        notes.push(format!(
            "  capacities per OPP are capacity × f / f_max here; the plat_info's differ: {}",
            per_opp_capacity.join("; ")
        ));
    }
    p.name = name;
    p.description = notes.join("\n");
    p.energy_model = p.energy_model || has_em;
    Ok(Some(Derived {
        platform: p,
        preset,
        notes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_flow_tags_anchors() {
        let text = "\
a:
    b: 1   # a comment
    c: [1, 2, 'x y']
    d:
    - 3
    -   - 4
        - 5
    e: !!omap
    -   450000: !!python/object/new:lisa.energy_model.ActiveState
        - 236.1
        - 42
    -   575000: !call:lisa.energy_model.ActiveState {capacity: 302, power: 58}
    f: &id001 !!python/object:X
        g: \"q\\\"uote\"
    h: *id001
    i:
";
        let y = parse_yaml(text, "t.yml").unwrap();
        let a = y.get("a").unwrap();
        assert_eq!(a.get("b").unwrap().u64(), Some(1));
        assert_eq!(
            a.get("c").unwrap(),
            &Yaml::Seq(vec![
                Yaml::Scalar("1".into()),
                Yaml::Scalar("2".into()),
                Yaml::Scalar("x y".into())
            ])
        );
        let d = a.get("d").unwrap().items();
        assert_eq!(d[0].u64(), Some(3));
        assert_eq!(d[1].items().len(), 2);
        let e = a.get("e").unwrap().entries();
        assert_eq!(e[0].0, "450000");
        assert_eq!(e[0].1.items()[1].f64(), Some(42.0));
        assert_eq!(e[1].1.get("power").unwrap().f64(), Some(58.0));
        assert_eq!(a.get("f").unwrap().get("g").unwrap().str(), Some("q\"uote"));
        assert_eq!(a.get("h"), a.get("f"));
        assert_eq!(a.get("i"), Some(&Yaml::Null));
    }

    /// The plat_info schedlab writes for a preset reads back as that preset.
    #[test]
    fn schedlabs_own_plat_info_gives_its_preset_back() {
        for name in ["juno-r0", "rk3399", "sdm845"] {
            let p = preset(name).unwrap();
            let text = crate::report::plat_info::plat_info_yaml(&p);
            let info = read(&text, "p.yml").unwrap();
            let d = derive(&info, "p.yml").unwrap().expect("a preset");
            assert_eq!(d.preset, name);
            let mut q = d.platform.clone();
            q.name = p.name.clone();
            q.description = p.description.clone();
            assert_eq!(q, p, "{name}");
        }
    }
}

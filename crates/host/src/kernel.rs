//! The kernel's side of a host platform: its configuration (`/proc/config.gz`), the
//! scheduler's sysctls and debugfs tunables, as the `[kernel]` switches schedlab applies as
//! the platform's defaults, and comments on what schedlab does not model.

use crate::platform::DEBUG_SCHED;
use crate::sysfs::{one_line, Root};
use std::collections::BTreeMap;
use std::io::Read;

/// A `[kernel]` entry: key, TOML value and where it came from; or a comment alone.
pub(crate) enum Switch {
    Set(String, String, String),
    Comment(String),
}

/// `6.18.44-fc` → (6, 18).
pub(crate) fn version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// `/proc/config.gz`, else `/boot/config-RELEASE`: the set options and their values, and
/// where they were read.
pub(crate) fn kernel_config(
    r: &mut Root,
    release: Option<&str>,
) -> Option<(BTreeMap<String, String>, String)> {
    let (text, source) = match r.read_bytes_optional("/proc/config.gz") {
        Some(gz) => {
            let mut text = String::new();
            match flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text) {
                Ok(_) => (text, "/proc/config.gz".to_string()),
                Err(e) => {
                    r.note(format!("/proc/config.gz: not gzip text ({e})"));
                    return None;
                }
            }
        }
        None => {
            let boot = format!("/boot/config-{}", release?);
            match r.read_optional(&boot) {
                Some(t) => (t, boot),
                None => {
                    r.note(format!(
                        "/proc/config.gz and {boot}: absent (CONFIG_HZ, UCLAMP_TASK, FAIR_GROUP_SCHED unknown)"
                    ));
                    return None;
                }
            }
        }
    };
    let config = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.starts_with("CONFIG_"))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect();
    Some((config, source))
}

/// The `kernel.sched_*` sysctls schedlab has as switches.
const MODELLED: &[&str] = &[
    "sched_rt_period_us",
    "sched_rt_runtime_us",
    "sched_rr_timeslice_ms",
    "sched_util_clamp_min",
    "sched_util_clamp_max",
    "sched_util_clamp_min_rt_default",
];

/// The other `kernel.sched_*` sysctls of upstream kernels from v4.19 on (kernel/sysctl.c,
/// kernel/sched/*.c; the tunables before v5.13, which then moved to debugfs, included).
const UPSTREAM: &[&str] = &[
    "sched_autogroup_enabled",
    "sched_cfs_bandwidth_slice_us",
    "sched_child_runs_first",
    "sched_deadline_period_max_us",
    "sched_deadline_period_min_us",
    "sched_energy_aware",
    "sched_schedstats",
    "sched_latency_ns",
    "sched_min_granularity_ns",
    "sched_wakeup_granularity_ns",
    "sched_migration_cost_ns",
    "sched_nr_migrate",
    "sched_tunable_scaling",
    "sched_time_avg_ms",
];

/// `/proc/sys/kernel/sched_*` as (name, value, path).
fn sched_sysctls(r: &mut Root) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for name in r.list("/proc/sys/kernel") {
        if !name.starts_with("sched_") {
            continue;
        }
        let path = format!("/proc/sys/kernel/{name}");
        if let Some(value) = r.read(&path) {
            out.push((name, one_line(&value), path));
        }
    }
    out
}

fn upstream(name: &str) -> bool {
    MODELLED.contains(&name) || UPSTREAM.contains(&name)
}

/// `/proc/sys/kernel/sched_*`: those schedlab has as switches, the rest as comments; a name
/// no upstream kernel has is said to be the kernel's own change (a vendor's scheduler
/// patch), so a comparison with this machine knows its kernel is not upstream's there.
pub(crate) fn sysctls(r: &mut Root, out: &mut Vec<Switch>) {
    for (name, value, path) in sched_sysctls(r) {
        if MODELLED.contains(&name.as_str()) && value.parse::<i64>().is_ok() {
            out.push(Switch::Set(format!("kernel.{name}"), value, path));
        } else if upstream(&name) {
            out.push(Switch::Comment(format!(
                "kernel.{name} = {value} ({path}): not modelled"
            )));
        } else {
            out.push(Switch::Comment(format!(
                "kernel.{name} = {value} ({path}): no upstream kernel has this sysctl, a change \
                 this kernel carries: not modelled, so schedlab is not this kernel where it acts"
            )));
        }
    }
}

/// The scheduler sysctls of the machine under `r` that no upstream kernel has, as
/// `kernel.NAME = VALUE`: a vendor's change to the scheduler this machine's kernel carries.
pub(crate) fn foreign_sysctls(r: &mut Root) -> Vec<String> {
    sched_sysctls(r)
        .into_iter()
        .filter(|(name, _, _)| !upstream(name))
        .map(|(name, value, _)| format!("kernel.{name} = {value}"))
        .collect()
}

/// init's timer slack (`/proc/1/timerslack_ns`), which every task inherits unless it sets
/// its own (`prctl(PR_SET_TIMERSLACK)`): how late a fair task's timed sleep may end. RT and
/// deadline tasks sleep without it, in the kernel as in schedlab. Unreadable (not root): left
/// out, schedlab's default applies.
pub(crate) fn timer_slack(r: &mut Root, out: &mut Vec<Switch>) {
    const INIT: &str = "/proc/1/timerslack_ns";
    if let Some(v) = r.read_optional(INIT) {
        let v = one_line(&v);
        if v.parse::<u64>().is_ok_and(|ns| ns <= 1_000_000_000) {
            let why = format!("{INIT}: init's, inherited by every task that sets none");
            out.push(Switch::Set("model.timer_slack_ns".into(), v, why));
        }
    }
}

/// `/sys/kernel/debug/sched/`: the tunables, from their files or from `debug`'s
/// `sysctl_sched` section when the files cannot be read (a kernel in lockdown refuses to
/// read writable debugfs files).
pub(crate) fn debugfs(r: &mut Root, nr_cpus: usize, out: &mut Vec<Switch>) {
    if !r.exists(DEBUG_SCHED) {
        out.push(Switch::Comment(format!(
            "{DEBUG_SCHED}: absent (debugfs not mounted, or no CONFIG_SCHED_DEBUG): the tunables are schedlab's defaults"
        )));
        return;
    }
    let from_debug = debug_sysctls(r);
    let tunable = |r: &mut Root, file: &str, key: &str| tunable(r, &from_debug, file, key);
    let scaling = tunable(r, "tunable_scaling", "tunable_scaling");
    let factor = match &scaling {
        Some((s, why)) if *s <= 2 => {
            out.push(Switch::Set(
                "debug.tunable_scaling".into(),
                s.to_string(),
                why.clone(),
            ));
            let cpus = nr_cpus.clamp(1, 8) as u64;
            match s {
                0 => 1,
                2 => cpus,
                _ => 1 + u64::from(cpus.ilog2()),
            }
        }
        _ => 1 + u64::from((nr_cpus.clamp(1, 8) as u64).ilog2()),
    };
    // The kernel shows the scaled values; schedlab's switches are before the scaling.
    for (file, debug_key, key) in [
        ("base_slice_ns", "base_slice", "debug.min_granularity_ns"),
        (
            "min_granularity_ns",
            "min_granularity",
            "debug.min_granularity_ns",
        ),
        ("latency_ns", "latency", "debug.latency_ns"),
        (
            "wakeup_granularity_ns",
            "wakeup_granularity",
            "debug.wakeup_granularity_ns",
        ),
        (
            "idle_min_granularity_ns",
            "idle_min_granularity",
            "debug.idle_min_granularity_ns",
        ),
    ] {
        let Some((v, why)) = tunable(r, file, debug_key) else {
            continue;
        };
        if out
            .iter()
            .any(|s| matches!(s, Switch::Set(k, _, _) if k == key))
        {
            continue;
        }
        let unscaled = v / factor;
        let exact = if unscaled * factor == v {
            ""
        } else {
            ", rounded down"
        };
        let why = format!("{why}: {v} ns over the CPU factor {factor}{exact}");
        let min = if key == "debug.wakeup_granularity_ns" || key == "debug.latency_ns" {
            0
        } else {
            100_000
        };
        if unscaled >= min && unscaled <= 1_000_000_000 {
            out.push(Switch::Set(key.into(), unscaled.to_string(), why));
        } else {
            out.push(Switch::Comment(format!(
                "{key} = {unscaled} ({why}): outside schedlab's range"
            )));
        }
    }
    if let Some((v, why)) = tunable(r, "migration_cost_ns", "migration_cost") {
        if v <= 1_000_000_000 {
            out.push(Switch::Set(
                "debug.migration_cost_ns".into(),
                v.to_string(),
                why,
            ));
        }
    }
    debugfs_features(r, &from_debug, out);
}

/// `debug`'s sysctl_sched lines: `.sysctl_sched_base_slice : 1.400000` (ms), by name.
fn debug_sysctls(r: &mut Root) -> BTreeMap<String, String> {
    let mut from_debug = BTreeMap::new();
    if let Some(t) = r.read(&format!("{DEBUG_SCHED}/debug")) {
        for line in t.lines() {
            if let Some((k, v)) = line
                .trim()
                .strip_prefix(".sysctl_sched_")
                .and_then(|l| l.split_once(':'))
            {
                from_debug.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
    }
    from_debug
}

/// A tunable: its file in ns, else `debug`'s value (ms, or a number for tunable_scaling),
/// with where it was read.
fn tunable(
    r: &mut Root,
    from_debug: &BTreeMap<String, String>,
    file: &str,
    debug_key: &str,
) -> Option<(u64, String)> {
    let path = format!("{DEBUG_SCHED}/{file}");
    if r.exists(&path) {
        if let Some(v) = r.parse::<u64>(&path, false) {
            return Some((v, path));
        }
    }
    let v = from_debug.get(debug_key)?;
    let ns = if debug_key == "tunable_scaling" {
        v.split_whitespace().next()?.parse().ok()?
    } else {
        let ms: f64 = v.parse().ok()?;
        (0.0..1e9)
            .contains(&ms)
            .then(|| (ms * 1e6).round() as u64)?
    };
    Some((
        ns,
        format!("{DEBUG_SCHED}/debug: .sysctl_sched_{debug_key} {v}"),
    ))
}

/// The scheduler features, `preempt`, and a note when the files refused reads.
fn debugfs_features(r: &mut Root, from_debug: &BTreeMap<String, String>, out: &mut Vec<Switch>) {
    let features_path = format!("{DEBUG_SCHED}/features");
    if r.exists(&features_path) {
        if let Some(t) = r.read(&features_path) {
            features(&t, &features_path, out);
        }
    }
    if let Some(v) = from_debug.get("features") {
        if !r.exists(&features_path)
            || !out
                .iter()
                .any(|s| matches!(s, Switch::Set(k, _, _) if k.starts_with("feature.")))
        {
            out.push(Switch::Comment(format!(
                "sched features {v} ({DEBUG_SCHED}/debug): a bit mask in this kernel's own order, not read"
            )));
        }
    }
    let path = format!("{DEBUG_SCHED}/preempt");
    if r.exists(&path) {
        if let Some(v) = r.read(&path) {
            out.push(Switch::Comment(format!(
                "preempt: {} ({path}): not modelled",
                one_line(&v)
            )));
        }
    }
    if !from_debug.is_empty()
        && r.notes
            .iter()
            .any(|n| n.starts_with(DEBUG_SCHED) && n.contains("not permitted"))
    {
        out.push(Switch::Comment(format!(
            "{DEBUG_SCHED}: its writable files refuse reads (a kernel in lockdown does): the values above come from {DEBUG_SCHED}/debug"
        )));
    }
}

/// `features`: `GENTLE_FAIR_SLEEPERS NO_NEXT_BUDDY …`; those schedlab has as switches.
fn features(text: &str, path: &str, out: &mut Vec<Switch>) {
    const KNOWN: &[&str] = &[
        "GENTLE_FAIR_SLEEPERS",
        "START_DEBIT",
        "NEXT_BUDDY",
        "LAST_BUDDY",
        "WAKEUP_PREEMPTION",
        "ALT_PERIOD",
        "BASE_SLICE",
        "UTIL_EST",
        "UTIL_EST_FASTUP",
        "SIS_UTIL",
        "TTWU_QUEUE",
    ];
    let mut other = Vec::new();
    for f in text.split_whitespace() {
        let (name, on) = match f.strip_prefix("NO_") {
            Some(n) => (n, false),
            None => (f, true),
        };
        if KNOWN.contains(&name) {
            out.push(Switch::Set(
                format!("feature.{name}"),
                on.to_string(),
                path.to_string(),
            ));
        } else {
            other.push(f);
        }
    }
    if !other.is_empty() {
        out.push(Switch::Comment(format!(
            "features not modelled ({path}): {}",
            other.join(" ")
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(version("6.18.44-fc-v1147"), Some((6, 18)));
        assert_eq!(version("5.15.0"), Some((5, 15)));
        assert_eq!(version("x"), None);
    }

    #[test]
    fn features_become_switches() {
        let mut out = Vec::new();
        features("PLACE_LAG NO_NEXT_BUDDY UTIL_EST", "/f", &mut out);
        let set: Vec<String> = out
            .iter()
            .map(|s| match s {
                Switch::Set(k, v, _) => format!("{k}={v}"),
                Switch::Comment(c) => c.clone(),
            })
            .collect();
        assert_eq!(
            set,
            [
                "feature.NEXT_BUDDY=false",
                "feature.UTIL_EST=true",
                "features not modelled (/f): PLACE_LAG"
            ]
        );
    }
}

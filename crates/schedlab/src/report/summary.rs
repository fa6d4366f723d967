//! The human summary `schedlab run` prints: per task runtime, wakeups, wakeup latency and
//! deadline misses; per CPU busy time and frequency residency.

use super::Results;
use std::fmt::Write;

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

pub fn summary(r: &Results) -> String {
    let mut s = String::new();
    let secs = r.duration_ns as f64 / 1e9;
    let _ = writeln!(
        s,
        "schedlab {}: {} on {}, {:.3} s simulated, seed {}, governor {}",
        r.schedlab_version,
        r.workload_file,
        r.platform,
        secs,
        r.seed,
        r.variant["cpufreq.governor"].as_str().unwrap_or("?")
    );
    let _ = writeln!(
        s,
        "\n{:<24} {:>7} {:>6} {:>11} {:>8} {:>6} {:>10} {:>10} {:>10} {:>6}",
        "task",
        "pid",
        "prio",
        "runtime ms",
        "wakeups",
        "migr",
        "lat p50 us",
        "lat p99 us",
        "lat max us",
        "missed"
    );
    for t in &r.tasks {
        let l = &t.wakeup_latency_ns;
        let _ = writeln!(
            s,
            "{:<24} {:>7} {:>6} {:>11.3} {:>8} {:>6} {:>10} {:>10} {:>10} {:>6}",
            t.name,
            t.pid,
            t.prio,
            t.runtime_ns as f64 / 1e6,
            t.wakeups,
            t.migrations,
            us(l.p50),
            us(l.p99),
            us(l.max),
            t.deadline_misses
        );
    }
    for e in &r.exited_forks {
        let l = &e.wakeup_latency_ns;
        let _ = writeln!(
            s,
            "{:<24} {:>7} {:>6} {:>11.3} {:>8} {:>6} {:>10} {:>10} {:>10}",
            format!("{} x{} exited", e.task, e.counts.threads),
            "-",
            "-",
            e.counts.runtime_ns as f64 / 1e6,
            e.counts.wakeups,
            e.counts.migrations,
            us(l.p50),
            us(l.p99),
            us(l.max),
        );
    }
    latency_split(&mut s, r);
    let _ = writeln!(
        s,
        "\n{:<5} {:>8} {:>7} {:>10}  frequency residency",
        "cpu", "capacity", "busy %", "energy mJ"
    );
    for c in &r.cpus {
        let total = (c.busy_ns + c.idle_ns).max(1);
        // Keys are kHz as strings: order them as numbers.
        let mut res: Vec<(u64, u64)> = c
            .freq_residency_ns
            .iter()
            .filter(|(_, &ns)| ns > 0)
            .map(|(khz, &ns)| (khz.parse().unwrap_or(0), ns))
            .collect();
        res.sort_unstable();
        let res: Vec<String> = res
            .iter()
            .map(|&(khz, ns)| {
                format!(
                    "{} MHz {:.0}%",
                    khz / 1000,
                    100.0 * ns as f64 / total as f64
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "{:<5} {:>8} {:>7.1} {:>10.1}  {}",
            c.cpu,
            c.capacity_orig,
            100.0 * c.busy_ns as f64 / total as f64,
            c.energy_mj,
            res.join(", ")
        );
    }
    let clusters: f64 = r.domains.iter().map(|d| d.cluster_energy_mj).sum();
    let _ = writeln!(
        s,
        "\nenergy {:.1} mJ (clusters {:.1} mJ)",
        r.energy_mj, clusters
    );
    if let Some(w) = &r.workload_metrics {
        let _ = writeln!(s, "workload: {w}");
    }
    // A timed write the kernel refused changes what the run measured: say so here too.
    for w in r.admin_writes.iter().filter(|w| w.result != "ok") {
        let _ = writeln!(
            s,
            "timed write failed: {}={} at {:.3} s: {}",
            w.key,
            w.value,
            w.at_ns as f64 / 1e9,
            w.result
        );
    }
    let _ = writeln!(s, "{} events ({} stale)", r.sim_events, r.sim_events_stale);
    s
}

/// Where each task's wake-up latency went, mean µs per wakeup (tasks that woke up only),
/// and the total time it waited after being preempted.
fn latency_split(s: &mut String, r: &Results) {
    let rows: Vec<_> = r
        .tasks
        .iter()
        .filter(|t| t.wakeup_latency_ns.count > 0)
        .map(|t| {
            (
                t.name.as_str(),
                t.wakeup_latency_ns.count,
                &t.latency_split_ns,
            )
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nwake-up latency split, mean us: {:<8} {:>9} {:>9} {:>9} {:>9} {:>13}",
        "", "idle exit", "irq", "wake path", "runqueue", "preempted ms"
    );
    for (name, n, l) in rows {
        let mean = |ns: u64| format!("{:.1}", ns as f64 / n as f64 / 1000.0);
        let _ = writeln!(
            s,
            "{:<40} {:>9} {:>9} {:>9} {:>9} {:>13.3}",
            name,
            mean(l.idle_exit_ns),
            mean(l.irq_ns),
            mean(l.wakeup_path_ns),
            mean(l.runqueue_ns),
            l.preempted_ns as f64 / 1e6
        );
    }
}

//! `schedlab gen cyclictest`: `cyclictest --policy other|fifo [-p P] [-i US] [-t N] [-a] -D S
//! -n`, as seed 002 runs it beside hackbench (`cyclictest --policy other -D 5 -q -n`: one
//! thread, 1000 µs interval). Each thread sleeps with `clock_nanosleep(TIMER_ABSTIME)` to the
//! next multiple of the interval (an absolute rt-app timer) and measures how late it runs:
//! the results give min/avg/max per thread, as cyclictest prints them, and the percentiles of
//! all threads' latencies, as its `-H` histogram does. Like cyclictest, the workload holds
//! `/dev/cpu_dma_latency` at 0 for the run (no idle state deeper than the first) unless
//! `--laptop` is given.

use crate::error::InputError;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, clap::Args)]
pub struct CyclictestArgs {
    /// Scheduling policy of the measuring threads.
    #[arg(long, default_value = "other", value_parser = ["other", "fifo"])]
    pub policy: String,
    /// Priority (`-p`): rt_priority 1..99 for fifo (default 99), nice -20..19 for other
    /// (default 0).
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i32>,
    /// Wake-up interval, µs (`-i`).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub interval: u64,
    /// Measuring threads (`-t N`; cyclictest's default is one).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub threads: u32,
    /// Pin thread i to CPU i (`-a`).
    #[arg(long)]
    pub affinity: bool,
    /// Run time, seconds (`-D`).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration: u64,
    /// Latency nice of the measuring threads (schedlab extension `latency_nice`).
    #[arg(long, allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub latency_nice: Option<i32>,
    /// Leave the PM QoS latency alone (`--laptop`): idle states stay available.
    #[arg(long)]
    pub laptop: bool,
}

/// The workload, or the error of a priority outside the policy's range.
pub fn cyclictest(a: &CyclictestArgs) -> Result<Value, InputError> {
    let fifo = a.policy == "fifo";
    let priority = a.priority.unwrap_or(if fifo { 99 } else { 0 });
    let (range, expected) = if fifo {
        (1..=99, "an rt_priority 1..99 for fifo")
    } else {
        (-20..=19, "a nice value -20..19 for other")
    };
    if !range.contains(&priority) {
        return Err(InputError::new(
            "schedlab gen cyclictest",
            "--priority",
            expected,
            priority.to_string(),
        ));
    }
    let loops = a.duration * 1_000_000 / a.interval;
    let thread = |cpu: Option<u32>| {
        let mut t = json!({
            "policy": if fifo { "SCHED_FIFO" } else { "SCHED_OTHER" },
            "priority": priority,
            "loop": loops,
            "timer": { "ref": "unique", "period": a.interval, "mode": "absolute" },
        });
        if let Some(c) = cpu {
            t["cpus"] = json!([c]);
        }
        if let Some(n) = a.latency_nice {
            t["latency_nice"] = json!(n);
        }
        t
    };
    let mut tasks = Map::new();
    if a.affinity {
        for i in 0..a.threads {
            tasks.insert(format!("cyclictest{i}"), thread(Some(i)));
        }
    } else {
        let mut t = thread(None);
        t["instance"] = json!(a.threads);
        tasks.insert("cyclictest".into(), t);
    }
    // One more second than the measurement: the run ends when the threads exit.
    let mut global = json!({ "duration": a.duration + 1, "generator": "cyclictest" });
    if !a.laptop {
        global["pm_qos_cpu_dma_latency_us"] = json!(0);
    }
    Ok(json!({ "tasks": tasks, "global": global }))
}

//! The metrics of the benchmark generators that measure latency, completion or throughput
//! (hackbench, cyclictest, schbench, netperf, tbench, frames), computed from the threads' own
//! measurements and the channels' counters, the way each benchmark reports itself.

use super::{LatencyHistogram, LatencySummary};
use crate::gen::Generator;
use crate::kernel::sched::TaskState;
use crate::kernel::Kernel;
use serde::Serialize;
use serde_json::{json, Value};

/// One IPC channel at the end of the run.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelResult {
    pub name: String,
    pub kind: &'static str,
    pub capacity: u64,
    /// Bytes (units) queued at the end.
    pub queued: u64,
    #[serde(flatten)]
    pub stats: crate::kernel::pipe::ChannelStats,
}

pub fn channels(k: &Kernel) -> Vec<ChannelResult> {
    k.workload()
        .channels
        .iter()
        .zip(&k.channels.chans)
        .map(|(spec, ch)| ChannelResult {
            name: spec.name.clone(),
            kind: spec.kind.name(),
            capacity: spec.capacity,
            queued: ch.queued(),
            stats: ch.stats,
        })
        .collect()
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Latency percentiles in µs, as the benchmarks print them.
fn latency_us(s: &LatencySummary) -> Value {
    json!({
        "count": s.count,
        "min_us": us(s.min),
        "avg_us": us(s.mean),
        "p50_us": us(s.p50),
        "p90_us": us(s.p90),
        "p95_us": us(s.p95),
        "p99_us": us(s.p99),
        "max_us": us(s.max),
    })
}

/// Time from the use case's start until the last of the threads named `prefix…` exited,
/// when every one of them did.
pub fn completion_ns(k: &Kernel, prefix: &str) -> Option<u64> {
    let own = || k.tasks.iter().filter(|t| t.name.starts_with(prefix));
    if own().any(|t| t.state != TaskState::Dead) {
        return None;
    }
    let start = k.user().t_zero()?;
    let last = own()
        .filter_map(|t| t.thread.as_ref().and_then(|th| th.exited_at()))
        .max()?;
    Some(last - start)
}

/// The metric of generator `g` (one of those this module handles) over the threads and
/// channels whose names start with `prefix`, for a run that ended at `end` ns.
pub fn metrics(k: &Kernel, g: Generator, prefix: &str, end: u64) -> Value {
    let secs = end as f64 / 1e9;
    let named = |name: &'static str| {
        k.tasks.iter().filter(move |t| {
            t.name
                .strip_prefix(prefix)
                .is_some_and(|n| n.starts_with(name))
        })
    };
    let sum = |f: fn(&crate::kernel::pipe::ChannelStats) -> u64| -> u64 {
        k.workload()
            .channels
            .iter()
            .zip(&k.channels.chans)
            .filter(|(spec, _)| spec.name.starts_with(prefix))
            .map(|(_, c)| f(&c.stats))
            .sum()
    };
    match g {
        Generator::Hackbench { threads } => {
            let completion = completion_ns(k, prefix);
            json!({
                "generator": g.name(),
                "mode": if threads { "threads" } else { "processes" },
                "finished": completion.is_some(),
                "completion_ns": completion,
                "messages_sent": sum(|s| s.sends),
                "messages_received": sum(|s| s.recvs),
                "bytes_received": sum(|s| s.received_bytes),
                "writer_blocks": sum(|s| s.writer_blocks),
                "reader_blocks": sum(|s| s.reader_blocks),
            })
        }
        Generator::Cyclictest => {
            let mut all = LatencyHistogram::default();
            // A thread that has not run yet has measured nothing.
            let none = LatencyHistogram::default();
            let threads: Vec<Value> = named("cyclictest")
                .map(|t| {
                    let h = t.thread.as_ref().map_or(&none, |th| th.timer_latency());
                    all.merge(h);
                    let s = h.summary();
                    json!({
                        "thread": t.name,
                        "cycles": s.count,
                        "min_us": us(s.min),
                        "avg_us": us(s.mean),
                        "max_us": us(s.max),
                    })
                })
                .collect();
            let mut v = latency_us(&all.summary());
            v["generator"] = json!(g.name());
            v["threads"] = json!(threads);
            v
        }
        Generator::Schbench => {
            let mut all = LatencyHistogram::default();
            for t in named("worker-") {
                all.merge(&t.stats.wakeup_latency);
            }
            let mut v = latency_us(&all.summary());
            v["generator"] = json!(g.name());
            v
        }
        Generator::Netperf => {
            let (sent, received) = (sum(|s| s.sent_bytes), sum(|s| s.received_bytes));
            json!({
                "generator": g.name(),
                "send_mbit_per_sec": sent as f64 * 8.0 / 1e6 / secs,
                "mbit_per_sec": received as f64 * 8.0 / 1e6 / secs,
                "sends_per_sec": sum(|s| s.sends) as f64 / secs,
                "recvs_per_sec": sum(|s| s.recvs) as f64 / secs,
                "drops": sum(|s| s.drops),
            })
        }
        Generator::Tbench => {
            // Per client, the operations it completed are the replies it read.
            let recvs = |name: &str| {
                k.workload()
                    .channels
                    .iter()
                    .zip(&k.channels.chans)
                    .find(|(spec, _)| spec.name == name)
                    .map_or(0, |(_, c)| c.stats.recvs)
            };
            let clients = named("tbench-").count() as u32;
            let ops: Vec<u64> = (0..clients)
                .map(|i| recvs(&format!("{prefix}{}", crate::gen::tbench_channels(i).1)))
                .collect();
            let bytes: u64 = ops
                .iter()
                .map(|&n| crate::gen::tbench_payload_bytes(n))
                .sum();
            json!({
                "generator": g.name(),
                "clients": clients,
                "mb_per_sec": bytes as f64 / 1e6 / secs,
                "ops": ops.iter().sum::<u64>(),
                "ops_per_sec": ops.iter().sum::<u64>() as f64 / secs,
            })
        }
        Generator::Frames => {
            let mut lat = LatencyHistogram::default();
            let mut missed = 0;
            for th in named("frame-").filter_map(|t| t.thread.as_ref()) {
                lat.merge(th.response_time());
                missed += th.deadline_misses();
            }
            let frames = lat.count();
            let mut v = latency_us(&lat.summary());
            v["generator"] = json!(g.name());
            v["frames"] = json!(frames);
            v["missed_frames"] = json!(missed);
            v["missed_pct"] = json!(if frames > 0 {
                100.0 * missed as f64 / frames as f64
            } else {
                0.0
            });
            v
        }
        Generator::Fio | Generator::Forkloop | Generator::Pipe => {
            unreachable!("results.rs reports {}", g.name())
        }
    }
}

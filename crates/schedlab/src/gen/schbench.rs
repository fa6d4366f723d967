//! `schedlab gen schbench`: schbench's message/worker loop (`schbench -m M -t T -r S`, the
//! 2016–2022 versions seed 002 ran). A worker posts its message thread's futex and waits on
//! its own; the message thread wakes every worker that waits, waits for a post, then sleeps
//! `sleeptime`; a woken worker thinks for `cputime` and goes round again. A worker that is
//! still thinking when its message thread wakes the others is not woken until the next round,
//! as in schbench (a worker's futex is a zero-capacity `futex` channel: a post reaches only a
//! waiter). The metric is the workers' wake-up latency (from the message thread's wake-up to
//! the worker running): p50/p90/p99/max in µs. schbench's random jitter of the sleep is left
//! out.

use serde_json::{json, Map, Value};

#[derive(Debug, Clone, clap::Args)]
pub struct SchbenchArgs {
    /// Message threads (`-m`).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub message_threads: u32,
    /// Workers per message thread (`-t`).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: u32,
    /// Run time, seconds (`-r`).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub runtime: u64,
    /// The message thread's sleep between rounds, µs (`-s`).
    #[arg(long, default_value_t = 10_000)]
    pub sleeptime: u64,
    /// A worker's think time, µs of work at capacity 1024 (`-c`).
    #[arg(long, default_value_t = 10_000)]
    pub cputime: u64,
    /// Latency nice of the workers (schedlab extension `latency_nice`).
    #[arg(long, allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub latency_nice: Option<i32>,
}

pub fn schbench(a: &SchbenchArgs) -> Value {
    let mut tasks = Map::new();
    let mut channels = Map::new();
    for m in 0..a.message_threads {
        let msg = format!("msg{m}");
        // The message thread's futex remembers one post.
        channels.insert(msg.clone(), json!({ "kind": "futex", "capacity": 1 }));
        let mut mt = Map::new();
        mt.insert("loop".into(), json!(-1));
        for w in 0..a.workers {
            let chan = format!("msg{m}-worker{w}");
            channels.insert(chan.clone(), json!({ "kind": "futex", "capacity": 0 }));
            mt.insert(format!("send{w}"), json!({ "channel": chan, "bytes": 0 }));
            let mut worker = json!({
                "loop": -1,
                "send": { "channel": msg, "bytes": 0 },
                "recv": { "channel": chan },
                "run": a.cputime,
            });
            if let Some(n) = a.latency_nice {
                worker["latency_nice"] = json!(n);
            }
            tasks.insert(format!("worker-m{m}-{w}"), worker);
        }
        mt.insert("recv".into(), json!({ "channel": msg }));
        if a.sleeptime > 0 {
            mt.insert("sleep".into(), json!(a.sleeptime));
        }
        tasks.insert(format!("message-{m}"), Value::Object(mt));
    }
    json!({
        "tasks": tasks,
        "global": { "duration": a.runtime, "generator": "schbench", "channels": channels },
    })
}

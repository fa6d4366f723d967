//! `schedlab gen hackbench`: `hackbench -g G -l L [-p] [-T] [-s 100]` as seed 002 runs it.
//! Each group has 20 senders and 20 receivers; each receiver reads from its own channel (an
//! AF_UNIX stream socket pair, or a pipe with `--pipe`) that all 20 senders of its group write
//! to. A sender writes `loops` rounds of one `datasize`-byte message to each receiver of its
//! group; a receiver reads `20 · loops` messages of `datasize` bytes. Writers block while a
//! channel is full, readers while it is empty (`kernel/pipe.rs`). The metric is the time
//! from the start until the last task exits: `completion_ns`.
//!
//! Processes (the default) are tasks with the `process` extension key: each runs in an
//! address space of its own, so switching between them pays `cost.mm_switch_ns` on top of
//! a thread switch; threads (`--threads`, `-T`) share hackbench's.

use crate::kernel::pipe::{SKB_SHINFO, SKB_STRUCT};
use serde_json::{json, Map, Value};

/// Senders and receivers per group (hackbench's `num_fds`).
pub const GROUP_FDS: u32 = 20;

/// `net.core.wmem_default`: the send buffer a hackbench socket pair writes against.
const UNIX_SNDBUF: u64 = 212_992;
/// A pipe's default 16 pages: small writes merge into the last page.
const PIPE_CAPACITY: u64 = 65_536;

#[derive(Debug, Clone, clap::Args)]
pub struct HackbenchArgs {
    /// Groups of 20 senders and 20 receivers (`-g`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub groups: u32,
    /// Messages each sender writes to each receiver (`-l`).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub loops: u32,
    /// Pipes instead of AF_UNIX stream sockets (`-p`).
    #[arg(long)]
    pub pipe: bool,
    /// Threads instead of processes (`-T`): one address space for all.
    #[arg(long)]
    pub threads: bool,
    /// Bytes per message (`-s`).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub datasize: u64,
    /// Latency nice of every task (schedlab extension `latency_nice`).
    #[arg(long, allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub latency_nice: Option<i32>,
}

/// The payload an AF_UNIX socket pair holds before its writers block: as many `datasize`
/// writes as `sock_alloc_send_pskb()` lets through, each while the send buffer's charge is
/// still below `sk_sndbuf` (so the last one may overshoot it); a write charges its truesize (a
/// kmalloc'ed head of the aligned data plus the shared info, rounded up to its power-of-two
/// slab, plus the sk_buff).
fn unix_capacity(datasize: u64) -> u64 {
    let head = (datasize.div_ceil(64) * 64 + SKB_SHINFO).next_power_of_two();
    UNIX_SNDBUF.div_ceil(head + SKB_STRUCT) * datasize
}

pub fn hackbench(a: &HackbenchArgs) -> Value {
    let (kind, capacity) = if a.pipe {
        ("pipe", PIPE_CAPACITY.max(a.datasize))
    } else {
        ("unix", unix_capacity(a.datasize))
    };
    let mut tasks = Map::new();
    let mut channels = Map::new();
    for g in 0..a.groups {
        let chan = |r: u32| format!("g{g}-r{r}");
        for r in 0..GROUP_FDS {
            channels.insert(chan(r), json!({ "kind": kind, "capacity": capacity }));
        }
        let mut sender = Map::new();
        sender.insert("instance".into(), json!(GROUP_FDS));
        sender.insert("loop".into(), json!(a.loops));
        for r in 0..GROUP_FDS {
            sender.insert(
                format!("send{r}"),
                json!({ "channel": chan(r), "bytes": a.datasize }),
            );
        }
        if let Some(n) = a.latency_nice {
            sender.insert("latency_nice".into(), json!(n));
        }
        if !a.threads {
            sender.insert("process".into(), json!(true));
        }
        tasks.insert(format!("sender-g{g}"), Value::Object(sender));
        for r in 0..GROUP_FDS {
            let mut receiver = json!({
                "loop": u64::from(GROUP_FDS) * u64::from(a.loops),
                "recv": { "channel": chan(r), "bytes": a.datasize },
            });
            if let Some(n) = a.latency_nice {
                receiver["latency_nice"] = json!(n);
            }
            if !a.threads {
                receiver["process"] = json!(true);
            }
            tasks.insert(format!("receiver-g{g}-{r}"), receiver);
        }
    }
    json!({
        "tasks": tasks,
        "global": {
            // A bound, not the run's length: the run ends when every task has exited.
            "duration": 3600,
            "generator": if a.threads { "hackbench-threads" } else { "hackbench" },
            "channels": channels,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_holds_fewer_small_messages_than_its_buffer_size() {
        // 100-byte writes each charge a 512-byte slab plus the sk_buff; the 278th still
        // starts below the 212992-byte buffer (277 · 768 = 212736) and overshoots it.
        assert_eq!(unix_capacity(100), 278 * 100);
        assert!(unix_capacity(100) < UNIX_SNDBUF);
    }
}

//! `schedlab gen netperf`: `netperf -t UDP_STREAM|TCP_STREAM -- -m SIZE` on loopback, as
//! seeds 000 and 001 measure uclamp's fast-path cost with it. A sender thread sends
//! `size`-byte messages as fast as it can; a receiver thread reads them. Each send pays the
//! protocol's transmit path and the loopback receive softirq, which loopback runs on the
//! sending CPU (`cost.inet_op_ns`, `cost.net_rx_ns`, `cost.copy_ps_per_byte`); each receive
//! pays the receive system call and the copy out. UDP drops datagrams that find the receive
//! buffer full; TCP blocks the sender (flow control) and a read takes all queued bytes.
//! Metric: received throughput in Mbit/s (10^6 bits, as netperf prints) and messages per
//! second sent and received.

use serde_json::{json, Value};

/// `net.core.rmem_default`: the UDP receive buffer.
const UDP_RCVBUF: u64 = 212_992;
/// `net.ipv4.tcp_rmem[1]`: the default TCP receive buffer.
const TCP_RCVBUF: u64 = 131_072;

#[derive(Debug, Clone, clap::Args)]
pub struct NetperfArgs {
    /// The test (`-t`).
    #[arg(long, default_value = "UDP_STREAM", value_parser = ["UDP_STREAM", "TCP_STREAM"])]
    pub test: String,
    /// Send size in bytes (`-m`; the seeds use 64…16384).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=65_507))]
    pub size: u64,
    /// Run time, seconds (`-l`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration: u64,
    /// Pin the sender to this CPU (netperf `-T`); default: free to move.
    #[arg(long)]
    pub sender_cpu: Option<usize>,
    /// Pin the receiver (netserver) to this CPU.
    #[arg(long)]
    pub receiver_cpu: Option<usize>,
    /// Give both threads this uclamp min (rt-app `util_min`).
    #[arg(long)]
    pub uclamp_min: Option<i32>,
}

pub fn netperf(a: &NetperfArgs) -> Value {
    let udp = a.test == "UDP_STREAM";
    let (kind, capacity) = if udp {
        ("udp", UDP_RCVBUF)
    } else {
        ("tcp", TCP_RCVBUF.max(a.size))
    };
    let mut sender = json!({
        "loop": -1,
        "send": { "channel": "loopback", "bytes": a.size },
    });
    let mut receiver = json!({
        "loop": -1,
        "recv": { "channel": "loopback" },
    });
    for (t, cpu) in [(&mut sender, a.sender_cpu), (&mut receiver, a.receiver_cpu)] {
        if let Some(c) = cpu {
            t["cpus"] = json!([c]);
        }
        if let Some(m) = a.uclamp_min {
            t["util_min"] = json!(m);
        }
    }
    json!({
        "tasks": { "netperf": sender, "netserver": receiver },
        "global": {
            "duration": a.duration,
            "generator": "netperf",
            "channels": { "loopback": { "kind": kind, "capacity": capacity } },
        },
    })
}

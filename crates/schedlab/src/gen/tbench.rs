//! `schedlab gen tbench --clients N`: dbench's network load, `tbench N` against `tbench_srv`
//! on loopback (seed 002's server tables). Each client is a process with its own TCP
//! connection to its own server process (tbench_srv forks one per connection). A client
//! replays a NetBench load as SMB-sized packet exchanges (dbench's `sockio.c`,
//! `do_packets(send_size, recv_size)`): it writes a request, then blocks reading the reply;
//! the server reads the request and writes the reply. Only ReadX and WriteX payloads count
//! as throughput (`child->bytes`), reported as dbench does, in MB/s of 10^6 bytes.
//!
//! The load: dbench's `client.txt` (a recorded NetBench run, thousands of operations) is not
//! at hand, so each client repeats [`OPS`], one file's open/stat/read/write/close/list cycle;
//! each packet size is `sockio.c`'s formula for that operation. The kernel work of each send
//! and receive is the loopback TCP path of `kernel/pipe.rs` (`cost.*`).

use serde_json::{json, Map, Value};

/// `net.ipv4.tcp_rmem[1]`: the default TCP receive buffer.
const TCP_RCVBUF: u64 = 131_072;

/// A path as the load names files, e.g. `\clients\client1\~dmtmp\PWRPNT\PPTC112.TMP`:
/// 40 characters, sent as UTF-16 (2 bytes each).
const NAME_CHARS: u64 = 40;

/// One operation: the request and reply sizes of `do_packets()` and the payload bytes
/// dbench counts (`child->bytes`).
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub send: u64,
    pub recv: u64,
    pub payload: u64,
}

/// `nb_readx()`: a 59-byte request, the data back.
const fn readx(size: u64) -> Op {
    Op {
        send: 39 + 20,
        recv: 39 + 20 + size,
        payload: size,
    }
}

/// `nb_writex()`: the data out, a 55-byte reply.
const fn writex(size: u64) -> Op {
    Op {
        send: 39 + 20 + size,
        recv: 39 + 16,
        payload: size,
    }
}

/// The cycle each client repeats (sizes from `sockio.c`).
pub const OPS: [Op; 9] = [
    // NTCreateX
    Op {
        send: 70 + 2 + NAME_CHARS * 2 + 2,
        recv: 39 + 12 * 4,
        payload: 0,
    },
    // QUERY_FILE_INFORMATION
    Op {
        send: 39 + 20,
        recv: 39 + 32,
        payload: 0,
    },
    // ReadX of 4, 16 and 64 KiB; WriteX of 4 and 16 KiB.
    readx(4096),
    readx(16384),
    readx(65536),
    writex(4096),
    writex(16384),
    // Close
    Op {
        send: 39 + 8,
        recv: 39,
        payload: 0,
    },
    // FIND_FIRST returning 10 entries.
    Op {
        send: 39 + 20 + NAME_CHARS * 2,
        recv: 39 + 90 * 10,
        payload: 0,
    },
];

/// Payload bytes of the first `ops` operations of a client (dbench's `child->bytes`).
pub fn payload_bytes(ops: u64) -> u64 {
    let n = OPS.len() as u64;
    let per_cycle: u64 = OPS.iter().map(|o| o.payload).sum();
    let partial: u64 = OPS[..(ops % n) as usize].iter().map(|o| o.payload).sum();
    ops / n * per_cycle + partial
}

#[derive(Debug, Clone, clap::Args)]
pub struct TbenchArgs {
    /// Number of clients (`tbench N`), each with its own server process.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub clients: u32,
    /// Run time, seconds (`-t`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration: u64,
}

/// Client `i`'s request channel and reply channel (one TCP connection, one direction each).
pub fn channels(i: u32) -> (String, String) {
    (format!("tb{i}-req"), format!("tb{i}-reply"))
}

pub fn tbench(a: &TbenchArgs) -> Value {
    let mut tasks = Map::new();
    let mut chans = Map::new();
    for i in 0..a.clients {
        let (req, reply) = channels(i);
        for c in [&req, &reply] {
            chans.insert(c.clone(), json!({ "kind": "tcp", "capacity": TCP_RCVBUF }));
        }
        let mut client = Map::new();
        let mut server = Map::new();
        // dbench forks its clients and tbench_srv forks a server per connection: each is a
        // process of its own.
        for m in [&mut client, &mut server] {
            m.insert("loop".into(), json!(-1));
            m.insert("process".into(), json!(true));
        }
        for (k, op) in OPS.iter().enumerate() {
            client.insert(
                format!("send{k}"),
                json!({ "channel": req, "bytes": op.send }),
            );
            client.insert(
                format!("recv{k}"),
                json!({ "channel": reply, "bytes": op.recv }),
            );
            server.insert(
                format!("recv{k}"),
                json!({ "channel": req, "bytes": op.send }),
            );
            server.insert(
                format!("send{k}"),
                json!({ "channel": reply, "bytes": op.recv }),
            );
        }
        tasks.insert(format!("tbench-{i}"), Value::Object(client));
        tasks.insert(format!("tbench_srv-{i}"), Value::Object(server));
    }
    json!({
        "tasks": tasks,
        "global": {
            "duration": a.duration,
            "generator": "tbench",
            "channels": chans,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_counts_only_reads_and_writes() {
        let cycle: u64 = 4096 + 16384 + 65536 + 4096 + 16384;
        assert_eq!(payload_bytes(0), 0);
        assert_eq!(payload_bytes(OPS.len() as u64), cycle);
        // NTCreateX, QUERY_FILE_INFORMATION, then the first ReadX.
        assert_eq!(payload_bytes(3), 4096);
        assert_eq!(
            payload_bytes(2 * OPS.len() as u64 + 4),
            2 * cycle + 4096 + 16384
        );
    }

    #[test]
    fn every_packet_fits_the_receive_buffer() {
        // A reply is one write the reader takes whole, as tbench's MSG_WAITALL read does.
        assert!(OPS
            .iter()
            .all(|o| o.send <= TCP_RCVBUF && o.recv <= TCP_RCVBUF));
    }
}

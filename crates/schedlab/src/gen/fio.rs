//! `schedlab gen fio`: fio's `--rw=randread --ioengine=psync --iodepth=1` as seed 004 runs it.
//! One thread loops: CPU work to issue the read (the syscall path and fio's bookkeeping),
//! a blocking read that sleeps in iowait for the device's service time, CPU work to complete
//! it. With iodepth 1 and psync the next I/O is issued only when the previous completed, so
//! IOPS = 1 / (service time + CPU time per I/O), and the CPU time depends on the frequency —
//! which is what iowait boost is for.

use serde_json::json;

/// fio's knobs that matter to the scheduler.
#[derive(Debug, Clone, clap::Args)]
pub struct FioArgs {
    /// Only randread is modelled (reads and writes differ only in the device time).
    #[arg(long, default_value = "randread", value_parser = ["randread", "read"])]
    pub rw: String,
    /// Block size (informational: the device service time is what counts).
    #[arg(long, default_value = "4k")]
    pub bs: String,
    #[arg(long, default_value = "psync", value_parser = ["psync", "sync"])]
    pub ioengine: String,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1))]
    pub iodepth: u32,
    /// Device service time of one I/O, µs (a 4k random read on NVMe takes about 80).
    #[arg(long = "service-time", default_value_t = 80)]
    pub service_us: u64,
    /// CPU work to issue one I/O (syscall, block layer, fio's bookkeeping), µs at capacity
    /// 1024: with `--complete-us`, about 190 µs per I/O on an rk3399 A53 at 1.4 GHz.
    #[arg(long = "issue-us", default_value_t = 30)]
    pub issue_us: u64,
    /// CPU work to complete one I/O, µs at capacity 1024.
    #[arg(long = "complete-us", default_value_t = 40)]
    pub complete_us: u64,
    /// Run time, seconds.
    #[arg(long, default_value_t = 10)]
    pub runtime: u64,
    /// Pin fio to this CPU (default: free to move).
    #[arg(long)]
    pub cpu: Option<usize>,
}

pub fn fio(a: &FioArgs) -> serde_json::Value {
    let mut task = json!({
        "loop": -1,
        "run": a.issue_us,
        "iorun": { "service_us": a.service_us },
        "run1": a.complete_us,
    });
    if let Some(cpu) = a.cpu {
        task["cpus"] = json!([cpu]);
    }
    json!({
        "tasks": { "fio": task },
        "global": { "duration": a.runtime, "generator": "fio" },
    })
}

//! `schedlab gen frames`: seed 002's TouchLatency-like load on an Android phone. A frame
//! task renders one frame per display period (16.6 ms at 60 Hz): it wakes at the period's
//! start, does its work, and misses the frame if it finishes after the period's end (the next
//! vsync). Beside it, background tasks each run 4 ms every 37.777 ms, eight of them so that
//! the 8 CPUs are all used now and then without being overloaded. Metric: frames, missed
//! frames and their share, and the frame latency (period start to frame done) percentiles.

use serde_json::{json, Map, Value};

#[derive(Debug, Clone, clap::Args)]
pub struct FramesArgs {
    /// Display period, µs (60 Hz).
    #[arg(long, default_value_t = 16_666, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub period: u64,
    /// Work of one frame, µs at capacity 1024.
    #[arg(long = "frame-us", default_value_t = 2_000)]
    pub frame_us: u64,
    /// Background tasks.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=256))]
    pub background: u32,
    /// Work of a background activation, µs at capacity 1024.
    #[arg(long = "background-us", default_value_t = 4_000)]
    pub background_us: u64,
    /// Period of the background tasks, µs.
    #[arg(long = "background-period", default_value_t = 37_777, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub background_period: u64,
    /// Run time, seconds.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration: u64,
    /// Latency nice of the frame task (schedlab extension `latency_nice`).
    #[arg(long, allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
    pub latency_nice: Option<i32>,
}

pub fn frames(a: &FramesArgs) -> Value {
    let mut tasks = Map::new();
    // The timer first: the thread waits for its period's start, then renders; the next
    // timer event tells whether the frame was done before the period's end.
    let mut frame = json!({
        "loop": -1,
        "timer": { "ref": "unique", "period": a.period, "mode": "absolute" },
        "run": a.frame_us,
    });
    if let Some(n) = a.latency_nice {
        frame["latency_nice"] = json!(n);
    }
    tasks.insert("frame".into(), frame);
    for i in 0..a.background {
        tasks.insert(
            format!("background{i}"),
            json!({
                "loop": -1,
                "timer": { "ref": "unique", "period": a.background_period, "mode": "absolute" },
                "run": a.background_us,
            }),
        );
    }
    json!({
        "tasks": tasks,
        "global": { "duration": a.duration, "generator": "frames" },
    })
}

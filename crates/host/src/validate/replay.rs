//! Real traces replayed: each workload recorded here with `host record`, its tasks extracted
//! and run on the platform (what `schedlab replay` does), their CPU time and wake-ups in the
//! trace against the replay.

use super::{Item, Opts, FAMILY_REPLAY};
use crate::measure;
use crate::record;
use schedlab::replay::{fidelity, FromTraceArgs};
use schedlab::report::validation::Row;
use std::path::PathBuf;

/// A recorded trace to replay: its name, file, and the comms of its tasks.
pub type Trace = (String, PathBuf, Vec<String>);

/// Record one run of each benchmark (those whose tool is installed) for the replay rows.
pub fn record_benchmarks(o: &Opts, traces: &mut Vec<Trace>) -> Vec<Item> {
    let d = 1;
    let benches: [(&str, String, &[&str]); 5] = [
        ("hackbench", "hackbench -g 1 -l 50".into(), &["hackbench"]),
        (
            "perf-pipe-threads",
            format!(
                "perf bench sched pipe -T -l {}",
                super::bench::pipe_loops(true)
            ),
            &["sched-pipe", "perf"],
        ),
        (
            "perf-pipe-processes",
            format!(
                "perf bench sched pipe -l {}",
                super::bench::pipe_loops(true)
            ),
            &["sched-pipe", "perf"],
        ),
        (
            "cyclictest-other",
            format!("cyclictest -m -q -i 1000 -D {d} --policy other"),
            &["cyclictest"],
        ),
        (
            "cyclictest-fifo",
            format!("cyclictest -m -q -i 1000 -D {d} -p 50"),
            &["cyclictest"],
        ),
    ];
    let dir = o.work.join("replay");
    let _ = std::fs::create_dir_all(&dir);
    let mut items = Vec::new();
    for (name, cmd, comms) in benches {
        let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        if !measure::have(&words[0]) {
            items.push(Item::rows(Row::not_run(
                FAMILY_REPLAY,
                name,
                format!("{} is not installed", words[0]),
            )));
            continue;
        }
        (o.log)(&format!("recording `{cmd}`"));
        let trace = dir.join(format!("{name}.txt"));
        let req = record::Request {
            out: trace.clone(),
            events: None,
            buffer_kb: None,
            tracefs: None,
            command: words,
            output: Some(dir.join(format!("{name}.out"))),
        };
        match record::record(&req) {
            Ok(r) if r.status == 0 => traces.push((
                format!("{name} (`{cmd}`)"),
                trace,
                comms.iter().map(|c| c.to_string()).collect(),
            )),
            Ok(r) => items.push(Item::rows(Row::not_run(
                FAMILY_REPLAY,
                name,
                format!("`{cmd}` {}", r.ended),
            ))),
            Err(e) => items.push(Item::rows(Row::not_run(
                FAMILY_REPLAY,
                name,
                format!("host record: {e}"),
            ))),
        }
    }
    items
}

/// The replay of each trace, queued: rows of its tasks' CPU time and wake-ups, trace (one
/// run) against the replays (one per seed).
pub fn replays(o: &Opts, traces: Vec<Trace>) -> Vec<Item> {
    traces
        .into_iter()
        .map(|(name, trace, comms)| {
            let platform = o.platform.display().to_string();
            let seeds = o.runs as u64;
            Item::sim(move || {
                let args = FromTraceArgs {
                    trace,
                    trace_platform: Some(platform.clone()),
                    from: None,
                    to: None,
                    tasks: comms,
                    min_runtime: None,
                    pin: false,
                    pin_runs: false,
                };
                let fail = |e: String| vec![Row::not_run(FAMILY_REPLAY, &name, e)];
                let l = match args.load() {
                    Ok(l) => l,
                    Err(e) => return fail(format!("the trace: {e}")),
                };
                let ext = l.extraction();
                let exp = match l.experiment(&ext, &platform) {
                    Ok(e) => e,
                    Err(e) => return fail(format!("the extraction: {e}")),
                };
                let (mut cpu, mut wake) = ((0.0, Vec::new()), (0.0, Vec::new()));
                for seed in 0..seeds {
                    let r = match fidelity::run(&l, &ext, &exp, seed, None, None) {
                        Ok(r) => r,
                        Err(e) => return fail(format!("schedlab: {e}")),
                    };
                    let sum = |f: fn(&fidelity::TaskRow) -> u64| {
                        r.tasks.iter().map(f).sum::<u64>() as f64
                    };
                    cpu.0 = sum(|t| t.trace_runtime_ns) / 1e6;
                    cpu.1.push(sum(|t| t.replay_runtime_ns) / 1e6);
                    wake.0 = sum(|t| t.trace_wakeups);
                    wake.1.push(sum(|t| t.replay_wakeups));
                }
                vec![
                    super::row(FAMILY_REPLAY, &format!("{name} cpu ms"), &[cpu.0], &cpu.1),
                    super::row(
                        FAMILY_REPLAY,
                        &format!("{name} wake-ups"),
                        &[wake.0],
                        &wake.1,
                    ),
                ]
            })
        })
        .collect()
}

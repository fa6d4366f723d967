//! `schedlab gen pipe`: `perf bench sched pipe -T`, two threads passing a token back and
//! forth (seeds 000 and 001 measure uclamp's fast-path cost with it). Each thread loops:
//! take the mutex, wake the other, wait to be woken, release — one round trip per loop.
//! `--processes` makes them two processes, as `perf bench sched pipe` without `-T` runs.

use serde_json::json;

#[derive(Debug, Clone, clap::Args)]
pub struct PipeArgs {
    /// Run time, seconds (perf's `-l` loops become a duration here).
    #[arg(long, default_value_t = 5)]
    pub runtime: u64,
    /// Pin both threads to this CPU (perf bench sched pipe does not pin by default).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Give both threads this uclamp min (rt-app `util_min`): uclamp is then in use.
    #[arg(long)]
    pub uclamp_min: Option<i32>,
    /// Run both threads in this cgroup (seed 000 measures the cost per cgroup level).
    #[arg(long)]
    pub taskgroup: Option<String>,
    /// Two processes instead of two threads (`perf bench sched pipe` without `-T`): each
    /// switch between them also switches the address space (`cost.mm_switch_ns`).
    #[arg(long)]
    pub processes: bool,
}

pub fn pipe(a: &PipeArgs) -> serde_json::Value {
    let mut thread = json!({
        "loop": -1,
        "lock": "pipe",
        "signal": "token",
        "wait": { "ref": "token", "mutex": "pipe" },
        "unlock": "pipe",
    });
    if let Some(cpu) = a.cpu {
        thread["cpus"] = json!([cpu]);
    }
    if let Some(m) = a.uclamp_min {
        thread["util_min"] = json!(m);
    }
    if let Some(g) = &a.taskgroup {
        thread["taskgroup"] = json!(g);
    }
    if a.processes {
        thread["process"] = json!(true);
    }
    json!({
        "tasks": { "sender": thread.clone(), "receiver": thread },
        "global": { "duration": a.runtime, "generator": "pipe" },
    })
}

//! `schedlab gen forkloop`: seed 003's test — launch a program, wait for it to finish, again.
//! A parent thread does the fork's CPU work, forks a child and suspends; the child runs the
//! program's work (exec, the program, exit) and resumes the parent as it exits. One short
//! task at a time, each a new PID: `pids_per_sec`.

use serde_json::json;

#[derive(Debug, Clone, clap::Args)]
pub struct ForkloopArgs {
    /// CPU work of the parent per launch (fork + wait), µs at capacity 1024.
    #[arg(long = "parent-us", default_value_t = 80)]
    pub parent_us: u64,
    /// CPU work of the child (exec + program + exit), µs at capacity 1024: the null program
    /// of seed 003's test 1 by default; test 2's "package of work" is about 2000.
    #[arg(long = "child-us", default_value_t = 180)]
    pub child_us: u64,
    /// Run time, seconds.
    #[arg(long, default_value_t = 10)]
    pub runtime: u64,
    /// Run both tasks in this cgroup (e.g. /user.slice, where Doug's shell ran).
    #[arg(long)]
    pub taskgroup: Option<String>,
    /// Pin the launcher to these CPUs (comma-separated); each child inherits its mask, as
    /// under `taskset` (seed 003's "reference": performance with the affinity forced).
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<usize>,
}

pub fn forkloop(a: &ForkloopArgs) -> serde_json::Value {
    let mut w = json!({
        "tasks": {
            "launcher": { "loop": -1, "run": a.parent_us, "fork": "child", "suspend": "launcher" },
            "child": { "instance": 0, "loop": 1, "run": a.child_us, "resume": "launcher", "process": true },
        },
        "global": { "duration": a.runtime, "generator": "forkloop", "fork_limit": 0 },
    });
    if let Some(g) = &a.taskgroup {
        w["tasks"]["launcher"]["taskgroup"] = json!(g);
        w["tasks"]["child"]["taskgroup"] = json!(g);
    }
    if !a.cpus.is_empty() {
        w["tasks"]["launcher"]["cpus"] = json!(a.cpus);
    }
    w
}

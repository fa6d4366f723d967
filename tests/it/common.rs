//! Helpers shared by the integration tests.
#![allow(dead_code)]

use schedlab::kernel::Variant;
use schedlab::machine;
use schedlab::platform::Platform;
use schedlab::report::{Results, TaskResult};
use schedlab::workload::parse_workload;
use schedlab::{simulate, Outputs, Run};
use std::path::PathBuf;

/// Simulate an inline rt-app JSON workload.
pub fn run_json(platform: &str, json: &str, duration_ns: u64, sets: &[&str]) -> Results {
    run_full(platform, json, duration_ns, sets, 0, &Outputs::default())
}

pub fn run_full(
    platform: &str,
    json: &str,
    duration_ns: u64,
    sets: &[&str],
    seed: u64,
    out: &Outputs,
) -> Results {
    let mut variant = Variant::for_platform(&Platform::resolve(platform).expect("platform"));
    for s in sets {
        variant.set_pair(s, "test").expect("valid switch");
    }
    run_variant(platform, json, duration_ns, variant, seed, out)
}

/// Simulate with a prepared variant (e.g. one with timed writes).
pub fn run_variant(
    platform: &str,
    json: &str,
    duration_ns: u64,
    variant: Variant,
    seed: u64,
    out: &Outputs,
) -> Results {
    let platform = Platform::resolve(platform).expect("platform");
    let workload = parse_workload(json, "test.json").expect("workload parses");
    simulate(
        Run {
            platform,
            workload,
            variant,
            duration_ns: Some(duration_ns),
            seed,
            reproducible: true,
        },
        out,
    )
    .expect("simulation runs")
}

/// The longest a wake-up that waits for nothing but the kernel's own path can take on
/// `cpu` of `platform` (the rules of `machine.rs`): the interrupt, ttwu with placement over
/// every CPU and EAS's domains, enqueue and dequeue, `schedule()`, a context and
/// address-space switch two group levels deep and an IPI's work at the CPU's lowest OPP,
/// plus the IPI's delivery, the deepest idle exit (of the CPU's states and its cluster's)
/// and a refill of a default working set and the kernel state from memory.
pub fn wake_path_bound_ns(platform: &str, cpu: usize) -> u64 {
    let p = Platform::resolve(platform).expect("platform");
    let cluster = &p.freq_domains[p.cpus[cpu].freq_domain].cluster_idle_states;
    let exit = p.cpus[cpu]
        .idle_states
        .iter()
        .chain(cluster)
        .map(|s| s.exit_latency_ns)
        .max()
        .unwrap_or(0);
    busy_wake_path_bound_ns(platform, cpu) + machine::idle_exit(exit).wall_ns
}

/// The same bound for a wake-up onto a CPU that is busy (no idle exit).
pub fn busy_wake_path_bound_ns(platform: &str, cpu: usize) -> u64 {
    let p = Platform::resolve(platform).expect("platform");
    let c = &p.costs;
    let scan = machine::Placement {
        rt: false,
        nr_cpus: p.nr_cpus() as u64,
        asymmetric: true,
        eas: true,
        nr_pd: p.freq_domains.len() as u64,
    };
    let ipi = machine::ipi(c);
    let work: u64 = [
        machine::timer_interrupt(c, true),
        machine::wakeup(c, machine::placement_scan(scan, || 0)),
        machine::queue_op(c, 1, 0),
        machine::queue_op(c, 1, 0),
        machine::schedule(c),
        machine::context_switch(c, true, 2),
        ipi.send,
        ipi.handler,
    ]
    .iter()
    .map(|charge| charge.work_ns)
    .sum();
    let cap = p.capacity_at(cpu, p.min_freq_khz(cpu)).max(1) as u64;
    let ws = schedlab::workload::DEFAULT_WORKING_SET;
    let refill = machine::cache_refill(&p.memory, ws, machine::Resume::OtherLlc { distance: 10 });
    work * 1024 / cap + ipi.delivery_ns + refill.wall_ns
}

pub fn task<'a>(r: &'a Results, name: &str) -> &'a TaskResult {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| {
        panic!(
            "no task {name} in {:?}",
            r.tasks.iter().map(|t| &t.name).collect::<Vec<_>>()
        )
    })
}

/// A test that cannot check what it is for (LISA or `../shared` missing) says so where the
/// test runner's output shows it — a `SKIPPED` line on the process's standard error, which
/// the runner does not capture and `scripts/test` counts into its summary line — and fails
/// under `CI=true`, where everything must be present.
pub fn skip(why: &str) {
    skip_under(std::env::var("CI").as_deref() == Ok("true"), why)
}

/// [`skip`], with whether this is CI given.
pub fn skip_under(ci: bool, why: &str) {
    if ci {
        panic!("{} under CI=true", skip_line(why));
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", skip_line(why));
}

/// The line a skip of the running test prints.
pub fn skip_line(why: &str) -> String {
    let name = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    format!("SKIPPED {name}: {why} (checked nothing; fails under CI=true)")
}

/// `../shared/SUB` beside the checkout, or a visible skip.
pub fn shared_dir(sub: &str) -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(sub);
    if d.is_dir() {
        Some(d)
    } else {
        skip(&format!("{} not found", d.display()));
        None
    }
}

/// LISA's Python (`scripts/install-lisa.sh` installs it into target/lisa-venv), or a
/// visible skip.
pub fn lisa_python() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/lisa-venv/bin/python");
    if p.exists() {
        Some(p)
    } else {
        skip("LISA is not installed (run scripts/install-lisa.sh)");
        None
    }
}

/// The shared rt-app examples, if this checkout has `../shared` beside it (a visible skip
/// otherwise).
pub fn examples_dir() -> Option<PathBuf> {
    shared_dir("workloads/rt-app-examples")
}

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// Timestamps (s) of the trace lines `keep` accepts.
pub fn trace_times(text: &str, keep: impl Fn(&str) -> bool) -> Vec<f64> {
    text.lines()
        .filter(|l| keep(l))
        .map(|l| {
            l.split_whitespace()
                .nth(2)
                .unwrap()
                .trim_end_matches(':')
                .parse()
                .unwrap()
        })
        .collect()
}

/// `schedlab gen fio` with its defaults (80 µs device, 30 + 40 µs of CPU per I/O) for
/// `runtime` seconds.
pub fn fio_json(runtime: u64) -> String {
    let args = schedlab::gen::FioArgs {
        rw: "randread".into(),
        bs: "4k".into(),
        ioengine: "psync".into(),
        iodepth: 1,
        service_us: 80,
        issue_us: 30,
        complete_us: 40,
        runtime,
        cpu: None,
    };
    schedlab::gen::fio(&args).to_string()
}

/// Run the `schedlab` binary with `args`, `stdin` on its standard input.
pub fn schedlab_cli(args: &[&str], stdin: Option<&str>) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedlab runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

/// An error's key path: its place without the `(line L column C)` after it.
pub fn key_path(place: &str) -> &str {
    place.split(" (line ").next().unwrap_or(place)
}

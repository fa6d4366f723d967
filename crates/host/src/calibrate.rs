//! `schedlab host calibrate`: the host platform's kernel path costs fitted on named
//! microbenchmarks of this machine, one measurement per fitted value, as the seed calibration
//! fits its costs (REPRODUCTIONS.md, "The machine's time" and "Host calibration"):
//!
//! 1. the common scale of every kernel path — the CPU's work per cycle relative to a
//!    Cortex-A53, which `costs.rs`'s `work_per_cycle` only estimates for x86 — on `taskset -c
//!    C perf bench sched pipe -T -l N` (threads, µs per round trip, both on the machine's last
//!    CPU): `schedlab gen pipe --cpu C` is simulated on the platform and the scale bisected
//!    until it simulates the machine's median. One CPU, because the round trip is then the
//!    wake-up, switch and pipe paths alone: across two CPUs it also holds the IPI and the
//!    idle exit of the CPU it wakes, which on a quiet VM is a halted vCPU woken by the
//!    hypervisor (2.0 µs/op on one CPU, 2–45 µs/op across two, REPRODUCTIONS.md);
//! 2. `unix_op_ns` on `perf bench sched messaging` (20 senders × 20 receivers per group,
//!    100-byte messages over AF_UNIX sockets, processes: perf's defaults are 10 groups of 100
//!    loops), simulated as `schedlab gen hackbench` of the same shape, at the fitted scale;
//! 3. `pipe_op_ns` on `perf bench sched messaging -p` (the same over pipes), simulated as
//!    `schedlab gen hackbench --pipe`.
//!
//! Every other cost keeps its derivation: its A53 cycles at the fitted scale (the IPC costs
//! too, by their ratios), or its wall time. The fits are deterministic given the measured
//! medians (`fit` takes them; `--measured-pipe-us`/`--measured-messaging-s` give them
//! without running anything).

use crate::measure::{self, words, Runs};
use schedlab::error::InputError;
use schedlab::gen::{hackbench, pipe, HackbenchArgs, PipeArgs};
use schedlab::kernel::Variant;
use schedlab::platform::{a53_cycles, work_per_cycle, Costs, Platform, COST_FIELDS};
use schedlab::report::validation::Spread;
use schedlab::{simulate, Error, Outputs, Run};
use std::fmt::Write;

/// What is measured and simulated, and how long each simulation runs.
#[derive(Debug, Clone)]
pub struct Spec {
    /// `taskset -c PIPE_CPU perf bench sched pipe -T -l LOOPS`.
    pub pipe_loops: u64,
    /// The CPU both threads of the pipe benchmark are pinned to (the machine's last).
    pub pipe_cpu: usize,
    /// `perf bench sched messaging -g GROUPS -l LOOPS`.
    pub messaging_groups: u32,
    pub messaging_loops: u32,
    /// Simulated time of each `gen pipe` run (its µs/op is over the whole run).
    pub pipe_sim_ns: u64,
    /// The simulated messaging time is the mean over seeds 0..SEEDS (the seed fits take
    /// the mean of 5; hackbench's completion spreads a few % between seeds).
    pub seeds: u64,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            pipe_loops: 50_000,
            pipe_cpu: 0,
            messaging_groups: 10,
            messaging_loops: 100,
            pipe_sim_ns: 200_000_000,
            seeds: 3,
        }
    }
}

impl Spec {
    /// The default sizes, the pipe benchmark pinned to `p`'s last CPU.
    pub fn for_platform(p: &Platform) -> Spec {
        Spec {
            pipe_cpu: p.cpus.len().saturating_sub(1),
            ..Spec::default()
        }
    }

    pub fn pipe_command(&self) -> Vec<String> {
        words(&format!(
            "taskset -c {} perf bench sched pipe -T -l {}",
            self.pipe_cpu, self.pipe_loops
        ))
    }

    /// `perf bench sched messaging [-p]`: over AF_UNIX sockets, or pipes.
    pub fn messaging_command(&self, op: IpcOp) -> Vec<String> {
        words(&format!(
            "{} -g {} -l {}",
            op.benchmark(),
            self.messaging_groups,
            self.messaging_loops
        ))
    }
}

/// The IPC operation a messaging benchmark fits: a write or read on an AF_UNIX socket
/// (`unix_op_ns`) or on a pipe (`pipe_op_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcOp {
    Unix,
    Pipe,
}

impl IpcOp {
    /// The `[costs]` key.
    pub fn key(self) -> &'static str {
        match self {
            IpcOp::Unix => "unix_op_ns",
            IpcOp::Pipe => "pipe_op_ns",
        }
    }

    fn get(self, c: &Costs) -> u64 {
        match self {
            IpcOp::Unix => c.ipc.unix_op_ns,
            IpcOp::Pipe => c.ipc.pipe_op_ns,
        }
    }

    fn set(self, c: &mut Costs, ns: u64) {
        match self {
            IpcOp::Unix => c.ipc.unix_op_ns = ns,
            IpcOp::Pipe => c.ipc.pipe_op_ns = ns,
        }
    }

    /// The benchmark it is fitted on, without its sizes.
    fn benchmark(self) -> &'static str {
        match self {
            IpcOp::Unix => "perf bench sched messaging",
            IpcOp::Pipe => "perf bench sched messaging -p",
        }
    }

    /// What the benchmark sends over.
    fn over(self) -> &'static str {
        match self {
            IpcOp::Unix => "AF_UNIX sockets",
            IpcOp::Pipe => "pipes",
        }
    }
}

/// The line of a calibrated platform file that says the scale was fitted on `perf bench
/// sched pipe -T` on one CPU (`host validate` marks that row "fit"); absent when the
/// measurement was out of the simulation's reach.
pub const PIPE_FIT_MARK: &str =
    "# host calibrate fit: the scale on perf bench sched pipe -T, both threads on one CPU";

/// A measured benchmark: its command and each run's number (µs/op or s).
#[derive(Debug, Clone)]
pub struct Measured {
    pub command: String,
    pub unit: &'static str,
    pub runs: Runs,
}

impl Measured {
    fn spread(&self) -> Spread {
        self.runs.spread().expect("a measurement has runs")
    }

    /// "N runs: median M unit (min..max), steal S ms, others O% of the CPUs".
    fn describe(&self) -> String {
        let s = self.spread();
        let n = self.runs.noise();
        format!(
            "{} run(s): median {:.4} {u} ({:.4}..{:.4}), steal {:.0} ms, the machine's other tasks {:.0}% of its CPUs",
            s.n,
            s.median,
            s.min,
            s.max,
            n.steal_ms,
            n.others_pct,
            u = self.unit
        )
    }
}

fn measure(
    cmd: &[String],
    runs: usize,
    unit: &'static str,
    parse: impl Fn(&str) -> Option<f64>,
) -> Result<Measured, String> {
    Ok(Measured {
        command: cmd.join(" "),
        unit,
        runs: measure::runs_of(cmd, runs, unit, parse)?,
    })
}

/// `perf bench sched pipe -T` on one CPU of the machine: µs per round trip.
pub fn measure_pipe(spec: &Spec, runs: usize) -> Result<Measured, String> {
    measure(&spec.pipe_command(), runs, "µs/op", measure::perf_pipe_us)
}

/// `perf bench sched messaging [-p]` on the machine: its total time, s.
pub fn measure_messaging(spec: &Spec, op: IpcOp, runs: usize) -> Result<Measured, String> {
    measure(
        &spec.messaging_command(op),
        runs,
        "s",
        measure::perf_total_s,
    )
}

/// The CPU the platform's costs are those of: the capacity-1024 CPU's uarch at its highest
/// frequency, as the platform reader takes them.
fn reference(p: &Platform) -> (String, u32) {
    let fastest = p
        .cpus
        .iter()
        .enumerate()
        .max_by_key(|(i, c)| (c.capacity_orig, std::cmp::Reverse(*i)));
    fastest.map_or((String::new(), 1_000_000), |(i, c)| {
        (c.uarch.clone(), p.max_freq_khz(i))
    })
}

/// The platform with every cost derived at `scale` (work per cycle over an A53's).
pub fn at_scale(p: &Platform, scale: f64) -> Platform {
    let (uarch, khz) = reference(p);
    let mut q = p.clone();
    q.costs = Costs::for_work_per_cycle(&uarch, scale, khz);
    q
}

fn run_workload(p: &Platform, json: &serde_json::Value, ns: Option<u64>, seed: u64) -> f64 {
    let w = schedlab::workload::parse_workload(&json.to_string(), "calibrate.json")
        .expect("a generator's workload parses");
    let r = simulate(
        Run {
            variant: Variant::for_platform(p),
            platform: p.clone(),
            workload: w,
            duration_ns: ns,
            seed,
            reproducible: true,
        },
        &Outputs::default(),
    )
    .expect("a generator's workload runs");
    let m = r.workload_metrics.expect("a generator's metric");
    m.get("usecs_per_op")
        .or_else(|| m.get("completion_ns"))
        .and_then(|v| v.as_f64())
        .unwrap_or(f64::INFINITY)
}

/// `schedlab gen pipe [--cpu C] [--processes]` on `p` for `ns` of simulated time: µs per
/// round trip.
pub fn simulate_pipe(p: &Platform, ns: u64, cpu: Option<usize>, processes: bool, seed: u64) -> f64 {
    let a = PipeArgs {
        runtime: ns.div_ceil(1_000_000_000).max(1),
        cpu,
        uclamp_min: None,
        taskgroup: None,
        processes,
    };
    run_workload(p, &pipe(&a), Some(ns), seed)
}

/// `schedlab gen hackbench [--pipe]` (processes, 100-byte messages) on `p`: s to complete.
pub fn simulate_messaging(p: &Platform, groups: u32, loops: u32, op: IpcOp, seed: u64) -> f64 {
    let a = HackbenchArgs {
        groups,
        loops,
        pipe: op == IpcOp::Pipe,
        threads: false,
        datasize: 100,
        latency_nice: None,
    };
    run_workload(p, &hackbench(&a), None, seed) / 1e9
}

/// The mean of `f(seed)` over seeds 0..n, the seeds run side by side.
fn seed_mean(n: u64, f: impl Fn(u64) -> f64 + Sync) -> f64 {
    let f = &f;
    let v: Vec<f64> = std::thread::scope(|s| {
        let h: Vec<_> = (0..n.max(1)).map(|seed| s.spawn(move || f(seed))).collect();
        h.into_iter()
            .map(|h| h.join().expect("a simulation"))
            .collect()
    });
    v.iter().sum::<f64>() / v.len() as f64
}

/// A fitted value: what it simulates, whether the measured number was within reach (else
/// `value` is the estimate kept), and each step of the bisection (value, simulated).
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub value: f64,
    pub simulated: f64,
    pub reached: bool,
    pub steps: Vec<(f64, f64)>,
}

/// The work per cycle searched, × an A53: from a quarter of one to far beyond any core.
const SCALE_RANGE: (f64, f64) = (0.25, 64.0);

/// Bisect the scale (log-spaced) until `gen pipe` simulates `target_us` per round trip
/// (a higher scale is faster). Out of reach — the path costs cannot make the simulation
/// that fast or that slow — the uarch's estimate is kept and the fit says so.
pub fn fit_scale(p: &Platform, target_us: f64, spec: &Spec) -> Fit {
    let cpu = Some(spec.pipe_cpu);
    let sim = |scale: f64| simulate_pipe(&at_scale(p, scale), spec.pipe_sim_ns, cpu, false, 0);
    let mut steps = Vec::new();
    let (mut lo, mut hi) = SCALE_RANGE;
    let (at_lo, at_hi) = (sim(lo), sim(hi));
    steps.push((lo, at_lo));
    steps.push((hi, at_hi));
    if !(at_hi..=at_lo).contains(&target_us) {
        let estimate = work_per_cycle(&reference(p).0);
        let simulated = sim(estimate);
        steps.push((estimate, simulated));
        return Fit {
            value: estimate,
            simulated,
            reached: false,
            steps,
        };
    }
    while hi / lo > 1.0005 {
        let mid = (lo * hi).sqrt();
        let us = sim(mid);
        steps.push((mid, us));
        if us > target_us {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let value = (lo * hi).sqrt();
    Fit {
        value,
        simulated: sim(value),
        reached: true,
        steps,
    }
}

/// The largest IPC operation cost searched (1 ms a message).
const IPC_OP_MAX: u64 = 1_000_000;

/// Bisect `op`'s cost (integer ns) until `gen hackbench` of the messaging shape simulates
/// `target_s` on `p` (a dearer operation is slower); out of reach, `p`'s own value is kept.
pub fn fit_ipc_op(p: &Platform, op: IpcOp, target_s: f64, spec: &Spec) -> Fit {
    let sim = |ns: u64| {
        let mut q = p.clone();
        op.set(&mut q.costs, ns);
        let (g, l) = (spec.messaging_groups, spec.messaging_loops);
        seed_mean(spec.seeds, |seed| simulate_messaging(&q, g, l, op, seed))
    };
    let mut steps = Vec::new();
    let mut note = |ns: u64, s: f64| {
        steps.push((ns as f64, s));
        s
    };
    let (mut lo, mut hi) = (1, op.get(&p.costs).max(2));
    let at_lo = note(lo, sim(lo));
    let mut at_hi = note(hi, sim(hi));
    let mut lo_s = at_lo;
    while at_hi < target_s && hi < IPC_OP_MAX {
        (lo, lo_s) = (hi, at_hi);
        hi = (hi * 2).min(IPC_OP_MAX);
        at_hi = note(hi, sim(hi));
    }
    if at_lo > target_s || at_hi < target_s {
        let keep = op.get(&p.costs);
        let s = note(keep, sim(keep));
        return Fit {
            value: keep as f64,
            simulated: s,
            reached: false,
            steps,
        };
    }
    let mut at = (lo, hi);
    let mut sims = (lo_s, at_hi);
    while at.1 - at.0 > 1 {
        let mid = at.0 + (at.1 - at.0) / 2;
        let s = note(mid, sim(mid));
        if s < target_s {
            at.0 = mid;
            sims.0 = s;
        } else {
            at.1 = mid;
            sims.1 = s;
        }
    }
    // The closer of the two ends.
    let (value, simulated) = if target_s - sims.0 < sims.1 - target_s {
        (at.0, sims.0)
    } else {
        (at.1, sims.1)
    };
    Fit {
        value: value as f64,
        simulated,
        reached: true,
        steps,
    }
}

/// What calibrate fitted, and on what.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub pipe: Measured,
    /// `perf bench sched messaging` over sockets, and over pipes.
    pub messaging: Measured,
    pub messaging_pipe: Measured,
    pub scale: Fit,
    pub unix_op: Fit,
    pub pipe_op: Fit,
    /// The platform with the fitted costs.
    pub platform: Platform,
    /// Its file: the input's text with the `[costs]` table.
    pub text: String,
}

/// The three measurements calibrate fits on.
pub struct Measurements {
    /// `perf bench sched pipe -T` on one CPU, µs per round trip.
    pub pipe: Measured,
    /// `perf bench sched messaging`, s.
    pub messaging: Measured,
    /// `perf bench sched messaging -p`, s.
    pub messaging_pipe: Measured,
}

/// Fit the platform (`text`, read as `base`) on the three measurements.
pub fn fit(
    base: &Platform,
    text: &str,
    file: &str,
    m: Measurements,
    spec: &Spec,
) -> Result<Calibration, Error> {
    let Measurements {
        pipe,
        messaging,
        messaging_pipe,
    } = m;
    let scale = fit_scale(base, pipe.spread().median, spec);
    let mut platform = at_scale(base, scale.value);
    // The scale's derivation of every key, before the two IPC operations are fitted.
    let derived = platform.costs;
    let unix_op = fit_ipc_op(&platform, IpcOp::Unix, messaging.spread().median, spec);
    IpcOp::Unix.set(&mut platform.costs, unix_op.value as u64);
    let pipe_op = fit_ipc_op(&platform, IpcOp::Pipe, messaging_pipe.spread().median, spec);
    IpcOp::Pipe.set(&mut platform.costs, pipe_op.value as u64);
    let fits = [
        (IpcOp::Unix, &messaging, &unix_op),
        (IpcOp::Pipe, &messaging_pipe, &pipe_op),
    ];
    let table = costs_table(base, &platform, &derived, &pipe, &scale, &fits, spec);
    let text = with_costs(text, file, &table)?;
    // The file must read back as the platform fitted.
    let read = schedlab::platform::parse_platform(&text, file)?;
    assert_eq!(read.costs, platform.costs, "the [costs] table reads back");
    Ok(Calibration {
        pipe,
        messaging,
        messaging_pipe,
        scale,
        unix_op,
        pipe_op,
        platform,
        text,
    })
}

const BEGIN: &str = "# [costs] fitted by `schedlab host calibrate`";
const END: &str = "# (end of the fitted [costs])";
/// The comment `host platform` writes where a `[costs]` table would be.
const NONE_HERE: &str = "# [costs]: none here;";

/// The `[costs]` table with a comment on each key.
fn costs_table(
    base: &Platform,
    p: &Platform,
    derived: &Costs,
    pipe: &Measured,
    scale: &Fit,
    fits: &[(IpcOp, &Measured, &Fit)],
    spec: &Spec,
) -> String {
    let (uarch, khz) = reference(base);
    let ghz = khz as f64 / 1e6;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{BEGIN} (REPRODUCTIONS.md, \"Host calibration\"):\n\
         # three measurements of this machine, each fitting one value; every other key is derived."
    );
    if scale.reached {
        let _ = writeln!(s, "{PIPE_FIT_MARK}");
        let _ = writeln!(
            s,
            "# The common scale of every kernel path: {:.4} × a Cortex-A53's work per cycle (costs.rs\n\
             # estimates {:.2} for {uarch}), fitted on `{}` (threads, µs per round trip),\n\
             # {}; `schedlab gen pipe --cpu {}` simulates {:.4} µs/op on this platform at it\n\
             # ({} ms simulated, seed 0).",
            scale.value,
            work_per_cycle(&uarch),
            pipe.command,
            pipe.describe(),
            spec.pipe_cpu,
            scale.simulated,
            spec.pipe_sim_ns / 1_000_000
        );
    } else {
        let _ = writeln!(
            s,
            "# The common scale of every kernel path: NOT FITTED, {uarch}'s estimate {:.2} × a Cortex-A53's\n\
             # work per cycle is kept: `{}` measured {}, and `schedlab gen pipe --cpu {}`\n\
             # simulates {:.4}..{:.4} µs/op for scales {}..{} (the rest of a round trip is not path\n\
             # work: the switches' cache refills).",
            scale.value,
            pipe.command,
            pipe.describe(),
            spec.pipe_cpu,
            scale.steps[1].1,
            scale.steps[0].1,
            SCALE_RANGE.0,
            SCALE_RANGE.1
        );
    }
    let _ = writeln!(
        s,
        "# A path's cost is its A53 cycles (costs.rs) over {:.4} × {ghz:.3} GHz.\n[costs]",
        scale.value
    );
    let json = serde_json::to_value(p.costs).expect("costs serialise");
    for f in COST_FIELDS {
        let v = json[f.name].as_u64().unwrap_or(0);
        let fitted = fits.iter().find(|(op, _, _)| op.key() == f.name);
        let comment = match (f.name, a53_cycles(f.name), fitted) {
            (_, Some(c), Some(&(op, measured, fit))) => {
                ipc_fit_comment(&mut s, op, measured, fit, derived, c, spec);
                format!("fitted on {}", op.benchmark())
            }
            ("copy_ps_per_byte", Some(c), _) => format!("{c} A53 cycles per KiB"),
            (_, Some(c), _) => format!("{c} A53 cycles"),
            ("ipi_latency_ns", None, _) => {
                "wall time, the interrupt controller's: not fitted".into()
            }
            ("cpufreq_work_ns", None, _) => {
                "wall time, the frequency change's delay (costs.rs): not fitted".into()
            }
            (_, None, _) => "wall time (seed 000's fit): not fitted".into(),
        };
        let _ = writeln!(s, "{} = {v}  # {comment}", f.name);
    }
    let _ = writeln!(s, "{END}");
    s
}

/// The comment above a fitted IPC operation's key: its measurement and its fit.
fn ipc_fit_comment(
    s: &mut String,
    op: IpcOp,
    measured: &Measured,
    fit: &Fit,
    derived: &Costs,
    cycles: u64,
    spec: &Spec,
) {
    let how = if fit.reached {
        format!(
            "fitted: `schedlab gen hackbench --groups {} --loops {}{}` simulates {:.4} s (mean of seeds 0..{})",
            spec.messaging_groups,
            spec.messaging_loops,
            if op == IpcOp::Pipe { " --pipe" } else { "" },
            fit.simulated,
            spec.seeds
        )
    } else {
        format!(
            "NOT FITTED ({:.4} s measured is out of reach: {:.4} s at 1 ns): kept",
            measured.spread().median,
            fit.steps[0].1
        )
    };
    let _ = writeln!(
        s,
        "# {}: fitted on `{}` (20 senders × 20 receivers per group, 100-byte messages\n\
         # over {}, processes; total time), {};\n\
         # {how}. At the scale alone it would be {} ({cycles} A53 cycles).",
        op.key(),
        measured.command,
        op.over(),
        measured.describe(),
        op.get(derived),
    );
}

/// `text` with `table` where its `[costs]` goes: in place of a table calibrate wrote before,
/// or of the comment `host platform` writes; an input error for a file with a `[costs]`
/// table of its own (its keys would be lost).
fn with_costs(text: &str, file: &str, table: &str) -> Result<String, InputError> {
    let lines: Vec<&str> = text.lines().collect();
    let join = |a: &[&str], b: &[&str]| {
        let mut out = String::new();
        for l in a {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str(table);
        for l in b {
            out.push_str(l);
            out.push('\n');
        }
        out
    };
    if let (Some(b), Some(e)) = (
        lines.iter().position(|l| l.starts_with(BEGIN)),
        lines.iter().position(|l| *l == END),
    ) {
        if b < e {
            return Ok(join(&lines[..b], &lines[e + 1..]));
        }
    }
    if lines.iter().any(|l| l.trim() == "[costs]") {
        return Err(InputError::new(
            file,
            "[costs]",
            "a platform file without a [costs] table of its own (as `schedlab host platform` writes it), or one calibrate wrote",
            "a [costs] table",
        ));
    }
    if let Some(i) = lines.iter().position(|l| l.starts_with(NONE_HERE)) {
        // The comment and its continuation lines.
        let end = (i + 1..lines.len())
            .find(|&j| !lines[j].starts_with("# ") || lines[j].starts_with("# ["))
            .unwrap_or(lines.len());
        return Ok(join(&lines[..i], &lines[end..]));
    }
    // Before the first table, and the comments right above it.
    let mut at = lines
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .unwrap_or(lines.len());
    while at > 0 && lines[at - 1].starts_with('#') {
        at -= 1;
    }
    Ok(join(&lines[..at], &lines[at..]))
}

/// The run's numbers: each measurement's runs and each bisection's steps.
pub fn report(c: &Calibration) -> String {
    let mut s = String::new();
    for m in [&c.pipe, &c.messaging, &c.messaging_pipe] {
        let _ = writeln!(s, "{}: {}", m.command, m.describe());
        for (i, (v, l)) in m.runs.values.iter().zip(&m.runs.loads).enumerate() {
            let _ = writeln!(
                s,
                "  run {}: {v:.4} {}  (wall {:.3} s, steal {:.0} ms, others {:.3} s of CPU)",
                i + 1,
                m.unit,
                l.wall_s,
                l.steal_s * 1e3,
                l.others_s
            );
        }
    }
    let pipe = (c.pipe.spread().median, "µs/op");
    fit_lines(
        &mut s,
        "scale",
        "(× an A53's work per cycle) → gen pipe on one CPU",
        &c.scale,
        pipe,
        5,
    );
    let messaging = (c.messaging.spread().median, "s");
    fit_lines(
        &mut s,
        "unix_op_ns",
        "→ gen hackbench",
        &c.unix_op,
        messaging,
        0,
    );
    let messaging_pipe = (c.messaging_pipe.spread().median, "s");
    fit_lines(
        &mut s,
        "pipe_op_ns",
        "→ gen hackbench --pipe",
        &c.pipe_op,
        messaging_pipe,
        0,
    );
    s
}

/// A fit's bisection, step by step (the value with `decimals`), and where it ended against
/// the measured `target` (number, unit).
fn fit_lines(
    s: &mut String,
    what: &str,
    to: &str,
    fit: &Fit,
    target: (f64, &str),
    decimals: usize,
) {
    let (median, unit) = target;
    let _ = writeln!(s, "{what} {to} {unit}:");
    for (v, sim) in &fit.steps {
        let _ = writeln!(s, "  {v:.decimals$} → {sim:.4}");
    }
    let how = if fit.reached {
        "fitted"
    } else {
        "NOT fitted (kept)"
    };
    let _ = writeln!(
        s,
        "{what} {how}: {:.decimals$}, simulating {:.4} {unit} against {median:.4}",
        fit.value, fit.simulated
    );
}

/// A measurement given instead of run (`--measured-pipe-us`, `--measured-messaging-s`): one
/// run of that value on a quiet machine.
pub fn given(command: Vec<String>, unit: &'static str, value: f64) -> Measured {
    Measured {
        command: command.join(" "),
        unit,
        runs: Runs {
            values: vec![value],
            loads: vec![measure::Load::default()],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_costs_table_replaces_host_platform_s_comment_and_a_previous_fit() {
        let text = "name = \"h\"\n\n# [costs]: none here; every key comes from CPU 0's uarch\n# (costs.rs).\n\n# The caches\n[memory]\nllc_kib = 1\n";
        let t = "X\n";
        let once = with_costs(text, "f", t).unwrap();
        assert_eq!(
            once,
            "name = \"h\"\n\nX\n\n# The caches\n[memory]\nllc_kib = 1\n"
        );
        let fitted = format!("{BEGIN}\n[costs]\nirq_ns = 1\n{END}\n");
        let a = with_costs(text, "f", &fitted).unwrap();
        assert_eq!(with_costs(&a, "f", "Y\n").unwrap(), once.replace('X', "Y"));
        let e = with_costs("[costs]\nirq_ns = 3\n", "f", t).unwrap_err();
        assert_eq!(e.place, "[costs]");
        assert_eq!(
            with_costs("a = 1\n# c\n[[cpus]]\n", "f", t).unwrap(),
            "a = 1\nX\n# c\n[[cpus]]\n"
        );
    }
}

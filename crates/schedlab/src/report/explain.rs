//! `schedlab explain-cost`: the machine's rules (`machine.rs`) evaluated on a platform at a
//! frequency with representative inputs, each with its payer, in ns and cycles; then what
//! one wake-up costs, step by step, in a few cases.

use crate::kernel::Variant;
use crate::machine::{self, Charge, Payer, Placement, Resume};
use crate::platform::{Costs, Memory, Platform, COST_FIELDS, MEMORY_FIELDS};
use crate::workload::{ChannelKind, DEFAULT_WORKING_SET};
use schedlab_base::error::InputError;
use std::fmt::Write;

/// The arguments of `schedlab explain-cost`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExplainCostArgs {
    /// One path (a function of machine.rs, e.g. `wakeup`, `context_switch`), or `wake-up`
    /// for the step-by-step wake-ups; all when left out.
    pub path: Option<String>,
    /// Platform preset or platform file (TOML/JSON).
    #[arg(long, default_value = "juno-r0")]
    pub platform: String,
    /// The frequency the CPUs run at, kHz (default: the CPU's highest OPP).
    #[arg(long, visible_alias = "freq", conflicts_with = "opp")]
    pub khz: Option<u32>,
    /// The CPU's lowest or highest OPP.
    #[arg(long, value_parser = ["lowest", "highest"])]
    pub opp: Option<String>,
    /// The CPU whose capacity the paths run at (and that wakes, or is woken).
    #[arg(long, default_value_t = 0)]
    pub cpu: usize,
    /// A `cost.*` or `memory.*` switch, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

/// One evaluated rule: the path, its inputs, the charge.
struct Row {
    path: &'static str,
    case: String,
    charge: Charge,
}

fn row(path: &'static str, case: impl Into<String>, charge: Charge) -> Row {
    Row {
        path,
        case: case.into(),
        charge,
    }
}

/// The machine's paths with representative inputs on CPU `cpu` of `p`, charged with `c` and
/// `m`; the cases' sizes come from `cases` (the memory the user asked for, so that a changed
/// key changes the charge and not the case).
fn rows(p: &Platform, c: &Costs, m: &Memory, cases: &Memory, cpu: usize) -> Vec<Row> {
    let mut r = cpu_rows(p, c, cpu);
    memory_and_io_rows(p, c, m, cases, cpu, &mut r);
    r
}

/// A fair wake-up's placement on `p` from `cpu` (no EAS), and the CPUs of `cpu`'s LLC.
fn fair_placement(p: &Platform, cpu: usize) -> (Placement, u64) {
    let llc = p.cpus.iter().filter(|o| o.llc == p.cpus[cpu].llc).count() as u64;
    let placement = Placement {
        rt: false,
        nr_cpus: p.nr_cpus() as u64,
        asymmetric: p.is_asymmetric(),
        eas: false,
        nr_pd: p.freq_domains.len() as u64,
    };
    (placement, llc)
}

/// Interrupts, wake-ups, IPIs, queue operations, schedule and the context switch.
fn cpu_rows(p: &Platform, c: &Costs, cpu: usize) -> Vec<Row> {
    let (placement, llc) = fair_placement(p, cpu);
    let scan = |pl: Placement| machine::placement_scan(pl, || llc);
    let fair = scan(placement);
    let eas = scan(Placement {
        eas: true,
        ..placement
    });
    let rt = scan(Placement {
        rt: true,
        ..placement
    });
    let ipi = machine::ipi(c);
    let mut r = vec![
        row(
            "timer_interrupt",
            "a sleep's hrtimer",
            machine::timer_interrupt(c, true),
        ),
        row(
            "timer_interrupt",
            "an I/O completion",
            machine::timer_interrupt(c, false),
        ),
        row(
            "hrtimer_expiry",
            "each further timer of the interrupt",
            machine::hrtimer_expiry(c),
        ),
        row("tick", "a busy CPU's tick", machine::tick(c)),
        row(
            "wakeup",
            format!("fair task, placement scans {fair} CPUs (no EAS)"),
            machine::wakeup(c, fair),
        ),
        row(
            "wakeup",
            format!("RT task, cpupri over {rt} CPUs"),
            machine::wakeup(c, rt),
        ),
    ];
    if p.is_asymmetric() {
        r.push(row(
            "wakeup",
            format!("EAS (not overutilized): {eas} CPUs"),
            machine::wakeup(c, eas),
        ));
    }
    r.extend([
        row("ipi", "send", ipi.send),
        row(
            "ipi",
            "delivery",
            Charge {
                payer: Payer::Target,
                work_ns: 0,
                wall_ns: ipi.delivery_ns,
            },
        ),
        row("ipi", "handler", ipi.handler),
        row("queue_op", "1 group level", machine::queue_op(c, 1, 0)),
        row("queue_op", "3 group levels", machine::queue_op(c, 3, 0)),
        row(
            "queue_op",
            "1 level, 2 uclamp bucket ops",
            machine::queue_op(c, 1, 2),
        ),
        row("schedule", "__schedule", machine::schedule(c)),
        row(
            "context_switch",
            "threads, root group",
            machine::context_switch(c, false, 1),
        ),
        row(
            "context_switch",
            "processes, root group",
            machine::context_switch(c, true, 1),
        ),
        row(
            "context_switch",
            "threads, 3 group levels",
            machine::context_switch(c, false, 3),
        ),
    ]);
    r
}

/// Cache refills, system calls, channel operations, cpufreq work and idle exits.
fn memory_and_io_rows(
    p: &Platform,
    c: &Costs,
    m: &Memory,
    cases: &Memory,
    cpu: usize,
    r: &mut Vec<Row>,
) {
    let ws = DEFAULT_WORKING_SET;
    let kib = |b: u64| b / 1024;
    let private = cases.private_kib * 1024;
    let big = 4 * private;
    r.push(row(
        "cache_refill",
        format!("{} KiB working set, moved within the LLC", kib(big)),
        machine::cache_refill(m, big, Resume::SameLlc { llc_others: 0 }),
    ));
    for (case, resume) in [
        (
            format!("same CPU, {} KiB touched since", kib(private / 2)),
            Resume::SameCpu {
                others: private / 2,
                llc_others: private / 2,
            },
        ),
        (
            "moved within the LLC".to_string(),
            Resume::SameLlc { llc_others: 0 },
        ),
        (
            format!(
                "same CPU, {} KiB touched in the LLC since",
                kib(2 * cases.llc_kib * 1024)
            ),
            Resume::SameCpu {
                others: 2 * cases.llc_kib * 1024,
                llc_others: 2 * cases.llc_kib * 1024,
            },
        ),
        (
            "moved across LLCs (local node)".to_string(),
            Resume::OtherLlc { distance: 10 },
        ),
    ] {
        let case = format!("{} KiB working set, {case}", kib(ws));
        r.push(row(
            "cache_refill",
            case,
            machine::cache_refill(m, ws, resume),
        ));
    }
    r.push(row(
        "syscall",
        "one that does not block",
        machine::syscall(c),
    ));
    for (kind, name, send, bytes) in [
        (ChannelKind::Pipe, "pipe", true, 100),
        (ChannelKind::Unix, "unix", true, 100),
        (ChannelKind::Udp, "udp", true, 64),
        (ChannelKind::Udp, "udp", false, 64),
        (ChannelKind::Tcp, "tcp", true, 64),
        (ChannelKind::Futex, "futex", true, 0),
    ] {
        let op = if send { "send" } else { "recv" };
        let case = format!("{name} {op} of {bytes} bytes");
        r.push(row(
            "channel_op",
            case,
            machine::channel_op(c, kind, send, bytes),
        ));
    }
    r.push(row(
        "cpufreq_work",
        "queued to frequency set",
        machine::cpufreq_work(c),
    ));
    let states = &p.cpus[cpu].idle_states;
    for s in states
        .first()
        .into_iter()
        .chain(states.iter().skip(1).last())
    {
        r.push(row(
            "idle_exit",
            format!("from {}", s.name),
            machine::idle_exit(s.exit_paid_ns()),
        ));
    }
}

/// The columns of a charge on a CPU of capacity `cap` at `khz`.
fn columns(charge: Charge, cap: u64, khz: u32) -> String {
    let wall = charge.wall_at(cap);
    let cycles = wall * u64::from(khz) / 1_000_000;
    format!(
        "{:<9} {:>8} {:>8} {:>9}",
        charge.payer.name(),
        charge.work_ns,
        charge.wall_ns,
        format!("{wall} ns"),
    ) + &format!(" {cycles:>8}")
}

const HEADER: &str = "payer      work ns  wall ns  on the CPU   cycles";

/// The `[costs]` and `[memory]` keys (`cost.<name>`, `memory.<name>`) each of `base`'s rows
/// depends on: those whose change (to twice their value and one) changes the row's charge,
/// found by evaluating the rows again, so that the list cannot drift from machine.rs.
fn keys_of(
    p: &Platform,
    v: &Variant,
    base: &[Row],
    memory: &Memory,
    cpu: usize,
) -> Result<Vec<Vec<String>>, InputError> {
    let (costs, _) = v.machine(p);
    let values = |t: serde_json::Value| t.as_object().cloned().unwrap_or_default();
    let (cv, mv) = (
        values(serde_json::to_value(costs).unwrap_or_default()),
        values(serde_json::to_value(memory).unwrap_or_default()),
    );
    let mut keys = vec![Vec::new(); base.len()];
    let tables = [("cost", COST_FIELDS, &cv), ("memory", MEMORY_FIELDS, &mv)];
    for (table, fields, now) in tables {
        for f in fields {
            let value = now.get(f.name).and_then(|x| x.as_u64()).unwrap_or(0);
            let mut changed = v.clone();
            let key = format!("{table}.{}", f.name);
            changed.set(
                &key,
                &value.saturating_mul(2).saturating_add(1).to_string(),
                "--set",
            )?;
            let (c, m) = changed.machine(p);
            for (i, r) in rows(p, &c, &m, memory, cpu).iter().enumerate() {
                if r.charge != base[i].charge {
                    keys[i].push(key.clone());
                }
            }
        }
    }
    Ok(keys)
}

/// One wake-up, step by step: each path's charge, and the wake-up's latency (the waker's
/// work before its IPI, the delivery, then the target's charges in order).
struct Steps {
    title: String,
    steps: Vec<Row>,
}

fn wakeups(p: &Platform, c: &Costs, m: &Memory, cpu: usize) -> Vec<Steps> {
    let same_llc = |a: usize, b: usize| p.cpus[a].llc == p.cpus[b].llc;
    let (placement, llc) = fair_placement(p, cpu);
    let scan = machine::placement_scan(placement, || llc);
    let exit = p.cpus[cpu].idle_states.first();
    let exit_case = exit.map_or("no idle state".to_string(), |s| format!("from {}", s.name));
    let exit = machine::idle_exit(exit.map_or(0, |s| s.exit_paid_ns()));
    let ws = DEFAULT_WORKING_SET;
    let switch_in = |levels: u64, resume: Resume, refill_case: &str| {
        let mut s = vec![
            row(
                "queue_op",
                format!("enqueue, {levels} level(s)"),
                machine::queue_op(c, levels, 0),
            ),
            row("schedule", "", machine::schedule(c)),
            row(
                "context_switch",
                format!("threads, {levels} level(s)"),
                machine::context_switch(c, false, levels),
            ),
            row(
                "cache_refill",
                format!("{} KiB working set, {refill_case}", ws / 1024),
                machine::cache_refill(m, ws, resume),
            ),
        ];
        s[0].charge.payer = Payer::Target;
        s
    };
    let timer = |levels: u64| {
        let mut steps = vec![
            row("idle_exit", exit_case.clone(), exit),
            row(
                "timer_interrupt",
                "hrtimer",
                machine::timer_interrupt(c, true),
            ),
            row(
                "wakeup",
                format!("{scan} CPUs scanned"),
                machine::wakeup(c, scan),
            ),
        ];
        steps.extend(switch_in(
            levels,
            Resume::SameCpu {
                others: 0,
                llc_others: 0,
            },
            "nothing touched since",
        ));
        // A timer fires on the CPU the task slept on: it wakes it there.
        for s in &mut steps {
            s.charge.payer = Payer::Running;
        }
        steps
    };
    let mut out = vec![
        Steps {
            title: format!("a timer wakes a task on idle CPU {cpu} (idle cyclictest)"),
            steps: timer(1),
        },
        Steps {
            title: "the same, the task 3 group levels deep".to_string(),
            steps: timer(3),
        },
    ];
    let v = Variant::default();
    let other = (0..p.nr_cpus()).find(|&o| !same_llc(o, cpu));
    if let Some(o) = other {
        let wakelist = crate::kernel::core::ttwu_queue_cond(&v, o, cpu, false, true);
        let q = machine::ttwu_queue(c, wakelist);
        let mut steps = vec![row(
            "wakeup",
            format!("{scan} CPUs scanned"),
            machine::wakeup(c, scan),
        )];
        if let Some(ipi) = q.ipi {
            steps.extend([
                row("ipi", "send", ipi.send),
                row(
                    "ipi",
                    "delivery",
                    Charge {
                        payer: Payer::Target,
                        work_ns: 0,
                        wall_ns: ipi.delivery_ns,
                    },
                ),
                row("idle_exit", exit_case.clone(), exit),
                row("ipi", "handler", ipi.handler),
            ]);
        }
        let distance = p.node_distance(p.cpus[o].node, p.cpus[cpu].node);
        steps.extend(switch_in(
            1,
            Resume::OtherLlc { distance },
            "moved across LLCs",
        ));
        out.push(Steps {
            title: format!(
                "CPU {o} wakes a task onto idle CPU {cpu}, across LLCs (wake list, IPI)"
            ),
            steps,
        });
    }
    out.push(own_cpu_wakeup(c, m, cpu, scan));
    out
}

/// A task waking one onto its own CPU, then blocking (a pipe's ping-pong): the waker pays
/// the enqueue, its dequeue, the schedule and the switch.
fn own_cpu_wakeup(c: &Costs, m: &Memory, cpu: usize, scan: u64) -> Steps {
    let ws = DEFAULT_WORKING_SET;
    let q = machine::ttwu_queue(c, false);
    let mut steps = vec![row(
        "wakeup",
        format!("{scan} CPUs scanned"),
        machine::wakeup(c, scan),
    )];
    steps.push(row(
        "queue_op",
        "enqueue, 1 level",
        machine::queue_op(c, 1, 0),
    ));
    steps[1].charge.payer = q.enqueuer;
    steps.extend([
        row(
            "queue_op",
            "the waker's dequeue as it blocks",
            machine::queue_op(c, 1, 0),
        ),
        row("schedule", "", machine::schedule(c)),
        row(
            "context_switch",
            "threads, 1 level",
            machine::context_switch(c, false, 1),
        ),
        row(
            "cache_refill",
            format!(
                "{} KiB working set, same CPU after the waker's {} KiB",
                ws / 1024,
                machine::footprint(ws) / 1024
            ),
            machine::cache_refill(
                m,
                ws,
                Resume::SameCpu {
                    others: machine::footprint(ws),
                    llc_others: machine::footprint(ws),
                },
            ),
        ),
    ]);
    for s in &mut steps[2..] {
        s.charge.payer = Payer::Waker;
    }
    Steps {
        title: format!(
            "a task on CPU {cpu} wakes one onto its own CPU, then blocks (a pipe's ping-pong)"
        ),
        steps,
    }
}

/// The text `schedlab explain-cost` prints.
pub fn explain_cost(args: &ExplainCostArgs) -> Result<String, InputError> {
    let p = Platform::resolve(&args.platform)?;
    let cpu = args.cpu;
    if cpu >= p.nr_cpus() {
        return Err(InputError::new(
            "--cpu",
            "the CPU",
            format!("a CPU of {} (0..{})", p.name, p.nr_cpus()),
            cpu.to_string(),
        ));
    }
    let mut v = Variant::default();
    for s in &args.sets {
        let (k, val) = s
            .split_once('=')
            .ok_or_else(|| InputError::new("--set", s.as_str(), "KEY=VALUE", format!("`{s}`")))?;
        if !(k.starts_with("cost.") || k.starts_with("memory.")) {
            return Err(InputError::new(
                "--set",
                k,
                "a cost.* or memory.* switch",
                format!("`{k}`"),
            ));
        }
        v.set(k, val, "--set")?;
    }
    let (costs, memory) = v.machine(&p);
    let khz = match (args.khz, args.opp.as_deref()) {
        (Some(k), _) => k,
        (None, Some("lowest")) => p.min_freq_khz(cpu),
        _ => p.max_freq_khz(cpu),
    };
    let cap = u64::from(p.capacity_at(cpu, khz)).max(1);
    let rows = rows(&p, &costs, &memory, &memory, cpu);
    let keys = keys_of(&p, &v, &rows, &memory, cpu)?;
    let names: Vec<&str> = rows.iter().map(|r| r.path).collect();
    let want = |name: &str| args.path.as_deref().map_or(true, |w| w == name);
    if let Some(w) = args.path.as_deref() {
        if w != "wake-up" && !names.contains(&w) {
            let mut known = names.clone();
            known.dedup();
            known.push("wake-up");
            return Err(InputError::new(
                "PATH",
                "the path",
                format!("one of {}", known.join(", ")),
                format!("`{w}`"),
            ));
        }
    }
    let mut o = String::new();
    let c = &p.cpus[cpu];
    let _ = writeln!(
        o,
        "{}: CPU {cpu} ({}, capacity {} at its highest OPP) at {khz} kHz: capacity {cap}.",
        p.name,
        if c.uarch.is_empty() { "?" } else { &c.uarch },
        c.capacity_orig
    );
    let _ = writeln!(
        o,
        "Work is ns at capacity 1024: here it takes work × 1024 / {cap}. Wall time is the same at \
         any speed. Every CPU a path involves is taken to run at this capacity; cycles at {khz} kHz. \
         The keys are the [costs] and [memory] keys the charge depends on (`--set` them)."
    );
    let _ = writeln!(o, "\n{:<16} {:<50} {HEADER}  keys", "path", "case");
    for (r, k) in rows.iter().zip(&keys).filter(|(r, _)| want(r.path)) {
        let k = if k.is_empty() {
            "-".to_string()
        } else {
            k.join(",")
        };
        let _ = writeln!(
            o,
            "{:<16} {:<50} {}  {k}",
            r.path,
            r.case,
            columns(r.charge, cap, khz)
        );
    }
    if want("wake-up") || want("wakeup") {
        for s in wakeups(&p, &costs, &memory, cpu) {
            let _ = writeln!(o, "\nOne wake-up: {}", s.title);
            let _ = writeln!(o, "  {:<16} {:<50} {HEADER}", "path", "case");
            let mut latency = 0;
            for r in &s.steps {
                let _ = writeln!(
                    o,
                    "  {:<16} {:<50} {}",
                    r.path,
                    r.case,
                    columns(r.charge, cap, khz)
                );
                latency += r.charge.wall_at(cap);
            }
            let cycles = latency * u64::from(khz) / 1_000_000;
            let _ = writeln!(
                o,
                "  the kernel's time from the wake-up to the task's own code: {latency} ns, {cycles} cycles"
            );
        }
    }
    Ok(o)
}

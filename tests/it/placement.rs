//! Fair task placement and balancing. The first scenarios follow LISA's
//! EAS behaviour tests (lisa/tests/scheduler/eas_behaviour.py: OneSmallTask, ThreeSmallTasks,
//! TwoBigTasks, RampUp/RampDown) on juno-r0, whose CPUs 0,3,4,5 are LITTLE (447) and 1,2 big.

use crate::common;

use common::{run_full, task, S};
use schedlab::kernel::tracepoint::EventSelection;
use schedlab::platform::Platform;
use schedlab::Outputs;

const LITTLE: [usize; 4] = [0, 3, 4, 5];
const BIG: [usize; 2] = [1, 2];

/// Simulate with a trace and return the results and the trace text.
fn traced(
    platform: &str,
    json: &str,
    duration_ns: u64,
    sets: &[&str],
    events: &str,
) -> (schedlab::report::Results, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.txt");
    let out = Outputs {
        trace: Some(path.clone()),
        trace_events: EventSelection::parse(events).unwrap(),
        ..Outputs::default()
    };
    let r = run_full(platform, json, duration_ns, sets, 0, &out);
    (r, std::fs::read_to_string(path).unwrap())
}

/// One trace line: time (s), CPU, event name and its fields.
struct Line<'a> {
    t: f64,
    cpu: usize,
    event: &'a str,
    fields: &'a str,
}

fn lines(trace: &str) -> impl Iterator<Item = Line<'_>> {
    trace.lines().filter_map(|l| {
        let open = l.find(" [")?;
        let rest = &l[open + 2..];
        let cpu = rest.get(..3)?.parse().ok()?;
        let rest = rest.get(5..)?;
        let (t, rest) = rest.split_once(": ")?;
        let (event, fields) = rest.split_once(": ")?;
        Some(Line {
            t: t.trim().parse().ok()?,
            cpu,
            event,
            fields,
        })
    })
}

fn field<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    fields
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// Runtime (s) of threads whose comm starts with `prefix`, per CPU, within [from, to).
fn runtime_per_cpu(trace: &str, nr_cpus: usize, prefix: &str, from: f64, to: f64) -> Vec<f64> {
    let mut since: Vec<Option<f64>> = vec![None; nr_cpus];
    let mut acc = vec![0.0; nr_cpus];
    let close = |start: Option<f64>, end: f64, acc: &mut f64| {
        if let Some(s) = start {
            let (s, e) = (s.max(from), end.min(to));
            if e > s {
                *acc += e - s;
            }
        }
    };
    for l in lines(trace).filter(|l| l.event == "sched_switch") {
        let (prev, next) = l.fields.split_once(" ==> ").unwrap();
        if field(prev, "prev_comm").is_some_and(|c| c.starts_with(prefix)) {
            close(since[l.cpu].take(), l.t, &mut acc[l.cpu]);
        }
        since[l.cpu] = field(next, "next_comm")
            .filter(|c| c.starts_with(prefix))
            .map(|_| l.t);
    }
    for (start, a) in since.into_iter().zip(acc.iter_mut()) {
        close(start, to, a);
    }
    acc
}

fn share(per_cpu: &[f64], cpus: &[usize]) -> f64 {
    let total: f64 = per_cpu.iter().sum();
    cpus.iter().map(|&c| per_cpu[c]).sum::<f64>() / total
}

/// A periodic rt-app task: `pct` % of a big CPU every 16 ms.
fn periodic(name: &str, instances: u32, pct: u64) -> String {
    format!(
        r#""{name}": {{ "instance": {instances}, "loop": -1, "run": {}, "timer": {{ "ref": "unique", "period": 16000 }} }}"#,
        16000 * pct / 100
    )
}

fn workload(tasks: &[String]) -> String {
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(", "))
}

/// The energy of one placement as EAS estimates it (`compute_energy` over the performance
/// domains, from the platform's per-CPU OPP powers): per domain the OPP covering 1.25 × the
/// busiest CPU's util, `cost = power × fmax / f`, energy `cost × sum_util / capacity`. None if
/// a CPU would be overutilized (util × 1.25 ≥ capacity): EAS never picks such a placement.
fn placement_energy(p: &Platform, utils: &[u64], cpus: &[usize]) -> Option<f64> {
    let mut cpu_util = vec![0u64; p.nr_cpus()];
    for (&u, &c) in utils.iter().zip(cpus) {
        cpu_util[c] += u;
    }
    let mut energy = 0.0;
    for d in &p.freq_domains {
        let cap = p.cpus[d.cpus[0]].capacity_orig as f64;
        let mut max_util = 0.0f64;
        let mut sum = 0.0;
        for &c in &d.cpus {
            let u = cpu_util[c] as f64;
            if u * 1.25 >= cap {
                return None;
            }
            max_util = max_util.max(u);
            sum += u;
        }
        let fmax = d.opps.last().unwrap().freq_khz as f64;
        let want = fmax * (max_util * 1.25).min(cap) / cap;
        let opp = d.opps.iter().find(|o| o.freq_khz as f64 >= want).unwrap();
        energy += opp.power_mw * fmax / opp.freq_khz as f64 * sum / cap;
    }
    Some(energy)
}

/// The lowest energy over every assignment of the utilizations to CPUs.
fn best_energy(p: &Platform, utils: &[u64]) -> f64 {
    let n = p.nr_cpus();
    let mut best = f64::MAX;
    let mut cpus = vec![0; utils.len()];
    for code in 0..n.pow(utils.len() as u32) {
        let mut c = code;
        for slot in cpus.iter_mut() {
            *slot = c % n;
            c /= n;
        }
        if let Some(e) = placement_energy(p, utils, &cpus) {
            best = best.min(e);
        }
    }
    best
}

/// The CPU each thread `name-i` ran on most within the window.
fn main_cpus(trace: &str, nr_cpus: usize, names: &[String], from: f64, to: f64) -> Vec<usize> {
    names
        .iter()
        .map(|n| {
            let rt = runtime_per_cpu(trace, nr_cpus, n, from, to);
            (0..nr_cpus)
                .max_by(|&a, &b| rt[a].total_cmp(&rt[b]))
                .unwrap()
        })
        .collect()
}

/// The chosen placement's energy is within 5% of the brute-force best.
fn assert_energy_near_best(trace: &str, names: &[String], utils: &[u64], from: f64, to: f64) {
    let p = Platform::resolve("juno-r0").unwrap();
    let chosen = main_cpus(trace, p.nr_cpus(), names, from, to);
    let e = placement_energy(&p, utils, &chosen)
        .unwrap_or_else(|| panic!("placement {chosen:?} overutilizes a CPU"));
    let best = best_energy(&p, utils);
    assert!(
        e <= best * 1.05,
        "placement {chosen:?}: energy {e:.1} vs best {best:.1}"
    );
}

#[test]
fn one_small_task_runs_on_a_little_cpu_and_stays_there() {
    let json = workload(&[periodic("small", 1, 10)]);
    let (r, trace) = traced("juno-r0", &json, 2 * S, &[], "");
    assert!(r.eas_enabled);
    let rt = runtime_per_cpu(&trace, 6, "small-0", 0.0, 2.0);
    assert!(share(&rt, &LITTLE) > 0.99, "{rt:?}");
    assert!(task(&r, "small-0").migrations <= 1);
    assert_energy_near_best(&trace, &["small-0".into()], &[102], 0.5, 2.0);
}

#[test]
fn three_small_tasks_go_to_little_cpus() {
    let json = workload(&[periodic("small", 3, 10)]);
    let (_, trace) = traced("juno-r0", &json, 2 * S, &[], "");
    let names: Vec<String> = (0..3).map(|i| format!("small-{i}")).collect();
    for n in &names {
        let rt = runtime_per_cpu(&trace, 6, n, 0.5, 2.0);
        assert!(share(&rt, &LITTLE) > 0.99, "{n}: {rt:?}");
    }
    assert_energy_near_best(&trace, &names, &[102, 102, 102], 0.5, 2.0);
}

#[test]
fn two_big_tasks_go_to_the_big_cpus() {
    // 40% of a big CPU: 410, over 80% of a LITTLE's 447.
    let json = workload(&[periodic("big", 2, 40)]);
    let (_, trace) = traced("juno-r0", &json, 2 * S, &[], "");
    let names: Vec<String> = (0..2).map(|i| format!("big-{i}")).collect();
    for n in &names {
        let rt = runtime_per_cpu(&trace, 6, n, 0.5, 2.0);
        assert!(share(&rt, &BIG) > 0.99, "{n}: {rt:?}");
    }
    let cpus = main_cpus(&trace, 6, &names, 0.5, 2.0);
    assert_ne!(cpus[0], cpus[1], "one big task per big CPU");
    assert_energy_near_best(&trace, &names, &[410, 410], 0.5, 2.0);
}

/// A task of 10% for 1 s, then running without a break for what a big CPU does in 1 s (no
/// wakeup to re-place it: only misfit balancing can move it), then 10% again.
fn ramp_json() -> String {
    r#"{ "tasks": { "ramp": { "loop": 1, "phases": {
        "small1": { "loop": 62, "run": 1600, "timer": { "ref": "r", "period": 16000 } },
        "big":    { "loop": 1, "run": 1000000 },
        "small2": { "loop": 94, "run": 1600, "timer": { "ref": "r", "period": 16000 } } } } } }"#
        .to_string()
}

#[test]
fn ramping_task_migrates_up_as_misfit_and_back_down() {
    let (r, trace) = traced("juno-r0", &ramp_json(), 3 * S, &[], "sched_pelt_se");
    let tick = 0.004;
    // The big phase starts at about 62 × 16 ms.
    let big_start = 62.0 * 0.016;
    let rt = runtime_per_cpu(&trace, 6, "ramp-0", 0.1, big_start);
    assert!(share(&rt, &LITTLE) > 0.99, "small phase: {rt:?}");
    // The first time the task's utilization no longer fits a LITTLE (util × 1.25 ≥ 447).
    let no_fit = lines(&trace)
        .filter(|l| l.event == "sched_pelt_se" && l.t > big_start - 0.02)
        .filter(|l| field(l.fields, "comm") == Some("ramp-0"))
        .find(|l| field(l.fields, "util").unwrap().parse::<u64>().unwrap() * 1280 >= 447 * 1024)
        .expect("the big phase makes the task misfit")
        .t;
    let up = lines(&trace)
        .filter(|l| l.event == "sched_migrate_task" && l.t > big_start - 0.02)
        .find(|l| {
            field(l.fields, "comm") == Some("ramp-0")
                && BIG.contains(&field(l.fields, "dest_cpu").unwrap().parse().unwrap())
        })
        .expect("the task moves to a big CPU")
        .t;
    assert!(
        up <= no_fit + 3.0 * tick,
        "misfit at {no_fit}, on a big CPU at {up}"
    );
    assert!(r.balance.misfit_ticks > 0 && r.balance.active_migrations > 0);
    // The big phase ends about 1 s of big-CPU work after it started.
    let big_end = up + 1.0;
    let rt = runtime_per_cpu(&trace, 6, "ramp-0", up + 0.001, big_end - 0.05);
    assert!(share(&rt, &BIG) > 0.99, "big phase: {rt:?}");
    // Ramping down: back on a LITTLE CPU once util_est has decayed.
    let rt = runtime_per_cpu(&trace, 6, "ramp-0", big_end + 0.3, 3.0);
    assert!(share(&rt, &LITTLE) > 0.99, "small again: {rt:?}");
}

#[test]
fn uclamp_max_keeps_a_heavy_task_on_a_little_cpu_without_misfit() {
    // Always running, capped at 300.
    let json = r#"{ "tasks": { "heavy": { "loop": -1, "util_max": 300, "run": 100000 } } }"#;
    let (r, trace) = traced("juno-r0", json, 2 * S, &[], "");
    let rt = runtime_per_cpu(&trace, 6, "heavy-0", 0.1, 2.0);
    assert!(share(&rt, &LITTLE) > 0.99, "{rt:?}");
    assert_eq!(r.balance.misfit_ticks, 0, "uclamp_max fits the LITTLE");
    assert_eq!(r.balance.active_migrations, 0);
    // Without the cap the same task is misfit on a LITTLE and moves to a big CPU.
    let json = json.replace(r#""util_max": 300, "#, "");
    let (r, trace) = traced("juno-r0", &json, 2 * S, &[], "");
    assert!(r.balance.misfit_ticks > 0);
    let rt = runtime_per_cpu(&trace, 6, "heavy-0", 0.5, 2.0);
    assert!(share(&rt, &BIG) > 0.99, "{rt:?}");
}

#[test]
fn uclamp_min_1024_sends_a_small_task_to_a_big_cpu() {
    let json = r#"{ "tasks": { "boosted": { "loop": -1, "util_min": 1024, "run": 1600,
        "timer": { "ref": "b", "period": 16000 } } } }"#;
    // With util_fits_cpu (6.1.y) the boost counts against each CPU's capacity; without EAS
    // select_idle_capacity() falls back to the biggest idle CPU.
    for set in ["variant.util_fits_cpu=true", "config.ENERGY_MODEL=false"] {
        let (r, trace) = traced("juno-r0", json, S, &[set], "");
        assert_eq!(r.eas_enabled, set != "config.ENERGY_MODEL=false");
        let rt = runtime_per_cpu(&trace, 6, "boosted-0", 0.1, 1.0);
        assert!(share(&rt, &BIG) > 0.99, "{set}: {rt:?}");
    }
    // v6.1's task_fits_capacity() under EAS: clamped to 1024 the task fits no CPU (the 20%
    // margin), so find_energy_efficient_cpu() keeps it where it started.
    let (_, trace) = traced("juno-r0", json, S, &[], "");
    let rt = runtime_per_cpu(&trace, 6, "boosted-0", 0.1, 1.0);
    assert!(share(&rt, &LITTLE) > 0.99, "{rt:?}");
}

/// Runnable tasks per CPU over time, rebuilt from wakeups, migrations and switches; returns
/// the longest time a CPU stayed idle while another had two or more runnable tasks.
fn longest_idle_while_overloaded(trace: &str, nr_cpus: usize, from: f64) -> f64 {
    use std::collections::BTreeMap;
    let mut cpu_of: BTreeMap<u32, usize> = BTreeMap::new();
    let mut nr = vec![0i32; nr_cpus];
    let mut idle = vec![true; nr_cpus];
    let mut idle_since: Vec<Option<f64>> = vec![None; nr_cpus];
    let mut worst: f64 = 0.0;
    let mut check = |t: f64, nr: &[i32], idle: &[bool], since: &mut Vec<Option<f64>>| {
        let overloaded = nr.iter().any(|&n| n >= 2);
        for c in 0..nr_cpus {
            let starving = idle[c] && nr[c] == 0 && overloaded;
            match (starving, since[c]) {
                (true, None) => since[c] = Some(t),
                (false, Some(s)) => {
                    if s >= from {
                        worst = worst.max(t - s);
                    }
                    since[c] = None;
                }
                _ => {}
            }
        }
    };
    for l in lines(trace) {
        let pid = || field(l.fields, "pid").and_then(|p| p.parse::<u32>().ok());
        match l.event {
            "sched_wakeup" | "sched_wakeup_new" => {
                let cpu: usize = field(l.fields, "target_cpu").unwrap().parse().unwrap();
                cpu_of.insert(pid().unwrap(), cpu);
                nr[cpu] += 1;
            }
            "sched_migrate_task" => {
                let (o, d): (usize, usize) = (
                    field(l.fields, "orig_cpu").unwrap().parse().unwrap(),
                    field(l.fields, "dest_cpu").unwrap().parse().unwrap(),
                );
                let p = pid().unwrap();
                // A queued task moves; a sleeping one moves at its wakeup (counted there).
                if cpu_of.get(&p) == Some(&o) {
                    nr[o] -= 1;
                    nr[d] += 1;
                    cpu_of.insert(p, d);
                }
            }
            "sched_switch" => {
                let (prev, next) = l.fields.split_once(" ==> ").unwrap();
                let state = field(prev, "prev_state").unwrap();
                let ppid: u32 = field(prev, "prev_pid").unwrap().parse().unwrap();
                if ppid != 0 && state != "R" {
                    nr[l.cpu] -= 1;
                    cpu_of.remove(&ppid);
                }
                idle[l.cpu] = field(next, "next_pid") == Some("0");
            }
            _ => continue,
        }
        check(l.t, &nr, &idle, &mut idle_since);
    }
    worst
}

#[test]
fn smp8_no_cpu_idles_for_a_balance_interval_while_another_is_overloaded() {
    // 12 CPU hogs on 8 CPUs, 4 of them ending after 50 ms, 4 tasks that wake often: CPUs
    // freed by the ending ones must take over doubled-up hogs.
    let json = r#"{ "tasks": {
        "hog": { "instance": 8, "loop": -1, "run": 100000 },
        "short": { "instance": 4, "loop": 1, "run": 50000 },
        "waker": { "instance": 4, "loop": -1, "run": 3000, "sleep": 2500 } } }"#;
    let (r, trace) = traced("smp8", json, S, &[], "");
    assert!(!r.eas_enabled);
    assert!(r.balance.lb_migrations > 0);
    // The MC domain's max_interval is 2 × 4 CPUs = 8 ms; the kick comes at a busy CPU's tick.
    let worst = longest_idle_while_overloaded(&trace, 8, 0.05);
    assert!(
        worst <= 0.008 + 0.004,
        "idle for {worst} s while others had 2+ tasks"
    );
}

#[test]
fn a_balance_pull_is_traced_on_the_pulling_cpu() {
    // load_balance() runs on the CPU that balances (env->dst_cpu): its detach_task() calls
    // set_task_cpu() there, so sched_migrate_task lands in the puller's buffer with the task
    // it is switching away from as current; a wake-up's migration is the waker's line, and
    // an idle CPU's (the nohz balancer's, for itself or on behalf of others) is written by
    // the idle task of the CPU that runs it.
    let json = workload(&[periodic("p", 16, 25)]);
    let (r, trace) = traced("smp8", &json, S / 2, &[], "");
    assert!(!r.eas_enabled && r.balance.active_migrations == 0);
    let wakings: std::collections::BTreeSet<(u64, &str)> = lines(&trace)
        .filter(|l| l.event == "sched_waking")
        .map(|l| ((l.t * 1e9).round() as u64, field(l.fields, "pid").unwrap()))
        .collect();
    let mut pulls = 0;
    for raw in trace
        .lines()
        .filter(|l| !l.trim_start().starts_with("<idle>-0 "))
    {
        let Some(l) = lines(raw)
            .next()
            .filter(|l| l.event == "sched_migrate_task")
        else {
            continue;
        };
        let pid = field(l.fields, "pid").unwrap();
        if wakings.contains(&((l.t * 1e9).round() as u64, pid)) {
            continue;
        }
        let dest: usize = field(l.fields, "dest_cpu").unwrap().parse().unwrap();
        assert_eq!(l.cpu, dest, "a pull written off the puller: {raw}");
        pulls += 1;
    }
    assert!(
        pulls > 0 && pulls as u64 <= r.balance.lb_migrations,
        "{pulls} pulls"
    );
}

#[test]
fn no_load_balancing_while_eas_is_active_and_not_overutilized() {
    // Small tasks never overutilize a CPU: under EAS find_busiest_group() finds the system
    // balanced every time, so no task is moved by load balancing; EAS places every wakeup.
    let json = workload(&[periodic("small", 3, 5)]);
    let (r, _) = traced("juno-r0", &json, S, &[], "");
    assert!(r.eas_enabled);
    assert_eq!(r.balance.lb_migrations, 0);
    assert!(r.balance.eas_wakeups > 100);
    // Without the energy model wakeups take the capacity-aware path.
    let (r, _) = traced("juno-r0", &json, S, &["config.ENERGY_MODEL=false"], "");
    assert!(!r.eas_enabled);
    assert_eq!(r.balance.eas_wakeups, 0);
}

#[test]
fn overutilized_is_traced_in_lisas_format() {
    let json = workload(&[periodic("big", 1, 60)]);
    let (_, trace) = traced("juno-r0", &json, S, &[], "");
    let ou: Vec<&str> = lines(&trace)
        .filter(|l| l.event == "sched_overutilized")
        .map(|l| l.fields)
        .collect();
    assert!(ou.contains(&"overutilized=1 span=0x3f"), "{ou:?}");
    assert!(ou.contains(&"overutilized=0 span=0x3f"), "{ou:?}");
}

// ----- RT: capacity-aware find_lowest_rq, push and pull --------------------------

#[test]
fn two_rt_tasks_on_sdm845_run_on_different_cpus() {
    // With the default RT boost (uclamp_min 1024) both fit only the big CPUs 4-7.
    let json = r#"{ "tasks": { "rt": { "instance": 2, "loop": -1, "policy": "SCHED_FIFO",
        "priority": 50, "run": 10000, "sleep": 1000 } } }"#;
    let (r, trace) = traced("sdm845", json, S, &[], "");
    // A 1 ms sleep is long enough for menu to pick the big cores' rail power collapse
    // (target residency 952 us), so a wake-up may first wait out its exit latency.
    let p = Platform::resolve("sdm845").unwrap();
    let exit = (4..8)
        .flat_map(|c| p.cpus[c].idle_states.iter().map(|s| s.exit_latency_ns))
        .max()
        .unwrap();
    for name in ["rt-0", "rt-1"] {
        let t = task(&r, name);
        // Waiting behind the other one would take up to its 10 ms run.
        assert!(
            t.wakeup_latency_ns.max < exit + 50_000,
            "{name}: {:?}",
            t.wakeup_latency_ns
        );
        let rt = runtime_per_cpu(&trace, 8, name, 0.0, 1.0);
        assert!(share(&rt, &[4, 5, 6, 7]) > 0.99, "{name}: {rt:?}");
    }
    let a = main_cpus(&trace, 8, &["rt-0".into(), "rt-1".into()], 0.0, 1.0);
    assert_ne!(a[0], a[1]);
}

/// For each time `name` was preempted while runnable, how long until it ran again (s).
fn preempted_waits(trace: &str, name: &str) -> Vec<f64> {
    let mut waits = Vec::new();
    let mut since = None;
    for l in lines(trace).filter(|l| l.event == "sched_switch") {
        let (prev, next) = l.fields.split_once(" ==> ").unwrap();
        if field(next, "next_comm") == Some(name) {
            if let Some(s) = since.take() {
                waits.push(l.t - s);
            }
        }
        if field(prev, "prev_comm") == Some(name) && field(prev, "prev_state") == Some("R") {
            since = Some(l.t);
        }
    }
    waits
}

#[test]
fn rt_task_preempted_by_a_higher_priority_one_is_pushed_to_another_cpu() {
    // `hi` is pinned to CPU 4 and wakes every 50 ms; `lo` runs most of the time on the big
    // CPUs and is often on CPU 4 when `hi` wakes there.
    let json = r#"{ "tasks": {
        "hi": { "loop": -1, "cpus": [4], "policy": "SCHED_FIFO", "priority": 80, "run": 20000,
                "timer": { "ref": "hi", "period": 50000 } },
        "lo": { "loop": -1, "policy": "SCHED_FIFO", "priority": 10, "run": 30000, "sleep": 100 } } }"#;
    let (_, trace) = traced("sdm845", json, S, &[], "");
    let waits = preempted_waits(&trace, "lo-1");
    assert!(!waits.is_empty(), "hi never preempted lo");
    for w in waits {
        assert!(
            w < 0.000_05,
            "lo waited {w} s for a CPU while three were free"
        );
    }
}

#[test]
fn cpu_lowering_its_priority_pulls_a_waiting_rt_task() {
    // `mid` may run on CPUs 4 and 5, where `top` and `side` (higher priority) wake with it
    // every 10 ms: it waits on one of them. `side` runs 2 ms, then CPU 5 drops to a fair
    // hog — without going idle — and pulls `mid` (pull_rt_task() from the switch to a lower
    // class) instead of leaving it behind `top`'s 8 ms.
    let json = r#"{ "tasks": {
        "top": { "loop": -1, "cpus": [4], "policy": "SCHED_FIFO", "priority": 90, "run": 8000,
                 "timer": { "ref": "top", "period": 10000 } },
        "side": { "loop": -1, "cpus": [5], "policy": "SCHED_FIFO", "priority": 90, "run": 2000,
                  "timer": { "ref": "side", "period": 10000 } },
        "mid": { "loop": -1, "cpus": [4, 5], "policy": "SCHED_FIFO", "priority": 50, "run": 1000,
                 "timer": { "ref": "mid", "period": 10000 } },
        "hog": { "loop": -1, "cpus": [5], "run": 100000 } } }"#;
    let (r, trace) = traced("sdm845", json, S, &[], "");
    let mid = task(&r, "mid-2");
    assert!(mid.wakeups > 50);
    // Each time `side` sleeps on CPU 5 while `mid` waits (woken, or preempted by `top`),
    // CPU 5 switches to `mid`.
    let (mut waiting, mut pulls) = (false, 0);
    for l in lines(&trace) {
        if l.event == "sched_wakeup" && field(l.fields, "comm") == Some("mid-2") {
            waiting = true;
        }
        if l.event != "sched_switch" {
            continue;
        }
        let (prev, next) = l.fields.split_once(" ==> ").unwrap();
        let to_mid = field(next, "next_comm") == Some("mid-2");
        // Preempted, `mid` waits on its runqueue too.
        if field(prev, "prev_comm") == Some("mid-2") && field(prev, "prev_state") == Some("R") {
            waiting = true;
        }
        if waiting
            && l.cpu == 5
            && field(prev, "prev_comm") == Some("side-1")
            && field(prev, "prev_state") == Some("S")
        {
            assert!(to_mid, "at {} s CPU 5 left mid waiting: {}", l.t, l.fields);
            pulls += 1;
        }
        if to_mid {
            waiting = false;
        }
    }
    assert!(pulls > 50, "CPU 5 pulled mid {pulls} times");
    // Never top's 8 ms: at most side's run (2 ms of work, longer while schedutil has
    // not yet raised the frequency for it).
    assert!(
        mid.wakeup_latency_ns.max < 8_000_000,
        "{:?}",
        mid.wakeup_latency_ns
    );
}

/// sdm845, performance governor: `side` (pinned to CPU 5) runs 2 ms at FIFO 90 every 10 ms,
/// then `side_tail` (a second phase at a lower RT priority or SCHED_OTHER, or nothing: it
/// sleeps); `top` (pinned to CPU 4, FIFO 90) wakes 0.5 ms into each period for 5 ms; `mid`
/// (FIFO 50, CPUs 4 and 5) wakes 0.1 ms in for 1.5 ms, while CPU 5 runs `side` at 90, so it
/// takes idle CPU 4 and `top` then preempts it there. `mid`'s wake-up latency.
fn rt_pull_after_side(side_tail: Option<&str>) -> schedlab::report::LatencySummary {
    let tail = match side_tail {
        Some(attrs) => format!(
            r#", "lo": {{ {attrs}, "run": 4000, "timer": {{ "ref": "side", "period": 10000 }} }}"#
        ),
        None => String::new(),
    };
    let hi_timer = if side_tail.is_none() {
        r#", "timer": { "ref": "side", "period": 10000 }"#
    } else {
        ""
    };
    let json = format!(
        r#"{{ "tasks": {{
        "side": {{ "loop": -1, "cpus": [5], "phases": {{
            "hi": {{ "policy": "SCHED_FIFO", "priority": 90, "run": 2000{hi_timer} }}{tail} }} }},
        "top": {{ "loop": -1, "cpus": [4], "delay": 500, "policy": "SCHED_FIFO", "priority": 90,
                  "run": 5000, "timer": {{ "ref": "top", "period": 10000 }} }},
        "mid": {{ "loop": -1, "cpus": [4, 5], "delay": 100, "policy": "SCHED_FIFO",
                  "priority": 50, "run": 1500, "timer": {{ "ref": "mid", "period": 10000 }} }} }} }}"#
    );
    let r = run_full(
        "sdm845",
        &json,
        S,
        &["cpufreq.governor=performance"],
        0,
        &Outputs::default(),
    );
    let mid = task(&r, "mid-2");
    assert!(mid.wakeups > 90, "{mid:?}");
    mid.wakeup_latency_ns
}

/// The bound on `mid`'s wait when CPU 5 takes it as soon as `side` stops running at 90:
/// `side`'s 2 ms, plus the kernel's paths and an idle exit; waiting behind `top` instead
/// takes its 5 ms run.
const PULL_BOUND_NS: u64 = 3_000_000;

#[test]
fn cpu_going_idle_pulls_a_waiting_rt_task_at_once() {
    // `side` sleeps after its 2 ms: CPU 5 goes idle, and balance_rt() on the way out pulls
    // `mid` from CPU 4, where `top` keeps it waiting.
    let lat = rt_pull_after_side(None);
    assert!(lat.max < PULL_BOUND_NS, "{lat:?}");
}

#[test]
fn rt_task_lowering_its_priority_pulls_a_waiting_rt_task_at_once() {
    // `side` keeps running but drops to FIFO 10 (prio_changed_rt()) or to SCHED_OTHER
    // (switched_from_rt()): either queues pull_rt_task(), which takes `mid` from CPU 4 at
    // once instead of leaving it behind `top`.
    for attrs in [
        r#""policy": "SCHED_FIFO", "priority": 10"#,
        r#""policy": "SCHED_OTHER""#,
    ] {
        let lat = rt_pull_after_side(Some(attrs));
        assert!(lat.max < PULL_BOUND_NS, "{attrs}: {lat:?}");
    }
}

/// smp8 (CPUs 0-3 share one L2, 4-7 the other): a waker alone on CPU 0 wakes a task last run
/// on idle CPU 4 that may run on 0 or 4, over `kind`; (the wakee's runtime on CPU 0, on 4).
fn sync_wake(kind: &str) -> (u64, u64) {
    let json = format!(
        r#"{{ "global": {{ "channels": {{ "c": {{ "kind": "{kind}", "capacity": 65536 }} }} }},
        "tasks": {{
          "waker": {{ "loop": -1, "cpus": [0], "run": 200,
                      "send": {{ "channel": "c", "bytes": 8 }}, "sleep": 2000 }},
          "wakee": {{ "loop": 1, "phases": {{
              "start": {{ "cpus": [4], "run": 100 }},
              "serve": {{ "cpus": [0, 4], "loop": 200,
                          "recv": {{ "channel": "c", "bytes": 8 }}, "run": 50 }} }} }} }} }}"#
    );
    let r = common::run_json(
        "smp8",
        &json,
        300_000_000,
        &["cpufreq.governor=performance"],
    );
    let rt = &task(&r, "wakee-1").cpu_runtime_ns;
    let on = |cpu: &str| rt.get(cpu).copied().unwrap_or(0);
    (on("0"), on("4"))
}

/// v6.1 `wake_affine_idle()`: a sync wake-up (`WF_SYNC`, as `pipe_write()` issues it, and
/// `sock_def_readable()` for the readers of every socket) from a waker that is alone on its
/// CPU takes the waker's CPU, which the waker is about to leave, although the wakee's
/// previous CPU is idle; a futex wake-up is not sync, and the idle previous CPU keeps the
/// wakee.
#[test]
fn a_sync_wakeup_from_a_lone_waker_takes_the_wakers_cpu() {
    for kind in ["pipe", "unix", "tcp", "udp"] {
        let (on_0, on_4) = sync_wake(kind);
        assert!(
            on_0 > 10 * on_4,
            "{kind}: {on_0} ns on the waker's CPU 0, {on_4} ns on the idle CPU 4"
        );
    }
    let (futex_on_0, futex_on_4) = sync_wake("futex");
    assert!(
        futex_on_4 > 10 * futex_on_0,
        "futex: {futex_on_0} ns on the waker's CPU 0, {futex_on_4} ns on the idle CPU 4"
    );
}

//! PELT and util_est (crates/model/src/kernel/pelt.rs) against outside references, through the public
//! API only: a periodic task driven through the calls the kernel makes (enqueue, tick,
//! dequeue, idle entry) is compared with a floating-point model of the PELT recurrence and
//! with LISA's `lisa.pelt.simulate_pelt` (skipped, with a message, when LISA is not
//! installed); then frequency/capacity invariance, decay, util_est and new-task
//! initialisation (SPEC §5).

use crate::common;
use schedlab::kernel::pelt::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const MS: u64 = 1_000_000;
/// One PELT period: 1024 units of 1024 ns.
const PERIOD_NS: u64 = 1024 * 1024;
/// CONFIG_HZ=250.
const TICK: u64 = 4 * MS;
const NICE_0: u64 = 1024;

/// One CPU running one fair task, calling the PELT functions where v6.1 does.
struct Cpu {
    clock: PeltClock,
    cfs: SchedAvg,
    se: SchedAvg,
    capacity: u64,
    freq_scale: u64,
    invariant: bool,
    running: bool,
    /// (time, task util_avg) after every update.
    samples: Vec<(u64, u64)>,
}

impl Cpu {
    fn new(capacity: u64, freq_scale: u64, invariant: bool) -> Cpu {
        let mut se = SchedAvg::default();
        init_entity_runnable_average(&mut se, NICE_0);
        Cpu {
            clock: PeltClock::default(),
            cfs: SchedAvg::default(),
            se,
            capacity,
            freq_scale,
            invariant,
            running: false,
            samples: Vec::new(),
        }
    }

    /// `update_rq_clock()` then `rq_clock_pelt()`.
    fn clock(&mut self, t: u64) -> u64 {
        let idle = !self.running;
        self.clock
            .update(t, idle, self.capacity, self.freq_scale, self.invariant);
        self.clock.now()
    }

    /// ttwu → enqueue_task_fair (util_est_enqueue, enqueue_entity's update_load_avg with
    /// DO_ATTACH) → schedule picks it (set_next_entity: no time has passed).
    fn wake(&mut self, t: u64) {
        let now = self.clock(t);
        util_est_enqueue(&mut self.cfs, &self.se, true);
        if self.se.last_update_time != 0 {
            update_se(&mut self.se, now, NICE_0, false, false, 1);
        }
        update_cfs_rq(&mut self.cfs, now, 0, 0, false);
        if self.se.last_update_time == 0 {
            attach(&mut self.cfs, &mut self.se, NICE_0);
        }
        self.running = true;
        self.samples.push((t, self.se.util_avg));
    }

    /// scheduler_tick → entity_tick → update_load_avg(curr).
    fn tick(&mut self, t: u64) {
        let now = self.clock(t);
        update_se(&mut self.se, now, NICE_0, true, true, 1);
        update_cfs_rq(&mut self.cfs, now, NICE_0, 1, true);
        self.samples.push((t, self.se.util_avg));
    }

    /// schedule() with the task blocking: dequeue_task_fair (util_est_dequeue,
    /// dequeue_entity's update_load_avg while still curr, util_est_update), then
    /// pick_next_task_fair finds nothing and the rq goes idle.
    fn sleep(&mut self, t: u64) {
        let now = self.clock(t);
        util_est_dequeue(&mut self.cfs, &self.se, true);
        update_se(&mut self.se, now, NICE_0, true, true, 1);
        update_cfs_rq(&mut self.cfs, now, NICE_0, 1, true);
        util_est_update(&mut self.se, true, self.capacity, true, true);
        self.running = false;
        self.clock.update_idle(self.cfs.util_sum, 0, 0);
        self.samples.push((t, self.se.util_avg));
    }

    /// A periodic task from `start`: running `run` ns of wall time every `period`, with
    /// ticks every TICK of absolute time while it runs, until `end`. Returns the
    /// (time, running) activation edges.
    fn periodic(&mut self, start: u64, run: u64, period: u64, end: u64) -> Vec<(u64, u8)> {
        let mut edges = Vec::new();
        let mut t = start;
        while t + period <= end {
            self.wake(t);
            edges.push((t, 1));
            let stop = t + run;
            let mut tick = (t / TICK + 1) * TICK;
            while tick < stop {
                self.tick(tick);
                tick += TICK;
            }
            self.sleep(stop);
            edges.push((stop, 0));
            t += period;
        }
        edges
    }
}

/// The PELT recurrence in floating point, in continuous time: util relaxes towards 1024
/// while running and towards 0 otherwise, with the time constant for which one period
/// decays by y (y^32 = 1/2). No windows, no integer rounding.
fn reference(edges: &[(u64, u8)], samples: &[(u64, u64)]) -> Vec<f64> {
    // y^32 = 1/2: one period decays by e^(-ln2/32).
    let tau = PERIOD_NS as f64 * 32.0 / std::f64::consts::LN_2;
    let mut out = Vec::with_capacity(samples.len());
    let (mut u, mut t, mut running) = (0.0f64, edges[0].0, 0u8);
    let mut e = 0;
    for &(s, _) in samples {
        // Advance through every edge up to the sample.
        loop {
            let next = if e < edges.len() && edges[e].0 <= s {
                edges[e].0
            } else {
                s
            };
            let k = (-((next - t) as f64) / tau).exp();
            u = if running == 1 {
                1024.0 - (1024.0 - u) * k
            } else {
                u * k
            };
            t = next;
            if e < edges.len() && edges[e].0 <= s {
                running = edges[e].1;
                e += 1;
            } else {
                break;
            }
        }
        out.push(u);
    }
    out
}

/// LISA's simulate_pelt on the same activations, at the same sample times.
fn lisa(python: &PathBuf, edges: &[(u64, u8)], samples: &[(u64, u64)]) -> Vec<Option<f64>> {
    let input = serde_json::json!({
        "events": edges.iter().map(|&(t, s)| serde_json::json!([t, s])).collect::<Vec<_>>(),
        "samples": samples.iter().map(|s| s.0).collect::<Vec<_>>(),
    });
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/lisa_pelt.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "LISA failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Mean of the task's util over the samples after `from`.
fn settled_mean(samples: &[(u64, u64)], from: u64) -> f64 {
    let v: Vec<f64> = samples
        .iter()
        .filter(|s| s.0 >= from)
        .map(|s| s.1 as f64)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

const DUTIES: [(u64, &str); 3] = [(10, "10%"), (50, "50%"), (90, "90%")];
/// Start off the PELT window grid, as a real task would.
const START: u64 = 3 * MS + 123_456;
const PERIOD: u64 = 16 * MS;
const END: u64 = START + 1_000 * MS;

#[test]
fn periodic_task_matches_the_floating_point_recurrence() {
    for (duty, name) in DUTIES {
        let mut cpu = Cpu::new(1024, 1024, true);
        let edges = cpu.periodic(START, PERIOD * duty / 100, PERIOD, END);
        let want = reference(&edges, &cpu.samples);
        let mut worst = 0.0f64;
        for (s, w) in cpu.samples.iter().zip(&want) {
            let err = (s.1 as f64 - w).abs();
            worst = worst.max(err);
            assert!(
                err <= 0.05 * 1024.0,
                "{name}: at {} ns util {} vs reference {w:.1}",
                s.0,
                s.1
            );
        }
        let from = START + 500 * MS;
        let got = settled_mean(&cpu.samples, from);
        let ref_samples: Vec<(u64, u64)> = cpu
            .samples
            .iter()
            .zip(&want)
            .map(|(s, w)| (s.0, w.round() as u64))
            .collect();
        let ref_mean = settled_mean(&ref_samples, from);
        eprintln!("{name}: settled mean {got:.1} vs reference {ref_mean:.1}, worst sample error {worst:.1}");
        assert!(
            (got - ref_mean).abs() <= 0.02 * 1024.0,
            "{name}: settled mean {got:.1} vs {ref_mean:.1}"
        );
        // And the settled level is the duty cycle.
        assert!(
            (got - duty as f64 * 10.24).abs() <= 0.1 * 1024.0,
            "{name}: mean {got:.1}"
        );
    }
}

#[test]
fn periodic_task_matches_lisa() {
    let Some(python) = common::lisa_python() else {
        return;
    };
    for (duty, name) in DUTIES {
        let mut cpu = Cpu::new(1024, 1024, true);
        let edges = cpu.periodic(START, PERIOD * duty / 100, PERIOD, END);
        let theirs = lisa(&python, &edges, &cpu.samples);
        let mut worst = 0.0f64;
        let mut compared = 0;
        for (s, l) in cpu.samples.iter().zip(&theirs) {
            let Some(l) = l else { continue };
            let err = (s.1 as f64 - l).abs();
            worst = worst.max(err);
            compared += 1;
        }
        eprintln!("{name}: max |kernel - LISA| = {worst:.2} over {compared} samples");
        assert!(compared + 1 >= cpu.samples.len());
        assert!(
            worst <= 0.02 * 1024.0,
            "{name}: max |kernel - LISA| = {worst:.2}"
        );
    }
}

/// A task that needs the same work every period: 3.2 ms of a full-speed CPU every 16 ms.
fn fixed_work(capacity: u64, freq_scale: u64, invariant: bool) -> Cpu {
    let mut cpu = Cpu::new(capacity, freq_scale, invariant);
    let speed = capacity * freq_scale;
    let run = 3_200_000 * 1024 * 1024 / speed;
    cpu.periodic(START, run, PERIOD, END);
    cpu
}

#[test]
fn invariance_makes_util_independent_of_capacity_and_frequency() {
    let full = fixed_work(1024, 1024, true);
    let full_mean = settled_mean(&full.samples, START + 500 * MS);
    assert!(
        (full_mean - 204.8).abs() < 0.05 * 1024.0,
        "full speed: {full_mean:.1}"
    );
    for (capacity, freq) in [(512, 1024), (1024, 512), (724, 724)] {
        let half = fixed_work(capacity, freq, true);
        let mean = settled_mean(&half.samples, START + 500 * MS);
        assert!(
            (mean - full_mean).abs() <= 0.05 * 1024.0,
            "capacity {capacity} freq {freq}: {mean:.1} vs full speed {full_mean:.1}"
        );
        // The peaks (at dequeue) agree too, not only the mean.
        let peak = |c: &Cpu| c.samples.iter().rev().take(40).map(|s| s.1).max().unwrap() as f64;
        assert!((peak(&half) - peak(&full)).abs() <= 0.05 * 1024.0);
        // Without invariance the same work takes twice the time and shows up as twice the
        // utilization.
        let raw = fixed_work(capacity, freq, false);
        let raw_mean = settled_mean(&raw.samples, START + 500 * MS);
        let ratio = raw_mean / full_mean;
        eprintln!("capacity {capacity} freq {freq}: {mean:.1} (full speed {full_mean:.1}), not invariant {raw_mean:.1}");
        assert!(
            (ratio - 2.0).abs() < 0.15,
            "capacity {capacity} freq {freq}: ratio {ratio:.2}"
        );
    }
}

#[test]
fn saturated_cpu_loses_its_idle_time() {
    // A task busy for 1 s on a half-capacity CPU: its util saturates in PELT time, so at
    // idle entry the gap between task clock and PELT clock is lost, not replayed as idle.
    let mut cpu = Cpu::new(512, 1024, true);
    cpu.wake(START);
    let mut t = START;
    while t < START + 1_000 * MS {
        t += TICK;
        cpu.tick(t);
    }
    let before = cpu.clock.now();
    assert!(cpu.se.util_avg > 1000, "{}", cpu.se.util_avg);
    cpu.sleep(t + TICK);
    assert!(cpu.clock.lost_idle_time > 0);
    assert_eq!(cpu.clock.now(), before + (TICK * 512 / 1024));
    // A CPU with idle time does jump: the stolen time comes back as idle.
    let mut light = fixed_work(512, 1024, true);
    assert_eq!(light.clock.lost_idle_time, 0);
    let pelt_before = light.clock.clock_pelt;
    light.clock.update(END + 10 * MS, true, 512, 1024, true);
    assert_eq!(light.clock.now(), END + 10 * MS);
    assert!(light.clock.now() > pelt_before);
}

#[test]
fn util_halves_every_32_periods_after_the_task_stops() {
    let mut cpu = Cpu::new(1024, 1024, true);
    cpu.periodic(START, 12 * MS, PERIOD, START + 400 * MS);
    let stop = cpu.samples.last().unwrap().0;
    let mut se = cpu.se;
    let u0 = se.util_avg as f64;
    assert!(u0 > 700.0);
    let half_life = LOAD_AVG_PERIOD * PERIOD_NS;
    for k in 1..=6u64 {
        update_blocked_se(&mut se, stop + k * half_life, NICE_0);
        let want = u0 / (1u64 << k) as f64;
        assert!(
            (se.util_avg as f64 - want).abs() <= 1.0,
            "after {k} half-lives: {} vs {want:.1}",
            se.util_avg
        );
    }
    // 32 ms is slightly less than 32 periods (33.55 ms): a bit more than half is left.
    let mut se = cpu.se;
    update_blocked_se(&mut se, stop + 32 * MS, NICE_0);
    let r = se.util_avg as f64 / u0;
    assert!(r > 0.5 && r < 0.53, "{r}");
    // Decay does not count as a new activation: util_est, flag included, is untouched.
    assert_eq!(se.util_est, cpu.se.util_est);
    let mut flagged = cpu.se;
    flagged.util_est.enqueued |= UTIL_AVG_UNCHANGED;
    update_blocked_se(&mut flagged, stop + 32 * MS, NICE_0);
    assert_ne!(flagged.util_est.enqueued & UTIL_AVG_UNCHANGED, 0);
}

/// A task whose util_avg is `util` and whose PELT changed since its last dequeue.
fn task(util: u64, ewma: u32, enqueued: u32) -> SchedAvg {
    SchedAvg {
        util_avg: util,
        util_est: UtilEst { enqueued, ewma },
        ..SchedAvg::default()
    }
}

#[test]
fn util_est_fastup_margin_and_ewma() {
    // FASTUP: a larger sample replaces the ewma at once.
    let mut p = task(300, 100, 100);
    util_est_update(&mut p, true, 1024, true, true);
    assert_eq!(
        p.util_est,
        UtilEst {
            enqueued: 300 | UTIL_AVG_UNCHANGED,
            ewma: 300
        }
    );
    // Without it, the rise is smoothed: (3 * 100 + 300) / 4.
    let mut p = task(300, 100, 100);
    util_est_update(&mut p, true, 1024, true, false);
    assert_eq!(p.util_est.ewma, 150);
    // Decreases are always smoothed, in the kernel's rounding: (3 * 400 + 201) / 4 = 350.
    let mut p = task(201, 400, 400);
    util_est_update(&mut p, true, 1024, true, true);
    assert_eq!(
        p.util_est,
        UtilEst {
            enqueued: 201 | UTIL_AVG_UNCHANGED,
            ewma: 350
        }
    );
    // Margin: |sample - ewma| < 10 leaves the ewma; the sample is stored only if it moved by
    // 10 or more since the last one.
    let mut p = task(291, 300, 291);
    util_est_update(&mut p, true, 1024, true, true);
    assert_eq!(
        p.util_est,
        UtilEst {
            enqueued: 291,
            ewma: 300
        },
        "nothing stored"
    );
    let mut p = task(291, 300, 250);
    util_est_update(&mut p, true, 1024, true, true);
    assert_eq!(
        p.util_est,
        UtilEst {
            enqueued: 291 | UTIL_AVG_UNCHANGED,
            ewma: 300
        }
    );
    // 10 below is outside the (strict) margin.
    let mut p = task(290, 300, 290);
    util_est_update(&mut p, true, 1024, true, true);
    assert_eq!(p.util_est.ewma, (3 * 300 + 290) / 4);
    // A task above the CPU's capacity had no idle time: its sample is dropped...
    let mut p = task(500, 600, 600);
    util_est_update(&mut p, true, 446, true, true);
    assert_eq!(
        p.util_est,
        UtilEst {
            enqueued: 600,
            ewma: 600
        }
    );
    // ...but only after FASTUP, which still takes a rise.
    let mut p = task(500, 300, 300);
    util_est_update(&mut p, true, 446, true, true);
    assert_eq!(p.util_est.ewma, 500);
    // Migrations (not a sleep) and the feature switch leave everything alone.
    let mut p = task(300, 100, 100);
    util_est_update(&mut p, false, 1024, true, true);
    util_est_update(&mut p, true, 1024, false, true);
    assert_eq!(
        p.util_est,
        UtilEst {
            enqueued: 100,
            ewma: 100
        }
    );
}

#[test]
fn util_est_waits_for_pelt_to_change() {
    let mut p = SchedAvg::default();
    let mut t = 0;
    for _ in 0..100 {
        t += MS;
        update_se(&mut p, t, NICE_0, true, true, 1);
    }
    util_est_update(&mut p, true, 1024, true, true);
    let first = p.util_est;
    assert_ne!(first.enqueued & UTIL_AVG_UNCHANGED, 0);
    // A short activation inside the same PELT period: util_avg is not recomputed, the flag
    // stays, the sample is skipped even though the task util moved under it.
    update_se(&mut p, t + 500 * 1024, NICE_0, true, true, 1);
    p.util_avg -= 50;
    util_est_update(&mut p, true, 1024, true, true);
    assert_eq!(p.util_est, first);
    // Crossing a period boundary recomputes util_avg and clears the flag.
    assert!(update_se(&mut p, t + 2 * MS, NICE_0, false, false, 1));
    assert_eq!(p.util_est.enqueued & UTIL_AVG_UNCHANGED, 0);
    util_est_update(&mut p, true, 1024, true, true);
    assert_ne!(p.util_est, first);
    // The flag never leaks into the estimate.
    assert_eq!(
        p.util_est.task_est(),
        p.util_est
            .ewma
            .max(p.util_est.enqueued & !UTIL_AVG_UNCHANGED)
    );
    assert!(p.util_est.task_est() <= 1024);
    assert_eq!(
        task_util_est(&p),
        p.util_avg.max(p.util_est.task_est() as u64)
    );
}

#[test]
fn cfs_rq_util_est_and_cpu_util() {
    let mut cfs = SchedAvg::default();
    let a = task(100, 300, 200 | UTIL_AVG_UNCHANGED);
    let b = task(100, 50, 80);
    util_est_enqueue(&mut cfs, &a, true);
    util_est_enqueue(&mut cfs, &b, true);
    assert_eq!(cfs.util_est.enqueued, 380);
    util_est_enqueue(&mut cfs, &a, false);
    assert_eq!(cfs.util_est.enqueued, 380);
    util_est_dequeue(&mut cfs, &a, true);
    assert_eq!(cfs.util_est.enqueued, 80);
    util_est_dequeue(&mut cfs, &a, true);
    assert_eq!(cfs.util_est.enqueued, 0, "saturates at 0");
    cfs.util_est.enqueued = u32::MAX - 1;
    util_est_enqueue(&mut cfs, &a, true);
    assert_eq!(cfs.util_est.enqueued, u32::MAX, "saturates at the top");
    assert_eq!(cpu_util_cfs(200, 380, 1024, true), 380);
    assert_eq!(cpu_util_cfs(200, 380, 1024, false), 200);
    assert_eq!(cpu_util_cfs(500, 380, 446, true), 446);
    assert_eq!(cpu_util_cfs(1300, 0, 1024, false), 1024);
}

#[test]
fn new_task_util_follows_spec_5_1() {
    let new = |cfs_util: u64, cfs_load: u64, cpu_scale: u64| {
        let mut sa = SchedAvg::default();
        init_entity_runnable_average(&mut sa, NICE_0);
        let cfs = SchedAvg {
            util_avg: cfs_util,
            load_avg: cfs_load,
            ..SchedAvg::default()
        };
        post_init_entity_util_avg(&mut sa, &cfs, NICE_0, cpu_scale);
        assert_eq!(sa.runnable_avg, sa.util_avg);
        assert_eq!(sa.load_avg, NICE_0, "load starts at full weight");
        assert_eq!((sa.load_sum, sa.util_sum, sa.last_update_time), (0, 0, 0));
        sa.util_avg
    };
    // Empty cfs_rq: the cap itself, half the CPU.
    assert_eq!(new(0, 0, 1024), 512);
    assert_eq!(new(0, 0, 446), 223);
    // The series of forks on one CPU halves the free capacity each time.
    assert_eq!(new(512, 1024, 1024), 256);
    assert_eq!(new(768, 2048, 1024), 128);
    // Cap <= 0 (cfs_rq at or over capacity; -1/2 rounds to 0): the task starts at 0.
    assert_eq!(new(1023, 1024, 1024), 0);
    assert_eq!(new(1024, 1024, 1024), 0);
    assert_eq!(new(1300, 1024, 1024), 0);
    // The extrapolation wins only when the cfs_rq's load dwarfs its util: the 64-bit
    // kernel's se->load.weight is 1024 << 10, so 10 * 1048576 / 100001 = 104 < cap 507.
    assert_eq!(new(10, 100_000, 1024), 104);
}

#[test]
fn wakeup_migration_decays_by_the_idle_lag() {
    // Source CPU: the task ran, then the CPU went idle with the task asleep and its cfs_rq
    // was not updated again (tickless idle).
    let mut src = Cpu::new(1024, 1024, true);
    src.periodic(START, 8 * MS, PERIOD, START + 200 * MS);
    let idle_at = src.samples.last().unwrap().0;
    let mut se = src.se;
    let before = se.util_avg;
    let mut removed = Removed::default();
    remove_entity_load_avg(&mut removed, &mut se, NICE_0, src.cfs.last_update_time);
    // 50 ms later the task wakes on another CPU: without the lag it would carry its
    // pre-sleep util; with it, 50 ms of decay.
    let now = idle_at + 50 * MS;
    migrate_se_pelt_lag(
        &mut se,
        NICE_0,
        &src.clock,
        src.cfs.last_update_time,
        now,
        true,
    );
    let want = before as f64 * 0.5f64.powf(50.0 * MS as f64 / (32 * PERIOD_NS) as f64);
    assert!(
        (se.util_avg as f64 - want).abs() <= 0.02 * 1024.0,
        "{} vs {want:.1}",
        se.util_avg
    );
    // Not done when the source CPU is busy (its clock is current).
    let mut busy = src.se;
    migrate_se_pelt_lag(
        &mut busy,
        NICE_0,
        &src.clock,
        src.cfs.last_update_time,
        now,
        false,
    );
    assert_eq!(busy, src.se);
    // The old cfs_rq drops the task's contribution at its next update.
    let mut cfs = src.cfs;
    assert!(apply_removed(&mut cfs, &mut removed));
    update_cfs_rq(&mut cfs, src.clock.now(), 0, 0, false);
    assert!(cfs.util_avg <= 1, "{cfs:?}");
}

// ----- util_est at every dequeue of a simulated run, against v6.1's util_est_update() ------

/// v6.1 `util_est_update()` (kernel/sched/fair.c), written from the kernel's source apart
/// from the library's: the state of a task's `struct util_est` (flag in `enqueued`) after a
/// dequeue with `task_sleep` on a CPU of `capacity_orig`, with `util` = `task_util(p)` read
/// after the dequeue's `update_load_avg()`. The tracepoint masks the flag.
fn kernel_util_est_update(
    ue: (u32, u32),
    util: u32,
    capacity_orig: u32,
    fastup: bool,
) -> (u32, u32) {
    const UNCHANGED: u32 = 1 << 31;
    // within_margin(): the kernel's unsigned trick on a `long`.
    let within = |v: i64| ((v + 9) as u32) < 19;
    let (enqueued, ewma) = ue;
    if enqueued & UNCHANGED != 0 {
        return ue;
    }
    let last_enqueued = enqueued as i64;
    let enqueued = util;
    if fastup && ewma < enqueued {
        return (enqueued | UNCHANGED, enqueued);
    }
    // unsigned int subtraction, then widened to long: a fall wraps to a large positive.
    let last_ewma_diff = enqueued.wrapping_sub(ewma) as i64;
    let last_enqueued_diff = last_enqueued - enqueued as i64;
    if within(last_ewma_diff) {
        if !within(last_enqueued_diff) {
            return (enqueued | UNCHANGED, ewma);
        }
        return ue;
    }
    if util > capacity_orig {
        return ue;
    }
    let ewma = ((ewma << 2).wrapping_add(last_ewma_diff as u32)) >> 2;
    (enqueued | UNCHANGED, ewma)
}

/// The task's trace lines of a run: (time s, event, fields).
fn task_lines<'a>(trace: &'a str, comm: &'a str) -> impl Iterator<Item = (f64, &'a str, &'a str)> {
    trace.lines().filter_map(move |l| {
        let (_, rest) = l.split_once("] ")?;
        let (t, rest) = rest.split_once(": ")?;
        let (event, fields) = rest.split_once(": ")?;
        if !fields.contains(comm) {
            return None;
        }
        Some((t.trim().parse().ok()?, event, fields))
    })
}

fn field_u64(fields: &str, key: &str) -> u64 {
    fields
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {fields}"))
        .parse()
        .unwrap()
}

/// A periodic task pinned to juno-r0's CPU 1 (A57, capacity 1024) under the performance
/// governor: 62 periods of 16 ms at 10% then 62 at 80% (of the A57 at its top OPP), with
/// UTIL_EST_FASTUP as given. The trace text (util_est and PELT events).
fn ten_then_eighty(fastup: bool) -> String {
    let json = r#"{ "tasks": { "task": { "cpus": [1], "loop": 1, "phases": {
        "p10": { "loop": 62, "run": 1600, "timer": { "ref": "unique", "period": 16000 } },
        "p80": { "loop": 62, "run": 12800, "timer": { "ref": "unique", "period": 16000 } } } } } }"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.txt");
    let out = schedlab::Outputs {
        trace: Some(path.clone()),
        trace_events: schedlab::kernel::tracepoint::EventSelection::parse(
            "sched_util_est_se,sched_pelt_se",
        )
        .unwrap(),
        ..schedlab::Outputs::default()
    };
    let fastup = format!("feature.UTIL_EST_FASTUP={fastup}");
    common::run_full(
        "juno-r0",
        json,
        2 * common::S,
        &["cpufreq.governor=performance", &fastup],
        0,
        &out,
    );
    std::fs::read_to_string(path).unwrap()
}

/// Every `sched_util_est_se` event of the run is v6.1's `util_est_update()` of the state the
/// previous one left, with the `task_util()` the dequeue's PELT update produced (the
/// `sched_pelt_se` at the same instant), at every sleeping dequeue (each switch-out in state
/// S has its event, none is skipped or extra), FASTUP on and off.
#[test]
fn util_est_of_every_dequeue_is_v61_util_est_update() {
    let mut ewmas = Vec::new();
    for fastup in [true, false] {
        let trace = ten_then_eighty(fastup);
        // A new task's util_est is zero (init_entity_runnable_average()), flag clear.
        let mut ue = (0u32, 0u32);
        let mut last_store_lut: Option<u64> = None;
        let (mut events, mut sleeps) = (0, 0);
        let mut pelt_util = None;
        for (t, event, fields) in task_lines(&trace, "task-0") {
            match event {
                "sched_pelt_se" => {
                    pelt_util = Some((
                        t,
                        field_u64(fields, "util"),
                        field_u64(fields, "update_time"),
                    ))
                }
                "sched_switch"
                    if fields.contains("prev_comm=task-0") && fields.contains("prev_state=S") =>
                {
                    sleeps += 1;
                }
                "sched_util_est_se" => {
                    events += 1;
                    assert_eq!(field_u64(fields, "cpu"), 1, "the task is pinned to CPU 1");
                    let util = field_u64(fields, "util");
                    // task_util() is read after the dequeue's update_load_avg().
                    let (pt, putil, lut) = pelt_util.expect("the dequeue updates PELT first");
                    assert_eq!((pt, putil), (t, util), "at {t}: {fields}");
                    // UTIL_AVG_UNCHANGED: set at the last store, cleared by the first decayed
                    // update of the queued task since (cfs_se_util_change()). Activations here
                    // are at least a PELT period (1024 * 1024 ns) apart, so one happened.
                    if let Some(stored) = last_store_lut {
                        assert!(
                            lut >= stored + (1 << 20),
                            "at {t}: a period boundary was crossed"
                        );
                        ue.0 &= !(1 << 31);
                    }
                    let next = kernel_util_est_update(ue, util as u32, 1024, fastup);
                    if next != ue {
                        last_store_lut = Some(lut);
                    }
                    ue = next;
                    let got = (
                        field_u64(fields, "enqueued") as u32,
                        field_u64(fields, "ewma") as u32,
                    );
                    assert_eq!(
                        got,
                        (ue.0 & !(1 << 31), ue.1),
                        "FASTUP {fastup}, update {events} at {t} s: util {util}"
                    );
                }
                _ => {}
            }
        }
        assert_eq!(events, sleeps, "one util_est update per sleeping dequeue");
        assert_eq!(events, 124, "62 + 62 activations");
        ewmas.push(ue.1);
    }
    // FASTUP took the 80% samples at once; without it the ewma is still catching up or has
    // caught up from below, never above.
    assert!(ewmas[0] >= ewmas[1], "{ewmas:?}");
}

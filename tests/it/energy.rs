//! Energy accounting: for a fixed-frequency run, the reported energy equals
//! Σ power × time computed here from juno-r0's table (LISA's Juno r0 energy model,
//! lisa/platforms/juno_r0.py).

use crate::common;
use common::*;

/// LISA's Juno r0 energy model (lisa/platforms/juno_r0.py) at the highest OPPs: per-CPU
/// active power, per-CPU idle-state power (WFI, cpu-sleep), cluster active power, cluster idle-state power (WFI, cluster-sleep).
fn juno_top(cpu: usize) -> (f64, [f64; 2]) {
    if cpu == 1 || cpu == 2 {
        (616.0, [15.0, 0.0])
    } else {
        (93.0, [6.0, 0.0])
    }
}
const CLUSTER_TOP: [(f64, [f64; 2]); 2] = [(57.0, [56.0, 17.0]), (64.0, [65.0, 24.0])];

#[test]
fn fixed_frequency_energy_is_power_times_time() {
    let json = r#"{ "tasks": {
        "big": { "loop": -1, "cpus": [1], "run": 3000, "sleep": 7000 },
        "little": { "loop": -1, "cpus": [3], "run": 500, "sleep": 2500 } } }"#;
    let r = run_json("juno-r0", json, 2 * S, &["cpufreq.governor=performance"]);
    let mut want = 0.0;
    for c in &r.cpus {
        let (active, idle) = juno_top(c.cpu);
        want += c.busy_ns as f64 * active;
        for (i, name) in ["WFI", "cpu-sleep-0"].iter().enumerate() {
            want += c.idle_state_ns[*name] as f64 * idle[i];
        }
        assert_eq!(c.busy_ns + c.idle_ns, 2 * S);
    }
    for (d, (active, idle)) in r.domains.iter().zip(CLUSTER_TOP) {
        want += d.busy_ns as f64 * active;
        let names: Vec<&String> = d.idle_state_ns.keys().collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // Shallow state first in the platform file: WFI, then cluster-sleep.
        let wfi = d
            .idle_state_ns
            .iter()
            .find(|(k, _)| k.contains("WFI"))
            .unwrap()
            .1;
        let sleep = d
            .idle_state_ns
            .iter()
            .find(|(k, _)| !k.contains("WFI"))
            .unwrap()
            .1;
        want += *wfi as f64 * idle[0] + *sleep as f64 * idle[1];
    }
    let want_mj = want / 1e9;
    assert!(r.energy_mj > 0.0);
    assert!(
        (r.energy_mj - want_mj).abs() < 1e-6 * want_mj,
        "{} vs {want_mj}",
        r.energy_mj
    );
    // The big CPU ran 3 ms in every 3 + 7 ms plus the wake from cpu-sleep-0 (juno.dts:
    // 1.2 ms exit) at 616 mW: at least that share of 2 s at 616 mW.
    let share = 3.0 / (3.0 + 7.0 + 1.2);
    assert!(
        r.cpus[1].energy_mj > 0.98 * share * 2.0 * 616.0,
        "{}",
        r.cpus[1].energy_mj
    );
}

#[test]
fn powersave_spends_less_energy_per_unit_of_work_on_juno() {
    let json = r#"{ "tasks": { "w": { "loop": 200, "cpus": [1], "run": 2000, "sleep": 8000 } } }"#;
    let perf = run_json("juno-r0", json, 10 * S, &["cpufreq.governor=performance"]);
    let save = run_json("juno-r0", json, 10 * S, &["cpufreq.governor=powersave"]);
    // Same work done; at 450 MHz the A57 costs 168 mW for 1100/450 the time, which is less
    // energy than 616 mW at 1100 MHz.
    assert!(task(&perf, "w-0").runtime_ns < task(&save, "w-0").runtime_ns);
    assert!(save.cpus[1].energy_mj < perf.cpus[1].energy_mj);
}

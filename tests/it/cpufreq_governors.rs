//! The cpufreq governors against v6.1 behaviour: each expectation comes from the
//! kernel source (cpufreq_schedutil.c, cpufreq_governor.c, cpufreq_ondemand.c,
//! cpufreq_conservative.c, cpufreq.c) or the seeds, worked out by hand on small OPP tables.

use schedlab::kernel::cpufreq::*;
use schedlab::platform::Opp;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// HZ=250, nohz, frequency invariant: the arm64 defaults.
fn env() -> Env {
    Env {
        tick_ns: 4 * MS,
        freq_invariant: true,
        nohz: true,
        io_is_busy: false,
    }
}

fn policy(cpus: &[usize], opps_khz: &[u32]) -> Policy {
    Policy {
        cpus: cpus.to_vec(),
        opps_khz: opps_khz.to_vec(),
        inefficient: Vec::new(),
        freq_table: true,
        fast_switch: true,
        dvfs_possible_from_any_cpu: true,
        transition_latency_ns: 0,
        transition_delay_us: None,
        min_khz: opps_khz[0],
        max_khz: *opps_khz.last().unwrap(),
        cur_khz: *opps_khz.last().unwrap(),
    }
}

fn policies(list: Vec<Policy>) -> Policies {
    Policies::new(list).unwrap()
}

fn with_rate_limit(us: u64) -> Tunables {
    Tunables {
        rate_limit_us: Some(us),
        ..Tunables::default()
    }
}

/// A CPU of capacity 1024 with only CFS utilization `util`.
fn cfs(util: u64) -> CpuUtil {
    CpuUtil {
        util_cfs: util,
        capacity_orig: 1024,
        uclamp_max: 1024,
        ..CpuUtil::default()
    }
}

fn switched(action: Option<Action>) -> Option<u32> {
    match action {
        Some(Action::Switch(c)) => Some(c.freq_khz),
        Some(Action::QueueWork { .. }) => panic!("fast switch expected"),
        None => None,
    }
}

/// Juno's A57 table.
const A57: [u32; 5] = [450_000, 625_000, 800_000, 950_000, 1_100_000];

#[test]
fn resolve_freq_follows_the_relation_within_the_limits() {
    let t = [500, 1000, 1500, 2000];
    // RELATION_L: lowest at or above; an exact entry is itself.
    assert_eq!(resolve_freq(&t, &[], 1001, 500, 2000, Relation::L), 1500);
    assert_eq!(resolve_freq(&t, &[], 1000, 500, 2000, Relation::L), 1000);
    // RELATION_H: highest at or below.
    assert_eq!(resolve_freq(&t, &[], 1499, 500, 2000, Relation::H), 1000);
    // RELATION_C: closest, a tie goes to the lower one (cpufreq_table_find_index_ac()).
    assert_eq!(resolve_freq(&t, &[], 1300, 500, 2000, Relation::C), 1500);
    assert_eq!(resolve_freq(&t, &[], 1200, 500, 2000, Relation::C), 1000);
    assert_eq!(resolve_freq(&t, &[], 1250, 500, 2000, Relation::C), 1000);
    // The target is first clamped into policy min/max.
    assert_eq!(resolve_freq(&t, &[], 3000, 500, 1500, Relation::L), 1500);
    assert_eq!(resolve_freq(&t, &[], 10, 1000, 2000, Relation::H), 1000);
}

#[test]
fn inefficient_opps_come_from_the_energy_model_and_e_relations_skip_them() {
    let opp = |freq_khz, power_mw| Opp {
        freq_khz,
        power_mw,
        cluster_power_mw: 0.0,
    };
    // hi6220 (HiKey 620): 1200000 * 69 / 208000 = 398 >= 344 at 432 MHz.
    let hikey = [
        opp(208_000, 69.0),
        opp(432_000, 124.0),
        opp(729_000, 224.0),
        opp(960_000, 367.0),
        opp(1_200_000, 670.0),
    ];
    assert_eq!(
        em_inefficient_opps(&hikey),
        [true, false, false, false, false]
    );
    // Juno's A53 costs rise with frequency: none.
    let juno = [
        opp(450_000, 33.0),
        opp(575_000, 46.0),
        opp(700_000, 61.0),
        opp(775_000, 76.0),
        opp(850_000, 93.0),
    ];
    assert!(!em_inefficient_opps(&juno).contains(&true));

    let t = [208_000, 432_000, 729_000, 960_000, 1_200_000];
    let marks = em_inefficient_opps(&hikey);
    assert_eq!(
        resolve_freq(&t, &marks, 100_000, 208_000, 1_200_000, Relation::LE),
        432_000
    );
    assert_eq!(
        resolve_freq(&t, &marks, 100_000, 208_000, 1_200_000, Relation::L),
        208_000
    );
    // No efficient OPP at or below: HE takes the lowest efficient one, above the target.
    assert_eq!(
        resolve_freq(&t, &marks, 300_000, 208_000, 1_200_000, Relation::HE),
        432_000
    );
    // schedutil resolves with RELATION_LE: an idle-ish CPU sits at 432 MHz, not 208 MHz…
    let mut p = policy(&[0], &t);
    p.inefficient = marks;
    p.cur_khz = 1_200_000;
    let mut s = Sugov::new(policies(vec![p.clone()]), &with_rate_limit(1000), &env());
    assert_eq!(
        switched(s.update_util(0, 0, MS, 0, &|_| cfs(10))),
        Some(432_000)
    );
    // …while powersave asks for policy->min with plain RELATION_L.
    let mut g = Cpufreq::new(
        GovernorKind::Powersave,
        policies(vec![p]),
        &Tunables::default(),
        &env(),
    )
    .unwrap();
    assert_eq!(
        g.start(0, &|_| CpuTimes::default()),
        [FreqChange {
            policy: 0,
            freq_khz: 208_000
        }]
    );
}

#[test]
fn policy_limits_are_verified_then_resolved_to_opps() {
    let mut g = Cpufreq::new(
        GovernorKind::Performance,
        policies(vec![policy(&[0], &A57)]),
        &Tunables::default(),
        &env(),
    )
    .unwrap();
    let limits = |g: &Cpufreq| (g.policies().get(0).min_khz, g.policies().get(0).max_khz);
    // min resolves up (RELATION_L), max down (RELATION_H).
    g.set_limits(0, 500_000, 1_000_000);
    assert_eq!(limits(&g), (625_000, 950_000));
    // Outside cpuinfo: clamped to it.
    g.set_limits(0, 1, 5_000_000);
    assert_eq!(limits(&g), (450_000, 1_100_000));
    // No OPP between them: cpufreq_frequency_table_verify() raises max to the next OPP.
    g.set_limits(0, 900_000, 900_000);
    assert_eq!(limits(&g), (950_000, 950_000));
    // min above max: min comes down to max.
    g.set_limits(0, 1_100_000, 625_000);
    assert_eq!(limits(&g), (625_000, 625_000));
}

#[test]
fn transition_delay_is_the_drivers_or_a_thousand_times_the_latency_capped() {
    // The driver's transition_delay_us wins (intel_cpufreq: 500 µs).
    assert_eq!(transition_delay_us(20_000, Some(500)), 500);
    // rk3399: 40 µs clock latency → 40 ms, capped at 10 ms.
    assert_eq!(transition_delay_us(40_000, None), 10_000);
    assert_eq!(transition_delay_us(5_000, None), 5_000);
    // Under 1 µs of latency, or none: LATENCY_MULTIPLIER µs.
    assert_eq!(transition_delay_us(999, None), 1_000);
    assert_eq!(transition_delay_us(0, None), 1_000);
    assert_eq!(transition_delay_us(0, Some(0)), 1_000);
}

#[test]
fn governor_names_round_trip() {
    for name in GovernorKind::NAMES {
        assert_eq!(GovernorKind::parse(name).unwrap().name(), *name);
    }
    // Android's interactive governor is not mainline's.
    assert_eq!(GovernorKind::parse("interactive"), None);
}

/// The userspace governor (`cpufreq_userspace.c`): a policy runs at the lowest OPP at or
/// above what was last written to its `scaling_setspeed` (`cpufreq_set()`,
/// `CPUFREQ_RELATION_L`); under another governor the write fails with EINVAL
/// (`store_scaling_setspeed()`: no `store_setspeed`).
#[test]
fn userspace_runs_each_policy_at_its_written_speed() {
    use crate::common::run_variant;
    use schedlab::kernel::Variant;
    use schedlab::platform::Platform;
    let json = r#"{"tasks": {"l": {"loop": -1, "cpus": [0], "run": 1000, "sleep": 1000},
                            "b": {"loop": -1, "cpus": [1], "run": 1000, "sleep": 1000}}}"#;
    let juno = Platform::resolve("juno-r0").unwrap();
    let ms = 1_000_000;
    let run = |governor: &str| {
        let mut v = Variant::for_platform(&juno);
        v.set_pair(&format!("cpufreq.governor={governor}"), "test")
            .unwrap();
        // LITTLE: 600 MHz asked, 700 the OPP at or above it; big: 1100.
        v.set_at(10 * ms, "cpufreq.policy0.scaling_setspeed=600000", "test")
            .unwrap();
        v.set_at(10 * ms, "cpufreq.policy1.scaling_setspeed=1100000", "test")
            .unwrap();
        run_variant("juno-r0", json, 40 * ms, v, 0, &Default::default())
    };
    let r = run("userspace");
    let results: Vec<_> = r.admin_writes.iter().map(|w| w.result).collect();
    assert_eq!(results, ["ok", "ok"]);
    let at = |cpu: usize, khz: &str| r.cpus[cpu].freq_residency_ns.get(khz).copied();
    // From the write to the end: 30 of 40 ms.
    assert_eq!(at(0, "700000"), Some(30 * ms));
    assert_eq!(at(3, "700000"), Some(30 * ms));
    assert_eq!(at(1, "1100000"), Some(30 * ms));
    let r = run("schedutil");
    let results: Vec<_> = r.admin_writes.iter().map(|w| w.result).collect();
    assert_eq!(results, ["EINVAL", "EINVAL"]);
}

#[test]
fn tunables_are_checked_as_the_sysfs_stores_check_them() {
    let mut t = Tunables::default();
    t.set("rate_limit_us", "200").unwrap();
    assert_eq!(t.rate_limit_us, Some(200));
    assert!(t.set("rate_limit_us", "-1").is_err());
    t.set("iowait_boost", "false").unwrap();
    assert!(!t.iowait_boost);
    assert!(t.set("up_threshold", "0").is_err());
    assert!(t.set("up_threshold", "101").is_err());
    assert!(t.set("down_threshold", "0").is_err());
    assert!(t.set("sampling_down_factor", "0").is_err());
    // freq_step and ignore_nice_load are clamped, not refused.
    t.set("freq_step", "150").unwrap();
    assert_eq!(t.freq_step, 100);
    t.set("ignore_nice_load", "7").unwrap();
    assert!(t.ignore_nice_load);
    let e = t.set("powersave_bias", "10").unwrap_err();
    assert!(e.contains("rate_limit_us"));
    assert_eq!(t.get("sampling_rate").unwrap(), "default");
    assert_eq!(t.get("rate_limit_us").unwrap(), "200");

    // sampling_rate below CPUFREQ_DBS_MIN_SAMPLING_INTERVAL (2 ticks) is refused.
    let mut t = Tunables::default();
    t.set("sampling_rate", "7999").unwrap();
    let p = || policies(vec![policy(&[0], &A57)]);
    assert!(Cpufreq::new(GovernorKind::Ondemand, p(), &t, &env()).is_err());
    t.set("sampling_rate", "8000").unwrap();
    assert!(Cpufreq::new(GovernorKind::Ondemand, p(), &t, &env()).is_ok());
    // conservative wants up_threshold above down_threshold, sampling_down_factor <= 10.
    let mut t = Tunables::default();
    t.set("up_threshold", "20").unwrap();
    assert!(Cpufreq::new(GovernorKind::Conservative, p(), &t, &env()).is_err());
    let mut t = Tunables::default();
    t.set("sampling_down_factor", "11").unwrap();
    assert!(Cpufreq::new(GovernorKind::Conservative, p(), &t, &env()).is_err());
    assert!(Cpufreq::new(GovernorKind::Ondemand, p(), &t, &env()).is_ok());
}

/// The frequency a fresh schedutil picks at its first evaluation for `rq`.
fn first_freq(opps: &[u32], rq: CpuUtil, env: &Env, cur_khz: u32) -> u32 {
    let mut p = policy(&[0], opps);
    p.cur_khz = cur_khz;
    let mut s = Sugov::new(policies(vec![p]), &with_rate_limit(1000), env);
    switched(s.update_util(0, 0, MS, 0, &|_| rq)).unwrap()
}

#[test]
fn schedutil_picks_the_lowest_opp_at_or_above_125_percent_of_util() {
    let e = env();
    // 1.25 * util * 1100000 / 1024 kHz, then the lowest OPP at or above.
    assert_eq!(first_freq(&A57, cfs(300), &e, 450_000), 450_000); // 402832
    assert_eq!(first_freq(&A57, cfs(400), &e, 450_000), 625_000); // 537109
    assert_eq!(first_freq(&A57, cfs(600), &e, 450_000), 950_000); // 805664
    assert_eq!(first_freq(&A57, cfs(700), &e, 450_000), 950_000); // 939941
    assert_eq!(first_freq(&A57, cfs(800), &e, 450_000), 1_100_000); // 1074218
                                                                    // Exactly on an OPP: that OPP. 1.25 * 512 * 1024000 / 1024 = 640000.
    let t = [320_000, 640_000, 1_024_000];
    assert_eq!(first_freq(&t, cfs(512), &e, 320_000), 640_000);
    assert_eq!(first_freq(&t, cfs(513), &e, 320_000), 1_024_000);
    // Util is relative to the CPU's own capacity: 256 of 512 is half.
    let little = CpuUtil {
        capacity_orig: 512,
        ..cfs(256)
    };
    assert_eq!(first_freq(&t, little, &e, 320_000), 640_000);
    // RT runnable before uclamp is ever used: the highest frequency.
    let rt = CpuUtil {
        rt_runnable: true,
        ..cfs(10)
    };
    assert_eq!(first_freq(&A57, rt, &e, 450_000), 1_100_000);
    // DL bandwidth adds to util (sugov_get_util → effective_cpu_util).
    let dl = CpuUtil {
        bw_dl: 300,
        ..cfs(100)
    };
    assert_eq!(first_freq(&A57, dl, &e, 450_000), 625_000); // 1.25 * 400
}

#[test]
fn not_frequency_invariant_scales_from_the_current_frequency() {
    // x86-like: 1.6-3.8 GHz in 100 MHz steps, a busy CPU starting at the lowest.
    let opps: Vec<u32> = (16..=38).map(|x| x * 100_000).collect();
    let e = Env {
        freq_invariant: false,
        ..env()
    };
    let mut p = policy(&[0], &opps);
    p.cur_khz = 1_600_000;
    let mut s = Sugov::new(policies(vec![p]), &with_rate_limit(500), &e);
    let busy = |_| cfs(1024);
    // next = 1.25 * policy->cur each evaluation: 2.0, 2.5, 3.125 → 3.2, then capped at 3.8.
    let steps: Vec<Option<u32>> = (1..=4)
        .map(|i| switched(s.update_util(0, 0, i * 500 * US, 0, &busy)))
        .collect();
    assert_eq!(
        steps,
        [
            Some(2_000_000),
            Some(2_500_000),
            Some(3_200_000),
            Some(3_800_000)
        ]
    );
    // Frequency invariant: straight to the top.
    let mut p = policy(&[0], &opps);
    p.cur_khz = 1_600_000;
    let mut s = Sugov::new(policies(vec![p]), &with_rate_limit(500), &env());
    assert_eq!(
        switched(s.update_util(0, 0, 500 * US, 0, &busy)),
        Some(3_800_000)
    );
}

#[test]
fn without_a_freq_table_raw_requests_are_news_even_on_the_same_p_state() {
    // intel_cpufreq has no table: next_freq is the raw request, the driver rounds it up.
    let opps: Vec<u32> = (16..=38).map(|x| x * 100_000).collect();
    let run = |freq_table: bool| {
        let mut p = policy(&[0], &opps);
        p.freq_table = freq_table;
        let mut s = Sugov::new(policies(vec![p]), &with_rate_limit(500), &env());
        // 1.25 * 700 * 3.8 GHz / 1024 = 3247070 kHz, then 1.25 * 701 → 3251708 kHz.
        let a = switched(s.update_util(0, 0, 500 * US, 0, &|_| cfs(700)));
        let b = switched(s.update_util(0, 0, 1000 * US, 0, &|_| cfs(701)));
        (a, b)
    };
    assert_eq!(run(true), (Some(3_300_000), None));
    assert_eq!(run(false), (Some(3_300_000), Some(3_300_000)));
}

/// Frequencies at which the boost is visible: util 0, capacity 1024, fmax 1024000 kHz, so a
/// boost b gives 1.25 * b * 1000 kHz.
const BOOST_OPPS: [u32; 5] = [100_000, 160_000, 320_000, 640_000, 1_024_000];

#[test]
fn iowait_boost_doubles_once_per_evaluation_then_halves() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &BOOST_OPPS)]),
        &with_rate_limit(1000),
        &env(),
    );
    let idle = |_| cfs(0);
    let mut call = |t_us: u64, flags: u32| switched(s.update_util(0, 0, t_us * US, flags, &idle));
    // First request: IOWAIT_BOOST_MIN = 128 → 160 MHz.
    assert_eq!(call(1000, SCHED_CPUFREQ_IOWAIT), Some(160_000));
    // Within the rate limit: the request doubles the boost to 256 and is pending; a second
    // request while pending does not double it again.
    assert_eq!(call(1200, SCHED_CPUFREQ_IOWAIT), None);
    assert_eq!(call(1400, SCHED_CPUFREQ_IOWAIT), None);
    // The next evaluation (a plain call) applies 256 without halving it: it was pending.
    assert_eq!(call(2000, 0), Some(320_000));
    assert_eq!(call(2100, SCHED_CPUFREQ_IOWAIT), None);
    assert_eq!(call(3000, 0), Some(640_000));
    assert_eq!(call(3100, SCHED_CPUFREQ_IOWAIT), None);
    // 1024 → 1.25 * 1024 kHz * 1000, capped at the top OPP.
    assert_eq!(call(4000, 0), Some(1_024_000));
    assert_eq!(call(4100, SCHED_CPUFREQ_IOWAIT), None);
    assert_eq!(call(5000, 0), None, "stays at SCHED_CAPACITY_SCALE");
    // Evaluations without a new request halve it: 512, 256, 128, then below 128 → 0. The CPU
    // idles in between, or the busy hold would keep the frequency.
    let mut expect = vec![
        (6000, Some(640_000)),
        (7000, Some(320_000)),
        (8000, Some(160_000)),
        (9000, Some(100_000)),
    ];
    for (t_us, freq) in expect.drain(..) {
        s.note_idle_enter(0);
        assert_eq!(
            switched(s.update_util(0, 0, t_us * US, 0, &idle)),
            freq,
            "{t_us}"
        );
    }
}

#[test]
fn iowait_boost_restarts_after_a_tick_without_calls() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &BOOST_OPPS)]),
        &with_rate_limit(1000),
        &env(),
    );
    let idle = |_| cfs(0);
    for t_us in [1000, 2000, 3000] {
        s.update_util(0, 0, t_us * US, SCHED_CPUFREQ_IOWAIT, &idle);
    }
    assert_eq!(s.policies().get(0).cur_khz, 640_000); // boost 512
    s.note_idle_enter(0);
    // More than TICK_NSEC (4 ms) later an IOWAIT call restarts from IOWAIT_BOOST_MIN…
    assert_eq!(
        switched(s.update_util(0, 0, 7001 * US, SCHED_CPUFREQ_IOWAIT, &idle)),
        Some(160_000)
    );
    // …exactly one tick later is not "more than a tick": the boost keeps doubling.
    s.update_util(0, 0, 11_001 * US, SCHED_CPUFREQ_IOWAIT, &idle);
    assert_eq!(s.policies().get(0).cur_khz, 320_000);
    // A plain call after more than a tick drops the boost altogether.
    s.note_idle_enter(0);
    assert_eq!(
        switched(s.update_util(0, 0, 15_002 * US, 0, &idle)),
        Some(100_000)
    );
}

#[test]
fn an_evaluation_between_requests_keeps_the_boost_from_building_up() {
    // Seed 004: with a call at dequeue and a rate limit shorter than the I/O loop, every
    // request is followed by an evaluation that halves it (128 → 64 → 0).
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &BOOST_OPPS)]),
        &with_rate_limit(0),
        &env(),
    );
    let idle = |_| cfs(0);
    let mut highest = 0;
    for i in 0..20 {
        let t = (1 + i * 300) * US;
        for (dt, flags) in [(0, SCHED_CPUFREQ_IOWAIT), (100 * US, 0)] {
            s.note_idle_enter(0);
            if let Some(f) = switched(s.update_util(0, 0, t + dt, flags, &idle)) {
                highest = highest.max(f);
            }
        }
    }
    assert_eq!(highest, 160_000);
    // The same loop without the dequeue calls builds up to the top.
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &BOOST_OPPS)]),
        &with_rate_limit(0),
        &env(),
    );
    for i in 0..20 {
        s.update_util(0, 0, (1 + i * 300) * US, SCHED_CPUFREQ_IOWAIT, &idle);
    }
    assert_eq!(s.policies().get(0).cur_khz, 1_024_000);
}

#[test]
fn iowait_boost_can_be_switched_off() {
    let t = Tunables {
        iowait_boost: false,
        ..with_rate_limit(0)
    };
    let mut p = policy(&[0], &BOOST_OPPS);
    p.cur_khz = 100_000;
    let mut s = Sugov::new(policies(vec![p]), &t, &env());
    let freqs: Vec<Option<u32>> = (1..10)
        .map(|i| switched(s.update_util(0, 0, i * 100 * US, SCHED_CPUFREQ_IOWAIT, &|_| cfs(0))))
        .collect();
    // Util 0 maps to a raw 0 kHz, which equals the initial cached_raw_freq: no request at all.
    assert!(freqs.iter().all(Option::is_none), "{freqs:?}");
    assert_eq!(s.policies().get(0).cur_khz, 100_000);
}

#[test]
fn no_two_changes_closer_than_the_rate_limit() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &A57)]),
        &with_rate_limit(2000),
        &env(),
    );
    // Util ramps every 100 µs; changes happen only when 2 ms passed since the last one.
    let mut changes = Vec::new();
    for i in 1..=200u64 {
        let t = i * 100 * US;
        if let Some(f) = switched(s.update_util(0, 0, t, 0, &|_| cfs(i * 5))) {
            changes.push((t, f));
        }
    }
    assert!(changes.len() >= 4, "{changes:?}");
    for w in changes.windows(2) {
        assert!(w[1].0 - w[0].0 >= 2 * MS, "{changes:?}");
    }
    assert_eq!(changes[0].0, 2 * MS);
}

#[test]
fn the_rate_limit_counts_from_the_last_change_not_the_last_evaluation() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &A57)]),
        &with_rate_limit(2000),
        &env(),
    );
    assert_eq!(
        switched(s.update_util(0, 0, 2 * MS, 0, &|_| cfs(300))),
        Some(450_000)
    );
    // Evaluated at 4 ms, same frequency: last_freq_update_time stays at 2 ms…
    assert_eq!(
        switched(s.update_util(0, 0, 4 * MS, 0, &|_| cfs(301))),
        None
    );
    // …so a change is allowed at 4.5 ms.
    assert_eq!(
        switched(s.update_util(0, 0, 4500 * US, 0, &|_| cfs(800))),
        Some(1_100_000)
    );
}

#[test]
fn default_rate_limit_is_the_transition_delay() {
    // rk3399: 40 µs latency → 10 ms.
    let mut p = policy(&[0], &A57);
    p.transition_latency_ns = 40_000;
    let mut s = Sugov::new(policies(vec![p]), &Tunables::default(), &env());
    assert_eq!(
        switched(s.update_util(0, 0, 10 * MS, 0, &|_| cfs(300))),
        Some(450_000)
    );
    assert_eq!(
        switched(s.update_util(0, 0, 19_999 * US, 0, &|_| cfs(900))),
        None
    );
    assert_eq!(
        switched(s.update_util(0, 0, 20 * MS, 0, &|_| cfs(900))),
        Some(1_100_000)
    );
}

#[test]
fn limits_changes_and_more_dl_bandwidth_bypass_the_rate_limit() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &A57)]),
        &with_rate_limit(10_000),
        &env(),
    );
    assert_eq!(
        switched(s.update_util(0, 0, 10 * MS, 0, &|_| cfs(800))),
        Some(1_100_000)
    );
    // Fast switch: the new max takes effect at the next call, rate limit or not. (The CPU
    // idles before each call, or the busy hold would keep next_freq at 1.1 GHz.)
    assert_eq!(s.set_limits(0, 0, 900_000), None);
    assert_eq!(
        s.policies().get(0).max_khz,
        800_000,
        "max resolved down to an OPP"
    );
    s.note_idle_enter(0);
    assert_eq!(
        switched(s.update_util(0, 0, 11 * MS, 0, &|_| cfs(800))),
        Some(800_000)
    );
    s.set_limits(0, 0, 1_100_000);
    s.note_idle_enter(0);
    assert_eq!(
        switched(s.update_util(0, 0, 12 * MS, 0, &|_| cfs(100))),
        Some(450_000)
    );
    // More DL bandwidth than at the last evaluation is granted at once.
    let dl = CpuUtil {
        bw_dl: 600,
        ..cfs(100)
    };
    assert_eq!(
        switched(s.update_util(0, 0, 13 * MS, 0, &|_| dl)),
        Some(950_000)
    );
    // Not so for CFS utilization.
    assert_eq!(
        switched(s.update_util(0, 0, 14 * MS, 0, &|_| cfs(900))),
        None
    );
}

#[test]
fn a_shared_policy_follows_its_busiest_cpu() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0, 1], &A57)]),
        &with_rate_limit(1000),
        &env(),
    );
    let rq = |cpu: usize| if cpu == 1 { cfs(600) } else { cfs(100) };
    // CPU 0 calls; CPU 1's util decides: 1.25 * 600 → 950 MHz.
    assert_eq!(switched(s.update_util(0, 0, MS, 0, &rq)), Some(950_000));
    // No busy hold on shared policies: the frequency drops without any idle.
    assert_eq!(
        switched(s.update_util(1, 1, 2 * MS, 0, &|_| cfs(100))),
        Some(450_000)
    );
}

#[test]
fn a_shared_policy_drops_the_boost_of_a_cpu_silent_for_a_tick() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0, 1], &BOOST_OPPS)]),
        &with_rate_limit(1000),
        &env(),
    );
    let idle = |_| cfs(0);
    assert_eq!(
        switched(s.update_util(1, 1, MS, SCHED_CPUFREQ_IOWAIT, &idle)),
        Some(160_000)
    );
    // CPU 0 evaluates 2 ms later: CPU 1's boost (not pending) halves below 128 and is gone.
    assert_eq!(
        switched(s.update_util(0, 0, 3 * MS, 0, &idle)),
        Some(100_000)
    );
    // CPU 1 boosts again; CPU 0 evaluates more than a tick after CPU 1's call: reset.
    s.update_util(1, 1, 10 * MS, SCHED_CPUFREQ_IOWAIT, &idle);
    s.update_util(1, 1, 11 * MS, SCHED_CPUFREQ_IOWAIT, &idle);
    assert_eq!(s.policies().get(0).cur_khz, 320_000);
    assert_eq!(
        switched(s.update_util(0, 0, 15_001 * US, 0, &idle)),
        Some(100_000)
    );
}

#[test]
fn a_single_cpu_that_has_not_idled_keeps_its_frequency() {
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &A57)]),
        &with_rate_limit(1000),
        &env(),
    );
    assert_eq!(
        switched(s.update_util(0, 0, MS, 0, &|_| cfs(800))),
        Some(1_100_000)
    );
    assert_eq!(
        switched(s.update_util(0, 0, 2 * MS, 0, &|_| cfs(100))),
        None
    );
    assert_eq!(
        switched(s.update_util(0, 0, 3 * MS, 0, &|_| cfs(100))),
        None
    );
    // Raising is never held.
    s.note_idle_enter(0);
    assert_eq!(
        switched(s.update_util(0, 0, 4 * MS, 0, &|_| cfs(100))),
        Some(450_000)
    );
    // Unless uclamp_max caps the rq: then it may drop while busy.
    assert_eq!(
        switched(s.update_util(0, 0, 5 * MS, 0, &|_| cfs(800))),
        Some(1_100_000)
    );
    let capped = CpuUtil {
        uclamp_used: true,
        uclamp_max: 300,
        ..cfs(800)
    };
    assert_eq!(
        switched(s.update_util(0, 0, 6 * MS, 0, &|_| capped)),
        Some(450_000)
    );
    // Without NO_HZ there is no idle count and no hold.
    let e = Env {
        nohz: false,
        ..env()
    };
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &A57)]),
        &with_rate_limit(1000),
        &e,
    );
    s.update_util(0, 0, MS, 0, &|_| cfs(800));
    assert_eq!(
        switched(s.update_util(0, 0, 2 * MS, 0, &|_| cfs(100))),
        Some(450_000)
    );
}

#[test]
fn uclamp_clamps_util_and_the_boost() {
    let e = env();
    let boosted = CpuUtil {
        uclamp_used: true,
        uclamp_min: 700,
        uclamp_max: 1024,
        ..cfs(100)
    };
    assert_eq!(first_freq(&A57, boosted, &e, 450_000), 950_000); // 1.25 * 700
                                                                 // Once uclamp is used, RT no longer means max: its util is clamped like CFS.
    let rt = CpuUtil {
        rt_runnable: true,
        util_rt: 100,
        uclamp_used: true,
        uclamp_max: 1024,
        ..cfs(0)
    };
    assert_eq!(first_freq(&A57, rt, &e, 450_000), 450_000);
    // The iowait boost goes through the rq clamp too: 128 capped at 64 → 80 MHz.
    let mut s = Sugov::new(
        policies(vec![policy(&[0], &[50_000, 80_000, 160_000, 1_024_000])]),
        &with_rate_limit(1000),
        &e,
    );
    let capped = CpuUtil {
        uclamp_used: true,
        uclamp_max: 64,
        ..cfs(0)
    };
    assert_eq!(
        switched(s.update_util(0, 0, MS, SCHED_CPUFREQ_IOWAIT, &|_| capped)),
        Some(80_000)
    );
}

#[test]
fn slow_switching_wakes_the_kthread_once_and_it_sets_the_latest_request() {
    let mut p = policy(&[0], &A57);
    p.fast_switch = false;
    p.cur_khz = 450_000;
    let mut g = Cpufreq::new(
        GovernorKind::Schedutil,
        policies(vec![p]),
        &with_rate_limit(1000),
        &env(),
    )
    .unwrap();
    let no_times = |_| CpuTimes::default();
    let wake = Some(Action::QueueWork { policy: 0, cpu: 0 });
    assert_eq!(g.update_util(0, 0, MS, 0, &|_| cfs(600)), wake);
    // sugov_deferred_update(): the kthread is already pending, nothing more to queue…
    assert_eq!(g.update_util(0, 0, 2 * MS, 0, &|_| cfs(800)), None);
    assert_eq!(g.policies().get(0).cur_khz, 450_000);
    // …and when it runs it sets the newest next_freq.
    let set = g.work(0, 3 * MS, &no_times);
    assert_eq!(
        set,
        Some(FreqChange {
            policy: 0,
            freq_khz: 1_100_000
        })
    );
    assert_eq!(
        g.update_util(0, 0, 4 * MS, 0, &|_| cfs(800)),
        None,
        "no news"
    );
    g.note_idle_enter(0);
    assert_eq!(g.update_util(0, 0, 5 * MS, 0, &|_| cfs(300)), wake);
    // A slow-switching policy applies new limits at once (cpufreq_policy_apply_limits()).
    let mut p = policy(&[0], &A57);
    p.fast_switch = false;
    let mut s = Sugov::new(policies(vec![p]), &with_rate_limit(1000), &env());
    assert_eq!(
        s.set_limits(0, 0, 700_000),
        Some(FreqChange {
            policy: 0,
            freq_khz: 625_000
        })
    );
}

#[test]
fn performance_and_powersave_pin_the_limits() {
    let mut p = policy(&[0], &A57);
    p.cur_khz = 625_000;
    let mut perf = Cpufreq::new(
        GovernorKind::Performance,
        policies(vec![p.clone()]),
        &Tunables::default(),
        &env(),
    )
    .unwrap();
    assert_eq!(perf.kind(), GovernorKind::Performance);
    let none = |_| CpuTimes::default();
    assert_eq!(
        perf.start(0, &none),
        [FreqChange {
            policy: 0,
            freq_khz: 1_100_000
        }]
    );
    assert_eq!(perf.update_util(0, 0, 10 * MS, 0, &|_| cfs(0)), None);
    assert_eq!(
        perf.set_limits(0, 0, 900_000),
        Some(FreqChange {
            policy: 0,
            freq_khz: 800_000
        })
    );
    let mut save = Cpufreq::new(
        GovernorKind::Powersave,
        policies(vec![p]),
        &Tunables::default(),
        &env(),
    )
    .unwrap();
    assert_eq!(save.kind(), GovernorKind::Powersave);
    assert_eq!(
        save.start(0, &none),
        [FreqChange {
            policy: 0,
            freq_khz: 450_000
        }]
    );
    assert_eq!(
        save.update_util(0, 0, 10 * MS, SCHED_CPUFREQ_IOWAIT, &|_| cfs(1024)),
        None
    );
    assert_eq!(
        save.set_limits(0, 500_000, 1_100_000),
        Some(FreqChange {
            policy: 0,
            freq_khz: 625_000
        })
    );
}

/// Six OPPs, 0.5-3 GHz: ondemand's linear map is min + load * 25000 kHz.
const OD_OPPS: [u32; 6] = [
    500_000, 1_000_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000,
];

fn dbs_governor(kind: GovernorKind, p: Policy, t: &Tunables, e: &Env) -> Cpufreq {
    let mut g = Cpufreq::new(kind, policies(vec![p]), t, e).unwrap();
    assert!(g.start(0, &|_| CpuTimes::default()).is_empty());
    g
}

/// A call on CPU 0 at `now` must queue a sample; run it with cumulative idle times `idle_ns`.
fn sample(g: &mut Cpufreq, now: u64, idle_ns: &[u64]) -> Option<u32> {
    assert_eq!(
        g.update_util(0, 0, now, 0, &|_| cfs(0)),
        Some(Action::QueueWork { policy: 0, cpu: 0 }),
        "a sample at {now}"
    );
    let times = |cpu: usize| CpuTimes {
        idle_ns: idle_ns[cpu],
        ..CpuTimes::default()
    };
    g.work(0, now, &times).map(|c| c.freq_khz)
}

#[test]
fn ondemand_samples_every_two_ticks_and_jumps_to_max_above_the_threshold() {
    let mut p = policy(&[0], &OD_OPPS);
    p.cur_khz = 500_000;
    let mut g = dbs_governor(GovernorKind::Ondemand, p, &Tunables::default(), &env());
    // cpufreq_start_governor() ends in ->limits, which zeroes the sample delay: the first
    // call after the start samples…
    assert_eq!(sample(&mut g, 8 * MS, &[0]), Some(3_000_000), "100% busy");
    // …and the next ones come sampling_rate = max(2 ticks = 8 ms, transition delay 1 ms)
    // apart.
    assert_eq!(g.update_util(0, 0, 15_999 * US, 0, &|_| cfs(0)), None);
    // The work is queued once until it has run.
    assert_eq!(
        g.update_util(0, 0, 16 * MS, 0, &|_| cfs(0)),
        Some(Action::QueueWork { policy: 0, cpu: 0 })
    );
    assert_eq!(g.update_util(0, 0, 17 * MS, 0, &|_| cfs(0)), None);
    // 45% busy: 0.5 GHz + 45% of 2.5 GHz = 1.625 GHz, the closest OPP (RELATION_C).
    let times = |_| CpuTimes {
        idle_ns: 4_400 * US,
        ..CpuTimes::default()
    };
    assert_eq!(
        g.work(0, 16 * MS, &times).map(|c| c.freq_khz),
        Some(1_500_000)
    );
    // 85% is below the nohz threshold of 95: 2.625 GHz → 2.5 GHz.
    assert_eq!(sample(&mut g, 24 * MS, &[5_600 * US]), Some(2_500_000));
}

#[test]
fn ondemand_up_threshold_is_80_without_nohz_idle_accounting() {
    let run = |e: Env| {
        let mut p = policy(&[0], &OD_OPPS);
        p.cur_khz = 500_000;
        let mut g = dbs_governor(GovernorKind::Ondemand, p, &Tunables::default(), &e);
        // 85% busy.
        sample(&mut g, 8 * MS, &[1_200 * US])
    };
    assert_eq!(run(env()), Some(2_500_000));
    assert_eq!(
        run(Env {
            nohz: false,
            ..env()
        }),
        Some(3_000_000)
    );
}

#[test]
fn ondemand_stays_at_max_sampling_down_factor_periods() {
    let mut t = Tunables::default();
    t.set("sampling_down_factor", "4").unwrap();
    let mut p = policy(&[0], &OD_OPPS);
    p.cur_khz = 500_000;
    let mut g = dbs_governor(GovernorKind::Ondemand, p, &t, &env());
    assert_eq!(sample(&mut g, 8 * MS, &[0]), Some(3_000_000));
    // Next sample 4 × 8 ms later.
    assert_eq!(g.update_util(0, 0, 39_999 * US, 0, &|_| cfs(0)), None);
    assert_eq!(sample(&mut g, 40 * MS, &[32 * MS]), Some(500_000));
    // Below the threshold rate_mult is back to 1.
    assert_eq!(sample(&mut g, 48 * MS, &[32 * MS]), Some(3_000_000));
}

#[test]
fn ondemand_load_is_the_busiest_cpu_of_the_policy() {
    let mut p = policy(&[0, 1], &OD_OPPS);
    p.cur_khz = 500_000;
    let mut g = dbs_governor(GovernorKind::Ondemand, p, &Tunables::default(), &env());
    // CPU 0 80% idle, CPU 1 28% idle: load 72 → 2.3 GHz → 2.5 GHz.
    assert_eq!(
        sample(&mut g, 8 * MS, &[6_400 * US, 2_240 * US]),
        Some(2_500_000)
    );
}

#[test]
fn ondemand_counts_iowait_as_busy_only_with_io_is_busy() {
    let run = |t: &Tunables| {
        let mut g = dbs_governor(GovernorKind::Ondemand, policy(&[0], &OD_OPPS), t, &env());
        g.update_util(0, 0, 8 * MS, 0, &|_| cfs(0));
        let all_iowait = |_| CpuTimes {
            iowait_ns: 8 * MS,
            ..CpuTimes::default()
        };
        g.work(0, 8 * MS, &all_iowait);
        g.policies().get(0).cur_khz
    };
    assert_eq!(run(&Tunables::default()), 500_000);
    let mut t = Tunables::default();
    t.set("io_is_busy", "1").unwrap();
    assert_eq!(run(&t), 3_000_000);
    // Nice time counts as idle with ignore_nice_load.
    let mut t = Tunables::default();
    t.set("ignore_nice_load", "1").unwrap();
    let mut g = dbs_governor(GovernorKind::Ondemand, policy(&[0], &OD_OPPS), &t, &env());
    g.update_util(0, 0, 8 * MS, 0, &|_| cfs(0));
    let all_nice = |_| CpuTimes {
        nice_ns: 8 * MS,
        ..CpuTimes::default()
    };
    assert_eq!(
        g.work(0, 8 * MS, &all_nice).map(|c| c.freq_khz),
        Some(500_000)
    );
}

#[test]
fn ondemand_reuses_the_last_load_once_after_a_long_idle() {
    let mut p = policy(&[0], &OD_OPPS);
    p.cur_khz = 500_000;
    let mut g = dbs_governor(GovernorKind::Ondemand, p, &Tunables::default(), &env());
    assert_eq!(sample(&mut g, 8 * MS, &[0]), Some(3_000_000));
    // 40 ms idle (more than 2 sampling periods): the load of the busy period is reused…
    assert_eq!(sample(&mut g, 48 * MS, &[40 * MS]), None);
    assert_eq!(g.policies().get(0).cur_khz, 3_000_000);
    // …once: 40% busy is 1.5 GHz.
    assert_eq!(sample(&mut g, 56 * MS, &[44_800 * US]), Some(1_500_000));
}

/// 1-2 GHz in 100 MHz steps: conservative's 5% of max is exactly one OPP.
fn fine_opps() -> Vec<u32> {
    (10..=20).map(|x| x * 100_000).collect()
}

#[test]
fn conservative_steps_by_five_percent_of_max() {
    let mut p = policy(&[0], &fine_opps());
    p.cur_khz = 1_000_000;
    let mut g = dbs_governor(GovernorKind::Conservative, p, &Tunables::default(), &env());
    assert_eq!(g.kind(), GovernorKind::Conservative);
    // Above up_threshold (80): +100 MHz per sample.
    assert_eq!(sample(&mut g, 8 * MS, &[0]), Some(1_100_000));
    assert_eq!(sample(&mut g, 16 * MS, &[0]), Some(1_200_000));
    // 81%: still up. 80%: not above the threshold; not below 20 either: stay.
    assert_eq!(sample(&mut g, 24 * MS, &[1_520 * US]), Some(1_300_000));
    assert_eq!(sample(&mut g, 32 * MS, &[3_120 * US]), None);
    // Below down_threshold (20): -100 MHz.
    assert_eq!(sample(&mut g, 40 * MS, &[9_920 * US]), Some(1_200_000));
}

#[test]
fn conservative_accumulates_its_request_between_coarse_opps() {
    let opps = [1_000_000, 1_250_000, 1_500_000, 1_750_000, 2_000_000];
    let mut p = policy(&[0], &opps);
    p.cur_khz = 1_000_000;
    let mut g = dbs_governor(GovernorKind::Conservative, p, &Tunables::default(), &env());
    // Requests 1.1, 1.2, 1.3, 1.4, 1.5 GHz, each resolved down (RELATION_H).
    let got: Vec<Option<u32>> = (1..=5).map(|i| sample(&mut g, i * 8 * MS, &[0])).collect();
    assert_eq!(got, [None, None, Some(1_250_000), None, Some(1_500_000)]);
}

#[test]
fn conservative_lowers_one_step_per_idle_period_and_waits_sampling_down_factor() {
    let mut g = dbs_governor(
        GovernorKind::Conservative,
        policy(&[0], &fine_opps()),
        &Tunables::default(),
        &env(),
    );
    assert_eq!(sample(&mut g, 8 * MS, &[0]), None, "already at max");
    // Idle 40 ms: 5 periods → 2.0 - 0.5 GHz; the reused load (100) then adds a step.
    assert_eq!(sample(&mut g, 48 * MS, &[40 * MS]), Some(1_600_000));

    let mut t = Tunables::default();
    t.set("sampling_down_factor", "2").unwrap();
    let mut g = dbs_governor(
        GovernorKind::Conservative,
        policy(&[0], &fine_opps()),
        &t,
        &env(),
    );
    // Idle samples lower only every second time.
    assert_eq!(sample(&mut g, 8 * MS, &[8 * MS]), None);
    assert_eq!(sample(&mut g, 16 * MS, &[16 * MS]), Some(1_900_000));
    assert_eq!(sample(&mut g, 24 * MS, &[24 * MS]), None);
    assert_eq!(sample(&mut g, 32 * MS, &[32 * MS]), Some(1_800_000));
}

/// Two single-CPU policies of `opps`; `any_cpu` is the driver's `dvfs_possible_from_any_cpu`.
fn two_policies(opps: &[u32], any_cpu: bool) -> Policies {
    let mut list = vec![policy(&[0], opps), policy(&[1], opps)];
    for p in &mut list {
        p.dvfs_possible_from_any_cpu = any_cpu;
    }
    policies(list)
}

#[test]
fn a_dbs_hook_on_another_cpu_counts_only_if_the_driver_allows_any_cpu() {
    // cpufreq_this_cpu_can_update(): intel_cpufreq and acpi-cpufreq leave
    // dvfs_possible_from_any_cpu unset, so CPU 0 updating CPU 1's rq (a remote enqueue, the
    // nohz idle balancer's blocked-load update) queues no sample for CPU 1's policy.
    let started = |kind, any_cpu| {
        let mut g = Cpufreq::new(
            kind,
            two_policies(&OD_OPPS, any_cpu),
            &Tunables::default(),
            &env(),
        )
        .unwrap();
        g.start(0, &|_| CpuTimes::default());
        g
    };
    for kind in [GovernorKind::Ondemand, GovernorKind::Conservative] {
        let mut g = started(kind, false);
        assert_eq!(g.update_util(1, 0, MS, 0, &|_| cfs(0)), None, "{kind:?}");
        // CPU 1 itself samples; the work runs on the CPU that queued it.
        assert_eq!(
            g.update_util(1, 1, MS, 0, &|_| cfs(0)),
            Some(Action::QueueWork { policy: 1, cpu: 1 })
        );
        // cpufreq-dt, scpi, scmi, qcom-cpufreq-hw: any CPU may.
        let mut g = started(kind, true);
        assert_eq!(
            g.update_util(1, 0, MS, 0, &|_| cfs(0)),
            Some(Action::QueueWork { policy: 1, cpu: 0 })
        );
    }
}

#[test]
fn a_schedutil_hook_on_another_cpu_keeps_the_boost_and_evaluates_nothing() {
    let mut s = Sugov::new(
        two_policies(&BOOST_OPPS, false),
        &with_rate_limit(1000),
        &env(),
    );
    let idle = |_| cfs(0);
    // CPU 0 enqueues an iowait task on CPU 1: sugov_iowait_boost() and last_update run
    // before sugov_should_update_freq() refuses the remote CPU, so nothing is evaluated…
    assert_eq!(
        switched(s.update_util(1, 0, MS, SCHED_CPUFREQ_IOWAIT, &idle)),
        None
    );
    assert_eq!(s.policies().get(1).cur_khz, 1_024_000);
    // …and CPU 1's next call of its own applies the pending boost (128 → 160 MHz).
    assert_eq!(
        switched(s.update_util(1, 1, 2 * MS, 0, &idle)),
        Some(160_000)
    );
    // With a driver that allows any CPU the remote call evaluates at once.
    let mut s = Sugov::new(
        two_policies(&BOOST_OPPS, true),
        &with_rate_limit(1000),
        &env(),
    );
    assert_eq!(
        switched(s.update_util(1, 0, MS, SCHED_CPUFREQ_IOWAIT, &idle)),
        Some(160_000)
    );
}

#[test]
fn a_policy_starts_where_cpufreq_start_khz_says() {
    let p = policy(&[0], &fine_opps());
    // idle: each governor's own idle frequency.
    let idle = |g| p.start_freq(StartFreq::Idle, g);
    assert_eq!(idle(GovernorKind::Performance), 2_000_000);
    assert_eq!(idle(GovernorKind::Powersave), 1_000_000);
    assert_eq!(idle(GovernorKind::Conservative), 1_000_000);
    // min, max, or the highest OPP at or below a kHz value, whatever the governor.
    for g in [GovernorKind::Schedutil, GovernorKind::Conservative] {
        assert_eq!(p.start_freq(StartFreq::Max, g), 2_000_000);
        assert_eq!(p.start_freq(StartFreq::Min, g), 1_000_000);
        assert_eq!(p.start_freq(StartFreq::Khz(1_450_000), g), 1_400_000);
        assert_eq!(p.start_freq(StartFreq::Khz(900_000), g), 1_000_000);
        assert_eq!(p.start_freq(StartFreq::Khz(9_000_000), g), 2_000_000);
    }
    // Without a frequency table (intel_cpufreq) too: policy->cur is a P-state.
    let mut x86 = policy(&[0], &fine_opps());
    x86.freq_table = false;
    assert_eq!(
        x86.start_freq(StartFreq::Khz(1_450_000), GovernorKind::Ondemand),
        1_400_000
    );
    assert_eq!(StartFreq::parse("max"), Some(StartFreq::Max));
    assert_eq!(StartFreq::parse("1800000"), Some(StartFreq::Khz(1_800_000)));
    assert_eq!(StartFreq::parse("0"), None);
}

#[test]
fn conservative_starts_from_policy_cur_and_keeps_a_middling_load_there() {
    // cs_start(): requested_freq = policy->cur. A load between down_threshold (20) and
    // up_threshold (80) changes nothing, so where it starts is where it stays.
    for start in [1_000_000, 2_000_000] {
        let mut p = policy(&[0], &fine_opps());
        p.cur_khz = start;
        let mut g = dbs_governor(GovernorKind::Conservative, p, &Tunables::default(), &env());
        for i in 1..=10 {
            // 50% busy in every sampling period.
            assert_eq!(sample(&mut g, i * 8 * MS, &[i * 4 * MS]), None);
        }
        assert_eq!(g.policies().get(0).cur_khz, start);
    }
}

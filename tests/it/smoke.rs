//! Every shared rt-app example and the default workload on every platform under every
//! governor, with uclamp always active: nothing panics and the kernel invariants (checked
//! after every event in debug builds) hold. The scenario tier: about a minute.

use crate::common;
use common::*;

#[test]
fn every_workload_on_every_platform_and_governor() {
    let mut files = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/workloads/default.json"
    ))];
    if let Some(dir) = examples_dir() {
        files.extend(std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()));
    }
    files.sort();
    let mut runs = 0;
    for platform in schedlab::platform::preset_names() {
        for governor in [
            "schedutil",
            "ondemand",
            "conservative",
            "performance",
            "powersave",
        ] {
            for f in &files {
                let json = std::fs::read_to_string(f).unwrap();
                let gov = format!("cpufreq.governor={governor}");
                let r = run_json(
                    platform,
                    &json,
                    S,
                    &[&gov, "variant.uclamp_static_key=always-active"],
                );
                let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
                assert!(
                    busy > 0,
                    "{platform} {governor} {}: nothing ran",
                    f.display()
                );
                runs += 1;
            }
        }
    }
    assert!(runs >= 25);
}

use proptest::prelude::*;

/// One rt-app event, as JSON text.
fn event() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..20_000).prop_map(|v| format!(r#""run": {v}"#)),
        (0u32..20_000).prop_map(|v| format!(r#""sleep": {v}"#)),
        (1u32..30_000).prop_map(|v| format!(r#""timer": {{ "ref": "unique", "period": {v} }}"#)),
        (0u32..5_000).prop_map(|v| format!(r#""runtime": {v}"#)),
        Just(r#""lock": "m", "run": 100, "unlock": "m""#.to_string()),
        Just(r#""yield": 0"#.to_string()),
        Just(r#""iorun": 4096"#.to_string()),
        Just(r#""barrier": "b""#.to_string()),
        Just(r#""fork": "child""#.to_string()),
    ]
}

/// One task: a policy, maybe pinned, maybe clamped, a few events.
fn task(i: usize) -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just("SCHED_OTHER"),
            Just("SCHED_FIFO"),
            Just("SCHED_RR"),
            Just("SCHED_IDLE")
        ],
        proptest::option::of(0usize..4),
        proptest::option::of(0i32..=1024),
        1u32..3,
        proptest::collection::vec(event(), 1..5),
    )
        .prop_map(move |(policy, cpu, umin, instances, events)| {
            let prio = if policy == "SCHED_FIFO" || policy == "SCHED_RR" {
                10
            } else {
                0
            };
            let mut t = format!(
                r#""t{i}": {{ "instance": {instances}, "policy": "{policy}", "priority": {prio}, "#
            );
            if let Some(c) = cpu {
                t += &format!(r#""cpus": [{c}], "#);
            }
            if let Some(u) = umin {
                t += &format!(r#""util_min": {u}, "#);
            }
            t + &events.join(", ") + " }"
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any workload the parser accepts simulates without a panic or a broken invariant.
    #[test]
    fn random_valid_workloads_simulate(
        tasks in proptest::collection::vec(0usize..1, 1..4).prop_flat_map(|v| {
            (0..v.len()).map(task).collect::<Vec<_>>()
        }),
        platform in prop_oneof![Just("juno-r0"), Just("smp8"), Just("sdm845"), Just("x86-4c8t")],
        seed in 0u64..4,
    ) {
        let json = format!(
            r#"{{ "tasks": {{ {}, "child": {{ "instance": 0, "loop": 1, "run": 300 }} }} }}"#,
            tasks.join(", ")
        );
        if let Ok(w) = schedlab::workload::parse_workload(&json, "p.json") {
            let p = schedlab::platform::Platform::resolve(platform).unwrap();
            if w.check_platform(p.nr_cpus()).is_ok() {
                let out = schedlab::Outputs::default();
                let r = run_full(platform, &json, 300 * MS, &[], seed, &out);
                prop_assert!(r.duration_ns <= 300 * MS);
            }
        }
    }
}

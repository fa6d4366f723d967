//! Every shared rt-app example and the default workload on every platform under every
//! governor, with uclamp always active: nothing panics and the kernel invariants (checked
//! after every event in debug builds) hold. The scenario tier: about a minute.

mod common;
use common::*;

#[test]
fn every_workload_on_every_platform_and_governor() {
    let mut files = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/workloads/default.json"
    ))];
    match examples_dir() {
        Some(dir) => files.extend(std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path())),
        None => eprintln!("SKIPPED the shared rt-app examples: ../shared/workloads not found"),
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

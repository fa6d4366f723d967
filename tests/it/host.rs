//! `schedlab host`: the platform file read from two committed sysfs snapshots
//! (tests/data/host: this project's VM and a made-up big.LITTLE board) and from the live
//! machine, and `host record` on the live machine: tracefs is left as it was found (after a
//! command that succeeds, fails or is interrupted), the trace reads back through `gen
//! from-trace`, and a tracefs that cannot be used is exit 2 with one line; `host validate
//! --quick` gives every family's rows and its summary. No test asserts a
//! host timing. The live tests need Linux and, for tracefs, root: elsewhere they skip
//! visibly (and fail under CI=true, which runs as root).

use crate::common::skip;
use schedlab::platform::{load_file, Platform};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

pub(crate) fn data(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/host")
        .join(sub)
}

pub(crate) fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `host platform --sysfs-root DIR --out FILE`, read back as `--platform FILE` reads it.
pub(crate) fn platform_of(root: &Path, dir: &Path) -> (Platform, String) {
    let file = dir.join("p.toml");
    let out = schedlab(&[
        "host",
        "platform",
        "--sysfs-root",
        root.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    (load_file(&file).unwrap(), text)
}

fn kernel(p: &Platform) -> BTreeMap<&str, &str> {
    p.kernel
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// A short simulation on the platform file.
fn runs_on(file: &Path) {
    let out = schedlab(&[
        "run",
        "--platform",
        file.to_str().unwrap(),
        "--duration",
        "200ms",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_vm_snapshot_gives_its_cpus_caches_frequency_and_kernel() {
    let tmp = tempfile::tempdir().unwrap();
    let (p, text) = platform_of(&data("xeon-vm"), tmp.path());
    // sys/devices/system/cpu/online: 0-1; cpu_capacity 1024; no SMT (thread_siblings_list
    // is the CPU itself); L3 (cache/index3) shared by 0-1.
    assert_eq!(p.nr_cpus(), 2);
    for c in &p.cpus {
        assert_eq!(c.capacity_orig, 1024);
        assert_eq!((c.llc, c.package, c.node), (0, 0, 0));
        assert!(c.smt_siblings.is_empty());
        // Family 6 model 167 (Rocket Lake): the nearest core costs.rs knows.
        assert_eq!(c.uarch, "skylake");
        // cpuidle/state0 POLL 0/0 us, state1 "haltpoll idle" 1/1 us.
        let states: Vec<(&str, u64, u64, bool)> = c
            .idle_states
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.exit_latency_ns,
                    s.target_residency_ns,
                    s.polling,
                )
            })
            .collect();
        assert_eq!(
            states,
            [("POLL", 0, 0, true), ("haltpoll idle", 1000, 1000, false)]
        );
    }
    // No cpufreq: one domain at /proc/cpuinfo's `cpu MHz` 2599.998.
    assert_eq!(p.freq_domains.len(), 1);
    assert_eq!(p.freq_domains[0].cpus, [0, 1]);
    let khz: Vec<u32> = p.freq_domains[0].opps.iter().map(|o| o.freq_khz).collect();
    assert_eq!(khz, [2_599_998]);
    // L1d 48K + L2 2048K private, L3 491520K.
    assert_eq!((p.memory.private_kib, p.memory.llc_kib), (2096, 491_520));
    // /proc/config.gz: CONFIG_HZ=250, no CONFIG_ENERGY_MODEL.
    assert_eq!(p.hz, Some(250));
    assert!(!p.energy_model);
    let k = kernel(&p);
    assert_eq!(k["variant.fair"], "eevdf", "osrelease 6.18.44");
    assert_eq!(k["config.UCLAMP_TASK"], "false");
    assert_eq!(k["config.FAIR_GROUP_SCHED"], "true");
    // sched/debug: base slice 1.4 ms over the factor 2 of 2 CPUs (tunable_scaling 1).
    assert_eq!(k["debug.tunable_scaling"], "1");
    assert_eq!(k["debug.min_granularity_ns"], "700000");
    assert_eq!(k["kernel.sched_rt_runtime_us"], "950000");
    assert!(
        !k.contains_key("cpuidle.governor"),
        "haltpoll is not modelled"
    );
    assert!(
        text.contains("# cpuidle.governor: haltpoll"),
        "the governor is a comment"
    );
    let v = schedlab::kernel::Variant::for_platform(&p);
    assert_eq!(v.fair.name(), "eevdf");
    runs_on(&tmp.path().join("p.toml"));
}

#[test]
fn the_biglittle_snapshot_gives_its_clusters_opps_and_idle_states() {
    let tmp = tempfile::tempdir().unwrap();
    let (p, _) = platform_of(&data("biglittle"), tmp.path());
    let caps: Vec<u32> = p.cpus.iter().map(|c| c.capacity_orig).collect();
    assert_eq!(caps, [381, 381, 381, 381, 1024, 1024]);
    let llcs: Vec<usize> = p.cpus.iter().map(|c| c.llc).collect();
    assert_eq!(llcs, [0, 0, 0, 0, 1, 1], "L2 shared by 0-3 and by 4-5");
    let uarchs: Vec<&str> = p.cpus.iter().map(|c| c.uarch.as_str()).collect();
    assert_eq!(uarchs[0], "cortex-a53");
    assert_eq!(uarchs[5], "cortex-a72");
    // policy0 and policy4: scaling_available_frequencies, policy4's boost frequency too.
    assert_eq!(p.freq_domains.len(), 2);
    assert_eq!(p.freq_domains[0].cpus, [0, 1, 2, 3]);
    assert_eq!(p.freq_domains[1].cpus, [4, 5]);
    let khz =
        |d: usize| -> Vec<u32> { p.freq_domains[d].opps.iter().map(|o| o.freq_khz).collect() };
    assert_eq!(
        khz(0),
        [408_000, 600_000, 816_000, 1_008_000, 1_200_000, 1_416_000]
    );
    assert_eq!(khz(1).last(), Some(&2_016_000));
    assert_eq!(khz(1).len(), 9);
    for d in &p.freq_domains {
        assert_eq!(d.transition_latency_ns, 40_000);
        assert!(!d.fast_switch, "cpufreq-dt");
        assert!(d.dvfs_possible_from_any_cpu, "cpufreq-dt");
    }
    // Three states (WFI 1/1, cpu-sleep 250/900, cluster-sleep 500/2000 us); CPU 5's
    // deepest is disabled.
    let states = |c: usize| -> Vec<(String, u64, u64)> {
        p.cpus[c]
            .idle_states
            .iter()
            .map(|s| (s.name.clone(), s.exit_latency_ns, s.target_residency_ns))
            .collect()
    };
    assert_eq!(
        states(0),
        [
            ("WFI".to_string(), 1_000, 1_000),
            ("cpu-sleep".to_string(), 250_000, 900_000),
            ("cluster-sleep".to_string(), 500_000, 2_000_000)
        ]
    );
    assert_eq!(states(5).len(), 2);
    assert!(p.energy_model, "debugfs energy_model has cpu0 and cpu4");
    assert!(p.freq_invariant);
    assert_eq!((p.memory.private_kib, p.memory.llc_kib), (32, 1024));
    let k = kernel(&p);
    assert_eq!(k["variant.fair"], "cfs", "osrelease 6.1.25");
    assert_eq!(k["config.UCLAMP_BUCKETS_COUNT"], "20");
    // debugfs shows the values scaled by 1 + ilog2(6) = 3.
    assert_eq!(k["debug.latency_ns"], "6000000");
    assert_eq!(k["debug.min_granularity_ns"], "750000");
    assert_eq!(k["debug.migration_cost_ns"], "500000");
    assert_eq!(k["feature.NEXT_BUDDY"], "false");
    assert_eq!(k["cpufreq.governor"], "schedutil");
    assert_eq!(k["cpuidle.governor"], "menu");
    assert_eq!(k["kernel.sched_util_clamp_min"], "1024");
    let v = schedlab::kernel::Variant::for_platform(&p);
    assert_eq!(v.sched_latency_ns, 6_000_000);
    runs_on(&tmp.path().join("p.toml"));
}

/// Copies `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

#[test]
fn an_x86_driver_takes_requests_from_the_policys_cpus_only() {
    // intel_cpufreq and acpi-cpufreq leave policy->dvfs_possible_from_any_cpu unset, so a
    // governor's hook run for another CPU's rq is ignored (cpufreq_this_cpu_can_update()).
    for driver in ["intel_cpufreq", "acpi-cpufreq"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("m");
        copy_dir(&data("biglittle"), &root);
        let policy0 = root.join("sys/devices/system/cpu/cpufreq/policy0/scaling_driver");
        std::fs::write(policy0, format!("{driver}\n")).unwrap();
        let (p, _) = platform_of(&root, tmp.path());
        assert!(!p.freq_domains[0].dvfs_possible_from_any_cpu, "{driver}");
        assert!(p.freq_domains[1].dvfs_possible_from_any_cpu, "cpufreq-dt");
    }
}

#[test]
fn a_scheduler_sysctl_no_upstream_kernel_has_is_named_as_the_kernels_own() {
    // This VM's kernel (6.18.44-fc) carries kernel.sched_vcpu_pack, which no upstream kernel
    // has: the platform file must say so, and not of the upstream sysctls beside it.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("m");
    copy_dir(&data("xeon-vm"), &root);
    std::fs::write(root.join("proc/sys/kernel/sched_vcpu_pack"), "15\n").unwrap();
    let (_, text) = platform_of(&root, tmp.path());
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("# kernel.{name} = ")))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
            .to_string()
    };
    assert!(
        line("sched_vcpu_pack").contains("no upstream kernel has this sysctl"),
        "{text}"
    );
    for upstream in ["sched_autogroup_enabled", "sched_cfs_bandwidth_slice_us"] {
        assert!(line(upstream).ends_with("): not modelled"), "{text}");
    }
}

#[test]
fn bad_sysfs_content_is_a_note_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("m");
    copy_dir(&data("biglittle"), &root);
    let cpu = root.join("sys/devices/system/cpu");
    std::fs::write(cpu.join("cpu2/cpu_capacity"), "lots\n").unwrap();
    std::fs::remove_file(cpu.join("cpu3/cache/index2/size")).unwrap();
    std::fs::write(
        cpu.join("cpufreq/policy4/scaling_available_frequencies"),
        "x y",
    )
    .unwrap();
    std::fs::remove_file(root.join("proc/config.gz")).unwrap();
    std::fs::write(root.join("proc/cpuinfo"), [0xff, 0xfe, b'\n']).unwrap();
    let (p, text) = platform_of(&root, tmp.path());
    assert_eq!(p.nr_cpus(), 6);
    for note in [
        "/sys/devices/system/cpu/cpu2/cpu_capacity: `lots` is not a number",
        "/sys/devices/system/cpu/cpu3/cache/index2/size: not readable",
        "/proc/config.gz and /boot/config-6.1.25-android14-11-made-up: absent",
    ] {
        assert!(text.contains(&format!("#   {note}")), "{note} in\n{text}");
    }
    // A missing root is an input error: one line, exit 2.
    let out = schedlab(&["host", "platform", "--sysfs-root", "/no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("schedlab: --sysfs-root: /no/such/dir"),
        "{err}"
    );
}

/// Whether this is a Linux machine with sysfs (a visible skip otherwise).
fn live_sysfs() -> bool {
    let ok = cfg!(target_os = "linux") && Path::new("/sys/devices/system/cpu/online").exists();
    if !ok {
        skip("not a Linux machine with sysfs");
    }
    ok
}

#[test]
fn this_machines_platform_has_its_cpus_and_runs() {
    if !live_sysfs() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (p, _) = platform_of(Path::new("/"), tmp.path());
    let nproc = std::thread::available_parallelism().unwrap().get();
    assert_eq!(p.nr_cpus(), nproc);
    runs_on(&tmp.path().join("p.toml"));
}

/// The live tracefs tests run one at a time (each compares tracefs before and after).
static TRACEFS: Mutex<()> = Mutex::new(());

const TRACEFS_DIR: &str = "/sys/kernel/tracing";

/// Whether `host record` can run here: Linux, root, a tracefs (a visible skip otherwise).
fn live_tracefs() -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
                .unwrap_or(false)
        })
        .unwrap_or(false);
    // A tracefs not mounted is mounted by `host record` (and unmounted after).
    let ok = cfg!(target_os = "linux") && root && Path::new(TRACEFS_DIR).is_dir();
    if !ok {
        skip("host record needs Linux, root and /sys/kernel/tracing");
    }
    ok
}

/// What `host record` could change: the top-level buffer's switches, its options, the
/// events enabled, the instances and the mounts.
fn tracefs_state() -> BTreeMap<String, String> {
    let dir = Path::new(TRACEFS_DIR);
    let mut s = BTreeMap::new();
    // The machine's tracefs and debugfs mounts (not the private ones `host platform`
    // makes in the temporary directory).
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let ours: Vec<&str> = mounts
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|m| m.starts_with("/sys/kernel"))
        })
        .collect();
    s.insert("mounts".into(), ours.join("\n"));
    if !dir.join("trace").exists() {
        return s;
    }
    for f in [
        "tracing_on",
        "buffer_size_kb",
        "trace_clock",
        "current_tracer",
        "set_event",
        "saved_cmdlines_size",
        "tracing_cpumask",
    ] {
        s.insert(
            f.to_string(),
            std::fs::read_to_string(dir.join(f)).unwrap_or_default(),
        );
    }
    let names = |sub: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    for o in names("options") {
        let v = std::fs::read_to_string(dir.join("options").join(&o)).unwrap_or_default();
        s.insert(format!("options/{o}"), v);
    }
    s.insert("instances".into(), names("instances").join(" "));
    s
}

fn record(dir: &Path, name: &str, cmd: &[&str]) -> (Output, PathBuf) {
    let trace = dir.join(name);
    let mut args = vec!["host", "record", "--out", trace.to_str().unwrap(), "--"];
    args.extend_from_slice(cmd);
    (schedlab(&args), trace)
}

#[test]
fn record_leaves_tracefs_as_it_found_it_and_its_trace_reads_back() {
    if !live_tracefs() {
        return;
    }
    let _one = TRACEFS.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let before = tracefs_state();
    let (out, trace) = record(tmp.path(), "sleep.txt", &["sleep", "0.1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(tracefs_state(), before);
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("# tracer: nop\n"), "{text:.200}");
    assert!(text.contains("\ncpus="));
    assert!(
        text.contains(": sched_switch: prev_comm="),
        "sched_switch lines in {text:.2000}"
    );
    let platform = tmp.path().join("sleep.platform.toml");
    assert!(load_file(&platform).is_ok());
    assert!(tmp.path().join("sleep.plat_info.yml").exists());
    let gen = schedlab(&[
        "gen",
        "from-trace",
        trace.to_str().unwrap(),
        "--trace-platform",
        platform.to_str().unwrap(),
    ]);
    assert!(gen.status.success(), "{}", stderr(&gen));
    assert!(String::from_utf8_lossy(&gen.stdout).contains("\"tasks\""));

    // A command that fails: its status, and tracefs restored.
    let (out, trace) = record(tmp.path(), "false.txt", &["false"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(trace.exists());
    assert_eq!(tracefs_state(), before);

    // A command that cannot start: exit 2, one line, tracefs restored.
    let (out, _) = record(tmp.path(), "none.txt", &["/no/such/program"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_eq!(tracefs_state(), before);

    // An event this kernel does not have: exit 2 before anything runs.
    let out = schedlab(&[
        "host",
        "record",
        "--out",
        tmp.path().join("e.txt").to_str().unwrap(),
        "--events",
        "sched_switch,no_such_event",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no_such_event"), "{}", stderr(&out));
    assert_eq!(tracefs_state(), before);
}

/// The pids of the children of `parent` (from /proc/*/stat).
fn children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: the comm may hold spaces and parentheses.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn an_interrupted_record_passes_the_signal_on_and_restores_tracefs() {
    if !live_tracefs() {
        return;
    }
    let _one = TRACEFS.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let before = tracefs_state();
    let trace = tmp.path().join("int.txt");
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["host", "record", "--out", trace.to_str().unwrap(), "--"])
        .args(["sleep", "30"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the command runs, schedlab's handlers are in place (they come first).
    let mut waited = 0;
    while children(child.id()).is_empty() {
        assert!(waited < 600, "the traced command never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    // sleep ended by SIGTERM (15): 128 + 15.
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("killed by signal 15"),
        "{}",
        stderr(&out)
    );
    assert!(trace.exists());
    assert_eq!(tracefs_state(), before);
}

#[test]
fn a_tracefs_that_cannot_be_used_is_exit_2_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out_file = tmp.path().join("t.txt");
    for dir in [PathBuf::from("/no/such/tracefs"), tmp.path().to_path_buf()] {
        let out = schedlab(&[
            "host",
            "record",
            "--tracefs",
            dir.to_str().unwrap(),
            "--out",
            out_file.to_str().unwrap(),
            "--",
            "true",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("schedlab: tracefs: "), "{err}");
        assert!(!out_file.exists(), "nothing is written");
    }
}

/// `host validate --quick` end to end on this machine, when the tools it drives are here
/// (CI installs them): it exits 0 whatever the numbers, every family gives rows, a row that
/// could not run says why, every other row has a number on at least one side (a latency with
/// no sample on one side is shown as `-`), and the table ends with its summary. No number is
/// checked: the machine is noisy.
#[test]
fn validate_quick_gives_every_family_and_ends_with_its_summary() {
    if !live_tracefs() {
        return;
    }
    let tools = ["rt-app", "hackbench", "cyclictest", "perf"];
    if let Some(t) = tools.iter().find(|t| !schedlab_host::measure::have(t)) {
        skip(&format!(
            "{t} is not installed (scripts/install-test-deps.sh installs rt-app, rt-tests and perf)"
        ));
        return;
    }
    let _one = TRACEFS.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("v.json");
    let out = schedlab(&[
        "host",
        "validate",
        "--quick",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last = text.lines().last().unwrap_or("");
    let counts: Vec<u64> = last
        .strip_prefix("host: ")
        .and_then(|l| l.strip_suffix(" rows within 25%"))
        .map(|l| l.split(" of ").filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    assert!(
        counts.len() == 2 && counts[0] <= counts[1] && counts[1] > 0,
        "{last}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    for family in ["rt-app", "hackbench", "perf pipe", "cyclictest", "replay"] {
        assert!(
            rows.iter().any(|r| r["family"] == family),
            "no {family} row"
        );
    }
    for r in rows {
        match r["not_run"].as_str() {
            Some(why) => assert!(!why.is_empty(), "{r}"),
            None => assert!(r["real"].is_object() || r["sim"].is_object(), "{r}"),
        }
    }
}

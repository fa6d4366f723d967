//! Platforms: the presets against SPEC §1, platform files (round trips and bad input), the
//! `schedlab platforms` text and LISA's plat_info.yml.

use crate::common;
use crate::common::key_path;
use schedlab::error::InputError;
use schedlab::platform::{load_file, parse_platform, preset, preset_names, Platform};
use schedlab::report::plat_info::plat_info_yaml;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn juno() -> Platform {
    preset("juno-r0").expect("juno-r0 is a preset")
}

#[test]
fn every_preset_parses_and_validates() {
    for &name in preset_names() {
        let platform = preset(name).unwrap_or_else(|| panic!("preset {name} missing"));
        assert_eq!(platform.name, name);
        assert!(
            !platform.description.is_empty(),
            "{name} must name its sources"
        );
        // The preset is the file under platforms/, and serde's derives read it the same way
        // as the hand-written reader, so the two cannot drift apart.
        let text = std::fs::read_to_string(repo_path(&format!("platforms/{name}.toml"))).unwrap();
        let file = format!("platforms/{name}.toml");
        assert_eq!(parse_platform(&text, &file).unwrap(), platform);
        // A `[layout]` is the reader's shorthand for the CPUs and policies it expands to
        // (serde reads the expansion: presets_round_trip_through_toml_and_json).
        if !text.contains("\n[layout]") {
            let via_serde: Platform = toml::from_str(&text).unwrap();
            assert_eq!(via_serde, platform);
        }
    }
}

#[test]
fn every_file_in_platforms_is_a_preset() {
    let mut files: Vec<String> = std::fs::read_dir(repo_path("platforms"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut names: Vec<String> = preset_names().iter().map(|n| format!("{n}.toml")).collect();
    names.sort();
    assert_eq!(files, names);
}

#[test]
fn juno_r0_is_the_default_and_names_resolve() {
    assert_eq!(preset_names()[0], "juno-r0");
    assert_eq!(Platform::resolve("juno-r0").unwrap(), juno());
    assert!(preset("juno").is_none());
    let err = Platform::resolve("no-such-platform-or-file").unwrap_err();
    assert_eq!(err.place, "no-such-platform-or-file");
}

#[test]
fn juno_r0_facts_equal_spec() {
    let p = juno();
    assert_eq!(p.nr_cpus(), 6);
    assert_eq!(p.freq_domains.len(), 2);
    let a53 = [0, 3, 4, 5];
    let a57 = [1, 2];
    for &c in &a53 {
        assert_eq!(p.cpus[c].uarch, "cortex-a53");
        assert_eq!(p.cpus[c].capacity_orig, 447);
    }
    for &c in &a57 {
        assert_eq!(p.cpus[c].uarch, "cortex-a57");
        assert_eq!(p.cpus[c].capacity_orig, 1024);
    }
    assert!(p.is_asymmetric());
    assert!(p.freq_invariant);
    assert_eq!(p.hz, None);

    // SPEC §1: (kHz, capacity, mW per CPU, mW per cluster).
    let a53_opps = [
        (450000, 235, 33.0, 26.0),
        (575000, 302, 46.0, 30.0),
        (700000, 368, 61.0, 39.0),
        (775000, 406, 76.0, 47.0),
        (850000, 447, 93.0, 57.0),
    ];
    let a57_opps = [
        (450000, 417, 168.0, 24.0),
        (625000, 579, 251.0, 32.0),
        (800000, 744, 359.0, 43.0),
        (950000, 883, 479.0, 49.0),
        (1100000, 1024, 616.0, 64.0),
    ];
    for (cpus, opps) in [(&a53[..], &a53_opps), (&a57[..], &a57_opps)] {
        let domain = p.domain_of(cpus[0]);
        let mut listed = domain.cpus.clone();
        listed.sort();
        assert_eq!(listed, cpus);
        assert_eq!(domain.opps.len(), opps.len());
        for (opp, &(khz, capacity, power, cluster)) in domain.opps.iter().zip(opps.iter()) {
            assert_eq!(opp.freq_khz, khz);
            assert_eq!(opp.power_mw, power);
            assert_eq!(opp.cluster_power_mw, cluster);
            // schedlab scales capacity linearly with frequency; the energy model's measured
            // capacities stay within 2 of that line.
            let derived = p.capacity_at(cpus[0], khz);
            assert!(
                derived.abs_diff(capacity) <= 2,
                "{khz} kHz: {derived} vs {capacity}"
            );
        }
    }

    let power = |states: &[schedlab::platform::IdleState], name: &str| {
        states.iter().find(|s| s.name == name).map(|s| s.power_mw)
    };
    for &c in &a53 {
        assert_eq!(power(&p.cpus[c].idle_states, "WFI"), Some(6.0));
        assert_eq!(power(&p.cpus[c].idle_states, "cpu-sleep-0"), Some(0.0));
    }
    for &c in &a57 {
        assert_eq!(power(&p.cpus[c].idle_states, "WFI"), Some(15.0));
    }
    let a53_cluster = &p.domain_of(0).cluster_idle_states;
    assert_eq!(power(a53_cluster, "WFI"), Some(56.0));
    assert_eq!(power(a53_cluster, "cluster-sleep-0"), Some(17.0));
    let a57_cluster = &p.domain_of(1).cluster_idle_states;
    assert_eq!(power(a57_cluster, "WFI"), Some(65.0));
    assert_eq!(power(a57_cluster, "cluster-sleep-0"), Some(24.0));
}

#[test]
fn capacity_scales_with_frequency() {
    let p = juno();
    // capacity_orig * freq / max_freq, rounded down as the kernel's integer arithmetic does.
    assert_eq!(p.capacity_at(0, 450000), 447 * 450000 / 850000);
    assert_eq!(p.capacity_at(0, 850000), 447);
    assert_eq!(p.capacity_at(1, 1100000), 1024);
    assert_eq!(p.max_freq_khz(3), 850000);
    assert_eq!(p.min_freq_khz(2), 450000);
}

#[test]
fn other_presets_match_spec() {
    let sdm845 = preset("sdm845").unwrap();
    assert_eq!(sdm845.nr_cpus(), 8);
    assert!((0..4).all(|c| sdm845.cpus[c].capacity_orig == 404));
    assert!((4..8).all(|c| sdm845.cpus[c].capacity_orig == 1024));
    assert_eq!(sdm845.max_freq_khz(0), 1766400);
    assert_eq!(sdm845.max_freq_khz(4), 2803200);
    assert_eq!(sdm845.min_freq_khz(4), 825600);

    let rk3399 = preset("rk3399").unwrap();
    assert_eq!(rk3399.nr_cpus(), 6);
    assert_eq!(rk3399.hz, Some(100));
    assert_eq!(rk3399.domain_of(0).transition_latency_ns, 40_000);
    assert_eq!(
        (rk3399.min_freq_khz(0), rk3399.max_freq_khz(0)),
        (408000, 1416000)
    );
    assert_eq!(
        (rk3399.min_freq_khz(4), rk3399.max_freq_khz(4)),
        (408000, 1800000)
    );
    assert!((0..4).all(|c| rk3399.cpus[c].uarch == "cortex-a53"));
    assert!((4..6).all(|c| rk3399.cpus[c].capacity_orig == 1024));

    let x86 = preset("x86-4c8t").unwrap();
    assert_eq!(x86.nr_cpus(), 8);
    assert!(!x86.freq_invariant);
    assert_eq!(x86.freq_domains.len(), 8);
    for c in 0..8 {
        assert_eq!(x86.cpus[c].capacity_orig, 1024);
        assert_eq!(x86.cpus[c].smt_siblings, vec![(c + 4) % 8]);
        assert_eq!(x86.domain_of(c).cpus, vec![c]);
        assert_eq!(x86.domain_of(c).transition_delay_us, Some(500));
        let freqs: Vec<u32> = x86.domain_of(c).opps.iter().map(|o| o.freq_khz).collect();
        let steps: Vec<u32> = (16..=38).map(|n| n * 100_000).collect();
        assert_eq!(freqs, steps);
    }

    // The server presets as seed 002 lists the Zen3 nodes (NPS4 node 1: CPUs 16-31,
    // 144-159) and seed 000 the Xeon (2 × 10 cores × 2 threads).
    for (name, nodes) in [("zen3-2s", 2), ("zen3-2s-nps2", 4), ("zen3-2s-nps4", 8)] {
        let z = preset(name).unwrap();
        assert_eq!(
            (z.nr_cpus(), z.nr_nodes(), z.freq_domains.len()),
            (256, nodes, 256)
        );
        let per_node = 128 / nodes;
        for c in 0..256 {
            let core = c % 128;
            assert_eq!(z.cpus[c].smt_siblings, vec![(c + 128) % 256]);
            assert_eq!(z.cpus[c].node, core / per_node);
            assert_eq!(z.cpus[c].package, core / 64);
            assert_eq!(z.cpus[c].llc, core / 8);
        }
        assert_eq!(z.node_distance(0, 1), if nodes == 2 { 32 } else { 12 });
        assert_eq!(z.node_distance(0, nodes - 1), 32);
        assert_eq!(z.max_freq_khz(0), 3_675_000);
    }
    let xeon = preset("xeon-2s").unwrap();
    assert_eq!((xeon.nr_cpus(), xeon.nr_nodes()), (40, 2));
    assert_eq!(xeon.cpus[3].smt_siblings, vec![23]);
    assert_eq!((xeon.cpus[13].node, xeon.cpus[33].node), (1, 1));

    let smp8 = preset("smp8").unwrap();
    assert_eq!(smp8.nr_cpus(), 8);
    assert!(!smp8.is_asymmetric());
    assert!(smp8.cpus.iter().all(|c| c.capacity_orig == 1024));
}

#[test]
fn presets_round_trip_through_toml_and_json() {
    for &name in preset_names() {
        let platform = preset(name).unwrap();
        let toml_text = toml::to_string(&platform).unwrap();
        assert_eq!(
            parse_platform(&toml_text, "round-trip.toml").unwrap(),
            platform,
            "{name}"
        );
        let json_text = serde_json::to_string_pretty(&platform).unwrap();
        assert_eq!(
            parse_platform(&json_text, "round-trip.json").unwrap(),
            platform,
            "{name}"
        );
    }
}

/// A small valid platform for the bad-input tests to break.
const BASE: &str = r#"
name = "tiny"

[[cpus]]
uarch = "little"
capacity_orig = 512
freq_domain = 0
llc = 0

[[cpus]]
uarch = "big"
capacity_orig = 1024
freq_domain = 1
llc = 0

[[freq_domains]]
cpus = [0]
opps = [
  { freq_khz = 500000, power_mw = 10 },
  { freq_khz = 1000000, power_mw = 30 },
]

[[freq_domains]]
cpus = [1]
opps = [{ freq_khz = 1000000, power_mw = 100 }]
"#;

fn broken(from: &str, to: &str) -> InputError {
    assert!(BASE.contains(from), "{from:?} is not in BASE");
    parse_platform(&BASE.replacen(from, to, 1), "bad.toml").unwrap_err()
}

#[test]
fn base_platform_is_valid() {
    let p = parse_platform(BASE, "base.toml").unwrap();
    assert_eq!(p.nr_cpus(), 2);
    assert!(p.freq_invariant, "freq_invariant defaults to true");
    assert_eq!(p.cpus[0].idle_states, vec![]);
}

#[test]
fn missing_field_is_named() {
    let err = broken("llc = 0\n", "");
    assert_eq!(err.file, "bad.toml");
    assert_eq!(
        err.place, "cpus[0].llc (line 4 column 1)",
        "the CPU's table"
    );
    assert!(err.found.contains("missing"), "{err}");
}

#[test]
fn wrong_type_is_named() {
    let err = broken("capacity_orig = 512", "capacity_orig = \"big\"");
    assert_eq!(err.place, "cpus[0].capacity_orig (line 6 column 1)");
    assert!(err.found.contains("\"big\""), "{err}");
    assert!(err.expected.contains("capacity"), "{err}");
}

#[test]
fn freq_domain_out_of_range_is_named() {
    let err = broken("freq_domain = 1", "freq_domain = 7");
    assert_eq!(key_path(&err.place), "cpus[1].freq_domain");
    assert_eq!(err.found, "7");
}

#[test]
fn domain_and_cpu_must_agree() {
    let err = broken("cpus = [1]", "cpus = [0]");
    assert_eq!(key_path(&err.place), "cpus[1].freq_domain");
    let err = broken("cpus = [0]", "cpus = [0, 1]");
    assert_eq!(key_path(&err.place), "freq_domains[0].cpus[1]");
}

#[test]
fn descending_opps_are_named() {
    let err = broken(
        "freq_khz = 1000000, power_mw = 30",
        "freq_khz = 400000, power_mw = 30",
    );
    assert_eq!(
        err.place,
        "freq_domains[0].opps[1].freq_khz (line 20 column 5)"
    );
    assert_eq!(err.found, "400000");
}

#[test]
fn a_platform_needs_a_1024_cpu() {
    let err = broken("capacity_orig = 1024", "capacity_orig = 1000");
    assert_eq!(key_path(&err.place), "cpus[1].capacity_orig");
    assert!(err.expected.contains("1024"), "{err}");
}

#[test]
fn other_rules_are_enforced() {
    let cases = [
        (
            "power_mw = 10",
            "power_mw = -1",
            "freq_domains[0].opps[0].power_mw",
        ),
        // Above EM_MAX_POWER, which em_create_perf_table() refuses (and which would overflow
        // the energy model's integer costs).
        (
            "power_mw = 10",
            "power_mw = 9223372036854775807",
            "freq_domains[0].opps[0].power_mw",
        ),
        (
            "capacity_orig = 512",
            "capacity_orig = 0",
            "cpus[0].capacity_orig",
        ),
        (
            "capacity_orig = 512",
            "capacity_orig = 2048",
            "cpus[0].capacity_orig",
        ),
        ("llc = 0\n", "llc = 9\n", "cpus[0].llc"),
        (
            "llc = 0\n",
            "llc = 0\nsmt_siblings = [1]\n",
            "cpus[1].smt_siblings",
        ),
        (
            "llc = 0\n",
            "llc = 0\nsmt_siblings = [0]\n",
            "cpus[0].smt_siblings[0]",
        ),
        ("llc = 0\n", "llc = 0\ncolour = 1\n", "cpus[0].colour"),
        (
            "opps = [{ freq_khz = 1000000, power_mw = 100 }]",
            "opps = []",
            "freq_domains[1].opps",
        ),
        ("name = \"tiny\"", "name = \"tiny\"\nhz = 7", "hz"),
        (
            "llc = 0\n",
            "llc = 0\nidle_states = [{ name = \"deep\", power_mw = 0, exit_latency_ns = 900 }, \
             { name = \"shallow\", power_mw = 5, exit_latency_ns = 1 }]\n",
            "cpus[0].idle_states[1].exit_latency_ns",
        ),
        // A state's typical exit cannot be longer than its declared worst case.
        (
            "llc = 0\n",
            "llc = 0\nidle_states = [{ name = \"deep\", power_mw = 0, exit_latency_ns = 900, \
             typical_exit_ns = 901 }]\n",
            "cpus[0].idle_states[0].typical_exit_ns",
        ),
    ];
    for (from, to, place) in cases {
        assert_eq!(key_path(&broken(from, to).place), place, "{from} -> {to}");
    }
    let no_cpus = "name = \"none\"\ncpus = []\nfreq_domains = []\n";
    assert_eq!(
        key_path(&parse_platform(no_cpus, "none.toml").unwrap_err().place),
        "cpus"
    );
}

#[test]
fn syntax_errors_give_line_and_column() {
    let err = broken("llc = 0\n", "llc = = 0\n");
    assert!(err.place.starts_with("line 8 column"), "{err}");
    let err = parse_platform("{\"name\": \"x\",, }", "bad.json").unwrap_err();
    assert_eq!(err.place, "line 1 column 14");
}

#[test]
fn json_errors_name_the_key_path() {
    let mut value = serde_json::to_value(juno()).unwrap();
    value["freq_domains"][1]["opps"][2]["freq_khz"] = serde_json::json!("fast");
    let err = parse_platform(&value.to_string(), "juno.json").unwrap_err();
    assert_eq!(key_path(&err.place), "freq_domains[1].opps[2].freq_khz");
    assert!(err.place.ends_with(" column 3433)"), "{err}");
    assert_eq!(
        err.to_string(),
        "juno.json: freq_domains[1].opps[2].freq_khz (line 1 column 3433): expected a frequency in kHz (a positive \
         integer), found the string \"fast\""
    );
}

#[test]
fn load_file_reads_toml_and_json_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let toml_path = dir.path().join("tiny.toml");
    std::fs::write(&toml_path, BASE).unwrap();
    assert_eq!(load_file(&toml_path).unwrap().name, "tiny");
    let json_path = dir.path().join("juno.json");
    std::fs::write(&json_path, serde_json::to_string(&juno()).unwrap()).unwrap();
    assert_eq!(load_file(&json_path).unwrap(), juno());
    let missing = dir.path().join("missing.toml");
    let err = load_file(&missing).unwrap_err();
    assert_eq!(err.file, missing.display().to_string());
    assert_eq!(err.place, "file");
}

#[test]
fn describe_shows_the_platform() {
    let text = juno().describe();
    for needle in [
        "juno-r0",
        "6 CPUs",
        "SD_ASYM_CPUCAPACITY",
        "CPUs 0,3-5",
        "850000",
        "616",
        "cluster-sleep-0",
        "CONFIG_HZ",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    assert!(preset("rk3399")
        .unwrap()
        .describe()
        .contains("CONFIG_HZ: 100"));
    let x86 = preset("x86-4c8t").unwrap().describe();
    assert!(x86.contains("Frequency invariance: no"));
    assert!(
        x86.contains("C6 25 mW exit 104 us (typical 72 us)"),
        "{x86}"
    );
}

#[test]
fn plat_info_describes_juno() {
    let yaml = plat_info_yaml(&juno());
    assert_eq!(yaml, plat_info_yaml(&juno()), "plat_info is deterministic");
    for needle in [
        "platform-info:",
        "cpus-count: 6",
        "- [0, 3, 4, 5]",
        "- [1, 2]",
        "0: 447",
        "1: 1024",
        "0: [450000, 575000, 700000, 775000, 850000]",
        "1: [450000, 625000, 800000, 950000, 1100000]",
        "nrg-model: !call:lisa.energy_model.EnergyModel",
    ] {
        assert!(yaml.contains(needle), "{needle:?} missing from:\n{yaml}");
    }
    // Without idle states LISA's energy model cannot work, so it is left out.
    let tiny = parse_platform(BASE, "base.toml").unwrap();
    assert!(!plat_info_yaml(&tiny).contains("nrg-model:"));
}

/// LISA itself reads each preset's plat_info.yml, when LISA 3.1 is installed in a virtualenv
/// at target/lisa-venv (`python3 -m venv target/lisa-venv && target/lisa-venv/bin/pip install
/// lisa-linux==3.1.0 "numpy<2" "pyarrow<16" "pandas<2.2" nest_asyncio`); otherwise the test
/// says so and passes.
#[test]
fn lisa_loads_plat_info() {
    let Some(python) = common::lisa_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut checks = Vec::new();
    let platforms = preset_names()
        .iter()
        .map(|&name| preset(name).unwrap())
        .chain([parse_platform(BASE, "base.toml").unwrap()]);
    for platform in platforms {
        let name = platform.name.as_str();
        let path = dir.path().join(format!("{name}.plat_info.yml"));
        std::fs::write(&path, plat_info_yaml(&platform)).unwrap();
        let capacities: Vec<u32> = platform.cpus.iter().map(|c| c.capacity_orig).collect();
        let domains: Vec<Vec<usize>> = platform
            .freq_domains
            .iter()
            .map(|d| {
                let mut cpus = d.cpus.clone();
                cpus.sort();
                cpus
            })
            .collect();
        // LISA ships its own energy model of the Juno r0, the source of this preset's
        // numbers: both must estimate the same energy.
        let reference = if name == "juno-r0" {
            "lisa.platforms.juno_r0"
        } else {
            ""
        };
        checks.push(serde_json::json!({
            "path": path,
            "name": name,
            "cpus": platform.nr_cpus(),
            "capacities": capacities,
            "domains": domains,
            "reference": reference,
            "energy_model": platform.cpus.iter().all(|c| !c.idle_states.is_empty()),
        }));
    }
    // One interpreter for all presets: importing LISA takes seconds.
    let output = Command::new(&python)
        .arg("-c")
        .arg(LISA_CHECK)
        .arg(serde_json::Value::Array(checks).to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "LISA rejected a plat_info.yml:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

const LISA_CHECK: &str = r#"
import importlib, json, sys
from lisa.platforms.platinfo import PlatformInfo

for expected in json.loads(sys.argv[1]):
    name, n = expected["name"], expected["cpus"]
    p = PlatformInfo.from_yaml_map(expected["path"])
    assert p["name"] == name, p["name"]
    assert p["cpus-count"] == n, name
    assert p["cpu-capacities"]["orig"] == dict(enumerate(expected["capacities"])), name
    assert sorted(p["freq-domains"]) == sorted(expected["domains"]), name
    assert sorted(p["freqs"]) == list(range(n)), name
    if not expected["energy_model"]:
        assert "nrg-model" not in p, name
        continue
    em = p["nrg-model"]
    assert em.cpus == tuple(range(n)), name
    assert em.capacity_scale == 1024, name
    assert sorted(sorted(d) for d in em.freq_domains) == sorted(expected["domains"]), name
    # The model answers LISA's own questions: idle states for all-idle and one-busy systems,
    # and an energy estimate.
    em.guess_idle_states([0] * n)
    em.guess_idle_states([1] + [0] * (n - 1))
    estimate = em.estimate_from_cpu_util([100] + [0] * (n - 1))
    assert sum(estimate.values()) > 0, (name, estimate)
    if expected["reference"]:
        reference = importlib.import_module(expected["reference"]).nrg_model
        for utils in ([0] * n, [100] + [0] * (n - 1), [300, 200, 0, 50, 0, 0], [400] * n):
            busy = [u > 0 for u in utils]
            ours = sum(em.estimate_from_cpu_util(utils).values())
            theirs = sum(reference.estimate_from_cpu_util(utils).values())
            # schedlab's capacities are linear in frequency, LISA's measured: within 1%.
            assert abs(ours - theirs) <= 0.01 * theirs, (name, utils, ours, theirs)
            assert em.guess_idle_states(busy) == reference.guess_idle_states(busy), name
"#;

/// `[kernel]`: switches as an experiment's `[set]` writes them become the platform's
/// defaults, under the experiment's and the command line's switches.
#[test]
fn a_kernel_table_sets_the_platforms_defaults() {
    let text = format!(
        "{}\n[kernel]\nvariant.fair = \"eevdf\"\nconfig.UCLAMP_TASK = false\ndebug.min_granularity_ns = 700000\n",
        BASE.trim_end()
    );
    let p = parse_platform(&text, "k.toml").unwrap();
    assert_eq!(p.kernel["variant.fair"], "eevdf");
    let v = schedlab::kernel::Variant::for_platform(&p);
    assert_eq!(v.fair.name(), "eevdf");
    assert!(!v.uclamp_task);
    assert_eq!(v.sched_min_granularity_ns, 700_000);
    // Written out and read again, by both readers.
    let toml_text = toml::to_string(&p).unwrap();
    assert!(
        toml_text.contains("\"variant.fair\" = \"eevdf\""),
        "{toml_text}"
    );
    assert_eq!(parse_platform(&toml_text, "again.toml").unwrap(), p);
    let json_text = serde_json::to_string(&p).unwrap();
    assert_eq!(parse_platform(&json_text, "again.json").unwrap(), p);
    // Shown by `schedlab platforms FILE`.
    assert!(p.describe().contains("Kernel defaults: config.UCLAMP_TASK=false debug.min_granularity_ns=700000 variant.fair=eevdf"), "{}", p.describe());
}

#[test]
fn a_bad_kernel_switch_is_named() {
    let with = |table: &str| {
        let text = format!("{}\n[kernel]\n{table}\n", BASE.trim_end());
        parse_platform(&text, "k.toml").unwrap_err()
    };
    let err = with("variant.fair = \"bfs\"");
    assert_eq!(key_path(&err.place), "kernel.variant.fair");
    assert!(err.expected.contains("eevdf"), "{err}");
    let err = with("no.such = 1");
    assert_eq!(key_path(&err.place), "kernel.no.such");
    for (table, owner) in [
        ("cost.irq_ns = 5", "[costs]"),
        ("memory.llc_kib = 5", "[memory]"),
        ("config.HZ = 100", "`hz`"),
        ("\"cgroup./a.cpu.weight\" = 5", "cgroup"),
    ] {
        let err = with(table);
        assert!(err.expected.contains(owner), "{table}: {err}");
    }
    let err = with("variant.fair = 1.5");
    assert!(err.expected.contains("switch's value"), "{err}");
}

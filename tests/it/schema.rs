//! Every JSON output validates against `schema/results.schema.json` and carries its
//! `schema_version`: a run of every generator's workload, a comparison and a sweep.

use crate::common;
use common::schedlab_cli;

fn schedlab(args: &[&str], stdin: Option<&str>) -> Vec<u8> {
    let out = schedlab_cli(args, stdin);
    assert!(
        out.status.success(),
        "schedlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/results.schema.json"
    ))
    .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

fn assert_valid(v: &jsonschema::Validator, what: &str, json: &serde_json::Value) {
    let errors: Vec<String> = v
        .iter_errors(json)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

#[test]
fn every_generators_results_validate() {
    let v = validator();
    let gens: &[&[&str]] = &[
        &["fio", "--runtime", "1"],
        &["forkloop"],
        &["pipe"],
        &["hackbench", "--groups", "1", "--loops", "5"],
        &["cyclictest", "--duration", "1"],
        &["schbench", "--runtime", "1"],
        &["netperf", "--duration", "1"],
        &["tbench", "--clients", "2", "--duration", "1"],
        &["frames", "--duration", "1"],
    ];
    for args in gens {
        let mut gen = vec!["gen"];
        gen.extend_from_slice(args);
        let workload = String::from_utf8(schedlab(&gen, None)).unwrap();
        let out = schedlab(
            &[
                "run",
                "-",
                "--duration",
                "200ms",
                "--reproducible",
                "--json",
                "-",
            ],
            Some(&workload),
        );
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(json["schema_version"], 1);
        assert!(
            json["workload"].is_object(),
            "{args:?}: the generator's metric"
        );
        assert_valid(&v, args[0], &json);
    }
    // And a plain rt-app workload, with a timed write's record.
    let out = schedlab(
        &[
            "run",
            "--duration",
            "200ms",
            "--json",
            "-",
            "--set-at",
            "100ms:kernel.sched_util_clamp_max=2000",
        ],
        None,
    );
    assert_valid(&v, "default", &serde_json::from_slice(&out).unwrap());
}

#[test]
fn comparison_and_sweep_json_validate() {
    let v = validator();
    let fio = String::from_utf8(schedlab(&["gen", "fio", "--runtime", "1"], None)).unwrap();
    let out = schedlab(
        &[
            "compare",
            "-",
            "--duration",
            "200ms",
            "--runs",
            "2",
            "--vs",
            "cpufreq.iowait_boost=false",
            "--json",
            "-",
        ],
        Some(&fio),
    );
    let cmp: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(cmp["schema_version"], 1);
    assert_valid(&v, "compare", &cmp);
    let dir = tempfile::tempdir().unwrap();
    schedlab(
        &[
            "sweep",
            "-",
            "--duration",
            "200ms",
            "--param",
            "cpufreq.rate_limit_us=200,2000",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        Some(&fio),
    );
    let points: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("points.json")).unwrap())
            .unwrap();
    assert_eq!(points[0]["schema_version"], 1);
    assert_valid(&v, "sweep", &points);
    // The schema does reject what is not a result.
    assert!(!v.is_valid(&serde_json::json!({"schema_version": 2, "tasks": []})));
}

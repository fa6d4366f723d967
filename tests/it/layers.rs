//! The workspace's layers (ARCHITECTURE.md, "The map"): each crate depends only on the crates
//! below it, so no module can import one above it; the model and what is below it parse no
//! command line.

use std::path::Path;

/// Bottom to top: each may depend on those before it.
const LAYERS: &[(&str, &str)] = &[
    ("schedlab-base", "crates/base"),
    ("schedlab-model", "crates/model"),
    ("schedlab-trace", "crates/trace"),
    ("schedlab", "crates/schedlab"),
    ("schedlab-host", "crates/host"),
    ("schedlab-cli", "."),
    ("schedlab-python", "python"),
];

/// The names of a manifest's dependencies of every kind.
fn dependencies(dir: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(dir)
        .join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .filter_map(|k| manifest.get(*k).and_then(|d| d.as_table()))
        .flat_map(|t| t.keys().cloned())
        .collect()
}

#[test]
fn no_crate_depends_on_one_above_it() {
    for (i, (name, dir)) in LAYERS.iter().enumerate() {
        for dep in dependencies(dir) {
            if let Some(j) = LAYERS.iter().position(|(n, _)| *n == dep) {
                assert!(j < i, "{name} depends on {dep}, which is not below it");
            }
        }
    }
}

#[test]
fn the_model_and_below_parse_no_command_line() {
    for (name, dir) in &LAYERS[..3] {
        let deps = dependencies(dir);
        assert!(!deps.iter().any(|d| d == "clap"), "{name} depends on clap");
    }
}

/// Every workspace member is in a layer.
#[test]
fn every_member_is_placed() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let root: toml::Table = text.parse().unwrap();
    let members = root["workspace"]["members"].as_array().unwrap();
    for m in members {
        let m = m.as_str().unwrap();
        assert!(LAYERS.iter().any(|(_, d)| *d == m), "{m} is in no layer");
    }
}

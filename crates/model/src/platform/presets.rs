//! Built-in platforms. Each preset is an ordinary platform file from `platforms/`
//! at the repository root, compiled into the binary, so a user can copy one, edit it and pass
//! it to `--platform` without learning a second format.

use super::{parse_platform, Platform};

/// Name and TOML text of every preset, in the order `schedlab platforms` lists them; the
/// first is the default platform.
const PRESETS: &[(&str, &str)] = &[
    (
        "juno-r0",
        include_str!("../../../../platforms/juno-r0.toml"),
    ),
    ("sdm845", include_str!("../../../../platforms/sdm845.toml")),
    ("rk3399", include_str!("../../../../platforms/rk3399.toml")),
    (
        "x86-4c8t",
        include_str!("../../../../platforms/x86-4c8t.toml"),
    ),
    ("smp8", include_str!("../../../../platforms/smp8.toml")),
    (
        "xeon-2s",
        include_str!("../../../../platforms/xeon-2s.toml"),
    ),
    (
        "zen3-2s",
        include_str!("../../../../platforms/zen3-2s.toml"),
    ),
    (
        "zen3-2s-nps2",
        include_str!("../../../../platforms/zen3-2s-nps2.toml"),
    ),
    (
        "zen3-2s-nps4",
        include_str!("../../../../platforms/zen3-2s-nps4.toml"),
    ),
];

/// The preset called `name`, if there is one.
pub fn preset(name: &str) -> Option<Platform> {
    let (name, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
    // The preset files are part of the source tree and tests/it/platform.rs parses every one,
    // so a failure here is a bug in schedlab, not bad user input.
    let platform = parse_platform(text, &format!("<preset {name}>"))
        .unwrap_or_else(|e| panic!("built-in platform preset is invalid: {e}"));
    Some(platform)
}

/// Names of all presets, the default (`juno-r0`) first.
pub fn preset_names() -> &'static [&'static str] {
    const NAMES: [&str; PRESETS.len()] = {
        let mut names = [""; PRESETS.len()];
        let mut i = 0;
        while i < PRESETS.len() {
            names[i] = PRESETS[i].0;
            i += 1;
        }
        names
    };
    &NAMES
}

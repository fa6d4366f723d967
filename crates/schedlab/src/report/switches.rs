//! The switch table of `docs/switches.md`, written from the registry
//! (`schedlab switches --markdown`): one row per key with its default, type and values, and
//! meaning. A test keeps the document's table equal to it.

use crate::kernel::variant::SwitchInfo;
use std::fmt::Write;

/// A Markdown table of `switches`.
pub fn switch_table(switches: &[SwitchInfo]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("| key | default | type: values | meaning |\n|---|---|---|---|\n");
    for s in switches {
        let _ = writeln!(
            out,
            "| `{}` | {} | {}: {} | {} |",
            cell(&s.key),
            cell(&s.default),
            s.kind,
            cell(&s.range),
            cell(&s.meaning)
        );
    }
    out
}

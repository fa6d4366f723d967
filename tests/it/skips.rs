//! A test that cannot check (LISA or `../shared` missing) must not pass silently under
//! `CI=true`, and says so otherwise in a line `scripts/test` counts.

use crate::common;

#[test]
fn a_skip_fails_under_ci_and_is_visible_otherwise() {
    let under_ci = std::panic::catch_unwind(|| common::skip_under(true, "a fixture is missing"));
    assert!(under_ci.is_err(), "a skip under CI=true must fail the test");
    let line = common::skip_line("nothing to check");
    assert!(
        line.starts_with("SKIPPED skips::a_skip_fails_under_ci"),
        "{line}"
    );
}

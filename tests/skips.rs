//! A test that cannot check (LISA or `../shared` missing) must not pass silently under
//! `CI=true`. One test in this binary, so setting the environment races with nothing.

mod common;

#[test]
fn a_skip_fails_under_ci_and_is_visible_otherwise() {
    std::env::set_var("CI", "true");
    let under_ci = std::panic::catch_unwind(|| common::skip("a test fixture is missing"));
    std::env::remove_var("CI");
    assert!(under_ci.is_err(), "a skip under CI=true must fail the test");
    assert!(std::panic::catch_unwind(|| common::skip("nothing to check here")).is_ok());
    assert!(common::shared_dir("no-such-directory-for-schedlab").is_none());
}

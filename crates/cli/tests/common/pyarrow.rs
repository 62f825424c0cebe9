//! pyarrow, the reference Parquet reader the tests read our files with (scripts/setup.sh
//! installs it): whether a test may use it, failing under CI where it is missing.

/// Whether python3 can import pyarrow; under CI its absence fails `test` (it is skipped, and
/// says so, elsewhere).
pub fn require(test: &str) -> bool {
    let has = std::process::Command::new("python3").args(["-c", "import pyarrow"]).status().is_ok_and(|s| s.success());
    schedlab_os::test_gate::require(test, has, "python3 cannot import pyarrow (scripts/setup.sh installs it)")
}

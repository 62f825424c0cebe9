//! The one gate for tests that need something a machine may lack: root, tracefs, a CPU cgroup
//! controller, Chromium, SimPy, a worker CPU. On CI the test fails without it, so a green CI
//! means the test ran; elsewhere it says on stderr what it skipped and why, and appends the
//! skip to the file `SCHEDLAB_SKIP_LOG` names, so a test run can count its skips by name.

use std::fmt::Display;
use std::io::Write;

/// Whether this is a CI run: `CI` set to anything but empty, `0` or `false` (any case).
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| is_ci_value(&v))
}

fn is_ci_value(v: &str) -> bool {
    let v = v.trim();
    !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
}

/// True when `have`. Otherwise the test `test` cannot run here: on CI that is a failure (a
/// panic naming `why`); elsewhere it is a skip, said on stderr and logged, and this is false.
pub fn require(test: &str, have: bool, why: impl Display) -> bool {
    gate(test, have, &why.to_string(), on_ci(), std::env::var_os("SCHEDLAB_SKIP_LOG").as_deref())
}

fn gate(test: &str, have: bool, why: &str, ci: bool, log: Option<&std::ffi::OsStr>) -> bool {
    if have {
        return true;
    }
    assert!(!ci, "{test} cannot run on this CI machine: {why}");
    eprintln!("skipping {test}: {why}");
    if let Some(path) = log {
        // Best effort: a log that cannot be written must not turn a skip into a failure.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{test}: {why}");
        }
    }
    false
}

/// The value of `r` when it is `Ok`; otherwise as [`require`] with the error as the reason.
pub fn available<T, E: Display>(test: &str, r: Result<T, E>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            require(test, false, e);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_values() {
        for v in ["true", "1", "yes", "TRUE", "github"] {
            assert!(is_ci_value(v), "{v}");
        }
        for v in ["", " ", "0", "false", "False"] {
            assert!(!is_ci_value(v), "{v:?}");
        }
    }

    #[test]
    fn what_is_there_passes_the_gate() {
        assert!(require("a test", true, "never said"));
        assert_eq!(available::<_, String>("a test", Ok(3)), Some(3));
    }

    #[test]
    fn what_is_missing_fails_on_ci() {
        let e = std::panic::catch_unwind(|| gate("a test", false, "nothing is missing", true, None))
            .expect_err("a missing requirement must fail on CI");
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("a test") && msg.contains("nothing is missing"), "{msg}");
    }

    #[test]
    fn what_is_missing_elsewhere_is_skipped_and_logged_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        assert!(!gate("test one", false, "no root", false, Some(log.as_os_str())));
        assert!(!gate("test two", false, "no tracefs", false, Some(log.as_os_str())));
        assert!(gate("test three", true, "unused", false, Some(log.as_os_str())));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "test one: no root\ntest two: no tracefs\n");
    }
}

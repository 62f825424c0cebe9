//! Telling a bad command line from a failed run. A value the user gave that cannot work (a
//! priority out of range, a file that cannot be read, options that contradict each other) is a
//! [`UsageError`]: the binary exits 2 for it, as for the options clap itself rejects, and
//! nothing has been started. Every other error is a run that failed — the machine refused it
//! (no root, a CPU another run holds) or something broke while it ran — and exits 1. Scripts
//! that wrap schedlab can then retry a failed run without retrying a wrong command line.

use crate::error::OsError;
use std::fmt;

/// An error in what the user asked for, found before anything ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Marks the error of a validation step as a usage error, keeping its message.
pub trait OrUsage<T> {
    fn or_usage(self) -> Result<T, UsageError>;
}

impl<T, E: fmt::Display> OrUsage<T> for Result<T, E> {
    fn or_usage(self) -> Result<T, UsageError> {
        // `{:#}` keeps an anyhow error's whole chain of context in the one line.
        self.map_err(|e| UsageError(format!("{e:#}")))
    }
}

/// Whether any error in a chain of sources is a [`UsageError`] or a value the OS layer
/// rejected ([`OsError::Invalid`]).
pub fn is_usage(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if c.is::<UsageError>() || matches!(c.downcast_ref::<OsError>(), Some(OsError::Invalid { .. })) {
            return true;
        }
        cur = c.source();
    }
    false
}

/// `return Err(UsageError(format!(...)).into())`: refuse the command line, naming the value.
#[macro_export]
macro_rules! bail_usage {
    ($($arg:tt)*) => {
        return Err($crate::usage::UsageError(format!($($arg)*)).into())
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_error_is_found_and_keeps_its_words() {
        let r: Result<(), String> = Err("--procs value 0".into());
        let e = r.or_usage().unwrap_err();
        assert_eq!(e.to_string(), "--procs value 0");
        assert!(is_usage(&e));
        let io = std::io::Error::other("disk full");
        assert!(!is_usage(&io));
        assert!(is_usage(&OsError::invalid("command", "/nonexistent/cmd", "no such executable file")));
        assert!(!is_usage(&OsError::unsupported("tracefs", "not mounted")));
    }

    #[test]
    fn the_macro_returns_a_usage_error() {
        fn refuse(n: u32) -> Result<(), Box<dyn std::error::Error>> {
            if n == 0 {
                bail_usage!("--tasks {n}: must be ≥ 1");
            }
            Ok(())
        }
        let e = refuse(0).unwrap_err();
        assert!(is_usage(e.as_ref()));
        assert_eq!(e.to_string(), "--tasks 0: must be ≥ 1");
        assert!(refuse(1).is_ok());
    }
}

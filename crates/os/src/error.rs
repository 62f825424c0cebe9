//! The error type of the OS layer: what failed, on what, and what the user can do about it.

use std::io;

/// An OS-layer failure. The `Display` text is one sentence meant for the user.
#[derive(Debug, thiserror::Error)]
pub enum OsError {
    /// The call needs privileges the process does not have.
    #[error("{what} needs root or CAP_SYS_NICE/CAP_SYS_ADMIN: run with sudo ({source})")]
    Permission { what: String, source: io::Error },
    /// A kernel facility is missing on this machine (no tracefs, no cgroup controller, ...).
    #[error("{what} is not available on this machine: {why}")]
    Unsupported { what: String, why: String },
    /// Something another run holds (a CPU, the IRQ steering) was refused before anything changed.
    #[error("{what} is in use: {why}")]
    Busy { what: String, why: String },
    /// A value the user gave was rejected before anything was changed: a usage error (the
    /// binary exits 2 for it, see [`crate::usage`]).
    #[error("invalid {what}: {value} ({why})")]
    Invalid { what: String, value: String, why: String },
    /// Any other syscall or file failure.
    #[error("{what} failed: {source}")]
    Io { what: String, source: io::Error },
}

/// Result alias for this crate.
pub type OsResult<T> = Result<T, OsError>;

impl OsError {
    /// Classify an `io::Error` from `what`: EPERM/EACCES become [`OsError::Permission`].
    pub fn from_io(what: impl Into<String>, source: io::Error) -> Self {
        let what = what.into();
        match source.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => OsError::Permission { what, source },
            _ => OsError::Io { what, source },
        }
    }

    /// The error of the last failed libc call, classified as in [`OsError::from_io`].
    pub fn last(what: impl Into<String>) -> Self {
        Self::from_io(what, io::Error::last_os_error())
    }

    /// A rejected input value.
    pub fn invalid(what: impl Into<String>, value: impl ToString, why: impl Into<String>) -> Self {
        OsError::Invalid { what: what.into(), value: value.to_string(), why: why.into() }
    }

    /// A kernel file that should hold an integer holds something else.
    pub fn not_an_integer(path: impl Into<String>, text: &str) -> Self {
        let source = io::Error::new(io::ErrorKind::InvalidData, format!("{text:?} is not an integer"));
        OsError::Io { what: format!("reading {}", path.into()), source }
    }

    /// A missing facility.
    pub fn unsupported(what: impl Into<String>, why: impl Into<String>) -> Self {
        OsError::Unsupported { what: what.into(), why: why.into() }
    }
}

impl From<nix::Error> for OsError {
    fn from(e: nix::Error) -> Self {
        OsError::from_io("system call", io::Error::from(e))
    }
}

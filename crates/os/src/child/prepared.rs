//! Everything a forked child touches, built before the fork: after fork(2) in a multi-threaded
//! parent the child may only make async-signal-safe calls on memory prepared in advance (no
//! allocation), as POSIX requires. Also the pipes and the small message a child sends its
//! parent on the report pipe.

use super::spec::{resolve_program, ChildSpec, Input, Output};
use crate::sched::SchedAttr;
use crate::{OsError, OsResult};
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The step at which a child failed before its program started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Setup,
    Affinity,
    Sched,
    Gate,
    Exec,
}

impl Step {
    pub(super) fn code(self) -> i32 {
        match self {
            Step::Setup => 5,
            Step::Affinity => 1,
            Step::Sched => 2,
            Step::Gate => 3,
            Step::Exec => 4,
        }
    }

    pub(super) fn from_code(c: i32) -> Option<Self> {
        [Step::Affinity, Step::Sched, Step::Gate, Step::Exec, Step::Setup].into_iter().find(|s| s.code() == c)
    }
}

/// A child that failed before its program started (it exits with status 127).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildFailure {
    pub pid: i32,
    pub step: Step,
    pub errno: i32,
}

impl ChildFailure {
    /// The failure as an [`OsError`] a user can act on.
    pub fn to_error(&self, spec: &ChildSpec) -> OsError {
        let err = std::io::Error::from_raw_os_error(self.errno);
        let what = match self.step {
            Step::Setup => format!("setting up child {} (stdio, process group, parent death signal)", self.pid),
            Step::Affinity => format!("pinning child {} to CPUs {:?}", self.pid, spec.cpus.as_deref().unwrap_or(&[])),
            Step::Sched => match &spec.sched {
                Some(p) => {
                    format!("setting {} (priority {}) on child {}", p.policy.kernel_name(), p.priority, self.pid)
                }
                None => format!("setting the policy of child {}", self.pid),
            },
            Step::Gate => format!("child {} waiting at the start gate", self.pid),
            Step::Exec => format!("executing {} in child {}", spec.program.display(), self.pid),
        };
        if self.step == Step::Sched && self.errno == libc::EBUSY {
            return OsError::unsupported(what, "SCHED_DEADLINE admission control refused the bandwidth (EBUSY)");
        }
        OsError::from_io(what, err)
    }
}

/// Bytes of one message on the report pipe: pid, step code (0 = ready), errno.
pub(super) const MSG: usize = 12;

pub(super) fn encode(pid: i32, code: i32, errno: i32) -> [u8; MSG] {
    let mut m = [0u8; MSG];
    m[..4].copy_from_slice(&pid.to_ne_bytes());
    m[4..8].copy_from_slice(&code.to_ne_bytes());
    m[8..].copy_from_slice(&errno.to_ne_bytes());
    m
}

pub(super) fn decode(m: &[u8]) -> (i32, i32, i32) {
    let word = |i: usize| i32::from_ne_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
    (word(0), word(4), word(8))
}

/// A close-on-exec pipe (read end, write end).
pub(super) fn pipe_cloexec(what: &str) -> OsResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-int out-array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(OsError::last(format!("creating the {what} pipe")));
    }
    // SAFETY: pipe2 just returned these two fresh descriptors; we own them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Make a descriptor non-blocking (the parent's end of the report pipe).
pub(super) fn set_nonblocking(fd: &impl AsRawFd) {
    // SAFETY: fcntl on a descriptor the caller owns.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

fn cstring(what: &str, s: &OsStr) -> OsResult<CString> {
    CString::new(s.as_bytes()).map_err(|_| OsError::invalid(what, s.to_string_lossy(), "contains a NUL byte"))
}

/// The spec turned into what the child side of fork uses.
pub(super) struct Prepared {
    pub spec: ChildSpec,
    pub path: CString,
    _argv: Vec<CString>,
    pub argv_ptrs: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    pub envp_ptrs: Vec<*const libc::c_char>,
    pub cpuset: Option<libc::cpu_set_t>,
    pub attr: Option<SchedAttr>,
    /// `/dev/null`, opened when some stream goes there.
    pub devnull: Option<OwnedFd>,
}

// SAFETY: the raw pointers point into the CStrings owned by the same struct, which are never
// mutated or moved out while it lives; the struct is only read after construction.
unsafe impl Send for Prepared {}

impl Prepared {
    /// Check the spec (program found and executable, priority valid, CPUs in range) and build
    /// argv, envp, the CPU set and the sched_attr.
    pub fn new(spec: &ChildSpec) -> OsResult<Self> {
        // Each fork copies the parent's page tables, and the child tears them down at exec in
        // its own CPU time: hand freed heap back first (once per child spec or batch).
        crate::rusage::return_free_heap();
        let program: PathBuf = resolve_program(&spec.program)?;
        if let Some(p) = &spec.sched {
            p.policy.check_priority(p.priority)?;
        }
        if spec.stderr == Output::Stderr {
            return Err(OsError::invalid("stderr", "Stderr", "only stdout can be sent to stderr"));
        }
        let path = cstring("program", program.as_os_str())?;
        let mut argv = vec![cstring("program", spec.program.as_os_str())?];
        for a in &spec.args {
            argv.push(cstring("argument", OsStr::new(a))?);
        }
        let mut argv_ptrs: Vec<_> = argv.iter().map(|c| c.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let envp: Vec<CString> = std::env::vars_os()
            .filter_map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                CString::new(kv).ok()
            })
            .collect();
        let mut envp_ptrs: Vec<_> = envp.iter().map(|c| c.as_ptr()).collect();
        envp_ptrs.push(std::ptr::null());
        let cpuset = match &spec.cpus {
            None => None,
            Some(cpus) if cpus.is_empty() => {
                return Err(OsError::invalid("CPU list", "(empty)", "name at least one CPU"))
            }
            Some(cpus) => {
                // SAFETY: an all-zero cpu_set_t is the empty set.
                let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                for &c in cpus {
                    if c >= libc::CPU_SETSIZE as usize {
                        return Err(OsError::invalid("CPU", c, "beyond the kernel's CPU set size"));
                    }
                    // SAFETY: c is below CPU_SETSIZE (checked above).
                    unsafe { libc::CPU_SET(c, &mut set) };
                }
                Some(set)
            }
        };
        let needs_null = spec.stdin == Input::Null || spec.stdout == Output::Null || spec.stderr == Output::Null;
        let devnull = if needs_null {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")
                .map_err(|e| OsError::from_io("opening /dev/null", e))?;
            Some(OwnedFd::from(f))
        } else {
            None
        };
        Ok(Prepared {
            spec: spec.clone(),
            path,
            _argv: argv,
            argv_ptrs,
            _envp: envp,
            envp_ptrs,
            cpuset,
            attr: spec.sched.as_ref().map(SchedAttr::from_params),
            devnull,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        assert_eq!(decode(&encode(1234, 2, 13)), (1234, 2, 13));
        for s in [Step::Setup, Step::Affinity, Step::Sched, Step::Gate, Step::Exec] {
            assert_eq!(Step::from_code(s.code()), Some(s));
        }
        assert_eq!(Step::from_code(0), None, "0 means ready");
    }

    #[test]
    fn bad_specs_are_refused_before_any_fork() {
        assert!(Prepared::new(&ChildSpec::new("no-such-program-xyz")).is_err());
        assert!(Prepared::new(&ChildSpec::new("sh").cpus(&[])).is_err());
        assert!(Prepared::new(&ChildSpec::new("sh").stderr(Output::Stderr)).is_err());
        let p = Prepared::new(&ChildSpec::new("sh").args(["-c", "true"])).unwrap();
        assert_eq!(p.argv_ptrs.len(), 4, "argv[0], two arguments and the terminating null");
    }
}

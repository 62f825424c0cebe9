//! What a child is: the program, its arguments, how it is scheduled and pinned, where its
//! standard streams go and where it waits before its program starts. A [`ChildSpec`] is plain
//! data, checked and turned into what the forked child needs by [`super::prepared`].

use crate::sched::SchedParams;
use crate::{OsError, OsResult};
use std::path::{Path, PathBuf};

/// Where a child's standard input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Input {
    /// `/dev/null`: a child never reads the harness's terminal.
    #[default]
    Null,
    /// The parent's standard input.
    Inherit,
    /// A pipe the parent writes ([`super::Child::take_stdin`]): a child that takes requests.
    Pipe,
}

/// Where a child's standard output or error goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    /// The parent's own stream.
    #[default]
    Inherit,
    /// `/dev/null`.
    Null,
    /// A pipe the parent reads ([`super::Child::take_stdout`] / `take_stderr`).
    Pipe,
    /// The parent's standard error (keeps a `--json` standard output clean). Stdout only.
    Stderr,
}

/// Where a child waits after it is set up and before its program starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Barrier {
    /// No wait: the program starts as soon as the child is set up.
    #[default]
    None,
    /// A start gate: the child blocks reading a pipe until the parent releases it (one byte per
    /// child; a batch shares one gate). A child that reads end-of-file instead (the parent died
    /// or dropped the gate) exits without starting its program.
    Gate,
    /// The child stops itself (SIGSTOP) just before exec; SIGCONT releases it.
    Stop,
}

/// Everything about one child. Build it with [`ChildSpec::new`] and the setters.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// The program: a path, or a name looked up on PATH (as execvp would) when prepared.
    pub program: PathBuf,
    /// Arguments after argv[0].
    pub args: Vec<String>,
    /// Scheduling set in the child before its program starts; `None` keeps the parent's.
    pub sched: Option<SchedParams>,
    /// CPUs the child is pinned to before its program starts; `None` keeps the parent's.
    pub cpus: Option<Vec<usize>>,
    pub stdin: Input,
    pub stdout: Output,
    pub stderr: Output,
    pub barrier: Barrier,
    /// Ask the kernel to SIGKILL the child when the thread that forked it exits
    /// (`PR_SET_PDEATHSIG`). On by default: no child outlives a harness killed with SIGKILL.
    pub die_with_parent: bool,
}

impl ChildSpec {
    /// A child running `program` with no arguments, stdin from /dev/null, stdout and stderr
    /// inherited, no barrier, dying with its parent.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        ChildSpec {
            program: program.into(),
            args: Vec::new(),
            sched: None,
            cpus: None,
            stdin: Input::Null,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            barrier: Barrier::None,
            die_with_parent: true,
        }
    }

    /// A child running `argv[0]` with the rest as arguments; an empty argv is refused.
    pub fn from_argv(argv: &[String]) -> OsResult<Self> {
        let (first, rest) =
            argv.split_first().ok_or_else(|| OsError::invalid("command", "(empty)", "name a program to run"))?;
        Ok(ChildSpec::new(first).args(rest.iter().cloned()))
    }

    /// `/bin/sh -c LINE`.
    pub fn shell(line: &str) -> Self {
        ChildSpec::new("/bin/sh").args(["-c".to_string(), line.to_string()])
    }

    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<S: Into<String>>(mut self, a: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }

    pub fn sched(mut self, p: SchedParams) -> Self {
        self.sched = Some(p);
        self
    }

    pub fn cpus(mut self, cpus: &[usize]) -> Self {
        self.cpus = Some(cpus.to_vec());
        self
    }

    pub fn stdin(mut self, i: Input) -> Self {
        self.stdin = i;
        self
    }

    pub fn stdout(mut self, o: Output) -> Self {
        self.stdout = o;
        self
    }

    pub fn stderr(mut self, o: Output) -> Self {
        self.stderr = o;
        self
    }

    pub fn barrier(mut self, b: Barrier) -> Self {
        self.barrier = b;
        self
    }

    pub fn die_with_parent(mut self, on: bool) -> Self {
        self.die_with_parent = on;
        self
    }

    /// The command line as one string, for messages.
    pub fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Find `program` the way execvp would (a name with a `/` is taken as a path) and check that it
/// is an executable file; the error names the program.
pub fn resolve_program(program: &Path) -> OsResult<PathBuf> {
    let executable = |p: &Path| -> bool {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    let text = program.to_string_lossy();
    if text.is_empty() {
        return Err(OsError::invalid("command", "(empty)", "name a program to run"));
    }
    if text.contains('/') {
        return if executable(program) {
            Ok(program.to_path_buf())
        } else {
            Err(OsError::invalid("command", text, "no such executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| OsError::invalid("command", text, "not found in PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_programs_and_names_missing_ones() {
        assert!(resolve_program(Path::new("sh")).unwrap().is_absolute());
        let err = resolve_program(Path::new("no-such-program-schedlab")).unwrap_err().to_string();
        assert!(err.contains("no-such-program-schedlab"), "{err}");
        assert!(resolve_program(Path::new("/etc/passwd")).is_err());
        assert!(ChildSpec::from_argv(&[]).is_err());
        assert_eq!(ChildSpec::shell("echo hi").display(), "/bin/sh -c echo hi");
    }
}

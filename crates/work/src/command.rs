//! `schedlab-work cpu|io|mixed|empty [--flag value]...`: the command line of the tiny workload
//! binary, parsed by hand. Sizes and counts are plain integers (bytes, samples); `empty`
//! execs and exits, so its rusage is the cost of exec and start-up alone.

use crate::{cpu, io, mixed};
use std::ffi::OsString;
use std::path::PathBuf;

/// One workload run, as parsed from the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// calc_pi.c: `iterations` Monte Carlo samples.
    Cpu { iterations: u64 },
    /// rw.c: copy `bytes` from `input` to `output` in `block`-byte reads and writes.
    Io { block: u64, bytes: u64, input: PathBuf, output: PathBuf },
    /// rwpi.c: the π loop with `bytes` written to `output` in `block`-byte writes between samples.
    Mixed { iterations: u64, block: u64, bytes: u64, output: PathBuf },
    /// Nothing: exec, start up, exit.
    Empty,
}

/// The seed's 1,000,000 samples per cpu/mixed process.
pub const DEFAULT_ITERATIONS: u64 = 1_000_000;

pub const USAGE: &str = "usage: schedlab-work cpu [--iterations N]\n\
    \x20      schedlab-work io [--block BYTES] [--bytes BYTES] [--input PATH] [--output PATH]\n\
    \x20      schedlab-work mixed [--iterations N] [--block BYTES] [--bytes BYTES] [--output PATH]\n\
    \x20      schedlab-work empty";

fn positive(flag: &str, v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(0) | Err(_) => Err(format!("{flag} needs a positive integer, not '{v}'")),
        Ok(n) => Ok(n),
    }
}

impl Job {
    /// Parse the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Job, String> {
        let args: Vec<String> = args
            .into_iter()
            .map(|a| a.into_string().map_err(|a| format!("argument {a:?} is not UTF-8")))
            .collect::<Result<_, _>>()?;
        let (kind, rest) = args.split_first().ok_or("name a workload: cpu, io, mixed or empty")?;
        let mut job = match kind.as_str() {
            "cpu" => Job::Cpu { iterations: DEFAULT_ITERATIONS },
            "io" => Job::Io {
                block: io::DEFAULT_BLOCK as u64,
                bytes: io::DEFAULT_TOTAL,
                input: "/dev/urandom".into(),
                output: "/dev/null".into(),
            },
            "mixed" => Job::Mixed {
                iterations: DEFAULT_ITERATIONS,
                block: io::DEFAULT_BLOCK as u64,
                bytes: io::DEFAULT_TOTAL,
                output: "/dev/null".into(),
            },
            "empty" => Job::Empty,
            other => return Err(format!("unknown workload '{other}' (expected cpu, io, mixed or empty)")),
        };
        let mut it = rest.iter();
        while let Some(flag) = it.next() {
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let ok = match (&mut job, flag.as_str()) {
                (Job::Cpu { iterations } | Job::Mixed { iterations, .. }, "--iterations") => {
                    *iterations = positive(flag, value)?;
                    true
                }
                (Job::Io { block, .. } | Job::Mixed { block, .. }, "--block") => {
                    *block = positive(flag, value)?;
                    true
                }
                (Job::Io { bytes, .. } | Job::Mixed { bytes, .. }, "--bytes") => {
                    *bytes = positive(flag, value)?;
                    true
                }
                (Job::Io { input, .. }, "--input") => {
                    *input = value.into();
                    true
                }
                (Job::Io { output, .. } | Job::Mixed { output, .. }, "--output") => {
                    *output = value.into();
                    true
                }
                _ => false,
            };
            if !ok {
                return Err(format!("'{kind}' takes no {flag}"));
            }
        }
        Ok(job)
    }

    /// Do the work; the line to print (π or bytes copied; empty for `empty`).
    pub fn run(&self) -> Result<String, String> {
        match self {
            Job::Cpu { iterations } => Ok(format!("{:.6}", cpu::monte_carlo_pi(*iterations, 1))),
            Job::Io { block, bytes, input, output } => io::read_write(input, output, *block as usize, *bytes)
                .map(|n| n.to_string())
                .map_err(|e| format!("copying {} to {}: {e}", input.display(), output.display())),
            Job::Mixed { iterations, block, bytes, output } => {
                mixed::pi_and_write(*iterations, output, *block as usize, *bytes)
                    .map(|pi| format!("{pi:.6}"))
                    .map_err(|e| format!("writing {}: {e}", output.display()))
            }
            Job::Empty => Ok(String::new()),
        }
    }
}

/// The whole program: parse, run, print; the exit status (0, 1 on a failed run, 2 on bad usage).
pub fn main_with(args: impl IntoIterator<Item = OsString>) -> i32 {
    use std::io::Write;
    let job = match Job::parse(args) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("schedlab-work: {e}\n{USAGE}");
            return 2;
        }
    };
    match job.run() {
        Ok(line) if line.is_empty() => 0,
        // Output to a closed pipe is not the workload's failure: the work is done.
        Ok(line) => {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
            0
        }
        Err(e) => {
            eprintln!("schedlab-work: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Job, String> {
        Job::parse(s.split_whitespace().map(OsString::from))
    }

    #[test]
    fn defaults_are_the_seeds_and_the_calibrated_io_size() {
        assert_eq!(parse("cpu").unwrap(), Job::Cpu { iterations: 1_000_000 });
        assert_eq!(parse("empty").unwrap(), Job::Empty);
        match parse("io").unwrap() {
            Job::Io { block, bytes, input, output } => {
                assert_eq!((block, bytes), (1024, io::DEFAULT_TOTAL));
                assert_eq!((input, output), (PathBuf::from("/dev/urandom"), PathBuf::from("/dev/null")));
            }
            j => panic!("{j:?}"),
        }
    }

    #[test]
    fn flags_set_their_fields() {
        assert_eq!(
            parse("mixed --iterations 10 --block 512 --bytes 4096 --output /tmp/x").unwrap(),
            Job::Mixed { iterations: 10, block: 512, bytes: 4096, output: "/tmp/x".into() }
        );
        assert_eq!(
            parse("io --bytes 7 --input /dev/zero").unwrap(),
            Job::Io { block: 1024, bytes: 7, input: "/dev/zero".into(), output: "/dev/null".into() }
        );
    }

    #[test]
    fn bad_command_lines_name_what_is_wrong() {
        for (line, named) in [
            ("", "name a workload"),
            ("gpu", "'gpu'"),
            ("cpu --bytes 5", "--bytes"),
            ("empty --iterations 5", "--iterations"),
            ("cpu --iterations", "needs a value"),
            ("cpu --iterations 0", "'0'"),
            ("io --block x", "'x'"),
        ] {
            let e = parse(line).unwrap_err();
            assert!(e.contains(named), "{line:?}: {e}");
        }
    }

    #[test]
    fn jobs_do_their_work() {
        let pi: f64 = parse("cpu --iterations 100000").unwrap().run().unwrap().parse().unwrap();
        assert!((pi - std::f64::consts::PI).abs() < 0.05, "{pi}");
        assert_eq!(parse("io --bytes 3000 --block 1000").unwrap().run().unwrap(), "3000");
        assert_eq!(parse("empty").unwrap().run().unwrap(), "");
        let e = parse("io --input /nonexistent/x").unwrap().run().unwrap_err();
        assert!(e.contains("/nonexistent/x"), "{e}");
    }
}

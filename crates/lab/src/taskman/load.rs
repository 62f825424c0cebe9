//! Background loads of seed 003's Table 2: "load 1" (one arithmetic process per CPU with a tiny
//! amount of memory, 0.1% of RAM) and "load 2" (one per CPU working through about 19% of RAM).
//!
//! Each load is a child process running `schedlab taskman load` (the same binary), so it is a
//! separate process as in the seed and is scheduled by the OS like any other. A [`LoadSet`] kills
//! and reaps its children when dropped (normal end, error, unwinding panic, the SIGINT/SIGTERM
//! path); the kernel SIGKILLs each when its parent dies (`PR_SET_PDEATHSIG`, set by
//! [`schedlab_os::child`]) and each stops by itself after `--max-seconds`, so none can outlive
//! a run.

use anyhow::{bail, Context, Result};
use schedlab_os::child::{Child, ChildSpec, Output};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// How long a load process may take to touch its memory and say ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The three load conditions of Table 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    None,
    Load1,
    Load2,
}

impl Load {
    pub const ALL: [Load; 3] = [Load::None, Load::Load1, Load::Load2];

    /// Bytes each load process works through: 0.1% of RAM (≤ 2 MiB) for load 1; 19% of RAM,
    /// capped at `cap` so a big machine is not pushed into reclaim, for load 2.
    pub fn bytes_per_process(self, mem_total: u64, cap: u64) -> u64 {
        match self {
            Load::None => 0,
            Load::Load1 => (mem_total / 1000).clamp(64 * 1024, 2 << 20),
            Load::Load2 => (mem_total * 19 / 100).min(cap),
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Load::None => "none",
            Load::Load1 => "load1",
            Load::Load2 => "load2",
        })
    }
}

impl FromStr for Load {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Load::ALL
            .into_iter()
            .find(|l| l.to_string() == s)
            .ok_or_else(|| format!("unknown load '{s}' (none, load1, load2)"))
    }
}

/// The body of one load process: touch `bytes` once, say `ready`, then keep doing arithmetic
/// while writing through the buffer one cache line at a time, until `max_s` seconds pass.
pub fn load_body(bytes: usize, max_s: f64, ready: impl FnOnce()) -> u64 {
    let mut buf = vec![0u8; bytes.max(4096)];
    for i in (0..buf.len()).step_by(4096) {
        buf[i] = 1;
    }
    ready();
    let start = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut passes = 0u64;
    while start.elapsed().as_secs_f64() < max_s {
        for i in (0..buf.len()).step_by(64) {
            // A little integer arithmetic per line (xorshift), then a write into memory.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[i] = buf[i].wrapping_add(x as u8);
            if i % (1 << 20) == 0 && start.elapsed().as_secs_f64() >= max_s {
                break;
            }
        }
        passes += 1;
    }
    std::hint::black_box(&buf);
    passes
}

/// Running load processes; each [`Child`] is killed and reaped when the set is dropped.
pub struct LoadSet {
    children: Vec<Child>,
    pub load: Load,
    pub bytes_each: u64,
}

impl LoadSet {
    /// Start `count` load processes of `exe taskman load` working through `bytes_each` bytes,
    /// and wait until each has touched its memory.
    pub fn start(exe: &Path, load: Load, count: usize, bytes_each: u64, max_s: u64) -> Result<Self> {
        let mut set = LoadSet { children: Vec::new(), load, bytes_each };
        if load == Load::None {
            return Ok(set);
        }
        let spec = ChildSpec::new(exe)
            .args(["taskman", "load", "--bytes", &bytes_each.to_string()])
            .args(["--max-seconds", &max_s.to_string()])
            .stdout(Output::Pipe);
        for _ in 0..count {
            let child = Child::spawn(&spec).with_context(|| format!("starting a load process ({})", exe.display()))?;
            set.children.push(child);
        }
        for c in set.children.iter_mut() {
            let out = c.take_stdout().context("load process stdout")?;
            // Dropping `set` on an early return kills every load process.
            let line = schedlab_os::child::read_line_timeout(out, READY_TIMEOUT)
                .context("waiting for a load process")?
                .with_context(|| format!("a load process did not say ready within {READY_TIMEOUT:?}"))?;
            if line.trim() != "ready" {
                bail!("a load process did not start (it said {:?}); see the messages above", line.trim());
            }
        }
        Ok(set)
    }

    /// Process ids of the loads.
    pub fn pids(&self) -> Vec<u32> {
        self.children.iter().map(|c| c.pid() as u32).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes_follow_the_seed_with_caps() {
        let gib = 1u64 << 30;
        assert_eq!(Load::Load2.bytes_per_process(2 * gib, gib), 2 * gib * 19 / 100);
        assert_eq!(Load::Load2.bytes_per_process(24 * gib, 512 << 20), 512 << 20);
        assert_eq!(Load::Load1.bytes_per_process(gib, gib), gib / 1000);
        assert_eq!(Load::Load1.bytes_per_process(24 * gib, gib), 2 << 20);
        assert_eq!(Load::None.bytes_per_process(gib, gib), 0);
        assert_eq!("load2".parse::<Load>().unwrap(), Load::Load2);
        assert!("heavy".parse::<Load>().is_err());
    }

    #[test]
    fn load_body_stops_by_itself() {
        let mut said = false;
        let passes = load_body(1 << 16, 0.05, || said = true);
        assert!(said && passes > 0);
    }
}

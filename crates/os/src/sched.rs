//! Linux scheduling policies: set and read a thread's policy, priority, nice value and
//! SCHED_DEADLINE reservation, and a guard that puts the old policy back when dropped.

use crate::{OsError, OsResult};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A Linux scheduling policy (sched(7)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum LinuxPolicy {
    /// SCHED_OTHER (CFS/EEVDF), the default.
    Other,
    /// SCHED_BATCH: like OTHER, never pre-empts on wake-up.
    Batch,
    /// SCHED_IDLE: runs only when nothing else wants the CPU.
    Idle,
    /// SCHED_FIFO: real-time, runs until it blocks or a higher priority arrives.
    Fifo,
    /// SCHED_RR: real-time FIFO with a time slice (sched_rr_timeslice_ms).
    Rr,
    /// SCHED_DEADLINE: constant-bandwidth server (runtime/deadline/period).
    Deadline,
}

impl LinuxPolicy {
    /// Every policy, in the order reports list them.
    pub const ALL: [LinuxPolicy; 6] = [
        LinuxPolicy::Other,
        LinuxPolicy::Batch,
        LinuxPolicy::Idle,
        LinuxPolicy::Fifo,
        LinuxPolicy::Rr,
        LinuxPolicy::Deadline,
    ];

    /// The kernel's constant for this policy.
    pub fn raw(self) -> i32 {
        match self {
            LinuxPolicy::Other => libc::SCHED_OTHER,
            LinuxPolicy::Batch => libc::SCHED_BATCH,
            LinuxPolicy::Idle => libc::SCHED_IDLE,
            LinuxPolicy::Fifo => libc::SCHED_FIFO,
            LinuxPolicy::Rr => libc::SCHED_RR,
            LinuxPolicy::Deadline => SCHED_DEADLINE,
        }
    }

    /// The policy for a kernel constant.
    pub fn from_raw(raw: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.raw() == raw)
    }

    /// True for the policies that need root (or CAP_SYS_NICE) to enter.
    pub fn is_realtime(self) -> bool {
        matches!(self, LinuxPolicy::Fifo | LinuxPolicy::Rr | LinuxPolicy::Deadline)
    }

    /// The valid static priority range (sched_get_priority_min/max); 0..=0 for non-RT policies.
    pub fn priority_range(self) -> (i32, i32) {
        match self {
            LinuxPolicy::Fifo | LinuxPolicy::Rr => (1, 99),
            _ => (0, 0),
        }
    }

    /// Check a priority against [`Self::priority_range`], naming the value when it is outside.
    pub fn check_priority(self, priority: i32) -> OsResult<()> {
        let (lo, hi) = self.priority_range();
        if priority < lo || priority > hi {
            return Err(OsError::invalid(
                format!("priority for {self}"),
                priority,
                format!("{self} accepts {lo}..={hi}"),
            ));
        }
        Ok(())
    }

    /// The kernel name, e.g. `SCHED_FIFO`.
    pub fn kernel_name(self) -> &'static str {
        match self {
            LinuxPolicy::Other => "SCHED_OTHER",
            LinuxPolicy::Batch => "SCHED_BATCH",
            LinuxPolicy::Idle => "SCHED_IDLE",
            LinuxPolicy::Fifo => "SCHED_FIFO",
            LinuxPolicy::Rr => "SCHED_RR",
            LinuxPolicy::Deadline => "SCHED_DEADLINE",
        }
    }
}

impl fmt::Display for LinuxPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            LinuxPolicy::Other => "other",
            LinuxPolicy::Batch => "batch",
            LinuxPolicy::Idle => "idle",
            LinuxPolicy::Fifo => "fifo",
            LinuxPolicy::Rr => "rr",
            LinuxPolicy::Deadline => "deadline",
        };
        f.write_str(s)
    }
}

impl FromStr for LinuxPolicy {
    type Err = OsError;
    fn from_str(s: &str) -> OsResult<Self> {
        let lower = s.trim().to_ascii_lowercase();
        let name = lower.strip_prefix("sched_").unwrap_or(&lower);
        Self::ALL
            .into_iter()
            .find(|p| p.to_string() == name)
            .ok_or_else(|| OsError::invalid("policy", s, "expected one of other, batch, idle, fifo, rr, deadline"))
    }
}

/// SCHED_DEADLINE's constant; libc does not export it on every target.
pub const SCHED_DEADLINE: i32 = 6;
/// sched_setattr flag: children do not inherit an RT/DL policy after fork.
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// `struct sched_attr` as the kernel expects it (size 56, SCHED_ATTR_SIZE_VER1).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

/// What a thread's scheduling looks like: enough to restore it exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedParams {
    pub policy: LinuxPolicy,
    /// Static RT priority (1..=99) for FIFO/RR, 0 otherwise.
    pub priority: i32,
    /// Nice value for OTHER/BATCH (-20..=19).
    pub nice: i32,
    /// SCHED_DEADLINE runtime, deadline and period in nanoseconds (0 for other policies).
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
    /// Reset to SCHED_OTHER in children created by fork.
    pub reset_on_fork: bool,
}

impl SchedParams {
    /// A policy at a priority (RT) or nice value (OTHER/BATCH); no deadline reservation.
    pub fn new(policy: LinuxPolicy, priority: i32) -> Self {
        SchedParams { policy, priority, nice: 0, runtime_ns: 0, deadline_ns: 0, period_ns: 0, reset_on_fork: false }
    }

    /// SCHED_OTHER at nice `nice`.
    pub fn other_nice(nice: i32) -> Self {
        SchedParams { nice, ..Self::new(LinuxPolicy::Other, 0) }
    }

    /// A SCHED_DEADLINE reservation (runtime ≤ deadline ≤ period, all in ns).
    pub fn deadline(runtime_ns: u64, deadline_ns: u64, period_ns: u64) -> OsResult<Self> {
        if runtime_ns == 0 || runtime_ns > deadline_ns || deadline_ns > period_ns {
            return Err(OsError::invalid(
                "SCHED_DEADLINE reservation",
                format!("runtime={runtime_ns}ns deadline={deadline_ns}ns period={period_ns}ns"),
                "need 0 < runtime <= deadline <= period",
            ));
        }
        Ok(SchedParams { runtime_ns, deadline_ns, period_ns, ..Self::new(LinuxPolicy::Deadline, 0) })
    }
}

impl SchedAttr {
    /// The kernel struct for `p` (also used by `spawn`, which calls sched_setattr in a child).
    pub(crate) fn from_params(p: &SchedParams) -> Self {
        SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            sched_policy: p.policy.raw() as u32,
            sched_flags: if p.reset_on_fork { SCHED_FLAG_RESET_ON_FORK } else { 0 },
            sched_nice: p.nice,
            sched_priority: p.priority as u32,
            sched_runtime: p.runtime_ns,
            sched_deadline: p.deadline_ns,
            sched_period: p.period_ns,
            ..Default::default()
        }
    }
}

/// Set the scheduling of thread/process `tid` (0 = the calling thread) with sched_setattr(2).
pub fn set_sched(tid: i32, p: &SchedParams) -> OsResult<()> {
    p.policy.check_priority(p.priority)?;
    let attr = SchedAttr::from_params(p);
    // SAFETY: attr is a valid, fully initialised sched_attr of the size we pass.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const SchedAttr, 0u32) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        let what = format!("setting {} (priority {}) on {}", p.policy.kernel_name(), p.priority, who(tid));
        if err.raw_os_error() == Some(libc::EBUSY) {
            return Err(OsError::unsupported(what, "SCHED_DEADLINE admission control refused the bandwidth (EBUSY)"));
        }
        return Err(OsError::from_io(what, err));
    }
    Ok(())
}

/// Read the scheduling of thread/process `tid` (0 = the calling thread) with sched_getattr(2).
pub fn get_sched(tid: i32) -> OsResult<SchedParams> {
    let mut attr = SchedAttr::default();
    // SAFETY: attr is writable and we pass its exact size.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0u32,
        )
    };
    if rc != 0 {
        return Err(OsError::last(format!("reading the scheduling policy of {}", who(tid))));
    }
    let policy = LinuxPolicy::from_raw(attr.sched_policy as i32).ok_or_else(|| {
        OsError::unsupported("scheduling policy", format!("unknown kernel policy {}", attr.sched_policy))
    })?;
    Ok(SchedParams {
        policy,
        priority: attr.sched_priority as i32,
        nice: attr.sched_nice,
        runtime_ns: attr.sched_runtime,
        deadline_ns: attr.sched_deadline,
        period_ns: attr.sched_period,
        reset_on_fork: attr.sched_flags & SCHED_FLAG_RESET_ON_FORK != 0,
    })
}

fn who(tid: i32) -> String {
    if tid == 0 {
        "the calling thread".to_string()
    } else {
        format!("task {tid}")
    }
}

/// Restores a thread's scheduling parameters when dropped (normal return, `?`, panic unwind).
#[must_use = "the old policy is restored when the guard is dropped"]
pub struct SchedGuard {
    tid: i32,
    saved: SchedParams,
}

impl SchedGuard {
    /// Remember `tid`'s current scheduling, then apply `new`.
    pub fn apply(tid: i32, new: &SchedParams) -> OsResult<Self> {
        let saved = get_sched(tid)?;
        set_sched(tid, new)?;
        Ok(SchedGuard { tid, saved })
    }
}

impl Drop for SchedGuard {
    fn drop(&mut self) {
        if let Err(e) = set_sched(self.tid, &self.saved) {
            eprintln!("schedlab: could not restore the scheduling policy of {}: {e}", who(self.tid));
        }
    }
}

/// The RT throttling settings (`/proc/sys/kernel/sched_rt_{runtime,period}_us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtThrottling {
    /// -1 means throttling is off (RT tasks may take 100% of a CPU).
    pub runtime_us: i64,
    pub period_us: i64,
}

impl RtThrottling {
    /// True when RT tasks cannot take a whole CPU (runtime < period).
    pub fn is_on(&self) -> bool {
        self.runtime_us >= 0 && self.runtime_us < self.period_us
    }
}

/// Read the RT throttling settings.
pub fn rt_throttling() -> OsResult<RtThrottling> {
    let read = |name: &str| -> OsResult<i64> {
        let path = format!("/proc/sys/kernel/{name}");
        let text = std::fs::read_to_string(&path).map_err(|e| OsError::from_io(format!("reading {path}"), e))?;
        text.trim().parse().map_err(|_| OsError::not_an_integer(path, text.trim()))
    };
    Ok(RtThrottling { runtime_us: read("sched_rt_runtime_us")?, period_us: read("sched_rt_period_us")? })
}

/// Linux's SCHED_RR time slice in ms (`/proc/sys/kernel/sched_rr_timeslice_ms`; 100 when
/// unreadable).
pub fn rr_timeslice_ms() -> u64 {
    std::fs::read_to_string("/proc/sys/kernel/sched_rr_timeslice_ms")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&ms| ms > 0)
        .unwrap_or(100)
}

/// Whether autogroup is on (`/proc/sys/kernel/sched_autogroup_enabled`): SCHED_OTHER tasks of
/// one session then share one group's CPU share with other sessions.
pub fn autogroup_enabled() -> bool {
    std::fs::read_to_string(crate::autogroup::SETTING).is_ok_and(|s| s.trim() == "1")
}

/// Refuse to start an RT experiment when RT throttling is off: a runaway SCHED_FIFO loop
/// would then own its CPU completely.
pub fn require_rt_throttling() -> OsResult<RtThrottling> {
    let t = rt_throttling()?;
    if !t.is_on() {
        return Err(OsError::unsupported(
            "a real-time experiment",
            format!(
                "RT throttling is off (sched_rt_runtime_us={}); turn it on with \
                 `echo 950000 > /proc/sys/kernel/sched_rt_runtime_us`",
                t.runtime_us
            ),
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_round_trip() {
        for p in LinuxPolicy::ALL {
            assert_eq!(p.to_string().parse::<LinuxPolicy>().unwrap(), p);
            assert_eq!(p.kernel_name().parse::<LinuxPolicy>().unwrap(), p);
        }
        let err = "fast".parse::<LinuxPolicy>().unwrap_err().to_string();
        assert!(err.contains("fast"), "{err}");
    }

    #[test]
    fn priority_ranges_are_checked() {
        assert!(LinuxPolicy::Fifo.check_priority(0).is_err());
        assert!(LinuxPolicy::Fifo.check_priority(99).is_ok());
        assert!(LinuxPolicy::Rr.check_priority(100).is_err());
        assert!(LinuxPolicy::Other.check_priority(0).is_ok());
        assert!(LinuxPolicy::Other.check_priority(5).is_err());
    }

    #[test]
    fn reads_own_policy() {
        // The kernel's own account of this thread: /proc/thread-self/stat fields 19 (nice),
        // 40 (rt_priority) and 41 (policy), counted from field 3 after the command's ')'.
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let fields: Vec<i64> =
            stat[stat.rfind(')').unwrap() + 1..].split_whitespace().skip(1).map(|f| f.parse().unwrap_or(-1)).collect();
        let field = |n: usize| fields[n - 4];
        let p = get_sched(0).unwrap();
        assert_eq!(
            (p.policy.raw() as i64, p.priority as i64, p.nice as i64),
            (field(41), field(40), field(19)),
            "{stat}"
        );
    }

    #[test]
    fn deadline_params_validated() {
        assert!(SchedParams::deadline(0, 10, 10).is_err());
        assert!(SchedParams::deadline(20, 10, 10).is_err());
        assert!(SchedParams::deadline(5, 10, 20).is_ok());
    }

    #[test]
    fn guard_restores_nice() {
        // Raising nice needs no privilege, so this runs everywhere.
        let before = get_sched(0).unwrap();
        {
            let _g = SchedGuard::apply(0, &SchedParams::other_nice(before.nice.max(0) + 1)).unwrap();
            assert_eq!(get_sched(0).unwrap().nice, before.nice.max(0) + 1);
        }
        // Lowering nice again needs CAP_SYS_NICE (or RLIMIT_NICE): without it there is nothing
        // the guard could do, so the restore is checked where the privilege is.
        if crate::test_gate::require("the nice restore", crate::is_root(), "lowering nice needs root") {
            assert_eq!(get_sched(0).unwrap(), before);
        }
    }
}

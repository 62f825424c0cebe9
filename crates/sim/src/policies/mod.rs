//! One file per scheduling policy, as in Linux's kernel/sched/ (fair.c, rt.c, deadline.c), and
//! [`by_spec`] to build one from a spec string such as `rr:quantum=4ms`.

pub mod cfs;
pub mod common;
pub mod edf;
pub mod eevdf;
pub mod fcfs;
pub mod freebsd;
pub mod freebsd_ule;
pub mod gedf;
pub mod linux;
pub mod llf;
pub mod lottery;
pub mod mlfq;
pub mod mlq;
pub mod pedf;
pub mod prio;
pub mod rm;
pub mod rr;
pub mod sjf;
pub mod solaris_ts;
pub mod spec;
pub mod srtf;
pub mod stride;
pub mod windows;
pub mod wrr;

pub use cfs::Cfs;
pub use edf::Edf;
pub use eevdf::Eevdf;
pub use fcfs::Fcfs;
pub use freebsd::FreeBsd;
pub use gedf::global::GlobalPolicy;
pub use linux::Linux;
pub use lottery::Lottery;
pub use mlfq::Mlfq;
pub use mlq::Mlq;
pub use pedf::Pedf;
pub use prio::Priority;
pub use rm::RateMonotonic;
pub use rr::RoundRobin;
pub use sjf::Sjf;
pub use solaris_ts::SolarisTs;
pub use spec::{Params, SpecError};
pub use srtf::Srtf;
pub use stride::Stride;
pub use windows::Windows;
pub use wrr::WeightedRoundRobin;

use crate::policy::Policy;

/// The policy names `by_spec` knows: spec with its parameters' defaults, what it does, and the
/// source it follows (for `schedlab sim policies`).
pub const CATALOGUE: &[(&str, &str, &str)] = &[
    ("fcfs", "first come, first served; no pre-emption", SILBERSCHATZ),
    ("rr:quantum=4ms", "round robin; quantum (default 4)", SILBERSCHATZ),
    (
        "cfs:latency=6ms,min_granularity=0.75ms,wakeup_granularity=1ms",
        "Linux CFS with the nice-to-weight table",
        "Linux 6.5 kernel/sched/fair.c (the last CFS kernel)",
    ),
    ("wrr:quantum=10ms", "weighted round robin; slice = quantum × weight (seed 004)", "seed 004"),
    ("sjf", "shortest job (next CPU burst) first; no pre-emption", SILBERSCHATZ),
    ("srtf", "shortest remaining time first; pre-emptive", SILBERSCHATZ),
    ("prio", "priority (lower number = higher); no pre-emption", SILBERSCHATZ),
    (
        "prio-preempt:aging=0ms,quantum=0ms",
        "pre-emptive priority; aging = ms waited per level gained (0 = off); quantum = RR among equals (0 = off)",
        SILBERSCHATZ,
    ),
    (
        "mlq:queues=fcfs+prio",
        "multilevel queue; sub-policies by '+', their params with '/' (rr/quantum=8ms); queue = class number or priority",
        SILBERSCHATZ,
    ),
    (
        "mlfq:levels=3,quantum=8ms,boost=1000ms",
        "multilevel feedback queue; quantum doubles per level; boost period (0 = off)",
        "Silberschatz ch. 5.3.6; the priority boost after Arpaci-Dusseau, OSTEP ch. 8",
    ),
    ("edf", "earliest deadline first; pre-emptive", LIU_LAYLAND),
    ("rm", "rate monotonic (shorter period = higher priority); pre-emptive", LIU_LAYLAND),
    (
        "gedf",
        "global EDF over all CPUs: a job pre-empts the latest-deadline running job",
        "Dhall & Liu 1978; the displaced job as Linux's cpudl_find() (kernel/sched/cpudeadline.c)",
    ),
    (
        "pedf",
        "partitioned EDF: tasks bound to CPUs by first-fit decreasing density C/min(D,T); EDF per CPU; \
         no migrations",
        "Dhall & Liu 1978 (first-fit partitioning); Liu & Layland 1973 per CPU",
    ),
    (
        "llf:quantum=1ms",
        "global least laxity first; equal-laxity jobs take turns of quantum (0 = decide only at events)",
        "Mok 1983; J. W. S. Liu, Real-Time Systems (2000) ch. 6 (nonstrict LST)",
    ),
    ("stride:quantum=10ms", "stride scheduling; pass += stride (∝ 1/weight)", "Waldspurger & Weihl 1995"),
    ("lottery:quantum=10ms,seed=1", "lottery scheduling with weight tickets; seeded", "Waldspurger & Weihl 1994"),
    (
        "solaris_ts",
        "Solaris/illumos time-sharing: the 60-level dispatch table driven as ts.c drives it (tqexp on expiry, \
         ts_update's once-a-second lift to lwait/slpret, IA boost for class ia)",
        "illumos usr/src/uts/common/disp/ts_dptbl.c (7c478bd9) and ts.c (2570281c)",
    ),
    (
        "windows:clock=15.625ms,quantum=short,fixed=0,separation=2,io_boost=1,starvation=300,scan=1000ms",
        "Windows NT scheduler: 32 levels = priority class × thread priority (class idle/below_normal/normal/\
         above_normal/high/realtime/foreground; priority −2..2, ±15 = idle/time-critical, lower = higher); \
         quantum units (3 per clock tick; quantum=long,fixed=1 = server); foreground quantum × (separation + 1); \
         I/O (io_boost = device increment) and event (+1) boosts decaying per quantum end; the balance-set \
         manager's anti-starvation scan every `scan` (starvation in clock ticks)",
        "ReactOS ntoskrnl/ke (thrdschd.c, balmgr.c) and Microsoft's Scheduling Priorities and Priority Boosts pages",
    ),
    (
        "freebsd_4bsd:slice=100ms",
        "FreeBSD's 4.4BSD scheduler: interrupt/realtime/timeshare/idle run queues, estcpu decay",
        "McKusick et al., The Design and Implementation of the 4.4BSD Operating System; FreeBSD sched_4bsd.c",
    ),
    (
        "freebsd_ule:stathz=127,slice=94.5ms,interact=30",
        "FreeBSD ULE (its default since 7.1; also `freebsd`): interactivity score, per-CPU realtime / \
         timeshare-calendar / idle queues, idle stealing; slice rounded to stathz ticks (default stathz/10)",
        "FreeBSD sys/kern/sched_ule.c (d8d5f036)",
    ),
    (
        "linux:rr_quantum=100ms,rt_runtime=950ms,rt_period=1000ms,rt_throttle=1",
        "Linux 6.18 by task class: deadline (EDF + CBS: runtime, deadline, period) > fifo/rr (priority 1-99, \
         higher wins) > fair (EEVDF, as eevdf: other, batch, idle); RT throttling; eevdf's parameters too",
        "Linux 6.18 kernel/sched/core.c, fair.c, rt.c, deadline.c",
    ),
    (
        "eevdf:base_slice=1.4ms,run_to_parity=1,place_lag=1,place_deadline_initial=1,preempt_short=1,delay_dequeue=1,delay_zero=1",
        "Linux 6.18 fair class (EEVDF): nice weights, lag, eligible earliest virtual deadline; runtime = custom slice; \
         class batch/idle = SCHED_BATCH/SCHED_IDLE",
        "Linux 6.18 kernel/sched/fair.c; Stoica & Abdel-Wahab 1995",
    ),
];

const SILBERSCHATZ: &str = "Silberschatz, Galvin & Gagne, Operating System Concepts, 10th ed., ch. 5";
const LIU_LAYLAND: &str = "Liu & Layland 1973";

/// Build the `linux` policy from a spec (`linux` or `linux:key=value,...`) as its own type, for
/// a caller that reads its state after the run (its [`linux::smp::signals::SignalLog`]).
pub fn linux_by_spec(spec: &str) -> Result<linux::Linux, SpecError> {
    let mut p = Params::parse(spec)?;
    if p.name != "linux" {
        return Err(p.error("policy", format!("`{}` is not the linux policy", p.name)));
    }
    let policy = linux::Linux::new(linux::LinuxParams::parse(&mut p)?);
    p.finish()?;
    Ok(policy)
}

/// Build a policy from a spec: `name` or `name:key=value,...` (times with their unit).
pub fn by_spec(spec: &str) -> Result<Box<dyn Policy>, SpecError> {
    let mut p = Params::parse(spec)?;
    let policy: Box<dyn Policy> = match p.name.as_str() {
        "fcfs" | "fifo" => Box::new(Fcfs::new()),
        "rr" => Box::new(RoundRobin::new(p.time("quantum", 4.0)?)),
        "cfs" => Box::new(cfs(&mut p)?),
        "wrr" => Box::new(WeightedRoundRobin::new(p.time("quantum", 10.0)?)),
        "sjf" => Box::new(Sjf::new()),
        "srtf" => Box::new(Srtf::new()),
        "prio" => Box::new(Priority::new(false, None, None)),
        "prio-preempt" | "prio_preempt" => {
            let aging = p.time_opt("aging")?;
            let quantum = p.time_opt("quantum")?;
            Box::new(Priority::new(true, aging, quantum))
        }
        "mlq" => mlq(&mut p)?,
        "mlfq" => {
            let levels = p.uint("levels", 3, 1, 32)? as usize;
            let quantum = p.time("quantum", 8.0)?;
            let boost = match p.string("boost") {
                None => Some(1_000_000_000),
                Some(v) => spec::parse_time(&v).map_err(|e| p.error("boost", e))?.into(),
            }
            .filter(|&b| b > 0);
            Box::new(Mlfq::new(levels, quantum, boost))
        }
        "edf" => Box::new(Edf::new()),
        "rm" => Box::new(RateMonotonic::new()),
        "gedf" => Box::new(gedf::policy()),
        "pedf" => Box::new(Pedf::new()),
        "llf" => {
            let quantum = match p.string("quantum") {
                None => 1_000_000,
                Some(v) => spec::parse_time(&v).map_err(|e| p.error("quantum", e))?,
            };
            Box::new(llf::policy(quantum))
        }
        "stride" => Box::new(Stride::new(p.time("quantum", 10.0)?)),
        "lottery" => {
            let q = p.time("quantum", 10.0)?;
            Box::new(Lottery::new(q, p.uint("seed", 1, 0, u64::MAX)?))
        }
        "solaris_ts" | "solaris" => Box::new(SolarisTs::new()),
        "windows" => Box::new(Windows::with_params(windows::WindowsParams::parse(&mut p)?)),
        "freebsd_4bsd" | "4bsd" => Box::new(FreeBsd::new(p.time("slice", 100.0)?)),
        "freebsd_ule" | "freebsd" | "ule" => Box::new(freebsd_ule::FreeBsdUle::from_params(&mut p)?),
        "eevdf" => Box::new(Eevdf::new(eevdf::features(&mut p)?)),
        "linux" => Box::new(linux::Linux::new(linux::LinuxParams::parse(&mut p)?)),
        other => {
            let known: Vec<&str> = CATALOGUE.iter().map(|(s, _, _)| s.split(':').next().unwrap_or(s)).collect();
            return Err(p.error("policy", format!("unknown policy `{other}` (known: {})", known.join(", "))));
        }
    };
    p.finish()?;
    Ok(policy)
}

/// `mlq:queues=fcfs+prio`: sub-specs joined by `+`, each `name/key=value/key=value`.
/// CFS with its tunables (Linux defaults: latency 6 ms, min_granularity 0.75 ms,
/// wakeup_granularity 1 ms).
fn cfs(p: &mut Params) -> Result<Cfs, SpecError> {
    Ok(Cfs::new(p.time("latency", 6.0)?, p.time("min_granularity", 0.75)?, p.time("wakeup_granularity", 1.0)?))
}

fn mlq(p: &mut Params) -> Result<Box<dyn Policy>, SpecError> {
    let list = p.string("queues").unwrap_or_else(|| "fcfs+prio".into());
    let mut queues = Vec::new();
    for (i, sub) in list.split('+').enumerate() {
        let mut parts = sub.split('/');
        let name = parts.next().unwrap_or_default();
        let params: Vec<&str> = parts.collect();
        let sub_spec = if params.is_empty() { name.to_string() } else { format!("{name}:{}", params.join(",")) };
        if matches!(name, "mlq" | "linux") {
            return Err(p.error("queues", format!("queue {i}: `{name}` cannot be nested")));
        }
        let q = by_spec(&sub_spec)
            .map_err(|e| p.error("queues", format!("queue {i} (`{sub}`): {}: {}", e.field, e.message)))?;
        queues.push(q);
    }
    let label = format!(
        "mlq:queues={}",
        queues.iter().map(|q| q.name().replace([':', ','], "/")).collect::<Vec<_>>().join("+")
    );
    Ok(Box::new(Mlq::new(label, queues, mlq::by_class_or_priority)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_bad_ones_name_the_field() {
        assert_eq!(by_spec("rr:quantum=4ms").unwrap().name(), "rr:quantum=4ms");
        assert_eq!(by_spec("rr:quantum=500us").unwrap().name(), "rr:quantum=0.5ms");
        assert_eq!(by_spec("fcfs").unwrap().name(), "fcfs");
        assert_eq!(by_spec("cfs").unwrap().name(), "cfs");
        assert!(by_spec("wrr:quantum=10ms").unwrap().name().starts_with("wrr"));
        let e = by_spec("rr:quantum=0ms").err().unwrap();
        assert_eq!(e.field, "quantum");
        assert!(e.to_string().contains("> 0"));
        assert_eq!(by_spec("rr:quantom=3").err().unwrap().field, "quantom");
        assert_eq!(by_spec("bogus").err().unwrap().field, "policy");
        assert!(by_spec("bogus").err().unwrap().to_string().contains("bogus"));
        assert_eq!(by_spec("rr:quantum=x").err().unwrap().field, "quantum");
        assert_eq!(by_spec("rr:quantum=-1").err().unwrap().field, "quantum");
        assert_eq!(by_spec("mlq:queues=rr/quantum=0ms+fcfs").err().unwrap().field, "queues");
        assert_eq!(by_spec("mlq:queues=rr/quantum=8ms+fcfs").unwrap().name(), "mlq:queues=rr/quantum=8ms+fcfs");
        for (spec, _, _) in CATALOGUE {
            by_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        }
    }
}

//! perf_event_open counters (software and hardware), reporting "not supported" rather than zero.
//!
//! A [`CounterSet`] counts the calling thread and every thread or child it creates afterwards
//! (`inherit`), kernel activity included (`exclude_kernel = 0`, unlike the default of most
//! wrappers), the way `perf stat` counts a whole program in seed 003's Table 2. Counters the
//! machine does not have (no PMU in a VM, no dTLB event on the CPU) come back as
//! [`Reading::NotSupported`] with the kernel's reason, never as a zero.

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter};
use serde::{Deserialize, Serialize};

/// The events of seed 003's Table 2 (plus task-clock), named as `perf` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Event {
    ContextSwitches,
    CpuMigrations,
    PageFaults,
    TaskClock,
    Branches,
    CacheMisses,
    CacheReferences,
    DtlbLoadMisses,
    DtlbLoads,
    DtlbStoreMisses,
    DtlbStores,
}

impl Event {
    /// Every event, in Table 2's order (software first).
    pub const ALL: [Event; 11] = [
        Event::ContextSwitches,
        Event::CpuMigrations,
        Event::PageFaults,
        Event::TaskClock,
        Event::Branches,
        Event::CacheMisses,
        Event::CacheReferences,
        Event::DtlbLoadMisses,
        Event::DtlbLoads,
        Event::DtlbStoreMisses,
        Event::DtlbStores,
    ];

    /// perf's name (`context-switches`, `dTLB-load-misses`, ...), as in the seed's table.
    pub fn perf_name(self) -> &'static str {
        match self {
            Event::ContextSwitches => "context-switches",
            Event::CpuMigrations => "cpu-migrations",
            Event::PageFaults => "page-faults",
            Event::TaskClock => "task-clock",
            Event::Branches => "branches",
            Event::CacheMisses => "cache-misses",
            Event::CacheReferences => "cache-references",
            Event::DtlbLoadMisses => "dTLB-load-misses",
            Event::DtlbLoads => "dTLB-loads",
            Event::DtlbStoreMisses => "dTLB-store-misses",
            Event::DtlbStores => "dTLB-stores",
        }
    }

    /// A name usable as a JSON key (`context_switches`, `dtlb_load_misses`, ...).
    pub fn key(self) -> String {
        self.perf_name().to_ascii_lowercase().replace('-', "_")
    }

    /// True for events the kernel counts in software (always available).
    pub fn is_software(self) -> bool {
        matches!(self, Event::ContextSwitches | Event::CpuMigrations | Event::PageFaults | Event::TaskClock)
    }

    fn builder(self) -> Builder<'static> {
        let dtlb = |operation, result| Cache { which: CacheId::DTLB, operation, result };
        match self {
            Event::ContextSwitches => Builder::new(Software::CONTEXT_SWITCHES),
            Event::CpuMigrations => Builder::new(Software::CPU_MIGRATIONS),
            Event::PageFaults => Builder::new(Software::PAGE_FAULTS),
            Event::TaskClock => Builder::new(Software::TASK_CLOCK),
            Event::Branches => Builder::new(Hardware::BRANCH_INSTRUCTIONS),
            Event::CacheMisses => Builder::new(Hardware::CACHE_MISSES),
            Event::CacheReferences => Builder::new(Hardware::CACHE_REFERENCES),
            Event::DtlbLoadMisses => Builder::new(dtlb(CacheOp::READ, CacheResult::MISS)),
            Event::DtlbLoads => Builder::new(dtlb(CacheOp::READ, CacheResult::ACCESS)),
            Event::DtlbStoreMisses => Builder::new(dtlb(CacheOp::WRITE, CacheResult::MISS)),
            Event::DtlbStores => Builder::new(dtlb(CacheOp::WRITE, CacheResult::ACCESS)),
        }
    }
}

/// One counter's value, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// The count (task-clock in nanoseconds).
    Count(u64),
    /// The machine cannot count this event (the reason comes from the kernel).
    NotSupported(String),
}

impl Reading {
    /// The count, if there is one.
    pub fn count(&self) -> Option<u64> {
        match self {
            Reading::Count(n) => Some(*n),
            Reading::NotSupported(_) => None,
        }
    }
}

/// Counters on the calling thread and everything it spawns after [`CounterSet::open`].
pub struct CounterSet {
    counters: Vec<(Event, Result<Counter, String>)>,
}

impl CounterSet {
    /// Open `events` on the calling thread with inheritance and kernel counting on, disabled
    /// until [`CounterSet::enable`]. An event that cannot be opened is remembered as not supported.
    pub fn open(events: &[Event]) -> Self {
        let counters = events
            .iter()
            .map(|&e| {
                let c = e.builder().observe_self().any_cpu().inherit(true).include_kernel().build();
                (e, c.map_err(|err| unsupported_reason(e, &err)))
            })
            .collect();
        CounterSet { counters }
    }

    /// Zero and start every counter that opened.
    pub fn enable(&mut self) {
        for (_, c) in self.counters.iter_mut() {
            if let Ok(c) = c {
                let _ = c.reset();
                let _ = c.enable();
            }
        }
    }

    /// Stop every counter.
    pub fn disable(&mut self) {
        for (_, c) in self.counters.iter_mut() {
            if let Ok(c) = c {
                let _ = c.disable();
            }
        }
    }

    /// Read every counter. Inherited counts from threads are included once those threads have
    /// exited, so join the workers before reading.
    pub fn read(&mut self) -> Vec<(Event, Reading)> {
        self.counters
            .iter_mut()
            .map(|(e, c)| {
                let r = match c {
                    Ok(c) => match c.read_count_and_time() {
                        // A hardware counter that never got onto the PMU counted nothing real.
                        Ok(ct) if ct.time_running == 0 && ct.time_enabled > 0 && !e.is_software() => {
                            Reading::NotSupported("the counter was never scheduled on the PMU".to_string())
                        }
                        Ok(ct) => Reading::Count(ct.count),
                        Err(err) => Reading::NotSupported(format!("read failed: {err}")),
                    },
                    Err(why) => Reading::NotSupported(why.clone()),
                };
                (*e, r)
            })
            .collect()
    }
}

fn unsupported_reason(e: Event, err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            format!("not supported: this machine has no {} counter ({err})", e.perf_name())
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("not permitted: kernel counting needs root or perf_event_paranoid <= 1 ({err})")
        }
        _ => format!("not supported: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_counters_count_a_page_touching_loop() {
        let mut set = CounterSet::open(&Event::ALL);
        set.enable();
        let v: Vec<u8> = vec![1; 8 << 20];
        let sum: u64 = std::hint::black_box(&v).iter().step_by(4096).map(|&b| b as u64).sum();
        std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(2))).join().unwrap();
        set.disable();
        assert!(sum > 0);
        let r = set.read();
        let get = |e: Event| r.iter().find(|(x, _)| *x == e).unwrap().1.clone();
        assert!(get(Event::PageFaults).count().unwrap() > 100, "{:?}", get(Event::PageFaults));
        assert!(get(Event::TaskClock).count().unwrap() > 0);
        // The sleeping child thread switched out at least once and its count was inherited.
        assert!(get(Event::ContextSwitches).count().unwrap() >= 1);
        for (e, reading) in &r {
            if let Reading::NotSupported(why) = reading {
                assert!(!e.is_software(), "{e:?} is software but: {why}");
                assert!(!why.is_empty());
            }
        }
    }

    #[test]
    fn names_match_perf() {
        assert_eq!(Event::DtlbLoadMisses.perf_name(), "dTLB-load-misses");
        assert_eq!(Event::DtlbLoadMisses.key(), "dtlb_load_misses");
        assert_eq!(Event::ContextSwitches.key(), "context_switches");
    }
}

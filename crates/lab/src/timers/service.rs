//! The live sleep service: real threads call [`SleepService::sleep`] and block; one ticker
//! thread advances a [`TimerQueue`] every tick and wakes (unparks, a futex underneath) the
//! threads whose time is up — seed 000's kernel experiment, in user space.
//!
//! Durations become ticks by rounding *up*, so no thread is woken before its time. Threads
//! that ask before the clock starts are all queued at tick 0, as the seed queues its 100
//! entries before its main loop (Figures 9–12); their requested wake time is the clock's start
//! plus their duration.

use schedlab_os::clock;
use schedlab_os::sched::{LinuxPolicy, SchedGuard, SchedParams};
use schedlab_timerq::{Kind, OpCounts, TimerQueue};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::Thread;
use std::time::Duration;

/// How long the ticker waits for every sleeper to ask before giving up.
const REGISTER_TIMEOUT: Duration = Duration::from_secs(30);

/// How the ticker waits for the next tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TickMode {
    /// Spin on CLOCK_MONOTONIC until the tick (the seed's `mdelay(1)`): precise, burns a CPU.
    Busy,
    /// `clock_nanosleep(TIMER_ABSTIME)` to the tick: cheap, subject to wake-up latency.
    Sleep,
}

impl TickMode {
    pub fn name(self) -> &'static str {
        match self {
            TickMode::Busy => "busy",
            TickMode::Sleep => "sleep",
        }
    }
}

impl FromStr for TickMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "busy" => Ok(TickMode::Busy),
            "sleep" => Ok(TickMode::Sleep),
            _ => Err(format!("unknown tick mode '{s}' (use busy or sleep)")),
        }
    }
}

/// One blocked thread.
struct Waiter {
    thread: Thread,
    woken: AtomicBool,
}

struct Inner {
    queue: Box<dyn TimerQueue<Arc<Waiter>> + Send>,
    registered: usize,
}

/// What a sleeper observed.
#[derive(Debug, Clone, Copy)]
pub struct Slept {
    /// When it should have woken (CLOCK_MONOTONIC ns).
    pub requested_ns: u64,
    /// When it ran again.
    pub woke_ns: u64,
}

impl Slept {
    /// Actual minus requested wake time, in µs (negative would mean early).
    pub fn lateness_us(&self) -> f64 {
        (self.woke_ns as f64 - self.requested_ns as f64) / 1e3
    }
}

/// What the ticker measured.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct TickerStats {
    /// CPU time of the ticker thread while the clock ran.
    pub cpu_s: f64,
    /// Wall time from the clock's start to the last tick.
    pub real_s: f64,
    pub ops: OpCounts,
    /// How late the ticker itself started its ticks (µs): the share of lateness the tick
    /// source causes, before the queue and the wake-up add theirs.
    pub tick_late_max_us: f64,
    pub tick_late_mean_us: f64,
}

/// A sleep service around one queue.
pub struct SleepService {
    inner: Mutex<Inner>,
    registered_cv: Condvar,
    tick_ns: u64,
    mode: TickMode,
    /// CLOCK_MONOTONIC at tick 0; 0 until the clock starts.
    t0_ns: AtomicU64,
    /// SCHED_FIFO priority for the ticker and the sleepers (None = SCHED_OTHER).
    rt_priority: Option<i32>,
}

impl SleepService {
    /// A service whose clock has not started.
    pub fn new(kind: Kind, tick: Duration, mode: TickMode, rt_priority: Option<i32>) -> Self {
        assert!(!tick.is_zero(), "tick must be positive");
        SleepService {
            rt_priority,
            inner: Mutex::new(Inner { queue: kind.new_queue(), registered: 0 }),
            registered_cv: Condvar::new(),
            tick_ns: tick.as_nanos() as u64,
            mode,
            t0_ns: AtomicU64::new(0),
        }
    }

    /// Put the calling thread under SCHED_FIFO if the service was asked to (restored on drop).
    fn rt_guard(&self) -> anyhow::Result<Option<SchedGuard>> {
        match self.rt_priority {
            None => Ok(None),
            Some(p) => Ok(Some(SchedGuard::apply(0, &SchedParams::new(LinuxPolicy::Fifo, p))?)),
        }
    }

    /// Block the calling thread for `d` (rounded up to whole ticks, never less).
    pub fn sleep(&self, d: Duration) -> Slept {
        let d_ns = d.as_nanos() as u64;
        let w = Arc::new(Waiter { thread: std::thread::current(), woken: AtomicBool::new(false) });
        let requested = {
            let mut g = self.inner.lock().unwrap();
            let t0 = self.t0_ns.load(Ordering::Acquire);
            let (delay, requested) = if t0 == 0 {
                (d_ns.div_ceil(self.tick_ns), None)
            } else {
                let target = clock::monotonic_ns() + d_ns;
                let deadline_tick = (target - t0).div_ceil(self.tick_ns);
                (deadline_tick.saturating_sub(g.queue.now()), Some(target))
            };
            g.queue.insert(delay, w.clone());
            g.registered += 1;
            self.registered_cv.notify_all();
            requested
        };
        while !w.woken.load(Ordering::Acquire) {
            std::thread::park();
        }
        let woke_ns = clock::monotonic_ns();
        let requested_ns = requested.unwrap_or_else(|| self.t0_ns.load(Ordering::Acquire) + d_ns);
        Slept { requested_ns, woke_ns }
    }

    /// Run the clock on the calling thread: wait until `expected` sleepers have asked, start
    /// the clock, and tick until every one of them has been woken.
    pub fn run_ticker(&self, expected: usize) -> anyhow::Result<TickerStats> {
        let _rt = self.rt_guard()?;
        {
            // Bounded: a sleeper that failed before asking (e.g. could not take its real-time
            // priority) would otherwise leave the ticker waiting for ever.
            let deadline = std::time::Instant::now() + REGISTER_TIMEOUT;
            let mut g = self.inner.lock().unwrap();
            while g.registered < expected {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                anyhow::ensure!(
                    !left.is_zero(),
                    "only {} of {expected} sleepers asked to sleep within {} s",
                    g.registered,
                    REGISTER_TIMEOUT.as_secs()
                );
                g = self.registered_cv.wait_timeout(g, left).unwrap().0;
            }
        }
        let cpu0 = clock::thread_cpu_ns();
        let t0 = clock::monotonic_ns();
        self.t0_ns.store(t0, Ordering::Release);
        let mut expired = Vec::new();
        let (mut late_max, mut late_sum) = (0u64, 0u64);
        let mut k = 0u64;
        let ops = loop {
            k += 1;
            let target = t0 + k * self.tick_ns;
            match self.mode {
                TickMode::Busy => clock::spin_until_ns(target),
                TickMode::Sleep => clock::sleep_until_ns(target)?,
            }
            let late = clock::monotonic_ns().saturating_sub(target);
            late_max = late_max.max(late);
            late_sum += late;
            let (done, ops) = {
                let mut g = self.inner.lock().unwrap();
                g.queue.tick(&mut expired);
                (g.queue.is_empty() && g.registered >= expected, g.queue.ops())
            };
            for w in expired.drain(..) {
                w.woken.store(true, Ordering::Release);
                w.thread.unpark();
            }
            if done {
                break ops;
            }
        };
        Ok(TickerStats {
            cpu_s: (clock::thread_cpu_ns() - cpu0) as f64 / 1e9,
            real_s: (clock::monotonic_ns() - t0) as f64 / 1e9,
            ops,
            tick_late_max_us: late_max as f64 / 1e3,
            tick_late_mean_us: late_sum as f64 / k as f64 / 1e3,
        })
    }
}

/// Run `times` sleepers on their own threads against a fresh service; returns the ticker's
/// numbers and each sleeper's observation (in `times` order).
pub fn run_sleepers(
    kind: Kind,
    tick: Duration,
    mode: TickMode,
    rt_priority: Option<i32>,
    times: &[Duration],
) -> anyhow::Result<(TickerStats, Vec<Slept>)> {
    if times.is_empty() {
        schedlab_os::bail_usage!("no sleepers: N must be at least 1");
    }
    if rt_priority.is_some() && mode != TickMode::Sleep {
        schedlab_os::bail_usage!(
            "a real-time priority needs the sleep tick mode (a real-time busy ticker would hold a CPU)"
        );
    }
    let svc = Arc::new(SleepService::new(kind, tick, mode, rt_priority));
    let mut threads = Vec::with_capacity(times.len());
    for (i, &d) in times.iter().enumerate() {
        let svc = svc.clone();
        let t = std::thread::Builder::new()
            .name(format!("sleeper-{i}"))
            .stack_size(64 * 1024)
            .spawn(move || -> anyhow::Result<Slept> {
                let _rt = svc.rt_guard()?;
                Ok(svc.sleep(d))
            })
            .map_err(|e| anyhow::anyhow!("spawning sleeper thread {i}: {e}"))?;
        threads.push(t);
    }
    let stats = svc.run_ticker(times.len())?;
    let slept = threads.into_iter().map(|t| t.join().expect("sleeper thread panicked")).collect::<Result<_, _>>()?;
    Ok((stats, slept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_queue_wakes_every_sleeper_never_early() {
        let times: Vec<Duration> = [3u64, 1, 7, 7, 12, 5].iter().map(|&ms| Duration::from_millis(ms)).collect();
        for kind in Kind::ALL {
            let (stats, slept) = run_sleepers(kind, Duration::from_millis(1), TickMode::Sleep, None, &times).unwrap();
            assert_eq!(slept.len(), times.len());
            assert_eq!(stats.ops.expired, times.len() as u64, "{kind}");
            assert_eq!(stats.ops.ticks, 12, "{kind}");
            for s in &slept {
                assert!(s.lateness_us() >= 0.0, "{kind} woke early: {:?}", s);
            }
        }
    }

    #[test]
    fn tick_modes_parse() {
        assert_eq!("busy".parse::<TickMode>().unwrap(), TickMode::Busy);
        assert!("lazy".parse::<TickMode>().unwrap_err().contains("'lazy'"));
    }
}

//! The task queues workers take tasks from.
//!
//! - [`QueueKind::MutexFifo`]: the seed's Figure 2 — one FCFS queue under a mutex; a worker
//!   enters the critical section, takes the head, leaves, then runs the task.
//! - [`QueueKind::Stealing`]: a global FIFO injector plus one FIFO deque per worker
//!   (crossbeam-deque); a worker refills its own deque from the injector in batches and steals
//!   from the others when both are empty. Order is still first-come-first-served at the
//!   injector; a batch moves several tasks per synchronisation instead of one.
//!
//! Both sit behind [`Queue`], which lets idle workers sleep on a condition variable without
//! missing a wake-up (a sleeper announces itself, then re-checks the queue; a producer pushes,
//! then looks for sleepers; a SeqCst fence on each side makes one of them see the other). No
//! shared counter is touched per task, so the stealing queue stays free of a contended line.

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Which queue the manager uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueKind {
    /// One FCFS queue under a mutex (seed 003, Figure 2).
    MutexFifo,
    /// Injector + per-worker deques with stealing (crossbeam-deque).
    Stealing,
}

impl fmt::Display for QueueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QueueKind::MutexFifo => "mutex-fifo",
            QueueKind::Stealing => "stealing",
        })
    }
}

impl FromStr for QueueKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mutex-fifo" | "mutex" | "fcfs" => Ok(QueueKind::MutexFifo),
            "stealing" | "deque" => Ok(QueueKind::Stealing),
            _ => Err(format!("unknown queue '{s}' (expected mutex-fifo or stealing)")),
        }
    }
}

enum Inner<T> {
    Mutex(Mutex<VecDeque<T>>),
    Stealing { injector: Box<Injector<T>>, stealers: Vec<Stealer<T>> },
}

/// The shared side of a queue.
pub struct Queue<T> {
    inner: Inner<T>,
    closed: AtomicBool,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// A deliberately broken mutex queue for negative controls: pushes to the front (LIFO).
    #[cfg(test)]
    push_front: bool,
}

/// A worker's own side of a queue (its deque, for the stealing queue).
pub struct Local<T>(Option<Worker<T>>);

/// How long a worker polls an empty queue before it sleeps (bounded busy-waiting): long enough
/// to bridge the gap between two submissions without a sleep/wake-up pair (two context switches).
const SPIN_BEFORE_SLEEP_NS: u64 = 1_000_000;
/// A sleeping worker re-checks at least this often. Wake-ups are not lost (see the module
/// comment), so this is only a safety net; short slices would add context switches while a
/// slow controller (a busy CPU 0) gets round to the next submission or the shutdown.
const SLEEP_SLICE: Duration = Duration::from_secs(1);

impl<T> Queue<T> {
    /// A queue for `workers` workers and each worker's local side.
    pub fn new(kind: QueueKind, workers: usize) -> (Self, Vec<Local<T>>) {
        let (inner, locals) = match kind {
            QueueKind::MutexFifo => {
                (Inner::Mutex(Mutex::new(VecDeque::new())), (0..workers).map(|_| Local(None)).collect())
            }
            QueueKind::Stealing => {
                let ws: Vec<Worker<T>> = (0..workers).map(|_| Worker::new_fifo()).collect();
                let stealers = ws.iter().map(Worker::stealer).collect();
                (
                    Inner::Stealing { injector: Box::new(Injector::new()), stealers },
                    ws.into_iter().map(|w| Local(Some(w))).collect(),
                )
            }
        };
        let q = Queue {
            inner,
            closed: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            #[cfg(test)]
            push_front: false,
        };
        (q, locals)
    }

    /// Append a task (FCFS) and wake a sleeping worker if there is one.
    pub fn push(&self, t: T) {
        match &self.inner {
            #[cfg(test)]
            Inner::Mutex(m) if self.push_front => m.lock().unwrap_or_else(|p| p.into_inner()).push_front(t),
            Inner::Mutex(m) => m.lock().unwrap_or_else(|p| p.into_inner()).push_back(t),
            Inner::Stealing { injector, .. } => injector.push(t),
        }
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            self.wake.notify_one();
        }
    }

    /// Take the next task without waiting.
    pub fn try_pop(&self, local: &Local<T>) -> Option<T> {
        let t = match (&self.inner, &local.0) {
            (Inner::Mutex(m), _) => m.lock().unwrap_or_else(|p| p.into_inner()).pop_front(),
            (Inner::Stealing { injector, stealers }, Some(w)) => w.pop().or_else(|| {
                std::iter::repeat_with(|| {
                    injector
                        .steal_batch_and_pop(w)
                        .or_else(|| stealers.iter().map(Stealer::steal).collect::<Steal<T>>())
                })
                .find(|s| !s.is_retry())
                .and_then(Steal::success)
            }),
            (Inner::Stealing { injector, .. }, None) => {
                std::iter::repeat_with(|| injector.steal()).find(|s| !s.is_retry()).and_then(Steal::success)
            }
        };
        t
    }

    /// Take the next task, spinning briefly and then sleeping while the queue is empty.
    /// `None` once the queue is closed and drained.
    pub fn pop(&self, local: &Local<T>) -> Option<T> {
        let mut spin_since: Option<u64> = None;
        let mut polls = 0u32;
        loop {
            if let Some(t) = self.try_pop(local) {
                return Some(t);
            }
            if self.closed.load(Ordering::SeqCst) && self.is_empty() {
                return None;
            }
            polls = polls.wrapping_add(1);
            let now = if polls & 63 == 0 { schedlab_os::clock::monotonic_ns() } else { 0 };
            let since = *spin_since.get_or_insert_with(schedlab_os::clock::monotonic_ns);
            if now == 0 || now.saturating_sub(since) < SPIN_BEFORE_SLEEP_NS {
                std::hint::spin_loop();
                continue;
            }
            let g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.is_empty() && !self.closed.load(Ordering::SeqCst) {
                let _ = self.wake.wait_timeout(g, SLEEP_SLICE);
            }
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            spin_since = None;
        }
    }

    /// No more tasks will come: workers finish what is queued and stop.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.wake.notify_all();
    }

    /// True when no task waits anywhere (the shared queue and every worker's deque).
    pub fn is_empty(&self) -> bool {
        match &self.inner {
            Inner::Mutex(m) => m.lock().unwrap_or_else(|p| p.into_inner()).is_empty(),
            Inner::Stealing { injector, stealers } => injector.is_empty() && stealers.iter().all(Stealer::is_empty),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// Push every item, then let the one worker take them all: the order it got them in.
    fn one_worker_order(q: Queue<u32>, locals: Vec<Local<u32>>, items: &[u32]) -> Vec<u32> {
        for &i in items {
            q.push(i);
        }
        let out: Vec<u32> = std::iter::from_fn(|| q.try_pop(&locals[0])).collect();
        assert!(q.is_empty());
        out
    }

    proptest! {
        /// With one worker both queues hand tasks out in arrival order (FCFS), like a VecDeque.
        #[test]
        fn single_worker_order_is_fcfs(items in proptest::collection::vec(0u32..1000, 0..200), stealing in any::<bool>()) {
            let kind = if stealing { QueueKind::Stealing } else { QueueKind::MutexFifo };
            let (q, locals) = Queue::new(kind, 1);
            prop_assert_eq!(one_worker_order(q, locals, &items), items);
        }
    }

    #[test]
    fn a_mutex_queue_that_pushes_to_the_front_breaks_fcfs() {
        // The negative control: the same check on a LIFO variant of the mutex queue fails. (A
        // LIFO deque in the stealing queue would not do: crossbeam's batch steal fills a LIFO
        // deque in reverse, so one worker still sees FCFS order.)
        let items: Vec<u32> = (0..50).collect();
        let (mut q, locals) = Queue::new(QueueKind::MutexFifo, 1);
        q.push_front = true;
        let out = one_worker_order(q, locals, &items);
        assert_ne!(out, items, "the FCFS check would not notice a LIFO queue");
        assert_eq!(out.iter().rev().copied().collect::<Vec<_>>(), items, "every task once, backwards");
    }

    #[test]
    fn many_workers_take_every_task_exactly_once() {
        for kind in [QueueKind::MutexFifo, QueueKind::Stealing] {
            let (q, locals) = Queue::new(kind, 3);
            let q = Arc::new(q);
            let handles: Vec<_> = locals
                .into_iter()
                .map(|l| {
                    let q = q.clone();
                    std::thread::spawn(move || {
                        let mut got = Vec::new();
                        while let Some(x) = q.pop(&l) {
                            got.push(x);
                        }
                        got
                    })
                })
                .collect();
            for i in 0..10_000u32 {
                q.push(i);
            }
            q.close();
            let mut all: Vec<u32> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
            all.sort_unstable();
            assert_eq!(all, (0..10_000).collect::<Vec<_>>(), "{kind}");
        }
    }

    #[test]
    fn closed_empty_queue_returns_none_without_waiting() {
        let (q, locals) = Queue::<u8>::new(QueueKind::MutexFifo, 1);
        q.close();
        assert_eq!(q.pop(&locals[0]), None);
    }

    #[test]
    fn names_parse() {
        assert_eq!("stealing".parse::<QueueKind>().unwrap(), QueueKind::Stealing);
        assert!("lifo".parse::<QueueKind>().unwrap_err().contains("lifo"));
    }
}

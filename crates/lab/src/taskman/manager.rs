//! The task manager of seed 003: N workers pinned one per core (the first core left to the
//! system), under SCHED_FIFO, with asynchronous signals blocked, taking tasks first-come
//! first-served from a queue; IRQs steered to the reserved core while it runs.
//!
//! Everything it changes is held by a guard: each worker's `AffinityGuard` and `SchedGuard`
//! (dropped before the thread exits, then checked), and the manager's `IrqSteering`
//! (journalled, restored on drop). A panic inside a task is caught, reported as that task's
//! result, and does not take the worker down.

use super::config::{ManagerConfig, Plan};
use super::queue::{Local, Queue};
use anyhow::{anyhow, Context, Result};
use schedlab_os::affinity::{get_affinity, AffinityGuard};
use schedlab_os::clock::monotonic_ns;
use schedlab_os::irq::{IrqSteering, Refusal, RestoreReport};
use schedlab_os::sched::{get_sched, SchedGuard, SchedParams};
use schedlab_os::signals;
use schedlab_os::topology::Topology;
use schedlab_os::usage::OrUsage;
use serde::Serialize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What a task sees of the worker running it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerInfo {
    pub index: usize,
    pub tid: i32,
    pub cpus: Vec<usize>,
}

type Job<R> = Box<dyn FnOnce(&WorkerInfo) -> R + Send + 'static>;

struct Task<R> {
    id: u64,
    queued_ns: u64,
    job: Job<R>,
}

/// How a task ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskResult<R> {
    Done(R),
    /// The task panicked; the message.
    Panicked(String),
    /// Dropped from the queue by [`Manager::cancel`] before it started.
    Cancelled,
}

/// One task's record: who ran it, where, when.
#[derive(Debug, Clone, Serialize)]
pub struct TaskOutcome<R> {
    pub id: u64,
    pub worker: usize,
    /// The CPU the task started on.
    pub cpu: i32,
    pub queued_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub result: TaskResult<R>,
}

/// One worker's record: what it was set to and whether it was put back.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerReport {
    pub index: usize,
    pub tid: i32,
    pub cpus: Vec<usize>,
    /// The scheduling the worker actually had while it ran (read back after setting it).
    pub applied: SchedParams,
    /// Policy and affinity read back after the guards were dropped equal the saved ones.
    pub restored: bool,
    pub tasks: usize,
}

/// What a finished manager hands back.
#[derive(Debug, Clone, Serialize)]
pub struct ManagerReport<R> {
    pub plan: Plan,
    pub workers: Vec<WorkerReport>,
    /// Every task, by id (submission order).
    pub tasks: Vec<TaskOutcome<R>>,
    pub irq_moved: Vec<u32>,
    pub irq_refused: Vec<Refusal>,
    pub irq_restore: RestoreReport,
}

struct Shared<R> {
    queue: Queue<Task<R>>,
    // Each counter on its own cache line: the producer writes `submitted`, workers write
    // `finished`; neither should bounce the other's line on every task.
    submitted: Padded<AtomicU64>,
    finished: Padded<AtomicU64>,
    cancelled: AtomicBool,
    /// Threads inside [`Manager::wait`]; workers only signal when someone waits (a condvar
    /// notify is a system call even with no waiter).
    waiting: AtomicU64,
    done_lock: Mutex<()>,
    done: Condvar,
}

type WorkerResult<R> = (WorkerReport, Vec<TaskOutcome<R>>);

/// A running task manager. Drop it (or call [`Manager::shutdown`]) to stop and restore.
pub struct Manager<R: Send + 'static> {
    shared: Arc<Shared<R>>,
    handles: Vec<JoinHandle<WorkerResult<R>>>,
    irq: Option<IrqSteering>,
    plan: Plan,
    /// The worker CPUs, locked against other schedlab runs for the manager's life.
    _cpus: schedlab_os::cpulock::CpuLock,
}

impl<R: Send + 'static> Manager<R> {
    /// Read the topology, check `cfg` against it, then start.
    pub fn start(cfg: &ManagerConfig) -> Result<Self> {
        let topo = Topology::read()?;
        Self::start_on(cfg, &topo)
    }

    /// Check `cfg` against `topo` (nothing changes if it is rejected), then start the workers.
    pub fn start_on(cfg: &ManagerConfig, topo: &Topology) -> Result<Self> {
        let plan = cfg.plan(topo).or_usage()?;
        if plan.policy.is_realtime() {
            // A runaway SCHED_FIFO worker must never own its CPU completely.
            schedlab_os::sched::require_rt_throttling()?;
        }
        // Real-time workers own their CPUs: another run there would halve both (the queue
        // benchmark's SCHED_OTHER workers share like any program and lock nothing).
        let mut worker_cpus: Vec<usize> = plan.worker_affinity.iter().flatten().copied().collect();
        worker_cpus.sort_unstable();
        worker_cpus.dedup();
        let locked = if plan.policy.is_realtime() { &worker_cpus[..] } else { &[] };
        let cpus = schedlab_os::cpulock::CpuLock::acquire(locked, "the task manager's workers")?;
        let irq = if cfg.steer_irqs {
            Some(IrqSteering::steer_with_dir(&plan.reserved, &cfg.irq_state_dir).context("steering IRQs")?)
        } else {
            None
        };
        let n = plan.worker_affinity.len();
        let (queue, locals) = Queue::new(cfg.queue, n);
        let shared = Arc::new(Shared {
            queue,
            submitted: Padded(AtomicU64::new(0)),
            finished: Padded(AtomicU64::new(0)),
            cancelled: AtomicBool::new(false),
            waiting: AtomicU64::new(0),
            done_lock: Mutex::new(()),
            done: Condvar::new(),
        });
        let params = SchedParams::new(plan.policy, plan.priority);
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let mut mgr = Manager { shared: shared.clone(), handles: Vec::new(), irq, plan: plan.clone(), _cpus: cpus };
        for (index, (cpus, local)) in plan.worker_affinity.iter().cloned().zip(locals).enumerate() {
            let shared = shared.clone();
            let tx = ready_tx.clone();
            let h = std::thread::Builder::new()
                .name(format!("taskman-w{index}"))
                .spawn(move || worker_main(index, cpus, params, local, shared, tx))
                .context("spawning a worker thread")?;
            mgr.handles.push(h);
        }
        drop(ready_tx);
        for _ in 0..n {
            match recv_spinning(&ready_rx, Duration::from_secs(10)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    mgr.stop_workers();
                    return Err(anyhow!("a worker could not be set up: {e}"));
                }
                Err(_) => {
                    mgr.stop_workers();
                    return Err(anyhow!("a worker did not start within 10 s"));
                }
            }
        }
        Ok(mgr)
    }

    /// Where the workers run and under what policy.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// IRQs the kernel refused to move (empty without steering).
    pub fn irq_refused(&self) -> Vec<Refusal> {
        self.irq.as_ref().map(|s| s.refused().to_vec()).unwrap_or_default()
    }

    /// Queue a task (FCFS); returns its id.
    pub fn submit(&self, job: impl FnOnce(&WorkerInfo) -> R + Send + 'static) -> u64 {
        let id = self.shared.submitted.0.fetch_add(1, Ordering::SeqCst);
        self.shared.queue.push(Task { id, queued_ns: monotonic_ns(), job: Box::new(job) });
        id
    }

    /// Tasks finished (run, panicked or cancelled) so far.
    pub fn finished(&self) -> u64 {
        self.shared.finished.0.load(Ordering::SeqCst)
    }

    /// Block until every submitted task has finished, or `timeout` passes (returns false then).
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        let mut g = self.shared.done_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.shared.waiting.fetch_add(1, Ordering::SeqCst);
        let _leave = Leave(&self.shared.waiting);
        loop {
            if self.finished() >= self.shared.submitted.0.load(Ordering::SeqCst) {
                return true;
            }
            // Workers notify under the lock after counting, so no wake-up is lost; the long
            // slice without a deadline only guards against the unforeseen.
            let slice = match deadline {
                Some(d) => match d.checked_duration_since(std::time::Instant::now()) {
                    Some(left) => left,
                    None => return false,
                },
                None => Duration::from_secs(1),
            };
            g = self.shared.done.wait_timeout(g, slice).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Tasks not yet started are skipped (reported as cancelled); running ones finish.
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::SeqCst);
    }

    /// Stop the workers, restore IRQ masks, and hand back every record.
    pub fn shutdown(mut self) -> Result<ManagerReport<R>> {
        let joined = self.stop_workers();
        let irq_moved = self.irq.as_ref().map(|s| s.moved()).unwrap_or_default();
        let irq_refused = self.irq_refused();
        let irq_restore = self.irq.as_mut().map(|s| s.restore()).unwrap_or_default();
        self.irq = None;
        let mut workers = Vec::new();
        let mut tasks = Vec::new();
        for j in joined {
            let (w, t) = j?;
            workers.push(w);
            tasks.extend(t);
        }
        tasks.sort_by_key(|t| t.id);
        Ok(ManagerReport { plan: self.plan.clone(), workers, tasks, irq_moved, irq_refused, irq_restore })
    }

    fn stop_workers(&mut self) -> Vec<Result<WorkerResult<R>>> {
        self.shared.queue.close();
        // Workers leave within microseconds of the close; spinning that long spares the
        // controller a sleep in join (a context switch counted against the manager).
        let n = self.handles.len();
        let t0 = monotonic_ns();
        while (self.handles.iter().filter(|h| h.is_finished()).count() < n) && monotonic_ns() - t0 < SPIN_NS {
            std::hint::spin_loop();
        }
        std::mem::take(&mut self.handles)
            .into_iter()
            .map(|h| h.join().map_err(|_| anyhow!("a worker thread panicked outside a task")))
            .collect()
    }
}

/// Keeps a value on its own cache line(s) (128 bytes: adjacent-line prefetch pairs lines).
#[repr(align(128))]
struct Padded<T>(T);

/// How long the controlling thread polls before it blocks on a worker hand-shake.
const SPIN_NS: u64 = 300_000;

/// Receive a worker's hand-shake, polling for [`SPIN_NS`] before blocking (see `stop_workers`).
fn recv_spinning<T>(rx: &mpsc::Receiver<T>, limit: Duration) -> Result<T, mpsc::RecvTimeoutError> {
    let t0 = monotonic_ns();
    while monotonic_ns() - t0 < SPIN_NS {
        match rx.try_recv() {
            Ok(v) => return Ok(v),
            Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvTimeoutError::Disconnected),
            Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
        }
    }
    rx.recv_timeout(limit)
}

/// Leaves the waiting count on every return path of [`Manager::wait`].
struct Leave<'a>(&'a AtomicU64);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<R: Send + 'static> Drop for Manager<R> {
    fn drop(&mut self) {
        // Error and unwinding paths: skip what is queued, join workers (their guards restore
        // them), then the IRQ guard restores the masks as the field drops.
        self.cancel();
        let _ = self.stop_workers();
    }
}

fn worker_main<R: Send + 'static>(
    index: usize,
    cpus: Vec<usize>,
    params: SchedParams,
    local: Local<Task<R>>,
    shared: Arc<Shared<R>>,
    ready: mpsc::Sender<Result<(), String>>,
) -> WorkerResult<R> {
    let tid = signals::thread_id();
    let mut report = WorkerReport { index, tid, cpus: cpus.clone(), applied: params, restored: false, tasks: 0 };
    let mut outcomes = Vec::new();
    let before = (get_sched(0).ok(), get_affinity(0).ok());
    {
        // Pin first, then raise the policy, so an RT worker never runs outside its CPUs.
        let setup = || -> Result<(AffinityGuard, SchedGuard), String> {
            signals::block_async_signals().map_err(|e| e.to_string())?;
            let a = AffinityGuard::pin(0, &cpus).map_err(|e| e.to_string())?;
            let s = SchedGuard::apply(0, &params).map_err(|e| e.to_string())?;
            Ok((a, s))
        };
        let guards = match setup() {
            Ok(g) => g,
            Err(e) => {
                let _ = ready.send(Err(e));
                return (report, outcomes);
            }
        };
        report.applied = get_sched(0).unwrap_or(params);
        let _ = ready.send(Ok(()));
        drop(ready);
        let info = WorkerInfo { index, tid, cpus };
        while let Some(task) = shared.queue.pop(&local) {
            let start_ns = monotonic_ns();
            let cpu = schedlab_os::topology::current_cpu().map_or(-1, |c| c as i32);
            let result = if shared.cancelled.load(Ordering::SeqCst) {
                TaskResult::Cancelled
            } else {
                let job = task.job;
                match catch_unwind(AssertUnwindSafe(|| job(&info))) {
                    Ok(r) => TaskResult::Done(r),
                    Err(p) => TaskResult::Panicked(panic_message(p.as_ref())),
                }
            };
            outcomes.push(TaskOutcome {
                id: task.id,
                worker: index,
                cpu,
                queued_ns: task.queued_ns,
                start_ns,
                end_ns: monotonic_ns(),
                result,
            });
            report.tasks += 1;
            let done = shared.finished.0.fetch_add(1, Ordering::SeqCst) + 1;
            // `waiting` is read-mostly; only look at the producer's counter when someone waits.
            if shared.waiting.load(Ordering::SeqCst) > 0 && done >= shared.submitted.0.load(Ordering::SeqCst) {
                let _g = shared.done_lock.lock().unwrap_or_else(|p| p.into_inner());
                shared.done.notify_all();
            }
        }
        // Guards drop here: policy first (declared last), then affinity.
        let (aff, sched) = guards;
        drop(sched);
        drop(aff);
    }
    report.restored = (get_sched(0).ok(), get_affinity(0).ok()) == before;
    (report, outcomes)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::taskman::queue::QueueKind;
    use schedlab_os::sched::LinuxPolicy;

    /// The topology a manager test runs on. The manager pins workers outside the first core;
    /// where the machine's CPUs are all threads of that core, the test shares it (it checks
    /// behaviour, not speed) rather than leave the test unrun. Only a one-CPU machine goes to
    /// the gate.
    pub(crate) fn worker_topology(test: &str) -> Option<Topology> {
        let topo = Topology::read().unwrap();
        if !topo.worker_cpus().is_empty() {
            return Some(topo);
        }
        let why = "it needs a second CPU: the manager reserves the first";
        if !schedlab_os::test_gate::require(test, topo.cpus.len() > 1, why) {
            return None;
        }
        eprintln!("{test}: every CPU is a thread of the first core; the worker shares that core");
        Some(topo.threads_as_cores())
    }

    fn other_cfg(queue: QueueKind) -> ManagerConfig {
        // SCHED_OTHER and no IRQ steering: runs anywhere, root or not.
        ManagerConfig { policy: LinuxPolicy::Other, steer_irqs: false, queue, ..Default::default() }
    }

    #[test]
    fn runs_tasks_collects_results_and_survives_a_panic() {
        let Some(topo) = worker_topology("the manager's task test") else { return };
        for q in [QueueKind::MutexFifo, QueueKind::Stealing] {
            let before = (get_sched(0).unwrap(), get_affinity(0).unwrap());
            let m = Manager::start_on(&other_cfg(q), &topo).unwrap();
            for i in 0..50u64 {
                m.submit(move |_| i * 2);
            }
            m.submit(|_| -> u64 { panic!("task exploded") });
            m.submit(|w| w.cpus[0] as u64 + 1000);
            assert!(m.wait(Some(Duration::from_secs(10))));
            let r = m.shutdown().unwrap();
            assert_eq!(r.tasks.len(), 52);
            assert!(matches!(r.tasks[7].result, TaskResult::Done(14)));
            assert!(matches!(&r.tasks[50].result, TaskResult::Panicked(m) if m.contains("exploded")));
            // The worker is pinned outside the reserved core.
            let TaskResult::Done(cpu) = r.tasks[51].result else { panic!("task 51 did not run") };
            assert!(!topo.reserved_core().contains(&((cpu - 1000) as usize)));
            assert!(r.workers.iter().all(|w| w.restored), "{:?}", r.workers);
            assert_eq!((get_sched(0).unwrap(), get_affinity(0).unwrap()), before, "the caller is untouched");
        }
    }

    #[test]
    fn rejected_config_changes_nothing() {
        let topo = Topology::read().unwrap();
        let cfg = ManagerConfig { workers: Some(topo.cpus.len() + 1), ..Default::default() };
        let before = schedlab_os::irq::snapshot().unwrap();
        let e = Manager::<()>::start_on(&cfg, &topo).err().unwrap().to_string();
        assert!(e.contains("--workers"), "{e}");
        assert_eq!(schedlab_os::irq::snapshot().unwrap(), before);
    }

    #[test]
    fn signals_are_blocked_in_workers() {
        let Some(topo) = worker_topology("the manager's signal-mask test") else { return };
        let m = Manager::start_on(&other_cfg(QueueKind::MutexFifo), &topo).unwrap();
        m.submit(|_| schedlab_os::procfs::signal_masks(None).unwrap().blocked);
        m.wait(None);
        let r = m.shutdown().unwrap();
        let TaskResult::Done(mask) = r.tasks[0].result else { panic!() };
        use schedlab_os::process::Signal;
        let bit = |sig: Signal| 1u64 << (sig as i32 - 1);
        assert_ne!(mask & bit(Signal::SIGINT), 0, "SIGINT blocked");
        assert_ne!(mask & bit(Signal::SIGTERM), 0, "SIGTERM blocked");
        assert_eq!(mask & bit(Signal::SIGSEGV), 0, "SIGSEGV stays deliverable");
    }
}

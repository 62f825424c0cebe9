//! A policy wrapper that checks the host keeps the call protocol of `schedlab_sim::policy`: a
//! task is enqueued only when it is neither queued nor picked; only queued tasks are picked,
//! re-queued or asked to pre-empt; every pick is charged exactly once before the task is queued
//! again, blocks or exits; only a just-charged task blocks; a running task's priority change
//! goes to `prio_changed`; `preempt_current` is asked only of running tasks. Violations are
//! collected (shared by every instance of a run, so per-CPU queues can be checked together).

use schedlab_sim::{EnqueueReason, Pick, Policy, TaskView};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, PartialEq, Debug)]
enum State {
    Queued,
    Picked,
}

/// Wraps one policy instance; `violations` is shared with the test.
pub struct Checked {
    inner: Box<dyn Policy>,
    state: HashMap<usize, State>,
    violations: Arc<Mutex<Vec<String>>>,
}

impl Checked {
    pub fn new(inner: Box<dyn Policy>, violations: Arc<Mutex<Vec<String>>>) -> Self {
        Checked { inner, state: HashMap::new(), violations }
    }

    fn expect(&self, task: usize, want: Option<State>, call: &str) {
        let got = self.state.get(&task).copied();
        if got != want {
            self.violations.lock().unwrap().push(format!("{call}({task}) with the task {got:?}, expected {want:?}"));
        }
    }

    /// What is still queued or picked-but-uncharged (should be nothing once every task is done).
    pub fn leftovers(&self) -> Vec<(usize, String)> {
        self.state.iter().map(|(&t, s)| (t, format!("{s:?}"))).collect()
    }
}

impl Policy for Checked {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: u64) {
        self.expect(task.id, None, &format!("enqueue[{why:?}]"));
        self.state.insert(task.id, State::Queued);
        self.inner.enqueue(task, why, now);
    }

    fn dequeue(&mut self, task: usize) {
        // Unknown and running tasks are allowed (and ignored) by the protocol.
        if self.state.get(&task) == Some(&State::Queued) {
            self.state.remove(&task);
        }
        self.inner.dequeue(task);
    }

    fn pick_next(&mut self, cpu: usize, now: u64) -> Option<Pick> {
        let pick = self.inner.pick_next(cpu, now)?;
        self.expect(pick.task, Some(State::Queued), "pick_next");
        self.state.insert(pick.task, State::Picked);
        Some(pick)
    }

    fn charge(&mut self, task: usize, ran: u64, now: u64) {
        self.expect(task, Some(State::Picked), "charge");
        self.state.remove(&task);
        self.inner.charge(task, ran, now);
    }

    fn preempts(&self, woken: usize, running: usize, now: u64) -> bool {
        self.expect(woken, Some(State::Queued), "preempts(woken)");
        self.expect(running, Some(State::Picked), "preempts(running)");
        self.inner.preempts(woken, running, now)
    }

    fn task_exit(&mut self, task: usize) {
        self.expect(task, None, "task_exit");
        self.inner.task_exit(task);
    }

    fn queued(&self) -> usize {
        self.inner.queued()
    }

    fn lock_rank(&self, task: &TaskView) -> i64 {
        self.inner.lock_rank(task)
    }

    fn prio_changed(&mut self, task: &TaskView, now: u64) {
        self.expect(task.id, Some(State::Picked), "prio_changed");
        self.inner.prio_changed(task, now);
    }

    fn requeue(&mut self, task: &TaskView, now: u64) {
        self.expect(task.id, Some(State::Queued), "requeue");
        self.inner.requeue(task, now);
    }

    fn blocked(&mut self, task: usize, now: u64) {
        // Only a task just charged (neither queued nor picked) can block.
        self.expect(task, None, "blocked");
        self.inner.blocked(task, now);
    }

    fn set_tick(&mut self, tick: Option<u64>) {
        self.inner.set_tick(tick);
    }

    fn tick_driven(&self) -> bool {
        self.inner.tick_driven()
    }

    fn next_timer(&self) -> Option<u64> {
        self.inner.next_timer()
    }

    fn timer(&mut self, now: u64) {
        self.inner.timer(now);
    }

    fn preempt_current(&mut self, running: usize, now: u64) -> bool {
        self.expect(running, Some(State::Picked), "preempt_current");
        self.inner.preempt_current(running, now)
    }

    fn throttled(&self, task: usize) -> bool {
        self.inner.throttled(task)
    }

    fn set_cpus(&mut self, cpus: usize) {
        self.inner.set_cpus(cpus);
    }

    fn placed_on(&self, task: usize) -> Option<usize> {
        self.inner.placed_on(task)
    }

    fn work_conserving(&self) -> bool {
        self.inner.work_conserving()
    }
}

//! Named locks held during CPU bursts, and priority inheritance: a task blocks when a lock its
//! burst needs is held; the holder runs with the best priority among the tasks waiting on the
//! locks it holds (transitively, as in FreeBSD and Solaris turnstiles); a released lock goes to
//! its best waiter.

use super::event_loop::Engine;
use super::state::Phase;
use super::Blocked;
use crate::policy::{EnqueueReason, Policy, TaskId};
use crate::workload::TaskSpec;
use std::collections::HashMap;

struct Lock {
    name: String,
    holder: Option<TaskId>,
    waiters: Vec<TaskId>,
}

/// Every lock of a run, which CPU bursts need which lock, and what each task holds. Locks are
/// registered as the tasks that use them arrive, so a run without locks never builds this.
pub(super) struct Locks {
    locks: Vec<Lock>,
    ids: HashMap<String, usize>,
    /// Per task: (CPU burst index, lock index) needed.
    needs: Vec<Vec<(usize, usize)>>,
    held: Vec<Vec<usize>>,
}

impl Locks {
    /// Tables for `tasks` tasks, no lock known yet.
    pub fn new(tasks: usize) -> Self {
        Locks { locks: Vec::new(), ids: HashMap::new(), needs: vec![Vec::new(); tasks], held: vec![Vec::new(); tasks] }
    }

    /// Note the locks task `t` needs (once, when it arrives).
    pub fn register(&mut self, t: TaskId, spec: &TaskSpec) {
        if !self.needs[t].is_empty() {
            return;
        }
        for l in &spec.locks {
            let idx = match self.ids.get(l.name.as_str()) {
                Some(&i) => i,
                None => {
                    self.locks.push(Lock { name: l.name.clone(), holder: None, waiters: vec![] });
                    self.ids.insert(l.name.clone(), self.locks.len() - 1);
                    self.locks.len() - 1
                }
            };
            self.needs[t].push((l.burst, idx));
        }
    }
}

impl<P: Policy + ?Sized> Engine<'_, '_, P> {
    fn lk(&mut self) -> &mut Locks {
        self.locks.as_mut().expect("the run has locks")
    }

    /// Take every lock the just-picked task's current CPU burst needs; false = it blocked on
    /// one, and was charged 0 (the policy may count a picked task as running).
    pub(super) fn acquire_locks(&mut self, t: TaskId) -> bool {
        let cpu_burst = self.tasks[t].burst_idx as usize / 2;
        let now = self.now;
        for k in 0..self.lk().needs[t].len() {
            let lk = self.lk();
            let (b, l) = lk.needs[t][k];
            if b != cpu_burst || lk.locks[l].holder == Some(t) {
                continue;
            }
            match lk.locks[l].holder {
                None => {
                    lk.locks[l].holder = Some(t);
                    lk.held[t].push(l);
                }
                Some(h) => {
                    lk.locks[l].waiters.push(t);
                    let ts = &mut self.tasks[t];
                    ts.waiting += now - ts.since;
                    ts.phase = Phase::LockWait;
                    ts.since = now;
                    let q = ts.queue as usize;
                    self.queues[q].charge(t, 0, now);
                    self.queues[q].blocked(t, now);
                    if self.cfg.priority_inheritance {
                        self.refresh_priority(h, 0);
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Release the locks held for the burst that just ended; hand each to its best waiter.
    pub(super) fn release_locks(&mut self, t: TaskId) {
        if self.lk().held[t].is_empty() {
            return;
        }
        let held = std::mem::take(&mut self.lk().held[t]);
        for l in held {
            let lk = self.locks.as_ref().expect("the run has locks");
            // Best = the policy's lowest lock rank, first come among equals.
            let best = lk.locks[l].waiters.iter().enumerate().min_by_key(|&(i, &w)| (self.lock_rank(w), i));
            let Some((pos, _)) = best else {
                self.lk().locks[l].holder = None;
                continue;
            };
            let lk = self.locks.as_mut().expect("the run has locks");
            let next = lk.locks[l].waiters.remove(pos);
            lk.locks[l].holder = Some(next);
            lk.held[next].push(l);
            if self.cfg.record_slices {
                let what = format!("lock:{}", lk.locks[l].name);
                self.blocked.push(Blocked { task: next, start: self.tasks[next].since, end: self.now, what });
            }
            self.make_ready(next, EnqueueReason::Woken);
            if self.cfg.priority_inheritance {
                self.refresh_priority(next, 0);
            }
        }
        if self.cfg.priority_inheritance {
            self.refresh_priority(t, 0);
        }
    }

    /// Where `t` stands among the waiters of a lock (see [`Policy::lock_rank`]).
    fn lock_rank(&self, t: TaskId) -> i64 {
        self.queues[self.tasks[t].queue as usize].lock_rank(&self.view(t))
    }

    /// Effective priority = best of own base and every waiter of every lock held (transitive).
    fn refresh_priority(&mut self, t: TaskId, depth: usize) {
        let mut p = self.w.tasks[t].priority;
        let lk = self.locks.as_ref().expect("the run has locks");
        for &l in &lk.held[t] {
            for &w in &lk.locks[l].waiters {
                p = p.min(self.tasks[w].priority);
            }
        }
        let old = self.tasks[t].priority;
        if p == old {
            return;
        }
        self.tasks[t].priority = p;
        let now = self.now;
        match self.tasks[t].phase {
            Phase::Ready => {
                // Same run queue; not a wake-up. Raised, it may displace a running task (as
                // Linux's `prio_changed` does).
                let q = self.tasks[t].queue as usize;
                let view = self.view(t);
                self.queues[q].requeue(&view, now);
                if p < old {
                    self.preempt_for(t);
                }
            }
            Phase::Running => {
                let q = self.tasks[t].queue as usize;
                let view = self.view(t);
                self.queues[q].prio_changed(&view, now);
            }
            Phase::LockWait if depth < 16 => {
                // Pass the boost along the chain of holders.
                let lk = self.locks.as_ref().expect("the run has locks");
                if let Some(l) = lk.locks.iter().position(|x| x.waiters.contains(&t)) {
                    if let Some(h) = lk.locks[l].holder {
                        self.refresh_priority(h, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}

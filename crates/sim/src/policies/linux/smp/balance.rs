//! The fair class's load balancing (kernel/sched/fair.c of Linux 6.18) for CPUs sharing one
//! cache: one domain whose groups are single CPUs, `imbalance_pct` 117, `busy_factor` 16,
//! intervals of `min_interval` = CPUs ms to twice that, `cache_nice_tries` 1.
//!
//! - When: at a busy CPU's tick once its `next_balance` is due (`sched_balance_trigger()`;
//!   its interval ×16 while busy), in the softirq a moment after the tick (`softirq_lag`), by
//!   when a CPU whose slice the tick ended has picked its next task; when a CPU is about to go
//!   idle and some CPU has two tasks or more (`sched_balance_newidle()`: one task at most, this
//!   kernel being preemptible; as often as its recent successes say, NI_RANDOM,
//!   [`super::newidle`]); and for an idle CPU, kicked from a busy CPU's tick when that CPU has
//!   two tasks or more (`nohz_balancer_kick()`, at most once a tick).
//! - What (`sched_balance_rq()`): per CPU its load, utilisation and runnable averages (PELT),
//!   task counts and the capacity RT/DL leave; each classified (has spare, fully busy, misfit,
//!   overloaded, `group_classify()`); the busiest other CPU; the kind and size of the imbalance
//!   (`calculate_imbalance()`: tasks to even the counts when the local CPU has spare capacity,
//!   load to even the average loads when both are busy, a misfit task); whether the busiest CPU
//!   has a task worth taking (`sched_balance_find_src_rq()`: when not, the domain counts as
//!   balanced, not as a failure); then
//!   `detach_tasks()` from the least recently run end of the busiest CPU's list, passing over tasks
//!   that are running, not allowed here, cache-hot (ran less than 0.5 ms ago, unless balancing
//!   failed twice) or ineligible on their queue while this one has tasks (unless it failed),
//!   and for load, tasks heavier than the imbalance (halved per failure). A blocked task still
//!   queued (a delayed dequeue) is taken only for load, and stays delayed on its new CPU: it is
//!   woken there.
//! - Failures count; after three more than `cache_nice_tries`, or for a misfit or a CPU whose
//!   capacity RT tasks take, the running task is moved (active balance: the stopper pre-empts it).
//!
//! CPU utilisation includes the runnable tasks' `util_est` ([`super::util_est`]), as
//! `cpu_util_cfs()` does. Not modelled: the cost limits of newidle balancing (`avg_idle` against
//! `max_newidle_lb_cost`), task groups.

use super::super::{Class, Linux};
use super::select::IMBALANCE_PCT;
use crate::policy::{CpuId, Dur, TaskId, Time};

/// `sysctl_sched_migration_cost`: a task that ran this recently is cache-hot.
const MIGRATION_COST: Dur = 500_000;
/// `sd->busy_factor`.
const BUSY_FACTOR: u64 = 16;
/// `sd->cache_nice_tries`.
const CACHE_NICE_TRIES: u32 = 1;
/// `max_load_balance_interval` (jiffies) on a small machine.
const MAX_INTERVAL_JIFFIES: u64 = 50;

/// `enum cpu_idle_type`: the balancing CPU is busy, idle, or about to go idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CpuState {
    Busy,
    Idle,
    GoingIdle,
}

/// `enum group_type`, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum GroupType {
    HasSpare,
    FullyBusy,
    Misfit,
    Overloaded,
}

/// `enum migration_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Migration {
    Load,
    Task,
    Misfit,
}

/// `struct sg_lb_stats` of a one-CPU group.
#[derive(Debug, Clone, Copy)]
struct Stats {
    cpu: CpuId,
    load: u64,
    nr: usize,
    h_nr: usize,
    cap: u64,
    idle: bool,
    kind: GroupType,
    avg_load: u64,
    misfit_load: u64,
}

/// `check_cpu_capacity()`: RT/DL/IRQ take a noticeable part of it.
fn reduced(cap: u64) -> bool {
    cap * IMBALANCE_PCT < 1024 * 100
}

/// `group_classify()` of a one-CPU group with `nr` tasks (`rq->nr_running`), its utilisation,
/// runnable average and capacity, and whether it has a misfit task.
pub(super) fn classify(nr: usize, util: u64, runnable: u64, cap: u64, misfit: bool) -> GroupType {
    let has_capacity = if nr < 1 {
        true
    } else if cap * IMBALANCE_PCT < runnable * 100 {
        false
    } else {
        cap * 100 > util * IMBALANCE_PCT
    };
    if nr > 1 && (cap * 100 < util * IMBALANCE_PCT || cap * IMBALANCE_PCT < runnable * 100) {
        GroupType::Overloaded
    } else if misfit {
        GroupType::Misfit
    } else if !has_capacity {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

impl Linux {
    fn stats(&self, c: CpuId, dst: CpuId, idle: CpuState, now: Time) -> Stats {
        let smp = self.smp.as_ref().expect("smp");
        let (load, util, runnable) = smp.cpu_signals(c, now);
        let rq = &self.rqs[c];
        let (nr, h_nr, cap) = (rq.nr_running(), rq.fair_runnable(), smp.capacity(c, now));
        let misfit_load = if c != dst && idle != CpuState::Busy && h_nr == 1 && reduced(cap) { load.max(1) } else { 0 };
        let kind = classify(nr, util, runnable, cap, misfit_load > 0);
        let avg_load = if kind == GroupType::Overloaded { load * 1024 / cap } else { 0 };
        Stats { cpu: c, load, nr, h_nr, cap, idle: rq.is_idle(), kind, avg_load, misfit_load }
    }

    /// `update_sd_pick_busiest()`.
    fn busier(s: &Stats, than: Option<&Stats>) -> bool {
        if s.h_nr == 0 {
            return false;
        }
        let Some(b) = than else { return true };
        if s.kind != b.kind {
            return s.kind > b.kind;
        }
        match s.kind {
            GroupType::Overloaded | GroupType::FullyBusy => s.avg_load > b.avg_load,
            GroupType::Misfit => s.misfit_load >= b.misfit_load,
            GroupType::HasSpare => {
                let (si, bi) = (usize::from(s.idle), usize::from(b.idle));
                si < bi || (si == bi && s.nr > b.nr)
            }
        }
    }

    /// `sched_balance_find_src_group()` + `calculate_imbalance()`: the busiest CPU, what to
    /// move and how much.
    fn find_imbalance(&self, dst: CpuId, idle: CpuState, now: Time) -> Option<(Stats, Stats, Migration, i64)> {
        let all: Vec<Stats> = (0..self.rqs.len()).map(|c| self.stats(c, dst, idle, now)).collect();
        let local = all[dst];
        let mut busiest: Option<Stats> = None;
        for s in all.iter().filter(|s| s.cpu != dst) {
            if Self::busier(s, busiest.as_ref()) {
                busiest = Some(*s);
            }
        }
        let busiest = busiest?;
        let total_load: u64 = all.iter().map(|s| s.load).sum();
        let total_cap: u64 = all.iter().map(|s| s.cap).sum();
        let sds_avg = total_load * 1024 / total_cap.max(1);
        if busiest.kind == GroupType::Misfit {
            return Some((local, busiest, Migration::Misfit, busiest.misfit_load as i64));
        }
        if local.kind > busiest.kind {
            return None;
        }
        if local.kind == GroupType::Overloaded {
            let local_avg = local.load * 1024 / local.cap;
            if local_avg >= busiest.avg_load
                || local_avg >= sds_avg
                || 100 * busiest.avg_load <= IMBALANCE_PCT * local_avg
            {
                return None;
            }
        }
        if busiest.kind != GroupType::Overloaded && (idle == CpuState::Busy || busiest.h_nr == 1) {
            return None;
        }
        if local.kind == GroupType::HasSpare {
            // sibling_imbalance(): even the task counts (only a CPU with nothing to do pulls);
            // sched_balance_find_src_rq() wants a runnable fair task to take.
            let n = if idle == CpuState::Busy { 0 } else { busiest.nr.saturating_sub(local.nr) };
            let n = (n >> 1) as i64;
            return (n > 0 && busiest.h_nr > 0).then_some((local, busiest, Migration::Task, n));
        }
        let local_avg = local.load * 1024 / local.cap;
        if local.kind < GroupType::Overloaded && (local_avg >= busiest.avg_load || local_avg >= sds_avg) {
            return None;
        }
        let a = busiest.avg_load.saturating_sub(sds_avg) as i128 * busiest.cap as i128;
        let b = sds_avg.saturating_sub(local_avg) as i128 * local.cap as i128;
        let imbalance = (a.min(b) / 1024) as i64;
        if imbalance <= 0 || !Self::source_rq(&busiest, imbalance) {
            return None;
        }
        Some((local, busiest, Migration::Load, imbalance))
    }

    /// `sched_balance_find_src_rq()` for load, on a one-CPU group: the busiest CPU is passed over
    /// (and the domain is balanced) when it has no runnable fair task, or one whose CPU load
    /// exceeds the imbalance on a CPU RT/DL leave whole — moving it would only move the
    /// imbalance. A delayed entity keeps a CPU overloaded (`nr_running`) but is not runnable.
    fn source_rq(busiest: &Stats, imbalance: i64) -> bool {
        busiest.h_nr > 1 || (busiest.h_nr == 1 && (busiest.load as i64 <= imbalance || reduced(busiest.cap)))
    }

    /// `can_migrate_task()`. A delayed task moves only for load (Linux 6.14+: it adds to the
    /// load but not to the runnable tasks).
    fn can_migrate(&self, t: TaskId, src: CpuId, dst: CpuId, kind: Migration, now: Time) -> bool {
        let smp = self.smp.as_ref().expect("smp");
        let rq = &self.rqs[src];
        let failed = smp.cpus[dst].nr_balance_failed;
        let delayed = rq.fair.is_delayed(t);
        if (delayed && kind != Migration::Load)
            || !(delayed || rq.fair.is_waiting(t))
            || rq.curr.is_some_and(|(c, _)| c == t)
        {
            return false;
        }
        if failed == 0
            && self.params.fair.place_lag
            && self.rqs[dst].fair.nr_queued() > 0
            && !rq.fair.entity_eligible(t)
        {
            return false;
        }
        if !smp.tasks.get_ref(t).is_none_or(|s| s.view.allowed(dst)) {
            return false;
        }
        let last = smp.tasks.get(t).last_ran;
        let hot = last != 0 && now.saturating_sub(last) < MIGRATION_COST;
        !hot || failed > CACHE_NICE_TRIES
    }

    /// `detach_tasks()` + `attach_tasks()`: returns how many moved.
    fn move_tasks(
        &mut self,
        src: CpuId,
        dst: CpuId,
        idle: CpuState,
        kind: Migration,
        mut imbalance: i64,
        now: Time,
    ) -> usize {
        if self.rqs[src].nr_running() <= 1 || imbalance <= 0 || kind == Migration::Misfit {
            return 0;
        }
        let loop_max = self.rqs[src].nr_running().min(32);
        let failed = self.smp.as_ref().expect("smp").cpus[dst].nr_balance_failed;
        self.rqs[src].cfs_prune();
        let mut order = self.rqs[src].cfs_tasks.clone();
        let mut moved = 0;
        let mut looked = 0;
        while let Some(t) = order.pop() {
            if idle != CpuState::Busy && self.rqs[src].nr_running() <= 1 {
                break;
            }
            looked += 1;
            if looked > loop_max {
                break;
            }
            if !self.can_migrate(t, src, dst, kind, now) {
                continue;
            }
            if kind == Migration::Load {
                let load = self.smp.as_ref().expect("smp").pelt_of(t, now).load_avg.max(1);
                if (load >> failed.min(63)) as i64 > imbalance {
                    continue;
                }
                imbalance -= load as i64;
            } else {
                imbalance -= 1;
            }
            if self.rqs[src].fair.is_delayed(t) {
                self.migrate_delayed(t, src, dst, now);
            } else {
                self.migrate_fair(t, src, dst, now);
            }
            moved += 1;
            // A preemptible kernel stops a newidle pass after one task.
            if idle == CpuState::GoingIdle || imbalance <= 0 {
                break;
            }
        }
        moved
    }

    /// Move the waiting fair task `t` from `src` to `dst` (`detach_task()` + `attach_task()`).
    fn migrate_fair(&mut self, t: TaskId, src: CpuId, dst: CpuId, now: Time) {
        self.rqs[src].fair.dequeue(t);
        self.move_off(t, src, dst);
        let view = self.smp.as_ref().expect("smp").tasks.get(t).view;
        self.enqueue_on(dst, &view.view(t), crate::policy::EnqueueReason::Migrated, now);
        self.after_enqueue(t, dst, crate::policy::EnqueueReason::Migrated, now);
        self.smp.as_mut().expect("smp").cpus[dst].arrived.push(t);
    }

    /// Move the delayed fair task `t` from `src` to `dst`: it stays blocked and delayed there and
    /// is woken there. Like any task a balancer attaches, it is checked against the running
    /// task (`attach_task()` → `wakeup_preempt()`): one eligible there with the earliest deadline
    /// has the CPU pick, and that pick finishes its dequeue.
    pub(crate) fn migrate_delayed(&mut self, t: TaskId, src: CpuId, dst: CpuId, now: Time) {
        self.rqs[src].fair.detach_delayed(t, now);
        self.move_off(t, src, dst);
        self.rqs[dst].fair_arrives(&self.params, now);
        self.rqs[dst].fair.attach_delayed(t, now);
        self.rqs[dst].cfs_front(t);
        self.smp.as_mut().expect("smp").cpus[dst].arrived.push(t);
    }

    /// `sched_balance_rq()` for `dst`: true if a task moved (or an active balance started).
    fn balance_rq(&mut self, dst: CpuId, idle: CpuState, now: Time) -> bool {
        let capacity_interval = self.balance_interval(dst, false);
        self.smp.as_mut().expect("smp").update_capacity(dst, idle == CpuState::GoingIdle, now, capacity_interval);
        let found = self.find_imbalance(dst, idle, now);
        let smp = self.smp.as_mut().expect("smp");
        let min = super::min_interval(self.rqs.len());
        let Some((_, busiest, kind, imbalance)) = found else {
            let cpu = &mut smp.cpus[dst];
            cpu.nr_balance_failed = 0;
            if idle != CpuState::GoingIdle && cpu.balance_interval < 2 * min {
                cpu.balance_interval *= 2;
            }
            return false;
        };
        let src = busiest.cpu;
        let moved = self.move_tasks(src, dst, idle, kind, imbalance, now);
        let smp = self.smp.as_mut().expect("smp");
        if moved > 0 {
            smp.cpus[dst].nr_balance_failed = 0;
            if idle != CpuState::GoingIdle {
                smp.cpus[dst].balance_interval = min;
            }
            return true;
        }
        if idle != CpuState::GoingIdle && kind != Migration::Misfit {
            smp.cpus[dst].nr_balance_failed += 1;
        }
        let failed = smp.cpus[dst].nr_balance_failed;
        let dst_cap = smp.capacity(dst, now);
        let need_active = (kind == Migration::Task && failed > CACHE_NICE_TRIES + 2)
            || (idle != CpuState::Busy
                && busiest.h_nr == 1
                && reduced(busiest.cap)
                && busiest.cap * IMBALANCE_PCT < dst_cap * 100)
            || kind == Migration::Misfit;
        if idle != CpuState::GoingIdle {
            smp.cpus[dst].balance_interval = min;
        }
        if need_active {
            if let Some((t, Class::Fair)) = self.rqs[src].curr {
                if smp.tasks.get_ref(t).is_none_or(|s| s.view.allowed(dst)) && smp.cpus[src].active.is_none() {
                    smp.cpus[src].active = Some((t, dst));
                    smp.cpus[dst].nr_balance_failed = 0;
                    return true;
                }
            }
        }
        false
    }

    /// Draw `draw` of when each CPU's balancer last ran before the run. A CPU balances on its
    /// own timer (`sd->last_balance`), whose phase when a run starts is nothing the run shows: a
    /// replay of a trace takes it as it takes a wake-up delay, one draw of an unknown. Draw 0
    /// starts every timer at the run's start (first due one busy interval in); every other draw
    /// gives each CPU a head start of a whole number of ticks within that interval, from a hash
    /// of the draw and the CPU, so its first balance falls on one of the interval's ticks.
    pub fn with_balance_draw(mut self, draw: u64) -> Self {
        self.balance_draw = draw;
        self
    }

    /// Set each CPU's head start for [`Linux::with_balance_draw`] (the SMP state just built).
    pub(crate) fn draw_balance_phases(&mut self) {
        if self.balance_draw == 0 || self.smp.is_none() {
            return;
        }
        let tick = self.smp.as_ref().expect("smp").tick;
        for c in 0..self.rqs.len() {
            let ticks = (self.balance_interval(c, true) / tick).max(1);
            let z = crate::engine::splitmix64(self.balance_draw << 8 | c as u64);
            self.smp.as_mut().expect("smp").cpus[c].balance_head_start = z % ticks * tick;
        }
    }

    /// `get_sd_balance_interval()` in ns.
    fn balance_interval(&self, c: CpuId, busy: bool) -> Dur {
        let smp = self.smp.as_ref().expect("smp");
        let mut ms = smp.cpus[c].balance_interval / 1_000_000;
        if busy {
            ms *= BUSY_FACTOR;
        }
        let tick_ms = (smp.tick / 1_000_000).max(1);
        let mut jiffies = ms.div_ceil(tick_ms);
        if busy {
            jiffies = jiffies.saturating_sub(1);
        }
        jiffies.clamp(1, MAX_INTERVAL_JIFFIES) * smp.tick
    }

    /// `sched_balance_domains()` of CPU `c`: balance if its interval has passed.
    fn balance_domains(&mut self, c: CpuId, idle: CpuState, now: Time) {
        let busy = idle == CpuState::Busy;
        let cpu = &self.smp.as_ref().expect("smp").cpus[c];
        let (last, head_start) = (cpu.last_balance, cpu.balance_head_start);
        if now + head_start >= last + self.balance_interval(c, busy) {
            self.balance_rq(c, idle, now);
            let cpu = &mut self.smp.as_mut().expect("smp").cpus[c];
            cpu.last_balance = now;
            cpu.balance_head_start = 0;
            self.update_idle_scan(now);
        }
        let cpu = &self.smp.as_ref().expect("smp").cpus[c];
        let next = (cpu.last_balance + self.balance_interval(c, busy)).saturating_sub(cpu.balance_head_start);
        self.smp.as_mut().expect("smp").cpus[c].next_balance = next;
    }

    /// `update_idle_cpu_scan()`: how many CPUs a wake-up may scan for an idle one, from the
    /// domain's utilisation.
    fn update_idle_scan(&mut self, now: Time) {
        let n = self.rqs.len() as u64;
        let smp = self.smp.as_ref().expect("smp");
        let sum: u64 = (0..self.rqs.len()).map(|c| smp.cpu_signals(c, now).1).sum();
        let x = sum / n;
        let tmp = (x * x * IMBALANCE_PCT * IMBALANCE_PCT / (10_000 * 1024)).min(1024);
        let y = 1024 - tmp;
        self.smp.as_mut().expect("smp").nr_idle_scan = (y * n / 1024) as usize;
    }

    /// Some CPU has two tasks or more (`rd->overloaded`).
    fn overloaded(&self) -> bool {
        self.rqs.iter().any(|rq| rq.nr_running() >= 2)
    }

    /// `sched_balance_newidle()` for CPU `i`, about to go idle (its last task stopped and
    /// nothing waits): one fair task from the busiest CPU. True if it got one.
    /// With NI_RANDOM it first throws the die ([`super::newidle`]).
    pub(crate) fn idle_balance(&mut self, i: CpuId, now: Time) -> bool {
        if !self.rqs[i].scheduling || !self.overloaded() {
            return false;
        }
        let weight = if self.params.ni_random {
            let smp = self.smp.as_mut().expect("smp");
            let d1k = smp.die.throw();
            match smp.cpus[i].newidle.roll(d1k) {
                Some(w) => w,
                None => return false,
            }
        } else {
            1
        };
        let pulled = self.balance_rq(i, CpuState::GoingIdle, now);
        self.smp.as_mut().expect("smp").cpus[i].newidle.record(weight * u32::from(pulled));
        pulled && self.rqs[i].waiting() > 0
    }

    /// The next tick at which balancing may have something to do, or change its own state.
    pub(crate) fn balance_timer(&self) -> Option<Time> {
        let smp = self.smp.as_ref()?;
        let busy_overloaded = self.overloaded();
        let active = smp.cpus.iter().any(|c| c.active.is_some());
        let misfit = self.rqs.iter().any(|rq| rq.is_idle())
            && (0..self.rqs.len()).any(|c| self.rqs[c].fair_runnable() >= 1 && reduced(smp.capacity(c, self.now)));
        let now = self.now;
        let from = if busy_overloaded || active || misfit {
            now
        } else {
            // Nothing to move, but a busy CPU's balancer still runs when due and finds its domain
            // balanced: that clears its failure count and stretches its interval, which decide
            // when it next moves a task. Skipped, the next balance would count one more failure.
            (0..self.rqs.len()).filter(|&c| !self.rqs[c].is_idle()).map(|c| smp.cpus[c].next_balance).min()?.max(now)
        };
        let tick = smp.softirq_at_or_after(from);
        Some(if smp.last_tick == Some(tick) { tick + smp.tick } else { tick })
    }

    /// At a tick's softirq (`softirq_lag` after the tick): each busy CPU balances when due
    /// (`sched_balance_trigger()`), and kicks an idle CPU to balance for itself when it has more
    /// than it can run (`nohz_balancer_kick()`).
    pub(crate) fn tick_balance(&mut self, now: Time) {
        let smp = self.smp.as_mut().expect("smp");
        if !smp.is_softirq(now) || smp.last_tick == Some(now) {
            return;
        }
        smp.last_tick = Some(now);
        let tick = smp.tick;
        for c in 0..self.rqs.len() {
            // An idle CPU balances only when a busy one kicks it (below).
            if self.rqs[c].is_idle() {
                continue;
            }
            if now >= self.smp.as_ref().expect("smp").cpus[c].next_balance {
                self.balance_domains(c, CpuState::Busy, now);
            }
            let cap = self.smp.as_ref().expect("smp").capacity(c, now);
            let wants = self.rqs[c].nr_running() >= 2 || (self.rqs[c].fair_runnable() >= 1 && reduced(cap));
            let ilb = (0..self.rqs.len()).find(|&i| i != c && self.rqs[i].is_idle());
            if let Some(ilb) = ilb.filter(|_| wants && now >= self.smp.as_ref().expect("smp").nohz_next_balance) {
                self.smp.as_mut().expect("smp").nohz_next_balance = now + tick;
                self.balance_domains(ilb, CpuState::Idle, now);
            }
        }
    }

    /// Does a fair task a balancer put on CPU `i` since the last timer pre-empt its running
    /// task (`attach_task()` → `wakeup_preempt()`)?
    pub(crate) fn fair_arrival_preempts(&mut self, i: CpuId, running: TaskId, now: Time) -> bool {
        let arrived = std::mem::take(&mut self.smp.as_mut().expect("smp").cpus[i].arrived);
        arrived.into_iter().any(|t| self.rqs[i].fair.preempts(t, running, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busiest(h_nr: usize, load: u64, cap: u64) -> Stats {
        Stats {
            cpu: 1,
            load,
            nr: 2,
            h_nr,
            cap,
            idle: false,
            kind: GroupType::Overloaded,
            avg_load: load * 1024 / cap,
            misfit_load: 0,
        }
    }

    #[test]
    fn a_drawn_balancer_phase_brings_the_first_balance_onto_a_tick_of_the_first_interval() {
        use crate::policies::linux::LinuxParams;
        use crate::policy::{Policy, MS};
        let head_starts = |draw: u64| {
            let mut linux = Linux::new(LinuxParams::default()).with_balance_draw(draw);
            Policy::set_cpus(&mut linux, 2);
            // Two CPUs: min_interval 2 ms, × busy_factor 16 = 32 ms = 8 ticks of 4 ms, less one.
            assert_eq!(linux.balance_interval(0, true), 28 * MS);
            linux.smp.as_ref().unwrap().cpus.iter().map(|c| c.balance_head_start).collect::<Vec<_>>()
        };
        assert_eq!(head_starts(0), vec![0, 0], "draw 0: every timer starts at the run");
        let all: Vec<u64> = (1..200).flat_map(head_starts).collect();
        assert!(all.iter().all(|h| h % (4 * MS) == 0 && *h < 28 * MS), "{all:?}");
        let distinct: std::collections::BTreeSet<u64> = all.iter().copied().collect();
        assert_eq!(distinct.len(), 7, "every tick of the interval is drawn");
        assert_eq!(head_starts(3), head_starts(3), "a draw is a draw");
        // A head start of 20 ms: the first balance is due at 28 − 20 = 8 ms, then every 28 ms.
        let mut linux = Linux::new(LinuxParams::default());
        Policy::set_cpus(&mut linux, 2);
        linux.smp.as_mut().unwrap().cpus[0].balance_head_start = 20 * MS;
        linux.balance_domains(0, CpuState::Busy, 4 * MS);
        assert_eq!(linux.smp.as_ref().unwrap().cpus[0].last_balance, 0, "not due at 4 ms");
        linux.balance_domains(0, CpuState::Busy, 8 * MS);
        let cpu = &linux.smp.as_ref().unwrap().cpus[0];
        assert_eq!((cpu.last_balance, cpu.balance_head_start), (8 * MS, 0), "due at 8 ms");
    }

    #[test]
    fn a_cpu_with_one_runnable_task_heavier_than_the_imbalance_is_not_a_source() {
        // Two queued (nr 2), one of them delayed: one runnable, load 1,400 > imbalance 100.
        assert!(!Linux::source_rq(&busiest(1, 1400, 1024), 100));
        // The same with two runnable tasks, or a load within the imbalance: a source.
        assert!(Linux::source_rq(&busiest(2, 1400, 1024), 100));
        assert!(Linux::source_rq(&busiest(1, 90, 1024), 100));
        // RT/DL take a noticeable part of its capacity (800 × 117 < 1024 × 100): a source.
        assert!(Linux::source_rq(&busiest(1, 1400, 800), 100));
        // No runnable fair task at all: nothing to take.
        assert!(!Linux::source_rq(&busiest(0, 1400, 1024), 100));
    }

    /// A busy CPU's balancer runs when due even when no CPU has two tasks: finding its domain
    /// balanced clears its failure count and stretches its interval (`out_balanced:` of
    /// `sched_balance_rq()`). Were that balance skipped, the next one, made when a CPU has two
    /// tasks again, would count one more failure and move a task sooner than the kernel does.
    #[test]
    fn a_busy_cpus_due_balance_is_a_timer_even_when_nothing_is_overloaded() {
        use crate::policies::linux::LinuxParams;
        use crate::policy::{EnqueueReason, Policy, TaskView, MS};
        let mut linux = Linux::new(LinuxParams::default());
        Policy::set_cpus(&mut linux, 2);
        let hog = TaskView { start_cpu: Some(0), ..TaskView::new(0) };
        linux.enqueue(&hog, EnqueueReason::New, 0);
        assert_eq!(linux.pick_next(0, 0).map(|p| p.task), Some(0));
        linux.smp.as_mut().unwrap().cpus[0].nr_balance_failed = 1;
        // One task on CPU 0, none on CPU 1: nothing to move. The first tick's softirq, 20 µs
        // after it, sets when CPU 0's busy balance is due: 28 ms in (its interval of 2 ms × 16,
        // in 4 ms ticks, less one), again in that tick's softirq.
        let lag = crate::policies::linux::SOFTIRQ_LAG;
        assert_eq!(linux.balance_timer(), Some(lag));
        linux.tick_balance(lag);
        assert_eq!(linux.smp.as_ref().unwrap().cpus[0].last_balance, 0, "not due at 0");
        assert_eq!(linux.balance_timer(), Some(28 * MS + lag));
        linux.now = 28 * MS;
        linux.tick_balance(28 * MS);
        assert_eq!(linux.smp.as_ref().unwrap().cpus[0].last_balance, 0, "not at the tick itself");
        linux.now = 28 * MS + lag;
        linux.tick_balance(28 * MS + lag);
        let cpu = &linux.smp.as_ref().unwrap().cpus[0];
        assert_eq!((cpu.last_balance, cpu.nr_balance_failed), (28 * MS + lag, 0), "balanced: the failure is cleared");
        assert_eq!(cpu.balance_interval, 4 * MS, "and the interval doubled");
        // The next is 4 ms × 16 = 64 ms (15 ticks) on.
        assert_eq!(linux.balance_timer(), Some(88 * MS + lag));
    }
}

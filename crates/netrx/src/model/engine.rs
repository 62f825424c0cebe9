//! The event loop of the model. One CPU; at every step the highest level with work runs:
//! the interrupt level (interrupts enabled and a device holding a packet), then the kernel
//! thread's current job, then the screening user process, then the compute-bound hog (or
//! idle). Kernel-thread and user work is pre-empted by the next arrival whenever interrupts are
//! enabled and resumes with its remaining time afterwards; interrupt handlers run to the end.

use super::{CpuSplit, Latency, ModelConfig, ModelResult};
use crate::arrival::Arrival;
use crate::strategy::{self, IrqAction, Job, JobOutcome, RxStrategy, RxView};
use crate::ParamError;
use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// Run the model described by `cfg`.
pub fn run(cfg: &ModelConfig) -> Result<ModelResult, ParamError> {
    cfg.validate()?;
    let mut e = Engine::new(cfg)?;
    e.run();
    Ok(e.result())
}

#[derive(Debug, Clone, Copy)]
struct Pkt {
    t_arr: u64,
}

#[derive(Debug, Clone, Copy)]
enum Item {
    Overhead,
    Deliver(Pkt),
    PollPkt(Pkt),
    TxPkt(Pkt),
}

#[derive(Debug)]
struct Running {
    job: Job,
    started: bool,
    left: usize,
    found: usize,
    item: Option<(Item, u64)>,
}

#[derive(Debug)]
enum KThread {
    Asleep { until: Option<u64> },
    Ready,
    Busy(Running),
}

struct Engine<'a> {
    cfg: &'a ModelConfig,
    strategy: Box<dyn RxStrategy>,
    arrivals: Vec<Box<dyn Arrival>>,
    next_arr: Vec<u64>,
    rings: Vec<VecDeque<Pkt>>,
    buffer: VecDeque<Pkt>,
    outq: VecDeque<Pkt>,
    screenq: VecDeque<Pkt>,
    screen_act: Option<(Pkt, u64)>,
    wire_end: u64,
    kt: KThread,
    now: u64,
    end: u64,
    irq_rr: usize,
    hist: Histogram<u64>,
    offered: u64,
    delivered: u64,
    lost_device: u64,
    lost_buffer: u64,
    lost_late: u64,
    fills: u64,
    interrupts: u64,
    cpu: [u64; 5],
    /// A deliberately broken engine for negative controls: every n-th delivery vanishes
    /// uncounted.
    #[cfg(test)]
    forget_every: Option<u64>,
}

const IRQ: usize = 0;
const KTHREAD: usize = 1;
const SCREEN: usize = 2;
const HOG: usize = 3;
const IDLE: usize = 4;

impl<'a> Engine<'a> {
    fn new(cfg: &'a ModelConfig) -> Result<Self, ParamError> {
        let strategy = strategy::build(cfg.strategy, &cfg.params, cfg.devices)?;
        let mut arrivals = Vec::new();
        let mut next_arr = Vec::new();
        for d in 0..cfg.devices {
            let mut a = cfg.arrival.build(cfg.seed, d)?;
            next_arr.push(secs_to_ns(a.next_send_s()));
            arrivals.push(a);
        }
        Ok(Engine {
            cfg,
            strategy,
            arrivals,
            next_arr,
            rings: (0..cfg.devices).map(|_| VecDeque::new()).collect(),
            buffer: VecDeque::new(),
            outq: VecDeque::new(),
            screenq: VecDeque::new(),
            screen_act: None,
            wire_end: 0,
            kt: KThread::Ready,
            now: 0,
            end: secs_to_ns(cfg.duration_s),
            irq_rr: 0,
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds"),
            offered: 0,
            delivered: 0,
            lost_device: 0,
            lost_buffer: 0,
            lost_late: 0,
            fills: 0,
            interrupts: 0,
            cpu: [0; 5],
            #[cfg(test)]
            forget_every: None,
        })
    }

    fn view(&self) -> RxView {
        RxView {
            now_ns: self.now,
            buffer_len: self.buffer.len(),
            buffer_cap: self.cfg.params.sz,
            app_queue: self.screenq.len(),
            app_queue_cap: self.cfg.screen.map_or(0, |s| s.queue),
            devices: self.cfg.devices,
        }
    }

    fn run(&mut self) {
        let mut still = 0u32;
        loop {
            self.take_arrivals();
            if self.now >= self.end {
                break;
            }
            let before = self.now;
            self.step();
            if self.now == before {
                still += 1;
                if still > 100_000 {
                    // A strategy that hands out free jobs forever: let time move on.
                    self.spend(IDLE, 1_000);
                    still = 0;
                }
            } else {
                still = 0;
            }
        }
    }

    fn step(&mut self) {
        if self.strategy.interrupts_enabled() {
            if let Some(dev) = self.ring_with_packet() {
                self.interrupt(dev);
                return;
            }
        }
        if let KThread::Asleep { until: Some(t) } = self.kt {
            if t <= self.now {
                self.kt = KThread::Ready;
            }
        }
        match std::mem::replace(&mut self.kt, KThread::Ready) {
            KThread::Ready => return self.start_job(),
            KThread::Busy(r) => return self.run_job(r),
            asleep => self.kt = asleep,
        }
        if self.cfg.screen.is_some() && (self.screen_act.is_some() || !self.screenq.is_empty()) {
            return self.run_screen();
        }
        // Nothing runnable: the hog (or idle) until the next thing that can happen.
        let mut t = self.end;
        if self.strategy.interrupts_enabled() {
            t = t.min(self.next_arrival());
        }
        if let KThread::Asleep { until: Some(u) } = self.kt {
            t = t.min(u);
        }
        let t = t.max(self.now);
        self.spend(if self.cfg.hog { HOG } else { IDLE }, t - self.now);
    }

    fn next_arrival(&self) -> u64 {
        self.next_arr.iter().copied().min().unwrap_or(u64::MAX)
    }

    fn take_arrivals(&mut self) {
        for d in 0..self.cfg.devices {
            while self.next_arr[d] <= self.now && self.next_arr[d] < self.end {
                let p = Pkt { t_arr: self.next_arr[d] };
                self.offered += 1;
                if self.rings[d].len() < self.cfg.device_ring {
                    self.rings[d].push_back(p);
                } else {
                    self.lost_device += 1;
                }
                let next = secs_to_ns(self.arrivals[d].next_send_s()).max(self.next_arr[d]);
                self.next_arr[d] = next;
            }
            if self.next_arr[d] >= self.end {
                self.next_arr[d] = u64::MAX;
            }
        }
    }

    fn ring_with_packet(&mut self) -> Option<usize> {
        let n = self.cfg.devices;
        for k in 0..n {
            let d = (self.irq_rr + k) % n;
            if !self.rings[d].is_empty() {
                self.irq_rr = (d + 1) % n;
                return Some(d);
            }
        }
        None
    }

    fn spend(&mut self, level: usize, ns: u64) {
        self.cpu[level] += ns;
        self.now += ns;
    }

    fn wake_kthread(&mut self) {
        if let KThread::Asleep { .. } = self.kt {
            self.kt = KThread::Ready;
        }
    }

    fn interrupt(&mut self, dev: usize) {
        self.interrupts += 1;
        let c = self.cfg.costs;
        let v = self.view();
        match self.strategy.on_interrupt(dev, &v) {
            IrqAction::Enqueue => {
                let p = self.rings[dev].pop_front().expect("interrupt for a device with a packet");
                self.spend(IRQ, c.irq_ns + c.rx_ns);
                if self.buffer.len() < self.cfg.params.sz {
                    self.buffer.push_back(p);
                    if self.buffer.len() == self.cfg.params.sz {
                        self.fills += 1;
                    }
                } else {
                    self.lost_buffer += 1;
                }
                let v = self.view();
                self.strategy.after_enqueue(&v);
            }
            IrqAction::SchedulePoll => self.spend(IRQ, c.irq_ns),
        }
        self.wake_kthread();
    }

    fn start_job(&mut self) {
        let v = self.view();
        match self.strategy.next_job(&v) {
            Job::Idle { timer_ns } => {
                // A strategy that masks interrupts and sleeps without a timer would never wake.
                let timer = timer_ns.or((!self.strategy.interrupts_enabled()).then_some(1_000_000));
                self.kt = KThread::Asleep { until: timer.map(|d| self.now + d.max(1)) };
            }
            job => {
                let left = match job {
                    Job::Poll { quota, .. } | Job::Transmit { quota } => quota,
                    _ => 1,
                };
                self.kt = KThread::Busy(Running { job, started: false, left, found: 0, item: None });
            }
        }
    }

    /// The next piece of work of a running job and its cost, or `None` when the job is done.
    fn next_item(&mut self, r: &mut Running) -> Option<(Item, u64)> {
        let c = self.cfg.costs;
        let first = !r.started;
        r.started = true;
        match r.job {
            Job::Deliver => {
                if first {
                    let cost = c.proto_ns + if self.cfg.screen.is_some() { 0 } else { c.deliver_ns };
                    self.buffer.pop_front().map(|p| (Item::Deliver(p), cost))
                } else {
                    None
                }
            }
            Job::Poll { dev, .. } => {
                if first && c.poll_ns > 0 {
                    return Some((Item::Overhead, c.poll_ns));
                }
                if r.left == 0 {
                    return None;
                }
                let p = self.rings[dev].pop_front()?;
                r.left -= 1;
                let later = self.cfg.tx.is_some() || self.cfg.screen.is_some();
                let cost = c.rx_ns + c.proto_ns + if later { 0 } else { c.deliver_ns };
                Some((Item::PollPkt(p), cost))
            }
            Job::Transmit { .. } => {
                let tx = self.cfg.tx?;
                if first {
                    // The driver reclaims finished descriptors only when its callback runs, so
                    // one callback can fill at most the slots free at its start.
                    let busy = self.wire_end.saturating_sub(self.now).div_ceil(tx.wire_ns.max(1)) as usize;
                    r.left = r.left.min(tx.ring.saturating_sub(busy));
                    if c.poll_ns > 0 {
                        return Some((Item::Overhead, c.poll_ns));
                    }
                }
                if r.left == 0 {
                    return None;
                }
                let p = self.outq.pop_front()?;
                r.left -= 1;
                Some((Item::TxPkt(p), c.deliver_ns))
            }
            Job::Idle { .. } => None,
        }
    }

    fn run_job(&mut self, mut r: Running) {
        let (item, remaining) = match r.item.take() {
            Some(x) => x,
            None => match self.next_item(&mut r) {
                Some(x) => x,
                None => return self.finish_job(r),
            },
        };
        let horizon = self.preempt_horizon();
        if self.now.saturating_add(remaining) <= horizon {
            self.spend(KTHREAD, remaining);
            self.complete(item, &mut r);
        } else {
            let ran = horizon - self.now;
            self.spend(KTHREAD, ran);
            r.item = Some((item, remaining - ran));
        }
        self.kt = KThread::Busy(r);
    }

    /// When work below interrupt level must stop: the next arrival if interrupts are on.
    fn preempt_horizon(&self) -> u64 {
        let h = if self.strategy.interrupts_enabled() { self.next_arrival() } else { u64::MAX };
        h.min(self.end).max(self.now)
    }

    fn complete(&mut self, item: Item, r: &mut Running) {
        match item {
            Item::Overhead => {}
            Item::Deliver(p) => {
                r.found += 1;
                self.after_protocol(p, false);
            }
            Item::PollPkt(p) => {
                r.found += 1;
                self.after_protocol(p, true);
            }
            Item::TxPkt(p) => {
                r.found += 1;
                let tx = self.cfg.tx.expect("transmit items exist only with an output stage");
                self.wire_end = self.wire_end.max(self.now) + tx.wire_ns;
                self.deliver(p);
            }
        }
    }

    /// A packet finished protocol processing: to the screening process (which then pays the
    /// deliver cost), the output queue (polling path with an output stage) or straight out. The
    /// interrupt path's output is driven by transmit-complete interrupts, folded into its
    /// `deliver` cost.
    fn after_protocol(&mut self, p: Pkt, polled: bool) {
        if let Some(s) = self.cfg.screen {
            if self.screenq.len() < s.queue {
                self.screenq.push_back(p);
            } else {
                self.lost_late += 1;
            }
        } else if let (Some(tx), true) = (self.cfg.tx, polled) {
            if self.outq.len() < tx.queue {
                self.outq.push_back(p);
            } else {
                self.lost_late += 1;
            }
        } else {
            self.deliver(p);
        }
    }

    fn deliver(&mut self, p: Pkt) {
        #[cfg(test)]
        if self.forget_every.is_some_and(|n| p.t_arr.is_multiple_of(n)) {
            return;
        }
        self.delivered += 1;
        let _ = self.hist.record((self.now - p.t_arr).max(1));
    }

    fn finish_job(&mut self, r: Running) {
        let pending = match r.job {
            Job::Poll { dev, .. } => !self.rings[dev].is_empty(),
            Job::Transmit { .. } => !self.outq.is_empty() && self.cfg.tx.is_some(),
            _ => false,
        };
        let v = self.view();
        self.strategy.job_done(r.job, JobOutcome { found: r.found, pending }, &v);
        self.kt = KThread::Ready;
    }

    fn run_screen(&mut self) {
        let s = self.cfg.screen.expect("screen process configured");
        let (p, remaining) = match self.screen_act.take() {
            Some(x) => x,
            // Screening, then handing the packet back for output (the deliver cost).
            None => {
                (self.screenq.pop_front().expect("screen queue has a packet"), s.cost_ns + self.cfg.costs.deliver_ns)
            }
        };
        let mut horizon = self.preempt_horizon();
        if let KThread::Asleep { until: Some(u) } = self.kt {
            horizon = horizon.min(u.max(self.now));
        }
        if self.now.saturating_add(remaining) <= horizon {
            self.spend(SCREEN, remaining);
            self.deliver(p);
            // The queue shrank: a kernel thread held back by feedback may look again.
            self.wake_kthread();
        } else {
            let ran = horizon - self.now;
            self.spend(SCREEN, ran);
            self.screen_act = Some((p, remaining - ran));
        }
    }

    fn result(&self) -> ModelResult {
        let secs = self.end as f64 / 1e9;
        let us = |q: f64| if self.hist.is_empty() { 0.0 } else { self.hist.value_at_quantile(q) as f64 / 1e3 };
        ModelResult {
            offered: self.offered,
            delivered: self.delivered,
            offered_pps: self.offered as f64 / secs,
            delivered_pps: self.delivered as f64 / secs,
            lost_device: self.lost_device,
            lost_buffer: self.lost_buffer,
            lost_late: self.lost_late,
            buffer_fills: self.fills,
            switches: self.strategy.switches(),
            interrupts: self.interrupts,
            latency_us: Latency {
                p50: us(0.5),
                p99: us(0.99),
                max: if self.hist.is_empty() { 0.0 } else { self.hist.max() as f64 / 1e3 },
            },
            cpu: CpuSplit {
                interrupt_s: self.cpu[IRQ] as f64 / 1e9,
                kernel_thread_s: self.cpu[KTHREAD] as f64 / 1e9,
                screen_s: self.cpu[SCREEN] as f64 / 1e9,
                hog_s: self.cpu[HOG] as f64 / 1e9,
                idle_s: self.cpu[IDLE] as f64 / 1e9,
            },
        }
    }
}

fn secs_to_ns(s: f64) -> u64 {
    (s * 1e9).round().max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrival::{ArrivalParams, Fun};
    use crate::model::{mogul96_screend, Costs, Screen};
    use crate::strategy::{StrategyKind, StrategyParams};
    use proptest::prelude::*;

    fn cfg(kind: StrategyKind, wait: f64) -> ModelConfig {
        let costs = Costs { irq_ns: 20_000, rx_ns: 2_000, proto_ns: 15_000, deliver_ns: 10_000, poll_ns: 1_000 };
        let mut c = ModelConfig::this_machine(kind, StrategyParams::default(), costs, 256);
        c.arrival = ArrivalParams { wait, ..Default::default() };
        c
    }

    #[test]
    fn light_load_is_delivered_by_every_strategy() {
        for kind in StrategyKind::ALL {
            let r = run(&cfg(kind, 0.002)).unwrap();
            assert_eq!(r.lost(), 0, "{kind}: {r:?}");
            assert!(r.delivered + 3 >= r.offered, "{kind}: {r:?}");
            assert!(r.latency_us.p50 > 0.0);
        }
    }

    #[test]
    fn overload_livelocks_interrupts_but_not_napi() {
        let i = run(&cfg(StrategyKind::Interrupt, 20e-6)).unwrap();
        let n = run(&cfg(StrategyKind::Napi, 20e-6)).unwrap();
        assert!(i.delivered_pps < 0.1 * n.delivered_pps, "interrupt {} napi {}", i.delivered_pps, n.delivered_pps);
        assert!(i.buffer_fills >= 1 && i.lost_buffer > 0);
        assert!(n.cpu.interrupt_s < 0.01, "napi keeps interrupts masked under load");
    }

    #[test]
    fn hybrid_switches_twice_per_fill() {
        let r = run(&cfg(StrategyKind::Hybrid, 30e-6)).unwrap();
        assert!(r.buffer_fills > 0);
        assert!(r.switches == 2 * r.buffer_fills || r.switches + 1 == 2 * r.buffer_fills, "{r:?}");
    }

    #[test]
    fn feedback_keeps_screend_fed() {
        let mut c = ModelConfig::mogul96(StrategyKind::Napi, 5, 10_000.0, 1.0);
        c.screen = Some(mogul96_screend());
        let with = run(&c).unwrap();
        c.screen = Some(Screen { queue: 32, ..mogul96_screend() });
        c.params.fb_high = 1.0;
        c.params.fb_low = 1.0;
        let without = run(&c).unwrap();
        assert!(with.delivered_pps > 2.0 * without.delivered_pps.max(1.0), "{with:?} {without:?}");
    }

    #[test]
    fn the_hog_gets_what_is_left() {
        let mut c = cfg(StrategyKind::Napi, 0.001);
        c.hog = true;
        let r = run(&c).unwrap();
        assert!(r.cpu.hog_s > 0.8 && r.cpu.idle_s == 0.0, "{:?}", r.cpu);
    }

    /// Packets still inside the host when the run ends: in a device ring, the buffer, the
    /// output or screening queue, with the screening process, or in a job's hands.
    fn in_flight(e: &Engine) -> u64 {
        let held = match &e.kt {
            KThread::Busy(Running {
                item: Some((Item::Deliver(_) | Item::PollPkt(_) | Item::TxPkt(_), _)), ..
            }) => 1,
            _ => 0,
        };
        let queued = e.rings.iter().map(VecDeque::len).sum::<usize>() + e.buffer.len() + e.outq.len() + e.screenq.len();
        queued as u64 + u64::from(e.screen_act.is_some()) + held
    }

    /// Every offered packet was delivered, lost (and counted) or is still in flight.
    fn conservation(e: &Engine) -> Result<(), String> {
        let r = e.result();
        let accounted = r.delivered + r.lost() + in_flight(e);
        if accounted == r.offered {
            Ok(())
        } else {
            Err(format!("{} offered, {accounted} accounted for ({} in flight): {r:?}", r.offered, in_flight(e)))
        }
    }

    fn conserved_run(c: &ModelConfig, forget_every: Option<u64>) -> Result<ModelResult, String> {
        let mut e = Engine::new(c).unwrap();
        e.forget_every = forget_every;
        e.run();
        conservation(&e).map(|()| e.result())
    }

    fn random_config(k: usize, wait: f64, f: usize, seed: u64) -> ModelConfig {
        let mut c = cfg(StrategyKind::ALL[k], wait);
        c.arrival = ArrivalParams { fun: Fun::ALL[f], wait, lambda: 1.0 / wait, mu: wait, var: wait * wait, inc: 0.05 };
        c.seed = seed;
        c.duration_s = 0.2;
        c
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn packets_are_conserved(k in 0usize..4, wait in 5e-6f64..2e-3, f in 0usize..5, seed in 0u64..100) {
            let r = conserved_run(&random_config(k, wait, f, seed), None);
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
            let r = r.unwrap();
            let busy = r.cpu.interrupt_s + r.cpu.kernel_thread_s + r.cpu.idle_s + r.cpu.hog_s + r.cpu.screen_s;
            prop_assert!((busy - 0.2).abs() < 1e-3, "CPU time adds up to the run: {}", busy);
        }
    }

    #[test]
    fn an_engine_that_forgets_deliveries_breaks_conservation() {
        // The negative control: with every packet whose arrival nanosecond is even delivered
        // uncounted, the conservation check fails for every strategy.
        for k in 0..StrategyKind::ALL.len() {
            let c = random_config(k, 0.001, 0, 7);
            assert!(conserved_run(&c, None).is_ok());
            let e = conserved_run(&c, Some(2)).unwrap_err();
            assert!(e.contains("accounted for"), "{e}");
        }
    }
}

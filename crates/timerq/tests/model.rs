//! Every timer queue against a reference model (a Vec kept sorted by deadline) on random
//! sequences of insert / cancel / tick / advance: the same entries must expire at the same
//! tick, cancel must return the same answers, and len/next_deadline must agree throughout.

use proptest::prelude::*;
use schedlab_timerq::{Handle, Kind, Tick, TimerQueue};

#[derive(Debug, Clone)]
enum Op {
    Insert(Tick),
    /// Cancel the i-th handle ever returned (modulo the count), live or not.
    Cancel(usize),
    Tick,
    Advance(Tick),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..200).prop_map(Op::Insert),
        1 => (0u64..20_000).prop_map(Op::Insert), // reaches levels 1-2 of the wheel
        1 => (0u64..u64::MAX / 4).prop_map(|d| Op::Insert(d >> (d % 50))), // far future
        2 => any::<usize>().prop_map(Op::Cancel),
        3 => Just(Op::Tick),
        1 => (0u64..5_000).prop_map(Op::Advance),
    ]
}

/// The model: (deadline, id) sorted by deadline.
#[derive(Default)]
struct Model {
    now: Tick,
    pending: Vec<(Tick, u32)>,
}

impl Model {
    fn insert(&mut self, delay: Tick, id: u32) {
        let d = self.now + delay.max(1);
        let at = self.pending.partition_point(|&(x, _)| x <= d);
        self.pending.insert(at, (d, id));
    }
    fn cancel(&mut self, id: u32) -> Option<u32> {
        let at = self.pending.iter().position(|&(_, i)| i == id)?;
        Some(self.pending.remove(at).1)
    }
    fn advance_to(&mut self, until: Tick) -> Vec<(Tick, u32)> {
        let n = self.pending.partition_point(|&(d, _)| d <= until);
        self.now = self.now.max(until);
        self.pending.drain(..n).collect()
    }
}

fn sorted(mut v: Vec<(Tick, u32)>) -> Vec<(Tick, u32)> {
    v.sort_unstable();
    v
}

fn check(kind: Kind, ops: &[Op]) -> Result<(), TestCaseError> {
    check_queue(kind, kind.new_queue(), ops)
}

/// Run `ops` on `q` and on the model side by side; `kind` only names the queue in messages.
fn check_queue(kind: Kind, mut q: Box<dyn TimerQueue<u32> + Send>, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut m = Model::default();
    let mut handles: Vec<Handle> = vec![];
    for op in ops {
        match *op {
            Op::Insert(delay) => {
                let id = handles.len() as u32;
                // Keep deadlines from overflowing u64 over a long sequence.
                let delay = delay.min(u64::MAX / 2 - m.now);
                handles.push(q.insert(delay, id));
                m.insert(delay, id);
            }
            Op::Cancel(i) if !handles.is_empty() => {
                let id = (i % handles.len()) as u32;
                prop_assert_eq!(q.cancel(handles[id as usize]), m.cancel(id), "{} cancel {}", kind, id);
            }
            Op::Cancel(_) => {}
            Op::Tick => {
                let mut out = vec![];
                q.tick(&mut out);
                let now = q.now();
                let got = sorted(out.into_iter().map(|v| (now, v)).collect());
                prop_assert_eq!(got, sorted(m.advance_to(now)), "{} tick to {}", kind, now);
            }
            Op::Advance(k) => {
                let until = m.now + k;
                let mut out = vec![];
                q.advance_to(until, &mut out);
                prop_assert_eq!(q.now(), until);
                prop_assert_eq!(sorted(out), sorted(m.advance_to(until)), "{} advance to {}", kind, until);
            }
        }
        prop_assert_eq!(q.len(), m.pending.len(), "{} len", kind);
        prop_assert_eq!(q.next_deadline(), m.pending.first().map(|&(d, _)| d), "{} next_deadline", kind);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn control_matches_model(ops in prop::collection::vec(op(), 1..120)) { check(Kind::Control, &ops)?; }
    #[test]
    fn delta_matches_model(ops in prop::collection::vec(op(), 1..120)) { check(Kind::Delta, &ops)?; }
    #[test]
    fn heap_matches_model(ops in prop::collection::vec(op(), 1..200)) { check(Kind::Heap, &ops)?; }
    #[test]
    fn wheel_matches_model(ops in prop::collection::vec(op(), 1..200)) { check(Kind::Wheel, &ops)?; }
}

/// A deliberately broken queue for the negative control: entries more than 64 ticks away
/// (beyond the wheel's first level) expire one tick late.
struct LateBeyond64(Box<dyn TimerQueue<u32> + Send>);

impl TimerQueue<u32> for LateBeyond64 {
    fn insert(&mut self, delay: Tick, value: u32) -> Handle {
        self.0.insert(if delay > 64 { delay + 1 } else { delay }, value)
    }
    fn cancel(&mut self, handle: Handle) -> Option<u32> {
        self.0.cancel(handle)
    }
    fn tick(&mut self, out: &mut Vec<u32>) {
        self.0.tick(out)
    }
    fn next_deadline(&self) -> Option<Tick> {
        self.0.next_deadline()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn now(&self) -> Tick {
        self.0.now()
    }
    fn ops(&self) -> schedlab_timerq::OpCounts {
        self.0.ops()
    }
}

#[test]
fn the_model_check_catches_a_queue_that_fires_late() {
    // The negative control: the same property, on the same kind of random sequences, fails for
    // every queue once it is wrapped so that far entries expire a tick late.
    use proptest::test_runner::TestRunner;
    for kind in Kind::ALL {
        let mut runner = TestRunner::deterministic();
        let broken = runner.run(&prop::collection::vec(op(), 1..120), |ops| {
            check_queue(kind, Box::new(LateBeyond64(kind.new_queue())), &ops)
        });
        assert!(broken.is_err(), "{kind}: the model check passed a late queue");
    }
}

/// Seed 000's hypothesis on the seed's own array, counted exactly: the control list touches
/// Γ = Σx entries; the delta list touches the head once per tick until the last expiry
/// (Δ = max x) plus one look at each further entry after an expiry: Δ + n − 1 in all.
#[test]
fn seed_hypothesis_counts() {
    let xs: Vec<Tick> = vec![6503, 4363, 9529, 5259, 3730, 1428, 82, 334, 82, 9908];
    for kind in Kind::ALL {
        let mut q: Box<dyn TimerQueue<usize> + Send> = kind.new_queue();
        for (i, &x) in xs.iter().enumerate() {
            q.insert(x, i);
        }
        let mut out = vec![];
        q.advance_to(10_000, &mut out);
        assert_eq!(out.len(), xs.len());
        let ops = q.ops().timer_ops;
        let max = *xs.iter().max().unwrap();
        let sum: u64 = xs.iter().sum();
        match kind {
            Kind::Control => assert_eq!(ops, sum),
            Kind::Delta => assert_eq!(ops, max + xs.len() as u64 - 1),
            // The 4-ary heap: one visit per expiry plus the sift-down after it, at most the
            // depth of the remaining heap (sizes 9..6 → 2 levels, 5..2 → 1, 1..0 → 0):
            // between 10 and 10 + 4·2 + 4·1 = 22.
            Kind::Heap => assert!((10..=22).contains(&ops), "heap: {ops}"),
            // The wheel (64 slots a level): one visit per expiry plus one per cascade, at least
            // one cascade for an entry above level 0 and at most one per level. Deadlines
            // below 4,096 = 64² start on level 1 (82, 82, 334, 1428, 3730), the rest on level
            // 2: between 10 + 10 = 20 and 10 + 5·1 + 5·2 = 25.
            Kind::Wheel => assert!((20..=25).contains(&ops), "wheel: {ops}"),
        }
    }
}

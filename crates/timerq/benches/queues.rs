//! Criterion micro-benchmarks of the four queues on one workload: 10,000 timers with random
//! delays in 1..=1,000 ticks, 10% cancelled, then ticked until empty. For the side-by-side
//! with std's BinaryHeap and tokio-util's DelayQueue, use `schedlab timers bench`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use schedlab_timerq::{control::ControlList, delta::DeltaList, heap::Heap, wheel::Wheel, TimerQueue};

fn workload<Q: TimerQueue<u32>>(mut q: Q, delays: &[u64]) -> usize {
    let handles: Vec<_> = delays.iter().enumerate().map(|(i, &d)| q.insert(d, i as u32)).collect();
    for h in handles.iter().step_by(10) {
        q.cancel(*h);
    }
    let mut out = Vec::new();
    let mut n = 0;
    while !q.is_empty() {
        q.tick(&mut out);
        n += out.len();
        out.clear();
    }
    n
}

fn queues(c: &mut Criterion) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let delays: Vec<u64> = (0..10_000).map(|_| rng.gen_range(1..=1000)).collect();
    let mut g = c.benchmark_group("insert_cancel_drain_10k");
    g.sample_size(10);
    g.bench_function(BenchmarkId::from_parameter("wheel"), |b| b.iter(|| workload(Wheel::new(), &delays)));
    g.bench_function(BenchmarkId::from_parameter("heap"), |b| b.iter(|| workload(Heap::new(), &delays)));
    g.bench_function(BenchmarkId::from_parameter("delta"), |b| b.iter(|| workload(DeltaList::new(), &delays)));
    g.bench_function(BenchmarkId::from_parameter("control"), |b| b.iter(|| workload(ControlList::new(), &delays)));
    g.finish();
}

criterion_group!(benches, queues);
criterion_main!(benches);

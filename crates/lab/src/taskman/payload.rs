//! Seed 003's test task: a cyclic traversal of a 5 MB array with a step much larger than a
//! cache line, incrementing each element it visits.
//!
//! The array holds `AtomicU32`s touched with relaxed loads and stores (plain `mov`s, no locked
//! instructions): several threads may share it as in the seed without undefined behaviour, and
//! an increment lost to a race does not matter to the measurement.

use std::sync::atomic::{AtomicU32, Ordering};

/// The seed's array size.
pub const ARRAY_BYTES: usize = 5 * 1024 * 1024;
/// Elements between two visits: 1031 × 4 B ≈ 4 KiB, so every visit is a new cache line and
/// usually a new page. 1031 is prime and the length (5 MiB / 4 = 2^18 · 5) is coprime to it,
/// so a traversal visits every element once per pass.
pub const STEP: usize = 1031;

/// The shared array.
pub struct Array {
    cells: Vec<AtomicU32>,
}

impl Array {
    /// A zeroed array of `bytes` (rounded down to whole elements), on fresh pages: each run
    /// faults its array in page by page, which the page-fault counter reports.
    pub fn new(bytes: usize) -> Self {
        schedlab_os::rusage::fresh_pages_for_large_allocations();
        Array { cells: (0..bytes / 4).map(|_| AtomicU32::new(0)).collect() }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// True for an empty array.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Task `part` of `parts`: `steps / parts` visits starting at `part / parts` of the array.
    pub fn traverse_part(&self, part: usize, parts: usize, steps: u64) -> u64 {
        let n = self.cells.len();
        let start = n * part / parts.max(1);
        self.traverse(start, steps / parts.max(1) as u64)
    }

    /// Visit `steps` elements from `start`, `STEP` apart, wrapping around; returns a checksum.
    pub fn traverse(&self, start: usize, steps: u64) -> u64 {
        let n = self.cells.len();
        if n == 0 {
            return 0;
        }
        let step = STEP % n;
        let mut i = start % n;
        let mut sum = 0u64;
        for _ in 0..steps {
            let c = &self.cells[i];
            let v = c.load(Ordering::Relaxed).wrapping_add(1);
            c.store(v, Ordering::Relaxed);
            sum = sum.wrapping_add(v as u64);
            i += step;
            if i >= n {
                i -= n;
            }
        }
        sum
    }

    /// Sum of all elements (each visit adds one, so this counts visits in a single thread).
    pub fn total(&self) -> u64 {
        self.cells.iter().map(|c| c.load(Ordering::Relaxed) as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_visits_every_element_once() {
        let a = Array::new(ARRAY_BYTES);
        a.traverse(0, a.len() as u64);
        assert!(a.cells.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn parts_add_up_to_the_whole() {
        let a = Array::new(64 * 1024);
        for p in 0..4 {
            a.traverse_part(p, 4, 40_000);
        }
        assert_eq!(a.total(), 40_000);
    }
}

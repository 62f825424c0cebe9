//! Setting a queue's entities against each other to places read elsewhere — the kernel's
//! `se.vruntime` from `/proc/<tid>/sched`: only differences between tasks count (each side has
//! its own frame), so every task is moved by its own offset less their weighted mean, and the
//! average `V` of a queue that holds all of them stays. Used by `trace shadow` and by the
//! `linux` replay's start ([`crate::policies::linux::start_positions`]); the moves themselves
//! are [`super::FairRq::shift_vruntime`].

/// One task as both sides have it: its weight and its virtual runtime in the kernel and in the
/// model (each in its own frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compared {
    pub weight: u32,
    pub kernel: i64,
    pub model: i64,
}

/// The virtual runtime `v` that a task of `load` running from `from` to `to` (or back, when
/// `to` is earlier) has at `to`: a reading as of one instant of its run carried to another.
pub fn carried(v: i64, load: super::arith::Load, from: u64, to: u64) -> i64 {
    let ran = load.vdelta(from.abs_diff(to)) as i64;
    if to >= from {
        v + ran
    } else {
        v - ran
    }
}

/// How far to move each task's virtual runtime in the model so that every kernel − model
/// difference is the same — their weighted mean, so the weighted sum of the moves is zero.
/// Fewer than two tasks: nothing to compare, no moves.
pub fn shifts(tasks: &[Compared]) -> Vec<i64> {
    if tasks.len() < 2 {
        return vec![0; tasks.len()];
    }
    let offsets: Vec<i128> = tasks.iter().map(|t| t.kernel as i128 - t.model as i128).collect();
    let w: i128 = tasks.iter().map(|t| t.weight as i128).sum();
    let mean = tasks.iter().zip(&offsets).map(|(t, o)| t.weight as i128 * o).sum::<i128>() / w.max(1);
    offsets.iter().map(|o| (o - mean) as i64).collect()
}

//! `schedlab wrr study`: the seed's two tests, live, with weights 1, 4, 8, 12, 16, 20 —
//! (1) crypt iterations in a fixed time, fold over weight 1; (2) time to finish a fixed
//! hashing job, fold over weight 20 — printed beside the seed's tables, the simulator's
//! prediction for the same tasks, and the kernel's alternatives (cgroup weights, nice,
//! SCHED_DEADLINE) measured with the same tasks.
//!
//! - [`plan`]: what to run (mechanisms, sizes per scale, the seed's constants);
//! - [`measure`]: the live runs; [`predict`]: the simulator's numbers for the same tasks;
//! - [`tables`], [`verdicts`], [`figures`]: the section.

mod figures;
mod measure;
pub mod plan;
mod predict;
mod tables;
mod verdicts;

pub use plan::{round_ns, Mechanisms, Plan, QUANTUM_NS, SEED_CRYPT_S, WEIGHTS};

use crate::{Progress, Scale};
use anyhow::Result;
use measure::{AltResult, PerWeight, Test1};
use schedlab_os::machine::MachineFacts;
use schedlab_report::section::{Section, Status};
use schedlab_report::stats::Spread;
use serde_json::Value;

/// The registry name and the report title.
pub const NAME: &str = "wrr";
pub const TITLE: &str = "Live weighted round robin: a user-space host for the simulator's WRR policy";

/// Everything the study measured and predicted: what the section is built from.
pub(crate) struct StudyData {
    plan: Plan,
    scale: Scale,
    /// CPU seconds of one hash of the crypt workload here.
    hash_s: f64,
    t2_hashes: u64,
    t1: Test1,
    t2: Vec<PerWeight>,
    t2_raw: Vec<Value>,
    alts: Vec<AltResult>,
    sim_t1_mean: Vec<f64>,
    sim_t2_mean: Vec<f64>,
    interrupted: bool,
}

impl StudyData {
    fn slice_err(&self) -> Spread {
        Spread::of(&self.t1.slice_err)
    }
    fn stretch(&self) -> Spread {
        Spread::of(&self.t1.stretch)
    }
}

/// Run the study at `scale` and build its section.
pub fn run(scale: Scale, which: &Mechanisms, machine: &MachineFacts, progress: &dyn Progress) -> Result<Section> {
    let unsupported = |why: String| Section::unsupported(NAME, "004", TITLE, why);
    if !schedlab_os::is_root() {
        return Ok(unsupported("needs root: the tasks run at SCHED_FIFO priorities (run with sudo)".into()));
    }
    if let Err(e) = schedlab_os::sched::require_rt_throttling() {
        return Ok(unsupported(e.to_string()));
    }
    let exe_path = std::env::current_exe()?;
    let exe = exe_path.to_string_lossy().into_owned();
    if !exe_path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("schedlab")) {
        return Ok(unsupported(format!(
            "the study runs `schedlab workload crypt` as its tasks; {exe} is not schedlab"
        )));
    }
    let plan = Plan::for_scale(scale);
    let mut m = measure::Measure::new(&exe, &plan, which, progress);
    progress.update(0.0, "calibrating the hash cost");
    let hash_s = m.hash_cost_s()?;
    // The workload calls crypt(3) as the seed did, so the job is the seed's count of calls, scaled.
    let t2_hashes = (plan.t2_scale * 2_000_000.0).round() as u64;
    let t1 = m.test1()?;
    let alts = m.alternatives();
    let (t2, t2_raw) = m.test2(t2_hashes, hash_s)?;
    let (sim_t1_mean, sim_t2_mean) = predict::means(&plan, (t2_hashes as f64 * hash_s * 1e9) as u64);
    let data = StudyData {
        plan,
        scale,
        hash_s,
        t2_hashes,
        interrupted: m.interrupted || t1.interrupted,
        t1,
        t2,
        t2_raw,
        alts,
        sim_t1_mean,
        sim_t2_mean,
    };
    Ok(section(&data, machine))
}

fn section(d: &StudyData, machine: &MachineFacts) -> Section {
    let mut sec = Section::new(NAME, "004", TITLE);
    sec.summary = tables::summary(d, machine);
    if d.interrupted {
        sec.status = Status::Interrupted;
    }
    let t1 = tables::Test1Stats::of(d);
    sec.tables = tables::all(d, &t1);
    sec.verdicts = verdicts::all(d, &t1);
    sec.figures = figures::all(d, &t1);
    sec.parameters = serde_json::json!({ "scale": d.scale, "plan": d.plan });
    sec.results = tables::data(d, &t1);
    sec
}

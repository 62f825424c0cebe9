//! Seed 001: the live Linux policy benchmark (registry name `policies`; the module is
//! `linux_policies` to keep it apart from the simulator's `schedlab_sim::policies`).
//!
//! N children of `schedlab-work cpu|io|mixed|empty` (the tiny std-only binary of
//! crates/work, found beside `schedlab`) per case, each set to a Linux policy
//! (OTHER, BATCH, IDLE, FIFO, RR, DEADLINE) before exec, held at a start gate until all
//! exist, released together and reaped with wait4 for their rusage — the seed's
//! sched_test.c, plus wall time, turnaround and throughput, traces and predictions.
//!
//! - [`params`]: what to run, scale presets, input checks.
//! - [`harness`]: safety set-up and one case from spawn to the last reap.
//! - [`case`]: the numbers of one case. [`table_data`]: the seed's text layout.
//! - [`compare`]: the seed's numbers beside ours, verdicts. [`charts`]: the seed's figures.
//! - [`trace`]: `--trace` timelines. [`predict`]: the simulator's prediction.
//! - [`run`]: a whole run, its files and its report section.

pub mod case;
pub mod charts;
pub mod compare;
pub mod harness;
pub mod params;
pub mod predict;
pub mod run;
pub mod table_data;
pub mod trace;

use crate::{Experiment, RunContext, Scale};
use schedlab_report::section::Section;

/// `schedlab reproduce`'s entry for seed 001.
pub struct PoliciesExperiment;

impl Experiment for PoliciesExperiment {
    fn name(&self) -> &'static str {
        "policies"
    }

    fn seed(&self) -> &'static str {
        "001"
    }

    fn title(&self) -> &'static str {
        run::TITLE
    }

    fn scale_of(&self, scale: Scale) -> String {
        match scale {
            Scale::Quick => {
                let n: Vec<String> = params::QUICK_PROCS.iter().map(|n| n.to_string()).collect();
                format!("{} processes per case (seed: 100, 1,000 and 10,000)", n.join(" and "))
            }
            Scale::Default => "100 and 1,000 processes per case (seed: also 10,000)".into(),
            Scale::Full => "100, 1,000 and 10,000 processes per case: the seed's scale".into(),
        }
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        match scale {
            // Per process on one CPU: io ≈ 37 ms (3.7 ms at --quick, a tenth of the bytes),
            // cpu ≈ 5 ms, mixed ≈ 7 ms (about 14 and 16 ms at --quick, four times the
            // samples), empty ≈ 1 ms; × 3 policies, plus a second per case. Quick measured
            // about 21 s here.
            Scale::Quick => 30.0,
            Scale::Default => 190.0,
            Scale::Full => 1800.0,
        }
    }

    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
        if !schedlab_os::is_root() {
            return Ok(Section::unsupported(
                self.name(),
                self.seed(),
                self.title(),
                "SCHED_FIFO and SCHED_RR need root or CAP_SYS_NICE (run `sudo schedlab reproduce`)",
            ));
        }
        let program = params::work_program()?;
        let params = params::Params::for_scale(ctx.scale, program);
        Ok(run::run(&params, ctx.progress)?.section)
    }
}

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(PoliciesExperiment)]
}

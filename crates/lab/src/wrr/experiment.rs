//! The `wrr` experiment (seed 004) for `schedlab reproduce`: the live study at the run's scale.

use super::study::{self, Mechanisms, Plan};
use crate::{Experiment, RunContext, Scale};
use schedlab_report::section::Section;

/// Live weighted round robin beside the seed, the simulator and the kernel's alternatives.
pub struct WrrExperiment;

impl Experiment for WrrExperiment {
    fn name(&self) -> &'static str {
        study::NAME
    }

    fn seed(&self) -> &'static str {
        "004"
    }

    fn title(&self) -> &'static str {
        study::TITLE
    }

    fn scale_of(&self, scale: Scale) -> String {
        let p = study::Plan::for_scale(scale);
        if scale == Scale::Full {
            return format!(
                "test 1: {} runs of {:.1} s ({} whole WRR rounds, the seed's 30 s); test 2: {} runs of {:.0} crypt(3) \
                 calls per task: the seed's scale",
                p.t1_runs,
                p.t1_s(),
                p.t1_rounds,
                p.t2_runs,
                p.t2_scale * 2_000_000.0
            );
        }
        format!(
            "test 1: {} runs of {:.1} s; test 2: {} runs of {:.0} crypt(3) calls per task (seed: 10 runs of 30 s, 2,000,000 calls)",
            p.t1_runs,
            p.t1_s(),
            p.t2_runs,
            p.t2_scale * 2_000_000.0
        )
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        let p = Plan::for_scale(scale);
        let t1 = p.t1_s();
        let t2 = 6.0 * 2_000_000.0 * study::SEED_CRYPT_S * p.t2_scale;
        // + about 0.3 s of start/stop per run.
        p.t1_runs as f64 * (t1 + 0.3) + 3.0 * p.alt_runs as f64 * (t1 + 0.3) + p.t2_runs as f64 * (t2 + 0.3) + 1.0
    }

    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
        study::run(ctx.scale, &Mechanisms::all(), ctx.machine, ctx.progress)
    }
}

//! Seeds 003/004 in simulation: the catalogue of algorithms side by side (`sim-catalogue`,
//! seed 003) and the weighted round robin study (`wrr-sim`, seed 004); plus the pieces the
//! CLI's `schedlab sim` uses (policy comparison, Gantt charts, the benchmark).

pub mod analyze;
pub mod bench;
pub mod catalogue;
pub mod compare;
pub mod gantt;
pub mod job_tables;
pub mod os_models;
pub mod simpy_peer;
pub mod trace_out;
pub mod wrr_section;
pub mod wrr_study;

use crate::{Experiment, RunContext, Scale};
use anyhow::Result;
use schedlab_report::section::Section;
use serde_json::json;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(WrrStudyExperiment), Box::new(CatalogueExperiment)]
}

/// `wrr-sim` (seed 004): the WRR study.
pub struct WrrStudyExperiment;

impl Experiment for WrrStudyExperiment {
    fn name(&self) -> &'static str {
        wrr_section::NAME
    }
    fn seed(&self) -> &'static str {
        "004"
    }
    fn title(&self) -> &'static str {
        "Weighted round robin in simulation: work follows weight, finish time follows start order"
    }
    fn scale_of(&self, scale: Scale) -> String {
        match scale {
            Scale::Quick => "120 of the 720 start orders of the seed's six weights".into(),
            _ => "all 720 start orders of the seed's six weights, 30 s of test 1 (the seed's scale)".into(),
        }
    }
    fn estimate_s(&self, _scale: Scale) -> f64 {
        2.0
    }
    fn run(&self, ctx: &RunContext) -> Result<Section> {
        ctx.progress.update(0.0, "simulating WRR over start orders");
        let orders = match ctx.scale {
            Scale::Quick => Some(120),
            _ => None,
        };
        let o = wrr_study::run(&wrr_study::Params::from_seed(orders, 1));
        ctx.progress.update(1.0, "done");
        Ok(wrr_section::section(&o))
    }
}

/// `sim-catalogue` (seed 003): every policy side by side.
pub struct CatalogueExperiment;

impl Experiment for CatalogueExperiment {
    fn name(&self) -> &'static str {
        "sim-catalogue"
    }
    fn seed(&self) -> &'static str {
        "003"
    }
    fn title(&self) -> &'static str {
        "Seed 003's algorithms and OS schedulers side by side in simulation"
    }
    fn scale_of(&self, scale: Scale) -> String {
        format!(
            "the textbook cases, and a {}-task workload under every policy (the seed gives no workload)",
            catalogue::mixed_workload(scale).tasks.len()
        )
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        match scale {
            Scale::Quick => 2.0,
            Scale::Default => 5.0,
            Scale::Full => 60.0,
        }
    }
    fn run(&self, ctx: &RunContext) -> Result<Section> {
        ctx.progress.update(0.0, "simulating the catalogue");
        let mut s = catalogue::section(ctx.scale);
        s.parameters = json!({ "scale": ctx.scale });
        ctx.progress.update(1.0, "done");
        Ok(s)
    }
}

//! Prediction beside measurement: the cpu-workload cases put through the simulator.
//! (Waiting for the simulator's engine API; until then no prediction is made and the
//! results say so.)

use super::case::CaseResult;
use super::params::Params;
use schedlab_report::section::Table;
use serde_json::{json, Value};

/// Predictions as a results fragment and an optional table.
pub struct Predictions {
    pub doc: Value,
    pub table: Option<Table>,
}

/// Predict the cpu cases of `cases`.
pub fn predictions(_params: &Params, _cases: &[CaseResult]) -> Predictions {
    Predictions {
        doc: json!({ "available": false, "why": "the simulator engine is not part of this build" }),
        table: None,
    }
}

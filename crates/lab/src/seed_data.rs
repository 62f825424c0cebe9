//! The seeds' published tables and arrays, compiled into the binary from
//! `data/seed_numbers.json` (facts copied from the seed documents; see that file).

use serde_json::Value;
use std::sync::OnceLock;

const RAW: &str = include_str!("../../../data/seed_numbers.json");

/// The whole document, parsed once.
pub fn all() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(RAW).expect("data/seed_numbers.json is valid JSON"))
}

/// One seed's entry, e.g. `seed("000_delta_queuing")`; `Value::Null` if absent.
pub fn seed(key: &str) -> &'static Value {
    &all()[key]
}

/// A numeric array from a seed entry, e.g. `numbers("000_delta_queuing", "sleep_times_ms_delta_fig9")`.
pub fn numbers(key: &str, field: &str) -> Vec<f64> {
    seed(key)[field].as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_arrays_are_present() {
        assert_eq!(numbers("000_delta_queuing", "sleep_times_ms_delta_fig9").len(), 100);
        assert_eq!(numbers("000_delta_queuing", "sleep_times_ms_control_fig10").len(), 100);
        assert_eq!(numbers("004_weighted_round_robin", "weights"), vec![1.0, 4.0, 8.0, 12.0, 16.0, 20.0]);
        assert_eq!(seed("001_linux_scheduler")["cases"].as_array().unwrap().len(), 27);
    }
}

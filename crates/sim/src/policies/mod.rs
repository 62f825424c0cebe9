//! One file per scheduling policy, as in Linux's kernel/sched/ (fair.c, rt.c, deadline.c), and
//! [`by_spec`] to build one from a spec string such as `rr:quantum=4`.

pub mod cfs;
pub mod common;
pub mod fcfs;
pub mod rr;
pub mod spec;
pub mod wrr;

pub use cfs::Cfs;
pub use fcfs::Fcfs;
pub use rr::RoundRobin;
pub use spec::{Params, SpecError};
pub use wrr::WeightedRoundRobin;

use crate::policy::Policy;

/// The policy names `by_spec` knows, with their parameters (times in ms), for `--help`.
pub const CATALOGUE: &[(&str, &str)] = &[
    ("fcfs", "first come, first served; no pre-emption"),
    ("rr:quantum=4", "round robin; quantum (default 4)"),
    ("cfs:latency=6,min_granularity=0.75,wakeup_granularity=1", "Linux CFS with the nice-to-weight table"),
    ("wrr:quantum=10", "weighted round robin; slice = quantum × weight (seed 004)"),
];

/// Build a policy from a spec: `name` or `name:key=value,...` (times in ms unless suffixed).
pub fn by_spec(spec: &str) -> Result<Box<dyn Policy>, SpecError> {
    let mut p = Params::parse(spec)?;
    let policy: Box<dyn Policy> = match p.name.as_str() {
        "fcfs" | "fifo" => Box::new(Fcfs::new()),
        "rr" => Box::new(RoundRobin::new(p.time("quantum", 4.0)?)),
        "cfs" => Box::new(Cfs::new(
            p.time("latency", 6.0)?,
            p.time("min_granularity", 0.75)?,
            p.time("wakeup_granularity", 1.0)?,
        )),
        "wrr" => Box::new(WeightedRoundRobin::new(p.time("quantum", 10.0)?)),
        other => {
            let known: Vec<&str> = CATALOGUE.iter().map(|(s, _)| s.split(':').next().unwrap_or(s)).collect();
            return Err(p.error("policy", format!("unknown policy `{other}` (known: {})", known.join(", "))));
        }
    };
    p.finish()?;
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_bad_ones_name_the_field() {
        assert_eq!(by_spec("rr:quantum=4").unwrap().name(), "rr:quantum=4");
        assert_eq!(by_spec("rr:quantum=500us").unwrap().name(), "rr:quantum=0.5");
        assert_eq!(by_spec("fcfs").unwrap().name(), "fcfs");
        assert_eq!(by_spec("cfs").unwrap().name(), "cfs");
        assert!(by_spec("wrr:quantum=10").unwrap().name().starts_with("wrr"));
        let e = by_spec("rr:quantum=0").err().unwrap();
        assert_eq!(e.field, "quantum");
        assert!(e.to_string().contains("> 0"));
        assert_eq!(by_spec("rr:quantom=3").err().unwrap().field, "quantom");
        assert_eq!(by_spec("bogus").err().unwrap().field, "policy");
        assert!(by_spec("bogus").err().unwrap().to_string().contains("bogus"));
        assert_eq!(by_spec("rr:quantum=x").err().unwrap().field, "quantum");
        assert_eq!(by_spec("rr:quantum=-1").err().unwrap().field, "quantum");
    }
}

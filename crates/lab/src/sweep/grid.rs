//! A sweep's grid — policies × workloads (a generator with varied keys, or workload files) ×
//! CPU counts × switch costs × seeds — read from a YAML, TOML or JSON file or built from
//! flags, checked whole before anything runs, and expanded into numbered points. A point's
//! number is its place in the expansion, so every machine that expands the same grid numbers
//! the points alike (what `--shard` and `--resume` rely on).

use anyhow::{bail, Context, Result};
use schedlab_sim::generate;
use schedlab_sim::policies::spec::parse_time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The most points one grid may expand to (a point takes about 200 bytes before it runs).
pub const MAX_POINTS: usize = 5_000_000;

/// A grid as written in a file (every field but `policies` has a default).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// Policy specs, as `schedlab sim policies` lists them.
    pub policies: Vec<String>,
    /// A generator spec without the varied keys and without `seed`, e.g.
    /// `poisson:n=2000,mean=5ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<String>,
    /// Generator keys to vary, each with its values; the grid takes their product.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vary: BTreeMap<String, Vec<Scalar>>,
    /// Workload files, instead of a generator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<String>,
    #[serde(default = "default_cpus")]
    pub cpus: Vec<usize>,
    /// Context-switch costs, with units (`0us`, `50us`).
    #[serde(default = "default_switch_cost")]
    pub switch_cost: Vec<String>,
    /// Generator seeds: a count (1..=N) or a list.
    #[serde(default)]
    pub seeds: Seeds,
    /// The tick of the Linux models (`linux`, `eevdf`): a slice that ran out is noticed at the
    /// next tick. `off` ends slices exactly. The textbook policies always end them exactly.
    /// Fixed here rather than read from the host, so a sweep gives the same rows anywhere.
    #[serde(default = "default_tick")]
    pub tick: String,
    /// One run queue per CPU instead of one global queue.
    #[serde(default)]
    pub per_cpu: bool,
    /// Stop every run at this virtual time (e.g. `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon: Option<String>,
}

fn default_cpus() -> Vec<usize> {
    vec![1]
}
fn default_switch_cost() -> Vec<String> {
    vec!["0us".into()]
}
fn default_tick() -> String {
    "4ms".into()
}

/// A value of a varied key: a number or a word (`5ms`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    /// A value as typed on the command line: a whole number, a number, or a word.
    pub fn parse(text: &str) -> Scalar {
        match (text.parse::<i64>(), text.parse::<f64>()) {
            (Ok(i), _) => Scalar::Int(i),
            (_, Ok(f)) => Scalar::Float(f),
            _ => Scalar::Text(text.to_string()),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Text(v) => write!(f, "{v}"),
        }
    }
}

/// Seeds: `5` means 1..=5; a list names them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Seeds {
    Count(u64),
    List(Vec<u64>),
}

impl Default for Seeds {
    fn default() -> Self {
        Seeds::Count(1)
    }
}

impl Seeds {
    pub fn values(&self) -> Vec<u64> {
        match self {
            Seeds::Count(n) => (1..=*n).collect(),
            Seeds::List(v) => v.clone(),
        }
    }
}

impl Grid {
    /// An empty grid with every default: what the flags fill in.
    pub fn with_policies(policies: Vec<String>) -> Self {
        Grid {
            policies,
            generate: None,
            vary: BTreeMap::new(),
            workloads: vec![],
            cpus: default_cpus(),
            switch_cost: default_switch_cost(),
            seeds: Seeds::default(),
            tick: default_tick(),
            per_cpu: false,
            horizon: None,
        }
    }

    /// Read a grid file: YAML (`.yaml`, `.yml`), TOML (`.toml`) or JSON (anything else).
    pub fn read(path: &Path) -> Result<Grid> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading grid {}", path.display()))?;
        let grid = match path.extension().and_then(|e| e.to_str()) {
            Some("yaml" | "yml") => yaml_serde::from_str(&text).map_err(|e| anyhow::anyhow!("{e}")),
            Some("toml") => toml::from_str(&text).map_err(|e| anyhow::anyhow!("{e}")),
            _ => serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{e}")),
        };
        grid.with_context(|| format!("grid {}", path.display()))
    }

    /// The tick every Linux model runs with (None = exact slice ends).
    pub fn tick_ns(&self) -> Result<Option<u64>> {
        if matches!(self.tick.as_str(), "off" | "none") {
            return Ok(None);
        }
        match parse_time(&self.tick) {
            Ok(0) | Err(_) => bail!("tick '{}': a time with its unit (4ms) or `off`", self.tick),
            Ok(ns) => Ok(Some(ns)),
        }
    }

    /// The horizon in ns, if any.
    pub fn horizon_ns(&self) -> Result<Option<u64>> {
        self.horizon.as_deref().map(|h| parse_time(h).map_err(|e| anyhow::anyhow!("horizon '{h}': {e}"))).transpose()
    }

    /// The switch costs in ns.
    pub fn switch_costs_ns(&self) -> Result<Vec<u64>> {
        self.switch_cost.iter().map(|c| parse_time(c).map_err(|e| anyhow::anyhow!("switch_cost '{c}': {e}"))).collect()
    }

    /// Every combination of the varied keys, in expansion order (the last key varies fastest).
    fn combinations(&self) -> Vec<Vec<String>> {
        let mut out = vec![vec![]];
        for values in self.vary.values() {
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    values.iter().map(move |v| {
                        let mut next = prefix.clone();
                        next.push(v.to_string());
                        next
                    })
                })
                .collect();
        }
        out
    }

    /// Check the grid whole (every spec, every value) and expand it into its points.
    /// `workload_fits(file, cpus)` checks that the grid's `file`-th workload fits `cpus` CPUs.
    pub fn expand(&self, workload_fits: &dyn Fn(usize, usize) -> Result<()>) -> Result<Vec<Point>> {
        if self.policies.is_empty() {
            bail!("a grid needs at least one policy");
        }
        crate::simstudy::compare::check_specs(&self.policies).context("policies")?;
        if self.cpus.is_empty() || self.switch_cost.is_empty() {
            bail!("cpus and switch_cost need at least one value each");
        }
        if let Some(&c) = self.cpus.iter().find(|&&c| c == 0 || c > 1024) {
            bail!("cpus {c}: must be 1..=1024");
        }
        let costs = self.switch_costs_ns()?;
        self.tick_ns()?;
        self.horizon_ns()?;
        let seeds = self.seeds.values();
        if seeds.is_empty() {
            bail!("seeds: give a count ≥ 1 or a list");
        }
        let sources = self.sources(&seeds)?;
        let count = sources.len() * self.cpus.len() * costs.len() * self.policies.len();
        if count > MAX_POINTS {
            bail!("the grid has {count} points, more than {MAX_POINTS}: split it into several grids");
        }
        let mut points = Vec::with_capacity(count);
        for source in &sources {
            let generator = match source {
                Source::Generated { spec, .. } => Some(generate::parse(spec)?),
                Source::File { .. } => None,
            };
            for &cpus in &self.cpus {
                if let Source::File { index, .. } = source {
                    workload_fits(*index, cpus)?;
                }
                // Rounded to 1e-9 so 0.6 is not printed 0.6000000000000001.
                let load = generator.as_ref().map(|g| (g.offered_load(cpus) * 1e9).round() / 1e9);
                for &switch_cost_ns in &costs {
                    for policy in &self.policies {
                        points.push(Point {
                            index: points.len(),
                            policy: policy.clone(),
                            source: source.clone(),
                            cpus,
                            switch_cost_ns,
                            load,
                        });
                    }
                }
            }
        }
        Ok(points)
    }

    /// The workloads of the grid: each combination of varied keys × each seed, or each file.
    fn sources(&self, seeds: &[u64]) -> Result<Vec<Source>> {
        match (&self.generate, self.workloads.is_empty()) {
            (Some(_), false) => bail!("give a generator or workload files, not both"),
            (None, true) => bail!("give a generator (generate) or workload files (workloads)"),
            (None, false) => {
                if !self.vary.is_empty() {
                    bail!("vary changes the generator's keys; workload files have none");
                }
                if self.seeds != Seeds::default() {
                    bail!("seeds change the generator; workload files are fixed (leave seeds out)");
                }
                Ok((0..self.workloads.len())
                    .map(|index| Source::File { index, path: self.workloads[index].clone() })
                    .collect())
            }
            (Some(base), true) => {
                let given = |key: &str| base.split([':', ',']).skip(1).any(|kv| kv.split('=').next() == Some(key));
                for key in self.vary.keys().map(String::as_str).chain(["seed"]) {
                    if given(key) {
                        bail!("generate '{base}' sets `{key}`, which the grid varies (vary or seeds): leave it out");
                    }
                }
                if self.vary.contains_key("seed") {
                    bail!("vary `seed`: use seeds instead");
                }
                if let Some((key, _)) = self.vary.iter().find(|(_, v)| v.is_empty()) {
                    bail!("vary `{key}` has no values");
                }
                let sep = if base.contains(':') { "," } else { ":" };
                let mut out = vec![];
                for combo in self.combinations() {
                    for &seed in seeds {
                        let mut spec = base.clone();
                        let mut s = sep;
                        for (key, value) in self.vary.keys().zip(&combo) {
                            spec.push_str(&format!("{s}{key}={value}"));
                            s = ",";
                        }
                        spec.push_str(&format!("{s}seed={seed}"));
                        generate::parse(&spec).with_context(|| format!("generator '{spec}'"))?;
                        out.push(Source::Generated { spec, vary: combo.clone(), seed });
                    }
                }
                Ok(out)
            }
        }
    }
}

/// Where a point's workload comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A generator spec with every varied key and the seed filled in.
    Generated { spec: String, vary: Vec<String>, seed: u64 },
    /// The grid's `index`-th workload file.
    File { index: usize, path: String },
}

/// One run of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Its place in the expansion.
    pub index: usize,
    pub policy: String,
    pub source: Source,
    pub cpus: usize,
    pub switch_cost_ns: u64,
    /// The generator's offered load on `cpus` CPUs.
    pub load: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(yaml: &str) -> Grid {
        yaml_serde::from_str(yaml).unwrap()
    }

    fn no_files(_: usize, _: usize) -> Result<()> {
        Ok(())
    }

    #[test]
    fn a_grid_expands_to_its_product_in_a_fixed_order() {
        let g = grid(
            "policies: [fcfs, 'rr:quantum=4ms']\ngenerate: 'poisson:n=50,mean=5ms'\nvary: {rate: [50, 100, 150]}\n\
             cpus: [1, 2]\nswitch_cost: [0us, 50us]\nseeds: 2\n",
        );
        let points = g.expand(&no_files).unwrap();
        assert_eq!(points.len(), 2 * 3 * 2 * 2 * 2, "policies × rates × seeds × cpus × costs");
        assert!(points.iter().enumerate().all(|(i, p)| p.index == i));
        let Source::Generated { spec, seed, .. } = &points[0].source else { panic!("generated") };
        assert_eq!(
            (spec.as_str(), *seed, points[0].policy.as_str()),
            ("poisson:n=50,mean=5ms,rate=50,seed=1", 1, "fcfs")
        );
        assert_eq!(points[1].policy, "rr:quantum=4ms", "policies vary fastest");
        assert_eq!(points[2].switch_cost_ns, 50_000);
        // 150/s × 5 ms on 2 CPUs.
        let last = points.last().unwrap();
        assert!((last.load.unwrap() - 0.375).abs() < 1e-12, "{:?}", last.load);
        assert_eq!(g.expand(&no_files).unwrap(), points, "the same grid numbers its points alike");
    }

    #[test]
    fn toml_and_json_grids_read_the_same_as_yaml() {
        let dir = tempfile::tempdir().unwrap();
        let toml_path = dir.path().join("g.toml");
        std::fs::write(
            &toml_path,
            "policies = [\"fcfs\"]\ngenerate = \"poisson:n=5\"\nseeds = [3, 9]\n[vary]\nmean = [\"2ms\", \"4ms\"]\n",
        )
        .unwrap();
        let json_path = dir.path().join("g.json");
        std::fs::write(
            &json_path,
            r#"{"policies":["fcfs"],"generate":"poisson:n=5","seeds":[3,9],"vary":{"mean":["2ms","4ms"]}}"#,
        )
        .unwrap();
        let (t, j) = (Grid::read(&toml_path).unwrap(), Grid::read(&json_path).unwrap());
        assert_eq!(t, j);
        assert_eq!(t.expand(&no_files).unwrap().len(), 4);
    }

    #[test]
    fn mistakes_are_named_before_anything_runs() {
        let err = |yaml: &str| format!("{:#}", grid(yaml).expand(&no_files).unwrap_err());
        assert!(err("policies: [nosuch]\ngenerate: poisson").contains("nosuch"));
        assert!(err("policies: [fcfs]\ngenerate: 'poisson:rate=5'\nvary: {rate: [1]}").contains("sets `rate`"));
        assert!(err("policies: [fcfs]\ngenerate: 'poisson:seed=5'").contains("sets `seed`"));
        assert!(err("policies: [fcfs]\ngenerate: poisson\nvary: {rtae: [1]}").contains("rtae"));
        assert!(err("policies: [fcfs]\ngenerate: poisson\nvary: {mean: [fast]}").contains("fast"));
        assert!(err("policies: [fcfs]").contains("generator"));
        assert!(err("policies: [fcfs]\ngenerate: poisson\ntick: 4").contains("tick"));
        assert!(err("policies: [fcfs]\nworkloads: [a.json]\nseeds: 3").contains("seeds"));
        assert!(yaml_serde::from_str::<Grid>("policies: [fcfs]\nseed: 3").is_err(), "unknown keys are refused");
    }
}

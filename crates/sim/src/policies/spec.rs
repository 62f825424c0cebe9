//! Policy specs: `name` or `name:key=value,key=value` (e.g. `rr:quantum=4ms`). Times carry
//! their unit (`100ns`, `500us`, `2ms`, `1s`): a bare number is refused with the hint, as
//! everywhere on schedlab's command line (only workload files state their unit, ms, once for
//! all). Every key must be known to the policy and every time a policy uses as a quantum must be
//! > 0; errors name the offending key.

use crate::policy::Dur;
use std::fmt;

/// Why a policy spec was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The whole spec as given.
    pub spec: String,
    /// The offending part: the policy name or a key.
    pub field: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}: {}", self.spec, self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

/// The parsed `key=value` list of one spec; policies take what they know, then `finish`.
#[derive(Debug, Clone)]
pub struct Params {
    pub spec: String,
    pub name: String,
    items: Vec<(String, String, bool)>,
}

impl Params {
    /// Split `name:k=v,k=v`.
    pub fn parse(spec: &str) -> Result<Params, SpecError> {
        let spec_s = spec.trim().to_string();
        let (name, rest) = match spec_s.split_once(':') {
            Some((n, r)) => (n.trim().to_ascii_lowercase(), r.trim().to_string()),
            None => (spec_s.to_ascii_lowercase(), String::new()),
        };
        let mut p = Params { spec: spec_s.clone(), name, items: vec![] };
        if p.name.is_empty() {
            return Err(p.error("policy", "empty policy name"));
        }
        if !rest.is_empty() {
            for kv in rest.split(',') {
                let Some((k, v)) = kv.split_once('=') else {
                    return Err(p.error(kv, "expected key=value"));
                };
                let k = k.trim().to_ascii_lowercase();
                if p.items.iter().any(|(x, _, _)| *x == k) {
                    return Err(p.error(&k, "given twice"));
                }
                p.items.push((k, v.trim().to_string(), false));
            }
        }
        Ok(p)
    }

    pub fn error(&self, field: &str, message: impl Into<String>) -> SpecError {
        SpecError { spec: self.spec.clone(), field: field.into(), message: message.into() }
    }

    fn take(&mut self, key: &str) -> Option<String> {
        let item = self.items.iter_mut().find(|(k, _, _)| k == key)?;
        item.2 = true;
        Some(item.1.clone())
    }

    /// A positive duration.
    pub fn time(&mut self, key: &str, default_ms: f64) -> Result<Dur, SpecError> {
        match self.take(key) {
            None => Ok((default_ms * 1e6).round() as Dur),
            Some(v) => {
                let d = parse_time(&v).map_err(|e| self.error(key, e))?;
                if d == 0 {
                    return Err(self.error(key, "must be > 0"));
                }
                Ok(d)
            }
        }
    }

    /// A duration that may be 0; absent = `default` (ns).
    pub fn time_or_zero(&mut self, key: &str, default: Dur) -> Result<Dur, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => parse_time(&v).map_err(|e| self.error(key, e)),
        }
    }

    /// An optional positive duration; `0` or absent = off.
    pub fn time_opt(&mut self, key: &str) -> Result<Option<Dur>, SpecError> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => {
                let d = parse_time(&v).map_err(|e| self.error(key, e))?;
                Ok((d > 0).then_some(d))
            }
        }
    }

    /// An unsigned integer in `lo..=hi`.
    pub fn uint(&mut self, key: &str, default: u64, lo: u64, hi: u64) -> Result<u64, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let n: u64 = v.parse().map_err(|_| self.error(key, format!("`{v}` is not a whole number")))?;
                if !(lo..=hi).contains(&n) {
                    return Err(self.error(key, format!("must be {lo}..={hi}, got {n}")));
                }
                Ok(n)
            }
        }
    }

    /// A raw string value.
    pub fn string(&mut self, key: &str) -> Option<String> {
        self.take(key)
    }

    /// Reject keys nobody took.
    pub fn finish(&self) -> Result<(), SpecError> {
        match self.items.iter().find(|(_, _, used)| !used) {
            Some((k, _, _)) => Err(self.error(k, format!("unknown parameter for `{}`", self.name))),
            None => Ok(()),
        }
    }
}

/// `4.5ms`, `500us`, `100ns`, `2s` → ns. A bare number is refused, naming the unit to add.
pub fn parse_time(s: &str) -> Result<Dur, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else if s.parse::<f64>().is_ok() {
        return Err(format!("`{s}` has no unit: write {s}ms (or us, ns, s)"));
    } else {
        return Err(format!("`{s}` is not a time like 4ms, 500us or 1.5s"));
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("`{s}` is not a time like 4ms, 500us or 1.5s"))?;
    if !v.is_finite() || v < 0.0 || v * mult > 1e18 {
        return Err(format!("`{s}` is out of range (0 to 1e18 ns)"));
    }
    Ok((v * mult).round() as Dur)
}

/// Format ns as ms for policy names (`4ms`, `0.5ms`), a spelling the spec parser reads back.
pub fn ms(d: Dur) -> String {
    format!("{}ms", d as f64 / 1e6)
}

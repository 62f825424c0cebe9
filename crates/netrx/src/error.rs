//! The error for rejected parameters: which parameter, the offending value, and why.

/// A parameter was rejected before anything started.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid {name}: {value} ({why})")]
pub struct ParamError {
    pub name: String,
    pub value: String,
    pub why: String,
}

impl ParamError {
    /// Reject `value` of parameter `name` because `why`.
    pub fn new(name: &str, value: impl ToString, why: impl Into<String>) -> Self {
        ParamError { name: name.to_string(), value: value.to_string(), why: why.into() }
    }
}

//! placeholder
use anyhow::{bail, Result};
use schedlab_report::section::Section;
pub struct Which;
impl Which {
    pub fn parse(_s: &[String]) -> Result<Self> {
        Ok(Which)
    }
}
pub fn run_study(_s: crate::Scale, _w: &Which, _o: &std::path::Path, _p: &dyn crate::Progress) -> Result<Section> {
    bail!("todo")
}

//! `schedlab wrr`: live weighted round robin (seed 004).

/// Arguments of `schedlab wrr`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab wrr`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab wrr` is not part of this build yet")
}

//! `schedlab policies`: the live policy benchmark (seed 001).

/// Arguments of `schedlab policies`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab policies`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab policies` is not part of this build yet")
}

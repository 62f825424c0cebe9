//! `schedlab sim`: the scheduling simulator (seeds 003, 004).

/// Arguments of `schedlab sim`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab sim`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab sim` is not part of this build yet")
}

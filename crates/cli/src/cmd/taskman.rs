//! `schedlab taskman`: the task manager (seed 003).

/// Arguments of `schedlab taskman`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab taskman`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab taskman` is not part of this build yet")
}

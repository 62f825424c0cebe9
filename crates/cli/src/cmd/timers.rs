//! `schedlab timers`: timer queues (seed 000).

/// Arguments of `schedlab timers`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab timers`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab timers` is not part of this build yet")
}

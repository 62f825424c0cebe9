//! `schedlab livelock`: receive livelock (seed 002).

/// Arguments of `schedlab livelock`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab livelock`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab livelock` is not part of this build yet")
}

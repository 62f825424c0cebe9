//! `schedlab results`: the results database.

/// Arguments of `schedlab results`.
#[derive(clap::Args)]
pub struct Args {}

/// Run `schedlab results`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`schedlab results` is not part of this build yet")
}

//! `schedlab completions SHELL` and `schedlab man`: what a shell and `man` need to know about
//! the command line, generated from the same clap definitions that parse it, so they never
//! drift from the binary.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Print a completion script for a shell.
///
/// Load it for this session, or install it for good:
///
///   source <(schedlab completions bash)
///   schedlab completions bash > /etc/bash_completion.d/schedlab
///   schedlab completions zsh > "${fpath[1]}/_schedlab"
///   schedlab completions fish > ~/.config/fish/completions/schedlab.fish
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Print the manual page (roff), or write one page per command.
///
///   schedlab man | man -l -
///   schedlab man --out /usr/local/share/man/man1 && man schedlab-sim-run
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ManArgs {
    /// Write schedlab.1 and one schedlab-<command>.1 per command and subcommand into DIR
    /// (created if missing) instead of printing the top page.
    #[arg(long, value_name = "DIR", value_parser = crate::paths::writable_dir)]
    out: Option<PathBuf>,
}

pub fn completions(a: CompletionsArgs, mut cli: clap::Command) -> Result<()> {
    let name = cli.get_name().to_string();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cli, name, &mut out);
    Ok(out.flush()?)
}

pub fn man(a: ManArgs, mut cli: clap::Command) -> Result<()> {
    cli.build();
    match a.out {
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cli).render(&mut out)?;
            Ok(out.flush()?)
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let written = write_pages(&cli, cli.get_name(), &dir)?;
            println!("wrote {written} manual pages to {}", dir.display());
            Ok(())
        }
    }
}

/// Write `name.1` for `cmd` and recurse into its subcommands (`name-sub.1`); the count written.
fn write_pages(cmd: &clap::Command, name: &str, dir: &Path) -> Result<usize> {
    let page: &'static str = Box::leak(name.to_string().into_boxed_str());
    let path = dir.join(format!("{name}.1"));
    let mut file = std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
    clap_mangen::Man::new(cmd.clone().name(page)).render(&mut file)?;
    let mut written = 1;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        written += write_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(written)
}

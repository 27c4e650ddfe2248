//! `autoctl completions SHELL` and `autoctl man [--out DIR]`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use clap_complete::Shell;

use crate::docs;
use crate::error::Exit;
use crate::fsx;
use crate::output;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_name = "SHELL", value_parser = clap::builder::EnumValueParser::<Shell>::new())]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page (one per subcommand) into DIR instead of printing the top page
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `cli` is the whole command tree, handed in by the dispatcher.
pub fn run_completions(args: &CompletionsArgs, cli: clap::Command) -> Result<Exit> {
    output::raw(&docs::completion(cli, args.shell))?;
    Ok(Exit::Yes)
}

/// `cli` is the whole command tree, handed in by the dispatcher.
pub fn run_man(args: &ManArgs, cli: clap::Command) -> Result<Exit> {
    let pages = docs::man_pages(cli);
    match &args.out {
        None => output::raw(&pages[0].1)?,
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            for (name, page) in &pages {
                fsx::atomic_write(&dir.join(name), page)?;
            }
            crate::output::note(&format!(
                "wrote {} man pages to {} (`man autoctl` finds them when that is a man/man1 directory beside a bin directory on your PATH, or in MANPATH)",
                pages.len(),
                dir.display()
            ));
        }
    }
    Ok(Exit::Yes)
}

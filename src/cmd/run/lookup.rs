//! `autoctl run lookup`: the session whose loop owns a task dir.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::output;
use crate::supervise::control;
use crate::supervise::store::Registry;

/// Print the session whose loop owns a task dir (exit 1 when no loop runs there)
#[derive(Debug, Args)]
pub struct LookupArgs {
    /// The task module directory
    #[arg(long, value_name = "DIR")]
    pub task: PathBuf,
    /// Output format (json: {"session_name","status"})
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

pub fn run(args: &LookupArgs) -> Result<Exit> {
    let key = control::task_key(&args.task)?;
    let owner = match super::open_existing(&args.registry)? {
        None => None,
        Some(mut registry) => registry.find_task(&key)?,
    }
    .filter(|run| run.status.is_active());
    let Some(run) = owner else {
        return Ok(Exit::No);
    };
    match args.format {
        Format::Text => output::line(&run.spec.session)?,
        Format::Json => output::json_line(&serde_json::json!({
            "session_name": run.spec.session,
            "status": run.status,
        }))?,
    }
    Ok(Exit::Yes)
}

//! `autoctl run stop`: write `.auto-stop` and end the run.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use crate::error::Exit;
use crate::protocol::stop::REASONS;
use crate::supervise::control;
use crate::time;

/// Stop a loop: write `.auto-stop` and end the run
///
/// The agent sees the stop file at its next iteration boundary, exits, and removes its
/// `.auto-signal` and `.auto-stop` (ai-cli-task's cleanup split). In dispatch mode autoctl
/// owns the signal and removes it here. Stopping a run that has already ended warns and
/// succeeds.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "task"])))]
pub struct StopArgs {
    /// The run's session
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The run's task module directory
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Why the loop stops (written to `.auto-stop` and kept in the registry)
    #[arg(long, value_name = "REASON", default_value = "user_stop",
          value_parser = clap::builder::PossibleValuesParser::new(REASONS))]
    pub reason: String,
    /// A human-readable detail, kept in `.auto-stop` and the registry
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

pub fn run(args: &StopArgs) -> Result<Exit> {
    if args
        .message
        .as_ref()
        .is_some_and(|m| m.chars().count() > 4096)
    {
        bail!("--message is longer than 4096 characters");
    }
    let mut registry = super::open(&args.registry)?;
    let session = args.session.as_deref();
    let task = args.task.as_deref();
    let Some(run) = control::find(&mut registry, session, task)? else {
        bail!("no run for {}", control::describe_selection(session, task));
    };
    let now = time::now()?;
    control::stop(
        &mut registry,
        &run,
        &args.reason,
        args.message.as_deref(),
        now,
    )?;
    // A run started --unattended leaves its pane's agent to a person again.
    if let Ok(store) = crate::hook::store::Store::from_env() {
        store.unmark_unattended(&run.spec.session);
    }
    Ok(Exit::Yes)
}

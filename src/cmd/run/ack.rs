//! `autoctl run ack`: a person saw why a run needs them; clear `needs-person`.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use crate::error::Exit;
use crate::output;
use crate::supervise::control;

/// Acknowledge a run that needs a person: clear its needs-person state (the loop goes on)
///
/// An escalated run is in `needs-person` (`run status`, the autoctl_run_needs_person
/// metric, a reminder every --renotify) until its screen changes or a person runs `run ack`
/// (or `run continue`). The acknowledged screen is not escalated again; a new screen that
/// needs a person is. A dispatched command left half-typed at the prompt and escalated is
/// cleared and typed once more after the acknowledgement. Exit 1, with a warning, when the
/// run does not need a person.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "task"])))]
pub struct AckArgs {
    /// The run's session
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The run's task module directory
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

pub fn run(args: &AckArgs) -> Result<Exit> {
    let session = args.session.as_deref();
    let task = args.task.as_deref();
    let mut registry = super::open(&args.registry)?;
    let Some(run) = control::find(&mut registry, session, task)? else {
        bail!("no run for {}", control::describe_selection(session, task));
    };
    match control::acknowledge(&mut registry, &run.spec.session)? {
        Some(_) => Ok(Exit::Yes),
        None => {
            output::warn(&format!(
                "the run of session {:?} does not need a person",
                run.spec.session
            ));
            Ok(Exit::No)
        }
    }
}

//! `autoctl run continue`: seed 002's "Silent Continue" on demand, with its race protection.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

use crate::error::Exit;
use crate::output;
use crate::pane::rules::RuleSet;
use crate::supervise::control;
use crate::supervise::stall;
use crate::time;
use crate::tmux::Tmux;

/// Send a continuation into a run's pane unless the task moved on (exit 1, nothing sent)
///
/// task-ai's "Silent Continue" with its race protection: under the pane's typing lock
/// (the one `run tick` and `stall check` answer under), read the task's `.status.json`
/// `updated_at` (else the file's modification time, as `run tick` reports it in
/// `saw.status_updated_at`) and type TEXT and Enter only when it is still UPDATED_AT. When
/// it changed, or the status can no longer be read, the user or the agent already moved
/// the task on: nothing is sent and the exit status is 1, with the reason on stderr. The
/// same holds when the pane does not show the agent idle at its own input (a permission
/// menu, whose Enter would approve option 1; a shell; another program in front). Text that
/// was sent also clears the run's needs-person state (as `run ack` does).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "task"])))]
pub struct ContinueArgs {
    /// The run's session
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The run's task module directory
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Send only if `.status.json`'s `updated_at` is still exactly this text
    #[arg(long, value_name = "UPDATED_AT", allow_hyphen_values = true)]
    pub if_unchanged: String,
    /// What to type (then Enter)
    #[arg(long, value_name = "TEXT", default_value = stall::step_timeout::CONTINUATION)]
    pub text: String,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

pub fn run(args: &ContinueArgs, socket: Option<String>) -> Result<Exit> {
    stall::step_timeout::check_continuation(&args.text)?;
    let session = args.session.as_deref();
    let task = args.task.as_deref();
    let run = match super::open_existing(&args.registry)? {
        None => None,
        Some(mut registry) => control::find(&mut registry, session, task)?,
    };
    let Some(run) = run else {
        bail!("no run for {}", control::describe_selection(session, task));
    };
    let tmux = Tmux::new(socket.clone())?;
    let world = super::world(
        &tmux,
        socket.as_deref(),
        RuleSet::embedded(),
        crate::policy::screen::Approval::builtin(),
    )?;
    match control::continue_run(&world, &run, &args.if_unchanged, &args.text, time::now()?)? {
        None => {
            // A person continued the loop: it no longer needs one.
            control::acknowledge(&mut super::open(&args.registry)?, &run.spec.session)?;
            Ok(Exit::Yes)
        }
        Some(why) => {
            output::warn(&format!("nothing sent: {why}"));
            Ok(Exit::No)
        }
    }
}

//! `autoctl run …`: the daemon's state as commands over the run registry
//! (`$AUTOCTL_STATE_DIR/autoctl.db`), one file per command with its arguments beside its
//! function (jj's `commands/bookmark/`). The rules live in [`crate::supervise::control`]
//! (start, stop, continue) and [`crate::supervise::driver`] (tick, recover, watch).

mod ack;
mod continue_run;
mod lookup;
mod recover;
mod start;
mod status;
mod stop;
mod text;
mod tick;
mod turn;
mod wait_args;
mod watch;

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;

use crate::error::{Exit, Reported};
use crate::output;
use crate::pane::rules::RuleSet;
use crate::policy::screen::Approval;
use crate::registry::{Database, Location};
use crate::supervise::driver::World;
use crate::supervise::tick::{Decision, TickEvent};
use crate::tmux::Tmux;

pub use ack::AckArgs;
pub use continue_run::ContinueArgs;
pub use lookup::LookupArgs;
pub use recover::RecoverArgs;
pub use start::StartArgs;
pub use status::{StatusArgs, StatusFormat};
pub use stop::StopArgs;
pub use tick::{HookFreshArg, TickArgs};
pub use turn::TurnArgs;
pub use wait_args::{NotifyArgs, WaitArgs, WaitLimitArgs};
pub use watch::WatchArgs;

// Built whole, unlike the other groups (`defer`): each command's help is its Args' doc
// comment, which a deferred build applies only when that command is parsed, so `run --help`
// would list the commands without it.
#[derive(Debug, Subcommand)]
pub enum RunCommand {
    Start(Box<StartArgs>),
    Stop(StopArgs),
    Status(StatusArgs),
    Lookup(LookupArgs),
    Tick(TickArgs),
    Continue(ContinueArgs),
    Ack(AckArgs),
    Recover(RecoverArgs),
    Watch(WatchArgs),
    Turn(TurnArgs),
}

pub fn run(command: RunCommand, socket: Option<String>) -> Result<Exit> {
    match command {
        RunCommand::Start(args) => start::run(&args, socket),
        RunCommand::Stop(args) => stop::run(&args),
        RunCommand::Status(args) => status::run(&args),
        RunCommand::Lookup(args) => lookup::run(&args),
        RunCommand::Tick(args) => tick::run(&args, socket),
        RunCommand::Continue(args) => continue_run::run(&args, socket),
        RunCommand::Ack(args) => ack::run(&args),
        RunCommand::Recover(args) => recover::run(&args, socket),
        RunCommand::Watch(args) => watch::run(&args, socket),
        RunCommand::Turn(args) => turn::run(&args),
    }
}

/// The state directory from the environment.
fn state_dir() -> Result<PathBuf> {
    crate::supervise::state_dir()
}

/// `--registry`: where the registry is, for every `run` command.
#[derive(Debug, Clone, clap::Args)]
pub struct RegistryArg {
    /// The registry: a postgres:// URL (one database a fleet of hosts shares; TLS as its
    /// sslmode says). Default: the SQLite file in $AUTOCTL_STATE_DIR
    #[arg(long, value_name = "URL", env = crate::registry::REGISTRY_VAR, hide_env_values = true)]
    pub registry: Option<String>,
}

impl RegistryArg {
    pub fn location(&self) -> Result<Location> {
        Location::from_arg(self.registry.as_deref())
    }
}

fn open(arg: &RegistryArg) -> Result<Database> {
    arg.location()?.open()
}

/// The registry for a tick or a recovery: `None` when no database exists yet.
fn open_for_ticks(arg: &RegistryArg) -> Result<Option<Database>> {
    arg.location()?.open_for_ticks()
}

/// The registry for a reader: `None` when no database exists yet.
fn open_existing(arg: &RegistryArg) -> Result<Option<Database>> {
    arg.location()?.open_existing()
}

fn world<'a>(
    tmux: &'a Tmux,
    socket: Option<&'a str>,
    rules: &'a RuleSet,
    approval: &'static Approval,
) -> Result<World<'a>> {
    Ok(World {
        terminal: tmux,
        socket,
        rules,
        approval,
        state_dir: state_dir()?,
        host: crate::host::this_host()?,
    })
}

/// Print events, one JSON line each; failed runs also get a line on stderr.
fn print_events(events: &[TickEvent]) -> Result<Exit> {
    let mut failed = false;
    for event in events {
        output::json_line(event)?;
        if event.decision == Decision::Error {
            failed = true;
            output::error_line(&format!(
                "session {:?}: {}",
                event.session,
                event.reasons.join("; ")
            ));
        }
    }
    if failed {
        return Err(Reported.into());
    }
    Ok(Exit::Yes)
}

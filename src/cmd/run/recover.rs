//! `autoctl run recover`: ai-cli-task's server recovery for every running loop.

use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::error::Exit;
use crate::supervise::driver::runs;
use crate::supervise::tick::TickOptions;
use crate::time;
use crate::tmux::Tmux;

/// Recover running loops after a restart (ai-cli-task's server recovery)
///
/// For each running run: remove a stale `.auto-stop`, look at the pane (the agent is alive:
/// keep watching; a shell is in front: type the run's --launch command again, or in
/// dispatch mode let the next tick dispatch the resume point; the pane is gone: the run is
/// lost), and reset the stall baseline. Prints one JSON line per run, like `run tick`.
#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// Decide and print, but change nothing
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub rules: crate::cmd::pane::RulesOption,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

pub fn run(args: &RecoverArgs, socket: Option<String>) -> Result<Exit> {
    let rules = crate::cmd::pane::load_rules(args.rules.rules.as_ref())?;
    let Some(mut registry) = super::open_for_ticks(&args.registry)? else {
        return Ok(Exit::Yes);
    };
    let tmux = Tmux::new(socket.clone())?;
    let world = super::world(
        &tmux,
        socket.as_deref(),
        rules,
        crate::cmd::pane::load_approval(&args.rules, true)?,
    )?;
    let options = TickOptions {
        heartbeat: Duration::from_secs(60),
        dry_run: args.dry_run,
        answers: false,
        channels: Default::default(),
        waits: crate::supervise::wait::WaitOptions::default(),
        governor: crate::supervise::governor::Options::DEFAULT,
        host_lease: crate::supervise::store::HOST_LEASE,
    };
    let events = runs::recover_runs(&mut registry, &world, &options, time::now()?)?;
    // A run found lost is announced to $AUTOCTL_NOTIFY and the run's own command.
    let notifier = crate::supervise::notify::Notifier {
        command: std::env::var(crate::supervise::notify::ENV).ok(),
        timeout: crate::duration::parse(crate::supervise::notify::DEFAULT_TIMEOUT)
            .map_err(anyhow::Error::msg)?,
    };
    let printed = super::print_events(&events);
    notifier.announce(&mut registry, &events, time::now()?);
    printed
}

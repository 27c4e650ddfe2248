//! `autoctl run tick`: one heartbeat for running loops, one JSON line per run.

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::error::Exit;
use crate::output;
use crate::supervise::driver::runs;
use crate::supervise::governor;
use crate::supervise::store::Selection;
use crate::supervise::tick::TickOptions;
use crate::time;
use crate::tmux::Tmux;

/// One heartbeat for running loops; prints one JSON line per run
///
/// For each run: read `.auto-signal` (a new iteration moves the counters and restores the
/// per-iteration recovery budget; an invalid signal is reported, not fatal), enforce
/// --max-iterations and --timeout (quota waits excluded) by writing `.auto-stop`, run the
/// stall heartbeat (answer safe prompts within --max-answers per step, given at run start;
/// escalate the rest; stop past the stall-recovery limits), in dispatch mode type the next
/// step's command where the run dispatches (`--into agent`: at the agent's empty input box;
/// `--into shell`: at a shell prompt), and detect the loop's end: a `(stop)` signal, a
/// signal the agent removed at loop exit, a stop file, a shell prompt in front of a dead agent
/// (two heartbeats in a row), a pane or task dir that is gone.
///
/// Safe every minute from cron and when ticks overlap: each run is claimed in the registry
/// (a lease of two minutes) so one tick at a time decides for it, and stall heartbeats
/// are spaced by --heartbeat, so overlapping ticks never count one minute twice. Runs are
/// isolated: one run's error, or a bug in autoctl while ticking it, is that run's `error`
/// event and the others are still ticked; SIGINT, SIGTERM or SIGHUP ends the tick between
/// runs (a second one at once), every claim given back. Exit 0 when every selected run was
/// ticked, 1 when --session names no run, 2 when a run's tick failed (each failure is also
/// one line on stderr), 130 when interrupted.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "all"])))]
pub struct TickArgs {
    /// Tick this session's run
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Tick every running run
    #[arg(long)]
    pub all: bool,
    /// Decide and print, but change nothing (no keys typed, no files written, no state saved)
    #[arg(long)]
    pub dry_run: bool,
    /// How often ticks are scheduled; stall heartbeats are spaced at least half of it apart
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub heartbeat: Duration,
    #[command(flatten)]
    pub waits: super::NotifyArgs,
    #[command(flatten)]
    pub rules: crate::cmd::pane::RulesOption,
    #[command(flatten)]
    pub channels: ChannelArgs,
    #[command(flatten)]
    pub governor: GovernorArgs,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

/// The quota governor and the fleet's hosts, for `run tick` and `run watch`.
#[derive(Debug, Args)]
pub struct GovernorArgs {
    /// No new step starts (and no resume is typed) while the account's 5-hour window is at
    /// PERCENT or a step would take it past PERCENT (the cost of a step is learned from the
    /// windows' movement); the run waits, quota-paced, for the reset
    #[arg(long, value_name = "PERCENT", default_value_t = governor::DEFAULT_PACE_STOP,
          value_parser = clap::value_parser!(u8).range(1..=100))]
    pub pace_stop: u8,
    /// After a reset, release waiting runs of an account in priority order, at most N a
    /// minute (a session that continued by itself counts as one)
    #[arg(long, value_name = "N", default_value_t = governor::DEFAULT_RESUME_BURST,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub resume_burst: u32,
    /// With PERCENT or less of the 7-day window left, only runs with a priority above
    /// --weekly-priority start steps; the account is escalated once
    #[arg(long, value_name = "PERCENT", default_value_t = governor::DEFAULT_WEEKLY_RESERVE,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub weekly_reserve: u8,
    /// The priority (`run start --priority`) a run needs above it to use the weekly reserve
    #[arg(long, value_name = "N", default_value_t = governor::DEFAULT_WEEKLY_PRIORITY,
          allow_hyphen_values = true)]
    pub weekly_priority: i32,
    /// Do not pace: every step and resume goes ahead whatever the account's windows say
    #[arg(long)]
    pub no_governor: bool,
    /// A host whose ticks and watcher have not renewed its lease for this long is shown
    /// host-lost and announced once (its runs are never typed into from elsewhere)
    #[arg(long, value_name = "DURATION", default_value = "2m",
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub host_lease: Duration,
}

impl GovernorArgs {
    pub fn options(&self) -> governor::Options {
        governor::Options {
            enabled: !self.no_governor,
            pace_stop: self.pace_stop,
            resume_burst: self.resume_burst,
            weekly_reserve: self.weekly_reserve,
            weekly_priority: self.weekly_priority,
        }
    }
}

/// How `run tick` and `run watch` use the agent's hooks and status line.
#[derive(Debug, Args)]
pub struct ChannelArgs {
    /// Type /compact when the status line's context use reaches PERCENT and the agent is idle
    /// at its prompt (once per crossing, as the iteration's first compaction; 0: never)
    /// [default: the task's compaction_threshold in its .type-profile.md, else 82 for a
    /// task-ai module (one with a .status.json), else 70]
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compact_at: Option<u8>,
    /// Wait out a weekly usage limit (the status line's seven_day at 100%) instead of
    /// escalating it
    #[arg(long)]
    pub wait_weekly: bool,
    #[command(flatten)]
    pub fresh: HookFreshArg,
}

// `--hook-fresh`, for every command that reads the agent's hook state against its screen
// (`run tick`, `run watch`, `stall check`). A plain comment: a doc comment would become the
// help text of every command this is flattened into (their arguments are built on first use,
// after the command's own doc comment is applied).
#[derive(Debug, Args)]
pub struct HookFreshArg {
    /// A hook state older than this, or older than the last change of what the screen shows
    /// (its class), is not trusted; the screen decides
    #[arg(long, value_name = "DURATION", default_value = "10m",
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub hook_fresh: Duration,
}

impl HookFreshArg {
    /// The channel options of a command that only cross-checks (no waits, no compaction).
    pub fn options(&self) -> crate::supervise::channels::ChannelOptions {
        crate::supervise::channels::ChannelOptions {
            fresh: self.hook_fresh,
            ..crate::supervise::channels::ChannelOptions::DEFAULT
        }
    }
}

impl ChannelArgs {
    pub fn options(&self) -> crate::supervise::channels::ChannelOptions {
        crate::supervise::channels::ChannelOptions {
            fresh: self.fresh.hook_fresh,
            compact_at: match self.compact_at {
                None => Some(crate::supervise::channels::DEFAULT_COMPACT_AT),
                Some(0) => None,
                Some(at) => Some(at),
            },
            compact_at_given: self.compact_at.is_some(),
            wait_weekly: self.wait_weekly,
        }
    }
}

pub fn run(args: &TickArgs, socket: Option<String>) -> Result<Exit> {
    let rules = crate::cmd::pane::load_rules(args.rules.rules.as_ref())?;
    // A tick from cron on a machine where nothing was ever started has nothing to do, and
    // must not create state.
    let Some(mut registry) = super::open_for_ticks(&args.registry)? else {
        if let Some(session) = &args.session {
            output::warn(&format!("no run for session {session:?}"));
            return Ok(Exit::No);
        }
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
        heartbeat: args.heartbeat,
        dry_run: args.dry_run,
        answers: true,
        channels: args.channels.options(),
        waits: args.waits.options(),
        governor: args.governor.options(),
        host_lease: args.governor.host_lease,
    };
    let notifier = args.waits.notifier();
    let now = time::now()?;
    // From here on a SIGINT/SIGTERM/SIGHUP ends the tick between runs, every claim given back.
    crate::supervise::driver::isolation::install_interrupts()
        .context("cannot install the signal handlers")?;
    let events = match &args.session {
        // The per-run decision a notification-driven driver calls, one run at a time.
        Some(session) => match runs::tick_session(&mut registry, &world, session, &options, now)? {
            Some(event) => vec![event],
            None => {
                output::warn(&format!("no run for session {session:?}"));
                return Ok(Exit::No);
            }
        },
        None => runs::tick_runs(&mut registry, &world, Selection::All, &options, now)?,
    };
    // Announce after printing: the decisions are saved (their events in the runs' outboxes),
    // and a slow notify command never delays the tick's answer (it is bounded by
    // --notify-timeout). What a killed tick left undelivered goes out with them.
    let printed = super::print_events(&events);
    crate::failpoint::hit("tick-saved-not-announced");
    notifier.announce(&mut registry, &events, now);
    if crate::supervise::driver::isolation::interrupted() {
        return Err(crate::error::Interrupted.into());
    }
    printed
}

//! `autoctl stall check`: one stall heartbeat over one or many panes. The arguments; the
//! heartbeat itself is [`crate::supervise::driver::check`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};

use crate::error::{Exit, Reported};
use crate::output;
use crate::pane::Agent;
use crate::supervise::driver::World;
use crate::supervise::driver::check::{self, CheckOptions};
use crate::supervise::stall::{Limits, reasoning, step_timeout};
use crate::tmux::{self, Tmux};

use super::pane::{RulesOption, load_rules};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum StallCommand {
    /// Run one stall heartbeat: capture, compare with the last capture, decide, maybe recover
    ///
    /// A pane whose normalized screen is unchanged for --threshold captures is stalled; its
    /// classification decides: answer a safe prompt, escalate a destructive one or a
    /// trust/login/picker screen (once per distinct screen), wait out quota and rate limits
    /// (never a stall, no recovery spent). Every wait ends, as in `run tick`: the wait core
    /// gives each one (the agent's retries, a usage limit, a give-up, a wedged stream, a
    /// running tool, an unknown screen) its end and its maximum; at its end the agent is
    /// resumed once (`resume`, the --resume-text) or a wedged stream gets one Esc (`esc`), and
    /// past its maximum a person is asked (`escalate`). An answer is not a recovery: it spends
    /// --max-answers (per step), and past it the prompt is escalated, never stopped. Past the
    /// recovery limits, --task DIR gets an `.auto-stop` with reason stall_limit. A shell in front (the agent
    /// exited) is reported as `restart`, which stall check leaves to the loop. Without
    /// --apply nothing is typed or written except the state: the output says what would be
    /// done.
    ///
    /// With Claude Code's hooks wired (`autoctl hook install`), the pane's hook state is
    /// read first, as `run tick` reads it: fresh (younger than --hook-fresh and newer than
    /// the last change of what the screen shows) it decides a prompt at once instead of after --threshold
    /// captures, and the agent's messages come from its Stop hooks; when hooks and screen
    /// disagree about a prompt it is escalated, never answered. Each line's `state` says
    /// what the heartbeat went by and where it came from (hook, statusline, app-server, screen).
    ///
    /// Content-based stalls (task-ai's): on a Claude Code screen, the same agent message
    /// --repeat-limit times in a row is a reasoning loop (`.auto-stop` with reason
    /// reasoning_loop). With --task, no `.status.json` update for --step-timeout makes the
    /// pane stalled whatever its screen does: a safe prompt is answered, an idle agent gets
    /// --continue-text (only if `updated_at` is still the one seen), anything else is
    /// escalated; each restarts the step clock. A quota-wait record of
    /// `hook stop-failure` in the task's project (the nearest `.autoctl/` above DIR) is a
    /// wait, like a quota banner.
    ///
    /// Prints one JSON line per target. All targets are captured in one tmux call.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("panes").required(true).args(["targets", "all_panes"]))]
pub struct CheckArgs {
    /// A pane to check (repeat for several)
    #[arg(long = "target", value_name = "TARGET", value_parser = tmux::parse_target)]
    pub targets: Vec<String>,
    /// Check every pane of the tmux server
    #[arg(long)]
    pub all_panes: bool,
    /// Where the state is kept [default: $AUTOCTL_STATE_DIR/stall/SOCKET.json]
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Unchanged captures that make a stall
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub threshold: u32,
    /// Recoveries allowed per signal iteration
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_recoveries_per_iteration: u32,
    /// Recoveries allowed in total
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_recoveries: u32,
    /// Harmless prompts answered per step (a new .auto-signal starts a step); past it the
    /// prompt is escalated. Answers are not recoveries
    #[arg(long, value_name = "N", default_value_t = crate::supervise::stall::DEFAULT_MAX_ANSWERS)]
    pub max_answers: u32,
    /// Carry the decision out: type the answer, write .auto-stop past the limits
    #[arg(long)]
    pub apply: bool,
    /// The task module the pane works on: a new .auto-signal iteration restores the
    /// per-iteration budget, and past the limits its .auto-stop is written
    #[arg(long, value_name = "DIR", conflicts_with = "all_panes")]
    pub task: Option<PathBuf>,
    /// Whose screen it is: with claude, a foreground command other than the agent is observed, never answered
    #[arg(long, value_enum, default_value_t)]
    pub agent: Agent,
    /// The same agent message this many times in a row is a reasoning loop (0: never)
    #[arg(long, value_name = "N", default_value_t = reasoning::REPEAT_LIMIT)]
    pub repeat_limit: u32,
    /// With --task: no .status.json update for this long is a step timeout
    #[arg(long, value_name = "DURATION", default_value = "10m",
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub step_timeout: Duration,
    /// What a step timeout types into an idle agent
    #[arg(long, value_name = "TEXT", default_value = step_timeout::CONTINUATION)]
    pub continue_text: String,
    #[command(flatten)]
    pub waits: crate::cmd::run::WaitLimitArgs,
    #[command(flatten)]
    pub rules: RulesOption,
    #[command(flatten)]
    pub fresh: crate::cmd::run::HookFreshArg,
}

pub fn run(command: StallCommand, socket: Option<String>) -> Result<Exit> {
    match command {
        StallCommand::Check(args) => check(&args, socket),
    }
}

fn check(args: &CheckArgs, socket: Option<String>) -> Result<Exit> {
    if args.task.is_some() && args.targets.len() != 1 {
        bail!("--task goes with exactly one --target (the pane that works on that task)");
    }
    step_timeout::check_continuation(&args.continue_text)?;
    let rules = load_rules(args.rules.rules.as_ref())?;
    let tmux = Tmux::new(socket.clone())?;
    let now = crate::time::now()?;
    let world = World {
        terminal: &tmux,
        socket: socket.as_deref(),
        rules,
        approval: crate::cmd::pane::load_approval(&args.rules, true)?,
        state_dir: crate::supervise::state_dir()?,
        host: crate::host::this_host()?,
    };
    let options = CheckOptions {
        targets: (!args.all_panes).then(|| args.targets.clone()),
        state: args.state.clone(),
        limits: Limits {
            threshold: args.threshold,
            recoveries_per_iteration: args.max_recoveries_per_iteration,
            recoveries_total: args.max_recoveries,
            max_answers: args.max_answers,
            repeat_limit: args.repeat_limit,
            step_timeout: args.step_timeout,
            period: None,
        },
        apply: args.apply,
        task: args.task.clone(),
        agent: args.agent,
        continue_text: args.continue_text.clone(),
        channels: args.fresh.options(),
        wait_limits: args.waits.limits()?,
    };
    let checked = check::check_targets(&world, &options, now)?;
    let printed = checked.reports.iter().try_for_each(output::json_line);
    checked.saved?;
    printed?;
    if checked.failed {
        return Err(Reported.into());
    }
    Ok(Exit::Yes)
}

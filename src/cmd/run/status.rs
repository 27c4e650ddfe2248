//! `autoctl run status`: show runs in text, JSON or the Prometheus textfile format.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::error::Exit;
use crate::output;
use crate::supervise::control;
use crate::supervise::report::{self, RunReport};
use crate::supervise::store::Registry;
use crate::time;

/// Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries
///
/// Elapsed time excludes quota waits (the timeout clock pauses while a usage limit
/// resets). Ended runs stay listed with their reason until their session or task dir is
/// started again. `--format prometheus` writes the node_exporter textfile format.
///
/// JSON and Prometheus also count every reading of the agent (one per tick that saw its
/// pane) by where it came from — hooks, status line, app-server, transcript (Codex's rollout),
/// screen — with the share of
/// the typed channels: how many of the run's decisions went by what the agent said, not by
/// its screen (`sources`, `autoctl_run_readings`, `autoctl_run_typed_share`). Readings made
/// before the agent the run launched showed anything of itself (no hook yet, the screen its
/// launch left) are counted apart and left out of the share (`startup`,
/// `autoctl_run_startup_readings`).
///
/// The text table's columns (aligned on a terminal, tab-separated when piped; `A/B` is a
/// count and its limit):
///   SESSION                     the run's tmux session
///   STATE                       running, finished, stopped, exited or lost, with why
///                               (finished:complete, stopped:timeout, running:quota-wait)
///   MODE                        observe (the agent loops by itself) or dispatch (autoctl
///                               types each step)
///   ITERATION/MAX               the loop's iteration count (from its signals) /
///                               --max-iterations
///   ELAPSED/TIMEOUT             supervised time (quota waits excluded) / --timeout
///   STEP                        the step the loop is on (- before the first signal)
///   UNCHANGED/STALL-AT          identical screen captures in a row / --threshold (the
///                               screen is examined as a suspected stall once it stayed
///                               unchanged for --threshold heartbeats of elapsed time)
///   RECOVERIES(ITERATION)/MAX   stall recoveries spent this iteration /
///                               --max-recoveries-per-iteration
///   RECOVERIES(TOTAL)/MAX       stall recoveries spent in the whole run / --max-recoveries
///   AGENT                       the agent's state at the last tick and where it came from:
///                               idle/hook, waiting-for-permission/hook, idle/app-server,
///                               permission/screen (typed channels first, the screen when they
///                               are absent or stale)
///   TASK                        the task module directory
///   NEEDS-PERSON                since when and why the run waits for a person (an
///                               escalated prompt, a wait past its maximum), or -;
///                               `autoctl run ack` clears it
///
/// --accounts shows one line per account and usage window read instead:
///   ACCOUNT      the subscription account (run start --account)
///   WINDOW       five_hour or seven_day (- before any session read one)
///   USED         percent used now (0 once its reset has passed)
///   RESETS-AT    when it resets
///   SOURCE       where the freshest reading came from: statusline, stop-failure, banner
///   AGE          how old that reading is
///   COST/STEP    what one step costs, learned from the window's movement between steps
///   PERMITS      runs whose step or resume holds the quota governor's permit
///   WAITING      runs in a quota wait (paced or on a usage limit), in release order
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("which").args(["session", "task", "all"])))]
pub struct StatusArgs {
    /// Only this session's run (exit 1 when there is none)
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Only the run of this task module directory (exit 1 when there is none)
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Every run (the default)
    #[arg(long)]
    pub all: bool,
    /// Show the accounts instead of the runs: each account's usage windows (the freshest
    /// reading from any of its sessions, with its source and age), the runs whose step holds
    /// the quota governor's permit, and who waits, in release order (with --session or
    /// --task: that run's account). Prometheus output always has them.
    #[arg(long)]
    pub accounts: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: StatusFormat,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

/// `run status` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum StatusFormat {
    /// A table with a header: aligned on a terminal, tab-separated when piped
    #[default]
    Text,
    /// One JSON object per run (JSON Lines; schema: autoctl schema show run-status)
    Json,
    /// Prometheus text exposition (node_exporter textfile collector)
    Prometheus,
}

pub fn run(args: &StatusArgs) -> Result<Exit> {
    let now = time::now()?;
    let selected = args.session.is_some() || args.task.is_some();
    let mut registry = super::open_existing(&args.registry)?;
    let runs = match registry.as_mut() {
        None => Vec::new(),
        Some(registry) if selected => {
            control::find(registry, args.session.as_deref(), args.task.as_deref())?
                .into_iter()
                .collect()
        }
        Some(registry) => registry.list()?,
    };
    if selected && runs.is_empty() {
        output::warn(&format!(
            "no run for {}",
            control::describe_selection(args.session.as_deref(), args.task.as_deref())
        ));
        return Ok(Exit::No);
    }
    // The accounts of the runs shown (every account without a selection), counted over
    // all their runs; the hosts, for host-lost.
    let (accounts, hosts) = match registry.as_mut() {
        None => (Vec::new(), Vec::new()),
        Some(registry) => {
            let all = if selected {
                registry.list()?
            } else {
                runs.clone()
            };
            let mut accounts = report::accounts(&registry.accounts()?, &all, now);
            if selected {
                accounts.retain(|a| runs.iter().any(|r| r.spec.account == a.account));
            }
            (accounts, registry.hosts()?)
        }
    };
    let reports: Vec<RunReport> = runs
        .iter()
        .map(|run| RunReport::new(run, now).with_fleet(&accounts, &hosts, now))
        .collect();
    match args.format {
        StatusFormat::Text if args.accounts => {
            let mut rows = vec![report::ACCOUNTS_HEADER.to_string()];
            rows.extend(accounts.iter().flat_map(|a| a.text_lines()));
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                rows = super::text::aligned(&rows);
            }
            for row in rows {
                output::line(row)?;
            }
        }
        StatusFormat::Json if args.accounts => {
            for account in &accounts {
                output::json_line(account)?;
            }
        }
        StatusFormat::Text => {
            let mut rows = vec![report::TEXT_HEADER.to_string()];
            rows.extend(reports.iter().map(report::text_line));
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                rows = super::text::aligned(&rows);
            }
            for row in rows {
                output::line(row)?;
            }
        }
        StatusFormat::Json => {
            for report in &reports {
                output::json_line(report)?;
            }
        }
        StatusFormat::Prometheus => {
            output::raw(report::prometheus(&reports, &accounts, now).as_bytes())?
        }
    }
    Ok(Exit::Yes)
}

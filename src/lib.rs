//! autoctl: one binary of small commands that supervise autonomous AI coding-agent loops.
//!
//! [`run`] is the whole program: parse the arguments, dispatch to a command group in [`cmd`],
//! and map the outcome to the exit-code table in [`error`]. Commands only parse, call a core
//! and print; the rest is pure cores with thin edges.
//!
//! Where each concept lives:
//! - the command line: [`cli`] (the clap tree and the two-stage parse), [`cmd`] (one module per group, `cmd/run/`
//!   one file per command), [`docs`] (man pages, completions), [`output`] (the only writer
//!   to stdout and stderr, and its [`output::progress`] line), [`help`] (bare `autoctl`, `autoctl help`);
//! - the protocol files and routing: [`protocol`] (`.auto-signal`, `.auto-stop`,
//!   `.index.md`, `.status.json`), [`schema`] (the embedded JSON Schemas), [`routing`]
//!   (tables, `next`);
//! - reading panes: [`pane`] (normalize, hash, classify, a capture read whole, the safety
//!   reading), [`shell`] (the shell lexer every command check uses), [`policy`] (the approval
//!   policy);
//! - supervising: [`supervise`] (the run model, the tick, the stall kinds, the one driver,
//!   `run watch`), [`registry`] (storage of runs, SQLite), [`hook`] (Claude Code's hooks),
//!   [`doctor`];
//! - task modules: [`lint`], [`taskai`] (score and convergence gates, profiles),
//!   [`wholework`] (checkpoints, graphs, recovery plans);
//! - the edges: [`tmux`] (the only place that runs tmux), [`fsx`] (atomic writes, bounded
//!   reads, locks), [`lock`] (heartbeat locks), [`time`] (the one clock, `AUTOCTL_NOW`),
//!   [`parallel`] (many files on every core, answers in order), [`duration`], [`failpoint`],
//!   [`debuglog`].

pub mod appserver;
pub mod cli;
pub mod cmd;
pub mod debuglog;
pub mod docs;
pub mod doctor;
pub mod duration;
pub mod error;
pub mod failpoint;
#[cfg(test)]
mod fixtures;
pub mod fsx;
#[cfg(test)]
mod fuzz;
pub mod help;
pub mod hook;
pub mod host;
pub mod lint;
pub mod lock;
pub mod output;
pub mod pane;
pub mod parallel;
pub mod policy;
pub mod proc;
pub mod protocol;
pub mod registry;
pub mod routing;
pub mod schema;
pub mod shell;
pub mod supervise;
pub mod taskai;
pub mod time;
pub mod tmux;
pub mod wholework;

use std::ffi::OsString;
use std::process::ExitCode;

/// Run autoctl with the given arguments (the first is the program name) and return the exit
/// code. Never panics on bad input; never prints anything but the answer to stdout.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if let Some(code) = hot_path(&args) {
        return code;
    }
    if let Some(code) = help::before_parse(&args) {
        return code;
    }
    let parsed = match cli::per_call(&args) {
        Some(cli) => Ok(cli),
        None => cli::parse(&args),
    };
    let cli = match parsed {
        Ok(cli) => cli,
        // --help and --version are "errors" that print to stdout and exit 0.
        Err(err) if !err.use_stderr() => {
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err)
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    | clap::error::ErrorKind::MissingSubcommand
            ) =>
        {
            // A group without its subcommand (`autoctl run`): its help, as help reads, on
            // stderr; the command line was wrong (exit 0 only for `hook`, see below).
            help::missing_subcommand(&args);
            if runs_under_claude_code(&args) {
                return ExitCode::SUCCESS;
            }
            return ExitCode::from(error::EXIT_FAILURE);
        }
        Err(err) => {
            // Usage errors are one line like every other error, so logs stay line-oriented.
            let rendered = err.render().to_string();
            let message = rendered
                .trim()
                .strip_prefix("error: ")
                .unwrap_or(rendered.trim());
            output::error_line(message);
            // Claude Code reads exit 2 from a hook as "block": a hook or status-line command
            // with a bad flag (an old autoctl, a typo in settings.json) must not stop the agent.
            if runs_under_claude_code(&args) {
                return ExitCode::SUCCESS;
            }
            return ExitCode::from(error::EXIT_FAILURE);
        }
    };
    match cmd::dispatch(cli) {
        Ok(verdict) => verdict.into(),
        Err(err) => error::report(&err),
    }
}

/// The two commands Claude Code runs on every event and after every message, `hook event
/// [--agent AGENT]` and `statusline [--then CMD]`, exactly as `hook install` writes them: dispatched without
/// building the command tree, which is most of their start-up. Anything else (a flag, `--help`)
/// goes through the parser as usual.
fn hot_path(args: &[OsString]) -> Option<ExitCode> {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    let verdict = match words.as_slice() {
        ["hook", "event"] => cmd::hook::run(cmd::hook::HookCommand::Event(
            cmd::hook::EventArgs::agent(None),
        )),
        ["hook", "event", "--agent", agent] => cmd::hook::run(cmd::hook::HookCommand::Event(
            cmd::hook::EventArgs::agent(Some(crate::hook::agents::HookAgent::parse(agent)?)),
        )),
        // The hooks that run before every tool call: no argument parser to build.
        ["hook", "pre-tool-use"] => cmd::hook::run(cmd::hook::HookCommand::PreToolUse(
            cmd::policy::PreToolUseArgs::default(),
        )),
        ["hook", "pre-tool-use", "--agent", agent] => cmd::hook::run(
            cmd::hook::HookCommand::PreToolUse(cmd::policy::PreToolUseArgs {
                agent: cmd::args::AgentArg {
                    agent: Some(crate::hook::agents::HookAgent::parse(agent)?),
                },
                ..cmd::policy::PreToolUseArgs::default()
            }),
        ),
        ["hook", "permission-request"] => cmd::hook::run(
            cmd::hook::HookCommand::PermissionRequest(cmd::policy::PermissionArgs::default()),
        ),
        ["statusline"] => cmd::statusline::run(&cmd::statusline::StatuslineArgs { then: None }),
        ["statusline", "--then", then] => cmd::statusline::run(&cmd::statusline::StatuslineArgs {
            then: Some(then.to_string()),
        }),
        _ => return None,
    };
    Some(match verdict {
        Ok(verdict) => verdict.into(),
        Err(err) => error::report(&err),
    })
}

/// Whether the command line is one Claude Code runs (`hook …` except `hook install`, which a
/// person runs, and `statusline`): those exit 0 even on a usage error.
fn runs_under_claude_code(args: &[OsString]) -> bool {
    let Some(index) = cli::command_index(args) else {
        return false;
    };
    match args[index].to_str() {
        Some("statusline") => true,
        Some("hook") => args.get(index + 1).and_then(|a| a.to_str()) != Some("install"),
        _ => false,
    }
}

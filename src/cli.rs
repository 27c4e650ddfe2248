//! The command tree. Each group's arguments live beside its `run` in `cmd/<group>.rs` (or
//! `cmd/<group>/<command>.rs`); this file only assembles them, so `autoctl --help`, the man pages and the completions all come
//! from one definition.

use clap::{Parser, Subcommand, ValueEnum};

use crate::cmd;
use crate::error::EXIT_CODE_TABLE;

/// Supervise autonomous AI coding-agent loops
///
/// autoctl keeps an AI coding agent's loop (plan, check, exec, check) going in a tmux pane:
/// it reads the loop's signal and stop files and routes the next step, watches the pane,
/// answers only the prompts a rule proves harmless and escalates the rest, waits out usage
/// limits, detects stalls and stops the loop at its limits. Compose it from shell loops
/// (`next`), cron or systemd (`run tick`, `run watch`), Claude Code hooks (`hook`) and CI
/// (`lint`): stdout carries only the answer, diagnostics go to stderr, and the exit code is
/// the verdict.
#[derive(Debug, Parser)]
#[command(
    name = "autoctl",
    version,
    after_help = EXIT_CODE_TABLE,
    max_term_width = 100,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// The tmux socket name the pane, stall and run commands use (passed to tmux as -L NAME)
    #[arg(
        long,
        global = true,
        env = "AUTOCTL_TMUX_SOCKET",
        value_name = "NAME",
        value_parser = crate::tmux::parse_socket
    )]
    pub tmux_socket: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate, write, read and clear `.auto-signal` progress files
    #[command(subcommand)]
    Signal(cmd::signal::SignalCommand),
    /// Request, check and clear a loop stop (`.auto-stop`)
    #[command(subcommand)]
    Stop(cmd::stop::StopCommand),
    // Next, Gate, Converge and Route take their help from their Args' doc comments (a doc
    // comment here would replace the long description).
    Next(cmd::next::NextArgs),
    /// List, show and check routing tables
    #[command(subcommand)]
    Table(cmd::table::TableCommand),
    /// Create task modules: `autoctl task new TASK/NAME`
    #[command(subcommand)]
    Task(cmd::task::TaskCommand),
    // The help text is LintArgs' doc comment (a variant doc comment would replace its details).
    Lint(cmd::lint::LintArgs),
    /// Supervise loops from cron or a timer: register, tick, stop, recover, inspect
    #[command(subcommand)]
    Run(cmd::run::RunCommand),
    /// List and print the JSON Schemas of the protocol files
    #[command(subcommand)]
    Schema(cmd::schema::SchemaCommand),
    /// Take, refresh, release and inspect a heartbeat lock file
    #[command(subcommand)]
    Lock(cmd::lock::LockCommand),
    /// Run a loop inside one Claude Code session: init, status, route, teardown
    #[command(subcommand)]
    Loop(cmd::session_loop::LoopCommand),
    /// Commands Claude Code runs as hooks (stop, stop-failure, event, permission-request), and
    /// `hook install`
    #[command(subcommand)]
    Hook(cmd::hook::HookCommand),
    // The help text is StatuslineArgs' doc comment.
    Statusline(cmd::statusline::StatuslineArgs),
    // The help text is DoctorArgs' doc comment.
    Doctor(cmd::doctor::DoctorArgs),
    /// The approval policy every door uses: check a call, show the rules, print the log
    #[command(subcommand)]
    Policy(cmd::policy::PolicyCommand),
    /// Read tmux panes: capture, hash, classify, wait until ready, send keys
    #[command(subcommand)]
    Pane(cmd::pane::PaneCommand),
    /// Detect stalled agents and recover them within limits
    #[command(subcommand)]
    Stall(cmd::stall::StallCommand),
    /// Print a shell completion script
    Completions(cmd::generate::CompletionsArgs),
    /// Print or write the man pages
    Man(cmd::generate::ManArgs),
    Gate(cmd::gate::GateArgs),
    Converge(cmd::converge::ConvergeArgs),
    /// Show and learn a `.type-profile.md` "## Auto Adaptation" section (task-ai)
    #[command(subcommand)]
    Profile(cmd::profile::ProfileCommand),
    /// Track VH→HS cycles of exec steps; three steps without one call a mid-exec check (task-ai)
    #[command(subcommand)]
    Vfp(cmd::vfp::VfpCommand),
    Route(cmd::route::RouteArgs),
    /// Level and run a sub-issue graph; the parent's phase and close flow (wholework)
    #[command(subcommand)]
    Graph(cmd::graph::GraphCommand),
    /// Write, read and delete wholework checkpoint files
    #[command(subcommand)]
    Checkpoint(cmd::checkpoint::CheckpointCommand),
    /// Validate a wholework recovery plan
    #[command(subcommand)]
    Plan(cmd::plan::PlanCommand),
}

/// Output format for commands whose answer is a line of text or a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Lines made for people and `$(...)`
    #[default]
    Text,
    /// JSON, using the types the schemas describe
    Json,
}

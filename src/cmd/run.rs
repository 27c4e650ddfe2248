//! `autoctl run start|stop|status|lookup`: the daemon's state as commands over the run
//! registry (`$AUTOCTL_STATE_DIR/autoctl.db`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};

use crate::cli::Format;
use crate::error::Verdict;
use crate::output;
use crate::protocol::signal::now_timestamp;
use crate::protocol::stop::{self, REASONS, StopRequest};
use crate::protocol::{signal, stop::StopState};
use crate::registry::report::{self, RunReport};
use crate::registry::sqlite::SqliteRegistry;
use crate::registry::{self, Mode, NewRun, Registry, Run, StallLimits, Status};
use crate::routing::{self, DEFAULT_TABLE, command};

#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Register a loop for a tmux session and a task module
    ///
    /// The run is stored in the registry ($AUTOCTL_STATE_DIR/autoctl.db) with its limits;
    /// `autoctl run tick` then supervises it. One loop per session and per task dir: a second
    /// start for either exits 3 and names the owner. A leftover `.auto-stop` in the task dir
    /// is removed (it would stop the new loop at once).
    Start(StartArgs),
    /// Stop a loop: write `.auto-stop` and end the run
    ///
    /// The agent sees the stop file at its next iteration boundary, exits, and removes its
    /// `.auto-signal` and `.auto-stop` (seed 000's cleanup split). In dispatch mode autoctl
    /// owns the signal and removes it here. Stopping a run that has already ended warns and
    /// succeeds.
    Stop(StopArgs),
    /// Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries
    ///
    /// Elapsed time excludes quota waits (the timeout clock pauses while a usage limit
    /// resets). Ended runs stay listed with their reason until their session or task dir is
    /// started again. `--format prometheus` writes the node_exporter textfile format.
    Status(StatusArgs),
    /// Print the session whose loop owns a task dir (exit 1 when no loop runs there)
    Lookup(LookupArgs),
}

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The tmux session the agent runs in (the run's name; any text, never run by a shell)
    #[arg(long, value_name = "NAME")]
    pub session: String,
    /// The task module directory (stored as its canonical path)
    #[arg(long, value_name = "DIR")]
    pub task: PathBuf,
    /// The tmux pane to watch and type into [default: the session name]
    #[arg(long, value_name = "PANE")]
    pub target: Option<String>,
    /// Who drives the loop
    #[arg(long, value_enum, default_value_t)]
    pub mode: Mode,
    /// Stop the loop when its iteration count reaches N
    #[arg(long, value_name = "N", default_value_t = registry::DEFAULT_MAX_ITERATIONS,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_iterations: u64,
    /// Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m
    #[arg(long, value_name = "DURATION", default_value = registry::DEFAULT_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Dispatch mode: the command typed for each step
    ///
    /// Placeholders: {next}, {checkpoint}, {task}, {iteration}. Values with quotes, `$`,
    /// backticks, backslashes or control characters are refused.
    #[arg(long, value_name = "TEMPLATE", default_value = command::DEFAULT_TEMPLATE)]
    pub command: String,
    /// Dispatch mode: the routing table that gives the entry step (built-in name or file)
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// How panes are read: `claude` acts only on the agent's own screen; `generic` reads any
    /// program's prompts (same safety policy)
    #[arg(long, value_name = "AGENT", default_value = "claude",
          value_parser = ["claude", "generic"])]
    pub agent: String,
    /// Unchanged captures in a row before a screen is examined as a suspected stall
    #[arg(long, value_name = "N", default_value_t = registry::DEFAULT_STALL_THRESHOLD,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub threshold: u32,
    /// Stall recoveries allowed per iteration before the loop is stopped (stall_limit)
    #[arg(long, value_name = "N", default_value_t = registry::DEFAULT_RECOVERIES_PER_ITERATION)]
    pub recoveries_per_iteration: u32,
    /// Stall recoveries allowed in total before the loop is stopped (stall_limit)
    #[arg(long, value_name = "N", default_value_t = registry::DEFAULT_RECOVERIES_TOTAL)]
    pub recoveries_total: u32,
}

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
}

#[derive(Debug, Args)]
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
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: StatusFormat,
}

/// `run status` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum StatusFormat {
    /// A tab-separated table with a header
    #[default]
    Text,
    /// One JSON object per run (JSON Lines; schema: autoctl schema show run-status)
    Json,
    /// Prometheus text exposition (node_exporter textfile collector)
    Prometheus,
}

#[derive(Debug, Args)]
pub struct LookupArgs {
    /// The task module directory
    #[arg(long, value_name = "DIR")]
    pub task: PathBuf,
    /// Output format (json: {"session_name","status"})
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(command: RunCommand) -> Result<Verdict> {
    match command {
        RunCommand::Start(args) => start(&args),
        RunCommand::Stop(args) => stop_run(&args),
        RunCommand::Status(args) => status(&args),
        RunCommand::Lookup(args) => lookup(&args),
    }
}

/// The state directory from the environment.
pub fn state_dir() -> Result<PathBuf> {
    registry::state_dir(|name| std::env::var_os(name))
}

fn open() -> Result<SqliteRegistry> {
    SqliteRegistry::open(&state_dir()?)
}

/// The task dir as the registry keys it: canonical when it exists, else absolute (a loop whose
/// directory was deleted can still be looked up and stopped).
pub fn task_key(dir: &Path) -> Result<String> {
    let path = match std::fs::canonicalize(dir) {
        Ok(path) => path,
        Err(_) => {
            std::path::absolute(dir).with_context(|| format!("cannot resolve {}", dir.display()))?
        }
    };
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{}: the path is not valid UTF-8", path.display()))
}

/// A session name is data: any text, but no control characters (they would corrupt the
/// one-line outputs and the terminal of whoever reads them).
fn check_name(kind: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        bail!("{kind} must not be empty");
    }
    if value.chars().any(char::is_control) {
        bail!("{kind} {value:?} contains a control character");
    }
    if value.len() > 1024 {
        bail!("{kind} is longer than 1024 bytes");
    }
    Ok(())
}

fn start(args: &StartArgs) -> Result<Verdict> {
    check_name("--session", &args.session)?;
    let target = args.target.clone().unwrap_or_else(|| args.session.clone());
    check_name("--target", &target)?;
    if target.starts_with('-') {
        bail!("--target {target:?} starts with '-'; name the pane explicitly (e.g. SESSION:0.0)");
    }
    crate::fsx::require_dir(&args.task)?;
    let task_dir = task_key(&args.task)?;
    // Fail now, not at the first tick: the table must load and the template must render.
    let table = routing::load(&args.table)?;
    let table_ref = if routing::builtin(&args.table).is_some() {
        args.table.clone()
    } else {
        task_key(Path::new(&args.table))?
    };
    let sample = BTreeMap::from([
        ("next", "plan".to_string()),
        ("checkpoint", String::new()),
        ("task", task_dir.clone()),
        ("iteration", "0".to_string()),
    ]);
    command::render(&args.command, &sample).context("--command")?;
    drop(table);
    let new = NewRun {
        session: args.session.clone(),
        task_dir: task_dir.clone(),
        target,
        mode: args.mode,
        agent: args.agent.clone(),
        launch_command: None,
        command_template: args.command.clone(),
        table: table_ref,
        max_iterations: args.max_iterations,
        timeout: args.timeout,
        limits: StallLimits {
            threshold: args.threshold,
            recoveries_per_iteration: args.recoveries_per_iteration,
            recoveries_total: args.recoveries_total,
        },
    };
    let mut registry = open()?;
    registry.start(&new, registry::now()?)?;
    clear_stale_stop(Path::new(&task_dir));
    Ok(Verdict::Yes)
}

/// Remove a stop file left by an earlier loop (seed 000's recovery rule), saying so.
pub fn clear_stale_stop(dir: &Path) {
    match stop::check(dir) {
        Ok(StopState::None) => {}
        Ok(state) => {
            let why = match state {
                StopState::Requested(request) => format!("reason {}", request.reason),
                StopState::Unreadable { why } => why,
                StopState::None => unreachable!(),
            };
            match stop::clear(dir) {
                Ok(_) => output::warn(&format!(
                    "removed a leftover {} ({why}) from {}",
                    stop::FILE_NAME,
                    dir.display()
                )),
                Err(err) => output::warn(&format!("{err:#}")),
            }
        }
        Err(err) => output::warn(&format!("{err:#}")),
    }
}

fn find(
    registry: &mut SqliteRegistry,
    session: Option<&str>,
    task: Option<&Path>,
) -> Result<Option<Run>> {
    match (session, task) {
        (Some(session), _) => registry.get(session),
        (None, Some(task)) => registry.find_task(&task_key(task)?),
        (None, None) => Ok(None),
    }
}

fn describe_selection(session: Option<&str>, task: Option<&Path>) -> String {
    match (session, task) {
        (Some(session), _) => format!("session {session:?}"),
        (None, Some(task)) => format!("task dir {}", task.display()),
        (None, None) => "the selection".to_string(),
    }
}

fn stop_run(args: &StopArgs) -> Result<Verdict> {
    if args
        .message
        .as_ref()
        .is_some_and(|m| m.chars().count() > 4096)
    {
        bail!("--message is longer than 4096 characters");
    }
    let mut registry = open()?;
    let Some(run) = find(&mut registry, args.session.as_deref(), args.task.as_deref())? else {
        bail!(
            "no run for {}",
            describe_selection(args.session.as_deref(), args.task.as_deref())
        );
    };
    if !run.status.is_active() {
        output::warn(&format!(
            "the run of session {:?} has already ended ({}{})",
            run.session,
            run.status.as_str(),
            run.stop_reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
        return Ok(Verdict::Yes);
    }
    let now = registry::now()?;
    let dir = run.task_path();
    if dir.is_dir() {
        let request = StopRequest {
            reason: args.reason.clone(),
            timestamp: now_timestamp(now),
            message: args.message.clone(),
        };
        stop::write(dir, &request)?;
        if run.mode == Mode::Dispatch {
            crate::fsx::remove_if_exists(&signal::path_in(dir))?;
        }
    } else {
        output::warn(&format!(
            "task dir {} no longer exists; ending the run without a stop file",
            run.task_dir
        ));
    }
    registry.end(
        &run.session,
        Status::Stopped,
        &args.reason,
        args.message.as_deref(),
        now,
    )?;
    Ok(Verdict::Yes)
}

fn status(args: &StatusArgs) -> Result<Verdict> {
    let now = registry::now()?;
    let selected = args.session.is_some() || args.task.is_some();
    let runs = match SqliteRegistry::open_existing(&state_dir()?)? {
        None => Vec::new(),
        Some(mut registry) if selected => {
            find(&mut registry, args.session.as_deref(), args.task.as_deref())?
                .into_iter()
                .collect()
        }
        Some(mut registry) => registry.list()?,
    };
    if selected && runs.is_empty() {
        output::warn(&format!(
            "no run for {}",
            describe_selection(args.session.as_deref(), args.task.as_deref())
        ));
        return Ok(Verdict::No);
    }
    let reports: Vec<RunReport> = runs.iter().map(|run| RunReport::new(run, now)).collect();
    match args.format {
        StatusFormat::Text => {
            output::line(report::TEXT_HEADER)?;
            for report in &reports {
                output::line(report::text_line(report))?;
            }
        }
        StatusFormat::Json => {
            for report in &reports {
                output::json_line(report)?;
            }
        }
        StatusFormat::Prometheus => output::raw(report::prometheus(&reports, now).as_bytes())?,
    }
    Ok(Verdict::Yes)
}

fn lookup(args: &LookupArgs) -> Result<Verdict> {
    let key = task_key(&args.task)?;
    let owner = match SqliteRegistry::open_existing(&state_dir()?)? {
        None => None,
        Some(mut registry) => registry.find_task(&key)?,
    }
    .filter(|run| run.status.is_active());
    let Some(run) = owner else {
        return Ok(Verdict::No);
    };
    match args.format {
        Format::Text => output::line(&run.session)?,
        Format::Json => output::json_line(&serde_json::json!({
            "session_name": run.session,
            "status": run.status,
        }))?,
    }
    Ok(Verdict::Yes)
}

//! `autoctl loop init|status|route|teardown`: a loop inside one Claude Code session, driven by
//! `autoctl hook stop` (the module is not named `loop`, a Rust keyword).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::{ArgGroup, Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::hook::admin;
use crate::hook::input::HookInput;
use crate::hook::run::{self, Env, Mode};
use crate::hook::sentinel;
use crate::hook::state::{self, LoopConfig, LoopDir, PromptSource};
use crate::hook::transcript::Limits;
use crate::lock::System;
use crate::output;
use crate::protocol::signal::now_timestamp;
use crate::routing::DEFAULT_TABLE;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum LoopCommand {
    /// Activate a loop in the project: write D/.autoctl/loop.json and reset the loop state
    ///
    /// After each turn, `autoctl hook stop` (wired as Claude Code's Stop hook, see
    /// examples/claude/settings.json) feeds the session the next prompt until the agent's
    /// last message carries the sentinel, or a limit ends the loop. The loop binds to the
    /// session that stops first (or --session) and never blocks any other session.
    ///
    /// Prints the activation file's path. Exits 3 when a loop is already running for a
    /// session whose lock is alive (use --force to replace it).
    #[command(group(ArgGroup::new("source").required(true).args(["prompt", "prompt_file", "task"])))]
    Init(InitArgs),
    /// Show the loop: bound session, iterations, tokens, lock, quota wait, how it ended
    ///
    /// Exits 0 when a loop is active, 1 when not.
    Status(StatusArgs),
    /// Print what `hook stop` would answer now, changing nothing
    ///
    /// Without --transcript, completion and token use are not observed. Prints the kind of
    /// answer (continue, done, max-iterations, budget-exhausted, idle, task-stopped,
    /// foreign-session, lock-conflict, paused, inactive), the message, and the next prompt.
    /// Exits 0 when the hook would continue the loop, 1 otherwise.
    Route(RouteArgs),
    /// Remove the loop: its activation file and its lock, whoever holds it
    ///
    /// Safe after a crash and when no loop is active. The state file stays, marked as torn
    /// down, for `loop status`.
    Teardown(DirArgs),
}

#[derive(Debug, Args)]
pub struct DirArgs {
    /// The project [default: $CLAUDE_PROJECT_DIR, else the current directory]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Bind the loop to this session id [default: the first session that stops]
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Turns the session may finish inside the loop
    #[arg(long, value_name = "N", default_value_t = state::DEFAULT_MAX_ITERATIONS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_iterations: u64,
    /// Token budget of the session: input, output, cache-write and cache-read tokens from
    /// the transcript's usage fields, counted from the loop's first turn
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: Option<u64>,
    /// What the agent writes when the work is done: a <promise>...</promise> tag counts anywhere
    /// in its last message (outside code); any other text must be a line of its own
    #[arg(long, value_name = "TEXT", default_value = sentinel::DEFAULT)]
    pub sentinel: String,
    /// The prompt fed after every turn
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// A file holding the prompt, read again at every turn (edit it to steer the loop)
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// A task module: the prompt is the command the routing table gives for its
    /// .auto-signal (else its .index.md status); its .auto-stop or a (stop) route ends the
    /// loop
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Routing table for --task: a built-in name or a JSON file
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE, requires = "task")]
    pub table: String,
    /// The prompt for --task; placeholders {next}, {checkpoint}, {task}, {iteration}, {args}
    #[arg(long, value_name = "TEMPLATE", default_value = state::DEFAULT_TEMPLATE, requires = "task")]
    pub template: String,
    /// End the loop after this many consecutive turns without a tool call (0: never)
    ///
    /// Claude Code itself overrides a Stop hook that blocks more than 8 times in a row
    /// without a tool call (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP; the 9th block is overridden);
    /// the loop also counts its blocks and ends itself before that, with a message instead of
    /// a silent override.
    #[arg(long, value_name = "N", default_value_t = state::DEFAULT_MAX_IDLE)]
    pub max_idle: u64,
    /// End the loop when this many context compactions happen within one iteration (0: never)
    ///
    /// Three compactions in one iteration mean the task does not fit the context window. Counted from the transcript's compaction boundaries (by /compact or by Claude
    /// Code itself), with any proactive /compact a supervisor types.
    #[arg(long, value_name = "N", default_value_t = crate::taskai::compaction::DEFAULT_MAX_COMPACTIONS)]
    pub max_compactions: u32,
    /// The loop lock is stale after this long without a heartbeat
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::duration::parse_positive)]
    pub stale: Duration,
    /// How long `hook stop` waits for a transcript that lags behind the session when the
    /// hook input has no last_assistant_message
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_wait)]
    pub transcript_wait: Duration,
    /// Replace a loop that is still running for another session
    #[arg(long)]
    pub force: bool,
    /// Output format (json prints the activation file's settings)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

fn parse_wait(text: &str) -> Result<Duration> {
    let wait = crate::duration::parse(text)?;
    if wait > Duration::from_secs(60) {
        return Err(anyhow!(
            "{text:?} is longer than a minute; a hook should answer quickly"
        ));
    }
    Ok(wait)
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct RouteArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// The session asking [default: the bound session, or a new one when unbound]
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// A transcript to observe (completion, tool calls, tokens since the loop's cursor)
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// The last assistant message, as Claude Code passes it
    #[arg(long, value_name = "TEXT")]
    pub last_message: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// The project: --dir, else $CLAUDE_PROJECT_DIR, else the current directory; absolute when it
/// exists, so messages and the activation file name it unambiguously.
fn project(dir: &DirArgs) -> PathBuf {
    let project = dir
        .dir
        .clone()
        .or_else(|| {
            std::env::var_os("CLAUDE_PROJECT_DIR")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::canonicalize(&project).unwrap_or(project)
}

pub fn run(command: LoopCommand) -> Result<Exit> {
    match command {
        LoopCommand::Init(args) => init(args),
        LoopCommand::Status(args) => {
            let status = admin::status(&LoopDir::new(&project(&args.dir)), &System::from_env()?);
            match args.format {
                Format::Json => output::json_line(&status)?,
                Format::Text => {
                    // Session ids, paths, sentinels and lock records come from files anyone
                    // may write: escape what would drive the terminal.
                    for line in status.lines() {
                        output::line(output::printable(&line))?;
                    }
                }
            }
            Ok(Exit::from_bool(status.active))
        }
        LoopCommand::Route(args) => route(&args),
        LoopCommand::Teardown(args) => {
            let dir = LoopDir::new(&project(&args));
            let torn = admin::teardown(&dir, crate::time::now()?)?;
            if !torn.was_active {
                output::warn(&format!("no active loop in {}", dir.dir.display()));
            }
            Ok(Exit::Yes)
        }
    }
}

fn init(args: InitArgs) -> Result<Exit> {
    let project = project(&args.dir);
    crate::fsx::require_dir(&project)?;
    if let Some(session) = &args.session
        && (session.trim().is_empty() || session.chars().any(char::is_control))
    {
        anyhow::bail!("--session must be a session id");
    }
    let prompt = if let Some(text) = args.prompt {
        PromptSource::Text(text)
    } else if let Some(file) = args.prompt_file {
        PromptSource::File(absolute_file(&file)?)
    } else if let Some(task) = args.task {
        let table = if Path::new(&args.table).exists() {
            admin::absolute(Path::new(&args.table))?
                .display()
                .to_string()
        } else {
            args.table
        };
        PromptSource::Task {
            dir: admin::absolute(&task)?,
            table,
            template: args.template,
        }
    } else {
        unreachable!("clap requires one prompt source");
    };
    let config = LoopConfig {
        version: state::VERSION,
        created_at: now_timestamp(crate::time::now()?),
        session: args.session,
        max_iterations: args.max_iterations,
        budget: args.budget,
        max_idle: args.max_idle,
        sentinel: args.sentinel,
        prompt,
        stale: crate::duration::format(args.stale),
        transcript_wait: crate::duration::format(args.transcript_wait),
        max_compactions: args.max_compactions,
    };
    let dir = LoopDir::new(&project);
    let done = admin::init(&dir, &config, args.force, &System::from_env()?)?;
    if let Some(previous) = &done.replaced {
        output::warn(&format!("replaced the previous loop ({previous})"));
    }
    if let Some(problem) = &done.first_prompt_problem {
        output::warn(&format!(
            "the first prompt cannot be rendered yet: {problem}; the hook will pause until it can"
        ));
    }
    match args.format {
        Format::Json => output::json_line(&config)?,
        Format::Text => output::line(dir.config().display())?,
    }
    Ok(Exit::Yes)
}

fn absolute_file(path: &Path) -> Result<PathBuf> {
    let absolute = admin::absolute(path)?;
    if absolute.is_dir() {
        anyhow::bail!("{}: is a directory, not a prompt file", path.display());
    }
    Ok(absolute)
}

/// What `loop route --format json` prints.
#[derive(Debug, Serialize)]
struct Route {
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iteration: Option<u64>,
    /// Exactly what `hook stop` would print.
    #[serde(skip_serializing_if = "Option::is_none")]
    hook: Option<serde_json::Value>,
}

fn route(args: &RouteArgs) -> Result<Exit> {
    let dir = LoopDir::new(&project(&args.dir));
    let session = match &args.session {
        Some(session) => session.clone(),
        None => {
            let config = state::read_config(&dir).ok().flatten();
            let loop_state = state::read_state(&dir).ok().flatten().unwrap_or_default();
            config
                .as_ref()
                .and_then(|c| crate::hook::decide::bound_session(c, &loop_state))
                .map_or_else(|| "(new session)".to_string(), str::to_string)
        }
    };
    let input = HookInput {
        session_id: Some(session),
        transcript_path: args.transcript.clone(),
        hook_event_name: Some("Stop".to_string()),
        last_assistant_message: args.last_message.clone(),
        ..HookInput::default()
    };
    let host = System::from_env()?;
    let env = Env {
        host: &host,
        dir: Some(dir.project.clone()),
        project_env: None,
        cwd: dir.project.clone(),
        pid: std::process::id(),
        limits: Limits::default(),
        block_cap: crate::cmd::hook::block_cap_from_env(),
        status: None,
    };
    let outcome = run::answer(&input, &dir, &env, Mode::DryRun);
    for warning in &outcome.warnings {
        output::warn(warning);
    }
    if let Some(error) = &outcome.error {
        anyhow::bail!("{error}");
    }
    let continues = outcome.prompt.is_some();
    match args.format {
        Format::Json => output::json_line(&Route {
            kind: outcome.kind.clone(),
            message: outcome.message.clone(),
            prompt: outcome.prompt.clone(),
            iteration: outcome.iteration,
            hook: outcome.hook_json(),
        })?,
        Format::Text => {
            output::line(&outcome.kind)?;
            if let Some(message) = &outcome.message {
                output::line(message)?;
            }
            if let Some(prompt) = &outcome.prompt {
                output::line("")?;
                output::line(prompt)?;
            }
        }
    }
    Ok(Exit::from_bool(continues))
}

//! `autoctl run start`: register a loop for a tmux session and a task module.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::error::Exit;
use crate::pane::Agent;
use crate::routing::DEFAULT_TABLE;
use crate::supervise::control::{self, StartRequest};
use crate::supervise::run::{self as model, DispatchInto, Mode};
use crate::supervise::stall::{self, Limits};
use crate::time;
use crate::tmux::Tmux;

/// Register a loop for a tmux session and a task module
///
/// The run is stored in the registry ($AUTOCTL_STATE_DIR/autoctl.db) with its limits;
/// `autoctl run tick` then supervises it. One loop per session and per task dir: a second
/// start for either exits 3 and names the owner. A leftover `.auto-stop` in the task dir
/// is removed (it would stop the new loop at once).
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The tmux session the agent runs in (the run's name; any text, never run by a shell)
    #[arg(long, value_name = "NAME")]
    pub session: String,
    /// The task module directory (stored as its canonical path)
    #[arg(long, value_name = "DIR")]
    pub task: PathBuf,
    /// The tmux pane to watch and type into [default: the session's active pane]
    #[arg(long, value_name = "PANE")]
    pub target: Option<String>,
    /// Who drives the loop
    #[arg(long, value_enum, default_value_t)]
    pub mode: Mode,
    /// Stop the loop when its iteration count reaches N
    #[arg(long, value_name = "N", default_value_t = model::DEFAULT_MAX_ITERATIONS,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_iterations: u64,
    /// Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m
    #[arg(long, value_name = "DURATION", default_value = model::DEFAULT_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Dispatch mode: where each step is typed [default: agent with --agent claude, shell
    /// with --agent generic]
    ///
    /// `agent`: into the agent idle at its own prompt, the default for Claude Code, which
    /// stays open after each step — start it once with --launch (or yourself), and each step's
    /// slash command is typed when the pane shows its empty input box (the first one, into an
    /// agent --launch started, also after its SessionStart hook where autoctl's is wired, at
    /// most 60 s after the launch). `shell`: at a shell
    /// prompt, for a command that runs one step and returns to the shell (`claude -p`).
    /// `app-server`: at a shell prompt too, each step sent to Codex CLI as a turn over its
    /// app-server by `autoctl run turn` (read as typed messages, no screen; --agent defaults
    /// to codex).
    #[arg(long, value_enum, value_name = "WHERE")]
    pub into: Option<IntoArg>,
    /// Dispatch mode: the command typed for each step [default: `/ai-cli-task {next} {task}
    /// {args}` with --into agent, `claude -p` with {settings} and {stream} with --into shell,
    /// `autoctl run turn "Run the {next} step of the task in {task} {args}. When it is
    /// done, write its signal with autoctl signal write."` with --into app-server]
    ///
    /// The --into shell default in full: `claude -p --settings {settings} --output-format
    /// stream-json --verbose "/ai-cli-task {next} {task} {args}" > {stream}`.
    ///
    /// Placeholders: {next}, {checkpoint}, {task}, {iteration}, and {args}, the step's
    /// ai-cli-task arguments (`--checkpoint post-exec`, `--generate` for a plan, or the
    /// annotations mode when the module holds .tmp-annotations.json). With --into shell also
    /// {settings}, a settings file holding autoctl's hooks (they run whatever the project's
    /// settings hold; `claude -p --bare` runs none, these neither), and {stream}, the file for
    /// the step's stream-json, read with or without hooks: when the shell is back its `result`
    /// says how the step ended (an API error
    /// that clears by itself is typed again after a backoff, up to --max-resumes; a login,
    /// bill or refused request goes to a person, and `run ack` types it again). A placeholder that
    /// renders empty takes its word with it, and an option word right before it
    /// (`--checkpoint {checkpoint}` becomes nothing). A value may only hold letters, digits
    /// and `. _ - / : @ % + , =` and may not start with `-` (no shell metacharacters, no
    /// spaces); the template may not contain `!` (bash history expansion).
    #[arg(long, value_name = "TEMPLATE")]
    pub command: Option<String>,
    /// Dispatch mode: the routing table that gives the entry step (built-in name or file)
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// Type the agent's command into the pane after registering (observe mode, or dispatch
    /// mode --into agent)
    ///
    /// TEMPLATE may use {task}; without a value it is ai-cli-task's
    /// `claude "/ai-cli-task auto {task}"` in observe mode, and `claude` (the agent idle at
    /// its prompt, ready for the first step) in dispatch mode. It is kept for `run recover`,
    /// which types it again when a shell is in front after a restart.
    ///
    /// Its programs must exist: on the PATH of the pane's shell, or known to that shell (a
    /// builtin, function or alias); otherwise nothing is typed or registered and the one
    /// line says which program is missing.
    ///
    /// The command is typed only at a shell prompt: when none shows within a few seconds
    /// (a program runs in the pane, or the shell is mid-command), nothing is typed, nothing is
    /// registered, and the exit status is 2. --force types it anyway.
    #[arg(long, value_name = "TEMPLATE", num_args = 0..=1,
          default_missing_value = "", require_equals = false)]
    pub launch: Option<String>,
    /// With --launch: type the command even when the pane shows no shell prompt, and without
    /// checking that its program exists on the pane's PATH
    #[arg(long, requires = "launch")]
    pub force: bool,
    /// How panes are read: `claude`, `codex`, `gemini` act only on that agent's own screen;
    /// `generic` reads any program's prompts (same safety policy) [default: the program
    /// --launch starts when it is claude, codex or gemini, generic for any other program,
    /// claude without --launch]
    #[arg(long, value_enum)]
    pub agent: Option<Agent>,
    /// Heartbeats a screen stays unchanged before it is examined as a suspected stall,
    /// counted by elapsed time: N × `run tick --heartbeat` (3 × 60s), however often ticks come
    #[arg(long, value_name = "N", default_value_t = stall::DEFAULT_THRESHOLD,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub threshold: u32,
    /// Stall recoveries allowed per iteration before the loop is stopped (stall_limit)
    #[arg(long, value_name = "N", default_value_t = stall::DEFAULT_RECOVERIES_PER_ITERATION)]
    pub max_recoveries_per_iteration: u32,
    /// Stall recoveries allowed in total before the loop is stopped (stall_limit)
    #[arg(long, value_name = "N", default_value_t = stall::DEFAULT_RECOVERIES_TOTAL)]
    pub max_recoveries: u32,
    /// Prompts the approval policy proved harmless answered per step (a new signal starts a
    /// step); past it the prompt is escalated to a person. Answers are not stall recoveries
    #[arg(long, value_name = "N", default_value_t = stall::DEFAULT_MAX_ANSWERS)]
    pub max_answers: u32,
    /// The same agent message this many times in a row stops the loop (reasoning_loop; 0: never)
    #[arg(long, value_name = "N", default_value_t = stall::reasoning::REPEAT_LIMIT)]
    pub repeat_limit: u32,
    /// No .status.json update for this long is a step timeout (a stall: the screen decides
    /// the recovery, an idle agent gets a continuation)
    #[arg(long, value_name = "DURATION", default_value = model::DEFAULT_STEP_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub step_timeout: Duration,
    /// Stop the loop when this many context compactions happen in one iteration (0: never)
    ///
    /// One counter per iteration for every compaction the agent's hooks report (PreCompact:
    /// its own automatic ones, a person's /compact, and the /compact `run tick --compact-at`
    /// types). Reaching N stops the run with an `.auto-stop` of reason compaction_limit (the
    /// task does not fit the context window; break it into smaller sub-tasks), and
    /// the tick never types the /compact that would reach N. Needs `autoctl hook install`:
    /// without hooks no compaction is counted.
    #[arg(long, value_name = "N", default_value_t = crate::taskai::compaction::DEFAULT_MAX_COMPACTIONS)]
    pub max_compactions: u32,
    /// With --launch and --agent claude: Claude Code compacts its context by itself at this
    /// percentage of the window (0: left to Claude Code's default)
    ///
    /// --launch starts Claude Code with its own features instead of imitating them:
    /// `CLAUDE_CODE_RETRY_WATCHDOG=1` (it retries 429 and 529 and waits out a known reset by
    /// itself) and `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=PCT` (it compacts mid-turn; `run tick`
    /// types `/compact` only for an agent whose environment lacks it), as assignments before
    /// the command when its first program is `claude`. A variable the template assigns itself
    /// is left as written (`CLAUDE_CODE_RETRY_WATCHDOG=0 claude` turns the watchdog off).
    /// Without it: the task's compaction_threshold in its .type-profile.md, else 82 for a
    /// task-ai module (one with a .status.json), else 70 — the threshold `run tick` uses.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compact_at: Option<u8>,
    /// The subscription account the agent spends: runs of one account share its usage
    /// windows and are paced together by the quota governor (`run tick --pace-stop`)
    #[arg(long, value_name = "NAME", env = "AUTOCTL_ACCOUNT",
          default_value = crate::supervise::governor::DEFAULT_ACCOUNT)]
    pub account: String,
    /// Who the governor releases first after a usage window resets (higher first), and who
    /// may start steps in the weekly reserve (above `run tick --weekly-priority`)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    pub priority: i32,
    /// Nobody will answer this run's prompts: the agent's PreToolUse hook (`autoctl hook
    /// pre-tool-use`, wired by `autoctl hook install`) denies what the approval policy names
    /// destructive, telling the model the rule and why, instead of asking a person
    ///
    /// The mark is kept for the run's tmux pane (the hook finds it by $TMUX_PANE) until `run
    /// stop`. Without --unattended a destructive call gets the agent's permission prompt in
    /// every permission mode, and the supervisor escalates it.
    #[arg(long)]
    pub unattended: bool,
    #[command(flatten)]
    pub waits: super::WaitArgs,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

/// Where dispatch mode types each step, as `--into` says it: `app-server` is a shell
/// dispatch of `autoctl run turn` (the run is registered as `shell` with that command).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IntoArg {
    /// Into the agent idle at its own prompt
    Agent,
    /// At a shell prompt: a command that runs the step and returns to the shell
    Shell,
    /// At a shell prompt: `autoctl run turn`, the step sent to Codex CLI over its app-server
    AppServer,
}

/// What `--into`, `--command` and `--agent` register: where steps are typed, the command
/// (`None`: the default for where), and the agent (`None`: the one --launch starts).
fn dispatch_of(
    into: Option<IntoArg>,
    command: Option<&str>,
    agent: Option<Agent>,
) -> (Option<DispatchInto>, Option<String>, Option<Agent>) {
    let command = command.map(str::to_string);
    match into {
        None => (None, command, agent),
        Some(IntoArg::Agent) => (Some(DispatchInto::Agent), command, agent),
        Some(IntoArg::Shell) => (Some(DispatchInto::Shell), command, agent),
        Some(IntoArg::AppServer) => (
            Some(DispatchInto::Shell),
            command.or_else(|| Some(crate::routing::command::APP_SERVER_TEMPLATE.to_string())),
            agent.or(Some(Agent::Codex)),
        ),
    }
}

pub fn run(args: &StartArgs, socket: Option<String>) -> Result<Exit> {
    let (into, command, agent) = dispatch_of(args.into, args.command.as_deref(), args.agent);
    let request = StartRequest {
        session: args.session.clone(),
        task: args.task.clone(),
        target: args.target.clone(),
        mode: args.mode,
        agent: agent.unwrap_or_else(|| agent_of_launch(args.launch.as_deref())),
        into,
        command,
        table: args.table.clone(),
        launch: args.launch.clone(),
        force: args.force,
        max_iterations: args.max_iterations,
        timeout: args.timeout,
        limits: Limits {
            threshold: args.threshold,
            recoveries_per_iteration: args.max_recoveries_per_iteration,
            recoveries_total: args.max_recoveries,
            max_answers: args.max_answers,
            repeat_limit: args.repeat_limit,
            step_timeout: args.step_timeout,
            // `run tick --heartbeat` gives it, tick by tick.
            period: None,
        },
        wait_limits: args.waits.limits()?,
        notify: args.waits.notify.clone().filter(|c| !c.trim().is_empty()),
        max_compactions: args.max_compactions,
        compact_at: launch_compact_at(args.compact_at, &args.task),
        account: args.account.clone(),
        priority: args.priority,
        host: crate::host::this_host()?,
    };
    let prepared = control::prepare(&request)?;
    let mut registry = super::open(&args.registry)?;
    // The mark goes first, so the agent's very first tool call is judged unattended.
    let marked = if args.unattended {
        Some(mark_unattended(
            socket.clone(),
            &prepared.new.target,
            &args.session,
        )?)
    } else {
        None
    };
    let started = control::start(&mut registry, || Tmux::new(socket), &prepared, time::now);
    if let (Err(_), Some(store)) = (&started, &marked) {
        store.unmark_unattended(&args.session);
    }
    started?;
    Ok(Exit::Yes)
}

/// The agent a launch command starts: its last program's name when that is claude, codex or
/// gemini, generic for any other program (a script, a stand-in of your own), and claude when
/// there is no launch command or it is the default one.
fn agent_of_launch(launch: Option<&str>) -> Agent {
    let Some(launch) = launch.filter(|l| !l.trim().is_empty()) else {
        return Agent::Claude;
    };
    let programs = crate::supervise::launch::programs(launch);
    let name = programs
        .last()
        .and_then(|p| std::path::Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.as_str() {
        "claude" => Agent::Claude,
        "codex" => Agent::Codex,
        "gemini" => Agent::Gemini,
        _ => Agent::Generic,
    }
}

/// Mark the run's pane unattended for `hook pre-tool-use` (see `--unattended`).
fn mark_unattended(
    socket: Option<String>,
    target: &str,
    run: &str,
) -> Result<crate::hook::store::Store> {
    use anyhow::Context as _;
    let tmux = Tmux::new(socket)?;
    let pane = crate::supervise::driver::pane_of(&tmux, target)?;
    let server = pane
        .socket
        .filter(|s| !s.is_empty())
        .context("--unattended: tmux did not say which server the pane is on")?;
    let key = crate::hook::session::Key::Pane {
        socket: server,
        pane: pane.id,
    };
    let store = crate::hook::store::Store::from_env()?;
    store.mark_unattended(&key, run)?;
    Ok(store)
}

/// The percentage Claude Code is told to compact at by itself (`--compact-at`, else the
/// task's own threshold as `run tick` resolves it); None: left to Claude Code.
fn launch_compact_at(flag: Option<u8>, task: &std::path::Path) -> Option<u8> {
    let options = crate::supervise::channels::ChannelOptions {
        compact_at: match flag {
            None => Some(crate::supervise::channels::DEFAULT_COMPACT_AT),
            Some(0) => None,
            Some(at) => Some(at),
        },
        compact_at_given: flag.is_some(),
        ..crate::supervise::channels::ChannelOptions::DEFAULT
    };
    let (task, _) = crate::supervise::inputs::task_compaction(task);
    options.compaction_threshold(&task).map(|t| t.percent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_app_server_is_a_shell_dispatch_of_run_turn_for_codex() {
        let (into, command, agent) = dispatch_of(Some(IntoArg::AppServer), None, None);
        assert_eq!(into, Some(DispatchInto::Shell));
        assert_eq!(agent, Some(Agent::Codex));
        let command = command.unwrap();
        assert!(command.starts_with("autoctl run turn \""), "{command}");
        let vars = crate::routing::command::step_vars(
            "check",
            "post-exec",
            Some("TASK/x"),
            Some(3),
            false,
        );
        assert_eq!(
            crate::routing::command::render(&command, &vars).unwrap(),
            "autoctl run turn \"Run the check step of the task in TASK/x --checkpoint post-exec. \
             When it is done, write its signal with autoctl signal write.\""
        );
        // A command or agent of the user's own is kept.
        let (_, command, agent) = dispatch_of(
            Some(IntoArg::AppServer),
            Some("autoctl run turn {next}"),
            Some(Agent::Generic),
        );
        assert_eq!(command.as_deref(), Some("autoctl run turn {next}"));
        assert_eq!(agent, Some(Agent::Generic));
        // The other values pass through.
        assert_eq!(dispatch_of(None, None, None), (None, None, None));
        assert_eq!(
            dispatch_of(Some(IntoArg::Agent), None, None).0,
            Some(DispatchInto::Agent)
        );
    }

    #[test]
    fn the_agent_is_what_the_launch_command_starts() {
        assert_eq!(agent_of_launch(None), Agent::Claude);
        assert_eq!(agent_of_launch(Some("")), Agent::Claude);
        assert_eq!(
            agent_of_launch(Some(r#"claude "/ai-cli-task auto {task}""#)),
            Agent::Claude
        );
        assert_eq!(agent_of_launch(Some("/opt/bin/codex --yolo")), Agent::Codex);
        assert_eq!(agent_of_launch(Some("cd {task} && gemini")), Agent::Gemini);
        assert_eq!(
            agent_of_launch(Some("examples/fake-agent.sh --delay 1 {task}")),
            Agent::Generic
        );
        assert_eq!(agent_of_launch(Some("FOO=1 exec claude")), Agent::Claude);
    }
}

//! `autoctl hook stop|stop-failure|event|install`: the commands Claude Code runs as hooks
//! (wired by `hook install`, see `examples/claude/settings.json`). They read the event's JSON
//! on stdin and answer on stdout; see `crate::hook` for the loop they drive and the session
//! state they record.
//!
//! Every `hook` command exits 0 whatever goes wrong, with one line on stderr: Claude Code reads
//! exit 2 from a hook as "block" (and shows stderr to the model), and any other failure only
//! as a notice, so a broken hook must never be able to stop the agent.

use std::io;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use crate::cmd::args::AgentArg;
use crate::error::Exit;
use crate::fsx::{self, Bounded};
use crate::hook::agents::{self, HookAgent};
use crate::hook::event;
use crate::hook::input::STDIN_LIMIT;
use crate::hook::run::{self, Env, Reply};
use crate::hook::transcript::Limits;
use crate::lock::System;
use crate::output;
use crate::pane::reset::Zone;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum HookCommand {
    /// Answer Claude Code's Stop event: continue the loop with its next prompt, or let it stop
    ///
    /// Reads the Stop hook's JSON on stdin (session_id, transcript_path, cwd,
    /// hook_event_name, stop_hook_active, last_assistant_message). With no loop in the
    /// project (`autoctl loop init`), prints nothing: Claude stops. Otherwise the loop binds
    /// to the first session that stops (a session whose lock is stale and whose process is
    /// gone is taken over) and never blocks another one; it ends on the completion sentinel
    /// (a <promise>...</promise> tag anywhere in the last message outside code, or the sentinel
    /// on a line of its own earlier in the turn), the iteration limit, the token budget (the
    /// turn's final message included), too many compactions in a turn, idle turns, the block
    /// Claude Code would override (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP), or the task routing to
    /// (stop), printing {"systemMessage": ...}; else it prints
    /// {"decision":"block","reason":<next prompt>,"systemMessage":"... iteration N of M"}.
    ///
    /// The project is --dir, else $CLAUDE_PROJECT_DIR, else the input's cwd.
    ///
    /// It also records the Stop as the session's state, like `hook event` (idle with the
    /// agent's last message, or working when the loop continues), so Stop needs no second
    /// hook.
    ///
    /// Exit status: always 0. When it could not decide (stdin is not a hook input, the state
    /// cannot be written) it says so in one line on stderr and the stop is allowed. Never 2:
    /// Claude Code reads exit 2 from a Stop hook as "block and show stderr to the model".
    #[command(verbatim_doc_comment)]
    Stop(HookArgs),
    /// Record Claude Code's StopFailure event (a turn that ended on an API error)
    ///
    /// A rate_limit failure writes D/.autoctl/quota-wait.json {since, kind, reset_at?,
    /// reset_text?, detail?, session_id?} so supervisors treat the session as waiting for
    /// quota, not stalled (the next `hook stop` removes it); every failure is written to
    /// D/.autoctl/stop-failure.json {at, kind, detail?, session_id?}. Nothing is recorded in
    /// a project without D/.autoctl. Prints nothing (Claude Code ignores this event's
    /// output). It also records the session's state as failed:<error>, like `hook event`.
    /// Exit status: always 0, with one line on stderr when stdin is not a hook input or the
    /// record cannot be written.
    #[command(verbatim_doc_comment)]
    StopFailure(HookArgs),
    /// Record any Claude Code hook event as the session's typed state
    ///
    /// Reads the event's JSON on stdin (hook_event_name, session_id, cwd, ...) and records
    /// what the agent is doing — working (UserPromptSubmit, PreToolUse with the tool's name,
    /// PostToolUse, PermissionDenied), waiting-for-permission (Notification permission_prompt),
    /// waiting-for-input (Notification idle_prompt, elicitation), idle (Stop, SessionStart),
    /// failed:<error> (StopFailure), compacting (PreCompact), ended (SessionEnd; reason
    /// "clear" is not an end) — with its time, the agent's last message (Stop's
    /// last_assistant_message) and the time of the last event of each kind, in
    /// $AUTOCTL_STATE_DIR/hooks/. The record is keyed by the tmux pane ($TMUX_PANE on the
    /// server of $TMUX), else the session_id, else the cwd; `run tick`, `run watch`,
    /// `stall check` and `doctor` read it. A SessionStart with source clear, compact or resume
    /// rebinds the project's Stop-hook loop to the new session_id.
    ///
    /// A PermissionDenied (the agent denied a call itself, e.g. its auto-mode classifier) is
    /// also appended to the decision log (autoctl policy log).
    ///
    /// Prints nothing on stdout (SessionStart and UserPromptSubmit output would become model
    /// context). Writes are atomic and made only on change, without fsync.
    ///
    /// Exit status: always 0, with one line on stderr when nothing could be recorded (stdin
    /// is not a hook input, the state directory is not writable).
    #[command(verbatim_doc_comment)]
    Event(EventArgs),
    /// Wire autoctl's hooks into an agent's settings (Claude Code, Codex CLI, Gemini CLI)
    ///
    /// Claude Code (the default): merges into DIR/.claude/settings.json (--project, default
    /// the current directory) or ~/.claude/settings.json (--user, which applies to every
    /// interactive Claude Code session of this user and needs --yes): PreToolUse (matcher
    /// "*", every tool) → `autoctl hook pre-tool-use` (the policy's floor in every permission
    /// mode), PermissionRequest → `autoctl hook permission-request`, Stop → `autoctl hook
    /// stop`, StopFailure → `autoctl hook stop-failure`, SessionStart, SessionEnd,
    /// UserPromptSubmit, PostToolUse, PostToolUseFailure, PermissionDenied, Notification,
    /// PreCompact and PostCompact → `autoctl hook event`, and statusLine → `autoctl
    /// statusline`. A status line you already have is
    /// kept and wrapped (`autoctl statusline --then CMD`), never dropped.
    ///
    /// --agent codex: DIR/.codex/hooks.json (or, with --user --yes, $CODEX_HOME/hooks.json,
    /// default ~/.codex/hooks.json): PreToolUse → `autoctl hook pre-tool-use --agent codex`
    /// (`hook event` where this autoctl has none), PermissionRequest → `hook
    /// permission-request --agent codex`, Stop → `hook stop --agent codex`, SessionStart,
    /// SessionEnd, UserPromptSubmit, PostToolUse, PreCompact, PostCompact and Interrupt →
    /// `hook event --agent codex`. Codex runs a hook only once you have trusted it: open
    /// /hooks in Codex and trust autoctl's (each change of a hook asks again); project
    /// hooks load only in a project Codex trusts. `autoctl doctor` says what is missing.
    ///
    /// --agent gemini: DIR/.gemini/settings.json (or ~/.gemini/settings.json): BeforeTool →
    /// `hook pre-tool-use --agent gemini` (`hook event` where this autoctl has none),
    /// AfterAgent → `hook stop --agent gemini` (an AfterAgent block is Gemini's Stop-hook
    /// loop), SessionStart, SessionEnd, BeforeAgent, AfterTool, Notification and PreCompress
    /// → `hook event --agent gemini`. Gemini runs a project's hooks only in a folder it
    /// trusts, and warns once when it first sees them.
    ///
    /// Every other key and every hook of yours stays, in its order; a second run changes no
    /// byte. A file that is not valid JSON (or whose hooks/statusLine have the wrong shape) is
    /// refused and left untouched, as is a file that is a symlink. --dry-run prints the diff
    /// and changes nothing; --uninstall removes autoctl's hooks (and gives a wrapped status
    /// line back).
    ///
    /// Exit status: 0 done (or nothing to change); 2 the file is invalid or cannot be
    /// written, or --user without --yes. (Unlike the hook commands, this one is run by a
    /// person, so it fails loudly.)
    #[command(verbatim_doc_comment)]
    Install(InstallArgs),
    /// Answer Claude Code's PermissionRequest: allow what the policy proves harmless
    ///
    /// Reads the hook's JSON on stdin (session_id, cwd, tool_name, tool_input,
    /// permission_mode, permission_suggestions) and asks the approval policy (autoctl
    /// policy show): for a call a rule proves harmless it prints (on one line)
    ///   {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
    ///    "decision": {"behavior": "allow"}}}
    /// for one a deny rule refuses the same with "behavior": "deny" and a "message" naming
    /// the rule (the model sees it), and for everything else nothing, so Claude Code shows its
    /// own prompt and a person decides. Every decision is appended to the decision log
    /// (autoctl policy log).
    ///
    /// The policy is --policy FILE, else $XDG_CONFIG_HOME/autoctl/policy.json; never a file
    /// inside the project. It answers within --timeout (default 5s) whatever happens.
    ///
    /// Exit status: always 0. A bad payload, policy file or flag is no decision and one line
    /// on stderr (exit 2 would block the tool call).
    #[command(verbatim_doc_comment)]
    PermissionRequest(crate::cmd::policy::PermissionArgs),
    /// Answer Claude Code's PreToolUse: the policy's floor in every permission mode
    ///
    /// Runs before every tool call, in every permission mode (default, acceptEdits, plan,
    /// auto, dontAsk, bypassPermissions), where PermissionRequest sees only the calls a mode
    /// still asks about. Reads the hook's JSON on stdin (session_id, cwd, permission_mode,
    /// tool_name, tool_input, tool_use_id) and asks the approval policy (autoctl policy
    /// show). For a call it names destructive (rm, a forced push, a write to .claude/ or .git/,
    /// a command too deep or long to read) it prints (on one line)
    ///   {"hookSpecificOutput": {"hookEventName": "PreToolUse",
    ///    "permissionDecision": "ask", "permissionDecisionReason": "autoctl policy
    ///    (destructive:rm): ..."}}
    /// so Claude Code draws its permission box even in bypassPermissions mode and a person
    /// (or the supervisor's escalation) decides; with "deny" instead when the run is
    /// unattended (--unattended, AUTOCTL_UNATTENDED=1 in the agent's environment, a pane `run
    /// start --unattended` marked, or on_destructive "deny" in the policy file): the call is
    /// not run and the model is told the rule and why. A user's deny rule denies. Everything
    /// else gets no output at all, so the agent's own flow (its mode, then PermissionRequest)
    /// is untouched. Every decision is appended to the decision log (autoctl policy log), and
    /// the call is recorded as the session's state like `hook event`.
    ///
    /// Install it with `autoctl hook install` (PreToolUse, matcher "*"). With --agent codex it
    /// answers Codex CLI's PreToolUse (Codex cannot ask: a destructive call is denied, with
    /// the reason, whoever watches); with --agent gemini, Gemini CLI's BeforeTool
    /// ({"decision": "ask"|"deny", "reason": ...}; ask draws Gemini's confirmation even in
    /// YOLO mode).
    ///
    /// Exit status: always 0. A bad payload, policy file or flag is no decision and one line
    /// on stderr (exit 2 would block the tool call).
    #[command(verbatim_doc_comment)]
    PreToolUse(crate::cmd::policy::PreToolUseArgs),
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The agent whose hooks are wired
    #[arg(long, value_enum, value_name = "AGENT", default_value_t)]
    pub agent: HookAgent,
    /// The project whose settings are changed (.claude/settings.json, .codex/hooks.json,
    /// .gemini/settings.json) [default: the current directory]
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    pub project: Option<PathBuf>,
    /// Change the user's settings instead (~/.claude/settings.json, ~/.codex/hooks.json,
    /// ~/.gemini/settings.json): every interactive session of this user
    #[arg(long)]
    pub user: bool,
    /// Confirm --user
    #[arg(long)]
    pub yes: bool,
    /// Print the diff and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Remove autoctl's hooks and status line (a wrapped status line is given back)
    #[arg(long)]
    pub uninstall: bool,
    /// Also install the ai-cli-task slash command (.claude/commands/ai-cli-task.md), which
    /// runs the steps `run start --mode dispatch` types into Claude Code (Claude Code only)
    ///
    /// A file of that name that autoctl did not write is left untouched (exit 2); with
    /// --uninstall, autoctl's copy is removed.
    #[arg(long)]
    pub commands: bool,
    /// How the hooks run autoctl [default: `autoctl` when that is this binary on PATH, else
    /// this binary's absolute path]
    #[arg(long, value_name = "PATH")]
    pub autoctl: Option<String>,
}

#[derive(Debug, Args)]
pub struct EventArgs {
    #[command(flatten)]
    pub agent: AgentArg,
}

impl EventArgs {
    /// `hook event [--agent AGENT]`, for the hot path that skips the parser.
    pub fn agent(agent: Option<HookAgent>) -> EventArgs {
        EventArgs {
            agent: AgentArg { agent },
        }
    }
}

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(flatten)]
    pub agent: AgentArg,
    /// The project whose loop answers [default: $CLAUDE_PROJECT_DIR, else the input's cwd]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Append one JSON line per call to FILE: what was read and what was answered
    ///
    /// Without it, AUTOCTL_LOG=debug in the hook's environment logs to the project's
    /// .autoctl/debug.log (when the project has a loop directory). Rotated to FILE.1 past
    /// 1 MiB; a failure to log is a warning, never a different answer.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// Run a hook command. Never an error and never exit 2 (see the module doc), except
/// `hook install`, which a person runs.
pub fn run(command: HookCommand) -> Result<Exit> {
    if let HookCommand::Install(args) = &command {
        return install(args);
    }
    // A hook records where the supervisor reads even when the agent runs with a relative
    // `HOME` (a person's command refuses one; see `supervise::state_dir`).
    crate::supervise::ignore_relative_home();
    let result = match command {
        HookCommand::Install(args) => return install(&args),
        HookCommand::Event(args) => {
            let lines = match read_stdin() {
                // Parsed once: the decision log and the record read the same value.
                Ok(bytes) => match crate::hook::session::parse_value(&bytes) {
                    Ok(value) => {
                        crate::cmd::policy::log_permission_denied(&value);
                        event::record_value(args.agent.agent, value, None)
                    }
                    Err(problem) => vec![format!("hook event: {problem}; nothing recorded")],
                },
                Err(problem) => vec![format!("hook event: {problem}; nothing recorded")],
            };
            for line in lines {
                output::error_line(&line);
            }
            Ok(Exit::Yes)
        }
        HookCommand::PermissionRequest(args) => Ok(crate::cmd::policy::permission_request(&args)),
        HookCommand::PreToolUse(args) => Ok(crate::cmd::policy::pre_tool_use(&args)),
        command => answer(command),
    };
    match result {
        Ok(_) => Ok(Exit::Yes),
        Err(err) if crate::error::is_broken_pipe(&err) => Ok(Exit::Yes),
        Err(err) => {
            output::error_line(&format!("{err:#}"));
            Ok(Exit::Yes)
        }
    }
}

fn answer(command: HookCommand) -> Result<Exit> {
    let host = match System::from_env() {
        Ok(host) => host,
        Err(err) => {
            output::error_line(&format!("{err:#}; allowing the stop"));
            return Ok(Exit::Yes);
        }
    };
    let (stdin, args) = match &command {
        HookCommand::Stop(args) | HookCommand::StopFailure(args) => (read_stdin(), args),
        HookCommand::Event(_)
        | HookCommand::Install(_)
        | HookCommand::PermissionRequest(_)
        | HookCommand::PreToolUse(_) => {
            unreachable!("answered by run")
        }
    };
    // Codex's and Gemini's payloads are read in Claude Code's vocabulary (AfterAgent is the
    // Stop of a Gemini loop); Claude Code's bytes pass through as they are.
    let (agent, stdin) = match stdin {
        Ok(bytes) => match agents::canonical_bytes(args.agent.agent, &bytes) {
            (agent, std::borrow::Cow::Borrowed(_)) => (agent, Ok(bytes)),
            (agent, std::borrow::Cow::Owned(canonical)) => (agent, Ok(canonical)),
        },
        Err(problem) => (args.agent.agent.unwrap_or_default(), Err(problem)),
    };
    let mut env = Env {
        host: &host,
        dir: args.dir.clone(),
        project_env: std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        pid: crate::lock::nearest_non_shell_ancestor(),
        limits: Limits::default(),
        block_cap: block_cap_from_env(),
        status: None,
    };
    let started = std::time::Instant::now();
    let input = stdin
        .as_ref()
        .ok()
        .and_then(|bytes| crate::hook::input::parse(bytes).ok());
    let (outcome, recorded) = match (stdin, &command) {
        (Err(problem), _) => (
            Reply {
                kind: "error".to_string(),
                error: Some(format!("{problem}; allowing the stop")),
                ..Reply::default()
            },
            Vec::new(),
        ),
        (Ok(bytes), HookCommand::Stop(_)) => {
            env.status = status_record(&bytes);
            let outcome = run::stop(&bytes, &env);
            // Recorded after the decision, so the record says whether the loop went on.
            let continued = outcome
                .prompt
                .as_ref()
                .map(|_| event::Extra::Continued(outcome.iteration.unwrap_or(0)));
            let recorded = event::record_quietly(Some(agent), &bytes, continued);
            (outcome, recorded)
        }
        (Ok(bytes), HookCommand::StopFailure(_)) => (
            run::stop_failure(&bytes, &env, Zone::from_env()),
            event::record_quietly(Some(agent), &bytes, None),
        ),
        (
            _,
            HookCommand::Event(_)
            | HookCommand::Install(_)
            | HookCommand::PermissionRequest(_)
            | HookCommand::PreToolUse(_),
        ) => {
            unreachable!("answered by run")
        }
    };
    let logged = debug_log(&command, args, &env, input.as_ref(), &outcome, started);
    for warning in outcome.warnings.iter().chain(&recorded).chain(&logged) {
        output::warn(warning);
    }
    if let Some(error) = &outcome.error {
        output::error_line(error);
        return Ok(Exit::No);
    }
    if let (HookCommand::Stop(_), Some(answer)) = (&command, outcome.hook_json()) {
        output::json_line(&answer)?;
    }
    Ok(Exit::Yes)
}

/// Append this call to the debug log when one is asked for (see [`crate::debuglog`]).
/// Returns the warnings to print.
fn debug_log(
    command: &HookCommand,
    args: &HookArgs,
    env: &Env,
    input: Option<&crate::hook::input::HookInput>,
    outcome: &Reply,
    started: std::time::Instant,
) -> Vec<String> {
    let loop_dir = crate::hook::state::LoopDir::new(&env.project(input));
    let default = crate::hook::state::dir_exists(&loop_dir)
        .then(|| loop_dir.dir.join(crate::debuglog::FILE_NAME));
    let (target, warning) = crate::debuglog::target(
        args.log.as_deref(),
        std::env::var(crate::debuglog::ENV).ok().as_deref(),
        default,
    );
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let Some(path) = target else {
        return warnings;
    };
    let record = serde_json::json!({
        "at": crate::time::now().map(crate::time::format_time).ok(),
        "pid": std::process::id(),
        "command": match command {
            HookCommand::StopFailure(_) => "hook stop-failure",
            _ => "hook stop",
        },
        "project": loop_dir.project,
        "session_id": input.and_then(|i| i.session_id.clone()),
        "transcript_path": input.and_then(|i| i.transcript_path.clone()),
        "hook_event_name": input.and_then(|i| i.hook_event_name.clone()),
        "stop_hook_active": input.and_then(|i| i.stop_hook_active),
        "last_assistant_message_chars": input
            .and_then(|i| i.last_assistant_message.as_ref())
            .map(|m| m.chars().count()),
        "failure": input.filter(|_| matches!(command, HookCommand::StopFailure(_))).map(|i| i.failure_kind()),
        "block_cap": env.block_cap,
        "status_line": env.status.is_some(),
        "kind": outcome.kind,
        "iteration": outcome.iteration,
        "message": outcome.message,
        "prompt_chars": outcome.prompt.as_ref().map(|p| p.chars().count()),
        "warnings": outcome.warnings,
        "error": outcome.error,
        "elapsed_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    if let Err(err) = crate::debuglog::append(&path, &record) {
        warnings.push(format!("{err:#}"));
    }
    warnings
}

/// Claude Code's Stop-hook block cap, read from the environment it passes its hooks.
pub fn block_cap_from_env() -> Option<u64> {
    crate::hook::decide::block_cap(
        std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
            .ok()
            .as_deref(),
    )
}

/// The session's status-line record (`autoctl statusline`), found the way the status line
/// filed it: by this hook's tmux pane, else the session id. Best effort: none is fine.
fn status_record(bytes: &[u8]) -> Option<crate::hook::statusline::StatusRecord> {
    let payload = crate::hook::session::parse(bytes).ok()?;
    let key = crate::hook::store::HookEnv::from_env().key(&payload)?;
    crate::hook::store::Store::from_env()
        .ok()?
        .read_status(&key)
        .ok()
        .flatten()
}

fn read_stdin() -> std::result::Result<Vec<u8>, String> {
    match fsx::read_bounded_from(io::stdin().lock(), STDIN_LIMIT) {
        Ok(Bounded::Complete(bytes)) => Ok(bytes),
        Ok(Bounded::TooLarge { limit }) => Err(format!(
            "stdin is larger than {}: not a hook input",
            fsx::human_size(limit)
        )),
        Err(err) => Err(format!("cannot read stdin: {err}")),
    }
}

fn install(args: &InstallArgs) -> Result<Exit> {
    use crate::hook::settings;
    if args.commands && args.agent != HookAgent::Claude {
        anyhow::bail!(
            "--commands installs a Claude Code slash command; it has no --agent {}",
            args.agent.as_str()
        );
    }
    let path = settings_path(args)?;
    if args.user && !args.yes && !args.dry_run {
        anyhow::bail!(
            "--user changes {}, which applies to every interactive {} session of this user \
             (its tool calls answered by autoctl's policy included); pass --yes to confirm, or \
             use --project DIR",
            path.display(),
            args.agent.title()
        );
    }
    fsx::refuse_symlink(&path, "settings file", "--project")?;
    let original = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8; left untouched", path.display()))?,
        Ok(Bounded::TooLarge { limit }) => anyhow::bail!(
            "{}: larger than {}; left untouched",
            path.display(),
            fsx::human_size(limit)
        ),
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut value = settings::parse(&original)
        .map_err(|err| anyhow::anyhow!("{}: {err}; left untouched", path.display()))?;
    let changes = if args.uninstall {
        settings::uninstall(&mut value)
    } else {
        settings::install_for(
            args.agent,
            &mut value,
            &autoctl_command(args.autoctl.as_deref()),
            &has_subcommand,
        )
    };
    let existed = !original.is_empty() || path.exists();
    let updated = settings::render(&value, &original);
    let unchanged = updated == original || (!existed && args.uninstall);
    if args.dry_run {
        let shown = path.display().to_string();
        let old = if existed {
            shown.clone()
        } else {
            "/dev/null".to_string()
        };
        if !unchanged {
            output::raw(settings::diff(&original, &updated, &old, &shown).as_bytes())?;
        }
        if args.commands {
            commands(args, &path)?;
        }
        return Ok(Exit::Yes);
    }
    if unchanged {
        output::line(format!("{}: up to date", path.display()))?;
    } else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        fsx::atomic_write(&path, updated.as_bytes())?;
        for note in &changes.notes {
            output::line(note)?;
        }
        output::line(format!("wrote {}", path.display()))?;
        if !args.uninstall
            && let Some(step) = by_hand(args.agent)
        {
            output::line(step)?;
        }
    }
    if args.commands {
        commands(args, &path)?;
    }
    Ok(Exit::Yes)
}

/// The file `hook install` changes for the agent: the project's (`--project`, default the
/// current directory) or the user's (`--user`).
fn settings_path(args: &InstallArgs) -> Result<PathBuf> {
    let relative = match args.agent {
        HookAgent::Claude => ".claude/settings.json",
        HookAgent::Codex => ".codex/hooks.json",
        HookAgent::Gemini => ".gemini/settings.json",
    };
    if args.user {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .context("--user needs $HOME")?;
        // Codex keeps its user layer in $CODEX_HOME when that is set.
        if args.agent == HookAgent::Codex
            && let Some(codex_home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty())
        {
            return Ok(PathBuf::from(codex_home).join("hooks.json"));
        }
        return Ok(PathBuf::from(home).join(relative));
    }
    let project = match &args.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    fsx::require_dir(&project)?;
    Ok(project.join(relative))
}

/// What a person must still do for the installed hooks to run.
fn by_hand(agent: HookAgent) -> Option<&'static str> {
    match agent {
        HookAgent::Claude => None,
        HookAgent::Codex => Some(
            "next: Codex runs hooks only once they are trusted: start codex, open /hooks and \
             trust autoctl's (project hooks load only in a project Codex trusts); autoctl \
             doctor checks that they fire",
        ),
        HookAgent::Gemini => Some(
            "next: Gemini runs a project's hooks only in a folder it trusts, and shows a \
             warning the first time it sees them; autoctl doctor checks that they fire",
        ),
    }
}

/// `--commands`: the ai-cli-task slash command beside the settings file.
fn commands(args: &InstallArgs, settings: &std::path::Path) -> Result<()> {
    use crate::hook::commands;
    let claude_dir = settings
        .parent()
        .context("the settings file has no directory")?;
    let change = if args.uninstall {
        commands::uninstall(claude_dir, args.dry_run)?
    } else {
        commands::install(claude_dir, args.dry_run)?
    };
    output::line(change.line(args.dry_run))?;
    Ok(())
}

/// How the installed hooks name autoctl: `autoctl` when that is this very binary on PATH,
/// else this binary's absolute path (quoted for the shell Claude Code runs hooks with).
fn autoctl_command(given: Option<&str>) -> String {
    if let Some(given) = given {
        return given.to_string();
    }
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    let on_path = which::which("autoctl")
        .ok()
        .and_then(|p| p.canonicalize().ok());
    match (me, on_path) {
        (Some(me), Some(found)) if me == found => "autoctl".to_string(),
        (Some(me), _) => crate::shell::quote_if_needed(&me.to_string_lossy()),
        (None, _) => "autoctl".to_string(),
    }
}

/// Whether this binary has `autoctl hook SUBCOMMAND` (a hook it lacks is not installed, and
/// `doctor` does not ask for it).
pub fn has_subcommand(subcommand: &str) -> bool {
    <HookCommand as clap::Subcommand>::has_subcommand(subcommand)
}

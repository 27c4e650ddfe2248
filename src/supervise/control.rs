//! Starting, stopping and continuing runs: the rules `run start`, `run stop` and `run
//! continue` follow, over the registry ([`crate::supervise::store::Registry`]) and the
//! terminal. The commands in `cmd/run/` parse their arguments, call these, and print.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::output;
use crate::pane::reset::Zone;
use crate::pane::rules::RuleSet;
use crate::pane::{Agent, Class, Key};
use crate::protocol::signal::{self, now_timestamp};
use crate::protocol::stop::{self, StopRequest, StopState};
use crate::routing::{self, command};
use crate::supervise::driver::{self, World};
use crate::supervise::inputs;
use crate::supervise::run::{DispatchInto, Mode, NewRun, Run, Status};
use crate::supervise::stall::{Limits, step_timeout::Continuation};
use crate::supervise::store::{Registry, StartConflict};
use crate::supervise::typing;
use crate::supervise::wait::WaitLimits;
use crate::time::Time;
use crate::tmux::{Terminal, TmuxError};

/// Seed 000's agent command for `--launch` without a value (observe mode).
pub const DEFAULT_LAUNCH: &str = r#"claude "/ai-cli-task auto {task}""#;

/// `--launch` without a value in dispatch mode `--into agent`: start Claude Code once, idle
/// at its prompt; each step is typed into it.
pub const AGENT_LAUNCH: &str = "claude";

/// How long `run start --launch` waits for a shell prompt (a pane created a moment ago is
/// still starting its shell).
const LAUNCH_READY_WAIT: Duration = Duration::from_secs(3);

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
pub fn check_name(kind: &str, value: &str) -> Result<()> {
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

/// What `run start` asks for.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub session: String,
    pub task: PathBuf,
    /// The pane; `None`: the session's active pane.
    pub target: Option<String>,
    pub mode: Mode,
    pub agent: Agent,
    /// Dispatch mode: typed into the agent or at a shell prompt (`None`: the agent's default).
    pub into: Option<DispatchInto>,
    /// Dispatch mode's command template (`None`: the default for `into`).
    pub command: Option<String>,
    /// The routing table (built-in name or file).
    pub table: String,
    /// The agent's command template, typed after registering (observe mode, or dispatch
    /// mode into the agent); empty: the mode's default.
    pub launch: Option<String>,
    /// Type the launch command even when no shell prompt shows.
    pub force: bool,
    pub max_iterations: u64,
    pub timeout: Duration,
    pub limits: Limits,
    pub wait_limits: WaitLimits,
    /// The run's own notify command.
    pub notify: Option<String>,
    /// Context compactions allowed in one iteration (0: no limit).
    pub max_compactions: u32,
    /// Claude Code's own compaction threshold (percent) for the agent `--launch` starts
    /// (`None`: not set).
    pub compact_at: Option<u8>,
    /// The subscription account the agent spends.
    pub account: String,
    /// Release order after a reset, and use of the weekly reserve.
    pub priority: i32,
    /// The host that runs the pane.
    pub host: String,
}

/// A start request checked and rendered: what [`start`] registers.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub new: NewRun,
    /// The pane was named (`--target`), not found by the session's name.
    pub target_given: bool,
    pub force: bool,
}

/// Check what can be checked without the registry or tmux: the names, the task dir, the
/// table and the templates (they must load and render now, not at the first tick).
pub fn prepare(request: &StartRequest) -> Result<Prepared> {
    let target = checked_target(request)?;
    crate::fsx::require_dir(&request.task)?;
    let task_dir = task_key(&request.task)?;
    let table = checked_table(request)?;
    let sample = sample_vars(request, &task_dir);
    let into = request
        .into
        .unwrap_or_else(|| DispatchInto::default_for(request.agent));
    let template = step_template(request, into, &sample)?;
    let launch_command = launch_line(request, into, &sample)?;
    let new = NewRun {
        session: request.session.clone(),
        task_dir: task_dir.clone(),
        target,
        mode: request.mode,
        agent: request.agent,
        launch_command,
        command_template: template,
        into,
        table,
        max_iterations: request.max_iterations,
        timeout: request.timeout,
        limits: request.limits,
        wait_limits: request.wait_limits.clone(),
        notify: request.notify.clone(),
        max_compactions: request.max_compactions,
        account: request.account.clone(),
        priority: request.priority,
        host: request.host.clone(),
    };
    Ok(Prepared {
        new,
        target_given: request.target.is_some(),
        force: request.force,
    })
}

/// The session, account and pane names; the pane is `=SESSION:` unless named. `=NAME:` is
/// tmux's exact-match form (so `demo` never means `demo2`); it is checked against the pane
/// it resolves to at the start, since tmux reads some names (`$1`) as ids.
fn checked_target(request: &StartRequest) -> Result<String> {
    check_name("--session", &request.session)?;
    check_name("--account", &request.account)?;
    let target = request
        .target
        .clone()
        .unwrap_or_else(|| format!("={}:", request.session));
    check_name("--target", &target)?;
    if target.starts_with('-') {
        bail!("--target {target:?} starts with '-'; name the pane explicitly (e.g. SESSION:0.0)");
    }
    Ok(target)
}

/// The routing table as the run stores it (a built-in name, or the file's key), once it
/// loads. A loop whose first answer is (stop) ends at once (or, run by the agent, is
/// relaunched until a person is asked, the cause only in its pane): said now, at the door.
/// A module `next` cannot read (no .index.md yet) is the loop's to find out.
fn checked_table(request: &StartRequest) -> Result<String> {
    let table = routing::load(&request.table)?;
    if let Ok(entry) = routing::resume::resume(&table, &request.task)
        && entry.next == signal::STOP
    {
        bail!(
            "{}: the loop would stop at once: {} (nothing was started)",
            request.task.display(),
            entry.rationale
        );
    }
    if routing::builtin(&request.table).is_some() {
        Ok(request.table.clone())
    } else {
        task_key(Path::new(&request.table))
    }
}

/// The variables of a first step, to render the templates with now. `--into shell`'s files
/// are named where the tick will name them: a state dir whose path a shell line cannot
/// hold is refused now, not at the first dispatch.
fn sample_vars(request: &StartRequest, task_dir: &str) -> BTreeMap<&'static str, String> {
    let mut sample = command::step_vars("plan", "", Some(task_dir), Some(1), false);
    if let Ok(state) = crate::supervise::state_dir() {
        let stream = crate::supervise::stream::stream_path(&state, &request.session, 1);
        sample.insert(
            "settings",
            crate::supervise::stream::settings_path(&state)
                .display()
                .to_string(),
        );
        sample.insert("stream", stream.display().to_string());
    }
    sample
}

/// Dispatch mode's step command template (the default for `into` unless `--command`),
/// rendered once to prove it renders. `--into` is refused in observe mode; the built-in
/// step command at a shell is Claude Code's `claude -p`, so a Codex or Gemini run there
/// needs `--command`.
fn step_template(
    request: &StartRequest,
    into: DispatchInto,
    sample: &BTreeMap<&'static str, String>,
) -> Result<String> {
    if request.mode == Mode::Observe && request.into.is_some() {
        bail!("--into is for dispatch mode (--mode dispatch)");
    }
    if request.mode == Mode::Dispatch
        && into == DispatchInto::Shell
        && request.command.is_none()
        && matches!(request.agent, Agent::Codex | Agent::Gemini)
    {
        bail!(
            "--agent {} at a shell needs --command: the built-in step command is Claude Code's `claude -p` (for Gemini e.g. --command 'gemini -p \"Run the {{next}} step of the task in {{task}} {{args}}\" --output-format stream-json > {{stream}}'; for Codex --into app-server)",
            request.agent.as_str()
        );
    }
    let template = request.command.clone().unwrap_or_else(|| {
        match into {
            DispatchInto::Agent => command::AGENT_TEMPLATE,
            DispatchInto::Shell => command::DEFAULT_TEMPLATE,
        }
        .to_string()
    });
    if request.mode == Mode::Dispatch {
        command::render(&template, sample).context("--command")?;
    }
    Ok(template)
}

/// The agent's launch line (`--launch`; empty: the mode's default), rendered, with Claude
/// Code's own retries and compaction first (issue 28). Not for `--into shell`, where autoctl
/// types each step itself.
fn launch_line(
    request: &StartRequest,
    into: DispatchInto,
    sample: &BTreeMap<&'static str, String>,
) -> Result<Option<String>> {
    let Some(template) = &request.launch else {
        return Ok(None);
    };
    if request.mode == Mode::Dispatch && into == DispatchInto::Shell {
        bail!(
            "--launch is for observe mode and --into agent; with --into shell autoctl types each step itself (--command)"
        );
    }
    let template = match (template.as_str(), request.mode) {
        ("", Mode::Observe) => DEFAULT_LAUNCH,
        ("", Mode::Dispatch) => AGENT_LAUNCH,
        (template, _) => template,
    };
    let line = command::render(template, sample).context("--launch")?;
    Ok(Some(match request.agent {
        Agent::Claude => crate::supervise::launch::with_claude_env(&line, request.compact_at),
        _ => line,
    }))
}

/// Register a prepared loop: refuse a conflict (exit 3, naming the owner), check the pane
/// (and a shell prompt for `--launch`), then insert the run, remove a leftover `.auto-stop`,
/// and type the launch command. `terminal` is opened only once no conflict was found (a
/// conflict is the answer even when tmux is absent).
pub fn start<T: Terminal>(
    registry: &mut dyn Registry,
    terminal: impl FnOnce() -> Result<T>,
    prepared: &Prepared,
    now: impl Fn() -> Result<Time>,
) -> Result<Run> {
    let new = &prepared.new;
    // A loop that already owns the session or the task dir is the answer (exit 3, naming the
    // owner) even when the pane is gone; the insert below checks again, atomically.
    let owner = match registry.get(&new.session)? {
        Some(run) if run.status.is_active() => Some(run),
        _ => registry
            .find_task(&new.task_dir)?
            .filter(|run| run.status.is_active()),
    };
    if let Some(owner) = owner {
        return Err(StartConflict::error(new, &owner));
    }
    let terminal = terminal()?;
    let pane = match driver::pane_of(&terminal, &new.target) {
        Ok(pane) => pane,
        Err(err) if !prepared.target_given && TmuxError::is_not_found(&err) => bail!(
            "{err:#}; if session {:?} exists, pass --target with its pane (tmux reads some names, e.g. ones starting with $, as ids)",
            new.session
        ),
        Err(err) => return Err(err),
    };
    if !prepared.target_given {
        let session = pane.address.rsplit_once(':').map(|(session, _)| session);
        if pane.id.is_empty() || session != Some(new.session.as_str()) {
            bail!(
                "tmux cannot address session {:?} by its name; pass --target with its pane (e.g. --target %3, see `tmux list-panes -a`)",
                new.session
            );
        }
    }
    if let Some(command) = &new.launch_command
        && !prepared.force
    {
        crate::supervise::launch::check(pane.pid, command)?;
        launch_ready(&terminal, &new.target, &now)?;
    }
    let now = now()?;
    let run = registry.start(new, now)?;
    clear_stale_stop(Path::new(&new.task_dir));
    if let Some(command) = &new.launch_command {
        let keys = [Key::Text(command.clone()), Key::Key("Enter".to_string())];
        if let Err(err) = typing::type_keys(&terminal, &new.target, &keys) {
            let why = format!("could not launch the agent: {err:#}");
            registry.end(&new.session, Status::Lost, "launch_failed", Some(&why), now)?;
            bail!("{why}");
        }
    }
    Ok(run)
}

/// Refuse to type the launch command unless a shell prompt is in front: text typed into a
/// running program is input to that program.
fn launch_ready(
    terminal: &dyn Terminal,
    target: &str,
    now: &dyn Fn() -> Result<Time>,
) -> Result<()> {
    let deadline = std::time::Instant::now() + LAUNCH_READY_WAIT;
    loop {
        let view = driver::look(
            terminal,
            RuleSet::embedded(),
            target,
            Agent::Generic,
            Zone::Utc,
            now()?,
        )?;
        let readiness = view.readiness();
        if readiness.is_ready() {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            bail!(
                "--launch: pane {target} is not at a shell prompt ({}); nothing typed or registered (wait with `autoctl pane ready {target} --wait 1m`, or pass --force)",
                readiness.reason()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
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

/// The run a command names: by session, else by task dir.
pub fn find(
    registry: &mut dyn Registry,
    session: Option<&str>,
    task: Option<&Path>,
) -> Result<Option<Run>> {
    match (session, task) {
        (Some(session), _) => registry.get(session),
        (None, Some(task)) => registry.find_task(&task_key(task)?),
        (None, None) => Ok(None),
    }
}

/// How a command's selection is named in messages.
pub fn describe_selection(session: Option<&str>, task: Option<&Path>) -> String {
    match (session, task) {
        (Some(session), _) => format!("session {session:?}"),
        (None, Some(task)) => format!("task dir {}", task.display()),
        (None, None) => "the selection".to_string(),
    }
}

/// Stop a running loop: write `.auto-stop` (dispatch mode also removes the signal it owns)
/// and end the run. A run that has already ended is returned unchanged with a warning.
pub fn stop(
    registry: &mut dyn Registry,
    run: &Run,
    reason: &str,
    message: Option<&str>,
    now: Time,
) -> Result<()> {
    if !run.status.is_active() {
        output::warn(&format!(
            "the run of session {:?} has already ended ({}{})",
            run.spec.session,
            run.status.as_str(),
            run.stop_reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
        return Ok(());
    }
    let dir = run.task_path();
    if dir.is_dir() {
        let request = StopRequest {
            reason: reason.to_string(),
            timestamp: now_timestamp(now),
            message: message.map(str::to_string),
        };
        stop::write(dir, &request)?;
        if run.spec.mode == Mode::Dispatch {
            crate::fsx::remove_if_exists(&signal::path_in(dir))?;
        }
    } else {
        output::warn(&format!(
            "task dir {} no longer exists; ending the run without a stop file",
            run.spec.task_dir
        ));
    }
    registry.end(&run.spec.session, Status::Stopped, reason, message, now)?;
    Ok(())
}

/// A person acknowledged the run: clear its needs-person state (and do not escalate the same
/// screen again). The needs-person that was cleared, or None when there was none.
pub fn acknowledge(
    registry: &mut dyn Registry,
    session: &str,
) -> Result<Option<crate::supervise::wait::NeedsPerson>> {
    let mut cleared = None;
    registry.amend(session, &mut |run| {
        if !run.status.is_active() {
            return false;
        }
        cleared = run.waits.needs_person.take();
        if let Some(needs) = &cleared {
            run.waits.acked_hash = needs.key().map(str::to_string);
            run.last_decision = format!("acknowledged: {}", needs.why);
        }
        cleared.is_some()
    })?;
    Ok(cleared)
}

/// Seed 002's "Silent Continue" on demand: under the pane's typing lock, type `text` and
/// Enter only while `.status.json`'s `updated_at` is still `if_unchanged` and the pane shows
/// the agent idle at its own input. `Ok(Some(why))` when nothing was sent.
pub fn continue_run(
    world: &World<'_>,
    run: &Run,
    if_unchanged: &str,
    text: &str,
    now: Time,
) -> Result<Option<String>> {
    if !run.status.is_active() {
        bail!(
            "the run of session {:?} has ended ({}); there is no loop to continue",
            run.spec.session,
            run.status.as_str()
        );
    }
    let dir = run.task_path();
    crate::fsx::require_dir(dir)?;
    let pane = driver::pane_of(world.terminal, &run.spec.target)?;
    let _lock = typing::lock_pane(world.terminal, &world.state_dir, world.socket, &pane.id)?;
    if let Continuation::Abort { reason } = inputs::continuation_cas(if_unchanged, dir) {
        return Ok(Some(reason));
    }
    // Only an idle agent waiting for its next turn gets the text: at a permission menu the
    // Enter would approve whatever option 1 is, and with another program in front the text
    // would be that program's input.
    let view = driver::look(
        world.terminal,
        world.rules,
        &pane.id,
        run.spec.agent,
        Zone::from_env(),
        now,
    )?;
    let seen = &view.classification;
    if seen.class != Class::Idle || view.foreground_is_shell {
        return Ok(Some(format!(
            "the pane shows {} ({}), not an idle agent waiting for its turn",
            seen.class.as_str(),
            seen.rule.as_deref().unwrap_or(&seen.reason)
        )));
    }
    let keys = [Key::Text(text.to_string()), Key::Key("Enter".to_string())];
    typing::type_keys(world.terminal, &pane.id, &keys)?;
    Ok(None)
}

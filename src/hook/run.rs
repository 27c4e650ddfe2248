//! The edge of `hook stop`, `loop route` and `hook stop-failure`: find the loop, serialize
//! with other hook invocations, read the transcript, call the pure [`decide`], and apply the
//! decision (state, lock, teardown). Nothing here decides; everything here can fail, and every
//! failure ends in "allow the stop" — a loop must never hold a session hostage to bad state.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::decide::{self, Found, Kind, StopDecision, StopObservation};
use super::input::HookInput;
use super::prompt;
use super::quota;
use super::sentinel;
use super::state::{self, LoopConfig, LoopDir, LoopState};
use super::statusline::StatusRecord;
use super::transcript::{self, Cursor, Limits, TurnScan, Usage};
use crate::lock::{self, Claim, HeartbeatLock, Host};
use crate::pane::reset::Zone;

/// How long a hook waits for another hook invocation of the same loop to finish.
const GUARD_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a lagging transcript is checked for growth.
const LAG_POLL: Duration = Duration::from_millis(25);

/// Where a hook invocation runs.
pub struct Env<'a> {
    pub host: &'a dyn Host,
    /// `--dir`, if given.
    pub dir: Option<PathBuf>,
    /// `$CLAUDE_PROJECT_DIR`, which Claude Code sets for hook commands.
    pub project_env: Option<PathBuf>,
    /// The process's working directory.
    pub cwd: PathBuf,
    /// The process the loop lock names (the hook's parent: Claude Code or its shell).
    pub pid: u32,
    pub limits: Limits,
    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` as Claude Code applies it (see
    /// [`decide::block_cap`]).
    pub block_cap: Option<u64>,
    /// The session's status-line record, when `autoctl statusline` keeps one: its reading of
    /// the last message's tokens helps count a final message the transcript lags behind.
    pub status: Option<StatusRecord>,
}

impl Env<'_> {
    /// The project a hook input belongs to: `--dir`, else `$CLAUDE_PROJECT_DIR`, else the
    /// input's `cwd`, else the process's working directory.
    pub fn project(&self, input: Option<&HookInput>) -> PathBuf {
        self.dir
            .clone()
            .or_else(|| {
                self.project_env
                    .clone()
                    .filter(|p| !p.as_os_str().is_empty())
            })
            .or_else(|| input.and_then(|i| i.cwd.clone()))
            .unwrap_or_else(|| self.cwd.clone())
    }
}

/// What one invocation concluded.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// continue, done, ... (see [`Kind`]) or one of the edge's own: inactive, subagent,
    /// not-stop, no-session, bad-state, error.
    pub kind: String,
    /// Shown to the user.
    pub message: Option<String>,
    /// The next prompt, when the answer is to continue.
    pub prompt: Option<String>,
    /// Turns finished so far (after this Stop).
    pub iteration: Option<u64>,
    /// Diagnostics for stderr.
    pub warnings: Vec<String>,
    /// A failure that prevented a decision (stderr, non-blocking exit).
    pub error: Option<String>,
}

impl Reply {
    fn quiet(kind: &str) -> Reply {
        Reply {
            kind: kind.to_string(),
            ..Reply::default()
        }
    }

    fn aside(kind: &str, message: String) -> Reply {
        Reply {
            kind: kind.to_string(),
            warnings: vec![message.clone()],
            message: Some(message),
            ..Reply::default()
        }
    }

    fn failed(error: String) -> Reply {
        Reply {
            kind: "error".to_string(),
            error: Some(error),
            ..Reply::default()
        }
    }

    /// The JSON Claude Code reads on stdout: `{"decision":"block","reason":…}` to continue,
    /// `{"systemMessage":…}` to tell the user why the loop ends or stands aside, nothing
    /// otherwise (exit 0 with no output lets Claude stop).
    pub fn hook_json(&self) -> Option<Value> {
        match (&self.prompt, &self.message) {
            (Some(prompt), message) => {
                let mut answer = json!({"decision": "block", "reason": prompt});
                if let Some(message) = message {
                    answer["systemMessage"] = json!(message);
                }
                Some(answer)
            }
            (None, Some(message)) => Some(json!({"systemMessage": message})),
            (None, None) => None,
        }
    }
}

fn from_decision(decision: &StopDecision, warnings: Vec<String>) -> Reply {
    Reply {
        kind: decision.kind.as_str().to_string(),
        message: Some(decision.message.clone()),
        prompt: decision.prompt.clone(),
        iteration: decision.state.as_ref().map(|s| s.iteration),
        warnings,
        error: None,
    }
}

/// Whether this run may change files (`hook stop`) or only looks (`loop route`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Apply,
    DryRun,
}

/// `hook stop`: answer one Stop event.
pub fn stop(stdin: &[u8], env: &Env) -> Reply {
    let input = match super::input::parse(stdin) {
        Ok(input) => input,
        Err(problem) => {
            return Reply::failed(format!("hook stop: {problem}; allowing the stop"));
        }
    };
    if input.is_subagent() {
        return Reply::quiet("subagent");
    }
    if let Some(event) = input.hook_event_name.as_deref()
        && event != "Stop"
    {
        let mut outcome = Reply::quiet("not-stop");
        outcome.warnings.push(format!(
            "hook stop received a {event} event; it answers only Stop (see examples/claude/settings.json)"
        ));
        return outcome;
    }
    let dir = LoopDir::new(&env.project(Some(&input)));
    let mut outcome = answer(&input, &dir, env, Mode::Apply);
    // A finished turn ends a quota wait, loop or no loop: the account has quota again.
    if state::dir_exists(&dir)
        && let Err(err) = quota::clear_quota_wait(&dir)
    {
        outcome.warnings.push(format!("{err:#}"));
    }
    outcome
}

/// Decide for `input` in `dir`, applying the decision unless `mode` is a dry run: stand aside
/// without a loop, a session or a readable state; take the loop's lock (or see who holds
/// it), read the turn from the transcript, decide, and write what the decision says.
pub fn answer(input: &HookInput, dir: &LoopDir, env: &Env, mode: Mode) -> Reply {
    // Without a loop directory there is nothing to do, and nothing is created.
    if !state::dir_exists(dir) || !dir.config().exists() {
        return Reply::quiet("inactive");
    }
    let _guard = match mode {
        Mode::Apply => match lock::lock_with_timeout(&dir.guard(), GUARD_TIMEOUT) {
            Ok(guard) => Some(guard),
            Err(err) => return Reply::failed(format!("{err:#}; allowing the stop")),
        },
        Mode::DryRun => None,
    };
    let config = match state::read_config(dir) {
        Ok(Some(config)) => config,
        Ok(None) => return Reply::quiet("inactive"),
        Err(problem) => return bad_state(&problem.0),
    };
    let session = match session_of(input) {
        ControlFlow::Continue(session) => session,
        ControlFlow::Break(reply) => return reply,
    };
    let state = match state::read_state(dir) {
        Ok(state) => state.unwrap_or_else(LoopState::fresh),
        Err(problem) => return bad_state(&problem.0),
    };
    let lock = match HeartbeatLock::new(&dir.lock(), config.stale_duration()) {
        Ok(lock) => lock,
        Err(err) => return bad_state(&format!("{err:#}")),
    };
    let holder = lock.observe(env.host);
    let held = holder.as_ref().ok().and_then(Option::as_ref);
    if let Some(decision) = decide::foreign(&config, &state, session, held) {
        return from_decision(&decision, Vec::new());
    }
    let took_over = decide::takeover(&config, &state, session, held).map(str::to_string);
    let claim = Claim {
        owner: decide::owner_tag(session),
        pid: Some(env.pid),
        host: env.host.name(),
    };
    let lock_conflict = match heartbeat(&lock, holder, &claim, env, mode) {
        ControlFlow::Continue(conflict) => conflict,
        ControlFlow::Break(reply) => return reply,
    };
    let mut warnings = Vec::new();
    let seen = observe_transcript(input, &config, &state, session, env, mode, &mut warnings);
    let observation = StopObservation {
        tokens_pending: seen.pending(input, &state, env.status.as_ref()),
        compactions: seen.compactions,
        block_override: seen.block_override,
        block_cap: env.block_cap,
        session: session.to_string(),
        completion: completion(input, seen.scan.as_ref(), &config.sentinel),
        tool_uses: seen.scan.as_ref().map(|scan| scan.tool_uses),
        tokens_added: seen.added,
        cursor: seen.cursor,
        transcript_problem: seen.problem,
        lock_conflict,
        took_over,
        next: prompt::next(&config, dir).map_err(|err| format!("{err:#}")),
    };
    let decision = decide::decide(&config, &state, observation, env.host.now());
    if mode == Mode::Apply
        && let Err(error) = apply(&decision, dir, &lock, &claim, env.host, &mut warnings)
    {
        return Reply {
            warnings,
            ..Reply::failed(format!("{error}; allowing the stop"))
        };
    }
    from_decision(&decision, warnings)
}

/// The session the Stop belongs to; the hook stands aside (Break) when the input has none,
/// or one that is not a session id.
fn session_of(input: &HookInput) -> ControlFlow<Reply, &str> {
    let Some(session) = input.session() else {
        return ControlFlow::Break(Reply::aside(
            "no-session",
            "autoctl loop: the hook input has no session_id, so the loop cannot tell which \
             session this is; allowing the stop"
                .to_string(),
        ));
    };
    if let Err(why) = super::input::check_session(session) {
        return ControlFlow::Break(Reply::aside(
            "bad-session",
            format!("autoctl loop: refusing the hook input: {why}; allowing the stop"),
        ));
    }
    ControlFlow::Continue(session)
}

/// Heartbeat: take or refresh the lock before anything else, so a second autoctl (or an
/// operator holding the lock to pause the loop) is seen; a dry run only looks. Some: who
/// holds it instead; Break: the lock cannot be read, the hook stands aside.
fn heartbeat(
    lock: &HeartbeatLock,
    holder: anyhow::Result<Option<lock::Observed>>,
    claim: &Claim,
    env: &Env,
    mode: Mode,
) -> ControlFlow<Reply, Option<lock::Observed>> {
    match mode {
        Mode::Apply => match lock.try_acquire(claim, env.host) {
            Ok(Ok(_)) => ControlFlow::Continue(None),
            Ok(Err(held)) => ControlFlow::Continue(Some(held)),
            Err(err) => ControlFlow::Break(bad_state(&format!("{err:#}"))),
        },
        Mode::DryRun => match holder {
            Ok(Some(held)) if held.record.owner != claim.owner && !held.takeable() => {
                ControlFlow::Continue(Some(held))
            }
            Ok(_) => ControlFlow::Continue(None),
            Err(err) => ControlFlow::Break(bad_state(&format!("{err:#}"))),
        },
    }
}

/// Where the completion sentinel was seen: anywhere in the last message; in the turn's
/// earlier messages, a line of its own.
fn completion(input: &HookInput, scan: Option<&TurnScan>, sentinel: &str) -> Option<Found> {
    input
        .last_assistant_message
        .as_deref()
        .is_some_and(|text| sentinel::found_in(text, sentinel))
        .then_some(Found::LastMessage)
        .or_else(|| {
            scan.is_some_and(|scan| {
                let last = scan.last_message_texts.join("\n");
                sentinel::found_in(&last, sentinel)
                    || scan
                        .texts
                        .iter()
                        .any(|text| sentinel::found_as_line(text, sentinel))
            })
            .then_some(Found::Transcript)
        })
}

fn bad_state(problem: &str) -> Reply {
    Reply::aside(
        "bad-state",
        format!(
            "autoctl loop: standing aside: {problem} (inspect with autoctl loop status; \
             autoctl loop teardown removes the loop)"
        ),
    )
}

/// Write what the decision says. The state is written before anything is printed: a block
/// whose iteration was not recorded could repeat forever.
fn apply(
    decision: &StopDecision,
    dir: &LoopDir,
    lock: &HeartbeatLock,
    claim: &Claim,
    host: &dyn Host,
    warnings: &mut Vec<String>,
) -> anyhow::Result<()> {
    if decision.kind == Kind::LockConflict || decision.kind == Kind::ForeignSession {
        return Ok(());
    }
    if let Some(state) = &decision.state {
        state::write_state(dir, state).map_err(|err| anyhow::anyhow!("{err:#}"))?;
    }
    if decision.teardown {
        if let Err(err) = crate::fsx::remove_if_exists(&dir.config()) {
            warnings.push(format!("{err:#}"));
        }
        if let Err(err) = lock.release(&claim.owner, host) {
            warnings.push(format!("{err:#}"));
        }
    }
    Ok(())
}

/// What the transcript said.
#[derive(Default)]
struct Seen {
    scan: Option<TurnScan>,
    added: Usage,
    cursor: Option<Cursor>,
    problem: Option<String>,
    compactions: u32,
    block_override: Option<u64>,
}

impl Seen {
    /// Whether the transcript lacks the turn's final message: its last text is not the one
    /// Claude Code passed as `last_assistant_message` (or, without that, it does not end in
    /// assistant text).
    fn lagging(&self, input: &HookInput) -> bool {
        let Some(scan) = &self.scan else {
            return false;
        };
        match input.last_assistant_message.as_deref() {
            Some(message) => {
                let shown = scan
                    .last_message_texts
                    .last()
                    .map(|t| sentinel::normalize(t))
                    .unwrap_or_default();
                shown.is_empty() || !sentinel::normalize(message).ends_with(&shown)
            }
            None => !scan.ends_with_text,
        }
    }

    /// The estimate of the final message's tokens when the transcript lags (see
    /// [`decide::pending_estimate`]): the status line's reading counts only when it was
    /// recorded after the previous Stop, i.e. for a message of this turn.
    fn pending(&self, input: &HookInput, state: &LoopState, status: Option<&StatusRecord>) -> u64 {
        let Some(cursor) = &self.cursor else {
            return 0;
        };
        let since = state
            .updated_at
            .as_deref()
            .and_then(crate::time::parse_time);
        let status_tokens = status
            .filter(|record| record.session_id.as_deref() == input.session())
            .filter(|record| since.is_none_or(|since| record.changed_at > since))
            .and_then(|record| record.context_window.as_ref())
            .map(|window| {
                window
                    .total_input_tokens
                    .unwrap_or(0)
                    .saturating_add(window.total_output_tokens.unwrap_or(0))
            });
        decide::pending_estimate(
            self.lagging(input),
            &cursor.last_message_usage,
            self.compactions > 0,
            status_tokens,
        )
    }
}

fn observe_transcript(
    input: &HookInput,
    config: &LoopConfig,
    state: &LoopState,
    session: &str,
    env: &Env,
    mode: Mode,
    warnings: &mut Vec<String>,
) -> Seen {
    let Some(path) = input.transcript_path.as_deref() else {
        // `loop route` without --transcript observes nothing on purpose.
        if mode == Mode::DryRun {
            return Seen::default();
        }
        return Seen {
            problem: Some("the hook input has no transcript_path".to_string()),
            ..Seen::default()
        };
    };
    match read_transcript(input, path, config, state, session, env) {
        Ok(seen) => {
            if let Some(scan) = &seen.scan {
                if scan.unreadable_lines > 0 {
                    warnings.push(format!(
                        "transcript {}: {} line(s) near the end are not JSON (skipped)",
                        path.display(),
                        scan.unreadable_lines
                    ));
                }
                if scan.long_lines > 0 {
                    warnings.push(format!(
                        "transcript {}: {} line(s) longer than {} skipped",
                        path.display(),
                        scan.long_lines,
                        crate::fsx::human_size(env.limits.max_line as u64)
                    ));
                }
                if scan.turn_start.is_none() && scan.scanned_from > 0 {
                    warnings.push(format!(
                        "transcript {}: the last turn is longer than the {} scan limit; only its end was read",
                        path.display(),
                        crate::fsx::human_size(env.limits.max_scan)
                    ));
                }
            }
            seen
        }
        Err(err) => {
            let problem = format!("cannot read transcript {}: {err}", path.display());
            warnings.push(problem.clone());
            Seen {
                problem: Some(problem),
                ..Seen::default()
            }
        }
    }
}

fn read_transcript(
    input: &HookInput,
    path: &Path,
    config: &LoopConfig,
    state: &LoopState,
    session: &str,
    env: &Env,
) -> std::io::Result<Seen> {
    let mut opened = transcript::open(path)?;
    let mut scan = transcript::scan_last_turn(&mut opened.file, opened.len, &env.limits)?;
    // The transcript is written asynchronously and can lag behind the hook. Without
    // `last_assistant_message` the final message must come from the file: wait (bounded)
    // for it to grow until the turn ends in assistant text.
    if input.last_assistant_message.is_none() && !scan.ends_with_text {
        let deadline = Instant::now() + config.transcript_wait_duration();
        while Instant::now() < deadline {
            std::thread::sleep(LAG_POLL);
            let len = opened.file.metadata()?.len();
            if len != opened.len {
                opened.len = len;
                scan = transcript::scan_last_turn(&mut opened.file, len, &env.limits)?;
                if scan.ends_with_text {
                    break;
                }
            }
        }
    }

    // The budget: continue from the saved cursor when it belongs to this file, else start
    // counting at the turn that just ended (never re-read a whole transcript).
    let saved = state
        .transcript
        .as_ref()
        .filter(|_| state.session_id.as_deref() == Some(session))
        // The file's identity, not its path string: `/d/./t.jsonl`, a symlink or a moved
        // project name the same transcript, and a transcript replaced under the same path is
        // a new one.
        .filter(|c| c.dev == opened.dev && c.ino == opened.ino && c.offset <= opened.len)
        .cloned();
    let mut cursor = saved.unwrap_or_else(|| Cursor {
        path: path.to_string_lossy().into_owned(),
        dev: opened.dev,
        ino: opened.ino,
        offset: scan.turn_start.unwrap_or(scan.scanned_from),
        last_message_id: None,
        last_message_usage: Usage::default(),
    });
    let accounted = transcript::account(&mut opened.file, &mut cursor, opened.len, &env.limits)?;
    Ok(Seen {
        scan: Some(scan),
        added: accounted.added,
        cursor: Some(cursor),
        problem: None,
        compactions: accounted.compactions,
        block_override: accounted.block_override,
    })
}

/// `hook stop-failure`: record a failed turn. Never blocks anything (Claude Code ignores
/// this event's output); records nothing in a project without `D/.autoctl`.
pub fn stop_failure(stdin: &[u8], env: &Env, zone: Zone) -> Reply {
    let input = match super::input::parse(stdin) {
        Ok(input) => input,
        Err(problem) => return Reply::failed(format!("hook stop-failure: {problem}")),
    };
    let dir = LoopDir::new(&env.project(Some(&input)));
    if !state::dir_exists(&dir) {
        return Reply::quiet("inactive");
    }
    let _guard = match lock::lock_with_timeout(&dir.guard(), GUARD_TIMEOUT) {
        Ok(guard) => guard,
        Err(err) => return Reply::failed(format!("{err:#}")),
    };
    let mut warnings = Vec::new();
    let previous = match quota::read_quota_wait(&dir.project) {
        Ok(previous) => previous,
        Err(problem) => {
            warnings.push(format!("{problem}; starting a new wait"));
            None
        }
    };
    let recorded = quota::records(&input, previous.as_ref(), env.host.now(), zone);
    if let Err(err) = quota::write(&dir, &recorded) {
        return Reply {
            warnings,
            ..Reply::failed(format!("{err:#}"))
        };
    }
    Reply {
        kind: if recorded.quota.is_some() {
            "quota-wait".to_string()
        } else {
            "failure".to_string()
        },
        warnings,
        ..Reply::default()
    }
}

/// Rebind the loop in `dir` from session `old` to `new` (a `/clear`, compaction or resume
/// replaced the session the loop belongs to): the state names the new session and the old
/// session's heartbeat lock is released, so the new session's next Stop continues the loop.
/// Returns whether the loop was bound to `old`. A project without a loop is left alone.
pub fn rebind(dir: &LoopDir, old: &str, new: &str, host: &dyn Host) -> anyhow::Result<bool> {
    if !state::dir_exists(dir) || !dir.config().exists() {
        return Ok(false);
    }
    let _guard = lock::lock_with_timeout(&dir.guard(), GUARD_TIMEOUT)?;
    let config = match state::read_config(dir) {
        Ok(Some(config)) => config,
        Ok(None) => return Ok(false),
        Err(problem) => anyhow::bail!("{problem}"),
    };
    let mut loop_state = match state::read_state(dir) {
        Ok(state) => state.unwrap_or_else(LoopState::fresh),
        Err(problem) => anyhow::bail!("{problem}"),
    };
    if decide::bound_session(&config, &loop_state) != Some(old) || loop_state.ended.is_some() {
        return Ok(false);
    }
    loop_state.session_id = Some(new.to_string());
    state::write_state(dir, &loop_state)?;
    let heartbeat = HeartbeatLock::new(&dir.lock(), config.stale_duration())?;
    // Released only if the old session holds it; anyone else's lock stays.
    let _ = heartbeat.release(&decide::owner_tag(old), host);
    Ok(true)
}

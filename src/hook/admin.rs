//! Setting a loop up, looking at it and taking it down (`loop init|status|teardown`), as
//! cavekit offers for debugging a stuck loop.

use std::path::Path;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::decide::{bound_session, owner_tag};
use super::prompt;
use super::quota::{self, QuotaWait, StopFailure};
use super::state::{self, Ended, LoopConfig, LoopDir, LoopState, PromptSource};
use crate::error::Conflict;
use crate::lock::{self, HeartbeatLock, Host, Observed};
use crate::protocol::signal::now_timestamp;
use crate::routing::{self, command};

/// Check the settings of a new loop before anything is written.
pub fn validate(config: &LoopConfig) -> Result<()> {
    super::sentinel::validate(&config.sentinel)?;
    match &config.prompt {
        PromptSource::Text(text) => {
            if text.trim().is_empty() {
                bail!("--prompt must not be blank");
            }
        }
        PromptSource::File(path) => {
            prompt::read_prompt_file(path).map_err(anyhow::Error::msg)?;
        }
        PromptSource::Task {
            dir,
            table,
            template,
        } => {
            crate::fsx::require_dir(dir)?;
            routing::load(table)?;
            let sample =
                command::step_vars("plan", "", Some(&dir.display().to_string()), Some(0), false);
            command::render_prompt(template, &sample).context("--template")?;
        }
    }
    Ok(())
}

/// What `loop init` did.
#[derive(Debug)]
pub struct Initialized {
    /// The loop it replaced, if one was active.
    pub replaced: Option<String>,
    /// A problem with the first prompt that does not stop the loop from starting (for
    /// example a task whose signal is invalid right now).
    pub first_prompt_problem: Option<String>,
}

/// Activate a loop in `dir`: write the activation file and reset the state. An active loop
/// whose session still holds a live lock is a conflict unless `force`.
pub fn init(
    dir: &LoopDir,
    config: &LoopConfig,
    force: bool,
    host: &dyn Host,
) -> Result<Initialized> {
    validate(config)?;
    state::ensure_dir(dir)?;
    let _guard = lock::lock_with_timeout(&dir.guard(), std::time::Duration::from_secs(10))?;
    let lock = HeartbeatLock::new(&dir.lock(), config.stale_duration())?;
    let mut replaced = None;
    if let Ok(Some(previous)) = state::read_config(dir) {
        let previous_state = state::read_state(dir).ok().flatten().unwrap_or_default();
        let bound = bound_session(&previous, &previous_state).map(str::to_string);
        let holder = lock.observe(host).ok().flatten();
        let live = match (&bound, &holder) {
            (Some(session), Some(held)) => {
                held.record.owner == owner_tag(session) && !held.takeable()
            }
            _ => false,
        };
        if live && !force {
            let held = holder.as_ref().map(Observed::describe).unwrap_or_default();
            return Err(anyhow::Error::new(Conflict(format!(
                "a loop is already running in {} for session {} (lock: {held}); \
                 use --force to replace it, or autoctl loop teardown",
                dir.dir.display(),
                bound.as_deref().unwrap_or("?")
            ))));
        }
        replaced = Some(match &bound {
            Some(session) => format!(
                "session {session}, {} iteration(s)",
                previous_state.iteration
            ),
            None => "a loop no session had reached yet".to_string(),
        });
    }
    lock.break_lock()?;
    let mut fresh = LoopState::fresh();
    fresh.session_id = config.session.clone();
    state::write_state(dir, &fresh)?;
    state::write_config(dir, config)?;
    let first_prompt_problem = prompt::next(config, dir)
        .err()
        .map(|err| format!("{err:#}"));
    Ok(Initialized {
        replaced,
        first_prompt_problem,
    })
}

/// What `loop teardown` removed.
#[derive(Debug, Default)]
pub struct TornDown {
    pub was_active: bool,
    pub lock_removed: bool,
}

/// Remove the activation file and the lock whoever holds it; record the end in the state.
/// Safe after a crash and when nothing is active.
pub fn teardown(dir: &LoopDir, now: DateTime<Utc>) -> Result<TornDown> {
    if !state::dir_exists(dir) {
        return Ok(TornDown::default());
    }
    let _guard = lock::lock_with_timeout(&dir.guard(), std::time::Duration::from_secs(10))?;
    let was_active = crate::fsx::remove_if_exists(&dir.config())?;
    let lock_removed = match HeartbeatLock::new(&dir.lock(), lock::DEFAULT_STALE) {
        Ok(lock) => lock.break_lock()?,
        // A lock path that is a directory or symlink is not ours to remove.
        Err(err) => bail!("{err:#}"),
    };
    if was_active
        && let Ok(Some(mut loop_state)) = state::read_state(dir)
        && loop_state.ended.is_none()
    {
        loop_state.ended = Some(Ended {
            outcome: "teardown".to_string(),
            at: now_timestamp(now),
            message: "autoctl loop teardown".to_string(),
        });
        state::write_state(dir, &loop_state)?;
    }
    Ok(TornDown {
        was_active,
        lock_removed,
    })
}

/// Everything `loop status` shows.
#[derive(Debug, Serialize)]
pub struct Status {
    pub active: bool,
    pub dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<LoopConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<LoopState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<Observed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_wait: Option<QuotaWait>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<StopFailure>,
    /// Claude Code overrode the loop's last block since the last Stop (its notice is in the
    /// transcript after the loop's cursor): the loop is not running, whatever its files say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overridden: Option<String>,
    /// Files that exist but cannot be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

pub fn status(dir: &LoopDir, host: &dyn Host) -> Status {
    let mut problems = Vec::new();
    let config = keep(state::read_config(dir), &mut problems);
    let loop_state = keep(state::read_state(dir), &mut problems);
    let quota_wait = keep(quota::read_quota_wait(&dir.project), &mut problems);
    let last_failure = keep(quota::read_stop_failure(&dir.project), &mut problems);
    let stale = config
        .as_ref()
        .map_or(lock::DEFAULT_STALE, LoopConfig::stale_duration);
    let lock = match HeartbeatLock::new(&dir.lock(), stale).and_then(|l| l.observe(host)) {
        Ok(lock) => lock,
        Err(err) => {
            problems.push(format!("{err:#}"));
            None
        }
    };
    let overridden = match (&config, &loop_state) {
        (Some(_), Some(loop_state)) if loop_state.ended.is_none() => overridden_since(loop_state),
        _ => None,
    };
    Status {
        active: config.is_some() && overridden.is_none(),
        dir: dir.dir.display().to_string(),
        overridden,
        config,
        state: loop_state,
        lock,
        quota_wait,
        last_failure,
        problems,
    }
}

/// Whether Claude Code overrode the loop's Stop hook after the loop last counted: its
/// notice ("A hook blocked the turn from ending 9 consecutive times—overriding…") in the
/// bound session's transcript, past the loop's cursor. The loop's own count ends it before
/// that in the ordinary case; this catches a cap it could not see (another hook that also
/// blocks, a changed CLAUDE_CODE_STOP_HOOK_BLOCK_CAP).
fn overridden_since(loop_state: &LoopState) -> Option<String> {
    let saved = loop_state.transcript.as_ref()?;
    let mut opened = super::transcript::open(std::path::Path::new(&saved.path)).ok()?;
    if opened.dev != saved.dev || opened.ino != saved.ino || opened.len < saved.offset {
        return None;
    }
    let mut cursor = saved.clone();
    let accounted = super::transcript::account(
        &mut opened.file,
        &mut cursor,
        opened.len,
        &super::transcript::Limits::default(),
    )
    .ok()?;
    accounted.block_override.map(|blocks| {
        format!(
            "Claude Code overrode the loop's Stop hook after {blocks} consecutive blocks \
             (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP); the loop is not running"
        )
    })
}

fn keep<T>(result: Result<Option<T>, state::Problem>, problems: &mut Vec<String>) -> Option<T> {
    result.unwrap_or_else(|problem| {
        problems.push(problem.0);
        None
    })
}

impl Status {
    /// The status as `key: value` lines for people: whether it runs, the loop's progress,
    /// its configuration, then the lock, waits, failures, its end and problems.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("active: {}", if self.active { "yes" } else { "no" }),
            format!("dir: {}", self.dir),
        ];
        let fresh = LoopState::fresh();
        let loop_state = self.state.as_ref().unwrap_or(&fresh);
        let config = self.config.as_ref();
        if config.is_some() || self.state.is_some() {
            progress_lines(config, loop_state, &mut lines);
        }
        if let Some(config) = config {
            config_lines(config, loop_state, &mut lines);
        }
        self.lock_and_end_lines(loop_state, &mut lines);
        lines
    }

    /// The lock, the quota wait, the last failure, how the loop ended, and the problems
    /// reading it.
    fn lock_and_end_lines(&self, loop_state: &LoopState, lines: &mut Vec<String>) {
        lines.push(format!(
            "lock: {}",
            match &self.lock {
                None => "free".to_string(),
                Some(held) if held.dead => format!("dead: {}", held.describe()),
                Some(held) if held.stale => format!("stale: {}", held.describe()),
                Some(held) => format!("held: {}", held.describe()),
            }
        ));
        if let Some(wait) = &self.quota_wait {
            lines.push(format!(
                "quota wait: since {}{}",
                wait.since,
                wait.reset_at
                    .as_ref()
                    .map(|at| format!(", resets {at}"))
                    .or_else(|| wait.reset_text.as_ref().map(|t| format!(", {t}")))
                    .unwrap_or_default()
            ));
        }
        if let Some(failure) = &self.last_failure {
            lines.push(format!("last failure: {} at {}", failure.kind, failure.at));
        }
        if let Some(why) = &self.overridden {
            lines.push(format!("ended: overridden: {why}"));
        }
        if let Some(ended) = &loop_state.ended {
            lines.push(format!(
                "ended: {} at {}: {}",
                ended.outcome, ended.at, ended.message
            ));
        }
        for problem in &self.problems {
            lines.push(format!("problem: {problem}"));
        }
    }
}

/// The loop's progress: its session, iteration, tokens and Claude Code's chain of blocks.
fn progress_lines(config: Option<&LoopConfig>, loop_state: &LoopState, lines: &mut Vec<String>) {
    let session = match config {
        Some(config) => bound_session(config, loop_state),
        None => loop_state.session_id.as_deref(),
    };
    lines.push(match session {
        Some(session) => format!("session: {session}"),
        None => "session: unbound (the first session that stops takes the loop)".to_string(),
    });
    lines.push(match config {
        Some(config) => format!(
            "iteration: {} of {}",
            loop_state.iteration, config.max_iterations
        ),
        None => format!("iteration: {}", loop_state.iteration),
    });
    let budget = config
        .and_then(|c| c.budget)
        .map(|b| format!(" of {b}"))
        .unwrap_or_default();
    let t = &loop_state.tokens;
    lines.push(format!(
        "tokens: {}{budget} (input {}, output {}, cache writes {}, cache reads {}){}",
        t.total(),
        t.input,
        t.output,
        t.cache_creation,
        t.cache_read,
        if loop_state.tokens_pending > 0 {
            format!(
                ", and at least {} for a final message the transcript did not show yet",
                loop_state.tokens_pending
            )
        } else {
            String::new()
        }
    ));
    if loop_state.stop_blocks > 0 {
        lines.push(format!(
            "consecutive blocks: {} (Claude Code overrides the one after CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, default 8)",
            loop_state.stop_blocks
        ));
    }
}

/// What the loop was set up with: the idle limit, the prompt, the sentinel, compactions.
fn config_lines(config: &LoopConfig, loop_state: &LoopState, lines: &mut Vec<String>) {
    if config.max_idle > 0 {
        lines.push(format!(
            "idle turns: {} of {}",
            loop_state.idle_streak, config.max_idle
        ));
    }
    lines.push(match &config.prompt {
        PromptSource::Text(text) => {
            format!("prompt: text, {} characters", text.chars().count())
        }
        PromptSource::File(path) => format!("prompt: file {}", path.display()),
        PromptSource::Task { dir, table, .. } => {
            format!("prompt: task {} (table {table})", dir.display())
        }
    });
    lines.push(format!("sentinel: {}", config.sentinel));
    if loop_state.compactions.count > 0 {
        lines.push(format!(
            "compactions: {} in iteration {} (limit {})",
            loop_state.compactions.count, loop_state.compactions.iteration, config.max_compactions
        ));
    }
}

/// Resolve `--prompt-file` and `--task` to absolute paths: the hook runs with another working
/// directory.
pub fn absolute(path: &Path) -> Result<std::path::PathBuf> {
    std::fs::canonicalize(path).with_context(|| format!("{}", path.display()))
}

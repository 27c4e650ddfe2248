//! The run registry: one row per supervised loop (seed 000's `task_auto` table plus what a
//! tick needs), behind the [`Registry`] trait so the tick core can be driven by an in-memory
//! fake in unit tests and by SQLite ([`sqlite::SqliteRegistry`]) everywhere else.
//!
//! Concurrency model: a tick *claims* a run (a lease: `claimed_by`, `claimed_until`) in a short
//! write transaction, observes and acts with no database lock held, then *saves* the new row
//! only if it still holds the claim. So two overlapping ticks never make two decisions for one
//! run, a slow tmux call never blocks `run start`/`run stop`, and a tick that dies mid-way only
//! freezes its runs until the lease ([`LEASE`]) expires. `run stop` does not wait for a claim:
//! it ends the run and drops the claim, and the claimed tick's save then finds the claim gone
//! and is discarded.

pub mod report;
pub mod sqlite;

#[cfg(test)]
pub mod memory;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::supervise::stall::StallState;

/// A point in time as the registry stores it.
pub type Time = DateTime<Utc>;

/// How long a claim protects a run from other ticks. A tick's work on one run takes
/// milliseconds; the lease only matters when a tick is killed mid-way.
pub const LEASE: Duration = Duration::from_secs(120);

/// The database file inside the state directory.
pub const DB_FILE: &str = "autoctl.db";

/// Seed defaults.
pub const DEFAULT_MAX_ITERATIONS: u64 = 20;
pub const DEFAULT_TIMEOUT: &str = "30m";
pub const DEFAULT_STALL_THRESHOLD: u32 = 3;
pub const DEFAULT_RECOVERIES_PER_ITERATION: u32 = 3;
pub const DEFAULT_RECOVERIES_TOTAL: u32 = 10;
pub const DEFAULT_STEP_TIMEOUT: &str = "10m";

/// Where a run is in its life. Only `running` rows are ticked; the others keep the outcome
/// until a new `run start` for the same session or task dir replaces them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The loop is supervised.
    Running,
    /// The loop completed by itself (a signal with `next` = `(stop)`).
    Finished,
    /// A stop was requested (user, timeout, max iterations, stall limit); `.auto-stop` written.
    Stopped,
    /// The agent exited before the loop finished (a shell prompt is in front).
    Exited,
    /// The run cannot be supervised any more: its pane or task directory is gone.
    Lost,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Running,
        Status::Finished,
        Status::Stopped,
        Status::Exited,
        Status::Lost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Finished => "finished",
            Status::Stopped => "stopped",
            Status::Exited => "exited",
            Status::Lost => "lost",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn is_active(self) -> bool {
        self == Status::Running
    }
}

/// Who drives the loop.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Seed 000: the agent loops by itself; autoctl watches, answers safe prompts and stops it
    #[default]
    Observe,
    /// Seed 001: after each signal autoctl types the next command into the ready pane
    Dispatch,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Observe => "observe",
            Mode::Dispatch => "dispatch",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        [Mode::Observe, Mode::Dispatch]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

/// The last valid signal a tick saw, so the next tick knows whether a signal is new.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenSignal {
    /// A hash of the signal's bytes: a rewritten signal with new content is a new signal even
    /// when its timestamp did not move.
    pub fingerprint: String,
    pub step: String,
    pub result: String,
    pub next: String,
    pub checkpoint: String,
    pub iteration: Option<u64>,
}

/// A step waiting to be typed, or typed (dispatch mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub next: String,
    pub checkpoint: String,
}

/// Stall-recovery limits of one run (seed 000's and seed 002's numbers by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallLimits {
    /// Unchanged captures in a row before the screen is examined as a suspected stall.
    pub threshold: u32,
    pub recoveries_per_iteration: u32,
    pub recoveries_total: u32,
    /// The same agent message this many times in a row is a reasoning loop (0: never).
    pub repeat_limit: u32,
    /// No `.status.json` update for this long is a step timeout.
    pub step_timeout: Duration,
}

impl Default for StallLimits {
    fn default() -> Self {
        StallLimits {
            threshold: DEFAULT_STALL_THRESHOLD,
            recoveries_per_iteration: DEFAULT_RECOVERIES_PER_ITERATION,
            recoveries_total: DEFAULT_RECOVERIES_TOTAL,
            repeat_limit: crate::taskai::stall::REPEAT_LIMIT,
            step_timeout: crate::taskai::stall::STEP_TIMEOUT,
        }
    }
}

/// What `run start` registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    pub session: String,
    /// Canonical absolute path.
    pub task_dir: String,
    pub target: String,
    pub mode: Mode,
    pub agent: String,
    /// The rendered command typed at start and by `run recover` (observe mode), if any.
    pub launch_command: Option<String>,
    /// Dispatch mode's command template (`{next}`, `{checkpoint}`, `{task}`, `{iteration}`).
    pub command_template: String,
    /// Routing table (built-in name or file) for dispatch mode's entry step.
    pub table: String,
    pub max_iterations: u64,
    pub timeout: Duration,
    pub limits: StallLimits,
}

/// One registered loop: the row of `task_auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub session: String,
    pub task_dir: String,
    pub status: Status,
    pub mode: Mode,
    pub target: String,
    pub agent: String,
    pub launch_command: Option<String>,
    pub command_template: String,
    pub table: String,
    pub max_iterations: u64,
    pub timeout: Duration,
    pub limits: StallLimits,

    /// The loop's own iteration count (the signal's `iteration`), else signals seen.
    pub iteration_count: u64,
    pub signals_seen: u64,
    pub last_signal: Option<SeenSignal>,
    pub last_signal_at: Option<Time>,

    /// The stall core's state, one column per field (seed 000's last_capture_hash,
    /// stall_count, recovery counts and quota_wait_since among them).
    pub stall: StallState,

    /// Dispatch mode: the step to type when the pane is ready, and the last one typed.
    pub pending: Option<Step>,
    pub dispatched: Option<Step>,
    pub dispatched_at: Option<Time>,
    pub dispatch_count: u64,
    /// Consecutive ticks that saw a shell prompt in front (exit detection needs two, so a
    /// command that is still starting is not mistaken for a dead agent).
    pub shell_seen: u32,

    pub started_at: Time,
    pub ticks: u64,
    pub heartbeats: u64,
    pub last_tick_at: Option<Time>,
    pub last_heartbeat_at: Option<Time>,
    /// The last tick's decision, one line (for `run status`).
    pub last_decision: String,

    pub stop_reason: Option<String>,
    pub stop_message: Option<String>,
    pub ended_at: Option<Time>,

    pub claimed_by: Option<String>,
    pub claimed_until: Option<Time>,
}

impl Run {
    /// The row `run start` inserts.
    pub fn new(new: &NewRun, now: Time) -> Run {
        Run {
            session: new.session.clone(),
            task_dir: new.task_dir.clone(),
            status: Status::Running,
            mode: new.mode,
            target: new.target.clone(),
            agent: new.agent.clone(),
            launch_command: new.launch_command.clone(),
            command_template: new.command_template.clone(),
            table: new.table.clone(),
            max_iterations: new.max_iterations,
            timeout: new.timeout,
            limits: new.limits,
            iteration_count: 0,
            signals_seen: 0,
            last_signal: None,
            last_signal_at: None,
            stall: StallState::default(),
            pending: None,
            dispatched: None,
            dispatched_at: None,
            dispatch_count: 0,
            shell_seen: 0,
            started_at: now,
            ticks: 0,
            heartbeats: 0,
            last_tick_at: None,
            last_heartbeat_at: None,
            last_decision: String::new(),
            stop_reason: None,
            stop_message: None,
            ended_at: None,
            claimed_by: None,
            claimed_until: None,
        }
    }

    pub fn task_path(&self) -> &Path {
        Path::new(&self.task_dir)
    }

    /// When the open quota wait began, if the run is waiting for a quota reset now.
    pub fn quota_wait_since(&self) -> Option<Time> {
        self.stall.quota_wait_since.as_deref().and_then(parse_time)
    }

    /// Time spent waiting for a quota to reset, including a wait still open at `now`.
    pub fn quota_waited(&self, now: Time) -> Duration {
        let closed = Duration::from_secs(self.stall.quota_waited_seconds);
        let open = self
            .quota_wait_since()
            .map_or(Duration::ZERO, |since| between(since, now));
        closed.saturating_add(open)
    }

    /// Supervised time that counts toward the timeout: wall time since start minus quota
    /// waits (seed 000: the timeout clock pauses while the quota is exhausted). Frozen at the
    /// end of the run.
    pub fn elapsed(&self, now: Time) -> Duration {
        let end = self.ended_at.unwrap_or(now);
        between(self.started_at, end).saturating_sub(self.quota_waited(end))
    }

    /// The step the loop is on, from the latest signal (its `next`), for status displays.
    pub fn current_step(&self) -> Option<&str> {
        if let Some(dispatched) = &self.dispatched
            && self.mode == Mode::Dispatch
        {
            return Some(&dispatched.next);
        }
        self.last_signal.as_ref().map(|s| s.next.as_str())
    }

    /// End the run with `status` and a reason.
    pub fn end(&mut self, status: Status, reason: &str, message: Option<String>, now: Time) {
        self.status = status;
        self.stop_reason = Some(reason.to_string());
        self.stop_message = message;
        self.ended_at = Some(now);
        self.pending = None;
    }
}

/// The environment variable of the clock test hook.
pub const NOW_VAR: &str = "AUTOCTL_NOW";

/// The current time at the registry's precision (milliseconds).
///
/// Test hook: when `AUTOCTL_NOW` holds an RFC 3339 time, that is the time. Tests use it to
/// replay half an hour of a loop in a second; nothing else should set it.
pub fn now() -> Result<Time> {
    let time = match std::env::var_os(NOW_VAR) {
        Some(text) if !text.is_empty() => text
            .to_str()
            .and_then(parse_time)
            .with_context(|| format!("{NOW_VAR}={text:?} is not an RFC 3339 time"))?,
        _ => Utc::now(),
    };
    Ok(truncate_millis(time))
}

fn truncate_millis(time: Time) -> Time {
    DateTime::from_timestamp_millis(time.timestamp_millis()).unwrap_or(time)
}

/// `later - earlier`, zero when the clock went backwards.
pub fn between(earlier: Time, later: Time) -> Duration {
    (later - earlier).to_std().unwrap_or(Duration::ZERO)
}

/// Add a duration to a time, saturating far in the future.
pub fn plus(time: Time, duration: Duration) -> Time {
    chrono::Duration::from_std(duration)
        .ok()
        .and_then(|d| time.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The text form of every time the registry stores: RFC 3339, UTC, milliseconds, `Z`. One
/// fixed width so that text comparison in SQL is time comparison.
pub fn format_time(time: Time) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn parse_time(text: &str) -> Option<Time> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Why a run was not claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotClaimed {
    /// The run has ended; there is nothing to tick.
    Ended(Status),
    /// Another tick holds it.
    Busy { owner: String, until: Time },
}

impl std::fmt::Display for NotClaimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotClaimed::Ended(status) => write!(f, "the run has ended ({})", status.as_str()),
            NotClaimed::Busy { owner, until } => write!(
                f,
                "another tick ({owner}) holds the run until {}",
                format_time(*until)
            ),
        }
    }
}

/// The claim rule, shared by every [`Registry`] implementation: a running run whose claim is
/// free or expired can be claimed.
pub fn claimable(run: &Run, now: Time) -> Result<(), NotClaimed> {
    if !run.status.is_active() {
        return Err(NotClaimed::Ended(run.status));
    }
    match (&run.claimed_by, run.claimed_until) {
        (Some(owner), Some(until)) if until > now => Err(NotClaimed::Busy {
            owner: owner.clone(),
            until,
        }),
        _ => Ok(()),
    }
}

/// The result of trying to claim one run.
#[derive(Debug, Clone)]
pub enum Claim {
    /// Ours until the lease ends; the row as it was when claimed.
    Claimed(Box<Run>),
    /// Not ours, with the row so the tick can still report on it.
    Skipped(Box<Run>, NotClaimed),
}

/// Which runs a claim covers.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'a> {
    Session(&'a str),
    All,
}

/// A `run start` that collides with a live run (exit 3). Its message names the owner.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartConflict {
    #[error(
        "session {session:?} already runs a loop on {task_dir}; stop it first with `autoctl run stop`"
    )]
    Session { session: String, task_dir: String },
    #[error(
        "task dir {task_dir} already has a loop running in session {owner:?}; stop it first with `autoctl run stop`"
    )]
    TaskDir { task_dir: String, owner: String },
}

impl StartConflict {
    /// The conflict of starting `new` while `owner` runs, as an exit-3 error.
    pub fn error(new: &NewRun, owner: &Run) -> anyhow::Error {
        let conflict = if owner.session == new.session {
            StartConflict::Session {
                session: owner.session.clone(),
                task_dir: owner.task_dir.clone(),
            }
        } else {
            StartConflict::TaskDir {
                task_dir: owner.task_dir.clone(),
                owner: owner.session.clone(),
            }
        };
        anyhow::Error::new(crate::error::Conflict(conflict.to_string()))
    }
}

/// Storage of runs. Every method is one atomic step: a concurrent caller sees the registry
/// before or after it, never in between.
pub trait Registry {
    /// Insert a running row. A live run for the same session or task dir is a
    /// [`StartConflict`] (in the error chain); an ended one is replaced.
    fn start(&mut self, new: &NewRun, now: Time) -> Result<Run>;
    /// The row of a session, if any.
    fn get(&mut self, session: &str) -> Result<Option<Run>>;
    /// The row that owns a task dir (canonical path), if any.
    fn find_task(&mut self, task_dir: &str) -> Result<Option<Run>>;
    /// Every row, ordered by session name.
    fn list(&mut self) -> Result<Vec<Run>>;
    /// Claim the selected running runs for `owner` until `now + LEASE`. Ended runs are not
    /// returned for [`Selection::All`]; for a session they come back as skipped.
    fn claim(&mut self, selection: Selection<'_>, owner: &str, now: Time) -> Result<Vec<Claim>>;
    /// Store a claimed run's new state and release the claim. Returns false (and stores
    /// nothing) when `owner` no longer holds the claim: the run was stopped or the lease
    /// expired and another tick took it.
    fn save(&mut self, run: &Run, owner: &str) -> Result<bool>;
    /// Give a claim back without changing the run (dry runs, failed effects).
    fn release(&mut self, session: &str, owner: &str) -> Result<()>;
    /// End a run now whoever holds it (`run stop`). Returns the row as stored, or None when
    /// there is no row; an already ended row is returned unchanged.
    fn end(
        &mut self,
        session: &str,
        status: Status,
        reason: &str,
        message: Option<&str>,
        now: Time,
    ) -> Result<Option<Run>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap()
    }

    fn sample() -> NewRun {
        NewRun {
            session: "s".into(),
            task_dir: "/t".into(),
            target: "s".into(),
            mode: Mode::Observe,
            agent: "claude".into(),
            launch_command: None,
            command_template: String::new(),
            table: "ai-cli-task".into(),
            max_iterations: 20,
            timeout: Duration::from_secs(1800),
            limits: StallLimits::default(),
        }
    }

    #[test]
    fn quota_waits_pause_the_clock() {
        let mut run = Run::new(&sample(), at(0));
        assert_eq!(run.elapsed(at(100)), Duration::from_secs(100));
        run.stall.quota_wait_since = Some(format_time(at(100)));
        assert_eq!(run.elapsed(at(160)), Duration::from_secs(100));
        run.stall.quota_wait_since = None;
        run.stall.quota_waited_seconds = 60;
        assert_eq!(run.elapsed(at(200)), Duration::from_secs(140));
        run.stall.quota_wait_since = Some(format_time(at(200)));
        run.end(Status::Stopped, "timeout", None, at(230));
        assert_eq!(run.elapsed(at(9_999)), Duration::from_secs(140));
    }

    #[test]
    fn a_clock_that_goes_backwards_counts_zero() {
        let run = Run::new(&sample(), at(100));
        assert_eq!(run.elapsed(at(0)), Duration::ZERO);
    }

    #[test]
    fn claim_rule() {
        let mut run = Run::new(&sample(), at(0));
        assert!(claimable(&run, at(0)).is_ok());
        run.claimed_by = Some("a".into());
        run.claimed_until = Some(at(10));
        assert!(matches!(
            claimable(&run, at(5)),
            Err(NotClaimed::Busy { .. })
        ));
        assert!(claimable(&run, at(11)).is_ok(), "an expired lease is free");
        run.end(Status::Finished, "done", None, at(11));
        assert_eq!(
            claimable(&run, at(12)),
            Err(NotClaimed::Ended(Status::Finished))
        );
    }

    #[test]
    fn stored_times_sort_as_text() {
        let a = format_time(at(0));
        let b = format_time(at(0) + chrono::Duration::milliseconds(1));
        let c = format_time(at(86_400 * 400));
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(parse_time(&a), Some(at(0)));
    }
}

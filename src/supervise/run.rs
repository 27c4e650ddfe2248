//! The run model: one supervised loop ([`Run`]) and what it is made of — where it is in its
//! life ([`Status`]), who drives it ([`Mode`]), the last signal seen ([`SeenSignal`]), the
//! step dispatch mode types ([`DispatchStep`]), its stall limits ([`stall::Limits`]) and the seeds' defaults.
//!
//! These are the supervisor's own types; storage ([`crate::registry`]) keeps them and
//! depends on this module, never the reverse.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::protocol::stop::StopReason;

use crate::pane::Agent;
use crate::supervise::channels::{Source, SourceCounts, Startup};
use crate::supervise::governor;
use crate::supervise::stall::{self, StallState};
use crate::supervise::wait::{WaitLimits, WaitState};
use crate::taskai::compaction::CompactionCount;
use crate::time::{Time, between};

/// Seed defaults.
pub const DEFAULT_MAX_ITERATIONS: u64 = 20;
pub const DEFAULT_TIMEOUT: &str = "30m";
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
    /// The agent loops by itself (ai-cli-task); autoctl watches, answers safe prompts, stops it
    #[default]
    Observe,
    /// After each signal autoctl types the next command into the ready pane (ai-cli-task v1)
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

/// Where dispatch mode types each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DispatchInto {
    /// Into the agent idle at its own prompt (Claude Code stays open between steps): the
    /// slash command itself, typed when the pane reader sees the agent's empty input box
    Agent,
    /// At a shell prompt: a command that runs the step and returns to the shell
    Shell,
}

impl DispatchInto {
    pub fn as_str(self) -> &'static str {
        match self {
            DispatchInto::Agent => "agent",
            DispatchInto::Shell => "shell",
        }
    }

    pub fn parse(text: &str) -> Option<DispatchInto> {
        [DispatchInto::Agent, DispatchInto::Shell]
            .into_iter()
            .find(|i| i.as_str() == text)
    }

    /// The default for an agent: a Claude Code pane takes the slash command at its own
    /// prompt; any other program is driven from the shell.
    pub fn default_for(agent: Agent) -> DispatchInto {
        match agent {
            Agent::Claude => DispatchInto::Agent,
            _ => DispatchInto::Shell,
        }
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
pub struct DispatchStep {
    pub next: String,
    pub checkpoint: String,
}

/// What `run start` registers: the run's identity and limits. A tick never changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    pub session: String,
    /// Canonical absolute path.
    pub task_dir: String,
    pub target: String,
    pub mode: Mode,
    pub agent: Agent,
    /// The rendered command typed at start and by `run recover` (observe mode), if any.
    pub launch_command: Option<String>,
    /// Dispatch mode's command template (`{next}`, `{checkpoint}`, `{task}`, `{iteration}`,
    /// `{args}`).
    pub command_template: String,
    /// Dispatch mode: typed into the agent or at a shell prompt.
    pub into: DispatchInto,
    /// Routing table (built-in name or file) for dispatch mode's entry step.
    pub table: String,
    pub max_iterations: u64,
    pub timeout: Duration,
    pub limits: stall::Limits,
    /// How the run's waits end: resume text, budgets, maximums.
    pub wait_limits: WaitLimits,
    /// A command run for each of the run's events (besides the driver's `--notify`).
    pub notify: Option<String>,
    /// Context compactions allowed in one iteration (seed 002; 0: no limit).
    pub max_compactions: u32,
    /// The subscription account its agent spends (`--account`, `AUTOCTL_ACCOUNT`): runs of
    /// one account share its usage windows and are paced together ([`governor`]).
    pub account: String,
    /// `--priority`: who the governor releases first after a reset, and who may use the
    /// weekly reserve.
    pub priority: i32,
    /// The host whose tmux server runs its pane (`AUTOCTL_HOST`, default the hostname): only
    /// that host observes and types into it. Empty in a registry written before hosts: the
    /// first host that ticks it adopts it.
    pub host: String,
}

/// The agent's state as a tick went by it, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentReading {
    /// `working`, `waiting-for-permission`, `waiting-for-input`, `idle`, `failed:<error>`,
    /// `compacting`, `ended` (typed), or the screen's class.
    pub state: StoredState,
    pub source: Source,
    /// The tick that read it.
    #[serde(with = "crate::time::stamp")]
    pub at: Time,
}

/// The agent's state as a run stores it: the one word the tick's
/// [`crate::supervise::channels::ReadState`] prints, read back by the word alone (a hook
/// state and a screen class that share a word, `working` and `idle`, mean the same thing).
/// A word this release does not know, written by another, is kept as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StoredState {
    /// A hook state (`working`, `waiting-for-input`, `failed` without an error, ...).
    Hook(crate::hook::session::AgentState),
    /// A failed turn and the error its hooks named (`failed:rate_limit`).
    Failed(String),
    /// A screen class no hook state shares a word with (`permission`, `quota`, `shell`, ...).
    Screen(crate::pane::Class),
    /// A word of another release.
    Other(String),
}

impl StoredState {
    /// The state a tick's reading stores.
    pub fn of(reading: &crate::supervise::channels::ReadState) -> StoredState {
        StoredState::from(reading.to_string())
    }
}

impl From<String> for StoredState {
    fn from(word: String) -> StoredState {
        if let Some(error) = word.strip_prefix("failed:") {
            return StoredState::Failed(error.to_string());
        }
        let value = || serde_json::Value::String(word.clone());
        if let Ok(state) = serde_json::from_value(value()) {
            return StoredState::Hook(state);
        }
        match serde_json::from_value(value()) {
            Ok(class) => StoredState::Screen(class),
            Err(_) => StoredState::Other(word),
        }
    }
}

impl From<&str> for StoredState {
    fn from(word: &str) -> StoredState {
        StoredState::from(word.to_string())
    }
}

impl From<StoredState> for String {
    fn from(state: StoredState) -> String {
        state.to_string()
    }
}

impl std::fmt::Display for StoredState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoredState::Hook(state) => f.write_str(state.as_str()),
            StoredState::Failed(error) => write!(f, "failed:{error}"),
            StoredState::Screen(class) => f.write_str(class.as_str()),
            StoredState::Other(word) => f.write_str(word),
        }
    }
}

/// What the run knows about its agent between ticks (one JSON column of its row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentState {
    /// The agent's state at the last tick that saw its pane, and its source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reading: Option<AgentReading>,
    /// The iteration's context compactions: one counter for the proactive `/compact` and
    /// every compaction the hooks report ([`crate::taskai::compaction`]).
    pub compactions: CompactionCount,
    /// The hook record's compaction total already counted into `compactions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compactions_seen: Option<u64>,
    /// Consecutive ticks that saw a shell prompt in front (exit detection needs two, so a
    /// command that is still starting is not mistaken for a dead agent).
    pub shell_seen: u32,
    /// How many readings of the agent came from each source (one per tick that saw its
    /// pane): the typed channels' share of the run's decisions.
    #[serde(skip_serializing_if = "SourceCounts::is_empty")]
    pub sources: SourceCounts,
    /// Where the launched agent is in its start-up: readings before it showed itself are
    /// counted apart from the sources.
    #[serde(skip_serializing_if = "Startup::is_over")]
    pub startup: Startup,
}

/// Dispatch mode's state between ticks (one JSON column of its row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DispatchState {
    /// The step to type when the pane is ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<DispatchStep>,
    /// The last step typed, and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatched: Option<DispatchStep>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub dispatched_at: Option<Time>,
    /// Steps typed.
    pub count: u64,
    /// The intent record of a dispatch: the command text, stored with the count and the
    /// consumed signal before its keys are typed, and cleared once they are (at a shell) or
    /// once the screen shows the agent took them (into the agent). Still set on the next
    /// tick, the screen says whether the keys arrived ([`crate::supervise::tick`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing: Option<String>,
    /// `--into shell`: the step gave up on an API error that clears by itself (its stream's
    /// `result`): it is typed again from this time on.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub retry_at: Option<Time>,
    /// Times the current step was typed again after such an error (`--max-resumes` per step;
    /// a new signal starts a step).
    #[serde(skip_serializing_if = "is_zero")]
    pub retries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One registered loop: the row of `task_auto`. What `run start` registered ([`NewRun`]),
/// where the loop is, each core's state, and the claim of the tick that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub spec: NewRun,
    pub status: Status,

    /// The loop's own iteration count (the signal's `iteration`), else signals seen.
    pub iteration_count: u64,
    pub signals_seen: u64,
    pub last_signal: Option<SeenSignal>,
    pub last_signal_at: Option<Time>,

    /// The stall core's state (seed 000's last_capture_hash, stall_count, recovery counts
    /// and clock_paused_since among them).
    pub stall: StallState,
    /// The wait core's state: the open wait, resumes, needs-person ([`crate::supervise::wait`]).
    pub waits: WaitState,
    /// The agent's state at the last tick that saw its pane, its compactions, exit detection.
    pub agent_state: AgentState,
    /// Dispatch mode: the step to type, the last one typed, the intent record.
    pub dispatch: DispatchState,
    /// The governor's state of the run: the permit its current step holds.
    pub governor: governor::RunState,
    /// Notifications stored with the decisions that made them, until delivered
    /// ([`crate::supervise::outbox`]).
    pub outbox: Vec<crate::supervise::outbox::Entry>,

    pub started_at: Time,
    pub ticks: u64,
    pub heartbeats: u64,
    pub last_tick_at: Option<Time>,
    pub last_heartbeat_at: Option<Time>,
    /// The last tick's decision, one line (for `run status`).
    pub last_decision: String,

    pub stop_reason: Option<StopReason>,
    pub stop_message: Option<String>,
    pub ended_at: Option<Time>,

    pub claimed_by: Option<String>,
    pub claimed_until: Option<Time>,
}

impl Run {
    /// The row `run start` inserts.
    pub fn new(new: &NewRun, now: Time) -> Run {
        Run {
            spec: new.clone(),
            status: Status::Running,
            iteration_count: 0,
            signals_seen: 0,
            last_signal: None,
            last_signal_at: None,
            stall: StallState::default(),
            waits: WaitState::default(),
            agent_state: AgentState::default(),
            dispatch: DispatchState::default(),
            governor: governor::RunState::default(),
            outbox: Vec::new(),
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
        Path::new(&self.spec.task_dir)
    }

    /// When the timeout clock paused, if a wait holds it paused now.
    pub fn clock_paused_since(&self) -> Option<Time> {
        self.stall.clock_paused_since
    }

    /// Time spent waiting for a quota to reset, including a wait still open at `now`.
    pub fn quota_waited(&self, now: Time) -> Duration {
        let closed = Duration::from_secs(self.stall.clock_paused_seconds);
        let open = self
            .clock_paused_since()
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

    /// A stall recovery is still in the budget (per iteration and in total).
    pub fn recovery_left(&self) -> bool {
        self.stall.recoveries_iteration < self.spec.limits.recoveries_per_iteration
            && self.stall.recoveries_total < self.spec.limits.recoveries_total
    }

    /// Compactions counted in the current iteration.
    pub fn compactions_this_iteration(&self) -> u32 {
        self.agent_state.compactions.at(self.iteration_count).count
    }

    /// The step the loop is on, from the latest signal (its `next`), for status displays.
    pub fn current_step(&self) -> Option<&str> {
        if let Some(dispatched) = &self.dispatch.dispatched
            && self.spec.mode == Mode::Dispatch
        {
            return Some(&dispatched.next);
        }
        self.last_signal.as_ref().map(|s| s.next.as_str())
    }

    /// End the run with `status` and a reason.
    pub fn end(&mut self, status: Status, reason: StopReason, message: Option<String>, now: Time) {
        self.status = status;
        self.stop_reason = Some(reason);
        self.stop_message = message;
        self.ended_at = Some(now);
        self.dispatch.pending = None;
    }
}

/// Beside [`Run`], so the governor's core knows nothing of a run but what it is handed.
impl governor::Fleet {
    /// The account's running runs as the governor counts them: who holds a permit, who
    /// waits to be released (a quota wait: paced, or on a usage limit).
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a Run>) -> governor::Fleet {
        let mut fleet = governor::Fleet::default();
        for run in runs.into_iter().filter(|r| r.status.is_active()) {
            if run.governor.permit.is_some() {
                fleet.in_flight.push(run.spec.session.clone());
            }
            if let Some(open) = run.waits.open.as_ref().filter(|o| o.kind.is_quota()) {
                fleet.waiting.push(governor::Waiter {
                    session: run.spec.session.clone(),
                    priority: run.spec.priority,
                    since: open.since,
                });
            }
        }
        fleet
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::DateTime;

    #[test]
    fn a_stored_state_is_the_word_it_was_read_from() {
        use crate::hook::session::AgentState;
        use crate::pane::Class;
        for (word, state) in [
            ("working", StoredState::Hook(AgentState::Working)),
            ("idle", StoredState::Hook(AgentState::Idle)),
            (
                "waiting-for-input",
                StoredState::Hook(AgentState::WaitingForInput),
            ),
            ("failed", StoredState::Hook(AgentState::Failed)),
            (
                "failed:rate_limit",
                StoredState::Failed("rate_limit".into()),
            ),
            ("permission", StoredState::Screen(Class::Permission)),
            ("rate-limit", StoredState::Screen(Class::RateLimit)),
            ("sleeping", StoredState::Other("sleeping".into())),
        ] {
            assert_eq!(StoredState::from(word), state, "{word}");
            assert_eq!(state.to_string(), word);
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(json, format!("{word:?}"));
            assert_eq!(serde_json::from_str::<StoredState>(&json).unwrap(), state);
        }
        // Every word a tick's reading prints reads back as itself.
        use crate::supervise::channels::ReadState;
        let hook = |state| ReadState::Hook { state, error: None };
        for reading in [
            hook(AgentState::Compacting),
            hook(AgentState::Ended),
            ReadState::Hook {
                state: AgentState::Failed,
                error: Some("overloaded".into()),
            },
            ReadState::Screen(Class::Working),
            ReadState::Screen(Class::Shell),
            ReadState::Screen(Class::Unknown),
        ] {
            let stored = StoredState::of(&reading);
            assert!(!matches!(stored, StoredState::Other(_)), "{reading}");
            assert_eq!(stored.to_string(), reading.to_string());
        }
    }

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap()
    }

    pub(crate) fn sample() -> NewRun {
        NewRun {
            session: "s".into(),
            task_dir: "/t".into(),
            target: "s".into(),
            mode: Mode::Observe,
            agent: Agent::Claude,
            launch_command: None,
            command_template: String::new(),
            into: DispatchInto::Shell,
            table: "ai-cli-task".into(),
            max_iterations: 20,
            timeout: Duration::from_secs(1800),
            limits: stall::Limits::default(),
            wait_limits: WaitLimits::default(),
            notify: None,
            max_compactions: crate::taskai::compaction::DEFAULT_MAX_COMPACTIONS,
            account: governor::DEFAULT_ACCOUNT.into(),
            priority: 0,
            host: "here".into(),
        }
    }

    #[test]
    fn quota_waits_pause_the_clock() {
        let mut run = Run::new(&sample(), at(0));
        assert_eq!(run.elapsed(at(100)), Duration::from_secs(100));
        run.stall.clock_paused_since = Some(at(100));
        assert_eq!(run.elapsed(at(160)), Duration::from_secs(100));
        run.stall.clock_paused_since = None;
        run.stall.clock_paused_seconds = 60;
        assert_eq!(run.elapsed(at(200)), Duration::from_secs(140));
        run.stall.clock_paused_since = Some(at(200));
        run.end(Status::Stopped, StopReason::Timeout, None, at(230));
        assert_eq!(run.elapsed(at(9_999)), Duration::from_secs(140));
    }

    #[test]
    fn a_clock_that_goes_backwards_counts_zero() {
        let run = Run::new(&sample(), at(100));
        assert_eq!(run.elapsed(at(0)), Duration::ZERO);
    }
}

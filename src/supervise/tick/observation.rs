//! What a tick reads about one run before it decides: the task directory, its signal and
//! stop file, the pane (one capture read into a [`PaneView`]) and the task's status time.
//! The driver builds it ([`crate::supervise::driver`]); [`super::decide`] only reads it.

use crate::pane::view::PaneView;
use crate::protocol::signal::Signal;
use crate::supervise::run::DispatchStep;
use crate::supervise::stall::StatusMark;

/// What a tick read about one run.
#[derive(Debug, Clone)]
pub struct Observation {
    pub task_dir: bool,
    pub signal: SignalObs,
    pub stop: StopObs,
    pub pane: PaneObs,
    /// Dispatch mode before the first step: where the loop enters (from `.index.md`).
    pub entry: Option<Result<DispatchStep, String>>,
    /// The module holds `.tmp-annotations.json`: a plan step runs in annotations mode.
    pub annotations: bool,
    /// `.status.json`'s last update (task-ai modules): the step clock.
    pub status: Option<StatusMark>,
    /// The task's own compaction threshold (its profile; task-ai's fallback).
    pub compaction: crate::supervise::channels::TaskCompaction,
    /// An active quota-wait record of `hook stop-failure` for the task's project.
    pub quota_wait: Option<String>,
    /// What could not be read (an unreadable status or quota record): reported, not fatal.
    pub notes: Vec<String>,
    /// The agent's typed state, as its hooks and status line recorded it.
    pub channels: Option<crate::supervise::channels::ChannelObs>,
    /// What the wait core reads besides the screen.
    pub waits: WaitInputs,
    /// The run's account as the quota governor reads it (`None`: the governor is not asked).
    pub account: Option<crate::supervise::store::AccountView>,
    /// Dispatch mode `--into shell`: the files the step's command names, and how the
    /// dispatched step ended by its own stream ([`crate::supervise::stream`]).
    pub step_files: Option<StepFiles>,
    /// Whether the agent the run launched has started, by its own hooks: what the first
    /// dispatch into it waits for.
    pub agent_start: AgentStart,
}

/// Whether the agent a dispatch run launched has started, by its own SessionStart hook.
/// Claude Code 2.1.332 draws its idle input box before it runs its SessionStart hooks and
/// settles (seen in the live tier: the box empty at 30.14 s, SessionStart recorded at
/// 30.33 s), so the box alone does not say the agent takes keys yet; where its hooks are
/// wired, the hook does. The driver asks only before the run's first dispatch into an agent
/// it launched, and only reads the agent's settings while the screen shows it ready.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AgentStart {
    /// Not asked, or no SessionStart hook of autoctl's is wired where the agent reads its
    /// settings: the screen decides, as before.
    #[default]
    Unknown,
    /// Its SessionStart was recorded (in its pane's record) since the run started.
    Started,
    /// Its SessionStart hook is wired, and none was recorded since the run started.
    Awaited,
}

/// The files of `--into shell` steps (`{settings}`, `{stream}`) and the last step's result.
#[derive(Debug, Clone, Default)]
pub struct StepFiles {
    /// `{settings}`: autoctl's hooks for `claude -p --settings`.
    pub settings: String,
    /// `{stream}` of the next dispatch.
    pub next_stream: String,
    /// The `result` of the dispatched step's stream, once it wrote one.
    pub result: Option<crate::supervise::stream::StepResult>,
}

/// What the wait core reads besides the screen and the typed channels (those are the
/// cross-check's [`crate::supervise::channels::Use`]): its children's CPU time and the
/// quota-wait record.
#[derive(Debug, Clone, Default)]
pub struct WaitInputs {
    /// CPU time (clock ticks) of the agent's child processes.
    pub child_cpu: Option<u64>,
    /// The quota-wait record of `hook stop-failure`: its reset, if it names one.
    pub recorded: Option<crate::supervise::wait::Recorded>,
}

/// The task's `.auto-signal`.
#[derive(Debug, Clone)]
pub enum SignalObs {
    Missing,
    /// Present but not a valid signal: logged, never fatal.
    Invalid(String),
    /// A valid signal and a fingerprint of this very file (content and modification time).
    Valid {
        signal: Signal,
        fingerprint: String,
    },
}

/// The task's `.auto-stop`.
#[derive(Debug, Clone)]
pub enum StopObs {
    None,
    Requested(String),
    /// A stop file that cannot be trusted still means stop.
    Unreadable(String),
}

/// The run's pane.
#[derive(Debug, Clone)]
pub enum PaneObs {
    /// tmux says the pane does not exist (or its program died): the run is lost.
    Gone(String),
    /// tmux could not be asked (no server on this socket): nothing is decided about the pane.
    Unavailable(String),
    /// The pane's program exited and tmux keeps the pane (`remain-on-exit`): it takes no
    /// keys; a restart is `tmux respawn-pane` with the run's `--launch`.
    Dead(String),
    Seen(Box<PaneView>),
}

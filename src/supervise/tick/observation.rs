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

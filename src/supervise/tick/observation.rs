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
    /// `.status.json`'s last update (task-ai modules): the step clock.
    pub status: Option<StatusMark>,
    /// An active quota-wait record of `hook stop-failure` for the task's project.
    pub quota_wait: Option<String>,
    /// What could not be read (an unreadable status or quota record): reported, not fatal.
    pub notes: Vec<String>,
    /// The agent's typed state, as its hooks and status line recorded it.
    pub typed: Option<crate::supervise::typed::TypedObs>,
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
    Seen(Box<PaneView>),
}

//! What a tick reports: one [`TickEvent`] per run and tick, the JSON line `run tick` and
//! `run watch` print (schema: `autoctl schema show tick-event`) — what it saw ([`Saw`]), the
//! one-word [`Decision`] with its reasons, what it did ([`Did`]) and the run after it
//! ([`RunAfter`]).

use crate::supervise::channels::Reading;
use std::time::Duration;

use serde::Serialize;

use super::Effect;
use super::observation::{Observation, PaneObs, SignalObs, StopObs};
use crate::supervise::run::{Mode, Run, Status, StopReason};
use crate::time::{Time, format_time};

/// The one-word decision of a tick, for scripts (`jq 'select(.decision == "escalate")'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Nothing to report: the loop is progressing (or quietly waiting).
    Progress,
    /// A wait that is not a stall: a quota or rate limit, or a pane not ready yet.
    Wait,
    /// A safe prompt was answered.
    Answer,
    /// The agent was resumed after a wait: the resume text typed.
    Resume,
    /// One Esc typed into a wedged stream (a stall recovery; the resume follows at the idle
    /// prompt). `stall check` names the same act `esc`.
    Esc,
    /// The continuation typed to an agent idle at its prompt in the middle of a step (the
    /// silent continue: a stall recovery, not an answer). `stall check` names the same act
    /// `continue`, the word printed here.
    #[serde(rename = "continue")]
    Continuation,
    /// `/compact` typed to an agent idle at its own prompt whose context use crossed the
    /// run's threshold (proactive compaction): it answers no prompt, so it is not `answer`.
    Compact,
    /// A prompt a person must decide (destructive, trust, login, a screen that did not take
    /// an answer): nothing typed.
    Escalate,
    /// Dispatch mode: the next command was typed.
    Dispatch,
    /// The loop completed by itself.
    Finish,
    /// A stop was requested (`.auto-stop` written or found) and the run ended.
    Stop,
    /// The agent exited before the loop finished.
    Exit,
    /// The pane or the task dir is gone.
    Lost,
    /// `run recover`: the agent was launched again in its pane.
    Relaunch,
    /// Not this tick's run (another tick holds it, or it has ended).
    Skip,
    /// Something failed; the run is unchanged and the next tick tries again.
    Error,
}

impl Decision {
    /// Which decision names a tick when several things happened.
    fn rank(self) -> u8 {
        match self {
            Decision::Skip => 0,
            Decision::Progress => 1,
            Decision::Wait => 2,
            Decision::Escalate => 3,
            Decision::Answer
            | Decision::Resume
            | Decision::Esc
            | Decision::Continuation
            | Decision::Compact => 4,
            Decision::Dispatch | Decision::Relaunch => 5,
            Decision::Error => 6,
            Decision::Stop | Decision::Finish | Decision::Exit | Decision::Lost => 7,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Progress => "progress",
            Decision::Wait => "wait",
            Decision::Answer => "answer",
            Decision::Resume => "resume",
            Decision::Esc => "esc",
            Decision::Continuation => "continue",
            Decision::Compact => "compact",
            Decision::Escalate => "escalate",
            Decision::Dispatch => "dispatch",
            Decision::Finish => "finish",
            Decision::Stop => "stop",
            Decision::Exit => "exit",
            Decision::Lost => "lost",
            Decision::Relaunch => "relaunch",
            Decision::Skip => "skip",
            Decision::Error => "error",
        }
    }
}

/// What the tick saw of the signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignalSaw {
    /// new, seen (already counted), missing, invalid.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// What the tick saw of the pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PaneSaw {
    /// seen, gone, unavailable.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreground: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub destructive: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// What a person would be asked to decide on this screen (the prompt's key, else the
    /// hash): an escalation stands while it stays the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Everything the tick read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Saw {
    pub task_dir: bool,
    pub signal: SignalSaw,
    /// none, requested, unreadable.
    pub stop_file: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// `.status.json`'s `updated_at` (else its modification time): what `run continue
    /// --if-unchanged` compares with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_updated_at: Option<String>,
    /// The quota-wait record that makes the loop wait, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_wait: Option<String>,
    pub pane: PaneSaw,
}

/// One effect and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Did {
    #[serde(flatten)]
    pub effect: Effect,
    /// done, planned (dry run), failed.
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The run after the tick, in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAfter {
    pub status: Status,
    pub iteration: u64,
    pub max_iterations: u64,
    pub elapsed_ms: u64,
    pub timeout_ms: u64,
    pub quota_waiting: bool,
    pub stall_count: u32,
    pub recoveries_iteration: u32,
    pub recoveries_total: u32,
    /// Harmless prompts answered this step and in all (not recoveries).
    pub answers_step: u32,
    pub answers_total: u32,
    /// How many times in a row the agent said its latest message.
    pub message_repeats: u32,
    /// How long the step has gone without a `.status.json` update (quota waits excluded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_elapsed_ms: Option<u64>,
    /// Context compactions counted in this iteration (of the run's `--max-compactions`).
    #[serde(skip_serializing_if = "is_zero")]
    pub compactions: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Set while the run needs a person: why, and since when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_person: Option<crate::supervise::wait::NeedsPerson>,
    /// The wait the run is in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<crate::supervise::wait::OpenWait>,
}

impl RunAfter {
    pub fn of(run: &Run, now: Time) -> RunAfter {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        RunAfter {
            status: run.status,
            iteration: run.iteration_count,
            max_iterations: run.spec.max_iterations,
            elapsed_ms: millis(run.elapsed(now)),
            timeout_ms: millis(run.spec.timeout),
            quota_waiting: run.stall.clock_paused_since.is_some() && run.status.is_active(),
            stall_count: run.stall.unchanged,
            recoveries_iteration: run.stall.recoveries_iteration,
            recoveries_total: run.stall.recoveries_total,
            answers_step: run.stall.answers_step,
            answers_total: run.stall.answers_total,
            message_repeats: run.stall.message_repeats,
            step_elapsed_ms: run
                .stall
                .step_elapsed(run.ended_at.unwrap_or(now))
                .map(millis),
            compactions: run.compactions_this_iteration(),
            step: run.current_step().map(str::to_string),
            stop_reason: run.stop_reason.clone(),
            needs_person: run.waits.needs_person.clone(),
            wait: run.waits.open.clone().filter(|_| run.status.is_active()),
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One line of `run tick` output (schema: `autoctl schema show tick-event`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TickEvent {
    pub time: String,
    pub session: String,
    pub task: String,
    pub mode: Mode,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Whether this tick counted as a stall heartbeat (they are spaced by `--heartbeat`).
    pub heartbeat: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saw: Option<Saw>,
    pub decision: Decision,
    pub reasons: Vec<String>,
    pub did: Vec<Did>,
    pub run: RunAfter,
    /// The agent's state this tick went by and its source (`hook`, `statusline`, `screen`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<Reading>,
    /// What this tick announces to `--notify` (each event once, by the tick that decided it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<crate::supervise::tick::notice::Notice>,
    /// The run's own notify command (`run start --notify`).
    #[serde(skip)]
    pub notify_command: Option<String>,
    /// Every [`TickEvent::decide`], by the index of its reason, so one can be taken back.
    #[serde(skip)]
    decided: Vec<(usize, Decision)>,
}

impl TickEvent {
    pub(super) fn new(run: &Run, now: Time, dry_run: bool) -> TickEvent {
        TickEvent {
            time: format_time(now),
            session: run.spec.session.clone(),
            task: run.spec.task_dir.clone(),
            mode: run.spec.mode,
            dry_run,
            heartbeat: false,
            saw: None,
            decision: Decision::Progress,
            reasons: Vec::new(),
            did: Vec::new(),
            run: RunAfter::of(run, now),
            state: None,
            notify: Vec::new(),
            notify_command: run.spec.notify.clone(),
            decided: Vec::new(),
        }
    }

    /// An event for a run this tick did not decide about.
    pub fn skipped(run: &Run, now: Time, dry_run: bool, why: String) -> TickEvent {
        let mut event = TickEvent::new(run, now, dry_run);
        event.decision = Decision::Skip;
        event.reasons.push(why);
        event
    }

    /// An event for a run whose tick failed (the row is unchanged).
    pub fn failed(run: &Run, now: Time, dry_run: bool, why: String) -> TickEvent {
        let mut event = TickEvent::new(run, now, dry_run);
        event.decision = Decision::Error;
        event.reasons.push(why);
        event
    }

    /// Name the tick by `decision` unless a weightier one was made, and say why (the
    /// reason's index is `reasons.len() - 1` after the call, for [`TickEvent::take_back`]).
    pub(super) fn decide(&mut self, decision: Decision, reason: impl Into<String>) {
        if decision.rank() >= self.decision.rank() {
            self.decision = decision;
        }
        self.reasons.push(reason.into());
        self.decided.push((self.reasons.len() - 1, decision));
    }

    /// Undo the decision made with the reason at `index` (an answer that was never typed):
    /// the event is as if it had not been made.
    pub(super) fn take_back(&mut self, index: usize) {
        self.reasons.remove(index);
        self.decided.retain(|(i, _)| *i != index);
        for (i, _) in &mut self.decided {
            if *i > index {
                *i -= 1;
            }
        }
        self.decision = self
            .decided
            .iter()
            .fold(Decision::Progress, |current, (_, next)| {
                if next.rank() >= current.rank() {
                    *next
                } else {
                    current
                }
            });
    }

    /// `run status`'s one-line summary of the tick: its decision and last reason (the
    /// agent's state and its source are fields of the run: [`Run::agent_state`]).
    pub(super) fn summary(&self) -> String {
        format!(
            "{}: {}",
            self.decision.as_str(),
            self.reasons.last().map(String::as_str).unwrap_or("")
        )
    }
}

/// What the tick read, as the event reports it.
pub(super) fn saw(run: &Run, obs: &Observation) -> Saw {
    let signal = match &obs.signal {
        SignalObs::Missing => SignalSaw {
            state: "missing",
            step: None,
            result: None,
            next: None,
            checkpoint: None,
            iteration: None,
            problem: None,
        },
        SignalObs::Invalid(problem) => SignalSaw {
            state: "invalid",
            step: None,
            result: None,
            next: None,
            checkpoint: None,
            iteration: None,
            problem: Some(problem.clone()),
        },
        SignalObs::Valid {
            signal,
            fingerprint,
        } => SignalSaw {
            state: if is_new(run, fingerprint) {
                "new"
            } else {
                "seen"
            },
            step: Some(signal.step.clone()),
            result: Some(signal.result.clone()),
            next: Some(signal.next.clone()),
            checkpoint: Some(signal.checkpoint_or_empty().to_string()),
            iteration: signal.iteration,
            problem: None,
        },
    };
    let (stop_file, stop_reason) = match &obs.stop {
        StopObs::None => ("none", None),
        StopObs::Requested(reason) => ("requested", Some(reason.clone())),
        StopObs::Unreadable(why) => ("unreadable", Some(why.clone())),
    };
    let pane = match &obs.pane {
        PaneObs::Gone(error) => PaneSaw::error("gone", error),
        PaneObs::Unavailable(error) => PaneSaw::error("unavailable", error),
        PaneObs::Dead(error) => PaneSaw::error("dead", error),
        PaneObs::Seen(view) => {
            let c = &view.classification;
            PaneSaw {
                state: "seen",
                id: Some(view.pane_id.clone()),
                foreground: Some(view.foreground.clone()),
                class: Some(c.class.as_str()),
                action: Some(c.action.as_str()),
                reason: Some(c.reason.clone()),
                destructive: c.destructive,
                reset_at: c.reset_at.clone(),
                hash: Some(view.hash.clone()),
                key: Some(view.key.clone()),
                error: None,
            }
        }
    };
    Saw {
        task_dir: obs.task_dir,
        signal,
        stop_file,
        stop_reason,
        status_updated_at: obs.status.as_ref().map(|s| s.updated_at.clone()),
        quota_wait: obs.quota_wait.clone(),
        pane,
    }
}

impl PaneSaw {
    fn error(state: &'static str, error: &str) -> PaneSaw {
        PaneSaw {
            state,
            id: None,
            foreground: None,
            class: None,
            action: None,
            reason: None,
            destructive: false,
            reset_at: None,
            hash: None,
            key: None,
            error: Some(error.to_string()),
        }
    }
}

/// Is this signal file one the run has not counted yet?
pub(super) fn is_new(run: &Run, fingerprint: &str) -> bool {
    run.last_signal
        .as_ref()
        .is_none_or(|seen| !crate::protocol::signal::same_signal(&seen.fingerprint, fingerprint))
}

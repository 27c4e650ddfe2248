//! One heartbeat of a supervised loop: what `autoctl run tick` does for each running run, and
//! what a file-notification driver (`run watch`) reuses for each event.
//!
//! The decision is [`decide`]: a pure function of the run's row, one [`Observation`] (task dir,
//! signal, stop file, pane) and the clock. It returns the next row, the effects to carry out
//! and the [`TickEvent`] that `run tick` prints as one JSON line. The edges are thin:
//! [`tick`] claims runs in the registry, reads the files, captures every pane in one tmux
//! call, calls [`decide`], performs the effects and saves the row under its claim.
//!
//! The stall part of a heartbeat is the stall core's ([`crate::supervise::stall`]); this
//! module only stores its state in the row and turns its decision into effects. What a tick
//! adds around it comes from the seeds: signals move the counters, limits write `.auto-stop`,
//! dispatch mode types the next command into a ready pane, and the loop's exit is detected
//! (a `(stop)` signal, a signal the agent removed at loop exit, a stop file, a shell prompt in
//! front of a dead agent, a pane or task dir that is gone).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::pane::classify::Classification;
use crate::pane::{Class, Key};
use crate::protocol::signal::{STOP, Signal};
use crate::routing::command;
use crate::supervise::run::{Mode, Run, SeenSignal, Status, Step};
use crate::supervise::stall::{
    self, MessageMark, SignalMark, StatusMark, Step as StallStep, Verdict,
};
use crate::taskai::stall::CONTINUATION;
use crate::time::{Time, between, format_time};

/// How a tick runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickOptions {
    /// How often ticks are scheduled. Stall heartbeats (the captures that count toward a
    /// stall) are spaced at least half of it apart, so overlapping ticks never count one
    /// minute as two.
    pub heartbeat: Duration,
    /// Decide and report, but change nothing: no keys typed, no files written, no row saved.
    pub dry_run: bool,
    /// Answer safe prompts. The edge decides again with `false` when an answer turned out
    /// not to be typeable (the screen changed, another supervisor answered it), so no
    /// recovery is counted for keys that were never sent.
    pub answers: bool,
}

/// What a tick read about one run.
#[derive(Debug, Clone)]
pub struct Observation {
    pub task_dir: bool,
    pub signal: SignalObs,
    pub stop: StopObs,
    pub pane: PaneObs,
    /// Dispatch mode before the first step: where the loop enters (from `.index.md`).
    pub entry: Option<Result<Step, String>>,
    /// `.status.json`'s last update (task-ai modules): the step clock.
    pub status: Option<StatusMark>,
    /// An active quota-wait record of `hook stop-failure` for the task's project.
    pub quota_wait: Option<String>,
    /// What could not be read (an unreadable status or quota record): reported, not fatal.
    pub notes: Vec<String>,
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

/// One capture, classified.
#[derive(Debug, Clone)]
pub struct PaneView {
    pub pane_id: String,
    pub foreground: String,
    /// The foreground command is a shell (so nothing runs in the pane: seed 001's readiness).
    pub foreground_is_shell: bool,
    /// Normalized hash of the screen.
    pub hash: String,
    pub classification: Classification,
    /// The screen hash the pane remembers as answered (by any supervisor).
    pub answered_marker: Option<String>,
    /// The agent's messages on screen (Claude Code screens).
    pub messages: Option<MessageMark>,
}

impl PaneView {
    /// A shell prompt is in front and no command runs: the agent has exited, or (dispatch
    /// mode) the pane is ready for the next command. The prompt line must be on the screen:
    /// a shell in front that prints output or waits on a heredoc's `> ` is not ready to be
    /// typed into.
    pub fn shell_ready(&self) -> bool {
        self.foreground_is_shell
            && self.classification.class == Class::Shell
            && self.classification.prompt_visible
    }
}

/// Something the tick does to the world, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Write `.auto-stop` with this reason.
    WriteStop {
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Type keys into the run's pane; `answered` marks the screen as answered in the pane.
    Send {
        keys: Vec<Key>,
        #[serde(skip)]
        answered: Option<(String, String)>,
        /// A continuation: typed only while `.status.json`'s `updated_at` is still this.
        #[serde(skip_serializing_if = "Option::is_none")]
        if_unchanged: Option<String>,
    },
    /// Remove `.auto-signal`, but only the file with this fingerprint (never a newer one).
    RemoveSignal {
        #[serde(skip)]
        fingerprint: String,
    },
    /// Remove `.auto-stop`.
    RemoveStop,
}

/// The one-word decision of a tick, for scripts (`jq 'select(.decision == "escalate")'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Nothing to do: the loop is progressing (or quietly waiting).
    Continue,
    /// A wait that is not a stall: a quota or rate limit, or a pane not ready yet.
    Wait,
    /// A safe prompt was answered.
    Answer,
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
            Decision::Continue => 1,
            Decision::Wait => 2,
            Decision::Escalate => 3,
            Decision::Answer => 4,
            Decision::Dispatch | Decision::Relaunch => 5,
            Decision::Error => 6,
            Decision::Stop | Decision::Finish | Decision::Exit | Decision::Lost => 7,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::Wait => "wait",
            Decision::Answer => "answer",
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
    /// How many times in a row the agent said its latest message.
    pub message_repeats: u32,
    /// How long the step has gone without a `.status.json` update (quota waits excluded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_elapsed_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl RunAfter {
    pub fn of(run: &Run, now: Time) -> RunAfter {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        RunAfter {
            status: run.status,
            iteration: run.iteration_count,
            max_iterations: run.max_iterations,
            elapsed_ms: millis(run.elapsed(now)),
            timeout_ms: millis(run.timeout),
            quota_waiting: run.stall.quota_wait_since.is_some() && run.status.is_active(),
            stall_count: run.stall.unchanged,
            recoveries_iteration: run.stall.recoveries_iteration,
            recoveries_total: run.stall.recoveries_total,
            message_repeats: run.stall.message_repeats,
            step_elapsed_ms: run
                .stall
                .step_elapsed(run.ended_at.unwrap_or(now))
                .map(millis),
            step: run.current_step().map(str::to_string),
            stop_reason: run.stop_reason.clone(),
        }
    }
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
}

impl TickEvent {
    fn new(run: &Run, now: Time, dry_run: bool) -> TickEvent {
        TickEvent {
            time: format_time(now),
            session: run.session.clone(),
            task: run.task_dir.clone(),
            mode: run.mode,
            dry_run,
            heartbeat: false,
            saw: None,
            decision: Decision::Continue,
            reasons: Vec::new(),
            did: Vec::new(),
            run: RunAfter::of(run, now),
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

    fn decide(&mut self, decision: Decision, reason: impl Into<String>) {
        if decision.rank() >= self.decision.rank() {
            self.decision = decision;
        }
        self.reasons.push(reason.into());
    }
}

/// The result of [`decide`].
#[derive(Debug, Clone)]
pub struct Outcome {
    pub run: Run,
    pub effects: Vec<Effect>,
    pub event: TickEvent,
}

struct Tick<'a> {
    before: &'a Run,
    run: Run,
    effects: Vec<Effect>,
    event: TickEvent,
    now: Time,
}

impl Tick<'_> {
    fn end(&mut self, status: Status, decision: Decision, reason: &str, why: String) {
        self.run.end(status, reason, None, self.now);
        self.event.decide(decision, why);
    }

    /// Ask the loop to stop (`.auto-stop`) and end the run with that reason.
    fn stop(&mut self, reason: &str, why: String) {
        self.effects.push(Effect::WriteStop {
            reason: reason.to_string(),
            message: Some(why.clone()),
        });
        if self.run.mode == Mode::Dispatch {
            self.remove_signal();
        }
        self.end(Status::Stopped, Decision::Stop, reason, why);
    }

    /// Dispatch mode owns the signal: remove the one this tick read.
    fn remove_signal(&mut self) {
        if let Some(seen) = &self.run.last_signal
            && !self
                .effects
                .iter()
                .any(|e| matches!(e, Effect::RemoveSignal { .. }))
        {
            self.effects.push(Effect::RemoveSignal {
                fingerprint: seen.fingerprint.clone(),
            });
        }
    }

    fn active(&self) -> bool {
        self.run.status.is_active()
    }
}

/// Is a stall heartbeat due? They are spaced at least half a tick interval apart.
pub fn heartbeat_due(run: &Run, now: Time, heartbeat: Duration) -> bool {
    run.last_heartbeat_at
        .is_none_or(|last| between(last, now) >= heartbeat / 2)
}

/// Decide one tick of one run. Pure: the same row, observation and clock give the same
/// outcome.
pub fn decide(before: &Run, obs: &Observation, now: Time, options: &TickOptions) -> Outcome {
    let mut t = Tick {
        before,
        run: before.clone(),
        effects: Vec::new(),
        event: TickEvent::new(before, now, options.dry_run),
        now,
    };
    if !before.status.is_active() {
        // Claims never hand out ended runs; a driver that asks anyway changes nothing.
        t.event.decide(
            Decision::Skip,
            format!("the run has ended ({})", before.status.as_str()),
        );
        return Outcome {
            run: t.run,
            effects: t.effects,
            event: t.event,
        };
    }
    t.run.ticks = t.run.ticks.saturating_add(1);
    t.run.last_tick_at = Some(now);
    let due = heartbeat_due(before, now, options.heartbeat);
    if due {
        t.run.heartbeats = t.run.heartbeats.saturating_add(1);
        t.run.last_heartbeat_at = Some(now);
    }
    t.event.heartbeat = due;
    t.event.saw = Some(saw(before, obs));
    for note in &obs.notes {
        t.event.decide(Decision::Continue, note.clone());
    }

    if !obs.task_dir {
        let why = format!("the task dir {} no longer exists", before.task_dir);
        t.end(Status::Lost, Decision::Lost, "task_dir_gone", why);
        return finish(t);
    }
    let pane = match &obs.pane {
        PaneObs::Gone(why) => {
            let why = format!("the pane {} is gone: {why}", before.target);
            t.end(Status::Lost, Decision::Lost, "pane_gone", why);
            return finish(t);
        }
        PaneObs::Unavailable(why) => {
            // Never end a run because tmux could not be asked: a cron line with the wrong
            // socket must not wipe out every loop.
            t.event
                .decide(Decision::Error, format!("cannot read the pane: {why}"));
            None
        }
        PaneObs::Seen(view) => Some(view.as_ref()),
    };

    read_signal(&mut t, obs);
    if t.active() {
        read_stop_file(&mut t, obs);
    }
    let stall = match (pane, t.active() && due) {
        (Some(view), true) => stall_heartbeat(&mut t, view, obs, options),
        _ => None,
    };
    if t.active() {
        enforce_limits(&mut t);
    }
    if let Some(stall) = stall {
        apply_stall(&mut t, stall, pane, options.dry_run);
    }
    if t.active()
        && let Some(view) = pane
    {
        match t.run.mode {
            Mode::Observe => detect_exit(&mut t, view, due),
            Mode::Dispatch => dispatch(&mut t, view, obs, due),
        }
    }
    if t.event.reasons.is_empty() {
        t.event.reasons.push("the loop is progressing".to_string());
    }
    finish(t)
}

fn finish(mut t: Tick<'_>) -> Outcome {
    t.run.last_decision = format!(
        "{}: {}",
        t.event.decision.as_str(),
        t.event.reasons.last().map(String::as_str).unwrap_or("")
    );
    t.event.run = RunAfter::of(&t.run, t.now);
    Outcome {
        run: t.run,
        effects: t.effects,
        event: t.event,
    }
}

fn saw(run: &Run, obs: &Observation) -> Saw {
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
            error: Some(error.to_string()),
        }
    }
}

fn is_new(run: &Run, fingerprint: &str) -> bool {
    run.last_signal
        .as_ref()
        .is_none_or(|seen| seen.fingerprint != fingerprint)
}

/// A new signal moves the counters; `(stop)` completes the loop; in observe mode a signal
/// the agent removed means the loop exited (the agent deletes it only at loop exit).
fn read_signal(t: &mut Tick<'_>, obs: &Observation) {
    match &obs.signal {
        SignalObs::Invalid(problem) => {
            t.event.decide(
                Decision::Continue,
                format!("ignored an invalid .auto-signal: {problem}"),
            );
        }
        SignalObs::Missing => {
            let vanished = t.run.mode == Mode::Observe
                && t.before
                    .last_signal
                    .as_ref()
                    .is_some_and(|seen| seen.next != STOP);
            if vanished {
                let why = "the agent ended the loop: it removed its .auto-signal (it does so only at loop exit)".to_string();
                t.end(Status::Finished, Decision::Finish, "complete", why);
            }
        }
        SignalObs::Valid {
            signal,
            fingerprint,
        } => {
            if !is_new(t.before, fingerprint) {
                return;
            }
            let run = &mut t.run;
            run.signals_seen = run.signals_seen.saturating_add(1);
            let count = signal.iteration.unwrap_or(run.signals_seen);
            run.iteration_count = run.iteration_count.max(count);
            run.last_signal_at = Some(t.now);
            run.last_signal = Some(SeenSignal {
                fingerprint: fingerprint.clone(),
                step: signal.step.clone(),
                result: signal.result.clone(),
                next: signal.next.clone(),
                checkpoint: signal.checkpoint_or_empty().to_string(),
                iteration: signal.iteration,
            });
            run.shell_seen = 0;
            let summary = format!(
                "signal: {} {} -> {}{} (iteration {})",
                signal.step,
                signal.result,
                signal.next,
                match signal.checkpoint_or_empty() {
                    "" => String::new(),
                    c => format!(" at {c}"),
                },
                run.iteration_count
            );
            if signal.next == STOP {
                if run.mode == Mode::Dispatch {
                    // Seed 001's cleanup: the daemon removes the signal (and a stop file).
                    t.remove_signal();
                    t.effects.push(Effect::RemoveStop);
                }
                t.end(
                    Status::Finished,
                    Decision::Finish,
                    "complete",
                    format!("{summary}: the loop is complete"),
                );
                return;
            }
            if run.mode == Mode::Dispatch {
                run.pending = Some(Step {
                    next: signal.next.clone(),
                    checkpoint: signal.checkpoint_or_empty().to_string(),
                });
                run.dispatched = None;
            }
            t.event.decide(Decision::Continue, summary);
        }
    }
}

/// A stop file autoctl did not write this tick (a person ran `autoctl stop write`, or a
/// stall checker hit its limit): the loop is stopping, so the run ends with that reason.
fn read_stop_file(t: &mut Tick<'_>, obs: &Observation) {
    let reason = match &obs.stop {
        StopObs::None => return,
        StopObs::Requested(reason) => reason.clone(),
        StopObs::Unreadable(_) => "unknown".to_string(),
    };
    if t.run.mode == Mode::Dispatch {
        t.remove_signal();
    }
    let why = format!(".auto-stop requests a stop ({reason})");
    t.end(Status::Stopped, Decision::Stop, &reason, why);
}

/// Max iterations and the timeout (quota waits excluded) write `.auto-stop`.
fn enforce_limits(t: &mut Tick<'_>) {
    if t.run.iteration_count >= t.run.max_iterations {
        let why = format!(
            "iteration {} reached the limit of {}",
            t.run.iteration_count, t.run.max_iterations
        );
        t.stop("max_iterations", why);
        return;
    }
    let elapsed = t.run.elapsed(t.now);
    if elapsed >= t.run.timeout {
        let why = format!(
            "{} of supervised time reached the timeout of {} (quota waits excluded: {})",
            crate::duration::format(Duration::from_secs(elapsed.as_secs())),
            crate::duration::format(t.run.timeout),
            crate::duration::format(Duration::from_secs(t.run.quota_waited(t.now).as_secs())),
        );
        t.stop("timeout", why);
    }
}

/// Run the stall core on this capture and keep its new state in the row.
fn stall_heartbeat(
    t: &mut Tick<'_>,
    view: &PaneView,
    obs: &Observation,
    options: &TickOptions,
) -> Option<stall::Decision> {
    // Dispatch mode rests at a shell prompt between steps: that is readiness, not a stall.
    if t.run.mode == Mode::Dispatch && view.shell_ready() {
        return None;
    }
    let c = &view.classification;
    let signal = match &obs.signal {
        SignalObs::Valid { signal, .. } => Some(SignalMark {
            iteration: signal.iteration,
            timestamp: signal.timestamp.clone(),
        }),
        _ => None,
    };
    let observation = stall::Observation {
        hash: view.hash.clone(),
        class: c.class,
        action: c.action,
        observe_only: c.observe_only,
        answered_marker: view.answered_marker.clone(),
        signal,
        messages: view.messages.clone(),
        status: obs.status.clone(),
        external_wait: obs.quota_wait.clone(),
    };
    let limits = stall::Limits {
        threshold: t.run.limits.threshold,
        per_iteration: t.run.limits.recoveries_per_iteration,
        total: t.run.limits.recoveries_total,
        repeat_limit: t.run.limits.repeat_limit,
        step_timeout: Some(t.run.limits.step_timeout),
    };
    // Restarts are `run recover`'s (observe mode ends the run on a dead agent instead).
    let effects = stall::Effects {
        answer: options.answers && !options.dry_run,
        restart: false,
        stop: !options.dry_run,
    };
    let (state, decision) = stall::heartbeat(&t.run.stall, &observation, t.now, &limits, effects);
    t.run.stall = state;
    Some(decision)
}

fn apply_stall(t: &mut Tick<'_>, stall: stall::Decision, pane: Option<&PaneView>, dry_run: bool) {
    let Some(view) = pane else { return };
    let c = &view.classification;
    let carried_out = stall.perform || dry_run;
    match stall.step {
        StallStep::None | StallStep::Restart => {
            if stall.verdict == Verdict::Stalled {
                t.event.decide(
                    Decision::Continue,
                    format!("stall: {} ({})", stall.reason, c.reason),
                );
            }
        }
        StallStep::Wait if c.action != crate::pane::Action::Wait => {
            // A wait recorded outside the screen (the quota-wait record).
            t.event.decide(
                Decision::Wait,
                format!("{}; the timeout clock is paused", stall.reason),
            );
        }
        StallStep::Wait => {
            let until = c
                .reset_at
                .as_deref()
                .map(|at| format!("; resets at {at}"))
                .unwrap_or_default();
            t.event.decide(
                Decision::Wait,
                format!(
                    "{} ({}){until}; the timeout clock is paused",
                    stall.reason, c.reason
                ),
            );
        }
        StallStep::Escalate => {
            let destructive = if c.destructive {
                "; destructive: never answered automatically"
            } else {
                ""
            };
            t.event.decide(
                Decision::Escalate,
                format!("escalate: {} ({}){destructive}", stall.reason, c.reason),
            );
        }
        StallStep::Answer if carried_out && t.active() => {
            t.effects.insert(
                0,
                Effect::Send {
                    keys: c.keys.clone(),
                    answered: Some((view.pane_id.clone(), view.hash.clone())),
                    if_unchanged: None,
                },
            );
            t.event.decide(
                Decision::Answer,
                format!("answer: {} ({})", stall.reason, c.reason),
            );
        }
        StallStep::Continue if carried_out && t.active() => {
            // Seed 002's Silent Continue: typed only while updated_at is the one seen.
            let expected = t.run.stall.status_updated_at.clone();
            t.effects.insert(
                0,
                Effect::Send {
                    keys: vec![
                        Key::Text(CONTINUATION.to_string()),
                        Key::Key("Enter".to_string()),
                    ],
                    answered: Some((view.pane_id.clone(), view.hash.clone())),
                    if_unchanged: expected,
                },
            );
            t.event.decide(
                Decision::Answer,
                format!("continue: {} ({})", stall.reason, c.reason),
            );
        }
        StallStep::Answer | StallStep::Continue => {}
        StallStep::Stop if carried_out && t.active() => {
            t.stop(stall.stop_reason(), stall.reason);
        }
        StallStep::Stop => {}
    }
}

/// Observe mode: a shell prompt in front of a dead agent, seen on two heartbeats in a row (a
/// command that is still starting shows the prompt for a moment), ends the run.
fn detect_exit(t: &mut Tick<'_>, view: &PaneView, due: bool) {
    if !view.shell_ready() {
        t.run.shell_seen = 0;
        return;
    }
    if due {
        t.run.shell_seen = t.run.shell_seen.saturating_add(1);
    }
    if t.run.shell_seen < 2 {
        t.event.decide(
            Decision::Continue,
            "a shell prompt is in front; the agent exits if it is still there next heartbeat",
        );
        return;
    }
    let last = t
        .run
        .last_signal
        .as_ref()
        .map(|s| format!("last step {} {} -> {}", s.step, s.result, s.next))
        .unwrap_or_else(|| "no signal was written".to_string());
    let why =
        format!("the agent exited (a shell prompt is in front) before the loop finished; {last}");
    t.end(Status::Exited, Decision::Exit, "agent_exited", why);
}

/// Dispatch mode (seed 001): when a step is due and the pane shows a ready shell, type the
/// next command and remove the signal that asked for it.
fn dispatch(t: &mut Tick<'_>, view: &PaneView, obs: &Observation, due: bool) {
    if t.run.pending.is_none() && t.run.dispatched.is_none() {
        match &obs.entry {
            Some(Ok(step)) if step.next == STOP => {
                let why = "the task's status says there is nothing to run".to_string();
                t.end(Status::Finished, Decision::Finish, "complete", why);
                return;
            }
            Some(Ok(step)) => t.run.pending = Some(step.clone()),
            Some(Err(why)) => {
                t.event.decide(
                    Decision::Error,
                    format!("cannot find the entry step: {why}"),
                );
                return;
            }
            None => {}
        }
    }
    let Some(step) = t.run.pending.clone() else {
        // A step is running. If the shell is back and no signal came, the step died.
        if view.shell_ready() && t.run.dispatched.is_some() {
            if due {
                t.run.shell_seen = t.run.shell_seen.saturating_add(1);
            }
            if t.run.shell_seen >= 2 {
                let step = t.run.dispatched.as_ref().map_or("", |d| d.next.as_str());
                let why = format!("the dispatched step {step} ended without writing a signal");
                t.end(Status::Exited, Decision::Exit, "agent_exited", why);
            }
        } else {
            t.run.shell_seen = 0;
        }
        return;
    };
    if !view.shell_ready() {
        let why = format!(
            "{} is due, but the pane is not ready ({} in front: {})",
            step.next,
            view.foreground,
            view.classification.class.as_str()
        );
        t.event.decide(Decision::Wait, why);
        return;
    }
    let vars = BTreeMap::from([
        ("next", step.next.clone()),
        ("checkpoint", step.checkpoint.clone()),
        ("task", t.run.task_dir.clone()),
        ("iteration", (t.run.iteration_count + 1).to_string()),
    ]);
    let text = match command::render(&t.run.command_template, &vars) {
        Ok(text) => text,
        Err(err) => {
            t.event.decide(
                Decision::Error,
                format!("cannot render the command: {err:#}"),
            );
            return;
        }
    };
    t.effects.push(Effect::Send {
        keys: vec![Key::Text(text.clone()), Key::Key("Enter".to_string())],
        answered: None,
        if_unchanged: None,
    });
    t.remove_signal();
    t.run.pending = None;
    t.run.dispatched = Some(step);
    t.run.dispatched_at = Some(t.now);
    t.run.dispatch_count = t.run.dispatch_count.saturating_add(1);
    t.run.shell_seen = 0;
    t.event.decide(Decision::Dispatch, format!("typed: {text}"));
}

/// Seed 000's server recovery for one run, after a restart: remove a stale `.auto-stop` (it
/// would end the restarted agent at once), look at the pane (agent alive: keep watching;
/// shell in front: launch the agent again; pane gone: the run is lost), and reset the stall
/// baseline. Dispatch mode forgets the step in flight, so the next tick dispatches the
/// module's resume point (its signal, else its status).
pub fn recover(before: &Run, obs: &Observation, now: Time, options: &TickOptions) -> Outcome {
    let mut t = Tick {
        before,
        run: before.clone(),
        effects: Vec::new(),
        event: TickEvent::new(before, now, options.dry_run),
        now,
    };
    t.event.saw = Some(saw(before, obs));
    if !obs.task_dir {
        let why = format!("the task dir {} no longer exists", before.task_dir);
        t.end(Status::Lost, Decision::Lost, "task_dir_gone", why);
        return finish(t);
    }
    // Every running row loses its stale stop, whatever the pane shows: it would end a
    // restarted agent at once, and a lost run's leftover would greet the next `run start`.
    if let StopObs::Requested(_) | StopObs::Unreadable(_) = obs.stop {
        t.effects.push(Effect::RemoveStop);
        t.event.decide(
            Decision::Continue,
            "removed a stale .auto-stop so the restarted agent does not exit at once",
        );
    }
    let view = match &obs.pane {
        PaneObs::Gone(why) => {
            let why = format!("the pane {} is gone: {why}", before.target);
            t.end(Status::Lost, Decision::Lost, "pane_gone", why);
            return finish(t);
        }
        PaneObs::Unavailable(why) => {
            t.event
                .decide(Decision::Error, format!("cannot read the pane: {why}"));
            return finish(t);
        }
        PaneObs::Seen(view) => view.as_ref(),
    };
    t.run.stall.last_hash = None;
    t.run.stall.unchanged = 0;
    t.run.shell_seen = 0;
    match (t.run.mode, view.shell_ready()) {
        (_, false) => t.event.decide(
            Decision::Continue,
            format!("{} is running in the pane; monitoring resumes", view.foreground),
        ),
        (Mode::Observe, true) => match t.run.launch_command.clone() {
            Some(command) => {
                t.effects.push(Effect::Send {
                    keys: vec![Key::Text(command.clone()), Key::Key("Enter".to_string())],
                    answered: None,
                    if_unchanged: None,
                });
                t.event.decide(
                    Decision::Relaunch,
                    format!("a shell is in front: launched the agent again: {command}"),
                );
            }
            None => t.event.decide(
                Decision::Escalate,
                "a shell is in front but the run has no launch command (start it with --launch): a person must start the agent, or the next tick ends the run as exited",
            ),
        },
        (Mode::Dispatch, true) => {
            // The step in flight died with the restart: type again what the module's files
            // say comes next — its signal's next step, else (no signal) its entry step.
            t.run.dispatched = None;
            t.run.pending = match &obs.signal {
                SignalObs::Valid { signal, .. } if signal.next != STOP => Some(Step {
                    next: signal.next.clone(),
                    checkpoint: signal.checkpoint_or_empty().to_string(),
                }),
                _ => None,
            };
            let what = t
                .run
                .pending
                .as_ref()
                .map_or("its entry step".to_string(), |p| p.next.clone());
            t.event.decide(
                Decision::Continue,
                format!("a shell is in front: the next tick dispatches {what}"),
            );
        }
    }
    finish(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::Agent;
    use crate::pane::classify::{Context, Screen, classify};
    use crate::pane::normalize;
    use crate::pane::reset::Zone;
    use crate::pane::rules::RuleSet;
    use crate::supervise::run::{NewRun, StallLimits};
    use chrono::DateTime;
    use proptest::prelude::*;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    fn new_run(mode: Mode) -> Run {
        let new = NewRun {
            session: "s".into(),
            task_dir: "/t".into(),
            target: "s".into(),
            mode,
            agent: crate::pane::Agent::Generic,
            launch_command: Some("agent go".into()),
            command_template: command::DEFAULT_TEMPLATE.into(),
            table: "ai-cli-task".into(),
            max_iterations: 5,
            timeout: Duration::from_secs(600),
            limits: StallLimits {
                threshold: 2,
                recoveries_per_iteration: 2,
                recoveries_total: 3,
                ..StallLimits::default()
            },
        };
        Run::new(&new, at(0))
    }

    const OPTIONS: TickOptions = TickOptions {
        heartbeat: Duration::from_secs(60),
        dry_run: false,
        answers: true,
    };

    fn pane(text: &str, foreground: &str) -> PaneObs {
        let rules = RuleSet::embedded();
        let ctx = Context {
            agent: Agent::Generic,
            now: at(0),
            zone: Zone::Local,
        };
        let screen = Screen::from_text(text, Some(foreground.to_string()));
        PaneObs::Seen(Box::new(PaneView {
            pane_id: "%1".into(),
            foreground: foreground.into(),
            foreground_is_shell: rules.is_shell(foreground),
            hash: normalize::hash(text, &rules.masks),
            classification: classify(&screen, rules, &ctx),
            answered_marker: None,
            messages: None,
        }))
    }

    #[test]
    fn a_shell_in_front_is_ready_only_with_its_prompt_on_the_screen() {
        let rules = RuleSet::embedded();
        let view = |text: &str| {
            let ctx = Context {
                agent: Agent::Claude,
                now: at(0),
                zone: Zone::Local,
            };
            let screen = Screen::from_text(text, Some("bash".to_string()));
            PaneView {
                pane_id: "%1".into(),
                foreground: "bash".into(),
                foreground_is_shell: true,
                hash: normalize::hash(text, &rules.masks),
                classification: classify(&screen, rules, &ctx),
                answered_marker: None,
                messages: None,
            }
        };
        assert!(view("✓ report → (done)\n$ ").shell_ready());
        for busy in ["$ cat <<EOF\n> ", "$ make\ncompiling 3 of 9", "$ echo half"] {
            assert!(!view(busy).shell_ready(), "{busy:?}");
        }
    }

    fn working() -> PaneObs {
        pane("● exec: working…\nreading src/lib.rs", "fake-agent")
    }

    fn shell() -> PaneObs {
        pane("✓ report → (done)\n$ ", "bash")
    }

    fn signal(
        step: &str,
        result: &str,
        next: &str,
        iteration: Option<u64>,
        stamp: u32,
    ) -> SignalObs {
        SignalObs::Valid {
            signal: Signal {
                step: step.into(),
                result: result.into(),
                next: next.into(),
                checkpoint: None,
                iteration,
                timestamp: format!("2027-01-15T08:00:{stamp:02}Z"),
            },
            fingerprint: format!("{step}-{result}-{next}-{stamp}"),
        }
    }

    fn obs(signal: SignalObs, pane: PaneObs) -> Observation {
        Observation {
            task_dir: true,
            signal,
            stop: StopObs::None,
            pane,
            entry: None,
            status: None,
            quota_wait: None,
            notes: Vec::new(),
        }
    }

    /// Tick once a minute, feeding the outcome's row back in.
    fn step(run: &mut Run, obs: &Observation, minute: i64) -> Outcome {
        let outcome = decide(run, obs, at(minute * 60), &OPTIONS);
        *run = outcome.run.clone();
        outcome
    }

    fn stop_reason(outcome: &Outcome) -> Option<&str> {
        outcome.effects.iter().find_map(|e| match e {
            Effect::WriteStop { reason, .. } => Some(reason.as_str()),
            _ => None,
        })
    }

    fn status_at(minute: i64) -> Option<StatusMark> {
        Some(StatusMark {
            updated_at: format!("seen-at-{minute}"),
            at: at(minute * 60),
        })
    }

    #[test]
    fn a_step_timeout_on_an_idle_agent_sends_a_guarded_continuation() {
        let idle = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/panes/claude-code/idle-after-reply.txt"
        ))
        .unwrap();
        let mut run = new_run(Mode::Observe);
        run.limits.step_timeout = Duration::from_secs(5 * 60);
        let mut o = obs(SignalObs::Missing, pane(&idle, "claude"));
        o.status = status_at(0);
        let PaneObs::Seen(view) = &o.pane else {
            unreachable!()
        };
        assert_eq!(view.classification.class, Class::Idle, "{view:?}");
        for minute in 1..6 {
            let outcome = step(&mut run, &o, minute);
            assert!(
                outcome.effects.is_empty(),
                "minute {minute}: {:?}",
                outcome.event
            );
        }
        let outcome = step(&mut run, &o, 6);
        assert_eq!(
            outcome.event.decision,
            Decision::Answer,
            "{:?}",
            outcome.event
        );
        match outcome.effects.first() {
            Some(Effect::Send {
                keys,
                answered: Some(_),
                if_unchanged,
            }) => {
                assert_eq!(keys[0], Key::Text(CONTINUATION.into()));
                assert_eq!(if_unchanged.as_deref(), Some("seen-at-0"));
            }
            other => panic!("{other:?}"),
        }
        // A recorded quota wait is a wait: nothing is sent and the timeout clock pauses.
        let mut run = new_run(Mode::Observe);
        run.limits.step_timeout = Duration::from_secs(60);
        o.quota_wait = Some("quota: a rate_limit wait".into());
        o.notes = vec!["cannot read .status.json; no step timeout this tick".into()];
        for minute in 1..4 {
            let outcome = step(&mut run, &o, minute);
            assert_eq!(
                outcome.event.decision,
                Decision::Wait,
                "{:?}",
                outcome.event
            );
            assert!(outcome.effects.is_empty());
            assert!(
                outcome
                    .event
                    .reasons
                    .iter()
                    .any(|r| r.contains("cannot read"))
            );
        }
        assert!(run.stall.quota_wait_since.is_some());
    }

    #[test]
    fn a_new_signal_moves_the_counters_once() {
        let mut run = new_run(Mode::Observe);
        let o = obs(
            signal("plan", "(generated)", "check", Some(1), 1),
            working(),
        );
        let first = step(&mut run, &o, 1);
        assert_eq!(first.event.saw.as_ref().unwrap().signal.state, "new");
        assert_eq!(run.iteration_count, 1);
        assert_eq!(run.last_signal_at, Some(at(60)));
        let again = step(&mut run, &o, 2);
        assert_eq!(again.event.saw.as_ref().unwrap().signal.state, "seen");
        assert_eq!((run.iteration_count, run.signals_seen), (1, 1));
        assert_eq!(run.last_signal_at, Some(at(60)));
        assert_eq!(run.current_step(), Some("check"));
    }

    #[test]
    fn signals_without_an_iteration_are_counted() {
        let mut run = new_run(Mode::Observe);
        for (i, (s, r, n)) in [("plan", "(generated)", "check"), ("check", "PASS", "exec")]
            .into_iter()
            .enumerate()
        {
            step(
                &mut run,
                &obs(signal(s, r, n, None, i as u32), working()),
                i as i64,
            );
        }
        assert_eq!(run.iteration_count, 2);
    }

    #[test]
    fn an_invalid_signal_is_reported_not_fatal() {
        let mut run = new_run(Mode::Observe);
        let out = step(
            &mut run,
            &obs(SignalObs::Invalid("/step: bogus".into()), working()),
            1,
        );
        assert_eq!(run.status, Status::Running);
        assert!(out.event.reasons[0].contains("invalid .auto-signal"));
    }

    #[test]
    fn a_stop_signal_finishes_and_dispatch_mode_cleans_up() {
        for mode in [Mode::Observe, Mode::Dispatch] {
            let mut run = new_run(mode);
            let out = step(
                &mut run,
                &obs(signal("report", "(done)", "(stop)", Some(4), 1), working()),
                1,
            );
            assert_eq!(out.event.decision, Decision::Finish);
            assert_eq!(run.status, Status::Finished);
            let cleans = out
                .effects
                .iter()
                .any(|e| matches!(e, Effect::RemoveSignal { .. }));
            assert_eq!(cleans, mode == Mode::Dispatch, "{mode:?}");
        }
    }

    #[test]
    fn observe_mode_reads_a_removed_signal_as_the_loop_exiting() {
        let mut run = new_run(Mode::Observe);
        step(
            &mut run,
            &obs(signal("merge", "success", "report", Some(3), 1), working()),
            1,
        );
        let out = step(&mut run, &obs(SignalObs::Missing, working()), 2);
        assert_eq!(out.event.decision, Decision::Finish);
        assert_eq!(run.stop_reason.as_deref(), Some("complete"));
    }

    #[test]
    fn max_iterations_writes_a_stop_file() {
        let mut run = new_run(Mode::Observe);
        let out = step(
            &mut run,
            &obs(signal("exec", "(done)", "check", Some(5), 1), working()),
            1,
        );
        assert_eq!(stop_reason(&out), Some("max_iterations"));
        assert_eq!(run.status, Status::Stopped);
        assert_eq!(out.event.decision, Decision::Stop);
    }

    #[test]
    fn the_timeout_fires_and_quota_waits_do_not_count() {
        let quota = pane(
            &format!("Claude AI usage limit reached|{}", at(3600).timestamp()),
            "fake-agent",
        );
        let mut run = new_run(Mode::Observe);
        // Five minutes of work, a twenty-minute quota wait, then work again: the ten-minute
        // timeout fires at minute 30, not at minute 10.
        for minute in 0..6 {
            step(&mut run, &obs(SignalObs::Missing, working()), minute);
        }
        for minute in 6..26 {
            let out = step(&mut run, &obs(SignalObs::Missing, quota.clone()), minute);
            assert_eq!(out.event.decision, Decision::Wait, "minute {minute}");
            assert!(out.event.run.quota_waiting);
        }
        for minute in 26..30 {
            let out = step(&mut run, &obs(SignalObs::Missing, working()), minute);
            assert_eq!(
                run.status,
                Status::Running,
                "minute {minute}: {:?}",
                out.event.reasons
            );
        }
        assert_eq!(run.quota_waited(at(1800)), Duration::from_secs(20 * 60));
        let out = step(&mut run, &obs(SignalObs::Missing, working()), 30);
        assert_eq!(
            stop_reason(&out),
            Some("timeout"),
            "{:?}",
            out.event.reasons
        );
        assert_eq!(run.elapsed(at(30 * 60)), Duration::from_secs(10 * 60));
    }

    #[test]
    fn a_gone_pane_or_task_dir_loses_the_run_and_an_unreachable_tmux_does_not() {
        let mut run = new_run(Mode::Observe);
        let out = step(
            &mut run,
            &obs(SignalObs::Missing, PaneObs::Gone("can't find pane".into())),
            1,
        );
        assert_eq!(
            (out.event.decision, run.status),
            (Decision::Lost, Status::Lost)
        );

        let mut run = new_run(Mode::Observe);
        let mut o = obs(SignalObs::Missing, working());
        o.task_dir = false;
        step(&mut run, &o, 1);
        assert_eq!(run.stop_reason.as_deref(), Some("task_dir_gone"));

        let mut run = new_run(Mode::Observe);
        let out = step(
            &mut run,
            &obs(
                SignalObs::Missing,
                PaneObs::Unavailable("no tmux server running".into()),
            ),
            1,
        );
        assert_eq!(
            (out.event.decision, run.status),
            (Decision::Error, Status::Running)
        );
    }

    #[test]
    fn a_stop_file_someone_else_wrote_ends_the_run_with_its_reason() {
        let mut run = new_run(Mode::Observe);
        let mut o = obs(SignalObs::Missing, working());
        o.stop = StopObs::Requested("user_stop".into());
        let out = step(&mut run, &o, 1);
        assert_eq!(out.event.decision, Decision::Stop);
        assert_eq!(run.stop_reason.as_deref(), Some("user_stop"));
        assert!(out.effects.is_empty(), "the file is the agent's to consume");
    }

    #[test]
    fn a_shell_in_front_on_two_heartbeats_is_an_exit() {
        let mut run = new_run(Mode::Observe);
        let out = step(&mut run, &obs(SignalObs::Missing, shell()), 1);
        assert_eq!(run.status, Status::Running, "{:?}", out.event.reasons);
        // A second tick at the same moment is not a second heartbeat.
        let same = decide(&run, &obs(SignalObs::Missing, shell()), at(60), &OPTIONS);
        assert_eq!(same.run.status, Status::Running);
        let out = step(&mut run, &obs(SignalObs::Missing, shell()), 2);
        assert_eq!(
            (out.event.decision, run.status),
            (Decision::Exit, Status::Exited)
        );
    }

    #[test]
    fn a_safe_prompt_is_answered_at_the_threshold_and_a_destructive_one_escalated() {
        let safe = pane("Install left-pad before continuing? [y/N] ", "fake-agent");
        let mut run = new_run(Mode::Observe);
        let decisions: Vec<Decision> = (1..=3)
            .map(|m| {
                step(&mut run, &obs(SignalObs::Missing, safe.clone()), m)
                    .event
                    .decision
            })
            .collect();
        assert_eq!(
            decisions,
            [Decision::Continue, Decision::Continue, Decision::Answer]
        );
        assert_eq!(run.stall.recoveries_total, 1);

        let danger = pane(
            "I want to run: rm -rf ./build\nRun rm -rf ./build now? [y/N] ",
            "fake-agent",
        );
        let mut run = new_run(Mode::Observe);
        let outs: Vec<Outcome> = (1..=4)
            .map(|m| step(&mut run, &obs(SignalObs::Missing, danger.clone()), m))
            .collect();
        assert_eq!(
            outs[2].event.decision,
            Decision::Escalate,
            "{:?}",
            outs[2].event.reasons
        );
        assert!(outs[2].event.reasons[0].contains("destructive"));
        assert!(
            outs.iter().all(|o| o.effects.is_empty()),
            "nothing is ever typed"
        );
        assert_eq!(
            outs[3].event.decision,
            Decision::Continue,
            "escalated once per screen"
        );
    }

    #[test]
    fn a_dry_run_plans_an_answer_but_spends_nothing() {
        let safe = pane("Install left-pad before continuing? [y/N] ", "fake-agent");
        let mut run = new_run(Mode::Observe);
        step(&mut run, &obs(SignalObs::Missing, safe.clone()), 1);
        step(&mut run, &obs(SignalObs::Missing, safe.clone()), 2);
        let dry = TickOptions {
            dry_run: true,
            ..OPTIONS
        };
        let out = decide(&run, &obs(SignalObs::Missing, safe), at(180), &dry);
        assert!(matches!(out.effects.first(), Some(Effect::Send { .. })));
        assert_eq!(out.run.stall.recoveries_total, 0);
    }

    #[test]
    fn dispatch_types_the_entry_step_then_each_next_step_when_the_shell_is_ready() {
        let mut run = new_run(Mode::Dispatch);
        let mut o = obs(SignalObs::Missing, working());
        o.entry = Some(Ok(Step {
            next: "plan".into(),
            checkpoint: String::new(),
        }));
        let out = step(&mut run, &o, 1);
        assert_eq!(
            out.event.decision,
            Decision::Wait,
            "not ready: {:?}",
            out.event.reasons
        );
        o.pane = shell();
        let out = step(&mut run, &o, 2);
        assert_eq!(out.event.decision, Decision::Dispatch);
        assert_eq!(
            out.effects[0],
            Effect::Send {
                keys: vec![
                    Key::Text(r#"claude "/ai-cli-task plan /t""#.into()),
                    Key::Key("Enter".into())
                ],
                answered: None,
                if_unchanged: None,
            }
        );
        // The step runs; then its signal arrives and the shell is back.
        step(&mut run, &obs(SignalObs::Missing, working()), 3);
        let o = obs(signal("plan", "(generated)", "check", None, 4), shell());
        let out = step(&mut run, &o, 4);
        assert_eq!(out.event.decision, Decision::Dispatch);
        assert!(
            matches!(&out.effects[0], Effect::Send { keys, .. } if keys[0] == Key::Text(r#"claude "/ai-cli-task check /t""#.into()))
        );
        assert!(
            matches!(&out.effects[1], Effect::RemoveSignal { fingerprint } if fingerprint == "plan-(generated)-check-4")
        );
        assert_eq!(run.iteration_count, 1);
        assert_eq!(run.dispatch_count, 2);
    }

    #[test]
    fn a_dispatched_step_that_dies_without_a_signal_ends_the_run() {
        let mut run = new_run(Mode::Dispatch);
        run.dispatched = Some(Step {
            next: "exec".into(),
            checkpoint: String::new(),
        });
        step(&mut run, &obs(SignalObs::Missing, shell()), 1);
        assert_eq!(run.status, Status::Running);
        let out = step(&mut run, &obs(SignalObs::Missing, shell()), 2);
        assert_eq!(out.event.decision, Decision::Exit);
    }

    #[test]
    fn recovery_relaunches_removes_a_stale_stop_and_resets_the_baseline() {
        let mut run = new_run(Mode::Observe);
        run.stall.last_hash = Some("old".into());
        run.stall.unchanged = 2;
        let mut o = obs(SignalObs::Missing, shell());
        o.stop = StopObs::Requested("timeout".into());
        let out = recover(&run, &o, at(60), &OPTIONS);
        assert_eq!(out.event.decision, Decision::Relaunch);
        assert_eq!(out.effects[0], Effect::RemoveStop);
        assert!(
            matches!(&out.effects[1], Effect::Send { keys, .. } if keys[0] == Key::Text("agent go".into()))
        );
        assert_eq!(
            (out.run.stall.last_hash.clone(), out.run.stall.unchanged),
            (None, 0)
        );

        let alive = recover(&run, &obs(SignalObs::Missing, working()), at(60), &OPTIONS);
        assert_eq!(alive.event.decision, Decision::Continue);
        assert!(alive.effects.is_empty());
        let gone = recover(
            &run,
            &obs(SignalObs::Missing, PaneObs::Gone("x".into())),
            at(60),
            &OPTIONS,
        );
        assert_eq!(gone.run.status, Status::Lost);
        // A lost run's stale stop goes too.
        let mut gone_with_stop = obs(SignalObs::Missing, PaneObs::Gone("x".into()));
        gone_with_stop.stop = StopObs::Requested("timeout".into());
        let gone = recover(&run, &gone_with_stop, at(60), &OPTIONS);
        assert_eq!(gone.run.status, Status::Lost);
        assert!(
            gone.effects.contains(&Effect::RemoveStop),
            "{:?}",
            gone.effects
        );
    }

    #[test]
    fn recovery_in_dispatch_mode_types_the_resume_point_again() {
        let mut run = new_run(Mode::Dispatch);
        run.dispatched = Some(Step {
            next: "exec".into(),
            checkpoint: String::new(),
        });
        let o = obs(signal("check", "PASS", "exec", None, 3), shell());
        let out = recover(&run, &o, at(60), &OPTIONS);
        assert_eq!(out.run.dispatched, None);
        assert_eq!(
            out.run.pending.as_ref().map(|p| p.next.as_str()),
            Some("exec")
        );
        // The next tick types it without counting the old signal again.
        let mut run = out.run;
        run.last_signal = Some(SeenSignal {
            fingerprint: "check-PASS-exec-3".into(),
            step: "check".into(),
            result: "PASS".into(),
            next: "exec".into(),
            checkpoint: String::new(),
            iteration: None,
        });
        let counted = run.signals_seen;
        let tick = step(&mut run, &o, 2);
        assert_eq!(tick.event.decision, Decision::Dispatch);
        assert_eq!(run.signals_seen, counted);
    }

    fn any_obs() -> impl Strategy<Value = Observation> {
        let panes = prop_oneof![
            Just(working()),
            Just(shell()),
            Just(pane("Install left-pad? [y/N] ", "fake-agent")),
            Just(pane("Run rm -rf ./build now? [y/N] ", "fake-agent")),
            Just(pane(
                "Claude AI usage limit reached|1800003600",
                "fake-agent"
            )),
            Just(PaneObs::Unavailable("no server".into())),
        ];
        let signals = prop_oneof![
            Just(SignalObs::Missing),
            Just(SignalObs::Invalid("bad".into())),
            (0u64..8, 0u32..3).prop_map(|(i, s)| signal("exec", "(done)", "check", Some(i), s)),
            Just(signal("report", "(done)", "(stop)", Some(6), 9)),
        ];
        (signals, panes, prop::bool::weighted(0.05)).prop_map(|(signal, pane, stop)| {
            let mut o = obs(signal, pane);
            if stop {
                o.stop = StopObs::Requested("user_stop".into());
            }
            o
        })
    }

    proptest! {
        /// Counters never go back, an ended run stays ended, limits always end the run, and
        /// supervised time never exceeds wall time.
        #[test]
        fn tick_invariants(
            mode in prop_oneof![Just(Mode::Observe), Just(Mode::Dispatch)],
            script in prop::collection::vec((any_obs(), 0i64..120), 1..40),
        ) {
            let mut run = new_run(mode);
            let mut clock = 0i64;
            for (o, gap) in script {
                clock += gap;
                let before = run.clone();
                let out = decide(&before, &o, at(clock), &OPTIONS);
                let after = &out.run;
                prop_assert!(after.iteration_count >= before.iteration_count);
                if before.status.is_active() {
                    prop_assert!(after.ticks == before.ticks + 1);
                } else {
                    prop_assert_eq!(after, &before);
                    prop_assert!(out.effects.is_empty());
                }
                prop_assert!(after.stall.recoveries_total >= before.stall.recoveries_total);
                if !before.status.is_active() {
                    prop_assert_eq!(after.status, before.status);
                }
                if after.status.is_active() {
                    prop_assert!(after.iteration_count < after.max_iterations);
                    prop_assert!(after.elapsed(at(clock)) < after.timeout);
                }
                prop_assert!(after.elapsed(at(clock)) <= between(after.started_at, at(clock)));
                if out.effects.iter().any(|e| matches!(e, Effect::WriteStop { .. })) {
                    prop_assert_eq!(after.status, Status::Stopped);
                }
                run = out.run;
            }
        }
    }
}

//! Stalls: one heartbeat as a pure function, `heartbeat(state, observation, now, limits,
//! effects) -> (state', diagnosis)`, shared by `stall check` and `run tick`.
//!
//! Storage-agnostic on purpose: `stall check` keeps [`StallState`] in a JSON file
//! ([`state_file`]), `run tick` keeps the same fields in its registry row. The observation is
//! a plain struct built from one capture ([`Sample::of`]) plus what the task directory
//! says.
//!
//! One heartbeat looks at every kind of stall, each in its own module:
//! - waits are never stalls: what is a wait is the wait core's ([`crate::supervise::wait`],
//!   handed in as [`Sample::wait`]); during one the count restarts and no recovery is spent.
//!   The paused timeout clock ([`StallState::clock_paused_since`] and its seconds) is the wait core's
//!   too ([`crate::supervise::wait::rule`], called by the driver before the heartbeat):
//!   the heartbeat only reads it;
//! - the unchanged screen ([`screen`], seed 000): `threshold` identical captures make a stall
//!   and the classification decides the recovery;
//! - the reasoning loop ([`reasoning`], seed 002): the same agent message `repeat_limit`
//!   times in a row is a stop with `reasoning_loop`;
//! - the step timeout ([`step_timeout`], seed 002): no `.status.json` update for
//!   `step_timeout` makes the pane stalled whatever its hash says.
//!
//! Recoveries share one budget (`recoveries_per_iteration`, `recoveries_total`; a new signal
//! iteration, or a new `.status.json` update — task-ai's step — restores the per-iteration
//! part); past it the diagnosis is a stop with
//! `stall_limit`. Answering a prompt the approval policy proved harmless is no recovery: it
//! has its own budget, `max_answers` per step (a new signal restores it), and past it the
//! prompt is escalated to a person — a run is never stopped for approving harmless work.
//! A recovery or answer the caller must carry out (typing the keys) is not counted by the
//! heartbeat: the diagnosis carries it as a [`Recovery`], and the caller counts it with
//! [`StallState::recovered`] once the keys were typed — so keys that were never sent spend
//! nothing, and the heartbeat runs once.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub mod reasoning;
pub mod screen;
pub mod state_file;
pub mod step_timeout;

use crate::pane::view::{MessageMark, PaneView};
use crate::pane::{Action, Class};
use crate::protocol::stop::StopReason;
use crate::time::Time;
use reasoning::RepeatState;

/// What one stall monitor remembers between heartbeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallState {
    /// Normalized hash of the last capture.
    #[serde(default)]
    pub last_hash: Option<String>,
    /// Consecutive captures equal to the one before.
    #[serde(default)]
    pub unchanged: u32,
    /// When the current screen was first seen unchanged from: the stall clock.
    #[serde(default, with = "crate::time::stamp::option")]
    pub unchanged_since: Option<Time>,
    #[serde(default)]
    pub recoveries_iteration: u32,
    #[serde(default)]
    pub recoveries_total: u32,
    /// Prompts answered in the current step (a new signal starts a step): not recoveries.
    #[serde(default)]
    pub answers_step: u32,
    /// Prompts answered in all.
    #[serde(default)]
    pub answers_total: u32,
    /// When the timeout clock paused: the open wait's start (a quota, a rate limit, any wait
    /// the wait core pauses the clock for). Stored under the seed's name (`task_auto`'s
    /// `quota_wait_since` column reads it).
    #[serde(
        default,
        rename = "quota_wait_since",
        with = "crate::time::stamp::option"
    )]
    pub clock_paused_since: Option<Time>,
    /// Seconds the timeout clock stood paused in finished waits (it does not count them).
    /// Stored under the seed's name.
    #[serde(default, rename = "quota_waited_seconds")]
    pub clock_paused_seconds: u64,
    /// The signal iteration seen last (or, for signals without one, its timestamp: the
    /// document's text, compared as text, so a rewritten signal is a new one).
    #[serde(default)]
    pub signal_iteration: Option<u64>,
    #[serde(default)]
    pub signal_timestamp: Option<String>,
    /// The screen last answered or restarted (its hash).
    #[serde(default)]
    pub answered_hash: Option<String>,
    /// The prompt last escalated (its key, [`Sample::key`]): escalations are reported once
    /// per prompt, however often it is redrawn.
    #[serde(default)]
    pub escalated_hash: Option<String>,
    /// A stop was requested for the recovery limits (not requested again until the budget
    /// is restored by a new iteration).
    #[serde(default)]
    pub limit_reached: bool,
    #[serde(default)]
    pub checks: u64,
    #[serde(default, with = "crate::time::stamp::option")]
    pub last_check_at: Option<Time>,
    /// The last new agent message (stable hash, 16 hex digits) and how many times in a row it
    /// was said.
    #[serde(default)]
    pub message_hash: Option<String>,
    #[serde(default)]
    pub message_repeats: u32,
    /// Fingerprint of the transcript blocks last seen: a message counts once per new block
    /// list, not once per heartbeat.
    #[serde(default)]
    pub transcript: Option<String>,
    /// `.status.json`'s `updated_at` as last seen (or its file's modification time): the
    /// document's text, which `run continue --if-unchanged` compares as text.
    #[serde(default)]
    pub status_updated_at: Option<String>,
    /// When the step clock started: the status update, or the last step-timeout recovery.
    #[serde(default, with = "crate::time::stamp::option")]
    pub step_since: Option<Time>,
    /// `clock_paused_seconds` when the step clock started (waits after it do not count).
    #[serde(default)]
    pub step_waited_base: u64,
    /// The class of the last capture (what the screen showed: `idle`, `permission`, ...).
    #[serde(default)]
    pub screen_class: Option<String>,
    /// The last heartbeat that still saw the screen's previous class: what the
    /// screen shows changed after it. `None` while no other class was seen.
    #[serde(default, with = "crate::time::stamp::option")]
    pub screen_changed_after: Option<Time>,
}

impl StallState {
    /// When the screen began to show `class`, as closely as samples tell: after the returned
    /// time (the last heartbeat that still saw another class) and by the heartbeat that first
    /// saw it. `None`: no other class was ever seen.
    ///
    /// The class, not the hash: Claude Code redraws an idle screen (tips, its status line)
    /// with no hook event, and such a redraw says nothing new about the agent; a menu that
    /// appears, or work that starts, does.
    pub fn screen_changed_after(&self, class: Class) -> Option<DateTime<Utc>> {
        if self.screen_class.as_deref() == Some(class.as_str()) {
            self.screen_changed_after
        } else {
            // A class the last heartbeat did not see appeared after that heartbeat.
            self.last_check_at
        }
    }

    fn repeats(&self) -> RepeatState {
        RepeatState::from_hex(self.message_hash.as_deref(), self.message_repeats)
    }

    /// How long the current step has gone without a status update, quota waits excluded;
    /// `None` before a status was seen.
    pub fn step_elapsed(&self, now: DateTime<Utc>) -> Option<Duration> {
        let since = self.step_since?;
        let closed = self
            .clock_paused_seconds
            .saturating_sub(self.step_waited_base);
        let open = self
            .clock_paused_since
            .map_or(0, |wait| seconds(wait.max(since), now));
        let waited = Duration::from_secs(closed.saturating_add(open));
        Some(Duration::from_secs(seconds(since, now)).saturating_sub(waited))
    }

    /// Count a recovery or an answer the caller carried out (see [`Recovery`]).
    pub fn recovered(&mut self, recovery: &Recovery) {
        match recovery.spend {
            Spend::Answer => {
                self.answers_step = self.answers_step.saturating_add(1);
                self.answers_total = self.answers_total.saturating_add(1);
            }
            Spend::Recovery => {
                self.recoveries_iteration = self.recoveries_iteration.saturating_add(1);
                self.recoveries_total = self.recoveries_total.saturating_add(1);
            }
        }
        self.answered_hash = Some(recovery.hash.clone());
        self.unchanged = 0;
        // The stall clock restarts at the next heartbeat.
        self.unchanged_since = None;
        if let Some(start) = recovery.restarts_step_clock {
            self.restart_step_clock(start);
        }
    }

    fn restart_step_clock(&mut self, start: DateTime<Utc>) {
        self.step_since = Some(start);
        // A wait still open counts in full when it closes; its part before the start is not
        // this step's.
        let before_start = self
            .clock_paused_since
            .map_or(0, |wait| seconds(wait, start));
        self.step_waited_base = self.clock_paused_seconds.saturating_add(before_start);
    }
}

fn seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> u64 {
    (to - from).num_seconds().max(0) as u64
}

/// The identity of the task's latest signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalMark {
    pub iteration: Option<u64>,
    pub timestamp: String,
}

impl SignalMark {
    pub fn of(signal: &crate::protocol::signal::Signal) -> SignalMark {
        SignalMark {
            iteration: signal.iteration,
            timestamp: signal.timestamp.clone(),
        }
    }
}

/// What one capture showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Normalized screen hash.
    pub hash: String,
    /// What a person would be asked to decide ([`PaneView::key`]): a prompt is escalated
    /// once per key, however often it is redrawn.
    pub key: String,
    pub class: Class,
    /// The classification's action (already `escalate` for destructive prompts and `none`
    /// for observe-only screens).
    pub action: Action,
    /// The program in front is not the agent: never acted on.
    pub observe_only: bool,
    /// The screen hash the pane itself remembers as answered (by any supervisor).
    pub answered_marker: Option<String>,
    /// The task's latest signal, when a task is supervised.
    pub signal: Option<SignalMark>,
    /// The agent's messages on screen (Claude Code screens only).
    pub messages: Option<MessageMark>,
    /// `.status.json`'s last update, when the task has one.
    pub status: Option<StatusMark>,
    /// The wait core's open wait that pauses the timeout clock, with why: not a stall. (The
    /// wait core alone decides what is a wait; a wait past its maximum is none.)
    pub wait: Option<String>,
    /// What the agent's typed state (hooks) says about a prompt on the screen.
    pub hint: Hint,
}

/// The typed state's word on the screen's prompt (see [`crate::supervise::channels`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Hint {
    /// No word: the screen alone decides, after the unchanged threshold.
    #[default]
    Screen,
    /// The hooks report the same prompt: decide now, without waiting for the threshold.
    Now,
    /// The hooks and the screen disagree about a prompt: decide now, and never answer it.
    NowNoAnswer,
}

impl Sample {
    /// What a capture shows, with what the task directory says: its latest signal and its
    /// status time; no wait (the caller sets [`Sample::wait`] from the wait core). A dead pane
    /// and a program in front that is not the agent are only observed.
    pub fn of(view: &PaneView, signal: Option<SignalMark>, status: Option<StatusMark>) -> Sample {
        let c = &view.classification;
        Sample {
            hash: view.hash.clone(),
            key: view.key.clone(),
            class: c.class,
            action: c.action,
            observe_only: c.observe_only || view.dead,
            answered_marker: view.answered_marker.clone(),
            signal,
            messages: view.messages.clone(),
            status,
            wait: None,
            hint: Hint::Screen,
        }
    }
}

/// When the task's status last changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusMark {
    /// The value as written (`updated_at`, or the file's modification time): the
    /// compare-and-swap before a continuation compares this text.
    pub updated_at: String,
    pub at: DateTime<Utc>,
}

/// Thresholds and recovery budgets of one monitored pane (seed defaults 3, 3, 10; 3
/// repeats, 10 minutes; 50 answers per step). `run start` stores them in the run; `stall check` takes them as
/// flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Unchanged captures in a row before the screen is examined as a suspected stall.
    pub threshold: u32,
    pub recoveries_per_iteration: u32,
    pub recoveries_total: u32,
    /// Prompts the approval policy proved harmless answered per step; past it a person
    /// decides (the prompt is escalated, the run goes on).
    pub max_answers: u32,
    /// The same agent message this many times in a row is a reasoning loop (0: never).
    pub repeat_limit: u32,
    /// No `.status.json` update for this long is a step timeout.
    pub step_timeout: Duration,
    /// What one heartbeat stands for (`run tick --heartbeat`, seed 60 s). With it, a screen
    /// is stalled once it has stayed unchanged for `threshold` × `period` of elapsed time,
    /// however often ticks come (ticks every 30 s still stall after 3 × 60 s, not 90 s);
    /// without it (`stall check`, whose caller's schedule is the clock) after `threshold`
    /// unchanged captures. A tick option, never stored with the run.
    #[serde(skip)]
    pub period: Option<Duration>,
}

/// Seed defaults.
pub const DEFAULT_THRESHOLD: u32 = 3;
pub const DEFAULT_RECOVERIES_PER_ITERATION: u32 = 3;
pub const DEFAULT_RECOVERIES_TOTAL: u32 = 10;
/// Generous: an agent in manual permission mode asks for every tool call.
pub const DEFAULT_MAX_ANSWERS: u32 = 50;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threshold: DEFAULT_THRESHOLD,
            recoveries_per_iteration: DEFAULT_RECOVERIES_PER_ITERATION,
            recoveries_total: DEFAULT_RECOVERIES_TOTAL,
            max_answers: DEFAULT_MAX_ANSWERS,
            repeat_limit: reasoning::REPEAT_LIMIT,
            step_timeout: step_timeout::STEP_TIMEOUT,
            period: None,
        }
    }
}

impl Limits {
    /// How long a screen must stay unchanged to be stalled, when counted by elapsed time.
    pub fn stall_after(&self) -> Option<Duration> {
        self.period.map(|p| p.saturating_mul(self.threshold))
    }
}

/// Which diagnoses the caller will carry out. A recovery is only spent (and a stop only
/// remembered) when it is carried out, so a dry run never consumes the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effects {
    pub answer: bool,
    pub restart: bool,
    pub stop: bool,
}

/// How the pane is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    /// The screen changed since the last capture.
    Progress,
    /// Unchanged, below the threshold.
    Unchanged,
    /// Unchanged at or past the threshold.
    Stalled,
    /// A quota or rate-limit wait: not a stall.
    Waiting,
    /// A recovery (or an answer) was due but its budget is spent.
    Limit,
    /// The agent said the same thing `repeat_limit` times in a row.
    ReasoningLoop,
}

/// What to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Response {
    None,
    Wait,
    Answer,
    Escalate,
    Restart,
    /// Type the continuation prompt, if `.status.json`'s `updated_at` is still the one seen
    /// (a step timeout on an idle agent).
    Continue,
    /// Request a stop (`.auto-stop` with [`Diagnosis::stop_reason`]).
    Stop,
}

/// A recovery the caller carries out (an answer, a continuation, a restart): counted with
/// [`StallState::recovered`] only once it was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The screen recovered from: never answered twice.
    pub hash: String,
    /// Which budget it spends.
    pub spend: Spend,
    /// A step-timeout recovery restarts the step clock at this time.
    pub restarts_step_clock: Option<DateTime<Utc>>,
}

/// The budget a carried-out [`Recovery`] spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spend {
    /// An answer to a prompt the policy proved harmless: the answer budget (`max_answers`
    /// per step), never a stall recovery.
    Answer,
    /// A stall recovery (a continuation, a restart, an Esc): the recovery budget.
    Recovery,
}

/// The diagnosis of one heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    pub condition: Condition,
    pub response: Response,
    /// The caller will carry the step out (per [`Effects`]). A stop is already counted in
    /// the state; a recovery is counted when the caller reports it done (`recovery`).
    pub perform: bool,
    pub reason: String,
    /// The recovery to count once carried out (with `perform`).
    pub recovery: Option<Recovery>,
}

impl Diagnosis {
    /// The `.auto-stop` reason of a [`Response::Stop`].
    pub fn stop_reason(&self) -> StopReason {
        if self.condition == Condition::ReasoningLoop {
            StopReason::ReasoningLoop
        } else {
            StopReason::StallLimit
        }
    }

    fn new(condition: Condition, response: Response, reason: impl Into<String>) -> Diagnosis {
        Diagnosis {
            condition,
            response,
            perform: false,
            reason: reason.into(),
            recovery: None,
        }
    }
}

/// One heartbeat: count it and the screen's class, follow the task's signal and status (a
/// new step restores its budgets and restarts the step clock), then decide: a wait is not a
/// stall; a reasoning loop, a step timeout, a changed screen or one below the threshold come
/// first; what is left is a stalled screen (`stalled`).
pub fn heartbeat(
    state: &StallState,
    obs: &Sample,
    now: DateTime<Utc>,
    limits: &Limits,
    effects: Effects,
) -> (StallState, Diagnosis) {
    let mut next = state.clone();
    next.checks = next.checks.saturating_add(1);
    next.last_check_at = Some(now);
    if state.screen_class.as_deref() != Some(obs.class.as_str()) {
        next.screen_changed_after = state.last_check_at;
        next.screen_class = Some(obs.class.as_str().to_string());
    }
    if let Some(signal) = &obs.signal {
        follow_signal(&mut next, signal);
    }
    if let Some(status) = &obs.status {
        follow_status(&mut next, status, now);
    }
    if let Some(why) = &obs.wait {
        next.unchanged = 0;
        next.unchanged_since = Some(now);
        next.last_hash = Some(obs.hash.clone());
        return (
            next,
            Diagnosis::new(
                Condition::Waiting,
                Response::Wait,
                format!("{why}: waiting; not a stall"),
            ),
        );
    }
    let changed = count_unchanged(&mut next, &obs.hash, now);
    if let Some(diagnosis) = reasoning::check(&mut next, obs, limits, effects) {
        return (next, diagnosis);
    }
    let timed_out = obs
        .status
        .as_ref()
        .and_then(|_| next.step_elapsed(now))
        .filter(|elapsed| *elapsed >= limits.step_timeout);
    if let Some(elapsed) = timed_out {
        let diagnosis = step_timeout::check(&mut next, obs, limits, effects, elapsed, now);
        return (next, diagnosis);
    }
    let act_now = obs.hint != Hint::Screen
        && matches!(
            obs.action,
            Action::Answer | Action::Escalate | Action::Restart
        );
    if changed && !act_now {
        return (
            next,
            Diagnosis::new(Condition::Progress, Response::None, "the screen changed"),
        );
    }
    if !act_now && let Some(reason) = below_threshold(&next, limits, now) {
        return (
            next,
            Diagnosis::new(Condition::Unchanged, Response::None, reason),
        );
    }
    let diagnosis = stalled(&mut next, obs, limits, effects);
    (next, diagnosis)
}

/// The task's latest signal: a new iteration restores the per-iteration recoveries, and
/// every new signal is a new step whose answer budget starts again. A loop that numbers its
/// iterations is identified by the number; one that does not, by each signal it writes.
fn follow_signal(next: &mut StallState, signal: &SignalMark) {
    let new_iteration = match signal.iteration {
        Some(iteration) => next.signal_iteration != Some(iteration),
        None => {
            next.signal_iteration.is_some()
                || next.signal_timestamp.as_deref() != Some(&signal.timestamp)
        }
    };
    if new_iteration {
        next.recoveries_iteration = 0;
        next.limit_reached = false;
    }
    if new_iteration || next.signal_timestamp.as_deref() != Some(&signal.timestamp) {
        next.answers_step = 0;
    }
    next.signal_iteration = signal.iteration;
    next.signal_timestamp = Some(signal.timestamp.clone());
}

/// The task's status: a new `updated_at` is a new step. The first one a monitor sees starts
/// the step clock now (time before anyone watched is not held against the agent); a later
/// one at its own time, but never before the step it replaces started (an `updated_at`
/// written late or by a skewed clock must not time the new step out at once).
fn follow_status(next: &mut StallState, status: &StatusMark, now: DateTime<Utc>) {
    if next.status_updated_at.as_deref() == Some(status.updated_at.as_str()) {
        return;
    }
    let start = match (&next.status_updated_at, next.step_since) {
        (None, _) => now,
        (Some(_), previous) => status
            .at
            .min(now)
            .max(previous.unwrap_or(status.at).min(now)),
    };
    if next.status_updated_at.is_some() {
        // task-ai (seed 002) counts its recoveries per step, and a module's step is its
        // status update: a new one restores the per-step budget as a new signal
        // iteration does (the total stays spent).
        next.recoveries_iteration = 0;
        next.limit_reached = false;
    }
    next.status_updated_at = Some(status.updated_at.clone());
    next.restart_step_clock(start);
}

/// Count the capture: a new hash starts the unchanged count again, the same one adds to
/// it. Returns whether the screen changed.
fn count_unchanged(next: &mut StallState, hash: &str, now: DateTime<Utc>) -> bool {
    let changed = next.last_hash.as_deref() != Some(hash);
    if changed {
        next.last_hash = Some(hash.to_string());
        next.unchanged = 0;
        next.unchanged_since = Some(now);
    } else {
        next.unchanged = next.unchanged.saturating_add(1);
        if next.unchanged_since.is_none() {
            next.unchanged_since = Some(now);
        }
    }
    changed
}

/// A stalled screen (or a prompt to act on now): another program in front is never typed
/// into (what it still escalates goes to a person); a prompt the hooks do not report is a
/// person's; otherwise the screen's action: nothing, escalate once, or recover.
fn stalled(next: &mut StallState, obs: &Sample, limits: &Limits, effects: Effects) -> Diagnosis {
    if obs.observe_only && obs.action != Action::Escalate {
        return Diagnosis::new(
            Condition::Stalled,
            Response::None,
            "stalled, but the program in front is not the agent: observed, never typed into",
        );
    }
    match obs.action {
        Action::None | Action::Wait => Diagnosis::new(
            Condition::Stalled,
            Response::None,
            format!(
                "stalled on a {} screen; no recovery applies",
                obs.class.as_str()
            ),
        ),
        Action::Escalate => screen::escalate_once(next, &obs.key, "a person must decide"),
        Action::Answer | Action::Restart if obs.hint == Hint::NowNoAnswer => screen::escalate_once(
            next,
            &obs.key,
            "the agent's hooks do not report this prompt: never answered, a person decides",
        ),
        Action::Answer | Action::Restart => screen::recover(next, obs, limits, effects, ""),
    }
}

/// Why an unchanged screen is not stalled yet, or `None` when it is: by elapsed time when
/// the limits have a period, else by the count of captures.
fn below_threshold(state: &StallState, limits: &Limits, now: DateTime<Utc>) -> Option<String> {
    match limits.stall_after() {
        Some(after) => {
            let Some(since) = state.unchanged_since else {
                return Some("the stall clock starts now".to_string());
            };
            // A clock that went back counts as no time: never a stall early.
            let unchanged = crate::time::between(since, now);
            (unchanged < after).then(|| {
                format!(
                    "unchanged for {} of {} ({} × {})",
                    crate::duration::format(unchanged),
                    crate::duration::format(after),
                    limits.threshold,
                    crate::duration::format(limits.period.unwrap_or_default())
                )
            })
        }
        None => (state.unchanged < limits.threshold).then(|| {
            format!(
                "unchanged {} of {} captures",
                state.unchanged, limits.threshold
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasoning-loop regression of issue 17: a Stop-hook loop prints `● Ran 1 stop hook`
    /// after every model message; three heartbeats, each after a new and different message
    /// followed by that line, are never a reasoning loop.
    #[test]
    fn stop_hook_lines_after_different_messages_are_no_reasoning_loop() {
        let messages = [
            "I read the parser and found the off-by-one in the tokenizer.",
            "Fixed the tokenizer bound; the unit tests pass now.",
            "Added a regression test for a trailing backslash.",
        ];
        let hook = "● Ran 1 stop hook (ctrl+o to expand)\n  ⎿  Stop hook reported a problem\n     Continue: do the next step.\n\n";
        let mut state = StallState::default();
        let mut screen = String::from("❯ Work through the plan\n\n");
        for (i, message) in messages.iter().enumerate() {
            screen.push_str(&format!("● {message}\n\n{hook}"));
            let shown =
                format!("{screen}✻ Cooked for 1s\n\n────────\n❯ \n────────\n  ? for shortcuts\n");
            let marks = MessageMark::of(&crate::pane::message::claude(&shown));
            let obs = Sample {
                hash: format!("h{i}"),
                key: format!("h{i}"),
                class: Class::Working,
                action: Action::None,
                observe_only: false,
                answered_marker: None,
                signal: None,
                messages: Some(marks),
                status: None,
                wait: None,
                hint: Hint::Screen,
            };
            let (next, diagnosis) = heartbeat(
                &state,
                &obs,
                DateTime::from_timestamp(1_800_000_000 + i as i64 * 60, 0).unwrap(),
                &Limits::default(),
                Effects::default(),
            );
            assert_ne!(
                diagnosis.condition,
                Condition::ReasoningLoop,
                "{diagnosis:?}"
            );
            assert_eq!(next.message_repeats, 1, "each message is new");
            state = next;
        }
    }

    /// Issue 29's false `reasoning_loop`: a model that writes the same preamble before each
    /// of several different calls, each call waiting for a person at a permission prompt.
    /// Neither the preamble (different calls follow each copy), nor Claude Code's summary of
    /// the pending call, nor any screen while the prompt waits is a loop.
    #[test]
    fn the_same_preamble_before_different_prompted_calls_is_no_reasoning_loop() {
        let preamble = "I'll run the next step.";
        let mut state = StallState::default();
        let mut screen = String::from("❯ Clean up\n\n");
        let mut at = 0;
        let mut beat = |state: &mut StallState, shown: &str, class: Class, action: Action| {
            at += 1;
            let obs = Sample {
                hash: format!("h{at}"),
                key: format!("h{at}"),
                class,
                action,
                observe_only: false,
                answered_marker: None,
                signal: None,
                messages: Some(MessageMark::of(&crate::pane::message::claude(shown))),
                status: None,
                wait: None,
                hint: Hint::Screen,
            };
            let (next, diagnosis) = heartbeat(
                state,
                &obs,
                DateTime::from_timestamp(1_800_000_000 + at * 20, 0).unwrap(),
                &Limits::default(),
                ALL,
            );
            assert_ne!(
                diagnosis.condition,
                Condition::ReasoningLoop,
                "{shown}\n{diagnosis:?}"
            );
            *state = next;
        };
        for i in 0..6 {
            // The preamble has streamed, its call not drawn yet: the agent's latest word.
            screen.push_str(&format!("● {preamble}\n\n"));
            beat(&mut state, &screen, Class::Working, Action::None);
            // The call waits for a person, under Claude Code's summary line or as itself.
            let pending = if i % 2 == 0 {
                "● Running 1 shell command… (ctrl+o to expand)\n\n".to_string()
            } else {
                format!("● Bash(rm -rf dir{i})\n  ⎿  Waiting…\n\n")
            };
            let prompt = format!(
                "{screen}{pending}────────\n Bash command\n rm -rf dir{i}\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n"
            );
            for _ in 0..3 {
                beat(&mut state, &prompt, Class::Permission, Action::Escalate);
            }
            screen.push_str(&format!("● Bash(rm -rf dir{i})\n  ⎿  Done\n\n"));
            beat(&mut state, &screen, Class::Working, Action::None);
        }
        assert!(state.message_repeats <= 2, "{state:?}");
        // The same words before the same call, again and again, still are a loop.
        let mut state = StallState::default();
        let mut screen = String::from("❯ Fix the test\n\n");
        let mut looped = false;
        for i in 0..4 {
            screen.push_str("● Let me check the tests.\n\n");
            let obs = Sample {
                hash: format!("l{i}"),
                key: format!("l{i}"),
                class: Class::Working,
                action: Action::None,
                observe_only: false,
                answered_marker: None,
                signal: None,
                messages: Some(MessageMark::of(&crate::pane::message::claude(&screen))),
                status: None,
                wait: None,
                hint: Hint::Screen,
            };
            let (next, diagnosis) = heartbeat(
                &state,
                &obs,
                DateTime::from_timestamp(1_800_000_000 + i * 60, 0).unwrap(),
                &Limits::default(),
                ALL,
            );
            looped |= diagnosis.condition == Condition::ReasoningLoop;
            state = next;
            screen.push_str("● Bash(cargo test)\n  ⎿  test result: FAILED\n\n");
        }
        assert!(looped, "{state:?}");
    }
    use chrono::Duration;
    use proptest::prelude::*;

    const ALL: Effects = Effects {
        answer: true,
        restart: true,
        stop: true,
    };

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn obs(hash: &str, class: Class, action: Action) -> Sample {
        Sample {
            hash: hash.to_string(),
            key: hash.to_string(),
            class,
            action,
            observe_only: false,
            answered_marker: None,
            signal: None,
            messages: None,
            status: None,
            // A quota or rate-limit screen is a wait here, as the wait core would say.
            wait: (action == Action::Wait).then(|| class.as_str().to_string()),
            hint: Hint::Screen,
        }
    }

    fn run(
        state: &mut StallState,
        o: &Sample,
        minute: i64,
        limits: &Limits,
        effects: Effects,
    ) -> Diagnosis {
        let now = t0() + Duration::minutes(minute);
        // The driver's order: the wait core's clock first, then the heartbeat.
        crate::supervise::wait::settle_clock(
            &mut state.clock_paused_since,
            &mut state.clock_paused_seconds,
            o.wait.is_some(),
            None,
            now,
        );
        let (mut next, diagnosis) = heartbeat(state, o, now, limits, effects);
        // The caller carries every recovery out.
        if let Some(recovery) = &diagnosis.recovery {
            next.recovered(recovery);
        }
        *state = next;
        diagnosis
    }

    #[test]
    fn the_screen_changed_after_the_last_heartbeat_that_saw_the_old_class() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let idle = obs("idle", Class::Idle, Action::None);
        let menu = obs("menu", Class::Permission, Action::Answer);
        assert_eq!(
            state.screen_changed_after(Class::Idle),
            None,
            "nothing seen yet"
        );
        run(&mut state, &idle, 0, &limits, Effects::default());
        run(&mut state, &idle, 1, &limits, Effects::default());
        assert_eq!(
            state.screen_changed_after(Class::Idle),
            None,
            "no other class seen"
        );
        // An idle screen redrawn (a tip, the status line): no change of what it shows.
        run(
            &mut state,
            &obs("idle, redrawn", Class::Idle, Action::None),
            2,
            &limits,
            Effects::default(),
        );
        assert_eq!(state.screen_changed_after(Class::Idle), None);
        // A class the last heartbeat did not see appeared after it.
        assert_eq!(
            state.screen_changed_after(Class::Permission),
            Some(t0() + Duration::minutes(2))
        );
        // Once seen, the bound stays the same however many heartbeats the class stays.
        for minute in 3..7 {
            run(&mut state, &menu, minute, &limits, Effects::default());
            assert_eq!(
                state.screen_changed_after(Class::Permission),
                Some(t0() + Duration::minutes(2)),
                "minute {minute}"
            );
        }
        run(&mut state, &idle, 7, &limits, Effects::default());
        assert_eq!(
            state.screen_changed_after(Class::Idle),
            Some(t0() + Duration::minutes(6))
        );
    }

    #[test]
    fn three_unchanged_captures_make_a_stall_and_the_prompt_is_answered() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let prompt = obs("h1", Class::Permission, Action::Answer);
        let steps: Vec<(Condition, Response)> = (0..4)
            .map(|m| {
                let d = run(&mut state, &prompt, m, &limits, ALL);
                (d.condition, d.response)
            })
            .collect();
        assert_eq!(
            steps,
            vec![
                (Condition::Progress, Response::None),
                (Condition::Unchanged, Response::None),
                (Condition::Unchanged, Response::None),
                (Condition::Stalled, Response::Answer),
            ]
        );
        // An answer to a harmless prompt is not a stall recovery: it spends the answers.
        assert_eq!((state.recoveries_iteration, state.recoveries_total), (0, 0));
        assert_eq!((state.answers_step, state.answers_total), (1, 1));
        assert_eq!(state.unchanged, 0);
        // The same screen again (the answer did not take): escalate once, then stay quiet.
        for m in 4..6 {
            run(&mut state, &prompt, m, &limits, ALL);
        }
        let d = run(&mut state, &prompt, 6, &limits, ALL);
        assert_eq!(d.response, Response::Escalate, "{}", d.reason);
        let d = run(&mut state, &prompt, 7, &limits, ALL);
        assert_eq!(d.response, Response::None);
        assert_eq!(state.answers_total, 1);
    }

    #[test]
    fn a_dry_run_spends_nothing() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let prompt = obs("h1", Class::YesNo, Action::Answer);
        for m in 0..10 {
            let d = run(&mut state, &prompt, m, &limits, Effects::default());
            assert!(!d.perform);
        }
        assert_eq!(state.recoveries_total, 0);
        assert_eq!(state.unchanged, 9);
    }

    /// Issue 15 item 3: ticks every 30 s with the seed's 60 s heartbeat stall after 3 × 60 s,
    /// not after three ticks (90 s).
    #[test]
    fn ticks_every_30s_stall_after_three_minutes_not_90s() {
        let limits = Limits {
            period: Some(std::time::Duration::from_secs(60)),
            ..Limits::default()
        };
        let prompt = obs("h", Class::Permission, Action::Answer);
        let mut state = StallState::default();
        let mut stalled_at = None;
        for tick in 0..10 {
            let now = t0() + Duration::seconds(tick * 30);
            let (next, d) = heartbeat(&state, &prompt, now, &limits, ALL);
            if d.condition == Condition::Stalled && stalled_at.is_none() {
                stalled_at = Some(tick * 30);
            }
            state = next;
        }
        assert_eq!(stalled_at, Some(180));
        // Without a period (`stall check`): three unchanged captures, whatever their spacing.
        let mut state = StallState::default();
        let mut captures = 0;
        loop {
            let (next, d) = heartbeat(&state, &prompt, t0(), &Limits::default(), ALL);
            state = next;
            if d.condition == Condition::Stalled {
                break;
            }
            captures += 1;
        }
        assert_eq!(captures, 3);
    }

    #[test]
    fn the_pane_marker_prevents_answering_what_another_supervisor_answered() {
        let limits = Limits {
            threshold: 1,
            ..Limits::default()
        };
        let mut state = StallState {
            last_hash: Some("h".into()),
            ..StallState::default()
        };
        let mut prompt = obs("h", Class::YesNo, Action::Answer);
        prompt.answered_marker = Some("h".into());
        let d = run(&mut state, &prompt, 0, &limits, ALL);
        assert_eq!(d.response, Response::Escalate);
        assert_eq!(state.recoveries_total, 0);
    }

    /// Issue 12: in manual permission mode every tool call is a prompt. Answering harmless
    /// prompts never spends a stall recovery and never stops the run; past `max_answers` in
    /// one step the prompt is escalated to a person, and the next step has the budget again.
    #[test]
    fn harmless_answers_have_their_own_budget_per_step_and_never_stop_the_run() {
        let limits = Limits {
            threshold: 1,
            max_answers: 5,
            ..Limits::default()
        };
        let mut state = StallState::default();
        let mut minute = 0;
        let mut prompt = |state: &mut StallState, step: u64, n: u32| {
            let mut o = obs(&format!("s{step}p{n}"), Class::Permission, Action::Answer);
            o.signal = Some(SignalMark {
                iteration: Some(0),
                timestamp: format!("step {step}"),
            });
            run(state, &o, minute, &limits, ALL);
            let d = run(state, &o, minute + 1, &limits, ALL);
            minute += 2;
            d
        };
        // Far more than the 3 recoveries of an iteration: five answers, then a person.
        for n in 0..5 {
            let d = prompt(&mut state, 0, n);
            assert_eq!(d.response, Response::Answer, "{n}: {}", d.reason);
        }
        assert_eq!((state.recoveries_iteration, state.recoveries_total), (0, 0));
        let d = prompt(&mut state, 0, 5);
        assert_eq!(
            (d.condition, d.response),
            (Condition::Limit, Response::Escalate),
            "{}",
            d.reason
        );
        assert!(d.reason.contains("answer limit reached (5 of 5 this step)"));
        assert!(!state.limit_reached, "no stop was requested");
        // A new signal (the next step, same iteration) restores the answer budget.
        for n in 0..5 {
            let d = prompt(&mut state, 1, n);
            assert_eq!(d.response, Response::Answer, "{n}: {}", d.reason);
        }
        assert_eq!((state.answers_step, state.answers_total), (5, 10));
        assert_eq!(state.recoveries_total, 0);
    }

    #[test]
    fn limits_fire_and_a_new_iteration_restores_the_per_iteration_budget() {
        let limits = Limits {
            threshold: 1,
            recoveries_per_iteration: 2,
            recoveries_total: 3,
            ..Limits::default()
        };
        let mut state = StallState::default();
        let mut minute = 0;
        let mut restarts = 0;
        let mut stops = 0;
        for iteration in 0..3u64 {
            for screen in 0..4 {
                let mut o = obs(
                    &format!("i{iteration}s{screen}"),
                    Class::Shell,
                    Action::Restart,
                );
                o.signal = Some(SignalMark {
                    iteration: Some(iteration),
                    timestamp: format!("t{iteration}"),
                });
                // Two captures per screen: the first is progress, the second a stall.
                run(&mut state, &o, minute, &limits, ALL);
                let d = run(&mut state, &o, minute + 1, &limits, ALL);
                minute += 2;
                match d.response {
                    Response::Restart => restarts += 1,
                    Response::Stop => stops += 1,
                    _ => {}
                }
            }
        }
        assert_eq!(restarts, 3, "the total budget");
        assert_eq!(state.recoveries_total, 3);
        assert!(stops >= 2, "a stop per iteration once the budget is gone");
    }

    #[test]
    fn quota_waits_pause_and_are_accounted() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let quota = obs("q", Class::Quota, Action::Wait);
        for m in 0..5 {
            let d = run(&mut state, &quota, m, &limits, ALL);
            assert_eq!(
                (d.condition, d.response),
                (Condition::Waiting, Response::Wait)
            );
        }
        assert_eq!(
            state.clock_paused_since,
            crate::time::parse_time("2026-01-01T00:00:00Z")
        );
        assert_eq!(state.unchanged, 0);
        run(
            &mut state,
            &obs("after", Class::Idle, Action::None),
            30,
            &limits,
            ALL,
        );
        assert_eq!(state.clock_paused_since, None);
        assert_eq!(state.clock_paused_seconds, 30 * 60);
    }

    #[test]
    fn observe_only_screens_stall_but_are_never_acted_on() {
        let limits = Limits {
            threshold: 1,
            ..Limits::default()
        };
        let mut state = StallState::default();
        let mut o = obs("c", Class::YesNo, Action::None);
        o.observe_only = true;
        run(&mut state, &o, 0, &limits, ALL);
        let d = run(&mut state, &o, 1, &limits, ALL);
        assert_eq!(
            (d.condition, d.response),
            (Condition::Stalled, Response::None)
        );
    }

    fn said(blocks: &[&str]) -> MessageMark {
        let screen: String = blocks.iter().map(|b| format!("● {b}\n\n")).collect();
        MessageMark::of(&crate::pane::message::claude(&screen))
    }

    fn status(at_minute: i64) -> StatusMark {
        let at = t0() + Duration::minutes(at_minute);
        StatusMark {
            updated_at: at.to_rfc3339(),
            at,
        }
    }

    #[test]
    fn the_same_message_three_times_in_a_row_is_a_reasoning_loop() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let mut o = obs("a", Class::Working, Action::None);
        let mut transcript = vec!["Let me check the tests."];
        o.messages = Some(said(&transcript));
        assert_eq!(
            run(&mut state, &o, 0, &limits, ALL).condition,
            Condition::Progress
        );
        // The same screen again (or scrolled) is not a new message.
        assert_eq!(
            run(&mut state, &o, 1, &limits, ALL).condition,
            Condition::Unchanged
        );
        assert_eq!(state.message_repeats, 1);
        for (minute, hash) in [(2, "b"), (3, "c")] {
            transcript.extend(["Bash(cargo test)", "Let me check the tests."]);
            o.hash = hash.into();
            o.key = o.hash.clone();
            o.messages = Some(said(&transcript));
            let d = run(&mut state, &o, minute, &limits, ALL);
            if minute == 2 {
                assert_eq!(d.condition, Condition::Progress);
                assert_eq!(state.message_repeats, 2);
            } else {
                assert_eq!(
                    (d.condition, d.response),
                    (Condition::ReasoningLoop, Response::Stop)
                );
                assert!(d.perform);
                assert_eq!(d.stop_reason(), StopReason::ReasoningLoop);
                assert!(d.reason.contains("3 times"), "{}", d.reason);
            }
        }
        // Reported once per new message: the same screen again is quiet.
        let d = run(&mut state, &o, 4, &limits, ALL);
        assert_ne!(d.condition, Condition::ReasoningLoop);
        // Scrolled: the first blocks are gone, the end is the same — no new message.
        o.messages = Some(said(&transcript[2..]));
        o.hash = "scrolled".into();
        o.key = o.hash.clone();
        let d = run(&mut state, &o, 5, &limits, ALL);
        assert_eq!(d.condition, Condition::Progress);
        assert_eq!(state.message_repeats, 3);
        // Something else said: the count starts over.
        transcript.push("Fixed it.");
        o.messages = Some(said(&transcript));
        o.hash = "d".into();
        o.key = o.hash.clone();
        run(&mut state, &o, 6, &limits, ALL);
        assert_eq!(state.message_repeats, 1);
    }

    #[test]
    fn a_reasoning_loop_is_reported_but_not_stopped_without_the_effect_or_the_agent() {
        let mut o = obs("a", Class::Working, Action::None);
        o.messages = Some(said(&["Same.", "Read(x)", "Same.", "Read(x)", "Same."]));
        let (_, d) = heartbeat(
            &StallState::default(),
            &o,
            t0(),
            &Limits::default(),
            Effects::default(),
        );
        assert_eq!(
            (d.condition, d.response, d.perform),
            (Condition::ReasoningLoop, Response::Stop, false)
        );
        let never = Limits {
            repeat_limit: 0,
            ..Limits::default()
        };
        let (state, d) = heartbeat(&StallState::default(), &o, t0(), &never, ALL);
        assert_eq!(d.condition, Condition::Progress);
        assert_eq!(state.message_repeats, 3);
        o.observe_only = true;
        let (_, d) = heartbeat(&StallState::default(), &o, t0(), &Limits::default(), ALL);
        assert_ne!(d.condition, Condition::ReasoningLoop);
    }

    #[test]
    fn a_step_without_a_status_update_times_out_and_an_idle_agent_gets_a_continuation() {
        let limits = Limits {
            step_timeout: std::time::Duration::from_secs(10 * 60),
            ..Limits::default()
        };
        let mut state = StallState::default();
        // The agent keeps changing the screen: no hash stall, but no status update either.
        let mut o = obs("w0", Class::Working, Action::None);
        o.status = Some(status(0));
        for minute in 0..10 {
            o.hash = format!("w{minute}");
            o.key = o.hash.clone();
            let d = run(&mut state, &o, minute, &limits, ALL);
            assert_eq!(
                d.condition,
                Condition::Progress,
                "minute {minute}: {}",
                d.reason
            );
        }
        // A working screen at the timeout: a person should look; nothing typed or spent.
        o.hash = "w10".into();
        o.key = o.hash.clone();
        let d = run(&mut state, &o, 10, &limits, ALL);
        assert_eq!(
            (d.condition, d.response),
            (Condition::Stalled, Response::Escalate),
            "{}",
            d.reason
        );
        assert!(d.reason.starts_with("step timeout"), "{}", d.reason);
        assert_eq!(state.recoveries_total, 0);
        // The clock restarted: the next report is a full timeout later.
        let mut idle = obs("idle", Class::Idle, Action::None);
        idle.status = Some(status(0));
        let d = run(&mut state, &idle, 15, &limits, ALL);
        assert_eq!(d.condition, Condition::Progress);
        let d = run(&mut state, &idle, 20, &limits, ALL);
        assert_eq!(
            (d.condition, d.response, d.perform),
            (Condition::Stalled, Response::Continue, true),
            "{}",
            d.reason
        );
        assert_eq!(state.recoveries_total, 1);
        assert_eq!(
            state.step_elapsed(t0() + Duration::minutes(20)),
            Some(std::time::Duration::ZERO)
        );
        // The agent moved on: a new status restarts the step at its own time.
        idle.status = Some(status(24));
        idle.hash = "idle2".into();
        idle.key = idle.hash.clone();
        let d = run(&mut state, &idle, 25, &limits, ALL);
        assert_eq!(d.condition, Condition::Progress);
        assert_eq!(
            state.step_elapsed(t0() + Duration::minutes(25)),
            Some(std::time::Duration::from_secs(60))
        );
        // A status time before the step it replaces does not time the new step out at once.
        idle.status = Some(status(-60));
        let d = run(&mut state, &idle, 26, &limits, ALL);
        assert_ne!(d.response, Response::Continue, "{}", d.reason);
    }

    #[test]
    fn a_step_timeout_never_answers_a_prompt_the_hooks_contradict() {
        let limits = Limits {
            step_timeout: std::time::Duration::from_secs(10 * 60),
            ..Limits::default()
        };
        let mut state = StallState::default();
        let mut prompt = obs("p", Class::Permission, Action::Answer);
        prompt.status = Some(status(0));
        run(&mut state, &prompt, 0, &limits, ALL);
        prompt.hint = Hint::NowNoAnswer;
        let d = run(&mut state, &prompt, 11, &limits, ALL);
        assert_eq!(d.response, Response::Escalate, "{}", d.reason);
        assert!(d.reason.starts_with("step timeout"), "{}", d.reason);
        assert_eq!(state.recoveries_total, 0);
        assert_eq!(state.answers_total, 0);
    }

    #[test]
    fn waits_are_not_step_time_and_a_recorded_quota_wait_is_a_wait() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let mut idle = obs("idle", Class::Idle, Action::None);
        idle.status = Some(status(0));
        run(&mut state, &idle, 0, &limits, ALL);
        // 30 minutes behind a quota banner, then 30 minutes of a recorded quota wait.
        let mut quota = obs("q", Class::Quota, Action::Wait);
        quota.status = Some(status(0));
        run(&mut state, &quota, 5, &limits, ALL);
        let mut recorded = idle.clone();
        recorded.wait = Some("quota: a rate_limit wait".into());
        let d = run(&mut state, &recorded, 35, &limits, ALL);
        assert_eq!(
            (d.condition, d.response),
            (Condition::Waiting, Response::Wait)
        );
        assert!(
            d.reason.starts_with("quota: a rate_limit wait"),
            "{}",
            d.reason
        );
        let d = run(&mut state, &recorded, 60, &limits, ALL);
        assert_eq!(d.condition, Condition::Waiting);
        assert_eq!(
            state.step_elapsed(t0() + Duration::minutes(60)),
            Some(std::time::Duration::from_secs(5 * 60))
        );
        // Back from the wait at 64: 5 minutes before it + 4 after is still under 10.
        for minute in 64..69 {
            idle.hash = format!("idle{minute}");
            idle.key = idle.hash.clone();
            let d = run(&mut state, &idle, minute, &limits, ALL);
            assert_ne!(
                d.response,
                Response::Continue,
                "minute {minute}: {}",
                d.reason
            );
        }
        let d = run(&mut state, &idle, 69, &limits, ALL);
        assert_eq!(d.response, Response::Continue, "{}", d.reason);
    }

    #[test]
    fn step_timeouts_spend_the_same_budget_and_end_in_stall_limit() {
        let limits = Limits {
            recoveries_total: 2,
            step_timeout: std::time::Duration::from_secs(60),
            ..Limits::default()
        };
        let mut state = StallState::default();
        let mut idle = obs("idle", Class::Idle, Action::None);
        idle.status = Some(status(0));
        run(&mut state, &idle, 0, &limits, ALL);
        let mut steps = Vec::new();
        for minute in 1..5 {
            idle.hash = format!("idle{minute}");
            idle.key = idle.hash.clone();
            let d = run(&mut state, &idle, minute, &limits, ALL);
            steps.push((d.response, d.stop_reason()));
        }
        assert_eq!(
            steps,
            [
                (Response::Continue, StopReason::StallLimit),
                (Response::Continue, StopReason::StallLimit),
                (Response::Stop, StopReason::StallLimit),
                (Response::None, StopReason::StallLimit),
            ]
        );
        assert_eq!(state.recoveries_total, 2);
        // Without a status file there is no step clock at all.
        let mut state = StallState::default();
        let plain = obs("idle", Class::Idle, Action::None);
        for minute in 0..100 {
            let d = run(&mut state, &plain, minute, &limits, ALL);
            assert_ne!(d.response, Response::Continue);
        }
    }

    fn any_observation() -> impl Strategy<Value = Sample> {
        (
            0u8..4,
            prop_oneof![
                Just((Class::Unknown, Action::None)),
                Just((Class::Working, Action::None)),
                Just((Class::Permission, Action::Answer)),
                Just((Class::Trust, Action::Escalate)),
                Just((Class::Quota, Action::Wait)),
                Just((Class::RateLimit, Action::Wait)),
                Just((Class::Shell, Action::Restart)),
            ],
            any::<bool>(),
            prop::option::of(0u64..3),
            any::<bool>(),
        )
            .prop_map(
                |(hash, (class, action), observe_only, iteration, marked)| Sample {
                    hash: format!("h{hash}"),
                    key: format!("h{hash}"),
                    class,
                    action,
                    observe_only,
                    answered_marker: marked.then(|| format!("h{hash}")),
                    signal: iteration.map(|i| SignalMark {
                        iteration: Some(i),
                        timestamp: format!("t{i}"),
                    }),
                    messages: None,
                    status: None,
                    wait: (action == Action::Wait).then(|| class.as_str().to_string()),
                    hint: Hint::Screen,
                },
            )
    }

    fn any_limits() -> impl Strategy<Value = Limits> {
        (1u32..5, 0u32..4, 0u32..6, 0u32..4).prop_map(
            |(threshold, per_iteration, total, answers)| Limits {
                threshold,
                recoveries_per_iteration: per_iteration,
                recoveries_total: total,
                max_answers: answers,
                ..Limits::default()
            },
        )
    }

    /// One heartbeat a minute: waiting or not, a status update or not, and a screen.
    fn any_minute() -> impl Strategy<Value = (bool, bool, Class, Action, u8)> {
        (
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.1),
            prop_oneof![
                Just((Class::Idle, Action::None)),
                Just((Class::Working, Action::None)),
                Just((Class::Permission, Action::Answer)),
                Just((Class::Trust, Action::Escalate)),
            ],
            0u8..3,
        )
            .prop_map(|(wait, update, (class, action), hash)| (wait, update, class, action, hash))
    }

    proptest! {
        /// The step clock against a model: minutes since the clock (re)started that were not
        /// spent waiting. A step timeout fires exactly when the model says the limit is
        /// reached, waits never count, and only an idle agent is sent a continuation.
        #[test]
        fn the_step_clock_counts_working_minutes_only(
            minutes in prop::collection::vec(any_minute(), 1..80),
            limit in 1u64..8,
            total in 0u32..20,
        ) {
            let limits = Limits {
                recoveries_total: total,
                recoveries_per_iteration: total,
                step_timeout: std::time::Duration::from_secs(limit * 60),
                ..Limits::default()
            };
            let mut state = StallState::default();
            let mut status_at = 0i64;
            let (mut start, mut waiting) = (None::<i64>, Vec::<bool>::new());
            for (i, (wait, update, class, action, hash)) in minutes.iter().enumerate() {
                let minute = i as i64;
                if *update || minute == 0 {
                    status_at = minute;
                }
                let mut o = obs(&format!("h{hash}"), *class, *action);
                o.status = Some(status(status_at));
                if *wait {
                    o.wait = Some("quota".into());
                }
                let model = start.map(|s: i64| {
                    (s..minute).filter(|j| !waiting[*j as usize]).count() as u64
                });
                let d = run(&mut state, &o, minute, &limits, ALL);
                waiting.push(*wait);
                let timed_out = d.reason.starts_with("step timeout");
                if timed_out {
                    prop_assert!(model.is_some_and(|m| m >= limit), "{:?} {}", model, d.reason);
                }
                let status_new = start.is_none() || (*update && minute > 0);
                if !*wait && !status_new && model.is_some_and(|m| m >= limit) {
                    prop_assert!(timed_out || d.condition == Condition::Limit || d.response == Response::None,
                        "{:?} {}", model, d.reason);
                }
                if *wait {
                    prop_assert_eq!(d.response, Response::Wait);
                }
                if d.response == Response::Continue {
                    prop_assert_eq!(*class, Class::Idle);
                    prop_assert!(timed_out);
                }
                if state.step_since == Some(t0() + Duration::minutes(minute)) {
                    start = Some(minute);
                }
                let elapsed = state.step_elapsed(t0() + Duration::minutes(minute)).map(|d| d.as_secs() / 60);
                let model_now = start.map(|s| (s..minute).filter(|j| !waiting[*j as usize]).count() as u64);
                prop_assert_eq!(elapsed, model_now);
            }
        }

        /// Issue 15: heartbeats count by elapsed time. Ticks come at any spacing (and the
        /// clock may step back); on one unchanged safe prompt the stall fires at the first
        /// tick at least `threshold` × `period` after the screen was first seen, never
        /// before, and the counters never go backwards.
        #[test]
        fn an_unchanged_screen_stalls_after_its_elapsed_time_however_ticks_come(
            gaps in prop::collection::vec(-20i64..150, 1..60),
            threshold in 1u32..5,
            period in prop_oneof![Just(30u64), Just(60), Just(90)],
        ) {
            let limits = Limits {
                threshold,
                recoveries_per_iteration: 100,
                recoveries_total: 100,
                period: Some(std::time::Duration::from_secs(period)),
                ..Limits::default()
            };
            let after = i64::from(threshold) * period as i64;
            let prompt = obs("h", Class::Permission, Action::Answer);
            let mut state = StallState::default();
            let mut now = t0();
            let first = now;
            for (i, gap) in gaps.iter().enumerate() {
                if i > 0 {
                    now += Duration::seconds(*gap);
                }
                let before = state.clone();
                let (next, d) = heartbeat(&state, &prompt, now, &limits, Effects::default());
                prop_assert_eq!(next.checks, before.checks + 1);
                if i > 0 {
                    prop_assert_eq!(next.unchanged, before.unchanged + 1);
                }
                prop_assert_eq!(next.unchanged_since, Some(first));
                let elapsed = (now - first).num_seconds();
                if i > 0 && elapsed >= after {
                    prop_assert_eq!(d.condition, Condition::Stalled, "{} s: {}", elapsed, d.reason);
                    prop_assert_eq!(d.response, Response::Answer);
                } else {
                    prop_assert_ne!(d.condition, Condition::Stalled, "{} s: {}", elapsed, d.reason);
                    prop_assert_eq!(d.response, Response::None);
                }
                state = next;
            }
        }

        #[test]
        fn the_unchanged_counter_never_goes_backwards_on_the_same_screen(
            observations in prop::collection::vec(any_observation(), 1..60),
            limits in any_limits(),
        ) {
            let mut state = StallState::default();
            for (i, o) in observations.iter().enumerate() {
                let before = state.clone();
                let d = run(&mut state, o, i as i64, &limits, ALL);
                let same_screen = before.last_hash.as_deref() == Some(o.hash.as_str());
                if same_screen && o.action != Action::Wait && !d.perform {
                    prop_assert_eq!(state.unchanged, before.unchanged + 1);
                }
                prop_assert!(state.recoveries_total >= before.recoveries_total);
                prop_assert!(state.checks == before.checks + 1);
            }
        }

        #[test]
        fn limits_always_fire(
            observations in prop::collection::vec(any_observation(), 1..80),
            limits in any_limits(),
        ) {
            let mut state = StallState::default();
            for (i, o) in observations.iter().enumerate() {
                let before = state.clone();
                let d = run(&mut state, o, i as i64, &limits, ALL);
                prop_assert!(state.recoveries_total <= limits.recoveries_total);
                prop_assert!(state.recoveries_iteration <= limits.recoveries_per_iteration);
                prop_assert!(state.answers_step <= limits.max_answers);
                // A new signal in this very observation restores the per-iteration and the
                // per-step budgets before the diagnosis.
                let new_signal = state.signal_iteration != before.signal_iteration
                    || state.signal_timestamp != before.signal_timestamp;
                if d.response == Response::Restart {
                    let used = if new_signal { 0 } else { before.recoveries_iteration };
                    prop_assert!(used < limits.recoveries_per_iteration);
                    prop_assert!(before.recoveries_total < limits.recoveries_total);
                }
                if d.response == Response::Answer {
                    let used = if new_signal { 0 } else { before.answers_step };
                    prop_assert!(used < limits.max_answers);
                    prop_assert_eq!(state.recoveries_total, before.recoveries_total);
                }
                // A due recovery with no budget left is a stop (or one was already asked);
                // a due answer with none left is a person's, never a stop.
                if d.condition == Condition::Limit {
                    if o.action == Action::Answer {
                        prop_assert!(matches!(d.response, Response::Escalate | Response::None));
                    } else {
                        prop_assert!(d.response == Response::Stop || before.limit_reached);
                    }
                }
                if o.action == Action::Answer {
                    prop_assert!(d.response != Response::Stop, "{}", d.reason);
                }
            }
        }

        #[test]
        fn quota_time_never_counts_toward_a_stall(
            observations in prop::collection::vec(any_observation(), 1..60),
            limits in any_limits(),
        ) {
            let mut state = StallState::default();
            let mut since_wait: Option<u32> = None;
            for (i, o) in observations.iter().enumerate() {
                let d = run(&mut state, o, i as i64, &limits, ALL);
                if o.action == Action::Wait {
                    prop_assert_eq!(state.unchanged, 0);
                    prop_assert_eq!(d.condition, Condition::Waiting);
                    prop_assert!(!d.perform);
                    since_wait = Some(0);
                } else if let Some(n) = since_wait.as_mut() {
                    *n += 1;
                    // The count after a wait only includes captures taken after it.
                    prop_assert!(state.unchanged <= *n);
                }
            }
        }
    }
}

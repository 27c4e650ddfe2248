//! One tick of a supervised run as a pure decision: what `autoctl run tick` does for each
//! running run, `run watch` for each notification, and `run recover` after a restart.
//!
//! Read it in the order it happens:
//! 1. **observe** — the driver ([`crate::supervise::driver`]) reads the task directory and
//!    captures the pane into an [`Observation`] ([`observation`]);
//! 2. **decide** — [`decide`] (or [`recover`]) is a pure function of the run's row, the
//!    observation and the clock. Its stages, in order below: the signal moves the counters
//!    or ends the loop, a stop file ends it, the stall heartbeat runs
//!    ([`crate::supervise::stall`]) and limits write `.auto-stop`, the stall's decision
//!    becomes an answer or an escalation, and the loop's exit is detected (observe mode) or
//!    the next step typed (dispatch mode);
//! 3. **effects** — the [`Outcome`] holds the next row, the answer to type first (its own
//!    field: typed under the pane's lock, at most once per screen), the effects to carry
//!    out in order, and the [`TickEvent`] `run tick` prints ([`event`]). [`Outcome::plan`]
//!    is every [`Effect`] in order, the run's own records among them (the intent records,
//!    the answer, the compaction marker, the approval log): the driver is one `match` over
//!    it, then saves the row. The driver types the answer and reports back
//!    ([`Outcome::answered`], [`Outcome::not_answered`]), so the decision is made once and a
//!    recovery is counted only for keys that were sent.

use std::ops::ControlFlow;
use std::time::Duration;

use serde::Serialize;

pub mod event;
pub mod notice;
pub mod observation;
pub mod pace;
#[cfg(test)]
mod tests;
mod waits;

pub use event::{Decision, Did, RunAfter, TickEvent};
pub use observation::{
    AgentStart, Observation, PaneObs, SignalObs, StepFiles, StopObs, WaitInputs,
};

use crate::pane::Key;
use crate::pane::view::PaneView;
use crate::pane::waiting::Input;
use crate::protocol::signal::STOP;
use crate::routing::command;
use crate::supervise::channels::{self, Budget, ChannelOptions, Compaction, Reading, Use};
use crate::supervise::governor;
use crate::supervise::run::{
    AgentReading, DispatchInto, DispatchStep, Mode, Run, SeenSignal, Status, StopReason,
};
use crate::supervise::stall::step_timeout::CONTINUATION;
use crate::supervise::stall::{self, Condition, Recovery, Response, SignalMark};
use crate::supervise::store::PermitAsk;
use crate::supervise::tick::notice::{EventKind, Notice};
use crate::supervise::typing::Answer;
use crate::supervise::wait::{self, EscalationKind, WaitOptions};
use crate::time::{Time, between};
use event::{is_new, saw};

/// How a tick runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickOptions {
    /// How often ticks are scheduled. Stall heartbeats (the captures that count toward a
    /// stall) are spaced at least half of it apart, so overlapping ticks never count one
    /// minute as two.
    pub heartbeat: Duration,
    /// Decide and report, but change nothing: no keys typed, no files written, no row saved.
    pub dry_run: bool,
    /// Answer safe prompts (`run recover` does not).
    pub answers: bool,
    /// How the agent's hook and status-line state is used ([`channels`]).
    pub channels: ChannelOptions,
    /// How waits end for a person: re-announcements.
    pub waits: WaitOptions,
    /// How the quota governor paces the runs of an account ([`pace`]).
    pub governor: governor::Options,
    /// How long this host's lease lasts: past it, without a tick, it is host-lost.
    pub host_lease: Duration,
}

/// Something the tick does, in order ([`Outcome::plan`]): to the world (keys, a respawn, the
/// protocol files; reported in the event's `did`), or to the run's own records (the intent
/// records stored before keys are typed, the answer, the compaction marker, the approval log:
/// carried out by the run's driver and not reported in `did`, which says what reached the
/// pane and the task dir).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// Write `.auto-stop` with this reason.
    WriteStop {
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Type keys into the run's pane: a command at a ready shell prompt (dispatch, relaunch).
    /// An answer is reported as one too (see [`Outcome::answer`]).
    Send {
        keys: Vec<Key>,
        /// A continuation: typed only while `.status.json`'s `updated_at` is still this.
        #[serde(skip_serializing_if = "Option::is_none")]
        if_unchanged: Option<String>,
    },
    /// Start the run's `--launch` command again in its dead pane (`tmux respawn-pane`).
    Respawn { command: String },
    /// Remove `.auto-signal`, but only the file with this fingerprint (never a newer one).
    RemoveSignal {
        #[serde(skip)]
        fingerprint: String,
    },
    /// Remove `.auto-stop`.
    RemoveStop,
    /// Store the resume's intent ([`Outcome::intent`]) before its keys, so a resume is typed
    /// at most once even if the process dies mid-way (a lost one ends in an escalation at the
    /// wait's maximum).
    #[serde(skip)]
    RecordResume,
    /// Type [`Outcome::answer`] onto the screen decided on, under the pane's lock (reported
    /// in `did` as the keys it sent).
    #[serde(skip)]
    TypeAnswer,
    /// Store the dispatch ([`Outcome::dispatch_intent`]) before its keys: the consumed
    /// signal, the count and the command text in one write, so a kill from here on neither
    /// loses the step nor dispatches it twice.
    #[serde(skip)]
    RecordDispatch,
    /// Keep (`requested`, once the `/compact` answer is typed) or drop the proactive
    /// compaction marker in the agent's hook record ([`Outcome::compaction`]).
    #[serde(skip)]
    MarkCompaction { requested: bool },
    /// Log the approval policy's decision on the prompt answered (once typed) or escalated.
    #[serde(skip)]
    LogApproval,
}

impl Effect {
    /// An effect on the run's own records, carried out by its driver, not on the world.
    pub fn is_record(&self) -> bool {
        matches!(
            self,
            Effect::RecordResume
                | Effect::TypeAnswer
                | Effect::RecordDispatch
                | Effect::MarkCompaction { .. }
                | Effect::LogApproval
        )
    }
}

/// The result of [`decide`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The row to save (an answer's recovery is counted by [`Outcome::answered`]).
    pub run: Run,
    /// The answer to type before anything else: under the pane's lock, onto the very screen
    /// decided on, at most once per screen across every supervisor.
    pub answer: Option<Answer>,
    /// What to do after the answer, in order.
    pub effects: Vec<Effect>,
    pub event: TickEvent,
    /// What the answer changes once typed, and the event's line that announced it.
    planned: Option<PlannedAnswer>,
    now: Time,
    /// The proactive `/compact` marker to keep in the agent's hook record: `Some(true)` once
    /// the answer (`/compact`) is typed (one per threshold crossing), `Some(false)` when the
    /// context is back under the threshold.
    pub compaction: Option<bool>,
    /// A half-typed dispatch cleared and typed again: what it changes in the row once its
    /// keys are all typed ([`Retype::typed`]) — never before, so a retype killed midway is
    /// not counted and the next tick clears the line again.
    pub retype: Option<Retype>,
    /// The governor's permit to store with the dispatch or resume record ([`pace`]).
    pub permit: Option<PermitAsk>,
    /// What happened to the run's account this tick (readings, a step ended, a release),
    /// for the driver to apply to the stored account.
    pub account_events: Vec<governor::Event>,
    /// The account reached its weekly reserve: announced only if the stored account says
    /// this run's tick is the first to tell ([`crate::supervise::store::Registry::note_account`]).
    pub weekly_notice: Option<Notice>,
}

/// The marks of a half-typed dispatch's retype, kept only once its keys are all typed: the
/// retype of this dispatch is done (once per step), a stall recovery is spent — or, when a
/// person acknowledged the escalation of the line (`run ack`), that acknowledgement is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retype {
    /// The acknowledgement, not a stall recovery, pays for it.
    pub acknowledged: bool,
}

impl Retype {
    /// The retype's keys are typed: keep its marks in the row to save.
    pub fn typed(self, run: &mut Run) {
        run.waits.retyped = Some(run.dispatch.count);
        if self.acknowledged {
            run.waits.acked_hash = None;
        } else {
            run.stall.recoveries_iteration = run.stall.recoveries_iteration.saturating_add(1);
            run.stall.recoveries_total = run.stall.recoveries_total.saturating_add(1);
        }
    }
}

#[derive(Debug, Clone)]
struct PlannedAnswer {
    recovery: Option<Recovery>,
    reason: usize,
    /// A resume or an Esc of the wait core: what it changes once typed.
    wait: Option<waits::WaitAnswer>,
}

impl Outcome {
    /// The answer was typed: count it (a harmless prompt's answer, or a stall recovery).
    pub fn answered(&mut self) {
        if let Some(planned) = self.planned.take() {
            if let Some(recovery) = &planned.recovery {
                self.run.stall.recovered(recovery);
            }
            if let Some(wait) = &planned.wait {
                waits::answered(&mut self.run, &mut self.event, wait, self.now);
                if self.permit.is_some() && wait.once() {
                    // The resume starts work again under the governor's permit.
                    self.run.governor.permit = Some(self.now);
                }
            }
            self.run.last_decision = self.event.summary();
            self.event.run = RunAfter::of(&self.run, self.now);
        }
    }

    /// The intent record of a dispatch: the row to store (keeping the claim) before the
    /// command's keys are typed — the consumed signal, the count and the command text in
    /// one write. Once the keys are typed the driver clears the text
    /// ([`DispatchState::typing`](crate::supervise::run::DispatchState::typing)) and saves.
    pub fn dispatch_intent(&self) -> Option<&Run> {
        let sends = self
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Send { .. }));
        (self.run.spec.mode == Mode::Dispatch && self.run.dispatch.typing.is_some() && sends)
            .then_some(&self.run)
    }

    /// The row to record in the registry before the answer is typed, when typing it must
    /// happen at most once even across a crash (a resume): the row as if it were typed.
    pub fn intent(&self) -> Option<Run> {
        let planned = self.planned.as_ref()?;
        planned.wait.as_ref().filter(|w| w.once())?;
        let mut typed = self.clone();
        typed.answered();
        Some(typed.run)
    }

    /// Nothing was typed (the screen changed, another supervisor answered it, the task
    /// moved on): the tick is the one it would have been without the answer, and says why.
    pub fn not_answered(&mut self, why: &str) {
        self.answer = None;
        if let Some(planned) = self.planned.take() {
            self.event.take_back(planned.reason);
        }
        if self.event.reasons.is_empty() {
            self.event.reasons.push(PROGRESSING.to_string());
        }
        self.run.last_decision = self.event.summary();
        self.event.reasons.push(format!("nothing typed: {why}"));
    }

    /// Everything the outcome asks for, in the order the driver carries it out: the resume's
    /// intent record, the answer, the dispatch's intent record, the compaction marker, the
    /// world's [`Outcome::effects`], the approval log. The row, its outbox and the account are
    /// saved after the last.
    pub fn plan(&self) -> Vec<Effect> {
        let mut plan = Vec::new();
        if self.intent().is_some() {
            plan.push(Effect::RecordResume);
        }
        if self.answer.is_some() {
            plan.push(Effect::TypeAnswer);
        }
        if self.dispatch_intent().is_some() {
            plan.push(Effect::RecordDispatch);
        }
        if let Some(requested) = self.compaction {
            plan.push(Effect::MarkCompaction { requested });
        }
        plan.extend(self.effects.iter().cloned());
        if self.answer.is_some() || self.event.decision == Decision::Escalate {
            plan.push(Effect::LogApproval);
        }
        plan
    }

    /// Everything the tick would do, in order, as a dry run reports it.
    pub fn planned(&self) -> Vec<Did> {
        self.answer
            .iter()
            .map(answer_effect)
            .chain(self.effects.iter().cloned())
            .map(|effect| Did {
                effect,
                outcome: "planned",
                error: None,
            })
            .collect()
    }
}

/// How an answer is reported among the effects.
pub fn answer_effect(answer: &Answer) -> Effect {
    Effect::Send {
        keys: answer.keys.clone(),
        if_unchanged: answer.if_unchanged.clone(),
    }
}

const PROGRESSING: &str = "the loop is progressing";

struct Tick<'a> {
    before: &'a Run,
    run: Run,
    answer: Option<Answer>,
    planned: Option<PlannedAnswer>,
    effects: Vec<Effect>,
    event: TickEvent,
    now: Time,
    compaction: Option<bool>,
    retype: Option<Retype>,
    /// A person must decide (the run enters `needs-person`): the slug and why.
    escalation: Option<waits::Escalation>,
    /// What a person is asked to decide on this screen, when it is not the screen's own key
    /// ([`waits::decision_key`]).
    decision_key: Option<String>,
    /// The agent was started again (announced as `restart`), and why.
    restarted: Option<String>,
    options: TickOptions,
    /// The governor stage's answer ([`pace`]).
    pace: pace::Stage,
    account_events: Vec<governor::Event>,
    /// The weekly reserve's reason and the reset it is for.
    weekly_notice: Option<(String, Time)>,
}

impl Tick<'_> {
    fn new<'a>(before: &'a Run, now: Time, options: &TickOptions) -> Tick<'a> {
        Tick {
            before,
            run: before.clone(),
            answer: None,
            planned: None,
            effects: Vec::new(),
            event: TickEvent::new(before, now, options.dry_run),
            now,
            compaction: None,
            retype: None,
            escalation: None,
            decision_key: None,
            restarted: None,
            options: *options,
            pace: pace::Stage::default(),
            account_events: Vec::new(),
            weekly_notice: None,
        }
    }

    fn into_outcome(self) -> Outcome {
        // A permit goes with a record only: a dispatch typed, or a quota resume planned.
        let resuming = self
            .planned
            .as_ref()
            .and_then(|p| p.wait.as_ref())
            .is_some_and(waits::WaitAnswer::once);
        let dispatching = self.run.dispatch.count > self.before.dispatch.count;
        let permit = self.pace.grant.filter(|_| resuming || dispatching);
        let weekly_notice = self.weekly_notice.map(|(reason, reset)| Notice {
            event: EventKind::WeeklyReserve,
            reason,
            key: None,
            // One account, one reset: one event, whichever run of the account stores it.
            id: Some(notice::once_id(
                EventKind::WeeklyReserve,
                &[&self.run.spec.account, &crate::time::format_time(reset)],
            )),
        });
        Outcome {
            run: self.run,
            answer: self.answer,
            effects: self.effects,
            event: self.event,
            planned: self.planned,
            now: self.now,
            compaction: self.compaction,
            retype: self.retype,
            permit,
            account_events: self.account_events,
            weekly_notice,
        }
    }

    /// Answer the screen: typed first by the driver, its recovery counted once typed.
    fn plan_answer(&mut self, answer: Answer, recovery: Option<Recovery>, why: String) {
        self.plan(Decision::Answer, answer, recovery, None, why);
    }

    fn plan(
        &mut self,
        decision: Decision,
        answer: Answer,
        recovery: Option<Recovery>,
        wait: Option<waits::WaitAnswer>,
        why: String,
    ) {
        self.event.decide(decision, why);
        let reason = self.event.reasons.len() - 1;
        self.answer = Some(answer);
        self.planned = Some(PlannedAnswer {
            recovery,
            reason,
            wait,
        });
    }

    /// What a person would be asked to decide on `view`: the standing StopFailure's
    /// [`waits::decision_key`], else the screen's own key.
    fn key_of<'v>(&'v self, view: &'v PaneView) -> &'v str {
        self.decision_key.as_deref().unwrap_or(&view.key)
    }

    /// A person must decide: say why; the run enters `needs-person` at the end of the tick.
    fn escalate(&mut self, kind: EscalationKind, why: String, stall_limit: bool) {
        self.event.decide(Decision::Escalate, why.clone());
        if self.escalation.is_none() {
            self.escalation = Some(waits::Escalation {
                kind,
                why,
                stall_limit,
            });
        }
    }

    fn end(&mut self, status: Status, decision: Decision, reason: StopReason, why: String) {
        self.run.end(status, reason, None, self.now);
        self.event.decide(decision, why);
    }

    /// Ask the loop to stop (`.auto-stop`) and end the run with that reason.
    fn stop(&mut self, reason: StopReason, why: String) {
        self.effects.push(Effect::WriteStop {
            reason: reason.to_string(),
            message: Some(why.clone()),
        });
        if self.run.spec.mode == Mode::Dispatch {
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

/// The stall heartbeat, when one is due — or at once for a prompt the hooks confirm (or
/// contradict) and a screen only a person can answer. (An escalation of the wait core — a
/// weekly limit, billing, an error that cannot clear — speaks for itself.)
fn stall_if_due(
    t: &mut Tick<'_>,
    view: &PaneView,
    obs: &Observation,
    verdict: Option<&wait::Ruling>,
    options: &TickOptions,
    channel_use: &Use,
    due: bool,
) -> Option<stall::Diagnosis> {
    let waits_escalate = verdict.is_some_and(|v| matches!(v.act, wait::Act::Escalate { .. }));
    let person_only = !waits_escalate && view.classification.person_only() && !view.dead;
    let prompt_now = (channel_use.act_now || person_only) && t.active();
    if !(t.active() && (due || prompt_now)) {
        return None;
    }
    stall_heartbeat(t, view, obs, verdict, options, channel_use, person_only)
}

/// What the run's mode does with an active run's screen (an exited agent, the next step to
/// dispatch), then a proactive `/compact`.
fn follow_mode(
    t: &mut Tick<'_>,
    view: &PaneView,
    obs: &Observation,
    options: &TickOptions,
    reading: Option<&channels::Reading>,
    due: bool,
) {
    match t.run.spec.mode {
        Mode::Observe => detect_exit(t, view, due),
        Mode::Dispatch => dispatch(t, view, obs, due),
    }
    if t.active()
        && let Some(reading) = reading
    {
        compact(t, view, reading, obs, options);
    }
}

/// Count the tick, and the stall heartbeat when one is due (returned).
fn count_tick(t: &mut Tick<'_>, before: &Run, options: &TickOptions) -> bool {
    let now = t.now;
    t.run.ticks = t.run.ticks.saturating_add(1);
    t.run.last_tick_at = Some(now);
    let due = heartbeat_due(before, now, options.heartbeat);
    if due {
        t.run.heartbeats = t.run.heartbeats.saturating_add(1);
        t.run.last_heartbeat_at = Some(now);
    }
    t.event.heartbeat = due;
    due
}

/// The agent's state from its channels, cross-checked against the screen of `view`: the
/// reading the event reports and the run keeps, and how this tick may use it.
fn read_channels(
    t: &mut Tick<'_>,
    before: &Run,
    obs: &Observation,
    view: &PaneView,
    options: &TickOptions,
) -> (channels::Reading, Use) {
    let (mut reading, channel_use) = channels::cross_check(
        obs.channels.as_ref(),
        view,
        &before.stall,
        t.now,
        &options.channels,
    );
    if let Some(why) = &reading.disagreement {
        t.event.decide(
            Decision::Progress,
            format!("hooks and screen disagree: {why}"),
        );
    }
    let agent = &mut t.run.agent_state;
    reading.startup = agent.startup.observe(
        agent.sources.is_empty(),
        t.run.spec.launch_command.is_some(),
        reading.source,
        &view.hash,
    );
    if reading.startup {
        agent.sources.startup = agent.sources.startup.saturating_add(1);
    } else {
        agent.sources.count(reading.source);
    }
    t.event.state = Some(reading.clone());
    t.run.agent_state.reading = Some(AgentReading {
        state: crate::supervise::run::StoredState::of(&reading.state),
        source: reading.source,
        at: t.now,
    });
    (reading, channel_use)
}

/// One compaction counter per iteration: every compaction the hooks report counts once,
/// including those recorded before this run's ticks first saw the record.
fn count_compactions(t: &mut Tick<'_>, obs: &Observation) {
    let hook = obs.channels.as_ref().and_then(|ty| ty.hook.as_ref());
    let agent = &mut t.run.agent_state;
    (agent.compactions, agent.compactions_seen) = channels::count_compactions(
        agent.compactions,
        agent.compactions_seen,
        hook.map(|hook| hook.compactions),
        hook.map_or(0, |hook| hook.compactions_since(t.run.started_at)),
        t.run.iteration_count,
    );
}

/// Decide one tick of one run. Pure: the same row, observation and clock give the same
/// outcome.
pub fn decide(before: &Run, obs: &Observation, now: Time, options: &TickOptions) -> Outcome {
    let mut t = Tick::new(before, now, options);
    if !before.status.is_active() {
        // Claims never hand out ended runs; a driver that asks anyway changes nothing.
        t.event.decide(
            Decision::Skip,
            format!("the run has ended ({})", before.status.as_str()),
        );
        return t.into_outcome();
    }
    let due = count_tick(&mut t, before, options);
    t.event.saw = Some(saw(before, obs));
    for note in &obs.notes {
        t.event.decide(Decision::Progress, note.clone());
    }

    if lost_task_dir(&mut t, obs) {
        return finish(t);
    }
    let Ok(pane) = pane_seen(&mut t, obs) else {
        return finish(t);
    };

    follow_signal(&mut t, obs);
    if t.run.signals_seen > before.signals_seen {
        // A step ended: its permit is given back, and its cost shows in the windows.
        t.run.governor.permit = None;
        t.account_events.push(governor::Event::StepEnded(t.now));
    }
    if t.active() {
        read_stop_file(&mut t, obs);
    }
    let (reading, channel_use) = match pane {
        Some(view) => {
            let (reading, channel_use) = read_channels(&mut t, before, obs, view, options);
            (Some(reading), channel_use)
        }
        None => (None, Use::default()),
    };
    count_compactions(&mut t, obs);
    t.decision_key = waits::decision_key(channel_use.failure.as_ref());
    if let Some(view) = pane {
        waits::screen_changed(&mut t, view);
    }
    // The quota governor: the account's windows as this session sees them, and a permit
    // for a step or a resume due now (a hold is a `quota-paced` wait, below).
    t.pace = pace::stage(
        &mut t,
        obs,
        pane,
        channel_use.window,
        channel_use.failure.as_ref(),
    );
    // Every wait, from the screen and the typed state, with its end and maximum.
    let verdict = match (pane, t.active()) {
        (Some(view), true) => Some(waits::wait_stage(&mut t, view, obs, &channel_use)),
        _ => None,
    };
    let stall = match pane {
        Some(view) => stall_if_due(
            &mut t,
            view,
            obs,
            verdict.as_ref(),
            options,
            &channel_use,
            due,
        ),
        None => None,
    };
    if t.active() {
        enforce_limits(&mut t);
    }
    if let Some(stall) = stall {
        apply_stall(&mut t, stall, pane, options.dry_run);
    }
    if let (Some(verdict), Some(view)) = (verdict, pane)
        && t.active()
    {
        waits::apply(&mut t, verdict, view);
    }
    if t.active()
        && let Some(view) = pane
    {
        follow_mode(&mut t, view, obs, options, reading.as_ref(), due);
    }
    let resumed = t
        .planned
        .as_ref()
        .is_some_and(|p| p.wait.as_ref().is_some_and(waits::WaitAnswer::once));
    pace::self_resumed(&mut t, resumed);
    if t.event.reasons.is_empty() {
        t.event.reasons.push(PROGRESSING.to_string());
    }
    finish(t)
}

/// Text and its Enter: a line typed at a prompt.
pub(super) fn typed_line(text: &str) -> Vec<Key> {
    vec![Key::Text(text.to_string()), Key::Key("Enter".to_string())]
}

/// An answer typed onto the screen of `view` it was decided on.
pub(super) fn answer_on(view: &PaneView, keys: Vec<Key>) -> Answer {
    Answer {
        pane_id: view.pane_id.clone(),
        hash: view.hash.clone(),
        keys,
        if_unchanged: None,
    }
}

/// The tick is over: the run ended or its agent was started again ([`pane_seen`]).
struct Over;

/// A run whose task dir is gone is lost (how [`decide`] and [`recover`] open).
fn lost_task_dir(t: &mut Tick<'_>, obs: &Observation) -> bool {
    if obs.task_dir {
        return false;
    }
    let why = format!("the task dir {} no longer exists", t.run.spec.task_dir);
    t.end(Status::Lost, Decision::Lost, StopReason::TaskDirGone, why);
    true
}

/// The pane [`decide`] and [`recover`] go on with. Gone, the run is lost; dead, its agent is
/// started again (or the run is lost): the tick is over. Unreadable: an error this tick and
/// `None` — never an end, as a cron line with the wrong socket must not wipe out every loop.
fn pane_seen<'o>(t: &mut Tick<'_>, obs: &'o Observation) -> Result<Option<&'o PaneView>, Over> {
    match &obs.pane {
        PaneObs::Gone(why) => {
            let why = format!("the pane {} is gone: {why}", t.run.spec.target);
            t.end(Status::Lost, Decision::Lost, StopReason::PaneGone, why);
            Err(Over)
        }
        PaneObs::Dead(why) => {
            let why = format!("the pane {} is dead: {why}", t.run.spec.target);
            if !restart(t, true, &why) {
                t.end(Status::Lost, Decision::Lost, StopReason::PaneGone, why);
            }
            Err(Over)
        }
        PaneObs::Unavailable(why) => {
            t.event
                .decide(Decision::Error, format!("cannot read the pane: {why}"));
            Ok(None)
        }
        PaneObs::Seen(view) => Ok(Some(view.as_ref())),
    }
}

fn finish(mut t: Tick<'_>) -> Outcome {
    if !t.run.status.is_active() {
        t.run.governor.permit = None;
    }
    waits::attend(&mut t);
    t.run.last_decision = t.event.summary();
    t.event.run = RunAfter::of(&t.run, t.now);
    t.into_outcome()
}

/// A new signal moves the counters; `(stop)` completes the loop; in observe mode a signal
/// the agent removed means the loop exited (the agent deletes it only at loop exit).
fn follow_signal(t: &mut Tick<'_>, obs: &Observation) {
    match &obs.signal {
        SignalObs::Invalid(problem) => {
            t.event.decide(
                Decision::Progress,
                format!("ignored an invalid .auto-signal: {problem}"),
            );
        }
        SignalObs::Missing => {
            let vanished = t.run.spec.mode == Mode::Observe
                && t.before
                    .last_signal
                    .as_ref()
                    .is_some_and(|seen| seen.next != STOP);
            if vanished {
                let why = "the agent ended the loop: it removed its .auto-signal (it does so only at loop exit)".to_string();
                t.end(
                    Status::Finished,
                    Decision::Finish,
                    StopReason::Complete,
                    why,
                );
            }
        }
        SignalObs::Valid {
            signal,
            fingerprint,
        } => {
            if is_new(t.before, fingerprint) {
                count_signal(t, signal, fingerprint);
            }
        }
    }
}

/// A new valid signal: counted and kept on the run; `(stop)` completes the loop (in
/// dispatch mode after seed 001's cleanup), any other next step becomes dispatch mode's
/// pending step with its own budget of retries.
fn count_signal(t: &mut Tick<'_>, signal: &crate::protocol::signal::Signal, fingerprint: &str) {
    let run = &mut t.run;
    run.signals_seen = run.signals_seen.saturating_add(1);
    let count = signal.iteration.unwrap_or(run.signals_seen);
    run.iteration_count = run.iteration_count.max(count);
    run.last_signal_at = Some(t.now);
    run.last_signal = Some(SeenSignal {
        fingerprint: fingerprint.to_string(),
        step: signal.step.clone(),
        result: signal.result.clone(),
        next: signal.next.clone(),
        checkpoint: signal.checkpoint_or_empty().to_string(),
        iteration: signal.iteration,
    });
    run.agent_state.shell_seen = 0;
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
        if run.spec.mode == Mode::Dispatch {
            // Seed 001's cleanup: the daemon removes the signal (and a stop file).
            t.remove_signal();
            t.effects.push(Effect::RemoveStop);
        }
        t.end(
            Status::Finished,
            Decision::Finish,
            StopReason::Complete,
            format!("{summary}: the loop is complete"),
        );
        return;
    }
    if run.spec.mode == Mode::Dispatch {
        run.dispatch.pending = Some(DispatchStep {
            next: signal.next.clone(),
            checkpoint: signal.checkpoint_or_empty().to_string(),
        });
        run.dispatch.dispatched = None;
        // A new step: its own budget of retries.
        run.dispatch.retries = 0;
        run.dispatch.retry_at = None;
        // The step ran far enough to write its signal: its keys arrived.
        run.dispatch.typing = None;
    }
    t.event.decide(Decision::Progress, summary);
}

/// A stop file autoctl did not write this tick (a person ran `autoctl stop write`, or a
/// stall checker hit its limit): the loop is stopping, so the run ends with that reason.
fn read_stop_file(t: &mut Tick<'_>, obs: &Observation) {
    let reason = match &obs.stop {
        StopObs::None => return,
        StopObs::Requested(reason) => StopReason::parse(reason),
        StopObs::Unreadable(_) => StopReason::Unknown,
    };
    if t.run.spec.mode == Mode::Dispatch {
        t.remove_signal();
    }
    let why = format!(".auto-stop requests a stop ({reason})");
    t.end(Status::Stopped, Decision::Stop, reason, why);
}

/// Max iterations and the timeout (quota waits excluded) write `.auto-stop`.
fn enforce_limits(t: &mut Tick<'_>) {
    if t.run.iteration_count >= t.run.spec.max_iterations {
        let why = format!(
            "iteration {} reached the limit of {}",
            t.run.iteration_count, t.run.spec.max_iterations
        );
        t.stop(StopReason::MaxIterations, why);
        return;
    }
    let elapsed = t.run.elapsed(t.now);
    if elapsed >= t.run.spec.timeout {
        let why = format!(
            "{} of supervised time reached the timeout of {} (quota waits excluded: {})",
            crate::duration::format(Duration::from_secs(elapsed.as_secs())),
            crate::duration::format(t.run.spec.timeout),
            crate::duration::format(Duration::from_secs(t.run.quota_waited(t.now).as_secs())),
        );
        t.stop(StopReason::Timeout, why);
        return;
    }
    // Seed 002: this many compactions in one iteration mean the task does not fit the
    // context window; one counter for the agent's own compactions and autoctl's /compact.
    let compactions = t.run.agent_state.compactions.at(t.run.iteration_count);
    if compactions.exhausted(t.run.spec.max_compactions) {
        let why = compactions.limit_message(t.run.spec.max_compactions);
        t.stop(StopReason::CompactionLimit, why);
    }
}

/// Proactive compaction (seeds 000 and 002): type `/compact` once per crossing of the run's
/// threshold (`--compact-at`, else the task's profile, else task-ai's 82% for a task-ai
/// module, else 70%: [`channels::ChannelOptions::compaction_threshold`]), only as the iteration's
/// first compaction, while the agent is idle at its own prompt by both its hooks and its
/// screen, within the iteration's compaction budget (`--max-compactions`; the compaction is counted when the
/// hooks report it, like any other). Never for an agent that compacts by itself (its
/// environment holds `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`, as `run start --launch` sets it).
fn compact(
    t: &mut Tick<'_>,
    view: &PaneView,
    reading: &Reading,
    obs: &Observation,
    options: &TickOptions,
) {
    let requested = obs
        .channels
        .as_ref()
        .and_then(|ty| ty.hook.as_ref())
        .is_some_and(|hook| hook.compact_requested_at.is_some());
    let threshold = options.channels.compaction_threshold(&obs.compaction);
    if requested
        && let (Some(used), Some(at)) = (reading.context_percent, threshold.as_ref())
        && used < u32::from(at.percent)
    {
        // Back under the threshold: the next crossing may compact again.
        t.compaction = Some(false);
        return;
    }
    if t.answer.is_some() || !t.effects.is_empty() || !options.answers {
        return;
    }
    let budget = Budget {
        count: t.run.agent_state.compactions,
        iteration: t.run.iteration_count,
        max: t.run.spec.max_compactions,
    };
    let why = match channels::compaction(
        reading,
        view.classification.class,
        requested,
        budget,
        threshold.as_ref(),
    ) {
        None => return,
        Some(Compaction::Capped(why)) => {
            t.event
                .decide(Decision::Progress, format!("compact: {why}"));
            return;
        }
        Some(Compaction::Type(why)) => why,
    };
    if let Some(at) = obs.channels.as_ref().and_then(|ty| ty.agent_compacts_at) {
        // The agent compacts by itself (issue 28: Claude Code's own feature first): the
        // typed `/compact` is only for an agent whose environment does not ask for it. Said
        // once a heartbeat, not at every tick.
        if t.event.heartbeat {
            t.event.decide(
                Decision::Progress,
                format!("compact: {why}, but Claude Code compacts by itself at {at}% (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE): nothing typed"),
            );
        }
        return;
    }
    t.compaction = Some(true);
    t.plan(
        Decision::Compact,
        answer_on(view, typed_line("/compact")),
        None,
        None,
        format!("compact: {why}"),
    );
}

/// Run the stall core on this capture and keep its new state in the row.
fn stall_heartbeat(
    t: &mut Tick<'_>,
    view: &PaneView,
    obs: &Observation,
    verdict: Option<&wait::Ruling>,
    options: &TickOptions,
    channel_use: &Use,
    person_only: bool,
) -> Option<stall::Diagnosis> {
    // A shell prompt in front is readiness (dispatch mode rests there between steps) or an
    // exited agent (observe mode: restarted or ended by the exit detection), never a stall.
    if view.shell_ready() {
        return None;
    }
    let signal = match &obs.signal {
        SignalObs::Valid { signal, .. } => Some(SignalMark::of(signal)),
        _ => None,
    };
    // The wait core decides what is a wait: a screen it does not wait on is watched for
    // stalls like any other, and a wait past its maximum no longer hides a stall.
    let mut observation = stall::Sample::of(view, signal, obs.status.clone());
    observation.wait = verdict.filter(|v| v.pauses).map(|v| v.reason.clone());
    // The hooks' record of the model's messages, when they keep one (Claude Code's own
    // lines on the screen are not the agent's), and their word on the screen's prompt.
    channel_use.apply_to(&mut observation);
    // A standing StopFailure is one decision however its screen is redrawn: the stall core
    // escalates it once, by that decision's key ([`waits::decision_key`]).
    observation.key = t.key_of(view).to_string();
    // Only a person can answer it: decided on this read, not after the threshold (issue 29).
    if person_only && observation.hint == stall::Hint::Screen {
        observation.hint = stall::Hint::Now;
    }
    // Restarts are `run recover`'s (observe mode ends the run on a dead agent instead).
    let effects = stall::Effects {
        answer: options.answers && !options.dry_run,
        restart: false,
        stop: !options.dry_run,
    };
    // Counted by elapsed time: `--threshold` heartbeats of `--heartbeat` each, however often
    // the ticks come (issue 15: ticks every 30 s stalled after 90 s, not the seed's 3 × 60 s).
    let limits = stall::Limits {
        period: Some(options.heartbeat),
        ..t.run.spec.limits
    };
    let (state, decision) = stall::heartbeat(&t.run.stall, &observation, t.now, &limits, effects);
    t.run.stall = state;
    Some(decision)
}

fn apply_stall(t: &mut Tick<'_>, stall: stall::Diagnosis, pane: Option<&PaneView>, dry_run: bool) {
    let Some(view) = pane else { return };
    let c = &view.classification;
    let carried_out = stall.perform || dry_run;
    match stall.response {
        Response::None | Response::Restart => {
            if stall.condition == Condition::Stalled {
                t.event.decide(
                    Decision::Progress,
                    format!("stall: {} ({})", stall.reason, c.reason),
                );
            }
        }
        // The wait stage reported the wait (every tick, not only on heartbeats).
        Response::Wait => {}
        Response::Escalate => {
            let destructive = if c.destructive {
                "; destructive: never answered automatically"
            } else {
                ""
            };
            // Past the answer budget the prompt is a person's; the run goes on.
            let kind = if stall.condition == Condition::Limit {
                EscalationKind::AnswerLimit
            } else {
                EscalationKind::Screen
            };
            t.escalate(
                kind,
                format!("escalate: {} ({}){destructive}", stall.reason, c.reason),
                false,
            );
        }
        Response::Answer if carried_out && t.active() => {
            let answer = answer_on(view, c.keys.clone());
            let why = format!("answer: {} ({})", stall.reason, c.reason);
            t.plan_answer(answer, stall.recovery, why);
        }
        Response::Continue if carried_out && t.active() => {
            // Seed 002's Silent Continue: typed only while updated_at is the one seen.
            let answer = Answer {
                if_unchanged: t.run.stall.status_updated_at.clone(),
                ..answer_on(view, typed_line(CONTINUATION))
            };
            let why = format!("continue: {} ({})", stall.reason, c.reason);
            t.plan(Decision::Continuation, answer, stall.recovery, None, why);
        }
        Response::Answer | Response::Continue => {}
        Response::Stop if carried_out && t.active() => {
            t.stop(stall.stop_reason(), stall.reason);
        }
        Response::Stop => {}
    }
}

/// Observe mode: a shell prompt in front of a dead agent, seen on two heartbeats in a row (a
/// command that is still starting shows the prompt for a moment), ends the run.
fn detect_exit(t: &mut Tick<'_>, view: &PaneView, due: bool) {
    if !view.shell_ready() {
        t.run.agent_state.shell_seen = 0;
        return;
    }
    if due {
        t.run.agent_state.shell_seen = t.run.agent_state.shell_seen.saturating_add(1);
    }
    if t.run.agent_state.shell_seen < 2 {
        t.event.decide(
            Decision::Progress,
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
    // What the agent left above the prompt (the dialog it exited from, its exit text) says
    // why it is gone.
    let said = view
        .classification
        .said
        .as_deref()
        .map(|said| format!("; it left: {said:?}"))
        .unwrap_or_default();
    let why = format!(
        "the agent exited (a shell prompt is in front) before the loop finished{said}; {last}; {}",
        last_lines(view)
    );
    if !restart(t, false, &why) {
        t.end(Status::Exited, Decision::Exit, StopReason::AgentExited, why);
    }
}

/// The pane's last non-blank lines, for the reason of an end or an escalation that no signal
/// explains (the step's error, the agent's last words, the shell's message): what a person
/// would otherwise find only by attaching to the pane.
fn last_lines(view: &PaneView) -> String {
    if view.waiting.tail.is_empty() {
        return "the pane shows nothing".to_string();
    }
    let lines: Vec<String> = view
        .waiting
        .tail
        .iter()
        .map(|line| format!("{line:?}"))
        .collect();
    format!("the pane's last lines: {}", lines.join(" | "))
}

/// The agent exited: start it again with the run's `--launch` (typed at the shell prompt,
/// or `tmux respawn-pane` in a dead pane), spending a stall recovery. False when the run has
/// no launch command (the caller ends it). Past the recovery budget the run ends as
/// `exited` (reason `restart_limit`), its end event telling a person once: an agent that
/// exits at every start is not helped by a supervisor that asks again every heartbeat
/// (docs/waits.md, seed 000's recovery limits).
fn restart(t: &mut Tick<'_>, dead: bool, why: &str) -> bool {
    let Some(command) = t.run.spec.launch_command.clone() else {
        return false;
    };
    if t.run.spec.mode != Mode::Observe && t.run.spec.into != DispatchInto::Agent {
        return false;
    }
    if !t.run.recovery_left() {
        let why = format!(
            "{why}; no stall recovery left to start it again ({} of {} this iteration, {} of {} in total)",
            t.run.stall.recoveries_iteration,
            t.run.spec.limits.recoveries_per_iteration,
            t.run.stall.recoveries_total,
            t.run.spec.limits.recoveries_total
        );
        t.end(
            Status::Exited,
            Decision::Exit,
            StopReason::RestartLimit,
            why,
        );
        return true;
    }
    if t.options.dry_run {
        t.event
            .decide(Decision::Relaunch, format!("{why}: would start it again"));
        return true;
    }
    if t.run.spec.mode == Mode::Dispatch
        && let Some(step) = t.run.dispatch.dispatched.take()
    {
        // The step in flight died with the agent: type it again into the new one.
        t.run.dispatch.pending = Some(step);
    }
    t.run.stall.recoveries_iteration = t.run.stall.recoveries_iteration.saturating_add(1);
    t.run.stall.recoveries_total = t.run.stall.recoveries_total.saturating_add(1);
    t.run.stall.last_hash = None;
    t.run.stall.unchanged = 0;
    t.run.agent_state.shell_seen = 0;
    t.effects.push(if dead {
        Effect::Respawn {
            command: command.clone(),
        }
    } else {
        Effect::Send {
            keys: typed_line(&command),
            if_unchanged: None,
        }
    });
    let how = if dead { "respawned the pane" } else { "typed" };
    let why = format!(
        "{why}: started the agent again ({how}: {command}); stall recovery {} of {}",
        t.run.stall.recoveries_total, t.run.spec.limits.recoveries_total
    );
    t.event.decide(Decision::Relaunch, why.clone());
    t.restarted = Some(why);
    true
}

/// Dispatch mode (seed 001): when a step is due and the pane is ready — a shell prompt
/// (`--into shell`) or the agent idle at its empty input box (`--into agent`) — type the
/// next command and remove the signal that asked for it.
///
/// The typed command is an intent record: the row is saved with the consumed signal, the
/// count and the command text before the keys are typed ([`Outcome::dispatch_intent`]), and
/// the text is cleared once they are. A tick that finds the text still recorded goes by the
/// screen ([`unconfirmed`]), so a driver killed anywhere in between neither loses the step
/// nor types it twice.
fn dispatch(t: &mut Tick<'_>, view: &PaneView, obs: &Observation, due: bool) {
    let into = t.run.spec.into;
    if into == DispatchInto::Agent && view.foreground_is_shell {
        // The agent exited: relaunch it (--launch) or end the run, as observe mode does.
        t.run.dispatch.typing = None;
        detect_exit(t, view, due);
        return;
    }
    if let Some(text) = t.run.dispatch.typing.clone() {
        unconfirmed(t, view, &text);
        return;
    }
    if !take_entry_step(t, obs) {
        return;
    }
    if t.pace.paced.is_some() {
        // The quota governor holds the step (the wait stage reported the quota-paced wait).
        return;
    }
    let Some(step) = t.run.dispatch.pending.clone() else {
        watch_running_step(t, view, obs, due);
        return;
    };
    if into == DispatchInto::Shell && held_for_retry(t, &step) {
        return;
    }
    let Some(text) = render_step(t, &step, obs) else {
        return;
    };
    if !pane_ready(t, view, &step) {
        return;
    }
    let ControlFlow::Continue(unstarted) = session_start_gate(t, obs, &step) else {
        return;
    };
    type_step(t, step, text);
    t.event.reasons.extend(unstarted);
}

/// With no step pending or running, the task's entry step becomes the pending one; false
/// when the tick decided instead (the status says there is nothing to run: finished; the
/// entry step cannot be found: an error).
fn take_entry_step(t: &mut Tick<'_>, obs: &Observation) -> bool {
    if t.run.dispatch.pending.is_some() || t.run.dispatch.dispatched.is_some() {
        return true;
    }
    match &obs.entry {
        Some(Ok(step)) if step.next == STOP => {
            let why = "the task's status says there is nothing to run".to_string();
            t.end(
                Status::Finished,
                Decision::Finish,
                StopReason::Complete,
                why,
            );
            false
        }
        Some(Ok(step)) => {
            t.run.dispatch.pending = Some(step.clone());
            true
        }
        Some(Err(why)) => {
            t.event.decide(
                Decision::Error,
                format!("cannot find the entry step: {why}"),
            );
            false
        }
        None => true,
    }
}

/// A step is running. If the shell is back (two due ticks in a row) and no signal came, the
/// step died: its own failure account decides, or the run ends as exited. (An agent idle
/// after its step without a signal is the stall core's: a step timeout.)
fn watch_running_step(t: &mut Tick<'_>, view: &PaneView, obs: &Observation, due: bool) {
    if !(t.run.spec.into == DispatchInto::Shell
        && view.shell_ready()
        && t.run.dispatch.dispatched.is_some())
    {
        t.run.agent_state.shell_seen = 0;
        return;
    }
    if due {
        t.run.agent_state.shell_seen = t.run.agent_state.shell_seen.saturating_add(1);
    }
    let result = obs.step_files.as_ref().and_then(|f| f.result.as_ref());
    if let Some(result) = result
        && shell_step_failed(t, result)
    {
        return;
    }
    if t.run.agent_state.shell_seen >= 2 {
        let step = t
            .run
            .dispatch
            .dispatched
            .as_ref()
            .map_or("", |d| d.next.as_str());
        let how = result.map_or(String::new(), |r| {
            format!(" (its result: {})", r.describe())
        });
        let why = format!(
            "the dispatched step {step} ended without writing a signal{how}; {}",
            last_lines(view)
        );
        t.end(Status::Exited, Decision::Exit, StopReason::AgentExited, why);
    }
}

/// A `--into shell` step that gave up on an API error waits for its backoff; one that failed
/// for a person waits until they acknowledged it (`run ack`). True when it waits.
fn held_for_retry(t: &mut Tick<'_>, step: &DispatchStep) -> bool {
    if let Some(at) = t.run.dispatch.retry_at.filter(|at| t.now < *at) {
        t.event.decide(
            Decision::Wait,
            format!(
                "{} gave up on an API error: typed again at {} (resume {} of {})",
                step.next,
                crate::time::format_time(at),
                t.run.dispatch.retries,
                t.run.spec.wait_limits.max_resumes
            ),
        );
        return true;
    }
    if t.run.waits.needs_person.is_some() {
        t.event.decide(
            Decision::Wait,
            format!(
                "{} is due, but a person must decide first (`autoctl run ack` when done)",
                step.next
            ),
        );
        return true;
    }
    false
}

/// Whether the pane takes the step now: a shell at its prompt, or the agent idle at its
/// empty input box; otherwise the tick waits and says what is in front.
fn pane_ready(t: &mut Tick<'_>, view: &PaneView, step: &DispatchStep) -> bool {
    let why = match t.run.spec.into {
        DispatchInto::Shell if view.shell_ready() => return true,
        DispatchInto::Agent if view.agent_ready() => return true,
        DispatchInto::Shell => format!(
            "{} is due, but the pane is not ready ({} in front: {})",
            step.next,
            view.foreground,
            view.classification.class.as_str()
        ),
        DispatchInto::Agent => format!(
            "{} is due, but the agent is not idle at its prompt: {}",
            step.next,
            view.agent_readiness()
        ),
    };
    t.event.decide(Decision::Wait, why);
    false
}

/// Into an agent the run launched whose SessionStart hook is wired, nothing is typed before
/// that hook fires or [`SESSION_START_WAIT`] has passed since the launch (Break: the tick
/// waits); past it the step is typed by the screen, with a reason saying so.
fn session_start_gate(
    t: &mut Tick<'_>,
    obs: &Observation,
    step: &DispatchStep,
) -> ControlFlow<(), Option<String>> {
    if t.run.spec.into != DispatchInto::Agent || obs.agent_start != AgentStart::Awaited {
        return ControlFlow::Continue(None);
    }
    let since = between(t.run.started_at, t.now);
    if t.now >= t.run.started_at && since < SESSION_START_WAIT {
        t.event.decide(
            Decision::Wait,
            format!(
                "{} is due and the agent's input box is drawn, but its SessionStart hook (wired) has not fired since the run launched it {:.1}s ago: it may not take keys yet, so nothing is typed before it does or {}s have passed",
                step.next,
                since.as_secs_f64(),
                SESSION_START_WAIT.as_secs()
            ),
        );
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(Some(format!(
        "its SessionStart hook is wired but did not fire within {}s of the launch (see `autoctl doctor`): typed by the screen",
        SESSION_START_WAIT.as_secs()
    )))
}

/// Type the step: remove the signal that asked for it, send the keys, and record the step
/// as dispatched with its text as the intent (cleared once the keys are confirmed).
fn type_step(t: &mut Tick<'_>, step: DispatchStep, text: String) {
    // The signal asking for this step goes before the keys: once they are typed the step may
    // write its own signal at any moment, and that one must never be the one removed.
    t.remove_signal();
    t.effects.push(Effect::Send {
        keys: typed_line(&text),
        if_unchanged: None,
    });
    t.run.dispatch.pending = None;
    t.run.dispatch.dispatched = Some(step);
    t.run.dispatch.dispatched_at = Some(t.now);
    t.run.dispatch.count = t.run.dispatch.count.saturating_add(1);
    t.run.dispatch.typing = Some(text.clone());
    t.run.dispatch.retry_at = None;
    t.run.agent_state.shell_seen = 0;
    if t.pace.grant.is_some() {
        // The step holds the governor's permit until its signal.
        t.run.governor.permit = Some(t.now);
    }
    t.event.decide(Decision::Dispatch, format!("typed: {text}"));
}

/// A `--into shell` step's own account of how it ended (its stream's `result`, issue 28): an
/// error only a person can clear is escalated at once, and the step is typed again once they
/// acknowledged it; an API error that clears by itself has the step typed again after a
/// backoff (1, 2, 4 … minutes), `--max-resumes` times per step, then a person is asked.
/// Returns whether it decided; a step that ran to its end is the caller's (no signal: it
/// exited).
fn shell_step_failed(t: &mut Tick<'_>, result: &crate::supervise::stream::StepResult) -> bool {
    use crate::supervise::stream::StepEnd;
    let kind = match result.outcome() {
        StepEnd::Done | StepEnd::Failed => return false,
        StepEnd::NeedsPerson(kind) => Some(kind),
        StepEnd::Transient => None,
    };
    let Some(step) = t.run.dispatch.dispatched.take() else {
        return false;
    };
    let max = t.run.spec.wait_limits.max_resumes;
    let why = format!("the step {} failed: {}", step.next, result.describe());
    match kind {
        Some(kind) => t.escalate(
            kind,
            format!("escalate: {why}; it cannot clear by itself: a person decides, and `autoctl run ack` types the step again"),
            false,
        ),
        None if t.run.dispatch.retries >= max => t.escalate(
            EscalationKind::GaveUp,
            format!("escalate: {why}, again after {} resumes this step (--max-resumes)", t.run.dispatch.retries),
            false,
        ),
        None => {
            // The delay the error names (Gemini's quota errors) when it is longer.
            let delay = result
                .retry_after()
                .map_or(wait::backoff(t.run.dispatch.retries), |named| {
                    named.max(wait::backoff(t.run.dispatch.retries))
                });
            let at = crate::time::plus(t.now, delay);
            t.run.dispatch.retries += 1;
            t.run.dispatch.retry_at = Some(at);
            t.event.decide(
                Decision::Wait,
                format!(
                    "{why}: it clears by itself, so it is typed again at {} (resume {} of {max})",
                    crate::time::format_time(at),
                    t.run.dispatch.retries
                ),
            );
        }
    }
    t.run.dispatch.pending = Some(step);
    t.run.agent_state.shell_seen = 0;
    true
}

/// The command for a step, or None (an error decided) when the template cannot render it.
fn render_step(t: &mut Tick<'_>, step: &DispatchStep, obs: &Observation) -> Option<String> {
    let mut vars = command::step_vars(
        &step.next,
        &step.checkpoint,
        Some(&t.run.spec.task_dir),
        Some(t.run.iteration_count + 1),
        obs.annotations,
    );
    if let Some(files) = &obs.step_files {
        vars.insert("settings", files.settings.clone());
        vars.insert("stream", files.next_stream.clone());
    }
    match command::render(&t.run.spec.command_template, &vars) {
        Ok(text) => Some(text),
        Err(err) => {
            t.event.decide(
                Decision::Error,
                format!("cannot render the command: {err:#}"),
            );
            None
        }
    }
}

/// How long after the launch the first dispatch into an agent whose SessionStart hook is
/// wired waits for that hook ([`AgentStart::Awaited`]) before the screen decides alone: Claude
/// Code starts in seconds (12 s under load 20 in the live tier); past this the hook is not
/// running (a broken PATH, a hook the agent skips) and waiting longer would wedge the run.
pub const SESSION_START_WAIT: Duration = Duration::from_secs(60);

/// How long after a dispatch's keys the screen may go on not showing them before a tick
/// believes they never arrived. Under load a pane echoes seconds late (a tick 0.7 s after the
/// typing, at load 20, saw Claude Code's input box still empty and typed the step a second
/// time); a recorded dispatch whose keys really were lost (its tick killed before them) is
/// typed this much later, once.
pub const DISPATCH_GRACE: Duration = Duration::from_secs(10);

/// Whether keys typed at `typed_at` may still be on their way to the screen at `now`: within
/// [`DISPATCH_GRACE`] of the typing. A clock that went back (`now` before the typing) proves
/// nothing either way: the screen decides, as with no time recorded.
pub fn keys_in_flight(typed_at: Option<Time>, now: Time) -> bool {
    typed_at.is_some_and(|at| at <= now && between(at, now) < DISPATCH_GRACE)
}

/// A dispatch whose intent was recorded (count and consumed signal saved) but whose typing
/// was never confirmed: the driver died between the two, or (into the agent, which the
/// driver never takes at its word) the keys were typed and the screen has not shown them
/// taken yet. The screen says how far it got:
/// - the command sits typed at the prompt without its Enter: submit it — a shell line is
///   cleared and typed again (a stall recovery, once per dispatch), the agent's input box
///   gets its Enter;
/// - the pane is ready and shows no trace of the command: the keys never arrived, so type
///   them now (the same dispatch: the count is not raised again);
///
///   but neither of these two within [`DISPATCH_GRACE`] of the typing ([`keys_in_flight`]):
///   absence is not evidence while the pane may still be echoing (the agent's input box that
///   shows the text may also be taking its Enter), so the tick waits; a retype starts the
///   grace again;
/// - otherwise the command went in (a program or the agent is busy with it, or its line is
///   on screen): the dispatch is confirmed and the consumed signal removed.
fn unconfirmed(t: &mut Tick<'_>, view: &PaneView, text: &str) {
    let step = t
        .run
        .dispatch
        .dispatched
        .as_ref()
        .map_or(String::new(), |d| d.next.clone());
    let (ready, half_typed) = typed_trace(t.run.spec.into, view, text);
    let in_flight = keys_in_flight(t.run.dispatch.dispatched_at, t.now);
    // A shell reads a line and its Enter in one read, and its driver takes the keys at their
    // word: a line left without its Enter is a killed tick's, whenever it is seen.
    let half_typed_in_flight = half_typed && t.run.spec.into == DispatchInto::Agent;
    if in_flight && (half_typed_in_flight || (!half_typed && ready && !view.shows_submitted(text)))
    {
        let since = t
            .run
            .dispatch
            .dispatched_at
            .map_or(0.0, |at| between(at, t.now).as_secs_f64());
        t.event.decide(
            Decision::Wait,
            format!(
                "the command for {step} was typed {since:.1}s ago and the pane does not show it taken yet: it may still be echoing, so nothing is typed again before {}s have passed: {text}",
                DISPATCH_GRACE.as_secs()
            ),
        );
        return;
    }
    if half_typed {
        submit_half_typed(t, view, text, &step);
        return;
    }
    if ready && !view.shows_submitted(text) {
        t.remove_signal();
        t.effects.push(Effect::Send {
            keys: typed_line(text),
            if_unchanged: None,
        });
        t.run.dispatch.dispatched_at = Some(t.now);
        t.event.decide(
            Decision::Dispatch,
            format!(
                "a recorded dispatch never reached the pane (a tick killed before its keys): typed it now (dispatch {} counted once): {text}",
                t.run.dispatch.count
            ),
        );
        return;
    }
    t.run.dispatch.typing = None;
    // The signal this dispatch consumed, if the crash left it behind.
    t.remove_signal();
    t.event.decide(
        Decision::Progress,
        format!("the typed command reached the pane: {step} is running ({text})"),
    );
}

/// What the pane shows of a typed command: whether it is ready for one (a shell prompt,
/// the agent idle at its input box), and whether the command sits there without its Enter
/// (the shell's prompt line ends with it; the agent's input box holds it).
fn typed_trace(into: DispatchInto, view: &PaneView, text: &str) -> (bool, bool) {
    match into {
        DispatchInto::Shell => (
            view.shell_ready(),
            view.foreground_is_shell && wait::half_typed(&view.waiting.last_line, text),
        ),
        DispatchInto::Agent => (
            view.agent_ready(),
            !view.foreground_is_shell
                && matches!(&view.waiting.input, Input::Typed(typed)
                    if typed.split_whitespace().eq(text.split_whitespace())),
        ),
    }
}

/// The command sits typed without its Enter: a shell line is cleared and typed again, the
/// agent's input box gets its Enter — once per dispatch and while a stall recovery is
/// left, else a person is asked. A person who acknowledged this very screen's escalation
/// (`run ack`, `run continue`) gets it submitted once more, whatever the budgets say.
fn submit_half_typed(t: &mut Tick<'_>, view: &PaneView, text: &str, step: &str) {
    let acknowledged = t.run.waits.acked_hash.as_deref() == Some(view.key.as_str());
    if !acknowledged
        && (t.run.waits.retyped == Some(t.run.dispatch.count) || !t.run.recovery_left())
    {
        let why = format!(
            "escalate: the command for {step} is half-typed at the prompt and was already submitted once (or no stall recovery is left): {}",
            view.waiting.last_line
        );
        t.escalate(EscalationKind::HalfTyped, why, false);
        return;
    }
    // Counted once its keys are all typed (see Retype): a driver killed midway leaves the
    // row as it was, and the next tick clears the line again.
    t.retype = Some(Retype { acknowledged });
    let (keys, how) = match t.run.spec.into {
        DispatchInto::Shell => (
            vec![
                Key::Key("C-u".to_string()),
                Key::Text(text.to_string()),
                Key::Key("Enter".to_string()),
            ],
            "cleared the line (C-u) and typed it again",
        ),
        DispatchInto::Agent => (vec![Key::Key("Enter".to_string())], "pressed Enter"),
    };
    t.remove_signal();
    t.effects.push(Effect::Send {
        keys,
        if_unchanged: None,
    });
    t.run.dispatch.dispatched_at = Some(t.now);
    t.event.decide(
        Decision::Dispatch,
        format!("the command was half-typed at the prompt (no Enter): {how}: {text}"),
    );
}

/// Seed 000's server recovery for one run, after a restart: remove a stale `.auto-stop` (it
/// would end the restarted agent at once), look at the pane (agent alive: keep watching;
/// shell in front: launch the agent again; pane gone: the run is lost), and reset the stall
/// baseline. Dispatch mode forgets the step in flight, so the next tick dispatches the
/// module's resume point (its signal, else its status).
pub fn recover(before: &Run, obs: &Observation, now: Time, options: &TickOptions) -> Outcome {
    let mut t = Tick::new(before, now, options);
    t.event.saw = Some(saw(before, obs));
    if lost_task_dir(&mut t, obs) {
        return finish(t);
    }
    // Every running row loses its stale stop, whatever the pane shows: it would end a
    // restarted agent at once, and a lost run's leftover would greet the next `run start`.
    if let StopObs::Requested(_) | StopObs::Unreadable(_) = obs.stop {
        t.effects.push(Effect::RemoveStop);
        t.event.decide(
            Decision::Progress,
            "removed a stale .auto-stop so the restarted agent does not exit at once",
        );
    }
    let Ok(Some(view)) = pane_seen(&mut t, obs) else {
        return finish(t);
    };
    t.run.stall.last_hash = None;
    t.run.stall.unchanged = 0;
    t.run.agent_state.shell_seen = 0;
    if !view.shell_ready() {
        t.event.decide(
            Decision::Progress,
            format!(
                "{} is running in the pane; monitoring resumes",
                view.foreground
            ),
        );
        return finish(t);
    }
    if t.run.spec.mode == Mode::Dispatch {
        // The step in flight died with the restart (its intent record with it): type again
        // what the module's files say comes next — its signal's next step, else (no
        // signal) its entry step.
        t.run.dispatch.typing = None;
        t.run.dispatch.dispatched = None;
        t.run.dispatch.pending = match &obs.signal {
            SignalObs::Valid { signal, .. } if signal.next != STOP => Some(DispatchStep {
                next: signal.next.clone(),
                checkpoint: signal.checkpoint_or_empty().to_string(),
            }),
            _ => None,
        };
        if t.run.spec.into == DispatchInto::Shell {
            let what = t
                .run
                .dispatch
                .pending
                .as_ref()
                .map_or("its entry step".to_string(), |p| p.next.clone());
            t.event.decide(
                Decision::Progress,
                format!("a shell is in front: the next tick dispatches {what}"),
            );
            return finish(t);
        }
    }
    // The agent itself exited (observe mode, or dispatch mode into the agent).
    match t.run.spec.launch_command.clone() {
        Some(command) => {
            t.effects.push(Effect::Send {
                keys: typed_line(&command),
                if_unchanged: None,
            });
            t.event.decide(
                Decision::Relaunch,
                format!("a shell is in front: launched the agent again: {command}"),
            );
        }
        None => t.escalate(
            EscalationKind::NoLaunch,
            "a shell is in front but the run has no launch command (start it with --launch): a person must start the agent, or the next tick ends the run as exited".to_string(),
            false,
        ),
    }
    finish(t)
}

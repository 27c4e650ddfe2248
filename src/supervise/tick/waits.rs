//! The tick's wait stage: run the wait core ([`crate::supervise::wait`]) on the capture,
//! keep the timeout clock paused exactly while a wait is legitimate, turn its verdict into
//! keys (a resume, one Esc) or an escalation, and at the end of the tick keep the run's
//! `needs-person` state and say what to announce ([`attend`]).

use crate::pane::Key;
use crate::pane::view::PaneView;
use crate::supervise::channels::Use;
use crate::supervise::run::{Mode, Run, Status, StopReason};
use crate::supervise::stall::{Recovery, Spend};
use crate::supervise::tick::notice::{EventKind, Notice};
use crate::supervise::wait::{
    self, Act, EscalationKind, HookFailure, NeedsPerson, Resume, Ruling, WaitObs,
};
use crate::time::{Time, between, parse_time};

use super::{Decision, Observation, RunAfter, Tick, TickEvent, answer_on, typed_line};

/// Why a person is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Escalation {
    pub kind: EscalationKind,
    pub why: String,
    pub stall_limit: bool,
}

/// What a planned wait answer changes once typed.
#[derive(Debug, Clone)]
pub(super) enum WaitAnswer {
    Resume(Resume),
    Esc,
}

impl WaitAnswer {
    /// Typed at most once even across a crash: recorded before it is typed.
    pub(super) fn once(&self) -> bool {
        matches!(self, WaitAnswer::Resume(_))
    }
}

/// The step the resume budget counts for: the loop's latest signal, and in dispatch mode
/// the step typed.
fn step_key(run: &Run) -> String {
    let signal = run
        .last_signal
        .as_ref()
        .map_or("", |s| crate::protocol::signal::signal_part(&s.fingerprint));
    match run.spec.mode {
        Mode::Dispatch => format!("{signal}#{}", run.dispatch.count),
        Mode::Observe => signal.to_string(),
    }
}

/// What a person is asked to decide when it is not what the screen shows: a StopFailure that
/// cannot clear by itself (a 401, a bill) is one decision however the screen around it is
/// redrawn — issue 29's live tier saw Claude Code's 401 screen settle 5 s after the failure
/// and the one failure escalated and announced twice (then, with the notification deduped,
/// three ticks decide `escalate` as the stall core met each redraw). `None`: the screen's own
/// key decides ([`Tick::key_of`]).
pub fn decision_key(failure: Option<&HookFailure>) -> Option<String> {
    let failure = failure?;
    let kind = failure.needs_person()?;
    let seed = format!(
        "stop-failure:{kind}:{}:{}",
        failure.kind,
        crate::time::format_time(failure.at)
    );
    // Shaped like a screen's key (16 hex digits), as notifications carry it.
    Some(format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(seed.as_bytes())
    ))
}

/// A needs-person ends when the screen asks something else: its key changed (a prompt
/// redrawn, or blinking its status dot, keeps its key; a standing StopFailure keeps its
/// [`decision_key`]).
pub(super) fn screen_changed(t: &mut Tick<'_>, view: &PaneView) {
    let key = t.key_of(view).to_string();
    let changed = t
        .run
        .waits
        .needs_person
        .as_ref()
        .is_some_and(|n| n.key().is_some_and(|k| k != key.as_str()));
    if changed {
        t.run.waits.needs_person = None;
        t.event.decide(
            Decision::Progress,
            "the screen changed: the run no longer needs a person",
        );
    }
}

/// Run the wait core and keep the timeout clock.
pub(super) fn wait_stage(
    t: &mut Tick<'_>,
    view: &PaneView,
    obs: &Observation,
    channel_use: &Use,
) -> Ruling {
    let c = &view.classification;
    let recovery_left = t.run.recovery_left();
    let step = step_key(&t.run);
    let inputs = &obs.waits;
    let key = t.key_of(view).to_string();
    let wait_obs = WaitObs {
        hash: &view.hash,
        key: &key,
        class: c.class,
        action: c.action,
        rule: c.rule.as_deref(),
        observe_only: c.observe_only || view.dead,
        screen: &view.waiting,
        classified_reset: c.reset_at.as_deref().and_then(parse_time),
        window: channel_use.window,
        failure: channel_use.failure.clone(),
        recorded: inputs.recorded.clone(),
        tool_hook_since: channel_use.tool_since,
        child_cpu: inputs.child_cpu,
        step,
        wait_weekly: t.options.channels.wait_weekly,
        recovery_left,
        paced: t.pace.paced.clone(),
    };
    let stall = &mut t.run.stall;
    let (state, verdict) = wait::rule(
        &t.run.waits,
        &wait_obs,
        t.now,
        &t.run.spec.wait_limits,
        &mut stall.clock_paused_since,
        &mut stall.clock_paused_seconds,
    );
    t.run.waits = state;
    verdict
}

/// Carry the verdict into the tick: report a wait, plan a resume or an Esc, escalate.
pub(super) fn apply(t: &mut Tick<'_>, verdict: Ruling, view: &PaneView) {
    let clock = if verdict.pauses {
        "the timeout clock is paused"
    } else {
        "the timeout clock runs"
    };
    match verdict.act {
        Act::None => {}
        Act::Wait => t
            .event
            .decide(Decision::Wait, format!("{}; {clock}", verdict.reason)),
        Act::Escalate { kind, stall_limit } => {
            // The stall heartbeat must not escalate the same prompt a second time.
            t.run.stall.escalated_hash = Some(t.key_of(view).to_string());
            t.escalate(kind, format!("escalate: {}", verdict.reason), stall_limit);
        }
        Act::Resume(resume) if t.answer.is_none() => {
            let answer = answer_on(view, typed_line(&t.run.spec.wait_limits.resume_text));
            let why = format!(
                "resume: {}: type {:?}",
                verdict.reason, t.run.spec.wait_limits.resume_text
            );
            t.plan(
                Decision::Resume,
                answer,
                None,
                Some(WaitAnswer::Resume(resume)),
                why,
            );
        }
        Act::Esc if t.answer.is_none() => {
            let answer = answer_on(view, vec![Key::Key("Escape".to_string())]);
            let recovery = Recovery {
                hash: view.hash.clone(),
                spend: Spend::Recovery,
                restarts_step_clock: None,
            };
            t.plan(
                Decision::Esc,
                answer,
                Some(recovery),
                Some(WaitAnswer::Esc),
                format!("esc: {}", verdict.reason),
            );
        }
        Act::Resume(_) | Act::Esc => t.event.decide(
            Decision::Progress,
            format!("{} (after this tick's answer)", verdict.reason),
        ),
    }
}

/// A planned wait answer was typed: count it and announce a resume.
pub(super) fn answered(run: &mut Run, event: &mut TickEvent, wait: &WaitAnswer, now: Time) {
    match wait {
        WaitAnswer::Resume(resume) => {
            wait::resumed(&mut run.waits, resume, now);
            event.notify.push(Notice {
                event: EventKind::Resume,
                reason: event.reasons.last().cloned().unwrap_or_default(),
                key: None,
                id: None,
            });
        }
        WaitAnswer::Esc => wait::escaped(&mut run.waits, now),
    }
}

/// At the end of a tick: enter, keep or leave `needs-person`, and say what to announce —
/// an escalation, a reminder every `--renotify`, a quota wait that began or ended, the run's
/// end.
pub(super) fn attend(t: &mut Tick<'_>) {
    let now = t.now;
    let ended = t.before.status.is_active() && !t.run.status.is_active();
    let mut notices = if ended {
        t.run.waits.needs_person = None;
        end_notices(&t.run, t.event.reasons.last().cloned().unwrap_or_default())
    } else if t.run.status.is_active() {
        needs_person_notices(t)
    } else {
        Vec::new()
    };
    if let Some(why) = t.restarted.clone() {
        notices.push(notice(EventKind::Restart, why, None));
    }
    notices.extend(quota_notice(t.before, &t.run, &t.event));
    if t.options.dry_run {
        return;
    }
    t.event.notify.extend(notices);
    t.event.run = RunAfter::of(&t.run, now);
}

/// A notice with no id yet (the outbox gives it one).
fn notice(event: EventKind, reason: String, key: Option<String>) -> Notice {
    Notice {
        event,
        reason,
        key,
        id: None,
    }
}

/// The run ended this tick: its end by status, and `stall-limit` when that is why.
fn end_notices(run: &Run, reason: String) -> Vec<Notice> {
    let kind = match run.status {
        Status::Finished => EventKind::Finish,
        Status::Lost => EventKind::Lost,
        Status::Exited => EventKind::Exit,
        Status::Stopped | Status::Running => EventKind::Stop,
    };
    let mut notices = vec![notice(kind, reason.clone(), None)];
    if run.stop_reason == Some(StopReason::StallLimit) {
        notices.push(notice(EventKind::StallLimit, reason, None));
    }
    notices
}

/// A running run: raise this tick's escalation (once per key), or remind of the one
/// standing every `--renotify`; the reasons say who has been needed since when.
fn needs_person_notices(t: &mut Tick<'_>) -> Vec<Notice> {
    let now = t.now;
    let mut notices = Vec::new();
    let (hash, key) = match t.event.saw.as_ref().map(|s| &s.pane) {
        Some(pane) => (pane.hash.clone(), pane.key.clone()),
        None => (None, None),
    };
    let key = t.decision_key.clone().or(key);
    if let Some(escalation) = t.escalation.clone() {
        // One escalation per decision: the same key (the prompt redrawn, its status dot
        // blinking) is the escalation already raised.
        let raised = t
            .run
            .waits
            .needs_person
            .as_ref()
            .is_some_and(|n| n.key() == key.as_deref().or(hash.as_deref()));
        if !raised {
            let key = key.or_else(|| hash.clone());
            t.run.waits.needs_person = Some(NeedsPerson {
                kind: escalation.kind.clone(),
                why: escalation.why.clone(),
                since: now,
                hash,
                key: key.clone(),
                announced_at: now,
                announcements: 1,
            });
            notices.push(notice(
                EventKind::Escalate,
                escalation.why.clone(),
                key.clone(),
            ));
            if escalation.stall_limit {
                notices.push(notice(EventKind::StallLimit, escalation.why, key));
            }
        }
    } else if let Some(needs) = t.run.waits.needs_person.as_mut()
        && between(needs.announced_at, now) >= t.options.waits.renotify
    {
        needs.announced_at = now;
        needs.announcements = needs.announcements.saturating_add(1);
        notices.push(notice(
            EventKind::NeedsPerson,
            format!(
                "still needs a person since {}: {}",
                crate::time::format_time(needs.since),
                needs.why
            ),
            needs.key().map(str::to_string),
        ));
    }
    if let Some(needs) = &t.run.waits.needs_person
        && t.escalation.is_none()
    {
        t.event.reasons.push(format!(
            "needs a person since {}: {}",
            crate::time::format_time(needs.since),
            needs.why
        ));
    }
    notices
}

/// A quota wait that began this tick (with its reason) or ended (with the tick's).
fn quota_notice(before: &Run, run: &Run, event: &TickEvent) -> Option<Notice> {
    let quota = |run: &Run| {
        run.waits
            .open
            .as_ref()
            .filter(|o| o.kind.is_quota())
            .map(|o| o.reason.clone())
    };
    match (quota(before), quota(run)) {
        (None, Some(reason)) => Some(notice(EventKind::QuotaWaitStart, reason, None)),
        (Some(_), None) => Some(notice(
            EventKind::QuotaWaitEnd,
            event.reasons.last().cloned().unwrap_or_default(),
            None,
        )),
        _ => None,
    }
}

//! The tick's governor stage ([`crate::supervise::governor`]): what the run's session says
//! about its account's windows, whether the run asks for a permit this tick (a step is due
//! in dispatch mode, or a resume after a usage limit or a pace), and the answer — a grant the
//! driver stores with the dispatch or resume record, or a hold the wait core keeps as a
//! `quota-paced` wait.

use crate::hook::statusline::StatusRecord;
use crate::pane::view::PaneView;
use crate::protocol::signal::STOP;
use crate::supervise::governor::{
    self, Ask, Asker, Event, Permit, Reading, ReadingSource, WindowKind,
};
use crate::supervise::run::{Mode, Run};
use crate::supervise::store::{AccountView, PermitAsk};
use crate::supervise::wait::{Paced, WaitKind};
use crate::time::Time;

use super::{Observation, Tick};

/// What the stage decided, for the rest of the tick.
#[derive(Debug, Clone, Default)]
pub(super) struct Stage {
    /// The governor holds the run: the wait core keeps it waiting.
    pub paced: Option<Paced>,
    /// The permit to store with this tick's dispatch or resume record.
    pub grant: Option<PermitAsk>,
}

/// Readings of the account's windows this run's session gives: its status line (both
/// windows, to the second), else a usage limit its StopFailure or its screen shows.
/// `window` is the typed channels' exhausted window ([`crate::supervise::channels::Use::window`]).
pub(super) fn readings(
    run: &Run,
    obs: &Observation,
    window: Option<crate::supervise::wait::Window>,
    now: Time,
) -> Vec<(WindowKind, Reading)> {
    let session = run.spec.session.clone();
    let mut out = Vec::new();
    if let Some(status) = obs.channels.as_ref().and_then(|t| t.status.as_ref()) {
        out.extend(statusline(status, &session));
    }
    if out.is_empty()
        && let Some(window) = window
    {
        // An exhausted window the hooks recorded (a StopFailure) or the status line named.
        let kind = if window.weekly {
            WindowKind::SevenDay
        } else {
            WindowKind::FiveHour
        };
        let source = match obs.channels.as_ref().and_then(|t| t.status.as_ref()) {
            Some(_) => ReadingSource::Statusline,
            None => ReadingSource::StopFailure,
        };
        out.push((kind, full(window.reset, source, now, &session)));
    }
    out
}

/// A usage limit the hooks recorded (StopFailure `rate_limit`, its message "You've hit your
/// limit · resets 10:42am (UTC)") with no status line: the window it names is used up, until
/// the reset its message names. Only a reset placed the same in any zone is taken (a zone
/// named in the message, or epoch seconds); one in the machine's zone is left to the banner
/// on the screen, which is read in it.
fn stop_failure(
    obs: &Observation,
    failure: Option<&crate::supervise::wait::HookFailure>,
    now: Time,
    session: &str,
) -> Option<(WindowKind, Reading)> {
    failure.filter(|f| f.usage_limit)?;
    let message = obs
        .channels
        .as_ref()?
        .hook
        .as_ref()?
        .error_message
        .as_deref()?;
    use crate::pane::reset::{Zone, reset_at};
    let utc = reset_at(message, now, Zone::Utc)?;
    let elsewhere = reset_at(
        message,
        now,
        Zone::Named(chrono_tz::Tz::Pacific__Kiritimati),
    )?;
    if utc != elsewhere {
        return None;
    }
    let weekly = message.to_lowercase().contains("week");
    Some(banner_like(
        utc.with_timezone(&chrono::Utc),
        weekly,
        ReadingSource::StopFailure,
        now,
        session,
    ))
}

fn banner_like(
    reset: Time,
    weekly: bool,
    source: ReadingSource,
    now: Time,
    session: &str,
) -> (WindowKind, Reading) {
    let kind = if weekly {
        WindowKind::SevenDay
    } else {
        WindowKind::FiveHour
    };
    (kind, full(reset, source, now, session))
}

/// A banner on the screen: the window it names is used up.
fn banner(reset: Time, weekly: bool, now: Time, session: &str) -> (WindowKind, Reading) {
    banner_like(reset, weekly, ReadingSource::Banner, now, session)
}

fn full(reset: Time, source: ReadingSource, now: Time, session: &str) -> Reading {
    Reading {
        used: 100.0,
        resets_at: reset,
        source,
        at: now,
        session: session.to_string(),
    }
}

fn statusline(status: &StatusRecord, session: &str) -> Vec<(WindowKind, Reading)> {
    let Some(limits) = &status.rate_limits else {
        return Vec::new();
    };
    [
        (WindowKind::FiveHour, limits.five_hour.as_ref()),
        (WindowKind::SevenDay, limits.seven_day.as_ref()),
    ]
    .into_iter()
    .filter_map(|(kind, window)| {
        let window = window?;
        Some((
            kind,
            Reading {
                used: window.used_percentage.clamp(0.0, 100.0),
                resets_at: window.reset_time()?,
                source: ReadingSource::Statusline,
                at: status.seen_at,
                session: session.to_string(),
            },
        ))
    })
    .collect()
}

/// What the run would ask for this tick, if anything: a step is due in dispatch mode, or a
/// resume is due (a usage limit's reset has passed, or the governor holds the resume).
fn wants(run: &Run, obs: &Observation, now: Time) -> Option<Ask> {
    let step_due = run.spec.mode == Mode::Dispatch
        && run.dispatch.typing.is_none()
        && (run.dispatch.pending.is_some()
            || (run.dispatch.dispatched.is_none()
                && matches!(&obs.entry, Some(Ok(step)) if step.next != STOP)));
    match run.waits.open.as_ref().map(|o| (o.kind, o.until)) {
        Some((WaitKind::UsageLimit, Some(until))) if until <= now => Some(Ask::Resume),
        Some((WaitKind::QuotaPaced, _)) if !step_due => Some(Ask::Resume),
        _ if step_due => Some(Ask::Dispatch),
        _ => None,
    }
}

/// Fold this tick's readings into the account, then ask the governor when the run wants
/// something. Events for the stored account are queued on the tick.
pub(super) fn stage(
    t: &mut Tick<'_>,
    obs: &Observation,
    pane: Option<&PaneView>,
    window: Option<crate::supervise::wait::Window>,
    failure: Option<&crate::supervise::wait::HookFailure>,
) -> Stage {
    let Some(view) = obs.account.as_ref() else {
        return Stage::default();
    };
    let options = t.options.governor;
    let mut state = view.state.clone();
    for (kind, reading) in this_ticks_readings(t, obs, pane, window, failure) {
        governor::observe(&mut state, kind, reading.clone());
        t.account_events.push(Event::Read(kind, reading));
    }
    if !options.enabled || !t.active() {
        return Stage::default();
    }
    let Some(ask) = wants(&t.run, obs, t.now) else {
        return Stage::default();
    };
    let asker = Asker {
        session: t.run.spec.session.clone(),
        priority: t.run.spec.priority,
        ask,
        waiting_since: t
            .run
            .waits
            .open
            .as_ref()
            .filter(|o| o.kind.is_quota())
            .map(|o| o.since),
        ended: (t.run.signals_seen > t.before.signals_seen).then_some(t.now),
    };
    match governor::permit(&state, &view.fleet, &asker, &options, t.now) {
        Permit::Grant { .. } => Stage {
            paced: None,
            grant: Some(PermitAsk { asker, options }),
        },
        Permit::Wait {
            until,
            reset,
            ahead,
            reason,
            escalate,
            hold,
        } => {
            let limits = &t.run.spec.wait_limits;
            let max_at = governor::max_wait(
                reset,
                limits.resume_margin,
                limits.resume_check,
                ahead,
                options.resume_burst,
            );
            if escalate {
                t.account_events.push(Event::WeeklyEscalated(reset));
                t.weekly_notice =
                    Some((format!("account {:?}: {reason}", t.run.spec.account), reset));
            }
            Stage {
                paced: Some(Paced {
                    until,
                    reset,
                    max_at,
                    reason: format!("quota-paced ({}): {reason}", hold.as_str()),
                }),
                grant: None,
            }
        }
    }
}

/// The account's readings this tick: the channels' (status line, app-server), else a
/// StopFailure's, else the limit banner on the screen — with the reset the wait core keeps
/// for the banner's phrase (read again after the reset, "resets 5:43am" would be
/// tomorrow's), else the banner's own (a time of day read just after it passed is the reset
/// that just happened).
fn this_ticks_readings(
    t: &Tick<'_>,
    obs: &Observation,
    pane: Option<&PaneView>,
    window: Option<crate::supervise::wait::Window>,
    failure: Option<&crate::supervise::wait::HookFailure>,
) -> Vec<(WindowKind, Reading)> {
    let mut seen = readings(&t.run, obs, window, t.now);
    if seen.is_empty()
        && let Some(reading) = stop_failure(obs, failure, t.now, &t.run.spec.session)
    {
        seen.push(reading);
    }
    if seen.is_empty()
        && let Some(limit) = pane.and_then(|v| v.waiting.limit.as_ref())
    {
        let kept = t
            .before
            .waits
            .open
            .as_ref()
            .filter(|o| o.kind.is_quota())
            .and_then(|o| o.reset);
        let read = limit
            .reset_at
            .map(|r| crate::supervise::wait::time_of_day_reset(r, t.now));
        if let Some(reset) = kept.or(read) {
            seen.push(banner(reset, limit.weekly, t.now, &t.run.spec.session));
        }
    }
    seen
}

/// A session that left its quota wait by itself (Claude Code continues on its own after a
/// reset): counted as released, and its step holds a permit, as if autoctl had resumed it.
pub(super) fn self_resumed(t: &mut Tick<'_>, resumed_by_us: bool) {
    let was = t
        .before
        .waits
        .open
        .as_ref()
        .is_some_and(|o| o.kind.is_quota());
    let is = t.run.waits.open.as_ref().is_some_and(|o| o.kind.is_quota());
    // This tick's reading (a wait closes only on a tick that saw the pane, which reads it).
    let working = t.event.state.as_ref().is_some_and(|r| r.state.working());
    if was && !is && !resumed_by_us && working && t.active() {
        t.account_events.push(Event::SelfResumed(t.now));
        t.run.governor.permit = Some(t.now);
    }
}

/// The account view a driver gives a tick, kept current across the runs it ticks: what a
/// tick stored (a permit granted, a wait) and its events are folded in as the registry
/// folds them, so the next run of the batch counts this one's release in the burst.
pub fn fold(
    view: &mut AccountView,
    before: &Run,
    after: &Run,
    granted: Option<&PermitAsk>,
    events: &[Event],
    now: Time,
) {
    if let Some(ask) = granted {
        // As the registry did in the record's transaction, on the state before this run's
        // readings were folded in (the record came first).
        let answer = governor::permit(&view.state, &view.fleet, &ask.asker, &ask.options, now);
        governor::grant(&mut view.state, &answer, now);
    }
    governor::apply(&mut view.state, events, now);
    let session = &before.spec.session;
    view.fleet.in_flight.retain(|s| s != session);
    view.fleet.waiting.retain(|w| w.session != *session);
    let mine = governor::Fleet::of(std::iter::once(after));
    view.fleet.in_flight.extend(mine.in_flight);
    view.fleet.waiting.extend(mine.waiting);
}

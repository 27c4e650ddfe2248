//! The wait core, driven with screens and a fake clock: every kind of wait ends in a resume
//! or an escalation within its maximum, and (proptest) over random observation sequences no
//! wait outlives its maximum, no reset yields two resumes, and the timeout clock is paused
//! exactly during legitimate waits, never past their maximum.

use super::*;
use crate::pane::waiting::{AutoContinue, Input, Limit};
use chrono::DateTime;
use proptest::prelude::*;

fn at(secs: i64) -> Time {
    DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
}

fn min(m: i64) -> Time {
    at(m * 60)
}

fn idle() -> Waiting {
    Waiting {
        input: Input::Empty,
        ..Waiting::default()
    }
}

fn working() -> Waiting {
    Waiting {
        input: Input::Empty,
        busy: true,
        ..Waiting::default()
    }
}

fn gave_up() -> Waiting {
    Waiting {
        error: Some("API Error: Repeated 529 Overloaded errors.".into()),
        ..idle()
    }
}

fn limit(reset_minute: i64, weekly: bool) -> Waiting {
    Waiting {
        limit: Some(Limit {
            text: "You've hit your 5-hour limit · resets 12:50pm (UTC)".into(),
            weekly,
            reset_text: Some(format!("resets at minute {reset_minute}")),
            reset_at: Some(min(reset_minute)),
        }),
        auto_continue: AutoContinue::Cancelled,
        ..idle()
    }
}

fn retrying() -> Waiting {
    Waiting {
        retrying: Some("API error · Retrying in 4s · attempt 1/10".into()),
        ..working()
    }
}

/// What a tick saw: `screen` (its hash, its class) on step `step`, nothing else known.
fn seen<'a>(hash: &'a str, class: Class, screen: &'a Waiting, step: &str) -> WaitObs<'a> {
    WaitObs {
        hash,
        key: hash,
        class,
        action: Action::None,
        rule: None,
        observe_only: false,
        screen,
        classified_reset: None,
        window: None,
        failure: None,
        recorded: None,
        tool_hook_since: None,
        child_cpu: None,
        step: step.into(),
        wait_weekly: false,
        recovery_left: true,
        paced: None,
    }
}

struct Sim {
    state: WaitState,
    limits: WaitLimits,
    typed: Vec<(Time, Act)>,
    wait_weekly: bool,
    recovery_left: bool,
    /// What the hooks recorded (a StopFailure, a quota-wait record), for the next ticks.
    failure: Option<HookFailure>,
    recorded: Option<Recorded>,
}

impl Sim {
    fn new() -> Sim {
        Sim {
            state: WaitState::default(),
            limits: WaitLimits::default(),
            typed: Vec::new(),
            wait_weekly: false,
            recovery_left: true,
            failure: None,
            recorded: None,
        }
    }

    /// One tick on `screen` (its hash, its class); a resume or an Esc is typed, and an
    /// escalation raises needs-person as the tick does.
    fn tick(&mut self, screen: &Waiting, hash: &str, now: Time) -> Ruling {
        let class = if screen.busy {
            Class::Working
        } else {
            Class::Idle
        };
        let obs = WaitObs {
            failure: self.failure.clone(),
            recorded: self.recorded.clone(),
            wait_weekly: self.wait_weekly,
            recovery_left: self.recovery_left,
            paced: None,
            ..seen(hash, class, screen, "s1")
        };
        self.apply(&obs, now)
    }

    /// [`Sim::tick`] on an observation made by the caller.
    fn apply(&mut self, obs: &WaitObs<'_>, now: Time) -> Ruling {
        let hash = obs.hash;
        let (mut next, verdict) = decide(&self.state, obs, now, &self.limits);
        match &verdict.act {
            Act::Resume(resume) => {
                resumed(&mut next, resume, now);
                self.typed.push((now, verdict.act.clone()));
            }
            Act::Esc => {
                escaped(&mut next, now);
                self.typed.push((now, verdict.act.clone()));
            }
            Act::Escalate { kind, .. } => {
                next.needs_person = Some(NeedsPerson {
                    kind: kind.clone(),
                    why: verdict.reason.clone(),
                    since: now,
                    hash: Some(hash.to_string()),
                    key: Some(hash.to_string()),
                    announced_at: now,
                    announcements: 1,
                });
            }
            _ => {}
        }
        if next
            .needs_person
            .as_ref()
            .is_some_and(|n| n.hash.as_deref() != Some(hash))
        {
            next.needs_person = None;
        }
        self.state = next;
        verdict
    }
}

fn is_escalate(v: &Ruling) -> bool {
    matches!(v.act, Act::Escalate { .. })
}

#[test]
fn the_table_has_one_row_per_kind_and_the_readme_shows_it() {
    for kind in WaitKind::ALL {
        assert_eq!(kind.row().kind, kind);
    }
    assert_eq!(TABLE.len(), WaitKind::ALL.len());
    let readme = include_str!("../../../docs/waits.md");
    let table = table_markdown();
    assert!(
        readme.contains(&table),
        "docs/waits.md's \"Every wait ends\" section must hold the wait table as the code has it:\n{table}"
    );
}

#[test]
fn a_give_up_is_resumed_with_growing_backoff_then_escalated() {
    let mut sim = Sim::new();
    let mut resumes = Vec::new();
    let mut minute = 0;
    // Each round: the agent gives up, autoctl waits its backoff and resumes, the agent works
    // for a minute and gives up again.
    for round in 0..6 {
        let hash = format!("gave-up-{round}");
        let start = minute;
        loop {
            let v = sim.tick(&gave_up(), &hash, min(minute));
            match v.act {
                Act::Wait => assert!(v.pauses, "{}", v.reason),
                Act::Resume(_) => {
                    resumes.push(minute - start);
                    break;
                }
                Act::Escalate { kind, .. } => {
                    assert_eq!(kind, EscalationKind::GaveUp);
                    assert_eq!(round, 5);
                    break;
                }
                _ => panic!("{v:?}"),
            }
            minute += 1;
            assert!(minute < 500, "no end");
        }
        minute += 1;
        sim.tick(&working(), "busy", min(minute));
        minute += 1;
    }
    assert_eq!(resumes, [1, 2, 4, 8, 16]);
    assert_eq!(sim.state.resumes, 5);
    // A new step restores the budget.
    let obs_step = |sim: &mut Sim, m| {
        let screen = gave_up();
        let obs = seen("g", Class::Idle, &screen, "s2");
        decide(&sim.state, &obs, min(m), &sim.limits)
    };
    let (state, v) = obs_step(&mut sim, minute);
    assert_eq!(state.resumes, 0);
    assert_eq!(v.act, Act::Wait);
}

#[test]
fn a_usage_limit_resumes_once_after_its_reset_and_never_before() {
    let mut sim = Sim::new();
    // Limit hit at minute 0, resets at minute 120.
    for minute in 0..121 {
        let v = sim.tick(&limit(120, false), "limit", min(minute));
        assert_eq!(v.act, Act::Wait, "minute {minute}: {}", v.reason);
        assert!(v.pauses);
    }
    // Reset + margin (1m): resume.
    let v = sim.tick(&limit(120, false), "limit", min(121));
    assert!(
        matches!(v.act, Act::Resume(Resume { reset: Some(r), .. }) if r == min(120)),
        "{v:?}"
    );
    // The screen still shows the limit (the resume did not take yet): no second resume,
    // and after --resume-check a person is asked.
    let mut escalated = None;
    for minute in 122..140 {
        let v = sim.tick(&limit(120, false), "limit-after", min(minute));
        assert!(!matches!(v.act, Act::Resume(_)), "minute {minute}");
        if is_escalate(&v) {
            escalated.get_or_insert(minute);
        }
    }
    assert_eq!(escalated, Some(126));
    // The agent works, hits the limit again with the next reset: one more resume, for it.
    sim.tick(&working(), "busy", min(140));
    let mut resumed_at = Vec::new();
    for minute in 141..460 {
        let v = sim.tick(&limit(440, false), "limit-2", min(minute));
        if matches!(v.act, Act::Resume(_)) {
            resumed_at.push(minute);
        }
    }
    assert_eq!(resumed_at, [441]);
    assert_eq!(sim.typed.len(), 2);
}

/// Claude Code's own automatic continue goes first (issue 28: it fired in detached tmux at
/// the reset +64 s, +84 s, +94 s with 2.1.332): while it is armed, autoctl's resume waits
/// [`AUTO_CONTINUE_GRACE`] after the reset, and when the agent resumed by itself nothing is
/// ever typed; when it never fires, autoctl resumes once, as the fallback.
#[test]
fn claude_codes_automatic_continue_goes_first() {
    let armed = Waiting {
        auto_continue: AutoContinue::Armed,
        ..limit(120, false)
    };
    // It fires at the reset +84 s: the agent works, then replies (the limit is gone).
    let mut sim = Sim::new();
    for secs in (0..=(120 * 60 + 80)).step_by(20) {
        let v = sim.tick(&armed, "armed", at(secs));
        assert_eq!(v.act, Act::Wait, "{secs}s: {}", v.reason);
    }
    sim.tick(&working(), "resumed", at(120 * 60 + 90));
    for minute in 122..200 {
        let v = sim.tick(&idle(), "replied", min(minute));
        assert_eq!(v.act, Act::None, "minute {minute}: {}", v.reason);
    }
    assert!(sim.typed.is_empty(), "{:?}", sim.typed);
    // It never fires: one resume at the reset + 4m, not at the reset + --resume-margin.
    let mut sim = Sim::new();
    let mut resumed = Vec::new();
    for minute in 0..140 {
        let v = sim.tick(&armed, "armed", min(minute));
        if matches!(v.act, Act::Resume(_)) {
            resumed.push(minute);
        }
    }
    assert_eq!(resumed, [124]);
    // Cancelled (Esc): the margin alone, as before.
    let mut sim = Sim::new();
    let first = (0..140).find(|m| {
        matches!(
            sim.tick(&limit(120, false), "c", min(*m)).act,
            Act::Resume(_)
        )
    });
    assert_eq!(first, Some(121));
}

#[test]
fn the_reset_read_first_is_kept_while_the_banner_stays() {
    let mut sim = Sim::new();
    sim.tick(&limit(60, false), "limit", min(0));
    // After the reset, the same phrase reads as tomorrow's: the reset stays minute 60.
    let mut tomorrow = limit(60, false);
    tomorrow.limit.as_mut().unwrap().reset_at = Some(min(60 + 24 * 60));
    let v = sim.tick(&tomorrow, "limit", min(61));
    assert!(matches!(v.act, Act::Resume(_)), "{v:?}");
}

#[test]
fn weekly_limits_and_billing_escalate_at_once_unless_weekly_waits_are_asked_for() {
    let mut sim = Sim::new();
    let v = sim.tick(&limit(3 * 24 * 60, true), "weekly", min(0));
    assert!(
        matches!(
            v.act,
            Act::Escalate {
                kind: EscalationKind::WeeklyLimit,
                ..
            }
        ),
        "{v:?}"
    );
    assert!(!v.pauses);
    // Once: the same screen stays quiet.
    let v = sim.tick(&limit(3 * 24 * 60, true), "weekly", min(1));
    assert_eq!(v.act, Act::None);
    let mut sim = Sim::new();
    sim.wait_weekly = true;
    let v = sim.tick(&limit(3 * 24 * 60, true), "weekly", min(0));
    assert_eq!(v.act, Act::Wait, "{}", v.reason);
    // Claude Code's limit menu with a paid option ("Continue with usage credits").
    let mut bill = limit(60, false);
    bill.billing = Some("usage credits".into());
    bill.menu = true;
    let v = Sim::new().tick(&bill, "bill", min(0));
    assert!(matches!(
        v.act,
        Act::Escalate {
            kind: EscalationKind::Billing,
            ..
        }
    ));
    // Words of billing with no reset to wait for: a person's.
    let mut no_reset = bill.clone();
    no_reset.menu = false;
    no_reset.limit.as_mut().unwrap().reset_at = None;
    let v = Sim::new().tick(&no_reset, "no-reset", min(0));
    assert!(
        matches!(
            v.act,
            Act::Escalate {
                kind: EscalationKind::Billing,
                ..
            }
        ),
        "{v:?}"
    );
}

/// Codex 0.171's banner names a paid way out beside its reset ("… to purchase more credits or
/// try again at 1:18 PM."): nothing to pick, so the reset is waited for and the agent resumed
/// once after it, as for any limit.
#[test]
fn a_limit_banner_naming_credits_beside_its_reset_is_waited_out() {
    let mut banner = limit(60, false);
    banner.billing = Some("purchase more credits".into());
    banner.auto_continue = AutoContinue::None;
    let mut sim = Sim::new();
    let v = sim.tick(&banner, "codex-limit", min(0));
    assert_eq!(v.act, Act::Wait, "{}", v.reason);
    assert!(v.pauses);
    let v = sim.tick(&banner, "codex-limit", min(30));
    assert_eq!(v.act, Act::Wait, "{}", v.reason);
    let mut resumes = 0;
    for minute in 60..70 {
        if matches!(
            sim.tick(&banner, "codex-limit", min(minute)).act,
            Act::Resume(_)
        ) {
            resumes += 1;
        }
    }
    assert_eq!(resumes, 1);
    // Read again in the reset's own minute, without its phrase (Codex: the screen rules place
    // "try again at 5:10 PM"), the time rolls over to tomorrow: still the same reset.
    let mut sim = Sim::new();
    let mut codex = banner.clone();
    codex.limit.as_mut().unwrap().reset_text = None;
    let v = sim.tick(&codex, "codex", min(0));
    assert_eq!(v.act, Act::Wait, "{}", v.reason);
    let mut rolled = codex.clone();
    rolled.limit.as_mut().unwrap().reset_at = Some(min(60 + 24 * 60));
    // Ticks every 2 s from the reset on, until the resume (the agent then leaves the limit).
    let resumed = (60 * 60..70 * 60).step_by(2).find(|second| {
        let v = sim.tick(&rolled, "codex", at(*second));
        assert!(!is_escalate(&v), "{}: {}", second, v.reason);
        matches!(v.act, Act::Resume(_))
    });
    let resumed = resumed.expect("resumed");
    // Codex keeps the old banner above the new turn: read 2 s after the resume (a working
    // screen in between closed the wait) it is still the reset resumed past, not a new limit
    // a day away (live, 2026-11-28 19:35:02, it was
    // escalated as "resets tomorrow, beyond --max-quota-wait").
    let working = Waiting {
        busy: true,
        ..Waiting::default()
    };
    sim.tick(&working, "codex-working", at(resumed + 1));
    let v = sim.tick(&rolled, "codex", at(resumed + 2));
    assert!(!is_escalate(&v), "{}", v.reason);
    assert!(!matches!(v.act, Act::Resume(_)), "{}", v.reason);
}

#[test]
fn a_limit_without_a_reset_and_the_agents_retries_end_at_their_maximum() {
    let mut sim = Sim::new();
    let mut unknown = limit(0, false);
    unknown.limit.as_mut().unwrap().reset_at = None;
    unknown.limit.as_mut().unwrap().reset_text = None;
    let mut end = None;
    for minute in 0..400 {
        let v = sim.tick(&unknown, "unknown", min(minute));
        if is_escalate(&v) {
            end = Some(minute);
            break;
        }
        assert!(v.pauses);
    }
    assert_eq!(end, Some(6 * 60));
    let mut sim = Sim::new();
    let mut end = None;
    for minute in 0..60 {
        let v = sim.tick(&retrying(), "retry", min(minute));
        if is_escalate(&v) {
            end = Some(minute);
            break;
        }
        assert!(v.pauses);
    }
    assert_eq!(end, Some(15));
}

#[test]
fn a_wedged_stream_gets_one_esc_then_the_resume_at_the_idle_prompt() {
    let mut sim = Sim::new();
    for minute in 0..10 {
        let v = sim.tick(&working(), "wedged", min(minute));
        assert_eq!(v.act, Act::None, "minute {minute}: {}", v.reason);
        assert!(!v.pauses, "a stall does not pause the clock");
    }
    let v = sim.tick(&working(), "wedged", min(10));
    assert_eq!(v.act, Act::Esc, "{}", v.reason);
    // Still working a moment later: no second Esc.
    let v = sim.tick(&working(), "wedged", at(10 * 60 + 20));
    assert_eq!(v.act, Act::Wait);
    let v = sim.tick(&idle(), "idle", min(11));
    assert!(
        matches!(
            v.act,
            Act::Resume(Resume {
                after_esc: true,
                ..
            })
        ),
        "{v:?}"
    );
    assert_eq!(sim.typed.len(), 2);
    // No idle prompt after the Esc: a person is asked.
    let mut sim = Sim::new();
    for minute in 0..=10 {
        sim.tick(&working(), "wedged", min(minute));
    }
    let mut end = None;
    for minute in 11..20 {
        if is_escalate(&sim.tick(&working(), "wedged", min(minute))) {
            end = Some(minute);
            break;
        }
    }
    assert_eq!(end, Some(12));
    // Budget spent: escalate at once, as a stall limit.
    let mut sim = Sim::new();
    sim.recovery_left = false;
    for minute in 0..10 {
        sim.tick(&working(), "wedged", min(minute));
    }
    let v = sim.tick(&working(), "wedged", min(10));
    assert!(
        matches!(
            v.act,
            Act::Escalate {
                stall_limit: true,
                ..
            }
        ),
        "{v:?}"
    );
}

#[test]
fn a_running_tool_is_no_stall_but_has_its_maximum() {
    let mut sim = Sim::new();
    let tool = Waiting {
        tool_running: true,
        ..working()
    };
    let mut end = None;
    for minute in 0..40 {
        let v = sim.tick(&tool, "tool", min(minute));
        assert_ne!(v.act, Act::Esc);
        assert!(!v.pauses);
        if is_escalate(&v) {
            end = Some(minute);
            break;
        }
    }
    assert_eq!(end, Some(30));
}

#[test]
fn child_cpu_that_moves_is_a_running_tool() {
    let limits = WaitLimits::default();
    let screen = working();
    let mut state = WaitState::default();
    for minute in 0..20 {
        let obs = WaitObs {
            child_cpu: Some(100 * minute as u64),
            ..seen("same", Class::Working, &screen, "")
        };
        let (next, v) = decide(&state, &obs, min(minute), &limits);
        assert_ne!(v.act, Act::Esc, "minute {minute}");
        state = next;
    }
}

#[test]
fn the_status_lines_window_is_the_reset_to_the_second() {
    let limits = WaitLimits::default();
    let screen = limit(60, false);
    let exact = at(60 * 60 + 37);
    let obs = WaitObs {
        action: Action::Wait,
        window: Some(Window {
            reset: exact,
            weekly: false,
        }),
        ..seen("limit", Class::Quota, &screen, "")
    };
    let (state, v) = decide(&WaitState::default(), &obs, min(0), &limits);
    assert_eq!(v.act, Act::Wait);
    assert_eq!(state.open.unwrap().reset, Some(exact));
    let (_, v) = decide(
        &WaitState::default(),
        &obs,
        plus(exact, limits.resume_margin),
        &limits,
    );
    assert!(matches!(v.act, Act::Resume(_)));
}

#[test]
fn the_clock_closes_a_pause_at_the_maximum() {
    let mut since = None;
    let mut waited = 0;
    settle_clock(&mut since, &mut waited, true, Some(min(10)), min(0));
    assert!(since.is_some());
    settle_clock(&mut since, &mut waited, true, Some(min(10)), min(5));
    // The tick after the maximum: the pause ends at the maximum, not at this tick.
    settle_clock(&mut since, &mut waited, false, Some(min(10)), min(25));
    assert_eq!((since, waited), (None, 600));
}

/// One tick of the wait core on an unknown screen (`rule` decided it; `observe_only` when a
/// program other than the agent is in front).
fn unknown_tick(
    sim: &mut Sim,
    hash: &str,
    rule: Option<&str>,
    observe_only: bool,
    now: Time,
) -> Ruling {
    let screen = Waiting {
        tail: vec!["Python 3.11.2 (main) on linux".into(), ">>>".into()],
        ..Waiting::default()
    };
    let obs = WaitObs {
        rule,
        observe_only,
        ..seen(hash, Class::Unknown, &screen, "s1")
    };
    sim.apply(&obs, now)
}

#[test]
fn an_unknown_screen_is_escalated_once_after_unknown_after_with_its_last_lines() {
    for (rule, observe_only) in [(None, false), (Some("repl-prompt"), true)] {
        let mut sim = Sim::new();
        // Below the maximum: nothing to report, nothing typed, the clock runs.
        for m in [0, 1, 2] {
            let v = unknown_tick(&mut sim, "u", rule, observe_only, min(m));
            assert_eq!(v.act, Act::None, "{rule:?} minute {m}: {}", v.reason);
            assert!(!v.pauses);
            let open = sim
                .state
                .open
                .as_ref()
                .expect("an unknown-screen wait is open");
            assert_eq!(open.kind, WaitKind::UnknownScreen);
            assert_eq!(open.max_at, min(3));
        }
        // At the maximum: escalated, with the screen's last non-blank lines.
        let v = unknown_tick(&mut sim, "u", rule, observe_only, min(3));
        assert!(
            matches!(
                v.act,
                Act::Escalate {
                    kind: EscalationKind::UnknownScreen,
                    ..
                }
            ),
            "{v:?}"
        );
        assert!(v.reason.contains("\">>>\""), "{}", v.reason);
        assert!(v.reason.contains("--unknown-after 3m"), "{}", v.reason);
        // Once: the same screen later is not escalated again.
        for m in [4, 30, 300] {
            let v = unknown_tick(&mut sim, "u", rule, observe_only, min(m));
            assert!(!is_escalate(&v), "{rule:?} minute {m}: {v:?}");
        }
        // A changed screen starts its own clock.
        let v = unknown_tick(&mut sim, "u2", rule, observe_only, min(301));
        assert_eq!(v.act, Act::None);
        assert_eq!(sim.state.open.as_ref().map(|o| o.since), Some(min(301)));
    }
}

#[test]
fn another_program_in_front_is_never_escalated_for_being_quiet() {
    // A dispatched command (`claude -p …`) may print nothing for an hour.
    let mut sim = Sim::new();
    for m in [0, 3, 10, 60] {
        let v = unknown_tick(&mut sim, "quiet", None, true, min(m));
        assert_eq!(v.act, Act::None, "minute {m}: {}", v.reason);
    }
    assert_eq!(sim.state.open, None);
}

#[test]
fn state_and_limits_round_trip_and_bad_json_starts_fresh() {
    let mut sim = Sim::new();
    sim.tick(&limit(60, false), "limit", min(0));
    let json = sim.state.to_json();
    assert_eq!(WaitState::from_json(&json), sim.state);
    assert_eq!(WaitState::from_json("{"), WaitState::default());
    assert_eq!(WaitState::from_json("{}"), WaitState::default());
    let limits = WaitLimits {
        max_resumes: 2,
        ..WaitLimits::default()
    };
    assert_eq!(WaitLimits::from_json(&limits.to_json()), limits);
    assert_eq!(WaitLimits::from_json("{}"), WaitLimits::default());
}

/// A StopFailure the hooks recorded at minute 0: a transient error (`rate_limit` of a 429,
/// `server_error` of a 529) or a usage limit (its banner said so).
fn failure(kind: &str, usage_limit: bool) -> HookFailure {
    HookFailure {
        kind: kind.into(),
        usage_limit,
        credit: false,
        at: min(0),
    }
}

#[test]
fn a_stop_failure_on_an_idle_screen_is_resumed_with_backoff_then_escalated() {
    // StopFailure `rate_limit` without a usage banner is a 429 the agent gave up on: the
    // screen shows only the idle prompt, and an idle agent never finishes another turn.
    let mut sim = Sim::new();
    sim.failure = Some(failure("rate_limit", false));
    let mut resumes = Vec::new();
    let mut end = None;
    for minute in 0..120 {
        let v = sim.tick(&idle(), "idle", min(minute));
        match &v.act {
            Act::Resume(r) => {
                assert_eq!(
                    (r.kind, r.counts, r.reset),
                    (WaitKind::StopFailure, true, None)
                );
                resumes.push(minute);
            }
            Act::Wait => assert!(v.pauses, "minute {minute}: {}", v.reason),
            Act::Escalate { kind, .. } => {
                assert_eq!(*kind, EscalationKind::GaveUp);
                end = Some(minute);
                break;
            }
            other => panic!("minute {minute}: {other:?} ({})", v.reason),
        }
    }
    // 1, 2, 4, 8, 16 minutes apart (each counted from the resume before it), then a person.
    assert_eq!(resumes, [1, 3, 7, 15, 31]);
    assert_eq!(end, Some(32));
    assert!(sim.state.open.is_none(), "the clock runs again");
}

#[test]
fn a_stop_failure_resume_that_worked_is_not_repeated() {
    let mut sim = Sim::new();
    sim.failure = Some(failure("server_error", false));
    assert_eq!(sim.tick(&idle(), "idle", min(0)).act, Act::Wait);
    assert!(matches!(
        sim.tick(&idle(), "idle", min(1)).act,
        Act::Resume(_)
    ));
    // The resume started a turn: the hooks say working (no failure), then the turn ends.
    sim.failure = None;
    assert_eq!(sim.tick(&working(), "work0", min(2)).act, Act::None);
    for minute in 3..60 {
        let v = sim.tick(&idle(), "idle2", min(minute));
        assert_eq!(v.act, Act::None, "minute {minute}: {}", v.reason);
        assert!(!v.pauses);
    }
    assert_eq!(sim.typed.len(), 1);
}

#[test]
fn a_stop_failure_usage_limit_without_a_reset_waits_at_most_max_quota_wait() {
    // StopFailure `rate_limit` whose banner says "You've hit your limit" with no time the
    // hooks could read, and the quota-wait record `hook stop-failure` wrote without one.
    let mut sim = Sim::new();
    sim.failure = Some(failure("rate_limit", true));
    sim.recorded = Some(Recorded {
        reset: None,
        why: "usage limit (StopFailure rate_limit)".into(),
    });
    let mut end = None;
    for minute in (0..500).step_by(5) {
        let v = sim.tick(&idle(), "idle", min(minute));
        if is_escalate(&v) {
            assert!(
                matches!(
                    v.act,
                    Act::Escalate {
                        kind: EscalationKind::QuotaWaitMax,
                        ..
                    }
                ),
                "{v:?}"
            );
            end = Some(minute);
            break;
        }
        assert_eq!(v.act, Act::Wait, "minute {minute}: {}", v.reason);
        assert!(v.pauses);
        assert_eq!(
            sim.state.open.as_ref().unwrap().kind,
            WaitKind::UsageLimitUnknown
        );
    }
    assert_eq!(end, Some(6 * 60), "--max-quota-wait 6h");
    assert!(sim.typed.is_empty(), "nothing typed without a reset time");
}

#[test]
fn a_recorded_reset_resumes_once_after_it_and_a_limit_that_stays_is_escalated() {
    let record = Recorded {
        reset: Some(min(30)),
        why: "usage limit until 30".into(),
    };
    for resume_works in [true, false] {
        let mut sim = Sim::new();
        sim.failure = Some(failure("rate_limit", true));
        sim.recorded = Some(record.clone());
        let mut outcome = Vec::new();
        for minute in 0..60 {
            let v = sim.tick(&idle(), "idle", min(minute));
            match &v.act {
                Act::Resume(r) => {
                    assert_eq!(r.reset, Some(min(30)));
                    outcome.push((minute, "resume".to_string()));
                    if resume_works {
                        // The turn finished: `hook stop` removed the record.
                        sim.failure = None;
                        sim.recorded = None;
                    }
                }
                Act::Escalate { kind, .. } => outcome.push((minute, kind.to_string())),
                Act::Wait => assert!(v.pauses && minute < 36, "minute {minute}"),
                // After the resume: no wait, or (the limit stayed) a person is asked once.
                Act::None => assert!(
                    minute > 31 && (resume_works || minute > 36),
                    "minute {minute}"
                ),
                other => panic!("{other:?}"),
            }
        }
        // Reset + --resume-margin 1m; still on the limit --resume-check 5m later: a person.
        let expected: &[(i64, &str)] = if resume_works {
            &[(31, "resume")]
        } else {
            &[(31, "resume"), (36, "quota-resume")]
        };
        let outcome: Vec<(i64, &str)> = outcome.iter().map(|(m, o)| (*m, o.as_str())).collect();
        assert_eq!(outcome, expected);
    }
}

/// A screen of a random observation sequence, with its hash.
fn any_screen() -> impl Strategy<Value = (Waiting, String)> {
    prop_oneof![
        Just((idle(), "idle".to_string())),
        (0u8..3).prop_map(|h| (working(), format!("work{h}"))),
        Just((gave_up(), "gave-up".to_string())),
        (0i64..8).prop_map(|r| (limit(r * 90, false), format!("limit{r}"))),
        Just((limit(10_000, true), "weekly".to_string())),
        Just((retrying(), "retry".to_string())),
        Just((
            Waiting {
                tool_running: true,
                ..working()
            },
            "tool".to_string()
        )),
    ]
}

/// What the hooks recorded at a step of a random sequence: nothing, a transient StopFailure,
/// or a usage limit with its quota-wait record (with or without a reset time).
fn any_typed() -> impl Strategy<Value = (Option<HookFailure>, Option<Recorded>)> {
    let record = |reset| Recorded {
        reset,
        why: "usage limit".into(),
    };
    prop_oneof![
        3 => Just((None, None)),
        1 => Just((Some(failure("rate_limit", false)), None)),
        1 => Just((Some(failure("rate_limit", true)), Some(record(None)))),
        1 => (0i64..8).prop_map(move |r| {
            (Some(failure("rate_limit", true)), Some(record(Some(min(r * 90)))))
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn every_wait_ends_and_resumes_happen_once(
        steps in prop::collection::vec((any_screen(), any_typed(), 0i64..4000), 1..120),
        wait_weekly in any::<bool>(),
    ) {
        let mut sim = Sim::new();
        sim.wait_weekly = wait_weekly;
        let limits = sim.limits.clone();
        let mut now = at(0);
        let mut since: Option<Time> = None;
        let mut waited = 0u64;
        let mut resets: Vec<Time> = Vec::new();
        for ((screen, hash), (failure, recorded), dt) in steps {
            now = plus(now, Duration::from_secs(dt as u64));
            sim.failure = failure;
            sim.recorded = recorded;
            let before_max = sim.state.open.as_ref().map(|o| o.max_at);
            let before_waited = waited;
            let before_since = since;
            let v = sim.tick(&screen, &hash, now);
            // No wait outlives its maximum.
            if v.act == Act::Wait || v.pauses {
                let open = sim.state.open.as_ref().expect("a wait is open");
                prop_assert!(now < open.max_at, "{} past {}: {}", now, open.max_at, v.reason);
            }
            // Resumes: at most --max-resumes per step; never two for one reset.
            prop_assert!(sim.state.resumes <= limits.max_resumes);
            if let Act::Resume(Resume { reset: Some(reset), .. }) = &v.act {
                prop_assert!(!resets.iter().any(|r| same_reset(*r, *reset)), "second resume for {}", reset);
                prop_assert!(now >= plus(*reset, limits.resume_margin), "resumed before the reset");
                resets.push(*reset);
            }
            // The clock: paused exactly during a legitimate wait, never past its maximum.
            let max_at = if v.pauses { sim.state.open.as_ref().map(|o| o.max_at) } else { before_max };
            settle_clock(&mut since, &mut waited, v.pauses, max_at, now);
            prop_assert_eq!(since.is_some(), v.pauses);
            if let (Some(start), false) = (before_since, v.pauses) {
                let end = before_max.unwrap_or(now).min(now).max(start);
                prop_assert!(waited - before_waited <= between(start, end).as_secs());
            }
        }
    }
}

/// Issue 29: a 401 (StopFailure `authentication_failed`) was scheduled for resuming. Errors
/// that cannot clear by themselves escalate on the first tick that sees them, and nothing is
/// ever typed.
#[test]
fn a_stop_failure_that_cannot_clear_escalates_at_once() {
    for (kind, credit, slug) in [
        ("authentication_failed", false, "auth"),
        ("oauth_org_not_allowed", false, "auth"),
        ("billing_error", false, "billing"),
        ("invalid_request", false, "invalid-request"),
        ("model_not_found", false, "invalid-request"),
        // The API's "credit balance is too low" is a 400 invalid_request; its banner decides.
        ("invalid_request", true, "billing"),
        ("unknown", true, "billing"),
    ] {
        let mut sim = Sim::new();
        sim.failure = Some(HookFailure {
            credit,
            ..failure(kind, false)
        });
        let v = sim.tick(&idle(), "idle", min(0));
        assert_eq!(
            v.act,
            Act::Escalate {
                kind: EscalationKind::parse(slug),
                stall_limit: false
            },
            "{kind}: {}",
            v.reason
        );
        assert!(v.reason.contains(kind), "{}", v.reason);
        // The run waits for a person: nothing typed, however long.
        for minute in 1..90 {
            let v = sim.tick(&idle(), "idle", min(minute));
            assert!(
                !matches!(v.act, Act::Resume(_) | Act::Escalate { .. }),
                "{kind} minute {minute}: {v:?}"
            );
        }
        assert!(sim.typed.is_empty(), "{kind}: {:?}", sim.typed);
        assert!(sim.state.open.is_none());
    }
    // The transient kinds are still resumed after their backoff.
    for kind in [
        "rate_limit",
        "overloaded",
        "server_error",
        "max_output_tokens",
        "unknown",
    ] {
        assert_eq!(failure(kind, false).needs_person(), None, "{kind}");
    }
}

/// The record and the screen must agree before a resume is planned: a give-up (recorded or
/// on screen) whose screen a person must answer (a login, a dialog) is escalated, never
/// resumed; on the idle prompt or the error itself it is resumed as before.
#[test]
fn a_give_up_is_resumed_only_on_a_screen_that_agrees() {
    for class in [
        Class::Auth,
        Class::Trust,
        Class::Picker,
        Class::Permission,
        Class::Unknown,
    ] {
        for (screen, failure_kind) in [(idle(), Some("server_error")), (gave_up(), None)] {
            let mut sim = Sim::new();
            sim.failure = failure_kind.map(|k| failure(k, false));
            let obs = WaitObs {
                failure: sim.failure.clone(),
                ..seen("h", class, &screen, "s1")
            };
            let v = sim.apply(&obs, min(0));
            assert!(
                matches!(
                    v.act,
                    Act::Escalate {
                        kind: EscalationKind::GaveUp,
                        ..
                    }
                ),
                "{class:?} {failure_kind:?}: {v:?}"
            );
            assert!(v.reason.contains(class.as_str()), "{}", v.reason);
        }
    }
    for class in [Class::Idle, Class::ApiError, Class::RateLimit] {
        let mut sim = Sim::new();
        let screen = gave_up();
        let obs = seen("h", class, &screen, "s1");
        let v = sim.apply(&obs, min(0));
        assert_eq!(v.act, Act::Wait, "{class:?}: {}", v.reason);
        let v = sim.apply(&obs, min(1));
        assert!(matches!(v.act, Act::Resume(_)), "{class:?}: {v:?}");
    }
}

/// A time of day placed at its next occurrence is the reset that just happened when read
/// within [`JUST_PASSED`] after it, tomorrow's after that, and as read before it.
#[test]
fn a_time_of_day_just_passed_is_the_reset_that_just_happened() {
    let reset = at(3600);
    let tomorrow = reset + chrono::TimeDelta::days(1);
    assert_eq!(time_of_day_reset(tomorrow, at(3600)), reset);
    assert_eq!(time_of_day_reset(tomorrow, at(3600 + 72)), reset);
    assert_eq!(time_of_day_reset(tomorrow, at(3600 + 3599)), reset);
    assert_eq!(time_of_day_reset(tomorrow, at(3600 + 3600)), tomorrow);
    assert_eq!(time_of_day_reset(reset, at(3000)), reset);
}

/// An escalation's kind is stored as its word: every kind reads back as itself, and a word
/// another release wrote is kept as it was.
#[test]
fn an_escalation_kind_is_stored_as_its_word() {
    for (kind, word) in EscalationKind::WORDS.iter() {
        assert_eq!(kind.as_str(), *word);
        assert_eq!(EscalationKind::parse(word), *kind);
        let json = serde_json::to_string(kind).unwrap();
        assert_eq!(json, format!("\"{word}\""));
        assert_eq!(
            serde_json::from_str::<EscalationKind>(&json).unwrap(),
            *kind
        );
    }
    let other: EscalationKind = serde_json::from_str("\"made-up\"").unwrap();
    assert_eq!(other, EscalationKind::Other("made-up".into()));
    assert_eq!(serde_json::to_string(&other).unwrap(), "\"made-up\"");
}

#[test]
fn the_reset_kept_is_the_first_read_while_its_phrase_stays_or_a_day_on() {
    let read = |source, reset: i64, text: &str| LimitSeen {
        weekly: false,
        reset: Some(min(reset)),
        reset_text: Some(text.to_string()),
        source,
    };
    let open = OpenWait {
        kind: WaitKind::UsageLimit,
        since: min(0),
        until: None,
        max_at: min(100),
        reset: Some(min(50)),
        reset_text: Some("resets 12:50pm".into()),
        reason: String::new(),
    };
    let day = 24 * 60;
    // The banner's phrase unchanged: the first reset stands, read later as tomorrow's.
    let later = read(LimitSource::Banner, 50 + day, "resets 12:50pm");
    assert_eq!(kept_reset(Some(&open), &later, None), Some(min(50)));
    // Another phrase a day on (the minute passed): the same reset.
    let other = read(LimitSource::Banner, 50 + day, "try again at 12:50");
    assert_eq!(kept_reset(Some(&open), &other, None), Some(min(50)));
    // Another phrase at another time: the new reading.
    let new = read(LimitSource::Banner, 70, "resets 1:10pm");
    assert_eq!(kept_reset(Some(&open), &new, None), Some(min(70)));
    // The status line is exact and wins.
    let exact = read(LimitSource::StatusLine, 50 + day, "resets 12:50pm");
    assert_eq!(kept_reset(Some(&open), &exact, None), Some(min(50 + day)));
    // No wait open: the banner autoctl resumed past, read a day on, is that reset.
    assert_eq!(kept_reset(None, &later, Some(min(50))), Some(min(50)));
    assert_eq!(kept_reset(None, &later, None), Some(min(50 + day)));
}

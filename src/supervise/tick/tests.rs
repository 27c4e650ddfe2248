//! The tick's decisions, driven with fake panes and a fake clock.

use super::*;
use crate::pane::Agent;
use crate::pane::Class;
use crate::pane::classify::{Lens, classify};
use crate::pane::normalize;
use crate::pane::reset::Zone;
use crate::pane::rules::RuleSet;
use crate::pane::screen::Screen;
use crate::protocol::signal::Signal;
use crate::supervise::run::NewRun;
use crate::supervise::stall::Limits;
use crate::supervise::stall::StatusMark;
use crate::supervise::tick::notice::EventKind;
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
        into: crate::supervise::run::DispatchInto::Shell,
        table: "ai-cli-task".into(),
        max_iterations: 5,
        timeout: Duration::from_secs(600),
        limits: Limits {
            threshold: 2,
            recoveries_per_iteration: 2,
            recoveries_total: 3,
            ..Limits::default()
        },
        wait_limits: crate::supervise::wait::WaitLimits::default(),
        notify: None,
        max_compactions: 3,
        account: "default".into(),
        priority: 0,
        host: "here".into(),
    };
    Run::new(&new, at(0))
}

const OPTIONS: TickOptions = TickOptions {
    heartbeat: Duration::from_secs(60),
    dry_run: false,
    answers: true,

    channels: crate::supervise::channels::ChannelOptions::DEFAULT,
    waits: crate::supervise::wait::WaitOptions::DEFAULT,
    governor: crate::supervise::governor::Options::DEFAULT,
    host_lease: crate::supervise::store::HOST_LEASE,
};

fn pane(text: &str, foreground: &str) -> PaneObs {
    pane_as(Agent::Generic, text, foreground)
}

/// The escalation key a driver's view has ([`PaneView::key`]).
fn key(text: &str, screen: &Screen, ctx: &Lens) -> String {
    let rules = RuleSet::embedded();
    classify(screen, rules, ctx)
        .key
        .unwrap_or_else(|| normalize::hash(text, &rules.masks))
}

fn pane_as(agent: Agent, text: &str, foreground: &str) -> PaneObs {
    let rules = RuleSet::embedded();
    let ctx = Lens::new(agent, at(0), Zone::Local);
    let screen = Screen::from_text(text, Some(foreground.to_string()));
    PaneObs::Seen(Box::new(PaneView {
        pane_id: "%1".into(),
        pid: 0,
        foreground: foreground.into(),
        foreground_is_shell: rules.is_shell(foreground),
        hash: normalize::hash(text, &rules.masks),
        key: key(text, &screen, &ctx),
        classification: classify(&screen, rules, &ctx),
        answered_marker: None,
        messages: None,
        dead: false,
        socket: None,
        waiting: crate::pane::waiting::read(text, at(0), Zone::Utc),
        text: text.to_string(),
    }))
}

#[test]
fn a_shell_in_front_is_ready_only_with_its_prompt_on_the_screen() {
    let rules = RuleSet::embedded();
    let view = |text: &str| {
        let ctx = Lens::new(Agent::Claude, at(0), Zone::Local);
        let screen = Screen::from_text(text, Some("bash".to_string()));
        PaneView {
            pane_id: "%1".into(),
            pid: 0,
            foreground: "bash".into(),
            foreground_is_shell: true,
            hash: normalize::hash(text, &rules.masks),
            key: key(text, &screen, &ctx),
            classification: classify(&screen, rules, &ctx),
            answered_marker: None,
            messages: None,
            dead: false,
            socket: None,
            waiting: crate::pane::waiting::read(text, at(0), Zone::Utc),
            text: text.to_string(),
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

fn signal(step: &str, result: &str, next: &str, iteration: Option<u64>, stamp: u32) -> SignalObs {
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
        compaction: Default::default(),
        task_dir: true,
        signal,
        stop: StopObs::None,
        pane,
        entry: None,
        annotations: false,
        status: None,
        quota_wait: None,
        notes: Vec::new(),
        channels: None,
        waits: WaitInputs::default(),
        account: None,
        step_files: files(None),
        agent_start: AgentStart::Unknown,
    }
}

/// `--into shell`'s files as the driver names them, with the dispatched step's `result`.
fn files(result: Option<&str>) -> Option<StepFiles> {
    Some(StepFiles {
        settings: "/st/claude/step-settings.json".into(),
        next_stream: "/st/streams/r/9.jsonl".into(),
        result: result.map(|line| crate::supervise::stream::StepResult::of(line).unwrap()),
    })
}

/// A dispatch run's first observation: no signal, the module enters at `plan`.
fn entering_at_plan(pane: PaneObs) -> Observation {
    let mut o = obs(SignalObs::Missing, pane);
    o.entry = Some(Ok(DispatchStep {
        next: "plan".into(),
        checkpoint: String::new(),
    }));
    o
}

/// Tick once a minute, feeding the outcome's row back in; an answer is typed, and so is a
/// dispatch (its intent record cleared, as the driver does once the keys are in).
fn step(run: &mut Run, obs: &Observation, minute: i64) -> Outcome {
    step_at(run, obs, at(minute * 60))
}

fn step_at(run: &mut Run, obs: &Observation, now: Time) -> Outcome {
    let mut outcome = decide(run, obs, now, &OPTIONS);
    if outcome.answer.is_some() {
        outcome.answered();
    }
    *run = outcome.run.clone();
    if outcome.dispatch_intent().is_some() {
        run.dispatch.typing = None;
        if let Some(retype) = outcome.retype {
            retype.typed(run);
        }
    }
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
    run.spec.limits.step_timeout = Duration::from_secs(5 * 60);
    let mut o = obs(SignalObs::Missing, pane(&idle, "claude"));
    o.status = status_at(0);
    let PaneObs::Seen(view) = &o.pane else {
        unreachable!()
    };
    assert_eq!(view.classification.class, Class::Idle, "{view:?}");
    for minute in 1..6 {
        let outcome = step(&mut run, &o, minute);
        assert!(
            outcome.effects.is_empty() && outcome.answer.is_none(),
            "minute {minute}: {:?}",
            outcome.event
        );
    }
    let outcome = step(&mut run, &o, 6);
    assert_eq!(
        outcome.event.decision,
        Decision::Continuation,
        "{:?}",
        outcome.event
    );
    match &outcome.answer {
        Some(Answer {
            keys, if_unchanged, ..
        }) => {
            assert_eq!(keys[0], Key::Text(CONTINUATION.into()));
            assert_eq!(if_unchanged.as_deref(), Some("seen-at-0"));
        }
        other => panic!("{other:?}"),
    }
    // A recorded quota wait is a wait: nothing is sent and the timeout clock pauses.
    let mut run = new_run(Mode::Observe);
    run.spec.limits.step_timeout = Duration::from_secs(60);
    o.quota_wait = Some("quota: a rate_limit wait".into());
    o.waits.recorded = Some(crate::supervise::wait::Recorded {
        reset: None,
        why: "quota: a rate_limit wait".into(),
    });
    o.notes = vec!["cannot read .status.json; no step timeout this tick".into()];
    for minute in 1..4 {
        let outcome = step(&mut run, &o, minute);
        assert_eq!(
            outcome.event.decision,
            Decision::Wait,
            "{:?}",
            outcome.event
        );
        assert!(outcome.effects.is_empty() && outcome.answer.is_none());
        assert!(
            outcome
                .event
                .reasons
                .iter()
                .any(|r| r.contains("cannot read"))
        );
    }
    assert!(run.stall.clock_paused_since.is_some());
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
    assert_eq!(run.stop_reason, Some(StopReason::Complete));
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

/// A quota wait the agent left by itself (Claude Code continues on its own after the reset)
/// is the governor's release, read from this tick's reading of a working agent.
#[test]
fn an_agent_back_at_work_after_a_quota_wait_is_counted_as_self_resumed() {
    let quota = pane(
        &format!("Claude AI usage limit reached|{}", at(600).timestamp()),
        "fake-agent",
    );
    let self_resumed = |out: &Outcome| {
        out.account_events
            .iter()
            .any(|e| matches!(e, governor::Event::SelfResumed(_)))
    };
    let mut run = new_run(Mode::Observe);
    step(&mut run, &obs(SignalObs::Missing, claude_working()), 0);
    for minute in 1..5 {
        let out = step(&mut run, &obs(SignalObs::Missing, quota.clone()), minute);
        assert_eq!(out.event.decision, Decision::Wait, "minute {minute}");
        assert!(!self_resumed(&out));
    }
    let out = step(&mut run, &obs(SignalObs::Missing, claude_working()), 11);
    assert!(
        out.event.state.as_ref().is_some_and(|r| r.state.working()),
        "{:?}",
        out.event.state
    );
    assert!(self_resumed(&out), "{:?}", out.event.reasons);
    // Working on: nothing more to release.
    let out = step(&mut run, &obs(SignalObs::Missing, claude_working()), 12);
    assert!(!self_resumed(&out));
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
    assert_eq!(run.stop_reason, Some(StopReason::TaskDirGone));

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
    assert_eq!(run.stop_reason, Some(StopReason::UserStop));
    assert!(out.effects.is_empty(), "the file is the agent's to consume");
}

#[test]
fn a_shell_in_front_on_two_heartbeats_is_an_exit() {
    let mut run = new_run(Mode::Observe);
    run.spec.launch_command = None;
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
    assert_eq!(out.event.notify[0].event, EventKind::Exit);
}

#[test]
fn an_agent_that_exited_is_launched_again_within_the_recovery_budget_then_the_run_exits() {
    let mut run = new_run(Mode::Observe);
    let mut restarts = 0;
    let mut ended = None;
    for minute in 1..9 {
        if run.status != Status::Running {
            break;
        }
        let out = step(&mut run, &obs(SignalObs::Missing, shell()), minute);
        if out.event.decision == Decision::Exit {
            ended = Some(out.event.clone());
        }
        if out.event.decision == Decision::Relaunch {
            restarts += 1;
            assert_eq!(
                out.effects,
                [Effect::Send {
                    keys: vec![Key::Text("agent go".into()), Key::Key("Enter".into())],
                    if_unchanged: None
                }]
            );
            assert_eq!(out.event.notify[0].event, EventKind::Restart);
        }
    }
    // new_run allows 2 recoveries per iteration; the third exit ends the run, told once.
    assert_eq!(restarts, 2);
    assert_eq!(
        (run.status, run.stop_reason),
        (Status::Exited, Some(StopReason::RestartLimit))
    );
    let ended = ended.expect("an exit event");
    assert_eq!(ended.notify.len(), 1);
    assert_eq!(ended.notify[0].event, EventKind::Exit);
    assert!(run.waits.needs_person.is_none());
    // A dead pane (remain-on-exit) is respawned with the launch command.
    let mut run = new_run(Mode::Observe);
    let out = step(
        &mut run,
        &obs(SignalObs::Missing, PaneObs::Dead("dead".into())),
        1,
    );
    assert_eq!(
        out.effects,
        [Effect::Respawn {
            command: "agent go".into()
        }]
    );
    run.spec.launch_command = None;
    step(
        &mut run,
        &obs(SignalObs::Missing, PaneObs::Dead("dead".into())),
        2,
    );
    assert_eq!(run.status, Status::Lost);
}

#[test]
fn a_safe_prompt_is_answered_at_the_threshold_and_a_destructive_one_escalated() {
    let safe = pane("Install left-pad before continuing? [y/N] ", "fake-agent");
    let mut run = new_run(Mode::Observe);
    let outs: Vec<Outcome> = (1..=3)
        .map(|m| step(&mut run, &obs(SignalObs::Missing, safe.clone()), m))
        .collect();
    let decisions: Vec<Decision> = outs.iter().map(|o| o.event.decision).collect();
    assert_eq!(
        decisions,
        [Decision::Progress, Decision::Progress, Decision::Answer]
    );
    // The answer is typed, then logged; the ticks before it plan nothing.
    assert_eq!(outs[2].plan(), [Effect::TypeAnswer, Effect::LogApproval]);
    assert!(outs[..2].iter().all(|o| o.plan().is_empty()));
    // A harmless prompt's answer spends the answer budget, not a stall recovery.
    assert_eq!((run.stall.answers_step, run.stall.recoveries_total), (1, 0));

    let danger = pane(
        "I want to run: rm -rf ./build\nRun rm -rf ./build now? [y/N] ",
        "fake-agent",
    );
    let mut run = new_run(Mode::Observe);
    let outs: Vec<Outcome> = (1..=4)
        .map(|m| step(&mut run, &obs(SignalObs::Missing, danger.clone()), m))
        .collect();
    // Only a person can answer it: escalated on the first tick that reads it (issue 29).
    assert_eq!(
        outs[0].event.decision,
        Decision::Escalate,
        "{:?}",
        outs[0].event.reasons
    );
    assert!(outs[0].event.reasons[0].contains("destructive"));
    assert!(
        outs.iter()
            .all(|o| o.effects.is_empty() && o.answer.is_none()),
        "nothing is ever typed"
    );
    // The escalation's only effect is the approval log.
    assert_eq!(outs[0].plan(), vec![Effect::LogApproval]);
    for out in &outs[1..] {
        assert_eq!(
            out.event.decision,
            Decision::Progress,
            "escalated once per prompt: {:?}",
            out.event.reasons
        );
    }
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
    assert!(out.answer.is_some());
    assert!(matches!(
        out.planned().first().map(|did| &did.effect),
        Some(Effect::Send { .. })
    ));
    assert_eq!(out.run.stall.recoveries_total, 0);
}

#[test]
fn dispatch_types_the_entry_step_then_each_next_step_when_the_shell_is_ready() {
    let mut run = new_run(Mode::Dispatch);
    let mut o = entering_at_plan(working());
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
                Key::Text(r#"claude -p --settings /st/claude/step-settings.json --output-format stream-json --verbose "/ai-cli-task plan /t --generate" > /st/streams/r/9.jsonl"#.into()),
                Key::Key("Enter".into())
            ],
            if_unchanged: None,
        }
    );
    assert_eq!(
        out.dispatch_intent().map(|r| r.dispatch.count),
        Some(1),
        "recorded before the keys"
    );
    // The step runs; then its signal arrives and the shell is back.
    step(&mut run, &obs(SignalObs::Missing, working()), 3);
    let mut next = signal("plan", "(generated)", "check", None, 4);
    if let SignalObs::Valid { signal, .. } = &mut next {
        signal.checkpoint = Some("post-plan".into());
    }
    let o = obs(next, shell());
    let out = step(&mut run, &o, 4);
    assert_eq!(out.event.decision, Decision::Dispatch);
    // The plan: the dispatch recorded first, then the world's effects; no approval to log.
    let plan = out.plan();
    assert_eq!(plan[0], Effect::RecordDispatch, "{plan:?}");
    assert_eq!(&plan[1..], out.effects.as_slice());
    // The signal that asked for the step is consumed before its keys are typed: once they
    // are, the step may write its own signal at any moment.
    assert!(
        matches!(&out.effects[0], Effect::RemoveSignal { fingerprint } if fingerprint == "plan-(generated)-check-4"),
        "{:?}",
        out.effects
    );
    assert!(
        matches!(&out.effects[1], Effect::Send { keys, .. } if keys[0] == Key::Text(r#"claude -p --settings /st/claude/step-settings.json --output-format stream-json --verbose "/ai-cli-task check /t --checkpoint post-plan" > /st/streams/r/9.jsonl"#.into())),
        "{:?}",
        out.effects
    );
    assert_eq!(run.iteration_count, 1);
    assert_eq!(run.dispatch.count, 2);
}

#[test]
fn a_dispatched_step_that_dies_without_a_signal_ends_the_run() {
    let mut run = new_run(Mode::Dispatch);
    run.dispatch.dispatched = Some(DispatchStep {
        next: "exec".into(),
        checkpoint: String::new(),
    });
    step(&mut run, &obs(SignalObs::Missing, shell()), 1);
    assert_eq!(run.status, Status::Running);
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), 2);
    assert_eq!(out.event.decision, Decision::Exit);
}

/// The `result` lines of the real Claude Code 2.1.332 (`claude -p --output-format
/// stream-json --verbose`) for a 529 after its own retries and a 401.
const OVERLOADED: &str = r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"api_error_status":529,"api_error_type":"overloaded_error","result":"API Error: 529 Overloaded","terminal_reason":"api_error"}"#;
const UNAUTHORIZED: &str = r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"api_error_status":401,"api_error_type":"authentication_error","result":"Invalid API key","terminal_reason":"api_error"}"#;

fn dispatched(step: &str) -> Run {
    let mut run = new_run(Mode::Dispatch);
    run.dispatch.dispatched = Some(DispatchStep {
        next: step.into(),
        checkpoint: String::new(),
    });
    run.dispatch.count = 1;
    run
}

#[test]
fn a_shell_step_that_gave_up_on_an_api_error_is_typed_again_after_a_backoff_then_escalated() {
    let max = crate::supervise::wait::WaitLimits::default().max_resumes;
    let mut run = dispatched("exec");
    // The backoffs add up to more than the test run's ten minutes.
    run.spec.timeout = Duration::from_secs(24 * 3600);
    let mut failed = obs(SignalObs::Missing, shell());
    failed.step_files = files(Some(OVERLOADED));
    let mut minute = 1;
    for resume in 1..=max {
        let out = step(&mut run, &failed, minute);
        assert_eq!(
            out.event.decision,
            Decision::Wait,
            "{:?}",
            out.event.reasons
        );
        assert!(out.effects.is_empty(), "{:?}", out.effects);
        assert_eq!(run.dispatch.retries, resume);
        let at_ = run.dispatch.retry_at.expect("a time to type it again");
        assert_eq!(at_, at(minute * 60) + wait::backoff(resume - 1));
        assert_eq!(run.status, Status::Running);
        // Not before its time.
        let due = (at_ - at(0)).num_minutes();
        if due > minute + 1 {
            let out = step(&mut run, &obs(SignalObs::Missing, shell()), due - 1);
            assert_eq!(
                out.event.decision,
                Decision::Wait,
                "{:?}",
                out.event.reasons
            );
            assert!(out.effects.is_empty());
        }
        minute = due;
        let out = step(&mut run, &obs(SignalObs::Missing, shell()), minute);
        assert_eq!(
            out.event.decision,
            Decision::Dispatch,
            "{:?}",
            out.event.reasons
        );
        assert_eq!(run.dispatch.count, u64::from(resume) + 1);
        minute += 1;
    }
    // Past --max-resumes: a person is asked, nothing more is typed.
    let out = step(&mut run, &failed, minute);
    assert_eq!(
        out.event.decision,
        Decision::Escalate,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(
        out.run.waits.needs_person.as_ref().map(|n| n.kind.as_str()),
        Some("gave-up")
    );
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), minute + 60);
    assert_ne!(out.event.decision, Decision::Dispatch);
    // A new signal is a new step, with its own budget.
    run.waits.needs_person = None;
    run.dispatch.dispatched = run.dispatch.pending.take();
    step(
        &mut run,
        &obs(signal("exec", "done", "check", None, 7), shell()),
        minute + 61,
    );
    assert_eq!((run.dispatch.retries, run.dispatch.retry_at), (0, None));
}

/// Gemini CLI 0.61 in headless mode (`gemini -p … --output-format stream-json`): a usage limit
/// ends the step with a `result` (no "Keep trying / Stop" menu), and the step is typed again
/// after the delay Gemini names, or after the backoff when it names none (a daily quota).
#[test]
fn a_gemini_step_stopped_by_its_usage_limit_is_typed_again_after_the_named_delay() {
    let hourly = r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: Quota exceeded for quota metric 'Generate Content API requests'.\nSuggested retry after 3600s.]"}}"#;
    let daily = r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method"}}"#;
    for (line, delay) in [
        (hourly, Duration::from_secs(3600)),
        (daily, wait::backoff(0)),
    ] {
        let mut run = dispatched("exec");
        run.spec.timeout = Duration::from_secs(24 * 3600);
        let mut failed = obs(SignalObs::Missing, shell());
        failed.step_files = files(Some(line));
        let out = step(&mut run, &failed, 1);
        assert_eq!(
            out.event.decision,
            Decision::Wait,
            "{:?}",
            out.event.reasons
        );
        assert!(out.effects.is_empty(), "{:?}", out.effects);
        assert_eq!(run.dispatch.retry_at, Some(at(60) + delay));
        assert_eq!(run.waits.needs_person, None);
    }
}

#[test]
fn a_shell_step_that_failed_on_a_401_goes_to_a_person_and_is_typed_again_after_ack() {
    let mut run = dispatched("check");
    let mut failed = obs(SignalObs::Missing, shell());
    failed.step_files = files(Some(UNAUTHORIZED));
    let out = step(&mut run, &failed, 1);
    assert_eq!(
        out.event.decision,
        Decision::Escalate,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(
        out.run.waits.needs_person.as_ref().map(|n| n.kind.as_str()),
        Some("auth")
    );
    assert_eq!(
        (run.dispatch.retries, run.dispatch.retry_at),
        (0, None),
        "no resume planned"
    );
    for minute in 2..9 {
        let out = step(&mut run, &obs(SignalObs::Missing, shell()), minute);
        assert_ne!(out.event.decision, Decision::Dispatch, "minute {minute}");
        assert_eq!(run.status, Status::Running);
    }
    // `run ack`: the person fixed the key.
    run.waits.needs_person = None;
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), 9);
    assert_eq!(
        out.event.decision,
        Decision::Dispatch,
        "{:?}",
        out.event.reasons
    );
    // A step that ran to its end without a signal still ends the run.
    let mut run = dispatched("check");
    let mut done = obs(SignalObs::Missing, shell());
    done.step_files = files(Some(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#,
    ));
    step(&mut run, &done, 1);
    let out = step(&mut run, &done, 2);
    assert_eq!(out.event.decision, Decision::Exit);
    assert!(
        out.event.reasons.last().unwrap().contains("its result"),
        "{:?}",
        out.event.reasons
    );
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
    assert_eq!(alive.event.decision, Decision::Progress);
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
    run.dispatch.dispatched = Some(DispatchStep {
        next: "exec".into(),
        checkpoint: String::new(),
    });
    let o = obs(signal("check", "PASS", "exec", None, 3), shell());
    let out = recover(&run, &o, at(60), &OPTIONS);
    assert_eq!(out.run.dispatch.dispatched, None);
    assert_eq!(
        out.run.dispatch.pending.as_ref().map(|p| p.next.as_str()),
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
            let mut out = decide(&before, &o, at(clock), &OPTIONS);
            if out.answer.is_some() {
                out.answered();
            }
            let after = &out.run;
            prop_assert!(after.iteration_count >= before.iteration_count);
            if before.status.is_active() {
                prop_assert!(after.ticks == before.ticks + 1);
            } else {
                prop_assert_eq!(after, &before);
                prop_assert!(out.effects.is_empty() && out.answer.is_none());
            }
            prop_assert!(after.stall.recoveries_total >= before.stall.recoveries_total);
            if !before.status.is_active() {
                prop_assert_eq!(after.status, before.status);
            }
            if after.status.is_active() {
                prop_assert!(after.iteration_count < after.spec.max_iterations);
                prop_assert!(after.elapsed(at(clock)) < after.spec.timeout);
            }
            prop_assert!(after.elapsed(at(clock)) <= between(after.started_at, at(clock)));
            if out.effects.iter().any(|e| matches!(e, Effect::WriteStop { .. })) {
                prop_assert_eq!(after.status, Status::Stopped);
            }
            // A signal is consumed before any key is typed: once keys are in, the step they
            // start may write its own signal, which must never be the one removed.
            let first_send = out.effects.iter().position(|e| matches!(e, Effect::Send { .. }));
            let last_removal = out.effects.iter().rposition(|e| matches!(e, Effect::RemoveSignal { .. }));
            if let (Some(send), Some(removal)) = (first_send, last_removal) {
                prop_assert!(removal < send, "{:?}", out.effects);
            }
            run = out.run;
        }
    }
}

const RULE: &str = "────────────────────────────────────────";

/// Claude Code idle at its empty input box, with `above` on the screen over it.
fn claude_idle(above: &str) -> PaneObs {
    let text = format!("{above}\n\n{RULE}\n❯ \n{RULE}\n  ? for shortcuts");
    pane_as(Agent::Claude, &text, "claude")
}

/// Claude Code with `typed` in its input box.
fn claude_typed(typed: &str) -> PaneObs {
    let text = format!("● Ready.\n\n{RULE}\n❯ {typed}\n{RULE}\n  ? for shortcuts");
    pane_as(Agent::Claude, &text, "claude")
}

fn claude_working() -> PaneObs {
    let text = format!(
        "❯ /ai-cli-task plan /t --generate\n\n✻ Thinking… (3s · esc to interrupt)\n\n{RULE}\n❯ \n{RULE}\n  esc to interrupt"
    );
    pane_as(Agent::Claude, &text, "claude")
}

fn agent_run() -> Run {
    let mut run = new_run(Mode::Dispatch);
    run.spec.agent = Agent::Claude;
    run.spec.into = DispatchInto::Agent;
    run.spec.command_template = command::AGENT_TEMPLATE.into();
    run.spec.launch_command = Some("claude".into());
    run
}

fn sent(out: &Outcome) -> Vec<Key> {
    out.effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { keys, .. } => Some(keys.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Issue 25: Claude Code draws its idle input box before it runs its SessionStart hooks.
/// Where that hook is wired, the first dispatch into the agent the run launched waits for it
/// (the driver's [`AgentStart`]), at most [`SESSION_START_WAIT`] after the launch; past that
/// the screen decides alone, and the decision says why.
#[test]
fn the_first_dispatch_waits_for_a_wired_session_start_at_most_its_maximum() {
    let mut o = entering_at_plan(claude_idle("● Ready."));
    o.agent_start = AgentStart::Awaited;
    let mut run = agent_run();
    let out = step_at(&mut run, &o, at(5));
    assert_eq!(
        out.event.decision,
        Decision::Wait,
        "{:?}",
        out.event.reasons
    );
    assert!(sent(&out).is_empty());
    assert!(
        out.event.reasons[0].contains("SessionStart hook (wired) has not fired"),
        "{:?}",
        out.event.reasons
    );
    assert_eq!(run.dispatch.count, 0);
    // The hook fired: typed at once.
    o.agent_start = AgentStart::Started;
    let out = step_at(&mut run, &o, at(6));
    assert_eq!(
        out.event.decision,
        Decision::Dispatch,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(
        sent(&out)[0],
        Key::Text("/ai-cli-task plan /t --generate".into())
    );
    // It never fires: at the maximum the screen decides, and the decision says so.
    let mut late = agent_run();
    o.agent_start = AgentStart::Awaited;
    let out = step_at(&mut late, &o, at(SESSION_START_WAIT.as_secs() as i64 - 1));
    assert_eq!(
        out.event.decision,
        Decision::Wait,
        "{:?}",
        out.event.reasons
    );
    let out = step_at(&mut late, &o, at(SESSION_START_WAIT.as_secs() as i64));
    assert_eq!(
        out.event.decision,
        Decision::Dispatch,
        "{:?}",
        out.event.reasons
    );
    assert!(
        out.event
            .reasons
            .last()
            .unwrap()
            .contains("did not fire within 60s"),
        "{:?}",
        out.event.reasons
    );
    // Not asked (no hooks wired, or not the first dispatch): the screen decides at once.
    let mut plain = agent_run();
    o.agent_start = AgentStart::Unknown;
    let out = step_at(&mut plain, &o, at(1));
    assert_eq!(
        out.event.decision,
        Decision::Dispatch,
        "{:?}",
        out.event.reasons
    );
}

#[test]
fn into_agent_types_each_step_at_the_idle_agent_prompt_with_its_arguments() {
    let mut run = agent_run();
    let mut o = entering_at_plan(claude_working());
    let out = step(&mut run, &o, 1);
    assert_eq!(
        out.event.decision,
        Decision::Wait,
        "{:?}",
        out.event.reasons
    );
    assert!(
        out.event.reasons[0].contains("not idle at its prompt"),
        "{:?}",
        out.event.reasons
    );
    o.pane = claude_idle("● Ready.");
    let out = step(&mut run, &o, 2);
    assert_eq!(
        out.event.decision,
        Decision::Dispatch,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(
        sent(&out),
        [
            Key::Text("/ai-cli-task plan /t --generate".into()),
            Key::Key("Enter".into())
        ]
    );
    // The annotations mode, when the module holds .tmp-annotations.json.
    let mut fresh = agent_run();
    o.annotations = true;
    let out = step(&mut fresh, &o, 2);
    assert_eq!(
        sent(&out)[0],
        Key::Text("/ai-cli-task plan /t /t/.tmp-annotations.json --silent".into())
    );
    // The agent works, writes its signal and is idle again: the check runs at post-plan.
    step(&mut run, &obs(SignalObs::Missing, claude_working()), 3);
    let mut next = signal("plan", "(generated)", "check", None, 4);
    if let SignalObs::Valid { signal, .. } = &mut next {
        signal.checkpoint = Some("post-plan".into());
    }
    let out = step(
        &mut run,
        &obs(next, claude_idle("● plan (generated) -> check")),
        4,
    );
    assert_eq!(
        sent(&out)[0],
        Key::Text("/ai-cli-task check /t --checkpoint post-plan".into())
    );
    assert_eq!(run.dispatch.count, 2);
    // An idle agent after its step without a signal is not an exit (the stall core's).
    let out = step(&mut run, &obs(SignalObs::Missing, claude_idle("● done")), 5);
    assert_ne!(out.event.decision, Decision::Exit);
    assert_eq!(run.status, Status::Running);
}

#[test]
fn into_agent_relaunches_an_agent_that_exited_and_types_its_step_again() {
    let mut run = agent_run();
    run.dispatch.dispatched = Some(DispatchStep {
        next: "exec".into(),
        checkpoint: String::new(),
    });
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), 1);
    assert_eq!(run.status, Status::Running, "{:?}", out.event.reasons);
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), 2);
    assert_eq!(
        out.event.decision,
        Decision::Relaunch,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(sent(&out)[0], Key::Text("claude".into()));
    assert_eq!(
        run.dispatch.pending.as_ref().map(|p| p.next.as_str()),
        Some("exec"),
        "the step in flight is typed into the new agent"
    );
    // Without a launch command the run ends as exited, like observe mode.
    let mut run = agent_run();
    run.spec.launch_command = None;
    step(&mut run, &obs(SignalObs::Missing, shell()), 1);
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), 2);
    assert_eq!(out.event.decision, Decision::Exit);
}

/// Issue 23 item 4: a half-typed line after any number of kills during its retype is cleared
/// and typed again (a retype counts once its keys are all in); past the one retype per step
/// it is escalated, and a person's `run ack` of that screen buys one more retype, budgets or
/// not.
#[test]
fn a_half_typed_line_is_retyped_after_any_number_of_kills_and_after_an_ack() {
    let text = r#"claude -p "/ai-cli-task exec /t""#;
    let mut recorded = new_run(Mode::Dispatch);
    recorded.dispatch.dispatched = Some(DispatchStep {
        next: "exec".into(),
        checkpoint: String::new(),
    });
    recorded.dispatch.count = 3;
    recorded.dispatch.typing = Some(text.to_string());
    let mut run = recorded.clone();
    let half = pane(&format!("✓ check → PASS\n$ {text}"), "bash");
    // Ticks ten seconds apart: the unchanged screen stays short of --unknown-after.
    let quick = |run: &mut Run, o: &Observation, tick: i64| step_at(run, o, at(tick * 10));
    // Killed during each retype: the next tick only ever sees the intent record, and clears
    // and types the line again, spending nothing.
    for tick in 1..=5 {
        let out = decide(
            &run,
            &obs(SignalObs::Missing, half.clone()),
            at(tick * 10),
            &OPTIONS,
        );
        assert_eq!(
            out.event.decision,
            Decision::Dispatch,
            "{:?}",
            out.event.reasons
        );
        assert_eq!(sent(&out)[0], Key::Key("C-u".into()));
        assert_eq!(
            out.retype,
            Some(Retype {
                acknowledged: false
            })
        );
        let intent = out
            .dispatch_intent()
            .expect("recorded before the keys")
            .clone();
        assert_eq!(
            intent.stall.recoveries_total, 0,
            "a retype not typed is not counted"
        );
        assert_eq!(intent.waits.retyped, None);
        run = intent;
    }
    // This time the retype's keys all go in: counted once.
    let out = quick(&mut run, &obs(SignalObs::Missing, half.clone()), 6);
    assert_eq!(sent(&out)[0], Key::Key("C-u".into()));
    assert_eq!(
        (run.stall.recoveries_total, run.waits.retyped),
        (1, Some(3))
    );
    // At a shell the keys are taken at their word: the dispatch is done.
    assert_eq!(run.dispatch.typing, None);
    // With no stall recovery left a half-typed line is escalated, once, and waits.
    let mut run = recorded.clone();
    run.stall.recoveries_total = run.spec.limits.recoveries_total;
    let out = quick(&mut run, &obs(SignalObs::Missing, half.clone()), 7);
    assert_eq!(
        out.event.decision,
        Decision::Escalate,
        "{:?}",
        out.event.reasons
    );
    assert!(sent(&out).is_empty());
    let needs = run.waits.needs_person.clone().expect("needs a person");
    let out = quick(&mut run, &obs(SignalObs::Missing, half.clone()), 8);
    assert!(sent(&out).is_empty(), "waits for the person");
    assert!(
        out.event.notify.is_empty(),
        "announced once: {:?}",
        out.event.notify
    );
    // The person acknowledges (run ack): the line is cleared and typed once more, and no
    // stall recovery pays for it.
    run.waits.needs_person = None;
    run.waits.acked_hash = needs.key().map(str::to_string);
    let intent = decide(
        &run,
        &obs(SignalObs::Missing, half.clone()),
        at(90),
        &OPTIONS,
    );
    assert_eq!(intent.retype, Some(Retype { acknowledged: true }));
    assert_eq!(
        intent.dispatch_intent().unwrap().waits.acked_hash,
        run.waits.acked_hash,
        "a retype killed midway keeps the acknowledgement for the next tick"
    );
    let out = quick(&mut run, &obs(SignalObs::Missing, half), 9);
    assert_eq!(
        sent(&out)[0],
        Key::Key("C-u".into()),
        "{:?}",
        out.event.reasons
    );
    assert_eq!(run.stall.recoveries_total, run.spec.limits.recoveries_total);
    assert_eq!(run.waits.acked_hash, None, "the acknowledgement is used");
}

/// Item 11: a dispatch's intent (count, consumed signal, command) is recorded before its
/// keys. A tick that finds it still recorded goes by the screen.
#[test]
fn an_unconfirmed_dispatch_is_typed_once_by_what_the_screen_shows() {
    let text = r#"claude -p "/ai-cli-task exec /t""#;
    let recorded = || {
        let mut run = new_run(Mode::Dispatch);
        run.dispatch.dispatched = Some(DispatchStep {
            next: "exec".into(),
            checkpoint: String::new(),
        });
        run.dispatch.count = 3;
        run.dispatch.typing = Some(text.to_string());
        run.last_signal = Some(SeenSignal {
            fingerprint: "check-PASS-exec-3".into(),
            step: "check".into(),
            result: "PASS".into(),
            next: "exec".into(),
            checkpoint: String::new(),
            iteration: None,
        });
        run
    };
    // Killed before any key: a ready shell that never saw the command gets it, counted once.
    let mut run = recorded();
    let out = step(&mut run, &obs(SignalObs::Missing, shell()), 1);
    assert_eq!(
        out.event.decision,
        Decision::Dispatch,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(
        sent(&out),
        [Key::Text(text.into()), Key::Key("Enter".into())]
    );
    assert!(
        out.dispatch_intent().is_some(),
        "recorded again before typing"
    );
    assert_eq!((run.dispatch.count, run.dispatch.typing.clone()), (3, None));
    // Killed after the keys: the command is on screen (it ran), or the step is running.
    for pane in [
        pane(&format!("$ {text}\n✓ exec → (done)\n$ "), "bash"),
        working(),
    ] {
        let mut run = recorded();
        let out = step(&mut run, &obs(SignalObs::Missing, pane), 1);
        assert!(
            sent(&out).is_empty(),
            "never typed twice: {:?}",
            out.effects
        );
        assert_eq!(run.dispatch.typing, None);
        assert_eq!(run.dispatch.count, 3);
        assert!(out.effects.contains(&Effect::RemoveSignal {
            fingerprint: "check-PASS-exec-3".into()
        }));
    }
    // Killed between the text and its Enter: the line is cleared and typed again, once.
    let mut run = recorded();
    let half = pane(&format!("✓ check → PASS\n$ {text}"), "bash");
    let out = step(&mut run, &obs(SignalObs::Missing, half.clone()), 1);
    assert_eq!(sent(&out)[0], Key::Key("C-u".into()));
    assert_eq!(run.stall.recoveries_total, 1);
    assert_eq!(run.dispatch.count, 3);
    // The step's own signal settles it whatever the screen shows.
    let mut run = recorded();
    let out = step(
        &mut run,
        &obs(signal("exec", "(done)", "check", None, 9), claude_working()),
        1,
    );
    assert_eq!(run.dispatch.typing, None, "{:?}", out.event.reasons);
    assert_eq!(
        run.dispatch.pending.as_ref().map(|p| p.next.as_str()),
        Some("check")
    );
    // Into the agent: a command left in its input box gets its Enter.
    let mut run = agent_run();
    run.dispatch.dispatched = Some(DispatchStep {
        next: "exec".into(),
        checkpoint: String::new(),
    });
    run.dispatch.typing = Some("/ai-cli-task exec /t".into());
    let out = step(
        &mut run,
        &obs(SignalObs::Missing, claude_typed("/ai-cli-task exec /t")),
        1,
    );
    assert_eq!(
        sent(&out),
        [Key::Key("Enter".into())],
        "{:?}",
        out.event.reasons
    );
}

/// Issue 29: Claude Code blinks the `●` of the pending tool line (`● Bash(…)` / `  Bash(…)`)
/// about every 3 s while its permission box waits. One prompt is one escalation and one
/// notification however often it blinks; another prompt is another.
#[test]
fn a_blinking_permission_prompt_is_escalated_and_announced_once() {
    let shown =
        include_str!("../../../tests/fixtures/panes/claude-code-2.1.332/permission-bash-rm-rf.txt");
    let dimmed = shown.replacen("● Bash(rm -rf build)", "  Bash(rm -rf build)", 1);
    assert_ne!(shown, dimmed, "the capture shows the pending tool line");
    let mut run = new_run(Mode::Observe);
    run.spec.agent = Agent::Claude;
    let mut escalations = Vec::new();
    for minute in 1..=6 {
        let text = if minute % 2 == 0 { &dimmed } else { shown };
        let out = step(
            &mut run,
            &obs(SignalObs::Missing, pane_as(Agent::Claude, text, "claude")),
            minute,
        );
        assert!(out.answer.is_none() && out.effects.is_empty());
        escalations.extend(
            out.event
                .notify
                .iter()
                .filter(|n| n.event == EventKind::Escalate)
                .map(|n| n.key.clone().expect("an escalation has a key")),
        );
        if minute >= 3 {
            assert!(run.waits.needs_person.is_some(), "minute {minute}");
        }
    }
    assert_eq!(escalations.len(), 1, "{escalations:?}");
    // Another call in the same box is another decision: announced again.
    let other = shown.replace("rm -rf build", "rm -rf dist");
    for minute in 7..=9 {
        let out = step(
            &mut run,
            &obs(SignalObs::Missing, pane_as(Agent::Claude, &other, "claude")),
            minute,
        );
        escalations.extend(
            out.event
                .notify
                .iter()
                .filter(|n| n.event == EventKind::Escalate)
                .filter_map(|n| n.key.clone()),
        );
    }
    assert_eq!(
        escalations.len(),
        2,
        "{escalations:?} {:?}",
        run.last_decision
    );
    assert_ne!(escalations[0], escalations[1]);
}

/// Issue 29: what only a person can answer (a folder-trust dialog, an API-key approval, a
/// picker, a destructive prompt) is escalated on the first tick that reads it, on a tick that
/// is not a heartbeat too, and announced once.
#[test]
fn a_dialog_only_a_person_can_answer_is_escalated_on_the_first_read() {
    for (fixture, class) in [
        ("trust-dialog.txt", Class::Trust),
        ("auth-api-key-approval.txt", Class::Auth),
        ("picker-model.txt", Class::Picker),
        ("bypass-permissions-warning.txt", Class::Trust),
        ("permission-bash-rm-rf.txt", Class::Permission),
    ] {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/panes/claude-code-2.1.332/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut run = new_run(Mode::Dispatch);
        run.spec.agent = Agent::Claude;
        run.spec.into = crate::supervise::run::DispatchInto::Agent;
        let seen = entering_at_plan(pane_as(Agent::Claude, &text, "claude"));
        // The first tick reads the screen on a heartbeat; a second one in the same minute is
        // no heartbeat and has nothing new to say.
        let first = step(&mut run, &seen, 1);
        if let PaneObs::Seen(view) = &seen.pane {
            assert_eq!(view.classification.class, class, "{fixture}");
        }
        assert_eq!(
            first.event.decision,
            Decision::Escalate,
            "{fixture}: {:?}",
            first.event.reasons
        );
        let announced = |out: &Outcome| {
            out.event
                .notify
                .iter()
                .filter(|n| n.event == EventKind::Escalate)
                .count()
        };
        assert_eq!(announced(&first), 1, "{fixture}");
        assert!(
            first.answer.is_none() && first.effects.is_empty(),
            "{fixture}"
        );
        for minute in 2..=4 {
            let out = step(&mut run, &seen, minute);
            assert_eq!(announced(&out), 0, "{fixture} minute {minute}");
            assert!(out.answer.is_none() && out.effects.is_empty(), "{fixture}");
        }
        assert!(run.waits.needs_person.is_some(), "{fixture}");
    }
    // Off a heartbeat (a tick 10 s after the last one) the first read still escalates.
    let text = include_str!("../../../tests/fixtures/panes/claude-code-2.1.332/trust-dialog.txt");
    let mut run = new_run(Mode::Observe);
    run.spec.agent = Agent::Claude;
    run.last_heartbeat_at = Some(at(55));
    let out = decide(
        &run,
        &obs(SignalObs::Missing, pane_as(Agent::Claude, text, "claude")),
        at(65),
        &OPTIONS,
    );
    assert!(!out.event.heartbeat);
    assert_eq!(
        out.event.decision,
        Decision::Escalate,
        "{:?}",
        out.event.reasons
    );
}

/// Issue 29: the agent answered its folder-trust dialog with "No, exit" (its default) and
/// left the dialog's text above the shell prompt: the run sees a shell, not the dialog, and
/// ends as exited within two heartbeats, the dialog's words as the reason.
#[test]
fn an_agent_that_exited_under_its_dialog_is_noticed_with_the_dialogs_words() {
    let text = include_str!(
        "../../../tests/fixtures/panes/claude-code-2.1.332/shell-after-trust-dialog-no-exit.txt"
    );
    let mut run = new_run(Mode::Observe);
    run.spec.agent = Agent::Claude;
    run.spec.launch_command = None;
    let seen = obs(SignalObs::Missing, pane_as(Agent::Claude, text, "bash"));
    if let PaneObs::Seen(view) = &seen.pane {
        assert_eq!(
            view.classification.class,
            Class::Shell,
            "{}",
            view.classification.reason
        );
        assert!(view.shell_ready());
    }
    let first = step(&mut run, &seen, 1);
    assert_eq!(run.status, Status::Running, "{:?}", first.event.reasons);
    assert!(
        first.event.notify.is_empty(),
        "no escalation of the dialog's remains"
    );
    let second = step(&mut run, &seen, 2);
    assert_eq!(
        (second.event.decision, run.status),
        (Decision::Exit, Status::Exited)
    );
    let exit = &second.event.notify[0];
    assert_eq!(exit.event, EventKind::Exit);
    assert!(
        exit.reason
            .contains("Claude Code didn't start because this folder isn't trusted."),
        "{}",
        exit.reason
    );
}

/// Issue 28: a picker of the agent's own escalates whatever the program in front is called
/// (node, with none of Codex's own lines on the screen, or `sh` running a launcher script that
/// does not exec), on the first read, and nothing is typed — not Enter into Codex's "Sign in
/// another way" menu or its API-key field either.
#[test]
fn an_agents_picker_under_node_is_escalated_never_answered() {
    for (fixture, foreground) in [
        ("picker-permissions.txt", "node"),
        ("picker-rate-limit-switch-model.txt", "node"),
        ("picker-plan-question.txt", "node"),
        ("sign-in-another-way.txt", "node"),
        ("api-key-entry.txt", "node"),
        ("picker-permissions-under-launcher.txt", "sh"),
    ] {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/panes/codex-0.171/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut run = new_run(Mode::Observe);
        run.spec.agent = Agent::Codex;
        let seen = obs(SignalObs::Missing, pane_as(Agent::Codex, &text, foreground));
        let first = step(&mut run, &seen, 1);
        assert_eq!(
            first.event.decision,
            Decision::Escalate,
            "{fixture}: {:?}",
            first.event.reasons
        );
        for minute in 1..=3 {
            let out = step(&mut run, &seen, minute + 1);
            assert!(out.answer.is_none() && out.effects.is_empty(), "{fixture}");
            assert!(
                !out.event
                    .notify
                    .iter()
                    .any(|n| n.event == EventKind::Escalate),
                "{fixture}: announced once"
            );
        }
    }
}

/// Issue 29 (live, load 20): a tick 0.7 s after typing a step into Claude Code saw its input
/// box still empty, decided the keys never arrived and typed the step a second time. Within
/// [`DISPATCH_GRACE`] of the typing, a screen that does not show the keys yet is waited on;
/// past it, a dispatch whose keys really were lost is typed once more, with a grace of its own.
#[test]
fn a_screen_that_has_not_echoed_the_keys_yet_is_waited_on_not_typed_into_again() {
    let ms = |secs: i64, millis: i64| at(secs) + chrono::Duration::milliseconds(millis);
    let text = "/ai-cli-task plan /t --generate";
    let mut run = agent_run();
    let out = decide(
        &run,
        &entering_at_plan(claude_idle("● Ready.")),
        at(100),
        &OPTIONS,
    );
    assert_eq!(out.event.decision, Decision::Dispatch);
    // Into the agent the driver keeps the intent record until the screen confirms the keys.
    run = out.run;
    assert_eq!(
        (run.dispatch.typing.as_deref(), run.dispatch.count),
        (Some(text), 1)
    );
    // 0.7 s later the input box is still empty (the agent has not echoed yet), or shows the
    // text with its Enter on the way: nothing is typed, nothing is pressed.
    for pane in [claude_idle("● Ready."), claude_typed(text)] {
        let out = decide(&run, &obs(SignalObs::Missing, pane), ms(100, 700), &OPTIONS);
        assert_eq!(
            out.event.decision,
            Decision::Wait,
            "{:?}",
            out.event.reasons
        );
        assert!(sent(&out).is_empty(), "{:?}", out.effects);
        assert!(out.dispatch_intent().is_none());
        assert_eq!(out.run.dispatch.typing.as_deref(), Some(text));
        assert_eq!(out.run.dispatch.count, 1);
    }
    // Past the grace an empty box means the keys were lost: typed again, the same dispatch.
    let out = decide(
        &run,
        &obs(SignalObs::Missing, claude_idle("● Ready.")),
        at(110),
        &OPTIONS,
    );
    assert_eq!(
        sent(&out),
        [Key::Text(text.into()), Key::Key("Enter".into())],
        "{:?}",
        out.event.reasons
    );
    run = out.run;
    assert_eq!(run.dispatch.count, 1);
    assert_eq!(run.dispatch.dispatched_at, Some(at(110)));
    // The retype has its own grace.
    let out = decide(
        &run,
        &obs(SignalObs::Missing, claude_idle("● Ready.")),
        ms(111, 500),
        &OPTIONS,
    );
    assert!(sent(&out).is_empty(), "{:?}", out.event.reasons);
    // The screen shows the step taken: confirmed, within the grace or not.
    let out = decide(
        &run,
        &obs(SignalObs::Missing, claude_working()),
        ms(110, 300),
        &OPTIONS,
    );
    assert_eq!(
        out.event.decision,
        Decision::Progress,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(out.run.dispatch.typing, None);
    // A clock that went back proves nothing: the screen decides, as before.
    let out = decide(
        &run,
        &obs(SignalObs::Missing, claude_idle("● Ready.")),
        at(50),
        &OPTIONS,
    );
    assert_eq!(sent(&out)[0], Key::Text(text.into()));
}

proptest! {
    /// An unconfirmed dispatch whose screen shows no sign of its keys (an empty prompt, or
    /// the agent's box holding the text) is typed into again only once DISPATCH_GRACE has
    /// passed since the typing, and never counted again.
    #[test]
    fn an_unconfirmed_dispatch_is_not_typed_again_within_the_grace(
        millis in 0i64..25_000,
        into_agent in any::<bool>(),
        typed_box in any::<bool>(),
    ) {
        let typed_at = at(200);
        let now = typed_at + chrono::Duration::milliseconds(millis);
        let (mut run, pane, text) = if into_agent {
            let text = "/ai-cli-task exec /t";
            let pane = if typed_box { claude_typed(text) } else { claude_idle("● Ready.") };
            (agent_run(), pane, text)
        } else {
            (new_run(Mode::Dispatch), shell(), r#"claude -p "/ai-cli-task exec /t""#)
        };
        run.dispatch.dispatched = Some(DispatchStep { next: "exec".into(), checkpoint: String::new() });
        run.dispatch.dispatched_at = Some(typed_at);
        run.dispatch.count = 4;
        run.dispatch.typing = Some(text.to_string());
        let out = decide(&run, &obs(SignalObs::Missing, pane), now, &OPTIONS);
        let past = millis >= DISPATCH_GRACE.as_millis() as i64;
        prop_assert_eq!(!sent(&out).is_empty(), past, "{:?}", out.event.reasons);
        prop_assert_eq!(keys_in_flight(Some(typed_at), now), !past);
        prop_assert_eq!(out.run.dispatch.count, 4);
        if !past {
            prop_assert_eq!(out.event.decision, Decision::Wait);
            prop_assert_eq!(out.run.dispatch.typing.as_deref(), Some(text));
        }
    }
}

/// The typed state of a Claude Code whose last turn ended on a StopFailure `error`, recorded
/// by its hooks at `secs`.
/// `then` adds later events (payload, time).
fn stop_failure(
    error: &str,
    secs: i64,
    then: &[(&str, i64)],
) -> crate::supervise::channels::ChannelObs {
    use crate::hook::session::{Key, apply, parse};
    let key = Key::Session("s".into());
    let mut record = None;
    let then = then.iter().map(|(p, when)| (p.to_string(), *when));
    for (payload, when) in [
        (
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"Say hello"}"#
                .to_string(),
            secs - 5,
        ),
        (
            format!(
                r#"{{"hook_event_name":"StopFailure","session_id":"s","error":"{error}","last_assistant_message":"Invalid API key · Fix external API key"}}"#
            ),
            secs,
        ),
    ]
    .into_iter()
    .chain(then)
    {
        record = Some(apply(record, &key, &parse(payload.as_bytes()).unwrap(), at(when)).record);
    }
    crate::supervise::channels::ChannelObs {
        by: Some("pane"),
        hook: record,
        status: None,
        agent_compacts_at: None,
    }
}

/// Issue 29 live tier: Claude Code's 401 screen settles a few seconds after its StopFailure
/// (the status line drops "esc to interrupt", the input box offers "Once fixed, resend your
/// message"); the one failure is one decision — one tick decides `escalate`, one notification
/// — not one per redraw, and no resume is ever planned.
#[test]
fn a_standing_stop_failure_is_one_escalation_however_its_screen_is_redrawn() {
    let failed = "❯ Say hello\n  ⎿  Invalid API key · Fix external API key";
    let first = format!("{failed}\n\n{RULE}\n❯ \n{RULE}\n  ⏸ manual mode on · esc to interrupt");
    let settled = format!(
        "{failed}\n\n{RULE}\n❯ Once fixed, resend your message\n{RULE}\n  ⏸ manual mode on"
    );
    let mut run = new_run(Mode::Observe);
    run.spec.agent = Agent::Claude;
    let typed = stop_failure("authentication_failed", 30, &[]);
    let (mut notified, mut decisions) = (Vec::new(), Vec::new());
    // A minute after the failure Claude Code's idle Notification comes: the agent still
    // waits on the same fix (issue 29: the hook state it moved once made a second decision).
    let idle = stop_failure(
        "authentication_failed",
        30,
        &[(
            r#"{"hook_event_name":"Notification","session_id":"s","notification_type":"idle_prompt"}"#,
            90,
        )],
    );
    let ticks = [
        (31, &first, &typed),
        (36, &settled, &typed),
        (41, &settled, &typed),
        (46, &first, &typed),
        (51, &settled, &typed),
        (91, &settled, &idle),
        (96, &settled, &idle),
        (101, &first, &idle),
    ];
    for (n, (secs, screen, typed)) in ticks.into_iter().enumerate() {
        let mut o = obs(SignalObs::Missing, pane_as(Agent::Claude, screen, "claude"));
        o.channels = Some(typed.clone());
        // Ticks 5 s apart, as `run watch --heartbeat 5s` ticked the live 401.
        let now = at(secs);
        let out = step_at(&mut run, &o, now);
        assert!(out.effects.is_empty(), "nothing typed: {:?}", out.effects);
        assert_ne!(
            out.event.decision,
            Decision::Resume,
            "{:?}",
            out.event.reasons
        );
        assert!(
            !out.event.reasons.iter().any(|r| r.contains("resume")),
            "no resume planned: {:?}",
            out.event.reasons
        );
        notified.extend(
            out.event
                .notify
                .iter()
                .filter(|n| n.event == EventKind::Escalate)
                .map(|n| n.key.clone()),
        );
        decisions.push(out.event.decision);
        assert!(
            run.waits.needs_person.is_some(),
            "tick {n}: {:?}",
            out.event.reasons
        );
    }
    assert_eq!(notified.len(), 1, "{notified:?}");
    assert_eq!(
        decisions
            .iter()
            .filter(|d| **d == Decision::Escalate)
            .count(),
        1,
        "{decisions:?}"
    );
    // Another failure later is another decision.
    let mut o = obs(
        SignalObs::Missing,
        pane_as(Agent::Claude, &settled, "claude"),
    );
    o.channels = Some(stop_failure("authentication_failed", 400, &[]));
    let out = step_at(&mut run, &o, at(401));
    assert_eq!(
        out.event.decision,
        Decision::Escalate,
        "{:?}",
        out.event.reasons
    );
    assert_eq!(
        out.event
            .notify
            .iter()
            .filter(|n| n.event == EventKind::Escalate)
            .count(),
        1,
        "{:?}",
        out.event.reasons
    );
}

/// Issue 25: a usage limit Claude Code's StopFailure hook recorded (no status line) is the
/// account's reading of its 5-hour window: used up, until the reset the message names, with
/// its source. (This path once read a field that was never set, and had no test of its own.)
#[test]
fn a_stop_failure_usage_limit_is_the_accounts_reading_of_its_window() {
    use crate::hook::session::{Key, apply, parse};
    use crate::supervise::governor::{Event, ReadingSource, WindowKind};
    let key = Key::Session("s".into());
    let mut record = None;
    for (payload, secs) in [
        (
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"Say hello"}"#,
            25,
        ),
        (
            r#"{"hook_event_name":"StopFailure","session_id":"s","error":"rate_limit","last_assistant_message":"You've hit your limit · resets 10:42am (UTC)"}"#,
            30,
        ),
    ] {
        record = Some(apply(record, &key, &parse(payload.as_bytes()).unwrap(), at(secs)).record);
    }
    let mut run = new_run(Mode::Observe);
    run.spec.agent = Agent::Claude;
    run.spec.account = "team".into();
    let screen = format!(
        "❯ Say hello\n  ⎿  You've hit your limit · resets 10:42am (UTC)\n\n{RULE}\n❯ \n{RULE}\n  ⏸ manual mode on"
    );
    let mut o = obs(
        SignalObs::Missing,
        pane_as(Agent::Claude, &screen, "claude"),
    );
    o.channels = Some(crate::supervise::channels::ChannelObs {
        by: Some("pane"),
        hook: record,
        status: None,
        agent_compacts_at: None,
    });
    o.account = Some(crate::supervise::store::AccountView::default());
    let out = step_at(&mut run, &o, at(31));
    let readings: Vec<_> = out
        .account_events
        .iter()
        .filter_map(|e| match e {
            Event::Read(kind, reading) => Some((*kind, reading.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(readings.len(), 1, "{:?}", out.account_events);
    let (kind, reading) = &readings[0];
    assert_eq!(*kind, WindowKind::FiveHour);
    assert_eq!(reading.source, ReadingSource::StopFailure);
    assert_eq!(reading.used, 100.0);
    assert_eq!(reading.session, "s");
    // 1_800_000_031 is 2027-01-15T08:00:31Z: the next 10:42 UTC is that morning's.
    assert_eq!(
        reading.resets_at,
        DateTime::from_timestamp(1_800_000_000 + 2 * 3600 + 42 * 60, 0).unwrap()
    );
}

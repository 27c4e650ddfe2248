//! Every wait ends (issue 13): real tmux panes with a scripted fake agent showing real Claude
//! Code captures, `AUTOCTL_NOW` stepping through simulated hours. Each wait ends in a resume
//! or an escalation within its maximum; a resume is typed exactly once; nothing is typed into
//! a weekly-limit menu; `needs-person` is a state with `run ack`; notifications go out once
//! and never hold a tick past their timeout; a half-typed dispatch line is recovered; `run
//! start --launch` refuses a program that does not exist.

use std::fs;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::run_tick::task;
use crate::tmuxfix::{scripted_agent, tmux};
use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

/// A real capture of Claude Code 2.1.332 (the release the live tier runs).
fn fixture(name: &str) -> String {
    format!("tests/fixtures/panes/claude-code-2.1.332/{name}.txt")
}

/// Wait until the scripted agent shows `working-streaming` (its screen after a submitted
/// line): a tick before the redraw would still read the screen the Enter answered.
fn streaming(sb: &Sandbox, target: &str) {
    crate::tmuxfix::wait_for(sb, target, "the agent streaming again", |s, _| {
        s.contains("Finagling")
    });
}

/// The same screen as Claude Code 2.1.197 drew it.
fn fixture_197(name: &str) -> String {
    format!("tests/fixtures/panes/claude-code/{name}.txt")
}

fn time(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `run start` on a pane, observe mode, the agent Claude Code, at `now`.
fn start(sb: &Sandbox, session: &str, target: &str, now: &str, extra: &[&str]) {
    let task = task(sb, session);
    sb.cmd()
        .env("AUTOCTL_NOW", now)
        .args(["run", "start", "--session", session, "--target", target])
        .args(extra)
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
}

/// One `run tick --session S` at `now` (plus `args`): its events, schema-checked.
fn tick(sb: &Sandbox, session: &str, now: &str, args: &[&str]) -> Vec<Value> {
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", now)
        .args(["run", "tick", "--heartbeat", "1s", "--session", session])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    let events = json_lines(&output);
    for event in &events {
        let violations = autoctl::schema::violations("tick-event", event);
        assert!(violations.is_empty(), "{event}: {violations:?}");
    }
    events
}

fn status(sb: &Sandbox, session: &str, now: &str) -> Value {
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", now)
        .args(["run", "status", "--format", "json", "--session", session])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let report = json_lines(&output).remove(0);
    let violations = autoctl::schema::violations("run-status", &report);
    assert!(violations.is_empty(), "{report}: {violations:?}");
    report
}

#[test]
fn an_agent_that_gave_up_on_a_529_is_resumed_once_after_its_backoff() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "gaveup",
        &[
            &fixture("api-529-gave-up"),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    let t0 = time("2027-03-01T10:00:00Z");
    start(&sb, "gaveup", &target, &stamp(t0), &[]);
    // Before the backoff (1 minute): a wait with the clock paused, nothing typed.
    for secs in [0, 20, 40, 59] {
        let events = tick(
            &sb,
            "gaveup",
            &stamp(t0 + chrono::Duration::seconds(secs)),
            &[],
        );
        assert_eq!(events[0]["decision"], "wait", "{}", events[0]);
        assert_eq!(events[0]["run"]["wait"]["kind"], "gave-up", "{}", events[0]);
        assert_eq!(events[0]["run"]["quota_waiting"], true);
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "nothing typed before the backoff"
    );
    let events = tick(
        &sb,
        "gaveup",
        &stamp(t0 + chrono::Duration::seconds(61)),
        &[],
    );
    assert_eq!(events[0]["decision"], "resume", "{}", events[0]);
    assert_eq!(events[0]["notify"][0]["event"], "resume", "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r"
    );
    // The agent works again: more ticks type nothing.
    for secs in [62, 90, 200, 400] {
        let events = tick(
            &sb,
            "gaveup",
            &stamp(t0 + chrono::Duration::seconds(secs)),
            &[],
        );
        assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r",
        "exactly one resume"
    );
    let report = status(&sb, "gaveup", &stamp(t0 + chrono::Duration::seconds(400)));
    assert_eq!(report["resumes"], 1, "{report}");
    // The 61 s of the wait did not count toward the timeout.
    assert!(
        report["elapsed_ms"].as_u64().unwrap() <= 340_000,
        "{report}"
    );
}

/// A usage limit resetting at `reset` (the screen's banner), waited out from `t0` with a tick
/// every 15 minutes: nothing typed before reset + margin, one resume after it, the 30-minute
/// timeout never fires meanwhile.
fn usage_limit_scenario(screen: &str, t0: &str, reset: &str) {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "limit",
        &[screen, &format!("enter:{}", fixture("working-streaming"))],
    );
    let t0 = time(t0);
    let reset = time(reset);
    start(&sb, "limit", &target, &stamp(t0), &["--timeout", "30m"]);
    let mut starts = 0;
    let mut now = t0;
    while now < reset {
        let events = tick(&sb, "limit", &stamp(now), &[]);
        let e = &events[0];
        assert_eq!(e["decision"], "wait", "{e}");
        assert_eq!(e["run"]["wait"]["kind"], "usage-limit", "{e}");
        assert_eq!(e["run"]["wait"]["reset"], stamp_ms(reset), "{e}");
        assert_eq!(e["run"]["status"], "running", "{e}");
        starts += e["notify"].as_array().map_or(0, |n| {
            n.iter()
                .filter(|n| n["event"] == "quota-wait-start")
                .count()
        });
        now += chrono::Duration::minutes(15);
    }
    assert_eq!(starts, 1, "quota-wait-start announced once");
    // The reset, and within the margin (1m): still nothing.
    tick(
        &sb,
        "limit",
        &stamp(reset + chrono::Duration::seconds(30)),
        &[],
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "never before the reset + margin"
    );
    let events = tick(
        &sb,
        "limit",
        &stamp(reset + chrono::Duration::seconds(65)),
        &[],
    );
    assert_eq!(events[0]["decision"], "resume", "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r"
    );
    for secs in [90, 180, 600] {
        let events = tick(
            &sb,
            "limit",
            &stamp(reset + chrono::Duration::seconds(secs)),
            &[],
        );
        assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r",
        "one resume for one reset"
    );
    let report = status(&sb, "limit", &stamp(reset + chrono::Duration::seconds(600)));
    assert_eq!(report["status"], "running", "{report}");
    // Supervised time excludes the wait: minutes, not hours.
    assert!(
        report["elapsed_ms"].as_u64().unwrap() < 15 * 60_000,
        "{report}"
    );
}

fn stamp_ms(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[test]
fn a_usage_limit_whose_automatic_continue_was_cancelled_is_resumed_once_after_its_reset() {
    // Claude Code 2.1.332: "You've hit your 5-hour limit · resets 12:50pm (UTC)" and
    // "Automatic continue cancelled".
    usage_limit_scenario(
        &fixture("quota-auto-continue-cancelled"),
        "2026-11-26T10:00:00Z",
        "2026-11-26T12:50:00Z",
    );
}

#[test]
fn a_usage_limit_of_claude_code_2_1_197_is_resumed_once_after_its_reset() {
    // "You've hit your session limit · resets 5:43am (UTC)", after "Stop and wait".
    usage_limit_scenario(
        &fixture_197("quota-session-limit-waiting"),
        "2026-11-26T03:00:00Z",
        "2026-11-26T05:43:00Z",
    );
}

#[test]
fn a_weekly_limit_menu_is_escalated_at_once_and_never_typed_into() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(&sb, "weekly", &[&fixture("quota-weekly-limit-menu")]);
    let t0 = time("2026-11-26T03:00:00Z");
    // Not a wait: the timeout clock runs (a run nobody answers still ends at --timeout).
    start(&sb, "weekly", &target, &stamp(t0), &["--timeout", "10h"]);
    let events = tick(&sb, "weekly", &stamp(t0), &[]);
    assert_eq!(events[0]["decision"], "escalate", "{}", events[0]);
    assert_eq!(events[0]["notify"][0]["event"], "escalate", "{}", events[0]);
    let report = status(&sb, "weekly", &stamp(t0));
    assert_eq!(report["needs_person"]["kind"], "weekly-limit", "{report}");
    // Text: STATE needs-person, the last column says since when and why.
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .args(["run", "status"])
        .output()
        .unwrap();
    let text = stdout(&output);
    let row: Vec<&str> = text.lines().nth(1).unwrap().split('\t').collect();
    assert_eq!(row[1], "needs-person", "{text}");
    assert!(
        row.last()
            .unwrap()
            .starts_with("since 2026-11-26T03:00:00.000Z: escalate: weekly usage limit"),
        "{text}"
    );
    let prom = stdout(
        &sb.cmd()
            .args(["run", "status", "--format", "prometheus"])
            .output()
            .unwrap(),
    );
    assert!(
        prom.contains("autoctl_run_needs_person{session=\"weekly\",reason=\"weekly-limit\"} 1"),
        "{prom}"
    );
    // Hours later: still escalated once, no reminder before --renotify, and a reminder after.
    for hour in 1..4 {
        let now = stamp(t0 + chrono::Duration::minutes(hour * 50));
        let events = tick(&sb, "weekly", &now, &[]);
        let told: Vec<&str> = events[0]["notify"]
            .as_array()
            .map(|n| n.iter().map(|n| n["event"].as_str().unwrap()).collect())
            .unwrap_or_default();
        assert!(!told.contains(&"escalate"), "{}", events[0]);
        assert_eq!(
            told.contains(&"needs-person"),
            hour == 2,
            "hour {hour}: {}",
            events[0]
        );
    }
    // A person acknowledges: the state clears and the same screen is not escalated again.
    sb.cmd()
        .args(["run", "ack", "--session", "weekly"])
        .assert()
        .code(0);
    assert_eq!(
        status(&sb, "weekly", &stamp(t0))["needs_person"],
        Value::Null
    );
    let output = sb
        .cmd()
        .args(["run", "ack", "--session", "weekly"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(one_stderr_line(&output).contains("does not need a person"));
    let events = tick(&sb, "weekly", &stamp(t0 + chrono::Duration::hours(5)), &[]);
    assert_ne!(events[0]["decision"], "escalate", "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "nothing ever typed into the limit menu"
    );
}

#[test]
fn a_wedged_stream_gets_one_esc_then_the_resume_at_the_idle_prompt() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "wedged",
        &[
            &fixture("working-no-response-66s"),
            &format!("esc:{}", fixture("idle-after-interrupt")),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    let t0 = time("2027-03-01T10:00:00Z");
    start(
        &sb,
        "wedged",
        &target,
        &stamp(t0),
        &["--stream-timeout", "10m"],
    );
    for minute in [0, 3, 6, 9] {
        let events = tick(
            &sb,
            "wedged",
            &stamp(t0 + chrono::Duration::minutes(minute)),
            &[],
        );
        assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
    }
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &target, &keys), "");
    let events = tick(
        &sb,
        "wedged",
        &stamp(t0 + chrono::Duration::minutes(10)),
        &[],
    );
    // Named for what was done: the Esc, a stall recovery, not a resume (issue 26).
    assert_eq!(events[0]["decision"], "esc", "{}", events[0]);
    assert!(
        events[0]["reasons"].as_array().unwrap().iter().any(|r| r
            .as_str()
            .unwrap()
            .starts_with("esc: the stream has not moved")),
        "{}",
        events[0]
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "\u{1b}",
        "one Esc"
    );
    let events = tick(
        &sb,
        "wedged",
        &stamp(t0 + chrono::Duration::seconds(630)),
        &[],
    );
    assert_eq!(events[0]["decision"], "resume", "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "\u{1b}continue\r"
    );
    let report = status(&sb, "wedged", &stamp(t0 + chrono::Duration::minutes(11)));
    assert_eq!(report["recoveries_total"], 1, "{report}");
}

/// A notify command that appends its event (from stdin and the environment) to a file.
fn recorder(sb: &Sandbox) -> (String, std::path::PathBuf) {
    let out = sb.path("notified.jsonl");
    let cmd = format!(
        r#"printf '%s %s ' "$AUTOCTL_EVENT" "$AUTOCTL_SESSION" >> {out}; cat >> {out}"#,
        out = out.display()
    );
    (cmd, out)
}

#[test]
fn notifications_are_sent_once_and_a_failing_or_slow_command_never_holds_the_tick() {
    let sb = Sandbox::new();
    let (target, _keys) = scripted_agent(&sb, "notes", &[&fixture("quota-weekly-limit-menu")]);
    let t0 = time("2026-11-26T03:00:00Z");
    start(&sb, "notes", &target, &stamp(t0), &["--timeout", "10h"]);
    let (cmd, out) = recorder(&sb);
    for minute in 0..3 {
        tick(
            &sb,
            "notes",
            &stamp(t0 + chrono::Duration::minutes(minute)),
            &["--notify", &cmd],
        );
    }
    let lines = fs::read_to_string(&out).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    let (head, json) = lines.split_once(" {").unwrap();
    assert_eq!(head, "escalate notes");
    let event: Value = serde_json::from_str(&format!("{{{json}")).unwrap();
    let violations = autoctl::schema::violations("notify-event", &event);
    assert!(violations.is_empty(), "{event}: {violations:?}");
    assert_eq!(event["run"]["needs_person"]["kind"], "weekly-limit");

    // A command that sleeps: killed at the timeout with what it started; the tick succeeds.
    let (target, _keys) = scripted_agent(&sb, "slow", &[&fixture("quota-weekly-limit-menu")]);
    start(&sb, "slow", &target, &stamp(t0), &["--timeout", "10h"]);
    let pid_file = sb.path("sleeper.pid");
    let slow = format!("sh -c 'echo $$ > {}; exec sleep 60'", pid_file.display());
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0 + chrono::Duration::hours(2)))
        .args(["run", "tick", "--session", "slow", "--notify-timeout", "1s"])
        .args(["--notify", &slow])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("still running after 1s; killed"),
        "{stderr}"
    );
    // Gone, or a zombie nobody reaped yet (PID 1 of a container may not): not running.
    let pid = fs::read_to_string(&pid_file).unwrap();
    let stat = fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
    assert!(
        matches!(state, None | Some("Z") | Some("X")),
        "the sleeping notify command was killed: {stat}"
    );
}

#[test]
fn a_failing_notify_command_is_a_warning_and_autoctl_notify_is_the_default() {
    let sb = Sandbox::new();
    let (target, _keys) = scripted_agent(&sb, "fails", &[&fixture("quota-weekly-limit-menu")]);
    let t0 = time("2026-11-26T03:00:00Z");
    start(&sb, "fails", &target, &stamp(t0), &[]);
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .env("AUTOCTL_NOTIFY", "exit 1")
        .args(["run", "tick", "--session", "fails"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("\"exit 1\" for escalate"), "{stderr}");
    assert!(stderr.contains("exit status: 1"), "{stderr}");
}

#[test]
fn each_event_is_delivered_once_with_a_watcher_and_four_concurrent_ticks() {
    let sb = Sandbox::new();
    let (target, _keys) = scripted_agent(&sb, "many", &[&fixture("quota-weekly-limit-menu")]);
    // Every process on one fixed clock: what is decided does not depend on when it runs.
    let now = stamp(time("2027-03-01T10:00:00Z"));
    start(&sb, "many", &target, &now, &[]);
    let (cmd, out) = recorder(&sb);
    let mut watcher = sb
        .std_cmd()
        .env("AUTOCTL_NOW", &now)
        .args([
            "run",
            "watch",
            "--all",
            "--heartbeat",
            "1s",
            "--notify",
            &cmd,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ticks: Vec<_> = (0..4)
        .map(|_| {
            sb.std_cmd()
                .env("AUTOCTL_NOW", &now)
                .args([
                    "run",
                    "tick",
                    "--all",
                    "--heartbeat",
                    "1s",
                    "--notify",
                    &cmd,
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut t in ticks {
        t.wait().unwrap();
    }
    // The watcher ticks the run at two more heartbeats too.
    let ticked = status(&sb, "many", &now)["ticks"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while status(&sb, "many", &now)["ticks"].as_u64().unwrap() < ticked + 2 {
        assert!(Instant::now() < deadline, "the watcher stopped ticking");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = StdCommand::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status();
    watcher.wait().unwrap();
    let lines = fs::read_to_string(&out).unwrap_or_default();
    let escalations = lines
        .lines()
        .filter(|l| l.starts_with("escalate many "))
        .count();
    assert_eq!(escalations, 1, "{lines}");
}

#[test]
fn a_tick_killed_between_the_command_and_its_enter_is_recovered_by_the_next() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let sb = Sandbox::new();
    let task = task(&sb, "halfway");
    let target = crate::tmuxfix::start_in_shell(&sb, "halfway", "true");
    let log = sb.path("ran.log");
    let template = format!("echo ran {{next}} >> {}", log.display());
    let t0 = time("2027-03-01T10:00:00Z");
    sb.cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .args(["run", "start", "--session", "halfway", "--target", &target])
        .args([
            "--mode",
            "dispatch",
            "--agent",
            "generic",
            "--command",
            &template,
        ])
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    // The tick dies after the text, before the Enter (a debug build's failpoint).
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .env("AUTOCTL_FAILPOINT", "type-before-enter")
        .args(["run", "tick", "--session", "halfway"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        None,
        "killed by the failpoint: {output:?}"
    );
    let screen = crate::tmuxfix::wait_for(&sb, &target, "the half-typed line", |s, _| {
        s.contains("echo ran plan")
    });
    assert!(!log.exists(), "not run yet: {screen}");
    // The next tick (after the dead tick's lease) clears the line and types it again.
    let events = tick(
        &sb,
        "halfway",
        &stamp(t0 + chrono::Duration::minutes(3)),
        &[],
    );
    assert_eq!(events[0]["decision"], "dispatch", "{}", events[0]);
    assert_eq!(
        events[0]["did"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["effect"] == "send")
            .unwrap()["keys"][0]["key"],
        "C-u",
        "{}",
        events[0]
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_to_string(&log).unwrap_or_default() != "ran plan\n" {
        assert!(
            Instant::now() < deadline,
            "the command did not run once: {:?}",
            fs::read_to_string(&log)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        status(&sb, "halfway", &stamp(t0 + chrono::Duration::minutes(3)))["recoveries_total"],
        1
    );
}

/// Issue 23 item 4: a second kill during the retype of a half-typed dispatch wedged the loop
/// for good on main c968843 — every tick escalated again, `run ack` did not clear it, only an
/// Enter typed by hand did. Now any number of kills during the retype are followed by one
/// more retype (a retype counts once its keys are all in), and with no stall recovery left a
/// person's `run ack` buys one.
#[test]
fn any_number_of_kills_during_a_retype_never_wedge_the_loop_and_ack_really_clears() {
    if !crate::util::failpoints_armed() {
        return;
    }
    for recoveries in ["10", "0"] {
        let sb = Sandbox::new();
        let task = task(&sb, "wedge");
        let target = crate::tmuxfix::start_in_shell(&sb, "wedge", "true");
        let log = sb.path("ran.log");
        let template = format!("echo ran {{next}} >> {}", log.display());
        let t0 = time("2027-03-01T10:00:00Z");
        let at = |minutes: i64| stamp(t0 + chrono::Duration::minutes(minutes));
        sb.cmd()
            .env("AUTOCTL_NOW", at(0))
            .args(["run", "start", "--session", "wedge", "--target", &target])
            .args(["--mode", "dispatch", "--agent", "generic"])
            .args(["--command", &template, "--max-recoveries", recoveries])
            .arg("--task")
            .arg(&task)
            .assert()
            .code(0);
        // The dispatch, then two retypes, each killed between the text and its Enter.
        for minute in [0, 3, 6] {
            let output = sb
                .cmd()
                .env("AUTOCTL_NOW", at(minute))
                .env("AUTOCTL_FAILPOINT", "type-before-enter")
                .args(["run", "tick", "--session", "wedge"])
                .output()
                .unwrap();
            if recoveries == "0" && minute > 0 {
                // No recovery to retype with: the line is escalated, nothing typed.
                assert_eq!(output.status.code(), Some(0), "{output:?}");
                let event: Value = serde_json::from_slice(&output.stdout).unwrap();
                assert_eq!(event["decision"], "escalate", "{event}");
                break;
            }
            assert_eq!(
                output.status.code(),
                None,
                "killed at minute {minute}: {output:?}"
            );
            crate::tmuxfix::wait_for(&sb, &target, "the half-typed line", |s, _| {
                s.trim_end().ends_with("ran.log")
            });
        }
        assert!(!log.exists(), "nothing ran yet");
        if recoveries == "0" {
            // The person looks and acknowledges: the line is cleared and typed once more.
            sb.cmd()
                .env("AUTOCTL_NOW", at(7))
                .args(["run", "ack", "--session", "wedge"])
                .assert()
                .code(0);
        }
        let events = tick(&sb, "wedge", &at(9), &[]);
        assert_eq!(events[0]["decision"], "dispatch", "{}", events[0]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while fs::read_to_string(&log).unwrap_or_default() != "ran plan\n" {
            assert!(
                Instant::now() < deadline,
                "the command did not run: {:?}",
                fs::read_to_string(&log)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let events = tick(&sb, "wedge", &at(10), &[]);
        assert_ne!(events[0]["decision"], "escalate", "{}", events[0]);
        let now = status(&sb, "wedge", &at(10));
        assert!(now["needs_person"].is_null(), "{now}");
        let spent = if recoveries == "0" { 0 } else { 1 };
        assert_eq!(now["recoveries_total"], spent, "one retype counted: {now}");
        // A command typed again by the last tick would have run before a line typed after it.
        crate::tmuxfix::shell_caught_up(&sb, &target);
        assert_eq!(fs::read_to_string(&log).unwrap(), "ran plan\n", "ran once");
    }
}

/// `bench/faults.sh kills`: wedged loops after kills during retypes. Each round is a fresh
/// dispatch loop whose dispatch and then 0-3 retypes are each killed between the text and its
/// Enter (1-4 kills); a wedged loop is one whose command has not run exactly once after the
/// next two plain ticks, or that still needs a person.
#[test]
#[ignore = "a benchmark run of bench/faults.sh"]
#[allow(clippy::print_stdout, clippy::print_stderr)] // the benchmark's report
fn bench_wedged_loops_after_kills_during_retypes() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let rounds = crate::util::bench_rounds("WEDGE_ROUNDS", 4);
    let (mut wedged, mut kills_total) = (0, 0);
    for round in 0..rounds {
        let kills = 1 + round % 4;
        let sb = Sandbox::new();
        let task = task(&sb, "wedge");
        let target = crate::tmuxfix::start_in_shell(&sb, "wedge", "true");
        let log = sb.path("ran.log");
        let template = format!("echo ran {{next}} >> {}", log.display());
        let t0 = time("2027-03-01T10:00:00Z");
        let at = |minutes: i64| stamp(t0 + chrono::Duration::minutes(minutes));
        sb.cmd()
            .env("AUTOCTL_NOW", at(0))
            .args(["run", "start", "--session", "wedge", "--target", &target])
            .args(["--mode", "dispatch", "--agent", "generic"])
            .args(["--command", &template, "--max-recoveries", "10"])
            .arg("--task")
            .arg(&task)
            .assert()
            .code(0);
        for k in 0..kills {
            let output = sb
                .cmd()
                .env("AUTOCTL_NOW", at(3 * k as i64))
                .env("AUTOCTL_FAILPOINT", "type-before-enter")
                .args(["run", "tick", "--session", "wedge"])
                .output()
                .unwrap();
            if output.status.code().is_none() {
                kills_total += 1;
                crate::tmuxfix::wait_for(&sb, &target, "the half-typed line", |s, _| {
                    s.trim_end().ends_with("ran.log")
                });
            }
        }
        let after = 3 * kills as i64 + 1;
        tick(&sb, "wedge", &at(after), &[]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while fs::read_to_string(&log).unwrap_or_default().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        tick(&sb, "wedge", &at(after + 1), &[]);
        std::thread::sleep(Duration::from_millis(300));
        let ran = fs::read_to_string(&log).unwrap_or_default();
        let now = status(&sb, "wedge", &at(after + 1));
        if ran != "ran plan\n" || !now["needs_person"].is_null() {
            wedged += 1;
            eprintln!("wedged after {kills} kills: ran {ran:?}, {now}");
        }
    }
    println!(
        "kills wedge: {rounds} loops, {kills_total} kills during retypes: wedged loops {wedged}"
    );
    assert_eq!(wedged, 0);
}

#[test]
fn run_start_refuses_a_launch_program_the_pane_cannot_run() {
    let sb = Sandbox::new();
    let task = task(&sb, "nolaunch");
    let target = crate::tmuxfix::start_in_shell(&sb, "nolaunch", "true");
    let output = sb
        .cmd()
        .args(["run", "start", "--session", "nolaunch", "--target", &target])
        .args(["--launch", "no-such-agent-xyz --go {task}", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = one_stderr_line(&output);
    assert!(
        line.contains("\"no-such-agent-xyz\" is not on the pane's PATH"),
        "{line}"
    );
    sb.cmd()
        .args(["run", "lookup", "--task"])
        .arg(&task)
        .assert()
        .code(1);
    // A shell builtin and a program on PATH pass.
    sb.cmd()
        .args(["run", "start", "--session", "nolaunch", "--target", &target])
        .args(["--launch", "true", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let _ = tmux(&sb, &["kill-server"]);
}

#[test]
fn credit_balance_too_low_is_escalated_at_once_and_nothing_is_typed() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(&sb, "credit", &[&fixture("credit-balance-too-low")]);
    let t0 = time("2027-03-01T10:00:00Z");
    start(&sb, "credit", &target, &stamp(t0), &["--timeout", "10h"]);
    for minute in [0, 1, 30, 120] {
        let events = tick(
            &sb,
            "credit",
            &stamp(t0 + chrono::Duration::minutes(minute)),
            &[],
        );
        let decision = events[0]["decision"].as_str().unwrap().to_string();
        assert_eq!(decision == "escalate", minute == 0, "{}", events[0]);
        assert_ne!(decision, "resume", "{}", events[0]);
    }
    let report = status(&sb, "credit", &stamp(t0 + chrono::Duration::minutes(120)));
    assert_eq!(report["needs_person"]["kind"], "billing", "{report}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "never typed into a billing screen"
    );
}

#[test]
fn an_automatic_continue_that_fires_by_itself_gets_no_resume() {
    let sb = Sandbox::new();
    // The screen moves on (the agent works) before reset + margin: nothing to type.
    let (target, keys) = scripted_agent(
        &sb,
        "armed",
        &[
            &fixture("quota-auto-continue-armed"),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    start(&sb, "armed", &target, "2026-11-26T12:00:00Z", &[]);
    let events = tick(&sb, "armed", "2026-11-26T12:00:00Z", &[]);
    assert_eq!(
        events[0]["run"]["wait"]["kind"], "usage-limit",
        "{}",
        events[0]
    );
    // Claude Code continues by itself at 12:50 (here: a line submitted to the fake).
    crate::tmuxfix::press(&sb, &target, &["Enter"]);
    streaming(&sb, &target);
    for now in [
        "2026-11-26T12:50:30Z",
        "2026-11-26T12:51:10Z",
        "2026-11-26T12:55:00Z",
    ] {
        let events = tick(&sb, "armed", now, &[]);
        assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
        assert!(events[0]["run"]["wait"].is_null(), "{}", events[0]);
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "\r",
        "only the test's own Enter"
    );
}

/// Claude Code's banner names its reset by the hour ("resets 12:50pm (UTC)"); first read a
/// minute after 12:50 it would be tomorrow's, beyond --max-quota-wait, and escalated (live,
/// 2026-11-28, the quota tier: "resets 11pm" read just after 11pm; Claude Code continued by
/// itself 72 s later). It is the reset that just happened: the armed automatic continue is
/// left to fire, a cancelled one gets the resume.
#[test]
fn a_banner_read_just_after_its_reset_is_that_reset_not_tomorrows() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "armed",
        &[
            &fixture("quota-auto-continue-armed"),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    start(&sb, "armed", &target, "2026-11-26T12:51:00Z", &[]);
    let events = tick(&sb, "armed", "2026-11-26T12:51:00Z", &[]);
    let e = &events[0];
    assert_ne!(e["decision"], "escalate", "{e}");
    assert_eq!(e["run"]["wait"]["kind"], "usage-limit", "{e}");
    assert_eq!(e["run"]["wait"]["reset"], "2026-11-26T12:50:00.000Z", "{e}");
    // Claude Code continues by itself (here: a line submitted to the fake): no resume.
    crate::tmuxfix::press(&sb, &target, &["Enter"]);
    streaming(&sb, &target);
    let events = tick(&sb, "armed", "2026-11-26T12:52:12Z", &[]);
    assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
    assert_ne!(events[0]["decision"], "escalate", "{}", events[0]);
    assert!(events[0]["run"]["wait"].is_null(), "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "\r",
        "only the test's own Enter"
    );

    // The automatic continue cancelled, read just after the reset: resumed once.
    let (target, keys) = scripted_agent(
        &sb,
        "cancelled",
        &[
            &fixture("quota-auto-continue-cancelled"),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    start(&sb, "cancelled", &target, "2026-11-26T12:51:30Z", &[]);
    let events = tick(&sb, "cancelled", "2026-11-26T12:51:30Z", &[]);
    assert_eq!(events[0]["decision"], "resume", "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r"
    );
    // An hour and more after it, the same words are a limit a day away: escalated.
    let (target, _keys) = scripted_agent(&sb, "late", &[&fixture("quota-auto-continue-cancelled")]);
    start(&sb, "late", &target, "2026-11-26T13:51:00Z", &[]);
    let events = tick(&sb, "late", "2026-11-26T13:51:00Z", &[]);
    assert_eq!(events[0]["decision"], "escalate", "{}", events[0]);
}

/// The notify recipes of docs/waits.md work as pasted: each command runs with the event on stdin and
/// in its environment, against fake `curl`, `notify-send` and `mail` that record what they
/// were given (and the real `jq`).
#[test]
fn the_readme_notify_recipes_work_as_pasted() {
    let sb = Sandbox::new();
    let readme = fs::read_to_string(crate::tmuxfix::repo("docs/waits.md")).unwrap();
    let block = readme
        .split("Recipes (each works as pasted")
        .nth(1)
        .and_then(|rest| rest.split("```sh\n").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("the recipes block");
    let recipes: Vec<&str> = block
        .lines()
        .filter_map(|line| line.split_once("--notify '").map(|(_, cmd)| cmd))
        .map(|cmd| cmd.strip_suffix('\'').expect("one quoted command per line"))
        .collect();
    assert_eq!(recipes.len(), 5, "{block}");
    let bin = sb.path("bin");
    fs::create_dir_all(&bin).unwrap();
    for fake in ["curl", "notify-send", "mail"] {
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {dir}/{fake}.args\ncat > {dir}/{fake}.stdin\n",
            dir = sb.root().display()
        );
        let path = bin.join(fake);
        fs::write(&path, script).unwrap();
        fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let event = r#"{"event":"escalate","time":"2027-03-01T10:00:00.000Z","session":"auth","task":"/w/TASK/auth","reason":"escalate: weekly usage limit","decision":"escalate","run":{}}"#;
    let run = |cmd: &str| {
        let mut child = StdCommand::new("sh")
            .args(["-c", cmd])
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .env("AUTOCTL_EVENT", "escalate")
            .env("AUTOCTL_SESSION", "auth")
            .env("AUTOCTL_TASK", "/w/TASK/auth")
            .env("AUTOCTL_REASON", "escalate: weekly usage limit")
            .env(
                "SLACK_WEBHOOK_URL",
                "https://hooks.slack.com/services/T/B/X",
            )
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success(), "{cmd}");
    };
    let read = |name: &str| fs::read_to_string(sb.path(name)).unwrap_or_default();
    // ntfy: the JSON as the message.
    run(recipes[0]);
    assert_eq!(read("curl.stdin"), event);
    assert!(read("curl.args").contains("ntfy.sh/my-autoctl-alerts"));
    // ntfy with a title.
    run(recipes[1]);
    let args = read("curl.args");
    assert!(args.contains("Title: autoctl escalate auth\n"), "{args}");
    assert!(args.contains("escalate: weekly usage limit\n"), "{args}");
    // Slack: jq makes the message, curl posts it.
    run(recipes[2]);
    let posted: Value = serde_json::from_str(&read("curl.stdin")).unwrap();
    assert_eq!(
        posted,
        serde_json::json!({"text": "autoctl escalate auth: escalate: weekly usage limit"})
    );
    assert!(read("curl.args").contains("https://hooks.slack.com/services/T/B/X"));
    run(recipes[3]);
    assert_eq!(
        read("notify-send.args"),
        "autoctl: escalate\nauth: escalate: weekly usage limit\n"
    );
    run(recipes[4]);
    assert_eq!(
        read("mail.args"),
        "-s\nautoctl escalate: auth\nme@example.com\n"
    );
    assert_eq!(read("mail.stdin"), event);
}

/// `run watch` ticks a run when its wait ends, not at its next heartbeat: a usage limit
/// recorded by `hook stop-failure` (its reset to the second) resumes the idle agent a moment
/// after the reset although the heartbeat is a minute.
#[test]
fn run_watch_resumes_at_the_reset_not_at_the_next_heartbeat() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "woken",
        &[
            &fixture("idle-after-reply"),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    let reset = Utc::now() + chrono::Duration::seconds(4);
    fs::create_dir_all(sb.path(".autoctl")).unwrap();
    fs::write(
        sb.path(".autoctl/quota-wait.json"),
        format!(
            r#"{{"since":"{}","kind":"rate_limit","reset_at":"{}"}}"#,
            stamp_ms(Utc::now()),
            stamp_ms(reset)
        ),
    )
    .unwrap();
    start(
        &sb,
        "woken",
        &target,
        &stamp_ms(Utc::now()),
        &["--resume-margin", "0s"],
    );
    let mut watcher = sb
        .std_cmd()
        .args(["run", "watch", "--session", "woken", "--heartbeat", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while crate::tmuxfix::keys_received(&keys).is_empty()
        && started.elapsed() < Duration::from_secs(40)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let typed_at = Utc::now();
    std::thread::sleep(Duration::from_secs(2));
    let _ = StdCommand::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status();
    watcher.wait().unwrap();
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r",
        "resumed once, before the heartbeat"
    );
    assert!(
        typed_at >= reset,
        "never before the reset: {typed_at} < {reset}"
    );
}

/// Issue 29: a 401 was scheduled for resuming ("resume 1 of 5 at +60 s") although its screen
/// read `auth` from the first second. The real Claude Code 2.1.332 recording (a key the API
/// refuses, `tests/fixtures/hook/claude-code/auth-401`): its StopFailure
/// `authentication_failed` and its screen escalate on the first tick; nothing is ever typed.
#[test]
fn a_401_is_escalated_at_once_and_never_resumed() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "login",
        &["tests/fixtures/hook/claude-code/auth-401/screen-auth-401.txt"],
    );
    let t0 = time("2027-03-01T10:00:00Z");
    start(&sb, "login", &target, &stamp(t0), &["--timeout", "1h"]);
    let payload = fs::read(
        "tests/fixtures/hook/claude-code/auth-401/04-StopFailure-authentication_failed.json",
    )
    .unwrap();
    let output = crate::typed_tick::in_pane(
        &sb,
        &target,
        &stamp(t0),
        &["hook", "stop-failure"],
        &payload,
    );
    assert!(output.status.success(), "{output:?}");
    let events = tick(&sb, "login", &stamp(t0 + chrono::Duration::seconds(1)), &[]);
    assert_eq!(events[0]["decision"], "escalate", "{}", events[0]);
    let reasons = events[0]["reasons"].to_string();
    assert!(
        reasons.contains("authentication_failed") && !reasons.contains("resume"),
        "{reasons}"
    );
    assert!(events[0]["run"]["wait"].is_null(), "{}", events[0]);
    assert_eq!(
        events[0]["run"]["needs_person"]["kind"], "auth",
        "{}",
        events[0]
    );
    for secs in [30, 75, 200, 1000] {
        let events = tick(
            &sb,
            "login",
            &stamp(t0 + chrono::Duration::seconds(secs)),
            &[],
        );
        assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
        assert!(
            !events[0].to_string().contains("resume 1 of"),
            "{}",
            events[0]
        );
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "nothing typed"
    );
}

#[test]
fn a_stop_failure_the_hooks_recorded_is_resumed_once_after_its_backoff() {
    let sb = Sandbox::new();
    let (target, keys) = scripted_agent(
        &sb,
        "failed",
        &[
            &fixture("idle-after-reply"),
            &format!("enter:{}", fixture("working-streaming")),
        ],
    );
    let t0 = time("2027-03-01T10:00:00Z");
    start(&sb, "failed", &target, &stamp(t0), &["--timeout", "1h"]);
    // Claude Code's StopFailure after a 529's retries, recorded by `hook stop-failure` in the
    // agent's pane; the screen shows only the idle prompt (an idle agent never finishes
    // another turn, so only autoctl can end this).
    let payload =
        fs::read("tests/fixtures/hook/claude-code/overloaded/04-StopFailure-server_error.json")
            .unwrap();
    let output = crate::typed_tick::in_pane(
        &sb,
        &target,
        &stamp(t0),
        &["hook", "stop-failure"],
        &payload,
    );
    assert!(output.status.success(), "{output:?}");
    let events = tick(
        &sb,
        "failed",
        &stamp(t0 + chrono::Duration::seconds(10)),
        &[],
    );
    assert_eq!(events[0]["decision"], "wait", "{}", events[0]);
    assert_eq!(
        events[0]["run"]["wait"]["kind"], "stop-failure",
        "{}",
        events[0]
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "not before the backoff"
    );
    let events = tick(
        &sb,
        "failed",
        &stamp(t0 + chrono::Duration::seconds(75)),
        &[],
    );
    assert_eq!(events[0]["decision"], "resume", "{}", events[0]);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r"
    );
    // The agent works again: no second resume.
    for secs in [100, 200, 400] {
        let events = tick(
            &sb,
            "failed",
            &stamp(t0 + chrono::Duration::seconds(secs)),
            &[],
        );
        assert_ne!(events[0]["decision"], "resume", "{}", events[0]);
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "continue\r",
        "resumed once"
    );
}

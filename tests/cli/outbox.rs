//! The notification outbox (issue 23 item 5): what a tick announces is stored with its
//! decision, so a tick killed between saving and announcing loses nothing — the next tick
//! past the delivery lease delivers it, ended runs included, with the id it was stored under.

use std::fs;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::run_tick::task;
use crate::tmuxfix::scripted_agent;
use crate::util::Sandbox;

fn time(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A notify command that appends `EVENT ID SESSION JSON` (the id from the environment) in one
/// write: the commands of one delivery run at once.
fn recorder(sb: &Sandbox) -> (String, std::path::PathBuf) {
    let out = sb.path("notified.txt");
    let cmd = format!(
        r#"line="$AUTOCTL_EVENT $AUTOCTL_EVENT_ID $AUTOCTL_SESSION $(cat)"; printf '%s\n' "$line" >> {out}"#,
        out = out.display()
    );
    (cmd, out)
}

fn deliveries(out: &std::path::Path) -> Vec<(String, String, String, Value)> {
    fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let mut parts = line.splitn(4, ' ');
            let event = parts.next().unwrap().to_string();
            let id = parts.next().unwrap().to_string();
            let session = parts.next().unwrap().to_string();
            let json: Value = serde_json::from_str(parts.next().unwrap()).unwrap();
            let violations = autoctl::schema::violations("notify-event", &json);
            assert!(violations.is_empty(), "{json}: {violations:?}");
            (event, id, session, json)
        })
        .collect()
}

fn tick(sb: &Sandbox, now: DateTime<Utc>, cmd: &str, failpoint: Option<&str>) -> Option<i32> {
    let mut command = sb.cmd();
    command.env("AUTOCTL_NOW", stamp(now)).args([
        "run",
        "tick",
        "--all",
        "--heartbeat",
        "1s",
        "--notify",
        cmd,
    ]);
    if let Some(name) = failpoint {
        command.env("AUTOCTL_FAILPOINT", name);
    }
    command.output().unwrap().status.code()
}

#[test]
fn an_event_a_killed_tick_saved_but_never_announced_is_delivered_once_by_a_later_tick() {
    let sb = Sandbox::new();
    let screen = "tests/fixtures/panes/claude-code-2.1.332/quota-weekly-limit-menu.txt";
    let (target, _keys) = scripted_agent(&sb, "kept", &[screen]);
    let (target_ended, _keys2) = scripted_agent(&sb, "ended", &[screen]);
    let t0 = time("2027-02-01T09:00:00Z");
    for (session, target) in [("kept", &target), ("ended", &target_ended)] {
        let task = task(&sb, session);
        sb.cmd()
            .env("AUTOCTL_NOW", stamp(t0))
            .args(["run", "start", "--session", session, "--target", target])
            .args(["--timeout", "10h", "--task"])
            .arg(&task)
            .assert()
            .code(0);
    }
    let (cmd, out) = recorder(&sb);

    // Killed after the decisions are saved, before anything is announced.
    assert_eq!(
        tick(&sb, t0, &cmd, Some("tick-saved-not-announced")),
        None,
        "the failpoint kills the tick"
    );
    assert!(deliveries(&out).is_empty());
    // The escalation is decided: the run needs a person, and is not escalated again.
    let status = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .args(["run", "status", "--format", "json", "--session", "kept"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("weekly-limit"),
        "{status:?}"
    );
    // One run ends meanwhile: what it had to say is still said.
    sb.cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .args(["run", "stop", "--session", "ended"])
        .assert()
        .code(0);

    // Within the killed tick's delivery lease nobody else delivers it.
    assert_eq!(
        tick(&sb, t0 + chrono::Duration::seconds(60), &cmd, None),
        Some(0)
    );
    assert!(deliveries(&out).is_empty(), "{:?}", deliveries(&out));

    // Past it, the next tick does: each event once, with its stored id.
    assert_eq!(
        tick(&sb, t0 + chrono::Duration::minutes(3), &cmd, None),
        Some(0)
    );
    let got = deliveries(&out);
    let mut sessions: Vec<&str> = got.iter().map(|(_, _, s, _)| s.as_str()).collect();
    sessions.sort();
    assert_eq!(sessions, ["ended", "kept"], "{got:?}");
    for (event, id, _, json) in &got {
        assert_eq!(event, "escalate");
        assert_eq!(id.len(), 16, "{id}");
        assert_eq!(json["id"], id.as_str(), "{json}");
        assert_eq!(json["event"], "escalate");
        let decided: DateTime<Utc> = json["time"].as_str().unwrap().parse().unwrap();
        assert_eq!(decided, t0, "the event as it was decided: {json}");
    }

    // Marked delivered: later ticks do not deliver it again.
    for minutes in [6, 12] {
        assert_eq!(
            tick(&sb, t0 + chrono::Duration::minutes(minutes), &cmd, None),
            Some(0)
        );
    }
    assert_eq!(deliveries(&out).len(), 2, "{:?}", deliveries(&out));
}

#[test]
fn a_delivered_event_carries_its_id_in_the_tick_event_and_the_notification() {
    let sb = Sandbox::new();
    let screen = "tests/fixtures/panes/claude-code-2.1.332/quota-weekly-limit-menu.txt";
    let (target, _keys) = scripted_agent(&sb, "one", &[screen]);
    let t0 = time("2027-02-01T09:00:00Z");
    let task = task(&sb, "one");
    sb.cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .args([
            "run",
            "start",
            "--session",
            "one",
            "--target",
            &target,
            "--task",
        ])
        .arg(&task)
        .assert()
        .code(0);
    let (cmd, out) = recorder(&sb);
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0))
        .args(["run", "tick", "--session", "one", "--notify", &cmd])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let event: Value = serde_json::from_slice(&output.stdout).unwrap();
    let violations = autoctl::schema::violations("tick-event", &event);
    assert!(violations.is_empty(), "{event}: {violations:?}");
    let got = deliveries(&out);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(event["notify"][0]["id"], got[0].1.as_str(), "{event}");
    // Delivered and marked: a tick long after delivers nothing again.
    assert_eq!(
        tick(&sb, t0 + chrono::Duration::minutes(10), &cmd, None),
        Some(0)
    );
    assert_eq!(deliveries(&out).len(), 1);
}

/// `bench/faults.sh kills`: lost and duplicated notifications under kill injection. Each
/// round starts a run whose screen is escalated, kills its tick after the decision is saved
/// and before it is announced, then ticks past the delivery lease, and once more later: the
/// escalation must be delivered exactly once (by its id).
#[test]
#[ignore = "a benchmark run of bench/faults.sh"]
#[allow(clippy::print_stdout)] // the benchmark's report
fn bench_notifications_under_kill_injection() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let rounds = crate::util::bench_rounds("OUTBOX_ROUNDS", 4);
    let sb = Sandbox::new();
    let screen = "tests/fixtures/panes/claude-code-2.1.332/quota-weekly-limit-menu.txt";
    let (cmd, out) = recorder(&sb);
    let t0 = time("2027-02-01T09:00:00Z");
    let (mut killed, mut lost, mut duplicated) = (0, 0, 0);
    for round in 0..rounds {
        let session = format!("r{round}");
        let (target, _keys) = scripted_agent(&sb, &session, &[screen]);
        let task = task(&sb, &session);
        let start = t0 + chrono::Duration::minutes(10 * round as i64);
        sb.cmd()
            .env("AUTOCTL_NOW", stamp(start))
            .args(["run", "start", "--session", &session, "--target", &target])
            .args(["--timeout", "100h", "--task"])
            .arg(&task)
            .assert()
            .code(0);
        let run = |at: DateTime<Utc>, failpoint: Option<&str>| {
            let mut command = sb.cmd();
            command.env("AUTOCTL_NOW", stamp(at)).args([
                "run",
                "tick",
                "--session",
                &session,
                "--notify",
                &cmd,
            ]);
            if let Some(name) = failpoint {
                command.env("AUTOCTL_FAILPOINT", name);
            }
            command.output().unwrap().status.code()
        };
        if run(start, Some("tick-saved-not-announced")).is_none() {
            killed += 1;
        }
        run(start + chrono::Duration::minutes(3), None);
        run(start + chrono::Duration::minutes(6), None);
        let ids: Vec<String> = deliveries(&out)
            .into_iter()
            .filter(|(_, _, s, _)| *s == session)
            .map(|(_, id, _, _)| id)
            .collect();
        match ids.len() {
            0 => lost += 1,
            n => duplicated += n - 1,
        }
    }
    println!(
        "kills outbox: {rounds} ticks, {killed} killed after saving before announcing: lost notifications {lost}, duplicated {duplicated}"
    );
    assert_eq!((lost, duplicated), (0, 0));
}

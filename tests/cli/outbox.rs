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

/// The deliveries of one kind of event.
fn delivered(out: &std::path::Path, kind: &str) -> Vec<(String, String, Value)> {
    deliveries(out)
        .into_iter()
        .filter(|(event, ..)| event == kind)
        .map(|(_, id, session, json)| (id, session, json))
        .collect()
}

/// Each delivery's id is 16 hex digits and the one in its JSON.
fn assert_ids(got: &[(String, String, Value)]) {
    for (id, _, json) in got {
        assert_eq!(id.len(), 16, "{id}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert_eq!(json["id"], id.as_str(), "{json}");
    }
}

#[test]
fn a_weekly_reserve_notice_a_killed_tick_decided_is_delivered_once_by_a_later_tick() {
    use crate::governor::{at, start, statusline};
    let sb = Sandbox::new();
    let run = start(&sb, "reserve", &["--account", "team"]);
    // The account's 7-day window is 95% used: 5% left is within the 10% reserve, which a run
    // of the default priority may not use. The account is escalated once for this reset.
    let out = crate::typed_tick::in_pane(
        &sb,
        &run.pane,
        &at(1),
        &["statusline"],
        &statusline(20.0, 3600, 95.0),
    );
    assert!(out.status.success(), "{out:?}");
    let (cmd, out) = recorder(&sb);
    let t0 = time(&at(0));

    // Killed after the decision (and the account's "escalated") is saved, before announcing.
    assert_eq!(
        tick(
            &sb,
            t0 + chrono::Duration::seconds(2),
            &cmd,
            Some("tick-saved-not-announced")
        ),
        None,
        "the failpoint kills the tick"
    );
    assert!(deliveries(&out).is_empty());
    // Within the killed tick's delivery lease nobody delivers it.
    assert_eq!(
        tick(&sb, t0 + chrono::Duration::seconds(62), &cmd, None),
        Some(0)
    );
    assert!(delivered(&out, "weekly-reserve").is_empty());
    // Past it, a later tick does, once, with the id it was stored under.
    assert_eq!(
        tick(&sb, t0 + chrono::Duration::minutes(3), &cmd, None),
        Some(0)
    );
    let got = delivered(&out, "weekly-reserve");
    assert_eq!(got.len(), 1, "{:?}", deliveries(&out));
    assert_ids(&got);
    assert_eq!(got[0].1, "reserve");
    assert!(
        got[0].2["reason"]
            .as_str()
            .unwrap()
            .contains("account \"team\""),
        "{}",
        got[0].2
    );
    for minutes in [6, 12] {
        assert_eq!(
            tick(&sb, t0 + chrono::Duration::minutes(minutes), &cmd, None),
            Some(0)
        );
    }
    assert_eq!(delivered(&out, "weekly-reserve").len(), 1);
}

#[test]
fn a_weekly_reserve_notice_is_delivered_and_marked_with_a_stable_id() {
    use crate::governor::{at, start, statusline};
    let sb = Sandbox::new();
    let first = start(&sb, "one", &["--account", "team"]);
    start(&sb, "two", &["--account", "team"]);
    let out = crate::typed_tick::in_pane(
        &sb,
        &first.pane,
        &at(1),
        &["statusline"],
        &statusline(20.0, 3600, 95.0),
    );
    assert!(out.status.success(), "{out:?}");
    let (cmd, out) = recorder(&sb);
    let t0 = time(&at(0));
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", stamp(t0 + chrono::Duration::seconds(2)))
        .args(["run", "tick", "--all", "--notify", &cmd])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // Two runs of the account are held; the account is announced once, with the id the
    // tick's event shows.
    let got = delivered(&out, "weekly-reserve");
    assert_eq!(got.len(), 1, "{:?}", deliveries(&out));
    assert_ids(&got);
    assert_eq!(
        ids_shown(&output, "weekly-reserve"),
        [got[0].0.clone()],
        "{output:?}"
    );
    // Marked delivered: later ticks deliver it no more.
    for minutes in [3, 6] {
        assert_eq!(
            tick(&sb, t0 + chrono::Duration::minutes(minutes), &cmd, None),
            Some(0)
        );
    }
    assert_eq!(delivered(&out, "weekly-reserve").len(), 1);
}

/// The ids of the `kind` notifications a tick's printed events show.
fn ids_shown(output: &std::process::Output, kind: &str) -> Vec<String> {
    crate::util::json_lines(output)
        .iter()
        .flat_map(|e| e["notify"].as_array().cloned().unwrap_or_default())
        .filter(|n| n["event"] == kind)
        .map(|n| n["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A run started on host h2 (its pane at the weekly-limit menu) at t0, and a notification
/// recorder: the notify command and the file it writes. Returns them with t0.
fn a_run_of_host_h2(sb: &Sandbox) -> (String, std::path::PathBuf, DateTime<Utc>) {
    let screen = "tests/fixtures/panes/claude-code-2.1.332/quota-weekly-limit-menu.txt";
    let (target, _keys) = scripted_agent(sb, "far", &[screen]);
    let t0 = time("2027-02-01T09:00:00Z");
    let task = task(sb, "far");
    sb.cmd()
        .env("AUTOCTL_HOST", "h2")
        .env("AUTOCTL_NOW", stamp(t0))
        .args(["run", "start", "--session", "far", "--target", &target])
        .args(["--timeout", "100h", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let (cmd, out) = recorder(sb);
    (cmd, out, t0)
}

/// `run tick` as host `host` (the runs' registry is the sandbox's, shared by both hosts).
fn tick_as(
    sb: &Sandbox,
    host: &str,
    now: DateTime<Utc>,
    cmd: &str,
    failpoint: Option<&str>,
) -> Option<i32> {
    let mut command = sb.cmd();
    command
        .env("AUTOCTL_HOST", host)
        .env("AUTOCTL_NOW", stamp(now))
        .args([
            "run",
            "tick",
            "--all",
            "--host-lease",
            "2m",
            "--notify",
            cmd,
        ]);
    if let Some(name) = failpoint {
        command.env("AUTOCTL_FAILPOINT", name);
    }
    command.output().unwrap().status.code()
}

#[test]
fn a_host_lost_notice_a_killed_tick_decided_is_delivered_once_by_a_later_tick() {
    let sb = Sandbox::new();
    let (cmd, out, t0) = a_run_of_host_h2(&sb);
    // h2 ticks once (its lease runs to t0 + 2 min), then goes silent.
    assert_eq!(tick_as(&sb, "h2", t0, &cmd, None), Some(0));

    // h1 notices the loss, and is killed after deciding it, before announcing it.
    let noticed = t0 + chrono::Duration::minutes(3);
    assert_eq!(
        tick_as(&sb, "h1", noticed, &cmd, Some("tick-saved-not-announced")),
        None,
        "the failpoint kills the tick"
    );
    assert!(delivered(&out, "host-lost").is_empty());
    // Within the killed tick's delivery lease nobody delivers it.
    assert_eq!(
        tick_as(
            &sb,
            "h1",
            noticed + chrono::Duration::minutes(1),
            &cmd,
            None
        ),
        Some(0)
    );
    assert!(delivered(&out, "host-lost").is_empty());
    // Past it, a later tick does, once, on the lost host's run, with its stored id.
    assert_eq!(
        tick_as(
            &sb,
            "h1",
            noticed + chrono::Duration::minutes(3),
            &cmd,
            None
        ),
        Some(0)
    );
    let got = delivered(&out, "host-lost");
    assert_eq!(got.len(), 1, "{:?}", deliveries(&out));
    assert_ids(&got);
    assert_eq!(got[0].1, "far");
    assert!(
        got[0].2["reason"]
            .as_str()
            .unwrap()
            .contains("host \"h2\" is lost"),
        "{}",
        got[0].2
    );
    for minutes in [6, 12] {
        assert_eq!(
            tick_as(
                &sb,
                "h1",
                noticed + chrono::Duration::minutes(minutes),
                &cmd,
                None
            ),
            Some(0)
        );
    }
    assert_eq!(delivered(&out, "host-lost").len(), 1);
}

#[test]
fn a_host_lost_notice_is_delivered_and_marked_with_a_stable_id() {
    let sb = Sandbox::new();
    let (cmd, out, t0) = a_run_of_host_h2(&sb);
    assert_eq!(tick_as(&sb, "h2", t0, &cmd, None), Some(0));
    let noticed = t0 + chrono::Duration::minutes(3);
    let output = sb
        .cmd()
        .env("AUTOCTL_HOST", "h1")
        .env("AUTOCTL_NOW", stamp(noticed))
        .args([
            "run",
            "tick",
            "--all",
            "--host-lease",
            "2m",
            "--notify",
            &cmd,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let got = delivered(&out, "host-lost");
    assert_eq!(got.len(), 1, "{:?}", deliveries(&out));
    assert_ids(&got);
    assert_eq!(
        ids_shown(&output, "host-lost"),
        [got[0].0.clone()],
        "{output:?}"
    );
    // Marked delivered: neither host delivers it again (h1 later, h3 noticing late).
    for (host, minutes) in [("h1", 3), ("h3", 6), ("h1", 12)] {
        assert_eq!(
            tick_as(
                &sb,
                host,
                noticed + chrono::Duration::minutes(minutes),
                &cmd,
                None
            ),
            Some(0)
        );
    }
    assert_eq!(delivered(&out, "host-lost").len(), 1);
}

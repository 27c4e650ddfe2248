//! The seed rows of issue 23: each behaviour a source system's document asks for, driven
//! through the built binary (real tmux on the sandbox's private socket where a pane is
//! involved, `AUTOCTL_NOW` for time), so a regression shows as the seed's words failing.

use std::fs;

use serde_json::Value;

use crate::run::session;
use crate::run_tick::task;
use crate::util::{Sandbox, json_lines, stdout};

/// Seed 000's recovery limits, as docs/waits.md words them: an agent that exits is started
/// again with `--launch` within the stall recoveries; past them the run ends as `exited`
/// (told once), not `running` and escalated again at every heartbeat.
#[test]
fn an_agent_that_keeps_exiting_is_relaunched_three_times_then_the_run_ends_as_exited() {
    let sb = Sandbox::new();
    let task = task(&sb, "exits");
    session(&sb, "gone");
    sb.cmd()
        .env("AUTOCTL_NOW", "2027-01-01T00:00:00Z")
        .args(["run", "start", "--session", "gone", "--agent", "generic"])
        .args(["--launch", "echo the agent is gone", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let mut events = Vec::new();
    // Two heartbeats with a shell in front are an exit; three relaunches, then the end.
    // Each tick is its own heartbeat (the clock moves a minute per tick).
    for minute in 1..=40 {
        let now = format!("2027-01-01T00:{minute:02}:00Z");
        let mut cmd = sb.cmd();
        cmd.env("AUTOCTL_NOW", &now);
        let out = cmd
            .args(["run", "tick", "--heartbeat", "60s", "--session", "gone"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        events.extend(json_lines(&out));
        let now_status = status_now(&sb, "gone", &now);
        if now_status["status"] != "running" || !now_status["needs_person"].is_null() {
            break;
        }
        // Each launch (run start's, then each relaunch) has printed its line and the
        // prompt is back before the next heartbeat looks.
        let launches = 1 + events
            .iter()
            .filter(|e| e["decision"] == "relaunch")
            .count();
        crate::tmuxfix::wait_for(&sb, "=gone:", "the launch to finish", |screen, _| {
            let printed = screen
                .lines()
                .filter(|l| l.trim() == "the agent is gone")
                .count();
            let last = screen.lines().rev().find(|l| !l.trim().is_empty());
            printed == launches && last.map(str::trim) == Some("$")
        });
    }
    let decisions: Vec<&str> = events
        .iter()
        .map(|e| e["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions.iter().filter(|d| **d == "relaunch").count(),
        3,
        "{decisions:?}"
    );
    let last = status_now(&sb, "gone", "2027-01-01T01:00:00Z");
    assert_eq!(last["status"], "exited", "{last}");
    assert_eq!(last["stop_reason"], "restart_limit", "{last}");
    assert!(last["needs_person"].is_null(), "{last}");
    let exit = events.iter().find(|e| e["decision"] == "exit").unwrap();
    assert!(
        exit["reasons"]
            .to_string()
            .contains("no stall recovery left"),
        "{exit}"
    );
    // An ended run is not ticked again: nothing more is said about it.
    let mut cmd = sb.cmd();
    cmd.env("AUTOCTL_NOW", "2027-01-01T01:01:00Z");
    let out = cmd
        .args(["run", "tick", "--heartbeat", "60s", "--session", "gone"])
        .output()
        .unwrap();
    assert!(
        json_lines(&out).iter().all(|e| e["decision"] != "escalate"),
        "{}",
        stdout(&out)
    );
}

fn status_now(sb: &Sandbox, session: &str, now: &str) -> Value {
    let out = sb
        .cmd()
        .env("AUTOCTL_NOW", now)
        .args(["run", "status", "--format", "json", "--session", session])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    json_lines(&out).remove(0)
}

/// Seed 002: "Recovery limits: 3 per step, 10 total", and a task-ai module's step is its
/// `.status.json` update. Three step-timeout continuations spend the step's budget; once
/// `updated_at` moves, the new step has three again (a module with no signal at all).
#[test]
fn a_status_update_restores_the_three_recoveries_per_step() {
    let sb = Sandbox::new();
    let task = sb.module("project/TASK/steps");
    let write_status = |updated_at: &str| {
        fs::write(
            task.join(".status.json"),
            format!(r#"{{"status":"executing","phase":"exec","updated_at":"{updated_at}"}}"#),
        )
        .unwrap();
    };
    write_status("2027-03-01T10:00:00Z");
    // An agent idle at its prompt that answers each continuation and goes idle again
    // without touching its status: a new idle screen after each.
    let idle = |name: &str| format!("tests/fixtures/panes/claude-code/idle-{name}.txt");
    let states: Vec<String> = [
        "after-reply",
        "after-bash-child",
        "after-bash-sleep",
        "after-interrupt",
        "after-auto-approved-ls",
    ]
    .iter()
    .map(|name| idle(name))
    .collect();
    let states: Vec<&str> = states.iter().map(String::as_str).collect();
    let (_, log) = crate::tmuxfix::scripted_agent(&sb, "agent", &states);
    let at = |minutes: u32| {
        format!(
            "2027-03-01T{:02}:{:02}:00Z",
            10 + minutes / 60,
            minutes % 60
        )
    };
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args([
            "run",
            "start",
            "--session",
            "agent",
            "--step-timeout",
            "10m",
        ])
        .args(["--timeout", "1d", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let tick = |minutes: u32| -> Value {
        let out = sb
            .cmd()
            .env("AUTOCTL_NOW", at(minutes))
            .args(["run", "tick", "--session", "agent"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        json_lines(&out).remove(0)
    };
    // The continuation was received and the agent's next idle screen is drawn.
    let answered = |before: &str, sent: usize| {
        crate::tmuxfix::wait_for(&sb, "=agent:", "the next idle screen", |screen, _| {
            screen != before && crate::tmuxfix::keys_received(&log) == "continue\r".repeat(sent)
        });
    };
    tick(1);
    // Three step timeouts, ten minutes apart: three continuations, the step's budget.
    for (sent, minutes) in [11, 21, 31].into_iter().enumerate() {
        let before = crate::tmuxfix::capture(&sb, "=agent:");
        let event = tick(minutes);
        assert_eq!(event["decision"], "answer", "{event}");
        answered(&before, sent + 1);
    }
    // The agent moved on: a new step.
    write_status("2027-03-01T10:32:00Z");
    let event = tick(32);
    assert_eq!(event["run"]["recoveries_iteration"], 0, "{event}");
    // Its step timeout gets a continuation, not a stall_limit stop.
    let before = crate::tmuxfix::capture(&sb, "=agent:");
    let event = tick(42);
    assert_eq!(event["decision"], "answer", "{event}");
    assert!(!task.join(".auto-stop").exists());
    answered(&before, 4);
    let run = status_now(&sb, "agent", &at(43));
    assert_eq!(run["status"], "running", "{run}");
    assert_eq!(
        (&run["recoveries_iteration"], &run["recoveries_total"]),
        (&1.into(), &4.into()),
        "{run}"
    );
}

//! The seed rows of issue 23: each behaviour a source system's document asks for, driven
//! through the built binary (real tmux on the sandbox's private socket where a pane is
//! involved, `AUTOCTL_NOW` for time), so a regression shows as the seed's words failing.

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
        let launches = 1 + events.iter().filter(|e| e["decision"] == "relaunch").count();
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
        exit["reasons"].to_string().contains("no stall recovery left"),
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

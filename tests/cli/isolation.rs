//! Issue 23 item 3 (the supervisor half): `run tick --all` and `run watch --all` isolate runs.
//! One run's error or bug — a panic while reading its screen, a failpoint standing in for
//! one — is reported for that run, every other run is ticked, and every claim is given back
//! on every way out (a panic, an error, SIGTERM between runs).

use std::fs;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::tmuxfix::fake_agent;
use crate::util::{Sandbox, json_lines};

const IDLE: &str = "tests/fixtures/panes/claude-code/idle-after-reply.txt";
const NOW: &str = "2027-03-01T10:00:00Z";

/// Three observe-mode runs, `a`, `b` and `c`, each a fake Claude Code showing `screen(name)`.
fn three_runs(sb: &Sandbox, screen: impl Fn(&str) -> String) {
    three_runs_at(sb, screen, Some(NOW));
}

/// The three runs started at `now`, or at the clock's time for a test whose watcher reads the
/// clock (a run started at a fixed date is past its timeout once the clock is a year ahead).
fn three_runs_at(sb: &Sandbox, screen: impl Fn(&str) -> String, now: Option<&str>) {
    for name in ["a", "b", "c"] {
        let (target, _) = fake_agent(sb, name, &screen(name));
        let task = sb.module(&format!("TASK/{name}"));
        let mut start = sb.cmd();
        if let Some(now) = now {
            start.env("AUTOCTL_NOW", now);
        }
        start
            .args(["run", "start", "--session", name, "--target", &target])
            .arg("--task")
            .arg(&task)
            .assert()
            .code(0);
    }
}

/// Sessions whose registry row is still claimed by some tick.
fn claimed(sb: &Sandbox) -> Vec<String> {
    let db = rusqlite::Connection::open(sb.path("state/autoctl.db")).unwrap();
    let mut query = db
        .prepare("SELECT session_name FROM task_auto WHERE claimed_by IS NOT NULL ORDER BY 1")
        .unwrap();
    query
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn by_session(events: &[Value], session: &str) -> Value {
    events
        .iter()
        .find(|e| e["session"] == session)
        .unwrap_or_else(|| panic!("no event for {session}: {events:?}"))
        .clone()
}

/// A permission box whose command crashed the shell reader on main c968843 (`find . -exec {`):
/// `pane classify` exited 101 and so did `run tick --all`, leaving every run it had claimed
/// locked for two minutes. Whatever the reader makes of it, the other runs are ticked, the
/// tick ends normally and no claim is left behind.
#[test]
fn a_screen_that_crashed_the_reader_stops_no_other_run() {
    let sb = Sandbox::new();
    let safe = fs::read_to_string(crate::tmuxfix::repo(
        "tests/fixtures/panes/claude-code/permission-bash-safe.txt",
    ))
    .unwrap();
    let crashing = sb.write(
        "find-exec.txt",
        safe.replace("Bash(npm test)", "Bash(find . -exec {)")
            .replace("   npm test\n", "   find . -exec {\n"),
    );
    three_runs(&sb, |name| {
        if name == "b" {
            crashing.display().to_string()
        } else {
            IDLE.to_string()
        }
    });
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .args(["run", "tick", "--all"])
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 2)),
        "the tick itself must not crash: {output:?}"
    );
    let events = json_lines(&output);
    assert_eq!(events.len(), 3, "{events:?}");
    for name in ["a", "c"] {
        assert_ne!(by_session(&events, name)["decision"], "error", "{events:?}");
    }
    assert_eq!(claimed(&sb), Vec::<String>::new());
}

/// A bug in one run's tick (the `tick-panic` failpoint) is that run's `error` event with
/// where it happened; the other runs are ticked, the claim is released (the next tick ticks
/// the run at once, no two-minute lease), and the exit code says an error was reported.
#[test]
fn a_panic_in_one_runs_tick_is_that_runs_error_and_its_claim_is_released() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let sb = Sandbox::new();
    three_runs(&sb, |_| IDLE.to_string());
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .env("AUTOCTL_FAILPOINT", "tick-panic=b")
        .args(["run", "tick", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let events = json_lines(&output);
    assert_eq!(events.len(), 3, "{events:?}");
    let b = by_session(&events, "b");
    assert_eq!(b["decision"], "error", "{b}");
    let why = b["reasons"][0].as_str().unwrap();
    assert!(
        why.starts_with("a bug in autoctl (please report it): panicked at src/"),
        "{why}"
    );
    assert!(why.ends_with("failpoint tick-panic=b"), "{why}");
    for name in ["a", "c"] {
        assert_eq!(
            by_session(&events, name)["decision"],
            "progress",
            "{events:?}"
        );
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("autoctl: session \"b\": a bug in autoctl")),
        "{stderr}"
    );
    assert_eq!(claimed(&sb), Vec::<String>::new());
    // The same minute: nothing is skipped as held by the dead tick.
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .args(["run", "tick", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = json_lines(&output);
    assert!(events.iter().all(|e| e["decision"] != "skip"), "{events:?}");
}

/// SIGTERM while a tick is busy with run `a` (cron's `timeout`, a person's Ctrl-C): `a` is
/// finished and saved, `b` and `c` are not started and their claims are given back, and the
/// tick exits 130.
#[test]
fn a_tick_asked_to_stop_releases_the_runs_it_has_not_reached() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let sb = Sandbox::new();
    three_runs(&sb, |_| IDLE.to_string());
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .env("AUTOCTL_FAILPOINT", "tick-sigterm=a")
        .args(["run", "tick", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    let events = json_lines(&output);
    assert_eq!(
        by_session(&events, "a")["decision"],
        "progress",
        "{events:?}"
    );
    for name in ["b", "c"] {
        let event = by_session(&events, name);
        assert_eq!(event["decision"], "skip", "{event}");
        assert!(
            event["reasons"][0]
                .as_str()
                .unwrap()
                .starts_with("interrupted"),
            "{event}"
        );
    }
    assert_eq!(claimed(&sb), Vec::<String>::new());
}

/// `run watch --all` with a bug in one run's tick keeps watching: the other runs' events come,
/// the broken run's error is reported (and retried), and the watcher does not exit.
#[test]
fn run_watch_all_survives_a_panic_in_one_run() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let sb = Sandbox::new();
    three_runs_at(&sb, |_| IDLE.to_string(), None);
    let mut watcher = sb
        .std_cmd()
        .env("AUTOCTL_FAILPOINT", "tick-panic=b")
        .args([
            "run",
            "watch",
            "--all",
            "--heartbeat",
            "1s",
            "--format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watcher.stdout.take().unwrap()).lines();
    let mut seen = std::collections::BTreeMap::<String, Vec<String>>::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Two heartbeats' worth: every run ticked twice, b's error each time.
    while seen.values().map(Vec::len).min().unwrap_or(0) < 2 || seen.len() < 3 {
        assert!(Instant::now() < deadline, "{seen:?}");
        let line = lines.next().expect("the watcher exited").unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        seen.entry(event["session"].as_str().unwrap().to_string())
            .or_default()
            .push(event["decision"].as_str().unwrap().to_string());
    }
    assert!(
        watcher.try_wait().unwrap().is_none(),
        "the watcher is still running"
    );
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status();
    assert_eq!(watcher.wait().unwrap().code(), Some(0));
    assert!(seen["b"].iter().all(|d| d == "error"), "{seen:?}");
    for name in ["a", "c"] {
        assert!(seen[name].iter().all(|d| d != "error"), "{seen:?}");
    }
    assert_eq!(claimed(&sb), Vec::<String>::new());
}

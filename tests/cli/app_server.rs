//! `autoctl run turn` against recorded conversations of the real Codex 0.171 app-server
//! (`tests/fixtures/app-server/codex/`), played back by `tests/fixtures/app-server/replay.py`
//! as the app-server's side: what autoctl answers, what it records as the pane's typed state.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::{Sandbox, hook_records, stdout};

const SOCKET: &str = "/tmp/tmux-0/autoctl-test";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/app-server")
        .join(name)
}

/// `run turn` in pane %7 with the recording `name` as its app-server; the client's lines go
/// to `client.log` in the sandbox.
fn turn(sb: &Sandbox, name: &str, extra: &[&str]) -> Output {
    let project = sb.module("proj");
    let app_server = format!(
        "python3 {} {} {}",
        fixture("replay.py").display(),
        fixture(&format!("codex/{name}")).display(),
        sb.path("client.log").display()
    );
    sb.cmd()
        .current_dir(&project)
        .env("TMUX", format!("{SOCKET},4242,0"))
        .env("TMUX_PANE", "%7")
        .args(["run", "turn", "--app-server", &app_server])
        .args(extra)
        .arg("Do the thing")
        .output()
        .unwrap()
}

fn client(sb: &Sandbox) -> Vec<Value> {
    fs::read_to_string(sb.path("client.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn answers(sb: &Sandbox) -> Vec<String> {
    client(sb)
        .iter()
        .filter_map(|m| m.pointer("/result/decision").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn record(sb: &Sandbox) -> Value {
    let mut records = hook_records(&sb.path("state/hooks"), false);
    assert_eq!(records.len(), 1, "{records:?}");
    records.remove(0)
}

#[test]
fn a_turn_is_sent_read_and_recorded_as_the_panes_typed_state() {
    let sb = Sandbox::new();
    let out = turn(&sb, "approval-accepted.jsonl", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("codex runs: npm test"), "{text}");
    assert!(
        text.contains("autoctl: approved npm test (runner)"),
        "{text}"
    );
    let sent = client(&sb);
    let methods: Vec<&str> = sent
        .iter()
        .filter_map(|m| m.get("method").and_then(Value::as_str))
        .collect();
    assert_eq!(
        methods,
        ["initialize", "initialized", "thread/start", "turn/start"]
    );
    assert_eq!(sent[3]["params"]["input"][0]["text"], "Do the thing");
    assert_eq!(
        answers(&sb),
        ["accept"],
        "npm test is a runner: accepted once"
    );
    let record = record(&sb);
    assert_eq!(record["channel"], "app-server");
    assert_eq!(record["agent"], "codex");
    assert_eq!(record["state"], "idle");
    assert_eq!(record["message"]["text"], "Tests ran.");
    assert_eq!(record["key"], format!("pane:%7@{SOCKET}"));
    let log = fs::read_to_string(sb.path("state/policy/decisions.jsonl")).unwrap();
    assert!(
        log.contains("\"door\":\"app-server\"") && log.contains("\"rule\":\"runner\""),
        "{log}"
    );
}

#[test]
fn a_destructive_call_is_asked_and_declined_without_a_person() {
    let sb = Sandbox::new();
    // No terminal to ask at: declined, and the turn goes on to its end.
    let out = turn(&sb, "approval-declined.jsonl", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("does not prove it harmless (destructive:rm"),
        "{text}"
    );
    assert!(
        text.contains("declined rm -rf build (no terminal to ask at)"),
        "{text}"
    );
    assert_eq!(answers(&sb), ["decline"]);
    // --unattended declines without asking.
    let sb = Sandbox::new();
    let out = turn(&sb, "approval-declined.jsonl", &["--unattended"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("autoctl: declined rm -rf build (destructive:rm)"));
    assert_eq!(answers(&sb), ["decline"]);
}

#[test]
fn a_usage_limit_ends_the_turn_with_its_reset_recorded() {
    let sb = Sandbox::new();
    let out = turn(&sb, "usage-limit.jsonl", &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout(&out).contains("the turn failed (rate_limit)"));
    let record = record(&sb);
    assert_eq!(record["state"], "failed");
    assert_eq!(record["error"], "rate_limit");
    assert!(
        record["error_message"]
            .as_str()
            .unwrap()
            .contains("usage limit")
    );
    let status = hook_records(&sb.path("state/hooks"), true);
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(
        status[0]["rate_limits"]["five_hour"]["used_percentage"],
        100.0
    );
    assert!(status[0]["rate_limits"]["five_hour"]["resets_at"].is_i64());
}

#[test]
fn the_next_step_resumes_the_panes_thread() {
    let sb = Sandbox::new();
    turn(&sb, "text.jsonl", &[]);
    let thread = record(&sb)["session_id"].as_str().unwrap().to_string();
    fs::remove_file(sb.path("client.log")).unwrap();
    // The recording answers thread/start's id as it would thread/resume's.
    turn(&sb, "text.jsonl", &[]);
    let sent = client(&sb);
    let open = sent.iter().find(|m| m["id"] == 2).unwrap();
    assert_eq!(open["method"], "thread/resume");
    assert_eq!(open["params"]["threadId"], thread);
    // --new-thread starts another.
    fs::remove_file(sb.path("client.log")).unwrap();
    turn(&sb, "text.jsonl", &["--new-thread"]);
    let sent = client(&sb);
    assert_eq!(
        sent.iter().find(|m| m["id"] == 2).unwrap()["method"],
        "thread/start"
    );
}

#[test]
fn an_app_server_that_cannot_run_is_a_clear_error() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let out = sb
        .cmd()
        .current_dir(&project)
        .args(["run", "turn", "--app-server", "exit 3", "Do the thing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stdout(&out).contains("the app-server exited before the turn ended"));
}

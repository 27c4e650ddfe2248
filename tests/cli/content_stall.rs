//! Seed 002's content-based stalls end to end (issue 7 part 3): reasoning loops and step
//! timeouts in `stall check` and `run tick`, the quota-wait record of `hook stop-failure` as a
//! wait, and `run continue --if-unchanged` — a real tmux server on the sandbox's socket, fake
//! agents that draw Claude Code screens and record every key they receive.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::hook::hook_with;
use crate::stall::{check, check_at};
use crate::tmuxfix::fake_agent;
use crate::util::{Sandbox, json_lines, one_stderr_line};

const IDLE: &str = "tests/fixtures/panes/claude-code/idle-after-reply.txt";
const SAFE: &str = "tests/fixtures/panes/claude-code/permission-bash-safe.txt";
const UPDATED_AT: &str = "2027-01-01T10:00:00+01:00";

/// A Claude Code screen in which the agent said the same thing three times between tool calls.
fn looping_screen(sb: &Sandbox) -> PathBuf {
    let round = "● Let me check the failing test again.\n\n● Bash(cargo test)\n  ⎿  test result: FAILED. 1 passed; 1 failed\n\n";
    sb.write(
        "looping.txt",
        format!(
            "❯ fix the test\n\n{}✻ Brewed for 3m 3s\n\n────────\n❯ \n────────\n  ? for shortcuts\n",
            round.repeat(2) + "● Let me check the failing test again.\n\n"
        ),
    )
}

/// A task module with a `.status.json` last updated at [`UPDATED_AT`].
fn task_with_status(sb: &Sandbox, name: &str) -> PathBuf {
    let task = sb.module(&format!("project/TASK/{name}"));
    fs::write(
        task.join(".status.json"),
        format!(r#"{{"status":"executing","phase":"exec","updated_at":"{UPDATED_AT}"}}"#),
    )
    .unwrap();
    task
}

/// A stall state in which `target`'s step clock started an hour ago on [`UPDATED_AT`].
fn plant_old_step(sb: &Sandbox, target: &str) {
    let state = serde_json::json!({
        "version": 1,
        "targets": { target: {
            "status_updated_at": UPDATED_AT,
            "step_since": "2000-01-01T00:00:00Z",
        }}
    });
    assert!(autoctl::schema::violations("stall-state", &state).is_empty());
    fs::write(sb.path("stall.json"), state.to_string()).unwrap();
}

#[test]
fn stall_check_stops_a_reasoning_loop_with_its_own_reason() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "loop");
    let screen = looping_screen(&sb);
    let (agent, log) = fake_agent(&sb, "agent", screen.to_str().unwrap());
    let task_arg = task.to_str().unwrap();
    // Reported without --apply, nothing written.
    let report = check(&sb, &agent, &["--task", task_arg]);
    assert_eq!(report["verdict"], "reasoning-loop", "{report}");
    assert_eq!(report["action"], "stop");
    assert_eq!(report["applied"], false);
    assert_eq!(report["message_repeats"], 3);
    assert!(!task.join(".auto-stop").exists());
    // --repeat-limit 0 turns the detector off; a higher limit is not reached yet.
    fs::remove_file(sb.path("stall.json")).unwrap();
    for limit in ["0", "4"] {
        let report = check(&sb, &agent, &["--repeat-limit", limit, "--apply"]);
        assert_ne!(report["verdict"], "reasoning-loop", "{report}");
        fs::remove_file(sb.path("stall.json")).unwrap();
    }
    let report = check(&sb, &agent, &["--apply", "--task", task_arg]);
    assert_eq!(
        (&report["verdict"], &report["action"], &report["applied"]),
        (&"reasoning-loop".into(), &"stop".into(), &true.into()),
        "{report}"
    );
    let stop: Value = serde_json::from_slice(&fs::read(task.join(".auto-stop")).unwrap()).unwrap();
    assert_eq!(stop["reason"], "reasoning_loop");
    assert!(autoctl::schema::violations("auto-stop", &stop).is_empty());
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "a loop is stopped, never typed into"
    );
    // The same screen again is not a new message: no second stop.
    let report = check(&sb, &agent, &["--apply", "--task", task_arg]);
    assert_ne!(report["verdict"], "reasoning-loop", "{report}");
}

/// A stall recovery past its limit (here the continuation a step timeout sends an idle
/// agent, with no recovery left) is a stall_limit stop, asked once.
#[test]
fn past_the_recovery_limit_a_step_timeout_is_a_stall_limit_stop() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "idle");
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    let task_arg = task.to_str().unwrap();
    plant_old_step(&sb, &agent);
    let args = [
        "--apply",
        "--max-recoveries-per-iteration",
        "0",
        "--task",
        task_arg,
    ];
    let report = check(&sb, &agent, &args);
    assert_eq!(
        (&report["verdict"], &report["action"], &report["applied"]),
        (&"limit".into(), &"stop".into(), &true.into()),
        "{report}"
    );
    let stop: Value = serde_json::from_slice(&fs::read(task.join(".auto-stop")).unwrap()).unwrap();
    assert_eq!(stop["reason"], "stall_limit");
    assert!(autoctl::schema::violations("auto-stop", &stop).is_empty());
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed past the limit"
    );
    // Asked once: the next heartbeat does not ask again.
    let report = check(&sb, &agent, &args);
    assert_eq!(
        (&report["action"], &report["applied"]),
        (&"none".into(), &false.into()),
        "{report}"
    );
}

#[test]
fn stall_check_sends_one_continuation_to_an_idle_agent_after_a_step_timeout() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "idle");
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    let task_arg = task.to_str().unwrap();
    // A first look starts the step clock now: no timeout, whatever updated_at says.
    let report = check(&sb, &agent, &["--apply", "--task", task_arg]);
    assert_eq!(report["verdict"], "progress", "{report}");
    assert_eq!(report["status_updated_at"], UPDATED_AT);
    assert_eq!(report["step_elapsed_seconds"], 0);
    // An hour without an update.
    plant_old_step(&sb, &agent);
    let report = check(
        &sb,
        &agent,
        &["--apply", "--task", task_arg, "--continue-text", "go on"],
    );
    assert_eq!(
        (&report["verdict"], &report["action"], &report["applied"]),
        (&"stalled".into(), &"continue".into(), &true.into()),
        "{report}"
    );
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .starts_with("step timeout: no .status.json update for"),
        "{report}"
    );
    assert_eq!(report["recoveries"]["total"], 1);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "go on\n"
    );
    // The clock restarted: the next heartbeat sends nothing.
    let report = check(&sb, &agent, &["--apply", "--task", task_arg]);
    assert_ne!(report["action"], "continue", "{report}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "go on\n"
    );
}

#[test]
fn stall_check_sends_no_continuation_once_the_status_moved_on() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "moved");
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    plant_old_step(&sb, &agent);
    // The agent updated its status since: a new step, no timeout.
    fs::write(
        task.join(".status.json"),
        r#"{"status":"executing","updated_at":"2027-01-01T10:05:00+01:00"}"#,
    )
    .unwrap();
    // Two minutes after that update, on the command's clock (never the wall clock: the date
    // would otherwise be a time bomb, and the suite also runs a year ahead).
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-01-01T09:07:00Z")
        .args(["stall", "check", "--target", &agent, "--state"])
        .arg(sb.path("stall.json"))
        .args(["--apply", "--task", task.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = &json_lines(&output)[0];
    assert_eq!(report["step_elapsed_seconds"], 120, "{report}");
    assert_ne!(report["action"], "continue", "{report}");
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
}

#[test]
fn stall_check_waits_while_hook_stop_failure_records_a_quota_wait() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "quota");
    let project = sb.path("project");
    // The hook's own record: loop init creates .autoctl/, a StopFailure for a rate limit.
    sb.cmd()
        .args(["loop", "init", "--prompt", "go on", "--dir"])
        .arg(&project)
        .assert()
        .code(0);
    let payload = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hook/stop-failure-rate-limit.json"),
    )
    .unwrap()
    .replace("TRANSCRIPT", &sb.path("none.jsonl").display().to_string())
    .replace("PROJECT", &project.display().to_string());
    // "resets 3:45pm (UTC)": recorded and checked within --max-quota-wait (6h) of it.
    const NOW: &str = "2027-01-01T14:00:00Z";
    let mut cmd = sb.std_cmd();
    cmd.env("AUTOCTL_NOW", NOW);
    let output = hook_with(cmd, &project, "stop-failure", &payload);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(project.join(".autoctl/quota-wait.json").is_file());

    // A safe prompt past the threshold, an hour into its step: waiting, nothing typed.
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    plant_old_step(&sb, &agent);
    let args = [
        "--threshold",
        "1",
        "--apply",
        "--task",
        task.to_str().unwrap(),
    ];
    for _ in 0..3 {
        let report = check_at(&sb, &agent, Some(NOW), &args);
        assert_eq!(
            (&report["verdict"], &report["action"]),
            (&"waiting".into(), &"wait".into()),
            "{report}"
        );
        assert!(
            report["reason"]
                .as_str()
                .unwrap()
                .contains("quota-wait record"),
            "{report}"
        );
        assert!(report["quota_wait_since"].is_string());
        // The reset the StopFailure hook recorded (issue 23 item 6: it printed null).
        assert!(
            report["reset_at"]
                .as_str()
                .is_some_and(|at| at.contains("T15:45:00")),
            "{report}"
        );
    }
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
    // A record that cannot be read is a warning, not a wait and not a failure.
    fs::write(project.join(".autoctl/quota-wait.json"), "{").unwrap();
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", NOW)
        .args(["stall", "check", "--target", &agent, "--state"])
        .arg(sb.path("stall.json"))
        .args(["--threshold", "1", "--task", task.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(one_stderr_line(&output).contains("the quota-wait record is ignored"));
    assert_ne!(json_lines(&output)[0]["verdict"], "waiting");
}

/// `run start` for the fake agent's session, with a fake clock.
fn start_run(sb: &Sandbox, task: &Path, at: &str, extra: &[&str]) {
    sb.cmd()
        .env("AUTOCTL_NOW", at)
        .args(["run", "start", "--session", "agent", "--task"])
        .arg(task)
        .args(extra)
        .assert()
        .code(0);
}

fn tick_at(sb: &Sandbox, at: &str) -> Value {
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", at)
        .args(["run", "tick", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let event = json_lines(&output).remove(0);
    let violations = autoctl::schema::violations("tick-event", &event);
    assert!(violations.is_empty(), "{event}: {violations:?}");
    event
}

#[test]
fn run_tick_continues_an_idle_agent_after_the_step_timeout_of_a_fake_clock() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "tick");
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    let at = |minutes: u32| format!("2027-03-01T10:{minutes:02}:00Z");
    start_run(&sb, &task, &at(0), &["--step-timeout", "10m"]);
    let event = tick_at(&sb, &at(1));
    assert_eq!(event["saw"]["status_updated_at"], UPDATED_AT, "{event}");
    assert_eq!(event["run"]["step_elapsed_ms"], 0);
    let event = tick_at(&sb, &at(10));
    assert_eq!(event["decision"], "progress", "{event}");
    assert_eq!(event["run"]["step_elapsed_ms"], 9 * 60_000);
    let event = tick_at(&sb, &at(11));
    // The silent continue is a stall recovery, named as stall check names it.
    assert_eq!(event["decision"], "continue", "{event}");
    assert!(
        event["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().starts_with("continue: ")),
        "{event}"
    );
    assert_eq!(event["did"][0]["effect"], "send");
    assert_eq!(event["did"][0]["outcome"], "done");
    assert_eq!(event["did"][0]["if_unchanged"], UPDATED_AT);
    assert_eq!(event["run"]["recoveries_total"], 1);
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n"
    );
    // A full timeout later, not at the next tick.
    let event = tick_at(&sb, &at(12));
    assert_eq!(event["decision"], "progress", "{event}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n"
    );
}

#[test]
fn run_tick_stops_a_reasoning_loop() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "loop");
    let screen = looping_screen(&sb);
    let (agent, log) = fake_agent(&sb, "agent", screen.to_str().unwrap());
    start_run(&sb, &task, "2027-03-01T10:00:00Z", &[]);
    let event = tick_at(&sb, "2027-03-01T10:01:00Z");
    assert_eq!(event["decision"], "stop", "{event}");
    assert_eq!(event["run"]["stop_reason"], "reasoning_loop");
    assert_eq!(event["run"]["message_repeats"], 3);
    let stop: Value = serde_json::from_slice(&fs::read(task.join(".auto-stop")).unwrap()).unwrap();
    assert_eq!(stop["reason"], "reasoning_loop");
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
}

fn run_continue(sb: &Sandbox, args: &[&str]) -> Output {
    sb.cmd()
        .args(["run", "continue", "--session", "agent"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn run_continue_sends_only_while_updated_at_is_unchanged() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "cas");
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    // No run yet.
    let output = run_continue(&sb, &["--if-unchanged", UPDATED_AT]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        one_stderr_line(&output).contains("no run for session"),
        "{output:?}"
    );
    start_run(&sb, &task, "2027-03-01T10:00:00Z", &[]);
    // Changed since: nothing sent, exit 1 with the reason.
    let output = run_continue(&sb, &["--if-unchanged", "2027-01-01T09:59:59+01:00"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        one_stderr_line(&output).contains("nothing sent"),
        "{output:?}"
    );
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
    // Bad texts are usage errors, and nothing is sent.
    for bad in ["", "  ", "two\nlines", "bell\u{7}"] {
        let output = run_continue(&sb, &["--if-unchanged", UPDATED_AT, "--text", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {output:?}");
        one_stderr_line(&output);
    }
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
    // Unchanged: typed once, then Enter.
    let output = run_continue(&sb, &["--if-unchanged", UPDATED_AT]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n"
    );
    // The status is gone: the continuation can no longer be confirmed.
    fs::remove_file(task.join(".status.json")).unwrap();
    let output = run_continue(&sb, &["--if-unchanged", UPDATED_AT]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n"
    );
    // An ended run has no loop to continue.
    sb.cmd()
        .args(["run", "stop", "--session", "agent"])
        .assert()
        .code(0);
    fs::write(
        task.join(".status.json"),
        format!(r#"{{"updated_at":"{UPDATED_AT}"}}"#),
    )
    .unwrap();
    let output = run_continue(&sb, &["--if-unchanged", UPDATED_AT]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n"
    );
}

/// `run continue` types only into an idle agent: at a permission menu its Enter would approve
/// option 1, so nothing is sent there (exit 1, saying what the pane shows).
#[test]
fn run_continue_never_types_into_a_prompt() {
    let sb = Sandbox::new();
    let task = task_with_status(&sb, "menu");
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    start_run(&sb, &task, "2027-03-01T10:00:00Z", &[]);
    let output = run_continue(&sb, &["--if-unchanged", UPDATED_AT]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let line = one_stderr_line(&output);
    assert!(
        line.contains("nothing sent: the pane shows permission"),
        "{line}"
    );
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
}

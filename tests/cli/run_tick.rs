//! `autoctl run tick|recover` end to end: a real tmux server on the sandbox's private socket,
//! the scripted agent of `examples/fake-agent.sh` in its panes, and the built binary ticking
//! it the way cron would (only faster: every quarter second).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::session;
use crate::tmuxfix::{capture, kill_session, new_session, press, tmux_on};
use crate::util::{Sandbox, json_lines, stdout};

/// How often these tests tick (and the heartbeat they declare).
const TICK: Duration = Duration::from_millis(250);
/// No loop here takes more than a few seconds; this is a hang, not a slow machine.
const DEADLINE: Duration = Duration::from_secs(40);

pub fn fake_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fake-agent.sh")
}

/// A task module in status draft with a real target, as `autoctl next --task` expects.
pub fn task(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.module(&format!("TASK/{name}"));
    fs::write(
        dir.join(".index.md"),
        "---\ntitle: Rate-limit logins\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\nupdated: 2027-01-01T00:00:00Z\n---\n",
    )
    .unwrap();
    fs::write(
        dir.join(".target.md"),
        "# Target\nLimit failed logins to five per minute per account and per IP.\n",
    )
    .unwrap();
    dir
}

/// The fake agent's command line for `--launch` (observe mode).
fn agent_command(options: &str, log: &Path) -> String {
    format!(
        "{} --delay 0.3 {options} --log {} {{task}}",
        fake_agent().display(),
        log.display()
    )
}

/// `run start` of an observe-mode run of the fake agent in session `agent`, with `--launch`
/// and its options, returning the agent's log file.
fn start_observed(sb: &Sandbox, task: &Path, agent_options: &str, run_args: &[&str]) -> PathBuf {
    let log_file = sb.path("agent.log");
    session(sb, "agent");
    sb.cmd()
        .args(["run", "start", "--session", "agent", "--agent", "generic"])
        .args(["--threshold", "2"])
        .args(run_args)
        .arg("--launch")
        .arg(agent_command(agent_options, &log_file))
        .arg("--task")
        .arg(task)
        .assert()
        .code(0);
    log_file
}

/// The fake agent's answers, as its log records them.
fn answers(log_file: &Path) -> Vec<String> {
    log(log_file)
        .lines()
        .filter(|l| l.starts_with("answer"))
        .map(str::to_string)
        .collect()
}

/// `run start` of an observe-mode run with the generic agent, without a launch command.
fn start_generic(sb: &Sandbox, session: &str, dir: &Path) {
    sb.cmd()
        .args([
            "run",
            "start",
            "--session",
            session,
            "--agent",
            "generic",
            "--task",
        ])
        .arg(dir)
        .assert()
        .code(0);
}

/// `run tick ARGS`, asserting exit 0 and that every line matches the tick-event schema.
pub fn tick(sb: &Sandbox, args: &[&str]) -> Vec<Value> {
    tick_at(sb, args, None)
}

/// [`tick`] on the clock `AUTOCTL_NOW` names, when one is given.
fn tick_at(sb: &Sandbox, args: &[&str], now: Option<&str>) -> Vec<Value> {
    let mut cmd = sb.cmd();
    if let Some(now) = now {
        cmd.env("AUTOCTL_NOW", now);
    }
    let output = cmd
        .args(["run", "tick", "--heartbeat", "250ms"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "run tick {args:?}: {}{}",
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

pub fn status(sb: &Sandbox, session: &str) -> Value {
    status_with(sb, session, None)
}

/// [`status`] on the clock `AUTOCTL_NOW` names.
fn status_at(sb: &Sandbox, session: &str, now: &str) -> Value {
    status_with(sb, session, Some(now))
}

fn status_with(sb: &Sandbox, session: &str, now: Option<&str>) -> Value {
    let mut cmd = sb.cmd();
    if let Some(now) = now {
        cmd.env("AUTOCTL_NOW", now);
    }
    let output = cmd
        .args(["run", "status", "--format", "json", "--session", session])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    json_lines(&output).remove(0)
}

fn log(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

/// Tick `--session` every [`TICK`] until `done(status)` holds; returns every event.
pub fn tick_until(sb: &Sandbox, name: &str, mut done: impl FnMut(&Value) -> bool) -> Vec<Value> {
    let started = Instant::now();
    let mut events = Vec::new();
    loop {
        events.extend(tick(sb, &["--session", name]));
        let now = status(sb, name);
        if done(&now) {
            return events;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no progress after {DEADLINE:?}: {now}\nlast events: {:#?}\npane:\n{}",
            &events[events.len().saturating_sub(4)..],
            capture(sb, &format!("={name}:"))
        );
        std::thread::sleep(TICK);
    }
}

fn decisions(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["decision"].as_str().unwrap().to_string())
        .collect()
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_observed_loop_runs_to_report_with_a_safe_prompt_answered_and_cleans_up() {
    let sb = Sandbox::new();
    let task = task(&sb, "observe");
    let log_file = start_observed(&sb, &task, "--ask-at 2", &[]);
    let events = tick_until(&sb, "agent", |s| s["status"] != "running");
    let last = status(&sb, "agent");
    assert_eq!(last["status"], "finished", "{last}");
    assert_eq!(last["stop_reason"], "complete");
    // plan, check, exec, check (NEEDS_FIX), exec, check (ACCEPT), merge, report.
    assert!(
        log(&log_file).contains("signal iteration=8 step=report result=(done) next=(stop)"),
        "{}",
        log(&log_file)
    );
    let answers = answers(&log_file);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert!(
        answers[0].ends_with("question=install answer=y"),
        "{answers:?}"
    );
    assert_eq!(
        decisions(&events).iter().filter(|d| *d == "answer").count(),
        1,
        "{:?}",
        decisions(&events)
    );
    // A harmless prompt's answer spends the answer budget, not a stall recovery.
    assert_eq!(
        (&last["answers_total"], &last["recoveries_total"]),
        (&1.into(), &0.into())
    );
    // The agent's half of the cleanup (seed 000): it removes its own files at loop exit.
    wait_for("the agent to clean up", || {
        !task.join(".auto-signal").exists() && !task.join(".fake-agent").exists()
    });
    assert!(!task.join(".auto-stop").exists());
    // Nothing is ticked once the run has ended.
    assert!(tick(&sb, &["--all"]).is_empty());
}

/// Issue 12: an agent in manual permission mode asks before every tool call. Six harmless
/// prompts in one step (twice the 3 stall recoveries of an iteration) are all answered, and
/// the loop runs to its end: answers are not stall recoveries.
#[test]
fn many_harmless_prompts_in_one_step_never_stop_the_loop() {
    let sb = Sandbox::new();
    let task = task(&sb, "asks");
    let log_file = start_observed(&sb, &task, "--ask-at 2 --asks 6", &[]);
    let events = tick_until(&sb, "agent", |s| s["status"] != "running");
    let last = status(&sb, "agent");
    assert_eq!(
        (&last["status"], &last["stop_reason"]),
        (&"finished".into(), &"complete".into()),
        "{last}"
    );
    let agent_log = log(&log_file);
    let answers = answers(&log_file);
    assert_eq!(answers.len(), 6, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|a| a.ends_with("question=install answer=y"))
    );
    assert_eq!(
        decisions(&events).iter().filter(|d| *d == "answer").count(),
        6
    );
    assert_eq!(
        (&last["answers_total"], &last["recoveries_total"]),
        (&6.into(), &0.into()),
        "{last}"
    );
    assert!(!agent_log.contains("stopped reason"), "{agent_log}");
}

/// Past `--max-answers` in one step a person decides the next prompt: the run waits in
/// needs-person (never a stall_limit stop), and goes on once the person has answered.
#[test]
fn past_max_answers_a_person_decides_and_the_loop_goes_on() {
    let sb = Sandbox::new();
    let task = task(&sb, "asks");
    let log_file = start_observed(&sb, &task, "--ask-at 2 --asks 3", &["--max-answers", "2"]);
    let events = tick_until(&sb, "agent", |s| !s["needs_person"].is_null());
    let now = status(&sb, "agent");
    assert_eq!(now["status"], "running", "{now}");
    assert_eq!(now["needs_person"]["kind"], "answer-limit", "{now}");
    assert!(
        now["needs_person"]["why"]
            .as_str()
            .unwrap()
            .contains("answer limit reached (2 of 2 this step)"),
        "{now}"
    );
    assert_eq!(
        (&now["answers_step"], &now["max_answers"]),
        (&2.into(), &2.into())
    );
    assert_eq!(decisions(&events).last().unwrap(), "escalate");
    assert!(!task.join(".auto-stop").exists(), "no stop was requested");
    // Ticks go on without typing into the escalated prompt.
    for _ in 0..4 {
        tick(&sb, &["--session", "agent"]);
        std::thread::sleep(TICK);
    }
    assert_eq!(answers(&log_file).len(), 2, "{}", log(&log_file));
    // The person answers; the loop runs to its end.
    press(&sb, "=agent:", &["y", "Enter"]);
    tick_until(&sb, "agent", |s| s["status"] != "running");
    let last = status(&sb, "agent");
    assert_eq!(
        (&last["status"], &last["stop_reason"]),
        (&"finished".into(), &"complete".into()),
        "{last}"
    );
    assert_eq!(answers(&log_file).len(), 3);
    assert_eq!(last["recoveries_total"], 0, "{last}");
}

/// The keys an event's tick typed (its `send` effect; a dispatch consumes its signal first).
fn sent(event: &Value) -> &Value {
    event["did"]
        .as_array()
        .unwrap()
        .iter()
        .find(|did| did["effect"] == "send")
        .unwrap_or_else(|| panic!("nothing typed: {event}"))
}

#[test]
fn a_dispatched_loop_types_each_step_until_report_and_cleans_up() {
    let sb = Sandbox::new();
    let task = task(&sb, "dispatch");
    let log_file = sb.path("agent.log");
    session(&sb, "steps");
    let template = format!(
        "{} --delay 0.1 --log {} --step {{next}} --checkpoint={{checkpoint}} {{task}}",
        fake_agent().display(),
        log_file.display()
    );
    sb.cmd()
        .args(["run", "start", "--session", "steps", "--mode", "dispatch"])
        .args(["--agent", "generic", "--command", &template, "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let events = tick_until(&sb, "steps", |s| s["status"] != "running");
    let last = status(&sb, "steps");
    assert_eq!(last["status"], "finished", "{last}");
    let typed: Vec<String> = events
        .iter()
        .filter(|e| e["decision"] == "dispatch")
        .map(|e| sent(e)["keys"][0]["text"].as_str().unwrap().to_string())
        .collect();
    let steps: Vec<&str> = typed
        .iter()
        .map(|t| {
            t.split("--step ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        steps,
        [
            "plan", "check", "exec", "check", "exec", "check", "merge", "report"
        ]
    );
    assert!(typed[3].contains("--checkpoint=post-exec"), "{typed:?}");
    // Each signal counted once (v1 signals: the supervisor counts them).
    assert_eq!(last["iteration"], 8);
    // Seed 001's cleanup: the daemon removed the last signal; the agent its state.
    assert!(!task.join(".auto-signal").exists());
    assert!(!task.join(".auto-stop").exists());
    assert_eq!(
        log(&log_file).matches("start mode=dispatch").count(),
        8,
        "{}",
        log(&log_file)
    );
}

/// A step that fails in the pane without writing a signal ends the run with the cause a
/// person would otherwise find only by attaching: the pane's last non-blank lines.
#[test]
fn a_step_that_dies_without_a_signal_ends_the_run_with_the_panes_last_lines() {
    let sb = Sandbox::new();
    let task = task(&sb, "failing");
    let step = sb.write(
        "failing-step.sh",
        "#!/bin/sh\necho \"bash: line 1: autoctl: command not found\"\nexit 127\n",
    );
    fs::set_permissions(&step, fs::Permissions::from_mode(0o755)).unwrap();
    session(&sb, "steps");
    sb.cmd()
        .args(["run", "start", "--session", "steps", "--mode", "dispatch"])
        .args(["--agent", "generic", "--command"])
        .arg(format!("{} {{next}}", step.display()))
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    let events = tick_until(&sb, "steps", |s| s["status"] != "running");
    let last = status(&sb, "steps");
    assert_eq!(last["status"], "exited", "{last}");
    let exit = events.iter().find(|e| e["decision"] == "exit").unwrap();
    let why = exit["reasons"].to_string();
    assert!(why.contains("ended without writing a signal"), "{why}");
    assert!(
        why.contains("the pane's last lines:") && why.contains("autoctl: command not found"),
        "{why}"
    );
}

#[test]
fn max_iterations_stops_the_loop_and_the_agent_honours_it() {
    let sb = Sandbox::new();
    let task = task(&sb, "max");
    let log_file = sb.path("agent.log");
    session(&sb, "max");
    sb.cmd()
        .args(["run", "start", "--session", "max", "--agent", "generic"])
        .args(["--max-iterations", "3", "--launch"])
        .arg(agent_command("", &log_file))
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    let events = tick_until(&sb, "max", |s| s["status"] != "running");
    let last = status(&sb, "max");
    assert_eq!(last["status"], "stopped", "{last}");
    assert_eq!(last["stop_reason"], "max_iterations");
    // A tick sees the count when it looks: at or past the limit, never before it.
    assert!(last["iteration"].as_u64().unwrap() >= 3, "{last}");
    let stop = events.iter().find(|e| e["decision"] == "stop").unwrap();
    assert_eq!(stop["did"][0]["effect"], "write_stop");
    assert_eq!(stop["did"][0]["reason"], "max_iterations");
    wait_for("the agent to stop", || {
        log(&log_file).contains("stopped reason=max_iterations")
    });
    wait_for("the agent to clean up", || {
        !task.join(".auto-stop").exists()
    });
}

#[test]
fn the_timeout_stops_the_loop() {
    let sb = Sandbox::new();
    let task = task(&sb, "slow");
    let log_file = sb.path("agent.log");
    session(&sb, "slow");
    sb.cmd()
        .args(["run", "start", "--session", "slow", "--agent", "generic"])
        .args(["--timeout", "1500ms", "--launch"])
        .arg(agent_command("", &log_file))
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    tick_until(&sb, "slow", |s| s["status"] != "running");
    let last = status(&sb, "slow");
    assert_eq!(last["stop_reason"], "timeout", "{last}");
    assert!(last["elapsed_ms"].as_u64().unwrap() >= 1500);
    wait_for("the agent to stop", || {
        log(&log_file).contains("stopped reason=timeout")
    });
}

/// A usage limit pauses the timeout clock: an hour at the limit is not supervised time, and
/// the clock runs again once the screen moves on. The ticks run on a fixed clock
/// (`AUTOCTL_NOW`), so no tick races the agent's real time; the limit lasts until the test
/// ends it.
#[test]
fn a_quota_wait_pauses_the_timeout() {
    let sb = Sandbox::new();
    let task = task(&sb, "quota");
    let log_file = sb.path("agent.log");
    let over = sb.path("quota-over");
    session(&sb, "quota");
    let t0 = chrono::DateTime::parse_from_rfc3339("2027-03-01T10:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let at = |seconds: i64| {
        (t0 + chrono::Duration::seconds(seconds))
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    // Steps of 5 s: the loop cannot finish between the ticks below however slow the machine.
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args(["run", "start", "--session", "quota", "--agent", "generic"])
        .args(["--timeout", "2m", "--launch"])
        .arg(agent_command(
            &format!("--quota-at 1 --quota-until {} --delay 5", over.display()),
            &log_file,
        ))
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    wait_for("the usage limit on screen", || {
        capture(&sb, "=quota:").contains("usage limit reached")
    });
    let mut events = tick_at(&sb, &["--session", "quota"], Some(&at(10)));
    let now = status_at(&sb, "quota", &at(10));
    assert_eq!(now["quota_waiting"], true, "{now}");
    // An hour later, far past the 2 m timeout, the run still waits: the clock is paused.
    events.extend(tick_at(&sb, &["--session", "quota"], Some(&at(3600))));
    let now = status_at(&sb, "quota", &at(3600));
    assert_eq!(
        (&now["status"], &now["quota_waiting"]),
        (&"running".into(), &true.into()),
        "{now}"
    );
    // The limit lifts; the first tick to see the screen move on closes the pause.
    fs::write(&over, "").unwrap();
    wait_for("the agent to resume", || {
        capture(&sb, "=quota:").contains("Usage limit reset; resuming.")
    });
    events.extend(tick_at(&sb, &["--session", "quota"], Some(&at(3610))));
    let now = status_at(&sb, "quota", &at(3610));
    assert_eq!(
        (&now["status"], &now["quota_waiting"]),
        (&"running".into(), &false.into()),
        "{now}"
    );
    // The clock runs again: 10 min later the supervised time is past the timeout.
    events.extend(tick_at(&sb, &["--session", "quota"], Some(&at(4210))));
    let last = status_at(&sb, "quota", &at(4210));
    assert_eq!(last["stop_reason"], "timeout", "{last}");
    assert_eq!(last["quota_wait_ms"], 3_600_000, "{last}");
    assert!(
        events
            .iter()
            .any(|e| e["decision"] == "wait" && e["saw"]["pane"]["class"] == "quota"),
        "{:?}",
        decisions(&events)
    );
    // Quota waits are not stalls: no recovery was spent.
    assert_eq!(last["recoveries_total"], 0);
}

#[test]
fn run_stop_mid_loop_stops_it_gracefully() {
    let sb = Sandbox::new();
    let task = task(&sb, "stop");
    let log_file = sb.path("agent.log");
    session(&sb, "stopme");
    sb.cmd()
        .args([
            "run",
            "start",
            "--session",
            "stopme",
            "--agent",
            "generic",
            "--launch",
        ])
        .arg(agent_command("", &log_file))
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    tick_until(&sb, "stopme", |s| s["iteration"].as_u64().unwrap() >= 2);
    sb.cmd()
        .args(["run", "stop", "--session", "stopme", "--message", "enough"])
        .assert()
        .code(0);
    let last = status(&sb, "stopme");
    assert_eq!(
        (last["status"].as_str(), last["stop_reason"].as_str()),
        (Some("stopped"), Some("user_stop"))
    );
    // The agent stops at its next iteration boundary and cleans up after itself.
    wait_for("the agent to stop", || {
        log(&log_file).contains("stopped reason=user_stop")
    });
    wait_for("the agent to clean up", || {
        !task.join(".auto-stop").exists() && !task.join(".auto-signal").exists()
    });
    wait_for("the shell to come back", || {
        capture(&sb, "=stopme:").trim_end().ends_with('$')
    });
    let iterations = log(&log_file).matches("signal iteration=").count();
    assert!((2..8).contains(&iterations), "{}", log(&log_file));
}

#[test]
fn run_recover_relaunches_a_killed_agent_and_the_loop_completes() {
    let sb = Sandbox::new();
    let task = task(&sb, "recover");
    let log_file = sb.path("agent.log");
    session(&sb, "phoenix");
    sb.cmd()
        .args([
            "run",
            "start",
            "--session",
            "phoenix",
            "--agent",
            "generic",
            "--launch",
        ])
        .arg(agent_command("", &log_file))
        .arg("--task")
        .arg(&task)
        .assert()
        .code(0);
    tick_until(&sb, "phoenix", |s| s["iteration"].as_u64().unwrap() >= 2);
    // The host "restarts": the agent dies, a stale stop file is left behind.
    press(&sb, "=phoenix:", &["C-c"]);
    wait_for("the agent to die", || {
        capture(&sb, "=phoenix:").trim_end().ends_with('$')
    });
    fs::write(
        task.join(".auto-stop"),
        r#"{"reason":"timeout","timestamp":"2027-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let output = sb.cmd().args(["run", "recover"]).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = json_lines(&output);
    assert_eq!(events.len(), 1);
    assert!(autoctl::schema::violations("tick-event", &events[0]).is_empty());
    assert_eq!(events[0]["decision"], "relaunch", "{}", events[0]);
    assert!(
        !task.join(".auto-stop").exists(),
        "the stale stop file is gone"
    );
    wait_for("the second start", || {
        log(&log_file).matches("start mode=observe").count() == 2
    });
    // The relaunched agent resumes from its signal and the loop completes.
    tick_until(&sb, "phoenix", |s| s["status"] != "running");
    assert_eq!(status(&sb, "phoenix")["status"], "finished");
    assert!(log(&log_file).contains("step=report"), "{}", log(&log_file));
}

#[test]
fn a_killed_pane_loses_the_run_and_a_deleted_task_dir_too() {
    let sb = Sandbox::new();
    let gone_pane = task(&sb, "pane");
    let gone_dir = task(&sb, "dir");
    session(&sb, "p1");
    session(&sb, "p2");
    for (name, dir) in [("p1", &gone_pane), ("p2", &gone_dir)] {
        start_generic(&sb, name, dir);
    }
    kill_session(&sb, "p1");
    fs::remove_dir_all(&gone_dir).unwrap();
    let events = tick(&sb, &["--all"]);
    assert_eq!(decisions(&events), ["lost", "lost"]);
    assert_eq!(status(&sb, "p1")["stop_reason"], "pane_gone");
    assert_eq!(status(&sb, "p2")["stop_reason"], "task_dir_gone");
    assert!(
        !gone_dir.exists(),
        "nothing is recreated in a deleted task dir"
    );
}

/// `run tick --session X` reads a gone pane as `--all` does: the run ends as lost (exit 0,
/// one line), it is not an error retried forever.
#[test]
fn a_killed_session_ticked_by_name_is_lost() {
    let sb = Sandbox::new();
    let dir = task(&sb, "named");
    session(&sb, "keep");
    session(&sb, "n1");
    start_generic(&sb, "n1", &dir);
    kill_session(&sb, "n1");
    let events = tick(&sb, &["--session", "n1"]);
    assert_eq!(decisions(&events), ["lost"], "{events:?}");
    assert_eq!(events[0]["saw"]["pane"]["state"], "gone", "{}", events[0]);
    assert_eq!(status(&sb, "n1")["status"], "lost");
    assert_eq!(status(&sb, "n1")["stop_reason"], "pane_gone");
    // The run has ended: a second tick finds nothing to decide and fails nothing.
    let again = sb
        .cmd()
        .args(["run", "tick", "--session", "n1"])
        .output()
        .unwrap();
    assert_ne!(again.status.code(), Some(2), "{again:?}");
}

/// `run recover` after a restart, on the two other outcomes than a relaunch: a pane that is
/// gone loses its run (and its stale stop file), an agent still running is left alone with
/// its stall baseline reset.
#[test]
fn run_recover_loses_a_gone_pane_and_leaves_a_live_agent_alone() {
    let sb = Sandbox::new();
    let gone = task(&sb, "gone");
    let alive = task(&sb, "alive");
    session(&sb, "r1");
    session(&sb, "r2");
    for (name, dir) in [("r1", &gone), ("r2", &alive)] {
        start_generic(&sb, name, dir);
    }
    // r2's "agent": a program in front of the shell.
    press(&sb, "=r2:", &["sleep 30", "Enter"]);
    wait_for("sleep to run", || capture(&sb, "=r2:").contains("sleep 30"));
    // A baseline from before the restart, which recovery must forget.
    tick(&sb, &["--session", "r2"]);
    kill_session(&sb, "r1");
    for dir in [&gone, &alive] {
        fs::write(
            dir.join(".auto-stop"),
            r#"{"reason":"timeout","timestamp":"2027-01-01T00:00:00Z"}"#,
        )
        .unwrap();
    }
    let output = sb.cmd().args(["run", "recover"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = json_lines(&output);
    let by_session = |name: &str| {
        events
            .iter()
            .find(|e| e["session"] == name)
            .unwrap_or_else(|| panic!("no event for {name}: {events:?}"))
            .clone()
    };
    assert_eq!(by_session("r1")["decision"], "lost", "{events:?}");
    assert_eq!(status(&sb, "r1")["stop_reason"], "pane_gone");
    assert_eq!(by_session("r2")["decision"], "progress", "{events:?}");
    assert_eq!(status(&sb, "r2")["status"], "running");
    assert_eq!(status(&sb, "r2")["stall_count"], 0);
    for dir in [&gone, &alive] {
        assert!(!dir.join(".auto-stop").exists(), "{}", dir.display());
    }
    // Nothing was typed into the live agent's pane.
    assert!(
        !capture(&sb, "=r2:").contains("agent"),
        "{}",
        capture(&sb, "=r2:")
    );
}

#[test]
fn a_dry_run_changes_nothing() {
    let sb = Sandbox::new();
    let task = task(&sb, "dry");
    session(&sb, "dry");
    sb.cmd()
        .args([
            "run",
            "start",
            "--session",
            "dry",
            "--max-iterations",
            "1",
            "--task",
        ])
        .arg(&task)
        .assert()
        .code(0);
    fs::write(
        task.join(".auto-signal"),
        r#"{"step":"plan","result":"(generated)","next":"check","iteration":1,"timestamp":"2027-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let before = status(&sb, "dry");
    let events = tick(&sb, &["--all", "--dry-run"]);
    assert_eq!(events[0]["decision"], "stop");
    assert_eq!(events[0]["dry_run"], true);
    assert_eq!(events[0]["did"][0]["outcome"], "planned");
    assert!(!task.join(".auto-stop").exists());
    let without_clock = |mut s: Value| {
        s["elapsed_ms"] = Value::Null;
        s
    };
    assert_eq!(without_clock(status(&sb, "dry")), without_clock(before));
}

#[test]
fn eight_concurrent_ticks_on_ten_runs_lose_no_update_and_answer_each_prompt_once() {
    let sb = Sandbox::new();
    let runs = 10;
    let mut logs = Vec::new();
    for i in 0..runs {
        let name = format!("r{i}");
        let dir = task(&sb, &name);
        let log_file = sb.path(&format!("agent-{i}.log"));
        session(&sb, &name);
        sb.cmd()
            .args(["run", "start", "--session", &name, "--agent", "generic"])
            .args(["--threshold", "1", "--launch"])
            .arg(agent_command("--ask-at 1 --delay 0", &log_file))
            .arg("--task")
            .arg(&dir)
            .assert()
            .code(0);
        logs.push(log_file);
    }
    // Every agent waits at its yes/no question.
    for i in 0..runs {
        wait_for("the question", || {
            capture(&sb, &format!("=r{i}:")).contains("[y/N]")
        });
    }
    // One tick records the screens; the next heartbeat finds them unchanged and answers.
    tick(&sb, &["--all"]);
    std::thread::sleep(TICK);
    let before: Vec<Value> = (0..runs).map(|i| status(&sb, &format!("r{i}"))).collect();
    let children: Vec<_> = (0..8)
        .map(|_| {
            sb.std_cmd()
                .args(["run", "tick", "--all", "--heartbeat", "1ms"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let mut decided = vec![0u64; runs];
    let mut answers = vec![0u64; runs];
    let mut skipped = 0;
    for output in &outputs {
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        for event in json_lines(output) {
            let i: usize = event["session"].as_str().unwrap()[1..].parse().unwrap();
            match event["decision"].as_str().unwrap() {
                "skip" => skipped += 1,
                "answer" => {
                    decided[i] += 1;
                    answers[i] += 1;
                }
                _ => decided[i] += 1,
            }
        }
    }
    assert!(
        skipped > 0,
        "the ticks never overlapped, so this proved nothing"
    );
    for i in 0..runs {
        let after = status(&sb, &format!("r{i}"));
        // Every decision was saved: the tick counter moved once per deciding tick.
        let ticks = after["ticks"].as_u64().unwrap() - before[i]["ticks"].as_u64().unwrap();
        assert_eq!(ticks, decided[i], "run r{i}: {after}");
        assert!(decided[i] >= 1, "run r{i} was never ticked");
        assert_eq!(answers[i], 1, "run r{i}: answered {} times", answers[i]);
    }
    // And the agents saw exactly one answer each.
    for (i, log_file) in logs.iter().enumerate() {
        wait_for("the answer to arrive", || log(log_file).contains("answer "));
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            log(log_file).matches("answer ").count(),
            1,
            "agent {i}: {}",
            log(log_file)
        );
    }
}

#[test]
fn the_demo_tells_the_whole_story_and_cleans_up() {
    let sb = Sandbox::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo.sh");
    let run = StdCommand::new(&demo)
        .env("AUTOCTL", crate::util::bin())
        .env("NO_COLOR", "1")
        .env("TMPDIR", sb.root())
        .output()
        .unwrap();
    let text = stdout(&run);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for beat in [
        "answered a safe prompt",
        "usage limit",
        "escalated",
        "human (this demo)",
        "finish",
        "done in",
    ] {
        assert!(text.contains(beat), "{beat:?} missing from:\n{text}");
    }
    // It prints the commands it runs, as typed.
    assert!(
        text.contains("$ autoctl run start --session agent --task $DEMO/TASK/login-rate-limit"),
        "{text}"
    );
    assert!(text.contains("$ tmux send-keys -t agent -l n"), "{text}");
    // Its tmux server (socket in its own TMUX_TMPDIR) and its temporary directory are gone.
    let tmpdir = text
        .split("TMUX_TMPDIR=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap();
    assert!(tmpdir.starts_with(sb.root().to_str().unwrap()), "{tmpdir}");
    let alive = tmux_on(Path::new(tmpdir), "default", &["list-sessions"]);
    assert!(
        !alive.status.success(),
        "the demo left its tmux server running"
    );
    assert!(!Path::new(tmpdir).exists(), "the demo left {tmpdir}");
    let leftovers: Vec<_> = fs::read_dir(sb.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with("autoctl-demo"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Issue 15 item 3: stalls count elapsed time, not ticks. Ticked every 30 s of a fake clock
/// with the default 60 s heartbeat, an unchanged safe prompt is answered after 3 × 60 s
/// (the seed's three heartbeats), not at the third tick (90 s).
#[test]
fn ticks_every_30s_answer_a_stalled_prompt_after_three_minutes_not_90s() {
    let sb = Sandbox::new();
    let dir = task(&sb, "spaced");
    let log_file = sb.path("agent-spaced.log");
    session(&sb, "spaced");
    let at = |seconds: u32| format!("2027-03-01T10:{:02}:{:02}Z", seconds / 60, seconds % 60);
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args(["run", "start", "--session", "spaced", "--agent", "generic"])
        .arg("--launch")
        .arg(agent_command("--ask-at 1 --delay 0", &log_file))
        .arg("--task")
        .arg(&dir)
        .assert()
        .code(0);
    wait_for("the question", || {
        capture(&sb, "=spaced:").contains("[y/N]")
    });
    let mut answered_at = None;
    for seconds in (0..=240).step_by(30) {
        let output = sb
            .cmd()
            .env("AUTOCTL_NOW", at(seconds))
            .args(["run", "tick", "--session", "spaced"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let event = json_lines(&output).remove(0);
        assert_eq!(
            event["heartbeat"], true,
            "every 30 s tick is a heartbeat: {event}"
        );
        if event["decision"] == "answer" {
            answered_at = Some(seconds);
            break;
        }
        assert_eq!(event["decision"], "progress", "{event}");
    }
    assert_eq!(answered_at, Some(180));
}

/// Issue 14: unknown never means waiting forever. A python REPL left in front of the agent
/// (class unknown, never typed into) is escalated once after --unknown-after (3 minutes of a
/// fake clock), through needs-person and --notify, with its last lines in the JSON line.
#[test]
fn a_repl_left_in_the_pane_is_escalated_once_after_unknown_after() {
    let sb = Sandbox::new();
    let dir = task(&sb, "repl");
    session(&sb, "repl");
    press(&sb, "=repl:", &["python3 -q", "Enter"]);
    wait_for("the REPL", || {
        capture(&sb, "=repl:").trim_end().ends_with(">>>")
    });
    let at = |minutes: u32| format!("2027-03-01T10:{minutes:02}:00Z");
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args(["run", "start", "--session", "repl", "--task"])
        .arg(&dir)
        .assert()
        .code(0);
    let told = sb.path("told.jsonl");
    let notify = format!(
        r#"printf '%s ' "$AUTOCTL_EVENT" >> {0}; cat >> {0}; echo >> {0}"#,
        told.display()
    );
    let tick_at = |minutes: u32| {
        tick_at(
            &sb,
            &["--session", "repl", "--notify", &notify],
            Some(&at(minutes)),
        )
        .remove(0)
    };
    for minutes in [0, 1, 2] {
        let event = tick_at(minutes);
        assert_ne!(event["decision"], "escalate", "{event}");
        assert_eq!(event["saw"]["pane"]["class"], "unknown", "{event}");
        assert_eq!(event["run"]["wait"]["kind"], "unknown-screen", "{event}");
    }
    let event = tick_at(3);
    assert_eq!(event["decision"], "escalate", "{event}");
    let needs = &event["run"]["needs_person"];
    assert_eq!(needs["kind"], "unknown-screen", "{event}");
    assert!(
        needs["why"].as_str().unwrap().contains(r#"">>>""#),
        "{event}"
    );
    for minutes in [4, 20] {
        let event = tick_at(minutes);
        assert_ne!(event["decision"], "escalate", "escalated once: {event}");
        assert_eq!(
            event["run"]["needs_person"]["kind"], "unknown-screen",
            "{event}"
        );
    }
    let told = fs::read_to_string(&told).unwrap();
    assert_eq!(told.matches("escalate ").count(), 1, "{told}");
    // Nothing was typed into the interpreter.
    let screen = capture(&sb, "=repl:");
    assert_eq!(screen.matches(">>>").count(), 1, "{screen}");
    assert_eq!(status(&sb, "repl")["status"], "running");
}

/// A session whose foreground program is not a shell (an agent busy with something).
fn busy_session(sb: &Sandbox, name: &str) {
    let command = "echo '● exec: working on the migration'; exec sleep 600";
    new_session(sb, name, (120, 30), &["bash", "-c", command]);
}

#[test]
fn the_seed_default_timeout_fires_at_thirty_minutes_of_a_fake_clock() {
    // AUTOCTL_NOW is the documented test hook: it replays half an hour in a second.
    let sb = Sandbox::new();
    let task = task(&sb, "clock");
    busy_session(&sb, "clock");
    let at = |minutes: u32| format!("2027-03-01T10:{minutes:02}:00Z");
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args([
            "run",
            "start",
            "--session",
            "clock",
            "--agent",
            "generic",
            "--task",
        ])
        .arg(&task)
        .assert()
        .code(0);
    let tick_at = |minutes: u32| {
        let output = sb
            .cmd()
            .env("AUTOCTL_NOW", at(minutes))
            .args(["run", "tick", "--all"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        json_lines(&output).remove(0)
    };
    for minutes in [1, 10, 29] {
        let event = tick_at(minutes);
        assert_eq!(event["run"]["status"], "running", "{event}");
        assert_eq!(event["run"]["elapsed_ms"], u64::from(minutes) * 60_000);
    }
    let event = tick_at(30);
    assert_eq!(event["decision"], "stop", "{event}");
    assert_eq!(event["did"][0]["reason"], "timeout");
    let stop: Value = serde_json::from_slice(&fs::read(task.join(".auto-stop")).unwrap()).unwrap();
    assert_eq!(stop["reason"], "timeout");
    assert_eq!(stop["timestamp"], "2027-03-01T10:30:00Z");
    // An invalid hook value is an error, not a silent real clock.
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "half past ten")
        .args(["run", "status"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(crate::util::one_stderr_line(&output).contains("AUTOCTL_NOW"));
}

#[test]
fn a_tick_on_a_fresh_machine_does_nothing_and_creates_nothing() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["run", "tick", "--all"])
        .assert()
        .code(0)
        .stdout("");
    let output = sb
        .cmd()
        .args(["run", "tick", "--session", "nobody"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(crate::util::one_stderr_line(&output).contains("no run for session"));
    sb.cmd()
        .args(["run", "recover"])
        .assert()
        .code(0)
        .stdout("");
    assert_eq!(fs::read_dir(sb.path("state")).unwrap().count(), 0);
}

#[test]
fn start_needs_a_pane_that_exists() {
    let sb = Sandbox::new();
    let task = task(&sb, "nopane");
    // No tmux server at all on the sandbox socket.
    let output = sb
        .cmd()
        .args(["run", "start", "--session", "ghost", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(crate::util::one_stderr_line(&output).contains("no tmux server running"));
    // A server, but not that pane.
    busy_session(&sb, "other");
    for target in [None, Some("%99"), Some("other:7.3")] {
        let mut cmd = sb.cmd();
        cmd.args(["run", "start", "--session", "ghost", "--task"])
            .arg(&task);
        if let Some(target) = target {
            cmd.args(["--target", target]);
        }
        let output = cmd.output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{target:?}");
        let line = crate::util::one_stderr_line(&output);
        assert!(line.contains("can't find"), "{target:?}: {line}");
    }
    // Nothing was registered.
    sb.cmd()
        .args(["run", "lookup", "--task"])
        .arg(&task)
        .assert()
        .code(1);
}

/// Claude Code's usage-limit menu ("Stop and wait for limit to reset" / "Upgrade your plan") on
/// a live pane: `run tick` records a quota wait (the timeout clock pauses), never counts it
/// toward a stall and never types into the menu.
#[test]
fn the_usage_limit_menu_is_a_quota_wait_for_run_tick() {
    let sb = Sandbox::new();
    let task = task(&sb, "menu");
    let (target, keys) = crate::tmuxfix::fake_agent(
        &sb,
        "menu",
        "tests/fixtures/panes/claude-code/quota-session-limit-menu.txt",
    );
    sb.cmd()
        .args(["run", "start", "--session", "menu", "--target", &target])
        .args(["--threshold", "1", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    // The banner says "resets 5:43am (UTC)": an hour and a half before it, a minute a tick.
    let mut events = Vec::new();
    for minute in 0..4 {
        let now = format!("2026-11-26T04:1{minute}:00Z");
        events.extend(tick_at(&sb, &["--session", "menu"], Some(&now)));
    }
    let now = status(&sb, "menu");
    assert_eq!(now["status"], "running", "{now}");
    assert_eq!(now["quota_waiting"], true, "{now}");
    assert_eq!(now["stall_count"], 0, "{now}");
    assert_eq!(now["recoveries_total"], 0, "{now}");
    let waits: Vec<&Value> = events
        .iter()
        .filter(|e| e["decision"] == "wait" && e["saw"]["pane"]["class"] == "quota")
        .collect();
    assert!(waits.len() >= 3, "{:?}", decisions(&events));
    assert!(
        waits
            .iter()
            .all(|e| e["saw"]["pane"]["reset_at"].is_string()),
        "{waits:?}"
    );
    assert!(
        !decisions(&events)
            .iter()
            .any(|d| d == "escalate" || d == "answer")
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &target, &keys),
        "",
        "nothing typed into the limit menu"
    );
}

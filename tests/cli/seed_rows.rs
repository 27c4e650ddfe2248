//! The seed rows of issue 23: each behaviour a source system's document asks for, driven
//! through the built binary (real tmux on the sandbox's private socket where a pane is
//! involved, `AUTOCTL_NOW` for time), so a regression shows as the seed's words failing.

use std::fs;

use serde_json::Value;

use crate::run::session;
use crate::run_tick::task;
use crate::typed_tick::{hook_event, in_pane, recorded, run_status, start_run_with, tick_at};
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
        assert_eq!(event["decision"], "continue", "{event}");
        answered(&before, sent + 1);
    }
    // The agent moved on: a new step.
    write_status("2027-03-01T10:32:00Z");
    let event = tick(32);
    assert_eq!(event["run"]["recoveries_iteration"], 0, "{event}");
    // Its step timeout gets a continuation, not a stall_limit stop.
    let before = crate::tmuxfix::capture(&sb, "=agent:");
    let event = tick(42);
    assert_eq!(event["decision"], "continue", "{event}");
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

const IDLE: &str = "tests/fixtures/panes/claude-code/idle-after-reply.txt";
const IDLE_AGAIN: &str = "tests/fixtures/panes/claude-code/idle-after-auto-approved-ls.txt";

/// Issue 23 item 6: compactions are counted from the hook records — each PreCompact, or the
/// SessionStart (`compact`) of a compaction no PreCompact announced — once each, including
/// those recorded before a tick first looked, and none from before the run.
#[test]
fn every_compaction_the_hooks_record_counts_once_whatever_the_ticks_timing() {
    let sb = Sandbox::new();
    let (agent, _log) = crate::tmuxfix::fake_agent(&sb, "agent", IDLE);
    let hook = |payload: &str, at: &str| hook_event(&sb, &agent, payload, at);
    let compaction = |at: u32| {
        hook(
            "session/14-PreCompact-manual.json",
            &format!("2027-03-01T10:{at:02}:10Z"),
        );
        hook(
            "session/18-PostCompact-manual.json",
            &format!("2027-03-01T10:{at:02}:11Z"),
        );
        hook(
            "session/17-SessionStart-compact.json",
            &format!("2027-03-01T10:{at:02}:12Z"),
        );
    };
    hook(
        "session/02-SessionStart-startup.json",
        "2027-03-01T09:58:00Z",
    );
    // Before the run: not its.
    hook("session/14-PreCompact-manual.json", "2027-03-01T09:59:10Z");
    hook(
        "session/17-SessionStart-compact.json",
        "2027-03-01T09:59:11Z",
    );
    start_run_with(&sb, "2027-03-01T10:00:00Z", &["--max-compactions", "0"]);
    // Two compactions before any tick looks.
    compaction(1);
    compaction(2);
    let event = tick_at(&sb, "2027-03-01T10:03:00Z", &[]);
    assert_eq!(event["run"]["compactions"], 2, "{event}");
    // Two more between two ticks, one a tick sees.
    compaction(4);
    let event = tick_at(&sb, "2027-03-01T10:04:30Z", &[]);
    assert_eq!(event["run"]["compactions"], 3, "{event}");
    compaction(5);
    // A compaction whose hooks sent no PreCompact: its SessionStart counts it, once.
    hook(
        "session/17-SessionStart-compact.json",
        "2027-03-01T10:06:00Z",
    );
    tick_at(&sb, "2027-03-01T10:07:00Z", &[]);
    let event = tick_at(&sb, "2027-03-01T10:08:00Z", &[]);
    assert_eq!(event["run"]["compactions"], 5, "{event}");
    assert_eq!(run_status(&sb)["compactions"], 5);
}

/// The status line's report with `percent` of the context used (the recorded one, 72%,
/// rewritten).
fn statusline_at(percent: u32) -> Vec<u8> {
    let mut status: Value =
        serde_json::from_slice(&fs::read(recorded("big-context/statusline-05.json")).unwrap())
            .unwrap();
    status["context_window"]["used_percentage"] = percent.into();
    serde_json::to_vec(&status).unwrap()
}

/// Seed 002: a task-ai loop compacts at its profile's `compaction_threshold` (fallback 82%),
/// not at ai-cli-task's 70%, and only its iteration's first compaction is a proactive one.
#[test]
fn a_task_ai_module_compacts_at_its_profiles_threshold_once_per_iteration() {
    let sb = Sandbox::new();
    let (agent, log) =
        crate::tmuxfix::scripted_agent(&sb, "agent", &[IDLE, &format!("enter:{IDLE_AGAIN}")]);
    let task = start_run_with(&sb, "2027-03-01T10:00:00Z", &[]);
    fs::write(
        task.join(".status.json"),
        r#"{"status":"executing","phase":"exec","updated_at":"2027-03-01T10:00:00Z"}"#,
    )
    .unwrap();
    let statusline = |percent: u32, at: &str| {
        let out = in_pane(&sb, &agent, at, &["statusline"], &statusline_at(percent));
        assert!(out.status.success(), "{out:?}");
    };
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    statusline(72, "2027-03-01T10:00:01Z");
    // 72% is past ai-cli-task's 70%, not task-ai's 82%.
    let event = tick_at(&sb, "2027-03-01T10:00:02Z", &[]);
    assert_eq!(event["state"]["context_percent"], 72, "{event}");
    assert_ne!(event["decision"], "compact", "{event}");
    // The task's profile says 71%.
    fs::write(
        task.join(".type-profile.md"),
        "# software\n\n## Auto Adaptation\n- compaction_threshold: 71%\n",
    )
    .unwrap();
    let event = tick_at(&sb, "2027-03-01T10:00:03Z", &[]);
    assert_eq!(event["decision"], "compact", "{event}");
    assert!(
        event["reasons"]
            .to_string()
            .contains("compaction_threshold 71%"),
        "{event}"
    );
    crate::tmuxfix::wait_for(&sb, &agent, "the compacted screen", |screen, _| {
        screen.contains("Listed the files.")
    });
    assert_eq!(crate::tmuxfix::keys_received(&log), "/compact\r");
    // The compaction, as the hooks report it; the context drops, then grows past 71% again
    // in the same iteration.
    hook_event(
        &sb,
        &agent,
        "session/14-PreCompact-manual.json",
        "2027-03-01T10:00:04Z",
    );
    hook_event(
        &sb,
        &agent,
        "session/17-SessionStart-compact.json",
        "2027-03-01T10:00:05Z",
    );
    statusline(30, "2027-03-01T10:00:06Z");
    let event = tick_at(&sb, "2027-03-01T10:00:07Z", &[]);
    assert_eq!(event["run"]["compactions"], 1, "{event}");
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:08Z");
    statusline(75, "2027-03-01T10:00:08Z");
    let event = tick_at(&sb, "2027-03-01T10:00:09Z", &[]);
    assert_eq!(event["state"]["context_percent"], 75, "{event}");
    assert_ne!(event["decision"], "compact", "{event}");
    assert!(
        event["reasons"].to_string().contains("only its first"),
        "{event}"
    );
    assert_eq!(crate::tmuxfix::keys_received(&log), "/compact\r");
}

/// Seed 002's VFP tracking: "Per-step tracking: After each exec step, check for VH→HS
/// transition. If yes, increment vfp_cycles_completed. Append to cumulative-green.jsonl" —
/// one line per completed cycle, beside the state file, never twice for one cycle.
#[test]
fn a_vfp_transition_appends_its_cycle_to_cumulative_green() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/vfp");
    let step = |args: &[&str]| {
        sb.cmd()
            .current_dir(&task)
            .env("AUTOCTL_NOW", "2027-02-01T09:00:00Z")
            .args(["vfp", "step"])
            .args(args)
            .output()
            .unwrap()
    };
    assert_eq!(step(&["--no-transition"]).status.code(), Some(1));
    assert!(
        !task.join("cumulative-green.jsonl").exists(),
        "no cycle yet"
    );
    step(&["--transition", "--test", "login::limits_failures"]);
    step(&["--no-transition"]);
    step(&["--transition"]);
    let lines: Vec<Value> = fs::read_to_string(task.join("cumulative-green.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["cycle"], 1);
    assert_eq!(lines[0]["tests"][0], "login::limits_failures");
    assert_eq!(lines[0]["timestamp"], "2027-02-01T09:00:00Z");
    assert_eq!(lines[1]["cycle"], 2);
    // A step killed after its line and before its state: the retry does not append again.
    let state = task.join(".vfp-state.json");
    let mut before: Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
    before["cycles_completed"] = 1.into();
    fs::write(&state, before.to_string()).unwrap();
    step(&["--transition"]);
    let text = fs::read_to_string(task.join("cumulative-green.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    // --green names another file; a symlink there is refused.
    let other = sb.path("green.jsonl");
    let out = step(&["--transition", "--green", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(fs::read_to_string(&other).unwrap().lines().count(), 1);
    std::os::unix::fs::symlink(&other, sb.path("link.jsonl")).unwrap();
    let out = step(&[
        "--transition",
        "--green",
        sb.path("link.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    crate::util::one_stderr_line(&out);
}

/// wholework Step 4d: after every level ran, verify the sub-issues that reached
/// phase/verify — not those skipped for a failed dependency, not those already done — in
/// the graph's order, serially, then the parent.
#[test]
fn graph_verify_order_lists_step_4d_serially_with_the_parent_last() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["graph", "verify-order", "--parent", "300"])
        .args([
            "303=verify",
            "301=done",
            "304=skipped",
            "302=phase/verify,305=failed",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "303\n302\n300\n");
    let out = sb
        .cmd()
        .args([
            "graph",
            "verify-order",
            "--parent",
            "300",
            "--format",
            "json",
        ])
        .args(["303=verify", "301=done", "304=skipped"])
        .output()
        .unwrap();
    let json = &json_lines(&out)[0];
    assert_eq!(json["order"], serde_json::json!([303, 300]));
    assert_eq!(json["left_out"][0]["number"], 301);
    assert_eq!(
        json["left_out"][1]["reason"],
        "skipped: a sub-issue it depends on failed"
    );
    // Only the parent when no sub-issue waits for verify; a bad item is one line, exit 2.
    let out = sb
        .cmd()
        .args(["graph", "verify-order", "--parent", "300", "301=done"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "300\n");
    let out = sb
        .cmd()
        .args(["graph", "verify-order", "--parent", "300", "301"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    crate::util::one_stderr_line(&out);
}

/// wholework Step 5: unchecked post-merge conditions are shown without their
/// `<!-- verify: … -->` comments, the first five, then "... and N more".
#[test]
fn graph_close_shows_five_readable_conditions_then_how_many_more() {
    let sb = Sandbox::new();
    let items: String = (1..=8)
        .map(|i| format!("- [ ] condition {i} <!-- verify: curl -s localhost/{i} -->\n"))
        .collect();
    let body = sb.write("body.md", format!("## Post-merge\n{items}"));
    let close = |format: &str| {
        sb.cmd()
            .args([
                "graph", "close", "--parent", "300", "301=done", "--format", format,
            ])
            .arg("--body")
            .arg(&body)
            .output()
            .unwrap()
    };
    let out = close("text");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "verify\nunchecked\tcondition 1\nunchecked\tcondition 2\nunchecked\tcondition 3\n\
         unchecked\tcondition 4\nunchecked\tcondition 5\n... and 3 more\n"
    );
    // JSON keeps every condition as written (the verify commands are /verify's).
    let json = &json_lines(&close("json"))[0];
    assert_eq!(json["unchecked"].as_array().unwrap().len(), 8);
    assert!(
        json["unchecked"][7]
            .as_str()
            .unwrap()
            .contains("verify: curl")
    );
    // Five or fewer: each on its own line, nothing more.
    let body5 = sb.write(
        "five.md",
        "## Post-merge\n- [ ] one <!-- verify: true -->\n- [ ] two\n",
    );
    let out = sb
        .cmd()
        .args(["graph", "close", "--parent", "300", "301=done", "--body"])
        .arg(&body5)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "verify\nunchecked\tone\nunchecked\ttwo\n");
}

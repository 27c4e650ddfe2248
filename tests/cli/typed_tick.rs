//! `run tick` reads the agent's hooks first and its screen second (issue 17): a fake agent in
//! tmux draws a real Claude Code screen, and the real payloads recorded from Claude Code
//! 2.1.332 are fed to `autoctl hook event` as if the agent's hooks ran in that pane.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::tmuxfix::{fake_agent, press, scripted_agent, tmux, wait_for};
use crate::util::{Sandbox, json_lines, with_stdin};

const SAFE: &str = "tests/fixtures/panes/claude-code/permission-bash-safe.txt";
const RM_RF: &str = "tests/fixtures/panes/claude-code/permission-bash-rm-rf.txt";
const IDLE: &str = "tests/fixtures/panes/claude-code/idle-after-reply.txt";
const IDLE_AGAIN: &str = "tests/fixtures/panes/claude-code/idle-after-auto-approved-ls.txt";
const IDLE_AGAIN_MARK: &str = "Listed the files.";

pub fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook/claude-code")
        .join(name)
}

/// `$TMUX` and `$TMUX_PANE` as the agent's hooks in `target` see them.
pub fn pane_env(sb: &Sandbox, target: &str) -> (String, String) {
    let out = tmux(
        sb,
        &[
            "display-message",
            "-p",
            "-t",
            target,
            "#{socket_path}\t#{pane_id}",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
    let (socket, pane) = text.split_once('\t').unwrap();
    (format!("{socket},1,0"), pane.to_string())
}

/// Run `autoctl hook event` with a recorded payload in `target`'s pane at time `at`.
pub fn hook_event(sb: &Sandbox, target: &str, payload: &str, at: &str) {
    let out = in_pane(
        sb,
        target,
        at,
        &["hook", "event"],
        &fs::read(recorded(payload)).unwrap(),
    );
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
}

/// Run autoctl with `stdin` as if from the agent's pane `target` (its `$TMUX`, `$TMUX_PANE`),
/// at time `at`.
pub fn in_pane(sb: &Sandbox, target: &str, at: &str, args: &[&str], stdin: &[u8]) -> Output {
    let (tmux_var, pane) = pane_env(sb, target);
    let mut cmd = sb.std_cmd();
    cmd.env("TMUX", tmux_var)
        .env("TMUX_PANE", pane)
        .env("AUTOCTL_NOW", at);
    with_stdin(cmd, args, stdin)
}

fn start_run(sb: &Sandbox, at: &str) -> PathBuf {
    start_run_with(sb, at, &[])
}

pub fn start_run_with(sb: &Sandbox, at: &str, extra: &[&str]) -> PathBuf {
    let task = sb.module("project/TASK/t");
    sb.cmd()
        .env("AUTOCTL_NOW", at)
        .args([
            "run",
            "start",
            "--session",
            "agent",
            "--timeout",
            "1d",
            "--task",
        ])
        .arg(&task)
        .args(extra)
        .assert()
        .code(0);
    task
}

pub fn run_status(sb: &Sandbox) -> Value {
    let out = sb
        .cmd()
        .args(["run", "status", "--format", "json", "--session", "agent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = json_lines(&out).remove(0);
    let violations = autoctl::schema::violations("run-status", &report);
    assert!(violations.is_empty(), "{report}: {violations:?}");
    report
}

pub fn tick_at(sb: &Sandbox, at: &str, extra: &[&str]) -> Value {
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", at)
        .args(["run", "tick", "--all"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let event = json_lines(&output).remove(0);
    let violations = autoctl::schema::violations("tick-event", &event);
    assert!(violations.is_empty(), "{event}: {violations:?}");
    event
}

#[test]
fn a_permission_prompt_the_hooks_report_is_decided_at_the_first_tick() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    start_run(&sb, "2027-03-01T10:00:00Z");
    // Without hooks the first look only starts the unchanged count.
    let event = tick_at(&sb, "2027-03-01T10:00:10Z", &[]);
    assert_eq!(event["decision"], "progress", "{event}");
    assert_eq!(
        event["state"]["source"], "screen",
        "no hook records: {event}"
    );
    assert_eq!(event["state"]["state"], "permission", "{event}");
    // The PermissionRequest and its notification, recorded in the agent's pane.
    hook_event(
        &sb,
        &agent,
        "permission/05-PermissionRequest-Bash.json",
        "2027-03-01T10:00:20Z",
    );
    hook_event(
        &sb,
        &agent,
        "permission/06-Notification-permission_prompt.json",
        "2027-03-01T10:00:21Z",
    );
    let event = tick_at(&sb, "2027-03-01T10:00:22Z", &[]);
    assert_eq!(event["state"]["source"], "hook", "{event}");
    assert_eq!(event["state"]["state"], "waiting-for-permission");
    assert_eq!(event["state"]["tool"], "Bash");
    assert_ne!(
        event["decision"], "progress",
        "decided at once, not after 3 heartbeats: {event}"
    );
    assert!(
        matches!(event["decision"].as_str(), Some("answer" | "escalate")),
        "{event}"
    );
    let report = run_status(&sb);
    assert_eq!(
        report["agent_state"]["source"], "hook",
        "run status shows the source: {report}"
    );
    assert_eq!(report["agent_state"]["state"], "waiting-for-permission");
    assert_eq!(report["agent_state"]["at"], "2027-03-01T10:00:22.000Z");
    // Every reading is counted by its source: the screen's first, then the hooks'.
    assert_eq!(report["sources"]["screen"], 1, "{report}");
    assert_eq!(report["sources"]["hook"], 1, "{report}");
    assert_eq!(report["sources"]["typed_percent"], 50.0, "{report}");
    let _ = crate::tmuxfix::agent_caught_up(&sb, &agent, &log);
}

#[test]
fn a_stale_hook_state_falls_back_to_the_screen() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    start_run(&sb, "2027-03-01T10:00:00Z");
    hook_event(
        &sb,
        &agent,
        "permission/06-Notification-permission_prompt.json",
        "2027-03-01T10:00:01Z",
    );
    // An hour later, past the freshness bound.
    let event = tick_at(&sb, "2027-03-01T11:00:00Z", &[]);
    assert_eq!(event["state"]["source"], "screen", "{event}");
    assert_eq!(event["state"]["stale"], true);
    assert_eq!(
        event["decision"], "progress",
        "the screen's own threshold: {event}"
    );
    // A tighter bound does the same to a minute-old state.
    hook_event(
        &sb,
        &agent,
        "permission/06-Notification-permission_prompt.json",
        "2027-03-01T11:00:01Z",
    );
    let event = tick_at(&sb, "2027-03-01T11:01:02Z", &["--hook-fresh", "1m"]);
    assert_eq!(event["state"]["source"], "screen", "{event}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed"
    );
}

#[test]
fn idle_hooks_and_a_destructive_menu_escalate_at_once() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", RM_RF);
    start_run(&sb, "2027-03-01T10:00:00Z");
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    let event = tick_at(&sb, "2027-03-01T10:00:02Z", &[]);
    assert_eq!(event["decision"], "escalate", "{event}");
    assert!(
        event["state"]["disagreement"]
            .as_str()
            .unwrap()
            .contains("hooks say idle"),
        "{event}"
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "never typed into"
    );
}

#[test]
fn a_harmless_prompt_the_hooks_do_not_report_is_not_answered() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    start_run(&sb, "2027-03-01T10:00:00Z");
    // The hooks say the agent is working: the menu on screen contradicts them.
    hook_event(
        &sb,
        &agent,
        "session/03-UserPromptSubmit.json",
        "2027-03-01T10:00:01Z",
    );
    let event = tick_at(&sb, "2027-03-01T10:00:02Z", &[]);
    assert_eq!(event["decision"], "escalate", "{event}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "a prompt the channels disagree on is never answered"
    );
}

#[test]
fn reasoning_loop_messages_come_from_the_stop_hook() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    start_run(&sb, "2027-03-01T10:00:00Z");
    // Five different model messages from a real Stop-hook loop: never a reasoning loop.
    for (i, stop) in ["04", "06", "07", "08", "09"].iter().enumerate() {
        hook_event(
            &sb,
            &agent,
            &format!("stop-loop/{stop}-Stop.json"),
            &format!("2027-03-01T10:0{i}:00Z"),
        );
        let event = tick_at(&sb, &format!("2027-03-01T10:0{i}:01Z"), &[]);
        assert_ne!(event["decision"], "stop", "{event}");
        assert_eq!(event["run"]["message_repeats"], 1, "{event}");
    }
    // The same message three Stops in a row is one.
    for i in 5..8 {
        hook_event(
            &sb,
            &agent,
            "stop-loop/09-Stop.json",
            &format!("2027-03-01T10:0{i}:00Z"),
        );
    }
    let event = tick_at(&sb, "2027-03-01T10:08:00Z", &[]);
    assert_eq!(event["decision"], "stop", "{event}");
    assert_eq!(event["run"]["stop_reason"], "reasoning_loop");
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
}

#[test]
fn an_idle_agent_past_compact_at_gets_one_compact_per_crossing() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    start_run(&sb, "2027-03-01T10:00:00Z");
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    // The status line reports 72% of the context used.
    let status = fs::read(recorded("big-context/statusline-05.json")).unwrap();
    let out = in_pane(
        &sb,
        &agent,
        "2027-03-01T10:00:01Z",
        &["statusline"],
        &status,
    );
    assert!(out.status.success());
    let event = tick_at(&sb, "2027-03-01T10:00:02Z", &["--compact-at", "80"]);
    assert_eq!(event["state"]["context_percent"], 72, "{event}");
    assert_ne!(event["decision"], "compact", "72% < 80%: {event}");
    let event = tick_at(&sb, "2027-03-01T10:00:03Z", &[]);
    assert_eq!(event["decision"], "compact", "{event}");
    assert!(event["reasons"].to_string().contains("compact"), "{event}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "/compact\n"
    );
    // Still idle and still at 72%: not typed again.
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:04Z");
    let event = tick_at(&sb, "2027-03-01T10:00:05Z", &[]);
    assert_ne!(event["decision"], "compact", "{event}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "/compact\n"
    );
}

/// Issue 28: an agent started with `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (as `run start
/// --launch` starts Claude Code) compacts by itself: the tick never types `/compact` for it.
#[test]
fn an_agent_that_compacts_by_itself_gets_no_compact() {
    let sb = Sandbox::new();
    let project = sb.module("project");
    let home = sb.path("home").display().to_string();
    let (agent, log) = crate::tmuxfix::fake_agent_in(
        &sb,
        "agent",
        IDLE,
        &project,
        &[("HOME", &home), ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "70")],
    );
    start_run(&sb, "2027-03-01T10:00:00Z");
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    let status = fs::read(recorded("big-context/statusline-05.json")).unwrap();
    let out = in_pane(
        &sb,
        &agent,
        "2027-03-01T10:00:01Z",
        &["statusline"],
        &status,
    );
    assert!(out.status.success());
    let event = tick_at(&sb, "2027-03-01T10:00:03Z", &["--compact-at", "70"]);
    assert_eq!(event["state"]["context_percent"], 72, "{event}");
    assert_ne!(event["decision"], "compact", "{event}");
    assert!(
        event["reasons"]
            .to_string()
            .contains("Claude Code compacts by itself at 70%"),
        "{event}"
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed"
    );
}

#[test]
fn a_hook_event_from_before_the_last_screen_change_is_never_trusted() {
    let sb = Sandbox::new();
    // Idle after a reply; the idle screen is redrawn (another idle screen, as Claude Code
    // redraws with no hook event); then a permission menu no hook reports (hooks that failed
    // to fire, as in a release regression).
    let (agent, log) = scripted_agent(
        &sb,
        "agent",
        &[
            IDLE,
            &format!("enter:{IDLE_AGAIN}"),
            &format!("enter:{SAFE}"),
        ],
    );
    start_run(&sb, "2027-03-01T10:00:00Z");
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    let event = tick_at(&sb, "2027-03-01T10:01:00Z", &[]);
    assert_eq!(
        (&event["state"]["source"], &event["state"]["state"]),
        (&Value::from("hook"), &Value::from("idle")),
        "{event}"
    );
    // A redraw of the same class is no change of what the screen shows: still the hooks'.
    press(&sb, &agent, &["Enter"]);
    wait_for(&sb, &agent, "the redraw", |screen, _| {
        screen.contains(IDLE_AGAIN_MARK)
    });
    for at in ["2027-03-01T10:01:30Z", "2027-03-01T10:01:40Z"] {
        let event = tick_at(&sb, at, &[]);
        assert_eq!(event["state"]["source"], "hook", "{event}");
        assert_eq!(event["saw"]["pane"]["class"], "idle", "{event}");
    }
    press(&sb, &agent, &["Enter"]);
    wait_for(&sb, &agent, "the menu", |screen, _| {
        screen.contains("Do you want to proceed")
    });
    // The Stop came before the screen changed: it describes a screen that is gone, at the
    // first heartbeat that sees the menu and at every later one.
    for at in ["2027-03-01T10:02:00Z", "2027-03-01T10:03:00Z"] {
        let event = tick_at(&sb, at, &[]);
        assert_eq!(event["state"]["source"], "screen", "{event}");
        assert_eq!(event["state"]["stale"], true, "{event}");
        assert!(event["state"].get("disagreement").is_none(), "{event}");
        assert_eq!(
            event["decision"], "progress",
            "the screen's threshold: {event}"
        );
    }
    assert_eq!(run_status(&sb)["agent_state"]["source"], "screen");
    // An event after the change is trusted at once.
    hook_event(
        &sb,
        &agent,
        "permission/06-Notification-permission_prompt.json",
        "2027-03-01T10:03:30Z",
    );
    let event = tick_at(&sb, "2027-03-01T10:03:31Z", &[]);
    assert_eq!(event["state"]["source"], "hook", "{event}");
    assert_eq!(event["state"]["state"], "waiting-for-permission");
    assert_ne!(event["decision"], "progress", "{event}");
    let report = run_status(&sb);
    assert_eq!(report["agent_state"]["source"], "hook", "{report}");
    assert_eq!(report["agent_state"]["state"], "waiting-for-permission");
    let _ = crate::tmuxfix::agent_caught_up(&sb, &agent, &log);
}

#[test]
fn compactions_the_hooks_report_count_against_max_compactions() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", IDLE);
    let task = start_run_with(&sb, "2027-03-01T10:00:00Z", &["--max-compactions", "2"]);
    hook_event(
        &sb,
        &agent,
        "session/02-SessionStart-startup.json",
        "2027-03-01T10:00:01Z",
    );
    hook_event(&sb, &agent, "session/07-Stop.json", "2027-03-01T10:00:02Z");
    let event = tick_at(&sb, "2027-03-01T10:01:00Z", &[]);
    assert!(event["run"].get("compactions").is_none(), "{event}");
    let report = run_status(&sb);
    assert_eq!(
        (&report["compactions"], &report["max_compactions"]),
        (&Value::from(0), &Value::from(2))
    );
    // A person's /compact: PreCompact, then the compacted session starts at its prompt.
    hook_event(
        &sb,
        &agent,
        "session/14-PreCompact-manual.json",
        "2027-03-01T10:01:30Z",
    );
    hook_event(
        &sb,
        &agent,
        "session/17-SessionStart-compact.json",
        "2027-03-01T10:01:31Z",
    );
    let event = tick_at(&sb, "2027-03-01T10:02:00Z", &[]);
    assert_eq!(event["run"]["compactions"], 1, "{event}");
    assert_eq!(event["run"]["status"], "running", "{event}");
    assert_eq!(run_status(&sb)["compactions"], 1);
    // Past --compact-at and idle, but a /compact would be the iteration's second: not typed.
    let status = fs::read(recorded("big-context/statusline-05.json")).unwrap();
    let out = in_pane(
        &sb,
        &agent,
        "2027-03-01T10:02:10Z",
        &["statusline"],
        &status,
    );
    assert!(out.status.success());
    let event = tick_at(&sb, "2027-03-01T10:02:20Z", &[]);
    assert_eq!(event["decision"], "progress", "{event}");
    assert!(
        event["reasons"].to_string().contains("no /compact typed"),
        "{event}"
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed"
    );
    // The agent compacts by itself a second time: the iteration reached the limit.
    hook_event(
        &sb,
        &agent,
        "session/14-PreCompact-manual.json",
        "2027-03-01T10:03:30Z",
    );
    let event = tick_at(&sb, "2027-03-01T10:04:00Z", &[]);
    assert_eq!(event["decision"], "stop", "{event}");
    assert_eq!(event["run"]["stop_reason"], "compaction_limit", "{event}");
    assert_eq!(event["run"]["compactions"], 2, "{event}");
    let stop: Value = serde_json::from_slice(&fs::read(task.join(".auto-stop")).unwrap()).unwrap();
    assert_eq!(stop["reason"], "compaction_limit");
    assert!(
        stop["message"]
            .as_str()
            .unwrap()
            .contains("context budget insufficient"),
        "{stop}"
    );
    assert!(
        autoctl::schema::violations("auto-stop", &stop).is_empty(),
        "{stop}"
    );
}

#[test]
fn stall_check_reads_the_hooks_like_run_tick() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    let check = |at: &str| {
        let out = sb
            .cmd()
            .env("AUTOCTL_NOW", at)
            .args(["stall", "check", "--target", &agent, "--state"])
            .arg(sb.path("stall.json"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        json_lines(&out).remove(0)
    };
    // No hook records: the screen, and its threshold.
    let report = check("2027-03-01T10:00:00Z");
    assert_eq!(report["state"]["source"], "screen", "{report}");
    assert_eq!(report["verdict"], "progress", "{report}");
    hook_event(
        &sb,
        &agent,
        "permission/06-Notification-permission_prompt.json",
        "2027-03-01T10:00:30Z",
    );
    // The hooks report the prompt: decided at the next check, not after --threshold.
    let report = check("2027-03-01T10:01:00Z");
    assert_eq!(report["state"]["source"], "hook", "{report}");
    assert_eq!(
        report["state"]["state"], "waiting-for-permission",
        "{report}"
    );
    assert_eq!(report["verdict"], "stalled", "{report}");
    assert_eq!(report["action"], "answer", "{report}");
    assert_eq!(report["applied"], false, "without --apply: {report}");
    // Hooks that say the agent works while the screen shows a menu: never answered.
    hook_event(
        &sb,
        &agent,
        "session/03-UserPromptSubmit.json",
        "2027-03-01T10:01:30Z",
    );
    let out = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:02:00Z")
        .args(["stall", "check", "--apply", "--target", &agent, "--state"])
        .arg(sb.path("stall.json"))
        .output()
        .unwrap();
    let report = json_lines(&out).remove(0);
    assert!(report["state"]["disagreement"].is_string(), "{report}");
    assert_eq!(report["action"], "escalate", "{report}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed"
    );
}

/// autoctl answered the box the hooks announced: the agent runs the granted tool and no hook
/// says so until it ends (Gemini fires nothing between its box and AfterTool). The answer is
/// kept in the hook record, so the ticks while the tool runs go by the typed state — working
/// with that tool — and not by the screen alone.
#[test]
fn a_permission_autoctl_answered_is_read_from_the_hooks_while_the_tool_runs() {
    let sb = Sandbox::new();
    let (agent, log) = scripted_agent(
        &sb,
        "agent",
        &[
            SAFE,
            "tests/fixtures/panes/claude-code/working-bash-child-running.txt",
        ],
    );
    start_run(&sb, "2027-03-01T10:00:00Z");
    hook_event(
        &sb,
        &agent,
        "permission/05-PermissionRequest-Bash.json",
        "2027-03-01T10:00:20Z",
    );
    hook_event(
        &sb,
        &agent,
        "permission/06-Notification-permission_prompt.json",
        "2027-03-01T10:00:21Z",
    );
    let event = tick_at(&sb, "2027-03-01T10:00:22Z", &[]);
    assert_eq!(event["decision"], "answer", "{event}");
    assert_eq!(event["state"]["source"], "hook", "{event}");
    assert!(
        !crate::tmuxfix::agent_caught_up(&sb, &agent, &log).is_empty(),
        "the answer was typed"
    );
    // The agent goes on with the tool (its screen shows it working).
    press(&sb, &agent, &["Enter"]);
    wait_for(&sb, &agent, "the working screen", |screen, _| {
        !screen.contains("Do you want to proceed")
    });
    for at in ["2027-03-01T10:00:25Z", "2027-03-01T10:00:40Z"] {
        let event = tick_at(&sb, at, &[]);
        assert_eq!(event["state"]["source"], "hook", "{event}");
        assert_eq!(event["state"]["state"], "working", "{event}");
        assert_eq!(event["state"]["tool"], "Bash", "{event}");
        assert!(event["state"].get("disagreement").is_none(), "{event}");
    }
    let report = run_status(&sb);
    assert_eq!(report["sources"]["screen"], 0, "{report}");
    assert_eq!(report["sources"]["hook"], 3, "{report}");
}

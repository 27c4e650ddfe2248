//! `autoctl doctor` about a run whose agent runs in a real tmux pane: what is wired and live,
//! judged in the agent's own environment and against the session now in the pane (issue 29:
//! doctor said OK about a session whose hooks could not run). The agent is the fake agent
//! showing real Claude Code 2.1.332 screens, started as a person starts Claude Code (in the
//! project, with its own HOME and PATH); its hook records come from recorded payloads.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::tmuxfix::{fake_agent_in, pane_pid};
use crate::typed_tick::in_pane;
use crate::util::{Sandbox, bin};

const IDLE: &str = "tests/fixtures/panes/claude-code/idle-after-reply.txt";
/// The real 2.1.332 screen with `autoctl` off the agent's PATH: every hook failed.
const NOT_FOUND: &str = "tests/fixtures/hook/claude-code/path/screen-autoctl-not-found.txt";
/// The session id of the `session/` recordings.
const RECORDED_SESSION: &str = "cb56d490-f6ed-44ad-86ba-d514879660f6";

fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook/claude-code")
        .join(name)
}

/// A `claude` on PATH that only tells its version, so `doctor` does not depend on the machine;
/// returns that PATH.
fn fake_claude(sb: &Sandbox) -> String {
    let bin = sb.path("bin");
    fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    fs::write(&claude, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n").unwrap();
    fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A PATH for the agent: with autoctl's directory, or without it.
fn agent_path(with_autoctl: bool) -> String {
    let dir = Path::new(bin()).parent().unwrap().display().to_string();
    if with_autoctl {
        format!("{dir}:/usr/bin:/bin")
    } else {
        "/usr/bin:/bin".to_string()
    }
}

struct Setup {
    sb: Sandbox,
    path: String,
    project: PathBuf,
}

/// A project with autoctl's hooks installed as `autoctl` (the bare name `hook install` writes
/// when autoctl is on the installer's PATH), and a run registered for the pane `agent`.
fn setup() -> Setup {
    let sb = Sandbox::new();
    let path = fake_claude(&sb);
    let project = sb.module("project");
    sb.cmd()
        .current_dir(&project)
        .args(["hook", "install", "--autoctl", "autoctl"])
        .assert()
        .code(0);
    Setup { sb, path, project }
}

impl Setup {
    /// The fake agent in the project, with the sandbox's HOME and `path`.
    fn agent(&self, screen: &str, path: &str) -> String {
        let home = self.sb.path("home").display().to_string();
        let (target, _) = fake_agent_in(
            &self.sb,
            "agent",
            screen,
            &self.project,
            &[("HOME", &home), ("PATH", path)],
        );
        target
    }

    fn start_run(&self, at: &str) {
        let task = self.sb.module("project/TASK/t");
        self.sb
            .cmd()
            .env("AUTOCTL_NOW", at)
            .args(["run", "start", "--session", "agent", "--timeout", "1d"])
            .arg("--task")
            .arg(&task)
            .assert()
            .code(0);
    }

    fn hook(&self, target: &str, payload: &str, at: &str) {
        let out = in_pane(
            &self.sb,
            target,
            at,
            &["hook", "event"],
            &fs::read(recorded(payload)).unwrap(),
        );
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    }

    fn statusline(&self, target: &str, payload: &str, at: &str) {
        let out = in_pane(
            &self.sb,
            target,
            at,
            &["statusline"],
            &fs::read(recorded(payload)).unwrap(),
        );
        assert!(out.status.success(), "{out:?}");
    }

    fn tick(&self, at: &str) {
        self.sb
            .cmd()
            .env("AUTOCTL_NOW", at)
            .args(["run", "tick", "--all"])
            .assert()
            .code(0);
    }

    fn doctor(&self, args: &[&str], at: &str) -> Output {
        self.sb
            .cmd()
            .env("PATH", &self.path)
            .env("AUTOCTL_NOW", at)
            .current_dir(&self.project)
            .arg("doctor")
            .args(args)
            .output()
            .unwrap()
    }

    /// `doctor --session agent --format json` at `at`: exit code and the checks by name.
    fn report(&self, at: &str) -> (Option<i32>, Vec<Value>) {
        let out = self.doctor(&["--session", "agent", "--format", "json"], at);
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        let checks = report["checks"].as_array().unwrap().clone();
        assert_eq!(
            report["ok"],
            checks.iter().all(|c| c["level"] == "ok"),
            "{report}"
        );
        (out.status.code(), checks)
    }
}

fn check<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["name"] == name && c["scope"] == "run agent")
        .unwrap_or_else(|| panic!("no {name} check: {checks:#?}"))
}

#[test]
fn doctor_says_what_is_wired_and_live() {
    let s = setup();
    let sb = &s.sb;
    // Nothing wired in a directory without settings: WARN with the fix, exit 1.
    let elsewhere = sb.module("elsewhere");
    let out = sb
        .cmd()
        .env("PATH", &s.path)
        .env("AUTOCTL_NOW", "2027-03-01T10:00:00Z")
        .current_dir(&elsewhere)
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("WARN  settings") && text.contains("autoctl hook install"),
        "{text}"
    );

    let agent = s.agent(IDLE, &agent_path(true));
    s.start_run("2027-03-01T10:00:00Z");
    s.hook(&agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    s.statusline(&agent, "session/statusline-06.json", "2027-03-01T10:00:01Z");
    s.tick("2027-03-01T10:00:02Z");
    let (code, checks) = s.report("2027-03-01T10:00:30Z");
    let failing: Vec<&Value> = checks.iter().filter(|c| c["level"] != "ok").collect();
    assert!(failing.is_empty(), "{failing:#?}");
    assert_eq!(code, Some(0));
    for name in [
        "state dir",
        "registry",
        "claude",
        "settings",
        "run",
        "pane",
        "agent",
        "hook command",
        "hooks",
        "status line",
        "driver",
    ] {
        assert!(
            checks.iter().any(|c| c["name"] == name),
            "{name}: {checks:#?}"
        );
    }
    let command = check(&checks, "hook command")["detail"].to_string();
    assert!(
        command.contains("autoctl →") && command.contains("the agent's PATH"),
        "{command}"
    );
    // Ten minutes without a tick: WARN, exit 1. The status line is not stale for it: the
    // agent has been idle since (Claude Code runs its status line only on activity).
    let out = s.doctor(&["--session", "agent"], "2027-03-01T10:10:30Z");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("WARN  driver") && text.contains("run watch"),
        "{text}"
    );
    assert!(
        text.contains("OK    status line") && text.contains("no activity since"),
        "{text}"
    );
    // Activity the status line did not follow: it stopped running.
    s.hook(
        &agent,
        "session/09-UserPromptSubmit.json",
        "2027-03-01T10:10:40Z",
    );
    let (_, checks) = s.report("2027-03-01T10:10:50Z");
    let status = check(&checks, "status line");
    assert_eq!(status["level"], "warn", "{status}");
    assert!(
        status["detail"]
            .as_str()
            .unwrap()
            .contains("stopped running"),
        "{status}"
    );
}

/// Issue 29: with `autoctl` not on the agent's PATH every hook fails on screen, and doctor
/// said OK from the previous session's records. The hooks' command is judged in the agent's
/// own environment and on its screen: FAIL, exit 1, the fix named.
#[test]
fn doctor_fails_when_the_hooks_cannot_run_in_the_agents_environment() {
    let s = setup();
    // The previous session's records, in this very pane, from when the hooks worked.
    let agent = s.agent(NOT_FOUND, &agent_path(false));
    s.start_run("2027-03-01T10:00:00Z");
    s.hook(&agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    s.tick("2027-03-01T10:00:02Z");
    let (code, checks) = s.report("2027-03-01T10:00:30Z");
    assert_eq!(code, Some(1), "{checks:#?}");
    let command = check(&checks, "hook command");
    assert_eq!(command["level"], "fail", "{command}");
    assert!(
        command["detail"]
            .as_str()
            .unwrap()
            .contains("/bin/sh: 1: autoctl: not found"),
        "{command}"
    );
    let fix = command["fix"].as_str().unwrap();
    assert!(
        fix.contains("PATH") && fix.contains("autoctl hook install --autoctl"),
        "{fix}"
    );
    let text = String::from_utf8_lossy(
        &s.doctor(&["--session", "agent"], "2027-03-01T10:00:30Z")
            .stdout,
    )
    .into_owned();
    assert!(text.contains("FAIL  hook command"), "{text}");
}

/// The same without the failures on screen (an idle screen, the hooks not fired yet): the
/// PATH the agent runs with decides.
#[test]
fn doctor_resolves_the_hook_command_in_the_agents_path() {
    let s = setup();
    let agent_path = agent_path(false);
    let _agent = s.agent(IDLE, &agent_path);
    s.start_run("2027-03-01T10:00:00Z");
    let (code, checks) = s.report("2027-03-01T10:00:30Z");
    assert_eq!(code, Some(1));
    let command = check(&checks, "hook command");
    assert_eq!(command["level"], "fail", "{command}");
    let detail = command["detail"].as_str().unwrap();
    assert!(
        detail.contains("`autoctl` is not on the agent's PATH") && detail.contains(&agent_path),
        "{detail}"
    );
}

/// Records of another session than the one Claude Code says runs in the pane (its
/// `~/.claude/sessions/PID.json`) are history: after a restart whose hooks never ran, the
/// hooks and status-line rows warn instead of reading the old session's "OK".
#[test]
fn doctor_reads_only_the_records_of_the_session_now_in_the_pane() {
    let s = setup();
    let agent = s.agent(IDLE, &agent_path(true));
    s.start_run("2027-03-01T10:00:00Z");
    s.hook(&agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    s.statusline(&agent, "session/statusline-06.json", "2027-03-01T10:00:01Z");
    s.tick("2027-03-01T10:00:02Z");
    // Claude Code's own record of the session its process runs: the recorded one.
    let sessions = s.sb.path("home/.claude/sessions");
    fs::create_dir_all(&sessions).unwrap();
    let pid = pane_pid(&s.sb, &agent);
    let write = |session: &str| {
        fs::write(
            sessions.join(format!("{pid}.json")),
            format!(r#"{{"pid":{pid},"sessionId":"{session}","cwd":"/x","kind":"interactive"}}"#),
        )
        .unwrap();
    };
    write(RECORDED_SESSION);
    let (code, checks) = s.report("2027-03-01T10:00:30Z");
    assert_eq!(code, Some(0), "{checks:#?}");
    assert!(
        check(&checks, "agent")["detail"]
            .as_str()
            .unwrap()
            .contains(RECORDED_SESSION)
    );
    // A new session in the pane (a restart with the hooks uninstalled): the records are the
    // old session's.
    write("11111111-2222-3333-4444-555555555555");
    let (code, checks) = s.report("2027-03-01T10:00:43Z");
    assert_eq!(code, Some(1));
    for name in ["hooks", "status line"] {
        let row = check(&checks, name);
        assert_eq!(row["level"], "warn", "{row}");
        let detail = row["detail"].as_str().unwrap();
        assert!(
            detail.contains("history") && detail.contains(RECORDED_SESSION),
            "{detail}"
        );
        assert!(!detail.contains("idle since"), "{detail}");
    }
    // `--session` takes the live session's id too.
    let out = s.doctor(
        &["--session", "11111111-2222-3333-4444-555555555555"],
        "2027-03-01T10:00:43Z",
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("run agent"),
        "{out:?}"
    );
}

/// `doctor --session S` on a run that ended reports how it ended (it printed only the global
/// checks and exited 0).
#[test]
fn doctor_reports_a_stopped_run() {
    let s = setup();
    let _agent = s.agent(IDLE, &agent_path(true));
    s.start_run("2027-03-01T10:00:00Z");
    s.sb.cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .args(["run", "stop", "--session", "agent"])
        .assert()
        .code(0);
    let (code, checks) = s.report("2027-03-01T10:05:00Z");
    assert_eq!(code, Some(1));
    let run = check(&checks, "run");
    assert_eq!(run["level"], "warn", "{run}");
    let detail = run["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("stopped: user_stop 4m ago") && detail.contains("nothing supervises"),
        "{detail}"
    );
    assert!(
        !checks.iter().any(|c| c["name"] == "driver"),
        "no driver expected of an ended run: {checks:#?}"
    );
}

/// `doctor --session S` for a tmux session no run is registered for printed the global checks
/// only and exited 0, though the agent in it could not run a single hook. Its pane is judged
/// as a run's is (the hook command FAILs, the fix named), beside a warning that nothing
/// supervises it; a name that is nothing at all fails.
#[test]
fn doctor_judges_the_agent_in_a_session_no_run_is_registered_for() {
    let s = setup();
    let agent = s.agent(NOT_FOUND, &agent_path(false));
    s.hook(&agent, "session/07-Stop.json", "2027-03-01T10:00:01Z");
    let out = s.doctor(
        &["--session", "agent", "--format", "json"],
        "2027-03-01T10:00:30Z",
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (out.status.code(), &report["ok"]),
        (Some(1), &Value::Bool(false))
    );
    let row = |name: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["scope"] == "session agent" && c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} row: {report:#}"))
            .clone()
    };
    let run = row("run");
    assert_eq!(run["level"], "warn", "{run}");
    assert!(
        run["detail"]
            .as_str()
            .unwrap()
            .contains("nothing supervises it"),
        "{run}"
    );
    let command = row("hook command");
    assert_eq!(command["level"], "fail", "{command}");
    assert!(
        command["detail"]
            .as_str()
            .unwrap()
            .contains("/bin/sh: 1: autoctl: not found"),
        "{command}"
    );
    assert!(
        command["fix"]
            .as_str()
            .unwrap()
            .contains("autoctl hook install --autoctl"),
        "{command}"
    );
    assert_eq!(row("hooks")["level"], "ok", "the pane's records are found");
    // Nothing of that name anywhere.
    let out = s.doctor(&["--session", "nothing"], "2027-03-01T10:00:30Z");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("no run, tmux session or agent session is named nothing"),
        "{text}"
    );
}

/// A status line recorded without any hook event (hooks not installed, status line wired) is
/// shown, not skipped.
#[test]
fn doctor_shows_a_status_line_recorded_without_hook_events() {
    let s = setup();
    let agent = s.agent(IDLE, &agent_path(true));
    s.statusline(&agent, "session/statusline-06.json", "2027-03-01T10:00:01Z");
    let out = s.doctor(&[], "2027-03-01T10:00:30Z");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains(&format!("session {RECORDED_SESSION}"))
            && text.contains("WARN  hooks        no hook event recorded")
            && text.contains("OK    status line  seen 29s ago"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// Issue 24 item 5: doctor says which doors reach the policy in each permission mode, and
/// plainly when none reaches it in the mode the live session reported. The session's mode
/// comes from the real hook door (its decision-log entry); the wiring from the settings
/// `hook install` writes.
#[test]
fn doctor_names_the_policy_doors_of_the_live_mode() {
    let sb = Sandbox::new();
    let project = sb.module("doors-proj");
    fs::create_dir_all(project.join(".git")).unwrap();
    let payload = serde_json::json!({
        "session_id": "d00r5-0000-4000-8000-000000000001",
        "cwd": project,
        "hook_event_name": "PermissionRequest",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test"},
    });
    let hook = sb
        .cmd()
        .args(["hook", "permission-request"])
        .current_dir(&project)
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(hook.status.code(), Some(0), "{hook:?}");
    let doors = |sb: &Sandbox| -> Value {
        let out = sb
            .cmd()
            .args(["doctor", "--format", "json"])
            .current_dir(&project)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "policy doors" && c["scope"] == "claude")
            .cloned()
            .unwrap_or_else(|| panic!("no policy doors check: {report:#}"))
    };
    // Nothing wired: in bypassPermissions no door reaches the policy, and doctor says so.
    let none = doors(&sb);
    assert_eq!(none["level"], "fail", "{none}");
    let detail = none["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("live mode bypassPermissions")
            && detail.contains("no door reaches the policy")
            && detail.contains("default: none"),
        "{detail}"
    );
    assert!(
        none["fix"].as_str().unwrap().contains("hook install"),
        "{none}"
    );
    // `hook install` wires the floor: PreToolUse reaches every mode.
    let install = sb
        .cmd()
        .args(["hook", "install"])
        .current_dir(&project)
        .output()
        .unwrap();
    assert_eq!(install.status.code(), Some(0), "{install:?}");
    let wired = doors(&sb);
    assert_eq!(wired["level"], "ok", "{wired}");
    let detail = wired["detail"].as_str().unwrap();
    assert!(
        detail.contains("live mode bypassPermissions")
            && detail.contains("): PreToolUse;")
            && detail.contains("default: PreToolUse, PermissionRequest;")
            && detail.contains("auto: PreToolUse;"),
        "{detail}"
    );
}

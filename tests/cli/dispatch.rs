//! Dispatch mode end to end (issue 15, item 1): each step typed with its arguments, into a
//! Claude Code stand-in idle at its own prompt (`--into agent`, the default with `--agent
//! claude`) or at a shell prompt as a command that returns (`--into shell`, `claude -p`). The
//! stand-in is examples/stand-in/claude (the README test's), run in a real tmux pane: it
//! draws Claude Code's input box, reads each prompt, and runs the step with
//! examples/fake-agent.sh, which writes the signal the real skill would.

use std::fs;
use std::path::{Path, PathBuf};

use crate::run::bin_dir;
use crate::run_tick::{status, task, tick_until};
use crate::tmuxfix::{new_session, repo, wait_for};
use crate::util::{Sandbox, one_stderr_line};

/// The steps of one whole loop (the fake agent asks for one fix), as typed.
const STEPS: [&str; 8] = [
    "plan TASK --generate",
    "check TASK --checkpoint post-plan",
    "exec TASK",
    "check TASK --checkpoint post-exec",
    "exec TASK --checkpoint post-exec",
    "check TASK --checkpoint post-exec",
    "merge TASK",
    "report TASK",
];

/// A session whose shell finds autoctl and the stand-in `claude` on its PATH; every prompt
/// the stand-in receives is logged to the returned file.
pub fn session(sb: &Sandbox, name: &str) -> (String, PathBuf) {
    session_with(sb, name, &[])
}

/// [`session`] with more `NAME=value` words in the shell's environment.
pub fn session_with(sb: &Sandbox, name: &str, extra: &[&str]) -> (String, PathBuf) {
    let log = sb.path(&format!("{name}-prompts.log"));
    let path = format!(
        "PATH={}:{}:{}",
        bin_dir().display(),
        repo("examples/stand-in").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = format!("HOME={}", sb.path("home").display());
    let state = format!("AUTOCTL_STATE_DIR={}", sb.path("state").display());
    let logged = format!("STAND_IN_LOG={}", log.display());
    let mut command = vec!["env", &path, &home, &state, &logged, "STAND_IN_DELAY=0.1"];
    command.extend_from_slice(extra);
    command.extend(["PS1=$ ", "bash", "--norc", "--noprofile"]);
    (new_session(sb, name, (200, 50), &command), log)
}

/// The prompts the stand-in received, with the task dir written as TASK.
pub fn prompts(log: &Path, task: &Path) -> Vec<String> {
    let task = task.canonicalize().unwrap();
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("prompt: "))
        .map(|p| p.replace(task.to_str().unwrap(), "TASK"))
        .collect()
}

#[test]
fn into_agent_types_each_step_with_its_arguments_at_the_idle_agent_prompt() {
    let sb = Sandbox::new();
    let task = task(&sb, "agent");
    let (pane, log) = session(&sb, "agent");
    // The default with --agent claude is --into agent; --launch starts Claude once.
    sb.cmd()
        .args(["run", "start", "--session", "agent", "--mode", "dispatch"])
        .args(["--launch", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    wait_for(&sb, &pane, "the agent's input box", |screen, _| {
        screen.contains("? for shortcuts")
    });
    let events = tick_until(&sb, "agent", |s| s["status"] != "running");
    let last = status(&sb, "agent");
    assert_eq!(last["status"], "finished", "{last}");
    let want: Vec<String> = STEPS.iter().map(|s| format!("/ai-cli-task {s}")).collect();
    assert_eq!(prompts(&log, &task), want, "typed once each, in order");
    let typed = events
        .iter()
        .filter(|e| e["decision"] == "dispatch")
        .count();
    assert_eq!(typed, 8);
    assert_eq!(last["iteration"], 8);
    // Started with Claude Code's own retry watchdog and compaction threshold (issue 28).
    let log_text = fs::read_to_string(&log).unwrap();
    assert!(
        log_text.contains("env: CLAUDE_CODE_RETRY_WATCHDOG=1 CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=70\n"),
        "{log_text}"
    );
    // The agent stays open at its prompt; the loop's files are cleaned up.
    assert!(!task.join(".auto-signal").exists());
    assert_eq!(crate::tmuxfix::foreground(&sb, &pane), "claude");
}

#[test]
fn into_shell_types_a_command_that_returns_to_the_shell() {
    let sb = Sandbox::new();
    let task = task(&sb, "shell");
    let (_pane, log) = session(&sb, "shell");
    // The default command for --into shell: claude -p with autoctl's hooks and its own
    // stream, written where the tick reads how the step ended (issue 28 item 3).
    sb.cmd()
        .args(["run", "start", "--session", "shell", "--mode", "dispatch"])
        .args(["--into", "shell", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let events = tick_until(&sb, "shell", |s| s["status"] != "running");
    assert_eq!(status(&sb, "shell")["status"], "finished");
    let want: Vec<String> = STEPS.iter().map(|s| format!("/ai-cli-task {s}")).collect();
    assert_eq!(prompts(&log, &task), want);
    let first = events.iter().find(|e| e["decision"] == "dispatch").unwrap();
    let send = first["did"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["effect"] == "send");
    let text = send.unwrap()["keys"][0]["text"].as_str().unwrap();
    let settings = sb.path("state").join("claude/step-settings.json");
    assert!(
        text.starts_with(&format!(
            "claude -p --settings {} --output-format stream-json --verbose \"/ai-cli-task plan /",
            settings.display()
        )) && text.contains(" --generate\" > ")
            && text.ends_with("/1.jsonl"),
        "{text}"
    );
    // The settings the steps ran with hold autoctl's hooks, by this binary's path.
    let log_text = fs::read_to_string(&log).unwrap();
    assert!(
        log_text.contains(&format!("settings: {}\n", settings.display())),
        "{log_text}"
    );
    let hooks = fs::read_to_string(&settings).unwrap();
    assert!(
        hooks.contains("hook stop") && hooks.contains("hook permission-request"),
        "{hooks}"
    );
}

#[test]
fn into_shell_a_step_that_failed_on_a_401_goes_to_a_person_and_is_not_typed_again() {
    let sb = Sandbox::new();
    let task = task(&sb, "denied");
    // Claude Code 2.1.332's result line for a 401 (against the fake server, a bad key).
    let result = r#"STAND_IN_RESULT={"type":"result","subtype":"success","is_error":true,"num_turns":1,"api_error_status":401,"api_error_type":"authentication_error","result":"Invalid API key · Fix external API key","terminal_reason":"api_error"}"#;
    let (_pane, log) = session_with(&sb, "denied", &[result]);
    sb.cmd()
        .args(["run", "start", "--session", "denied", "--mode", "dispatch"])
        .args(["--into", "shell", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    let events = tick_until(&sb, "denied", |s| !s["needs_person"].is_null());
    let last = events.last().unwrap();
    assert_eq!(last["decision"], "escalate", "{last}");
    let why = last["reasons"].to_string();
    assert!(
        why.contains("401 authentication_error") && why.contains("cannot clear"),
        "{why}"
    );
    // More ticks: still the person's, typed once, no resume planned (the unit test in
    // src/supervise/tick/tests.rs runs the minutes).
    for _ in 0..3 {
        let events = crate::run_tick::tick(&sb, &["--session", "denied"]);
        assert!(
            events.iter().all(|e| e["decision"] != "dispatch"),
            "{events:?}"
        );
    }
    assert_eq!(status(&sb, "denied")["status"], "running");
    let typed = fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(typed.matches("settings: ").count(), 1, "{typed}");
}

#[test]
fn dispatch_options_that_cannot_work_are_refused_with_one_line() {
    let sb = Sandbox::new();
    let task = task(&sb, "refuse");
    let cases: [(&[&str], &str); 5] = [
        (
            &["--mode", "dispatch", "--into", "shell", "--launch"],
            "--launch is for observe mode and --into agent",
        ),
        // Gemini's and Codex's steps at a shell are not Claude Code's `claude -p`.
        (
            &["--mode", "dispatch", "--agent", "gemini"],
            "--agent gemini at a shell needs --command",
        ),
        (
            &["--mode", "dispatch", "--agent", "codex", "--into", "shell"],
            "--agent codex at a shell needs --command",
        ),
        (&["--into", "agent"], "--into is for dispatch mode"),
        (
            &["--mode", "dispatch", "--command", "x {bogus}"],
            "known placeholders: {next}, {checkpoint}, {task}, {iteration}, {args}",
        ),
    ];
    for (args, want) in cases {
        let output = sb
            .cmd()
            .args(["run", "start", "--session", "refuse"])
            .args(args)
            .arg("--task")
            .arg(&task)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let line = one_stderr_line(&output);
        assert!(line.contains(want), "{args:?}: {line}");
    }
}

#[test]
fn hook_install_commands_ships_the_slash_command_the_steps_need() {
    let sb = Sandbox::new();
    let project = sb.module("project");
    let installed = project.join(".claude/commands/ai-cli-task.md");
    let run = |args: &[&str]| {
        let output = sb
            .cmd()
            .args(["hook", "install", "--commands", "--project"])
            .arg(&project)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert!(run(&[]).contains(&format!("wrote {}", installed.display())));
    assert_eq!(
        fs::read_to_string(&installed).unwrap(),
        fs::read_to_string(repo("examples/claude/commands/ai-cli-task.md")).unwrap()
    );
    assert!(run(&[]).contains(&format!("{}: up to date", installed.display())));
    // A command of the user's own under that name is never replaced.
    fs::write(&installed, "my own /ai-cli-task\n").unwrap();
    let output = sb
        .cmd()
        .args(["hook", "install", "--commands", "--project"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("autoctl did not write it"));
    assert_eq!(
        fs::read_to_string(&installed).unwrap(),
        "my own /ai-cli-task\n"
    );
}

/// Issue 29 (found live at load 20): a tick 0.7 s after a step was typed into Claude Code
/// saw its input box still empty — the agent had not shown the keys yet — decided they never
/// reached the pane and typed the step a second time. Here the stand-in, with the terminal's
/// echo off (Claude Code draws what it reads itself), is held after reading the line
/// (`STAND_IN_HOLD`), as a loaded machine holds Claude Code: the box stays empty. A tick 0.7 s
/// after the typing must type nothing; once the agent goes on it has the step once.
#[test]
fn into_agent_a_tick_before_the_agent_showed_its_step_types_nothing_again() {
    let sb = Sandbox::new();
    let task = task(&sb, "held");
    let hold = sb.path("hold");
    let (pane, log) = session_with(&sb, "held", &[&format!("STAND_IN_HOLD={}", hold.display())]);
    crate::tmuxfix::type_line(&sb, &pane, "stty -echo; exec claude");
    wait_for(&sb, &pane, "the agent's input box", |screen, command| {
        screen.contains("? for shortcuts") && command == "claude"
    });
    let at = |ms: u32| {
        let (minute, second) = (ms / 60_000, ms / 1000 % 60);
        format!("2027-03-01T10:{minute:02}:{second:02}.{:03}Z", ms % 1000)
    };
    let tick_at = |ms: u32| {
        let out = sb
            .cmd()
            .env("AUTOCTL_NOW", at(ms))
            .args(["run", "tick", "--session", "held"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        crate::util::json_lines(&out)
    };
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args(["run", "start", "--session", "held", "--mode", "dispatch"])
        .args(["--into", "agent", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    fs::write(&hold, "").unwrap();
    let typed = tick_at(0);
    assert_eq!(typed[0]["decision"], "dispatch", "{typed:?}");
    let screen = crate::tmuxfix::capture(&sb, &pane);
    assert!(
        !screen.contains("/ai-cli-task"),
        "the box is still empty: {screen}"
    );
    let early = tick_at(700);
    fs::remove_file(&hold).unwrap();
    assert_eq!(early[0]["decision"], "wait", "{early:?}");
    assert!(
        early[0]["did"].as_array().is_none_or(|did| did.is_empty()),
        "{early:?}"
    );
    // The agent goes on with what was typed: the plan step, once.
    let plan = "/ai-cli-task plan TASK --generate";
    wait_for(&sb, &pane, "the step read by the agent", |_, _| {
        prompts(&log, &task).iter().any(|p| p == plan)
    });
    tick_at(60_000);
    let read = prompts(&log, &task);
    assert_eq!(
        read.iter().filter(|p| *p == plan).count(),
        1,
        "typed once: {read:?}"
    );
}

/// Issue 25: Claude Code draws its idle input box before it has started (its SessionStart
/// hooks run after), and a step typed into it then was left half-typed in a live run. The
/// stand-in here draws the box and loses what is typed until the test lets it start
/// (`STAND_IN_START`); its project wires autoctl's SessionStart hook. The first dispatch must
/// wait for the hook's record, not the box, and so reach the agent the first time: typed
/// once, never lost, never typed again. (Before the fix the tick typed into the box at once,
/// the keys were lost, and the agent never got the step.)
#[test]
fn into_agent_the_first_step_waits_for_the_agents_session_start_not_its_input_box() {
    let sb = Sandbox::new();
    let task = task(&sb, "boot");
    let hold = sb.path("boot.hold");
    fs::write(&hold, "").unwrap();
    sb.write(
        ".claude/settings.json",
        r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"autoctl hook event"}]}]}}"#,
    );
    // One clock for the supervisor and the agent's hooks.
    let at = |ms: u32| format!("2027-03-01T10:00:{:02}.{:03}Z", ms / 1000, ms % 1000);
    let start = format!("STAND_IN_START={}", hold.display());
    let clock = format!("AUTOCTL_NOW={}", at(0));
    let (pane, log) = session_with(&sb, "boot", &[&start, &clock]);
    crate::tmuxfix::type_line(
        &sb,
        &pane,
        &format!("cd {} && stty -echo", sb.root().display()),
    );
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args(["run", "start", "--session", "boot", "--mode", "dispatch"])
        .args(["--into", "agent", "--launch", "--task"])
        .arg(&task)
        .assert()
        .code(0);
    wait_for(&sb, &pane, "the agent's input box", |screen, command| {
        screen.contains("? for shortcuts") && command == "claude"
    });
    let tick_at = |ms: u32| {
        let out = sb
            .cmd()
            .env("AUTOCTL_NOW", at(ms))
            .args(["run", "tick", "--session", "boot"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        crate::util::json_lines(&out)
    };
    let early = tick_at(1000);
    assert_eq!(early[0]["decision"], "wait", "{early:?}");
    assert!(
        early[0]["reasons"].to_string().contains("SessionStart"),
        "{early:?}"
    );
    // The agent starts: what was typed before is lost, then its SessionStart hook fires.
    fs::remove_file(&hold).unwrap();
    wait_for(&sb, &pane, "the agent's SessionStart", |_, _| {
        fs::read_to_string(&log).is_ok_and(|l| l.lines().any(|l| l == "started"))
    });
    let typed = tick_at(2000);
    assert_eq!(typed[0]["decision"], "dispatch", "{typed:?}");
    let plan = "/ai-cli-task plan TASK --generate";
    wait_for(&sb, &pane, "the step read by the agent", |_, _| {
        prompts(&log, &task).iter().any(|p| p == plan)
    });
    let text = fs::read_to_string(&log).unwrap();
    assert!(!text.contains("lost: "), "nothing typed was lost: {text}");
    assert_eq!(
        prompts(&log, &task),
        [plan.to_string()],
        "typed once, before any other step"
    );
}

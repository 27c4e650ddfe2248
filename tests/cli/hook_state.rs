//! `hook event`, `statusline` and `hook install`, driven with the real payloads recorded from
//! Claude Code 2.1.332 (`tests/fixtures/hook/claude-code/`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::{Sandbox, hook_records, is_root, one_stderr_line, stdout, with_stdin};

const SOCKET: &str = "/tmp/tmux-0/autoctl-test";

fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook/claude-code")
        .join(name)
}

/// The recorded payloads of one scenario, in the order the hooks ran (status lines left out).
fn events_of(scenario: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(recorded(scenario))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".json") && !name.starts_with("statusline")
        })
        .collect();
    files.sort();
    files
}

/// Run autoctl with `stdin`, in the pane `pane` of the test socket (None: outside tmux).
fn run_in(sb: &Sandbox, pane: Option<&str>, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = sb.std_cmd();
    if let Some(pane) = pane {
        cmd.env("TMUX", format!("{SOCKET},4242,0"))
            .env("TMUX_PANE", pane);
    }
    with_stdin(cmd, args, stdin)
}

fn event(sb: &Sandbox, pane: Option<&str>, file: &Path) -> Output {
    run_in(sb, pane, &["hook", "event"], &fs::read(file).unwrap())
}

/// The one record of a kind in the sandbox's state dir: `.status.json` for the status line's,
/// `.json` for the hooks' (as autoctl reads them: [`hook_records`]).
fn only_record(sb: &Sandbox, suffix: &str) -> Value {
    let mut records = hook_records(&sb.path("state/hooks"), suffix == ".status.json");
    assert_eq!(records.len(), 1, "{records:?}");
    records.remove(0)
}

#[test]
fn every_recorded_event_is_recorded_silently() {
    for scenario in [
        "session",
        "permission",
        "stop-loop",
        "quota-5h",
        "quota-7d",
        "prompt-too-long",
        "overloaded",
        "big-context",
        "subscription",
        "reference",
    ] {
        let sb = Sandbox::new();
        for file in events_of(scenario) {
            let output = event(&sb, Some("%7"), &file);
            assert_eq!(output.status.code(), Some(0), "{file:?}");
            assert!(
                output.stdout.is_empty(),
                "hook event prints nothing: {file:?}"
            );
            assert!(output.stderr.is_empty(), "{file:?}: {output:?}");
        }
        only_record(&sb, ".json");
    }
}

#[test]
fn a_recorded_session_ends_ended_with_its_history() {
    let sb = Sandbox::new();
    let mut states = Vec::new();
    for file in events_of("session") {
        event(&sb, Some("%3"), &file);
        let record = only_record(&sb, ".json");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        states.push((name, record["state"].as_str().unwrap().to_string()));
    }
    let state_after = |prefix: &str| {
        states
            .iter()
            .find(|(name, _)| name.starts_with(prefix))
            .map(|(_, s)| s.as_str())
            .unwrap()
    };
    assert_eq!(state_after("02-SessionStart-startup"), "idle");
    assert_eq!(state_after("03-UserPromptSubmit"), "working");
    assert_eq!(state_after("07-Stop"), "idle");
    assert_eq!(state_after("11-PostToolUseFailure"), "working");
    assert_eq!(state_after("14-PreCompact"), "compacting");
    assert_eq!(state_after("18-PostCompact-manual"), "idle");
    assert_eq!(
        state_after("20-SessionEnd-clear"),
        "idle",
        "a /clear is not an ended agent"
    );
    assert_eq!(
        state_after("23-Notification-idle_prompt"),
        "waiting-for-input"
    );
    assert_eq!(state_after("26-SessionEnd"), "ended");
    let record = only_record(&sb, ".json");
    assert_eq!(record["tmux_pane"], "%3");
    assert_eq!(record["tmux_socket"], SOCKET);
    assert_eq!(
        record["previous_session_id"], "cb56d490-f6ed-44ad-86ba-d514879660f6",
        "the /clear rebound the pane to the new session"
    );
    assert_eq!(record["session_id"], "6ebeb375-d797-4c9e-af4f-b22fc9f5bf2c");
    for kind in [
        "SessionStart",
        "Stop",
        "PreCompact",
        "Notification",
        "PostToolUseFailure",
    ] {
        assert!(record["events"][kind].is_string(), "{kind}: {record}");
    }
    assert_eq!(record["stops"], 2);
    assert_eq!(record["message"]["text"], "That directory does not exist.");
}

#[test]
fn a_permission_prompt_is_waiting_for_permission_with_the_tool() {
    let sb = Sandbox::new();
    for file in events_of("permission")
        .iter()
        .filter(|f| !f.to_string_lossy().contains("SessionEnd"))
    {
        event(&sb, Some("%1"), file);
    }
    let record = only_record(&sb, ".json");
    assert_eq!(record["state"], "waiting-for-permission");
    assert_eq!(record["tool"], "Bash");
    assert_eq!(record["detail"], "permission_prompt");
}

#[test]
fn stop_loop_messages_are_the_models_and_all_differ() {
    let sb = Sandbox::new();
    let mut texts = Vec::new();
    for file in events_of("stop-loop") {
        event(&sb, None, &file);
        if file.to_string_lossy().contains("-Stop") {
            let record = only_record(&sb, ".json");
            assert_eq!(record["repeats"], 1, "each message is new: {record}");
            texts.push(record["message"]["text"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(texts.len(), 5);
    assert!(texts.iter().all(|t| !t.contains("stop hook")));
    // Outside tmux the record is keyed by the session id.
    assert!(fs::read_dir(sb.path("state/hooks")).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("session-")
    }));
}

#[test]
fn stop_failure_is_failed_with_the_error_and_the_banner_apart() {
    let sb = Sandbox::new();
    let file = recorded("quota-5h/07-StopFailure-rate_limit.json");
    event(&sb, Some("%2"), &file);
    let record = only_record(&sb, ".json");
    assert_eq!(record["state"], "failed");
    assert_eq!(record["error"], "rate_limit");
    assert!(
        record["error_message"]
            .as_str()
            .unwrap()
            .contains("resets 12:11pm")
    );
    assert!(
        record.get("message").is_none(),
        "a banner is not an agent message"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_0() {
    let sb = Sandbox::new();
    let huge = vec![b' '; 17 * 1024 * 1024];
    for (input, words) in [
        (&b""[..], "empty"),
        (b"not json", "not JSON"),
        (b"[1]", "not an object"),
        (br#"{"session_id":7}"#, "not a hook input"),
        (b"\xff\xfe", "not JSON"),
        (b"{}", "no $TMUX_PANE"),
        (&huge[..], "larger than"),
    ] {
        let output = run_in(&sb, None, &["hook", "event"], input);
        assert_eq!(output.status.code(), Some(0), "{words}");
        assert!(output.stdout.is_empty());
        let line = one_stderr_line(&output);
        assert!(line.contains(words), "{words}: {line}");
    }
    // A usage error is exit 0 too: Claude Code reads exit 2 as "block".
    for args in [
        &["hook", "event", "--bogus"][..],
        &["hook", "nope"],
        &["statusline", "-x"],
    ] {
        let output = run_in(&sb, None, args, b"{}");
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        one_stderr_line(&output);
    }
    let output = run_in(&sb, None, &["hook", "install", "--bogus"], b"");
    assert_eq!(output.status.code(), Some(2), "a person runs hook install");
}

#[test]
fn an_unwritable_state_dir_is_one_line_and_exit_0() {
    let sb = Sandbox::new();
    // The state "dir" is a file: nothing can be created under it, even by root.
    let file = sb.write("state-file", "x");
    let payload = fs::read(recorded("session/03-UserPromptSubmit.json")).unwrap();
    let mut cmd = sb.std_cmd();
    cmd.env("AUTOCTL_STATE_DIR", &file)
        .env("TMUX", format!("{SOCKET},1,0"))
        .env("TMUX_PANE", "%1");
    let output = with_stdin(cmd, &["hook", "event"], &payload);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    assert!(one_stderr_line(&output).contains("cannot"));
    if is_root() {
        // And a read-only state dir, as an unprivileged user.
        let ro = sb.path("ro");
        fs::create_dir(&ro).unwrap();
        let mut cmd = sb.unprivileged_cmd();
        cmd.env("AUTOCTL_STATE_DIR", &ro);
        let output = with_stdin(cmd, &["hook", "event"], &payload);
        assert_eq!(output.status.code(), Some(0));
        assert!(one_stderr_line(&output).contains("cannot"));
    }
}

#[test]
fn a_symlink_planted_at_the_journal_is_never_written_through() {
    let sb = Sandbox::new();
    let file = recorded("session/03-UserPromptSubmit.json");
    assert!(event(&sb, Some("%5"), &file).stderr.is_empty());
    let dir = sb.path("state/hooks");
    let journal = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .expect("the first change is appended to the journal");
    fs::remove_file(&journal).unwrap();
    let victim = sb.write("victim.txt", "precious\n");
    std::os::unix::fs::symlink(&victim, &journal).unwrap();
    let output = event(&sb, Some("%5"), &recorded("session/07-Stop.json"));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!journal.is_symlink());
    assert_eq!(
        only_record(&sb, ".json")["state"],
        "idle",
        "the Stop was kept"
    );
}

#[test]
fn many_events_keep_every_change_across_compactions() {
    let sb = Sandbox::new();
    // 90 turns: far more changes than one journal holds before it is compacted.
    let prompt = recorded("session/03-UserPromptSubmit.json");
    let stop = recorded("session/07-Stop.json");
    for turn in 1..=90 {
        event(&sb, Some("%6"), &prompt);
        let output = event(&sb, Some("%6"), &stop);
        assert!(output.stderr.is_empty(), "{output:?}");
        if turn % 30 == 0 {
            let record = only_record(&sb, ".json");
            assert_eq!(record["stops"], turn, "{record}");
            assert_eq!(record["seq"], 2 * turn, "{record}");
        }
    }
}

#[test]
fn a_clear_rebinds_the_stop_hook_loop_to_the_new_session() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    sb.cmd()
        .args(["loop", "init", "--prompt", "go on", "--dir"])
        .arg(&project)
        .assert()
        .code(0);
    let old = "cb56d490-f6ed-44ad-86ba-d514879660f6";
    let stop = format!(
        r#"{{"session_id":"{old}","cwd":"{}","hook_event_name":"Stop","stop_hook_active":false,
        "last_assistant_message":"Step one done."}}"#,
        project.display()
    );
    let mut cmd = sb.std_cmd();
    cmd.env("CLAUDE_PROJECT_DIR", &project)
        .env("TMUX", format!("{SOCKET},1,0"))
        .env("TMUX_PANE", "%9");
    let out = run_with(cmd, &["hook", "stop"], stop.as_bytes());
    assert!(stdout(&out).contains("\"block\""), "{out:?}");
    let record = only_record(&sb, ".json");
    assert_eq!(record["state"], "working", "the loop continued the session");
    assert_eq!(record["continued"], 1);
    let loop_state = |p: &Path| -> Value {
        serde_json::from_slice(&fs::read(p.join(".autoctl/loop-state.json")).unwrap()).unwrap()
    };
    assert_eq!(loop_state(&project)["session_id"], old);
    for name in [
        "session/20-SessionEnd-clear.json",
        "session/21-SessionStart-clear.json",
    ] {
        let text = fs::read_to_string(recorded(name))
            .unwrap()
            .replace("/home/dev/proj", &project.display().to_string());
        let mut cmd = sb.std_cmd();
        cmd.env("CLAUDE_PROJECT_DIR", &project)
            .env("TMUX", format!("{SOCKET},1,0"))
            .env("TMUX_PANE", "%9");
        let out = run_with(cmd, &["hook", "event"], text.as_bytes());
        assert!(out.stderr.is_empty(), "{out:?}");
    }
    assert_eq!(
        loop_state(&project)["session_id"],
        "6ebeb375-d797-4c9e-af4f-b22fc9f5bf2c"
    );
    assert!(
        !project.join(".autoctl/loop.lock").exists(),
        "the old session's heartbeat lock is released"
    );
}

fn run_with(cmd: std::process::Command, args: &[&str], stdin: &[u8]) -> Output {
    with_stdin(cmd, args, stdin)
}

#[test]
fn the_status_line_prints_one_line_and_records_the_windows() {
    let sb = Sandbox::new();
    let input = fs::read(recorded("reference/statusline-subscription.json")).unwrap();
    let mut cmd = sb.std_cmd();
    // The recording's five-hour window resets 2026-11-26 10:42 UTC: the clock is the morning
    // of that day, whatever day the suite runs.
    cmd.env("TZ", "UTC")
        .env("AUTOCTL_NOW", "2026-11-26T08:00:00Z")
        .env("TMUX", format!("{SOCKET},1,0"))
        .env("TMUX_PANE", "%4");
    let out = run_with(cmd, &["statusline"], &input);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{out:?}");
    assert_eq!(
        stdout(&out),
        "Sonnet 5.5 · ctx 0% · 5h 42% ↻10:42 · 7d 17% ↻Mon 23:52\n"
    );
    let record = only_record(&sb, ".status.json");
    assert_eq!(
        record["rate_limits"]["five_hour"]["resets_at"],
        1_795_689_758
    );
    assert_eq!(record["context_window"]["context_window_size"], 1_000_000);
    assert_eq!(record["model"], "Sonnet 5.5");
    // Unchanged input: the record is not rewritten (its first write is its journal's line).
    let path = fs::read_dir(sb.path("state/hooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".status.log"))
        .unwrap();
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut cmd = sb.std_cmd();
    cmd.env("AUTOCTL_NOW", "2026-11-26T08:00:01Z")
        .env("TMUX", format!("{SOCKET},1,0"))
        .env("TMUX_PANE", "%4");
    run_with(cmd, &["statusline"], &input);
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);

    // An API-key session has no windows; the line shows what there is.
    let api = fs::read(recorded("session/statusline-01.json")).unwrap();
    let out = run_with(sb.std_cmd(), &["statusline"], &api);
    assert_eq!(stdout(&out), "Opus 5.5\n");
}

/// A reset already past is shown as past, never as the same weekday next week: the day after
/// the recording's five-hour reset (2026-11-26 10:42 UTC) c968843 printed `↻Thu 10:42`.
#[test]
fn a_status_line_shows_a_reset_in_the_past_as_passed() {
    let sb = Sandbox::new();
    let input = fs::read(recorded("reference/statusline-subscription.json")).unwrap();
    let mut cmd = sb.std_cmd();
    cmd.env("TZ", "UTC")
        .env("AUTOCTL_NOW", "2026-11-27T08:00:00Z")
        .env("TMUX", format!("{SOCKET},1,0"))
        .env("TMUX_PANE", "%4");
    let out = run_with(cmd, &["statusline"], &input);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout(&out),
        "Sonnet 5.5 · ctx 0% · 5h 42% ↻passed · 7d 17% ↻Mon 23:52\n"
    );
}

#[test]
fn a_wrapped_status_line_comes_first_on_the_same_line() {
    let sb = Sandbox::new();
    let input = fs::read(recorded("session/statusline-01.json")).unwrap();
    let out = run_with(
        sb.std_cmd(),
        &[
            "statusline",
            "--then",
            "jq -r .model.display_name; echo second line",
        ],
        &input,
    );
    assert_eq!(stdout(&out), "Opus 5.5 · Opus 5.5\n");
    // A foreign command that fails or prints nothing leaves autoctl's part.
    let out = run_with(sb.std_cmd(), &["statusline", "--then", "exit 3"], &input);
    assert_eq!(stdout(&out), "Opus 5.5\n");
    assert_eq!(out.status.code(), Some(0));
    // Garbage in: nothing of ours, one line on stderr, still exit 0.
    let out = run_with(
        sb.std_cmd(),
        &["statusline", "--then", "echo theirs"],
        b"garbage",
    );
    assert_eq!(stdout(&out), "theirs\n");
    assert_eq!(out.status.code(), Some(0));
    one_stderr_line(&out);
}

fn install(sb: &Sandbox, project: &Path, extra: &[&str]) -> Output {
    sb.cmd()
        .args(["hook", "install", "--autoctl", "autoctl", "--project"])
        .arg(project)
        .args(extra)
        .output()
        .unwrap()
}

const USER_SETTINGS: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/audit.sh"
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/bin/line.sh"
  }
}
"#;

#[test]
fn install_merges_idempotently_and_uninstall_gives_everything_back() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let settings = sb.write("proj/.claude/settings.json", USER_SETTINGS);

    let dry = install(&sb, &project, &["--dry-run"]);
    assert_eq!(dry.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(&settings).unwrap(),
        USER_SETTINGS,
        "dry run"
    );
    let diff = stdout(&dry);
    assert!(diff.starts_with("--- "), "{diff}");
    assert!(
        diff.contains("\"command\": \"autoctl hook stop\","),
        "{diff}"
    );
    assert!(
        diff.contains("-    \"command\": \"~/bin/line.sh\""),
        "{diff}"
    );

    let out = install(&sb, &project, &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let once = fs::read_to_string(&settings).unwrap();
    assert!(stdout(&out).contains("wrapped statusLine"));
    let value: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(value["permissions"]["allow"][0], "Bash(npm test)");
    assert_eq!(
        value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "~/bin/audit.sh"
    );
    // PreToolUse, every tool, goes to the policy's floor (which also records the state).
    assert_eq!(value["hooks"]["PreToolUse"][1]["matcher"], "*");
    assert_eq!(
        value["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
        "autoctl hook pre-tool-use"
    );
    assert_eq!(
        value["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "autoctl hook event"
    );
    // PermissionRequest goes to `hook permission-request`, once this binary has it.
    let has = sb
        .cmd()
        .args(["hook", "permission-request", "--help"])
        .output()
        .unwrap()
        .status
        .success()
        && !stdout(
            &sb.cmd()
                .args(["hook", "permission-request", "--help"])
                .output()
                .unwrap(),
        )
        .is_empty();
    if has {
        assert_eq!(
            value["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
            "autoctl hook permission-request"
        );
    } else {
        assert!(value["hooks"].get("PermissionRequest").is_none());
    }
    assert_eq!(
        value["statusLine"]["command"],
        "autoctl statusline --then '~/bin/line.sh'"
    );

    let again = install(&sb, &project, &[]);
    assert_eq!(again.status.code(), Some(0));
    assert!(stdout(&again).contains("up to date"));
    assert_eq!(
        fs::read_to_string(&settings).unwrap(),
        once,
        "a second run changes no byte"
    );
    assert_eq!(stdout(&install(&sb, &project, &["--dry-run"])), "");

    let out = install(&sb, &project, &["--uninstall"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
}

#[test]
fn install_refuses_what_it_cannot_change_safely() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    for bad in [
        "{\"hooks\": [",
        "[]",
        r#"{"a":1,"a":2}"#,
        r#"{"hooks":{"Stop":"x"}}"#,
    ] {
        let settings = sb.write("proj/.claude/settings.json", bad);
        let out = install(&sb, &project, &[]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(one_stderr_line(&out).contains("left untouched"), "{bad}");
        assert_eq!(fs::read_to_string(&settings).unwrap(), bad);
    }
    // A symlinked settings file (a dotfiles repo) is not replaced by a copy.
    let target = sb.write("dotfiles/settings.json", "{}");
    let link = sb.path("proj/.claude/settings.json");
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = install(&sb, &project, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("symlink"));
    assert_eq!(fs::read_to_string(&target).unwrap(), "{}");
    // --user needs --yes.
    let out = sb
        .cmd()
        .args(["hook", "install", "--user"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("--yes"));
    assert!(!sb.path("home/.claude/settings.json").exists());
    let out = sb
        .cmd()
        .args(["hook", "install", "--user", "--yes", "--autoctl", "autoctl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(sb.path("home/.claude/settings.json").exists());
}

#[test]
fn a_fresh_project_gets_a_settings_file() {
    let sb = Sandbox::new();
    let project = sb.module("fresh");
    let out = sb
        .cmd()
        .args(["hook", "install", "--project"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    // Not on PATH in the tests: the hooks name this binary by its absolute path.
    let bin = fs::canonicalize(crate::util::bin()).unwrap();
    assert!(
        text.contains(&format!("{} hook stop", bin.display())),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
}

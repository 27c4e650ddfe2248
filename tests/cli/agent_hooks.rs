//! Codex CLI and Gemini CLI through their own hooks: `hook event`, `hook stop`, `hook
//! permission-request` and `hook install --agent`, driven with the payloads recorded from the
//! real Codex 0.171 and Gemini 0.61 (`tests/fixtures/hook/codex/`, `tests/fixtures/hook/gemini/`,
//! recorded by `tests/fixtures/panes/capture-tools/record_agent_hooks.py`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::{Sandbox, hook_records, one_stderr_line, stdout, with_stdin};

const SOCKET: &str = "/tmp/tmux-0/autoctl-test";

fn recorded(agent: &str, scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook")
        .join(agent)
        .join(scenario)
}

/// The recorded payloads of one scenario, in the order the hooks ran.
fn events_of(agent: &str, scenario: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(recorded(agent, scenario))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The one recorded payload of a scenario whose file name contains `part`.
fn payload(agent: &str, scenario: &str, part: &str) -> Vec<u8> {
    let files: Vec<PathBuf> = events_of(agent, scenario)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(part))
        .collect();
    assert_eq!(files.len(), 1, "{agent}/{scenario}/*{part}*: {files:?}");
    fs::read(&files[0]).unwrap()
}

/// The payload with the recorded project directory replaced by `project`.
fn in_project(bytes: &[u8], project: &Path) -> Vec<u8> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .replace("/home/dev/proj", &project.display().to_string())
        .into_bytes()
}

/// Run autoctl with `stdin` in the pane `%7` of the test socket, as the agent runs its hooks.
fn run(sb: &Sandbox, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = sb.std_cmd();
    cmd.env("TMUX", format!("{SOCKET},4242,0"))
        .env("TMUX_PANE", "%7");
    with_stdin(cmd, args, stdin)
}

fn only_record(sb: &Sandbox) -> Value {
    let mut records = hook_records(&sb.path("state/hooks"), false);
    assert_eq!(records.len(), 1, "{records:?}");
    records.remove(0)
}

/// Every payload of a recorded session through `hook event`, checking the state after each.
fn replay(sb: &Sandbox, agent: &str, scenario: &str, flag: bool) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    for file in events_of(agent, scenario) {
        let mut args = vec!["hook", "event"];
        if flag {
            args.extend(["--agent", agent]);
        }
        let out = run(sb, &args, &fs::read(&file).unwrap());
        assert_eq!(out.status.code(), Some(0), "{file:?}");
        assert!(out.stdout.is_empty(), "hook event prints nothing: {file:?}");
        assert!(out.stderr.is_empty(), "{file:?}: {out:?}");
        let record = only_record(sb);
        assert_eq!(record["agent"], agent, "{file:?}");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        seen.push((name, record["state"].as_str().unwrap().to_string()));
    }
    seen
}

fn state_after<'a>(seen: &'a [(String, String)], prefix: &str) -> &'a str {
    &seen
        .iter()
        .find(|(name, _)| name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in {seen:?}"))
        .1
}

#[test]
fn a_recorded_codex_session_is_read_into_the_typed_state() {
    for flag in [true, false] {
        let sb = Sandbox::new();
        let seen = replay(&sb, "codex", "session", flag);
        // SessionStart, a turn with a sandboxed command, a patch, /compact, an interrupted
        // turn, /exit — as the recording's index.tsv lists them.
        assert_eq!(state_after(&seen, "01-"), "idle");
        assert_eq!(state_after(&seen, "02-"), "working");
        assert_eq!(state_after(&seen, "03-PreToolUse"), "working");
        assert_eq!(state_after(&seen, "05-Stop"), "idle");
        assert_eq!(state_after(&seen, "09-PreCompact"), "compacting");
        assert_eq!(state_after(&seen, "10-PostCompact"), "idle");
        assert_eq!(state_after(&seen, "12-UserPromptSubmit"), "working");
        assert_eq!(
            state_after(&seen, "13-Interrupt"),
            "idle",
            "Esc ended the turn"
        );
        assert_eq!(state_after(&seen, "14-SessionEnd"), "ended");
        let record = only_record(&sb);
        assert_eq!(record["compactions"], 1);
        assert!(
            record.get("transcript_path").is_none(),
            "a Codex rollout is not a Claude Code transcript: {record}"
        );
        assert_eq!(record["key"], format!("pane:%7@{SOCKET}"));
    }
}

#[test]
fn a_recorded_gemini_session_is_read_into_the_typed_state() {
    for flag in [true, false] {
        let sb = Sandbox::new();
        let seen = replay(&sb, "gemini", "session", flag);
        let record = only_record(&sb);
        // BeforeAgent is a prompt, BeforeTool a tool, AfterAgent the turn's end, the
        // ToolPermission notification a box waiting for a person.
        for (name, state) in &seen {
            let expected = if name.contains("BeforeAgent") || name.contains("BeforeTool") {
                Some("working")
            } else if name.contains("AfterAgent") {
                Some("idle")
            } else if name.contains("Notification-ToolPermission") {
                Some("waiting-for-permission")
            } else {
                None
            };
            if let Some(expected) = expected {
                assert_eq!(state, expected, "{name}: {seen:?}");
            }
        }
        // PreCompress `auto` fires before every context check; only /compress counts.
        let manual = seen
            .iter()
            .filter(|(n, _)| n.contains("PreCompress-manual"))
            .count();
        assert_eq!(record["compactions"], manual as u64, "{seen:?}");
        assert!(
            seen.iter().any(|(n, _)| n.contains("PreCompress-auto")),
            "the recording has automatic checks: {seen:?}"
        );
        assert_eq!(record["state"], "ended");
        assert!(record["message"]["text"].as_str().is_some(), "{record}");
    }
}

#[test]
fn codex_and_gemini_stop_hook_loops_go_on_and_end() {
    for (agent, stop) in [("codex", "Stop"), ("gemini", "AfterAgent")] {
        let sb = Sandbox::new();
        let project = sb.module("proj");
        sb.cmd()
            .args([
                "loop",
                "init",
                "--prompt",
                "Do the next step.",
                "--max-iterations",
                "2",
                "--dir",
            ])
            .arg(&project)
            .assert()
            .code(0);
        let first = in_project(&payload_first(agent, stop), &project);
        let mut cmd = sb.std_cmd();
        cmd.current_dir(&project);
        let out = with_stdin(cmd, &["hook", "stop", "--agent", agent], &first);
        assert_eq!(out.status.code(), Some(0), "{agent}: {out:?}");
        let answer: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        assert_eq!(answer["decision"], "block", "{agent}: {answer}");
        assert!(
            answer["reason"]
                .as_str()
                .unwrap()
                .starts_with("Do the next step."),
            "{answer}"
        );
        let out = with_stdin(sb.std_cmd(), &["hook", "stop", "--agent", agent], &first);
        let answer: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        assert!(
            answer.get("decision").is_none(),
            "the limit ends it: {answer}"
        );
        assert!(
            answer["systemMessage"]
                .as_str()
                .unwrap()
                .contains("iteration"),
            "{answer}"
        );
    }
}

/// The first recorded Stop of a loop scenario: Codex's `Stop`, Gemini's `AfterAgent`.
fn payload_first(agent: &str, event: &str) -> Vec<u8> {
    let file = events_of(agent, "stop-loop")
        .into_iter()
        .find(|p| p.file_name().unwrap().to_string_lossy().contains(event))
        .unwrap();
    fs::read(file).unwrap()
}

#[test]
fn codex_asks_permission_in_claude_codes_shape_and_gets_the_policys_answer() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    // The recorded request: `npm test` leaving the sandbox. A runner: allowed.
    let request = in_project(
        &payload("codex", "permission", "PermissionRequest"),
        &project,
    );
    let out = run(
        &sb,
        &["hook", "permission-request", "--agent", "codex"],
        &request,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}})
    );
    let record = only_record(&sb);
    assert_eq!(
        (record["agent"].as_str(), record["state"].as_str()),
        (Some("codex"), Some("working"))
    );
    // The same request for `rm -rf build`: no decision (Codex shows its menu), and the
    // state says a person is asked. Without --agent, Codex's turn_id tells whose it is.
    let destructive = String::from_utf8(request.clone())
        .unwrap()
        .replace("\"npm test\"", "\"rm -rf build\"");
    let out = run(&sb, &["hook", "permission-request"], destructive.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).is_empty(), "{out:?}");
    let record = only_record(&sb);
    assert_eq!(record["state"], "waiting-for-permission");
    assert_eq!(record["agent"], "codex");
}

fn install(sb: &Sandbox, project: &Path, extra: &[&str]) -> Output {
    sb.cmd()
        .args(["hook", "install", "--autoctl", "autoctl", "--project"])
        .arg(project)
        .args(extra)
        .output()
        .unwrap()
}

const CODEX_HOOKS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "python3 .codex/hooks/audit.py",
            "statusMessage": "Auditing"
          }
        ]
      }
    ]
  }
}
"#;

#[test]
fn install_wires_codex_hooks_json_idempotently_and_uninstall_gives_it_back() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let file = sb.write("proj/.codex/hooks.json", CODEX_HOOKS);
    let out = install(&sb, &project, &["--agent", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("added Stop → autoctl hook stop --agent codex"),
        "{text}"
    );
    assert!(text.contains("/hooks"), "the trust step is named: {text}");
    let once = fs::read_to_string(&file).unwrap();
    let value: Value = serde_json::from_str(&once).unwrap();
    let command = |event: &str, i: usize| {
        value["hooks"][event][i]["hooks"][0]["command"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(command("PreToolUse", 0), "python3 .codex/hooks/audit.py");
    assert!(
        command("PreToolUse", 1).starts_with("autoctl hook "),
        "{once}"
    );
    assert!(
        command("PreToolUse", 1).ends_with(" --agent codex"),
        "{once}"
    );
    assert_eq!(
        command("PermissionRequest", 0),
        "autoctl hook permission-request --agent codex"
    );
    assert_eq!(command("Interrupt", 0), "autoctl hook event --agent codex");
    assert!(
        value.get("statusLine").is_none(),
        "no status line for Codex"
    );
    for event in ["StopFailure", "Notification", "PostToolUseFailure"] {
        assert!(value["hooks"].get(event).is_none(), "Codex has no {event}");
    }
    // Idempotent: the same bytes, and it says so.
    let again = install(&sb, &project, &["--agent", "codex"]);
    assert!(stdout(&again).contains("up to date"), "{again:?}");
    assert_eq!(fs::read_to_string(&file).unwrap(), once);
    // Claude Code's settings are a different file, untouched.
    assert!(!sb.path("proj/.claude/settings.json").exists());
    // Uninstall gives the user's file back, byte for byte.
    let out = install(&sb, &project, &["--agent", "codex", "--uninstall"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&file).unwrap(), CODEX_HOOKS);
}

const GEMINI_SETTINGS: &str = r#"{
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "name": "security-check",
            "type": "command",
            "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/security.sh",
            "timeout": 5000
          }
        ]
      }
    ]
  }
}
"#;

#[test]
fn install_wires_gemini_settings_idempotently_and_uninstall_gives_them_back() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let file = sb.write("proj/.gemini/settings.json", GEMINI_SETTINGS);
    let out = install(&sb, &project, &["--agent", "gemini"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let once = fs::read_to_string(&file).unwrap();
    let value: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(value["security"]["auth"]["selectedType"], "gemini-api-key");
    let stop = &value["hooks"]["AfterAgent"][0]["hooks"][0];
    assert_eq!(stop["command"], "autoctl hook stop --agent gemini");
    assert_eq!(stop["name"], "autoctl-stop");
    assert_eq!(stop["timeout"], 30000, "Gemini counts milliseconds");
    assert_eq!(
        value["hooks"]["BeforeTool"][0]["hooks"][0]["name"],
        "security-check"
    );
    let ours = value["hooks"]["BeforeTool"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(ours.ends_with("--agent gemini"), "{once}");
    for event in [
        "BeforeAgent",
        "AfterTool",
        "Notification",
        "PreCompress",
        "SessionStart",
        "SessionEnd",
    ] {
        assert_eq!(
            value["hooks"][event][0]["hooks"][0]["command"], "autoctl hook event --agent gemini",
            "{event}"
        );
    }
    let again = install(&sb, &project, &["--agent", "gemini"]);
    assert!(stdout(&again).contains("up to date"), "{again:?}");
    assert_eq!(fs::read_to_string(&file).unwrap(), once);
    install(&sb, &project, &["--agent", "gemini", "--uninstall"]);
    assert_eq!(fs::read_to_string(&file).unwrap(), GEMINI_SETTINGS);
}

#[test]
fn install_for_another_agent_refuses_what_it_cannot_do_safely() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    // A file that is not JSON is left as it is.
    let file = sb.write("proj/.codex/hooks.json", "{\"hooks\": [");
    let out = install(&sb, &project, &["--agent", "codex"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("left untouched"));
    assert_eq!(fs::read_to_string(&file).unwrap(), "{\"hooks\": [");
    // --user needs --yes, and names the file it would change.
    let out = sb
        .cmd()
        .args(["hook", "install", "--agent", "gemini", "--user"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_stderr_line(&out);
    assert!(
        line.contains(".gemini/settings.json") && line.contains("--yes"),
        "{line}"
    );
    // With --yes it writes the user's file (HOME is the sandbox's).
    let out = sb
        .cmd()
        .args([
            "hook",
            "install",
            "--agent",
            "codex",
            "--user",
            "--yes",
            "--autoctl",
            "autoctl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(sb.path("home/.codex/hooks.json").exists(), "{out:?}");
    // The slash command is Claude Code's alone.
    let out = install(&sb, &project, &["--agent", "gemini", "--commands"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("--commands"));
}

#[test]
fn doctor_names_the_trust_steps_codex_and_gemini_still_need() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    install(&sb, &project, &["--agent", "codex"]);
    install(&sb, &project, &["--agent", "gemini"]);
    let doctor = |sb: &Sandbox| -> Value {
        let out = sb
            .cmd()
            .current_dir(&project)
            .args(["doctor", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let level = |report: &Value, scope: &str, name: &str| -> String {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["scope"] == scope && c["name"] == name)
            .unwrap_or_else(|| panic!("{scope}/{name}: {report}"))["level"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let report = doctor(&sb);
    assert_eq!(level(&report, "codex", "hooks"), "ok");
    assert_eq!(level(&report, "codex", "project trust"), "warn");
    assert_eq!(level(&report, "codex", "hook trust"), "warn");
    assert_eq!(level(&report, "codex", "events"), "warn");
    assert_eq!(level(&report, "gemini", "folder trust"), "warn");
    // The person trusted both (as the agents write it), and Codex's hooks fired once.
    let canonical = project.canonicalize().unwrap().display().to_string();
    let mut config = format!("[projects.\"{canonical}\"]\ntrust_level = \"trusted\"\n");
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(project.join(".codex/hooks.json")).unwrap())
            .unwrap();
    for event in hooks["hooks"].as_object().unwrap().keys() {
        let snake: String = event
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                let lower = c.to_ascii_lowercase();
                if c.is_ascii_uppercase() && i > 0 {
                    vec!['_', lower]
                } else {
                    vec![lower]
                }
            })
            .collect();
        config.push_str(&format!(
            "\n[hooks.state.\"{canonical}/.codex/hooks.json:{snake}:0:0\"]\ntrusted_hash = \"sha256:1\"\n"
        ));
    }
    sb.write("home/.codex/config.toml", config);
    sb.write(
        "home/.gemini/trustedFolders.json",
        format!("{{\"{canonical}\": \"TRUST_FOLDER\"}}"),
    );
    run(
        &sb,
        &["hook", "event", "--agent", "codex"],
        &payload("codex", "session", "01-SessionStart"),
    );
    let report = doctor(&sb);
    for name in ["hooks", "project trust", "hook trust", "events"] {
        assert_eq!(level(&report, "codex", name), "ok", "{name}: {report}");
    }
    assert_eq!(level(&report, "gemini", "folder trust"), "ok");
}

#[test]
fn geminis_joined_responses_leave_each_turns_own_words() {
    // The recorded AfterAgents of a loop give "Step done.", "Step done.\nStep done.", ...:
    // the record keeps this turn's words, so three identical turns are three repeats.
    let sb = Sandbox::new();
    replay(&sb, "gemini", "stop-loop", true);
    let record = only_record(&sb);
    assert_eq!(record["message"]["text"], "Step done.", "{record}");
    assert_eq!(record["repeats"], 3, "{record}");
    assert_eq!(record["stops"], 3);
}

/// Codex fires no hook when a turn ends on its usage limit (`usage-limit/`: nothing after
/// UserPromptSubmit); its rollout, the hooks' `transcript_path`, records the turn's end with
/// `codex_error_info: "usage_limit_exceeded"`. `run tick` reads the limit from the rollout
/// (source `transcript`), the banner on the screen as the witness that gives the minute of the
/// reset, and waits; once the rollout shows a new turn (the resume), it says nothing more and
/// the hooks and screen decide. The rollout is the real one of the live limit run, its times
/// moved to the screen's (`live/codex/limit/screens/screen-007.txt`, "try again at 7:48 PM").
#[test]
fn codex_usage_limit_is_read_from_its_rollout() {
    use crate::tmuxfix::{repo, start, wait_for};
    use crate::typed_tick::{in_pane, start_run_with};
    let sb = Sandbox::new();
    let rollout = sb.path("codex/sessions/rollout-2026-11-28T19-45-02-01a2.jsonl");
    fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    let whole = fs::read_to_string(repo("tests/fixtures/codex-rollout/usage-limit.jsonl"))
        .unwrap()
        .replace("2026-11-29T01:13:", "2026-11-28T19:45:");
    let (before, limit) = whole.trim_end().rsplit_once('\n').unwrap();
    fs::write(&rollout, format!("{before}\n")).unwrap();
    let log = sb.path("agent.keys");
    let command = format!(
        "python3 {} --as node {} {}",
        repo("tests/fixtures/agents/fake-agent.py").display(),
        repo("tests/fixtures/live/codex/limit/screens/screen-007.txt").display(),
        log.display()
    );
    let agent = start(&sb, "agent", &command);
    wait_for(&sb, &agent, "the fake Codex", |_, command| {
        command == "node"
    });
    start_run_with(&sb, "2026-11-28T19:45:00Z", &["--agent", "codex"]);
    let rollout_path = rollout.display().to_string();
    for (file, at) in [
        ("01-SessionStart-startup.json", "2026-11-28T19:45:02Z"),
        ("02-UserPromptSubmit.json", "2026-11-28T19:45:03Z"),
    ] {
        let payload = fs::read_to_string(recorded("codex", "usage-limit").join(file)).unwrap();
        let payload = payload.replace(
            "/home/dev/.codex/sessions/2026/11/28/rollout-2026-11-28T09-54-45-01a22194-1fcb-7eb2-9905-1f45e5edb299.jsonl",
            &rollout_path,
        );
        let out = in_pane(
            &sb,
            &agent,
            at,
            &["hook", "event", "--agent", "codex"],
            payload.as_bytes(),
        );
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    }
    let records = hook_records(&sb.path("state/hooks"), false);
    assert_eq!(records[0]["rollout"], rollout_path.as_str(), "{records:?}");
    let tick = |at: &str| {
        let out = sb
            .cmd()
            .env("AUTOCTL_NOW", at)
            .env("TZ", "UTC")
            .args(["run", "tick", "--all"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        crate::util::json_lines(&out).remove(0)
    };
    // The limit ends the turn; no hook fires. (The fake agent shows the banner from the
    // start, so the first tick comes after the rollout has it, as with the real agent.)
    fs::write(&rollout, format!("{before}\n{limit}\n")).unwrap();
    for at in ["2026-11-28T19:45:20Z", "2026-11-28T19:46:20Z"] {
        let event = tick(at);
        assert_eq!(event["state"]["source"], "transcript", "{event}");
        assert_eq!(event["state"]["state"], "failed:rate_limit", "{event}");
        assert_eq!(event["decision"], "wait", "{event}");
        let wait = &event["run"]["wait"];
        assert!(
            wait["reason"]
                .as_str()
                .is_some_and(|r| r.contains("resets at 2026-11-28T19:48:00")),
            "{event}"
        );
    }
    // A new turn in the rollout (the resume): the rollout no longer says the agent waits.
    let started = r#"{"timestamp":"2026-11-28T19:49:02.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t2"}}"#;
    fs::write(&rollout, format!("{before}\n{limit}\n{started}\n")).unwrap();
    let event = tick("2026-11-28T19:49:05Z");
    assert_ne!(event["state"]["source"], "transcript", "{event}");
}

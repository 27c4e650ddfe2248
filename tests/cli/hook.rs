//! `autoctl loop ...` and `autoctl hook stop|stop-failure`, driven the way Claude Code drives
//! a Stop hook: JSON on stdin, `$CLAUDE_PROJECT_DIR` set, stdout and the exit code read back.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::util::{Sandbox, one_stderr_line, stdout, with_stdin};

const SESSION: &str = "0b6f3c3e-5a8e-4d7c-9b1e-7f2d9c1a4e10";
const SENTINEL: &str = "<promise>AUTOCTL COMPLETE</promise>";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook")
        .join(name)
}

/// A project directory with a copy of `transcript` (a fixture name) in it.
fn project(sb: &Sandbox, transcript: Option<&str>) -> (PathBuf, PathBuf) {
    let project = sb.module("project");
    let path = project.join("transcript.jsonl");
    match transcript {
        Some(name) => {
            fs::copy(fixture(name), &path).unwrap();
        }
        None => fs::write(&path, "").unwrap(),
    }
    (project, path)
}

fn init(sb: &Sandbox, project: &Path, args: &[&str]) {
    sb.cmd()
        .args(["loop", "init", "--dir"])
        .arg(project)
        .args(args)
        .assert()
        .code(0);
}

/// A payload fixture with its placeholders filled in.
fn payload(name: &str, transcript: &Path, project: &Path) -> String {
    fs::read_to_string(fixture(name))
        .unwrap()
        .replace("TRANSCRIPT", &transcript.display().to_string())
        .replace("PROJECT", &project.display().to_string())
}

/// Run `autoctl hook stop` as Claude Code does: stdin JSON, `CLAUDE_PROJECT_DIR`, the project
/// as working directory.
pub fn hook(sb: &Sandbox, project: &Path, verb: &str, stdin: &str) -> Output {
    hook_with(sb.std_cmd(), project, verb, stdin)
}

pub fn hook_with(
    mut cmd: std::process::Command,
    project: &Path,
    verb: &str,
    stdin: &str,
) -> Output {
    cmd.env("CLAUDE_PROJECT_DIR", project).current_dir(project);
    crate::util::with_stdin(cmd, &["hook", verb], stdin.as_bytes())
}

fn stop(sb: &Sandbox, project: &Path, stdin: &str) -> Output {
    hook(sb, project, "stop", stdin)
}

/// The one JSON object on stdout, or None when stdout is empty.
fn answer(output: &Output) -> Option<Value> {
    let text = stdout(output);
    if text.is_empty() {
        return None;
    }
    assert!(
        text.ends_with('\n') && text.lines().count() == 1,
        "{text:?}"
    );
    Some(serde_json::from_str(&text).unwrap())
}

fn state(project: &Path) -> Value {
    serde_json::from_slice(&fs::read(project.join(".autoctl/loop-state.json")).unwrap()).unwrap()
}

fn active(project: &Path) -> bool {
    project.join(".autoctl/loop.json").exists()
}

fn is_block(answer: &Option<Value>) -> bool {
    answer.as_ref().is_some_and(|a| a["decision"] == "block")
}

fn message(answer: &Option<Value>) -> String {
    answer.as_ref().unwrap()["systemMessage"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn no_loop_means_silence_and_nothing_created() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    let output = stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(answer(&output), None);
    assert!(output.stderr.is_empty());
    assert!(!project.join(".autoctl").exists());
}

#[test]
fn an_ordinary_turn_continues_with_the_prompt_and_counts_it() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "Add the next test.", "--max-iterations", "10"],
    );
    let output = stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    );
    assert_eq!(output.status.code(), Some(0));
    let answer = answer(&output);
    assert!(is_block(&answer), "{answer:?}");
    let reason = answer.as_ref().unwrap()["reason"].as_str().unwrap();
    assert!(reason.starts_with("Add the next test.\n\n(autoctl loop: iteration 2 of 10."));
    assert!(reason.contains(SENTINEL));
    assert_eq!(message(&answer), "autoctl loop: iteration 2 of 10");
    // The line that is not JSON is skipped with a warning, not fatal.
    assert!(String::from_utf8_lossy(&output.stderr).contains("not JSON"));
    let state = state(&project);
    assert_eq!(state["session_id"], SESSION);
    assert_eq!(state["iteration"], 1);
    assert!(autoctl::schema::violations("loop-state", &state).is_empty());
    let lock: Value =
        serde_json::from_slice(&fs::read(project.join(".autoctl/loop.lock")).unwrap()).unwrap();
    assert_eq!(lock["owner"], format!("session:{SESSION}"));
    assert!(autoctl::schema::violations("heartbeat-lock", &lock).is_empty());
}

fn assert_done(output: &Output, project: &Path, place: &str) {
    assert_eq!(output.status.code(), Some(0));
    let answer = answer(output);
    assert!(!is_block(&answer), "{answer:?}");
    let message = message(&answer);
    assert!(
        message.starts_with("autoctl loop: complete after 1 iteration"),
        "{message}"
    );
    assert!(message.contains(place), "{message}");
    assert!(!active(project));
    assert_eq!(state(project)["ended"]["outcome"], "done");
    assert!(!project.join(".autoctl/loop.lock").exists());
}

#[test]
fn the_sentinel_in_the_last_message_ends_the_loop() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("sentinel-last-message.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let output = stop(
        &sb,
        &project,
        &payload("stop-sentinel-last-message.json", &transcript, &project),
    );
    assert_done(&output, &project, "the last message");
}

#[test]
fn the_sentinel_earlier_in_the_turn_ends_the_loop() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("sentinel-earlier-in-turn.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let output = stop(
        &sb,
        &project,
        &payload("stop-sentinel-earlier.json", &transcript, &project),
    );
    assert_done(&output, &project, "the last turn");
}

#[test]
fn a_turn_ending_in_tool_calls_does_not_hide_the_sentinel() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("ends-with-tool-use.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--transcript-wait", "0s"],
    );
    let output = stop(
        &sb,
        &project,
        &payload("stop-no-last-message.json", &transcript, &project),
    );
    assert_done(&output, &project, "the last turn");
}

#[test]
fn a_sentinel_quoted_in_the_users_code_block_does_not_count() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("sentinel-in-user-code-block.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--transcript-wait", "0s"],
    );
    let output = stop(
        &sb,
        &project,
        &payload("stop-no-last-message.json", &transcript, &project),
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(is_block(&answer(&output)));
    assert!(active(&project));
}

#[test]
fn last_assistant_message_wins_over_a_lagging_transcript() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("lagging.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let output = stop(
        &sb,
        &project,
        &payload("stop-lagging.json", &transcript, &project),
    );
    assert_done(&output, &project, "the last message");
}

#[test]
fn without_last_assistant_message_the_hook_waits_for_a_lagging_transcript() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("lagging.jsonl"));
    // A generous wait: the late line is appended while the hook is already running.
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--transcript-wait", "20s"],
    );
    let mut child = sb
        .std_cmd()
        .args(["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload("stop-no-last-message.json", &transcript, &project).as_bytes())
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let late = fs::read(fixture("lagging-late-line.jsonl")).unwrap();
    fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(&late)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_done(&output, &project, "the last turn");
}

#[test]
fn two_sessions_in_one_project_only_the_bound_one_loops() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let first = payload("stop-working.json", &transcript, &project);
    assert!(is_block(&answer(&stop(&sb, &project, &first))));
    let other = first.replace(SESSION, "11111111-2222-3333-4444-555555555555");
    for _ in 0..2 {
        let output = stop(&sb, &project, &other);
        assert_eq!(output.status.code(), Some(0));
        let answer = answer(&output);
        assert!(!is_block(&answer));
        let message = message(&answer);
        assert!(
            message.contains(&format!("belongs to session {SESSION}")),
            "{message}"
        );
    }
    // The other session changed nothing; the bound one goes on.
    assert_eq!(state(&project)["iteration"], 1);
    assert!(is_block(&answer(&stop(&sb, &project, &first))));
    assert_eq!(state(&project)["iteration"], 2);
}

#[test]
fn a_loop_bound_by_init_ignores_the_session_that_stops_first() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--session", "someone-else"],
    );
    let output = stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    );
    assert!(!is_block(&answer(&output)));
    assert_eq!(state(&project)["iteration"], 0);
}

#[test]
fn an_empty_or_missing_session_id_allows_the_stop_with_a_warning() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    for name in ["stop-empty-session.json", "stop-no-session.json"] {
        let output = stop(&sb, &project, &payload(name, &transcript, &project));
        assert_eq!(output.status.code(), Some(0), "{name}");
        assert!(!is_block(&answer(&output)), "{name}");
        assert!(one_stderr_line(&output).contains("no session_id"), "{name}");
    }
    assert_eq!(state(&project)["iteration"], 0);
    assert!(active(&project));
}

#[test]
fn a_subagent_stop_is_never_a_loop_turn() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let output = stop(
        &sb,
        &project,
        &payload("subagent-stop.json", &transcript, &project),
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(answer(&output), None);
    assert_eq!(state(&project)["iteration"], 0);
}

#[test]
fn the_iteration_limit_ends_the_loop() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--max-iterations", "3"],
    );
    let input = payload("stop-working.json", &transcript, &project);
    assert!(is_block(&answer(&stop(&sb, &project, &input))));
    assert!(is_block(&answer(&stop(&sb, &project, &input))));
    let last = answer(&stop(&sb, &project, &input));
    assert!(!is_block(&last));
    assert_eq!(
        message(&last),
        "autoctl loop: stopped at the iteration limit (3 of 3)"
    );
    assert!(!active(&project));
    assert_eq!(state(&project)["ended"]["outcome"], "max-iterations");
    // The loop is gone: the next Stop is silent.
    assert_eq!(answer(&stop(&sb, &project, &input)), None);
}

/// One assistant message of `tokens` output tokens (and no other usage), as Claude Code
/// writes it: two lines sharing the message id and repeating the usage.
fn spend(transcript: &Path, id: &str, tokens: u64) {
    let line = |block: Value, out: u64| {
        json!({"type":"assistant","message":{"id":id,"role":"assistant","content":[block],
            "usage":{"input_tokens":0,"output_tokens":out,"cache_creation_input_tokens":0,
            "cache_read_input_tokens":0}}})
        .to_string()
    };
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(transcript)
        .unwrap();
    writeln!(
        file,
        "{}",
        line(
            json!({"type":"tool_use","id":"t","name":"Bash","input":{}}),
            1
        )
    )
    .unwrap();
    writeln!(
        file,
        "{}",
        line(json!({"type":"text","text":"step"}), tokens)
    )
    .unwrap();
}

#[test]
fn the_token_budget_ends_the_loop_counting_each_message_once() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, None);
    fs::write(
        &transcript,
        format!("{}\n", json!({"type":"user","message":{"content":"go"}})),
    )
    .unwrap();
    init(
        &sb,
        &project,
        &[
            "--prompt",
            "go on",
            "--budget",
            "1000",
            "--transcript-wait",
            "0s",
        ],
    );
    let input = payload("stop-no-last-message.json", &transcript, &project);
    spend(&transcript, "m1", 400);
    let first = answer(&stop(&sb, &project, &input));
    assert!(is_block(&first));
    assert!(
        message(&first).contains("400 of 1000 tokens used"),
        "{}",
        message(&first)
    );
    spend(&transcript, "m2", 400);
    assert!(is_block(&answer(&stop(&sb, &project, &input))));
    assert_eq!(state(&project)["tokens"]["output"], 800);
    spend(&transcript, "m3", 400);
    let last = answer(&stop(&sb, &project, &input));
    assert!(!is_block(&last));
    assert_eq!(
        message(&last),
        "autoctl loop: token budget exhausted: 1200 of 1000 tokens used in 3 iterations"
    );
    assert_eq!(state(&project)["ended"]["outcome"], "budget-exhausted");
}

#[test]
fn a_budget_without_a_readable_transcript_pauses_instead_of_guessing() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on", "--budget", "1000"]);
    fs::remove_file(&transcript).unwrap();
    let output = stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    );
    assert_eq!(output.status.code(), Some(0));
    let answer = answer(&output);
    assert!(!is_block(&answer));
    assert!(message(&answer).contains("paused: cannot measure the token budget"));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read transcript"));
    assert!(active(&project));
}

#[test]
fn a_missing_transcript_without_a_budget_still_loops_on_last_assistant_message() {
    let sb = Sandbox::new();
    let (project, _) = project(&sb, None);
    init(&sb, &project, &["--prompt", "go on"]);
    let missing = project.join("nope.jsonl");
    let output = stop(
        &sb,
        &project,
        &payload("stop-working.json", &missing, &project),
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(is_block(&answer(&output)));
    assert!(one_stderr_line(&output).contains("cannot read transcript"));
    let done = payload("stop-sentinel-last-message.json", &missing, &project);
    assert!(!is_block(&answer(&stop(&sb, &project, &done))));
    assert!(!active(&project));
}

#[test]
fn an_unreadable_transcript_is_reported_not_fatal() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    fs::set_permissions(
        &transcript,
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    // The project must be writable by the unprivileged user that runs the hook.
    for dir in [project.clone(), project.join(".autoctl")] {
        fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    for file in fs::read_dir(project.join(".autoctl")).unwrap() {
        let path = file.unwrap().path();
        fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    }
    let input = payload("stop-working.json", &transcript, &project);
    // unprivileged_cmd runs the hook as another user when the tests run as root.
    let mut cmd = sb.unprivileged_cmd();
    cmd.args(["hook", "stop", "--dir"]).arg(&project);
    let output = with_stdin(cmd, &[], input.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(is_block(&answer(&output)));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("Permission denied"),
        "{output:?}"
    );
}

#[test]
fn bad_stdin_is_a_non_blocking_error() {
    let sb = Sandbox::new();
    let (project, _) = project(&sb, None);
    init(&sb, &project, &["--prompt", "go on"]);
    for input in [
        "",
        "not json",
        r#"{"session_id":"abc","transcript"#,
        "[1,2]",
        r#"{"session_id":7}"#,
    ] {
        let output = stop(&sb, &project, input);
        // Exit 0 (never 2: Claude Code would feed stderr to the model as a prompt).
        assert_eq!(output.status.code(), Some(0), "{input:?}");
        assert_eq!(answer(&output), None, "{input:?}");
        let line = one_stderr_line(&output);
        assert!(
            line.contains("stdin") && line.contains("allowing the stop"),
            "{line}"
        );
    }
    assert!(active(&project));
}

#[test]
fn a_corrupt_loop_file_stands_aside_and_says_so() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    let input = payload("stop-working.json", &transcript, &project);
    for (file, contents) in [
        ("loop-state.json", "{\"version\":1,\"iteration\":"),
        (
            "loop-state.json",
            "{\"version\":1,\"iteration\":-4,\"idle_streak\":0,\"tokens\":{}}",
        ),
        ("loop.json", "garbage"),
    ] {
        init(&sb, &project, &["--prompt", "go on", "--force"]);
        fs::write(project.join(".autoctl").join(file), contents).unwrap();
        let output = stop(&sb, &project, &input);
        assert_eq!(output.status.code(), Some(0), "{file}");
        let answer = answer(&output);
        assert!(!is_block(&answer), "{file}");
        assert!(message(&answer).contains("standing aside"), "{file}");
        assert!(one_stderr_line(&output).contains(file), "{file}");
    }
}

#[test]
fn a_loop_lock_that_is_a_directory_or_symlink_stands_aside() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    let input = payload("stop-working.json", &transcript, &project);
    init(&sb, &project, &["--prompt", "go on"]);
    let lock = project.join(".autoctl/loop.lock");
    fs::create_dir(&lock).unwrap();
    let output = stop(&sb, &project, &input);
    assert_eq!(output.status.code(), Some(0));
    assert!(!is_block(&answer(&output)));
    assert!(one_stderr_line(&output).contains("is a directory"));
    fs::remove_dir(&lock).unwrap();
    std::os::unix::fs::symlink(project.join("elsewhere"), &lock).unwrap();
    let output = stop(&sb, &project, &input);
    assert!(!is_block(&answer(&output)));
    assert!(one_stderr_line(&output).contains("is a symlink"));
    assert!(!project.join("elsewhere").exists());
}

#[test]
fn a_stale_loop_lock_is_stolen_and_a_live_one_pauses_the_loop() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    let input = payload("stop-working.json", &transcript, &project);
    init(&sb, &project, &["--prompt", "go on"]);
    let lock = project.join(".autoctl/loop.lock");
    // An operator holds the loop lock: the loop stands aside.
    sb.cmd()
        .args(["lock", "acquire"])
        .arg(&lock)
        .args(["--owner", "ops:pause"])
        .assert()
        .code(0);
    let output = stop(&sb, &project, &input);
    let paused = answer(&output);
    assert!(!is_block(&paused));
    assert!(message(&paused).contains("held by ops:pause"));
    assert_eq!(state(&project)["iteration"], 0);
    // The same hold, gone stale: the session takes the lock and goes on.
    fs::write(
        &lock,
        r#"{"owner":"ops:pause","pid":1,"host":"elsewhere","heartbeat_at":"2020-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    assert!(is_block(&answer(&stop(&sb, &project, &input))));
    let held: Value = serde_json::from_slice(&fs::read(&lock).unwrap()).unwrap();
    assert_eq!(held["owner"], format!("session:{SESSION}"));
}

#[test]
fn a_huge_transcript_is_read_from_its_end() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, None);
    init(
        &sb,
        &project,
        &[
            "--prompt",
            "go on",
            "--budget",
            "100000000",
            "--transcript-wait",
            "0s",
        ],
    );
    // 500 MB, almost all of it a hole: reading it whole would take seconds and 500 MB of RAM.
    let file = fs::OpenOptions::new()
        .write(true)
        .open(&transcript)
        .unwrap();
    file.set_len(500 * 1024 * 1024).unwrap();
    drop(file);
    let mut tail = String::from("\n");
    tail.push_str(&json!({"type":"user","message":{"content":"go"}}).to_string());
    tail.push('\n');
    fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(tail.as_bytes())
        .unwrap();
    spend(&transcript, "m1", 10);
    let input = payload("stop-no-last-message.json", &transcript, &project);
    // 64 MiB of address space: reading the 500 MB whole would fail, not only be slow.
    let output = hook_with(sb.memory_limited(64), &project, "stop", &input);
    assert!(is_block(&answer(&output)), "{output:?}");
    // Only the last turn was counted.
    assert_eq!(state(&project)["tokens"]["output"], 10);

    // A last turn with no start in sight: the scan stops at its limit instead of reading on.
    let (big, big_transcript) = (sb.module("big"), sb.path("big/t.jsonl"));
    fs::File::create(&big_transcript)
        .unwrap()
        .set_len(500 * 1024 * 1024)
        .unwrap();
    spend(&big_transcript, "m1", 10);
    init(&sb, &big, &["--prompt", "go on", "--transcript-wait", "0s"]);
    let output = stop(
        &sb,
        &big,
        &payload("stop-no-last-message.json", &big_transcript, &big),
    );
    assert!(is_block(&answer(&output)));
    assert!(String::from_utf8_lossy(&output.stderr).contains("scan limit"));
}

#[test]
fn a_task_loop_routes_from_the_signal_with_backprop_and_stops_on_the_route() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    let task = sb.module("project/TASK/login");
    fs::write(
        task.join(".auto-signal"),
        r#"{"step":"check","result":"NEEDS_FIX","next":"exec","checkpoint":"post-exec","iteration":3,"timestamp":"2026-11-25T10:00:00Z"}"#,
    )
    .unwrap();
    init(&sb, &project, &["--task", task.to_str().unwrap()]);
    let input = payload("stop-working.json", &transcript, &project);
    let first = answer(&stop(&sb, &project, &input));
    let reason = first.as_ref().unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.starts_with(&format!("/ai-cli-task exec {}", task.display())),
        "{reason}"
    );

    // Failing tests: the backprop directive comes first.
    fs::write(
        project.join(".autoctl/backprop-pending.json"),
        r#"{"summary":"1 failed","failing":["login::limits_per_ip"]}"#,
    )
    .unwrap();
    let second = answer(&stop(&sb, &project, &input));
    let reason = second.as_ref().unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.starts_with("BACKPROP: tests are failing"),
        "{reason}"
    );
    assert!(reason.contains("Failing: login::limits_per_ip"));
    assert!(reason.contains("/ai-cli-task exec"));

    // An invalid signal pauses the loop (it stays active), a (stop) route ends it.
    fs::write(task.join(".auto-signal"), "{").unwrap();
    let paused = answer(&stop(&sb, &project, &input));
    assert!(!is_block(&paused));
    assert!(message(&paused).contains("paused"));
    assert!(active(&project));
    fs::write(
        task.join(".auto-signal"),
        r#"{"step":"report","result":"(done)","next":"(stop)","iteration":9,"timestamp":"2026-11-25T10:00:00Z"}"#,
    )
    .unwrap();
    let done = answer(&stop(&sb, &project, &input));
    assert!(!is_block(&done));
    assert!(
        message(&done).contains("routes to (stop)"),
        "{}",
        message(&done)
    );
    assert_eq!(state(&project)["ended"]["outcome"], "task-stopped");
}

#[test]
fn a_stop_request_in_the_task_ends_the_loop() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    let task = sb.module("project/TASK/x");
    fs::write(
        task.join(".auto-signal"),
        r#"{"step":"plan","result":"(generated)","next":"check","checkpoint":"post-plan","timestamp":"2026-11-25T10:00:00Z"}"#,
    )
    .unwrap();
    init(&sb, &project, &["--task", task.to_str().unwrap()]);
    sb.cmd()
        .args(["stop", "write"])
        .arg(&task)
        .args(["--reason", "user_stop"])
        .assert()
        .code(0);
    let done = answer(&stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    ));
    assert!(!is_block(&done));
    assert!(message(&done).contains("requests a stop (user_stop)"));
}

#[test]
fn idle_turns_end_the_loop_before_claude_codes_block_cap() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, None);
    fs::write(&transcript, "").unwrap();
    init(&sb, &project, &["--prompt", "go on", "--max-idle", "2"]);
    let input = payload("stop-working.json", &transcript, &project);
    let turn = |text: &str| {
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&transcript)
            .unwrap();
        writeln!(file, "{}", json!({"type":"user","isMeta":true,"message":{"content":[{"type":"text","text":"Stop hook feedback:\ngo on"}]}})).unwrap();
        writeln!(file, "{}", json!({"type":"assistant","message":{"id":text,"content":[{"type":"text","text":text}]}})).unwrap();
    };
    turn("nothing to do");
    assert!(is_block(&answer(&stop(&sb, &project, &input))));
    turn("still nothing");
    let idle = answer(&stop(&sb, &project, &input));
    assert!(!is_block(&idle));
    assert!(message(&idle).contains("no tool call in the last 2 turns"));
}

/// The whole loop, the way Claude Code runs it: after each turn the hook gets the Stop
/// payload on stdin; a block's `reason` becomes the next turn's prompt (recorded in the
/// transcript as Stop hook feedback); the agent finishes on the fourth turn.
#[test]
fn end_to_end_a_session_loops_until_the_sentinel() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, None);
    fs::write(&transcript, "").unwrap();
    init(
        &sb,
        &project,
        &[
            "--prompt",
            "Implement the next item of TODO.md.",
            "--max-iterations",
            "10",
            "--budget",
            "1000000",
        ],
    );
    let append = |value: Value| {
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&transcript)
            .unwrap();
        writeln!(file, "{value}").unwrap();
    };
    append(json!({"type":"user","message":{"role":"user","content":"Start on TODO.md."}}));
    let mut prompts = Vec::new();
    for turn in 1..=4 {
        let text = if turn == 4 {
            format!("Everything in TODO.md is done.\n\n{SENTINEL}")
        } else {
            format!("Item {turn} done.")
        };
        let id = format!("msg_{turn}");
        let usage = json!({"input_tokens":10,"output_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
        append(
            json!({"type":"assistant","message":{"id":id,"content":[{"type":"tool_use","id":format!("t{turn}"),"name":"Edit","input":{}}],"usage":usage}}),
        );
        append(
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":format!("t{turn}"),"content":"ok"}]}}),
        );
        append(
            json!({"type":"assistant","message":{"id":format!("{id}b"),"content":[{"type":"text","text":text}],"usage":usage}}),
        );
        let input = json!({
            "session_id": SESSION,
            "transcript_path": transcript,
            "cwd": project,
            "permission_mode": "default",
            "hook_event_name": "Stop",
            "stop_hook_active": turn > 1,
            "last_assistant_message": text,
        });
        let output = stop(&sb, &project, &input.to_string());
        assert_eq!(output.status.code(), Some(0));
        assert!(output.stderr.is_empty(), "{output:?}");
        let answer = answer(&output).expect("the hook always answers an active loop");
        if turn < 4 {
            assert_eq!(answer["decision"], "block");
            assert_eq!(
                answer["systemMessage"],
                format!(
                    "autoctl loop: iteration {} of 10, {} of 1000000 tokens used",
                    turn + 1,
                    turn * 220
                )
            );
            let reason = answer["reason"].as_str().unwrap().to_string();
            append(
                json!({"type":"user","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":format!("Stop hook feedback:\n{reason}")}]}}),
            );
            prompts.push(reason);
        } else {
            assert_eq!(answer.get("decision"), None);
            assert_eq!(
                answer["systemMessage"],
                "autoctl loop: complete after 4 iterations (completion sentinel in the last message)"
            );
        }
    }
    assert_eq!(prompts.len(), 3);
    assert!(
        prompts
            .iter()
            .all(|p| p.starts_with("Implement the next item of TODO.md."))
    );
    let state = state(&project);
    assert_eq!(state["iteration"], 4);
    assert_eq!(state["tokens"]["output"], 800);
    assert_eq!(state["tokens"]["input"], 80);
    assert_eq!(state["idle_streak"], 0);
    assert_eq!(state["ended"]["outcome"], "done");
    assert!(!active(&project));
    sb.cmd()
        .args(["loop", "status", "--dir"])
        .arg(&project)
        .assert()
        .code(1)
        .stdout(predicates::str::contains("ended: done"));
    let output = sb
        .cmd()
        .args(["loop", "status", "--format", "json", "--dir"])
        .arg(&project)
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["active"], false);
    assert_eq!(status["state"]["iteration"], 4);
    assert_eq!(status.get("lock"), None);
}

#[test]
fn concurrent_stops_of_two_sessions_never_corrupt_the_state() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--max-iterations", "1000"],
    );
    let bound = payload("stop-working.json", &transcript, &project);
    assert!(is_block(&answer(&stop(&sb, &project, &bound))));
    let other = bound.replace(SESSION, "99999999-2222-3333-4444-555555555555");
    let children: Vec<_> = (0..12)
        .map(|i| {
            let mut child = sb
                .std_cmd()
                .args(["hook", "stop"])
                .env("CLAUDE_PROJECT_DIR", &project)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let input = if i % 2 == 0 { &bound } else { &other };
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            (i, child)
        })
        .collect();
    for (i, child) in children {
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(is_block(&answer(&output)), i % 2 == 0);
    }
    // Every Stop of the bound session was counted exactly once.
    assert_eq!(state(&project)["iteration"], 7);
}

#[test]
fn stop_failure_records_a_quota_wait_that_the_next_stop_ends() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    // Without D/.autoctl nothing is recorded (and nothing created).
    let rate = payload("stop-failure-rate-limit.json", &transcript, &project);
    let output = hook(&sb, &project, "stop-failure", &rate);
    assert_eq!(output.status.code(), Some(0));
    assert!(!project.join(".autoctl").exists());

    init(&sb, &project, &["--prompt", "go on"]);
    let output = hook(&sb, &project, "stop-failure", &rate);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stdout.is_empty() && output.stderr.is_empty(),
        "{output:?}"
    );
    let wait = autoctl::hook::quota::read_quota_wait(&project)
        .unwrap()
        .unwrap();
    assert_eq!(wait.kind, "rate_limit");
    assert_eq!(wait.session_id.as_deref(), Some(SESSION));
    assert_eq!(wait.reset_text.as_deref(), Some("resets 3:45pm (UTC)"));
    assert!(
        wait.reset_at.as_deref().unwrap().ends_with("T15:45:00Z"),
        "{wait:?}"
    );
    let stored: Value =
        serde_json::from_slice(&fs::read(project.join(".autoctl/quota-wait.json")).unwrap())
            .unwrap();
    assert!(autoctl::schema::violations("quota-wait", &stored).is_empty());
    sb.cmd()
        .args(["loop", "status", "--dir"])
        .arg(&project)
        .assert()
        .code(0)
        .stdout(predicates::str::contains("quota wait: since"));

    // Another failure kind is recorded with its kind, and is not a quota wait.
    let server = payload("stop-failure-server-error.json", &transcript, &project);
    assert_eq!(
        hook(&sb, &project, "stop-failure", &server).status.code(),
        Some(0)
    );
    let failure = autoctl::hook::quota::read_stop_failure(&project)
        .unwrap()
        .unwrap();
    assert_eq!(failure.kind, "server_error");
    assert_eq!(
        failure.detail.as_deref(),
        Some("API Error: 500 Internal server error")
    );

    // A finished turn ends the wait.
    stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    );
    assert_eq!(
        autoctl::hook::quota::read_quota_wait(&project).unwrap(),
        None
    );

    let output = hook(&sb, &project, "stop-failure", r#"{"session_id":"abc"#);
    assert_eq!(
        output.status.code(),
        Some(0),
        "hook commands never fail the agent"
    );
    assert!(one_stderr_line(&output).contains("truncated"));
}

#[test]
fn init_refuses_a_running_loop_unless_forced_and_teardown_is_always_safe() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    stop(
        &sb,
        &project,
        &payload("stop-working.json", &transcript, &project),
    );
    let output = sb
        .cmd()
        .args(["loop", "init", "--prompt", "again", "--dir"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(one_stderr_line(&output).contains(&format!("session {SESSION}")));
    sb.cmd()
        .args(["loop", "init", "--prompt", "again", "--force", "--dir"])
        .arg(&project)
        .assert()
        .code(0)
        .stderr(predicates::str::contains("replaced the previous loop"));
    assert_eq!(state(&project)["iteration"], 0);
    for _ in 0..2 {
        sb.cmd()
            .args(["loop", "teardown", "--dir"])
            .arg(&project)
            .assert()
            .code(0);
    }
    assert!(!active(&project));
    assert!(!project.join(".autoctl/loop.lock").exists());
    sb.cmd()
        .args(["loop", "status", "--dir"])
        .arg(&project)
        .assert()
        .code(1)
        .stdout(predicates::str::starts_with("active: no\n"));
}

#[test]
fn route_shows_the_answer_without_changing_anything() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("sentinel-last-message.jsonl"));
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--max-iterations", "5"],
    );
    let before = fs::read(project.join(".autoctl/loop-state.json")).unwrap();
    let output = sb
        .cmd()
        .args(["loop", "route", "--format", "json", "--dir"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let route: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(route["kind"], "continue");
    assert_eq!(route["hook"]["decision"], "block");
    let output = sb
        .cmd()
        .args(["loop", "route", "--dir"])
        .arg(&project)
        .arg("--transcript")
        .arg(&transcript)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).starts_with("done\n"));
    assert_eq!(
        fs::read(project.join(".autoctl/loop-state.json")).unwrap(),
        before
    );
    assert!(!project.join(".autoctl/loop.lock").exists());
    assert!(active(&project));
}

#[test]
fn init_rejects_bad_settings_with_one_line() {
    let sb = Sandbox::new();
    let (project, _) = project(&sb, None);
    let empty = sb.write("empty.md", "  \n");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--prompt".into(), " ".into()], "must not be blank"),
        (
            vec!["--prompt-file".into(), "missing.md".into()],
            "missing.md",
        ),
        (
            vec!["--prompt-file".into(), empty.display().to_string()],
            "is empty",
        ),
        (vec!["--task".into(), "no/such/dir".into()], "no/such/dir"),
        (
            vec![
                "--prompt".into(),
                "x".into(),
                "--sentinel".into(),
                "a\nb".into(),
            ],
            "single line",
        ),
        (
            vec![
                "--prompt".into(),
                "x".into(),
                "--max-iterations".into(),
                "0".into(),
            ],
            "max-iterations",
        ),
        (
            vec![
                "--prompt".into(),
                "x".into(),
                "--transcript-wait".into(),
                "5m".into(),
            ],
            "longer than a minute",
        ),
        (vec![], "required"),
    ];
    for (args, expected) in cases {
        let output = sb
            .cmd()
            .args(["loop", "init", "--dir"])
            .arg(&project)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let line = one_stderr_line(&output);
        assert!(line.contains(expected), "{args:?}: {line}");
    }
    let task = sb.module("task");
    let output = sb
        .cmd()
        .args(["loop", "init", "--dir"])
        .arg(&project)
        .arg("--task")
        .arg(&task)
        .args(["--template", "/go {bogus}"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("{bogus}"));
    assert!(!active(&project));
    // A planted .autoctl symlink is refused, not followed.
    let elsewhere = sb.module("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, project.join(".autoctl")).unwrap();
    let output = sb
        .cmd()
        .args(["loop", "init", "--prompt", "x", "--dir"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("is a symlink"));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn the_example_settings_wire_both_hooks() {
    let settings: Value = serde_json::from_slice(
        &fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude/settings.json"))
            .unwrap(),
    )
    .unwrap();
    let command = |event: &str| settings["hooks"][event][0]["hooks"][0]["command"].clone();
    assert_eq!(command("Stop"), "autoctl hook stop");
    assert_eq!(command("StopFailure"), "autoctl hook stop-failure");
}

#[test]
fn the_loop_lock_names_the_session_process_not_the_shell_that_ran_the_hook() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    // Claude Code runs hook commands through a shell; `; true` keeps the shell from exec'ing.
    let mut sh = sb.shell();
    sh.arg("-c")
        .arg(format!("'{}' hook stop; true", crate::util::bin()))
        .env("CLAUDE_PROJECT_DIR", &project);
    let output = with_stdin(
        sh,
        &[],
        payload("stop-working.json", &transcript, &project).as_bytes(),
    );
    assert!(is_block(&answer(&output)));
    let lock: Value =
        serde_json::from_slice(&fs::read(project.join(".autoctl/loop.lock")).unwrap()).unwrap();
    // The shell is gone; the process that ran it (standing in for Claude Code) is alive.
    assert_eq!(lock["pid"], json!(std::process::id()));
    sb.cmd()
        .args(["lock", "status"])
        .arg(project.join(".autoctl/loop.lock"))
        .assert()
        .code(0);
}

fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A pid that belonged to a process which has exited.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Item 6 (seed 004: "a new session may steal a stale lock"): a loop whose bound session's
/// lock is stale **and** whose process is gone is taken over by the next session that
/// stops; either alone is not enough.
#[test]
fn a_new_session_takes_over_a_loop_whose_lock_is_stale_and_whose_session_is_gone() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let first = payload("stop-working.json", &transcript, &project);
    assert!(is_block(&answer(&stop(&sb, &project, &first))));
    let lock = project.join(".autoctl/loop.lock");
    let other_id = "11111111-2222-3333-4444-555555555555";
    let other = first.replace(SESSION, other_id);
    let hold = |pid: u32, heartbeat: &str| {
        fs::write(
            &lock,
            json!({"owner": format!("session:{SESSION}"), "pid": pid, "host": host_name(),
                   "heartbeat_at": heartbeat})
            .to_string(),
        )
        .unwrap();
    };
    // Stale but alive (the session waits for its user): not taken.
    hold(std::process::id(), "2020-01-01T00:00:00Z");
    assert!(message(&answer(&stop(&sb, &project, &other))).contains("belongs to session"));
    // Gone but fresh (its last hook just ran): not taken. (A heartbeat far in the future is
    // stale: a clock that ran ahead must not hold a loop for good.)
    let just_now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    hold(dead_pid(), &just_now);
    assert!(message(&answer(&stop(&sb, &project, &other))).contains("belongs to session"));
    assert_eq!(state(&project)["session_id"], SESSION);
    // Stale and gone: taken over, the count goes on.
    hold(dead_pid(), "2020-01-01T00:00:00Z");
    let taken = answer(&stop(&sb, &project, &other));
    assert!(is_block(&taken));
    assert!(
        message(&taken).contains(&format!("taken over from session {SESSION}")),
        "{}",
        message(&taken)
    );
    let after = state(&project);
    assert_eq!(after["session_id"], other_id);
    assert_eq!(after["iteration"], 2);
    let held: Value = serde_json::from_slice(&fs::read(&lock).unwrap()).unwrap();
    assert_eq!(held["owner"], format!("session:{other_id}"));
    // The old session, should it come back, is now the foreign one.
    assert!(message(&answer(&stop(&sb, &project, &first))).contains("belongs to session"));
}

/// Item 13: a session id with control characters is refused (it would be written into the
/// lock and the state, and printed by `loop status`).
#[test]
fn a_session_id_with_control_characters_is_refused() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let hostile = payload("stop-working.json", &transcript, &project)
        .replace(SESSION, "abc\\u001b[2J\\nsession: forged");
    let output = stop(&sb, &project, &hostile);
    assert_eq!(output.status.code(), Some(0), "never exit 2 from a hook");
    let answer = answer(&output);
    assert!(!is_block(&answer));
    assert!(message(&answer).contains("control characters"));
    assert!(!message(&answer).chars().any(char::is_control));
    assert_eq!(state(&project)["iteration"], 0);
    assert!(!project.join(".autoctl/loop.lock").exists());
}

/// Item 13: `loop status` prints what files say (session ids, lock owners, paths); none of it
/// reaches the terminal raw.
#[test]
fn loop_status_escapes_control_characters() {
    let sb = Sandbox::new();
    let (project, _) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    fs::write(
        project.join(".autoctl/loop.lock"),
        "{\"owner\":\"session:x\\u001b]0;title\\u0007\",\"host\":\"h\\nactive: no\",\"heartbeat_at\":\"2999-01-01T00:00:00Z\"}",
    )
    .unwrap();
    let output = sb
        .cmd()
        .args(["loop", "status", "--dir"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    for line in text.lines() {
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
    assert!(!text.contains("\nactive: no"), "{text}");
    assert!(text.contains("x\\u{1b}]0;title\\u{7}"), "{text}");
}

/// Item 14: the budget's transcript cursor belongs to the file (device, inode), not to the
/// path string: the same transcript named `/d/./t.jsonl` is not counted again.
#[test]
fn the_transcript_cursor_follows_the_file_not_the_path_string() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, None);
    init(&sb, &project, &["--prompt", "go on", "--budget", "1000000"]);
    let spend = |id: &str| {
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&transcript)
            .unwrap();
        writeln!(
            file,
            "{}",
            json!({"type":"user","message":{"role":"user","content":"go on"}})
        )
        .unwrap();
        writeln!(
            file,
            "{}",
            json!({"type":"assistant","message":{"id": id, "role":"assistant",
                "content":[{"type":"text","text":"done a step"}],
                "usage":{"input_tokens":100,"output_tokens":10}}})
        )
        .unwrap();
    };
    let stop_via = |path: &str| {
        let input = json!({"session_id": SESSION, "transcript_path": path,
                           "cwd": project, "hook_event_name": "Stop",
                           "last_assistant_message": "done a step"})
        .to_string();
        assert!(is_block(&answer(&stop(&sb, &project, &input))));
        state(&project)["tokens"]["input"].as_u64().unwrap()
    };
    spend("msg_1");
    assert_eq!(stop_via(transcript.to_str().unwrap()), 100);
    let dotted = format!(
        "{}/./{}",
        transcript.parent().unwrap().display(),
        transcript.file_name().unwrap().to_string_lossy()
    );
    // Nothing new was written: the same file under another name adds nothing (a fresh
    // cursor would count the last turn again).
    assert_eq!(stop_via(&dotted), 100, "the same file under another name");
    spend("msg_2");
    let link = project.join("link.jsonl");
    std::os::unix::fs::symlink(&transcript, &link).unwrap();
    assert_eq!(stop_via(link.to_str().unwrap()), 200);
    assert_eq!(stop_via(&dotted), 200);
}

/// A project whose transcript holds the user's first prompt ("Work through the plan").
fn prompted_project(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let (project, transcript) = project(sb, None);
    append_lines(
        &transcript,
        &[json!({"type":"user","message":{"content":"Work through the plan"}})],
    );
    (project, transcript)
}

/// Append lines (JSON values) to a transcript.
fn append_lines(transcript: &Path, lines: &[Value]) {
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(transcript)
        .unwrap();
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
}

/// The line that starts a loop turn (Claude Code records the Stop hook's reason like this).
fn feedback_line(n: u64) -> Value {
    json!({"type":"user","isMeta":true,"message":{"role":"user",
        "content":format!("Stop hook feedback: go on ({n})")}})
}

fn assistant_line(id: &str, text: &str, input: u64, output: u64) -> Value {
    json!({"type":"assistant","message":{"id":id,"role":"assistant",
        "content":[{"type":"text","text":text}],
        "usage":{"input_tokens":input,"output_tokens":output,
                 "cache_creation_input_tokens":0,"cache_read_input_tokens":0}}})
}

fn stop_input(transcript: &Path, project: &Path, last: &str) -> String {
    json!({"session_id": SESSION, "transcript_path": transcript, "cwd": project,
           "hook_event_name": "Stop", "stop_hook_active": true,
           "last_assistant_message": last})
    .to_string()
}

/// Item 6: models end a sentence with the promise tag; it ends the loop anywhere in the last
/// message — but not inside code.
#[test]
fn a_promise_tag_ending_a_sentence_completes_the_loop_and_code_does_not() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let quoted = stop(
        &sb,
        &project,
        &stop_input(
            &transcript,
            &project,
            &format!("When everything passes I will print `{SENTINEL}`."),
        ),
    );
    assert!(is_block(&answer(&quoted)), "inline code is not a claim");
    let done = stop(
        &sb,
        &project,
        &stop_input(
            &transcript,
            &project,
            &format!("All 214 tests pass and the docs are updated. {SENTINEL}"),
        ),
    );
    let done = answer(&done);
    assert!(!is_block(&done));
    assert!(
        message(&done).contains("complete after 2 iterations"),
        "{}",
        message(&done)
    );
    assert_eq!(state(&project)["ended"]["outcome"], "done");
}

/// Item 6: `AUTOCTL_LOG=debug` (or `--log FILE`) writes a line per hook call, like seed 004's
/// `.cavekit/.debug.log`.
#[test]
fn autoctl_log_debug_writes_one_json_line_per_stop() {
    let sb = Sandbox::new();
    let (project, transcript) = project(&sb, Some("working.jsonl"));
    init(&sb, &project, &["--prompt", "go on"]);
    let input = payload("stop-working.json", &transcript, &project);
    let mut cmd = sb.std_cmd();
    cmd.env("AUTOCTL_LOG", "debug");
    let output = hook_with(cmd, &project, "stop", &input);
    assert!(is_block(&answer(&output)));
    let explicit = sb.path("elsewhere.log");
    let output = hook_with_args(
        &sb,
        &project,
        &["stop", "--log", explicit.to_str().unwrap()],
        &input,
    );
    assert!(is_block(&answer(&output)));
    let log = fs::read_to_string(project.join(".autoctl/debug.log")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert_eq!(lines[0]["command"], "hook stop");
    assert_eq!(lines[0]["kind"], "continue");
    assert_eq!(lines[0]["session_id"], SESSION);
    assert_eq!(lines[0]["iteration"], 1);
    assert!(lines[0]["elapsed_ms"].is_u64());
    let other: Value = serde_json::from_str(fs::read_to_string(&explicit).unwrap().trim()).unwrap();
    assert_eq!(other["iteration"], 2);
    // A value that is not a level is reported, and the hook still answers.
    let mut cmd = sb.std_cmd();
    cmd.env("AUTOCTL_LOG", "loud");
    let output = hook_with(cmd, &project, "stop", &input);
    assert!(is_block(&answer(&output)));
    assert!(String::from_utf8_lossy(&output.stderr).contains("AUTOCTL_LOG"));
}

fn hook_with_args(sb: &Sandbox, project: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = sb
        .std_cmd()
        .arg("hook")
        .args(args)
        .env("CLAUDE_PROJECT_DIR", project)
        .current_dir(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Item 7: Claude Code sometimes writes a turn's final message to the transcript after the
/// Stop hook ran (2 of 9 Stops in a live 2.1.332 run). Each turn here is one message of 1242
/// tokens that the transcript shows only at the next Stop: a budget of 3000 must end the loop
/// at the third Stop (3 × 1242 ≥ 3000), not the fourth.
#[test]
fn the_budget_counts_the_turn_that_just_ended_when_the_transcript_lags() {
    let sb = Sandbox::new();
    let (project, transcript) = prompted_project(&sb);
    init(
        &sb,
        &project,
        &["--prompt", "go on", "--budget", "3000", "--max-idle", "0"],
    );
    let mut outcomes = Vec::new();
    for turn in 1..=4u64 {
        if turn > 1 {
            // The previous turn's message arrives now, then this turn starts.
            append_lines(
                &transcript,
                &[
                    assistant_line(
                        &format!("m{}", turn - 1),
                        &format!("reply {}", turn - 1),
                        1200,
                        42,
                    ),
                    feedback_line(turn),
                ],
            );
        }
        let answer = answer(&stop(
            &sb,
            &project,
            &stop_input(&transcript, &project, &format!("reply {turn}")),
        ));
        outcomes.push(is_block(&answer));
        if !is_block(&answer) {
            assert!(
                message(&answer)
                    .contains("token budget exhausted: 3726 of 3000 tokens used in 3 iterations"),
                "{}",
                message(&answer)
            );
            break;
        }
    }
    assert_eq!(outcomes, [true, true, false]);
    assert_eq!(state(&project)["tokens_pending"], 1242);
}

/// Item 7: when the whole first turn lags, the status line (`autoctl statusline`, recorded
/// after the turn's message) is the fresher count.
#[test]
fn the_status_line_counts_a_first_turn_the_transcript_does_not_show_yet() {
    let sb = Sandbox::new();
    let (project, transcript) = prompted_project(&sb);
    init(&sb, &project, &["--prompt", "go on", "--budget", "1000"]);
    let status = json!({"session_id": SESSION, "cwd": project, "transcript_path": transcript,
        "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"}, "version": "2.1.332",
        "context_window": {"total_input_tokens": 1200, "total_output_tokens": 42,
                           "context_window_size": 1000000, "used_percentage": 0}});
    let mut child = sb
        .std_cmd()
        .arg("statusline")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(status.to_string().as_bytes())
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let answer = answer(&stop(
        &sb,
        &project,
        &stop_input(&transcript, &project, "reply 1"),
    ));
    assert!(!is_block(&answer));
    assert!(
        message(&answer).contains("token budget exhausted: 1242 of 1000"),
        "{}",
        message(&answer)
    );
}

/// Item 8: Claude Code 2.1.332 overrides the 9th consecutive block (seen live: "A hook blocked
/// the turn from ending 9 consecutive times—overriding and ending turn."). The loop ends itself
/// at that Stop, and `loop status` says it is not active.
#[test]
fn the_loop_ends_itself_at_the_block_claude_code_would_override() {
    let sb = Sandbox::new();
    let (project, transcript) = prompted_project(&sb);
    init(
        &sb,
        &project,
        &[
            "--prompt",
            "go on",
            "--max-idle",
            "0",
            "--max-iterations",
            "50",
        ],
    );
    for turn in 1..=9u64 {
        if turn > 1 {
            append_lines(&transcript, &[feedback_line(turn)]);
        }
        append_lines(
            &transcript,
            &[assistant_line(
                &format!("m{turn}"),
                &format!("reply {turn}"),
                10,
                1,
            )],
        );
        let answer = answer(&stop(
            &sb,
            &project,
            &stop_input(&transcript, &project, &format!("reply {turn}")),
        ));
        if turn < 9 {
            assert!(is_block(&answer), "turn {turn}");
        } else {
            assert!(!is_block(&answer));
            assert!(
                message(&answer).contains("this would be block 9"),
                "{}",
                message(&answer)
            );
        }
    }
    assert_eq!(state(&project)["ended"]["outcome"], "block-cap");
    let status = sb
        .cmd()
        .args(["loop", "status", "--dir"])
        .arg(&project)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    assert!(
        stdout(&status).starts_with("active: no\n"),
        "{}",
        stdout(&status)
    );
}

/// Item 8: when Claude Code overrode a block anyway (another hook that blocks too, a cap the
/// loop could not see), its notice in the transcript makes `loop status` say the loop is not
/// active, and the next Stop ends it.
#[test]
fn loop_status_sees_a_block_claude_code_overrode() {
    let sb = Sandbox::new();
    let (project, transcript) = prompted_project(&sb);
    init(&sb, &project, &["--prompt", "go on"]);
    append_lines(&transcript, &[assistant_line("m1", "reply 1", 10, 1)]);
    assert!(is_block(&answer(&stop(
        &sb,
        &project,
        &stop_input(&transcript, &project, "reply 1"),
    ))));
    let status = |sb: &Sandbox| {
        sb.cmd()
            .args(["loop", "status", "--dir"])
            .arg(&project)
            .output()
            .unwrap()
    };
    assert_eq!(status(&sb).status.code(), Some(0));
    append_lines(
        &transcript,
        &[
            feedback_line(2),
            assistant_line("m2", "reply 2", 10, 1),
            json!({"type":"system","subtype":"informational","isMeta":false,"level":"warning",
                "content":"A hook blocked the turn from ending 9 consecutive times\u{2014}overriding and ending turn. For Stop/SubagentStop hooks, check stop_hook_active in the input and return success while it's true. Set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit."}),
        ],
    );
    let after = status(&sb);
    assert_eq!(after.status.code(), Some(1));
    let text = stdout(&after);
    assert!(text.starts_with("active: no\n"), "{text}");
    assert!(
        text.contains("overrode the loop's Stop hook after 9 consecutive blocks"),
        "{text}"
    );
    // The next Stop (the person typed something) ends the loop for good.
    append_lines(
        &transcript,
        &[
            json!({"type":"user","message":{"content":"what now?"}}),
            assistant_line("m3", "reply 3", 10, 1),
        ],
    );
    let ended = answer(&stop(
        &sb,
        &project,
        &stop_input(&transcript, &project, "reply 3"),
    ));
    assert!(!is_block(&ended));
    assert_eq!(state(&project)["ended"]["outcome"], "overridden");
    assert!(!active(&project));
}

/// Item 4 (seed 002): three compactions within one iteration stop the loop with the seed's
/// warning.
#[test]
fn three_compactions_in_one_turn_stop_the_loop() {
    let sb = Sandbox::new();
    let (project, transcript) = prompted_project(&sb);
    init(&sb, &project, &["--prompt", "go on"]);
    let boundary = json!({"type":"system","subtype":"compact_boundary","content":"Conversation compacted",
        "compactMetadata":{"trigger":"auto","preTokens":180000}});
    append_lines(
        &transcript,
        &[boundary.clone(), assistant_line("m1", "reply 1", 10, 1)],
    );
    assert!(is_block(&answer(&stop(
        &sb,
        &project,
        &stop_input(&transcript, &project, "reply 1")
    ))));
    assert_eq!(state(&project)["compactions"]["count"], 1);
    append_lines(
        &transcript,
        &[
            feedback_line(2),
            boundary.clone(),
            boundary.clone(),
            boundary,
            assistant_line("m2", "reply 2", 10, 1),
        ],
    );
    let stopped = answer(&stop(
        &sb,
        &project,
        &stop_input(&transcript, &project, "reply 2"),
    ));
    assert!(!is_block(&stopped));
    assert!(
        message(&stopped).contains("3 context compactions in iteration 2 (limit 3): context budget insufficient for this task"),
        "{}",
        message(&stopped)
    );
    assert_eq!(state(&project)["ended"]["outcome"], "compaction-limit");
}

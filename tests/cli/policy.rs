//! `autoctl policy check|show|log` and `autoctl hook permission-request`, driven the way a
//! person and Claude Code drive them: the real recorded PermissionRequest payloads of Claude
//! Code 2.1.332 on stdin, the exact stdout and exit code read back.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

const ALLOW: &str = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

/// Every real PermissionRequest payload recorded from Claude Code.
fn recorded_payloads() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in ["hook/claude-code", "policy/payloads"] {
        let root = fixture(dir);
        for entry in walk(&root) {
            let name = entry.file_name().unwrap().to_string_lossy().to_string();
            if name.contains("PermissionRequest") && name.ends_with(".json") {
                found.push(entry);
            }
        }
    }
    found.sort();
    assert!(!found.is_empty());
    found
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// The sandbox's project, as a payload's cwd.
fn project(sb: &Sandbox) -> PathBuf {
    let dir = sb.module("proj");
    fs::create_dir_all(dir.join("src")).unwrap();
    // A repository's top: git is approved only there.
    fs::create_dir_all(dir.join(".git")).unwrap();
    dir
}

/// A real payload with its paths moved into the sandbox and, when given, the tool call
/// replaced.
fn payload(sb: &Sandbox, template: &Path, call: Option<(&str, Value)>) -> String {
    let home = sb.path("home").display().to_string();
    let proj = project(sb).display().to_string();
    let text = fs::read_to_string(template)
        .unwrap()
        .replace("/home/dev/proj/p1", &proj)
        .replace("/home/dev/proj", &proj)
        .replace("/home/dev", &home);
    let mut value: Value = serde_json::from_str(&text).unwrap();
    if let Some((tool, input)) = call {
        value["tool_name"] = json!(tool);
        value["tool_input"] = input;
    }
    value.to_string()
}

fn hook_cmd(sb: &Sandbox, args: &[&str]) -> std::process::Command {
    let mut cmd = sb.std_cmd();
    cmd.args(["hook", "permission-request"])
        .args(args)
        .env("CLAUDE_PROJECT_DIR", sb.path("proj"))
        .current_dir(sb.path("proj"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Run the hook as Claude Code does: the payload on stdin, then stdin closed.
fn hook(sb: &Sandbox, args: &[&str], stdin: &[u8]) -> Output {
    project(sb);
    let mut child = hook_cmd(sb, args).spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // A hook may answer before reading everything (a payload past its limit).
    let _ = pipe.write_all(stdin);
    drop(pipe);
    finish(child)
}

/// Wait for the hook, failing the test if it outlives Claude Code's own hook timeout (60 s).
fn finish(mut child: Child) -> Output {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the hook outlived Claude Code's 60 s hook timeout");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Run the hook in a tmux pane's environment (so it records the pane's state) with
/// `AUTOCTL_STATE_DIR` moved when given, the payload on stdin.
fn hook_in_pane(sb: &Sandbox, args: &[&str], state: Option<&Path>, stdin: &[u8]) -> Output {
    let mut cmd = hook_cmd(sb, args);
    cmd.env("TMUX", "/tmp/tmux-0/autoctl-policy-test,4242,0")
        .env("TMUX_PANE", "%4");
    if let Some(state) = state {
        cmd.env("AUTOCTL_STATE_DIR", state);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    finish(child)
}

fn bash(command: &str) -> Value {
    json!({"command": command, "description": "a step"})
}

fn write_policy(sb: &Sandbox, text: &str) -> PathBuf {
    sb.write("home/.config/autoctl/policy.json", text)
}

#[test]
fn the_hook_answers_the_real_recorded_payloads() {
    let sb = Sandbox::new();
    // What each recorded call must get: allowed, or no decision (Claude Code's prompt).
    let allowed = |raw: &Value| match raw["tool_name"].as_str().unwrap() {
        "Bash" => matches!(
            raw["tool_input"]["command"].as_str().unwrap(),
            "npm test" | "cargo test --workspace"
        ),
        // Inside the project, not a sensitive path.
        "Write" | "Edit" => !raw["tool_input"]["file_path"]
            .as_str()
            .unwrap()
            .contains("/.claude/"),
        // A read outside the project (/etc/hostname) only reads.
        "Read" => true,
        // WebFetch, AskUserQuestion: no rule.
        _ => false,
    };
    let mut seen = 0;
    for template in recorded_payloads() {
        let raw: Value = serde_json::from_str(&fs::read_to_string(&template).unwrap()).unwrap();
        let out = hook(&sb, &[], payload(&sb, &template, None).as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", template.display());
        let expected = if allowed(&raw) {
            format!("{ALLOW}\n")
        } else {
            String::new()
        };
        assert_eq!(stdout(&out), expected, "{}", template.display());
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        seen += 1;
    }
    assert!(seen >= 12, "{seen} recorded payloads");
    // The recorded `rm -rf build`, with `on_destructive: "deny"`: a deny naming the marker.
    write_policy(&sb, r#"{"version": 1, "on_destructive": "deny"}"#);
    let template = fixture("hook/claude-code/reference/PermissionRequest-deny-rm-rf.json");
    let out = hook(&sb, &[], payload(&sb, &template, None).as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(answer["hookSpecificOutput"]["decision"]["behavior"], "deny");
    let message = answer["hookSpecificOutput"]["decision"]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("destructive:rm"), "{message}");
}

/// The table of destructive and harmless calls, through the hook door.
#[test]
fn the_table_through_the_hook_door() {
    let sb = Sandbox::new();
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let table = fs::read_to_string(fixture("policy/commands.tsv")).unwrap();
    let home = sb.path("home").display().to_string();
    let proj = project(&sb).display().to_string();
    let mut wrong = Vec::new();
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut cols = line.splitn(3, '\t');
        let (expect, tool, text) = (
            cols.next().unwrap(),
            cols.next().unwrap(),
            cols.next().unwrap(),
        );
        // The table's context is /home/dev/proj with HOME /home/dev: move it into the sandbox.
        let text = text
            .replace("/home/dev/proj", &proj)
            .replace("/home/dev", &home);
        let input = if tool == "Bash" {
            bash(&text)
        } else {
            json!({"file_path": text, "content": "x", "old_string": "a", "new_string": "b"})
        };
        let out = hook(
            &sb,
            &[],
            payload(&sb, &template, Some((tool, input))).as_bytes(),
        );
        rows += 1;
        let got = stdout(&out);
        let ok = out.status.code() == Some(0)
            && match expect {
                "harmless" => got == format!("{ALLOW}\n"),
                _ => got.is_empty(),
            };
        if !ok {
            wrong.push(format!(
                "{expect} {tool} {text}: {got:?} {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(rows >= 150);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn bad_input_is_no_decision_one_line_and_exit_0() {
    let sb = Sandbox::new();
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let good = payload(&sb, &template, None);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("malformed JSON", b"{\"tool_name\": \"Bash\",".to_vec()),
        ("not an object", b"[1, 2]".to_vec()),
        ("empty stdin", Vec::new()),
        ("invalid UTF-8", b"{\"tool_name\": \"Bash\xff\"}".to_vec()),
        ("no tool_name", b"{\"tool_input\": {}}".to_vec()),
        (
            "tool_input not an object",
            b"{\"tool_name\": \"Bash\", \"tool_input\": \"ls\"}".to_vec(),
        ),
        (
            "duplicate key",
            good.replacen("\"tool_name\"", "\"tool_name\":\"Read\",\"tool_name\"", 1)
                .into_bytes(),
        ),
        (
            "another event",
            good.replace("\"PermissionRequest\"", "\"PreToolUse\"")
                .into_bytes(),
        ),
    ];
    for (what, stdin) in cases {
        let out = hook(&sb, &[], &stdin);
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert_eq!(stdout(&out), "", "{what}");
        let line = one_stderr_line(&out);
        assert!(line.contains("no decision"), "{what}: {line}");
    }
    // A flag it does not know (an older autoctl, a typo in settings.json): exit 0, not 2.
    let out = hook(&sb, &["--bogus"], good.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
    one_stderr_line(&out);
    // An invalid policy file: no decision for everything, never a guess.
    write_policy(&sb, r#"{"allow": [{"id": "x"}]}"#);
    let out = hook(&sb, &[], good.as_bytes());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    assert!(one_stderr_line(&out).contains("policy.json"));
    // A FIFO where the policy file should be is refused at once, not waited on.
    fs::remove_file(sb.path("home/.config/autoctl/policy.json")).unwrap();
    let fifo = sb.path("home/.config/autoctl/policy.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = hook(&sb, &[], good.as_bytes());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    one_stderr_line(&out);
}

#[test]
fn a_policy_inside_the_project_is_never_read() {
    let sb = Sandbox::new();
    let proj = project(&sb);
    let inside = sb.write(
        "proj/policy.json",
        r#"{"allow": [{"id": "all", "tool": "*"}]}"#,
    );
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let stdin = payload(&sb, &template, Some(("Bash", bash("curl https://x"))));
    let out = hook(
        &sb,
        &["--policy", inside.to_str().unwrap()],
        stdin.as_bytes(),
    );
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    assert!(one_stderr_line(&out).contains("inside the project"));
    // The same file outside the project is the user's.
    let outside = sb.write("home/mine.json", fs::read(&inside).unwrap());
    let out = hook(
        &sb,
        &["--policy", outside.to_str().unwrap()],
        stdin.as_bytes(),
    );
    assert_eq!(stdout(&out), format!("{ALLOW}\n"));
    let _ = proj;
}

/// Claude Code waits for a hook up to its timeout (60 s by default); autoctl answers within
/// its own --timeout whatever happens: a writer that never closes stdin, a huge tool_input.
#[test]
fn the_hook_never_outlives_claude_codes_timeout() {
    let sb = Sandbox::new();
    project(&sb);
    // A payload half written and stdin held open.
    let mut child = hook_cmd(&sb, &["--timeout", "1s"]).spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(b"{\"tool_name\": \"Bash\", \"tool_input\": {\"command\": \"ls")
        .unwrap();
    let out = finish(child);
    drop(pipe);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    assert!(one_stderr_line(&out).contains("no decision"));
    // A 20 MB command: read, judged too large to prove, no decision.
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let huge = format!("ls {}", "x".repeat(20 * 1024 * 1024));
    let stdin = payload(&sb, &template, Some(("Bash", bash(&huge))));
    let out = hook(&sb, &[], stdin.as_bytes());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    // Past the payload limit: not read whole.
    let too_big = payload(
        &sb,
        &template,
        Some((
            "Write",
            json!({"file_path": "a", "content": "y".repeat(40 * 1024 * 1024)}),
        )),
    );
    let out = hook(&sb, &[], too_big.as_bytes());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    assert!(one_stderr_line(&out).contains("larger than"));
}

/// A state directory the hook cannot write (a file in its place, a directory that cannot be
/// made even by root, a directory or a planted symlink where the decision log goes) never
/// costs the answer: the decision is printed, exit 0, a warning on stderr, nothing followed.
#[test]
fn an_unwritable_state_dir_never_costs_the_answer() {
    let sb = Sandbox::new();
    let proj = project(&sb);
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let stdin = payload(&sb, &template, Some(("Bash", bash("cargo test"))));
    let planted = sb.write("elsewhere.txt", "not a log\n");
    let file = sb.write("a-file", "");
    let log_is_dir = sb.path("log-is-dir");
    fs::create_dir_all(log_is_dir.join("policy/decisions.jsonl")).unwrap();
    let symlinked = sb.path("symlinked");
    fs::create_dir_all(symlinked.join("policy")).unwrap();
    std::os::unix::fs::symlink(&planted, symlinked.join("policy/decisions.jsonl")).unwrap();
    let cases: [(&str, PathBuf); 4] = [
        ("a file in its place", file),
        (
            "cannot be made",
            PathBuf::from("/proc/autoctl-no-such-dir/state"),
        ),
        ("the log is a directory", log_is_dir),
        ("a symlink planted at the log", symlinked),
    ];
    for (what, state) in cases {
        let out = hook_in_pane(&sb, &[], Some(&state), stdin.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert_eq!(stdout(&out), format!("{ALLOW}\n"), "{what}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("warning"),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(fs::read_to_string(&planted).unwrap(), "not a log\n");
    let _ = proj;
}

#[test]
fn decisions_are_logged_without_file_contents() {
    let sb = Sandbox::new();
    // Nothing logged yet: one line says so, and where the log lives.
    let empty = sb.cmd().args(["policy", "log"]).output().unwrap();
    assert_eq!(empty.status.code(), Some(0));
    assert!(empty.stdout.is_empty());
    assert!(
        one_stderr_line(&empty).starts_with("autoctl: no decision logged yet in "),
        "{empty:?}"
    );
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let proj = project(&sb);
    for call in [
        ("Bash", bash("cargo test")),
        ("Bash", bash("rm -rf build")),
        (
            "Write",
            json!({"file_path": proj.join("src/a.rs"), "content": "SECRET-CONTENT"}),
        ),
    ] {
        let out = hook(&sb, &[], payload(&sb, &template, Some(call)).as_bytes());
        assert_eq!(out.status.code(), Some(0));
    }
    let out = sb
        .cmd()
        .args(["policy", "log", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let entries = json_lines(&out);
    let seen: Vec<(String, String, String)> = entries
        .iter()
        .map(|e| {
            assert_eq!(e["door"], "hook");
            assert_eq!(e["session"], "b2dae0d7-5287-4982-bbb2-9598078b5d04");
            (
                e["tool"].as_str().unwrap().to_string(),
                e["decision"].as_str().unwrap().to_string(),
                e["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("Bash".into(), "allow".into(), "runner".into()),
            ("Bash".into(), "no-decision".into(), "destructive:rm".into()),
            ("Write".into(), "allow".into(), "write-in-project".into()),
        ]
    );
    assert_eq!(entries[0]["input"], "cargo test");
    let log = fs::read_to_string(sb.path("state/policy/decisions.jsonl")).unwrap();
    assert!(!log.contains("SECRET-CONTENT"));
    let text = sb
        .cmd()
        .args(["policy", "log", "--tail", "1"])
        .output()
        .unwrap();
    let line = stdout(&text);
    assert_eq!(line.lines().count(), 1);
    assert!(line.contains("write-in-project"), "{line}");
}

/// Issue 23 item 5: on main c968843 ~31,000 concurrent permission-request calls left a torn
/// line in the decision log (two entries unreadable). Writers now take turns under the log's
/// lock and cut off a line a killed writer left unfinished: after a hook killed half-way
/// through its line and 40 hooks at once, every line of the log is a whole entry.
#[test]
fn decision_log_lines_stay_whole_after_a_kill_and_under_concurrency() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let sb = Sandbox::new();
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    project(&sb);
    let call = |n: usize| {
        let command = format!("cargo test case_{n} {}", "x".repeat(n * 37 % 3000));
        payload(&sb, &template, Some(("Bash", bash(&command))))
    };
    let spawn = |n: usize, failpoint: Option<&str>| {
        let mut cmd = hook_cmd(&sb, &[]);
        if let Some(failpoint) = failpoint {
            cmd.env("AUTOCTL_FAILPOINT", failpoint);
        }
        let mut child = cmd.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(call(n).as_bytes());
        drop(pipe);
        child
    };
    let killed = finish(spawn(0, Some("decision-log-half-written")));
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&killed.status),
        Some(9),
        "{killed:?}"
    );
    let log = sb.path("state/policy/decisions.jsonl");
    assert!(!fs::read(&log).unwrap().ends_with(b"\n"), "half a line");
    let children: Vec<Child> = (1..=40).map(|n| spawn(n, None)).collect();
    for child in children {
        let out = finish(child);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let out = sb
        .cmd()
        .args(["policy", "log", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut seen: Vec<String> = json_lines(&out)
        .iter()
        .map(|e| {
            e["input"]
                .as_str()
                .unwrap()
                .split(' ')
                .nth(2)
                .unwrap()
                .to_string()
        })
        .collect();
    seen.sort();
    let mut want: Vec<String> = (1..=40).map(|n| format!("case_{n}")).collect();
    want.sort();
    assert_eq!(seen, want, "every entry once, the killed one cut off");
    let text = fs::read_to_string(&log).unwrap();
    assert!(text.ends_with('\n'));
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "{text}"
    );
}

#[test]
fn policy_check_prints_the_decision_and_its_rule() {
    let sb = Sandbox::new();
    let proj = project(&sb);
    let check = |tool: &str, input: &str| {
        sb.cmd()
            .args(["policy", "check", "--tool", tool, "--input", input, "--cwd"])
            .arg(&proj)
            .output()
            .unwrap()
    };
    let out = check("Bash", r#"{"command": "cargo test && git status"}"#);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).starts_with("allow runner+read-only: "),
        "{}",
        stdout(&out)
    );
    let out = check("Bash", r#"{"command": "npx rimraf ."}"#);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("no-decision destructive:rm: "),
        "{}",
        stdout(&out)
    );
    let out = sb
        .cmd()
        .args([
            "policy", "check", "--format", "json", "--tool", "Write", "--input",
        ])
        .arg(json!({"file_path": proj.join(".claude/settings.json")}).to_string())
        .args(["--cwd"])
        .arg(&proj)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let decision = &json_lines(&out)[0];
    assert_eq!(decision["decision"], "no-decision");
    assert_eq!(decision["rule"], "destructive:sensitive-path");
    // Bad input: exit 2 with one line.
    for bad in ["{", "[]", "{\"a\":1,\"a\":2}"] {
        let out = check("Bash", bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        one_stderr_line(&out);
    }
    let out = sb
        .cmd()
        .args([
            "policy",
            "check",
            "--tool",
            "Bash",
            "--policy",
            "/nonexistent/p.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    one_stderr_line(&out);
}

#[test]
fn a_user_rule_whose_example_is_decided_the_other_way_is_refused_in_one_line() {
    let sb = Sandbox::new();
    let check = |sb: &Sandbox| {
        sb.cmd()
            .args(["policy", "check", "--tool", "Bash", "--input"])
            .arg(bash("./scripts/deploy-staging.sh --dry-run").to_string())
            .output()
            .unwrap()
    };
    // Examples that hold: the file is read and its rule decides.
    write_policy(
        &sb,
        r#"{"allow": [{"id": "stage", "tool": "Bash", "pattern": "./scripts/deploy-staging.sh *",
             "match": ["./scripts/deploy-staging.sh --dry-run"],
             "not_match": ["./scripts/deploy-prod.sh --dry-run"]}]}"#,
    );
    let out = check(&sb);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout(&out).starts_with("allow user:stage"),
        "{}",
        stdout(&out)
    );
    // A not_match the rule approves after all: the file is refused, one line, exit 2.
    write_policy(
        &sb,
        r#"{"allow": [{"id": "stage", "tool": "Bash", "pattern": "./scripts/deploy-*",
             "match": ["./scripts/deploy-staging.sh --dry-run"],
             "not_match": ["./scripts/deploy-prod.sh --dry-run"]}]}"#,
    );
    let out = check(&sb);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = one_stderr_line(&out);
    assert!(
        line.contains(
            "rule stage: not_match example \"./scripts/deploy-prod.sh --dry-run\" is approved by it"
        ),
        "{line}"
    );
    // The hook door never fails: it exits 0 and approves nothing with the refused file.
    let out = hook(
        &sb,
        &[],
        payload(
            &sb,
            &fixture("policy/payloads/PermissionRequest-bash-harmless.json"),
            Some(("Bash", bash("./scripts/deploy-staging.sh --dry-run"))),
        )
        .as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!stdout(&out).contains("allow"), "{}", stdout(&out));
}

/// `policy test` reports every example decided the other way (the file's and the built-in
/// rules'), where reading the file elsewhere stops at the first.
#[test]
fn policy_test_reports_every_wrong_example_of_the_file_and_the_built_in_rules() {
    let sb = Sandbox::new();
    let test = |sb: &Sandbox, format: &str| {
        sb.cmd()
            .args(["policy", "test", "--format", format])
            .output()
            .unwrap()
    };
    // No policy file: the built-in rules' examples, all decided as written.
    let out = test(&sb, "text");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let count: usize = lines[0]
        .strip_prefix("built-in rules (rules/policy.json): ")
        .and_then(|rest| rest.strip_suffix(" examples, all decided as written"))
        .unwrap_or_else(|| panic!("{text}"))
        .parse()
        .unwrap();
    assert!(count > 800, "{text}");
    // A file whose examples hold.
    let file = write_policy(
        &sb,
        r#"{"allow": [{"id": "stage", "tool": "Bash", "pattern": "./scripts/deploy-staging.sh *",
             "match": ["./scripts/deploy-staging.sh --dry-run"],
             "not_match": ["./scripts/deploy-prod.sh --dry-run"]}],
           "deny": [{"id": "no-prod", "tool": "Bash", "pattern": "*deploy-prod*",
             "match": ["./scripts/deploy-prod.sh"], "not_match": ["ls"]}]}"#,
    );
    let out = test(&sb, "text");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout(&out).starts_with(&format!(
            "{}: 4 examples, all decided as written\n",
            file.display()
        )),
        "{}",
        stdout(&out)
    );
    // Three wrong ones in two rules: each is printed, then the counts; one error line, exit 2.
    write_policy(
        &sb,
        r#"{"allow": [{"id": "stage", "tool": "Bash", "pattern": "./scripts/deploy-*",
             "match": ["./scripts/deploy-staging.sh --dry-run", "rm -rf build"],
             "not_match": ["./scripts/deploy-qa.sh --dry-run"]}],
           "deny": [{"id": "no-prod", "tool": "Bash", "pattern": "*deploy-prod*",
             "match": ["./scripts/deploy-prod.sh"], "not_match": ["./deploy-prod"]}]}"#,
    );
    let out = test(&sb, "text");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        one_stderr_line(&out),
        format!("autoctl: 3 of {} examples decided the other way", count + 5)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[0].contains("rule stage: match example \"rm -rf build\" is not approved by it (no-decision destructive:rm"),
        "{text}"
    );
    assert!(
        lines[1].contains(
            "rule stage: not_match example \"./scripts/deploy-qa.sh --dry-run\" is approved by it"
        ),
        "{text}"
    );
    assert!(
        lines[2].contains("rule no-prod: not_match example \"./deploy-prod\" is denied by it"),
        "{text}"
    );
    assert!(
        lines[3].ends_with(": 5 examples, 3 decided the other way"),
        "{text}"
    );
    assert!(lines[4].ends_with("all decided as written"), "{text}");
    // JSON: one object per source.
    let out = test(&sb, "json");
    assert_eq!(out.status.code(), Some(2));
    let objects = json_lines(&out);
    assert_eq!(objects.len(), 2);
    assert_eq!(objects[0]["examples"], 5);
    assert_eq!(objects[0]["wrong"].as_array().unwrap().len(), 3);
    assert_eq!(objects[1]["examples"], count);
    assert_eq!(objects[1]["wrong"], json!([]));
    // A file that is not a policy at all: one line, exit 2, nothing on stdout.
    write_policy(&sb, r#"{"allow": 3}"#);
    let out = test(&sb, "text");
    assert_eq!(out.status.code(), Some(2));
    one_stderr_line(&out);
    assert_eq!(stdout(&out), "");
}

#[test]
fn policy_check_batch_decides_one_line_per_payload() {
    let sb = Sandbox::new();
    let proj = project(&sb);
    let lines = [
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "cwd": proj})
            .to_string(),
        "not json".to_string(),
        json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}, "cwd": proj})
            .to_string(),
        String::new(),
        json!({"tool_name": "Edit", "tool_input": {"file_path": "src/a.rs"}, "cwd": proj})
            .to_string(),
    ];
    let out = sb
        .cmd()
        .args(["policy", "check", "--batch"])
        .write_stdin(lines.join("\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a line that is not a payload");
    let got = json_lines(&out);
    assert_eq!(got.len(), 4);
    assert_eq!(got[0]["decision"], "allow");
    assert!(got[1]["error"].is_string());
    assert_eq!(got[2]["decision"], "no-decision");
    assert_eq!(got[3]["rule"], "write-in-project");
}

/// The docs say exactly which rule approves what: every rule that approves a harmless call of
/// the table is one `policy show` prints, and each of those is in docs/policy.md's table, in
/// `policy --help` and in its man page, with the policy file and its schema.
#[test]
fn every_approving_rule_is_shown_and_documented() {
    let sb = Sandbox::new();
    let proj = project(&sb);
    let out = sb
        .cmd()
        .args(["policy", "show", "--format", "json"])
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<String> = shown["builtin"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let table = fs::read_to_string(fixture("policy/commands.tsv")).unwrap();
    let home = sb.path("home").display().to_string();
    let lines: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("harmless\t"))
        .map(|l| {
            let mut cols = l.splitn(3, '\t').skip(1);
            let (tool, text) = (cols.next().unwrap(), cols.next().unwrap());
            let text = text
                .replace("/home/dev/proj", &proj.display().to_string())
                .replace("/home/dev", &home);
            let input = if tool == "Bash" {
                bash(&text)
            } else {
                json!({"file_path": text, "content": "x"})
            };
            json!({"tool_name": tool, "tool_input": input, "cwd": proj}).to_string()
        })
        .collect();
    let out = sb
        .cmd()
        .args(["policy", "check", "--batch"])
        .current_dir(&proj)
        .write_stdin(lines.join("\n"))
        .output()
        .unwrap();
    let decisions = json_lines(&out);
    assert_eq!(decisions.len(), lines.len());
    let mut used = std::collections::BTreeSet::new();
    for d in &decisions {
        assert_eq!(d["decision"], "allow", "{d}");
        for part in d["rule"].as_str().unwrap().split('+') {
            assert!(ids.iter().any(|id| id == part), "{part} is not shown: {d}");
            used.insert(part.to_string());
        }
    }
    assert_eq!(used.len(), ids.len(), "the table uses every rule: {used:?}");
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.md")).unwrap();
    let help = stdout(&sb.cmd().args(["policy", "--help"]).output().unwrap());
    let man =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("man/autoctl-policy.1"))
            .unwrap()
            .replace("\\-", "-");
    for id in &ids {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "docs/policy.md: {id}"
        );
        assert!(help.contains(&format!("  {id} ")), "policy --help: {id}");
        assert!(man.contains(id.as_str()), "man autoctl-policy: {id}");
    }
    for doc in [&readme, &help, &man] {
        assert!(doc.contains("autoctl/policy.json") && doc.contains("schema show policy"));
    }
}

#[test]
fn policy_show_prints_built_in_and_user_rules() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["policy", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for id in [
        "read-only",
        "runner",
        "mkdir",
        "write-in-project",
        "git-write",
    ] {
        assert!(text.contains(&format!("  {id}\t")), "{id}");
    }
    assert!(text.contains("built-in rules only"));
    write_policy(
        &sb,
        r#"{"version": 1, "on_destructive": "deny",
            "allow": [{"id": "staging", "tool": "Bash", "pattern": "./scripts/deploy-staging.sh"}],
            "deny": [{"id": "no-prod", "tool": "Bash", "pattern": "*prod*", "message": "not prod"}]}"#,
    );
    let out = sb
        .cmd()
        .args(["policy", "show", "--format", "json"])
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["on_destructive"], "deny");
    assert_eq!(shown["allow"][0]["id"], "staging");
    assert_eq!(shown["deny"][0]["message"], "not prod");
    assert_eq!(shown["builtin"].as_array().unwrap().len(), 5);
    // The file is checked against its schema (the same one `schema show policy` prints).
    let schema = sb
        .cmd()
        .args(["schema", "show", "policy"])
        .output()
        .unwrap();
    assert_eq!(schema.status.code(), Some(0));
    write_policy(&sb, r#"{"on_destructive": "maybe"}"#);
    let out = sb.cmd().args(["policy", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("/on_destructive"));
}

/// The hook also records the session's state, like `hook event`: working when it allowed the
/// call, waiting-for-permission when Claude Code shows its prompt.
#[test]
fn the_hook_records_the_sessions_state() {
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    for (command, state) in [
        ("cargo test", "working"),
        ("rm -rf build", "waiting-for-permission"),
    ] {
        let sb = Sandbox::new();
        project(&sb);
        let mut cmd = hook_cmd(&sb, &[]);
        cmd.env("TMUX", "/tmp/tmux-0/autoctl-policy-test,4242,0")
            .env("TMUX_PANE", "%3");
        let mut child = cmd.spawn().unwrap();
        let stdin = payload(&sb, &template, Some(("Bash", bash(command))));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = finish(child);
        assert_eq!(out.status.code(), Some(0));
        let mut records = crate::util::hook_records(&sb.path("state/hooks"), false);
        assert_eq!(records.len(), 1, "{records:?}");
        let record = records.remove(0);
        assert_eq!(record["state"], state, "{command}: {record}");
        assert_eq!(record["tool"], "Bash");
    }
}

/// A state store that does not answer (another process holds its lock, as a hung disk
/// would): the answer is printed first, and the hook still ends within its timeout.
#[test]
fn a_stalled_state_store_cannot_hold_the_hook() {
    let sb = Sandbox::new();
    project(&sb);
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let stdin = payload(&sb, &template, Some(("Bash", bash("cargo test"))));
    let run = |args: &[&str]| hook_in_pane(&sb, args, None, stdin.as_bytes());
    assert_eq!(stdout(&run(&[])), format!("{ALLOW}\n"));
    // The store takes a flock on the records directory itself for every update.
    let lock = sb.path("state/hooks");
    assert_eq!(
        crate::util::hook_records(&lock, false).len(),
        1,
        "the session's record"
    );
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["sleep", "120"])
        .spawn()
        .unwrap();
    // Wait until the holder has the lock (a second flock that does not wait fails), or the
    // hook could find the store free and the test would prove nothing.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::process::Command::new("flock")
        .args(["--nonblock"])
        .arg(&lock)
        .arg("true")
        .status()
        .unwrap()
        .success()
    {
        assert!(Instant::now() < deadline, "the holder never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run(&["--timeout", "2s"]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), format!("{ALLOW}\n"));
}

/// A real Claude Code 2.1.332 permission screen with the table's call put in place of the
/// captured one, as Claude Code draws it: a command between the dashed lines (`│ ` lines
/// when it is longer than the box), a path under "Create file" / "Edit file", `Read(PATH)`.
fn screen_for(tool: &str, text: &str) -> String {
    // The capture's lines without their trailing blanks (tmux pads to the pane's width).
    let capture = |name: &str| {
        let text = fs::read_to_string(fixture(&format!("policy/screens/{name}.txt"))).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        lines.join("\n") + "\n"
    };
    // Claude Code shows paths inside the project relative to it.
    let shown = text.strip_prefix("/home/dev/proj/").unwrap_or(text);
    match tool {
        "Bash" => {
            let first_word = text.split_whitespace().next().unwrap_or("");
            let body = if text.contains('\n') || text.chars().count() > 116 {
                let mut lines = Vec::new();
                for line in text.lines() {
                    let chars: Vec<char> = line.chars().collect();
                    for chunk in chars.chunks(114) {
                        lines.push(format!(" │ {}", chunk.iter().collect::<String>()));
                    }
                }
                lines.join("\n")
            } else {
                format!(" {text}")
            };
            capture("bash-harmless")
                .replace(" cargo test --workspace\n", &format!("{body}\n"))
                .replace(
                    "● Bash(cargo test --workspace)",
                    &format!("● Bash({first_word})"),
                )
                .replace("for: cargo test *", &format!("for: {first_word} *"))
        }
        "Write" => {
            let name = shown.rsplit('/').next().unwrap();
            capture("write-new")
                .replace(" hello.py\n", &format!(" {shown}\n"))
                .replace("Write(hello.py)", &format!("Write({shown})"))
                .replace("create hello.py?", &format!("create {name}?"))
        }
        "Edit" => {
            let name = shown.rsplit('/').next().unwrap();
            capture("edit-existing")
                .replace(" notes.txt\n", &format!(" {shown}\n"))
                .replace("Update(notes.txt)", &format!("Update({shown})"))
                .replace("edit to notes.txt?", &format!("edit to {name}?"))
        }
        "Read" => capture("read-outside")
            .replace("Read(/etc/hostname)", &format!("Read({shown})"))
            .replace("⎿  /etc/hostname", &format!("⎿  {shown}")),
        other => panic!("no capture for {other}"),
    }
}

/// The table of destructive and harmless calls, through the screen door: the classifier
/// every supervisor uses, on a real 2.1.332 permission screen with the call substituted.
#[test]
fn the_table_through_the_screen_door() {
    let sb = Sandbox::new();
    let table = fs::read_to_string(fixture("policy/commands.tsv")).unwrap();
    let mut wrong = Vec::new();
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut cols = line.splitn(3, '\t');
        let (expect, tool, text) = (
            cols.next().unwrap(),
            cols.next().unwrap(),
            cols.next().unwrap(),
        );
        let screen = screen_for(tool, text);
        let out = sb
            .cmd()
            .args([
                "pane",
                "classify",
                "-",
                "--agent",
                "claude",
                "--foreground",
                "claude",
                "--format",
                "json",
            ])
            .write_stdin(screen.clone())
            .output()
            .unwrap();
        rows += 1;
        assert_eq!(out.status.code(), Some(0), "{tool} {text}");
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        // git is approved only where the working directory is known to be the project's
        // repository, which a screen does not show: the person answers.
        let git = tool == "Bash" && text.starts_with("git ");
        let want = if expect == "harmless" && !git {
            "answer"
        } else {
            "escalate"
        };
        if got["class"] != "permission" || got["action"] != want {
            wrong.push(format!(
                "{expect} {tool} {text}: {} {}: {}",
                got["class"], got["action"], got["reason"]
            ));
        }
        if expect == "harmless" && !git && got["keys"] != json!([{"text": "1"}]) {
            wrong.push(format!("{tool} {text}: keys {}", got["keys"]));
        }
    }
    assert!(rows >= 150);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `policy export --gemini`: Gemini's user policy file in its home, the user's deny rules and
/// the destructive set in Gemini's TOML; stdout with `-o -`; a planted symlink, a bad policy
/// and an unwritable place are one line and exit 2, with nothing written.
#[test]
fn policy_export_writes_geminis_policy_file() {
    let sb = Sandbox::new();
    write_policy(
        &sb,
        r#"{"on_destructive":"deny","deny":[{"id":"no-prod","tool":"Bash","pattern":"* --env=prod*","message":"never prod"}]}"#,
    );
    let out = sb
        .cmd()
        .args(["policy", "export", "--gemini"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = sb.path("home/.gemini/policies/autoctl.toml");
    assert!(stdout(&out).contains(&written.display().to_string()));
    let text = fs::read_to_string(&written).unwrap();
    assert!(text.contains("denyMessage = \"never prod (autoctl policy rule user:no-prod)\""));
    assert!(text.contains("commandPrefix = [\"rm\","));
    assert!(!text.contains("ask_user"), "on_destructive deny: {text}");
    // GEMINI_CLI_HOME is Gemini's own home override.
    let other = sb.path("gemini-home");
    let out = sb
        .cmd()
        .env("GEMINI_CLI_HOME", &other)
        .args(["policy", "export", "--gemini"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(other.join(".gemini/policies/autoctl.toml")).unwrap(),
        text
    );
    // -o - prints the same file.
    let out = sb
        .cmd()
        .args(["policy", "export", "--gemini", "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), text);
    // A planted symlink is refused and left alone.
    let target = sb.write("target.txt", "keep");
    let link = sb.path("link.toml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = sb
        .cmd()
        .args(["policy", "export", "--gemini", "-o"])
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("symlink"));
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    // A bad policy file: nothing written.
    write_policy(&sb, r#"{"on_destructive":"sometimes"}"#);
    let fresh = sb.path("fresh.toml");
    let out = sb
        .cmd()
        .args(["policy", "export", "--gemini", "-o"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    one_stderr_line(&out);
    assert!(!fresh.exists());
    // An output under a file (not a directory): one line, exit 2.
    let out = sb
        .cmd()
        .args(["policy", "export", "--gemini", "-o"])
        .arg(target.join("x.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    one_stderr_line(&out);
}

/// Issue 24 item 4: the reviewer stage through the real hook door. A reviewer script (a
/// stand-in for `claude -p` with the shipped prompt) is asked about what no rule decided;
/// its allow becomes the hook's allow by rule `reviewer`; it is never asked about what the
/// destructive set names; a hung, failing or chatty reviewer is no decision; every
/// consultation is in the decision log with its input.
#[test]
fn the_reviewer_decides_only_what_no_rule_decided_and_fails_closed() {
    let sb = Sandbox::new();
    project(&sb);
    let template = fixture("hook/claude-code/permission/05-PermissionRequest-Bash.json");
    let asked = sb.path("asked.jsonl");
    let reviewer = sb.write(
        "reviewer.sh",
        format!(
            "#!/bin/sh\ncat >> {asked}\necho >> {asked}\ncase \"$REVIEW\" in\n  allow) echo '{{\"decision\":\"allow\",\"reason\":\"only reads a web page\"}}' ;;\n  ask) printf '```json\\n{{\"decision\":\"ask\",\"reason\":\"unsure\"}}\\n```\\n' ;;\n  hang) sleep 60 & sleep 60 ;;\n  chat) echo 'Sure! I think this is fine.' ;;\n  fail) exit 1 ;;\nesac\n",
            asked = asked.display()
        ),
    );
    let policy = write_policy(
        &sb,
        &json!({"reviewer": format!("sh {}", reviewer.display()), "reviewer_timeout_ms": 1500})
            .to_string(),
    );
    let run = |mode: &str, command: &str| {
        let mut cmd = hook_cmd(&sb, &["--policy", policy.to_str().unwrap()]);
        cmd.env("REVIEW", mode);
        let mut child = cmd.spawn().unwrap();
        let stdin = payload(&sb, &template, Some(("Bash", bash(command))));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = finish(child);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        stdout(&out)
    };
    // Nothing proves `curl URL` harmless and nothing names it destructive: the reviewer's.
    let fetch = "curl -s https://example.com/docs";
    assert_eq!(run("allow", fetch).trim(), ALLOW);
    for mode in ["ask", "hang", "chat", "fail"] {
        assert_eq!(
            run(mode, fetch),
            "",
            "{mode}: no decision, Claude Code asks"
        );
    }
    let consulted = fs::read_to_string(&asked).unwrap();
    assert_eq!(consulted.lines().count(), 5, "{consulted}");
    let first: Value = serde_json::from_str(consulted.lines().next().unwrap()).unwrap();
    assert_eq!(first["tool"], "Bash");
    assert_eq!(first["input"]["command"], fetch);
    assert_eq!(first["rules"]["rule"], "not-harmless");
    // What a rule decides never reaches the reviewer, however it would answer.
    assert_eq!(run("allow", "rm -rf build"), "");
    assert_eq!(run("allow", "cat ~/.ssh/id_ed25519"), "");
    assert_eq!(run("allow", "cargo test").trim(), ALLOW);
    assert_eq!(fs::read_to_string(&asked).unwrap().lines().count(), 5);
    // Every consultation is logged with its input and answer, before the request's own entry.
    let out = sb
        .cmd()
        .args(["policy", "log", "--format", "json"])
        .output()
        .unwrap();
    let entries = json_lines(&out);
    let reviews: Vec<(String, String)> = entries
        .iter()
        .filter(|e| e["event"] == "Reviewer")
        .map(|e| {
            assert_eq!(e["input"], fetch);
            assert_eq!(e["rule"], "reviewer");
            (
                e["decision"].as_str().unwrap().to_string(),
                e["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let answers: Vec<&str> = reviews.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(
        answers,
        ["allow", "ask", "no-answer", "no-answer", "no-answer"]
    );
    assert_eq!(reviews[0].1, "only reads a web page");
    assert!(reviews[2].1.starts_with("no answer within"), "{reviews:?}");
    let requests: Vec<(&str, &str)> = entries
        .iter()
        .filter(|e| e["event"] == "PermissionRequest" && e["input"] == fetch)
        .map(|e| (e["decision"].as_str().unwrap(), e["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(requests[0], ("allow", "reviewer"));
    assert!(
        requests[1..]
            .iter()
            .all(|r| *r == ("no-decision", "not-harmless"))
    );
}

#[test]
fn a_reviewer_setting_is_checked_when_the_file_is_read() {
    let sb = Sandbox::new();
    for (text, problem) in [
        (r#"{"reviewer": ""}"#, "reviewer"),
        (
            r#"{"reviewer_timeout_ms": 100}"#,
            "reviewer_timeout_ms without a reviewer",
        ),
        (
            r#"{"reviewer": "x", "reviewer_timeout_ms": 0}"#,
            "reviewer_timeout_ms",
        ),
    ] {
        let policy = write_policy(&sb, text);
        let out = sb
            .cmd()
            .args(["policy", "show", "--policy", policy.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(one_stderr_line(&out).contains(problem), "{text}: {out:?}");
    }
    let policy = write_policy(
        &sb,
        r#"{"reviewer": "sh review.sh", "reviewer_timeout_ms": 9000}"#,
    );
    let shown = sb
        .cmd()
        .args([
            "policy",
            "show",
            "--policy",
            policy.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        shown.to_string().matches("sh review.sh").count(),
        1,
        "{shown}"
    );
}

/// The long options git itself lists for `git SUB` (parse-options' own list, as
/// `--git-completion-helper-all` prints it), without `--` and `=`.
fn git_long_options(sub: &str) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(sub.split(' '))
        .arg("--git-completion-helper-all")
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|o| o.strip_prefix("--"))
        .filter(|o| !o.is_empty())
        .map(|o| o.trim_end_matches('=').to_string())
        .collect()
}

/// git takes any unambiguous prefix of a long option (`git push --de` is `--delete`), and
/// the rules read abbreviations as docs/policy.md ("Abbreviated long options") says, held
/// here against the installed git's own option lists:
/// - every long option a git flag table approves is one git spells that way, not a prefix
///   git would read as another option (an abbreviation in the table could approve what its
///   full spelling would not);
/// - every long option the destructive set's git entries name (`any`, `all`) is named from
///   at most the shortest prefix git reads as that option, so no abbreviation git accepts
///   escapes the name its full spelling has.
#[test]
fn git_abbreviations_are_read_as_git_reads_them() {
    let rules: Value = serde_json::from_str(
        &fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/policy.json"))
            .unwrap(),
    )
    .unwrap();
    // `rev-list --skip` is a revision option, matched whole by git's revision parser before
    // parse-options sees it (`--skip-t` is refused, not read as `--skip-to`).
    let revision_options = [("rev-list", "skip")];
    let mut approving = 0;
    for (name, table) in rules["flag_tables"].as_object().unwrap() {
        let Some(own) = name.strip_prefix("git-") else {
            continue;
        };
        let subs: Vec<&str> = match table["subcommands"].as_array() {
            Some(subs) => subs.iter().map(|s| s.as_str().unwrap()).collect(),
            None => vec![own],
        };
        let longs: Vec<&str> = ["long", "long_valued"]
            .iter()
            .flat_map(|k| table[k].as_array().into_iter().flatten())
            .map(|l| l.as_str().unwrap().trim_end_matches('='))
            .collect();
        for sub in subs {
            let options = git_long_options(sub);
            for long in &longs {
                let longer: Vec<&String> = options
                    .iter()
                    .filter(|o| o.starts_with(long) && o.as_str() != *long)
                    .collect();
                let exact = options.iter().any(|o| o == long);
                assert!(
                    exact || longer.is_empty() || revision_options.contains(&(sub, long)),
                    "flag_tables.{name}: git {sub} --{long} is git's abbreviation of {longer:?}"
                );
                approving += 1;
            }
        }
    }
    let mut named = 0;
    for entry in rules["destructive_programs"].as_array().unwrap() {
        if !entry["programs"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p == "git"))
        {
            continue;
        }
        let tests = ["any", "all"]
            .iter()
            .flat_map(|k| entry[k].as_array().into_iter().flatten());
        let longs: Vec<(String, u64)> = tests
            .filter_map(|t| t["long"].as_object())
            .flatten()
            .map(|(n, min)| (n.clone(), min.as_u64().unwrap()))
            .collect();
        for sub in entry["subcommands"].as_array().into_iter().flatten() {
            let sub = sub.as_str().unwrap();
            let options = git_long_options(sub);
            for (long, min) in &longs {
                if !options.contains(long) {
                    continue;
                }
                // The shortest prefix that only this option starts with (none when another
                // option starts with all of it, `--force` beside `--force-with-lease`).
                let unique = (1..=long.len()).find(|&k| {
                    options
                        .iter()
                        .filter(|o| o.starts_with(&long[..k]))
                        .all(|o| o == long)
                });
                if let Some(unique) = unique {
                    assert!(
                        *min as usize <= unique,
                        "git {sub} --{}: git reads it as --{long}, the destructive set names it from --{}",
                        &long[..unique],
                        &long[..*min as usize]
                    );
                }
                named += 1;
            }
        }
    }
    assert!(approving > 300 && named > 15, "{approving} {named}");
}

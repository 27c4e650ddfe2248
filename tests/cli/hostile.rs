//! Issue 23 item 3 (the readers' half): hostile commands at every door that reads them, as a
//! person or an agent would hand them over. On main c968843 a permission box showing
//! `find . -exec {` made `pane classify` panic (exit 101), a `$(…)` nested 10,000 deep
//! overflowed the stack of `hook permission-request` (exit 134, 300 MB), 20,000 levels took
//! `policy check` 19 s and 1.2 GB, and `plan validate` passed a forbidden push nested 9
//! levels deep or wrapped in 10 `bash -c`. Each door must answer in one piece, within a
//! small address space (`ulimit -v`: reading the whole nesting would need more), and never
//! approve what it could not read whole. No test here asserts a time.

use std::fs;

use serde_json::json;

use crate::util::{Sandbox, stdout, with_stdin};

/// `pre` nested `depth` times around `core`, closed: `echo $(echo $(… core …))`.
fn nested(pre: &str, core: &str, depth: usize) -> String {
    format!("{}{core}{}", pre.repeat(depth), ")".repeat(depth))
}

/// `bash -c '…'` around `core`, `depth` times, quoted as a shell reads it back.
fn wrapped(core: &str, depth: usize) -> String {
    (0..depth).fold(core.to_string(), |inner, _| {
        format!("bash -c '{}'", inner.replace('\'', r"'\''"))
    })
}

#[test]
fn a_permission_box_that_crashed_the_shell_reader_is_escalated() {
    let sb = Sandbox::new();
    let safe = fs::read_to_string(crate::tmuxfix::repo(
        "tests/fixtures/panes/claude-code/permission-bash-safe.txt",
    ))
    .unwrap();
    for flag in ["-exec", "-execdir", "-ok", "-okdir"] {
        for after in ["{", "do", "exec", "!"] {
            let command = format!("find . {flag} {after}");
            let screen = safe
                .replace("Bash(npm test)", &format!("Bash({command})"))
                .replace("   npm test\n", &format!("   {command}\n"));
            assert!(screen.contains(&command));
            let out = with_stdin(
                sb.std_cmd(),
                &["pane", "classify", "--agent", "claude", "-"],
                screen.as_bytes(),
            );
            assert_eq!(out.status.code(), Some(0), "{command}: {out:?}");
            assert_eq!(stdout(&out).trim(), "permission\tescalate", "{command}");
        }
    }
}

#[test]
fn a_hook_given_a_substitution_nested_ten_thousand_deep_answers_and_approves_nothing() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let payload = json!({
        "session_id": "deep", "cwd": project, "hook_event_name": "PermissionRequest",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": nested("echo $(", "rm -rf x", 10_000)},
    });
    let mut cmd = sb.memory_limited(64);
    cmd.env("CLAUDE_PROJECT_DIR", &project);
    let out = with_stdin(
        cmd,
        &["hook", "permission-request"],
        payload.to_string().as_bytes(),
    );
    // A hook always exits 0; no decision (nothing on stdout) lets Claude Code ask the person.
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "", "{out:?}");
    let log = fs::read_to_string(sb.path("state/policy/decisions.jsonl")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(entry["decision"], "no-decision", "{entry}");
    assert_eq!(entry["rule"], "destructive:unreadable", "{entry}");
}

#[test]
fn policy_check_of_twenty_thousand_levels_is_unreadable_not_harmless() {
    let sb = Sandbox::new();
    let input = json!({ "command": nested("$(", "ls", 20_000) }).to_string();
    let out = sb
        .memory_limited(64)
        .args(["policy", "check", "--tool", "Bash", "--input", &input])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stdout(&out).starts_with("no-decision destructive:unreadable: "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn plan_validate_refuses_a_push_nested_past_the_readers_bound() {
    let sb = Sandbox::new();
    let push = "git push --force origin main";
    for (name, step) in [
        ("nested", nested("echo $(", push, 9)),
        ("wrapped", wrapped(push, 10)),
        ("nested deep", nested("echo $(", push, 10_000)),
    ] {
        let plan = sb.write(
            &format!("{name}.json"),
            json!({"action": "recover", "rationale": "r", "steps": [step]}).to_string(),
        );
        let out = sb
            .memory_limited(64)
            .args(["plan", "validate"])
            .arg(&plan)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {out:?}");
        assert!(
            stdout(&out).contains(": /steps/0: unreadable: "),
            "{name}: {}",
            stdout(&out)
        );
    }
}

/// A command of 1 MiB: more than Linux passes as one argument (`MAX_ARG_STRLEN`, 128 KiB), so
/// no shell tool can run it. Every door answers at once that it is unreadable, without
/// reading it (on a14af3d the reader read up to 1 MiB: the hook's answer was "longer than
/// 65536 bytes", the deny policy asked instead of denying, and `plan validate` passed it).
#[test]
fn a_command_longer_than_a_shell_can_run_is_unreadable_at_every_door() {
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let long = format!("echo {}", "a ".repeat(512 * 1024));
    assert!(long.len() > 1024 * 1024);
    // The hook: no decision (the person is asked), logged as unreadable with the bound's name.
    let payload = json!({
        "session_id": "long", "cwd": project, "hook_event_name": "PermissionRequest",
        "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": long},
    });
    let mut cmd = sb.memory_limited(64);
    cmd.env("CLAUDE_PROJECT_DIR", &project);
    let out = with_stdin(
        cmd,
        &["hook", "permission-request"],
        payload.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "", "{out:?}");
    let log = fs::read_to_string(sb.path("state/policy/decisions.jsonl")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(entry["decision"], "no-decision", "{entry}");
    assert_eq!(entry["rule"], "destructive:unreadable", "{entry}");
    // A policy that denies the destructive set denies it (a user's deny rule is not read).
    let policy = sb.write(
        "deny.json",
        r#"{"version": 1, "on_destructive": "deny",
            "deny": [{"id": "no-echo", "tool": "Bash", "pattern": "echo *"}]}"#,
    );
    let line = json!({"tool_name": "Bash", "tool_input": {"command": long}, "cwd": project});
    let mut cmd = sb.memory_limited(64);
    cmd.arg("policy")
        .arg("check")
        .arg("--policy")
        .arg(&policy)
        .arg("--batch");
    let out = with_stdin(cmd, &[], format!("{line}\n").as_bytes());
    assert_eq!(out.status.code(), Some(0), "every line decided: {out:?}");
    let decision: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["rule"], "destructive:unreadable", "{decision}");
    assert!(
        decision["reason"]
            .as_str()
            .unwrap()
            .contains("longer than 128 KiB"),
        "{decision}"
    );
    // The plan guard refuses the step unread.
    let step = format!("echo {}", "a ".repeat(400 * 1024));
    let plan = sb.write(
        "long.json",
        json!({"action": "recover", "rationale": "r", "steps": [step]}).to_string(),
    );
    let out = sb
        .memory_limited(64)
        .args(["plan", "validate"])
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stdout(&out).contains(": /steps/0: unreadable: "),
        "{}",
        stdout(&out)
    );
}

/// Policy files past the bounds of reading one (`FILE_LIMIT` 64 KiB, 256 rules, 1,024
/// examples, 1 KiB patterns) are refused in one line, exit 2, before a pattern is compiled
/// or an example decided (on a14af3d a 1 MiB file of them was read, compiling every pattern
/// and deciding every example through the whole policy).
#[test]
fn policy_files_past_the_bounds_are_refused_in_one_line() {
    let sb = Sandbox::new();
    let rule = |i: usize| json!({"id": format!("r{i}"), "tool": "Bash", "pattern": format!("make d{i} *")});
    let padded = json!({"version": 1, "deny": [rule(0)]}).to_string();
    let cases = [
        (
            "large",
            format!("{}{}", padded, " ".repeat(65 * 1024)),
            "larger than 64 KiB",
        ),
        (
            "rules",
            json!({"version": 1, "deny": (0..300).map(rule).collect::<Vec<_>>()}).to_string(),
            "300 rules; a policy file holds at most 256",
        ),
        (
            "examples",
            json!({"version": 1, "deny": [{"id": "x", "tool": "Bash", "pattern": "make *",
                "match": vec!["make x"; 1100]}]})
            .to_string(),
            "1100 examples; a policy file holds at most 1024",
        ),
        (
            "pattern",
            json!({"version": 1, "deny": [{"id": "long", "tool": "Bash",
                "pattern": format!("*{}*", "a".repeat(2000))}]})
            .to_string(),
            "rule long: a pattern of 2002 bytes; at most 1024",
        ),
    ];
    for (name, text, why) in cases {
        let policy = sb.write(&format!("{name}.json"), text);
        let out = sb
            .memory_limited(64)
            .args([
                "policy",
                "check",
                "--tool",
                "Bash",
                "--input",
                r#"{"command":"ls"}"#,
            ])
            .arg("--policy")
            .arg(&policy)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(stderr.contains(why), "{name}: {stderr}");
    }
}

//! `autoctl next`: routing after a step, on entry for a status, and resuming a module.

use std::fs;

use serde_json::json;

use crate::util::{Sandbox, json_lines, one_stderr_line};

fn next(sb: &Sandbox, args: &[&str]) -> (i32, String) {
    let output = sb.cmd().arg("next").args(args).output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn the_readme_example_prints_exec() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["next", "--step", "check", "--result", "PASS"])
        .assert()
        .code(0)
        .stdout("exec\n")
        .stderr("");
}

#[test]
fn checkpoints_follow_the_design_clarifications() {
    let sb = Sandbox::new();
    assert_eq!(
        next(&sb, &["--step", "exec", "--result", "(mid-exec)"]),
        (0, "check\tmid-exec\n".into())
    );
    assert_eq!(
        next(&sb, &["--step", "exec", "--result", "(done)"]),
        (0, "check\tpost-exec\n".into())
    );
    assert_eq!(
        next(
            &sb,
            &[
                "--step",
                "check",
                "--result",
                "NEEDS_FIX",
                "--checkpoint",
                "mid-exec"
            ]
        ),
        (0, "exec\tmid-exec\n".into())
    );
    assert_eq!(
        next(
            &sb,
            &[
                "--step",
                "check",
                "--result",
                "NEEDS_FIX",
                "--checkpoint",
                "post-exec"
            ]
        ),
        (0, "exec\tpost-exec\n".into())
    );
    assert_eq!(
        next(&sb, &["--step", "plan", "--result", "(generated)"]),
        (0, "check\tpost-plan\n".into())
    );
    assert_eq!(
        next(&sb, &["--step", "check", "--result", "ACCEPT"]),
        (0, "merge\n".into())
    );
    assert_eq!(
        next(&sb, &["--step", "merge", "--result", "conflict"]),
        (0, "merge\n".into())
    );
    assert_eq!(
        next(
            &sb,
            &[
                "--step",
                "check",
                "--result",
                "ACCEPT",
                "--table",
                "ai-cli-task-v1"
            ]
        ),
        (0, "report\n".into())
    );
}

#[test]
fn json_has_next_checkpoint_and_rationale() {
    let sb = Sandbox::new();
    let output = sb
        .cmd()
        .args([
            "next",
            "--step",
            "check",
            "--result",
            "NEEDS_FIX",
            "--checkpoint",
            "mid-exec",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        json_lines(&output),
        vec![json!({
            "next": "exec",
            "checkpoint": "mid-exec",
            "rationale": "fixable issues at a mid-exec checkpoint: exec addresses them, then continues"
        })]
    );
}

#[test]
fn unknown_values_and_rejected_pairs_are_usage_errors() {
    let sb = Sandbox::new();
    for args in [
        vec!["--step", "deploy", "--result", "PASS"],
        vec!["--step", "check", "--result", "GREAT"],
        vec![
            "--step",
            "check",
            "--result",
            "PASS",
            "--checkpoint",
            "whenever",
        ],
        vec!["--step", "merge", "--result", "PASS"],
        vec!["--status", "sleeping"],
        vec!["--step", "check"],
        vec![],
        vec![
            "--step",
            "check",
            "--result",
            "PASS",
            "--table",
            "no-such-table",
        ],
    ] {
        let output = sb.cmd().arg("next").args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty());
        one_stderr_line(&output);
    }
}

#[test]
fn status_entry_points_follow_seed_000() {
    let sb = Sandbox::new();
    assert_eq!(
        next(&sb, &["--status", "planning"]),
        (0, "check\tpost-plan\n".into())
    );
    assert_eq!(next(&sb, &["--status", "review"]), (0, "exec\n".into()));
    assert_eq!(
        next(&sb, &["--status", "executing"]),
        (0, "check\tpost-exec\n".into())
    );
    assert_eq!(
        next(&sb, &["--status", "re-planning", "--phase", "needs-check"]),
        (0, "check\tpost-plan\n".into())
    );
    assert_eq!(
        next(&sb, &["--status", "re-planning", "--phase", "needs-plan"]),
        (0, "plan\n".into())
    );
    assert_eq!(
        next(&sb, &["--status", "re-planning"]),
        (0, "plan\n".into())
    );
    assert_eq!(next(&sb, &["--status", "complete"]), (0, "report\n".into()));
    assert_eq!(next(&sb, &["--status", "blocked"]), (0, "(stop)\n".into()));
    assert_eq!(
        next(&sb, &["--status", "cancelled"]),
        (0, "(stop)\n".into())
    );
}

#[test]
fn a_draft_with_only_the_template_stops_and_says_why() {
    let sb = Sandbox::new();
    let module = sb.module("TASK/auth");
    fs::write(
        module.join(".target.md"),
        "# Target\n\n<!-- describe the goal -->\n\n- {requirement}\n",
    )
    .unwrap();
    let output = sb
        .cmd()
        .args(["next", "--status", "draft", "--task"])
        .arg(&module)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, b"(stop)\n");
    assert!(one_stderr_line(&output).contains("fill"));
    fs::write(
        module.join(".target.md"),
        "# Target\n\nAdd OAuth login with refresh tokens.\n",
    )
    .unwrap();
    sb.cmd()
        .args(["next", "--status", "draft", "--task"])
        .arg(&module)
        .assert()
        .code(0)
        .stdout("plan\n")
        .stderr("");
}

#[test]
fn task_resumes_from_the_signal_else_from_the_status() {
    let sb = Sandbox::new();
    let module = sb.module("TASK/auth");
    fs::write(
        module.join(".index.md"),
        "---\ntitle: Auth\nstatus: executing\ncreated: 2026-11-01T00:00:00Z\nupdated: 2026-11-02T00:00:00Z\n---\n# Auth\n",
    )
    .unwrap();
    let json_of = |sb: &Sandbox| {
        let output = sb
            .cmd()
            .args(["next", "--format", "json", "--task"])
            .arg(&module)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        json_lines(&output).remove(0)
    };
    let entry = json_of(&sb);
    assert_eq!(entry["next"], "check");
    assert_eq!(entry["checkpoint"], "post-exec");
    assert_eq!(entry["iteration"], 0);
    fs::write(
        module.join(".auto-signal"),
        r#"{"step":"exec","result":"(mid-exec)","next":"check","checkpoint":"mid-exec","iteration":6,"timestamp":"2026-11-02T00:00:00Z"}"#,
    )
    .unwrap();
    let resumed = json_of(&sb);
    assert_eq!(resumed["next"], "check");
    assert_eq!(resumed["checkpoint"], "mid-exec");
    assert_eq!(resumed["iteration"], 7);
    fs::write(module.join(".auto-signal"), "{").unwrap();
    let output = sb
        .cmd()
        .args(["next", "--task"])
        .arg(&module)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("resume point is unknown"));
}

#[test]
fn index_without_front_matter_or_status_is_a_clear_error() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    for (index, says) in [
        ("# no front matter\n", "no YAML front matter"),
        ("---\ntitle: x\n---\n", "no status"),
        ("---\nstatus: [unclosed\n---\n", "YAML does not parse"),
    ] {
        fs::write(module.join(".index.md"), index).unwrap();
        let output = sb
            .cmd()
            .args(["next", "--task"])
            .arg(&module)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(one_stderr_line(&output).contains(says), "{index:?}");
    }
    let output = sb
        .cmd()
        .args(["next", "--task", "absent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    one_stderr_line(&output);
}

#[test]
fn command_renders_what_a_daemon_would_type() {
    let sb = Sandbox::new();
    let module = sb.module("TASK/auth");
    fs::write(
        module.join(".auto-signal"),
        r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    sb.cmd()
        .args([
            "next",
            "--task",
            "TASK/auth",
            "--command",
            r#"claude "/ai-cli-task {next} {task}""#,
        ])
        .assert()
        .code(0)
        .stdout("claude \"/ai-cli-task exec TASK/auth\"\n");
    // (stop): nothing to send.
    fs::write(
        module.join(".auto-signal"),
        r#"{"step":"report","result":"(done)","next":"(stop)","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    sb.cmd()
        .args(["next", "--task", "TASK/auth", "--command", "claude {next}"])
        .assert()
        .code(1)
        .stdout("");
    // A task path that would break out of the template's quotes is refused.
    let evil = sb.module("TASK/x\"; rm -rf ~; \"");
    fs::write(
        evil.join(".auto-signal"),
        r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let output = sb
        .cmd()
        .args([
            "next",
            "--command",
            r#"claude "/ai-cli-task {next} {task}""#,
            "--task",
        ])
        .arg(&evil)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(one_stderr_line(&output).contains("refusing"));
}

#[test]
fn task_ai_reads_status_json() {
    let sb = Sandbox::new();
    let module = sb.module("nb");
    fs::write(
        module.join(".status.json"),
        r#"{"status":"evolving","updated_at":"2026-11-25T00:00:00Z"}"#,
    )
    .unwrap();
    let output = sb
        .cmd()
        .args(["next", "--table", "task-ai", "--format", "json", "--task"])
        .arg(&module)
        .output()
        .unwrap();
    let answer = json_lines(&output).remove(0);
    assert_eq!(answer["next"], "plan");
    assert_eq!(answer["phase"], "acceptance");
}

#[test]
fn an_unknown_phase_is_a_usage_error_not_a_silent_default() {
    let sb = Sandbox::new();
    let output = sb
        .cmd()
        .args(["next", "--status", "re-planning", "--phase", "bogus"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        one_stderr_line(&output),
        "autoctl: unknown --phase \"bogus\" for status \"re-planning\" (allowed: needs-plan, needs-check)"
    );
    assert!(output.stdout.is_empty());
    let output = sb
        .cmd()
        .args(["next", "--status", "draft", "--phase", "needs-plan"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("does not branch on a phase"));
    // An unknown status is still named as the problem.
    let output = sb
        .cmd()
        .args(["next", "--status", "bogus", "--phase", "x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("unknown status \"bogus\""));
    sb.cmd()
        .args(["next", "--status", "re-planning", "--phase", "needs-check"])
        .assert()
        .code(0)
        .stdout("check\tpost-plan\n");
}

/// Seed 000's state machine: a check at mid-exec answers CONTINUE, NEEDS_FIX, REPLAN or
/// BLOCKED. An ACCEPT there used to route to merge, skipping post-exec verification.
#[test]
fn a_result_outside_the_checkpoints_whitelist_is_rejected_naming_the_allowed_ones() {
    let sb = Sandbox::new();
    for (checkpoint, result, allowed) in [
        (
            "mid-exec",
            "ACCEPT",
            "CONTINUE, NEEDS_FIX, REPLAN or BLOCKED",
        ),
        ("post-plan", "ACCEPT", "PASS, NEEDS_REVISION or BLOCKED"),
        ("post-exec", "PASS", "ACCEPT, NEEDS_FIX, REPLAN or BLOCKED"),
    ] {
        for table in ["ai-cli-task", "task-ai"] {
            let output = sb
                .cmd()
                .args(["next", "--step", "check", "--result", result])
                .args(["--checkpoint", checkpoint, "--table", table])
                .output()
                .unwrap();
            assert_eq!(
                output.status.code(),
                Some(2),
                "{table} {checkpoint} {result}"
            );
            assert!(output.stdout.is_empty());
            let line = one_stderr_line(&output);
            assert!(
                line.contains(&format!(
                    "check {result} at {checkpoint} is not a valid outcome"
                )) && line.ends_with(allowed),
                "{line}"
            );
        }
    }
    // The listed results still route.
    assert_eq!(
        next(
            &sb,
            &[
                "--step",
                "check",
                "--result",
                "ACCEPT",
                "--checkpoint",
                "post-exec"
            ]
        ),
        (0, "merge\n".into())
    );
}

#[test]
fn a_merge_conflict_goes_back_to_merge_three_times_then_stops() {
    let sb = Sandbox::new();
    for attempt in ["1", "2", "3"] {
        assert_eq!(
            next(
                &sb,
                &[
                    "--step",
                    "merge",
                    "--result",
                    "conflict",
                    "--attempt",
                    attempt
                ]
            ),
            (0, "merge\n".into()),
            "attempt {attempt}"
        );
    }
    assert_eq!(
        next(
            &sb,
            &["--step", "merge", "--result", "conflict", "--attempt", "4"]
        ),
        (0, "(stop)\n".into())
    );
    let json = json_lines(
        &sb.cmd()
            .args([
                "next", "--step", "merge", "--result", "conflict", "--format", "json",
            ])
            .output()
            .unwrap(),
    )
    .remove(0);
    assert_eq!(json["next"], "merge");
    assert!(
        json["rationale"]
            .as_str()
            .unwrap()
            .ends_with("retry merge (1 of 3)"),
        "{json}"
    );
    sb.cmd()
        .args([
            "next",
            "--step",
            "merge",
            "--result",
            "conflict",
            "--attempt",
            "0",
        ])
        .assert()
        .code(2);
}

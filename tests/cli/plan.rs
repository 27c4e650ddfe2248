//! `autoctl plan validate`: the tier-3 recovery-plan guard.

use std::fs;

use crate::util::{Sandbox, fixtures, json_lines, one_stderr_line, stdout, with_stdin};

fn validate(sb: &Sandbox, path: &std::path::Path) -> std::process::Output {
    sb.cmd()
        .args(["plan", "validate"])
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn valid_plans_pass() {
    let sb = Sandbox::new();
    for path in fixtures("recovery-plan", "valid") {
        let doc: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert!(
            autoctl::schema::violations("recovery-plan", &doc).is_empty(),
            "{}",
            path.display()
        );
        let out = validate(&sb, &path);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stdout(&out)
        );
        assert_eq!(stdout(&out), format!("{}: ok\n", path.display()));
    }
}

#[test]
fn invalid_plans_are_refused_with_reasons() {
    let sb = Sandbox::new();
    for path in fixtures("recovery-plan", "invalid") {
        // Read strictly: serde_json alone would collapse a duplicated key to its last value.
        if let Ok(doc) = autoctl::protocol::document::parse_json(&fs::read(&path).unwrap()) {
            assert!(
                !autoctl::schema::violations("recovery-plan", &doc).is_empty(),
                "the schema agrees: {}",
                path.display()
            );
        }
        let out = validate(&sb, &path);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        let text = stdout(&out);
        let location = text
            .strip_prefix(&format!("{}: ", path.display()))
            .unwrap_or_default();
        assert!(
            location.starts_with('/') || location.starts_with(|c: char| c.is_ascii_digit()),
            "{text}"
        );
        assert!(out.stderr.is_empty());
    }
    let expected = [
        ("force-push.json", "forbidden operation force_push"),
        (
            "push-head-to-main.json",
            "forbidden operation direct_push_main",
        ),
        ("plus-refspec.json", "forbidden operation force_push"),
        (
            "reset-hard-in-bash-c.json",
            "forbidden operation reset_hard",
        ),
        ("close-issue.json", "forbidden operation close_issue"),
        ("merge-pr.json", "forbidden operation merge_pr"),
        ("op-name.json", "forbidden operation direct_push_main"),
    ];
    for path in fixtures("recovery-plan", "refused") {
        let name = path.file_name().unwrap().to_str().unwrap();
        let (_, needle) = expected
            .iter()
            .find(|(f, _)| *f == name)
            .expect("every refused fixture has an expectation");
        let out = validate(&sb, &path);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            stdout(&out).contains(&format!("/steps/0: {needle}")),
            "{name}: {}",
            stdout(&out)
        );
    }
}

/// A key given twice is ambiguous (a reader that keeps the first `steps` would run a force
/// push the guard never saw), at the top and deeper down.
#[test]
fn duplicate_keys_are_refused() {
    let sb = Sandbox::new();
    let cases = [
        (
            r#"{"steps":["git push -f origin main"],"steps":[]}"#,
            "/steps: duplicate key \"steps\"",
        ),
        (
            r#"{"action":"retry","action":"abort","rationale":"x","steps":[]}"#,
            "/action: duplicate key \"action\"",
        ),
        (
            r#"{"action":"retry","rationale":"x","steps":[{"run":"ls","run":"git reset --hard"}]}"#,
            "/steps/0/run: duplicate key \"run\"",
        ),
    ];
    for (plan, needle) in cases {
        let path = sb.write("plan.json", plan);
        let out = validate(&sb, &path);
        assert_eq!(out.status.code(), Some(1), "{plan}");
        let text = stdout(&out);
        assert!(
            text.starts_with(&format!("{}: {needle} (line 1 column ", path.display())),
            "{plan}: {text}"
        );
        assert!(out.stderr.is_empty());
    }
}

/// The forbidden operations, disguised, through the binary (the unit tests hold the long list).
#[test]
fn disguised_forbidden_operations() {
    let sb = Sandbox::new();
    let disguised = [
        ("git   push   --force   origin   feature", "force_push"),
        ("git push -uf origin feature", "force_push"),
        ("git push origin +feature", "force_push"),
        ("git push \"--for\"'ce' origin feature", "force_push"),
        ("git push origin HEAD:main", "direct_push_main"),
        ("git push origin HEAD:refs/heads/main", "direct_push_main"),
        ("git -C . push origin main", "direct_push_main"),
        ("sh -c 'git reset --hard'", "reset_hard"),
        ("gh issue close 12", "close_issue"),
        ("gh pr merge 3 --squash", "merge_pr"),
    ];
    for (step, op) in disguised {
        let plan = serde_json::json!({"action": "recover", "rationale": "r", "steps": [step]});
        let path = sb.write("plan.json", plan.to_string());
        let out = sb
            .cmd()
            .args(["plan", "validate", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{step}");
        let report = json_lines(&out).remove(0);
        assert!(
            report["problems"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["forbidden"] == op),
            "{step}: {report}"
        );
    }
    // --protected replaces main/master.
    let path = sb.write(
        "plan.json",
        r#"{"action": "recover", "rationale": "r", "steps": ["git push origin trunk"]}"#,
    );
    sb.cmd()
        .args(["plan", "validate"])
        .arg(&path)
        .assert()
        .code(0);
    sb.cmd()
        .args(["plan", "validate", "--protected", "trunk"])
        .arg(&path)
        .assert()
        .code(1);
}

/// 10 MB of steps is refused without being parsed: the size alone says why.
#[test]
fn a_huge_plan_is_refused_unread() {
    let sb = Sandbox::new();
    let step = "\"echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",";
    let mut plan = String::from("{\"action\": \"recover\", \"rationale\": \"r\", \"steps\": [");
    while plan.len() < 10 * 1024 * 1024 {
        plan.push_str(step);
    }
    plan.push_str("\"true\"]}");
    let path = sb.write("huge.json", &plan);
    let out = validate(&sb, &path);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!(
            "{}: /: document is larger than the 1 MiB limit\n",
            path.display()
        )
    );
    // The same through standard input.
    // autoctl stops reading at the bound; a broken pipe while writing is expected.
    let mut cmd = sb.std_cmd();
    cmd.args(["plan", "validate", "-"]);
    let out = with_stdin(cmd, &[], plan.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "-: /: document is larger than the 1 MiB limit\n"
    );
}

#[test]
fn unreadable_plans_are_operational_errors() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["plan", "validate", "missing.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(one_stderr_line(&out).contains("missing.json"));
}

//! `autoctl stop write|check|clear`: the stop request, failing safe.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::util::{Sandbox, json_lines, one_stderr_line, redact_timestamps};

#[test]
fn write_check_clear_round_trip() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .assert()
        .code(1)
        .stdout("")
        .stderr("");
    sb.cmd()
        .args(["stop", "write"])
        .arg(&module)
        .args(["--reason", "user_stop", "--message", "lunch"])
        .assert()
        .code(0)
        .stdout("");
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .assert()
        .code(0)
        .stdout("user_stop\n");
    let output = sb
        .cmd()
        .args(["stop", "check", "--format", "json"])
        .arg(&module)
        .output()
        .unwrap();
    let mut report = json_lines(&output).remove(0);
    redact_timestamps(&mut report);
    assert_eq!(
        report,
        json!({"stop": true, "reason": "user_stop", "timestamp": "[timestamp]", "message": "lunch"})
    );
    let stored: Value =
        serde_json::from_slice(&fs::read(module.join(".auto-stop")).unwrap()).unwrap();
    assert!(autoctl::schema::violations("auto-stop", &stored).is_empty());
    sb.cmd()
        .args(["stop", "clear"])
        .arg(&module)
        .assert()
        .code(0);
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .assert()
        .code(1);
    sb.cmd()
        .args(["stop", "clear"])
        .arg(&module)
        .assert()
        .code(0);
}

#[test]
fn an_invalid_or_unreadable_stop_file_still_means_stop() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    for contents in [
        "",
        "not json",
        r#"{"reason":"bored","timestamp":"2024-01-01T00:00:00Z"}"#,
        "\u{0}\u{1}",
    ] {
        fs::write(module.join(".auto-stop"), contents).unwrap();
        let output = sb
            .cmd()
            .args(["stop", "check"])
            .arg(&module)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{contents:?}");
        assert_eq!(output.stdout, b"unknown\n");
        assert!(one_stderr_line(&output).contains("treating it as a stop request"));
    }
    // A directory squatting on the name, or a dangling symlink, also mean stop.
    fs::remove_file(module.join(".auto-stop")).unwrap();
    fs::create_dir(module.join(".auto-stop")).unwrap();
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .assert()
        .code(0)
        .stdout("unknown\n");
    fs::remove_dir(module.join(".auto-stop")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", module.join(".auto-stop")).unwrap();
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .assert()
        .code(0)
        .stdout("unknown\n");
    fs::remove_file(module.join(".auto-stop")).unwrap();
    // Unreadable (permission denied) still means stop.
    fs::write(
        module.join(".auto-stop"),
        r#"{"reason":"timeout","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    fs::set_permissions(module.join(".auto-stop"), fs::Permissions::from_mode(0o000)).unwrap();
    let output = sb.unprivileged(&["stop", "check", module.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(output.stdout, b"unknown\n");
}

#[test]
fn a_missing_dir_is_an_error_not_a_verdict() {
    let sb = Sandbox::new();
    let output = sb
        .cmd()
        .args(["stop", "check", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("no such directory"));
}

#[test]
fn write_refuses_unknown_reasons_and_keeps_the_old_request() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    sb.cmd()
        .args(["stop", "write"])
        .arg(&module)
        .args(["--reason", "timeout"])
        .assert()
        .code(0);
    let before = fs::read(module.join(".auto-stop")).unwrap();
    let output = sb
        .cmd()
        .args(["stop", "write"])
        .arg(&module)
        .args(["--reason", "bored"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        one_stderr_line(&output)
            .contains("timeout, max_iterations, user_stop, stall_limit, reasoning_loop")
    );
    assert_eq!(fs::read(module.join(".auto-stop")).unwrap(), before);
}

#[test]
fn write_replaces_a_planted_symlink_without_writing_through_it() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    let victim = sb.write("victim", "keep");
    std::os::unix::fs::symlink(&victim, module.join(".auto-stop")).unwrap();
    sb.cmd()
        .args(["stop", "write"])
        .arg(&module)
        .args(["--reason", "stall_limit"])
        .assert()
        .code(0);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .assert()
        .code(0)
        .stdout("stall_limit\n");
}

#[test]
fn write_into_a_read_only_dir_keeps_the_old_request() {
    let sb = Sandbox::new();
    let module = sb.module("ro");
    sb.cmd()
        .args(["stop", "write"])
        .arg(&module)
        .args(["--reason", "timeout"])
        .assert()
        .code(0);
    let before = fs::read(module.join(".auto-stop")).unwrap();
    fs::set_permissions(&module, fs::Permissions::from_mode(0o555)).unwrap();
    let output = sb.unprivileged(&[
        "stop",
        "write",
        module.to_str().unwrap(),
        "--reason",
        "user_stop",
    ]);
    fs::set_permissions(&module, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(output.status.code(), Some(2));
    one_stderr_line(&output);
    assert_eq!(fs::read(module.join(".auto-stop")).unwrap(), before);
}

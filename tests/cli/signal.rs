//! `autoctl signal validate|write|read|clear`, including every bad input of the Foundation
//! issue.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::util::{Sandbox, fixtures, json_lines, one_stderr_line, stdout};

const VALID: &str = r#"{"step":"check","result":"PASS","next":"exec","checkpoint":"","iteration":3,"timestamp":"2024-01-01T00:00:00Z"}"#;

#[test]
fn every_valid_fixture_validates_and_every_invalid_one_does_not() {
    let sb = Sandbox::new();
    for file in fixtures("signal", "valid") {
        sb.cmd()
            .args(["signal", "validate"])
            .arg(&file)
            .assert()
            .code(0)
            .stdout(format!("{}: ok\n", file.display()))
            .stderr("");
    }
    for file in fixtures("signal", "invalid") {
        let output = sb
            .cmd()
            .args(["signal", "validate"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", file.display());
        let out = stdout(&output);
        assert_eq!(out.lines().count(), 1, "one line per document: {out:?}");
        assert!(out.starts_with(&format!("{}: ", file.display())), "{out}");
        assert!(!out.contains(": ok"), "{out}");
        assert!(output.stderr.is_empty());
    }
}

/// The Rust type that reads signals agrees with the schema: every valid fixture parses and
/// survives a round trip, every invalid one is refused by one or the other.
#[test]
fn rust_types_agree_with_the_schema_on_fixtures() {
    use autoctl::protocol::signal;
    for file in fixtures("signal", "valid") {
        let bytes = fs::read(&file).unwrap();
        let parsed = signal::parse(&bytes).unwrap_or_else(|p| panic!("{}: {p:?}", file.display()));
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(autoctl::schema::violations("auto-signal", &value).is_empty());
        let written = parsed.to_document();
        assert_eq!(
            signal::parse(&written).unwrap(),
            parsed,
            "round trip of {}",
            file.display()
        );
    }
    for file in fixtures("signal", "invalid") {
        assert!(
            signal::parse(&fs::read(&file).unwrap()).is_err(),
            "{}",
            file.display()
        );
    }
    for file in fixtures("stop", "valid") {
        autoctl::protocol::stop::parse(&fs::read(&file).unwrap()).unwrap();
    }
    for file in fixtures("stop", "invalid") {
        assert!(autoctl::protocol::stop::parse(&fs::read(&file).unwrap()).is_err());
    }
}

#[test]
fn malformed_json_names_line_and_column() {
    let sb = Sandbox::new();
    let file = sb.write("bad.json", "{\n  \"step\": \"check\",\n}\n");
    sb.cmd()
        .args(["signal", "validate"])
        .arg(&file)
        .assert()
        .code(1)
        .stdout(format!(
            "{}: 3:1: invalid JSON: trailing comma\n",
            file.display()
        ));
}

#[test]
fn json_format_reports_every_problem_structurally() {
    let sb = Sandbox::new();
    let good = sb.write("good.json", VALID);
    let bad = sb.write("bad.json", r#"{"step":"deploy","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00","extra":1}"#);
    let output = sb
        .cmd()
        .args(["signal", "validate", "--format", "json"])
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let lines = json_lines(&output);
    assert_eq!(
        lines[0],
        json!({"path": good.display().to_string(), "valid": true})
    );
    assert_eq!(lines[1]["valid"], json!(false));
    let pointers: Vec<&str> = lines[1]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&"/step"), "{pointers:?}");
    assert!(pointers.contains(&"/timestamp"), "{pointers:?}");
    assert!(pointers.contains(&"/"), "{pointers:?}");
}

#[test]
fn stdin_and_directories_are_documents_too() {
    let sb = Sandbox::new();
    let module = sb.module("TASK/auth");
    fs::write(module.join(".auto-signal"), VALID).unwrap();
    sb.cmd()
        .args(["signal", "validate", "-"])
        .arg(&module)
        .write_stdin(VALID)
        .assert()
        .code(0)
        .stdout(format!("-: ok\n{}/.auto-signal: ok\n", module.display()));
}

#[test]
fn a_dir_without_a_signal_is_an_operational_error() {
    let sb = Sandbox::new();
    let module = sb.module("empty");
    let output = sb
        .cmd()
        .args(["signal", "validate"])
        .arg(&module)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("no .auto-signal in"));
    sb.cmd()
        .args(["signal", "validate", "missing-file.json"])
        .assert()
        .code(2);
}

#[test]
fn unreadable_outranks_invalid_and_the_rest_is_still_checked() {
    let sb = Sandbox::new();
    let good = sb.write("good.json", VALID);
    let output = sb
        .cmd()
        .args(["signal", "validate", "nope.json"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), format!("{}: ok\n", good.display()));
    assert!(one_stderr_line(&output).contains("nope.json"));
}

/// Enough files that the work is spread over every core: the lines still come in the order
/// of the arguments, each unreadable one is one stderr line, and the verdict counts them all.
#[test]
fn many_files_are_checked_on_every_core_and_reported_in_argument_order() {
    let sb = Sandbox::new();
    let mut args = Vec::new();
    let mut expected = Vec::new();
    for i in 0..1500 {
        let path = match i % 100 {
            7 => {
                let dir = sb.module(&format!("m{i}"));
                sb.write(&format!("m{i}/.auto-signal"), VALID);
                args.push(dir.display().to_string());
                expected.push(format!("{}: ok", dir.join(".auto-signal").display()));
                continue;
            }
            13 => {
                args.push(sb.path(&format!("missing-{i}.json")).display().to_string());
                continue;
            }
            42 => sb.write(
                &format!("{i:04}.json"),
                VALID.replacen("check", "deploy", 1),
            ),
            _ => sb.write(&format!("{i:04}.json"), VALID),
        };
        args.push(path.display().to_string());
        expected.push(if i % 100 == 42 {
            format!(
                "{}: /step: \"deploy\" is not allowed (allowed: plan, check, exec, merge, report)",
                path.display()
            )
        } else {
            format!("{}: ok", path.display())
        });
    }
    let output = sb
        .cmd()
        .args(["signal", "validate"])
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let lines: Vec<String> = stdout(&output).lines().map(str::to_string).collect();
    assert_eq!(lines, expected);
    let stderr = String::from_utf8(output.stderr).unwrap();
    let missing: Vec<&str> = stderr.lines().collect();
    assert_eq!(missing.len(), 15, "{stderr}");
    for (n, line) in missing.iter().enumerate() {
        assert!(
            line.contains(&format!("missing-{}.json", n * 100 + 13)),
            "{line}"
        );
    }
    // Without the unreadable ones: exit 1 for the invalid ones, and JSON Lines in order.
    let readable: Vec<&String> = args.iter().filter(|a| !a.contains("missing")).collect();
    let output = sb
        .cmd()
        .args(["signal", "validate", "--format", "json"])
        .args(&readable)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let reports = json_lines(&output);
    assert_eq!(reports.len(), expected.len());
    for (report, line) in reports.iter().zip(&expected) {
        assert!(
            line.starts_with(report["path"].as_str().unwrap()),
            "{report} {line}"
        );
        assert_eq!(report["valid"], line.ends_with(": ok"), "{report}");
    }
}

#[test]
fn permission_denied_is_exit_2_with_one_line() {
    let sb = Sandbox::new();
    let file = sb.write("secret.json", VALID);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o000)).unwrap();
    let output = sb.unprivileged(&["signal", "validate", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(one_stderr_line(&output).contains("Permission denied"));
}

#[test]
fn a_50_mb_signal_is_invalid_without_being_read_whole() {
    let sb = Sandbox::new();
    let path = sb.path("huge.json");
    let mut file = fs::File::create(&path).unwrap();
    file.write_all(b"{\"step\":\"").unwrap();
    let chunk = vec![b'a'; 1024 * 1024];
    for _ in 0..50 {
        file.write_all(&chunk).unwrap();
    }
    file.write_all(b"\"}").unwrap();
    drop(file);
    // 64 MiB of address space: reading the 50 MB whole (and parsing it) would not fit.
    let output = sb
        .memory_limited(64)
        .args(["signal", "validate"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("larger than the 1 MiB limit"),
        "{output:?}"
    );
    // The same bound applies to standard input.
    let big = vec![b' '; 2 * 1024 * 1024];
    sb.cmd()
        .args(["signal", "validate", "-"])
        .write_stdin(big)
        .assert()
        .code(1)
        .stdout("-: /: document is larger than the 1 MiB limit\n");
}

#[test]
fn strict_requires_the_tables_next() {
    let sb = Sandbox::new();
    let wrong = sb.write(
        "wrong.json",
        r#"{"step":"check","result":"ACCEPT","next":"report","timestamp":"2024-01-01T00:00:00Z"}"#,
    );
    // Valid by the whitelists...
    sb.cmd()
        .args(["signal", "validate"])
        .arg(&wrong)
        .assert()
        .code(0);
    // ...but the default table (seed 000) merges after ACCEPT.
    sb.cmd()
        .args(["signal", "validate", "--strict"])
        .arg(&wrong)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "/next: table ai-cli-task routes check ACCEPT to merge, not report",
        ));
    // Seed 001's table goes straight to report.
    sb.cmd()
        .args([
            "signal",
            "validate",
            "--strict",
            "--table",
            "ai-cli-task-v1",
        ])
        .arg(&wrong)
        .assert()
        .code(0);
    let bad_checkpoint = sb.write("cp.json", r#"{"step":"exec","result":"(done)","next":"check","checkpoint":"mid-exec","timestamp":"2024-01-01T00:00:00Z"}"#);
    sb.cmd()
        .args(["signal", "validate", "--strict"])
        .arg(&bad_checkpoint)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("/checkpoint"));
    let rejected = sb.write(
        "rej.json",
        r#"{"step":"merge","result":"PASS","next":"report","timestamp":"2024-01-01T00:00:00Z"}"#,
    );
    sb.cmd()
        .args(["signal", "validate", "--strict"])
        .arg(&rejected)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "merge answers success or conflict",
        ));
}

#[test]
fn write_computes_next_and_checkpoint_and_stamps_utc() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    sb.cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args([
            "--step",
            "exec",
            "--result",
            "(mid-exec)",
            "--iteration",
            "4",
        ])
        .assert()
        .code(0)
        .stdout("");
    let doc: Value =
        serde_json::from_slice(&fs::read(module.join(".auto-signal")).unwrap()).unwrap();
    assert_eq!(doc["next"], "check");
    assert_eq!(doc["checkpoint"], "mid-exec");
    assert_eq!(doc["iteration"], 4);
    let stamp = doc["timestamp"].as_str().unwrap();
    assert!(
        stamp.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(stamp).is_ok(),
        "{stamp}"
    );

    // The check that follows ran at mid-exec (the previous signal said so): NEEDS_FIX carries it.
    sb.cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args([
            "--step",
            "check",
            "--result",
            "NEEDS_FIX",
            "--iteration",
            "5",
        ])
        .assert()
        .code(0);
    sb.cmd()
        .args(["signal", "read"])
        .arg(&module)
        .args(["--field", "checkpoint"])
        .assert()
        .code(0)
        .stdout("mid-exec\n");
    sb.cmd()
        .args(["signal", "validate", "--strict"])
        .arg(&module)
        .assert()
        .code(0);
}

#[test]
fn write_refuses_values_outside_the_whitelists() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    for (flag, value, listed) in [
        ("--step", "deploy", "plan, check, exec, merge, report"),
        ("--result", "GREAT", "(step-N)"),
        ("--next", "stop", "(stop)"),
        ("--checkpoint", "pre-exec", "post-plan"),
    ] {
        let mut args = vec![
            "signal",
            "write",
            module.to_str().unwrap(),
            "--step",
            "check",
            "--result",
            "PASS",
        ];
        if flag == "--step" || flag == "--result" {
            let at = args.iter().position(|a| *a == flag).unwrap();
            args[at + 1] = value;
        } else {
            args.extend([flag, value]);
        }
        let output = sb.cmd().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        let line = one_stderr_line(&output);
        assert!(line.contains(listed), "{flag}: {line}");
    }
    for iteration in ["-1", "three", "18446744073709551615", "9007199254740992"] {
        let output = sb
            .cmd()
            .args(["signal", "write"])
            .arg(&module)
            .args([
                "--step",
                "plan",
                "--result",
                "(generated)",
                "--iteration",
                iteration,
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        one_stderr_line(&output);
    }
    // A pair the table rejects needs an explicit --next.
    let output = sb
        .cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args(["--step", "merge", "--result", "PASS"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("pass --next"));
    assert!(
        !module.join(".auto-signal").exists(),
        "nothing written on refusal"
    );
}

#[test]
fn write_into_a_read_only_dir_fails_and_keeps_the_old_file() {
    let sb = Sandbox::new();
    let module = sb.module("ro");
    fs::write(module.join(".auto-signal"), VALID).unwrap();
    fs::set_permissions(&module, fs::Permissions::from_mode(0o555)).unwrap();
    let output = sb.unprivileged(&[
        "signal",
        "write",
        module.to_str().unwrap(),
        "--step",
        "plan",
        "--result",
        "(generated)",
    ]);
    fs::set_permissions(&module, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(one_stderr_line(&output).contains("cannot write"));
    assert_eq!(
        fs::read_to_string(module.join(".auto-signal")).unwrap(),
        VALID
    );
    let leftovers: Vec<_> = fs::read_dir(&module).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temp files left behind");
}

#[test]
fn a_planted_symlink_is_replaced_and_its_target_never_written() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    let victim = sb.write("victim.txt", "precious\n");
    std::os::unix::fs::symlink(&victim, module.join(".auto-signal")).unwrap();
    sb.cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args(["--step", "plan", "--result", "(generated)"])
        .assert()
        .code(0);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let meta = fs::symlink_metadata(module.join(".auto-signal")).unwrap();
    assert!(meta.file_type().is_file());
    sb.cmd()
        .args(["signal", "validate"])
        .arg(&module)
        .assert()
        .code(0);
}

#[test]
fn twenty_concurrent_writes_always_leave_one_complete_document() {
    let sb = Sandbox::new();
    let module = sb.module("race");
    let mut children = Vec::new();
    for i in 0..20 {
        children.push(
            sb.std_cmd()
                .args(["signal", "write"])
                .arg(&module)
                .args([
                    "--step",
                    "exec",
                    "--result",
                    "(done)",
                    "--iteration",
                    &i.to_string(),
                ])
                .spawn()
                .unwrap(),
        );
    }
    // Read while they race: every read is a whole, valid document.
    let mut reads = 0;
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        if let Ok(bytes) = fs::read(module.join(".auto-signal")) {
            autoctl::protocol::signal::parse(&bytes).unwrap_or_else(|p| {
                panic!("torn read: {p:?} in {:?}", String::from_utf8_lossy(&bytes))
            });
            reads += 1;
        }
    }
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let _ = reads;
    sb.cmd()
        .args(["signal", "validate"])
        .arg(&module)
        .assert()
        .code(0);
    let names: Vec<String> = fs::read_dir(&module)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(
        names,
        vec![".auto-signal".to_string()],
        "no temp files left behind"
    );
}

#[test]
fn read_prints_the_document_or_a_field_and_clear_removes_it() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    sb.cmd()
        .args(["signal", "read"])
        .arg(&module)
        .assert()
        .code(1)
        .stdout("");
    fs::write(
        module.join(".auto-signal"),
        r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    sb.cmd()
        .args(["signal", "read"])
        .arg(&module)
        .args(["--field", "next"])
        .assert()
        .code(0)
        .stdout("exec\n");
    // v1 signals have no iteration: "not set" is a no.
    sb.cmd()
        .args(["signal", "read"])
        .arg(&module)
        .args(["--field", "iteration"])
        .assert()
        .code(1)
        .stdout("");
    let output = sb
        .cmd()
        .args(["signal", "read"])
        .arg(&module)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["step"], "check");
    fs::write(module.join(".auto-signal"), "{oops").unwrap();
    let output = sb
        .cmd()
        .args(["signal", "read"])
        .arg(&module)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("is invalid"));
    sb.cmd()
        .args(["signal", "clear"])
        .arg(&module)
        .assert()
        .code(0);
    assert!(!module.join(".auto-signal").exists());
    sb.cmd()
        .args(["signal", "clear"])
        .arg(&module)
        .assert()
        .code(0);
    sb.cmd()
        .args(["signal", "clear", "no-such-dir"])
        .assert()
        .code(2);
}

#[test]
fn a_fifo_planted_at_the_signal_is_refused_without_hanging() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    let fifo = module.join(".auto-signal");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let output = sb
        .cmd()
        .args(["signal", "validate"])
        .arg(&module)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("not a regular file"));
    // A FIFO where the stop file should be still means stop, and does not hang either.
    let stop = module.join(".auto-stop");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&stop)
            .status()
            .unwrap()
            .success()
    );
    sb.cmd()
        .args(["stop", "check"])
        .arg(&module)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(0)
        .stdout("unknown\n");
}

#[test]
fn broken_pipe_is_a_clean_exit() {
    let sb = Sandbox::new();
    let file = sb.write("s.json", VALID);
    let paths: Vec<String> = (0..5000).map(|_| file.display().to_string()).collect();
    let mut child = sb
        .std_cmd()
        .args(["signal", "validate"])
        .args(&paths)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then hang up, like `| head -1`.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Seed 000: "conflict unresolvable (after 3 retries, stays executing) → (stop)". The count
/// lives in the module (`.auto-retry`), not in the agent's memory.
#[test]
fn write_retries_a_merge_conflict_three_times_then_stops() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    let write = |result: &str| {
        sb.cmd()
            .args(["signal", "write"])
            .arg(&module)
            .args(["--step", "merge", "--result", result])
            .assert()
            .code(0);
        let doc: Value =
            serde_json::from_slice(&fs::read(module.join(".auto-signal")).unwrap()).unwrap();
        doc["next"].as_str().unwrap().to_string()
    };
    let attempt = || -> Option<u64> {
        fs::read(module.join(".auto-retry")).ok().map(|bytes| {
            serde_json::from_slice::<Value>(&bytes).unwrap()["attempt"]
                .as_u64()
                .unwrap()
        })
    };
    assert_eq!(write("conflict"), "merge");
    assert_eq!(attempt(), Some(1));
    assert_eq!(write("conflict"), "merge");
    // A success resets the count.
    assert_eq!(write("success"), "report");
    assert_eq!(attempt(), None);
    for n in 1..=3 {
        assert_eq!(write("conflict"), "merge");
        assert_eq!(attempt(), Some(n));
    }
    assert_eq!(write("conflict"), "(stop)");
    assert_eq!(attempt(), None, "the counter goes with the last retry");
    sb.cmd()
        .args(["signal", "validate", "--strict"])
        .arg(&module)
        .assert()
        .code(0);
    // A corrupt counter is one line, exit 2, and the signal is left as it was.
    fs::write(module.join(".auto-retry"), "{\"attempt\": \"x\"}").unwrap();
    let before = fs::read(module.join(".auto-signal")).unwrap();
    let output = sb
        .cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args(["--step", "merge", "--result", "conflict"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains(".auto-retry"));
    assert_eq!(fs::read(module.join(".auto-signal")).unwrap(), before);
    sb.cmd()
        .args(["signal", "clear"])
        .arg(&module)
        .assert()
        .code(0);
    assert!(!module.join(".auto-retry").exists());
}

#[test]
fn write_refuses_a_result_the_checkpoint_does_not_allow() {
    let sb = Sandbox::new();
    let module = sb.module("m");
    // exec reported a mid-exec checkpoint: the check that follows runs at mid-exec.
    sb.cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args(["--step", "exec", "--result", "(mid-exec)"])
        .assert()
        .code(0);
    let output = sb
        .cmd()
        .args(["signal", "write"])
        .arg(&module)
        .args(["--step", "check", "--result", "ACCEPT"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = one_stderr_line(&output);
    assert!(
        line.contains("result ACCEPT at mid-exec")
            && line.contains("CONTINUE, NEEDS_FIX, REPLAN or BLOCKED"),
        "{line}"
    );
}

#[test]
fn retry_counter_fixtures_are_read_or_refused_by_the_schema() {
    let sb = Sandbox::new();
    for (validity, code) in [("valid", 0), ("invalid", 2)] {
        for path in fixtures("auto-retry", validity) {
            let module = sb.module(&format!("m-{validity}"));
            fs::copy(&path, module.join(".auto-retry")).unwrap();
            let output = sb
                .cmd()
                .args(["signal", "write"])
                .arg(&module)
                .args(["--step", "merge", "--result", "conflict"])
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(code), "{}", path.display());
            if code == 2 {
                assert!(one_stderr_line(&output).contains(".auto-retry"));
            } else {
                // The valid fixture is at attempt 2: this conflict is the third.
                let count: Value =
                    serde_json::from_slice(&fs::read(module.join(".auto-retry")).unwrap()).unwrap();
                assert_eq!(count["attempt"], 3);
            }
        }
    }
}

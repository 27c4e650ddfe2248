//! `autoctl checkpoint …`: wholework's checkpoint files.

use std::fs;
use std::process::Stdio;

use serde_json::Value;

use crate::util::{Sandbox, fixtures, json_lines, names, one_stderr_line, stdout};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn single_round_trip_and_stale_rules() {
    let sb = Sandbox::new();
    let read = |n: &str| {
        sb.cmd()
            .args(["checkpoint", "read-single", n])
            .output()
            .unwrap()
    };
    let out = read("317");
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "0\n"),
        "no checkpoint reads as 0"
    );
    sb.cmd()
        .args(["checkpoint", "write-single", "317", "2"])
        .assert()
        .code(0)
        .stdout("");
    let path = sb.path(".tmp/auto-state-317.json");
    let doc = read_json(&path);
    assert!(
        autoctl::schema::violations("auto-state", &doc).is_empty(),
        "{doc}"
    );
    assert_eq!(
        (
            doc["issue_number"].as_u64(),
            doc["verify_iteration_count"].as_u64()
        ),
        (Some(317), Some(2))
    );
    assert_eq!(stdout(&read("317")), "2\n");
    // Stale: the file's issue number does not match.
    fs::write(
        sb.path(".tmp/auto-state-318.json"),
        fs::read(&path).unwrap(),
    )
    .unwrap();
    let out = read("318");
    assert_eq!(stdout(&out), "0\n");
    assert!(one_stderr_line(&out).contains("stale: the checkpoint is for issue 317, not 318"));
    // Label conflict: live phase/done discards and deletes it.
    let out = sb
        .cmd()
        .args([
            "checkpoint",
            "read-single",
            "317",
            "--live-phase",
            "phase/done",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(json_lines(&out)[0]["verify_iteration_count"], 0);
    assert!(one_stderr_line(&out).contains("Checkpoint discarded: live labels show phase/done."));
    assert!(!path.exists());
    sb.cmd()
        .args(["checkpoint", "delete-single", "318"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["checkpoint", "delete-single", "318"])
        .assert()
        .code(0);
    assert!(!sb.path(".tmp/auto-state-318.json").exists());
}

/// Truncated checkpoints and other schema versions: one line naming the file, exit 2.
#[test]
fn bad_checkpoints_are_errors() {
    let sb = Sandbox::new();
    fs::create_dir(sb.path(".tmp")).unwrap();
    for path in fixtures("auto-state", "invalid") {
        fs::copy(&path, sb.path(".tmp/auto-state-317.json")).unwrap();
        let out = sb
            .cmd()
            .args(["checkpoint", "read-single", "317"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let line = one_stderr_line(&out);
        assert!(line.contains("auto-state-317.json"), "{line}");
        if path.ends_with("truncated.json") {
            assert!(line.contains("truncated"), "{line}");
        }
        if path.ends_with("schema-v2.json") {
            assert!(
                line.contains("schema version \"v2\"; this autoctl reads \"v1\""),
                "{line}"
            );
        }
    }
    for path in fixtures("auto-state", "valid") {
        let doc: Value = read_json(&path);
        assert!(autoctl::schema::violations("auto-state", &doc).is_empty());
        fs::copy(&path, sb.path(".tmp/auto-state-317.json")).unwrap();
        sb.cmd()
            .args(["checkpoint", "read-single", "317"])
            .assert()
            .code(0);
    }
    for args in [
        &["checkpoint", "write-single", "0", "1"][..],
        &["checkpoint", "write-single", "5", "-1"],
        &["checkpoint", "read-single", "x"],
        &["checkpoint", "read-single", "5", "--live-phase", "shipped"],
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_stderr_line(&out);
    }
}

#[test]
fn batch_lifecycle() {
    let sb = Sandbox::new();
    let id = "12345-1718336400";
    sb.cmd()
        .args([
            "checkpoint",
            "write-batch",
            id,
            "--remaining",
            "101 102",
            "103,104",
            "105",
        ])
        .assert()
        .code(0);
    let path = sb.path(&format!(".tmp/auto-batch-state-{id}.json"));
    assert!(autoctl::schema::violations("auto-batch-state", &read_json(&path)).is_empty());
    sb.cmd()
        .args(["checkpoint", "update-batch", id, "101", "complete"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["checkpoint", "update-batch", id, "102", "complete"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["checkpoint", "update-batch", id, "103", "fail"])
        .assert()
        .code(0);
    let out = sb
        .cmd()
        .args(["checkpoint", "read-batch", id])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "104 105\n")
    );
    let doc = read_json(&path);
    assert_eq!(doc["completed"], serde_json::json!([101, 102]));
    assert_eq!(doc["failed"], serde_json::json!([103]));
    assert_eq!(
        stdout(
            &sb.cmd()
                .args(["checkpoint", "list-batches"])
                .output()
                .unwrap()
        ),
        format!("{id}\n")
    );
    let active = read_json(&sb.path(".tmp/auto-batch-active.json"));
    assert!(autoctl::schema::violations("auto-batch-active", &active).is_empty());
    // The default batch keeps the old file name and is never indexed.
    sb.cmd()
        .args(["checkpoint", "write-batch", "default", "--remaining", "7"])
        .assert()
        .code(0);
    assert!(sb.path(".tmp/auto-batch-state.json").exists());
    assert_eq!(
        stdout(
            &sb.cmd()
                .args(["checkpoint", "list-batches"])
                .output()
                .unwrap()
        ),
        format!("{id}\n")
    );
    sb.cmd()
        .args(["checkpoint", "delete-batch", id])
        .assert()
        .code(0);
    assert!(!path.exists());
    let out = sb
        .cmd()
        .args(["checkpoint", "list-batches", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(json_lines(&out)[0], serde_json::json!([]));
    let out = sb
        .cmd()
        .args(["checkpoint", "read-batch", id])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), out.stdout.is_empty()),
        (Some(1), true),
        "no batch: exit 1"
    );
    sb.cmd()
        .args(["checkpoint", "delete-batch", id])
        .assert()
        .code(0);
}

/// Lock side files exist only while a lock is held: touching a missing batch leaves no trace,
/// and neither does writing, updating or deleting one.
#[test]
fn no_lock_files_for_batches_that_do_not_exist() {
    let sb = Sandbox::new();
    let dir = sb.path(".tmp");
    fs::create_dir(&dir).unwrap();
    let out = sb
        .cmd()
        .args(["checkpoint", "update-batch", "b9", "1", "complete"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("no batch b9"));
    sb.cmd()
        .args(["checkpoint", "delete-batch", "b9"])
        .assert()
        .code(0);
    assert_eq!(names(&dir), Vec::<String>::new());
    sb.cmd()
        .args(["checkpoint", "write-batch", "b1", "--remaining", "1", "2"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["checkpoint", "update-batch", "b1", "1", "complete"])
        .assert()
        .code(0);
    assert_eq!(
        names(&dir),
        ["auto-batch-active.json", "auto-batch-state-b1.json"]
    );
    sb.cmd()
        .args(["checkpoint", "delete-batch", "b1"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["checkpoint", "delete-batch", "b9"])
        .assert()
        .code(0);
    assert_eq!(names(&dir), ["auto-batch-active.json"]);
}

#[test]
fn bad_batch_input() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["checkpoint", "write-batch", "1-2", "--remaining", "5", "6"])
        .assert()
        .code(0);
    let cases: [(&[&str], &str); 8] = [
        (
            &["write-batch", "../escape", "--remaining", "1"],
            "a batch id has only",
        ),
        (
            &["write-batch", "a b", "--remaining", "1"],
            "a batch id has only",
        ),
        (
            &["write-batch", "3-4", "--remaining", "1", "x"],
            "not an issue number",
        ),
        (
            &["write-batch", "3-4", "--remaining", "1", "1"],
            "lists an issue twice",
        ),
        (
            &["write-batch", "3-4", "--remaining", "1", "--failed", "1"],
            "more than one of",
        ),
        (
            &["update-batch", "1-2", "99", "complete"],
            "issue 99 is not part of this batch",
        ),
        (&["update-batch", "9-9", "5", "complete"], "no batch 9-9"),
        (&["update-batch", "1-2", "5", "done"], "invalid value"),
    ];
    for (args, needle) in cases {
        let out = sb.cmd().arg("checkpoint").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_stderr_line(&out);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
    // Batch state files that are truncated or of another version are refused on update.
    for path in fixtures("auto-batch-state", "invalid") {
        fs::copy(&path, sb.path(".tmp/auto-batch-state-1-2.json")).unwrap();
        let out = sb
            .cmd()
            .args(["checkpoint", "update-batch", "1-2", "5", "fail"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        one_stderr_line(&out);
        assert_eq!(
            fs::read(sb.path(".tmp/auto-batch-state-1-2.json")).unwrap(),
            fs::read(&path).unwrap(),
            "left as it was"
        );
    }
    // A corrupt index refuses a new batch before anything is written.
    fs::write(
        sb.path(".tmp/auto-batch-active.json"),
        "{\"schema_version\": \"v1\", \"act",
    )
    .unwrap();
    let out = sb
        .cmd()
        .args(["checkpoint", "write-batch", "5-6", "--remaining", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("auto-batch-active.json"));
    assert!(!sb.path(".tmp/auto-batch-state-5-6.json").exists());
    let out = sb
        .cmd()
        .args(["checkpoint", "list-batches"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    for path in fixtures("auto-batch-active", "invalid") {
        if let Ok(doc) = serde_json::from_slice::<Value>(&fs::read(&path).unwrap()) {
            assert!(
                !autoctl::schema::violations("auto-batch-active", &doc).is_empty(),
                "{}",
                path.display()
            );
        }
        fs::copy(&path, sb.path(".tmp/auto-batch-active.json")).unwrap();
        let out = sb
            .cmd()
            .args(["checkpoint", "list-batches"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
    }
    for path in fixtures("auto-batch-active", "valid") {
        fs::copy(&path, sb.path(".tmp/auto-batch-active.json")).unwrap();
        sb.cmd()
            .args(["checkpoint", "list-batches"])
            .assert()
            .code(0);
    }
}

#[test]
fn writes_replace_planted_symlinks() {
    let sb = Sandbox::new();
    let victim = sb.write("victim", "precious");
    fs::create_dir(sb.path(".tmp")).unwrap();
    std::os::unix::fs::symlink(&victim, sb.path(".tmp/auto-state-5.json")).unwrap();
    sb.cmd()
        .args(["checkpoint", "write-single", "5", "1"])
        .assert()
        .code(0);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(
        stdout(
            &sb.cmd()
                .args(["checkpoint", "read-single", "5"])
                .output()
                .unwrap()
        ),
        "1\n"
    );
}

/// Two (here twenty) batches starting at once all land in the active index; twenty updates
/// to one batch at once all land in its lists.
#[test]
fn concurrent_batches_lose_no_update() {
    let sb = Sandbox::new();
    let spawn = |args: Vec<String>| {
        sb.std_cmd()
            .arg("checkpoint")
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..20)
        .map(|i| {
            spawn(vec![
                "write-batch".into(),
                format!("{}-1718336400", 1000 + i),
                "--remaining".into(),
                "1 2 3".into(),
            ])
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let listed = stdout(
        &sb.cmd()
            .args(["checkpoint", "list-batches"])
            .output()
            .unwrap(),
    );
    assert_eq!(listed.lines().count(), 20, "{listed}");
    let issues: Vec<String> = (1..=20).map(|n| n.to_string()).collect();
    sb.cmd()
        .args(["checkpoint", "write-batch", "big-1", "--remaining"])
        .args(&issues)
        .assert()
        .code(0);
    let children: Vec<_> = (1..=20)
        .map(|n| {
            spawn(vec![
                "update-batch".into(),
                "big-1".into(),
                n.to_string(),
                if n % 2 == 0 {
                    "complete".into()
                } else {
                    "fail".into()
                },
            ])
        })
        .collect();
    for child in children {
        assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    }
    let doc = read_json(&sb.path(".tmp/auto-batch-state-big-1.json"));
    assert_eq!(doc["remaining"], serde_json::json!([]));
    assert_eq!(
        (
            doc["completed"].as_array().unwrap().len(),
            doc["failed"].as_array().unwrap().len()
        ),
        (10, 10)
    );
    // Deleting them all at once empties the index.
    let children: Vec<_> = (0..20)
        .map(|i| {
            spawn(vec![
                "delete-batch".into(),
                format!("{}-1718336400", 1000 + i),
            ])
        })
        .collect();
    for child in children {
        assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    }
    let out = sb
        .cmd()
        .args(["checkpoint", "list-batches"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "big-1\n");
}

#[test]
fn an_unwritable_directory_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let dir = sb.module("ro");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let out = sb.unprivileged(&[
        "checkpoint",
        "write-single",
        "5",
        "1",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    let out2 = sb.unprivileged(&[
        "checkpoint",
        "write-batch",
        "1-2",
        "--remaining",
        "5",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    for out in [out, out2] {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        one_stderr_line(&out);
    }
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing was left behind"
    );
}

/// Item 15: a write-batch that fails (here: the active index is corrupt) leaves neither a
/// batch, nor an index entry, nor a lock side file behind.
#[test]
fn a_failed_write_batch_leaves_no_lock_file() {
    let sb = Sandbox::new();
    let dir = sb.path(".tmp");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("auto-batch-active.json"), "{ not json").unwrap();
    let out = sb
        .cmd()
        .args(["checkpoint", "write-batch", "b1", "--remaining", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("auto-batch-active.json"));
    assert_eq!(names(&dir), ["auto-batch-active.json"]);
}

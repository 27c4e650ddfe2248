//! `autoctl task new`: a module that lints clean and routes at once, in a git repository too;
//! nothing overwritten (exit 3); bad names, roots, titles, types and goals refused (exit 2)
//! with nothing left behind; concurrent creations all listed.

use std::fs;
use std::process::Command;

use crate::util::{Sandbox, names, one_stderr_line, stdout};

fn git_init(sb: &Sandbox) {
    let status = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(sb.root())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_new_module_lints_clean_and_routes() {
    let sb = Sandbox::new();
    git_init(&sb);
    let out = sb
        .cmd()
        .args(["task", "new", "TASK/hello", "--title", "Say hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "TASK/hello\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("created task module TASK/hello"),
        "{stderr}"
    );
    assert!(
        stderr.contains("say what to build in TASK/hello/.target.md"),
        "{stderr}"
    );

    // Lint: nothing but the stub's one warning (the git checks included: the root's
    // .gitignore covers the transient files): the loop would stop until the target is written.
    let lint = sb
        .cmd()
        .args(["lint", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(lint.status.code(), Some(0), "{lint:?}");
    let findings: serde_json::Value = serde_json::from_slice(&lint.stdout).unwrap();
    let rules: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["target-empty"], "{findings}");
    // The stub says nothing yet: the loop stops and says why.
    let next = sb
        .cmd()
        .args(["next", "--task", "TASK/hello", "--format", "json"])
        .output()
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&next.stdout).unwrap();
    assert_eq!(answer["next"], "(stop)");
    assert!(
        answer["rationale"].as_str().unwrap().contains("fill"),
        "{answer}"
    );

    // With a goal the module is planned right away; --type adds a tag and a profile that
    // gate reads without a warning.
    sb.cmd()
        .args([
            "task",
            "new",
            "TASK/api",
            "--title",
            "Add the API",
            "--type",
            "feature",
        ])
        .args(["--goal", "Serve GET /hello returning the word hello."])
        .assert()
        .code(0)
        .stdout("TASK/api\n");
    sb.cmd()
        .args(["next", "--task", "TASK/api"])
        .assert()
        .code(0)
        .stdout("plan\n");
    sb.cmd()
        .args(["gate", "--checkpoint", "post-plan", "--score", "0.8"])
        .args(["--profile", "TASK/api/.type-profile.md"])
        .assert()
        .code(0)
        .stdout("PASS\n")
        .stderr("");
    let index = fs::read_to_string(sb.path("TASK/api/.index.md")).unwrap();
    let front = autoctl::protocol::index::parse_front_matter(&index).unwrap();
    assert_eq!(front["title"], "Add the API");
    assert_eq!(front["status"], "draft");
    assert_eq!(front["tags"], serde_json::json!(["feature"]));
    assert_eq!(front["created"], front["updated"]);
    assert!(chrono::DateTime::parse_from_rfc3339(front["created"].as_str().unwrap()).is_ok());
    assert_eq!(
        fs::read_to_string(sb.path("TASK/.index.md")).unwrap(),
        "# TASK\n\n- [hello](./hello/.index.md) — Say hello\n- [api](./api/.index.md) — Add the API\n"
    );
    // Filled in, the stub lints clean too.
    fs::write(
        sb.path("TASK/hello/.target.md"),
        "# Target\n\nWrite hello.txt saying hello.\n",
    )
    .unwrap();
    sb.cmd()
        .args(["lint", "--deny", "warnings"])
        .assert()
        .code(0);
    // No lock file or temporary file is left in the root.
    assert_eq!(
        names(&sb.path("TASK")),
        [".gitignore", ".index.md", "api", "hello"]
    );
}

#[test]
fn an_existing_module_is_a_conflict_and_stays_untouched() {
    let sb = Sandbox::new();
    sb.cmd()
        .args([
            "task",
            "new",
            "TASK/auth",
            "--goal",
            "Keep this goal intact.",
        ])
        .assert()
        .code(0);
    let before = fs::read_to_string(sb.path("TASK/auth/.target.md")).unwrap();
    let listing = fs::read_to_string(sb.path("TASK/.index.md")).unwrap();
    sb.module("TASK/empty");
    sb.write("TASK/file", "not a module");
    for dir in ["TASK/auth", "TASK/auth/", "TASK/empty", "TASK/file"] {
        let out = sb
            .cmd()
            .args(["task", "new", dir, "--title", "Other"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{dir}");
        assert!(one_stderr_line(&out).contains("already exists"), "{dir}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(
        fs::read_to_string(sb.path("TASK/auth/.target.md")).unwrap(),
        before
    );
    assert_eq!(
        fs::read_to_string(sb.path("TASK/.index.md")).unwrap(),
        listing
    );
    assert!(
        fs::read_dir(sb.path("TASK/empty"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn bad_input_is_one_line_and_leaves_nothing() {
    let sb = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&["TASK/has space"], "outside letters, digits"),
        (&["TASK/dot.ted"], "outside letters, digits"),
        (&["TASK/.hidden"], "outside letters, digits"),
        (&["TASK/.."], "not a module directory name"),
        (&["notes/hello"], "is not a task root"),
        (&["hello"], "is not a task root"),
        (&["TASK/a", "--title", ""], "--title is empty"),
        (&["TASK/a", "--title", "two\nlines"], "control character"),
        (&["TASK/a", "--type", "bug fix"], "--type"),
        (&["TASK/a", "--type", "true;rm"], "--type"),
        (&["TASK/a", "--goal", "  "], "--goal is empty"),
        (&["TASK/a", "--goal", "esc\u{1b}[2J"], "control character"),
    ];
    for (args, expected) in cases {
        let out = sb.cmd().args(["task", "new"]).args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_stderr_line(&out);
        assert!(line.contains(expected), "{args:?}: {line}");
        assert!(out.stdout.is_empty());
    }
    assert!(!sb.path("TASK").exists(), "nothing created for bad input");
    assert!(!sb.path("notes").exists());

    // A symlink planted at the listing is refused, never written through.
    sb.module("TASK");
    sb.write("elsewhere.md", "precious");
    std::os::unix::fs::symlink(sb.path("elsewhere.md"), sb.path("TASK/.index.md")).unwrap();
    let out = sb.cmd().args(["task", "new", "TASK/b"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("symlink"));
    assert_eq!(
        fs::read_to_string(sb.path("elsewhere.md")).unwrap(),
        "precious"
    );
    assert!(!sb.path("TASK/b").exists());
}

/// A goal `next` would call empty ("Notify test.": two words) is refused with the reason, so
/// the loop does not stop at once later with the cause only in the pane; --force creates the
/// module anyway and warns; lint reports the draft's empty target.
#[test]
fn a_goal_too_short_to_plan_is_refused_unless_forced() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args(["task", "new", "TASK/n", "--goal", "Notify test."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_stderr_line(&out);
    assert!(line.contains("2 words of content"), "{line}");
    assert!(line.contains("--force"), "{line}");
    assert!(!sb.path("TASK/n").exists());
    let out = sb
        .cmd()
        .args(["task", "new", "TASK/n", "--goal", "Notify test.", "--force"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: --goal \"Notify test.\" has 2 words"),
        "{out:?}"
    );
    sb.cmd()
        .args(["next", "--task", "TASK/n"])
        .assert()
        .code(0)
        .stdout("(stop)\n");
    let lint = sb
        .cmd()
        .args(["lint", "--deny", "warnings"])
        .output()
        .unwrap();
    assert_eq!(lint.status.code(), Some(1));
    assert!(
        stdout(&lint).contains("warning[target-empty]")
            || stdout(&lint).contains("error[target-empty]"),
        "{lint:?}"
    );
}

/// A read-only task root: exit 2, one line, nothing half made.
#[test]
fn a_read_only_root_fails_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let root = sb.module("TASK");
    fs::set_permissions(&root, fs::Permissions::from_mode(0o555)).unwrap();
    let out = sb.unprivileged(&["task", "new", sb.path("TASK/a").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(one_stderr_line(&out).contains("TASK"));
    assert!(fs::read_dir(&root).unwrap().next().is_none());
}

/// Modules created at once in one root are all listed: the listing is rewritten under a lock.
#[test]
fn concurrent_creations_are_all_listed() {
    let sb = Sandbox::new();
    let children: Vec<_> = (0..12)
        .map(|n| {
            sb.std_cmd()
                .args(["task", "new", &format!("TASK/m{n}")])
                .args(["--goal", "Build part {n} of the whole."])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let listing = fs::read_to_string(sb.path("TASK/.index.md")).unwrap();
    for n in 0..12 {
        assert_eq!(
            listing
                .matches(&format!("[m{n}](./m{n}/.index.md)"))
                .count(),
            1,
            "{listing}"
        );
    }
    sb.cmd()
        .args(["lint", "--deny", "warnings"])
        .assert()
        .code(0);
}

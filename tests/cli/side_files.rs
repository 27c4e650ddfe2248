//! Commands clean up after themselves: the flock side files that serialize a
//! read-modify-write (`FILE.lock`, `.NAME.guard`) exist only while the lock is held, so
//! nothing is left beside a user's files (or in /var/tmp) once a command has finished.

use crate::util::{Sandbox, names};

#[test]
fn a_released_heartbeat_lock_leaves_no_guard() {
    let sb = Sandbox::new();
    let dir = sb.module("locks");
    let lock = dir.join("nightly.lock");
    let lock = lock.to_str().unwrap();
    for verb in ["acquire", "refresh", "status"] {
        sb.cmd()
            .args(["lock", verb, lock, "--owner", "cron:nightly"])
            .assert()
            .code(0);
        // Held: the lock record and nothing else.
        assert_eq!(names(&dir), ["nightly.lock"], "after lock {verb}");
    }
    sb.cmd()
        .args(["lock", "release", lock, "--owner", "cron:nightly"])
        .assert()
        .code(0);
    assert_eq!(names(&dir), Vec::<String>::new());
}

#[test]
fn converge_history_and_profile_learn_leave_only_their_documents() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/auth");
    sb.cmd()
        .current_dir(&task)
        .args(["converge", "--previous", "0.4", "--current", "0.5"])
        .args(["--history", ".converge.json"])
        .assert()
        .code(0);
    sb.cmd()
        .current_dir(&task)
        .args([
            "converge",
            "--current",
            "0.4",
            "--history",
            ".converge.json",
        ])
        .args(["--direction", "split the parser"])
        .assert()
        .code(1);
    sb.cmd()
        .current_dir(&task)
        .args(["profile", "learn", "--iterations", "12"])
        .assert()
        .code(0);
    assert_eq!(names(&task), [".converge.json", ".type-profile.md"]);
}

#[test]
fn the_stall_state_lock_goes_with_its_command() {
    let sb = Sandbox::new();
    let state = sb.path("state/stall.json");
    // Without a tmux server the check fails, but only after taking the state lock.
    let _ = sb
        .cmd()
        .args(["stall", "check", "--target", "nowhere", "--state"])
        .arg(&state)
        .output()
        .unwrap();
    let leftovers: Vec<String> = names(&sb.path("state"))
        .into_iter()
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
}

/// A relative HOME (and no state dir set otherwise) is refused in one line: the state would
/// be written under the current directory and lost to the next command run elsewhere. A
/// relative XDG_STATE_HOME is ignored, as the XDG specification says; hooks still exit 0 and
/// record nothing.
#[test]
fn a_relative_home_is_refused_and_nothing_is_written_under_the_current_directory() {
    let sb = Sandbox::new();
    let cwd = sb.path("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let run = |args: &[&str], stdin: &str| {
        sb.cmd()
            .env("HOME", "home")
            .env("XDG_STATE_HOME", "state")
            .env_remove("AUTOCTL_STATE_DIR")
            .current_dir(&cwd)
            .args(args)
            .write_stdin(stdin.to_string())
            .output()
            .unwrap()
    };
    let output = run(&["run", "status"], "");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("HOME is a relative path (home)"),
        "{stderr}"
    );

    let payload = r#"{"session_id": "s1", "cwd": "/tmp", "hook_event_name": "Stop", "transcript_path": "/nonexistent"}"#;
    let output = run(&["hook", "event"], payload);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        names(&cwd),
        Vec::<String>::new(),
        "nothing under the current directory"
    );
}

/// Hooks ignore a relative HOME: Claude Code runs them in the agent's environment, a hook
/// never fails, and it records where the supervisor reads — the state directory under the
/// user's home from the user database (on c968843 and a14af3d it recorded nothing). A debug
/// build reads the user database from `AUTOCTL_TEST_PASSWD`, so the test does not write
/// under the real home of the user running it.
#[test]
fn hooks_with_a_relative_home_record_under_the_users_home_from_the_user_database() {
    use std::os::unix::fs::MetadataExt;
    if !crate::util::failpoints_armed() {
        return; // AUTOCTL_TEST_PASSWD is read by debug builds only
    }
    let sb = Sandbox::new();
    let cwd = sb.path("cwd");
    let project = sb.module("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let home = sb.path("user-home");
    let passwd = sb.write(
        "passwd",
        format!(
            "other:x:{}:0:Other:/nonexistent-other:/bin/sh\nme:x:{uid}:{uid}:Me:{}:/bin/sh\n",
            uid + 1,
            home.display()
        ),
    );
    let run = |args: &[&str], stdin: String| {
        sb.cmd()
            .env("HOME", "home")
            .env("XDG_STATE_HOME", "state")
            .env_remove("AUTOCTL_STATE_DIR")
            .env_remove("TMUX_PANE")
            .env("AUTOCTL_TEST_PASSWD", &passwd)
            .env("CLAUDE_PROJECT_DIR", &project)
            .current_dir(&cwd)
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap()
    };
    let event = serde_json::json!({"session_id": "rel-home", "cwd": project,
        "hook_event_name": "Stop", "transcript_path": "/nonexistent"});
    let output = run(&["hook", "event"], event.to_string());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let state = home.join(".local/state/autoctl");
    assert!(state.join("hooks").is_dir(), "{output:?}");
    let records = names(&state.join("hooks"));
    assert!(
        records.iter().any(|n| n.contains("rel-home")),
        "{records:?} {output:?}"
    );
    let request = serde_json::json!({"session_id": "rel-home", "cwd": project,
        "hook_event_name": "PermissionRequest", "permission_mode": "default",
        "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let output = run(&["hook", "permission-request"], request.to_string());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let log = std::fs::read_to_string(state.join("policy/decisions.jsonl")).unwrap();
    assert!(log.contains("\"rel-home\""), "{log}");
    assert_eq!(
        names(&cwd),
        Vec::<String>::new(),
        "nothing under the current directory"
    );
    // A person's command still refuses the relative HOME in one line.
    let output = run(&["run", "status"], String::new());
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

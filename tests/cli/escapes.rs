//! Issue 23 item 6: what autoctl prints as text never carries a raw control character to the
//! terminal, whatever a file or a payload held — a `session_id` with escape codes was printed
//! raw by `policy log` and `doctor`. One escaping ([`autoctl::output::guarded`] under every
//! text line, `printable` for each field) covers every text output.

use std::fs;

use crate::util::Sandbox;

const HOSTILE: &str = "x\u{1b}]0;pwned\u{7}\u{1b}[2J";

/// No control character but the layout's tabs and line breaks, and the hostile text shown
/// escaped.
fn clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what} printed a raw control character: {text:?}"
    );
    assert!(text.contains("\\u{1b}"), "{what}: {text:?}");
}

#[test]
fn policy_log_escapes_every_field_of_a_hostile_line() {
    let sb = Sandbox::new();
    let log = sb.path("state/policy/decisions.jsonl");
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    let entry = serde_json::json!({
        "time": format!("2027-01-01T00:00:00Z{HOSTILE}"),
        "session": HOSTILE,
        "door": format!("hook{HOSTILE}"),
        "event": HOSTILE,
        "mode": HOSTILE,
        "tool": HOSTILE,
        "input": HOSTILE,
        "decision": format!("allow{HOSTILE}"),
        "rule": HOSTILE,
    });
    fs::write(&log, format!("{entry}\n")).unwrap();
    let out = sb.cmd().args(["policy", "log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    clean("policy log", &out.stdout);
}

#[test]
fn doctor_escapes_a_recorded_session_id() {
    let sb = Sandbox::new();
    let project = sb.module("project");
    let payload = serde_json::json!({
        "session_id": HOSTILE,
        "hook_event_name": "Stop",
        "cwd": project,
        "transcript_path": sb.path("none.jsonl"),
    });
    let out = crate::util::with_stdin(
        {
            let mut cmd = sb.std_cmd();
            cmd.current_dir(&project);
            cmd
        },
        &["hook", "event"],
        payload.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = sb
        .cmd()
        .current_dir(&project)
        .arg("doctor")
        .output()
        .unwrap();
    clean("doctor", &out.stdout);
}

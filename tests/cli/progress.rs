//! No silent waits, and no noise where nobody watches: a long operation shows its progress
//! on stderr when stderr is a terminal (a real tmux pane here), erases it when done, and
//! never writes it to stdout or to a piped stderr.

use std::process::Stdio;

use crate::tmuxfix::{start, start_in_shell, wait_for};
use crate::util::{Sandbox, bin};

/// `pane ready --wait` on a busy pane, run at a terminal: the wait says what it waits for,
/// and the line is gone when the answer comes; stdout (a file) holds only the answer.
#[test]
fn a_wait_at_a_terminal_shows_progress_then_erases_it() {
    let sb = Sandbox::new();
    start(&sb, "busy", "sleep 600");
    let out = sb.path("answer.txt");
    let command = format!(
        "AUTOCTL_TMUX_SOCKET={} {} pane ready busy --wait 4s >{}; echo \"exit=$?\"",
        sb.socket,
        bin(),
        out.display()
    );
    let shell = start_in_shell(&sb, "shell", &command);
    let during = wait_for(&sb, &shell, "the progress line", |screen, _| {
        screen.contains("autoctl: waiting for a shell prompt in busy")
    });
    assert!(during.contains("… not yet: \"sleep\""), "{during}");
    let after = wait_for(&sb, &shell, "the command's end", |screen, _| {
        screen.contains("exit=1")
    });
    assert!(
        !after.contains("autoctl: waiting"),
        "erased when done:\n{after}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "not ready: \"sleep\" is running\n"
    );
}

/// The same wait with stderr piped (a log, a script): not a byte of progress.
#[test]
fn a_wait_into_a_pipe_prints_only_the_answer() {
    let sb = Sandbox::new();
    start(&sb, "busy", "sleep 600");
    let out = sb
        .std_cmd()
        .args(["pane", "ready", "busy", "--wait", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "not ready: \"sleep\" is running\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

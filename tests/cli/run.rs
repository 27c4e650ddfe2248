//! `autoctl run start|stop|status|lookup`: the run registry, its conflicts and its bad inputs
//! (corrupted, foreign, read-only databases, a read-only state dir, a full disk).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use serde_json::Value;

use crate::tmuxfix::{capture, new_session, type_line};
use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

fn db(sb: &Sandbox) -> PathBuf {
    sb.path("state/autoctl.db")
}

/// The directory of the autoctl binary under test (put on the PATH of test panes).
pub fn bin_dir() -> PathBuf {
    Path::new(crate::util::bin())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A session in the sandbox's private tmux server running a plain shell (prompt `$ `, autoctl
/// on PATH); returns its pane id.
pub fn session(sb: &Sandbox, name: &str) -> String {
    let path = format!(
        "PATH={}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = format!("HOME={}", sb.path("home").display());
    let command = [
        "env",
        &path,
        "PS1=$ ",
        &home,
        "bash",
        "--norc",
        "--noprofile",
    ];
    new_session(sb, name, (200, 50), &command)
}

fn start(sb: &Sandbox, name: &str, task: &Path) {
    session(sb, name);
    sb.cmd()
        .args(["run", "start", "--session", name, "--task"])
        .arg(task)
        .assert()
        .code(0)
        .stdout("");
}

fn status_json(sb: &Sandbox) -> Vec<Value> {
    let output = sb
        .cmd()
        .args(["run", "status", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reports = json_lines(&output);
    for report in &reports {
        let violations = autoctl::schema::violations("run-status", report);
        assert!(violations.is_empty(), "{report}: {violations:?}");
    }
    reports
}

#[test]
fn start_status_lookup_stop_round_trip() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/auth");
    sb.cmd()
        .args(["run", "status"])
        .assert()
        .code(0)
        .stdout(predicates::str::starts_with("SESSION\tSTATE"));
    assert!(!db(&sb).exists(), "a status query must not create state");

    session(&sb, "agent-1");
    sb.cmd()
        .args(["run", "start", "--session", "agent-1", "--task"])
        .arg(&task)
        .args(["--max-iterations", "5", "--timeout", "90s"])
        .assert()
        .code(0)
        .stdout("")
        .stderr("");
    let reports = status_json(&sb);
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    let canonical = fs::canonicalize(&task).unwrap();
    assert_eq!(report["session"], "agent-1");
    assert_eq!(report["task"], canonical.to_str().unwrap());
    assert_eq!(report["status"], "running");
    assert_eq!(report["mode"], "observe");
    assert_eq!(report["target"], "=agent-1:");
    assert_eq!(report["max_iterations"], 5);
    assert_eq!(report["timeout_ms"], 90_000);
    assert_eq!(report["iteration"], 0);

    let text = sb.cmd().args(["run", "status"]).output().unwrap();
    let lines: Vec<String> = stdout(&text).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].starts_with("agent-1\trunning\tobserve\t0/5\t"),
        "{lines:?}"
    );

    // Lookup by any spelling of the directory.
    sb.cmd()
        .args(["run", "lookup", "--task"])
        .arg(task.join("../auth/"))
        .assert()
        .code(0)
        .stdout("agent-1\n");
    let json = sb
        .cmd()
        .args(["run", "lookup", "--format", "json", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(
        json_lines(&json),
        vec![serde_json::json!({"session_name": "agent-1", "status": "running"})]
    );

    sb.cmd()
        .args([
            "run",
            "stop",
            "--session",
            "agent-1",
            "--message",
            "back after lunch",
        ])
        .assert()
        .code(0)
        .stdout("");
    let stop: Value = serde_json::from_slice(&fs::read(task.join(".auto-stop")).unwrap()).unwrap();
    assert_eq!(stop["reason"], "user_stop");
    assert_eq!(stop["message"], "back after lunch");
    assert!(autoctl::schema::violations("auto-stop", &stop).is_empty());
    let report = &status_json(&sb)[0];
    assert_eq!(report["status"], "stopped");
    assert_eq!(report["stop_reason"], "user_stop");
    assert!(report["ended_at"].is_string());
    // No loop owns the dir any more.
    sb.cmd()
        .args(["run", "lookup", "--task"])
        .arg(&task)
        .assert()
        .code(1)
        .stdout("");
    // Stopping again warns and succeeds; the outcome is kept.
    let again = sb
        .cmd()
        .args(["run", "stop", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0));
    assert!(one_stderr_line(&again).contains("already ended (stopped: user_stop)"));

    // A new start in the same session replaces the ended row and clears the stale stop file.
    let restart = sb
        .cmd()
        .args(["run", "start", "--session", "agent-1", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(restart.status.code(), Some(0));
    assert!(one_stderr_line(&restart).contains("removed a leftover .auto-stop (reason user_stop)"));
    assert!(!task.join(".auto-stop").exists());
    let reports = status_json(&sb);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["status"], "running");
}

#[test]
fn a_second_start_for_a_session_or_a_task_dir_exits_3_naming_the_owner() {
    let sb = Sandbox::new();
    let a = sb.module("TASK/a");
    let b = sb.module("TASK/b");
    start(&sb, "one", &a);

    let same_session = sb
        .cmd()
        .args(["run", "start", "--session", "one", "--task"])
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(same_session.status.code(), Some(3));
    let line = one_stderr_line(&same_session);
    assert!(
        line.contains("session \"one\" already runs a loop on"),
        "{line}"
    );
    assert!(line.contains("TASK/a"), "{line}");

    // The same directory under another spelling (symlink, `..`, trailing slash) is the same dir.
    std::os::unix::fs::symlink(&a, sb.path("link-to-a")).unwrap();
    session(&sb, "two");
    for spelling in [
        sb.path("link-to-a"),
        b.join("../a/"),
        PathBuf::from(format!("{}/", a.display())),
    ] {
        let same_dir = sb
            .cmd()
            .args(["run", "start", "--session", "two", "--task"])
            .arg(&spelling)
            .output()
            .unwrap();
        assert_eq!(same_dir.status.code(), Some(3), "{}", spelling.display());
        let line = one_stderr_line(&same_dir);
        assert!(
            line.contains("already has a loop running in session \"one\""),
            "{line}"
        );
    }
    // The owner is the answer even when the new session has no tmux pane at all.
    let paneless = sb
        .cmd()
        .args(["run", "start", "--session", "three", "--task"])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(paneless.status.code(), Some(3), "{paneless:?}");
    assert!(one_stderr_line(&paneless).contains("already has a loop running in session \"one\""));
    // Nothing was added or changed by the refused starts.
    let reports = status_json(&sb);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["session"], "one");
    sb.cmd()
        .args(["run", "start", "--session", "two", "--task"])
        .arg(&b)
        .assert()
        .code(0);
    assert_eq!(status_json(&sb).len(), 2);
}

#[test]
fn bad_start_arguments_are_one_line_and_exit_2() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/a");
    let file = sb.write("TASK/file", "x");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--timeout".into(), "0".into()], "needs a unit"),
        (vec!["--timeout".into(), "0s".into()], "is zero"),
        (vec!["--timeout".into(), "-5m".into()], "negative"),
        (vec!["--timeout".into(), "1y".into()], "unknown unit"),
        (
            vec!["--timeout".into(), "400d".into()],
            "longer than a year",
        ),
        (
            vec!["--max-iterations".into(), "0".into()],
            "0 is not in 1..=",
        ),
        (
            vec!["--mode".into(), "drive".into()],
            "invalid value 'drive'",
        ),
        (vec!["--target=-t".into()], "starts with '-'"),
        (
            vec![
                "--mode".into(),
                "dispatch".into(),
                "--command".into(),
                "claude {bogus}".into(),
            ],
            "known placeholders",
        ),
        (
            vec![
                "--mode".into(),
                "dispatch".into(),
                "--into".into(),
                "shell".into(),
                "--launch".into(),
            ],
            "--launch is for observe mode and --into agent",
        ),
        (vec!["--launch=claude {next".into()], "unclosed"),
        (
            vec!["--table".into(), "no-such-table".into()],
            "no-such-table",
        ),
    ];
    for (extra, expected) in cases {
        let output = sb
            .cmd()
            .args(["run", "start", "--session", "s", "--task"])
            .arg(&task)
            .args(&extra)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{extra:?}");
        let line = one_stderr_line(&output);
        assert!(line.contains(expected), "{extra:?}: {line}");
    }
    for (task, expected) in [
        (sb.path("TASK/missing"), "no such directory"),
        (file, "not a directory"),
    ] {
        let output = sb
            .cmd()
            .args(["run", "start", "--session", "s", "--task"])
            .arg(&task)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(one_stderr_line(&output).contains(expected));
    }
    for session in ["", "tab\there", "new\nline"] {
        let output = sb
            .cmd()
            .args(["run", "start", "--session", session, "--task"])
            .arg(&task)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{session:?}");
        one_stderr_line(&output);
    }
    assert!(
        !db(&sb).exists() || status_json(&sb).is_empty(),
        "no run was registered"
    );
}

/// `--launch` types only at a shell prompt: not into a running program, not into a shell
/// waiting on a heredoc's `> `. Refused: exit 2, one line, nothing typed, nothing registered.
#[test]
fn launch_refuses_a_pane_without_a_shell_prompt_unless_forced() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/a");
    let capture = |pane: &str| capture(&sb, pane);
    let type_line = |pane: &str, text: &str| type_line(&sb, pane, text);
    let wait_screen = |pane: &str, what: &dyn Fn(&str) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !what(&capture(pane)) {
            assert!(std::time::Instant::now() < deadline, "{}", capture(pane));
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let busy = session(&sb, "busy");
    wait_screen(&busy, &|s| s.trim_end().ends_with('$'));
    type_line(&busy, "cat");
    let heredoc = session(&sb, "heredoc");
    wait_screen(&heredoc, &|s| s.trim_end().ends_with('$'));
    type_line(&heredoc, "cat <<EOF");
    wait_screen(&heredoc, &|s| s.trim_end().ends_with('>'));
    for (name, pane, why) in [
        ("busy", &busy, "\"cat\" is running"),
        ("heredoc", &heredoc, "no shell prompt"),
    ] {
        let output = sb
            .cmd()
            .args([
                "run",
                "start",
                "--session",
                name,
                "--launch=echo LAUNCHED",
                "--task",
            ])
            .arg(&task)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{name}: {output:?}");
        let line = one_stderr_line(&output);
        assert!(
            line.contains("not at a shell prompt") && line.contains(why),
            "{line}"
        );
        assert!(!capture(pane).contains("LAUNCHED"), "{name}: nothing typed");
    }
    assert!(status_json(&sb).is_empty(), "no run was registered");
    // --force is the person's explicit choice: the text goes to the program in front.
    sb.cmd()
        .args([
            "run",
            "start",
            "--session",
            "busy",
            "--launch=echo LAUNCHED",
            "--force",
            "--task",
        ])
        .arg(&task)
        .assert()
        .code(0);
    wait_screen(&busy, &|s| s.contains("echo LAUNCHED\necho LAUNCHED"));
}

/// A task directory whose name would change the typed command is refused before anything is
/// registered or typed.
#[test]
fn a_task_dir_name_with_shell_syntax_is_refused_for_launch_and_dispatch() {
    let sb = Sandbox::new();
    for name in ["x;touch pwned", "x$(id)", "x!!", "a b", "x`id`"] {
        let task = sb.module(&format!("TASK/{name}"));
        for mode in [vec!["--launch"], vec!["--mode", "dispatch"]] {
            let output = sb
                .cmd()
                .args(["run", "start", "--session", "s", "--task"])
                .arg(&task)
                .args(&mode)
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(2), "{name:?} {mode:?}");
            let line = one_stderr_line(&output);
            assert!(
                line.contains("refusing to render {task}"),
                "{name:?}: {line}"
            );
        }
    }
    assert!(!db(&sb).exists() || status_json(&sb).is_empty());
    assert!(!sb.path("pwned").exists());
}

#[test]
fn session_names_with_shell_metacharacters_are_data() {
    let sb = Sandbox::new();
    let names = [
        "a b",
        "x; touch PWNED-1",
        "$(touch PWNED-2)",
        "`touch PWNED-3`",
        "it's \"quoted\" \\ too",
        "ünï €",
    ];
    for (i, name) in names.iter().enumerate() {
        let task = sb.module(&format!("TASK/t{i}"));
        let pane = session(&sb, name);
        let by_name = sb
            .cmd()
            .args(["run", "start", "--session", name, "--task"])
            .arg(&task)
            .output()
            .unwrap();
        match by_name.status.code() {
            Some(0) => {}
            Some(2) => {
                // tmux reads some names as ids (`$(…)` starts like the session id `$1`): the
                // start says so instead of watching the wrong session.
                let line = one_stderr_line(&by_name);
                assert!(line.contains("pass --target"), "{name:?}: {line}");
                sb.cmd()
                    .args([
                        "run",
                        "start",
                        "--session",
                        name,
                        "--target",
                        &pane,
                        "--task",
                    ])
                    .arg(&task)
                    .assert()
                    .code(0);
            }
            other => panic!("{name:?}: exit {other:?}"),
        }
        sb.cmd()
            .args(["run", "lookup", "--task"])
            .arg(&task)
            .assert()
            .code(0)
            .stdout(format!("{name}\n"));
    }
    let sessions: Vec<String> = status_json(&sb)
        .iter()
        .map(|r| r["session"].as_str().unwrap().to_string())
        .collect();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(sessions, expected);
    let prom = sb
        .cmd()
        .args(["run", "status", "--format", "prometheus"])
        .output()
        .unwrap();
    let text = stdout(&prom);
    assert!(
        text.contains(r#"autoctl_run_running{session="it's \"quoted\" \\ too"} 1"#),
        "{text}"
    );
    for name in names {
        sb.cmd()
            .args(["run", "stop", "--session", name])
            .assert()
            .code(0);
    }
    for i in 1..=3 {
        assert!(!sb.path(&format!("PWNED-{i}")).exists());
        assert!(!sb.path(&format!("TASK/t{i}/PWNED-{i}")).exists());
    }
}

#[test]
fn status_formats_and_missing_runs() {
    let sb = Sandbox::new();
    let a = sb.module("TASK/a");
    let b = sb.module("TASK/b");
    start(&sb, "a", &a);
    start(&sb, "b", &b);
    sb.cmd()
        .args(["run", "stop", "--session", "b", "--reason", "timeout"])
        .assert()
        .code(0);

    let one = sb
        .cmd()
        .args(["run", "status", "--format", "json", "--task"])
        .arg(&b)
        .output()
        .unwrap();
    let reports = json_lines(&one);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["stop_reason"], "timeout");

    let prom = sb
        .cmd()
        .args(["run", "status", "--format", "prometheus"])
        .output()
        .unwrap();
    assert_eq!(prom.status.code(), Some(0));
    let text = stdout(&prom);
    for needle in [
        "# TYPE autoctl_runs gauge\n",
        "autoctl_runs{status=\"running\"} 1\n",
        "autoctl_runs{status=\"stopped\"} 1\n",
        "autoctl_run_running{session=\"a\"} 1\n",
        "autoctl_run_running{session=\"b\"} 0\n",
        "autoctl_run_max_iterations{session=\"a\"} 20\n",
        "autoctl_run_timeout_seconds{session=\"a\"} 1800\n",
        "autoctl_run_recoveries{session=\"a\",scope=\"total\"} 0\n",
    ] {
        assert!(text.contains(needle), "{needle:?} not in:\n{text}");
    }
    // Every sample is `name{labels} number`; every family has HELP and TYPE.
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            assert!(rest.ends_with(" gauge"), "{line}");
        } else if !line.starts_with("# HELP ") {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
            assert!(line.starts_with("autoctl_"), "{line}");
        }
    }

    let missing = sb
        .cmd()
        .args(["run", "status", "--session", "nobody"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(one_stderr_line(&missing).contains("no run for session \"nobody\""));
    let stop_missing = sb
        .cmd()
        .args(["run", "stop", "--session", "nobody"])
        .output()
        .unwrap();
    assert_eq!(stop_missing.status.code(), Some(2));
    assert!(one_stderr_line(&stop_missing).contains("no run for session \"nobody\""));
    sb.cmd()
        .args(["run", "stop"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--session"));
}

/// `run status` on a terminal lines its columns up; piped it stays tab-separated (for `cut`
/// and `column`); every column of the table is explained in its help.
#[test]
fn status_is_aligned_on_a_terminal_and_every_column_is_in_its_help() {
    let sb = Sandbox::new();
    let a = sb.module("TASK/a");
    start(&sb, "a-longer-name", &a);
    let piped = stdout(&sb.cmd().args(["run", "status"]).output().unwrap());
    assert!(piped.lines().all(|l| l.contains('\t')), "{piped}");
    // `script` (util-linux) gives the command a terminal as its stdout, in the sandbox's
    // environment.
    let autoctl = sb.cmd();
    let mut script = StdCommand::new("script");
    script.args([
        "-qec",
        &format!("{} run status", autoctl.get_program().to_string_lossy()),
        "/dev/null",
    ]);
    for (key, value) in autoctl.get_envs() {
        match value {
            Some(value) => script.env(key, value),
            None => script.env_remove(key),
        };
    }
    let shown = script.output().expect("script (util-linux) runs");
    let shown = String::from_utf8(shown.stdout).unwrap().replace('\r', "");
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(!shown.contains('\t'), "{shown}");
    for column in ["STATE", "MODE", "TASK", "NEEDS-PERSON"] {
        // Each column starts at the same place in the header and the row, after a gap.
        let at = lines[0].find(column).unwrap();
        assert!(lines[0][..at].ends_with("  "), "{column}: {shown}");
        assert!(lines[1][..at].ends_with("  "), "{column}: {shown}");
        assert_ne!(lines[1].as_bytes()[at], b' ', "{column}: {shown}");
    }
    let help = stdout(&sb.cmd().args(["run", "status", "--help"]).output().unwrap());
    for column in autoctl::supervise::report::TEXT_HEADER.split('\t') {
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{column} "))),
            "{column} is not explained in run status --help"
        );
    }
}

#[test]
fn stop_in_dispatch_mode_removes_the_signal_observe_mode_leaves_it_to_the_agent() {
    let sb = Sandbox::new();
    let signal =
        r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#;
    for mode in ["observe", "dispatch"] {
        let task = sb.module(&format!("TASK/{mode}"));
        fs::write(task.join(".auto-signal"), signal).unwrap();
        session(&sb, mode);
        sb.cmd()
            .args(["run", "start", "--session", mode, "--mode", mode, "--task"])
            .arg(&task)
            .assert()
            .code(0);
        sb.cmd()
            .args(["run", "stop", "--session", mode])
            .assert()
            .code(0);
        assert!(task.join(".auto-stop").exists());
        assert_eq!(
            task.join(".auto-signal").exists(),
            mode == "observe",
            "{mode}"
        );
    }
}

#[test]
fn a_task_dir_deleted_under_a_run_can_still_be_looked_up_and_stopped() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/gone");
    start(&sb, "s", &task);
    fs::remove_dir(&task).unwrap();
    sb.cmd()
        .args(["run", "lookup", "--task"])
        .arg(&task)
        .assert()
        .code(0)
        .stdout("s\n");
    let output = sb
        .cmd()
        .args(["run", "stop", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(one_stderr_line(&output).contains("no longer exists"));
    assert!(!task.exists(), "the stop must not recreate the directory");
    assert_eq!(status_json(&sb)[0]["status"], "stopped");
}

/// Every registry command on a database it must not touch: one line, exit 2, bytes unchanged.
fn assert_refused_untouched(sb: &Sandbox, expected: &str) {
    let task = sb.module("TASK/x");
    let before = fs::read(db(sb)).unwrap();
    let commands: Vec<Vec<String>> = vec![
        vec![
            "run".into(),
            "start".into(),
            "--session".into(),
            "s".into(),
            "--task".into(),
            task.display().to_string(),
        ],
        vec!["run".into(), "status".into()],
        vec![
            "run".into(),
            "status".into(),
            "--format".into(),
            "prometheus".into(),
        ],
        vec!["run".into(), "stop".into(), "--session".into(), "s".into()],
        vec![
            "run".into(),
            "lookup".into(),
            "--task".into(),
            task.display().to_string(),
        ],
    ];
    for args in commands {
        let output = sb.cmd().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&output), "", "{args:?}");
        let line = one_stderr_line(&output);
        assert!(line.contains(expected), "{args:?}: {line}");
        assert!(line.contains("autoctl.db"), "{args:?}: {line}");
    }
    assert!(
        fs::read(db(sb)).unwrap() == before,
        "the database file was modified"
    );
    assert!(!task.join(".auto-stop").exists());
    let leftovers: Vec<_> = fs::read_dir(sb.path("state"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(leftovers, vec!["autoctl.db".to_string()], "no side files");
}

#[test]
fn a_corrupted_database_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let mut garbage = b"this is not SQLite at all\n".repeat(200);
    garbage.extend_from_slice(&[0, 1, 2, 255, 254]);
    fs::write(db(&sb), &garbage).unwrap();
    assert_refused_untouched(&sb, "not a database");
}

#[test]
fn a_truncated_database_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/a");
    start(&sb, "a", &task);
    let bytes = fs::read(db(&sb)).unwrap();
    // Keep the header, lose the pages: SQLite sees a malformed image.
    fs::write(db(&sb), &bytes[..100]).unwrap();
    for side in ["autoctl.db-wal", "autoctl.db-shm"] {
        let _ = fs::remove_file(sb.path("state").join(side));
    }
    let output = sb.cmd().args(["run", "status"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = one_stderr_line(&output);
    assert!(line.contains("autoctl.db"), "{line}");
}

#[test]
fn someone_elses_sqlite_database_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let status = StdCommand::new("sqlite3")
        .arg(db(&sb))
        .arg("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        .status()
        .expect("sqlite3 is installed");
    assert!(status.success());
    assert_refused_untouched(&sb, "did not create");
}

#[test]
fn a_read_only_database_is_a_clear_error_and_nothing_changes() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/a");
    let other = sb.module("TASK/b");
    start(&sb, "a", &task);
    // A read-only registry: read-only for its owner too, so the test holds without root; as
    // root the command runs as another user, for whom it is read-only anyway.
    fs::set_permissions(sb.path("state"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(db(&sb), fs::Permissions::from_mode(0o444)).unwrap();
    let before = status_json(&sb);
    let output = sb.unprivileged(&[
        "run",
        "start",
        "--session",
        "b",
        "--task",
        other.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let line = one_stderr_line(&output);
    assert!(line.contains("autoctl.db"), "{line}");
    assert!(
        line.contains("readonly") || line.contains("read-only") || line.contains("permission"),
        "{line}"
    );
    let output = sb.unprivileged(&["run", "stop", "--session", "a"]);
    assert_eq!(output.status.code(), Some(2));
    one_stderr_line(&output);
    assert!(
        !task.join(".auto-stop").exists(),
        "the stop file is written only with the registry"
    );
    let without_clock = |mut reports: Vec<Value>| {
        for report in &mut reports {
            report["elapsed_ms"] = Value::Null;
        }
        reports
    };
    assert_eq!(without_clock(before), without_clock(status_json(&sb)));
}

#[test]
fn a_read_only_state_dir_is_a_clear_error() {
    let sb = Sandbox::new();
    let task = sb.module("TASK/a");
    fs::set_permissions(sb.path("state"), fs::Permissions::from_mode(0o555)).unwrap();
    let output = sb.unprivileged(&[
        "run",
        "start",
        "--session",
        "a",
        "--task",
        task.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let line = one_stderr_line(&output);
    assert!(line.contains("autoctl.db"), "{line}");
    assert!(!db(&sb).exists());
    // A state dir that cannot even be created.
    let output = sb
        .unprivileged_cmd()
        .args([
            "run",
            "start",
            "--session",
            "a",
            "--task",
            task.to_str().unwrap(),
        ])
        .env("AUTOCTL_STATE_DIR", sb.path("state/sub/dir"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("cannot create state directory"));
}

/// A small tmpfs mounted for the test's lifetime.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: PathBuf, size: &str) -> Option<Tmpfs> {
        fs::create_dir_all(&dir).unwrap();
        let ok = StdCommand::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(&dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(&self.0).status();
    }
}

#[test]
#[allow(clippy::print_stderr)] // a skipped test says so
fn a_full_disk_fails_cleanly_and_keeps_the_registry() {
    let sb = Sandbox::new();
    let Some(_tmpfs) = Tmpfs::mount(sb.path("state"), "256k") else {
        eprintln!("skipped: mounting a tmpfs needs root (CI runs as root)");
        return;
    };
    let task = sb.module("TASK/a");
    start(&sb, "first", &task);
    let pane = session(&sb, "more");
    // Fill the file system to the last byte.
    let mut filler = fs::File::create(sb.path("state/filler")).unwrap();
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    while std::io::Write::write_all(&mut filler, &block[..1]).is_ok() {}
    drop(filler);

    let mut failures = 0;
    for i in 0..20 {
        let task = sb.module(&format!("TASK/more-{i}"));
        let output = sb
            .cmd()
            .args([
                "run",
                "start",
                "--session",
                &format!("more-{i}"),
                "--target",
                &pane,
                "--task",
            ])
            .arg(&task)
            .args([
                "--command",
                &format!(
                    "claude \"/ai-cli-task {{next}} {{task}} {}\"",
                    "x".repeat(2000)
                ),
            ])
            .output()
            .unwrap();
        match output.status.code() {
            Some(0) => {}
            Some(2) => {
                let line = one_stderr_line(&output);
                assert!(line.contains("full"), "{line}");
                failures += 1;
                break;
            }
            other => panic!(
                "unexpected exit {other:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }
    assert_eq!(failures, 1, "the disk never filled up");
    fs::remove_file(sb.path("state/filler")).unwrap();
    // The registry is intact and still usable.
    let reports = status_json(&sb);
    assert!(
        reports
            .iter()
            .any(|r| r["session"] == "first" && r["status"] == "running")
    );
    let check = StdCommand::new("sqlite3")
        .arg(db(&sb))
        .arg("PRAGMA integrity_check;")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "ok");
    sb.cmd()
        .args(["run", "stop", "--session", "first"])
        .assert()
        .code(0);
}

/// The autoctl invocations in `examples/cron` and `examples/systemd/*.service` (commented
/// ones included), as argument lists.
fn example_invocations() -> Vec<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut found = Vec::new();
    for file in ["cron", "systemd/autoctl-tick.service"] {
        let text = fs::read_to_string(root.join(file)).unwrap();
        for line in text.lines() {
            let line = line.trim_start_matches(['#', ' ']);
            let Some(at) = line.find("autoctl run ") else {
                continue;
            };
            if !(line.starts_with("* * * * *")
                || line.starts_with("@reboot")
                || line.starts_with("ExecStart="))
            {
                continue;
            }
            let command = line[at + "autoctl ".len()..]
                .split(['>', '&'])
                .next()
                .unwrap();
            found.push(command.split_whitespace().map(str::to_string).collect());
        }
    }
    found
}

#[test]
fn the_cron_and_systemd_examples_run_as_written() {
    let sb = Sandbox::new();
    let invocations = example_invocations();
    let kinds: Vec<&str> = invocations.iter().map(|a| a[1].as_str()).collect();
    assert!(kinds.contains(&"tick") && kinds.contains(&"recover") && kinds.contains(&"status"));
    let task = sb.module("TASK/a");
    start(&sb, "a", &task);
    for args in invocations {
        let output = sb.cmd().args(&args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "autoctl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!stdout(&output).is_empty(), "autoctl {}", args.join(" "));
    }
}

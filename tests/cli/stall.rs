//! `autoctl stall check`: heartbeats against a real tmux server, fake agents that replay real
//! Claude Code screens and record every key they receive, and real programs.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::tmuxfix::{fake_agent, start, start_in_shell, wait_for};
use crate::util::{Sandbox, json_lines, one_stderr_line};

const SAFE: &str = "tests/fixtures/panes/claude-code/permission-bash-safe.txt";
const RM_RF: &str = "tests/fixtures/panes/claude-code/permission-bash-rm-rf.txt";
const QUOTA: &str = "tests/fixtures/panes/claude-code/quota-session-limit-waiting.txt";
const QUOTA_MENU: &str = "tests/fixtures/panes/claude-code/quota-session-limit-menu.txt";

/// One `stall check` with a private state file; returns its single JSON line.
pub fn check(sb: &Sandbox, target: &str, extra: &[&str]) -> Value {
    check_at(sb, target, None, extra)
}

/// [`check`] at a fake clock (`AUTOCTL_NOW`), for screens whose decision depends on the time
/// (a usage limit's reset is a wait only within --max-quota-wait).
pub fn check_at(sb: &Sandbox, target: &str, now: Option<&str>, extra: &[&str]) -> Value {
    let mut cmd = sb.cmd();
    if let Some(now) = now {
        cmd.env("AUTOCTL_NOW", now);
    }
    let output = cmd
        .args(["stall", "check", "--target", target, "--state"])
        .arg(sb.path("stall.json"))
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mut lines = json_lines(&output);
    assert_eq!(lines.len(), 1);
    lines.remove(0)
}

fn verdict(report: &Value) -> (&str, &str, bool) {
    (
        report["verdict"].as_str().unwrap(),
        report["action"].as_str().unwrap(),
        report["applied"].as_bool().unwrap(),
    )
}

#[test]
fn a_safe_permission_prompt_is_answered_once_with_option_1() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    let args = ["--threshold", "2", "--apply"];
    assert_eq!(
        verdict(&check(&sb, &agent, &args)),
        ("progress", "none", false)
    );
    assert_eq!(
        verdict(&check(&sb, &agent, &args)),
        ("unchanged", "none", false)
    );
    let report = check(&sb, &agent, &args);
    assert_eq!(verdict(&report), ("stalled", "answer", true), "{report}");
    assert_eq!(report["class"], "permission");
    assert_eq!(report["keys"], serde_json::json!([{"text": "1"}]));
    // An approval is not a stall recovery: it spends the answer budget.
    assert_eq!(report["recoveries"]["total"], 0);
    assert_eq!(report["answers"]["total"], 1);
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "1");
    // The agent reacted (its screen changed): progress, nothing more typed.
    let report = check(&sb, &agent, &args);
    assert_eq!(verdict(&report), ("progress", "none", false));
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "1");
}

#[test]
fn without_apply_nothing_is_typed_and_no_recovery_is_spent() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    for _ in 0..2 {
        check(&sb, &agent, &["--threshold", "1"]);
    }
    let report = check(&sb, &agent, &["--threshold", "1"]);
    assert_eq!(verdict(&report), ("stalled", "answer", false));
    assert_eq!(report["recoveries"]["total"], 0);
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
}

#[test]
fn a_destructive_prompt_is_escalated_once_and_never_answered() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", RM_RF);
    let args = ["--threshold", "1", "--apply"];
    check(&sb, &agent, &args);
    let report = check(&sb, &agent, &args);
    assert_eq!(verdict(&report), ("stalled", "escalate", false), "{report}");
    assert_eq!(report["destructive"], true);
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .contains("destructive (rm"),
        "{report}"
    );
    // Repeated identical escalations don't spam.
    for _ in 0..3 {
        let report = check(&sb, &agent, &args);
        assert_eq!(verdict(&report), ("stalled", "none", false));
    }
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing was typed into a destructive prompt"
    );
}

#[test]
fn a_quota_screen_is_a_wait_not_a_stall() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", QUOTA);
    // "resets 5:43am (UTC)": within --max-quota-wait (6h) of these checks.
    for minute in 0..4 {
        let now = format!("2027-01-01T03:0{minute}:00Z");
        let report = check_at(&sb, &agent, Some(&now), &["--threshold", "1", "--apply"]);
        assert_eq!(verdict(&report), ("waiting", "wait", false));
        assert_eq!(report["unchanged"], 0);
        assert_eq!(report["class"], "quota");
        assert!(report["quota_wait_since"].is_string());
        assert!(report["reset_at"].is_string(), "{report}");
    }
    assert_eq!(crate::tmuxfix::agent_caught_up(&sb, &agent, &log), "");
}

/// The menu Claude Code opens at a usage limit ("Stop and wait" / "Upgrade your plan") is a
/// quota wait: no stall counted, no recovery spent, no stop written, and nothing typed — the
/// menu is never answered, however long it stays.
#[test]
fn the_usage_limit_menu_is_waited_out_never_answered() {
    let sb = Sandbox::new();
    let task = sb.module("task");
    let (agent, log) = fake_agent(&sb, "agent", QUOTA_MENU);
    for minute in 0..4 {
        let now = format!("2027-01-01T03:0{minute}:00Z");
        let report = check_at(
            &sb,
            &agent,
            Some(&now),
            &[
                "--threshold",
                "1",
                "--apply",
                "--max-recoveries-per-iteration",
                "0",
                "--task",
                task.to_str().unwrap(),
            ],
        );
        assert_eq!(verdict(&report), ("waiting", "wait", false), "{report}");
        assert_eq!(report["class"], "quota");
        assert_eq!(report["unchanged"], 0);
        assert!(report["quota_wait_since"].is_string(), "{report}");
        assert!(report["reset_at"].is_string(), "{report}");
        assert_eq!(report["destructive"], true, "flagged: never answered");
    }
    assert!(
        !task.join(".auto-stop").exists(),
        "a quota wait is no stall"
    );
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed into the limit menu"
    );
}

/// The negative checks below rest on `typed_after`: it must see a key typed before its marker,
/// an answer that ended the read, and nothing where nothing was typed.
#[test]
fn typed_after_sees_what_reached_a_prompt() {
    let sb = Sandbox::new();
    let question = |name: &str| {
        let pane = start(
            &sb,
            name,
            "bash -c 'read -p \"Continue? [y/N] \" x; echo \"got $x\"; sleep 30'",
        );
        wait_for(&sb, &pane, "the question", |s, _| s.contains("[y/N]"));
        pane
    };
    let untouched = question("untouched");
    assert_eq!(
        crate::tmuxfix::typed_after(&sb, &untouched, "[y/N]", true),
        ""
    );
    let half = question("half");
    crate::tmuxfix::tmux_ok(&sb, &["send-keys", "-t", &half, "-l", "y"]);
    assert_eq!(crate::tmuxfix::typed_after(&sb, &half, "[y/N]", false), "y");
    let answered = question("answered");
    crate::tmuxfix::tmux_ok(&sb, &["send-keys", "-t", &answered, "y", "Enter"]);
    // The marker may be echoed before or after the program's reply to the answer.
    let typed = crate::tmuxfix::typed_after(&sb, &answered, "[y/N]", false);
    assert!(typed == "y" || typed == "y\ngot y", "{typed:?}");
}

#[test]
fn a_child_process_in_front_of_claude_is_observed_never_typed_into() {
    let sb = Sandbox::new();
    let out = sb.path("answer");
    let prompt = start(
        &sb,
        "child",
        &format!(
            "bash -c 'read -p \"Continue? (y/n) \" x; echo \"$x\" > {}; sleep 30'",
            out.display()
        ),
    );
    wait_for(&sb, &prompt, "the prompt", |s, _| s.contains("(y/n)"));
    let args = ["--threshold", "1", "--apply"];
    check(&sb, &prompt, &args);
    let report = check(&sb, &prompt, &args);
    assert_eq!(verdict(&report), ("stalled", "none", false), "{report}");
    assert_eq!(report["class"], "yes-no");
    assert_eq!(
        crate::tmuxfix::typed_after(&sb, &prompt, "(y/n)", true),
        "",
        "nothing typed into a child of the agent"
    );
    assert!(!out.exists(), "nothing typed into a child of the agent");
    // The same prompt read with --agent generic is answered.
    let report = check(
        &sb,
        &prompt,
        &["--threshold", "1", "--apply", "--agent", "generic"],
    );
    assert_eq!(verdict(&report), ("stalled", "answer", true), "{report}");
    wait_for(&sb, &prompt, "the answer", |_, _| out.exists());
    assert_eq!(fs::read_to_string(&out).unwrap(), "y\n");
}

/// The review's bypasses against a live pane: a fake Claude Code showing a wrapped
/// `curl … | sh`, a `bash <(curl …)`, an edit of `.claude/settings.json`, and a node program's
/// [Y/n]; real bash questions that default to No. `--apply` types nothing into any of them,
/// and still answers the harmless default-No question.
#[test]
fn stall_check_apply_refuses_the_review_bypasses_on_live_panes() {
    let sb = Sandbox::new();
    let args = ["--threshold", "1", "--apply"];
    for fixture in [
        "permission-destructive-wrapped-curl-pipe-sh",
        "permission-destructive-bash-process-substitution",
        "permission-edit-sensitive-claude-settings",
        "permission-destructive-rm-r-f",
    ] {
        let path = format!("tests/fixtures/panes/synthetic/{fixture}.txt");
        let (agent, log) = fake_agent(&sb, fixture, &path);
        check(&sb, &agent, &args);
        let report = check(&sb, &agent, &args);
        assert_eq!(
            verdict(&report),
            ("stalled", "escalate", false),
            "{fixture}: {report}"
        );
        assert_eq!(report["destructive"], true, "{fixture}");
        assert_eq!(
            crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
            "",
            "{fixture}: nothing typed"
        );
    }
    let question = |name: &str, text: &str| {
        let out = sb.path(&format!("{name}.answer"));
        let pane = start(
            &sb,
            name,
            &format!(
                "bash -c 'printf \"%s\\n\" \"{text}\"; read -p \"Continue? [y/N] \" x; echo \"$x\" > {}; sleep 30'",
                out.display()
            ),
        );
        wait_for(&sb, &pane, "the question", |s, _| s.contains("[y/N]"));
        (pane, out)
    };
    let generic = ["--threshold", "1", "--apply", "--agent", "generic"];
    let (risky, risky_out) = question("risky", "This will drop the staging database.");
    let (harmless, harmless_out) = question("harmless", "Collecting 2 packages.");
    for (pane, out, expected) in [
        (&risky, &risky_out, ("stalled", "escalate", false)),
        (&harmless, &harmless_out, ("stalled", "answer", true)),
    ] {
        check(&sb, pane, &generic);
        let report = check(&sb, pane, &generic);
        assert_eq!(verdict(&report), expected, "{report}");
        if expected.2 {
            wait_for(&sb, pane, "the answer", |_, _| out.exists());
            assert_eq!(fs::read_to_string(out).unwrap(), "y\n");
        } else {
            assert_eq!(
                crate::tmuxfix::typed_after(&sb, pane, "[y/N]", false),
                "",
                "nothing typed into the risky question"
            );
            assert!(!out.exists(), "nothing typed into the risky question");
        }
    }
}

#[test]
fn real_prompts_rm_cp_python_and_less_get_the_policy() {
    let sb = Sandbox::new();
    let victim = sb.write("victim.txt", "keep");
    sb.write("copy.txt", "old");
    let rm = start_in_shell(&sb, "rm", &format!("rm -i {}", victim.display()));
    let cp = start_in_shell(
        &sb,
        "cp",
        &format!("cd {} && cp -i victim.txt copy.txt", sb.root().display()),
    );
    let answer = sb.path("python-answer");
    // python3 runs without libfaketime (the year-ahead CI run preloads it into every child):
    // under it the prompt's input() sometimes ended at once and took the pane with it. The
    // clock under test is autoctl's, not the prompting program's.
    let python = start(
        &sb,
        "python",
        &format!(
            "env -u LD_PRELOAD python3 -c 'import time; open(\"{}\", \"w\").write(input(\"Continue? (y/n) \")); time.sleep(30)'",
            answer.display()
        ),
    );
    let less = start_in_shell(&sb, "less", &format!("less {}", victim.display()));
    wait_for(&sb, &rm, "rm", |s, _| s.contains("rm: remove"));
    wait_for(&sb, &cp, "cp", |s, _| s.contains("overwrite"));
    wait_for(&sb, &python, "python", |s, _| s.contains("(y/n)"));
    wait_for(&sb, &less, "less", |s, c| {
        c == "less" && s.contains("(END)")
    });
    let generic = ["--threshold", "1", "--apply", "--agent", "generic"];
    let many = |sb: &Sandbox| -> Vec<Value> {
        let output = sb
            .cmd()
            .args([
                "stall", "check", "--target", &rm, "--target", &cp, "--target", &python,
                "--target", &less,
            ])
            .args(generic)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        json_lines(&output)
    };
    assert!(many(&sb).iter().all(|r| r["verdict"] == "progress"));
    let reports = many(&sb);
    let by_target = |t: &str| reports.iter().find(|r| r["target"] == t).unwrap().clone();
    assert_eq!(verdict(&by_target(&rm)), ("stalled", "escalate", false));
    assert_eq!(verdict(&by_target(&cp)), ("stalled", "escalate", false));
    assert_eq!(verdict(&by_target(&python)), ("stalled", "answer", true));
    assert_eq!(verdict(&by_target(&less)), ("stalled", "answer", true));
    wait_for(&sb, &python, "python's answer", |_, _| answer.exists());
    assert_eq!(fs::read_to_string(&answer).unwrap(), "y");
    wait_for(&sb, &less, "less to quit", |_, c| c == "bash");
    for (pane, prompt) in [(&rm, "victim.txt'?"), (&cp, "copy.txt'?")] {
        assert_eq!(
            crate::tmuxfix::typed_after(&sb, pane, prompt, false),
            "",
            "{pane}: not answered"
        );
    }
    assert_eq!(
        fs::read_to_string(&victim).unwrap(),
        "keep",
        "rm -i was not answered"
    );
    assert_eq!(
        fs::read_to_string(sb.path("copy.txt")).unwrap(),
        "old",
        "cp -i was not answered"
    );
    // The screen door logs what the policy decided on each question it read (the pager has
    // no question to decide).
    let log = sb
        .cmd()
        .args(["policy", "log", "--format", "json"])
        .output()
        .unwrap();
    let entries = json_lines(&log);
    let decided = |target: &str| {
        entries
            .iter()
            .find(|e| e["run"] == target)
            .map(|e| {
                assert_eq!(e["door"], "screen");
                assert_eq!(e["tool"], "question");
                (
                    e["decision"].as_str().unwrap().to_string(),
                    e["rule"].as_str().unwrap().to_string(),
                )
            })
            .unwrap_or_else(|| panic!("no decision logged for {target}: {entries:?}"))
    };
    assert_eq!(decided(&rm), ("no-decision".into(), "words-of-loss".into()));
    assert_eq!(decided(&cp), ("no-decision".into(), "words-of-loss".into()));
    assert_eq!(
        decided(&python),
        ("allow".into(), "question-without-loss".into())
    );
    assert!(entries.iter().all(|e| e["run"] != less));
}

/// Two `stall check --apply` at once on one target type one answer, not two: with one state
/// file (the default) the state lock serializes them; with two state files the per-pane
/// lock and the pane's answered-marker do.
#[test]
fn two_concurrent_checks_type_one_answer() {
    for shared_state in [true, false] {
        let sb = Sandbox::new();
        let (agent, log) = fake_agent(&sb, "agent", SAFE);
        let state = |i: usize| {
            if shared_state {
                sb.path("stall.json")
            } else {
                sb.path(&format!("stall-{i}.json"))
            }
        };
        for i in 0..2 {
            sb.cmd()
                .args([
                    "stall",
                    "check",
                    "--target",
                    &agent,
                    "--threshold",
                    "1",
                    "--state",
                ])
                .arg(state(i))
                .assert()
                .code(0);
        }
        let children: Vec<_> = (0..2)
            .map(|i| {
                sb.std_cmd()
                    .args([
                        "stall",
                        "check",
                        "--target",
                        &agent,
                        "--threshold",
                        "1",
                        "--apply",
                        "--state",
                    ])
                    .arg(state(i))
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let reports: Vec<Value> = children
            .into_iter()
            .map(|child| {
                let output = child.wait_with_output().unwrap();
                assert_eq!(output.status.code(), Some(0));
                json_lines(&output).remove(0)
            })
            .collect();
        assert_eq!(
            crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
            "1",
            "shared state {shared_state}: {reports:?}"
        );
        let applied = reports.iter().filter(|r| r["applied"] == true).count();
        assert_eq!(applied, 1, "{reports:?}");
    }
}

#[test]
/// Issue 12: approving harmless work never stops a loop. Past `--max-answers` (and with no
/// stall recovery left either) a safe prompt is escalated to a person: nothing typed, no
/// `.auto-stop`. (A stall recovery past its limit is a stall_limit stop: content_stall.rs.)
fn past_the_answer_limit_a_safe_prompt_is_escalated_never_stopped() {
    let sb = Sandbox::new();
    let task = sb.module("task");
    sb.cmd()
        .args(["signal", "write"])
        .arg(&task)
        .args([
            "--step",
            "exec",
            "--result",
            "(mid-exec)",
            "--iteration",
            "4",
        ])
        .assert()
        .code(0);
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    let args = [
        "--threshold",
        "1",
        "--apply",
        "--max-recoveries-per-iteration",
        "0",
        "--max-answers",
        "0",
        "--task",
    ];
    let run = |sb: &Sandbox| {
        let output = sb
            .cmd()
            .args(["stall", "check", "--target", &agent, "--state"])
            .arg(sb.path("stall.json"))
            .args(args)
            .arg(&task)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        json_lines(&output).remove(0)
    };
    run(&sb);
    let report = run(&sb);
    assert_eq!(verdict(&report), ("limit", "escalate", false), "{report}");
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .contains("answer limit reached (0 of 0 this step)"),
        "{report}"
    );
    assert!(!task.join(".auto-stop").exists(), "no stop for an approval");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "no answer past the limit"
    );
    // Escalated once: the next heartbeat waits for the person.
    assert_eq!(verdict(&run(&sb)), ("limit", "none", false));
    assert!(!task.join(".auto-stop").exists());
}

#[test]
fn all_panes_checks_every_pane_in_one_call() {
    let sb = Sandbox::new();
    for name in ["a", "b", "c"] {
        start(&sb, name, "sleep 30");
    }
    // The shell tmux starts the command with is in front until it has exec'd sleep.
    for name in ["a", "b", "c"] {
        wait_for(&sb, name, "sleep in front", |_, command| command == "sleep");
    }
    let output = sb
        .cmd()
        .args(["stall", "check", "--all-panes", "--state"])
        .arg(sb.path("all.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let reports = json_lines(&output);
    assert_eq!(reports.len(), 3);
    assert!(
        reports
            .iter()
            .all(|r| r["foreground"] == "sleep" && r["verdict"] == "progress"),
        "{reports:?}"
    );
    // One missing target among several: its error is one line, the others are still checked.
    let output = sb
        .cmd()
        .args([
            "stall", "check", "--target", "a", "--target", "nosuch", "--target", "b", "--state",
        ])
        .arg(sb.path("all.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(json_lines(&output).len(), 2);
    assert!(one_stderr_line(&output).contains("nosuch: tmux: can't find pane: nosuch"));
}

#[test]
fn a_corrupt_truncated_or_symlinked_state_file_is_an_error_not_a_reset() {
    let sb = Sandbox::new();
    start(&sb, "agent", "sleep 30");
    let state = sb.path("stall.json");
    sb.cmd()
        .args(["stall", "check", "--target", "agent", "--state"])
        .arg(&state)
        .assert()
        .code(0);
    let good = fs::read(&state).unwrap();
    for bad in [
        b"".to_vec(),
        good[..good.len() / 2].to_vec(),
        b"\x00\x01garbage".to_vec(),
        br#"{"version": 1, "targets": {"agent": {"unchanged": "three"}}}"#.to_vec(),
    ] {
        fs::write(&state, &bad).unwrap();
        let output = sb
            .cmd()
            .args(["stall", "check", "--target", "agent", "--state"])
            .arg(&state)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(
            one_stderr_line(&output).contains("is corrupt"),
            "{output:?}"
        );
        assert_eq!(fs::read(&state).unwrap(), bad, "left untouched");
    }
    fs::remove_file(&state).unwrap();
    let victim = sb.write("victim.json", &good);
    std::os::unix::fs::symlink(&victim, &state).unwrap();
    let output = sb
        .cmd()
        .args(["stall", "check", "--target", "agent", "--state"])
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("is a symlink"));
    assert_eq!(fs::read(&victim).unwrap(), good);
    assert!(
        fs::symlink_metadata(&state)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn the_default_state_lives_in_the_state_dir_and_counts_across_runs() {
    let sb = Sandbox::new();
    start(&sb, "agent", "sleep 30");
    // The same screen and foreground every time: the shell tmux starts sleep with first.
    wait_for(&sb, "agent", "sleep in front", |_, command| {
        command == "sleep"
    });
    for expected in [0, 1, 2] {
        let output = sb
            .cmd()
            .args(["stall", "check", "--target", "agent"])
            .output()
            .unwrap();
        assert_eq!(json_lines(&output)[0]["unchanged"], expected);
    }
    let stored = sb.path(&format!("state/stall/{}.json", sb.socket));
    let doc: Value = serde_json::from_slice(&fs::read(stored).unwrap()).unwrap();
    assert!(autoctl::schema::violations("stall-state", &doc).is_empty());
    assert_eq!(doc["targets"]["agent"]["checks"], 3);
}

/// tmux refuses a client command over 16 KiB, so a chained capture of 120 panes must be split
/// into a few calls by autoctl itself — not fall back to one call per pane. A `tmux` shim first
/// on PATH counts the client calls.
#[test]
fn all_panes_over_a_hundred_and_twenty_panes_takes_a_few_tmux_calls() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let real = which_tmux();
    // One client call creates all the panes (120 windows of `cat`, which waits for input).
    let mut args: Vec<String> = vec![
        "new-session".into(),
        "-d".into(),
        "-s".into(),
        "many".into(),
        "cat".into(),
    ];
    for _ in 1..120 {
        args.extend([";", "new-window", "-d", "-t", "many", "cat"].map(String::from));
    }
    let out = std::process::Command::new(&real)
        .env("TMUX_TMPDIR", sb.tmux_tmpdir())
        .args(["-L", &sb.socket])
        .args(&args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let bin = sb.path("shim");
    fs::create_dir_all(&bin).unwrap();
    let calls = sb.path("tmux-calls.log");
    let shim = bin.join("tmux");
    // autoctl runs `tmux -u -L SOCKET SUBCOMMAND …`: the subcommand is the fourth word.
    fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$4\" >> '{}'\nexec '{}' \"$@\"\n",
            calls.display(),
            real
        ),
    )
    .unwrap();
    fs::set_permissions(&shim, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = sb
        .cmd()
        .env("PATH", path)
        .args(["stall", "check", "--all-panes", "--state"])
        .arg(sb.path("many.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let reports = json_lines(&output);
    assert_eq!(reports.len(), 120);
    let mut panes: Vec<&str> = reports
        .iter()
        .map(|r| r["pane"].as_str().unwrap())
        .collect();
    panes.sort_unstable();
    panes.dedup();
    assert_eq!(panes.len(), 120, "each pane reported once");
    assert!(reports.iter().all(|r| r["foreground"] == "cat"));
    let log = fs::read_to_string(&calls).unwrap();
    let captures = log.lines().filter(|l| *l == "display-message").count();
    assert_eq!(
        log.lines().filter(|l| *l == "list-panes").count(),
        1,
        "{log}"
    );
    assert!(
        (2..=6).contains(&captures),
        "120 panes should take a few chained captures, not one per pane: {captures} calls"
    );
}

fn which_tmux() -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_reader_that_goes_away_early_does_not_cost_the_saved_state() {
    // `stall check ... | head -0`: stdout is closed before anything is printed. The heartbeat
    // still counts (the state is saved before printing) and the broken pipe is a clean exit.
    let sb = Sandbox::new();
    let (agent, _log) = fake_agent(&sb, "agent", SAFE);
    let state = sb.path("stall.json");
    for checks in 1..=3 {
        let mut child = sb
            .std_cmd()
            .args(["stall", "check", "--target", &agent, "--state"])
            .arg(&state)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert!(output.stderr.is_empty(), "{output:?}");
        let saved: Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
        assert_eq!(saved["targets"][&agent]["checks"], checks, "{saved}");
        assert_eq!(saved["targets"][&agent]["unchanged"], checks - 1, "{saved}");
    }
}

#[test]
fn supervisors_with_different_state_dirs_take_turns_on_one_tmux_server() {
    // Review finding 10: the typing lock belongs to the tmux server and the pane, not to a
    // state dir. While the server's lock for the pane is held, a supervisor with its own
    // state dir types nothing; released, exactly one of two such supervisors answers.
    use crate::tmuxfix::tmux;
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", SAFE);
    let socket_path = String::from_utf8(
        tmux(
            &sb,
            &["display-message", "-p", "-t", &agent, "#{socket_path}"],
        )
        .stdout,
    )
    .unwrap();
    let pane_id =
        String::from_utf8(tmux(&sb, &["display-message", "-p", "-t", &agent, "#{pane_id}"]).stdout)
            .unwrap();
    let lock_path =
        autoctl::supervise::typing::server_lock_path(Path::new(socket_path.trim()), pane_id.trim());
    let check = |name: &str, apply: bool| {
        let dir = sb.path(name);
        fs::create_dir_all(&dir).unwrap();
        let mut cmd = sb.std_cmd();
        cmd.env("AUTOCTL_STATE_DIR", &dir)
            .args(["stall", "check", "--target", &agent, "--threshold", "1"])
            .stdout(std::process::Stdio::piped());
        if apply {
            cmd.arg("--apply");
        }
        cmd
    };
    for name in ["state-a", "state-b"] {
        assert!(check(name, false).status().unwrap().success());
    }
    let held = autoctl::fsx::FileLock::acquire(&lock_path).unwrap();
    let children: Vec<_> = ["state-a", "state-b"]
        .iter()
        .map(|name| check(name, true).spawn().unwrap())
        .collect();
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "typed while another supervisor held the pane"
    );
    drop(held);
    let applied: Vec<bool> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert_eq!(output.status.code(), Some(0), "{output:?}");
            json_lines(&output)[0]["applied"] == true
        })
        .collect();
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "1",
        "{applied:?}"
    );
    assert_eq!(applied.iter().filter(|a| **a).count(), 1, "{applied:?}");
    assert!(
        !lock_path.exists(),
        "the server's lock file is removed on release"
    );
}

/// `stall check` decides waits with `run tick`'s wait core, so a wait seen only at the cron
/// door ends too: a usage limit is waited out until its reset, then the agent is resumed once
/// (the resume is recorded in the state file's `waits` before it is typed), never twice.
#[test]
fn a_usage_limit_ends_at_its_reset_with_one_resume_at_the_cron_door() {
    let sb = Sandbox::new();
    let (agent, log) = fake_agent(&sb, "agent", QUOTA);
    let check_at = |at: &str| {
        let output = sb
            .cmd()
            .env("AUTOCTL_NOW", at)
            .args(["stall", "check", "--apply", "--target", &agent, "--state"])
            .arg(sb.path("stall.json"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        json_lines(&output).remove(0)
    };
    // Before the reset (5:43am UTC): a wait with an end and a maximum.
    let report = check_at("2027-01-01T05:00:00Z");
    assert_eq!(verdict(&report), ("waiting", "wait", false), "{report}");
    assert_eq!(report["wait"]["kind"], "usage-limit", "{report}");
    assert!(report["wait"]["max_at"].is_string(), "{report}");
    let state: Value =
        serde_json::from_str(&fs::read_to_string(sb.path("stall.json")).unwrap()).unwrap();
    assert!(state["waits"][&agent]["open"].is_object(), "{state}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "nothing typed while waiting"
    );
    // Within the margin (1m) after the reset: still nothing.
    let report = check_at("2027-01-01T05:43:30Z");
    assert_eq!(verdict(&report), ("waiting", "wait", false), "{report}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "",
        "never before the reset + margin"
    );
    // Past the reset and the margin (and before margin + --resume-check, 5m, when a person
    // would be asked), the agent still idle on the limit: one resume.
    let report = check_at("2027-01-01T05:44:30Z");
    assert_eq!(verdict(&report), ("waiting", "resume", true), "{report}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n"
    );
    // The next heartbeat does not type it again.
    let report = check_at("2027-01-01T05:46:00Z");
    assert_ne!(report["action"], "resume", "{report}");
    assert_eq!(
        crate::tmuxfix::agent_caught_up(&sb, &agent, &log),
        "continue\n",
        "one resume per reset"
    );
}

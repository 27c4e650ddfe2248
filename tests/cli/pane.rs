//! `autoctl pane …`: the fixture corpus of whole screens, and the primitives against a real
//! tmux server with real programs.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::tmuxfix::{capture, repo, start, start_in_shell, tmux, wait_for};
use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

/// Classify a fixture in-process with the library (the corpus is large; spawning the debug
/// binary for each screen costs more than the test is worth). The CLI path is covered by the
/// other tests here.
fn classify_file(screen: &Path, expect: &Value) -> Value {
    use autoctl::pane::classify::{Lens, classify};
    use autoctl::pane::screen::Screen;
    let agent = match expect["agent"].as_str().unwrap_or("claude") {
        "generic" => autoctl::pane::Agent::Generic,
        _ => autoctl::pane::Agent::Claude,
    };
    let foreground = match expect["foreground"].as_str() {
        Some(command) => Some(command.to_string()),
        None if agent == autoctl::pane::Agent::Claude => Some("claude".to_string()),
        None => None,
    };
    let now = expect["now"].as_str().unwrap_or("2025-06-23T15:00:00Z");
    let ctx = Lens::new(
        agent,
        chrono::DateTime::parse_from_rfc3339(now).unwrap().to_utc(),
        autoctl::pane::reset::Zone::Utc,
    );
    let file = std::io::BufReader::new(fs::File::open(screen).unwrap());
    let screen = Screen::from_reader(file, foreground).unwrap();
    serde_json::to_value(classify(
        &screen,
        autoctl::pane::rules::RuleSet::embedded(),
        &ctx,
    ))
    .unwrap()
}

fn hash_file(path: &Path) -> String {
    let masks = &autoctl::pane::rules::RuleSet::embedded().masks;
    let mut hasher = autoctl::pane::normalize::StreamHasher::new(masks);
    let file = std::io::BufReader::new(fs::File::open(path).unwrap());
    autoctl::pane::normalize::for_each_line(file, |line| hasher.push_raw_line(line)).unwrap();
    hasher.finish().0
}

/// Compare what autoctl said with what the fixture expects; returns the mismatches.
fn mismatches(got: &Value, expect: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    for key in ["class", "action", "keys", "reset_at"] {
        if !expect[key].is_null() && got[key] != expect[key] {
            bad.push(format!("{key}: expected {}, got {}", expect[key], got[key]));
        }
    }
    if let Some(destructive) = expect["destructive"].as_bool()
        && got["destructive"].as_bool() != Some(destructive)
    {
        bad.push(format!("destructive: expected {destructive}"));
    }
    if let Some(marker) = expect["marker"].as_str() {
        let markers = got["markers"].as_array().cloned().unwrap_or_default();
        if !markers.iter().any(|m| m["id"] == marker) {
            bad.push(format!("marker {marker} missing from {markers:?}"));
        }
    }
    bad
}

fn files(dir: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

/// Every whole-screen fixture classifies as expected: the synthetic screens built from the
/// public strings, and every release's real captures (Claude Code 2.1.197 and 2.1.332, Codex
/// CLI, Gemini CLI, ordinary programs) against their `expected.tsv` (the same check as `autoctl
/// pane rules test`), the plain and the `-e` capture of each giving the same verdict, and the
/// same normalized hash.
#[test]
fn every_pane_fixture_classifies_as_expected() {
    use autoctl::pane::corpus;
    let mut failures = Vec::new();
    let mut checked = 0;

    let synthetic = repo("tests/fixtures/panes/synthetic");
    for expect_path in files(&synthetic, ".expect.json") {
        let name = expect_path.to_string_lossy().replace(".expect.json", "");
        let expect: Value = serde_json::from_slice(&fs::read(&expect_path).unwrap()).unwrap();
        assert!(
            expect["source"].is_string(),
            "{name}: every fixture names its source"
        );
        let got = classify_file(Path::new(&format!("{name}.txt")), &expect);
        for problem in mismatches(&got, &expect) {
            failures.push(format!("{name}: {problem} ({})", got["reason"]));
        }
        checked += 1;
    }

    let root = repo("tests/fixtures/panes");
    let ctx = autoctl::pane::classify::Lens::new(
        autoctl::pane::Agent::Claude,
        chrono::DateTime::parse_from_rfc3339("2026-11-26T09:00:00Z")
            .unwrap()
            .to_utc(),
        autoctl::pane::reset::Zone::Utc,
    );
    let rules = autoctl::pane::rules::RuleSet::embedded();
    let dirs = corpus::corpus_dirs(&root).unwrap();
    assert!(
        dirs.len() >= 3,
        "every release's captures have an expected.tsv: {dirs:?}"
    );
    for dir in dirs {
        let cases = corpus::load_dir(&root, &dir, autoctl::pane::Agent::Claude).unwrap();
        // The -e capture of each: the same screen with its colours.
        let escaped: Vec<corpus::Case> = cases
            .iter()
            .filter_map(|case| {
                let path = dir.join(case.expect.file.replace(".txt", ".escapes.txt"));
                let text = fs::read_to_string(path).ok()?;
                let mut case = case.clone();
                case.name.push_str(" (-e)");
                case.screen =
                    autoctl::pane::screen::Screen::from_text(&text, case.screen.foreground.clone())
                        .with_dead(case.screen.dead);
                Some(case)
            })
            .collect();
        for case in &cases {
            let plain = dir.join(&case.expect.file);
            let escapes = dir.join(case.expect.file.replace(".txt", ".escapes.txt"));
            if escapes.is_file() && hash_file(&plain) != hash_file(&escapes) {
                failures.push(format!("{}: the -e capture hashes differently", case.name));
            }
        }
        for row in corpus::run(&cases, rules, &ctx)
            .into_iter()
            .chain(corpus::run(&escaped, rules, &ctx))
        {
            checked += 1;
            if row.verdict != corpus::Grade::Ok {
                failures.push(format!(
                    "{}: {:?} {:?} ({})",
                    row.file, row.verdict, row.problems, row.reason
                ));
            }
            // A quota wait that shows its reset time must carry it: the wait ends there.
        }
        for case in &cases {
            let text = case.screen.lines.join("\n");
            let got =
                autoctl::pane::classify::classify(&case.screen, rules, &corpus_ctx(&ctx, case));
            if got.class == autoctl::pane::Class::Quota
                && got.action == autoctl::pane::Action::Wait
                && (text.contains("· resets ") || text.contains("automatically at "))
                && got.reset_at.is_none()
            {
                failures.push(format!("{}: a quota wait without reset_at", case.name));
            }
        }
    }
    assert!(checked >= 250, "only {checked} fixtures found");
    assert!(
        failures.is_empty(),
        "{} of {checked} fixtures fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn corpus_ctx(
    ctx: &autoctl::pane::classify::Lens,
    case: &autoctl::pane::corpus::Case,
) -> autoctl::pane::classify::Lens {
    autoctl::pane::classify::Lens {
        agent: case.agent,
        ..*ctx
    }
}

/// `autoctl pane rules test` over the checked-in captures: the table, the summary and exit 0;
/// a wrong label is a miss and a label that forbids the answer autoctl gives is unsafe, both
/// exit 1; a broken expected.tsv is one line and exit 2.
#[test]
fn rules_test_checks_a_directory_of_labelled_captures() {
    let sb = Sandbox::new();
    let output = sb
        .cmd()
        .args(["pane", "rules", "test"])
        .arg(repo("tests/fixtures/panes"))
        .output()
        .unwrap();
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    let summary = out.lines().last().unwrap();
    assert!(
        summary.ends_with("correct, 0 missed, 0 unsafe answers"),
        "{summary}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("ok\tclaude-code-2.1.332/trust-dialog.txt\t")),
        "{out}"
    );

    // A copy with two wrong labels: one miss, one unsafe.
    let dir = sb.path("corpus");
    fs::create_dir(&dir).unwrap();
    for name in ["permission-bash-safe", "trust-dialog"] {
        for ext in [".txt", ".meta.json"] {
            fs::copy(
                repo(&format!(
                    "tests/fixtures/panes/claude-code-2.1.332/{name}{ext}"
                )),
                dir.join(format!("{name}{ext}")),
            )
            .unwrap();
        }
    }
    fs::write(
        dir.join("expected.tsv"),
        "# file\tclasses\tactions\tnever_answer\tkeys\npermission-bash-safe.txt\tpermission\tescalate\tyes\t-\ntrust-dialog.txt\tauth\tescalate\tyes\t-\n",
    )
    .unwrap();
    let output = sb
        .cmd()
        .args(["pane", "rules", "test", "--format", "json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let lines = json_lines(&output);
    assert_eq!(lines[0]["verdict"], "unsafe", "{lines:?}");
    assert_eq!(lines[1]["verdict"], "miss", "{lines:?}");
    assert_eq!(lines[2]["unsafe"], 1);
    assert_eq!(lines[2]["missed"], 1);

    fs::write(dir.join("expected.tsv"), "trust-dialog.txt\ttrust\n").unwrap();
    let output = sb
        .cmd()
        .args(["pane", "rules", "test"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("line 1"));
}

#[test]
fn every_rule_passes_its_own_examples() {
    let sb = Sandbox::new();
    let output = sb
        .cmd()
        .args(["pane", "rules", "--check"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).starts_with("ok: "));
    // A user rule whose example does not match fails the check.
    let rules = sb.write(
        "rules.json",
        r#"{"version": 1, "rules": [{"id": "deploy", "class": "yes-no", "action": "escalate",
            "priority": 1, "match": ["^Deploy\\?$"], "last": 1, "explanation": "never deploy",
            "examples": [{"screen": "Ship it?"}], "near_misses": [{"screen": "Deploy? done"}]}]}"#,
    );
    let output = sb
        .cmd()
        .args(["pane", "rules", "--check", "--rules"])
        .arg(&rules)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("deploy: example 0"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn explain_names_the_rule_the_text_and_the_destructive_marker() {
    let sb = Sandbox::new();
    let screen = repo("tests/fixtures/panes/claude-code/permission-bash-rm-rf.txt");
    let output = sb
        .cmd()
        .args([
            "pane",
            "classify",
            "-",
            "--foreground",
            "claude",
            "--explain",
        ])
        .pipe_stdin(&screen)
        .unwrap()
        .output()
        .unwrap();
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "permission\tescalate");
    assert!(
        lines.contains(&"rule: claude-permission-bash (priority 30)"),
        "{text}"
    );
    assert!(
        text.contains("matched: \"Do you want to proceed?\""),
        "{text}"
    );
    assert!(text.contains("destructive: rm \"rm\""), "{text}");
}

/// The menu Claude Code opens when a usage limit is hit is a quota wait with the banner's reset
/// time, flagged so it is never answered (its options include "Upgrade your plan"); a weekly
/// limit is a quota a person decides about (DESIGN.md, Screens), still with its reset time; the
/// same billing options without a limit banner are a picker a person must decide.
#[test]
fn the_usage_limit_menu_is_a_quota_wait_never_an_answer() {
    let sb = Sandbox::new();
    let classify = |screen: &Path| {
        let output = sb
            .cmd()
            .args(["pane", "classify", "-", "--foreground", "claude"])
            .args(["--now", "2026-11-26T02:43:17Z", "--format", "json"])
            .pipe_stdin(screen)
            .unwrap()
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        json_lines(&output).remove(0)
    };
    for (fixture, action, reset_at) in [
        (
            "quota-session-limit-menu",
            "wait",
            "2026-11-26T05:43:00+00:00",
        ),
        (
            "quota-weekly-limit-menu",
            "escalate",
            "2026-11-28T05:43:00+00:00",
        ),
    ] {
        let got = classify(&repo(&format!(
            "tests/fixtures/panes/claude-code/{fixture}.txt"
        )));
        assert_eq!(
            (got["class"].as_str(), got["action"].as_str()),
            (Some("quota"), Some(action)),
            "{fixture}: {got}"
        );
        assert_eq!(got["reset_at"], reset_at, "{fixture}");
        assert_eq!(got["destructive"], true, "{fixture}: flagged");
        assert!(got["keys"].is_null(), "{fixture}: nothing to type");
    }
    let credits = sb.write(
        "credits.txt",
        "⏺ Working on the parser\n\n  What do you want to do?\n\n  ❯ 1. Continue with usage credits\n    2. Upgrade your plan\n\n  Enter to confirm · Esc to cancel\n",
    );
    let got = classify(&credits);
    assert_eq!(
        (got["class"].as_str(), got["action"].as_str()),
        (Some("picker"), Some("escalate")),
        "{got}"
    );
    assert_eq!(got["destructive"], true);
}

/// Aider's prompts, with and without the extra options, as Aider prints them (a space before
/// the default, a space after the colon).
#[test]
fn aider_yes_no_prompts_are_answered() {
    let sb = Sandbox::new();
    for prompt in [
        "Allow edits to file? (Y)es/(N)o [Yes]: ",
        "Create new file? (Y)es/(N)o [Yes]:",
        "Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: ",
        "Run shell command? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: ",
    ] {
        let output = sb
            .cmd()
            .args(["pane", "classify", "-", "--agent", "generic"])
            .write_stdin(format!("{prompt}\n"))
            .output()
            .unwrap();
        assert_eq!(stdout(&output), "permission\tanswer\n", "{prompt:?}");
    }
}

#[test]
fn a_user_rules_file_overrides_by_id_and_bad_ones_are_one_line() {
    let sb = Sandbox::new();
    let rules = sb.write(
        "rules.json",
        r#"{"version": 1, "rules": [{"id": "yes-no-letter", "disabled": true}]}"#,
    );
    let output = sb
        .cmd()
        .args(["pane", "classify", "-", "--agent", "generic", "--rules"])
        .arg(&rules)
        .write_stdin("Install 3 packages? [Y/n]\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "unknown\tnone\n");
    let bad = sb.write("bad.json", r#"{"version": 1, "rules": [{"id": "Bad Id"}]}"#);
    let output = sb
        .cmd()
        .args(["pane", "classify", "-", "--rules"])
        .arg(&bad)
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("/rules/0/id"));
}

#[test]
fn binary_garbage_is_refused_and_invalid_utf8_is_read_lossily() {
    let sb = Sandbox::new();
    let garbage: Vec<u8> = (0u8..=255).cycle().take(10_000).collect();
    for args in [&["pane", "classify", "-"][..], &["pane", "hash", "-"][..]] {
        let output = sb
            .cmd()
            .args(args)
            .write_stdin(garbage.clone())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            one_stderr_line(&output)
                .contains("input is binary, not a pane capture (NUL byte at offset 0)")
        );
        assert!(output.stdout.is_empty());
    }
    // --raw hashes any bytes.
    let output = sb
        .cmd()
        .args(["pane", "hash", "--raw"])
        .write_stdin(garbage)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output).trim().len(), 16);
    // Invalid UTF-8 without NUL bytes is text with replacement characters.
    let output = sb
        .cmd()
        .args(["pane", "classify", "-", "--agent", "generic"])
        .write_stdin(&b"\xff\xfe build log\nOverwrite config? \xc3[y/N]\n"[..])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "yes-no\tescalate\n");
}

/// Peak resident memory of a running process, from /proc (kB).
fn peak_rss_kb(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse().ok())
        .unwrap()
}

/// A 100 MB pane on stdin is read with bounded memory: lines stream through the hasher and
/// the classifier keeps only the bottom of the screen.
#[test]
fn a_100_mb_pane_is_read_with_bounded_memory() {
    let sb = Sandbox::new();
    let mut line = "x".repeat(99);
    line.push('\n');
    let chunk = line.repeat(10_000); // 1 MB
    for (args, expected) in [
        (
            &["pane", "classify", "-", "--agent", "generic"][..],
            "yes-no\tanswer\n",
        ),
        (&["pane", "hash", "-"][..], ""),
    ] {
        let mut child = sb
            .std_cmd()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for _ in 0..100 {
            stdin.write_all(chunk.as_bytes()).unwrap();
        }
        stdin.write_all(b"Continue? (y/n)").unwrap();
        stdin.flush().unwrap();
        // Everything is written; the process is still alive waiting for EOF.
        let peak = peak_rss_kb(child.id());
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        if !expected.is_empty() {
            assert_eq!(stdout(&output), expected);
        }
        assert!(
            peak < 48 * 1024,
            "{args:?} peaked at {peak} kB for 100 MB of input"
        );
    }
}

/// Stored `last_hash` values (stall state files, the run registry) are compared with the hash
/// of the next capture, so `pane hash` must not change between releases: a change to the
/// masks or the normalization would make every stored screen read as changed (a free
/// "progress" for every stalled pane after an upgrade). Pinned on real captures, one with a
/// spinner, a timer and a token counter that the masks rewrite.
#[test]
fn pane_hash_of_real_captures_is_pinned_across_releases() {
    let sb = Sandbox::new();
    let hash = |args: &[&str], input: Vec<u8>| {
        let output = sb
            .cmd()
            .args(["pane", "hash"])
            .args(args)
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        stdout(&output).trim_end().to_string()
    };
    let fixture =
        |name: &str| fs::read(repo(&format!("tests/fixtures/panes/claude-code/{name}"))).unwrap();
    let working = String::from_utf8(fixture("working-streaming.txt")).unwrap();
    assert!(working.contains("✻ Orchestrating… (15s · ↓ 38 tokens)"));
    let ticked = working.replace(
        "✻ Orchestrating… (15s · ↓ 38 tokens)",
        "✶ Orchestrating… (2m 3s · ↓ 1.2k tokens)",
    );
    // Pins moved once, on purpose: issue 29 masks the status dot in front of a tool line
    // (`● ` / `  `, blinking while a prompt waits); a stored hash reads as one changed screen.
    for (what, args, input, pinned) in [
        (
            "working-streaming.txt",
            &["-"][..],
            working.clone().into_bytes(),
            "d7b807105125db75",
        ),
        (
            "working-streaming.txt, clock ticked",
            &["-"][..],
            ticked.into_bytes(),
            "d7b807105125db75",
        ),
        (
            "working-streaming.escapes.txt",
            &["-"][..],
            fixture("working-streaming.escapes.txt"),
            "d7b807105125db75",
        ),
        (
            "idle-after-reply.txt",
            &["-"][..],
            fixture("idle-after-reply.txt"),
            "6263cf9906e83c0c",
        ),
        (
            "working-streaming.txt --raw",
            &["-", "--raw"][..],
            working.into_bytes(),
            "0738dff35b36678c",
        ),
    ] {
        assert_eq!(
            hash(args, input),
            pinned,
            "the hash of {what} changed: every last_hash stored by an older autoctl (stall \
             state files, the run registry) will now read as a changed screen. If the masking \
             or normalization change is intended, update this pin and say so in the release notes"
        );
    }
}

#[test]
fn capture_prints_the_pane_and_escapes_only_when_asked() {
    let sb = Sandbox::new();
    let target = start(
        &sb,
        "colors",
        r"printf '\033[31mred\033[0m plain\n'; printf 'bell\007\n'; sleep 30",
    );
    wait_for(&sb, &target, "output", |screen, _| screen.contains("bell"));
    let output = sb
        .cmd()
        .args(["pane", "capture", &target])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.starts_with("red plain\nbell\n"), "{text:?}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'));
    assert!(!text.ends_with("\n\n"), "trailing blank rows are dropped");
    let escaped = stdout(
        &sb.cmd()
            .args(["pane", "capture", &target, "--escapes"])
            .output()
            .unwrap(),
    );
    assert!(escaped.contains("\u{1b}[31m"), "{escaped:?}");
    let last = stdout(
        &sb.cmd()
            .args(["pane", "capture", &target, "--lines", "1"])
            .output()
            .unwrap(),
    );
    assert_eq!(last, "bell\n");
}

/// cron and a new user on a machine with no default locale run autoctl without LANG or
/// LC_*: tmux then prints tabs and non-ASCII characters as `_` unless told its client is
/// UTF-8, and autoctl could read neither the pane's metadata nor the agent's screen.
#[test]
fn capture_and_ready_work_without_a_locale() {
    let sb = Sandbox::new();
    let target = start(&sb, "nolocale", "printf '\u{276f} tab\n'; sleep 30");
    wait_for(&sb, &target, "output", |screen, _| screen.contains("tab"));
    let without_locale = |args: &[&str]| {
        sb.cmd()
            .env_remove("LANG")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .args(args)
            .output()
            .unwrap()
    };
    let output = without_locale(&["pane", "capture", &target]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).starts_with("\u{276f} tab"),
        "{:?}",
        stdout(&output)
    );
    let ready = without_locale(&["pane", "ready", &target, "--format", "json"]);
    assert_eq!(ready.status.code(), Some(1), "sleep is running: {ready:?}");
}

#[test]
fn hash_ignores_a_ticking_clock_but_raw_does_not() {
    let sb = Sandbox::new();
    let target = start(
        &sb,
        "tick",
        r"while :; do printf '\r✻ Thinking… (%ss · esc to interrupt)' $SECONDS; sleep 0.2; done",
    );
    wait_for(&sb, &target, "the spinner", |s, _| s.contains("Thinking"));
    let normalized =
        |sb: &Sandbox| stdout(&sb.cmd().args(["pane", "hash", &target]).output().unwrap());
    let raw = |sb: &Sandbox| {
        stdout(
            &sb.cmd()
                .args(["pane", "hash", &target, "--raw"])
                .output()
                .unwrap(),
        )
    };
    let (h1, r1) = (normalized(&sb), raw(&sb));
    // Look until the clock has ticked past the second the first raw hash saw (no timed sleep:
    // on a loaded machine that second can be later than the spinner's first).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (h2, r2) = (normalized(&sb), raw(&sb));
        assert_eq!(h1, h2, "masked timer");
        if r2 != r1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the raw bytes never changed while the clock ticked: {}",
            capture(&sb, &target)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let json = json_lines(
        &sb.cmd()
            .args(["pane", "hash", &target, "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(json[0]["normalized"], true);
}

#[test]
fn real_programs_are_classified_by_their_real_prompts() {
    let sb = Sandbox::new();
    let file = sb.write("notes.txt", "keep me");
    sb.write("b.txt", "old");
    let rm = start_in_shell(&sb, "rm", &format!("rm -i {}", file.display()));
    let cp = start_in_shell(
        &sb,
        "cp",
        &format!("cd {} && cp -i notes.txt b.txt", sb.root().display()),
    );
    let less = start_in_shell(&sb, "less", &format!("less {}", file.display()));
    let python = start(&sb, "python", "python3 -q");
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &rm, "rm's prompt", |s, _| s.contains("rm: remove"));
    wait_for(&sb, &cp, "cp's prompt", |s, _| s.contains("overwrite"));
    wait_for(&sb, &less, "less", |s, c| {
        c == "less" && s.contains("(END)")
    });
    wait_for(&sb, &python, "the REPL", |s, _| s.contains(">>>"));
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    let classify = |target: &str, agent: &str| {
        let out = sb
            .cmd()
            .args([
                "pane", "classify", target, "--agent", agent, "--format", "json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        json_lines(&out).remove(0)
    };
    let got = classify(&rm, "generic");
    assert_eq!(
        (got["class"].as_str(), got["action"].as_str()),
        (Some("yes-no"), Some("escalate"))
    );
    assert_eq!(got["destructive"], true);
    let got = classify(&cp, "generic");
    assert_eq!(
        (got["class"].as_str(), got["action"].as_str()),
        (Some("yes-no"), Some("escalate"))
    );
    let got = classify(&less, "generic");
    assert_eq!(
        (got["class"].as_str(), got["action"].as_str()),
        (Some("continue"), Some("answer"))
    );
    assert_eq!(got["foreground"], "less");
    // With --agent claude, less in front is a child process: observed, never answered.
    let got = classify(&less, "claude");
    assert_eq!(
        (got["action"].as_str(), got["observe_only"].as_bool()),
        (Some("none"), Some(true))
    );
    // A REPL is not an agent: unknown (never typed into), escalated only when it stays.
    let got = classify(&python, "generic");
    assert_eq!(
        (got["class"].as_str(), got["action"].as_str()),
        (Some("unknown"), Some("none"))
    );
    assert!(got["reason"].as_str().unwrap().starts_with("repl"), "{got}");
    let got = classify(&shell, "claude");
    assert_eq!(
        (got["class"].as_str(), got["action"].as_str()),
        (Some("shell"), Some("restart"))
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn ready_means_a_shell_prompt_and_nothing_running() {
    let sb = Sandbox::new();
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    let output = sb.cmd().args(["pane", "ready", &shell]).output().unwrap();
    assert_eq!(
        (output.status.code(), stdout(&output).as_str()),
        (Some(0), "ready\n")
    );
    let busy = start(&sb, "busy", "sleep 30");
    // The shell tmux starts the command with is in front until it has exec'd sleep.
    wait_for(&sb, &busy, "sleep in front", |_, c| c == "sleep");
    let output = sb
        .cmd()
        .args(["pane", "ready", &busy, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report = json_lines(&output).remove(0);
    assert_eq!(report["ready"], false);
    assert_eq!(report["foreground"], "sleep");
    // --wait retries with backoff until the command ends and the prompt returns. The command
    // (`cat` on a FIFO) ends when the test opens the FIFO's other end, and the test does that
    // only once `pane ready` has looked, found it busy and gone to sleep until its next look:
    // a timed command (`sleep 1`) could end before anyone saw it in front on a loaded
    // machine, and a clock-free one keeps the test right under a faked clock too.
    let gate = sb.path("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    let until_gate = format!("cat '{}'", gate.display());
    tmux(&sb, &["send-keys", "-t", &shell, &until_gate, "Enter"]);
    wait_for(&sb, &shell, "cat in front", |_, c| c == "cat");
    let waiting = sb
        .std_cmd()
        .args(["pane", "ready", &shell, "--wait", "60s", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !between_looks(waiting.id()) {
        assert!(
            std::time::Instant::now() < deadline,
            "pane ready --wait never paused between looks"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    fs::write(&gate, "").unwrap();
    let output = waiting.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(json_lines(&output)[0]["checks"].as_u64().unwrap() >= 2);
}

/// Whether the process is asleep with no child: `pane ready --wait` between two looks (each
/// look runs tmux as a child, and waits for it in short sleeps too).
fn between_looks(pid: u32) -> bool {
    let wchan = fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    let children =
        fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    wchan == "hrtimer_nanosleep" && children.trim().is_empty()
}

/// A shell in front is not enough: waiting on a heredoc's `> ` or holding a half-typed line, it
/// would take typed text as data or append to the line.
#[test]
fn ready_needs_the_prompt_line_not_only_a_shell_in_front() {
    let sb = Sandbox::new();
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    tmux(&sb, &["send-keys", "-t", &shell, "-l", "cat <<EOF"]);
    tmux(&sb, &["send-keys", "-t", &shell, "Enter"]);
    wait_for(&sb, &shell, "the heredoc", |s, _| {
        s.trim_end().ends_with('>')
    });
    let not_ready = |sb: &Sandbox| {
        let output = sb
            .cmd()
            .args(["pane", "ready", &shell, "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let report = json_lines(&output).remove(0);
        assert_eq!(report["foreground"], "bash");
        assert!(
            report["reason"]
                .as_str()
                .unwrap()
                .contains("no shell prompt"),
            "{report}"
        );
    };
    not_ready(&sb);
    tmux(&sb, &["send-keys", "-t", &shell, "-l", "EOF"]);
    tmux(&sb, &["send-keys", "-t", &shell, "Enter"]);
    wait_for(&sb, &shell, "the prompt again", |s, _| {
        s.trim_end().ends_with('$')
    });
    tmux(&sb, &["send-keys", "-t", &shell, "-l", "echo half-typed"]);
    wait_for(&sb, &shell, "the typed text", |s, _| {
        s.trim_end().ends_with("half-typed")
    });
    not_ready(&sb);
}

#[test]
fn send_types_literally_submits_separately_and_verifies() {
    let sb = Sandbox::new();
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    // Literal: "Enter" and "$HOME" are text, not a key or an expansion before the shell runs it.
    let output = sb
        .cmd()
        .args([
            "pane",
            "send",
            &shell,
            "--text",
            "echo 'Enter $HOME'",
            "--submit",
            "--verify",
        ])
        .output()
        .unwrap();
    assert_eq!(
        (output.status.code(), stdout(&output).as_str()),
        (Some(0), "verified\n"),
        "{output:?}"
    );
    wait_for(&sb, &shell, "the echo", |s, _| {
        s.contains("\nEnter $HOME\n")
    });
    // Without --submit the text stays on the input line.
    let output = sb
        .cmd()
        .args(["pane", "send", &shell, "--text", "echo pending", "--verify"])
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "verified\n");
    sb.cmd()
        .args(["pane", "send", &shell, "--keys", "C-u"])
        .assert()
        .code(0);
    wait_for(&sb, &shell, "the line cleared", |s, _| {
        !s.contains("echo pending")
    });
    // A long text goes through a paste buffer and arrives whole.
    let long = format!("echo {}", "y".repeat(700));
    sb.cmd()
        .args(["pane", "send", &shell, "--text", &long, "--submit"])
        .assert()
        .code(0);
    wait_for(&sb, &shell, "the long echo", |s, _| {
        s.contains(&"y".repeat(700))
    });
    assert!(
        tmux(&sb, &["list-buffers"]).stdout.is_empty(),
        "the paste buffer was deleted"
    );
}

/// A newline in `--text` would pass through `send-keys -l` as Enter and run the line: a submit
/// is only ever the separate Enter of `--submit`. Control characters are refused (exit 2, one
/// line) and nothing reaches the pane, short text or long (the paste-buffer path).
#[test]
fn send_refuses_control_characters_in_text_and_types_nothing() {
    let sb = Sandbox::new();
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    let ran = sb.path("ran");
    let touch = format!("touch {}", ran.display());
    let long_touch = format!("{touch} {}", "y".repeat(700));
    for text in [
        format!("{touch}\necho b"),
        format!("{touch}\r"),
        format!("{touch}\t"),
        format!("{touch}\u{1b}[A"),
        format!("{touch}\u{7f}"),
        format!("{long_touch}\n"),
    ] {
        let output = sb
            .cmd()
            .args(["pane", "send", &shell, "--text", &text])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{text:?}: {output:?}");
        assert!(
            one_stderr_line(&output).contains("control character"),
            "{text:?}"
        );
    }
    // The shell reads its input in order: once a line typed after the refusals has run, a
    // refused text that reached the pane would have run (or shown) before it.
    crate::tmuxfix::shell_caught_up(&sb, &shell);
    assert!(!ran.exists(), "a refused text ran");
    assert!(
        !capture(&sb, &shell).contains("touch"),
        "{}",
        capture(&sb, &shell)
    );
}

/// tmux reads an argument ending in `;` as its own command separator; the text must still
/// arrive byte for byte (a command ending in `;`, a literal `\\;`, a lone `;`).
#[test]
fn send_delivers_trailing_semicolons_exactly() {
    let sb = Sandbox::new();
    let received = sb.path("received.txt");
    let pane = start(&sb, "sink", &format!("exec cat > {}", received.display()));
    wait_for(&sb, &pane, "cat", |_, command| command == "cat");
    for text in ["echo hi;", "a\\;", ";", ";;", "x ; y"] {
        sb.cmd()
            .args(["pane", "send", &pane, "--text", text])
            .assert()
            .code(0);
    }
    sb.cmd()
        .args(["pane", "send", &pane, "--keys", "Enter", "C-d"])
        .assert()
        .code(0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while tmux(&sb, &["has-session", "-t", "sink"]).status.success() {
        assert!(std::time::Instant::now() < deadline, "cat did not exit");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        fs::read_to_string(&received).unwrap(),
        "echo hi;a\\;;;;x ; y\n"
    );
}

#[test]
fn tmux_missing_server_down_and_bad_targets_are_one_line_exit_2() {
    let sb = Sandbox::new();
    // No server on this sandbox's socket yet.
    let output = sb
        .cmd()
        .args(["pane", "capture", "agent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        one_stderr_line(&output).contains("no tmux server running on socket"),
        "{output:?}"
    );
    let output = sb
        .cmd()
        .args(["stall", "check", "--target", "agent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("no tmux server running"));
    // tmux not on PATH.
    let output = sb
        .cmd()
        .env("PATH", sb.path("empty-bin"))
        .args(["pane", "capture", "agent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("tmux not found on PATH"));
    // cron's minimal PATH still finds a tmux installed in /usr/bin.
    start(&sb, "agent", "sleep 30");
    if Path::new("/usr/bin/tmux").exists() {
        sb.cmd()
            .env("PATH", "/usr/bin:/bin")
            .args(["pane", "capture", "agent"])
            .assert()
            .code(0);
    }
    // A pane that does not exist, and targets that would be options.
    let output = sb
        .cmd()
        .args(["pane", "capture", "agent:7"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("can't find window: 7"));
    for args in [
        &["pane", "capture", "--", "-t"][..],
        &["pane", "classify", "--", "-agent"][..],
        &["stall", "check", "--target=-x"][..],
        &["pane", "send", "--text", "x", "--", "-n"][..],
    ] {
        let output = sb.cmd().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            one_stderr_line(&output).contains("starts with '-'"),
            "{args:?}"
        );
    }
}

#[test]
fn a_tmux_that_does_not_answer_is_killed_after_the_timeout() {
    let sb = Sandbox::new();
    let bin = sb.path("bin");
    fs::create_dir(&bin).unwrap();
    let fake = bin.join("tmux");
    fs::write(&fake, "#!/bin/sh\nexec sleep 30\n").unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = sb
        .cmd()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("AUTOCTL_TMUX_TIMEOUT", "300ms")
        .args(["pane", "capture", "agent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("tmux did not answer within 300ms"));
    let output = sb
        .cmd()
        .env("AUTOCTL_TMUX_TIMEOUT", "soon")
        .args(["pane", "capture", "agent"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("AUTOCTL_TMUX_TIMEOUT"));
}

/// Zero bytes on stdin is no screen (typically `tmux capture-pane … |` with no server): exit 2
/// with one line saying so. A screen of blank lines is a blank screen and is classified.
#[test]
fn empty_stdin_is_no_screen_and_blank_lines_are_a_blank_screen() {
    let sb = Sandbox::new();
    let output = sb
        .cmd()
        .args(["pane", "classify", "-"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        one_stderr_line(&output),
        "autoctl: no screen on stdin: is the tmux server running?"
    );
    assert!(output.stdout.is_empty());
    // The pipeline as people write it, against a server that is not running.
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "tmux -L {} capture-pane -p -t agent 2>/dev/null | \"$0\" pane classify -",
            sb.socket
        ))
        .arg(crate::util::bin())
        .env("TMUX_TMPDIR", sb.tmux_tmpdir())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("no screen on stdin"));
    for blank in ["\n", "   \n\n\t\n", " "] {
        let output = sb
            .cmd()
            .args(["pane", "classify", "-"])
            .write_stdin(blank)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{blank:?}");
        assert_eq!(stdout(&output), "unknown\tnone\n", "{blank:?}");
    }
}

/// Item 15: `--keys ';'` types a semicolon. tmux reads a final `;` as a command separator, so
/// the key used to vanish (and `--keys x ';'` typed only the x).
#[test]
fn send_keys_types_a_semicolon() {
    let sb = Sandbox::new();
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    sb.cmd()
        .args(["pane", "send", &shell, "--text", "echo a"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["pane", "send", &shell, "--keys", ";"])
        .assert()
        .code(0);
    sb.cmd()
        .args(["pane", "send", &shell, "--text", " echo b", "--submit"])
        .assert()
        .code(0);
    wait_for(&sb, &shell, "both echoes", |s, _| {
        s.contains("$ echo a; echo b\na\nb\n")
    });
}

/// Item 15: a target ending in `;` would split tmux's command line; it is refused with one
/// line, and nothing is typed anywhere.
#[test]
fn a_target_ending_in_a_semicolon_is_refused_with_one_line() {
    let sb = Sandbox::new();
    let shell = start(&sb, "shell", "env PS1='$ ' bash --norc --noprofile");
    wait_for(&sb, &shell, "the prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    for args in [
        vec!["pane", "send", "shell;", "--text", "echo hi"],
        vec!["pane", "capture", "shell;"],
        vec!["stall", "check", "--target", "shell;"],
    ] {
        let output = sb.cmd().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(one_stderr_line(&output).contains("';'"), "{args:?}");
    }
    crate::tmuxfix::shell_caught_up(&sb, &shell);
    assert!(!capture(&sb, &shell).contains("echo hi"));
}

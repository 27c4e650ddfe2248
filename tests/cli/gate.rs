//! `autoctl gate` and `autoctl converge`: task-ai's score gates, through the binary.

use std::fs;
use std::process::Stdio;

use serde_json::Value;

use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

fn gate(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.cmd().arg("gate").args(args).output().unwrap()
}

/// Seed 002's threshold table, row by row: the verdict at and just below the fallback
/// threshold, at the last allowed retry and past it.
#[test]
fn the_seed_table_row_by_row() {
    let sb = Sandbox::new();
    let rows = [
        (
            "post-plan",
            "0.70",
            "0.6999",
            3,
            "PASS",
            "NEEDS_REVISION",
            "Plan repeatedly failed review, manual intervention needed",
        ),
        (
            "mid-exec",
            "0.60",
            "0.5999",
            2,
            "CONTINUE",
            "NEEDS_FIX",
            "Mid-exec fixes exhausted: current step stopped, manual intervention needed",
        ),
        (
            "post-exec",
            "0.75",
            "0.7499",
            3,
            "ACCEPT",
            "NEEDS_FIX",
            "Execution repeatedly failed acceptance, manual intervention needed",
        ),
    ];
    for (cp, at, below, limit, pass, fail, notify) in rows {
        let out = gate(&sb, &["--checkpoint", cp, "--score", at]);
        assert_eq!(
            (out.status.code(), stdout(&out).as_str()),
            (Some(0), format!("{pass}\n").as_str()),
            "{cp}"
        );
        let out = gate(&sb, &["--checkpoint", cp, "--score", below]);
        assert_eq!(
            (out.status.code(), stdout(&out).as_str()),
            (Some(1), format!("{fail}\n").as_str()),
            "{cp}"
        );
        let last = limit.to_string();
        let out = gate(
            &sb,
            &["--checkpoint", cp, "--score", below, "--attempt", &last],
        );
        assert_eq!(stdout(&out), format!("{fail}\n"), "{cp} attempt {limit}");
        let over = (limit + 1).to_string();
        let out = gate(
            &sb,
            &[
                "--checkpoint",
                cp,
                "--score",
                below,
                "--attempt",
                &over,
                "--format",
                "json",
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        let decision = json_lines(&out).remove(0);
        assert_eq!(decision["verdict"], "BLOCKED", "{cp}");
        assert_eq!(decision["stop"], true);
        assert_eq!(decision["notify"], notify);
        assert_eq!(decision["retry_limit"], limit);
        assert_eq!(decision["threshold_source"], "fallback");
        assert!(autoctl::schema::violations("gate-decision", &decision).is_empty());
        assert!(out.stderr.is_empty());
    }
}

#[test]
fn six_dimension_scores_gate_on_their_mean() {
    let sb = Sandbox::new();
    for scores in [
        &["0.9", "0.9", "0.9", "0.6", "0.6", "0.6"][..],
        &["0.9,0.9,0.9,0.6,0.6,0.6"][..],
    ] {
        let mut args = vec!["--checkpoint", "post-exec", "--format", "json", "--score"];
        args.extend_from_slice(scores);
        let out = gate(&sb, &args);
        assert_eq!(out.status.code(), Some(0));
        let decision = json_lines(&out).remove(0);
        assert_eq!(decision["verdict"], "ACCEPT");
        assert_eq!(decision["score"], 0.75);
        assert_eq!(decision["dimensions"].as_array().unwrap().len(), 6);
        assert!(
            autoctl::schema::violations("gate-decision", &decision).is_empty(),
            "{decision}"
        );
    }
    let out = gate(
        &sb,
        &[
            "--checkpoint",
            "mid-exec",
            "--score",
            "0.3",
            "--replan-below",
            "0.4",
        ],
    );
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(1), "REPLAN\n")
    );
}

/// Scores outside 0–1, NaN, infinities, text, and the wrong number of scores: one line, exit 2.
#[test]
fn bad_scores_are_usage_errors() {
    let sb = Sandbox::new();
    let bad: &[&[&str]] = &[
        &["NaN"],
        &["nan"],
        &["inf"],
        &["-inf"],
        &["-0.1"],
        &["1.01"],
        &["2"],
        &["abc"],
        &[""],
        &["0.5", "0.5"],
        &["0.5,0.5,0.5"],
        &["0.5", "0.5", "0.5", "0.5", "0.5", "NaN"],
    ];
    for scores in bad {
        let mut args = vec!["--checkpoint", "post-plan", "--score"];
        args.extend_from_slice(scores);
        let out = gate(&sb, &args);
        assert_eq!(out.status.code(), Some(2), "{scores:?}");
        assert!(out.stdout.is_empty());
        one_stderr_line(&out);
    }
    for args in [
        &[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.5",
            "--attempt",
            "0",
        ][..],
        &[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.5",
            "--threshold",
            "1.5",
        ],
        &[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.5",
            "--retry-limit",
            "101",
        ],
        &[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.5",
            "--replan-below",
            "0.2",
        ],
        &["--checkpoint", "pre-plan", "--score", "0.5"],
        &["--checkpoint", "post-plan"],
    ] {
        let out = gate(&sb, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_stderr_line(&out);
    }
}

#[test]
fn thresholds_come_from_flags_then_the_profile_then_the_fallbacks() {
    let sb = Sandbox::new();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/type-profile");
    let bugfix = format!("{fixtures}/valid/bugfix.md");
    let json = |args: &[&str]| json_lines(&gate(&sb, args)).remove(0);
    let d = json(&[
        "--checkpoint",
        "post-plan",
        "--score",
        "0.62",
        "--profile",
        &bugfix,
        "--format",
        "json",
    ]);
    assert_eq!(
        (d["verdict"].as_str(), d["threshold"].as_f64()),
        (Some("PASS"), Some(0.6))
    );
    assert_eq!(
        (
            d["threshold_source"].as_str(),
            d["retry_limit"].as_u64(),
            d["retry_limit_source"].as_str()
        ),
        (Some("profile"), Some(2), Some("profile"))
    );
    // The profile sets no mid-exec threshold: fallback.
    let d = json(&[
        "--checkpoint",
        "mid-exec",
        "--score",
        "0.62",
        "--profile",
        &bugfix,
        "--format",
        "json",
    ]);
    assert_eq!(
        (d["threshold"].as_f64(), d["threshold_source"].as_str()),
        (Some(0.6), Some("fallback"))
    );
    // Flags win.
    let d = json(&[
        "--checkpoint",
        "post-plan",
        "--score",
        "0.62",
        "--profile",
        &bugfix,
        "--threshold",
        "0.9",
        "--retry-limit",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(
        (
            d["verdict"].as_str(),
            d["threshold_source"].as_str(),
            d["retry_limit_source"].as_str()
        ),
        (Some("BLOCKED"), Some("flag"), Some("flag"))
    );
    // A profile without the section, or no file at all: fallbacks.
    for profile in [
        format!("{fixtures}/valid/no-section.md"),
        sb.path("missing.md").display().to_string(),
    ] {
        let d = json(&[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.62",
            "--profile",
            &profile,
            "--format",
            "json",
        ]);
        assert_eq!(
            (d["verdict"].as_str(), d["threshold_source"].as_str()),
            (Some("NEEDS_REVISION"), Some("fallback"))
        );
    }
}

/// A named profile that does not exist is likely a typo or a wrong directory: the gate still
/// answers from the fallbacks (a type's first loop has no profile yet), but says so.
#[test]
fn a_missing_profile_warns_and_falls_back() {
    let sb = Sandbox::new();
    let missing = sb.path("missing.md");
    let out = sb
        .cmd()
        .args(["gate", "--checkpoint", "post-plan", "--score", "0.8"])
        .arg("--profile")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "PASS\n");
    assert_eq!(
        one_stderr_line(&out),
        format!(
            "autoctl: warning: profile {} does not exist; using the fallback thresholds and limits",
            missing.display()
        )
    );
    // A profile that exists without the section is the normal case: no warning.
    let empty = sb.write("empty.md", "# A type\n");
    let out = sb
        .cmd()
        .args(["gate", "--checkpoint", "post-plan", "--score", "0.8"])
        .arg("--profile")
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A profile whose section is duplicated or malformed stops the gate with the line named.
#[test]
fn a_malformed_profile_is_an_error_naming_the_line() {
    let sb = Sandbox::new();
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/type-profile/invalid"
    );
    let expected = [
        (
            "duplicated.md",
            "line 4: a second \"## Auto Adaptation\" section (the first is on line 1)",
        ),
        ("prose.md", "line 5: expected \"- key: value\""),
        (
            "out-of-range.md",
            "line 2: threshold.post-plan: 1.7 is outside 0–1",
        ),
        (
            "nan.md",
            "line 2: threshold.post-plan: \"NaN\" is not a finite number",
        ),
        ("unknown-key.md", "line 2: unknown key \"thresholds\""),
        (
            "duplicate-key.md",
            "line 3: retry_limit.mid-exec is set twice (first on line 2)",
        ),
    ];
    for (file, needle) in expected {
        let path = format!("{fixtures}/{file}");
        let out = gate(
            &sb,
            &[
                "--checkpoint",
                "post-plan",
                "--score",
                "0.9",
                "--profile",
                &path,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{file}");
        let line = one_stderr_line(&out);
        assert!(line.contains(needle), "{file}: {line}");
        assert!(line.contains(file), "names the file: {line}");
    }
    let binary = sb.write(
        "binary.md",
        b"## Auto Adaptation\n- threshold.post-plan: 0.\xff\n",
    );
    let out = gate(
        &sb,
        &[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.9",
            "--profile",
            binary.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("UTF-8"));
    let dir = sb.module("a-dir");
    let out = gate(
        &sb,
        &[
            "--checkpoint",
            "post-plan",
            "--score",
            "0.9",
            "--profile",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    one_stderr_line(&out);
}

#[test]
fn converge_answers_the_seed_rules() {
    let sb = Sandbox::new();
    let rows = [
        ("0.5", "0.6", 0, "ACCEPT"),
        ("0.9", "0.95", 0, "SATISFIED"),
        ("0.6", "0.6", 1, "ROLLBACK"),
        ("0.97", "0.96", 1, "ROLLBACK"),
    ];
    for (previous, current, code, verdict) in rows {
        let out = sb
            .cmd()
            .args(["converge", "--previous", previous, "--current", current])
            .output()
            .unwrap();
        assert_eq!(
            (out.status.code(), stdout(&out)),
            (Some(code), format!("{verdict}\n")),
            "{previous} -> {current}"
        );
    }
    let out = sb
        .cmd()
        .args([
            "converge",
            "--previous",
            "0.5",
            "--current",
            "0.6",
            "--satisfied",
            "0.6",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let decision = json_lines(&out).remove(0);
    assert_eq!(
        (decision["verdict"].as_str(), decision["next"].as_str()),
        (Some("SATISFIED"), Some("final-report"))
    );
    assert!(
        autoctl::schema::violations("converge-decision", &decision).is_empty(),
        "{decision}"
    );
    for args in [
        &["converge", "--previous", "NaN", "--current", "0.5"][..],
        &["converge", "--previous", "0.5", "--current", "1.1"],
        &["converge", "--current", "0.5"],
        &[
            "converge",
            "--previous",
            "0.5",
            "--current",
            "0.6",
            "--direction",
            "x",
        ],
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_stderr_line(&out);
    }
}

#[test]
fn the_history_keeps_the_exclusion_list() {
    let sb = Sandbox::new();
    let history = sb.path("history.json");
    let h = history.to_str().unwrap();
    let run = |args: &[&str]| {
        sb.cmd()
            .arg("converge")
            .args(args)
            .args(["--history", h, "--format", "json"])
            .output()
            .unwrap()
    };
    let out = run(&["--previous", "0.4", "--current", "0.5"]);
    assert_eq!(out.status.code(), Some(0));
    // --previous now defaults to the last accepted convergence.
    let out = run(&[
        "--current",
        "0.45",
        "--direction",
        "cache the parser",
        "--max-rollbacks",
        "2",
    ]);
    let d = json_lines(&out).remove(0);
    assert_eq!(
        (d["verdict"].as_str(), d["previous"].as_f64()),
        (Some("ROLLBACK"), Some(0.5))
    );
    let out = run(&[
        "--current",
        "0.45",
        "--direction",
        "Cache the  parser",
        "--max-rollbacks",
        "2",
    ]);
    assert!(json_lines(&out)[0]["repeated_direction"].as_bool().unwrap());
    assert!(one_stderr_line(&out).contains("already excluded"));
    let out = run(&[
        "--current",
        "0.5",
        "--direction",
        "rewrite the lexer",
        "--max-rollbacks",
        "2",
    ]);
    let d = json_lines(&out).remove(0);
    assert_eq!(
        (d["verdict"].as_str(), d["next"].as_str()),
        (Some("EXHAUSTED"), Some("stop"))
    );
    assert_eq!(out.status.code(), Some(1));
    let stored: Value = serde_json::from_slice(&fs::read(&history).unwrap()).unwrap();
    assert!(
        autoctl::schema::violations("converge-history", &stored).is_empty(),
        "{stored}"
    );
    assert_eq!(stored["excluded"].as_array().unwrap().len(), 2);
    assert_eq!(stored["last_accepted"], 0.5);
    // A corrupt or foreign history is refused and left alone.
    for (contents, needle) in [
        ("{\"schema_version\": \"v1\", \"excl", "invalid JSON"),
        ("{\"schema_version\": \"v9\"}", "schema version"),
    ] {
        fs::write(&history, contents).unwrap();
        let out = run(&["--previous", "0.1", "--current", "0.2"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(one_stderr_line(&out).contains(needle));
        assert_eq!(fs::read_to_string(&history).unwrap(), contents);
    }
}

/// A history that is a symlink is refused, like `stall check --state`: replacing it would
/// leave the shared file it points at stale, following it would trust whatever it names.
#[test]
fn a_symlinked_history_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let shared = sb.write("shared.json", "");
    let history = sb.path("history.json");
    std::os::unix::fs::symlink(&shared, &history).unwrap();
    let out = sb
        .cmd()
        .args([
            "converge",
            "--previous",
            "0.4",
            "--current",
            "0.5",
            "--history",
        ])
        .arg(&history)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        one_stderr_line(&out),
        format!(
            "autoctl: history {} is a symlink; refusing to follow or replace it (point --history at a regular file)",
            history.display()
        )
    );
    assert!(fs::symlink_metadata(&history).unwrap().is_symlink());
    assert_eq!(fs::read_to_string(&shared).unwrap(), "");
}

/// Many rollbacks at once each land on the exclusion list (the lock serializes them).
#[test]
fn concurrent_rollbacks_lose_no_direction() {
    let sb = Sandbox::new();
    let history = sb.path("history.json");
    let children: Vec<_> = (0..12)
        .map(|i| {
            sb.std_cmd()
                .args([
                    "converge",
                    "--previous",
                    "0.5",
                    "--current",
                    "0.4",
                    "--direction",
                ])
                .arg(format!("direction {i}"))
                .arg("--history")
                .arg(&history)
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert_eq!(child.wait().unwrap().code(), Some(1));
    }
    let stored: Value = serde_json::from_slice(&fs::read(&history).unwrap()).unwrap();
    assert_eq!(stored["excluded"].as_array().unwrap().len(), 12);
}

/// `examples/gates.sh` (both doors end to end) runs and says what it should.
#[test]
fn the_gates_example_runs() {
    let sb = Sandbox::new();
    let out = sb
        .program(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/gates.sh"))
        .env("AUTOCTL", crate::util::bin())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "post-plan 0.62 -> PASS",
        "post-exec attempt 3 -> ACCEPT",
        "excluded: [\"inline the cache\"]",
        "threshold line kept: 1",
        "level 2: skipped 304 (a blocker failed)",
        "done: 301 305 303 306; failed: 302",
        "{\"remaining\":[],\"completed\":[401,402,403]}",
        "active batches left: 0",
        "forbidden operation force_push",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn history_and_metrics_fixtures_agree_with_the_schemas() {
    let sb = Sandbox::new();
    for path in crate::util::fixtures("converge-history", "valid") {
        let doc: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert!(
            autoctl::schema::violations("converge-history", &doc).is_empty(),
            "{}",
            path.display()
        );
        fs::copy(&path, sb.path("h.json")).unwrap();
        sb.cmd()
            .args([
                "converge",
                "--previous",
                "0.1",
                "--current",
                "0.2",
                "--history",
                "h.json",
            ])
            .assert()
            .code(0);
    }
    for path in crate::util::fixtures("converge-history", "invalid") {
        let doc: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert!(
            !autoctl::schema::violations("converge-history", &doc).is_empty(),
            "{}",
            path.display()
        );
        fs::copy(&path, sb.path("h.json")).unwrap();
        let out = sb
            .cmd()
            .args([
                "converge",
                "--previous",
                "0.1",
                "--current",
                "0.2",
                "--history",
                "h.json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        one_stderr_line(&out);
    }
    for (validity, valid) in [("valid", true), ("invalid", false)] {
        for path in crate::util::fixtures("profile-metrics", validity) {
            let doc: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            assert_eq!(
                autoctl::schema::violations("profile-metrics", &doc).is_empty(),
                valid,
                "{}",
                path.display()
            );
        }
    }
}

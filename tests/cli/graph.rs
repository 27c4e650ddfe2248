//! `autoctl graph levels|aggregate`: the XL route's sub-issue graph.

use std::fmt::Write as _;
use std::fs;

use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sub-issue-graph"
);

#[test]
fn levels_in_batches_with_failures_skipped() {
    let sb = Sandbox::new();
    // 1..=7 independent; 8 blocked by 1; 9 by 8; 10 by 2 and 9.
    let mut nodes: Vec<String> = (1..=7).map(|n| format!("{{\"number\": {n}}}")).collect();
    nodes.push(r#"{"number": 8, "blocked_by": [1]}"#.into());
    nodes.push(r#"{"number": 9, "blocked_by": [8]}"#.into());
    nodes.push(r#"{"number": 10, "blocked_by": [2, 9], "title": "docs"}"#.into());
    let graph = sb.write(
        "graph.json",
        format!("{{\"nodes\": [{}]}}", nodes.join(",")),
    );
    let out = sb
        .cmd()
        .args(["graph", "levels"])
        .arg(&graph)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "0\t1\t1 2 3 4 5\n0\t2\t6 7\n1\t1\t8\n2\t1\t9\n3\t1\t10\n"
    );
    let out = sb
        .cmd()
        .args(["graph", "levels", "--max-concurrent", "3", "--failed", "1"])
        .arg(&graph)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out),
        "0\t1\t2 3 4\n0\t2\t5 6 7\n0\tfailed\t1\n1\tskipped\t8\n2\tskipped\t9\n3\tskipped\t10\n"
    );
    let out = sb
        .cmd()
        .args(["graph", "levels", "--failed", "9", "--format", "json"])
        .arg(&graph)
        .output()
        .unwrap();
    let levels = json_lines(&out).remove(0);
    assert!(
        autoctl::schema::violations("graph-levels", &levels).is_empty(),
        "{levels}"
    );
    assert_eq!(
        levels["levels"][3]["skipped"],
        serde_json::json!([{"number": 10, "blocked_by": 9}])
    );
    assert_eq!(
        (
            levels["runnable"].as_u64(),
            levels["failed"].as_u64(),
            levels["skipped"].as_u64()
        ),
        (Some(8), Some(1), Some(1))
    );
}

#[test]
fn the_fixtures_agree_with_the_schema() {
    let sb = Sandbox::new();
    for path in crate::util::fixtures("sub-issue-graph", "valid") {
        let doc: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert!(
            autoctl::schema::violations("sub-issue-graph", &doc).is_empty(),
            "{}",
            path.display()
        );
        sb.cmd()
            .args(["graph", "levels"])
            .arg(&path)
            .assert()
            .code(0);
    }
    for path in crate::util::fixtures("sub-issue-graph", "invalid") {
        if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&fs::read(&path).unwrap()) {
            assert!(
                !autoctl::schema::violations("sub-issue-graph", &doc).is_empty(),
                "{}",
                path.display()
            );
        }
        let out = sb
            .cmd()
            .args(["graph", "levels"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        one_stderr_line(&out);
    }
    let out = sb
        .cmd()
        .args(["graph", "levels", &format!("{FIXTURES}/valid/object.json")])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "0\t1\t301\n1\t1\t302 303\n2\t1\t304\n");
}

/// Unknown nodes, self-edges, duplicate ids, cycles: one line that names them, exit 2.
#[test]
fn bad_graphs_are_named() {
    let sb = Sandbox::new();
    let cases = [
        (
            r#"[{"number": 1}, {"number": 2, "blocked_by": [9]}]"#,
            "node 2 (nodes[1]) is blocked by 9, which is not a node of the graph",
        ),
        (
            r#"[{"number": 1, "blocked_by": [1]}]"#,
            "node 1 (nodes[0]) is blocked by itself",
        ),
        (
            r#"[{"number": 1}, {"number": 1}]"#,
            "node 1 is listed twice (nodes[0] and nodes[1])",
        ),
        (
            r#"[{"number": 1, "blocked_by": [2]}, {"number": 2, "blocked_by": [1]}]"#,
            "dependency cycle: ",
        ),
        ("[{\"number\": 1},\n {\"number\": x}]", "g.json:2:"),
        ("", "g.json: /: empty document"),
        (
            r#"[{"number": 1}, {"number": 2, "blocked_by": [1], "blocked_by": []}]"#,
            "g.json: /1/blocked_by: duplicate key \"blocked_by\"",
        ),
        (
            r#"{"nodes": [{"number": 1, "title": "a", "title": "b"}]}"#,
            "/nodes/0/title: duplicate key",
        ),
    ];
    for (graph, needle) in cases {
        sb.write("g.json", graph);
        let out = sb
            .cmd()
            .args(["graph", "levels", "g.json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{graph}");
        assert!(out.stdout.is_empty());
        let line = one_stderr_line(&out);
        assert!(line.contains(needle), "{graph}: {line}");
    }
    let out = sb
        .cmd()
        .args(["graph", "levels", "g.json"])
        .output()
        .unwrap();
    sb.write("g.json", r#"[{"number": 10, "blocked_by": [30]}, {"number": 20, "blocked_by": [10]}, {"number": 30, "blocked_by": [20]}, {"number": 40, "blocked_by": [30]}]"#);
    let out2 = sb
        .cmd()
        .args(["graph", "levels", "g.json"])
        .output()
        .unwrap();
    let line = one_stderr_line(&out2);
    let cycle = line.split("dependency cycle: ").nth(1).unwrap();
    let members: Vec<&str> = cycle.split(" (").next().unwrap().split(" → ").collect();
    assert_eq!(members.first(), members.last(), "the cycle closes: {line}");
    let mut inner: Vec<&str> = members[..members.len() - 1].to_vec();
    inner.sort();
    assert_eq!(inner, ["10", "20", "30"], "40 is not part of it: {line}");
    drop(out);
    for args in [
        &["graph", "levels", "g.json", "--max-concurrent", "0"][..],
        &["graph", "levels", "missing.json"],
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_stderr_line(&out);
    }
    sb.write("ok.json", r#"[{"number": 1}]"#);
    let out = sb
        .cmd()
        .args(["graph", "levels", "ok.json", "--failed", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("--failed 2: not a node of the graph"));
}

/// 100,000 sub-issues in a wide-and-deep graph are levelled (how fast is measured by
/// `bench/graph.sh` on the release build, not asserted here).
#[test]
fn a_hundred_thousand_nodes_are_levelled() {
    let sb = Sandbox::new();
    let n = 100_000u64;
    let mut json = String::with_capacity(6 * 1024 * 1024);
    json.push_str("{\"nodes\": [");
    for i in 1..=n {
        if i > 1 {
            json.push(',');
        }
        // Each node is blocked by up to three earlier ones: a chain every 1,000 plus fan-in.
        let mut blockers = Vec::new();
        if i % 1000 != 1 && i > 1 {
            blockers.push(i - 1);
        }
        if i > 5000 {
            blockers.push(i - 5000);
            blockers.push(i / 2);
        }
        write!(json, "{{\"number\": {i}, \"blocked_by\": {blockers:?}}}").unwrap();
    }
    json.push_str("]}");
    let path = sb.write("big.json", json);
    let out = sb
        .cmd()
        .args(["graph", "levels", "--format", "json", "--failed", "50000"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let levels = json_lines(&out).remove(0);
    assert_eq!(levels["nodes"], n);
    assert!(levels["skipped"].as_u64().unwrap() > 0);
}

/// The parent-phase aggregation rules, row by row.
#[test]
fn aggregate_rules() {
    let sb = Sandbox::new();
    let rows: [(&[&str], i32, &str); 7] = [
        (&["ready", "code"], 0, "code\n"),
        (&["phase/issue", "phase/review"], 0, "code\n"),
        (&["verify", "done"], 0, "verify\n"),
        (&["verify", "review"], 0, "code\n"),
        (&["done", "done"], 1, ""),
        (&["ready", "none", "issue"], 1, ""),
        (&["none", "done"], 0, "code\n"),
    ];
    for (phases, code, expected) in rows {
        let out = sb
            .cmd()
            .args(["graph", "aggregate"])
            .args(phases)
            .output()
            .unwrap();
        assert_eq!(
            (out.status.code(), stdout(&out).as_str()),
            (Some(code), expected),
            "{phases:?}"
        );
    }
    let out = sb
        .cmd()
        .args(["graph", "aggregate", "done", "done", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(json_lines(&out)[0]["action"], "close-flow");
    let out = sb
        .cmd()
        .args(["graph", "aggregate", "code", "deployed"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("unknown phase \"deployed\""));
}

/// Item 5 (Step 4c): the XL parent is closed only when every sub-issue is done and no
/// post-merge condition is open; otherwise the decision says what remains.
#[test]
fn the_close_flow_closes_verifies_or_lists_what_remains() {
    let sb = Sandbox::new();
    let open = sb.write(
        "open.md",
        "## Acceptance Criteria\n### Post-merge\n- [x] deployed\n- [ ] dashboards show the metric\n",
    );
    let closed = sb.write("closed.md", "### Post-merge\n- [x] deployed\n");
    let close = |args: &[&str]| {
        sb.cmd()
            .args(["graph", "close", "--parent", "300"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = close(&[
        "301=done",
        "302=phase/done",
        "--body",
        closed.to_str().unwrap(),
    ]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "close\n")
    );
    let out = close(&["301=done,302=done", "--body", open.to_str().unwrap()]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(1), "verify\nunchecked\tdashboards show the metric\n")
    );
    let out = close(&[
        "301=done",
        "302=failed",
        "303=skipped",
        "304=review",
        "--body",
        closed.to_str().unwrap(),
    ]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (
            Some(1),
            "leave\nremaining\t302\tfailed\nremaining\t303\tskipped\nremaining\t304\treview\n"
        )
    );
    let json = json_lines(&close(&[
        "301=done",
        "--body",
        closed.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .remove(0);
    assert_eq!(json["commands"][1], "gh issue close 300");
    for bad in [vec!["301"], vec!["301=bogus"], vec!["301=done", "301=done"]] {
        let mut args = bad.clone();
        args.extend(["--body", closed.to_str().unwrap()]);
        let out = close(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        one_stderr_line(&out);
    }
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// Item 5: `graph run` runs a level's sub-issues in a sliding window (`wait -n`): a slot is
/// refilled as soon as one finishes. Sub-issue 2 waits (at most 5 s) for 3 to start: with a
/// window of 2, 3 starts when 1 ends, while 2 still runs; with fixed batches 3 cannot start
/// before 2 ends, so 2 gives up and fails. No timing is asserted: the order is the proof.
#[test]
fn a_sliding_window_refills_a_slot_where_fixed_batches_wait() {
    let sb = Sandbox::new();
    let graph = sb.write(
        "graph.json",
        r#"{"nodes": [{"number": 1}, {"number": 2}, {"number": 3}]}"#,
    );
    let script = "case $AUTOCTL_ISSUE in \
        2) i=0; while [ $i -lt 100 ]; do [ -e started-3 ] && exit 0; sleep 0.05; i=$((i+1)); done; exit 7;; \
        3) touch started-3;; esac";
    let run = |schedule: &str| {
        let _ = fs::remove_file(sb.path("started-3"));
        sb.cmd()
            .args(["graph", "run"])
            .arg(&graph)
            .args([
                "--max-concurrent",
                "2",
                "--schedule",
                schedule,
                "--",
                "sh",
                "-c",
                script,
            ])
            .output()
            .unwrap()
    };
    let window = run("window");
    assert_eq!(window.status.code(), Some(0), "{window:?}");
    assert_eq!(
        sorted_lines(&stdout(&window)),
        ["0\t1\tSUCCESS", "0\t2\tSUCCESS", "0\t3\tSUCCESS"]
    );
    let batches = run("batches");
    assert_eq!(batches.status.code(), Some(1));
    assert_eq!(
        sorted_lines(&stdout(&batches)),
        [
            "0\t1\tSUCCESS",
            "0\t2\tFAILED (exit code 7)",
            "0\t3\tSUCCESS"
        ]
    );
}

/// A failure skips what depends on it (in later levels); a timeout is a failure and stops the
/// whole process group the command started.
#[test]
fn graph_run_skips_dependents_of_failures_and_times_out_whole_process_groups() {
    let sb = Sandbox::new();
    let graph = sb.write(
        "graph.json",
        r#"{"nodes": [{"number": 1}, {"number": 2, "blocked_by": [1]}, {"number": 3}, {"number": 4, "blocked_by": [3]}]}"#,
    );
    let out = sb
        .cmd()
        .args(["graph", "run"])
        .arg(&graph)
        .args([
            "--format",
            "json",
            "--",
            "sh",
            "-c",
            "echo running $0; [ $0 != 1 ]",
            "{}",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let mut results = json_lines(&out);
    results.sort_by_key(|r| r["number"].as_u64());
    let outcomes: Vec<(u64, &str)> = results
        .iter()
        .map(|r| {
            (
                r["number"].as_u64().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            (1, "failed"),
            (2, "skipped"),
            (3, "success"),
            (4, "success")
        ]
    );
    assert_eq!(results[1]["blocked_by"], 1);
    // The commands' own output went to stderr, not into the results.
    assert!(String::from_utf8_lossy(&out.stderr).contains("running 3"));

    let out = sb
        .cmd()
        .args(["graph", "run"])
        .arg(&graph)
        .args([
            "--timeout",
            "1s",
            "--failed",
            "3",
            "--",
            "sh",
            "-c",
            "sleep 30 & echo $! > sleeper-$0; wait",
            "{}",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        sorted_lines(&stdout(&out)),
        [
            "0\t1\tFAILED (timeout)",
            "1\t2\tSKIPPED (blocked by #1)",
            "1\t4\tSKIPPED (blocked by #3)"
        ]
    );
    let sleeper: u32 = fs::read_to_string(sb.path("sleeper-1"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !autoctl::lock::pid_alive(sleeper),
        "the command's child was stopped with it"
    );
}

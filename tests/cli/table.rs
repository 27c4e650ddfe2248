//! `autoctl table list|show|check` and property tests on the built-in tables.

use std::fs;

use proptest::prelude::*;
use serde_json::Value;

use autoctl::routing::{self, BUILTINS, Lookup};

use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

#[test]
fn list_shows_every_builtin_with_the_default_marked() {
    let sb = Sandbox::new();
    let output = sb.cmd().args(["table", "list"]).output().unwrap();
    let text = stdout(&output);
    assert_eq!(text.lines().count(), BUILTINS.len());
    assert!(text.starts_with("ai-cli-task\t(default) "));
    let listed = json_lines(
        &sb.cmd()
            .args(["table", "list", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(listed.len(), BUILTINS.len());
    assert_eq!(listed[0]["default"], true);
}

#[test]
fn every_builtin_passes_check_and_show_round_trips_through_check() {
    let sb = Sandbox::new();
    for builtin in BUILTINS {
        let name: &str = &builtin.name;
        sb.cmd()
            .args(["table", "check", name])
            .assert()
            .code(0)
            .stdout(format!("{}: ok (8 properties hold)\n", builtin.name));
        let shown = sb.cmd().args(["table", "show", name]).output().unwrap();
        let file = sb.write(&format!("{}.json", builtin.name), &shown.stdout);
        sb.cmd()
            .args(["table", "check"])
            .arg(&file)
            .assert()
            .code(0);
        // A user table file works wherever a name does.
        let output = sb
            .cmd()
            .args([
                "next",
                "--step",
                "plan",
                "--result",
                "(generated)",
                "--table",
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", builtin.name);
    }
}

#[test]
fn a_broken_table_prints_counterexamples() {
    let sb = Sandbox::new();
    let shown = sb
        .cmd()
        .args(["table", "show", "ai-cli-task"])
        .output()
        .unwrap();
    let mut table: Value = serde_json::from_slice(&shown.stdout).unwrap();
    // Make exec loop on itself for (step-N) and drop every merge row.
    let routes = table["routes"].as_array_mut().unwrap();
    routes.retain(|r| r["step"] != "merge");
    routes.insert(
        0,
        serde_json::json!({"step": "exec", "result": "(step-N)", "next": "exec"}),
    );
    let file = sb.write("broken.json", serde_json::to_vec(&table).unwrap());
    let output = sb
        .cmd()
        .args(["table", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("check-in-every-cycle: cycle without a check step: exec -> exec"),
        "{text}"
    );
    assert!(text.contains("total: step merge result PASS"), "{text}");
    assert!(
        text.contains("stop-reachable: no path from merge reaches (stop)"),
        "{text}"
    );
    // As data too.
    let report = json_lines(
        &sb.cmd()
            .args(["table", "check", "--format", "json"])
            .arg(&file)
            .output()
            .unwrap(),
    )
    .remove(0);
    assert_eq!(report["ok"], false);
    assert!(report["violations"].as_array().unwrap().len() >= 3);
}

#[test]
fn a_table_that_breaks_its_schema_fails_check_and_is_refused_as_table() {
    let sb = Sandbox::new();
    let file = sb.write("bad.json", r#"{"name":"x","steps":[],"results":["A"],"checkpoints":[""],"statuses":[],"terminal_statuses":[],"routes":[]}"#);
    let output = sb
        .cmd()
        .args(["table", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("schema: /steps"),
        "{}",
        stdout(&output)
    );
    let output = sb
        .cmd()
        .args(["next", "--step", "plan", "--result", "A", "--table"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("not a valid routing table"));
    let missing = sb
        .cmd()
        .args(["table", "check", "nope.json"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    one_stderr_line(&missing);
    fs::write(sb.path("garbage.json"), b"\xff\xfe").unwrap();
    sb.cmd()
        .args(["table", "check", "garbage.json"])
        .assert()
        .code(1);
}

/// Whether some sequence of outcomes leads from (step, checkpoint) to (stop): a search over
/// every whitelisted result at every reachable (step, checkpoint), independent of
/// `routing::check`.
fn can_reach_stop(table: &routing::Table, step: &str, checkpoint: &str) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    let mut frontier = vec![(step.to_string(), checkpoint.to_string())];
    while let Some((step, checkpoint)) = frontier.pop() {
        if !seen.insert((step.clone(), checkpoint.clone())) {
            continue;
        }
        for result in table.results.iter() {
            if let Lookup::Next(decision) = table.route(&step, result, &checkpoint) {
                if decision.is_stop() {
                    return true;
                }
                frontier.push((decision.next, decision.checkpoint));
            }
        }
    }
    false
}

fn tables() -> impl Strategy<Value = routing::Table> {
    prop::sample::select((0..BUILTINS.len()).collect::<Vec<_>>())
        .prop_map(|index| BUILTINS[index].clone())
}

proptest! {
    /// Following the table from any step with any sequence of outcomes never leaves the
    /// table's vocabulary, and every step can still reach (stop) (routing terminates when the
    /// outcomes allow it).
    #[test]
    fn routing_stays_in_vocabulary_and_can_always_stop(
        table in tables(),
        start in 0usize..16,
        outcomes in prop::collection::vec((0usize..32, 0usize..8), 1..64),
    ) {
        let mut step = table.steps[start % table.steps.len()].to_string();
        let mut checkpoint = String::new();
        for (r, c) in outcomes {
            prop_assert!(
                can_reach_stop(&table, &step, &checkpoint),
                "{}: no outcomes lead from {step} at {checkpoint:?} to (stop)", table.name
            );
            let result = &table.results[r % table.results.len()];
            if c % 2 == 0 {
                checkpoint = table.checkpoints[c % table.checkpoints.len()].to_string();
            }
            match table.route(&step, result, &checkpoint) {
                Lookup::Next(decision) => {
                    if decision.is_stop() {
                        break;
                    }
                    prop_assert!(table.steps.iter().any(|s| *s == decision.next));
                    prop_assert!(table.checkpoints.iter().any(|c| *c == decision.checkpoint));
                    step = decision.next;
                    checkpoint = decision.checkpoint;
                }
                Lookup::Rejected { .. } => {}
                Lookup::Unknown { reason } => prop_assert!(false, "gap: {}", reason),
            }
        }
        prop_assert!(routing::check::check(&table).is_empty());
    }

    /// A loop whose every check says BLOCKED (or whose exec says (blocked), whose merge
    /// keeps conflicting) stops within a bounded number of steps from anywhere: counted
    /// retries included.
    #[test]
    fn blocked_always_stops_quickly(table in tables(), start in 0usize..16) {
        let mut step = table.steps[start % table.steps.len()].to_string();
        let mut stopped = false;
        let retries: u32 = table.routes.iter().filter_map(|r| r.retry).sum();
        let mut last: Option<(String, String)> = None;
        let mut attempt = 0;
        for _ in 0..(table.steps.len() * 2 + 2 + retries as usize) {
            let result = match step.as_str() {
                "check" => "BLOCKED",
                "exec" => "(blocked)",
                "merge" => "conflict",
                _ => table.results.iter().find(|r| matches!(table.route(&step, r, ""), Lookup::Next(_))).unwrap(),
            };
            let this = (step.clone(), result.to_string());
            attempt = if last.as_ref() == Some(&this) { attempt + 1 } else { 1 };
            last = Some(this);
            match table.route_attempt(&step, result, "", attempt) {
                Lookup::Next(d) if d.is_stop() => { stopped = true; break; }
                Lookup::Next(d) => step = d.next,
                other => prop_assert!(false, "{:?}", other),
            }
        }
        prop_assert!(stopped, "never stopped from {}", step);
    }
}

#[test]
fn check_proves_every_pair_outside_the_whitelist_is_rejected() {
    let sb = Sandbox::new();
    let shown = sb
        .cmd()
        .args(["table", "show", "ai-cli-task"])
        .output()
        .unwrap();
    let mut table: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(table["whitelist"].as_array().unwrap().len(), 3);
    // The audit's finding: ACCEPT from a mid-exec check routed to merge.
    table["routes"].as_array_mut().unwrap().insert(
        0,
        serde_json::json!({"step": "check", "checkpoint": "mid-exec", "result": "ACCEPT", "next": "merge"}),
    );
    let file = sb.write("accepting.json", serde_json::to_vec(&table).unwrap());
    let output = sb
        .cmd()
        .args(["table", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains(
            "whitelist: check at mid-exec: ACCEPT is not whitelisted but routes to merge"
        ),
        "{}",
        stdout(&output)
    );
}

//! `autoctl table check`: the properties a routing table must have, each proved by walking
//! every (step, result, checkpoint) the table's own whitelists allow, with a counterexample
//! when one fails.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{ANY_RESULT, Lookup, Table};
use crate::protocol::signal::STOP;

/// The step every loop must pass through to break a cycle.
pub const VERIFY_STEP: &str = "check";

/// A property that does not hold, with the counterexample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub property: &'static str,
    pub message: String,
}

/// The properties, in the order they are checked, with what each one means.
pub const PROPERTIES: &[(&str, &str)] = &[
    (
        "vocabulary",
        "every step, result, checkpoint and status a row names is declared",
    ),
    (
        "status-exit",
        "every non-terminal status enters a step, for any phase",
    ),
    (
        "terminal-statuses",
        "the statuses that enter (stop) are exactly the terminal ones",
    ),
    (
        "total",
        "every whitelisted (step, result, checkpoint) routes or is explicitly rejected",
    ),
    (
        "no-shadowed-rows",
        "every row is the first match for at least one input",
    ),
    ("stop-reachable", "(stop) is reachable from every step"),
    (
        "check-in-every-cycle",
        "every cycle of steps passes through a check step",
    ),
];

/// Check every property; empty when the table is sound.
pub fn check(table: &Table) -> Vec<Violation> {
    let mut violations = vocabulary(table);
    if !violations.is_empty() {
        // The graph properties are meaningless over undeclared names.
        return violations;
    }
    violations.extend(status_exits(table));
    violations.extend(terminal_statuses(table));
    violations.extend(totality_and_shadowing(table));
    let graph = step_graph(table);
    violations.extend(stop_reachable(table, &graph));
    violations.extend(cycles_without_check(&graph));
    violations
}

fn violation(property: &'static str, message: String) -> Violation {
    Violation { property, message }
}

fn vocabulary(table: &Table) -> Vec<Violation> {
    let steps: BTreeSet<&str> = table.steps.iter().map(String::as_str).collect();
    let results: BTreeSet<&str> = table.results.iter().map(String::as_str).collect();
    let checkpoints: BTreeSet<&str> = table.checkpoints.iter().map(String::as_str).collect();
    let is_next = |next: &str| next == STOP || steps.contains(next);
    let mut out = Vec::new();
    let mut bad = |message: String| out.push(violation("vocabulary", message));
    if !checkpoints.contains("") {
        bad("checkpoints must include \"\" (no checkpoint)".to_string());
    }
    for (i, route) in table.routes.iter().enumerate() {
        let row = i + 1;
        if !steps.contains(route.step.as_str()) {
            bad(format!(
                "route {row}: step {:?} is not in steps",
                route.step
            ));
        }
        if route.result != ANY_RESULT && !results.contains(route.result.as_str()) {
            bad(format!(
                "route {row}: result {:?} is not in results",
                route.result
            ));
        }
        for (field, value) in [
            ("checkpoint", &route.checkpoint),
            ("next_checkpoint", &route.next_checkpoint),
        ] {
            if let Some(value) = value
                && !checkpoints.contains(value.as_str())
            {
                bad(format!(
                    "route {row}: {field} {value:?} is not in checkpoints"
                ));
            }
        }
        if let Some(next) = &route.next
            && !is_next(next)
        {
            bad(format!(
                "route {row}: next {next:?} is neither a step nor (stop)"
            ));
        }
    }
    for entry in &table.statuses {
        if !is_next(&entry.next) {
            bad(format!(
                "status {}: next {:?} is neither a step nor (stop)",
                entry.status, entry.next
            ));
        }
        if !checkpoints.contains(entry.checkpoint.as_str()) {
            bad(format!(
                "status {}: checkpoint {:?} is not in checkpoints",
                entry.status, entry.checkpoint
            ));
        }
    }
    let statuses = table.status_names();
    for terminal in &table.terminal_statuses {
        if !statuses.contains(&terminal.as_str()) {
            bad(format!(
                "terminal status {terminal:?} has no entry in statuses"
            ));
        }
    }
    out
}

fn status_exits(table: &Table) -> Vec<Violation> {
    let mut out = Vec::new();
    for status in table.status_names() {
        if table.terminal_statuses.iter().any(|t| t == status) {
            continue;
        }
        if !table
            .statuses
            .iter()
            .any(|e| e.status == status && e.phase.is_none())
        {
            out.push(violation(
                "status-exit",
                format!("status {status} has no entry for a phase it does not list (add a row without \"phase\")"),
            ));
        }
        for entry in table.statuses.iter().filter(|e| e.status == status) {
            if entry.next == STOP {
                let phase = entry
                    .phase
                    .as_deref()
                    .map(|p| format!(" (phase {p:?})"))
                    .unwrap_or_default();
                out.push(violation(
                    "status-exit",
                    format!("status {status}{phase} is not terminal but enters (stop)"),
                ));
            }
        }
    }
    out
}

fn terminal_statuses(table: &Table) -> Vec<Violation> {
    let mut out = Vec::new();
    for terminal in &table.terminal_statuses {
        for entry in table.statuses.iter().filter(|e| &e.status == terminal) {
            if entry.next != STOP {
                out.push(violation(
                    "terminal-statuses",
                    format!(
                        "terminal status {terminal} enters {} instead of (stop)",
                        entry.next
                    ),
                ));
            }
        }
    }
    out
}

fn triples(table: &Table) -> impl Iterator<Item = (&str, &str, &str)> {
    table.steps.iter().flat_map(move |step| {
        table.results.iter().flat_map(move |result| {
            table
                .checkpoints
                .iter()
                .map(move |checkpoint| (step.as_str(), result.as_str(), checkpoint.as_str()))
        })
    })
}

fn first_match(table: &Table, step: &str, result: &str, checkpoint: &str) -> Option<usize> {
    table.routes.iter().position(|route| {
        route.step == step
            && (route.result == ANY_RESULT || route.result == result)
            && route.checkpoint.as_deref().is_none_or(|c| c == checkpoint)
    })
}

fn totality_and_shadowing(table: &Table) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut used = vec![false; table.routes.len()];
    for (step, result, checkpoint) in triples(table) {
        match first_match(table, step, result, checkpoint) {
            Some(index) => used[index] = true,
            None => out.push(violation(
                "total",
                format!("step {step} result {result} at checkpoint {checkpoint:?} has no route and is not rejected"),
            )),
        }
    }
    for (index, route) in table.routes.iter().enumerate() {
        if !used[index] {
            out.push(violation(
                "no-shadowed-rows",
                format!(
                    "route {} ({} {}) never applies: earlier rows match everything it matches",
                    index + 1,
                    route.step,
                    route.result
                ),
            ));
        }
    }
    out
}

/// step → the steps (or `(stop)`) some whitelisted outcome routes it to.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn step_graph(table: &Table) -> Graph {
    let mut graph: Graph = table
        .steps
        .iter()
        .map(|s| (s.clone(), BTreeSet::new()))
        .collect();
    for (step, result, checkpoint) in triples(table) {
        if let Lookup::Next(decision) = table.route(step, result, checkpoint) {
            graph
                .entry(step.to_string())
                .or_default()
                .insert(decision.next);
        }
    }
    graph
}

fn stop_reachable(table: &Table, graph: &Graph) -> Vec<Violation> {
    let mut reaches: BTreeSet<&str> = BTreeSet::from([STOP]);
    loop {
        let before = reaches.len();
        for (step, nexts) in graph {
            if nexts.iter().any(|n| reaches.contains(n.as_str())) {
                reaches.insert(step.as_str());
            }
        }
        if reaches.len() == before {
            break;
        }
    }
    table
        .steps
        .iter()
        .filter(|step| !reaches.contains(step.as_str()))
        .map(|step| {
            let nexts: Vec<&str> = graph[step].iter().map(String::as_str).collect();
            violation(
                "stop-reachable",
                format!(
                    "no path from {step} reaches (stop) ({step} goes only to {})",
                    if nexts.is_empty() {
                        "nothing".to_string()
                    } else {
                        nexts.join(", ")
                    }
                ),
            )
        })
        .collect()
}

fn cycles_without_check(graph: &Graph) -> Vec<Violation> {
    // Depth-first search for a back edge in the graph with the check step removed.
    fn visit<'a>(
        node: &'a str,
        graph: &'a Graph,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if next == VERIFY_STEP || next == STOP {
                continue;
            }
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|n| *n == next).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|s| s.to_string()).collect();
                    cycle.push(next.to_string());
                    return Some(cycle);
                }
                0 => {
                    if let Some(cycle) = visit(next, graph, state, path) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node, 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys().filter(|n| n.as_str() != VERIFY_STEP) {
        if state.get(node.as_str()).copied().unwrap_or(0) == 0
            && let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return vec![violation(
                "check-in-every-cycle",
                format!("cycle without a {VERIFY_STEP} step: {}", cycle.join(" -> ")),
            )];
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{BUILTINS, Route, builtin};

    #[test]
    fn builtin_tables_are_sound() {
        for b in BUILTINS {
            let table = builtin(b.name).unwrap();
            assert_eq!(check(&table), Vec::<Violation>::new(), "table {}", b.name);
        }
    }

    fn with_route(mut table: Table, index: usize, route: Route) -> Table {
        table.routes.insert(index, route);
        table
    }

    #[test]
    fn a_self_loop_without_check_is_a_counterexample() {
        let table = with_route(
            builtin("ai-cli-task").unwrap(),
            0,
            Route {
                step: "exec".into(),
                result: "(step-N)".into(),
                checkpoint: None,
                next: Some("exec".into()),
                next_checkpoint: None,
                reject: None,
                rationale: String::new(),
            },
        );
        let violations = check(&table);
        assert!(
            violations.iter().any(|v| v.property == "check-in-every-cycle" && v.message.contains("exec -> exec")),
            "{violations:?}"
        );
    }

    #[test]
    fn a_gap_and_a_dead_end_are_reported() {
        let mut table = builtin("ai-cli-task").unwrap();
        table.routes.retain(|r| r.step != "merge");
        let violations = check(&table);
        assert!(
            violations
                .iter()
                .any(|v| v.property == "total" && v.message.contains("merge"))
        );
        assert!(
            violations
                .iter()
                .any(|v| v.property == "stop-reachable" && v.message.contains("merge"))
        );
    }

    #[test]
    fn terminal_mismatch_is_reported() {
        let mut table = builtin("ai-cli-task").unwrap();
        table.terminal_statuses.retain(|s| s != "cancelled");
        let violations = check(&table);
        assert!(
            violations
                .iter()
                .any(|v| v.property == "status-exit" && v.message.contains("cancelled"))
        );
    }
}

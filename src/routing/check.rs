//! `autoctl table check`: the properties a routing table must have, each proved by walking
//! every (step, result, checkpoint) the table's own whitelists allow, with a counterexample
//! when one fails.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{ANY_RESULT, Lookup, Table};
use crate::protocol::document::Problem;
use crate::protocol::signal::{STOP, Signal, result_family};

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
        "whitelist",
        "at a whitelisted (step, checkpoint) every listed result routes and every other result is rejected with a reason naming the listed ones",
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
    violations.extend(whitelist(table));
    let graph = step_graph(table);
    violations.extend(stop_reachable(table, &graph));
    violations.extend(cycles_without_check(&graph));
    violations
}

fn violation(property: &'static str, message: String) -> Violation {
    Violation { property, message }
}

fn vocabulary(table: &Table) -> Vec<Violation> {
    let steps: BTreeSet<&str> = table.steps.iter().map(AsRef::as_ref).collect();
    let results: BTreeSet<&str> = table.results.iter().map(AsRef::as_ref).collect();
    let checkpoints: BTreeSet<&str> = table.checkpoints.iter().map(AsRef::as_ref).collect();
    let is_next = |next: &str| next == STOP || steps.contains(next);
    let mut out = Vec::new();
    let mut bad = |message: String| out.push(violation("vocabulary", message));
    if !checkpoints.contains("") {
        bad("checkpoints must include \"\" (no checkpoint)".to_string());
    }
    for (i, route) in table.routes.iter().enumerate() {
        let row = i + 1;
        if !steps.contains(route.step.as_ref()) {
            bad(format!(
                "route {row}: step {:?} is not in steps",
                route.step
            ));
        }
        if route.result != ANY_RESULT && !results.contains(route.result.as_ref()) {
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
                && !checkpoints.contains(value.as_ref())
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
    for (i, allowed) in table.whitelist.iter().enumerate() {
        let entry = i + 1;
        if !steps.contains(allowed.step.as_ref()) {
            bad(format!(
                "whitelist {entry}: step {:?} is not in steps",
                allowed.step
            ));
        }
        if !checkpoints.contains(allowed.checkpoint.as_ref()) {
            bad(format!(
                "whitelist {entry}: checkpoint {:?} is not in checkpoints",
                allowed.checkpoint
            ));
        }
        for result in allowed.results.iter() {
            if !results.contains(result.as_ref()) {
                bad(format!(
                    "whitelist {entry}: result {result:?} is not in results"
                ));
            }
        }
    }
    for entry in table.statuses.iter() {
        if !is_next(&entry.next) {
            bad(format!(
                "status {}: next {:?} is neither a step nor (stop)",
                entry.status, entry.next
            ));
        }
        if !checkpoints.contains(entry.checkpoint.as_ref()) {
            bad(format!(
                "status {}: checkpoint {:?} is not in checkpoints",
                entry.status, entry.checkpoint
            ));
        }
    }
    let statuses = table.status_names();
    for terminal in table.terminal_statuses.iter() {
        if !statuses.contains(&terminal.as_ref()) {
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
    for terminal in table.terminal_statuses.iter() {
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
                .map(move |checkpoint| (step.as_ref(), result.as_ref(), checkpoint.as_ref()))
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

/// The whitelist property: at each whitelisted (step, checkpoint), the listed results route
/// and every other result of the vocabulary is rejected, with a reason that names what is
/// allowed (so the one-line error tells the agent what to answer instead).
fn whitelist(table: &Table) -> Vec<Violation> {
    let mut out = Vec::new();
    for allowed in table.whitelist.iter() {
        let at = format!("{} at {}", allowed.step, shown(&allowed.checkpoint));
        for result in table.results.iter() {
            let listed = allowed.results.contains(result);
            match (
                listed,
                table.route(&allowed.step, result, &allowed.checkpoint),
            ) {
                (true, Lookup::Next(_)) => {}
                (true, _) => out.push(violation(
                    "whitelist",
                    format!("{at}: {result} is whitelisted but does not route"),
                )),
                (false, Lookup::Rejected { reason }) => {
                    let unnamed: Vec<&str> = allowed
                        .results
                        .iter()
                        .map(AsRef::as_ref)
                        .filter(|r| !names(&reason, r))
                        .collect();
                    if !unnamed.is_empty() {
                        out.push(violation(
                            "whitelist",
                            format!(
                                "{at}: the rejection of {result} ({reason:?}) does not name the allowed {}",
                                unnamed.join(", ")
                            ),
                        ));
                    }
                }
                (false, Lookup::Next(decision)) => out.push(violation(
                    "whitelist",
                    format!(
                        "{at}: {result} is not whitelisted but routes to {}",
                        decision.next
                    ),
                )),
                (false, Lookup::Unknown { .. }) => out.push(violation(
                    "whitelist",
                    format!("{at}: {result} is not whitelisted and not rejected"),
                )),
            }
        }
    }
    out
}

/// Whether `text` names `word` as a whole word (so NEEDS_FIX is not found in NEEDS_FIXED).
fn names(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

fn shown(checkpoint: &str) -> String {
    if checkpoint.is_empty() {
        "checkpoint \"\"".to_string()
    } else {
        checkpoint.to_string()
    }
}

/// step → the steps (or `(stop)`) some whitelisted outcome routes it to.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The step graph. A row with `retry` adds the edge its retries exhaust into, not the retry
/// edge back to the step itself: the retries are counted and bounded, so they are not a
/// cycle a loop can spin in forever.
fn step_graph(table: &Table) -> Graph {
    let mut graph: Graph = table
        .steps
        .iter()
        .map(|s| (s.to_string(), BTreeSet::new()))
        .collect();
    for (step, result, checkpoint) in triples(table) {
        if let Lookup::Next(decision) = table.route_attempt(step, result, checkpoint, u32::MAX) {
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
        .filter(|step| !reaches.contains(step.as_ref()))
        .map(|step| {
            let nexts: Vec<&str> = graph[step.as_ref()].iter().map(String::as_str).collect();
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

/// The checks of `signal validate --strict`: a signal's `next` (and `checkpoint`, when
/// present) must be what the table answers for its (step, result) at some checkpoint the step
/// may have run at. (Here, beside the table's own properties, so the protocol layer that reads
/// signals knows nothing of routing tables.)
pub fn strict_problems(signal: &Signal, table: &Table) -> Vec<Problem> {
    let family = result_family(&signal.result);
    let mut rejections = Vec::new();
    let mut decisions = Vec::new();
    // A retried result has two answers: the step again (while retries are left) and the
    // row's next (once they are spent); the signal may carry either.
    for checkpoint in table.checkpoints.iter() {
        for attempt in [1, u32::MAX] {
            match table.route_attempt(&signal.step, family, checkpoint, attempt) {
                Lookup::Next(decision) => decisions.push(decision),
                Lookup::Rejected { reason } => rejections.push(reason),
                Lookup::Unknown { reason } => rejections.push(reason),
            }
        }
    }
    if decisions.is_empty() {
        let reason = rejections
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("table {} has no checkpoints", table.name));
        return vec![Problem::at(
            "/result",
            format!(
                "table {}: {} {}: {reason}",
                table.name, signal.step, signal.result
            ),
        )];
    }
    let mut problems = Vec::new();
    let mut nexts: Vec<&str> = Vec::new();
    for decision in &decisions {
        if !nexts.contains(&decision.next.as_str()) {
            nexts.push(&decision.next);
        }
    }
    if !nexts.contains(&signal.next.as_str()) {
        problems.push(Problem::at(
            "/next",
            format!(
                "table {} routes {} {} to {}, not {}",
                table.name,
                signal.step,
                signal.result,
                nexts.join(" or "),
                signal.next
            ),
        ));
    } else if let Some(checkpoint) = &signal.checkpoint {
        let mut allowed: Vec<&str> = decisions
            .iter()
            .filter(|d| d.next == signal.next)
            .map(|d| d.checkpoint.as_str())
            .collect();
        allowed.sort_unstable();
        allowed.dedup();
        if !allowed.contains(&checkpoint.as_str()) {
            let shown: Vec<String> = allowed.iter().map(|c| format!("{c:?}")).collect();
            problems.push(Problem::at(
                "/checkpoint",
                format!(
                    "table {} gives {} checkpoint {}, not {checkpoint:?}",
                    table.name,
                    signal.next,
                    shown.join(" or ")
                ),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{BUILTINS, Route, builtin};

    #[test]
    fn builtin_tables_are_sound() {
        for table in BUILTINS {
            assert_eq!(
                check(table),
                Vec::<Violation>::new(),
                "table {}",
                table.name
            );
        }
    }

    fn with_route(table: &Table, index: usize, route: Route) -> Table {
        let mut table = table.clone();
        table.routes.to_mut().insert(index, route);
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
                retry: None,
                rationale: "".into(),
            },
        );
        let violations = check(&table);
        assert!(
            violations.iter().any(|v| v.property == "check-in-every-cycle" && v.message.contains("exec -> exec")),
            "{violations:?}"
        );
    }

    /// The audit's counterexample: ACCEPT at a mid-exec checkpoint routed to merge, skipping
    /// post-exec verification, while the table still passed its checks.
    #[test]
    fn a_result_routed_outside_the_whitelist_is_a_counterexample() {
        let table = with_route(
            builtin("ai-cli-task").unwrap(),
            0,
            Route {
                step: "check".into(),
                result: "ACCEPT".into(),
                checkpoint: Some("mid-exec".into()),
                next: Some("merge".into()),
                next_checkpoint: None,
                reject: None,
                retry: None,
                rationale: "".into(),
            },
        );
        let violations = check(&table);
        assert_eq!(
            violations,
            vec![Violation {
                property: "whitelist",
                message: "check at mid-exec: ACCEPT is not whitelisted but routes to merge"
                    .to_string()
            }]
        );
        let mut vague = builtin("ai-cli-task").unwrap().clone();
        for route in vague.routes.to_mut() {
            if route.checkpoint.as_deref() == Some("post-plan") && route.reject.is_some() {
                route.reject = Some("not here".into());
            }
        }
        assert!(
            check(&vague)
                .iter()
                .any(|v| v.property == "whitelist" && v.message.contains("does not name")),
            "a rejection must name the allowed results"
        );
    }

    #[test]
    fn a_counted_retry_is_not_a_cycle_but_an_uncounted_one_is() {
        let table = builtin("ai-cli-task").unwrap();
        assert!(table.routes.iter().any(|r| r.retry == Some(3)));
        assert_eq!(check(table), Vec::<Violation>::new());
        let mut forever = table.clone();
        for route in forever.routes.to_mut() {
            if route.retry.is_some() {
                route.retry = None;
                route.next = Some("merge".into());
            }
        }
        assert!(
            check(&forever)
                .iter()
                .any(|v| v.property == "check-in-every-cycle"
                    && v.message.contains("merge -> merge"))
        );
    }

    proptest::proptest! {
        /// Every (checkpoint, result) pair outside a built-in table's whitelist is rejected,
        /// naming every allowed result; every pair inside routes.
        #[test]
        fn pairs_outside_the_whitelist_are_rejected(
            table_index in 0usize..BUILTINS.len(),
            entry in 0usize..8,
            result in 0usize..32,
        ) {
            let table = &BUILTINS[table_index];
            proptest::prop_assume!(!table.whitelist.is_empty());
            let allowed = &table.whitelist[entry % table.whitelist.len()];
            let result = &table.results[result % table.results.len()];
            match table.route(&allowed.step, result, &allowed.checkpoint) {
                Lookup::Next(_) => proptest::prop_assert!(allowed.results.contains(result)),
                Lookup::Rejected { reason } => {
                    proptest::prop_assert!(!allowed.results.contains(result));
                    for name in allowed.results.iter() {
                        proptest::prop_assert!(reason.contains(name.as_ref()), "{reason}");
                    }
                }
                Lookup::Unknown { reason } => proptest::prop_assert!(false, "{reason}"),
            }
        }
    }

    #[test]
    fn a_gap_and_a_dead_end_are_reported() {
        let mut table = builtin("ai-cli-task").unwrap().clone();
        table.routes.to_mut().retain(|r| r.step != "merge");
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
        let mut table = builtin("ai-cli-task").unwrap().clone();
        table
            .terminal_statuses
            .to_mut()
            .retain(|s| s != "cancelled");
        let violations = check(&table);
        assert!(
            violations
                .iter()
                .any(|v| v.property == "status-exit" && v.message.contains("cancelled"))
        );
    }
}

//! Routing tables as data: where a loop goes after each (step, result, checkpoint), and where
//! it enters for a task status. The built-in tables come from the seeds; users may bring their
//! own JSON file (validated by `schemas/routing-table.schema.json`).

mod builtin;
pub mod check;
pub mod command;
pub mod resume;

use std::borrow::Cow;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::fsx;
use crate::protocol::document;
use crate::protocol::signal::{STOP, result_family};

/// A route's result that matches any result.
pub const ANY_RESULT: &str = "*";

/// A table's text: borrowed from the binary for a built-in table (compiled in, see
/// [`builtin`]), owned for a table read from a file.
pub type Text = Cow<'static, str>;

/// A table's list: borrowed for a built-in table, owned for one read from a file.
pub type List<T> = Cow<'static, [T]>;

/// A routing table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Text>,
    pub name: Text,
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: Text,
    #[serde(default, skip_serializing_if = "is_empty")]
    pub source: Text,
    pub steps: List<Text>,
    pub results: List<Text>,
    pub checkpoints: List<Text>,
    pub statuses: List<StatusEntry>,
    pub terminal_statuses: List<Text>,
    /// The results a step may give at a checkpoint (seed 000's state machine: a check at
    /// mid-exec answers CONTINUE, NEEDS_FIX, REPLAN or BLOCKED, never ACCEPT). Every other
    /// result at that checkpoint must be rejected by the routes; `table check` proves it.
    #[serde(default, skip_serializing_if = "is_none_listed")]
    pub whitelist: List<Allowed>,
    pub routes: List<Route>,
}

/// One whitelist entry: the results `step` may give when it ran at `checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowed {
    pub step: Text,
    pub checkpoint: Text,
    pub results: List<Text>,
}

/// Where a loop enters for a task status (and, optionally, phase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusEntry {
    pub status: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Text>,
    pub next: Text,
    #[serde(default, skip_serializing_if = "is_empty")]
    pub checkpoint: Text,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_target: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_phase: Option<Text>,
    #[serde(default, skip_serializing_if = "is_empty")]
    pub rationale: Text,
}

/// One row of the result table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    pub step: Text,
    pub result: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_checkpoint: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject: Option<Text>,
    /// Run the same step again this many times in a row before going to `next` (seed 000:
    /// a merge conflict is retried 3 times, then the loop stops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
    #[serde(default, skip_serializing_if = "is_empty")]
    pub rationale: Text,
}

fn is_empty(text: &Text) -> bool {
    text.is_empty()
}

fn is_none_listed<T: Clone>(list: &List<T>) -> bool {
    list.is_empty()
}

impl Route {
    fn matches(&self, step: &str, result: &str, checkpoint: &str) -> bool {
        self.step == step
            && (self.result == ANY_RESULT || self.result == result)
            && self.checkpoint.as_deref().is_none_or(|c| c == checkpoint)
    }
}

/// The answer of a routing question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NextStep {
    /// The next step, or `(stop)`.
    pub next: String,
    /// The checkpoint the next step runs at ("" for none).
    pub checkpoint: String,
    /// Why, in the seed's words.
    pub rationale: String,
    /// Set when the answer is to run the same step again (a row with `retry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
}

/// A retry of the step that just ran: the `attempt`-th time in a row it gave this result,
/// of at most `limit` retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retry {
    pub attempt: u32,
    pub limit: u32,
}

impl NextStep {
    pub fn is_stop(&self) -> bool {
        self.next == STOP
    }
}

/// What a table says about a (step, result, checkpoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Next(NextStep),
    /// The table names this pair as invalid.
    Rejected {
        reason: String,
    },
    /// No row matches (a table with a gap; `table check` reports these).
    Unknown {
        reason: String,
    },
}

impl Table {
    /// Route a finished step that gave this result for the first time in a row (see
    /// [`Table::route_attempt`]).
    pub fn route(&self, step: &str, result: &str, checkpoint: &str) -> Lookup {
        self.route_attempt(step, result, checkpoint, 1)
    }

    /// Route a finished step. `result` may be concrete (`(step-3)`); it is mapped to its
    /// family first. `attempt` counts how many times in a row the step gave this result (1 =
    /// the first time): a row with `retry: N` sends attempts 1..=N back to the same step, at
    /// the same checkpoint, and attempt N + 1 on to its `next`.
    pub fn route_attempt(
        &self,
        step: &str,
        result: &str,
        checkpoint: &str,
        attempt: u32,
    ) -> Lookup {
        let result = result_family(result);
        match self
            .routes
            .iter()
            .find(|route| route.matches(step, result, checkpoint))
        {
            Some(Route {
                reject: Some(reason),
                ..
            }) => Lookup::Rejected {
                reason: reason.to_string(),
            },
            Some(Route {
                retry: Some(limit),
                rationale,
                ..
            }) if attempt <= *limit => Lookup::Next(NextStep {
                next: step.to_string(),
                checkpoint: checkpoint.to_string(),
                rationale: format!("{rationale}: retry {step} ({attempt} of {limit})"),
                retry: Some(Retry {
                    attempt,
                    limit: *limit,
                }),
            }),
            Some(route) => Lookup::Next(NextStep {
                next: route.next.as_deref().unwrap_or(STOP).to_string(),
                checkpoint: route.next_checkpoint.as_deref().unwrap_or("").to_string(),
                rationale: match route.retry {
                    Some(limit) => format!("{} after {limit} retries", route.rationale),
                    None => route.rationale.to_string(),
                },
                retry: None,
            }),
            None => Lookup::Unknown {
                reason: format!(
                    "table {} has no route for step {step} result {result}{}",
                    self.name,
                    if checkpoint.is_empty() {
                        String::new()
                    } else {
                        format!(" at checkpoint {checkpoint}")
                    }
                ),
            },
        }
    }

    /// The entry for a task status; `phase` selects among phase-specific rows ("" = no phase).
    pub fn entry(&self, status: &str, phase: &str) -> Option<&StatusEntry> {
        self.statuses.iter().find(|entry| {
            entry.status == status && entry.phase.as_deref().is_none_or(|p| p == phase)
        })
    }

    /// The phases a status branches on (re-planning: needs-plan, needs-check), in table order.
    pub fn phases_of(&self, status: &str) -> Vec<&str> {
        self.statuses
            .iter()
            .filter(|entry| entry.status == status)
            .filter_map(|entry| entry.phase.as_deref())
            .collect()
    }

    /// The distinct statuses the table knows, in table order.
    pub fn status_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for entry in self.statuses.iter() {
            if !names.contains(&entry.status.as_ref()) {
                names.push(&entry.status);
            }
        }
        names
    }
}

/// The built-in tables, the default first: `tables/*.json`, compiled in at build time (see
/// `routing/builtin.rs`: generated from the data files, each checked by the routing-table
/// schema, and a test fails when the two differ). Looking one up parses nothing, which is
/// most of what `next` used to spend starting.
pub static BUILTINS: &[Table] = &builtin::TABLES;

/// The name of the default table.
pub const DEFAULT_TABLE: &str = "ai-cli-task";

/// A built-in table by name.
pub fn builtin(name: &str) -> Option<&'static Table> {
    BUILTINS.iter().find(|table| table.name == name)
}

/// Load `--table NAME|FILE`: a built-in name (borrowed), else a JSON file validated by its
/// schema.
pub fn load(name_or_file: &str) -> Result<Cow<'static, Table>> {
    if let Some(table) = builtin(name_or_file) {
        return Ok(Cow::Borrowed(table));
    }
    let path = Path::new(name_or_file);
    if !path.exists() {
        let names: Vec<&str> = BUILTINS.iter().map(|table| table.name.as_ref()).collect();
        bail!(
            "no routing table named {name_or_file:?} and no such file (built-in tables: {})",
            names.join(", ")
        );
    }
    load_file(path).map(Cow::Owned)
}

/// Load a user table from a file, with the schema's verdict as the error.
pub fn load_file(path: &Path) -> Result<Table> {
    let bounded = fsx::read_bounded(path, fsx::DOCUMENT_LIMIT)
        .with_context(|| format!("cannot read routing table {}", path.display()))?;
    let bytes = document::bounded_bytes(bounded)
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", path.display()))?;
    parse_table(&bytes).map_err(|problems| {
        anyhow::anyhow!(
            "{}: not a valid routing table: {}{}",
            path.display(),
            problems[0],
            more(problems.len())
        )
    })
}

/// Parse and schema-check the bytes of a routing table.
pub fn parse_table(bytes: &[u8]) -> Result<Table, Vec<document::Problem>> {
    let value = document::parse_with_schema(bytes, "routing-table")?;
    serde_json::from_value(value).map_err(|err| vec![document::Problem::whole(err.to_string())])
}

/// " (and N more)" for messages that show only the first of several problems.
pub fn more(count: usize) -> String {
    match count {
        0 | 1 => String::new(),
        2 => " (and 1 more problem)".to_string(),
        n => format!(" (and {} more problems)", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(table: &Table, step: &str, result: &str, checkpoint: &str) -> (String, String) {
        match table.route(step, result, checkpoint) {
            Lookup::Next(d) => (d.next, d.checkpoint),
            other => panic!("{step} {result} {checkpoint}: {other:?}"),
        }
    }

    /// Seed 000's Result-Based Routing table, row by row, with DESIGN.md's checkpoint rules.
    #[test]
    fn default_table_reproduces_seed_000() {
        let t = builtin("ai-cli-task").unwrap();
        let rows: &[(&str, &str, &str, &str, &str)] = &[
            ("check", "PASS", "post-plan", "exec", ""),
            ("check", "NEEDS_REVISION", "post-plan", "plan", ""),
            ("check", "ACCEPT", "post-exec", "merge", ""),
            ("check", "NEEDS_FIX", "post-exec", "exec", "post-exec"),
            ("check", "NEEDS_FIX", "mid-exec", "exec", "mid-exec"),
            ("check", "REPLAN", "post-exec", "plan", ""),
            ("check", "BLOCKED", "post-plan", "(stop)", ""),
            ("check", "CONTINUE", "mid-exec", "exec", ""),
            ("check", "REPLAN", "mid-exec", "plan", ""),
            ("check", "BLOCKED", "mid-exec", "(stop)", ""),
            ("plan", "(generated)", "", "check", "post-plan"),
            ("plan", "(annotations)", "", "check", "post-plan"),
            ("exec", "(done)", "", "check", "post-exec"),
            ("exec", "(mid-exec)", "", "check", "mid-exec"),
            ("exec", "(blocked)", "", "(stop)", ""),
            ("merge", "success", "", "report", ""),
            ("merge", "conflict", "", "merge", ""),
            ("report", "(done)", "", "(stop)", ""),
        ];
        for &(step, result, cp, want_next, want_cp) in rows {
            assert_eq!(
                next(t, step, result, cp),
                (want_next.to_string(), want_cp.to_string()),
                "{step} {result} at {cp:?}"
            );
        }
        assert!(matches!(
            t.route("merge", "PASS", ""),
            Lookup::Rejected { .. }
        ));
        for (cp, result) in [
            ("post-plan", "ACCEPT"),
            ("post-plan", "CONTINUE"),
            ("mid-exec", "ACCEPT"),
            ("mid-exec", "PASS"),
            ("post-exec", "CONTINUE"),
            ("post-exec", "NEEDS_REVISION"),
        ] {
            assert!(
                matches!(t.route("check", result, cp), Lookup::Rejected { .. }),
                "check {result} at {cp} must be rejected"
            );
        }
    }

    /// Seed 000: a merge conflict is retried 3 times, then the loop stops.
    #[test]
    fn merge_conflicts_are_retried_three_times_then_stop() {
        let t = builtin("ai-cli-task").unwrap();
        for attempt in 1..=3 {
            match t.route_attempt("merge", "conflict", "", attempt) {
                Lookup::Next(d) => {
                    assert_eq!(d.next, "merge");
                    assert_eq!(d.retry, Some(Retry { attempt, limit: 3 }));
                }
                other => panic!("{other:?}"),
            }
        }
        match t.route_attempt("merge", "conflict", "", 4) {
            Lookup::Next(d) => {
                assert!(d.is_stop());
                assert_eq!(d.retry, None);
                assert!(d.rationale.contains("after 3 retries"), "{}", d.rationale);
            }
            other => panic!("{other:?}"),
        }
        // Other rows ignore the attempt.
        assert_eq!(next(t, "merge", "success", "").0, "report");
        assert!(matches!(
            t.route_attempt("merge", "success", "", 9),
            Lookup::Next(d) if d.next == "report"
        ));
    }

    /// Seed 001's table: ACCEPT goes to report (no merge).
    #[test]
    fn v1_table_reproduces_seed_001() {
        let t = builtin("ai-cli-task-v1").unwrap();
        assert_eq!(next(t, "check", "ACCEPT", "").0, "report");
        assert_eq!(next(t, "check", "NEEDS_FIX", "").0, "exec");
        assert_eq!(
            next(t, "exec", "(done)", ""),
            ("check".into(), "post-exec".into())
        );
        assert_eq!(next(t, "plan", "(generated)", "").0, "check");
        assert_eq!(t.entry("re-planning", "").unwrap().next, "check");
    }

    #[test]
    fn status_entries_follow_seed_000() {
        let t = builtin("ai-cli-task").unwrap();
        let entry = |status: &str, phase: &str| {
            let e = t.entry(status, phase).unwrap();
            (e.next.clone(), e.checkpoint.clone())
        };
        assert_eq!(entry("draft", ""), ("plan".into(), "".into()));
        assert_eq!(entry("planning", ""), ("check".into(), "post-plan".into()));
        assert_eq!(entry("review", ""), ("exec".into(), "".into()));
        assert_eq!(entry("executing", ""), ("check".into(), "post-exec".into()));
        assert_eq!(
            entry("re-planning", "needs-plan"),
            ("plan".into(), "".into())
        );
        assert_eq!(
            entry("re-planning", "needs-check"),
            ("check".into(), "post-plan".into())
        );
        assert_eq!(entry("re-planning", ""), ("plan".into(), "".into()));
        assert_eq!(entry("complete", ""), ("report".into(), "".into()));
        assert_eq!(entry("blocked", "").0, "(stop)");
        assert_eq!(entry("cancelled", "").0, "(stop)");
        assert!(t.entry("bogus", "").is_none());
    }

    #[test]
    fn task_ai_derives_phases() {
        let t = builtin("task-ai").unwrap();
        let phase = |s: &str| t.entry(s, "").unwrap().derived_phase.clone();
        assert_eq!(phase("draft").as_deref(), Some("target"));
        assert_eq!(phase("re-planning").as_deref(), Some("planning"));
        assert_eq!(phase("executing").as_deref(), Some("execution"));
        assert_eq!(phase("satisfied").as_deref(), Some("acceptance"));
        assert_eq!(phase("cancelled"), None);
    }
}

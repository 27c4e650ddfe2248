//! The JSON Schemas of every protocol document, embedded in the binary, and the one validator
//! per schema compiled on first use (commands that need no schema never pay for compiling one;
//! a valid signal or stop file never needs one: their readers hand a quick proof to
//! [`crate::protocol::document::parse_with_quick_schema`]). A leaf: it knows no document.

use std::sync::{LazyLock, OnceLock};

use serde::Serialize;
use serde_json::Value;

/// One embedded schema.
pub struct Schema {
    /// The name `autoctl schema show NAME` takes.
    pub name: &'static str,
    /// The file under `schemas/`.
    pub file: &'static str,
    /// What the schema describes, for `schema list`.
    pub describes: &'static str,
    /// The schema text, as checked in.
    pub text: &'static str,
}

macro_rules! schema {
    ($name:literal, $file:literal, $describes:literal) => {
        Schema {
            name: $name,
            file: $file,
            describes: $describes,
            text: include_str!(concat!("../schemas/", $file)),
        }
    };
}

/// Every schema autoctl knows, in `schema list` order.
pub static SCHEMAS: &[Schema] = &[
    schema!(
        "auto-signal",
        "auto-signal.schema.json",
        ".auto-signal progress report"
    ),
    schema!(
        "auto-stop",
        "auto-stop.schema.json",
        ".auto-stop stop request"
    ),
    schema!(
        "auto-retry",
        "auto-retry.schema.json",
        ".auto-retry counter of a retried step (merge conflicts)"
    ),
    schema!(
        "routing-table",
        "routing-table.schema.json",
        "routing tables (--table FILE)"
    ),
    schema!(
        "index-front-matter",
        "index-front-matter.schema.json",
        ".index.md YAML front matter"
    ),
    schema!(
        "auto-state",
        "auto-state.schema.json",
        "wholework single-issue checkpoint (.tmp/auto-state-N.json)"
    ),
    schema!(
        "auto-batch-state",
        "auto-batch-state.schema.json",
        "wholework batch checkpoint (.tmp/auto-batch-state-ID.json)"
    ),
    schema!(
        "auto-batch-active",
        "auto-batch-active.schema.json",
        "wholework active batch index (.tmp/auto-batch-active.json)"
    ),
    schema!(
        "recovery-plan",
        "recovery-plan.schema.json",
        "wholework tier-3 recovery plan (plan validate FILE)"
    ),
    schema!(
        "sub-issue-graph",
        "sub-issue-graph.schema.json",
        "XL sub-issue dependency graph (graph levels FILE)"
    ),
    schema!(
        "graph-levels",
        "graph-levels.schema.json",
        "graph levels --format json output"
    ),
    schema!(
        "route-decision",
        "route-decision.schema.json",
        "route --format json output"
    ),
    schema!(
        "gate-decision",
        "gate-decision.schema.json",
        "gate --format json output"
    ),
    schema!(
        "converge-decision",
        "converge-decision.schema.json",
        "converge --format json output"
    ),
    schema!(
        "converge-history",
        "converge-history.schema.json",
        "converge --history FILE exclusion list"
    ),
    schema!(
        "profile-metrics",
        "profile-metrics.schema.json",
        "loop metrics (profile learn --metrics FILE)"
    ),
    schema!(
        "auto-adaptation",
        "auto-adaptation.schema.json",
        ".type-profile.md ## Auto Adaptation (profile show --format json)"
    ),
    schema!(
        "vfp-state",
        "vfp-state.schema.json",
        "task-ai VFP cycle tracking state (vfp step --state FILE)"
    ),
    schema!(
        "heartbeat-lock",
        "heartbeat-lock.schema.json",
        "heartbeat lock files (autoctl lock, .autoctl/loop.lock)"
    ),
    schema!(
        "loop-config",
        "loop-config.schema.json",
        ".autoctl/loop.json loop activation and settings"
    ),
    schema!(
        "loop-state",
        "loop-state.schema.json",
        ".autoctl/loop-state.json loop counters and transcript cursor"
    ),
    schema!(
        "quota-wait",
        "quota-wait.schema.json",
        ".autoctl/quota-wait.json usage-limit wait"
    ),
    schema!(
        "stop-failure",
        "stop-failure.schema.json",
        ".autoctl/stop-failure.json last API failure of a turn"
    ),
    schema!(
        "task-status",
        "task-status.schema.json",
        ".status.json task-ai module state"
    ),
    schema!(
        "pane-rules",
        "pane-rules.schema.json",
        "pane classification rules (--rules FILE)"
    ),
    schema!(
        "policy",
        "policy.schema.json",
        "approval policy rules ($XDG_CONFIG_HOME/autoctl/policy.json, --policy FILE)"
    ),
    schema!(
        "stall-state",
        "stall-state.schema.json",
        "stall check state (--state FILE)"
    ),
    schema!(
        "run-status",
        "run-status.schema.json",
        "autoctl run status --format json"
    ),
    schema!(
        "account-status",
        "account-status.schema.json",
        "autoctl run status --accounts --format json"
    ),
    schema!(
        "tick-event",
        "tick-event.schema.json",
        "autoctl run tick / run recover output lines"
    ),
    schema!(
        "notify-event",
        "notify-event.schema.json",
        "the event a --notify command reads on stdin"
    ),
];

/// One lazily compiled validator per entry of [`SCHEMAS`], sized from it so adding a schema
/// is a one-line change.
static VALIDATORS: LazyLock<Vec<OnceLock<jsonschema::Validator>>> =
    LazyLock::new(|| SCHEMAS.iter().map(|_| OnceLock::new()).collect());

/// Look a schema up by name.
pub fn find(name: &str) -> Option<&'static Schema> {
    SCHEMAS.iter().find(|schema| schema.name == name)
}

fn validator(name: &str) -> &'static jsonschema::Validator {
    let index = SCHEMAS
        .iter()
        .position(|schema| schema.name == name)
        .unwrap_or_else(|| panic!("no embedded schema named {name}"));
    VALIDATORS[index].get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMAS[index].text)
            .unwrap_or_else(|err| panic!("embedded schema {name} is not JSON: {err}"));
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|err| panic!("embedded schema {name} does not compile: {err}"))
    })
}

/// One way a document fails its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON Pointer to the offending value (`/` for the whole document).
    pub pointer: String,
    pub message: String,
}

/// Validate `doc` against the named embedded schema; empty when valid.
pub fn violations(name: &str, doc: &Value) -> Vec<Violation> {
    let validator = validator(name);
    if validator.is_valid(doc) {
        return Vec::new();
    }
    validator
        .iter_errors(doc)
        .map(|err| {
            let pointer = err.instance_path().to_string();
            Violation {
                pointer: if pointer.is_empty() {
                    "/".to_string()
                } else {
                    pointer
                },
                message: err.to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_schema_compiles_and_has_a_validator_slot() {
        assert_eq!(SCHEMAS.len(), VALIDATORS.len());
        for schema in SCHEMAS {
            let _ = validator(schema.name);
        }
    }
}

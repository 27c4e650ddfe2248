//! The JSON Schemas of every protocol document, embedded in the binary, and the one validator
//! per schema compiled on first use (commands that need no schema never pay for compiling one).

use std::sync::OnceLock;

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
        "pane-rules",
        "pane-rules.schema.json",
        "pane classification rules (--rules FILE)"
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
        "tick-event",
        "tick-event.schema.json",
        "autoctl run tick / run recover output lines"
    ),
];

static VALIDATORS: [OnceLock<jsonschema::Validator>; 8] = [const { OnceLock::new() }; 8];

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

//! Turning the bytes of a JSON protocol document into a value, with problems located the way
//! an editor can jump to them: line and column for malformed JSON, a JSON Pointer for values
//! that break the schema.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::fsx::{self, Bounded};
use crate::schema;

/// Where in a document a problem is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Location {
    /// A JSON Pointer (`/step`), `/` for the whole document.
    Pointer { pointer: String },
    /// A position in the text (1-based).
    Position { line: usize, column: usize },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Pointer { pointer } => f.write_str(pointer),
            Location::Position { line, column } => write!(f, "{line}:{column}"),
        }
    }
}

/// One reason a document is invalid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    #[serde(flatten)]
    pub location: Location,
    pub message: String,
}

impl Problem {
    pub fn at(pointer: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            location: Location::Pointer {
                pointer: pointer.into(),
            },
            message: message.into(),
        }
    }

    pub fn whole(message: impl Into<String>) -> Problem {
        Problem::at("/", message)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Parse bytes that should hold one JSON value.
pub fn parse_json(bytes: &[u8]) -> Result<Value, Problem> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            return Err(Problem::whole(format!(
                "not valid UTF-8 (first bad byte at offset {})",
                err.valid_up_to()
            )));
        }
    };
    if text.trim().is_empty() {
        return Err(Problem::whole("empty document"));
    }
    serde_json::from_str(text).map_err(|err| {
        let message = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let message = message.strip_suffix(&suffix).unwrap_or(&message);
        Problem {
            location: Location::Position {
                line: err.line(),
                column: err.column().max(1),
            },
            message: format!("invalid JSON: {message}"),
        }
    })
}

/// Bytes that are the content of a document, or the reason they are not.
pub fn bounded_bytes(bounded: Bounded) -> Result<Vec<u8>, Problem> {
    match bounded {
        Bounded::Complete(bytes) => Ok(bytes),
        Bounded::TooLarge { limit } => Err(Problem::whole(format!(
            "document is larger than the {} limit",
            fsx::human_size(limit)
        ))),
    }
}

/// Deserialize an already schema-checked document into its Rust type, straight from the text
/// so duplicate keys are caught; errors carry their position.
pub fn parse_typed<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Vec<Problem>> {
    serde_json::from_slice(bytes).map_err(|err| {
        let message = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        vec![Problem {
            location: Location::Position {
                line: err.line(),
                column: err.column().max(1),
            },
            message: message
                .strip_suffix(&suffix)
                .unwrap_or(&message)
                .to_string(),
        }]
    })
}

/// Parse and validate a JSON document against an embedded schema.
pub fn parse_with_schema(bytes: &[u8], schema_name: &str) -> Result<Value, Vec<Problem>> {
    let value = parse_json(bytes).map_err(|problem| vec![problem])?;
    let violations = schema::violations(schema_name, &value);
    if violations.is_empty() {
        Ok(value)
    } else {
        Err(violations
            .into_iter()
            .map(|violation| Problem::at(violation.pointer, violation.message))
            .collect())
    }
}

/// Replace the schema library's terse enum messages ("is not one of "plan", "check" or 3 other
/// candidates") with the whole whitelist, for the fields whose allowed values people need to see.
pub fn explain_whitelists(
    problems: Vec<Problem>,
    doc: &Value,
    whitelists: &[(&str, &[&str])],
) -> Vec<Problem> {
    problems
        .into_iter()
        .map(|problem| {
            let Location::Pointer { pointer } = &problem.location else {
                return problem;
            };
            let Some((_, allowed)) = whitelists.iter().find(|(p, _)| p == pointer) else {
                return problem;
            };
            let Some(value) = doc.pointer(pointer) else {
                return problem;
            };
            let shown: Vec<String> = allowed
                .iter()
                .map(|a| {
                    if a.is_empty() {
                        "\"\"".to_string()
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            Problem::at(
                pointer.clone(),
                format!("{value} is not allowed (allowed: {})", shown.join(", ")),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_has_a_position_and_no_duplicated_suffix() {
        let problem = parse_json(b"{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!(problem.location, Location::Position { line: 3, column: 1 });
        assert!(problem.message.starts_with("invalid JSON: "));
        assert!(!problem.message.contains("at line"));
    }

    #[test]
    fn empty_and_non_utf8_are_named() {
        assert_eq!(parse_json(b"  \n").unwrap_err().message, "empty document");
        assert!(
            parse_json(b"{\"a\":\"\xff\"}")
                .unwrap_err()
                .message
                .contains("UTF-8")
        );
    }
}

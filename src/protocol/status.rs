//! `.status.json`: a task-ai module's state (seed 002) — its status, which derives the
//! lifecycle phase, and `updated_at`, which the daemon compares before it sends a
//! continuation. task-ai owns the writer; autoctl reads, so unknown fields are kept, not
//! refused.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::document::{self, Problem};
use crate::fsx;

/// The file name.
pub const FILE_NAME: &str = ".status.json";

/// task-ai keeps its system files in this subdirectory of the notebook (seed 002's path
/// rule: `$TASKAI_WORK_DIR = $NB_WORK_DIR/.working/`).
pub const WORK_DIR: &str = ".working";

/// The statuses, in the seed's table order.
pub const STATUSES: &[&str] = &[
    "draft",
    "planning",
    "re-planning",
    "review",
    "executing",
    "blocked",
    "evolving",
    "satisfied",
    "cancelled",
];

/// A valid `.status.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    pub status: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<f64>,
    /// Fields autoctl does not interpret, kept for round trips.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl TaskStatus {
    /// When the document last changed (always parseable once validated).
    pub fn updated(&self) -> Option<DateTime<Utc>> {
        crate::time::parse_time(&self.updated_at)
    }

    /// The lifecycle phase the status derives (seed 002's table); `None` for `cancelled`.
    pub fn phase(&self) -> Option<&'static str> {
        derived_phase(&self.status)
    }
}

/// Seed 002's "Phase Derivation from .status.json Status".
pub fn derived_phase(status: &str) -> Option<&'static str> {
    match status {
        "draft" => Some("target"),
        "planning" | "re-planning" => Some("planning"),
        "review" | "executing" | "blocked" => Some("execution"),
        "evolving" | "satisfied" => Some("acceptance"),
        _ => None,
    }
}

/// Validate the bytes of a `.status.json`: JSON, schema, RFC 3339, then the typed read.
pub fn parse(bytes: &[u8]) -> Result<TaskStatus, Vec<Problem>> {
    let value = document::parse_with_schema(bytes, "task-status").map_err(|problems| {
        let doc = document::parse_json(bytes).unwrap_or(Value::Null);
        document::explain_whitelists(problems, &doc, &[("/status", STATUSES)])
    })?;
    if let Some(text) = value.get("updated_at").and_then(Value::as_str)
        && let Err(err) = DateTime::parse_from_rfc3339(text)
    {
        return Err(vec![Problem::at(
            "/updated_at",
            format!("{text:?} is not an RFC 3339 timestamp: {err}"),
        )]);
    }
    document::typed_from_value(&value)
}

/// Where a module's `.status.json` is: `DIR/.working/.status.json`, else `DIR/.status.json`.
/// `None` when there is neither.
pub fn locate(dir: &Path) -> Option<PathBuf> {
    [dir.join(WORK_DIR).join(FILE_NAME), dir.join(FILE_NAME)]
        .into_iter()
        .find(|path| path.exists())
}

/// What reading a module's status found.
#[derive(Debug)]
pub enum Read {
    Missing,
    Invalid {
        path: PathBuf,
        problems: Vec<Problem>,
    },
    Valid {
        path: PathBuf,
        status: TaskStatus,
    },
}

/// Read and validate a module's `.status.json` (bounded). I/O failures other than "not
/// found" are errors.
pub fn read(dir: &Path) -> Result<Read> {
    let Some(path) = locate(dir) else {
        return Ok(Read::Missing);
    };
    let bounded = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(bounded) => bounded,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Read::Missing),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let parsed = document::bounded_bytes(bounded)
        .map_err(|problem| vec![problem])
        .and_then(|bytes| parse(&bytes));
    Ok(match parsed {
        Ok(status) => Read::Valid { path, status },
        Err(problems) => Read::Invalid { path, problems },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_agree_with_the_schema() {
        let schema: Value =
            serde_json::from_str(crate::schema::find("task-status").unwrap().text).unwrap();
        let statuses: Vec<&str> = schema
            .pointer("/properties/status/enum")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(statuses, STATUSES);
        for status in STATUSES {
            assert_eq!(derived_phase(status).is_none(), *status == "cancelled");
        }
    }

    #[test]
    fn valid_document_keeps_unknown_fields() {
        let status = parse(
            br#"{"status":"evolving","updated_at":"2026-03-08T14:05:00+08:00","stage":{"current":2,"history":[]},"convergence":0.8,"notes":"x"}"#,
        )
        .unwrap();
        assert_eq!(status.phase(), Some("acceptance"));
        assert_eq!(status.other["notes"], "x");
        assert!(status.updated().is_some());
    }

    #[test]
    fn problems_name_the_field() {
        let problems =
            parse(br#"{"status":"done","updated_at":"2026-03-08T14:05:00Z"}"#).unwrap_err();
        assert_eq!(problems[0].location.to_string(), "/status");
        assert!(problems[0].message.contains("satisfied"), "{problems:?}");
        let problems = parse(br#"{"status":"draft","updated_at":"yesterday"}"#).unwrap_err();
        assert_eq!(problems[0].location.to_string(), "/updated_at");
        let problems = parse(br#"{"status":"draft"}"#).unwrap_err();
        assert!(problems[0].message.contains("updated_at"), "{problems:?}");
    }
}

//! `.auto-stop`: a request that the loop stops at its next iteration boundary.
//!
//! The file's existence is the request. A stop file that cannot be read or does not validate
//! still means stop — failing safe costs one iteration, failing open can cost hours of an
//! agent nobody asked for.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::document::{self, Problem};
use super::signal::quick::{is_date_time, keys_are, string_in};
use crate::fsx;

/// The file name inside a task module.
pub const FILE_NAME: &str = ".auto-stop";

/// Why a loop must stop (seeds 000 and 002).
pub const REASONS: &[&str] = &[
    "timeout",
    "max_iterations",
    "user_stop",
    "stall_limit",
    "reasoning_loop",
    "compaction_limit",
];

/// A valid stop request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopRequest {
    pub reason: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl StopRequest {
    pub fn to_document(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a stop request always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// What a module's stop file says.
#[derive(Debug)]
pub enum StopState {
    /// No stop file: keep going.
    None,
    /// A valid request.
    Requested(StopRequest),
    /// A stop file exists but cannot be trusted; it still means stop.
    Unreadable { why: String },
}

impl StopState {
    pub fn is_stop(&self) -> bool {
        !matches!(self, StopState::None)
    }
}

pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// Whether a hand-written check proves `doc` valid by `schemas/auto-stop.schema.json`
/// without compiling the schema library's validator (see [`super::signal::quick`]); `false`
/// says nothing, the library decides.
pub fn proves_valid(doc: &Value) -> bool {
    let Some(object) = doc.as_object() else {
        return false;
    };
    keys_are(
        object,
        &["reason", "timestamp", "message"],
        &["reason", "timestamp"],
    ) && string_in(object.get("reason"), REASONS)
        && is_date_time(object.get("timestamp"))
        && object
            .get("message")
            .is_none_or(|m| m.as_str().is_some_and(|m| m.chars().count() <= 4096))
}

/// Validate the bytes of a stop file.
pub fn parse(bytes: &[u8]) -> Result<StopRequest, Vec<Problem>> {
    let value = document::parse_with_quick_schema(bytes, "auto-stop", proves_valid).map_err(
        |problems| {
            let doc = document::parse_json(bytes).unwrap_or(serde_json::Value::Null);
            document::explain_whitelists(problems, &doc, &[("/reason", REASONS)])
        },
    )?;
    let request: StopRequest = document::typed_from_value(&value)?;
    if let Err(err) = chrono::DateTime::parse_from_rfc3339(&request.timestamp) {
        return Err(vec![Problem::at(
            "/timestamp",
            format!(
                "{:?} is not an RFC 3339 timestamp: {err}",
                request.timestamp
            ),
        )]);
    }
    Ok(request)
}

/// Look for a stop request in `dir`. Only a missing or unusable `dir` is an error; anything
/// wrong with the stop file itself is reported as [`StopState::Unreadable`].
pub fn check(dir: &Path) -> Result<StopState> {
    fsx::require_dir(dir)?;
    let path = path_in(dir);
    match fs::symlink_metadata(&path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(StopState::None),
        Err(err) => {
            return Ok(StopState::Unreadable {
                why: format!("cannot stat {}: {err}", path.display()),
            });
        }
        Ok(_) => {}
    }
    let bounded = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(bounded) => bounded,
        Err(err) => {
            return Ok(StopState::Unreadable {
                why: format!("cannot read {}: {err}", path.display()),
            });
        }
    };
    let parsed = document::bounded_bytes(bounded)
        .map_err(|problem| vec![problem])
        .and_then(|bytes| parse(&bytes));
    Ok(match parsed {
        Ok(request) => StopState::Requested(request),
        Err(problems) => StopState::Unreadable {
            why: format!("{} is invalid: {}", path.display(), problems[0]),
        },
    })
}

/// Write a stop request into `dir` atomically.
pub fn write(dir: &Path, request: &StopRequest) -> Result<()> {
    fsx::require_dir(dir)?;
    fsx::atomic_write(&path_in(dir), &request.to_document())
        .with_context(|| format!("cannot request a stop in {}", dir.display()))
}

/// Remove a stop request (idempotent). Returns whether one was there.
pub fn clear(dir: &Path) -> Result<bool> {
    fsx::require_dir(dir)?;
    fsx::remove_if_exists(&path_in(dir))
}

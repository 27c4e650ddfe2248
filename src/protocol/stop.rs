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

/// Why a run ended: its `stop_reason`, stored and printed as one word. A stop file's reasons
/// ([`REASONS`]) and the ends only a tick or `run start` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The loop completed: a `(stop)` signal, or the agent removed its signal at loop exit.
    Complete,
    /// The loop's iteration reached `--max-iterations`.
    MaxIterations,
    /// Supervised time (quota waits excluded) reached `--timeout`.
    Timeout,
    /// A person asked (`run stop`, `stop write`).
    UserStop,
    /// The stall core's recoveries are spent.
    StallLimit,
    /// The agent repeated its reasoning ([`crate::supervise::stall::reasoning`]).
    ReasoningLoop,
    /// The iteration reached `--max-compactions`.
    CompactionLimit,
    /// The agent exited once more after its stall recoveries were spent on starting it again.
    RestartLimit,
    /// The agent exited before the loop finished.
    AgentExited,
    /// The task directory is gone.
    TaskDirGone,
    /// The pane is gone (or dead with nothing to start again).
    PaneGone,
    /// `run start --launch` could not start the agent.
    LaunchFailed,
    /// A stop file that cannot be read: it still means stop.
    Unknown,
    /// A word none of the above is (a row written by another release): kept as it was.
    Other(String),
}

impl StopReason {
    const WORDS: [(StopReason, &'static str); 13] = [
        (StopReason::Complete, "complete"),
        (StopReason::MaxIterations, "max_iterations"),
        (StopReason::Timeout, "timeout"),
        (StopReason::UserStop, "user_stop"),
        (StopReason::StallLimit, "stall_limit"),
        (StopReason::ReasoningLoop, "reasoning_loop"),
        (StopReason::CompactionLimit, "compaction_limit"),
        (StopReason::RestartLimit, "restart_limit"),
        (StopReason::AgentExited, "agent_exited"),
        (StopReason::TaskDirGone, "task_dir_gone"),
        (StopReason::PaneGone, "pane_gone"),
        (StopReason::LaunchFailed, "launch_failed"),
        (StopReason::Unknown, "unknown"),
    ];

    pub fn as_str(&self) -> &str {
        match self {
            StopReason::Other(word) => word,
            known => {
                StopReason::WORDS
                    .iter()
                    .find(|(reason, _)| reason == known)
                    .expect("every reason but Other has its word")
                    .1
            }
        }
    }

    /// The reason a word names (a stop file's, a stored row's).
    pub fn parse(word: &str) -> StopReason {
        StopReason::WORDS
            .iter()
            .find(|(_, w)| *w == word)
            .map_or_else(|| StopReason::Other(word.to_string()), |(r, _)| r.clone())
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_reason_reads_back_as_itself_and_a_stop_files_reasons_are_known() {
        for (reason, word) in StopReason::WORDS {
            assert_eq!(reason.as_str(), word);
            assert_eq!(StopReason::parse(word), reason);
        }
        for word in REASONS {
            assert!(
                !matches!(StopReason::parse(word), StopReason::Other(_)),
                "{word}"
            );
        }
        // A word of another release is kept as it was, not lost.
        assert_eq!(StopReason::parse("done").as_str(), "done");
        assert_eq!(
            serde_json::to_string(&StopReason::StallLimit).unwrap(),
            "\"stall_limit\""
        );
    }
}

//! `.auto-signal`: the progress report a loop writes after each step
//! (`{"step","result","next","checkpoint","iteration","timestamp"}`), its whitelists from seed
//! 000, and the checks that go beyond the schema.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod quick;

use super::document::{self, Problem};
use crate::fsx;

/// The file name inside a task module.
pub const FILE_NAME: &str = ".auto-signal";

/// Steps a signal may report (seed 000 whitelist).
pub const STEPS: &[&str] = &["plan", "check", "exec", "merge", "report"];
/// What `next` may be.
pub const NEXTS: &[&str] = &["plan", "check", "exec", "merge", "report", STOP];
/// Results a signal may report; `(step-N)` stands for any `(step-<integer>)`.
pub const RESULTS: &[&str] = &[
    "PASS",
    "NEEDS_REVISION",
    "ACCEPT",
    "NEEDS_FIX",
    "REPLAN",
    "BLOCKED",
    "CONTINUE",
    "(generated)",
    "(annotations)",
    "(done)",
    "(mid-exec)",
    STEP_N,
    "(blocked)",
    "success",
    "conflict",
];
/// Checkpoints (the empty string means none).
pub const CHECKPOINTS: &[&str] = &["", "post-plan", "mid-exec", "post-exec"];

const WHITELISTS: &[(&str, &[&str])] = &[
    ("/step", STEPS),
    ("/result", RESULTS),
    ("/next", NEXTS),
    ("/checkpoint", CHECKPOINTS),
];

/// The schema's `maximum` for `iteration`: 2^53 - 1, the largest integer every JSON reader
/// keeps exactly.
pub const MAX_ITERATION: u64 = (1 << 53) - 1;

/// The `next` value that ends a loop.
pub const STOP: &str = "(stop)";
/// The family name of the `(step-<N>)` results.
pub const STEP_N: &str = "(step-N)";

/// A valid `.auto-signal` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    pub step: String,
    pub result: String,
    pub next: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    pub timestamp: String,
}

impl Signal {
    /// The checkpoint, with "absent" read as "none".
    pub fn checkpoint_or_empty(&self) -> &str {
        self.checkpoint.as_deref().unwrap_or("")
    }

    /// The signal's timestamp as a UTC instant (always parseable once validated).
    pub fn time(&self) -> Option<DateTime<Utc>> {
        crate::time::parse_time(&self.timestamp)
    }

    /// Serialize as the file stores it: one JSON object and a newline.
    pub fn to_document(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a signal always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// Map a concrete result to the name the whitelists and tables use: `(step-12)` → `(step-N)`.
pub fn result_family(result: &str) -> &str {
    if is_step_n(result) { STEP_N } else { result }
}

fn is_step_n(result: &str) -> bool {
    result
        .strip_prefix("(step-")
        .and_then(|rest| rest.strip_suffix(')'))
        .is_some_and(|digits| {
            !digits.is_empty()
                && digits.len() <= 9
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'))
        })
}

/// Whether `result` is in the whitelist, where `(step-N)` stands for `(step-0)`, `(step-1)`, …
/// and is not itself a result (the schema refuses it).
pub fn is_known_result(result: &str) -> bool {
    is_step_n(result) || (result != STEP_N && RESULTS.contains(&result))
}

/// Validate the bytes of a signal: JSON, schema, then the checks the schema cannot express.
pub fn parse(bytes: &[u8]) -> Result<Signal, Vec<Problem>> {
    if let Some(text) = quick::signal_text(bytes) {
        return Ok(text.to_signal());
    }
    parse_in_full(bytes)
}

/// [`parse`] when only the verdict is wanted: a valid signal is read without a single
/// allocation.
pub fn check(bytes: &[u8]) -> Result<(), Vec<Problem>> {
    if quick::signal_text(bytes).is_some() {
        return Ok(());
    }
    parse_in_full(bytes).map(drop)
}

/// [`parse`] without the quick path: what decides, and words the problems of, every document
/// the quick path leaves.
pub(crate) fn parse_in_full(bytes: &[u8]) -> Result<Signal, Vec<Problem>> {
    let value = document::parse_with_quick_schema(bytes, "auto-signal", quick::proves_valid)
        .map_err(|problems| {
            let doc = document::parse_json(bytes).unwrap_or(Value::Null);
            document::explain_whitelists(problems, &doc, WHITELISTS)
        })?;
    let problems = semantic_problems(&value);
    if !problems.is_empty() {
        return Err(problems);
    }
    // From the value: parse_json already refused duplicated keys, so one parse of the text is
    // enough.
    document::typed_from_value(&value)
}

fn semantic_problems(value: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(timestamp) = value.get("timestamp").and_then(Value::as_str)
        && let Err(err) = DateTime::parse_from_rfc3339(timestamp)
    {
        problems.push(Problem::at(
            "/timestamp",
            format!("{timestamp:?} is not an RFC 3339 timestamp: {err}"),
        ));
    }
    if let Some(iteration) = value.get("iteration")
        && iteration.as_u64().is_none()
    {
        problems.push(Problem::at(
            "/iteration",
            format!("{iteration} must be written as a whole number (no fraction or exponent)"),
        ));
    }
    problems
}

/// The path of the signal file of a task module.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// What reading a module's signal found.
#[derive(Debug)]
pub enum Read {
    Missing,
    Invalid(Vec<Problem>),
    Valid(Signal),
}

/// Read and validate `DIR/.auto-signal`. I/O failures other than "not found" are errors.
pub fn read(dir: &Path) -> Result<Read> {
    let path = path_in(dir);
    let bounded = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(bounded) => bounded,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Read::Missing),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let bytes = match document::bounded_bytes(bounded) {
        Ok(bytes) => bytes,
        Err(problem) => return Ok(Read::Invalid(vec![problem])),
    };
    Ok(match parse(&bytes) {
        Ok(signal) => Read::Valid(signal),
        Err(problems) => Read::Invalid(problems),
    })
}

/// Write a signal into `dir` atomically.
pub fn write(dir: &Path, signal: &Signal) -> Result<()> {
    fsx::require_dir(dir)?;
    fsx::atomic_write(&path_in(dir), &signal.to_document())
}

/// The timestamp format every document autoctl writes uses: RFC 3339, UTC, whole seconds.
pub fn now_timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(json: &str) -> Result<Signal, Vec<Problem>> {
        parse(json.as_bytes())
    }

    #[test]
    fn whitelists_agree_with_the_schema() {
        let schema: Value =
            serde_json::from_str(crate::schema::find("auto-signal").unwrap().text).unwrap();
        let enum_of = |pointer: &str| -> Vec<String> {
            schema
                .pointer(pointer)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(enum_of("/properties/step/enum"), STEPS);
        assert_eq!(enum_of("/properties/next/enum"), NEXTS);
        assert_eq!(enum_of("/properties/checkpoint/enum"), CHECKPOINTS);
        let mut results = enum_of("/properties/result/anyOf/0/enum");
        results.push(STEP_N.to_string());
        let mut expected: Vec<String> = RESULTS.iter().map(|r| r.to_string()).collect();
        results.sort();
        expected.sort();
        assert_eq!(results, expected);
    }

    #[test]
    fn step_n_family() {
        assert_eq!(result_family("(step-3)"), STEP_N);
        assert_eq!(result_family("(step-0)"), STEP_N);
        assert_eq!(result_family("(step-03)"), "(step-03)");
        assert_eq!(result_family("(step-)"), "(step-)");
        assert_eq!(result_family("PASS"), "PASS");
    }

    #[test]
    fn v1_and_v2_signals_are_valid() {
        doc(r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#)
            .unwrap();
        let v2 = doc(r#"{"step":"exec","result":"(step-4)","next":"exec","checkpoint":"","iteration":3,"timestamp":"2024-01-01T00:00:00+02:00"}"#).unwrap();
        assert_eq!(v2.iteration, Some(3));
    }

    #[test]
    fn fractional_iteration_is_explained() {
        let problems = doc(r#"{"step":"plan","result":"(generated)","next":"check","iteration":3.0,"timestamp":"2024-01-01T00:00:00Z"}"#).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("whole number"), "{problems:?}");
    }
}

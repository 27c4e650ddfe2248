//! A `--into shell` step's own account of how it ended: Claude Code in print mode writes
//! `--output-format stream-json` (one JSON object a line, the last a `result`) to a file
//! autoctl names, and the tick reads that `result` when the shell is back (issue 28: Claude
//! Code's own channels first; `claude -p` is to skip hooks by default, `--bare`, so the step
//! must not depend on them).
//!
//! The step's command gets two placeholders: `{settings}`, a settings file holding autoctl's
//! hooks and status line (`--settings`, so the hooks run whatever the project's settings say;
//! Claude Code runs an identical hook command once even when both wire it; under `--bare`
//! 2.1.332 runs none, these neither, and the stream is all there is), and `{stream}`,
//! the file for the step's stream, one per dispatch under the state directory
//! (`streams/<run>/<dispatch>.jsonl`, the older ones removed as new ones are made).
//!
//! A `result` (2.1.332) carries `is_error`, `api_error_status` and `api_error_type` when the
//! turn ended on an API error, `terminal_reason` (`completed`, `api_error`, …), `subtype`
//! (`success`, `error_max_turns`, `error_during_execution`) and `result`, the final text.
//! [`StepResult::outcome`] sorts it: done, an error only a person can clear (a login, a bill,
//! a request the API refuses), or one that clears by itself (429, 529, 5xx: the step is
//! dispatched again after a backoff).
//!
//! Gemini CLI in headless mode (`gemini -p … --output-format stream-json`, 0.61) ends its
//! stream with a `result` of another shape: `status` (`success`, `error`) and `error`
//! (`type`, `message`), no status code. A usage limit there is such a result and an exit, never
//! the "Keep trying / Stop" menu its terminal UI opens (headless mode sets no fallback
//! handler, so the quota error ends the turn): the step is typed again after the delay Gemini
//! names ("Suggested retry after 3600s."), or after the backoff when it names none (a daily
//! quota). [`StepResult::of`] reads both shapes into the same fields.
//!
//! The words of an error's text are data, facts of the pane rules (`rules/pane-rules.json`)
//! with their examples: `stream-billing` (either agent), and for Gemini's status-less errors
//! `stream-error-clears`, `stream-error-auth`, `stream-error-invalid-request`, read in that
//! order, and `stream-retry-after`, the delay one names. Claude Code's status codes and error
//! types are its API and stay here.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::pane::rules::{Facts, RuleSet};
use crate::supervise::wait::EscalationKind;

/// Stream files kept per run (the newest ones).
pub const KEEP: u64 = 5;
/// The tail of a stream read for its `result` (the line is a few kilobytes).
pub const TAIL: u64 = 256 * 1024;

/// The `result` object of a stream, the fields autoctl reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct StepResult {
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub api_error_status: Option<u16>,
    #[serde(default)]
    pub api_error_type: Option<String>,
    #[serde(default)]
    pub terminal_reason: Option<String>,
    /// The final text (the error's banner when it failed).
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub num_turns: Option<u64>,
    /// Gemini CLI's `status` (`success`, `error`).
    #[serde(default)]
    pub status: Option<String>,
    /// Gemini CLI's `error` (`type`, `message`).
    #[serde(default)]
    pub error: Option<StreamError>,
}

/// The `error` of a Gemini CLI `result`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct StreamError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// How a step ended, by its `result`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEnd {
    /// It ran to its end (whatever it did).
    Done,
    /// An error only a person can clear: the escalation slug (`auth`, `billing`,
    /// `invalid-request`).
    NeedsPerson(EscalationKind),
    /// An API error that clears by itself (rate limit, overload, server error).
    Transient,
    /// Another failure (`error_max_turns`, `error_during_execution`).
    Failed,
}

impl StepResult {
    /// The last `result` line of a stream (`None`: no result yet, or none readable).
    pub fn of(stream: &str) -> Option<StepResult> {
        stream.lines().rev().find_map(|line| {
            let line = line.trim();
            if !line.starts_with('{') || !line.contains("\"result\"") {
                return None;
            }
            let value: serde_json::Value = serde_json::from_str(line).ok()?;
            (value.get("type")?.as_str()? == "result")
                .then(|| serde_json::from_value::<StepResult>(value).ok())
                .flatten()
                .map(StepResult::unified)
        })
    }

    /// Gemini's shape in Claude Code's fields: an `error` status is an error, its message the
    /// result text.
    fn unified(mut self) -> StepResult {
        if self.status.as_deref() == Some("error") || self.error.is_some() {
            self.is_error = true;
            if self.result.is_none() {
                self.result = self.error.as_ref().and_then(|e| e.message.clone());
            }
        }
        self
    }

    /// The delay the error itself names before a retry ("Suggested retry after 3600s.",
    /// Gemini's quota errors), if any, by the embedded pane rules' `stream-retry-after`.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.retry_after_with(&RuleSet::embedded().facts)
    }

    /// [`StepResult::retry_after`] with the wording of a rule set: the whole seconds the
    /// fact's first group captures.
    pub fn retry_after_with(&self, facts: &Facts) -> Option<std::time::Duration> {
        let text = self.result.as_deref()?;
        let seconds = facts.get("stream-retry-after").first_group(text)?;
        Some(std::time::Duration::from_secs(seconds.parse().ok()?))
    }

    /// How the step ended, by the embedded pane rules' stream facts.
    pub fn outcome(&self) -> StepEnd {
        self.outcome_with(&RuleSet::embedded().facts)
    }

    /// [`StepResult::outcome`] with the wording of a rule set: the words of an error's text
    /// are data (`stream-billing`, `stream-error-clears`, `stream-error-auth`,
    /// `stream-error-invalid-request`); its status code and type are Claude Code's API.
    pub fn outcome_with(&self, facts: &Facts) -> StepEnd {
        if !self.is_error {
            return match self.subtype.as_deref() {
                None | Some("success") => StepEnd::Done,
                Some(_) => StepEnd::Failed,
            };
        }
        let text = self.result.as_deref().unwrap_or("");
        if facts.get("stream-billing").is_match(text)
            || self.api_error_type.as_deref() == Some("billing_error")
        {
            return StepEnd::NeedsPerson(EscalationKind::Billing);
        }
        if self.error.is_some() {
            return gemini_outcome(text, facts);
        }
        match (self.api_error_status, self.api_error_type.as_deref()) {
            (Some(401 | 403), _) | (_, Some("authentication_error" | "permission_error")) => {
                StepEnd::NeedsPerson(EscalationKind::Auth)
            }
            (Some(402), _) => StepEnd::NeedsPerson(EscalationKind::Billing),
            (Some(429 | 500..=599), _)
            | (_, Some("rate_limit_error" | "overloaded_error" | "api_error" | "timeout_error")) => {
                StepEnd::Transient
            }
            (Some(400 | 404 | 413), _)
            | (_, Some("invalid_request_error" | "not_found_error" | "request_too_large")) => {
                StepEnd::NeedsPerson(EscalationKind::InvalidRequest)
            }
            _ if self.terminal_reason.as_deref() == Some("api_error") => StepEnd::Transient,
            _ => StepEnd::Failed,
        }
    }

    /// One line for people: the status, the type and the text.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(status) = self.api_error_status {
            parts.push(status.to_string());
        }
        if let Some(kind) = &self.api_error_type {
            parts.push(kind.clone());
        }
        if let Some(subtype) = self.subtype.as_deref().filter(|s| *s != "success") {
            parts.push(subtype.to_string());
        }
        let text = self
            .result
            .as_deref()
            .map(|t| {
                crate::output::one_line(t)
                    .chars()
                    .take(160)
                    .collect::<String>()
            })
            .unwrap_or_default();
        match (parts.is_empty(), text.is_empty()) {
            (true, true) => "no result text".to_string(),
            (true, false) => format!("{text:?}"),
            (false, true) => parts.join(" "),
            (false, false) => format!("{}: {text:?}", parts.join(" ")),
        }
    }
}

/// A Gemini CLI error by its message (it carries no status code), by the stream facts of the
/// pane rules: a usage limit, rate limit or server error clears by itself (its quota message
/// also says "switch to another /auth method", so it is read first); a refused key or a
/// request the API rejects needs a person.
fn gemini_outcome(text: &str, facts: &Facts) -> StepEnd {
    if facts.get("stream-error-clears").is_match(text) {
        StepEnd::Transient
    } else if facts.get("stream-error-auth").is_match(text) {
        StepEnd::NeedsPerson(EscalationKind::Auth)
    } else if facts.get("stream-error-invalid-request").is_match(text) {
        StepEnd::NeedsPerson(EscalationKind::InvalidRequest)
    } else {
        StepEnd::Failed
    }
}

/// The directory of one run's streams: named by a hash of the session, so any session name
/// gives a path a shell line can hold.
pub fn run_dir(state_dir: &Path, session: &str) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_64(session.as_bytes());
    state_dir.join("streams").join(format!("{hash:016x}"))
}

/// The stream file of dispatch number `count`.
pub fn stream_path(state_dir: &Path, session: &str, count: u64) -> PathBuf {
    run_dir(state_dir, session).join(format!("{count}.jsonl"))
}

/// The settings file the steps' `--settings` names: autoctl's hooks and status line.
pub fn settings_path(state_dir: &Path) -> PathBuf {
    state_dir.join("claude").join("step-settings.json")
}

/// Read the `result` of dispatch `count`'s stream (its tail, bounded).
pub fn read_result(state_dir: &Path, session: &str, count: u64) -> Option<StepResult> {
    let path = stream_path(state_dir, session, count);
    let file = std::fs::File::open(&path).ok()?;
    let len = file.metadata().ok()?.len();
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL).read_to_end(&mut bytes).ok()?;
    StepResult::of(&String::from_utf8_lossy(&bytes))
}

/// Make ready for dispatch `count`: the run's stream directory exists, streams older than the
/// last [`KEEP`] are removed, and the settings file holds autoctl's hooks (`autoctl`: how they
/// name the binary). Best effort, said in the returned notes: a step still runs without them.
pub fn prepare(state_dir: &Path, session: &str, count: u64, autoctl: &str) -> Vec<String> {
    let mut notes = Vec::new();
    let dir = run_dir(state_dir, session);
    if let Err(err) = std::fs::create_dir_all(&dir) {
        notes.push(format!("cannot create {}: {err}", dir.display()));
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Older than the last KEEP, or the one about to be written: a stream left by an
            // earlier run of the same session is never read as this dispatch's.
            let old = name
                .strip_suffix(".jsonl")
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n.saturating_add(KEEP) <= count || n >= count);
            if old {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let settings = settings_path(state_dir);
    let mut json = crate::hook::settings::parse("{}").expect("an empty object");
    // Every hook the table installs is a subcommand of this binary (the step runs the same
    // autoctl that wrote the file).
    crate::hook::settings::install(&mut json, autoctl, &|_| true);
    let text = json.pretty();
    let same = std::fs::read_to_string(&settings).is_ok_and(|old| old == text);
    if !same {
        let written = settings
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(anyhow::Error::from)
            .and_then(|()| crate::fsx::atomic_write(&settings, text.as_bytes()));
        if let Err(err) = written {
            notes.push(format!("cannot write {}: {err:#}", settings.display()));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `result` lines of the real Claude Code 2.1.332 (`claude -p --output-format stream-json
    /// --verbose`) against the fake server: a step that ran, a 401, a 529 after its retries,
    /// and a 5-hour limit.
    const DONE: &str = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Listed the files.","stop_reason":"end_turn","terminal_reason":"completed","session_id":"s"}"#;
    const AUTH: &str = r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"api_error_status":401,"api_error_type":"authentication_error","result":"Invalid API key · Fix external API key","terminal_reason":"api_error"}"#;
    const OVERLOADED: &str = r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"api_error_status":529,"api_error_type":"overloaded_error","result":"API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.","terminal_reason":"api_error"}"#;
    const LIMIT: &str = r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"api_error_status":429,"api_error_type":"rate_limit_error","result":"API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.","terminal_reason":"api_error"}"#;

    #[test]
    fn the_last_result_of_a_stream_decides() {
        let stream = format!(
            "{}\n{}\nnot json\n{DONE}\n",
            r#"{"type":"system","subtype":"init","session_id":"s"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"\"result\""}]}}"#
        );
        let result = StepResult::of(&stream).unwrap();
        assert_eq!(result.outcome(), StepEnd::Done);
        assert_eq!(result.describe(), "\"Listed the files.\"");
        assert_eq!(StepResult::of(r#"{"type":"system"}"#), None);
        assert_eq!(StepResult::of(""), None);
        // A stream cut mid-line (the step was killed) has no result.
        assert_eq!(StepResult::of(&DONE[..40]), None);
    }

    #[test]
    fn errors_are_sorted_by_who_can_clear_them() {
        let of = |line: &str| StepResult::of(line).unwrap().outcome();
        assert_eq!(of(AUTH), StepEnd::NeedsPerson(EscalationKind::Auth));
        assert_eq!(of(OVERLOADED), StepEnd::Transient);
        assert_eq!(of(LIMIT), StepEnd::Transient);
        let credit = r#"{"type":"result","is_error":true,"api_error_status":400,"api_error_type":"invalid_request_error","result":"Your credit balance is too low to access the Anthropic API."}"#;
        assert_eq!(of(credit), StepEnd::NeedsPerson(EscalationKind::Billing));
        let too_long = r#"{"type":"result","is_error":true,"api_error_status":400,"api_error_type":"invalid_request_error","result":"prompt is too long"}"#;
        assert_eq!(
            of(too_long),
            StepEnd::NeedsPerson(EscalationKind::InvalidRequest)
        );
        let turns = r#"{"type":"result","subtype":"error_max_turns","is_error":false}"#;
        assert_eq!(of(turns), StepEnd::Failed);
        assert_eq!(
            StepResult::of(AUTH).unwrap().describe(),
            "401 authentication_error: \"Invalid API key · Fix external API key\""
        );
    }

    /// `result` lines of the real Gemini CLI 0.61 (`gemini -p … --output-format stream-json`)
    /// against `mock_agents.py`: a daily quota (HTTP 429 with a per-day QuotaFailure) and a
    /// step that ran.
    const GEMINI_DAILY: &str = r#"{"type":"result","timestamp":"2026-11-28T21:43:41.970Z","status":"error","error":{"type":"unknown","message":"[API Error: You have exhausted your daily quota on this model.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method"},"stats":{"total_tokens":1242,"tool_calls":0}}"#;
    const GEMINI_DONE: &str = r#"{"type":"result","timestamp":"2026-11-28T21:43:47.722Z","status":"success","stats":{"total_tokens":2484,"duration_ms":269,"tool_calls":0}}"#;

    #[test]
    fn gemini_results_are_read_in_the_same_fields() {
        let daily = StepResult::of(GEMINI_DAILY).unwrap();
        assert!(daily.is_error);
        assert_eq!(daily.outcome(), StepEnd::Transient);
        assert_eq!(daily.retry_after(), None);
        assert!(daily.describe().contains("exhausted your daily quota"));
        assert_eq!(
            StepResult::of(GEMINI_DONE).unwrap().outcome(),
            StepEnd::Done
        );
        let gemini = |message: &str| {
            let line = serde_json::json!({"type": "result", "status": "error",
                "error": {"type": "unknown", "message": message}});
            StepResult::of(&line.to_string()).unwrap()
        };
        let hourly = gemini(
            "[API Error: Quota exceeded for quota metric 'Generate Content API requests'.\nSuggested retry after 3600s.]",
        );
        assert_eq!(hourly.outcome(), StepEnd::Transient);
        assert_eq!(
            hourly.retry_after(),
            Some(std::time::Duration::from_secs(3600))
        );
        assert_eq!(
            gemini("Suggested retry after 42.5s.").retry_after(),
            Some(std::time::Duration::from_secs(42))
        );
        assert_eq!(gemini("retry after 5 minutes").retry_after(), None);
        assert_eq!(
            gemini("[API Error: API key not valid. Please pass a valid API key.]").outcome(),
            StepEnd::NeedsPerson(EscalationKind::Auth)
        );
        assert_eq!(
            gemini("[API Error: Permission denied: Consumer 'api_key:k' has been suspended.]")
                .outcome(),
            StepEnd::NeedsPerson(EscalationKind::Auth)
        );
        assert_eq!(
            gemini("[API Error: Request contains an invalid argument.]").outcome(),
            StepEnd::NeedsPerson(EscalationKind::InvalidRequest)
        );
        assert_eq!(gemini("something else broke").outcome(), StepEnd::Failed);
        // Claude Code's results are read as before: no `error` object, no `status`.
        assert_eq!(StepResult::of(LIMIT).unwrap().retry_after(), None);
    }

    #[test]
    fn streams_are_kept_per_run_and_dispatch_and_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        for count in 1..=8 {
            prepare(state, "my run", count, "autoctl");
            std::fs::write(stream_path(state, "my run", count), DONE).unwrap();
        }
        let mut left: Vec<String> = std::fs::read_dir(run_dir(state, "my run"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["4.jsonl", "5.jsonl", "6.jsonl", "7.jsonl", "8.jsonl"]
        );
        assert_eq!(
            read_result(state, "my run", 8).unwrap().outcome(),
            StepEnd::Done
        );
        assert_eq!(read_result(state, "my run", 9), None);
        assert_ne!(run_dir(state, "my run"), run_dir(state, "my run 2"));
        let settings =
            crate::hook::settings::parse(&std::fs::read_to_string(settings_path(state)).unwrap())
                .unwrap();
        assert!(crate::hook::settings::wires(&settings, "Stop", "stop"));
    }

    /// The word lists the stream reader held in Rust until they became facts of the pane
    /// rules (main 3c813f8), kept as the reference the facts must agree with.
    fn word_list_outcome(result: &StepResult) -> StepEnd {
        let text = result.result.as_deref().unwrap_or("").to_lowercase();
        let any = |words: &[&str]| words.iter().any(|w| text.contains(w));
        if !result.is_error {
            return result.outcome();
        }
        if text.contains("credit balance")
            || result.api_error_type.as_deref() == Some("billing_error")
        {
            return StepEnd::NeedsPerson(EscalationKind::Billing);
        }
        if result.error.is_none() {
            return result.outcome();
        }
        if any(&[
            "quota",
            "usage limit",
            "resource_exhausted",
            "rate limit",
            "high demand",
            "capacity",
            "429",
            "500",
            "503",
            "internal error",
            "unavailable",
            "overloaded",
        ]) {
            StepEnd::Transient
        } else if any(&[
            "api key",
            "permission denied",
            "permission_denied",
            "unauthenticated",
            "401",
            "403",
            "login",
            "auth",
        ]) {
            StepEnd::NeedsPerson(EscalationKind::Auth)
        } else if any(&[
            "invalid argument",
            "invalid_argument",
            "not found",
            "400",
            "404",
        ]) {
            StepEnd::NeedsPerson(EscalationKind::InvalidRequest)
        } else {
            StepEnd::Failed
        }
    }

    /// Words of every list, in any case, and text around them.
    fn message() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let word = prop::sample::select(vec![
            "quota",
            "Usage Limit",
            "RESOURCE_EXHAUSTED",
            "rate limit",
            "high demand",
            "Capacity",
            "429",
            "500",
            "503",
            "Internal Error",
            "UNAVAILABLE",
            "overloaded",
            "API key",
            "Permission denied",
            "PERMISSION_DENIED",
            "unauthenticated",
            "401",
            "403",
            "Login",
            "/auth",
            "invalid argument",
            "INVALID_ARGUMENT",
            "not found",
            "400",
            "404",
            "credit balance",
            "Credit Balance is too low",
            "[API Error: ",
            "\n",
            " ",
        ])
        .prop_map(str::to_string);
        let filler = "[a-zA-Z0-9 .:_/\\[\\]-]{0,12}";
        proptest::collection::vec(prop_oneof![word, filler.prop_map(|s| s)], 0..6)
            .prop_map(|parts| parts.concat())
    }

    /// The parser `stream-retry-after` replaced: the first "retry after ", whole digits, an
    /// optional fraction, then `s`.
    fn parsed_retry_after(text: &str) -> Option<std::time::Duration> {
        let rest = &text[text.find("retry after ")? + "retry after ".len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let after = &rest[digits.len()..];
        let after = after.strip_prefix('.').map_or(after, |a| {
            a.trim_start_matches(|c: char| c.is_ascii_digit())
        });
        after.starts_with('s').then_some(())?;
        Some(std::time::Duration::from_secs(digits.parse().ok()?))
    }

    /// An error text naming (or almost naming) a delay once, in the forms the parser told
    /// apart: digits or none, a fraction, a unit.
    fn retry_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let filler = "[a-zA-Z0-9 .:_/\\[\\]\n-]{0,12}";
        (
            filler,
            prop::sample::select(vec!["retry after ", "Retry after ", "retry  after ", ""]),
            "[0-9]{0,22}",
            prop::option::of("[0-9]{0,3}"),
            prop::sample::select(vec!["s", "s.", "s]", " s", "m", "", "sec", "seconds"]),
            filler,
        )
            .prop_map(|(before, words, digits, fraction, unit, after)| {
                let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
                format!("{before}{words}{digits}{fraction}{unit}{after}")
            })
    }

    #[test]
    fn a_rules_file_may_word_the_retry_delay_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rules.json");
        std::fs::write(
            &file,
            r#"{"version": 1, "facts": [{"id": "stream-retry-after",
                "explanation": "another wording", "patterns": ["try again in ([0-9]+) seconds"],
                "examples": ["try again in 30 seconds"]}]}"#,
        )
        .unwrap();
        let rules = RuleSet::with_user_file(&file).unwrap();
        let result = StepResult {
            result: Some("Busy: try again in 30 seconds".into()),
            ..StepResult::default()
        };
        assert_eq!(
            result.retry_after_with(&rules.facts),
            Some(std::time::Duration::from_secs(30))
        );
        assert_eq!(result.retry_after(), None);
    }

    /// A Gemini error and a Claude Code result with the text of each line of every fixture
    /// (captured screens, streams and payloads): the stream facts decide it as the word lists
    /// did, and `stream-retry-after` reads its delay as the parser did.
    #[test]
    fn the_stream_facts_read_every_captured_line_as_the_rust_did() {
        let mut named = 0;
        for line in crate::fixtures::fixture_lines("") {
            let gemini = StepResult {
                is_error: true,
                result: Some(line.clone()),
                status: Some("error".to_string()),
                error: Some(StreamError {
                    kind: Some("unknown".into()),
                    message: Some(line.clone()),
                }),
                ..StepResult::default()
            };
            let claude = StepResult {
                is_error: true,
                result: Some(line.clone()),
                ..StepResult::default()
            };
            for result in [&gemini, &claude] {
                assert_eq!(result.outcome(), word_list_outcome(result), "{line:?}");
            }
            assert_eq!(gemini.retry_after(), parsed_retry_after(&line), "{line:?}");
            named += usize::from(gemini.outcome() != StepEnd::Failed);
        }
        assert!(named > 500, "{named} lines named an error kind");
    }

    proptest::proptest! {
        /// `stream-retry-after` reads the delay as the parser it replaced did.
        #[test]
        fn the_retry_fact_reads_the_delay_as_the_parser_did(text in retry_text()) {
            let result = StepResult { result: Some(text.clone()), ..StepResult::default() };
            proptest::prop_assert_eq!(result.retry_after(), parsed_retry_after(&text), "{:?}", text);
        }

        /// The stream facts decide every Gemini and Claude Code error as the word lists did.
        #[test]
        fn the_stream_facts_decide_as_the_word_lists_did(
            text in message(),
            gemini in proptest::bool::ANY,
            status in proptest::option::of(proptest::sample::select(vec![400u16, 401, 402, 429, 500, 529])),
        ) {
            let result = if gemini {
                StepResult {
                    is_error: true,
                    result: Some(text.clone()),
                    status: Some("error".to_string()),
                    error: Some(StreamError { kind: Some("unknown".into()), message: Some(text) }),
                    ..StepResult::default()
                }
            } else {
                StepResult {
                    is_error: true,
                    api_error_status: status,
                    result: Some(text),
                    ..StepResult::default()
                }
            };
            proptest::prop_assert_eq!(result.outcome(), word_list_outcome(&result));
        }
    }
}

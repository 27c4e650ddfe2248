//! Codex CLI's rollout file (`~/.codex/sessions/…/rollout-….jsonl`, its hooks'
//! `transcript_path`): what it records that no hook reports.
//!
//! Codex ends a turn on its usage limit without firing a hook (no Stop, no StopFailure): the
//! rollout's `task_complete` event carries the error, `codex_error_info:
//! "usage_limit_exceeded"`, with the banner's text ("… or try again at 1:15 AM."). The
//! supervisor reads the last turn here and the screen is the witness
//! ([`crate::supervise::driver::channel_state`]); the reset is the banner's minute, which the
//! screen shows too. (The turn's `token_count` events carry the account's rate-limit windows
//! only when the server sends them; the fake server of the live tier does not, so they are not
//! read: nothing here could be checked against the real agent.)
//!
//! The file grows with the session (tool outputs included), so only its tail is read
//! ([`TAIL`]): the last turn's end is its last lines. A line cut by the tail's start, a line
//! that is not JSON and an event of another shape are skipped; a file that cannot be read
//! says nothing.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use crate::time::{Time, parse_time};

/// The bytes read from the end of a rollout.
pub const TAIL: u64 = 256 * 1024;

/// The error Codex records when a turn ended on the account's usage limit.
pub const USAGE_LIMIT: &str = "usage_limit_exceeded";

/// The last turn ended on the usage limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitReached {
    /// When the turn ended (the event's timestamp).
    pub at: Time,
    /// Codex's message ("You've hit your usage limit. … try again at 1:15 AM.").
    pub message: String,
}

/// Whether the rollout's last turn ended on the usage limit, and nothing started since.
pub fn usage_limit(path: &Path) -> Option<LimitReached> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    file.take(TAIL).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // The first line is cut by the tail's start.
        lines.remove(0);
    }
    last_turn(&lines)
}

/// [`usage_limit`] on the rollout's lines, oldest first.
pub fn last_turn(lines: &[&str]) -> Option<LimitReached> {
    let mut ended: Option<LimitReached> = None;
    for line in lines.iter().rev() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if entry.get("type").and_then(Value::as_str) != Some("event_msg") {
            continue;
        }
        let Some(payload) = entry.get("payload") else {
            continue;
        };
        let at = || {
            entry
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(parse_time)
        };
        match payload.get("type").and_then(Value::as_str) {
            // The turn's end: on the limit, or something else (then the limit is over).
            Some("task_complete" | "error") if ended.is_none() => {
                let error = payload.get("error").unwrap_or(payload);
                let info = error.get("codex_error_info").and_then(Value::as_str);
                if info != Some(USAGE_LIMIT) {
                    return None;
                }
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                ended = Some(LimitReached { at: at()?, message });
            }
            // A turn started (or was aborted) after the last one ended: not waiting.
            Some("task_started" | "turn_aborted" | "user_message") => return ended,
            _ => {}
        }
    }
    ended
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rollout the real Codex 0.171 wrote in the live tier's limit run (offline, the fake
    /// model answering step 2's request with HTTP 429 `usage_limit_reached`): step 1, the Stop
    /// hook's next prompt, and the turn ended on the limit.
    const RECORDED: &str = include_str!("../../tests/fixtures/codex-rollout/usage-limit.jsonl");

    #[test]
    fn the_recorded_limit_is_read_with_its_message() {
        let lines: Vec<&str> = RECORDED.lines().collect();
        let got = last_turn(&lines).expect("the last turn ended on the limit");
        assert_eq!(got.at, parse_time("2026-11-29T01:13:10.157Z").unwrap());
        assert!(
            got.message.contains("try again at 1:15 AM."),
            "{}",
            got.message
        );
        // Read from the file, through the tail.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let padding = format!(
            "{{\"type\":\"response_item\",\"payload\":{{\"text\":\"{}\"}}}}\n",
            "x".repeat(usize::try_from(TAIL).unwrap())
        );
        std::fs::write(&path, format!("{padding}{RECORDED}")).unwrap();
        assert_eq!(usage_limit(&path), Some(got));
        assert_eq!(usage_limit(&dir.path().join("missing.jsonl")), None);
    }

    #[test]
    fn a_turn_after_the_limit_or_another_ending_is_not_a_limit() {
        let mut lines: Vec<&str> = RECORDED.lines().collect();
        let started = r#"{"timestamp":"2026-11-29T01:16:02.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t2"}}"#;
        lines.push(started);
        assert_eq!(last_turn(&lines), None);
        let done = r#"{"timestamp":"2026-11-29T01:16:09.000Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":"step 2 done.","error":null}}"#;
        lines.push(done);
        assert_eq!(last_turn(&lines), None);
        assert_eq!(last_turn(&[]), None);
        assert_eq!(last_turn(&["not json", "{}"]), None);
    }
}

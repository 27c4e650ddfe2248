//! The JSON Claude Code writes on a hook's stdin, for the two events autoctl answers.
//!
//! Field names follow the Claude Code hooks reference and the Agent SDK's typings
//! (`@anthropic-ai/claude-agent-sdk` `sdk.d.ts`): every event carries `session_id`,
//! `transcript_path`, `cwd` and `hook_event_name`; `Stop` and `SubagentStop` add
//! `stop_hook_active` and, in current versions, `last_assistant_message` ("Text content of the
//! last assistant message before stopping. Avoids the need to read and parse the transcript
//! file."); `SubagentStop` adds `agent_id`; `StopFailure` adds `error` (one of
//! `rate_limit`, `authentication_failed`, `billing_error`, `invalid_request`, `server_error`,
//! `max_output_tokens`, `unknown`, ...), `error_details` and `last_assistant_message`. Some
//! third-party write-ups name the StopFailure fields `error_type` and `error_message`; both
//! spellings are read. Unknown fields are ignored: Claude Code adds fields often.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

/// Hook input is small; a megabyte-long `last_assistant_message` is possible, so the bound is
/// generous.
pub const STDIN_LIMIT: u64 = 16 * 1024 * 1024;

/// The fields of a Stop, SubagentStop or StopFailure input that autoctl uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// Present only inside subagents.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// StopFailure: the error kind (the SDK types it as a string enum; tolerate anything).
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub error_type: Option<String>,
    #[serde(default)]
    pub error_details: Option<Value>,
    #[serde(default)]
    pub error_message: Option<String>,
}

impl HookInput {
    /// The session id, if it is present and not blank.
    pub fn session(&self) -> Option<&str> {
        self.session_id
            .as_deref()
            .map(str::trim)
            .filter(|id| !id.is_empty())
    }

    /// Whether this input comes from a subagent finishing (never a loop turn).
    pub fn is_subagent(&self) -> bool {
        self.agent_id.is_some() || self.hook_event_name.as_deref() == Some("SubagentStop")
    }

    /// StopFailure's error kind: `error_type` when present (the spelling in which `error` is
    /// a short code such as "429"), else `error` when it is a string (the SDK spelling), else
    /// `unknown`.
    pub fn failure_kind(&self) -> String {
        let kind = self
            .error_type
            .clone()
            .or_else(|| match &self.error {
                Some(Value::String(kind)) => Some(kind.clone()),
                Some(Value::Object(map)) => {
                    map.get("type").and_then(Value::as_str).map(str::to_string)
                }
                _ => None,
            })
            .map(|kind| kind.trim().to_string())
            .filter(|kind| !kind.is_empty());
        kind.unwrap_or_else(|| "unknown".to_string())
    }

    /// StopFailure's human-readable detail, if any (`error_details`, else `error_message`,
    /// else a message inside an object-valued `error`).
    pub fn failure_detail(&self) -> Option<String> {
        let detail = match &self.error_details {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        detail
            .or_else(|| self.error_message.clone())
            .or_else(|| {
                self.error
                    .as_ref()
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .filter(|text| !text.trim().is_empty())
    }
}

/// The longest session id accepted (Claude Code's are 36-character UUIDs).
pub const SESSION_MAX_CHARS: usize = 256;

/// Why a hook's stdin is not a payload it can read (one line, printed by the hook that
/// then stands aside).
#[derive(Debug, thiserror::Error)]
pub enum StdinError {
    /// Nothing but whitespace; the text names whose input was expected.
    #[error("stdin is empty: expected the hook's JSON input from {0}")]
    Empty(&'static str),
    #[error("stdin is truncated JSON ({0})")]
    Truncated(serde_json::Error),
    #[error("stdin is not JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("stdin is JSON but not an object: expected the hook's JSON input")]
    NotObject,
    #[error("stdin is not a hook input: {0}")]
    NotHookInput(serde_json::Error),
}

/// Why a session id is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionIdError {
    #[error("session_id {0:?} contains control characters")]
    Control(String),
    #[error("session_id is longer than {SESSION_MAX_CHARS} characters")]
    TooLong,
}

/// Refuse a session id that would be written into lock and state files and shown to people:
/// control characters (an escape sequence, a line break that forges a second line of `loop
/// status`) or an absurd length mean the input is not Claude Code's.
pub fn check_session(session: &str) -> Result<(), SessionIdError> {
    if session.chars().any(char::is_control) {
        return Err(SessionIdError::Control(crate::output::printable(session)));
    }
    if session.chars().count() > SESSION_MAX_CHARS {
        return Err(SessionIdError::TooLong);
    }
    Ok(())
}

/// Parse the bytes of stdin. The message says what was wrong in one line.
pub fn parse(bytes: &[u8]) -> Result<HookInput, StdinError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(StdinError::Empty("Claude Code"));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|err| {
        if err.is_eof() {
            StdinError::Truncated(err)
        } else {
            StdinError::NotJson(err)
        }
    })?;
    if !value.is_object() {
        return Err(StdinError::NotObject);
    }
    serde_json::from_value(value).map_err(StdinError::NotHookInput)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stop_input_and_ignores_unknown_fields() {
        let input = parse(
            br#"{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/p",
            "permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,
            "last_assistant_message":"hi","background_tasks":[]}"#,
        )
        .unwrap();
        assert_eq!(input.session(), Some("abc"));
        assert_eq!(input.last_assistant_message.as_deref(), Some("hi"));
        assert!(!input.is_subagent());
    }

    #[test]
    fn blank_session_ids_are_absent() {
        assert_eq!(parse(br#"{"session_id":"  "}"#).unwrap().session(), None);
        assert_eq!(parse(br#"{}"#).unwrap().session(), None);
    }

    #[test]
    fn bad_stdin_is_named() {
        assert!(matches!(parse(b""), Err(StdinError::Empty(_))));
        assert!(matches!(
            parse(br#"{"session_id":"ab"#),
            Err(StdinError::Truncated(_))
        ));
        assert!(matches!(parse(b"hello"), Err(StdinError::NotJson(_))));
        assert!(matches!(parse(b"[1]"), Err(StdinError::NotObject)));
        assert!(matches!(
            parse(br#"{"session_id":5}"#),
            Err(StdinError::NotHookInput(_))
        ));
    }

    #[test]
    fn failure_kinds_in_both_spellings() {
        let sdk = parse(br#"{"error":"rate_limit","error_details":"resets 3pm"}"#).unwrap();
        assert_eq!(sdk.failure_kind(), "rate_limit");
        assert_eq!(sdk.failure_detail().as_deref(), Some("resets 3pm"));
        let other =
            parse(br#"{"error_type":"server_error","error":"500","error_message":"x"}"#).unwrap();
        assert_eq!(other.failure_kind(), "server_error");
        assert_eq!(other.failure_detail().as_deref(), Some("x"));
        assert_eq!(parse(b"{}").unwrap().failure_kind(), "unknown");
    }
}

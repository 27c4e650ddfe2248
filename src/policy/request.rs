//! A tool call as Claude Code's PermissionRequest and PreToolUse hooks hand it over, and the
//! hooks' answers.
//!
//! Input (stdin, one JSON object; recorded from Claude Code 2.1.332 under
//! `tests/fixtures/hook/claude-code/`): `session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `hook_event_name` ("PermissionRequest" or "PreToolUse"), `tool_name`,
//! `tool_input`, and `permission_suggestions` (PermissionRequest) or `tool_use_id`
//! (PreToolUse).
//!
//! PermissionRequest's output (stdout): for an allow
//! `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`,
//! for a deny the same with `"behavior":"deny","message":…` (the model sees the message), and
//! nothing at all for no decision, so Claude Code shows its own prompt.
//!
//! PreToolUse's output ([`pre_tool_use_output`]): for the floor's ask
//! `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":…}}`
//! (Claude Code draws its permission box in every mode, bypassPermissions included), `"deny"`
//! for a deny (the call is not run; the model is told the reason), and nothing for no
//! decision.
//!
//! `policy check --batch` reads the same objects, one per line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Decision, Verdict};

/// The fields of a hook payload the policy reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Call {
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// Codex CLI's turn (Claude Code sends none).
    #[serde(default)]
    pub turn_id: Option<String>,
}

/// Why a payload is not a tool call this door answers.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// Not JSON, or JSON with a duplicate key (the reader's one line).
    #[error("{0}")]
    Json(String),
    #[error("the payload is not a JSON object")]
    NotObject,
    #[error("payload: {0}")]
    Fields(serde_json::Error),
    #[error("tool_input is not an object")]
    ToolInputNotObject,
    #[error("hook_event_name is {event:?}: this command answers {expected} only")]
    OtherEvent { event: String, expected: String },
}

/// Read a PermissionRequest payload: a JSON object with a `tool_name` string and a
/// `tool_input` object (a missing input is `{}`); duplicate keys are refused.
pub fn parse(bytes: &[u8]) -> Result<Call, PayloadError> {
    parse_event(bytes, "PermissionRequest")
}

/// [`parse`] for the payload of `event` (`PermissionRequest`, `PreToolUse`): a payload that
/// names another event is refused.
pub fn parse_event(bytes: &[u8], event: &str) -> Result<Call, PayloadError> {
    let value = crate::protocol::document::parse_json(bytes)
        .map_err(|p| PayloadError::Json(p.to_string()))?;
    event_from_value(value, event)
}

/// [`parse`] from an already parsed value (the batch reader parses each line once).
pub fn from_value(value: Value) -> Result<Call, PayloadError> {
    event_from_value(value, "PermissionRequest")
}

/// [`parse_event`] from an already parsed value (a hook door parses its payload once).
pub fn event_from_value(value: Value, expected: &str) -> Result<Call, PayloadError> {
    if !value.is_object() {
        return Err(PayloadError::NotObject);
    }
    let call: Call = serde_json::from_value(value).map_err(PayloadError::Fields)?;
    checked(call, expected)
}

/// [`event_from_value`] from a value the door keeps (to record the session from it after
/// answering): the call's fields are copied out of it.
pub fn event_from_ref(value: &Value, expected: &str) -> Result<Call, PayloadError> {
    if !value.is_object() {
        return Err(PayloadError::NotObject);
    }
    let call = Call::deserialize(value).map_err(PayloadError::Fields)?;
    checked(call, expected)
}

/// A call read from a payload, if its tool input is an object and it names `expected`.
fn checked(call: Call, expected: &str) -> Result<Call, PayloadError> {
    if !(call.tool_input.is_object() || call.tool_input.is_null()) {
        return Err(PayloadError::ToolInputNotObject);
    }
    if let Some(event) = &call.hook_event_name
        && event != expected
    {
        return Err(PayloadError::OtherEvent {
            event: event.clone(),
            expected: expected.to_string(),
        });
    }
    Ok(call)
}

/// PreToolUse's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreToolUseOutput {
    #[serde(rename = "hookSpecificOutput")]
    pub hook_specific_output: PreToolUseSpecific,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreToolUseSpecific {
    #[serde(rename = "hookEventName")]
    pub hook_event_name: &'static str,
    /// `ask` or `deny` (autoctl never answers `allow` at the floor).
    #[serde(rename = "permissionDecision")]
    pub permission_decision: &'static str,
    /// Shown to the person (ask) or told to the model (deny).
    #[serde(rename = "permissionDecisionReason")]
    pub permission_decision_reason: String,
}

/// Gemini CLI's BeforeTool answer: `{"decision": "ask"|"deny", "reason": …}` (`ask` draws its
/// confirmation even in YOLO mode; the model reads a deny's reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BeforeToolOutput {
    pub decision: &'static str,
    pub reason: String,
}

/// What Gemini's BeforeTool hook prints for the floor's answer: `None` for no decision.
pub fn before_tool_output(floor: &super::floor::Floor) -> Option<BeforeToolOutput> {
    use super::floor::Answer;
    let decision = match floor.answer {
        Answer::Ask => "ask",
        Answer::Deny => "deny",
        Answer::Pass => return None,
    };
    Some(BeforeToolOutput {
        decision,
        reason: floor.reason.clone(),
    })
}

/// What the PreToolUse hook prints for the floor's answer: `None` for no decision (print
/// nothing).
pub fn pre_tool_use_output(floor: &super::floor::Floor) -> Option<PreToolUseOutput> {
    use super::floor::Answer;
    let decision = match floor.answer {
        Answer::Ask => "ask",
        Answer::Deny => "deny",
        Answer::Pass => return None,
    };
    Some(PreToolUseOutput {
        hook_specific_output: PreToolUseSpecific {
            hook_event_name: "PreToolUse",
            permission_decision: decision,
            permission_decision_reason: floor.reason.clone(),
        },
    })
}

/// The hook's answer, its fields in the order Claude Code documents them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookOutput {
    #[serde(rename = "hookSpecificOutput")]
    pub hook_specific_output: Specific,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Specific {
    #[serde(rename = "hookEventName")]
    pub hook_event_name: &'static str,
    pub decision: Behavior,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Behavior {
    pub behavior: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What the hook prints for a decision: `None` for no decision (print nothing).
pub fn hook_output(decision: &Decision) -> Option<HookOutput> {
    let behavior = match decision.decision {
        Verdict::Allow => Behavior {
            behavior: "allow",
            message: None,
        },
        Verdict::Deny => Behavior {
            behavior: "deny",
            message: Some(
                decision
                    .message
                    .clone()
                    .unwrap_or_else(|| format!("denied by autoctl policy rule {}", decision.rule)),
            ),
        },
        Verdict::NoDecision => return None,
    };
    Some(HookOutput {
        hook_specific_output: Specific {
            hook_event_name: "PermissionRequest",
            decision: behavior,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_read_and_answered_exactly() {
        let call = parse(include_bytes!(
            "../../tests/fixtures/hook/claude-code/permission/05-PermissionRequest-Bash.json"
        ))
        .unwrap();
        assert_eq!(call.tool_name, "Bash");
        assert_eq!(call.tool_input["command"], "npm test");
        assert_eq!(call.cwd.as_deref(), Some("/home/dev/proj"));
        let allow = Decision {
            decision: Verdict::Allow,
            rule: "runner".into(),
            reason: String::new(),
            message: None,
        };
        assert_eq!(
            serde_json::to_string(&hook_output(&allow).unwrap()).unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#
        );
        let pre = parse_event(
            include_bytes!("../../tests/fixtures/hook/claude-code/reference/PreToolUse.json"),
            "PreToolUse",
        )
        .unwrap();
        assert_eq!(pre.tool_input["command"], "rm -rf build");
        assert_eq!(pre.permission_mode.as_deref(), Some("default"));
        let floor = super::super::floor::judge(
            &super::super::Policy::builtin(),
            &pre.tool_name,
            &pre.tool_input,
            &super::super::Context::default(),
            super::super::floor::Attendance::Attended,
        );
        let printed = serde_json::to_string(&pre_tool_use_output(&floor).unwrap()).unwrap();
        assert!(
            printed.starts_with(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"autoctl policy (destructive:rm): rm -rf build: rm deletes files"#
            ),
            "{printed}"
        );
        for bad in [
            &b"[]"[..],
            b"{\"tool_name\":1}",
            b"{\"tool_name\":\"Bash\",\"tool_input\":\"rm\"}",
            b"{\"tool_name\":\"Bash\",\"tool_name\":\"Read\"}",
            b"{\"tool_name\":\"Bash\",\"hook_event_name\":\"PreToolUse\"}",
            b"\xff",
            b"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}

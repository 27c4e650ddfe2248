//! A tool call as Claude Code's PermissionRequest hook hands it over, and the hook's answer.
//!
//! Input (stdin, one JSON object; recorded from Claude Code 2.1.332 under
//! `tests/fixtures/hook/claude-code/`): `session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `hook_event_name` ("PermissionRequest"), `tool_name`, `tool_input`,
//! `permission_suggestions`. Output (stdout): for an allow
//! `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`,
//! for a deny the same with `"behavior":"deny","message":…` (the model sees the message), and
//! nothing at all for no decision, so Claude Code shows its own prompt.
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

/// Read a payload: a JSON object with a `tool_name` string and a `tool_input` object (a
/// missing input is `{}`); duplicate keys are refused.
pub fn parse(bytes: &[u8]) -> Result<Call, String> {
    let value = crate::protocol::document::parse_json(bytes).map_err(|p| p.to_string())?;
    from_value(value)
}

/// [`parse`] from an already parsed value (the batch reader parses each line once).
pub fn from_value(value: Value) -> Result<Call, String> {
    if !value.is_object() {
        return Err("the payload is not a JSON object".to_string());
    }
    let call: Call = serde_json::from_value(value).map_err(|err| format!("payload: {err}"))?;
    if !(call.tool_input.is_object() || call.tool_input.is_null()) {
        return Err("tool_input is not an object".to_string());
    }
    if let Some(event) = &call.hook_event_name
        && event != "PermissionRequest"
    {
        return Err(format!(
            "hook_event_name is {event:?}: this command answers PermissionRequest only"
        ));
    }
    Ok(call)
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

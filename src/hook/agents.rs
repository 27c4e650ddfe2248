//! Each agent's hook dialect, read into the one the typed state and the policy speak: Claude
//! Code's. Codex CLI and Gemini CLI run hook commands the way Claude Code does (JSON on stdin,
//! JSON on stdout, exit 0), with their own event names, fields and tool names; this module is
//! the one place that knows them, so `hook event`, `hook stop` and the doors of the policy stay
//! agent-neutral.
//!
//! What each agent sends (recorded from the real agents under `tests/fixtures/hook/codex/` and
//! `tests/fixtures/hook/gemini/`):
//!
//! | Claude Code | Codex CLI 0.171 | Gemini CLI 0.61 |
//! | --- | --- | --- |
//! | `UserPromptSubmit` | same | `BeforeAgent` (`prompt`) |
//! | `PreToolUse` | same (`tool_name` `Bash` for every shell call, `apply_patch`) | `BeforeTool` (`run_shell_command`, `write_file`, `replace`, ...) |
//! | `PermissionRequest` | same (`Bash` only: a shell call leaving the sandbox, network access) | none: `Notification` `ToolPermission` says a box is up |
//! | `PostToolUse(Failure)` | `PostToolUse` | `AfterTool` (`tool_response.error` on a failure) |
//! | `Stop` (`last_assistant_message`) | same | `AfterAgent` (`prompt_response`) |
//! | `PreCompact`/`PostCompact` | same | `PreCompress`: fired before every check of the context, compacting or not; only `manual` (`/compress`) is a compaction |
//! | `SessionStart`/`SessionEnd` | same (`SessionEnd` reason `other`) | same (`SessionEnd` reason `exit`) |
//! | — | `Interrupt` (Esc ended the turn) | — |
//!
//! Codex adds `turn_id` and `model` to its payloads; Gemini adds `timestamp`. Both put the
//! path of their own transcript (a Codex rollout, a Gemini chat log) in `transcript_path`: it
//! is not Claude Code's transcript, so it is not read as one ([`event_payload`] drops
//! Gemini's and keeps Codex's as `rollout_path`, which the supervisor reads for the usage limit
//! no Codex hook reports: [`crate::hook::rollout`]).
//!
//! How each agent takes an answer: Codex reads Claude Code's shapes (`hookSpecificOutput` with
//! `permissionDecision` at PreToolUse, `decision.behavior` at PermissionRequest, `decision:
//! "block"` at Stop) but refuses `permissionDecision: "ask"` at PreToolUse ("unsupported
//! permissionDecision:ask", and the tool then runs); Gemini reads `{"decision": "deny"|"ask",
//! "reason": ...}` at BeforeTool (`ask` draws its confirmation even in YOLO mode) and `decision:
//! "block"` (its alias of `deny`) at AfterAgent, whose `reason` becomes the next prompt.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::policy::{Context, Decision, Policy, Verdict};

/// The agent whose hook runs an autoctl command (`--agent` of `hook event`, `hook stop`, `hook
/// permission-request`, `hook pre-tool-use`; `hook install --agent`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum HookAgent {
    /// Claude Code
    #[default]
    Claude,
    /// OpenAI Codex CLI
    Codex,
    /// Google Gemini CLI
    Gemini,
}

/// Gemini CLI's own event names (none of them is Claude Code's or Codex's).
const GEMINI_EVENTS: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "PreCompress",
];

impl HookAgent {
    pub const ALL: [HookAgent; 3] = [HookAgent::Claude, HookAgent::Codex, HookAgent::Gemini];

    pub fn as_str(self) -> &'static str {
        match self {
            HookAgent::Claude => "claude",
            HookAgent::Codex => "codex",
            HookAgent::Gemini => "gemini",
        }
    }

    /// The agent's name for people.
    pub fn title(self) -> &'static str {
        match self {
            HookAgent::Claude => "Claude Code",
            HookAgent::Codex => "Codex CLI",
            HookAgent::Gemini => "Gemini CLI",
        }
    }

    pub fn parse(text: &str) -> Option<HookAgent> {
        HookAgent::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// The agent that sent `payload`, when the command line does not say (a hook wired by
    /// hand): Gemini's own event names or its `timestamp`, else Codex's `turn_id` or its
    /// transcript (a Codex rollout, `…/rollout-….jsonl`; Codex's SessionStart and SessionEnd
    /// carry no `turn_id`), else Claude Code.
    pub fn infer(payload: &Value) -> HookAgent {
        let text = |key: &str| payload.get(key).and_then(Value::as_str);
        let event = text("hook_event_name");
        if event.is_some_and(|e| GEMINI_EVENTS.contains(&e))
            || (event == Some("Notification")
                && text("notification_type") == Some("ToolPermission"))
            || text("timestamp").is_some()
        {
            return HookAgent::Gemini;
        }
        let rollout = text("transcript_path")
            .and_then(|p| std::path::Path::new(p).file_name())
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"));
        if text("turn_id").is_some() || rollout {
            HookAgent::Codex
        } else {
            HookAgent::Claude
        }
    }

    /// `given` when the command line says, else [`HookAgent::infer`].
    pub fn of(given: Option<HookAgent>, payload: &Value) -> HookAgent {
        given.unwrap_or_else(|| HookAgent::infer(payload))
    }

    /// The event that ends a turn, which a Stop-hook loop answers.
    pub fn stop_event(self) -> &'static str {
        match self {
            HookAgent::Claude | HookAgent::Codex => "Stop",
            HookAgent::Gemini => "AfterAgent",
        }
    }

    /// The event that comes before every tool call.
    pub fn pre_tool_event(self) -> &'static str {
        match self {
            HookAgent::Claude | HookAgent::Codex => "PreToolUse",
            HookAgent::Gemini => "BeforeTool",
        }
    }

    /// Whether the agent can be told "ask a person" before a tool runs. Codex 0.171 refuses
    /// `permissionDecision: "ask"` (and then runs the tool): its door denies instead.
    pub fn can_ask_before_tool(self) -> bool {
        self != HookAgent::Codex
    }
}

/// A payload in Claude Code's vocabulary, for the session's typed state and the Stop-hook
/// loop: Gemini's events renamed where they mean what Claude Code's do (`BeforeAgent` →
/// `UserPromptSubmit`, `BeforeTool` → `PreToolUse`, `AfterTool` → `PostToolUse` or
/// `PostToolUseFailure`, `AfterAgent` → `Stop` with `prompt_response` as
/// `last_assistant_message`, `Notification` `ToolPermission` → `permission_prompt`); events with
/// a meaning of their own keep their names (Gemini's `PreCompress`, Codex's `Interrupt`).
/// Another agent's `transcript_path` is not a Claude Code transcript: Codex's (its rollout)
/// becomes `rollout_path`, which the supervisor reads ([`crate::hook::rollout`]); Gemini's is
/// dropped.
pub fn event_payload(agent: HookAgent, mut value: Value) -> Value {
    let Some(object) = value.as_object_mut() else {
        return value;
    };
    if agent == HookAgent::Claude {
        return value;
    }
    if let Some(path) = object.remove("transcript_path")
        && agent == HookAgent::Codex
    {
        object.insert("rollout_path".to_string(), path);
    }
    if agent == HookAgent::Gemini {
        gemini_event(object);
    }
    value
}

fn gemini_event(object: &mut Map<String, Value>) {
    let event = object
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let renamed = match event.as_str() {
        "BeforeAgent" => Some("UserPromptSubmit"),
        "BeforeTool" => Some("PreToolUse"),
        "AfterTool" => Some(if tool_failed(object.get("tool_response")) {
            "PostToolUseFailure"
        } else {
            "PostToolUse"
        }),
        "AfterAgent" => {
            if !object.contains_key("last_assistant_message")
                && let Some(text) = object.get("prompt_response").cloned()
            {
                object.insert("last_assistant_message".to_string(), text);
            }
            Some("Stop")
        }
        "Notification" => {
            if object.get("notification_type").and_then(Value::as_str) == Some("ToolPermission") {
                object.insert(
                    "notification_type".to_string(),
                    Value::String("permission_prompt".to_string()),
                );
            }
            None
        }
        _ => None,
    };
    if let Some(name) = renamed {
        object.insert(
            "hook_event_name".to_string(),
            Value::String(name.to_string()),
        );
    }
}

/// A parsed payload in Claude Code's vocabulary (see [`event_payload`]), and whose it is: what
/// [`canonical_bytes`] does for a door that has the payload parsed already (it reads it once).
pub fn canonical_value(given: Option<HookAgent>, value: Value) -> (HookAgent, Value) {
    if given == Some(HookAgent::Claude) || !value.is_object() {
        return (given.unwrap_or_default(), value);
    }
    let agent = HookAgent::of(given, &value);
    (agent, event_payload(agent, value))
}

/// The bytes of a payload in Claude Code's vocabulary (see [`event_payload`]), and whose it
/// is. Claude Code's own bytes pass through untouched; bytes that are not a JSON object are
/// passed on as they are, for the reader to name what is wrong.
pub fn canonical_bytes(given: Option<HookAgent>, bytes: &[u8]) -> (HookAgent, Cow<'_, [u8]>) {
    if given == Some(HookAgent::Claude) {
        return (HookAgent::Claude, Cow::Borrowed(bytes));
    }
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return (given.unwrap_or_default(), Cow::Borrowed(bytes));
    };
    if !value.is_object() {
        return (given.unwrap_or_default(), Cow::Borrowed(bytes));
    }
    let agent = HookAgent::of(given, &value);
    if agent == HookAgent::Claude {
        return (agent, Cow::Borrowed(bytes));
    }
    match serde_json::to_vec(&event_payload(agent, value)) {
        Ok(canonical) => (agent, Cow::Owned(canonical)),
        Err(_) => (agent, Cow::Borrowed(bytes)),
    }
}

/// Gemini's `tool_response` carries `error` when the tool failed.
fn tool_failed(response: Option<&Value>) -> bool {
    match response.and_then(|r| r.get("error")) {
        None | Some(Value::Null) => false,
        Some(Value::String(text)) => !text.trim().is_empty(),
        Some(Value::Bool(failed)) => *failed,
        Some(_) => true,
    }
}

/// The calls the policy judges for one tool call of `agent`, in Claude Code's tool vocabulary
/// (`Bash` `{command}`, `Write`/`Edit` `{file_path}`, `Read` `{file_path}`, `Glob`/`Grep`
/// `{pattern, path}`, `LS` `{path}`, `AskUserQuestion`, `ExitPlanMode`, `mcp__…`). A call that
/// touches several files (a Codex patch) is several calls: the door allows it only when every
/// one is allowed. A tool the policy has no name for keeps its own name (no rule proves it
/// harmless).
pub fn policy_calls(agent: HookAgent, tool: &str, input: &Value) -> Vec<(String, Value)> {
    match agent {
        HookAgent::Claude => vec![(tool.to_string(), input.clone())],
        HookAgent::Codex => codex_calls(tool, input),
        HookAgent::Gemini => gemini_calls(tool, input),
    }
}

/// Decide one tool call of `agent` with the one policy every door uses: each of its
/// [`policy_calls`] is decided, a deny of any is the answer, then a call named destructive,
/// then any call nothing proves harmless; the call is allowed only when every part is.
pub fn decide(
    policy: &Policy,
    agent: HookAgent,
    tool: &str,
    input: &Value,
    ctx: &Context,
) -> Decision {
    let mut allowed: Vec<Decision> = Vec::new();
    let mut undecided: Option<Decision> = None;
    for (tool, input) in policy_calls(agent, tool, input) {
        let decision = crate::policy::decide(policy, &tool, &input, ctx);
        match decision.decision {
            Verdict::Deny => return decision,
            Verdict::NoDecision => {
                let destructive = decision.rule.starts_with("destructive:");
                let replace = match &undecided {
                    None => true,
                    Some(held) => destructive && !held.rule.starts_with("destructive:"),
                };
                if replace {
                    undecided = Some(decision);
                }
            }
            Verdict::Allow => allowed.push(decision),
        }
    }
    if let Some(decision) = undecided {
        return decision;
    }
    match allowed.len() {
        1 => allowed.remove(0),
        _ => Decision {
            decision: Verdict::Allow,
            rule: allowed
                .iter()
                .map(|d| d.rule.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            reason: allowed
                .iter()
                .map(|d| d.reason.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            message: None,
        },
    }
}

fn codex_calls(tool: &str, input: &Value) -> Vec<(String, Value)> {
    let text = |name: &str| input.get(name).and_then(Value::as_str);
    let patch = match tool {
        "apply_patch" => text("command")
            .or_else(|| text("input"))
            .or_else(|| text("patch")),
        // Codex runs a patch given to its shell tool itself (`apply_patch <<'EOF' …`).
        "Bash" => text("command").filter(|c| is_apply_patch_command(c)),
        _ => None,
    };
    if let Some(patch) = patch {
        return patch_calls(patch);
    }
    if let Some(rest) = tool.strip_prefix("mcp__") {
        return vec![(format!("mcp__{rest}"), input.clone())];
    }
    vec![(tool.to_string(), input.clone())]
}

/// A shell command that is Codex's patch tool run through its shell (`apply_patch <<'EOF'`).
fn is_apply_patch_command(command: &str) -> bool {
    let first = command.trim_start();
    (first.starts_with("apply_patch") || first.starts_with("applypatch"))
        && first.contains("*** Begin Patch")
}

/// The files a Codex patch adds, updates, moves or deletes: a write of each (a deletion is
/// judged as `rm -- PATH`, as the same change made with the shell would be).
fn patch_calls(patch: &str) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end();
        let write = line
            .strip_prefix("*** Add File: ")
            .or_else(|| line.strip_prefix("*** Update File: "))
            .or_else(|| line.strip_prefix("*** Move to: "));
        if let Some(path) = write {
            calls.push((
                "Write".to_string(),
                serde_json::json!({ "file_path": path.trim() }),
            ));
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            calls.push((
                "Bash".to_string(),
                serde_json::json!({ "command": format!("rm -- {}", crate::shell::quote_if_needed(path.trim())) }),
            ));
        }
    }
    if calls.is_empty() {
        // A patch naming no file is not one the policy can read: nothing proves it harmless.
        calls.push(("apply_patch".to_string(), serde_json::json!({})));
    }
    calls
}

fn gemini_calls(tool: &str, input: &Value) -> Vec<(String, Value)> {
    if tool == "read_many_files" {
        // Several paths or globs: a read of each.
        let paths: Vec<&str> = ["paths", "include"]
            .iter()
            .filter_map(|k| input.get(*k).and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if paths.is_empty() {
            // A read of nothing the policy can check.
            return vec![("read_many_files".to_string(), serde_json::json!({}))];
        }
        return paths
            .into_iter()
            .map(|p| ("Read".to_string(), serde_json::json!({ "file_path": p })))
            .collect();
    }
    vec![gemini_call(tool, input)]
}

fn gemini_call(tool: &str, input: &Value) -> (String, Value) {
    let field = |name: &str| input.get(name).cloned();
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value.filter(|v| !v.is_null()) {
            out.insert(key.to_string(), value);
        }
    };
    let name = match tool {
        "run_shell_command" => {
            // `dir_path`: the directory the command runs in, relative to the project.
            let command = input.get("command").and_then(Value::as_str).unwrap_or("");
            let command = match input.get("dir_path").and_then(Value::as_str) {
                Some(dir) if !dir.trim().is_empty() && dir.trim() != "." => {
                    format!("cd {} && {command}", crate::shell::quote_if_needed(dir))
                }
                _ => command.to_string(),
            };
            put("command", Some(Value::String(command)));
            "Bash"
        }
        "write_file" => {
            put("file_path", field("file_path"));
            "Write"
        }
        "replace" => {
            put("file_path", field("file_path"));
            "Edit"
        }
        "read_file" => {
            put(
                "file_path",
                field("file_path").or_else(|| field("absolute_path")),
            );
            "Read"
        }
        "list_directory" => {
            put("path", field("dir_path").or_else(|| field("path")));
            "LS"
        }
        "glob" => {
            put("pattern", field("pattern"));
            put("path", field("dir_path").or_else(|| field("path")));
            "Glob"
        }
        "grep_search" | "search_file_content" => {
            put("pattern", field("pattern"));
            put("path", field("dir_path").or_else(|| field("path")));
            put(
                "glob",
                field("include").or_else(|| field("include_pattern")),
            );
            "Grep"
        }
        "ask_user" => return ("AskUserQuestion".to_string(), input.clone()),
        "exit_plan_mode" => return ("ExitPlanMode".to_string(), input.clone()),
        _ if tool.starts_with("mcp_") => {
            return (format!("mcp__{}", &tool["mcp_".len()..]), input.clone());
        }
        _ => return (tool.to_string(), input.clone()),
    };
    (name.to_string(), Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_agent_is_inferred_from_the_payload() {
        assert_eq!(
            HookAgent::infer(&json!({"hook_event_name":"BeforeTool"})),
            HookAgent::Gemini
        );
        assert_eq!(
            HookAgent::infer(
                &json!({"hook_event_name":"Notification","notification_type":"ToolPermission"})
            ),
            HookAgent::Gemini
        );
        assert_eq!(
            HookAgent::infer(&json!({"hook_event_name":"Stop","turn_id":"t"})),
            HookAgent::Codex
        );
        assert_eq!(
            HookAgent::infer(
                &json!({"hook_event_name":"SessionEnd","transcript_path":"/h/.codex/sessions/2026/11/28/rollout-2026-11-28T09-36-27-01a2.jsonl"})
            ),
            HookAgent::Codex
        );
        assert_eq!(
            HookAgent::infer(
                &json!({"hook_event_name":"SessionStart","timestamp":"2026-11-28T09:33:23.338Z"})
            ),
            HookAgent::Gemini
        );
        assert_eq!(
            HookAgent::infer(
                &json!({"hook_event_name":"Stop","transcript_path":"/h/.claude/projects/p/s.jsonl"})
            ),
            HookAgent::Claude
        );
        assert_eq!(
            HookAgent::of(Some(HookAgent::Codex), &json!({})),
            HookAgent::Codex
        );
    }

    #[test]
    fn gemini_events_read_as_claude_codes() {
        let stop = event_payload(
            HookAgent::Gemini,
            json!({"hook_event_name":"AfterAgent","prompt_response":"Done.","transcript_path":"/t"}),
        );
        assert_eq!(stop["hook_event_name"], "Stop");
        assert_eq!(stop["last_assistant_message"], "Done.");
        assert!(stop.get("transcript_path").is_none());
        let failed = event_payload(
            HookAgent::Gemini,
            json!({"hook_event_name":"AfterTool","tool_response":{"error":"exit 1"}}),
        );
        assert_eq!(failed["hook_event_name"], "PostToolUseFailure");
        let ok = event_payload(
            HookAgent::Gemini,
            json!({"hook_event_name":"AfterTool","tool_response":{"llmContent":"x","error":null}}),
        );
        assert_eq!(ok["hook_event_name"], "PostToolUse");
        let note = event_payload(
            HookAgent::Gemini,
            json!({"hook_event_name":"Notification","notification_type":"ToolPermission"}),
        );
        assert_eq!(note["notification_type"], "permission_prompt");
        let compress = event_payload(
            HookAgent::Gemini,
            json!({"hook_event_name":"PreCompress","trigger":"auto"}),
        );
        assert_eq!(compress["hook_event_name"], "PreCompress");
        // Codex's transcript is its rollout, kept under its own name for the supervisor.
        let codex = event_payload(
            HookAgent::Codex,
            json!({"hook_event_name":"Stop","transcript_path":"/h/rollout-1.jsonl"}),
        );
        assert!(codex.get("transcript_path").is_none());
        assert_eq!(codex["rollout_path"], "/h/rollout-1.jsonl");
        // Claude Code's payloads pass untouched, transcript and all.
        let claude = json!({"hook_event_name":"Stop","transcript_path":"/t"});
        assert_eq!(event_payload(HookAgent::Claude, claude.clone()), claude);
        // Not an object: left as it is for the caller's own error.
        assert_eq!(event_payload(HookAgent::Gemini, json!([1])), json!([1]));
    }

    #[test]
    fn codex_patches_are_writes_of_their_files() {
        let patch = "*** Begin Patch\n*** Add File: hello.py\n+print('hi')\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n";
        let calls = policy_calls(HookAgent::Codex, "apply_patch", &json!({"command": patch}));
        assert_eq!(
            calls,
            vec![
                ("Write".into(), json!({"file_path":"hello.py"})),
                ("Write".into(), json!({"file_path":"src/a.rs"})),
                ("Write".into(), json!({"file_path":"src/b.rs"})),
                ("Bash".into(), json!({"command":"rm -- old.txt"})),
            ]
        );
        // The same patch through Codex's shell tool (as recorded from 0.171).
        let shell = format!("apply_patch <<'EOF'\n{patch}EOF\n");
        assert_eq!(
            policy_calls(HookAgent::Codex, "Bash", &json!({"command": shell})),
            calls
        );
        // A plain command stays a command; an empty patch proves nothing.
        assert_eq!(
            policy_calls(HookAgent::Codex, "Bash", &json!({"command":"ls"})),
            vec![("Bash".into(), json!({"command":"ls"}))]
        );
        assert_eq!(
            policy_calls(HookAgent::Codex, "apply_patch", &json!({"command":"junk"})),
            vec![("apply_patch".into(), json!({}))]
        );
    }

    #[test]
    fn gemini_tools_read_as_claude_codes() {
        let call = |tool: &str, input: Value| {
            policy_calls(HookAgent::Gemini, tool, &input)
                .into_iter()
                .next()
                .unwrap()
        };
        assert_eq!(
            call(
                "run_shell_command",
                json!({"command":"rm -rf build","description":"clean"})
            ),
            ("Bash".into(), json!({"command":"rm -rf build"}))
        );
        assert_eq!(
            call(
                "run_shell_command",
                json!({"command":"make test","dir_path":"sub dir"})
            ),
            (
                "Bash".into(),
                json!({"command":"cd 'sub dir' && make test"})
            )
        );
        assert_eq!(
            call("write_file", json!({"file_path":"a.py","content":"x"})),
            ("Write".into(), json!({"file_path":"a.py"}))
        );
        assert_eq!(
            call(
                "replace",
                json!({"file_path":"a.py","old_string":"x","new_string":"y"})
            ),
            ("Edit".into(), json!({"file_path":"a.py"}))
        );
        assert_eq!(
            call("list_directory", json!({"dir_path":"src"})),
            ("LS".into(), json!({"path":"src"}))
        );
        assert_eq!(
            call(
                "grep_search",
                json!({"pattern":"TODO","dir_path":".","include":"*.rs"})
            ),
            (
                "Grep".into(),
                json!({"pattern":"TODO","path":".","glob":"*.rs"})
            )
        );
        assert_eq!(
            policy_calls(
                HookAgent::Gemini,
                "read_many_files",
                &json!({"include":["a.md","b/*.md"]})
            ),
            vec![
                ("Read".into(), json!({"file_path":"a.md"})),
                ("Read".into(), json!({"file_path":"b/*.md"}))
            ]
        );
        assert_eq!(call("ask_user", json!({})).0, "AskUserQuestion");
        assert_eq!(
            call("mcp_github_create_issue", json!({})).0,
            "mcp__github_create_issue"
        );
        assert_eq!(call("web_fetch", json!({"prompt":"x"})).0, "web_fetch");
    }

    fn recorded(text: &str) -> (String, Value) {
        let payload: Value = serde_json::from_str(text).unwrap();
        (
            payload["tool_name"].as_str().unwrap().to_string(),
            payload["tool_input"].clone(),
        )
    }

    fn project() -> Context {
        Context {
            cwd: Some("/home/dev/proj".into()),
            project: Some("/home/dev/proj".into()),
            home: Some("/home/dev".into()),
            protected: Vec::new(),
            git_top: true,
        }
    }

    /// The tool calls recorded from the real agents, through the one policy.
    #[test]
    fn recorded_calls_get_the_answers_claude_codes_would() {
        let policy = Policy::builtin();
        let (tool, input) = recorded(include_str!(
            "../../tests/fixtures/hook/codex/session/07-PreToolUse-Bash.json"
        ));
        let patch = decide(&policy, HookAgent::Codex, &tool, &input, &project());
        assert_eq!(
            (patch.decision, patch.rule.as_str()),
            (Verdict::Allow, "write-in-project"),
            "Codex's apply_patch of hello.py is a write in the project: {patch:?}"
        );
        let (tool, input) = recorded(include_str!(
            "../../tests/fixtures/hook/codex/bypass/03-PreToolUse-Bash.json"
        ));
        let rm = decide(&policy, HookAgent::Codex, &tool, &input, &project());
        assert_eq!(rm.decision, Verdict::NoDecision);
        assert!(rm.rule.starts_with("destructive:"), "{rm:?}");
        let (tool, input) = recorded(include_str!(
            "../../tests/fixtures/hook/gemini/yolo/04-BeforeTool-run_shell_command.json"
        ));
        let rm = decide(&policy, HookAgent::Gemini, &tool, &input, &project());
        assert!(rm.rule.starts_with("destructive:"), "{rm:?}");
        let (tool, input) = recorded(include_str!(
            "../../tests/fixtures/hook/gemini/session/10-BeforeTool-write_file.json"
        ));
        let write = decide(&policy, HookAgent::Gemini, &tool, &input, &project());
        assert_eq!(write.decision, Verdict::Allow, "{write:?}");
        // With on_destructive deny, the destructive part of a patch denies the whole call.
        let deny = Policy {
            on_destructive: crate::policy::OnDestructive::Deny,
            ..Policy::builtin()
        };
        let patch = "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: .git/hooks/pre-commit\n+x\n*** End Patch\n";
        let mixed = decide(
            &deny,
            HookAgent::Codex,
            "apply_patch",
            &json!({"command": patch}),
            &project(),
        );
        assert_eq!(mixed.decision, Verdict::Deny, "{mixed:?}");
    }
}

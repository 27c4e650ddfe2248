//! One turn over Codex's app-server, as a pure core: [`Turn::start`] and [`Turn::receive`]
//! take the app-server's messages in and give [`Effect`]s out — messages to send, the typed
//! state to record (as hook payloads in Claude Code's vocabulary, so the one session state
//! machine reads them: [`crate::hook::session`]), rate limits, lines for a person, approvals to
//! answer, and the end of the turn.
//!
//! The conversation (Codex 0.171, recorded under `tests/fixtures/app-server/codex/`):
//!
//! 1. `initialize` → its result; the `initialized` notification;
//! 2. `thread/resume {threadId}` (the pane's thread from the step before) or `thread/start {cwd,
//!    approvalPolicy, sandbox}` → `result.thread.id`;
//! 3. `turn/start {threadId, input: [{type: "text", text}]}`;
//! 4. notifications until `turn/completed`: `turn/started`, `item/started` / `item/completed`
//!    (`agentMessage` with `text`, `commandExecution` with `command` and `status`, `fileChange`
//!    with `changes`), `account/rateLimits/updated` (`primary`/`secondary` windows with
//!    `usedPercent`, `windowDurationMins`, `resetsAt`), `error` (`codexErrorInfo`, `willRetry`);
//!    and requests the client must answer: `item/commandExecution/requestApproval` and
//!    `item/fileChange/requestApproval` (`{decision: "accept" | "decline"}`).
//!
//! Approvals go through the one policy (the caller's `decide`): a call a rule proves harmless is
//! accepted, one a deny rule or the unattended floor refuses is declined, and anything else is
//! left to a person ([`Effect::Ask`]; the caller answers with [`Turn::answer`]). Nothing else is
//! ever accepted on the agent's behalf: no "for the session" and no policy amendment.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::hook::agents::{self, HookAgent};
use crate::policy::{Decision, Verdict};

/// What the turn is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The working directory of a new thread (the project).
    pub cwd: String,
    /// The step's text.
    pub prompt: String,
    /// The thread the pane's previous step ran in, resumed when given.
    pub resume: Option<String>,
    /// Codex's approval policy for a new thread (`on-request`, `untrusted`, `never`).
    pub approval_policy: String,
    /// Codex's sandbox for a new thread (`read-only`, `workspace-write`, `danger-full-access`).
    pub sandbox: String,
    /// A destructive call is declined instead of asked: nobody will answer.
    pub unattended: bool,
}

/// How the turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The turn completed; the agent's last message.
    Completed(Option<String>),
    /// The turn failed: the error's kind (as Claude Code's StopFailure names them) and
    /// Codex's message.
    Failed { kind: String, message: String },
    /// A person (or autoctl) interrupted it.
    Interrupted,
}

/// An approval the policy left to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The JSON-RPC id to answer.
    pub id: Value,
    /// What the agent asks to do, for a person (the command, or the files a patch changes).
    pub what: String,
    /// The agent's reason, when it gave one.
    pub reason: Option<String>,
    /// The policy's rule and reason for not deciding.
    pub rule: String,
}

/// What the caller does for the core.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Write this message to the app-server.
    Send(Value),
    /// Record this payload (Claude Code's vocabulary) as the session's typed state; with the
    /// PermissionRequest outcome where there is one.
    Record(Value, Option<crate::hook::session::Permission>),
    /// Record the rate limits, shaped as Claude Code's status line gives them
    /// (`{"rate_limits": {"five_hour": {...}, "seven_day": {...}}}`).
    Limits(Value),
    /// Log a policy decision on an approval (tool, input, decision).
    Decided {
        tool: String,
        input: Value,
        decision: Decision,
    },
    /// A line for the person watching the pane.
    Say(String),
    /// Ask the person; answer with [`Turn::answer`].
    Ask(Question),
    /// The turn is over.
    Done(TurnEnd),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Initializing,
    OpeningThread { resuming: bool },
    StartingTurn,
    Running,
    Done,
}

/// One turn's state.
#[derive(Debug, Clone)]
pub struct Turn {
    spec: Spec,
    phase: Phase,
    thread: Option<String>,
    turn: Option<String>,
    /// Items seen started (their id → the item), for approvals that name only the item.
    items: BTreeMap<String, Value>,
    last_message: Option<String>,
    /// The last error that Codex will not retry.
    failure: Option<(String, String)>,
}

/// JSON-RPC ids of the three requests autoctl makes.
const INITIALIZE: u64 = 1;
const THREAD: u64 = 2;
const TURN: u64 = 3;

impl Turn {
    pub fn new(spec: Spec) -> Turn {
        Turn {
            spec,
            phase: Phase::Initializing,
            thread: None,
            turn: None,
            items: BTreeMap::new(),
            last_message: None,
            failure: None,
        }
    }

    /// The thread the turn runs in, once known (the next step resumes it).
    pub fn thread(&self) -> Option<&str> {
        self.thread.as_deref()
    }

    /// Whether the turn is over.
    pub fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The first message: `initialize`.
    pub fn start(&mut self) -> Vec<Effect> {
        vec![Effect::Send(request(
            INITIALIZE,
            "initialize",
            json!({"clientInfo": {"name": "autoctl", "title": "autoctl", "version": env!("CARGO_PKG_VERSION")}}),
        ))]
    }

    /// One message from the app-server. `decide` is the policy's answer for one tool call of
    /// Codex (tool name and input as its hooks name them).
    pub fn receive(
        &mut self,
        message: &Value,
        decide: &mut dyn FnMut(&str, &Value) -> Decision,
    ) -> Vec<Effect> {
        if self.phase == Phase::Done {
            return Vec::new();
        }
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        match (method, id) {
            (Some(method), Some(id)) => self.server_request(method, id.clone(), message, decide),
            (Some(method), None) => self.notification(method, message.get("params")),
            (None, Some(id)) => self.response(id, message),
            (None, None) => Vec::new(),
        }
    }

    /// A person's answer to an [`Effect::Ask`]: accept or decline, nothing wider.
    pub fn answer(&mut self, question: &Question, allow: bool) -> Vec<Effect> {
        let outcome = if allow {
            crate::hook::session::Permission::Allowed
        } else {
            crate::hook::session::Permission::Denied
        };
        vec![
            Effect::Send(
                json!({"jsonrpc": "2.0", "id": question.id, "result": {"decision": if allow { "accept" } else { "decline" }}}),
            ),
            Effect::Record(
                self.event("PermissionRequest", json!({"tool_name": "Bash"})),
                Some(outcome),
            ),
        ]
    }

    fn response(&mut self, id: &Value, message: &Value) -> Vec<Effect> {
        if let Some(error) = message.get("error") {
            let text = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message")
                .to_string();
            if id.as_u64() == Some(THREAD)
                && self.phase == (Phase::OpeningThread { resuming: true })
            {
                // The thread is gone (archived, another CODEX_HOME): start a new one.
                self.phase = Phase::OpeningThread { resuming: false };
                return vec![
                    Effect::Say(format!(
                        "autoctl: cannot resume thread {} ({text}); starting a new one",
                        self.spec.resume.as_deref().unwrap_or("?")
                    )),
                    Effect::Send(self.thread_start()),
                ];
            }
            return self.finish(TurnEnd::Failed {
                kind: "app_server".to_string(),
                message: format!("the app-server refused request {id}: {text}"),
            });
        }
        let result = message.get("result").cloned().unwrap_or(Value::Null);
        match (id.as_u64(), self.phase) {
            (Some(INITIALIZE), Phase::Initializing) => {
                let resuming = self.spec.resume.is_some();
                self.phase = Phase::OpeningThread { resuming };
                let open = match &self.spec.resume {
                    Some(thread) => request(THREAD, "thread/resume", json!({"threadId": thread})),
                    None => self.thread_start(),
                };
                vec![
                    Effect::Send(notification("initialized")),
                    Effect::Send(open),
                ]
            }
            (Some(THREAD), Phase::OpeningThread { resuming }) => {
                let Some(thread) = result
                    .pointer("/thread/id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                else {
                    return self.finish(TurnEnd::Failed {
                        kind: "app_server".to_string(),
                        message: "the app-server opened no thread".to_string(),
                    });
                };
                self.thread = Some(thread.clone());
                self.phase = Phase::StartingTurn;
                let source = if resuming { "resume" } else { "startup" };
                vec![
                    Effect::Record(self.event("SessionStart", json!({"source": source})), None),
                    Effect::Say(format!("autoctl: Codex thread {thread} ({source})")),
                    Effect::Send(request(
                        TURN,
                        "turn/start",
                        json!({"threadId": thread, "input": [{"type": "text", "text": self.spec.prompt}]}),
                    )),
                ]
            }
            (Some(TURN), Phase::StartingTurn) => {
                self.turn = result
                    .pointer("/turn/id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.phase = Phase::Running;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn thread_start(&self) -> Value {
        request(
            THREAD,
            "thread/start",
            json!({"cwd": self.spec.cwd, "approvalPolicy": self.spec.approval_policy, "sandbox": self.spec.sandbox}),
        )
    }

    fn notification(&mut self, method: &str, params: Option<&Value>) -> Vec<Effect> {
        let params = params.cloned().unwrap_or(Value::Null);
        match method {
            "turn/started" => {
                if let Some(turn) = params.pointer("/turn/id").and_then(Value::as_str) {
                    self.turn = Some(turn.to_string());
                }
                self.phase = Phase::Running;
                vec![Effect::Record(
                    self.event("UserPromptSubmit", json!({"prompt": self.spec.prompt})),
                    None,
                )]
            }
            "item/started" => self.item_started(params.get("item")),
            "item/completed" => self.item_completed(params.get("item")),
            "account/rateLimits/updated" => match limits(params.get("rateLimits")) {
                Some(limits) => vec![Effect::Limits(limits)],
                None => Vec::new(),
            },
            "error" => {
                let message = params
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("an error")
                    .to_string();
                if params.get("willRetry").and_then(Value::as_bool) == Some(true) {
                    return vec![Effect::Say(format!("codex (retrying): {message}"))];
                }
                let kind = error_kind(params.pointer("/error/codexErrorInfo"));
                self.failure = Some((kind, message.clone()));
                vec![Effect::Say(format!("codex: {message}"))]
            }
            "turn/completed" => {
                let turn = params.get("turn").cloned().unwrap_or(Value::Null);
                match turn.get("status").and_then(Value::as_str) {
                    Some("completed") => {
                        let message = self.last_message.clone();
                        let mut effects = vec![Effect::Record(
                            self.event(
                                "Stop",
                                json!({"stop_hook_active": false, "last_assistant_message": message}),
                            ),
                            None,
                        )];
                        effects.extend(self.finish(TurnEnd::Completed(message)));
                        effects
                    }
                    Some("interrupted") => {
                        let mut effects =
                            vec![Effect::Record(self.event("Interrupt", json!({})), None)];
                        effects.extend(self.finish(TurnEnd::Interrupted));
                        effects
                    }
                    _ => {
                        let (kind, message) = self.failure.clone().unwrap_or_else(|| {
                            (
                                error_kind(turn.pointer("/error/codexErrorInfo")),
                                turn.pointer("/error/message")
                                    .and_then(Value::as_str)
                                    .unwrap_or("the turn failed")
                                    .to_string(),
                            )
                        });
                        let mut effects = vec![Effect::Record(
                            self.event(
                                "StopFailure",
                                json!({"error": kind, "last_assistant_message": message}),
                            ),
                            None,
                        )];
                        effects.extend(self.finish(TurnEnd::Failed { kind, message }));
                        effects
                    }
                }
            }
            _ => Vec::new(),
        }
    }

    fn item_started(&mut self, item: Option<&Value>) -> Vec<Effect> {
        let Some(item) = item else { return Vec::new() };
        let id = item.get("id").and_then(Value::as_str).unwrap_or("");
        self.items.insert(id.to_string(), item.clone());
        match item.get("type").and_then(Value::as_str) {
            Some("commandExecution") => {
                let command = command_of(item);
                vec![
                    Effect::Say(format!("codex runs: {command}")),
                    Effect::Record(
                        self.event(
                            "PreToolUse",
                            json!({"tool_name": "Bash", "tool_input": {"command": command}}),
                        ),
                        None,
                    ),
                ]
            }
            Some("fileChange") => {
                let paths = paths_of(item).join(", ");
                vec![
                    Effect::Say(format!("codex edits: {paths}")),
                    Effect::Record(
                        self.event(
                            "PreToolUse",
                            json!({"tool_name": "apply_patch", "tool_input": {"command": patch_of(item)}}),
                        ),
                        None,
                    ),
                ]
            }
            _ => Vec::new(),
        }
    }

    fn item_completed(&mut self, item: Option<&Value>) -> Vec<Effect> {
        let Some(item) = item else { return Vec::new() };
        match item.get("type").and_then(Value::as_str) {
            Some("agentMessage") => {
                let text = item.get("text").and_then(Value::as_str).unwrap_or("");
                if text.trim().is_empty() {
                    return Vec::new();
                }
                self.last_message = Some(text.to_string());
                vec![Effect::Say(format!("codex: {text}"))]
            }
            Some(kind @ ("commandExecution" | "fileChange")) => {
                let status = item.get("status").and_then(Value::as_str).unwrap_or("");
                let event = if status == "completed" {
                    "PostToolUse"
                } else {
                    "PostToolUseFailure"
                };
                let tool = if kind == "commandExecution" {
                    "Bash"
                } else {
                    "apply_patch"
                };
                vec![Effect::Record(
                    self.event(event, json!({"tool_name": tool})),
                    None,
                )]
            }
            _ => Vec::new(),
        }
    }

    /// An approval request: read as the policy's tool call ([`Turn::approval_call`]), judged
    /// by the policy, then answered at once (approved, declined) or put to the person. Any
    /// other request is a person's question: declined.
    fn server_request(
        &mut self,
        method: &str,
        id: Value,
        message: &Value,
        decide: &mut dyn FnMut(&str, &Value) -> Decision,
    ) -> Vec<Effect> {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let reason = params
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some((tool, input, what)) = self.approval_call(method, &params) else {
            // A question for the person (requestUserInput, an MCP elicitation, a wider
            // permission): not an approval a policy rule can prove harmless.
            return vec![
                Effect::Say(format!(
                    "autoctl: Codex asks something only a person can answer ({method}); declined"
                )),
                Effect::Send(
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("autoctl does not answer {method}: a person decides")}}),
                ),
            ];
        };
        let decision = agents_decide(tool, &input, decide);
        let mut effects = vec![Effect::Decided {
            tool: tool.to_string(),
            input: input.clone(),
            decision: decision.clone(),
        }];
        let destructive = decision.rule.starts_with("destructive:");
        let answer = match decision.decision {
            Verdict::Allow => Some(true),
            Verdict::Deny => Some(false),
            Verdict::NoDecision if destructive && self.spec.unattended => Some(false),
            Verdict::NoDecision => None,
        };
        let request = self.event(
            "PermissionRequest",
            json!({"tool_name": tool, "tool_input": input}),
        );
        match answer {
            Some(allow) => {
                effects.push(Effect::Say(format!(
                    "autoctl: {} {what} ({})",
                    if allow { "approved" } else { "declined" },
                    decision.rule
                )));
                effects.push(Effect::Send(json!({"jsonrpc": "2.0", "id": id, "result": {"decision": if allow { "accept" } else { "decline" }}})));
                let outcome = if allow {
                    crate::hook::session::Permission::Allowed
                } else {
                    crate::hook::session::Permission::Denied
                };
                effects.push(Effect::Record(request, Some(outcome)));
            }
            None => {
                effects.push(Effect::Record(
                    request,
                    Some(crate::hook::session::Permission::Asked),
                ));
                effects.push(Effect::Ask(Question {
                    id,
                    what,
                    reason,
                    rule: format!("{}: {}", decision.rule, decision.reason),
                }));
            }
        }
        effects
    }

    /// An approval request as the tool call the policy judges, with what it asks in words: a
    /// command is `Bash`, a file change `apply_patch` (its patch from the item the turn saw
    /// start, else the request's own). None: not an approval request.
    fn approval_call(&self, method: &str, params: &Value) -> Option<(&'static str, Value, String)> {
        match method {
            "item/commandExecution/requestApproval" | "execCommandApproval" => {
                let command = command_of(params);
                Some(("Bash", json!({"command": command}), command))
            }
            "item/fileChange/requestApproval" | "applyPatchApproval" => {
                let item = params
                    .get("itemId")
                    .and_then(Value::as_str)
                    .and_then(|i| self.items.get(i))
                    .cloned()
                    .unwrap_or_else(|| params.clone());
                let paths = paths_of(&item);
                Some((
                    "apply_patch",
                    json!({"command": patch_of(&item)}),
                    format!(
                        "edit {}",
                        if paths.is_empty() {
                            "?".to_string()
                        } else {
                            paths.join(", ")
                        }
                    ),
                ))
            }
            _ => None,
        }
    }

    fn finish(&mut self, outcome: TurnEnd) -> Vec<Effect> {
        self.phase = Phase::Done;
        vec![Effect::Done(outcome)]
    }

    /// A payload in Claude Code's vocabulary for this turn.
    fn event(&self, name: &str, extra: Value) -> Value {
        let mut payload = json!({
            "hook_event_name": name,
            "session_id": self.thread,
            "cwd": self.spec.cwd,
        });
        if let Some(turn) = &self.turn {
            payload["turn_id"] = json!(turn);
        }
        if let (Some(out), Some(extra)) = (payload.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                out.insert(k.clone(), v.clone());
            }
        }
        payload
    }
}

/// The policy's answer for a Codex call, part by part (a patch is a write of each file).
fn agents_decide(
    tool: &str,
    input: &Value,
    decide: &mut dyn FnMut(&str, &Value) -> Decision,
) -> Decision {
    let calls = agents::policy_calls(HookAgent::Codex, tool, input);
    let mut allowed: Vec<Decision> = Vec::new();
    let mut undecided: Option<Decision> = None;
    for (tool, input) in calls {
        let decision = decide(&tool, &input);
        match decision.decision {
            Verdict::Deny => return decision,
            Verdict::NoDecision => {
                let destructive = decision.rule.starts_with("destructive:");
                if undecided
                    .as_ref()
                    .is_none_or(|held| destructive && !held.rule.starts_with("destructive:"))
                {
                    undecided = Some(decision);
                }
            }
            Verdict::Allow => allowed.push(decision),
        }
    }
    if let Some(decision) = undecided {
        return decision;
    }
    let rule = allowed
        .iter()
        .map(|d| d.rule.as_str())
        .collect::<Vec<_>>()
        .join("+");
    Decision {
        decision: Verdict::Allow,
        reason: format!("every part is allowed: {rule}"),
        rule,
        message: None,
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": {}})
}

/// The command an item or approval runs, unwrapped from Codex's `/bin/bash -lc 'SCRIPT'`.
fn command_of(item: &Value) -> String {
    let command = match item.get("command") {
        Some(Value::String(text)) => text.clone(),
        // v1 approvals give argv.
        Some(Value::Array(words)) => words
            .iter()
            .filter_map(Value::as_str)
            .map(crate::shell::quote_if_needed)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    let words: Vec<String> = crate::shell::commands(&command)
        .into_iter()
        .next()
        .map(|c| c.words)
        .unwrap_or_default();
    match words.as_slice() {
        [shell, flag, script]
            if [
                "bash",
                "sh",
                "zsh",
                "/bin/bash",
                "/bin/sh",
                "/usr/bin/bash",
                "/bin/zsh",
            ]
            .contains(&shell.as_str())
                && ["-c", "-lc"].contains(&flag.as_str()) =>
        {
            script.clone()
        }
        _ => command,
    }
}

/// The paths a `fileChange` item changes.
fn paths_of(item: &Value) -> Vec<String> {
    item.get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("path").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// A `fileChange` item as a patch naming its files (what the policy reads of a Codex patch).
fn patch_of(item: &Value) -> String {
    let mut patch = String::from("*** Begin Patch\n");
    for change in item
        .get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(path) = change.get("path").and_then(Value::as_str) else {
            continue;
        };
        let kind = change
            .pointer("/kind/type")
            .or_else(|| change.get("kind"))
            .and_then(Value::as_str)
            .unwrap_or("update");
        let verb = match kind {
            "add" => "Add",
            "delete" => "Delete",
            _ => "Update",
        };
        patch.push_str(&format!("*** {verb} File: {path}\n"));
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// Codex's error (`codexErrorInfo`) as Claude Code's StopFailure names it: a usage limit and
/// a rate limit are `rate_limit` (the message says which), an overloaded or failing server
/// `server_error`, a refused login `authentication_failed`, a request too large
/// `invalid_request`.
fn error_kind(info: Option<&Value>) -> String {
    let name = match info {
        Some(Value::String(name)) => name.as_str(),
        Some(Value::Object(map)) => map.keys().next().map(String::as_str).unwrap_or(""),
        _ => "",
    };
    match name {
        "usageLimitExceeded" | "rateLimitExceeded" => "rate_limit",
        "serverOverloaded"
        | "internalServerError"
        | "httpConnectionFailed"
        | "responseStreamConnectionFailed"
        | "responseStreamDisconnected" => "server_error",
        "unauthorized" => "authentication_failed",
        "contextWindowExceeded" | "badRequest" => "invalid_request",
        "" => "unknown",
        other => other,
    }
    .to_string()
}

/// `account/rateLimits/updated`'s windows as Claude Code's status line gives them: the
/// window of a day or less is the five-hour one, a week the seven-day one.
fn limits(snapshot: Option<&Value>) -> Option<Value> {
    let snapshot = snapshot?;
    let mut out = serde_json::Map::new();
    for key in ["primary", "secondary"] {
        let Some(window) = snapshot.get(key).filter(|w| w.is_object()) else {
            continue;
        };
        let (Some(used), Some(resets)) = (
            window.get("usedPercent").and_then(Value::as_f64),
            window.get("resetsAt").and_then(Value::as_i64),
        ) else {
            continue;
        };
        let minutes = window
            .get("windowDurationMins")
            .and_then(Value::as_i64)
            .unwrap_or(300);
        let name = if minutes >= 7 * 24 * 60 {
            "seven_day"
        } else {
            "five_hour"
        };
        out.insert(
            name.to_string(),
            json!({"used_percentage": used, "resets_at": resets}),
        );
    }
    (!out.is_empty()).then(|| json!({"rate_limits": out}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            cwd: "/home/dev/proj".into(),
            prompt: "Do the thing".into(),
            resume: None,
            approval_policy: "on-request".into(),
            sandbox: "workspace-write".into(),
            unattended: false,
        }
    }

    /// The app-server's side of a recorded conversation.
    fn recorded(name: &str) -> Vec<Value> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/app-server/codex")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path:?}: {e}"))
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["dir"] == "in")
            .map(|l| l["msg"].clone())
            .collect()
    }

    fn policy(tool: &str, input: &Value) -> Decision {
        let ctx = crate::policy::Context {
            cwd: Some("/home/dev/proj".into()),
            project: Some("/home/dev/proj".into()),
            home: Some("/home/dev".into()),
            protected: Vec::new(),
            git_top: true,
        };
        crate::policy::decide(&crate::policy::Policy::builtin(), tool, input, &ctx)
    }

    fn replay(name: &str, spec: Spec) -> (Turn, Vec<Effect>) {
        let mut turn = Turn::new(spec);
        let mut effects = turn.start();
        for message in recorded(name) {
            effects.extend(turn.receive(&message, &mut policy));
        }
        (turn, effects)
    }

    fn sent(effects: &[Effect]) -> Vec<Value> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send(v) => Some(v.clone()),
                _ => None,
            })
            .collect()
    }

    fn events(effects: &[Effect]) -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Record(v, _) => Some(v["hook_event_name"].as_str().unwrap().to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_turn_opens_a_thread_sends_the_step_and_ends_with_its_message() {
        let (turn, effects) = replay("text.jsonl", spec());
        let sent = sent(&effects);
        assert_eq!(sent[0]["method"], "initialize");
        assert_eq!(sent[1]["method"], "initialized");
        assert_eq!(sent[2]["method"], "thread/start");
        assert_eq!(sent[2]["params"]["approvalPolicy"], "on-request");
        assert_eq!(sent[3]["method"], "turn/start");
        assert_eq!(sent[3]["params"]["input"][0]["text"], "Do the thing");
        assert_eq!(
            events(&effects),
            ["SessionStart", "UserPromptSubmit", "Stop"]
        );
        assert!(turn.done());
        assert!(turn.thread().is_some());
        assert_eq!(
            effects.last(),
            Some(&Effect::Done(TurnEnd::Completed(Some(
                "Hello from the model.".into()
            ))))
        );
    }

    #[test]
    fn approvals_get_the_policys_answer_and_the_rest_goes_to_a_person() {
        // npm test leaving the sandbox: a runner, accepted.
        let (_, effects) = replay("approval-accepted.jsonl", spec());
        let answer = sent(&effects)
            .into_iter()
            .find(|m| m.get("result").is_some())
            .unwrap();
        assert_eq!(answer["result"]["decision"], "accept");
        assert!(events(&effects).contains(&"PermissionRequest".to_string()));
        // rm -rf build: destructive; a person is asked (attended)...
        let (_, effects) = replay("approval-declined.jsonl", spec());
        let asked = effects.iter().find_map(|e| match e {
            Effect::Ask(q) => Some(q.clone()),
            _ => None,
        });
        let asked = asked.expect("asked");
        assert_eq!(asked.what, "rm -rf build");
        assert!(asked.rule.starts_with("destructive:"), "{asked:?}");
        assert!(
            sent(&effects).iter().all(|m| m.get("result").is_none()),
            "nothing answered for the person"
        );
        // ... and declined when nobody will answer.
        let (_, effects) = replay(
            "approval-declined.jsonl",
            Spec {
                unattended: true,
                ..spec()
            },
        );
        let answer = sent(&effects)
            .into_iter()
            .find(|m| m.get("result").is_some())
            .unwrap();
        assert_eq!(answer["result"]["decision"], "decline");
        let mut turn = Turn::new(spec());
        let yes = turn.answer(&asked, true);
        assert!(matches!(&yes[0], Effect::Send(m) if m["result"]["decision"] == "accept"));
    }

    #[test]
    fn a_usage_limit_is_a_failure_with_its_windows() {
        let (_, effects) = replay("usage-limit.jsonl", spec());
        let limits = effects
            .iter()
            .find_map(|e| match e {
                Effect::Limits(v) => Some(v.clone()),
                _ => None,
            })
            .expect("limits");
        assert_eq!(limits["rate_limits"]["five_hour"]["used_percentage"], 100.0);
        assert!(limits["rate_limits"]["seven_day"]["resets_at"].is_i64());
        assert_eq!(events(&effects).last().unwrap(), "StopFailure");
        match effects.last() {
            Some(Effect::Done(TurnEnd::Failed { kind, message })) => {
                assert_eq!(kind, "rate_limit");
                assert!(message.contains("usage limit"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_gone_thread_is_started_anew_and_refusals_end_the_turn() {
        let mut turn = Turn::new(Spec {
            resume: Some("old".into()),
            ..spec()
        });
        turn.start();
        let open = turn.receive(&json!({"id": 1, "result": {}}), &mut policy);
        assert!(matches!(&open[1], Effect::Send(m) if m["method"] == "thread/resume"));
        let again = turn.receive(
            &json!({"id": 2, "error": {"code": -1, "message": "no such thread"}}),
            &mut policy,
        );
        assert!(matches!(&again[1], Effect::Send(m) if m["method"] == "thread/start"));
        let failed = turn.receive(
            &json!({"id": 2, "error": {"code": -1, "message": "bad cwd"}}),
            &mut policy,
        );
        assert!(matches!(
            failed.last(),
            Some(Effect::Done(TurnEnd::Failed { .. }))
        ));
        assert!(turn.done());
    }

    #[test]
    fn codex_commands_are_read_without_their_shell_wrapper() {
        assert_eq!(
            command_of(&json!({"command": "/bin/bash -lc 'rm -rf build'"})),
            "rm -rf build"
        );
        assert_eq!(command_of(&json!({"command": ["ls", "-la"]})), "ls -la");
        assert_eq!(command_of(&json!({"command": "cargo test"})), "cargo test");
        assert_eq!(error_kind(Some(&json!("usageLimitExceeded"))), "rate_limit");
        assert_eq!(
            error_kind(Some(
                &json!({"httpConnectionFailed": {"httpStatusCode": 502}})
            )),
            "server_error"
        );
    }
}

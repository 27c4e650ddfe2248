//! A Claude Code session's typed state, as its hooks report it: the record `autoctl hook event`
//! keeps per session, its key, and the pure transition for each hook event.
//!
//! Hooks are the first channel the supervisors read (the screen is the cross-check and the
//! fallback): an event says exactly what happened, with the tool's name and the model's last
//! message, where a screen reader has to guess from wording that changes with each release.
//!
//! | event | state |
//! | --- | --- |
//! | `UserPromptSubmit`, `PreToolUse` (tool), `PostToolUse(Failure)`, `PermissionDenied` | working |
//! | `PermissionRequest` with no decision, `Notification` `permission_prompt` | waiting-for-permission |
//! | `Notification` `idle_prompt` (after a StopFailure: unchanged), `elicitation_dialog` | waiting-for-input |
//! | `Stop`, `SessionStart` (after an automatic compaction: working) | idle |
//! | `SubagentStart`, `SubagentStop` (a Task tool, a compaction's summarizer) | unchanged |
//! | `StopFailure` | failed:`error` |
//! | `PreCompact` | compacting |
//! | `SessionEnd` (any reason but `clear`) | ended |
//! | `Interrupt` (Codex: Esc ended the turn) | idle |
//! | `PreCompress` (Gemini: `manual` is a `/compress`, counted; `auto` is a check before every model call) | unchanged |
//!
//! Codex CLI and Gemini CLI payloads come here in Claude Code's vocabulary
//! ([`crate::hook::agents::event_payload`]); the two events above are theirs alone.
//!
//! Only `Stop`'s `last_assistant_message` is the agent's message (the reasoning-loop check
//! counts it); `StopFailure`'s is Claude Code's error banner and is kept apart. `SessionEnd`
//! with reason `clear` is not an ended agent: a `SessionStart` with source `clear` follows in
//! the same pane with a new `session_id`, and `clear`, `compact` and `resume` starts rebind
//! whatever was bound to the old id ([`Transition::rebind`]).
//!
//! Records are keyed ([`Key`]) by the tmux pane the hook runs in (`$TMUX_PANE` and the server's
//! socket from `$TMUX`), else by `session_id`, else by `cwd`: a supervisor knows its run's pane,
//! and a pane keeps its record across `/clear`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hook::agents::HookAgent;
use crate::hook::input::StdinError;
use crate::pane::message::normalize_message;

pub use crate::time::Time;

/// The format version of the records.
pub const VERSION: u32 = 1;

/// Characters of an agent message or error banner kept in a record.
pub const MESSAGE_MAX_CHARS: usize = 2000;

/// What the agent is doing, as its hooks last said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentState {
    Working,
    WaitingForPermission,
    WaitingForInput,
    Idle,
    /// A turn ended on an API error (`error` says which).
    Failed,
    Compacting,
    Ended,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Working => "working",
            AgentState::WaitingForPermission => "waiting-for-permission",
            AgentState::WaitingForInput => "waiting-for-input",
            AgentState::Idle => "idle",
            AgentState::Failed => "failed",
            AgentState::Compacting => "compacting",
            AgentState::Ended => "ended",
        }
    }
}

/// A typed channel other than the agent's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// Codex CLI's app-server (JSON-RPC), driven by `autoctl run turn`.
    AppServer,
    /// The agent's own transcript file: Codex's rollout (its hooks' `transcript_path`), read
    /// by the supervisor where no hook fires (a usage limit ends the turn without a Stop).
    Transcript,
}

/// Where a record lives: the pane first, then the session, then the working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// `$TMUX_PANE` (`%3`) on the tmux server whose socket is `socket` (from `$TMUX`).
    Pane {
        socket: String,
        pane: String,
    },
    Session(String),
    Cwd(String),
}

impl Key {
    /// The key of a hook invocation: its environment first, then its payload.
    pub fn of(tmux: Option<&str>, tmux_pane: Option<&str>, payload: &Payload) -> Option<Key> {
        let pane = tmux_pane.map(str::trim).filter(|p| valid_pane(p));
        if let (Some(socket), Some(pane)) = (tmux.and_then(socket_of), pane) {
            return Some(Key::Pane {
                socket: socket.to_string(),
                pane: pane.to_string(),
            });
        }
        if let Some(id) = payload.session() {
            return Some(Key::Session(id.to_string()));
        }
        payload
            .cwd
            .as_deref()
            .filter(|c| !c.is_empty())
            .map(|c| Key::Cwd(c.to_string()))
    }

    /// The file name stem: readable where it can be, hashed where the value is a path.
    pub fn stem(&self) -> String {
        match self {
            Key::Pane { socket, pane } => {
                format!(
                    "pane-{}-{:016x}",
                    pane.trim_start_matches('%'),
                    hash(socket)
                )
            }
            Key::Session(id) if id.len() <= 64 && id.chars().all(safe_char) => {
                format!("session-{id}")
            }
            Key::Session(id) => format!("session-{:016x}", hash(id)),
            Key::Cwd(cwd) => format!("cwd-{:016x}", hash(cwd)),
        }
    }

    /// The key a record was filed under, from its [`Key::label`].
    pub fn from_label(label: &str) -> Option<Key> {
        if let Some(rest) = label.strip_prefix("pane:") {
            let (pane, socket) = rest.split_once('@')?;
            return Some(Key::Pane {
                socket: socket.to_string(),
                pane: pane.to_string(),
            });
        }
        if let Some(id) = label.strip_prefix("session:") {
            return Some(Key::Session(id.to_string()));
        }
        label
            .strip_prefix("cwd:")
            .map(|cwd| Key::Cwd(cwd.to_string()))
    }

    /// The key as one printable string (`pane:%3@/tmp/tmux-0/default`).
    pub fn label(&self) -> String {
        match self {
            Key::Pane { socket, pane } => format!("pane:{pane}@{socket}"),
            Key::Session(id) => format!("session:{id}"),
            Key::Cwd(cwd) => format!("cwd:{cwd}"),
        }
    }
}

fn safe_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

fn valid_pane(pane: &str) -> bool {
    pane.len() > 1 && pane.starts_with('%') && pane[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The socket path in `$TMUX` (`/tmp/tmux-0/default,1234,0`: path, server pid, session).
pub fn socket_of(tmux: &str) -> Option<&str> {
    let mut parts = tmux.rsplitn(3, ',');
    let (_, _, path) = (parts.next()?, parts.next()?, parts.next()?);
    (!path.is_empty()).then_some(path)
}

fn hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// The fields of any hook payload that the record uses. Unknown fields are ignored: Claude
/// Code adds fields often.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Payload {
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// Codex's rollout file (its `transcript_path`, renamed by [`super::agents::event_payload`]
    /// so it is never read as a Claude Code transcript).
    #[serde(default)]
    pub rollout_path: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// SessionStart: startup, resume, clear, compact.
    #[serde(default)]
    pub source: Option<String>,
    /// SessionEnd: clear, logout, prompt_input_exit, other, ...
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub notification_type: Option<String>,
    /// PreCompact/PostCompact: manual or auto.
    #[serde(default)]
    pub trigger: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    /// StopFailure's error kind (a string; other shapes are tolerated).
    #[serde(default)]
    pub error: Option<Value>,
    /// Present only inside subagents.
    #[serde(default)]
    pub agent_id: Option<String>,
}

impl Payload {
    pub fn session(&self) -> Option<&str> {
        self.session_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }

    fn event(&self) -> &str {
        self.hook_event_name.as_deref().unwrap_or("")
    }

    /// StopFailure's error kind, `unknown` when absent.
    pub fn error_kind(&self) -> String {
        match &self.error {
            Some(Value::String(kind)) if !kind.trim().is_empty() => kind.trim().to_string(),
            Some(Value::Object(map)) => map
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string(),
            _ => "unknown".to_string(),
        }
    }
}

/// Parse a hook payload. The message says in one line what was wrong.
pub fn parse(bytes: &[u8]) -> Result<Payload, StdinError> {
    from_value(parse_value(bytes)?)
}

/// The payload as a JSON object (any agent's, before [`crate::hook::agents::event_payload`]).
pub fn parse_value(bytes: &[u8]) -> Result<Value, StdinError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(StdinError::Empty("the agent"));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(StdinError::NotJson)?;
    if !value.is_object() {
        return Err(StdinError::NotObject);
    }
    Ok(value)
}

/// The fields a record uses, from a payload object.
pub fn from_value(value: Value) -> Result<Payload, StdinError> {
    serde_json::from_value(value).map_err(StdinError::NotHookInput)
}

/// The agent's last message, as the reasoning-loop check compares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentMessage {
    pub at: Time,
    /// Normalized (escapes removed, whitespace collapsed), at most [`MESSAGE_MAX_CHARS`].
    pub text: String,
    /// xxh3 of the whole normalized message, so two long messages that share their first
    /// 2000 characters are still told apart.
    pub hash: String,
    /// Gemini: the normalized text its hook gave, every continued turn's responses joined
    /// (characters and xxh3), from which the next turn's own words are told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined: Option<Joined>,
}

/// The length and hash of a joined text (see [`AgentMessage::joined`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Joined {
    pub chars: usize,
    pub hash: String,
}

/// One session's record (`<state>/hooks/<stem>.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// The record's generation: one more on every change. Its snapshot and each line of its
    /// journal carry theirs; the highest is the record ([`crate::hook::store`]).
    #[serde(default)]
    pub seq: u64,
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The session this one replaced (`/clear`, compaction, resume) in the same pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// Codex's rollout file, which the supervisor reads for what no hook reports
    /// ([`crate::hook::rollout`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_pane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_socket: Option<String>,
    pub state: AgentState,
    /// When the agent entered `state`.
    pub since: Time,
    /// The last event recorded.
    pub at: Time,
    /// Its name (`PreToolUse`, `Notification`, ...).
    pub event: String,
    /// Its qualifier: the notification type, start source, end reason or compaction trigger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The tool the agent runs or asks permission for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// When that tool started (PreToolUse seen, no PostToolUse yet): a running tool's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_started_at: Option<Time>,
    /// `failed`: StopFailure's error kind (`rate_limit`, `server_error`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `failed`: Claude Code's banner for it (never an agent message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The agent's last message (Stop's `last_assistant_message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<AgentMessage>,
    /// How many Stops in a row ended on that same message (1 for a new one).
    #[serde(default)]
    pub repeats: u32,
    /// Stops recorded under this key (turns finished).
    #[serde(default)]
    pub stops: u64,
    /// A turn the Stop hook's loop continued (`hook stop` blocked it): the iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued: Option<u64>,
    /// The last compaction's trigger (`manual`, which includes a `/compact` typed by `run
    /// tick`, or `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<String>,
    /// Compactions recorded under this key: a running total supervisors count their
    /// iteration's compactions from. One per compaction: its PreCompact, or — for hooks that
    /// never sent one — the SessionStart with source `compact` that follows it (never both).
    #[serde(default)]
    pub compactions: u64,
    /// When the last [`COMPACTION_TIMES`] of them were recorded, oldest first: a supervisor
    /// that first sees this record after some of them counts those made since its run
    /// started, whatever its ticks' timing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compacted_at: Vec<Time>,
    /// The PreCompact of the compaction in progress was counted: its SessionStart
    /// (`compact`) is the same compaction.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compaction_counted: bool,
    /// The last time of each event kind (for `doctor`).
    #[serde(default)]
    pub events: BTreeMap<String, Time>,
    /// The agent whose hooks reported (Claude Code when absent: records written before
    /// autoctl read Codex and Gemini hooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<HookAgent>,
    /// The channel the events came through when it is not the agent's hooks: Codex's
    /// app-server (`autoctl run turn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<Channel>,
    /// When `run tick` typed `/compact` for the current crossing of `--compact-at` (cleared
    /// once the context use is back under it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_requested_at: Option<Time>,
}

/// How many compaction times a record keeps: far more than one iteration may have
/// (`--max-compactions`, 3 by default) before its loop is stopped.
pub const COMPACTION_TIMES: usize = 32;

impl Record {
    /// Count one compaction at `now`.
    fn compacted(&mut self, now: Time) {
        self.compactions = self.compactions.saturating_add(1);
        self.compacted_at.push(now);
        if self.compacted_at.len() > COMPACTION_TIMES {
            let extra = self.compacted_at.len() - COMPACTION_TIMES;
            self.compacted_at.drain(..extra);
        }
    }

    /// Compactions recorded at or after `since` (of the last [`COMPACTION_TIMES`]).
    pub fn compactions_since(&self, since: Time) -> u64 {
        self.compacted_at.iter().filter(|at| **at >= since).count() as u64
    }

    /// The state as one word, `failed:<error>` for a failure.
    pub fn state_label(&self) -> String {
        match (&self.state, &self.error) {
            (AgentState::Failed, Some(error)) => format!("failed:{error}"),
            (state, _) => state.as_str().to_string(),
        }
    }

    /// A record with no event yet.
    pub fn fresh(key: &Key, now: Time) -> Record {
        let (tmux_pane, tmux_socket) = match key {
            Key::Pane { socket, pane } => (Some(pane.clone()), Some(socket.clone())),
            _ => (None, None),
        };
        Record {
            version: VERSION,
            seq: 0,
            key: key.label(),
            session_id: None,
            previous_session_id: None,
            cwd: None,
            transcript_path: None,
            rollout: None,
            tmux_pane,
            tmux_socket,
            state: AgentState::Idle,
            since: now,
            at: now,
            event: String::new(),
            detail: None,
            tool: None,
            tool_started_at: None,
            error: None,
            error_message: None,
            message: None,
            repeats: 0,
            stops: 0,
            continued: None,
            compaction: None,
            compactions: 0,
            compacted_at: Vec::new(),
            compaction_counted: false,
            events: BTreeMap::new(),
            compact_requested_at: None,
            agent: None,
            channel: None,
        }
    }
}

/// What an event changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub record: Record,
    /// `(old, new)` session ids when a `clear`/`compact`/`resume` start replaced the session
    /// in this record: whatever was bound to `old` (a Stop-hook loop) follows to `new`.
    pub rebind: Option<(String, String)>,
}

/// How a PermissionRequest ended (recorded by `hook permission-request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Allowed by the hook: the tool runs.
    Allowed,
    /// Denied by the hook: the model is told and goes on.
    Denied,
    /// No decision: Claude Code shows its prompt and waits for a person.
    Asked,
}

/// Apply one hook event to the record under `key` (None: no record yet).
pub fn apply(previous: Option<Record>, key: &Key, payload: &Payload, now: Time) -> Transition {
    apply_with(previous, key, payload, now, None)
}

/// [`apply`] for a PermissionRequest whose outcome the caller knows.
pub fn apply_permission(
    previous: Option<Record>,
    key: &Key,
    payload: &Payload,
    outcome: Permission,
    now: Time,
) -> Transition {
    apply_with(previous, key, payload, now, Some(outcome))
}

/// One event on the record: the session it belongs to (a restart starts a fresh record, a
/// `clear`/`compact`/`resume` start rebinds), the paths it names, the end of a compaction,
/// the state the event means ([`event_state`]), then when and what was heard.
fn apply_with(
    previous: Option<Record>,
    key: &Key,
    payload: &Payload,
    now: Time,
    permission: Option<Permission>,
) -> Transition {
    let mut record = previous.unwrap_or_else(|| Record::fresh(key, now));
    record.version = VERSION;
    record.key = key.label();
    let event = payload.event().to_string();
    let rebind = follow_session(&mut record, key, payload, &event, now);
    note_paths(&mut record, payload);
    let detail = event_detail(payload);
    if event == "SessionStart" && payload.source.as_deref() == Some("compact") {
        // The end of a compaction: counted here only when no PreCompact counted it.
        if !std::mem::take(&mut record.compaction_counted) {
            record.compacted(now);
        }
    }
    let next = event_state(
        &mut record,
        payload,
        &event,
        detail.as_deref(),
        permission,
        now,
    );
    // A subagent's events describe the subagent, not the session's prompt.
    let next = if payload.agent_id.is_some() {
        next.filter(|s| *s == AgentState::Working)
    } else {
        next
    };
    if let Some(state) = next {
        enter_state(&mut record, state, now);
    }
    record.at = now;
    record.event = event.clone();
    record.detail = detail;
    if !event.is_empty() {
        record.events.insert(event, now);
    }
    Transition { record, rebind }
}

/// A session id other than the record's (not a subagent's): a `clear`/`compact`/`resume`
/// start continues the old session under the new id (returned as `(old, new)`); any other
/// new session in this pane is a restart, so nothing but the events heard carries over.
fn follow_session(
    record: &mut Record,
    key: &Key,
    payload: &Payload,
    event: &str,
    now: Time,
) -> Option<(String, String)> {
    let id = payload.session()?;
    let old_session = record.session_id.clone();
    if payload.agent_id.is_some() || old_session.as_deref() == Some(id) {
        return None;
    }
    let mut rebind = None;
    if event == "SessionStart"
        && matches!(
            payload.source.as_deref(),
            Some("clear" | "compact" | "resume")
        )
        && let Some(old) = old_session.clone()
    {
        rebind = Some((old.clone(), id.to_string()));
        record.previous_session_id = Some(old);
    } else if old_session.is_some() {
        let events = std::mem::take(&mut record.events);
        *record = Record::fresh(key, now);
        record.events = events;
    }
    record.session_id = Some(id.to_string());
    rebind
}

/// The working directory, transcript and rollout the event names (an empty one is no news).
fn note_paths(record: &mut Record, payload: &Payload) {
    if let Some(cwd) = payload.cwd.as_deref().filter(|c| !c.is_empty()) {
        record.cwd = Some(cwd.to_string());
    }
    if let Some(path) = payload.transcript_path.as_deref().filter(|p| !p.is_empty()) {
        record.transcript_path = Some(path.to_string());
    }
    if let Some(path) = payload.rollout_path.as_deref().filter(|p| !p.is_empty()) {
        record.rollout = Some(path.to_string());
    }
}

/// The event's one qualifying word: its source, reason, notification type or trigger,
/// whichever it has first.
fn event_detail(payload: &Payload) -> Option<String> {
    [
        &payload.source,
        &payload.reason,
        &payload.notification_type,
        &payload.trigger,
    ]
    .into_iter()
    .find_map(|v| v.as_deref().filter(|v| !v.is_empty()))
    .map(str::to_string)
}

/// The state an event puts the agent in (None: the state stays), with what the event itself
/// records on the way (the tool, a Stop's message, a failure, a compaction). One row per
/// event name.
fn event_state(
    record: &mut Record,
    payload: &Payload,
    event: &str,
    detail: Option<&str>,
    permission: Option<Permission>,
    now: Time,
) -> Option<AgentState> {
    match event {
        "SessionStart" => Some(match (payload.source.as_deref(), &record.compaction) {
            // An automatic compaction happens inside a turn, which goes on after it.
            (Some("compact"), Some(trigger)) if trigger == "auto" => AgentState::Working,
            _ => AgentState::Idle,
        }),
        "SessionEnd" if payload.reason.as_deref() == Some("clear") => None,
        "SessionEnd" => Some(AgentState::Ended),
        "UserPromptSubmit" | "PermissionDenied" => Some(AgentState::Working),
        // Subagents (a Task tool, or the summarizer of a compaction) run inside a state the
        // session's own events already set.
        "SubagentStart" | "SubagentStop" => None,
        "PreToolUse" => {
            record.tool = payload.tool_name.clone();
            record.tool_started_at = Some(now);
            // The floor asked (`hook pre-tool-use`): the agent draws its permission box.
            match permission {
                Some(Permission::Asked) => Some(AgentState::WaitingForPermission),
                _ => Some(AgentState::Working),
            }
        }
        "PostToolUse" | "PostToolUseFailure" => {
            record.tool_started_at = None;
            Some(AgentState::Working)
        }
        "PermissionRequest" => {
            if payload.tool_name.is_some() {
                record.tool = payload.tool_name.clone();
            }
            match permission {
                Some(Permission::Allowed | Permission::Denied) => Some(AgentState::Working),
                Some(Permission::Asked) | None => Some(AgentState::WaitingForPermission),
            }
        }
        "Notification" => match payload.notification_type.as_deref() {
            Some("permission_prompt") => Some(AgentState::WaitingForPermission),
            // The agent idle at its prompt after a failed turn still waits on that failure
            // (Claude Code sends it a minute after its StopFailure): the failure stands until
            // the next prompt, one decision for a person (issue 29's live 401).
            Some("idle_prompt") if record.state == AgentState::Failed => None,
            Some("idle_prompt") => Some(AgentState::WaitingForInput),
            Some(t) if t.starts_with("elicitation") && t != "elicitation_complete" => {
                Some(AgentState::WaitingForInput)
            }
            _ => None,
        },
        "Stop" => {
            record_stop(record, payload, now);
            Some(AgentState::Idle)
        }
        "StopFailure" => {
            record.error = Some(payload.error_kind());
            record.error_message = payload
                .last_assistant_message
                .as_deref()
                .map(|t| bounded(t.trim()));
            record.tool_started_at = None;
            Some(AgentState::Failed)
        }
        "PreCompact" => {
            record.compaction = detail.map(str::to_string);
            record.compacted(now);
            record.compaction_counted = true;
            Some(AgentState::Compacting)
        }
        "PostCompact" => Some(match payload.trigger.as_deref() {
            Some("auto") => AgentState::Working,
            _ => AgentState::Idle,
        }),
        // Gemini fires PreCompress before every check of its context, with `auto`, whether it
        // then compresses or not; `manual` is a `/compress`, which compresses. Neither comes
        // with an end event, so the state stays what the turn's own events say.
        "PreCompress" => {
            if payload.trigger.as_deref() == Some("manual") {
                record.compaction = Some("manual".to_string());
                record.compacted(now);
            }
            None
        }
        // Codex: the person pressed Esc; the turn ended and the agent waits at its prompt.
        "Interrupt" => {
            record.tool_started_at = None;
            Some(AgentState::Idle)
        }
        _ => None,
    }
}

/// A Stop: the turn's message and how many turns in a row said it; a Stop hook's
/// continuation ends.
fn record_stop(record: &mut Record, payload: &Payload, now: Time) {
    record.stops += 1;
    record.tool_started_at = None;
    if let Some(text) = payload.last_assistant_message.as_deref() {
        let message = match (&record.message, record.agent, payload.stop_hook_active) {
            // Gemini's AfterAgent gives the responses of every turn its hook
            // continued, joined: this turn's words are what follows the last one's.
            (Some(last), Some(HookAgent::Gemini), Some(true)) => after_previous(last, text, now),
            (_, Some(HookAgent::Gemini), _) => {
                let mut message = agent_message(text, now);
                message.joined = Some(joined(&normalize_message(text)));
                message
            }
            _ => agent_message(text, now),
        };
        record.repeats = match &record.message {
            Some(last) if last.hash == message.hash => record.repeats.saturating_add(1),
            _ => 1,
        };
        record.message = Some(message);
    } else {
        // A Stop without the message (a Claude Code before `last_assistant_message`):
        // the previous turn's message is not this one's, and counting it again would
        // make a reasoning loop of three such turns. None is kept; the check reads
        // this turn from the screen.
        record.message = None;
        record.repeats = 0;
    }
    record.continued = None;
}

/// The agent enters `state`: a new `since` when it changed; an error stands only while
/// failed, a tool only while not idle or ended.
fn enter_state(record: &mut Record, state: AgentState, now: Time) {
    if state != record.state {
        record.since = now;
    }
    if state != AgentState::Failed {
        record.error = None;
        record.error_message = None;
    }
    if matches!(state, AgentState::Idle | AgentState::Ended) {
        record.tool = None;
    }
    record.state = state;
}

/// Mark the Stop that `hook stop`'s loop blocked: the agent goes on with iteration `n` (the
/// Stop itself is applied first, in the same update, so its message still counts).
pub fn mark_continued(record: &mut Record, iteration: u64, now: Time) {
    record.continued = Some(iteration);
    if record.state != AgentState::Working {
        record.since = now;
    }
    record.state = AgentState::Working;
    record.at = now;
}

fn agent_message(text: &str, at: Time) -> AgentMessage {
    let normalized = normalize_message(text);
    AgentMessage {
        at,
        hash: format!("{:016x}", hash(&normalized)),
        text: bounded(&normalized),
        joined: None,
    }
}

/// Gemini's joined responses (see [`AgentMessage::joined`]): this turn's words are what
/// follows the text the previous Stop gave, when `text` starts with it; else the whole text.
fn after_previous(previous: &AgentMessage, text: &str, at: Time) -> AgentMessage {
    let whole = normalize_message(text);
    let rest = previous.joined.as_ref().and_then(|joined| {
        let (head, tail) = whole.split_at(whole.char_indices().nth(joined.chars)?.0);
        (format!("{:016x}", hash(head)) == joined.hash).then_some(tail.trim())
    });
    let mut message = match rest {
        Some(rest) if !rest.is_empty() => agent_message(rest, at),
        _ => agent_message(text, at),
    };
    message.joined = Some(joined(&whole));
    message
}

fn joined(normalized: &str) -> Joined {
    Joined {
        chars: normalized.chars().count(),
        hash: format!("{:016x}", hash(normalized)),
    }
}

fn bounded(text: &str) -> String {
    if text.chars().count() > MESSAGE_MAX_CHARS {
        let cut: String = text.chars().take(MESSAGE_MAX_CHARS).collect();
        format!("{cut}…")
    } else {
        text.to_string()
    }
}

/// Is `dir` the record's working directory or inside it?
pub fn covers(record: &Record, dir: &Path) -> bool {
    record
        .cwd
        .as_deref()
        .is_some_and(|cwd| dir.starts_with(Path::new(cwd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(1_795_680_000 + secs, 0).unwrap()
    }

    fn payload(json: &str) -> Payload {
        parse(json.as_bytes()).unwrap()
    }

    fn pane() -> Key {
        Key::Pane {
            socket: "/tmp/tmux-0/default".into(),
            pane: "%3".into(),
        }
    }

    #[test]
    fn an_events_detail_is_its_first_nonempty_qualifier() {
        let detail = |json: &str| event_detail(&payload(json));
        assert_eq!(detail(r#"{"hook_event_name":"Stop"}"#), None);
        assert_eq!(
            detail(r#"{"source":"","reason":"clear","trigger":"auto"}"#).as_deref(),
            Some("clear")
        );
        assert_eq!(
            detail(r#"{"source":"compact","trigger":"auto"}"#).as_deref(),
            Some("compact")
        );
        assert_eq!(
            detail(r#"{"notification_type":"idle_prompt","trigger":"manual"}"#).as_deref(),
            Some("idle_prompt")
        );
    }

    #[test]
    fn keys_prefer_the_pane_then_the_session_then_the_cwd() {
        let p = payload(r#"{"session_id":"abc","cwd":"/p"}"#);
        assert_eq!(
            Key::of(Some("/tmp/tmux-0/default,77,0"), Some("%3"), &p),
            Some(pane())
        );
        assert_eq!(
            Key::of(None, Some("%3"), &p),
            Some(Key::Session("abc".into()))
        );
        assert_eq!(
            Key::of(Some("/s,1,0"), Some("3"), &p),
            Some(Key::Session("abc".into())),
            "a malformed pane id is not a key"
        );
        let p = payload(r#"{"cwd":"/p"}"#);
        assert_eq!(Key::of(None, None, &p), Some(Key::Cwd("/p".into())));
        assert_eq!(Key::of(None, None, &payload("{}")), None);
        assert_eq!(socket_of("/tmp/a,b/sock,12,0"), Some("/tmp/a,b/sock"));
        assert_eq!(socket_of("garbage"), None);
    }

    #[test]
    fn stems_are_file_names() {
        assert!(pane().stem().starts_with("pane-3-"));
        assert_eq!(Key::Session("ab-12".into()).stem(), "session-ab-12");
        let odd = Key::Session("../../etc".into()).stem();
        assert!(odd.starts_with("session-") && !odd.contains('/'));
        assert!(!Key::Cwd("/a/b".into()).stem().contains('/'));
    }

    #[test]
    fn a_turn_goes_working_then_idle_with_the_message() {
        let k = pane();
        let t = apply(
            None,
            &k,
            &payload(r#"{"hook_event_name":"UserPromptSubmit","session_id":"s"}"#),
            at(0),
        );
        assert_eq!(t.record.state, AgentState::Working);
        let t = apply(
            Some(t.record),
            &k,
            &payload(r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash"}"#),
            at(1),
        );
        assert_eq!(t.record.tool.as_deref(), Some("Bash"));
        assert_eq!(t.record.tool_started_at, Some(at(1)));
        assert_eq!(t.record.since, at(0), "still working: since does not move");
        let t = apply(
            Some(t.record),
            &k,
            &payload(r#"{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash"}"#),
            at(2),
        );
        assert_eq!(t.record.tool_started_at, None);
        let t = apply(
            Some(t.record),
            &k,
            &payload(
                r#"{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"Done."}"#,
            ),
            at(3),
        );
        assert_eq!(t.record.state, AgentState::Idle);
        assert_eq!(t.record.since, at(3));
        assert_eq!(t.record.message.as_ref().unwrap().text, "Done.");
        assert_eq!((t.record.repeats, t.record.stops), (1, 1));
        assert_eq!(t.record.tool, None);
        assert_eq!(t.record.events.len(), 4);
        // A Stop without its message keeps none: the last turn's is not this one's.
        let t = apply(
            Some(t.record),
            &k,
            &payload(r#"{"hook_event_name":"Stop","session_id":"s"}"#),
            at(4),
        );
        assert_eq!(
            (t.record.message, t.record.repeats, t.record.stops),
            (None, 0, 2)
        );
    }

    #[test]
    fn the_same_message_counts_repeats_and_a_different_one_resets() {
        let k = pane();
        let stop = |m: &str| {
            payload(&format!(
                r#"{{"hook_event_name":"Stop","session_id":"s","last_assistant_message":{}}}"#,
                serde_json::to_string(m).unwrap()
            ))
        };
        let mut r = None;
        for (i, m) in ["a  b", "a b", "a\nb", "c"].iter().enumerate() {
            r = Some(apply(r, &k, &stop(m), at(i as i64)).record);
            let repeats = r.as_ref().unwrap().repeats;
            assert_eq!(repeats, if i < 3 { i as u32 + 1 } else { 1 });
        }
    }

    #[test]
    fn stop_failure_keeps_the_banner_apart_from_agent_messages() {
        let t = apply(
            None,
            &pane(),
            &payload(
                r#"{"hook_event_name":"StopFailure","session_id":"s","error":"rate_limit",
                "last_assistant_message":"You've hit your limit · resets 10:42am (UTC)"}"#,
            ),
            at(0),
        );
        assert_eq!(t.record.state_label(), "failed:rate_limit");
        assert!(t.record.message.is_none());
        assert!(
            t.record
                .error_message
                .as_deref()
                .unwrap()
                .contains("resets 10:42am")
        );
        // Claude Code's idle Notification a minute later: the failure stands, with its time,
        // until the next prompt.
        let idle =
            payload(r#"{"hook_event_name":"Notification","notification_type":"idle_prompt"}"#);
        let still = apply(Some(t.record), &pane(), &idle, at(60)).record;
        assert_eq!(
            (still.state_label().as_str(), still.since),
            ("failed:rate_limit", at(0))
        );
        let next = payload(r#"{"hook_event_name":"UserPromptSubmit"}"#);
        let working = apply(Some(still), &pane(), &next, at(70)).record;
        assert_eq!((working.state, working.error), (AgentState::Working, None));
    }

    #[test]
    fn permission_and_notifications() {
        let k = pane();
        let pr = payload(r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash"}"#);
        let asked = apply(None, &k, &pr, at(0)).record;
        assert_eq!(asked.state, AgentState::WaitingForPermission);
        assert_eq!(asked.tool.as_deref(), Some("Bash"));
        let allowed = apply_permission(None, &k, &pr, Permission::Allowed, at(0)).record;
        assert_eq!(allowed.state, AgentState::Working);
        let n = |t: &str| {
            payload(&format!(
                r#"{{"hook_event_name":"Notification","notification_type":"{t}"}}"#
            ))
        };
        assert_eq!(
            apply(None, &k, &n("permission_prompt"), at(0)).record.state,
            AgentState::WaitingForPermission
        );
        assert_eq!(
            apply(None, &k, &n("idle_prompt"), at(0)).record.state,
            AgentState::WaitingForInput
        );
        let working = apply(
            None,
            &k,
            &payload(r#"{"hook_event_name":"UserPromptSubmit"}"#),
            at(0),
        );
        let after = apply(Some(working.record), &k, &n("auth_success"), at(1)).record;
        assert_eq!(
            after.state,
            AgentState::Working,
            "other notifications change nothing"
        );
    }

    #[test]
    fn clear_rebinds_and_is_not_an_end() {
        let k = pane();
        let r = apply(
            None,
            &k,
            &payload(
                r#"{"hook_event_name":"Stop","session_id":"old","last_assistant_message":"x"}"#,
            ),
            at(0),
        )
        .record;
        let end = apply(
            Some(r),
            &k,
            &payload(r#"{"hook_event_name":"SessionEnd","session_id":"old","reason":"clear"}"#),
            at(1),
        );
        assert_eq!(
            end.record.state,
            AgentState::Idle,
            "clear is not an ended agent"
        );
        let start = apply(
            Some(end.record),
            &k,
            &payload(r#"{"hook_event_name":"SessionStart","session_id":"new","source":"clear"}"#),
            at(2),
        );
        assert_eq!(start.rebind, Some(("old".into(), "new".into())));
        assert_eq!(start.record.session_id.as_deref(), Some("new"));
        assert_eq!(start.record.previous_session_id.as_deref(), Some("old"));
        assert_eq!(start.record.stops, 1, "the pane's history carries over");
        let exit = apply(
            Some(start.record),
            &k,
            &payload(
                r#"{"hook_event_name":"SessionEnd","session_id":"new","reason":"prompt_input_exit"}"#,
            ),
            at(3),
        );
        assert_eq!(exit.record.state, AgentState::Ended);
        // A fresh start in the same pane is a new agent: nothing carries over, no rebind.
        let again = apply(
            Some(exit.record),
            &k,
            &payload(
                r#"{"hook_event_name":"SessionStart","session_id":"third","source":"startup"}"#,
            ),
            at(4),
        );
        assert_eq!(again.rebind, None);
        assert_eq!(again.record.stops, 0);
        assert!(again.record.message.is_none());
    }

    #[test]
    fn compaction_auto_goes_back_to_work_and_manual_to_idle() {
        let k = pane();
        let pre = |t: &str| {
            payload(&format!(
                r#"{{"hook_event_name":"PreCompact","session_id":"s","trigger":"{t}"}}"#
            ))
        };
        let start =
            payload(r#"{"hook_event_name":"SessionStart","session_id":"s","source":"compact"}"#);
        let auto = apply(None, &k, &pre("auto"), at(0)).record;
        assert_eq!(auto.state, AgentState::Compacting);
        assert_eq!(auto.compactions, 1, "the running total");
        let after = apply(Some(auto), &k, &start, at(1)).record;
        assert_eq!(after.state, AgentState::Working);
        assert_eq!(
            after.compactions, 1,
            "kept across the compaction's SessionStart"
        );
        let again = apply(Some(after), &k, &pre("auto"), at(2)).record;
        assert_eq!(again.compactions, 2);
        let manual = apply(None, &k, &pre("manual"), at(0)).record;
        assert_eq!(
            apply(Some(manual), &k, &start, at(1)).record.state,
            AgentState::Idle
        );
    }

    #[test]
    fn a_compaction_counts_once_from_its_precompact_or_its_sessionstart() {
        let k = pane();
        let pre = payload(r#"{"hook_event_name":"PreCompact","session_id":"s","trigger":"auto"}"#);
        let post =
            payload(r#"{"hook_event_name":"PostCompact","session_id":"s","trigger":"auto"}"#);
        let start =
            payload(r#"{"hook_event_name":"SessionStart","session_id":"s","source":"compact"}"#);
        // PreCompact, PostCompact, SessionStart: one compaction.
        let mut r = None;
        for (i, p) in [&pre, &post, &start].into_iter().enumerate() {
            r = Some(apply(r, &k, p, at(i as i64)).record);
        }
        let r = r.unwrap();
        assert_eq!(
            (r.compactions, r.compacted_at.as_slice()),
            (1, &[at(0)][..])
        );
        // Hooks without PreCompact: the SessionStart counts it, once per compaction.
        let r = apply(Some(r), &k, &start, at(10)).record;
        let r = apply(Some(r), &k, &start, at(20)).record;
        assert_eq!(r.compactions, 3);
        assert_eq!(r.compactions_since(at(10)), 2);
        assert_eq!(r.compactions_since(at(21)), 0);
        // The times kept are bounded; the total is not.
        let mut r = r;
        for i in 0..100 {
            r = apply(Some(r), &k, &pre, at(100 + i)).record;
        }
        assert_eq!(r.compactions, 103);
        assert_eq!(r.compacted_at.len(), COMPACTION_TIMES);
        assert_eq!(r.compacted_at.last(), Some(&at(199)));
    }

    #[test]
    fn subagent_events_never_make_the_session_idle() {
        let k = pane();
        let w = apply(
            None,
            &k,
            &payload(r#"{"hook_event_name":"UserPromptSubmit","session_id":"s"}"#),
            at(0),
        );
        let sub = apply(
            Some(w.record),
            &k,
            &payload(
                r#"{"hook_event_name":"Stop","session_id":"s","agent_id":"a1","last_assistant_message":"sub"}"#,
            ),
            at(1),
        );
        assert_eq!(sub.record.state, AgentState::Working);
    }

    #[test]
    fn geminis_joined_responses_count_this_turns_words() {
        let k = pane();
        let after = |text: &str, active: bool| {
            payload(&format!(
                r#"{{"hook_event_name":"Stop","session_id":"s","stop_hook_active":{active},"last_assistant_message":{}}}"#,
                serde_json::to_string(text).unwrap()
            ))
        };
        let mut r = apply(
            None,
            &k,
            &payload(r#"{"hook_event_name":"SessionStart","session_id":"s"}"#),
            at(0),
        )
        .record;
        r.agent = Some(HookAgent::Gemini);
        let r = apply(Some(r), &k, &after("Step done.", false), at(0)).record;
        let r = apply(Some(r), &k, &after("Step done.\nStep done.", true), at(1)).record;
        assert_eq!(r.message.as_ref().unwrap().text, "Step done.");
        assert_eq!(r.repeats, 2, "the same words twice");
        let r = apply(
            Some(r),
            &k,
            &after("Step done.\nStep done.\nSomething new.", true),
            at(2),
        )
        .record;
        assert_eq!(r.message.as_ref().unwrap().text, "Something new.");
        assert_eq!(r.repeats, 1);
        // Claude Code's and Codex's messages are the turn's own: never cut.
        let mut c = apply(None, &k, &after("a", false), at(0)).record;
        c.agent = Some(HookAgent::Codex);
        let c = apply(Some(c), &k, &after("a b", true), at(1)).record;
        assert_eq!(c.message.unwrap().text, "a b");
    }

    #[test]
    fn a_continued_stop_keeps_its_message_and_works_on() {
        let k = pane();
        let stop =
            payload(r#"{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"m"}"#);
        let mut first = apply(None, &k, &stop, at(0)).record;
        mark_continued(&mut first, 2, at(0));
        assert_eq!(first.state, AgentState::Working);
        assert_eq!(first.continued, Some(2));
        assert_eq!(first.message.as_ref().unwrap().text, "m");
        assert_eq!(first.stops, 1);
    }
}

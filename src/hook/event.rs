//! The edge of `autoctl hook event`, and the one call every other hook command uses to record
//! the session's state ([`record_value`]): `hook stop` (the Stop, and whether its loop
//! continued the session), `hook stop-failure`, and `hook permission-request` (the policy's
//! answer).
//!
//! Recording never blocks the agent: every failure (stdin that is not a hook input, no key, an
//! unwritable state directory) comes back as lines for stderr, and the caller exits 0.
//!
//! Codex CLI's and Gemini CLI's payloads are read in Claude Code's vocabulary first
//! ([`crate::hook::agents`]), and the record keeps whose hooks reported.

use std::path::PathBuf;

use serde_json::Value;

use super::agents::{self, HookAgent};
use super::input::StdinError;
use super::run;
use super::session::{self, Channel, Payload, Permission, Transition};
use super::state::LoopDir;
use super::store::{HookEnv, Store};

/// What the recording command knows beyond the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// `hook permission-request`'s answer.
    Permission(Permission),
    /// `hook stop` blocked the Stop: the loop continues with this iteration.
    Continued(u64),
}

/// Record one hook payload, parsed once by the door ([`session::parse_value`]: a JSON object,
/// in its agent's own vocabulary; `agent`: `--agent`, else read from the payload). Returns the
/// lines to print on stderr (empty when all went well).
pub fn record_value(agent: Option<HookAgent>, value: Value, extra: Option<Extra>) -> Vec<String> {
    match payload_of(agent, value) {
        Ok((agent, payload)) => record(agent, &payload, extra),
        Err(problem) => vec![format!("hook event: {problem}; nothing recorded")],
    }
}

/// For the hook commands that answer the event themselves (`hook stop`, `hook
/// stop-failure`, `hook permission-request`): record it too, staying silent about input
/// they already report (not a hook input, no session to file it under).
pub fn record_quietly(agent: Option<HookAgent>, bytes: &[u8], extra: Option<Extra>) -> Vec<String> {
    match parse(agent, bytes) {
        Ok((agent, payload)) => record_payload_quietly(agent, &payload, extra),
        Err(_) => Vec::new(),
    }
}

/// [`record_quietly`] for a payload the door parsed already (in Claude Code's vocabulary).
pub fn record_payload_quietly(
    agent: HookAgent,
    payload: &Payload,
    extra: Option<Extra>,
) -> Vec<String> {
    if HookEnv::from_env().key(payload).is_some() {
        record(agent, payload, extra)
    } else {
        Vec::new()
    }
}

/// A payload of any agent, in Claude Code's vocabulary, and whose it is.
pub fn parse(agent: Option<HookAgent>, bytes: &[u8]) -> Result<(HookAgent, Payload), StdinError> {
    payload_of(agent, session::parse_value(bytes)?)
}

/// [`parse`] from a parsed payload object in its agent's own vocabulary.
pub fn payload_of(
    agent: Option<HookAgent>,
    value: Value,
) -> Result<(HookAgent, Payload), StdinError> {
    let agent = HookAgent::of(agent, &value);
    let value = agents::event_payload(agent, value);
    session::from_value(value).map(|payload| (agent, payload))
}

/// Record one parsed payload of `agent` (see [`record_value`]).
pub fn record(agent: HookAgent, payload: &Payload, extra: Option<Extra>) -> Vec<String> {
    record_via(agent, None, payload, extra)
}

/// [`record`] for an event that came through another channel than the agent's hooks (Codex's
/// app-server).
pub fn record_via(
    agent: HookAgent,
    channel: Option<Channel>,
    payload: &Payload,
    extra: Option<Extra>,
) -> Vec<String> {
    let mut lines = Vec::new();
    let env = HookEnv::from_env();
    let Some(key) = env.key(payload) else {
        return vec![
            "hook event: no $TMUX_PANE, session_id or cwd to file the event under; nothing recorded"
                .to_string(),
        ];
    };
    let store = match Store::from_env() {
        Ok(store) => store,
        Err(err) => return vec![format!("hook event: {err:#}; nothing recorded")],
    };
    let now = match crate::time::now() {
        Ok(now) => now,
        Err(err) => return vec![format!("hook event: {err:#}")],
    };
    let mut warnings = Vec::new();
    let result = store.update(&key, &mut warnings, |previous| {
        let mut transition = match extra {
            Some(Extra::Permission(outcome)) => {
                session::apply_permission(previous, &key, payload, outcome, now)
            }
            _ => session::apply(previous, &key, payload, now),
        };
        if let Some(Extra::Continued(iteration)) = extra {
            session::mark_continued(&mut transition.record, iteration, now);
        }
        transition.record.agent = Some(agent);
        transition.record.channel = channel;
        transition
    });
    lines.extend(warnings.into_iter().map(|w| format!("hook event: {w}")));
    match result {
        Ok(transition) => {
            lines.extend(rebind(payload, &transition));
            if payload.hook_event_name.as_deref() == Some("SessionStart")
                && payload.source.as_deref() == Some("startup")
            {
                // Ages are the file system's (see `fsx::file_system_now`), not the clock's.
                if let Ok(fs_now) = crate::fsx::file_system_now(&store.dir) {
                    store.prune(fs_now);
                }
            }
        }
        Err(err) => lines.push(format!(
            "hook event: cannot record the state in {}: {err:#}",
            store.dir.display()
        )),
    }
    lines
}

/// A `clear`/`compact`/`resume` start rebinds the project's Stop-hook loop from the old
/// session id to the new one, so the loop goes on in the session that replaced its own.
fn rebind(payload: &Payload, transition: &Transition) -> Option<String> {
    let (old, new) = transition.rebind.as_ref()?;
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| payload.cwd.as_deref().map(PathBuf::from))?;
    let host = match crate::lock::System::from_env() {
        Ok(host) => host,
        Err(err) => return Some(format!("hook event: {err:#}")),
    };
    match run::rebind(&LoopDir::new(&project), old, new, &host) {
        Ok(_) => None,
        Err(err) => Some(format!("hook event: cannot rebind the loop: {err:#}")),
    }
}

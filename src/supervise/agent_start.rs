//! Whether the agent a dispatch run launched has started, by its own hooks: what the run's
//! first dispatch into it waits for ([`AgentStart`]).
//!
//! Claude Code 2.1.332 draws its idle input box before it runs its SessionStart hooks (the
//! live tier, two sessions started at once at load 12: the empty box on screen at 30.14 s,
//! the step typed into it at 30.14 s, SessionStart recorded at 30.33 s), so the screen alone
//! cannot say the agent takes keys yet; an earlier live run had its first step typed into a
//! starting Claude Code and left half-typed. Where autoctl's SessionStart hook is wired in
//! the settings the agent reads, the hook's record can say it: that is asked here.
//!
//! The edge reads `/proc` (the agent's working directory and environment: its project and
//! `HOME`) and the agent's settings files; the judging ([`wired`]) is pure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::hook::agents::HookAgent;
use crate::hook::settings;
use crate::pane::Agent;
use crate::pane::view::PaneView;
use crate::supervise::channels::ChannelObs;
use crate::supervise::run::{DispatchInto, Mode, Run};
use crate::supervise::tick::AgentStart;

/// The hook event that says the agent started (Codex's and Gemini's come in Claude Code's
/// name).
pub const EVENT: &str = "SessionStart";

/// Where `run`'s agent is in its start, for its first dispatch: asked only before the first
/// dispatch into an agent the run launched, and the settings read only while the screen shows
/// the agent ready (the one moment the answer decides anything).
pub fn observe(run: &Run, view: Option<&PaneView>, channels: Option<&ChannelObs>) -> AgentStart {
    if run.spec.mode != Mode::Dispatch
        || run.spec.into != DispatchInto::Agent
        || run.dispatch.count > 0
        || run.spec.launch_command.is_none()
    {
        return AgentStart::Unknown;
    }
    let Some(view) = view.filter(|v| v.agent_ready()) else {
        return AgentStart::Unknown;
    };
    if started(channels, run.started_at) {
        return AgentStart::Started;
    }
    let Some(agent) = hook_agent(run.spec.agent) else {
        return AgentStart::Unknown;
    };
    let Some((cwd, env)) = crate::proc::agent_place(view.pid) else {
        return AgentStart::Unknown;
    };
    let texts: Vec<String> = settings_files(agent, &cwd, &env)
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect();
    if wired(agent, &texts) {
        AgentStart::Awaited
    } else {
        AgentStart::Unknown
    }
}

/// The pane's own hook record holds a SessionStart at or after `since` (a record found by the
/// session's id or working directory may be another agent's in the same project).
pub fn started(channels: Option<&ChannelObs>, since: crate::time::Time) -> bool {
    channels
        .filter(|c| c.by == Some("pane"))
        .and_then(|c| c.hook.as_ref())
        .and_then(|hook| hook.events.get(EVENT))
        .is_some_and(|at| *at >= since)
}

/// The agent whose hooks autoctl installs, for a run's agent (`generic` has none).
fn hook_agent(agent: Agent) -> Option<HookAgent> {
    match agent {
        Agent::Claude => Some(HookAgent::Claude),
        Agent::Codex => Some(HookAgent::Codex),
        Agent::Gemini => Some(HookAgent::Gemini),
        Agent::Generic => None,
    }
}

/// The settings files `agent` reads its hooks from, working in `cwd` with environment `env`
/// (the files `doctor` reads for it).
fn settings_files(agent: HookAgent, cwd: &Path, env: &HashMap<String, String>) -> Vec<PathBuf> {
    let var = |name: &str| env.get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME");
    match agent {
        HookAgent::Claude => vec![
            Some(cwd.join(".claude/settings.json")),
            Some(cwd.join(".claude/settings.local.json")),
            var("CLAUDE_CONFIG_DIR")
                .or_else(|| home.map(|h| h.join(".claude")))
                .map(|c| c.join("settings.json")),
            Some(PathBuf::from("/etc/claude-code/managed-settings.json")),
        ],
        HookAgent::Codex => vec![
            Some(cwd.join(".codex/hooks.json")),
            var("CODEX_HOME")
                .or_else(|| home.map(|h| h.join(".codex")))
                .map(|c| c.join("hooks.json")),
        ],
        HookAgent::Gemini => vec![
            Some(cwd.join(".gemini/settings.json")),
            home.map(|h| h.join(".gemini/settings.json")),
        ],
    }
    .into_iter()
    .flatten()
    .collect()
}

/// One of `texts` (the agent's settings files) wires autoctl's SessionStart hook for `agent`.
/// A file that does not parse wires nothing (`doctor` says why).
pub fn wired(agent: HookAgent, texts: &[String]) -> bool {
    let Some(wire) = settings::wiring_for(agent)
        .into_iter()
        .find(|w| w.event == EVENT)
    else {
        return false;
    };
    texts.iter().any(|text| {
        settings::parse(text).is_ok_and(|json| {
            settings::wires(&json, wire.event, wire.subcommand)
                || wire
                    .fallback
                    .is_some_and(|f| settings::wires(&json, wire.event, f))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_autoctls_session_start_hook_counts_as_wired() {
        let ours = r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"/usr/bin/autoctl hook event"}]}]}}"#;
        let other_event =
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"autoctl hook event"}]}]}}"#;
        let not_ours =
            r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}]}}"#;
        assert!(wired(HookAgent::Claude, &[ours.to_string()]));
        assert!(wired(
            HookAgent::Claude,
            &["{not json".to_string(), ours.to_string()]
        ));
        assert!(!wired(HookAgent::Claude, &[other_event.to_string()]));
        assert!(!wired(HookAgent::Claude, &[not_ours.to_string()]));
        assert!(!wired(HookAgent::Claude, &[]));
    }
}

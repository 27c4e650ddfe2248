//! `doctor`'s policy doors (issue 24 item 5): for each agent and each of its permission
//! modes, which doors bring a tool call to autoctl's approval policy, and for the live
//! session's mode, whether any does — said plainly when none does, since then a destructive
//! call runs without the policy ever seeing it.
//!
//! The doors, and the modes in which each is reached (the agents' own documentation, checked
//! against Claude Code 2.1.332, Codex CLI 0.171 and Gemini CLI 0.61):
//!
//! - **PreToolUse** (Claude Code, Codex) / **BeforeTool** (Gemini): runs before every tool
//!   call in every mode, so the floor (`hook pre-tool-use`) sees every call. Codex refuses
//!   an `ask` there, so for Codex the floor can only deny (unattended runs).
//! - **PermissionRequest** (Claude Code, Codex): runs only when the agent is about to ask a
//!   person — never in Claude Code's `bypassPermissions` and `dontAsk`, hardly ever in `auto`
//!   (its classifier decides first), not for edits in `acceptEdits`; never in Codex's `never`
//!   approval policy or its bypass. Gemini has no such hook.
//! - **the screen**: a supervised run's permission box, read by the supervisor — drawn in the
//!   same modes as PermissionRequest (and, in every mode, when the floor asks).

use serde::Serialize;

use crate::doctor::{Check, Level, age};
use crate::hook::agents::HookAgent;
use crate::time::Time;

/// A way a tool call reaches the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Door {
    /// `hook pre-tool-use` (Gemini: its BeforeTool hook).
    PreToolUse,
    /// `hook permission-request`.
    PermissionRequest,
    /// The supervisor reading a permission box on the run's screen.
    Screen,
}

impl Door {
    pub fn as_str(self) -> &'static str {
        match self {
            Door::PreToolUse => "PreToolUse",
            Door::PermissionRequest => "PermissionRequest",
            Door::Screen => "screen",
        }
    }
}

/// Which doors are wired for one agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wiring {
    /// autoctl's `hook pre-tool-use` (BeforeTool for Gemini) is in the agent's hook files.
    pub pre_tool_use: bool,
    /// autoctl's `hook permission-request` is.
    pub permission_request: bool,
    /// A supervised run of this agent reads its screen.
    pub screen: bool,
}

/// The agent's permission modes, in the words its payloads and flags use.
pub fn modes(agent: HookAgent) -> &'static [&'static str] {
    match agent {
        HookAgent::Claude => &[
            "default",
            "acceptEdits",
            "plan",
            "auto",
            "dontAsk",
            "bypassPermissions",
        ],
        // Codex's approval policies (`-a`), and its bypass (`--yolo`).
        HookAgent::Codex => &["untrusted", "on-request", "never", "bypass"],
        HookAgent::Gemini => &["default", "auto_edit", "yolo"],
    }
}

/// Does the agent ask a person (and so fire PermissionRequest, draw a box) in this mode?
fn asks_in(agent: HookAgent, mode: &str) -> bool {
    match agent {
        HookAgent::Claude => matches!(mode, "default" | "acceptEdits" | "plan"),
        HookAgent::Codex => matches!(mode, "untrusted" | "on-request"),
        HookAgent::Gemini => matches!(mode, "default" | "auto_edit"),
    }
}

/// The doors wired for `agent` that a tool call reaches in `mode`. An unknown mode is read
/// as one that never asks (only PreToolUse is sure to run).
pub fn doors(agent: HookAgent, mode: &str, wiring: Wiring) -> Vec<Door> {
    let mut doors = Vec::new();
    if wiring.pre_tool_use {
        doors.push(Door::PreToolUse);
    }
    let asks = asks_in(agent, mode);
    if asks && wiring.permission_request && agent != HookAgent::Gemini {
        doors.push(Door::PermissionRequest);
    }
    if asks && wiring.screen {
        doors.push(Door::Screen);
    }
    doors
}

fn list(doors: &[Door]) -> String {
    if doors.is_empty() {
        "none".to_string()
    } else {
        doors
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The `policy doors` check of one agent: every mode's doors, and a verdict on the live
/// session's mode (`live`: the mode and when a hook last reported it). A live mode no door
/// reaches fails; without a PreToolUse door some mode always goes unseen, which warns.
pub fn judge(
    scope: &str,
    agent: HookAgent,
    wiring: Wiring,
    live: Option<(&str, Time)>,
    now: Time,
) -> Check {
    let table = modes(agent)
        .iter()
        .map(|mode| format!("{mode}: {}", list(&doors(agent, mode, wiring))))
        .collect::<Vec<_>>()
        .join("; ");
    let floor = match agent {
        HookAgent::Gemini => {
            "`autoctl hook install --agent gemini` wires BeforeTool, the floor in every mode"
        }
        HookAgent::Codex => {
            "`autoctl hook install --agent codex` wires PreToolUse, the floor in every mode"
        }
        HookAgent::Claude => {
            "`autoctl hook install` wires PreToolUse, the floor in every mode; restart the agent (hooks load at start)"
        }
    };
    if let Some((mode, at)) = live {
        let reached = doors(agent, mode, wiring);
        if reached.is_empty() {
            return Check::new(
                scope,
                "policy doors",
                Level::Fail,
                format!(
                    "live mode {mode} (reported {} ago): no door reaches the policy — a destructive call runs without it; by mode: {table}",
                    age(at, now)
                ),
            )
            .fix(floor);
        }
        let level = if wiring.pre_tool_use {
            Level::Ok
        } else {
            Level::Warn
        };
        let check = Check::new(
            scope,
            "policy doors",
            level,
            format!(
                "live mode {mode} (reported {} ago): {}; by mode: {table}",
                age(at, now),
                list(&reached)
            ),
        );
        return if wiring.pre_tool_use {
            check
        } else {
            check.fix(floor)
        };
    }
    let unseen: Vec<&str> = modes(agent)
        .iter()
        .copied()
        .filter(|mode| doors(agent, mode, wiring).is_empty())
        .collect();
    if unseen.is_empty() {
        Check::new(
            scope,
            "policy doors",
            Level::Ok,
            format!("live mode not reported yet; every mode reaches the policy: {table}"),
        )
    } else {
        Check::new(
            scope,
            "policy doors",
            Level::Warn,
            format!(
                "live mode not reported yet; no door reaches the policy in {}: {table}",
                unseen.join(", ")
            ),
        )
        .fix(floor)
    }
}

/// What an agent's hook files wire of the two policy doors: `hook pre-tool-use` on
/// PreToolUse (Gemini: BeforeTool), `hook permission-request` on PermissionRequest. Files that
/// do not parse wire nothing. (`hook event` on PreToolUse, the fallback of an older autoctl,
/// records the call but decides nothing: it is no door.)
pub fn wiring_in(agent: HookAgent, texts: &[String]) -> Wiring {
    let mut wiring = Wiring::default();
    let before = if agent == HookAgent::Gemini {
        "BeforeTool"
    } else {
        "PreToolUse"
    };
    for text in texts {
        let Ok(settings) = crate::hook::settings::parse(text) else {
            continue;
        };
        wiring.pre_tool_use |= crate::hook::settings::wires(&settings, before, "pre-tool-use");
        wiring.permission_request |= agent != HookAgent::Gemini
            && crate::hook::settings::wires(&settings, "PermissionRequest", "permission-request");
    }
    wiring
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Time {
        crate::time::parse_time("2026-11-28T12:00:00Z").unwrap()
    }

    const ALL: Wiring = Wiring {
        pre_tool_use: true,
        permission_request: true,
        screen: true,
    };

    #[test]
    fn pre_tool_use_reaches_every_mode_and_permission_request_only_where_the_agent_asks() {
        for agent in [HookAgent::Claude, HookAgent::Codex, HookAgent::Gemini] {
            for mode in modes(agent) {
                assert_eq!(
                    doors(agent, mode, ALL)[0],
                    Door::PreToolUse,
                    "{agent:?} {mode}"
                );
            }
        }
        assert_eq!(
            doors(HookAgent::Claude, "default", ALL),
            [Door::PreToolUse, Door::PermissionRequest, Door::Screen]
        );
        for mode in ["auto", "dontAsk", "bypassPermissions", "unknown-new-mode"] {
            assert_eq!(
                doors(HookAgent::Claude, mode, ALL),
                [Door::PreToolUse],
                "{mode}"
            );
        }
        assert_eq!(doors(HookAgent::Codex, "never", ALL), [Door::PreToolUse]);
        assert_eq!(
            doors(HookAgent::Gemini, "default", ALL),
            [Door::PreToolUse, Door::Screen],
            "Gemini has no PermissionRequest hook"
        );
    }

    #[test]
    fn wiring_is_read_from_the_hook_files() {
        let claude = r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"autoctl hook pre-tool-use"}]}],
            "PermissionRequest":[{"hooks":[{"type":"command","command":"/usr/bin/autoctl hook permission-request"}]}]}}"#;
        let w = wiring_in(HookAgent::Claude, &[claude.to_string()]);
        assert!(w.pre_tool_use && w.permission_request && !w.screen);
        let fallback = r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"autoctl hook event"}]}]}}"#;
        assert_eq!(
            wiring_in(HookAgent::Claude, &[fallback.to_string()]),
            Wiring::default()
        );
        let gemini = r#"{"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","command":"autoctl hook pre-tool-use --agent gemini"}]}]}}"#;
        assert!(
            wiring_in(
                HookAgent::Gemini,
                &[gemini.to_string(), "not json".to_string()]
            )
            .pre_tool_use
        );
    }

    #[test]
    fn a_live_mode_no_door_reaches_fails_plainly() {
        let old = Wiring {
            pre_tool_use: false,
            permission_request: true,
            screen: true,
        };
        let check = judge(
            "claude",
            HookAgent::Claude,
            old,
            Some(("bypassPermissions", at())),
            at(),
        );
        assert_eq!(check.level, Level::Fail);
        assert!(
            check.detail.contains("no door reaches the policy"),
            "{}",
            check.detail
        );
        assert!(
            check.detail.contains("bypassPermissions: none"),
            "{}",
            check.detail
        );
        let fine = judge(
            "claude",
            HookAgent::Claude,
            old,
            Some(("default", at())),
            at(),
        );
        assert_eq!(fine.level, Level::Warn, "a mode switch away from unseen");
        assert!(
            fine.detail
                .contains("live mode default (reported 0s ago): PermissionRequest, screen"),
            "{}",
            fine.detail
        );
        let wired = judge(
            "claude",
            HookAgent::Claude,
            ALL,
            Some(("bypassPermissions", at())),
            at(),
        );
        assert_eq!(wired.level, Level::Ok);
        let unknown = judge("codex", HookAgent::Codex, old, None, at());
        assert_eq!(unknown.level, Level::Warn);
        assert!(
            unknown
                .detail
                .contains("no door reaches the policy in never, bypass"),
            "{}",
            unknown.detail
        );
        assert_eq!(
            judge("gemini", HookAgent::Gemini, ALL, None, at()).level,
            Level::Ok
        );
    }
}

//! The floor: the question every agent's pre-tool door asks before a tool runs — Claude Code's
//! PreToolUse hook, Codex's PreToolUse and PermissionRequest hooks, Gemini CLI's BeforeTool
//! hook — and its answer in every permission mode.
//!
//! A permission mode decides which calls an agent shows a person (default and plan ask for
//! most; acceptEdits lets edits through; auto asks a classifier; bypassPermissions asks for
//! nothing). The PermissionRequest door ([`super::request`]) only sees the calls a mode still
//! asks about, so in auto and bypass mode a destructive call would never reach the policy.
//! The floor sees every call, and answers only the ones the policy names destructive:
//!
//! | the policy says | a person may answer | unattended |
//! | --- | --- | --- |
//! | destructive (the built-in set, a sensitive path, an unreadable command) | **ask**: the agent draws its permission box in every mode, and the supervisor escalates it | **deny**, with the rule and a one-line reason the model is told |
//! | a user's deny rule | deny | deny |
//! | anything else | no decision: the agent's own flow (its mode, PermissionRequest) is untouched | no decision |
//!
//! A run is unattended when `run start --unattended` marked its pane, when the agent's
//! environment has `AUTOCTL_UNATTENDED=1`, or when the policy file says `on_destructive:
//! "deny"` (the edge works that out; here it is an [`Attendance`]).
//!
//! **Agent-neutral.** [`judge`] takes a tool call in Claude Code's vocabulary (tool names
//! `Bash`, `Write`, `Edit`, `Read`, …; inputs `{"command"}`, `{"file_path"}`), where it runs,
//! and the attendance, and returns a [`Floor`]; each agent's door maps its payload into that
//! vocabulary and the answer into its output.

use serde::Serialize;
use serde_json::Value;

use super::{Context, Decision, Policy, Verdict, decide, one_line};

/// Whether a person may answer a prompt for this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attendance {
    /// A person may answer: a destructive call is asked about.
    Attended,
    /// Nobody will answer (`run start --unattended`, `AUTOCTL_UNATTENDED=1`,
    /// `on_destructive: "deny"`): a destructive call is denied.
    Unattended,
}

/// An agent's permission mode, as its payload names it (Claude Code's `permission_mode`).
/// Recorded with each decision; the floor answers the same in every mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// `default`: the agent asks before most calls.
    Default,
    /// `acceptEdits`: file edits run without asking.
    AcceptEdits,
    /// `plan`: nothing that changes anything runs.
    Plan,
    /// `auto`: a classifier decides.
    Auto,
    /// `dontAsk`: what is not pre-approved is denied.
    DontAsk,
    /// `bypassPermissions`: nothing is asked.
    BypassPermissions,
    /// A mode this release does not know (or none given).
    Unknown,
}

impl Mode {
    /// Read a payload's `permission_mode`.
    pub fn parse(text: Option<&str>) -> Mode {
        match text {
            Some("default") => Mode::Default,
            Some("acceptEdits") => Mode::AcceptEdits,
            Some("plan") => Mode::Plan,
            Some("auto") => Mode::Auto,
            Some("dontAsk") => Mode::DontAsk,
            Some("bypassPermissions") => Mode::BypassPermissions,
            _ => Mode::Unknown,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
            Mode::Auto => "auto",
            Mode::DontAsk => "dontAsk",
            Mode::BypassPermissions => "bypassPermissions",
            Mode::Unknown => "unknown",
        }
    }

    /// Every mode an agent has, for `doctor`.
    pub const ALL: [Mode; 6] = [
        Mode::Default,
        Mode::AcceptEdits,
        Mode::Plan,
        Mode::Auto,
        Mode::DontAsk,
        Mode::BypassPermissions,
    ];
}

/// What the floor answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Show the agent's permission prompt, whatever the mode.
    Ask,
    /// Refuse the call; the model is told why.
    Deny,
    /// No decision: the agent's own flow goes on.
    Pass,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Ask => "ask",
            Answer::Deny => "deny",
            Answer::Pass => "no-decision",
        }
    }
}

/// The floor's answer, with the engine's decision that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Floor {
    pub answer: Answer,
    /// The deciding rule (`destructive:rm`, `user:no-prod`, …).
    pub rule: String,
    /// One line for the person (ask) or the model (deny): the rule and what it saw.
    pub reason: String,
    /// The engine's own decision (what PermissionRequest would answer).
    #[serde(skip)]
    pub decision: Decision,
}

/// Judge one tool call at the floor (see the module doc).
pub fn judge(
    policy: &Policy,
    tool: &str,
    input: &Value,
    ctx: &Context,
    attendance: Attendance,
) -> Floor {
    answer(decide(policy, tool, input, ctx), attendance, true)
}

/// Whether the floor stops this call (asks or denies): only then does its answer depend on
/// the [`Attendance`], which a door may therefore leave unread for every other call.
pub fn stops(decision: &Decision) -> bool {
    match decision.decision {
        Verdict::Deny => true,
        Verdict::NoDecision => decision.rule.starts_with("destructive:"),
        Verdict::Allow => false,
    }
}

/// The floor's answer to the engine's decision on a call (one agent's call may be several:
/// the door decides them as one). `can_ask`: the agent can be told to ask a person before a
/// tool runs (Codex 0.171 cannot: it runs the tool when told to ask, so the floor denies).
pub fn answer(decision: Decision, attendance: Attendance, can_ask: bool) -> Floor {
    let answer = match decision.decision {
        Verdict::Deny => Answer::Deny,
        Verdict::NoDecision if stops(&decision) => match attendance {
            Attendance::Attended if can_ask => Answer::Ask,
            Attendance::Attended | Attendance::Unattended => Answer::Deny,
        },
        Verdict::NoDecision | Verdict::Allow => Answer::Pass,
    };
    let reason = match answer {
        Answer::Deny if !can_ask && attendance == Attendance::Attended => format!(
            "autoctl policy ({}): {}. This agent cannot ask a person before a tool runs, so it is refused; ask the person to run it, or find a way that does not need it.",
            decision.rule,
            one_line(&decision.reason, 300)
        ),
        Answer::Deny => decision.message.clone().unwrap_or_else(|| {
            format!(
                "autoctl policy ({}): {}. Nobody is watching this run to approve it; find a way that does not need it.",
                decision.rule,
                one_line(&decision.reason, 300)
            )
        }),
        Answer::Ask => format!(
            "autoctl policy ({}): {}",
            decision.rule,
            one_line(&decision.reason, 300)
        ),
        Answer::Pass => one_line(&decision.reason, 300),
    };
    Floor {
        answer,
        rule: decision.rule.clone(),
        reason,
        decision,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::policy::OnDestructive;

    fn ctx() -> Context {
        Context {
            cwd: Some(PathBuf::from("/home/dev/proj")),
            project: None,
            home: Some(PathBuf::from("/home/dev")),
            protected: vec![PathBuf::from("/home/dev/.config/autoctl")],
            git_top: true,
        }
    }

    fn bash(command: &str) -> Value {
        json!({ "command": command })
    }

    #[test]
    fn destructive_calls_are_asked_or_denied_and_the_rest_pass() {
        let policy = Policy::builtin();
        let asked = judge(
            &policy,
            "Bash",
            &bash("rm -rf build"),
            &ctx(),
            Attendance::Attended,
        );
        assert_eq!(asked.answer, Answer::Ask);
        assert_eq!(asked.rule, "destructive:rm");
        assert!(
            asked.reason.contains("rm deletes files"),
            "{}",
            asked.reason
        );
        let denied = judge(
            &policy,
            "Bash",
            &bash("rm -rf build"),
            &ctx(),
            Attendance::Unattended,
        );
        assert_eq!(denied.answer, Answer::Deny);
        assert!(
            denied.reason.contains("destructive:rm"),
            "{}",
            denied.reason
        );
        for (tool, input) in [
            ("Bash", bash("cargo test")),
            ("Bash", bash("make deploy")),
            ("Write", json!({"file_path": "src/a.rs"})),
            ("WebFetch", json!({"url": "https://example.com"})),
            ("mcp__github__get_issue", json!({})),
        ] {
            for attendance in [Attendance::Attended, Attendance::Unattended] {
                let floor = judge(&policy, tool, &input, &ctx(), attendance);
                assert_eq!(floor.answer, Answer::Pass, "{tool} {input}: {floor:?}");
            }
        }
        // A sensitive path is named destructive: asked even in a mode that edits freely.
        let settings = judge(
            &policy,
            "Write",
            &json!({"file_path": ".claude/settings.json"}),
            &ctx(),
            Attendance::Attended,
        );
        assert_eq!(settings.answer, Answer::Ask);
    }

    #[test]
    fn a_user_deny_rule_denies_at_the_floor_even_when_attended() {
        let policy = Policy::from_bytes(
            br#"{"deny":[{"id":"no-prod","tool":"Bash","pattern":"*--env=prod*","message":"never prod"}]}"#,
            "p.json",
        )
        .unwrap();
        let floor = judge(
            &policy,
            "Bash",
            &bash("./deploy.sh --env=prod"),
            &ctx(),
            Attendance::Attended,
        );
        assert_eq!(floor.answer, Answer::Deny);
        assert!(floor.reason.contains("never prod"));
        let on_deny = Policy {
            on_destructive: OnDestructive::Deny,
            ..Policy::builtin()
        };
        let floor = judge(
            &on_deny,
            "Bash",
            &bash("git push --force"),
            &ctx(),
            Attendance::Attended,
        );
        assert_eq!(floor.answer, Answer::Deny);
    }

    /// A door reads the attendance only for a call [`stops`] names (issue 24's cost): for
    /// every other decision the answer is the same whoever is watching, and it is a pass.
    #[test]
    fn only_a_stopped_call_depends_on_the_attendance() {
        let rules = [
            "destructive:rm",
            "read-only",
            "not-harmless",
            "user:no-prod",
        ];
        for verdict in [Verdict::Allow, Verdict::Deny, Verdict::NoDecision] {
            for rule in rules {
                for can_ask in [true, false] {
                    let decision = Decision {
                        decision: verdict,
                        rule: rule.to_string(),
                        reason: "why".to_string(),
                        message: None,
                    };
                    let attended = answer(decision.clone(), Attendance::Attended, can_ask);
                    let unattended = answer(decision.clone(), Attendance::Unattended, can_ask);
                    let case = format!("{verdict:?} {rule} can_ask={can_ask}");
                    assert_eq!(stops(&decision), attended.answer != Answer::Pass, "{case}");
                    assert_eq!(
                        stops(&decision),
                        unattended.answer != Answer::Pass,
                        "{case}"
                    );
                    if !stops(&decision) {
                        assert_eq!(attended, unattended, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn modes_are_read_from_the_payload() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(Some(mode.as_str())), mode);
        }
        assert_eq!(Mode::parse(Some("yolo")), Mode::Unknown);
        assert_eq!(Mode::parse(None), Mode::Unknown);
    }
}

//! Reading a pane: normalization and hashing ([`normalize`]), a captured screen and its
//! boxes and menus ([`screen`]), the rules as data ([`rules`]), the classifier ([`classify`])
//! and its safety policy, which alone lets autoctl answer ([`classify::safety`]), quota reset
//! times ([`reset`]), the agent's messages on a Claude Code screen ([`message`]), and one
//! capture read whole — classified, hashed, ready or not ([`view`]). The reading of a command
//! under approval is the policy's ([`crate::policy`]).
//!
//! Everything here is pure: a screen (text plus the pane's foreground command) and a clock go
//! in, a classification comes out. tmux lives in [`crate::tmux`]; the commands in
//! [`crate::cmd::pane`].

pub mod classify;
pub mod corpus;
pub mod message;
pub mod normalize;
pub mod reset;
pub mod rules;
pub mod screen;
pub mod view;
pub mod waiting;

use serde::{Deserialize, Serialize};

/// What a pane shows (DESIGN.md "Reading a pane").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Working,
    Idle,
    Permission,
    YesNo,
    Continue,
    Quota,
    RateLimit,
    ApiError,
    Shell,
    Trust,
    Auth,
    Picker,
    Unknown,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Working => "working",
            Class::Idle => "idle",
            Class::Permission => "permission",
            Class::YesNo => "yes-no",
            Class::Continue => "continue",
            Class::Quota => "quota",
            Class::RateLimit => "rate-limit",
            Class::ApiError => "api-error",
            Class::Shell => "shell",
            Class::Trust => "trust",
            Class::Auth => "auth",
            Class::Picker => "picker",
            Class::Unknown => "unknown",
        }
    }
}

/// What a supervisor should do about a pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Nothing (busy, idle, or nothing recognised).
    None,
    /// A limit the clock clears: not a stall, no recovery spent.
    Wait,
    /// Type the rule's keys.
    Answer,
    /// A person must decide; never answered automatically.
    Escalate,
    /// The agent exited; start it again if the loop says so.
    Restart,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::None => "none",
            Action::Wait => "wait",
            Action::Answer => "answer",
            Action::Escalate => "escalate",
            Action::Restart => "restart",
        }
    }
}

/// One thing to type: literal text (`send-keys -l`) or a named key (`Enter`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Key {
    Text(String),
    Key(String),
}

/// Whose screen the classifier reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// Claude Code: act only when the agent itself is the pane's foreground command
    #[default]
    Claude,
    /// OpenAI Codex CLI: act only when Codex's own screen is in front (it runs under node)
    Codex,
    /// Google Gemini CLI: act only when Gemini's own screen is in front (it runs under node)
    Gemini,
    /// Any program: read its prompts and apply the same safety policy
    Generic,
}

impl Agent {
    pub const ALL: [Agent; 4] = [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Generic];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Generic => "generic",
        }
    }

    /// The agent named `text` (as [`Agent::as_str`] prints it; stored in a run, written in a
    /// rules file or an expected.tsv).
    pub fn parse(text: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// An agent with a screen of its own: only that screen is ever answered (DESIGN.md "Who
    /// may be answered"); `generic` reads any program's prompts.
    pub fn is_agent(self) -> bool {
        self != Agent::Generic
    }
}

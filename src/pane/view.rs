//! One capture of a pane, read: classified, hashed and its agent messages found — the
//! [`PaneView`] every supervisor decides on (`run tick`, `run watch`, `stall check`, `run
//! continue`, `pane ready`).
//!
//! "Ready" is defined here once ([`PaneView::readiness`]): a shell is the pane's foreground
//! command and its prompt line is on the screen, so typed text is a command line and not
//! input to a running program, a heredoc's `> ` or a half-typed line.

use chrono::{DateTime, Utc};

use super::classify::{self, Classification, Lens};
use super::message::{self, Messages};
use super::reset::Zone;
use super::rules::RuleSet;
use super::screen::Screen;
use super::waiting::{self, Waiting};
use super::{Agent, Class, normalize};
use crate::policy::screen::Approval;
use crate::tmux::Snapshot;

/// One capture, classified.
#[derive(Debug, Clone)]
pub struct PaneView {
    pub pane_id: String,
    /// `#{pane_pid}`: the pane's first process (the shell, or the agent run directly).
    pub pid: u32,
    pub foreground: String,
    /// The foreground command is a shell (so nothing runs in the pane).
    pub foreground_is_shell: bool,
    /// The pane's program exited and tmux keeps the pane (`remain-on-exit`).
    pub dead: bool,
    /// Normalized hash of the screen.
    pub hash: String,
    /// What a person would be asked to decide on this screen: the classification's key (the
    /// prompt's question and call), else the screen hash. Escalations, acknowledgements and
    /// notifications are keyed by it, so a redrawn or blinking prompt is one event.
    pub key: String,
    pub classification: Classification,
    /// The screen hash the pane remembers as answered (by any supervisor).
    pub answered_marker: Option<String>,
    /// The agent's messages on screen (Claude Code screens).
    pub messages: Option<MessageMark>,
    /// The tmux server's socket path: the agent's hooks key their state by it and the pane.
    pub socket: Option<String>,
    /// What the screen says about waiting: the input box, an error, a usage limit
    /// ([`super::waiting`]).
    pub waiting: Waiting,
    /// The capture itself (wrapped lines joined): a dispatch looks for the command it typed.
    pub text: String,
}

/// Read one capture: classify it as `agent`'s screen (quota reset times relative to `now`,
/// in `zone`), hash it with the rules' masks, and find the agent's messages.
pub fn view(
    snap: &Snapshot,
    agent: Agent,
    rules: &RuleSet,
    now: DateTime<Utc>,
    zone: Zone,
) -> PaneView {
    view_with(snap, agent, rules, Approval::builtin(), now, zone)
}

/// [`view`] with the approval policy prompts are answered by.
pub fn view_with(
    snap: &Snapshot,
    agent: Agent,
    rules: &RuleSet,
    approval: &'static Approval,
    now: DateTime<Utc>,
    zone: Zone,
) -> PaneView {
    let ctx = Lens {
        agent,
        now,
        zone,
        approval,
    };
    let screen = Screen::from_text(&snap.text, Some(snap.pane.command.clone()));
    let hash = normalize::hash(&snap.text, &rules.masks);
    let classification = classify::classify(&screen, rules, &ctx);
    PaneView {
        pane_id: snap.pane.id.clone(),
        pid: snap.pane.pid,
        foreground: snap.pane.command.clone(),
        foreground_is_shell: rules.is_shell(&snap.pane.command),
        dead: snap.pane.dead,
        key: classification.key.clone().unwrap_or_else(|| hash.clone()),
        hash,
        classification,
        answered_marker: snap.pane.answered.clone(),
        messages: messages(agent, &snap.text),
        socket: snap.pane.socket.clone(),
        waiting: waiting::read_with(&snap.text, now, zone, &rules.facts),
        text: snap.text.clone(),
    }
}

/// Whether a pane takes a typed command now, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// A shell prompt is in front and no command runs.
    Ready,
    /// The pane's program has exited (a dead pane takes no keys).
    Dead,
    /// A program other than a shell is in front.
    Busy { foreground: String },
    /// A shell is in front but its prompt line is not on the screen (it prints output,
    /// waits on a heredoc's `> `, holds a half-typed line).
    NoPrompt { class: Class },
}

impl Readiness {
    pub fn is_ready(&self) -> bool {
        *self == Readiness::Ready
    }

    /// One line for people.
    pub fn reason(&self) -> String {
        match self {
            Readiness::Ready => "a shell prompt is in front".to_string(),
            Readiness::Dead => "the pane's program has exited (dead pane)".to_string(),
            Readiness::Busy { foreground } => format!("{foreground:?} is running"),
            Readiness::NoPrompt { class } => {
                format!("no shell prompt on the last line ({})", class.as_str())
            }
        }
    }
}

impl PaneView {
    /// Does the pane take a typed command now: the agent has exited (observe mode) or the
    /// pane is ready for the next step (dispatch mode, `pane ready`, `run start --launch`)?
    pub fn readiness(&self) -> Readiness {
        let c = &self.classification;
        if self.dead {
            Readiness::Dead
        } else if !self.foreground_is_shell {
            Readiness::Busy {
                foreground: self.foreground.clone(),
            }
        } else if c.class == Class::Shell && c.prompt_visible {
            Readiness::Ready
        } else {
            Readiness::NoPrompt { class: c.class }
        }
    }

    /// [`PaneView::readiness`] is [`Readiness::Ready`].
    pub fn shell_ready(&self) -> bool {
        self.readiness().is_ready()
    }

    /// The agent (not a shell) sits idle at its own empty input box, with no menu, spinner,
    /// error or limit on screen: what it reads next is a prompt (dispatch `--into agent`).
    pub fn agent_ready(&self) -> bool {
        !self.dead
            && !self.foreground_is_shell
            && self.classification.class == Class::Idle
            && self.waiting.idle_at_input()
            && self.waiting.error.is_none()
            && self.waiting.limit.is_none()
    }

    /// Why the agent does not take a prompt now, for a dispatch that waits.
    pub fn agent_readiness(&self) -> String {
        if self.dead {
            return "the pane's program has exited (dead pane)".to_string();
        }
        if self.foreground_is_shell {
            return "a shell is in front, not the agent".to_string();
        }
        let input = match &self.waiting.input {
            super::waiting::Input::Absent => "no input box",
            super::waiting::Input::Empty => "its input box is empty",
            super::waiting::Input::Typed(_) => "its input box holds text",
        };
        format!(
            "{} is {} ({input}{})",
            self.foreground,
            self.classification.class.as_str(),
            if self.waiting.busy { ", busy" } else { "" }
        )
    }

    /// The screen shows `command` on a line above its last one (typed and submitted: the
    /// shell's history line or the agent's echo of the prompt), whitespace runs ignored.
    pub fn shows_submitted(&self, command: &str) -> bool {
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let command = squash(command);
        if command.is_empty() {
            return false;
        }
        let lines: Vec<&str> = self.text.trim_end().lines().collect();
        let Some((_, above)) = lines.split_last() else {
            return false;
        };
        above.iter().any(|line| squash(line).contains(&command))
    }
}

/// What one screen shows of the agent's messages (see [`super::message`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageMark {
    /// The latest text message, when the agent's last block is one.
    pub latest: Option<String>,
    /// How many times in a row the screen shows it.
    pub visible: u32,
    /// `visible` is the whole run of copies (the screen shows what came before it, or the
    /// count comes from the hooks): a count kept between heartbeats gives way to it.
    pub run_known: bool,
    /// Fingerprint of all blocks on screen.
    pub fingerprint: String,
}

impl MessageMark {
    pub fn of(messages: &Messages) -> MessageMark {
        MessageMark {
            latest: messages.latest().map(str::to_string),
            visible: messages.trailing_repeats(),
            run_known: messages.run_known,
            fingerprint: messages.fingerprint.clone(),
        }
    }
}

/// The agent's messages, on the screens whose messages autoctl can read (Claude Code's).
pub fn messages(agent: Agent, screen: &str) -> Option<MessageMark> {
    (agent == Agent::Claude).then(|| MessageMark::of(&message::claude(screen)))
}

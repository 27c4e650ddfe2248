//! What a person or a script is told (`--notify CMD`): the events a tick announces, once
//! each, and the JSON object a notify command reads on its stdin (schema: `autoctl schema
//! show notify-event`).
//!
//! Events come from changes of the run's row decided under its claim (a wait opened, a
//! resume typed, the run ended, a person needed), so two drivers never announce the same
//! change: the one that holds the claim decides it, and the row it saves says it is done.

use serde::Serialize;

use crate::supervise::tick::{RunAfter, TickEvent};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A person must decide (the run enters `needs-person`).
    Escalate,
    /// The run still needs a person (`--renotify` after the escalation).
    NeedsPerson,
    /// The resume text was typed.
    Resume,
    /// A usage-limit wait began or ended.
    QuotaWaitStart,
    QuotaWaitEnd,
    /// The run ended: stopped, finished, lost, or the agent exited.
    Stop,
    Finish,
    Lost,
    Exit,
    /// The stall recovery budget is spent.
    StallLimit,
    /// The agent was started again (`--launch`).
    Restart,
    /// The run's account reached its weekly reserve (announced once per account and reset).
    WeeklyReserve,
    /// The run's host stopped renewing its lease (announced once per loss, by the first
    /// host that notices).
    HostLost,
}

impl EventKind {
    pub const ALL: [EventKind; 13] = [
        EventKind::Escalate,
        EventKind::NeedsPerson,
        EventKind::Resume,
        EventKind::QuotaWaitStart,
        EventKind::QuotaWaitEnd,
        EventKind::Stop,
        EventKind::Finish,
        EventKind::Lost,
        EventKind::Exit,
        EventKind::StallLimit,
        EventKind::Restart,
        EventKind::WeeklyReserve,
        EventKind::HostLost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Escalate => "escalate",
            EventKind::NeedsPerson => "needs-person",
            EventKind::Resume => "resume",
            EventKind::QuotaWaitStart => "quota-wait-start",
            EventKind::QuotaWaitEnd => "quota-wait-end",
            EventKind::Stop => "stop",
            EventKind::Finish => "finish",
            EventKind::Lost => "lost",
            EventKind::Exit => "exit",
            EventKind::StallLimit => "stall-limit",
            EventKind::Restart => "restart",
            EventKind::WeeklyReserve => "weekly-reserve",
            EventKind::HostLost => "host-lost",
        }
    }
}

/// One event a tick announces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notice {
    pub event: EventKind,
    pub reason: String,
    /// For `escalate`, `needs-person` and an escalation's `stall-limit`: what the person is
    /// asked to decide ([`crate::pane::view::PaneView::key`] — the prompt's question and
    /// call, else the screen's hash). A prompt that is redrawn or blinks keeps its key, so
    /// one session's `escalate` notices with one key are one event: the key is what a
    /// receiver (the notification outbox) dedupes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Its id in the run's notification outbox ([`crate::supervise::outbox`]): the same at
    /// every delivery of this notice, for a receiver to dedupe on. Set when the notice is
    /// stored with its decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The object a notify command reads on stdin (schema: `autoctl schema show notify-event`).
#[derive(Debug, Clone, Serialize)]
pub struct NotifyEvent<'a> {
    /// Stable across redeliveries (see [`Notice::id`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    pub event: EventKind,
    pub time: &'a str,
    pub session: &'a str,
    pub task: &'a str,
    pub reason: &'a str,
    /// What the person is asked to decide, for an escalation (see [`Notice::key`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<&'a str>,
    /// The tick's one-word decision.
    pub decision: &'a str,
    /// The run after the tick (status, iteration, needs-person, ...), as in `run tick`'s line.
    pub run: &'a RunAfter,
}

impl<'a> NotifyEvent<'a> {
    pub fn of(event: &'a TickEvent, notice: &'a Notice) -> NotifyEvent<'a> {
        NotifyEvent {
            id: notice.id.as_deref(),
            event: notice.event,
            time: &event.time,
            session: &event.session,
            task: &event.task,
            reason: &notice.reason,
            key: notice.key.as_deref(),
            decision: event.decision.as_str(),
            run: &event.run,
        }
    }
}

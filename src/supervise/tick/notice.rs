//! What a person or a script is told (`--notify CMD`): the events a tick announces, once
//! each, and the JSON object a notify command reads on its stdin (schema: `autoctl schema
//! show notify-event`), and their entries in the run's outbox ([`add`]: each with a stable id,
//! [`id_of`] or [`once_id`]).
//!
//! Events come from changes of the run's row decided under its claim (a wait opened, a
//! resume typed, the run ended, a person needed), so two drivers never announce the same
//! change: the one that holds the claim decides it, and the row it saves says it is done.

use serde::Serialize;

use crate::supervise::outbox::{DELIVERY_LEASE, Entry};
use crate::supervise::tick::{RunAfter, TickEvent};
use crate::time::{Time, plus};

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

/// The id of one notice: an escalation (and its reminders' and stall limit's key) by what the
/// person is asked in which iteration of which run; every other event by its run, kind, time
/// and reason.
pub fn id_of(event: &TickEvent, started_at: Time, notice: &Notice) -> String {
    let mut seed = format!(
        "{}\u{0}{}\u{0}{}",
        event.session,
        crate::time::format_time(started_at),
        notice.event.as_str()
    );
    match (&notice.key, notice.event) {
        (Some(key), EventKind::Escalate) => {
            seed.push_str(&format!("\u{0}{key}\u{0}{}", event.run.iteration));
        }
        _ => {
            seed.push_str(&format!(
                "\u{0}{}\u{0}{}\u{0}{}",
                event.time,
                notice.key.as_deref().unwrap_or(""),
                notice.reason
            ));
        }
    }
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(seed.as_bytes()))
}

/// The id of a notice announced once for something no single run decides — the weekly
/// reserve of an account for one reset, the loss of a host for one lapsed lease — from its
/// kind and what names it: the same from every run and host that stores it.
pub fn once_id(kind: EventKind, names: &[&str]) -> String {
    let mut seed = kind.as_str().to_string();
    for name in names {
        seed.push('\u{0}');
        seed.push_str(name);
    }
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(seed.as_bytes()))
}

/// Add a tick's notices to `outbox`, leased to the adding tick until `now +`
/// [`DELIVERY_LEASE`]. A notice whose id is already there (pending or delivered) is not added
/// again and is dropped from `event.notify`: it was announced, or is being. Each notice kept
/// gets its id ([`id_of`], unless it came with one: [`once_id`]).
pub fn add(outbox: &mut Vec<Entry>, event: &mut TickEvent, started_at: Time, now: Time) {
    let mut notices = std::mem::take(&mut event.notify);
    notices.retain_mut(|notice| {
        let id = notice
            .id
            .take()
            .unwrap_or_else(|| id_of(event, started_at, notice));
        if outbox.iter().any(|entry| entry.id == id) {
            return false;
        }
        notice.id = Some(id);
        true
    });
    event.notify = notices;
    for notice in &event.notify {
        outbox.push(entry(event, notice, now));
    }
}

/// The outbox entry of one notice of `event` (its id set), leased to the storing tick until
/// `now +` [`DELIVERY_LEASE`].
pub fn entry(event: &TickEvent, notice: &Notice, now: Time) -> Entry {
    let payload = NotifyEvent::of(event, notice);
    Entry {
        id: notice.id.clone().unwrap_or_default(),
        event: notice.event.as_str().to_string(),
        reason: notice.reason.clone(),
        payload: serde_json::to_string(&payload).expect("serializable"),
        created: now,
        lease_until: Some(plus(now, DELIVERY_LEASE)),
        delivered: None,
    }
}

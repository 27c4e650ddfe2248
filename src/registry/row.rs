//! A run as one registry row, the same for every backend: columns for what a query looks at
//! (identity, limits, status, the claim) and one JSON column per core for its state as it is
//! in Rust (the stall core's `StallState`, the wait core's `WaitState`, `DispatchState`,
//! `AgentState`, the governor's `RunState`, the last signal). A core that gains a field changes no column; a backend
//! only says how it binds a [`Cell`] and reads a column ([`Fields`]).
//!
//! Times are [`Time`]: SQLite keeps them as text in one format ([`crate::time::format_time`],
//! so text order is time order), PostgreSQL as `timestamptz`.
//!
//! [`StallState`]: crate::supervise::stall::StallState
//! [`DispatchState`]: crate::supervise::run::DispatchState
//! [`AgentState`]: crate::supervise::run::AgentState

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::pane::Agent;
use crate::supervise::run::{DispatchInto, Mode, NewRun, Run, Status, StopReason};
use crate::supervise::stall::Limits;
use crate::supervise::wait::{WaitLimits, WaitState};
use crate::time::Time;

/// How a column is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Time,
    /// A core's state (JSON text in SQLite, `jsonb` in PostgreSQL).
    Json,
}

/// One value to store.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(Option<String>),
    Int(Option<i64>),
    Time(Option<Time>),
    Json(Option<String>),
}

/// The columns a run is stored in, in [`encode`]'s order.
pub const COLUMNS: [(&str, Kind); 45] = [
    // What `run start` registered: identity.
    ("session_name", Kind::Text),
    ("task_dir", Kind::Text),
    ("target", Kind::Text),
    ("mode", Kind::Text),
    ("agent", Kind::Text),
    ("dispatch_into", Kind::Text),
    ("launch_command", Kind::Text),
    ("command_template", Kind::Text),
    ("routing_table", Kind::Text),
    ("notify_command", Kind::Text),
    ("account", Kind::Text),
    ("priority", Kind::Int),
    ("host", Kind::Text),
    // ... and limits.
    ("max_iterations", Kind::Int),
    ("timeout_ms", Kind::Int),
    ("stall_threshold", Kind::Int),
    ("max_recoveries_step", Kind::Int),
    ("max_recoveries_total", Kind::Int),
    ("max_answers", Kind::Int),
    ("repeat_limit", Kind::Int),
    ("step_timeout_ms", Kind::Int),
    ("max_compactions", Kind::Int),
    ("wait_limits", Kind::Json),
    // Where the loop is.
    ("status", Kind::Text),
    ("started_at", Kind::Time),
    ("iteration_count", Kind::Int),
    ("signals_seen", Kind::Int),
    ("last_signal_at", Kind::Time),
    ("ticks", Kind::Int),
    ("heartbeats", Kind::Int),
    ("last_tick_at", Kind::Time),
    ("last_heartbeat_at", Kind::Time),
    ("last_decision", Kind::Text),
    ("stop_reason", Kind::Text),
    ("stop_message", Kind::Text),
    ("ended_at", Kind::Time),
    // The tick that holds it.
    ("claimed_by", Kind::Text),
    ("claimed_until", Kind::Time),
    // Each core's state.
    ("last_signal", Kind::Json),
    ("stall", Kind::Json),
    ("waits", Kind::Json),
    ("dispatch", Kind::Json),
    ("agent_state", Kind::Json),
    ("governor", Kind::Json),
    // Notifications not delivered yet (and those delivered lately).
    ("outbox", Kind::Json),
];

/// The column names, comma-separated, in [`COLUMNS`] order.
pub fn names() -> String {
    COLUMNS.map(|(name, _)| name).join(", ")
}

/// A run's row, in [`COLUMNS`] order.
pub fn encode(run: &Run) -> [Cell; COLUMNS.len()] {
    let spec = &run.spec;
    let text = |value: &str| Cell::Text(Some(value.to_string()));
    let opt_text = |value: &Option<String>| Cell::Text(value.clone());
    let int = |value: u64| Cell::Int(Some(i64::try_from(value).unwrap_or(i64::MAX)));
    let millis = |value: Duration| int(u64::try_from(value.as_millis()).unwrap_or(u64::MAX));
    [
        text(&spec.session),
        text(&spec.task_dir),
        text(&spec.target),
        text(spec.mode.as_str()),
        text(spec.agent.as_str()),
        text(spec.into.as_str()),
        opt_text(&spec.launch_command),
        text(&spec.command_template),
        text(&spec.table),
        opt_text(&spec.notify),
        text(&spec.account),
        Cell::Int(Some(spec.priority.into())),
        text(&spec.host),
        int(spec.max_iterations),
        millis(spec.timeout),
        int(spec.limits.threshold.into()),
        int(spec.limits.recoveries_per_iteration.into()),
        int(spec.limits.recoveries_total.into()),
        int(spec.limits.max_answers.into()),
        int(spec.limits.repeat_limit.into()),
        millis(spec.limits.step_timeout),
        int(spec.max_compactions.into()),
        json(&spec.wait_limits),
        text(run.status.as_str()),
        Cell::Time(Some(run.started_at)),
        int(run.iteration_count),
        int(run.signals_seen),
        Cell::Time(run.last_signal_at),
        int(run.ticks),
        int(run.heartbeats),
        Cell::Time(run.last_tick_at),
        Cell::Time(run.last_heartbeat_at),
        text(&run.last_decision),
        opt_text(&run.stop_reason.as_ref().map(StopReason::to_string)),
        opt_text(&run.stop_message),
        Cell::Time(run.ended_at),
        opt_text(&run.claimed_by),
        Cell::Time(run.claimed_until),
        match &run.last_signal {
            Some(signal) => json(signal),
            None => Cell::Json(None),
        },
        json(&run.stall),
        json(&run.waits),
        json(&run.dispatch),
        json(&run.agent_state),
        json(&run.governor),
        json(&run.outbox),
    ]
}

fn json<T: Serialize>(value: &T) -> Cell {
    Cell::Json(Some(
        serde_json::to_string(value).expect("a core's state serializes"),
    ))
}

/// A stored row as a backend reads it: each column by name. JSON columns are read as text.
pub trait Fields {
    fn text(&self, column: &str) -> Result<Option<String>>;
    fn int(&self, column: &str) -> Result<Option<i64>>;
    fn time(&self, column: &str) -> Result<Option<Time>>;
}

/// The run a stored row holds. A value this build cannot read is an error naming the session
/// and the column, except the wait core's state, which starts fresh (waits re-open from the
/// screen at the next tick) as it always has.
pub fn decode(row: &dyn Fields) -> Result<Run> {
    let session = need(row.text("session_name"), "session_name")?;
    decode_fields(row, session.clone())
        .with_context(|| format!("registry row of session {session:?}"))
}

fn decode_fields(row: &dyn Fields, session: String) -> Result<Run> {
    let text = |column: &str| need(row.text(column), column);
    let count = |column: &str| -> Result<u64> {
        let value = need(row.int(column), column)?;
        Ok(u64::try_from(value).unwrap_or(0))
    };
    let small =
        |column: &str| -> Result<u32> { Ok(u32::try_from(count(column)?).unwrap_or(u32::MAX)) };
    let millis = |column: &str| -> Result<Duration> { Ok(Duration::from_millis(count(column)?)) };
    Ok(Run {
        spec: NewRun {
            session,
            task_dir: text("task_dir")?,
            target: text("target")?,
            mode: one_of(row, "mode", Mode::parse)?,
            agent: one_of(row, "agent", Agent::parse)?,
            into: one_of(row, "dispatch_into", DispatchInto::parse)?,
            launch_command: row.text("launch_command")?,
            command_template: text("command_template")?,
            table: text("routing_table")?,
            notify: row.text("notify_command")?,
            account: text("account")?,
            priority: i32::try_from(need(row.int("priority"), "priority")?)
                .map_err(|_| anyhow!("column priority is out of range"))?,
            host: text("host")?,
            max_iterations: count("max_iterations")?,
            timeout: millis("timeout_ms")?,
            limits: Limits {
                threshold: small("stall_threshold")?,
                recoveries_per_iteration: small("max_recoveries_step")?,
                recoveries_total: small("max_recoveries_total")?,
                max_answers: small("max_answers")?,
                repeat_limit: small("repeat_limit")?,
                step_timeout: millis("step_timeout_ms")?,
                period: None,
            },
            max_compactions: small("max_compactions")?,
            wait_limits: lenient::<WaitLimits>(row, "wait_limits")?,
        },
        status: one_of(row, "status", Status::parse)?,
        started_at: need(row.time("started_at"), "started_at")?,
        iteration_count: count("iteration_count")?,
        signals_seen: count("signals_seen")?,
        last_signal_at: row.time("last_signal_at")?,
        ticks: count("ticks")?,
        heartbeats: count("heartbeats")?,
        last_tick_at: row.time("last_tick_at")?,
        last_heartbeat_at: row.time("last_heartbeat_at")?,
        last_decision: text("last_decision")?,
        stop_reason: row
            .text("stop_reason")?
            .map(|word| StopReason::parse(&word)),
        stop_message: row.text("stop_message")?,
        ended_at: row.time("ended_at")?,
        claimed_by: row.text("claimed_by")?,
        claimed_until: row.time("claimed_until")?,
        last_signal: match row.text("last_signal")? {
            Some(text) => Some(from_json(&text, "last_signal")?),
            None => None,
        },
        stall: from_json(&text("stall")?, "stall")?,
        waits: lenient::<WaitState>(row, "waits")?,
        dispatch: from_json(&text("dispatch")?, "dispatch")?,
        agent_state: from_json(&text("agent_state")?, "agent_state")?,
        governor: from_json(&text("governor")?, "governor")?,
        outbox: crate::supervise::outbox::parse(row.text("outbox")?.as_deref()),
    })
}

fn need<T>(value: Result<Option<T>>, column: &str) -> Result<T> {
    value?.ok_or_else(|| anyhow!("column {column} is empty"))
}

/// A column that holds one of an enum's names.
fn one_of<T>(row: &dyn Fields, column: &str, parse: fn(&str) -> Option<T>) -> Result<T> {
    let value = need(row.text(column), column)?;
    parse(&value).ok_or_else(|| anyhow!("column {column} holds {value:?}"))
}

fn from_json<T: DeserializeOwned>(text: &str, column: &str) -> Result<T> {
    serde_json::from_str(text).with_context(|| format!("column {column} holds {text:?}"))
}

/// A JSON column read the way the wait columns always were: unreadable is the default.
fn lenient<T: DeserializeOwned + Default>(row: &dyn Fields, column: &str) -> Result<T> {
    Ok(row
        .text(column)?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default())
}

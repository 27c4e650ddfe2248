//! The one driver: the edge around every supervision decision. It captures panes (all of
//! them in one tmux call), reads them ([`crate::pane::view`]), calls a pure core, types the
//! core's answer first (under the pane's lock, onto the very screen decided on, at most once
//! per screen across every supervisor — [`type_answer`]), carries out the other effects in
//! order ([`perform`]) and keeps the state.
//!
//! Two ways to keep the state, one mechanism:
//! - [`runs`]: registered runs in the registry — `run tick` ([`runs::tick_runs`]), the
//!   per-run tick `run watch` calls for each notification ([`runs::tick_session`]), and
//!   `run recover` ([`runs::recover_runs`]); the core is [`crate::supervise::tick`];
//! - [`check`]: panes named on the command line, their state in a JSON file — `stall check`
//!   ([`check::check_targets`]); the core is the stall heartbeat
//!   ([`crate::supervise::stall::heartbeat`]).

pub mod check;
pub mod isolation;
pub mod runs;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::hook::session::{AgentState, Channel, Record};
use crate::hook::store::{Lookup, Store};
use crate::pane::Agent;
use crate::pane::reset::Zone;
use crate::pane::rules::RuleSet;
use crate::pane::view::{self, PaneView};
use crate::policy::screen::Approval;
use crate::protocol::signal::{self, now_timestamp};
use crate::protocol::stop::{self, StopRequest};
use crate::supervise::channels::ChannelObs;
use crate::supervise::inputs;
use crate::supervise::stall::step_timeout::Continuation;
use crate::supervise::tick::Effect;
use crate::supervise::typing::{self, Answer, Typist};
use crate::time::Time;
use crate::tmux::{CaptureOptions, PaneInfo, Snapshot, Terminal};

/// Where a driver runs: the terminal, its socket name (for the per-pane answer locks shared
/// by every supervisor), the rules that read panes and the state dir.
pub struct World<'a> {
    pub terminal: &'a dyn Terminal,
    pub socket: Option<&'a str>,
    pub rules: &'a RuleSet,
    /// The approval policy prompts are answered by.
    pub approval: &'static Approval,
    pub state_dir: PathBuf,
    /// This host ([`crate::host`]): the driver claims only the runs whose panes are here.
    pub host: String,
}

impl World<'_> {
    /// How this world types into panes.
    pub fn typist(&self) -> Typist<'_> {
        Typist {
            terminal: self.terminal,
            socket: self.socket,
            state_dir: &self.state_dir,
            masks: &self.rules.masks,
        }
    }

    /// Read one capture as `agent`'s screen (quota reset times relative to `now`).
    pub fn view(&self, snap: &Snapshot, agent: Agent, now: Time) -> PaneView {
        view::view_with(
            snap,
            agent,
            self.rules,
            self.approval,
            now,
            Zone::from_env(),
        )
    }
}

/// Append the approval policy's decision on a prompt to the decision log (`autoctl policy
/// log`) when the supervisor acted on it: typed the answer it allowed (`answered`), or
/// escalated a prompt it did not allow. A prompt no policy rule read, or one escalated for
/// another reason, is not logged; a log that cannot be written is a warning, never a failed
/// tick.
pub fn log_approval(world: &World<'_>, run: &str, view: &PaneView, answered: bool, now: Time) {
    let Some(screened) = &view.classification.approval else {
        return;
    };
    let allowed = screened.decision.decision == crate::policy::Verdict::Allow;
    if answered != allowed {
        return;
    }
    let entry = crate::policy::log::Entry {
        time: now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        session: None,
        run: Some(run.to_string()),
        door: "screen".to_string(),
        tool: screened.tool.clone(),
        input: screened.input.clone(),
        decision: screened.decision.decision.as_str().to_string(),
        rule: screened.decision.rule.clone(),
        ..Default::default()
    };
    if let Err(err) = crate::policy::log::append(&world.state_dir, &entry) {
        crate::output::warn(&format!("decision log: {err:#}"));
    }
}

/// A claim owner name unique to this process and moment.
pub fn owner(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("{what}:{}:{nanos:x}", std::process::id())
}

/// Type an answer onto the screen it was decided on, at most once per screen across every
/// supervisor (see [`crate::supervise::typing`]); a continuation only while the task's
/// `.status.json` `updated_at` is still the one seen (checked under the pane's lock).
/// `Ok(Some(why))` when nothing was typed.
pub fn type_answer(
    world: &World<'_>,
    answer: &Answer,
    task: Option<&Path>,
) -> Result<Option<String>> {
    let unchanged = || -> Result<Option<String>> {
        let (Some(expected), Some(task)) = (&answer.if_unchanged, task) else {
            return Ok(None);
        };
        Ok(match inputs::continuation_cas(expected, task) {
            Continuation::Send => None,
            Continuation::Abort { reason } => Some(reason),
        })
    };
    world.typist().answer_once(answer, &unchanged)
}

/// Carry out one effect on the pane `target` and the task directory `dir` (an answer is
/// typed by [`type_answer`] before any effect).
///
/// `submit_delay` is the pause between typed text and its Enter: zero at a shell prompt,
/// which reads Enter as a key even in the same read as the text (so a dispatch costs no
/// extra idle time), [`typing::PROMPT_SUBMIT_DELAY`] for a prompt typed into an agent.
pub fn perform(
    world: &World<'_>,
    target: &str,
    dir: &Path,
    effect: &Effect,
    submit_delay: Duration,
    now: Time,
) -> Result<()> {
    match effect {
        Effect::WriteStop { reason, message } => stop::write(
            dir,
            &StopRequest {
                reason: reason.clone(),
                timestamp: now_timestamp(now),
                message: message.clone(),
            },
        ),
        Effect::Send { keys, .. } => typing::send_keys(world.terminal, target, keys, submit_delay),
        Effect::Respawn { command } => world.terminal.respawn(target, command),
        Effect::RemoveSignal { fingerprint } => {
            // Only the signal this tick read: a newer one is the next step's news.
            signal::consume(dir, fingerprint).map(|_| ())
        }
        Effect::RemoveStop => stop::clear(dir).map(|_| ()),
        // The run's own records are its driver's to keep, in its plan (runs::drive).
        record => Err(anyhow::anyhow!(
            "{record:?} is the run driver's record, not an effect on the world"
        )),
    }
}

/// The agent's typed state: the hook and status-line records of the pane in `view`, else of
/// the nearest Claude Code session working in (or above) `dir` (`run tick`'s task dir,
/// `stall check --task`).
pub fn channel_state(
    world: &World<'_>,
    view: Option<&PaneView>,
    dir: Option<&Path>,
) -> Option<ChannelObs> {
    let mut lookup = Lookup {
        dir: dir.map(Path::to_path_buf),
        ..Lookup::default()
    };
    if let Some(view) = view
        && let Some(socket) = &view.socket
    {
        lookup.pane = Some((socket.clone(), view.pane_id.clone()));
    }
    let mut found = Store::new(&world.state_dir).find(&lookup);
    found.hook = found.hook.map(rollout_limit);
    // Only a status line gives the context use the compaction decision reads.
    let agent_compacts_at = view
        .filter(|_| found.status.is_some())
        .and_then(|v| crate::proc::agent_var(v.pid, crate::supervise::launch::AUTOCOMPACT_PCT))
        .and_then(|value| crate::supervise::launch::autocompact_pct(&value));
    (found.hook.is_some() || found.status.is_some()).then_some(ChannelObs {
        by: found.by,
        hook: found.hook,
        status: found.status,
        agent_compacts_at,
    })
}

/// Codex ends a turn on its usage limit without a hook: when the record's rollout says the
/// last turn ended so, after the record's last event, that is the agent's state (channel
/// `transcript`, `failed` with a `rate_limit` and Codex's message, which the wait core reads as
/// a usage limit like a StopFailure's banner). The rollout is read at every tick, so the state
/// is as of now while nothing follows the limit in it; a new turn (the resume) ends it.
fn rollout_limit(record: Record) -> Record {
    let Some(path) = record.rollout.as_deref() else {
        return record;
    };
    match crate::hook::rollout::usage_limit(Path::new(path)) {
        Some(limit) if limit.at >= record.at => {
            let now = crate::time::now().unwrap_or(limit.at).max(limit.at);
            Record {
                state: AgentState::Failed,
                since: limit.at,
                at: now,
                event: "task_complete".to_string(),
                detail: Some(crate::hook::rollout::USAGE_LIMIT.to_string()),
                tool: None,
                tool_started_at: None,
                error: Some("rate_limit".to_string()),
                error_message: Some(limit.message),
                channel: Some(Channel::Transcript),
                ..record
            }
        }
        _ => record,
    }
}

/// The pane of a target, or a clear error (`run start` checks its target with it).
pub fn pane_of(terminal: &dyn Terminal, target: &str) -> Result<PaneInfo> {
    let snap = terminal
        .snapshots(&[target.to_string()], CaptureOptions::default())?
        .pop()
        .context("tmux returned no capture")?
        .with_context(|| format!("pane {target}"))?;
    if snap.pane.dead {
        anyhow::bail!("pane {target}: its program exited and the pane is dead");
    }
    Ok(snap.pane)
}

/// Capture one pane and read it as `agent`'s screen: what `pane ready`, `run start --launch`
/// and `run continue` look at before they type.
pub fn look(
    terminal: &dyn Terminal,
    rules: &RuleSet,
    target: &str,
    agent: Agent,
    zone: Zone,
    now: Time,
) -> Result<PaneView> {
    let snap = terminal
        .snapshots(&[target.to_string()], CaptureOptions::default())?
        .pop()
        .context("tmux returned no capture")??;
    Ok(view::view(&snap, agent, rules, now, zone))
}
